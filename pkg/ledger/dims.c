/* dims: names of the grouping dimensions, and team/project attribution with its fallbacks. */
#include "ledger.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const gc__dim_names[GC_DIM_COUNT] = {
    "namespace", "team", "project", "model", "capacity_type", "node", "pod", "workload",
};

static const struct {
        const char *name;
        gc_dim dim;
} gc__dim_aliases[] = {
    {"ns", GC_DIM_NAMESPACE},
    {"gpu_model", GC_DIM_MODEL},
    {"capacity-type", GC_DIM_CAPACITY_TYPE},
    {"capacity", GC_DIM_CAPACITY_TYPE},
    {"controller", GC_DIM_WORKLOAD},
};

const char *gc_dim_name(gc_dim d)
{
        if ((unsigned)d >= GC_DIM_COUNT)
                return NULL;
        return gc__dim_names[d];
}

static int gc__word_is(const char *name, size_t n, const char *word)
{
        return strlen(word) == n && memcmp(name, word, n) == 0;
}

#define GC__LABEL_PREFIX "label:"

int gc_dim_is_label(const char *name, size_t n, const char **ret_key, size_t *ret_n)
{
        size_t p = sizeof(GC__LABEL_PREFIX) - 1;

        if (!name || n < p || memcmp(name, GC__LABEL_PREFIX, p) != 0)
                return 0;
        if (ret_key)
                *ret_key = name + p;
        if (ret_n)
                *ret_n = n - p;
        return 1;
}

const char *gc_dim_label_name(gc_dim d, const gc_label_keys *lk, char *buf, size_t n)
{
        size_t i = (size_t)d - GC_DIM_LABEL;

        if ((unsigned)d < GC_DIM_COUNT)
                return gc__dim_names[d];
        if ((unsigned)d >= GC_KEY_COUNT || !lk || i >= lk->n || !lk->key[i] || !buf || !n)
                return NULL;
        if ((size_t)snprintf(buf, n, GC__LABEL_PREFIX "%s", lk->key[i]) >= n)
                return NULL;
        return buf;
}

int gc_dim_parse(const char *name, size_t n, gc_dim *ret)
{
        if (!name || !ret)
                return -EINVAL;
        for (size_t d = 0; d < GC_DIM_COUNT; d++) {
                if (gc__word_is(name, n, gc__dim_names[d])) {
                        *ret = (gc_dim)d;
                        return 0;
                }
        }
        for (size_t i = 0; i < sizeof(gc__dim_aliases) / sizeof(gc__dim_aliases[0]); i++) {
                if (gc__word_is(name, n, gc__dim_aliases[i].name)) {
                        *ret = gc__dim_aliases[i].dim;
                        return 0;
                }
        }
        return -EINVAL;
}

static void gc__err(char *err, size_t errlen, const char *what, const char *w, size_t n)
{
        /* Quote at most 64 bytes of the word: it comes from a user and may be long. */
        if (err && errlen)
                snprintf(err, errlen, "%s \"%.*s\"%s", what, n > 64 ? 64 : (int)n, w,
                         n > 64 ? "..." : "");
}

/* The label dimension of key in lk, or -EINVAL with err naming the keys that are kept. */
static int gc__label_dim(const char *key, size_t n, const gc_label_keys *lk, gc_dim *ret, char *err,
                         size_t errlen)
{
        size_t off;

        for (size_t i = 0; lk && i < lk->n && i < GC_LABEL_DIMS; i++) {
                if (n && lk->key[i] && gc__word_is(key, n, lk->key[i])) {
                        *ret = (gc_dim)(GC_DIM_LABEL + i);
                        return 0;
                }
        }
        if (!err || !errlen)
                return -EINVAL;
        snprintf(err, errlen, "label key \"%.*s\"%s is not kept as a dimension",
                 n > 64 ? 64 : (int)n, key, n > 64 ? "..." : "");
        off = strlen(err);
        if (!lk || !lk->n) {
                snprintf(err + off, errlen - off, " (no label keys are kept)");
                return -EINVAL;
        }
        for (size_t i = 0; i < lk->n && off < errlen; i++) {
                snprintf(err + off, errlen - off, "%s%s", i ? ", " : " (kept: ", lk->key[i]);
                off += strlen(err + off);
        }
        if (off < errlen)
                snprintf(err + off, errlen - off, ")");
        return -EINVAL;
}

