/* ledger: pod and capacity intervals, folding them into hourly rollups, stats and state walks. */
#include "ledger_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- keys --------------------------------------------------------------------------------- */

/* Keys of intervals hash by content, so a lookup needs no interning of a never-seen key. */
static uint32_t gc__str_hash(const char *s)
{
        return gc_hash_fin(gc_hash(s, strlen(s), 0));
}

uint32_t gc__roll_hash(int64_t hour, uint32_t grp)
{
        uint64_t h = ((uint64_t)hour ^ grp) * 0x9e3779b97f4a7c15ULL;

        return gc_hash_fin(h ^ (h >> 32));
}

static uint32_t gc__grp_hash(const char *const dims[GC__ROLL_DIMS], uint32_t lbl)
{
        uint64_t h = lbl;

        for (size_t d = 0; d < GC__ROLL_DIMS; d++)
                h = gc_hash_ptr(h, dims[d]);
        return gc_hash_fin(h);
}

/* ---- label value tuples --------------------------------------------------------------------- */

typedef struct gc__lbl_key {
        const gc_ledger *l;
        const char *const *v;
} gc__lbl_key;

static int gc__lbl_eq(const void *ctx, size_t ix)
{
        const gc__lbl_key *k = ctx;

        return memcmp(k->l->lbl[ix].v, k->v, sizeof(k->l->lbl[ix].v)) == 0;
}

static uint32_t gc__lbl_hash(const char *const v[GC_LABEL_DIMS])
{
        uint64_t h = 0;

        for (size_t i = 0; i < GC_LABEL_DIMS; i++)
                h = gc_hash_ptr(h, v[i]);
        return gc_hash_fin(h);
}

int gc__lbl_get(gc_ledger *l, const char *const v[GC_LABEL_DIMS], uint32_t *ret)
{
        gc__lbl_key k = {l, v};
        uint32_t h = gc__lbl_hash(v);
        size_t pos;

        size_t ix;

        if (gc_index_find(&l->lbl_ix, h, gc__lbl_eq, &k, &pos)) {
                *ret = gc_index_row(&l->lbl_ix, pos);
                return 0;
        }
        if (!l->n_lbl_free && l->n_lbl >= GC__MAX_LIMIT)
                return -E2BIG;
        if ((!l->n_lbl_free &&
             gc__vec_reserve((void **)&l->lbl, &l->cap_lbl, l->n_lbl + 1, sizeof(*l->lbl)) < 0) ||
            gc_index_reserve(&l->lbl_ix, l->lbl_ix.count + 1) < 0)
                return -ENOMEM;
        gc_index_find(&l->lbl_ix, h, gc__lbl_eq, &k, &pos); /* the slot may have moved */
        ix = l->n_lbl_free ? l->lbl_free[--l->n_lbl_free] : l->n_lbl++;
        memcpy(l->lbl[ix].v, v, sizeof(l->lbl[ix].v));
        gc_index_fill(&l->lbl_ix, pos, h, ix);
        *ret = (uint32_t)ix;
        return 0;
}

size_t gc__lbl_count(const gc_ledger *l)
{
        return l->n_lbl - l->n_lbl_free;
}

/* Marks the tuples of one period's rows. */
static void gc__lbl_mark_period(const gc__period *p, uint8_t *used)
{
        for (size_t i = 0; i < p->n_top; i++)
                used[p->top[i].lbl] = 1;
        for (size_t i = 0; i < p->n_rest; i++)
                used[p->rest[i].lbl] = 1;
}

void gc__lbl_sweep(gc_ledger *l, int dropped)
{
        uint8_t *used;
        size_t live = 0;

        if (!l->n_label_keys || (!dropped && gc__lbl_count(l) < 2 * l->lbl_live + 1024))
                return;
        used = calloc(l->n_lbl, 1);
        if (!used)
                return; /* kept: they cost memory, not correctness */
        used[0] = 1;    /* every value GC_UNLABELLED: node rows and restores name it */
        for (size_t i = 0; i < l->n_iv; i++)
                used[l->iv[i].lbl] = 1;
        for (size_t i = 0; i < l->n_grp; i++)
                used[l->grp[i].lbl] = 1;
        for (size_t i = 0; i < l->n_per; i++)
                gc__lbl_mark_period(l->per[i], used);
        for (size_t i = 0; i < l->n_lbl; i++) {
                gc__lbl_key k = {l, l->lbl[i].v};
                size_t pos;

                if (used[i] || !l->lbl[i].v[0]) {
                        live += used[i];
                        continue;
                }
                if (gc__vec_reserve((void **)&l->lbl_free, &l->cap_lbl_free, l->n_lbl_free + 1,
                                    sizeof(*l->lbl_free)) < 0)
                        break;
                if (gc_index_find(&l->lbl_ix, gc__lbl_hash(l->lbl[i].v), gc__lbl_eq, &k, &pos))
                        gc_index_del(&l->lbl_ix, pos);
                memset(l->lbl[i].v, 0, sizeof(l->lbl[i].v));
                l->lbl_free[l->n_lbl_free++] = (uint32_t)i;
        }
        l->lbl_live = live;
        free(used);
}

int gc__lbl_of(gc_ledger *l, const char *const v[GC_LABEL_DIMS], uint32_t *ret)
{
        const char *t[GC_LABEL_DIMS] = {0};

        *ret = 0;
        if (!l->n_label_keys)
                return 0;
        for (size_t i = 0; i < l->n_label_keys; i++) {
                t[i] = v && v[i] && *v[i] ? gc_strpool_intern0(l->pool, v[i]) : l->unlabelled;
                if (!t[i])
                        return -ENOMEM;
        }
        return gc__lbl_get(l, t, ret);
}

