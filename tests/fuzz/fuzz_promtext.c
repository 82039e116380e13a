/* fuzz_promtext: any bytes, cut anywhere, parse the same as whole, in bounded memory, never crash.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "promtext/promtext.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct tally {
        uint64_t samples, labels, hash;
} tally;

static int on_sample(const gc_prom_sample *s, void *userdata)
{
        tally *t = userdata;

        if (s->n_labels > GC_PROM_MAX_LABELS || !s->name[0])
                __builtin_trap();
        t->samples++;
        t->hash = gc_hash(s->name, strlen(s->name), t->hash);
        for (size_t i = 0; i < s->n_labels; i++) {
                if (strlen(s->labels[i].value) != s->labels[i].value_len)
                        __builtin_trap();
                t->labels++;
                t->hash = gc_hash(s->labels[i].name, strlen(s->labels[i].name), t->hash);
                t->hash = gc_hash(s->labels[i].value, s->labels[i].value_len, t->hash);
        }
        if (s->missing && s->value == s->value) /* missing is always NaN */
                __builtin_trap();
        t->hash = gc_hash(&s->value, sizeof(s->value), t->hash);
        t->hash = gc_hash(&s->timestamp_ms, sizeof(s->timestamp_ms), t->hash);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        tally whole = {0, 0, 1}, cut = {0, 0, 1};
        gc_prom_stats ws, cs;
        gc_prom_parser *p;
        unsigned flags;
        size_t step, at = 0;

        if (size < 1)
                return 0;
        /* First byte: the chunk size of the second parse and the format. */
        step = (size_t)(data[0] & 0x3f) + 1;
        flags = data[0] & 0x40 ? GC_PROM_OPENMETRICS : 0;
        data++;
        size--;
        gc_prom_parse((const char *)data, size, 512, flags, on_sample, &whole, &ws);
        p = gc_prom_parser_new(512, flags, on_sample, &cut);
        if (!p)
                return 0;
        while (at < size) {
                size_t n = size - at < step ? size - at : step;

                gc_prom_parser_feed(p, data + at, n);
                at += n;
        }
        gc_prom_parser_finish(p);
        gc_prom_parser_stats(p, &cs);
        gc_prom_parser_free(p);
        if (whole.samples != cut.samples || whole.hash != cut.hash || ws.errors != cs.errors ||
            ws.lines != cs.lines || ws.first_error_line != cs.first_error_line)
                __builtin_trap();
        return 0;
}
