/* kube watch: paged LIST, then WATCH from its resourceVersion, forever (docs/kube.md). */
#include "kube_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GC__RV_MAX          256     /* resourceVersions are short opaque strings */
#define GC__HEALTHY_S       10      /* a stream that lasted this long resets the backoff */
#define GC__LIST_IDLE_MAX_S 60      /* a LIST page that stalls this long is retried */
#define GC__END_STREAM      (-4242) /* internal: the line handler ends the stream on purpose */
#define GC__LIST_RESTARTS   3       /* stale continue tokens in a row before backing off */
/* gc_kube_watch_opts.metadata_only: metadata, or the full object from a server without it. */
#define GC__ACCEPT_META_LIST                                                                       \
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json"
#define GC__ACCEPT_META_ONE                                                                        \
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json"

typedef enum gc__outcome {
        GC__OK = 0,    /* a LIST completed, or a watch ended normally */
        GC__STOPPED,   /* *stop */
        GC__FATAL,     /* a callback failed (w->cb_err) */
        GC__FORBIDDEN, /* 401/403 */
        GC__EXPIRED,   /* 410: LIST again */
        GC__BAD,       /* an event we cannot read: LIST again */
        GC__IDLE,      /* nothing arrived for idle_s */
        GC__RETRY,     /* transport error, 5xx, 429, or an in-stream ERROR */
} gc__outcome;

typedef struct gc__watch {
        gc_kube *k;
        const gc_kube_watch_opts *o;
        const gc_kube_watch_ops *ops;
        void *ud;
        const volatile sig_atomic_t *stop;
        int page_limit;
        int timeout_s; /* 0: chosen per watch */
        int idle_s;    /* 0: timeout + 30, per watch */
        double backoff_min_s, backoff_max_s, backoff_s;
        size_t max_line;
        char rv[GC__RV_MAX]; /* where the next watch starts */
        /* Where the watch after the next LIST starts instead of the LIST's resourceVersion:
         * opts.resume_rv at first, later the oldest resourceVersion a 410 said the server
         * still holds. Empty: none. */
        char resume[GC__RV_MAX];
        /* The resourceVersion the next LIST is of (opts.resume_exact), until one succeeds or a
         * 410 says it is gone. Empty: the state now. */
        char list_at[GC__RV_MAX];
        char oldest[GC__RV_MAX]; /* from the last 410's message, when it named one */
        int expired_last;        /* the last watch ended in 410 (a LIST may have followed) */

        /* per transfer */
        int cb_err;
        int scan_err;               /* the LIST scanner refused the body */
        gc__outcome stream_outcome; /* what the stream handler saw, when it ended the stream */
        long stream_code;           /* the code of an in-stream ERROR */
        size_t n_events;
        size_t n_objects;
        gc_kube_lines lines;
        gc__kube_scan scan;
        long status; /* HTTP status of the last transfer (0: none), for notes */
        char msg[512];
} gc__watch;

static void gc__note(gc__watch *w, gc_kube_note note, long status, const char *msg)
{
        if (w->ops->note)
                w->ops->note(w->ud, note, status, msg ? msg : "");
}

static int gc__set_rv(gc__watch *w, const char *rv)
{
        if (!rv || !rv[0])
                return 0;
        if (strlen(rv) >= sizeof(w->rv))
                return -E2BIG;
        gc_strlcpy(w->rv, rv, sizeof(w->rv));
        return 0;
}

/* The next pause: the current backoff jittered to [50%, 100%]; the backoff then doubles. */
static double gc__next_delay(gc__watch *w)
{
        double d = w->backoff_s * (0.5 + 0.5 * gc__kube_rand(w->k));

        w->backoff_s *= 2;
        if (w->backoff_s > w->backoff_max_s)
                w->backoff_s = w->backoff_max_s;
        return d;
}

/* Pauses before the next attempt; non-zero when stopped meanwhile. */
static int gc__pause(gc__watch *w)
{
        return gc__kube_sleep(gc__next_delay(w), w->stop);
}