void gc_ledger_label_keys(const gc_ledger *l, gc_label_keys *ret)
{
        if (!ret)
                return;
        memset(ret, 0, sizeof(*ret));
        if (!l)
                return;
        memcpy(ret->key, l->label_keys, sizeof(ret->key));
        ret->n = l->n_label_keys;
}

typedef struct gc__iv_key {
        const gc_ledger *l;
        const char *uid;
} gc__iv_key;

static int gc__iv_eq(const void *ctx, size_t ix)
{
        const gc__iv_key *k = ctx;

        const char *u = k->l->iv[ix].uid;

        return u == k->uid || strcmp(u, k->uid) == 0;
}

static int gc__cap_eq(const void *ctx, size_t ix)
{
        const gc__iv_key *k = ctx;

        const char *n = k->l->cap[ix].node;

        return n == k->uid || strcmp(n, k->uid) == 0;
}

typedef struct gc__roll_key {
        const gc_ledger *l;
        int64_t hour;
        uint32_t grp;
} gc__roll_key;

static int gc__roll_eq(const void *ctx, size_t ix)
{
        const gc__roll_key *k = ctx;
        const gc__roll *r = &k->l->roll[ix];

        return r->hour == k->hour && r->grp == k->grp;
}

typedef struct gc__grp_key {
        const gc_ledger *l;
        const char *const *dims;
        uint32_t lbl;
} gc__grp_key;

static int gc__grp_eq(const void *ctx, size_t ix)
{
        const gc__grp_key *k = ctx;

        return k->l->grp[ix].lbl == k->lbl &&
               memcmp(k->l->grp[ix].dims, k->dims, sizeof(k->l->grp[ix].dims)) == 0;
}

/* The group of the dimensions (interned) and label values, made when new. -ENOMEM. */
static int gc__grp_get(gc_ledger *l, const char *const dims[GC__ROLL_DIMS], uint32_t lbl,
                       uint32_t *ret)
{
        gc__grp_key k = {l, dims, lbl};
        uint32_t h = gc__grp_hash(dims, lbl);
        size_t pos;

        if (gc_index_find(&l->grp_ix, h, gc__grp_eq, &k, &pos)) {
                *ret = gc_index_row(&l->grp_ix, pos);
                return 0;
        }
        if (gc__vec_reserve((void **)&l->grp, &l->cap_grp, l->n_grp + 1, sizeof(*l->grp)) < 0 ||
            gc_index_reserve(&l->grp_ix, l->n_grp + 1) < 0)
                return -ENOMEM;
        gc_index_find(&l->grp_ix, h, gc__grp_eq, &k, &pos); /* the slot may have moved */
        memcpy(l->grp[l->n_grp].dims, dims, sizeof(l->grp[l->n_grp].dims));
        l->grp[l->n_grp].lbl = lbl;
        l->grp[l->n_grp].node_row = GC__ROW_PODS;
        if (*dims[GC_DIM_NODE] && !*dims[GC_DIM_NAMESPACE] && !*dims[GC_DIM_PROJECT])
                l->grp[l->n_grp].node_row = *dims[GC_DIM_TEAM] ? GC__ROW_NODE_UNATTR : GC__ROW_NODE;
        gc_index_fill(&l->grp_ix, pos, h, l->n_grp);
        *ret = (uint32_t)l->n_grp++;
        return 0;
}

/*
 * The groups of a row's dimensions (interned): g[0] the pods', g[1] the node's, g[2] the node's
 * unattributed part; UINT32_MAX where there is none. A row that is already a node's (namespace
 * and project "", a node) is only that; a row of a build before the split (namespace and node
 * both set) gives all three, as a pod's interval does.
 */
static int gc__row_groups(gc_ledger *l, const char *const dims[GC__ROLL_DIMS], uint32_t lbl,
                          uint32_t g[3])
{
        const char *d[GC__ROLL_DIMS];
        int node_row = *dims[GC_DIM_NODE] && !*dims[GC_DIM_NAMESPACE] && !*dims[GC_DIM_PROJECT];
        int unattr =
            dims[GC_DIM_TEAM] == l->unattributed || dims[GC_DIM_PROJECT] == l->unattributed;
        int r = 0;

        g[0] = g[1] = g[2] = UINT32_MAX;
        if (node_row)
                return gc__grp_get(l, dims, 0, &g[*dims[GC_DIM_TEAM] ? 2 : 1]);
        memcpy(d, dims, sizeof(d));
        d[GC_DIM_NODE] = l->empty;
        r = gc__grp_get(l, d, lbl, &g[0]);
        if (r == 0 && *dims[GC_DIM_NODE]) {
                memcpy(d, dims, sizeof(d));
                d[GC_DIM_NAMESPACE] = d[GC_DIM_TEAM] = d[GC_DIM_PROJECT] = l->empty;
                r = gc__grp_get(l, d, 0, &g[1]);
                if (r == 0 && unattr) {
                        d[GC_DIM_TEAM] = l->unattributed;
                        r = gc__grp_get(l, d, 0, &g[2]);
                }
        }
        return r;
}

