/* gpuuse ingest: dcgm samples from text bodies and Prometheus API answers, joined into readings. */
#include "gpuuse_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum metric {
        M_NONE = 0,
        M_GR,
        M_UTIL,
        M_USED,
        M_FREE,
        M_TENSOR,
        M_POWER,
        /* HAMi's vGPU monitor, per container (cmd/vGPUmonitor/metrics.go): SM use in percent,
         * framebuffer in bytes. The current names and the --legacy-metrics ones. */
        M_HAMI_UTIL,
        M_HAMI_USED,
};

struct gc_gpuuse_batch {
        gc_gpuuse *s;
        gc_prom_parser *parser; /* NULL for JSON */
        int64_t now, interval;
        gc__reading *rd;
        size_t n, cap;
        uint32_t *tab; /* (dev, t) -> reading index + 1; open addressing */
        size_t tab_slots;
        gc_gpuuse_stats st;
        int err;          /* first hard error (-ENOSPC over the batch limit, -ENOMEM) */
        unsigned flags;   /* the parser's: GC_PROM_OPENMETRICS or 0 */
        int wire;         /* the format came from a Content-Type (a scrape), not the body */
        uint64_t stamped; /* samples that carried a timestamp */
};

static enum metric classify(const char *name)
{
        if (strcasecmp(name, "hami_container_device_utilization_ratio") == 0 ||
            strcasecmp(name, "Device_utilization_desc_of_container") == 0)
                return M_HAMI_UTIL;
        if (strcasecmp(name, "hami_vgpu_memory_used_bytes") == 0 ||
            strcasecmp(name, "vGPU_device_memory_usage_in_bytes") == 0)
                return M_HAMI_USED;
        /* Every dcgm metric we use starts with "DCGM_FI_" (any case); most others stop here. */
        if (strncasecmp(name, "dcgm_fi_", 8) != 0)
                return M_NONE;
        name += 8;
        if (strcasecmp(name, "PROF_GR_ENGINE_ACTIVE") == 0)
                return M_GR;
        if (strcasecmp(name, "DEV_GPU_UTIL") == 0)
                return M_UTIL;
        if (strcasecmp(name, "DEV_FB_USED") == 0)
                return M_USED;
        if (strcasecmp(name, "DEV_FB_FREE") == 0)
                return M_FREE;
        if (strcasecmp(name, "PROF_PIPE_TENSOR_ACTIVE") == 0)
                return M_TENSOR;
        if (strcasecmp(name, "DEV_POWER_USAGE") == 0)
                return M_POWER;
        return M_NONE;
}

/* Ranks label schemes: exported_* (behind a Prometheus) over plain over legacy "-o" names. */
static void take_label(const char **v, size_t *vl, int *rank, int r, const gc_prom_label *l)
{
        if (r > *rank) {
                *v = l->value;
                *vl = l->value_len;
                *rank = r;
        }
}

