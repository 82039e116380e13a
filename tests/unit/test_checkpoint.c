/* test_checkpoint: ledger round trips through chunks, refusals of partial or mixed writes,
 * estimates. */
#include <check.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint/checkpoint.h"
#include "ledger/ledger.h"
#include "util/util.h"

#define H   ((int64_t)3600)
#define DAY ((int64_t)86400)

typedef struct fixture {
        gc_strpool *pool;
        gc_ledger *l;
} fixture;

static void fx_new(fixture *f)
{
        gc_ledger_opts o = {0};

        f->pool = gc_strpool_new(64u << 20);
        ck_assert_ptr_nonnull(f->pool);
        o.pool = f->pool;
        f->l = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(f->l);
}

static void fx_free(fixture *f)
{
        f->l = gc_ledger_free(f->l);
        f->pool = gc_strpool_free(f->pool);
}

/* Monday 2026-11-02 00:00 UTC. */
static int64_t t0(void)
{
        return gc_days_from_civil(2026, 11, 2) * DAY;
}

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
        rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
        return (uint32_t)(rng_state >> 33) % n;
}

/* When set, put_pod gives pods label values (by their uid's last digits; some none). */
static int with_labels;

static void put_pod(gc_ledger *l, const char *uid, const char *ns, const char *team,
                    const char *project, const char *node, const char *model, double geq,
                    double price, int64_t start, int64_t end, uint32_t flags)
{
        static const char *const ccs[] = {"cc-1", "cc-2", "cc-3"};
        static const char *const exps[] = {"e-a", "e-b", NULL, "e-c"};
        size_t len = strlen(uid);
        gc_usage u;

        memset(&u, 0, sizeof(u));
        if (with_labels && len >= 2) {
                u.labels[0] = ccs[(unsigned char)uid[len - 1] % 3];
                u.labels[1] = exps[(unsigned char)uid[len - 2] % 4];
        }
        u.pod_uid = uid;
        u.dims[GC_DIM_NAMESPACE] = ns;
        u.dims[GC_DIM_TEAM] = team;
        u.dims[GC_DIM_PROJECT] = project;
        u.dims[GC_DIM_MODEL] = model;
        u.dims[GC_DIM_CAPACITY_TYPE] = "on-demand";
        u.dims[GC_DIM_NODE] = node;
        u.dims[GC_DIM_POD] = uid;
        u.geq = geq;
        u.price_per_gpu_hour = price;
        u.start = start;
        u.end = end;
        u.flags = flags;
        ck_assert_int_eq(gc_ledger_put_usage(l, &u), 0);
}

/*
 * 40 nodes and 6,000 pods over 12 days from t0: short and long, open (about 1 in 10) and
 * closed, MIG shares (1/7, 3/7) and whole GPUs, some estimates; then history before day 6 is
 * folded into hourly rollups, so the ledger holds every kind of record and a horizon.
 */
static void fill_big(gc_ledger *l, int64_t *ret_now)
{
        static const double shares[] = {1.0, 2.0, 1.0 / 7.0, 3.0 / 7.0, 0.5};
        static const char *const models[] = {"NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB",
                                             "NVIDIA-L4"};
        char uid[32], ns[16], team[16], project[16], node[16];
        int64_t base = t0();

        rng_state = 42;
        for (int i = 0; i < 40; i++) {
                gc_capacity c;

                snprintf(node, sizeof(node), "node-%02d", i);
                memset(&c, 0, sizeof(c));
                c.node = node;
                c.model = models[i % 3];
                c.capacity_type = i % 4 == 0 ? "spot" : "on-demand";
                c.geq = 8;
                c.price_per_gpu_hour = 2.5 + i * 0.37;
                c.start = base - (int64_t)rnd(3) * DAY + rnd(3600);
                c.end = i % 13 == 5 ? base + 9 * DAY + 1234 : GC_OPEN;
                ck_assert_int_eq(gc_ledger_put_capacity(l, &c), 0);
        }
        for (int i = 0; i < 6000; i++) {
                int n = (int)rnd(40);
                int64_t start = base + (int64_t)rnd((uint32_t)(11 * DAY));
                int64_t end = rnd(10) == 0 ? GC_OPEN : start + 30 + (int64_t)rnd(2 * DAY);

                snprintf(uid, sizeof(uid), "uid-%05d", i);
                snprintf(ns, sizeof(ns), "ns-%d", i % 30);
                snprintf(team, sizeof(team), "team-%d", i % 12);
                snprintf(project, sizeof(project), "proj-%d", i % 40);
                snprintf(node, sizeof(node), "node-%02d", n);
                put_pod(l, uid, ns, i % 17 == 3 ? GC_UNATTRIBUTED : team, project, node,
                        models[n % 3], shares[rnd(5)], 2.5 + n * 0.37, start, end,
                        rnd(20) == 0 ? GC_USAGE_F_ESTIMATE : 0);
        }
        ck_assert_int_gt(gc_ledger_fold(l, base + 6 * DAY + 1800, base - DAY), 0);
        *ret_now = base + 12 * DAY;
}

/* ---- comparing two ledgers record by record (bit for bit) -------------------------------- */

typedef struct records {
        gc_usage *u;
        size_t n_u;
        gc_capacity *c;
        size_t n_c;
        gc_rollup *r;
        size_t n_r;
        gc_capacity_rollup *cr;
        size_t n_cr;
} records;

static int grab_u(void *ud, const gc_usage *u)
{
        records *rs = ud;

        /* Doubling: sanitizers make every realloc a copy. */
        if ((rs->n_u & (rs->n_u - 1)) == 0)
                rs->u = realloc(rs->u, (rs->n_u ? 2 * rs->n_u : 1) * sizeof(*rs->u));
        rs->u[rs->n_u++] = *u;
        return 0;
}

static int grab_c(void *ud, const gc_capacity *c)
{
        records *rs = ud;

        /* Doubling: sanitizers make every realloc a copy. */
        if ((rs->n_c & (rs->n_c - 1)) == 0)
                rs->c = realloc(rs->c, (rs->n_c ? 2 * rs->n_c : 1) * sizeof(*rs->c));
        rs->c[rs->n_c++] = *c;
        return 0;
}

static int grab_r(void *ud, const gc_rollup *r)
{
        records *rs = ud;

        /* Doubling: sanitizers make every realloc a copy. */
        if ((rs->n_r & (rs->n_r - 1)) == 0)
                rs->r = realloc(rs->r, (rs->n_r ? 2 * rs->n_r : 1) * sizeof(*rs->r));
        rs->r[rs->n_r++] = *r;
        return 0;
}

static int grab_cr(void *ud, const gc_capacity_rollup *r)
{
        records *rs = ud;

        /* Doubling: sanitizers make every realloc a copy. */
        if ((rs->n_cr & (rs->n_cr - 1)) == 0)
                rs->cr = realloc(rs->cr, (rs->n_cr ? 2 * rs->n_cr : 1) * sizeof(*rs->cr));
        rs->cr[rs->n_cr++] = *r;
        return 0;
}

static void grab(const gc_ledger *l, records *rs)
{
        gc_ledger_visitor v = {grab_u, grab_c, grab_r, grab_cr, NULL};

        memset(rs, 0, sizeof(*rs));
        ck_assert_int_eq(gc_ledger_visit(l, &v, rs), 0);
}

static void records_free(records *rs)
{
        free(rs->u);
        free(rs->c);
        free(rs->r);
        free(rs->cr);
}

static int same_double(double a, double b)
{
        uint64_t x, y;

        memcpy(&x, &a, sizeof(x));
        memcpy(&y, &b, sizeof(y));
        return x == y;
}

static int cmp_u(const void *a, const void *b)
{
        return strcmp(((const gc_usage *)a)->pod_uid, ((const gc_usage *)b)->pod_uid);
}

static int cmp_c(const void *a, const void *b)
{
        const gc_capacity *x = a, *y = b;
        int r = strcmp(x->node, y->node);

        return r ? r : (x->start > y->start) - (x->start < y->start);
}

static int cmp_r(const void *a, const void *b)
{
        const gc_rollup *x = a, *y = b;

        if (x->hour != y->hour)
                return (x->hour > y->hour) - (x->hour < y->hour);
        for (size_t d = 0; d < GC_DIM_POD; d++) {
                int r = strcmp(x->dims[d] ? x->dims[d] : "", y->dims[d] ? y->dims[d] : "");

                if (r)
                        return r;
        }
        return 0;
}

static int cmp_cr(const void *a, const void *b)
{
        const gc_capacity_rollup *x = a, *y = b;

        if (x->hour != y->hour)
                return (x->hour > y->hour) - (x->hour < y->hour);
        return strcmp(x->node, y->node);
}

static void records_sort(records *rs)
{
        qsort(rs->u, rs->n_u, sizeof(*rs->u), cmp_u);
        qsort(rs->c, rs->n_c, sizeof(*rs->c), cmp_c);
        qsort(rs->r, rs->n_r, sizeof(*rs->r), cmp_r);
        qsort(rs->cr, rs->n_cr, sizeof(*rs->cr), cmp_cr);
}

static void compare_records(records x, records y);

/* The restore walks the records in the order they were written: the same order, same bits. */
static void assert_same_records(const gc_ledger *a, const gc_ledger *b)
{
        records x, y;

        grab(a, &x);
        grab(b, &y);
        compare_records(x, y);
}

/* An incremental write puts records part by part: the same records, same bits, in any order. */
static void assert_same_records_sorted(const gc_ledger *a, const gc_ledger *b)
{
        records x, y;

        grab(a, &x);
        grab(b, &y);
        records_sort(&x);
        records_sort(&y);
        compare_records(x, y);
}

/* Record by record, bit for bit; frees both. */
static void compare_records(records x, records y)
{
        ck_assert_uint_eq(x.n_u, y.n_u);
        ck_assert_uint_eq(x.n_c, y.n_c);
        ck_assert_uint_eq(x.n_r, y.n_r);
        ck_assert_uint_eq(x.n_cr, y.n_cr);
        for (size_t i = 0; i < x.n_u; i++) {
                ck_assert_str_eq(x.u[i].pod_uid, y.u[i].pod_uid);
                for (size_t d = 0; d < GC_DIM_COUNT; d++)
                        ck_assert_str_eq(x.u[i].dims[d], y.u[i].dims[d]);
                ck_assert(same_double(x.u[i].geq, y.u[i].geq));
                ck_assert(same_double(x.u[i].price_per_gpu_hour, y.u[i].price_per_gpu_hour));
                ck_assert_int_eq(x.u[i].start, y.u[i].start);
                ck_assert_int_eq(x.u[i].end, y.u[i].end);
                ck_assert_uint_eq(x.u[i].flags, y.u[i].flags);
        }
        for (size_t i = 0; i < x.n_c; i++) {
                ck_assert_str_eq(x.c[i].node, y.c[i].node);
                ck_assert_str_eq(x.c[i].model, y.c[i].model);
                ck_assert_str_eq(x.c[i].capacity_type, y.c[i].capacity_type);
                ck_assert(same_double(x.c[i].geq, y.c[i].geq));
                ck_assert(same_double(x.c[i].price_per_gpu_hour, y.c[i].price_per_gpu_hour));
                ck_assert_int_eq(x.c[i].start, y.c[i].start);
                ck_assert_int_eq(x.c[i].end, y.c[i].end);
        }
        for (size_t i = 0; i < x.n_r; i++) {
                ck_assert_int_eq(x.r[i].hour, y.r[i].hour);
                for (size_t d = 0; d < GC_DIM_POD; d++)
                        ck_assert_str_eq(x.r[i].dims[d], y.r[i].dims[d]);
                ck_assert(same_double(x.r[i].gpu_seconds, y.r[i].gpu_seconds));
                ck_assert(same_double(x.r[i].cost, y.r[i].cost));
        }
        for (size_t i = 0; i < x.n_cr; i++) {
                ck_assert_int_eq(x.cr[i].hour, y.cr[i].hour);
                ck_assert_str_eq(x.cr[i].node, y.cr[i].node);
                ck_assert_str_eq(x.cr[i].model, y.cr[i].model);
                ck_assert(same_double(x.cr[i].geq_seconds, y.cr[i].geq_seconds));
                ck_assert(same_double(x.cr[i].cost, y.cr[i].cost));
        }
        records_free(&x);
        records_free(&y);
}

static void assert_close(double a, double b)
{
        ck_assert_msg(fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b))), "%.17g != %.17g", a,
                      b);
}

/* With q, the grouping keys must match too (totals have none). */
static void assert_rows_close(const gc_cost_row *a, const gc_cost_row *b, const gc_query *q)
{
        for (size_t k = 0; q && k < q->n_by; k++)
                ck_assert_str_eq(a->keys[q->by[k]], b->keys[q->by[k]]);
        assert_close(a->gpu_seconds, b->gpu_seconds);
        assert_close(a->cost, b->cost);
        ck_assert_uint_eq(a->pods, b->pods);
        ck_assert_uint_eq(a->estimates, b->estimates);
}

/* Both ledgers answer the same query the same: groups, totals, idle per node. */
static void assert_same_query(const gc_ledger *a, const gc_ledger *b, int64_t start, int64_t end,
                              int64_t now, gc_dim by);

/* ---- label dimensions ------------------------------------------------------------------------ */

static const char *const lkeys[] = {"cost-center", "exp"};

static void fx_new_keys(fixture *f, const char *const *keys, size_t n)
{
        gc_ledger_opts o = {0};

        f->pool = gc_strpool_new(64u << 20);
        ck_assert_ptr_nonnull(f->pool);
        o.pool = f->pool;
        o.label_keys = keys;
        o.n_label_keys = n;
        f->l = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(f->l);
}

