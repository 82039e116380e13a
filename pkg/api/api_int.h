/* api internals shared by the API's own files (snapshot, cache, handlers); not a public face. */
#ifndef GC_API_INT_H
#define GC_API_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "api.h"
#include "httpd/httpd.h"
#include "publish/publish.h"

#define GC__API_DEFAULT_ENTRIES 64
#define GC__API_DEFAULT_BYTES   ((size_t)8 << 20)
#define GC__API_ERR             640
#define GC__API_MAX_KEY         (16u << 10) /* path and query of a cached answer */

/* One cached answer: the body of a 200, keyed by path and canonical query. */
typedef struct gc__api_entry {
        char *key;
        size_t key_len;
        uint64_t key_hash;
        char *body;
        size_t len;
        const char *content_type; /* static */
        char etag[24];            /* "\"<16 hex>\"" */
        uint64_t used;            /* LRU clock */
} gc__api_entry;

typedef struct gc__api_cache {
        pthread_mutex_t mu; /* the API's server and the probe port's may both use it */
        gc__api_entry *e;
        size_t n, max_entries;
        size_t bytes, max_bytes;
        uint64_t clock;
        uint64_t hits, misses; /* for tests */
} gc__api_cache;

struct gc_snapshot {
        atomic_long refs;
        gc_snapshot_parts p;
        gc_ledger_stats lstats;
        const char *cluster;     /* cfg->cluster or "default" */
        const char *currency;    /* the catalog's, or "USD" */
        size_t *pods_by_name;    /* indexes into p.pods sorted by (namespace, name, start) */
        int recommendations_bad; /* the advisor's document was not JSON: dropped, and said */
        /* The report periods (gc_publish_plan_make: two queries per period), made on first use
         * and shared by every /api/v1/reports answer on this snapshot. */
        pthread_mutex_t plan_mu;
        int plan_state; /* 0 not yet, 1 made, or the negative errno making it failed with */
        gc_publish_plan plan;
        gc__api_cache cache;
};

#define GC__API_MAX_ROUTES 16

typedef struct gc__api_binding {
        struct gc_api *a;
        const void *route; /* the route table's entry (snapshot.c) */
} gc__api_binding;

/*
 * The /metrics counters' high-water marks, one per series, so a counter never goes down between
 * scrapes (a pod's end learned late lowers what the ledger says about the recent past).
 */
typedef struct gc__api_mark {
        char *key; /* "name\x1flabel values joined by \x1f" */
        double v;
} gc__api_mark;

#define GC__API_MAX_MARKS    100000                /* series tracked; more are served as computed */
#define GC__API_COUNTER_SPAN ((int64_t)28 * 86400) /* counters restart after this long */

typedef struct gc__api_marks {
        pthread_mutex_t mu;
        int64_t anchor; /* the counters count from here; 0 = not yet */
        gc__api_mark *rows;
        size_t n, cap;
        gc_index ix; /* rows by key */
} gc__api_marks;

struct gc_api {
        gc__api_binding bind[GC__API_MAX_ROUTES]; /* handler contexts, one per route */
        gc__api_marks marks;
        pthread_mutex_t mu; /* held only to swap or reference the current snapshot */
        gc_snapshot *cur;
        size_t cache_entries, cache_bytes;
        char currency[16];
};

/* The snapshot's report periods (made once), or NULL with *ret_err. */
const gc_publish_plan *gc__api_plan(gc_snapshot *s, int *ret_err);

/* The pod record for a namespace and name (the one that started last), or NULL. */
const gc_api_pod *gc__api_pod_find(const gc_snapshot *s, const char *ns, const char *name);

/* The cache: a lookup copies the body into out; a store keeps a copy of body (if it fits and
 * the key is not cached already). */
const gc__api_entry *gc__api_cache_get(gc__api_cache *c, const char *key, uint64_t h);
void gc__api_cache_put(gc__api_cache *c, const char *key, uint64_t h, const char *body, size_t len,
                       const char *content_type);
void gc__api_etag(const char *body, size_t len, char out[24]);
/* 1 when an If-None-Match header value names etag (or is "*"). */
int gc__api_etag_match(const char *inm, const char *etag);

/* A request's context: the snapshot and where to put an error. */
typedef struct gc__api_ctx {
        gc_api *a; /* NULL outside a server (the fuzz target) */
        gc_snapshot *s;
        const gc_httpd_request *req;
        gc_httpd_response *res;
        int opencost; /* errors in OpenCost's envelope */
} gc__api_ctx;

/* A 400 (or other status) naming the parameter: {"error":"<param>: <msg>","parameter":...}. */
int gc__api_bad(gc__api_ctx *x, int status, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * 1 with a 400 written when the window, or a step of it (step_s > 0, named step_param in the
 * error), reaches folded history
 * kept only by whole day, week and month (gc_ledger_coarsen) and is not one of those: its
 * figures would miss those hours. 0 when every step is whole.
 */
int gc__api_coarse(gc__api_ctx *x, int64_t start, int64_t end, int64_t step_s,
                   const char *step_param);

/* JSON numbers: rounded to 5 decimals (OpenCost) or full precision; NaN/Inf are null. */
int gc__api_num5(gc_buf *b, double v);
int gc__api_num(gc_buf *b, double v);
int gc__api_time(gc_buf *b, int64_t t); /* "\"2026-11-21T00:00:00Z\"" */

/* The handlers, each given a snapshot. */
int gc__api_costs(gc__api_ctx *x);
int gc__api_pods(gc__api_ctx *x);
int gc__api_reports(gc__api_ctx *x);
int gc__api_recommendations(gc__api_ctx *x);
int gc__api_prices(gc__api_ctx *x);
int gc__api_dimensions(gc__api_ctx *x);
int gc__api_tco(gc__api_ctx *x);
int gc__api_allocation(gc__api_ctx *x);
int gc__api_metrics(gc__api_ctx *x);
int gc__api_export(gc__api_ctx *x); /* /api/v1/export/{focus,csv} (export.c) */

/*
 * Where the counters start for this snapshot (re-anchored, and the marks cleared, when the span
 * passed), and a counter's value: max(the last value served for the series, v), for v counted
 * from anchor. Two servers scrape at once (the API and the probe port): when the counters were
 * re-anchored since this scrape took its anchor, v is served as computed and not remembered, so
 * no mark of the old span outlives the reset.
 */
int64_t gc__api_counter_anchor(gc_api *a, const gc_snapshot *s);
double gc__api_counter(gc_api *a, int64_t anchor, const char *key, double v);

/*
 * Checks that every parameter is one of names (NULL-terminated; a name ending in '*' stands for
 * every name it starts); a 400 naming it if not.
 */
int gc__api_known_params(gc__api_ctx *x, const char *const *names);

#endif