/* Forgets the groups no row names any more, renumbering the rows' (after rows were dropped). */
static void gc__grp_sweep(gc_ledger *l)
{
        uint32_t *map = malloc((l->n_grp + 1) * sizeof(*map));
        size_t n = 0;

        if (!map)
                return; /* kept: they cost memory, not correctness */
        for (size_t i = 0; i < l->n_grp; i++)
                map[i] = UINT32_MAX;
        for (size_t i = 0; i < l->n_roll; i++)
                map[l->roll[i].grp] = 0;
        for (size_t i = 0; i < l->n_grp; i++)
                if (map[i] == 0) {
                        l->grp[n] = l->grp[i];
                        map[i] = (uint32_t)n++;
                }
        l->n_grp = n;
        gc_index_clear(&l->grp_ix);
        for (size_t i = 0; i < n; i++)
                gc_index_add_new(&l->grp_ix, gc__grp_hash(l->grp[i].dims, l->grp[i].lbl), i);
        for (size_t i = 0; i < l->n_roll; i++)
                l->roll[i].grp = map[l->roll[i].grp];
        free(map);
}

/* ---- life ----------------------------------------------------------------------------------- */

gc_ledger *gc_ledger_new(const gc_ledger_opts *o)
{
        gc_ledger *l;

        if (!o || !o->pool || o->max_intervals > GC__MAX_LIMIT ||
            o->max_rollup_rows > GC__MAX_LIMIT ||
            (o->bucket_s != 0 && o->bucket_s != 3600 && o->bucket_s != 1800 &&
             o->bucket_s != 900) ||
            o->top_n > GC_LEDGER_MAX_TOP_N || o->n_label_keys > GC_LABEL_DIMS ||
            (o->n_label_keys && !o->label_keys)) {
                errno = EINVAL;
                return NULL;
        }
        for (size_t i = 0; i < o->n_label_keys; i++) {
                int bad = !o->label_keys[i] || !*o->label_keys[i] ||
                          strlen(o->label_keys[i]) > GC_LABEL_KEY_MAX;

                for (size_t j = 0; !bad && j < i; j++)
                        bad = strcmp(o->label_keys[i], o->label_keys[j]) == 0;
                if (bad) {
                        errno = EINVAL;
                        return NULL;
                }
        }
        l = calloc(1, sizeof(*l));
        if (!l) {
                errno = ENOMEM;
                return NULL;
        }
        l->pool = o->pool;
        l->max_intervals = o->max_intervals ? o->max_intervals : GC_LEDGER_DEFAULT_LIMIT;
        l->max_rollup_rows = o->max_rollup_rows ? o->max_rollup_rows : GC_LEDGER_DEFAULT_LIMIT;
        l->horizon = INT64_MIN;
        l->bucket = o->bucket_s ? o->bucket_s : GC__HOUR;
        l->empty = gc_strpool_intern0(o->pool, "");
        l->unattributed = gc_strpool_intern0(o->pool, GC_UNATTRIBUTED);
        l->folded_pod = gc_strpool_intern0(o->pool, GC_FOLDED_POD);
        l->unlabelled = gc_strpool_intern0(o->pool, GC_UNLABELLED);
        for (size_t i = 0; i < o->n_label_keys; i++) {
                l->label_keys[i] = gc_strpool_intern0(o->pool, o->label_keys[i]);
                if (!l->label_keys[i]) {
                        errno = ENOMEM;
                        return gc_ledger_free(l);
                }
        }
        l->n_label_keys = o->n_label_keys;
        l->top_n = o->top_n ? o->top_n : GC_LEDGER_DEFAULT_TOP_N;
        l->period_since = INT64_MIN;
        l->coarse_to = INT64_MIN;
        l->tz = o->tz;
        if (!l->tz && gc_tz_fixed(0, &l->own_tz) == 0)
                l->tz = l->own_tz;
        if (!l->empty || !l->unattributed || !l->folded_pod || !l->unlabelled || !l->tz) {
                errno = ENOMEM;
                return gc_ledger_free(l);
        }
        if (l->n_label_keys) {
                uint32_t none;

                /* Tuple 0: every value GC_UNLABELLED (rows of no label, node rows). */
                if (gc__lbl_of(l, NULL, &none) < 0) {
                        errno = ENOMEM;
                        return gc_ledger_free(l);
                }
        }
        return l;
}

gc_ledger *gc_ledger_free(gc_ledger *l)
{
        if (!l)
                return NULL;
        free(l->iv);
        gc_index_free(&l->iv_ix);
        free(l->cap);
        gc_index_free(&l->cap_ix);
        free(l->roll);
        gc_index_free(&l->roll_ix);
        free(l->grp);
        gc_index_free(&l->grp_ix);
        free(l->lbl);
        gc_index_free(&l->lbl_ix);
        free(l->lbl_free);
        free(l->crun);
        gc_index_free(&l->crun_ix);
        gc__tier_free(l);
        gc_tz_free(l->own_tz);
        free(l);
        return NULL;
}

/* ---- intervals ------------------------------------------------------------------------------ */

static int gc__valid_span(int64_t start, int64_t end)
{
        if (start < 0 || start > GC__TIME_MAX)
                return 0;
        return end == GC_OPEN || (end >= start && end <= GC__TIME_MAX);
}

static int gc__valid_money(double geq, double price)
{
        return isfinite(geq) && geq >= 0 && isfinite(price) && price >= 0;
}

