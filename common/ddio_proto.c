/* ddio wire protocol, the frame (ddio_proto.h): the message header, the
 * bounds-checked write and read buffers every message is made with, and
 * the message types' names. The payloads are ddio_proto_msg.c's,
 * ddio_proto_data.c's and ddio_proto_ns.c's.
 *
 * Conventions (see ddio_proto.h):
 * - Encoders append to a wbuf; the wbuf's error is sticky, so a sequence of
 *   puts needs one check at the end. An encoder given a struct that cannot be
 *   represented (e.g. more ids than DDIO_MAX_SERVERS) sets -EINVAL.
 * - Decoders zero the output struct first, so the free functions are safe on
 *   whatever a failed decode left; on failure they also free what they
 *   allocated themselves. Every count and length is bounded against the bytes
 *   actually left before anything is allocated, and every decoder requires
 *   the payload to be consumed exactly.
 */
#include "ddio_proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- header ------------------------------------------------------------- */

static void le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

void ddio_hdr_encode(const struct ddio_hdr *h, uint8_t out[DDIO_HDR_SIZE])
{
    le32(out + 0, h->magic);
    le16(out + 4, h->version);
    le16(out + 6, h->type);
    le32(out + 8, h->epoch);
    le32(out + 12, (uint32_t)h->status);
    le64(out + 16, h->req);
    le64(out + 24, h->len);
}

/* A valid type is a known request type, optionally with DDIO_REPLY set. */
static int type_valid(uint16_t type)
{
    uint16_t base = (uint16_t)(type & ~DDIO_REPLY);
    return base >= DDIO_T_HELLO && base < DDIO_T_MAX
        && !(base >= DDIO_T_RESERVED_LO && base < DDIO_T_RESERVED_HI);
}

int ddio_hdr_decode(const uint8_t in[DDIO_HDR_SIZE], struct ddio_hdr *h,
                    uint64_t max_payload)
{
    h->magic = rd32(in + 0);
    h->version = rd16(in + 4);
    h->type = rd16(in + 6);
    h->epoch = rd32(in + 8);
    h->status = (int32_t)rd32(in + 12);
    h->req = rd64(in + 16);
    h->len = rd64(in + 24);
    if (h->magic != DDIO_MAGIC)
        return -EPROTO;
    /* checked before the type so a future version's new types are reported
     * as a version mismatch, not as garbage */
    if (h->version != DDIO_VERSION)
        return -EPROTONOSUPPORT;
    if (!type_valid(h->type))
        return -EPROTO;
    if (h->len > max_payload || h->len > DDIO_MAX_PAYLOAD)
        return -EPROTO;
    return 0;
}

void ddio_hdr_init(struct ddio_hdr *h, uint16_t type, uint64_t req, uint64_t len)
{
    memset(h, 0, sizeof(*h));
    h->magic = DDIO_MAGIC;
    h->version = DDIO_VERSION;
    h->type = type;
    h->req = req;
    h->len = len;
}

/* ---- writer ------------------------------------------------------------- */

void ddio_wbuf_init(struct ddio_wbuf *w)
{
    memset(w, 0, sizeof(*w));
}

void ddio_wbuf_free(struct ddio_wbuf *w)
{
    free(w->p);
    ddio_wbuf_init(w);
}

uint8_t *ddio_put_space(struct ddio_wbuf *w, size_t n)
{
    if (w->err)
        return NULL;
    if (n > SIZE_MAX - w->len) {
        w->err = -ENOMEM;
        return NULL;
    }
    size_t need = w->len + n;
    if (need > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < need)
            cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        uint8_t *p = realloc(w->p, cap);
        if (!p) {
            w->err = -ENOMEM;
            return NULL;
        }
        w->p = p;
        w->cap = cap;
    }
    uint8_t *at = w->p + w->len;
    w->len = need;
    return at;
}

