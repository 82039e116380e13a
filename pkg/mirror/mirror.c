/* mirror: the last seen GPU pods, nodes, namespaces, DRA objects and owners, and what their
 * changes mean for the ledger (gone pods, estimates, blind spans, re-pricing). */
#include "mirror.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../checkpoint/checkpoint.h"

/* Tables of named objects: namespaces, nodes, ResourceSlices, ResourceClaims, DeviceClasses. */
enum { MIRROR_NS = 0, MIRROR_NODES, MIRROR_SLICES, MIRROR_CLAIMS, MIRROR_CLASSES, MIRROR_TABLES };

typedef struct mirror__pod {
        gc_pod pod;   /* the last observed record (pooled strings) */
        uint32_t gen; /* the LIST generation it was last seen in */
} mirror__pod;

typedef struct mirror__named {
        gc_mirror_node_facts node; /* node.name is every entry's name; the rest nodes only */
        uint32_t gen;
        /* what pricing of the pods depends on, to re-price them only when it changes; for a
         * ResourceSlice, a: the '\n'-separated keys of the GPU devices it published, b: its
         * node; for a ResourceClaim, a: its namespace, b: its name; for a namespace, its team
         * and project; for a node, its model and capacity type (x: its price); for a
         * DeviceClass, its device type and driver */
        const char *a, *b;
        double x;
} mirror__named;

struct gc_mirror {
        gc_mirror_opts o;
        mirror__pod *pods;
        size_t n_pods, cap_pods;
        gc_ptrmap pod_map; /* uid -> index in pods */
        mirror__named *named[MIRROR_TABLES];
        size_t n_named[MIRROR_TABLES], cap_named[MIRROR_TABLES];
        gc_ptrmap named_map[MIRROR_TABLES];
        gc_ptrmap dra_asked; /* nodes a relist of nodes was asked for (once each) */
        uint32_t gen[GC_MIRROR_KINDS];
        int64_t owners_expired_at; /* the last gc_owner_expire() */
        int64_t restored_at;       /* checkpoint time when one was restored, else 0 */
        int restore_pending;       /* the first pod LIST after a restore is not yet complete */
        uint64_t changes;
        /* The span the ledger could not see: [blind_from, blind_to), 0 when none. */
        int64_t blind_from, blind_to;
        double blind_bound_cost; /* GPUs free on the nodes in that span, priced */
};

/* Logs msg with up to four key, value pairs (a NULL key ends them). */
static void mirror__log(const gc_mirror *m, int level, const char *msg, const char *k1,
                        const char *v1, const char *k2, const char *v2, const char *k3,
                        const char *v3)
{
        const char *f[9] = {k1, v1, k2, v2, k3, v3, NULL, NULL, NULL};

        if (m->o.log)
                m->o.log(m->o.ud, level, msg, f);
}

gc_mirror *gc_mirror_new(const gc_mirror_opts *o)
{
        gc_mirror *m;

        if (!o || !o->pool || !o->ledger || !o->acct || !o->diag)
                return NULL;
        m = calloc(1, sizeof(*m));
        if (!m)
                return NULL;
        m->o = *o;
        return m;
}

gc_mirror *gc_mirror_free(gc_mirror *m)
{
        if (!m)
                return NULL;
        free(m->pods);
        gc_ptrmap_free(&m->pod_map);
        for (int i = 0; i < MIRROR_TABLES; i++) {
                free(m->named[i]);
                gc_ptrmap_free(&m->named_map[i]);
        }
        gc_ptrmap_free(&m->dra_asked);
        free(m);
        return NULL;
}

void gc_mirror_set_ledger(gc_mirror *m, gc_ledger *l, gc_accountant *a)
{
        m->o.ledger = l;
        m->o.acct = a;
}

const char *gc_mirror_owner_kind(int kind)
{
        return kind == GC_MIRROR_REPLICASETS ? "ReplicaSet" : kind == GC_MIRROR_JOBS ? "Job" : NULL;
}

/* Re-prices every pod matching (node or namespace): their inputs changed. */
static void mirror__reaccount(gc_mirror *m, const char *node, const char *ns)
{
        for (size_t i = 0; i < m->n_pods; i++) {
                const gc_pod *p = &m->pods[i].pod;

                if ((node && p->node == node) || (ns && p->ns == ns))
                        gc_account_pod(m->o.acct, p, m->o.diag);
        }
}