static void fx_new_labels(fixture *f)
{
        fx_new_keys(f, lkeys, 2);
}

static void fx_new_exp_only(fixture *f)
{
        static const char *const keys[] = {"exp", "other"};

        fx_new_keys(f, keys, 2);
}

/* The cost by a's label dimension da and by b's db: the same values, the same figures. */
static void assert_same_by_label(const gc_ledger *a, gc_dim da, const gc_ledger *b, gc_dim db,
                                 int64_t start, int64_t end, int64_t now)
{
        gc_query qa, qb;
        gc_cost_summary x, y;

        memset(&qa, 0, sizeof(qa));
        qa.start = start;
        qa.end = end;
        qa.now = now;
        qa.n_by = 1;
        qb = qa;
        qa.by[0] = da;
        qb.by[0] = db;
        ck_assert_int_eq(gc_ledger_query(a, &qa, &x), 0);
        ck_assert_int_eq(gc_ledger_query(b, &qb, &y), 0);
        ck_assert_uint_eq(x.n_rows, y.n_rows);
        ck_assert_uint_gt(x.n_rows, 1);
        for (size_t i = 0; i < x.n_rows; i++) {
                ck_assert_str_eq(x.rows[i].keys[da], y.rows[i].keys[db]);
                assert_close(x.rows[i].gpu_seconds, y.rows[i].gpu_seconds);
                assert_close(x.rows[i].cost, y.rows[i].cost);
                ck_assert_uint_eq(x.rows[i].pods, y.rows[i].pods);
        }
        assert_close(x.total.cost, y.total.cost);
        gc_cost_summary_free(&x);
        gc_cost_summary_free(&y);
}

static void assert_same_query(const gc_ledger *a, const gc_ledger *b, int64_t start, int64_t end,
                              int64_t now, gc_dim by)
{
        gc_query q;
        gc_cost_summary x, y;

        memset(&q, 0, sizeof(q));
        q.start = start;
        q.end = end;
        q.now = now;
        q.by[0] = by;
        q.n_by = 1;
        ck_assert_int_eq(gc_ledger_query(a, &q, &x), 0);
        ck_assert_int_eq(gc_ledger_query(b, &q, &y), 0);
        ck_assert_uint_eq(x.n_rows, y.n_rows);
        for (size_t i = 0; i < x.n_rows; i++)
                assert_rows_close(&x.rows[i], &y.rows[i], &q);
        assert_rows_close(&x.total, &y.total, NULL);
        assert_close(x.unattributed.cost, y.unattributed.cost);
        assert_close(x.capacity.gpu_seconds, y.capacity.gpu_seconds);
        assert_close(x.capacity.cost, y.capacity.cost);
        assert_close(x.idle.gpu_seconds, y.idle.gpu_seconds);
        assert_close(x.idle.cost, y.idle.cost);
        ck_assert_uint_eq(x.n_idle_nodes, y.n_idle_nodes);
        for (size_t i = 0; i < x.n_idle_nodes; i++) {
                ck_assert_str_eq(x.idle_nodes[i].keys[GC_DIM_NODE],
                                 y.idle_nodes[i].keys[GC_DIM_NODE]);
                assert_close(x.idle_nodes[i].gpu_seconds, y.idle_nodes[i].gpu_seconds);
                assert_close(x.idle_nodes[i].cost, y.idle_nodes[i].cost);
        }
        gc_cost_summary_free(&x);
        gc_cost_summary_free(&y);
}

/* Encodes a's ledger and restores it into b (fresh); returns the number of chunks. */
static size_t roundtrip(const gc_ledger *a, fixture *b, size_t chunk_bytes,
                        gc_checkpoint_info *info)
{
        gc_buf *chunks = NULL;
        const char **data;
        size_t *lens, n = 0;
        char err[512];

        ck_assert_int_eq(gc_checkpoint_encode(a, t0() + 12 * DAY, "ctl-0", chunk_bytes, &chunks, &n,
                                              err, sizeof(err)),
                         0);
        ck_assert_uint_ge(n, 1);
        data = calloc(n, sizeof(*data));
        lens = calloc(n, sizeof(*lens));
        /* Any order: hand them over back to front. */
        for (size_t i = 0; i < n; i++) {
                ck_assert_uint_le(chunks[i].len,
                                  chunk_bytes ? chunk_bytes : GC_CHECKPOINT_CHUNK_BYTES);
                data[n - 1 - i] = chunks[i].data;
                lens[n - 1 - i] = chunks[i].len;
        }
        fx_new(b);
        ck_assert_msg(gc_checkpoint_decode(b->l, data, lens, n, 0, 0, info, err, sizeof(err)) == 0,
                      "decode: %s", err);
        free(data);
        free(lens);
        gc_checkpoint_chunks_free(chunks, n);
        return n;
}

START_TEST(roundtrip_big)
{
        fixture a, b;
        gc_checkpoint_info info;
        gc_ledger_stats sa, sb;
        int64_t now, base = t0();
        size_t n;
        static const gc_dim dims[] = {GC_DIM_TEAM, GC_DIM_NODE, GC_DIM_PROJECT, GC_DIM_POD};

        fx_new(&a);
        fill_big(a.l, &now);
        gc_ledger_stats_get(a.l, &sa);
        ck_assert_uint_gt(sa.rollup_rows, 1000);
        ck_assert_uint_gt(sa.intervals, 2000);
        ck_assert_uint_gt(sa.open_intervals, 100);

        n = roundtrip(a.l, &b, 64u * 1024u, &info);
        ck_assert_uint_gt(n, 3); /* it had to be split */
        ck_assert_uint_eq(info.header.of, n);
        ck_assert_str_eq(info.header.controller, "ctl-0");
        ck_assert_int_eq(info.header.written_at, base + 12 * DAY);
        ck_assert_uint_eq(info.ignored, 0);
        ck_assert_uint_eq(info.n_open, sa.open_intervals);
        for (size_t i = 0; i < info.n_open; i++) {
                ck_assert_ptr_nonnull(info.open[i].pod_uid);
                ck_assert_str_eq(info.open[i].dims[GC_DIM_POD], info.open[i].pod_uid);
        }

        gc_ledger_stats_get(b.l, &sb);
        ck_assert_uint_eq(sa.intervals, sb.intervals);
        ck_assert_uint_eq(sa.open_intervals, sb.open_intervals);
        ck_assert_uint_eq(sa.capacities, sb.capacities);
        ck_assert_uint_eq(sa.rollup_rows, sb.rollup_rows);
        ck_assert_int_eq(sa.horizon, sb.horizon);
        ck_assert_int_eq(sb.horizon, base + 6 * DAY);
        assert_same_records(a.l, b.l);

        for (size_t k = 0; k < sizeof(dims) / sizeof(dims[0]); k++) {
                assert_same_query(a.l, b.l, base, base + 12 * DAY, now, dims[k]);
                /* A window cutting hours, across the horizon. */
                assert_same_query(a.l, b.l, base + 5 * DAY + 1234, base + 8 * DAY + 77, now,
                                  dims[k]);
        }
        for (int64_t d = 0; d < 12; d++)
                assert_same_query(a.l, b.l, base + d * DAY, base + (d + 1) * DAY, now, GC_DIM_TEAM);

        /* The restored ledger keeps working like the original: fold both alike. */
        ck_assert_int_eq(gc_ledger_fold(a.l, base + 9 * DAY, base),
                         gc_ledger_fold(b.l, base + 9 * DAY, base));
        assert_same_query(a.l, b.l, base, base + 12 * DAY, now, GC_DIM_NODE);

        gc_checkpoint_info_release(&info);
        fx_free(&a);
        fx_free(&b);
}
END_TEST

START_TEST(roundtrip_default_chunk)
{
        fixture a, b;
        gc_checkpoint_info info;
        int64_t now;

        fx_new(&a);
        fill_big(a.l, &now);
        /* 6,000 pods with small string tables, and their period history, fit two 900 KiB
         * chunks. */
        ck_assert_uint_eq(roundtrip(a.l, &b, 0, &info), 2);
        assert_same_records(a.l, b.l);
        gc_checkpoint_info_release(&info);
        fx_free(&a);
        fx_free(&b);
}
END_TEST

START_TEST(roundtrip_empty)
{
        fixture a, b;
        gc_checkpoint_info info;
        gc_ledger_stats st;

        fx_new(&a);
        ck_assert_uint_eq(roundtrip(a.l, &b, 0, &info), 1);
        gc_ledger_stats_get(b.l, &st);
        ck_assert_uint_eq(st.intervals + st.capacities + st.rollup_rows, 0);
        ck_assert_int_eq(st.horizon, INT64_MIN);
        ck_assert_int_eq(info.header.horizon, INT64_MIN);
        ck_assert_uint_eq(info.n_open, 0);
        gc_checkpoint_info_release(&info);
        fx_free(&a);
        fx_free(&b);
}
END_TEST

/* Doubles that have no short decimal form, extremes, and strings that need escaping. */
START_TEST(roundtrip_exact_values)
{
        static const double geqs[] = {0.1,         1.0 / 3.0,           1.0 / 7.0, 1e-300,
                                      DBL_MAX / 4, 123456789.123456789, 5e-324,    0.0};
        static const char *const names[] = {"quote\"d",    "back\\slash", "tab\there", "nl\nx",
                                            "ctl\x01\x1f", "caf\xc3\xa9", "",          "a/b"};
        fixture a, b;
        gc_checkpoint_info info;
        char uid[16];

        fx_new(&a);
        for (size_t i = 0; i < sizeof(geqs) / sizeof(geqs[0]); i++) {
                snprintf(uid, sizeof(uid), "p%zu", i);
                put_pod(a.l, uid, names[i], names[(i + 1) % 8], names[(i + 2) % 8],
                        names[(i + 3) % 8], names[(i + 4) % 8], geqs[i], geqs[7 - i], t0(),
                        i % 2 ? GC_OPEN : t0() + 1, (uint32_t)i << 28);
        }
        ck_assert_uint_eq(roundtrip(a.l, &b, 0, &info), 1);
        assert_same_records(a.l, b.l);
        ck_assert_uint_eq(info.n_open, 4);
        gc_checkpoint_info_release(&info);
        fx_free(&a);
        fx_free(&b);
}
END_TEST

START_TEST(names_and_peek)
{
        fixture a;
        gc_buf *chunks = NULL;
        gc_checkpoint_header h;
        char name[GC_CHECKPOINT_NAME_MAX], err[256];
        size_t n = 0;
        int64_t now;

        gc_checkpoint_name(0, name);
        ck_assert_str_eq(name, "gpu-cost-checkpoint");
        gc_checkpoint_name(12, name);
        ck_assert_str_eq(name, "gpu-cost-checkpoint-12");

        fx_new(&a);
        fill_big(a.l, &now);
        ck_assert_int_eq(gc_checkpoint_encode(a.l, t0(), "pod-7", GC_CHECKPOINT_MIN_CHUNK, &chunks,
                                              &n, err, sizeof(err)),
                         0);
        ck_assert_uint_gt(n, 10);
        ck_assert_int_eq(gc_checkpoint_peek(chunks[3].data, chunks[3].len, &h, err, sizeof(err)),
                         0);
        ck_assert_uint_eq(h.chunk, 3);
        ck_assert_uint_eq(h.of, n);
        ck_assert_int_eq(h.version, GC_CHECKPOINT_VERSION);
        ck_assert_int_eq(h.written_at, t0());
        ck_assert_str_eq(h.controller, "pod-7");
        ck_assert_uint_eq(strlen(h.write_id), 16);
        {
                gc_ledger_stats st;

                gc_ledger_stats_get(a.l, &st);
                ck_assert_uint_eq(h.usage, st.intervals);
                ck_assert_uint_eq(h.capacity, st.capacities);
                ck_assert_uint_eq(h.rollups + h.capacity_rollups, st.rollup_rows);
        }
        ck_assert_int_eq(gc_checkpoint_peek("{\"version\":1}", 13, &h, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "write"));
        gc_checkpoint_chunks_free(chunks, n);
        fx_free(&a);
}
END_TEST

/*
 * The watches' resume points travel in every chunk's header, are part of the write id, come
 * back from a restore, and a chunk whose points differ from chunk 0's is refused (they must
 * be of the same moment as the ledger).
 */
