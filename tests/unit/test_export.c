/* Unit tests for pkg/export and the ledger's chargeback shares it rests on. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "export/export.h"
#include "ledger/ledger.h"
#include "util/util.h"

#define HOUR 3600
#define DAY  86400

static int64_t t_at(const char *s)
{
        int64_t t = 0;

        ck_assert_int_eq(gc_time_parse(s, strlen(s), &t), 0);
        return t;
}

/* ---- RFC 4180 fields -------------------------------------------------------------------- */

START_TEST(csv_field_quoting)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
            {"plain", "plain"},
            {"", ""},
            {"a,b", "\"a,b\""},
            {"say \"hi\"", "\"say \"\"hi\"\"\""},
            {"two\r\nlines", "\"two\r\nlines\""},
            {"lf\nonly", "\"lf\nonly\""},
            {"{\"k\":\"v\"}", "\"{\"\"k\"\":\"\"v\"\"}\""},
            {" spaced ", " spaced "},
        };
        gc_buf b;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                gc_buf_init(&b, 1024);
                ck_assert_int_eq(gc_export_csv_field(&b, cases[i].in), 0);
                ck_assert_str_eq(b.data ? b.data : "", cases[i].out);
                gc_buf_free(&b);
        }
        gc_buf_init(&b, 1024);
        ck_assert_int_eq(gc_export_csv_field(&b, NULL), 0); /* null is an empty field */
        ck_assert_uint_eq(b.len, 0);
        gc_buf_free(&b);
        gc_buf_init(&b, 4); /* bounded: a field past the limit is refused */
        ck_assert_int_eq(gc_export_csv_field(&b, "a,bcdef"), -E2BIG);
        gc_buf_free(&b);
}
END_TEST

START_TEST(parse_words)
{
        int64_t g;
        gc_export_format f;
        gc_chargeback_mode m;

        ck_assert_int_eq(gc_export_granularity_parse("daily", &g), 0);
        ck_assert_int_eq(g, DAY);
        ck_assert_int_eq(gc_export_granularity_parse("hourly", &g), 0);
        ck_assert_int_eq(g, HOUR);
        ck_assert_int_eq(gc_export_granularity_parse("weekly", &g), -EINVAL);
        ck_assert_int_eq(gc_export_format_parse("focus", &f), 0);
        ck_assert_int_eq(f, GC_EXPORT_FOCUS);
        ck_assert_int_eq(gc_export_format_parse("csv", &f), 0);
        ck_assert_int_eq(f, GC_EXPORT_CSV);
        ck_assert_int_eq(gc_export_format_parse("CSV", &f), -EINVAL);
        {
                static const struct {
                        const char *s;
                        int minor; /* 0: refused */
                } v[] = {{"1.2", 2}, {"1.3", 3},  {"1.4", 4}, {"1.1", 0}, {"1.5", 0},
                         {"1.", 0},  {"1.30", 0}, {"2.3", 0}, {"", 0},    {"1,3", 0}};

                for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
                        int minor = -1;

                        ck_assert_int_eq(gc_export_focus_version_parse(v[i].s, &minor),
                                         v[i].minor ? 0 : -EINVAL);
                        ck_assert_int_eq(minor, v[i].minor ? v[i].minor : -1);
                }
                ck_assert_int_eq(gc_export_focus_version_parse(NULL, &(int){0}), -EINVAL);
        }
        ck_assert_int_eq(gc_chargeback_mode_parse("proportional", &m), 0);
        ck_assert_int_eq(m, GC_CHARGEBACK_PROPORTIONAL);
        ck_assert_int_eq(gc_chargeback_mode_parse("weights", &m), 0);
        ck_assert_int_eq(gc_chargeback_mode_parse("even", &m), -EINVAL);
        ck_assert_str_eq(gc_chargeback_mode_name(GC_CHARGEBACK_NONE), "none");
}
END_TEST

/* ---- chargeback shares -------------------------------------------------------------------- */

/* ml spends 30 (two rows), web 10, unattributed 5; idle 55: the pool is 60. */
static void fill(gc_cost_summary *s, gc_cost_row rows[4])
{
        memset(s, 0, sizeof(*s));
        memset(rows, 0, 4 * sizeof(*rows));
        s->by[0] = GC_DIM_TEAM;
        s->by[1] = GC_DIM_PROJECT;
        s->n_by = 2;
        rows[0].keys[GC_DIM_TEAM] = "ml";
        rows[0].cost = 20;
        rows[1].keys[GC_DIM_TEAM] = "web";
        rows[1].cost = 10;
        rows[2].keys[GC_DIM_TEAM] = "ml";
        rows[2].cost = 10;
        rows[3].keys[GC_DIM_TEAM] = GC_UNATTRIBUTED;
        rows[3].cost = 5;
        s->rows = rows;
        s->n_rows = 4;
        s->idle.cost = 55;
}