/* An adjustment holds no GPUs, within one bucket; nothing else carries usage figures. */
static int gc__valid_use(const gc_usage *u)
{
        if (!(u->flags & GC_USAGE_F_ADJUST))
                return u->adj_cost == 0 && u->covered_cost == 0;
        return u->geq == 0 && u->end != GC_OPEN && u->end > u->start &&
               u->end - u->start <= GC__HOUR && isfinite(u->adj_cost) &&
               isfinite(u->covered_cost) && u->covered_cost >= 0 &&
               u->covered_cost + u->adj_cost >= -1e-9 * (1 + u->covered_cost);
}

static const char *gc__intern(const gc_ledger *l, const char *s)
{
        return s ? gc_strpool_intern0(l->pool, s) : l->empty;
}

/* Removes item ix of a dense array indexed by t, whose slot is at pos; the last item moves in. */
static void gc__swap_remove(gc_index *t, size_t pos, void *arr, size_t *n, size_t size, size_t ix,
                            uint32_t last_hash)
{
        char *a = arr;
        size_t last = *n - 1;

        gc_index_del(t, pos);
        if (ix != last) {
                memcpy(a + ix * size, a + last * size, size);
                gc_index_renumber(t, last_hash, last, ix);
        }
        *n = last;
}

static void gc__iv_remove(gc_ledger *l, size_t pos, size_t ix)
{
        uint32_t lh = gc__str_hash(l->iv[l->n_iv - 1].uid);

        if (l->iv[ix].end == GC_OPEN)
                l->n_open--;
        gc__swap_remove(&l->iv_ix, pos, l->iv, &l->n_iv, sizeof(*l->iv), ix, lh);
}

static void gc__cap_remove(gc_ledger *l, size_t pos, size_t ix)
{
        uint32_t lh = gc__str_hash(l->cap[l->n_cap - 1].node);

        gc__swap_remove(&l->cap_ix, pos, l->cap, &l->n_cap, sizeof(*l->cap), ix, lh);
}

int gc_ledger_put_usage(gc_ledger *l, const gc_usage *u)
{
        gc__iv v = {0};
        gc__iv_key k;
        uint32_t h;
        size_t pos;
        int r;

        if (!l || !u || !u->pod_uid || !*u->pod_uid || !gc__valid_span(u->start, u->end) ||
            !gc__valid_money(u->geq, u->price_per_gpu_hour) || !gc__valid_use(u))
                return -EINVAL;
        v.uid = gc_strpool_intern0(l->pool, u->pod_uid);
        if (!v.uid)
                return -ENOMEM;
        for (size_t d = 0; d < GC_DIM_COUNT; d++) {
                v.dims[d] = gc__intern(l, u->dims[d]);
                if (!v.dims[d])
                        return -ENOMEM;
        }
        r = gc__lbl_of(l, u->labels, &v.lbl);
        if (r < 0)
                return r;
        v.geq = u->geq;
        v.price_per_gpu_hour = u->price_per_gpu_hour;
        v.start = u->start;
        v.end = u->end;
        v.flags = u->flags;
        v.use.adj = u->adj_cost;
        v.use.covered = u->covered_cost;

        k.l = l;
        k.uid = v.uid;
        h = gc__str_hash(v.uid);
        if (gc_index_find(&l->iv_ix, h, gc__iv_eq, &k, &pos)) {
                gc__iv *old = &l->iv[gc_index_row(&l->iv_ix, pos)];

                l->n_open += (v.end == GC_OPEN) - (old->end == GC_OPEN);
                *old = v;
                return 0;
        }
        /* Unknown pod: what lies before the horizon is folded already, or was never seen. */
        if (v.start < l->horizon) {
                if (v.end <= l->horizon)
                        return 0;
                v.start = l->horizon;
        }
        if (l->n_iv >= l->max_intervals)
                return -E2BIG;
        r = gc__vec_reserve((void **)&l->iv, &l->cap_iv, l->n_iv + 1, sizeof(*l->iv));
        if (r < 0)
                return r;
        r = gc_index_reserve(&l->iv_ix, l->n_iv + 1);
        if (r < 0)
                return r;
        l->iv[l->n_iv] = v;
        gc_index_add_new(&l->iv_ix, h, l->n_iv);
        l->n_iv++;
        l->n_open += v.end == GC_OPEN;
        return 0;
}

gc__iv *gc__iv_find(const gc_ledger *l, const char *uid)
{
        gc__iv_key k = {l, uid};
        size_t pos;

        if (!gc_index_find(&l->iv_ix, gc__str_hash(uid), gc__iv_eq, &k, &pos))
                return NULL;
        return &l->iv[gc_index_row(&l->iv_ix, pos)];
}

int gc_ledger_forget_usage(gc_ledger *l, const char *pod_uid)
{
        gc__iv_key k;
        size_t pos;

        if (!l || !pod_uid)
                return -EINVAL;
        k.l = l;
        k.uid = pod_uid;
        if (!gc_index_find(&l->iv_ix, gc__str_hash(k.uid), gc__iv_eq, &k, &pos))
                return -ENOENT;
        gc__iv_remove(l, pos, gc_index_row(&l->iv_ix, pos));
        return 0;
}

