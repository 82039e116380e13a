/* model decode: one Pod, Node or Namespace (a cJSON tree) into a compact GPU cost record. */
#include "model.h"
#include "model_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Caps on counts, far above anything real, so that no object can make decoding slow. */
#define GC__MAX_CONTAINERS  256
#define GC__MAX_CONDITIONS  64
#define GC__MAX_OWNERS      64
#define GC__MAX_NODE_LABELS 1024
#define GC__MAX_RESOURCES   256
#define GC__GPU_COUNT_MAX   1000000 /* units of one GPU resource */

/* ---- errors and small readers ------------------------------------------------------------- */

/* A short printable rendering of untrusted text for an error message. */
const char *gc__show(const char *s, char *out, size_t outlen)
{
        size_t i = 0;

        for (; s && *s && i + 4 < outlen; s++)
                out[i++] = *s >= 0x20 && *s < 0x7f ? *s : '?';
        if (s && *s && outlen >= 4) {
                memcpy(out + i, "...", 3);
                i += 3;
        }
        out[i] = '\0';
        return out;
}

/* "path.key", or "key" at the top of the object. */
static const char *gc__where(const char *path, const char *key, char *out, size_t outlen)
{
        snprintf(out, outlen, "%s%s%s", path, *path ? "." : "", key);
        return out;
}

/* Printable ASCII; spaces only when allowed. */
int gc__printable(const char *s, int spaces)
{
        for (; *s; s++)
                if ((unsigned char)*s < (spaces ? 0x20 : 0x21) || (unsigned char)*s > 0x7e)
                        return 0;
        return 1;
}

/* An optional string member: absent or null gives NULL. */
int gc__opt_str(const cJSON *obj, const char *key, size_t max, int spaces, const char *path,
                const char **ret, char *err, size_t errlen)
{
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
        char w[160];

        *ret = NULL;
        if (!it || cJSON_IsNull(it))
                return 0;
        if (!cJSON_IsString(it) || !it->valuestring)
                return GC__FAIL(err, errlen, -EINVAL, "%s: not a string",
                                gc__where(path, key, w, sizeof(w)));
        if (strnlen(it->valuestring, max + 1) > max)
                return GC__FAIL(err, errlen, -EINVAL, "%s: longer than %zu bytes",
                                gc__where(path, key, w, sizeof(w)), max);
        if (!gc__printable(it->valuestring, spaces))
                return GC__FAIL(err, errlen, -EINVAL, "%s: not printable ASCII",
                                gc__where(path, key, w, sizeof(w)));
        *ret = it->valuestring;
        return 0;
}

int gc__opt_obj(const cJSON *obj, const char *key, const char *path, const cJSON **ret, char *err,
                size_t errlen)
{
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
        char w[160];

        *ret = NULL;
        if (!it || cJSON_IsNull(it))
                return 0;
        if (!cJSON_IsObject(it))
                return GC__FAIL(err, errlen, -EINVAL, "%s: not an object",
                                gc__where(path, key, w, sizeof(w)));
        *ret = it;
        return 0;
}

int gc__opt_arr(const cJSON *obj, const char *key, int max, const char *path, const cJSON **ret,
                char *err, size_t errlen)
{
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
        char w[160];
        int n = 0;

        *ret = NULL;
        if (!it || cJSON_IsNull(it))
                return 0;
        if (!cJSON_IsArray(it))
                return GC__FAIL(err, errlen, -EINVAL, "%s: not an array",
                                gc__where(path, key, w, sizeof(w)));
        for (const cJSON *c = it->child; c; c = c->next)
                if (++n > max)
                        return GC__FAIL(err, errlen, -E2BIG, "%s: more than %d entries",
                                        gc__where(path, key, w, sizeof(w)), max);
        *ret = it;
        return 0;
}

/* An optional RFC 3339 time: 0 when absent or null, 1 when *ret_sec was set. */
int gc__opt_time(const cJSON *obj, const char *key, const char *path, int64_t *ret_sec, char *err,
                 size_t errlen)
{
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
        char show[48], w[160];

        if (!it || cJSON_IsNull(it))
                return 0;
        if (!cJSON_IsString(it) || !it->valuestring)
                return GC__FAIL(err, errlen, -EINVAL, "%s: not a string",
                                gc__where(path, key, w, sizeof(w)));
        if (gc_time_parse(it->valuestring, strnlen(it->valuestring, 64), ret_sec) < 0)
                return GC__FAIL(err, errlen, -EINVAL, "%s: not an RFC 3339 time: \"%s\"",
                                gc__where(path, key, w, sizeof(w)),
                                gc__show(it->valuestring, show, sizeof(show)));
        return 1;
}

int gc__intern(gc_strpool *pool, const char *s, const char **ret, char *err, size_t errlen)
{
        if (!s) {
                *ret = NULL;
                return 0;
        }
        *ret = gc_strpool_intern0(pool, s);
        if (!*ret)
                return GC__FAIL(err, errlen, -ENOMEM, "string pool full");
        return 0;
}

const char *gc__intern_put(gc__interns *in, const char *s)
{
        const char *ret;

        if (!s || in->err < 0)
                return NULL;
        ret = gc_strpool_intern0(in->pool, s);
        if (!ret)
                in->err = -ENOMEM;
        return ret;
}

int gc__intern_end(const gc__interns *in, char *err, size_t errlen)
{
        return in->err < 0 ? GC__FAIL(err, errlen, in->err, "string pool full") : 0;
}

/*
 * Whole units of an extended resource: a quantity string (or a JSON number, which the API server
 * also accepts). GPU resources cannot be fractional, so "0.5" and "500m" are errors.
 */
static int gc__gpu_count(const cJSON *it, const char *field, int64_t *ret_count, char *err,
                         size_t errlen)
{
        char show[48];
        int64_t milli;

        if (cJSON_IsString(it) && it->valuestring) {
                int r = gc_quantity_parse(it->valuestring, &milli);

                if (r < 0)
                        return GC__FAIL(err, errlen, -EINVAL, "%s: not a quantity: \"%s\"", field,
                                        gc__show(it->valuestring, show, sizeof(show)));
        } else if (cJSON_IsNumber(it)) {
                double v = it->valuedouble;

                if (!isfinite(v) || fabs(v) > 1e12)
                        return GC__FAIL(err, errlen, -EINVAL, "%s: quantity out of range", field);
                if (v != floor(v))
                        return GC__FAIL(err, errlen, -EINVAL, "%s: not a whole number: %g", field,
                                        v);
                milli = (int64_t)v * 1000;
        } else {
                return GC__FAIL(err, errlen, -EINVAL, "%s: not a quantity", field);
        }
        if (milli < 0)
                return GC__FAIL(err, errlen, -EINVAL, "%s: negative", field);
        if (milli % 1000 != 0)
                return GC__FAIL(err, errlen, -EINVAL, "%s: not a whole number: \"%s\"", field,
                                cJSON_IsString(it) ? gc__show(it->valuestring, show, sizeof(show))
                                                   : "?");
        if (milli / 1000 > GC__GPU_COUNT_MAX)
                return GC__FAIL(err, errlen, -ERANGE, "%s: more than %d units", field,
                                GC__GPU_COUNT_MAX);
        *ret_count = milli / 1000;
        return 0;
}

