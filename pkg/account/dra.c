/* account dra: GPU devices of ResourceSlices, the claims holding them, and the pods sharing them.
 */
#include "account.h"
#include "account_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Design (docs/dra.md). A pod with claims is billed, at every moment it holds GPUs (the same
 * interval as a device-plugin pod), its device-plugin part plus, for each claim, the claim's
 * devices divided by the number of pods holding that claim at that moment. When that number
 * changes while the pod runs, the pod's interval is cut into contiguous pieces of constant
 * GPU-equivalents (GC_USAGE_F_PART marks every piece after the first), so the ledger stays a set
 * of constant-rate intervals and every query stays exact.
 */

#define GC__DRA_MAX_POD_CLAIMS 128
#define GC__DRA_PIECE_KEY_MAX  (128 + 16)

void gc__account_dra_free(gc_accountant *a)
{
        for (size_t i = 0; i < a->n_claims; i++)
                free(a->claims[i].holders);
        free(a->claims);
        free(a->devs);
        free(a->dra_pods);
        gc_ptrmap_free(&a->dev_map);
        gc_ptrmap_free(&a->pool_gen);
        gc_ptrmap_free(&a->node_devs);
        gc_ptrmap_free(&a->claim_map);
        gc_ptrmap_free(&a->dra_pod_map);
}

static const char *gc__pool_key(gc_strpool *pool, const char *driver, const char *pool_name)
{
        char key[2 * 254 + 2];
        int n = snprintf(key, sizeof(key), "%s/%s", driver, pool_name);

        if (n < 0 || (size_t)n >= sizeof(key))
                return NULL;
        return gc_strpool_intern(pool, key, (size_t)n);
}

/* A device that its pool's newest generation still publishes. */
static int gc__dev_current(const gc_accountant *a, const gc_dra_device *d)
{
        const char *pk = gc__pool_key(a->pool, d->driver, d->pool);
        size_t gen;

        if (!pk || gc_ptrmap_get(&a->pool_gen, pk, &gen) < 0)
                return 1;
        return (uint64_t)d->generation >= (uint64_t)gen;
}

int gc_account_dra_device(gc_accountant *a, const gc_dra_device *dev)
{
        const char *key, *pk, *node = NULL;
        size_t idx, gen;
        int r;

        if (!a || !dev || !dev->driver || !dev->pool || !dev->name || dev->generation < 0)
                return -EINVAL;
        key = gc_dra_device_key(a->pool, dev->driver, dev->pool, dev->name);
        pk = gc__pool_key(a->pool, dev->driver, dev->pool);
        if (dev->node)
                node = gc_strpool_intern0(a->pool, dev->node);
        if (!key || !pk || (dev->node && !node))
                return -ENOMEM;
        if (gc_ptrmap_get(&a->pool_gen, pk, &gen) < 0 || (uint64_t)dev->generation > gen) {
                r = gc_ptrmap_put(&a->pool_gen, pk, (size_t)dev->generation);
                if (r < 0)
                        return r;
        }
        if (gc_ptrmap_get(&a->dev_map, key, &idx) == 0) {
                gc__dev_slot *s = &a->devs[idx];

                if (dev->generation < s->dev.generation)
                        return 0; /* an older slice's view of it */
                /* A device does not move between nodes: its place in the node's list stays. */
                if (s->dev.node == node) {
                        s->dev = *dev;
                        s->dev.node = node;
                        s->gone = 0;
                        return 0;
                }
                /* It moved (a re-created pool): the old entry stays unreachable by key. */
        }
        r = gc_grow((void **)&a->devs, &a->cap_devs, a->n_devs, sizeof(*a->devs), 16, 0);
        if (r == 0)
                r = gc_ptrmap_put(&a->dev_map, key, a->n_devs);
        if (r < 0)
                return r;
        idx = a->n_devs++;
        a->devs[idx].dev = *dev;
        a->devs[idx].dev.node = node;
        a->devs[idx].next_on_node = SIZE_MAX;
        a->devs[idx].gone = 0;
        if (node) {
                size_t head;

                if (gc_ptrmap_get(&a->node_devs, node, &head) == 0)
                        a->devs[idx].next_on_node = head;
                r = gc_ptrmap_put(&a->node_devs, node, idx);
                if (r < 0)
                        return r;
        }
        return 0;
}

