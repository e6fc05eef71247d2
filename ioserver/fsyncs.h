/* Several fsyncs at once: one io_submit of IOCB_CMD_FSYNC/FDSYNC, so that
 * a sync's datafiles, layout record and directories wait on one journal
 * commit and their cache flushes merge in the block layer, instead of
 * paying a flush each in turn (a new file's sync took about half the
 * time where it was measured). Where the kernel or the file system
 * refuses asynchronous fsync, each is done in turn. */
#ifndef DDIO_SRV_FSYNCS_H
#define DDIO_SRV_FSYNCS_H

struct fsync_op {
    int fd;
    int data_only;              /* fdatasync, else fsync */
    int rc;                     /* out: 0 or -errno */
};

/* every op done (none skipped for another's failure); 0, or the first
 * op's -errno in order */
int fsyncs_run(struct fsync_op *ops, int n);

/* tests: 1 makes every later call do its ops in turn, as without AIO;
 * the io_contexts made so far (at most 16, however many threads call) */
void fsyncs_force_serial(int on);
int fsyncs_contexts(void);

#endif
