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
        const char *want[GC_DIM_COUNT];
        const char *hit[GC_DIM_COUNT];
        const char *miss[GC_DIM_COUNT];
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

typedef struct gc__q {
        const gc_ledger *l;
        const gc_query *q;
        gc__filter f;
        int64_t open_end; /* where open intervals stop accruing */

        gc_cost_row *rows;
        size_t n_rows, cap_rows;
        gc__index rows_ix;

        gc__node_acc *nodes;
        size_t n_nodes, cap_nodes;
        gc__index nodes_ix;

        gc_cost_row total, unattributed;
} gc__q;

typedef struct gc__key {
        const gc__q *x;
        const char *const *keys;
} gc__key;

static int gc__row_eq(const void *ctx, size_t ix)
{
        const gc__key *k = ctx;

        return memcmp(k->x->rows[ix].keys, k->keys, sizeof(k->x->rows[ix].keys)) == 0;
}

static int gc__node_eq(const void *ctx, size_t ix)
{
        const gc__key *k = ctx;

        return k->x->nodes[ix].node == k->keys[0];
}

static uint32_t gc__keys_hash(const char *const keys[GC_DIM_COUNT])
{
        uint64_t h = 0;

        for (size_t d = 0; d < GC_DIM_COUNT; d++)
                h = gc__mix(h, keys[d]);
        return gc__fin(h);
}

/* The row of the keys, made when new; may reallocate the rows. NULL when out of memory. */
static gc_cost_row *gc__row_get(gc__q *x, const char *const keys[GC_DIM_COUNT])
{
        gc__key k = {x, keys};
        uint32_t h = gc__keys_hash(keys);
        gc_cost_row *row;
        size_t pos;

        if (gc__index_find(&x->rows_ix, h, gc__row_eq, &k, &pos))
                return &x->rows[x->rows_ix.s[pos].ix - 1];
        if (gc__vec_reserve((void **)&x->rows, &x->cap_rows, x->n_rows + 1, sizeof(*x->rows)) < 0 ||
            gc__index_reserve(&x->rows_ix, x->n_rows + 1) < 0)
                return NULL;
        row = &x->rows[x->n_rows];
        memset(row, 0, sizeof(*row));
        memcpy(row->keys, keys, sizeof(row->keys));
        gc__index_add_new(&x->rows_ix, h, x->n_rows);
        x->n_rows++;
        return row;
}

static gc__node_acc *gc__node_find(const gc__q *x, const char *node)
{
        gc__key k = {x, &node};
        size_t pos;

        if (!gc__index_find(&x->nodes_ix, gc__fin(gc__mix(0, node)), gc__node_eq, &k, &pos))
                return NULL;
        return &x->nodes[x->nodes_ix.s[pos].ix - 1];
}

/* The node's accumulator, made when new; may reallocate. NULL when out of memory. */
static gc__node_acc *gc__node_get(gc__q *x, const char *node)
{
        gc__node_acc *a = gc__node_find(x, node);

        if (a)
                return a;
        if (gc__vec_reserve((void **)&x->nodes, &x->cap_nodes, x->n_nodes + 1, sizeof(*x->nodes)) <
                0 ||
            gc__index_reserve(&x->nodes_ix, x->n_nodes + 1) < 0)
                return NULL;
        a = &x->nodes[x->n_nodes];
        memset(a, 0, sizeof(*a));
        a->node = node;
        a->model_hour = INT64_MIN;
        gc__index_add_new(&x->nodes_ix, gc__fin(gc__mix(0, node)), x->n_nodes);
        x->n_nodes++;
        return a;
}

/* Seconds of [start, end) inside the window; open intervals end where the query says. */
static int64_t gc__overlap(const gc__q *x, int64_t start, int64_t end)
{
        int64_t lo = start > x->q->start ? start : x->q->start;
        int64_t hi = end == GC_OPEN ? x->open_end : end;

        if (hi > x->q->end)
                hi = x->q->end;
        /* lo >= 0 (starts are validated), so hi - lo cannot overflow. */
        return hi > lo ? hi - lo : 0;
}

static int gc__hour_inside(const gc__q *x, int64_t hour)
{
        return hour >= x->q->start && hour + GC__HOUR <= x->q->end;
}

static void gc__row_add(gc_cost_row *row, double gs, double cost, uint32_t pods, uint32_t estimates)
{
        row->gpu_seconds += gs;
        row->cost_usd += cost;
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
                int64_t ov = gc__overlap(x, c->start, c->end);
                gc__node_acc *a;
                double s;

                if (ov <= 0 || !gc__node_filters(x, c->node, c->model, c->capacity_type))
                        continue;
                a = gc__node_get(x, c->node);
                if (!a)
                        return -ENOMEM;
                s = (double)ov * c->geq;
                a->cap_seconds += s;
                a->cap_cost += s / 3600.0 * c->usd_per_gpu_hour;
                a->model = c->model;
                a->capacity_type = c->capacity_type;
                a->model_hour = INT64_MAX;
        }
        for (size_t i = 0; i < l->n_croll; i++) {
                const gc__croll *r = &l->croll[i];
                gc__node_acc *a;

                if (!gc__hour_inside(x, r->hour) ||
                    !gc__node_filters(x, r->node, r->model, r->capacity_type))
                        continue;
                a = gc__node_get(x, r->node);
                if (!a)
                        return -ENOMEM;
                a->cap_seconds += r->geq_seconds;
                a->cap_cost += r->cost_usd;
                if (r->hour > a->model_hour) {
                        a->model = r->model;
                        a->capacity_type = r->capacity_type;
                        a->model_hour = r->hour;
                }
        }
        return 0;
}

