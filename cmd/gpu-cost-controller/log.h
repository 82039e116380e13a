/* log: structured logs, one JSON object a line on standard error. */
#ifndef CTL_LOG_H
#define CTL_LOG_H

enum { CTL_DEBUG = 0, CTL_INFO, CTL_WARN, CTL_ERROR };

/* Messages below the level are dropped. */
void ctl_log_set_level(int level);
/* "debug", "info", "warn", "error" -> level; -1 when unknown. */
int ctl_log_parse_level(const char *s);

/*
 * {"ts":"...","level":"info","msg":"...","key":"value",...}: the variadic part is pairs of
 * const char * key and value, ended by NULL. Values are strings (escaped). Thread-safe: a line is
 * written with one write(2).
 */
/* Error lines logged so far (for /metrics). */
long ctl_log_errors(void);

void ctl_log(int level, const char *msg, ...) __attribute__((sentinel));

#endif
