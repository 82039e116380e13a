/* query: clips intervals and folded hours to a window, groups, filters, and computes idle. */
#include "ledger_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Filters compare strings by value (a caller may pass its own copy), but every value held in the
 * ledger is interned, so once one pointer has matched, every other pointer cannot; the cache makes
 * filtering one pointer compare per interval in the common case.
 */
typedef struct gc__filter {
        const char *want[GC_KEY_COUNT];
        const char *hit[GC_KEY_COUNT];
        const char *miss[GC_KEY_COUNT];
} gc__filter;

static int gc__match(gc__filter *f, gc_dim d, const char *v)
{
        if (!f->want[d] || v == f->hit[d])
                return 1;
        if (f->hit[d] || v == f->miss[d])
                return 0;
        if (strcmp(v, f->want[d]) == 0) {
                f->hit[d] = v;
                return 1;
        }
        f->miss[d] = v;
        return 0;
}

typedef struct gc__node_acc {
        const char *node, *model, *capacity_type;
        int64_t model_hour; /* hour the model was taken from (a live interval beats any hour) */
        double cap_seconds, cap_cost, held_seconds;
} gc__node_acc;

/* One step's accumulators: what a query of that step alone would gather. */
typedef struct gc__acc {
        int64_t start, end;
        size_t n_keys; /* keys a row may set: the fixed ones and the ledger's label keys */

        gc_cost_row *rows;
        size_t n_rows, cap_rows;
        gc_index rows_ix;

        gc__node_acc *nodes;
        size_t n_nodes, cap_nodes;
        gc_index nodes_ix;

        gc_cost_row total, unattributed;
        /* The step is a period of period history: pods' folded figures come from it, and the
         * folded hours only tell the nodes' held GPU-seconds (for idle). */
        const gc__period *tier;
        /* The step is a period (tier or not): its node rows hold the coarsened buckets. */
        const gc__period *per;
} gc__acc;

/*
 * A query over steps [start + k*step, min(start + (k+1)*step, end)), k < n; a plain query is one
 * step. Each record is visited once and added to every step it overlaps, in the order a query of
 * each step alone would add it, so every step's sums come out bit for bit the same.
 */
typedef struct gc__q {
        const gc_ledger *l;
        const gc_query *q;
        gc__filter f;
        int64_t step;
        const int64_t *edges; /* instead of step: step k is [edges[k], edges[k + 1]) */
        /* Grouped and filtered only by node, model and capacity type: folded hours come from
         * the nodes' rows (exact per node), else from the pods' (node __folded__). */
        int by_node_rows;
        gc__acc *acc;
        size_t n;
} gc__q;

typedef struct gc__key {
        const gc__acc *a;
        const char *const *keys;
} gc__key;

static int gc__row_eq(const void *ctx, size_t ix)
{
        const gc__key *k = ctx;

        return memcmp(k->a->rows[ix].keys, k->keys, k->a->n_keys * sizeof(*k->keys)) == 0;
}

static int gc__node_eq(const void *ctx, size_t ix)
{
        const gc__key *k = ctx;

        return k->a->nodes[ix].node == k->keys[0];
}

/* Of the first n keys: those past the ledger's label keys are NULL in every row. */
static uint32_t gc__keys_hash(const char *const keys[GC_KEY_COUNT], size_t n)
{
        uint64_t h = 0;

        for (size_t d = 0; d < n; d++)
                h = gc_hash_ptr(h, keys[d]);
        return gc_hash_fin(h);
}

/* The row of the keys, made when new; may reallocate the rows. NULL when out of memory. */
static gc_cost_row *gc__row_get(gc__acc *x, const char *const keys[GC_KEY_COUNT], uint32_t h)
{
        gc__key k = {x, keys};
        gc_cost_row *row;
        size_t pos;

        if (gc_index_find(&x->rows_ix, h, gc__row_eq, &k, &pos))
                return &x->rows[gc_index_row(&x->rows_ix, pos)];
        if (gc__vec_reserve((void **)&x->rows, &x->cap_rows, x->n_rows + 1, sizeof(*x->rows)) < 0 ||
            gc_index_reserve(&x->rows_ix, x->n_rows + 1) < 0)
                return NULL;
        row = &x->rows[x->n_rows];
        memset(row, 0, sizeof(*row));
        memcpy(row->keys, keys, sizeof(row->keys));
        gc_index_add_new(&x->rows_ix, h, x->n_rows);
        x->n_rows++;
        return row;
}