START_TEST(chargeback_proportional)
{
        gc_cost_summary s;
        gc_cost_row rows[4];
        gc_chargeback cb = {GC_CHARGEBACK_PROPORTIONAL, NULL, 0, GC_BASIS_ALLOCATION};
        double ratio[4], pool, bills = 0;

        fill(&s, rows);
        ck_assert_int_eq(gc_chargeback_ratios(&s, &cb, ratio, &pool), 0);
        ck_assert_double_eq_tol(pool, 60, 1e-12);
        ck_assert_double_eq_tol(ratio[0], 0.5, 1e-12); /* ml 3/4, its rows by cost */
        ck_assert_double_eq_tol(ratio[2], 0.25, 1e-12);
        ck_assert_double_eq_tol(ratio[1], 0.25, 1e-12); /* web 1/4 */
        ck_assert_double_eq(ratio[3], 0);
        for (size_t i = 0; i < 3; i++)
                bills += rows[i].cost + ratio[i] * pool;
        ck_assert_double_eq_tol(bills, 45 + 55, 1e-9); /* total + idle */
}
END_TEST

START_TEST(chargeback_weights)
{
        gc_cost_summary s;
        gc_cost_row rows[4];
        gc_team_weight w[] = {{"web", 3}, {"ml", 1}, {"absent", 100}};
        gc_chargeback cb = {GC_CHARGEBACK_WEIGHTS, w, 3, GC_BASIS_ALLOCATION};
        double ratio[4], pool;

        fill(&s, rows);
        ck_assert_int_eq(gc_chargeback_ratios(&s, &cb, ratio, &pool), 0);
        /* Among the weighted teams that spent: web 3/4, ml 1/4 (split 2:1 over its rows). */
        ck_assert_double_eq_tol(ratio[1], 0.75, 1e-12);
        ck_assert_double_eq_tol(ratio[0], 0.25 * 2 / 3, 1e-12);
        ck_assert_double_eq_tol(ratio[2], 0.25 / 3, 1e-12);
        ck_assert_double_eq(ratio[3], 0);
        /* No weighted team spent: proportional instead. */
        w[0].team = "x";
        w[1].team = "y";
        ck_assert_int_eq(gc_chargeback_ratios(&s, &cb, ratio, &pool), 0);
        ck_assert_double_eq_tol(ratio[1], 0.25, 1e-12);
        w[0].weight = 0; /* weights are positive */
        ck_assert_int_eq(gc_chargeback_ratios(&s, &cb, ratio, &pool), -EINVAL);
        w[0].weight = NAN;
        ck_assert_int_eq(gc_chargeback_ratios(&s, &cb, ratio, &pool), -EINVAL);
}
END_TEST

START_TEST(chargeback_edges)
{
        gc_cost_summary s;
        gc_cost_row rows[4];
        gc_chargeback none = {GC_CHARGEBACK_NONE, NULL, 0, GC_BASIS_ALLOCATION};
        gc_chargeback prop = {GC_CHARGEBACK_PROPORTIONAL, NULL, 0, GC_BASIS_ALLOCATION};
        double ratio[4], pool = -1;

        fill(&s, rows);
        ck_assert_int_eq(gc_chargeback_ratios(&s, &none, ratio, &pool), 0);
        ck_assert_double_eq(pool, 0);
        for (size_t i = 0; i < 4; i++)
                ck_assert_double_eq(ratio[i], 0);
        /* Only unattributed spend: no team to carry the pool, nothing shared. */
        s.rows = &rows[3];
        s.n_rows = 1;
        ck_assert_int_eq(gc_chargeback_ratios(&s, &prop, ratio, &pool), 0);
        ck_assert_double_eq(pool, 0);
        ck_assert_double_eq(ratio[0], 0);
        /* The shares are the teams': a summary not grouped by team is refused. */
        fill(&s, rows);
        s.by[0] = GC_DIM_MODEL;
        s.n_by = 1;
        ck_assert_int_eq(gc_chargeback_ratios(&s, &prop, ratio, &pool), -EINVAL);
        ck_assert_int_eq(gc_chargeback_ratios(&s, &none, ratio, &pool), 0);
}
END_TEST

/* ---- the export over a ledger --------------------------------------------------------------- */

typedef struct fixture {
        gc_strpool *pool;
        gc_ledger *l;
        const char *model; /* of the nodes and pods put next */
} fixture;

static void fx_init(fixture *f)
{
        gc_ledger_opts o = {0};

        f->pool = gc_strpool_new(1u << 20);
        o.pool = f->pool;
        f->l = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(f->l);
        f->model = "NVIDIA-A100";
}

static void fx_done(fixture *f)
{
        gc_ledger_free(f->l);
        gc_strpool_free(f->pool);
}

static const char *in(fixture *f, const char *s)
{
        return s ? gc_strpool_intern0(f->pool, s) : NULL;
}

