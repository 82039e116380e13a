/* model dra: ResourceSlices and ResourceClaims (resource.k8s.io) into GPU devices and claims. */
#include "model.h"
#include "model_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Design (docs/dra.md): only what cost needs is kept. Of a ResourceSlice, the devices of NVIDIA's
 * driver (or of a configured one) that are GPUs, each with its model, physical GPU and
 * GPU-equivalents; of a ResourceClaim, the GPU devices its allocation holds. The shapes are
 * those of resource.k8s.io/v1 and v1beta2 (attributes on the device) and v1beta1 (under
 * "basic"; request fields directly on the request).
 */

#define GC__MAX_SLICE_DEVICES 1024 /* v1 allows 128 per slice; far above, still bounded */
#define GC__MAX_ATTRIBUTES    256  /* attributes plus capacities: v1 allows 32 per device */
#define GC__MAX_REQUESTS      256
#define GC__MAX_RESERVED      4096        /* v1: ResourceClaimReservedForMaxSize 256 */
#define GC__ATTR_STR_MAX      64          /* v1: DeviceAttributeMaxValueLength */
#define GC__MODEL_MAX         63          /* a label value */
#define GC__MAX_SELECTORS     32          /* v1: DeviceSelectorsMaxSize */
#define GC__CEL_MAX           (10 * 1024) /* v1: CELSelectorExpressionMaxLength */

/* ---- small helpers -------------------------------------------------------------------------- */

int gc_list_next(const char *list, char sep, const char **cursor, const char **ret_s, size_t *ret_n)
{
        const char *p, *e;

        if (!list || !cursor || !ret_s || !ret_n)
                return 0;
        p = *cursor ? *cursor : list;
        while (*p == sep)
                p++;
        if (!*p)
                return 0;
        e = strchr(p, sep);
        if (!e)
                e = p + strlen(p);
        *ret_s = p;
        *ret_n = (size_t)(e - p);
        *cursor = e;
        return 1;
}

const char *gc_dra_device_key(gc_strpool *pool, const char *driver, const char *pool_name,
                              const char *device)
{
        char key[3 * (GC__NAME_MAX + 1) + 1];
        int n;

        if (!pool || !driver || !pool_name || !device)
                return NULL;
        n = snprintf(key, sizeof(key), "%s/%s/%s", driver, pool_name, device);
        if (n < 0 || (size_t)n >= sizeof(key))
                return NULL;
        return gc_strpool_intern(pool, key, (size_t)n);
}

int gc_dra_model_name(const char *product_name, char *out, size_t outlen)
{
        size_t n = 0;

        if (!product_name || !out || outlen == 0)
                return -EINVAL;
        for (const char *s = product_name; *s; s++) {
                char c = *s;

                /* GFD writes the product name with its spaces as dashes. */
                if (c == ' ')
                        c = '-';
                else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
                        continue;
                if (n + 1 >= outlen || n >= GC__MODEL_MAX)
                        return -EINVAL;
                out[n++] = c;
        }
        /* A label value starts and ends with an alphanumeric character. */
        while (n && (out[n - 1] == '-' || out[n - 1] == '_' || out[n - 1] == '.'))
                n--;
        out[n] = '\0';
        if (n == 0 || out[0] == '-' || out[0] == '_' || out[0] == '.')
                return -EINVAL;
        return 0;
}

/* A DNS subdomain-like name (driver, device, pool segment): bounded and printable, no spaces. */
static int gc__name_ok(const char *s, size_t max)
{
        return s && *s && strnlen(s, max + 1) <= max && gc__printable(s, 0) && !strchr(s, '\n') &&
               !strchr(s, ' ');
}

/* A required name member (driver, pool, device); *ret is NULL or borrowed from the tree. */
static int gc__req_name(const cJSON *obj, const char *key, size_t max, const char *path,
                        const char **ret, char *err, size_t errlen)
{
        int r = gc__opt_str(obj, key, max, 0, path, ret, err, errlen);

        if (r == 0 && !gc__name_ok(*ret, max))
                r = GC__FAIL(err, errlen, -EINVAL, "%s.%s: missing or not a name", path, key);
        return r;
}

/* ---- ResourceSlice ------------------------------------------------------------------------ */

/* The rule of a configured driver matching the device, or NULL. */
typedef struct gc__dev_attrs {
        const cJSON *attrs; /* attributes map, may be NULL */
        const cJSON *cap;   /* capacity map, may be NULL */
        const char *driver;
} gc__dev_attrs;

/* An attribute by name, written bare ("type") or qualified with the driver's domain. */
static const cJSON *gc__attr(const gc__dev_attrs *d, const char *name)
{
        char q[GC__NAME_MAX + 80];
        const cJSON *it;

        if (!d->attrs)
                return NULL;
        it = cJSON_GetObjectItemCaseSensitive(d->attrs, name);
        if (it)
                return it;
        snprintf(q, sizeof(q), "%s/%s", d->driver, name);
        return cJSON_GetObjectItemCaseSensitive(d->attrs, q);
}