/* A GPU resource name as a record may keep it. */
static int gc__res_name_ok(const char *name, const char *path, char *err, size_t errlen)
{
        char show[48];

        if (strnlen(name, GC__LABEL_KEY_MAX + 1) > GC__LABEL_KEY_MAX || !gc__printable(name, 0))
                return GC__FAIL(err, errlen, -EINVAL, "%s[%s]: not a resource name", path,
                                gc__show(name, show, sizeof(show)));
        return 0;
}

/* ---- the effective request of a pod -----------------------------------------------------------
 */

typedef struct gc__acc {
        const char *name; /* points into the cJSON tree until interned */
        int64_t app;      /* sum over app containers */
        int64_t sidecars; /* sum over restartable init containers so far */
        int64_t init;     /* max over ordinary init containers of (own + sidecars before) */
        int64_t overhead;
} gc__acc;

typedef struct gc__reqs {
        gc__acc r[GC_POD_MAX_GPU_RES];
        size_t n;
        const char *container;       /* first app container asking for a GPU */
        const char *init_container;  /* first init container asking for one */
        const char *claim_container; /* first app container using a ResourceClaim */
} gc__reqs;

static int gc__slot(gc__reqs *q, const char *name, char *err, size_t errlen)
{
        for (size_t i = 0; i < q->n; i++)
                if (strcmp(q->r[i].name, name) == 0)
                        return (int)i;
        if (q->n >= GC_POD_MAX_GPU_RES)
                return GC__FAIL(err, errlen, -E2BIG, "spec: more than %d GPU resources",
                                GC_POD_MAX_GPU_RES);
        memset(&q->r[q->n], 0, sizeof(q->r[0]));
        q->r[q->n].name = name;
        return (int)q->n++;
}

/*
 * The GPU units one container holds, per slot, into units[]. Requests count; a resource only
 * under limits counts its limit (extended resources: requests == limits). The overhead map is
 * passed as `req` with no limits.
 */
static int gc__units(const cJSON *req, const char *req_path, const cJSON *lim, const char *lim_path,
                     const gc_model_opts *o, gc__reqs *q, int64_t units[GC_POD_MAX_GPU_RES],
                     int *ret_any, char *err, size_t errlen)
{
        char field[512];
        int r, any = 0;

        memset(units, 0, sizeof(int64_t) * GC_POD_MAX_GPU_RES);
        for (int pass = 0; pass < 2; pass++) {
                const cJSON *map = pass == 0 ? req : lim;
                const char *path = pass == 0 ? req_path : lim_path;
                int n = 0;

                if (!map)
                        continue;
                for (const cJSON *it = map->child; it; it = it->next) {
                        int64_t count;
                        double geq;
                        int s, est;

                        if (++n > GC__MAX_RESOURCES)
                                return GC__FAIL(err, errlen, -E2BIG, "%s: more than %d entries",
                                                path, GC__MAX_RESOURCES);
                        if (!it->string || !gc_res_table_match(o->res, it->string))
                                continue;
                        if (pass == 1 && req && cJSON_GetObjectItemCaseSensitive(req, it->string))
                                continue;
                        r = gc__res_name_ok(it->string, path, err, errlen);
                        if (r < 0)
                                return r;
                        snprintf(field, sizeof(field), "%s[%s]", path, it->string);
                        /* A name the table matches but no share can be given to (mig-foo). */
                        if (gc_gpu_equivalents(o->res, it->string, 0, NULL, &geq, &est) < 0)
                                return GC__FAIL(err, errlen, -EINVAL, "%s: not a GPU resource form",
                                                field);
                        r = gc__gpu_count(it, field, &count, err, errlen);
                        if (r < 0)
                                return r;
                        if (count == 0)
                                continue;
                        s = gc__slot(q, it->string, err, errlen);
                        if (s < 0)
                                return s;
                        units[s] = count;
                        any = 1;
                }
        }
        *ret_any = any;
        return 0;
}

static int gc__containers(const cJSON *spec, const gc_model_opts *o, gc__reqs *q, int init,
                          char *err, size_t errlen)
{
        const char *key = init ? "initContainers" : "containers";
        const cJSON *arr;
        int r, i = 0;

        r = gc__opt_arr(spec, key, GC__MAX_CONTAINERS, "spec", &arr, err, errlen);
        if (r < 0 || !arr)
                return r;
        for (const cJSON *c = arr->child; c; c = c->next, i++) {
                int64_t units[GC_POD_MAX_GPU_RES];
                const cJSON *res, *req = NULL, *lim = NULL;
                const char *name = NULL, *policy = NULL;
                char path[96], rpath[112], qpath[128], lpath[128];
                int any = 0;

                snprintf(path, sizeof(path), "spec.%s[%d]", key, i);
                if (!cJSON_IsObject(c))
                        return GC__FAIL(err, errlen, -EINVAL, "%s: not an object", path);
                snprintf(rpath, sizeof(rpath), "%s.resources", path);
                snprintf(qpath, sizeof(qpath), "%s.requests", rpath);
                snprintf(lpath, sizeof(lpath), "%s.limits", rpath);
                r = gc__opt_obj(c, "resources", path, &res, err, errlen);
                if (r == 0 && res)
                        r = gc__opt_obj(res, "requests", rpath, &req, err, errlen);
                if (r == 0 && res)
                        r = gc__opt_obj(res, "limits", rpath, &lim, err, errlen);
                if (r == 0)
                        r = gc__units(req, qpath, lim, lpath, o, q, units, &any, err, errlen);
                if (r == 0)
                        r = gc__opt_str(c, "name", GC__LABEL_VALUE_MAX, 0, path, &name, err,
                                        errlen);
                if (r == 0 && init)
                        r = gc__opt_str(c, "restartPolicy", 32, 0, path, &policy, err, errlen);
                if (r < 0)
                        return r;
                if (any && !init && !q->container)
                        q->container = name;
                if (any && init && !q->init_container)
                        q->init_container = name;
                if (!init && !q->claim_container && res) {
                        const cJSON *cl = cJSON_GetObjectItemCaseSensitive(res, "claims");

                        if (cJSON_IsArray(cl) && cl->child)
                                q->claim_container = name;
                }
                for (size_t s = 0; s < q->n; s++) {
                        if (!init) {
                                q->r[s].app += units[s];
                        } else if (policy && strcmp(policy, "Always") == 0) {
                                q->r[s].sidecars += units[s]; /* a sidecar runs to the end */
                        } else if (units[s] + q->r[s].sidecars > q->r[s].init) {
                                q->r[s].init = units[s] + q->r[s].sidecars;
                        }
                }
        }
        return 0;
}

