/* metrics: /metrics in the Prometheus text format (costs, OpenCost's GPU names, health). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "promtext/promtext.h"

/*
 * The names are fixed here and only label values come from data (namespaces, teams, nodes):
 * pkg/promtext escapes them and formats the values, as it does for everything we write in the
 * format. The label lists are written {name, value} (NULL value: left out).
 */
typedef struct gc__lbl {
        const char *name;
        const char *value;
} gc__lbl;

#define GC__MAX_LABELS 8

static int gc__head(gc_buf *b, const char *name, const char *type, const char *help)
{
        return gc_prom_write_header(b, name, type, help);
}

static int gc__sample(gc_buf *b, const char *name, const gc__lbl *l, size_t n, double v)
{
        gc_prom_label pl[GC__MAX_LABELS];

        /* A caller's bug; failed as the buffer's own error, so the document's one check sees it. */
        if (n > GC__MAX_LABELS) {
                if (!b->err)
                        b->err = -E2BIG;
                return b->err;
        }
        for (size_t i = 0; i < n; i++) {
                pl[i].name = l[i].name;
                pl[i].value = l[i].value;
                pl[i].value_len = l[i].value ? strlen(l[i].value) : 0;
        }
        return gc_prom_write_sample(b, name, pl, n, v);
}

/* A family with one unlabelled sample. */
static int gc__one(gc_buf *b, const char *name, const char *type, const char *help, double v)
{
        gc__head(b, name, type, help);
        return gc__sample(b, name, NULL, 0, v);
}

static const char *gc__nz(const char *s)
{
        return s ? s : "";
}

/*
 * A counter's served value: never below what this series served before (see docs/api.md); v is
 * counted from anchor.
 */
static double gc__mono(gc__api_ctx *x, int64_t anchor, const char *name, const char *l1,
                       const char *l2, const char *l3, double v)
{
        char key[1024];

        snprintf(key, sizeof(key), "%s\x1f%s\x1f%s\x1f%s", name, l1 ? l1 : "", l2 ? l2 : "",
                 l3 ? l3 : "");
        return gc__api_counter(x->a, anchor, key, v);
}

/*
 * gpu_cost_spend_total (and its alias), gpu_cost_gpu_hours_total and the idle pair: what the ledger
 * says about [anchor, now), held monotonic per series.
 */
