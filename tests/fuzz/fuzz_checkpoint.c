/* fuzz_checkpoint: the checkpoint decoder refuses any bad chunk set with a message, never crashes.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "checkpoint/checkpoint.h"
#include "ledger/ledger.h"
#include "util/util.h"

#define SEP       "\n--\n" /* chunks are separated by this line; an empty chunk is a missing one */
#define MAX_PARTS 16
#define LIMIT     20000 /* small ledger limits keep every input fast */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gc_ledger *fresh(gc_strpool **ret_pool)
{
        gc_ledger_opts o = {0};

        *ret_pool = gc_strpool_new(8u << 20);
        if (!*ret_pool)
                return NULL;
        o.pool = *ret_pool;
        o.max_intervals = LIMIT;
        o.max_rollup_rows = LIMIT;
        return gc_ledger_new(&o);
}

/* A restored ledger writes itself out again and reads back the same. */
static void roundtrip(const gc_ledger *l)
{
        gc_strpool *pool = NULL;
        gc_ledger *again = fresh(&pool);
        gc_checkpoint_info info = {0};
        gc_ledger_stats a, b;
        const char *parts[GC_CHECKPOINT_MAX_CHUNKS];
        size_t lens[GC_CHECKPOINT_MAX_CHUNKS], n = 0;
        gc_buf *chunks = NULL;
        char err[512];

        if (!again)
                goto finish;
        if (gc_checkpoint_encode(l, 0, "fuzz", 0, &chunks, &n, err, sizeof(err)) < 0)
                goto finish; /* e.g. a string the encoder bounds more tightly: allowed */
        for (size_t i = 0; i < n; i++) {
                parts[i] = chunks[i].data;
                lens[i] = chunks[i].len;
        }
        if (gc_checkpoint_decode(again, parts, lens, n, LIMIT, LIMIT, &info, err, sizeof(err)) < 0)
                __builtin_trap();
        gc_ledger_stats_get(l, &a);
        gc_ledger_stats_get(again, &b);
        if (a.intervals != b.intervals || a.open_intervals != b.open_intervals ||
            a.capacities != b.capacities || a.rollup_rows != b.rollup_rows ||
            a.horizon != b.horizon || info.n_open != a.open_intervals)
                __builtin_trap();
finish:
        gc_checkpoint_info_release(&info);
        gc_checkpoint_chunks_free(chunks, n);
        gc_ledger_free(again);
        gc_strpool_free(pool);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *parts[MAX_PARTS];
        size_t lens[MAX_PARTS], n = 0;
        const char *p = (const char *)data, *end = p + size;
        gc_checkpoint_info info = {0};
        gc_checkpoint_header h;
        gc_strpool *pool = NULL;
        gc_ledger *l = fresh(&pool);
        char err[512];
        int r;

        if (!l)
                goto finish;
        while (n < MAX_PARTS) {
                const char *sep = memmem(p, (size_t)(end - p), SEP, strlen(SEP));
                const char *stop = sep ? sep : end;

                parts[n] = stop > p ? p : NULL;
                lens[n] = (size_t)(stop - p);
                n++;
                if (!sep)
                        break;
                p = sep + strlen(SEP);
        }
        for (size_t i = 0; i < n; i++) {
                err[0] = '\0';
                if (parts[i] && gc_checkpoint_peek(parts[i], lens[i], &h, err, sizeof(err)) < 0 &&
                    !err[0])
                        __builtin_trap();
        }
        err[0] = '\0';
        r = gc_checkpoint_decode(l, parts, lens, n, LIMIT, LIMIT, &info, err, sizeof(err));
        /* Either a restored ledger or a message saying what was wrong. */
        if (r < 0 && !err[0])
                __builtin_trap();
        if (r == 0)
                roundtrip(l);
finish:
        gc_checkpoint_info_release(&info);
        gc_ledger_free(l);
        gc_strpool_free(pool);
        return 0;
}
