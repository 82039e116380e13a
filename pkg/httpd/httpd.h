/* httpd: a small, bounded, read-only HTTP/1.1 server (libwebsockets) for health, API and metrics.
 */
#ifndef GC_HTTPD_H
#define GC_HTTPD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "../util/util.h"

/*
 * One gc_httpd serves one listening address from one thread: gc_httpd_run() runs the event loop
 * in the caller's thread and every handler is called there, one at a time. Handlers must not
 * block: they read data another thread has published (an immutable, reference-counted snapshot)
 * and answer at once, or hand a computation to the server's worker threads (gc_httpd_defer). Only
 * GET and HEAD are served; HEAD gets the headers GET would get. Nothing here prints: messages go to
 * the log hook. See docs/httpd.md.
 */

/* Defaults used when an option is left 0. */
#define GC_HTTPD_DEFAULT_MAX_CONNECTIONS    256
#define GC_HTTPD_DEFAULT_MAX_PER_ADDRESS    64
#define GC_HTTPD_DEFAULT_MAX_URL_BYTES      4096
#define GC_HTTPD_DEFAULT_MAX_HEADER_BYTES   8192
#define GC_HTTPD_DEFAULT_IDLE_TIMEOUT_SEC   10
#define GC_HTTPD_DEFAULT_MAX_RESPONSE_BYTES (16u << 20)
#define GC_HTTPD_DEFAULT_TLS_CHECK_SEC      10
#define GC_HTTPD_DEFAULT_MAX_PARKED         32
#define GC_HTTPD_DEFAULT_PARK_TIMEOUT_SEC   10
#define GC_HTTPD_DEFAULT_WORKERS            2
#define GC_HTTPD_DEFAULT_MAX_QUEUED         16

#define GC_HTTPD_MAX_ROUTES 64 /* routes per server */
#define GC_HTTPD_MAX_PARAMS 64 /* query parameters per request; more is a 400 */
/* Bytes of one request head libwebsockets can hold: a larger head is closed without an answer. */
#define GC_HTTPD_HEAD_TABLE_BYTES 65535

enum { GC_HTTPD_LOG_ERROR = 0, GC_HTTPD_LOG_WARN = 1, GC_HTTPD_LOG_INFO = 2 };

/*
 * msg is one line without a newline, never containing a request header. Called on the thread
 * that runs the server (or the one calling gc_httpd_new). libwebsockets' own messages (errors
 * and warnings) are process-wide: they go to the hook of the most recently created server that
 * has one, and are dropped when no server has one.
 */
typedef void (*gc_httpd_log_fn)(void *log_ud, int level, const char *msg);

typedef struct gc_httpd_opts {
        /* "127.0.0.1:8080", "0.0.0.0:8080" (all IPv4), "[::1]:8080", "[::]:8080" (all, dual
         * stack); literal addresses only. Port 0 picks a free port: see gc_httpd_port(). */
        const char *listen;
        /* TLS when both are set: PEM certificate chain and private key. The files are checked
         * every tls_check_sec seconds and a new, consistent pair is loaded without a restart. */
        const char *tls_cert_file;
        const char *tls_key_file;
        int tls_check_sec;
        /* Open connections in all, and from one client address. A new connection past either
         * cap sheds the connection (of that address, for the second) that has gone longest,
         * and at least 1 s, without an answer: the oldest idle or the slowest. When there is
         * none, one past max_per_address is closed at once and one past max_connections takes
         * one of max_connections / 4 + 8 spare places (then waits in the kernel's backlog). */
        int max_connections;
        int max_per_address;
        size_t max_url_bytes;      /* the path, or the query, after decoding; longer is 414 */
        size_t max_header_bytes;   /* the request head (line and headers); more is 431 */
        int header_timeout_sec;    /* to send a whole request head, then the connection closes;
                                    * 0: idle_timeout_sec */
        int idle_timeout_sec;      /* between keep-alive requests, before the first one, and
                                    * between pieces of a response the client is slow to read */
        size_t max_response_bytes; /* a body larger than this is a 500 */
        /* Requests the guard has parked (GC_HTTPD_PENDING): at most max_parked at once (one
         * more is a 503), each for at most park_timeout_sec (then a 504). See the guard below. */
        int max_parked;
        int park_timeout_sec;
        /* Threads that compute deferred answers (gc_httpd_defer), and deferred answers that may
         * wait for one of them (one more is a 503 with Retry-After). */
        int workers;
        int max_queued;
        gc_httpd_log_fn log; /* NULL: silent */
        void *log_ud;
} gc_httpd_opts;

