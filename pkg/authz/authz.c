/* authz: the verdict cache, the review queue and its worker thread, and the httpd guard. */
#include "authz_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/evp.h>

#define KEY_BYTES 32
/* A review queued or under way; its entry is dropped after this in case it never ends. */
#define PENDING_MS (5 * 60 * 1000)
/* An API failure is logged again at most this often while it lasts. */
#define LOG_AGAIN_MS (30 * 1000)

struct entry {
        unsigned char key[KEY_BYTES];
        bool used, pending;
        gc_authz_verdict verdict;
        int64_t expires_ms;
        uint32_t next; /* index + 1 in the bucket's chain; 0 ends it */
};

/* One review to make: the token lives here only until the worker is done with it. */
struct item {
        unsigned char key[KEY_BYTES];
        char *token;
        size_t token_len;
        char *path;
};

struct gc_authz {
        gc_authz_opts o; /* kube, resource point into what this struct owns */
        gc_authz_resource resource;
        bool has_resource;
        gc_authz__reviewer *reviewer;
        int64_t allow_ms, deny_ms;

        pthread_mutex_t mu; /* guards everything below */
        pthread_cond_t cv;
        struct entry *entries;
        size_t n_entries, max_entries, hand; /* hand: the next slot to (re)use, FIFO */
        uint32_t *buckets;
        size_t mask;
        struct item *queue;
        size_t q_head, q_len, max_queue;
        bool stop;
        gc_authz_stats stats;

        pthread_t worker;
        bool started;
        /* worker-only */
        bool failing;
        int64_t last_fail_log_ms;
};

static int64_t mono_ms(void *ud)
{
        struct timespec ts;

        (void)ud;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t now_ms(const gc_authz *a)
{
        return a->o.now_ms ? a->o.now_ms(a->o.now_ud) : mono_ms(NULL);
}

static void alog(gc_authz *a, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void alog(gc_authz *a, int level, const char *fmt, ...)
{
        char msg[512];
        va_list ap;

        if (!a->o.log)
                return;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        a->o.log(a->o.log_ud, level, msg);
}

/* ---- keys and the cache -----------------------------------------------------------------------
 */

/* SHA-256 of the token and what is asked, so the cache never holds a token. */
static int make_key(const gc_authz *a, const char *token, size_t token_len, const char *path,
                    unsigned char key[KEY_BYTES])
{
        EVP_MD_CTX *md = EVP_MD_CTX_new();
        unsigned int n = 0;
        int ok;

        if (!md)
                return -ENOMEM;
        ok = EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 &&
             EVP_DigestUpdate(md, "gpu-cost-authz-v1", 18) == 1 &&
             EVP_DigestUpdate(md, token, token_len) == 1 && EVP_DigestUpdate(md, "", 1) == 1;
        /* With resource attributes every path asks the same question. */
        if (ok && !a->has_resource)
                ok = EVP_DigestUpdate(md, path, strlen(path) + 1) == 1;
        ok = ok && EVP_DigestFinal_ex(md, key, &n) == 1 && n == KEY_BYTES;
        EVP_MD_CTX_free(md);
        return ok ? 0 : -EIO;
}

static size_t bucket_of(const gc_authz *a, const unsigned char key[KEY_BYTES])
{
        uint64_t h;

        memcpy(&h, key, sizeof(h));
        return (size_t)h & a->mask;
}

static struct entry *find(gc_authz *a, const unsigned char key[KEY_BYTES])
{
        for (uint32_t i = a->buckets[bucket_of(a, key)]; i; i = a->entries[i - 1].next) {
                struct entry *e = &a->entries[i - 1];

                if (!memcmp(e->key, key, KEY_BYTES))
                        return e;
        }
        return NULL;
}

static void unlink_entry(gc_authz *a, struct entry *e)
{
        uint32_t idx = (uint32_t)(e - a->entries) + 1;
        uint32_t *p = &a->buckets[bucket_of(a, e->key)];

        while (*p && *p != idx)
                p = &a->entries[*p - 1].next;
        if (*p)
                *p = e->next;
        e->used = false;
        e->next = 0;
        a->n_entries--;
}

/* A new entry for key: the oldest slot is reused when all are taken. */
static struct entry *insert(gc_authz *a, const unsigned char key[KEY_BYTES])
{
        struct entry *e = &a->entries[a->hand];
        size_t b;

        a->hand = (a->hand + 1) % a->max_entries;
        if (e->used)
                unlink_entry(a, e);
        memcpy(e->key, key, KEY_BYTES);
        e->used = true;
        b = bucket_of(a, key);
        e->next = a->buckets[b];
        a->buckets[b] = (uint32_t)(e - a->entries) + 1;
        a->n_entries++;
        return e;
}

static void item_wipe(struct item *it)
{
        if (it->token) {
                explicit_bzero(it->token, it->token_len);
                free(it->token);
        }
        free(it->path);
        memset(it, 0, sizeof(*it));
}

/* ---- checks -----------------------------------------------------------------------------------
 */

static bool token_ok(const char *t, size_t n)
{
        if (n == 0 || n > GC_AUTHZ_MAX_TOKEN_BYTES)
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)t[i] < 0x21 || (unsigned char)t[i] > 0x7e)
                        return false;
        return true;
}