static gc__node_acc *gc__node_find(const gc__acc *x, const char *node, uint32_t h)
{
        gc__key k = {x, &node};
        size_t pos;

        if (!gc_index_find(&x->nodes_ix, h, gc__node_eq, &k, &pos))
                return NULL;
        return &x->nodes[gc_index_row(&x->nodes_ix, pos)];
}

/* The node's accumulator, made when new; may reallocate. NULL when out of memory. */
static gc__node_acc *gc__node_get(gc__acc *x, const char *node, uint32_t h)
{
        gc__node_acc *a = gc__node_find(x, node, h);

        if (a)
                return a;
        if (gc__vec_reserve((void **)&x->nodes, &x->cap_nodes, x->n_nodes + 1, sizeof(*x->nodes)) <
                0 ||
            gc_index_reserve(&x->nodes_ix, x->n_nodes + 1) < 0)
                return NULL;
        a = &x->nodes[x->n_nodes];
        memset(a, 0, sizeof(*a));
        a->node = node;
        a->model_hour = INT64_MIN;
        gc_index_add_new(&x->nodes_ix, h, x->n_nodes);
        x->n_nodes++;
        return a;
}

/* The step holding t, for q->start <= t < q->end (unsigned: the span may exceed INT64_MAX). */
static size_t gc__step_of(const gc__q *x, int64_t t)
{
        uint64_t k;

        if (x->n == 1)
                return 0;
        if (x->edges) {
                size_t lo = 0, hi = x->n;

                /* The last step starting at or before t. */
                while (hi - lo > 1) {
                        size_t mid = lo + (hi - lo) / 2;

                        if (x->edges[mid] <= t)
                                lo = mid;
                        else
                                hi = mid;
                }
                return lo;
        }
        k = ((uint64_t)t - (uint64_t)x->q->start) / (uint64_t)x->step;
        return k < x->n ? (size_t)k : x->n - 1;
}

/*
 * Where [start, end) lies in the window: the steps it may overlap, [*k0, *k1], and its end with
 * an open interval ending where the query says (now, else the window's end). 0 when outside.
 */
static int gc__span(const gc__q *x, int64_t start, int64_t end, size_t *k0, size_t *k1,
                    int64_t *ret_end)
{
        int64_t lo = start > x->q->start ? start : x->q->start;
        int64_t hi = end;

        if (end == GC_OPEN)
                hi = x->q->now && x->q->now < x->q->end ? x->q->now : x->q->end;
        if (hi > x->q->end)
                hi = x->q->end;
        if (hi <= lo)
                return 0;
        *k0 = gc__step_of(x, lo);
        *k1 = gc__step_of(x, hi - 1);
        *ret_end = hi;
        return 1;
}

/* Seconds of [start, hi) inside the step; hi is already clipped to where it stops accruing. */
static int64_t gc__overlap(const gc__acc *a, int64_t start, int64_t hi)
{
        int64_t lo = start > a->start ? start : a->start;

        if (hi > a->end)
                hi = a->end;
        /* lo >= 0 (starts are validated), so hi - lo cannot overflow. */
        return hi > lo ? hi - lo : 0;
}

/* The step wholly holding the hour, or NULL (a folded hour cut by a step's edge counts in none). */
static gc__acc *gc__hour_step(const gc__q *x, int64_t hour)
{
        gc__acc *a = x->acc;

        if (x->n > 1) {
                if (hour < x->q->start || hour >= x->q->end)
                        return NULL;
                a = &x->acc[gc__step_of(x, hour)];
        }
        return hour >= a->start && hour + x->l->bucket <= a->end ? a : NULL;
}

/* Cost and measured cost of a record's figures in the query's basis (docs/ledger.md). */
typedef struct gc__fig {
        double cost, measured;
} gc__fig;

static gc__fig gc__fig_of(const gc__q *x, double cost, gc__use u)
{
        gc__fig f = {cost, u.covered};

        if (x->q->basis == GC_BASIS_USAGE) {
                f.cost += u.adj;
                f.measured += u.adj;
        }
        return f;
}

static void gc__row_add(gc_cost_row *row, double gs, gc__fig f, uint32_t pods, uint32_t estimates)
{
        row->gpu_seconds += gs;
        row->cost += f.cost;
        row->measured_cost += f.measured;
        row->pods += pods;
        row->estimates += estimates;
}