static int gc__costs(gc__api_ctx *x, gc_buf *b, const gc_snapshot *s)
{
        gc_query q = {0};
        gc_cost_summary sum = {0};
        int r;

        q.start = gc__api_counter_anchor(x->a, s);
        q.end = s->p.now;
        q.now = s->p.now;
        q.by[q.n_by++] = GC_DIM_NAMESPACE;
        q.by[q.n_by++] = GC_DIM_TEAM;
        q.by[q.n_by++] = GC_DIM_PROJECT;
        r = gc_ledger_query(s->p.ledger, &q, &sum);
        if (r < 0)
                return r;
        gc__one(b, "gpu_cost_counters_start_time_seconds", "gauge",
                "Unix time the cost counters count from (the controller's start, moved "
                "forward every 28 days at most: a counter reset).",
                (double)q.start);
        /* gpu_cost_spend_total, and gpu_cost_usd_total, its name before money became
         * currency-neutral, kept for one release (docs/api.md, "Renamed fields"): the same
         * counters, marked once. */
        for (size_t f = 0; f < 2; f++) {
                const char *name = f == 0 ? "gpu_cost_spend_total" : "gpu_cost_usd_total";

                gc__head(b, name, "counter",
                         f == 0 ? "GPU cost in the catalog currency since the counters started "
                                  "(docs/api.md)."
                                : "Deprecated alias of gpu_cost_spend_total (removed in the next "
                                  "release).");
                /* gc__mono records what is served: no series is marked once the document has
                 * failed. */
                for (size_t i = 0; !b->err && i < sum.n_rows; i++) {
                        const gc_cost_row *w = &sum.rows[i];
                        gc__lbl l[] = {{"cluster", s->cluster},
                                       {"namespace", gc__nz(w->keys[GC_DIM_NAMESPACE])},
                                       {"team", gc__nz(w->keys[GC_DIM_TEAM])},
                                       {"project", gc__nz(w->keys[GC_DIM_PROJECT])}};

                        gc__sample(b, name, l, 4,
                                   gc__mono(x, q.start, "gpu_cost_usd_total", l[1].value,
                                            l[2].value, l[3].value, w->cost));
                }
        }
        gc__head(b, "gpu_cost_gpu_hours_total", "counter",
                 "GPU-equivalent hours held since the counters started.");
        for (size_t i = 0; !b->err && i < sum.n_rows; i++) {
                const gc_cost_row *w = &sum.rows[i];
                gc__lbl l[] = {{"cluster", s->cluster},
                               {"namespace", gc__nz(w->keys[GC_DIM_NAMESPACE])},
                               {"team", gc__nz(w->keys[GC_DIM_TEAM])},
                               {"project", gc__nz(w->keys[GC_DIM_PROJECT])}};

                gc__sample(b, "gpu_cost_gpu_hours_total", l, 4,
                           gc__mono(x, q.start, "gpu_cost_gpu_hours_total", l[1].value, l[2].value,
                                    l[3].value, w->gpu_seconds / 3600.0));
        }
        for (size_t f = 0; f < 2; f++) {
                const char *name = f == 0 ? "gpu_cost_idle_spend_total" : "gpu_cost_idle_usd_total";

                gc__head(b, name, "counter",
                         f == 0 ? "Cost of allocatable GPUs no pod held, per node, since the "
                                  "counters started."
                                : "Deprecated alias of gpu_cost_idle_spend_total (removed in the "
                                  "next release).");
                for (size_t i = 0; !b->err && i < sum.n_idle_nodes; i++) {
                        gc__lbl l[] = {{"cluster", s->cluster},
                                       {"node", gc__nz(sum.idle_nodes[i].keys[GC_DIM_NODE])}};

                        gc__sample(b, name, l, 2,
                                   gc__mono(x, q.start, "gpu_cost_idle_usd_total", l[1].value, NULL,
                                            NULL, sum.idle_nodes[i].cost));
                }
        }
        gc__head(b, "gpu_cost_idle_gpu_hours_total", "counter",
                 "Allocatable GPU-equivalent hours no pod held, per node.");
        for (size_t i = 0; !b->err && i < sum.n_idle_nodes; i++) {
                gc__lbl l[] = {{"cluster", s->cluster},
                               {"node", gc__nz(sum.idle_nodes[i].keys[GC_DIM_NODE])}};

                gc__sample(b, "gpu_cost_idle_gpu_hours_total", l, 2,
                           gc__mono(x, q.start, "gpu_cost_idle_gpu_hours_total", l[1].value, NULL,
                                    NULL, sum.idle_nodes[i].gpu_seconds / 3600.0));
        }
        gc_cost_summary_free(&sum);
        /* The same spend in the usage basis (docs/ledger.md): shared GPUs split by measured
         * use. A sample arriving late can move spend between teams after the fact; the
         * counter holds, and catches up as the spend grows again. */
        q.basis = GC_BASIS_USAGE;
        r = gc_ledger_query(s->p.ledger, &q, &sum);
        if (r < 0)
                return r;
        gc__head(b, "gpu_cost_usage_spend_total", "counter",
                 "GPU cost in the usage basis (shared GPUs split by measured use) since the "
                 "counters started; its sum is gpu_cost_spend_total's.");
        for (size_t i = 0; !b->err && i < sum.n_rows; i++) {
                const gc_cost_row *w = &sum.rows[i];
                gc__lbl l[] = {{"cluster", s->cluster},
                               {"namespace", gc__nz(w->keys[GC_DIM_NAMESPACE])},
                               {"team", gc__nz(w->keys[GC_DIM_TEAM])},
                               {"project", gc__nz(w->keys[GC_DIM_PROJECT])}};

                gc__sample(b, "gpu_cost_usage_spend_total", l, 4,
                           gc__mono(x, q.start, "gpu_cost_usage_spend_total", l[1].value,
                                    l[2].value, l[3].value, w->cost));
        }
        gc_cost_summary_free(&sum);
        return b->err;
}

/* Nodes from the snapshot's table, or the ledger's open capacities when there is none. */
typedef struct gc__nodes_ctx {
        gc_buf *b;
        const gc_snapshot *s;
        int count; /* 0: node_gpu_hourly_cost, 1: node_gpu_count */
} gc__nodes_ctx;

