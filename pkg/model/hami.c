/* model hami: HAMi's GPU sharing as devices with consumable capacity and the claims on them. */
#include "model.h"
#include "model_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Design (docs/dra.md, "HAMi"). HAMi's scheduler (Project-HAMi/HAMi) shares a GPU among pods
 * that ask nvidia.com/gpu with a memory (nvidia.com/gpumem, MiB) and a core share
 * (nvidia.com/gpucores, %); it writes what each got into the pod, and the device plugin
 * registers each node's GPUs in a node annotation. That is the same thing as a DRA device with
 * consumable capacity: so a node's registered GPUs become GPU devices of driver GC_HAMI_DRIVER
 * (pool: the node), shared, with capacities memory (MiB) and cores, and a pod's allocation a
 * claim whose results consumed memory and cores of them. The accountant then prices both with
 * the one rule of shared devices.
 *
 * The formats, from HAMi v2.10.0 (pkg/device/devices.go, pkg/device/nvidia/device.go):
 * - hami.io/node-nvidia-register: since v2.8 a JSON array of {"id","index","count","devmem",
 *   "devcore","type","numa","mode","health",...} (every member omitted when empty: no "index"
 *   is 0, no "health" is false); up to v2.7 "id,count,devmem,devcore,type,numa,health[,index,
 *   mode]" with ':' after every device.
 * - hami.io/vgpu-devices-allocated: per container (init containers first) its devices as
 *   "UUID,NVIDIA,<memory MiB>,<cores %>" with ':' after each, and ';' after each container.
 */

#define GC__HAMI_FIELD_MAX 128 /* one field: a UUID, a product name */

/* One registered GPU; strings point into the caller's scratch buffer or the cJSON tree. */
typedef struct gc__hami_dev {
        const char *id;
        const char *type;
        int64_t count, devmem, devcore;
} gc__hami_dev;

typedef int (*gc__hami_dev_fn)(void *ud, const gc__hami_dev *d);

/* A whole decimal number of at most 12 digits: 0, or -EINVAL. */
static int gc__hami_int(const char *s, size_t n, int64_t *ret)
{
        int64_t v = 0;

        if (n == 0 || n > 12)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                v = v * 10 + (s[i] - '0');
        }
        *ret = v;
        return 0;
}

/* A device's id: a UUID-like token, printable, no spaces, commas, colons or slashes. */
static int gc__hami_id_ok(const char *s, size_t n)
{
        if (n == 0 || n > GC__HAMI_FIELD_MAX)
                return 0;
        for (size_t i = 0; i < n; i++)
                if (s[i] <= ' ' || s[i] > '~' || s[i] == ',' || s[i] == ':' || s[i] == ';' ||
                    s[i] == '/')
                        return 0;
        return 1;
}

/* The JSON form (v2.8 and later). */
static int gc__hami_register_json(const char *text, gc__hami_dev_fn fn, void *ud, char *err,
                                  size_t errlen)
{
        cJSON *arr = cJSON_Parse(text);
        int r = 0, i = 0;

        if (!cJSON_IsArray(arr)) {
                cJSON_Delete(arr);
                return GC__FAIL(err, errlen, -EINVAL, "not a JSON array of devices");
        }
        if (cJSON_GetArraySize(arr) > GC_HAMI_MAX_GPUS) {
                cJSON_Delete(arr);
                return GC__FAIL(err, errlen, -E2BIG, "more than %d devices", GC_HAMI_MAX_GPUS);
        }
        for (const cJSON *c = arr->child; c && r == 0; c = c->next, i++) {
                static const char *const nums[] = {"count", "devmem", "devcore"};
                const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "id");
                const cJSON *type = cJSON_GetObjectItemCaseSensitive(c, "type");
                gc__hami_dev d;
                int64_t *out[] = {&d.count, &d.devmem, &d.devcore};

                memset(&d, 0, sizeof(d));
                if (!cJSON_IsObject(c) || !cJSON_IsString(id) || !id->valuestring ||
                    !gc__hami_id_ok(id->valuestring, strlen(id->valuestring))) {
                        r = GC__FAIL(err, errlen, -EINVAL, "[%d].id: missing or not an id", i);
                        break;
                }
                d.id = id->valuestring;
                if (type && (!cJSON_IsString(type) || !type->valuestring ||
                             strlen(type->valuestring) > GC__HAMI_FIELD_MAX ||
                             !gc__printable(type->valuestring, 1))) {
                        r = GC__FAIL(err, errlen, -EINVAL, "[%d].type: not a short text", i);
                        break;
                }
                d.type = type ? type->valuestring : NULL;
                for (size_t k = 0; k < 3; k++) {
                        const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, nums[k]);

                        if (!v)
                                continue; /* omitted when 0 */
                        if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e12 ||
                            v->valuedouble != (double)(int64_t)v->valuedouble) {
                                r = GC__FAIL(err, errlen, -EINVAL, "[%d].%s: not a whole number", i,
                                             nums[k]);
                                break;
                        }
                        *out[k] = (int64_t)v->valuedouble;
                }
                if (r == 0)
                        r = fn(ud, &d);
        }
        cJSON_Delete(arr);
        return r;
}