/* Finds or adds an entry of a named table; sets *ret_new. */
static mirror__named *mirror__named_get(gc_mirror *m, int which, const char *name, int *ret_new)
{
        size_t idx;

        *ret_new = 0;
        if (gc_ptrmap_get(&m->named_map[which], name, &idx) == 0)
                return &m->named[which][idx];
        if (gc_grow((void **)&m->named[which], &m->cap_named[which], m->n_named[which],
                    sizeof(mirror__named), 64, 0) < 0 ||
            gc_ptrmap_put(&m->named_map[which], name, m->n_named[which]) < 0)
                return NULL;
        idx = m->n_named[which]++;
        memset(&m->named[which][idx], 0, sizeof(mirror__named));
        m->named[which][idx].node.name = name;
        *ret_new = 1;
        return &m->named[which][idx];
}

static void mirror__named_remove(gc_mirror *m, int which, const char *name)
{
        size_t idx, last;

        if (gc_ptrmap_get(&m->named_map[which], name, &idx) < 0)
                return;
        gc_ptrmap_del(&m->named_map[which], name);
        last = --m->n_named[which];
        if (idx != last) {
                m->named[which][idx] = m->named[which][last];
                gc_ptrmap_put(&m->named_map[which], m->named[which][idx].node.name, idx);
        }
}

static void mirror__pod_remove(gc_mirror *m, size_t idx)
{
        size_t last = --m->n_pods;

        gc_ptrmap_del(&m->pod_map, m->pods[idx].pod.uid);
        if (idx != last) {
                m->pods[idx] = m->pods[last];
                gc_ptrmap_put(&m->pod_map, m->pods[idx].pod.uid, idx);
        }
}

int gc_mirror_namespace(gc_mirror *m, int deleted, const gc_namespace *ns)
{
        mirror__named *e;
        int r, is_new;

        if (deleted) {
                mirror__named_remove(m, MIRROR_NS, ns->name);
                return 0;
        }
        e = mirror__named_get(m, MIRROR_NS, ns->name, &is_new);
        if (!e)
                return -ENOMEM;
        e->gen = m->gen[GC_MIRROR_NAMESPACES];
        r = gc_account_namespace(m->o.acct, ns);
        if (r < 0)
                return r;
        /* Labels that attribute its pods changed: they are attributed again. */
        if (!is_new && (e->a != ns->team || e->b != ns->project)) {
                mirror__reaccount(m, NULL, ns->name);
                m->changes++;
        }
        e->a = ns->team;
        e->b = ns->project;
        return 0;
}

/* What the node table of snapshots shows of a GPU node. */
static void mirror__node_facts(gc_mirror *m, gc_mirror_node_facts *e, const gc_node *n)
{
        const gc_node_class *cls = gc_accountant_node_class(m->o.acct, n->name);
        const char *it = gc_node_label(n, "node.kubernetes.io/instance-type");

        if (!it)
                it = gc_node_label(n, "beta.kubernetes.io/instance-type");
        e->instance_type = it;
        e->region = cls ? cls->region : NULL;
        /* A MIG or time-sliced node offers more units than it has devices: the count label
         * (GPU Feature Discovery) says how many devices; without it, the GPU-equivalents. */
        e->gpus = n->gpu_count > 0 ? (double)n->gpu_count : n->alloc_geq;
        e->geq = n->alloc_geq;
}

/* The node's record was accounted again: its table entry and, when its class changed, its pods. */
static void mirror__node_accounted(gc_mirror *m, mirror__named *e, int is_new)
{
        const gc_node *rec = gc_accountant_node(m->o.acct, e->node.name);
        const gc_node_class *cls = gc_accountant_node_class(m->o.acct, e->node.name);

        if (rec)
                mirror__node_facts(m, &e->node, rec);
        if (cls && (is_new || e->a != cls->model || e->b != cls->capacity_type ||
                    e->x != cls->price_per_gpu_hour)) {
                mirror__reaccount(m, e->node.name, NULL);
                e->a = cls->model;
                e->b = cls->capacity_type;
                e->x = cls->price_per_gpu_hour;
        }
        m->changes++;
}

