/* test_publish: report periods and names at period edges, completeness, hashes, retention, size
 * cuts, team copies. */
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/ledger.h"
#include "publish/publish.h"
#include "util/util.h"

#define H    ((int64_t)3600)
#define DAY  ((int64_t)86400)
#define IST  ((int64_t)(5 * 3600 + 30 * 60)) /* +05:30 */
#define A100 "NVIDIA-A100-SXM4-80GB"

static int64_t at(const char *s)
{
        int64_t t = 0;

        ck_assert_int_eq(gc_time_parse(s, strlen(s), &t), 0);
        return t;
}

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

static void put_pod(gc_ledger *l, const char *uid, const char *ns, const char *team,
                    const char *project, const char *node, double geq, double price, int64_t start,
                    int64_t end)
{
        gc_usage u;

        memset(&u, 0, sizeof(u));
        u.pod_uid = uid;
        u.dims[GC_DIM_NAMESPACE] = ns;
        u.dims[GC_DIM_TEAM] = team;
        u.dims[GC_DIM_PROJECT] = project;
        u.dims[GC_DIM_MODEL] = A100;
        u.dims[GC_DIM_CAPACITY_TYPE] = "on-demand";
        u.dims[GC_DIM_NODE] = node;
        u.dims[GC_DIM_POD] = uid;
        u.geq = geq;
        u.price_per_gpu_hour = price;
        u.start = start;
        u.end = end;
        ck_assert_int_eq(gc_ledger_put_usage(l, &u), 0);
}

static void put_node(gc_ledger *l, const char *node, double geq, double price, int64_t start,
                     int64_t end)
{
        gc_capacity c = {node, A100, "on-demand", geq, price, start, end};

        ck_assert_int_eq(gc_ledger_put_capacity(l, &c), 0);
}

static const gc_publish_period *find(const gc_publish_plan *p, const char *name)
{
        for (size_t i = 0; i < p->n_periods; i++)
                if (strcmp(p->periods[i].name, name) == 0)
                        return &p->periods[i];
        return NULL;
}

/* ---- names and edges of periods -----------------------------------------------------------------
 */

typedef struct edge_case {
        const char *now;
        int64_t offset;
        const char *day, *day_start; /* the day holding now: its name and start (UTC) */
        const char *week, *week_start;
} edge_case;

static const edge_case edges[] = {
    {"2026-11-20T09:15:03Z", 0, "gpu-cost-report-daily-2026-11-20", "2026-11-20T00:00:00Z",
     "gpu-cost-report-weekly-2026-w47", "2026-11-16T00:00:00Z"},
    /* the last second of a UTC day, and the first of the next (a Monday: a new week) */
    {"2026-11-22T23:59:59Z", 0, "gpu-cost-report-daily-2026-11-22", "2026-11-22T00:00:00Z",
     "gpu-cost-report-weekly-2026-w47", "2026-11-16T00:00:00Z"},
    {"2026-11-23T00:00:00Z", 0, "gpu-cost-report-daily-2026-11-23", "2026-11-23T00:00:00Z",
     "gpu-cost-report-weekly-2026-w48", "2026-11-23T00:00:00Z"},
    /* +05:30: local midnight is 18:30 UTC the day before */
    {"2026-11-20T18:29:59Z", IST, "gpu-cost-report-daily-2026-11-20", "2026-11-19T18:30:00Z",
     "gpu-cost-report-weekly-2026-w47", "2026-11-15T18:30:00Z"},
    {"2026-11-20T18:30:00Z", IST, "gpu-cost-report-daily-2026-11-21", "2026-11-20T18:30:00Z",
     "gpu-cost-report-weekly-2026-w47", "2026-11-15T18:30:00Z"},
    {"2026-11-22T18:29:59Z", IST, "gpu-cost-report-daily-2026-11-22", "2026-11-21T18:30:00Z",
     "gpu-cost-report-weekly-2026-w47", "2026-11-15T18:30:00Z"},
    {"2026-11-22T18:30:00Z", IST, "gpu-cost-report-daily-2026-11-23", "2026-11-22T18:30:00Z",
     "gpu-cost-report-weekly-2026-w48", "2026-11-22T18:30:00Z"},
    /* -08:00: still the day before in UTC terms */
    {"2026-11-20T07:59:59Z", -8 * H, "gpu-cost-report-daily-2026-11-19", "2026-11-19T08:00:00Z",
     "gpu-cost-report-weekly-2026-w47", "2026-11-16T08:00:00Z"},
    /* ISO weeks across a year end: 2027-01-01 (a Friday) is in 2026-W53 */
    {"2027-01-01T12:00:00Z", 0, "gpu-cost-report-daily-2027-01-01", "2027-01-01T00:00:00Z",
     "gpu-cost-report-weekly-2026-w53", "2026-12-28T00:00:00Z"},
    {"2027-01-04T00:00:00Z", 0, "gpu-cost-report-daily-2027-01-04", "2027-01-04T00:00:00Z",
     "gpu-cost-report-weekly-2027-w01", "2027-01-04T00:00:00Z"},
    /* 2024-12-30 (a Monday) starts 2025-W01 */
    {"2024-12-31T10:00:00Z", 0, "gpu-cost-report-daily-2024-12-31", "2024-12-31T00:00:00Z",
     "gpu-cost-report-weekly-2025-w01", "2024-12-30T00:00:00Z"},
    /* +05:30 across the year end: 2026-12-31T18:30Z is already 2027-01-01 there */
    {"2026-12-31T18:30:00Z", IST, "gpu-cost-report-daily-2027-01-01", "2026-12-31T18:30:00Z",
     "gpu-cost-report-weekly-2026-w53", "2026-12-27T18:30:00Z"},
};