static void file_labels(const gc_prom_label *lb, size_t nl, gc__labels *ret)
{
        int rp = 0, rn = 0, rc = 0;

        memset(ret, 0, sizeof(*ret));
        for (size_t i = 0; i < nl; i++) {
                const gc_prom_label *l = &lb[i];
                const char *n = l->name;

                switch (n[0] | 0x20) {
                case 'u':
                        if (gc__label_is(n, "UUID")) {
                                ret->uuid = l->value;
                                ret->uuid_len = l->value_len;
                        }
                        break;
                case 'd': /* HAMi's device label, current and legacy */
                        if (gc__label_is(n, "device_uuid") || gc__label_is(n, "deviceuuid")) {
                                ret->uuid = l->value;
                                ret->uuid_len = l->value_len;
                        }
                        break;
                case 'g':
                        if (gc__label_is(n, "GPU_I_ID")) {
                                ret->gi = l->value;
                                ret->gi_len = l->value_len;
                        } else if (gc__label_is(n, "GPU_I_PROFILE")) {
                                ret->profile = l->value;
                                ret->profile_len = l->value_len;
                        } else if (gc__label_is(n, "gpu")) {
                                ret->gpu = l->value;
                                ret->gpu_len = l->value_len;
                        }
                        break;
                case 'm':
                        if (gc__label_is(n, "modelName")) {
                                ret->model = l->value;
                                ret->model_len = l->value_len;
                        }
                        break;
                case 'h':
                        if (gc__label_is(n, "Hostname")) {
                                ret->host = l->value;
                                ret->host_len = l->value_len;
                        }
                        break;
                case 'p':
                        if (gc__label_is(n, "pod"))
                                take_label(&ret->pod, &ret->pod_len, &rp, 2, l);
                        else if (gc__label_is(n, "pod_name") || gc__label_is(n, "podname"))
                                take_label(&ret->pod, &ret->pod_len, &rp, 1, l);
                        else if (gc__label_is(n, "pod_namespace") ||
                                 gc__label_is(n, "podnamespace"))
                                take_label(&ret->ns, &ret->ns_len, &rn, 1, l);
                        else if (gc__label_is(n, "pod_uid")) {
                                ret->uid = l->value;
                                ret->uid_len = l->value_len;
                        }
                        break;
                case 'n':
                        if (gc__label_is(n, "namespace"))
                                take_label(&ret->ns, &ret->ns_len, &rn, 2, l);
                        break;
                case 'c':
                        if (gc__label_is(n, "container"))
                                take_label(&ret->container, &ret->container_len, &rc, 2, l);
                        else if (gc__label_is(n, "container_name") || gc__label_is(n, "ctrname"))
                                take_label(&ret->container, &ret->container_len, &rc, 1, l);
                        break;
                case 'e':
                        if (strncasecmp(n, "exported_", 9) != 0)
                                break;
                        n += 9;
                        if (gc__label_is(n, "pod") || gc__label_is(n, "pod_name"))
                                take_label(&ret->pod, &ret->pod_len, &rp, 3, l);
                        else if (gc__label_is(n, "namespace") || gc__label_is(n, "pod_namespace"))
                                take_label(&ret->ns, &ret->ns_len, &rn, 3, l);
                        else if (gc__label_is(n, "container") || gc__label_is(n, "container_name"))
                                take_label(&ret->container, &ret->container_len, &rc, 3, l);
                        break;
                default:
                        break;
                }
        }
}

static size_t tab_home(uint32_t dev, int32_t pod, int64_t t, size_t slots)
{
        uint64_t h = ((uint64_t)dev * 0x9E3779B97F4A7C15ull) ^
                     ((uint64_t)t * 0xC2B2AE3D27D4EB4Full) ^
                     ((uint64_t)(uint32_t)pod * 0x165667B19E3779F9ull);

        h ^= h >> 29;
        return (size_t)(h & (slots - 1));
}

static int tab_grow(gc_gpuuse_batch *b)
{
        size_t n = b->tab_slots ? b->tab_slots * 2 : 1024;
        uint32_t *t = calloc(n, sizeof(*t));

        if (!t)
                return -ENOMEM;
        for (size_t i = 0; i < b->n; i++) {
                size_t j =
                    tab_home(b->rd[i].dev, b->rd[i].per_pod ? b->rd[i].pod : -1, b->rd[i].t, n);

                while (t[j])
                        j = (j + 1) & (n - 1);
                t[j] = (uint32_t)i + 1;
        }
        free(b->tab);
        b->tab = t;
        b->tab_slots = n;
        return 0;
}

/* The reading of (dev, t) (pod -1), or of a pod's own figures on it; created when new. */
static gc__reading *reading_get(gc_gpuuse_batch *b, uint32_t dev, int32_t pod, int64_t t)
{
        size_t j;
        gc__reading *r;

        if (b->tab_slots) {
                for (j = tab_home(dev, pod, t, b->tab_slots); b->tab[j];
                     j = (j + 1) & (b->tab_slots - 1)) {
                        r = &b->rd[b->tab[j] - 1];
                        if (r->dev == dev && r->t == t && (r->per_pod ? r->pod : -1) == pod)
                                return r;
                }
        }
        if (b->n >= b->s->o.max_batch_readings) {
                b->st.readings_over_limit++;
                if (!b->err)
                        b->err = -ENOSPC;
                return NULL;
        }
        if (b->n == b->cap) {
                size_t c = b->cap ? b->cap * 2 : 256;
                gc__reading *nr;

                if (c > b->s->o.max_batch_readings)
                        c = b->s->o.max_batch_readings;
                nr = realloc(b->rd, c * sizeof(*nr));
                if (!nr)
                        goto oom;
                b->rd = nr;
                b->cap = c;
        }
        if ((b->n + 1) * 2 > b->tab_slots && tab_grow(b) < 0)
                goto oom;
        r = &b->rd[b->n];
        r->t = t;
        r->dev = dev;
        r->pod = pod;
        r->per_pod = pod >= 0;
        r->gr = r->util = r->used = r->free = r->tensor = r->power = NAN;
        for (j = tab_home(dev, pod, t, b->tab_slots); b->tab[j]; j = (j + 1) & (b->tab_slots - 1))
                ;
        b->tab[j] = (uint32_t)++b->n;
        return r;
oom:
        b->err = -ENOMEM;
        return NULL;
}