/* The node's capacity ends at `end`, and it leaves the table. */
static void mirror__node_gone(gc_mirror *m, const char *name, int64_t end)
{
        gc_account_node_gone(m->o.acct, name, end);
        mirror__named_remove(m, MIRROR_NODES, name);
        m->changes++;
}

int gc_mirror_node(gc_mirror *m, int deleted, const char *name, const gc_node *n, int64_t now)
{
        mirror__named *e;
        size_t idx;
        int r, is_new;

        if (!n) {
                /* Not (or no longer) a GPU node: if it was one, its capacity ends now. */
                const char *pooled = gc_strpool_intern0(m->o.pool, name);

                if (pooled && gc_ptrmap_get(&m->named_map[MIRROR_NODES], pooled, &idx) == 0)
                        mirror__node_gone(m, pooled, now);
                return 0;
        }
        if (deleted) {
                mirror__node_gone(m, n->name, now);
                return 0;
        }
        r = gc_account_node(m->o.acct, n, m->o.diag);
        if (r < 0)
                return r;
        e = mirror__named_get(m, MIRROR_NODES, n->name, &is_new);
        if (!e)
                return -ENOMEM;
        e->gen = m->gen[GC_MIRROR_NODES];
        mirror__node_accounted(m, e, is_new);
        return 0;
}

int gc_mirror_pod(gc_mirror *m, int deleted, const gc_pod *p, int64_t now)
{
        size_t idx;
        int r;

        if (deleted) {
                r = gc_account_pod_gone(m->o.acct, p, now, 0, m->o.diag);
                if (gc_ptrmap_get(&m->pod_map, p->uid, &idx) == 0)
                        mirror__pod_remove(m, idx);
                m->changes++;
                return r < 0 ? r : 0;
        }
        if (gc_ptrmap_get(&m->pod_map, p->uid, &idx) < 0) {
                r = gc_grow((void **)&m->pods, &m->cap_pods, m->n_pods, sizeof(mirror__pod), 64, 0);
                if (r == 0)
                        r = gc_ptrmap_put(&m->pod_map, p->uid, m->n_pods);
                if (r < 0)
                        return r;
                idx = m->n_pods++;
        }
        m->pods[idx].pod = *p;
        m->pods[idx].gen = m->gen[GC_MIRROR_PODS];
        m->changes++;
        r = gc_account_pod(m->o.acct, p, m->o.diag);
        return r < 0 ? r : 0;
}

/* ---- Dynamic Resource Allocation (docs/dra.md) ------------------------------------------------
 */

/*
 * A ResourceSlice changed the GPU devices on `node`: its capacity and class follow. A node the
 * GPU-node table does not hold (it offers no GPU resource, and its slices came after the node
 * decoder saw it) is fetched by listing the nodes again, once per node.
 */
static int mirror__dra_node_changed(gc_mirror *m, const char *node, int64_t now)
{
        mirror__named *e;
        size_t idx;
        int r;

        if (!node)
                return 0;
        if (gc_ptrmap_get(&m->named_map[MIRROR_NODES], node, &idx) == 0) {
                e = &m->named[MIRROR_NODES][idx];
                r = gc_account_node_refresh(m->o.acct, node, m->o.diag);
                if (r == -ENODEV) {
                        /* Its last GPU devices are gone (the driver left, the node drains):
                           its capacity ends now, as when a node is deleted; slices that come
                           back list the node again. */
                        mirror__node_gone(m, node, now);
                        gc_ptrmap_del(&m->dra_asked, node);
                        return 0;
                }
                if (r < 0 && r != -ENOENT)
                        return r;
                mirror__node_accounted(m, e, 0);
                return 0;
        }
        if (!gc_accountant_dra_node(m->o.acct, node) ||
            gc_ptrmap_get(&m->dra_asked, node, &idx) == 0)
                return 0;
        r = gc_ptrmap_put(&m->dra_asked, node, 1);
        if (r < 0)
                return r;
        if (m->o.relist_nodes)
                m->o.relist_nodes(m->o.ud, node);
        return 0;
}

