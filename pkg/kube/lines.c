/* kube lines: splits a byte stream into '\n'-terminated lines under a hard length cap. */
#include "kube.h"

#include <errno.h>
#include <string.h>

/*
 * Complete lines inside a slice are handed out straight from the slice; only the unfinished
 * tail of a slice is copied, into `pending`. So pending never holds a '\n', `scanned` always
 * equals pending.len (no byte is searched twice), and memory is bounded by max.
 */

void gc_kube_lines_init(gc_kube_lines *s, size_t max)
{
        gc_buf_init(&s->pending, max);
        s->max = max;
        s->scanned = 0;
        s->dropping = 0;
}

void gc_kube_lines_release(gc_kube_lines *s)
{
        if (!s)
                return;
        gc_buf_free(&s->pending);
        s->scanned = 0;
        s->dropping = 0;
}

/* Leaves the too-long line: the next byte starts a new line. */
static void gc__lines_stop_dropping(gc_kube_lines *s)
{
        s->dropping = 0;
        gc_buf_free(&s->pending);
        s->scanned = 0;
}

/* Starts dropping a line of which `dropped` bytes were seen; reports it once. */
static int gc__lines_drop(gc_kube_lines *s, size_t dropped,
                          int (*line)(void *ud, const char *line, size_t len), void *ud)
{
        s->dropping = 1;
        gc_buf_free(&s->pending);
        s->scanned = 0;
        return line(ud, NULL, dropped);
}

int gc_kube_lines_feed(gc_kube_lines *s, const char *p, size_t n,
                       int (*line)(void *ud, const char *line, size_t len), void *ud)
{
        const char *end = p + n;
        int r;

        if (n == 0)
                return 0;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t part = nl ? (size_t)(nl - p) : (size_t)(end - p);

                if (s->dropping) {
                        /* The rest of a too-long line: discarded up to its end. */
                        if (nl)
                                gc__lines_stop_dropping(s);
                        p = nl ? nl + 1 : end;
                        continue;
                }
                if (s->pending.len > s->max || part > s->max - s->pending.len) {
                        r = gc__lines_drop(s, s->pending.len + part, line, ud);
                        if (r < 0)
                                return r;
                        if (nl)
                                gc__lines_stop_dropping(s);
                        p = nl ? nl + 1 : end;
                        continue;
                }
                if (!nl) {
                        /* An unfinished line: kept until its end arrives. */
                        r = gc_buf_append(&s->pending, p, part);
                        if (r < 0)
                                return r;
                        s->scanned = s->pending.len;
                        break;
                }
                if (s->pending.len == 0) {
                        r = line(ud, p, part);
                } else {
                        r = gc_buf_append(&s->pending, p, part);
                        if (r < 0)
                                return r;
                        r = line(ud, s->pending.data, s->pending.len);
                        /* One huge event must not pin its buffer for the stream's life. */
                        if (s->pending.cap > 65536)
                                gc_buf_free(&s->pending);
                        else
                                gc_buf_reset(&s->pending);
                        s->scanned = 0;
                }
                if (r < 0)
                        return r;
                p = nl + 1;
        }
        return 0;
}