/* The comma form (up to v2.7): "id,count,devmem,devcore,type,numa,health[,index,mode]:". */
static int gc__hami_register_csv(const char *text, gc__hami_dev_fn fn, void *ud, char *err,
                                 size_t errlen)
{
        const char *p = text;
        int i = 0, r = 0;

        while (*p && r == 0) {
                const char *e = strchr(p, ':'), *f[9];
                size_t fl[9], nf = 0;
                char id[GC__HAMI_FIELD_MAX + 1], type[GC__HAMI_FIELD_MAX + 1];
                gc__hami_dev d;

                if (!e)
                        e = p + strlen(p);
                if (e == p) {
                        p++;
                        continue;
                }
                if (i >= GC_HAMI_MAX_GPUS)
                        return GC__FAIL(err, errlen, -E2BIG, "more than %d devices",
                                        GC_HAMI_MAX_GPUS);
                for (const char *q = p; nf < 9;) {
                        const char *c = memchr(q, ',', (size_t)(e - q));

                        f[nf] = q;
                        fl[nf++] = c ? (size_t)(c - q) : (size_t)(e - q);
                        if (!c)
                                break;
                        q = c + 1;
                }
                if ((nf != 7 && nf != 9) || f[nf - 1] + fl[nf - 1] != e)
                        return GC__FAIL(err, errlen, -EINVAL,
                                        "device %d: not 7 or 9 comma-separated fields", i);
                memset(&d, 0, sizeof(d));
                if (!gc__hami_id_ok(f[0], fl[0]) || fl[4] > GC__HAMI_FIELD_MAX ||
                    gc__hami_int(f[1], fl[1], &d.count) < 0 ||
                    gc__hami_int(f[2], fl[2], &d.devmem) < 0 ||
                    gc__hami_int(f[3], fl[3], &d.devcore) < 0)
                        return GC__FAIL(err, errlen, -EINVAL,
                                        "device %d: a bad id, count, memory or cores", i);
                memcpy(id, f[0], fl[0]);
                id[fl[0]] = '\0';
                memcpy(type, f[4], fl[4]);
                type[fl[4]] = '\0';
                if (!gc__printable(type, 1))
                        return GC__FAIL(err, errlen, -EINVAL, "device %d: a bad type", i);
                d.id = id;
                d.type = type[0] ? type : NULL;
                r = fn(ud, &d);
                i++;
                p = *e ? e + 1 : e;
        }
        return r;
}

static int gc__hami_register(const char *text, gc__hami_dev_fn fn, void *ud, char *err,
                             size_t errlen)
{
        const char *p = text;

        if (!text || strlen(text) > GC_HAMI_ANNOTATION_MAX)
                return GC__FAIL(err, errlen, -E2BIG, "longer than %d bytes",
                                GC_HAMI_ANNOTATION_MAX);
        while (*p == ' ' || *p == '\t' || *p == '\n')
                p++;
        return *p == '[' ? gc__hami_register_json(p, fn, ud, err, errlen)
                         : gc__hami_register_csv(p, fn, ud, err, errlen);
}

/* What a node annotation says, for the decoder: how many GPUs and the largest split. */
typedef struct gc__hami_count {
        int n;
        int64_t split;
} gc__hami_count;

static int gc__hami_count_dev(void *ud, const gc__hami_dev *d)
{
        gc__hami_count *c = ud;

        c->n++;
        if (d->count > c->split)
                c->split = d->count;
        return 0;
}

