/* tools/ddio: the namespace commands (ls, stat, rm, mkdir, layout), each a
 * thin layer over ddio_client's merged-over-servers namespace calls. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddio_cli.h"

static void fmt_mtime(uint64_t ns, char *buf, size_t n)
{
    time_t t = (time_t)(ns / 1000000000u);
    struct tm tm;
    if (!localtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(buf, n, "?");
}

static void fmt_mode(const struct ddio_cstat *st, char out[11])
{
    static const char rwx[] = "rwxrwxrwx";
    out[0] = st->is_dir ? 'd' : '-';
    for (int i = 0; i < 9; i++)
        out[1 + i] = (st->mode & (0400u >> i)) ? rwx[i] : '-';
    out[10] = '\0';
}

/* one object's fields as JSON (no surrounding braces' neighbours) */
static void json_stat(FILE *f, const char *key, const char *name, const struct ddio_cstat *st)
{
    fprintf(f, "{\"%s\": ", key);
    cli_json_str(f, name);
    fprintf(f, ", \"type\": \"%s\", \"size\": %" PRIu64 ", \"mode\": \"%04o\", "
               "\"uid\": %u, \"gid\": %u, \"mtime_ns\": %" PRIu64, st->is_dir ? "dir" : "file",
            st->size, (unsigned)st->mode, st->uid, st->gid, st->mtime_ns);
    if (!st->is_dir)
        fprintf(f, ", \"stripe_unit\": %" PRIu64 ", \"stripe_count\": %u, "
                "\"redundancy\": \"%s\"", st->stripe.unit, st->stripe.count,
                ddio_redundancy_name(st->redundancy));
    fputc('}', f);
}

/* NAME as ls(1)'s shell-escape quoting shows it: as it is when nothing in
 * it is special; else in single quotes, a quote as '\'', and a control
 * character as $'\n' (or octal) between quoted parts, so that one entry is
 * always one line and can be pasted back into a shell */
static void put_name(FILE *f, const char *name)
{
    const unsigned char *c = (const unsigned char *)name;
    if (*c && !c[strcspn(name, " \t\n\r'\"\\$`*?[]{}()<>|&;#~!")]) {
        int ctl = 0;
        for (const unsigned char *p = c; *p; p++)
            ctl |= *p < 0x20 || *p == 0x7f;
        if (!ctl) {
            fputs(name, f);
            return;
        }
    }
    static const char esc[] = "\a\b\t\n\v\f\r";
    static const char letter[] = "abtnvfr";
    fputc('\'', f);
    for (; *c; c++) {
        if (*c == '\'')
            fputs("'\\''", f);
        else if (*c < 0x20 || *c == 0x7f) {
            const char *e = *c ? strchr(esc, *c) : NULL;
            if (e)
                fprintf(f, "'$'\\%c''", letter[e - esc]);
            else
                fprintf(f, "'$'\\%03o''", *c);
        } else
            fputc(*c, f);
    }
    fputc('\'', f);
}

static void long_line(const char *name, const struct ddio_cstat *st)
{
    char mode[11], when[32];
    fmt_mode(st, mode);
    fmt_mtime(st->mtime_ns, when, sizeof when);
    printf("%s %15" PRIu64 " %s ", mode, st->size, when);
    put_name(stdout, name);
    putchar('\n');
}

/* "dir" + "/" + "name" without doubling the slash */
static void join(char *out, size_t n, const char *dir, const char *name)
{
    size_t l = strlen(dir);
    snprintf(out, n, "%s%s%s", dir, l && dir[l - 1] == '/' ? "" : "/", name);
}

struct ls_ctx {
    struct cli *o;
    struct ddio_client *cl;
    const char *dir;
    int first;
    int rc;
};

static int ls_entry(void *arg, const char *name, int is_dir)
{
    struct ls_ctx *x = arg;
    char path[8192], msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_cstat st = {.is_dir = is_dir};
    if (x->o->json || x->o->longfmt) {
        join(path, sizeof path, x->dir, name);
        int rc = ddio_client_stat(x->cl, path, &st, msg, sizeof msg);
        if (rc == -ENOENT)            /* removed while we listed: skip it */
            return 0;
        if (rc) {
            x->rc = cli_fail("%s", msg);
            return rc;
        }
    }
    if (x->o->json) {
        printf("%s\n  ", x->first ? "" : ",");
        json_stat(stdout, "name", name, &st);
    } else if (x->o->longfmt)
        long_line(name, &st);
    else {
        put_name(stdout, name);
        putchar('\n');
    }
    x->first = 0;
    return 0;
}