/* One sample of any metric: filed under its device and time, or counted as ignored/missing. */
static int take(gc_gpuuse_batch *b, const char *name, const gc_prom_label *lb, size_t nl, double v,
                int64_t t)
{
        enum metric m = classify(name);
        gc__labels l;
        uint32_t dev, pod = 0;
        int has_pod, per_pod, r;
        gc__reading *rd;
        float fv;

        b->st.samples++;
        if (m == M_NONE) {
                b->st.ignored++;
                return 0;
        }
        if (isnan(v) || isinf(v)) {
                b->st.missing++;
                return 0;
        }
        file_labels(lb, nl, &l);
        if (!l.uuid_len) {
                b->st.ignored++;
                return 0;
        }
        r = gc__dev_get(b->s, &l, b->now, &dev);
        if (r == -E2BIG) {
                b->st.devices_over_limit++;
                return 0;
        }
        if (r < 0) {
                b->st.ignored++;
                return r == -ENOMEM ? r : 0;
        }
        has_pod = l.pod_len && l.ns_len;
        if (has_pod) {
                r = gc__pod_get(b->s, &l, b->now, &pod);
                if (r == -E2BIG) {
                        b->st.pods_over_limit++;
                        return 0;
                }
                if (r < 0) {
                        b->st.ignored++;
                        return r == -ENOMEM ? r : 0;
                }
        }
        /* A pod's own figures: HAMi's, and dcgm-exporter's per-process SM use and memory of a
         * shared GPU (KUBERNETES_VIRTUAL_GPUS: those series carry pod_uid; docs/usage.md). A
         * MIG instance is never shared that way (and its GPU_UTIL reads 0). */
        per_pod = has_pod && (m == M_HAMI_UTIL || m == M_HAMI_USED ||
                              (l.uid_len && !l.gi_len && (m == M_UTIL || m == M_USED)));
        rd = reading_get(b, dev, per_pod ? (int32_t)pod : -1, t);
        if (!rd)
                return b->err == -ENOMEM ? -ENOMEM : 0;
        if (has_pod && rd->pod < 0)
                rd->pod = (int32_t)pod;
        fv = (float)v;
        switch (m) {
        case M_HAMI_UTIL: /* a pod's containers on one device add up */
                rd->util = isnan(rd->util) ? fv : rd->util + fv;
                break;
        case M_HAMI_USED:
                fv = (float)(v / 1048576.0);
                rd->used = isnan(rd->used) ? fv : rd->used + fv;
                break;
        case M_GR:
                rd->gr = fv;
                break;
        case M_UTIL:
                rd->util = fv;
                break;
        case M_USED:
                rd->used = fv;
                break;
        case M_FREE:
                rd->free = fv;
                break;
        case M_TENSOR:
                rd->tensor = fv;
                break;
        case M_POWER:
                rd->power = fv;
                break;
        case M_NONE:
        default:
                break;
        }
        b->st.used++;
        return 0;
}

static int on_sample(const gc_prom_sample *smp, void *userdata)
{
        gc_gpuuse_batch *b = userdata;
        int64_t t = b->now;

        if (smp->has_timestamp) {
                b->stamped++;
                /* floor division: -1 ms is second -1 */
                t = smp->timestamp_ms / 1000;
                if (smp->timestamp_ms % 1000 < 0)
                        t--;
        }
        if (smp->missing) {
                b->st.samples++;
                b->st.missing++;
                return 0;
        }
        return take(b, smp->name, smp->labels, smp->n_labels, smp->value, t);
}

static gc_gpuuse_batch *batch_new(gc_gpuuse *s, int64_t now, int64_t interval_s)
{
        gc_gpuuse_batch *b;

        if (!s || interval_s < 0)
                return NULL;
        b = calloc(1, sizeof(*b));
        if (!b)
                return NULL;
        b->s = s;
        b->now = now;
        b->interval = interval_s ? interval_s : s->o.interval_s;
        return b;
}

gc_gpuuse_batch *gc_gpuuse_batch_begin(gc_gpuuse *s, int64_t now, int64_t interval_s,
                                       unsigned prom_flags)
{
        gc_gpuuse_batch *b = batch_new(s, now, interval_s);

        if (!b)
                return NULL;
        b->flags = prom_flags;
        b->parser = gc_prom_parser_new(s->o.max_line_bytes, prom_flags, on_sample, b);
        if (!b->parser) {
                free(b);
                return NULL;
        }
        return b;
}

