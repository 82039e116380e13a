/* snapshot: the controller's state copied into an immutable API snapshot (docs/controller.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "controller_int.h"
#include "log/log.h"

typedef struct ctl__pods {
        ctl *c;
        gc_api_pod *v;
        size_t n, cap;
        gc_ptrmap by_uid; /* pooled pod uid -> row, for pods in pieces (DRA) */
} ctl__pods;

/*
 * A piece of a pod whose GPU-equivalents changed while it ran (a shared ResourceClaim: keyed
 * "<uid>#dra<i>", docs/dra.md) joins the pod's row: the row spans all pieces, its geq is the
 * latest piece's, and the GPU-seconds of the earlier pieces are carried in gpu_seconds_before.
 * Returns 1 when merged, 0 when the row is new (*ret_uid: the pod's uid), < 0 on error.
 */
static int ctl__pod_piece(ctl__pods *ps, const gc_usage *u, const char **ret_uid)
{
        const char *uid = u->pod_uid, *cut = strstr(uid, "#dra");
        gc_api_pod *row;
        size_t idx;

        if (cut) {
                uid = gc_strpool_intern(ps->c->pool, u->pod_uid, (size_t)(cut - u->pod_uid));
                if (!uid)
                        return -ENOMEM;
        }
        *ret_uid = uid;
        if (gc_ptrmap_get(&ps->by_uid, uid, &idx) < 0)
                return 0;
        row = &ps->v[idx];
        if (u->start >= row->geq_since) {
                /* A later piece: the row's latest one becomes the past. */
                int64_t e = row->end == GC_OPEN ? u->start : row->end;

                row->gpu_seconds_before += (double)(e - row->geq_since) * row->geq;
                row->geq_since = u->start;
                row->geq = u->geq;
                row->end = u->end;
        } else {
                row->gpu_seconds_before += (double)(u->end - u->start) * u->geq;
        }
        if (u->start < row->start)
                row->start = u->start;
        return 1;
}

/* One row per pod still in the ledger, joined with the pod's record when it has one. */
static int ctl__pod_row(void *ud, const gc_usage *u)
{
        ctl__pods *ps = ud;
        ctl *c = ps->c;
        gc_api_pod *row;
        const gc_pod *p;
        const char *uid;
        int r;

        if (u->flags & GC_USAGE_F_ADJUST)
                return 0; /* the usage basis's, not a pod */
        r = ctl__pod_piece(ps, u, &uid);
        if (r != 0)
                return r < 0 ? r : 0;

        if (gc_grow((void **)&ps->v, &ps->cap, ps->n, sizeof(*ps->v), 256, 0) < 0)
                return -ENOMEM;
        if (gc_ptrmap_put(&ps->by_uid, uid, ps->n) < 0)
                return -ENOMEM;
        row = &ps->v[ps->n++];
        memset(row, 0, sizeof(*row));
        row->uid = uid;
        row->ns = u->dims[GC_DIM_NAMESPACE];
        row->name = u->dims[GC_DIM_POD];
        row->node = u->dims[GC_DIM_NODE];
        row->team = u->dims[GC_DIM_TEAM];
        row->project = u->dims[GC_DIM_PROJECT];
        row->model = u->dims[GC_DIM_MODEL];
        row->capacity_type = u->dims[GC_DIM_CAPACITY_TYPE];
        row->workload =
            u->dims[GC_DIM_WORKLOAD] && *u->dims[GC_DIM_WORKLOAD] ? u->dims[GC_DIM_WORKLOAD] : NULL;
        row->geq = u->geq;
        row->price_per_gpu_hour = u->price_per_gpu_hour;
        row->start = u->start;
        row->geq_since = u->start;
        row->end = u->end;
        /* A pod deleted since keeps its interval until it is folded, but not its record. */
        p = gc_mirror_pod_get(c->mirror, uid);
        if (p) {
                row->controller_kind = p->controller_kind;
                row->controller = p->controller;
                row->container = p->container;
                for (uint8_t i = 0; i < p->n_gpu; i++)
                        row->gpus_requested += (double)p->gpu[i].count;
                /* A pod on DRA claims: the devices they hold (whole GPUs or partitions). */
                if (p->claims)
                        row->gpus_requested += (double)gc_account_pod_claim_devices(c->acct, p);
        }
        gc__ctl_usage_pod(c, row->ns, row->name, &row->activity_mean, &row->activity_p95,
                          &row->mem_used_peak_mib, &row->samples);
        return 0;
}

/* The GPU nodes present now, priced (node_gpu_hourly_cost, /api/v1/prices). Under c->mu. */
static int ctl__nodes(ctl *c, gc_api_node **ret, size_t *ret_n)
{
        size_t n = gc_mirror_nodes_count(c->mirror), k = 0;
        gc_api_node *v;

        *ret = NULL;
        *ret_n = 0;
        if (!n)
                return 0;
        v = calloc(n, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const gc_mirror_node_facts *e = gc_mirror_node_at(c->mirror, i);
                const gc_node_class *cls = gc_accountant_node_class(c->acct, e->name);

                if (!cls)
                        continue;
                v[k].name = e->name;
                v[k].instance_type = e->instance_type;
                v[k].region = e->region;
                v[k].model = cls->model;
                v[k].capacity_type = cls->capacity_type;
                v[k].gpus = e->gpus;
                v[k].geq = e->geq;
                v[k].price_per_gpu_hour = cls->price_per_gpu_hour;
                k++;
        }
        *ret = v;
        *ret_n = k;
        return 0;
}

