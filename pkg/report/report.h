/* report: cost summaries and period (daily, weekly, monthly) reports as JSON, Markdown, tables. */
#ifndef GC_REPORT_H
#define GC_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "../ledger/ledger.h"
#include "../tz/tz.h"
#include "../util/util.h"

/*
 * The one JSON shape for cost summaries (docs/report.md), used by `gpu-cost analyze --format
 * json`, the REST API and report.json:
 *
 * {"window":{"start":"...","end":"..."},"by":["team","project"],"currency":"USD",
 *  "groups":[{"keys":{"team":"...","project":"..."},"gpu_hours":0.0,"gpu_seconds":0.0,
 *             "cost":0.0,"cost_usd":0.0,"pods":0}],
 *  "idle":{"gpu_hours":0.0,"cost":0.0,"cost_usd":0.0,"nodes":[{"node":"...","model":"...",
 *          "capacity_type":"...","gpu_hours":0.0,"cost":0.0,"cost_usd":0.0}]},
 *  "unattributed":{"gpu_hours":0.0,"cost":0.0,"cost_usd":0.0},
 *  "capacity":{"gpu_hours":0.0,"cost":0.0,"cost_usd":0.0},
 *  "total":{"gpu_hours":0.0,"cost":0.0,"cost_usd":0.0,"pods":0}}
 * (money in the catalog currency; each *_usd member repeats the one before it, its old name,
 * for one release)
 *
 * gpu_hours are GPU-equivalent hours; figures keep full double precision (%.17g trimmed), money
 * is rounded only in the text and Markdown forms.
 */

/* Appends the summary as a JSON object to out. */
int gc_report_summary_json(const gc_cost_summary *s, const char *currency, gc_buf *out);
/*
 * The same with chargeback (cb NULL or mode none: exactly the above). Each group gains
 * "shared_usd" (its share of idle capacity and unattributed spend, gc_chargeback_ratios) and
 * "charged_usd" (its bill: cost + shared_usd, or 0 for an unattributed group whose cost was
 * shared), and the summary a "chargeback" member {"mode","shared_usd","charged_usd"} whose
 * charged_usd, the sum of the bills, is total + idle: the capacity's cost when no node is
 * over-committed. -EINVAL when the summary is not grouped by team (or bad weights).
 */
int gc_report_summary_json_chargeback(const gc_cost_summary *s, const char *currency,
                                      const gc_chargeback *cb, gc_buf *out);
/* An aligned text table for terminals: one row per group, then idle, unattributed, total. */
int gc_report_summary_table(const gc_cost_summary *s, const char *currency, gc_buf *out);
/* The same as a Markdown table. */
int gc_report_summary_markdown(const gc_cost_summary *s, const char *currency, gc_buf *out);

/*
 * An amount of money as every human-readable figure of a report writes it: rounded to the cent,
 * thousands separated, "$1,234.56" for USD (or no currency), "1,234.56 EUR" for another catalog
 * currency (the code cut to 8 printable characters). The one formatter for report text, tables
 * and the advisor's Savings section, so one report never writes money two ways.
 */
#define GC_REPORT_MONEY_LEN 64
void gc_report_money(double amount, const char *currency, char out[GC_REPORT_MONEY_LEN]);

/* ---- budgets ----------------------------------------------------------------------------------
 */

typedef enum gc_budget_period {
        GC_BUDGET_MONTHLY = 0, /* calendar months in the report zone */
        GC_BUDGET_WEEKLY,      /* ISO weeks in the report zone */
} gc_budget_period;

/* An amount a team, project or namespace may spend per period, in the catalog's currency. */
typedef struct gc_budget {
        gc_dim dim;       /* GC_DIM_TEAM, GC_DIM_PROJECT or GC_DIM_NAMESPACE */
        const char *name; /* the team, project or namespace */
        gc_budget_period period;
        double amount; /* > 0 */
} gc_budget;

typedef enum gc_budget_state {
        GC_BUDGET_OK = 0,
        GC_BUDGET_WARN, /* spent at least the warning share */
        GC_BUDGET_OVER, /* spent at least the amount */
} gc_budget_state;

typedef struct gc_budget_status {
        int64_t start, end;    /* the budget's period holding now */
        double spent;          /* cost in [start, min(now, end)) */
        double forecast;       /* spent, plus the period's average rate so far for the rest */
        double share;          /* spent / amount */
        double forecast_share; /* forecast / amount */
        gc_budget_state state; /* of spent against amount and warn_share */
        int forecast_over;     /* forecast > amount */
} gc_budget_status;

/* "monthly"/"weekly", and "team"/"project"/"namespace"/"workload" for the budget's dimension. */
const char *gc_budget_period_name(gc_budget_period p);
const char *gc_budget_scope_name(gc_dim d);
/* A scope's name to its dimension; -EINVAL for any other name. */
int gc_budget_scope_parse(const char *s, gc_dim *ret);
/*
 * The namespace of a workload "Kind/namespace/name" (not NUL-terminated: its length in
 * *ret_len when given), or NULL when the name is not of three non-empty parts.
 */
const char *gc_budget_workload_ns(const char *workload, size_t *ret_len);

/*
 * The budget's standing in [start, end) at now (open intervals accrue up to now): spent, the
 * forecast to end, shares and state against warn_share (0 < warn_share < 1). -EINVAL for a bad
 * budget or window.
 */
