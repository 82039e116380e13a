/* model: Kubernetes Pod, Node and Namespace JSON decoded into compact GPU cost records. */
#ifndef GC_MODEL_H
#define GC_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "../util/util.h"

/*
 * Records hold only what cost needs. Every string in a record is interned in the gc_strpool
 * given in gc_model_opts, so records compare strings by pointer and own no memory of their own
 * (except gc_node.labels, freed by gc_node_release()).
 *
 * GPU-equivalents ("geq"): one whole physical GPU held for one second is one GPU-second. A MIG
 * slice counts its share of the parent GPU, max(compute/C, memory/M); a time-sliced or MPS unit
 * counts 1/replicas. See docs/model.md.
 */

#define GC_POD_MAX_GPU_RES  4          /* distinct GPU resource names one pod may ask for */
#define GC_NODE_MAX_GPU_RES 16         /* distinct GPU resource names one node may offer */
#define GC_OBJECT_MAX_BYTES (4u << 20) /* one Kubernetes object, as JSON */

/* ---- the resource-name table (extensible from configuration) ------------------------------ */

typedef enum gc_res_kind {
        GC_RES_GPU,        /* nvidia.com/gpu: a whole GPU, or a MIG-single / time-sliced unit */
        GC_RES_GPU_SHARED, /* nvidia.com/gpu.shared: 1/replicas of a GPU */
        GC_RES_MIG,        /* nvidia.com/mig-<profile>[.shared]: the profile's share */
        GC_RES_FIXED,      /* configured: gpus_per_unit GPU-equivalents per unit */
} gc_res_kind;

typedef struct gc_res_rule {
        char *name; /* an exact resource name, or a prefix ending in '*' ("nvidia.com/mig-*") */
        gc_res_kind kind;
        double gpus_per_unit; /* GC_RES_FIXED only; 0 makes the resource free (never billed) */
} gc_res_rule;

typedef struct gc_res_table {
        gc_res_rule *rules;
        size_t n;
} gc_res_table;

/* The built-in rules: nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-*. */
gc_res_table *gc_res_table_new_default(void);
/* Adds a rule, or replaces the rule of the same name; an exact name wins over a prefix. */
int gc_res_table_set(gc_res_table *t, const char *name, gc_res_kind kind, double gpus_per_unit);
const gc_res_rule *gc_res_table_match(const gc_res_table *t, const char *resource);
gc_res_table *gc_res_table_free(gc_res_table *t); /* accepts NULL, returns NULL */

/* ---- quantities and MIG tables ------------------------------------------------------------- */

/* Kubernetes quantity ("1", "2", "500m", "1k", "1Ki", "1e3") to thousandths of a unit. */
int gc_quantity_parse(const char *s, int64_t *ret_milli);

/*
 * Share of its parent GPU of a MIG profile ("1g.20gb", "1g.10gb+me", "1g.10gb.me") on a GPU
 * whose model is e.g. "NVIDIA-H100-80GB-HBM3" or "NVIDIA-A100-SXM4-40GB" (a GFD product label,
 * dashes or spaces). *ret_estimate is set to 1 when the parent or profile is not in the tables of
 * docs/model.md and the share comes from the compute/memory-slice pattern, else 0.
 */
int gc_mig_share(const char *parent_model, const char *profile, double *ret_share,
                 int *ret_estimate);

/* ---- records -------------------------------------------------------------------------------- */

typedef struct gc_label {
        const char *key;
        const char *value;
} gc_label;

typedef struct gc_gpu_req {
        const char *resource; /* interned resource name, e.g. "nvidia.com/mig-1g.20gb" */
        int64_t count;        /* whole units (GPU resources cannot be fractional) */
} gc_gpu_req;

typedef enum gc_phase {
        GC_PHASE_PENDING = 0,
        GC_PHASE_RUNNING,
        GC_PHASE_SUCCEEDED,
        GC_PHASE_FAILED,
        GC_PHASE_UNKNOWN,
} gc_phase;

enum {
        GC_POD_F_BOUND_GUESSED = 1u << 0, /* no PodScheduled=True time: bound_at from startTime */
        GC_POD_F_END_GUESSED = 1u << 1,   /* finished, but no container finishedAt */
};

typedef struct gc_pod {
        const char *uid;
        const char *ns;
        const char *name;
        const char *node;            /* spec.nodeName; NULL while unbound */
        const char *team;            /* first configured team label key present on the pod */
        const char *project;         /* first configured project label key present on the pod */
        const char *controller_kind; /* ownerReferences[controller=true].kind, or NULL */
        const char *controller;      /* ...name */
        const char *container;       /* first app container asking for a GPU resource */
        gc_gpu_req gpu[GC_POD_MAX_GPU_RES]; /* the effective request, per GPU resource */
        uint8_t n_gpu;
        gc_phase phase;
        uint32_t flags;        /* GC_POD_F_* */
        int64_t created_at;    /* metadata.creationTimestamp */
        int64_t bound_at;      /* PodScheduled=True lastTransitionTime; 0 = not bound */
        int64_t finished_at;   /* Succeeded/Failed: the latest container finishedAt; else 0 */
        int64_t deleting_at;   /* metadata.deletionTimestamp; 0 = none */
        int64_t terminated_at; /* not Succeeded/Failed, yet every app container has terminated
                                  (e.g. being deleted): the latest finishedAt; else 0 */
} gc_pod;