/* Appends the selectors and returns the query string's path. */
static int gc__query_common(gc__watch *w, gc_buf *b)
{
        int r = 0;

        if (w->o->label_selector && w->o->label_selector[0]) {
                r = gc_buf_puts(b, "&labelSelector=");
                if (r == 0)
                        r = gc_kube_escape(b, w->o->label_selector);
        }
        if (r == 0 && w->o->field_selector && w->o->field_selector[0]) {
                r = gc_buf_puts(b, "&fieldSelector=");
                if (r == 0)
                        r = gc_kube_escape(b, w->o->field_selector);
        }
        return r;
}

/* Maps a failed transfer or a non-200 status to an outcome, with a message. */
static gc__outcome gc__classify(gc__watch *w, int r, long status, const gc__kube_fail *f,
                                const gc_buf *body, const char *err)
{
        if (r == 0) {
                gc__kube_status_msg(body, status, w->msg, sizeof(w->msg));
                if (status == 401 || status == 403)
                        return GC__FORBIDDEN;
                if (status == 410)
                        return GC__EXPIRED;
                return GC__RETRY;
        }
        if (f->stopped || (w->stop && *w->stop))
                return GC__STOPPED;
        if (w->cb_err < 0)
                return GC__FATAL;
        snprintf(w->msg, sizeof(w->msg), "%s", err);
        if (f->idle)
                return GC__IDLE;
        return GC__RETRY;
}

/* ---- LIST ------------------------------------------------------------------------------------ */

static int gc__list_item(void *ud, const char *json, size_t len)
{
        gc__watch *w = ud;
        cJSON *obj;
        int r;

        if (!json) {
                snprintf(w->msg, sizeof(w->msg), "a listed object over %zu bytes was skipped",
                         w->max_line);
                gc__note(w, GC_KUBE_NOTE_BAD_EVENT, 200, w->msg);
                return 0;
        }
        obj = cJSON_ParseWithLength(json, len);
        if (!cJSON_IsObject(obj)) {
                cJSON_Delete(obj);
                snprintf(w->msg, sizeof(w->msg), "a listed object that is not JSON was skipped");
                gc__note(w, GC_KUBE_NOTE_BAD_EVENT, 200, w->msg);
                return 0;
        }
        r = w->ops->object(w->ud, GC_KUBE_ADDED, obj);
        cJSON_Delete(obj);
        if (r < 0) {
                w->cb_err = r;
                return r;
        }
        w->n_objects++;
        return 0;
}

static int gc__list_feed(void *ud, const char *p, size_t n)
{
        gc__watch *w = ud;
        int r = gc__kube_scan_feed(&w->scan, p, n);

        if (r < 0 && w->cb_err == 0)
                w->scan_err = r;
        return r;
}

