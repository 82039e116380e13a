/* account: prices and attributes pods against the nodes and namespaces seen so far. */
#include "account.h"
#include "account_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gc_accountant *gc_accountant_new(const gc_accountant_opts *o, gc_strpool *pool, gc_ledger *ledger)
{
        gc_accountant *a;

        if (!o || !o->res || !o->rules || !o->catalog || !pool || !ledger)
                return NULL;
        a = calloc(1, sizeof(*a));
        if (!a)
                return NULL;
        a->o = *o;
        a->pool = pool;
        a->ledger = ledger;
        a->unknown = gc_strpool_intern0(pool, "unknown");
        if (!a->unknown)
                return gc_accountant_free(a);
        return a;
}

gc_accountant *gc_accountant_free(gc_accountant *a)
{
        if (!a)
                return NULL;
        for (size_t i = 0; i < a->n_nodes; i++)
                gc_node_release(&a->nodes[i].node);
        free(a->nodes);
        free(a->nss);
        gc_ptrmap_free(&a->node_map);
        gc_ptrmap_free(&a->ns_map);
        gc_ptrmap_free(&a->pod_names);
        free(a->named);
        gc__account_dra_free(a);
        free(a);
        return NULL;
}

/*
 * The GPUs HAMi registered on the node as shared devices (gc_hami_node_devices); those it no
 * longer registers are gone, as a slice's.
 */
static int gc__account_hami_devices(gc_accountant *a, const gc_node *node, const char *name,
                                    gc_diag *diag)
{
        gc_dra_device_vec v;
        char err[256];
        int r;

        memset(&v, 0, sizeof(v));
        v.limit = GC_HAMI_MAX_GPUS;
        r = gc_hami_node_devices(node, a->pool, &v, err, sizeof(err));
        if (r < 0) {
                gc_diag_add(diag, "node %s: HAMi's registered GPUs: %s", name, err);
                free(v.v);
                return r == -ENOMEM ? r : 0;
        }
        r = 0;
        for (size_t i = 0; i < v.n && r == 0; i++)
                r = gc_account_dra_device(a, &v.v[i]);
        if (r == 0)
                gc__account_dra_keep_only(a, name, GC_HAMI_DRIVER, v.v, v.n);
        free(v.v);
        return r;
}

int gc_account_node(gc_accountant *a, const gc_node *node, gc_diag *diag)
{
        const char *name;
        gc__node_slot *slot;
        gc_capacity cap;
        gc_label *labels = NULL;
        const char *dra_model = NULL;
        double dra_geq = 0;
        size_t idx;
        char err[256];
        int r;

        if (!a || !node || !node->name)
                return -EINVAL;
        name = gc_strpool_intern0(a->pool, node->name);
        if (!name)
                return -ENOMEM;
        if (node->n_labels) {
                labels = malloc(node->n_labels * sizeof(*labels));
                if (!labels)
                        return -ENOMEM;
                memcpy(labels, node->labels, node->n_labels * sizeof(*labels));
        }
        if (gc_ptrmap_get(&a->node_map, name, &idx) < 0) {
                r = gc_grow((void **)&a->nodes, &a->cap_nodes, a->n_nodes, sizeof(*a->nodes), 16,
                            0);
                if (r == 0)
                        r = gc_ptrmap_put(&a->node_map, name, a->n_nodes);
                if (r < 0) {
                        free(labels);
                        return r;
                }
                idx = a->n_nodes++;
                memset(&a->nodes[idx], 0, sizeof(a->nodes[idx]));
        }
        slot = &a->nodes[idx];
        gc_node_release(&slot->node);
        slot->node = *node;
        slot->node.name = name;
        slot->node.labels = labels;
        slot->plugin_geq = node->alloc_geq;
        slot->plugin_model = node->gpu_model;
        r = gc__account_hami_devices(a, node, name, diag);
        if (r < 0)
                return r;
        gc__account_dra_capacity(a, name, &dra_geq, &dra_model);
        if (dra_geq > 0) {
                double both = node->alloc_geq + dra_geq;

                /* The node's model from its devices when no label or annotation names it. */
                if (!slot->node.gpu_model && !slot->node.product && dra_model)
                        slot->node.gpu_model = dra_model;
                /*
                 * A GPU both the device plugin advertises and a slice publishes counts once:
                 * capped at the physical GPUs the node has (GFD's nvidia.com/gpu.count), else
                 * the larger of the two when both are present.
                 */
                if (node->gpu_count > 0 && both > (double)node->gpu_count)
                        both = (double)node->gpu_count > node->alloc_geq ? (double)node->gpu_count
                                                                         : node->alloc_geq;
                else if (node->gpu_count <= 0 && node->alloc_geq > 0)
                        both = node->alloc_geq > dra_geq ? node->alloc_geq : dra_geq;
                if (both < node->alloc_geq + dra_geq)
                        gc_diag_add(diag,
                                    "node %s: %.4g GPU-equivalents from the device plugin and %.4g "
                                    "from ResourceSlices; counted as %.4g, no GPU twice",
                                    name, node->alloc_geq, dra_geq, both);
                slot->node.alloc_geq = both;
        }
        memset(&slot->cls, 0, sizeof(slot->cls));
        r = gc_node_classify(a->o.rules, a->o.catalog, &slot->node, a->pool, &slot->cls, err,
                             sizeof(err));
        slot->priced = r == 0;
        if (r < 0) {
                gc_diag_add(diag, "node %s: %s; its GPUs are priced at 0", name, err);
                slot->cls.price_per_gpu_hour = 0;
                if (!slot->cls.model)
                        slot->cls.model = a->unknown;
                if (!slot->cls.capacity_type)
                        slot->cls.capacity_type = a->unknown;
        }
        if (node->geq_estimate)
                gc_diag_add(diag,
                            "node %s: allocatable GPU-equivalents %.4g rest on an estimated "
                            "MIG share",
                            name, node->alloc_geq);
        memset(&cap, 0, sizeof(cap));
        cap.node = name;
        cap.model = slot->cls.model;
        cap.capacity_type = slot->cls.capacity_type;
        cap.geq = slot->node.alloc_geq;
        cap.price_per_gpu_hour = slot->cls.price_per_gpu_hour;
        cap.start = node->created_at;
        cap.end = GC_OPEN;
        return gc_ledger_put_capacity(a->ledger, &cap);
}

