/*
 * fuzz_jscan: util's list scanner fed the input whole and in input-chosen pieces must report the
 * same values (what, index, depth, first byte, length, bytes) and end with the same result and
 * message; whole, every value it reports lies in the input, and one over max_value comes without
 * bytes.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/jscan.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct seen {
        const char *in; /* the input, when fed whole: values must lie in it */
        size_t in_len;
        size_t max_value;
        uint64_t h; /* FNV-1a of everything reported */
        size_t n;
} seen;

static void mix(seen *s, const void *p, size_t n)
{
        const unsigned char *b = p;

        for (size_t i = 0; i < n; i++)
                s->h = (s->h ^ b[i]) * 0x100000001b3ULL;
}

static int on_value(void *ud, const gc_jscan_value *v)
{
        seen *s = ud;
        int what = (int)v->what;

        if (v->depth < 0 || v->depth > GC_JSCAN_MAX_DEPTH)
                __builtin_trap();
        if ((v->json == NULL) != (v->len > s->max_value))
                __builtin_trap();
        if (s->in && v->json && (v->json < s->in || v->json + v->len > s->in + s->in_len))
                __builtin_trap();
        if (v->json && v->len && v->json[0] != v->first)
                __builtin_trap();
        mix(s, &what, sizeof(what));
        mix(s, &v->index, sizeof(v->index));
        mix(s, &v->depth, sizeof(v->depth));
        mix(s, &v->first, 1);
        mix(s, &v->len, sizeof(v->len));
        if (v->json)
                mix(s, v->json, v->len);
        s->n++;
        return 0;
}

/* Feeds body in pieces of 1..32 bytes chosen by x (or whole, x == 0); returns the result. */
static int run(const char *body, size_t n, size_t max_value, uint32_t x, seen *s, char *err,
               size_t errlen)
{
        gc_jscan js;
        size_t off = 0;
        int r = 0;

        memset(s, 0, sizeof(*s));
        s->h = 0xcbf29ce484222325ULL;
        s->max_value = max_value;
        if (!x) {
                s->in = body;
                s->in_len = n;
        }
        gc_jscan_init(&js, max_value, on_value, s);
        while (r == 0 && off < n) {
                size_t piece = n - off;

                if (x) {
                        x ^= x << 13;
                        x ^= x >> 17;
                        x ^= x << 5;
                        piece = 1 + x % 32;
                        if (piece > n - off)
                                piece = n - off;
                }
                r = gc_jscan_feed(&js, body + off, piece, err, errlen);
                off += piece;
        }
        if (r == 0)
                r = gc_jscan_finish(&js, err, errlen);
        mix(s, &r, sizeof(r));
        mix(s, &js.items, sizeof(js.items));
        mix(s, &js.n_items, sizeof(js.n_items));
        mix(s, &js.depth, sizeof(js.depth));
        gc_jscan_release(&js);
        return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char err_whole[256] = "", err_pieces[256] = "";
        seen whole, pieces;
        size_t max_value;
        int r1, r2;

        if (size < 2)
                return 0;
        /* The first byte chooses the cut, the second the bound on a value's bytes. */
        max_value = data[1] == 255 ? SIZE_MAX : 1 + (size_t)data[1] * 4;
        r1 = run((const char *)data + 2, size - 2, max_value, 0, &whole, err_whole,
                 sizeof(err_whole));
        r2 = run((const char *)data + 2, size - 2, max_value, 0x9e3779b9u ^ data[0], &pieces,
                 err_pieces, sizeof(err_pieces));
        if (r1 != r2 || whole.h != pieces.h || whole.n != pieces.n ||
            strcmp(err_whole, err_pieces) != 0)
                __builtin_trap();
        if (r1 != 0 && r1 != -EINVAL && r1 != -ENOMEM)
                __builtin_trap();
        return 0;
}
