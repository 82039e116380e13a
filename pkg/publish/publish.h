/* publish: which report ConfigMaps the controller writes and deletes, and what goes in them. */
#ifndef GC_PUBLISH_H
#define GC_PUBLISH_H

#include <stddef.h>
#include <stdint.h>

#include "../ledger/ledger.h"
#include "../report/report.h"
#include "../tz/tz.h"
#include "../util/util.h"

/*
 * Pure functions for the controller (docs/controller.md, docs/report.md): the daily, weekly and
 * monthly periods (local days, ISO weeks, calendar months in the configured zone) within retention
 * that have data, their ConfigMap names, whether each is complete, a hash of what its report would
 * say, the report.json and report.md of one period cut to fit a ConfigMap, and the report
 * ConfigMaps past retention. Nothing here talks to the API server.
 */

#define GC_PUBLISH_MAX_BYTES      (950u * 1024u) /* report.json + report.md of one ConfigMap */
#define GC_PUBLISH_NAME_MAX       64
#define GC_PUBLISH_PREFIX         "gpu-cost-report-"
#define GC_PUBLISH_DAILY_LATEST   "gpu-cost-report-daily-latest"
#define GC_PUBLISH_WEEKLY_LATEST  "gpu-cost-report-weekly-latest"
#define GC_PUBLISH_MONTHLY_LATEST "gpu-cost-report-monthly-latest"
#define GC_PUBLISH_KEY_JSON       "report.json"
#define GC_PUBLISH_KEY_MD         "report.md"
/* Selects every report ConfigMap the controller wrote (for listing them). */
#define GC_PUBLISH_SELECTOR               "app.kubernetes.io/name=gpu-cost,gpu-cost.io/kind=report"
#define GC_PUBLISH_DEFAULT_DAILY_DAYS     35
#define GC_PUBLISH_DEFAULT_WEEKLY_WEEKS   12
#define GC_PUBLISH_DEFAULT_MONTHLY_MONTHS 12

typedef struct gc_publish_opts {
        const char *cluster;  /* may be NULL */
        const char *currency; /* NULL = USD */
        size_t top_n;         /* top pods listed; 0 = 10 */
        const gc_tz *tz;      /* days, weeks and months start at local midnight here; NULL = */
        int64_t utc_offset_s; /* this fixed offset; whole minutes, |x| <= 18 h */
        int64_t daily_retention_days;     /* daily reports kept, today's included; 0 = 35 */
        int64_t weekly_retention_weeks;   /* weekly reports kept, this week's included; 0 = 12 */
        int64_t monthly_retention_months; /* monthly reports kept, this month's too; 0 = 12 */
        size_t max_bytes; /* report.json + report.md at most; 0 = GC_PUBLISH_MAX_BYTES */
        /* Budgets shown in weekly and monthly reports (gc_period_report), may be none. */
        const gc_budget *budgets;
        size_t n_budgets;
        double budget_warn_share;
        /* The advisor's findings for the period rendered (gc_period_report), may be NULL. */
        const char *savings_markdown;
        const char *savings_json;
        const gc_chargeback *chargeback; /* may be NULL: see gc_period_report */
} gc_publish_opts;

typedef enum gc_publish_kind {
        GC_PUBLISH_DAILY = 0,
        GC_PUBLISH_WEEKLY,
        GC_PUBLISH_MONTHLY,
} gc_publish_kind;

typedef struct gc_publish_period {
        gc_publish_kind kind;
        char name[GC_PUBLISH_NAME_MAX]; /* "gpu-cost-report-daily-2026-11-20",
                                           "gpu-cost-report-weekly-2026-w47",
                                           "gpu-cost-report-monthly-2026-11" */
        int64_t start, end;             /* [start, end), from local midnight to local midnight */
        int complete;                   /* end <= now: its figures no longer grow */
        uint64_t hash; /* of the figures its report shows (and the options that shape it): a
                          complete period needs rewriting only when this changes */
} gc_publish_period;

typedef struct gc_publish_plan {
        gc_publish_period *periods; /* days ascending, then weeks, then months */
        size_t n_periods;
        const gc_publish_period *latest_daily;   /* newest complete day, or NULL */
        const gc_publish_period *latest_weekly;  /* newest complete week, or NULL */
        const gc_publish_period *latest_monthly; /* newest complete month, or NULL */
} gc_publish_plan;