int gc__batch_wire_format(gc_gpuuse_batch *b, const char *content_type)
{
        unsigned flags = gc_prom_content_type_flags(content_type);
        gc_prom_parser *p;

        if (!b || !b->parser)
                return -EINVAL;
        if (b->st.bytes)
                return -EBUSY;
        b->wire = 1;
        if (flags == b->flags)
                return 0;
        p = gc_prom_parser_new(b->s->o.max_line_bytes, flags, on_sample, b);
        if (!p)
                return -ENOMEM;
        gc_prom_parser_free(b->parser);
        b->parser = p;
        b->flags = flags;
        return 0;
}

int gc_gpuuse_batch_feed(gc_gpuuse_batch *b, const void *data, size_t n)
{
        int r;

        if (!b || !b->parser)
                return -EINVAL;
        b->st.bytes += n;
        r = gc_prom_parser_feed(b->parser, data, n);
        return r < 0 ? r : 0;
}

void gc_gpuuse_batch_abort(gc_gpuuse_batch *b)
{
        if (!b)
                return;
        gc_prom_parser_free(b->parser);
        free(b->rd);
        free(b->tab);
        free(b);
}

int gc_gpuuse_batch_end(gc_gpuuse_batch *b, gc_gpuuse_stats *st)
{
        int r;

        if (!b)
                return -EINVAL;
        if (b->parser) {
                gc_prom_stats ps;

                r = gc_prom_parser_finish(b->parser);
                if (r < 0 && !b->err)
                        b->err = r;
                gc_prom_parser_stats(b->parser, &ps);
                b->st.parse_errors += ps.errors;
                if (ps.errors && !b->st.first_error_line) {
                        b->st.first_error_line = ps.first_error_line;
                        gc_strlcpy(b->st.first_error, ps.first_error, sizeof(b->st.first_error));
                }
                /*
                 * An OpenMetrics body (it ends with "# EOF") served as text format 0.0.4: its
                 * timestamps are seconds and were read as milliseconds, so every reading sits in
                 * January 1970. Apply none of them rather than wrong ones.
                 */
                if (b->wire && ps.eof_seen && !(b->flags & GC_PROM_OPENMETRICS) && b->stamped) {
                        r = -EPROTO;
                        goto done;
                }
        }
        /* What fit is applied even when the batch overflowed: it is a true prefix of the body. */
        gc__apply(b->s, b->rd, b->n, b->interval, &b->st);
        r = b->err;
done:
        if (st)
                *st = b->st;
        gc_gpuuse_batch_abort(b);
        return r;
}

int gc_gpuuse_ingest_text(gc_gpuuse *s, const char *body, size_t n, int64_t now, int64_t interval_s,
                          gc_gpuuse_stats *st)
{
        gc_gpuuse_batch *b;
        int r;

        if (st)
                memset(st, 0, sizeof(*st));
        if (!s || (!body && n))
                return -EINVAL;
        b = gc_gpuuse_batch_begin(s, now, interval_s, gc_prom_body_flags(body, n));
        if (!b)
                return -ENOMEM;
        r = gc_gpuuse_batch_feed(b, body, n);
        if (r < 0 && !b->err)
                b->err = r;
        return gc_gpuuse_batch_end(b, st);
}

/* ---- Prometheus HTTP API answers ------------------------------------------------------------ */

static void json_error(gc_gpuuse_batch *b, size_t series, const char *why)
{
        b->st.parse_errors++;
        if (!b->st.first_error_line) {
                b->st.first_error_line = series + 1;
                gc_strlcpy(b->st.first_error, why, sizeof(b->st.first_error));
        }
}

static void json_point(gc_gpuuse_batch *b, size_t series, const char *name, const gc_prom_label *lb,
                       size_t nl, const cJSON *pt)
{
        const cJSON *ts = cJSON_GetArrayItem(pt, 0), *vs = cJSON_GetArrayItem(pt, 1);
        double v;

        if (!cJSON_IsArray(pt) || cJSON_GetArraySize(pt) != 2 || !cJSON_IsNumber(ts) ||
            !cJSON_IsString(vs) || !isfinite(ts->valuedouble) || fabs(ts->valuedouble) > 9.2e15) {
                json_error(b, series, "a point is not [time, \"value\"]");
                return;
        }
        if (gc_prom_parse_value(vs->valuestring, strlen(vs->valuestring), &v) < 0) {
                json_error(b, series, "a value is not a number");
                return;
        }
        if (v >= GC_PROM_SENTINEL_MIN && !isinf(v))
                v = NAN;
        if (take(b, name, lb, nl, v, (int64_t)floor(ts->valuedouble)) == -ENOMEM)
                b->err = -ENOMEM;
}

