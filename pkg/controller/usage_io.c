/* usage_io: measured GPU use (dcgm-exporter, Prometheus) and the advisor's latest findings. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller_int.h"
#include "dump/dump.h"
#include "gpuuse/gpuuse.h"
#include "log/log.h"
#include "savings/savings.h"

#define CTL_ADVISE_EVERY_S  60     /* the advisor's findings are at most this old */
#define CTL_ADVISE_FRESH_S  5      /* ...and follow new usage data this soon */
#define CTL_ADVICE_WINDOW_S 604800 /* over the last 7 days */

/*
 * Two locks, never one inside the other except c->mu then u->mu (the snapshot builder and the
 * advisor hold c->mu and read the summaries). The usage thread owns the gc_gpuuse store alone:
 * it fetches and ingests without a lock, then swaps in a copied table of per-pod summaries.
 */
struct ctl_usage {
        pthread_mutex_t mu;     /* guards everything up to `samples` */
        gc_savings_table table; /* the latest summaries, sorted by (namespace, pod) */
        int has_table;
        gc_advisor_result *advice; /* the advisor's latest result (a reference); NULL before */
        char *advice_json;         /* its document */
        char *advice_md;           /* the same findings as the Markdown "Savings" section */
        gc_api_finding_stat *stats;
        size_t n_stats;
        int64_t fetched_at; /* last successful fetch */
        long errors;
        uint64_t samples;

        /* The usage thread's own (no lock). */
        ctl *c;
        pthread_t thread;
        int started;
        atomic_int stop;
        atomic_int fresh; /* new summaries since the advisor last ran */
        gc_gpuuse *store;
        gc_kube *kube;
        int64_t next_dcgm, next_prom;
        gc_gpuuse_prom_plan prom; /* which Prometheus range is due */
        int failing;              /* the last round had errors: log the next success */
        int split_failed;         /* a split of the usage basis failed (said once) */
        int slow_logged;          /* a round took longer than the interval (said once) */

        /* The main thread's. */
        int64_t next_advice, advised_at;
};

/* ---- the usage basis ------------------------------------------------------------------------ */

/*
 * The share sink (usage thread, during an ingest): a shared GPU's measured use over a span,
 * split among its holders in the ledger (docs/ledger.md, "The usage basis"). One holder alone
 * has nothing to split. Takes c->mu (no other lock is held here).
 */
static int ctl__share(void *ud, const gc_gpuuse_share *sh)
{
        struct ctl_usage *u = ud;
        ctl *c = u->c;
        gc_account_use h[GC_LEDGER_MAX_HOLDERS];
        size_t n = sh->n < GC_LEDGER_MAX_HOLDERS ? sh->n : GC_LEDGER_MAX_HOLDERS;
        int r;

        if (n < 2)
                return 0;
        for (size_t i = 0; i < n; i++) {
                h[i].ns = sh->h[i].ns;
                h[i].pod = sh->h[i].pod;
                h[i].pod_uid = sh->h[i].pod_uid;
                h[i].use = sh->h[i].use;
        }
        pthread_mutex_lock(&c->mu);
        r = gc_account_split_by_use(c->acct, sh->from, sh->to, h, n);
        pthread_mutex_unlock(&c->mu);
        if (r < 0 && !u->split_failed) {
                gc_log(GC_LOG_WARN,
                       "cannot split a shared GPU by measured use: it stays as allocated", "gpu",
                       sh->uuid, "error", strerror(-r), NULL);
                u->split_failed = 1;
        }
        return r < 0 ? r : 0;
}

/* ---- summaries --------------------------------------------------------------------------- */

static void ctl__count(struct ctl_usage *u, const gc_gpuuse_stats *st, int ok)
{
        pthread_mutex_lock(&u->mu);
        if (st)
                u->samples += st->samples;
        if (ok)
                u->fetched_at = gc__ctl_now();
        else
                u->errors++;
        pthread_mutex_unlock(&u->mu);
}

