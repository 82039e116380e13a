/* savings: the advisor's input from the ledger, pod records and dcgm usage (CLI and controller). */
#include "savings/savings.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "promtext/promtext.h"

static const char *gc_savings__dup(gc_strpool *p, const char *s, int *failed)
{
        const char *r;

        if (!s)
                return NULL;
        r = gc_strpool_intern0(p, s);
        if (!r)
                *failed = 1;
        return r;
}

static int gc_savings__cmp(const void *a, const void *b)
{
        const gc_gpuuse_pod *x = a, *y = b;
        int r = strcmp(x->ns, y->ns);

        return r ? r : strcmp(x->pod, y->pod);
}

void gc_savings_table_release(gc_savings_table *t)
{
        free(t->v);
        t->pool = gc_strpool_free(t->pool);
        t->v = NULL;
        t->n = 0;
}

int gc_savings_table_build(const gc_gpuuse *s, int64_t window_start, int64_t window_end,
                           gc_savings_table *ret)
{
        gc_savings_table t;
        size_t cursor = 0, cap = gc_gpuuse_pod_count(s);
        gc_gpuuse_pod p;
        int failed = 0;

        memset(&t, 0, sizeof(t));
        t.pool = gc_strpool_new((size_t)1 << 30);
        t.v = calloc(cap ? cap : 1, sizeof(*t.v));
        if (!t.pool || !t.v) {
                gc_savings_table_release(&t);
                return -ENOMEM;
        }
        while (t.n < cap && gc_gpuuse_pod_next(s, &cursor, window_start, window_end, &p) == 0) {
                if (!p.ns || !p.pod)
                        continue;
                p.ns = gc_savings__dup(t.pool, p.ns, &failed);
                p.pod = gc_savings__dup(t.pool, p.pod, &failed);
                p.container = gc_savings__dup(t.pool, p.container, &failed);
                p.model = gc_savings__dup(t.pool, p.model, &failed);
                p.mig_profile = gc_savings__dup(t.pool, p.mig_profile, &failed);
                p.hostname = gc_savings__dup(t.pool, p.hostname, &failed);
                if (failed) {
                        gc_savings_table_release(&t);
                        return -ENOMEM;
                }
                t.v[t.n++] = p;
        }
        qsort(t.v, t.n, sizeof(*t.v), gc_savings__cmp);
        *ret = t;
        return 0;
}

const gc_gpuuse_pod *gc_savings_table_find(const gc_savings_table *t, const char *ns,
                                           const char *pod)
{
        gc_gpuuse_pod key;

        if (!t || !t->n || !ns || !pod)
                return NULL;
        memset(&key, 0, sizeof(key));
        key.ns = ns;
        key.pod = pod;
        return bsearch(&key, t->v, t->n, sizeof(*t->v), gc_savings__cmp);
}

typedef struct gc_savings__acc {
        int64_t start, end, now;
        gc_savings_pod_fn pod_fn;
        void *ud;
        const gc_savings_table *usage;
        gc_advisor_pod *v;
        size_t n, cap;
} gc_savings__acc;

static const char *gc_savings__source(gc_gpuuse_source s)
{
        switch (s) {
        case GC_GPUUSE_SRC_GR_ENGINE:
                return "DCGM_FI_PROF_GR_ENGINE_ACTIVE";
        case GC_GPUUSE_SRC_GPU_UTIL:
                return "DCGM_FI_DEV_GPU_UTIL";
        case GC_GPUUSE_SRC_MIXED:
                return "DCGM_FI_PROF_GR_ENGINE_ACTIVE, DCGM_FI_DEV_GPU_UTIL";
        default:
                return NULL;
        }
}

/*
 * Merges a piece into the entry of the same pod it continues (its end is the piece's start):
 * the held span grows and the GPU-equivalents become their time-weighted mean (an open piece:
 * the current share). Returns 1 when merged.
 */