/* The pod's effective request per GPU resource (Kubernetes resource rules). */
static int gc__pod_reqs(const cJSON *spec, const gc_model_opts *o, gc__reqs *q, char *err,
                        size_t errlen)
{
        int64_t units[GC_POD_MAX_GPU_RES] = {0};
        const cJSON *over = NULL;
        int r, any = 0;

        memset(q, 0, sizeof(*q));
        if (!spec)
                return 0;
        /* Init containers first: a sidecar counts for the ordinary init containers after it. */
        r = gc__containers(spec, o, q, 1, err, errlen);
        if (r == 0)
                r = gc__containers(spec, o, q, 0, err, errlen);
        if (r == 0)
                r = gc__opt_obj(spec, "overhead", "spec", &over, err, errlen);
        if (r == 0 && over)
                r = gc__units(over, "spec.overhead", NULL, NULL, o, q, units, &any, err, errlen);
        if (r < 0)
                return r;
        for (size_t s = 0; over && s < q->n; s++)
                q->r[s].overhead += units[s];
        return 0;
}

/* ---- labels ------------------------------------------------------------------------------ */

int gc__label_ok(const char *key, const char *value, char *err, size_t errlen)
{
        char show[48];

        if (strnlen(key, GC__LABEL_KEY_MAX + 1) > GC__LABEL_KEY_MAX || !*key ||
            !gc__printable(key, 0))
                return GC__FAIL(err, errlen, -EINVAL, "metadata.labels[%s]: not a label key",
                                gc__show(key, show, sizeof(show)));
        if (strnlen(value, GC__LABEL_VALUE_MAX + 1) > GC__LABEL_VALUE_MAX)
                return GC__FAIL(err, errlen, -EINVAL,
                                "metadata.labels[%s]: value longer than %d bytes", key,
                                GC__LABEL_VALUE_MAX);
        if (!gc__printable(value, 0))
                return GC__FAIL(err, errlen, -EINVAL, "metadata.labels[%s]: value not printable",
                                key);
        return 0;
}

/* The value of the first of keys[] present (non-empty) in labels, interned. */
static int gc__first_label(const cJSON *labels, const char *const *keys, size_t n, gc_strpool *pool,
                           const char **ret, char *err, size_t errlen)
{
        *ret = NULL;
        for (size_t i = 0; labels && keys && i < n; i++) {
                const cJSON *it;
                int r;

                if (!keys[i])
                        continue;
                it = cJSON_GetObjectItemCaseSensitive(labels, keys[i]);
                if (!it || cJSON_IsNull(it))
                        continue;
                if (!cJSON_IsString(it) || !it->valuestring)
                        return GC__FAIL(err, errlen, -EINVAL, "metadata.labels[%s]: not a string",
                                        keys[i]);
                r = gc__label_ok(keys[i], it->valuestring, err, errlen);
                if (r < 0)
                        return r;
                if (!*it->valuestring)
                        continue; /* an empty team says nothing */
                return gc__intern(pool, it->valuestring, ret, err, errlen);
        }
        return 0;
}

/* Team, project and the kept label keys' values (gc_model_opts) from a pod's or namespace's
 * labels, interned. */
static int gc__attribution(const cJSON *labels, const gc_model_opts *o, const char **team,
                           const char **project, const char *values[GC_LABEL_DIMS], char *err,
                           size_t errlen)
{
        int r;

        r = gc__first_label(labels, o->team_keys, o->n_team_keys, o->pool, team, err, errlen);
        if (r == 0)
                r = gc__first_label(labels, o->project_keys, o->n_project_keys, o->pool, project,
                                    err, errlen);
        for (size_t i = 0; r == 0 && i < o->n_label_keys && i < GC_LABEL_DIMS; i++)
                r = gc__first_label(labels, &o->label_keys[i], 1, o->pool, &values[i], err, errlen);
        return r;
}

int gc__opts_ok(const cJSON *obj, const gc_model_opts *o, const void *ret, char *err, size_t errlen)
{
        if (!o || !o->pool || !o->res || !ret)
                return GC__FAIL(err, errlen, -EINVAL, "missing decoder options");
        if (!cJSON_IsObject(obj))
                return GC__FAIL(err, errlen, -EINVAL, "not an object");
        return 0;
}

/* ---- pods ---------------------------------------------------------------------------------- */

static gc_phase gc__phase(const char *s)
{
        if (!s || strcmp(s, "Pending") == 0)
                return GC_PHASE_PENDING;
        if (strcmp(s, "Running") == 0)
                return GC_PHASE_RUNNING;
        if (strcmp(s, "Succeeded") == 0)
                return GC_PHASE_SUCCEEDED;
        if (strcmp(s, "Failed") == 0)
                return GC_PHASE_FAILED;
        return GC_PHASE_UNKNOWN;
}

/* The latest state.terminated.finishedAt over one containerStatuses array; 0 when none. */
/* The latest finishedAt of the containers under key; *unfinished counts those not terminated. */
static int gc__latest_finish(const cJSON *status, const char *key, int64_t *latest, int *unfinished,
                             char *err, size_t errlen)
{
        const cJSON *arr;
        int r, i = 0;

        r = gc__opt_arr(status, key, GC__MAX_CONTAINERS, "status", &arr, err, errlen);
        if (r < 0 || !arr)
                return r;
        for (const cJSON *c = arr->child; c; c = c->next, i++) {
                const cJSON *state = NULL, *term = NULL;
                char path[96];
                int64_t t = 0;

                snprintf(path, sizeof(path), "status.%s[%d]", key, i);
                if (!cJSON_IsObject(c))
                        return GC__FAIL(err, errlen, -EINVAL, "%s: not an object", path);
                /* No state, no state.terminated or no finishedAt: still running. */
                r = gc__opt_obj(c, "state", path, &state, err, errlen);
                if (r == 0 && state) {
                        snprintf(path, sizeof(path), "status.%s[%d].state", key, i);
                        r = gc__opt_obj(state, "terminated", path, &term, err, errlen);
                }
                if (r == 0 && term) {
                        snprintf(path, sizeof(path), "status.%s[%d].state.terminated", key, i);
                        r = gc__opt_time(term, "finishedAt", path, &t, err, errlen);
                }
                if (r < 0)
                        return r;
                if (r != 1)
                        (*unfinished)++;
                else if (t > *latest)
                        *latest = t;
        }
        return 0;
}

/* PodScheduled=True time and the latest transition of any condition. */
static int gc__conditions(const cJSON *status, int64_t *ret_sched, int64_t *ret_latest, char *err,
                          size_t errlen)
{
        const cJSON *arr;
        int r, i = 0;

        *ret_sched = 0;
        *ret_latest = 0;
        r = gc__opt_arr(status, "conditions", GC__MAX_CONDITIONS, "status", &arr, err, errlen);
        if (r < 0 || !arr)
                return r;
        for (const cJSON *c = arr->child; c; c = c->next, i++) {
                const char *type = NULL, *st = NULL;
                char path[64];
                int64_t t = 0;

                snprintf(path, sizeof(path), "status.conditions[%d]", i);
                if (!cJSON_IsObject(c))
                        return GC__FAIL(err, errlen, -EINVAL, "%s: not an object", path);
                r = gc__opt_str(c, "type", 316, 0, path, &type, err, errlen);
                if (r == 0)
                        r = gc__opt_str(c, "status", 16, 0, path, &st, err, errlen);
                if (r == 0)
                        r = gc__opt_time(c, "lastTransitionTime", path, &t, err, errlen);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                if (t > *ret_latest)
                        *ret_latest = t;
                if (type && st && strcmp(type, "PodScheduled") == 0 && strcmp(st, "True") == 0)
                        *ret_sched = t;
        }
        return 0;
}