/* Copies the store's summaries out and swaps them in. */
static void ctl__publish_table(struct ctl_usage *u, int64_t now)
{
        gc_savings_table t, old;

        gc_gpuuse_expire(u->store, now);
        if (gc_savings_table_build(u->store, now - CTL_ADVICE_WINDOW_S, now, &t) < 0) {
                gc_log(GC_LOG_WARN, "cannot copy the usage summaries", "error", "out of memory",
                       NULL);
                return;
        }
        pthread_mutex_lock(&u->mu);
        old = u->table;
        u->table = t;
        u->has_table = 1;
        pthread_mutex_unlock(&u->mu);
        atomic_store(&u->fresh, 1);
        gc_savings_table_release(&old);
}

/* ---- dcgm-exporter: find the pods, scrape each ------------------------------------------- */

/*
 * The scrape URLs of the dcgm-exporter pods: the running pods the label selector picks, or the
 * ready addresses of the Service's Endpoints (pkg/gpuuse reads them). *ret_urls: malloc'd.
 */
static int ctl__dcgm_targets(struct ctl_usage *u, char ***ret_urls, size_t *ret_n, char *err,
                             size_t errlen)
{
        const gc_config_dcgm *d = &u->c->cfg->dcgm;
        const gc_gpuuse_targets_opts o = {.ns = d->ns,
                                          .label_selector = d->label_selector,
                                          .service = d->service,
                                          .port = d->port,
                                          .path = d->path,
                                          .scheme = d->scheme};
        gc_buf path, body;
        long status = 0;
        int r;

        gc_buf_init(&path, 4096);
        r = gc_gpuuse_targets_path(&o, &path);
        if (r < 0) {
                snprintf(err, errlen, "label selector too long");
                gc_buf_free(&path);
                return r;
        }
        memset(&body, 0, sizeof(body));
        r = gc_kube_request(u->kube, "GET", path.data, NULL, NULL, 0, &status, &body, err, errlen);
        gc_buf_free(&path);
        if (r == 0 && status != 200) {
                snprintf(err, errlen, "%s in %s: HTTP %ld",
                         d->service ? "reading the Endpoints" : "listing pods", d->ns, status);
                r = -EIO;
        }
        if (r == 0)
                r = gc_gpuuse_targets_parse(&o, body.data, body.len, ret_urls, ret_n, err, errlen);
        gc_buf_free(&body);
        return r;
}

static void ctl__dcgm_round(struct ctl_usage *u, int64_t now)
{
        const gc_config_dcgm *d = &u->c->cfg->dcgm;
        char err[512], count[32];
        char **urls = NULL;
        size_t n = 0, failed = 0;

        if (ctl__dcgm_targets(u, &urls, &n, err, sizeof(err)) < 0) {
                ctl__count(u, NULL, 0);
                if (!u->failing)
                        gc_log(GC_LOG_WARN, "cannot find the dcgm-exporter pods", "namespace",
                               d->ns, d->service ? "service" : "selector",
                               d->service ? d->service : d->label_selector, "error", err, NULL);
                u->failing = 1;
                return;
        }
        for (size_t i = 0; i < n && !atomic_load(&u->stop); i++) {
                gc_gpuuse_stats st;
                int r;

                memset(&st, 0, sizeof(st));
                r = gc_gpuuse_scrape(u->store, urls[i], (long)d->timeout_s, d->max_body_bytes, NULL,
                                     now, d->interval_s, &st, err, sizeof(err));
                ctl__count(u, &st, r == 0);
                if (r < 0) {
                        failed++;
                        gc_log(u->failing ? GC_LOG_DEBUG : GC_LOG_WARN,
                               "dcgm-exporter scrape failed", "url", urls[i], "error", err, NULL);
                }
        }
        if (n && failed < n && u->failing) {
                snprintf(count, sizeof(count), "%zu", n);
                gc_log(GC_LOG_INFO, "scraping dcgm-exporter", "pods", count, NULL);
        }
        u->failing = failed > 0 || n == 0;
        /* Scrapes run one after the other: say so when a round no longer fits its interval. */
        if (gc__ctl_now() - now > d->interval_s && !u->slow_logged) {
                snprintf(count, sizeof(count), "%zu", n);
                gc_log(GC_LOG_WARN,
                       "scraping every dcgm-exporter pod takes longer than "
                       "usage.dcgm.interval_seconds: readings are further apart",
                       "pods", count, NULL);
                u->slow_logged = 1;
        }
        gc_gpuuse_targets_free(urls, n);
}

