/* client summary: the cost-summary JSON read back into a gc_cost_summary, every member checked. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_int.h"

#define GC_CLIENT__POOL_MAX ((size_t)256 << 20) /* strings of one answer (its body is 64 MiB) */
#define GC_CLIENT__WHERE    64

static int gc_client__bad(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int gc_client__bad(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        gc_verrf(err, errlen, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* An optional figure: absent is 0; anything but a finite number is refused. */
static int gc_client__figure(const cJSON *o, const char *name, double *ret, const char *where,
                             char *err, size_t errlen)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

        *ret = 0;
        if (!v)
                return 0;
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
                return gc_client__bad(err, errlen, "%s.%s: not a finite number", where, name);
        *ret = v->valuedouble;
        return 0;
}

/* An optional count: absent is 0; else a whole number in [0, 2^32). */
static int gc_client__count(const cJSON *o, const char *name, uint32_t *ret, const char *where,
                            char *err, size_t errlen)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
        double d;

        *ret = 0;
        if (!v)
                return 0;
        d = cJSON_IsNumber(v) ? v->valuedouble : -1;
        if (!(d >= 0 && d <= (double)UINT32_MAX && d == floor(d)))
                return gc_client__bad(err, errlen, "%s.%s: not a whole number of at most 32 bits",
                                      where, name);
        *ret = (uint32_t)d;
        return 0;
}

/* The figures of a row or a line: GPU-seconds (or hours), cost, pods, estimates. */
static int gc_client__amounts(const cJSON *o, gc_cost_row *row, const char *where, char *err,
                              size_t errlen)
{
        double hours;
        int r;

        if (o && !cJSON_IsObject(o))
                return gc_client__bad(err, errlen, "%s: not an object", where);
        r = gc_client__figure(o, "gpu_seconds", &row->gpu_seconds, where, err, errlen);
        if (r == 0 && !cJSON_GetObjectItemCaseSensitive(o, "gpu_seconds")) {
                r = gc_client__figure(o, "gpu_hours", &hours, where, err, errlen);
                row->gpu_seconds = hours * 3600.0;
                if (r == 0 && !isfinite(row->gpu_seconds))
                        return gc_client__bad(err, errlen, "%s.gpu_hours: out of range", where);
        }
        /* cost; a controller before money fields became currency-neutral says cost. */
        if (r == 0)
                r = gc_client__figure(
                    o, cJSON_GetObjectItemCaseSensitive(o, "cost") ? "cost" : "cost_usd",
                    &row->cost, where, err, errlen);
        if (r == 0)
                r = gc_client__count(o, "pods", &row->pods, where, err, errlen);
        if (r == 0)
                r = gc_client__count(o, "estimates", &row->estimates, where, err, errlen);
        return r;
}

/* An optional string member, interned: NULL when absent; -EINVAL when not a string. */
static int gc_client__string(gc_strpool *pool, const cJSON *o, const char *name, const char **ret,
                             const char *where, char *err, size_t errlen)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

        *ret = NULL;
        if (!v)
                return 0;
        if (!cJSON_IsString(v))
                return gc_client__bad(err, errlen, "%s.%s: not a string", where, name);
        *ret = gc_strpool_intern0(pool, v->valuestring);
        if (!*ret) {
                gc_errf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        return 0;
}

static int gc_client__window(const cJSON *doc, gc_cost_summary *sum, char *err, size_t errlen)
{
        const cJSON *win = cJSON_GetObjectItemCaseSensitive(doc, "window");
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(win, "start");
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(win, "end");

        if (!cJSON_IsObject(win))
                return gc_client__bad(err, errlen, "window: missing or not an object");
        if (!cJSON_IsString(s) ||
            gc_time_parse(s->valuestring, strlen(s->valuestring), &sum->start) < 0)
                return gc_client__bad(err, errlen, "window.start: not an RFC 3339 time");
        if (!cJSON_IsString(e) ||
            gc_time_parse(e->valuestring, strlen(e->valuestring), &sum->end) < 0)
                return gc_client__bad(err, errlen, "window.end: not an RFC 3339 time");
        if (sum->start > sum->end)
                return gc_client__bad(err, errlen, "window: the start is after the end");
        return 0;
}

/* "by": the grouping, a label dimension taking the next label slot, named as the server named it.
 */
static int gc_client__by(const cJSON *doc, gc_strpool *pool, gc_cost_summary *sum, char *err,
                         size_t errlen)
{
        const cJSON *by = cJSON_GetObjectItemCaseSensitive(doc, "by");
        const cJSON *it;
        unsigned seen = 0;

        if (!cJSON_IsArray(by))
                return gc_client__bad(err, errlen, "by: missing or not an array");
        cJSON_ArrayForEach(it, by)
        {
                const char *key;
                size_t klen, i = sum->n_by;
                gc_dim d;

                if (i == GC_KEY_COUNT)
                        return gc_client__bad(err, errlen, "by: more than %d dimensions",
                                              GC_KEY_COUNT);
                if (!cJSON_IsString(it))
                        return gc_client__bad(err, errlen, "by[%zu]: not a string", i);
                if (gc_dim_is_label(it->valuestring, strlen(it->valuestring), &key, &klen)) {
                        if (klen == 0 || klen > GC_LABEL_KEY_MAX)
                                return gc_client__bad(err, errlen, "by[%zu]: a bad label key", i);
                        if (sum->label_keys.n == GC_LABEL_DIMS)
                                return gc_client__bad(err, errlen,
                                                      "by[%zu]: more than %d label dimensions", i,
                                                      GC_LABEL_DIMS);
                        key = gc_strpool_intern(pool, key, klen);
                        if (!key) {
                                gc_errf(err, errlen, "out of memory");
                                return -ENOMEM;
                        }
                        for (size_t j = 0; j < sum->label_keys.n; j++)
                                if (sum->label_keys.key[j] == key)
                                        return gc_client__bad(err, errlen,
                                                              "by[%zu]: label:%s repeated", i, key);
                        sum->label_keys.key[sum->label_keys.n] = key;
                        d = (gc_dim)(GC_DIM_LABEL + sum->label_keys.n++);
                } else if (gc_dim_parse(it->valuestring, strlen(it->valuestring), &d) < 0 ||
                           d >= GC_DIM_LABEL) {
                        return gc_client__bad(err, errlen, "by[%zu]: \"%.64s\" is no dimension", i,
                                              it->valuestring);
                }
                if (seen & (1u << d))
                        return gc_client__bad(err, errlen, "by[%zu]: \"%.64s\" repeated", i,
                                              it->valuestring);
                seen |= 1u << d;
                sum->by[sum->n_by++] = d;
        }
        return 0;
}

/* An array's items, refused past max; *ret_n 0 when absent and optional. */
static int gc_client__array(const cJSON *a, const char *name, int required, size_t max,
                            size_t *ret_n, char *err, size_t errlen)
{
        size_t n = 0;
        const cJSON *it;

        *ret_n = 0;
        if (!a && !required)
                return 0;
        if (!cJSON_IsArray(a))
                return gc_client__bad(err, errlen, "%s: missing or not an array", name);
        /* Counted here rather than by cJSON_GetArraySize, whose int a hostile array could pass. */
        cJSON_ArrayForEach(it, a)
        {
                if (n == max) {
                        gc_errf(err, errlen, "%s: more than %zu items", name, max);
                        return -E2BIG;
                }
                n++;
        }
        *ret_n = n;
        return 0;
}

static int gc_client__group(const cJSON *it, size_t i, gc_strpool *pool, const gc_cost_summary *sum,
                            gc_cost_row *row, char *err, size_t errlen)
{
        const cJSON *keys = cJSON_GetObjectItemCaseSensitive(it, "keys");
        char where[GC_CLIENT__WHERE], where_keys[GC_CLIENT__WHERE];
        int r = 0;

        snprintf(where, sizeof(where), "groups[%zu]", i);
        snprintf(where_keys, sizeof(where_keys), "groups[%zu].keys", i);
        if (!cJSON_IsObject(it))
                return gc_client__bad(err, errlen, "%s: not an object", where);
        if (!cJSON_IsObject(keys))
                return gc_client__bad(err, errlen, "%s: missing or not an object", where_keys);
        for (size_t k = 0; r == 0 && k < sum->n_by; k++) {
                char name[GC_LABEL_KEY_MAX + 8];
                const char *dn =
                    gc_dim_label_name(sum->by[k], &sum->label_keys, name, sizeof(name));

                if (!dn)
                        return gc_client__bad(err, errlen, "%s: a dimension without a name", where);
                r = gc_client__string(pool, keys, dn, &row->keys[sum->by[k]], where_keys, err,
                                      errlen);
        }
        return r == 0 ? gc_client__amounts(it, row, where, err, errlen) : r;
}

static int gc_client__node(const cJSON *it, size_t i, gc_strpool *pool, gc_cost_row *row, char *err,
                           size_t errlen)
{
        char where[GC_CLIENT__WHERE];
        int r;

        snprintf(where, sizeof(where), "idle.nodes[%zu]", i);
        if (!cJSON_IsObject(it))
                return gc_client__bad(err, errlen, "%s: not an object", where);
        r = gc_client__string(pool, it, "node", &row->keys[GC_DIM_NODE], where, err, errlen);
        if (r == 0)
                r = gc_client__string(pool, it, "model", &row->keys[GC_DIM_MODEL], where, err,
                                      errlen);
        if (r == 0)
                r = gc_client__string(pool, it, "capacity_type", &row->keys[GC_DIM_CAPACITY_TYPE],
                                      where, err, errlen);
        return r == 0 ? gc_client__amounts(it, row, where, err, errlen) : r;
}

/* The four lines of every summary; "total" is required, the others may be absent (zeros). */
static int gc_client__lines(const cJSON *doc, gc_cost_summary *sum, char *err, size_t errlen)
{
        const cJSON *total = cJSON_GetObjectItemCaseSensitive(doc, "total");
        int r;

        if (!cJSON_IsObject(total))
                return gc_client__bad(err, errlen, "total: missing or not an object");
        r = gc_client__amounts(total, &sum->total, "total", err, errlen);
        if (r == 0)
                r = gc_client__amounts(cJSON_GetObjectItemCaseSensitive(doc, "idle"), &sum->idle,
                                       "idle", err, errlen);
        if (r == 0)
                r = gc_client__amounts(cJSON_GetObjectItemCaseSensitive(doc, "unattributed"),
                                       &sum->unattributed, "unattributed", err, errlen);
        if (r == 0)
                r = gc_client__amounts(cJSON_GetObjectItemCaseSensitive(doc, "capacity"),
                                       &sum->capacity, "capacity", err, errlen);
        return r;
}

int gc_client_summary_from_json(const cJSON *doc, gc_strpool *pool, gc_cost_summary *ret, char *err,
                                size_t errlen)
{
        const cJSON *groups = cJSON_GetObjectItemCaseSensitive(doc, "groups");
        const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(doc, "idle"), "nodes");
        const cJSON *it;
        gc_cost_summary sum;
        size_t i;
        int r;

        memset(&sum, 0, sizeof(sum));
        if (!pool || !ret)
                return gc_client__bad(err, errlen, "invalid arguments");
        if (!cJSON_IsObject(doc))
                return gc_client__bad(err, errlen, "not a JSON object");
        r = gc_client__window(doc, &sum, err, errlen);
        if (r == 0)
                r = gc_client__by(doc, pool, &sum, err, errlen);
        if (r == 0)
                r = gc_client__array(groups, "groups", 1, GC_CLIENT_MAX_ROWS, &sum.n_rows, err,
                                     errlen);
        if (r == 0)
                r = gc_client__array(nodes, "idle.nodes", 0, GC_CLIENT_MAX_NODES, &sum.n_idle_nodes,
                                     err, errlen);
        if (r < 0)
                return r;
        sum.rows = calloc(sum.n_rows ? sum.n_rows : 1, sizeof(*sum.rows));
        sum.idle_nodes = calloc(sum.n_idle_nodes ? sum.n_idle_nodes : 1, sizeof(*sum.idle_nodes));
        if (!sum.rows || !sum.idle_nodes) {
                gc_errf(err, errlen, "out of memory");
                r = -ENOMEM;
                goto fail;
        }
        i = 0;
        cJSON_ArrayForEach(it, groups)
        {
                r = gc_client__group(it, i, pool, &sum, &sum.rows[i], err, errlen);
                if (r < 0)
                        goto fail;
                i++;
        }
        i = 0;
        cJSON_ArrayForEach(it, nodes)
        {
                r = gc_client__node(it, i, pool, &sum.idle_nodes[i], err, errlen);
                if (r < 0)
                        goto fail;
                i++;
        }
        r = gc_client__lines(doc, &sum, err, errlen);
        if (r < 0)
                goto fail;
        *ret = sum;
        return 0;
fail:
        gc_cost_summary_free(&sum);
        return r;
}