int gc__controller_ref(const cJSON *meta, const char **ret_kind, const char **ret_name,
                       const char **ret_uid, char *err, size_t errlen)
{
        const cJSON *arr;
        int r, i = 0;

        *ret_kind = NULL;
        *ret_name = NULL;
        *ret_uid = NULL;
        r = gc__opt_arr(meta, "ownerReferences", GC__MAX_OWNERS, "metadata", &arr, err, errlen);
        if (r < 0 || !arr)
                return r;
        for (const cJSON *c = arr->child; c; c = c->next, i++) {
                char path[64];

                snprintf(path, sizeof(path), "metadata.ownerReferences[%d]", i);
                if (!cJSON_IsObject(c))
                        return GC__FAIL(err, errlen, -EINVAL, "%s: not an object", path);
                if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "controller")))
                        continue;
                r = gc__opt_str(c, "kind", GC__LABEL_VALUE_MAX, 0, path, ret_kind, err, errlen);
                if (r == 0)
                        r = gc__opt_str(c, "name", GC__NAME_MAX, 0, path, ret_name, err, errlen);
                if (r == 0)
                        r = gc__opt_str(c, "uid", GC__UID_MAX, 0, path, ret_uid, err, errlen);
                if (r == 0 && (!*ret_kind || !**ret_kind || !*ret_name || !**ret_name)) {
                        /* A controller reference must name its owner; one that does not is
                           treated as none. */
                        *ret_kind = *ret_name = *ret_uid = NULL;
                }
                return r;
        }
        return 0;
}

static int gc__controller(const cJSON *meta, gc_strpool *pool, gc_pod *p, char *err, size_t errlen)
{
        gc__interns in = {pool, 0};
        const char *kind, *name, *uid;
        int r;

        r = gc__controller_ref(meta, &kind, &name, &uid, err, errlen);
        if (r < 0)
                return r;
        p->controller_kind = gc__intern_put(&in, kind);
        p->controller = gc__intern_put(&in, name);
        p->controller_uid = gc__intern_put(&in, uid && *uid ? uid : NULL);
        return gc__intern_end(&in, err, errlen);
}

#define GC__MAX_POD_CLAIMS 128 /* far above a real pod's; each name at most 253 bytes */

/* Appends a claim name to the pod's list once. */
static int gc__claim_add(gc_buf *b, const char *name, char *err, size_t errlen)
{
        const char *cur = NULL, *s;
        size_t n, len = strlen(name);
        int r;

        while (b->data && gc_list_next(b->data, ' ', &cur, &s, &n))
                if (n == len && memcmp(s, name, n) == 0)
                        return 0;
        r = b->len ? gc_buf_puts(b, " ") : 0;
        if (r == 0)
                r = gc_buf_puts(b, name);
        return r < 0 ? GC__FAIL(err, errlen, r, "spec.resourceClaims: too many claims") : 0;
}

/*
 * The pod's ResourceClaims: spec.resourceClaims[] names one (resourceClaimName), or a template
 * whose generated claim status.resourceClaimStatuses[] names (none yet: not counted); then the
 * claim Kubernetes made for an extended resource (status.extendedResourceClaimStatus), whose
 * mapped resources are then no longer counted from the device-plugin request: the GPU counts
 * once, through its claim.
 */
static int gc__pod_claims(const cJSON *spec, const cJSON *status, gc_strpool *pool, gc_pod *p,
                          char *err, size_t errlen)
{
        const cJSON *arr = NULL, *sts = NULL, *ext = NULL, *maps = NULL;
        const char *ext_name = NULL;
        gc_buf b;
        int r, i = 0;

        r = gc__opt_arr(spec, "resourceClaims", GC__MAX_POD_CLAIMS, "spec", &arr, err, errlen);
        if (r == 0 && status)
                r = gc__opt_arr(status, "resourceClaimStatuses", GC__MAX_POD_CLAIMS, "status", &sts,
                                err, errlen);
        if (r == 0 && status)
                r = gc__opt_obj(status, "extendedResourceClaimStatus", "status", &ext, err, errlen);
        if (r < 0 || (!arr && !ext))
                return r;
        gc_buf_init(&b, (size_t)(GC__MAX_POD_CLAIMS + 1) * (GC__NAME_MAX + 1));
        for (const cJSON *c = arr ? arr->child : NULL; c; c = c->next, i++) {
                const char *name = NULL, *claim = NULL, *tmpl = NULL;
                char path[48];
                int k = 0;

                snprintf(path, sizeof(path), "spec.resourceClaims[%d]", i);
                if (!cJSON_IsObject(c)) {
                        r = GC__FAIL(err, errlen, -EINVAL, "%s: not an object", path);
                        goto done;
                }
                r = gc__opt_str(c, "name", GC__LABEL_VALUE_MAX, 0, path, &name, err, errlen);
                if (r == 0)
                        r = gc__opt_str(c, "resourceClaimName", GC__NAME_MAX, 0, path, &claim, err,
                                        errlen);
                if (r == 0)
                        r = gc__opt_str(c, "resourceClaimTemplateName", GC__NAME_MAX, 0, path,
                                        &tmpl, err, errlen);
                if (r == 0 && !name)
                        r = GC__FAIL(err, errlen, -EINVAL, "%s.name: missing", path);
                if (r < 0)
                        goto done;
                for (const cJSON *st = sts ? sts->child : NULL; !claim && tmpl && st;
                     st = st->next, k++) {
                        const char *sn = NULL, *sc = NULL;
                        char spath[48];

                        snprintf(spath, sizeof(spath), "status.resourceClaimStatuses[%d]", k);
                        if (!cJSON_IsObject(st)) {
                                r = GC__FAIL(err, errlen, -EINVAL, "%s: not an object", spath);
                                goto done;
                        }
                        r = gc__opt_str(st, "name", GC__LABEL_VALUE_MAX, 0, spath, &sn, err,
                                        errlen);
                        if (r == 0)
                                r = gc__opt_str(st, "resourceClaimName", GC__NAME_MAX, 0, spath,
                                                &sc, err, errlen);
                        if (r < 0)
                                goto done;
                        if (sn && strcmp(sn, name) == 0)
                                claim = sc;
                }
                if (!claim || !*claim)
                        continue;
                r = gc__claim_add(&b, claim, err, errlen);
                if (r < 0)
                        goto done;
        }
        if (ext) {
                r = gc__opt_str(ext, "resourceClaimName", GC__NAME_MAX, 0,
                                "status.extendedResourceClaimStatus", &ext_name, err, errlen);
                if (r == 0)
                        r = gc__opt_arr(ext, "requestMappings", GC__MAX_CONTAINERS * 4,
                                        "status.extendedResourceClaimStatus", &maps, err, errlen);
                if (r == 0 && ext_name && *ext_name)
                        r = gc__claim_add(&b, ext_name, err, errlen);
                if (r < 0)
                        goto done;
        }
        for (const cJSON *m = maps ? maps->child : NULL; ext_name && *ext_name && m; m = m->next) {
                const cJSON *res = cJSON_GetObjectItemCaseSensitive(m, "resourceName");

                if (!cJSON_IsString(res) || !res->valuestring)
                        continue;
                for (size_t g = 0; g < p->n_gpu; g++) {
                        if (strcmp(p->gpu[g].resource, res->valuestring) != 0)
                                continue;
                        memmove(&p->gpu[g], &p->gpu[g + 1], (p->n_gpu - g - 1) * sizeof(p->gpu[0]));
                        p->n_gpu--;
                        break;
                }
        }
        if (b.len)
                r = gc__intern(pool, b.data, &p->claims, err, errlen);
done:
        gc_buf_free(&b);
        return r;
}

