/* kube: a small Kubernetes API client: auth, requests, paged list + watch, ConfigMaps, Leases. */
#ifndef GC_KUBE_H
#define GC_KUBE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "../util/util.h"

/*
 * One gc_kube per thread (it owns a libcurl easy handle). curl_global_init() is the program's
 * job, once, before any thread. Nothing here logs: what happened is reported through return
 * codes, err buffers and the watch's note callback. A token or Authorization header never
 * appears in any message. See docs/kube.md for the watch state machine.
 */

#define GC_KUBE_MAX_RESPONSE (16u << 20) /* one non-watch response body */
#define GC_KUBE_MAX_LINE     (8u << 20)  /* one watch event line */

/* ---- where the API server is and how to trust it ------------------------------------------- */

typedef struct gc_kube_config {
        char *server;     /* "https://10.0.0.1:443" (IPv6 hosts in brackets) */
        char *ca_file;    /* PEM bundle file, or NULL */
        char *ca_data;    /* PEM bundle text (kubeconfig certificate-authority-data), or NULL */
        char *token;      /* a fixed bearer token, or NULL */
        char *token_file; /* re-read every 60 s and after a 401 (bound SA tokens rotate) */
        char *client_cert_file; /* client certificate auth: files ... */
        char *client_key_file;
        char *client_cert_data; /* ... or PEM text from a kubeconfig (given to libcurl in memory) */
        char *client_key_data;
        char *namespace; /* the controller's own namespace, when known */
} gc_kube_config;

/* In a pod: KUBERNETES_SERVICE_HOST/PORT and /var/run/secrets/kubernetes.io/serviceaccount/. */
int gc_kube_config_incluster(gc_kube_config *ret, char *err, size_t errlen);
/* The same with the service-account files in sa_dir (tests, unusual mounts). */
int gc_kube_config_incluster_dir(const char *sa_dir, gc_kube_config *ret, char *err, size_t errlen);
/* A kubeconfig file (YAML): the current context, or `context` when not NULL. */
int gc_kube_config_load(const char *path, const char *context, gc_kube_config *ret, char *err,
                        size_t errlen);
void gc_kube_config_release(gc_kube_config *c); /* accepts a zeroed struct */

/* ---- requests -------------------------------------------------------------------------------- */

/*
 * The functions below that read an HTTP status map it to an errno: 401 to -EKEYREJECTED (the API
 * server did not accept the credentials: a token it does not know, a client certificate from a
 * CA it does not trust), 403 to -EACCES (it knows who asks; RBAC does not grant it), 404
 * -ENOENT, 409 -EBUSY, 410 -ESTALE, 413 -E2BIG, 400/422 -EINVAL, 429/5xx -EAGAIN.
 */

typedef struct gc_kube gc_kube;

/* Copies what it needs of cfg. */
gc_kube *gc_kube_new(const gc_kube_config *cfg, char *err, size_t errlen);
gc_kube *gc_kube_free(gc_kube *k); /* accepts NULL, returns NULL */

/*
 * Fencing (docs/kube.md, "Leader election"): with a fence set, every request but GET first asks
 * fn(arg) for the CLOCK_MONOTONIC millisecond until which a write may still land (the lease's
 * gc_kube_lease_fence_ms). At or past it the request is never sent: -ESTALE, "not written: ...".
 * Before it, the request's time limit is cut to end there, so a write held up in the network is
 * abandoned before another replica may take the lease. NULL fn: no fence.
 */
typedef int64_t (*gc_kube_fence_fn)(void *arg);
/* Names the writer: gc_kube_configmap_put sets annotation gpu-cost.io/written-by to it on every
 * ConfigMap it writes (which replica wrote a report). Copied; NULL clears. -ENOMEM. */
#define GC_KUBE_WRITER_ANNOTATION "gpu-cost.io/written-by"
int gc_kube_set_writer(gc_kube *k, const char *identity);
void gc_kube_set_write_fence(gc_kube *k, gc_kube_fence_fn fn, void *arg);