static void put_pod(fixture *f, const char *uid, const char *ns, const char *team,
                    const char *project, const char *node, double geq, double price, int64_t start,
                    int64_t end)
{
        gc_usage u;
        char wl[128];

        memset(&u, 0, sizeof(u));
        snprintf(wl, sizeof(wl), "Job/%s/%s", ns, project);
        u.pod_uid = in(f, uid);
        u.dims[GC_DIM_WORKLOAD] = in(f, wl);
        u.dims[GC_DIM_NAMESPACE] = in(f, ns);
        u.dims[GC_DIM_TEAM] = in(f, team);
        u.dims[GC_DIM_PROJECT] = in(f, project);
        u.dims[GC_DIM_MODEL] = in(f, f->model);
        u.dims[GC_DIM_CAPACITY_TYPE] = in(f, "on-demand");
        u.dims[GC_DIM_NODE] = in(f, node);
        u.dims[GC_DIM_POD] = in(f, uid);
        u.geq = geq;
        u.price_per_gpu_hour = price;
        u.start = start;
        u.end = end;
        ck_assert_int_eq(gc_ledger_put_usage(f->l, &u), 0);
}

static void put_node(fixture *f, const char *node, double geq, double price, int64_t start)
{
        gc_capacity c;

        memset(&c, 0, sizeof(c));
        c.node = in(f, node);
        c.model = in(f, f->model);
        c.capacity_type = in(f, "on-demand");
        c.geq = geq;
        c.price_per_gpu_hour = price;
        c.start = start;
        c.end = GC_OPEN;
        ck_assert_int_eq(gc_ledger_put_capacity(f->l, &c), 0);
}

typedef struct sink {
        gc_buf all;
        size_t pieces, largest;
        int fail_after; /* 0: never */
} sink;

static int sink_write(void *ud, const char *data, size_t n)
{
        sink *s = ud;

        s->pieces++;
        if (n > s->largest)
                s->largest = n;
        if (s->fail_after && (int)s->pieces >= s->fail_after)
                return -EPIPE;
        return s->all.limit ? gc_buf_append(&s->all, data, n) : 0;
}

static size_t count_lines(const char *s)
{
        size_t n = 0;

        for (; s && *s; s++)
                n += *s == '\n';
        return n;
}

/* Two nodes of 4 GPUs at $2 from t0 - 1 day; ml holds 2 GPUs on a for 36 h, web 1 on b for 6 h,
 * an unattributed pod 1 on b for 6 h. */
static void fill_ledger(fixture *f, int64_t t0)
{
        put_node(f, "node-a", 4, 2, t0 - DAY);
        put_node(f, "node-b", 4, 2, t0 - DAY);
        put_pod(f, "p1", "ml", "ml", "train", "node-a", 2, 2, t0, t0 + 36 * HOUR);
        put_pod(f, "p2", "web", "web", "search", "node-b", 1, 2, t0 + 2 * HOUR, t0 + 8 * HOUR);
        put_pod(f, "p3", "tmp", GC_UNATTRIBUTED, GC_UNATTRIBUTED, "node-b", 1, 2, t0,
                t0 + 6 * HOUR);
}

START_TEST(export_csv_totals)
{
        fixture f;
        int64_t t0 = t_at("2026-11-16T00:00:00Z");
        gc_export_opts o = {0};
        gc_export_totals t;
        sink s = {0};

        fx_init(&f);
        fill_ledger(&f, t0);
        gc_buf_init(&s.all, 1u << 20);
        o.ledger = f.l;
        o.start = t0;
        o.end = t0 + 2 * DAY;
        o.granularity = GC_EXPORT_DAILY;
        o.format = GC_EXPORT_CSV;
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, &t), 0);
        /* Held: 72 + 6 + 6 GPU-h at $2; capacity 2 nodes x 4 x 48 h = 384 GPU-h. */
        ck_assert_double_eq_tol(t.usage_cost, 168, 1e-9);
        ck_assert_double_eq_tol(t.unattributed_cost, 12, 1e-9);
        ck_assert_double_eq_tol(t.idle_cost, 768 - 168, 1e-9);
        ck_assert_double_eq_tol(t.billed_cost, 768, 1e-9);
        ck_assert_double_eq(t.shared_cost, 0);
        /* Day 1: ml, web, unattributed, idle a, idle b; day 2: ml, idle a, idle b. */
        ck_assert_uint_eq(t.rows, 8);
        ck_assert_uint_eq(count_lines(s.all.data), 9);
        ck_assert_ptr_nonnull(strstr(s.all.data, "period_start,period_end,cluster,node"));
        ck_assert_ptr_nonnull(strstr(s.all.data, "2026-11-16T00:00:00Z,2026-11-17T00:00:00Z,"
                                                 "default,node-a,NVIDIA-A100,on-demand,ml,ml,"
                                                 "train,Job/ml/train,usage,48,96,USD,2\r\n"));

        /* Proportional: the unattributed pod and idle go to ml and web; the bills = capacity. */
        gc_buf_reset(&s.all);
        o.chargeback.mode = GC_CHARGEBACK_PROPORTIONAL;
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, &t), 0);
        ck_assert_double_eq(t.idle_cost, 0);
        ck_assert_double_eq_tol(t.usage_cost + t.shared_cost, 768, 1e-9);
        ck_assert_double_eq_tol(t.usage_cost, 156, 1e-9);
        ck_assert_ptr_null(strstr(s.all.data, GC_UNATTRIBUTED));
        ck_assert_ptr_null(strstr(s.all.data, ",idle,"));
        gc_buf_free(&s.all);
        fx_done(&f);
}
END_TEST

