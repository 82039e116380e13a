/* informer: list/watch threads for namespaces, nodes, pods, (Dynamic Resource Allocation)
 * ResourceSlices and ResourceClaims, and the ReplicaSets and Jobs owning pods, feeding the
 * accountant. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller_int.h"
#include "log/log.h"

static const char *const ctl__kind_names[CTL_KINDS] = {
    "namespaces",     "nodes",         "pods",        "resourceslices",
    "resourceclaims", "deviceclasses", "replicasets", "jobs"};

const char *gc__ctl_kind_name(int kind)
{
        return kind >= 0 && kind < CTL_KINDS ? ctl__kind_names[kind] : "?";
}
int gc__ctl_resumes(int kind)
{
        return (kind >= 0 && kind < CTL_RESUMED) || kind == CTL_CLAIMS;
}

static const char *const ctl__paths[CTL_RESUMED] = {"/api/v1/namespaces", "/api/v1/nodes",
                                                    "/api/v1/pods"};

/* The collection an informer watches. */
static const char *ctl__path(const ctl *c, int kind)
{
        if (kind < CTL_RESUMED)
                return ctl__paths[kind];
        if (kind == CTL_REPLICASETS)
                return "/apis/apps/v1/replicasets";
        if (kind == CTL_JOBS)
                return "/apis/batch/v1/jobs";
        return c->dra_paths[kind - CTL_RESUMED];
}

/* The owner kind an informer's objects are, or NULL when it watches no owners. */
static const char *ctl__owner_kind(int kind)
{
        return kind == CTL_REPLICASETS ? "ReplicaSet" : kind == CTL_JOBS ? "Job" : NULL;
}

/* The named[] table of an informer's kind (pods have their own). */
static int ctl__table(int kind)
{
        switch (kind) {
        case CTL_NAMESPACES:
                return CTL_N_NS;
        case CTL_NODES:
                return CTL_N_NODES;
        case CTL_SLICES:
                return CTL_N_SLICES;
        case CTL_CLASSES:
                return CTL_N_CLASSES;
        default:
                return CTL_N_CLAIMS;
        }
}

void gc__ctl_fatal(ctl *c, const char *msg)
{
        int expected = 0;

        if (atomic_compare_exchange_strong(&c->fatal, &expected, 1))
                gc_strlcpy(c->fatal_msg, msg, sizeof(c->fatal_msg));
        c->inf_stop = 1;
        for (int i = 0; i < CTL_KINDS; i++)
                c->inf[i].wake = 1;
}

/* Which credential the API server refused with a 401, and what usually makes it refuse it. */
static const char *ctl__credential_hint(const ctl *c)
{
        if (c->kcfg.client_cert_file || c->kcfg.client_cert_data)
                return "the kubeconfig's client certificate was refused: is it signed by a CA in "
                       "kube-apiserver's --client-ca-file, and still valid?";
        if (c->kcfg.token_file)
                return "the token file's token was refused: expired, revoked, or its "
                       "ServiceAccount deleted?";
        if (c->kcfg.token)
                return "the kubeconfig's token was refused: expired or revoked?";
        return "no credential was given (the kubeconfig has no token nor client certificate)";
}

void gc__ctl_fatal_api(ctl *c, int r, const char *what, const char *grant, const char *cause)
{
        char msg[sizeof(c->fatal_msg)];

        if (r == -EKEYREJECTED)
                gc_errf(msg, sizeof(msg),
                        "%s: the API server does not accept the controller's credentials "
                        "(HTTP 401): %s",
                        what, ctl__credential_hint(c));
        else if (r == -EACCES)
                gc_errf(msg, sizeof(msg), "%s: forbidden (HTTP 403): %s", what,
                        grant ? grant : "check the roles bound to the controller");
        else
                gc_errf(msg, sizeof(msg), "%s: %s", what,
                        cause && cause[0] ? cause : strerror(r < 0 ? -r : EIO));
        gc__ctl_fatal(c, msg);
}

/* Re-prices every pod matching (node or namespace): their inputs changed. Under c->mu. */
static void ctl__reaccount(ctl *c, const char *node, const char *ns)
{
        for (size_t i = 0; i < c->n_pods; i++) {
                const gc_pod *p = &c->pods[i].pod;

                if ((node && p->node == node) || (ns && p->ns == ns))
                        gc_account_pod(c->acct, p, &c->diag);
        }
}

/* Finds or adds a namespace/node entry; sets *ret_new. Under c->mu. */
static ctl_named *ctl__named(ctl *c, int which, const char *name, int *ret_new)
{
        size_t idx;

        *ret_new = 0;
        if (gc_ptrmap_get(&c->named_map[which], name, &idx) == 0)
                return &c->named[which][idx];
        if (gc_grow((void **)&c->named[which], &c->cap_named[which], c->n_named[which],
                    sizeof(ctl_named), 64, 0) < 0 ||
            gc_ptrmap_put(&c->named_map[which], name, c->n_named[which]) < 0)
                return NULL;
        idx = c->n_named[which]++;
        memset(&c->named[which][idx], 0, sizeof(ctl_named));
        c->named[which][idx].name = name;
        *ret_new = 1;
        return &c->named[which][idx];
}

