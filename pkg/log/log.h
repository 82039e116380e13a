/* log: structured logs, one JSON object a line on standard error. */
#ifndef GC_LOG_H
#define GC_LOG_H

enum { GC_LOG_DEBUG = 0, GC_LOG_INFO, GC_LOG_WARN, GC_LOG_ERROR };

/* Messages below the level are dropped. */
void gc_log_set_level(int level);
/* "debug", "info", "warn", "error" -> level; -1 when unknown. */
int gc_log_parse_level(const char *s);

/*
 * {"ts":"...","level":"info","msg":"...","key":"value",...}: the variadic part is pairs of
 * const char * key and value, ended by NULL. Values are strings (escaped). Thread-safe: a line is
 * written with one write(2).
 */
/* Error lines logged so far (for /metrics). */
long gc_log_errors(void);

void gc_log(int level, const char *msg, ...) __attribute__((sentinel));

#endif
