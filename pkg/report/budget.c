/* report budgets: spend against a team's, project's or namespace's budget, with its forecast. */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define GC_BUDGET__WARN 0.8

const char *gc_budget_period_name(gc_budget_period p)
{
        return p == GC_BUDGET_WEEKLY ? "weekly" : "monthly";
}

static const struct {
        const char *name;
        gc_dim dim;
} gc_budget__scopes[] = {{"team", GC_DIM_TEAM},
                         {"project", GC_DIM_PROJECT},
                         {"namespace", GC_DIM_NAMESPACE},
                         {"workload", GC_DIM_WORKLOAD}};

#define GC_BUDGET__N_SCOPES (sizeof(gc_budget__scopes) / sizeof(gc_budget__scopes[0]))

const char *gc_budget_scope_name(gc_dim d)
{
        for (size_t i = 0; i < GC_BUDGET__N_SCOPES; i++)
                if (gc_budget__scopes[i].dim == d)
                        return gc_budget__scopes[i].name;
        return "namespace";
}

int gc_budget_scope_parse(const char *s, gc_dim *ret)
{
        for (size_t i = 0; s && i < GC_BUDGET__N_SCOPES; i++)
                if (strcmp(gc_budget__scopes[i].name, s) == 0) {
                        if (ret)
                                *ret = gc_budget__scopes[i].dim;
                        return 0;
                }
        return -EINVAL;
}

const char *gc_budget_workload_ns(const char *workload, size_t *ret_len)
{
        const char *a = workload ? strchr(workload, '/') : NULL;
        const char *e = a ? strchr(a + 1, '/') : NULL;

        if (!a || a == workload || !e || e == a + 1 || !e[1] || strchr(e + 1, '/'))
                return NULL;
        if (ret_len)
                *ret_len = (size_t)(e - a - 1);
        return a + 1;
}

static int gc_budget__scope_known(gc_dim d)
{
        for (size_t i = 0; i < GC_BUDGET__N_SCOPES; i++)
                if (gc_budget__scopes[i].dim == d)
                        return 1;
        return 0;
}

static int gc_budget__valid(const gc_budget *b)
{
        return b && b->name && *b->name && gc_budget__scope_known(b->dim) &&
               (b->period == GC_BUDGET_MONTHLY || b->period == GC_BUDGET_WEEKLY) &&
               isfinite(b->amount) && b->amount > 0;
}

int gc_budget_status_of(const gc_budget *b, double spent, int64_t start, int64_t end, int64_t now,
                        double warn_share, gc_budget_status *ret)
{
        gc_budget_status st;
        int64_t up_to;

        if (!ret || !gc_budget__valid(b) || end <= start || now < 0 || !isfinite(spent))
                return -EINVAL;
        if (warn_share == 0)
                warn_share = GC_BUDGET__WARN;
        if (!(warn_share > 0 && warn_share < 1))
                return -EINVAL;
        memset(&st, 0, sizeof(st));
        st.start = start;
        st.end = end;
        st.spent = spent;
        /* The forecast: the average rate of the elapsed part, for the part still to come. */
        up_to = now < start ? start : now > end ? end : now;
        st.forecast = st.spent;
        if (up_to > start && up_to < end)
                st.forecast += st.spent / (double)(up_to - start) * (double)(end - up_to);
        st.share = st.spent / b->amount;
        st.forecast_share = st.forecast / b->amount;
        st.state = st.share >= 1            ? GC_BUDGET_OVER
                   : st.share >= warn_share ? GC_BUDGET_WARN
                                            : GC_BUDGET_OK;
        st.forecast_over = st.forecast > b->amount;
        *ret = st;
        return 0;
}

int gc_budget_eval(const gc_ledger *l, const gc_budget *b, int64_t start, int64_t end, int64_t now,
                   double warn_share, gc_budget_status *ret)
{
        gc_cost_summary s;
        gc_query q;
        int r;

        if (!l || !ret || !gc_budget__valid(b) || end <= start || now < 0)
                return -EINVAL;
        memset(&q, 0, sizeof(q));
        q.start = start;
        q.end = end;
        q.now = now;
        q.filter[b->dim] = b->name;
        r = gc_ledger_query(l, &q, &s);
        if (r < 0)
                return r;
        r = gc_budget_status_of(b, s.total.cost, start, end, now, warn_share, ret);
        gc_cost_summary_free(&s);
        return r;
}