/* The devices in keys ('\n'-separated) that are not in keep are gone from their slice. */
static void mirror__dra_devices_gone(gc_mirror *m, const char *keys, const char *keep)
{
        const char *cur = NULL, *s;
        size_t n;

        while (gc_list_next(keys, '\n', &cur, &s, &n)) {
                const char *key = gc_strpool_intern(m->o.pool, s, n);
                const char *kc = NULL, *ks;
                size_t kn;
                int kept = 0;

                while (!kept && gc_list_next(keep, '\n', &kc, &ks, &kn))
                        kept = kn == n && memcmp(ks, s, n) == 0;
                if (key && !kept)
                        (void)gc_account_dra_device_gone(m->o.acct, key);
        }
}

static void mirror__slice_remove(gc_mirror *m, const char *name, int64_t now)
{
        size_t idx;
        const char *keys, *node;

        if (gc_ptrmap_get(&m->named_map[MIRROR_SLICES], name, &idx) < 0)
                return;
        keys = m->named[MIRROR_SLICES][idx].a;
        node = m->named[MIRROR_SLICES][idx].b;
        mirror__dra_devices_gone(m, keys, NULL);
        mirror__named_remove(m, MIRROR_SLICES, name);
        (void)mirror__dra_node_changed(m, node, now);
        m->changes++;
}

int gc_mirror_slice(gc_mirror *m, int deleted, const char *name, const gc_dra_device *v, size_t n,
                    int64_t now)
{
        const char *keys = NULL, *node = NULL, *old_node = NULL;
        mirror__named *e;
        gc_buf kb;
        int r = 0, is_new;

        name = gc_strpool_intern0(m->o.pool, name);
        if (!name)
                return -ENOMEM;
        if (deleted) {
                mirror__slice_remove(m, name, now);
                return 0;
        }
        gc_buf_init(&kb, 1u << 20);
        for (size_t i = 0; i < n && r >= 0; i++) {
                const gc_dra_device *d = &v[i];

                r = gc_account_dra_device(m->o.acct, d);
                if (r == 0 && d->node)
                        node = gc_strpool_intern0(m->o.pool, d->node);
                if (r == 0)
                        r = gc_buf_printf(&kb, "%s%s/%s/%s", i ? "\n" : "", d->driver, d->pool,
                                          d->name);
        }
        if (r >= 0 && kb.len)
                keys = gc_strpool_intern(m->o.pool, kb.data, kb.len);
        gc_buf_free(&kb);
        if (r < 0)
                return r;
        if (!keys) {
                /* No GPU device (any more): as if deleted. */
                mirror__slice_remove(m, name, now);
                return 0;
        }
        e = mirror__named_get(m, MIRROR_SLICES, name, &is_new);
        if (!e)
                return -ENOMEM;
        if (!is_new) {
                mirror__dra_devices_gone(m, e->a, keys);
                old_node = e->b;
        }
        e->gen = m->gen[GC_MIRROR_SLICES];
        e->a = keys;
        e->b = node;
        if (old_node && old_node != node)
                r = mirror__dra_node_changed(m, old_node, now);
        if (r >= 0)
                r = mirror__dra_node_changed(m, node, now);
        m->changes++;
        return r < 0 ? r : 0;
}

/* "<namespace>/<name>", pooled; NULL when no claim can have it. */
static const char *mirror__ns_name(gc_mirror *m, const char *ns, const char *name)
{
        char key[64 + 1 + 253 + 1];
        int n;

        if (!name)
                return NULL;
        n = snprintf(key, sizeof(key), "%s/%s", ns ? ns : "default", name);
        if (n < 0 || (size_t)n >= sizeof(key))
                return NULL;
        return gc_strpool_intern(m->o.pool, key, (size_t)n);
}

static void mirror__claim_remove(gc_mirror *m, const char *key)
{
        size_t idx;

        if (gc_ptrmap_get(&m->named_map[MIRROR_CLAIMS], key, &idx) < 0)
                return;
        (void)gc_account_claim_gone(m->o.acct, m->named[MIRROR_CLAIMS][idx].a,
                                    m->named[MIRROR_CLAIMS][idx].b);
        mirror__named_remove(m, MIRROR_CLAIMS, key);
}

