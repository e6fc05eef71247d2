/* The namespace requests by path (namespace.c), called by dispatch. */
#ifndef DDIO_SRV_NAMESPACE_H
#define DDIO_SRV_NAMESPACE_H

#include "conn.h"

int on_delete(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
int on_pstat(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
int on_readdir(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
int on_mkdir(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
int on_rmdir(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
int on_rename(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
int on_setattr(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);

#endif