int gc_budget_eval_now(const gc_ledger *l, const gc_budget *b, const gc_tz *tz, int64_t now,
                       double warn_share, gc_budget_status *ret)
{
        gc_tz_unit u;

        if (!gc_budget__valid(b))
                return -EINVAL;
        u = b->period == GC_BUDGET_WEEKLY ? GC_TZ_WEEK : GC_TZ_MONTH;
        return gc_budget_eval(l, b, gc_tz_period_start(tz, u, now), gc_tz_period_add(tz, u, now, 1),
                              now, warn_share, ret);
}

unsigned gc_budget_crossed(const gc_budget_status *st)
{
        unsigned m = 0;

        if (!st)
                return 0;
        if (st->state != GC_BUDGET_OK)
                m |= GC_BUDGET_AT_WARN;
        if (st->state == GC_BUDGET_OVER)
                m |= GC_BUDGET_AT_OVER;
        if (st->forecast_over)
                m |= GC_BUDGET_AT_FORECAST;
        return m;
}

int gc_budget_alert_make(const gc_budget *b, const gc_budget_status *st, unsigned threshold,
                         double warn_share, const char *currency, const gc_tz *tz,
                         gc_budget_alert *ret)
{
        const char *scope, *per, *tag;
        char date[16];
        uint64_t h;
        int64_t start;

        if (!st || !ret || !gc_budget__valid(b) ||
            (threshold != GC_BUDGET_AT_WARN && threshold != GC_BUDGET_AT_OVER &&
             threshold != GC_BUDGET_AT_FORECAST))
                return -EINVAL;
        if (warn_share == 0)
                warn_share = GC_BUDGET__WARN;
        if (!currency || !*currency)
                currency = "USD";
        scope = gc_budget_scope_name(b->dim);
        per = gc_budget_period_name(b->period);
        memset(ret, 0, sizeof(*ret));
        /* The name: the budget, its period and the threshold, hashed into a DNS label. */
        start = st->start;
        h = gc_hash(scope, strlen(scope) + 1, 0x6275646765ULL);
        h = gc_hash(b->name, strlen(b->name) + 1, h);
        h = gc_hash(per, strlen(per) + 1, h);
        h = gc_hash(&start, sizeof(start), h);
        tag = threshold == GC_BUDGET_AT_WARN   ? "warn"
              : threshold == GC_BUDGET_AT_OVER ? "over"
                                               : "forecast";
        snprintf(ret->name, sizeof(ret->name), "gpu-cost-budget-%016llx-%s", (unsigned long long)h,
                 tag);
        snprintf(ret->reason, sizeof(ret->reason), "%s",
                 threshold == GC_BUDGET_AT_WARN   ? "GpuBudgetWarning"
                 : threshold == GC_BUDGET_AT_OVER ? "GpuBudgetExceeded"
                                                  : "GpuBudgetForecastExceeded");
        gc_tz_date(tz, st->start, date, NULL);
        if (threshold == GC_BUDGET_AT_FORECAST)
                snprintf(ret->message, sizeof(ret->message),
                         "The %s GPU budget of %s %.200s (%.2f %s, the %s from %s, %s) is forecast "
                         "to be overspent: %.2f %s spent so far, %.2f %s (%.1f%%) by the "
                         "period's end at the average rate so far.",
                         per, scope, b->name, b->amount, currency,
                         b->period == GC_BUDGET_WEEKLY ? "week" : "month", date, gc_tz_name(tz),
                         st->spent, currency, st->forecast, currency,
                         (double)llround(st->forecast_share * 1000.0) / 10.0);
        else
                snprintf(ret->message, sizeof(ret->message),
                         "The %s GPU budget of %s %.200s (%.2f %s, the %s from %s, %s) is %.1f%% "
                         "spent (%.2f %s), past %.0f%%; forecast %.2f %s by the period's end.",
                         per, scope, b->name, b->amount, currency,
                         b->period == GC_BUDGET_WEEKLY ? "week" : "month", date, gc_tz_name(tz),
                         (double)llround(st->share * 1000.0) / 10.0, st->spent, currency,
                         threshold == GC_BUDGET_AT_OVER ? 100.0 : warn_share * 100.0, st->forecast,
                         currency);
        return 0;
}
