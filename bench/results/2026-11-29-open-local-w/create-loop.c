/* create N files: open(CREATE|WRONLY), write 8 B, sync, close; time each open */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc, char **argv){
  MPI_Init(&argc,&argv); int n=atoi(argv[2]), rank; MPI_Comm_rank(MPI_COMM_WORLD,&rank);
  double *t=malloc(sizeof(double)*n*4); char name[512]; long long v=42;
  for(int i=0;i<n;i++){ MPI_File fh; snprintf(name,sizeof name,"%s.%d.%d",argv[1],rank,i);
    double a=MPI_Wtime(); if(MPI_File_open(MPI_COMM_SELF,name,MPI_MODE_CREATE|MPI_MODE_WRONLY,MPI_INFO_NULL,&fh)) return 1;
    double b=MPI_Wtime(); MPI_File_write_at(fh,0,&v,1,MPI_LONG_LONG,MPI_STATUS_IGNORE);
    double c=MPI_Wtime(); MPI_File_sync(fh); double d=MPI_Wtime(); MPI_File_close(&fh); double e=MPI_Wtime();
    t[i]=b-a; t[n+i]=c-b; t[2*n+i]=d-c; t[3*n+i]=e-d; }
  const char *nm[4]={"open","write","sync","close"};
  for(int k=0;k<4;k++){ qsort(t+k*n,n,sizeof(double),cmp); if(rank==0) printf("%s p50 %.1f us p90 %.1f\n",nm[k],t[k*n+n/2]*1e6,t[k*n+n*9/10]*1e6);}
  MPI_Finalize(); return 0; }