/* ---- Prometheus ------------------------------------------------------------------------------ */

static int ctl__prom_range(struct ctl_usage *u, int64_t start, int64_t end, char *err,
                           size_t errlen)
{
        const gc_config_prometheus *p = &u->c->cfg->prometheus;
        gc_gpuuse_stats st;
        gc_buf token;
        int r;

        memset(&token, 0, sizeof(token));
        memset(&st, 0, sizeof(st));
        r = p->bearer_token_file ? gc_gpuuse_read_token(p->bearer_token_file, &token, err, errlen)
                                 : 0;
        if (r == 0)
                r = gc_gpuuse_prom_query_range(u->store, p->url, NULL, start, end, p->step_s,
                                               (long)p->timeout_s, p->max_body_bytes, token.data,
                                               &st, err, errlen);
        gc_buf_free(&token);
        ctl__count(u, &st, r == 0);
        return r;
}

static void ctl__prom_round(struct ctl_usage *u, int64_t now)
{
        const gc_config_prometheus *p = &u->c->cfg->prometheus;
        int64_t start, end;
        char err[512];
        int k = GC_GPUUSE_PROM_NONE, r = 0;

        while (!atomic_load(&u->stop) &&
               (k = gc_gpuuse_prom_plan_next(&u->prom, now, &start, &end)) == GC_GPUUSE_PROM_DUE) {
                r = ctl__prom_range(u, start, end, err, sizeof(err));
                gc_gpuuse_prom_plan_done(&u->prom, end, r == 0);
                if (r < 0)
                        break;
        }
        if (r == 0 && k == GC_GPUUSE_PROM_HISTORY_DONE)
                gc_log(GC_LOG_INFO, "read the usage history from Prometheus", "url", p->url, NULL);
        if (r < 0) {
                gc_log(u->failing ? GC_LOG_DEBUG : GC_LOG_WARN, "Prometheus query failed", "url",
                       p->url, "error", err, NULL);
                u->failing = 1;
        } else if (u->failing && !u->c->cfg->has_dcgm) {
                u->failing = 0;
        }
}

static void *ctl__usage_main(void *arg)
{
        struct ctl_usage *u = arg;
        const gc_config *cfg = u->c->cfg;

        while (!atomic_load(&u->stop)) {
                int64_t now = gc__ctl_now();
                int fetched = 0;

                /* A standby does not measure: only the replica that writes reports. */
                if (!atomic_load(&u->c->ready)) {
                        usleep(200 * 1000);
                        continue;
                }
                if (cfg->has_dcgm && now >= u->next_dcgm) {
                        u->next_dcgm = now + cfg->dcgm.interval_s;
                        ctl__dcgm_round(u, now);
                        fetched = 1;
                }
                if (cfg->has_prometheus && now >= u->next_prom) {
                        /* Until the history is in, retry soon after a failure. */
                        u->next_prom =
                            now + (u->prom.history_done ? cfg->prometheus.interval_s : 10);
                        ctl__prom_round(u, now);
                        fetched = 1;
                }
                if (fetched)
                        ctl__publish_table(u, now);
                usleep(200 * 1000);
        }
        return NULL;
}

/* ---- the advisor ------------------------------------------------------------------------- */

void gc__ctl_dra_advisor_opts(ctl *c, gc_advisor_opts *ret)
{
        const char *gpu, *mig;

        *ret = c->cfg->advisor;
        gc_mirror_dra_classes(c->mirror, &gpu, &mig);
        if (gpu)
                gc_strlcpy(ret->dra_gpu_class, gpu, sizeof(ret->dra_gpu_class));
        if (mig)
                gc_strlcpy(ret->dra_mig_class, mig, sizeof(ret->dra_mig_class));
        gc_savings_shared_opts(ret, c->acct);
}

