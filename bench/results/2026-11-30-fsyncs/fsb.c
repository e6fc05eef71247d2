/* fsb.c ROOT N: a new file's sync three ways on one file system, N files each,
 * alternating: the one fsync ufs: pays; ddio's server before (fdatasync of
 * the datafile, fsync of the layout record, of its directory, of the
 * datafile's directory, in turn); and the four at once through one io_submit
 * (ioserver/fsyncs.c). p50 and p90 in microseconds. */
#define _GNU_SOURCE
#include <libaio.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  const char*root=argv[1]; int n=atoi(argv[2]);
  char md[512],dd[512]; snprintf(md,512,"%s/meta",root); snprintf(dd,512,"%s/data",root);
  mkdir(root,0755);mkdir(md,0755);mkdir(dd,0755);
  io_context_t ctx=0; if(io_setup(16,&ctx)){perror("io_setup");return 1;}
  double *t[3]; for(int m=0;m<3;m++) t[m]=calloc(n,sizeof(double));
  for(int i=0;i<n;i++) for(int m=0;m<3;m++){
    char a[600],b[600]; snprintf(a,600,"%s/f%d.%d",dd,i,m); snprintf(b,600,"%s/f%d.%d",md,i,m);
    int fa=open(a,O_CREAT|O_RDWR|O_TRUNC,0644), fb=-1;
    if(m) { fb=open(b,O_CREAT|O_RDWR|O_TRUNC,0644); pwrite(fb,"recordrecordrec",16,0);}
    pwrite(fa,"12345678",8,0);
    double t0=now();
    if(m==0){ fsync(fa); }
    else if(m==1){ fdatasync(fa); fsync(fb); int d1=open(md,O_RDONLY|O_DIRECTORY); fsync(d1); close(d1); int d2=open(dd,O_RDONLY|O_DIRECTORY); fsync(d2); close(d2);}
    else { int d1=open(md,O_RDONLY|O_DIRECTORY), d2=open(dd,O_RDONLY|O_DIRECTORY);
      struct iocb cb[4],*cbs[4]; io_prep_fdsync(&cb[0],fa); io_prep_fsync(&cb[1],fb); io_prep_fsync(&cb[2],d1); io_prep_fsync(&cb[3],d2);
      for(int k=0;k<4;k++)cbs[k]=&cb[k];
      int r=io_submit(ctx,4,cbs); if(r!=4){fprintf(stderr,"submit %d\n",r);return 1;}
      struct io_event ev[4]; int got=0; while(got<4){int g=io_getevents(ctx,1,4-got,ev,NULL); if(g<0){perror("getevents");return 1;} for(int k=0;k<g;k++) if((long)ev[k].res<0){fprintf(stderr,"res %ld\n",(long)ev[k].res);return 1;} got+=g;}
      close(d1);close(d2);}
    t[m][i]=now()-t0;
    close(fa); if(fb>=0)close(fb); unlink(a); if(m)unlink(b);
  }
  const char*nm[3]={"ufs-like fsync","seq 4 fsyncs","aio 4 at once"};
  for(int m=0;m<3;m++){qsort(t[m],n,sizeof(double),cmp); printf("%-16s p50 %7.0f p90 %7.0f us\n",nm[m],t[m][n/2],t[m][n*9/10]);}
  return 0;}
