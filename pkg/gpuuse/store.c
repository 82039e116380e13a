/* gpuuse store: per-pod and per-device running figures, batches of readings applied in time order.
 */
#include "gpuuse_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char gc_gpuuse_default_promql[] =
    "{__name__=~\"(?i)dcgm_fi_(prof_gr_engine_active|dev_gpu_util|dev_fb_used|dev_fb_free|"
    "prof_pipe_tensor_active|dev_power_usage)|hami_container_device_utilization_ratio|"
    "hami_vgpu_memory_used_bytes|device_utilization_desc_of_container|"
    "vgpu_device_memory_usage_in_bytes\"}";

void gc_gpuuse_set_share_sink(gc_gpuuse *s, gc_gpuuse_share_fn fn, void *ud)
{
        if (!s)
                return;
        s->share_fn = fn;
        s->share_ud = ud;
}

const char *gc_gpuuse_source_name(gc_gpuuse_source s)
{
        switch (s) {
        case GC_GPUUSE_SRC_GR_ENGINE:
                return "gr_engine_active";
        case GC_GPUUSE_SRC_GPU_UTIL:
                return "gpu_util";
        case GC_GPUUSE_SRC_MIXED:
                return "mixed";
        case GC_GPUUSE_SRC_NONE:
        default:
                return "none";
        }
}

void gc_gpuuse_opts_default(gc_gpuuse_opts *ret)
{
        if (!ret)
                return;
        memset(ret, 0, sizeof(*ret));
        ret->max_pods = 100000;
        ret->max_devices = 100000;
        ret->max_devices_per_pod = 16;
        ret->max_batch_readings = (size_t)1 << 20;
        ret->max_line_bytes = 64 * 1024;
        ret->idle_activity = 0.05;
        ret->idle_mem_frac = 0.10;
        ret->active_activity = 0.10;
        ret->interval_s = 30;
        ret->retention_s = 7 * 86400;
}

/* ---- pods and devices by key: a gc_index over the slots in use ----------------------------- */

static uint32_t hash_str(const char *s, size_t n)
{
        return gc_hash_fin(gc_hash(s, n, 0));
}

/* A key looked up: "ns/pod" or "uuid[/gpu_i_id]", n bytes (a record's key is that, NUL-ended). */
typedef struct key_ref {
        const gc_gpuuse *s;
        const char *kb;
        size_t n;
} key_ref;

static int key_eq(const char *key, const char *s, size_t n)
{
        return strncmp(key, s, n) == 0 && key[n] == '\0';
}

static int pod_eq(const void *ctx, size_t row)
{
        const key_ref *k = ctx;

        return key_eq(k->s->pods[row].key, k->kb, k->n);
}

static int dev_eq(const void *ctx, size_t row)
{
        const key_ref *k = ctx;

        return key_eq(k->s->devs[row].key, k->kb, k->n);
}

/* The slot in use (pod or dev, by eq) with the key kb[0..n), hashed h. */
static int idx_find(const gc_gpuuse *s, const gc_index *x, gc_index_eq_fn eq, const char *kb,
                    size_t n, uint32_t h, uint32_t *ret_idx)
{
        key_ref k = {s, kb, n};
        size_t pos;

        if (!gc_index_find(x, h, eq, &k, &pos))
                return -ENOENT;
        *ret_idx = (uint32_t)gc_index_row(x, pos);
        return 0;
}

/* ---- records ----------------------------------------------------------------------------------
 */

/* "a/b\0a\0b\0" in one allocation: the index key and the two parts, NUL-terminated. */
static char *pair_key(const char *a, size_t an, const char *b, size_t bn, size_t *ret_keylen)
{
        size_t kl = an + (bn ? 1 + bn : 0);
        char *k = malloc(kl + 1 + an + 1 + bn + 1);
        char *p;

        if (!k)
                return NULL;
        memcpy(k, a, an);
        if (bn) {
                k[an] = '/';
                memcpy(k + an + 1, b, bn);
        }
        k[kl] = '\0';
        p = k + kl + 1;
        memcpy(p, a, an);
        p[an] = '\0';
        p += an + 1;
        if (bn)
                memcpy(p, b, bn);
        p[bn] = '\0';
        *ret_keylen = kl;
        return k;
}

static const char *pair_first(const char *k, size_t kl)
{
        return k + kl + 1;
}

static const char *pair_second(const char *k, size_t kl)
{
        const char *a = k + kl + 1;

        return a + strlen(a) + 1;
}