/* One page: on success *ret_continue is the next token ("" at the end) and w->rv the list's. */
static gc__outcome gc__list_page(gc__watch *w, const char *cont, char **ret_continue)
{
        gc__kube_io io = {0};
        gc__kube_fail f;
        gc_buf q, body;
        char err[512];
        long status = 0;
        cJSON *meta = NULL;
        const cJSON *v;
        gc__outcome out = GC__RETRY;
        int r;

        gc_buf_init(&q, 65536);
        gc_buf_init(&body, 0);
        gc__kube_scan_init(&w->scan, w->max_line, gc__list_item, w);
        r = gc_buf_printf(&q, "%s%climit=%d", w->o->path, strchr(w->o->path, '?') ? '&' : '?',
                          w->page_limit);
        if (r == 0 && cont[0]) {
                r = gc_buf_puts(&q, "&continue=");
                if (r == 0)
                        r = gc_kube_escape(&q, cont);
        } else if (r == 0 && w->list_at[0]) {
                /* The first page only: a continue token carries its resourceVersion. */
                r = gc_buf_puts(&q, "&resourceVersionMatch=Exact&resourceVersion=");
                if (r == 0)
                        r = gc_kube_escape(&q, w->list_at);
        }
        if (r == 0)
                r = gc__query_common(w, &q);
        if (r < 0) {
                snprintf(w->msg, sizeof(w->msg), "LIST %s: request too long", w->o->path);
                goto out;
        }
        io.timeout_s = -1;
        io.idle_s = w->idle_s && w->idle_s < GC__LIST_IDLE_MAX_S ? w->idle_s : GC__LIST_IDLE_MAX_S;
        io.accept = w->o->metadata_only ? GC__ACCEPT_META_LIST : NULL;
        io.stream = gc__list_feed;
        io.stream_ud = w;
        io.stop = w->stop;
        w->scan_err = 0;
        r = gc__kube_do(w->k, "GET", q.data, NULL, NULL, 0, &io, &status, &body, &f, err,
                        sizeof(err));
        w->status = status;
        if (r < 0 && w->scan_err == r) {
                w->status = 200; /* only a 200 answer is scanned */
                snprintf(w->msg, sizeof(w->msg), "LIST %s: %s", w->o->path,
                         r == -ENOMEM ? "out of memory" : "the answer is not a JSON list");
                goto out;
        }
        if (r < 0 || status != 200) {
                out = gc__classify(w, r, status, &f, &body, err);
                goto out;
        }
        if (gc__kube_scan_finish(&w->scan) < 0) {
                snprintf(w->msg, sizeof(w->msg), "LIST %s: the answer is not a complete list",
                         w->o->path);
                goto out;
        }
        if (w->scan.meta.len)
                meta = cJSON_ParseWithLength(w->scan.meta.data, w->scan.meta.len);
        v = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
        if (!cJSON_IsString(v) || !v->valuestring || !v->valuestring[0] ||
            gc__set_rv(w, v->valuestring) < 0) {
                snprintf(w->msg, sizeof(w->msg), "LIST %s: no usable metadata.resourceVersion",
                         w->o->path);
                goto out;
        }
        v = cJSON_GetObjectItemCaseSensitive(meta, "continue");
        *ret_continue = strdup(v && cJSON_IsString(v) && v->valuestring ? v->valuestring : "");
        if (!*ret_continue) {
                snprintf(w->msg, sizeof(w->msg), "out of memory");
                goto out;
        }
        out = GC__OK;
out:
        cJSON_Delete(meta);
        gc__kube_scan_release(&w->scan);
        gc_buf_free(&body);
        gc_buf_free(&q);
        return out;
}

/* A whole LIST, page after page; a stale continue token starts it again from the top. */
static gc__outcome gc__list(gc__watch *w)
{
        char *cont = NULL;
        gc__outcome out;
        int restarts = 0, r;

again:
        w->n_objects = 0;
        w->rv[0] = '\0';
        if (w->ops->list_begin && (r = w->ops->list_begin(w->ud)) < 0) {
                w->cb_err = r;
                return GC__FATAL;
        }
        cont = strdup("");
        if (!cont)
                return GC__RETRY;
        for (;;) {
                char *next = NULL;
                int had_continue = cont[0] != '\0';

                out = gc__list_page(w, cont, &next);
                free(cont);
                cont = next;
                if (out == GC__EXPIRED && (had_continue || w->list_at[0]) &&
                    restarts < GC__LIST_RESTARTS) {
                        /* A stale continue token, or a state the server no longer holds
                           (resume_exact): the state now. */
                        restarts++;
                        w->list_at[0] = '\0';
                        gc__note(w, GC_KUBE_NOTE_EXPIRED, 410, w->msg);
                        goto again;
                }
                if (out != GC__OK || !cont || !cont[0])
                        break;
                if (w->stop && *w->stop) {
                        out = GC__STOPPED;
                        break;
                }
        }
        free(cont);
        if (out != GC__OK)
                return out;
        w->list_at[0] = '\0';
        if (w->ops->list_end && (r = w->ops->list_end(w->ud)) < 0) {
                w->cb_err = r;
                return GC__FATAL;
        }
        snprintf(w->msg, sizeof(w->msg), "%zu objects at resourceVersion %s", w->n_objects, w->rv);
        gc__note(w, GC_KUBE_NOTE_LISTED, 200, w->msg);
        return GC__OK;
}

