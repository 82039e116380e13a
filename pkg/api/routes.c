/* routes: /api/v1/costs, pods, reports, recommendations, prices and tco over one snapshot. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api_int.h"
#include "publish/publish.h"
#include "report/report.h"

#define GC__POD_LIMIT_DEFAULT 1000
#define GC__POD_LIMIT_MAX     100000

/* The window parameter (default def), into *start, *end; 1 when a 400 was written. */
static int gc__window(gc__api_ctx *x, const char *name, const char *def, int64_t *start,
                      int64_t *end)
{
        const char *w = gc_httpd_query(x->req, name);
        char err[GC__API_ERR];

        if (!w && !def) {
                gc__api_bad(x, 400, name, "required (e.g. 7d, yesterday, lastweek or start,end)");
                return 1;
        }
        if (gc_api_window_parse_tz(w ? w : def, x->s->p.now, x->s->p.settings.report.tz, start, end,
                                   err, sizeof(err)) < 0) {
                gc__api_bad(x, 400, name, "%s", err);
                return 1;
        }
        return 0;
}

/* The step parameter, 0 when absent; 1 when a 400 was written. */
static int gc__step(gc__api_ctx *x, const char *name, int64_t start, int64_t end, int64_t *step)
{
        const char *v = gc_httpd_query(x->req, name);
        char err[GC__API_ERR];

        *step = 0;
        if (!v)
                return 0;
        if (gc_api_step_parse(v, start, end, step, err, sizeof(err)) < 0) {
                gc__api_bad(x, 400, name, "%s", err);
                return 1;
        }
        return 0;
}

/* A 400 for a bad by or filter; a label key not kept says where keys are kept. */
static int gc__dims_bad(gc__api_ctx *x, const char *param, const char *err)
{
        if (strstr(err, "is not kept"))
                return gc__api_bad(x, 400, param,
                                   "%s; the configuration's labels.dimensions names the label keys "
                                   "kept",
                                   err);
        return gc__api_bad(x, 400, param, "%s", err);
}

/*
 * Filters from the parameters named after dimensions, label:<key> of a kept key too; empty
 * values filter nothing. 1 when a 400 was written (a label key not kept).
 */
static int gc__filters(gc__api_ctx *x, const gc_label_keys *lk, gc_query *q)
{
        char err[GC__API_ERR];

        for (int d = 0; d < GC_DIM_COUNT; d++) {
                const char *v = gc_httpd_query(x->req, gc_dim_name((gc_dim)d));

                q->filter[d] = v && *v ? v : NULL;
        }
        for (size_t i = 0; i < x->req->n_params; i++) {
                const gc_httpd_param *p = &x->req->params[i];
                gc_dim d[GC_KEY_COUNT];
                size_t n = 0;

                if (!gc_dim_is_label(p->name, strlen(p->name), NULL, NULL))
                        continue;
                if (gc_dims_parse(p->name, lk, d, &n, err, sizeof(err)) < 0 || n != 1) {
                        gc__dims_bad(x, p->name, err);
                        return 1;
                }
                if (!q->filter[d[0]])
                        q->filter[d[0]] = p->value && *p->value ? p->value : NULL;
        }
        return 0;
}

/* ---- /api/v1/costs -------------------------------------------------------------------------- */

typedef struct gc__costs_ctx {
        gc_buf *b;
        const char *currency;
        const gc_chargeback *cb;
        size_t n; /* sets written */
} gc__costs_ctx;

/* One step's summary into the answer's "sets". */
static int gc__costs_step(void *ud, const gc_cost_summary *s)
{
        gc__costs_ctx *c = ud;
        int r = c->n++ ? gc_buf_puts(c->b, ",") : 0;

        return r == 0 ? gc_report_summary_json_chargeback(s, c->currency, c->cb, c->b) : r;
}