gc_gpuuse *gc_gpuuse_new(const gc_gpuuse_opts *opts)
{
        gc_gpuuse *s;
        gc_gpuuse_opts o;

        if (opts)
                o = *opts;
        else
                gc_gpuuse_opts_default(&o);
        if (!o.max_pods || !o.max_devices || !o.max_devices_per_pod || !o.max_batch_readings ||
            o.max_pods > UINT32_MAX / 2 || o.max_devices > UINT32_MAX / 2 ||
            o.max_devices_per_pod > 4096 || o.interval_s <= 0 || o.retention_s <= 0 ||
            !(o.idle_activity >= 0) || !(o.idle_mem_frac >= 0) || !(o.active_activity >= 0))
                return NULL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return NULL;
        s->o = o;
        return s;
}

static void pod_clear(gc__pod *p)
{
        free(p->key);
        free(p->uid);
        free(p->container);
        free(p->model);
        free(p->mig);
        free(p->host);
        free(p->devs);
        memset(p, 0, sizeof(*p));
}

static void dev_clear(gc__dev *d)
{
        free(d->key);
        free(d->mig);
        free(d->model);
        free(d->host);
        free(d->gpu);
        memset(d, 0, sizeof(*d));
}

gc_gpuuse *gc_gpuuse_free(gc_gpuuse *s)
{
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->npods; i++)
                pod_clear(&s->pods[i]);
        for (size_t i = 0; i < s->ndevs; i++)
                dev_clear(&s->devs[i]);
        free(s->pods);
        free(s->devs);
        free(s->pod_free);
        free(s->dev_free);
        gc_index_free(&s->pod_idx);
        gc_index_free(&s->dev_idx);
        free(s);
        return NULL;
}

/* Sets *field to a copy of v[0..n) unless already set or v is empty. Failure leaves it NULL. */
static void fill(char **field, const char *v, size_t n, size_t *bytes)
{
        if (*field || !v || !n)
                return;
        *field = malloc(n + 1);
        if (*field) {
                memcpy(*field, v, n);
                (*field)[n] = '\0';
                *bytes += n + 1;
        }
}

int gc__pod_get(gc_gpuuse *s, const gc__labels *l, int64_t now, uint32_t *ret)
{
        char kb[600];
        size_t kl, n;
        uint32_t h, idx;
        gc__pod *p;
        char *key;

        if (l->ns_len + l->pod_len + 1 >= sizeof(kb))
                return -EINVAL;
        memcpy(kb, l->ns, l->ns_len);
        kb[l->ns_len] = '/';
        memcpy(kb + l->ns_len + 1, l->pod, l->pod_len);
        n = l->ns_len + 1 + l->pod_len;
        h = hash_str(kb, n);
        if (idx_find(s, &s->pod_idx, pod_eq, kb, n, h, &idx) == 0) {
                p = &s->pods[idx];
                goto found;
        }
        if (s->pod_idx.count >= s->o.max_pods)
                return -E2BIG;
        if (s->npod_free) {
                idx = s->pod_free[--s->npod_free];
        } else {
                if (s->npods == s->cpods) {
                        size_t c = s->cpods ? s->cpods * 2 : 64;
                        gc__pod *np = realloc(s->pods, c * sizeof(*np));
                        uint32_t *nf = realloc(s->pod_free, c * sizeof(*nf));

                        if (np)
                                s->pods = np;
                        if (nf)
                                s->pod_free = nf;
                        if (!np || !nf)
                                return -ENOMEM;
                        s->cpods = c;
                }
                idx = (uint32_t)s->npods++;
        }
        p = &s->pods[idx];
        memset(p, 0, sizeof(*p));
        key = pair_key(l->ns, l->ns_len, l->pod, l->pod_len, &kl);
        if (!key || gc_index_insert(&s->pod_idx, h, idx) < 0) {
                free(key);
                s->pod_free[s->npod_free++] = idx;
                return -ENOMEM;
        }
        p->key = key;
        p->keylen = kl;
        p->hash = h;
        p->live = 1;
        p->created_at = now;
        p->last_at = INT64_MIN;
        s->str_bytes += 2 * (kl + 1);
found:
        /* A pod of the same name may follow a gone one: its uid is the newest seen. */
        if (l->uid_len &&
            (!p->uid || strlen(p->uid) != l->uid_len || memcmp(p->uid, l->uid, l->uid_len) != 0)) {
                if (p->uid)
                        s->str_bytes -= strlen(p->uid) + 1;
                free(p->uid);
                p->uid = NULL;
                fill(&p->uid, l->uid, l->uid_len, &s->str_bytes);
        }
        fill(&p->container, l->container, l->container_len, &s->str_bytes);
        fill(&p->model, l->model, l->model_len, &s->str_bytes);
        fill(&p->mig, l->profile, l->profile_len, &s->str_bytes);
        fill(&p->host, l->host, l->host_len, &s->str_bytes);
        *ret = idx;
        return 0;
}