int gc_ledger_get_usage(const gc_ledger *l, const char *pod_uid, gc_usage *ret)
{
        const gc__iv *iv;
        gc__iv_key k;
        size_t pos;

        if (!l || !pod_uid || !ret)
                return -EINVAL;
        k.l = l;
        k.uid = pod_uid;
        if (!gc_index_find(&l->iv_ix, gc__str_hash(k.uid), gc__iv_eq, &k, &pos))
                return -ENOENT;
        iv = &l->iv[gc_index_row(&l->iv_ix, pos)];
        memset(ret, 0, sizeof(*ret));
        ret->pod_uid = iv->uid;
        memcpy(ret->dims, iv->dims, sizeof(ret->dims));
        if (l->n_label_keys)
                memcpy(ret->labels, l->lbl[iv->lbl].v, sizeof(ret->labels));
        ret->geq = iv->geq;
        ret->price_per_gpu_hour = iv->price_per_gpu_hour;
        ret->start = iv->start;
        ret->end = iv->end;
        ret->flags = iv->flags;
        ret->adj_cost = iv->use.adj;
        ret->covered_cost = iv->use.covered;
        return 0;
}

int gc_ledger_put_capacity(gc_ledger *l, const gc_capacity *c)
{
        gc__cap v = {0};
        gc__iv_key k;
        uint32_t h;
        size_t pos;
        int found, r;

        if (!l || !c || !c->node || !*c->node || !gc__valid_span(c->start, c->end) ||
            !gc__valid_money(c->geq, c->price_per_gpu_hour))
                return -EINVAL;
        v.node = gc_strpool_intern0(l->pool, c->node);
        v.model = gc__intern(l, c->model);
        v.capacity_type = gc__intern(l, c->capacity_type);
        if (!v.node || !v.model || !v.capacity_type)
                return -ENOMEM;
        v.geq = c->geq;
        v.price_per_gpu_hour = c->price_per_gpu_hour;
        v.start = c->start;
        v.end = c->end;

        k.l = l;
        k.uid = v.node;
        h = gc__str_hash(v.node);
        found = gc_index_find(&l->cap_ix, h, gc__cap_eq, &k, &pos);
        /* A node is re-sent with its creation time on every update; never count folded hours. */
        v.folded_to = found ? l->cap[gc_index_row(&l->cap_ix, pos)].folded_to : l->horizon;
        if (v.start < v.folded_to) {
                if (v.end <= v.folded_to) {
                        if (found)
                                gc__cap_remove(l, pos, gc_index_row(&l->cap_ix, pos));
                        return 0;
                }
                v.start = v.folded_to;
        }
        if (found) {
                l->cap[gc_index_row(&l->cap_ix, pos)] = v;
                return 0;
        }
        if (l->n_cap >= l->max_intervals)
                return -E2BIG;
        r = gc__vec_reserve((void **)&l->cap, &l->cap_cap, l->n_cap + 1, sizeof(*l->cap));
        if (r < 0)
                return r;
        r = gc_index_reserve(&l->cap_ix, l->n_cap + 1);
        if (r < 0)
                return r;
        l->cap[l->n_cap] = v;
        gc_index_add_new(&l->cap_ix, h, l->n_cap);
        l->n_cap++;
        return 0;
}

/* ---- rollups -------------------------------------------------------------------------------- */

static size_t gc__rows(const gc_ledger *l)
{
        return l->n_roll + l->n_crun;
}

/* Makes room for `more` rows beyond the current ones, or -E2BIG; may reallocate. */
static int gc__rows_reserve(gc_ledger *l, size_t more_roll, size_t more_runs)
{
        int r;

        if (more_roll + more_runs > l->max_rollup_rows - gc__rows(l))
                return -E2BIG;
        r = gc__vec_reserve((void **)&l->roll, &l->cap_roll, l->n_roll + more_roll,
                            sizeof(*l->roll));
        if (r == 0)
                r = gc_index_reserve(&l->roll_ix, l->n_roll + more_roll);
        if (r == 0)
                r = gc__crun_reserve(l, more_runs);
        return r;
}

/* Adds into the (hour, group) row; room must have been reserved when the row is new. */
static void gc__roll_add(gc_ledger *l, int64_t hour, uint32_t grp, double gpu_seconds, double cost,
                         gc__use use)
{
        gc__roll_key k = {l, hour, grp};
        uint32_t h = gc__roll_hash(hour, grp);
        gc__roll *row;
        size_t pos;

        if (gc_index_find(&l->roll_ix, h, gc__roll_eq, &k, &pos)) {
                row = &l->roll[gc_index_row(&l->roll_ix, pos)];
        } else {
                row = &l->roll[l->n_roll];
                memset(row, 0, sizeof(*row));
                row->hour = hour;
                row->grp = grp;
                gc_index_fill(&l->roll_ix, pos, h, l->n_roll);
                l->n_roll++;
        }
        row->gpu_seconds += gpu_seconds;
        row->cost += cost;
        gc__use_add(&row->use, use);
}

/*
 * Counts the hour rows a span [start, end) of `geq` would add, from hour `first` on; stops
 * counting past `cap` (the caller only needs to know it will not fit).
 */
static size_t gc__missing_hours(const gc_ledger *l, int64_t start, int64_t end, int64_t first,
                                int any, uint32_t grp, size_t cap)
{
        size_t missing = 0;
        int64_t h = gc__floor_bucket(start, l->bucket);

        if (!any || grp == UINT32_MAX)
                return 0;
        if (h < first)
                h = first;
        for (; h < end && missing <= cap; h += l->bucket) {
                gc__roll_key k = {l, h, grp};
                size_t pos;

                missing +=
                    !gc_index_find(&l->roll_ix, gc__roll_hash(h, grp), gc__roll_eq, &k, &pos);
        }
        return missing;
}

/* Splits [start, end) per hour from hour `first` on; room must have been reserved. An
 * adjustment (within one bucket of the ledger's or a coarser one's, so within at most 4 of
 * this one's) goes to its buckets by their share of its span. */
