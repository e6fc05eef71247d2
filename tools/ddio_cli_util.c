/* tools/ddio: helpers every command uses (messages, the client, JSON). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ddio_cli.h"

static void vsay(const char *fmt, va_list ap)
{
    char line[2048];
    vsnprintf(line, sizeof line, fmt, ap);
    fprintf(stderr, "ddio: %s\n", line);
}

int cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
    return 1;
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
    return 2;
}

struct ddio_client *cli_client(const struct cli *o)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_client *cl = ddio_client_new(o->servers, (int)(o->timeout_s * 1000 + 0.5),
                                             o->unit, o->secret_file, msg, sizeof msg);
    if (!cl)
        cli_fail("%s", msg);
    return cl;
}

const char *cli_ns_path(const char *arg)
{
    return strncmp(arg, "ddio:", 5) == 0 ? arg + 5 : arg;
}

void cli_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

const char *cli_human(uint64_t bytes, char *buf, size_t n)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, n, "%.2f %s", v, unit[u]);
    return buf;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}
