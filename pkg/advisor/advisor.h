/* advisor: savings findings (idle GPUs, over-requests, MIG fit, ...) with evidence and a change. */
#ifndef GC_ADVISOR_H
#define GC_ADVISOR_H

#include <stddef.h>
#include <stdint.h>

#include "../ledger/ledger.h"
#include "../price/price.h"
#include "../util/util.h"

/*
 * The advisor reads what the ledger knows (GPU-hours, cost, idle capacity, attribution), the
 * price catalog, optional TCO inputs and per-pod measured use (filled by the caller from
 * dcgm-exporter summaries), and returns findings: each names its subject, the evidence it stands
 * on (window, samples, coverage, figures), the change to make and an estimated monthly saving in
 * the catalog currency. Rules and formulas: docs/advisor.md.
 */

typedef enum gc_finding_kind {
        GC_FINDING_IDLE_GPU = 0,
        GC_FINDING_OVER_REQUESTED,
        GC_FINDING_MIG_FIT,
        GC_FINDING_CHEAPER_CLASS,
        GC_FINDING_UNATTRIBUTED,
        GC_FINDING_IDLE_CAPACITY,
        GC_FINDING_RESERVE_FLOOR,
        GC_FINDING_BUY_VS_RENT,
        GC_FINDING_SHARE_FIT,
        GC_FINDING_KIND_COUNT,
} gc_finding_kind;

/* "idle_gpu", "over_requested", "mig_fit", "cheaper_class", "unattributed", "idle_capacity",
 * "reserve_floor", "buy_vs_rent", "share_fit" (static strings); NULL for an invalid kind. */
const char *gc_finding_kind_name(gc_finding_kind k);
int gc_finding_kind_parse(const char *s, gc_finding_kind *ret);

/* The team of findings about the whole cluster (idle capacity, reserve floor, buy vs rent). */
#define GC_ADVISOR_CLUSTER "__cluster__"

/* ---- options (embedded in the configuration as "advisor": {...}) ---------------------------- */

#define GC_ADVISOR_MAX_CLASSES 16
#define GC_ADVISOR_MODEL_MAX   128

/* One entry of "cheaper_classes": {"from", "to", "max_tensor_activity", "to_memory_mib"}. */
typedef struct gc_advisor_class {
        char from[GC_ADVISOR_MODEL_MAX]; /* a GPU model, or a pattern ending in '*' */
        char to[GC_ADVISOR_MODEL_MAX];   /* the cheaper model, as the catalog names it */
        double max_tensor_activity;      /* mean tensor-pipe activity at or below it is "low" */
        double to_memory_mib;            /* the cheaper GPU's memory; 0 = not checked */
} gc_advisor_class;

/* Field names are the JSON configuration's (docs/advisor.md); defaults in brackets. */
#define GC_ADVISOR_CLASS_NAME 254 /* a DeviceClass name: a DNS subdomain, and the NUL */

/* How a kind of shared GPU is asked for (docs/dra.md): a claim's capacity requests on a DRA
 * device class, or HAMi's resources. */
typedef enum gc_advisor_share_way {
        GC_SHARE_DRA_MEMORY = 1, /* capacity.requests.memory (NVIDIA's "memory" mode) */
        GC_SHARE_DRA_SHARES,     /* capacity.requests.shares of N (NVIDIA's "N shares" mode) */
        GC_SHARE_DRA_CORES,      /* capacity.requests cores and memory (HAMi-DRA) */
        GC_SHARE_HAMI,           /* nvidia.com/gpumem and nvidia.com/gpucores (classic HAMi) */
} gc_advisor_share_way;

#define GC_ADVISOR_MAX_SHARED 8

/* A kind of shared GPU the cluster offers, for share_fit: filled by the caller from what the
 * accountant saw (gc_savings_shared_opts), never from the configuration. */
typedef struct gc_advisor_shared {
        char model[GC_ADVISOR_MODEL_MAX];
        char device_class[GC_ADVISOR_CLASS_NAME]; /* the class a claim asks ("" for HAMi) */
        uint8_t way;                              /* gc_advisor_share_way */
        double shares;                            /* N of GC_SHARE_DRA_SHARES */
        double memory_mib;                        /* the GPU's memory */
} gc_advisor_shared;

