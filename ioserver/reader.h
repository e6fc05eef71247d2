/* A connection's reader thread (reader.c). */
#ifndef DDIO_SRV_READER_H
#define DDIO_SRV_READER_H

#include "conn.h"

/* the thread (arg: the connection); tears it down at the end */
void *reader_main(void *arg);
/* the end of a connection: fail its XFERs, drop its locks and handles,
 * wait for its threads, take it off the server's list, release it */
void reader_teardown(struct conn *c);

#endif
