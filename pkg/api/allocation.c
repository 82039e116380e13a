/* allocation: OpenCost's /allocation for the GPU fields, from the ledger and the snapshot's pods.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"

#define GC__UNALLOCATED "__unallocated__"
#define GC__IDLE        "__idle__"
#define GC__MAX_KEYS    8
#define GC__NAME_MAX    1024

typedef enum gc__key {
        GC__K_CLUSTER = 0,
        GC__K_NODE,
        GC__K_NAMESPACE,
        GC__K_POD,
        GC__K_CONTAINER,
        GC__K_CONTROLLER,
        GC__K_CONTROLLER_KIND,
        GC__K_TEAM,
        GC__K_PROJECT,
        GC__K_LABEL, /* the ledger's label dimension i (labels.dimensions) is GC__K_LABEL + i */
        GC__K_COUNT = GC__K_LABEL + GC_LABEL_DIMS,
} gc__key;

/*
 * Property names in the JSON, by key; team and project go under "labels" when asked by label,
 * as label dimensions always do.
 */
static const char *const gc__prop_names[GC__K_LABEL] = {
    "cluster",    "node",           "namespace", "pod",    "container",
    "controller", "controllerKind", "team",      "project"};

typedef struct gc__agg {
        gc__key keys[GC__MAX_KEYS];
        const char *label[GC__MAX_KEYS]; /* label:<k> asked: k (team, project or label key) */
        size_t n;
        int include_idle, share_idle, idle_by_node;
} gc__agg;

/* One allocation being summed: the merged rows of one name. */
typedef struct gc__alloc {
        char *name;
        const char *prop[GC__K_COUNT]; /* NULL = differs between merged rows or unknown */
        unsigned mixed;                /* bit per key */
        const char *node_of_idle;      /* for "<node>/__idle__" */
        double gpu_seconds, cost, idle_cost;
        double usage_seconds, measured_seconds; /* activity x GPU-seconds, and what was measured */
        int idle;                               /* an __idle__ row */
} gc__alloc;

typedef struct gc__set {
        gc__alloc *v;
        size_t n, cap;
} gc__set;

static void gc__set_free(gc__set *s)
{
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i].name);
        free(s->v);
        memset(s, 0, sizeof(*s));
}

static gc__alloc *gc__set_add(gc__set *s, const char *name)
{
        gc__alloc *a;

        if (gc_grow((void **)&s->v, &s->cap, s->n, sizeof(*s->v), 64, 0) < 0)
                return NULL;
        a = &s->v[s->n];
        memset(a, 0, sizeof(*a));
        a->name = strdup(name);
        if (!a->name)
                return NULL;
        s->n++;
        return a;
}

/*
 * Properties from the row's own buffers (the controller and its kind) are copied after the
 * allocation's name, in the same block, so they live as long as it does. 0 or -ENOMEM.
 */
static int gc__alloc_keep(gc__alloc *a, const gc__key *keys, size_t n_keys)
{
        size_t len = strlen(a->name) + 1, off = len;
        char *v;

        for (size_t i = 0; i < n_keys; i++)
                len += a->prop[keys[i]] ? strlen(a->prop[keys[i]]) + 1 : 0;
        if (len == off)
                return 0;
        v = realloc(a->name, len);
        if (!v)
                return -ENOMEM;
        a->name = v;
        for (size_t i = 0; i < n_keys; i++) {
                size_t n;

                if (!a->prop[keys[i]])
                        continue;
                n = strlen(a->prop[keys[i]]) + 1;
                memcpy(v + off, a->prop[keys[i]], n);
                a->prop[keys[i]] = v + off;
                off += n;
        }
        return 0;
}

/* ---- parameters ----------------------------------------------------------------------------- */

static int gc__bool(gc__api_ctx *x, const char *name, int *ret)
{
        const char *v = gc_httpd_query(x->req, name);

        *ret = 0;
        if (!v)
                return 0;
        if (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, ""))
                *ret = 1;
        else if (strcmp(v, "false") != 0 && strcmp(v, "0") != 0) {
                gc__api_bad(x, 400, name, "true or false");
                return 1;
        }
        return 0;
}