int gc__hami_register_check(const char *text, int *ret_gpus, int64_t *ret_split, char *err,
                            size_t errlen)
{
        gc__hami_count c = {0, 0};
        int r = gc__hami_register(text, gc__hami_count_dev, &c, err, errlen);

        if (r < 0)
                return r;
        *ret_gpus = c.n;
        *ret_split = c.split;
        return 0;
}

typedef struct gc__hami_devs {
        const gc_node *node;
        gc_strpool *pool;
        gc_dra_device_vec *out;
        char *err;
        size_t errlen;
} gc__hami_devs;

static int gc__hami_device(void *ud, const gc__hami_dev *d)
{
        gc__hami_devs *x = ud;
        gc_dra_device dv;
        char model[64];
        int r;

        memset(&dv, 0, sizeof(dv));
        dv.kind = GC_DRA_GPU;
        dv.geq = 1.0;
        dv.shared = 1;
        dv.driver = gc_strpool_intern0(x->pool, GC_HAMI_DRIVER);
        dv.pool = x->node->name;
        dv.node = x->node->name;
        dv.name = gc_strpool_intern0(x->pool, d->id);
        dv.gpu = dv.name;
        if (d->type && gc_dra_model_name(d->type, model, sizeof(model)) == 0) {
                dv.model = gc_strpool_intern0(x->pool, model);
                if (!dv.model)
                        return GC__FAIL(x->err, x->errlen, -ENOMEM, "out of memory");
        }
        if (d->devmem > 0) {
                dv.caps[dv.n_caps].name = gc_strpool_intern0(x->pool, "memory");
                dv.caps[dv.n_caps++].value = (double)d->devmem;
        }
        if (d->devcore > 0) {
                dv.caps[dv.n_caps].name = gc_strpool_intern0(x->pool, "cores");
                dv.caps[dv.n_caps++].value = (double)d->devcore;
        }
        for (size_t i = 0; i < dv.n_caps; i++)
                if (!dv.caps[i].name)
                        return GC__FAIL(x->err, x->errlen, -ENOMEM, "out of memory");
        if (!dv.driver || !dv.name)
                return GC__FAIL(x->err, x->errlen, -ENOMEM, "out of memory");
        r = gc_grow((void **)&x->out->v, &x->out->cap, x->out->n, sizeof(*x->out->v), 8,
                    x->out->limit ? x->out->limit : GC_VEC_DEFAULT_LIMIT);
        if (r < 0)
                return GC__FAIL(x->err, x->errlen, r, "out of memory");
        x->out->v[x->out->n++] = dv;
        return 0;
}

int gc_hami_node_devices(const gc_node *n, gc_strpool *pool, gc_dra_device_vec *out, char *err,
                         size_t errlen)
{
        gc__hami_devs x = {n, pool, out, err, errlen};
        size_t before;
        int r;

        if (!n || !pool || !out || !n->name)
                return -EINVAL;
        if (!n->hami_register)
                return 0;
        before = out->n;
        r = gc__hami_register(n->hami_register, gc__hami_device, &x, err, errlen);
        if (r < 0) {
                out->n = before;
                return r;
        }
        return (int)(out->n - before);
}

/* ---- a pod's allocation -----------------------------------------------------------------------
 */

/* One allocated device of a container: its id, memory (MiB) and cores (%). */
typedef struct gc__hami_use {
        const char *id;
        size_t id_len;
        int64_t mem, cores;
} gc__hami_use;

/*
 * "UUID,NVIDIA,<MiB>,<cores>:" per device, ';' per container; calls fn per device. Returns how
 * many devices, or -EINVAL / -E2BIG with err naming the device.
 */