int gc_mirror_claim(gc_mirror *m, int deleted, const char *ns, const char *name, const gc_claim *cl)
{
        const char *key = mirror__ns_name(m, ns, name);
        mirror__named *e;
        size_t idx;
        int r, is_new;

        if (!key)
                return 0; /* a name no claim can have: the decoder would refuse it too */
        if (deleted) {
                /* Its pods keep what it held: nothing past is re-priced. */
                mirror__claim_remove(m, key);
                return 0;
        }
        /* Not allocated (yet, or any more: released after its pods), or no GPU device: what
           was known of it stays, so its pods' past keeps its devices. */
        if (!cl && gc_ptrmap_get(&m->named_map[MIRROR_CLAIMS], key, &idx) < 0)
                return 0;
        e = mirror__named_get(m, MIRROR_CLAIMS, key, &is_new);
        if (!e)
                return -ENOMEM;
        e->gen = m->gen[GC_MIRROR_CLAIMS];
        if (is_new) {
                e->a = gc_strpool_intern0(m->o.pool, ns);
                e->b = gc_strpool_intern0(m->o.pool, name);
        }
        if (cl) {
                r = gc_account_claim(m->o.acct, cl, m->o.diag);
                if (r < 0)
                        return r;
                m->changes++;
        }
        return 0;
}

int gc_mirror_device_class(gc_mirror *m, int deleted, const char *name, const gc_device_class *dc)
{
        mirror__named *e;
        int is_new;

        if (!dc || deleted) {
                const char *pooled = gc_strpool_intern0(m->o.pool, name);

                if (pooled)
                        mirror__named_remove(m, MIRROR_CLASSES, pooled);
                return 0;
        }
        e = mirror__named_get(m, MIRROR_CLASSES, dc->name, &is_new);
        if (!e)
                return -ENOMEM;
        e->gen = m->gen[GC_MIRROR_CLASSES];
        e->a = dc->device_type;
        e->b = dc->driver;
        return 0;
}

void gc_mirror_dra_classes(const gc_mirror *m, const char **ret_gpu, const char **ret_mig)
{
        const char *gpu = NULL, *mig = NULL;

        for (size_t i = 0; i < m->n_named[MIRROR_CLASSES]; i++) {
                const mirror__named *e = &m->named[MIRROR_CLASSES][i];
                const char *name = e->node.name;

                if (!e->a || !e->b || strcmp(e->b, GC_DRA_NVIDIA_DRIVER) != 0)
                        continue;
                if (strcmp(e->a, "gpu") == 0 && (!gpu || strcmp(name, gpu) < 0))
                        gpu = name;
                if (strcmp(e->a, "mig") == 0 && (!mig || strcmp(name, mig) < 0))
                        mig = name;
        }
        *ret_gpu = gpu;
        *ret_mig = mig;
}

/* ---- workloads (docs/workloads.md) ------------------------------------------------------------
 */

/* 1 when two optional strings differ. */
static int mirror__differ(const char *a, const char *b)
{
        return (a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0);
}

/*
 * An owner new to the table, or whose own owner changed: the intervals of the pods it owns take
 * their workload now (one seen before its ReplicaSet or Job). Only the workload changes: the
 * pod's record may be older than its interval (a relist of owners before one of pods, after a
 * partition), and pricing it again from that record would reopen a pod that has finished. The
 * later pieces of a DRA pod take it at the pod's next event.
 */
static void mirror__owner_changed(gc_mirror *m, const char *uid)
{
        for (size_t i = 0; i < m->n_pods; i++) {
                const gc_pod *p = &m->pods[i].pod;
                const char *wl;
                gc_usage u;

                if (!p->controller_uid || strcmp(p->controller_uid, uid) != 0 ||
                    gc_ledger_get_usage(m->o.ledger, p->uid, &u) < 0)
                        continue;
                wl = gc_workload_of(p, m->o.owners, m->o.pool);
                if (!wl || (u.dims[GC_DIM_WORKLOAD] && strcmp(u.dims[GC_DIM_WORKLOAD], wl) == 0))
                        continue;
                u.dims[GC_DIM_WORKLOAD] = wl;
                if (gc_ledger_put_usage(m->o.ledger, &u) == 0)
                        m->changes++;
        }
}

