/* Transport names and what "auto" settles to (ddio_xport.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_xport.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

int ddio_xport_parse(const char *s)
{
    if (!s || !*s || !strcasecmp(s, "auto"))
        return DDIO_XPORT_AUTO;
    if (!strcasecmp(s, "tcp"))
        return DDIO_XPORT_TCP;
    if (!strcasecmp(s, "ucx"))
        return DDIO_XPORT_UCX;
    return -1;
}

int ddio_xport_env(char *err, size_t n)
{
    const char *s = getenv("DDIO_TRANSPORT");
    int t = ddio_xport_parse(s);
    if (t < 0)
        snprintf(err, n, "DDIO_TRANSPORT=%s: unknown transport (auto, ucx or tcp)", s);
    return t;
}

int ddio_xport_rdma_present(void)
{
    DIR *d = opendir("/sys/class/infiniband");
    struct dirent *e;
    int found = 0;
    while (d && !found && (e = readdir(d)))
        found = e->d_name[0] != '.';
    if (d)
        closedir(d);
    return found;
}

/* Yama's ptrace_scope 1-3 refuses process_vm_readv between sibling
 * processes; absent (no Yama) or 0 allows it within one user */
static int cma_allowed(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = 0;
    if (!f)
        return 1;
    if (fscanf(f, "%d", &scope) != 1)
        scope = 1;
    fclose(f);
    return scope == 0;
}

/* an address as /proc/net/tcp{,6} prints it: the in-memory 32-bit words
 * in hex, and the port */
struct net_end {
    uint32_t w[4];
    int nw;
    unsigned port;
};

static int net_end_of(const struct sockaddr_storage *ss, struct net_end *e)
{
    memset(e, 0, sizeof(*e));
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        memcpy(&e->w[0], &a->sin_addr, 4);
        e->nw = 1;
        e->port = ntohs(a->sin_port);
        return 0;
    }
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        memcpy(e->w, &a->sin6_addr, 16);
        e->nw = 4;
        e->port = ntohs(a->sin6_port);
        return 0;
    }
    return -1;
}

static int parse_end(const char *s, int nw, struct net_end *e)
{
    memset(e, 0, sizeof(*e));
    e->nw = nw;
    for (int i = 0; i < nw; i++) {
        char word[9];
        memcpy(word, s + 8 * i, 8);
        word[8] = '\0';
        e->w[i] = (uint32_t)strtoul(word, NULL, 16);
    }
    return sscanf(s + 8 * nw, ":%x", &e->port) == 1 ? 0 : -1;
}

static int same_end(const struct net_end *a, const struct net_end *b)
{
    return a->nw == b->nw && a->port == b->port &&
           !memcmp(a->w, b->w, sizeof(a->w[0]) * (size_t)a->nw);
}

/* The owner of the socket at local end `loc` talking to `rem`, from the
 * kernel's table of this network namespace: it lists every TCP socket
 * with its owner's uid. -1 if not found (another host, or namespace). */
static long socket_owner(const struct net_end *loc, const struct net_end *rem)
{
    FILE *f = fopen(loc->nw == 1 ? "/proc/net/tcp" : "/proc/net/tcp6", "r");
    char line[512], ls[64], rs[64];
    long uid = -1;
    if (!f)
        return -1;
    while (uid < 0 && fgets(line, sizeof(line), f)) {
        struct net_end l, r;
        unsigned long u;
        if (sscanf(line, " %*d: %63s %63s %*x %*s %*s %*s %lu", ls, rs, &u) != 3)
            continue;             /* the heading */
        if (!parse_end(ls, loc->nw, &l) && !parse_end(rs, loc->nw, &r) && same_end(&l, loc) &&
            same_end(&r, rem))
            uid = (long)u;
    }
    fclose(f);
    return uid;
}

/* 0 if the server at the other end of sock runs on this host as our user:
 * its end of the connection is in this namespace's socket table, owned by
 * us; else why not, in why */
static int peer_is_ours(int sock, char *why, size_t n)
{
    struct sockaddr_storage me, peer;
    socklen_t ml = sizeof(me), pl = sizeof(peer);
    struct net_end a, b;
    if (getsockname(sock, (struct sockaddr *)&me, &ml) || getpeername(sock, (struct sockaddr *)&peer, &pl) ||
        net_end_of(&me, &a) || net_end_of(&peer, &b)) {
        snprintf(why, n, "auto: not an IP connection");
        return -1;
    }
    long uid = socket_owner(&b, &a);
    if (uid < 0) {
        snprintf(why, n, "auto: the server is on another host and there is no RDMA device");
        return -1;
    }
    if ((uid_t)uid != geteuid()) {
        snprintf(why, n, "auto: the server on this host runs as uid %ld, not as this user "
                 "(UCX could not read its memory)", uid);
        return -1;
    }
    return 0;
}

int ddio_xport_resolve(int t, int sock, char *why, size_t n)
{
    char tmp[8];
    if (!why) {
        why = tmp;
        n = sizeof(tmp);
    }
    if (t != DDIO_XPORT_AUTO)
        return t;
    if (ddio_xport_rdma_present())
        return DDIO_XPORT_UCX;
    if (!cma_allowed()) {
        snprintf(why, n, "auto: no RDMA device, and Yama's ptrace_scope forbids cross-memory "
                 "attach on this host");
        return DDIO_XPORT_TCP;
    }
    if (sock >= 0 && peer_is_ours(sock, why, n))
        return DDIO_XPORT_TCP;
    return DDIO_XPORT_UCX;
}