int gc__dev_get(gc_gpuuse *s, const gc__labels *l, int64_t now, uint32_t *ret)
{
        char kb[600];
        size_t kl, n;
        uint32_t h, idx;
        gc__dev *d;
        char *key;

        if (l->uuid_len + l->gi_len + 1 >= sizeof(kb))
                return -EINVAL;
        memcpy(kb, l->uuid, l->uuid_len);
        n = l->uuid_len;
        if (l->gi_len) {
                kb[n++] = '/';
                memcpy(kb + n, l->gi, l->gi_len);
                n += l->gi_len;
        }
        h = hash_str(kb, n);
        if (idx_find(s, &s->dev_idx, dev_eq, kb, n, h, &idx) == 0) {
                d = &s->devs[idx];
                goto found;
        }
        if (s->dev_idx.count >= s->o.max_devices)
                return -E2BIG;
        if (s->ndev_free) {
                idx = s->dev_free[--s->ndev_free];
        } else {
                if (s->ndevs == s->cdevs) {
                        size_t c = s->cdevs ? s->cdevs * 2 : 64;
                        gc__dev *nd = realloc(s->devs, c * sizeof(*nd));
                        uint32_t *nf = realloc(s->dev_free, c * sizeof(*nf));

                        if (nd)
                                s->devs = nd;
                        if (nf)
                                s->dev_free = nf;
                        if (!nd || !nf)
                                return -ENOMEM;
                        s->cdevs = c;
                }
                idx = (uint32_t)s->ndevs++;
        }
        d = &s->devs[idx];
        memset(d, 0, sizeof(*d));
        key = pair_key(l->uuid, l->uuid_len, l->gi, l->gi_len, &kl);
        if (!key || gc_index_insert(&s->dev_idx, h, idx) < 0) {
                free(key);
                s->dev_free[s->ndev_free++] = idx;
                return -ENOMEM;
        }
        d->key = key;
        d->keylen = kl;
        d->hash = h;
        d->live = 1;
        d->has_gi = l->gi_len > 0;
        d->serial = ++s->dev_serial;
        d->pod = -1;
        d->share_at = INT64_MIN;
        d->created_at = now;
        d->last_at = INT64_MIN;
        s->str_bytes += 2 * (kl + 1);
found:
        fill(&d->mig, l->profile, l->profile_len, &s->str_bytes);
        fill(&d->model, l->model, l->model_len, &s->str_bytes);
        fill(&d->host, l->host, l->host_len, &s->str_bytes);
        fill(&d->gpu, l->gpu, l->gpu_len, &s->str_bytes);
        *ret = idx;
        return 0;
}

static void pod_remove(gc_gpuuse *s, uint32_t idx)
{
        gc__pod *p = &s->pods[idx];

        gc_index_del_row(&s->pod_idx, p->hash, idx);
        s->str_bytes -= 2 * (p->keylen + 1);
        if (p->container)
                s->str_bytes -= strlen(p->container) + 1;
        if (p->model)
                s->str_bytes -= strlen(p->model) + 1;
        if (p->mig)
                s->str_bytes -= strlen(p->mig) + 1;
        if (p->host)
                s->str_bytes -= strlen(p->host) + 1;
        s->podev_bytes -= p->cdevs * sizeof(*p->devs);
        pod_clear(p);
        s->pod_free[s->npod_free++] = idx;
}

static void dev_remove(gc_gpuuse *s, uint32_t idx)
{
        gc__dev *d = &s->devs[idx];

        gc_index_del_row(&s->dev_idx, d->hash, idx);
        s->str_bytes -= 2 * (d->keylen + 1);
        if (d->mig)
                s->str_bytes -= strlen(d->mig) + 1;
        if (d->model)
                s->str_bytes -= strlen(d->model) + 1;
        if (d->host)
                s->str_bytes -= strlen(d->host) + 1;
        if (d->gpu)
                s->str_bytes -= strlen(d->gpu) + 1;
        dev_clear(d);
        s->dev_free[s->ndev_free++] = idx;
}