/*
 * One request; path starts with '/' and is already escaped. body may be NULL. The response
 * body goes into *ret_body (initialised here with limit GC_KUBE_MAX_RESPONSE; the caller frees
 * it). Returns 0 with the HTTP status in *ret_status (any status, 4xx and 5xx included), or a
 * negative errno for a transport failure (err says what). A 401 re-reads the token file once and
 * retries.
 */
int gc_kube_request(gc_kube *k, const char *method, const char *path, const char *content_type,
                    const char *body, size_t body_len, long *ret_status, gc_buf *ret_body,
                    char *err, size_t errlen);

/* ---- list, then watch ---------------------------------------------------------------------- */

typedef enum gc_kube_event {
        GC_KUBE_ADDED = 0, /* also every object of a LIST */
        GC_KUBE_MODIFIED,
        GC_KUBE_DELETED,
} gc_kube_event;

typedef enum gc_kube_note {
        GC_KUBE_NOTE_LISTED = 0,   /* a full LIST completed (msg: object count, resourceVersion) */
        GC_KUBE_NOTE_WATCH_START,  /* a watch began from a resourceVersion */
        GC_KUBE_NOTE_WATCH_END,    /* the server ended a watch normally; it resumes */
        GC_KUBE_NOTE_EXPIRED,      /* 410 Gone (status or in-stream ERROR): LIST again */
        GC_KUBE_NOTE_IDLE_TIMEOUT, /* nothing arrived for idle_seconds: reconnecting */
        GC_KUBE_NOTE_RETRY,        /* a transport error or 5xx/429: backing off (http_status 0
                                      for transport errors) */
        GC_KUBE_NOTE_FORBIDDEN,    /* 401 or 403: the watch stops, gc_kube_watch_run fails */
        GC_KUBE_NOTE_BAD_EVENT,    /* an event line that is not JSON, too long, or malformed:
                                      skipped, then LIST again so nothing is lost */
} gc_kube_note;

typedef struct gc_kube_watch_ops {
        /* A fresh LIST starts: the objects that follow replace all this resource's objects. A LIST
         * that fails part-way is followed by another list_begin, never by list_end. Optional. */
        int (*list_begin)(void *ud);
        /* One object (valid only during the call). Return < 0 to stop the watch with that error. */
        int (*object)(void *ud, gc_kube_event ev, const cJSON *obj);
        /* The LIST is complete: any object not delivered since list_begin is gone. Optional. */
        int (*list_end)(void *ud);
        /* Optional: what happened, for logs and metrics. */
        void (*note)(void *ud, gc_kube_note note, long http_status, const char *msg);
        /* Optional: every change up to resourceVersion rv has been delivered, so a later process
         * may resume a watch from rv and miss nothing: called after a LIST completes (with the
         * LIST's resourceVersion) and after a BOOKMARK. After an object callback the object's own
         * metadata.resourceVersion is such a point too (outside a LIST: between list_begin and
         * list_end objects come in no order of resourceVersion). */
        void (*progress)(void *ud, const char *rv);
} gc_kube_watch_ops;