START_TEST(period_edges)
{
        const edge_case *c = &edges[_i];
        gc_publish_opts o;
        gc_publish_plan plan;
        const gc_publish_period *d, *w;
        gc_publish_kind kind;
        int64_t now = at(c->now), start;
        fixture f;

        fx_new(&f);
        /* A node recorded from long before to long after: every day and week has data, even
         * the one that begins at now (an open interval would not have accrued yet). */
        put_node(f.l, "n1", 8, 2.0, now - 120 * DAY, now + 30 * DAY);
        memset(&o, 0, sizeof(o));
        o.utc_offset_s = c->offset;
        o.daily_retention_days = 3;
        o.weekly_retention_weeks = 2;
        o.monthly_retention_months = 1;
        ck_assert_int_eq(gc_publish_plan_make(f.l, &o, now, &plan), 0);
        ck_assert_uint_eq(plan.n_periods, 6);

        d = &plan.periods[2];
        ck_assert_str_eq(d->name, c->day);
        ck_assert_int_eq(d->kind, GC_PUBLISH_DAILY);
        ck_assert_int_eq(d->start, at(c->day_start));
        ck_assert_int_eq(d->end, d->start + DAY);
        ck_assert_int_eq(d->complete, 0);
        /* the two days before are complete; the newest of them is the latest */
        ck_assert_int_eq(plan.periods[0].start, d->start - 2 * DAY);
        ck_assert_int_eq(plan.periods[1].complete, 1);
        ck_assert_ptr_eq(plan.latest_daily, &plan.periods[1]);

        w = &plan.periods[4];
        ck_assert_str_eq(w->name, c->week);
        ck_assert_int_eq(w->kind, GC_PUBLISH_WEEKLY);
        ck_assert_int_eq(w->start, at(c->week_start));
        ck_assert_int_eq(w->end, w->start + 7 * DAY);
        ck_assert_int_eq(w->complete, 0);
        ck_assert_int_eq(plan.periods[3].end, w->start);
        ck_assert_ptr_eq(plan.latest_weekly, &plan.periods[3]);

        /* Names read back to their kind and start. */
        ck_assert_int_eq(gc_publish_name_parse(d->name, c->offset, &kind, &start), 0);
        ck_assert_int_eq(kind, GC_PUBLISH_DAILY);
        ck_assert_int_eq(start, d->start);
        ck_assert_int_eq(gc_publish_name_parse(w->name, c->offset, &kind, &start), 0);
        ck_assert_int_eq(kind, GC_PUBLISH_WEEKLY);
        ck_assert_int_eq(start, w->start);

        /* The month holding today: named by its month, starting on the 1st at local midnight. */
        {
                const gc_publish_period *m = &plan.periods[5];
                char want[GC_PUBLISH_NAME_MAX];

                snprintf(want, sizeof(want), "gpu-cost-report-monthly-%.7s",
                         c->day + strlen("gpu-cost-report-daily-"));
                ck_assert_str_eq(m->name, want);
                ck_assert_int_eq(m->kind, GC_PUBLISH_MONTHLY);
                ck_assert_int_le(m->start, d->start);
                ck_assert_int_gt(m->end, d->start);
                ck_assert_int_eq(m->complete, 0);
                ck_assert_ptr_null(plan.latest_monthly);
                ck_assert_int_eq((m->start + c->offset) % DAY, 0);
                ck_assert_int_eq(gc_publish_name_parse(m->name, c->offset, &kind, &start), 0);
                ck_assert_int_eq(kind, GC_PUBLISH_MONTHLY);
                ck_assert_int_eq(start, m->start);
        }

        gc_publish_plan_release(&plan);
        fx_free(&f);
}
END_TEST

/* ---- which periods, complete or partial, and their hashes ---------------------------------------
 */

/*
 * The week of Monday 2026-11-16 (t0), UTC:
 *   node n1 (4 GPUs, $2/GPU-h) from Tue 00:00 to Thu 12:00;
 *   p1 ml/train  1 GPU  Sat 10:00-11:00 (no node capacity recorded: a pod alone is data too);
 *   p2 web/site  1 GPU  Sun 02:00-still running.
 * now = Sun 05:00.
 */
static void fill_week(gc_ledger *l, int64_t t0)
{
        put_node(l, "n1", 4, 2.0, t0 + DAY, t0 + 3 * DAY + 12 * H);
        put_pod(l, "p1", "ml", "ml", "train", "n1", 1, 2.0, t0 + 5 * DAY + 10 * H,
                t0 + 5 * DAY + 11 * H);
        put_pod(l, "p2", "web", "web", "site", "n1", 1, 2.0, t0 + 6 * DAY + 2 * H, GC_OPEN);
}

START_TEST(plan_days_with_data)
{
        int64_t t0 = at("2026-11-16T00:00:00Z"), now = t0 + 6 * DAY + 5 * H;
        static const char *const want[] = {
            "gpu-cost-report-daily-2026-11-17", "gpu-cost-report-daily-2026-11-18",
            "gpu-cost-report-daily-2026-11-19", "gpu-cost-report-daily-2026-11-21",
            "gpu-cost-report-daily-2026-11-22", "gpu-cost-report-weekly-2026-w47",
            "gpu-cost-report-monthly-2026-11"};
        gc_publish_opts o;
        gc_publish_plan plan;
        fixture f;

        fx_new(&f);
        fill_week(f.l, t0);
        memset(&o, 0, sizeof(o));
        o.daily_retention_days = 10;    /* Fri 11-13 to Sun 11-22 */
        o.weekly_retention_weeks = 2;   /* W46 (no data) and W47 */
        o.monthly_retention_months = 2; /* October (no data) and November */
        ck_assert_int_eq(gc_publish_plan_make(f.l, &o, now, &plan), 0);
        ck_assert_uint_eq(plan.n_periods, 7);
        for (size_t i = 0; i < 7; i++)
                ck_assert_str_eq(plan.periods[i].name, want[i]);
        for (size_t i = 0; i < 4; i++)
                ck_assert_int_eq(plan.periods[i].complete, 1);
        ck_assert_int_eq(plan.periods[4].complete, 0); /* today */
        ck_assert_int_eq(plan.periods[5].complete, 0); /* this week */
        ck_assert_int_eq(plan.periods[6].complete, 0); /* this month */
        ck_assert_ptr_null(plan.latest_monthly);
        ck_assert_str_eq(plan.latest_daily->name, "gpu-cost-report-daily-2026-11-21");
        ck_assert_ptr_null(plan.latest_weekly);
        gc_publish_plan_release(&plan);

        /* Retention counts back from today: 3 days keep Fri (no data), Sat and Sun. */
        o.daily_retention_days = 3;
        ck_assert_int_eq(gc_publish_plan_make(f.l, &o, now, &plan), 0);
        ck_assert_uint_eq(plan.n_periods, 4);
        ck_assert_str_eq(plan.periods[0].name, "gpu-cost-report-daily-2026-11-21");
        ck_assert_str_eq(plan.periods[1].name, "gpu-cost-report-daily-2026-11-22");
        gc_publish_plan_release(&plan);

        /* A week later W47 is complete and the latest week. */
        ck_assert_int_eq(gc_publish_plan_make(f.l, &o, now + 7 * DAY, &plan), 0);
        ck_assert_str_eq(plan.latest_weekly->name, "gpu-cost-report-weekly-2026-w47");
        ck_assert_int_eq(plan.latest_weekly->complete, 1);
        gc_publish_plan_release(&plan);
        fx_free(&f);
}
END_TEST

