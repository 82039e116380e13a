/* publish_io: report ConfigMaps, refreshed when their figures change (docs/controller.md). */
#include <errno.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller_int.h"
#include "log/log.h"
#include "kube/kube.h"
#include "publish/publish.h"
#include "savings/savings.h"

#define CTL_REPORT_FINDINGS 50 /* a report lists the largest; the API has them all */

/* ---- what this process wrote ------------------------------------------------------------- */

/* A key's hash for the memo's index. */
static uint32_t ctl__memo_hash(const char *key)
{
        return gc_hash_fin(gc_hash(key, strlen(key), 0));
}

typedef struct ctl__memo_find {
        const ctl_memo *m;
        const char *key;
} ctl__memo_find;

static int ctl__memo_eq(const void *ctx, size_t row)
{
        const ctl__memo_find *f = ctx;

        return strcmp(f->m->keys[row], f->key) == 0;
}

/* The row of key, or -1. */
static long ctl__memo_row(const ctl_memo *m, const char *key)
{
        ctl__memo_find f = {m, key};
        size_t pos;

        if (!m->keys || !gc_index_find(&m->ix, ctl__memo_hash(key), ctl__memo_eq, &f, &pos))
                return -1;
        return (long)gc_index_row(&m->ix, pos);
}

/* 1 and *ret_value when key is remembered. */
static int ctl__memo_get(const ctl_memo *m, const char *key, uint64_t *ret_value)
{
        long row = ctl__memo_row(m, key);

        if (row < 0)
                return 0;
        *ret_value = m->values[row];
        return 1;
}

/*
 * Remembers key (copied) with value; at the bound the oldest entry is forgotten (at worst one
 * extra write, or an Event sent again and refused as existing). Out of memory: not remembered.
 */
static void ctl__memo_put(ctl_memo *m, const char *key, uint64_t value)
{
        long row = ctl__memo_row(m, key);
        size_t r;
        char *copy;

        if (row >= 0) {
                m->values[row] = value;
                return;
        }
        if (!m->max)
                return;
        if (!m->keys) {
                m->keys = calloc(m->max, sizeof(*m->keys));
                m->values = calloc(m->max, sizeof(*m->values));
                if (!m->keys || !m->values || gc_index_reserve(&m->ix, m->max) < 0) {
                        gc__ctl_memo_free(m);
                        return;
                }
        }
        copy = strdup(key);
        if (!copy)
                return;
        r = m->next;
        if (m->keys[r]) {
                (void)gc_index_del_row(&m->ix, ctl__memo_hash(m->keys[r]), r);
                free(m->keys[r]);
        }
        m->keys[r] = copy;
        m->values[r] = value;
        gc_index_add_new(&m->ix, ctl__memo_hash(copy), r);
        m->next = (m->next + 1) % m->max;
}

void gc__ctl_memo_free(ctl_memo *m)
{
        for (size_t i = 0; m->keys && i < m->max; i++)
                free(m->keys[i]);
        free(m->keys);
        free(m->values);
        gc_index_free(&m->ix);
        m->keys = NULL;
        m->values = NULL;
        m->next = 0;
}

/* A complete period is rewritten only when its content changed since this process wrote it. */
static int ctl__unchanged(ctl *c, const char *name, uint64_t hash)
{
        uint64_t was;

        return ctl__memo_get(&c->written, name, &was) && was == hash;
}

static void ctl__remember(ctl *c, const char *name, uint64_t hash)
{
        ctl__memo_put(&c->written, name, hash);
}

/*
 * Renders from l, writes outside the lock. l is the API's snapshot of the ledger (immutable: no
 * lock, so the informers go on meanwhile) or, before the first snapshot, the live ledger (under
 * the lock). The notes are copied as pointers under the lock: kept notes are freed only when
 * the controller is.
 */
