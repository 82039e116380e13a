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
/* Label keys kept as grouping dimensions (label:<key>, docs/ledger.md "Label dimensions"). */
#define GC_LABEL_DIMS 4

/* ---- the resource-name table (extensible from configuration) ------------------------------ */

typedef enum gc_res_kind {
        GC_RES_GPU,        /* nvidia.com/gpu: a whole GPU, or a MIG-single / time-sliced unit */
        GC_RES_GPU_SHARED, /* nvidia.com/gpu.shared: 1/replicas of a GPU */
        GC_RES_MIG,        /* nvidia.com/mig-<profile>[.shared]: the profile's share */
        GC_RES_FIXED,      /* configured: gpus_per_unit GPU-equivalents per unit */
        /* Built in for other vendors' device plugins (docs/model.md, "Other accelerators"): */
        GC_RES_AMD,        /* amd.com/gpu and amd.com/<mode>_nps<n>: one AMD Instinct compute
                              partition, 1/(partitions per GPU) of a GPU */
        GC_RES_NEURON,     /* aws.amazon.com/neuron and neurondevice: one Neuron device */
        GC_RES_NEURONCORE, /* aws.amazon.com/neuroncore: 1/(cores per device) of a Neuron device;
                              the same devices as GC_RES_NEURON, so a node counts them once */
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

/* The built-in rules: nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-*; amd.com/gpu and
 * amd.com/{spx,dpx,tpx,qpx,cpx}_*; habana.ai/gaudi and google.com/tpu (one device each);
 * aws.amazon.com/neuron, neurondevice and neuroncore. A configured rule of the same name
 * replaces a built-in one. */
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

/*
 * Compute partitions of one AMD Instinct GPU of `model` (any spelling with an "MI300X"-style
 * token): from `mode`, a compute partition mode as the device plugin and node labeller write it
 * ("cpx", "CPX", "cpx_nps4"): SPX 1, DPX 2, TPX 3, QPX 4, CPX one per XCD (8 on an MI300X);
 * without a mode, from `cu_count` (the compute units the node labeller reports for one device,
 * 0 when unknown) against the model's whole GPU (38 of an MI300X's 304 is CPX); else 1.
 * *ret_estimate is 1 when CPX is taken as 8 for a model whose XCDs are not in the table.
 * -EINVAL when mode is given but is no compute partition mode.
 */
int gc_amd_partitions(const char *model, const char *mode, int64_t cu_count,
                      int64_t *ret_partitions, int *ret_estimate);

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
        const char *node;    /* spec.nodeName; NULL while unbound */
        const char *team;    /* first configured team label key present on the pod */
        const char *project; /* first configured project label key present on the pod */
        /* The pod's values of gc_model_opts.label_keys, in their order; NULL when absent or "". */
        const char *labels[GC_LABEL_DIMS];
        const char *controller_kind; /* ownerReferences[controller=true].kind, or NULL */
        const char *controller;      /* ...name */
        const char *controller_uid;  /* ...uid, or NULL */
        const char *template_hash;   /* label pod-template-hash, or NULL */
        const char *workload_hint;   /* "Kind/ns/name" from the first well-known workload label
                                        (docs/workloads.md), or NULL */
        const char *container;       /* first app container asking for a GPU resource */
        const char *claims;     /* the names of its ResourceClaims (spec.resourceClaims resolved
                                   through status.resourceClaimStatuses, then the extended-resource
                                   claim, then HAMi's: GC_HAMI_CLAIM_PREFIX and its name),
                                   space-separated, interned; NULL when none */
        const char *hami_alloc; /* annotation hami.io/vgpu-devices-allocated, checked (interned;
                                   NULL when none): HAMi's shares of GPUs, gc_hami_pod_claim() */
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
        const char *ann_price;                 /* annotation gpu-cost.io/price-per-gpu-hour, or its
                                                  old name usd-per-gpu-hour (text) */
        gc_gpu_req alloc[GC_NODE_MAX_GPU_RES]; /* status.allocatable GPU resources */
        uint8_t n_alloc;
        int64_t created_at;
        /* From the GPU Feature Discovery labels: */
        const char *product;            /* nvidia.com/gpu.product as written */
        const char *gpu_model;          /* the physical model: product without -MIG-<p> / -SHARED,
                                           or another vendor's (gc_accel_model) */
        const char *mig_strategy;       /* nvidia.com/mig.strategy, or NULL */
        const char *mig_single_profile; /* "1g.10gb" when the product ends in -MIG-1g.10gb */
        int64_t replicas;               /* nvidia.com/gpu.replicas; 1 when absent or 0 */
        int64_t gpu_count;              /* nvidia.com/gpu.count; for another vendor the physical
                                           devices its resources come to (64 CPX partitions are 8
                                           GPUs); 0 when unknown */
        int64_t gpu_memory_mib;         /* nvidia.com/gpu.memory; 0 when absent */
        double alloc_geq;               /* allocatable GPU-equivalents (sum over alloc[]) */
        int geq_estimate;               /* 1 when alloc_geq rests on an estimated MIG share */
        /* Another vendor's partitioned device (docs/model.md, "Other accelerators"): how many
         * units of its resource make one physical device, from the node's labels and
         * allocatable: AMD compute partitions per GPU (amd.com/gpu), NeuronCores per Neuron
         * device (aws.amazon.com/neuroncore); 0 or 1 when whole or not such a node. They fit in the
         * record's padding, so its size is unchanged. */
        uint16_t units_per_device;
        uint8_t units_estimate; /* 1 when units_per_device is a default, not read */
        /* Annotation hami.io/node-nvidia-register, checked (interned; NULL when none): the GPUs
         * HAMi shares, gc_hami_node_devices(). Its nvidia.com/gpu (HAMi's vGPU slots) is then not
         * in alloc_geq, and `replicas` is its split count. */
        const char *hami_register;
} gc_node;

