/* gpuuse: dcgm-exporter samples (scraped, or from Prometheus' API) as bounded per-pod summaries. */
#ifndef GC_GPUUSE_H
#define GC_GPUUSE_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/*
 * A store keeps, per pod (namespace/pod) and per device (UUID, plus GPU_I_ID for a MIG
 * instance), running figures only: sums, maxima, a 1%-bin activity histogram and the idle
 * stretch in progress. Its memory is bounded by max_pods and max_devices, never by the number
 * of samples. Definitions and precision: docs/usage.md.
 *
 * Samples arrive in batches: one text body (a scrape at `now`, or a file whose samples carry
 * their own timestamps) or one Prometheus API answer. Within a batch, a device's series at one
 * timestamp are joined into one reading (activity, memory used/free, tensor, power), and the
 * batch is applied in time order when it ends. Readings older than what a pod or device has
 * already applied are dropped and counted (out_of_order).
 */

/* Which measure an activity figure stands on. */
typedef enum gc_gpuuse_source {
        GC_GPUUSE_SRC_NONE = 0,  /* no activity sample */
        GC_GPUUSE_SRC_GR_ENGINE, /* DCGM_FI_PROF_GR_ENGINE_ACTIVE (ratio) */
        GC_GPUUSE_SRC_GPU_UTIL,  /* DCGM_FI_DEV_GPU_UTIL / 100 (never on MIG) */
        GC_GPUUSE_SRC_MIXED,     /* some devices or times had one, some the other */
} gc_gpuuse_source;

/* "gr_engine_active", "gpu_util", "mixed", "none". */
const char *gc_gpuuse_source_name(gc_gpuuse_source s);

typedef struct gc_gpuuse_opts {
        size_t max_pods;            /* default 100000; further pods are counted, not kept */
        size_t max_devices;         /* default 100000 */
        size_t max_devices_per_pod; /* default 16: per-device figures kept for each pod */
        size_t max_batch_readings;  /* default 1 << 20: (device, time) readings in one batch */
        size_t max_line_bytes;      /* default 64 KiB (text parser) */
        double idle_activity;       /* default 0.05: idle when activity is below this ... */
        double idle_mem_frac;       /* default 0.10: ... and more than this of memory is used */
        double active_activity;     /* default 0.10: a device is active if its mean is >= this */
        int64_t interval_s;         /* default 30: a reading covers min(interval, gap to next) */
        int64_t retention_s;        /* default 7 days: pods/devices unseen this long are dropped */
} gc_gpuuse_opts;

void gc_gpuuse_opts_default(gc_gpuuse_opts *ret);

/*
 * Summary of one pod (strings point into the store: valid until the next ingest, expire or
 * free). Ratios are 0..1; NaN where nothing was measured.
 */
typedef struct gc_gpuuse_pod {
        const char *ns, *pod;
        const char *container;   /* of the first series seen; NULL when unlabelled */
        const char *model;       /* modelName; NULL when unlabelled */
        const char *mig_profile; /* GPU_I_PROFILE, e.g. "1g.10gb"; NULL on whole GPUs */
        const char *hostname;    /* Hostname / hostname label; NULL when unlabelled */
        uint32_t devices;        /* distinct devices seen (capped at max_devices_per_pod) */
        uint32_t devices_active; /* devices whose mean activity >= active_activity */
        gc_gpuuse_source activity_src;
        double activity_mean; /* mean over device readings */
        double activity_p95;  /* 95th percentile over device readings, floor to 0.01 */
        double tensor_mean;   /* DCGM_FI_PROF_PIPE_TENSOR_ACTIVE mean */
        double power_mean_w;  /* DCGM_FI_DEV_POWER_USAGE mean per device */
        double mem_used_peak_mib, mem_used_mean_mib;
        double mem_total_mib;      /* largest FB_USED + FB_FREE of its devices */
        uint64_t samples;          /* distinct reading times of the pod */
        uint64_t device_samples;   /* device readings (samples x devices) */
        int64_t first_at, last_at; /* first and last reading time (UTC seconds) */
        double sampled_s;          /* seconds covered by readings */
        double coverage;           /* sampled_s / (window_end - window_start), at most 1 */
        int64_t idle_longest_s;    /* longest stretch with every device idle */
        int64_t idle_total_s;      /* all such stretches */
} gc_gpuuse_pod;