static int gc__node_filters(gc__q *x, const char *node, const char *model, const char *ctype)
{
        return gc__match(&x->f, GC_DIM_NODE, node) && gc__match(&x->f, GC_DIM_MODEL, model) &&
               gc__match(&x->f, GC_DIM_CAPACITY_TYPE, ctype);
}

static int gc__capacity_pass(gc__q *x)
{
        const gc_ledger *l = x->l;

        for (size_t i = 0; i < l->n_cap; i++) {
                const gc__cap *c = &l->cap[i];
                size_t k0, k1;
                int64_t hi;
                uint32_t h;

                if (!gc__span(x, c->start, c->end, &k0, &k1, &hi) ||
                    !gc__node_filters(x, c->node, c->model, c->capacity_type))
                        continue;
                h = gc_hash_fin(gc_hash_ptr(0, c->node));
                for (size_t k = k0; k <= k1; k++) {
                        int64_t ov = gc__overlap(&x->acc[k], c->start, hi);
                        gc__node_acc *a;
                        double s;

                        if (ov <= 0)
                                continue;
                        a = gc__node_get(&x->acc[k], c->node, h);
                        if (!a)
                                return -ENOMEM;
                        s = (double)ov * c->geq;
                        a->cap_seconds += s;
                        a->cap_cost += s / 3600.0 * c->price_per_gpu_hour;
                        a->model = c->model;
                        a->capacity_type = c->capacity_type;
                        a->model_hour = INT64_MAX;
                }
        }
        for (size_t i = 0; i < l->n_crun; i++) {
                const gc__crun *r = &l->crun[i];
                int64_t end = r->first + r->n * l->bucket, lo, hi;
                size_t k0, k1;
                uint32_t h;

                if (!gc__span(x, r->first, end, &k0, &k1, &hi) ||
                    !gc__node_filters(x, r->node, r->model, r->capacity_type))
                        continue;
                h = gc_hash_fin(gc_hash_ptr(0, r->node));
                for (size_t k = k0; k <= k1; k++) {
                        gc__acc *st = &x->acc[k];
                        gc__node_acc *a;
                        double n;

                        /* Only the buckets the step wholly holds, as with pods' hourly rows. */
                        lo = gc__floor_bucket(st->start + l->bucket - 1, l->bucket);
                        hi = gc__floor_bucket(st->end, l->bucket);
                        if (lo < r->first)
                                lo = r->first;
                        if (hi > end)
                                hi = end;
                        if (hi <= lo)
                                continue;
                        a = gc__node_get(st, r->node, h);
                        if (!a)
                                return -ENOMEM;
                        n = (double)(int64_t)((hi - lo) / l->bucket);
                        a->cap_seconds += n * r->geq_seconds;
                        a->cap_cost += n * r->cost;
                        if (hi - l->bucket > a->model_hour) {
                                a->model = r->model;
                                a->capacity_type = r->capacity_type;
                                a->model_hour = hi - l->bucket;
                        }
                }
        }
        return 0;
}

/*
 * Whether a contribution (its dimensions, and its label values: tuple lbl of the ledger's) passes
 * the filters; if so, its group's keys and their hash.
 */
static int gc__keys(gc__q *x, const char *const dims[GC_DIM_COUNT], uint32_t lbl,
                    const char *keys[GC_KEY_COUNT], uint32_t *ret_h)
{
        size_t n_lbl = x->l->n_label_keys;
        const char *const *lv = n_lbl ? x->l->lbl[lbl].v : NULL;

        memset(keys, 0, GC_KEY_COUNT * sizeof(*keys));
        for (size_t d = 0; d < GC_DIM_COUNT; d++)
                if (!gc__match(&x->f, (gc_dim)d, dims[d]))
                        return 0;
        for (size_t i = 0; i < n_lbl; i++)
                if (!gc__match(&x->f, (gc_dim)(GC_DIM_LABEL + i), lv[i]))
                        return 0;
        for (size_t i = 0; i < x->q->n_by; i++) {
                gc_dim d = x->q->by[i];

                keys[d] = d < GC_DIM_COUNT ? dims[d] : lv[d - GC_DIM_LABEL];
        }
        *ret_h = gc__keys_hash(keys, GC_DIM_COUNT + n_lbl);
        return 1;
}

/* Adds one contribution to its group, the total and the unattributed part of a step. */
static int gc__account(gc__acc *a, const char *const keys[GC_KEY_COUNT], uint32_t h, int unattr,
                       double gs, gc__fig f, uint32_t pods, uint32_t estimates)
{
        gc_cost_row *row = gc__row_get(a, keys, h);

        if (!row)
                return -ENOMEM;
        gc__row_add(row, gs, f, pods, estimates);
        gc__row_add(&a->total, gs, f, pods, estimates);
        if (unattr)
                gc__row_add(&a->unattributed, gs, f, pods, estimates);
        return 0;
}