int gc_dims_parse(const char *csv, const gc_label_keys *lk, gc_dim ret[GC_KEY_COUNT], size_t *ret_n,
                  char *err, size_t errlen)
{
        gc_dim dims[GC_KEY_COUNT];
        size_t n = 0;
        const char *p;

        if (!csv || !ret || !ret_n) {
                if (err && errlen)
                        snprintf(err, errlen, "no dimensions given");
                return -EINVAL;
        }
        if (*csv == '\0') {
                *ret_n = 0;
                return 0;
        }
        for (p = csv;;) {
                const char *end = strchr(p, ',');
                const char *w = p, *key;
                size_t len = end ? (size_t)(end - p) : strlen(p), klen;
                gc_dim d;

                while (len && (*w == ' ' || *w == '\t')) {
                        w++;
                        len--;
                }
                while (len && (w[len - 1] == ' ' || w[len - 1] == '\t'))
                        len--;
                if (len == 0) {
                        if (err && errlen)
                                snprintf(err, errlen, "empty dimension in \"%.64s\"", csv);
                        return -EINVAL;
                }
                if (gc_dim_is_label(w, len, &key, &klen)) {
                        if (gc__label_dim(key, klen, lk, &d, err, errlen) < 0)
                                return -EINVAL;
                } else if (gc_dim_parse(w, len, &d) < 0) {
                        gc__err(err, errlen, "unknown dimension", w, len);
                        return -EINVAL;
                }
                for (size_t i = 0; i < n; i++) {
                        if (dims[i] == d) {
                                gc__err(err, errlen, "duplicate dimension", w, len);
                                return -EINVAL;
                        }
                }
                /* Cannot overflow: every dimension may appear once, and duplicates fail above. */
                dims[n++] = d;
                if (!end)
                        break;
                p = end + 1;
        }
        memcpy(ret, dims, n * sizeof(dims[0]));
        *ret_n = n;
        return 0;
}

/* ---- attribution ---------------------------------------------------------------------------- */

static const char *gc__map_get(const gc_label *m, size_t n, const char *key)
{
        if (!key)
                return NULL;
        for (size_t i = 0; m && i < n; i++)
                if (m[i].key && m[i].value && *m[i].value && strcmp(m[i].key, key) == 0)
                        return m[i].value;
        return NULL;
}

/* An empty label value attributes nothing, so it falls through like an absent one. */
static int gc__set(const char *v)
{
        return v && *v;
}

static const char *gc__pick(const char *pod_v, const char *ns_v, const char *map_v,
                            gc_attr_source *ret_src)
{
        gc_attr_source src = GC_ATTR_NONE;
        const char *v = GC_UNATTRIBUTED;

        if (gc__set(pod_v)) {
                v = pod_v;
                src = GC_ATTR_POD_LABEL;
        } else if (gc__set(ns_v)) {
                v = ns_v;
                src = GC_ATTR_NAMESPACE_LABEL;
        } else if (gc__set(map_v)) {
                v = map_v;
                src = GC_ATTR_CONFIG_MAP;
        }
        if (ret_src)
                *ret_src = src;
        return v;
}

void gc_attribute_labels(const gc_pod *pod, const gc_namespace *ns, const char *ret[GC_LABEL_DIMS])
{
        for (size_t i = 0; i < GC_LABEL_DIMS; i++) {
                const char *v = pod ? pod->labels[i] : NULL;

                if (!gc__set(v))
                        v = ns ? ns->labels[i] : NULL;
                ret[i] = gc__set(v) ? v : NULL;
        }
}

void gc_attribute(const gc_pod *pod, const gc_namespace *ns, const gc_attribution *a,
                  const char **ret_team, gc_attr_source *ret_team_src, const char **ret_project,
                  gc_attr_source *ret_project_src)
{
        const char *pod_ns = pod ? pod->ns : NULL;
        const char *t, *p;

        if (!pod_ns && ns)
                pod_ns = ns->name;
        t = gc__pick(pod ? pod->team : NULL, ns ? ns->team : NULL,
                     a ? gc__map_get(a->ns_teams, a->n_ns_teams, pod_ns) : NULL, ret_team_src);
        p = gc__pick(pod ? pod->project : NULL, ns ? ns->project : NULL,
                     a ? gc__map_get(a->ns_projects, a->n_ns_projects, pod_ns) : NULL,
                     ret_project_src);
        if (ret_team)
                *ret_team = t;
        if (ret_project)
                *ret_project = p;
}