typedef struct gc_httpd_param {
        const char *name; /* decoded; lws turns a %3D inside a name into '_' */
        const char *value;
} gc_httpd_param;

typedef struct gc_httpd_request {
        const char *method; /* "GET" or "HEAD" */
        bool head;          /* the body will not be sent (the handler may still fill it) */
        const char *path;   /* decoded and normalised ("/a/../b" is "/b"), starts with '/' */
        /* The parameters in order, decoded ('+' is a space). */
        const gc_httpd_param *params;
        size_t n_params;
        /* The parameters re-encoded canonically ("a=1&b=x%20y"), "" when none: libwebsockets
         * decodes the request line as it reads it, so the bytes as sent are not kept. */
        const char *query;
        void *internal_; /* private */
} gc_httpd_request;

/*
 * A body made while it is sent, for answers whose size should not bound memory (an export):
 * sent with Transfer-Encoding: chunked, so a client tells a complete body (the last, empty
 * chunk) from a cut one. `next` fills out (empty on entry) with the next bytes and returns 1
 * when more follow, 0 at the end (out may hold the last bytes), -EAGAIN when none are ready
 * yet (then gc_httpd_wake() from another thread asks again), or another negative errno to cut
 * the connection without the last chunk. It runs on the server's thread and must not block.
 * `release` is called once when the server is done with ud: at the end, when the connection
 * closes, for a HEAD request, or when the handler fails; it may run on the server's thread
 * only, so ud must stay valid for whoever else uses it (reference-count it).
 */
typedef struct gc_httpd_stream {
        int (*next)(void *ud, gc_buf *out);
        void (*release)(void *ud);
        void *ud;
} gc_httpd_stream;

typedef struct gc_httpd_response {
        int status;               /* 200 unless set; 200..599 */
        const char *content_type; /* "application/json" unless set; must outlive the call */
        gc_buf body;              /* limited to max_response_bytes */
        gc_buf headers_;          /* private: see gc_httpd_add_header() */
        gc_httpd_stream stream;   /* next set: the body is streamed (and `body` not sent) */
        struct {
                int (*fn)(void *ud, const struct gc_httpd_request *req,
                          struct gc_httpd_response *res);
                void *ud;
        } defer_; /* private: see gc_httpd_defer() */
} gc_httpd_response;

/*
 * A handler fills res. Returning a negative errno (e.g. from gc_buf_printf) discards the body
 * and answers 500 with a JSON error. All pointers in req are valid until it returns.
 */
typedef int (*gc_httpd_handler)(void *ud, const gc_httpd_request *req, gc_httpd_response *res);

typedef struct gc_httpd gc_httpd;

/* Validates o (err names the field) and binds the listening socket. */
gc_httpd *gc_httpd_new(const gc_httpd_opts *o, char *err, size_t errlen);
/* Call only when gc_httpd_run() is not running (join its thread first). Accepts NULL. */
gc_httpd *gc_httpd_free(gc_httpd *h);

/* The port actually bound (useful with port 0). */
int gc_httpd_port(const gc_httpd *h);

/* What admission did so far; read on the serving thread, or after gc_httpd_run() returned. */
typedef struct gc_httpd_stats {
        unsigned long long accepted; /* connections admitted */
        unsigned long long shed;     /* closed to make room for a newer one */
        unsigned long long refused;  /* closed at once: every connection was being answered */
        int open;                    /* open now */
} gc_httpd_stats;

int gc_httpd_get_stats(const gc_httpd *h, gc_httpd_stats *ret);

#define GC_HTTPD_PREFIX 1u /* path matches itself and everything below it */
#define GC_HTTPD_OPEN   2u /* the guard does not run for this route (health probes) */

