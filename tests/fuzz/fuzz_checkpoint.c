/* fuzz_checkpoint: the checkpoint decoder refuses any bad chunk set with a message, never crashes;
 * the newest-generation restore picks a slot that restores alone. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint/checkpoint.h"
#include "ledger/ledger.h"
#include "util/util.h"

#define SEP       "\n--\n" /* chunks are separated by this line; an empty chunk is a missing one */
#define SLOT_SEP  "\n==\n" /* generation slots (at most GC_CHECKPOINT_GENERATIONS) likewise */
#define MAX_PARTS 16
#define LIMIT     20000 /* small ledger limits keep every input fast */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Keeping label keys: inputs of versions 7 and 8 restore their values (or drop a key not kept). */
static gc_ledger *fresh(gc_strpool **ret_pool)
{
        static const char *const keys[] = {"cost-center", "exp"};
        gc_ledger_opts o = {0};

        *ret_pool = gc_strpool_new(8u << 20);
        if (!*ret_pool)
                return NULL;
        o.pool = *ret_pool;
        o.max_intervals = LIMIT;
        o.max_rollup_rows = LIMIT;
        o.label_keys = keys;
        o.n_label_keys = 2;
        return gc_ledger_new(&o);
}

/* A restored ledger writes itself out again and reads back the same. */
static void roundtrip(const gc_ledger *l, const gc_checkpoint_header *h0)
{
        gc_checkpoint_meta meta = {h0->rvs, h0->n_rvs, h0->generation};
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
        if (gc_checkpoint_encode_meta(l, 0, "fuzz", &meta, 0, &chunks, &n, err, sizeof(err)) < 0)
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
        /* The resume points and generation come back as they were read. */
        if (info.header.n_rvs != h0->n_rvs || info.header.generation != h0->generation ||
            memcmp(info.header.rvs, h0->rvs, sizeof(h0->rvs)) != 0)
                __builtin_trap();
finish:
        gc_checkpoint_info_release(&info);
        gc_checkpoint_chunks_free(chunks, n);
        gc_ledger_free(again);
        gc_strpool_free(pool);
}

/* ... and as an incremental write (a manifest and its parts), likewise. */
static void roundtrip_incr(const gc_ledger *l, const gc_checkpoint_header *h0)
{
        gc_checkpoint_meta meta = {h0->rvs, h0->n_rvs, h0->generation};
        gc_strpool *pool = NULL;
        gc_ledger *again = fresh(&pool);
        gc_checkpoint_info info = {0};
        gc_checkpoint_write w = {0};
        gc_ledger_stats a, b;
        const char **parts = NULL;
        size_t *lens = NULL, n;
        char err[512];

        if (!again)
                goto finish;
        if (gc_checkpoint_encode_incr(l, 0, "fuzz", &meta, 0, &w, err, sizeof(err)) < 0)
                goto finish;
        n = w.n_parts + 1;
        parts = calloc(n, sizeof(*parts));
        lens = calloc(n, sizeof(*lens));
        if (!parts || !lens)
                goto finish;
        /* The manifest last: any order is accepted. */
        for (size_t i = 0; i < w.n_parts; i++) {
                parts[i] = w.parts[i].data.data;
                lens[i] = w.parts[i].data.len;
        }
        parts[n - 1] = w.manifest.data;
        lens[n - 1] = w.manifest.len;
        if (gc_checkpoint_decode(again, parts, lens, n, LIMIT, LIMIT, &info, err, sizeof(err)) < 0)
                __builtin_trap();
        gc_ledger_stats_get(l, &a);
        gc_ledger_stats_get(again, &b);
        if (a.intervals != b.intervals || a.open_intervals != b.open_intervals ||
            a.capacities != b.capacities || a.rollup_rows != b.rollup_rows ||
            a.horizon != b.horizon || info.n_open != a.open_intervals ||
            info.header.version != GC_CHECKPOINT_VERSION_INCR ||
            info.header.generation != h0->generation || info.header.n_rvs != h0->n_rvs ||
            memcmp(info.header.rvs, h0->rvs, sizeof(h0->rvs)) != 0)
                __builtin_trap();
finish:
        free(parts);
        free(lens);
        gc_checkpoint_info_release(&info);
        gc_checkpoint_write_release(&w);
        gc_ledger_free(again);
        gc_strpool_free(pool);
}

/* Splits [p, end) on SEP into parts (an empty part is a missing chunk); returns how many. */
static size_t split(const char *p, const char *end, const char **parts, size_t *lens)
{
        size_t n = 0;

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
        return n;
}