typedef struct gc_namespace {
        const char *name;
        const char *team;    /* first configured team label key present on the namespace */
        const char *project; /* first configured project label key present */
        const char *labels[GC_LABEL_DIMS]; /* as gc_pod.labels */
} gc_namespace;

/* Returns a label value or NULL. */
const char *gc_node_label(const gc_node *n, const char *key);
/*
 * The model of another vendor's accelerator from a node's labels, in the GPU Feature Discovery
 * form (docs/model.md, "Other accelerators"): AMD's node labeller (amd.com/gpu.product-name, its
 * beta.amd.com/ twin, else the device id) gives "AMD-Instinct-MI300X"; GKE's
 * cloud.google.com/gke-tpu-accelerator gives "Google-TPU-v5e" (an unknown value as written).
 * *ret_source is the label read ("label amd.com/gpu.product-name"), static text. -ENOENT when
 * no such label says, -ENAMETOOLONG when out is too small.
 */
int gc_accel_model(const gc_node *n, char *out, size_t outlen, const char **ret_source);
void gc_node_release(gc_node *n); /* frees labels; accepts a zeroed record */

/* ---- Dynamic Resource Allocation (docs/dra.md) ----------------------------------------------- */

#define GC_DRA_NVIDIA_DRIVER "gpu.nvidia.com" /* NVIDIA's DRA driver */
/* HAMi-DRA's (Project-HAMi/k8s-dra-driver): shared GPUs of type "hami-gpu", cores and memory */
#define GC_DRA_HAMI_DRIVER "hami-core-gpu.project-hami.io"
#define GC_DRA_MAX_RULES   64

/*
 * A configured driver (off by default): its devices that carry `attribute` (equal to `value`
 * when value is set; any attribute type) count `gpus_per_device` GPU-equivalents of `model`.
 * The first matching rule wins; a device of a configured driver that no rule matches is no GPU.
 */