size_t gc_gpuuse_expire(gc_gpuuse *s, int64_t now)
{
        size_t n = 0;
        int64_t cut;

        if (!s)
                return 0;
        cut = now - s->o.retention_s;
        for (size_t i = 0; i < s->npods; i++) {
                gc__pod *p = &s->pods[i];
                int64_t seen;

                if (!p->live)
                        continue;
                seen = p->samples ? p->last_at : p->created_at;
                if (seen < cut) {
                        pod_remove(s, (uint32_t)i);
                        n++;
                }
        }
        for (size_t i = 0; i < s->ndevs; i++) {
                gc__dev *d = &s->devs[i];
                int64_t seen;

                if (!d->live)
                        continue;
                if (d->pod >= 0 && !s->pods[d->pod].live)
                        d->pod = -1;
                seen = d->samples ? d->last_at : d->created_at;
                if (seen < cut) {
                        dev_remove(s, (uint32_t)i);
                        n++;
                }
        }
        return n;
}

/* ---- applying readings ------------------------------------------------------------------------
 */

static int cmp_reading(const void *a, const void *b)
{
        const gc__reading *x = a, *y = b;

        if (x->t != y->t)
                return x->t < y->t ? -1 : 1;
        if (x->pod != y->pod)
                return x->pod < y->pod ? -1 : 1;
        if (x->dev != y->dev)
                return x->dev < y->dev ? -1 : 1;
        return 0;
}

static int64_t min64(int64_t a, int64_t b)
{
        return a < b ? a : b;
}

/* A pod's row at one time: all its devices' readings joined. Stretches and coverage move on. */
static void pod_row(const gc_gpuuse *s, gc__pod *p, const gc__row *r, int64_t interval)
{
        int idle = r->has_act && r->act_max < s->o.idle_activity && r->has_mem && r->total > 0 &&
                   r->used > s->o.idle_mem_frac * r->total;

        if (p->samples) {
                int64_t gap = r->t - p->last_at;
                int64_t cover = min64(p->last_interval, gap);

                p->sampled_closed_s += (double)cover;
                if (p->idle_now) {
                        p->idle_cur_s += cover;
                        p->idle_total_s += cover;
                }
                /* A gap longer than the interval is unmeasured time: a stretch does not span it. */
                if (!idle || gap > p->last_interval) {
                        if (p->idle_cur_s > p->idle_longest_s)
                                p->idle_longest_s = p->idle_cur_s;
                        p->idle_cur_s = 0;
                }
        } else {
                p->first_at = r->t;
        }
        p->idle_now = idle;
        p->last_at = r->t;
        p->last_interval = interval;
        p->samples++;
}

static void hist_add(uint16_t *hist, double a)
{
        int bin;

        if (a < 0)
                a = 0;
        if (a > 1)
                a = 1;
        /* floor(a * 100), with a guard for readings kept as float: 0.29f * 100 = 28.9999992 */
        bin = (int)floor(a * 100.0 + 1e-5);
        if (bin > 100)
                bin = 100;
        if (hist[bin] == UINT16_MAX)
                for (int i = 0; i <= 100; i++)
                        hist[i] = (uint16_t)((hist[i] + 1) / 2);
        hist[bin]++;
}

static void pod_dev_add(gc_gpuuse *s, gc__pod *p, uint32_t serial, double act)
{
        uint32_t i;

        for (i = 0; i < p->ndevs; i++)
                if (p->devs[i].serial == serial)
                        break;
        if (i == p->ndevs) {
                if (p->ndevs >= s->o.max_devices_per_pod)
                        return;
                if (p->ndevs == p->cdevs) {
                        uint32_t c = p->cdevs ? p->cdevs * 2 : 1;
                        gc__podev *nd;

                        if (c > s->o.max_devices_per_pod)
                                c = (uint32_t)s->o.max_devices_per_pod;
                        nd = realloc(p->devs, c * sizeof(*nd));
                        if (!nd)
                                return;
                        s->podev_bytes += (c - p->cdevs) * sizeof(*nd);
                        p->devs = nd;
                        p->cdevs = c;
                }
                memset(&p->devs[i], 0, sizeof(p->devs[i]));
                p->devs[i].serial = serial;
                p->ndevs++;
        }
        if (!isnan(act)) {
                p->devs[i].act_sum += act;
                p->devs[i].act_n++;
        }
}