START_TEST(export_periods_cut_to_the_window)
{
        fixture f;
        int64_t t0 = t_at("2026-11-16T00:00:00Z");
        gc_export_opts o = {0};
        gc_export_totals t;
        sink s = {0};

        fx_init(&f);
        fill_ledger(&f, t0);
        gc_buf_init(&s.all, 1u << 20);
        o.ledger = f.l;
        o.start = t0 + 10 * HOUR; /* a window crossing midnight, inside no whole day */
        o.end = t0 + DAY + 5 * HOUR;
        o.granularity = GC_EXPORT_DAILY;
        o.format = GC_EXPORT_CSV;
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, &t), 0);
        ck_assert_ptr_nonnull(strstr(s.all.data, "2026-11-16T10:00:00Z,2026-11-17T00:00:00Z,"));
        ck_assert_ptr_nonnull(strstr(s.all.data, "2026-11-17T00:00:00Z,2026-11-17T05:00:00Z,"));
        ck_assert_double_eq_tol(t.billed_cost, 2 * 4 * 19 * 2, 1e-9); /* capacity of 19 h */
        gc_buf_free(&s.all);
        fx_done(&f);
}
END_TEST

/* Hourly over 60 days is 1,440 periods: more than one stepped query holds; and the pieces
 * handed to write stay bounded however long the window. */
START_TEST(export_long_window_streams)
{
        fixture f;
        int64_t t0 = t_at("2026-10-01T00:00:00Z");
        gc_export_opts o = {0};
        gc_export_totals t;
        sink s = {0};

        fx_init(&f);
        put_node(&f, "node-a", 8, 3, t0 - DAY);
        put_pod(&f, "p1", "ml", "ml", "train", "node-a", 8, 3, t0, GC_OPEN);
        o.ledger = f.l;
        o.start = t0;
        o.end = t0 + 60 * DAY;
        o.granularity = GC_EXPORT_HOURLY;
        o.format = GC_EXPORT_FOCUS;
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, &t), 0);
        ck_assert_uint_eq(t.rows, 60 * 24);
        ck_assert_double_eq_tol(t.usage_cost, 60 * 24 * 8 * 3, 1e-6);
        ck_assert_double_eq_tol(t.gpu_hours, 60 * 24 * 8, 1e-6);
        ck_assert_uint_gt(s.pieces, 1);
        ck_assert_uint_le(s.largest, GC_EXPORT_PIECE_BYTES + (64u << 10));
        /* A writer's error stops the export and is returned. */
        s.pieces = 0;
        s.fail_after = 2;
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, &t), -EPIPE);
        fx_done(&f);
}
END_TEST

START_TEST(export_focus13_columns)
{
        fixture f;
        int64_t t0 = t_at("2026-11-16T00:00:00Z");
        gc_export_opts o = {0};
        sink s = {0};
        const char *hdr;

        fx_init(&f);
        fill_ledger(&f, t0);
        gc_buf_init(&s.all, 1u << 20);
        o.ledger = f.l;
        o.start = t0;
        o.end = t0 + DAY;
        o.granularity = GC_EXPORT_DAILY;
        o.cluster = "prod, eu"; /* a comma: quoted wherever it appears */
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, NULL), 0);
        hdr = s.all.data;
        ck_assert_ptr_nonnull(strstr(hdr, ",AllocatedMethodDetails,AllocatedMethodId,"
                                          "AllocatedResourceId,AllocatedResourceName,"
                                          "AllocatedTags,"));
        ck_assert_ptr_nonnull(strstr(hdr, "\"prod, eu\""));
        ck_assert_ptr_nonnull(strstr(hdr, "gpu-cost:held-gpu-equivalents"));
        ck_assert_ptr_nonnull(strstr(hdr, "gpu-cost:idle-capacity"));
        ck_assert_ptr_nonnull(
            strstr(hdr, "\"{\"\"Elements\"\":[{\"\"AllocatedRatio\"\":0.5,\"\"UsageUnit\"\":"
                        "\"\"GPU-Hours\"\",\"\"UsageQuantity\"\":48}]}\""));
        /* 1.2 has none of them. */
        gc_buf_reset(&s.all);
        o.focus_minor = 2;
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, NULL), 0);
        ck_assert_ptr_null(strstr(s.all.data, "Allocated"));
        gc_buf_free(&s.all);
        fx_done(&f);
}
END_TEST

/* The fields of the CSV line at p (to its CRLF), RFC 4180 quoting; *ret_end past the line. */
static size_t csv_fields(const char *p, const char **ret_end)
{
        size_t n = 1;
        int quoted = 0;

        for (; *p && (quoted || *p != '\r'); p++) {
                if (*p == '"')
                        quoted = !quoted;
                else if (*p == ',' && !quoted)
                        n++;
        }
        *ret_end = *p ? p + 2 : p;
        return n;
}