int gc_accountant_dra_node(void *ud, const char *node_name)
{
        const gc_accountant *a = ud;
        const char *node;
        size_t head;

        if (!a || !node_name)
                return 0;
        node = gc_strpool_intern0(a->pool, node_name);
        if (!node || gc_ptrmap_get(&a->node_devs, node, &head) < 0)
                return 0;
        for (size_t i = head; i != SIZE_MAX; i = a->devs[i].next_on_node)
                if (a->devs[i].dev.node == node && !a->devs[i].gone &&
                    gc__dev_current(a, &a->devs[i].dev))
                        return 1;
        return 0;
}

void gc__account_dra_capacity(const gc_accountant *a, const char *node, double *ret_geq,
                              const char **ret_model)
{
        gc_ptrmap seen;
        size_t i, one;
        double geq = 0;

        *ret_geq = 0;
        *ret_model = NULL;
        if (gc_ptrmap_get(&a->node_devs, node, &i) < 0)
                return;
        memset(&seen, 0, sizeof(seen));
        for (; i != SIZE_MAX; i = a->devs[i].next_on_node) {
                const gc_dra_device *d = &a->devs[i].dev;

                if (d->node != node || a->devs[i].gone || !gc__dev_current(a, d))
                        continue;
                if (!*ret_model && d->model)
                        *ret_model = d->model;
                if (d->kind == GC_DRA_CONFIGURED || !d->gpu) {
                        geq += d->geq;
                        continue;
                }
                /* A physical GPU counts once, however many MIG partitions it publishes. */
                if (gc_ptrmap_get(&seen, d->gpu, &one) == 0)
                        continue;
                if (gc_ptrmap_put(&seen, d->gpu, 1) < 0) {
                        geq += 1.0; /* out of memory: the worst is counting a GPU twice */
                        continue;
                }
                geq += 1.0;
        }
        gc_ptrmap_free(&seen);
        *ret_geq = geq;
}

/* The claim slot of "<ns>/<name>", created (unknown) when create is set. */
static int gc__claim_find(gc_accountant *a, const char *ns, const char *name, size_t n, int create,
                          size_t *ret)
{
        char key[64 + 1 + 253 + 1];
        const char *k;
        int len, r;

        len = snprintf(key, sizeof(key), "%s/%.*s", ns ? ns : "default", (int)n, name);
        if (len < 0 || (size_t)len >= sizeof(key))
                return -EINVAL;
        k = gc_strpool_intern(a->pool, key, (size_t)len);
        if (!k)
                return -ENOMEM;
        if (gc_ptrmap_get(&a->claim_map, k, ret) == 0)
                return 0;
        if (!create)
                return -ENOENT;
        r = gc_grow((void **)&a->claims, &a->cap_claims, a->n_claims, sizeof(*a->claims), 16, 0);
        if (r == 0)
                r = gc_ptrmap_put(&a->claim_map, k, a->n_claims);
        if (r < 0)
                return r;
        memset(&a->claims[a->n_claims], 0, sizeof(a->claims[0]));
        a->claims[a->n_claims].key = k;
        *ret = a->n_claims++;
        return 0;
}

/* GPU-equivalents of a claim's devices; *ret_missing counts devices no current slice has. */
static double gc__claim_geq(const gc_accountant *a, const gc__claim_slot *c, int *ret_missing,
                            int *ret_estimate)
{
        const char *cur = NULL, *s;
        double geq = 0;
        size_t n, idx;

        if (!c->known)
                return 0;
        while (gc_list_next(c->claim.devices, '\n', &cur, &s, &n)) {
                const char *key = gc_strpool_intern(a->pool, s, n);

                if (!key || gc_ptrmap_get(&a->dev_map, key, &idx) < 0 ||
                    !gc__dev_current(a, &a->devs[idx].dev)) {
                        (*ret_missing)++;
                        continue;
                }
                geq += a->devs[idx].dev.geq;
                *ret_estimate |= a->devs[idx].dev.estimate;
        }
        return geq;
}

