/* publish: the report ConfigMaps' periods, names, hashes, size-capped contents and expiry. */
#include "publish.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GC_PUB__DAY        ((int64_t)86400)
#define GC_PUB__WEEK       (7 * GC_PUB__DAY)
#define GC_PUB__TIME_MAX   ((int64_t)253402300799) /* 9999-12-31T23:59:59Z */
#define GC_PUB__MAX_OFFSET ((int64_t)18 * 3600)
#define GC_PUB__MIN_BYTES  (16u * 1024u)
#define GC_PUB__MAX_BYTES  (1u << 20)
#define GC_PUB__MAX_DAYS   3660 /* as the configuration allows */
#define GC_PUB__MAX_WEEKS  520
#define GC_PUB__MAX_MONTHS 120
#define GC_PUB__MAX_TOP_N  1000
#define GC_PUB__TOP_N      10
#define GC_PUB__FORMAT                                                                             \
        2 /* bump when the reports' layout changes: every hash changes                             \
             (2: the Usage basis section) */
#define GC_PUB__NOTE_LEN 256

/* Rows per table tried in turn until a report fits; 0 = every row. */
static const size_t gc_pub__levels[] = {0, 1000, 500, 250, 100, 50, 20, 10, 5, 1};

/* The options with defaults filled in, or -EINVAL. */
static int gc_pub__opts(const gc_publish_opts *o, gc_publish_opts *ret)
{
        gc_publish_opts v;

        if (!o)
                return -EINVAL;
        v = *o;
        if (v.daily_retention_days == 0)
                v.daily_retention_days = GC_PUBLISH_DEFAULT_DAILY_DAYS;
        if (v.weekly_retention_weeks == 0)
                v.weekly_retention_weeks = GC_PUBLISH_DEFAULT_WEEKLY_WEEKS;
        if (v.monthly_retention_months == 0)
                v.monthly_retention_months = GC_PUBLISH_DEFAULT_MONTHLY_MONTHS;
        if (v.max_bytes == 0)
                v.max_bytes = GC_PUBLISH_MAX_BYTES;
        if (v.top_n == 0)
                v.top_n = GC_PUB__TOP_N;
        if (v.utc_offset_s < -GC_PUB__MAX_OFFSET || v.utc_offset_s > GC_PUB__MAX_OFFSET ||
            v.utc_offset_s % 60 != 0 || v.daily_retention_days < 1 ||
            v.daily_retention_days > GC_PUB__MAX_DAYS || v.weekly_retention_weeks < 1 ||
            v.weekly_retention_weeks > GC_PUB__MAX_WEEKS || v.monthly_retention_months < 1 ||
            v.monthly_retention_months > GC_PUB__MAX_MONTHS || v.max_bytes < GC_PUB__MIN_BYTES ||
            v.max_bytes > GC_PUB__MAX_BYTES || v.top_n > GC_PUB__MAX_TOP_N)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int gc_pub__valid_now(int64_t now)
{
        /* Retention reaches back at most 10 years; the week after now must still be a time. */
        return now >= 0 && now <= GC_PUB__TIME_MAX - 2 * GC_PUB__WEEK;
}

/* The zone of the options: theirs, or the fixed offset (made into *own, freed by the caller). */
static int gc_pub__zone(const gc_publish_opts *o, gc_tz **own, const gc_tz **ret)
{
        int r;

        *own = NULL;
        if (o->tz) {
                *ret = o->tz;
                return 0;
        }
        r = gc_tz_fixed((int32_t)o->utc_offset_s, own);
        *ret = *own;
        return r;
}

static gc_tz_unit gc_pub__unit(gc_publish_kind kind)
{
        return kind == GC_PUBLISH_DAILY    ? GC_TZ_DAY
               : kind == GC_PUBLISH_WEEKLY ? GC_TZ_WEEK
                                           : GC_TZ_MONTH;
}

static const char *gc_pub__kind_name(gc_publish_kind kind)
{
        return kind == GC_PUBLISH_DAILY    ? "daily"
               : kind == GC_PUBLISH_WEEKLY ? "weekly"
                                           : "monthly";
}

static int64_t gc_pub__retention(const gc_publish_opts *o, gc_publish_kind kind)
{
        return kind == GC_PUBLISH_DAILY    ? o->daily_retention_days
               : kind == GC_PUBLISH_WEEKLY ? o->weekly_retention_weeks
                                           : o->monthly_retention_months;
}

static void gc_pub__name(gc_publish_kind kind, int64_t start, const gc_tz *tz,
                         char out[GC_PUBLISH_NAME_MAX])
{
        char date[16];

        gc_tz_date(tz, start, date, NULL);
        if (kind == GC_PUBLISH_DAILY) {
                snprintf(out, GC_PUBLISH_NAME_MAX, GC_PUBLISH_PREFIX "daily-%s", date);
        } else if (kind == GC_PUBLISH_WEEKLY) {
                int year, week;

                gc_iso_week(gc_tz_day_of(tz, start) * GC_PUB__DAY, &year, &week, NULL);
                snprintf(out, GC_PUBLISH_NAME_MAX, GC_PUBLISH_PREFIX "weekly-%04d-w%02d", year,
                         week);
        } else {
                snprintf(out, GC_PUBLISH_NAME_MAX, GC_PUBLISH_PREFIX "monthly-%.7s", date);
        }
}

/* ---- hashing what a report would show ---------------------------------------------------------
 */

static uint64_t gc_pub__hash_str(uint64_t h, const char *s)
{
        if (!s)
                s = "";
        /* The NUL too, so that ("ab","c") and ("a","bc") differ. */
        return gc_hash(s, strlen(s) + 1, h);
}

static uint64_t gc_pub__hash_i64(uint64_t h, int64_t v)
{
        return gc_hash(&v, sizeof(v), h);
}

/*
 * Figures to 9 significant digits: far below the cent the report shows, yet above the noise of
 * sums re-associated when the ledger's records move (a fold, a restart), which would otherwise
 * rewrite a report that says the same.
 */
static uint64_t gc_pub__hash_num(uint64_t h, double v)
{
        char num[40];

        snprintf(num, sizeof(num), "%.9g", v);
        return gc_pub__hash_str(h, num);
}

static uint64_t gc_pub__hash_row(uint64_t h, const gc_cost_row *row)
{
        for (size_t d = 0; d < GC_DIM_COUNT; d++)
                h = gc_pub__hash_str(h, row->keys[d]);
        h = gc_pub__hash_num(h, row->gpu_seconds);
        h = gc_pub__hash_num(h, row->cost);
        /* Measured use reaching the usage basis (its section, its chargeback) grows this. */
        h = gc_pub__hash_num(h, row->measured_cost);
        h = gc_pub__hash_i64(h, row->pods);
        return gc_pub__hash_i64(h, row->estimates);
}

/*
 * Whether the period has data (cur: its summary by every dimension), and the hash of everything
 * its report shows: every pod's (and folded hour's) figures in the period by every dimension,
 * each node's capacity and idle time, the previous period's total and capacity, and the options
 * that shape the report.
 */
static void gc_pub__examine(const gc_publish_opts *o, int64_t now, const gc_cost_summary *cur,
                            const gc_cost_row *prev_total, const gc_cost_row *prev_capacity,
                            gc_publish_period *p, int *ret_has_data)
{
        uint64_t h = 0;

        *ret_has_data = cur->n_rows > 0 || cur->n_idle_nodes > 0;
        h = gc_pub__hash_i64(h, GC_PUB__FORMAT);
        h = gc_pub__hash_i64(h, p->kind);
        h = gc_pub__hash_i64(h, p->start);
        h = gc_pub__hash_i64(h, p->end);
        h = gc_pub__hash_i64(h, p->complete ? p->end : now);
        h = gc_pub__hash_str(h, o->cluster);
        h = gc_pub__hash_str(h, o->currency);
        h = gc_pub__hash_i64(h, (int64_t)o->top_n);
        h = gc_pub__hash_i64(h, o->utc_offset_s);
        h = gc_pub__hash_str(h, o->tz ? gc_tz_name(o->tz) : "");
        h = gc_pub__hash_num(h, o->budget_warn_share);
        for (size_t i = 0; i < o->n_budgets; i++) {
                h = gc_pub__hash_i64(h, o->budgets[i].dim);
                h = gc_pub__hash_str(h, o->budgets[i].name);
                h = gc_pub__hash_i64(h, o->budgets[i].period);
                h = gc_pub__hash_num(h, o->budgets[i].amount);
        }
        /* How idle and unattributed spend is charged back changes the report's Chargeback. */
        h = gc_pub__hash_i64(h, o->chargeback ? (int64_t)o->chargeback->mode : -1);
        h = gc_pub__hash_i64(h, o->chargeback ? (int64_t)o->chargeback->basis : -1);
        for (size_t i = 0; o->chargeback && i < o->chargeback->n_weights; i++) {
                h = gc_pub__hash_str(h, o->chargeback->weights[i].team);
                h = gc_pub__hash_num(h, o->chargeback->weights[i].weight);
        }
        for (size_t i = 0; i < cur->n_rows; i++)
                h = gc_pub__hash_row(h, &cur->rows[i]);
        for (size_t i = 0; i < cur->n_idle_nodes; i++)
                h = gc_pub__hash_row(h, &cur->idle_nodes[i]);
        h = gc_pub__hash_row(h, &cur->capacity);
        h = gc_pub__hash_row(h, prev_total);
        h = gc_pub__hash_row(h, prev_capacity);
        p->hash = h;
}

/* ---- the plan ---------------------------------------------------------------------------------
 */

typedef struct gc_pub__walk {
        const gc_publish_opts *o;
        const gc_tz *tz;
        int64_t now;
        gc_publish_kind kind;
        gc_publish_plan *plan;
        int have_prev; /* the first step is the period before the first: only its figures count */
        gc_cost_row prev_total, prev_capacity;
} gc_pub__walk;

/* One period's summary (by every dimension): a period in the plan when it has data. */
static int gc_pub__step(void *ud, const gc_cost_summary *s)
{
        gc_pub__walk *w = ud;
        gc_publish_period *p = &w->plan->periods[w->plan->n_periods];
        int has = 0;

        if (w->have_prev && s->start >= 0) {
                memset(p, 0, sizeof(*p));
                p->kind = w->kind;
                p->start = s->start;
                p->end = s->end;
                p->complete = p->end <= w->now;
                gc_pub__name(w->kind, p->start, w->tz, p->name);
                gc_pub__examine(w->o, w->now, s, &w->prev_total, &w->prev_capacity, p, &has);
                if (has)
                        w->plan->n_periods++;
        }
        w->have_prev = 1;
        w->prev_total = s->total;
        w->prev_capacity = s->capacity;
        return 0;
}

/*
 * The count periods of the kind up to the one holding now (those starting before 0 left out):
 * one query by every dimension over spans (local days, weeks, months of uneven length) per
 * GC_LEDGER_MAX_STEPS - 1 periods, its first span the period before (whose total the report
 * compares with), instead of two queries per period.
 */
static int gc_pub__consider(const gc_ledger *l, const gc_publish_opts *o, const gc_tz *tz,
                            int64_t now, gc_publish_kind kind, int64_t count, gc_publish_plan *plan)
{
        const size_t per = GC_LEDGER_MAX_STEPS - 1;
        gc_tz_unit u = gc_pub__unit(kind);
        size_t n = 0;
        int64_t *edges;
        gc_pub__walk w;
        gc_query q;
        int r = 0;

        /* count + 1 periods (the one before the first too): count + 2 edges. */
        edges = calloc((size_t)count + 2, sizeof(*edges));
        if (!edges)
                return -ENOMEM;
        for (int64_t k = -count; k <= 1; k++)
                edges[n++] = gc_tz_period_add(tz, u, now, k);
        memset(&w, 0, sizeof(w));
        w.o = o;
        w.tz = tz;
        w.now = now;
        w.kind = kind;
        w.plan = plan;
        memset(&q, 0, sizeof(q));
        q.now = now;
        for (size_t d = 0; d < GC_DIM_COUNT; d++)
                q.by[d] = (gc_dim)d;
        q.n_by = GC_DIM_COUNT;
        /* Each chunk's first span is the period before its first (the previous chunk's last). */
        for (size_t c = 0; r == 0 && c + 1 < n - 1;) {
                size_t m = n - 1 - c < per + 1 ? n - 1 - c : per + 1;

                w.have_prev = 0;
                r = gc_ledger_query_each_span(l, &q, edges + c, m, gc_pub__step, &w);
                c += m - 1;
        }
        free(edges);
        return r;
}

int gc_publish_plan_make(const gc_ledger *l, const gc_publish_opts *opts, int64_t now,
                         gc_publish_plan *ret)
{
        static const gc_publish_kind kinds[] = {GC_PUBLISH_DAILY, GC_PUBLISH_WEEKLY,
                                                GC_PUBLISH_MONTHLY};
        gc_publish_opts o;
        gc_publish_plan plan;
        gc_tz *own = NULL;
        const gc_tz *tz;
        int r;

        if (!l || !ret || gc_pub__opts(opts, &o) < 0 || !gc_pub__valid_now(now) ||
            (o.n_budgets && !o.budgets))
                return -EINVAL;
        r = gc_pub__zone(&o, &own, &tz);
        if (r < 0)
                return r;
        memset(&plan, 0, sizeof(plan));
        plan.periods = calloc((size_t)(o.daily_retention_days + o.weekly_retention_weeks +
                                       o.monthly_retention_months),
                              sizeof(*plan.periods));
        if (!plan.periods) {
                gc_tz_free(own);
                return -ENOMEM;
        }
        for (size_t k = 0; r == 0 && k < sizeof(kinds) / sizeof(kinds[0]); k++)
                r = gc_pub__consider(l, &o, tz, now, kinds[k], gc_pub__retention(&o, kinds[k]),
                                     &plan);
        gc_tz_free(own);
        if (r < 0) {
                gc_publish_plan_release(&plan);
                return r;
        }
        /* Periods are in ascending order: the last complete one of each kind is the newest. */
        for (size_t i = 0; i < plan.n_periods; i++) {
                const gc_publish_period *p = &plan.periods[i];

                if (!p->complete)
                        continue;
                if (p->kind == GC_PUBLISH_DAILY)
                        plan.latest_daily = p;
                else if (p->kind == GC_PUBLISH_WEEKLY)
                        plan.latest_weekly = p;
                else
                        plan.latest_monthly = p;
        }
        *ret = plan;
        return 0;
}

int gc_publish_history_since(const gc_publish_opts *opts, int64_t now, int64_t *ret)
{
        gc_publish_opts o;
        int64_t days, since, month;

        if (!ret || gc_pub__opts(opts, &o) < 0 || !gc_pub__valid_now(now))
                return -EINVAL;
        days = o.daily_retention_days > o.weekly_retention_weeks * 7 ? o.daily_retention_days
                                                                     : o.weekly_retention_weeks * 7;
        since = now - days * GC_PUB__DAY;
        month = gc_tz_period_add(o.tz, GC_TZ_MONTH, now, -o.monthly_retention_months);
        *ret = month < since ? month : since;
        return 0;
}

int gc_publish_hourly_since(const gc_publish_opts *opts, int64_t now, int64_t hourly_s,
                            int64_t *ret)
{
        gc_publish_opts o;
        gc_tz *own = NULL;
        const gc_tz *tz;
        int64_t month;
        int r;

        if (!ret || hourly_s < 0 || gc_pub__opts(opts, &o) < 0 || !gc_pub__valid_now(now))
                return -EINVAL;
        if (hourly_s) {
                *ret = now - hourly_s;
                return 0;
        }
        r = gc_pub__zone(&o, &own, &tz);
        if (r < 0)
                return r;
        month = gc_tz_period_add(tz, GC_TZ_MONTH, now, -1);
        gc_tz_free(own);
        *ret =
            now - GC_PUBLISH_HOURLY_DEFAULT_S < month ? now - GC_PUBLISH_HOURLY_DEFAULT_S : month;
        return 0;
}

void gc_publish_plan_release(gc_publish_plan *p)
{
        if (!p)
                return;
        free(p->periods);
        memset(p, 0, sizeof(*p));
}

/* ---- one period's ConfigMap data --------------------------------------------------------------
 */

int gc_publish_report_init(const gc_ledger *l, const gc_publish_opts *opts,
                           const gc_publish_period *p, int64_t now, gc_period_report *ret)
{
        gc_publish_opts o;

        if (!l || !p || !ret || gc_pub__opts(opts, &o) < 0 || now < 0 || p->end <= p->start)
                return -EINVAL;
        memset(ret, 0, sizeof(*ret));
        ret->ledger = l;
        ret->kind = gc_pub__kind_name(p->kind);
        ret->tz = o.tz;
        ret->budgets = o.budgets;
        ret->n_budgets = o.n_budgets;
        ret->budget_warn_share = o.budget_warn_share;
        ret->cluster = o.cluster;
        ret->currency = o.currency;
        ret->start = p->start;
        ret->end = p->end;
        ret->now = now;
        ret->utc_offset_s = o.utc_offset_s;
        ret->top_n = o.top_n;
        ret->savings_markdown = o.savings_markdown;
        ret->savings_json = o.savings_json;
        ret->chargeback = o.chargeback;
        return 0;
}

int gc_publish_render(const gc_ledger *l, const gc_publish_opts *opts, const gc_publish_period *p,
                      int64_t now, const char *team, const char *const *notes, size_t n_notes,
                      gc_publish_report *ret)
{
        const char **all = NULL;
        char cut_note[GC_PUB__NOTE_LEN];
        gc_publish_opts o;
        gc_period_report rep;
        gc_buf json, md;
        int r = -E2BIG;

        if (!ret || (n_notes && !notes) || (team && !*team) || gc_pub__opts(opts, &o) < 0 ||
            gc_publish_report_init(l, opts, p, now, &rep) < 0)
                return -EINVAL;
        all = calloc(n_notes + 1, sizeof(*all));
        if (!all)
                return -ENOMEM;
        for (size_t i = 0; i < n_notes; i++)
                all[i] = notes[i];
        gc_buf_init(&json, o.max_bytes);
        gc_buf_init(&md, o.max_bytes);
        rep.team = team;
        rep.extra_notes = all;
        for (size_t k = 0; k < sizeof(gc_pub__levels) / sizeof(gc_pub__levels[0]); k++) {
                size_t rows = gc_pub__levels[k];

                rep.max_rows = rows;
                rep.top_n = rows && rows < o.top_n ? rows : o.top_n;
                rep.n_extra_notes = n_notes;
                if (rows) {
                        snprintf(cut_note, sizeof(cut_note),
                                 "Cut to fit a ConfigMap (%zu KiB for report.json and report.md "
                                 "together): at most %zu rows per table and the top %zu pods "
                                 "and workloads are listed.",
                                 o.max_bytes / 1024, rows, rep.top_n);
                        all[n_notes] = cut_note;
                        rep.n_extra_notes = n_notes + 1;
                }
                gc_buf_reset(&json);
                gc_buf_reset(&md);
                json.limit = o.max_bytes;
                r = gc_report_period_json(&rep, &json);
                if (r == 0) {
                        md.limit = o.max_bytes - json.len;
                        r = gc_report_period_markdown(&rep, &md);
                }
                if (r != -E2BIG)
                        break;
        }
        if (r == 0) {
                ret->json = json;
                ret->md = md;
                ret->rows_cut = rep.max_rows;
                ret->top_n = rep.top_n;
        } else {
                gc_buf_free(&json);
                gc_buf_free(&md);
        }
        free(all);
        return r;
}

void gc_publish_report_release(gc_publish_report *r)
{
        if (!r)
                return;
        gc_buf_free(&r->json);
        gc_buf_free(&r->md);
        r->rows_cut = 0;
        r->top_n = 0;
}

void gc_publish_labels(gc_publish_kind kind, gc_publish_label ret[GC_PUBLISH_N_LABELS])
{
        ret[0].key = "app.kubernetes.io/name";
        ret[0].value = "gpu-cost";
        ret[1].key = "gpu-cost.io/kind";
        ret[1].value = "report";
        ret[2].key = "gpu-cost.io/period";
        ret[2].value = gc_pub__kind_name(kind);
}

/* ---- names and expiry -------------------------------------------------------------------------
 */

/* n decimal digits at s, or -1. */
static int64_t gc_pub__digits(const char *s, size_t n)
{
        int64_t v = 0;

        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -1;
                v = v * 10 + (s[i] - '0');
        }
        return v;
}