static void ctl__named_remove(ctl *c, int which, const char *name)
{
        size_t idx, last;

        if (gc_ptrmap_get(&c->named_map[which], name, &idx) < 0)
                return;
        gc_ptrmap_del(&c->named_map[which], name);
        last = --c->n_named[which];
        if (idx != last) {
                c->named[which][idx] = c->named[which][last];
                gc_ptrmap_put(&c->named_map[which], c->named[which][idx].name, idx);
        }
}

static void ctl__pod_remove(ctl *c, size_t idx)
{
        size_t last = --c->n_pods;

        gc_ptrmap_del(&c->pod_map, c->pods[idx].pod.uid);
        if (idx != last) {
                c->pods[idx] = c->pods[last];
                gc_ptrmap_put(&c->pod_map, c->pods[idx].pod.uid, idx);
        }
}

static int ctl__on_namespace(ctl *c, gc_kube_event ev, const cJSON *obj, int64_t now)
{
        gc_namespace ns;
        ctl_named *e;
        char err[256];
        int r, is_new;

        (void)now;
        r = gc_namespace_from_json(obj, &c->mo, &ns, err, sizeof(err));
        if (r <= 0) {
                if (r < 0)
                        gc_diag_add(&c->diag, "namespace %s skipped: %s",
                                    gc_kube_meta(obj, "name") ? gc_kube_meta(obj, "name") : "?",
                                    err);
                return 0;
        }
        if (ev == GC_KUBE_DELETED) {
                ctl__named_remove(c, 0, ns.name);
                return 0;
        }
        e = ctl__named(c, 0, ns.name, &is_new);
        if (!e)
                return -ENOMEM;
        e->gen = c->gen[CTL_NAMESPACES];
        r = gc_account_namespace(c->acct, &ns);
        if (r < 0)
                return r;
        if (!is_new && (e->a != ns.team || e->b != ns.project)) {
                ctl__reaccount(c, NULL, ns.name);
                c->changes++;
        }
        e->a = ns.team;
        e->b = ns.project;
        return 0;
}

/* The node's record was accounted again: its table entry and, when its class changed, its pods. */
static void ctl__node_accounted(ctl *c, ctl_named *e, int is_new)
{
        const gc_node *rec = gc_accountant_node(c->acct, e->name);
        const gc_node_class *cls = gc_accountant_node_class(c->acct, e->name);

        if (rec)
                gc__ctl_node_facts(c, e, rec);
        if (cls && (is_new || e->a != cls->model || e->b != cls->capacity_type ||
                    e->x != cls->price_per_gpu_hour)) {
                ctl__reaccount(c, e->name, NULL);
                e->a = cls->model;
                e->b = cls->capacity_type;
                e->x = cls->price_per_gpu_hour;
        }
        c->changes++;
}

static int ctl__on_node(ctl *c, gc_kube_event ev, const cJSON *obj, int64_t now)
{
        gc_node n;
        ctl_named *e;
        char err[256];
        int r, is_new;

        memset(&n, 0, sizeof(n));
        r = gc_node_from_json(obj, &c->mo, &n, err, sizeof(err));
        if (r < 0) {
                gc_diag_add(&c->diag, "node %s skipped: %s",
                            gc_kube_meta(obj, "name") ? gc_kube_meta(obj, "name") : "?", err);
                return 0;
        }
        if (r == 0) {
                /* Not (or no longer) a GPU node: if it was one, its capacity ends now. */
                const char *name = gc_strpool_intern0(c->pool, gc_kube_meta(obj, "name"));
                size_t idx;

                if (name && gc_ptrmap_get(&c->named_map[1], name, &idx) == 0) {
                        gc_account_node_gone(c->acct, name, now);
                        ctl__named_remove(c, 1, name);
                        c->changes++;
                }
                return 0;
        }
        if (ev == GC_KUBE_DELETED) {
                gc_account_node_gone(c->acct, n.name, now);
                ctl__named_remove(c, 1, n.name);
                gc_node_release(&n);
                c->changes++;
                return 0;
        }
        r = gc_account_node(c->acct, &n, &c->diag);
        e = r < 0 ? NULL : ctl__named(c, 1, n.name, &is_new);
        gc_node_release(&n);
        if (r < 0)
                return r;
        if (!e)
                return -ENOMEM;
        e->gen = c->gen[CTL_NODES];
        ctl__node_accounted(c, e, is_new);
        return 0;
}

static int ctl__on_pod(ctl *c, gc_kube_event ev, const cJSON *obj, int64_t now)
{
        gc_pod p;
        size_t idx;
        char err[256];
        int r;

        r = gc_pod_from_json(obj, &c->mo, &p, err, sizeof(err));
        if (r < 0) {
                const char *ns = gc_kube_meta(obj, "namespace"), *name = gc_kube_meta(obj, "name");

                gc_diag_add(&c->diag, "pod %s/%s skipped: %s", ns ? ns : "?", name ? name : "?",
                            err);
                gc_log(GC_LOG_WARN, "pod skipped", "namespace", ns, "pod", name, "error", err,
                       NULL);
                return 0;
        }
        if (r == 0)
                return 0; /* holds no GPU */
        if (ev == GC_KUBE_DELETED) {
                r = gc_account_pod_gone(c->acct, &p, now, 0, &c->diag);
                if (gc_ptrmap_get(&c->pod_map, p.uid, &idx) == 0)
                        ctl__pod_remove(c, idx);
                c->changes++;
                return r < 0 ? r : 0;
        }
        if (gc_ptrmap_get(&c->pod_map, p.uid, &idx) < 0) {
                r = gc_grow((void **)&c->pods, &c->cap_pods, c->n_pods, sizeof(ctl_pod), 64, 0);
                if (r == 0)
                        r = gc_ptrmap_put(&c->pod_map, p.uid, c->n_pods);
                if (r < 0)
                        return r;
                idx = c->n_pods++;
        }
        c->pods[idx].pod = p;
        c->pods[idx].gen = c->gen[CTL_PODS];
        c->changes++;
        r = gc_account_pod(c->acct, &p, &c->diag);
        return r < 0 ? r : 0;
}