/* The i-th field of the line at p, into out, as written (a quoted one keeps its quotes). */
static const char *csv_at(const char *p, size_t i, char *out, size_t n)
{
        const char *q;
        int quoted = 0;

        for (; i > 0 && *p && *p != '\r'; p++) {
                if (*p == '"')
                        quoted = !quoted;
                else if (*p == ',' && !quoted)
                        i--;
        }
        for (q = p, quoted = 0; *q && *q != '\r' && (quoted || *q != ','); q++)
                if (*q == '"')
                        quoted = !quoted;
        snprintf(out, n, "%.*s", (int)((size_t)(q - p) < n ? (size_t)(q - p) : n - 1), p);
        return out;
}

static size_t col_index(int minor, const char *name)
{
        const char *c;

        for (size_t i = 0; (c = gc_export_focus_column(minor, i)); i++)
                if (strcmp(c, name) == 0)
                        return i;
        ck_abort_msg("%s is no column of FOCUS 1.%d", name, minor);
        return 0;
}

/*
 * FOCUS 1.2, 1.3 and 1.4 side by side: the header is the version's column list and every row has
 * as many fields; 1.3 carries the conditional columns the official 1.3 rules check (null, or the
 * value FOCUS asks for); 1.4 drops ProviderName and PublisherName and adds its two columns.
 */
START_TEST(export_focus_versions)
{
        static const struct {
                int minor;
                size_t cols;
                int provider; /* ProviderName and PublisherName */
        } v[] = {{2, 37, 1}, {3, 66, 1}, {4, 66, 0}};
        fixture f;
        int64_t t0 = t_at("2026-11-16T00:00:00Z");
        gc_export_opts o = {0};
        sink s = {0};

        fx_init(&f);
        fill_ledger(&f, t0);
        gc_buf_init(&s.all, 1u << 20);
        o.ledger = f.l;
        o.start = t0;
        o.end = t0 + DAY;
        o.granularity = GC_EXPORT_DAILY;
        o.currency = "EUR";
        ck_assert_ptr_null(gc_export_focus_column(1, 0));
        ck_assert_ptr_null(gc_export_focus_column(5, 0));
        for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
                const char *p, *end, *c;
                size_t rows = 0;
                gc_buf hdr;
                char cell[64];

                o.focus_minor = v[k].minor;
                gc_buf_reset(&s.all);
                ck_assert_int_eq(gc_export_run(&o, sink_write, &s, NULL), 0);
                gc_buf_init(&hdr, 4096);
                for (size_t i = 0; (c = gc_export_focus_column(v[k].minor, i)); i++) {
                        if (i > 0)
                                gc_buf_append(&hdr, ",", 1);
                        gc_buf_puts(&hdr, c);
                }
                gc_buf_puts(&hdr, "\r\n");
                ck_assert_int_eq(strncmp(s.all.data, hdr.data, hdr.len), 0);
                gc_buf_free(&hdr);
                for (p = s.all.data; *p; p = end, rows++)
                        ck_assert_uint_eq(csv_fields(p, &end), v[k].cols);
                ck_assert_uint_ge(rows, 4);
                ck_assert_int_eq(strstr(s.all.data, "ProviderName,PublisherName") != NULL,
                                 v[k].provider);
                ck_assert_int_eq(strstr(s.all.data, "InvoiceDetailId") != NULL, v[k].minor == 4);
                if (v[k].minor < 3)
                        continue;
                /* The first row (an idle row of node-a: no quotes before its price columns). */
                csv_fields(s.all.data, &p);
                ck_assert_str_eq(
                    csv_at(p, col_index(v[k].minor, "PricingCurrency"), cell, sizeof(cell)), "EUR");
                ck_assert_str_eq(
                    csv_at(p, col_index(v[k].minor, "BillingAccountType"), cell, sizeof(cell)),
                    "Kubernetes Cluster");
                ck_assert_str_eq(csv_at(p, col_index(v[k].minor, "SkuMeter"), cell, sizeof(cell)),
                                 "GPU Usage");
                ck_assert_str_eq(csv_at(p, col_index(v[k].minor, "PricingCurrencyListUnitPrice"),
                                        cell, sizeof(cell)),
                                 "2");
                ck_assert_str_eq(csv_at(p, col_index(v[k].minor, "CommitmentDiscountStatus"), cell,
                                        sizeof(cell)),
                                 "");
                ck_assert_str_eq(csv_at(p, col_index(v[k].minor, "CapacityReservationStatus"), cell,
                                        sizeof(cell)),
                                 "");
        }
        gc_buf_free(&s.all);
        fx_done(&f);
}
END_TEST

/*
 * Folded hours keep no node in the pods' rows: their usage rows name the model and capacity
 * type's nodes as one resource (its SKU and price exact), never one "__folded__" node carrying
 * the first model's SKU for every model's spend. Idle stays per node. Totals as before folding.
 * Hourly charge periods: an hour is no period of period history, so the hourly rows answer.
 */