/* "label dimensions: label:a; team labels: label:b; project labels: label:c" for refusals. */
static void gc__kept_labels(const gc_api_settings *c, const gc_label_keys *lk, char *out,
                            size_t outlen)
{
        size_t off = 0;

        for (size_t i = 0; i < lk->n && off < outlen; i++)
                off += (size_t)snprintf(out + off, outlen - off, "%s label:%s",
                                        i ? "," : "label dimensions:", lk->key[i]);
        if (lk->n && off < outlen)
                off += (size_t)snprintf(out + off, outlen - off, "; ");
        off += (size_t)snprintf(out + off, outlen - off, "team labels:");
        for (size_t i = 0; i < c->n_team_keys && off < outlen; i++)
                off += (size_t)snprintf(out + off, outlen - off, "%s label:%s", i ? "," : "",
                                        c->team_keys[i]);
        if (off < outlen)
                off += (size_t)snprintf(out + off, outlen - off,
                                        "%s; project labels:", c->n_team_keys ? "" : " none");
        for (size_t i = 0; i < c->n_project_keys && off < outlen; i++)
                off += (size_t)snprintf(out + off, outlen - off, "%s label:%s", i ? "," : "",
                                        c->project_keys[i]);
        if (off < outlen && !c->n_project_keys)
                snprintf(out + off, outlen - off, " none");
}

/* Where /allocation's label:<k> comes from, added to g: a label kept as a dimension (its own
 * values, pod's then namespace's), else the label naming teams or projects. 0: not kept. */
static int gc__label_key(const gc_api_settings *c, const gc_label_keys *lk, const char *k,
                         gc__agg *g)
{
        for (size_t i = 0; i < lk->n; i++) {
                if (strcmp(lk->key[i], k) == 0) {
                        g->label[g->n] = lk->key[i];
                        g->keys[g->n++] = (gc__key)(GC__K_LABEL + i);
                        return 1;
                }
        }
        for (size_t i = 0; i < c->n_team_keys; i++) {
                if (strcmp(c->team_keys[i], k) == 0) {
                        g->label[g->n] = c->team_keys[i];
                        g->keys[g->n++] = GC__K_TEAM;
                        return 1;
                }
        }
        for (size_t i = 0; i < c->n_project_keys; i++) {
                if (strcmp(c->project_keys[i], k) == 0) {
                        g->label[g->n] = c->project_keys[i];
                        g->keys[g->n++] = GC__K_PROJECT;
                        return 1;
                }
        }
        return 0;
}