static int gc__unattributed(const gc__q *x, const char *const dims[GC_DIM_COUNT])
{
        return dims[GC_DIM_TEAM] == x->l->unattributed ||
               dims[GC_DIM_PROJECT] == x->l->unattributed;
}

static int gc__usage_pass(gc__q *x)
{
        const gc_ledger *l = x->l;
        const char *dims[GC_DIM_COUNT], *keys[GC_KEY_COUNT];
        int r;

        for (size_t i = 0; i < l->n_iv; i++) {
                const gc__iv *v = &l->iv[i];
                uint32_t nh = gc_hash_fin(gc_hash_ptr(0, v->dims[GC_DIM_NODE])), kh = 0;
                int pass, unattr = gc__unattributed(x, v->dims);
                size_t k0, k1;
                int64_t hi;

                if (!gc__span(x, v->start, v->end, &k0, &k1, &hi))
                        continue;
                pass = gc__keys(x, v->dims, v->lbl, keys, &kh);
                for (size_t k = k0; k <= k1; k++) {
                        gc__acc *st = &x->acc[k];
                        int64_t ov = gc__overlap(st, v->start, hi);
                        gc__node_acc *a;
                        double gs, cost;
                        gc__use u = {0, 0};

                        if (ov <= 0)
                                continue;
                        gs = (double)ov * v->geq;
                        cost = gs / 3600.0 * v->price_per_gpu_hour;
                        if (v->flags & GC_USAGE_F_ADJUST) {
                                /* Spread evenly over the measured time it covers. */
                                double part = (double)ov / (double)(v->end - v->start);

                                u.adj = v->use.adj * part;
                                u.covered = v->use.covered * part;
                        }
                        /* Idle is not narrowed by team or project: the node's GPUs sit idle
                         * regardless. */
                        if (st->n_nodes && (a = gc__node_find(st, v->dims[GC_DIM_NODE], nh)))
                                a->held_seconds += gs;
                        if (!pass)
                                continue;
                        /* A later piece of a pod counts the pod only where no earlier piece
                         * overlaps the step: the pieces are contiguous, so when it starts no
                         * later than the step does. */
                        r = gc__account(
                            st, keys, kh, unattr, gs, gc__fig_of(x, cost, u),
                            !(v->flags & GC_USAGE_F_ADJUST) &&
                                (!(v->flags & GC_USAGE_F_PART) || v->start <= st->start),
                            (v->flags & GC_USAGE_F_ESTIMATE) != 0);
                        if (r < 0)
                                return r;
                }
        }
        for (size_t i = 0; i < l->n_roll; i++) {
                const gc__roll *rr = &l->roll[i];
                const gc__grp *g = &l->grp[rr->grp];
                gc__acc *st = gc__hour_step(x, rr->hour);
                gc__node_acc *a;
                uint32_t kh = 0;

                if (!st)
                        continue;
                if (g->node_row == GC__ROW_NODE && st->n_nodes &&
                    (a = gc__node_find(st, g->dims[GC_DIM_NODE],
                                       gc_hash_fin(gc_hash_ptr(0, g->dims[GC_DIM_NODE])))))
                        a->held_seconds += rr->gpu_seconds;
                /* Period history has the folded pods; a query by node alone the nodes' rows. */
                if (st->tier || (g->node_row != GC__ROW_PODS) != x->by_node_rows)
                        continue;
                memcpy(dims, g->dims, GC__ROLL_DIMS * sizeof(*g->dims));
                if (g->node_row == GC__ROW_PODS)
                        dims[GC_DIM_NODE] = l->folded_pod;
                dims[GC_DIM_POD] = l->folded_pod;
                dims[GC_DIM_WORKLOAD] = l->folded_pod;
                if (!gc__keys(x, dims, g->lbl, keys, &kh))
                        continue;
                r = 0;
                if (g->node_row == GC__ROW_NODE_UNATTR)
                        gc__row_add(&st->unattributed, rr->gpu_seconds,
                                    gc__fig_of(x, rr->cost, rr->use), 0, 0);
                else
                        r = gc__account(st, keys, kh,
                                        g->node_row == GC__ROW_PODS && gc__unattributed(x, dims),
                                        rr->gpu_seconds, gc__fig_of(x, rr->cost, rr->use), 0, 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Folded pods of the steps that are periods of period history: their top pods and the rest. */
static int gc__tier_pass(gc__q *x)
{
        const char *keys[GC_KEY_COUNT];

        for (size_t k = 0; k < x->n; k++) {
                gc__acc *st = &x->acc[k];
                const gc__period *p = st->tier;

                for (size_t i = 0; p && i < p->n_top + p->n_rest; i++) {
                        const gc__prow *row = i < p->n_top ? &p->top[i] : &p->rest[i - p->n_top];
                        uint32_t kh = 0;
                        int r;

                        const char *dims[GC_DIM_COUNT];

                        memcpy(dims, row->dims, sizeof(dims));
                        if (i >= p->n_top)
                                dims[GC_DIM_NODE] = x->l->folded_pod; /* the rest has no node */
                        if ((row->pods == 0 && row->gpu_seconds == 0 && row->use.adj == 0 &&
                             row->use.covered == 0) ||
                            !gc__keys(x, dims, row->lbl, keys, &kh))
                                continue;
                        r = gc__account(st, keys, kh, gc__unattributed(x, dims), row->gpu_seconds,
                                        gc__fig_of(x, row->cost, row->use), row->pods,
                                        row->estimates);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/*
 * The nodes' held GPU-seconds of coarsened buckets, for the steps that are periods: what their
 * node rows in the hourly pass would add (idle; the rows of a query by node alone).
 */
static int gc__pnode_pass(gc__q *x)
{
        const gc_ledger *l = x->l;
        const char *keys[GC_KEY_COUNT], *dims[GC_DIM_COUNT];

        for (size_t k = 0; k < x->n; k++) {
                gc__acc *st = &x->acc[k];
                const gc__period *p = st->per;

                for (size_t i = 0; p && i < p->n_nodes; i++) {
                        const gc__pnode *n = &p->nodes[i];
                        gc__node_acc *a;
                        uint32_t kh = 0;
                        int r = 0;

                        if (!n->unattr && st->n_nodes &&
                            (a = gc__node_find(st, n->node, gc_hash_fin(gc_hash_ptr(0, n->node)))))
                                a->held_seconds += n->gpu_seconds;
                        if (st->tier || !x->by_node_rows)
                                continue;
                        for (size_t d = 0; d < GC_DIM_COUNT; d++)
                                dims[d] = l->empty;
                        dims[GC_DIM_NODE] = n->node;
                        dims[GC_DIM_MODEL] = n->model;
                        dims[GC_DIM_CAPACITY_TYPE] = n->capacity_type;
                        dims[GC_DIM_POD] = l->folded_pod;
                        dims[GC_DIM_WORKLOAD] = l->folded_pod;
                        if (!gc__keys(x, dims, 0, keys, &kh))
                                continue;
                        if (n->unattr)
                                gc__row_add(&st->unattributed, n->gpu_seconds,
                                            gc__fig_of(x, n->cost, n->use), 0, 0);
                        else
                                r = gc__account(st, keys, kh, 0, n->gpu_seconds,
                                                gc__fig_of(x, n->cost, n->use), 0, 0);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/*
 * Whether the query groups or filters, and only by node, model and capacity type (a query of
 * totals alone takes the pods' rows, which every pod has, bound to a node or not).
 */
static int gc__node_only(const gc_query *q)
{
        int any = q->n_by > 0;

        for (size_t d = 0; d < GC_KEY_COUNT; d++)
                any |= q->filter[d] != NULL;
        if (!any)
                return 0;
        for (size_t d = 0; d < GC_KEY_COUNT; d++)
                if (q->filter[d] && d != GC_DIM_NODE && d != GC_DIM_MODEL &&
                    d != GC_DIM_CAPACITY_TYPE)
                        return 0;
        for (size_t i = 0; i < q->n_by; i++)
                if (q->by[i] != GC_DIM_NODE && q->by[i] != GC_DIM_MODEL &&
                    q->by[i] != GC_DIM_CAPACITY_TYPE)
                        return 0;
        return 1;
}

/*
 * Whether period history can answer the query's steps that are periods. Its rest is summed over
 * nodes, so not when filtered by node, nor grouped by node, model and capacity type alone (the
 * nodes' hourly rows are exact per node). Grouped by node beside other dimensions, the top pods
 * keep their nodes and the rest reads GC_FOLDED_POD, as the pods' hourly rows would all read.
 */
static int gc__tier_fits(const gc_query *q)
{
        return !q->filter[GC_DIM_NODE] && !gc__node_only(q);
}

/* ---- ordering ------------------------------------------------------------------------------- */

static int gc__cmp_rows(const gc_cost_row *a, const gc_cost_row *b, const gc_query *q)
{
        if (a->cost != b->cost)
                return a->cost > b->cost ? -1 : 1;
        if (a->gpu_seconds != b->gpu_seconds)
                return a->gpu_seconds > b->gpu_seconds ? -1 : 1;
        for (size_t i = 0; i < q->n_by; i++) {
                int c = strcmp(a->keys[q->by[i]], b->keys[q->by[i]]);

                if (c)
                        return c;
        }
        return 0;
}

/*
 * Bottom-up merge sort of pointers (qsort has no context argument for the grouping order), then
 * one gather into a new array; replaces *rows, or leaves it and fails with -ENOMEM.
 */
static int gc__sort_rows(gc_cost_row **rows, size_t n, const gc_query *q)
{
        const gc_cost_row **buf, **src, **dst;
        gc_cost_row *out;

        if (n < 2)
                return 0;
        buf = malloc(2 * n * sizeof(const gc_cost_row *));
        out = malloc(n * sizeof(*out));
        if (!buf || !out) {
                free(buf);
                free(out);
                return -ENOMEM;
        }
        src = buf;
        dst = buf + n;
        for (size_t i = 0; i < n; i++)
                src[i] = &(*rows)[i];
        for (size_t w = 1; w < n; w *= 2) {
                const gc_cost_row **t;

                for (size_t lo = 0; lo < n; lo += 2 * w) {
                        size_t mid = lo + w < n ? lo + w : n;
                        size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
                        size_t i = lo, j = mid, k = lo;

                        while (i < mid && j < hi)
                                dst[k++] =
                                    gc__cmp_rows(src[j], src[i], q) < 0 ? src[j++] : src[i++];
                        while (i < mid)
                                dst[k++] = src[i++];
                        while (j < hi)
                                dst[k++] = src[j++];
                }
                t = src;
                src = dst;
                dst = t;
        }
        for (size_t i = 0; i < n; i++)
                out[i] = *src[i];
        free(buf);
        free(*rows);
        *rows = out;
        return 0;
}

static int gc__cmp_idle(const void *pa, const void *pb)
{
        const gc_cost_row *a = pa, *b = pb;

        if (a->cost != b->cost)
                return a->cost > b->cost ? -1 : 1;
        if (a->gpu_seconds != b->gpu_seconds)
                return a->gpu_seconds > b->gpu_seconds ? -1 : 1;
        return strcmp(a->keys[GC_DIM_NODE], b->keys[GC_DIM_NODE]);
}

/* ---- the query ------------------------------------------------------------------------------ */

static int gc__query_valid(const gc_ledger *l, const gc_query *q)
{
        unsigned seen = 0, dims = GC_DIM_COUNT + (unsigned)l->n_label_keys;

        if (q->start > q->end || q->now < 0 || q->n_by > GC_KEY_COUNT ||
            (q->basis != GC_BASIS_ALLOCATION && q->basis != GC_BASIS_USAGE))
                return 0;
        for (size_t i = 0; i < q->n_by; i++) {
                if ((unsigned)q->by[i] >= dims || (seen & (1u << q->by[i])))
                        return 0;
                seen |= 1u << q->by[i];
        }
        /* A filter on a label key the ledger does not keep would match nothing, silently. */
        for (size_t d = dims; d < GC_KEY_COUNT; d++)
                if (q->filter[d])
                        return 0;
        return 1;
}

static int gc__idle(const gc__acc *x, gc_cost_summary *s)
{
        gc_cost_row *idle;

        if (!x->n_nodes)
                return 0;
        idle = calloc(x->n_nodes, sizeof(*idle));
        if (!idle)
                return -ENOMEM;
        for (size_t i = 0; i < x->n_nodes; i++) {
                const gc__node_acc *a = &x->nodes[i];
                double free_s = a->cap_seconds - a->held_seconds;

                if (free_s < 0)
                        free_s = 0;
                idle[i].keys[GC_DIM_NODE] = a->node;
                idle[i].keys[GC_DIM_MODEL] = a->model;
                idle[i].keys[GC_DIM_CAPACITY_TYPE] = a->capacity_type;
                idle[i].gpu_seconds = free_s;
                /* At the node's own (time-weighted) price, should it have changed in the window. */
                idle[i].cost = a->cap_seconds > 0 ? free_s * (a->cap_cost / a->cap_seconds) : 0;
                s->capacity.gpu_seconds += a->cap_seconds;
                s->capacity.cost += a->cap_cost;
                s->idle.gpu_seconds += idle[i].gpu_seconds;
                s->idle.cost += idle[i].cost;
        }
        qsort(idle, x->n_nodes, sizeof(*idle), gc__cmp_idle);
        s->idle_nodes = idle;
        s->n_idle_nodes = x->n_nodes;
        return 0;
}

static void gc__acc_release(gc__acc *a)
{
        free(a->rows);
        a->rows = NULL;
        gc_index_free(&a->rows_ix);
        free(a->nodes);
        a->nodes = NULL;
        gc_index_free(&a->nodes_ix);
}

/* One step's summary out of its accumulators, which it takes the rows of. */
static int gc__finish(const gc__q *x, gc__acc *a, gc_cost_summary *ret)
{
        gc_cost_summary s = {0};
        int r = gc__sort_rows(&a->rows, a->n_rows, x->q);

        if (r == 0)
                r = gc__idle(a, &s);
        if (r < 0)
                return r;
        s.start = a->start;
        s.end = a->end;
        s.basis = x->q->basis;
        memcpy(s.by, x->q->by, sizeof(s.by));
        s.n_by = x->q->n_by;
        gc_ledger_label_keys(x->l, &s.label_keys);
        s.rows = a->rows;
        s.n_rows = a->n_rows;
        a->rows = NULL;
        s.total = a->total;
        s.unattributed = a->unattributed;
        *ret = s;
        return 0;
}

/*
 * n summaries of the steps of q->start + k*step, or of [edges[k], edges[k + 1]) when edges is
 * given; ret is written only on success.
 */
static int gc__run(const gc_ledger *l, const gc_query *q, int64_t step, const int64_t *edges,
                   size_t n, gc_cost_summary *ret)
{
        gc_cost_summary *out = NULL;
        gc__q x = {0};
        size_t done = 0;
        int r;

        x.l = l;
        x.q = q;
        x.step = step;
        x.edges = n > 1 ? edges : NULL;
        x.n = n;
        memcpy(x.f.want, q->filter, sizeof(x.f.want));
        x.acc = calloc(n, sizeof(*x.acc));
        out = calloc(n, sizeof(*out));
        if (!x.acc || !out) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t k = 0; k < n; k++) {
                int64_t t = q->start + (int64_t)k * step;

                if (x.edges) {
                        x.acc[k].start = edges[k];
                        x.acc[k].end = edges[k + 1];
                        continue;
                }
                x.acc[k].start = t;
                x.acc[k].end = n == 1 || q->end - t <= step ? q->end : t + step;
        }
        x.by_node_rows = gc__node_only(q);
        for (size_t k = 0; k < n; k++) {
                x.acc[k].n_keys = GC_DIM_COUNT + l->n_label_keys;
                x.acc[k].per = gc__tier_find(l, x.acc[k].start, x.acc[k].end);
                x.acc[k].tier = gc__tier_fits(q) ? x.acc[k].per : NULL;
        }
        r = gc__capacity_pass(&x);
        if (r == 0)
                r = gc__usage_pass(&x);
        if (r == 0)
                r = gc__tier_pass(&x);
        if (r == 0)
                r = gc__pnode_pass(&x);
        for (; r == 0 && done < n; done++) {
                r = gc__finish(&x, &x.acc[done], &out[done]);
                /* The step's indexes are no longer needed: give them back as we go. */
                gc__acc_release(&x.acc[done]);
        }
        if (r == 0) {
                memcpy(ret, out, n * sizeof(*ret));
                done = 0;
        }
out:
        for (size_t k = 0; k < done; k++)
                gc_cost_summary_free(&out[k]);
        for (size_t k = 0; x.acc && k < n; k++)
                gc__acc_release(&x.acc[k]);
        free(x.acc);
        free(out);
        return r;
}

int gc_ledger_query(const gc_ledger *l, const gc_query *q, gc_cost_summary *ret)
{
        if (!l || !q || !ret || !gc__query_valid(l, q))
                return -EINVAL;
        return gc__run(l, q, 0, NULL, 1, ret); /* one step: its length is never used */
}

size_t gc_ledger_step_count(int64_t start, int64_t end, int64_t step_s)
{
        uint64_t span, n;

        if (start >= end || step_s <= 0)
                return 0;
        span = (uint64_t)end - (uint64_t)start;
        n = span / (uint64_t)step_s + (span % (uint64_t)step_s != 0);
        return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

int gc_ledger_query_steps(const gc_ledger *l, const gc_query *q, int64_t step_s,
                          gc_cost_summary *ret, size_t n_steps)
{
        if (!l || !q || (!ret && n_steps) || !gc__query_valid(l, q) || step_s <= 0 ||
            n_steps != gc_ledger_step_count(q->start, q->end, step_s))
                return -EINVAL;
        if (n_steps > GC_LEDGER_MAX_STEPS)
                return -E2BIG;
        if (n_steps == 0)
                return 0;
        return gc__run(l, q, step_s, NULL, n_steps, ret);
}

/*
 * Interval-steps one pass of gc_ledger_query_each_step holds at most: an interval spanning many
 * steps adds a row to each (grouped by pod, one per step), so 10,000 open pods over 1000 steps
 * would hold 10 million rows at once; this keeps a pass to about 50 MB at worst.
 */
#define GC__PASS_INTERVAL_STEPS ((size_t)500000)

int gc_ledger_query_each_step(const gc_ledger *l, const gc_query *q, int64_t step_s, gc_step_fn fn,
                              void *ud)
{
        gc_cost_summary *sums = NULL;
        size_t n, per;
        int r = 0;

        if (!l || !q || !fn || !gc__query_valid(l, q) || step_s <= 0)
                return -EINVAL;
        n = gc_ledger_step_count(q->start, q->end, step_s);
        if (n > GC_LEDGER_MAX_STEPS)
                return -E2BIG;
        if (n == 0)
                return 0;
        per = GC__PASS_INTERVAL_STEPS / (l->n_iv + 1);
        if (per < 1)
                per = 1;
        if (per > n)
                per = n;
        sums = calloc(per, sizeof(*sums));
        if (!sums)
                return -ENOMEM;
        for (size_t c = 0; r == 0 && c < n; c += per) {
                /* A pass's steps are the window's own: it starts on one of their edges. */
                gc_query part = *q;
                size_t m = n - c < per ? n - c : per;

                part.start = q->start + (int64_t)c * step_s;
                part.end = c + m == n ? q->end : part.start + (int64_t)m * step_s;
                r = gc__run(l, &part, m == 1 ? 0 : step_s, NULL, m, sums);
                for (size_t k = 0; r == 0 && k < m; k++)
                        r = fn(ud, &sums[k]);
                for (size_t k = 0; k < m; k++)
                        gc_cost_summary_free(&sums[k]);
        }
        free(sums);
        return r;
}

int gc_ledger_query_each_span(const gc_ledger *l, const gc_query *q, const int64_t *edges,
                              size_t n_spans, gc_step_fn fn, void *ud)
{
        gc_cost_summary *sums = NULL;
        size_t per;
        int r = 0;

        if (!l || !q || !fn || !edges || n_spans == 0 || n_spans > GC_LEDGER_MAX_STEPS)
                return n_spans > GC_LEDGER_MAX_STEPS ? -E2BIG : -EINVAL;
        for (size_t k = 0; k < n_spans; k++)
                if (edges[k] >= edges[k + 1])
                        return -EINVAL;
        {
                gc_query whole = *q;

                whole.start = edges[0];
                whole.end = edges[n_spans];
                if (!gc__query_valid(l, &whole))
                        return -EINVAL;
        }
        per = GC__PASS_INTERVAL_STEPS / (l->n_iv + 1);
        if (per < 1)
                per = 1;
        if (per > n_spans)
                per = n_spans;
        sums = calloc(per, sizeof(*sums));
        if (!sums)
                return -ENOMEM;
        for (size_t c = 0; r == 0 && c < n_spans; c += per) {
                gc_query part = *q;
                size_t m = n_spans - c < per ? n_spans - c : per;

                part.start = edges[c];
                part.end = edges[c + m];
                r = gc__run(l, &part, 0, edges + c, m, sums);
                for (size_t k = 0; r == 0 && k < m; k++)
                        r = fn(ud, &sums[k]);
                for (size_t k = 0; k < m; k++)
                        gc_cost_summary_free(&sums[k]);
        }
        free(sums);
        return r;
}

void gc_cost_summary_free(gc_cost_summary *s)
{
        if (!s)
                return;
        free(s->rows);
        free(s->idle_nodes);
        memset(s, 0, sizeof(*s));
}
