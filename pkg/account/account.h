/* account: turns decoded pods, nodes and namespaces into priced, attributed ledger intervals. */
#ifndef GC_ACCOUNT_H
#define GC_ACCOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "../ledger/ledger.h"
#include "../model/model.h"
#include "../price/price.h"
#include "../util/util.h"

/*
 * The accountant remembers what pods need to be priced (each GPU node's record and class, each
 * namespace's attribution labels) and writes intervals into a ledger it does not own. Feed nodes
 * and namespaces before the pods that use them; a pod on a node it has not seen is priced at the
 * catalog's fallback and noted as an estimate. See docs/architecture.md.
 */
typedef struct gc_accountant gc_accountant;

/* What the accountant takes of the configuration (config.h: gc_config_account_opts). */
typedef struct gc_accountant_opts {
        const gc_res_table *res;     /* GPU resource names and their GPU-equivalents */
        const gc_price_rules *rules; /* node classification: labels, capacity types */
        const gc_catalog *catalog;   /* prices; its "unknown" entry prices unseen nodes */
        gc_attribution attr;         /* namespace teams and projects */
} gc_accountant_opts;

/*
 * o is copied; what it points to, pool and ledger must outlive the accountant. pool is the one
 * the records were decoded into. NULL when an argument is missing or memory runs out.
 */
gc_accountant *gc_accountant_new(const gc_accountant_opts *o, gc_strpool *pool, gc_ledger *ledger);
gc_accountant *gc_accountant_free(gc_accountant *a); /* accepts NULL, returns NULL */
/* Marks every pooled string the accountant holds (its nodes, namespaces, DRA devices, claims
 * and pods), for the pool's sweep (util.h: gc_strpool_mark). The ledger marks its own. */
void gc_accountant_mark(const gc_accountant *a, gc_strpool *p);

/*
 * The ReplicaSets and Jobs the workload dimension resolves pods through (docs/workloads.md);
 * NULL (the default): the name and label fallbacks only. The table must outlive the accountant
 * or be unset; the caller locks both alike.
 */
void gc_accountant_set_owners(gc_accountant *a, const gc_owner_table *owners);

/* Classifies and prices a GPU node (copying its record) and records its capacity interval. */
int gc_account_node(gc_accountant *a, const gc_node *node, gc_diag *diag);
int gc_account_namespace(gc_accountant *a, const gc_namespace *ns);
/* Records the pod's GPU interval; returns 1 when it holds GPUs, 0 when it does not (yet). */
int gc_account_pod(gc_accountant *a, const gc_pod *pod, gc_diag *diag);

/*
 * The pod is gone from the API at `seen_gone` (a DELETED event, or absent from a re-LIST). Its
 * interval ends at: finished_at if it had finished; else terminated_at if every container had
 * stopped; else its deletionTimestamp if set and not later than seen_gone; else seen_gone.
 * `estimate` flags the interval (used when the moment is not known, e.g. deleted while the
 * controller was away). Returns 1 when it held GPUs, 0 when it never did.
 */
int gc_account_pod_gone(gc_accountant *a, const gc_pod *pod, int64_t seen_gone, int estimate,
                        gc_diag *diag);
/* The node is gone at `end`: its capacity interval ends there. -ENOENT for a node never seen. */
int gc_account_node_gone(gc_accountant *a, const char *node_name, int64_t end);

/*
 * Dynamic Resource Allocation (docs/dra.md). The GPU devices of ResourceSlices and the claims
 * holding them are fed before the nodes and pods that use them (a later call re-puts what it
 * changes: a claim re-puts the pods holding it; a device needs gc_account_node() again for the
 * node's capacity). A pod with claims (gc_pod.claims) is billed its claims' devices, a claim
 * held by several pods at once split equally among those holding it at each moment.
 */
int gc_account_dra_device(gc_accountant *a, const gc_dra_device *dev);
int gc_account_claim(gc_accountant *a, const gc_claim *claim, gc_diag *diag);
/*
 * A ResourceSlice that published the device is gone (deleted, or republished without it): the
 * node's capacity no longer counts it once gc_account_node_refresh() runs; claims that hold it
 * still bill it (their past is not re-priced). -ENOENT for a device never seen.
 */