/* ---- WATCH ----------------------------------------------------------------------------------- */

static int gc__bad_event(gc__watch *w, const char *why)
{
        snprintf(w->msg, sizeof(w->msg), "%s", why);
        w->stream_outcome = GC__BAD;
        return GC__END_STREAM;
}

/*
 * kube-apiserver's 410 names the oldest resourceVersion its watch cache still holds: "too old
 * resource version: 1270 (1271)" (after a restart the cache starts at the current revision).
 * Watching from there after the new LIST replays everything since but that first revision,
 * instead of leaving the whole time until the LIST blind. Digits only; anything else: none.
 */
static void gc__oldest_rv(gc__watch *w, const char *msg)
{
        const char *p = strstr(msg, "too old resource version: "), *e;

        if (!p || !(p = strchr(p, '(')) || !(e = strchr(++p, ')')) || e == p ||
            (size_t)(e - p) >= sizeof(w->oldest))
                return;
        for (const char *q = p; q < e; q++)
                if (*q < '0' || *q > '9')
                        return;
        memcpy(w->oldest, p, (size_t)(e - p));
        w->oldest[e - p] = '\0';
}

static int gc__event(gc__watch *w, const cJSON *ev)
{
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
        const cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
        const char *t;
        gc_kube_event kind;
        int r;

        if (!cJSON_IsString(type) || !cJSON_IsObject(obj))
                return gc__bad_event(w, "an event without a type or an object");
        t = type->valuestring;
        if (strcmp(t, "ADDED") == 0) {
                kind = GC_KUBE_ADDED;
        } else if (strcmp(t, "MODIFIED") == 0) {
                kind = GC_KUBE_MODIFIED;
        } else if (strcmp(t, "DELETED") == 0) {
                kind = GC_KUBE_DELETED;
        } else if (strcmp(t, "BOOKMARK") == 0) {
                /* Only the resume point moves. */
                if (gc__set_rv(w, gc_kube_meta(obj, "resourceVersion")) < 0)
                        return gc__bad_event(w, "a bookmark with an oversized resourceVersion");
                w->n_events++;
                if (w->ops->progress && w->rv[0])
                        w->ops->progress(w->ud, w->rv);
                return 0;
        } else if (strcmp(t, "ERROR") == 0) {
                const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
                const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "message");

                w->stream_code = cJSON_IsNumber(code) ? (long)code->valuedouble : 0;
                w->oldest[0] = '\0';
                if (w->stream_code == 410 && cJSON_IsString(m) && m->valuestring)
                        gc__oldest_rv(w, m->valuestring);
                snprintf(w->msg, sizeof(w->msg), "watch ERROR %ld: %s", w->stream_code,
                         m && cJSON_IsString(m) && m->valuestring ? m->valuestring
                                                                  : "(no message)");
                w->stream_outcome = w->stream_code == 410 ? GC__EXPIRED : GC__RETRY;
                return GC__END_STREAM;
        } else {
                return gc__bad_event(w, "an event of unknown type");
        }
        r = w->ops->object(w->ud, kind, obj);
        if (r < 0) {
                w->cb_err = r;
                return r;
        }
        w->n_events++;
        /* After the callback: a failure there must resume before this event, not after it. */
        if (gc__set_rv(w, gc_kube_meta(obj, "resourceVersion")) < 0)
                return gc__bad_event(w, "an object with an oversized resourceVersion");
        return 0;
}

static int gc__watch_line(void *ud, const char *line, size_t len)
{
        gc__watch *w = ud;
        cJSON *ev;
        int r;

        if (!line) {
                snprintf(w->msg, sizeof(w->msg), "an event line over %zu bytes", w->max_line);
                w->stream_outcome = GC__BAD;
                return GC__END_STREAM;
        }
        while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
                len--;
        if (len == 0)
                return 0;
        ev = cJSON_ParseWithLength(line, len);
        if (!cJSON_IsObject(ev)) {
                cJSON_Delete(ev);
                return gc__bad_event(w, "an event line that is not a JSON object");
        }
        r = gc__event(w, ev);
        cJSON_Delete(ev);
        return r;
}