/*
 * A string attribute ({"string": "..."}): NULL when absent; -EINVAL when present and not a
 * short printable string (spaces allowed: productName has them).
 */
static int gc__attr_str(const gc__dev_attrs *d, const char *name, const char *path,
                        const char **ret, char *err, size_t errlen)
{
        const cJSON *a = gc__attr(d, name), *v;

        *ret = NULL;
        if (!a || cJSON_IsNull(a))
                return 0;
        if (!cJSON_IsObject(a))
                return GC__FAIL(err, errlen, -EINVAL, "%s.attributes[%s]: not an object", path,
                                name);
        v = cJSON_GetObjectItemCaseSensitive(a, "string");
        if (!v)
                return 0; /* another type: not the string this driver publishes */
        if (!cJSON_IsString(v) || !v->valuestring ||
            strnlen(v->valuestring, GC__ATTR_STR_MAX + 1) > GC__ATTR_STR_MAX ||
            !gc__printable(v->valuestring, 1))
                return GC__FAIL(err, errlen, -EINVAL,
                                "%s.attributes[%s].string: not a printable string of at most "
                                "%d bytes",
                                path, name, GC__ATTR_STR_MAX);
        *ret = v->valuestring;
        return 0;
}

/* Any attribute's value as text for a configured rule: string, version, int or bool. */
static int gc__attr_matches(const gc__dev_attrs *d, const gc_dra_rule *rule)
{
        const cJSON *a = gc__attr(d, rule->attribute), *v;
        char num[32];

        if (!a || !cJSON_IsObject(a))
                return 0;
        if (!rule->value)
                return 1;
        if ((v = cJSON_GetObjectItemCaseSensitive(a, "string")) ||
            (v = cJSON_GetObjectItemCaseSensitive(a, "version")))
                return cJSON_IsString(v) && v->valuestring &&
                       strcmp(v->valuestring, rule->value) == 0;
        if ((v = cJSON_GetObjectItemCaseSensitive(a, "int")) && cJSON_IsNumber(v)) {
                snprintf(num, sizeof(num), "%.0f", v->valuedouble);
                return strcmp(num, rule->value) == 0;
        }
        if ((v = cJSON_GetObjectItemCaseSensitive(a, "bool")) && cJSON_IsBool(v))
                return strcmp(cJSON_IsTrue(v) ? "true" : "false", rule->value) == 0;
        return 0;
}

/* How many memorySlice<i> capacities a MIG device has (its placement's memory slices). */
static int gc__memory_slices(const gc__dev_attrs *d)
{
        int n = 0;

        for (const cJSON *c = d->cap ? d->cap->child : NULL; c; c = c->next)
                if (c->string && strncmp(c->string, "memorySlice", 11) == 0)
                        n++;
        return n;
}

/* A capacity's name without the driver's domain ("gpu.nvidia.com/memory" -> "memory"). */
static const char *gc__cap_name(const char *name, const char *driver)
{
        size_t n = strlen(driver);

        if (strncmp(name, driver, n) == 0 && name[n] == '/')
                return name + n + 1;
        return name;
}

/*
 * A quantity of capacity: a string ("80Gi", "4") in v1, v1beta2 and v1beta1, in units (bytes,
 * shares). -EINVAL when it is not a non-negative quantity.
 */
static int gc__cap_quantity(const cJSON *q, const char *path, double *ret, char *err, size_t errlen)
{
        int64_t milli;

        if (!cJSON_IsString(q) || !q->valuestring || strlen(q->valuestring) > 64 ||
            gc_quantity_parse(q->valuestring, &milli) < 0 || milli < 0)
                return GC__FAIL(err, errlen, -EINVAL, "%s: not a non-negative quantity", path);
        *ret = (double)milli / 1000.0;
        return 0;
}

/*
 * A shared device's capacities (allowMultipleAllocations: every capacity is consumable): those
 * with a requestPolicy first, then the rest, each in document order (the API server writes a
 * map's keys sorted), at most GC_DRA_MAX_CAPS, with a value above zero.
 */