static int gc__aggregate(gc__api_ctx *x, gc__agg *g)
{
        static const struct {
                const char *word;
                gc__key key;
        } words[] = {
            {"cluster", GC__K_CLUSTER},
            {"node", GC__K_NODE},
            {"namespace", GC__K_NAMESPACE},
            {"pod", GC__K_POD},
            {"container", GC__K_CONTAINER},
            {"controller", GC__K_CONTROLLER},
            {"controllerKind", GC__K_CONTROLLER_KIND},
            {"team", GC__K_TEAM},
            {"project", GC__K_PROJECT},
        };
        static const gc__key deflt[] = {GC__K_CLUSTER, GC__K_NODE, GC__K_NAMESPACE, GC__K_POD,
                                        GC__K_CONTAINER};
        const gc_api_settings *c = &x->s->p.settings;
        const char *v = gc_httpd_query(x->req, "aggregate");
        char word[GC__NAME_MAX], kept[GC__API_ERR];
        gc_label_keys lk;

        memset(g->keys, 0, sizeof(g->keys));
        memset(g->label, 0, sizeof(g->label));
        g->n = 0;
        gc_ledger_label_keys(x->s->p.ledger, &lk);
        if (!v || !*v) {
                /* As OpenCost: no aggregation is one allocation per container. */
                memcpy(g->keys, deflt, sizeof(deflt));
                g->n = sizeof(deflt) / sizeof(deflt[0]);
                return 0;
        }
        while (*v) {
                const char *comma = strchr(v, ',');
                size_t n = comma ? (size_t)(comma - v) : strlen(v), i;
                const char *k;

                if (n >= sizeof(word)) {
                        gc__api_bad(x, 400, "aggregate", "a key is too long");
                        return 1;
                }
                memcpy(word, v, n);
                word[n] = '\0';
                v += comma ? n + 1 : n;
                if (g->n == GC__MAX_KEYS) {
                        gc__api_bad(x, 400, "aggregate", "at most %d keys", GC__MAX_KEYS);
                        return 1;
                }
                for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
                        if (strcmp(words[i].word, word) == 0)
                                break;
                if (i < sizeof(words) / sizeof(words[0])) {
                        g->keys[g->n++] = words[i].key;
                        continue;
                }
                gc__kept_labels(c, &lk, kept, sizeof(kept));
                if (strncmp(word, "label:", 6) == 0) {
                        k = word + 6;
                        if (gc__label_key(c, &lk, k, g))
                                continue;
                        gc__api_bad(x, 400, "aggregate",
                                    "%.64s: this label is not kept; the controller keeps "
                                    "labels.dimensions and the attribution labels of the "
                                    "configuration only (%s)",
                                    word, kept);
                        return 1;
                }
                if (strncmp(word, "annotation:", 11) == 0) {
                        gc__api_bad(x, 400, "aggregate",
                                    "%.64s: annotations are not kept; aggregate by team, project "
                                    "or one of the kept labels (%s)",
                                    word, kept);
                        return 1;
                }
                if (!strcmp(word, "department") || !strcmp(word, "owner") ||
                    !strcmp(word, "product") || !strcmp(word, "environment")) {
                        gc__api_bad(x, 400, "aggregate",
                                    "%s: not kept; the controller attributes GPU time to team "
                                    "and project (%s)",
                                    word, kept);
                        return 1;
                }
                gc__api_bad(x, 400, "aggregate",
                            "%.64s: unknown (cluster, node, namespace, controllerKind, "
                            "controller, pod, container, team, project, label:<key>)",
                            word);
                return 1;
        }
        if (g->n == 0) {
                gc__api_bad(x, 400, "aggregate", "no key");
                return 1;
        }
        return 0;
}

/* ---- one set -------------------------------------------------------------------------------- */

static const char *gc__or_unalloc(const char *v)
{
        return v && *v && strcmp(v, GC_UNATTRIBUTED) != 0 && strcmp(v, GC_FOLDED_POD) != 0 ? v
                                                                                           : NULL;
}

/* "ReplicaSet" -> "replicaset", as OpenCost writes kinds. */
static const char *gc__lower(const char *s, char *buf, size_t n)
{
        size_t i;

        if (!s)
                return NULL;
        for (i = 0; s[i] && i + 1 < n; i++)
                buf[i] = (char)tolower((unsigned char)s[i]);
        buf[i] = '\0';
        return buf;
}

typedef struct gc__row_vals {
        const char *v[GC__K_COUNT]; /* NULL = __unallocated__ */
        const char *key_controller; /* the aggregation key: OpenCost's "kind:name" */
        char kind[64];
        char name[GC__NAME_MAX / 4];
        char controller[GC__NAME_MAX / 2];
} gc__row_vals;

/*
 * The controller of a ledger row from its workload, the pod's top-level owner "Kind/ns/name":
 * controllerKind the kind in lower case, controller the name (a Deployment's pods are the
 * Deployment's, as OpenCost resolves ReplicaSets). A pod without an owner ("Pod/ns/name") has
 * none, as in OpenCost. 1 when the workload was recorded, else 0.
 */
static int gc__workload_controller(const char *w, gc__row_vals *rv)
{
        const char *ns = w ? strchr(w, '/') : NULL, *name = ns ? strchr(ns + 1, '/') : NULL;
        size_t kind_len;

        if (!gc__or_unalloc(w))
                return 0;
        if (!name || !name[1] || ns == w)
                return 1; /* not Kind/ns/name: a value we cannot read is no controller */
        kind_len = (size_t)(ns - w);
        if ((kind_len == 3 && strncmp(w, "Pod", 3) == 0) || kind_len >= sizeof(rv->kind))
                return 1;
        for (size_t i = 0; i < kind_len; i++)
                rv->kind[i] = (char)tolower((unsigned char)w[i]);
        rv->kind[kind_len] = '\0';
        snprintf(rv->name, sizeof(rv->name), "%s", name + 1);
        rv->v[GC__K_CONTROLLER_KIND] = rv->kind;
        rv->v[GC__K_CONTROLLER] = rv->name;
        return 1;
}