static int gc__cap_row(void *ud, const gc_capacity *c)
{
        gc__nodes_ctx *x = ud;

        if (c->end != GC_OPEN && c->end <= x->s->p.now)
                return 0;
        if (x->count) {
                gc__lbl l[] = {{"cluster", x->s->cluster}, {"node", c->node}};

                return gc__sample(x->b, "node_gpu_count", l, 2, c->geq);
        } else {
                gc__lbl l[] = {
                    {"cluster", x->s->cluster},  {"node", c->node},
                    {"instance_type", ""},       {"region", ""},
                    {"model", gc__nz(c->model)}, {"capacity_type", gc__nz(c->capacity_type)}};

                return gc__sample(x->b, "node_gpu_hourly_cost", l, 6, c->price_per_gpu_hour);
        }
}

static int gc__nodes(gc_buf *b, const gc_snapshot *s)
{
        gc__nodes_ctx x = {b, s, 0};
        gc_ledger_visitor v = {0};
        int r;

        v.capacity = gc__cap_row;
        gc__head(b, "node_gpu_hourly_cost", "gauge",
                 "Price of one GPU-hour on the node, in the catalog currency (OpenCost's "
                 "name).");
        for (size_t i = 0; i < s->p.n_nodes; i++) {
                const gc_api_node *n = &s->p.nodes[i];
                gc__lbl l[] = {{"cluster", s->cluster},
                               {"node", gc__nz(n->name)},
                               {"instance_type", gc__nz(n->instance_type)},
                               {"region", gc__nz(n->region)},
                               {"model", gc__nz(n->model)},
                               {"capacity_type", gc__nz(n->capacity_type)}};

                gc__sample(b, "node_gpu_hourly_cost", l, 6, n->price_per_gpu_hour);
        }
        /* The walk can fail on its own; after the buffer's error it would only take time. */
        if (!b->err && !s->p.nodes && (r = gc_ledger_visit(s->p.ledger, &v, &x)) < 0)
                return r;
        gc__head(b, "node_gpu_count", "gauge", "Allocatable GPUs of the node (OpenCost's name).");
        for (size_t i = 0; i < s->p.n_nodes; i++) {
                gc__lbl l[] = {{"cluster", s->cluster}, {"node", gc__nz(s->p.nodes[i].name)}};

                gc__sample(b, "node_gpu_count", l, 2, s->p.nodes[i].gpus);
        }
        x.count = 1;
        if (!b->err && !s->p.nodes && (r = gc_ledger_visit(s->p.ledger, &v, &x)) < 0)
                return r;
        return b->err;
}

static int gc__containers(gc_buf *b, const gc_snapshot *s)
{
        gc__head(b, "container_gpu_allocation", "gauge",
                 "GPU-equivalents held by a running pod's container (OpenCost's name).");
        for (size_t i = 0; i < s->p.n_pods; i++) {
                const gc_api_pod *p = &s->p.pods[s->pods_by_name[i]];
                gc__lbl l[] = {{"cluster", s->cluster},
                               {"namespace", gc__nz(p->ns)},
                               {"pod", gc__nz(p->name)},
                               {"container", gc__nz(p->container)},
                               {"node", gc__nz(p->node)}};

                if (p->end != GC_OPEN)
                        continue;
                gc__sample(b, "container_gpu_allocation", l, 5, p->geq);
        }
        return b->err;
}

static const char *const gc__resources[GC_API_RESOURCES] = {
    "namespaces",     "nodes",         "pods",        "resourceslices",
    "resourceclaims", "deviceclasses", "replicasets", "jobs"};

static const char *gc__resource(const gc_api_health *h, int k)
{
        return h->resources[k] ? h->resources[k] : gc__resources[k];
}

/* One family of one unlabelled sample, written when `present`. */
typedef struct gc__gauge {
        const char *name, *type, *help;
        double v;
        int present;
} gc__gauge;