/* Summary of one device (a whole GPU, or one MIG instance). */
typedef struct gc_gpuuse_device {
        const char *uuid;        /* parent GPU's UUID */
        const char *gpu_i_id;    /* MIG instance id, NULL on whole GPUs */
        const char *mig_profile; /* NULL on whole GPUs */
        const char *model, *hostname;
        const char *gpu;      /* "gpu" label (index on the node), may be NULL */
        const char *ns, *pod; /* holder in the latest reading; NULL when pod="" */
        gc_gpuuse_source activity_src;
        double activity_mean;
        double mem_used_mean_mib, mem_total_mib;
        uint64_t samples;
        uint64_t unheld_samples;     /* readings with no pod on the device */
        double unheld_activity_mean; /* mean activity while no pod held it */
        int64_t first_at, last_at;
} gc_gpuuse_device;

typedef struct gc_gpuuse_stats {
        uint64_t samples;  /* dcgm samples read (any metric) */
        uint64_t used;     /* of them, applied to a reading */
        uint64_t missing;  /* NaN or blank sentinel */
        uint64_t ignored;  /* other metrics, or a series without UUID */
        uint64_t readings; /* (device, time) readings applied */
        uint64_t out_of_order;
        uint64_t pods_over_limit, devices_over_limit, readings_over_limit;
        uint64_t parse_errors; /* malformed lines (text) or series (JSON) */
        uint64_t shares;       /* (device, time) per-pod readings handed to the share sink */
        uint64_t share_errors; /* of them, refused by the sink */
        uint64_t first_error_line;
        char first_error[96];
        uint64_t bytes;
} gc_gpuuse_stats;

typedef struct gc_gpuuse gc_gpuuse;

/* opts NULL: defaults. NULL on ENOMEM or bad opts. */
gc_gpuuse *gc_gpuuse_new(const gc_gpuuse_opts *opts);
gc_gpuuse *gc_gpuuse_free(gc_gpuuse *s); /* accepts NULL, returns NULL */

/*
 * One text body. A body whose last line is "# EOF" is OpenMetrics (timestamps in seconds, as
 * promtool's backfill reads them); otherwise timestamps are milliseconds (text format 0.0.4).
 * Samples without a timestamp are taken at `now`; interval_s 0 means the
 * store's interval. st may be NULL; it is filled even on error. Results: 0; -ENOSPC when the
 * batch exceeded max_batch_readings (what fit, a prefix of the body, is applied); -ENOMEM.
 * The store does not expire on its own (an old file must not expire itself): call
 * gc_gpuuse_expire() with the wall clock after each round of scrapes.
 */
int gc_gpuuse_ingest_text(gc_gpuuse *s, const char *body, size_t n, int64_t now, int64_t interval_s,
                          gc_gpuuse_stats *st);

/* The same, streamed: begin, any number of feeds, then end (applies) or abort (discards). */
typedef struct gc_gpuuse_batch gc_gpuuse_batch;
gc_gpuuse_batch *gc_gpuuse_batch_begin(gc_gpuuse *s, int64_t now, int64_t interval_s,
                                       unsigned prom_flags);
int gc_gpuuse_batch_feed(gc_gpuuse_batch *b, const void *data, size_t n);
int gc_gpuuse_batch_end(gc_gpuuse_batch *b, gc_gpuuse_stats *st); /* frees b */
void gc_gpuuse_batch_abort(gc_gpuuse_batch *b);                   /* frees b; accepts NULL */

/*
 * A Prometheus HTTP API answer (/api/v1/query_range "matrix" or /api/v1/query "vector") for the
 * dcgm metrics. Refused with -EINVAL and a message in err when it is not JSON, "status" is
 * "error" (the server's errorType/error is quoted), or the result type is neither; -E2BIG
 * when n > max_body_bytes; -ENOSPC as for text. interval_s: the query's step (0 = the store's
 * interval). Series must keep their __name__ (raw series, not an aggregation); others are
 * counted as ignored. Values "NaN", "+Inf", "-Inf" count as missing.
 */
int gc_gpuuse_ingest_prom_json(gc_gpuuse *s, const char *body, size_t n, size_t max_body_bytes,
                               int64_t interval_s, gc_gpuuse_stats *st, char *err, size_t errlen);