/*
 * The span the controller could not see (a resume point past the API server's event window),
 * when the window overlaps it: ,"blind_span":{"from":...,"to":...,"bound_cost":...}. Figures
 * of a window that overlaps it may lack pods that lived wholly inside it, at most bound_cost.
 */
static int gc__blind_span(gc_buf *b, const gc_api_health *h, int64_t start, int64_t end)
{
        if (h->blind_to <= h->blind_from || h->blind_to <= start || h->blind_from >= end)
                return 0;
        gc_buf_puts(b, ",\"blind_span\":{\"from\":");
        gc__api_time(b, h->blind_from);
        gc_buf_puts(b, ",\"to\":");
        gc__api_time(b, h->blind_to);
        return gc_buf_printf(b, ",\"bound_cost\":%.15g}", h->blind_bound_cost);
}

int gc__api_costs(gc__api_ctx *x)
{
        static const char *const known[] = {
            "window", "by",  "step",     "namespace",  "team",  "project", "model", "capacity_type",
            "node",   "pod", "workload", "share_idle", "basis", "label:*", NULL};
        gc_query q = {0};
        const char *basis = gc_httpd_query(x->req, "basis");
        gc_label_keys lk;
        gc_cost_summary sum = {0};
        gc_buf *b = &x->res->body;
        const char *by = gc_httpd_query(x->req, "by");
        const char *share = gc_httpd_query(x->req, "share_idle");
        gc_chargeback cb = x->s->p.settings.chargeback;
        gc__costs_ctx cs = {b, x->s->currency, &cb, 0};
        const char *stepv = gc_httpd_query(x->req, "step");
        int64_t start, end, step;
        char err[GC__API_ERR];
        int r = 0;

        if (gc__api_known_params(x, known) || gc__window(x, "window", "7d", &start, &end) ||
            gc__step(x, "step", start, end, &step) || gc__api_coarse(x, start, end, step, "step"))
                return 0;
        if (!by)
                by = "team,project";
        gc_ledger_label_keys(x->s->p.ledger, &lk);
        if (*by && gc_dims_parse(by, &lk, q.by, &q.n_by, err, sizeof(err)) < 0)
                return gc__dims_bad(x, "by", err);
        if (gc__filters(x, &lk, &q))
                return 0;
        if (share && gc_chargeback_mode_parse(share, &cb.mode) < 0)
                return gc__api_bad(x, 400, "share_idle", "must be none, proportional or weights");
        if (basis && gc_basis_parse(basis, strlen(basis), &q.basis) < 0)
                return gc__api_bad(x, 400, "basis", "must be allocation or usage");
        if (cb.mode == GC_CHARGEBACK_WEIGHTS && cb.n_weights == 0)
                return gc__api_bad(x, 400, "share_idle",
                                   "weights needs chargeback.weights in the configuration");
        if (cb.mode != GC_CHARGEBACK_NONE) {
                int has_team = 0;

                for (size_t i = 0; i < q.n_by; i++)
                        has_team |= q.by[i] == GC_DIM_TEAM;
                if (!has_team)
                        return gc__api_bad(x, 400, "share_idle",
                                           "%s needs by to include team (the shares are the "
                                           "teams')",
                                           gc_chargeback_mode_name(cb.mode));
                /* Idle is the whole cluster's: a share of it among a subset would mislead. */
                for (int d = 0; d < GC_KEY_COUNT; d++) {
                        char name[GC_LABEL_KEY_MAX + 8];

                        if (q.filter[d] && d != GC_DIM_MODEL && d != GC_DIM_CAPACITY_TYPE &&
                            d != GC_DIM_NODE)
                                return gc__api_bad(
                                    x, 400, "share_idle",
                                    "not with a %s filter (idle is shared among every team)",
                                    gc_dim_label_name((gc_dim)d, &lk, name, sizeof(name)));
                }
        }
        q.now = x->s->p.now;
        if (!step) {
                q.start = start;
                q.end = end;
                r = gc_ledger_query(x->s->p.ledger, &q, &sum);
                if (r == 0)
                        r = gc_report_summary_json_chargeback(&sum, x->s->currency, &cb, b);
                gc_cost_summary_free(&sum);
                /* The summary is one object: the span goes in as its last member. */
                if (r == 0 && b->len > 0 && b->data[b->len - 1] == '}') {
                        b->data[--b->len] = '\0';
                        r = gc__blind_span(b, &x->s->p.health, start, end);
                        if (r == 0)
                                r = gc_buf_puts(b, "}");
                }
                return r;
        }
        gc_buf_puts(b, "{\"window\":{\"start\":");
        gc__api_time(b, start);
        gc_buf_puts(b, ",\"end\":");
        gc__api_time(b, end);
        gc_buf_puts(b, "},\"step\":");
        gc_buf_json_str(b, stepv);
        gc_buf_puts(b, ",\"currency\":");
        gc_buf_json_str(b, x->s->currency);
        gc__blind_span(b, &x->s->p.health, start, end);
        if (gc_buf_puts(b, ",\"sets\":[") < 0)
                return b->err;
        /* Every step from one pass over the ledger (a query per step cost a pass each). */
        q.start = start;
        q.end = end;
        r = gc_ledger_query_each_step(x->s->p.ledger, &q, step, gc__costs_step, &cs);
        return r < 0 ? r : gc_buf_puts(b, "]}");
}