/* The resources HAMi's scheduler serves (Project-HAMi/HAMi charts/hami/values.yaml): a pod
 * that HAMi allocated holds them through its allocation, not as device-plugin units. */
static const char *const gc__hami_resources[] = {
    "nvidia.com/gpu", "nvidia.com/gpumem", "nvidia.com/gpumem-percentage", "nvidia.com/gpucores"};

/*
 * HAMi's allocation (annotation hami.io/vgpu-devices-allocated): checked and kept, the pod's
 * claims name it (GC_HAMI_CLAIM_PREFIX<name>), and HAMi's resources leave its device-plugin
 * request, so its GPU counts once, by what it was allocated.
 */
static int gc__pod_hami(const cJSON *annotations, gc_strpool *pool, gc_pod *p, char *err,
                        size_t errlen)
{
        const char *alloc = NULL;
        char why[256];
        gc_buf b;
        int r;

        r = gc__opt_str(annotations, GC_HAMI_ALLOCATED, GC_HAMI_ANNOTATION_MAX, 0,
                        "metadata.annotations", &alloc, err, errlen);
        if (r < 0 || !alloc)
                return r;
        r = gc__hami_alloc_check(alloc, why, sizeof(why));
        if (r < 0)
                return GC__FAIL(err, errlen, r, "metadata.annotations[%s]: %s", GC_HAMI_ALLOCATED,
                                why);
        if (r == 0)
                return 0; /* nothing allocated (yet): the request is what it holds */
        for (size_t i = 0; i < sizeof(gc__hami_resources) / sizeof(gc__hami_resources[0]); i++)
                for (size_t g = 0; g < p->n_gpu; g++) {
                        if (strcmp(p->gpu[g].resource, gc__hami_resources[i]) != 0)
                                continue;
                        memmove(&p->gpu[g], &p->gpu[g + 1], (p->n_gpu - g - 1) * sizeof(p->gpu[0]));
                        p->n_gpu--;
                        break;
                }
        gc_buf_init(&b, (size_t)(GC__MAX_POD_CLAIMS + 2) * (GC__NAME_MAX + 16));
        r = p->claims ? gc_buf_printf(&b, "%s ", p->claims) : 0;
        if (r == 0)
                r = gc_buf_printf(&b, "%s%s", GC_HAMI_CLAIM_PREFIX, p->name);
        if (r == 0)
                r = gc__intern(pool, b.data, &p->claims, err, errlen);
        else
                r = GC__FAIL(err, errlen, r, "spec.resourceClaims: too many claims");
        gc_buf_free(&b);
        if (r == 0)
                r = gc__intern(pool, alloc, &p->hami_alloc, err, errlen);
        return r;
}

int gc_pod_from_json(const cJSON *obj, const gc_model_opts *o, gc_pod *ret, char *err,
                     size_t errlen)
{
        const cJSON *spec = NULL, *status = NULL;
        const char *s_node = NULL, *s_phase = NULL;
        int64_t sched = 0, latest_cond = 0, start = 0, finish = 0;
        char key[GC__LABEL_VALUE_MAX + GC__NAME_MAX + 2];
        gc__interns in;
        gc__meta m;
        gc__reqs q;
        gc_pod p;
        int r;

        memset(&q, 0, sizeof(q));
        r = gc__opts_ok(obj, o, ret, err, errlen);
        if (r < 0)
                return r;
        r = gc__opt_obj(obj, "spec", "", &spec, err, errlen);
        if (r == 0)
                r = gc__pod_reqs(spec, o, &q, err, errlen);
        if (r < 0)
                return r;

        memset(&p, 0, sizeof(p));
        for (size_t i = 0; i < q.n; i++) {
                int64_t app = q.r[i].app + q.r[i].sidecars;
                int64_t eff = (app > q.r[i].init ? app : q.r[i].init) + q.r[i].overhead;

                if (eff == 0)
                        continue;
                r = gc__intern(o->pool, q.r[i].name, &p.gpu[p.n_gpu].resource, err, errlen);
                if (r < 0)
                        return r;
                p.gpu[p.n_gpu++].count = eff;
        }
        r = gc__opt_obj(obj, "status", "", &status, err, errlen);
        if (r == 0)
                r = gc__pod_claims(spec, status, o->pool, &p, err, errlen);
        if (r < 0)
                return r;
        if (p.n_gpu == 0 && !p.claims)
                return 0;

        r = gc__meta_read(obj,
                          GC__META_NS | GC__META_UID | GC__META_CREATED | GC__META_DELETING |
                              GC__META_LABELS | GC__META_ANNOTATIONS,
                          &m, err, errlen);
        if (r == 0)
                r = gc__opt_str(spec, "nodeName", GC__NAME_MAX, 0, "spec", &s_node, err, errlen);
        if (r < 0)
                return r;
        p.created_at = m.created_at;
        p.deleting_at = m.deleting_at;

        /* A manifest without a uid: namespace/name is unique while the object exists. */
        if (!m.uid)
                snprintf(key, sizeof(key), "%s/%s", m.ns, m.name);
        in = (gc__interns){o->pool, 0};
        p.name = gc__intern_put(&in, m.name);
        p.ns = gc__intern_put(&in, m.ns);
        p.uid = gc__intern_put(&in, m.uid ? m.uid : key);
        p.node = gc__intern_put(&in, s_node);
        p.container = gc__intern_put(&in, q.container        ? q.container
                                          : q.init_container ? q.init_container
                                                             : q.claim_container);
        r = gc__intern_end(&in, err, errlen);
        if (r == 0 && m.annotations)
                r = gc__pod_hami(m.annotations, o->pool, &p, err, errlen);
        if (r == 0)
                r = gc__attribution(m.labels, o, &p.team, &p.project, p.labels, err, errlen);
        if (r == 0)
                r = gc__controller(m.meta, o->pool, &p, err, errlen);
        if (r == 0)
                r = gc__workload_labels(m.labels, p.ns, o->pool, &p.template_hash, &p.workload_hint,
                                        err, errlen);
        if (r < 0)
                return r;

        s_phase = NULL;
        if (status) {
                r = gc__opt_str(status, "phase", 32, 0, "status", &s_phase, err, errlen);
                if (r == 0)
                        r = gc__conditions(status, &sched, &latest_cond, err, errlen);
                if (r == 0 && gc__opt_time(status, "startTime", "status", &start, err, errlen) < 0)
                        r = -EINVAL;
                if (r < 0)
                        return r;
        }
        p.phase = gc__phase(s_phase);

        if (sched) {
                p.bound_at = sched;
        } else if (p.node) {
                /* Bound, but the API kept no PodScheduled time (e.g. a pod given a nodeName). */
                p.bound_at = start ? start : p.created_at;
                p.flags |= GC_POD_F_BOUND_GUESSED;
        }

        if (status && p.phase != GC_PHASE_SUCCEEDED && p.phase != GC_PHASE_FAILED) {
                const cJSON *cs = cJSON_GetObjectItemCaseSensitive(status, "containerStatuses");
                int unfinished = 0;
                int64_t done = 0;

                /* Every app container has stopped (e.g. a pod being deleted): when it did. */
                r = gc__latest_finish(status, "containerStatuses", &done, &unfinished, err, errlen);
                if (r < 0)
                        return r;
                if (cJSON_GetArraySize(cs) > 0 && unfinished == 0)
                        p.terminated_at = done < p.bound_at ? p.bound_at : done;
        }
        if (p.phase == GC_PHASE_SUCCEEDED || p.phase == GC_PHASE_FAILED) {
                int unfinished = 0;

                r = gc__latest_finish(status, "containerStatuses", &finish, &unfinished, err,
                                      errlen);
                if (r == 0)
                        r = gc__latest_finish(status, "initContainerStatuses", &finish, &unfinished,
                                              err, errlen);
                if (r < 0)
                        return r;
                if (!finish) {
                        int64_t guess = latest_cond;

                        if (!guess)
                                guess = start > p.bound_at ? start : p.bound_at;
                        if (!guess)
                                guess = p.created_at;
                        finish = guess;
                        p.flags |= GC_POD_F_END_GUESSED;
                }
                /* Clocks of kubelet and scheduler differ: never end before the start. */
                if (p.bound_at && finish < p.bound_at)
                        finish = p.bound_at;
                p.finished_at = finish;
        }
        *ret = p;
        return 1;
}

