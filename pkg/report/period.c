/* report periods: the daily, weekly and monthly spend report (Markdown and JSON). */
#include "report.h"
#include "report_internal.h"

#include "../tz/tz.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GC_REPORT__DAY        86400
#define GC_REPORT__MAX_DAYS   366 /* one query per day; a longer period is a different report */
#define GC_REPORT__TOP_N      10
#define GC_REPORT__BAR_WIDTH  20
#define GC_REPORT__TITLE_MAX  512
#define GC_REPORT__SPAN_LEN   (2 * GC_REPORT__TEXT_LEN + 8)
#define GC_REPORT__MAX_OFFSET (18 * 3600) /* a UTC offset, either way */

static const char gc_report__forecast_method[] =
    "Forecast: the spend so far, plus the period's average cost per hour so far (its trend "
    "over the elapsed days, running pods included up to the report time) times the hours still "
    "to come. It assumes the rest of the period is like its part so far; it does not know about "
    "pods yet to start or stop.";

static const char gc_report__method[] =
    "How these figures are computed: GPU time is exact to the second, from the moment each pod "
    "was bound to its node until its containers finished or it was deleted (running pods up to "
    "the report time); a MIG slice counts as its share of the parent GPU and a time-sliced or "
    "MPS share as 1/replicas of a GPU; each GPU-hour is priced from the price catalog by GPU "
    "model and capacity type; idle is each node's allocatable GPUs minus those held, at the "
    "node's price. Money is shown to the cent and hours to 2 decimals, rounded so that the "
    "rows of each table add up to its total; report.json keeps full precision.";

/* ---- ISO weeks and dates -------------------------------------------------------------------- */

void gc_iso_week(int64_t t, int *ret_year, int *ret_week, int64_t *ret_monday)
{
        int64_t days = gc_floor_div(t, GC_REPORT__DAY);
        int64_t monday = days - gc_weekday(days);
        int64_t thursday = monday + 3, y;
        unsigned m, d;

        /* The ISO year is the year of the week's Thursday, and week 1 holds its first Thursday. */
        gc_civil_from_days(thursday, &y, &m, &d);
        if (ret_year)
                *ret_year = (int)y;
        if (ret_week)
                *ret_week = (int)((thursday - gc_days_from_civil(y, 1, 1)) / 7 + 1);
        if (ret_monday)
                *ret_monday = monday * GC_REPORT__DAY;
}

