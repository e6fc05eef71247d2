/* Leveled logging: to stderr as "ddio-server[pid] LEVEL: message", or to
 * syslog (facility daemon, the level as its priority) after
 * ddio_log_use_syslog(1). */
#ifndef DDIO_LOG_H
#define DDIO_LOG_H

enum ddio_log_level { DDIO_LOG_ERROR = 0, DDIO_LOG_WARN, DDIO_LOG_INFO, DDIO_LOG_DEBUG };

void ddio_log_init(const char *prog, int level);
/* after ddio_log_init (which names the program), before other threads log */
void ddio_log_use_syslog(int on);
int  ddio_log_level(void);
/* parse "error|warn|info|debug"; -1 if unknown */
int  ddio_log_parse_level(const char *s);
void ddio_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define DDIO_ERR(...)   ddio_log(DDIO_LOG_ERROR, __VA_ARGS__)
#define DDIO_WARN(...)  ddio_log(DDIO_LOG_WARN, __VA_ARGS__)
#define DDIO_INFO(...)  ddio_log(DDIO_LOG_INFO, __VA_ARGS__)
#define DDIO_DEBUG(...) do { if (ddio_log_level() >= DDIO_LOG_DEBUG) ddio_log(DDIO_LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