static void gc__fold_span(gc_ledger *l, int64_t start, int64_t end, int64_t first, double geq,
                          double price_per_gpu_hour, gc__use use, uint32_t grp)
{
        int64_t h = gc__floor_bucket(start, l->bucket);
        int adjust = use.adj != 0 || use.covered != 0;

        if ((geq <= 0 && !adjust) || grp == UINT32_MAX)
                return;
        if (h < first)
                h = first;
        for (; h < end; h += l->bucket) {
                int64_t lo = start > h ? start : h;
                int64_t hi = end < h + l->bucket ? end : h + l->bucket;
                double gs = (double)(hi - lo) * geq;
                double cost = gs / 3600.0 * price_per_gpu_hour;
                double part = (double)(hi - lo) / (double)(end - start);
                gc__use u = {use.adj * part, use.covered * part};

                if (hi <= lo)
                        continue;
                gc__roll_add(l, h, grp, gs, cost, u);
        }
}

/* The rows are now the first n: rebuilds their index and forgets groups none names. */
static void gc__roll_shrink(gc_ledger *l, size_t n)
{
        if (n == l->n_roll)
                return;
        l->n_roll = n;
        gc_index_clear(&l->roll_ix);
        gc__grp_sweep(l);
        for (size_t i = 0; i < n; i++)
                gc_index_add_new(&l->roll_ix, gc__roll_hash(l->roll[i].hour, l->roll[i].grp), i);
}

/* Drops rows of hours before `first` and rebuilds the indexes when any went. */
static void gc__drop_old(gc_ledger *l, int64_t first)
{
        size_t n = 0;

        for (size_t i = 0; i < l->n_roll; i++)
                if (l->roll[i].hour >= first)
                        l->roll[n++] = l->roll[i];
        gc__roll_shrink(l, n);
        gc__crun_drop_old(l, first);
}

static int64_t gc__clamp_time(int64_t t)
{
        if (t < -GC__TIME_MAX)
                return -GC__TIME_MAX;
        return t > GC__TIME_MAX ? GC__TIME_MAX : t;
}

int gc_ledger_fold(gc_ledger *l, int64_t before, int64_t keep_since)
{
        int64_t fold_to, first;
        uint32_t grp[3];
        size_t i, rows;
        int folded = 0, r = 0, dropped;

        if (!l)
                return -EINVAL;
        fold_to = gc__floor_bucket(gc__clamp_time(before), l->bucket);
        first = gc__floor_bucket(gc__clamp_time(keep_since), l->bucket);
        rows = l->n_roll + l->n_per;
        gc__drop_old(l, first);
        gc__tier_drop_old(l, keep_since);
        dropped = l->n_roll + l->n_per < rows;

        /* Each interval folds whole or not at all, so a limit hit leaves no half-counted pod. */
        for (i = 0; i < l->n_iv;) {
                gc__iv *v = &l->iv[i];
                size_t missing, pos;
                gc__iv_key k = {l, v->uid};

                if (v->end > fold_to) {
                        i++;
                        continue;
                }
                r = gc__row_groups(l, v->dims, v->lbl, grp);
                if (r < 0)
                        break;
                v = &l->iv[i];
                missing = 0;
                for (size_t g = 0; g < 3; g++)
                        missing += gc__missing_hours(l, v->start, v->end, first,
                                                     v->geq > 0 || (v->flags & GC_USAGE_F_ADJUST),
                                                     grp[g], l->max_rollup_rows - gc__rows(l));
                r = gc__rows_reserve(l, missing, 0);
                if (r == 0)
                        r = gc__tier_fold(l, &l->iv[i], keep_since);
                if (r < 0)
                        break;
                v = &l->iv[i];
                for (size_t g = 0; g < 3; g++)
                        gc__fold_span(l, v->start, v->end, first, v->geq, v->price_per_gpu_hour,
                                      v->use, grp[g]);
                gc_index_find(&l->iv_ix, gc__str_hash(v->uid), gc__iv_eq, &k, &pos);
                gc__iv_remove(l, pos, i);
                if (folded < INT32_MAX)
                        folded++;
        }
        if (fold_to > l->horizon)
                l->horizon = fold_to;
        gc__tier_compact(l);
        gc__lbl_sweep(l, dropped);
        if (r < 0)
                return r;

        for (i = 0; i < l->n_cap;) {
                gc__cap *c = &l->cap[i];
                int64_t end = c->end < fold_to ? c->end : fold_to;
                size_t pos;

                if (c->start >= fold_to) {
                        i++;
                        continue;
                }
                /* A partial first bucket, the whole ones, a partial last one: three runs. */
                r = gc__rows_reserve(l, 0, 3);
                if (r < 0)
                        return r;
                c = &l->cap[i];
                gc__crun_fold(l, c, end, first);
                if (c->end <= fold_to) {
                        gc__iv_key k = {l, c->node};

                        gc_index_find(&l->cap_ix, gc__str_hash(c->node), gc__cap_eq, &k, &pos);
                        gc__cap_remove(l, pos, i);
                        continue;
                }
                c->start = fold_to;
                c->folded_to = fold_to;
                i++;
        }
        return folded;
}

/* ---- coarsening: old buckets kept only in periods -------------------------------------------- */