int gc_budget_eval(const gc_ledger *l, const gc_budget *b, int64_t start, int64_t end, int64_t now,
                   double warn_share, gc_budget_status *ret);
/* The standing from the spend in [start, end) already known (one query for many budgets). */
int gc_budget_status_of(const gc_budget *b, double spent, int64_t start, int64_t end, int64_t now,
                        double warn_share, gc_budget_status *ret);
/* The same over the budget's own period (month or ISO week in tz) holding now. */
int gc_budget_eval_now(const gc_ledger *l, const gc_budget *b, const gc_tz *tz, int64_t now,
                       double warn_share, gc_budget_status *ret);

/* The thresholds an alert is raised at, as bits. */
#define GC_BUDGET_AT_WARN     1u /* spent >= warn_share of the amount */
#define GC_BUDGET_AT_OVER     2u /* spent >= the amount */
#define GC_BUDGET_AT_FORECAST 4u /* the forecast to the period's end > the amount */

/* The thresholds the standing has crossed (a budget over its amount has crossed the warning). */
unsigned gc_budget_crossed(const gc_budget_status *st);

typedef struct gc_budget_alert {
        char name[80];     /* "gpu-cost-budget-<16 hex>-warn": one per budget, period, threshold */
        char reason[40];   /* GpuBudgetWarning, GpuBudgetExceeded, GpuBudgetForecastExceeded */
        char message[640]; /* what was spent of what, in which period, and the forecast */
} gc_budget_alert;

/*
 * The Event for one crossed threshold (one bit of gc_budget_crossed): a name that is the same for
 * the same budget, period and threshold (so it is emitted once), a reason and a message naming
 * the amounts in currency and the period's first day in tz. -EINVAL for a bad threshold.
 */
int gc_budget_alert_make(const gc_budget *b, const gc_budget_status *st, unsigned threshold,
                         double warn_share, const char *currency, const gc_tz *tz,
                         gc_budget_alert *ret);

typedef struct gc_period_report {
        const gc_ledger *ledger;
        const char *kind;    /* "daily", "weekly" or "monthly" (the previous period is the
                                calendar one before when [start, end) is one); else any */
        const char *title;   /* e.g. "GPU spend, week 2026-W47"; NULL = made from kind */
        const char *cluster; /* optional cluster name */
        const char *currency;
        int64_t start, end;   /* the period, [start, end) */
        int64_t now;          /* open intervals accrue to min(end, now) */
        size_t top_n;         /* top pods listed; 0 = 10 */
        const gc_diag *notes; /* input warnings to state in the report (may be NULL) */
        /* More sentences to state (estimates, cuts), may be NULL; unlike the input warnings they
         * are the program's own words and go into Markdown unescaped (`code` stays code). */
        const char *const *extra_notes;
        size_t n_extra_notes;
        /* For the controller's report ConfigMaps; all zero keeps the behaviour described above. */
        const gc_tz *tz;      /* the zone whose local days the report counts (dates, per-day
                                 rows, ISO week, month, title); NULL = utc_offset_s */
        int64_t utc_offset_s; /* without tz: days start at 00:00 at this fixed offset east of
                                 UTC; whole minutes, at most 18 h */
        const char *team;     /* only this team's spend; idle and capacity, which belong to the
                                 whole cluster, are left out (null in JSON), as the notes say */
        size_t max_rows;      /* each table lists at most this many rows and sums the rest in one
                                 last row, and the report says so; 0 = every row */
        /*
         * The advisor's findings (pkg/advisor), both optional. savings_markdown is the body of
         * the "Savings" section (Markdown, inserted as given under a "## Savings" heading, before
         * the notes); savings_json is a JSON value inserted as given as the "savings" member
         * (null when NULL). The caller vouches that it is valid JSON.
         */
        const char *savings_markdown;
        const char *savings_json;
        /* Chargeback (may be NULL, or mode none: no such section). Otherwise the report gains a
         * "Chargeback" section and a "chargeback" JSON member: per team its spend, its share of
         * idle capacity and unattributed spend (gc_chargeback_ratios over the whole period) and
         * its bill; the bills add up to total + idle, the capacity's cost. Left out of a team's
         * own report (idle is the cluster's). */
        const gc_chargeback *chargeback;
        /*
         * Budgets: those whose period matches the report's kind (monthly budgets in a monthly
         * report, weekly in a weekly one; a team's copy only its own team's) get a "Budgets"
         * section with spend, share, forecast and state. warn_share 0 = 0.8.
         */
        const gc_budget *budgets;
        size_t n_budgets;
        double budget_warn_share;
} gc_period_report;

/*
 * A report a team lead reads: total and change against the previous period of the same length,
 * spend by team, by team and project, by GPU model and capacity type, spend per day, idle
 * capacity per node, unattributed spend, top pods, and the notes. Markdown and JSON carry the
 * same figures; the JSON's "summary" member is the cost-summary shape grouped by team, project.
 * A period not over at `now` is marked partial, with the time its figures run to and a forecast
 * to its end (the average rate so far, stated as the method). -EINVAL for a bad utc_offset_s or
 * an empty team.
 */
int gc_report_period_markdown(const gc_period_report *r, gc_buf *out);
int gc_report_period_json(const gc_period_report *r, gc_buf *out);

/* ISO 8601 week of a time: year and week number, and the Monday 00:00 UTC that starts it. */
void gc_iso_week(int64_t t, int *ret_year, int *ret_week, int64_t *ret_monday);

#endif
