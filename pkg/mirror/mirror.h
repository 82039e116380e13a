/*
 * mirror: the cluster as its objects were last seen, and the rules that turn what was seen into
 * the accountant's and the ledger's work (docs/architecture.md, "The cluster mirror"). No
 * threads, no locks, no I/O: the controller's informers (under their mutex) and pkg/dump's
 * files feed it decoded records through the same functions.
 */
#ifndef GC_MIRROR_H
#define GC_MIRROR_H

#include <stddef.h>
#include <stdint.h>

#include "../account/account.h"
#include "../ledger/ledger.h"
#include "../model/model.h"
#include "../util/util.h"

/* The kinds a mirror is fed, each with its own LIST generation. */
enum {
        GC_MIRROR_NAMESPACES = 0,
        GC_MIRROR_NODES,
        GC_MIRROR_PODS,
        GC_MIRROR_SLICES,
        GC_MIRROR_CLAIMS,
        GC_MIRROR_CLASSES,
        GC_MIRROR_REPLICASETS,
        GC_MIRROR_JOBS,
        GC_MIRROR_KINDS
};

/* An owner deleted from the API is kept this long, for pods deleted after it. */
#define GC_MIRROR_OWNER_KEEP_S 3600

/* Levels of the log callback. */
enum { GC_MIRROR_LOG_DEBUG = 0, GC_MIRROR_LOG_INFO, GC_MIRROR_LOG_WARN, GC_MIRROR_LOG_ERROR };

typedef struct gc_mirror_opts {
        /* Borrowed, and outliving the mirror: the pool its records' strings are in, the ledger
         * and accountant it feeds (gc_mirror_set_ledger replaces the two), the owner table
         * (NULL: none), where its notes for reports go. */
        gc_strpool *pool;
        gc_ledger *ledger;
        gc_accountant *acct;
        gc_owner_table *owners;
        gc_diag *diag;
        const char *currency; /* the blind span's bound; NULL: "USD" */
        /* What the program logs of the mirror's work (a library never logs): fields are key,
         * value pairs ended by NULL, at most four pairs. NULL: nothing. */
        void (*log)(void *ud, int level, const char *msg, const char *const *fields);
        /* A ResourceSlice names a node the GPU-node table does not hold: the program lists the
         * nodes again (once per node). NULL: nothing. */
        void (*relist_nodes)(void *ud, const char *node);
        void *ud;
} gc_mirror_opts;

typedef struct gc_mirror gc_mirror;

/* What the snapshots' node table shows of a GPU node now present. */
typedef struct gc_mirror_node_facts {
        const char *name;
        const char *instance_type, *region; /* pooled, or NULL */
        double gpus, geq;                   /* allocatable devices and GPU-equivalents */
} gc_mirror_node_facts;

gc_mirror *gc_mirror_new(const gc_mirror_opts *o); /* NULL: out of memory or bad options */
gc_mirror *gc_mirror_free(gc_mirror *m);           /* accepts NULL; returns NULL */
/* A restore started over with an empty ledger and accountant: the mirror feeds those now. */
void gc_mirror_set_ledger(gc_mirror *m, gc_ledger *l, gc_accountant *a);

/*
 * The events. `deleted`: the object is gone (a DELETED event). Records are the decoders' (their
 * strings pooled in the mirror's pool). 0, or a negative errno (only -ENOMEM-like failures: an
 * object the rules ignore is 0). `now` is when the event was seen.
 */
int gc_mirror_namespace(gc_mirror *m, int deleted, const gc_namespace *ns);
/* n: the node's record, NULL when the node (name) is not, or no longer, a GPU node. */
int gc_mirror_node(gc_mirror *m, int deleted, const char *name, const gc_node *n, int64_t now);
int gc_mirror_pod(gc_mirror *m, int deleted, const gc_pod *p, int64_t now);
/* A ResourceSlice by name: the GPU devices it publishes now (n 0: none any more). */
int gc_mirror_slice(gc_mirror *m, int deleted, const char *name, const gc_dra_device *v, size_t n,
                    int64_t now);
/* A ResourceClaim: cl NULL when it is not allocated (yet, or any more) or holds no GPU. */
int gc_mirror_claim(gc_mirror *m, int deleted, const char *ns, const char *name,
                    const gc_claim *cl);
/* A DeviceClass: dc NULL when its selectors require no driver read. */
int gc_mirror_device_class(gc_mirror *m, int deleted, const char *name, const gc_device_class *dc);
/* A ReplicaSet or Job (kind GC_MIRROR_REPLICASETS or GC_MIRROR_JOBS). */
int gc_mirror_owner(gc_mirror *m, int kind, int deleted, const gc_owner *o, int64_t now);

/* The name of an owner kind's objects ("ReplicaSet", "Job"), NULL for other kinds. */
const char *gc_mirror_owner_kind(int kind);

/* Flags of gc_mirror_list_end for pods. */
enum {
        GC_MIRROR_RESUMING = 1,     /* the watch resumes from the restored checkpoint */
        GC_MIRROR_RESUME_FAILED = 2 /* ... and the server no longer held that point (410) */
};

/*
 * A LIST of kind begins and ends: objects the LIST did not show are gone at its end. Pods gone
 * while the watch had lost events since expired_since (> 0) end there, as estimates, and the
 * span to `now` is a blind span. After a restore (gc_mirror_restored), the first LIST of pods
 * not followed by a replay closes what the checkpoint held open and the LIST does not show.
 */
void gc_mirror_list_begin(gc_mirror *m, int kind);
int gc_mirror_list_end(gc_mirror *m, int kind, int64_t now, int64_t expired_since, unsigned flags);

/* A checkpoint written at written_at was restored into the ledger: shares before it are final. */
void gc_mirror_restored(gc_mirror *m, int64_t written_at);
/* The pods' watch resumed from the restored checkpoint: the replay brings what happened. */
void gc_mirror_replayed(gc_mirror *m);

/* The GPU pod's last record (uid: the pool's pointer), or NULL. Valid until the next event. */
const gc_pod *gc_mirror_pod_get(const gc_mirror *m, const char *uid);
size_t gc_mirror_pods_count(const gc_mirror *m);
/* The GPU nodes now present: count and entry i (< count). */
size_t gc_mirror_nodes_count(const gc_mirror *m);
const gc_mirror_node_facts *gc_mirror_node_at(const gc_mirror *m, size_t i);
/* The DeviceClasses for NVIDIA's whole GPUs and MIG partitions (the first by name), or NULL. */
void gc_mirror_dra_classes(const gc_mirror *m, const char **ret_gpu, const char **ret_mig);
/* The blind span named last: [*ret_from, *ret_to) (0, 0: none) and its bound's cost. */
void gc_mirror_blind_span(const gc_mirror *m, int64_t *ret_from, int64_t *ret_to,
                          double *ret_bound_cost);
/* Accounted changes so far (for a reader that wants to know whether anything moved). */
uint64_t gc_mirror_changes(const gc_mirror *m);
/* Marks the pooled strings the mirror holds, for the pool's sweep. */
void gc_mirror_mark(gc_mirror *m);

#endif