/* ---- nodes --------------------------------------------------------------------------------- */

const char *gc_node_label(const gc_node *n, const char *key)
{
        if (!n || !key)
                return NULL;
        for (size_t i = 0; i < n->n_labels; i++)
                if (n->labels[i].key && strcmp(n->labels[i].key, key) == 0)
                        return n->labels[i].value;
        return NULL;
}

void gc_node_release(gc_node *n)
{
        if (!n)
                return;
        free(n->labels);
        n->labels = NULL;
        n->n_labels = 0;
}

/* A non-negative integer label; 0 when absent. */
static int gc__int_label(const gc_node *n, const char *key, int64_t max, int64_t *ret, char *err,
                         size_t errlen)
{
        const char *v = gc_node_label(n, key);
        char show[48];
        int64_t x;

        *ret = 0;
        if (!v || !*v)
                return 0;
        if (gc_parse_int64(v, &x) < 0 || x < 0 || x > max)
                return GC__FAIL(err, errlen, -EINVAL, "metadata.labels[%s]: not a count: \"%s\"",
                                key, gc__show(v, show, sizeof(show)));
        *ret = x;
        return 0;
}

/* Copies all labels into a malloc'd array of pooled strings. */
static int gc__node_labels(const cJSON *labels, gc_strpool *pool, gc_node *n, char *err,
                           size_t errlen)
{
        size_t count = 0, i = 0;
        int r;

        if (!labels)
                return 0;
        for (const cJSON *c = labels->child; c; c = c->next)
                if (++count > GC__MAX_NODE_LABELS)
                        return GC__FAIL(err, errlen, -E2BIG, "metadata.labels: more than %d",
                                        GC__MAX_NODE_LABELS);
        if (count == 0)
                return 0;
        n->labels = calloc(count, sizeof(*n->labels));
        if (!n->labels)
                return GC__FAIL(err, errlen, -ENOMEM, "out of memory");
        for (const cJSON *c = labels->child; c; c = c->next) {
                char show[48];

                if (!c->string)
                        continue;
                if (!cJSON_IsString(c) || !c->valuestring)
                        return GC__FAIL(err, errlen, -EINVAL, "metadata.labels[%s]: not a string",
                                        gc__show(c->string, show, sizeof(show)));
                r = gc__label_ok(c->string, c->valuestring, err, errlen);
                if (r == 0)
                        r = gc__intern(pool, c->string, &n->labels[i].key, err, errlen);
                if (r == 0)
                        r = gc__intern(pool, c->valuestring, &n->labels[i].value, err, errlen);
                if (r < 0)
                        return r;
                i++;
        }
        n->n_labels = i;
        return 0;
}

/* Product, physical model, MIG-single profile and replicas from the GPU Feature Discovery. */
static int gc__node_gfd(gc_node *n, gc_strpool *pool, char *err, size_t errlen)
{
        const char *prod = gc_node_label(n, "nvidia.com/gpu.product");
        int64_t reps;
        int r;

        n->product = prod;
        n->mig_strategy = gc_node_label(n, "nvidia.com/mig.strategy");
        if (prod) {
                char model[GC__LABEL_VALUE_MAX + 1];
                size_t len = gc_strlcpy(model, prod, sizeof(model));
                char *mig;

                if (len >= 7 && strcmp(model + len - 7, "-SHARED") == 0)
                        model[len - 7] = '\0';
                mig = strstr(model, "-MIG-");
                if (mig) {
                        *mig = '\0';
                        if (mig[5]) {
                                r = gc__intern(pool, mig + 5, &n->mig_single_profile, err, errlen);
                                if (r < 0)
                                        return r;
                        }
                }
                r = gc__intern(pool, model, &n->gpu_model, err, errlen);
                if (r < 0)
                        return r;
        } else {
                /* GKE names the accelerator and the MIG partition in labels of its own. */
                n->gpu_model = gc_node_label(n, "cloud.google.com/gke-accelerator");
        }
        if (!n->mig_single_profile)
                n->mig_single_profile = gc_node_label(n, "cloud.google.com/gke-gpu-partition-size");
        if (n->mig_single_profile && !*n->mig_single_profile)
                n->mig_single_profile = NULL;

        r = gc__int_label(n, "nvidia.com/gpu.replicas", GC__GPU_COUNT_MAX, &reps, err, errlen);
        if (r == 0 && reps <= 1)
                r = gc__int_label(n, "cloud.google.com/gke-max-shared-clients-per-gpu",
                                  GC__GPU_COUNT_MAX, &reps, err, errlen);
        if (r == 0)
                r = gc__int_label(n, "nvidia.com/gpu.count", GC__GPU_COUNT_MAX, &n->gpu_count, err,
                                  errlen);
        if (r == 0)
                r = gc__int_label(n, "nvidia.com/gpu.memory", INT64_C(1) << 40, &n->gpu_memory_mib,
                                  err, errlen);
        if (r < 0)
                return r;
        n->replicas = reps > 1 ? reps : 1;
        return 0;
}

