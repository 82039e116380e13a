/* model workload: the top-level owner of a pod, through a bounded table of ReplicaSets and Jobs. */
#include "model.h"
#include "model_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the owner table ------------------------------------------------------------------------ */

typedef struct gc__owner_ent {
        struct gc__owner_ent *next; /* the bucket's chain */
        gc_owner rec;               /* strings point into text[] */
        int64_t gone_at;            /* 0: current */
        uint32_t gen;
        char text[]; /* uid, kind, ns, name, owner kind, owner name; each NUL-terminated */
} gc__owner_ent;

struct gc_owner_table {
        gc__owner_ent **buckets;
        size_t n_buckets; /* a power of two */
        size_t n, gone, max, refused;
};

gc_owner_table *gc_owner_table_new(size_t max_entries)
{
        gc_owner_table *t = calloc(1, sizeof(*t));

        if (!t)
                return NULL;
        t->max = max_entries ? max_entries : GC_OWNER_TABLE_DEFAULT_MAX;
        t->n_buckets = 64;
        t->buckets = calloc(t->n_buckets, sizeof(gc__owner_ent *));
        if (!t->buckets) {
                free(t);
                return NULL;
        }
        return t;
}

gc_owner_table *gc_owner_table_free(gc_owner_table *t)
{
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_buckets; i++) {
                gc__owner_ent *e = t->buckets[i], *next;

                for (; e; e = next) {
                        next = e->next;
                        free(e);
                }
        }
        free(t->buckets);
        free(t);
        return NULL;
}

static size_t gc__bucket(const gc_owner_table *t, const char *uid)
{
        return (size_t)gc_hash(uid, strlen(uid), 0) & (t->n_buckets - 1);
}

static gc__owner_ent **gc__find(const gc_owner_table *t, const char *uid)
{
        gc__owner_ent **pe = &t->buckets[gc__bucket(t, uid)];

        for (; *pe; pe = &(*pe)->next)
                if (strcmp((*pe)->rec.uid, uid) == 0)
                        return pe;
        return pe;
}

/* Doubles the buckets when the chains grow longer than one on average; failure is harmless. */
static void gc__rehash(gc_owner_table *t)
{
        size_t nb = t->n_buckets * 2;
        gc__owner_ent **b;

        if (t->n < t->n_buckets || nb > (SIZE_MAX / sizeof(gc__owner_ent *)))
                return;
        b = calloc(nb, sizeof(gc__owner_ent *));
        if (!b)
                return;
        for (size_t i = 0; i < t->n_buckets; i++) {
                gc__owner_ent *e = t->buckets[i], *next;

                for (; e; e = next) {
                        size_t k = (size_t)gc_hash(e->rec.uid, strlen(e->rec.uid), 0) & (nb - 1);

                        next = e->next;
                        e->next = b[k];
                        b[k] = e;
                }
        }
        free(t->buckets);
        t->buckets = b;
        t->n_buckets = nb;
}

/* A string the table may keep: present (unless optional), printable, at most max bytes. */
static int gc__field_ok(const char *s, size_t max, int optional)
{
        if (!s || !*s)
                return optional;
        return strnlen(s, max + 1) <= max && gc__printable(s, 0);
}

static char *gc__put_str(char *p, const char *s)
{
        size_t n = s ? strlen(s) : 0;

        memcpy(p, s ? s : "", n);
        p[n] = '\0';
        return p + n + 1;
}

int gc_owner_put(gc_owner_table *t, const gc_owner *o, uint32_t gen)
{
        const char *f[6];
        gc__owner_ent **pe, *e, *old;
        size_t len = 0;
        char *p, *s[6];

        if (!t || !o)
                return -EINVAL;
        if (!gc__field_ok(o->uid, GC__UID_MAX, 0) ||
            !gc__field_ok(o->kind, GC__LABEL_VALUE_MAX, 0) ||
            !gc__field_ok(o->ns, GC__LABEL_VALUE_MAX, 0) ||
            !gc__field_ok(o->name, GC__NAME_MAX, 0) ||
            !gc__field_ok(o->owner_kind, GC__LABEL_VALUE_MAX, 1) ||
            !gc__field_ok(o->owner_name, GC__NAME_MAX, 1) ||
            (o->owner_kind && *o->owner_kind) != (o->owner_name && *o->owner_name))
                return -EINVAL;
        pe = gc__find(t, o->uid);
        old = *pe;
        if (!old && t->n >= t->max) {
                t->refused++;
                return -ENOSPC;
        }
        f[0] = o->uid;
        f[1] = o->kind;
        f[2] = o->ns;
        f[3] = o->name;
        f[4] = o->owner_kind;
        f[5] = o->owner_name;
        for (int i = 0; i < 6; i++)
                len += (f[i] ? strlen(f[i]) : 0) + 1;
        e = malloc(sizeof(*e) + len);
        if (!e)
                return -ENOMEM;
        p = e->text;
        for (int i = 0; i < 6; i++) {
                s[i] = p;
                p = gc__put_str(p, f[i]);
        }
        e->rec.uid = s[0];
        e->rec.kind = s[1];
        e->rec.ns = s[2];
        e->rec.name = s[3];
        e->rec.owner_kind = *s[4] ? s[4] : NULL;
        e->rec.owner_name = *s[5] ? s[5] : NULL;
        e->gone_at = 0;
        e->gen = gen;
        if (old) {
                e->next = old->next;
                if (old->gone_at)
                        t->gone--;
                free(old);
                *pe = e;
                return 0;
        }
        e->next = NULL;
        *pe = e;
        t->n++;
        gc__rehash(t);
        return 0;
}

