/* fuzz_kube_lines: the watch's line splitter, fed in slices the input chooses, against a reference.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kube/kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Input: byte 0 picks the line cap (1..64), byte 1 seeds the slicing, the rest is the stream.
 * The reference splits the whole stream at once; the splitter must agree line for line and
 * report each too-long line exactly once, whatever the slices.
 */
typedef struct ref {
        const char *p, *end; /* the stream not yet matched */
        size_t max;
        size_t drops;
} ref;

/* The next line the reference expects (skipping too-long ones, which it counts). */
static int ref_next(ref *r, const char **ret, size_t *ret_len)
{
        for (;;) {
                const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
                size_t len;

                if (!nl)
                        return 0;
                len = (size_t)(nl - r->p);
                *ret = r->p;
                r->p = nl + 1;
                if (len <= r->max) {
                        *ret_len = len;
                        return 1;
                }
        }
}

typedef struct run {
        ref want;
        size_t drops;
} run;

static int on_line(void *ud, const char *line, size_t len)
{
        run *u = ud;
        const char *w;
        size_t wlen;

        if (!line) {
                if (len <= u->want.max)
                        __builtin_trap();
                u->drops++;
                return 0;
        }
        if (!ref_next(&u->want, &w, &wlen) || wlen != len || memcmp(w, line, len) != 0)
                __builtin_trap();
        return 0;
}

static size_t count_drops(const char *p, size_t n, size_t max)
{
        size_t drops = 0, run_len = 0;

        for (size_t i = 0; i < n; i++) {
                if (p[i] == '\n') {
                        drops += run_len > max;
                        run_len = 0;
                } else {
                        run_len++;
                }
        }
        /* An unfinished line is reported as soon as it passes the cap. */
        return drops + (run_len > max);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        gc_kube_lines s;
        run u;
        const char *body;
        size_t n, off = 0;
        uint32_t x;
        const char *w;
        size_t wlen;

        if (size < 2)
                return 0;
        memset(&u, 0, sizeof(u));
        u.want.max = 1 + data[0] % 64;
        x = 0x9e3779b9u ^ data[1];
        body = (const char *)data + 2;
        n = size - 2;
        u.want.p = body;
        u.want.end = body + n;
        gc_kube_lines_init(&s, u.want.max);
        while (off < n) {
                size_t slice;

                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                slice = 1 + x % 23;
                if (slice > n - off)
                        slice = n - off;
                if (gc_kube_lines_feed(&s, body + off, slice, on_line, &u) < 0)
                        __builtin_trap();
                if (s.pending.len > u.want.max || s.scanned != s.pending.len)
                        __builtin_trap();
                off += slice;
        }
        /* Every complete line was delivered, and each long one reported once. */
        if (ref_next(&u.want, &w, &wlen))
                __builtin_trap();
        if (u.drops != count_drops(body, n, u.want.max))
                __builtin_trap();
        gc_kube_lines_release(&s);
        return 0;
}