/*
 * NeuronCores per Neuron device by instance family, for a node that offers neuroncore without a
 * device count to divide by (AWS Neuron docs, "Neuron hardware": Inferentia 4 NeuronCore-v1,
 * Inferentia2 and Trainium 2 NeuronCore-v2 each; Trainium2 8 NeuronCore-v3, shown as 4 logical
 * cores under the default logical NeuronCore configuration LNC=2, which a node may change).
 */
static const struct {
        const char *prefix;
        uint8_t cores;
        uint8_t estimate;
} gc__neuron_families[] = {
    {"inf1.", 4, 0},  {"inf2.", 2, 0}, {"trn1.", 2, 0},
    {"trn1n.", 2, 0}, {"trn2.", 4, 1}, {"trn2u.", 4, 1},
};

static int64_t gc__label_count(const gc_node *n, const char *key, const char *beta)
{
        const char *v = gc_node_label(n, key);
        int64_t x;

        if (!v && beta)
                v = gc_node_label(n, beta);
        return v && gc_parse_int64(v, &x) == 0 && x > 0 && x <= GC__GPU_COUNT_MAX ? x : 0;
}

/*
 * Another vendor's accelerators (docs/model.md, "Other accelerators"): the model from the
 * vendor's labels when GPU Feature Discovery gave none, and how many units of a partitioned
 * device's resource make one device: an AMD GPU's compute partitions (the node labeller's
 * partition label, else its compute-unit count), a Neuron device's cores (allocatable cores
 * over devices, else the instance family). Labels that do not parse are ignored, not errors:
 * they only refine a figure that has a default.
 */
static int gc__node_accel(gc_node *n, const gc_model_opts *o, char *err, size_t errlen)
{
        int64_t neuron_devices = 0, neuron_cores = 0, parts = 1;
        char model[GC__LABEL_VALUE_MAX + 16];
        const char *src;
        int amd = 0, est = 0, r;

        for (size_t i = 0; i < n->n_alloc; i++) {
                const gc_res_rule *rule = gc_res_table_match(o->res, n->alloc[i].resource);

                if (!rule)
                        continue;
                if (rule->kind == GC_RES_AMD)
                        amd = 1;
                else if (rule->kind == GC_RES_NEURON && n->alloc[i].count > neuron_devices)
                        neuron_devices = n->alloc[i].count;
                else if (rule->kind == GC_RES_NEURONCORE)
                        neuron_cores = n->alloc[i].count;
        }
        if (!n->gpu_model && gc_accel_model(n, model, sizeof(model), &src) == 0) {
                r = gc__intern(o->pool, model, &n->gpu_model, err, errlen);
                if (r < 0)
                        return r;
        }
        if (amd) {
                /* The labeller's code writes amd.com/gpu.compute-memory-partition; its docs and
                 * the GPU Operator name amd.com/compute-memory-partition. Either is read. */
                const char *mode = gc_node_label(n, "amd.com/gpu.compute-memory-partition");
                int64_t cus =
                    gc__label_count(n, "amd.com/gpu.cu-count", "beta.amd.com/gpu.cu-count");

                if (!mode)
                        mode = gc_node_label(n, "amd.com/compute-memory-partition");
                if (gc_amd_partitions(n->gpu_model, mode, cus, &parts, &est) < 0 &&
                    gc_amd_partitions(n->gpu_model, NULL, cus, &parts, &est) < 0)
                        parts = 1;
        } else if (neuron_cores > 0) {
                const char *itype = gc_node_label(n, "node.kubernetes.io/instance-type");

                if (!itype)
                        itype = gc_node_label(n, "beta.kubernetes.io/instance-type");
                parts = 2;
                est = 1;
                if (neuron_devices > 0 && neuron_cores >= neuron_devices &&
                    neuron_cores % neuron_devices == 0) {
                        parts = neuron_cores / neuron_devices;
                        est = 0;
                } else {
                        for (size_t i = 0; itype && i < sizeof(gc__neuron_families) /
                                                            sizeof(gc__neuron_families[0]);
                             i++) {
                                if (strncmp(itype, gc__neuron_families[i].prefix,
                                            strlen(gc__neuron_families[i].prefix)) == 0) {
                                        parts = gc__neuron_families[i].cores;
                                        est = gc__neuron_families[i].estimate;
                                }
                        }
                }
        }
        n->units_per_device = (uint16_t)(parts >= 1 && parts <= 1000 ? parts : 1);
        n->units_estimate = (uint8_t)est;
        return 0;
}

static int gc__node_alloc(const cJSON *status, const gc_model_opts *o, gc_node *n, char *err,
                          size_t errlen)
{
        const cJSON *alloc = NULL;
        const char *which = "allocatable";
        char field[400];
        int r, count = 0;

        if (!status)
                return 0;
        r = gc__opt_obj(status, "allocatable", "status", &alloc, err, errlen);
        if (r == 0 && !alloc) {
                which = "capacity";
                r = gc__opt_obj(status, "capacity", "status", &alloc, err, errlen);
        }
        if (r < 0 || !alloc)
                return r;
        for (const cJSON *it = alloc->child; it; it = it->next) {
                int64_t units = 0;

                if (++count > GC__MAX_RESOURCES)
                        return GC__FAIL(err, errlen, -E2BIG, "status.%s: more than %d entries",
                                        which, GC__MAX_RESOURCES);
                if (!it->string || !gc_res_table_match(o->res, it->string))
                        continue;
                snprintf(field, sizeof(field), "status.%s", which);
                r = gc__res_name_ok(it->string, field, err, errlen);
                if (r < 0)
                        return r;
                snprintf(field, sizeof(field), "status.%s[%s]", which, it->string);
                r = gc__gpu_count(it, field, &units, err, errlen);
                if (r < 0)
                        return r;
                if (units == 0)
                        continue;
                if (n->n_alloc >= GC_NODE_MAX_GPU_RES)
                        return GC__FAIL(err, errlen, -E2BIG,
                                        "status.%s: more than %d GPU resources", which,
                                        GC_NODE_MAX_GPU_RES);
                n->alloc[n->n_alloc].resource = it->string; /* interned once the node is kept */
                n->alloc[n->n_alloc++].count = units;
        }
        return 0;
}

/*
 * alloc_geq: the GPU-equivalents of everything allocatable. A Neuron node offers its devices
 * twice, as devices (neuron, neurondevice) and as cores: those views are counted once, by the
 * largest. Another vendor's node gets gpu_count, its physical devices, when they come out whole
 * (never its partitions: 64 CPX partitions are 8 GPUs).
 */
