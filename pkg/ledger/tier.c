/* tier: period history, the spend of every local day, ISO week and month by group, with its
 * top pods by name, filled as intervals fold (docs/ledger.md, "Period history"). */
#include "ledger_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const gc_tz_unit gc__units[] = {GC_TZ_DAY, GC_TZ_WEEK, GC_TZ_MONTH};
#define GC__N_UNITS (sizeof(gc__units) / sizeof(gc__units[0]))

/* ---- periods -------------------------------------------------------------------------------- */

typedef struct gc__rest_key {
        const gc__period *p;
        const char *const *dims;
        uint32_t lbl;
} gc__rest_key;

static int gc__rest_eq(const void *ctx, size_t ix)
{
        const gc__rest_key *k = ctx;

        return k->p->rest[ix].lbl == k->lbl &&
               memcmp(k->p->rest[ix].dims, k->dims, sizeof(k->p->rest[ix].dims)) == 0;
}

static uint32_t gc__dims_hash(const char *const dims[GC_DIM_COUNT], uint32_t lbl)
{
        uint64_t h = lbl;

        for (size_t d = 0; d < GC_DIM_COUNT; d++)
                h = gc_hash_ptr(h, dims[d]);
        return gc_hash_fin(h);
}

static void gc__period_release(gc__period *p)
{
        free(p->rest);
        gc_index_free(&p->rest_ix);
        free(p->top);
        free(p->nodes);
        gc_index_free(&p->nodes_ix);
        memset(p, 0, sizeof(*p));
}

/* Lets go of a period: the last ledger holding it frees it. */
static void gc__period_unref(gc__period *p)
{
        if (atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1) {
                gc__period_release(p);
                free(p);
        }
}

void gc__tier_free(gc_ledger *l)
{
        for (size_t i = 0; i < l->n_per; i++)
                gc__period_unref(l->per[i]);
        free(l->per);
        l->per = NULL;
        l->n_per = l->cap_per = 0;
        l->n_prows = 0;
}

/* Periods are kept sorted by start, then unit: the position of (start, unit), found or not. */
static size_t gc__period_pos(const gc_ledger *l, int64_t start, int unit, int *found)
{
        size_t lo = 0, hi = l->n_per;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const gc__period *p = l->per[mid];

                if (p->start < start || (p->start == start && p->unit < unit))
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = lo < l->n_per && l->per[lo]->start == start && l->per[lo]->unit == unit;
        return lo;
}

const gc__period *gc__tier_find(const gc_ledger *l, int64_t start, int64_t end)
{
        for (size_t u = 0; u < GC__N_UNITS; u++) {
                int found;
                size_t pos = gc__period_pos(l, start, (int)gc__units[u], &found);

                if (found && l->per[pos]->end == end && start >= l->period_since)
                        return l->per[pos];
        }
        return NULL;
}

/* A copy of s that only its new holder holds, or NULL. */
static gc__period *gc__period_dup(const gc__period *s)
{
        gc__period *d = calloc(1, sizeof(*d));

        if (!d)
                return NULL;
        d->start = s->start;
        d->end = s->end;
        d->unit = s->unit;
        d->dirty = s->dirty;
        atomic_init(&d->refs, 1);
        if ((s->n_rest && !(d->rest = malloc(s->n_rest * sizeof(*d->rest)))) ||
            (s->n_top && !(d->top = malloc(s->n_top * sizeof(*d->top)))) ||
            (s->n_nodes && !(d->nodes = malloc(s->n_nodes * sizeof(*d->nodes)))) ||
            gc_index_dup(&d->rest_ix, &s->rest_ix) < 0 ||
            gc_index_dup(&d->nodes_ix, &s->nodes_ix) < 0) {
                gc__period_release(d);
                free(d);
                return NULL;
        }
        d->n_rest = d->cap_rest = s->n_rest;
        d->n_top = d->cap_top = s->n_top;
        d->n_nodes = d->cap_nodes = s->n_nodes;
        if (s->n_rest)
                memcpy(d->rest, s->rest, s->n_rest * sizeof(*d->rest));
        if (s->n_top)
                memcpy(d->top, s->top, s->n_top * sizeof(*d->top));
        if (s->n_nodes)
                memcpy(d->nodes, s->nodes, s->n_nodes * sizeof(*d->nodes));
        return d;
}