typedef struct gc_dra_rule {
        const char *driver;    /* "gpu.example.com" */
        const char *attribute; /* attribute name, without or with the "<driver>/" domain */
        const char *value;     /* NULL: any value */
        const char *model;     /* GPU model name for pricing; NULL: the node's */
        double gpus_per_device;
} gc_dra_rule;

typedef struct gc_dra_rules {
        const gc_dra_rule *rules;
        size_t n;
        int no_nvidia; /* 1: gpu.nvidia.com devices are not read (a configured rule may) */
} gc_dra_rules;

typedef enum gc_dra_kind {
        GC_DRA_GPU = 1,    /* a whole GPU (type "gpu", or "vfio" passthrough) */
        GC_DRA_MIG,        /* a MIG partition (type "mig") */
        GC_DRA_CONFIGURED, /* a configured driver's device */
} gc_dra_kind;

/* An amount of a device's capacity: the device's own (DeviceCapacity.value) or what one
 * allocation consumed of it (consumedCapacity), in the capacity's unit (bytes, shares...). */
typedef struct gc_dra_amount {
        const char *name; /* the capacity's name without the driver's domain, interned */
        double value;
} gc_dra_amount;

#define GC_DRA_MAX_CAPS 4 /* capacities of a shared device its holders' shares are taken over */

/* One GPU device a ResourceSlice publishes; every string interned. */
typedef struct gc_dra_device {
        const char *driver; /* driver, pool and name: the key a claim's results give */
        const char *pool;
        const char *name;
        const char *node;    /* spec.nodeName; NULL when the slice is not one node's */
        const char *model;   /* GFD form ("NVIDIA-H100-80GB-HBM3"); NULL when unknown */
        const char *gpu;     /* the physical GPU: the pool's counter set it consumes
                                ("<driver>/<pool>/<counterSet>", partitionable devices), else its
                                UUID, the parent's for MIG, or "<node>/gpu-<minor>" without one;
                                NULL for configured devices */
        const char *profile; /* MIG profile ("1g.10gb"); NULL otherwise */
        int64_t generation;  /* spec.pool.generation: only a pool's newest counts */
        double geq;          /* GPU-equivalents of holding it (whole, for a shared device) */
        /* A shared device (allowMultipleAllocations: consumable capacity, KEP-5075): its
         * capacities (those with a requestPolicy first, then by name; at most GC_DRA_MAX_CAPS),
         * over which each allocation's share is taken (docs/dra.md, "Shared devices"). */
        gc_dra_amount caps[GC_DRA_MAX_CAPS];
        uint8_t n_caps;
        uint8_t shared;   /* allowMultipleAllocations: true */
        uint8_t kind;     /* gc_dra_kind */
        uint8_t estimate; /* the share rests on the documented fallback rule */
} gc_dra_device;

#define GC_CLAIM_MAX_RESULTS 32 /* resource.k8s.io: AllocationResultsMaxSize */

enum {
        GC_CLAIM_F_EXTENDED = 1u << 0, /* made for an extended resource (nvidia.com/gpu) */
};

#define GC_CLAIM_MAX_USED 32 /* consumedCapacity entries of one result (v1: 32 capacities) */

/* One GPU device a claim's allocation holds (status.allocation.devices.results[]). */
typedef struct gc_claim_device {
        const char *key;           /* gc_dra_device_key(): "<driver>/<pool>/<device>", interned */
        const char *share_id;      /* shareID, interned: one share of a shared device; else NULL */
        const gc_dra_amount *used; /* its consumedCapacity (n_used entries), in the claim's block */
        uint8_t n_used;
} gc_claim_device;

typedef struct gc_claim {
        const char *uid;
        const char *ns;
        const char *name;
        /* The GPU devices its allocation holds (n_devices), with what each consumed, in one
         * allocation the claim owns (gc_claim_release(), gc_claim_copy()); adminAccess results
         * are left out: they cost nothing. */
        gc_claim_device *devices;
        uint8_t n_devices;
        uint16_t n_reserved; /* status.reservedFor entries when decoded */
        uint32_t flags;      /* GC_CLAIM_F_* */
        int64_t created_at;
        int64_t deleting_at;
} gc_claim;