/* One reading into its device's running figures. */
static void dev_take(gc__dev *d, const gc__reading *r, int src, double act, double used,
                     double total)
{
        if (!d->samples)
                d->first_at = r->t;
        d->last_at = r->t;
        d->samples++;
        d->pod = r->pod;
        if (src == GC_GPUUSE_SRC_GR_ENGINE)
                d->n_gr++;
        else if (src == GC_GPUUSE_SRC_GPU_UTIL)
                d->n_util++;
        if (!isnan(act)) {
                d->act_sum += act;
                d->act_n++;
        }
        if (!isnan(used)) {
                d->mem_sum += used;
                d->mem_n++;
        }
        if (!isnan(total) && total > d->mem_total)
                d->mem_total = total;
        if (r->pod < 0) {
                d->unheld_n++;
                if (!isnan(act)) {
                        d->unheld_act_sum += act;
                        d->unheld_act_n++;
                }
        }
}

/* One reading of a device the pod holds into the pod's running figures, reading by reading. */
static void pod_take(gc_gpuuse *s, gc__pod *p, const gc__dev *d, const gc__reading *r, int src,
                     double act, double used, double total)
{
        p->dev_samples++;
        if (src == GC_GPUUSE_SRC_GR_ENGINE)
                p->n_gr++;
        else if (src == GC_GPUUSE_SRC_GPU_UTIL)
                p->n_util++;
        if (!isnan(act)) {
                p->act_sum += act;
                p->act_n++;
                hist_add(p->hist, act);
        }
        if (!isnan(r->tensor)) {
                p->tensor_sum += r->tensor;
                p->tensor_n++;
        }
        if (!isnan(r->power)) {
                p->power_sum += r->power;
                p->power_n++;
        }
        if (!isnan(used)) {
                p->mem_sum += used;
                p->mem_n++;
                if (used > p->mem_peak)
                        p->mem_peak = used;
        }
        if (!isnan(total) && total > p->mem_total)
                p->mem_total = total;
        pod_dev_add(s, p, d->serial, act);
}

/* Per-pod readings of one device at one time, applied: what the share sink is handed. */
typedef struct gc__applied {
        int64_t t;
        uint32_t dev;
        int32_t pod;
        double use, mem;
} gc__applied;

static int cmp_applied(const void *a, const void *b)
{
        const gc__applied *x = a, *y = b;

        if (x->t != y->t)
                return x->t < y->t ? -1 : 1;
        if (x->dev != y->dev)
                return x->dev < y->dev ? -1 : 1;
        return x->pod < y->pod ? -1 : x->pod > y->pod;
}

static const char *pair_second_or_null(const char *k, size_t kl)
{
        const char *v = pair_second(k, kl);

        return v && *v ? v : NULL;
}

/*
 * The share sink, per (device, time) in time order: the holders with a per-pod use, the span
 * the reading covers (docs/usage.md, "Shares").
 */
static void emit_shares(gc_gpuuse *s, gc__applied *ap, size_t n, int64_t interval,
                        gc_gpuuse_stats *st)
{
        gc_gpuuse_holder h[256];

        if (n > 1)
                qsort(ap, n, sizeof(*ap), cmp_applied);
        for (size_t i = 0; i < n;) {
                gc__dev *d = &s->devs[ap[i].dev];
                gc_gpuuse_share sh;
                size_t j = i, k = 0;

                while (j < n && ap[j].t == ap[i].t && ap[j].dev == ap[i].dev) {
                        const gc__pod *p = &s->pods[ap[j].pod];

                        if (k < sizeof(h) / sizeof(h[0])) {
                                h[k].ns = pair_first(p->key, p->keylen);
                                h[k].pod = pair_second(p->key, p->keylen);
                                h[k].pod_uid = p->uid;
                                h[k].use = ap[j].use;
                                h[k].mem_mib = ap[j].mem;
                                k++;
                        }
                        j++;
                }
                /* A reading at or before the device's last share (a sample's own timestamp going
                 * back, a replayed range) covers time already handed: it hands nothing. */
                if (d->share_at != INT64_MIN && ap[i].t <= d->share_at) {
                        st->out_of_order++;
                        i = j;
                        continue;
                }
                memset(&sh, 0, sizeof(sh));
                sh.uuid = pair_first(d->key, d->keylen);
                sh.gpu_i_id = pair_second_or_null(d->key, d->keylen);
                sh.hostname = d->host;
                sh.to = ap[i].t;
                sh.from = d->share_at != INT64_MIN && sh.to - d->share_at <= interval
                              ? d->share_at
                              : sh.to - interval;
                sh.h = h;
                sh.n = k;
                d->share_at = sh.to;
                st->shares++;
                if (s->share_fn(s->share_ud, &sh) != 0)
                        st->share_errors++;
                i = j;
        }
}

