/* dump: a cluster loaded from `kubectl get -o json` dumps into a priced, attributed ledger. */
#ifndef GC_DUMP_H
#define GC_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "../account/account.h"
#include "../config/config.h"
#include "../ledger/ledger.h"
#include "../mirror/mirror.h"
#include "../model/model.h"
#include "../util/util.h"

/*
 * The one loader of dumps: `gpu-cost analyze` and `demo` and the controller's demo mode all
 * use it, so a dump is accounted exactly as the controller accounts live events (the same
 * accountant, nodes and namespaces before the pods that use them).
 */

/* One input: bytes and the name messages give it (a path, "examples/pods.json"). */
typedef struct gc_dump_input {
        const char *name;
        const char *data;
        size_t len;
} gc_dump_input;

/* Everything one loaded cluster holds; zero it, then gc_dump_start(). */
typedef struct gc_dump {
        gc_config *cfg;
        gc_strpool *pool; /* every record's and the ledger's strings */
        gc_ledger *ledger;
        gc_accountant *acct;
        /* The cluster the files show, fed through the rules the controller's informers feed:
         * its GPU pods and nodes as the controller's --demo serves them. */
        gc_mirror *mirror;
        gc_pod_vec pods; /* the GPU pods' records, as decoded */
        gc_node_vec nodes;
        gc_ns_vec nss;
        gc_dra_device_vec devs; /* GPU devices of the ResourceSlices */
        gc_claim_vec claims;    /* ResourceClaims holding GPU devices */
        gc_owner_table *owners; /* ReplicaSets and Jobs, when given (gc_dump_load_owners) */
        gc_diag diag;           /* skipped objects and estimates, for the reader */
} gc_dump;

/*
 * The configuration (NULL: built-in defaults) and a price catalog replacing the configured one
 * (NULL: none). -EINVAL with err "NAME: what is wrong", or -ENOMEM. Release d on failure too.
 */
int gc_dump_start(gc_dump *d, const gc_dump_input *config, const gc_dump_input *prices, char *err,
                  size_t errlen);
/*
 * The same, keeping also the label keys given as dimensions (label:<key>) beside the
 * configuration's labels.dimensions, at most GC_LABEL_DIMS in all: gpu-cost analyze keeps the
 * keys its --by and filters name. -EINVAL, -E2BIG with err naming the key.
 */
int gc_dump_start_labels(gc_dump *d, const gc_dump_input *config, const gc_dump_input *prices,
                         const char *const *keys, size_t n_keys, char *err, size_t errlen);
/* Decodes and accounts the lists (nss may be NULL). -EINVAL with err "NAME: ...", or -ENOMEM. */
int gc_dump_load(gc_dump *d, const gc_dump_input *pods, const gc_dump_input *nodes,
                 const gc_dump_input *nss, char *err, size_t errlen);
/*
 * Dynamic Resource Allocation dumps (docs/dra.md), before gc_dump_load(): the GPU devices of
 * `kubectl get resourceslices -o json` and the claims of `kubectl get resourceclaims -A -o json`
 * (either may be NULL; one combined List of both kinds may be given as both). Nodes whose
 * slices publish GPU devices are then kept by gc_dump_load() although they offer no GPU
 * resource. -EINVAL with err "NAME: ...", or -ENOMEM.
 */
int gc_dump_load_dra(gc_dump *d, const gc_dump_input *claims, const gc_dump_input *slices,
                     char *err, size_t errlen);
/*
 * The owners of pods, before gc_dump_load(), for the workload dimension (docs/workloads.md):
 * `kubectl get replicasets -A -o json` and `kubectl get jobs -A -o json` (either may be NULL;
 * without them the name and label fallbacks apply). -EINVAL with err "NAME: ...", or -ENOMEM.
 */
int gc_dump_load_owners(gc_dump *d, const gc_dump_input *replicasets, const gc_dump_input *jobs,
                        char *err, size_t errlen);
void gc_dump_release(gc_dump *d); /* accepts a zeroed or half-built one */

/*
 * The example cluster's settings (examples/demo.json): {"now": RFC 3339, "window": "START,END"},
 * the moment its dumps were taken and the week its report covers.
 */
int gc_dump_demo_settings(const char *data, size_t len, int64_t *ret_now, int64_t *ret_start,
                          int64_t *ret_end, char *err, size_t errlen);

#endif