/*
 * The period at ix for the ledger to change: itself when the ledger holds it alone, else a copy
 * put in its place (a clone keeps the original). Only the ledger's owner makes clones, so a
 * count of 1 cannot rise meanwhile. NULL when out of memory.
 */
static gc__period *gc__period_own(gc_ledger *l, size_t ix)
{
        gc__period *p = l->per[ix], *d;

        if (atomic_load_explicit(&p->refs, memory_order_acquire) == 1)
                return p;
        d = gc__period_dup(p);
        if (!d)
                return NULL;
        gc__period_unref(p);
        l->per[ix] = d;
        return d;
}

/* The index of the period (start, unit), made when new (the ledger's own). -ENOMEM. */
static int gc__period_get(gc_ledger *l, int unit, int64_t start, int64_t end, size_t *ret)
{
        int found;
        size_t pos = gc__period_pos(l, start, unit, &found);
        gc__period *p;

        if (!found) {
                if (gc__vec_reserve((void **)&l->per, &l->cap_per, l->n_per + 1,
                                    sizeof(gc__period *)) < 0)
                        return -ENOMEM;
                p = calloc(1, sizeof(*p));
                if (!p)
                        return -ENOMEM;
                p->unit = unit;
                p->start = start;
                p->end = end;
                atomic_init(&p->refs, 1);
                memmove(&l->per[pos + 1], &l->per[pos], (l->n_per - pos) * sizeof(gc__period *));
                l->per[pos] = p;
                l->n_per++;
        }
        *ret = pos;
        return 0;
}

/* The period (start, unit), made when new, the ledger's own to change; NULL: -ENOMEM. */
static gc__period *gc__period_mut(gc_ledger *l, int unit, int64_t start, int64_t end)
{
        size_t ix;

        return gc__period_get(l, unit, start, end, &ix) < 0 ? NULL : gc__period_own(l, ix);
}

/* Room for `rest` more rows of the rest and one more top pod in the period. */
static int gc__period_reserve(gc_ledger *l, gc__period *p, size_t rest)
{
        if (gc__vec_reserve((void **)&p->rest, &p->cap_rest, p->n_rest + rest, sizeof(*p->rest)) <
                0 ||
            gc_index_reserve(&p->rest_ix, p->n_rest + rest) < 0)
                return -ENOMEM;
        if (p->n_top < l->top_n &&
            gc__vec_reserve((void **)&p->top, &p->cap_top, p->n_top + 1, sizeof(*p->top)) < 0)
                return -ENOMEM;
        return 0;
}

/* Adds into the period's row of the rest of the same dimensions; room must be reserved. */
static void gc__rest_add(gc_ledger *l, gc__period *p, const char *const dims[GC_DIM_COUNT],
                         uint32_t lbl, double gs, double cost, gc__use use, uint32_t pods,
                         uint32_t estimates)
{
        const char *key[GC_DIM_COUNT];
        gc__rest_key k = {p, key, lbl};
        gc__prow *row;
        size_t pos;
        uint32_t h;

        memcpy(key, dims, sizeof(key));
        key[GC_DIM_NODE] = l->empty; /* the rest forgets nodes, and pods by name */
        key[GC_DIM_POD] = l->folded_pod;
        h = gc__dims_hash(key, lbl);
        if (gc_index_find(&p->rest_ix, h, gc__rest_eq, &k, &pos)) {
                row = &p->rest[gc_index_row(&p->rest_ix, pos)];
        } else {
                row = &p->rest[p->n_rest];
                memset(row, 0, sizeof(*row));
                memcpy(row->dims, key, sizeof(key));
                row->lbl = lbl;
                gc_index_fill(&p->rest_ix, pos, h, p->n_rest);
                p->n_rest++;
                l->n_prows++;
        }
        row->gpu_seconds += gs;
        row->cost += cost;
        gc__use_add(&row->use, use);
        row->pods += pods;
        row->estimates += estimates;
}