/* ---- /api/v1/pods --------------------------------------------------------------------------- */

static int gc__str_or_null(gc_buf *b, const char *v)
{
        return v ? gc_buf_json_str(b, v) : gc_buf_puts(b, "null");
}

static int gc__str_field(gc_buf *b, const char *name, const char *v)
{
        gc_buf_printf(b, ",\"%s\":", name);
        return gc__str_or_null(b, v);
}

static int gc__num_field(gc_buf *b, const char *name, double v)
{
        gc_buf_printf(b, ",\"%s\":", name);
        return gc__api_num(b, v);
}

/* A money field under its currency-neutral name, then under the name it had before (ending or
 * starting in "usd"), kept as an alias for one release (docs/api.md, "Renamed fields"). */
static int gc__money_field(gc_buf *b, const char *name, const char *alias, double v)
{
        gc__num_field(b, name, v);
        return gc__num_field(b, alias, v);
}

static int gc__eq_or_any(const char *want, const char *have)
{
        return !want || !*want || (have && strcmp(want, have) == 0);
}

static int gc__pod_json(gc_buf *b, const gc_api_pod *p, int64_t now)
{
        int64_t until = p->end == GC_OPEN || p->end > now ? now : p->end;
        int64_t since = p->geq_since > p->start ? p->geq_since : p->start;
        double hours =
            (p->gpu_seconds_before + (until > since ? (double)(until - since) * p->geq : 0.0)) /
            3600.0;

        gc_buf_puts(b, "{\"uid\":");
        gc__str_or_null(b, p->uid);
        gc__str_field(b, "namespace", p->ns);
        gc__str_field(b, "name", p->name);
        gc__str_field(b, "node", p->node);
        gc__str_field(b, "team", p->team);
        gc__str_field(b, "project", p->project);
        gc__str_field(b, "model", p->model);
        gc__str_field(b, "capacity_type", p->capacity_type);
        gc__str_field(b, "controller_kind", p->controller_kind);
        gc__str_field(b, "controller", p->controller);
        gc__str_field(b, "workload", p->workload);
        gc__str_field(b, "container", p->container);
        gc__num_field(b, "geq", p->geq);
        gc__num_field(b, "gpus_requested", p->gpus_requested);
        gc__money_field(b, "price_per_gpu_hour", "usd_per_gpu_hour", p->price_per_gpu_hour);
        gc_buf_puts(b, ",\"start\":");
        gc__api_time(b, p->start);
        gc_buf_puts(b, ",\"end\":");
        if (p->end == GC_OPEN)
                gc_buf_puts(b, "null");
        else
                gc__api_time(b, p->end);
        gc_buf_printf(b, ",\"running\":%s", p->end == GC_OPEN ? "true" : "false");
        gc__num_field(b, "gpu_hours", hours);
        gc__money_field(b, "cost", "cost_usd", hours * p->price_per_gpu_hour);
        if (isnan(p->activity_mean) || p->samples == 0)
                return gc_buf_puts(b, ",\"usage\":null}");
        gc_buf_puts(b, ",\"usage\":{\"activity_mean\":");
        gc__api_num(b, p->activity_mean);
        gc__num_field(b, "activity_p95", p->activity_p95);
        gc__num_field(b, "mem_used_peak_mib", p->mem_used_peak_mib);
        return gc_buf_printf(b, ",\"samples\":%llu}}", (unsigned long long)p->samples);
}