/* Per watched resource: restarts, relists, the age of the last event (once there was one). */
static int gc__watches(gc_buf *b, const gc_snapshot *s)
{
        const gc_api_health *h = &s->p.health;
        double now = (double)s->p.now;
        int n_res = h->n_resources > 0 && h->n_resources <= GC_API_RESOURCES ? h->n_resources : 3;
        const struct {
                const char *name, *type, *help;
        } per_res[] = {
            {"gpu_cost_watch_restarts_total", "counter",
             "Watches of the resource started again after they ended."},
            {"gpu_cost_relists_total", "counter", "Full LISTs of the resource after the first."},
            {"gpu_cost_last_event_age_seconds", "gauge",
             "Seconds from the last event of the resource to the snapshot; absent before the "
             "first."},
        };

        for (size_t f = 0; f < sizeof(per_res) / sizeof(per_res[0]); f++) {
                gc__head(b, per_res[f].name, per_res[f].type, per_res[f].help);
                for (int k = 0; k < n_res; k++) {
                        gc__lbl l[] = {{"resource", gc__resource(h, k)}};
                        double v = f == 0   ? (double)h->watch_restarts[k]
                                   : f == 1 ? (double)h->relists[k]
                                            : now - (double)h->last_event_at[k];

                        if (f < 2 || h->last_event_at[k] > 0)
                                gc__sample(b, per_res[f].name, l, 1, v);
                }
        }
        return b->err;
}

static int gc__health(gc_buf *b, const gc_snapshot *s)
{
        const gc_api_health *h = &s->p.health;
        const gc_ledger_stats *ls = &s->lstats;
        double now = (double)s->p.now;
        const gc__gauge one[] = {
            {"gpu_cost_checkpoint_age_seconds", "gauge",
             "Seconds from the last checkpoint written to the snapshot.",
             now - (double)h->checkpoint_at, h->checkpoint_at > 0},
            {"gpu_cost_checkpoint_errors_total", "counter", "Checkpoint writes that failed.",
             (double)h->checkpoint_errors, 1},
            {"gpu_cost_checkpoint_lost", "gauge",
             "1 when checkpoint ConfigMaps existed but no generation was complete: the ledger "
             "started empty.",
             (double)h->checkpoint_lost, 1},
            {"gpu_cost_blind_span_seconds", "gauge",
             "Length of the span the controller could not see (a resume point past the API "
             "server's event window); 0 when none.",
             (double)(h->blind_to - h->blind_from), 1},
            {"gpu_cost_blind_span_bound_cost", "gauge",
             "The most GPU cost the blind span may hide: GPUs free on the nodes in it, priced "
             "(catalog currency).",
             h->blind_bound_cost, 1},
            {"gpu_cost_report_writes_total", "counter", "Report ConfigMaps written.",
             (double)h->report_writes, 1},
            {"gpu_cost_report_errors_total", "counter", "Report ConfigMap writes that failed.",
             (double)h->report_errors, 1},
            {"gpu_cost_ledger_fold_failures_total", "counter",
             "Folds refused at folded history's row bound (--max-history-rows): intervals stay "
             "unfolded.",
             (double)h->fold_failures, 1},
            {"gpu_cost_errors_total", "counter", "Errors logged.", (double)h->errors, 1},
            {"gpu_cost_ready", "gauge",
             "1 when the controller has synced and serves current figures.", h->ready ? 1 : 0, 1},
            {"gpu_cost_leader", "gauge", "1 when this replica holds the leader lease.",
             h->leader ? 1 : 0, 1},
            {"gpu_cost_demo", "gauge", "1 when serving the built-in demo data.", h->demo ? 1 : 0,
             1},
            {"gpu_cost_start_time_seconds", "gauge", "Unix time the controller started.",
             (double)h->started_at, h->started_at > 0},
            {"gpu_cost_snapshot_timestamp_seconds", "gauge",
             "Unix time the figures served stand for.", now, 1},
            {"gpu_cost_usage_age_seconds", "gauge",
             "Seconds from the last successful usage fetch to the snapshot.",
             now - (double)h->usage_at, h->usage_at > 0},
            {"gpu_cost_usage_errors_total", "counter", "Usage fetches that failed.",
             (double)h->usage_errors, 1},
            {"gpu_cost_usage_samples_total", "counter", "GPU usage samples taken in.",
             (double)h->usage_samples, 1},
            {"gpu_cost_pods", "gauge", "GPU pods in the snapshot.", (double)s->p.n_pods, 1},
            {"gpu_cost_ledger_intervals", "gauge",
             "Pod intervals in the ledger, exact to the second.", (double)ls->intervals, 1},
            {"gpu_cost_ledger_open_intervals", "gauge", "Pod intervals still open (GPUs held now).",
             (double)ls->open_intervals, 1},
            {"gpu_cost_ledger_rollup_rows", "gauge", "Hourly rollup rows in the ledger.",
             (double)ls->rollup_rows, 1},
            {"gpu_cost_ledger_period_rows", "gauge",
             "Rows of period history (top pods, the rest and node rows, per day, week and "
             "month).",
             (double)ls->period_rows, 1},
            {"gpu_cost_ledger_hourly_since_timestamp_seconds", "gauge",
             "Unix time before which folded history is kept only by whole day, week and month "
             "(--hourly-history): other windows reaching before it are refused.",
             (double)gc_ledger_coarse_to(s->p.ledger),
             gc_ledger_coarse_to(s->p.ledger) != INT64_MIN},
            {"gpu_cost_ledger_bytes", "gauge",
             "Memory the controller's ledger holds, approximately.",
             (double)(h->ledger_bytes ? h->ledger_bytes : ls->bytes), 1},
            {"gpu_cost_pool_bytes", "gauge", "Memory of the interned strings the ledger points at.",
             (double)h->pool_bytes, 1},
            {"gpu_cost_pool_strings", "gauge",
             "Interned strings (uids, names, label values) something still holds.",
             (double)h->pool_strings, 1},
            {"gpu_cost_pool_sweeps_total", "counter",
             "Sweeps of the string pool (strings nothing holds any more are freed).",
             (double)h->pool_sweeps, 1},
            {"gpu_cost_pool_freed_strings_total", "counter", "Strings the pool's sweeps freed.",
             (double)h->pool_freed, 1},
        };

        gc__watches(b, s);
        for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++)
                if (one[i].present)
                        gc__one(b, one[i].name, one[i].type, one[i].help, one[i].v);
        return b->err;
}