/* One series of a matrix ("values") or vector ("value") answer, the si-th. */
static void json_series(gc_gpuuse_batch *b, size_t si, const cJSON *series, int matrix)
{
        const cJSON *metric = cJSON_GetObjectItemCaseSensitive(series, "metric");
        const cJSON *l, *pts, *pt;
        gc_prom_label lb[GC_PROM_MAX_LABELS];
        const char *name = NULL;
        size_t nl = 0;
        int bad = 0;

        cJSON_ArrayForEach(l, metric)
        {
                if (!cJSON_IsString(l) || !l->string) {
                        bad = 1;
                        break;
                }
                if (strcmp(l->string, "__name__") == 0) {
                        name = l->valuestring;
                        continue;
                }
                if (nl == GC_PROM_MAX_LABELS) {
                        bad = 1;
                        break;
                }
                lb[nl].name = l->string;
                lb[nl].value = l->valuestring;
                lb[nl].value_len = strlen(l->valuestring);
                nl++;
        }
        if (bad || !cJSON_IsObject(metric)) {
                json_error(b, si, "a series' metric is not an object of strings");
                return;
        }
        if (!name) {
                /* An aggregation dropped the name: nothing says which metric it is. */
                b->st.samples++;
                b->st.ignored++;
                return;
        }
        if (!matrix) {
                json_point(b, si, name, lb, nl, cJSON_GetObjectItemCaseSensitive(series, "value"));
                return;
        }
        pts = cJSON_GetObjectItemCaseSensitive(series, "values");
        if (!cJSON_IsArray(pts)) {
                json_error(b, si, "a matrix series has no values");
                return;
        }
        cJSON_ArrayForEach(pt, pts) json_point(b, si, name, lb, nl, pt);
}

int gc_gpuuse_ingest_prom_json(gc_gpuuse *s, const char *body, size_t n, size_t max_body_bytes,
                               int64_t interval_s, gc_gpuuse_stats *st, char *err, size_t errlen)
{
        cJSON *root = NULL;
        const cJSON *status, *data, *rtype, *result, *series;
        gc_gpuuse_batch *b = NULL;
        size_t si = 0;
        int matrix, r;

        if (st)
                memset(st, 0, sizeof(*st));
        if (err && errlen)
                err[0] = '\0';
        if (!s || (!body && n))
                return -EINVAL;
        if (n > max_body_bytes) {
                if (err)
                        snprintf(err, errlen, "answer of %zu bytes is over the limit of %zu", n,
                                 max_body_bytes);
                return -E2BIG;
        }
        root = cJSON_ParseWithLengthOpts(body, n, NULL, 0);
        if (!root) {
                r = -EINVAL;
                if (err)
                        snprintf(err, errlen, "answer is not JSON");
                goto out;
        }
        status = cJSON_GetObjectItemCaseSensitive(root, "status");
        if (!cJSON_IsString(status) || strcmp(status->valuestring, "success") != 0) {
                const cJSON *et = cJSON_GetObjectItemCaseSensitive(root, "errorType");
                const cJSON *em = cJSON_GetObjectItemCaseSensitive(root, "error");

                r = -EINVAL;
                if (err)
                        snprintf(err, errlen, "Prometheus: %s: %s",
                                 cJSON_IsString(et) ? et->valuestring : "status not success",
                                 cJSON_IsString(em) ? em->valuestring : "(no message)");
                goto out;
        }
        data = cJSON_GetObjectItemCaseSensitive(root, "data");
        rtype = cJSON_GetObjectItemCaseSensitive(data, "resultType");
        result = cJSON_GetObjectItemCaseSensitive(data, "result");
        if (!cJSON_IsString(rtype) || !cJSON_IsArray(result) ||
            (strcmp(rtype->valuestring, "matrix") != 0 &&
             strcmp(rtype->valuestring, "vector") != 0)) {
                r = -EINVAL;
                if (err)
                        snprintf(err, errlen, "answer is not a matrix or vector result");
                goto out;
        }
        matrix = strcmp(rtype->valuestring, "matrix") == 0;
        b = batch_new(s, 0, interval_s);
        if (!b) {
                r = -ENOMEM;
                goto out;
        }
        b->st.bytes = n;
        cJSON_ArrayForEach(series, result)
        {
                json_series(b, si++, series, matrix);
                if (b->err == -ENOMEM)
                        break;
        }
        r = gc_gpuuse_batch_end(b, st);
        b = NULL;
out:
        gc_gpuuse_batch_abort(b);
        cJSON_Delete(root);
        return r;
}