/* Decodes one slot alone into a fresh ledger: 0 and its stats, or < 0. */
static int decode_alone(const char *const *parts, const size_t *lens, size_t n,
                        gc_ledger_stats *ret)
{
        gc_checkpoint_info info = {0};
        gc_strpool *pool = NULL;
        gc_ledger *l = fresh(&pool);
        char err[512];
        int r = -ENOMEM;

        if (l) {
                r = gc_checkpoint_decode(l, parts, lens, n, LIMIT, LIMIT, &info, err, sizeof(err));
                if (r == 0)
                        gc_ledger_stats_get(l, ret);
        }
        gc_checkpoint_info_release(&info);
        gc_ledger_free(l);
        gc_strpool_free(pool);
        return r;
}

/*
 * Input: slots separated by SLOT_SEP, chunks by SEP. Each slot alone is decoded as before; then
 * the newest-generation restore over all slots must restore a slot that restores alone, to the
 * same ledger, or fail with a message (and -EINVAL only when no slot restores alone).
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *parts[GC_CHECKPOINT_GENERATIONS][MAX_PARTS];
        size_t lens[GC_CHECKPOINT_GENERATIONS][MAX_PARTS], n[GC_CHECKPOINT_GENERATIONS] = {0};
        int alone[GC_CHECKPOINT_GENERATIONS];
        gc_ledger_stats st[GC_CHECKPOINT_GENERATIONS], got;
        gc_checkpoint_slot slots[GC_CHECKPOINT_GENERATIONS];
        const char *p = (const char *)data, *end = p + size;
        gc_checkpoint_info info = {0};
        gc_checkpoint_header h;
        gc_strpool *pool = NULL;
        gc_ledger *l = NULL;
        size_t n_slots = 0, slot = 0, refused = 0;
        char err[1024];
        int r, any_alone = 0;

        memset(st, 0, sizeof(st));
        while (n_slots < GC_CHECKPOINT_GENERATIONS) {
                const char *sep = memmem(p, (size_t)(end - p), SLOT_SEP, strlen(SLOT_SEP));
                const char *stop = sep ? sep : end;

                if (n_slots + 1 == GC_CHECKPOINT_GENERATIONS)
                        stop = end;
                n[n_slots] = split(p, stop, parts[n_slots], lens[n_slots]);
                n_slots++;
                if (!sep || stop == end)
                        break;
                p = sep + strlen(SLOT_SEP);
        }
        for (size_t s = 0; s < n_slots; s++) {
                for (size_t i = 0; i < n[s]; i++) {
                        err[0] = '\0';
                        if (parts[s][i] &&
                            gc_checkpoint_peek(parts[s][i], lens[s][i], &h, err, sizeof(err)) < 0 &&
                            !err[0])
                                __builtin_trap();
                }
                alone[s] = decode_alone(parts[s], lens[s], n[s], &st[s]) == 0;
                any_alone |= alone[s];
        }

        /* Slot 0 alone, with the checks of a restore and a write-out again. */
        l = fresh(&pool);
        if (!l)
                goto finish;
        err[0] = '\0';
        r = gc_checkpoint_decode(l, parts[0], lens[0], n[0], LIMIT, LIMIT, &info, err, sizeof(err));
        /* Either a restored ledger or a message saying what was wrong. */
        if (r < 0 && !err[0])
                __builtin_trap();
        if (r == 0) {
                roundtrip(l, &info.header);
                roundtrip_incr(l, &info.header);
        }
        gc_checkpoint_info_release(&info);
        gc_ledger_free(l);
        gc_strpool_free(pool);

        /* The newest complete generation among the slots. */
        l = fresh(&pool);
        if (!l)
                goto finish;
        for (size_t s = 0; s < n_slots; s++) {
                slots[s].chunks = parts[s];
                slots[s].lens = lens[s];
                slots[s].n = n[s];
        }
        err[0] = '\0';
        r = gc_checkpoint_decode_newest(l, slots, n_slots, LIMIT, LIMIT, &info, &slot, &refused,
                                        err, sizeof(err));
        if (r < 0 && !err[0])
                __builtin_trap();
        if (r == 0) {
                gc_ledger_stats_get(l, &got);
                if (slot >= n_slots || !alone[slot] || got.intervals != st[slot].intervals ||
                    got.capacities != st[slot].capacities ||
                    got.rollup_rows != st[slot].rollup_rows || got.horizon != st[slot].horizon ||
                    refused >= n_slots)
                        __builtin_trap();
        } else if (r == -EINVAL && any_alone) {
                __builtin_trap(); /* a complete generation existed and was not restored */
        }
finish:
        gc_checkpoint_info_release(&info);
        gc_ledger_free(l);
        gc_strpool_free(pool);
        return 0;
}