/* How many holders of c hold it at t (a pod holds over [start, end)). */
static size_t gc__holding(const gc_accountant *a, const gc__claim_slot *c, int64_t t)
{
        size_t k = 0;

        for (size_t h = 0; h < c->n_holders; h++) {
                const gc_usage *u = &a->dra_pods[c->holders[h]].base;

                if (u->start <= t && t < u->end)
                        k++;
        }
        return k;
}

static int gc__cmp_i64(const void *x, const void *y)
{
        int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

        return (a > b) - (a < b);
}

/* The claim slots of a DRA pod, into out (at most GC__DRA_MAX_POD_CLAIMS). */
static size_t gc__pod_claim_slots(gc_accountant *a, const gc__dra_pod *p, size_t *out)
{
        const char *cur = NULL, *s;
        size_t n, k = 0, idx;

        while (k < GC__DRA_MAX_POD_CLAIMS && gc_list_next(p->claims, ' ', &cur, &s, &n))
                if (gc__claim_find(a, p->ns, s, n, 0, &idx) == 0)
                        out[k++] = idx;
        return k;
}

/* The key of piece i of a pod: its uid, then "<uid>#dra<i>". */
static const char *gc__piece_key(gc_accountant *a, const char *uid, uint32_t i)
{
        char key[GC__DRA_PIECE_KEY_MAX + 254];
        int n;

        if (i == 0)
                return uid;
        n = snprintf(key, sizeof(key), "%s#dra%u", uid, i);
        if (n < 0 || (size_t)n >= sizeof(key))
                return NULL;
        return gc_strpool_intern(a->pool, key, (size_t)n);
}

/*
 * Re-puts the pieces of DRA pod i. Returns 1 when it holds GPU-equivalents, 0 when it holds
 * none (its pieces are forgotten), or a negative errno.
 */