static int gc__shared_caps(const gc__dev_attrs *d, const gc_model_opts *o, const char *path,
                           gc_dra_device *dv, char *err, size_t errlen)
{
        for (int pass = 0; pass < 2; pass++) {
                for (const cJSON *c = d->cap ? d->cap->child : NULL; c; c = c->next) {
                        const cJSON *v = cJSON_IsObject(c)
                                             ? cJSON_GetObjectItemCaseSensitive(c, "value")
                                             : c; /* an early v1beta1: the quantity itself */
                        const int policy =
                            cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(c, "requestPolicy"));
                        char cpath[GC__LABEL_KEY_MAX + 64];
                        double value;
                        int r;

                        if (!c->string || policy != (pass == 0))
                                continue;
                        if (strnlen(c->string, GC__LABEL_KEY_MAX + 1) > GC__LABEL_KEY_MAX ||
                            !gc__printable(c->string, 0))
                                return GC__FAIL(err, errlen, -EINVAL, "%s.capacity: a bad name",
                                                path);
                        snprintf(cpath, sizeof(cpath), "%s.capacity[%s].value", path, c->string);
                        r = gc__cap_quantity(v, cpath, &value, err, errlen);
                        if (r < 0)
                                return r;
                        if (value <= 0 || dv->n_caps >= GC_DRA_MAX_CAPS)
                                continue;
                        r = gc__intern(o->pool, gc__cap_name(c->string, d->driver),
                                       &dv->caps[dv->n_caps].name, err, errlen);
                        if (r < 0)
                                return r;
                        dv->caps[dv->n_caps++].value = value;
                }
        }
        return 0;
}

/*
 * A partitionable device (KEP-4815: dynamic MIG) consumes counters of a counter set the pool
 * publishes, one per physical GPU: its GPU is "<driver>/<pool>/<counterSet>" of the first
 * entry, so the GPU and every partition that could be carved from it count once. *ret NULL
 * when it consumes none.
 */
static int gc__counter_set(const cJSON *dev, gc_strpool *pool, const char *driver,
                           const char *pool_name, const char *path, const char **ret, char *err,
                           size_t errlen)
{
        const cJSON *cc = NULL;
        const char *set = NULL;
        char key[3 * (GC__NAME_MAX + 1) + 1], cpath[96];
        int r;

        *ret = NULL;
        r = gc__opt_arr(dev, "consumesCounters", 8, path, &cc, err, errlen);
        if (r < 0 || !cc || !cc->child)
                return r;
        if (!cJSON_IsObject(cc->child))
                return GC__FAIL(err, errlen, -EINVAL, "%s.consumesCounters[0]: not an object",
                                path);
        snprintf(cpath, sizeof(cpath), "%s.consumesCounters[0]", path);
        r = gc__opt_str(cc->child, "counterSet", GC__LABEL_VALUE_MAX, 0, cpath, &set, err, errlen);
        if (r == 0 && !gc__name_ok(set, GC__LABEL_VALUE_MAX))
                r = GC__FAIL(err, errlen, -EINVAL, "%s.counterSet: not a name", cpath);
        if (r < 0)
                return r;
        snprintf(key, sizeof(key), "%s/%s/%s", driver, pool_name, set);
        return gc__intern(pool, key, ret, err, errlen);
}

/* "gpu-3" of "gpu-3-mig-9-4-2": the parent's name in NVIDIA's MIG device names. */
static size_t gc__mig_parent_name(const char *dev)
{
        const char *m = strstr(dev, "-mig-");

        return m ? (size_t)(m - dev) : 0;
}

/* One NVIDIA device: 1 with *dv filled when it is a GPU or MIG partition, 0 when not a GPU. */
static int gc__nvidia_device(const gc__dev_attrs *d, const char *name, const char *node,
                             const gc_model_opts *o, const char *path, gc_dra_device *dv, char *err,
                             size_t errlen)
{
        const char *type = NULL, *uuid = NULL, *parent = NULL, *profile = NULL, *product = NULL;
        char model[GC__MODEL_MAX + 1], key[2 * GC__NAME_MAX + 8];
        int r;

        r = gc__attr_str(d, "type", path, &type, err, errlen);
        if (r == 0)
                r = gc__attr_str(d, "uuid", path, &uuid, err, errlen);
        if (r == 0)
                r = gc__attr_str(d, "parentUUID", path, &parent, err, errlen);
        if (r == 0)
                r = gc__attr_str(d, "profile", path, &profile, err, errlen);
        if (r == 0)
                r = gc__attr_str(d, "productName", path, &product, err, errlen);
        if (r < 0)
                return r;
        if (!type)
                return 0;
        /* HAMi-DRA's kubelet plugin (Project-HAMi/k8s-dra-driver v0.1.0,
           cmd/hami-kubelet-plugin/hami_core.go) publishes whole GPUs as type "hami-gpu". */
        if (strcmp(type, "gpu") == 0 || strcmp(type, "vfio") == 0 ||
            (strcmp(d->driver, GC_DRA_HAMI_DRIVER) == 0 && strcmp(type, "hami-gpu") == 0)) {
                dv->kind = GC_DRA_GPU;
                dv->geq = 1.0;
        } else if (strcmp(type, "mig") == 0) {
                dv->kind = GC_DRA_MIG;
        } else {
                return 0; /* a type this version does not know is no GPU it can price */
        }
        if (product && gc_dra_model_name(product, model, sizeof(model)) == 0) {
                r = gc__intern(o->pool, model, &dv->model, err, errlen);
                if (r < 0)
                        return r;
        }
        if (dv->kind == GC_DRA_MIG) {
                int est = 1, slices = gc__memory_slices(d);
                double share = 1.0;

                if (!profile || gc_mig_share(dv->model, profile, &share, &est) < 0) {
                        /* The documented fallback: the placement's memory slices out of 8,
                         * else the whole parent. Never less than what the partition blocks. */
                        share = slices > 0 && slices <= 8 ? slices / 8.0 : 1.0;
                        est = 1;
                }
                dv->geq = share;
                dv->estimate = (uint8_t)est;
                r = gc__intern(o->pool, profile, &dv->profile, err, errlen);
                if (r < 0)
                        return r;
                if (parent && *parent) {
                        r = gc__intern(o->pool, parent, &dv->gpu, err, errlen);
                } else {
                        size_t pn = gc__mig_parent_name(name);

                        snprintf(key, sizeof(key), "%s/%.*s", node ? node : "",
                                 (int)(pn ? pn : strlen(name)), name);
                        r = gc__intern(o->pool, key, &dv->gpu, err, errlen);
                }
        } else if (uuid && *uuid) {
                r = gc__intern(o->pool, uuid, &dv->gpu, err, errlen);
        } else {
                snprintf(key, sizeof(key), "%s/%s", node ? node : "", name);
                r = gc__intern(o->pool, key, &dv->gpu, err, errlen);
        }
        return r < 0 ? r : 1;
}

