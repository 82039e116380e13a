/* model internals: the small JSON readers the pod, node and DRA decoders share. */
#ifndef GC_MODEL_INT_H
#define GC_MODEL_INT_H

#include <stdio.h>

#include "model.h"

/* Kubernetes limits (apimachinery validation): names are DNS subdomains or labels. */
#define GC__NAME_MAX        253 /* object names, node names */
#define GC__LABEL_VALUE_MAX 63  /* label values, namespace and container names */
#define GC__LABEL_KEY_MAX   317 /* <prefix (253)>/<name (63)> */
#define GC__UID_MAX         128
#define GC__ANNOTATION_MAX  253 /* our own gpu-cost.io annotations */

/* Writes the message into err (when given) and evaluates to code. */
#define GC__FAIL(err, errlen, code, ...)                                                           \
        (snprintf((errlen) ? (err) : NULL, (err) ? (errlen) : 0, __VA_ARGS__), (code))

/* A short printable rendering of untrusted text for an error message. */
const char *gc__show(const char *s, char *out, size_t outlen);
/* Printable ASCII; spaces only when allowed. */
int gc__printable(const char *s, int spaces);
/* Optional members: absent or null gives NULL (or 0 for a time); a wrong type or size fails
 * with err naming "path.key". */
int gc__opt_str(const cJSON *obj, const char *key, size_t max, int spaces, const char *path,
                const char **ret, char *err, size_t errlen);
int gc__opt_obj(const cJSON *obj, const char *key, const char *path, const cJSON **ret, char *err,
                size_t errlen);
int gc__opt_arr(const cJSON *obj, const char *key, int max, const char *path, const cJSON **ret,
                char *err, size_t errlen);
/* 0 when absent or null, 1 when *ret_sec was set. */
int gc__opt_time(const cJSON *obj, const char *key, const char *path, int64_t *ret_sec, char *err,
                 size_t errlen);
/* Interns s (NULL stays NULL). */
int gc__intern(gc_strpool *pool, const char *s, const char **ret, char *err, size_t errlen);
/* Interning a record's strings with one check: the first failure (the pool is full) sticks,
 * every later gc__intern_put does nothing and gives NULL, and gc__intern_end reports it as
 * gc__intern would have. */
typedef struct gc__interns {
        gc_strpool *pool;
        int err;
} gc__interns;
const char *gc__intern_put(gc__interns *in, const char *s); /* NULL stays NULL */
int gc__intern_end(const gc__interns *in, char *err, size_t errlen);
int gc__opts_ok(const cJSON *obj, const gc_model_opts *o, const void *ret, char *err,
                size_t errlen);

/* What of an object's metadata gc__meta_read reads besides its name (always required). */
enum {
        GC__META_NS = 1u << 0,          /* namespace ("default" when absent) */
        GC__META_UID = 1u << 1,         /* uid */
        GC__META_CREATED = 1u << 2,     /* creationTimestamp */
        GC__META_DELETING = 1u << 3,    /* deletionTimestamp */
        GC__META_LABELS = 1u << 4,      /* labels */
        GC__META_ANNOTATIONS = 1u << 5, /* annotations */
        GC__META_SHORT_NAME = 1u << 6,  /* the name is a DNS label (a Namespace's): 63 bytes */
};

/* An object's metadata: strings and objects borrowed from its cJSON tree. */
typedef struct gc__meta {
        const cJSON *meta; /* the metadata object itself (for ownerReferences) */
        const char *name;
        const char *ns;  /* with GC__META_NS never NULL, else NULL */
        const char *uid; /* NULL when absent or not asked for */
        int64_t created_at;
        int64_t deleting_at; /* 0 when absent or not asked for */
        const cJSON *labels; /* NULL when absent or not asked for */
        const cJSON *annotations;
} gc__meta;

/* metadata (required, with a name) and the members `want` names (GC__META_*); a bad one fails
 * with err naming it ("metadata.uid: longer than 128 bytes"). *ret is written on success only. */
int gc__meta_read(const cJSON *obj, unsigned want, gc__meta *ret, char *err, size_t errlen);

/* The controller ownerReference of metadata (borrowed strings, each NULL when absent). */
int gc__controller_ref(const cJSON *meta, const char **ret_kind, const char **ret_name,
                       const char **ret_uid, char *err, size_t errlen);
/* HAMi's annotations checked as the decoders keep them (hami.c): the node's GPUs and largest
 * split; a pod's allocated devices (returns how many). */
int gc__hami_register_check(const char *text, int *ret_gpus, int64_t *ret_split, char *err,
                            size_t errlen);
int gc__hami_alloc_check(const char *text, char *err, size_t errlen);
/* A label's key and value as Kubernetes allows them. */
int gc__label_ok(const char *key, const char *value, char *err, size_t errlen);
/* From a pod's labels: pod-template-hash and the first well-known workload label as
 * "Kind/ns/value" (docs/workloads.md), both interned, each NULL when absent. */
int gc__workload_labels(const cJSON *labels, const char *ns, gc_strpool *pool,
                        const char **ret_hash, const char **ret_hint, char *err, size_t errlen);

#endif