int gc_account_namespace(gc_accountant *a, const gc_namespace *ns)
{
        const char *name;
        size_t idx;
        int r;

        if (!a || !ns || !ns->name)
                return -EINVAL;
        name = gc_strpool_intern0(a->pool, ns->name);
        if (!name)
                return -ENOMEM;
        if (gc_ptrmap_get(&a->ns_map, name, &idx) < 0) {
                r = gc_grow((void **)&a->nss, &a->cap_nss, a->n_nss, sizeof(*a->nss), 16, 0);
                if (r == 0)
                        r = gc_ptrmap_put(&a->ns_map, name, a->n_nss);
                if (r < 0)
                        return r;
                idx = a->n_nss++;
        }
        a->nss[idx] = *ns;
        a->nss[idx].name = name;
        return 0;
}

const gc_node *gc_accountant_node(const gc_accountant *a, const char *node_name)
{
        const char *name;
        size_t idx;

        if (!a || !node_name)
                return NULL;
        name = gc_strpool_intern0(a->pool, node_name);
        if (gc_ptrmap_get(&a->node_map, name, &idx) < 0)
                return NULL;
        return &a->nodes[idx].node;
}

const gc_node_class *gc_accountant_node_class(const gc_accountant *a, const char *node_name)
{
        const char *name;
        size_t idx;

        if (!a || !node_name)
                return NULL;
        /* Interning a known name allocates nothing; an unknown one is simply not found. */
        name = gc_strpool_intern0(a->pool, node_name);
        if (gc_ptrmap_get(&a->node_map, name, &idx) < 0)
                return NULL;
        return &a->nodes[idx].cls;
}

int gc_pod_interval(const gc_pod *pod, int64_t *ret_start, int64_t *ret_end)
{
        int64_t end = GC_OPEN;

        if (!pod || !pod->node || pod->bound_at <= 0)
                return -ENOENT;
        if (pod->phase == GC_PHASE_SUCCEEDED || pod->phase == GC_PHASE_FAILED) {
                end = pod->finished_at > 0 ? pod->finished_at : pod->deleting_at;
                if (end <= 0)
                        end = pod->bound_at; /* no trace of when it ended: bill nothing */
        }
        if (end < pod->bound_at)
                end = pod->bound_at;
        *ret_start = pod->bound_at;
        *ret_end = end;
        return 0;
}