START_TEST(resource_versions)
{
        static const gc_checkpoint_rv rvs[] = {
            {"namespaces", "101"}, {"nodes", "102"}, {"pods", "117"}};
        gc_checkpoint_rv bad[2];
        fixture a, b;
        gc_buf *chunks = NULL, *other = NULL;
        gc_checkpoint_header h;
        gc_checkpoint_info info;
        const char *in[256];
        size_t lens[256], n = 0, n2 = 0;
        char err[256];
        int64_t now;

        fx_new(&a);
        fill_big(a.l, &now);
        gc_checkpoint_meta m = {rvs, 3, 0};

        ck_assert_int_eq(gc_checkpoint_encode_meta(a.l, t0(), "ctl", &m, GC_CHECKPOINT_MIN_CHUNK,
                                                   &chunks, &n, err, sizeof(err)),
                         0);
        ck_assert_uint_gt(n, 3);
        ck_assert_uint_le(n, 256);
        ck_assert_int_eq(gc_checkpoint_peek(chunks[2].data, chunks[2].len, &h, err, sizeof(err)),
                         0);
        ck_assert_uint_eq(h.n_rvs, 3);
        ck_assert_str_eq(gc_checkpoint_rv_of(&h, "pods"), "117");
        ck_assert_str_eq(gc_checkpoint_rv_of(&h, "namespaces"), "101");
        ck_assert_ptr_null(gc_checkpoint_rv_of(&h, "services"));
        /* Other resume points, same ledger and time: another write. */
        m.n_rvs = 2;
        ck_assert_int_eq(gc_checkpoint_encode_meta(a.l, t0(), "ctl", &m, GC_CHECKPOINT_MIN_CHUNK,
                                                   &other, &n2, err, sizeof(err)),
                         0);
        ck_assert_uint_eq(n2, n);
        ck_assert_int_eq(gc_checkpoint_peek(other[0].data, other[0].len, &h, err, sizeof(err)), 0);
        {
                gc_checkpoint_header h0;

                ck_assert_int_eq(
                    gc_checkpoint_peek(chunks[0].data, chunks[0].len, &h0, err, sizeof(err)), 0);
                ck_assert_str_ne(h.write_id, h0.write_id);
        }
        for (size_t i = 0; i < n; i++) {
                in[i] = chunks[i].data;
                lens[i] = chunks[i].len;
        }
        /* chunk 1 of the other write in place of this one's: refused, nothing put */
        in[1] = other[1].data;
        lens[1] = other[1].len;
        fx_new(&b);
        memset(&info, 0, sizeof(info));
        ck_assert_int_eq(gc_checkpoint_decode(b.l, in, lens, n, 0, 0, &info, err, sizeof(err)),
                         -EINVAL);
        in[1] = chunks[1].data;
        lens[1] = chunks[1].len;
        ck_assert_int_eq(gc_checkpoint_decode(b.l, in, lens, n, 0, 0, &info, err, sizeof(err)), 0);
        ck_assert_uint_eq(info.header.n_rvs, 3);
        ck_assert_str_eq(gc_checkpoint_rv_of(&info.header, "nodes"), "102");
        gc_checkpoint_info_release(&info);
        fx_free(&b);
        /* bad points are refused before anything is written */
        memset(bad, 0, sizeof(bad));
        gc_strlcpy(bad[0].resource, "pods", sizeof(bad[0].resource));
        gc_strlcpy(bad[0].rv, "1\"2", sizeof(bad[0].rv));
        m.rvs = bad;
        m.n_rvs = 1;
        ck_assert_int_eq(
            gc_checkpoint_encode_meta(a.l, t0(), "ctl", &m, 0, &other, &n2, err, sizeof(err)),
            -EINVAL);
        gc_strlcpy(bad[0].rv, "12", sizeof(bad[0].rv));
        bad[1] = bad[0];
        m.n_rvs = 2;
        ck_assert_int_eq(
            gc_checkpoint_encode_meta(a.l, t0(), "ctl", &m, 0, &other, &n2, err, sizeof(err)),
            -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "resource_versions"));
        /* read side: a point that is not a string */
        {
                static const char doc[] =
                    "{\"version\":1,\"write\":\"0123456789abcdef\",\"chunk\":0,\"of\":1,"
                    "\"written_at\":\"2026-11-20T09:15:03Z\",\"controller\":\"c\","
                    "\"horizon\":null,\"counts\":{\"usage\":0,\"capacity\":0,\"rollups\":0,"
                    "\"capacity_rollups\":0},\"resource_versions\":{\"pods\":7}}";

                ck_assert_int_eq(gc_checkpoint_peek(doc, strlen(doc), &h, err, sizeof(err)),
                                 -EINVAL);
        }
        ck_assert_ptr_nonnull(strstr(err, "resource_versions"));
        gc_checkpoint_chunks_free(chunks, n);
        gc_checkpoint_chunks_free(other, n);
        fx_free(&a);
}
END_TEST

/* ---- generations --------------------------------------------------------------------------- */

/* ConfigMaps by slot and chunk, written in the controller's order (chunk 0 last). */
typedef struct store {
        gc_buf *w[GC_CHECKPOINT_GENERATIONS][GC_CHECKPOINT_MAX_CHUNKS]; /* borrowed */
        size_t n[GC_CHECKPOINT_GENERATIONS];
} store;

/* A write of `chunks` into slot s that stops after `written` ConfigMaps (n = all of them). */
static void store_write(store *st, size_t s, gc_buf *chunks, size_t n, size_t written)
{
        for (size_t k = n, done = 0; k-- > 0 && done < written; done++) {
                st->w[s][k] = &chunks[k];
                if (k + 1 > st->n[s])
                        st->n[s] = k + 1;
        }
}

static int store_restore(const store *st, gc_ledger *l, size_t *ret_slot, size_t *ret_refused,
                         char *err, size_t errlen)
{
        static const char *in[GC_CHECKPOINT_GENERATIONS][GC_CHECKPOINT_MAX_CHUNKS];
        static size_t lens[GC_CHECKPOINT_GENERATIONS][GC_CHECKPOINT_MAX_CHUNKS];
        gc_checkpoint_slot slots[GC_CHECKPOINT_GENERATIONS];
        gc_checkpoint_info info;
        int r;

        for (size_t s = 0; s < GC_CHECKPOINT_GENERATIONS; s++) {
                for (size_t k = 0; k < st->n[s]; k++) {
                        in[s][k] = st->w[s][k] ? st->w[s][k]->data : NULL;
                        lens[s][k] = st->w[s][k] ? st->w[s][k]->len : 0;
                }
                slots[s].chunks = in[s];
                slots[s].lens = lens[s];
                slots[s].n = st->n[s];
        }
        memset(&info, 0, sizeof(info));
        r = gc_checkpoint_decode_newest(l, slots, GC_CHECKPOINT_GENERATIONS, 0, 0, &info, ret_slot,
                                        ret_refused, err, errlen);
        gc_checkpoint_info_release(&info);
        return r;
}

static gc_buf *encode_gen(const gc_ledger *l, uint64_t gen, int64_t at, size_t *ret_n)
{
        gc_checkpoint_meta m = {NULL, 0, gen};
        gc_buf *chunks = NULL;
        char err[256];

        ck_assert_int_eq(gc_checkpoint_encode_meta(l, at, "ctl", &m, GC_CHECKPOINT_MIN_CHUNK,
                                                   &chunks, ret_n, err, sizeof(err)),
                         0);
        return chunks;
}

/*
 * Generation 3 goes into the slot of generation 1 and is killed after k of its n ConfigMaps
 * (none, one, half, all but chunk 0, all): the restore gives generation 2 exactly (never an empty
 * ledger) until the write is whole, then generation 3. Only when no slot is complete is the restore
 * refused.
 */
START_TEST(generations_survive_a_killed_write)
{
        fixture a, b;
        gc_ledger *l1, *l2;
        gc_buf *g1, *g2, *g3;
        size_t n1, n2, n3, slot, refused;
        char err[1024], name[GC_CHECKPOINT_NAME_MAX];
        int64_t now;
        store st;

        gc_checkpoint_slot_name(1, 0, name);
        ck_assert_str_eq(name, "gpu-cost-checkpoint-g1");
        gc_checkpoint_slot_name(1, 7, name);
        ck_assert_str_eq(name, "gpu-cost-checkpoint-g1-7");
        ck_assert_int_eq(gc_checkpoint_parse_name(name, &slot, &n1), 0);
        ck_assert_uint_eq(slot, 1);
        ck_assert_uint_eq(n1, 7);
        ck_assert_int_eq(gc_checkpoint_parse_name("gpu-cost-checkpoint-12", &slot, &n1), 0);
        ck_assert_uint_eq(slot, 0);
        ck_assert_uint_eq(n1, 12);
        ck_assert_int_eq(gc_checkpoint_parse_name("gpu-cost-checkpoint", &slot, &n1), 0);
        ck_assert_uint_eq(n1, 0);
        ck_assert_int_eq(gc_checkpoint_parse_name("gpu-cost-checkpoint-g2", NULL, NULL), -EINVAL);
        ck_assert_int_eq(gc_checkpoint_parse_name("gpu-cost-checkpoint-01", NULL, NULL), -EINVAL);
        ck_assert_int_eq(gc_checkpoint_parse_name("gpu-cost-checkpoint-1x", NULL, NULL), -EINVAL);
        ck_assert_int_eq(gc_checkpoint_parse_name("gpu-cost-report", NULL, NULL), -EINVAL);

        fx_new(&a);
        fill_big(a.l, &now);
        l1 = gc_ledger_clone(a.l);
        g1 = encode_gen(a.l, 1, now, &n1);
        put_pod(a.l, "gen-2", "ml", "vision", "p", "node-x", "H100", 1, 2.5, now - 600, GC_OPEN, 0);
        l2 = gc_ledger_clone(a.l);
        g2 = encode_gen(a.l, 2, now + 60, &n2);
        put_pod(a.l, "gen-3", "ml", "vision", "p", "node-x", "H100", 2, 2.5, now - 300, GC_OPEN, 0);
        g3 = encode_gen(a.l, 3, now + 120, &n3);
        ck_assert_uint_gt(n3, 4);
        ck_assert_ptr_nonnull(l1);
        ck_assert_ptr_nonnull(l2);

        for (size_t ki = 0; ki < 5; ki++) {
                const size_t ks[5] = {0, 1, n3 / 2, n3 - 1, n3};
                size_t k = ks[ki];

                memset(&st, 0, sizeof(st));
                store_write(&st, 0, g1, n1, n1);
                store_write(&st, 1, g2, n2, n2);
                store_write(&st, 0, g3, n3, k);
                fx_new(&b);
                ck_assert_int_eq(store_restore(&st, b.l, &slot, &refused, err, sizeof(err)), 0);
                if (k < n3) {
                        ck_assert_msg(slot == 1, "k=%zu: restored slot %zu", k, slot);
                        /* Chunks 1.. of gen 1 overwritten by gen 3: the slot is refused. */
                        ck_assert_uint_eq(refused, 0);
                        assert_same_records(l2, b.l);
                } else {
                        ck_assert_uint_eq(slot, 0);
                        ck_assert_uint_eq(refused, 0);
                        assert_same_records(a.l, b.l);
                }
                fx_free(&b);
        }

        /* The newer slot refused (a chunk lost), the older one restored, and said so. */
        memset(&st, 0, sizeof(st));
        store_write(&st, 0, g1, n1, n1);
        store_write(&st, 1, g2, n2, n2);
        st.w[1][1] = NULL;
        fx_new(&b);
        ck_assert_int_eq(store_restore(&st, b.l, &slot, &refused, err, sizeof(err)), 0);
        ck_assert_uint_eq(slot, 0);
        ck_assert_uint_eq(refused, 1);
        ck_assert_ptr_nonnull(strstr(err, "slot 1"));
        assert_same_records(l1, b.l);
        fx_free(&b);

        /* Both broken: refused, naming each; nothing at all: -ENOENT. */
        st.w[0][2] = NULL;
        fx_new(&b);
        ck_assert_int_eq(store_restore(&st, b.l, &slot, &refused, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "slot 0"));
        ck_assert_ptr_nonnull(strstr(err, "slot 1"));
        memset(&st, 0, sizeof(st));
        ck_assert_int_eq(store_restore(&st, b.l, &slot, &refused, err, sizeof(err)), -ENOENT);
        fx_free(&b);

        gc_checkpoint_chunks_free(g1, n1);
        gc_checkpoint_chunks_free(g2, n2);
        gc_checkpoint_chunks_free(g3, n3);
        gc_ledger_free(l1);
        gc_ledger_free(l2);
        fx_free(&a);
}
END_TEST

/* ---- refusals ----------------------------------------------------------------------------- */

typedef struct writes {
        fixture a;
        gc_buf *w1, *w2; /* the same ledger written at two times: two writes of 16 KiB chunks */
        size_t n1, n2;
} writes;

static void writes_make(writes *w)
{
        char err[256];
        int64_t now;

        fx_new(&w->a);
        fill_big(w->a.l, &now);
        ck_assert_int_eq(gc_checkpoint_encode(w->a.l, t0(), "ctl", GC_CHECKPOINT_MIN_CHUNK, &w->w1,
                                              &w->n1, err, sizeof(err)),
                         0);
        ck_assert_int_eq(gc_checkpoint_encode(w->a.l, t0() + 60, "ctl", GC_CHECKPOINT_MIN_CHUNK,
                                              &w->w2, &w->n2, err, sizeof(err)),
                         0);
        ck_assert_uint_eq(w->n1, w->n2);
        ck_assert_uint_gt(w->n1, 4);
}

static void writes_free(writes *w)
{
        gc_checkpoint_chunks_free(w->w1, w->n1);
        gc_checkpoint_chunks_free(w->w2, w->n2);
        fx_free(&w->a);
}

typedef struct refusal {
        const char *what;
        int expect;
        const char *err_has;
} refusal;

static const refusal refusals[] = {
    {"missing chunk 2", -EINVAL, "chunk 2 of"},
    {"missing chunk 0", -EINVAL, "chunk 0 (ConfigMap gpu-cost-checkpoint) is missing"},
    {"chunk 1 of another write", -EINVAL, "did not finish"},
    {"chunk 0 of another write", -EINVAL, "did not finish"},
    {"truncated chunk", -EINVAL, "not valid JSON"},
    {"chunk given twice", -EINVAL, "given twice"},
    {"chunk over 1 MiB", -EINVAL, "more than the 1048576"},
    {"version 9 (unknown)", -EINVAL, "version: 9 is not supported"},
    {"counts over the ledger's limit", -E2BIG, "exceed the ledger's limits"},
    {"string index out of range", -EINVAL, "must index the chunk's"},
    {"ledger not empty", -EINVAL, "not empty"},
    {"nothing given", -EINVAL, "chunk 0"},
};