typedef struct gc_node {
        const char *uid;
        const char *name;
        gc_label *labels; /* all labels of a GPU node (malloc'd array, pooled strings) */
        size_t n_labels;
        const char *ann_capacity_type;         /* annotation gpu-cost.io/capacity-type */
        const char *ann_gpu_model;             /* annotation gpu-cost.io/gpu-model */
        const char *ann_price;                 /* annotation gpu-cost.io/usd-per-gpu-hour (text) */
        gc_gpu_req alloc[GC_NODE_MAX_GPU_RES]; /* status.allocatable GPU resources */
        uint8_t n_alloc;
        int64_t created_at;
        /* From the GPU Feature Discovery labels: */
        const char *product;            /* nvidia.com/gpu.product as written */
        const char *gpu_model;          /* the physical model: product without -MIG-<p> / -SHARED */
        const char *mig_strategy;       /* nvidia.com/mig.strategy, or NULL */
        const char *mig_single_profile; /* "1g.10gb" when the product ends in -MIG-1g.10gb */
        int64_t replicas;               /* nvidia.com/gpu.replicas; 1 when absent or 0 */
        int64_t gpu_count;              /* nvidia.com/gpu.count; 0 when absent */
        int64_t gpu_memory_mib;         /* nvidia.com/gpu.memory; 0 when absent */
        double alloc_geq;               /* allocatable GPU-equivalents (sum over alloc[]) */
        int geq_estimate;               /* 1 when alloc_geq rests on an estimated MIG share */
} gc_node;

typedef struct gc_namespace {
        const char *name;
        const char *team;    /* first configured team label key present on the namespace */
        const char *project; /* first configured project label key present */
} gc_namespace;

/* Returns a label value or NULL. */
const char *gc_node_label(const gc_node *n, const char *key);
void gc_node_release(gc_node *n); /* frees labels; accepts a zeroed record */

/* ---- decoding -------------------------------------------------------------------------------- */

typedef struct gc_model_opts {
        gc_strpool *pool;             /* required: every record string goes here */
        const gc_res_table *res;      /* required */
        const char *const *team_keys; /* label keys, in order of preference */
        size_t n_team_keys;
        const char *const *project_keys;
        size_t n_project_keys;
} gc_model_opts;

/*
 * One object (already parsed by cJSON). Returns 1 and fills *ret when the object holds or
 * offers a GPU resource, 0 when it does not (ret untouched), or a negative errno with err naming
 * the field ("spec.containers[1].resources.limits[nvidia.com/gpu]: not a quantity: \"x\"").
 */
int gc_pod_from_json(const cJSON *obj, const gc_model_opts *o, gc_pod *ret, char *err,
                     size_t errlen);
int gc_node_from_json(const cJSON *obj, const gc_model_opts *o, gc_node *ret, char *err,
                      size_t errlen);
/* Namespaces are always kept (returns 1), since their labels attribute pods. */
int gc_namespace_from_json(const cJSON *obj, const gc_model_opts *o, gc_namespace *ret, char *err,
                           size_t errlen);

/* Growable arrays of records, capped at `limit` entries (0 = GC_VEC_DEFAULT_LIMIT). */
#define GC_VEC_DEFAULT_LIMIT (1u << 20)
typedef struct gc_pod_vec {
        gc_pod *v;
        size_t n, cap, limit;
} gc_pod_vec;
typedef struct gc_node_vec {
        gc_node *v;
        size_t n, cap, limit;
} gc_node_vec;
typedef struct gc_ns_vec {
        gc_namespace *v;
        size_t n, cap, limit;
} gc_ns_vec;

void gc_pod_vec_free(gc_pod_vec *v);
void gc_node_vec_free(gc_node_vec *v); /* releases every node */
void gc_ns_vec_free(gc_ns_vec *v);

typedef struct gc_decode_stats {
        size_t objects; /* items seen */
        size_t kept;    /* records appended */
        size_t skipped; /* items refused (each one noted in the gc_diag) */
        size_t bytes;   /* input bytes */
} gc_decode_stats;

/*
 * Decode `kubectl get pods -A -o json` output: a PodList, a List of Pods, or one Pod. The items
 * array is scanned without building a tree of the whole document (memory stays near one item);
 * items that cannot hold a GPU are skipped unparsed. A malformed item is skipped and noted in
 * diag (with its index, namespace/name when known, and the field); a malformed document (not
 * JSON, no items, wrong kind) fails with -EINVAL and err says why. Kept records are appended.
 */
int gc_decode_pods(const char *json, size_t len, const gc_model_opts *o, gc_pod_vec *out,
                   gc_decode_stats *ret_stats, gc_diag *diag, char *err, size_t errlen);
/* Same for NodeList (only nodes offering a GPU resource are kept) and NamespaceList. */
int gc_decode_nodes(const char *json, size_t len, const gc_model_opts *o, gc_node_vec *out,
                    gc_decode_stats *ret_stats, gc_diag *diag, char *err, size_t errlen);
int gc_decode_namespaces(const char *json, size_t len, const gc_model_opts *o, gc_ns_vec *out,
                         gc_decode_stats *ret_stats, gc_diag *diag, char *err, size_t errlen);

/* ---- GPU-equivalents ------------------------------------------------------------------------ */

/*
 * GPU-equivalents of `count` units of `resource` on `node` (NULL when the node is unknown: whole
 * GPUs count 1, MIG profiles use the generic pattern and are estimates). *ret_estimate is 1 when
 * the figure rests on an estimated share. -ENOENT when the resource is not a GPU resource.
 */
int gc_gpu_equivalents(const gc_res_table *t, const char *resource, int64_t count,
                       const gc_node *node, double *ret_geq, int *ret_estimate);
/* Sum over the pod's effective request. */
int gc_pod_gpu_equivalents(const gc_res_table *t, const gc_pod *pod, const gc_node *node,
                           double *ret_geq, int *ret_estimate);

#endif