static const gc_pod *ctl__pod_of(void *ud, const char *uid)
{
        ctl *c = ud;

        return gc_mirror_pod_get(c->mirror, uid);
}

static const char *ctl__usage_note(const ctl *c, const struct ctl_usage *u)
{
        if (!c->cfg->has_dcgm && !c->cfg->has_prometheus && !c->o->demo)
                return "no usage source is configured (usage.dcgm or usage.prometheus in the "
                       "configuration)";
        if (!u->has_table)
                return "no usage data has been read yet";
        return NULL;
}

/* Under c->mu: the advisor over [start, end) at now, rendered whole. */
static int ctl__advise(ctl *c, int64_t start, int64_t end, int64_t now, gc_buf *md, gc_buf *json,
                       gc_advisor_result **ret_result)
{
        struct ctl_usage *u = c->usage;
        gc_advisor_pod *pods = NULL;
        gc_savings_opts so;
        size_t n_pods = 0;
        char err[512];
        int r;

        gc_config_savings_opts(c->cfg, &so);
        gc__ctl_dra_advisor_opts(c, &so.advisor);
        /* The table stays ours while we hold u->mu; the pods point into it. */
        pthread_mutex_lock(&u->mu);
        r = gc_savings_collect(c->ledger, start, end, now, ctl__pod_of, c,
                               u->has_table ? &u->table : NULL, &pods, &n_pods);
        if (r == 0)
                r = gc_savings_run(&so, c->ledger, start, end, now, pods, n_pods,
                                   ctl__usage_note(c, u), NULL, 0, md, json, ret_result, err,
                                   sizeof(err));
        else
                snprintf(err, sizeof(err), "%s", strerror(-r));
        pthread_mutex_unlock(&u->mu);
        free(pods);
        if (r < 0)
                gc_log(GC_LOG_ERROR, "the advisor failed", "error", err, NULL);
        return r;
}

/*
 * Under c->mu: keeps the result, its document and the (kind, team) rows snapshots copy. Takes
 * over res (a reference), json's and md's data.
 */
static int ctl__keep_advice(ctl *c, gc_buf *json, gc_buf *md, gc_advisor_result *res)
{
        struct ctl_usage *u = c->usage;
        gc_api_finding_stat *stats = calloc(res->n_stats ? res->n_stats : 1, sizeof(*stats));
        gc_advisor_result *old;

        if (!stats) {
                gc_advisor_result_unref(res);
                return -ENOMEM;
        }
        for (size_t i = 0; i < res->n_stats; i++) {
                /* The result's strings die with it; team names live in the controller's pool. */
                stats[i].kind = res->stats[i].kind;
                stats[i].team = gc_strpool_intern0(c->pool, res->stats[i].team);
                stats[i].count = res->stats[i].count;
                stats[i].monthly_savings = res->stats[i].monthly_savings;
                if (!stats[i].team) {
                        free(stats);
                        gc_advisor_result_unref(res);
                        return -ENOMEM;
                }
        }
        pthread_mutex_lock(&u->mu);
        old = u->advice;
        free(u->advice_json);
        free(u->advice_md);
        free(u->stats);
        u->advice = res;
        u->advice_json = json->data; /* taken over */
        u->advice_md = md->data;     /* taken over */
        u->stats = stats;
        u->n_stats = res->n_stats;
        pthread_mutex_unlock(&u->mu);
        /* A snapshot or a report being written may still hold it: the last holder frees it. */
        gc_advisor_result_unref(old);
        memset(json, 0, sizeof(*json));
        memset(md, 0, sizeof(*md));
        return 0;
}