int gc_owner_gone(gc_owner_table *t, const char *uid, int64_t at)
{
        gc__owner_ent *e;

        if (!t || !uid)
                return -EINVAL;
        e = *gc__find(t, uid);
        if (!e)
                return -ENOENT;
        if (!e->gone_at) {
                e->gone_at = at > 0 ? at : 1;
                t->gone++;
        }
        return 0;
}

size_t gc_owner_sweep(gc_owner_table *t, const char *kind, uint32_t gen, int64_t at)
{
        size_t n = 0;

        for (size_t i = 0; t && kind && i < t->n_buckets; i++)
                for (gc__owner_ent *e = t->buckets[i]; e; e = e->next)
                        if (!e->gone_at && e->gen != gen && strcmp(e->rec.kind, kind) == 0) {
                                e->gone_at = at > 0 ? at : 1;
                                t->gone++;
                                n++;
                        }
        return n;
}

size_t gc_owner_expire(gc_owner_table *t, int64_t before)
{
        size_t n = 0;

        for (size_t i = 0; t && i < t->n_buckets; i++) {
                gc__owner_ent **pe = &t->buckets[i];

                while (*pe) {
                        gc__owner_ent *e = *pe;

                        if (e->gone_at && e->gone_at < before) {
                                *pe = e->next;
                                free(e);
                                t->n--;
                                t->gone--;
                                n++;
                        } else {
                                pe = &e->next;
                        }
                }
        }
        return n;
}

const gc_owner *gc_owner_get(const gc_owner_table *t, const char *uid)
{
        gc__owner_ent *e;

        if (!t || !uid)
                return NULL;
        e = *gc__find(t, uid);
        return e ? &e->rec : NULL;
}

void gc_owner_table_stats(const gc_owner_table *t, gc_owner_stats *ret)
{
        memset(ret, 0, sizeof(*ret));
        if (!t)
                return;
        ret->entries = t->n;
        ret->gone = t->gone;
        ret->refused = t->refused;
}

/* ---- decoding ------------------------------------------------------------------------------ */

int gc_owner_from_json(const cJSON *obj, const char *kind, gc_owner *ret, char *err, size_t errlen)
{
        const cJSON *meta = NULL, *k;
        gc_owner o;
        int r;

        if (!ret || !kind)
                return GC__FAIL(err, errlen, -EINVAL, "missing decoder options");
        if (!cJSON_IsObject(obj))
                return GC__FAIL(err, errlen, -EINVAL, "not an object");
        k = cJSON_GetObjectItemCaseSensitive(obj, "kind");
        /* A metadata-only watch says PartialObjectMetadata: the caller knows what it asked. */
        if (k && !cJSON_IsNull(k) &&
            (!cJSON_IsString(k) || !k->valuestring ||
             (strcmp(k->valuestring, kind) != 0 &&
              strcmp(k->valuestring, "PartialObjectMetadata") != 0)))
                return GC__FAIL(err, errlen, -EINVAL, "kind: not %s", kind);
        memset(&o, 0, sizeof(o));
        o.kind = kind;
        r = gc__opt_obj(obj, "metadata", "", &meta, err, errlen);
        if (r == 0 && !meta)
                r = GC__FAIL(err, errlen, -EINVAL, "metadata: missing");
        if (r == 0)
                r = gc__opt_str(meta, "name", GC__NAME_MAX, 0, "metadata", &o.name, err, errlen);
        if (r == 0 && (!o.name || !*o.name))
                r = GC__FAIL(err, errlen, -EINVAL, "metadata.name: missing");
        if (r == 0)
                r = gc__opt_str(meta, "namespace", GC__LABEL_VALUE_MAX, 0, "metadata", &o.ns, err,
                                errlen);
        if (r == 0)
                r = gc__opt_str(meta, "uid", GC__UID_MAX, 0, "metadata", &o.uid, err, errlen);
        if (r == 0 && (!o.uid || !*o.uid))
                r = GC__FAIL(err, errlen, -EINVAL, "metadata.uid: missing");
        if (r == 0)
                r = gc__controller_ref(meta, &o.owner_kind, &o.owner_name, &(const char *){NULL},
                                       err, errlen);
        if (r < 0)
                return r;
        if (!o.ns || !*o.ns)
                o.ns = "default";
        *ret = o;
        return 1;
}