/*
 * How far back history must stay whole for the reports within retention at now: the oldest
 * daily or weekly report's start, or the start of the month before the oldest monthly report
 * (its change line), whichever is earlier. The controller folds nothing older away
 * (gc_ledger_fold's keep_since). -EINVAL on options gc_publish_plan_make would refuse.
 */
int gc_publish_history_since(const gc_publish_opts *o, int64_t now, int64_t *ret);

/*
 * From when folded history must stay by the hour (gc_ledger_coarsen's `before`): now - hourly_s
 * as the caller asked, or with hourly_s 0 the default: 35 days back, and never after the start
 * of the previous month in the report zone, so `lastmonth` and this month stay on hours (hourly
 * exports, a UTC export of the report zone's month, a budget's month to date). -EINVAL on
 * options gc_publish_plan_make would refuse or hourly_s < 0.
 */
#define GC_PUBLISH_HOURLY_DEFAULT_S ((int64_t)35 * 86400)
int gc_publish_hourly_since(const gc_publish_opts *o, int64_t now, int64_t hourly_s, int64_t *ret);

/*
 * Every day, ISO week and month within retention (counting back from the one holding now) in
 * which the ledger has any pod time or capacity, with its name, completeness and hash. Costs one
 * ledger query over spans (one pass) for the days, one for the weeks and one for the months.
 * -EINVAL for bad options or now.
 */
int gc_publish_plan_make(const gc_ledger *l, const gc_publish_opts *o, int64_t now,
                         gc_publish_plan *ret);
void gc_publish_plan_release(gc_publish_plan *p); /* accepts a zeroed struct */

typedef struct gc_publish_report {
        gc_buf json;     /* report.json */
        gc_buf md;       /* report.md */
        size_t rows_cut; /* tables were cut to this many rows to fit; 0 = nothing was cut */
        size_t top_n;    /* top pods listed */
} gc_publish_report;

/*
 * The report of one period as the ConfigMaps and /api/v1/reports/... render it: the ledger,
 * the period's kind and span, the options' zone, currency, top pods, budgets, chargeback and
 * savings, at now. The caller may then set the rest (team, notes, max_rows). -EINVAL on options
 * gc_publish_plan_make would refuse.
 */
int gc_publish_report_init(const gc_ledger *l, const gc_publish_opts *o, const gc_publish_period *p,
                           int64_t now, gc_period_report *ret);

/*
 * The ConfigMap data of one period: report.json and report.md together at most max_bytes. When
 * they would be larger, tables are cut to fewer rows (and top pods to as many), re-rendering
 * until they fit, and the report says so in its notes. team = NULL for the cluster's report,
 * else that team's copy (its spend only; idle and capacity are the cluster's and left out).
 * notes are the caller's own sentences (e.g. gc_checkpoint_estimate_note), may be NULL.
 * -E2BIG when even one row per table does not fit.
 */
int gc_publish_render(const gc_ledger *l, const gc_publish_opts *o, const gc_publish_period *p,
                      int64_t now, const char *team, const char *const *notes, size_t n_notes,
                      gc_publish_report *ret);
void gc_publish_report_release(gc_publish_report *r); /* accepts a zeroed struct */

/* The labels of a report ConfigMap (docs/controller.md). */
typedef struct gc_publish_label {
        const char *key;
        const char *value;
} gc_publish_label;

#define GC_PUBLISH_N_LABELS 3
void gc_publish_labels(gc_publish_kind kind, gc_publish_label ret[GC_PUBLISH_N_LABELS]);

/*
 * Reads a report ConfigMap's name: its kind and the start of its period (local midnight in tz;
 * the first form at a fixed offset). -ENOENT for a name that is not a dated report (the -latest
 * copies, anything else).
 */
int gc_publish_name_parse(const char *name, int64_t utc_offset_s, gc_publish_kind *ret_kind,
                          int64_t *ret_start);
int gc_publish_name_parse_tz(const char *name, const gc_tz *tz, gc_publish_kind *ret_kind,
                             int64_t *ret_start);

/*
 * Of the report ConfigMap names that exist, those past retention at now: a dated daily, weekly
 * or monthly report whose period starts before the oldest one kept. The -latest copies and names
 * that are not reports are never chosen. *ret (caller frees the array, not the strings) points
 * into names.
 */
int gc_publish_expired(const gc_publish_opts *o, int64_t now, const char *const *names, size_t n,
                       const char ***ret, size_t *ret_n);

#endif