/* The default PromQL: every dcgm metric the store uses, any case (a regex on __name__). */
extern const char gc_gpuuse_default_promql[];

/*
 * HTTP (libcurl). bearer_token may be NULL. The body streams into the parser; a body over
 * max_body_bytes aborts the transfer and discards the whole batch (a cut body is a partial
 * scrape): -E2BIG. Transport errors and non-2xx answers: -EIO (-ETIMEDOUT on timeout) with a
 * message in err; nothing is applied after any of them. -ENOSPC: as for text (what fit is
 * applied). The scrape asks for text format 0.0.4 (timestamps in milliseconds); an answer whose
 * Content-Type is application/openmetrics-text is read as OpenMetrics (seconds). An OpenMetrics
 * body ("# EOF" last) served under another type with timestamps is -EPROTO, nothing applied.
 */
int gc_gpuuse_scrape(gc_gpuuse *s, const char *url, long timeout_s, size_t max_body_bytes,
                     const char *bearer_token, int64_t now, int64_t interval_s, gc_gpuuse_stats *st,
                     char *err, size_t errlen);
/* GET base_url/api/v1/query_range?query=..&start=..&end=..&step=..; promql NULL: default. */
int gc_gpuuse_prom_query_range(gc_gpuuse *s, const char *base_url, const char *promql,
                               int64_t start, int64_t end, int64_t step_s, long timeout_s,
                               size_t max_body_bytes, const char *bearer_token, gc_gpuuse_stats *st,
                               char *err, size_t errlen);
/* GET base_url/api/v1/query?query=..&time=at (an instant vector). */
int gc_gpuuse_prom_query(gc_gpuuse *s, const char *base_url, const char *promql, int64_t at,
                         long timeout_s, size_t max_body_bytes, const char *bearer_token,
                         gc_gpuuse_stats *st, char *err, size_t errlen);

/*
 * Where the dcgm-exporter pods are. The caller GETs gc_gpuuse_targets_path from the Kubernetes
 * API (its own client) and hands the body to gc_gpuuse_targets_parse: the scrape URLs
 * (scheme://ip:port/path, IPv6 in brackets) of the Running pods the label selector picks, or of
 * the ready addresses of the Service's Endpoints (notReadyAddresses are skipped). Addresses
 * that are not strings, empty or over 64 bytes are skipped; at most GC_GPUUSE_MAX_TARGETS.
 */
#define GC_GPUUSE_MAX_TARGETS 10000
typedef struct gc_gpuuse_targets_opts {
        const char *ns;             /* the namespace of the pods or the Service */
        const char *label_selector; /* the pods' selector, or */
        const char *service;        /* the Service (wins when both are set) */
        int port;
        const char *path;   /* "/metrics" */
        const char *scheme; /* "http" or "https" */
} gc_gpuuse_targets_opts;

/* Appends the API path to GET (the selector percent-encoded). -E2BIG past ret's limit. */
int gc_gpuuse_targets_path(const gc_gpuuse_targets_opts *o, gc_buf *ret);
/* *ret_urls: malloc'd strings, freed by gc_gpuuse_targets_free. -EINVAL (err says) on no JSON. */
int gc_gpuuse_targets_parse(const gc_gpuuse_targets_opts *o, const char *body, size_t len,
                            char ***ret_urls, size_t *ret_n, char *err, size_t errlen);
void gc_gpuuse_targets_free(char **urls, size_t n); /* accepts NULL */

/* A bearer token file (at most GC_GPUUSE_TOKEN_MAX bytes), trailing newlines and blanks cut.
 * Re-read before each request: a projected token rotates. */
#define GC_GPUUSE_TOKEN_MAX 65536
int gc_gpuuse_read_token(const char *path, gc_buf *ret, char *err, size_t errlen);

/*
 * Which Prometheus range to ask next. First the history: [now - lookback_s, now) of the round
 * that starts it, one day per query, oldest first (a store drops readings older than it has
 * taken in); a failed query starts the pass over at the next round. Then, each round, from the
 * last reading on: [until + step_s, now]. Zero the struct, set lookback_s and step_s; at each
 * round call next with the round's now until it returns other than DUE, querying each range
 * it gives and reporting it with done (stop at a failure).
 */