/* The configured rule for a driver, or NULL; *ret_known says whether the driver is read at all. */
static const gc_dra_rule *gc__rule(const gc_model_opts *o, const char *driver,
                                   const gc__dev_attrs *d, int *ret_known)
{
        const gc_dra_rules *rs = o->dra;

        *ret_known = ((!rs || !rs->no_nvidia) && strcmp(driver, GC_DRA_NVIDIA_DRIVER) == 0) ||
                     strcmp(driver, GC_DRA_HAMI_DRIVER) == 0;
        for (size_t i = 0; rs && i < rs->n; i++) {
                if (!rs->rules[i].driver || strcmp(rs->rules[i].driver, driver) != 0)
                        continue;
                *ret_known = 1;
                if (d && rs->rules[i].attribute && gc__attr_matches(d, &rs->rules[i]))
                        return &rs->rules[i];
        }
        return NULL;
}

int gc_slice_from_json(const cJSON *obj, const gc_model_opts *o, gc_dra_device_vec *out, char *err,
                       size_t errlen)
{
        const cJSON *spec = NULL, *pool = NULL, *devs = NULL, *gen;
        const char *s_driver = NULL, *s_node = NULL, *s_pool = NULL;
        const char *driver, *node, *pool_name;
        gc__interns in;
        size_t n_before;
        int64_t generation = 0;
        int r, known, i = 0, kept = 0;

        r = gc__opts_ok(obj, o, out, err, errlen);
        if (r < 0)
                return r;
        r = gc__opt_obj(obj, "spec", "", &spec, err, errlen);
        if (r == 0 && !spec)
                r = GC__FAIL(err, errlen, -EINVAL, "spec: missing");
        if (r == 0)
                r = gc__req_name(spec, "driver", GC__NAME_MAX, "spec", &s_driver, err, errlen);
        if (r < 0)
                return r;
        (void)gc__rule(o, s_driver, NULL, &known);
        if (!known)
                return 0; /* not a GPU driver we read: nothing of it is kept */
        r = gc__opt_str(spec, "nodeName", GC__NAME_MAX, 0, "spec", &s_node, err, errlen);
        if (r == 0)
                r = gc__opt_obj(spec, "pool", "spec", &pool, err, errlen);
        if (r == 0 && !pool)
                r = GC__FAIL(err, errlen, -EINVAL, "spec.pool: missing");
        if (r == 0)
                r = gc__req_name(pool, "name", GC__NAME_MAX, "spec.pool", &s_pool, err, errlen);
        if (r < 0)
                return r;
        gen = cJSON_GetObjectItemCaseSensitive(pool, "generation");
        if (gen && !cJSON_IsNull(gen)) {
                if (!cJSON_IsNumber(gen) || gen->valuedouble < 0 || gen->valuedouble > 9e15 ||
                    gen->valuedouble != (double)(int64_t)gen->valuedouble)
                        return GC__FAIL(err, errlen, -EINVAL,
                                        "spec.pool.generation: not a whole number");
                generation = (int64_t)gen->valuedouble;
        }
        r = gc__opt_arr(spec, "devices", GC__MAX_SLICE_DEVICES, "spec", &devs, err, errlen);
        if (r < 0 || !devs)
                return r;
        in = (gc__interns){o->pool, 0};
        driver = gc__intern_put(&in, s_driver);
        node = gc__intern_put(&in, s_node);
        pool_name = gc__intern_put(&in, s_pool);
        r = gc__intern_end(&in, err, errlen);
        if (r < 0)
                return r;

        n_before = out->n;
        for (const cJSON *c = devs->child; c; c = c->next, i++) {
                const cJSON *basic = NULL;
                const char *s_name = NULL;
                gc__dev_attrs d = {NULL, NULL, driver};
                const gc_dra_rule *rule;
                gc_dra_device dv;
                char path[48];

                snprintf(path, sizeof(path), "spec.devices[%d]", i);
                if (!cJSON_IsObject(c)) {
                        r = GC__FAIL(err, errlen, -EINVAL, "%s: not an object", path);
                        goto fail;
                }
                r = gc__req_name(c, "name", GC__LABEL_VALUE_MAX, path, &s_name, err, errlen);
                /* v1beta1 puts attributes and capacity under "basic". */
                if (r == 0)
                        r = gc__opt_obj(c, "basic", path, &basic, err, errlen);
                if (r == 0)
                        r = gc__opt_obj(basic ? basic : c, "attributes", path, &d.attrs, err,
                                        errlen);
                if (r == 0)
                        r = gc__opt_obj(basic ? basic : c, "capacity", path, &d.cap, err, errlen);
                if (r == 0 && (cJSON_GetArraySize(d.attrs) > GC__MAX_ATTRIBUTES ||
                               cJSON_GetArraySize(d.cap) > GC__MAX_ATTRIBUTES))
                        r = GC__FAIL(err, errlen, -E2BIG, "%s: more than %d attributes", path,
                                     GC__MAX_ATTRIBUTES);
                if (r < 0)
                        goto fail;
                memset(&dv, 0, sizeof(dv));
                rule = gc__rule(o, driver, &d, &known);
                if (rule) {
                        dv.kind = GC_DRA_CONFIGURED;
                        dv.geq = rule->gpus_per_device;
                        r = gc__intern(o->pool, rule->model, &dv.model, err, errlen);
                } else if ((strcmp(driver, GC_DRA_NVIDIA_DRIVER) == 0 &&
                            (!o->dra || !o->dra->no_nvidia)) ||
                           strcmp(driver, GC_DRA_HAMI_DRIVER) == 0) {
                        r = gc__nvidia_device(&d, s_name, node, o, path, &dv, err, errlen);
                } else {
                        r = 0;
                }
                if (r < 0)
                        goto fail;
                if (r == 0 && !rule)
                        continue;
                dv.driver = driver;
                dv.pool = pool_name;
                dv.node = node;
                dv.generation = generation;
                r = gc__intern(o->pool, s_name, &dv.name, err, errlen);
                if (r == 0 && dv.kind != GC_DRA_CONFIGURED) {
                        const char *set;

                        r = gc__counter_set(basic ? basic : c, o->pool, driver, pool_name, path,
                                            &set, err, errlen);
                        if (r == 0 && set)
                                dv.gpu = set;
                }
                if (r == 0 && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
                                  basic ? basic : c, "allowMultipleAllocations"))) {
                        dv.shared = 1;
                        r = gc__shared_caps(&d, o, path, &dv, err, errlen);
                }
                if (r < 0)
                        goto fail;
                r = gc_grow((void **)&out->v, &out->cap, out->n, sizeof(*out->v), 64,
                            out->limit ? out->limit : GC_VEC_DEFAULT_LIMIT);
                if (r < 0) {
                        r = GC__FAIL(err, errlen, r, "%s",
                                     r == -E2BIG ? "more devices than the limit" : "out of memory");
                        goto fail;
                }
                out->v[out->n++] = dv;
                kept++;
        }
        return kept;
