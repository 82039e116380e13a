/* capruns: folded node capacity as runs of equal buckets, one run per node and change
 * (docs/ledger.md, "Hourly rollups and fold"). */
#include "ledger_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct gc__crun_key {
        const gc_ledger *l;
        const char *node;
} gc__crun_key;

static int gc__crun_eq(const void *ctx, size_t ix)
{
        const gc__crun_key *k = ctx;

        return k->l->crun[ix].node == k->node;
}

static int64_t gc__crun_end(const gc_ledger *l, const gc__crun *r)
{
        return r->first + r->n * l->bucket;
}

int gc__crun_reserve(gc_ledger *l, size_t more)
{
        if (gc__vec_reserve((void **)&l->crun, &l->cap_crun, l->n_crun + more, sizeof(*l->crun)) <
                0 ||
            gc_index_reserve(&l->crun_ix, l->n_crun + more) < 0)
                return -ENOMEM;
        return 0;
}

/*
 * Adds n buckets of the same figures from bucket `first` on: the node's latest run grows when
 * they follow it with the same figures, else a new run becomes the node's latest. Room must
 * have been reserved.
 */
void gc__crun_add(gc_ledger *l, const char *node, const char *model, const char *capacity_type,
                  int64_t first, int64_t n, double geq_seconds, double cost)
{
        gc__crun_key k = {l, node};
        uint32_t h = gc_hash_fin(gc_hash_ptr(0, node));
        gc__crun *r;
        size_t pos;

        if (gc_index_find(&l->crun_ix, h, gc__crun_eq, &k, &pos)) {
                r = &l->crun[gc_index_row(&l->crun_ix, pos)];
                if (gc__crun_end(l, r) == first && r->model == model &&
                    r->capacity_type == capacity_type && r->geq_seconds == geq_seconds &&
                    r->cost == cost) {
                        r->n += n;
                        return;
                }
                gc_index_set_row(&l->crun_ix, pos, l->n_crun);
        } else {
                gc_index_fill(&l->crun_ix, pos, h, l->n_crun);
        }
        r = &l->crun[l->n_crun++];
        r->node = node;
        r->model = model;
        r->capacity_type = capacity_type;
        r->first = first;
        r->n = n;
        r->geq_seconds = geq_seconds;
        r->cost = cost;
}

/*
 * Folds a node's capacity over [c->start, end) from bucket `first` on: a partial first bucket,
 * the whole buckets, a partial last bucket, each bucket's figures what an hourly row held.
 * At most three runs: reserve them first.
 */
void gc__crun_fold(gc_ledger *l, const gc__cap *c, int64_t end, int64_t first)
{
        int64_t b = l->bucket, h = gc__floor_bucket(c->start, b);

        if (c->geq <= 0)
                return;
        if (h < first)
                h = first;
        while (h < end) {
                int64_t lo = c->start > h ? c->start : h;
                int64_t hi = end < h + b ? end : h + b;
                int64_t n = 1;
                double gs;

                if (hi <= lo) {
                        h += b;
                        continue;
                }
                if (lo == h && hi == h + b)
                        n = (gc__floor_bucket(end, b) - h) / b;
                gs = (double)(n > 1 ? b : hi - lo) * c->geq;
                gc__crun_add(l, c->node, c->model, c->capacity_type, h, n, gs,
                             gs / 3600.0 * c->price_per_gpu_hour);
                h += n * b;
        }
}

/* Rebuilds the node index: each node's latest run is the one starting last. */
static void gc__crun_reindex(gc_ledger *l)
{
        gc_index_clear(&l->crun_ix);
        for (size_t i = 0; i < l->n_crun; i++) {
                gc__crun_key k = {l, l->crun[i].node};
                uint32_t h = gc_hash_fin(gc_hash_ptr(0, l->crun[i].node));
                size_t pos;

                if (!gc_index_find(&l->crun_ix, h, gc__crun_eq, &k, &pos))
                        gc_index_fill(&l->crun_ix, pos, h, i);
                else if (l->crun[gc_index_row(&l->crun_ix, pos)].first <= l->crun[i].first)
                        gc_index_set_row(&l->crun_ix, pos, i);
        }
}

/* Drops the buckets before `first` (a bucket's edge). */
void gc__crun_drop_old(gc_ledger *l, int64_t first)
{
        size_t n = 0;
        int changed = 0;

        for (size_t i = 0; i < l->n_crun; i++) {
                gc__crun r = l->crun[i];

                if (gc__crun_end(l, &r) <= first) {
                        changed = 1;
                        continue;
                }
                if (r.first < first) {
                        r.n -= (first - r.first) / l->bucket;
                        r.first = first;
                        changed = 1;
                }
                l->crun[n++] = r;
        }
        l->n_crun = n;
        if (changed)
                gc__crun_reindex(l);
}

int gc__crun_visit(const gc_ledger *l, int (*fn)(void *ud, const gc_capacity_rollup *r), void *ud)
{
        for (size_t i = 0; fn && i < l->n_crun; i++) {
                const gc__crun *cr = &l->crun[i];

                for (int64_t k = 0; k < cr->n; k++) {
                        gc_capacity_rollup o = {
                            cr->first + k * l->bucket, cr->node,        cr->model,
                            cr->capacity_type,         cr->geq_seconds, cr->cost};
                        int r = fn(ud, &o);

                        if (r != 0)
                                return r;
                }
        }
        return 0;
}

int gc__crun_clone(gc_ledger *c, const gc_ledger *l)
{
        c->crun = NULL;
        c->crun_ix.s = NULL;
        c->n_crun = c->cap_crun = 0;
        if (l->n_crun) {
                c->crun = malloc(l->n_crun * sizeof(*c->crun));
                if (!c->crun)
                        return -ENOMEM;
                memcpy(c->crun, l->crun, l->n_crun * sizeof(*c->crun));
                c->n_crun = c->cap_crun = l->n_crun;
        }
        return gc_index_dup(&c->crun_ix, &l->crun_ix);
}