START_TEST(plan_hashes)
{
        int64_t t0 = at("2026-11-16T00:00:00Z"), now = t0 + 6 * DAY + 5 * H;
        gc_publish_opts o;
        gc_publish_plan a, b, c, d;
        fixture f;

        fx_new(&f);
        fill_week(f.l, t0);
        memset(&o, 0, sizeof(o));
        o.daily_retention_days = 10;
        o.weekly_retention_weeks = 2;
        ck_assert_int_eq(gc_publish_plan_make(f.l, &o, now, &a), 0);
        /* The same ledger at the same time: the same hashes. */
        ck_assert_int_eq(gc_publish_plan_make(f.l, &o, now, &b), 0);
        for (size_t i = 0; i < a.n_periods; i++)
                ck_assert_uint_eq(a.periods[i].hash, b.periods[i].hash);
        /* An hour later only today and this week change: the running pod accrued. */
        ck_assert_int_eq(gc_publish_plan_make(f.l, &o, now + H, &c), 0);
        ck_assert_uint_eq(c.n_periods, a.n_periods);
        for (size_t i = 0; i < 4; i++)
                ck_assert_uint_eq(a.periods[i].hash, c.periods[i].hash);
        ck_assert_uint_ne(a.periods[4].hash, c.periods[4].hash);
        ck_assert_uint_ne(a.periods[5].hash, c.periods[5].hash);
        /* A late event on Wednesday changes Wednesday, Thursday (its previous day changed)
         * and the week; Tuesday and Saturday stay. */
        put_pod(f.l, "late", "ml", "ml", "train", "n1", 1, 2.0, t0 + 2 * DAY + H,
                t0 + 2 * DAY + 2 * H);
        ck_assert_int_eq(gc_publish_plan_make(f.l, &o, now, &d), 0);
        ck_assert_uint_eq(a.periods[0].hash, d.periods[0].hash); /* Tue */
        ck_assert_uint_ne(a.periods[1].hash, d.periods[1].hash); /* Wed */
        ck_assert_uint_ne(a.periods[2].hash, d.periods[2].hash); /* Thu */
        ck_assert_uint_eq(a.periods[3].hash, d.periods[3].hash); /* Sat */
        ck_assert_uint_ne(a.periods[5].hash, d.periods[5].hash); /* W47 */
        /* Options that change the report change every hash. */
        gc_publish_plan_release(&b);
        o.currency = "EUR";
        ck_assert_int_eq(gc_publish_plan_make(f.l, &o, now, &b), 0);
        for (size_t i = 0; i < b.n_periods; i++)
                ck_assert_uint_ne(b.periods[i].hash, d.periods[i].hash);
        /* So does the chargeback (its mode, then a team's weight): the Chargeback section
         * of a complete period's report must be rewritten when it changes. */
        {
                gc_team_weight w[] = {{"ml", 2.0}, {"vision", 1.0}};
                gc_chargeback cb = {.mode = GC_CHARGEBACK_PROPORTIONAL};
                gc_publish_plan e, g, k;

                o.chargeback = &cb;
                ck_assert_int_eq(gc_publish_plan_make(f.l, &o, now, &e), 0);
                cb.mode = GC_CHARGEBACK_WEIGHTS;
                cb.weights = w;
                cb.n_weights = 2;
                ck_assert_int_eq(gc_publish_plan_make(f.l, &o, now, &g), 0);
                w[1].weight = 3.0;
                ck_assert_int_eq(gc_publish_plan_make(f.l, &o, now, &k), 0);
                for (size_t i = 0; i < b.n_periods; i++) {
                        ck_assert_uint_ne(b.periods[i].hash, e.periods[i].hash);
                        ck_assert_uint_ne(e.periods[i].hash, g.periods[i].hash);
                        ck_assert_uint_ne(g.periods[i].hash, k.periods[i].hash);
                }
                gc_publish_plan_release(&e);
                gc_publish_plan_release(&g);
                gc_publish_plan_release(&k);
                o.chargeback = NULL;
        }
        gc_publish_plan_release(&a);
        gc_publish_plan_release(&b);
        gc_publish_plan_release(&c);
        gc_publish_plan_release(&d);
        fx_free(&f);
}
END_TEST

/* ---- retention
 * ----------------------------------------------------------------------------------- */