static int gc__dra_put(gc_accountant *a, size_t i, gc_diag *diag)
{
        size_t slots[GC__DRA_MAX_POD_CLAIMS], ns, npts = 0, npts_u = 0, cap = 2;
        gc__dra_pod *p = &a->dra_pods[i];
        int64_t *pts, start = p->base.start, end = p->base.end;
        double geq[GC__DRA_MAX_POD_CLAIMS], *figs;
        uint32_t parts = 0, old = p->n_parts;
        int missing = 0, estimate = 0, r = 0, any = 0;

        ns = gc__pod_claim_slots(a, p, slots);
        for (size_t c = 0; c < ns; c++) {
                /* A claim never seen holds no GPU device cost counts (not allocated yet,
                 * another driver's, admin access only): it adds nothing. */
                geq[c] = gc__claim_geq(a, &a->claims[slots[c]], &missing, &estimate);
                cap += 2 * a->claims[slots[c]].n_holders;
        }
        if (missing)
                gc_diag_add(diag,
                            "pod %s/%s: %d GPU devices of its claims are in no ResourceSlice "
                            "seen (or only in a superseded pool generation); not billed",
                            p->ns, p->base.dims[GC_DIM_POD] ? p->base.dims[GC_DIM_POD] : "",
                            missing);
        pts = malloc(cap * sizeof(*pts));
        figs = malloc(cap * sizeof(*figs));
        if (!pts || !figs) {
                free(pts);
                free(figs);
                return -ENOMEM;
        }
        /* The moments the number of holders of one of its claims can change. */
        pts[npts++] = start;
        for (size_t c = 0; c < ns; c++) {
                const gc__claim_slot *cl = &a->claims[slots[c]];

                for (size_t h = 0; h < cl->n_holders; h++) {
                        const gc_usage *u = &a->dra_pods[cl->holders[h]].base;

                        if (u->start > start && u->start < end)
                                pts[npts++] = u->start;
                        if (u->end > start && u->end < end)
                                pts[npts++] = u->end;
                }
        }
        qsort(pts, npts, sizeof(*pts), gc__cmp_i64);
        /* Each distinct moment starts a piece, unless its figure equals the one before. */
        for (size_t k = 0; k < npts; k++) {
                double g = p->base.geq;

                if (k > 0 && pts[k] == pts[npts_u - 1])
                        continue;
                for (size_t c = 0; c < ns; c++) {
                        size_t holding = gc__holding(a, &a->claims[slots[c]], pts[k]);

                        g += geq[c] / (double)(holding ? holding : 1);
                }
                if (npts_u > 0 && g == figs[npts_u - 1])
                        continue;
                pts[npts_u] = pts[k];
                figs[npts_u++] = g;
        }
        for (size_t k = 0; k < npts_u && r >= 0; k++) {
                gc_usage u = p->base;

                u.start = pts[k];
                u.end = k + 1 < npts_u ? pts[k + 1] : end;
                u.geq = figs[k];
                if (estimate || missing)
                        u.flags |= GC_USAGE_F_ESTIMATE;
                if (k > 0)
                        u.flags |= GC_USAGE_F_PART;
                u.pod_uid = gc__piece_key(a, p->base.pod_uid, (uint32_t)k);
                if (!u.pod_uid) {
                        r = -ENOMEM;
                        break;
                }
                any |= figs[k] > 0;
                r = gc_ledger_put_usage(a->ledger, &u);
                parts++;
        }
        free(figs);
        free(pts);
        if (r < 0)
                return r;
        if (!any) {
                for (uint32_t k = 0; k < parts; k++)
                        (void)gc_ledger_forget_usage(a->ledger,
                                                     gc__piece_key(a, p->base.pod_uid, k));
                parts = 0;
        }
        for (uint32_t k = parts; k < old; k++) {
                const char *key = gc__piece_key(a, p->base.pod_uid, k);

                if (key)
                        (void)gc_ledger_forget_usage(a->ledger, key);
        }
        p->n_parts = parts;
        return any;
}

/*
 * A pod this accountant has not priced (or priced this way before), whose pieces the ledger
 * holds already (restored from a checkpoint), and one of whose claims it has never seen (deleted
 * while the controller was away: a generated claim goes with its pod). Its GPU-equivalents cannot
 * be known again, so the pieces as written keep their figures and only end where the pod ended.
 * Returns 1 when it did so, 0 when the ledger holds nothing of the pod.
 */
static int gc__dra_restored(gc_accountant *a, gc__dra_pod *p, gc_diag *diag)
{
        int64_t end = p->base.end;
        uint32_t k;
        int any = 0;

        for (k = 0; k < 1u << 16; k++) {
                const char *key = gc__piece_key(a, p->base.pod_uid, k);
                gc_usage u;

                if (!key)
                        return -ENOMEM;
                if (gc_ledger_get_usage(a->ledger, key, &u) < 0)
                        break;
                if (u.start >= end) {
                        (void)gc_ledger_forget_usage(a->ledger, key);
                        continue;
                }
                if (u.end > end) {
                        int r;

                        u.end = end;
                        r = gc_ledger_put_usage(a->ledger, &u);
                        if (r < 0)
                                return r;
                }
                any |= u.geq > 0;
        }
        if (k == 0)
                return 0;
        p->n_parts = k;
        p->restored = 1;
        gc_diag_add(diag,
                    "pod %s/%s: a claim of it is gone from the API; its GPU-equivalents are the "
                    "ones recorded before, ended where the pod ended",
                    p->ns, p->base.dims[GC_DIM_POD] ? p->base.dims[GC_DIM_POD] : "");
        return any;
}