static int gc_savings__extend(gc_savings__acc *a, const gc_usage *u)
{
        for (size_t i = a->n; i-- > 0;) {
                gc_advisor_pod *p = &a->v[i];
                int64_t s, e, held_to;

                if (p->end != u->start || p->name != u->dims[GC_DIM_POD] ||
                    p->ns != u->dims[GC_DIM_NAMESPACE] || p->node != u->dims[GC_DIM_NODE])
                        continue;
                s = p->start > a->start ? p->start : a->start;
                e = p->end > a->end ? a->end : p->end;
                held_to = u->end == GC_OPEN || u->end > a->end ? a->end : u->end;
                if (u->end != GC_OPEN && held_to > s && e >= s)
                        p->geq = (p->geq * (double)(e - s) + u->geq * (double)(held_to - e)) /
                                 (double)(held_to - s);
                else
                        p->geq = u->geq;
                p->end = u->end;
                if (p->has_usage) {
                        const gc_gpuuse_pod *m = gc_savings_table_find(a->usage, p->ns, p->name);
                        int64_t to = a->now && held_to > a->now ? a->now : held_to;

                        p->coverage = m && to > s ? m->sampled_s / (double)(to - s) : 0;
                        if (p->coverage > 1)
                                p->coverage = 1;
                }
                return 1;
        }
        return 0;
}

static int gc_savings__usage(void *ud, const gc_usage *u)
{
        gc_savings__acc *a = ud;
        const gc_gpuuse_pod *m;
        const gc_pod *rec;
        gc_advisor_pod *p;
        int64_t held_from, held_to;

        if (u->start >= a->end || (u->end != GC_OPEN && u->end <= a->start) ||
            (u->flags & GC_USAGE_F_ADJUST))
                return 0;
        /* A later piece of a pod on a shared DRA claim extends the pod's entry (one pod). */
        if ((u->flags & GC_USAGE_F_PART) && gc_savings__extend(a, u))
                return 0;
        if (gc_grow((void **)&a->v, &a->cap, a->n, sizeof(*a->v), 256, 0) < 0)
                return -ENOMEM;
        p = &a->v[a->n++];
        memset(p, 0, sizeof(*p));
        p->uid = u->pod_uid;
        p->ns = u->dims[GC_DIM_NAMESPACE];
        p->name = u->dims[GC_DIM_POD];
        p->team = u->dims[GC_DIM_TEAM];
        p->project = u->dims[GC_DIM_PROJECT];
        p->node = u->dims[GC_DIM_NODE];
        p->model = u->dims[GC_DIM_MODEL];
        p->capacity_type = u->dims[GC_DIM_CAPACITY_TYPE];
        p->geq = u->geq;
        p->price_per_gpu_hour = u->price_per_gpu_hour;
        p->start = u->start;
        p->end = u->end;
        p->gpus_requested = u->geq;
        rec = a->pod_fn ? a->pod_fn(a->ud, u->pod_uid) : NULL;
        if (rec) {
                p->controller_kind = rec->controller_kind;
                p->controller = rec->controller;
                p->container = rec->container;
                if (rec->n_gpu) {
                        p->resource = rec->gpu[0].resource;
                        p->gpus_requested = (double)rec->gpu[0].count;
                } else if (rec->claims) {
                        /* GPUs through DRA claims: as many as it holds GPU-equivalents. */
                        p->resource = GC_ADVISOR_DRA_RESOURCE;
                }
        }
        m = gc_savings_table_find(a->usage, p->ns, p->name);
        if (!m || m->samples == 0)
                return 0;
        held_from = u->start > a->start ? u->start : a->start;
        held_to = u->end == GC_OPEN || u->end > a->end ? a->end : u->end;
        if (a->now && held_to > a->now)
                held_to = a->now;
        p->has_usage = 1;
        p->samples = m->samples;
        p->coverage = held_to > held_from ? m->sampled_s / (double)(held_to - held_from) : 0;
        if (p->coverage > 1)
                p->coverage = 1;
        p->usage_start = m->first_at;
        p->usage_end = m->last_at;
        p->activity_mean = m->activity_mean;
        p->activity_p95 = m->activity_p95;
        p->tensor_mean = m->tensor_mean;
        p->mem_used_peak_mib = m->mem_used_peak_mib;
        p->mem_total_mib = m->mem_total_mib;
        p->devices_seen = m->devices;
        p->devices_active = m->devices_active;
        p->idle_longest_s = m->idle_longest_s;
        p->idle_total_s = m->idle_total_s;
        p->mig_profile = m->mig_profile;
        p->activity_source = gc_savings__source(m->activity_src);
        return 0;
}