int gc__api_pods(gc__api_ctx *x)
{
        static const char *const known[] = {"namespace", "team",          "project", "node",
                                            "model",     "capacity_type", "limit",   NULL};
        const char *ns = gc_httpd_query(x->req, "namespace");
        const char *team = gc_httpd_query(x->req, "team");
        const char *project = gc_httpd_query(x->req, "project");
        const char *node = gc_httpd_query(x->req, "node");
        const char *model = gc_httpd_query(x->req, "model");
        const char *ctype = gc_httpd_query(x->req, "capacity_type");
        const char *lim = gc_httpd_query(x->req, "limit");
        const gc_snapshot *s = x->s;
        gc_buf *b = &x->res->body;
        int64_t limit = GC__POD_LIMIT_DEFAULT;
        size_t matched = 0, shown = 0;

        if (gc__api_known_params(x, known))
                return 0;
        if (lim && (gc_parse_int64(lim, &limit) < 0 || limit < 1 || limit > GC__POD_LIMIT_MAX))
                return gc__api_bad(x, 400, "limit", "not a whole number from 1 to %d",
                                   GC__POD_LIMIT_MAX);
        gc_buf_puts(b, "{\"now\":");
        gc__api_time(b, s->p.now);
        gc_buf_puts(b, ",\"pods\":[");
        for (size_t i = 0; !b->err && i < s->p.n_pods; i++) {
                const gc_api_pod *p = &s->p.pods[s->pods_by_name[i]];

                if (!gc__eq_or_any(ns, p->ns) || !gc__eq_or_any(team, p->team) ||
                    !gc__eq_or_any(project, p->project) || !gc__eq_or_any(node, p->node) ||
                    !gc__eq_or_any(model, p->model) || !gc__eq_or_any(ctype, p->capacity_type))
                        continue;
                matched++;
                if ((int64_t)shown >= limit)
                        continue;
                if (shown++)
                        gc_buf_puts(b, ",");
                gc__pod_json(b, p, s->p.now);
        }
        return gc_buf_printf(b, "],\"count\":%zu,\"matched\":%zu,\"truncated\":%s}", shown, matched,
                             shown < matched ? "true" : "false");
}

/* ---- /api/v1/reports ------------------------------------------------------------------------ */

static const char *gc__kind_name(gc_publish_kind k)
{
        return k == GC_PUBLISH_DAILY ? "daily" : k == GC_PUBLISH_WEEKLY ? "weekly" : "monthly";
}

static const gc_publish_period *gc__latest(const gc_publish_plan *plan, gc_publish_kind k)
{
        return k == GC_PUBLISH_DAILY    ? plan->latest_daily
               : k == GC_PUBLISH_WEEKLY ? plan->latest_weekly
                                        : plan->latest_monthly;
}

