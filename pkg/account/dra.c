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
        for (size_t i = 0; i < a->n_claims; i++) {
                free(a->claims[i].holders);
                gc_claim_release(&a->claims[i].claim);
        }
        for (size_t i = 0; i < a->n_shares; i++)
                free(a->shares[i].refs);
        free(a->shares);
        gc_ptrmap_free(&a->share_map);
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

void gc__account_dra_keep_only(gc_accountant *a, const char *node, const char *driver,
                               const gc_dra_device *keep, size_t n)
{
        size_t i;

        if (gc_ptrmap_get(&a->node_devs, node, &i) < 0)
                return;
        for (; i != SIZE_MAX; i = a->devs[i].next_on_node) {
                const gc_dra_device *d = &a->devs[i].dev;
                int kept = 0;

                if (d->node != node || strcmp(d->driver, driver) != 0)
                        continue;
                for (size_t k = 0; k < n && !kept; k++)
                        kept = strcmp(keep[k].name, d->name) == 0;
                if (!kept)
                        a->devs[i].gone = 1;
        }
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

/* ---- shared devices: who holds a share (docs/dra.md, "Shared devices") ---------------------- */

/* The current device slot of a key, or NULL (no slice seen, or only a superseded one). */
static const gc__dev_slot *gc__dev_of(const gc_accountant *a, const char *key)
{
        size_t idx;

        if (!key || gc_ptrmap_get(&a->dev_map, key, &idx) < 0 ||
            !gc__dev_current(a, &a->devs[idx].dev))
                return NULL;
        return &a->devs[idx];
}

static const gc__share_slot *gc__share_of(const gc_accountant *a, const char *key)
{
        size_t idx;

        return gc_ptrmap_get(&a->share_map, key, &idx) == 0 ? &a->shares[idx] : NULL;
}

static int gc__share_add(gc_accountant *a, const char *key, size_t claim, size_t res)
{
        gc__share_slot *sl;
        size_t idx;
        int r;

        if (gc_ptrmap_get(&a->share_map, key, &idx) < 0) {
                r = gc_grow((void **)&a->shares, &a->cap_shares, a->n_shares, sizeof(*a->shares),
                            16, 0);
                if (r == 0)
                        r = gc_ptrmap_put(&a->share_map, key, a->n_shares);
                if (r < 0)
                        return r;
                idx = a->n_shares++;
                memset(&a->shares[idx], 0, sizeof(a->shares[idx]));
                a->shares[idx].key = key;
        }
        sl = &a->shares[idx];
        r = gc_grow((void **)&sl->refs, &sl->cap_refs, sl->n_refs, sizeof(*sl->refs), 2, 0);
        if (r < 0)
                return r;
        sl->refs[sl->n_refs++] = (gc__share_ref){claim, res};
        return 0;
}

/* Removes the claim's allocations from the devices they name. */
static void gc__share_drop_claim(gc_accountant *a, size_t claim)
{
        const gc_claim *cl = &a->claims[claim].claim;
        size_t idx;

        for (size_t k = 0; k < cl->n_devices; k++) {
                gc__share_slot *sl;
                size_t keep = 0;

                if (gc_ptrmap_get(&a->share_map, cl->devices[k].key, &idx) < 0)
                        continue;
                sl = &a->shares[idx];
                for (size_t i = 0; i < sl->n_refs; i++)
                        if (sl->refs[i].claim != claim)
                                sl->refs[keep++] = sl->refs[i];
                sl->n_refs = keep;
        }
}

static int gc__share_add_claim(gc_accountant *a, size_t claim)
{
        const gc_claim *cl = &a->claims[claim].claim;
        int r = 0;

        for (size_t k = 0; k < cl->n_devices && r == 0; k++)
                r = gc__share_add(a, cl->devices[k].key, claim, k);
        return r;
}

/* The index again from the claims (their indices moved: gc_account_dra_forget). */
static int gc__share_rebuild(gc_accountant *a)
{
        int r = 0;

        for (size_t i = 0; i < a->n_shares; i++)
                free(a->shares[i].refs);
        a->n_shares = 0;
        gc_ptrmap_free(&a->share_map);
        for (size_t c = 0; c < a->n_claims && r == 0; c++)
                if (a->claims[c].known)
                        r = gc__share_add_claim(a, c);
        return r;
}

/*
 * What one allocation takes of a shared device, before scaling: the largest fraction of any of
 * the device's capacities it consumed (0 when it consumed none of them).
 */
static double gc__share_taken(const gc_dra_device *d, const gc_claim_device *cd)
{
        double m = 0;

        for (size_t k = 0; k < cd->n_used; k++)
                for (size_t c = 0; c < d->n_caps; c++) {
                        double f;

                        if (cd->used[k].name != d->caps[c].name || d->caps[c].value <= 0)
                                continue;
                        f = cd->used[k].value / d->caps[c].value;
                        if (f > m)
                                m = f > 1.0 ? 1.0 : f;
                }
        return m;
}

/*
 * The share of shared device d that allocation (claim, res) holds at t, among the allocations
 * of d whose claims are held then (docs/dra.md): m / max(1, M) for one that took m > 0, where M
 * is the sum of what those took; what is left, 1 - min(1, M), split equally among those that
 * took none (the driver's "unlimited" mode). So at every moment the holders' shares and the
 * idle rest add up to exactly one device.
 */
static double gc__share_at(const gc_accountant *a, const gc_dra_device *d, const char *key,
                           size_t claim, size_t res, int64_t t)
{
        const gc__share_slot *sl = gc__share_of(a, key);
        double own = gc__share_taken(d, &a->claims[claim].claim.devices[res]), sum = 0;
        size_t zero = 0;

        for (size_t i = 0; sl && i < sl->n_refs; i++) {
                const gc__claim_slot *c = &a->claims[sl->refs[i].claim];
                double m;

                if (!c->known || sl->refs[i].res >= c->claim.n_devices || !gc__holding(a, c, t))
                        continue;
                m = gc__share_taken(d, &c->claim.devices[sl->refs[i].res]);
                if (m > 0)
                        sum += m;
                else
                        zero++;
        }
        if (own > 0)
                return own / (sum > 1.0 ? sum : 1.0);
        return sum >= 1.0 || zero == 0 ? 0 : (1.0 - sum) / (double)zero;
}

/* GPU-equivalents a claim's devices give its holders together at t (before the split among
 * them); *ret_missing counts devices no current slice has. */
static double gc__claim_geq(const gc_accountant *a, size_t claim, int64_t t, int *ret_missing,
                            int *ret_estimate)
{
        const gc__claim_slot *c = &a->claims[claim];
        double geq = 0;

        if (!c->known)
                return 0;
        for (size_t k = 0; k < c->claim.n_devices; k++) {
                const gc__dev_slot *ds = gc__dev_of(a, c->claim.devices[k].key);

                if (!ds) {
                        (*ret_missing)++;
                        continue;
                }
                if (ds->dev.shared)
                        geq += ds->dev.geq *
                               gc__share_at(a, &ds->dev, c->claim.devices[k].key, claim, k, t);
                else
                        geq += ds->dev.geq;
                *ret_estimate |= ds->dev.estimate;
        }
        return geq;
}

/*
 * The pods whose figures depend on claim c (its holders) and on the claims sharing a shared
 * device with it (theirs), each passed to fn once per call site (duplicates are harmless).
 */
static int gc__claim_dependents(const gc_accountant *a, size_t claim,
                                int (*fn)(void *ud, size_t pod), void *ud)
{
        const gc__claim_slot *c = &a->claims[claim];
        int r = 0;

        for (size_t h = 0; h < c->n_holders && r >= 0; h++)
                r = fn(ud, c->holders[h]);
        for (size_t k = 0; c->known && k < c->claim.n_devices && r >= 0; k++) {
                const gc__dev_slot *ds = gc__dev_of(a, c->claim.devices[k].key);
                const gc__share_slot *sl;

                if (!ds || !ds->dev.shared || !(sl = gc__share_of(a, c->claim.devices[k].key)))
                        continue;
                for (size_t i = 0; i < sl->n_refs && r >= 0; i++) {
                        const gc__claim_slot *o = &a->claims[sl->refs[i].claim];

                        if (sl->refs[i].claim == claim)
                                continue;
                        for (size_t h = 0; h < o->n_holders && r >= 0; h++)
                                r = fn(ud, o->holders[h]);
                }
        }
        return r;
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
const char *gc__account_piece_key(gc_accountant *a, const char *uid, uint32_t i)
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

/* The moments within (start, end) at which a dependent's holding starts or stops. */
typedef struct gc__moments {
        const gc_accountant *a;
        int64_t start, end;
        int64_t *v;
        size_t n, cap;
} gc__moments;

static int gc__moment_push(gc__moments *m, int64_t t)
{
        int r = gc_grow((void **)&m->v, &m->cap, m->n, sizeof(*m->v), 16, 1u << 24);

        if (r == 0)
                m->v[m->n++] = t;
        return r;
}

static int gc__moment_add(gc__moments *m, int64_t t)
{
        return t <= m->start || t >= m->end ? 0 : gc__moment_push(m, t);
}

static int gc__moments_of(void *ud, size_t pod)
{
        gc__moments *m = ud;
        const gc_usage *u = &m->a->dra_pods[pod].base;
        int r = gc__moment_add(m, u->start);

        return r < 0 ? r : gc__moment_add(m, u->end);
}

/* Leading pieces missing from the ledger (folded: closed books) a prefix scan looks past. */
#define GC__DRA_FOLDED_MAX 4096

/* What of a pod's pieces stays before the moment its figures are computed again from. */
typedef struct gc__prefix {
        uint32_t keep; /* the recomputed pieces are numbered from here (0: none kept) */
        uint32_t seen; /* pieces the ledger held (indices below it) */
        int64_t from;  /* the recomputed pieces start here */
        gc_usage last; /* the last piece kept, when keep > 0 and it is in the ledger */
        int have_last;
} gc__prefix;

/*
 * The pieces of pod p that start before `frozen` stay as the ledger holds them (their figures
 * are final: what the accountant knew then may be gone, such as a co-holder's claim deleted
 * before a restart); the one that spans `frozen` ends there, and none runs past the pod's end.
 * Pieces missing at the front were folded (closed books). With no piece in the ledger at all
 * everything is computed again from the pod's start.
 */
static int gc__dra_prefix(gc_accountant *a, gc__dra_pod *p, int64_t frozen, gc__prefix *ret)
{
        int64_t end = p->base.end;
        uint32_t misses = 0;
        int present = 0;

        memset(ret, 0, sizeof(*ret));
        ret->from = p->base.start;
        ret->seen = p->n_parts;
        for (uint32_t k = 0; k < 1u << 16; k++) {
                const char *key = gc__account_piece_key(a, p->base.pod_uid, k);
                gc_usage u;
                int r;

                if (!key)
                        return -ENOMEM;
                if (gc_ledger_get_usage(a->ledger, key, &u) < 0) {
                        if (present || ++misses > GC__DRA_FOLDED_MAX)
                                break;
                        continue;
                }
                present = 1;
                if (k + 1 > ret->seen)
                        ret->seen = k + 1;
                if (u.start >= frozen) {
                        if (ret->keep == 0 && k > 0) {
                                /* Only folded pieces before it: they cover up to its start. */
                                ret->keep = k;
                                ret->from = u.start;
                        }
                        continue;
                }
                if (u.end > frozen || u.end > end) {
                        u.end = frozen < end ? frozen : end;
                        if (u.end <= u.start) {
                                (void)gc_ledger_forget_usage(a->ledger, key);
                                continue;
                        }
                        r = gc_ledger_put_usage(a->ledger, &u);
                        if (r < 0)
                                return r;
                }
                ret->keep = k + 1;
                ret->from = frozen;
                ret->last = u;
                ret->have_last = 1;
        }
        if (ret->keep == 0)
                ret->from = p->base.start;
        return 0;
}

/*
 * Re-puts the pieces of DRA pod i (those before the accountant's frozen moment stay: they are
 * final). Returns 1 when it holds GPU-equivalents, 0 when it holds none (its pieces are
 * forgotten), or a negative errno.
 */
static int gc__dra_put(gc_accountant *a, size_t i, gc_diag *diag)
{
        size_t slots[GC__DRA_MAX_POD_CLAIMS], ns, npts_u = 0;
        gc__dra_pod *p = &a->dra_pods[i];
        int64_t start, end = p->base.end;
        gc__moments m = {a, 0, end, NULL, 0, 0};
        gc__prefix pre;
        double *figs = NULL;
        int64_t *pts;
        uint32_t parts, old, base;
        int missing = 0, estimate = 0, r = 0, any = 0;

        memset(&pre, 0, sizeof(pre));
        pre.from = p->base.start;
        pre.seen = p->n_parts;
        if (a->frozen > p->base.start) {
                r = gc__dra_prefix(a, p, a->frozen, &pre);
                if (r < 0)
                        return r;
        }
        start = pre.from;
        m.start = start;
        old = pre.seen;
        parts = pre.keep;
        any = pre.have_last && pre.last.geq > 0;
        if (start >= end) {
                /* All of it is final. */
                for (uint32_t k = parts; k < old; k++)
                        (void)gc_ledger_forget_usage(a->ledger,
                                                     gc__account_piece_key(a, p->base.pod_uid, k));
                p->n_parts = parts;
                return parts > 0;
        }

        ns = gc__pod_claim_slots(a, p, slots);
        /* A claim never seen holds no GPU device cost counts (not allocated yet, another
         * driver's, admin access only): it adds nothing. */
        for (size_t c = 0; c < ns; c++)
                (void)gc__claim_geq(a, slots[c], start, &missing, &estimate);
        if (missing)
                gc_diag_add(diag,
                            "pod %s/%s: %d GPU devices of its claims are in no ResourceSlice "
                            "seen (or only in a superseded pool generation); not billed",
                            p->ns, p->base.dims[GC_DIM_POD] ? p->base.dims[GC_DIM_POD] : "",
                            missing);
        /* The moments the holders of one of its claims, or of a device share, can change. */
        r = gc__moment_push(&m, start);
        for (size_t c = 0; c < ns && r >= 0; c++)
                r = gc__claim_dependents(a, slots[c], gc__moments_of, &m);
        if (r >= 0)
                figs = malloc(m.n * sizeof(*figs));
        if (r < 0 || !figs) {
                free(m.v);
                free(figs);
                return r < 0 ? r : -ENOMEM;
        }
        pts = m.v;
        qsort(pts, m.n, sizeof(*pts), gc__cmp_i64);
        /* Each distinct moment starts a piece, unless its figure equals the one before. */
        for (size_t k = 0; k < m.n; k++) {
                double g = p->base.geq;

                if (k > 0 && pts[k] == pts[npts_u - 1])
                        continue;
                for (size_t c = 0; c < ns; c++) {
                        size_t holding = gc__holding(a, &a->claims[slots[c]], pts[k]);
                        int ignored = 0;

                        g += gc__claim_geq(a, slots[c], pts[k], &ignored, &ignored) /
                             (double)(holding ? holding : 1);
                }
                if (npts_u > 0 && g == figs[npts_u - 1])
                        continue;
                pts[npts_u] = pts[k];
                figs[npts_u++] = g;
        }
        /* The first recomputed piece goes on the last one kept when their figures agree, so
           a frozen moment cuts no piece in two. */
        base = parts;
        if (pre.have_last && npts_u > 0 && pre.last.end == pts[0] && pre.last.geq == figs[0]) {
                pts[0] = pre.last.start;
                base = parts - 1;
        }
        parts = base;
        for (size_t k = 0; k < npts_u && r >= 0; k++) {
                gc_usage u = p->base;
                uint32_t idx = base + (uint32_t)k;

                u.start = pts[k];
                u.end = k + 1 < npts_u ? pts[k + 1] : end;
                u.geq = figs[k];
                if (estimate || missing)
                        u.flags |= GC_USAGE_F_ESTIMATE;
                if (idx > 0)
                        u.flags |= GC_USAGE_F_PART;
                u.pod_uid = gc__account_piece_key(a, p->base.pod_uid, idx);
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
                                                     gc__account_piece_key(a, p->base.pod_uid, k));
                parts = 0;
        }
        for (uint32_t k = parts; k < old; k++) {
                const char *key = gc__account_piece_key(a, p->base.pod_uid, k);

                if (key)
                        (void)gc_ledger_forget_usage(a->ledger, key);
        }
        p->n_parts = parts;
        return any;
}

typedef struct gc__pods {
        size_t *v;
        size_t n, cap;
} gc__pods;

static int gc__pods_add(void *ud, size_t pod)
{
        gc__pods *ps = ud;
        int r = gc_grow((void **)&ps->v, &ps->cap, ps->n, sizeof(*ps->v), 16, 1u << 24);

        if (r == 0)
                ps->v[ps->n++] = pod;
        return r;
}

static int gc__cmp_size(const void *x, const void *y)
{
        size_t a = *(const size_t *)x, b = *(const size_t *)y;

        return (a > b) - (a < b);
}

/* Re-puts, once each, the pods of ps and those that depend on the claims slots[0..ns), but
 * `skip`; frees ps. */
static int gc__put_dependents(gc_accountant *a, gc__pods *ps, const size_t *slots, size_t ns,
                              size_t skip, gc_diag *diag)
{
        int r = 0;

        for (size_t c = 0; c < ns && r >= 0; c++)
                r = gc__claim_dependents(a, slots[c], gc__pods_add, ps);
        if (r >= 0 && ps->n)
                qsort(ps->v, ps->n, sizeof(*ps->v), gc__cmp_size);
        for (size_t k = 0; k < ps->n && r >= 0; k++) {
                if (ps->v[k] == skip || (k > 0 && ps->v[k] == ps->v[k - 1]))
                        continue;
                r = gc__dra_put(a, ps->v[k], diag);
        }
        free(ps->v);
        *ps = (gc__pods){NULL, 0, 0};
        return r < 0 ? r : 0;
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
                const char *key = gc__account_piece_key(a, p->base.pod_uid, k);
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
        int r, q, fresh = 0;

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
        /* Its own pieces, then those of every pod sharing a claim or a device with it. */
        r = gc__dra_put(a, idx, diag);
        if (r < 0)
                return r;
        ns = gc__pod_claim_slots(a, &a->dra_pods[idx], slots);
        q = gc__put_dependents(a, &(gc__pods){NULL, 0, 0}, slots, ns, idx, diag);
        return q < 0 ? q : r;
}

int gc_account_claim(gc_accountant *a, const gc_claim *claim, gc_diag *diag)
{
        gc__pods before = {NULL, 0, 0};
        gc__claim_slot *c;
        gc_claim copy;
        size_t idx;
        int r;

        if (!a || !claim || !claim->name || !claim->n_devices || !claim->devices)
                return -EINVAL;
        r = gc__claim_find(a, claim->ns, claim->name, strlen(claim->name), 1, &idx);
        if (r == 0)
                r = gc_claim_copy(&copy, claim);
        if (r < 0)
                return r;
        c = &a->claims[idx];
        /* The pods that depended on what it held before (sharing a device it leaves)... */
        if (c->known) {
                r = gc__claim_dependents(a, idx, gc__pods_add, &before);
                gc__share_drop_claim(a, idx);
        }
        gc_claim_release(&c->claim);
        c->claim = copy;
        c->known = 1;
        if (r >= 0)
                r = gc__share_add_claim(a, idx);
        if (r < 0) {
                free(before.v);
                return r;
        }
        /* ... and on what it holds now: pods that named it before it was seen, and the pods
         * sharing a device with it, are priced again. */
        return gc__put_dependents(a, &before, &idx, 1, SIZE_MAX, diag);
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

size_t gc_account_shared_gpus(const gc_accountant *a, gc_account_shared_gpu *out, size_t max)
{
        size_t n = 0;

        for (size_t i = 0; a && out && i < a->n_devs; i++) {
                const gc_dra_device *d = &a->devs[i].dev;
                gc_account_shared_gpu g;
                int dup = 0;

                if (!d->shared || a->devs[i].gone || !gc__dev_current(a, d))
                        continue;
                memset(&g, 0, sizeof(g));
                g.driver = d->driver;
                g.model = d->model;
                for (size_t k = 0; k < d->n_caps; k++) {
                        if (strcmp(d->caps[k].name, "memory") == 0)
                                /* HAMi registers MiB; the API's capacities are bytes. */
                                g.memory_mib = strcmp(d->driver, GC_HAMI_DRIVER) == 0
                                                   ? d->caps[k].value
                                                   : d->caps[k].value / (1024.0 * 1024.0);
                        else if (strcmp(d->caps[k].name, "shares") == 0)
                                g.shares = d->caps[k].value;
                        else if (strcmp(d->caps[k].name, "cores") == 0)
                                g.cores = 1;
                }
                for (size_t k = 0; k < n && !dup; k++)
                        dup = out[k].driver == g.driver && out[k].model == g.model &&
                              out[k].memory_mib == g.memory_mib && out[k].shares == g.shares &&
                              out[k].cores == g.cores;
                if (!dup && n < max)
                        out[n++] = g;
        }
        return n;
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

/* Which pods to keep (keep[i] = 1): every pod that is not a candidate. (The pieces before
 * `before` are frozen first, so no pod kept needs the ones forgotten to price itself again.) */
static void gc__dra_keep(const gc_accountant *a, int64_t before, unsigned char *keep)
{
        for (size_t i = 0; i < a->n_dra_pods; i++)
                keep[i] = !gc__dra_candidate(&a->dra_pods[i], before);
}

/* Drops the devices of deleted slices no claim kept names, and entries superseded by a move. */
static int gc__dra_forget_devices(gc_accountant *a)
{
        gc_ptrmap named;
        size_t k = 0;
        int r = 0;

        memset(&named, 0, sizeof(named));
        for (size_t c = 0; c < a->n_claims && r == 0; c++) {
                if (!a->claims[c].known)
                        continue;
                for (size_t d = 0; r == 0 && d < a->claims[c].claim.n_devices; d++)
                        r = gc_ptrmap_put(&named, a->claims[c].claim.devices[d].key, 1);
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

void gc_account_dra_freeze(gc_accountant *a, int64_t before)
{
        if (a && before > a->frozen)
                a->frozen = before;
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
        /* Pieces before `before` are final from now on: nothing recomputes them, so the pods
           that ended before it are not needed by those that run on. */
        gc_account_dra_freeze(a, before);
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
                        gc_claim_release(&cl.claim);
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
                r = gc__share_rebuild(a);
        if (r == 0)
                r = gc__dra_forget_devices(a);
        return r < 0 ? r : dropped;
}