/* Replaces the first occurrence of from by to in a copy of b (the caller frees it). */
static char *edited(const gc_buf *b, const char *from, const char *to, size_t *ret_len)
{
        const char *at = strstr(b->data, from);
        gc_buf out;

        ck_assert_ptr_nonnull(at);
        gc_buf_init(&out, GC_CHECKPOINT_MAX_CHUNK * 2);
        ck_assert_int_eq(gc_buf_append(&out, b->data, (size_t)(at - b->data)), 0);
        ck_assert_int_eq(gc_buf_puts(&out, to), 0);
        ck_assert_int_eq(gc_buf_puts(&out, at + strlen(from)), 0);
        *ret_len = out.len;
        return gc_buf_steal(&out);
}

START_TEST(refuse)
{
        const refusal *c = &refusals[_i];
        writes w;
        fixture b;
        const char *data[128];
        size_t lens[128], n, max_iv = 0;
        char *own = NULL, err[512];
        gc_checkpoint_info info = {0};
        gc_ledger_stats st;
        int r;

        writes_make(&w);
        fx_new(&b);
        ck_assert_uint_le(w.n1 + 1, 128);
        n = w.n1;
        for (size_t i = 0; i < n; i++) {
                data[i] = w.w1[i].data;
                lens[i] = w.w1[i].len;
        }
        switch (_i) {
        case 0:
                data[2] = NULL; /* its ConfigMap was not found */
                break;
        case 1:
                data[0] = NULL;
                break;
        case 2:
                data[1] = w.w2[1].data;
                lens[1] = w.w2[1].len;
                break;
        case 3:
                data[0] = w.w2[0].data;
                lens[0] = w.w2[0].len;
                break;
        case 4:
                lens[3] /= 2;
                break;
        case 5:
                data[n] = data[2];
                lens[n] = lens[2];
                n++;
                break;
        case 6:
                own = malloc(GC_CHECKPOINT_MAX_CHUNK + 2);
                memset(own, ' ', GC_CHECKPOINT_MAX_CHUNK + 1);
                memcpy(own, data[1], lens[1]);
                data[1] = own;
                lens[1] = GC_CHECKPOINT_MAX_CHUNK + 1;
                break;
        case 7:
                own = edited(&w.w1[0], "\"version\":5", "\"version\":9", &lens[0]);
                data[0] = own;
                break;
        case 8:
                max_iv = 100;
                break;
        case 9:
                own = edited(&w.w1[1], "\"usage\":[[0,", "\"usage\":[[999999,", &lens[1]);
                data[1] = own;
                break;
        case 10:
                put_pod(b.l, "x", "ns", "t", "p", "n", "m", 1, 1, t0(), GC_OPEN, 0);
                break;
        case 11:
                n = 0;
                break;
        }
        r = gc_checkpoint_decode(b.l, data, lens, n, max_iv, 0, &info, err, sizeof(err));
        ck_assert_msg(r == c->expect, "%s: returned %d (%s)", c->what, r, err);
        ck_assert_msg(strstr(err, c->err_has) != NULL, "%s: error \"%s\" lacks \"%s\"", c->what,
                      err, c->err_has);
        ck_assert_ptr_null(info.open);
        /* Refused before anything was put: the ledger is as it was. */
        gc_ledger_stats_get(b.l, &st);
        ck_assert_uint_eq(st.intervals, _i == 10 ? 1 : 0);
        ck_assert_uint_eq(st.capacities + st.rollup_rows, 0);
        free(own);
        fx_free(&b);
        writes_free(&w);
}
END_TEST

/* A shorter write over a longer one: the old chunks past `of` are left over and ignored. */
/*
 * A write of a build before period history and workloads (version 1, usage records of eight
 * strings, no periods): restored, with an empty workload, and period history from its horizon.
 */
START_TEST(reads_version_1)
{
        static const char doc[] =
            "{\"version\":1,\"write\":\"0123456789abcdef\",\"chunk\":0,\"of\":1,"
            "\"written_at\":\"2026-11-20T09:15:03Z\",\"controller\":\"c\",\"horizon\":1794009600,"
            "\"counts\":{\"usage\":1,\"capacity\":0,\"rollups\":1,\"capacity_rollups\":0},"
            "\"strings\":[\"u1\",\"ns\",\"t\",\"p\",\"m\",\"on-demand\",\"n1\",\"ns/pod\"],"
            "\"usage\":[[0,1,2,3,4,5,6,7,1,2.5,1794009700,null,0]],\"capacity\":[],"
            "\"rollups\":[[1,2,3,4,5,6,1794006000,3600,2.5]],\"capacity_rollups\":[]}";
        const char *data[1] = {doc};
        size_t lens[1] = {sizeof(doc) - 1};
        gc_checkpoint_info info = {0};
        fixture b;
        gc_usage u;
        gc_ledger_stats st;
        char err[256];

        fx_new(&b);
        ck_assert_int_eq(gc_checkpoint_decode(b.l, data, lens, 1, 0, 0, &info, err, sizeof(err)),
                         0);
        ck_assert_int_eq(gc_ledger_get_usage(b.l, "u1", &u), 0);
        ck_assert_str_eq(u.dims[GC_DIM_POD], "ns/pod");
        ck_assert_str_eq(u.dims[GC_DIM_WORKLOAD], "");
        ck_assert_int_eq(gc_ledger_period_since(b.l), 1794009600);
        gc_ledger_stats_get(b.l, &st);
        /* The row of (namespace, ..., node) is the pods' row and the node's now. */
        ck_assert_uint_eq(st.rollup_rows, 2);
        ck_assert_uint_eq(st.period_rows, 0);
        {
                gc_query q;
                gc_cost_summary s = {0};

                memset(&q, 0, sizeof(q));
                q.start = 1794006000;
                q.end = 1794009600;
                q.by[0] = GC_DIM_NODE;
                q.n_by = 1;
                ck_assert_int_eq(gc_ledger_query(b.l, &q, &s), 0);
                ck_assert_uint_eq(s.n_rows, 1);
                ck_assert_str_eq(s.rows[0].keys[GC_DIM_NODE], "n1");
                ck_assert(s.rows[0].gpu_seconds == 3600);
                gc_cost_summary_free(&s);
                q.by[0] = GC_DIM_TEAM;
                ck_assert_int_eq(gc_ledger_query(b.l, &q, &s), 0);
                ck_assert_uint_eq(s.n_rows, 1);
                ck_assert_str_eq(s.rows[0].keys[GC_DIM_TEAM], "t");
                ck_assert(s.total.cost == 2.5);
                gc_cost_summary_free(&s);
        }
        gc_checkpoint_info_release(&info);
        fx_free(&b);
}
END_TEST

/* Period history and workloads go through a write and come back. */
START_TEST(roundtrip_periods)
{
        fixture a, b;
        gc_checkpoint_info info;
        gc_ledger_stats sa, sb;
        gc_query q;
        gc_cost_summary s1 = {0}, s2 = {0};
        int64_t now;

        fx_new(&a);
        fill_big(a.l, &now);
        gc_ledger_stats_get(a.l, &sa);
        ck_assert_uint_gt(sa.period_rows, 0);
        ck_assert_uint_gt(roundtrip(a.l, &b, GC_CHECKPOINT_MIN_CHUNK, &info), 1);
        gc_ledger_stats_get(b.l, &sb);
        ck_assert_uint_eq(sa.periods, sb.periods);
        ck_assert_uint_eq(sa.period_rows, sb.period_rows);
        ck_assert_int_eq(gc_ledger_period_since(b.l), gc_ledger_period_since(a.l));
        memset(&q, 0, sizeof(q));
        q.start = t0();
        q.end = q.start + 7 * DAY; /* an ISO week: t0 is a Monday */
        q.now = now;
        q.by[0] = GC_DIM_TEAM;
        q.by[1] = GC_DIM_POD;
        q.n_by = 2;
        ck_assert_int_eq(gc_ledger_query(a.l, &q, &s1), 0);
        ck_assert_int_eq(gc_ledger_query(b.l, &q, &s2), 0);
        ck_assert_uint_gt(s1.n_rows, 100);
        ck_assert_uint_eq(s1.n_rows, s2.n_rows);
        ck_assert_uint_eq(s1.total.pods, s2.total.pods);
        for (size_t i = 0; i < s1.n_rows; i++) {
                ck_assert_str_eq(s1.rows[i].keys[GC_DIM_POD], s2.rows[i].keys[GC_DIM_POD]);
                ck_assert(s1.rows[i].cost == s2.rows[i].cost);
                ck_assert_uint_eq(s1.rows[i].pods, s2.rows[i].pods);
        }
        gc_cost_summary_free(&s1);
        gc_cost_summary_free(&s2);
        gc_checkpoint_info_release(&info);
        fx_free(&a);
        fx_free(&b);
}
END_TEST

/*
 * The usage basis through a checkpoint (full and incremental): shared pods split by use
 * over three days, the first two folded (adjustments in hourly rows and period history, some
 * coarsened away from the hours), the last still adjustments; every hour, day and the week by
 * pod and team answer the same in both bases, measured cost included.
 */
static void encode_incr(const gc_ledger *l, uint64_t gen, int64_t at, gc_checkpoint_write *w);
static void decode_incr(const gc_checkpoint_write *w, fixture *b);

static void usage_fill(gc_ledger *l, int64_t *ret_now)
{
        int64_t base = t0();
        char a[32], b[32];

        for (int d = 0; d < 3; d++) {
                snprintf(a, sizeof(a), "share-a-%d", d);
                snprintf(b, sizeof(b), "share-b-%d", d);
                put_pod(l, a, "ml", "vision", "p", "t4-0", "Tesla-T4", 0.25, 0.35,
                        base + d * DAY + H, base + d * DAY + 20 * H, 0);
                put_pod(l, b, "nlp", "nlp", "q", "t4-0", "Tesla-T4", 0.25, 0.35,
                        base + d * DAY + 3 * H, base + d * DAY + 22 * H, 0);
                for (int64_t t = base + d * DAY + 3 * H; t < base + d * DAY + 19 * H; t += 60) {
                        const char *ka[] = {a}, *kb[] = {b};
                        double ua = 0.05 + 0.9 * (double)((t / 60) % 7) / 6.0;
                        gc_use_holder h[2] = {{ka, 1, ua}, {kb, 1, 0.3}};

                        ck_assert_int_eq(gc_ledger_split_by_use(l, t, t + 60, h, 2), 0);
                }
        }
        *ret_now = base + 3 * DAY;
        ck_assert_int_ge(gc_ledger_fold(l, base + 2 * DAY, 0), 1);
        ck_assert_int_eq(gc_ledger_coarsen(l, base + DAY), 0);
}

static void assert_same_usage(const gc_ledger *x, const gc_ledger *y, int64_t start, int64_t end,
                              int64_t now, gc_dim by)
{
        for (int b = 0; b < 2; b++) {
                gc_query q;
                gc_cost_summary s1, s2;

                memset(&q, 0, sizeof(q));
                q.start = start;
                q.end = end;
                q.now = now;
                q.by[0] = by;
                q.n_by = 1;
                q.basis = b ? GC_BASIS_USAGE : GC_BASIS_ALLOCATION;
                ck_assert_int_eq(gc_ledger_query(x, &q, &s1), 0);
                ck_assert_int_eq(gc_ledger_query(y, &q, &s2), 0);
                ck_assert_uint_eq(s1.n_rows, s2.n_rows);
                for (size_t i = 0; i < s1.n_rows; i++) {
                        assert_rows_close(&s1.rows[i], &s2.rows[i], &q);
                        assert_close(s1.rows[i].measured_cost, s2.rows[i].measured_cost);
                }
                assert_close(s1.total.cost, s2.total.cost);
                assert_close(s1.total.measured_cost, s2.total.measured_cost);
                if (b && by == GC_DIM_TEAM && end - start >= DAY)
                        ck_assert_msg(s1.total.measured_cost > 0, "nothing measured");
                gc_cost_summary_free(&s1);
                gc_cost_summary_free(&s2);
        }
}

START_TEST(roundtrip_usage_basis)
{
        fixture a, b, c;
        gc_checkpoint_info info;
        gc_checkpoint_write w;
        int64_t now;

        fx_new(&a);
        usage_fill(a.l, &now);
        roundtrip(a.l, &b, GC_CHECKPOINT_MIN_CHUNK, &info);
        gc_checkpoint_info_release(&info);
        encode_incr(a.l, 1, now, &w);
        decode_incr(&w, &c);
        gc_checkpoint_write_release(&w);
        for (int64_t d = 0; d < 3; d++) {
                int64_t day = t0() + d * DAY;

                assert_same_usage(a.l, b.l, day, day + DAY, now, GC_DIM_TEAM);
                assert_same_usage(a.l, c.l, day, day + DAY, now, GC_DIM_POD);
                for (int64_t h = 0; h < 24; h += 5) {
                        assert_same_usage(a.l, b.l, day + h * H, day + (h + 1) * H, now,
                                          GC_DIM_TEAM);
                        assert_same_usage(a.l, c.l, day + h * H, day + (h + 1) * H, now,
                                          GC_DIM_POD);
                }
        }
        assert_same_usage(a.l, b.l, t0(), t0() + 7 * DAY, now, GC_DIM_POD);
        fx_free(&a);
        fx_free(&b);
        fx_free(&c);
}
END_TEST