/* The advisor over the last 7 days, kept for snapshots; under c->mu. */
static int ctl__advise_now(ctl *c, int64_t now)
{
        gc_advisor_result *res = NULL;
        gc_buf json, md;
        int r;

        gc_buf_init(&json, (size_t)64 << 20);
        gc_buf_init(&md, (size_t)64 << 20);
        r = ctl__advise(c, now - CTL_ADVICE_WINDOW_S, now, now, &md, &json, &res);
        if (r == 0)
                r = ctl__keep_advice(c, &json, &md, res);
        gc_buf_free(&json);
        gc_buf_free(&md);
        return r;
}

void gc__ctl_usage_tick(ctl *c, int64_t now)
{
        struct ctl_usage *u = c->usage;

        if (!u || (now < u->next_advice &&
                   !(atomic_load(&u->fresh) && now >= u->advised_at + CTL_ADVISE_FRESH_S)))
                return;
        u->next_advice = now + CTL_ADVISE_EVERY_S;
        u->advised_at = now;
        atomic_store(&u->fresh, 0);
        pthread_mutex_lock(&c->mu);
        ctl__advise_now(c, now);
        pthread_mutex_unlock(&c->mu);
}

gc_advisor_result *gc__ctl_usage_advice(ctl *c)
{
        struct ctl_usage *u = c->usage;
        gc_advisor_result *res;

        if (!u)
                return NULL;
        pthread_mutex_lock(&u->mu);
        res = gc_advisor_result_ref(u->advice);
        pthread_mutex_unlock(&u->mu);
        return res;
}

/* --demo: the example cluster's dcgm-exporter series, then the advisor at the example's now. */
static int ctl__demo(ctl *c)
{
        struct ctl_usage *u = c->usage;
        const gc_dump_input *metrics = &c->demo->metrics, *settings = &c->demo->settings;
        int64_t now, start, end, first;
        gc_savings_opts so;
        gc_gpuuse_stats st;
        char err[256];
        int r;

        if (!metrics->data || !settings->data)
                return -ENOENT;
        r = gc_dump_demo_settings(settings->data, settings->len, &now, &start, &end, err,
                                  sizeof(err));
        if (r < 0)
                return r;
        gc_config_savings_opts(c->cfg, &so);
        u->store = gc_gpuuse_new(&so.usage);
        if (!u->store)
                return -ENOMEM;
        gc_gpuuse_set_share_sink(u->store, ctl__share, u);
        u->prom.lookback_s = c->cfg->prometheus.lookback_days * 86400;
        u->prom.step_s = c->cfg->prometheus.step_s;
        memset(&st, 0, sizeof(st));
        r = gc_gpuuse_ingest_text(u->store, metrics->data, metrics->len, now,
                                  gc_savings_series_interval(metrics->data, metrics->len, &first),
                                  &st);
        if (r < 0)
                return r;
        ctl__count(u, &st, 1);
        u->fetched_at = now; /* the example's moment, not the wall clock's */
        ctl__publish_table(u, now);
        pthread_mutex_lock(&c->mu);
        r = ctl__advise_now(c, now);
        pthread_mutex_unlock(&c->mu);
        return r;
}

int gc__ctl_usage_start(ctl *c)
{
        struct ctl_usage *u = calloc(1, sizeof(*u));
        gc_savings_opts so;
        char err[256];
        int r;

        if (!u)
                return -ENOMEM;
        pthread_mutex_init(&u->mu, NULL);
        u->c = c;
        c->usage = u;
        if (c->o->demo) {
                r = ctl__demo(c);
                if (r < 0)
                        gc_log(GC_LOG_WARN, "demo: no usage data", "error", strerror(-r), NULL);
                return 0;
        }
        if (!c->cfg->has_dcgm && !c->cfg->has_prometheus)
                return 0;
        gc_config_savings_opts(c->cfg, &so);
        u->store = gc_gpuuse_new(&so.usage);
        if (!u->store)
                return -ENOMEM;
        gc_gpuuse_set_share_sink(u->store, ctl__share, u);
        u->prom.lookback_s = c->cfg->prometheus.lookback_days * 86400;
        u->prom.step_s = c->cfg->prometheus.step_s;
        if (c->cfg->has_dcgm) {
                u->kube = gc_kube_new(&c->kcfg, err, sizeof(err));
                if (!u->kube) {
                        gc_log(GC_LOG_ERROR, "cannot start the usage reader", "error", err, NULL);
                        return -ENOMEM;
                }
        }
        if (pthread_create(&u->thread, NULL, ctl__usage_main, u) != 0)
                return -EAGAIN;
        u->started = 1;
        gc_log(GC_LOG_INFO, "reading GPU usage", "dcgm", c->cfg->has_dcgm ? c->cfg->dcgm.ns : "off",
               "prometheus", c->cfg->has_prometheus ? c->cfg->prometheus.url : "off", NULL);
        return 0;
}