void ddio_put_u8(struct ddio_wbuf *w, uint8_t v)
{
    uint8_t *p = ddio_put_space(w, 1);
    if (p)
        p[0] = v;
}

void ddio_put_u16(struct ddio_wbuf *w, uint16_t v)
{
    uint8_t *p = ddio_put_space(w, 2);
    if (p)
        le16(p, v);
}

void ddio_put_u32(struct ddio_wbuf *w, uint32_t v)
{
    uint8_t *p = ddio_put_space(w, 4);
    if (p)
        le32(p, v);
}

void ddio_put_u64(struct ddio_wbuf *w, uint64_t v)
{
    uint8_t *p = ddio_put_space(w, 8);
    if (p)
        le64(p, v);
}

void ddio_put_bytes(struct ddio_wbuf *w, const void *p, size_t n)
{
    uint8_t *d = ddio_put_space(w, n);
    if (d && n)
        memcpy(d, p, n);
}

/* NULL encodes as the empty string, so optional strings need no special case. */
void ddio_put_str(struct ddio_wbuf *w, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > UINT32_MAX) {
        if (!w->err)
            w->err = -EINVAL;
        return;
    }
    ddio_put_u32(w, (uint32_t)n);
    ddio_put_bytes(w, s, n);
}

/* ---- reader ------------------------------------------------------------- */

void ddio_rbuf_init(struct ddio_rbuf *r, const void *p, size_t len)
{
    r->p = p;
    r->len = p ? len : 0;
    r->off = 0;
    r->err = 0;
}

const uint8_t *ddio_get_bytes(struct ddio_rbuf *r, size_t n)
{
    static const uint8_t empty[1];
    if (r->err)
        return NULL;
    if (n > r->len - r->off) {
        r->err = -EPROTO;
        return NULL;
    }
    /* a zero-length read succeeds even on an empty (NULL) payload; callers
     * must not get NULL, which means failure */
    if (n == 0)
        return r->p ? r->p + r->off : empty;
    const uint8_t *at = r->p + r->off;
    r->off += n;
    return at;
}

uint8_t ddio_get_u8(struct ddio_rbuf *r)
{
    const uint8_t *p = ddio_get_bytes(r, 1);
    return p ? p[0] : 0;
}

uint16_t ddio_get_u16(struct ddio_rbuf *r)
{
    const uint8_t *p = ddio_get_bytes(r, 2);
    return p ? rd16(p) : 0;
}

uint32_t ddio_get_u32(struct ddio_rbuf *r)
{
    const uint8_t *p = ddio_get_bytes(r, 4);
    return p ? rd32(p) : 0;
}

uint64_t ddio_get_u64(struct ddio_rbuf *r)
{
    const uint8_t *p = ddio_get_bytes(r, 8);
    return p ? rd64(p) : 0;
}

char *ddio_get_str(struct ddio_rbuf *r, size_t maxlen)
{
    uint32_t n = ddio_get_u32(r);
    if (r->err)
        return NULL;
    if (n > maxlen) {
        r->err = -EPROTO;
        return NULL;
    }
    const uint8_t *b = ddio_get_bytes(r, n);
    if (!b)
        return NULL;
    if (memchr(b, 0, n)) {
        r->err = -EPROTO;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        r->err = -ENOMEM;
        return NULL;
    }
    memcpy(s, b, n);
    s[n] = '\0';
    return s;
}

int ddio_rbuf_done(const struct ddio_rbuf *r)
{
    return (r->err == 0 && r->off == r->len) ? 0 : -EPROTO;
}

/* ---- type names ---------------------------------------------------------- */