#define GC_GPUUSE_PROM_CHUNK_S 86400
enum {
        GC_GPUUSE_PROM_NONE = 0,         /* nothing due this round */
        GC_GPUUSE_PROM_DUE = 1,          /* query [*ret_start, *ret_end] */
        GC_GPUUSE_PROM_HISTORY_DONE = 2, /* the lookback is in: nothing more this round */
};
typedef struct gc_gpuuse_prom_plan {
        int64_t lookback_s, step_s; /* the caller's */
        int64_t until;              /* readings up to here are in */
        int history_done;
        int in_pass; /* a history pass runs; next is its next start */
        int64_t next;
} gc_gpuuse_prom_plan;
int gc_gpuuse_prom_plan_next(gc_gpuuse_prom_plan *p, int64_t now, int64_t *ret_start,
                             int64_t *ret_end);
void gc_gpuuse_prom_plan_done(gc_gpuuse_prom_plan *p, int64_t end, int ok);

/*
 * Measured use of shared GPUs, per pod (docs/usage.md, "Shares"). dcgm-exporter with
 * KUBERNETES_VIRTUAL_GPUS=true writes, beside the device's own series, one DCGM_FI_DEV_GPU_UTIL
 * and DCGM_FI_DEV_FB_USED series per pod sharing the device, with that pod's own figures; HAMi's
 * vGPU monitor writes one per container. Each (device, time) with such per-pod readings is handed
 * to the sink as the batch is applied, in time order.
 */
typedef struct gc_gpuuse_holder {
        const char *ns, *pod; /* never NULL */
        const char *pod_uid;  /* the pod_uid label, NULL when absent */
        double use;           /* 0..1: this pod's SM use of the device (GPU_UTIL / 100) */
        double mem_mib;       /* this pod's framebuffer in MiB; NaN when not measured */
} gc_gpuuse_holder;
typedef struct gc_gpuuse_share {
        const char *uuid;     /* the physical GPU */
        const char *gpu_i_id; /* MIG instance, NULL on a whole GPU */
        const char *hostname; /* NULL when unlabelled */
        /* The reading covers (from, to]: to is its time, from the device's previous reading
         * with per-pod figures, or to - interval when that is longer ago (a gap). */
        int64_t from, to;
        const gc_gpuuse_holder *h;
        size_t n; /* holders with a per-pod use at `to`, n >= 1 */
} gc_gpuuse_share;
/* A non-zero return is counted (gc_gpuuse_stats.share_errors); the batch still applies. */
typedef int (*gc_gpuuse_share_fn)(void *ud, const gc_gpuuse_share *s);
void gc_gpuuse_set_share_sink(gc_gpuuse *s, gc_gpuuse_share_fn fn, void *ud);

/* Drops pods and devices whose last reading is before now - retention_s. Returns how many. */
size_t gc_gpuuse_expire(gc_gpuuse *s, int64_t now);

/*
 * Summaries. The window [window_start, window_end) is the denominator of coverage (pass the
 * pod's lifetime within the report window); figures cover every reading the store holds.
 */
int gc_gpuuse_pod_get(const gc_gpuuse *s, const char *ns, const char *pod, int64_t window_start,
                      int64_t window_end, gc_gpuuse_pod *ret); /* -ENOENT when unknown */
/* Iteration: start with *cursor = 0; -ENOENT at the end. No ingest in between. */
int gc_gpuuse_pod_next(const gc_gpuuse *s, size_t *cursor, int64_t window_start, int64_t window_end,
                       gc_gpuuse_pod *ret);
/* By UUID, and GPU_I_ID for a MIG instance (NULL for the whole GPU). -ENOENT when unknown. */
int gc_gpuuse_device_get(const gc_gpuuse *s, const char *uuid, const char *gpu_i_id,
                         gc_gpuuse_device *ret);
int gc_gpuuse_device_next(const gc_gpuuse *s, size_t *cursor, gc_gpuuse_device *ret);

size_t gc_gpuuse_pod_count(const gc_gpuuse *s);
size_t gc_gpuuse_device_count(const gc_gpuuse *s);
/* Bytes the store holds (tables and strings), for tests of its bound and for /metrics. */
size_t gc_gpuuse_bytes(const gc_gpuuse *s);

#endif