/* Whether a ranks below b (is the first to leave the top): less cost, GPU-seconds, then uid. */
static int gc__top_below(const gc__prow *a, const gc__prow *b)
{
        if (a->cost != b->cost)
                return a->cost < b->cost;
        if (a->gpu_seconds != b->gpu_seconds)
                return a->gpu_seconds < b->gpu_seconds;
        return strcmp(a->uid, b->uid) > 0;
}

/*
 * Offers one pod's figures in the period to its top: added to the pod's entry, or a new entry
 * while there is room, or in place of the lowest entry it beats (which goes to the rest), else
 * to the rest. Room must be reserved (one top slot, two rest rows).
 */
static void gc__top_offer(gc_ledger *l, gc__period *p, const gc__prow *in)
{
        size_t low = 0;

        for (size_t i = 0; i < p->n_top; i++) {
                if (p->top[i].uid == in->uid) {
                        p->top[i].gpu_seconds += in->gpu_seconds;
                        p->top[i].cost += in->cost;
                        gc__use_add(&p->top[i].use, in->use);
                        p->top[i].pods += in->pods;
                        p->top[i].estimates += in->estimates;
                        return;
                }
                if (gc__top_below(&p->top[i], &p->top[low]))
                        low = i;
        }
        if (p->n_top < l->top_n) {
                p->top[p->n_top++] = *in;
                l->n_prows++;
                return;
        }
        if (p->n_top == 0 || !gc__top_below(&p->top[low], in)) {
                gc__rest_add(l, p, in->dims, in->lbl, in->gpu_seconds, in->cost, in->use, in->pods,
                             in->estimates);
                return;
        }
        gc__rest_add(l, p, p->top[low].dims, p->top[low].lbl, p->top[low].gpu_seconds,
                     p->top[low].cost, p->top[low].use, p->top[low].pods, p->top[low].estimates);
        p->top[low] = *in;
}

/* The uid a pod's pieces share: the key up to '#' (a DRA piece is "<uid>#dra<i>"). */
static const char *gc__base_uid(const gc_ledger *l, const char *uid)
{
        const char *hash = strchr(uid, '#');

        return hash ? gc_strpool_intern(l->pool, uid, (size_t)(hash - uid)) : uid;
}

/* ---- folding into periods ------------------------------------------------------------------- */

/* Calls fn for every period of every unit that [start, end) overlaps and that is kept. */
typedef int (*gc__period_fn)(gc_ledger *l, int unit, int64_t ps, int64_t pe, void *ud);

static int gc__each_period(gc_ledger *l, int64_t start, int64_t end, int64_t keep_since,
                           gc__period_fn fn, void *ud)
{
        for (size_t u = 0; u < GC__N_UNITS; u++) {
                int64_t ps = gc_tz_period_start(l->tz, gc__units[u], start);

                while (ps < end) {
                        int64_t pe = gc_tz_period_add(l->tz, gc__units[u], ps, 1);
                        int r;

                        if (pe <= ps)
                                return -EINVAL; /* a calendar that does not move on */
                        if (pe > keep_since && ps >= l->period_since) {
                                r = fn(l, (int)gc__units[u], ps, pe, ud);
                                if (r < 0)
                                        return r;
                        }
                        ps = pe;
                }
        }
        return 0;
}

typedef struct gc__fold_ctx {
        const gc__iv *v;
        const char *base;
        size_t need; /* rows the fold may add, at most */
} gc__fold_ctx;

static int gc__prepare_one(gc_ledger *l, int unit, int64_t ps, int64_t pe, void *ud)
{
        gc__fold_ctx *c = ud;
        gc__period *p = gc__period_mut(l, unit, ps, pe);

        c->need += 2;
        return p ? gc__period_reserve(l, p, 2) : -ENOMEM;
}