fail:
        out->n = n_before;
        return r;
}

void gc_dra_device_vec_free(gc_dra_device_vec *v)
{
        if (!v)
                return;
        free(v->v);
        v->v = NULL;
        v->n = v->cap = 0;
}

/* ---- ResourceClaim ------------------------------------------------------------------------ */

/* Whether the request named by a result ("req" or "req/subrequest") asks for admin access. */
static int gc__request_admin(const cJSON *requests, const char *result_request)
{
        size_t n = strcspn(result_request, "/");

        for (const cJSON *q = requests ? requests->child : NULL; q; q = q->next) {
                const cJSON *name = cJSON_GetObjectItemCaseSensitive(q, "name");
                const cJSON *exactly = cJSON_GetObjectItemCaseSensitive(q, "exactly");

                if (!cJSON_IsString(name) || !name->valuestring || strlen(name->valuestring) != n ||
                    memcmp(name->valuestring, result_request, n) != 0)
                        continue;
                /* v1/v1beta2: under "exactly"; v1beta1: on the request. */
                return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(q, "adminAccess")) ||
                       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(exactly, "adminAccess"));
        }
        return 0;
}

/* One result's consumedCapacity into used (at most GC_CLAIM_MAX_USED); returns how many. */
static int gc__consumed(const cJSON *res, const char *driver, gc_strpool *pool, const char *path,
                        gc_dra_amount *used, char *err, size_t errlen)
{
        const cJSON *cc = NULL;
        int r, n = 0;

        r = gc__opt_obj(res, "consumedCapacity", path, &cc, err, errlen);
        if (r < 0 || !cc)
                return r;
        if (cJSON_GetArraySize(cc) > GC_CLAIM_MAX_USED)
                return GC__FAIL(err, errlen, -E2BIG, "%s.consumedCapacity: more than %d entries",
                                path, GC_CLAIM_MAX_USED);
        for (const cJSON *c = cc->child; c; c = c->next) {
                char cpath[GC__LABEL_KEY_MAX + 96];

                if (!c->string || strnlen(c->string, GC__LABEL_KEY_MAX + 1) > GC__LABEL_KEY_MAX ||
                    !gc__printable(c->string, 0))
                        return GC__FAIL(err, errlen, -EINVAL, "%s.consumedCapacity: a bad name",
                                        path);
                snprintf(cpath, sizeof(cpath), "%s.consumedCapacity[%s]", path, c->string);
                r = gc__cap_quantity(c, cpath, &used[n].value, err, errlen);
                if (r == 0)
                        r = gc__intern(pool, gc__cap_name(c->string, driver), &used[n].name, err,
                                       errlen);
                if (r < 0)
                        return r;
                n++;
        }
        return n;
}