int gc_authz_check(gc_authz *a, const char *token, size_t token_len, const char *path,
                   gc_authz_verdict *ret)
{
        unsigned char key[KEY_BYTES];
        struct item *it;
        struct entry *e;
        int64_t now;
        int r;

        if (!a || !token || !ret || (!path && !a->has_resource))
                return -EINVAL;
        if (!token_ok(token, token_len))
                return -EINVAL;
        r = make_key(a, token, token_len, a->has_resource ? "" : path, key);
        if (r < 0)
                return r;
        now = now_ms(a);
        pthread_mutex_lock(&a->mu);
        e = find(a, key);
        if (e && now < e->expires_ms) {
                if (e->pending) {
                        r = -EINPROGRESS;
                } else {
                        a->stats.hits++;
                        *ret = e->verdict;
                        r = 0;
                }
                goto out;
        }
        if (a->q_len == a->max_queue) {
                a->stats.queue_full++;
                r = -EAGAIN;
                goto out;
        }
        it = &a->queue[(a->q_head + a->q_len) % a->max_queue];
        memcpy(it->key, key, KEY_BYTES);
        it->token = malloc(token_len + 1);
        it->path = strdup(a->has_resource || !path ? "" : path);
        if (!it->token || !it->path) {
                free(it->token);
                free(it->path);
                memset(it, 0, sizeof(*it));
                r = -ENOMEM;
                goto out;
        }
        memcpy(it->token, token, token_len);
        it->token[token_len] = '\0';
        it->token_len = token_len;
        a->q_len++;
        if (!e)
                e = insert(a, key);
        e->pending = true;
        e->expires_ms = now + PENDING_MS;
        a->stats.misses++;
        pthread_cond_signal(&a->cv);
        r = -EINPROGRESS;
out:
        pthread_mutex_unlock(&a->mu);
        explicit_bzero(key, sizeof(key));
        return r;
}

static void store(gc_authz *a, const unsigned char key[KEY_BYTES], gc_authz_verdict v)
{
        int64_t now = now_ms(a), ttl;
        struct entry *e;

        ttl = v == GC_AUTHZ_ALLOWED       ? a->allow_ms
              : v == GC_AUTHZ_UNAVAILABLE ? GC_AUTHZ_UNAVAILABLE_TTL_MS
                                          : a->deny_ms;
        pthread_mutex_lock(&a->mu);
        e = find(a, key);
        if (!e)
                e = insert(a, key);
        e->pending = false;
        e->verdict = v;
        e->expires_ms = now + ttl;
        a->stats.reviews++;
        a->stats.verdicts[v]++;
        pthread_mutex_unlock(&a->mu);
}

/* ---- the worker ----------------------------------------------------------------------------- */

static void note_outcome(gc_authz *a, gc_authz_verdict v, const char *reason)
{
        int64_t now = now_ms(a);

        if (v == GC_AUTHZ_UNAVAILABLE) {
                if (!a->failing || now - a->last_fail_log_ms >= LOG_AGAIN_MS) {
                        alog(a, GC_AUTHZ_LOG_WARN,
                             "cannot check a caller with the API server (answering 503): %s",
                             reason[0] ? reason : "unknown error");
                        a->last_fail_log_ms = now;
                }
                a->failing = true;
        } else if (a->failing) {
                alog(a, GC_AUTHZ_LOG_INFO, "the API server answers reviews again");
                a->failing = false;
        }
}

