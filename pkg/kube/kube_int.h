/* kube internals shared by the module's files (and its unit tests); not a public face. */
#ifndef GC_KUBE_INT_H
#define GC_KUBE_INT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "kube.h"
#include "../util/jscan.h"

#define GC__KUBE_MAX_KUBECONFIG (1u << 20) /* bytes of a kubeconfig file */
#define GC__KUBE_MAX_TOKEN      (64u << 10)
#define GC__KUBE_MAX_PEM        (1u << 20)  /* a CA bundle, certificate or key */
#define GC__KUBE_MAX_ERRBODY    (1u << 20)  /* the body of a non-200 answer to a streamed request */
#define GC__KUBE_MAX_META       (64u << 10) /* a list's metadata (resourceVersion, continue) */
#define GC__KUBE_TOKEN_REREAD_S 60
#define GC__KUBE_REQUEST_S      60 /* whole-request limit for everything but streams */
#define GC__KUBE_CONNECT_S      10
#define GC__KUBE_CM_MAX_DATA    (1u << 20) /* the API's limit on a ConfigMap's data */
#define GC__KUBE_CM_RETRIES     8

struct gc_kube {
        CURL *curl;
        char *server; /* no trailing '/' */
        char *ca_file;
        char *ca_data;
        char *cert_file;
        char *key_file;
        char *cert_data;
        char *key_data;
        char *token;      /* the bearer token in use, or NULL */
        char *token_file; /* re-read into token */
        int64_t token_read_mono;
        uint64_t rng;
        int busy; /* a transfer is running: ops called from it must not start another */
        unsigned long n_conflicts; /* 409s that ConfigMap writes re-read and retried (tests) */
        gc_kube_fence_fn fence;    /* gc_kube_set_write_fence; NULL = none */
        void *fence_arg;
        char *writer; /* gc_kube_set_writer, or NULL */
        char errbuf[CURL_ERROR_SIZE];
};

/* How one transfer runs. A zeroed struct = a plain request with the default time limit. */
typedef struct gc__kube_io {
        const char *accept; /* Accept header; NULL = application/json */
        int timeout_s;      /* whole transfer; 0 = GC__KUBE_REQUEST_S, < 0 = none (streams) */
        long timeout_ms;    /* when > 0, the whole transfer's limit instead (the write fence) */
        int idle_s;         /* abort after this long without a byte; 0 = none */
        /* 1: no "Accept-Encoding: gzip". kube-apiserver (WatchListCompression) sends a streaming
         * list as gzip members one after another, and libcurl takes the bytes after the first
         * member for garbage ("Failed writing received data"). */
        int identity;
        /*
         * Streaming: the body of a 200 answer goes here slice by slice instead of into the body
         * buffer (any other status is buffered, so its Status can be read). A negative return
         * aborts the transfer, and gc__kube_do returns it.
         */
        int (*stream)(void *ud, const char *p, size_t n);
        void *stream_ud;
        const volatile sig_atomic_t *stop; /* looked at about every second; may be NULL */
} gc__kube_io;

/* What went wrong in a transfer that failed, beyond its return code. */
typedef struct gc__kube_fail {
        int idle;      /* nothing arrived for idle_s after the connection was up */
        int stopped;   /* *stop became non-zero */
        int toobig;    /* the body passed its cap */
        int connected; /* the server answered at all */
} gc__kube_fail;

/*
 * The request core: 0 with *ret_status for any HTTP answer, else a negative errno (-ECANCELED
 * when stopped, -ETIMEDOUT, -E2BIG over the cap, -ECONNREFUSED, -EIO, or the stream's own
 * code). ret_body (may be NULL) is initialised here with limit GC_KUBE_MAX_RESPONSE and holds the
 * body when not streamed. ret_fail (may be NULL) says more about a failure.
 */
int gc__kube_do(gc_kube *k, const char *method, const char *path, const char *content_type,
                const char *body, size_t body_len, const gc__kube_io *io, long *ret_status,
                gc_buf *ret_body, gc__kube_fail *ret_fail, char *err, size_t errlen);

/* The message of a Status body ("pods is forbidden: ..."), else "HTTP <status>". */
void gc__kube_status_msg(const gc_buf *body, long status, char *err, size_t errlen);
/* The errno a failed HTTP status stands for. */
int gc__kube_status_errno(long status);
/* A DNS-1123 name: [a-z0-9] at both ends, [-a-z0-9] (and '.' when dots) inside, 1..max bytes. */
int gc__kube_valid_name(const char *s, size_t max, int dots);
/* A random number in [0, 1) from the client's own generator. */
double gc__kube_rand(gc_kube *k);
/* CLOCK_MONOTONIC in seconds, and in milliseconds. */
int64_t gc__kube_mono_s(void);
int64_t gc__kube_mono_ms(void);
/* Sleeps up to `seconds`, returning early (non-zero) once *stop is set. */
int gc__kube_sleep(double seconds, const volatile sig_atomic_t *stop);

/* ---- the list scanner: items of a LIST body one by one, without a tree of the whole page -- */

/*
 * A LIST body through gc_jscan (util/jscan.h): each element of "items", which must be an object
 * (else -EINVAL), goes to item (json NULL, len its size, for one over max_item), and the list's
 * "metadata" is kept in meta (over GC__KUBE_MAX_META: -E2BIG).
 */
typedef struct gc__kube_scan {
        gc_jscan js;
        gc_buf meta; /* the list's metadata object, as text */
        size_t n_items;
        int (*item)(void *ud, const char *json, size_t len);
        void *ud;
} gc__kube_scan;

void gc__kube_scan_init(gc__kube_scan *s, size_t max_item,
                        int (*item)(void *ud, const char *json, size_t len), void *ud);
/* -EINVAL when the text cannot be a Kubernetes list; else the item callback's error, or 0. */
int gc__kube_scan_feed(gc__kube_scan *s, const char *p, size_t n);
/* 0 when the whole object has been seen. */
int gc__kube_scan_finish(gc__kube_scan *s);
void gc__kube_scan_release(gc__kube_scan *s);

/* ---- kubeconfig ------------------------------------------------------------------------------ */

/*
 * Parses kubeconfig text; relative file names are taken from base_dir (NULL = as given).
 * gc_kube_config_load reads the file and calls this.
 */
int gc__kube_config_parse(const char *text, size_t len, const char *base_dir, const char *context,
                          gc_kube_config *ret, char *err, size_t errlen);
/* Decodes standard base64 (white space ignored); -EINVAL when it is not base64. */
int gc__kube_base64_decode(const char *s, size_t n, gc_buf *out);

/* ---- leader election, the decision alone ---------------------------------------------------- */

typedef enum gc__lease_action {
        GC__LEASE_WAIT = 0, /* someone else holds a live lease: not leader */
        GC__LEASE_RENEW,    /* ours: renew it */
        GC__LEASE_ACQUIRE,  /* free, released or expired: take it (a transition) */
} gc__lease_action;

/*
 * Given the record read now (holder may be "", rv and renew as the API wrote them,
 * duration_s from the record), updates what l observed and decides. Expiry is measured from
 * when *we* saw the record change, by our monotonic clock.
 */
gc__lease_action gc__lease_decide(gc_kube_lease *l, const char *holder, const char *rv,
                                  const char *renew, int duration_s, int64_t now_mono);

#endif
