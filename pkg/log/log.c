/* log: structured logs, one JSON object a line, written atomically. */
#include "log/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

static int log__level = GC_LOG_INFO;
static const char *const log__names[] = {"debug", "info", "warn", "error"};
static atomic_long log__errors;

long gc_log_errors(void)
{
        return atomic_load(&log__errors);
}

void gc_log_set_level(int level)
{
        log__level = level;
}

int gc_log_parse_level(const char *s)
{
        for (int i = 0; i < 4; i++) {
                const char *a = log__names[i], *b = s;

                while (*a && *a == *b) {
                        a++;
                        b++;
                }
                if (!*a && !*b)
                        return i;
        }
        return -1;
}

void gc_log(int level, const char *msg, ...)
{
        char ts[GC_TIME_LEN];
        const char *k;
        va_list ap;
        gc_buf b;

        if (level == GC_LOG_ERROR)
                atomic_fetch_add(&log__errors, 1);
        if (level < log__level || level < GC_LOG_DEBUG || level > GC_LOG_ERROR)
                return;
        gc_time_format((int64_t)time(NULL), ts);
        /* A line is at most 64 KiB: a longer one is dropped whole rather than cut. */
        gc_buf_init(&b, 64 * 1024);
        gc_buf_printf(&b, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":", ts, log__names[level]);
        gc_buf_json_str(&b, msg);
        va_start(ap, msg);
        while (!b.err && (k = va_arg(ap, const char *))) {
                const char *v = va_arg(ap, const char *);

                gc_buf_puts(&b, ",");
                gc_buf_json_str(&b, k);
                gc_buf_puts(&b, ":");
                gc_buf_json_str(&b, v ? v : "");
        }
        va_end(ap);
        if (gc_buf_puts(&b, "}\n") == 0) {
                ssize_t w = write(STDERR_FILENO, b.data, b.len);

                (void)w;
        }
        gc_buf_free(&b);
}