/* Without a recorded workload: the snapshot pod's direct owner, when the pod is still known. */
static void gc__pod_controller(const gc_api_pod *p, gc__row_vals *rv)
{
        rv->v[GC__K_CONTROLLER_KIND] =
            gc__lower(gc__or_unalloc(p->controller_kind), rv->kind, sizeof(rv->kind));
        if (gc__or_unalloc(p->controller)) {
                snprintf(rv->name, sizeof(rv->name), "%s", p->controller);
                rv->v[GC__K_CONTROLLER] = rv->name;
        }
}

static void gc__row_values(const gc_snapshot *s, const gc_cost_row *row, gc__row_vals *rv,
                           const gc_api_pod **ret_pod)
{
        const char *ns = row->keys[GC_DIM_NAMESPACE], *pod = row->keys[GC_DIM_POD];
        const gc_api_pod *p = NULL;

        if (gc__or_unalloc(pod))
                p = gc__api_pod_find(s, ns, pod);
        memset(rv->v, 0, sizeof(rv->v));
        rv->key_controller = NULL;
        rv->v[GC__K_CLUSTER] = s->cluster;
        rv->v[GC__K_NODE] = gc__or_unalloc(row->keys[GC_DIM_NODE]);
        rv->v[GC__K_NAMESPACE] = gc__or_unalloc(ns);
        rv->v[GC__K_POD] = gc__or_unalloc(pod);
        rv->v[GC__K_TEAM] = gc__or_unalloc(row->keys[GC_DIM_TEAM]);
        rv->v[GC__K_PROJECT] = gc__or_unalloc(row->keys[GC_DIM_PROJECT]);
        /* A pod without the label is __unallocated__ under it, as OpenCost has it. */
        for (size_t i = 0; i < GC_LABEL_DIMS; i++) {
                const char *lv = row->keys[GC_DIM_LABEL + i];

                rv->v[GC__K_LABEL + i] = lv && strcmp(lv, GC_UNLABELLED) != 0 ? lv : NULL;
        }
        if (p)
                rv->v[GC__K_CONTAINER] = gc__or_unalloc(p->container);
        if (!gc__workload_controller(row->keys[GC_DIM_WORKLOAD], rv) && p)
                gc__pod_controller(p, rv);
        if (rv->v[GC__K_CONTROLLER]) {
                /* OpenCost's aggregation key is "kind:name"; the property is the name. */
                snprintf(rv->controller, sizeof(rv->controller), "%s%s%s",
                         rv->v[GC__K_CONTROLLER_KIND] ? rv->kind : "",
                         rv->v[GC__K_CONTROLLER_KIND] ? ":" : "", rv->v[GC__K_CONTROLLER]);
                rv->key_controller = rv->controller;
        }
        *ret_pod = p;
}

static int gc__alloc_name(const gc__agg *g, const gc__row_vals *rv, char *out, size_t n)
{
        size_t off = 0;

        for (size_t i = 0; i < g->n; i++) {
                const char *v =
                    g->keys[i] == GC__K_CONTROLLER ? rv->key_controller : rv->v[g->keys[i]];
                int w = snprintf(out + off, n - off, "%s%s", i ? "/" : "", v ? v : GC__UNALLOCATED);

                if (w < 0 || (size_t)w >= n - off)
                        return -E2BIG;
                off += (size_t)w;
        }
        return 0;
}

static int gc__by_name(const void *a, const void *b)
{
        const gc__alloc *x = a, *y = b;
        int c = strcmp(x->name, y->name);

        return c ? c : (x->idle > y->idle) - (x->idle < y->idle);
}

/* Properties of a merged allocation: what all its rows agree on. */
static void gc__merge_props(gc__alloc *to, const gc__alloc *from)
{
        for (int k = 0; k < GC__K_COUNT; k++) {
                if (to->mixed & (1u << k))
                        continue;
                if ((from->mixed & (1u << k)) || !to->prop[k] || !from->prop[k] ||
                    strcmp(to->prop[k], from->prop[k]) != 0) {
                        to->mixed |= 1u << k;
                        to->prop[k] = NULL;
                }
        }
}