static int gc__add_one(gc_ledger *l, int unit, int64_t ps, int64_t pe, void *ud)
{
        const gc__fold_ctx *c = ud;
        const gc__iv *v = c->v;
        int64_t lo = v->start > ps ? v->start : ps;
        int64_t hi = v->end < pe ? v->end : pe;
        gc__prow in;
        size_t ix;
        int found;

        if (hi <= lo)
                return 0;
        ix = gc__period_pos(l, ps, unit, &found);
        if (!found)
                return -EINVAL; /* prepared above: cannot happen */
        l->per[ix]->dirty = 1;  /* made the ledger's own above */
        memset(&in, 0, sizeof(in));
        memcpy(in.dims, v->dims, sizeof(in.dims));
        in.lbl = v->lbl;
        in.uid = c->base;
        in.gpu_seconds = (double)(hi - lo) * v->geq;
        in.cost = in.gpu_seconds / 3600.0 * v->price_per_gpu_hour;
        if (v->flags & GC_USAGE_F_ADJUST) {
                double part = (double)(hi - lo) / (double)(v->end - v->start);

                in.use.adj = v->use.adj * part;
                in.use.covered = v->use.covered * part;
                gc__top_offer(l, l->per[ix], &in); /* no pod of its own: the pod's figures */
                return 0;
        }
        /* A later piece of a pod counts the pod only in a period no earlier piece reaches. */
        in.pods = !(v->flags & GC_USAGE_F_PART) || v->start <= ps;
        in.estimates = in.pods && (v->flags & GC_USAGE_F_ESTIMATE);
        gc__top_offer(l, l->per[ix], &in);
        return 0;
}

static size_t gc__tier_rows(const gc_ledger *l)
{
        size_t n = 0;

        for (size_t i = 0; i < l->n_per; i++)
                n += l->per[i]->n_rest + l->per[i]->n_top + l->per[i]->n_nodes;
        return n;
}

int gc__tier_fold(gc_ledger *l, const gc__iv *v, int64_t keep_since)
{
        gc__fold_ctx c = {v, NULL, 0};
        int r;

        c.base = gc__base_uid(l, v->uid);
        if (!c.base)
                return -ENOMEM;
        /* Every allocation first, so the interval goes into every period or none. */
        r = gc__each_period(l, v->start, v->end, keep_since, gc__prepare_one, &c);
        if (r < 0)
                return r;
        if (c.need > l->max_rollup_rows || l->n_prows > l->max_rollup_rows - c.need)
                return -E2BIG;
        return gc__each_period(l, v->start, v->end, keep_since, gc__add_one, &c);
}

void gc__tier_drop_old(gc_ledger *l, int64_t keep_since)
{
        size_t n = 0;

        for (size_t i = 0; i < l->n_per; i++) {
                if (l->per[i]->end <= keep_since)
                        gc__period_unref(l->per[i]);
                else
                        l->per[n++] = l->per[i];
        }
        l->n_per = n;
        l->n_prows = gc__tier_rows(l);
}

/* ---- compaction: a closed period names its top workloads, sums the rest ---------------------- */

typedef struct gc__wl {
        const char *wl;
        double cost;
        int keep;
} gc__wl;

static int gc__wl_by_ptr(const void *a, const void *b)
{
        uintptr_t x = (uintptr_t)((const gc__wl *)a)->wl, y = (uintptr_t)((const gc__wl *)b)->wl;

        return x < y ? -1 : x > y;
}

static int gc__wl_by_cost(const void *a, const void *b)
{
        const gc__wl *x = a, *y = b;

        if (x->cost != y->cost)
                return x->cost > y->cost ? -1 : 1;
        return strcmp(x->wl, y->wl);
}