static int ctl__write(ctl *c, const gc_ledger *l, const gc_publish_opts *po,
                      const gc_publish_period *p, const char *ns, const char *name,
                      const char *team, int64_t now)
{
        gc_publish_label labels[GC_PUBLISH_N_LABELS];
        gc_kube_kv kl[GC_PUBLISH_N_LABELS], data[2];
        const char *notes[GC_DIAG_KEEP];
        gc_publish_report rep;
        char err[512];
        size_t n_notes;
        int r;

        memset(&rep, 0, sizeof(rep));
        pthread_mutex_lock(&c->mu);
        n_notes = c->diag.n_kept;
        for (size_t i = 0; i < n_notes; i++)
                notes[i] = c->diag.msgs[i];
        if (l != c->ledger)
                pthread_mutex_unlock(&c->mu);
        r = gc_publish_render(l, po, p, now, team, notes, n_notes, &rep);
        if (l == c->ledger)
                pthread_mutex_unlock(&c->mu);
        if (r < 0) {
                atomic_fetch_add(&c->report_errors, 1);
                gc_log(GC_LOG_ERROR, "cannot render a report", "configmap", name, "error",
                       strerror(-r), NULL);
                goto finish;
        }
        gc_publish_labels(p->kind, labels);
        for (size_t i = 0; i < GC_PUBLISH_N_LABELS; i++) {
                kl[i].key = labels[i].key;
                kl[i].value = labels[i].value;
        }
        data[0].key = GC_PUBLISH_KEY_JSON;
        data[0].value = rep.json.data;
        data[1].key = GC_PUBLISH_KEY_MD;
        data[1].value = rep.md.data;
        r = gc_kube_configmap_put(c->kw, ns, name, kl, GC_PUBLISH_N_LABELS, data, 2, err,
                                  sizeof(err));
        atomic_fetch_add(r < 0 ? &c->report_errors : &c->report_writes, 1);
        if (r < 0)
                gc_log(GC_LOG_ERROR, "cannot write a report", "namespace", ns, "configmap", name,
                       "error", err, NULL);
        else if (rep.rows_cut)
                gc_log(GC_LOG_WARN, "report tables cut to fit a ConfigMap", "configmap", name,
                       NULL);
finish:
        gc_publish_report_release(&rep);
        return r;
}

