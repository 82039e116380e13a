/* authz: delegated authentication and authorization of HTTP callers by the Kubernetes API.
 */
#ifndef GC_AUTHZ_H
#define GC_AUTHZ_H

#include <stddef.h>
#include <stdint.h>

#include "../httpd/httpd.h"
#include "../kube/kube.h"

/*
 * As kube-rbac-proxy and metrics-server do it: a caller's bearer token goes to the API server in
 * a TokenReview (who is this?), and the user it names in a SubjectAccessReview (may they `get`
 * this path?). Verdicts are cached briefly under a SHA-256 of the token and the attributes; the
 * token itself lives only as long as its review and is wiped after it. One worker thread with
 * its own gc_kube makes the API calls from a bounded queue, so the HTTP server's thread never
 * waits on the network: gc_authz_guard() answers from the cache or parks the request, and the
 * worker wakes the server when a verdict is in. Nothing here logs except through the hook, and
 * no message holds a token. See docs/auth.md.
 */

#define GC_AUTHZ_DEFAULT_ALLOW_TTL_SEC 60
#define GC_AUTHZ_DEFAULT_DENY_TTL_SEC  10
#define GC_AUTHZ_DEFAULT_MAX_ENTRIES   4096
#define GC_AUTHZ_DEFAULT_MAX_QUEUE     64
#define GC_AUTHZ_UNAVAILABLE_TTL_MS    1000 /* an API failure is remembered this long */
#define GC_AUTHZ_MAX_TOKEN_BYTES       8192

typedef enum gc_authz_verdict {
        GC_AUTHZ_ALLOWED = 0,
        GC_AUTHZ_UNAUTHENTICATED, /* 401: the token is not valid (TokenReview) */
        GC_AUTHZ_FORBIDDEN,       /* 403: the user may not (SubjectAccessReview) */
        GC_AUTHZ_UNAVAILABLE,     /* 503: the API server did not answer */
} gc_authz_verdict;

/* resourceAttributes of the SubjectAccessReview, in place of the request's path. */
typedef struct gc_authz_resource {
        char ns[64];
        char group[254];
        char resource[64];
        char subresource[64];
        char name[254];
} gc_authz_resource;

/*
 * "namespace=gpu-cost,resource=services,subresource=proxy,name=gpu-cost" (keys namespace,
 * group, resource, subresource, name; resource required; values are DNS-style names). err
 * names the key at fault.
 */
int gc_authz_resource_parse(const char *s, gc_authz_resource *ret, char *err, size_t errlen);

/* What is asked of the SubjectAccessReview. */
typedef struct gc_authz_attrs {
        const char *verb;                  /* "get" */
        const char *path;                  /* nonResourceAttributes.path (resource NULL) */
        const gc_authz_resource *resource; /* else resourceAttributes */
} gc_authz_attrs;

/*
 * Decides one token and attributes, blocking; runs on the worker thread. reason (for the log)
 * must not hold the token. The default makes a TokenReview and a SubjectAccessReview through
 * the gc_kube built from opts.kube; tests pass a fake.
 */
typedef int (*gc_authz_review_fn)(void *ud, const char *token, const gc_authz_attrs *a,
                                  gc_authz_verdict *ret, char *reason, size_t reasonlen);

enum { GC_AUTHZ_LOG_ERROR = 0, GC_AUTHZ_LOG_WARN = 1, GC_AUTHZ_LOG_INFO = 2 };
/* Called on the worker thread; msg never holds a token. */
typedef void (*gc_authz_log_fn)(void *ud, int level, const char *msg);

typedef struct gc_authz_opts {
        const gc_kube_config *kube; /* the API server and this program's own credentials */
        gc_authz_review_fn review;  /* NULL: TokenReview + SubjectAccessReview through kube */
        void *review_ud;
        const gc_authz_resource *resource; /* NULL: nonResourceAttributes {path, verb "get"} */
        int allow_ttl_sec;                 /* 0: 60 */
        int deny_ttl_sec;                  /* 401 and 403; 0: 10 */
        size_t max_entries;                /* cached verdicts; 0: 4096 */
        size_t max_queue;                  /* reviews waiting for the worker; 0: 64 */
        void (*wake)(void *ud);            /* after each verdict (gc_httpd_wake) */
        void *wake_ud;
        gc_authz_log_fn log; /* NULL: silent */
        void *log_ud;
        int64_t (*now_ms)(void *ud); /* NULL: CLOCK_MONOTONIC (tests pass their own) */
        void *now_ud;
} gc_authz_opts;

typedef struct gc_authz gc_authz;

/* Validates o (err names the field) and starts the worker. */
gc_authz *gc_authz_new(const gc_authz_opts *o, char *err, size_t errlen);
/* Stops the worker (after the review in progress, if any), wipes what is queued. */
gc_authz *gc_authz_free(gc_authz *a);

/*
 * Never blocks. 0 with *ret the cached verdict; -EINPROGRESS when the review is queued or
 * under way (ask again after the wake); -EAGAIN when the queue is full; -EINVAL for a token
 * that is empty, too long or not printable ASCII. path: the request's path (ignored with
 * resource attributes).
 */
int gc_authz_check(gc_authz *a, const char *token, size_t token_len, const char *path,
                   gc_authz_verdict *ret);

/*
 * The "Bearer <token>" of an Authorization header value: 0 with the token's start and length
 * (inside header), -ENOENT for another scheme or no token.
 */
int gc_authz_bearer(const char *header, const char **ret_token, size_t *ret_len);

/*
 * A gc_httpd_guard (ud: the gc_authz): no or malformed token 401 with `WWW-Authenticate:
 * Bearer`, a token the API server rejects 401, a user without the grant 403, the API server
 * unreachable or the queue full 503 (with Retry-After), a verdict not yet known: parked.
 */
int gc_authz_guard(void *ud, const gc_httpd_request *req, gc_httpd_response *res);

typedef struct gc_authz_stats {
        uint64_t hits;    /* checks answered from the cache */
        uint64_t misses;  /* checks that queued a review */
        uint64_t reviews; /* reviews the worker made */
        uint64_t verdicts[4];
        uint64_t queue_full;
        size_t entries; /* cached now, pending ones included */
        size_t queued;
} gc_authz_stats;

void gc_authz_stats_get(gc_authz *a, gc_authz_stats *ret);

#endif