static gc__wl *gc__wl_find(gc__wl *w, size_t n, const char *wl)
{
        gc__wl key = {wl, 0, 0};

        return bsearch(&key, w, n, sizeof(*w), gc__wl_by_ptr);
}

/*
 * The period's workloads (from the rest and the top pods) with their cost, sorted by pointer,
 * those to keep by name marked: the top_n dearest, those of its top pods, and those of intervals
 * not folded yet that reach into it (they may still add to it). NULL when out of memory.
 */
static gc__wl *gc__wl_ranked(const gc_ledger *l, const gc__period *p, size_t *ret_n)
{
        size_t n = 0, m = 0, k;
        gc__wl *w = malloc((p->n_rest + p->n_top + 1) * sizeof(*w));

        if (!w)
                return NULL;
        for (size_t i = 0; i < p->n_rest + p->n_top; i++) {
                const gc__prow *r = i < p->n_rest ? &p->rest[i] : &p->top[i - p->n_rest];

                w[n].wl = r->dims[GC_DIM_WORKLOAD];
                w[n].cost = r->cost;
                w[n++].keep = i >= p->n_rest;
        }
        qsort(w, n, sizeof(*w), gc__wl_by_ptr);
        for (size_t i = 0; i < n; i++) {
                if (m && w[m - 1].wl == w[i].wl) {
                        w[m - 1].cost += w[i].cost;
                        w[m - 1].keep |= w[i].keep;
                } else {
                        w[m++] = w[i];
                }
        }
        qsort(w, m, sizeof(*w), gc__wl_by_cost);
        for (k = 0; k < m && k < l->top_n; k++)
                w[k].keep = 1;
        qsort(w, m, sizeof(*w), gc__wl_by_ptr);
        for (size_t i = 0; i < l->n_iv; i++) {
                const gc__iv *v = &l->iv[i];
                gc__wl *f;

                if (v->start < p->end && v->end > p->start &&
                    (f = gc__wl_find(w, m, v->dims[GC_DIM_WORKLOAD])))
                        f->keep = 1;
        }
        *ret_n = m;
        return w;
}

/* Merges the rest's rows of workloads not kept into their group's row of workload __folded__. */
static int gc__period_compact(gc_ledger *l, gc__period *p)
{
        size_t n_wl = 0, n_old = p->n_rest, kept = 0;
        gc__wl *w = gc__wl_ranked(l, p, &n_wl);
        gc__prow *old = p->rest;

        if (!w)
                return -ENOMEM;
        for (size_t i = 0; i < n_wl; i++)
                kept += w[i].keep;
        if (kept == n_wl) {
                free(w);
                return 0;
        }
        p->rest = NULL;
        p->n_rest = p->cap_rest = 0;
        gc_index_clear(&p->rest_ix);
        l->n_prows -= n_old;
        /* At most as many rows as before: room for all of them. */
        if (gc__period_reserve(l, p, n_old) < 0) {
                p->rest = old; /* kept as it was, not compacted */
                p->n_rest = p->cap_rest = n_old;
                l->n_prows += n_old;
                for (size_t i = 0; i < n_old; i++)
                        gc_index_add_new(&p->rest_ix, gc__dims_hash(old[i].dims, old[i].lbl), i);
                free(w);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n_old; i++) {
                const gc__prow *r = &old[i];
                const gc__wl *f = gc__wl_find(w, n_wl, r->dims[GC_DIM_WORKLOAD]);
                const char *dims[GC_DIM_COUNT];

                memcpy(dims, r->dims, sizeof(dims));
                if (f && !f->keep)
                        dims[GC_DIM_WORKLOAD] = l->folded_pod;
                gc__rest_add(l, p, dims, r->lbl, r->gpu_seconds, r->cost, r->use, r->pods,
                             r->estimates);
        }
        free(old);
        free(w);
        return 0;
}

void gc__tier_compact(gc_ledger *l)
{
        for (size_t i = 0; i < l->n_per; i++) {
                gc__period *p = l->per[i];

                /* Closed: every interval that ends in it has folded, and no new one reaches it. */
                if (!p->dirty || p->end > l->horizon || !(p = gc__period_own(l, i)))
                        continue;
                if (gc__period_compact(l, p) == 0)
                        p->dirty = 0;
        }
}