static int gc__watch_feed(void *ud, const char *p, size_t n)
{
        gc__watch *w = ud;

        return gc_kube_lines_feed(&w->lines, p, n, gc__watch_line, w);
}

/* One watch stream from w->rv. *ret_healthy: it worked long enough to reset the backoff. */
static gc__outcome gc__watch_once(gc__watch *w, int *ret_healthy)
{
        gc__kube_io io = {0};
        gc__kube_fail f;
        gc_buf q, body;
        char err[512];
        long status = 0;
        int timeout_s, idle_s, r;
        int64_t t0;
        gc__outcome out;

        *ret_healthy = 0;
        w->status = 0;
        timeout_s = w->timeout_s ? w->timeout_s : 300 + (int)(gc__kube_rand(w->k) * 301);
        idle_s = w->idle_s ? w->idle_s : timeout_s + 30;
        gc_buf_init(&q, 65536);
        gc_buf_init(&body, 0);
        gc_kube_lines_init(&w->lines, w->max_line);
        w->stream_outcome = GC__OK;
        w->stream_code = 0;
        w->n_events = 0;
        r = gc_buf_printf(&q, "%s%cwatch=1&allowWatchBookmarks=true&timeoutSeconds=%d", w->o->path,
                          strchr(w->o->path, '?') ? '&' : '?', timeout_s);
        if (r == 0)
                r = gc_buf_puts(&q, "&resourceVersion=");
        if (r == 0)
                r = gc_kube_escape(&q, w->rv);
        if (r == 0)
                r = gc__query_common(w, &q);
        if (r < 0) {
                snprintf(w->msg, sizeof(w->msg), "WATCH %s: request too long", w->o->path);
                out = GC__RETRY;
                goto out;
        }
        snprintf(w->msg, sizeof(w->msg), "from resourceVersion %s", w->rv);
        gc__note(w, GC_KUBE_NOTE_WATCH_START, 0, w->msg);
        io.timeout_s = -1;
        io.idle_s = idle_s;
        io.accept = w->o->metadata_only ? GC__ACCEPT_META_ONE : NULL;
        io.stream = gc__watch_feed;
        io.stream_ud = w;
        io.stop = w->stop;
        t0 = gc__kube_mono_ms();
        r = gc__kube_do(w->k, "GET", q.data, NULL, NULL, 0, &io, &status, &body, &f, err,
                        sizeof(err));
        w->status = status;
        if (w->cb_err < 0) {
                out = GC__FATAL;
        } else if (r == GC__END_STREAM) {
                out = w->stream_outcome;
                w->status = out == GC__BAD ? 200 : w->stream_code;
        } else if (r < 0 || status != 200) {
                out = gc__classify(w, r, status, &f, &body, err);
        } else {
                out = GC__OK;
                snprintf(w->msg, sizeof(w->msg), "after %zu events", w->n_events);
        }
        /* A stream that broke after its answer began (a restarting API server, a reset, an
           in-stream ERROR) leaves status 0; events delivered show it was a 200 all the same,
           and a watch that worked must reset the backoff, or the next break waits as long as
           the last failures did. */
        if ((status == 200 || w->n_events > 0) && out != GC__STOPPED && out != GC__FATAL) {
                int64_t thr = GC__HEALTHY_S;

                if (timeout_s / 2 < thr)
                        thr = timeout_s / 2 > 1 ? timeout_s / 2 : 1;
                if (out == GC__IDLE && idle_s < thr)
                        thr = idle_s;
                *ret_healthy = w->n_events > 0 || gc__kube_mono_ms() - t0 >= thr * 1000;
        }
        if (out == GC__IDLE)
                snprintf(w->msg, sizeof(w->msg), "nothing for %d s", idle_s);
out:
        gc_kube_lines_release(&w->lines);
        gc_buf_free(&body);
        gc_buf_free(&q);
        return out;
}