int gc_savings_collect(const gc_ledger *l, int64_t start, int64_t end, int64_t now,
                       gc_savings_pod_fn pod_fn, void *ud, const gc_savings_table *usage,
                       gc_advisor_pod **ret, size_t *ret_n)
{
        gc_ledger_visitor vis;
        gc_savings__acc a;
        int r;

        memset(&a, 0, sizeof(a));
        a.start = start;
        a.end = end;
        a.now = now;
        a.pod_fn = pod_fn;
        a.ud = ud;
        a.usage = usage;
        memset(&vis, 0, sizeof(vis));
        vis.usage = gc_savings__usage;
        r = gc_ledger_visit(l, &vis, &a);
        if (r < 0) {
                free(a.v);
                return r;
        }
        *ret = a.v;
        *ret_n = a.n;
        return 0;
}

/*
 * A view of r with only team's findings and their totals; arrays malloc'd into *ret. The totals
 * come from the findings, or, when the advisor kept only its max_findings largest, from the
 * per-(kind, team) rows, which count them all.
 */
static int gc_savings__only_team(const gc_advisor_result *r, const char *team,
                                 gc_advisor_result *ret)
{
        gc_advisor_result v = *r;
        size_t n = 0, ns = 0, total = 0;

        v.findings = calloc(r->n_findings ? r->n_findings : 1, sizeof(*v.findings));
        v.stats = calloc(r->n_stats ? r->n_stats : 1, sizeof(*v.stats));
        if (!v.findings || !v.stats) {
                free(v.findings);
                free(v.stats);
                return -ENOMEM;
        }
        v.monthly_savings = 0;
        memset(v.savings_by_kind, 0, sizeof(v.savings_by_kind));
        memset(v.count_by_kind, 0, sizeof(v.count_by_kind));
        for (size_t i = 0; i < r->n_findings; i++) {
                const gc_finding *f = &r->findings[i];

                if (!f->team || strcmp(f->team, team) != 0)
                        continue;
                v.findings[n++] = *f;
                if (r->n_findings < r->n_findings_total)
                        continue;
                v.monthly_savings += f->monthly_savings;
                if ((unsigned)f->kind < GC_FINDING_KIND_COUNT) {
                        v.savings_by_kind[f->kind] += f->monthly_savings;
                        v.count_by_kind[f->kind]++;
                }
        }
        for (size_t i = 0; i < r->n_stats; i++) {
                const gc_advisor_stat *st = &r->stats[i];
                gc_finding_kind k;

                if (!st->team || strcmp(st->team, team) != 0)
                        continue;
                v.stats[ns++] = *st;
                total += st->count;
                if (r->n_findings < r->n_findings_total &&
                    gc_finding_kind_parse(st->kind, &k) == 0) {
                        v.monthly_savings += st->monthly_savings;
                        v.savings_by_kind[k] += st->monthly_savings;
                        v.count_by_kind[k] += st->count;
                }
        }
        v.n_findings = n;
        v.n_findings_total = r->n_findings < r->n_findings_total ? total : n;
        v.n_stats = ns;
        /* The notes name pods of every team: a team's copy leaves them out. */
        v.notes = NULL;
        v.n_notes = v.n_notes_total = 0;
        *ret = v;
        return 0;
}

void gc_savings_shared_opts(gc_advisor_opts *o, const gc_accountant *a)
{
        gc_account_shared_gpu g[GC_ADVISOR_MAX_SHARED];
        size_t n = gc_account_shared_gpus(a, g, GC_ADVISOR_MAX_SHARED);

        o->n_shared = 0;
        for (size_t i = 0; i < n; i++) {
                gc_advisor_shared *s = &o->shared[o->n_shared];
                const char *klass = NULL;

                if (!g[i].model || g[i].memory_mib <= 0)
                        continue;
                memset(s, 0, sizeof(*s));
                if (strcmp(g[i].driver, GC_DRA_NVIDIA_DRIVER) == 0) {
                        s->way = g[i].shares >= 1 ? GC_SHARE_DRA_SHARES : GC_SHARE_DRA_MEMORY;
                        klass = o->dra_gpu_class[0] ? o->dra_gpu_class : GC_DRA_NVIDIA_DRIVER;
                } else if (strcmp(g[i].driver, GC_DRA_HAMI_DRIVER) == 0) {
                        s->way = GC_SHARE_DRA_CORES;
                        klass = GC_DRA_HAMI_DRIVER; /* its chart's DeviceClass */
                } else if (strcmp(g[i].driver, GC_HAMI_DRIVER) == 0) {
                        s->way = GC_SHARE_HAMI;
                } else {
                        continue;
                }
                gc_strlcpy(s->model, g[i].model, sizeof(s->model));
                if (klass)
                        gc_strlcpy(s->device_class, klass, sizeof(s->device_class));
                s->shares = g[i].shares;
                s->memory_mib = g[i].memory_mib;
                o->n_shared++;
        }
}