const cJSON *gc_client_steps(const cJSON *doc)
{
        const cJSON *it;

        if (!cJSON_IsObject(doc) || cJSON_GetObjectItemCaseSensitive(doc, "groups"))
                return NULL;
        cJSON_ArrayForEach(it, doc)
        {
                if (cJSON_IsArray(it) && it->child &&
                    cJSON_GetObjectItemCaseSensitive(it->child, "groups"))
                        return it;
        }
        return NULL;
}

/* A summary's currency: its own, else the envelope's (steps may leave it there), else NULL. */
static int gc_client__currency(const cJSON *o, const char *def, const char **ret, char *err,
                               size_t errlen)
{
        const cJSON *cur = cJSON_GetObjectItemCaseSensitive(o, "currency");

        *ret = def;
        if (!cur)
                return 0;
        if (!cJSON_IsString(cur))
                return gc_client__bad(err, errlen, "currency: not a string");
        *ret = cur->valuestring;
        return 0;
}

/* One summary decoded, handed to fn and freed; steps (NULL for a single summary) names the
 * member it is an item of in messages. */
static int gc_client__one(const cJSON *o, const char *def_currency, const char *steps, size_t step,
                          gc_strpool *pool, gc_client_summary_fn fn, void *ud, char *err,
                          size_t errlen)
{
        gc_cost_summary sum;
        const char *currency;
        char why[512];
        int r;

        why[0] = '\0';
        r = gc_client__currency(o, def_currency, &currency, why, sizeof(why));
        if (r == 0)
                r = gc_client_summary_from_json(o, pool, &sum, why, sizeof(why));
        if (r < 0) {
                if (steps)
                        gc_errf(err, errlen, "%.32s[%zu]: %s", steps, step, why);
                else
                        gc_errf(err, errlen, "%s", why);
                return r;
        }
        r = fn(ud, &sum, currency, steps != NULL);
        gc_cost_summary_free(&sum);
        return r;
}