/* ---- Dynamic Resource Allocation (docs/dra.md) ------------------------------------------------
 */

/*
 * A ResourceSlice changed the GPU devices on `node`: its capacity and class follow. A node the
 * GPU-node table does not hold (it offers no GPU resource, and its slices came after the node
 * decoder saw it) is fetched by listing the nodes again, once per node. Under c->mu.
 */
static int ctl__dra_node_changed(ctl *c, const char *node)
{
        ctl_named *e;
        size_t idx;
        int r;

        if (!node)
                return 0;
        if (gc_ptrmap_get(&c->named_map[CTL_N_NODES], node, &idx) == 0) {
                e = &c->named[CTL_N_NODES][idx];
                r = gc_account_node_refresh(c->acct, node, &c->diag);
                if (r == -ENODEV) {
                        /* Its last GPU devices are gone (the driver left, the node drains):
                           its capacity ends now, as when a node is deleted; slices that come
                           back list the node again. */
                        gc_account_node_gone(c->acct, node, gc__ctl_now());
                        ctl__named_remove(c, CTL_N_NODES, node);
                        gc_ptrmap_del(&c->dra_asked, node);
                        c->changes++;
                        return 0;
                }
                if (r < 0 && r != -ENOENT)
                        return r;
                ctl__node_accounted(c, e, 0);
                return 0;
        }
        if (!gc_accountant_dra_node(c->acct, node) || gc_ptrmap_get(&c->dra_asked, node, &idx) == 0)
                return 0;
        r = gc_ptrmap_put(&c->dra_asked, node, 1);
        if (r < 0)
                return r;
        if (c->inf[CTL_NODES].started) {
                gc_log(GC_LOG_DEBUG,
                       "a ResourceSlice names a node not known as a GPU node: listing nodes",
                       "node", node, NULL);
                c->inf[CTL_NODES].wake = 1;
        }
        return 0;
}

/* The devices in keys ('\n'-separated) that are not in keep are gone from their slice. */
static void ctl__dra_devices_gone(ctl *c, const char *keys, const char *keep)
{
        const char *cur = NULL, *s;
        size_t n;

        while (gc_list_next(keys, '\n', &cur, &s, &n)) {
                const char *key = gc_strpool_intern(c->pool, s, n);
                const char *kc = NULL, *ks;
                size_t kn;
                int kept = 0;

                while (!kept && gc_list_next(keep, '\n', &kc, &ks, &kn))
                        kept = kn == n && memcmp(ks, s, n) == 0;
                if (key && !kept)
                        (void)gc_account_dra_device_gone(c->acct, key);
        }
}

static void ctl__slice_remove(ctl *c, const char *name)
{
        size_t idx;
        const char *keys, *node;

        if (gc_ptrmap_get(&c->named_map[CTL_N_SLICES], name, &idx) < 0)
                return;
        keys = c->named[CTL_N_SLICES][idx].a;
        node = c->named[CTL_N_SLICES][idx].b;
        ctl__dra_devices_gone(c, keys, NULL);
        ctl__named_remove(c, CTL_N_SLICES, name);
        (void)ctl__dra_node_changed(c, node);
        c->changes++;
}

static int ctl__on_slice(ctl *c, gc_kube_event ev, const cJSON *obj, int64_t now)
{
        gc_dra_device_vec v;
        const char *name = gc_strpool_intern0(c->pool, gc_kube_meta(obj, "name"));
        const char *keys = NULL, *node = NULL, *old_node = NULL;
        ctl_named *e;
        gc_buf kb;
        char err[256];
        int r, is_new;

        (void)now;
        if (!name)
                return gc_kube_meta(obj, "name") ? -ENOMEM : 0;
        if (ev == GC_KUBE_DELETED) {
                ctl__slice_remove(c, name);
                return 0;
        }
        memset(&v, 0, sizeof(v));
        r = gc_slice_from_json(obj, &c->mo, &v, err, sizeof(err));
        if (r < 0) {
                /* Refused whole (a bound, a bad device): what it published before stays. */
                gc_diag_add(&c->diag, "ResourceSlice %s skipped: %s", name, err);
                gc_log(GC_LOG_WARN, "ResourceSlice skipped", "resourceslice", name, "error", err,
                       NULL);
                free(v.v);
                return 0;
        }
        gc_buf_init(&kb, 1u << 20);
        for (size_t i = 0; i < v.n && r >= 0; i++) {
                const gc_dra_device *d = &v.v[i];

                r = gc_account_dra_device(c->acct, d);
                if (r == 0 && d->node)
                        node = gc_strpool_intern0(c->pool, d->node);
                if (r == 0)
                        r = gc_buf_printf(&kb, "%s%s/%s/%s", i ? "\n" : "", d->driver, d->pool,
                                          d->name);
        }
        if (r >= 0 && kb.len)
                keys = gc_strpool_intern(c->pool, kb.data, kb.len);
        gc_buf_free(&kb);
        free(v.v);
        if (r < 0)
                return r;
        if (!keys) {
                /* No GPU device (any more): as if deleted. */
                ctl__slice_remove(c, name);
                return 0;
        }
        e = ctl__named(c, CTL_N_SLICES, name, &is_new);
        if (!e)
                return -ENOMEM;
        if (!is_new) {
                ctl__dra_devices_gone(c, e->a, keys);
                old_node = e->b;
        }
        e->gen = c->gen[CTL_SLICES];
        e->a = keys;
        e->b = node;
        if (old_node && old_node != node)
                r = ctl__dra_node_changed(c, old_node);
        if (r >= 0)
                r = ctl__dra_node_changed(c, node);
        c->changes++;
        return r < 0 ? r : 0;
}