/* ---- node rows: the held GPU-seconds of coarsened buckets ----------------------------------- */

typedef struct gc__pnode_key {
        const gc__period *p;
        const gc__pnode *k;
} gc__pnode_key;

static int gc__pnode_eq(const void *ctx, size_t ix)
{
        const gc__pnode_key *k = ctx;
        const gc__pnode *a = &k->p->nodes[ix];

        return a->node == k->k->node && a->model == k->k->model &&
               a->capacity_type == k->k->capacity_type && a->unattr == k->k->unattr;
}

static uint32_t gc__pnode_hash(const gc__pnode *n)
{
        uint64_t h = gc_hash_ptr(0, n->node);

        h = gc_hash_ptr(h, n->model);
        h = gc_hash_ptr(h, n->capacity_type);
        return gc_hash_fin(h + (uint64_t)n->unattr);
}

/* Adds into the period's node row of the same key; room must have been reserved. */
static void gc__pnode_add(gc_ledger *l, gc__period *p, const gc__pnode *in)
{
        gc__pnode_key k = {p, in};
        uint32_t h = gc__pnode_hash(in);
        gc__pnode *row;
        size_t pos;

        if (gc_index_find(&p->nodes_ix, h, gc__pnode_eq, &k, &pos)) {
                row = &p->nodes[gc_index_row(&p->nodes_ix, pos)];
        } else {
                row = &p->nodes[p->n_nodes];
                *row = *in;
                row->gpu_seconds = row->cost = 0;
                row->use = (gc__use){0, 0};
                gc_index_fill(&p->nodes_ix, pos, h, p->n_nodes);
                p->n_nodes++;
                l->n_prows++;
        }
        row->gpu_seconds += in->gpu_seconds;
        row->cost += in->cost;
        gc__use_add(&row->use, in->use);
}

static int gc__pnode_reserve(gc__period *p)
{
        if (gc__vec_reserve((void **)&p->nodes, &p->cap_nodes, p->n_nodes + 1, sizeof(*p->nodes)) <
                0 ||
            gc_index_reserve(&p->nodes_ix, p->n_nodes + 1) < 0)
                return -ENOMEM;
        return 0;
}

int64_t gc__coarse_from(const gc_ledger *l)
{
        int64_t week, month;

        if (l->period_since == INT64_MIN)
                return INT64_MIN;
        /* From there on, every day, week and month holding a bucket is in period history. */
        week = gc_tz_period_add(l->tz, GC_TZ_WEEK,
                                gc_tz_period_start(l->tz, GC_TZ_WEEK, l->period_since), 1);
        month = gc_tz_period_add(l->tz, GC_TZ_MONTH,
                                 gc_tz_period_start(l->tz, GC_TZ_MONTH, l->period_since), 1);
        return week > month ? week : month;
}

int gc__tier_add_node(gc_ledger *l, int64_t bucket_start, const char *node, const char *model,
                      const char *capacity_type, int unattr, double gpu_seconds, double cost,
                      gc__use use)
{
        gc__pnode in = {node, model, capacity_type, unattr, gpu_seconds, cost, use};
        gc__period *p[GC__N_UNITS];
        size_t ix[GC__N_UNITS];

        if (l->n_prows > l->max_rollup_rows || l->max_rollup_rows - l->n_prows < GC__N_UNITS)
                return -E2BIG;
        /* Every allocation first, so the bucket goes into every period or none. */
        for (size_t u = 0; u < GC__N_UNITS; u++) {
                int64_t ps = gc_tz_period_start(l->tz, gc__units[u], bucket_start);
                int64_t pe = gc_tz_period_add(l->tz, gc__units[u], ps, 1);

                if (pe <= bucket_start || ps < l->period_since)
                        return -EINVAL;
                if (gc__period_get(l, (int)gc__units[u], ps, pe, &ix[u]) < 0)
                        return -ENOMEM;
        }
        for (size_t u = 0; u < GC__N_UNITS; u++) {
                int found;

                /* Positions move as periods are made: found again, then each made its own. */
                ix[u] = gc__period_pos(l, gc_tz_period_start(l->tz, gc__units[u], bucket_start),
                                       (int)gc__units[u], &found);
                if (!found || !(p[u] = gc__period_own(l, ix[u])) || gc__pnode_reserve(p[u]) < 0)
                        return -ENOMEM;
        }
        for (size_t u = 0; u < GC__N_UNITS; u++)
                gc__pnode_add(l, p[u], &in);
        return 0;
}