int gc_mirror_owner(gc_mirror *m, int kind, int deleted, const gc_owner *o, int64_t now)
{
        const char *okind = gc_mirror_owner_kind(kind);
        const gc_owner *prev;
        int r, changed;

        if (!okind || !m->o.owners)
                return -EINVAL;
        if (now - m->owners_expired_at >= 60) {
                (void)gc_owner_expire(m->o.owners, now - GC_MIRROR_OWNER_KEEP_S);
                m->owners_expired_at = now;
        }
        if (deleted) {
                /* Kept, marked gone, for the pods deleted after it. */
                (void)gc_owner_gone(m->o.owners, o->uid, now);
                return 0;
        }
        prev = gc_owner_get(m->o.owners, o->uid);
        changed = !prev || mirror__differ(prev->owner_kind, o->owner_kind) ||
                  mirror__differ(prev->owner_name, o->owner_name);
        r = gc_owner_put(m->o.owners, o, m->gen[kind]);
        if (r == 0 && changed)
                mirror__owner_changed(m, o->uid);
        if (r == -ENOSPC) {
                gc_owner_stats st;

                gc_owner_table_stats(m->o.owners, &st);
                if (st.refused == 1) /* once: the count is in the table */
                        mirror__log(m, GC_MIRROR_LOG_WARN,
                                    "the owner table is full: more pods resolve by the fallbacks",
                                    "kind", okind, NULL, NULL, NULL, NULL);
                return 0;
        }
        if (r == -EINVAL)
                return 0; /* the decoder's bounds are the table's: not reached */
        return r;
}

/* ---- LISTs, restores and blind spans ---------------------------------------------------------
 */

void gc_mirror_list_begin(gc_mirror *m, int kind)
{
        if (kind >= 0 && kind < GC_MIRROR_KINDS)
                m->gen[kind]++;
}

/*
 * What happened in [from, to) the API server no longer holds. Pods that lived and went wholly
 * inside it are unknown; they can only have used GPUs that the ledger shows free on the nodes
 * then, so that idle capacity, priced, bounds what is missing. Said in the reports' notes and
 * the log.
 */
static void mirror__blind_span(gc_mirror *m, int64_t from, int64_t to)
{
        gc_cost_summary sum;
        gc_query q;
        char a[GC_TIME_LEN], b[GC_TIME_LEN], bound[64];
        const char *cur = m->o.currency ? m->o.currency : "USD";

        if (to <= from)
                return;
        memset(&q, 0, sizeof(q));
        memset(&sum, 0, sizeof(sum));
        q.start = from;
        q.end = to;
        q.now = to;
        m->blind_from = from;
        m->blind_to = to;
        m->blind_bound_cost = 0;
        if (gc_ledger_query(m->o.ledger, &q, &sum) == 0)
                m->blind_bound_cost = sum.idle.cost;
        gc_cost_summary_free(&sum);
        gc_time_format(from, a);
        gc_time_format(to, b);
        snprintf(bound, sizeof(bound), "%.2f %s", m->blind_bound_cost, cur);
        gc_diag_add(m->o.diag,
                    "Blind span %s to %s: the API server no longer held the events since the "
                    "last checkpoint, so pods that started and ended within it are not counted; "
                    "they could only have used GPUs free on the nodes then, at most %s.",
                    a, b, bound);
        mirror__log(m, GC_MIRROR_LOG_WARN, "blind span", "from", a, "to", b, "bound", bound);
}

static int mirror__pod_seen(void *ud, const char *uid)
{
        gc_mirror *m = ud;
        size_t idx;

        return gc_ptrmap_get(&m->pod_map, uid, &idx) == 0;
}

static int mirror__node_seen(void *ud, const char *node)
{
        gc_mirror *m = ud;
        size_t idx;

        return gc_ptrmap_get(&m->named_map[MIRROR_NODES], node, &idx) == 0;
}