/*
 * A coarsened ledger (buckets kept only in periods) restores with its node rows and coarse_to,
 * from a full write and from an incremental one: every coarsened day answers the same, by node
 * (held and idle) and by team. A write of version 3 (no "coarse_to") still reads.
 */
static void encode_incr(const gc_ledger *l, uint64_t gen, int64_t at, gc_checkpoint_write *w);

static void decode_incr_into(const gc_checkpoint_write *w, fixture *b, void (*make)(fixture *));
static void fx_new_quarter(fixture *f);

static void decode_incr(const gc_checkpoint_write *w, fixture *b)
{
        decode_incr_into(w, b, fx_new);
}

static void decode_incr_into(const gc_checkpoint_write *w, fixture *b, void (*make)(fixture *))
{
        size_t n = w->n_parts + 1;
        const char **data = calloc(n, sizeof(*data));
        size_t *lens = calloc(n, sizeof(*lens));
        gc_checkpoint_info info;
        char err[512];

        data[0] = w->manifest.data;
        lens[0] = w->manifest.len;
        for (size_t i = 0; i < w->n_parts; i++) {
                data[1 + i] = w->parts[i].data.data;
                lens[1 + i] = w->parts[i].data.len;
        }
        make(b);
        memset(&info, 0, sizeof(info));
        ck_assert_msg(gc_checkpoint_decode(b->l, data, lens, n, 0, 0, &info, err, sizeof(err)) == 0,
                      "decode: %s", err);
        gc_checkpoint_info_release(&info);
        free(data);
        free(lens);
}

START_TEST(roundtrip_coarsened)
{
        fixture a, b, c, d;
        gc_checkpoint_info info;
        gc_checkpoint_write w;
        gc_ledger_stats sa, sb;
        gc_buf *chunks = NULL;
        size_t n = 0, len;
        char err[512];
        int64_t now;

        fx_new(&a);
        fill_big(a.l, &now);
        ck_assert_int_eq(gc_ledger_coarsen(a.l, t0() + 4 * DAY), 0);
        ck_assert_int_eq(gc_ledger_coarse_to(a.l), t0() + 4 * DAY);
        gc_ledger_stats_get(a.l, &sa);
        roundtrip(a.l, &b, GC_CHECKPOINT_MIN_CHUNK, &info);
        gc_checkpoint_info_release(&info);
        encode_incr(a.l, 3, now, &w);
        decode_incr(&w, &c);
        gc_checkpoint_write_release(&w);
        for (fixture *x = &b; x; x = x == &b ? &c : NULL) {
                ck_assert_int_eq(gc_ledger_coarse_to(x->l), t0() + 4 * DAY);
                gc_ledger_stats_get(x->l, &sb);
                ck_assert_uint_eq(sa.period_rows, sb.period_rows);
                ck_assert_uint_eq(sa.rollup_rows, sb.rollup_rows);
                for (int64_t day = 0; day < 6; day++) {
                        assert_same_query(a.l, x->l, t0() + day * DAY, t0() + (day + 1) * DAY, now,
                                          GC_DIM_NODE);
                        assert_same_query(a.l, x->l, t0() + day * DAY, t0() + (day + 1) * DAY, now,
                                          GC_DIM_TEAM);
                }
                ck_assert(!gc_ledger_span_whole(x->l, t0() + 3600, t0() + DAY + 3600));
        }
        /* Version 3 (no coarsened buckets, no "coarse_to") reads as before. */
        fx_free(&a);
        fx_new(&a);
        fill_big(a.l, &now);
        ck_assert_int_eq(gc_checkpoint_encode(a.l, now, "ctl-0", 0, &chunks, &n, err, sizeof(err)),
                         0);
        {
                const char **data = calloc(n, sizeof(*data));
                size_t *lens = calloc(n, sizeof(*lens));
                char **olds = calloc(n, sizeof(*olds));

                for (size_t i = 0; i < n; i++) {
                        char *at;

                        olds[i] = edited(&chunks[i], "\"version\":5", "\"version\":3", &len);
                        at = strstr(olds[i], ",\"coarse_to\":null");
                        ck_assert_ptr_nonnull(at);
                        memmove(at, at + 17, strlen(at + 17) + 1);
                        data[i] = olds[i];
                        lens[i] = strlen(olds[i]);
                }
                fx_new(&d);
                ck_assert_msg(
                    gc_checkpoint_decode(d.l, data, lens, n, 0, 0, &info, err, sizeof(err)) == 0,
                    "decode: %s", err);
                ck_assert_int_eq(info.header.written_version, 3);
                ck_assert_int_eq(gc_ledger_coarse_to(d.l), INT64_MIN);
                assert_same_query(a.l, d.l, t0(), t0() + DAY, now, GC_DIM_NODE);
                gc_checkpoint_info_release(&info);
                for (size_t i = 0; i < n; i++)
                        free(olds[i]);
                free(olds);
                free(data);
                free(lens);
        }
        gc_checkpoint_chunks_free(chunks, n);
        fx_free(&a);
        fx_free(&b);
        fx_free(&c);
        fx_free(&d);
}
END_TEST

/*
 * A ledger keeping label keys writes versions 7 and 8 (its bodies name the keys, records carry
 * the values) and restores with every value: by label, every period and hourly window answers
 * the same, coarsened days included. Into a ledger keeping other keys, values go by key name
 * (a key no longer kept merges its rows; a new key reads __unlabelled__). A ledger keeping none
 * still writes 5 and 6, and those restore into one keeping keys, every value unlabelled.
 */
START_TEST(roundtrip_labels)
{
        static const int64_t win[][2] = {
            {0, 7 * DAY}, {DAY, 2 * DAY}, {8 * DAY, 9 * DAY}, {6 * DAY + 3 * H, 7 * DAY + 5 * H}};
        fixture a, b, c, d, e;
        gc_checkpoint_info info;
        gc_checkpoint_write w;
        gc_buf *chunks = NULL;
        int64_t now, base = t0();
        size_t n = 0;
        char err[512];

        fx_new_labels(&a);
        with_labels = 1;
        fill_big(a.l, &now);
        with_labels = 0;
        ck_assert_int_eq(gc_ledger_coarsen(a.l, base + 3 * DAY), 0);

        /* Full write: version 7, restored with every value. */
        ck_assert_int_eq(gc_checkpoint_encode(a.l, base + 12 * DAY, "ctl-0",
                                              GC_CHECKPOINT_MIN_CHUNK, &chunks, &n, err,
                                              sizeof(err)),
                         0);
        ck_assert_ptr_nonnull(strstr(chunks[0].data, "{\"version\":7,"));
        ck_assert_ptr_nonnull(strstr(chunks[0].data, "\"label_keys\":[\"cost-center\",\"exp\"],"));
        gc_checkpoint_chunks_free(chunks, n);
        {
                gc_buf *ch = NULL;
                const char **data;
                size_t *lens;

                ck_assert_int_eq(gc_checkpoint_encode(a.l, base + 12 * DAY, "ctl-0",
                                                      GC_CHECKPOINT_MIN_CHUNK, &ch, &n, err,
                                                      sizeof(err)),
                                 0);
                data = calloc(n, sizeof(*data));
                lens = calloc(n, sizeof(*lens));
                for (size_t i = 0; i < n; i++) {
                        data[i] = ch[i].data;
                        lens[i] = ch[i].len;
                }
                fx_new_labels(&b);
                ck_assert_msg(
                    gc_checkpoint_decode(b.l, data, lens, n, 0, 0, &info, err, sizeof(err)) == 0,
                    "decode: %s", err);
                gc_checkpoint_info_release(&info);
                free(data);
                free(lens);
                gc_checkpoint_chunks_free(ch, n);
        }
        assert_same_records(a.l, b.l);
        for (size_t k = 0; k < sizeof(win) / sizeof(win[0]); k++) {
                for (gc_dim dim = GC_DIM_LABEL; dim < GC_DIM_LABEL + 2; dim++) {
                        assert_same_query(a.l, b.l, base + win[k][0], base + win[k][1], now, dim);
                        assert_same_by_label(a.l, dim, b.l, dim, base + win[k][0], base + win[k][1],
                                             now);
                }
        }

        /* Incremental write: version 8; the same. */
        memset(&w, 0, sizeof(w));
        encode_incr(a.l, 1, base + 12 * DAY, &w);
        ck_assert_ptr_nonnull(strstr(w.manifest.data, "{\"version\":8,"));
        decode_incr_into(&w, &c, fx_new_labels);
        assert_same_records_sorted(a.l, c.l);
        for (size_t k = 0; k < sizeof(win) / sizeof(win[0]); k++)
                assert_same_query(a.l, c.l, base + win[k][0], base + win[k][1], now,
                                  GC_DIM_LABEL + 1);

        /* Into a ledger keeping "exp" first and a new key: by name. */
        decode_incr_into(&w, &d, fx_new_exp_only);
        for (size_t k = 0; k < sizeof(win) / sizeof(win[0]); k++) {
                gc_query q;
                gc_cost_summary s;

                assert_same_by_label(a.l, GC_DIM_LABEL + 1, d.l, GC_DIM_LABEL, base + win[k][0],
                                     base + win[k][1], now);
                memset(&q, 0, sizeof(q));
                q.start = base + win[k][0];
                q.end = base + win[k][1];
                q.now = now;
                q.by[0] = GC_DIM_LABEL + 1;
                q.n_by = 1;
                ck_assert_int_eq(gc_ledger_query(d.l, &q, &s), 0);
                ck_assert_uint_eq(s.n_rows, 1);
                ck_assert_str_eq(s.rows[0].keys[GC_DIM_LABEL + 1], GC_UNLABELLED);
                gc_cost_summary_free(&s);
        }
        gc_checkpoint_write_release(&w);

        /* A ledger keeping none writes version 5 as before; restored into one keeping keys. */
        fx_new(&e);
        fill_big(e.l, &now);
        fx_free(&d);
        ck_assert_int_eq(gc_checkpoint_encode(e.l, base + 12 * DAY, "ctl-0",
                                              GC_CHECKPOINT_MIN_CHUNK, &chunks, &n, err,
                                              sizeof(err)),
                         0);
        ck_assert_ptr_nonnull(strstr(chunks[0].data, "{\"version\":5,"));
        ck_assert_ptr_null(strstr(chunks[0].data, "label_keys"));
        gc_checkpoint_chunks_free(chunks, n);
        memset(&w, 0, sizeof(w));
        encode_incr(e.l, 1, base + 12 * DAY, &w);
        ck_assert_ptr_nonnull(strstr(w.manifest.data, "{\"version\":6,"));
        decode_incr_into(&w, &d, fx_new_labels);
        assert_same_query(e.l, d.l, base, base + 7 * DAY, now, GC_DIM_TEAM);
        {
                gc_query q;
                gc_cost_summary s;

                memset(&q, 0, sizeof(q));
                q.start = base;
                q.end = base + 7 * DAY;
                q.now = now;
                q.by[0] = GC_DIM_LABEL;
                q.n_by = 1;
                ck_assert_int_eq(gc_ledger_query(d.l, &q, &s), 0);
                ck_assert_uint_eq(s.n_rows, 1);
                ck_assert_str_eq(s.rows[0].keys[GC_DIM_LABEL], GC_UNLABELLED);
                gc_cost_summary_free(&s);
        }
        gc_checkpoint_write_release(&w);
        fx_free(&a);
        fx_free(&b);
        fx_free(&c);
        fx_free(&d);
        fx_free(&e);
}
END_TEST

/*
 * A ledger of quarter-hour buckets (a report zone at +05:45) writes its runs in quarter hours:
 * a node's unchanged capacity is one record per part, not one per bucket, and restores bucket
 * for bucket, from a full write and an incremental one.
 */
static void fx_new_quarter(fixture *f)
{
        gc_ledger_opts o = {0};

        f->pool = gc_strpool_new(64u << 20);
        ck_assert_ptr_nonnull(f->pool);
        o.pool = f->pool;
        o.bucket_s = 900;
        f->l = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(f->l);
}

START_TEST(roundtrip_quarter_hour_runs)
{
        fixture a, b, c;
        gc_checkpoint_info info;
        gc_checkpoint_write w;
        gc_buf *chunks = NULL;
        size_t n = 0, bytes = 0;
        char err[512];
        int64_t now;

        fx_new_quarter(&a);
        fill_big(a.l, &now);
        ck_assert_int_eq(gc_ledger_granularity(a.l), 900);
        ck_assert_int_eq(gc_checkpoint_encode(a.l, now, "ctl-0", 0, &chunks, &n, err, sizeof(err)),
                         0);
        {
                const char **data = calloc(n, sizeof(*data));
                size_t *lens = calloc(n, sizeof(*lens));

                for (size_t i = 0; i < n; i++) {
                        ck_assert_ptr_nonnull(strstr(chunks[i].data, "\"bucket_s\":900"));
                        bytes += chunks[i].len;
                        data[i] = chunks[i].data;
                        lens[i] = chunks[i].len;
                }
                fx_new_quarter(&b);
                ck_assert_msg(
                    gc_checkpoint_decode(b.l, data, lens, n, 0, 0, &info, err, sizeof(err)) == 0,
                    "decode: %s", err);
                free(data);
                free(lens);
        }
        gc_checkpoint_chunks_free(chunks, n);
        ck_assert_int_eq(info.header.bucket_s, 900);
        gc_checkpoint_info_release(&info);
        assert_same_records_sorted(a.l, b.l);
        encode_incr(a.l, 5, now, &w);
        decode_incr_into(&w, &c, fx_new_quarter);
        gc_checkpoint_write_release(&w);
        assert_same_records_sorted(a.l, c.l);
        for (int64_t day = 0; day < 7; day++)
                assert_same_query(a.l, c.l, t0() + day * DAY, t0() + (day + 1) * DAY, now,
                                  GC_DIM_NODE);
        printf("quarter-hour checkpoint: %zu bytes\n", bytes);
        /* The report zone went from :45 to whole hours: the quarter hours restore into hours,
         * every day's figures as they were (a day of UTC is whole hours either way). */
        {
                fixture h;

                encode_incr(a.l, 6, now, &w);
                decode_incr(&w, &h);
                gc_checkpoint_write_release(&w);
                for (int64_t day = 0; day < 7; day++)
                        for (gc_dim by = GC_DIM_NAMESPACE; by <= GC_DIM_NODE; by++)
                                assert_same_query(a.l, h.l, t0() + day * DAY,
                                                  t0() + (day + 1) * DAY, now, by);
                fx_free(&h);
        }
        fx_free(&a);
        fx_free(&b);
        fx_free(&c);
}
END_TEST

