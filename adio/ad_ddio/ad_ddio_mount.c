/* Plain paths on a ddio mount (tools/ddio-fuse).
 *
 * The mount answers two extended attributes on every path: user.ddio.servers
 * (its server list) and user.ddio.path (the path inside the ddio namespace).
 * ROMIO's file system detection (ad_fstype.c, patched by
 * scripts/romio-register.sh) asks ADIOI_DDIO_Is_mount_path, so a program
 * that opens /mnt/ddio/out goes straight to the servers, disk-directed, and
 * never through the FUSE daemon. A file not created yet is resolved through
 * its parent directory. */
#include "ad_ddio.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <sys/xattr.h>

#define ADIOI_DDIO_FUSE_MAGIC 0x65735546        /* FUSE_SUPER_MAGIC */

static int on_fuse(const char *path)
{
    struct statfs sb;
    return statfs(path, &sb) == 0 && (unsigned long) sb.f_type == ADIOI_DDIO_FUSE_MAGIC;
}

/* value of xattr `name` of path into buf (NUL-terminated); 0 or -1 */
static int get_attr(const char *path, const char *name, char *buf, size_t cap)
{
    ssize_t n = getxattr(path, name, buf, cap - 1);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

/* "a/b/c" -> dir "a/b" (or "." ) and base "c"; 0, or -1 if it does not fit */
static int split_parent(const char *filename, char *dir, size_t cap, const char **base)
{
    const char *slash = strrchr(filename, '/');
    size_t len;

    if (!slash) {
        snprintf(dir, cap, ".");
        *base = filename;
        return 0;
    }
    len = (slash == filename) ? 1 : (size_t) (slash - filename);
    if (len >= cap)
        return -1;
    memcpy(dir, filename, len);
    dir[len] = '\0';
    *base = slash + 1;
    return 0;
}

int ADIOI_DDIO_Mount_resolve(const char *filename, char *nspath, size_t cap,
                             char *servers, size_t scap)
{
    char dir[PATH_MAX];
    const char *base;
    int n;

    if (!strncmp(filename, "ddio:", 5))
        return 0;
    if (on_fuse(filename) && get_attr(filename, "user.ddio.servers", servers, scap) == 0 &&
        get_attr(filename, "user.ddio.path", nspath, cap) == 0)
        return 1;
    /* not there (yet, or any more: a name another client just removed can
     * vanish between the two calls above): its parent directory on the mount */
    if (split_parent(filename, dir, sizeof(dir), &base) || !*base)
        return 0;
    if (!on_fuse(dir) || get_attr(dir, "user.ddio.servers", servers, scap) ||
        get_attr(dir, "user.ddio.path", nspath, cap))
        return 0;
    n = strlen(nspath);
    if (n > 0 && nspath[n - 1] == '/')
        nspath[--n] = '\0';
    if ((size_t) n + 1 + strlen(base) + 1 > cap)
        return 0;
    snprintf(nspath + n, cap - n, "/%s", base);
    return 1;
}

/* DDIO_VERBOSE=1: a path on a FUSE mount that is not taken for a ddio
 * mount path says why (ROMIO then detects the file system itself) */
static void say_not_mount(const char *filename, int err)
{
    const char *v = getenv("DDIO_VERBOSE"), *base;
    char dir[PATH_MAX];
    if (!v || atoi(v) <= 0 || filename[0] != '/')
        return;
    if (!on_fuse(filename) && (split_parent(filename, dir, sizeof(dir), &base) || !on_fuse(dir)))
        return;
    fprintf(stderr, "ddio: %s: not taken as a ddio mount path (errno %d: %s)\n", filename,
                err, strerror(err));
}

int ADIOI_DDIO_Is_mount_path(const char *filename)
{
    char nspath[PATH_MAX], servers[ADIOI_DDIO_SERVERS_LEN];
    errno = 0;
    int rc = filename ? ADIOI_DDIO_Mount_resolve(filename, nspath, sizeof(nspath), servers,
                                                 sizeof(servers)) : 0;
    if (filename && rc != 1 && errno)
        say_not_mount(filename, errno);
    return rc == 1;
}

void ADIOI_DDIO_Target(const char *filename, char *path, size_t cap, char *servers,
                       size_t scap)
{
    servers[0] = '\0';
    if (ADIOI_DDIO_Mount_resolve(filename, path, cap, servers, scap) != 1) {
        servers[0] = '\0';
        snprintf(path, cap, "%s", filename);
    }
    /* "ddio:/a/b", "/a/b" -> "a/b" */
    const char *rel = ADIOI_DDIO_Server_path(path);
    memmove(path, rel, strlen(rel) + 1);
}

const char *ADIOI_DDIO_Servers_spec(const char *hint, const char *mount_servers)
{
    const char *env = getenv("DDIO_SERVERS");
    if ((hint && *hint) || (env && *env) || !mount_servers || !*mount_servers)
        return hint;
    return mount_servers;
}

/* "ddio:/a/b" and "/a/b" -> "a/b": relative to every server's storage root */
const char *ADIOI_DDIO_Server_path(const char *filename)
{
    if (!strncmp(filename, "ddio:", 5))
        filename += 5;
    while (*filename == '/')
        filename++;
    return filename;
}
