/* api: the read-only REST API, OpenCost /allocation, /metrics and the dashboard, over snapshots. */
#ifndef GC_API_H
#define GC_API_H

#include <stddef.h>
#include <stdint.h>

#include "../advisor/advisor.h"
#include "../price/price.h"
#include "../publish/publish.h"
#include "../ledger/ledger.h"
#include "../util/util.h"

/* The server the routes go on (httpd/httpd.h); only pointers to it here. */
typedef struct gc_httpd gc_httpd;

/*
 * The controller thread (or the demo) owns the mutable state. From time to time it builds a
 * gc_snapshot: a private copy of the ledger plus the few tables the handlers need, immutable from
 * then on and reference-counted. gc_api_publish() swaps it in; every request takes a reference to
 * the current snapshot for its duration, so no handler ever waits on the controller and a
 * snapshot is freed when the last request reading it ends. See docs/api.md.
 */

/* One GPU pod the controller knows (intervals still in the ledger): /api/v1/pods, /allocation. */
typedef struct gc_api_pod {
        const char *uid, *ns, *name, *node; /* pooled strings (the ledger's pool) */
        const char *team, *project;         /* after attribution */
        const char *model, *capacity_type;  /* the node's class */
        const char *controller_kind;        /* "ReplicaSet", "Job", ... or NULL */
        const char *controller;             /* owner name or NULL */
        const char *container;              /* first container holding a GPU, or NULL */
        double geq;                         /* GPU-equivalents held (since geq_since) */
        double gpus_requested;              /* whole devices (or slices) requested */
        double price_per_gpu_hour;          /* price of one whole GPU on its node */
        int64_t start, end;                 /* GC_OPEN while held */
        /* Measured use, when a usage source covers the pod; NaN when not measured. */
        double activity_mean, activity_p95; /* 0..1 */
        double mem_used_peak_mib;
        uint64_t samples;
        /* A pod whose GPU-equivalents changed while it ran (a shared ResourceClaim): it holds
         * geq from geq_since on, and held gpu_seconds_before before that. Otherwise geq_since
         * is start (or 0: the same) and gpu_seconds_before 0. */
        int64_t geq_since;
        double gpu_seconds_before;
        const char
            *workload; /* top-level owner "Kind/namespace/name" (docs/workloads.md), or NULL */
} gc_api_pod;

/* Findings rolled up for /metrics: one row per (kind, team). */
typedef struct gc_api_finding_stat {
        const char *kind; /* "idle_gpu", "over_requested", ... (static or pooled) */
        const char *team;
        uint32_t count;
        double monthly_savings; /* catalog currency */
} gc_api_finding_stat;

#define GC_API_RESOURCES 8

/* The controller's health, copied into every snapshot (for /metrics and the dashboard). */
typedef struct gc_api_health {
        int ready, leader, demo;
        int64_t started_at; /* unix seconds */
        /* Per watched resource: namespaces, nodes, pods, and when the API server serves
         * Dynamic Resource Allocation, resourceslices, resourceclaims and deviceclasses, then
         * the pods' owners, replicasets and jobs. resources[k] names the k-th (NULL: the k-th
         * of namespaces, nodes, pods, resourceslices, resourceclaims, deviceclasses,
         * replicasets, jobs). */
        int n_resources;                         /* 0..GC_API_RESOURCES; 0 = 3 */
        const char *resources[GC_API_RESOURCES]; /* static strings */
        long watch_restarts[GC_API_RESOURCES];
        long relists[GC_API_RESOURCES];
        int64_t last_event_at[GC_API_RESOURCES]; /* unix seconds; 0 = none yet */
        int64_t checkpoint_at;                   /* last successful checkpoint write; 0 = none */
        long checkpoint_errors;
        int checkpoint_lost; /* checkpoint ConfigMaps existed, no generation was complete */
        /* A span the controller could not see (a resume point past the API server's event
         * window): [blind_from, blind_to) in unix seconds, and the most GPU cost it may hide
         * (GPUs free on the nodes in that span, priced); all 0 when none. */
        int64_t blind_from, blind_to;
        double blind_bound_cost;
        long report_writes, report_errors;
        long fold_failures; /* folds refused at folded history's row bound */
        long errors;        /* any other logged error */
        int64_t usage_at;   /* last successful usage fetch; 0 = none */
        long usage_errors;
        uint64_t usage_samples; /* samples taken in so far */
        size_t pods, intervals, rollup_rows;
        size_t ledger_bytes, pool_bytes;
        size_t pool_strings;              /* live interned strings */
        uint64_t pool_sweeps, pool_freed; /* sweeps done, strings they freed (ever) */
} gc_api_health;

/*
 * One GPU node, for /metrics (node_gpu_hourly_cost, node_gpu_count) and /api/v1/prices.
 * Optional: without this table the API takes nodes from the ledger's open capacities (no
 * instance type or region then).
 */
typedef struct gc_api_node {
        const char *name;          /* pooled strings */
        const char *instance_type; /* node.kubernetes.io/instance-type, or NULL */
        const char *region;        /* or NULL */
        const char *model, *capacity_type;
        double gpus; /* allocatable GPU devices */
        double geq;  /* allocatable GPU-equivalents */
        double price_per_gpu_hour;
} gc_api_node;

/*
 * What the API serves of the configuration (config.h: gc_config_api_settings fills it). The
 * pointers are into the configuration, which must outlive every snapshot.
 */