START_TEST(leftover_chunks_ignored)
{
        writes w;
        fixture small, b;
        gc_buf *s = NULL;
        const char *data[128];
        size_t lens[128], ns = 0, n = 0;
        gc_checkpoint_info info;
        char err[256];

        writes_make(&w);
        fx_new(&small);
        put_pod(small.l, "only", "ns", "t", "p", "node", "m", 1, 2, t0(), GC_OPEN, 0);
        ck_assert_int_eq(
            gc_checkpoint_encode(small.l, t0() + 99, "ctl", 0, &s, &ns, err, sizeof(err)), 0);
        ck_assert_uint_eq(ns, 1);
        data[n] = s[0].data;
        lens[n++] = s[0].len;
        for (size_t i = 1; i < w.n1; i++) {
                data[n] = w.w1[i].data;
                lens[n++] = w.w1[i].len;
        }
        fx_new(&b);
        ck_assert_int_eq(gc_checkpoint_decode(b.l, data, lens, n, 0, 0, &info, err, sizeof(err)),
                         0);
        ck_assert_uint_eq(info.ignored, w.n1 - 1);
        ck_assert_uint_eq(info.n_open, 1);
        ck_assert_str_eq(info.open[0].pod_uid, "only");
        ck_assert_int_eq(info.open[0].start, t0());
        ck_assert(info.open[0].geq == 1.0);
        assert_same_records(small.l, b.l);
        gc_checkpoint_info_release(&info);
        gc_checkpoint_chunks_free(s, ns);
        fx_free(&small);
        fx_free(&b);
        writes_free(&w);
}
END_TEST

START_TEST(encode_limits)
{
        fixture a;
        gc_buf *chunks = NULL;
        size_t n = 0;
        char err[256], big[GC_CHECKPOINT_MAX_STRING + 2];

        fx_new(&a);
        ck_assert_int_eq(
            gc_checkpoint_encode(a.l, t0(), "bad\"id", 0, &chunks, &n, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "controller"));
        ck_assert_int_eq(
            gc_checkpoint_encode(a.l, t0(), "ctl", 1000, &chunks, &n, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "chunk_bytes"));
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        put_pod(a.l, "p", big, "t", "p", "n", "m", 1, 1, t0(), GC_OPEN, 0);
        ck_assert_int_eq(gc_checkpoint_encode(a.l, t0(), "ctl", 0, &chunks, &n, err, sizeof(err)),
                         -E2BIG);
        ck_assert_ptr_nonnull(strstr(err, "1025 bytes"));
        ck_assert_ptr_null(chunks);
        fx_free(&a);
}
END_TEST

/* ---- pods deleted while the controller was away -----------------------------------------------
 */

/* ---- incremental writes (version 2) ------------------------------------------------------ */

#define CM_MAX 1024

/* The API server's ConfigMaps as the controller's writer sees them: name -> checkpoint.json. */
typedef struct cmstore {
        char name[CM_MAX][GC_CHECKPOINT_NAME_MAX];
        char *data[CM_MAX];
        size_t len[CM_MAX];
        size_t n;
        size_t puts; /* ConfigMaps put since the store was made */
} cmstore;

static long cm_find(const cmstore *cs, const char *name)
{
        for (size_t i = 0; i < cs->n; i++)
                if (strcmp(cs->name[i], name) == 0)
                        return (long)i;
        return -1;
}

static void cm_put(cmstore *cs, const char *name, const gc_buf *b)
{
        long i = cm_find(cs, name);

        if (i < 0) {
                ck_assert_uint_lt(cs->n, CM_MAX);
                i = (long)cs->n++;
                gc_strlcpy(cs->name[i], name, GC_CHECKPOINT_NAME_MAX);
        }
        free(cs->data[i]);
        cs->data[i] = strdup(b->data);
        ck_assert_ptr_nonnull(cs->data[i]);
        cs->len[i] = b->len;
        cs->puts++;
}

static void cm_delete(cmstore *cs, size_t i)
{
        free(cs->data[i]);
        cs->n--;
        memmove(cs->name[i], cs->name[cs->n], GC_CHECKPOINT_NAME_MAX);
        cs->data[i] = cs->data[cs->n];
        cs->len[i] = cs->len[cs->n];
        cs->data[cs->n] = NULL;
}

static void cm_free(cmstore *cs)
{
        for (size_t i = 0; i < cs->n; i++)
                free(cs->data[i]);
        free(cs);
}

/* The names the chunk 0 of slot s lists (0 for an empty slot or a version 1 write). */
static size_t cm_manifest(const cmstore *cs, size_t s, char (*names)[GC_CHECKPOINT_NAME_MAX])
{
        char name[GC_CHECKPOINT_NAME_MAX];
        size_t n = 0;
        long i;

        gc_checkpoint_slot_name(s, 0, name);
        i = cm_find(cs, name);
        if (i >= 0)
                ck_assert_int_eq(gc_checkpoint_manifest_parts(cs->data[i], cs->len[i], names,
                                                              GC_CHECKPOINT_MAX_PARTS, &n),
                                 0);
        return n;
}

/*
 * The controller's write: the parts whose names are not stored, then the manifest into slot s,
 * stopping after `stop` ConfigMaps; when whole, deletes what no slot's manifest needs. Returns how
 * many ConfigMaps the whole write puts.
 */
static size_t cm_write(cmstore *cs, size_t s, const gc_checkpoint_write *w, size_t stop)
{
        char(*keep)[GC_CHECKPOINT_NAME_MAX] = calloc(2 * GC_CHECKPOINT_MAX_PARTS, sizeof(*keep));
        char name[GC_CHECKPOINT_NAME_MAX];
        size_t n_put = 0, done = 0, n_keep;
        unsigned char fresh[GC_CHECKPOINT_MAX_PARTS];

        ck_assert_ptr_nonnull(keep);
        for (size_t i = 0; i < w->n_parts; i++) {
                fresh[i] = cm_find(cs, w->parts[i].name) < 0;
                n_put += fresh[i];
        }
        for (size_t i = 0; i < w->n_parts && done < stop; i++) {
                if (!fresh[i])
                        continue;
                cm_put(cs, w->parts[i].name, &w->parts[i].data);
                done++;
        }
        if (done < stop) {
                gc_checkpoint_slot_name(s, 0, name);
                cm_put(cs, name, &w->manifest);
                for (size_t i = 0; i < w->n_parts; i++)
                        gc_strlcpy(keep[i], w->parts[i].name, GC_CHECKPOINT_NAME_MAX);
                n_keep = w->n_parts + cm_manifest(cs, s == 0 ? 1 : 0, keep + w->n_parts);
                for (size_t i = 0; i < cs->n;) {
                        if (gc_checkpoint_is_garbage(cs->name[i], s, keep, n_keep))
                                cm_delete(cs, i);
                        else
                                i++;
                }
        }
        free(keep);
        return n_put + 1;
}

/* The controller's restore: each slot's chunk 0, then what its manifest (or of) names. */
static int cm_restore(const cmstore *cs, gc_ledger *l, size_t *ret_slot, size_t *ret_refused,
                      char *err, size_t errlen)
{
        enum { G = GC_CHECKPOINT_GENERATIONS, MAXC = GC_CHECKPOINT_MAX_PARTS + 1 };
        static const char *in[G][MAXC];
        static size_t lens[G][MAXC];
        static char names[MAXC][GC_CHECKPOINT_NAME_MAX];
        gc_checkpoint_slot slots[G];
        gc_checkpoint_info info;
        int r;

        memset(in, 0, sizeof(in));
        memset(slots, 0, sizeof(slots));
        for (size_t s = 0; s < G; s++) {
                gc_checkpoint_header h;
                size_t n_parts, n = 1;
                long i;

                gc_checkpoint_slot_name(s, 0, names[0]);
                i = cm_find(cs, names[0]);
                slots[s].chunks = in[s];
                slots[s].lens = lens[s];
                if (i < 0)
                        continue;
                in[s][0] = cs->data[i];
                lens[s][0] = cs->len[i];
                if (gc_checkpoint_peek(in[s][0], lens[s][0], &h, NULL, 0) == 0)
                        n = h.of;
                n_parts = cm_manifest(cs, s, names + 1);
                for (size_t k = 1; k < n; k++) {
                        if (!n_parts)
                                gc_checkpoint_slot_name(s, k, names[k]);
                        i = cm_find(cs, names[k]);
                        in[s][k] = i < 0 ? NULL : cs->data[i];
                        lens[s][k] = i < 0 ? 0 : cs->len[i];
                }
                slots[s].n = n;
        }
        memset(&info, 0, sizeof(info));
        r = gc_checkpoint_decode_newest(l, slots, G, 0, 0, &info, ret_slot, ret_refused, err,
                                        errlen);
        gc_checkpoint_info_release(&info);
        return r;
}

static void encode_incr(const gc_ledger *l, uint64_t gen, int64_t at, gc_checkpoint_write *w)
{
        gc_checkpoint_rv rv = {"pods", "100"};
        gc_checkpoint_meta m = {&rv, 1, gen};
        char err[256];

        snprintf(rv.rv, sizeof(rv.rv), "%llu", (unsigned long long)(100 + gen));
        ck_assert_msg(gc_checkpoint_encode_incr(l, at, "ctl", &m, GC_CHECKPOINT_MIN_CHUNK, w, err,
                                                sizeof(err)) == 0,
                      "encode: %s", err);
}

static size_t parts_in_common(const gc_checkpoint_write *a, const gc_checkpoint_write *b)
{
        size_t n = 0;

        for (size_t i = 0; i < a->n_parts; i++)
                for (size_t k = 0; k < b->n_parts; k++)
                        n += strcmp(a->parts[i].name, b->parts[k].name) == 0;
        return n;
}

/* A round trip through parts given in any order, the manifest among them; and what it says. */
START_TEST(incr_roundtrip)
{
        fixture a, b;
        gc_checkpoint_write w;
        gc_checkpoint_info info;
        gc_checkpoint_header h;
        const char **data;
        size_t *lens, n, n_names;
        char err[512], (*names)[GC_CHECKPOINT_NAME_MAX];
        int64_t now;

        fx_new(&a);
        fill_big(a.l, &now);
        encode_incr(a.l, 7, now, &w);
        ck_assert_uint_gt(w.n_parts, GC_CHECKPOINT_USAGE_BUCKETS);
        ck_assert_int_eq(gc_checkpoint_peek(w.manifest.data, w.manifest.len, &h, err, sizeof(err)),
                         0);
        ck_assert_int_eq(h.version, GC_CHECKPOINT_VERSION_INCR);
        ck_assert_uint_eq(h.of, w.n_parts + 1);
        ck_assert_uint_eq(h.generation, 7);
        ck_assert_str_eq(gc_checkpoint_rv_of(&h, "pods"), "107");
        names = calloc(w.n_parts, sizeof(*names));
        ck_assert_int_eq(gc_checkpoint_manifest_parts(w.manifest.data, w.manifest.len, names,
                                                      w.n_parts, &n_names),
                         0);
        ck_assert_uint_eq(n_names, w.n_parts);
        ck_assert_int_eq(gc_checkpoint_manifest_parts(w.manifest.data, w.manifest.len, names,
                                                      w.n_parts - 1, &n_names),
                         -E2BIG);
        n = w.n_parts + 1;
        data = calloc(n, sizeof(*data));
        lens = calloc(n, sizeof(*lens));
        for (size_t i = 0; i < w.n_parts; i++) {
                ck_assert_str_eq(names[i], w.parts[i].name);
                ck_assert(gc_checkpoint_is_part_name(w.parts[i].name));
                ck_assert_uint_le(w.parts[i].data.len, GC_CHECKPOINT_MIN_CHUNK);
                data[n - 1 - i] = w.parts[i].data.data;
                lens[n - 1 - i] = w.parts[i].data.len;
        }
        data[0] = w.manifest.data;
        lens[0] = w.manifest.len;
        fx_new(&b);
        memset(&info, 0, sizeof(info));
        ck_assert_msg(gc_checkpoint_decode(b.l, data, lens, n, 0, 0, &info, err, sizeof(err)) == 0,
                      "decode: %s", err);
        ck_assert_uint_eq(info.header.generation, 7);
        assert_same_records_sorted(a.l, b.l);
        for (gc_dim by = GC_DIM_NAMESPACE; by < GC_DIM_COUNT; by++)
                assert_same_query(a.l, b.l, t0() - DAY, now + DAY, now, by);
        assert_same_query(a.l, b.l, t0() + 2 * DAY + 1800, t0() + 9 * DAY + 600, now, GC_DIM_TEAM);
        gc_checkpoint_info_release(&info);
        ck_assert(!gc_checkpoint_is_part_name("gpu-cost-checkpoint-c-0123"));
        ck_assert(!gc_checkpoint_is_part_name("gpu-cost-checkpoint-c-"
                                              "0123456789abcdef0123456789ABCDEF"));
        ck_assert(!gc_checkpoint_is_part_name("gpu-cost-checkpoint-1"));
        ck_assert_int_eq(gc_checkpoint_parse_name(w.parts[0].name, NULL, NULL), -EINVAL);
        free(names);
        free(data);
        free(lens);
        gc_checkpoint_write_release(&w);
        fx_free(&b);
        fx_free(&a);
}
END_TEST