/* ---- state ---------------------------------------------------------------------------------- */

/* A row of period p with nothing else set yet. */
static gc_period_row gc__row_of(const gc__period *p)
{
        gc_period_row o;

        memset(&o, 0, sizeof(o));
        o.unit = (gc_tz_unit)p->unit;
        o.start = p->start;
        o.end = p->end;
        return o;
}

int gc__tier_visit(const gc_ledger *l, int (*fn)(void *ud, const gc_period_row *r), void *ud)
{
        for (size_t i = 0; fn && i < l->n_per; i++) {
                const gc__period *p = l->per[i];

                for (size_t k = 0; k < p->n_top + p->n_rest; k++) {
                        const gc__prow *row = k < p->n_top ? &p->top[k] : &p->rest[k - p->n_top];
                        gc_period_row o = gc__row_of(p);
                        int r;

                        o.pod_uid = row->uid;
                        memcpy(o.dims, row->dims, sizeof(o.dims));
                        if (l->n_label_keys)
                                memcpy(o.labels, l->lbl[row->lbl].v, sizeof(o.labels));
                        o.gpu_seconds = row->gpu_seconds;
                        o.cost = row->cost;
                        o.adj_cost = row->use.adj;
                        o.covered_cost = row->use.covered;
                        o.pods = row->pods;
                        o.estimates = row->estimates;
                        r = fn(ud, &o);
                        if (r != 0)
                                return r;
                }
                for (size_t k = 0; k < p->n_nodes; k++) {
                        const gc__pnode *n = &p->nodes[k];
                        gc_period_row o = gc__row_of(p);
                        int r;

                        for (size_t d = 0; d < GC_DIM_COUNT; d++)
                                o.dims[d] = l->empty;
                        o.dims[GC_DIM_NODE] = n->node;
                        o.dims[GC_DIM_MODEL] = n->model;
                        o.dims[GC_DIM_CAPACITY_TYPE] = n->capacity_type;
                        if (n->unattr)
                                o.dims[GC_DIM_TEAM] = l->unattributed;
                        if (l->n_label_keys)
                                memcpy(o.labels, l->lbl[0].v, sizeof(o.labels));
                        o.gpu_seconds = n->gpu_seconds;
                        o.cost = n->cost;
                        o.adj_cost = n->use.adj;
                        o.covered_cost = n->use.covered;
                        r = fn(ud, &o);
                        if (r != 0)
                                return r;
                }
        }
        return 0;
}

static int gc__valid_period_row(const gc_period_row *r)
{
        return (r->unit == GC_TZ_DAY || r->unit == GC_TZ_WEEK || r->unit == GC_TZ_MONTH) &&
               r->start >= 0 && r->end > r->start && r->end <= GC__TIME_MAX &&
               isfinite(r->gpu_seconds) && r->gpu_seconds >= 0 && isfinite(r->cost) &&
               r->cost >= 0 && r->estimates <= r->pods && (!r->pod_uid || *r->pod_uid) &&
               isfinite(r->adj_cost) && isfinite(r->covered_cost) && r->covered_cost >= 0;
}