int gc_publish_name_parse(const char *name, int64_t utc_offset_s, gc_publish_kind *ret_kind,
                          int64_t *ret_start)
{
        gc_tz *z = NULL;
        int r;

        if (!name || utc_offset_s < -GC_PUB__MAX_OFFSET || utc_offset_s > GC_PUB__MAX_OFFSET ||
            utc_offset_s % 60 != 0)
                return -EINVAL;
        r = gc_tz_fixed((int32_t)utc_offset_s, &z);
        if (r == 0)
                r = gc_publish_name_parse_tz(name, z, ret_kind, ret_start);
        gc_tz_free(z);
        return r;
}

/* "YYYY-MM-DD" (or "YYYY-MM" when !with_day) at s as a valid date: its day number, or -1. */
static int64_t gc_pub__parse_date(const char *s, int with_day)
{
        int64_t y = gc_pub__digits(s, 4), m = gc_pub__digits(s + 5, 2);
        int64_t d = with_day ? gc_pub__digits(s + 8, 2) : 1, days, yy;
        unsigned mm, dd;

        if (s[4] != '-' || (with_day && s[7] != '-') || y < 1970 || m < 1 || m > 12 || d < 1 ||
            d > 31)
                return -1;
        days = gc_days_from_civil(y, (unsigned)m, (unsigned)d);
        /* 2026-02-30 is not a day: it must come back as written. */
        gc_civil_from_days(days, &yy, &mm, &dd);
        return yy == y && mm == m && dd == d ? days : -1;
}