typedef struct gc__node_idle {
        const char *node;
        double idle_seconds, idle_cost;
        double tenant_cost; /* cost of the rows on the node */
} gc__node_idle;

/*
 * For each row, its node's entry in v (or NULL): node names are the ledger's interned strings, so
 * a pointer map answers; a name seen under another pointer falls back to comparing once.
 */
static int gc__row_nodes(gc__node_idle *v, size_t n, const gc_cost_summary *sum,
                         gc__node_idle ***ret)
{
        gc_ptrmap m = {0};
        gc__node_idle **out = NULL;
        int r = 0;

        if (sum->n_rows) {
                out = calloc(sum->n_rows, sizeof(gc__node_idle *));
                if (!out)
                        return -ENOMEM;
        }
        for (size_t i = 0; r == 0 && i < n; i++)
                r = gc_ptrmap_put(&m, v[i].node, i);
        for (size_t i = 0; r == 0 && i < sum->n_rows; i++) {
                const char *node = sum->rows[i].keys[GC_DIM_NODE];
                size_t ix;

                if (!node)
                        continue;
                if (gc_ptrmap_get(&m, node, &ix) < 0) {
                        for (ix = 0; ix < n; ix++)
                                if (strcmp(v[ix].node, node) == 0)
                                        break;
                        r = gc_ptrmap_put(&m, node, ix < n ? ix : SIZE_MAX);
                }
                if (r == 0 && ix < n)
                        out[i] = &v[ix];
        }
        gc_ptrmap_free(&m);
        if (r < 0) {
                free(out);
                return r;
        }
        *ret = out;
        return 0;
}

/* One set out of one step's summary (grouped by namespace, pod, node, team and project). */
/* An allocation per row of the summary (merged by name later), with its share of idle. */
static int gc__add_rows(gc__api_ctx *x, const gc__agg *g, const gc_cost_summary *sum,
                        const double *row_share, gc__set *out)
{
        static const gc__key own[] = {GC__K_CONTROLLER, GC__K_CONTROLLER_KIND};
        char name[GC__NAME_MAX];
        int r = 0;

        for (size_t i = 0; r == 0 && i < sum->n_rows; i++) {
                const gc_cost_row *row = &sum->rows[i];
                const gc_api_pod *p;
                gc__row_vals rv;
                gc__alloc *a;

                gc__row_values(x->s, row, &rv, &p);
                r = gc__alloc_name(g, &rv, name, sizeof(name));
                if (r < 0)
                        break;
                a = gc__set_add(out, name);
                if (!a) {
                        r = -ENOMEM;
                        break;
                }
                /* Only the aggregation's own keys are properties, and only known values. */
                for (size_t k = 0; k < g->n; k++)
                        a->prop[g->keys[k]] = rv.v[g->keys[k]];
                for (int k = 0; k < GC__K_COUNT; k++)
                        if (!a->prop[k])
                                a->mixed |= 1u << k;
                a->prop[GC__K_CLUSTER] = x->s->cluster;
                a->mixed &= ~(1u << GC__K_CLUSTER);
                r = gc__alloc_keep(a, own, sizeof(own) / sizeof(own[0]));
                a->gpu_seconds = row->gpu_seconds;
                a->cost = row->cost;
                a->idle_cost = row_share ? row_share[i] : 0;
                if (p && p->samples > 0 && isfinite(p->activity_mean)) {
                        a->usage_seconds = p->activity_mean * row->gpu_seconds;
                        a->measured_seconds = row->gpu_seconds;
                }
        }
        return r;
}

/* Sorted by name; allocations of the same name (and idleness) become one. */
static void gc__merge_same(gc__set *out)
{
        size_t w = 0;

        if (out->n < 2)
                return;
        qsort(out->v, out->n, sizeof(*out->v), gc__by_name);
        for (size_t i = 1; i < out->n; i++) {
                gc__alloc *to = &out->v[w], *from = &out->v[i];

                if (strcmp(to->name, from->name) == 0 && to->idle == from->idle) {
                        gc__merge_props(to, from);
                        to->gpu_seconds += from->gpu_seconds;
                        to->cost += from->cost;
                        to->idle_cost += from->idle_cost;
                        to->usage_seconds += from->usage_seconds;
                        to->measured_seconds += from->measured_seconds;
                        free(from->name);
                } else {
                        out->v[++w] = *from;
                }
        }
        out->n = w + 1;
}