/* A node row of a period (no pod, a node): its held GPU-seconds in coarsened buckets. */
static int gc__node_row_add(gc_ledger *l, const gc_period_row *r, const gc__prow *in)
{
        gc__pnode n = {in->dims[GC_DIM_NODE],
                       in->dims[GC_DIM_MODEL],
                       in->dims[GC_DIM_CAPACITY_TYPE],
                       in->dims[GC_DIM_TEAM] == l->unattributed,
                       in->gpu_seconds,
                       in->cost,
                       in->use};
        gc__period *p;
        int rc;

        if (r->pods || r->estimates)
                return -EINVAL;
        p = gc__period_mut(l, (int)r->unit, r->start, r->end);
        rc = p ? gc__pnode_reserve(p) : -ENOMEM;
        if (rc == 0)
                gc__pnode_add(l, p, &n);
        return rc;
}

int gc_ledger_add_period_row(gc_ledger *l, const gc_period_row *r)
{
        gc__prow in;
        gc__period *p;
        int rc;

        if (!l || !r || !gc__valid_period_row(r))
                return -EINVAL;
        if (l->n_prows >= l->max_rollup_rows)
                return -E2BIG;
        memset(&in, 0, sizeof(in));
        for (size_t d = 0; d < GC_DIM_COUNT; d++) {
                in.dims[d] = r->dims[d] ? gc_strpool_intern0(l->pool, r->dims[d]) : l->empty;
                if (!in.dims[d])
                        return -ENOMEM;
        }
        in.uid = r->pod_uid ? gc_strpool_intern0(l->pool, r->pod_uid) : NULL;
        if (r->pod_uid && !in.uid)
                return -ENOMEM;
        rc = gc__lbl_of(l, r->labels, &in.lbl);
        if (rc < 0)
                return rc;
        in.gpu_seconds = r->gpu_seconds;
        in.cost = r->cost;
        in.use.adj = r->adj_cost;
        in.use.covered = r->covered_cost;
        in.pods = r->pods;
        in.estimates = r->estimates;
        if (!in.uid && *in.dims[GC_DIM_NODE])
                return gc__node_row_add(l, r, &in);
        p = gc__period_mut(l, (int)r->unit, r->start, r->end);
        rc = p ? gc__period_reserve(l, p, 2) : -ENOMEM;
        if (rc < 0)
                return rc;
        /* A top pod of a ledger that kept more pods per period may go to the rest here. */
        if (in.uid)
                gc__top_offer(l, p, &in);
        else
                gc__rest_add(l, p, in.dims, in.lbl, in.gpu_seconds, in.cost, in.use, in.pods,
                             in.estimates);
        return 0;
}

int gc_ledger_set_period_since(gc_ledger *l, int64_t since)
{
        if (!l)
                return -EINVAL;
        l->period_since = since;
        return 0;
}

int gc__tier_clone(gc_ledger *c, const gc_ledger *l)
{
        c->per = NULL;
        c->n_per = c->cap_per = 0;
        if (!l->n_per)
                return 0;
        c->per = malloc(l->n_per * sizeof(gc__period *));
        if (!c->per)
                return -ENOMEM;
        /* Shared, not copied: whoever changes one later changes a copy (gc__period_own). */
        for (size_t i = 0; i < l->n_per; i++) {
                atomic_fetch_add_explicit(&l->per[i]->refs, 1, memory_order_relaxed);
                c->per[i] = l->per[i];
        }
        c->n_per = c->cap_per = l->n_per;
        c->n_prows = l->n_prows;
        return 0;
}

size_t gc__tier_bytes(const gc_ledger *l)
{
        size_t n = l->cap_per * sizeof(gc__period *);

        for (size_t i = 0; i < l->n_per; i++)
                n += sizeof(gc__period) +
                     (l->per[i]->cap_rest + l->per[i]->cap_top) * sizeof(gc__prow) +
                     l->per[i]->cap_nodes * sizeof(gc__pnode) +
                     gc_index_bytes(&l->per[i]->rest_ix) + gc_index_bytes(&l->per[i]->nodes_ix);
        return n;
}