/* The health figures every snapshot carries. Under c->mu (the ledger's and pool's sizes). */
static void ctl__health(ctl *c, gc_api_health *h)
{
        gc_strpool_stats ps;
        gc_ledger_stats ls;

        memset(h, 0, sizeof(*h));
        h->ready = atomic_load(&c->ready);
        h->leader = c->leader;
        h->demo = c->o->demo;
        h->started_at = c->started_at;
        /* Every watched kind, in order: the DRA kinds only when the API server serves them. */
        for (int k = 0; k < CTL_KINDS && h->n_resources < GC_API_RESOURCES; k++) {
                int i = h->n_resources;

                if (!c->dra_version[0] && (k == CTL_SLICES || k == CTL_CLAIMS || k == CTL_CLASSES))
                        continue;
                h->resources[i] = gc__ctl_kind_name(k);
                h->watch_restarts[i] = atomic_load(&c->inf[k].restarts);
                h->relists[i] = atomic_load(&c->inf[k].relists);
                h->last_event_at[i] = atomic_load(&c->inf[k].last_event);
                h->n_resources++;
        }
        h->checkpoint_at = atomic_load(&c->checkpoint_at);
        h->checkpoint_errors = atomic_load(&c->checkpoint_errors);
        h->checkpoint_lost = atomic_load(&c->checkpoint_lost);
        gc_mirror_blind_span(c->mirror, &h->blind_from, &h->blind_to, &h->blind_bound_cost);
        h->report_writes = atomic_load(&c->report_writes);
        h->report_errors = atomic_load(&c->report_errors);
        h->fold_failures = atomic_load(&c->fold_failures);
        h->errors = gc_log_errors();
        gc__ctl_usage_health(c, h);
        gc_ledger_stats_get(c->ledger, &ls);
        h->pods = gc_mirror_pods_count(c->mirror);
        h->intervals = ls.intervals;
        h->rollup_rows = ls.rollup_rows;
        h->ledger_bytes = ls.bytes;
        gc_strpool_stats_get(c->pool, &ps);
        h->pool_bytes = ps.bytes;
        h->pool_strings = ps.strings;
        h->pool_sweeps = ps.sweeps;
        h->pool_freed = ps.freed;
}

int gc__ctl_snapshot_publish(ctl *c, int64_t now)
{
        gc_snapshot_parts parts;
        gc_snapshot *s;
        ctl__pods ps;
        gc_ledger_visitor vis;
        int r = -ENOMEM;

        if (!c->api)
                return 0;
        memset(&parts, 0, sizeof(parts));
        memset(&ps, 0, sizeof(ps));
        memset(&vis, 0, sizeof(vis));
        ps.c = c;
        vis.usage = ctl__pod_row;
        pthread_mutex_lock(&c->mu);
        parts.pool = c->pool;
        parts.pin = gc_strpool_pin(c->pool);
        parts.ledger = gc_ledger_clone(c->ledger);
        if (parts.ledger)
                r = gc_ledger_visit(c->ledger, &vis, &ps);
        if (r == 0)
                r = ctl__nodes(c, &parts.nodes, &parts.n_nodes);
        if (r == 0) {
                gc__ctl_usage_for_snapshot(c, &parts.recommendations_json,
                                           &parts.recommendations_md, &parts.finding_stats,
                                           &parts.n_finding_stats, &parts.advice);
                ctl__health(c, &parts.health);
        }
        pthread_mutex_unlock(&c->mu);
        gc_ptrmap_free(&ps.by_uid);
        gc_config_api_settings(c->cfg, &parts.settings);
        parts.now = now;
        parts.pods = ps.v;
        parts.n_pods = ps.n;
        if (r < 0) {
                /* gc_snapshot_new takes everything over, on failure too: free by hand here. */
                parts.ledger = gc_ledger_free(parts.ledger);
                free(ps.v);
                free(parts.nodes);
                gc_strpool_unpin(parts.pool, parts.pin);
                gc_log(GC_LOG_ERROR, "cannot build an API snapshot", "error", strerror(-r), NULL);
                return r;
        }
        s = gc_snapshot_new(&parts);
        if (!s) {
                gc_log(GC_LOG_ERROR, "cannot build an API snapshot", "error", "out of memory",
                       NULL);
                return -ENOMEM;
        }
        gc_api_publish(c->api, s);
        return 0;
}

int gc__ctl_api_new(ctl *c)
{
        gc_api_opts ao;

        memset(&ao, 0, sizeof(ao));
        ao.currency = c->cfg->catalog->currency;
        c->api = gc_api_new(&ao);
        return c->api ? 0 : -ENOMEM;
}