const char *ddio_type_name(uint16_t type)
{
    static const char *const req[DDIO_T_MAX] = {
        [DDIO_T_HELLO] = "HELLO", [DDIO_T_AUTH] = "AUTH", [DDIO_T_OPEN] = "OPEN",
        [DDIO_T_CLOSE] = "CLOSE", [DDIO_T_DELETE] = "DELETE", [DDIO_T_STAT] = "STAT",
        [DDIO_T_SETSIZE] = "SETSIZE", [DDIO_T_PREALLOC] = "PREALLOC",
        [DDIO_T_SYNC] = "SYNC", [DDIO_T_XFER] = "XFER", [DDIO_T_PUT] = "PUT",
        [DDIO_T_GET] = "GET", [DDIO_T_DATA] = "DATA", [DDIO_T_LOCK] = "LOCK",
        [DDIO_T_STATS] = "STATS", [DDIO_T_PROGRESS] = "PROGRESS",
        [DDIO_T_PSTAT] = "PSTAT", [DDIO_T_READDIR] = "READDIR", [DDIO_T_MKDIR] = "MKDIR",
        [DDIO_T_RMDIR] = "RMDIR", [DDIO_T_RENAME] = "RENAME",
        [DDIO_T_UCXADDR] = "UCXADDR", [DDIO_T_CANCEL] = "CANCEL", [DDIO_T_LOCAL] = "LOCAL",
        [DDIO_T_SETATTR] = "SETATTR", [DDIO_T_ACTAS] = "ACTAS",
        [DDIO_T_LOCALSTAT] = "LOCALSTAT", [DDIO_T_WATCH] = "WATCH", [DDIO_T_INVAL] = "INVAL",
        [DDIO_T_SCRUB] = "SCRUB", [DDIO_T_REPAIR] = "REPAIR", [DDIO_T_REBUILD] = "REBUILD",
        [DDIO_T_ECREAD] = "ECREAD",
        [DDIO_T_MEMBER] = "MEMBER",
    };
    static const char *const rep[DDIO_T_MAX] = {
        [DDIO_T_HELLO] = "HELLO|R", [DDIO_T_AUTH] = "AUTH|R", [DDIO_T_OPEN] = "OPEN|R",
        [DDIO_T_CLOSE] = "CLOSE|R", [DDIO_T_DELETE] = "DELETE|R", [DDIO_T_STAT] = "STAT|R",
        [DDIO_T_SETSIZE] = "SETSIZE|R", [DDIO_T_PREALLOC] = "PREALLOC|R",
        [DDIO_T_SYNC] = "SYNC|R", [DDIO_T_XFER] = "XFER|R", [DDIO_T_PUT] = "PUT|R",
        [DDIO_T_GET] = "GET|R", [DDIO_T_DATA] = "DATA|R", [DDIO_T_LOCK] = "LOCK|R",
        [DDIO_T_STATS] = "STATS|R", [DDIO_T_PROGRESS] = "PROGRESS|R",
        [DDIO_T_PSTAT] = "PSTAT|R", [DDIO_T_READDIR] = "READDIR|R",
        [DDIO_T_MKDIR] = "MKDIR|R", [DDIO_T_RMDIR] = "RMDIR|R", [DDIO_T_RENAME] = "RENAME|R",
        [DDIO_T_LOCAL] = "LOCAL|R",
        [DDIO_T_UCXADDR] = "UCXADDR|R", [DDIO_T_CANCEL] = "CANCEL|R",
        [DDIO_T_SETATTR] = "SETATTR|R", [DDIO_T_ACTAS] = "ACTAS|R",
        [DDIO_T_LOCALSTAT] = "LOCALSTAT|R", [DDIO_T_WATCH] = "WATCH|R",
        [DDIO_T_INVAL] = "INVAL|R", [DDIO_T_SCRUB] = "SCRUB|R", [DDIO_T_REPAIR] = "REPAIR|R",
        [DDIO_T_REBUILD] = "REBUILD|R", [DDIO_T_ECREAD] = "ECREAD|R",
        [DDIO_T_MEMBER] = "MEMBER|R",
    };
    if (!type_valid(type))
        return "UNKNOWN";
    uint16_t base = (uint16_t)(type & ~DDIO_REPLY);
    return (type & DDIO_REPLY) ? rep[base] : req[base];
}