static void *worker_main(void *arg)
{
        gc_authz *a = arg;
        gc_authz_attrs attrs = {.verb = "get", .resource = a->has_resource ? &a->resource : NULL};

        pthread_mutex_lock(&a->mu);
        for (;;) {
                struct item it;
                gc_authz_verdict v = GC_AUTHZ_UNAVAILABLE;
                char reason[384] = "";
                int r;

                while (!a->stop && a->q_len == 0)
                        pthread_cond_wait(&a->cv, &a->mu);
                if (a->stop)
                        break;
                it = a->queue[a->q_head];
                memset(&a->queue[a->q_head], 0, sizeof(it));
                a->q_head = (a->q_head + 1) % a->max_queue;
                a->q_len--;
                pthread_mutex_unlock(&a->mu);

                attrs.path = a->has_resource ? NULL : it.path;
                r = a->o.review(a->o.review_ud, it.token, &attrs, &v, reason, sizeof(reason));
                if (r < 0) {
                        if (!reason[0])
                                snprintf(reason, sizeof(reason), "review failed: %s", strerror(-r));
                        v = GC_AUTHZ_UNAVAILABLE;
                }
                if ((int)v < GC_AUTHZ_ALLOWED || v > GC_AUTHZ_UNAVAILABLE)
                        v = GC_AUTHZ_UNAVAILABLE;
                store(a, it.key, v);
                item_wipe(&it);
                note_outcome(a, v, reason);
                if (a->o.wake)
                        a->o.wake(a->o.wake_ud);
                pthread_mutex_lock(&a->mu);
        }
        pthread_mutex_unlock(&a->mu);
        return NULL;
}

/* ---- lifecycle --------------------------------------------------------------------------------
 */

gc_authz *gc_authz_new(const gc_authz_opts *o, char *err, size_t errlen)
{
        gc_authz *a;
        size_t nb = 1;

        if (!o) {
                gc_errf(err, errlen, "opts: missing");
                return NULL;
        }
        a = calloc(1, sizeof(*a));
        if (!a) {
                gc_errf(err, errlen, "out of memory");
                return NULL;
        }
        a->o = *o;
        pthread_mutex_init(&a->mu, NULL);
        pthread_cond_init(&a->cv, NULL);
        a->allow_ms =
            1000LL * (o->allow_ttl_sec ? o->allow_ttl_sec : GC_AUTHZ_DEFAULT_ALLOW_TTL_SEC);
        a->deny_ms = 1000LL * (o->deny_ttl_sec ? o->deny_ttl_sec : GC_AUTHZ_DEFAULT_DENY_TTL_SEC);
        a->max_entries = o->max_entries ? o->max_entries : GC_AUTHZ_DEFAULT_MAX_ENTRIES;
        a->max_queue = o->max_queue ? o->max_queue : GC_AUTHZ_DEFAULT_MAX_QUEUE;
        if (o->allow_ttl_sec < 0 || o->allow_ttl_sec > 3600) {
                gc_errf(err, errlen, "allow_ttl_sec: %d is not in 0..3600", o->allow_ttl_sec);
                goto fail;
        }
        if (o->deny_ttl_sec < 0 || o->deny_ttl_sec > 3600) {
                gc_errf(err, errlen, "deny_ttl_sec: %d is not in 0..3600", o->deny_ttl_sec);
                goto fail;
        }
        if (a->max_entries < 16 || a->max_entries > (1u << 20)) {
                gc_errf(err, errlen, "max_entries: %zu is not in 16..1048576", a->max_entries);
                goto fail;
        }
        if (a->max_queue > 4096) {
                gc_errf(err, errlen, "max_queue: %zu is not in 1..4096", a->max_queue);
                goto fail;
        }
        if (o->resource) {
                a->resource = *o->resource;
                a->has_resource = true;
        }
        a->o.resource = NULL;
        a->o.kube = NULL;
        if (!o->review) {
                if (!o->kube) {
                        gc_errf(err, errlen, "kube: missing (and no review function)");
                        goto fail;
                }
                a->reviewer = gc_authz__reviewer_new(o->kube, a->allow_ms, a->deny_ms, err, errlen);
                if (!a->reviewer)
                        goto fail;
                a->o.review = gc_authz__kube_review;
                a->o.review_ud = a->reviewer;
        }
        while (nb < a->max_entries * 2)
                nb <<= 1;
        a->mask = nb - 1;
        a->entries = calloc(a->max_entries, sizeof(*a->entries));
        a->buckets = calloc(nb, sizeof(*a->buckets));
        a->queue = calloc(a->max_queue, sizeof(*a->queue));
        if (!a->entries || !a->buckets || !a->queue) {
                gc_errf(err, errlen, "out of memory");
                goto fail;
        }
        if (pthread_create(&a->worker, NULL, worker_main, a) != 0) {
                gc_errf(err, errlen, "cannot start the worker thread");
                goto fail;
        }
        a->started = true;
        return a;
fail:
        gc_authz_free(a);
        return NULL;
}