/* Idle allocations: per node or for the cluster, when asked for (include_idle) or when there was
 * nobody to share it with. */
static int gc__add_idle(gc__api_ctx *x, const gc__agg *g, const gc__node_idle *nodes,
                        size_t n_nodes, double total_cost, double total_idle_s,
                        double total_idle_cost, gc__set *out)
{
        char name[GC__NAME_MAX];
        int r = 0;

        /* Idle: its own rows when asked for, or what could not be shared (a node with no tenant).
         */
        for (size_t i = 0; r == 0 && i < n_nodes; i++) {
                const gc__node_idle *ni = &nodes[i];
                int unshared =
                    g->share_idle && (g->idle_by_node ? ni->tenant_cost <= 0 : total_cost <= 0);
                gc__alloc *a;

                if (!g->idle_by_node)
                        break;
                if ((!g->include_idle || g->share_idle) && !unshared)
                        continue;
                if (ni->idle_seconds <= 0 && ni->idle_cost <= 0)
                        continue;
                snprintf(name, sizeof(name), "%s/%s", ni->node, GC__IDLE);
                a = gc__set_add(out, name);
                if (!a) {
                        r = -ENOMEM;
                        break;
                }
                a->idle = 1;
                a->mixed = ~0u & ~((1u << GC__K_CLUSTER) | (1u << GC__K_NODE));
                a->prop[GC__K_CLUSTER] = x->s->cluster;
                a->prop[GC__K_NODE] = ni->node;
                a->gpu_seconds = ni->idle_seconds;
                a->cost = ni->idle_cost;
        }
        if (r == 0 && !g->idle_by_node &&
            ((g->include_idle && !g->share_idle) || (g->share_idle && total_cost <= 0)) &&
            (total_idle_s > 0 || total_idle_cost > 0)) {
                gc__alloc *a = gc__set_add(out, GC__IDLE);

                if (!a) {
                        r = -ENOMEM;
                } else {
                        a->idle = 1;
                        a->mixed = ~0u & ~(1u << GC__K_CLUSTER);
                        a->prop[GC__K_CLUSTER] = x->s->cluster;
                        a->gpu_seconds = total_idle_s;
                        a->cost = total_idle_cost;
                }
        }
        return r;
}

static int gc__build_set(gc__api_ctx *x, const gc__agg *g, const gc_cost_summary *sum, gc__set *out)
{
        gc__node_idle *nodes = NULL;
        double total_cost = 0, total_idle_cost = 0, total_idle_s = 0;
        double *row_share = NULL;
        gc__node_idle **row_node = NULL;
        int r = 0;

        if (sum->n_idle_nodes) {
                nodes = calloc(sum->n_idle_nodes, sizeof(*nodes));
                if (!nodes) {
                        r = -ENOMEM;
                        goto out;
                }
        }
        for (size_t i = 0; i < sum->n_idle_nodes; i++) {
                const gc_cost_row *in = &sum->idle_nodes[i];

                nodes[i].node = in->keys[GC_DIM_NODE] ? in->keys[GC_DIM_NODE] : "";
                nodes[i].idle_seconds = in->gpu_seconds;
                nodes[i].idle_cost = in->cost;
                total_idle_cost += in->cost;
                total_idle_s += in->gpu_seconds;
        }
        r = gc__row_nodes(nodes, sum->n_idle_nodes, sum, &row_node);
        if (r < 0)
                goto out;
        for (size_t i = 0; i < sum->n_rows; i++) {
                gc__node_idle *ni = row_node[i];

                total_cost += sum->rows[i].cost;
                if (ni)
                        ni->tenant_cost += sum->rows[i].cost;
        }
        if (g->share_idle && sum->n_rows) {
                row_share = calloc(sum->n_rows, sizeof(*row_share));
                if (!row_share) {
                        r = -ENOMEM;
                        goto out;
                }
        }
        /* Idle shared in proportion to cost: per node, or over the cluster. */
        for (size_t i = 0; row_share && i < sum->n_rows; i++) {
                const gc_cost_row *row = &sum->rows[i];

                if (g->idle_by_node) {
                        gc__node_idle *ni = row_node[i];

                        if (ni && ni->tenant_cost > 0)
                                row_share[i] = ni->idle_cost * row->cost / ni->tenant_cost;
                } else if (total_cost > 0) {
                        row_share[i] = total_idle_cost * row->cost / total_cost;
                }
        }
        if (r == 0)
                r = gc__add_rows(x, g, sum, row_share, out);
        if (r == 0)
                r = gc__add_idle(x, g, nodes, sum->n_idle_nodes, total_cost, total_idle_s,
                                 total_idle_cost, out);
        if (r == 0)
                gc__merge_same(out);
out:
        free(row_node);
        free(row_share);
        free(nodes);
        return r;
}