int cmd_ls(struct cli *o)
{
    const char *path = o->argc ? cli_ns_path(o->argv[0]) : "/";
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_cstat st;
    struct ddio_client *cl = cli_client(o);
    if (!cl)
        return 1;
    int rc = ddio_client_stat(cl, path, &st, msg, sizeof msg);
    if (rc) {
        ddio_client_free(cl);
        return cli_fail("ls: %s", msg);
    }
    struct ls_ctx x = {.o = o, .cl = cl, .dir = path, .first = 1};
    if (o->json)
        printf("[");
    if (!st.is_dir) {                  /* ls of a file shows the file, as ls(1) */
        if (o->json) {
            printf("\n  ");
            json_stat(stdout, "name", path, &st);
        } else if (o->longfmt)
            long_line(path, &st);
        else {
            put_name(stdout, path);
            putchar('\n');
        }
    } else if ((rc = ddio_client_readdir(cl, path, ls_entry, &x, msg, sizeof msg)) && !x.rc)
        x.rc = cli_fail("ls: %s", msg);
    if (o->json)
        printf("\n]\n");
    ddio_client_free(cl);
    return x.rc;
}

int cmd_stat(struct cli *o)
{
    const char *path = cli_ns_path(o->argv[0]);
    char msg[DDIO_CLIENT_MSG_LEN], mode[11], when[32];
    struct ddio_cstat st;
    struct ddio_client *cl = cli_client(o);
    if (!cl)
        return 1;
    int rc = ddio_client_stat(cl, path, &st, msg, sizeof msg);
    ddio_client_free(cl);
    if (rc)
        return cli_fail("stat: %s", msg);
    if (o->json) {
        json_stat(stdout, "path", path, &st);
        printf("\n");
        return 0;
    }
    fmt_mode(&st, mode);
    fmt_mtime(st.mtime_ns, when, sizeof when);
    printf("path: %s\ntype: %s\nsize: %" PRIu64 "\nmode: %04o (%s)\nowner: %u\ngroup: %u\n"
           "mtime: %s\n", path, st.is_dir ? "directory" : "file", st.size, (unsigned)st.mode,
           mode, st.uid, st.gid, when);
    if (!st.is_dir)
        printf("stripe_unit: %" PRIu64 "\nstripe_count: %u\nredundancy: %s\n", st.stripe.unit,
               st.stripe.count, ddio_redundancy_name(st.redundancy));
    return 0;
}

/* a file is unlinked; a directory removed only when empty (on every server) */
int cmd_rm(struct cli *o)
{
    const char *path = cli_ns_path(o->argv[0]);
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_cstat st;
    struct ddio_client *cl = cli_client(o);
    if (!cl)
        return 1;
    int rc = ddio_client_stat(cl, path, &st, msg, sizeof msg);
    if (!rc)
        rc = st.is_dir ? ddio_client_rmdir(cl, path, msg, sizeof msg)
                       : ddio_client_unlink(cl, path, msg, sizeof msg);
    ddio_client_free(cl);
    return rc ? cli_fail("rm: %s", msg) : 0;
}

int cmd_mkdir(struct cli *o)
{
    const char *path = cli_ns_path(o->argv[0]);
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_client *cl = cli_client(o);
    if (!cl)
        return 1;
    int rc = ddio_client_mkdir(cl, path, 0755, msg, sizeof msg);
    ddio_client_free(cl);
    if (rc == -EEXIST)
        return cli_fail("mkdir: %s: already exists", path);
    return rc ? cli_fail("mkdir: %s", msg) : 0;
}

int cmd_mv(struct cli *o)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_client *cl = cli_client(o);
    if (!cl)
        return 1;
    int rc = ddio_client_rename(cl, cli_ns_path(o->argv[0]), cli_ns_path(o->argv[1]), msg,
                                sizeof msg);
    ddio_client_free(cl);
    return rc ? cli_fail("mv: %s", msg) : 0;
}

