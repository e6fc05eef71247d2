/* Leveled logging to stderr: "ddio-server[pid] LEVEL: message". */
#ifndef DDIO_LOG_H
#define DDIO_LOG_H

enum ddio_log_level { DDIO_LOG_ERROR = 0, DDIO_LOG_WARN, DDIO_LOG_INFO, DDIO_LOG_DEBUG };

void ddio_log_init(const char *prog, int level);
int  ddio_log_level(void);
/* parse "error|warn|info|debug"; -1 if unknown */
int  ddio_log_parse_level(const char *s);
void ddio_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define DDIO_ERR(...)   ddio_log(DDIO_LOG_ERROR, __VA_ARGS__)
#define DDIO_WARN(...)  ddio_log(DDIO_LOG_WARN, __VA_ARGS__)
#define DDIO_INFO(...)  ddio_log(DDIO_LOG_INFO, __VA_ARGS__)
#define DDIO_DEBUG(...) do { if (ddio_log_level() >= DDIO_LOG_DEBUG) ddio_log(DDIO_LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