typedef struct gc_kube_watch_opts {
        const char *path;           /* collection path: "/api/v1/pods", "/api/v1/nodes", ... */
        const char *label_selector; /* optional, unescaped */
        const char *field_selector; /* optional, unescaped */
        int page_limit;             /* LIST page size; 0 = 500 */
        int timeout_seconds;        /* server-side watch timeout; 0 = a random 300..600 */
        int idle_seconds;      /* client-side: nothing for this long = half-open; 0 = timeout+30 */
        double backoff_min_s;  /* 0 = 0.5 */
        double backoff_max_s;  /* 0 = 30 */
        int forbidden_grace_s; /* 401/403 fail the watch only once they persist this long: a
                                  restarting API server answers 403 until its authorizer has
                                  synced. 0 = 20; < 0 = at the first refusal */
        size_t max_line;       /* 0 = GC_KUBE_MAX_LINE */
        /* Optional: a resourceVersion an earlier process reached (a restart's checkpoint). The
         * first LIST still runs (it delivers the objects as they are now), but the first watch
         * then starts from resume_rv instead of the LIST's resourceVersion, so every event since
         * resume_rv is delivered again, deletions included, in order; progress is not called for
         * that LIST. A 410 (resume_rv older than the server's event window) notes
         * GC_KUBE_NOTE_EXPIRED and LISTs again as usual. */
        const char *resume_rv;
        /* With resume_rv: the first LIST is the state at resume_rv itself (resourceVersion=
         * resume_rv&resourceVersionMatch=Exact), then the watch goes on from there, so objects
         * whose last state before a deletion the server would no longer show (a claim
         * deallocated and deleted in one breath) are delivered as they were at resume_rv. A
         * 410 (compacted past it) notes GC_KUBE_NOTE_EXPIRED and LISTs the state now. */
        int resume_exact;
        /* 1: ask for metadata only (PartialObjectMetadata[List], meta.k8s.io/v1): objects come
         * with kind "PartialObjectMetadata" and no spec or status; a server that cannot answer
         * so sends the full objects. */
        int metadata_only;
} gc_kube_watch_opts;

/*
 * LIST (paged, following metadata.continue) then WATCH (allowWatchBookmarks, resuming from the
 * last resourceVersion seen, bookmarks included), forever, calling ops from this thread, until
 * *stop becomes non-zero (looked at least every second, also mid-transfer). resourceVersions are
 * opaque strings. 410 (status, or in-stream ERROR with code 410) and a stale continue token lead
 * to a new LIST; errors back off with jitter. ops run inside the transfer: they must not use k
 * (that fails with -EBUSY), another gc_kube is fine. Returns 0 when stopped, -EACCES after a 403
 * (RBAC must fail loudly, never look like an empty cluster), -EKEYREJECTED after a 401 (the
 * credentials themselves were refused), or the negative code an ops callback returned.
 */
int gc_kube_watch_run(gc_kube *k, const gc_kube_watch_opts *o, const gc_kube_watch_ops *ops,
                      void *ud, const volatile sig_atomic_t *stop);

/*
 * The streaming line splitter the watch uses, public for tests and fuzzing: feed arbitrary
 * slices; each complete '\n'-terminated line (without the '\n', not NUL-terminated) is passed
 * to `line`. A line longer than max is dropped whole and reported once by a call with
 * line == NULL and len = the bytes dropped so far. Memory stays at most max + one slice.
 */
typedef struct gc_kube_lines {
        gc_buf pending;
        size_t max;
        size_t scanned; /* bytes of pending already searched for '\n' */
        int dropping;   /* inside a line that is too long */
} gc_kube_lines;

void gc_kube_lines_init(gc_kube_lines *s, size_t max);
int gc_kube_lines_feed(gc_kube_lines *s, const char *p, size_t n,
                       int (*line)(void *ud, const char *line, size_t len), void *ud);
void gc_kube_lines_release(gc_kube_lines *s);

/* ---- ConfigMaps ------------------------------------------------------------------------------ */

typedef struct gc_kube_kv {
        const char *key;
        const char *value;
} gc_kube_kv;

/*
 * Creates the ConfigMap, or replaces its labels and data (optimistic concurrency: GET, then PUT
 * with its resourceVersion; a 409 re-reads and retries, up to 5 times). Data keys must match
 * [-._a-zA-Z0-9]+ and the data together stay within 1 MiB (-E2BIG otherwise, before sending).
 */
int gc_kube_configmap_put(gc_kube *k, const char *ns, const char *name, const gc_kube_kv *labels,
                          size_t n_labels, const gc_kube_kv *data, size_t n_data, char *err,
                          size_t errlen);
