/* gpuuse internals shared by the store, the ingest paths and the HTTP fetchers. */
#ifndef GC_GPUUSE_INT_H
#define GC_GPUUSE_INT_H

#include "gpuuse.h"

#include "../promtext/promtext.h"
#include "../util/util.h"

/* Per pod, per device: enough to say whether that device was active. */
typedef struct gc__podev {
        uint32_t serial; /* the device's serial (slots are reused, serials are not) */
        uint32_t act_n;
        double act_sum;
} gc__podev;

typedef struct gc__pod {
        char *key; /* "ns/pod\0ns\0pod\0" */
        char *uid; /* the pod_uid label last seen, or NULL */
        size_t keylen;
        uint32_t hash;
        int live;
        char *container, *model, *mig, *host;
        int64_t created_at;
        uint64_t samples, dev_samples;
        int64_t first_at, last_at, last_interval;
        double sampled_closed_s;
        uint64_t n_gr, n_util;
        double act_sum;
        uint64_t act_n;
        double tensor_sum, power_sum, mem_sum;
        uint64_t tensor_n, power_n, mem_n;
        double mem_peak, mem_total;
        int idle_now;
        int64_t idle_cur_s, idle_longest_s, idle_total_s;
        uint32_t ndevs, cdevs;
        gc__podev *devs;
        /* Activity in 1% bins (bin 100 holds exactly 1.0). 16-bit counts: when one would pass
         * 65535, every bin is halved (rounding up), which keeps their proportions. */
        uint16_t hist[101];
} gc__pod;

typedef struct gc__dev {
        char *key; /* "uuid[/gpu_i_id]\0uuid\0gpu_i_id\0" */
        size_t keylen;
        uint32_t hash;
        int live, has_gi;
        uint32_t serial;
        int32_t pod;      /* holder in the latest reading, -1 = none */
        int64_t share_at; /* time of its last reading with per-pod figures (INT64_MIN: none) */
        char *mig, *model, *host, *gpu;
        int64_t created_at, first_at, last_at;
        uint64_t samples, n_gr, n_util, act_n, mem_n, unheld_n, unheld_act_n;
        double act_sum, mem_sum, mem_total, unheld_act_sum;
} gc__dev;

struct gc_gpuuse {
        gc_gpuuse_opts o;
        gc__pod *pods;
        size_t npods, cpods;
        uint32_t *pod_free;
        size_t npod_free;
        gc__dev *devs;
        size_t ndevs, cdevs;
        uint32_t *dev_free;
        size_t ndev_free;
        uint32_t dev_serial;
        gc_index pod_idx, dev_idx; /* rows of pods and devs by key: slots in use only */
        size_t str_bytes, podev_bytes;
        gc_gpuuse_share_fn share_fn; /* gc_gpuuse_set_share_sink */
        void *share_ud;
};

/* One device at one time: its series joined. NaN = that metric was absent. */
/* One device at one time, for one pod (per-pod series of a shared device, HAMi's containers)
 * or the device itself (pod -1, or the single holder its series name). */
typedef struct gc__reading {
        int64_t t;
        uint32_t dev;
        int32_t pod;
        float gr, util, used, free, tensor, power;
        uint8_t per_pod; /* from a per-pod source: HAMi, or dcgm-exporter's pod_uid series */
} gc__reading;

typedef struct gc__row {
        int64_t t;
        int has_act, has_mem;
        double act_max, used, total;
} gc__row;

/* The labels a sample is filed by (pointers into the parser's line; not NUL-terminated). */
typedef struct gc__labels {
        const char *uuid, *gi, *profile, *model, *host, *gpu, *pod, *ns, *container, *uid;
        size_t uuid_len, gi_len, profile_len, model_len, host_len, gpu_len, pod_len, ns_len,
            container_len, uid_len;
} gc__labels;

int gc__pod_get(gc_gpuuse *s, const gc__labels *l, int64_t now, uint32_t *ret);
int gc__dev_get(gc_gpuuse *s, const gc__labels *l, int64_t now, uint32_t *ret);
/* Sorts the readings and applies them in time order. */
void gc__apply(gc_gpuuse *s, gc__reading *rd, size_t n, int64_t interval, gc_gpuuse_stats *st);
int gc__label_is(const char *name, const char *want);
/*
 * A scrape's Content-Type (NULL: none) sets the batch's format before its first byte: OpenMetrics
 * stamps in seconds, text 0.0.4 in milliseconds. It also marks the batch as read off the wire, so
 * an OpenMetrics body served under another type is refused at the end (-EPROTO), not misread.
 * -EBUSY once bytes were fed; -ENOMEM.
 */
int gc__batch_wire_format(gc_gpuuse_batch *b, const char *content_type);

#endif