/*
 * Whether rd[i]'s (device, time) has per-pod readings: rd is sorted by (time, pod, device), so
 * they may lie on either side; a small scan of the same time. The device's own reading then
 * belongs to no pod (its pod label is one sharer's, its figures the device's).
 */
static int shared_at(const gc__reading *rd, size_t n, size_t i)
{
        for (size_t j = i; j > 0 && rd[j - 1].t == rd[i].t; j--)
                if (rd[j - 1].dev == rd[i].dev && rd[j - 1].per_pod)
                        return 1;
        for (size_t j = i + 1; j < n && rd[j].t == rd[i].t; j++)
                if (rd[j].dev == rd[i].dev && rd[j].per_pod)
                        return 1;
        return 0;
}

void gc__apply(gc_gpuuse *s, gc__reading *rd, size_t n, int64_t interval, gc_gpuuse_stats *st)
{
        gc__row row;
        gc__pod *rowpod = NULL;
        gc__applied *ap = NULL;
        size_t n_ap = 0;

        if (n > 1)
                qsort(rd, n, sizeof(*rd), cmp_reading);
        if (s->share_fn && n)
                ap = malloc(n * sizeof(*ap)); /* none: no shares this batch, the rest applies */
        memset(&row, 0, sizeof(row));
        for (size_t i = 0; i < n; i++) {
                gc__reading *r = &rd[i];
                gc__dev *d = &s->devs[r->dev];
                gc__pod *p = r->pod >= 0 ? &s->pods[r->pod] : NULL;
                double act = NAN, used = r->used, total = NAN;
                int src = 0;

                /* The device's own series on a shared device: a sharer's label, the device's
                 * figures. */
                if (p && !r->per_pod && shared_at(rd, n, i))
                        p = NULL;
                if (rowpod && (rowpod != p || row.t != r->t)) {
                        pod_row(s, rowpod, &row, interval);
                        rowpod = NULL;
                }
                if (!d->live || (p && !p->live))
                        continue;
                if ((!r->per_pod && d->samples && r->t <= d->last_at) ||
                    (p && p->samples && r->t <= p->last_at)) {
                        st->out_of_order++;
                        continue;
                }
                if (r->per_pod) {
                        /* A pod's own figures: its SM use (never the device-wide engine figure
                         * dcgm-exporter copies to every sharer) and its memory. */
                        if (!isnan(r->util)) {
                                act = r->util / 100.0;
                                act = act < 0 ? 0 : act > 1 ? 1 : act;
                                src = GC_GPUUSE_SRC_GPU_UTIL;
                        }
                } else if (!isnan(r->gr)) {
                        act = r->gr;
                        src = GC_GPUUSE_SRC_GR_ENGINE;
                } else if (!isnan(r->util) && !d->has_gi && !d->mig) {
                        act = r->util / 100.0;
                        src = GC_GPUUSE_SRC_GPU_UTIL;
                }
                if (!isnan(r->used) && !isnan(r->free))
                        total = (double)r->used + (double)r->free;
                st->readings++;

                if (!r->per_pod)
                        dev_take(d, r, src, act, used, total);
                if (!p)
                        continue;
                if (r->per_pod) {
                        gc__reading pr = *r;

                        pr.tensor = pr.power = NAN; /* copies of the device's */
                        total = NAN;                /* FB_FREE is the device's, not the pod's */
                        pod_take(s, p, d, &pr, src, act, used, total);
                        if (ap && !isnan(act)) {
                                ap[n_ap].t = r->t;
                                ap[n_ap].dev = r->dev;
                                ap[n_ap].pod = r->pod;
                                ap[n_ap].use = act;
                                ap[n_ap].mem = used;
                                n_ap++;
                        }
                } else {
                        pod_take(s, p, d, r, src, act, used, total);
                }

                /* ... and joined per time into its row. */
                if (!rowpod) {
                        memset(&row, 0, sizeof(row));
                        row.t = r->t;
                        row.has_mem = 1;
                        rowpod = p;
                }
                if (!isnan(act)) {
                        if (!row.has_act || act > row.act_max)
                                row.act_max = act;
                        row.has_act = 1;
                }
                if (!isnan(used) && !isnan(total)) {
                        row.used += used;
                        row.total += total;
                } else {
                        row.has_mem = 0;
                }
        }
        if (rowpod)
                pod_row(s, rowpod, &row, interval);
        if (ap)
                emit_shares(s, ap, n_ap, interval, st);
        free(ap);
}