int gc_publish_name_parse_tz(const char *name, const gc_tz *tz, gc_publish_kind *ret_kind,
                             int64_t *ret_start)
{
        static const char daily[] = GC_PUBLISH_PREFIX "daily-";
        static const char weekly[] = GC_PUBLISH_PREFIX "weekly-";
        static const char monthly[] = GC_PUBLISH_PREFIX "monthly-";
        size_t nd = sizeof(daily) - 1, nw = sizeof(weekly) - 1, nm = sizeof(monthly) - 1;
        int64_t days;
        gc_publish_kind kind;

        if (!name)
                return -EINVAL;
        if (strncmp(name, daily, nd) == 0 && strlen(name) == nd + 10) {
                days = gc_pub__parse_date(name + nd, 1);
                kind = GC_PUBLISH_DAILY;
        } else if (strncmp(name, monthly, nm) == 0 && strlen(name) == nm + 7) {
                days = gc_pub__parse_date(name + nm, 0);
                kind = GC_PUBLISH_MONTHLY;
        } else if (strncmp(name, weekly, nw) == 0 && strlen(name) == nw + 8 &&
                   name[nw + 4] == '-' && name[nw + 5] == 'w') {
                int64_t y = gc_pub__digits(name + nw, 4), w = gc_pub__digits(name + nw + 6, 2);
                int64_t jan4;
                int iy, iw;

                if (y < 1970 || w < 1 || w > 53)
                        return -ENOENT;
                /* Week 1 is the one holding 4 January. */
                jan4 = gc_days_from_civil(y, 1, 4);
                days = jan4 - gc_weekday(jan4) + 7 * (w - 1);
                gc_iso_week(days * GC_PUB__DAY, &iy, &iw, NULL);
                if (iy != y || iw != w) /* a week 53 the year does not have */
                        return -ENOENT;
                kind = GC_PUBLISH_WEEKLY;
        } else {
                return -ENOENT;
        }
        if (days < 0)
                return -ENOENT;
        if (ret_kind)
                *ret_kind = kind;
        if (ret_start)
                *ret_start = gc_tz_day_start(tz, days);
        return 0;
}

