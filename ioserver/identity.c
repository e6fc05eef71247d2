/* Identity by MUNGE credentials (identity.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "identity.h"

#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <ifaddrs.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "ddio_munge.h"
#include "server.h"

/* the capabilities owners and modes need: CAP_CHOWN (0), CAP_DAC_OVERRIDE (1:
 * users' 0600 datafiles), CAP_FOWNER (3: chmod of them); root has them */
static int owner_caps(void)
{
    char line[256];
    unsigned long long eff = 0;
    int found = 0;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && !found && fgets(line, sizeof(line), f))
        found = sscanf(line, "CapEff: %llx", &eff) == 1;
    if (f)
        fclose(f);
    const unsigned long long need = (1ull << 0) | (1ull << 1) | (1ull << 3);
    return found ? (eff & need) == need : geteuid() == 0;
}

int identity_startup(struct server *srv, char *err, size_t errlen)
{
    if (!owner_caps()) {
        snprintf(err, errlen, "--auth munge: the server keeps files' owners and modes: run it "
                 "as root, or with CAP_CHOWN, CAP_DAC_OVERRIDE and CAP_FOWNER");
        return -1;
    }
    static const char probe[] = "ddio-server start";
    char *cred = NULL, why[256];
    void *back = NULL;
    size_t n;
    struct ddio_munge_id id;
    const char *sock = srv->cfg.munge_socket;
    int rc = ddio_munge_encode(sock, probe, sizeof(probe), 0, -1, &cred, why, sizeof(why));
    if (rc == 0)
        rc = ddio_munge_decode(sock, cred, &back, &n, &id, why, sizeof(why));
    free(cred);
    free(back);
    if (rc)
        snprintf(err, errlen, "--auth munge: munged does not answer (%s)", why);
    return rc ? -1 : 0;
}

/* a's address is one of this host's (an interface's, or loopback) */
static int local_addr(struct in_addr a)
{
    if ((ntohl(a.s_addr) >> 24) == 127)
        return 1;
    struct ifaddrs *ifs, *i;
    int yes = 0;
    if (getifaddrs(&ifs) != 0)
        return 0;
    for (i = ifs; i && !yes; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET)
            yes = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == a.s_addr;
    freeifaddrs(ifs);
    return yes;
}

/* the peer's IPv4 address (v4-mapped and ::1 too), or 0 */
static int peer_v4(int fd, struct in_addr *out)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0)
        return 0;
    if (ss.ss_family == AF_INET) {
        *out = ((struct sockaddr_in *)&ss)->sin_addr;
        return 1;
    }
    const struct in6_addr *a6 = &((struct sockaddr_in6 *)&ss)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(a6))
        out->s_addr = htonl(0x7f000001);
    else if (memcmp(a6, v4mapped, 12) == 0)
        memcpy(&out->s_addr, (const uint8_t *)a6 + 12, 4);
    else
        return 0;
    return 1;
}

/* The credential was made on the peer's host: its origin is the peer's
 * address, or, for a peer on loopback, one of ours (munged names its
 * host by the address of its host name, not by 127.0.0.1). */
static int same_host(int fd, struct in_addr origin, char *why, size_t n)
{
    struct in_addr peer;
    if (!peer_v4(fd, &peer)) {
        snprintf(why, n, "a peer without an IPv4 address (MUNGE names IPv4 origins only)");
        return 0;
    }
    if (peer.s_addr == origin.s_addr)
        return 1;
    if ((ntohl(peer.s_addr) >> 24) == 127 && local_addr(origin))
        return 1;
    char o[INET_ADDRSTRLEN], p[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &origin, o, sizeof(o));
    inet_ntop(AF_INET, &peer, p, sizeof(p));
    snprintf(why, n, "credential encoded on %s, connection from %s", o, p);
    return 0;
}