START_TEST(export_folded_hours_by_model)
{
        fixture f;
        int64_t t0 = t_at("2026-11-16T00:00:00Z");
        gc_export_opts o = {0};
        gc_export_totals before, after;
        sink s = {0};
        const char *p;
        size_t h100_rows = 0;

        fx_init(&f);
        fill_ledger(&f, t0);
        f.model = "NVIDIA-H100";
        put_node(&f, "node-h", 8, 5, t0 - DAY);
        put_pod(&f, "p4", "llm", "llm", "pretrain", "node-h", 4, 5, t0 + HOUR, t0 + 11 * HOUR);
        gc_buf_init(&s.all, 1u << 20);
        o.ledger = f.l;
        o.start = t0;
        o.end = t0 + 2 * DAY;
        o.now = t0 + 3 * DAY;
        o.granularity = GC_EXPORT_HOURLY;
        o.format = GC_EXPORT_FOCUS;
        o.focus_minor = 2;
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, &before), 0);
        ck_assert_int_eq(gc_ledger_fold(f.l, t0 + 3 * DAY, 0), 4); /* the four pods */
        gc_buf_reset(&s.all);
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, &after), 0);
        ck_assert_double_eq_tol(after.usage_cost, before.usage_cost, 1e-9);
        ck_assert_double_eq_tol(after.idle_cost, before.idle_cost, 1e-9);
        ck_assert_double_eq_tol(after.billed_cost, before.billed_cost, 1e-9);
        /* 4 GPU-h at $5 an hour by llm on the H100s, named as those nodes, at their SKU and
         * price, with no workload (folded hours keep none). */
        ck_assert_ptr_nonnull(strstr(s.all.data,
                                     "20,default,default,USD,2026-12-01T00:00:00Z,"
                                     "2026-11-01T00:00:00Z,Usage,,GPU-equivalent hours held on "
                                     "NVIDIA-H100/on-demand nodes by llm/pretrain in llm,"));
        ck_assert_ptr_null(strstr(s.all.data, "workload"));
        for (p = s.all.data; (p = strstr(p, "default/__folded__/NVIDIA-H100/on-demand,")); p++)
                h100_rows++;
        ck_assert_uint_eq(h100_rows, 10);
        /* Every folded row's SKU is its own model's: none of the A100s' spend is on the H100. */
        ck_assert_ptr_null(strstr(s.all.data, "default/__folded__,"));
        ck_assert_ptr_nonnull(strstr(s.all.data, "default/__folded__/NVIDIA-A100/on-demand,"
                                                 "NVIDIA-A100/on-demand nodes,GPU nodes,"));
        /* Idle per node still. */
        ck_assert_ptr_nonnull(strstr(s.all.data, "Idle GPU capacity of node-h,"));
        gc_buf_free(&s.all);
        fx_done(&f);
}
END_TEST

/*
 * Daily charge periods of completed days are days of period history: after folding, the usage
 * rows still name each pod's node and workload (the top pods keep both), in FOCUS 1.2 Tags and
 * 1.3 AllocatedTags, and every total equals the unfolded export's.
 */
START_TEST(export_daily_history_names_workloads)
{
        fixture f;
        int64_t t0 = t_at("2026-11-16T00:00:00Z");
        gc_export_opts o = {0};
        gc_export_totals before, after;
        sink s = {0}, u = {0};

        fx_init(&f);
        fill_ledger(&f, t0);
        gc_buf_init(&s.all, 1u << 20);
        gc_buf_init(&u.all, 1u << 20);
        o.ledger = f.l;
        o.start = t0;
        o.end = t0 + 2 * DAY;
        o.now = t0 + 3 * DAY;
        o.granularity = GC_EXPORT_DAILY;
        o.format = GC_EXPORT_CSV;
        ck_assert_int_eq(gc_export_run(&o, sink_write, &u, &before), 0);
        ck_assert_int_eq(gc_ledger_fold(f.l, t0 + 3 * DAY, 0), 3);
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, &after), 0);
        /* The same file: nodes and workloads as before the fold, to the byte. */
        ck_assert_str_eq(s.all.data, u.all.data);
        ck_assert_uint_eq(after.rows, before.rows);
        ck_assert_double_eq_tol(after.billed_cost, before.billed_cost, 1e-9);
        ck_assert_ptr_nonnull(strstr(s.all.data, ",node-b,NVIDIA-A100,on-demand,web,web,search,"
                                                 "Job/web/search,usage,6,12,USD,2\r\n"));

        gc_buf_reset(&s.all);
        o.format = GC_EXPORT_FOCUS;
        o.focus_minor = 2;
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, &after), 0);
        ck_assert_ptr_nonnull(strstr(s.all.data, "\"\"gpu-cost/workload\"\":\"\"Job/ml/train\"\""));
        ck_assert_ptr_nonnull(strstr(s.all.data, "by ml/train in ml (Job/ml/train)"));
        gc_buf_reset(&s.all);
        o.focus_minor = 3;
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, &after), 0);
        /* 1.3: in AllocatedTags, not in the node's Tags. */
        ck_assert_ptr_nonnull(strstr(s.all.data,
                                     "\"\"gpu-cost/project\"\":\"\"search\"\","
                                     "\"\"gpu-cost/workload\"\":\"\"Job/web/search\"\"}"));
        gc_buf_free(&s.all);
        gc_buf_free(&u.all);
        fx_done(&f);
}
END_TEST

