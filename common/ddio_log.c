/* Leveled logging to stderr or syslog (see ddio_log.h).
 *
 * Each line is formatted completely first and written with a single fprintf,
 * so lines from different threads never interleave (stdio locks the stream
 * per call). The pid is taken at each call so forked children log their own.
 */
#include "ddio_log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <unistd.h>

/* WARN by default: inside an MPI application the driver should stay quiet
 * unless something is wrong. */
static atomic_int log_level = DDIO_LOG_WARN;
static char log_prog[64] = "ddio";

static const char *const level_names[] = { "ERROR", "WARN", "INFO", "DEBUG" };
static const int level_prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
static atomic_int log_syslog;

/* syslog keeps the program name we hand it: it must outlive openlog */
void ddio_log_use_syslog(int on)
{
    if (on)
        openlog(log_prog, LOG_PID | LOG_NDELAY, LOG_DAEMON);
    else if (atomic_load(&log_syslog))
        closelog();
    atomic_store(&log_syslog, on != 0);
}

/* Call once at start-up, before other threads log. */
void ddio_log_init(const char *prog, int level)
{
    if (prog && *prog) {
        const char *base = strrchr(prog, '/');
        snprintf(log_prog, sizeof(log_prog), "%s", base ? base + 1 : prog);
    }
    if (level < DDIO_LOG_ERROR)
        level = DDIO_LOG_ERROR;
    if (level > DDIO_LOG_DEBUG)
        level = DDIO_LOG_DEBUG;
    atomic_store(&log_level, level);
}

int ddio_log_level(void)
{
    return atomic_load(&log_level);
}

int ddio_log_parse_level(const char *s)
{
    static const char *const lower[] = { "error", "warn", "info", "debug" };
    if (!s)
        return -1;
    for (int i = 0; i <= DDIO_LOG_DEBUG; i++)
        if (strcasecmp(s, lower[i]) == 0)
            return i;
    if (strcasecmp(s, "warning") == 0)
        return DDIO_LOG_WARN;
    return -1;
}

void ddio_log(int level, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    if (level > ddio_log_level())
        return;
    if (level < DDIO_LOG_ERROR)
        level = DDIO_LOG_ERROR;
    if (level > DDIO_LOG_DEBUG)
        level = DDIO_LOG_DEBUG;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (n < 0)
        snprintf(msg, sizeof(msg), "(bad log format \"%s\")", fmt);
    else if ((size_t)n >= sizeof(msg))    /* say so rather than cut silently */
        memcpy(msg + sizeof(msg) - 4, "...", 4);
    /* drop one trailing newline so callers may or may not end with one */
    size_t len = strlen(msg);
    if (len && msg[len - 1] == '\n')
        msg[len - 1] = '\0';
    if (atomic_load(&log_syslog))   /* syslog adds the name and pid itself */
        syslog(level_prio[level], "%s: %s", level_names[level], msg);
    else
        fprintf(stderr, "%s[%ld] %s: %s\n", log_prog, (long)getpid(), level_names[level], msg);
}