/* the peer's address is in --mount-hosts */
static int trusted_mount(const struct conn *c)
{
    char list[1024];
    struct in_addr peer, a;
    const char *hosts = c->srv->cfg.mount_hosts;
    if (!hosts || !peer_v4(c->fd, &peer))
        return 0;
    snprintf(list, sizeof(list), "%s", hosts);
    for (char *save = NULL, *t = strtok_r(list, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
        if (inet_pton(AF_INET, t, &a) == 1 && a.s_addr == peer.s_addr)
            return 1;
    return 0;
}

/* supplementary groups of uid from our name service; the primary gid first */
static void fill_groups(struct ident *w)
{
    gid_t g[IDENT_MAX_GROUPS];
    int ng = IDENT_MAX_GROUPS;
    struct passwd pw, *res = NULL;
    char buf[4096];
    w->ngroups = 0;
    if (getpwuid_r((uid_t)w->uid, &pw, buf, sizeof(buf), &res) != 0 || !res
        || getgrouplist(pw.pw_name, (gid_t)w->gid, g, &ng) < 0) {
        w->groups[w->ngroups++] = w->gid;   /* unknown user, or too many: the gid only */
        return;
    }
    for (int i = 0; i < ng; i++)
        w->groups[w->ngroups++] = (uint32_t)g[i];
}

/* root on a client node is not root here: nobody (--root-squash on) */
static void squash(struct conn *c)
{
    if (c->who.uid != 0 || !c->srv->cfg.root_squash)
        return;
    c->who.uid = c->who.gid = SQUASH_ID;
    c->who.groups[0] = SQUASH_ID;
    c->who.ngroups = 1;
    c->who.squashed = 1;
}

int identity_verify(struct conn *c, const struct ddio_auth_munge *m, char *why, size_t n)
{
    uint8_t want[DDIO_MUNGE_PAYLOAD_LEN];
    struct ddio_munge_id id;
    void *got;
    size_t len;
    ddio_munge_payload(DDIO_MUNGE_CLIENT, c->srv->store.id, c->snonce, m->nonce, want);
    int rc = ddio_munge_decode(c->srv->cfg.munge_socket, m->cred, &got, &len, &id, why, n);
    if (rc)
        return rc == -EIO ? -EIO : -EACCES;
    int same = len == sizeof(want) && memcmp(got, want, len) == 0;
    free(got);
    if (!same) {
        snprintf(why, n, "credential of uid %u is not for this connection (replayed from "
                 "another?)", id.uid);
        return -EACCES;
    }
    if (!same_host(c->fd, id.addr, why, n))
        return -EACCES;
    c->who.known = 1;
    c->who.cred_uid = id.uid;
    c->who.uid = id.uid;
    c->who.gid = id.gid;
    fill_groups(&c->who);
    squash(c);
    return 0;
}

int identity_trusted_root(const struct conn *c, char *why, size_t n)
{
    if (c->who.cred_uid != 0 || c->who.asserted) {
        snprintf(why, n, "needs a connection proven as root by MUNGE");
        return -EACCES;
    }
    if (!trusted_mount(c)) {
        snprintf(why, n, "%s is not a trusted mount host (--mount-hosts)", c->peer);
        return -EACCES;
    }
    return 0;
}

int identity_act_as(struct conn *c, const struct ddio_actas *m, char *why, size_t n)
{
    if (!c->who.known || c->who.cred_uid != 0 || c->who.asserted) {
        snprintf(why, n, "ACTAS needs a connection proven as root by MUNGE, once");
        return -EACCES;
    }
    if (!trusted_mount(c)) {
        snprintf(why, n, "ACTAS from %s: not a trusted mount host (--mount-hosts)", c->peer);
        return -EACCES;
    }
    c->who.asserted = 1;
    c->who.squashed = 0;
    c->who.uid = m->uid;
    c->who.gid = m->gid;
    fill_groups(&c->who);
    squash(c);
    return 0;
}

int identity_proof(struct conn *c, const uint8_t cnonce[DDIO_NONCE_LEN], char **cred,
                   char *why, size_t n)
{
    uint8_t pay[DDIO_MUNGE_PAYLOAD_LEN];
    ddio_munge_payload(DDIO_MUNGE_SERVER, c->srv->store.id, c->snonce, cnonce, pay);
    return ddio_munge_encode(c->srv->cfg.munge_socket, pay, sizeof(pay), 0,
                             (long)c->who.cred_uid, cred, why, n);
}