/* "<namespace>/<name>" of an object, pooled. */
static const char *ctl__ns_name(ctl *c, const cJSON *obj)
{
        const char *ns = gc_kube_meta(obj, "namespace"), *name = gc_kube_meta(obj, "name");
        char key[64 + 1 + 253 + 1];
        int n;

        if (!name)
                return NULL;
        n = snprintf(key, sizeof(key), "%s/%s", ns ? ns : "default", name);
        if (n < 0 || (size_t)n >= sizeof(key))
                return NULL;
        return gc_strpool_intern(c->pool, key, (size_t)n);
}

static void ctl__claim_remove(ctl *c, const char *key)
{
        size_t idx;

        if (gc_ptrmap_get(&c->named_map[CTL_N_CLAIMS], key, &idx) < 0)
                return;
        (void)gc_account_claim_gone(c->acct, c->named[CTL_N_CLAIMS][idx].a,
                                    c->named[CTL_N_CLAIMS][idx].b);
        ctl__named_remove(c, CTL_N_CLAIMS, key);
}

static int ctl__on_claim(ctl *c, gc_kube_event ev, const cJSON *obj, int64_t now)
{
        const char *key = ctl__ns_name(c, obj);
        gc_claim cl;
        ctl_named *e;
        size_t idx;
        char err[256];
        int r, is_new;

        (void)now;
        if (!key)
                return 0; /* a name no claim can have: the decoder would refuse it too */
        if (ev == GC_KUBE_DELETED) {
                /* Its pods keep what it held: nothing past is re-priced. */
                ctl__claim_remove(c, key);
                return 0;
        }
        memset(&cl, 0, sizeof(cl));
        r = gc_claim_from_json(obj, &c->mo, &cl, err, sizeof(err));
        if (r < 0) {
                gc_diag_add(&c->diag, "ResourceClaim %s skipped: %s", key, err);
                gc_log(GC_LOG_WARN, "ResourceClaim skipped", "resourceclaim", key, "error", err,
                       NULL);
                return 0;
        }
        /* Not allocated (yet, or any more: released after its pods), or no GPU device: what
           was known of it stays, so its pods' past keeps its devices. */
        if (r == 0 && gc_ptrmap_get(&c->named_map[CTL_N_CLAIMS], key, &idx) < 0)
                return 0;
        e = ctl__named(c, CTL_N_CLAIMS, key, &is_new);
        if (!e) {
                gc_claim_release(&cl);
                return -ENOMEM;
        }
        e->gen = c->gen[CTL_CLAIMS];
        if (is_new) {
                e->a = gc_strpool_intern0(c->pool, gc_kube_meta(obj, "namespace"));
                e->b = gc_strpool_intern0(c->pool, gc_kube_meta(obj, "name"));
        }
        if (r == 1) {
                r = gc_account_claim(c->acct, &cl, &c->diag);
                gc_claim_release(&cl);
                if (r < 0)
                        return r;
                c->changes++;
        }
        return 0;
}

/* A DeviceClass: kept when its selectors require a GPU driver read (for the advisor's advice). */
static int ctl__on_class(ctl *c, gc_kube_event ev, const cJSON *obj, int64_t now)
{
        gc_device_class dc;
        ctl_named *e;
        char err[256];
        int r, is_new;

        (void)now;
        memset(&dc, 0, sizeof(dc));
        r = gc_device_class_from_json(obj, &c->mo, &dc, err, sizeof(err));
        if (r < 0) {
                const char *name = gc_kube_meta(obj, "name");

                gc_log(GC_LOG_WARN, "DeviceClass skipped", "deviceclass", name, "error", err, NULL);
                return 0;
        }
        if (r == 0 || ev == GC_KUBE_DELETED) {
                const char *name = gc_strpool_intern0(c->pool, gc_kube_meta(obj, "name"));

                if (name)
                        ctl__named_remove(c, CTL_N_CLASSES, name);
                return 0;
        }
        e = ctl__named(c, CTL_N_CLASSES, dc.name, &is_new);
        if (!e)
                return -ENOMEM;
        e->gen = c->gen[CTL_CLASSES];
        e->a = dc.device_type;
        e->b = dc.driver;
        return 0;
}

/* ---- workloads (docs/workloads.md) ------------------------------------------------------------
 */

/* 1 when two optional strings differ. */
static int ctl__differ(const char *a, const char *b)
{
        return (a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0);
}