/* ---- JSON ----------------------------------------------------------------------------------- */

static int gc__f5(gc_buf *b, const char *name, double v)
{
        gc_buf_printf(b, ",\"%s\":", name);
        return gc__api_num5(b, v);
}

static int gc__alloc_json(gc_buf *b, const gc__agg *g, const gc__alloc *a, int64_t start,
                          int64_t end)
{
        double hours = a->gpu_seconds / 3600.0, win_h = (double)(end - start) / 3600.0;
        /* Measured use where there is some: the measured pods' ratio of use to GPU-seconds,
         * applied to the whole allocation; null (never 0) where nothing was measured, so a
         * client does not read unknown use as waste. Idle capacity is used by no pod: 0. */
        int known = a->idle || (a->gpu_seconds > 0 && a->measured_seconds > 0);
        double eff = a->idle ? 0.0 : known ? a->usage_seconds / a->measured_seconds : NAN;
        double usage = known ? eff * hours / win_h : NAN;
        int any_label = 0;

        gc_buf_json_str(b, a->name);
        gc_buf_puts(b, ":{\"name\":");
        gc_buf_json_str(b, a->name);
        gc_buf_puts(b, ",\"properties\":{");
        for (int k = 0, n = 0; k < GC__K_COUNT; k++) {
                if (!a->prop[k] || k == GC__K_TEAM || k == GC__K_PROJECT || k >= GC__K_LABEL)
                        continue;
                gc_buf_printf(b, "%s\"%s\":", n++ ? "," : "", gc__prop_names[k]);
                gc_buf_json_str(b, a->prop[k]);
        }
        /* Team and project as OpenCost labels, under the label key asked for, if any; label
         * dimensions always. */
        for (size_t i = 0; i < g->n; i++) {
                const char *v = a->prop[g->keys[i]];

                if (!g->label[i] || !v)
                        continue;
                gc_buf_puts(b, any_label++ ? "," : ",\"labels\":{");
                gc_buf_json_str(b, g->label[i]);
                gc_buf_puts(b, ":");
                gc_buf_json_str(b, v);
        }
        if (any_label)
                gc_buf_puts(b, "}");
        gc_buf_puts(b, "},\"window\":{\"start\":");
        gc__api_time(b, start);
        gc_buf_puts(b, ",\"end\":");
        gc__api_time(b, end);
        gc_buf_puts(b, "},\"start\":");
        gc__api_time(b, start);
        gc_buf_puts(b, ",\"end\":");
        gc__api_time(b, end);
        gc__f5(b, "minutes", (double)(end - start) / 60.0);
        gc__f5(b, "gpuCount", hours / win_h);
        gc__f5(b, "gpuHours", hours);
        gc__f5(b, "gpuRequestAverage", a->idle ? 0.0 : hours / win_h);
        gc__f5(b, "gpuUsageAverage", usage);
        gc__f5(b, "gpuCost", a->cost);
        gc__f5(b, "gpuCostAdjustment", 0.0);
        gc__f5(b, "gpuCostIdle", a->idle_cost);
        gc__f5(b, "gpuEfficiency", eff);
        gc__f5(b, "totalCost", a->cost + a->idle_cost);
        gc__f5(b, "totalEfficiency", eff);
        return gc_buf_puts(b, "}");
}