/* 1 when one of the pod's claims was never seen (named only). */
static int gc__dra_unknown_claim(gc_accountant *a, const gc__dra_pod *p)
{
        const char *cur = NULL, *s;
        size_t n, idx;

        while (gc_list_next(p->claims, ' ', &cur, &s, &n))
                if (gc__claim_find(a, p->ns, s, n, 0, &idx) < 0 || !a->claims[idx].known)
                        return 1;
        return 0;
}

int gc__account_dra_pod(gc_accountant *a, const gc_pod *pod, const gc_usage *u, int gone,
                        gc_diag *diag)
{
        const char *uid, *cur = NULL, *s;
        size_t idx, n, slots[GC__DRA_MAX_POD_CLAIMS], ns;
        gc__dra_pod *p;
        int r, fresh = 0;

        uid = gc_strpool_intern0(a->pool, u->pod_uid);
        if (!uid)
                return -ENOMEM;
        if (gc_ptrmap_get(&a->dra_pod_map, uid, &idx) < 0) {
                r = gc_grow((void **)&a->dra_pods, &a->cap_dra_pods, a->n_dra_pods,
                            sizeof(*a->dra_pods), 16, 0);
                if (r == 0)
                        r = gc_ptrmap_put(&a->dra_pod_map, uid, a->n_dra_pods);
                if (r < 0)
                        return r;
                idx = a->n_dra_pods++;
                memset(&a->dra_pods[idx], 0, sizeof(a->dra_pods[idx]));
                fresh = 1;
        }
        p = &a->dra_pods[idx];
        p->base = *u;
        p->base.pod_uid = uid;
        p->claims = pod->claims;
        p->ns = pod->ns ? pod->ns : "default";
        p->gone = gone;
        /* Register it as a holder of each of its claims (once). */
        while (gc_list_next(pod->claims, ' ', &cur, &s, &n)) {
                gc__claim_slot *c;
                int held = 0;

                r = gc__claim_find(a, p->ns, s, n, 1, &ns);
                if (r < 0)
                        return r;
                c = &a->claims[ns];
                for (size_t h = 0; h < c->n_holders; h++)
                        held |= c->holders[h] == idx;
                if (held)
                        continue;
                if (gc_grow((void **)&c->holders, &c->cap_holders, c->n_holders,
                            sizeof(*c->holders), 2, 0) < 0)
                        return -ENOMEM;
                c->holders[c->n_holders++] = idx;
        }
        /* Every event of such a pod, not only its first: a later one must not price the
           unseen claim at nothing and erase what the checkpoint held. */
        if ((fresh || p->restored) && gc__dra_unknown_claim(a, &a->dra_pods[idx])) {
                r = gc__dra_restored(a, &a->dra_pods[idx], diag);
                if (r != 0)
                        return r;
        }
        /* Its own pieces, then those of every pod sharing a claim with it. */
        r = gc__dra_put(a, idx, diag);
        if (r < 0)
                return r;
        ns = gc__pod_claim_slots(a, &a->dra_pods[idx], slots);
        for (size_t c = 0; c < ns; c++) {
                const gc__claim_slot *cl = &a->claims[slots[c]];

                for (size_t h = 0; h < cl->n_holders; h++) {
                        int q;

                        if (cl->holders[h] == idx)
                                continue;
                        q = gc__dra_put(a, cl->holders[h], diag);
                        if (q < 0)
                                return q;
                }
        }
        return r;
}

int gc_account_claim(gc_accountant *a, const gc_claim *claim, gc_diag *diag)
{
        gc__claim_slot *c;
        size_t idx;
        int r;

        if (!a || !claim || !claim->name || !claim->devices)
                return -EINVAL;
        r = gc__claim_find(a, claim->ns, claim->name, strlen(claim->name), 1, &idx);
        if (r < 0)
                return r;
        c = &a->claims[idx];
        c->claim = *claim;
        c->claim.devices = gc_strpool_intern0(a->pool, claim->devices);
        if (!c->claim.devices)
                return -ENOMEM;
        c->known = 1;
        /* Pods that named it before it was seen are priced again. */
        for (size_t h = 0; h < c->n_holders; h++) {
                r = gc__dra_put(a, a->claims[idx].holders[h], diag);
                if (r < 0)
                        return r;
        }
        return 0;
}