/* ---- summaries --------------------------------------------------------------------------------
 */

static gc_gpuuse_source source_of(uint64_t n_gr, uint64_t n_util)
{
        if (n_gr && n_util)
                return GC_GPUUSE_SRC_MIXED;
        if (n_gr)
                return GC_GPUUSE_SRC_GR_ENGINE;
        if (n_util)
                return GC_GPUUSE_SRC_GPU_UTIL;
        return GC_GPUUSE_SRC_NONE;
}

static double mean(double sum, uint64_t n)
{
        return n ? sum / (double)n : NAN;
}

static void pod_summary(const gc_gpuuse *s, const gc__pod *p, int64_t ws, int64_t we,
                        gc_gpuuse_pod *ret)
{
        gc_gpuuse_pod o;
        uint64_t acc = 0, want;
        int64_t last_cover, cur;

        memset(&o, 0, sizeof(o));
        o.ns = pair_first(p->key, p->keylen);
        o.pod = pair_second(p->key, p->keylen);
        o.container = p->container;
        o.model = p->model;
        o.mig_profile = p->mig;
        o.hostname = p->host;
        o.devices = p->ndevs;
        for (uint32_t i = 0; i < p->ndevs; i++)
                if (p->devs[i].act_n &&
                    p->devs[i].act_sum / (double)p->devs[i].act_n >= s->o.active_activity)
                        o.devices_active++;
        o.activity_src = source_of(p->n_gr, p->n_util);
        o.activity_mean = mean(p->act_sum, p->act_n);
        o.activity_p95 = NAN;
        if (p->act_n) {
                uint64_t total = 0;

                for (int b = 0; b <= 100; b++)
                        total += p->hist[b];
                /* The smallest bin holding the ceil(0.95 n)-th reading; its lower edge. */
                want = (total * 95 + 99) / 100;
                for (int b = 0; b <= 100; b++) {
                        acc += p->hist[b];
                        if (acc >= want) {
                                o.activity_p95 = b / 100.0;
                                break;
                        }
                }
        }
        o.tensor_mean = mean(p->tensor_sum, p->tensor_n);
        o.power_mean_w = mean(p->power_sum, p->power_n);
        o.mem_used_peak_mib = p->mem_n ? p->mem_peak : NAN;
        o.mem_used_mean_mib = mean(p->mem_sum, p->mem_n);
        o.mem_total_mib = p->mem_total > 0 ? p->mem_total : NAN;
        o.samples = p->samples;
        o.device_samples = p->dev_samples;
        o.first_at = p->first_at;
        o.last_at = p->last_at;
        /* The last reading covers up to an interval, but not past the window's end. */
        last_cover = we > p->last_at ? min64(p->last_interval, we - p->last_at) : 0;
        o.sampled_s = p->sampled_closed_s + (double)last_cover;
        o.coverage = we > ws ? o.sampled_s / (double)(we - ws) : 0;
        if (o.coverage > 1)
                o.coverage = 1;
        cur = p->idle_cur_s + (p->idle_now ? last_cover : 0);
        o.idle_longest_s = cur > p->idle_longest_s ? cur : p->idle_longest_s;
        o.idle_total_s = p->idle_total_s + (p->idle_now ? last_cover : 0);
        *ret = o;
}

int gc_gpuuse_pod_get(const gc_gpuuse *s, const char *ns, const char *pod, int64_t window_start,
                      int64_t window_end, gc_gpuuse_pod *ret)
{
        char kb[600];
        size_t an, bn;
        uint32_t idx;

        if (!s || !ns || !pod || !ret)
                return -EINVAL;
        an = strlen(ns);
        bn = strlen(pod);
        if (an + bn + 1 >= sizeof(kb))
                return -ENOENT;
        memcpy(kb, ns, an);
        kb[an] = '/';
        memcpy(kb + an + 1, pod, bn);
        if (idx_find(s, &s->pod_idx, pod_eq, kb, an + 1 + bn, hash_str(kb, an + 1 + bn), &idx) <
                0 ||
            !s->pods[idx].samples)
                return -ENOENT;
        pod_summary(s, &s->pods[idx], window_start, window_end, ret);
        return 0;
}