int gc_claim_from_json(const cJSON *obj, const gc_model_opts *o, gc_claim *ret, char *err,
                       size_t errlen)
{
        const cJSON *spec = NULL, *sdev = NULL, *requests = NULL, *status = NULL;
        const cJSON *alloc = NULL, *adev = NULL, *results = NULL, *reserved = NULL;
        const char *s_ext = NULL;
        gc_claim_device devs[GC_CLAIM_MAX_RESULTS];
        gc_dra_amount used[GC_CLAIM_MAX_RESULTS][GC_CLAIM_MAX_USED];
        size_t n_used = 0;
        gc__interns in;
        gc__meta m;
        gc_claim cl;
        int r, i = 0;

        r = gc__opts_ok(obj, o, ret, err, errlen);
        if (r < 0)
                return r;
        memset(&cl, 0, sizeof(cl));
        r = gc__opt_obj(obj, "status", "", &status, err, errlen);
        if (r == 0 && status)
                r = gc__opt_obj(status, "allocation", "status", &alloc, err, errlen);
        if (r == 0 && alloc)
                r = gc__opt_obj(alloc, "devices", "status.allocation", &adev, err, errlen);
        if (r == 0 && adev)
                r = gc__opt_arr(adev, "results", GC_CLAIM_MAX_RESULTS, "status.allocation.devices",
                                &results, err, errlen);
        if (r < 0 || !results)
                return r; /* not allocated: holds nothing yet */
        r = gc__opt_obj(obj, "spec", "", &spec, err, errlen);
        if (r == 0 && spec)
                r = gc__opt_obj(spec, "devices", "spec", &sdev, err, errlen);
        if (r == 0 && sdev)
                r = gc__opt_arr(sdev, "requests", GC__MAX_REQUESTS, "spec.devices", &requests, err,
                                errlen);
        if (r < 0)
                return r;

        for (const cJSON *c = results->child; c; c = c->next, i++) {
                const char *drv = NULL, *pl = NULL, *dev = NULL, *req = NULL, *share = NULL;
                gc_claim_device *d = &devs[cl.n_devices];
                char path[64];
                int known;

                snprintf(path, sizeof(path), "status.allocation.devices.results[%d]", i);
                if (!cJSON_IsObject(c))
                        return GC__FAIL(err, errlen, -EINVAL, "%s: not an object", path);
                r = gc__opt_str(c, "driver", GC__NAME_MAX, 0, path, &drv, err, errlen);
                if (r == 0)
                        r = gc__opt_str(c, "pool", GC__NAME_MAX, 0, path, &pl, err, errlen);
                if (r == 0)
                        r = gc__opt_str(c, "device", GC__LABEL_VALUE_MAX, 0, path, &dev, err,
                                        errlen);
                if (r == 0)
                        r = gc__opt_str(c, "request", 2 * GC__LABEL_VALUE_MAX + 1, 0, path, &req,
                                        err, errlen);
                if (r == 0)
                        r = gc__opt_str(c, "shareID", GC__UID_MAX, 0, path, &share, err, errlen);
                if (r == 0 && (!gc__name_ok(drv, GC__NAME_MAX) || !gc__name_ok(pl, GC__NAME_MAX) ||
                               !gc__name_ok(dev, GC__LABEL_VALUE_MAX)))
                        r = GC__FAIL(err, errlen, -EINVAL,
                                     "%s: driver, pool and device are required names", path);
                if (r < 0)
                        return r;
                (void)gc__rule(o, drv, NULL, &known);
                if (!known)
                        continue;
                /* Monitoring access to a device others hold costs nothing. */
                if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "adminAccess")) ||
                    (req && gc__request_admin(requests, req)))
                        continue;
                memset(d, 0, sizeof(*d));
                d->key = gc_dra_device_key(o->pool, drv, pl, dev);
                if (!d->key)
                        return GC__FAIL(err, errlen, -ENOMEM, "out of memory");
                r = gc__intern(o->pool, share && *share ? share : NULL, &d->share_id, err, errlen);
                if (r == 0)
                        r = gc__consumed(c, drv, o->pool, path, used[cl.n_devices], err, errlen);
                if (r < 0)
                        return r;
                d->n_used = (uint8_t)r;
                n_used += (size_t)r;
                cl.n_devices++;
        }
        if (cl.n_devices == 0)
                return 0;

        r = gc__meta_read(obj,
                          GC__META_NS | GC__META_UID | GC__META_CREATED | GC__META_DELETING |
                              GC__META_ANNOTATIONS,
                          &m, err, errlen);
        if (r == 0 && m.annotations)
                r = gc__opt_str(m.annotations, "resource.kubernetes.io/extended-resource-claim",
                                GC__ANNOTATION_MAX, 0, "metadata.annotations", &s_ext, err, errlen);
        if (r == 0)
                r = gc__opt_arr(status, "reservedFor", GC__MAX_RESERVED, "status", &reserved, err,
                                errlen);
        if (r < 0)
                return r;
        in = (gc__interns){o->pool, 0};
        cl.name = gc__intern_put(&in, m.name);
        cl.ns = gc__intern_put(&in, m.ns);
        cl.uid = gc__intern_put(&in, m.uid);
        r = gc__intern_end(&in, err, errlen);
        if (r < 0)
                return r;
        /* One block: the devices, then what each consumed. */
        cl.devices = malloc(cl.n_devices * sizeof(*cl.devices) + n_used * sizeof(gc_dra_amount));
        if (!cl.devices)
                return GC__FAIL(err, errlen, -ENOMEM, "out of memory");
        {
                gc_dra_amount *to = (gc_dra_amount *)(cl.devices + cl.n_devices);

                for (size_t k = 0; k < cl.n_devices; k++) {
                        cl.devices[k] = devs[k];
                        memcpy(to, used[k], devs[k].n_used * sizeof(*to));
                        cl.devices[k].used = devs[k].n_used ? to : NULL;
                        to += devs[k].n_used;
                }
        }
        cl.created_at = m.created_at;
        cl.deleting_at = m.deleting_at;
        cl.n_reserved = (uint16_t)cJSON_GetArraySize(reserved);
        if (s_ext && strcmp(s_ext, "true") == 0)
                cl.flags |= GC_CLAIM_F_EXTENDED;
        *ret = cl;
        return 1;
}

