/* model lists: finds the items of a Kubernetes list without a tree of it, decodes them one by one.
 */
#include "model.h"
#include "model_int.h"
#include "../util/jscan.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Design (docs/model.md): a 100,000-pod list parsed whole by cJSON costs several times its size
 * in nodes. Instead gc_jscan (util/jscan.h) walks the document once, checking only strings and
 * bracket nesting, and yields each element of the top-level "items" array in place. An element
 * is handed to cJSON alone, so memory stays near one object; one that cannot name a GPU
 * resource (no rule's domain in its bytes and no \u escape that could spell one) is not parsed
 * at all.
 */

#define GC__ITEM_MAX_DEPTH 64 /* within one object; real Kubernetes objects stay under 20 */
#define GC__MAX_NEEDLES    16

/* ---- what one decoder call needs ------------------------------------------------------------ */

typedef struct gc__decoder gc__decoder;

struct gc__decoder {
        const char *kind;      /* "Pod" */
        const char *list_kind; /* "PodList" */
        int prefilter;
        /* Decodes obj and appends to out: 1 kept, 0 not, <0 error (*ret_fatal says whether to
         * stop: out of memory, or the vector's limit). */
        int (*decode)(const cJSON *obj, const gc_model_opts *o, void *out, int *ret_fatal,
                      char *err, size_t errlen);
        size_t (*count)(const void *out);
        void (*truncate)(void *out, size_t n); /* drops records appended since n */
};

typedef struct gc__ctx {
        const gc__decoder *d;
        const gc_model_opts *o;
        void *out;
        gc_diag *diag;
        gc_decode_stats st;
        struct {
                const char *s;
                size_t n;
        } needles[GC__MAX_NEEDLES];
        size_t n_needles;
        int prefilter;
        char *err;
        size_t errlen;
        int has_kind;
        char kind[64]; /* the root's "kind" (a string), its first bytes */
        size_t kind_len;
} gc__ctx;

/*
 * The strings whose absence proves an object asks for no GPU resource: the domain of each rule
 * ("nvidia.com" of "nvidia.com/gpu"), or the whole name of a rule without one. A name JSON might
 * write escaped (a quote, a backslash) turns the filter off.
 */
static void gc__needle(gc__ctx *c, const char *s, size_t n)
{
        for (size_t k = 0; k < c->n_needles; k++)
                if (c->needles[k].n == n && memcmp(c->needles[k].s, s, n) == 0)
                        return;
        if (c->n_needles >= GC__MAX_NEEDLES || n == 0 || strcspn(s, "\"\\") < n) {
                c->prefilter = 0;
                return;
        }
        c->needles[c->n_needles].s = s;
        c->needles[c->n_needles++].n = n;
}

/*
 * DRA objects: the name of every driver read (NVIDIA's unless turned off, HAMi-DRA's, the
 * configured ones). A slice or claim without one in its bytes holds no GPU device cost counts.
 */
static void gc__dra_needles(gc__ctx *c)
{
        const gc_dra_rules *rs = c->o->dra;

        if (!rs || !rs->no_nvidia)
                gc__needle(c, GC_DRA_NVIDIA_DRIVER, strlen(GC_DRA_NVIDIA_DRIVER));
        gc__needle(c, GC_DRA_HAMI_DRIVER, strlen(GC_DRA_HAMI_DRIVER));
        for (size_t i = 0; rs && i < rs->n && c->prefilter; i++)
                if (rs->rules[i].driver)
                        gc__needle(c, rs->rules[i].driver, strlen(rs->rules[i].driver));
        /* No driver read at all: nothing can be kept, and the filter proves it. */
        if (c->prefilter && c->n_needles == 0)
                gc__needle(c, "\x01", 1);
}

static void gc__needles(gc__ctx *c)
{
        const gc_res_table *t = c->o->res;

        c->prefilter = c->d->prefilter;
        c->n_needles = 0;
        if (c->prefilter == 2) {
                gc__dra_needles(c);
                return;
        }
        /* Nodes kept by name (DRA nodes) need no GPU resource: every node is looked at. */
        if (c->prefilter && strcmp(c->d->kind, "Node") == 0 && c->o->keep_node) {
                c->prefilter = 0;
                return;
        }
        /* A pod holding GPUs through DRA names its claims instead of a resource. */
        if (c->prefilter && strcmp(c->d->kind, "Pod") == 0)
                gc__needle(c, "esourceClaim", strlen("esourceClaim"));
        for (size_t i = 0; c->prefilter && i < t->n; i++) {
                const char *name = t->rules[i].name;
                const char *slash = strchr(name, '/');

                gc__needle(c, name, slash ? (size_t)(slash - name) : strcspn(name, "*"));
        }
}

static int gc__may_hold_gpu(const gc__ctx *c, const char *s, size_t n)
{
        if (!c->prefilter)
                return 1;
        for (size_t k = 0; k < c->n_needles; k++)
                if (memmem(s, n, c->needles[k].s, c->needles[k].n))
                        return 1;
        return memmem(s, n, "\\u", 2) != NULL;
}

/* "ns/name" of an object for a message, or "" when it has none. */
static void gc__ident(const cJSON *obj, char *out, size_t outlen)
{
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
        const cJSON *ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
        size_t i = 0;

        out[0] = '\0';
        if (!cJSON_IsString(name) || !name->valuestring)
                return;
        for (int part = 0; part < 3; part++) {
                const char *s =
                    part == 0   ? (cJSON_IsString(ns) && ns->valuestring ? ns->valuestring : NULL)
                    : part == 1 ? (i ? "/" : NULL)
                                : name->valuestring;

                for (size_t k = 0; s && s[k] && k < 80 && i + 1 < outlen; k++)
                        out[i++] = s[k] >= 0x20 && s[k] < 0x7f ? s[k] : '?';
        }
        out[i] = '\0';
}

/* One element of items[]: 0 when done with it (kept, ignored or skipped), <0 to stop. */
static int gc__item(gc__ctx *c, const char *s, size_t n, size_t idx, int depth, char *err,
                    size_t errlen)
{
        const cJSON *kind;
        cJSON *obj;
        char msg[256], id[200];
        int r, fatal = 0;

        c->st.objects++;
        if (*s != '{') {
                c->st.skipped++;
                gc_diag_add(c->diag, "items[%zu]: not an object", idx);
                return 0;
        }
        if (depth > GC__ITEM_MAX_DEPTH) {
                c->st.skipped++;
                gc_diag_add(c->diag, "items[%zu]: nested deeper than %d", idx, GC__ITEM_MAX_DEPTH);
                return 0;
        }
        if (n > GC_OBJECT_MAX_BYTES) {
                c->st.skipped++;
                gc_diag_add(c->diag, "items[%zu]: larger than %u bytes", idx, GC_OBJECT_MAX_BYTES);
                return 0;
        }
        if (!gc__may_hold_gpu(c, s, n))
                return 0;
        obj = cJSON_ParseWithLength(s, n);
        if (!obj) {
                c->st.skipped++;
                gc_diag_add(c->diag, "items[%zu]: not valid JSON", idx);
                return 0;
        }
        kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
        if (cJSON_IsString(kind) && kind->valuestring &&
            strcmp(kind->valuestring, c->d->kind) != 0) {
                cJSON_Delete(obj); /* another kind in a List: not ours, not an error */
                return 0;
        }
        msg[0] = '\0';
        r = c->d->decode(obj, c->o, c->out, &fatal, msg, sizeof(msg));
        if (r < 0) {
                gc__ident(obj, id, sizeof(id));
                if (fatal) {
                        r = GC__FAIL(err, errlen, r, "items[%zu]%s%s%s: %s", idx, *id ? " (" : "",
                                     id, *id ? ")" : "", msg);
                } else {
                        c->st.skipped++;
                        gc_diag_add(c->diag, "items[%zu]%s%s%s: %s", idx, *id ? " (" : "", id,
                                    *id ? ")" : "", msg);
                        r = 0;
                }
        } else {
                c->st.kept += (size_t)r;
                r = 0;
        }
        cJSON_Delete(obj);
        return r;
}

static int gc__key_is(const char *k, size_t n, const char *lit)
{
        return strlen(lit) == n && memcmp(k, lit, n) == 0;
}

static int gc__on_value(void *ud, const gc_jscan_value *v)
{
        gc__ctx *c = ud;

        if (v->what == GC_JSCAN_KIND) {
                c->has_kind = 1;
                c->kind_len = v->len - 2; /* without its quotes */
                memcpy(c->kind, v->json + 1, c->kind_len < 64 ? c->kind_len : 64);
                return 0;
        }
        if (v->what != GC_JSCAN_ITEM)
                return 0;
        return gc__item(c, v->json, v->len, v->index, v->depth, c->err, c->errlen);
}

static int gc__decode(const gc__decoder *d, const char *json, size_t len, const gc_model_opts *o,
                      void *out, gc_decode_stats *ret_stats, gc_diag *diag, char *err,
                      size_t errlen)
{
        const char *root, *end;
        size_t n_before;
        gc_jscan js;
        gc__ctx c;
        int r;

        if (!json || !o || !o->pool || !o->res || !out)
                return GC__FAIL(err, errlen, -EINVAL, "missing argument");
        memset(&c, 0, sizeof(c));
        c.d = d;
        c.o = o;
        c.out = out;
        c.diag = diag;
        c.err = err;
        c.errlen = errlen;
        c.st.bytes = len;
        gc__needles(&c);
        n_before = d->count(out);

        /* The whole document is one piece: every value is passed in place, never copied. */
        gc_jscan_init(&js, SIZE_MAX, gc__on_value, &c);
        r = gc_jscan_feed(&js, json, len, err, errlen);
        if (r == 0)
                r = gc_jscan_finish(&js, err, errlen);
        gc_jscan_release(&js);
        if (r < 0)
                goto done;

        if (js.items) {
                if (c.has_kind && !gc__key_is(c.kind, c.kind_len, d->list_kind) &&
                    !gc__key_is(c.kind, c.kind_len, "List")) {
                        r = GC__FAIL(err, errlen, -EINVAL, "kind %.*s is not a %s or List",
                                     (int)(c.kind_len > 64 ? 64 : c.kind_len), c.kind,
                                     d->list_kind);
                        goto done;
                }
        } else if (c.has_kind && gc__key_is(c.kind, c.kind_len, d->kind)) {
                /* One object: the whole document is the item. */
                if (js.depth >= GC_JSCAN_MAX_DEPTH) {
                        r = GC__FAIL(err, errlen, -EINVAL, "document: nesting too deep");
                        goto done;
                }
                root = json;
                end = json + len;
                while (*root != '{')
                        root++;
                while (end[-1] != '}')
                        end--;
                r = gc__item(&c, root, (size_t)(end - root), 0, js.depth + 1, err, errlen);
                if (r < 0)
                        goto done;
        } else {
                r = GC__FAIL(err, errlen, -EINVAL, "no items array, and kind is not %s", d->kind);
                goto done;
        }
done:
        if (r < 0) {
                d->truncate(out, n_before);
                return r;
        }
        if (ret_stats)
                *ret_stats = c.st;
        return 0;
}

/* ---- vectors -------------------------------------------------------------------------------- */

void gc_pod_vec_free(gc_pod_vec *v)
{
        if (!v)
                return;
        free(v->v);
        v->v = NULL;
        v->n = v->cap = 0;
}

void gc_node_vec_free(gc_node_vec *v)
{
        if (!v)
                return;
        for (size_t i = 0; i < v->n; i++)
                gc_node_release(&v->v[i]);
        free(v->v);
        v->v = NULL;
        v->n = v->cap = 0;
}

void gc_ns_vec_free(gc_ns_vec *v)
{
        if (!v)
                return;
        free(v->v);
        v->v = NULL;
        v->n = v->cap = 0;
}

static int gc__pod_decode(const cJSON *obj, const gc_model_opts *o, void *out, int *ret_fatal,
                          char *err, size_t errlen)
{
        gc_pod_vec *v = out;
        gc_pod p;
        int r;

        r = gc_pod_from_json(obj, o, &p, err, errlen);
        *ret_fatal = r == -ENOMEM;
        if (r <= 0)
                return r;
        r = gc_grow((void **)&v->v, &v->cap, v->n, sizeof(*v->v), 64,
                    v->limit ? v->limit : GC_VEC_DEFAULT_LIMIT);
        if (r < 0) {
                *ret_fatal = 1;
                return GC__FAIL(err, errlen, r, "%s",
                                r == -E2BIG ? "more pods than the limit" : "out of memory");
        }
        v->v[v->n++] = p;
        return 1;
}

static size_t gc__pod_count(const void *out)
{
        return ((const gc_pod_vec *)out)->n;
}

static void gc__pod_truncate(void *out, size_t n)
{
        ((gc_pod_vec *)out)->n = n;
}

static int gc__node_decode(const cJSON *obj, const gc_model_opts *o, void *out, int *ret_fatal,
                           char *err, size_t errlen)
{
        gc_node_vec *v = out;
        gc_node nd;
        int r;

        r = gc_node_from_json(obj, o, &nd, err, errlen);
        *ret_fatal = r == -ENOMEM;
        if (r <= 0)
                return r;
        r = gc_grow((void **)&v->v, &v->cap, v->n, sizeof(*v->v), 64,
                    v->limit ? v->limit : GC_VEC_DEFAULT_LIMIT);
        if (r < 0) {
                gc_node_release(&nd);
                *ret_fatal = 1;
                return GC__FAIL(err, errlen, r, "%s",
                                r == -E2BIG ? "more nodes than the limit" : "out of memory");
        }
        v->v[v->n++] = nd;
        return 1;
}

static size_t gc__node_count(const void *out)
{
        return ((const gc_node_vec *)out)->n;
}

static void gc__node_truncate(void *out, size_t n)
{
        gc_node_vec *v = out;

        while (v->n > n)
                gc_node_release(&v->v[--v->n]);
}

static int gc__ns_decode(const cJSON *obj, const gc_model_opts *o, void *out, int *ret_fatal,
                         char *err, size_t errlen)
{
        gc_ns_vec *v = out;
        gc_namespace ns;
        int r;

        r = gc_namespace_from_json(obj, o, &ns, err, errlen);
        *ret_fatal = r == -ENOMEM;
        if (r <= 0)
                return r;
        r = gc_grow((void **)&v->v, &v->cap, v->n, sizeof(*v->v), 64,
                    v->limit ? v->limit : GC_VEC_DEFAULT_LIMIT);
        if (r < 0) {
                *ret_fatal = 1;
                return GC__FAIL(err, errlen, r, "%s",
                                r == -E2BIG ? "more namespaces than the limit" : "out of memory");
        }
        v->v[v->n++] = ns;
        return 1;
}

static size_t gc__ns_count(const void *out)
{
        return ((const gc_ns_vec *)out)->n;
}

static void gc__ns_truncate(void *out, size_t n)
{
        ((gc_ns_vec *)out)->n = n;
}

static int gc__slice_decode(const cJSON *obj, const gc_model_opts *o, void *out, int *ret_fatal,
                            char *err, size_t errlen)
{
        int r = gc_slice_from_json(obj, o, out, err, errlen);

        *ret_fatal = r == -ENOMEM || r == -E2BIG;
        if (r == -E2BIG && strstr(err, "limit") == NULL)
                *ret_fatal = 0; /* a slice too large is refused; the vector's limit stops all */
        return r;
}

static size_t gc__slice_count(const void *out)
{
        return ((const gc_dra_device_vec *)out)->n;
}

static void gc__slice_truncate(void *out, size_t n)
{
        ((gc_dra_device_vec *)out)->n = n;
}

static int gc__claim_decode(const cJSON *obj, const gc_model_opts *o, void *out, int *ret_fatal,
                            char *err, size_t errlen)
{
        gc_claim_vec *v = out;
        gc_claim cl;
        int r;

        r = gc_claim_from_json(obj, o, &cl, err, errlen);
        *ret_fatal = r == -ENOMEM;
        if (r <= 0)
                return r;
        r = gc_grow((void **)&v->v, &v->cap, v->n, sizeof(*v->v), 64,
                    v->limit ? v->limit : GC_VEC_DEFAULT_LIMIT);
        if (r < 0) {
                gc_claim_release(&cl);
                *ret_fatal = 1;
                return GC__FAIL(err, errlen, r, "%s",
                                r == -E2BIG ? "more claims than the limit" : "out of memory");
        }
        v->v[v->n++] = cl;
        return 1;
}

static size_t gc__claim_count(const void *out)
{
        return ((const gc_claim_vec *)out)->n;
}

static void gc__claim_truncate(void *out, size_t n)
{
        gc_claim_vec *v = out;

        while (v->n > n)
                gc_claim_release(&v->v[--v->n]);
}

static int gc__class_decode(const cJSON *obj, const gc_model_opts *o, void *out, int *ret_fatal,
                            char *err, size_t errlen)
{
        gc_device_class_vec *v = out;
        gc_device_class dc;
        int r;

        r = gc_device_class_from_json(obj, o, &dc, err, errlen);
        *ret_fatal = r == -ENOMEM;
        if (r <= 0)
                return r;
        r = gc_grow((void **)&v->v, &v->cap, v->n, sizeof(*v->v), 64,
                    v->limit ? v->limit : GC_VEC_DEFAULT_LIMIT);
        if (r < 0) {
                *ret_fatal = 1;
                return GC__FAIL(err, errlen, r, "%s",
                                r == -E2BIG ? "more device classes than the limit"
                                            : "out of memory");
        }
        v->v[v->n++] = dc;
        return 1;
}

static size_t gc__class_count(const void *out)
{
        return ((const gc_device_class_vec *)out)->n;
}

static void gc__class_truncate(void *out, size_t n)
{
        ((gc_device_class_vec *)out)->n = n;
}

static const gc__decoder gc__classes = {"DeviceClass",    "DeviceClassList", 2,
                                        gc__class_decode, gc__class_count,   gc__class_truncate};

static const gc__decoder gc__slices = {"ResourceSlice",  "ResourceSliceList", 2,
                                       gc__slice_decode, gc__slice_count,     gc__slice_truncate};
static const gc__decoder gc__claims = {"ResourceClaim",  "ResourceClaimList", 2,
                                       gc__claim_decode, gc__claim_count,     gc__claim_truncate};

static const gc__decoder gc__pods = {"Pod",          "PodList",     1,
                                     gc__pod_decode, gc__pod_count, gc__pod_truncate};
static const gc__decoder gc__nodes = {"Node",          "NodeList",     1,
                                      gc__node_decode, gc__node_count, gc__node_truncate};
static const gc__decoder gc__namespaces = {"Namespace",   "NamespaceList", 0,
                                           gc__ns_decode, gc__ns_count,    gc__ns_truncate};

int gc_decode_pods(const char *json, size_t len, const gc_model_opts *o, gc_pod_vec *out,
                   gc_decode_stats *ret_stats, gc_diag *diag, char *err, size_t errlen)
{
        return gc__decode(&gc__pods, json, len, o, out, ret_stats, diag, err, errlen);
}

int gc_decode_nodes(const char *json, size_t len, const gc_model_opts *o, gc_node_vec *out,
                    gc_decode_stats *ret_stats, gc_diag *diag, char *err, size_t errlen)
{
        return gc__decode(&gc__nodes, json, len, o, out, ret_stats, diag, err, errlen);
}

int gc_decode_namespaces(const char *json, size_t len, const gc_model_opts *o, gc_ns_vec *out,
                         gc_decode_stats *ret_stats, gc_diag *diag, char *err, size_t errlen)
{
        return gc__decode(&gc__namespaces, json, len, o, out, ret_stats, diag, err, errlen);
}

int gc_decode_slices(const char *json, size_t len, const gc_model_opts *o, gc_dra_device_vec *out,
                     gc_decode_stats *ret_stats, gc_diag *diag, char *err, size_t errlen)
{
        return gc__decode(&gc__slices, json, len, o, out, ret_stats, diag, err, errlen);
}

int gc_decode_claims(const char *json, size_t len, const gc_model_opts *o, gc_claim_vec *out,
                     gc_decode_stats *ret_stats, gc_diag *diag, char *err, size_t errlen)
{
        return gc__decode(&gc__claims, json, len, o, out, ret_stats, diag, err, errlen);
}

int gc_decode_device_classes(const char *json, size_t len, const gc_model_opts *o,
                             gc_device_class_vec *out, gc_decode_stats *ret_stats, gc_diag *diag,
                             char *err, size_t errlen)
{
        return gc__decode(&gc__classes, json, len, o, out, ret_stats, diag, err, errlen);
}

static int gc__owner_decode(const char *kind, const cJSON *obj, void *out, int *ret_fatal,
                            char *err, size_t errlen)
{
        gc_owner ow;
        int r;

        r = gc_owner_from_json(obj, kind, &ow, err, errlen);
        *ret_fatal = 0;
        if (r <= 0)
                return r;
        r = gc_owner_put(out, &ow, 0);
        if (r < 0) {
                *ret_fatal = r == -ENOMEM;
                return GC__FAIL(err, errlen, r, "%s",
                                r == -ENOSPC ? "more owners than the table holds"
                                             : "out of memory");
        }
        return 1;
}

static int gc__rs_decode(const cJSON *obj, const gc_model_opts *o, void *out, int *ret_fatal,
                         char *err, size_t errlen)
{
        (void)o;
        return gc__owner_decode("ReplicaSet", obj, out, ret_fatal, err, errlen);
}

static int gc__job_decode(const cJSON *obj, const gc_model_opts *o, void *out, int *ret_fatal,
                          char *err, size_t errlen)
{
        (void)o;
        return gc__owner_decode("Job", obj, out, ret_fatal, err, errlen);
}

static size_t gc__owner_count(const void *out)
{
        gc_owner_stats st;

        gc_owner_table_stats(out, &st);
        return st.entries;
}

static void gc__owner_truncate(void *out, size_t n)
{
        (void)out; /* owners put before a failure stay: each is a fact as read */
        (void)n;
}

static const gc__decoder gc__replicasets = {"ReplicaSet",  "ReplicaSetList", 0,
                                            gc__rs_decode, gc__owner_count,  gc__owner_truncate};
static const gc__decoder gc__jobs = {"Job",          "JobList",       0,
                                     gc__job_decode, gc__owner_count, gc__owner_truncate};

int gc_decode_owners(const char *json, size_t len, const char *kind, const gc_model_opts *o,
                     gc_owner_table *out, gc_decode_stats *ret_stats, gc_diag *diag, char *err,
                     size_t errlen)
{
        if (kind && strcmp(kind, "ReplicaSet") == 0)
                return gc__decode(&gc__replicasets, json, len, o, out, ret_stats, diag, err,
                                  errlen);
        if (kind && strcmp(kind, "Job") == 0)
                return gc__decode(&gc__jobs, json, len, o, out, ret_stats, diag, err, errlen);
        return GC__FAIL(err, errlen, -EINVAL, "owners: kind must be ReplicaSet or Job");
}
