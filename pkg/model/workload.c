/* model workload: the top-level owner of a pod, through a bounded table of ReplicaSets and Jobs. */
#include "model.h"
#include "model_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the owner table ------------------------------------------------------------------------ */

typedef struct gc__owner_ent {
        gc_owner rec;    /* strings point into text[] */
        int64_t gone_at; /* 0: current */
        uint32_t gen;
        uint32_t hash; /* of rec.uid, as the index keeps it */
        char text[];   /* uid, kind, ns, name, owner kind, owner name; each NUL-terminated */
} gc__owner_ent;

/* Entries in a dense array (removal moves the last one in), indexed by uid. An entry is its own
 * allocation, so the records gc_owner_get hands out stay put while the array grows. */
struct gc_owner_table {
        gc__owner_ent **ents;
        size_t n, cap;
        gc_index ix;
        size_t gone, max, refused;
};

gc_owner_table *gc_owner_table_new(size_t max_entries)
{
        gc_owner_table *t = calloc(1, sizeof(*t));

        if (!t)
                return NULL;
        t->max = max_entries ? max_entries : GC_OWNER_TABLE_DEFAULT_MAX;
        return t;
}

gc_owner_table *gc_owner_table_free(gc_owner_table *t)
{
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n; i++)
                free(t->ents[i]);
        free(t->ents);
        gc_index_free(&t->ix);
        free(t);
        return NULL;
}

static uint32_t gc__uid_hash(const char *uid)
{
        return gc_hash_fin(gc_hash(uid, strlen(uid), 0));
}

typedef struct gc__uid_key {
        const gc_owner_table *t;
        const char *uid;
} gc__uid_key;

static int gc__uid_eq(const void *ctx, size_t row)
{
        const gc__uid_key *k = ctx;

        return strcmp(k->t->ents[row]->rec.uid, k->uid) == 0;
}

/* 1 and *ret_pos (the index's slot) when uid is in the table, else 0. */
static int gc__find(const gc_owner_table *t, const char *uid, uint32_t h, size_t *ret_pos)
{
        gc__uid_key k = {t, uid};

        return gc_index_find(&t->ix, h, gc__uid_eq, &k, ret_pos);
}

/* Removes entry i: the last one moves into its place. */
static void gc__remove(gc_owner_table *t, size_t i)
{
        size_t last = t->n - 1;

        gc_index_del_row(&t->ix, t->ents[i]->hash, i);
        free(t->ents[i]);
        if (i != last) {
                gc_index_renumber(&t->ix, t->ents[last]->hash, last, i);
                t->ents[i] = t->ents[last];
        }
        t->n--;
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
        gc__owner_ent *e;
        size_t len = 0, pos;
        char *p, *s[6];
        uint32_t h;
        int found;

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
        h = gc__uid_hash(o->uid);
        found = gc__find(t, o->uid, h, &pos);
        if (!found && t->n >= t->max) {
                t->refused++;
                return -ENOSPC;
        }
        if (!found &&
            (gc_grow((void **)&t->ents, &t->cap, t->n, sizeof(gc__owner_ent *), 64, 0) < 0 ||
             gc_index_reserve(&t->ix, t->n + 1) < 0))
                return -ENOMEM;
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
        e->hash = h;
        if (found) {
                size_t row = gc_index_row(&t->ix, pos);

                if (t->ents[row]->gone_at)
                        t->gone--;
                free(t->ents[row]);
                t->ents[row] = e;
                return 0;
        }
        gc_index_add_new(&t->ix, h, t->n);
        t->ents[t->n++] = e;
        return 0;
}

int gc_owner_gone(gc_owner_table *t, const char *uid, int64_t at)
{
        gc__owner_ent *e;
        size_t pos;

        if (!t || !uid)
                return -EINVAL;
        if (!gc__find(t, uid, gc__uid_hash(uid), &pos))
                return -ENOENT;
        e = t->ents[gc_index_row(&t->ix, pos)];
        if (!e->gone_at) {
                e->gone_at = at > 0 ? at : 1;
                t->gone++;
        }
        return 0;
}

size_t gc_owner_sweep(gc_owner_table *t, const char *kind, uint32_t gen, int64_t at)
{
        size_t n = 0;

        for (size_t i = 0; t && kind && i < t->n; i++) {
                gc__owner_ent *e = t->ents[i];

                if (!e->gone_at && e->gen != gen && strcmp(e->rec.kind, kind) == 0) {
                        e->gone_at = at > 0 ? at : 1;
                        t->gone++;
                        n++;
                }
        }
        return n;
}

size_t gc_owner_expire(gc_owner_table *t, int64_t before)
{
        size_t n = 0;

        /* Backwards: a removal moves the last entry, one already looked at, into the hole. */
        for (size_t i = t ? t->n : 0; i-- > 0;) {
                if (t->ents[i]->gone_at && t->ents[i]->gone_at < before) {
                        gc__remove(t, i);
                        t->gone--;
                        n++;
                }
        }
        return n;
}

const gc_owner *gc_owner_get(const gc_owner_table *t, const char *uid)
{
        size_t pos;

        if (!t || !uid || !gc__find(t, uid, gc__uid_hash(uid), &pos))
                return NULL;
        return &t->ents[gc_index_row(&t->ix, pos)]->rec;
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