/*
 * What the ledger already holds for a pod, kept where the accountant no longer knows what made it.
 * An accountant started afresh on a restored ledger (a restart from the checkpoint) knows only the
 * nodes and owners listed now: a node deleted before (its pods then deleted by the pod GC) or a
 * Job deleted with its pods (a CronJob's history limit) is in no list, and the pod's remaining
 * events must not re-price it at the catalog fallback or move it to the fallback workload. With
 * its controller owner not in the table, u keeps the interval's workload; with its node unknown
 * (node_known 0) but the interval on that node, its model, capacity type, price, GPU-equivalents
 * and *estimate, and the result is 1. DRA pods (priced per claim piece) are left as they are.
 */
static int gc__keep_known(const gc_accountant *a, const gc_pod *pod, int node_known, gc_usage *u,
                          int *estimate)
{
        gc_usage prev;

        if (pod->claims || gc_ledger_get_usage(a->ledger, u->pod_uid, &prev) < 0)
                return 0;
        if (prev.dims[GC_DIM_WORKLOAD] && pod->controller_uid &&
            !gc_owner_get(a->owners, pod->controller_uid))
                u->dims[GC_DIM_WORKLOAD] = prev.dims[GC_DIM_WORKLOAD];
        if (node_known || !prev.dims[GC_DIM_NODE] || !pod->node ||
            strcmp(prev.dims[GC_DIM_NODE], pod->node) != 0)
                return 0;
        u->dims[GC_DIM_MODEL] = prev.dims[GC_DIM_MODEL];
        u->dims[GC_DIM_CAPACITY_TYPE] = prev.dims[GC_DIM_CAPACITY_TYPE];
        u->price_per_gpu_hour = prev.price_per_gpu_hour;
        u->geq = prev.geq;
        *estimate = (prev.flags & GC_USAGE_F_ESTIMATE) != 0;
        return 1;
}

/* HAMi's allocation of the pod as the claim its pieces are priced from (docs/dra.md, HAMi). */
static int gc__account_hami_claim(gc_accountant *a, const gc_pod *pod, gc_diag *diag)
{
        gc_claim cl;
        char err[256];
        int r = gc_hami_pod_claim(pod, a->pool, &cl, err, sizeof(err));

        if (r < 0) {
                gc_diag_add(diag, "pod %s/%s: HAMi's allocation: %s", pod->ns ? pod->ns : "",
                            pod->name ? pod->name : "", err);
                return r == -ENOMEM ? r : 0;
        }
        if (r == 0)
                return 0;
        r = gc_account_claim(a, &cl, diag);
        gc_claim_release(&cl);
        return r;
}