int gc_ledger_coarsen(gc_ledger *l, int64_t before)
{
        int64_t to, from;
        size_t n = 0;
        int r = 0;

        if (!l)
                return -EINVAL;
        to = gc__floor_bucket(gc__clamp_time(before), l->bucket);
        if (to > l->horizon)
                to = l->horizon; /* only closed books: INT64_MIN when nothing folded yet */
        from = gc__coarse_from(l);
        if (to == INT64_MIN || to <= from)
                return 0;
        for (size_t i = 0; i < l->n_roll; i++) {
                gc__roll rr = l->roll[i];
                const gc__grp *g = &l->grp[rr.grp];
                int drop = rr.hour >= from && rr.hour < to;

                /* Period history has the pods' figures; a node's held seconds move into it. */
                if (drop && g->node_row != GC__ROW_PODS) {
                        if (r == 0)
                                r = gc__tier_add_node(l, rr.hour, g->dims[GC_DIM_NODE],
                                                      g->dims[GC_DIM_MODEL],
                                                      g->dims[GC_DIM_CAPACITY_TYPE],
                                                      g->node_row == GC__ROW_NODE_UNATTR,
                                                      rr.gpu_seconds, rr.cost, rr.use);
                        drop = r == 0; /* past a failure the rest stay by the hour */
                }
                if (!drop)
                        l->roll[n++] = rr;
        }
        gc__roll_shrink(l, n);
        if (to > l->coarse_to)
                l->coarse_to = to;
        return r;
}

int gc_ledger_set_coarse_to(gc_ledger *l, int64_t to)
{
        if (l && to == INT64_MIN)
                return 0;
        if (!l || to < 0 || to > GC__TIME_MAX || to % GC__QUARTER != 0)
                return -EINVAL;
        if (to > l->coarse_to)
                l->coarse_to = to;
        return 0;
}

int64_t gc_ledger_coarse_to(const gc_ledger *l)
{
        return l ? l->coarse_to : INT64_MIN;
}

int gc_ledger_span_whole(const gc_ledger *l, int64_t start, int64_t end)
{
        static const gc_tz_unit units[] = {GC_TZ_DAY, GC_TZ_WEEK, GC_TZ_MONTH};

        if (!l || l->coarse_to == INT64_MIN || start >= l->coarse_to || end <= gc__coarse_from(l))
                return 1;
        /* A day, week or month: period history holds what its coarsened buckets held, and one
         * it does not hold had nothing folded into it (coarsening makes the periods it fills). */
        for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++)
                if (gc_tz_period_start(l->tz, units[u], start) == start &&
                    gc_tz_period_add(l->tz, units[u], start, 1) == end)
                        return 1;
        return 0;
}

int gc_ledger_steps_whole(const gc_ledger *l, int64_t start, int64_t end, int64_t step_s)
{
        if (step_s <= 0)
                return gc_ledger_span_whole(l, start, end);
        if (!l || l->coarse_to == INT64_MIN || start >= l->coarse_to || end <= gc__coarse_from(l))
                return 1;
        for (int64_t t = start; t < end; t += step_s)
                if (!gc_ledger_span_whole(l, t, end - t <= step_s ? end : t + step_s))
                        return 0;
        return 1;
}

/* ---- stats and state ------------------------------------------------------------------------ */

void gc_ledger_stats_get(const gc_ledger *l, gc_ledger_stats *ret)
{
        gc_ledger_stats s = {0};

        if (!ret)
                return;
        s.horizon = INT64_MIN;
        if (l) {
                s.intervals = l->n_iv;
                s.open_intervals = l->n_open;
                s.capacities = l->n_cap;
                s.rollup_rows = l->n_roll;
                for (size_t i = 0; i < l->n_crun; i++)
                        s.rollup_rows += (size_t)l->crun[i].n;
                s.capacity_runs = l->n_crun;
                s.periods = l->n_per;
                s.period_rows = l->n_prows;
                s.label_tuples = l->n_label_keys ? gc__lbl_count(l) : 0;
                s.horizon = l->horizon;
                s.bytes = gc__tier_bytes(l) + sizeof(*l) + l->cap_iv * sizeof(*l->iv) +
                          l->cap_cap * sizeof(*l->cap) + l->cap_roll * sizeof(*l->roll) +
                          l->cap_grp * sizeof(*l->grp) + gc_index_bytes(&l->grp_ix) +
                          l->cap_lbl * sizeof(*l->lbl) + gc_index_bytes(&l->lbl_ix) +
                          l->cap_lbl_free * sizeof(*l->lbl_free) + l->cap_crun * sizeof(*l->crun) +
                          gc_index_bytes(&l->iv_ix) + gc_index_bytes(&l->cap_ix) +
                          gc_index_bytes(&l->roll_ix) + gc_index_bytes(&l->crun_ix);
        }
        *ret = s;
}