/*
 * An owner new to the table, or whose own owner changed: the intervals of the pods it owns take
 * their workload now (one seen before its ReplicaSet or Job). Only the workload changes: the
 * pod's record may be older than its interval (a relist of owners before one of pods, after a
 * partition), and pricing it again from that record would reopen a pod that has finished. The
 * later pieces of a DRA pod take it at the pod's next event. Under c->mu.
 */
static void ctl__owner_changed(ctl *c, const char *uid)
{
        for (size_t i = 0; i < c->n_pods; i++) {
                const gc_pod *p = &c->pods[i].pod;
                const char *wl;
                gc_usage u;

                if (!p->controller_uid || strcmp(p->controller_uid, uid) != 0 ||
                    gc_ledger_get_usage(c->ledger, p->uid, &u) < 0)
                        continue;
                wl = gc_workload_of(p, c->owners, c->pool);
                if (!wl || (u.dims[GC_DIM_WORKLOAD] && strcmp(u.dims[GC_DIM_WORKLOAD], wl) == 0))
                        continue;
                u.dims[GC_DIM_WORKLOAD] = wl;
                if (gc_ledger_put_usage(c->ledger, &u) == 0)
                        c->changes++;
        }
}

/*
 * A ReplicaSet or Job: its controller owner goes into the owner table, for the workload of the
 * pods it owns (re-priced when it is new or its owner changed). A deleted one is kept, marked
 * gone, CTL_OWNER_KEEP_S, for the pods deleted after it. Under c->mu.
 */
static int ctl__on_owner(ctl *c, int kind, gc_kube_event ev, const cJSON *obj, int64_t now)
{
        const char *okind = ctl__owner_kind(kind);
        const gc_owner *prev;
        gc_owner o;
        char err[256];
        int r, changed;

        if (now - c->owners_expired_at >= 60) {
                (void)gc_owner_expire(c->owners, now - CTL_OWNER_KEEP_S);
                c->owners_expired_at = now;
        }
        r = gc_owner_from_json(obj, okind, &o, err, sizeof(err));
        if (r < 0) {
                const char *ns = gc_kube_meta(obj, "namespace"), *name = gc_kube_meta(obj, "name");

                gc_log(GC_LOG_WARN, "owner skipped", "kind", okind, "namespace", ns, "name", name,
                       "error", err, NULL);
                return 0;
        }
        if (ev == GC_KUBE_DELETED) {
                (void)gc_owner_gone(c->owners, o.uid, now);
                return 0;
        }
        prev = gc_owner_get(c->owners, o.uid);
        changed = !prev || ctl__differ(prev->owner_kind, o.owner_kind) ||
                  ctl__differ(prev->owner_name, o.owner_name);
        r = gc_owner_put(c->owners, &o, c->gen[kind]);
        if (r == 0 && changed)
                ctl__owner_changed(c, o.uid);
        if (r == -ENOSPC) {
                gc_owner_stats st;

                gc_owner_table_stats(c->owners, &st);
                if (st.refused == 1) /* once: the count is in the table */
                        gc_log(GC_LOG_WARN,
                               "the owner table is full: more pods resolve by the fallbacks",
                               "kind", okind, NULL);
                return 0;
        }
        if (r == -EINVAL)
                return 0; /* the decoder's bounds are the table's: not reached */
        return r;
}

_Static_assert(sizeof(ctl_pod) == 272, "ctl_pod changed: mark its strings in gc__ctl_mark");
_Static_assert(sizeof(ctl_named) == 72, "ctl_named changed: mark its strings in gc__ctl_mark");

void gc__ctl_mark(ctl *c)
{
        for (size_t i = 0; i < c->n_pods; i++)
                gc_pod_mark(&c->pods[i].pod, c->pool);
        gc_ptrmap_mark_keys(&c->pod_map, c->pool);
        for (int t = 0; t < CTL_N_TABLES; t++) {
                for (size_t i = 0; i < c->n_named[t]; i++) {
                        const ctl_named *e = &c->named[t][i];

                        gc_strpool_mark(c->pool, e->name);
                        gc_strpool_mark(c->pool, e->a);
                        gc_strpool_mark(c->pool, e->b);
                        gc_strpool_mark(c->pool, e->instance_type);
                        gc_strpool_mark(c->pool, e->region);
                }
                gc_ptrmap_mark_keys(&c->named_map[t], c->pool);
        }
        gc_ptrmap_mark_keys(&c->dra_asked, c->pool);
}

void gc__ctl_dra_advisor_opts(ctl *c, gc_advisor_opts *ret)
{
        const char *gpu = NULL, *mig = NULL;

        *ret = c->cfg->advisor;
        for (size_t i = 0; i < c->n_named[CTL_N_CLASSES]; i++) {
                const ctl_named *e = &c->named[CTL_N_CLASSES][i];

                if (!e->a || !e->b || strcmp(e->b, GC_DRA_NVIDIA_DRIVER) != 0)
                        continue;
                if (strcmp(e->a, "gpu") == 0 && (!gpu || strcmp(e->name, gpu) < 0))
                        gpu = e->name;
                if (strcmp(e->a, "mig") == 0 && (!mig || strcmp(e->name, mig) < 0))
                        mig = e->name;
        }
        if (gpu)
                gc_strlcpy(ret->dra_gpu_class, gpu, sizeof(ret->dra_gpu_class));
        if (mig)
                gc_strlcpy(ret->dra_mig_class, mig, sizeof(ret->dra_mig_class));
        gc_savings_shared_opts(ret, c->acct);
}