typedef struct gc_api_settings {
        gc_publish_opts report;    /* cluster, currency, zone, retention, top pods, budgets */
        const gc_catalog *catalog; /* /api/v1/prices; never NULL */
        int catalog_builtin;       /* no prices configured: the built-in catalog */
        const gc_tco_inputs *tco;  /* /api/v1/tco; NULL: not configured */
        gc_chargeback chargeback;  /* share_idle's default (chargeback.mode) */
        /* The label keys naming teams and projects: /allocation's label:<key> aggregates. */
        const char *const *team_keys;
        size_t n_team_keys;
        const char *const *project_keys;
        size_t n_project_keys;
} gc_api_settings;

typedef struct gc_snapshot_parts {
        gc_ledger *ledger;        /* taken over: a private copy (gc_ledger_clone) */
        gc_api_settings settings; /* copied (what it points to is not owned) */
        int64_t now;              /* the time the snapshot stands for (open intervals end here) */
        gc_api_pod *pods;         /* taken over (malloc'd); strings stay the pool's */
        size_t n_pods;
        char *recommendations_json; /* taken over (malloc'd, NUL-terminated): the advisor's JSON
                                       document; NULL when the advisor has not run */
        char *recommendations_md;   /* taken over (malloc'd), may be NULL: the same findings as
                                       Markdown, the "Savings" section of
                                       /api/v1/reports/...?format=md */
        gc_api_finding_stat *finding_stats; /* taken over (malloc'd) */
        size_t n_finding_stats;
        gc_advisor_result *advice; /* a reference, taken over; may be NULL: the result the two
                                      documents above were rendered from, shared (it never
                                      changes) with whoever else holds one */
        gc_api_health health;
        gc_api_node *nodes; /* taken over (malloc'd), may be NULL: see gc_api_node */
        size_t n_nodes;
        /* The pool the strings above live in, when it sweeps (gc_strpool_sweep_begin): a pin
         * taken (gc_strpool_pin) under the pool owner's lock as they were copied, taken over and
         * let go when the snapshot is freed. NULL: a pool that never sweeps. */
        gc_strpool *pool;
        unsigned pin;
} gc_snapshot_parts;

typedef struct gc_snapshot gc_snapshot;

/*
 * Takes over what parts says it takes over, on success and on failure alike (parts is zeroed).
 * The strings the ledger and the pods point at live in a string pool that must outlive the
 * snapshot: pooled strings never move, and its pin keeps a sweep from freeing any of them.
 */
gc_snapshot *gc_snapshot_new(gc_snapshot_parts *parts);
gc_snapshot *gc_snapshot_ref(gc_snapshot *s);
void gc_snapshot_unref(gc_snapshot *s); /* accepts NULL */
/* The snapshot's ledger (immutable: any thread may query it while it holds a reference) and the
 * time it stands for. */
const gc_ledger *gc_snapshot_ledger(const gc_snapshot *s);
int64_t gc_snapshot_now(const gc_snapshot *s);
/* The advisor's result the snapshot serves (parts.advice, NULL when none): read it while holding
 * the reference to s, or take one of its own (gc_advisor_result_ref). */
const gc_advisor_result *gc_snapshot_advice(const gc_snapshot *s);

typedef struct gc_api_opts {
        const char *currency; /* NULL = "USD" */
        size_t cache_entries; /* responses cached per snapshot (same URL, same snapshot); 0 = 64 */
        size_t cache_bytes;   /* 0 = 8 MiB */
} gc_api_opts;

typedef struct gc_api gc_api;

gc_api *gc_api_new(const gc_api_opts *o);
gc_api *gc_api_free(gc_api *a); /* after the server stopped; drops the current snapshot */

/* From any thread: the new snapshot serves every request that starts from now on. Takes s. */
void gc_api_publish(gc_api *a, gc_snapshot *s);
/* A reference to the current snapshot (NULL before the first publish); unref when done. */
gc_snapshot *gc_api_acquire(gc_api *a);

/*
 * Registers /api/v1/..., /allocation, /metrics and the dashboard at / on h. Before any snapshot
 * is published the API answers 503 {"error":"no data yet"}.
 */
int gc_api_routes(gc_api *a, gc_httpd *h);
/*
 * Registers /metrics alone on h, a second server (the controller's probe port): the handler,
 * snapshot, response cache and counters of gc_api_routes' /metrics, so both answer the same body.
 * Each server runs its handlers on its own thread; what they share is under a's locks.
 */
int gc_api_metrics_route(gc_api *a, gc_httpd *h);

/* ---- query parameters, shared with the CLI and the fuzz target -------------------------- */

#define GC_API_MAX_WINDOW_S ((int64_t)400 * 86400) /* longest window */
#define GC_API_MAX_SETS     1000                   /* steps in one answer */

/*
 * A window (docs/api.md): a duration ("30m", "12h", "7d": the time up to now), "today",
 * "yesterday", "week" (ISO week to date), "lastweek", "month" (to date), "lastmonth", or
 * "start,end" of RFC 3339 times or unix seconds. Days, weeks and months begin at 00:00 at
 * utc_offset_s east of UTC. [*ret_start, *ret_end) is non-empty and at most
 * GC_API_MAX_WINDOW_S long. -EINVAL with err saying what is wrong (without the parameter name).
 */
int gc_api_window_parse(const char *s, int64_t now, int64_t utc_offset_s, int64_t *ret_start,
                        int64_t *ret_end, char *err, size_t errlen);
/* The same with days, weeks and months at local midnight in tz (NULL = UTC). */
int gc_api_window_parse_tz(const char *s, int64_t now, const gc_tz *tz, int64_t *ret_start,
                           int64_t *ret_end, char *err, size_t errlen);
/* A step: a duration such that the window holds at most GC_API_MAX_SETS of them. */
int gc_api_step_parse(const char *s, int64_t start, int64_t end, int64_t *ret_step, char *err,
                      size_t errlen);

#endif