int gc_account_dra_device_gone(gc_accountant *a, const char *key); /* gc_dra_device_key() */
/* The claim was deleted from the API: its pods keep its devices; forgotten once none holds it. */
int gc_account_claim_gone(gc_accountant *a, const char *ns, const char *name);
/*
 * The pieces of pods on claims before `before` are final (a later call moves it forward only):
 * a pod's figures are computed again from there on, the pieces before it stay as the ledger
 * holds them. After a restore, the checkpoint's moment: a claim deleted before it (a co-holder's
 * of a shared device) is gone from the API, and what it took no longer known.
 */
void gc_account_dra_freeze(gc_accountant *a, int64_t before);
/*
 * Bounds memory over months of churn: freezes the pieces before `before`, then forgets the pods
 * gone from the API that ended before it, the deleted claims no pod holds any more, and the
 * devices of deleted slices no claim names. Their pieces stay in the ledger as written: nothing
 * past is re-priced. Returns the number of pods forgotten, or a negative errno (out of memory:
 * some of the maps may be partly rebuilt; the accountant stays usable).
 */
long gc_account_dra_forget(gc_accountant *a, int64_t before);
typedef struct gc_account_dra_counts {
        size_t devices, claims, pods, holders;
} gc_account_dra_counts;
void gc_account_dra_stats(const gc_accountant *a, gc_account_dra_counts *ret);
/* A kind of shared GPU the cluster offers (a shared device's driver, model and capacities). */
typedef struct gc_account_shared_gpu {
        const char *driver; /* pooled: gpu.nvidia.com, hami-core-gpu.project-hami.io, hami.io */
        const char *model;  /* pooled, GFD form; NULL when unknown */
        double memory_mib;  /* its memory capacity, MiB (0: none) */
        double shares;      /* its "shares" capacity (NVIDIA's "N shares" mode), 0: none */
        int cores;          /* 1 when it has a "cores" capacity (HAMi, HAMi-DRA) */
} gc_account_shared_gpu;
/*
 * The kinds of shared GPUs current devices offer, each (driver, model, memory, shares, cores)
 * once, at most max into out; returns how many. For the advisor's share_fit.
 */
size_t gc_account_shared_gpus(const gc_accountant *a, gc_account_shared_gpu *out, size_t max);
/* The GPU devices the pod's claims hold (known claims only), for "devices requested". */
size_t gc_account_pod_claim_devices(gc_accountant *a, const gc_pod *pod);
/*
 * The node's capacity and class again from its record and the devices current now. -ENODEV,
 * changing nothing, when it has no GPU left (no device-plugin GPU, no current device): end it
 * with gc_account_node_gone() instead, so its past capacity stays. -ENOENT for a node not seen.
 */
int gc_account_node_refresh(gc_accountant *a, const char *node_name, gc_diag *diag);
/*
 * Measured use of one shared GPU over (from, to] (docs/ledger.md, "The usage basis"): each
 * holder is found by its uid, or else by namespace/name among the pods not gone, and its
 * intervals (a pod priced in pieces has several) are split by gc_ledger_split_by_use. Holders
 * not found stay on allocation. Returns how many were found, or -EINVAL, -ENOMEM, -E2BIG.
 */
typedef struct gc_account_use {
        const char *ns, *pod; /* the pod's namespace and name */
        const char *pod_uid;  /* NULL when the measurement names none */
        double use;           /* >= 0 */
} gc_account_use;
int gc_account_split_by_use(gc_accountant *a, int64_t from, int64_t to, const gc_account_use *h,
                            size_t n);

/* 1 when current slices publish GPU devices on the node (gc_model_opts.keep_node: pass a as ud). */
int gc_accountant_dra_node(void *a, const char *node_name);

/* The record of a node seen by gc_account_node (its capacity with its slices' devices), or NULL. */
const gc_node *gc_accountant_node(const gc_accountant *a, const char *node_name);
/* The class of a node seen by gc_account_node, or NULL. */
const gc_node_class *gc_accountant_node_class(const gc_accountant *a, const char *node_name);

/*
 * When a pod held its GPUs: from binding to its end (finished pods) or GC_OPEN (still held).
 * Returns 0 with the interval, or -ENOENT when the pod never held them (not bound).
 */
int gc_pod_interval(const gc_pod *pod, int64_t *ret_start, int64_t *ret_end);

#endif