/*
 * Parts are content-stable: a write of the same ledger later has the same parts; a pod that
 * ends changes one usage bucket only; folding a new hour changes only the parts of that hour's
 * day (and the usage buckets of the intervals folded), never a closed day's.
 */
START_TEST(incr_unchanged_part_not_rewritten)
{
        fixture a;
        gc_checkpoint_write w1, w2, w3, w4;
        cmstore *cs = calloc(1, sizeof(*cs));
        size_t puts, n_put;
        int64_t now;

        ck_assert_ptr_nonnull(cs);
        fx_new(&a);
        fill_big(a.l, &now);
        encode_incr(a.l, 1, now, &w1);
        encode_incr(a.l, 2, now + 60, &w2);
        ck_assert_uint_eq(w1.n_parts, w2.n_parts);
        ck_assert_uint_eq(parts_in_common(&w1, &w2), w1.n_parts);
        ck_assert_str_ne(w1.manifest.data, w2.manifest.data);

        /* One pod starts: its bucket's part changes, nothing else. */
        put_pod(a.l, "new-pod", "ml", "vision", "p", "node-01", "NVIDIA-L4", 1, 2.5, now - 30,
                GC_OPEN, 0);
        encode_incr(a.l, 3, now + 120, &w3);
        ck_assert_uint_eq(w3.n_parts, w2.n_parts);
        ck_assert_uint_eq(parts_in_common(&w2, &w3), w2.n_parts - 1);

        /* The writer puts that part and the manifest: two ConfigMaps. */
        cm_write(cs, 0, &w1, SIZE_MAX);
        cm_write(cs, 1, &w2, SIZE_MAX);
        puts = cs->puts;
        n_put = cm_write(cs, 0, &w3, SIZE_MAX);
        ck_assert_uint_eq(n_put, 2);
        ck_assert_uint_eq(cs->puts - puts, 2);

        /* A fold of one more hour leaves the closed days' parts alone. */
        ck_assert_int_ge(gc_ledger_fold(a.l, t0() + 6 * DAY + 1800 + H, t0() - DAY), 0);
        encode_incr(a.l, 4, now + 180, &w4);
        {
                size_t common = parts_in_common(&w3, &w4), checked = 0;

                ck_assert_uint_gt(common, 0);
                /* The parts of the days a fold cannot reach any more are all kept. */
                for (size_t i = 0; i < w3.n_parts; i++) {
                        const char *p = strstr(w3.parts[i].data.data, "\"rollups\":[[");
                        long long hour = 0;
                        int same = 0;

                        if (!p)
                                continue;
                        /* the first rollup's hour follows its six string indexes */
                        p = strchr(p, '[');
                        p = strchr(p + 1, '[');
                        for (int c = 0; c < 6 && p; c++)
                                p = strchr(p + 1, ',');
                        if (!p || sscanf(p + 1, "%lld", &hour) != 1)
                                continue;
                        /* pods last at most two days: a fold at day 6 reaches back to day 4 */
                        if (hour >= t0() + 4 * DAY)
                                continue;
                        for (size_t k = 0; k < w4.n_parts; k++)
                                same |= strcmp(w3.parts[i].name, w4.parts[k].name) == 0;
                        ck_assert_msg(same, "a part of a closed day (hour %lld) was rewritten",
                                      hour);
                        checked++;
                }
                ck_assert_uint_ge(checked, 4);
                /* and the fold did rewrite some parts (the buckets it emptied, its days) */
                ck_assert_uint_lt(common, w3.n_parts);
        }
        gc_checkpoint_write_release(&w1);
        gc_checkpoint_write_release(&w2);
        gc_checkpoint_write_release(&w3);
        gc_checkpoint_write_release(&w4);
        cm_free(cs);
        fx_free(&a);
}
END_TEST

/*
 * Garbage collection: a part both slots' manifests name survives the write that replaces one of
 * them; a part no manifest names any more is deleted; version 1 chunks of the slot written are
 * deleted, the other slot's kept.
 */
START_TEST(incr_garbage_collection)
{
        fixture a;
        gc_checkpoint_write w1, w2, w3;
        cmstore *cs = calloc(1, sizeof(*cs));
        gc_buf *v1;
        size_t n_v1, n_shared = 0;
        char name[GC_CHECKPOINT_NAME_MAX];
        int64_t now;

        ck_assert_ptr_nonnull(cs);
        fx_new(&a);
        fill_big(a.l, &now);
        /* An earlier build's write in both slots. */
        v1 = encode_gen(a.l, 1, now, &n_v1);
        ck_assert_uint_gt(n_v1, 2);
        for (size_t s = 0; s < 2; s++) {
                for (size_t k = 0; k < n_v1; k++) {
                        gc_checkpoint_slot_name(s, k, name);
                        cm_put(cs, name, &v1[k]);
                }
        }
        encode_incr(a.l, 2, now + 60, &w1);
        cm_write(cs, 0, &w1, SIZE_MAX);
        /* Slot 0's chunks 1.. went, slot 1's stayed. */
        gc_checkpoint_slot_name(0, 1, name);
        ck_assert_int_lt(cm_find(cs, name), 0);
        gc_checkpoint_slot_name(1, n_v1 - 1, name);
        ck_assert_int_ge(cm_find(cs, name), 0);

        put_pod(a.l, "gc-pod", "ml", "vision", "p", "node-01", "NVIDIA-L4", 1, 2.5, now - 30,
                GC_OPEN, 0);
        encode_incr(a.l, 3, now + 120, &w2);
        cm_write(cs, 1, &w2, SIZE_MAX);
        /* Now both slots are incremental: only chunk 0s and parts are left. */
        for (size_t i = 0; i < cs->n; i++) {
                size_t s, k;

                ck_assert(gc_checkpoint_is_part_name(cs->name[i]) ||
                          (gc_checkpoint_parse_name(cs->name[i], &s, &k) == 0 && k == 0));
        }
        ck_assert_uint_eq(cs->n, w1.n_parts + 1 + 2); /* w2 added one part and its manifest */

        /* w3 replaces slot 0 (w1): the parts w1 and w2 share stay; w1's own part goes. */
        ck_assert_int_eq(gc_ledger_forget_usage(a.l, "gc-pod"), 0);
        put_pod(a.l, "gc-pod-2", "ml", "vision", "p", "node-02", "NVIDIA-L4", 1, 2.5, now - 20,
                GC_OPEN, 0);
        encode_incr(a.l, 4, now + 180, &w3);
        cm_write(cs, 0, &w3, SIZE_MAX);
        for (size_t i = 0; i < w1.n_parts; i++) {
                int in_w2 = 0, in_w3 = 0;

                for (size_t k = 0; k < w2.n_parts; k++)
                        in_w2 |= strcmp(w1.parts[i].name, w2.parts[k].name) == 0;
                for (size_t k = 0; k < w3.n_parts; k++)
                        in_w3 |= strcmp(w1.parts[i].name, w3.parts[k].name) == 0;
                n_shared += in_w2;
                ck_assert_msg((cm_find(cs, w1.parts[i].name) >= 0) == (in_w2 || in_w3),
                              "part %zu: kept iff a slot names it", i);
        }
        ck_assert_uint_gt(n_shared, 0);
        for (size_t i = 0; i < cs->n; i++) {
                int named = !gc_checkpoint_is_part_name(cs->name[i]);

                for (size_t k = 0; !named && k < w2.n_parts; k++)
                        named = strcmp(cs->name[i], w2.parts[k].name) == 0;
                for (size_t k = 0; !named && k < w3.n_parts; k++)
                        named = strcmp(cs->name[i], w3.parts[k].name) == 0;
                ck_assert_msg(named, "%s is named by no generation", cs->name[i]);
        }
        /* An orphan of a write that died (no manifest names it) goes at the next write. */
        {
                gc_buf orphan;
                const char *o = GC_CHECKPOINT_PART_PREFIX "00000000000000000000000000000000";

                gc_buf_init(&orphan, 64);
                ck_assert_int_eq(gc_buf_puts(&orphan, "{}"), 0);
                cm_put(cs, o, &orphan);
                cm_write(cs, 1, &w3, SIZE_MAX);
                ck_assert_int_lt(cm_find(cs, o), 0);
                gc_buf_free(&orphan);
        }
        gc_checkpoint_chunks_free(v1, n_v1);
        gc_checkpoint_write_release(&w1);
        gc_checkpoint_write_release(&w2);
        gc_checkpoint_write_release(&w3);
        cm_free(cs);
        fx_free(&a);
}
END_TEST

/*
 * Generation 3 into slot 0 (generation 1's) killed after k of its ConfigMaps for several k: the
 * restore is generation 2 until the manifest is written, then generation 3; both bit for bit.
 * Also across the upgrade: a version 1 generation stays restorable under a torn incremental one.
 */
START_TEST(incr_torn_write)
{
        fixture a, b;
        gc_ledger *l2;
        gc_checkpoint_write w1, w2, w3;
        size_t slot, refused, n3;
        char err[1024];
        int64_t now;

        fx_new(&a);
        fill_big(a.l, &now);
        encode_incr(a.l, 1, now, &w1);
        put_pod(a.l, "gen-2", "ml", "vision", "p", "node-x", "H100", 1, 2.5, now - 600, GC_OPEN, 0);
        l2 = gc_ledger_clone(a.l);
        ck_assert_ptr_nonnull(l2);
        encode_incr(a.l, 2, now + 60, &w2);
        /* Many parts change: a fold, and pods that end. */
        ck_assert_int_gt(gc_ledger_fold(a.l, t0() + 8 * DAY, t0() - DAY), 0);
        put_pod(a.l, "gen-3", "ml", "vision", "p", "node-x", "H100", 2, 2.5, now - 300, GC_OPEN, 0);
        encode_incr(a.l, 3, now + 120, &w3);
        {
                cmstore *probe = calloc(1, sizeof(*probe));

                cm_write(probe, 0, &w1, SIZE_MAX);
                cm_write(probe, 1, &w2, SIZE_MAX);
                n3 = cm_write(probe, 0, &w3, 0);
                cm_free(probe);
        }
        ck_assert_uint_gt(n3, 4);
        for (size_t ki = 0; ki < 6; ki++) {
                const size_t ks[6] = {0, 1, 2, n3 / 2, n3 - 1, n3};
                cmstore *cs = calloc(1, sizeof(*cs));

                cm_write(cs, 0, &w1, SIZE_MAX);
                cm_write(cs, 1, &w2, SIZE_MAX);
                cm_write(cs, 0, &w3, ks[ki]);
                fx_new(&b);
                ck_assert_msg(cm_restore(cs, b.l, &slot, &refused, err, sizeof(err)) == 0,
                              "k=%zu: %s", ks[ki], err);
                ck_assert_uint_eq(refused, 0);
                if (ks[ki] < n3) {
                        ck_assert_msg(slot == 1, "k=%zu: restored slot %zu", ks[ki], slot);
                        assert_same_records_sorted(l2, b.l);
                } else {
                        ck_assert_uint_eq(slot, 0);
                        assert_same_records_sorted(a.l, b.l);
                }
                fx_free(&b);
                cm_free(cs);
        }

        /* Upgrade: version 1 generation in slot 0, an incremental one torn in slot 1. */
        {
                cmstore *cs = calloc(1, sizeof(*cs));
                char name[GC_CHECKPOINT_NAME_MAX];
                size_t n_v1;
                gc_buf *v1 = encode_gen(l2, 5, now + 60, &n_v1);

                for (size_t k = n_v1; k-- > 0;) {
                        gc_checkpoint_slot_name(0, k, name);
                        cm_put(cs, name, &v1[k]);
                }
                cm_write(cs, 1, &w3, n3 - 1);
                fx_new(&b);
                ck_assert_msg(cm_restore(cs, b.l, &slot, &refused, err, sizeof(err)) == 0, "%s",
                              err);
                ck_assert_uint_eq(slot, 0);
                assert_same_records(l2, b.l);
                fx_free(&b);
                /* and once the incremental write is whole, it wins (generation 3 < 5 is older:
                   write it as generation 6) */
                gc_checkpoint_write_release(&w3);
                encode_incr(a.l, 6, now + 180, &w3);
                cm_write(cs, 1, &w3, SIZE_MAX);
                fx_new(&b);
                ck_assert_int_eq(cm_restore(cs, b.l, &slot, &refused, err, sizeof(err)), 0);
                ck_assert_uint_eq(slot, 1);
                assert_same_records_sorted(a.l, b.l);
                /* the version 1 generation is still whole beside it */
                gc_checkpoint_slot_name(0, n_v1 - 1, name);
                ck_assert_int_ge(cm_find(cs, name), 0);
                fx_free(&b);
                gc_checkpoint_chunks_free(v1, n_v1);
                cm_free(cs);
        }
        gc_checkpoint_write_release(&w1);
        gc_checkpoint_write_release(&w2);
        gc_checkpoint_write_release(&w3);
        gc_ledger_free(l2);
        fx_free(&a);
}
END_TEST