static int gc__hami_alloc(const char *text, int (*fn)(void *ud, const gc__hami_use *u), void *ud,
                          char *err, size_t errlen)
{
        const char *p = text;
        int n = 0, r;

        if (!text || strlen(text) > GC_HAMI_ANNOTATION_MAX)
                return GC__FAIL(err, errlen, -E2BIG, "longer than %d bytes",
                                GC_HAMI_ANNOTATION_MAX);
        while (*p) {
                const char *e, *f[4];
                size_t fl[4], nf = 0;
                gc__hami_use u;

                if (*p == ';' || *p == ':') {
                        p++;
                        continue;
                }
                e = p + strcspn(p, ":;");
                for (const char *q = p; nf < 4;) {
                        const char *c = memchr(q, ',', (size_t)(e - q));

                        f[nf] = q;
                        fl[nf++] = c ? (size_t)(c - q) : (size_t)(e - q);
                        if (!c)
                                break;
                        q = c + 1;
                }
                if (nf != 4 || f[3] + fl[3] != e)
                        return GC__FAIL(err, errlen, -EINVAL,
                                        "device %d: not UUID,type,memory,cores", n);
                memset(&u, 0, sizeof(u));
                if (!gc__hami_id_ok(f[0], fl[0]) || gc__hami_int(f[2], fl[2], &u.mem) < 0 ||
                    gc__hami_int(f[3], fl[3], &u.cores) < 0)
                        return GC__FAIL(err, errlen, -EINVAL,
                                        "device %d: a bad UUID, memory or cores", n);
                if (++n > GC_HAMI_MAX_ALLOC)
                        return GC__FAIL(err, errlen, -E2BIG, "more than %d devices",
                                        GC_HAMI_MAX_ALLOC);
                u.id = f[0];
                u.id_len = fl[0];
                if (fn && (r = fn(ud, &u)) < 0)
                        return r;
                p = e;
        }
        return n;
}

int gc__hami_alloc_check(const char *text, char *err, size_t errlen)
{
        return gc__hami_alloc(text, NULL, NULL, err, errlen);
}

typedef struct gc__hami_claim {
        const gc_pod *pod;
        gc_strpool *pool;
        gc_claim_device *devs;
        gc_dra_amount *used;
        size_t n;
} gc__hami_claim;

static int gc__hami_claim_dev(void *ud, const gc__hami_use *u)
{
        gc__hami_claim *x = ud;
        char id[GC__HAMI_FIELD_MAX + 1];
        gc_claim_device *d = &x->devs[x->n];
        gc_dra_amount *used = &x->used[2 * x->n];

        memcpy(id, u->id, u->id_len);
        id[u->id_len] = '\0';
        memset(d, 0, sizeof(*d));
        d->key = gc_dra_device_key(x->pool, GC_HAMI_DRIVER, x->pod->node, id);
        used[0].name = gc_strpool_intern0(x->pool, "memory");
        used[0].value = (double)u->mem;
        used[1].name = gc_strpool_intern0(x->pool, "cores");
        used[1].value = (double)u->cores;
        if (!d->key || !used[0].name || !used[1].name)
                return -ENOMEM;
        d->n_used = 2;
        x->n++;
        return 0;
}

int gc_hami_pod_claim(const gc_pod *pod, gc_strpool *pool, gc_claim *ret, char *err, size_t errlen)
{
        gc_claim_device devs[GC_HAMI_MAX_ALLOC];
        gc_dra_amount used[2 * GC_HAMI_MAX_ALLOC];
        gc__hami_claim x = {pod, pool, devs, used, 0};
        char name[GC__NAME_MAX + 16];
        gc_claim cl;
        gc_dra_amount *to;
        int r;

        if (!pod || !pool || !ret)
                return -EINVAL;
        if (!pod->hami_alloc || !pod->node)
                return 0;
        r = gc__hami_alloc(pod->hami_alloc, gc__hami_claim_dev, &x, err, errlen);
        if (r < 0)
                return r == -ENOMEM ? GC__FAIL(err, errlen, r, "out of memory") : r;
        if (x.n == 0)
                return 0;
        memset(&cl, 0, sizeof(cl));
        snprintf(name, sizeof(name), "%s%s", GC_HAMI_CLAIM_PREFIX, pod->name ? pod->name : "");
        cl.name = gc_strpool_intern0(pool, name);
        cl.ns = pod->ns;
        cl.uid = pod->uid;
        cl.created_at = pod->created_at;
        cl.n_devices = (uint8_t)x.n;
        cl.devices = malloc(x.n * sizeof(*cl.devices) + 2 * x.n * sizeof(gc_dra_amount));
        if (!cl.name || !cl.devices) {
                free(cl.devices);
                return GC__FAIL(err, errlen, -ENOMEM, "out of memory");
        }
        to = (gc_dra_amount *)(cl.devices + x.n);
        memcpy(to, used, 2 * x.n * sizeof(*to));
        for (size_t k = 0; k < x.n; k++) {
                cl.devices[k] = devs[k];
                cl.devices[k].used = to + 2 * k;
        }
        *ret = cl;
        return 1;
}