gc_authz *gc_authz_free(gc_authz *a)
{
        if (!a)
                return NULL;
        if (a->started) {
                pthread_mutex_lock(&a->mu);
                a->stop = true;
                pthread_cond_broadcast(&a->cv);
                pthread_mutex_unlock(&a->mu);
                pthread_join(a->worker, NULL);
        }
        if (a->queue)
                for (size_t i = 0; i < a->max_queue; i++)
                        item_wipe(&a->queue[i]);
        free(a->queue);
        free(a->entries);
        free(a->buckets);
        a->reviewer = gc_authz__reviewer_free(a->reviewer);
        pthread_cond_destroy(&a->cv);
        pthread_mutex_destroy(&a->mu);
        free(a);
        return NULL;
}

void gc_authz_stats_get(gc_authz *a, gc_authz_stats *ret)
{
        if (!a || !ret)
                return;
        pthread_mutex_lock(&a->mu);
        *ret = a->stats;
        ret->entries = a->n_entries;
        ret->queued = a->q_len;
        pthread_mutex_unlock(&a->mu);
}

/* ---- the guard ---------------------------------------------------------------------------- */

int gc_authz_bearer(const char *header, const char **ret_token, size_t *ret_len)
{
        const char *p, *end;

        if (!header)
                return -ENOENT;
        p = header;
        while (*p == ' ' || *p == '\t')
                p++;
        if (strncasecmp(p, "bearer", 6) != 0 || (p[6] != ' ' && p[6] != '\t'))
                return -ENOENT;
        p += 6;
        while (*p == ' ' || *p == '\t')
                p++;
        end = p + strlen(p);
        while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
                end--;
        if (end == p)
                return -ENOENT;
        *ret_token = p;
        *ret_len = (size_t)(end - p);
        return 0;
}

static int deny(gc_httpd_response *res, int status, const char *msg, const char *challenge)
{
        int r = gc_httpd_error(res, status, msg);

        if (r == 0 && challenge)
                r = gc_httpd_add_header(res, "WWW-Authenticate", challenge);
        if (r == 0 && status == 503)
                r = gc_httpd_add_header(res, "Retry-After", "1");
        return r < 0 ? r : GC_HTTPD_DENY;
}

int gc_authz_guard(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        gc_authz *a = ud;
        gc_authz_verdict v;
        const char *token;
        size_t len;
        int r;

        if (gc_authz_bearer(gc_httpd_header(req, "Authorization"), &token, &len) < 0)
                return deny(res, 401, "a bearer token is required", "Bearer");
        r = gc_authz_check(a, token, len, req->path, &v);
        if (r == -EINPROGRESS)
                return GC_HTTPD_PENDING;
        if (r == -EINVAL)
                return deny(res, 401, "invalid bearer token", "Bearer error=\"invalid_token\"");
        if (r == -EAGAIN)
                return deny(res, 503, "too many authorization checks pending", NULL);
        if (r < 0)
                return r;
        switch (v) {
        case GC_AUTHZ_ALLOWED:
                return GC_HTTPD_ALLOW;
        case GC_AUTHZ_UNAUTHENTICATED:
                return deny(res, 401, "invalid bearer token", "Bearer error=\"invalid_token\"");
        case GC_AUTHZ_FORBIDDEN:
                return deny(res, 403, "forbidden", NULL);
        default:
                return deny(res, 503, "authorization unavailable: the API server did not answer",
                            NULL);
        }
}