static int gc__node_capacity(gc_node *n, const gc_model_opts *o, char *err, size_t errlen)
{
        double neuron = 0, accel = 0;
        int accel_est = 0;

        for (size_t i = 0; i < n->n_alloc; i++) {
                const gc_res_rule *rule = gc_res_table_match(o->res, n->alloc[i].resource);
                double g;
                int est, r;

                if (n->hami_register && strcmp(n->alloc[i].resource, "nvidia.com/gpu") == 0)
                        continue;
                r = gc_gpu_equivalents(o->res, n->alloc[i].resource, n->alloc[i].count, n, &g,
                                       &est);
                if (r < 0)
                        return GC__FAIL(err, errlen, r,
                                        "status.allocatable[%s]: no GPU share known",
                                        n->alloc[i].resource);
                n->geq_estimate |= est;
                if (rule && (rule->kind == GC_RES_NEURON || rule->kind == GC_RES_NEURONCORE)) {
                        neuron = g > neuron ? g : neuron;
                        accel_est |= est;
                        continue;
                }
                /* Whole devices of another vendor: AMD units, and one-per-device rules (Gaudi,
                 * TPU; a configured amd.com/gpu of 1.0). */
                if (rule && (rule->kind == GC_RES_AMD ||
                             (rule->kind == GC_RES_FIXED && rule->gpus_per_unit == 1.0 &&
                              strncmp(n->alloc[i].resource, "nvidia.com/", 11) != 0))) {
                        accel += g;
                        accel_est |= est;
                }
                n->alloc_geq += g;
        }
        n->alloc_geq += neuron;
        accel += neuron;
        if (n->gpu_count == 0 && accel >= 0.5 && !accel_est && fabs(accel - round(accel)) < 1e-9)
                n->gpu_count = (int64_t)round(accel);
        return 0;
}

int gc_node_from_json(const cJSON *obj, const gc_model_opts *o, gc_node *ret, char *err,
                      size_t errlen)
{
        const cJSON *status = NULL;
        const char *s_ct = NULL, *s_model = NULL, *s_price = NULL, *s_hami = NULL;
        int64_t hami_split = 0;
        int hami_gpus = 0;
        gc__interns in;
        gc__meta m;
        gc_node n;
        int r;

        r = gc__opts_ok(obj, o, ret, err, errlen);
        if (r < 0)
                return r;
        memset(&n, 0, sizeof(n));
        r = gc__opt_obj(obj, "status", "", &status, err, errlen);
        if (r == 0)
                r = gc__node_alloc(status, o, &n, err, errlen);
        if (r < 0)
                return r;
        if (n.n_alloc == 0) {
                /* A DRA node offers its GPUs through ResourceSlices, not as a resource. */
                const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
                const cJSON *nm = cJSON_GetObjectItemCaseSensitive(md, "name");

                if (!o->keep_node || !cJSON_IsString(nm) || !nm->valuestring ||
                    !o->keep_node(o->keep_node_ud, nm->valuestring))
                        return 0;
        }
        for (size_t i = 0; i < n.n_alloc; i++) {
                r = gc__intern(o->pool, n.alloc[i].resource, &n.alloc[i].resource, err, errlen);
                if (r < 0)
                        return r;
        }

        r = gc__meta_read(obj,
                          GC__META_UID | GC__META_CREATED | GC__META_LABELS | GC__META_ANNOTATIONS,
                          &m, err, errlen);
        if (r == 0 && m.annotations) {
                const char *p = "metadata.annotations";

                r = gc__opt_str(m.annotations, "gpu-cost.io/capacity-type", GC__ANNOTATION_MAX, 1,
                                p, &s_ct, err, errlen);
                if (r == 0)
                        r = gc__opt_str(m.annotations, "gpu-cost.io/gpu-model", GC__ANNOTATION_MAX,
                                        1, p, &s_model, err, errlen);
                if (r == 0)
                        r = gc__opt_str(m.annotations, "gpu-cost.io/price-per-gpu-hour",
                                        GC__ANNOTATION_MAX, 1, p, &s_price, err, errlen);
                /* Its old name, read for one release when the new one is not there. */
                if (r == 0 && !s_price)
                        r = gc__opt_str(m.annotations, "gpu-cost.io/usd-per-gpu-hour",
                                        GC__ANNOTATION_MAX, 1, p, &s_price, err, errlen);
                if (r == 0)
                        r = gc__opt_str(m.annotations, GC_HAMI_REGISTER, GC_HAMI_ANNOTATION_MAX, 1,
                                        p, &s_hami, err, errlen);
                if (r == 0 && s_hami) {
                        char why[256];

                        r = gc__hami_register_check(s_hami, &hami_gpus, &hami_split, why,
                                                    sizeof(why));
                        if (r < 0)
                                r = GC__FAIL(err, errlen, r, "%s[%s]: %s", p, GC_HAMI_REGISTER,
                                             why);
                        else if (hami_gpus == 0)
                                s_hami = NULL;
                }
        }
        if (r < 0)
                return r;
        in = (gc__interns){o->pool, 0};
        n.name = gc__intern_put(&in, m.name);
        n.uid = gc__intern_put(&in, m.uid ? m.uid : m.name);
        n.ann_capacity_type = gc__intern_put(&in, s_ct);
        n.ann_gpu_model = gc__intern_put(&in, s_model);
        n.ann_price = gc__intern_put(&in, s_price);
        n.hami_register = gc__intern_put(&in, s_hami);
        r = gc__intern_end(&in, err, errlen);
        if (r == 0)
                r = gc__node_labels(m.labels, o->pool, &n, err, errlen);
        if (r == 0)
                r = gc__node_gfd(&n, o->pool, err, errlen);
        if (r == 0)
                r = gc__node_accel(&n, o, err, errlen);
        if (r < 0)
                goto fail;
        n.created_at = m.created_at;
        /* HAMi's nvidia.com/gpu are vGPU slots, split ways per GPU: its GPUs are the registered
           ones (gc_hami_node_devices), a slot not allocated through HAMi 1/split of one. */
        if (n.hami_register && hami_split > 1)
                n.replicas = hami_split;

        r = gc__node_capacity(&n, o, err, errlen);
        if (r < 0)
                goto fail;
        *ret = n;
        return 1;
fail:
        gc_node_release(&n);
        return r;
}

/* ---- namespaces ------------------------------------------------------------------------------ */

int gc_namespace_from_json(const cJSON *obj, const gc_model_opts *o, gc_namespace *ret, char *err,
                           size_t errlen)
{
        gc_namespace ns;
        gc__meta m;
        int r;

        r = gc__opts_ok(obj, o, ret, err, errlen);
        if (r < 0)
                return r;
        memset(&ns, 0, sizeof(ns));
        r = gc__meta_read(obj, GC__META_SHORT_NAME | GC__META_LABELS, &m, err, errlen);
        if (r == 0)
                r = gc__intern(o->pool, m.name, &ns.name, err, errlen);
        if (r == 0)
                r = gc__attribution(m.labels, o, &ns.team, &ns.project, ns.labels, err, errlen);
        if (r < 0)
                return r;
        *ret = ns;
        return 1;
}