void gc__ctl_usage_stop(ctl *c)
{
        struct ctl_usage *u = c->usage;

        if (!u)
                return;
        if (u->started) {
                atomic_store(&u->stop, 1);
                pthread_join(u->thread, NULL);
        }
        c->usage = NULL;
        u->store = gc_gpuuse_free(u->store);
        u->kube = gc_kube_free(u->kube);
        gc_savings_table_release(&u->table);
        gc_advisor_result_unref(u->advice);
        free(u->advice_json);
        free(u->advice_md);
        free(u->stats);
        pthread_mutex_destroy(&u->mu);
        free(u);
}

void gc__ctl_usage_mark(ctl *c)
{
        struct ctl_usage *u = c->usage;

        if (!u)
                return;
        pthread_mutex_lock(&u->mu);
        for (size_t i = 0; i < u->n_stats; i++)
                gc_strpool_mark(c->pool, u->stats[i].team);
        pthread_mutex_unlock(&u->mu);
}

void gc__ctl_usage_for_snapshot(ctl *c, char **ret_json, char **ret_md,
                                gc_api_finding_stat **ret_stats, size_t *ret_n,
                                gc_advisor_result **ret_advice)
{
        struct ctl_usage *u = c->usage;
        gc_api_finding_stat *stats = NULL;
        gc_advisor_result *advice = NULL;
        char *json = NULL, *md = NULL;
        size_t n = 0;

        if (u) {
                pthread_mutex_lock(&u->mu);
                if (u->advice_json) {
                        /* All under one lock: the documents are this result's. */
                        advice = gc_advisor_result_ref(u->advice);
                        json = strdup(u->advice_json);
                        md = u->advice_md ? strdup(u->advice_md) : NULL;
                        if (json && u->n_stats) {
                                stats = malloc(u->n_stats * sizeof(*stats));
                                if (stats) {
                                        memcpy(stats, u->stats, u->n_stats * sizeof(*stats));
                                        n = u->n_stats;
                                }
                        }
                }
                pthread_mutex_unlock(&u->mu);
        }
        *ret_json = json;
        *ret_md = md;
        *ret_stats = stats;
        *ret_n = n;
        *ret_advice = advice;
}

void gc__ctl_usage_pod(ctl *c, const char *ns, const char *name, double *ret_mean, double *ret_p95,
                       double *ret_peak_mib, uint64_t *ret_samples)
{
        struct ctl_usage *u = c->usage;
        const gc_gpuuse_pod *p = NULL;

        *ret_mean = NAN;
        *ret_p95 = NAN;
        *ret_peak_mib = NAN;
        *ret_samples = 0;
        if (!u)
                return;
        pthread_mutex_lock(&u->mu);
        if (u->has_table)
                p = gc_savings_table_find(&u->table, ns, name);
        if (p && p->samples) {
                *ret_mean = p->activity_mean;
                *ret_p95 = p->activity_p95;
                *ret_peak_mib = p->mem_used_peak_mib;
                *ret_samples = p->samples;
        }
        pthread_mutex_unlock(&u->mu);
}

void gc__ctl_usage_health(ctl *c, gc_api_health *h)
{
        struct ctl_usage *u = c->usage;

        if (!u)
                return;
        pthread_mutex_lock(&u->mu);
        h->usage_at = u->fetched_at;
        h->usage_errors = u->errors;
        h->usage_samples = u->samples;
        pthread_mutex_unlock(&u->mu);
}