/* "2026-11-21", "2026-W47" or "2026-11" from a ConfigMap name. */
static void gc__period_id(const gc_publish_period *p, char out[16])
{
        const char *dash = strrchr(p->name, '-');

        if (p->kind == GC_PUBLISH_MONTHLY) {
                /* gpu-cost-report-monthly-YYYY-MM: the last 7 characters */
                size_t n = strlen(p->name);

                gc_strlcpy(out, n >= 7 ? p->name + n - 7 : p->name, 16);
                return;
        }
        if (p->kind == GC_PUBLISH_DAILY) {
                /* gpu-cost-report-daily-YYYY-MM-DD: the last 10 characters */
                size_t n = strlen(p->name);

                gc_strlcpy(out, n >= 10 ? p->name + n - 10 : p->name, 16);
                return;
        }
        /* gpu-cost-report-weekly-YYYY-wNN */
        snprintf(out, 16, "%.4s-W%s", dash ? dash - 4 : "", dash ? dash + 2 : "");
}

static int gc__id_well_formed(gc_publish_kind k, const char *id)
{
        if (k == GC_PUBLISH_MONTHLY)
                return strlen(id) == 7 && strspn(id, "0123456789") == 4 && id[4] == '-' &&
                       strspn(id + 5, "0123456789") == 2;
        if (k == GC_PUBLISH_DAILY)
                return strlen(id) == 10 && strspn(id, "0123456789") == 4 && id[4] == '-' &&
                       strspn(id + 5, "0123456789") == 2 && id[7] == '-' &&
                       strspn(id + 8, "0123456789") == 2;
        return strlen(id) == 8 && strspn(id, "0123456789") == 4 && id[4] == '-' &&
               (id[5] == 'W' || id[5] == 'w') && strspn(id + 6, "0123456789") == 2;
}

static int gc__report_list(gc__api_ctx *x, gc_publish_kind k, const gc_publish_plan *plan)
{
        const char *kind = gc__kind_name(k);
        const gc_publish_period *latest = gc__latest(plan, k);
        gc_buf *b = &x->res->body;
        char id[16];
        int first = 1;

        gc_buf_printf(b, "{\"kind\":\"%s\",\"periods\":[", kind);
        /* Newest first: the plan lists them ascending. */
        for (size_t i = plan->n_periods; !b->err && i-- > 0;) {
                const gc_publish_period *p = &plan->periods[i];

                if (p->kind != k)
                        continue;
                gc__period_id(p, id);
                if (!first)
                        gc_buf_puts(b, ",");
                first = 0;
                gc_buf_printf(b, "{\"id\":\"%s\",\"start\":", id);
                gc__api_time(b, p->start);
                gc_buf_puts(b, ",\"end\":");
                gc__api_time(b, p->end);
                gc_buf_printf(b, ",\"partial\":%s,\"url\":\"/api/v1/reports/%s/%s\"}",
                              p->complete ? "false" : "true", kind, id);
        }
        if (!latest)
                return gc_buf_puts(b, "],\"latest\":null}");
        gc__period_id(latest, id);
        return gc_buf_printf(b, "],\"latest\":\"%s\"}", id);
}