int gc_publish_expired(const gc_publish_opts *opts, int64_t now, const char *const *names, size_t n,
                       const char ***ret, size_t *ret_n)
{
        gc_publish_opts o;
        int64_t oldest[3];
        const char **out;
        gc_tz *own = NULL;
        const gc_tz *tz;
        size_t k = 0;
        int r;

        if (!ret || !ret_n || (n && !names) || gc_pub__opts(opts, &o) < 0 ||
            !gc_pub__valid_now(now))
                return -EINVAL;
        r = gc_pub__zone(&o, &own, &tz);
        if (r < 0)
                return r;
        for (int kind = GC_PUBLISH_DAILY; kind <= GC_PUBLISH_MONTHLY; kind++)
                oldest[kind] =
                    gc_tz_period_add(tz, gc_pub__unit((gc_publish_kind)kind), now,
                                     -(gc_pub__retention(&o, (gc_publish_kind)kind) - 1));
        out = calloc(n + 1, sizeof(*out));
        if (!out) {
                gc_tz_free(own);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                gc_publish_kind kind;
                int64_t start;

                if (!names[i] || gc_publish_name_parse_tz(names[i], tz, &kind, &start) < 0)
                        continue;
                if (start < oldest[kind])
                        out[k++] = names[i];
        }
        gc_tz_free(own);
        *ret = out;
        *ret_n = k;
        return 0;
}