int gc_ledger_visit(const gc_ledger *l, const gc_ledger_visitor *v, void *ud)
{
        int r;

        if (!l || !v)
                return -EINVAL;
        for (size_t i = 0; v->usage && i < l->n_iv; i++) {
                const gc__iv *iv = &l->iv[i];
                gc_usage u = {0};

                u.pod_uid = iv->uid;
                memcpy(u.dims, iv->dims, sizeof(u.dims));
                if (l->n_label_keys)
                        memcpy(u.labels, l->lbl[iv->lbl].v, sizeof(u.labels));
                u.geq = iv->geq;
                u.price_per_gpu_hour = iv->price_per_gpu_hour;
                u.start = iv->start;
                u.end = iv->end;
                u.flags = iv->flags;
                u.adj_cost = iv->use.adj;
                u.covered_cost = iv->use.covered;
                if ((r = v->usage(ud, &u)) != 0)
                        return r;
        }
        for (size_t i = 0; v->capacity && i < l->n_cap; i++) {
                const gc__cap *cp = &l->cap[i];
                gc_capacity c = {
                    cp->node,  cp->model, cp->capacity_type, cp->geq, cp->price_per_gpu_hour,
                    cp->start, cp->end};

                if ((r = v->capacity(ud, &c)) != 0)
                        return r;
        }
        for (size_t i = 0; v->rollup && i < l->n_roll; i++) {
                const gc__roll *rr = &l->roll[i];
                gc_rollup o = {0};

                o.hour = rr->hour;
                memcpy(o.dims, l->grp[rr->grp].dims, sizeof(l->grp[rr->grp].dims));
                if (l->n_label_keys)
                        memcpy(o.labels, l->lbl[l->grp[rr->grp].lbl].v, sizeof(o.labels));
                o.gpu_seconds = rr->gpu_seconds;
                o.cost = rr->cost;
                o.adj_cost = rr->use.adj;
                o.covered_cost = rr->use.covered;
                if ((r = v->rollup(ud, &o)) != 0)
                        return r;
        }
        if (v->capacity_rollup && (r = gc__crun_visit(l, v->capacity_rollup, ud)) != 0)
                return r;
        return v->period ? gc__tier_visit(l, v->period, ud) : 0;
}

int gc_rollup_is_node(const gc_rollup *r)
{
        return r && r->dims[GC_DIM_NODE] && *r->dims[GC_DIM_NODE] &&
               (!r->dims[GC_DIM_NAMESPACE] || !*r->dims[GC_DIM_NAMESPACE]) &&
               (!r->dims[GC_DIM_PROJECT] || !*r->dims[GC_DIM_PROJECT]);
}

int64_t gc_ledger_period_since(const gc_ledger *l)
{
        return l ? l->period_since : INT64_MIN;
}

static int gc__valid_row(int64_t hour, double seconds, double cost)
{
        return hour >= 0 && hour <= GC__TIME_MAX && hour % GC__QUARTER == 0 && isfinite(seconds) &&
               seconds >= 0 && isfinite(cost) && cost >= 0;
}

int gc_ledger_add_rollup(gc_ledger *l, const gc_rollup *rw)
{
        const char *dims[GC__ROLL_DIMS];
        gc__roll_key k;
        size_t pos;
        uint32_t grp[3], lbl;
        int64_t hour;
        int r;

        if (!l || !rw || !gc__valid_row(rw->hour, rw->gpu_seconds, rw->cost) ||
            !isfinite(rw->adj_cost) || !isfinite(rw->covered_cost) || rw->covered_cost < 0)
                return -EINVAL;
        /* A row of a finer ledger goes into the bucket holding it (docs/ledger.md). */
        hour = gc__floor_bucket(rw->hour, l->bucket);
        for (size_t d = 0; d < GC__ROLL_DIMS; d++) {
                dims[d] = gc__intern(l, rw->dims[d]);
                if (!dims[d])
                        return -ENOMEM;
        }
        r = gc__lbl_of(l, rw->labels, &lbl);
        if (r == 0)
                r = gc__row_groups(l, dims, lbl, grp);
        for (size_t g = 0; r == 0 && g < 3; g++) {
                if (grp[g] == UINT32_MAX)
                        continue;
                k.l = l;
                k.hour = hour;
                k.grp = grp[g];
                if (!gc_index_find(&l->roll_ix, gc__roll_hash(hour, grp[g]), gc__roll_eq, &k, &pos))
                        r = gc__rows_reserve(l, 1, 0);
                if (r == 0)
                        gc__roll_add(l, hour, grp[g], rw->gpu_seconds, rw->cost,
                                     (gc__use){rw->adj_cost, rw->covered_cost});
        }
        return r;
}

int gc_ledger_add_capacity_rollup(gc_ledger *l, const gc_capacity_rollup *rw)
{
        const char *node, *model, *ctype;
        int64_t hour;
        int r;

        if (!l || !rw || !rw->node || !*rw->node ||
            !gc__valid_row(rw->hour, rw->geq_seconds, rw->cost))
                return -EINVAL;
        hour = gc__floor_bucket(rw->hour, l->bucket);
        node = gc_strpool_intern0(l->pool, rw->node);
        model = gc__intern(l, rw->model);
        ctype = gc__intern(l, rw->capacity_type);
        if (!node || !model || !ctype)
                return -ENOMEM;
        /* A bucket's own run, or the node's latest grown by it. */
        r = gc__rows_reserve(l, 0, 1);
        if (r < 0)
                return r;
        gc__crun_add(l, node, model, ctype, hour, 1, rw->geq_seconds, rw->cost);
        return 0;
}

int64_t gc_ledger_granularity(const gc_ledger *l)
{
        return l ? l->bucket : GC__HOUR;
}

int gc_ledger_set_horizon(gc_ledger *l, int64_t horizon)
{
        if (l && horizon == INT64_MIN) /* a ledger that never folded */
                return 0;
        if (!l || horizon < 0 || horizon > GC__TIME_MAX || horizon % GC__QUARTER != 0)
                return -EINVAL;
        if (horizon <= l->horizon)
                return 0;
        l->horizon = horizon;
        for (size_t i = 0; i < l->n_cap; i++) {
                gc__cap *c = &l->cap[i];
                int64_t to = c->start < horizon ? c->start : horizon;

                if (to > c->folded_to)
                        c->folded_to = to;
        }
        return 0;
}