static int gc__report_one(gc__api_ctx *x, gc_publish_kind k, const gc_publish_plan *plan,
                          const char *id)
{
        const char *kind = gc__kind_name(k);
        const char *fmt = gc_httpd_query(x->req, "format");
        const gc_publish_period *p = NULL;
        const gc_snapshot *s = x->s;
        gc_publish_opts o;
        gc_period_report rep;
        char pid[16];

        if (fmt && strcmp(fmt, "json") != 0 && strcmp(fmt, "md") != 0)
                return gc__api_bad(x, 400, "format", "json or md");
        if (strcmp(id, "latest") == 0) {
                p = gc__latest(plan, k);
                if (!p)
                        return gc__api_bad(x, 404, NULL,
                                           "no complete %s period yet (list: /api/v1/reports/%s)",
                                           kind, kind);
        } else {
                if (!gc__id_well_formed(k, id))
                        return gc__api_bad(x, 400, "id", "%s report ids are %s or latest", kind,
                                           k == GC_PUBLISH_DAILY    ? "dates YYYY-MM-DD"
                                           : k == GC_PUBLISH_WEEKLY ? "ISO weeks YYYY-Www"
                                                                    : "months YYYY-MM");
                for (size_t i = 0; i < plan->n_periods && !p; i++) {
                        if (plan->periods[i].kind != k)
                                continue;
                        gc__period_id(&plan->periods[i], pid);
                        if (strcasecmp(pid, id) == 0)
                                p = &plan->periods[i];
                }
                if (!p)
                        return gc__api_bad(x, 404, NULL,
                                           "no %s report %.10s: no data in that period, or past "
                                           "retention (list: /api/v1/reports/%s)",
                                           kind, id, kind);
        }
        o = s->p.settings.report;
        if (gc_publish_report_init(s->p.ledger, &o, p, s->p.now, &rep) < 0)
                return gc__api_bad(x, 500, NULL, "the report settings are not valid");
        /* The findings stand on the last week of measured use (their text names the window):
         * they go with the periods that overlap it. Older periods' Savings are in their report
         * ConfigMaps, made at their end. */
        if (p->end > s->p.now - 7 * 86400 && p->start <= s->p.now) {
                rep.savings_json = s->p.recommendations_json;
                rep.savings_markdown = s->p.recommendations_md;
        }
        if (fmt && strcmp(fmt, "md") == 0) {
                x->res->content_type = "text/markdown; charset=utf-8";
                return gc_report_period_markdown(&rep, &x->res->body);
        }
        return gc_report_period_json(&rep, &x->res->body);
}

int gc__api_reports(gc__api_ctx *x)
{
        static const char *const known[] = {"format", NULL};
        const char *rest = x->req->path + strlen("/api/v1/reports");
        gc_publish_kind k;
        const gc_publish_plan *plan;
        int r = 0;

        if (gc__api_known_params(x, known))
                return 0;
        if (*rest == '\0' || strcmp(rest, "/") == 0)
                return gc_buf_puts(&x->res->body,
                                   "{\"kinds\":[\"daily\",\"weekly\",\"monthly\"],\"urls\":["
                                   "\"/api/v1/reports/daily\",\"/api/v1/reports/weekly\","
                                   "\"/api/v1/reports/monthly\"]}");
        if (strncmp(rest, "/daily", 6) == 0 && (rest[6] == '\0' || rest[6] == '/')) {
                k = GC_PUBLISH_DAILY;
                rest += 6;
        } else if (strncmp(rest, "/weekly", 7) == 0 && (rest[7] == '\0' || rest[7] == '/')) {
                k = GC_PUBLISH_WEEKLY;
                rest += 7;
        } else if (strncmp(rest, "/monthly", 8) == 0 && (rest[8] == '\0' || rest[8] == '/')) {
                k = GC_PUBLISH_MONTHLY;
                rest += 8;
        } else {
                return gc__api_bad(x, 404, NULL, "not found: reports are daily, weekly or monthly");
        }
        if (*rest == '/')
                rest++;
        if (strchr(rest, '/'))
                return gc__api_bad(x, 404, NULL, "not found");
        plan = gc__api_plan(x->s, &r);
        if (!plan)
                return r;
        if (*rest == '\0')
                return gc__report_list(x, k, plan);
        return gc__report_one(x, k, plan, rest);
}

/* ---- /api/v1/recommendations ---------------------------------------------------------------- */

int gc__api_recommendations(gc__api_ctx *x)
{
        static const char *const known[] = {NULL};

        if (gc__api_known_params(x, known))
                return 0;
        if (x->s->p.recommendations_json)
                return gc_buf_puts(&x->res->body, x->s->p.recommendations_json);
        if (x->s->recommendations_bad)
                return gc__api_bad(x, 500, NULL,
                                   "the advisor's document was not valid JSON and was dropped");
        return gc_buf_puts(&x->res->body,
                           "{\"findings\":[],\"notes\":[\"no usage data: the advisor has not run "
                           "(configure a usage source, docs/usage.md)\"]}");
}