/* "Mon 2026-11-16" for the local day holding t. */
static void gc_report__day_label(int64_t t, const gc_tz *tz, char out[GC_REPORT__TEXT_LEN])
{
        static const char *const names[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
        char date[16];
        int wd;

        gc_tz_date(tz, t, date, &wd);
        snprintf(out, GC_REPORT__TEXT_LEN, "%s %s", names[wd], date);
}

static void gc_report__date(int64_t t, const gc_tz *tz, char out[GC_REPORT__TEXT_LEN])
{
        char date[16];

        gc_tz_date(tz, t, date, NULL);
        snprintf(out, GC_REPORT__TEXT_LEN, "%s", date);
}

/* "Mon 2026-11-16 – Sun 2026-11-22" for [start, end), or one day. */
static void gc_report__span(int64_t start, int64_t end, const gc_tz *tz,
                            char out[GC_REPORT__SPAN_LEN])
{
        char a[GC_REPORT__TEXT_LEN], b[GC_REPORT__TEXT_LEN];

        gc_report__day_label(start, tz, a);
        gc_report__day_label(end - 1, tz, b);
        if (strcmp(a, b) == 0)
                snprintf(out, GC_REPORT__SPAN_LEN, "%s", a);
        else
                snprintf(out, GC_REPORT__SPAN_LEN, "%s \u2013 %s", a, b);
}

/* ---- the figures ---------------------------------------------------------------------------- */

#define GC_REPORT__OWN_NOTES 4
#define GC_REPORT__NOTE_LEN  640

/* A table's rows as shown: the first n, then (when n_more > 0) rows[n] sums the n_more left out. */
typedef struct gc_report__shown {
        const gc_cost_row *rows;
        size_t n, n_more;
        gc_cost_row *own; /* rows when cut: a copy of the first n and the summed rest */
        char label[48];   /* the summed row's key */
} gc_report__shown;

typedef struct gc_report__period {
        const gc_period_report *r;
        const char *currency;
        const char *kind;
        const char *title; /* the caller's, or title_buf */
        char title_buf[GC_REPORT__TITLE_MAX];
        char iso_week[16];
        char month[16]; /* "2026-11", the local month the period starts in */
        int64_t prev_start;
        gc_cost_summary tp;    /* by team, project: the headline and the JSON summary */
        gc_cost_summary team;  /* by team */
        gc_cost_summary model; /* by model, capacity type */
        gc_cost_summary prev;  /* the previous period, totals only */
        gc_cost_summary ns;    /* by namespace, team, project: where unattributed spend is */
        gc_cost_summary pods;  /* by namespace, pod, team, project, model */
        gc_cost_summary wl;    /* by workload, team, project */
        gc_cost_row *days;     /* one per day; keys unused */
        int64_t *day_start, *day_end;
        size_t n_days;
        gc_cost_row *idle; /* copies of tp's idle nodes that have anything idle */
        size_t n_idle;
        gc_cost_row *unattr; /* per namespace, keys[NAMESPACE] */
        size_t n_unattr;
        const gc_cost_row **top; /* into pods.rows */
        size_t n_top;
        gc_cost_row folded;   /* pod-less rows (folded history) of the pods query */
        gc_cost_row *wl_rows; /* wl's rows that name their workload, by cost */
        size_t n_wl;
        gc_cost_row wl_named;  /* their sum: the workload table's total */
        gc_cost_row wl_folded; /* workload-less rows (folded history) of the workload query */
        gc_label_keys lk;      /* the label keys the ledger keeps as dimensions */
        gc_cost_summary lab[GC_LABEL_DIMS]; /* by each of them */
        int has_prev;
        const gc_tz *tz;       /* the caller's zone, or own_tz */
        gc_tz *own_tz;         /* the fixed offset utc_offset_s, when no zone is given */
        const gc_budget **bud; /* the budgets shown, and their standing */
        gc_budget_status *bud_st;
        size_t n_bud;
        int has_forecast;
        gc_cost_row forecast; /* the period's figures extended to its end (partial periods) */
        int64_t up_to; /* where running pods' figures stop: min(now, end), end when now = 0 */
        int partial;   /* the period is not over at now */
        /* The tables as shown, cut to max_rows with the rest summed in a last row. */
        gc_report__shown sh_team, sh_tp, sh_model, sh_idle, sh_unattr;
        gc_report__shown sh_nodes; /* the summary's idle.nodes (every node with capacity) */
        gc_report__shown sh_wl;    /* the workloads: top_n (or max_rows when fewer) */
        gc_report__shown sh_lab[GC_LABEL_DIMS]; /* each label's values, cut as every table */
        size_t cut_to;                          /* max_rows when any table was cut, else 0 */
        char own_notes[GC_REPORT__OWN_NOTES][GC_REPORT__NOTE_LEN]; /* the report's own notes */
        size_t n_own;
        double *cb_ratio; /* per p->team row, when chargeback applies; else NULL */
        double cb_pool;
        /* The spend by team in the usage basis (docs/ledger.md); has_use when any of the
         * period's figures rest on measured use of a shared GPU. */
        gc_cost_summary use_team;
        int has_use;
} gc_report__period;

/* The spend by team the chargeback bills by: the configured basis's. */
static const gc_cost_summary *gc_report__cb_sum(const gc_report__period *p)
{
        return p->r->chargeback && p->r->chargeback->basis == GC_BASIS_USAGE ? &p->use_team
                                                                             : &p->team;
}

static void gc_report__period_free(gc_report__period *p)
{
        gc_cost_summary_free(&p->tp);
        gc_cost_summary_free(&p->team);
        gc_cost_summary_free(&p->use_team);
        gc_cost_summary_free(&p->model);
        gc_cost_summary_free(&p->prev);
        gc_cost_summary_free(&p->ns);
        gc_cost_summary_free(&p->pods);
        gc_cost_summary_free(&p->wl);
        for (size_t i = 0; i < GC_LABEL_DIMS; i++) {
                gc_cost_summary_free(&p->lab[i]);
                free(p->sh_lab[i].own);
        }
        free(p->wl_rows);
        free(p->sh_wl.own);
        free(p->days);
        free(p->day_start);
        free(p->idle);
        free(p->unattr);
        free(p->top);
        free(p->sh_team.own);
        free(p->sh_tp.own);
        free(p->sh_model.own);
        free(p->sh_idle.own);
        free(p->sh_unattr.own);
        free(p->sh_nodes.own);
        free(p->cb_ratio);
        gc_tz_free(p->own_tz);
        free(p->bud);
        free(p->bud_st);
}

static int gc_report__query_basis(const gc_report__period *p, int64_t start, int64_t end,
                                  const gc_dim *by, size_t n_by, gc_basis basis,
                                  gc_cost_summary *ret)
{
        gc_query q;

        memset(&q, 0, sizeof(q));
        q.basis = basis;
        q.start = start;
        q.end = end;
        q.now = p->r->now;
        q.filter[GC_DIM_TEAM] = p->r->team;
        for (size_t i = 0; i < n_by; i++)
                q.by[i] = by[i];
        q.n_by = n_by;
        return gc_ledger_query(p->r->ledger, &q, ret);
}

static int gc_report__query(const gc_report__period *p, int64_t start, int64_t end,
                            const gc_dim *by, size_t n_by, gc_cost_summary *ret)
{
        return gc_report__query_basis(p, start, end, by, n_by, GC_BASIS_ALLOCATION, ret);
}

static const char *gc_report__key(const gc_cost_row *row, gc_dim d)
{
        return row->keys[d] ? row->keys[d] : "";
}

static int gc_report__is_unattributed(const gc_cost_row *row)
{
        return strcmp(gc_report__key(row, GC_DIM_TEAM), GC_UNATTRIBUTED) == 0 ||
               strcmp(gc_report__key(row, GC_DIM_PROJECT), GC_UNATTRIBUTED) == 0;
}

static int gc_report__by_namespace(const void *a, const void *b)
{
        return strcmp(gc_report__key(a, GC_DIM_NAMESPACE), gc_report__key(b, GC_DIM_NAMESPACE));
}

/* The ledger's order: cost, then GPU-seconds, descending; then the namespace. */
static int gc_report__by_cost(const void *a, const void *b)
{
        const gc_cost_row *x = a, *y = b;

        if (x->cost != y->cost)
                return x->cost > y->cost ? -1 : 1;
        if (x->gpu_seconds != y->gpu_seconds)
                return x->gpu_seconds > y->gpu_seconds ? -1 : 1;
        return gc_report__by_namespace(a, b);
}

static void gc_report__add(gc_cost_row *to, const gc_cost_row *from)
{
        to->gpu_seconds += from->gpu_seconds;
        to->cost += from->cost;
        to->pods += from->pods;
        to->estimates += from->estimates;
}

/* Unattributed spend per namespace, from the (namespace, team, project) rows. */
static int gc_report__collect_unattributed(gc_report__period *p)
{
        size_t n = 0, k = 0;

        for (size_t i = 0; i < p->ns.n_rows; i++)
                n += gc_report__is_unattributed(&p->ns.rows[i]);
        if (n == 0)
                return 0;
        p->unattr = calloc(n, sizeof(*p->unattr));
        if (!p->unattr)
                return -ENOMEM;
        for (size_t i = 0; i < p->ns.n_rows; i++) {
                if (!gc_report__is_unattributed(&p->ns.rows[i]))
                        continue;
                memset(&p->unattr[k], 0, sizeof(p->unattr[k]));
                p->unattr[k].keys[GC_DIM_NAMESPACE] = p->ns.rows[i].keys[GC_DIM_NAMESPACE];
                gc_report__add(&p->unattr[k], &p->ns.rows[i]);
                k++;
        }
        qsort(p->unattr, n, sizeof(*p->unattr), gc_report__by_namespace);
        k = 0;
        for (size_t i = 1; i < n; i++) {
                if (gc_report__by_namespace(&p->unattr[k], &p->unattr[i]) == 0)
                        gc_report__add(&p->unattr[k], &p->unattr[i]);
                else
                        p->unattr[++k] = p->unattr[i];
        }
        p->n_unattr = k + 1;
        qsort(p->unattr, p->n_unattr, sizeof(*p->unattr), gc_report__by_cost);
        return 0;
}

static int gc_report__collect_days(gc_report__period *p)
{
        const gc_period_report *r = p->r;
        int64_t first = gc_tz_day_of(p->tz, r->start);
        int64_t last = gc_tz_day_of(p->tz, r->end - 1);
        int ret = 0;

        p->n_days = (size_t)(last - first + 1);
        p->days = calloc(p->n_days, sizeof(*p->days));
        p->day_start = calloc(2 * p->n_days, sizeof(int64_t));
        if (!p->days || !p->day_start)
                return -ENOMEM;
        p->day_end = p->day_start + p->n_days;
        for (size_t i = 0; i < p->n_days && ret == 0; i++) {
                gc_cost_summary s;
                /* Local days: 23 or 25 hours when the clocks change. */
                int64_t ds = gc_tz_day_start(p->tz, first + (int64_t)i);
                int64_t de = gc_tz_day_start(p->tz, first + (int64_t)i + 1);

                memset(&s, 0, sizeof(s));
                p->day_start[i] = ds < r->start ? r->start : ds;
                p->day_end[i] = de > r->end ? r->end : de;
                ret = gc_report__query(p, p->day_start[i], p->day_end[i], NULL, 0, &s);
                if (ret == 0)
                        gc_report__add(&p->days[i], &s.total);
                gc_cost_summary_free(&s);
        }
        return ret;
}

/* A row of hours folded into the hourly history, which no longer names its pods. */
static int gc_report__is_folded(const gc_cost_row *row)
{
        const char *pod = gc_report__key(row, GC_DIM_POD);

        return *pod == '\0' || strcmp(pod, GC_FOLDED_POD) == 0;
}

static int gc_report__collect_pods(gc_report__period *p)
{
        size_t top_n = p->r->top_n ? p->r->top_n : GC_REPORT__TOP_N;

        p->top = calloc(top_n < p->pods.n_rows ? top_n : p->pods.n_rows + 1,
                        sizeof(const gc_cost_row *));
        if (!p->top)
                return -ENOMEM;
        /* Folded hours no longer know their pods; they are counted, not listed. */
        for (size_t i = 0; i < p->pods.n_rows; i++) {
                const gc_cost_row *row = &p->pods.rows[i];

                if (gc_report__is_folded(row))
                        gc_report__add(&p->folded, row);
                else if (p->n_top < top_n)
                        p->top[p->n_top++] = row;
        }
        return 0;
}

/* Workloads by cost; folded hours no longer know their workloads: counted, not listed. */
static int gc_report__collect_workloads(gc_report__period *p)
{
        p->wl_rows = calloc(p->wl.n_rows + 1, sizeof(*p->wl_rows));
        if (!p->wl_rows)
                return -ENOMEM;
        for (size_t i = 0; i < p->wl.n_rows; i++) {
                const gc_cost_row *row = &p->wl.rows[i];

                if (strcmp(gc_report__key(row, GC_DIM_WORKLOAD), GC_FOLDED_POD) == 0) {
                        gc_report__add(&p->wl_folded, row);
                } else {
                        p->wl_rows[p->n_wl++] = *row;
                        gc_report__add(&p->wl_named, row);
                }
        }
        return 0;
}

static int gc_report__collect_idle(gc_report__period *p)
{
        p->idle = calloc(p->tp.n_idle_nodes + 1, sizeof(*p->idle));
        if (!p->idle)
                return -ENOMEM;
        /* Idle GPUs belong to the whole cluster: a team's report leaves them out. */
        if (p->r->team)
                return 0;
        for (size_t i = 0; i < p->tp.n_idle_nodes; i++) {
                const gc_cost_row *row = &p->tp.idle_nodes[i];

                if (row->gpu_seconds != 0 || row->cost != 0)
                        p->idle[p->n_idle++] = *row;
        }
        return 0;
}

static void gc_report__make_title(gc_report__period *p)
{
        const gc_period_report *r = p->r;
        static const char *const months[] = {"January",   "February", "March",    "April",
                                             "May",       "June",     "July",     "August",
                                             "September", "October",  "November", "December"};
        char span[GC_REPORT__SPAN_LEN], date[16];
        int year, week;
        const char *zone = gc_tz_name(p->tz);
        char who[GC_REPORT__TITLE_MAX / 2];

        gc_iso_week(gc_tz_day_of(p->tz, r->start) * GC_REPORT__DAY, &year, &week, NULL);
        snprintf(p->iso_week, sizeof(p->iso_week), "%04d-W%02d", year, week);
        gc_tz_date(p->tz, r->start, date, NULL);
        snprintf(p->month, sizeof(p->month), "%.7s", date);
        p->title = r->title;
        if (p->title)
                return;
        gc_report__span(r->start, r->end, p->tz, span);
        who[0] = '\0';
        if (r->team)
                snprintf(who, sizeof(who), " of team %.200s", r->team);
        if (strcmp(p->kind, "weekly") == 0)
                snprintf(p->title_buf, sizeof(p->title_buf), "GPU spend%s, week %s (%s, %s)", who,
                         p->iso_week, span, zone);
        else if (strcmp(p->kind, "monthly") == 0)
                snprintf(p->title_buf, sizeof(p->title_buf), "GPU spend%s, %s %.4s (%s)", who,
                         months[(date[5] - '0') * 10 + (date[6] - '0') - 1], date, zone);
        else
                snprintf(p->title_buf, sizeof(p->title_buf), "GPU spend%s, %s (%s)", who, span,
                         zone);
        p->title = p->title_buf;
}

/* Shows at most max of a table's rows (0: all); the rest are summed into one last row. */
static int gc_report__cut_at(const gc_cost_row *rows, size_t n, gc_dim label_dim, size_t max,
                             gc_report__shown *ret)
{
        ret->rows = rows;
        ret->n = n;
        if (max == 0 || n <= max)
                return 0;
        ret->own = calloc(max + 1, sizeof(*ret->own));
        if (!ret->own)
                return -ENOMEM;
        memcpy(ret->own, rows, max * sizeof(*rows));
        for (size_t i = max; i < n; i++)
                gc_report__add(&ret->own[max], &rows[i]);
        ret->n_more = n - max;
        snprintf(ret->label, sizeof(ret->label), "(%zu more rows)", ret->n_more);
        /* The summed row names no group: blank cells, not "(none)", beside its label. */
        for (size_t d = 0; d < GC_DIM_COUNT; d++)
                ret->own[max].keys[d] = " ";
        ret->own[max].keys[label_dim] = ret->label;
        ret->rows = ret->own;
        ret->n = max;
        return 0;
}

/* Shows at most max_rows of a table's rows; the rest are summed into one last row. */
static int gc_report__cut(gc_report__period *p, const gc_cost_row *rows, size_t n, gc_dim label_dim,
                          gc_report__shown *ret)
{
        int r = gc_report__cut_at(rows, n, label_dim, p->r->max_rows, ret);

        if (r == 0 && ret->n_more)
                p->cut_to = p->r->max_rows;
        return r;
}

/* The workloads: the top_n dearest (as the pods), or max_rows when that is fewer. */
static int gc_report__cut_workloads(gc_report__period *p)
{
        size_t max = p->r->top_n ? p->r->top_n : GC_REPORT__TOP_N;

        if (p->r->max_rows && p->r->max_rows <= max)
                return gc_report__cut(p, p->wl_rows, p->n_wl, GC_DIM_WORKLOAD, &p->sh_wl);
        return gc_report__cut_at(p->wl_rows, p->n_wl, GC_DIM_WORKLOAD, max, &p->sh_wl);
}

static void gc_report__own_note(gc_report__period *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void gc_report__own_note(gc_report__period *p, const char *fmt, ...)
{
        va_list ap;

        if (p->n_own >= GC_REPORT__OWN_NOTES)
                return;
        va_start(ap, fmt);
        vsnprintf(p->own_notes[p->n_own++], GC_REPORT__NOTE_LEN, fmt, ap);
        va_end(ap);
}

/* What the report itself has to say about how it was made: in Markdown and JSON alike. */
static void gc_report__own_notes(gc_report__period *p)
{
        const gc_period_report *r = p->r;
        gc_ledger_stats st;
        int64_t g = gc_ledger_granularity(r->ledger);

        if (p->cut_to)
                gc_report__own_note(p,
                                    "Tables are cut to their first %zu row%s by cost; the rows "
                                    "left out of each are summed in its last row, so every "
                                    "total is complete.",
                                    p->cut_to, p->cut_to == 1 ? "" : "s");
        if (r->team)
                gc_report__own_note(p, "This report covers the spend of one team. Idle GPUs and "
                                       "capacity belong to the whole cluster and are left out.");
        /* Folded history counts whole buckets only: an edge inside one leaves it out. */
        gc_ledger_stats_get(r->ledger, &st);
        if ((r->start % g != 0 || r->end % g != 0) && st.horizon != INT64_MIN &&
            st.horizon > r->start)
                gc_report__own_note(p,
                                    "Days start at 00:00 %s, inside a %lld-minute bucket of the "
                                    "history already folded, which is counted by whole buckets: "
                                    "the bucket cut by this period's start and the one cut by "
                                    "its end are left out of it.",
                                    gc_tz_name(p->tz), (long long)(g / 60));
}

/* The calendar unit of a report kind, or -1 for a period of any length. */
static int gc_report__unit(const char *kind)
{
        if (strcmp(kind, "daily") == 0)
                return GC_TZ_DAY;
        if (strcmp(kind, "weekly") == 0)
                return GC_TZ_WEEK;
        if (strcmp(kind, "monthly") == 0)
                return GC_TZ_MONTH;
        return -1;
}

/*
 * The previous period: the calendar day, week or month before when the period is one (a month
 * before November is October's 31 days, a day after a 25-hour day 24 hours), else as long.
 */
static int64_t gc_report__prev_start(const gc_report__period *p)
{
        const gc_period_report *r = p->r;
        int u = gc_report__unit(p->kind);

        if (u >= 0 && gc_tz_period_start(p->tz, (gc_tz_unit)u, r->start) == r->start &&
            gc_tz_period_add(p->tz, (gc_tz_unit)u, r->start, 1) == r->end)
                return gc_tz_period_add(p->tz, (gc_tz_unit)u, r->start, -1);
        return r->start - (r->end - r->start);
}

/*
 * The forecast of a period not over: its figures so far, plus the average rate of its elapsed
 * time (the trend of its days so far) for the time still to come.
 */
static void gc_report__forecast(gc_report__period *p)
{
        const gc_period_report *r = p->r;
        double elapsed = (double)(p->up_to - r->start), rest = (double)(r->end - p->up_to);

        if (!p->partial || elapsed <= 0)
                return;
        p->has_forecast = 1;
        p->forecast = p->tp.total;
        p->forecast.gpu_seconds += p->tp.total.gpu_seconds / elapsed * rest;
        p->forecast.cost += p->tp.total.cost / elapsed * rest;
}

/*
 * The budgets of the report's kind (a team's copy: its own), with their standing. A daily
 * report shows every budget, weekly and monthly, over the budget's week or month holding the
 * day, spent up to the day's end: where the team stood that evening.
 */
static int gc_report__collect_budgets(gc_report__period *p)
{
        const gc_period_report *r = p->r;
        gc_budget_period want;
        int daily = 0, ret = 0;

        if (strcmp(p->kind, "monthly") == 0)
                want = GC_BUDGET_MONTHLY;
        else if (strcmp(p->kind, "weekly") == 0)
                want = GC_BUDGET_WEEKLY;
        else if (strcmp(p->kind, "daily") == 0)
                daily = 1, want = GC_BUDGET_WEEKLY;
        else
                return 0;
        p->bud = calloc(r->n_budgets + 1, sizeof(const gc_budget *));
        p->bud_st = calloc(r->n_budgets + 1, sizeof(*p->bud_st));
        if (!p->bud || !p->bud_st)
                return -ENOMEM;
        for (size_t i = 0; ret == 0 && i < r->n_budgets; i++) {
                const gc_budget *b = &r->budgets[i];

                int64_t start = r->start, end = r->end;

                if ((!daily && b->period != want) ||
                    (r->team && (b->dim != GC_DIM_TEAM || strcmp(b->name, r->team) != 0)))
                        continue;
                if (daily) {
                        gc_tz_unit u = b->period == GC_BUDGET_WEEKLY ? GC_TZ_WEEK : GC_TZ_MONTH;

                        start = gc_tz_period_start(p->tz, u, r->start);
                        end = gc_tz_period_add(p->tz, u, r->start, 1);
                }
                ret = gc_budget_eval(r->ledger, b, start, end, p->up_to, r->budget_warn_share,
                                     &p->bud_st[p->n_bud]);
                if (ret == 0)
                        p->bud[p->n_bud++] = b;
        }
        return ret;
}

static int gc_report__collect(const gc_period_report *r, gc_report__period *p)
{
        static const gc_dim tp[] = {GC_DIM_TEAM, GC_DIM_PROJECT};
        static const gc_dim team[] = {GC_DIM_TEAM};
        static const gc_dim model[] = {GC_DIM_MODEL, GC_DIM_CAPACITY_TYPE};
        static const gc_dim ns[] = {GC_DIM_NAMESPACE, GC_DIM_TEAM, GC_DIM_PROJECT};
        static const gc_dim pods[] = {GC_DIM_NAMESPACE, GC_DIM_POD, GC_DIM_TEAM, GC_DIM_PROJECT,
                                      GC_DIM_MODEL};
        static const gc_dim wl[] = {GC_DIM_WORKLOAD, GC_DIM_TEAM, GC_DIM_PROJECT};
        int64_t len;
        int ret;

        memset(p, 0, sizeof(*p));
        if (!r->ledger || r->end <= r->start || (r->n_extra_notes && !r->extra_notes) ||
            (r->n_budgets && !r->budgets))
                return -EINVAL;
        if (r->utc_offset_s < -GC_REPORT__MAX_OFFSET || r->utc_offset_s > GC_REPORT__MAX_OFFSET ||
            r->utc_offset_s % 60 != 0 || (r->team && !*r->team))
                return -EINVAL;
        /* The previous period starts len before start; neither may leave int64_t. */
        if (r->start < INT64_MIN / 2 || r->end > INT64_MAX / 2)
                return -ERANGE;
        len = r->end - r->start;
        if (len > (int64_t)GC_REPORT__MAX_DAYS * GC_REPORT__DAY)
                return -ERANGE;
        p->r = r;
        p->currency = r->currency && *r->currency ? r->currency : "USD";
        p->kind = r->kind && *r->kind ? r->kind : "weekly";
        p->tz = r->tz;
        if (!p->tz) {
                ret = gc_tz_fixed((int32_t)r->utc_offset_s, &p->own_tz);
                if (ret < 0)
                        return ret;
                p->tz = p->own_tz;
        }
        p->prev_start = gc_report__prev_start(p);
        p->up_to = r->now && r->now < r->end ? (r->now > r->start ? r->now : r->start) : r->end;
        p->partial = p->up_to < r->end;
        gc_report__make_title(p);

        ret = gc_report__query(p, r->start, r->end, tp, 2, &p->tp);
        if (ret == 0)
                ret = gc_report__query(p, r->start, r->end, team, 1, &p->team);
        if (ret == 0)
                ret = gc_report__query_basis(p, r->start, r->end, team, 1, GC_BASIS_USAGE,
                                             &p->use_team);
        p->has_use = ret == 0 && p->use_team.total.measured_cost > 0;
        if (ret == 0)
                ret = gc_report__query(p, r->start, r->end, model, 2, &p->model);
        if (ret == 0)
                ret = gc_report__query(p, p->prev_start, r->start, NULL, 0, &p->prev);
        if (ret == 0)
                ret = gc_report__query(p, r->start, r->end, ns, 3, &p->ns);
        if (ret == 0)
                ret = gc_report__query(p, r->start, r->end, pods, 5, &p->pods);
        if (ret == 0)
                ret = gc_report__query(p, r->start, r->end, wl, 3, &p->wl);
        gc_ledger_label_keys(r->ledger, &p->lk);
        for (size_t i = 0; ret == 0 && i < p->lk.n; i++) {
                gc_dim d = (gc_dim)(GC_DIM_LABEL + i);

                ret = gc_report__query(p, r->start, r->end, &d, 1, &p->lab[i]);
        }
        if (ret == 0)
                ret = gc_report__collect_days(p);
        if (ret == 0)
                ret = gc_report__collect_unattributed(p);
        if (ret == 0)
                ret = gc_report__collect_pods(p);
        if (ret == 0)
                ret = gc_report__collect_workloads(p);
        if (ret == 0)
                ret = gc_report__collect_idle(p);
        if (ret == 0)
                gc_report__forecast(p);
        if (ret == 0)
                ret = gc_report__collect_budgets(p);
        /* A team's previous period is its own spend; capacity is the cluster's. */
        p->has_prev = p->prev.total.gpu_seconds > 0 || p->prev.total.cost > 0 ||
                      p->prev.total.pods > 0 || (!r->team && p->prev.capacity.gpu_seconds > 0);
        if (ret == 0)
                ret = gc_report__cut(p, p->team.rows, p->team.n_rows, GC_DIM_TEAM, &p->sh_team);
        if (ret == 0)
                ret = gc_report__cut(p, p->tp.rows, p->tp.n_rows, GC_DIM_TEAM, &p->sh_tp);
        if (ret == 0)
                ret = gc_report__cut(p, p->model.rows, p->model.n_rows, GC_DIM_MODEL, &p->sh_model);
        if (ret == 0)
                ret = gc_report__cut(p, p->idle, p->n_idle, GC_DIM_NODE, &p->sh_idle);
        if (ret == 0)
                ret = gc_report__cut(p, p->unattr, p->n_unattr, GC_DIM_NAMESPACE, &p->sh_unattr);
        if (ret == 0)
                ret = gc_report__cut(p, p->tp.idle_nodes, r->team ? 0 : p->tp.n_idle_nodes,
                                     GC_DIM_NODE, &p->sh_nodes);
        if (ret == 0)
                ret = gc_report__cut_workloads(p);
        for (size_t i = 0; ret == 0 && i < p->lk.n; i++)
                ret = gc_report__cut(p, p->lab[i].rows, p->lab[i].n_rows,
                                     (gc_dim)(GC_DIM_LABEL + i), &p->sh_lab[i]);
        if (ret == 0 && !r->team && r->chargeback && r->chargeback->mode != GC_CHARGEBACK_NONE) {
                p->cb_ratio = calloc(gc_report__cb_sum(p)->n_rows + 1, sizeof(*p->cb_ratio));
                ret = p->cb_ratio ? gc_chargeback_ratios(gc_report__cb_sum(p), r->chargeback,
                                                         p->cb_ratio, &p->cb_pool)
                                  : -ENOMEM;
        }
        if (ret == 0)
                gc_report__own_notes(p);
        return ret;
}

/* A team's bill under chargeback: its spend and share, or 0 when its spend was shared out. */
static double gc_report__cb_bill(const gc_report__period *p, size_t i)
{
        const gc_cost_row *row = &gc_report__cb_sum(p)->rows[i];

        if (p->cb_pool > 0 && gc_report__is_unattributed(row))
                return 0;
        return row->cost + p->cb_ratio[i] * p->cb_pool;
}

/* Every team with its spend, share and bill; the bills' total is the capacity's cost. */
static int gc_report__md_chargeback(gc_buf *out, const gc_report__period *p)
{
        const gc_cost_summary *s = gc_report__cb_sum(p);
        size_t n = s->n_rows + 1; /* the teams, and idle when nothing was shared */
        gc_cost_row *share, *bill;
        gc_cost_row share_total = {0}, bill_total = {0};
        gc_report__rounded rc = {0}, rs = {0}, rb = {0};
        gc_report__table t = {0};
        char a[GC_REPORT__TEXT_LEN], b[GC_REPORT__TEXT_LEN], c[GC_REPORT__TEXT_LEN];
        int r;

        if (out->err) /* as gc_report__md_table: no table for a document that failed */
                return out->err;
        share = calloc(n, sizeof(*share));
        bill = calloc(n, sizeof(*bill));
        r = share && bill ? 0 : -ENOMEM;

        /* Each column is rounded so that its cents add up to its total line (as every table). */
        for (size_t i = 0; r == 0 && i < s->n_rows; i++) {
                share[i].cost = p->cb_ratio[i] * p->cb_pool;
                bill[i].cost = gc_report__cb_bill(p, i);
                share_total.cost += share[i].cost;
                bill_total.cost += bill[i].cost;
        }
        if (r == 0 && p->cb_pool <= 0) { /* nothing was shared: idle stays its own line */
                bill[s->n_rows].cost = s->idle.cost;
                bill_total.cost += s->idle.cost;
        }
        if (r == 0)
                r = gc_report__round_rows(s->rows, s->n_rows, &s->total, &rc);
        if (r == 0)
                r = gc_report__round_rows(share, s->n_rows, &share_total, &rs);
        if (r == 0)
                r = gc_report__round_rows(bill, n, &bill_total, &rb);
        if (r == 0)
                r = gc_buf_printf(out,
                                  "\n## Chargeback (%s%s)\n\n"
                                  "Idle GPU capacity and the spend of no team are charged to the "
                                  "teams %s; each bill is the team's spend%s plus its share, and "
                                  "the spend of no team, being in the shares, bills 0.\n\n",
                                  gc_chargeback_mode_name(p->r->chargeback->mode),
                                  p->r->chargeback->basis == GC_BASIS_USAGE ? ", usage basis" : "",
                                  p->r->chargeback->mode == GC_CHARGEBACK_WEIGHTS
                                      ? "by their configured weights"
                                      : "in proportion to their spend",
                                  p->r->chargeback->basis == GC_BASIS_USAGE
                                      ? " (shared GPUs split by measured use, as in the Usage "
                                        "basis section)"
                                      : "");
        if (r == 0)
                r = gc_report__table_init(&t, "lrrr", out->limit);
        if (r == 0)
                r = gc_report__table_cell(&t, "Team");
        if (r == 0)
                r = gc_report__table_cell(&t, "Spend");
        if (r == 0)
                r = gc_report__table_cell(&t, "Share of idle and unattributed");
        if (r == 0)
                r = gc_report__table_cell(&t, "Bill");
        for (size_t i = 0; r == 0 && i < s->n_rows; i++) {
                gc_report__money(rc.cents[i], p->currency, a);
                gc_report__money(rs.cents[i], p->currency, b);
                gc_report__money(rb.cents[i], p->currency, c);
                r = gc_report__table_key(&t, gc_report__key(&s->rows[i], GC_DIM_TEAM), 1);
                if (r == 0)
                        r = gc_report__table_cell(&t, a);
                if (r == 0)
                        r = gc_report__table_cell(&t, b);
                if (r == 0)
                        r = gc_report__table_cell(&t, c);
        }
        if (r == 0 && p->cb_pool <= 0) {
                gc_report__money(rb.cents[s->n_rows], p->currency, c);
                r = gc_report__table_cell(&t, "_Idle capacity (not shared)_");
                if (r == 0)
                        r = gc_report__table_cell(&t, "");
                if (r == 0)
                        r = gc_report__table_cell(&t, "");
                if (r == 0)
                        r = gc_report__table_cell(&t, c);
        }
        gc_report__money(rc.total_cents, p->currency, a);
        gc_report__money(rs.total_cents, p->currency, b);
        gc_report__money(rb.total_cents, p->currency, c);
        if (r == 0)
                r = gc_report__table_cell(&t, "**Total**");
        if (r == 0)
                r = gc_report__table_cellf(&t, "**%s**", a);
        if (r == 0)
                r = gc_report__table_cellf(&t, "**%s**", b);
        if (r == 0)
                r = gc_report__table_cellf(&t, "**%s**", c);
        if (r == 0)
                r = gc_report__table_markdown(&t, out);
        if (r == 0) {
                gc_report__money(gc_report__to_cents(s->capacity.cost), p->currency, a);
                r = gc_buf_printf(out, "\nThe cluster's GPU capacity cost %s.\n", a);
        }
        gc_report__table_free(&t);
        gc_report__rounded_free(&rc);
        gc_report__rounded_free(&rs);
        gc_report__rounded_free(&rb);
        free(share);
        free(bill);
        return r;
}

/* The allocation-basis spend of the team of a usage-basis row (same ledger, same teams). */
static double gc_report__alloc_of(const gc_report__period *p, const gc_cost_row *use)
{
        const char *t = gc_report__key(use, GC_DIM_TEAM);

        for (size_t i = 0; i < p->team.n_rows; i++)
                if (strcmp(gc_report__key(&p->team.rows[i], GC_DIM_TEAM), t) == 0)
                        return p->team.rows[i].cost;
        return 0;
}

/*
 * "Usage basis": each team's spend when shared GPUs are split by measured use, beside its
 * spend by allocation, the difference, and how much measurement decided. Only in a period
 * with measurements; the totals are the same in both bases.
 */
static int gc_report__md_usage(gc_buf *out, const gc_report__period *p)
{
        const gc_cost_summary *s = &p->use_team;
        gc_cost_row *alloc, *diff, *meas, ta = {0}, td = {0}, tm = {0};
        gc_report__rounded ra = {0}, ru = {0}, rd = {0}, rm = {0};
        gc_report__table t = {0};
        char a[GC_REPORT__TEXT_LEN], u[GC_REPORT__TEXT_LEN], d[GC_REPORT__TEXT_LEN],
            m[GC_REPORT__TEXT_LEN];
        int r;

        if (!p->has_use || out->err)
                return out->err;
        alloc = calloc(s->n_rows + 1, sizeof(*alloc));
        diff = calloc(s->n_rows + 1, sizeof(*diff));
        meas = calloc(s->n_rows + 1, sizeof(*meas));
        r = alloc && diff && meas ? 0 : -ENOMEM;
        for (size_t i = 0; r == 0 && i < s->n_rows; i++) {
                alloc[i].cost = gc_report__alloc_of(p, &s->rows[i]);
                diff[i].cost = s->rows[i].cost - alloc[i].cost;
                meas[i].cost = s->rows[i].measured_cost;
                ta.cost += alloc[i].cost;
                td.cost += diff[i].cost;
                tm.cost += meas[i].cost;
        }
        if (r == 0)
                r = gc_report__round_rows(alloc, s->n_rows, &ta, &ra);
        if (r == 0)
                r = gc_report__round_rows(s->rows, s->n_rows, &s->total, &ru);
        if (r == 0)
                r = gc_report__round_rows(meas, s->n_rows, &tm, &rm);
        /* The differences are the rounded columns' differences, so each line reads true. */
        if (r == 0)
                r = gc_report__round_rows(diff, s->n_rows, &td, &rd);
        for (size_t i = 0; r == 0 && i < s->n_rows; i++)
                rd.cents[i] = ru.cents[i] - ra.cents[i];
        if (r == 0)
                rd.total_cents = ru.total_cents - ra.total_cents;
        if (r == 0)
                r = gc_buf_puts(out,
                                "\n## Usage basis\n\n"
                                "Shared GPUs (time-sliced, MPS, HAMi, shared DRA devices) split "
                                "by what each pod was measured to use, instead of what it was "
                                "allocated: the same total, moved between teams. _Measured_ is "
                                "the part of a team's usage-basis spend that measurement "
                                "decided; the rest had no sample and stays as allocated.\n\n");
        if (r == 0)
                r = gc_report__table_init(&t, "lrrrr", out->limit);
        if (r == 0)
                r = gc_report__table_cell(&t, "Team");
        if (r == 0)
                r = gc_report__table_cell(&t, "By allocation");
        if (r == 0)
                r = gc_report__table_cell(&t, "By usage");
        if (r == 0)
                r = gc_report__table_cell(&t, "Difference");
        if (r == 0)
                r = gc_report__table_cell(&t, "Measured");
        for (size_t i = 0; r == 0 && i < s->n_rows; i++) {
                gc_report__money(ra.cents[i], p->currency, a);
                gc_report__money(ru.cents[i], p->currency, u);
                gc_report__money(rd.cents[i] < 0 ? -rd.cents[i] : rd.cents[i], p->currency, d);
                gc_report__money(rm.cents[i], p->currency, m);
                r = gc_report__table_key(&t, gc_report__key(&s->rows[i], GC_DIM_TEAM), 1);
                if (r == 0)
                        r = gc_report__table_cell(&t, a);
                if (r == 0)
                        r = gc_report__table_cell(&t, u);
                if (r == 0)
                        r = gc_report__table_cellf(&t, "%s%s",
                                                   rd.cents[i] > 0   ? "+"
                                                   : rd.cents[i] < 0 ? "-"
                                                                     : "",
                                                   d);
                if (r == 0)
                        r = gc_report__table_cell(&t, m);
        }
        gc_report__money(ra.total_cents, p->currency, a);
        gc_report__money(ru.total_cents, p->currency, u);
        gc_report__money(rm.total_cents, p->currency, m);
        if (r == 0)
                r = gc_report__table_cell(&t, "**Total**");
        if (r == 0)
                r = gc_report__table_cellf(&t, "**%s**", a);
        if (r == 0)
                r = gc_report__table_cellf(&t, "**%s**", u);
        if (r == 0)
                r = gc_report__table_cell(&t, "");
        if (r == 0)
                r = gc_report__table_cellf(&t, "**%s**", m);
        if (r == 0)
                r = gc_report__table_markdown(&t, out);
        gc_report__table_free(&t);
        gc_report__rounded_free(&ra);
        gc_report__rounded_free(&ru);
        gc_report__rounded_free(&rd);
        gc_report__rounded_free(&rm);
        free(alloc);
        free(diff);
        free(meas);
        return r;
}

/* "usage_basis": per team both bases and the measured part; absent without measurements. */
static int gc_report__json_usage(gc_buf *b, const gc_report__period *p)
{
        const gc_cost_summary *s = &p->use_team;

        if (!p->has_use)
                return 0;
        gc_buf_puts(b, ",\"usage_basis\":{\"teams\":[");
        for (size_t i = 0; !b->err && i < s->n_rows; i++) {
                double alloc = gc_report__alloc_of(p, &s->rows[i]);

                gc_buf_puts(b, i ? ",{\"team\":" : "{\"team\":");
                gc_buf_json_str(b, gc_report__key(&s->rows[i], GC_DIM_TEAM));
                gc_report__json_field_money(b, "allocation_cost", alloc);
                gc_report__json_field_money(b, "usage_cost", s->rows[i].cost);
                gc_report__json_field_money(b, "difference", s->rows[i].cost - alloc);
                gc_report__json_field_money(b, "measured_cost", s->rows[i].measured_cost);
                gc_buf_puts(b, "}");
        }
        gc_buf_puts(b, "]");
        gc_report__json_field_money(b, "total_cost", s->total.cost);
        gc_report__json_field_money(b, "measured_cost", s->total.measured_cost);
        gc_buf_puts(b, "}");
        return b->err;
}

static int gc_report__json_chargeback(gc_buf *b, const gc_report__period *p)
{
        const gc_cost_summary *s = gc_report__cb_sum(p);
        double charged = p->cb_pool > 0 ? 0 : s->idle.cost;

        if (!p->cb_ratio)
                return 0; /* no chargeback configured: the report's shape is unchanged */
        gc_buf_puts(b, ",\"chargeback\":{");
        gc_buf_json_str(b, "mode");
        gc_buf_puts(b, ":");
        gc_buf_json_str(b, gc_chargeback_mode_name(p->r->chargeback->mode));
        if (p->r->chargeback->basis == GC_BASIS_USAGE)
                gc_report__json_field_str(b, "basis", gc_basis_name(GC_BASIS_USAGE));
        gc_buf_puts(b, ",\"teams\":[");
        for (size_t i = 0; !b->err && i < s->n_rows; i++) {
                double bill = gc_report__cb_bill(p, i);

                charged += bill;
                gc_buf_puts(b, i ? ",{\"team\":" : "{\"team\":");
                gc_buf_json_str(b, gc_report__key(&s->rows[i], GC_DIM_TEAM));
                gc_report__json_field_money(b, "cost", s->rows[i].cost);
                gc_report__json_field_money(b, "shared", p->cb_ratio[i] * p->cb_pool);
                gc_report__json_field_money(b, "charged", bill);
                gc_buf_puts(b, "}");
        }
        gc_buf_puts(b, "]");
        gc_report__json_field_money(b, "shared", p->cb_pool);
        gc_report__json_field_money(b, "charged", charged);
        gc_report__json_field_money(b, "capacity_cost", s->capacity.cost);
        gc_buf_puts(b, "}");
        return b->err;
}

static const char *gc_report__prev_word(const char *kind)
{
        if (strcmp(kind, "weekly") == 0)
                return "week";
        if (strcmp(kind, "daily") == 0)
                return "day";
        if (strcmp(kind, "monthly") == 0)
                return "month";
        return "period";
}

/* ---- Markdown ------------------------------------------------------------------------------- */

typedef struct gc_report__cols {
        const char *const *heads; /* key headings, then the figure headings follow */
        const gc_dim *dims;
        size_t n_dims;
        int share, pods;
} gc_report__cols;

static int gc_report__md_em(gc_report__table *t, const char *s)
{
        return gc_report__table_cellf(t, "**%s**", s);
}

/* A section's table: key columns, GPU-hours, cost, [share], [pods]; then a bold total row. */
static int gc_report__md_table(gc_buf *out, const gc_report__cols *c, const gc_cost_row *rows,
                               size_t n, const gc_cost_row *total, const char *currency)
{
        gc_report__table t;
        gc_report__rounded rr = {0};
        char align[GC_REPORT__MAX_COLS + 1] = {0};
        char hours[GC_REPORT__TEXT_LEN], money[GC_REPORT__TEXT_LEN], pct[GC_REPORT__TEXT_LEN];
        size_t n_cols = c->n_dims;
        int r;

        /* A table costs and can fail on its own: none is laid out for a document that failed,
         * so the document's error is the one returned. */
        if (out->err)
                return out->err;
        memset(align, 'l', c->n_dims);
        align[n_cols++] = 'r';
        align[n_cols++] = 'r';
        if (c->share)
                align[n_cols++] = 'r';
        if (c->pods)
                align[n_cols++] = 'r';
        r = gc_report__table_init(&t, align, out->limit);
        if (r < 0)
                return r;
        r = gc_report__round_rows(rows, n, total, &rr);
        for (size_t k = 0; r == 0 && k < c->n_dims + 2; k++)
                r = gc_report__table_cell(&t, c->heads[k]);
        if (r == 0 && c->share)
                r = gc_report__table_cell(&t, "Share");
        if (r == 0 && c->pods)
                r = gc_report__table_cell(&t, "Pods");
        for (size_t i = 0; r == 0 && i < n; i++) {
                for (size_t k = 0; r == 0 && k < c->n_dims; k++)
                        r = gc_report__table_key(&t, rows[i].keys[c->dims[k]], 1);
                gc_report__hours(rr.centi_hours[i], hours);
                gc_report__money(rr.cents[i], currency, money);
                if (r == 0)
                        r = gc_report__table_cell(&t, hours);
                if (r == 0)
                        r = gc_report__table_cell(&t, money);
                if (r == 0 && c->share) {
                        pct[0] = '\0';
                        if (rr.share)
                                gc_report__pct(rr.share[i], pct);
                        r = gc_report__table_cell(&t, pct);
                }
                if (r == 0 && c->pods)
                        r = gc_report__table_cellf(&t, "%u", rows[i].pods);
        }
        if (r == 0)
                r = gc_report__md_em(&t, "Total");
        for (size_t k = 1; r == 0 && k < c->n_dims; k++)
                r = gc_report__table_cell(&t, "");
        if (r == 0) {
                gc_report__hours(rr.total_centi_hours, hours);
                gc_report__money(rr.total_cents, currency, money);
                r = gc_report__md_em(&t, hours);
        }
        if (r == 0)
                r = gc_report__md_em(&t, money);
        if (r == 0 && c->share)
                r = rr.share ? gc_report__md_em(&t, "100.0%") : gc_report__table_cell(&t, "");
        if (r == 0 && c->pods)
                r = gc_report__table_cellf(&t, "**%u**", total->pods);
        if (r == 0)
                r = gc_report__table_markdown(&t, out);
        gc_report__rounded_free(&rr);
        gc_report__table_free(&t);
        return r;
}

/* A table as shown: its rows, and the summed rest as one more row when it was cut. */
static int gc_report__md_shown(gc_buf *out, const gc_report__cols *c, const gc_report__shown *sh,
                               const gc_cost_row *total, const char *currency)
{
        return gc_report__md_table(out, c, sh->rows, sh->n + (sh->n_more > 0), total, currency);
}

static int gc_report__md_days(gc_buf *out, const gc_report__period *p)
{
        gc_report__table t;
        gc_report__rounded rr = {0};
        char label[GC_REPORT__TEXT_LEN], hours[GC_REPORT__TEXT_LEN], money[GC_REPORT__TEXT_LEN];
        double max = 0;
        int r;

        if (out->err) /* as gc_report__md_table: no table for a document that failed */
                return out->err;
        r = gc_report__table_init(&t, "lrrl", out->limit);
        if (r < 0)
                return r;
        r = gc_report__round_rows(p->days, p->n_days, &p->tp.total, &rr);
        for (size_t i = 0; i < p->n_days; i++)
                if (isfinite(p->days[i].cost) && p->days[i].cost > max)
                        max = p->days[i].cost;
        if (r == 0)
                r = gc_report__table_cell(&t, "Day");
        if (r == 0)
                r = gc_report__table_cell(&t, "GPU-hours");
        if (r == 0)
                r = gc_report__table_cell(&t, "Cost");
        if (r == 0)
                r = gc_report__table_cell(&t, "");
        for (size_t i = 0; r == 0 && i < p->n_days; i++) {
                char bar[GC_REPORT__BAR_WIDTH * 3 + 4];
                double c = p->days[i].cost;
                long w =
                    max > 0 && isfinite(c) && c > 0 ? lround(c / max * GC_REPORT__BAR_WIDTH) : 0;
                size_t o = 0;

                /* A day that cost something shows at least a sliver. */
                if (w == 0 && max > 0 && c > 0) {
                        memcpy(bar, "\u258f", 3);
                        o = 3;
                }
                for (long k = 0; k < w; k++, o += 3)
                        memcpy(bar + o, "\u2588", 3);
                bar[o] = '\0';
                gc_report__day_label(p->day_start[i], p->tz, label);
                gc_report__hours(rr.centi_hours[i], hours);
                gc_report__money(rr.cents[i], p->currency, money);
                r = gc_report__table_cell(&t, label);
                if (r == 0)
                        r = gc_report__table_cell(&t, hours);
                if (r == 0)
                        r = gc_report__table_cell(&t, money);
                if (r == 0)
                        r = gc_report__table_cell(&t, bar);
        }
        gc_report__hours(rr.total_centi_hours, hours);
        gc_report__money(rr.total_cents, p->currency, money);
        if (r == 0)
                r = gc_report__md_em(&t, "Total");
        if (r == 0)
                r = gc_report__md_em(&t, hours);
        if (r == 0)
                r = gc_report__md_em(&t, money);
        if (r == 0)
                r = gc_report__table_cell(&t, "");
        if (r == 0)
                r = gc_report__table_markdown(&t, out);
        gc_report__rounded_free(&rr);
        gc_report__table_free(&t);
        return r;
}

static int gc_report__md_top(gc_buf *out, const gc_report__period *p)
{
        static const char *const heads[] = {"#",         "Pod",       "Team", "Project",
                                            "GPU model", "GPU-hours", "Cost"};
        gc_report__table t;
        gc_buf name;
        char hours[GC_REPORT__TEXT_LEN], money[GC_REPORT__TEXT_LEN];
        int r;

        if (out->err) /* as gc_report__md_table: no table for a document that failed */
                return out->err;
        r = gc_report__table_init(&t, "rllllrr", out->limit);
        if (r < 0)
                return r;
        gc_buf_init(&name, out->limit);
        for (size_t k = 0; r == 0 && k < sizeof(heads) / sizeof(heads[0]); k++)
                r = gc_report__table_cell(&t, heads[k]);
        for (size_t i = 0; r == 0 && i < p->n_top; i++) {
                const gc_cost_row *row = p->top[i];

                const char *ns = gc_report__key(row, GC_DIM_NAMESPACE);
                const char *pod = gc_report__key(row, GC_DIM_POD);
                size_t ns_len = strlen(ns);

                /* The pod key is its name; a caller that already wrote "ns/name" keeps it. */
                gc_buf_reset(&name);
                if (ns_len && strncmp(pod, ns, ns_len) == 0 && pod[ns_len] == '/')
                        r = gc_buf_puts(&name, pod);
                else
                        r = gc_buf_printf(&name, "%s/%s", ns, pod);
                if (r == 0)
                        r = gc_report__table_cellf(&t, "%zu", i + 1);
                if (r == 0)
                        r = gc_report__table_key(&t, name.data, 1);
                if (r == 0)
                        r = gc_report__table_key(&t, row->keys[GC_DIM_TEAM], 1);
                if (r == 0)
                        r = gc_report__table_key(&t, row->keys[GC_DIM_PROJECT], 1);
                if (r == 0)
                        r = gc_report__table_key(&t, row->keys[GC_DIM_MODEL], 1);
                gc_report__hours(gc_report__to_centi_hours(row->gpu_seconds), hours);
                gc_report__money(gc_report__to_cents(row->cost), p->currency, money);
                /* Listed on its own, each pod's figure is rounded on its own. */
                if (r == 0)
                        r = gc_report__table_cell(&t, hours);
                if (r == 0)
                        r = gc_report__table_cell(&t, money);
        }
        if (r == 0)
                r = gc_report__table_markdown(&t, out);
        gc_buf_free(&name);
        gc_report__table_free(&t);
        return r;
}

/*
 * The caller's own sentences are Markdown already (e.g. `gpu-cost analyze` as code); only line
 * breaks and control bytes are made blanks so that each stays one item of the list.
 */
static int gc_report__md_line(gc_buf *out, const char *s)
{
        size_t from = out->len;

        gc_buf_puts(out, s); /* nothing is added once out has failed: the loop is empty */
        for (size_t i = from; i < out->len; i++)
                if ((unsigned char)out->data[i] < 0x20 || out->data[i] == 0x7f)
                        out->data[i] = ' ';
        return out->err;
}

static int gc_report__md_notes(gc_buf *out, const gc_report__period *p)
{
        const gc_period_report *r = p->r;
        const gc_cost_row *total = &p->tp.total;
        char ts[GC_TIME_LEN];
        size_t n = 0;

        gc_buf_puts(out, "\n## Notes\n\n");
        if (r->now && r->now < r->end) {
                gc_time_format(r->now > r->start ? r->now : r->start, ts);
                gc_buf_printf(out,
                              "- The period is not over: pods still running are counted up to "
                              "%s.\n",
                              ts);
                n++;
        }
        if (p->has_forecast) {
                gc_buf_printf(out, "- %s\n", gc_report__forecast_method);
                n++;
        }
        if (total->estimates > 0) {
                gc_buf_printf(out,
                              "- %u of %u pods have figures that rest on estimates (for example a "
                              "MIG profile not in the tables, or a missing timestamp).\n",
                              total->estimates, total->pods);
                n++;
        }
        for (size_t i = 0; r->notes && i < r->notes->n_kept && !out->err; i++, n++) {
                gc_buf_puts(out, "- ");
                gc_report__md_escape(out, r->notes->msgs[i]);
                gc_buf_append(out, "\n", 1);
        }
        if (r->notes && r->notes->n_total > r->notes->n_kept) {
                gc_buf_printf(out, "- ... and %zu more input warnings not shown.\n",
                              r->notes->n_total - r->notes->n_kept);
                n++;
        }
        for (size_t i = 0; i < p->n_own && !out->err; i++, n++)
                gc_buf_printf(out, "- %s\n", p->own_notes[i]);
        for (size_t i = 0; i < r->n_extra_notes && !out->err; i++) {
                if (!r->extra_notes[i])
                        continue;
                gc_buf_puts(out, "- ");
                gc_report__md_line(out, r->extra_notes[i]);
                gc_buf_append(out, "\n", 1);
                n++;
        }
        if (n == 0)
                gc_buf_puts(out, "None.\n");
        return out->err;
}

/* The headline: total, change against the previous period, idle and unattributed in brief. */
static int gc_report__md_headline(gc_buf *out, const gc_report__period *p)
{
        const gc_cost_summary *s = &p->tp;
        int64_t cents = gc_report__to_cents(s->total.cost);
        int64_t prev_cents = gc_report__to_cents(p->prev.total.cost);
        char money[GC_REPORT__TEXT_LEN], hours[GC_REPORT__TEXT_LEN], other[GC_REPORT__TEXT_LEN];
        char span[GC_REPORT__SPAN_LEN], pct[GC_REPORT__TEXT_LEN];
        const char *word = gc_report__prev_word(p->kind);

        gc_report__money(cents, p->currency, money);
        gc_report__hours(gc_report__to_centi_hours(s->total.gpu_seconds), hours);
        gc_buf_printf(out, "- **Total spend: %s** for %s GPU-hours, %u pod%s.\n", money, hours,
                      s->total.pods, s->total.pods == 1 ? "" : "s");
        gc_report__span(p->prev_start, p->r->start, p->tz, span);
        if (!p->has_prev) {
                gc_buf_printf(out, "- Change against the previous %s (%s): no previous data.\n",
                              word, span);
        } else {
                /* The change is the difference of the figures shown, so the three add up. */
                int64_t delta = cents - prev_cents;

                gc_report__money(delta < 0 ? -delta : delta, p->currency, money);
                gc_report__money(prev_cents, p->currency, other);
                pct[0] = '\0';
                if (p->prev.total.cost > 0) {
                        int64_t t = gc_report__share_tenths(s->total.cost - p->prev.total.cost,
                                                            p->prev.total.cost);

                        gc_report__pct(t < 0 ? -t : t, pct);
                }
                gc_buf_printf(out, "- Change against the previous %s (%s): **%s%s", word, span,
                              delta < 0 ? "-" : "+", money);
                if (pct[0])
                        gc_buf_printf(out, " (%s%s)", delta < 0 ? "-" : "+", pct);
                gc_buf_printf(out, "**, from %s.\n", other);
        }
        if (p->has_forecast) {
                gc_report__money(gc_report__to_cents(p->forecast.cost), p->currency, money);
                gc_report__hours(gc_report__to_centi_hours(p->forecast.gpu_seconds), hours);
                gc_report__day_label(p->r->end - 1, p->tz, other);
                gc_buf_printf(out,
                              "- Forecast to the end of the %s (%s): **%s** for %s GPU-hours, at "
                              "the average rate of the %s so far (see the notes).\n",
                              word, other, money, hours, word);
        }
        if (s->capacity.cost > 0 && !p->r->team) {
                gc_report__money(gc_report__to_cents(s->idle.cost), p->currency, money);
                gc_report__hours(gc_report__to_centi_hours(s->idle.gpu_seconds), hours);
                gc_report__pct(gc_report__share_tenths(s->idle.cost, s->capacity.cost), pct);
                gc_buf_printf(out,
                              "- Idle GPUs you pay for: **%s** (%s GPU-hours, %s of the "
                              "capacity's cost).\n",
                              money, hours, pct);
        }
        if (s->unattributed.gpu_seconds > 0) {
                gc_report__money(gc_report__to_cents(s->unattributed.cost), p->currency, money);
                gc_report__pct(gc_report__share_tenths(s->unattributed.cost, s->total.cost), pct);
                gc_buf_printf(out,
                              "- Unattributed: **%s** (%s of spend) has no team or project; "
                              "see below.\n",
                              money, pct);
        }
        return out->err;
}

static const char *gc_report__budget_state(const gc_budget_status *st)
{
        if (st->state == GC_BUDGET_OVER)
                return "over budget";
        if (st->state == GC_BUDGET_WARN)
                return st->forecast_over ? "warning; forecast over budget" : "warning";
        return st->forecast_over ? "forecast over budget" : "ok";
}

/* Spend against each budget of the period, with the forecast when the period is not over. */
static int gc_report__md_budgets(gc_buf *out, const gc_report__period *p)
{
        static const char *const heads[] = {"Scope", "Name",     "Budget",    "Spent",
                                            "Used",  "Forecast", "Of budget", "State"};
        double warn = (p->r->budget_warn_share > 0 ? p->r->budget_warn_share : 0.8) * 100.0;
        gc_report__table t;
        char money[GC_REPORT__TEXT_LEN], pct[GC_REPORT__TEXT_LEN];
        int r;

        if (!p->n_bud)
                return out->err;
        gc_buf_puts(out, "\n## Budgets\n\n");
        if (out->err) /* as gc_report__md_table: no table for a document that failed */
                return out->err;
        r = gc_report__table_init(&t, "llrrrrrl", out->limit);
        if (r < 0)
                return r;
        for (size_t k = 0; r == 0 && k < sizeof(heads) / sizeof(heads[0]); k++)
                r = gc_report__table_cell(&t, heads[k]);
        for (size_t i = 0; r == 0 && i < p->n_bud; i++) {
                const gc_budget *b = p->bud[i];
                const gc_budget_status *st = &p->bud_st[i];

                if (strcmp(p->kind, "daily") == 0) {
                        char scope[GC_REPORT__TEXT_LEN];

                        snprintf(scope, sizeof(scope), "%s, %s", gc_budget_scope_name(b->dim),
                                 gc_budget_period_name(b->period));
                        r = gc_report__table_cell(&t, scope);
                } else {
                        r = gc_report__table_cell(&t, gc_budget_scope_name(b->dim));
                }
                if (r == 0)
                        r = gc_report__table_key(&t, b->name, 1);
                gc_report__money(gc_report__to_cents(b->amount), p->currency, money);
                if (r == 0)
                        r = gc_report__table_cell(&t, money);
                gc_report__money(gc_report__to_cents(st->spent), p->currency, money);
                if (r == 0)
                        r = gc_report__table_cell(&t, money);
                gc_report__pct(gc_report__share_tenths(st->spent, b->amount), pct);
                if (r == 0)
                        r = gc_report__table_cell(&t, pct);
                gc_report__money(gc_report__to_cents(st->forecast), p->currency, money);
                if (r == 0)
                        r = gc_report__table_cell(&t, st->end > p->up_to ? money : "\u2013");
                gc_report__pct(gc_report__share_tenths(st->forecast, b->amount), pct);
                if (r == 0)
                        r = gc_report__table_cell(&t, st->end > p->up_to ? pct : "\u2013");
                if (r == 0)
                        r = gc_report__table_cell(&t, gc_report__budget_state(st));
        }
        if (r == 0)
                r = gc_report__table_markdown(&t, out);
        gc_report__table_free(&t);
        if (r < 0)
                return r;
        if (strcmp(p->kind, "daily") == 0)
                gc_buf_printf(out,
                              "\nEach budget's week or month holding this day, spent up to the "
                              "day's end, in %s; the state warns at %.0f%% used. The forecast is "
                              "the spend so far plus the average rate so far for the rest of the "
                              "budget's period.\n",
                              p->currency, warn);
        else
                gc_buf_printf(out,
                              "\nBudgets are per %s in %s; the state warns at %.0f%% used. The "
                              "forecast is the spend so far plus the %s's average rate so far for "
                              "the rest of it.\n",
                              gc_report__prev_word(p->kind), p->currency, warn,
                              gc_report__prev_word(p->kind));
        return out->err;
}

/* The advisor's section: its own Markdown, under our heading unless it brings one. */
static int gc_report__md_savings(gc_buf *out, const gc_report__period *p)
{
        const char *md = p->r->savings_markdown;
        size_t n;

        if (!md)
                return out->err;
        n = strlen(md);
        while (*md == '\n')
                md++, n--;
        gc_buf_puts(out, strncmp(md, "## Savings", 10) != 0 ? "\n## Savings\n\n" : "\n");
        gc_buf_append(out, md, n);
        if (n == 0 || md[n - 1] != '\n')
                gc_buf_append(out, "\n", 1);
        return out->err;
}

/*
 * A line for folded history that does not name its `what` (pods, workloads): those beyond the
 * top of a day, week or month of period history, or hours folded before it was kept.
 */
static int gc_report__md_folded(gc_buf *out, const gc_report__period *p, const gc_cost_row *folded,
                                const char *what)
{
        char hours[GC_REPORT__TEXT_LEN], money[GC_REPORT__TEXT_LEN];

        if (folded->gpu_seconds <= 0)
                return out->err;
        gc_report__money(gc_report__to_cents(folded->cost), p->currency, money);
        gc_report__hours(gc_report__to_centi_hours(folded->gpu_seconds), hours);
        return gc_buf_printf(out, "\nFolded history that does not name its %s: %s GPU-hours, %s.\n",
                             what, hours, money);
}

/* "Spend by workload": each pod's top-level owner (Kind/namespace/name), the dearest first. */
static int gc_report__md_workloads(gc_buf *out, const gc_report__period *p)
{
        static const char *const heads[] = {"Workload", "Team", "Project", "GPU-hours", "Cost"};
        static const gc_dim dims[] = {GC_DIM_WORKLOAD, GC_DIM_TEAM, GC_DIM_PROJECT};
        const gc_report__cols c = {heads, dims, 3, 0, 1};
        int r;

        gc_buf_puts(out, "\n## Spend by workload\n\n");
        if (p->n_wl == 0)
                gc_buf_puts(out, "No workload held a GPU in this period.\n");
        else if (p->sh_wl.n_more)
                gc_buf_printf(out,
                              "Each pod counts under its top-level owner (Kind/namespace/name); "
                              "the %zu dearest are listed, the other %zu summed in the last "
                              "row.\n\n",
                              p->sh_wl.n, p->sh_wl.n_more);
        else
                gc_buf_puts(out, "Each pod counts under its top-level owner (Kind/namespace/"
                                 "name).\n\n");
        if (p->n_wl && (r = gc_report__md_shown(out, &c, &p->sh_wl, &p->wl_named, p->currency)) < 0)
                return r;
        return gc_report__md_folded(out, p, &p->wl_folded, "workloads");
}

/*
 * "Spend by label <key>", one section per label the ledger keeps as a dimension (none when it
 * keeps none): each value (the pod's label, else its namespace's, else __unlabelled__).
 */
static int gc_report__md_labels(gc_buf *out, const gc_report__period *p)
{
        int r;

        for (size_t i = 0; i < p->lk.n; i++) {
                const char *heads[] = {p->lk.key[i], "GPU-hours", "Cost"};
                gc_dim d = (gc_dim)(GC_DIM_LABEL + i);
                const gc_report__cols c = {heads, &d, 1, 1, 1};

                gc_buf_printf(out, "\n## Spend by label %s\n\n", p->lk.key[i]);
                if (p->lab[i].n_rows == 0)
                        gc_buf_puts(out, "No pod held a GPU in this period.\n");
                else if ((r = gc_report__md_shown(out, &c, &p->sh_lab[i], &p->lab[i].total,
                                                  p->currency)) < 0)
                        return r;
        }
        return out->err;
}

/* "Top N pods", and the folded hours that no longer name theirs. */
static int gc_report__md_pods(gc_buf *out, const gc_report__period *p)
{
        int r;

        gc_buf_printf(out, "\n## Top %zu pod%s\n\n", p->n_top, p->n_top == 1 ? "" : "s");
        if (p->n_top == 0)
                gc_buf_puts(out, "No pod held a GPU in this period.\n");
        else if ((r = gc_report__md_top(out, p)) < 0)
                return r;
        return gc_report__md_folded(out, p, &p->folded, "pods");
}

/* The title, what the report covers, and the headline. */
static int gc_report__md_head(gc_buf *out, const gc_report__period *p)
{
        char a[GC_TIME_LEN], b[GC_TIME_LEN];

        gc_buf_puts(out, "# ");
        gc_report__md_escape(out, p->title);
        gc_buf_puts(out, "\n\n");
        if (p->r->cluster && *p->r->cluster) {
                gc_buf_puts(out, "Cluster: ");
                gc_report__md_escape(out, p->r->cluster);
                gc_buf_puts(out, ". ");
        }
        if (p->r->team) {
                gc_buf_puts(out, "Team: ");
                gc_report__md_escape(out, p->r->team);
                gc_buf_puts(out, ". ");
        }
        gc_time_format(p->r->start, a);
        gc_time_format(p->r->end, b);
        gc_buf_printf(out, "Period: %s to %s (end excluded). Currency: ", a, b);
        gc_report__md_escape(out, p->currency);
        gc_buf_puts(out, ".\n\n");
        if (p->partial) {
                gc_time_format(p->up_to, a);
                gc_buf_printf(out,
                              "**Partial: figures up to %s.** The period is not over; this report "
                              "is rewritten until it is.\n\n",
                              a);
        }
        return gc_report__md_headline(out, p);
}

/* Spend by team (with the chargeback), by team and project, by GPU model, and per day. */
static int gc_report__md_spend(gc_buf *out, const gc_report__period *p)
{
        static const char *const h_team[] = {"Team", "GPU-hours", "Cost"};
        static const char *const h_tp[] = {"Team", "Project", "GPU-hours", "Cost"};
        static const char *const h_model[] = {"GPU model", "Capacity type", "GPU-hours", "Cost"};
        static const gc_dim d_team[] = {GC_DIM_TEAM};
        static const gc_dim d_tp[] = {GC_DIM_TEAM, GC_DIM_PROJECT};
        static const gc_dim d_model[] = {GC_DIM_MODEL, GC_DIM_CAPACITY_TYPE};
        const gc_report__cols c_team = {h_team, d_team, 1, 1, 1};
        const gc_report__cols c_tp = {h_tp, d_tp, 2, 1, 1};
        const gc_report__cols c_model = {h_model, d_model, 2, 1, 1};
        const gc_cost_summary *s = &p->tp;
        int r;

        gc_buf_puts(out, "\n## Spend by team\n\n");
        r = gc_report__md_shown(out, &c_team, &p->sh_team, &s->total, p->currency);
        if (r < 0)
                return r;
        if (p->cb_ratio && (r = gc_report__md_chargeback(out, p)) < 0)
                return r;
        if ((r = gc_report__md_usage(out, p)) < 0)
                return r;
        gc_buf_puts(out, "\n## Spend by team and project\n\n");
        r = gc_report__md_shown(out, &c_tp, &p->sh_tp, &s->total, p->currency);
        if (r < 0)
                return r;
        gc_buf_puts(out, "\n## Spend by GPU model and capacity type\n\n");
        r = gc_report__md_shown(out, &c_model, &p->sh_model, &s->total, p->currency);
        if (r < 0)
                return r;
        gc_buf_puts(out, "\n## Spend per day\n\n");
        return gc_report__md_days(out, p);
}

/* "Idle GPUs you pay for"; none in a team's report: the cluster's idle GPUs are no team's spend
 * (see the notes). */
static int gc_report__md_idle(gc_buf *out, const gc_report__period *p)
{
        static const char *const heads[] = {"Node", "GPU model", "Capacity type", "Idle GPU-hours",
                                            "Cost"};
        static const gc_dim dims[] = {GC_DIM_NODE, GC_DIM_MODEL, GC_DIM_CAPACITY_TYPE};
        const gc_report__cols c = {heads, dims, 3, 0, 0};
        const gc_cost_summary *s = &p->tp;
        char money[GC_REPORT__TEXT_LEN], hours[GC_REPORT__TEXT_LEN];

        if (p->r->team)
                return out->err;
        gc_buf_puts(out, "\n## Idle GPUs you pay for\n\n");
        if (p->n_idle == 0)
                return gc_buf_puts(out, "No idle capacity: every GPU was held by a pod.\n");
        gc_report__money(gc_report__to_cents(s->idle.cost), p->currency, money);
        gc_report__hours(gc_report__to_centi_hours(s->idle.gpu_seconds), hours);
        gc_buf_printf(out,
                      "GPUs on these nodes were allocatable but held by no pod: %s GPU-hours "
                      "costing %s.\n\n",
                      hours, money);
        return gc_report__md_shown(out, &c, &p->sh_idle, &s->idle, p->currency);
}

/* "Unattributed spend": the pods of no team or project, by namespace. */
static int gc_report__md_unattributed(gc_buf *out, const gc_report__period *p)
{
        static const char *const heads[] = {"Namespace", "GPU-hours", "Cost"};
        static const gc_dim dims[] = {GC_DIM_NAMESPACE};
        const gc_report__cols c = {heads, dims, 1, 0, 1};
        const gc_cost_summary *s = &p->tp;

        gc_buf_puts(out, "\n## Unattributed spend\n\n");
        if (s->unattributed.gpu_seconds <= 0 && p->n_unattr == 0)
                return gc_buf_puts(out, "None: every pod had a team and a project.\n");
        gc_buf_puts(out, "Pods with no team or project label (on the pod or its namespace, or in "
                         "the namespace map of the configuration), by namespace:\n\n");
        return gc_report__md_shown(out, &c, &p->sh_unattr, &s->unattributed, p->currency);
}

static int gc_report__md(gc_buf *out, const gc_report__period *p)
{
        /* The report's sections in order. One with tables can fail on its own (a table's cells
         * grow), so each result is looked at; a section that appends only returns out's error. */
        static int (*const sections[])(gc_buf *, const gc_report__period *) = {
            gc_report__md_head,         gc_report__md_spend,     gc_report__md_idle,
            gc_report__md_unattributed, gc_report__md_workloads, gc_report__md_labels,
            gc_report__md_pods,         gc_report__md_budgets,   gc_report__md_savings,
            gc_report__md_notes,
        };

        for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
                int r = sections[i](out, p);

                if (r < 0)
                        return r;
        }
        return gc_buf_printf(out, "\n---\n\n_%s_\n", gc_report__method);
}

/* ---- JSON ----------------------------------------------------------------------------------- */

static int gc_report__json_amounts(gc_buf *b, const gc_cost_row *row)
{
        gc_report__json_field_num(b, "gpu_hours", row->gpu_seconds / 3600.0);
        gc_report__json_field_num(b, "gpu_seconds", row->gpu_seconds);
        gc_report__json_field_money(b, "cost", row->cost);
        return b->err;
}

/* `"name":[{"<dim>":"...",...,"gpu_hours":..,"cost":..,"cost_usd":..,["share":..],["pods":..]},...]`
 */
static int gc_report__json_rows(gc_buf *b, const char *name, const gc_dim *dims, size_t n_dims,
                                const gc_cost_row *rows, size_t n, const gc_cost_row *total,
                                int pods)
{
        gc_report__json_key(b, name);
        gc_buf_append(b, "[", 1);
        for (size_t i = 0; !b->err && i < n; i++) {
                gc_buf_puts(b, i > 0 ? ",{" : "{");
                for (size_t k = 0; !b->err && k < n_dims; k++)
                        gc_report__json_field_str(b, gc_dim_name(dims[k]), rows[i].keys[dims[k]]);
                gc_report__json_amounts(b, &rows[i]);
                if (total)
                        gc_report__json_field_num(
                            b, "share", total->cost > 0 ? rows[i].cost / total->cost : NAN);
                if (pods)
                        gc_report__json_field_u64(b, "pods", rows[i].pods);
                gc_buf_append(b, "}", 1);
        }
        gc_buf_append(b, "]", 1);
        return b->err;
}

/* `"name":{"rows":n,...}`: what a cut table left out, summed; nothing when it was not cut. */
static int gc_report__json_omitted(gc_buf *b, const char *name, const gc_report__shown *sh,
                                   int pods)
{
        const gc_cost_row *more = &sh->rows[sh->n];

        if (sh->n_more == 0)
                return 0;
        gc_report__json_key(b, name);
        gc_buf_append(b, "{", 1);
        gc_report__json_field_u64(b, "rows", sh->n_more);
        gc_report__json_amounts(b, more);
        if (pods)
                gc_report__json_field_u64(b, "pods", more->pods);
        gc_buf_append(b, "}", 1);
        return b->err;
}

/* A cut table: its rows as shown, then `"<name>_omitted":{...}` summing the rows left out. */
static int gc_report__json_shown(gc_buf *b, const char *name, const gc_dim *dims, size_t n_dims,
                                 const gc_report__shown *sh, const gc_cost_row *total, int pods)
{
        char key[64];

        gc_report__json_rows(b, name, dims, n_dims, sh->rows, sh->n, total, pods);
        snprintf(key, sizeof(key), "%s_omitted", name);
        gc_report__json_omitted(b, key, sh, pods);
        return b->err;
}

static int gc_report__json_days(gc_buf *b, const gc_report__period *p)
{
        gc_buf_puts(b, ",\"by_day\":[");
        for (size_t i = 0; !b->err && i < p->n_days; i++) {
                char date[GC_REPORT__TEXT_LEN];

                gc_report__date(p->day_start[i], p->tz, date);
                gc_buf_puts(b, i > 0 ? ",{" : "{");
                gc_report__json_field_str(b, "date", date);
                gc_report__json_field_time(b, "start", p->day_start[i]);
                gc_report__json_field_time(b, "end", p->day_end[i]);
                gc_report__json_amounts(b, &p->days[i]);
                gc_report__json_field_u64(b, "pods", p->days[i].pods);
                gc_buf_append(b, "}", 1);
        }
        gc_buf_append(b, "]", 1);
        return b->err;
}

/*
 * "labels": per label kept as a dimension, {"key":..., "rows":[{"value":...,figures}],
 * "rows_omitted":{...} when cut}; absent when the ledger keeps none.
 */
static int gc_report__json_labels(gc_buf *b, const gc_report__period *p)
{
        if (!p->lk.n)
                return 0;
        gc_buf_puts(b, ",\"labels\":[");
        for (size_t i = 0; !b->err && i < p->lk.n; i++) {
                const gc_report__shown *sh = &p->sh_lab[i];
                const gc_cost_row *total = &p->lab[i].total;

                gc_buf_puts(b, i ? ",{\"key\":" : "{\"key\":");
                gc_buf_json_str(b, p->lk.key[i]);
                gc_buf_puts(b, ",\"rows\":[");
                for (size_t k = 0; !b->err && k < sh->n; k++) {
                        const gc_cost_row *row = &sh->rows[k];

                        gc_buf_puts(b, k ? ",{\"value\":" : "{\"value\":");
                        gc_buf_json_str(b, gc_report__key(row, (gc_dim)(GC_DIM_LABEL + i)));
                        gc_report__json_amounts(b, row);
                        gc_report__json_field_num(b, "share",
                                                  total->cost > 0 ? row->cost / total->cost : NAN);
                        gc_report__json_field_u64(b, "pods", row->pods);
                        gc_buf_append(b, "}", 1);
                }
                gc_buf_append(b, "]", 1);
                gc_report__json_omitted(b, "rows_omitted", sh, 1);
                gc_buf_append(b, "}", 1);
        }
        gc_buf_append(b, "]", 1);
        return b->err;
}

/*
 * "workloads": the rows shown, "workloads_omitted" (when cut) and "workloads_folded": the
 * hours of folded history, which no longer name their workloads.
 */
static int gc_report__json_workloads(gc_buf *b, const gc_report__period *p)
{
        static const gc_dim dims[] = {GC_DIM_WORKLOAD, GC_DIM_TEAM, GC_DIM_PROJECT};

        gc_report__json_shown(b, "workloads", dims, 3, &p->sh_wl, NULL, 1);
        gc_buf_puts(b, ",\"workloads_folded\":{");
        gc_report__json_amounts(b, &p->wl_folded);
        gc_buf_append(b, "}", 1);
        return b->err;
}

static int gc_report__json_top(gc_buf *b, const gc_report__period *p)
{
        gc_buf_puts(b, ",\"top_pods\":[");
        for (size_t i = 0; !b->err && i < p->n_top; i++) {
                const gc_cost_row *row = p->top[i];

                gc_buf_puts(b, i > 0 ? ",{" : "{");
                gc_report__json_field_str(b, "namespace", row->keys[GC_DIM_NAMESPACE]);
                gc_report__json_field_str(b, "pod", row->keys[GC_DIM_POD]);
                gc_report__json_field_str(b, "team", row->keys[GC_DIM_TEAM]);
                gc_report__json_field_str(b, "project", row->keys[GC_DIM_PROJECT]);
                gc_report__json_field_str(b, "model", row->keys[GC_DIM_MODEL]);
                gc_report__json_amounts(b, row);
                gc_report__json_field_u64(b, "estimates", row->estimates);
                gc_buf_append(b, "}", 1);
        }
        gc_buf_append(b, "]", 1);
        return b->err;
}

static int gc_report__json_notes(gc_buf *b, const gc_report__period *p)
{
        const gc_period_report *r = p->r;
        size_t omitted = 0;

        if (gc_buf_puts(b, ",\"notes\":[") < 0)
                return b->err;
        for (size_t i = 0; r->notes && i < r->notes->n_kept && !b->err; i++) {
                if (b->data[b->len - 1] != '[')
                        gc_buf_append(b, ",", 1);
                gc_buf_json_str(b, r->notes->msgs[i]);
        }
        if (r->notes && r->notes->n_total > r->notes->n_kept && !b->err) {
                omitted = r->notes->n_total - r->notes->n_kept;
                if (b->data[b->len - 1] != '[')
                        gc_buf_append(b, ",", 1);
                gc_buf_printf(b, "\"... and %zu more input warnings not shown.\"", omitted);
        }
        for (size_t i = 0; i < p->n_own && !b->err; i++) {
                if (b->data[b->len - 1] != '[')
                        gc_buf_append(b, ",", 1);
                gc_buf_json_str(b, p->own_notes[i]);
        }
        for (size_t i = 0; i < r->n_extra_notes && !b->err; i++) {
                if (!r->extra_notes[i])
                        continue;
                if (b->data[b->len - 1] != '[')
                        gc_buf_append(b, ",", 1);
                gc_buf_json_str(b, r->extra_notes[i]);
        }
        gc_buf_append(b, "]", 1);
        gc_report__json_field_u64(b, "notes_omitted", omitted);
        return b->err;
}

/* "budgets": spend against each budget of the period. */
static int gc_report__json_budgets(gc_buf *b, const gc_report__period *p)
{
        gc_buf_puts(b, ",\"budgets\":[");
        for (size_t i = 0; !b->err && i < p->n_bud; i++) {
                const gc_budget *bu = p->bud[i];
                const gc_budget_status *st = &p->bud_st[i];

                gc_buf_puts(b, i ? ",{" : "{");
                gc_report__json_field_str(b, "scope", gc_budget_scope_name(bu->dim));
                gc_report__json_field_str(b, "name", bu->name);
                gc_report__json_field_str(b, "period", gc_budget_period_name(bu->period));
                gc_report__json_field_time(b, "start", st->start);
                gc_report__json_field_time(b, "end", st->end);
                gc_report__json_field_num(b, "amount", bu->amount);
                gc_report__json_field_num(b, "spent", st->spent);
                gc_report__json_field_num(b, "share", st->share);
                gc_report__json_field_num(b, "forecast", st->end > p->up_to ? st->forecast : NAN);
                gc_report__json_field_num(b, "forecast_share",
                                          st->end > p->up_to ? st->forecast_share : NAN);
                gc_report__json_field_str(b, "state",
                                          st->state == GC_BUDGET_OVER   ? "over"
                                          : st->state == GC_BUDGET_WARN ? "warn"
                                                                        : "ok");
                gc_buf_printf(b, ",\"forecast_over\":%s",
                              st->end > p->up_to && st->forecast_over ? "true" : "false");
                gc_buf_append(b, "}", 1);
        }
        gc_buf_append(b, "]", 1);
        return b->err;
}

/* "forecast": the partial period's figures extended to its end, or null. */
static int gc_report__json_forecast(gc_buf *b, const gc_report__period *p)
{
        if (!p->has_forecast)
                return gc_buf_puts(b, ",\"forecast\":null");
        gc_buf_puts(b, ",\"forecast\":{");
        gc_report__json_field_time(b, "to", p->r->end);
        gc_report__json_amounts(b, &p->forecast);
        gc_report__json_field_str(b, "method", "elapsed_average");
        gc_report__json_field_str(b, "how", gc_report__forecast_method);
        gc_buf_append(b, "}", 1);
        return b->err;
}

static int gc_report__json(gc_buf *b, const gc_report__period *p)
{
        static const gc_dim d_team[] = {GC_DIM_TEAM};
        static const gc_dim d_model[] = {GC_DIM_MODEL, GC_DIM_CAPACITY_TYPE};
        static const gc_dim d_idle[] = {GC_DIM_NODE, GC_DIM_MODEL, GC_DIM_CAPACITY_TYPE};
        static const gc_dim d_ns[] = {GC_DIM_NAMESPACE};
        const gc_cost_summary *s = &p->tp;
        gc_cost_summary shown = p->tp;
        double delta = s->total.cost - p->prev.total.cost;
        int r;

        /* The summary as shown: its groups cut like the tables; no cluster idle for a team. */
        shown.rows = (gc_cost_row *)p->sh_tp.rows;
        shown.n_rows = p->sh_tp.n;
        shown.idle_nodes = (gc_cost_row *)p->sh_nodes.rows;
        shown.n_idle_nodes = p->sh_nodes.n;
        if (p->r->team) {
                shown.idle.gpu_seconds = shown.idle.cost = NAN;
                shown.capacity.gpu_seconds = shown.capacity.cost = NAN;
                shown.idle_nodes = NULL;
                shown.n_idle_nodes = 0;
        }
        gc_buf_append(b, "{", 1);
        gc_report__json_field_str(b, "kind", p->kind);
        gc_report__json_field_str(b, "title", p->title);
        if (p->r->cluster)
                gc_report__json_field_str(b, "cluster", p->r->cluster);
        else
                gc_buf_puts(b, ",\"cluster\":null");
        if (p->r->team)
                gc_report__json_field_str(b, "team", p->r->team);
        else
                gc_buf_puts(b, ",\"team\":null");
        gc_report__json_field_str(b, "currency", p->currency);
        gc_buf_puts(b, ",\"period\":{");
        gc_report__json_field_time(b, "start", p->r->start);
        gc_report__json_field_time(b, "end", p->r->end);
        gc_report__json_field_str(b, "iso_week", p->iso_week);
        gc_report__json_field_str(b, "month", p->month);
        gc_report__json_field_u64(b, "days", p->n_days);
        gc_report__json_field_str(b, "time_zone", gc_tz_name(p->tz));
        gc_report__json_field_num(b, "utc_offset_seconds",
                                  (double)gc_tz_offset(p->tz, p->r->start));
        gc_buf_printf(b, ",\"partial\":%s", p->partial ? "true" : "false");
        gc_report__json_field_time(b, "figures_up_to", p->up_to);
        gc_buf_puts(b, "},\"previous\":{");
        gc_report__json_field_time(b, "start", p->prev_start);
        gc_report__json_field_time(b, "end", p->r->start);
        gc_buf_printf(b, ",\"has_data\":%s", p->has_prev ? "true" : "false");
        gc_report__json_amounts(b, &p->prev.total);
        gc_report__json_field_u64(b, "pods", p->prev.total.pods);
        gc_buf_puts(b, "},\"change\":{");
        gc_report__json_field_money(b, "cost", p->has_prev ? delta : NAN);
        gc_report__json_field_num(
            b, "percent",
            p->has_prev && p->prev.total.cost > 0 ? delta / p->prev.total.cost * 100.0 : NAN);
        gc_buf_append(b, "}", 1);
        gc_report__json_forecast(b, p);
        gc_buf_puts(b, ",\"summary\":");
        r = gc_report_summary_json(&shown, p->currency, b);
        if (r < 0) /* a summary it cannot write (not only a full b) */
                return r;
        gc_report__json_omitted(b, "summary_groups_omitted", &p->sh_tp, 1);
        if (!p->r->team)
                gc_report__json_omitted(b, "summary_idle_nodes_omitted", &p->sh_nodes, 0);
        gc_report__json_shown(b, "by_team", d_team, 1, &p->sh_team, &s->total, 1);
        gc_report__json_chargeback(b, p);
        gc_report__json_usage(b, p);
        gc_report__json_shown(b, "by_model", d_model, 2, &p->sh_model, &s->total, 1);
        gc_report__json_days(b, p);
        gc_report__json_shown(b, "idle_nodes", d_idle, 3, &p->sh_idle, NULL, 0);
        gc_buf_puts(b, ",\"unattributed\":{");
        gc_report__json_amounts(b, &s->unattributed);
        gc_report__json_field_u64(b, "pods", s->unattributed.pods);
        gc_report__json_shown(b, "namespaces", d_ns, 1, &p->sh_unattr, NULL, 1);
        gc_buf_append(b, "}", 1);
        gc_report__json_workloads(b, p);
        gc_report__json_labels(b, p);
        gc_report__json_top(b, p);
        gc_report__json_budgets(b, p);
        gc_buf_puts(b, ",\"savings\":");
        gc_buf_puts(b, p->r->savings_json && *p->r->savings_json ? p->r->savings_json : "null");
        gc_report__json_notes(b, p);
        if (p->cut_to)
                gc_report__json_field_u64(b, "rows_cut_to", p->cut_to);
        else
                gc_buf_puts(b, ",\"rows_cut_to\":null");
        gc_report__json_field_str(b, "method", gc_report__method);
        gc_buf_append(b, "}", 1);
        return b->err;
}

/* ---- entry points --------------------------------------------------------------------------- */

static int gc_report__period_render(const gc_period_report *r, int json, gc_buf *out)
{
        gc_report__period *p;
        size_t orig;
        int ret;

        if (!r || !out)
                return -EINVAL;
        /* The figures are large (several summaries); they live on the heap, not the stack. */
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        orig = out->len;
        ret = gc_report__collect(r, p);
        if (ret == 0)
                ret = json ? gc_report__json(out, p) : gc_report__md(out, p);
        if (ret < 0 && out->data)
                gc_buf_truncate(out, orig);
        gc_report__period_free(p);
        free(p);
        return ret;
}

int gc_report_period_markdown(const gc_period_report *r, gc_buf *out)
{
        return gc_report__period_render(r, 0, out);
}

int gc_report_period_json(const gc_period_report *r, gc_buf *out)
{
        return gc_report__period_render(r, 1, out);
}