static int ctl__list_begin(void *ud)
{
        ctl_informer *inf = ud;
        ctl *c = inf->c;

        pthread_mutex_lock(&c->mu);
        c->gen[inf->kind]++;
        inf->listing = 1;
        pthread_mutex_unlock(&c->mu);
        return 0;
}

/* The watch library's resume point moved (a completed LIST, a bookmark): the ledger has it all. */
static void ctl__progress(void *ud, const char *rv)
{
        ctl_informer *inf = ud;
        ctl *c = inf->c;

        pthread_mutex_lock(&c->mu);
        gc_strlcpy(c->rv[inf->kind], rv, sizeof(c->rv[inf->kind]));
        if (inf->resuming && inf->kind == CTL_PODS)
                c->restore_pending = 0; /* a bookmark: the server accepted the resume point */
        pthread_mutex_unlock(&c->mu);
        inf->resuming = 0;
        inf->lost_at = 0; /* a bookmark: the stream is whole up to here */
}

/*
 * The resume point had expired: what happened in [from, to) the API server no longer holds.
 * Pods that lived and went wholly inside it are unknown; they can only have used GPUs that the
 * ledger shows free on the nodes then, so that idle capacity, priced, bounds what is missing.
 * Said in the reports' notes, /metrics and the log. Under c->mu.
 */
static void ctl__blind_span(ctl *c, int64_t from, int64_t to)
{
        gc_cost_summary sum;
        gc_query q;
        char a[GC_TIME_LEN], b[GC_TIME_LEN], bound[64];
        const char *cur =
            c->cfg->catalog && c->cfg->catalog->currency ? c->cfg->catalog->currency : "USD";

        if (to <= from)
                return;
        memset(&q, 0, sizeof(q));
        memset(&sum, 0, sizeof(sum));
        q.start = from;
        q.end = to;
        q.now = to;
        c->blind_from = from;
        c->blind_to = to;
        c->blind_bound_cost = 0;
        if (gc_ledger_query(c->ledger, &q, &sum) == 0)
                c->blind_bound_cost = sum.idle.cost;
        gc_cost_summary_free(&sum);
        gc_time_format(from, a);
        gc_time_format(to, b);
        snprintf(bound, sizeof(bound), "%.2f %s", c->blind_bound_cost, cur);
        gc_diag_add(&c->diag,
                    "Blind span %s to %s: the API server no longer held the events since the "
                    "last checkpoint, so pods that started and ended within it are not counted; "
                    "they could only have used GPUs free on the nodes then, at most %s.",
                    a, b, bound);
        gc_log(GC_LOG_WARN, "blind span", "from", a, "to", b, "bound", bound, NULL);
}

/* Objects not seen in the LIST that just completed are gone. */
static int ctl__list_end(void *ud)
{
        ctl_informer *inf = ud;
        ctl *c = inf->c;
        int64_t now = gc__ctl_now();
        size_t n_estimates = 0;
        uint32_t gen;

        inf->lost_at = 0; /* the LIST is the state now */
        pthread_mutex_lock(&c->mu);
        gen = c->gen[inf->kind];
        inf->listing = 0;
        if (inf->kind == CTL_PODS) {
                for (size_t i = 0; i < c->n_pods;) {
                        if (c->pods[i].gen == gen) {
                                i++;
                                continue;
                        }
                        if (inf->expired_since > 0) {
                                /* Gone at some moment of the span the API server no longer
                                   holds: known to exist until its start, so ended there. */
                                if (gc_account_pod_gone(c->acct, &c->pods[i].pod,
                                                        inf->expired_since, 1, &c->diag) > 0)
                                        n_estimates++;
                        } else {
                                gc_account_pod_gone(c->acct, &c->pods[i].pod, now, 0, &c->diag);
                        }
                        ctl__pod_remove(c, i);
                        c->changes++;
                }
                if (inf->expired_since > 0) {
                        char since[GC_TIME_LEN], count[24];

                        gc_time_format(inf->expired_since, since);
                        snprintf(count, sizeof(count), "%zu", n_estimates);
                        if (n_estimates)
                                gc_diag_add(&c->diag,
                                            "%zu pod(s) holding GPUs were gone after the watch "
                                            "lost events since %s: each is counted up to that "
                                            "moment, an estimate (marked as such), unless the "
                                            "server's replay then gives its real end.",
                                            n_estimates, since);
                        gc_log(GC_LOG_WARN, "pods gone during a lost watch: ended where last known",
                               "since", since, "pods", count, NULL);
                        ctl__blind_span(c, inf->expired_since, now);
                        inf->expired_since = 0;
                }
                /* Resuming from the checkpoint, the watch replays the deletions since; only
                   without a resume point (or past it) are they unknown and estimated. */
                if (c->restore_pending && (!inf->resuming || inf->resume_failed)) {
                        gc__ctl_checkpoint_close_missing(c);
                        if (inf->resume_failed)
                                ctl__blind_span(c, c->restored_at, now);
                        c->restore_pending = 0;
                }
        } else if (ctl__owner_kind(inf->kind)) {
                inf->expired_since = 0;
                (void)gc_owner_sweep(c->owners, ctl__owner_kind(inf->kind), gen, now);
        } else {
                int which = ctl__table(inf->kind);

                inf->expired_since = 0; /* these hold no intervals to estimate */
                for (size_t i = 0; i < c->n_named[which];) {
                        const char *name = c->named[which][i].name;

                        if (c->named[which][i].gen == gen) {
                                i++;
                                continue;
                        }
                        if (which == CTL_N_SLICES) {
                                ctl__slice_remove(c, name);
                        } else if (which == CTL_N_CLAIMS) {
                                ctl__claim_remove(c, name);
                        } else {
                                if (which == CTL_N_NODES)
                                        gc_account_node_gone(c->acct, name, now);
                                ctl__named_remove(c, which, name);
                        }
                        c->changes++;
                }
        }
        pthread_mutex_unlock(&c->mu);
        if (!atomic_exchange(&inf->synced, 1))
                gc_log(GC_LOG_INFO, "initial sync done", "resource", ctl__kind_names[inf->kind],
                       NULL);
        else
                atomic_fetch_add(&inf->relists, 1);
        return 0;
}

