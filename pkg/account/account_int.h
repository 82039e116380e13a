/* account internals: the accountant's state, shared by its device-plugin and DRA halves. */
#ifndef GC_ACCOUNT_INT_H
#define GC_ACCOUNT_INT_H

#include "account.h"

typedef struct gc__node_slot {
        gc_node node; /* own copy: labels array duplicated, strings pooled */
        gc_node_class cls;
        int priced; /* 0 when no catalog entry matched */
        /* What the node record itself said, before its slices' devices were added: what
         * gc_account_node_refresh() starts again from. */
        double plugin_geq;
        const char *plugin_model;
} gc__node_slot;

/* A GPU device of a ResourceSlice. */
typedef struct gc__dev_slot {
        gc_dra_device dev;
        size_t next_on_node; /* index of the node's next device, or SIZE_MAX */
        int gone;            /* its slice is gone: no capacity now; claims still bill it */
} gc__dev_slot;

/* A pod holding claims: what its pieces are re-put from when a co-holder changes. */
typedef struct gc__dra_pod {
        gc_usage base;      /* dims, price, start, end, flags; geq: its device-plugin part */
        const char *claims; /* pooled, space-separated claim names */
        const char *ns;
        uint32_t n_parts; /* pieces in the ledger: pod_uid, then "<pod_uid>#dra<i>" */
        int gone;         /* gone from the API: its end is final (gc_account_dra_forget) */
        int restored;     /* priced from the restored ledger: a claim of it was never seen */
} gc__dra_pod;

/* A pod found by name (gc_account_split_by_use): its pooled "<ns>/<name>" and ledger key. */
typedef struct gc__named_pod {
        const char *name, *key;
} gc__named_pod;

typedef struct gc__claim_slot {
        const char *key; /* pooled "<namespace>/<name>": its claim_map key */
        gc_claim claim;  /* own copy (gc_claim_copy) */
        int known;       /* 0: named by a pod, not seen yet */
        int gone;        /* deleted from the API (its devices still bill its pods) */
        size_t *holders; /* indices into dra_pods */
        size_t n_holders, cap_holders;
} gc__claim_slot;

/* One allocation of a device: result `res` of claim `claim` (claims index). */
typedef struct gc__share_ref {
        size_t claim;
        size_t res;
} gc__share_ref;

/* The claims whose allocations name one device (a shared device has several). */
typedef struct gc__share_slot {
        const char *key; /* pooled gc_dra_device_key() */
        gc__share_ref *refs;
        size_t n_refs, cap_refs;
} gc__share_slot;

struct gc_accountant {
        gc_accountant_opts o;
        gc_strpool *pool;
        gc_ledger *ledger;
        gc__node_slot *nodes;
        size_t n_nodes, cap_nodes;
        gc_namespace *nss;
        size_t n_nss, cap_nss;
        gc_ptrmap node_map;
        gc_ptrmap ns_map;
        const char *unknown;          /* pooled "unknown" */
        const gc_owner_table *owners; /* for the workload dimension; NULL: fallbacks only */
        /* DRA */
        gc__dev_slot *devs;
        size_t n_devs, cap_devs;
        gc_ptrmap dev_map;      /* pooled "<driver>/<pool>/<device>" -> devs index */
        gc_ptrmap pool_gen;     /* pooled "<driver>/<pool>" -> newest generation seen */
        gc_ptrmap node_devs;    /* pooled node name -> first devs index */
        gc__claim_slot *claims; /* every claim seen or named */
        size_t n_claims, cap_claims;
        gc_ptrmap claim_map; /* pooled "<namespace>/<name>" -> claims index */
        gc__dra_pod *dra_pods;
        size_t n_dra_pods, cap_dra_pods;
        gc_ptrmap dra_pod_map; /* pooled pod uid -> dra_pods index */
        /* Pieces of DRA pods before this moment are final (gc_account_dra_freeze): a pod's
         * figures are computed again only from here on. */
        int64_t frozen;
        gc__share_slot *shares; /* per device key: the claims allocated it */
        size_t n_shares, cap_shares;
        gc_ptrmap share_map; /* pooled device key -> shares index */
        /* Pods by name, for measured use that names no uid (HAMi): pooled "<ns>/<name>" ->
         * index into named; a pod leaves it when gone. */
        gc_ptrmap pod_names;
        gc__named_pod *named;
        size_t n_named, cap_named;
};

/* The DRA half of pricing a pod: records its pieces (u: its usage without claims). */
int gc__account_dra_pod(gc_accountant *a, const gc_pod *pod, const gc_usage *u, int gone,
                        gc_diag *diag);
/* GPU-equivalents the node's slices publish (physical GPUs, each once) and their model. */
void gc__account_dra_capacity(const gc_accountant *a, const char *node, double *ret_geq,
                              const char **ret_model);
void gc__account_dra_free(gc_accountant *a);
/* The ledger key of piece i of a pod priced in pieces (piece 0 is the pod's uid); NULL: ENOMEM. */
const char *gc__account_piece_key(gc_accountant *a, const char *uid, uint32_t i);
/* Marks gone the devices of `driver` on the node that are not among keep[0..n). */
void gc__account_dra_keep_only(gc_accountant *a, const char *node, const char *driver,
                               const gc_dra_device *keep, size_t n);

#endif