/* ---- the loop -------------------------------------------------------------------------------- */

/* The watch's state from its options (defaults filled in); NULL when out of memory or the resume
 * point is too long (*ret_err: -ENOMEM, -EINVAL). */
static gc__watch *gc__watch_new(gc_kube *k, const gc_kube_watch_opts *o,
                                const gc_kube_watch_ops *ops, void *ud,
                                const volatile sig_atomic_t *stop, int *ret_err)
{
        gc__watch *w;

        *ret_err = -ENOMEM;
        /* Heap, not stack: the message buffers and resume point stay off a small thread stack. */
        w = calloc(1, sizeof(*w));
        if (!w)
                return NULL;
        w->k = k;
        w->o = o;
        w->ops = ops;
        w->ud = ud;
        w->stop = stop;
        w->page_limit = o->page_limit > 0 ? o->page_limit : 500;
        w->timeout_s = o->timeout_seconds > 0 ? o->timeout_seconds : 0;
        w->idle_s = o->idle_seconds > 0 ? o->idle_seconds : 0;
        w->backoff_min_s = o->backoff_min_s > 0 ? o->backoff_min_s : 0.5;
        w->backoff_max_s = o->backoff_max_s > 0 ? o->backoff_max_s : 30;
        if (w->backoff_max_s < w->backoff_min_s)
                w->backoff_max_s = w->backoff_min_s;
        w->backoff_s = w->backoff_min_s;
        w->max_line = o->max_line ? o->max_line : GC_KUBE_MAX_LINE;
        if (w->timeout_s && !w->idle_s)
                w->idle_s = w->timeout_s + 30;
        if (o->resume_rv && o->resume_rv[0]) {
                if (strlen(o->resume_rv) >= sizeof(w->resume)) {
                        free(w);
                        *ret_err = -EINVAL;
                        return NULL;
                }
                gc_strlcpy(o->resume_exact ? w->list_at : w->resume, o->resume_rv,
                           sizeof(w->resume));
        }
        return w;
}

/*
 * A 401/403: retried (an authorizer still syncing) until the refusal has lasted grace_ms
 * (negative: at once), then fatal. *since_ms: when the refusals began (0: none before). 1 to
 * stop (-EKEYREJECTED for a 401, -EACCES for a 403 in *ret_r when fatal), 0 to go on.
 */
static int gc__on_forbidden(gc__watch *w, int64_t *since_ms, int64_t grace_ms, int *ret_r)
{
        int64_t now_ms = gc__kube_mono_ms();
        double d;
        size_t n;

        if (!*since_ms)
                *since_ms = now_ms;
        if (grace_ms < 0 || now_ms - *since_ms >= grace_ms) {
                gc__note(w, GC_KUBE_NOTE_FORBIDDEN, w->status, w->msg);
                *ret_r = w->status == 401 ? -EKEYREJECTED : -EACCES;
                return 1;
        }
        /* Maybe an API server whose authorizer is still syncing: retry, but only until the
           refusal has persisted for the grace period. */
        d = gc__next_delay(w);
        n = strlen(w->msg);
        snprintf(w->msg + n, sizeof(w->msg) - n,
                 "; refused, retrying in %.2f s (fatal if it persists %lld s)", d,
                 (long long)(grace_ms / 1000));
        gc__note(w, GC_KUBE_NOTE_RETRY, w->status, w->msg);
        return gc__kube_sleep(d, w->stop) ? 1 : 0;
}

/*
 * A 410: the resume point is gone. The next turn LISTs, and replays from the oldest version the
 * server still holds when it said one. 1 to stop, 0 to go on.
 */