typedef struct gc__alloc_ctx {
        gc__api_ctx *x;
        const gc__agg *g;
        size_t n; /* sets written */
} gc__alloc_ctx;

/* One step's set of allocations into the answer's "data". */
static int gc__alloc_step(void *ud, const gc_cost_summary *sum)
{
        gc__alloc_ctx *c = ud;
        gc_buf *b = &c->x->res->body;
        gc__set set = {0};
        int r = gc__build_set(c->x, c->g, sum, &set);

        if (r == 0) {
                gc_buf_puts(b, c->n++ ? ",{" : "{");
                for (size_t i = 0; !b->err && i < set.n; i++) {
                        if (i)
                                gc_buf_puts(b, ",");
                        gc__alloc_json(b, c->g, &set.v[i], sum->start, sum->end);
                }
                r = gc_buf_puts(b, "}");
        }
        gc__set_free(&set);
        return r;
}

int gc__api_allocation(gc__api_ctx *x)
{
        const char *w = gc_httpd_query(x->req, "window");
        gc_buf *b = &x->res->body;
        int64_t start, end, step = 0;
        gc_query q = {0};
        gc__alloc_ctx ac = {0};
        int accumulate;
        char err[GC__API_ERR];
        gc__agg g;
        int r;

        /* Other OpenCost parameters (filters, sharing of other resources) are not ours: they
         * are ignored as OpenCost ignores what it does not know. */
        if (!w) {
                gc__api_bad(x, 400, "window", "required (e.g. 7d, yesterday, lastweek, start,end)");
                return 0;
        }
        if (gc_api_window_parse_tz(w, x->s->p.now, x->s->p.settings.report.tz, &start, &end, err,
                                   sizeof(err)) < 0)
                return gc__api_bad(x, 400, "window", "%s", err);
        if (gc_httpd_query(x->req, "step") &&
            gc_api_step_parse(gc_httpd_query(x->req, "step"), start, end, &step, err, sizeof(err)) <
                0)
                return gc__api_bad(x, 400, "step", "%s", err);
        if (gc__bool(x, "accumulate", &accumulate) || gc__bool(x, "includeIdle", &g.include_idle) ||
            gc__bool(x, "shareIdle", &g.share_idle) || gc__bool(x, "idleByNode", &g.idle_by_node) ||
            gc__aggregate(x, &g))
                return 0;
        if (gc_httpd_query(x->req, "basis") &&
            gc_basis_parse(gc_httpd_query(x->req, "basis"), strlen(gc_httpd_query(x->req, "basis")),
                           &q.basis) < 0)
                return gc__api_bad(x, 400, "basis", "must be allocation or usage");
        if (accumulate || !step)
                step = end - start;
        if (gc__api_coarse(x, start, end, step == end - start ? 0 : step, "step"))
                return 0;
        q.start = start;
        q.end = end;
        q.now = x->s->p.now;
        q.by[q.n_by++] = GC_DIM_NAMESPACE;
        q.by[q.n_by++] = GC_DIM_POD;
        q.by[q.n_by++] = GC_DIM_NODE;
        q.by[q.n_by++] = GC_DIM_TEAM;
        q.by[q.n_by++] = GC_DIM_PROJECT;
        q.by[q.n_by++] = GC_DIM_WORKLOAD;
        /* Label dimensions only when asked: each multiplies the rows. */
        for (size_t i = 0; i < g.n; i++) {
                gc_dim d = (gc_dim)(GC_DIM_LABEL + (g.keys[i] - GC__K_LABEL));
                size_t k = 0;

                while (k < q.n_by && q.by[k] != d)
                        k++;
                if (g.keys[i] >= GC__K_LABEL && k == q.n_by)
                        q.by[q.n_by++] = d;
        }
        ac.x = x;
        ac.g = &g;
        gc_buf_puts(b, "{\"code\":200,\"status\":\"success\",\"data\":[");
        /* Every step from one pass over the ledger (a query per step cost a pass each). The pass
         * can fail on its own, and is not begun for an answer that already failed. */
        if (!b->err && start < end) {
                r = gc_ledger_query_each_step(x->s->p.ledger, &q, step, gc__alloc_step, &ac);
                if (r != 0)
                        return r;
        }
        return gc_buf_puts(b, "]}");
}