/* ---- resolution ---------------------------------------------------------------------------- */

/* The well-known labels, most specific (highest) owner first. */
static const struct {
        const char *key, *kind;
} gc__hint_labels[] = {
    {"trainer.kubeflow.org/trainjob-name", "TrainJob"},
    {"leaderworkerset.sigs.k8s.io/name", "LeaderWorkerSet"},
    {"jobset.sigs.k8s.io/jobset-name", "JobSet"},
    {"workflows.argoproj.io/workflow", "Workflow"},
    {"ray.io/cluster", "RayCluster"},
};

/* A label's string value, NULL when absent, null or empty; checked as a label. */
static int gc__label_value(const cJSON *labels, const char *key, const char **ret, char *err,
                           size_t errlen)
{
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(labels, key);
        int r;

        *ret = NULL;
        if (!it || cJSON_IsNull(it))
                return 0;
        if (!cJSON_IsString(it) || !it->valuestring)
                return GC__FAIL(err, errlen, -EINVAL, "metadata.labels[%s]: not a string", key);
        r = gc__label_ok(key, it->valuestring, err, errlen);
        if (r == 0 && *it->valuestring)
                *ret = it->valuestring;
        return r;
}

int gc__workload_labels(const cJSON *labels, const char *ns, gc_strpool *pool,
                        const char **ret_hash, const char **ret_hint, char *err, size_t errlen)
{
        const char *v;
        int r;

        *ret_hash = NULL;
        *ret_hint = NULL;
        if (!labels)
                return 0;
        r = gc__label_value(labels, "pod-template-hash", &v, err, errlen);
        if (r == 0)
                r = gc__intern(pool, v, ret_hash, err, errlen);
        for (size_t i = 0; r == 0 && i < sizeof(gc__hint_labels) / sizeof(gc__hint_labels[0]);
             i++) {
                char buf[GC_WORKLOAD_MAX];

                r = gc__label_value(labels, gc__hint_labels[i].key, &v, err, errlen);
                if (r < 0 || !v)
                        continue;
                snprintf(buf, sizeof(buf), "%s/%s/%s", gc__hint_labels[i].kind, ns ? ns : "", v);
                return gc__intern(pool, buf, ret_hint, err, errlen);
        }
        return r;
}

/* Kinds a well-known label may stand above: the building blocks frameworks make pods with. */
static int gc__hint_applies(const char *kind)
{
        return strcmp(kind, "ReplicaSet") == 0 || strcmp(kind, "Job") == 0 ||
               strcmp(kind, "StatefulSet") == 0 || strcmp(kind, "JobSet") == 0;
}

static const char *gc__workload_str(gc_strpool *pool, const char *kind, const char *ns,
                                    const char *name, size_t name_len)
{
        char buf[GC_WORKLOAD_MAX];
        int n;

        if (name_len > GC__NAME_MAX)
                name_len = GC__NAME_MAX;
        n = snprintf(buf, sizeof(buf), "%.63s/%.63s/%.*s", kind, ns ? ns : "", (int)name_len, name);
        if (n < 0)
                return NULL;
        return gc_strpool_intern(pool, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

const char *gc_workload_of(const gc_pod *pod, const gc_owner_table *t, gc_strpool *pool)
{
        const char *kind, *name;
        const gc_owner *o;
        size_t name_len;

        if (!pod || !pool || !pod->name)
                return NULL;
        if (!pod->controller_kind || !pod->controller)
                return gc__workload_str(pool, "Pod", pod->ns, pod->name, strlen(pod->name));
        kind = pod->controller_kind;
        name = pod->controller;
        name_len = strlen(name);
        o = gc_owner_get(t, pod->controller_uid);
        if (o && strcmp(o->kind, kind) == 0 && strcmp(o->name, name) == 0 &&
            (!pod->ns || strcmp(o->ns, pod->ns) == 0)) {
                if (o->owner_kind && o->owner_name) {
                        kind = o->owner_kind;
                        name = o->owner_name;
                        name_len = strlen(name);
                }
        } else if (strcmp(kind, "ReplicaSet") == 0 && pod->template_hash) {
                /* Not in the table: a Deployment names its ReplicaSets <name>-<hash>. */
                size_t hl = strlen(pod->template_hash);

                if (name_len > hl + 1 && name[name_len - hl - 1] == '-' &&
                    strcmp(name + name_len - hl, pod->template_hash) == 0) {
                        kind = "Deployment";
                        name_len -= hl + 1;
                }
        }
        if (pod->workload_hint && gc__hint_applies(kind))
                return pod->workload_hint;
        return gc__workload_str(pool, kind, pod->ns, name, name_len);
}