/*
 * Before gc_httpd_run(). path starts with '/'. An exact route wins over prefixes, and the
 * longest prefix wins among them; a prefix "/a" or "/a/" matches "/a/..." but not "/ab".
 * -EEXIST for a duplicate, -E2BIG past GC_HTTPD_MAX_ROUTES.
 */
int gc_httpd_route(gc_httpd *h, const char *path, unsigned flags, gc_httpd_handler fn, void *ud);

/* ---- the guard: authentication and authorization before every handler -------------------- */

enum {
        GC_HTTPD_ALLOW = 0,   /* run the handler */
        GC_HTTPD_DENY = 1,    /* send what the guard put in res (e.g. gc_httpd_error 401/403) */
        GC_HTTPD_PENDING = 2, /* not known yet: park the request until gc_httpd_wake() */
};

/*
 * Called on the server's thread before the handler of every route not registered with
 * GC_HTTPD_OPEN (after the route and method are checked, so unknown paths are still 404). It
 * must not block. GC_HTTPD_PENDING parks the request without an answer and without holding
 * the thread; after another thread calls gc_httpd_wake() every parked request runs again,
 * guard first. A request parked for park_timeout_sec gets a 504, one past max_parked a 503;
 * a negative errno is a 500. req is the same request on every run.
 */
typedef int (*gc_httpd_guard)(void *ud, const gc_httpd_request *req, gc_httpd_response *res);

/* Before gc_httpd_run(). fn NULL removes the guard. */
int gc_httpd_set_guard(gc_httpd *h, gc_httpd_guard fn, void *ud);
/* From any thread (not a signal handler): re-runs the parked requests, and asks every stream
 * waiting for bytes (-EAGAIN) again, soon. */
void gc_httpd_wake(gc_httpd *h);

/*
 * Serves in the calling thread until *stop becomes nonzero (stop may be NULL; it is checked at
 * least every 200 ms, so a signal handler may set it) or gc_httpd_stop() is called. Returns 0,
 * or a negative errno if the event loop failed. Once stopped, the server does not run again.
 */
int gc_httpd_run(gc_httpd *h, const volatile sig_atomic_t *stop);
/* Asks gc_httpd_run() to return soon; from any thread, but not a signal handler (use *stop). */
void gc_httpd_stop(gc_httpd *h);

/* ---- for handlers -------------------------------------------------------------------------- */

/* The server answering req (to gc_httpd_wake() it from another thread), or NULL. */
gc_httpd *gc_httpd_server(const gc_httpd_request *req);

/* The first value of query parameter name (exact, case-sensitive), or NULL. */
const char *gc_httpd_query(const gc_httpd_request *req, const char *name);
/*
 * A request header's value (name case-insensitive, e.g. "Authorization"), or NULL if absent.
 * Repeated headers are joined with ','. Valid until the handler returns.
 */
const char *gc_httpd_header(const gc_httpd_request *req, const char *name);
/*
 * Adds a response header. -EINVAL for a name that is not a token or a value with control
 * characters, or for headers the server writes itself (Content-Length, Content-Type,
 * Connection, Transfer-Encoding); -E2BIG past 4 KiB of extra headers.
 */
int gc_httpd_add_header(gc_httpd_response *res, const char *name, const char *value);
/*
 * From a handler about to return 0: the answer is computed by fn(ud, req, res) on one of the
 * server's worker threads instead, so the serving thread goes on answering others meanwhile.
 * fn gets the same req (path and parameters; gc_httpd_header() there only returns headers the
 * handler looked up before deferring, others are NULL; gc_httpd_server() is NULL) and the same
 * res, and must not touch anything of the server's thread. The answer is sent when fn returns.
 * With max_queued deferred answers waiting the request is answered 503 with Retry-After: 1.
 */
int gc_httpd_defer(gc_httpd_response *res, gc_httpd_handler fn, void *ud);
/* Sets status and a JSON body {"error":msg,"status":N}; the body written so far is discarded. */
int gc_httpd_error(gc_httpd_response *res, int status, const char *msg);

#endif