/* ---- /api/v1/dimensions ---------------------------------------------------------------------- */

/*
 * What by= and the filters take: the fixed dimensions, then label:<key> of each label key the
 * ledger keeps (the configuration's labels.dimensions), so a client (the dashboard) can offer
 * them without guessing.
 */
int gc__api_dimensions(gc__api_ctx *x)
{
        static const char *const known[] = {NULL};
        gc_buf *b = &x->res->body;
        gc_label_keys lk;
        char name[GC_LABEL_KEY_MAX + 8];

        if (gc__api_known_params(x, known))
                return 0;
        gc_ledger_label_keys(x->s->p.ledger, &lk);
        gc_buf_puts(b, "{\"dimensions\":[");
        for (size_t d = 0; d < GC_DIM_COUNT + lk.n; d++) {
                if (d)
                        gc_buf_puts(b, ",");
                gc_buf_json_str(b, gc_dim_label_name((gc_dim)d, &lk, name, sizeof(name)));
        }
        gc_buf_puts(b, "],\"label_keys\":[");
        for (size_t i = 0; i < lk.n; i++) {
                if (i)
                        gc_buf_puts(b, ",");
                gc_buf_json_str(b, lk.key[i]);
        }
        return gc_buf_puts(b, "]}");
}

/* ---- /api/v1/prices, /api/v1/tco ------------------------------------------------------------ */

typedef struct gc__class {
        const char *model, *capacity_type;
        double price_per_gpu_hour;
        size_t pods;
        double geq;
} gc__class;