/* Records the pod's interval; end_override > 0 replaces the end gc_pod_interval gives. */
/* Files the pod under its name for gc_account_split_by_use, or takes it out once gone. */
static int gc__pod_name(gc_accountant *a, const gc_pod *pod, const char *key, int gone)
{
        const char *name, *k;
        gc_buf b;
        size_t old;

        if (!pod->ns || !pod->name)
                return 0;
        gc_buf_init(&b, 1024);
        if (gc_buf_printf(&b, "%s/%s", pod->ns, pod->name) < 0) {
                gc_buf_free(&b);
                return -ENOMEM;
        }
        name = gc_strpool_intern0(a->pool, b.data);
        gc_buf_free(&b);
        k = gc_strpool_intern0(a->pool, key);
        if (!name || !k)
                return -ENOMEM;
        if (gc_ptrmap_get(&a->pod_names, name, &old) == 0) {
                if (!gone) {
                        a->named[old].key = k;
                        return 0;
                }
                /* Only its own entry: a pod of the same name may have followed it. */
                if (a->named[old].key != k)
                        return 0;
                (void)gc_ptrmap_del(&a->pod_names, name);
                if (old + 1 < a->n_named) {
                        a->named[old] = a->named[a->n_named - 1];
                        if (gc_ptrmap_put(&a->pod_names, a->named[old].name, old) < 0)
                                return -ENOMEM;
                }
                a->n_named--;
                return 0;
        }
        if (gone)
                return 0;
        if (a->n_named == a->cap_named) {
                size_t c = a->cap_named ? a->cap_named * 2 : 64;
                gc__named_pod *v = realloc(a->named, c * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                a->named = v;
                a->cap_named = c;
        }
        a->named[a->n_named].name = name;
        a->named[a->n_named].key = k;
        if (gc_ptrmap_put(&a->pod_names, name, a->n_named) < 0)
                return -ENOMEM;
        a->n_named++;
        return 0;
}

static int gc__account_pod(gc_accountant *a, const gc_pod *pod, int64_t end_override,
                           int estimate_end, int gone, gc_diag *diag)
{
        const gc__node_slot *slot = NULL;
        const gc_namespace *ns = NULL;
        gc_attr_source ts, ps;
        gc_usage u;
        size_t idx;
        int estimate = 0, r, kept;
        double geq;

        if (!a || !pod)
                return -EINVAL;
        memset(&u, 0, sizeof(u));
        if (gc_pod_interval(pod, &u.start, &u.end) < 0)
                return 0;

        if (end_override > 0)
                u.end = end_override < u.start ? u.start : end_override;
        if (gc_ptrmap_get(&a->node_map, gc_strpool_intern0(a->pool, pod->node), &idx) == 0)
                slot = &a->nodes[idx];
        if (pod->ns && gc_ptrmap_get(&a->ns_map, gc_strpool_intern0(a->pool, pod->ns), &idx) == 0)
                ns = &a->nss[idx];
        r = gc_pod_gpu_equivalents(a->o.res, pod, slot ? &slot->node : NULL, &geq, &estimate);
        if (r < 0) {
                gc_diag_add(diag, "pod %s/%s: cannot size its GPU request; not billed",
                            pod->ns ? pod->ns : "", pod->name ? pod->name : "");
                return 0;
        }
        if (pod->finished_at == 0 &&
            (pod->phase == GC_PHASE_SUCCEEDED || pod->phase == GC_PHASE_FAILED))
                gc_diag_add(diag, "pod %s/%s: finished with no end time; billed nothing",
                            pod->ns ? pod->ns : "", pod->name ? pod->name : "");
        gc_attribute(pod, ns, &a->o.attr, &u.dims[GC_DIM_TEAM], &ts, &u.dims[GC_DIM_PROJECT], &ps);
        gc_attribute_labels(pod, ns, u.labels);
        u.pod_uid = pod->uid && *pod->uid ? pod->uid : NULL;
        if (!u.pod_uid) {
                /* Hand-made objects may lack a UID: namespace/name is unique at one time. */
                gc_buf key;

                gc_buf_init(&key, 1024);
                if (gc_buf_printf(&key, "%s/%s", pod->ns ? pod->ns : "",
                                  pod->name ? pod->name : "") < 0) {
                        gc_buf_free(&key);
                        return -ENOMEM;
                }
                u.pod_uid = gc_strpool_intern0(a->pool, key.data);
                gc_buf_free(&key);
                if (!u.pod_uid)
                        return -ENOMEM;
        }
        r = gc__pod_name(a, pod, u.pod_uid, gone);
        if (r < 0)
                return r;
        u.dims[GC_DIM_NAMESPACE] = pod->ns;
        u.dims[GC_DIM_NODE] = pod->node;
        u.dims[GC_DIM_POD] = pod->name;
        u.dims[GC_DIM_WORKLOAD] = gc_workload_of(pod, a->owners, a->pool);
        u.geq = geq;
        kept = gc__keep_known(a, pod, slot != NULL, &u, &estimate);
        if (slot) {
                u.dims[GC_DIM_MODEL] = slot->cls.model;
                u.dims[GC_DIM_CAPACITY_TYPE] = slot->cls.capacity_type;
                u.price_per_gpu_hour = slot->cls.price_per_gpu_hour;
        } else if (!kept) {
                const gc_price_entry *e = NULL;
                const char *ct = a->o.rules->default_capacity_type
                                     ? a->o.rules->default_capacity_type
                                     : "on-demand";

                estimate = 1;
                u.dims[GC_DIM_MODEL] = a->unknown;
                u.dims[GC_DIM_CAPACITY_TYPE] = gc_strpool_intern0(a->pool, ct);
                if (gc_catalog_lookup(a->o.catalog, "unknown", ct, NULL, &e) == 0)
                        u.price_per_gpu_hour = e->price_per_gpu_hour;
                /* (A pod with only claims, when no claim is known, bills nothing to note.) */
                if (pod->n_gpu > 0 || a->n_claims > 0)
                        gc_diag_add(
                            diag,
                            "pod %s/%s: node %s is not in the node list; priced at the catalog "
                            "fallback %.4g per GPU-hour as an estimate",
                            pod->ns ? pod->ns : "", pod->name ? pod->name : "", pod->node,
                            u.price_per_gpu_hour);
        }
        if (estimate || estimate_end ||
            (pod->flags & (GC_POD_F_BOUND_GUESSED | GC_POD_F_END_GUESSED)))
                u.flags |= GC_USAGE_F_ESTIMATE;
        if (pod->hami_alloc) {
                r = gc__account_hami_claim(a, pod, diag);
                if (r < 0)
                        return r;
        }
        if (pod->claims) {
                r = gc__account_dra_pod(a, pod, &u, gone, diag);
                if (r >= 0 && gone && pod->hami_alloc) {
                        char name[GC_WORKLOAD_MAX];

                        snprintf(name, sizeof(name), "%s%s", GC_HAMI_CLAIM_PREFIX,
                                 pod->name ? pod->name : "");
                        (void)gc_account_claim_gone(a, pod->ns, name);
                }
                return r;
        }
        r = gc_ledger_put_usage(a->ledger, &u);
        return r < 0 ? r : 1;
}

void gc_accountant_set_owners(gc_accountant *a, const gc_owner_table *owners)
{
        if (a)
                a->owners = owners;
}

int gc_account_pod(gc_accountant *a, const gc_pod *pod, gc_diag *diag)
{
        return gc__account_pod(a, pod, 0, 0, 0, diag);
}

int gc_account_pod_gone(gc_accountant *a, const gc_pod *pod, int64_t seen_gone, int estimate,
                        gc_diag *diag)
{
        int64_t end;

        if (!a || !pod)
                return -EINVAL;
        if (pod->phase == GC_PHASE_SUCCEEDED || pod->phase == GC_PHASE_FAILED)
                return gc__account_pod(a, pod, 0, estimate, 1, diag);
        if (pod->terminated_at > 0 && pod->terminated_at <= seen_gone)
                end = pod->terminated_at;
        else if (pod->deleting_at > 0 && pod->deleting_at <= seen_gone)
                end = pod->deleting_at;
        else
                end = seen_gone;
        if (end <= 0)
                end = 1; /* never 0: that means "no override" */
        return gc__account_pod(a, pod, end, estimate, 1, diag);
}

int gc_account_node_refresh(gc_accountant *a, const char *node_name, gc_diag *diag)
{
        const char *name;
        gc__node_slot *slot;
        gc_node n;
        size_t idx;
        int r;

        if (!a || !node_name)
                return -EINVAL;
        name = gc_strpool_intern0(a->pool, node_name);
        if (!name)
                return -ENOMEM;
        if (gc_ptrmap_get(&a->node_map, name, &idx) < 0)
                return -ENOENT;
        slot = &a->nodes[idx];
        {
                const char *model;
                double dra_geq;

                /* No GPU left at all: the caller ends the node now; its past stays as it was. */
                gc__account_dra_capacity(a, name, &dra_geq, &model);
                if (slot->plugin_geq <= 0 && dra_geq <= 0)
                        return -ENODEV;
        }
        n = slot->node;
        n.alloc_geq = slot->plugin_geq;
        n.gpu_model = slot->plugin_model;
        n.labels = NULL;
        if (slot->node.n_labels) {
                /* gc_account_node() releases the slot's own copy: hand it another. */
                n.labels = malloc(slot->node.n_labels * sizeof(*n.labels));
                if (!n.labels)
                        return -ENOMEM;
                memcpy(n.labels, slot->node.labels, slot->node.n_labels * sizeof(*n.labels));
        }
        r = gc_account_node(a, &n, diag);
        free(n.labels);
        return r;
}

int gc_account_node_gone(gc_accountant *a, const char *node_name, int64_t end)
{
        const char *name;
        gc__node_slot *slot;
        gc_capacity cap;
        size_t idx;

        if (!a || !node_name)
                return -EINVAL;
        name = gc_strpool_intern0(a->pool, node_name);
        if (gc_ptrmap_get(&a->node_map, name, &idx) < 0)
                return -ENOENT;
        slot = &a->nodes[idx];
        memset(&cap, 0, sizeof(cap));
        cap.node = name;
        cap.model = slot->cls.model;
        cap.capacity_type = slot->cls.capacity_type;
        cap.geq = slot->node.alloc_geq;
        cap.price_per_gpu_hour = slot->cls.price_per_gpu_hour;
        cap.start = slot->node.created_at;
        cap.end = end < cap.start ? cap.start : end;
        return gc_ledger_put_capacity(a->ledger, &cap);
}
