/* The usage basis: shared GPUs split by measured use, kept as adjustments (docs/ledger.md). */
#include "ledger_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *gc_basis_name(gc_basis b)
{
        return b == GC_BASIS_USAGE ? "usage" : "allocation";
}

int gc_basis_parse(const char *s, size_t n, gc_basis *ret)
{
        if (!s || !ret)
                return -EINVAL;
        if (n == 10 && memcmp(s, "allocation", 10) == 0)
                *ret = GC_BASIS_ALLOCATION;
        else if (n == 5 && memcmp(s, "usage", 5) == 0)
                *ret = GC_BASIS_USAGE;
        else
                return -EINVAL;
        return 0;
}

#define GC__ADJ_KEY_MAX 512 /* "<interval key>#use<bucket>" */

/* One interval key of a holder within a bucket's span: what it was allocated there. */
typedef struct gc__piece {
        const char *key;           /* the interval's (the ledger's string) */
        int64_t lo, hi;            /* its part of the span */
        double alloc;              /* allocation cost of that part */
        char adj[GC__ADJ_KEY_MAX]; /* its adjustment's key in the bucket being split */
} gc__piece;

static int gc__adj_key(const char *key, int64_t bucket, char out[GC__ADJ_KEY_MAX])
{
        int n = snprintf(out, GC__ADJ_KEY_MAX, "%s#use%lld", key, (long long)bucket);

        return n > 0 && n < GC__ADJ_KEY_MAX ? 0 : -EINVAL;
}

/* The part of [lo, hi) an interval held, and its allocation cost; 0 when none. */
static int gc__piece_of(const gc_ledger *l, const char *key, int64_t lo, int64_t hi, gc__piece *p)
{
        const gc__iv *v = gc__iv_find(l, key);
        int64_t end;

        if (!v || (v->flags & GC_USAGE_F_ADJUST) || v->geq <= 0)
                return 0;
        end = v->end == GC_OPEN ? hi : v->end;
        p->lo = v->start > lo ? v->start : lo;
        p->hi = end < hi ? end : hi;
        if (p->hi <= p->lo)
                return 0;
        p->key = v->uid;
        p->alloc = (double)(p->hi - p->lo) * v->geq / 3600.0 * v->price_per_gpu_hour;
        return 1;
}

/* Adds what moved to an interval's part of one bucket into its adjustment there. */
static int gc__adjust(gc_ledger *l, const gc__piece *p, double adj)
{
        gc__iv *v = gc__iv_find(l, p->adj);
        const gc__iv *of;
        gc_usage a;

        if (v) { /* in place: its key, dimensions and flags stay */
                v->use.adj += adj;
                v->use.covered += p->alloc;
                if (v->use.covered + v->use.adj < 0) /* rounding: a share is never below 0 */
                        v->use.adj = -v->use.covered;
                if (p->lo < v->start)
                        v->start = p->lo;
                if (p->hi > v->end)
                        v->end = p->hi;
                return 0;
        }
        of = gc__iv_find(l, p->key);
        if (!of)
                return -ENOENT;
        memset(&a, 0, sizeof(a));
        memcpy(a.dims, of->dims, sizeof(a.dims));
        if (l->n_label_keys)
                memcpy(a.labels, l->lbl[of->lbl].v, sizeof(a.labels));
        a.pod_uid = p->adj;
        a.start = p->lo;
        a.end = p->hi;
        a.flags = GC_USAGE_F_ADJUST;
        a.adj_cost = adj;
        a.covered_cost = p->alloc;
        if (a.covered_cost + a.adj_cost < 0)
                a.adj_cost = -a.covered_cost;
        return gc_ledger_put_usage(l, &a);
}

/* Whether a piece's span was split already (a replayed sample: Prometheus asked again after a
 * restart): its adjustment in the bucket reaches past the span's start. */
static int gc__already(const gc_ledger *l, const gc__piece *p)
{
        const gc__iv *a = gc__iv_find(l, p->adj);

        return a && a->end > p->lo;
}

/* New adjustment records a bucket's split would add. */
static size_t gc__adj_missing(const gc_ledger *l, const gc__piece *pc, size_t n)
{
        size_t missing = 0;

        for (size_t i = 0; i < n; i++)
                missing += pc[i].alloc > 0 && !gc__iv_find(l, pc[i].adj);
        return missing;
}