/* Adds one contribution to its group, the total and the unattributed part. */
static int gc__account(gc__q *x, const char *const dims[GC_DIM_COUNT], double gs, double cost,
                       uint32_t pods, uint32_t estimates)
{
        const char *keys[GC_DIM_COUNT] = {0};
        gc_cost_row *row;

        for (size_t d = 0; d < GC_DIM_COUNT; d++)
                if (!gc__match(&x->f, (gc_dim)d, dims[d]))
                        return 0;
        for (size_t i = 0; i < x->q->n_by; i++)
                keys[x->q->by[i]] = dims[x->q->by[i]];
        row = gc__row_get(x, keys);
        if (!row)
                return -ENOMEM;
        gc__row_add(row, gs, cost, pods, estimates);
        gc__row_add(&x->total, gs, cost, pods, estimates);
        if (dims[GC_DIM_TEAM] == x->l->unattributed || dims[GC_DIM_PROJECT] == x->l->unattributed)
                gc__row_add(&x->unattributed, gs, cost, pods, estimates);
        return 0;
}

static int gc__usage_pass(gc__q *x)
{
        const gc_ledger *l = x->l;
        const char *dims[GC_DIM_COUNT];
        int r;

        for (size_t i = 0; i < l->n_iv; i++) {
                const gc__iv *v = &l->iv[i];
                int64_t ov = gc__overlap(x, v->start, v->end);
                gc__node_acc *a;
                double gs, cost;

                if (ov <= 0)
                        continue;
                gs = (double)ov * v->geq;
                cost = gs / 3600.0 * v->usd_per_gpu_hour;
                /* Idle is not narrowed by team or project: the node's GPUs sit idle regardless. */
                if (x->n_nodes && (a = gc__node_find(x, v->dims[GC_DIM_NODE])))
                        a->held_seconds += gs;
                r = gc__account(x, v->dims, gs, cost, 1, (v->flags & GC_USAGE_F_ESTIMATE) != 0);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < l->n_roll; i++) {
                const gc__roll *rr = &l->roll[i];
                gc__node_acc *a;

                if (!gc__hour_inside(x, rr->hour))
                        continue;
                if (x->n_nodes && (a = gc__node_find(x, rr->dims[GC_DIM_NODE])))
                        a->held_seconds += rr->gpu_seconds;
                memcpy(dims, rr->dims, sizeof(rr->dims));
                dims[GC_DIM_POD] = l->folded_pod;
                r = gc__account(x, dims, rr->gpu_seconds, rr->cost_usd, 0, 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- ordering ------------------------------------------------------------------------------- */

static int gc__cmp_rows(const gc_cost_row *a, const gc_cost_row *b, const gc_query *q)
{
        if (a->cost_usd != b->cost_usd)
                return a->cost_usd > b->cost_usd ? -1 : 1;
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

        if (a->cost_usd != b->cost_usd)
                return a->cost_usd > b->cost_usd ? -1 : 1;
        if (a->gpu_seconds != b->gpu_seconds)
                return a->gpu_seconds > b->gpu_seconds ? -1 : 1;
        return strcmp(a->keys[GC_DIM_NODE], b->keys[GC_DIM_NODE]);
}

/* ---- the query ------------------------------------------------------------------------------ */

static int gc__query_valid(const gc_query *q)
{
        unsigned seen = 0;

        if (q->start > q->end || q->now < 0 || q->n_by > GC_DIM_COUNT)
                return 0;
        for (size_t i = 0; i < q->n_by; i++) {
                if ((unsigned)q->by[i] >= GC_DIM_COUNT || (seen & (1u << q->by[i])))
                        return 0;
                seen |= 1u << q->by[i];
        }
        return 1;
}

static int gc__idle(gc__q *x, gc_cost_summary *s)
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
                idle[i].cost_usd = a->cap_seconds > 0 ? free_s * (a->cap_cost / a->cap_seconds) : 0;
                s->capacity.gpu_seconds += a->cap_seconds;
                s->capacity.cost_usd += a->cap_cost;
                s->idle.gpu_seconds += idle[i].gpu_seconds;
                s->idle.cost_usd += idle[i].cost_usd;
        }
        qsort(idle, x->n_nodes, sizeof(*idle), gc__cmp_idle);
        s->idle_nodes = idle;
        s->n_idle_nodes = x->n_nodes;
        return 0;
}

int gc_ledger_query(const gc_ledger *l, const gc_query *q, gc_cost_summary *ret)
{
        gc_cost_summary s = {0};
        gc__q x = {0};
        int r;

        if (!l || !q || !ret || !gc__query_valid(q))
                return -EINVAL;
        x.l = l;
        x.q = q;
        memcpy(x.f.want, q->filter, sizeof(x.f.want));
        x.open_end = q->now ? q->now : q->end;
        if (x.open_end > q->end)
                x.open_end = q->end;

        r = gc__capacity_pass(&x);
        if (r == 0)
                r = gc__usage_pass(&x);
        if (r == 0)
                r = gc__sort_rows(&x.rows, x.n_rows, q);
        if (r == 0)
                r = gc__idle(&x, &s);
        if (r < 0)
                goto out;

        s.start = q->start;
        s.end = q->end;
        memcpy(s.by, q->by, sizeof(s.by));
        s.n_by = q->n_by;
        s.rows = x.rows;
        s.n_rows = x.n_rows;
        x.rows = NULL;
        s.total = x.total;
        s.unattributed = x.unattributed;
        *ret = s;
        memset(&s, 0, sizeof(s));
out:
        gc_cost_summary_free(&s);
        free(x.rows);
        gc__index_free(&x.rows_ix);
        free(x.nodes);
        gc__index_free(&x.nodes_ix);
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