static int ctl__object(void *ud, gc_kube_event ev, const cJSON *obj)
{
        ctl_informer *inf = ud;
        ctl *c = inf->c;
        int64_t now = gc__ctl_now();
        int r;

        atomic_store(&inf->last_event, (long)now);
        pthread_mutex_lock(&c->mu);
        if (!inf->listing)
                inf->lost_at = 0; /* the stream delivers again: nothing was lost */
        switch (inf->kind) {
        case CTL_PODS:
                r = ctl__on_pod(c, ev, obj, now);
                break;
        case CTL_NODES:
                r = ctl__on_node(c, ev, obj, now);
                break;
        case CTL_SLICES:
                r = ctl__on_slice(c, ev, obj, now);
                break;
        case CTL_CLAIMS:
                r = ctl__on_claim(c, ev, obj, now);
                break;
        case CTL_CLASSES:
                r = ctl__on_class(c, ev, obj, now);
                break;
        case CTL_REPLICASETS:
        case CTL_JOBS:
                r = ctl__on_owner(c, inf->kind, ev, obj, now);
                break;
        default:
                r = ctl__on_namespace(c, ev, obj, now);
                break;
        }
        /* A watch event's resourceVersion is the resume point once its effects are in, under
           the same lock (a LIST's objects are not: its own version counts at its end). */
        if (r >= 0 && !inf->listing) {
                const char *rv = gc_kube_meta(obj, "resourceVersion");

                if (rv && strlen(rv) < sizeof(c->rv[inf->kind]))
                        gc_strlcpy(c->rv[inf->kind], rv, sizeof(c->rv[inf->kind]));
                if (inf->resuming && inf->kind == CTL_PODS)
                        c->restore_pending = 0; /* the replay brings what happened meanwhile */
                inf->resuming = 0;
        }
        pthread_mutex_unlock(&c->mu);
        if (r < 0) {
                char msg[256];

                snprintf(msg, sizeof(msg), "%s: cannot record an object: %s",
                         ctl__kind_names[inf->kind], strerror(-r));
                gc__ctl_fatal(c, msg);
        }
        return r;
}

static void ctl__note(void *ud, gc_kube_note note, long http_status, const char *msg)
{
        ctl_informer *inf = ud;
        char status[24];

        snprintf(status, sizeof(status), "%ld", http_status);
        switch (note) {
        case GC_KUBE_NOTE_LISTED:
                gc_log(GC_LOG_DEBUG, "listed", "resource", ctl__kind_names[inf->kind], "detail",
                       msg, NULL);
                break;
        case GC_KUBE_NOTE_WATCH_START:
                atomic_fetch_add(&inf->restarts, 1);
                gc_log(GC_LOG_DEBUG, "watch started", "resource", ctl__kind_names[inf->kind],
                       "detail", msg, NULL);
                break;
        case GC_KUBE_NOTE_WATCH_END:
                if (inf->resuming && inf->kind == CTL_PODS) {
                        pthread_mutex_lock(&inf->c->mu);
                        inf->c->restore_pending = 0;
                        pthread_mutex_unlock(&inf->c->mu);
                }
                inf->resuming = 0;
                inf->lost_at = 0; /* a normal end: the stream held everything until now */
                gc_log(GC_LOG_DEBUG, "watch ended by the server", "resource",
                       ctl__kind_names[inf->kind], NULL);
                break;
        case GC_KUBE_NOTE_EXPIRED:
                if (inf->resuming) {
                        inf->resume_failed = 1;
                        inf->resuming = 0;
                        gc_log(GC_LOG_WARN,
                               "the checkpoint's resourceVersion is past the API server's event "
                               "window (410): listing again; what happened between the "
                               "checkpoint and now is estimated and reported as a blind span",
                               "resource", ctl__kind_names[inf->kind], "detail", msg, NULL);
                        break;
                }
                /* Lost since the connection broke, or (a 410 inside a live stream: it fell
                   behind) since its last event. */
                pthread_mutex_lock(&inf->c->mu);
                inf->expired_since =
                    inf->lost_at > 0 ? inf->lost_at : (int64_t)atomic_load(&inf->last_event);
                if (inf->expired_since <= 0)
                        inf->expired_since = gc__ctl_now();
                pthread_mutex_unlock(&inf->c->mu);
                gc_log(GC_LOG_WARN,
                       "watch expired (410): listing again; what the server no "
                       "longer holds is estimated and reported as a blind span",
                       "resource", ctl__kind_names[inf->kind], "detail", msg, NULL);
                break;
        case GC_KUBE_NOTE_IDLE_TIMEOUT:
                if (inf->lost_at == 0)
                        inf->lost_at = gc__ctl_now();
                gc_log(GC_LOG_WARN, "watch idle too long: reconnecting", "resource",
                       ctl__kind_names[inf->kind], NULL);
                break;
        case GC_KUBE_NOTE_RETRY:
                if (inf->lost_at == 0)
                        inf->lost_at = gc__ctl_now();
                gc_log(GC_LOG_WARN, "API request failed: retrying", "resource",
                       ctl__kind_names[inf->kind], "status", status, "detail", msg, NULL);
                break;
        case GC_KUBE_NOTE_FORBIDDEN:
                gc_log(GC_LOG_ERROR, "the API server refused list/watch: check the ClusterRole",
                       "resource", ctl__kind_names[inf->kind], "verb", "list,watch", "status",
                       status, "detail", msg, NULL);
                break;
        case GC_KUBE_NOTE_BAD_EVENT:
                gc_log(GC_LOG_WARN, "bad watch event skipped: listing again", "resource",
                       ctl__kind_names[inf->kind], "detail", msg, NULL);
                break;
        }
}