START_TEST(export_bad_options)
{
        fixture f;
        gc_export_opts o = {0};
        gc_team_weight w = {"ml", -1};
        sink s = {0};

        fx_init(&f);
        o.ledger = f.l;
        o.start = 0;
        o.end = DAY;
        o.granularity = GC_EXPORT_DAILY;
        ck_assert_int_eq(gc_export_run(&o, NULL, &s, NULL), -EINVAL);
        o.granularity = 7 * DAY;
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, NULL), -EINVAL);
        o.granularity = GC_EXPORT_DAILY;
        o.focus_minor = 5;
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, NULL), -EINVAL);
        o.focus_minor = 1;
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, NULL), -EINVAL);
        o.focus_minor = 0;
        o.end = 0;
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, NULL), -EINVAL);
        o.end = DAY;
        o.chargeback = (gc_chargeback){GC_CHARGEBACK_WEIGHTS, &w, 1, GC_BASIS_ALLOCATION};
        ck_assert_int_eq(gc_export_run(&o, sink_write, &s, NULL), -EINVAL);
        ck_assert_uint_eq(s.pieces, 0); /* nothing written before the options are checked */
        fx_done(&f);
}
END_TEST

/*
 * Kept label keys: the rows split by their values (totals as without them); the plain CSV has a
 * label:<key> column per key (empty on idle and shared rows); FOCUS carries the values as tags
 * named by the key (1.2 Tags, 1.3 AllocatedTags), none for a pod without the label, and a key
 * with the program's own prefix moved under gpu-cost/label/. Without keys: the columns as before.
 */
static void put_labelled(fixture *f, const char *uid, const char *node, const char *cc,
                         const char *own, int64_t start, int64_t end)
{
        gc_usage u;

        memset(&u, 0, sizeof(u));
        u.pod_uid = in(f, uid);
        u.dims[GC_DIM_WORKLOAD] = in(f, "Job/ml/train");
        u.dims[GC_DIM_NAMESPACE] = in(f, "ml");
        u.dims[GC_DIM_TEAM] = in(f, "ml");
        u.dims[GC_DIM_PROJECT] = in(f, "train");
        u.dims[GC_DIM_MODEL] = in(f, f->model);
        u.dims[GC_DIM_CAPACITY_TYPE] = in(f, "on-demand");
        u.dims[GC_DIM_NODE] = in(f, node);
        u.dims[GC_DIM_POD] = in(f, uid);
        u.labels[0] = in(f, cc);
        u.labels[1] = in(f, own);
        u.geq = 1;
        u.price_per_gpu_hour = 2;
        u.start = start;
        u.end = end;
        ck_assert_int_eq(gc_ledger_put_usage(f->l, &u), 0);
}

static void run_into(gc_export_opts *o, sink *s, gc_export_totals *t)
{
        gc_buf_reset(&s->all);
        ck_assert_int_eq(gc_export_run(o, sink_write, s, t), 0);
}