/* Frees what the claim owns and zeroes it; accepts a zeroed claim. */
void gc_claim_release(gc_claim *cl);
/* A copy of src owning its own block (strings stay the pool's): 0, or -ENOMEM with *dst zeroed. */
int gc_claim_copy(gc_claim *dst, const gc_claim *src);

/*
 * A DeviceClass, as far as cost and advice need it: which driver and NVIDIA device type its CEL
 * selectors pick (`device.driver == "gpu.nvidia.com"`, `device.attributes["gpu.nvidia.com"].type
 * == "mig"`), and the extended resource it serves (spec.extendedResourceName), so the advisor can
 * name the class a MIG-fit change should claim and the extended-resource mapping can be read.
 */
typedef struct gc_device_class {
        const char *name;
        const char *driver;            /* the driver its selectors require; NULL: not one */
        const char *device_type;       /* the NVIDIA `type` they require ("gpu", "mig"); NULL */
        const char *extended_resource; /* spec.extendedResourceName; NULL */
} gc_device_class;

/* ---- decoding -------------------------------------------------------------------------------- */

typedef struct gc_model_opts {
        gc_strpool *pool;             /* required: every record string goes here */
        const gc_res_table *res;      /* required */
        const char *const *team_keys; /* label keys, in order of preference */
        size_t n_team_keys;
        const char *const *project_keys;
        size_t n_project_keys;
        /* Label keys kept as dimensions: gc_pod.labels and gc_namespace.labels, at most
         * GC_LABEL_DIMS (more are ignored). */
        const char *const *label_keys;
        size_t n_label_keys;
        const gc_dra_rules *dra; /* NULL: NVIDIA's driver only */
        /* Nodes to keep although they offer no GPU resource (DRA nodes); NULL: none. */
        int (*keep_node)(void *ud, const char *name);
        void *keep_node_ud;
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

/*
 * Dynamic Resource Allocation objects (resource.k8s.io v1, v1beta2 and v1beta1 shapes).
 * A ResourceSlice appends the GPU devices it publishes (returns how many; a bad device refuses
 * the whole slice, appending nothing). A ResourceClaim returns 1 when its allocation holds a GPU
 * device of NVIDIA's or a configured driver (not through adminAccess), else 0.
 */
typedef struct gc_dra_device_vec {
        gc_dra_device *v;
        size_t n, cap, limit;
} gc_dra_device_vec;
typedef struct gc_claim_vec {
        gc_claim *v;
        size_t n, cap, limit;
} gc_claim_vec;

int gc_slice_from_json(const cJSON *obj, const gc_model_opts *o, gc_dra_device_vec *out, char *err,
                       size_t errlen);
int gc_claim_from_json(const cJSON *obj, const gc_model_opts *o, gc_claim *ret, char *err,
                       size_t errlen);
/* `kubectl get resourceslices -o json` / `resourceclaims -A`; a List mixing both kinds (and
 * others) gives each decoder its own kind. */
int gc_decode_slices(const char *json, size_t len, const gc_model_opts *o, gc_dra_device_vec *out,
                     gc_decode_stats *ret_stats, gc_diag *diag, char *err, size_t errlen);
int gc_decode_claims(const char *json, size_t len, const gc_model_opts *o, gc_claim_vec *out,
                     gc_decode_stats *ret_stats, gc_diag *diag, char *err, size_t errlen);
/* A DeviceClass: 1 when its selectors require a driver read (NVIDIA's or a configured one),
 * else 0 (another driver's class, or one selecting by attributes alone). */
typedef struct gc_device_class_vec {
        gc_device_class *v;
        size_t n, cap, limit;
} gc_device_class_vec;
int gc_device_class_from_json(const cJSON *obj, const gc_model_opts *o, gc_device_class *ret,
                              char *err, size_t errlen);
int gc_decode_device_classes(const char *json, size_t len, const gc_model_opts *o,
                             gc_device_class_vec *out, gc_decode_stats *ret_stats, gc_diag *diag,
                             char *err, size_t errlen);
void gc_device_class_vec_free(gc_device_class_vec *v);
void gc_dra_device_vec_free(gc_dra_device_vec *v);
void gc_claim_vec_free(gc_claim_vec *v);

/*
 * A GPU model name in the GFD label form from NVIDIA's productName ("NVIDIA H100 80GB HBM3"
 * -> "NVIDIA-H100-80GB-HBM3"): spaces become dashes, characters a label value cannot hold are
 * dropped. -EINVAL when nothing is left or it does not fit in outlen.
 */
int gc_dra_model_name(const char *product_name, char *out, size_t outlen);

/* "<driver>/<pool>/<device>" of a device, interned: the key its claims name it by. */
const char *gc_dra_device_key(gc_strpool *pool, const char *driver, const char *pool_name,
                              const char *device);

/*
 * The next entry of a separated list (gc_pod.claims: ' '): *cursor
 * starts NULL; returns 1 with the entry's bytes (not NUL-terminated), 0 at the end.
 */
int gc_list_next(const char *list, char sep, const char **cursor, const char **ret_s,
                 size_t *ret_n);

/* ---- HAMi (Project-HAMi/HAMi): shared GPUs of its classic scheduler (docs/dra.md, "HAMi") ---- */

#define GC_HAMI_DRIVER         "hami.io"  /* the driver name its devices and claims are keyed by */
#define GC_HAMI_CLAIM_PREFIX   "hami.io/" /* a pod's allocation as a claim: the prefix, its name */
#define GC_HAMI_MAX_GPUS       64         /* GPUs one node registers */
#define GC_HAMI_MAX_ALLOC      64         /* devices one pod is allocated, all containers */
#define GC_HAMI_ANNOTATION_MAX (64 * 1024)
#define GC_HAMI_REGISTER       "hami.io/node-nvidia-register"
#define GC_HAMI_ALLOCATED      "hami.io/vgpu-devices-allocated"

/*
 * The node's HAMi GPUs (gc_node.hami_register) as shared devices of driver GC_HAMI_DRIVER, pool
 * and node the node's name, name and physical GPU the device id, capacities memory (MiB) and
 * cores (%), appended to out; returns how many.
 */
int gc_hami_node_devices(const gc_node *n, gc_strpool *pool, gc_dra_device_vec *out, char *err,
                         size_t errlen);
/*
 * The pod's HAMi allocation (gc_pod.hami_alloc) as a claim named GC_HAMI_CLAIM_PREFIX<pod name>
 * in its namespace, a result per device allocated (on the pod's node) with the memory and cores
 * it consumed. 1 with *ret (release it with gc_claim_release), 0 when none.
 */
int gc_hami_pod_claim(const gc_pod *pod, gc_strpool *pool, gc_claim *ret, char *err, size_t errlen);

/* ---- workloads: the top-level owner of a pod (docs/workloads.md) ------------------------------
 */

#define GC_OWNER_TABLE_DEFAULT_MAX (1u << 18) /* ReplicaSets and Jobs remembered at once */
#define GC_WORKLOAD_MAX            384 /* "Kind/namespace/name": 63 + 1 + 63 + 1 + 253 + NUL */

/* A ReplicaSet or Job as workload resolution needs it; strings are borrowed (from the cJSON tree
 * for a decoded object, from the table for a looked-up one). */
typedef struct gc_owner {
        const char *uid;
        const char *kind; /* "ReplicaSet", "Job" */
        const char *ns;
        const char *name;
        const char *owner_kind; /* its ownerReferences[controller=true].kind, or NULL */
        const char *owner_name; /* ...name */
} gc_owner;

/*
 * A bounded table of owners by uid, holding its own copies of their strings (not the pool's:
 * ReplicaSets and Jobs come and go for months). An owner deleted from the API is kept, marked
 * gone, until gc_owner_expire() drops it, so pods deleted after their Job still resolve. At the
 * bound (max entries, gone ones included) a new uid is refused (-ENOSPC) and counted; its pods
 * fall back to the name and label rules. Not thread-safe: callers lock.
 */
typedef struct gc_owner_table gc_owner_table;
typedef struct gc_owner_stats {
        size_t entries; /* current and gone */
        size_t gone;
        size_t refused; /* puts refused at the bound, ever */
} gc_owner_stats;

gc_owner_table *gc_owner_table_new(size_t max_entries); /* 0: GC_OWNER_TABLE_DEFAULT_MAX */
gc_owner_table *gc_owner_table_free(gc_owner_table *t); /* accepts NULL, returns NULL */
/* Adds or replaces (by uid) and marks it current in generation gen. -EINVAL for a record
 * without uid, kind or name or with one too long, -ENOSPC at the bound, -ENOMEM. */
int gc_owner_put(gc_owner_table *t, const gc_owner *o, uint32_t gen);
/* Marks it gone at `at` (a DELETED event). -ENOENT when unknown. */
int gc_owner_gone(gc_owner_table *t, const char *uid, int64_t at);
/* Marks gone at `at` every current owner of `kind` whose generation is not gen (absent from
 * the LIST that just completed); returns how many. */
size_t gc_owner_sweep(gc_owner_table *t, const char *kind, uint32_t gen, int64_t at);
/* Drops the owners gone before `before`; returns how many. */
size_t gc_owner_expire(gc_owner_table *t, int64_t before);
/* The owner of that uid (gone or not), or NULL; valid until the table changes. */
const gc_owner *gc_owner_get(const gc_owner_table *t, const char *uid);
void gc_owner_table_stats(const gc_owner_table *t, gc_owner_stats *ret);

/*
 * A ReplicaSet or Job object (metadata only: uid, namespace, name, the controller
 * ownerReference). `kind` is the kind expected ("ReplicaSet" or "Job"); an object whose own
 * "kind" differs (other than "PartialObjectMetadata", a metadata-only watch's) is refused. Returns
 * 1 with *ret borrowing obj's strings, or a negative errno with err naming the field.
 */
int gc_owner_from_json(const cJSON *obj, const char *kind, gc_owner *ret, char *err, size_t errlen);
/* `kubectl get replicasets -A -o json` (kind "ReplicaSet") or `jobs -A` ("Job") into the table
 * (generation 0), item by item as gc_decode_pods does; entries put before a failure stay. */
int gc_decode_owners(const char *json, size_t len, const char *kind, const gc_model_opts *o,
                     gc_owner_table *out, gc_decode_stats *ret_stats, gc_diag *diag, char *err,
                     size_t errlen);

/*
 * The pod's workload, "Kind/namespace/name", interned in pool (rules: docs/workloads.md): its
 * controller owner; a ReplicaSet or Job resolved one level up through the table (t may be NULL:
 * fallbacks only); a ReplicaSet not in the table named by its pod-template-hash suffix; a
 * well-known workload label above a ReplicaSet, Job, StatefulSet or JobSet; "Pod/ns/name" for a
 * pod without a controller. NULL when the pool is full.
 */
const char *gc_workload_of(const gc_pod *pod, const gc_owner_table *t, gc_strpool *pool);

/* ---- the pool's sweep --------------------------------------------------------------------- */

/* Mark every pooled string of a record (util.h: gc_strpool_mark), for its holder's mark. */
void gc_pod_mark(const gc_pod *pod, gc_strpool *p);
void gc_node_mark(const gc_node *n, gc_strpool *p);
void gc_namespace_mark(const gc_namespace *ns, gc_strpool *p);
void gc_dra_device_mark(const gc_dra_device *d, gc_strpool *p);
void gc_claim_mark(const gc_claim *cl, gc_strpool *p);

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