static void *ctl__informer_main(void *arg)
{
        ctl_informer *inf = arg;
        ctl *c = inf->c;
        gc_kube_watch_ops ops = {
            .list_begin = ctl__list_begin,
            .object = ctl__object,
            .list_end = ctl__list_end,
            .note = ctl__note,
            .progress = ctl__progress,
        };
        gc_kube_watch_opts wo;
        char err[256], msg[400];
        gc_kube *k;
        int r;

        memset(&wo, 0, sizeof(wo));
        wo.path = ctl__path(c, inf->kind);
        wo.metadata_only = ctl__owner_kind(inf->kind) != NULL;
        if (gc__ctl_resumes(inf->kind) && c->resume_rv[inf->kind][0]) {
                wo.resume_rv = c->resume_rv[inf->kind];
                wo.resume_exact = inf->kind == CTL_CLAIMS;
                inf->resuming = 1;
                gc_log(GC_LOG_INFO, "resuming the watch from the checkpoint", "resource",
                       ctl__kind_names[inf->kind], "resourceVersion", wo.resume_rv, NULL);
        }
        k = gc_kube_new(&c->kcfg, err, sizeof(err));
        if (!k) {
                snprintf(msg, sizeof(msg), "%s: API client: %s", ctl__kind_names[inf->kind], err);
                gc__ctl_fatal(c, msg);
                return NULL;
        }
        /* Woken without a stop: LIST again (the objects as they are now), then watch on. */
        for (;;) {
                r = gc_kube_watch_run(k, &wo, &ops, inf, &inf->wake);
                if (r < 0 || c->inf_stop)
                        break;
                inf->wake = 0;
                wo.resume_rv = NULL;
                gc_log(GC_LOG_DEBUG, "listing again on request", "resource",
                       ctl__kind_names[inf->kind], NULL);
        }
        gc_kube_free(k);
        if (r == -EACCES && ctl__owner_kind(inf->kind)) {
                /* Workloads are a convenience: without the owners, pods resolve by the
                   fallbacks (docs/workloads.md); pricing goes on. */
                gc_log(GC_LOG_ERROR,
                       "forbidden to list/watch the pods' owners: workloads resolve by names "
                       "and labels only; grant get, list and watch on them in the ClusterRole",
                       "resource", ctl__kind_names[inf->kind], NULL);
                atomic_store(&inf->synced, 1);
                return NULL;
        }
        if (r == -EACCES) {
                snprintf(msg, sizeof(msg),
                         "forbidden to list/watch %s: the ClusterRole must grant list and watch "
                         "on %s%s",
                         ctl__kind_names[inf->kind], ctl__kind_names[inf->kind],
                         inf->kind < CTL_RESUMED ? "" : " in the resource.k8s.io API group");
                gc__ctl_fatal(c, msg);
        } else if (r == -EKEYREJECTED) {
                snprintf(msg, sizeof(msg), "cannot list/watch %s", ctl__kind_names[inf->kind]);
                gc__ctl_fatal_api(c, r, msg, NULL, NULL);
        } else if (r < 0 && !atomic_load(&c->fatal)) {
                snprintf(msg, sizeof(msg), "%s: watch failed: %s", ctl__kind_names[inf->kind],
                         strerror(-r));
                gc__ctl_fatal(c, msg);
        }
        return NULL;
}

int gc__ctl_informer_start(ctl *c, int kind)
{
        ctl_informer *inf = &c->inf[kind];
        int r;

        inf->c = c;
        inf->kind = kind;
        inf->wake = c->inf_stop;
        r = pthread_create(&inf->thread, NULL, ctl__informer_main, inf);
        if (r != 0)
                return -r;
        inf->started = 1;
        return 0;
}

void gc__ctl_informers_stop(ctl *c)
{
        c->inf_stop = 1;
        for (int i = 0; i < CTL_KINDS; i++)
                c->inf[i].wake = 1;
        for (int i = 0; i < CTL_KINDS; i++) {
                if (c->inf[i].started)
                        pthread_join(c->inf[i].thread, NULL);
                c->inf[i].started = 0;
        }
}