int gc_savings_render(const char *currency, const gc_advisor_result *res, const char *team,
                      size_t max_findings, gc_buf *md, gc_buf *json)
{
        gc_advisor_result view;
        int r = 0;

        if (!res)
                return -EINVAL;
        if (team) {
                r = gc_savings__only_team(res, team, &view);
                if (r < 0)
                        return r;
        } else {
                view = *res; /* its arrays are res's: borrowed, not freed below */
        }
        if (max_findings && view.n_findings > max_findings)
                view.n_findings = max_findings; /* n_findings_total keeps the count */
        if (md)
                r = gc_advisor_markdown(&view, currency, md);
        if (r == 0 && json)
                r = gc_advisor_json(&view, currency, json);
        if (team) {
                free(view.findings);
                free(view.stats);
        }
        return r;
}

int gc_savings_run(const gc_savings_opts *o, const gc_ledger *l, int64_t start, int64_t end,
                   int64_t now, const gc_advisor_pod *pods, size_t n_pods, const char *usage_note,
                   const char *team, size_t max_findings, gc_buf *md, gc_buf *json,
                   gc_advisor_result **ret_result, char *err, size_t errlen)
{
        gc_advisor_opts opts = o->advisor;
        gc_advisor_input in;
        gc_advisor_result *res = NULL;
        int r;

        if (team)
                opts.max_findings = 0; /* filter from all of them, then cut */
        else if (max_findings && (opts.max_findings == 0 || opts.max_findings > max_findings))
                opts.max_findings = max_findings;
        memset(&in, 0, sizeof(in));
        in.opts = &opts;
        in.start = start;
        in.end = end;
        in.now = now;
        in.ledger = l;
        in.catalog = o->catalog;
        in.tco = o->tco;
        in.pods = pods;
        in.n_pods = n_pods;
        in.usage_note = usage_note;
        in.team_label_key = o->team_label_key;
        in.project_label_key = o->project_label_key;
        r = gc_advisor_run(&in, &res, err, errlen);
        if (r < 0)
                return r;
        r = gc_savings_render(o->currency, res, team, max_findings, md, json);
        if (r < 0)
                snprintf(err, errlen, "cannot render the findings: %s", strerror(-r));
        if (r == 0 && ret_result) {
                *ret_result = res;
                res = NULL;
        }
        gc_advisor_result_unref(res);
        return r;
}

/* Largest gap between scrapes taken as one series (a longer gap is a hole, not an interval). */
#define SAV_MAX_INTERVAL_S 3600

typedef struct gc_savings__times {
        int64_t *v;
        size_t n, cap;
        int all_stamped;
} gc_savings__times;

static int gc_savings__time_seen(const gc_prom_sample *s, void *ud)
{
        gc_savings__times *t = ud;

        if (!s->has_timestamp) {
                t->all_stamped = 0;
                return 0;
        }
        if (t->n && t->v[t->n - 1] == s->timestamp_ms / 1000)
                return 0;
        if (gc_grow((void **)&t->v, &t->cap, t->n, sizeof(*t->v), 1024, 0) < 0)
                return -ENOMEM;
        t->v[t->n++] = s->timestamp_ms / 1000;
        return 0;
}

static int gc_savings__cmp_i64(const void *a, const void *b)
{
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

        return (x > y) - (x < y);
}

int64_t gc_savings_series_interval(const char *data, size_t len, int64_t *ret_first)
{
        gc_savings__times t = {NULL, 0, 0, 1};
        /* As gc_gpuuse_ingest_text reads it: an OpenMetrics file stamps in seconds. */
        unsigned flags = gc_prom_body_flags(data, len);
        int64_t best = 0;

        *ret_first = 0;
        if (gc_prom_parse(data, len, 0, flags, gc_savings__time_seen, &t, NULL) < 0 || !t.n) {
                free(t.v);
                return 0;
        }
        qsort(t.v, t.n, sizeof(*t.v), gc_savings__cmp_i64);
        *ret_first = t.v[0];
        for (size_t i = 1; i < t.n; i++) {
                int64_t gap = t.v[i] - t.v[i - 1];

                if (gap > 0 && (best == 0 || gap < best))
                        best = gap;
        }
        free(t.v);
        return t.all_stamped && best <= SAV_MAX_INTERVAL_S ? best : 0;
}