/* Removes report ConfigMaps past retention. */
static void ctl__expire(ctl *c, const gc_publish_opts *po, int64_t now)
{
        const char **expired = NULL;
        char **names = NULL;
        size_t n = 0, n_expired = 0;
        char err[256];

        if (gc_kube_configmap_list(c->kw, c->ns, GC_PUBLISH_SELECTOR, &names, &n, err,
                                   sizeof(err)) < 0) {
                gc_log(GC_LOG_WARN, "cannot list report ConfigMaps", "error", err, NULL);
                return;
        }
        if (gc_publish_expired(po, now, (const char *const *)names, n, &expired, &n_expired) == 0) {
                for (size_t i = 0; i < n_expired; i++) {
                        if (gc_kube_configmap_delete(c->kw, c->ns, expired[i], err, sizeof(err)) <
                            0)
                                gc_log(GC_LOG_WARN, "cannot delete an expired report", "configmap",
                                       expired[i], "error", err, NULL);
                        else
                                gc_log(GC_LOG_INFO, "expired report deleted", "configmap",
                                       expired[i], NULL);
                }
        }
        free(expired);
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

/*
 * The advisor's Savings for the weekly reports a team lead reads: this week's (so far) and the
 * latest complete week's, with its team copies (that team's findings only). Other periods get
 * none. They are rendered from adv, the result the API's snapshot serves (no advisor run, no
 * lock), so a report's Savings are /api/v1/reports' and /api/v1/recommendations' figures, cut
 * to the largest CTL_REPORT_FINDINGS. The hash of a complete period is mixed with the findings',
 * so new findings rewrite it.
 */
typedef struct ctl__savings {
        gc_buf md, json;
        gc_publish_opts po; /* the options with the savings set */
        uint64_t hash;
} ctl__savings;

static void ctl__savings_make(ctl *c, const gc_advisor_result *adv, const gc_publish_opts *po,
                              const gc_publish_plan *plan, const gc_publish_period *p,
                              const char *team, int64_t now, ctl__savings *ret)
{
        int64_t end = p->end < now ? p->end : now;
        int r;

        ret->po = *po;
        ret->hash = p->hash;
        /* A quarter of the ConfigMap each at most, so the cost tables keep room to be cut. */
        gc_buf_init(&ret->md, GC_PUBLISH_MAX_BYTES / 4);
        gc_buf_init(&ret->json, GC_PUBLISH_MAX_BYTES / 4);
        if (!adv || p->kind != GC_PUBLISH_WEEKLY || (p->complete && p != plan->latest_weekly) ||
            end <= p->start)
                return;
        r = gc_savings_render(c->cfg->catalog->currency, adv, team, CTL_REPORT_FINDINGS, &ret->md,
                              &ret->json);
        if (r == -E2BIG)
                gc_log(GC_LOG_WARN, "the findings do not fit in a report; see the API", "configmap",
                       p->name, NULL);
        else if (r < 0)
                gc_log(GC_LOG_ERROR, "cannot render the findings for a report", "configmap",
                       p->name, "error", strerror(-r), NULL);
        if (r < 0 || !ret->md.data || !ret->json.data)
                return;
        ret->po.savings_markdown = ret->md.data;
        ret->po.savings_json = ret->json.data;
        ret->hash ^= gc_hash(ret->json.data, ret->json.len, 0x5a7e5);
}

static void ctl__savings_release(ctl__savings *s)
{
        gc_buf_free(&s->md);
        gc_buf_free(&s->json);
}

/* ---- budget Events -------------------------------------------------------------------------- */

/* Events this process created (or found created): not sent again. Their names are stable, so a
 * restarted process that sends one again gets 409 and counts it as sent. */
static int ctl__event_sent(ctl *c, const char *ns, const char *name)
{
        char key[160];
        uint64_t unused;

        snprintf(key, sizeof(key), "%.63s/%.79s", ns, name);
        return ctl__memo_get(&c->events, key, &unused);
}

static void ctl__event_remember(ctl *c, const char *ns, const char *name)
{
        char key[160];

        snprintf(key, sizeof(key), "%.63s/%.79s", ns, name);
        ctl__memo_put(&c->events, key, 1);
}

/*
 * Where a budget's Events go: the team's namespace, the budget's own namespace (a workload's,
 * copied into buf), or ours.
 */
static const char *ctl__event_ns(const ctl *c, const gc_budget *b, char *buf, size_t size)
{
        size_t n;
        const char *ns;

        if (b->dim == GC_DIM_NAMESPACE)
                return b->name;
        if (b->dim == GC_DIM_WORKLOAD && (ns = gc_budget_workload_ns(b->name, &n)) && n < size) {
                memcpy(buf, ns, n);
                buf[n] = '\0';
                return buf;
        }
        if (b->dim == GC_DIM_TEAM)
                for (size_t t = 0; t < c->cfg->n_team_namespaces; t++)
                        if (strcmp(c->cfg->team_namespaces[t].key, b->name) == 0)
                                return c->cfg->team_namespaces[t].value;
        return c->ns;
}

/* One Event per budget, period and threshold crossed (config budgets.events). */
static void ctl__budget_events(ctl *c, int64_t now)
{
        const gc_config *cfg = c->cfg;

        if (!cfg->budget_events)
                return;
        for (size_t i = 0; i < cfg->n_budgets; i++) {
                const gc_budget *b = &cfg->budgets[i];
                char nsbuf[64];
                const char *ns = ctl__event_ns(c, b, nsbuf, sizeof(nsbuf));
                gc_budget_status st;
                unsigned crossed;
                int r;

                pthread_mutex_lock(&c->mu);
                r = gc_budget_eval_now(c->ledger, b, cfg->tz, now, cfg->budget_warn_share, &st);
                pthread_mutex_unlock(&c->mu);
                if (r < 0)
                        continue;
                crossed = gc_budget_crossed(&st);
                for (unsigned bit = GC_BUDGET_AT_WARN; bit <= GC_BUDGET_AT_FORECAST; bit <<= 1) {
                        gc_budget_alert a;
                        gc_kube_event_spec e;
                        char err[512];

                        if (!(crossed & bit) ||
                            gc_budget_alert_make(b, &st, bit, cfg->budget_warn_share,
                                                 cfg->catalog->currency, cfg->tz, &a) < 0 ||
                            ctl__event_sent(c, ns, a.name))
                                continue;
                        memset(&e, 0, sizeof(e));
                        e.ns = ns;
                        e.name = a.name;
                        e.involved_kind = "Namespace";
                        e.involved_name = ns;
                        e.reason = a.reason;
                        e.message = a.message;
                        e.type = "Warning";
                        r = gc_kube_event_create(c->kw, &e, now, err, sizeof(err));
                        if (r == 0 || r == -EEXIST) {
                                ctl__event_remember(c, ns, a.name);
                                if (r == 0)
                                        gc_log(GC_LOG_INFO, "budget event", "namespace", ns,
                                               "reason", a.reason, "message", a.message, NULL);
                        } else {
                                gc_log(GC_LOG_WARN, "cannot create a budget event", "namespace", ns,
                                       "error", err, NULL);
                        }
                }
        }
}

int gc__ctl_publish(ctl *c, int64_t now)
{
        gc_publish_opts po;
        gc_publish_plan plan;
        gc_snapshot *snap = c->api ? gc_api_acquire(c->api) : NULL;
        const gc_ledger *l = snap ? gc_snapshot_ledger(snap) : c->ledger;
        /* The snapshot's findings; before the first snapshot, those it will take. */
        gc_advisor_result *own = snap ? NULL : gc__ctl_usage_advice(c);
        const gc_advisor_result *adv = snap ? gc_snapshot_advice(snap) : own;
        size_t written = 0;
        int r, failed = 0;

        /* Fault injection for the e2e tests: report writes that hang (a slow API server). */
        if (c->o->test_stall_report_s > 0)
                gc_log(GC_LOG_WARN, "test: stalling report writes", NULL);
        for (int64_t i = 0; i < c->o->test_stall_report_s * 10 && !c->inf_stop; i++)
                usleep(100 * 1000);
        gc_config_publish_opts(c->cfg, &po);
        memset(&plan, 0, sizeof(plan));
        /* The reports stand at the snapshot's time, which its ledger holds (at most
         * --snapshot-interval ago), as /api/v1/reports do. */
        if (snap)
                now = gc_snapshot_now(snap);
        else
                pthread_mutex_lock(&c->mu);
        r = gc_publish_plan_make(l, &po, now, &plan);
        if (!snap)
                pthread_mutex_unlock(&c->mu);
        if (r < 0) {
                gc_log(GC_LOG_ERROR, "cannot plan the reports", "error", strerror(-r), NULL);
                gc_advisor_result_unref(own);
                gc_snapshot_unref(snap);
                return r;
        }
        for (size_t i = 0; i < plan.n_periods; i++) {
                const gc_publish_period *p = &plan.periods[i];
                ctl__savings sv;

                ctl__savings_make(c, adv, &po, &plan, p, NULL, now, &sv);
                if (p->complete && ctl__unchanged(c, p->name, sv.hash)) {
                        ctl__savings_release(&sv);
                        continue;
                }
                if (ctl__write(c, l, &sv.po, p, c->ns, p->name, NULL, now) < 0) {
                        failed++;
                        ctl__savings_release(&sv);
                        continue;
                }
                written++;
                if (p->complete)
                        ctl__remember(c, p->name, sv.hash);
                ctl__savings_release(&sv);
        }
        for (int k = 0; k < 3; k++) {
                const gc_publish_period *p = k == 0   ? plan.latest_daily
                                             : k == 1 ? plan.latest_weekly
                                                      : plan.latest_monthly;
                const char *name = k == 0   ? GC_PUBLISH_DAILY_LATEST
                                   : k == 1 ? GC_PUBLISH_WEEKLY_LATEST
                                            : GC_PUBLISH_MONTHLY_LATEST;
                ctl__savings sv;

                if (!p)
                        continue;
                ctl__savings_make(c, adv, &po, &plan, p, NULL, now, &sv);
                if (!ctl__unchanged(c, name, sv.hash)) {
                        if (ctl__write(c, l, &sv.po, p, c->ns, name, NULL, now) == 0)
                                ctl__remember(c, name, sv.hash);
                        else
                                failed++;
                }
                ctl__savings_release(&sv);
        }
        /* Each team's own latest weekly and monthly report, in its namespace. */
        for (size_t t = 0; t < 2 * c->cfg->n_team_namespaces; t++) {
                const gc_label *tn = &c->cfg->team_namespaces[t / 2];
                const gc_publish_period *p = t % 2 ? plan.latest_monthly : plan.latest_weekly;
                const char *name = t % 2 ? GC_PUBLISH_MONTHLY_LATEST : GC_PUBLISH_WEEKLY_LATEST;
                char key[GC_PUBLISH_NAME_MAX + 64];
                ctl__savings sv;

                if (!p)
                        continue;
                /* The weekly copy keeps the key it always had; the monthly one adds "/m". */
                snprintf(key, sizeof(key), "%s/%s%s", tn->value, tn->key, t % 2 ? "/m" : "");
                ctl__savings_make(c, adv, &po, &plan, p, tn->key, now, &sv);
                if (!ctl__unchanged(c, key, sv.hash)) {
                        if (ctl__write(c, l, &sv.po, p, tn->value, name, tn->key, now) == 0)
                                ctl__remember(c, key, sv.hash);
                        else
                                failed++;
                }
                ctl__savings_release(&sv);
        }
        ctl__expire(c, &po, now);
        ctl__budget_events(c, now);
        if (written)
                gc_log(GC_LOG_DEBUG, "reports written", NULL);
        gc_publish_plan_release(&plan);
        gc_advisor_result_unref(own);
        gc_snapshot_unref(snap);
        return failed ? -EIO : 0;
}