typedef struct gc_advisor_opts {
        double idle_activity;        /* [0.05] activity below it is idle */
        double idle_memory_fraction; /* [0.10] ...while more of the memory than this is held */
        double idle_minutes;         /* [30] longest such stretch for an idle_gpu finding */
        uint64_t min_samples;        /* [30] fewer: no usage finding for the pod, a note */
        double min_coverage;         /* [0.5] of the pod's time in the window, 0..1 */
        double over_request_active_activity; /* [0.05] a device whose mean is >= it is active */
        double mig_headroom;                 /* [0.2] peak memory and p95 activity x (1 + it) */
        gc_advisor_class cheaper_classes[GC_ADVISOR_MAX_CLASSES]; /* [H100*, A100* -> A10G] */
        size_t n_cheaper_classes;
        double reserve_percentile; /* [0] of daily GPU-hours reserved; 0 = the minimum day */
        double hours_per_month;    /* [730] */
        size_t max_findings;       /* [1000] kept in the result (totals count all); 0 = all */
        size_t max_notes;          /* [100] kept (the rest counted) */
        /* The DeviceClasses a change for a pod on DRA claims names (docs/dra.md): whole GPUs
         * ["gpu.nvidia.com"] and MIG partitions ["mig.nvidia.com"], as NVIDIA's DRA driver
         * ships them; the controller takes them from the DeviceClasses it watches. */
        char dra_gpu_class[GC_ADVISOR_CLASS_NAME];
        char dra_mig_class[GC_ADVISOR_CLASS_NAME];
        /* The shared GPUs a pod holding a whole one could take a share of instead (share_fit);
         * none: no such finding. */
        gc_advisor_shared shared[GC_ADVISOR_MAX_SHARED];
        size_t n_shared;
} gc_advisor_opts;

/* gc_advisor_pod.resource of a pod holding whole GPUs through DRA ResourceClaims. */
#define GC_ADVISOR_DRA_RESOURCE "resource.k8s.io/claims"

void gc_advisor_opts_default(gc_advisor_opts *ret);
/* -EINVAL with err naming the field ("cheaper_classes[1].to: must not be empty"). */
int gc_advisor_opts_check(const gc_advisor_opts *o, char *err, size_t errlen);

/* ---- inputs --------------------------------------------------------------------------------- */

/*
 * One GPU pod, with its measured use when a usage source covers it. Strings are borrowed for
 * the duration of gc_advisor_run. Filled by the caller from its pod records and usage summaries.
 */
typedef struct gc_advisor_pod {
        const char *uid, *ns, *name;
        const char *team, *project;  /* after attribution */
        const char *node, *model;    /* model as GPU Feature Discovery writes it */
        const char *capacity_type;   /* "on-demand", "spot", ... */
        const char *controller_kind; /* "ReplicaSet", "StatefulSet", "Job", ... or NULL */
        const char *controller;      /* owner name or NULL */
        const char *container;       /* first container asking for the GPU, or NULL */
        const char *resource;        /* "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", ... */
        double gpus_requested;       /* units of `resource` requested */
        double geq;                  /* GPU-equivalents held */
        double price_per_gpu_hour;   /* price of one whole GPU on its node */
        int64_t start, end;          /* held [start, end); end GC_OPEN while held */
        /* Measured use (dcgm-exporter); ignored unless has_usage. */
        int has_usage;
        uint64_t samples;
        double coverage;                    /* 0..1 of the pod's time in the window */
        int64_t usage_start, usage_end;     /* first and last sample */
        double activity_mean, activity_p95; /* 0..1 */
        double tensor_mean;                 /* 0..1, NaN when not measured */
        double mem_used_peak_mib, mem_total_mib;
        uint32_t devices_seen, devices_active;
        int64_t idle_longest_s, idle_total_s; /* idle per the opts' idle thresholds */
        const char *mig_profile;     /* "1g.10gb" when measured on a MIG device, else NULL */
        const char *activity_source; /* "DCGM_FI_PROF_GR_ENGINE_ACTIVE", ... or NULL */
} gc_advisor_pod;

