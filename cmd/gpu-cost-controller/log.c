/* log: structured logs, one JSON object a line, written atomically. */
#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

static int ctl__level = CTL_INFO;
static const char *const ctl__names[] = {"debug", "info", "warn", "error"};
static atomic_long ctl__errors;

long ctl_log_errors(void)
{
        return atomic_load(&ctl__errors);
}

void ctl_log_set_level(int level)
{
        ctl__level = level;
}

int ctl_log_parse_level(const char *s)
{
        for (int i = 0; i < 4; i++) {
                const char *a = ctl__names[i], *b = s;

                while (*a && *a == *b) {
                        a++;
                        b++;
                }
                if (!*a && !*b)
                        return i;
        }
        return -1;
}

void ctl_log(int level, const char *msg, ...)
{
        char ts[GC_TIME_LEN];
        const char *k;
        va_list ap;
        gc_buf b;
        int r;

        if (level == CTL_ERROR)
                atomic_fetch_add(&ctl__errors, 1);
        if (level < ctl__level || level < CTL_DEBUG || level > CTL_ERROR)
                return;
        gc_time_format((int64_t)time(NULL), ts);
        gc_buf_init(&b, 64 * 1024);
        r = gc_buf_printf(&b, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":", ts, ctl__names[level]);
        if (r == 0)
                r = gc_buf_json_str(&b, msg);
        va_start(ap, msg);
        while (r == 0 && (k = va_arg(ap, const char *))) {
                const char *v = va_arg(ap, const char *);

                r = gc_buf_puts(&b, ",");
                if (r == 0)
                        r = gc_buf_json_str(&b, k);
                if (r == 0)
                        r = gc_buf_puts(&b, ":");
                if (r == 0)
                        r = gc_buf_json_str(&b, v ? v : "");
        }
        va_end(ap);
        if (r == 0)
                r = gc_buf_puts(&b, "}\n");
        if (r == 0) {
                ssize_t w = write(STDERR_FILENO, b.data, b.len);

                (void)w;
        }
        gc_buf_free(&b);
}