void gc_claim_release(gc_claim *cl)
{
        if (!cl)
                return;
        free(cl->devices);
        memset(cl, 0, sizeof(*cl));
}

int gc_claim_copy(gc_claim *dst, const gc_claim *src)
{
        size_t n_used = 0;
        gc_dra_amount *to;

        for (size_t k = 0; k < src->n_devices; k++)
                n_used += src->devices[k].n_used;
        *dst = *src;
        dst->devices = NULL;
        if (!src->n_devices)
                return 0;
        dst->devices = malloc(src->n_devices * sizeof(*dst->devices) + n_used * sizeof(*to));
        if (!dst->devices) {
                memset(dst, 0, sizeof(*dst));
                return -ENOMEM;
        }
        to = (gc_dra_amount *)(dst->devices + src->n_devices);
        for (size_t k = 0; k < src->n_devices; k++) {
                dst->devices[k] = src->devices[k];
                if (src->devices[k].n_used)
                        memcpy(to, src->devices[k].used, src->devices[k].n_used * sizeof(*to));
                dst->devices[k].used = src->devices[k].n_used ? to : NULL;
                to += src->devices[k].n_used;
        }
        return 0;
}

void gc_claim_vec_free(gc_claim_vec *v)
{
        if (!v)
                return;
        for (size_t i = 0; i < v->n; i++)
                gc_claim_release(&v->v[i]);
        free(v->v);
        v->v = NULL;
        v->n = v->cap = 0;
}

/* ---- DeviceClass ---------------------------------------------------------------------------- */