/* The ConfigMap's object (caller deletes); -ENOENT when there is none. */
int gc_kube_configmap_get(gc_kube *k, const char *ns, const char *name, cJSON **ret_obj, char *err,
                          size_t errlen);
/* Names of the ConfigMaps matching a label selector (caller frees each and the array). */
int gc_kube_configmap_list(gc_kube *k, const char *ns, const char *label_selector,
                           char ***ret_names, size_t *ret_n, char *err, size_t errlen);
/* 0 also when it was already gone. */
int gc_kube_configmap_delete(gc_kube *k, const char *ns, const char *name, char *err,
                             size_t errlen);

/* ---- Events (core v1) ------------------------------------------------------------------------ */

typedef struct gc_kube_event_spec {
        const char *ns;                   /* where the Event is created */
        const char *name;                 /* its name: the same name is never created twice */
        const char *involved_api_version; /* NULL = "v1" */
        const char *involved_kind;        /* e.g. "Namespace" */
        const char *involved_name;        /* the object, in ns */
        const char *reason;               /* UpperCamelCase, at most 128 characters */
        const char *message;              /* at most 1024 bytes */
        const char *type;                 /* "Normal" (NULL) or "Warning" */
        const char *component;            /* source.component; NULL = "gpu-cost" */
} gc_kube_event_spec;

/*
 * Creates the Event at now (POST; count 1). -EEXIST when an Event of that name exists already:
 * a deterministic name makes "once" hold across restarts, for as long as the API server keeps
 * Events (kube-apiserver's --event-ttl, 1 h by default). -EACCES (403) without the grant.
 */
int gc_kube_event_create(gc_kube *k, const gc_kube_event_spec *e, int64_t now, char *err,
                         size_t errlen);

/* ---- leader election (coordination.k8s.io/v1 Lease), as client-go's leaderelection ---------- */

typedef struct gc_kube_lease {
        /* set by the caller */
        const char *ns;
        const char *name;
        const char *identity;
        int duration_s; /* leaseDurationSeconds; 0 = 15 */
        /* kept by gc_kube_lease_tick */
        char holder[256];         /* holderIdentity last observed */
        char record_rv[64];       /* resourceVersion of the last observed record */
        char observed_renew[40];  /* renewTime last observed (as text) */
        int64_t observed_at_mono; /* monotonic seconds when the record last changed */
        int64_t renewed_at_mono;  /* monotonic seconds of our last successful renewal */
        int leader;
} gc_kube_lease;

/*
 * Acquires or renews. A lease held by another identity is taken only when its record has not
 * changed for duration_s by our own monotonic clock (never by comparing clocks across
 * machines; the record's own leaseDurationSeconds counts when it has one). Sets *ret_leader, also
 * when it returns an error: a failed renewal keeps leadership only while
 * now < renewed_at + duration_s - 2 (so two leaders never overlap). now_mono: CLOCK_MONOTONIC s.
 */
int gc_kube_lease_tick(gc_kube *k, gc_kube_lease *l, int64_t now_mono, int *ret_leader, char *err,
                       size_t errlen);
/*
 * The CLOCK_MONOTONIC millisecond until which our writes may land: renewed_at + duration_s - 2
 * while leader (the moment a failed renewal makes us step down), 0 when not leader. Another
 * replica takes the lease no sooner than duration_s after it saw our last renewal.
 */
int64_t gc_kube_lease_fence_ms(const gc_kube_lease *l);
/* Gives the lease up (holderIdentity cleared) if we hold it, so a standby takes over at once. */
int gc_kube_lease_release(gc_kube *k, gc_kube_lease *l, char *err, size_t errlen);

/* ---- helpers ----------------------------------------------------------------------------------
 */

/* Appends s percent-encoded for a URL query value. */
int gc_kube_escape(gc_buf *out, const char *s);
/* Reads metadata.<field> of an object as a string, or NULL. */
const char *gc_kube_meta(const cJSON *obj, const char *field);

#endif