static int gc__same(const char *a, const char *b)
{
        return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Distinct (model, capacity type, price) among the snapshot's pods; running ones counted. */
static int gc__classes(const gc_snapshot *s, gc__class **ret, size_t *ret_n)
{
        gc__class *v = NULL;
        size_t n = 0;

        for (size_t i = 0; i < s->p.n_pods; i++) {
                const gc_api_pod *p = &s->p.pods[i];
                size_t j;

                for (j = 0; j < n; j++)
                        if (gc__same(v[j].model, p->model) &&
                            gc__same(v[j].capacity_type, p->capacity_type) &&
                            v[j].price_per_gpu_hour == p->price_per_gpu_hour)
                                break;
                if (j == n) {
                        gc__class *nv = realloc(v, (n + 1) * sizeof(*v));

                        if (!nv) {
                                free(v);
                                return -ENOMEM;
                        }
                        v = nv;
                        memset(&v[n], 0, sizeof(v[n]));
                        v[n].model = p->model;
                        v[n].capacity_type = p->capacity_type;
                        v[n].price_per_gpu_hour = p->price_per_gpu_hour;
                        n++;
                }
                if (p->end == GC_OPEN) {
                        v[j].pods++;
                        v[j].geq += p->geq;
                }
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

/* A class's model, capacity type and price: the first members of an in_use or break_even row. */
static void gc__class_json(gc_buf *b, const gc__class *c, int comma)
{
        gc_buf_printf(b, "%s{\"model\":", comma ? "," : "");
        gc__str_or_null(b, c->model);
        gc__str_field(b, "capacity_type", c->capacity_type);
        gc__money_field(b, "price_per_gpu_hour", "usd_per_gpu_hour", c->price_per_gpu_hour);
}

int gc__api_prices(gc__api_ctx *x)
{
        static const char *const known[] = {NULL};
        const gc_api_settings *c = &x->s->p.settings;
        gc_buf *b = &x->res->body;
        gc__class *cl = NULL;
        size_t n = 0;
        int r;

        if (gc__api_known_params(x, known))
                return 0;
        r = gc__classes(x->s, &cl, &n);
        if (r < 0)
                return r;
        gc_buf_printf(b, "{\"builtin\":%s,\"catalog\":", c->catalog_builtin ? "true" : "false");
        /* The catalog refuses one it could not write back (a bad price): not through b. */
        r = c->catalog ? gc_catalog_to_json(c->catalog, b) : gc_buf_puts(b, "null");
        if (r < 0) {
                free(cl);
                return r;
        }
        gc_buf_puts(b, ",\"in_use\":[");
        for (size_t i = 0; !b->err && i < n; i++) {
                gc__class_json(b, &cl[i], i > 0);
                gc_buf_printf(b, ",\"running_pods\":%zu", cl[i].pods);
                gc__num_field(b, "running_geq", cl[i].geq);
                gc_buf_puts(b, "}");
        }
        free(cl);
        return gc_buf_puts(b, "]}");
}

int gc__api_tco(gc__api_ctx *x)
{
        static const char *const known[] = {NULL};
        const gc_tco_inputs *in = x->s->p.settings.tco;
        gc_buf *b = &x->res->body;
        gc_tco_result t;
        gc__class *cl = NULL;
        size_t n = 0, k = 0;
        char err[GC__API_ERR];
        int r;

        if (gc__api_known_params(x, known))
                return 0;
        if (!in)
                return gc__api_bad(x, 404, NULL,
                                   "tco: not configured (add a \"tco\" section to the "
                                   "configuration, docs/configuration.md)");
        if (gc_tco_compute(in, &t, err, sizeof(err)) < 0)
                return gc__api_bad(x, 500, "tco", "%s", err);
        r = gc__classes(x->s, &cl, &n);
        if (r < 0)
                return r;
        gc_buf_puts(b, "{\"inputs\":{\"node_price\":");
        gc__api_num(b, in->node_price);
        gc__num_field(b, "gpus_per_node", in->gpus_per_node);
        gc__num_field(b, "years", in->years);
        gc__num_field(b, "utilization", in->utilization);
        gc__num_field(b, "cluster_gpus", in->cluster_gpus);
        gc__num_field(b, "ftes", in->ftes);
        gc__num_field(b, "fte_cost", in->fte_cost);
        gc__num_field(b, "kw_per_gpu", in->kw_per_gpu);
        gc__num_field(b, "pue", in->pue);
        gc__money_field(b, "price_per_kwh", "usd_per_kwh", in->price_per_kwh);
        gc__num_field(b, "network_per_gpu_hour", in->network_per_gpu_hour);
        gc_buf_puts(b, "},\"per_productive_gpu_hour\":{\"hardware\":");
        gc__api_num(b, t.hardware_per_hour);
        gc__num_field(b, "operations", t.operations_per_hour);
        gc__num_field(b, "power", t.power_per_hour);
        gc__num_field(b, "network", t.network_per_hour);
        gc__num_field(b, "total", t.cost_per_productive_gpu_hour);
        gc_buf_puts(b, "}");
        gc__num_field(b, "annual_cost_per_gpu", t.annual_cost_per_gpu);
        gc__str_field(b, "currency", x->s->currency);
        gc_buf_puts(b, ",\"break_even\":[");
        /* Against each price paid in the cluster: owning is cheaper above this utilization. */
        for (size_t i = 0; !b->err && i < n; i++) {
                double u;

                if (cl[i].price_per_gpu_hour <= 0 ||
                    gc_tco_break_even(t.annual_cost_per_gpu, cl[i].price_per_gpu_hour, &u) < 0)
                        continue;
                gc__class_json(b, &cl[i], k++ > 0);
                gc__num_field(b, "break_even_utilization", u);
                gc_buf_printf(b, ",\"owning_is_cheaper\":%s}",
                              in->utilization > u ? "true" : "false");
        }
        free(cl);
        return gc_buf_puts(b, "]}");
}