int gc_account_dra_device_gone(gc_accountant *a, const char *device_key)
{
        const char *key;
        size_t idx;

        if (!a || !device_key)
                return -EINVAL;
        key = gc_strpool_intern0(a->pool, device_key);
        if (!key)
                return -ENOMEM;
        if (gc_ptrmap_get(&a->dev_map, key, &idx) < 0)
                return -ENOENT;
        a->devs[idx].gone = 1;
        return 0;
}

size_t gc_account_pod_claim_devices(gc_accountant *a, const gc_pod *pod)
{
        const char *cur = NULL, *s;
        size_t n, idx, k = 0;

        if (!a || !pod)
                return 0;
        while (gc_list_next(pod->claims, ' ', &cur, &s, &n))
                if (gc__claim_find(a, pod->ns ? pod->ns : "default", s, n, 0, &idx) == 0 &&
                    a->claims[idx].known)
                        k += a->claims[idx].claim.n_devices;
        return k;
}

int gc_account_claim_gone(gc_accountant *a, const char *ns, const char *name)
{
        size_t idx;
        int r;

        if (!a || !name)
                return -EINVAL;
        r = gc__claim_find(a, ns, name, strlen(name), 0, &idx);
        if (r < 0)
                return r;
        a->claims[idx].gone = 1;
        return 0;
}

void gc_account_dra_stats(const gc_accountant *a, gc_account_dra_counts *ret)
{
        memset(ret, 0, sizeof(*ret));
        if (!a)
                return;
        ret->devices = a->n_devs;
        ret->claims = a->n_claims;
        ret->pods = a->n_dra_pods;
        for (size_t i = 0; i < a->n_claims; i++)
                ret->holders += a->claims[i].n_holders;
}

/* A pod that may be forgotten: gone from the API and ended before `before`. */
static int gc__dra_candidate(const gc__dra_pod *p, int64_t before)
{
        return p->gone && p->base.end != GC_OPEN && p->base.end < before;
}

/*
 * Which pods to keep (keep[i] = 1): every pod that is not a candidate, and every candidate that
 * overlaps, on a shared claim, a pod kept (re-putting the kept pod counts the holders over its
 * interval, so whoever held with it then must stay), to a fixed point.
 */
static void gc__dra_keep(const gc_accountant *a, int64_t before, unsigned char *keep)
{
        int changed = 1;

        for (size_t i = 0; i < a->n_dra_pods; i++)
                keep[i] = !gc__dra_candidate(&a->dra_pods[i], before);
        while (changed) {
                changed = 0;
                for (size_t c = 0; c < a->n_claims; c++) {
                        const gc__claim_slot *cl = &a->claims[c];

                        for (size_t h = 0; h < cl->n_holders; h++) {
                                const gc_usage *q = &a->dra_pods[cl->holders[h]].base;

                                if (!keep[cl->holders[h]])
                                        continue;
                                for (size_t o = 0; o < cl->n_holders; o++) {
                                        const gc_usage *p = &a->dra_pods[cl->holders[o]].base;

                                        if (keep[cl->holders[o]] || p->end <= q->start ||
                                            q->end <= p->start)
                                                continue;
                                        keep[cl->holders[o]] = 1;
                                        changed = 1;
                                }
                        }
                }
        }
}