int cmd_chmod(struct cli *o)
{
    char *end, msg[DDIO_CLIENT_MSG_LEN];
    unsigned long mode = strtoul(o->argv[0], &end, 8);
    if (!*o->argv[0] || *end || mode > 07777)
        return cli_fail("chmod: '%s' is not an octal mode (0..7777)", o->argv[0]);
    struct ddio_client *cl = cli_client(o);
    if (!cl)
        return 1;
    int rc = ddio_client_setattr(cl, cli_ns_path(o->argv[1]), DDIO_SA_MODE, (uint32_t)mode, 0,
                                 0, msg, sizeof msg);
    ddio_client_free(cl);
    return rc ? cli_fail("chmod: %s", msg) : 0;
}

/* UID[:GID], numeric; without GID the file keeps its group */
int cmd_chown(struct cli *o)
{
    char *end, msg[DDIO_CLIENT_MSG_LEN];
    unsigned long uid = strtoul(o->argv[0], &end, 10);
    long gid = -1;
    if (*end == ':')
        gid = (long)strtoul(end + 1, &end, 10);
    if (!isdigit((unsigned char)*o->argv[0]) || *end || uid > 0xfffffffful || gid > 0xffffffffl)
        return cli_fail("chown: '%s' is not UID[:GID] (numbers)", o->argv[0]);
    struct ddio_client *cl = cli_client(o);
    if (!cl)
        return 1;
    int rc = ddio_client_chown(cl, cli_ns_path(o->argv[1]), (long)uid, gid, msg, sizeof msg);
    ddio_client_free(cl);
    return rc ? cli_fail("chown: %s", msg) : 0;
}

int cmd_layout(struct cli *o)
{
    const char *path = cli_ns_path(o->argv[0]);
    char msg[DDIO_CLIENT_MSG_LEN], h[32];
    struct ddio_client *cl = cli_client(o);
    struct ddio_clayout *l = malloc(sizeof(*l));
    if (!cl || !l) {
        ddio_client_free(cl);
        free(l);
        return cl ? cli_fail("out of memory") : 1;
    }
    int rc = ddio_client_layout(cl, path, l, msg, sizeof msg);
    if (rc) {
        ddio_client_free(cl);
        free(l);
        return cli_fail("layout: %s", msg);
    }
    uint64_t sum = 0;
    int missing = 0;
    if (o->json) {
        printf("{\"path\": ");
        cli_json_str(stdout, path);
        printf(", \"size\": %" PRIu64 ", \"stripe_unit\": %" PRIu64 ", \"stripe_count\": %u, "
               "\"stripes\": [", l->size, l->stripe.unit, l->stripe.count);
    } else {
        printf("%s: %" PRIu64 " bytes (%s), stripe unit %" PRIu64 ", stripe count %u\n",
               path, l->size, cli_human(l->size, h, sizeof h), l->stripe.unit,
               l->stripe.count);
        printf("%-6s  %-24s  %15s  %15s\n", "stripe", "server", "bytes", "expected");
    }
    for (uint32_t k = 0; k < l->stripe.count; k++) {
        int i = l->server[k];
        const char *addr = i >= 0 ? ddio_client_server_addr(cl, i) : "(not in the list)";
        /* what the size implies this server holds; differs only for sparse files */
        uint64_t expect = ddio_layout_local_size(&l->stripe, k, l->size);
        sum += l->local[k];
        missing |= i < 0;
        if (o->json) {
            printf("%s\n  {\"index\": %u, \"server\": ", k ? "," : "", k);
            if (i >= 0)
                cli_json_str(stdout, addr);
            else
                printf("null");
            printf(", \"bytes\": %" PRIu64 ", \"expected\": %" PRIu64 "}", l->local[k], expect);
        } else
            printf("%-6u  %-24s  %15" PRIu64 "  %15" PRIu64 "\n", k, addr, l->local[k], expect);
    }
    if (o->json)
        printf("\n], \"total\": %" PRIu64 "}\n", sum);
    else
        printf("%-6s  %-24s  %15" PRIu64 "\n", "total", "", sum);
    ddio_client_free(cl);
    free(l);
    return missing ? cli_fail("layout: %s: some stripe servers are not in the list %s", path,
                              o->servers) : 0;
}
