/* mark: the pooled strings of the records, for the pool's sweep (util.h: gc_strpool_mark). */
#include "model.h"

/*
 * A member added to one of these records that holds a pooled string must be marked below, or a
 * sweep frees it under its holder: these sizes stop the build until it is.
 */
_Static_assert(sizeof(gc_pod) == 264, "gc_pod changed: mark its strings in gc_pod_mark");
_Static_assert(sizeof(gc_node) == 408, "gc_node changed: mark its strings in gc_node_mark");
_Static_assert(sizeof(gc_namespace) == 56, "gc_namespace changed: update gc_namespace_mark");
_Static_assert(sizeof(gc_dra_device) == 144, "gc_dra_device changed: update gc_dra_device_mark");
_Static_assert(sizeof(gc_claim) == 56, "gc_claim changed: mark its strings in gc_claim_mark");
_Static_assert(sizeof(gc_claim_device) == 32, "gc_claim_device changed: update gc_claim_mark");

void gc_pod_mark(const gc_pod *pod, gc_strpool *p)
{
        const char *const s[] = {pod->uid,
                                 pod->ns,
                                 pod->name,
                                 pod->node,
                                 pod->team,
                                 pod->project,
                                 pod->controller_kind,
                                 pod->controller,
                                 pod->controller_uid,
                                 pod->template_hash,
                                 pod->workload_hint,
                                 pod->container,
                                 pod->claims,
                                 pod->hami_alloc};

        for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
                gc_strpool_mark(p, s[i]);
        for (size_t i = 0; i < pod->n_gpu && i < GC_POD_MAX_GPU_RES; i++)
                gc_strpool_mark(p, pod->gpu[i].resource);
        for (size_t i = 0; i < GC_LABEL_DIMS; i++)
                gc_strpool_mark(p, pod->labels[i]);
}

void gc_node_mark(const gc_node *n, gc_strpool *p)
{
        const char *const s[] = {n->uid,           n->name,         n->ann_capacity_type,
                                 n->ann_gpu_model, n->ann_price,    n->product,
                                 n->gpu_model,     n->mig_strategy, n->mig_single_profile,
                                 n->hami_register};

        for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
                gc_strpool_mark(p, s[i]);
        for (size_t i = 0; i < n->n_labels; i++) {
                gc_strpool_mark(p, n->labels[i].key);
                gc_strpool_mark(p, n->labels[i].value);
        }
        for (size_t i = 0; i < n->n_alloc && i < GC_NODE_MAX_GPU_RES; i++)
                gc_strpool_mark(p, n->alloc[i].resource);
}

void gc_namespace_mark(const gc_namespace *ns, gc_strpool *p)
{
        gc_strpool_mark(p, ns->name);
        gc_strpool_mark(p, ns->team);
        gc_strpool_mark(p, ns->project);
        for (size_t i = 0; i < GC_LABEL_DIMS; i++)
                gc_strpool_mark(p, ns->labels[i]);
}

void gc_dra_device_mark(const gc_dra_device *d, gc_strpool *p)
{
        const char *const s[] = {d->driver, d->pool, d->name,   d->node,
                                 d->model,  d->gpu,  d->profile};

        for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
                gc_strpool_mark(p, s[i]);
        for (size_t i = 0; i < d->n_caps && i < GC_DRA_MAX_CAPS; i++)
                gc_strpool_mark(p, d->caps[i].name);
}

void gc_claim_mark(const gc_claim *cl, gc_strpool *p)
{
        gc_strpool_mark(p, cl->uid);
        gc_strpool_mark(p, cl->ns);
        gc_strpool_mark(p, cl->name);
        for (size_t i = 0; i < cl->n_devices; i++) {
                gc_strpool_mark(p, cl->devices[i].key);
                gc_strpool_mark(p, cl->devices[i].share_id);
                for (size_t k = 0; k < cl->devices[i].n_used; k++)
                        gc_strpool_mark(p, cl->devices[i].used[k].name);
        }
}