START_TEST(expired_names)
{
        static const char *const names[] = {
            "gpu-cost-report-daily-2026-10-18",  /* 0: one day past 35 days */
            "gpu-cost-report-daily-2026-10-19",  /* 1: the oldest kept */
            "gpu-cost-report-daily-2026-11-22",  /* 2: today */
            "gpu-cost-report-weekly-2026-w35",   /* 3: one week past 12 weeks */
            "gpu-cost-report-weekly-2026-w36",   /* 4: the oldest kept (Mon 2026-08-31) */
            "gpu-cost-report-weekly-2025-w52",   /* 5: long gone */
            GC_PUBLISH_DAILY_LATEST,             /* never */
            GC_PUBLISH_WEEKLY_LATEST,            /* never */
            "gpu-cost-checkpoint",               /* not a report */
            "gpu-cost-report-daily-2026-02-30",  /* not a day */
            "gpu-cost-report-weekly-2025-w53",   /* 2025 has 52 weeks */
            "gpu-cost-report-daily-2026-1-01",   /* not ours */
            "gpu-cost-report-daily-2020-01-01x", /* not ours */
            NULL,
        };
        size_t n_names = sizeof(names) / sizeof(names[0]);
        int64_t now = at("2026-11-22T05:00:00Z");
        gc_publish_opts o;
        const char **out = NULL;
        size_t n = 0;

        memset(&o, 0, sizeof(o)); /* 35 days, 12 weeks */
        ck_assert_int_eq(gc_publish_expired(&o, now, names, n_names, &out, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_ptr_eq(out[0], names[0]);
        ck_assert_ptr_eq(out[1], names[3]);
        ck_assert_ptr_eq(out[2], names[5]);
        free(out);

        /* At +05:30, 20:00 UTC on the 22nd is Monday the 23rd: one more day and week go. */
        o.utc_offset_s = IST;
        ck_assert_int_eq(
            gc_publish_expired(&o, at("2026-11-22T20:00:00Z"), names, n_names, &out, &n), 0);
        ck_assert_uint_eq(n, 5);
        ck_assert_ptr_eq(out[0], names[0]);
        ck_assert_ptr_eq(out[1], names[1]);
        ck_assert_ptr_eq(out[2], names[3]);
        ck_assert_ptr_eq(out[3], names[4]);
        ck_assert_ptr_eq(out[4], names[5]);
        free(out);

        ck_assert_int_eq(gc_publish_name_parse(GC_PUBLISH_DAILY_LATEST, 0, NULL, NULL), -ENOENT);
        o.daily_retention_days = -1;
        ck_assert_int_eq(gc_publish_expired(&o, now, names, n_names, &out, &n), -EINVAL);
}
END_TEST

START_TEST(labels)
{
        gc_publish_label l[GC_PUBLISH_N_LABELS];

        gc_publish_labels(GC_PUBLISH_WEEKLY, l);
        ck_assert_str_eq(l[0].key, "app.kubernetes.io/name");
        ck_assert_str_eq(l[0].value, "gpu-cost");
        ck_assert_str_eq(l[1].key, "gpu-cost.io/kind");
        ck_assert_str_eq(l[1].value, "report");
        ck_assert_str_eq(l[2].key, "gpu-cost.io/period");
        ck_assert_str_eq(l[2].value, "weekly");
        gc_publish_labels(GC_PUBLISH_DAILY, l);
        ck_assert_str_eq(l[2].value, "daily");
}
END_TEST

/* ---- rendering
 * ------------------------------------------------------------------------------------ */

static cJSON *parse(const gc_buf *b)
{
        cJSON *j = cJSON_ParseWithLength(b->data, b->len);

        ck_assert_msg(j != NULL, "report.json does not parse");
        return j;
}

static cJSON *get(const cJSON *o, const char *name)
{
        cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

        ck_assert_msg(v != NULL, "missing member \"%s\"", name);
        return v;
}

static double num(const cJSON *o, const char *name)
{
        cJSON *v = get(o, name);

        ck_assert_msg(cJSON_IsNumber(v), "\"%s\" is not a number", name);
        return v->valuedouble;
}

static double sum_of(const cJSON *arr, const char *member)
{
        const cJSON *e;
        double s = 0;

        cJSON_ArrayForEach(e, arr)
        {
                s += num(e, member);
        }
        return s;
}

static int notes_have(const cJSON *j, const char *part)
{
        const cJSON *e;

        cJSON_ArrayForEach(e, get(j, "notes"))
        {
                if (cJSON_IsString(e) && strstr(e->valuestring, part))
                        return 1;
        }
        return 0;
}

START_TEST(render_partial_and_complete)
{
        int64_t t0 = at("2026-11-16T00:00:00Z"), now = t0 + 6 * DAY + 5 * H;
        gc_publish_opts o;
        gc_publish_plan plan;
        gc_publish_report rep = {0};
        const gc_publish_period *p;
        static const char *const notes[] = {"A note from the controller."};
        cJSON *j, *per;
        fixture f;

        fx_new(&f);
        fill_week(f.l, t0);
        memset(&o, 0, sizeof(o));
        o.cluster = "prod";
        ck_assert_int_eq(gc_publish_plan_make(f.l, &o, now, &plan), 0);

        p = find(&plan, "gpu-cost-report-weekly-2026-w47");
        ck_assert_ptr_nonnull(p);
        ck_assert_int_eq(gc_publish_render(f.l, &o, p, now, NULL, notes, 1, &rep), 0);
        ck_assert_uint_eq(rep.rows_cut, 0);
        ck_assert_uint_eq(rep.top_n, 10);
        ck_assert_uint_le(rep.json.len + rep.md.len, GC_PUBLISH_MAX_BYTES);
        ck_assert_ptr_nonnull(
            strstr(rep.md.data, "**Partial: figures up to 2026-11-22T05:00:00Z.**"));
        ck_assert_ptr_nonnull(strstr(rep.md.data, "- A note from the controller.\n"));
        j = parse(&rep.json);
        per = get(j, "period");
        ck_assert(cJSON_IsTrue(get(per, "partial")));
        ck_assert_str_eq(get(per, "figures_up_to")->valuestring, "2026-11-22T05:00:00Z");
        ck_assert_str_eq(get(per, "iso_week")->valuestring, "2026-W47");
        ck_assert_str_eq(get(j, "kind")->valuestring, "weekly");
        ck_assert(cJSON_IsNull(get(j, "rows_cut_to")));
        /* capacity Tue-Thu noon: 2.5 days x 4 GPUs = 240 GPU-h, $480; pods: 1 h + 3 h = $8 */
        ck_assert_double_eq_tol(num(get(get(j, "summary"), "total"), "cost_usd"), 8.0, 1e-9);
        ck_assert_double_eq_tol(num(get(get(j, "summary"), "capacity"), "cost_usd"), 480.0, 1e-9);
        ck_assert(notes_have(j, "A note from the controller."));
        cJSON_Delete(j);
        gc_publish_report_release(&rep);

        p = plan.latest_daily; /* Sat 2026-11-21: complete */
        ck_assert_str_eq(p->name, "gpu-cost-report-daily-2026-11-21");
        ck_assert_int_eq(gc_publish_render(f.l, &o, p, now, NULL, NULL, 0, &rep), 0);
        ck_assert_ptr_null(strstr(rep.md.data, "Partial"));
        ck_assert_ptr_nonnull(strstr(rep.md.data, "# GPU spend, Sat 2026-11-21 (UTC)\n"));
        j = parse(&rep.json);
        ck_assert(cJSON_IsFalse(get(get(j, "period"), "partial")));
        ck_assert_str_eq(get(get(j, "period"), "figures_up_to")->valuestring,
                         "2026-11-22T00:00:00Z");
        ck_assert_double_eq_tol(num(get(get(j, "summary"), "total"), "cost_usd"), 2.0, 1e-9);
        cJSON_Delete(j);
        gc_publish_report_release(&rep);
        gc_publish_plan_release(&plan);
        fx_free(&f);
}
END_TEST

/* A day at +05:30: its per-day rows and dates are local, a pod across local midnight splits. */
START_TEST(render_offset_days)
{
        int64_t start = at("2026-11-15T18:30:00Z"); /* Mon 2026-11-16 00:00 at +05:30 */
        gc_publish_opts o;
        gc_publish_period p;
        gc_publish_report rep = {0};
        cJSON *j, *days;
        fixture f;

        fx_new(&f);
        /* 23:30-00:30 local on the night of Mon 16 to Tue 17 */
        put_pod(f.l, "p", "ml", "ml", "train", "n1", 1, 4.0, at("2026-11-16T18:00:00Z"),
                at("2026-11-16T19:00:00Z"));
        memset(&o, 0, sizeof(o));
        o.utc_offset_s = IST;
        memset(&p, 0, sizeof(p));
        p.kind = GC_PUBLISH_WEEKLY;
        p.start = start;
        p.end = start + 7 * DAY;
        ck_assert_int_eq(gc_publish_render(f.l, &o, &p, p.end + H, NULL, NULL, 0, &rep), 0);
        ck_assert_ptr_nonnull(
            strstr(rep.md.data, "# GPU spend, week 2026-W47 (Mon 2026-11-16 \u2013 Sun 2026-11-22, "
                                "UTC+05:30)\n"));
        j = parse(&rep.json);
        ck_assert_str_eq(get(get(j, "period"), "time_zone")->valuestring, "UTC+05:30");
        ck_assert(num(get(j, "period"), "utc_offset_seconds") == 19800);
        days = get(j, "by_day");
        ck_assert_int_eq(cJSON_GetArraySize(days), 7);
        ck_assert_str_eq(get(cJSON_GetArrayItem(days, 0), "date")->valuestring, "2026-11-16");
        ck_assert_str_eq(get(cJSON_GetArrayItem(days, 0), "start")->valuestring,
                         "2026-11-15T18:30:00Z");
        ck_assert_double_eq_tol(num(cJSON_GetArrayItem(days, 0), "gpu_hours"), 0.5, 1e-12);
        ck_assert_double_eq_tol(num(cJSON_GetArrayItem(days, 1), "gpu_hours"), 0.5, 1e-12);
        ck_assert_double_eq_tol(num(cJSON_GetArrayItem(days, 1), "cost_usd"), 2.0, 1e-12);
        ck_assert_str_eq(get(cJSON_GetArrayItem(days, 6), "date")->valuestring, "2026-11-22");
        ck_assert_ptr_nonnull(strstr(rep.md.data, "| Mon 2026-11-16 | "));
        ck_assert_ptr_nonnull(strstr(rep.md.data, "| Tue 2026-11-17 | "));
        cJSON_Delete(j);
        gc_publish_report_release(&rep);
        fx_free(&f);
}
END_TEST

/*
 * Teams' copies: ml holds 10 GPU-h at $3 ($30), web 4 GPU-h ($12), an unlabelled pod 2 GPU-h
 * ($6), on node n1 (8 GPUs all day, $3). Each team's copy shows its own spend only; together
 * they add up to the cluster's total; idle and capacity are left out of them.
 */
START_TEST(render_team_copy)
{
        int64_t day = at("2026-11-20T00:00:00Z");
        gc_publish_opts o;
        gc_publish_period p;
        gc_publish_report rep = {0};
        static const char *const teams[] = {"ml", "web", "__unattributed__"};
        static const double want[] = {30.0, 12.0, 6.0};
        double sum = 0;
        cJSON *j, *s;
        fixture f;

        fx_new(&f);
        put_node(f.l, "n1", 8, 3.0, day - DAY, GC_OPEN);
        put_pod(f.l, "a", "ml", "ml", "train", "n1", 2, 3.0, day, day + 5 * H);
        put_pod(f.l, "b", "web", "web", "site", "n1", 1, 3.0, day + 10 * H, day + 14 * H);
        put_pod(f.l, "c", "scratch", GC_UNATTRIBUTED, GC_UNATTRIBUTED, "n1", 1, 3.0, day + 20 * H,
                day + 22 * H);
        memset(&o, 0, sizeof(o));
        memset(&p, 0, sizeof(p));
        p.kind = GC_PUBLISH_DAILY;
        p.start = day;
        p.end = day + DAY;
        p.complete = 1;

        for (size_t i = 0; i < 3; i++) {
                ck_assert_int_eq(
                    gc_publish_render(f.l, &o, &p, day + 2 * DAY, teams[i], NULL, 0, &rep), 0);
                j = parse(&rep.json);
                s = get(j, "summary");
                ck_assert_str_eq(get(j, "team")->valuestring, teams[i]);
                ck_assert_double_eq_tol(num(get(s, "total"), "cost_usd"), want[i], 1e-9);
                ck_assert_int_eq(cJSON_GetArraySize(get(j, "by_team")), 1);
                ck_assert_str_eq(get(cJSON_GetArrayItem(get(j, "by_team"), 0), "team")->valuestring,
                                 teams[i]);
                ck_assert_double_eq_tol(sum_of(get(j, "by_day"), "cost_usd"), want[i], 1e-9);
                /* Idle and capacity are the cluster's: left out, and said so. */
                ck_assert(cJSON_IsNull(get(get(s, "idle"), "cost_usd")));
                ck_assert(cJSON_IsNull(get(get(s, "capacity"), "cost_usd")));
                ck_assert_int_eq(cJSON_GetArraySize(get(j, "idle_nodes")), 0);
                ck_assert(notes_have(j, "one team"));
                ck_assert_ptr_null(strstr(rep.md.data, "## Idle GPUs you pay for"));
                ck_assert_ptr_null(strstr(rep.md.data, "Idle GPUs you pay for:"));
                ck_assert_ptr_nonnull(strstr(rep.md.data, "Team: "));
                ck_assert_ptr_nonnull(strstr(rep.md.data, " of team "));
                sum += num(get(s, "total"), "cost_usd");
                cJSON_Delete(j);
                gc_publish_report_release(&rep);
        }

        /* The cluster's report: $48 in all, idle 8 x 24 - 16 = 176 GPU-h ($528). */
        ck_assert_int_eq(gc_publish_render(f.l, &o, &p, day + 2 * DAY, NULL, NULL, 0, &rep), 0);
        j = parse(&rep.json);
        s = get(j, "summary");
        ck_assert(cJSON_IsNull(get(j, "team")));
        ck_assert_double_eq_tol(num(get(s, "total"), "cost_usd"), 48.0, 1e-9);
        ck_assert_double_eq_tol(sum, 48.0, 1e-9);
        ck_assert_double_eq_tol(num(get(s, "idle"), "cost_usd"), 528.0, 1e-9);
        ck_assert_ptr_nonnull(strstr(rep.md.data, "## Idle GPUs you pay for"));
        cJSON_Delete(j);
        gc_publish_report_release(&rep);
        fx_free(&f);
}
END_TEST

/*
 * 20,000 pods in one day, each in its own namespace, project and (of 2,000) node, a third of
 * them unattributed: every table would have thousands of rows. The report still fits one
 * ConfigMap, says it was cut, and every cut table's rows plus its summed rest are its total.
 */
START_TEST(render_size_cut)
{
        int64_t day = at("2026-11-20T00:00:00Z");
        gc_publish_opts o;
        gc_publish_period p;
        gc_publish_report rep = {0};
        char uid[32], ns[32], team[32], project[32], node[32];
        double total = 0, total_gs = 0;
        cJSON *j, *s, *om;
        fixture f;

        fx_new(&f);
        for (int i = 0; i < 2000; i++) {
                snprintf(node, sizeof(node), "gpu-node-%04d.example.internal", i);
                put_node(f.l, node, 8, 2.0 + i * 0.001, day - DAY, GC_OPEN);
        }
        for (int i = 0; i < 20000; i++) {
                int64_t start = day + (i % 1000) * 60, len = 600 + (i % 37) * 60;
                double price = 2.0 + (i % 2000) * 0.001;

                snprintf(uid, sizeof(uid), "pod-uid-%06d", i);
                snprintf(ns, sizeof(ns), "namespace-%05d", i);
                snprintf(team, sizeof(team), "team-%04d", i % 1500);
                snprintf(project, sizeof(project), "project-%05d", i);
                snprintf(node, sizeof(node), "gpu-node-%04d.example.internal", i % 2000);
                put_pod(f.l, uid, ns, i % 3 == 0 ? GC_UNATTRIBUTED : team, project, node, 1, price,
                        start, start + len);
                total += (double)len / 3600.0 * price;
                total_gs += (double)len;
        }
        memset(&o, 0, sizeof(o));
        o.top_n = 1000;
        memset(&p, 0, sizeof(p));
        p.kind = GC_PUBLISH_DAILY;
        p.start = day;
        p.end = day + DAY;
        ck_assert_int_eq(gc_publish_render(f.l, &o, &p, day + DAY, NULL, NULL, 0, &rep), 0);
        ck_assert_uint_le(rep.json.len + rep.md.len, GC_PUBLISH_MAX_BYTES);
        ck_assert_uint_le(rep.json.len + rep.md.len, 1u << 20);
        ck_assert_uint_gt(rep.rows_cut, 0);
        ck_assert_uint_le(rep.top_n, rep.rows_cut);
        ck_assert_ptr_nonnull(strstr(rep.md.data, "more rows)"));
        ck_assert_ptr_nonnull(strstr(rep.md.data, "Cut to fit a ConfigMap"));

        j = parse(&rep.json);
        s = get(j, "summary");
        ck_assert_double_eq_tol(num(get(s, "total"), "cost_usd"), total, 1e-6);
        ck_assert_double_eq_tol(num(get(s, "total"), "gpu_seconds"), total_gs, 1e-6);
        ck_assert(num(j, "rows_cut_to") == (double)rep.rows_cut);
        ck_assert(notes_have(j, "Cut to fit a ConfigMap"));
        ck_assert(notes_have(j, "summed in its last row"));
        /* the summary's groups and what was left out of them add up to the total */
        ck_assert_int_eq(cJSON_GetArraySize(get(s, "groups")), (int)rep.rows_cut);
        om = get(j, "summary_groups_omitted");
        ck_assert_double_eq_tol(sum_of(get(s, "groups"), "cost_usd") + num(om, "cost_usd"), total,
                                1e-6);
        ck_assert(num(om, "rows") + (double)rep.rows_cut == 20000.0);
        om = get(j, "by_team_omitted");
        ck_assert_double_eq_tol(sum_of(get(j, "by_team"), "cost_usd") + num(om, "cost_usd"), total,
                                1e-6);
        om = get(get(j, "unattributed"), "namespaces_omitted");
        ck_assert_double_eq_tol(sum_of(get(get(j, "unattributed"), "namespaces"), "cost_usd") +
                                    num(om, "cost_usd"),
                                num(get(j, "unattributed"), "cost_usd"), 1e-6);
        ck_assert(num(om, "rows") + (double)rep.rows_cut == 6667.0);
        om = get(j, "idle_nodes_omitted");
        ck_assert(num(om, "rows") + (double)rep.rows_cut == 2000.0);
        cJSON_Delete(j);
        gc_publish_report_release(&rep);

        /* A smaller ConfigMap budget cuts deeper and still fits. */
        o.max_bytes = 64u * 1024u;
        ck_assert_int_eq(gc_publish_render(f.l, &o, &p, day + DAY, NULL, NULL, 0, &rep), 0);
        ck_assert_uint_le(rep.json.len + rep.md.len, 64u * 1024u);
        ck_assert_uint_gt(rep.rows_cut, 0);
        gc_publish_report_release(&rep);
        fx_free(&f);
}
END_TEST

START_TEST(bad_input)
{
        gc_publish_opts o;
        gc_publish_plan plan;
        gc_publish_period p;
        gc_publish_report rep = {0};
        fixture f;

        fx_new(&f);
        memset(&o, 0, sizeof(o));
        memset(&p, 0, sizeof(p));
        p.start = 0;
        p.end = DAY;
        o.utc_offset_s = 30; /* not whole minutes */
        ck_assert_int_eq(gc_publish_plan_make(f.l, &o, DAY, &plan), -EINVAL);
        ck_assert_int_eq(gc_publish_render(f.l, &o, &p, DAY, NULL, NULL, 0, &rep), -EINVAL);
        o.utc_offset_s = 19 * H;
        ck_assert_int_eq(gc_publish_plan_make(f.l, &o, DAY, &plan), -EINVAL);
        o.utc_offset_s = 0;
        ck_assert_int_eq(gc_publish_plan_make(f.l, &o, -1, &plan), -EINVAL);
        ck_assert_int_eq(gc_publish_render(f.l, &o, &p, DAY, "", NULL, 0, &rep), -EINVAL);
        o.max_bytes = 100;
        ck_assert_int_eq(gc_publish_render(f.l, &o, &p, DAY, NULL, NULL, 0, &rep), -EINVAL);
        o.max_bytes = 0;
        /* An empty ledger: nothing to publish. */
        ck_assert_int_eq(gc_publish_plan_make(f.l, &o, at("2026-11-20T00:00:00Z"), &plan), 0);
        ck_assert_uint_eq(plan.n_periods, 0);
        ck_assert_ptr_null(plan.latest_daily);
        gc_publish_plan_release(&plan);
        fx_free(&f);
}
END_TEST

/* The advisor's findings ride along: report.md's "Savings" section, report.json's "savings". */
START_TEST(render_savings)
{
        int64_t start = at("2026-11-16T00:00:00Z");
        gc_publish_opts o;
        gc_publish_period p;
        gc_publish_report rep = {0};
        cJSON *j;
        fixture f;

        fx_new(&f);
        put_pod(f.l, "p", "ml", "ml", "train", "n1", 1, 4.0, start + H, start + 3 * H);
        memset(&o, 0, sizeof(o));
        o.savings_markdown = "One idle GPU: **$96.00** a day.";
        o.savings_json = "{\"findings\":[],\"monthly_savings\":2920}";
        memset(&p, 0, sizeof(p));
        p.kind = GC_PUBLISH_WEEKLY;
        p.start = start;
        p.end = start + 7 * DAY;
        ck_assert_int_eq(gc_publish_render(f.l, &o, &p, start + DAY, NULL, NULL, 0, &rep), 0);
        ck_assert_ptr_nonnull(
            strstr(rep.md.data, "\n## Savings\n\nOne idle GPU: **$96.00** a day.\n"));
        j = parse(&rep.json);
        ck_assert(num(get(j, "savings"), "monthly_savings") == 2920);
        cJSON_Delete(j);
        gc_publish_report_release(&rep);
        o.savings_markdown = o.savings_json = NULL;
        ck_assert_int_eq(gc_publish_render(f.l, &o, &p, start + DAY, NULL, NULL, 0, &rep), 0);
        ck_assert_ptr_null(strstr(rep.md.data, "## Savings"));
        j = parse(&rep.json);
        ck_assert(cJSON_IsNull(get(j, "savings")));
        cJSON_Delete(j);
        gc_publish_report_release(&rep);
        fx_free(&f);
}
END_TEST

/*
 * Europe/Berlin around the autumn change: the daily report of Sunday 2026-10-25 covers 25 hours,
 * October's monthly report runs from 30 September 22:00 UTC to 31 October 23:00 UTC and is the
 * latest complete month in November; monthly names expire after monthly_retention_months.
 */
START_TEST(plan_berlin_months)
{
        static const char *const names[] = {
            "gpu-cost-report-monthly-2025-11", /* 0: past 12 months */
            "gpu-cost-report-monthly-2025-12", /* 1: the oldest kept */
            "gpu-cost-report-monthly-2026-13", /* not a month */
            "gpu-cost-report-monthly-latest",  /* never */
        };
        int64_t now = at("2026-11-03T10:00:00Z");
        const gc_publish_period *d, *m;
        gc_publish_opts o;
        gc_publish_plan plan;
        gc_publish_report rep;
        gc_publish_kind kind;
        gc_tz *z = NULL;
        const char **out = NULL;
        size_t n = 0;
        int64_t start;
        fixture f;

        ck_assert_int_eq(gc_tz_load(NULL, "Europe/Berlin", &z), 0);
        fx_new(&f);
        put_node(f.l, "n1", 1, 2.0, at("2026-09-01T00:00:00Z"), GC_OPEN);
        put_pod(f.l, "p1", "ml", "ml", "train", "n1", 1, 2.0, at("2026-10-20T00:00:00Z"), GC_OPEN);
        memset(&o, 0, sizeof(o));
        o.tz = z;
        o.utc_offset_s = IST; /* a zone wins over the fixed offset */
        ck_assert_int_eq(gc_publish_plan_make(f.l, &o, now, &plan), 0);
        d = find(&plan, "gpu-cost-report-daily-2026-10-25");
        ck_assert_ptr_nonnull(d);
        ck_assert_int_eq(d->start, at("2026-10-24T22:00:00Z"));
        ck_assert_int_eq(d->end - d->start, 25 * H);
        m = find(&plan, "gpu-cost-report-monthly-2026-10");
        ck_assert_ptr_nonnull(m);
        ck_assert_int_eq(m->start, at("2026-09-30T22:00:00Z"));
        ck_assert_int_eq(m->end, at("2026-10-31T23:00:00Z"));
        ck_assert_ptr_eq(plan.latest_monthly, m);
        ck_assert_ptr_nonnull(find(&plan, "gpu-cost-report-monthly-2026-09"));
        ck_assert_ptr_nonnull(find(&plan, "gpu-cost-report-monthly-2026-11"));
        ck_assert_ptr_nonnull(find(&plan, "gpu-cost-report-weekly-2026-w43"));
        ck_assert_int_eq(gc_publish_name_parse_tz(m->name, z, &kind, &start), 0);
        ck_assert_int_eq(kind, GC_PUBLISH_MONTHLY);
        ck_assert_int_eq(start, m->start);

        memset(&rep, 0, sizeof(rep));
        ck_assert_int_eq(gc_publish_render(f.l, &o, m, now, NULL, NULL, 0, &rep), 0);
        {
                cJSON *j = cJSON_Parse(rep.json.data);

                ck_assert_ptr_nonnull(j);
                ck_assert_str_eq(cJSON_GetObjectItem(j, "kind")->valuestring, "monthly");
                ck_assert_str_eq(cJSON_GetObjectItem(j, "title")->valuestring,
                                 "GPU spend, October 2026 (Europe/Berlin)");
                /* 20 Oct 00:00 UTC to 31 Oct 23:00 UTC: 287 h at $2. */
                ck_assert_double_eq_tol(
                    cJSON_GetObjectItem(
                        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "summary"), "total"), "cost_usd")
                        ->valuedouble,
                    574.0, 1e-9);
                cJSON_Delete(j);
        }
        gc_publish_report_release(&rep);
        gc_publish_plan_release(&plan);

        ck_assert_int_eq(gc_publish_expired(&o, now, names, 4, &out, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_ptr_eq(out[0], names[0]);
        free(out);
        o.monthly_retention_months = 121;
        ck_assert_int_eq(gc_publish_expired(&o, now, names, 4, &out, &n), -EINVAL);
        fx_free(&f);
        gc_tz_free(z);
}
END_TEST

/*
 * One builder: what /api/v1/reports/... renders from gc_publish_report_init is, byte for byte,
 * the ConfigMap's report.json and report.md of the same period (nothing cut, no notes).
 */
START_TEST(report_init_is_the_configmaps)
{
        int64_t t0 = at("2026-11-16T00:00:00Z"), now = t0 + 6 * DAY + 5 * H;
        gc_publish_opts o;
        gc_publish_plan plan;
        gc_publish_report rep = {0};
        gc_period_report pr;
        gc_publish_period bad;
        gc_buf json, md;
        fixture f;

        fx_new(&f);
        fill_week(f.l, t0);
        memset(&o, 0, sizeof(o));
        o.cluster = "prod";
        o.currency = "EUR";
        o.top_n = 3;
        o.savings_markdown = "One idle GPU.";
        o.savings_json = "{\"findings\":[]}";
        ck_assert_int_eq(gc_publish_plan_make(f.l, &o, now, &plan), 0);
        for (size_t i = 0; i < plan.n_periods; i++) {
                const gc_publish_period *p = &plan.periods[i];

                ck_assert_int_eq(gc_publish_render(f.l, &o, p, now, NULL, NULL, 0, &rep), 0);
                ck_assert_uint_eq(rep.rows_cut, 0);
                ck_assert_int_eq(gc_publish_report_init(f.l, &o, p, now, &pr), 0);
                ck_assert_ptr_eq(pr.ledger, f.l);
                ck_assert_int_eq(pr.start, p->start);
                ck_assert_int_eq(pr.end, p->end);
                gc_buf_init(&json, GC_PUBLISH_MAX_BYTES);
                gc_buf_init(&md, GC_PUBLISH_MAX_BYTES);
                ck_assert_int_eq(gc_report_period_json(&pr, &json), 0);
                ck_assert_int_eq(gc_report_period_markdown(&pr, &md), 0);
                ck_assert_str_eq(json.data, rep.json.data);
                ck_assert_str_eq(md.data, rep.md.data);
                ck_assert_ptr_nonnull(strstr(md.data, "One idle GPU."));
                gc_buf_free(&json);
                gc_buf_free(&md);
                gc_publish_report_release(&rep);
        }
        ck_assert_uint_ge(plan.n_periods, 3); /* days, the week and the month */
        /* Options the plan refuses, or an empty span, are refused here too. */
        bad = plan.periods[0];
        bad.end = bad.start;
        ck_assert_int_eq(gc_publish_report_init(f.l, &o, &bad, now, &pr), -EINVAL);
        o.top_n = 1001;
        ck_assert_int_eq(gc_publish_report_init(f.l, &o, &plan.periods[0], now, &pr), -EINVAL);
        gc_publish_plan_release(&plan);
        fx_free(&f);
}
END_TEST

/* History kept whole for the reports within retention: the earliest report's span. */
START_TEST(history_since)
{
        int64_t now = at("2026-11-24T10:00:00Z"), since = 0;
        gc_publish_opts o;

        memset(&o, 0, sizeof(o));
        /* Defaults: 35 days, 12 weeks, 12 months: the month before the oldest monthly report. */
        ck_assert_int_eq(gc_publish_history_since(&o, now, &since), 0);
        ck_assert_int_eq(since, at("2025-11-01T00:00:00Z"));
        /* One month of monthly reports: twelve weeks reach further back. */
        o.monthly_retention_months = 1;
        ck_assert_int_eq(gc_publish_history_since(&o, now, &since), 0);
        ck_assert_int_eq(since, now - 84 * DAY);
        /* Daily reports kept longer than the weeks. */
        o.daily_retention_days = 100;
        ck_assert_int_eq(gc_publish_history_since(&o, now, &since), 0);
        ck_assert_int_eq(since, now - 100 * DAY);
        o.utc_offset_s = 30;
        ck_assert_int_eq(gc_publish_history_since(&o, now, &since), -EINVAL);
        o.utc_offset_s = 0;
        ck_assert_int_eq(gc_publish_history_since(&o, -1, &since), -EINVAL);
        ck_assert_int_eq(gc_publish_history_since(&o, now, NULL), -EINVAL);
}
END_TEST

static Suite *publish_suite(void)
{
        Suite *s = suite_create("publish");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 120);
        tcase_add_loop_test(tc, period_edges, 0, sizeof(edges) / sizeof(edges[0]));
        tcase_add_test(tc, plan_days_with_data);
        tcase_add_test(tc, plan_hashes);
        tcase_add_test(tc, expired_names);
        tcase_add_test(tc, labels);
        tcase_add_test(tc, render_partial_and_complete);
        tcase_add_test(tc, render_offset_days);
        tcase_add_test(tc, render_team_copy);
        tcase_add_test(tc, render_size_cut);
        tcase_add_test(tc, bad_input);
        tcase_add_test(tc, render_savings);
        tcase_add_test(tc, report_init_is_the_configmaps);
        tcase_add_test(tc, history_since);
        tcase_add_test(tc, plan_berlin_months);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(publish_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed != 0;
}