/*
 * A part whose content no longer matches its name (edited, truncated, swapped): the generation
 * that names it is refused, loudly, and the previous one restored; when both name it, none is.
 */
START_TEST(incr_corrupt_part)
{
        fixture a, b;
        gc_ledger *l1;
        gc_checkpoint_write w1, w2;
        cmstore *cs = calloc(1, sizeof(*cs));
        size_t slot, refused, own = SIZE_MAX, shared = SIZE_MAX;
        char err[2048];
        int64_t now;
        long i;

        ck_assert_ptr_nonnull(cs);
        fx_new(&a);
        fill_big(a.l, &now);
        l1 = gc_ledger_clone(a.l);
        encode_incr(a.l, 1, now, &w1);
        put_pod(a.l, "late", "ml", "vision", "p", "node-x", "H100", 1, 2.5, now - 600, GC_OPEN, 0);
        encode_incr(a.l, 2, now + 60, &w2);
        cm_write(cs, 0, &w1, SIZE_MAX);
        cm_write(cs, 1, &w2, SIZE_MAX);
        for (size_t k = 0; k < w2.n_parts; k++) {
                int in_w1 = 0;

                for (size_t j = 0; j < w1.n_parts; j++)
                        in_w1 |= strcmp(w1.parts[j].name, w2.parts[k].name) == 0;
                if (in_w1 && shared == SIZE_MAX)
                        shared = k;
                if (!in_w1)
                        own = k;
        }
        ck_assert_uint_ne(own, SIZE_MAX);
        ck_assert_uint_ne(shared, SIZE_MAX);

        /* Generation 2's own part edited (valid JSON, one figure changed). */
        i = cm_find(cs, w2.parts[own].name);
        ck_assert_int_ge(i, 0);
        {
                char *p = strstr(cs->data[i], "\"usage\":[[");

                ck_assert_ptr_nonnull(p);
                p = strchr(p, ',');
                ck_assert_ptr_nonnull(p);
                p[-1] = p[-1] == '0' ? '1' : '0';
        }
        fx_new(&b);
        ck_assert_int_eq(cm_restore(cs, b.l, &slot, &refused, err, sizeof(err)), 0);
        ck_assert_uint_eq(slot, 0);
        ck_assert_uint_eq(refused, 1);
        ck_assert_msg(strstr(err, "does not match its hash") &&
                          strstr(err, w2.parts[own].name + strlen("gpu-cost-checkpoint-c-")),
                      "%s", err);
        assert_same_records_sorted(l1, b.l);
        fx_free(&b);

        /* Truncated: not even JSON. */
        cs->data[i][cs->len[i] / 2] = '\0';
        cs->len[i] /= 2;
        fx_new(&b);
        ck_assert_int_eq(cm_restore(cs, b.l, &slot, &refused, err, sizeof(err)), 0);
        ck_assert_uint_eq(slot, 0);
        ck_assert_uint_eq(refused, 1);
        fx_free(&b);

        /* A part both generations name, swapped for another part's content: nothing complete. */
        i = cm_find(cs, w2.parts[shared].name);
        ck_assert_int_ge(i, 0);
        free(cs->data[i]);
        cs->data[i] = strdup(w2.parts[own].data.data);
        cs->len[i] = w2.parts[own].data.len;
        fx_new(&b);
        ck_assert_int_eq(cm_restore(cs, b.l, &slot, &refused, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "slot 0"));
        ck_assert_ptr_nonnull(strstr(err, "slot 1"));
        fx_free(&b);

        gc_checkpoint_write_release(&w1);
        gc_checkpoint_write_release(&w2);
        gc_ledger_free(l1);
        cm_free(cs);
        fx_free(&a);
}
END_TEST

static int seen_b(void *ud, const char *uid)
{
        (void)ud;
        return strcmp(uid, "b") == 0;
}

/* Nodes gone while away: their open capacity ends at the checkpoint, never before it began. */
static int seen_n2(void *ud, const char *node)
{
        (void)ud;
        return strcmp(node, "n2") == 0;
}

START_TEST(close_missing_nodes)
{
        fixture f;
        records rs;
        size_t count = 99;
        int64_t base = t0(), ckpt = base + 10 * H;
        static const struct {
                const char *node;
                int64_t start, end;
        } caps[] = {{"n1", 0, GC_OPEN},       /* gone: ends at the checkpoint */
                    {"n2", 0, GC_OPEN},       /* still listed: open */
                    {"n3", 0, 2 * H},         /* closed already: untouched */
                    {"n4", 11 * H, GC_OPEN}}; /* began after the checkpoint: ends at its start */

        fx_new(&f);
        for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
                gc_capacity c;

                memset(&c, 0, sizeof(c));
                c.node = caps[i].node;
                c.model = "m";
                c.capacity_type = "on-demand";
                c.geq = 8;
                c.price_per_gpu_hour = 2;
                c.start = base + caps[i].start;
                c.end = caps[i].end == GC_OPEN ? GC_OPEN : base + caps[i].end;
                ck_assert_int_eq(gc_ledger_put_capacity(f.l, &c), 0);
        }
        ck_assert_int_eq(gc_checkpoint_close_missing_nodes(f.l, seen_n2, NULL, ckpt, &count), 0);
        ck_assert_uint_eq(count, 2);
        grab(f.l, &rs);
        ck_assert_uint_eq(rs.n_c, 4);
        for (size_t i = 0; i < rs.n_c; i++) {
                const gc_capacity *c = &rs.c[i];

                if (strcmp(c->node, "n1") == 0)
                        ck_assert_int_eq(c->end, ckpt);
                else if (strcmp(c->node, "n2") == 0)
                        ck_assert_int_eq(c->end, GC_OPEN);
                else if (strcmp(c->node, "n3") == 0)
                        ck_assert_int_eq(c->end, base + 2 * H);
                else
                        ck_assert_int_eq(c->end, c->start);
        }
        records_free(&rs);
        /* Once closed, nothing more to close. */
        ck_assert_int_eq(gc_checkpoint_close_missing_nodes(f.l, seen_n2, NULL, ckpt, &count), 0);
        ck_assert_uint_eq(count, 0);
        ck_assert_int_eq(gc_checkpoint_close_missing_nodes(f.l, NULL, NULL, ckpt, &count), -EINVAL);
        ck_assert_int_eq(gc_checkpoint_close_missing_nodes(f.l, seen_n2, NULL, -1, &count),
                         -EINVAL);
        fx_free(&f);
}
END_TEST

/* A write puts only the parts no ConfigMap is named after yet. */
START_TEST(parts_to_put)
{
        fixture a;
        gc_checkpoint_write w;
        const char **existing;
        unsigned char *put;
        size_t n = 99;
        int64_t now;

        fx_new(&a);
        fill_big(a.l, &now);
        encode_incr(a.l, 1, now, &w);
        ck_assert_uint_gt(w.n_parts, 3);
        /* None there: every part. */
        put = gc_checkpoint_parts_to_put(&w, NULL, 0, &n);
        ck_assert_ptr_nonnull(put);
        ck_assert_uint_eq(n, w.n_parts);
        free(put);
        /* Every other part there, beside names that are not parts. */
        existing = calloc(w.n_parts + 2, sizeof(*existing));
        existing[0] = "gpu-cost-checkpoint-0";
        for (size_t i = 0; i < w.n_parts; i += 2)
                existing[1 + i / 2] = w.parts[i].name;
        put = gc_checkpoint_parts_to_put(&w, existing, 1 + (w.n_parts + 1) / 2, &n);
        ck_assert_ptr_nonnull(put);
        ck_assert_uint_eq(n, w.n_parts / 2);
        for (size_t i = 0; i < w.n_parts; i++)
                ck_assert_int_eq(put[i], i % 2);
        free(put);
        ck_assert_ptr_null(gc_checkpoint_parts_to_put(&w, NULL, 1, &n));
        free(existing);
        gc_checkpoint_write_release(&w);
        fx_free(&a);
}
END_TEST

START_TEST(close_missing)
{
        fixture f;
        gc_query q;
        gc_cost_summary s;
        records rs;
        size_t count = 99;
        double gs = -1;
        int64_t base = t0(), ckpt = base + 10 * H;
        gc_buf note;

        fx_new(&f);
        /* a: 2 GPUs from 00:00; b: still shown; c: 1/7 GPU from 04:00; d: closed already;
         * e: started after the checkpoint time (never before its own start). */
        put_pod(f.l, "a", "ns", "t", "p", "n1", "m", 2, 4.0, base, GC_OPEN, 0);
        put_pod(f.l, "b", "ns", "t", "p", "n1", "m", 1, 4.0, base, GC_OPEN, 0);
        put_pod(f.l, "c", "ns", "t", "p", "n1", "m", 1.0 / 7.0, 4.0, base + 4 * H, GC_OPEN, 0);
        put_pod(f.l, "d", "ns", "t", "p", "n1", "m", 1, 4.0, base, base + H, 0);
        put_pod(f.l, "e", "ns", "t", "p", "n1", "m", 1, 4.0, ckpt + 60, GC_OPEN, 0);
        ck_assert_int_eq(gc_checkpoint_close_missing(f.l, seen_b, NULL, ckpt, &count, &gs), 0);
        ck_assert_uint_eq(count, 3);
        /* a: 10 h x 2 = 72,000; c: 6 h x 1/7 = 3,085.714...; e: 0 */
        ck_assert_double_eq_tol(gs, 72000.0 + 21600.0 / 7.0, 1e-9);

        grab(f.l, &rs);
        for (size_t i = 0; i < rs.n_u; i++) {
                const gc_usage *u = &rs.u[i];

                if (strcmp(u->pod_uid, "a") == 0 || strcmp(u->pod_uid, "c") == 0) {
                        ck_assert_int_eq(u->end, ckpt);
                        ck_assert_uint_eq(u->flags, GC_USAGE_F_ESTIMATE);
                } else if (strcmp(u->pod_uid, "e") == 0) {
                        ck_assert_int_eq(u->end, u->start);
                        ck_assert_uint_eq(u->flags, GC_USAGE_F_ESTIMATE);
                } else if (strcmp(u->pod_uid, "b") == 0) {
                        ck_assert_int_eq(u->end, GC_OPEN);
                        ck_assert_uint_eq(u->flags, 0);
                } else {
                        ck_assert_int_eq(u->end, base + H);
                        ck_assert_uint_eq(u->flags, 0);
                }
        }
        records_free(&rs);

        /* The day's report sees a and c as estimates, and no GPU time after the checkpoint. */
        memset(&q, 0, sizeof(q));
        q.start = base;
        q.end = base + DAY;
        q.now = base + DAY;
        ck_assert_int_eq(gc_ledger_query(f.l, &q, &s), 0);
        ck_assert_uint_eq(s.total.estimates, 2);
        /* a 20 h, b 24 h, c 6/7 h, d 1 h: 45.857... GPU-hours */
        ck_assert_double_eq_tol(s.total.gpu_seconds, (20.0 + 24.0 + 6.0 / 7.0 + 1.0) * 3600.0,
                                1e-6);
        gc_cost_summary_free(&s);

        gc_buf_init(&note, 4096);
        ck_assert_int_eq(gc_checkpoint_estimate_note(count, gs, ckpt, &note), 0);
        ck_assert_str_eq(note.data,
                         "3 pods running at the last checkpoint (2026-11-02T10:00:00Z) were "
                         "deleted while the controller was not running; they are counted up to "
                         "that time, the last moment they were known to exist: 20.86 GPU-hours "
                         "rest on this estimate.");
        gc_buf_free(&note);

        /* Nothing left to close: a second call changes nothing. */
        ck_assert_int_eq(gc_checkpoint_close_missing(f.l, seen_b, NULL, ckpt, &count, &gs), 0);
        ck_assert_uint_eq(count, 0);
        ck_assert(gs == 0.0);
        ck_assert_int_eq(gc_checkpoint_close_missing(f.l, NULL, NULL, ckpt, &count, &gs), -EINVAL);
        fx_free(&f);
}
END_TEST

static Suite *checkpoint_suite(void)
{
        Suite *s = suite_create("checkpoint");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, roundtrip_big);
        tcase_add_test(tc, resource_versions);
        tcase_add_test(tc, generations_survive_a_killed_write);
        tcase_add_test(tc, roundtrip_default_chunk);
        tcase_add_test(tc, roundtrip_empty);
        tcase_add_test(tc, roundtrip_exact_values);
        tcase_add_test(tc, names_and_peek);
        tcase_add_loop_test(tc, refuse, 0, sizeof(refusals) / sizeof(refusals[0]));
        tcase_add_test(tc, leftover_chunks_ignored);
        tcase_add_test(tc, reads_version_1);
        tcase_add_test(tc, roundtrip_coarsened);
        tcase_add_test(tc, roundtrip_quarter_hour_runs);
        tcase_add_test(tc, roundtrip_periods);
        tcase_add_test(tc, roundtrip_usage_basis);
        tcase_add_test(tc, roundtrip_labels);
        tcase_add_test(tc, encode_limits);
        tcase_add_test(tc, close_missing);
        tcase_add_test(tc, close_missing_nodes);
        tcase_add_test(tc, parts_to_put);
        tcase_add_test(tc, incr_roundtrip);
        tcase_add_test(tc, incr_unchanged_part_not_rewritten);
        tcase_add_test(tc, incr_garbage_collection);
        tcase_add_test(tc, incr_torn_write);
        tcase_add_test(tc, incr_corrupt_part);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(checkpoint_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed != 0;
}
