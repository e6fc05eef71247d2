/* wout.c FILE MODE [LAG]: 300 MiB in 4 MiB writes to a new FILE, fdatasync at the end;
 * MODE d = O_DIRECT, b = buffered, k = buffered with each write's writeback
 * started (sync_file_range WRITE), r = k and the writes LAG (4) behind waited
 * for and dropped (what ddio cp out of ddio now does). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static int LAG=2;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
/* wout FILE MODE: 300 MiB in 4 MiB writes; MODE d=O_DIRECT, k=buffered+kick each write, b=buffered; fdatasync at end */
int main(int argc,char**argv){ char m=argv[2][0]; if(argc>3) LAG=atoi(argv[3]); size_t W=4<<20; int n=75;
  void*buf; posix_memalign(&buf,4096,W); memset(buf,7,W);
  int fd=open(argv[1],O_CREAT|O_TRUNC|O_WRONLY|(m=='d'?O_DIRECT:0),0644);
  double t0=now();
  for(int i=0;i<n;i++){ if(pwrite(fd,buf,W,(off_t)i*W)!=(ssize_t)W){perror("pwrite");return 1;}
    if(m=='k'||m=='r') sync_file_range(fd,(off_t)i*W,W,SYNC_FILE_RANGE_WRITE);
    if(m=='r'&&i>=LAG){ off_t o=(off_t)(i-LAG)*W; sync_file_range(fd,o,W,SYNC_FILE_RANGE_WAIT_BEFORE|SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER); posix_fadvise(fd,o,W,POSIX_FADV_DONTNEED);} }
  double t1=now(); fdatasync(fd); double t2=now(); close(fd);
  printf("%c write %.0f ms sync %.0f ms total %.0f ms = %.0f MiB/s\n",m,(t1-t0)*1e3,(t2-t1)*1e3,(t2-t0)*1e3,300/(t2-t0)); return 0;}