static int gc__on_expired(gc__watch *w, int healthy)
{
        if (w->oldest[0]) {
                size_t n = strlen(w->msg);

                snprintf(w->msg + n, sizeof(w->msg) - n,
                         "; after the LIST, replaying from %s, the oldest resourceVersion the "
                         "server holds",
                         w->oldest);
                gc_strlcpy(w->resume, w->oldest, sizeof(w->resume));
                w->oldest[0] = '\0';
        }
        gc__note(w, GC_KUBE_NOTE_EXPIRED, 410, w->msg);
        /* The server answers again: LIST at once, however far the backoff grew while it did not
           (a partition, a restart), so the span left unseen is no longer than it must be. Only
           410s in a row, each after a LIST, back off: a loop. */
        if (healthy || !w->expired_last)
                w->backoff_s = w->backoff_min_s;
        else if (gc__pause(w))
                return 1;
        w->expired_last = 1;
        return 0;
}

int gc_kube_watch_run(gc_kube *k, const gc_kube_watch_opts *o, const gc_kube_watch_ops *ops,
                      void *ud, const volatile sig_atomic_t *stop)
{
        gc__watch *w;
        int need_list = 1, r = 0;
        int64_t forbidden_since_ms = 0, grace_ms;

        if (!k || !o || !o->path || o->path[0] != '/' || !ops || !ops->object)
                return -EINVAL;
        grace_ms = o->forbidden_grace_s == 0 ? 20000 : (int64_t)o->forbidden_grace_s * 1000;
        w = gc__watch_new(k, o, ops, ud, stop, &r);
        if (!w)
                return r;
        r = 0;
        while (!(stop && *stop)) {
                gc__outcome out;
                int healthy = 0;

                w->cb_err = 0;
                w->status = 0;
                if (need_list) {
                        out = gc__list(w);
                        if (out == GC__OK) {
                                need_list = 0;
                                forbidden_since_ms = 0;
                                if (w->resume[0]) {
                                        /* Replay from an earlier point: what the LIST
                                           cannot show (deletions, whole lifetimes) comes
                                           as events. */
                                        gc_strlcpy(w->rv, w->resume, sizeof(w->rv));
                                        w->resume[0] = '\0';
                                } else if (ops->progress) {
                                        ops->progress(ud, w->rv);
                                }
                                continue;
                        }
                } else {
                        out = gc__watch_once(w, &healthy);
                        if (healthy)
                                w->backoff_s = w->backoff_min_s;
                        if (out != GC__EXPIRED)
                                w->expired_last = 0;
                }
                if (out != GC__FORBIDDEN)
                        forbidden_since_ms = 0;
                switch (out) {
                case GC__OK:
                        gc__note(w, GC_KUBE_NOTE_WATCH_END, 200, w->msg);
                        /* A server that ends every watch at once must not be hammered. */
                        if (!healthy && gc__pause(w))
                                goto done;
                        break;
                case GC__STOPPED:
                        goto done;
                case GC__FATAL:
                        r = w->cb_err < 0 ? w->cb_err : -EIO;
                        goto done;
                case GC__FORBIDDEN:
                        if (gc__on_forbidden(w, &forbidden_since_ms, grace_ms, &r))
                                goto done;
                        break;
                case GC__EXPIRED:
                        need_list = 1;
                        if (gc__on_expired(w, healthy))
                                goto done;
                        break;
                case GC__BAD:
                        gc__note(w, GC_KUBE_NOTE_BAD_EVENT, 200, w->msg);
                        need_list = 1;
                        if (gc__pause(w))
                                goto done;
                        break;
                case GC__IDLE:
                        gc__note(w, GC_KUBE_NOTE_IDLE_TIMEOUT, 0, w->msg);
                        if (!healthy && gc__pause(w))
                                goto done;
                        break;
                case GC__RETRY:
                default: {
                        double d = gc__next_delay(w);
                        size_t n = strlen(w->msg);

                        snprintf(w->msg + n, sizeof(w->msg) - n, "; retrying in %.2f s", d);
                        gc__note(w, GC_KUBE_NOTE_RETRY, w->status, w->msg);
                        if (gc__kube_sleep(d, stop))
                                goto done;
                        break;
                }
                }
        }
done:
        free(w);
        return r;
}