static int gc__holders_valid(const gc_use_holder *h, size_t n)
{
        if (!h || n > GC_LEDGER_MAX_HOLDERS)
                return 0;
        for (size_t i = 0; i < n; i++) {
                if (!isfinite(h[i].use) || h[i].use < 0 || !h[i].keys ||
                    h[i].n_keys > GC_LEDGER_MAX_SHARE_KEYS)
                        return 0;
                for (size_t k = 0; k < h[i].n_keys; k++)
                        if (!h[i].keys[k] || !*h[i].keys[k])
                                return 0;
        }
        return 1;
}

/*
 * One bucket's span [lo, hi): the pieces of every holder, then each holder's share of the pot
 * (their allocation cost together) by measured use x time held, kept as adjustments.
 */
static int gc__split_span(gc_ledger *l, int64_t bucket, int64_t lo, int64_t hi,
                          const gc_use_holder *h, size_t n, gc__piece *pc, size_t *first,
                          double *alloc, double *weight)
{
        size_t np = 0, holding = 0;
        double pot = 0, w = 0;
        int r = 0;

        for (size_t i = 0; i < n; i++) {
                double held = 0;

                first[i] = np;
                alloc[i] = 0;
                for (size_t k = 0; k < h[i].n_keys; k++) {
                        if (!gc__piece_of(l, h[i].keys[k], lo, hi, &pc[np]))
                                continue;
                        if (gc__adj_key(pc[np].key, bucket, pc[np].adj) < 0)
                                return -EINVAL;
                        alloc[i] += pc[np].alloc;
                        held += (double)(pc[np].hi - pc[np].lo);
                        np++;
                }
                weight[i] = h[i].use * held;
                holding += alloc[i] > 0;
                pot += alloc[i];
                w += weight[i];
        }
        first[n] = np;
        /* One holder alone pays what it held, measured or not: nothing to record. */
        if (holding < 2)
                return 0;
        /* Spans are split once: a sample seen again changes nothing (each holder's pieces were
         * split together, so one is enough to tell). */
        for (size_t k = 0; k < np; k++)
                if (gc__already(l, &pc[k]))
                        return 0;
        if (l->n_iv + gc__adj_missing(l, pc, np) > l->max_intervals)
                return -E2BIG;
        for (size_t i = 0; i < n && r == 0; i++) {
                /* No use measured at all: the span stays split by allocation, but measured. */
                double share = w > 0 ? pot * weight[i] / w : alloc[i];
                double moved = share - alloc[i];

                for (size_t k = first[i]; k < first[i + 1] && r == 0; k++)
                        r = gc__adjust(l, &pc[k], moved * pc[k].alloc / alloc[i]);
        }
        return r;
}

int gc_ledger_split_by_use(gc_ledger *l, int64_t from, int64_t to, const gc_use_holder *h, size_t n)
{
        size_t n_keys = 0, *first = NULL;
        gc__piece *pc = NULL;
        double *alloc = NULL, *weight = NULL;
        int r = 0;

        if (!l || from < 0 || to <= from || to > GC__TIME_MAX || !gc__holders_valid(h, n))
                return -EINVAL;
        if (from < l->horizon)
                from = l->horizon; /* closed books */
        if (from >= to || n < 2)
                return 0;
        for (size_t i = 0; i < n; i++)
                n_keys += h[i].n_keys;
        pc = calloc(n_keys ? n_keys : 1, sizeof(*pc));
        first = calloc(n + 1, sizeof(*first));
        alloc = calloc(n, sizeof(*alloc));
        weight = calloc(n, sizeof(*weight));
        if (!pc || !first || !alloc || !weight)
                r = -ENOMEM;
        for (int64_t b = gc__floor_bucket(from, l->bucket); r == 0 && b < to; b += l->bucket) {
                int64_t lo = from > b ? from : b;
                int64_t hi = to < b + l->bucket ? to : b + l->bucket;

                r = gc__split_span(l, b, lo, hi, h, n, pc, first, alloc, weight);
        }
        free(pc);
        free(first);
        free(alloc);
        free(weight);
        return r;
}