/* After the first pod LIST following a restore: end open intervals of what is gone. */
static void mirror__close_missing(gc_mirror *m)
{
        size_t count = 0, gone_nodes = 0;
        double gpu_seconds = 0;
        gc_buf note;

        /* Pods that were holding GPUs at the checkpoint and are gone now. */
        if (gc_checkpoint_close_missing(m->o.ledger, mirror__pod_seen, m, m->restored_at, &count,
                                        &gpu_seconds) < 0)
                mirror__log(m, GC_MIRROR_LOG_WARN,
                            "cannot close the intervals of pods deleted meanwhile", NULL, NULL,
                            NULL, NULL, NULL, NULL);
        if (count) {
                gc_buf_init(&note, 4096);
                if (gc_checkpoint_estimate_note(count, gpu_seconds, m->restored_at, &note) == 0) {
                        gc_diag_add(m->o.diag, "%s", note.data);
                        mirror__log(m, GC_MIRROR_LOG_WARN,
                                    "pods deleted while the controller was away", "detail",
                                    note.data, NULL, NULL, NULL, NULL);
                }
                gc_buf_free(&note);
        }
        /* Nodes likewise: capacity restored open, node absent from the first LIST. */
        if (gc_checkpoint_close_missing_nodes(m->o.ledger, mirror__node_seen, m, m->restored_at,
                                              &gone_nodes) < 0)
                mirror__log(m, GC_MIRROR_LOG_WARN,
                            "cannot close the capacity of nodes deleted meanwhile", NULL, NULL,
                            NULL, NULL, NULL, NULL);
        if (gone_nodes)
                gc_diag_add(m->o.diag,
                            "%zu GPU node(s) disappeared while the controller was away; their "
                            "capacity is counted up to the last checkpoint",
                            gone_nodes);
        m->changes++;
}

/* Pods not in the LIST that just completed are gone (see gc_mirror_list_end). */
static void mirror__pods_listed(gc_mirror *m, int64_t now, int64_t expired_since, unsigned flags)
{
        uint32_t gen = m->gen[GC_MIRROR_PODS];
        size_t n_estimates = 0;

        for (size_t i = 0; i < m->n_pods;) {
                if (m->pods[i].gen == gen) {
                        i++;
                        continue;
                }
                if (expired_since > 0) {
                        /* Gone at some moment of the span the API server no longer holds:
                           known to exist until its start, so ended there. */
                        if (gc_account_pod_gone(m->o.acct, &m->pods[i].pod, expired_since, 1,
                                                m->o.diag) > 0)
                                n_estimates++;
                } else {
                        gc_account_pod_gone(m->o.acct, &m->pods[i].pod, now, 0, m->o.diag);
                }
                mirror__pod_remove(m, i);
                m->changes++;
        }
        if (expired_since > 0) {
                char since[GC_TIME_LEN], count[24];

                gc_time_format(expired_since, since);
                snprintf(count, sizeof(count), "%zu", n_estimates);
                if (n_estimates)
                        gc_diag_add(m->o.diag,
                                    "%zu pod(s) holding GPUs were gone after the watch "
                                    "lost events since %s: each is counted up to that "
                                    "moment, an estimate (marked as such), unless the "
                                    "server's replay then gives its real end.",
                                    n_estimates, since);
                mirror__log(m, GC_MIRROR_LOG_WARN,
                            "pods gone during a lost watch: ended where last known", "since", since,
                            "pods", count, NULL, NULL);
                mirror__blind_span(m, expired_since, now);
        }
        /* Resuming from the checkpoint, the watch replays the deletions since; only without a
           resume point (or past it) are they unknown and estimated. */
        if (m->restore_pending &&
            (!(flags & GC_MIRROR_RESUMING) || (flags & GC_MIRROR_RESUME_FAILED))) {
                mirror__close_missing(m);
                if (flags & GC_MIRROR_RESUME_FAILED)
                        mirror__blind_span(m, m->restored_at, now);
                m->restore_pending = 0;
        }
}

static int mirror__table(int kind)
{
        switch (kind) {
        case GC_MIRROR_NAMESPACES:
                return MIRROR_NS;
        case GC_MIRROR_NODES:
                return MIRROR_NODES;
        case GC_MIRROR_SLICES:
                return MIRROR_SLICES;
        case GC_MIRROR_CLASSES:
                return MIRROR_CLASSES;
        default:
                return MIRROR_CLAIMS;
        }
}

