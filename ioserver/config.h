/* ddio-server command line options. */
#ifndef DDIO_SRV_CONFIG_H
#define DDIO_SRV_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#define DDIO_MAX_ROOTS 64
#define LISTEN_PORT_AUTO 65536

/* --checksums: which files keep sums */
enum { SUMS_OFF = 0, SUMS_ON = 1, SUMS_MIRRORED = 2 };

struct srv_config {
    char listen_host[256];
    int listen_port;              /* LISTEN_PORT_AUTO: below the ephemeral range */
    const char *port_file;        /* NULL: none */
    const char *roots[DDIO_MAX_ROOTS];
    int nroots;
    uint64_t block_size;          /* multiple of 4096 */
    unsigned buffers;             /* aligned buffers per disk */
    int rotate;
    int replacement;              /* --replacement: waits for REBUILD ADOPT (rebuild.h) */
    int page_cache;               /* --page-cache on|off (pcache.h), default on */
    int checksums;                /* --checksums (sums.h): SUMS_OFF, SUMS_ON, or
                                   * SUMS_MIRRORED (default: files with copies) */
    unsigned copies;              /* --redundancy: copies of a file created without a
                                   * mode of its own (1 none, the default; 2, 3 mirror) */
    unsigned throttle_mibps;      /* emulate disks of this bandwidth; 0 = off */
    int log_level;
    int use_syslog;               /* --syslog: log to syslog, not stderr */
    const char *fault;            /* --fault POINT:N[:ACTION] (tests), or NULL */
    int insecure;                 /* no authentication (local experiments only) */
    const char *secret_file;      /* shared secret for AUTH; required unless insecure */
    int munge;                    /* --auth munge: identities proven by MUNGE credentials */
    const char *munge_socket;     /* munged's socket, NULL: libmunge's default */
    int root_squash;              /* --root-squash on|off: clients' uid 0 is nobody */
    long admin_uid;               /* --admin-uid: passes every check; -1 none */
    const char *mount_hosts;      /* --mount-hosts: addresses whose root may ACTAS */
    int tls;                      /* --tls: enum ddio_tls_mode (ddio_tls.h) */
    const char *tls_cert;         /* --tls-cert: certificate chain (PEM) */
    const char *tls_key;          /* --tls-key: its private key (PEM) */
    /* limits on what a client may make the server hold (hostile clients) */
    unsigned max_conns;           /* connections at once */
    unsigned max_unauth;          /* of which not yet authenticated */
    unsigned auth_timeout_s;      /* to authenticate after connecting */
    uint64_t max_msg;             /* request payload bytes (DATA: its GET's size) */
    uint64_t max_desc;            /* encoded descriptor bytes in one XFER */
    unsigned max_depth;           /* descriptor nesting */
    uint64_t max_call_mem;        /* memory one XFER's descriptors and plan may take */
    unsigned max_inflight;        /* waiting requests per connection */
    unsigned stop_timeout_s;      /* SIGTERM: how long calls in flight may finish */
    unsigned lock_grace_ms;       /* after a restart or a lock holder's drop, only
                                   * reclaims are granted this long (locks.h) */
    int transport;                /* --transport: enum ddio_xport (ddio_ucx.h) */
};

/* Defaults (no roots, no listen address). */
void config_defaults(struct srv_config *c);
/* Parse argv: first the file of --config FILE (if given), then the other
 * flags, which override it (docs: ddio-server(8), etc/ddio-server.conf.example).
 * Returns 0 on success, 1 if --help was given (usage printed to stdout), -1
 * on error with one line of explanation in err ("FILE:LINE: ..." for the
 * file). Strings in c point into argv or into copies of the file's values. */
int config_parse(struct srv_config *c, int argc, char **argv, char *err, size_t errlen);
void config_usage(FILE *f);
/* Free the copies of the file's values (every configuration parsed so far
 * stops being valid). */
void config_release(void);
/* Apply the 'option = value' lines of a configuration file to c. */
int config_read_file(struct srv_config *c, const char *path, char *err, size_t errlen);

#endif