typedef struct gc_advisor_input {
        const gc_advisor_opts *opts; /* NULL = defaults */
        int64_t start, end;          /* the window [start, end) */
        int64_t now;                 /* open intervals accrue up to min(end, now); 0 = end */
        const gc_ledger *ledger;     /* required */
        const gc_catalog *catalog;   /* NULL: findings that need catalog prices are skipped */
        const gc_tco_inputs *tco;    /* NULL: no buy_vs_rent */
        const gc_advisor_pod *pods;
        size_t n_pods;
        const char *usage_note;        /* why there is no usage data (added to the note); NULL */
        const char *team_label_key;    /* for the unattributed change; NULL = "team" */
        const char *project_label_key; /* NULL = "project" */
} gc_advisor_input;

/* ---- findings ------------------------------------------------------------------------------- */

/* One named figure of the evidence: a number, or a text when text is non-NULL. */
typedef struct gc_advisor_figure {
        const char *name; /* static */
        double value;     /* NaN is written as null */
        const char *text;
} gc_advisor_figure;

#define GC_ADVISOR_MAX_FIGURES 24

typedef struct gc_finding {
        gc_finding_kind kind;
        /* Subject: each NULL when it does not apply. */
        const char *ns, *pod, *team, *project, *node, *model, *capacity_type;
        const char *controller_kind, *controller;
        /* Evidence. */
        int64_t window_start, window_end; /* what the figures stand on */
        uint64_t samples;                 /* 0 when the finding rests on no measurement */
        double coverage;                  /* NaN when not measured */
        gc_advisor_figure figures[GC_ADVISOR_MAX_FIGURES];
        size_t n_figures;
        /* Change. */
        const char *summary; /* one sentence a team lead can act on */
        const char *stanza;  /* resource stanza, node selector, command; or NULL */
        double monthly_savings;
} gc_finding;

/* For /metrics: one row per (kind, team), sorted by kind, then team. */
typedef struct gc_advisor_stat {
        const char *kind; /* static */
        const char *team; /* the result's; GC_ADVISOR_CLUSTER for cluster-wide findings */
        uint32_t count;
        double monthly_savings;
} gc_advisor_stat;

typedef struct gc_advisor_result {
        int64_t start, end, now;
        double hours_per_month;
        size_t pods;              /* GPU pods given */
        size_t pods_measured;     /* with enough samples and coverage */
        size_t pods_insufficient; /* with usage, but too few samples or too little coverage */
        int has_usage;            /* 0: no usage data at all (usage-based kinds not produced) */
        gc_finding *findings;     /* by saving desc, then kind, then subject */
        size_t n_findings;
        size_t n_findings_total; /* before the max_findings cut */
        double monthly_savings;  /* over all findings, kept or not */
        double savings_by_kind[GC_FINDING_KIND_COUNT];
        uint32_t count_by_kind[GC_FINDING_KIND_COUNT];
        const char **notes;
        size_t n_notes;
        size_t n_notes_total;
        gc_advisor_stat *stats; /* over all findings, kept or not */
        size_t n_stats;
        gc_strpool *pool; /* owns every string of the result: copy what must outlive it */
} gc_advisor_result;

/*
 * Runs every rule over the window. -EINVAL (err says why) for bad opts or input; -ENOMEM.
 * *ret_result is written only on success, holding one reference (gc_advisor_result_unref).
 */
int gc_advisor_run(const gc_advisor_input *in, gc_advisor_result **ret_result, char *err,
                   size_t errlen);
/*
 * A result is never changed once made, so threads may share one, each holding a reference: the
 * controller's API snapshots and its report ConfigMaps read the same findings. Both take a
 * result gc_advisor_run made (not a copy of one) or NULL; unref frees with the last reference
 * and returns NULL.
 */
gc_advisor_result *gc_advisor_result_ref(gc_advisor_result *r);
gc_advisor_result *gc_advisor_result_unref(gc_advisor_result *r);

/* The document of /api/v1/recommendations (schema: docs/advisor.md). currency NULL = "USD". */
int gc_advisor_json(const gc_advisor_result *r, const char *currency, gc_buf *out);
/* The "## Savings" section of report.md. */
int gc_advisor_markdown(const gc_advisor_result *r, const char *currency, gc_buf *out);

#endif
