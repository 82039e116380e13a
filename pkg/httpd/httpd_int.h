/* httpd internals shared by the server and the request helpers; not part of the public API. */
#ifndef GC_HTTPD_INT_H
#define GC_HTTPD_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "httpd.h"

#define GC_HTTPD__MAX_EXTRA_HEADERS 4096 /* bytes of handler-added response headers */
#define GC_HTTPD__MAX_HDR_LOOKUPS   32   /* gc_httpd_header() calls per request */
#define GC_HTTPD__MAX_HDR_NAME      64

struct lws;

/* What req->internal_ points to. */
struct gc_httpd__req {
        struct lws *wsi; /* NULL on a worker: headers come from what was looked up before */
        char *hdr_names[GC_HTTPD__MAX_HDR_LOOKUPS]; /* lower-case, with lws' colon */
        char *hdr_vals[GC_HTTPD__MAX_HDR_LOOKUPS];  /* wiped and freed with the request */
        size_t n_hdr;
};

/*
 * One deferred answer (gc_httpd_defer): fn(ud, &req, &res) on a worker. The server embeds it in
 * its own record of the connection and request.
 */
struct gc_httpd__job {
        gc_httpd_handler fn;
        void *ud;
        gc_httpd_request req;
        struct gc_httpd__req priv;
        gc_httpd_response res;
        int r;       /* fn's result */
        bool orphan; /* the connection went away: not run, only handed back to be freed */
        struct gc_httpd__job *next;
};

/*
 * A fixed set of worker threads and a bounded queue. Jobs go in on the server's thread and come
 * back, run or orphaned, through take_done on the same thread; done(done_ud) is called on the
 * worker after each job (the server's lws_cancel_service()).
 */
struct gc_httpd__pool {
        pthread_mutex_t mu;
        pthread_cond_t cv;
        pthread_t *threads;
        int n_threads, max_queued, n_queued;
        bool stop;
        struct gc_httpd__job *queue, *queue_tail, *done;
        void (*done_fn)(void *ud);
        void *done_ud;
};

/* 0, or a negative errno (no thread is left running then). */
int gc_httpd__pool_start(struct gc_httpd__pool *p, int n_threads, int max_queued,
                         void (*done_fn)(void *ud), void *done_ud);
/* -EBUSY when max_queued jobs wait already; otherwise the pool holds j until take_done. */
int gc_httpd__pool_submit(struct gc_httpd__pool *p, struct gc_httpd__job *j);
/* The connection went away: j is not run if it has not started, and comes back as done. */
void gc_httpd__pool_orphan(struct gc_httpd__pool *p, struct gc_httpd__job *j);
/* Every job finished (or orphaned) since the last call, as a list through next. */
struct gc_httpd__job *gc_httpd__pool_take_done(struct gc_httpd__pool *p);
/* Joins the workers; returns every job not handed back yet (queued or done), as a list. */
struct gc_httpd__job *gc_httpd__pool_stop(struct gc_httpd__pool *p);

/*
 * "1.2.3.4:80" or "[::1]:80". ret_host gets the literal address without brackets ("" for the
 * wildcards 0.0.0.0 and ::), ret_family AF_INET or AF_INET6.
 */
int gc_httpd__parse_listen(const char *s, char *ret_host, size_t hostlen, int *ret_port,
                           int *ret_family);
/* Appends the parameters percent-encoded (RFC 3986 unreserved characters kept). */
int gc_httpd__query_encode(gc_buf *b, const gc_httpd_param *params, size_t n);
/* A header name: an RFC 9110 token of at most GC_HTTPD__MAX_HDR_NAME bytes. */
bool gc_httpd__header_name_ok(const char *name);

/*
 * Query parameters and header lines of one head together, at most: libwebsockets 4.1 keeps one
 * piece per parameter and per header it knows (WSI_TOKEN_COUNT, 95, in all) and fails its parse
 * past them.
 */
#define GC_HTTPD__MAX_HEAD_PIECES 88

enum { GC_HTTPD__HEAD_MORE = 0, GC_HTTPD__HEAD_PASS = 1 };

/*
 * The first n bytes of a request head as sent, checked before libwebsockets parses it (it fails
 * some heads without an answer). GC_HTTPD__HEAD_MORE: not whole yet, nothing wrong so far (a
 * head of `limit` bytes or more is wrong); GC_HTTPD__HEAD_PASS: whole and acceptable, *ret_len its
 * length, or not an HTTP request line at all (*ret_len 0: libwebsockets' fallback answers it);
 * otherwise an HTTP status (400, 414, 431) with *ret_msg.
 */
int gc_httpd__head_check(const char *p, size_t n, size_t limit, size_t *ret_len,
                         const char **ret_msg);
/* 1 when libwebsockets would leave a request with this header name unanswered (a proper prefix
 * of a header name it knows): the head check refuses it with 400. */
bool gc_httpd__lws_stalls(const char *name, size_t n);

#endif