static int gc__findings(gc_buf *b, const gc_snapshot *s)
{
        gc__head(b, "gpu_cost_findings", "gauge",
                 "The advisor's current findings, per kind and team.");
        for (size_t i = 0; i < s->p.n_finding_stats; i++) {
                const gc_api_finding_stat *f = &s->p.finding_stats[i];
                gc__lbl l[] = {{"kind", gc__nz(f->kind)}, {"team", gc__nz(f->team)}};

                gc__sample(b, "gpu_cost_findings", l, 2, (double)f->count);
        }
        gc__head(b, "gpu_cost_potential_savings_monthly", "gauge",
                 "What acting on the findings would save a month, in the catalog "
                 "currency.");
        for (size_t i = 0; i < s->p.n_finding_stats; i++) {
                const gc_api_finding_stat *f = &s->p.finding_stats[i];
                gc__lbl l[] = {{"kind", gc__nz(f->kind)}, {"team", gc__nz(f->team)}};

                gc__sample(b, "gpu_cost_potential_savings_monthly", l, 2, f->monthly_savings);
        }
        return b->err;
}

/* The spend of every budget's current period: one query per period kind and scope in use. */
static int gc__budget_spent(const gc_snapshot *s, double *spent)
{
        const gc_publish_opts *c = &s->p.settings.report;
        static const gc_dim dims[] = {GC_DIM_TEAM, GC_DIM_PROJECT, GC_DIM_NAMESPACE,
                                      GC_DIM_WORKLOAD};
        int r = 0;

        for (int per = GC_BUDGET_MONTHLY; r == 0 && per <= GC_BUDGET_WEEKLY; per++) {
                gc_tz_unit u = per == GC_BUDGET_WEEKLY ? GC_TZ_WEEK : GC_TZ_MONTH;

                for (size_t d = 0; r == 0 && d < sizeof(dims) / sizeof(dims[0]); d++) {
                        gc_cost_summary sum = {0};
                        gc_query q = {0};
                        int used = 0;

                        for (size_t i = 0; i < c->n_budgets; i++)
                                used |= c->budgets[i].period == (gc_budget_period)per &&
                                        c->budgets[i].dim == dims[d];
                        if (!used)
                                continue;
                        q.start = gc_tz_period_start(c->tz, u, s->p.now);
                        q.end = gc_tz_period_add(c->tz, u, s->p.now, 1);
                        q.now = s->p.now;
                        q.by[q.n_by++] = dims[d];
                        r = gc_ledger_query(s->p.ledger, &q, &sum);
                        for (size_t i = 0; r == 0 && i < c->n_budgets; i++) {
                                const gc_budget *b = &c->budgets[i];

                                if (b->period != (gc_budget_period)per || b->dim != dims[d])
                                        continue;
                                for (size_t k = 0; k < sum.n_rows; k++)
                                        if (sum.rows[k].keys[dims[d]] &&
                                            strcmp(sum.rows[k].keys[dims[d]], b->name) == 0)
                                                spent[i] += sum.rows[k].cost;
                        }
                        gc_cost_summary_free(&sum);
                }
        }
        return r;
}