START_TEST(export_label_columns_and_tags)
{
        static const char *const keys[] = {"cost-center", "gpu-cost/team"};
        int64_t t0 = t_at("2026-11-16T00:00:00Z");
        gc_export_totals tl, tn;
        gc_ledger_opts lo = {0};
        gc_export_opts o = {0};
        fixture f, plain;
        sink s = {0};
        const char *p;

        fx_init(&plain);
        fx_init(&f);
        gc_ledger_free(f.l);
        lo.pool = f.pool;
        lo.label_keys = keys;
        lo.n_label_keys = 2;
        f.l = gc_ledger_new(&lo);
        ck_assert_ptr_nonnull(f.l);
        /* The same pods in both: ml's two pods on node-a differ only by their labels. */
        for (fixture *x = &plain; x; x = x == &plain ? &f : NULL) {
                fill_ledger(x, t0);
                put_labelled(x, "p4", "node-a", "cc-1", "blue", t0, t0 + 4 * HOUR);
                put_labelled(x, "p5", "node-a", "cc-2", NULL, t0, t0 + 2 * HOUR);
        }
        gc_buf_init(&s.all, 1u << 20);
        o.start = t0;
        o.end = t0 + DAY;
        o.granularity = GC_EXPORT_DAILY;
        o.format = GC_EXPORT_CSV;

        o.ledger = plain.l;
        run_into(&o, &s, &tn);
        ck_assert_ptr_nonnull(strstr(s.all.data, "currency,price_per_gpu_hour\r\n"));
        ck_assert_ptr_null(strstr(s.all.data, "label:"));
        o.ledger = f.l;
        run_into(&o, &s, &tl);
        /* ml's rows: p1 (no labels), p4 and p5, one each instead of one together. */
        ck_assert_uint_eq(tl.rows, tn.rows + 2);
        ck_assert_double_eq_tol(tl.usage_cost, tn.usage_cost, 1e-9);
        ck_assert_double_eq_tol(tl.idle_cost, tn.idle_cost, 1e-9);
        ck_assert_double_eq_tol(tl.billed_cost, tn.billed_cost, 1e-9);
        ck_assert_ptr_nonnull(
            strstr(s.all.data, "price_per_gpu_hour,label:cost-center,label:gpu-cost/team\r\n"));
        ck_assert_ptr_nonnull(strstr(s.all.data, ",ml,ml,train,Job/ml/train,usage,4,8,USD,2,"
                                                 "cc-1,blue\r\n"));
        ck_assert_ptr_nonnull(strstr(s.all.data, ",ml,ml,train,Job/ml/train,usage,2,4,USD,2,"
                                                 "cc-2," GC_UNLABELLED "\r\n"));
        ck_assert_ptr_nonnull(strstr(s.all.data, "Job/ml/train,usage,48,96,USD,2," GC_UNLABELLED
                                                 "," GC_UNLABELLED "\r\n"));
        ck_assert_ptr_nonnull(strstr(s.all.data, ",idle,"));
        for (p = strstr(s.all.data, ",idle,"); p; p = strstr(p + 1, ",idle,"))
                ck_assert_int_eq(strncmp(strstr(p, "\r\n") - 2, ",,", 2), 0);

        /* FOCUS 1.2: the values in Tags, by the key (prefixed only when it has gpu-cost/). */
        o.format = GC_EXPORT_FOCUS;
        o.focus_minor = 2;
        run_into(&o, &s, &tl);
        ck_assert_uint_eq(tl.rows, tn.rows + 2);
        ck_assert_ptr_nonnull(strstr(s.all.data, "\"\"gpu-cost/workload\"\":\"\"Job/ml/train\"\","
                                                 "\"\"cost-center\"\":\"\"cc-1\"\","
                                                 "\"\"gpu-cost/label/gpu-cost/team\"\":"
                                                 "\"\"blue\"\"}\""));
        ck_assert_ptr_nonnull(strstr(s.all.data, "\"\"gpu-cost/workload\"\":\"\"Job/ml/train\"\","
                                                 "\"\"cost-center\"\":\"\"cc-2\"\"}\""));
        ck_assert_ptr_null(strstr(s.all.data, GC_UNLABELLED));
        ck_assert_ptr_null(strstr(s.all.data, "\"\"gpu-cost/team\"\":\"\"blue"));

        /* FOCUS 1.3: who the cost is for is in AllocatedTags; Tags stay the node's. */
        o.focus_minor = 3;
        run_into(&o, &s, &tl);
        ck_assert_ptr_nonnull(strstr(s.all.data, "\"\"gpu-cost/workload\"\":\"\"Job/ml/train\"\","
                                                 "\"\"cost-center\"\":\"\"cc-1\"\","
                                                 "\"\"gpu-cost/label/gpu-cost/team\"\":"
                                                 "\"\"blue\"\"}\",default,default,,"
                                                 "Kubernetes Cluster,"));
        ck_assert_ptr_null(strstr(s.all.data, "\"\"node-a\"\",\"\"cost-center"));
        ck_assert_ptr_null(strstr(s.all.data, GC_UNLABELLED));

        /* Chargeback: the shares are per team, never per label value; the bills as without. */
        o.chargeback.mode = GC_CHARGEBACK_PROPORTIONAL;
        o.format = GC_EXPORT_CSV;
        run_into(&o, &s, &tl);
        o.ledger = plain.l;
        run_into(&o, &s, &tn);
        ck_assert_double_eq_tol(tl.usage_cost, tn.usage_cost, 1e-9);
        ck_assert_double_eq_tol(tl.shared_cost, tn.shared_cost, 1e-9);
        ck_assert_double_eq_tol(tl.billed_cost, tn.billed_cost, 1e-9);
        gc_buf_free(&s.all);
        fx_done(&f);
        fx_done(&plain);
}
END_TEST

static Suite *export_suite(void)
{
        Suite *s = suite_create("export");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, csv_field_quoting);
        tcase_add_test(tc, parse_words);
        tcase_add_test(tc, chargeback_proportional);
        tcase_add_test(tc, chargeback_weights);
        tcase_add_test(tc, chargeback_edges);
        tcase_add_test(tc, export_csv_totals);
        tcase_add_test(tc, export_periods_cut_to_the_window);
        tcase_add_test(tc, export_long_window_streams);
        tcase_add_test(tc, export_focus13_columns);
        tcase_add_test(tc, export_focus_versions);
        tcase_add_test(tc, export_folded_hours_by_model);
        tcase_add_test(tc, export_daily_history_names_workloads);
        tcase_add_test(tc, export_bad_options);
        tcase_add_test(tc, export_label_columns_and_tags);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(export_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