/*
 * The string literal compared with `what` in a CEL expression: `<what> == "x"` or `'x'`, either
 * side, spaces allowed. Copies it into out; 0 when none is found.
 */
static int gc__cel_equals(const char *cel, const char *what, char *out, size_t outlen)
{
        size_t wn = strlen(what);

        for (const char *p = strstr(cel, what); p; p = strstr(p + 1, what)) {
                const char *q = p + wn, *e;
                char quote;
                size_t n;

                while (*q == ' ' || *q == '\t' || *q == '\n')
                        q++;
                if (q[0] != '=' || q[1] != '=')
                        continue;
                q += 2;
                while (*q == ' ' || *q == '\t' || *q == '\n')
                        q++;
                quote = *q;
                if (quote != '"' && quote != '\'')
                        continue;
                e = strchr(q + 1, quote);
                if (!e)
                        continue;
                n = (size_t)(e - q - 1);
                if (n == 0 || n >= outlen || memchr(q + 1, '\\', n))
                        continue;
                memcpy(out, q + 1, n);
                out[n] = '\0';
                return 1;
        }
        return 0;
}

int gc_device_class_from_json(const cJSON *obj, const gc_model_opts *o, gc_device_class *ret,
                              char *err, size_t errlen)
{
        const cJSON *spec = NULL, *sels = NULL;
        const char *s_ext = NULL;
        char driver[GC__NAME_MAX + 1] = "", type[GC__ATTR_STR_MAX + 1] = "";
        gc__interns in;
        gc_device_class dc;
        gc__meta m;
        int r, i = 0, known = 0;

        r = gc__opts_ok(obj, o, ret, err, errlen);
        if (r < 0)
                return r;
        memset(&dc, 0, sizeof(dc));
        r = gc__opt_obj(obj, "spec", "", &spec, err, errlen);
        if (r == 0 && spec)
                r = gc__opt_arr(spec, "selectors", GC__MAX_SELECTORS, "spec", &sels, err, errlen);
        if (r == 0 && spec)
                r = gc__opt_str(spec, "extendedResourceName", GC__LABEL_KEY_MAX, 0, "spec", &s_ext,
                                err, errlen);
        if (r < 0)
                return r;
        for (const cJSON *c = sels ? sels->child : NULL; c; c = c->next, i++) {
                const cJSON *cel = NULL;
                const char *expr = NULL;
                char path[48], tn[GC__NAME_MAX + 40];

                snprintf(path, sizeof(path), "spec.selectors[%d]", i);
                if (!cJSON_IsObject(c))
                        return GC__FAIL(err, errlen, -EINVAL, "%s: not an object", path);
                r = gc__opt_obj(c, "cel", path, &cel, err, errlen);
                if (r == 0 && cel) {
                        snprintf(path, sizeof(path), "spec.selectors[%d].cel", i);
                        r = gc__opt_str(cel, "expression", GC__CEL_MAX, 1, path, &expr, err,
                                        errlen);
                }
                if (r < 0)
                        return r;
                if (!expr)
                        continue;
                if (!*driver)
                        (void)gc__cel_equals(expr, "device.driver", driver, sizeof(driver));
                /* NVIDIA's classes: device.attributes["gpu.nvidia.com"].type == "mig" */
                snprintf(tn, sizeof(tn), "attributes[\"%s\"].type", GC_DRA_NVIDIA_DRIVER);
                if (!*type && !gc__cel_equals(expr, tn, type, sizeof(type))) {
                        snprintf(tn, sizeof(tn), "attributes['%s'].type", GC_DRA_NVIDIA_DRIVER);
                        (void)gc__cel_equals(expr, tn, type, sizeof(type));
                }
        }
        /* A class selecting by NVIDIA's type alone selects NVIDIA's devices. */
        if (!*driver && *type)
                gc_strlcpy(driver, GC_DRA_NVIDIA_DRIVER, sizeof(driver));
        if (!*driver || !gc__name_ok(driver, GC__NAME_MAX))
                return 0;
        (void)gc__rule(o, driver, NULL, &known);
        if (!known)
                return 0;
        r = gc__meta_read(obj, 0, &m, err, errlen);
        if (r < 0)
                return r;
        in = (gc__interns){o->pool, 0};
        dc.name = gc__intern_put(&in, m.name);
        dc.driver = gc__intern_put(&in, driver);
        dc.device_type = *type && gc__printable(type, 0) ? gc__intern_put(&in, type) : NULL;
        dc.extended_resource = gc__intern_put(&in, s_ext);
        r = gc__intern_end(&in, err, errlen);
        if (r < 0)
                return r;
        *ret = dc;
        return 1;
}

void gc_device_class_vec_free(gc_device_class_vec *v)
{
        if (!v)
                return;
        free(v->v);
        v->v = NULL;
        v->n = v->cap = 0;
}