int gc_gpuuse_pod_next(const gc_gpuuse *s, size_t *cursor, int64_t window_start, int64_t window_end,
                       gc_gpuuse_pod *ret)
{
        if (!s || !cursor || !ret)
                return -EINVAL;
        for (size_t i = *cursor; i < s->npods; i++) {
                if (s->pods[i].live && s->pods[i].samples) {
                        pod_summary(s, &s->pods[i], window_start, window_end, ret);
                        *cursor = i + 1;
                        return 0;
                }
        }
        *cursor = s->npods;
        return -ENOENT;
}

static void dev_summary(const gc_gpuuse *s, const gc__dev *d, gc_gpuuse_device *ret)
{
        gc_gpuuse_device o;

        memset(&o, 0, sizeof(o));
        o.uuid = pair_first(d->key, d->keylen);
        o.gpu_i_id = d->has_gi ? pair_second(d->key, d->keylen) : NULL;
        o.mig_profile = d->mig;
        o.model = d->model;
        o.hostname = d->host;
        o.gpu = d->gpu;
        if (d->pod >= 0 && s->pods[d->pod].live) {
                const gc__pod *p = &s->pods[d->pod];

                o.ns = pair_first(p->key, p->keylen);
                o.pod = pair_second(p->key, p->keylen);
        }
        o.activity_src = source_of(d->n_gr, d->n_util);
        o.activity_mean = mean(d->act_sum, d->act_n);
        o.mem_used_mean_mib = mean(d->mem_sum, d->mem_n);
        o.mem_total_mib = d->mem_total > 0 ? d->mem_total : NAN;
        o.samples = d->samples;
        o.unheld_samples = d->unheld_n;
        o.unheld_activity_mean = mean(d->unheld_act_sum, d->unheld_act_n);
        o.first_at = d->first_at;
        o.last_at = d->last_at;
        *ret = o;
}

int gc_gpuuse_device_get(const gc_gpuuse *s, const char *uuid, const char *gpu_i_id,
                         gc_gpuuse_device *ret)
{
        char kb[600];
        size_t an, bn, n;
        uint32_t idx;

        if (!s || !uuid || !ret)
                return -EINVAL;
        an = strlen(uuid);
        bn = gpu_i_id ? strlen(gpu_i_id) : 0;
        if (an + bn + 1 >= sizeof(kb))
                return -ENOENT;
        memcpy(kb, uuid, an);
        n = an;
        if (bn) {
                kb[n++] = '/';
                memcpy(kb + n, gpu_i_id, bn);
                n += bn;
        }
        if (idx_find(s, &s->dev_idx, dev_eq, kb, n, hash_str(kb, n), &idx) < 0 ||
            !s->devs[idx].samples)
                return -ENOENT;
        dev_summary(s, &s->devs[idx], ret);
        return 0;
}

int gc_gpuuse_device_next(const gc_gpuuse *s, size_t *cursor, gc_gpuuse_device *ret)
{
        if (!s || !cursor || !ret)
                return -EINVAL;
        for (size_t i = *cursor; i < s->ndevs; i++) {
                if (s->devs[i].live && s->devs[i].samples) {
                        dev_summary(s, &s->devs[i], ret);
                        *cursor = i + 1;
                        return 0;
                }
        }
        *cursor = s->ndevs;
        return -ENOENT;
}

size_t gc_gpuuse_pod_count(const gc_gpuuse *s)
{
        return s ? s->pod_idx.count : 0;
}

size_t gc_gpuuse_device_count(const gc_gpuuse *s)
{
        return s ? s->dev_idx.count : 0;
}

size_t gc_gpuuse_bytes(const gc_gpuuse *s)
{
        if (!s)
                return 0;
        return sizeof(*s) + s->cpods * (sizeof(gc__pod) + sizeof(uint32_t)) +
               s->cdevs * (sizeof(gc__dev) + sizeof(uint32_t)) + gc_index_bytes(&s->pod_idx) +
               gc_index_bytes(&s->dev_idx) + s->str_bytes + s->podev_bytes;
}

/* Case-insensitive label names: dcgm-exporter wrote some in lower case in old versions. */
int gc__label_is(const char *name, const char *want)
{
        return strcasecmp(name, want) == 0;
}