int gc_mirror_list_end(gc_mirror *m, int kind, int64_t now, int64_t expired_since, unsigned flags)
{
        uint32_t gen;
        int which;

        if (kind < 0 || kind >= GC_MIRROR_KINDS)
                return -EINVAL;
        gen = m->gen[kind];
        if (kind == GC_MIRROR_PODS) {
                mirror__pods_listed(m, now, expired_since, flags);
                return 0;
        }
        if (gc_mirror_owner_kind(kind)) {
                if (m->o.owners)
                        (void)gc_owner_sweep(m->o.owners, gc_mirror_owner_kind(kind), gen, now);
                return 0;
        }
        /* These hold no intervals to estimate. */
        which = mirror__table(kind);
        for (size_t i = 0; i < m->n_named[which];) {
                const char *name = m->named[which][i].node.name;

                if (m->named[which][i].gen == gen) {
                        i++;
                        continue;
                }
                if (which == MIRROR_SLICES) {
                        mirror__slice_remove(m, name, now);
                } else if (which == MIRROR_CLAIMS) {
                        mirror__claim_remove(m, name);
                } else {
                        if (which == MIRROR_NODES)
                                gc_account_node_gone(m->o.acct, name, now);
                        mirror__named_remove(m, which, name);
                }
                m->changes++;
        }
        return 0;
}

void gc_mirror_restored(gc_mirror *m, int64_t written_at)
{
        m->restored_at = written_at;
        m->restore_pending = 1;
        /* Shares before the checkpoint were priced knowing claims since deleted: final. */
        gc_account_dra_freeze(m->o.acct, written_at);
}

void gc_mirror_replayed(gc_mirror *m)
{
        m->restore_pending = 0;
}

/* ---- readers --------------------------------------------------------------------------------- */

const gc_pod *gc_mirror_pod_get(const gc_mirror *m, const char *uid)
{
        size_t idx;

        if (!uid || gc_ptrmap_get(&m->pod_map, uid, &idx) < 0 || idx >= m->n_pods)
                return NULL;
        return &m->pods[idx].pod;
}

size_t gc_mirror_pods_count(const gc_mirror *m)
{
        return m->n_pods;
}

size_t gc_mirror_nodes_count(const gc_mirror *m)
{
        return m->n_named[MIRROR_NODES];
}

const gc_mirror_node_facts *gc_mirror_node_at(const gc_mirror *m, size_t i)
{
        return i < m->n_named[MIRROR_NODES] ? &m->named[MIRROR_NODES][i].node : NULL;
}

void gc_mirror_blind_span(const gc_mirror *m, int64_t *ret_from, int64_t *ret_to,
                          double *ret_bound_cost)
{
        *ret_from = m->blind_from;
        *ret_to = m->blind_to;
        *ret_bound_cost = m->blind_bound_cost;
}

uint64_t gc_mirror_changes(const gc_mirror *m)
{
        return m->changes;
}

_Static_assert(sizeof(mirror__pod) == 272,
               "mirror__pod changed: mark its strings in gc_mirror_mark");
_Static_assert(sizeof(mirror__named) == 72,
               "mirror__named changed: mark its strings in gc_mirror_mark");

void gc_mirror_mark(gc_mirror *m)
{
        gc_strpool *pool = m->o.pool;

        for (size_t i = 0; i < m->n_pods; i++)
                gc_pod_mark(&m->pods[i].pod, pool);
        gc_ptrmap_mark_keys(&m->pod_map, pool);
        for (int t = 0; t < MIRROR_TABLES; t++) {
                for (size_t i = 0; i < m->n_named[t]; i++) {
                        const mirror__named *e = &m->named[t][i];

                        gc_strpool_mark(pool, e->node.name);
                        gc_strpool_mark(pool, e->a);
                        gc_strpool_mark(pool, e->b);
                        gc_strpool_mark(pool, e->node.instance_type);
                        gc_strpool_mark(pool, e->node.region);
                }
                gc_ptrmap_mark_keys(&m->named_map[t], pool);
        }
        gc_ptrmap_mark_keys(&m->dra_asked, pool);
}