int gc_client_costs_each(const char *body, size_t len, gc_client_summary_fn fn, void *ud, char *err,
                         size_t errlen)
{
        cJSON *doc = NULL;
        const cJSON *steps, *it;
        const char *currency = NULL, *name;
        gc_strpool *pool = NULL;
        size_t n = 0;
        int r;

        if (err && errlen)
                err[0] = '\0';
        if (!body || !fn)
                return gc_client__bad(err, errlen, "invalid arguments");
        doc = cJSON_ParseWithLengthOpts(body, len, NULL, 0);
        if (!doc) {
                r = gc_client__bad(err, errlen, "not JSON");
                goto finish;
        }
        if (!cJSON_IsObject(doc)) {
                r = gc_client__bad(err, errlen, "not a JSON object");
                goto finish;
        }
        pool = gc_strpool_new(GC_CLIENT__POOL_MAX);
        if (!pool) {
                gc_errf(err, errlen, "out of memory");
                r = -ENOMEM;
                goto finish;
        }
        steps = gc_client_steps(doc);
        if (!steps) {
                r = gc_client__one(doc, NULL, NULL, 0, pool, fn, ud, err, errlen);
                goto finish;
        }
        name = steps->string ? steps->string : "sets";
        r = gc_client__array(steps, name, 1, GC_LEDGER_MAX_STEPS, &n, err, errlen);
        if (r == 0)
                r = gc_client__currency(doc, NULL, &currency, err, errlen);
        n = 0;
        cJSON_ArrayForEach(it, steps)
        {
                if (r != 0)
                        break;
                r = gc_client__one(it, currency, name, n++, pool, fn, ud, err, errlen);
        }
finish:
        if (r < 0 && err && errlen) /* messages quote the server's strings */
                gc__client_printable(err);
        gc_strpool_free(pool);
        cJSON_Delete(doc);
        return r;
}