/*
 * gpu_cost_budget_*: each configured budget's amount, spend and forecast in the period (month
 * or ISO week in the report zone) holding now, and their ratios, for alerting rules.
 */
static int gc__budgets(gc_buf *b, const gc_snapshot *s)
{
        static const struct {
                const char *name, *help;
        } fam[] = {
            {"gpu_cost_budget_amount", "The budget per period, in the catalog currency."},
            {"gpu_cost_budget_spent", "Spent in the budget's current period so far."},
            {"gpu_cost_budget_forecast",
             "Spent so far plus the period's average rate so far for the rest of it."},
            {"gpu_cost_budget_used_ratio", "Spent divided by the budget (1 = all of it)."},
            {"gpu_cost_budget_forecast_ratio", "The forecast divided by the budget."},
            {"gpu_cost_budget_period_end_seconds", "Unix time the budget's current period ends."},
        };
        const gc_publish_opts *c = &s->p.settings.report;
        gc_budget_status *st = NULL;
        double *spent = NULL;
        int r = 0;

        gc__one(b, "gpu_cost_budget_warn_ratio", "gauge",
                "The configured share of a budget at which it warns (budgets.warn_share).",
                c->budget_warn_share);
        /* The queries below cost more than the whole document so far: not for a failed one. */
        if (b->err || c->n_budgets == 0)
                return b->err;
        spent = calloc(c->n_budgets, sizeof(*spent));
        st = calloc(c->n_budgets, sizeof(*st));
        if (!spent || !st)
                r = -ENOMEM;
        if (r == 0)
                r = gc__budget_spent(s, spent);
        for (size_t i = 0; r == 0 && i < c->n_budgets; i++) {
                gc_tz_unit u = c->budgets[i].period == GC_BUDGET_WEEKLY ? GC_TZ_WEEK : GC_TZ_MONTH;

                r = gc_budget_status_of(&c->budgets[i], spent[i],
                                        gc_tz_period_start(c->tz, u, s->p.now),
                                        gc_tz_period_add(c->tz, u, s->p.now, 1), s->p.now,
                                        c->budget_warn_share, &st[i]);
        }
        for (size_t f = 0; r == 0 && f < sizeof(fam) / sizeof(fam[0]); f++) {
                gc__head(b, fam[f].name, "gauge", fam[f].help);
                for (size_t i = 0; i < c->n_budgets; i++) {
                        const gc_budget *bu = &c->budgets[i];
                        gc__lbl l[] = {{"cluster", s->cluster},
                                       {"scope", gc_budget_scope_name(bu->dim)},
                                       {"name", bu->name},
                                       {"period", gc_budget_period_name(bu->period)},
                                       {"currency", s->currency}};
                        double v = f == 0   ? bu->amount
                                   : f == 1 ? st[i].spent
                                   : f == 2 ? st[i].forecast
                                   : f == 3 ? st[i].share
                                   : f == 4 ? st[i].forecast_share
                                            : (double)st[i].end;

                        gc__sample(b, fam[f].name, l, 5, v);
                }
                r = b->err;
        }
        free(spent);
        free(st);
        return r;
}

int gc__api_metrics(gc__api_ctx *x)
{
        gc_buf *b = &x->res->body;
        gc__lbl info[] = {
            {"version", GC_VERSION}, {"cluster", x->s->cluster}, {"currency", x->s->currency}};
        int r;

        x->res->content_type = "text/plain; version=0.0.4; charset=utf-8";
        gc__head(b, "gpu_cost_build_info", "gauge",
                 "The controller's version, cluster name and currency.");
        gc__sample(b, "gpu_cost_build_info", info, 3, 1);
        /* The ledger's query is the costly part; it and the walk can fail on their own too. */
        if (b->err)
                return b->err;
        if ((r = gc__costs(x, b, x->s)) < 0 || (r = gc__nodes(b, x->s)) < 0)
                return r;
        gc__containers(b, x->s);
        gc__health(b, x->s);
        gc__findings(b, x->s);
        return gc__budgets(b, x->s);
}