/* Drops the devices of deleted slices no claim kept names, and entries superseded by a move. */
static int gc__dra_forget_devices(gc_accountant *a)
{
        gc_ptrmap named;
        size_t k = 0;
        int r = 0;

        memset(&named, 0, sizeof(named));
        for (size_t c = 0; c < a->n_claims && r == 0; c++) {
                const char *cur = NULL, *s;
                size_t n;

                if (!a->claims[c].known)
                        continue;
                while (r == 0 && gc_list_next(a->claims[c].claim.devices, '\n', &cur, &s, &n)) {
                        const char *key = gc_strpool_intern(a->pool, s, n);

                        r = key ? gc_ptrmap_put(&named, key, 1) : -ENOMEM;
                }
        }
        if (r < 0) {
                gc_ptrmap_free(&named);
                return r; /* nothing dropped */
        }
        gc_ptrmap_free(&a->node_devs);
        for (size_t i = 0; i < a->n_devs; i++) {
                gc__dev_slot d = a->devs[i];
                const char *key = gc_dra_device_key(a->pool, d.dev.driver, d.dev.pool, d.dev.name);
                size_t at, one, head;

                if (!key || gc_ptrmap_get(&a->dev_map, key, &at) < 0 || at != i)
                        continue; /* superseded by the entry of a moved device */
                if (d.gone && gc_ptrmap_get(&named, key, &one) < 0) {
                        gc_ptrmap_del(&a->dev_map, key);
                        continue;
                }
                d.next_on_node = SIZE_MAX;
                if (d.dev.node && gc_ptrmap_get(&a->node_devs, d.dev.node, &head) == 0)
                        d.next_on_node = head;
                a->devs[k] = d;
                /* Puts of a key already present replace its value: no allocation fails here
                   that did not fail when the maps were built. */
                if (gc_ptrmap_put(&a->dev_map, key, k) < 0 ||
                    (d.dev.node && gc_ptrmap_put(&a->node_devs, d.dev.node, k) < 0))
                        r = -ENOMEM;
                k++;
        }
        a->n_devs = k;
        gc_ptrmap_free(&named);
        return r;
}

long gc_account_dra_forget(gc_accountant *a, int64_t before)
{
        unsigned char *keep;
        size_t *to, k = 0, kc = 0;
        long dropped;
        int r = 0;

        if (!a)
                return -EINVAL;
        keep = calloc(a->n_dra_pods + 1, 1);
        to = malloc((a->n_dra_pods + 1) * sizeof(*to));
        if (!keep || !to) {
                free(keep);
                free(to);
                return -ENOMEM;
        }
        gc__dra_keep(a, before, keep);
        for (size_t i = 0; i < a->n_dra_pods; i++) {
                if (!keep[i]) {
                        to[i] = SIZE_MAX;
                        gc_ptrmap_del(&a->dra_pod_map, a->dra_pods[i].base.pod_uid);
                        continue;
                }
                to[i] = k;
                a->dra_pods[k] = a->dra_pods[i];
                if (gc_ptrmap_put(&a->dra_pod_map, a->dra_pods[k].base.pod_uid, k) < 0)
                        r = -ENOMEM;
                k++;
        }
        dropped = (long)(a->n_dra_pods - k);
        a->n_dra_pods = k;
        for (size_t c = 0; c < a->n_claims; c++) {
                gc__claim_slot cl = a->claims[c];
                size_t kh = 0;

                for (size_t h = 0; h < cl.n_holders; h++)
                        if (to[cl.holders[h]] != SIZE_MAX)
                                cl.holders[kh++] = to[cl.holders[h]];
                cl.n_holders = kh;
                /* A claim no pod holds goes once it is deleted, or if it was only ever named. */
                if (kh == 0 && (cl.gone || !cl.known)) {
                        gc_ptrmap_del(&a->claim_map, cl.key);
                        free(cl.holders);
                        continue;
                }
                a->claims[kc] = cl;
                if (gc_ptrmap_put(&a->claim_map, cl.key, kc) < 0)
                        r = -ENOMEM;
                kc++;
        }
        a->n_claims = kc;
        free(keep);
        free(to);
        if (r == 0)
                r = gc__dra_forget_devices(a);
        return r < 0 ? r : dropped;
}
