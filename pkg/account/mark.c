/* mark: every pooled string the accountant holds, for the pool's sweep (gc_strpool_mark). */
#include "account_int.h"

/*
 * A member added to these records that holds a pooled string must be marked below, or a sweep
 * frees it under the accountant: these sizes stop the build until it is.
 */
_Static_assert(sizeof(struct gc_accountant) == 552,
               "gc_accountant changed: mark its strings in gc_accountant_mark");
_Static_assert(sizeof(gc__node_slot) == 640, "gc__node_slot changed: update gc_accountant_mark");
_Static_assert(sizeof(gc__dev_slot) == 160, "gc__dev_slot changed: update gc_accountant_mark");
_Static_assert(sizeof(gc__dra_pod) == 192, "gc__dra_pod changed: update gc_accountant_mark");
_Static_assert(sizeof(gc__claim_slot) == 96, "gc__claim_slot changed: update gc_accountant_mark");
_Static_assert(sizeof(gc__share_slot) == 32, "gc__share_slot changed: update gc_accountant_mark");

void gc_accountant_mark(const gc_accountant *a, gc_strpool *p)
{
        if (!a || !p)
                return;
        gc_strpool_mark(p, a->unknown);
        for (size_t i = 0; i < a->n_nodes; i++) {
                gc_node_mark(&a->nodes[i].node, p);
                gc_node_class_mark(&a->nodes[i].cls, p);
                gc_strpool_mark(p, a->nodes[i].plugin_model);
        }
        for (size_t i = 0; i < a->n_nss; i++)
                gc_namespace_mark(&a->nss[i], p);
        for (size_t i = 0; i < a->n_devs; i++)
                gc_dra_device_mark(&a->devs[i].dev, p);
        for (size_t i = 0; i < a->n_claims; i++) {
                gc_strpool_mark(p, a->claims[i].key);
                gc_claim_mark(&a->claims[i].claim, p);
        }
        for (size_t i = 0; i < a->n_dra_pods; i++) {
                gc_usage_mark(&a->dra_pods[i].base, p);
                gc_strpool_mark(p, a->dra_pods[i].claims);
                gc_strpool_mark(p, a->dra_pods[i].ns);
        }
        gc_ptrmap_mark_keys(&a->node_map, p);
        gc_ptrmap_mark_keys(&a->ns_map, p);
        gc_ptrmap_mark_keys(&a->dev_map, p);
        gc_ptrmap_mark_keys(&a->pool_gen, p);
        gc_ptrmap_mark_keys(&a->node_devs, p);
        gc_ptrmap_mark_keys(&a->claim_map, p);
        gc_ptrmap_mark_keys(&a->dra_pod_map, p);
        for (size_t i = 0; i < a->n_shares; i++)
                gc_strpool_mark(p, a->shares[i].key);
        gc_ptrmap_mark_keys(&a->share_map, p);
        for (size_t i = 0; i < a->n_named; i++) {
                gc_strpool_mark(p, a->named[i].name);
                gc_strpool_mark(p, a->named[i].key);
        }
}
