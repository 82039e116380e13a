/* test_authz: the verdict cache, the review queue and worker, the guard behind a real server.
 */
#include <check.h>
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "authz/authz.h"
#include "authz/authz_int.h"
#include "httpd/httpd.h"

/* ---- a fake API server's answers --------------------------------------------------------------
 */

/*
 * A fake review standing in for TokenReview + SubjectAccessReview (tests/e2e/test_auth.py runs
 * the real ones against kube-apiserver): "alice" may get everything under /api, "bob" is
 * authenticated but may not, "down" finds the API server unreachable, anything else is not a
 * valid token. A gate holds the worker inside a review so queueing can be observed.
 */
struct fake_api {
        pthread_mutex_t mu;
        pthread_cond_t cv;
        bool gate_closed;
        int in_review; /* the worker is inside the fake, held at the gate */
        int reviews;
        char last_path[128];
        char last_resource[64];
        int wakes;
        int64_t now_ms;
        char log[4096];
};

static int fake_review(void *ud, const char *token, const gc_authz_attrs *a, gc_authz_verdict *ret,
                       char *reason, size_t reasonlen)
{
        struct fake_api *f = ud;

        pthread_mutex_lock(&f->mu);
        f->in_review++;
        pthread_cond_broadcast(&f->cv);
        while (f->gate_closed)
                pthread_cond_wait(&f->cv, &f->mu);
        f->in_review--;
        f->reviews++;
        snprintf(f->last_path, sizeof(f->last_path), "%s", a->path ? a->path : "(none)");
        snprintf(f->last_resource, sizeof(f->last_resource), "%s",
                 a->resource ? a->resource->resource : "(none)");
        pthread_mutex_unlock(&f->mu);
        ck_assert_str_eq(a->verb, "get");
        if (!strcmp(token, "down")) {
                snprintf(reason, reasonlen, "TokenReview: connection refused");
                return -ECONNREFUSED;
        }
        if (!strcmp(token, "alice"))
                *ret = a->resource || !strncmp(a->path, "/api", 4) ? GC_AUTHZ_ALLOWED
                                                                   : GC_AUTHZ_FORBIDDEN;
        else if (!strcmp(token, "bob"))
                *ret = GC_AUTHZ_FORBIDDEN;
        else
                *ret = GC_AUTHZ_UNAUTHENTICATED;
        return 0;
}

static void fake_wake(void *ud)
{
        struct fake_api *f = ud;

        pthread_mutex_lock(&f->mu);
        f->wakes++;
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
}

static int64_t fake_now(void *ud)
{
        struct fake_api *f = ud;
        int64_t t;

        pthread_mutex_lock(&f->mu);
        t = f->now_ms;
        pthread_mutex_unlock(&f->mu);
        return t;
}

static void fake_log(void *ud, int level, const char *msg)
{
        struct fake_api *f = ud;
        size_t n;

        pthread_mutex_lock(&f->mu);
        n = strlen(f->log);
        snprintf(f->log + n, sizeof(f->log) - n, "%d %s\n", level, msg);
        pthread_mutex_unlock(&f->mu);
}

static void advance(struct fake_api *f, int64_t ms)
{
        pthread_mutex_lock(&f->mu);
        f->now_ms += ms;
        pthread_mutex_unlock(&f->mu);
}

static void gate(struct fake_api *f, bool closed)
{
        pthread_mutex_lock(&f->mu);
        f->gate_closed = closed;
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
}

/* Waits (5 s at most) until the worker has woken the server `wakes` times in all. */
static void wait_wakes(struct fake_api *f, int wakes)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 5;
        pthread_mutex_lock(&f->mu);
        while (f->wakes < wakes)
                if (pthread_cond_timedwait(&f->cv, &f->mu, &ts) != 0)
                        break;
        ck_assert_int_ge(f->wakes, wakes);
        pthread_mutex_unlock(&f->mu);
}

static void wait_in_review(struct fake_api *f)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 5;
        pthread_mutex_lock(&f->mu);
        while (f->in_review == 0)
                if (pthread_cond_timedwait(&f->cv, &f->mu, &ts) != 0)
                        break;
        ck_assert_int_eq(f->in_review, 1);
        pthread_mutex_unlock(&f->mu);
}

static int reviews(struct fake_api *f)
{
        int n;

        pthread_mutex_lock(&f->mu);
        n = f->reviews;
        pthread_mutex_unlock(&f->mu);
        return n;
}

static void fake_init(struct fake_api *f)
{
        memset(f, 0, sizeof(*f));
        pthread_mutex_init(&f->mu, NULL);
        pthread_cond_init(&f->cv, NULL);
        f->now_ms = 1000000;
}

static gc_authz *new_authz(struct fake_api *f, gc_authz_opts *o)
{
        char err[256] = "";
        gc_authz *a;

        o->review = fake_review;
        o->review_ud = f;
        o->wake = fake_wake;
        o->wake_ud = f;
        o->now_ms = fake_now;
        o->now_ud = f;
        o->log = fake_log;
        o->log_ud = f;
        a = gc_authz_new(o, err, sizeof(err));
        ck_assert_msg(a != NULL, "gc_authz_new: %s", err);
        return a;
}

/* A verdict, going through the queue when it is not cached. */
static gc_authz_verdict decide(gc_authz *a, struct fake_api *f, const char *token, const char *path)
{
        gc_authz_verdict v = GC_AUTHZ_UNAVAILABLE;
        int wakes, r;

        pthread_mutex_lock(&f->mu);
        wakes = f->wakes;
        pthread_mutex_unlock(&f->mu);
        r = gc_authz_check(a, token, strlen(token), path, &v);
        if (r == -EINPROGRESS) {
                wait_wakes(f, wakes + 1);
                r = gc_authz_check(a, token, strlen(token), path, &v);
        }
        ck_assert_int_eq(r, 0);
        return v;
}

/* ---- pure helpers -----------------------------------------------------------------------------
 */

static const struct {
        const char *header;
        const char *token; /* NULL: refused */
} bearer_cases[] = {
    {"Bearer abc.def-ghi", "abc.def-ghi"},
    {"bearer abc", "abc"},
    {"BEARER   abc  ", "abc"},
    {"  Bearer\tabc", "abc"},
    {"Bearer abc def", "abc def"}, /* refused later: not a token character */
    {"Bearer", NULL},
    {"Bearer ", NULL},
    {"Bearerabc", NULL},
    {"Basic YWxhZGRpbjpvcGVuc2VzYW1l", NULL},
    {"", NULL},
};

START_TEST(test_bearer)
{
        const char *tok = NULL;
        size_t len = 0;
        int r = gc_authz_bearer(bearer_cases[_i].header, &tok, &len);

        if (!bearer_cases[_i].token) {
                ck_assert_int_eq(r, -ENOENT);
                return;
        }
        ck_assert_int_eq(r, 0);
        ck_assert_uint_eq(len, strlen(bearer_cases[_i].token));
        ck_assert(!memcmp(tok, bearer_cases[_i].token, len));
}
END_TEST

START_TEST(test_resource_parse)
{
        gc_authz_resource r;
        char err[256];

        ck_assert_int_eq(gc_authz_resource_parse("namespace=gpu-cost,resource=services,"
                                                 "subresource=proxy,name=gpu-cost",
                                                 &r, err, sizeof(err)),
                         0);
        ck_assert_str_eq(r.ns, "gpu-cost");
        ck_assert_str_eq(r.resource, "services");
        ck_assert_str_eq(r.subresource, "proxy");
        ck_assert_str_eq(r.name, "gpu-cost");
        ck_assert_str_eq(r.group, "");
        ck_assert_int_eq(
            gc_authz_resource_parse("group=gpu-cost.io,resource=reports", &r, err, sizeof(err)), 0);
        ck_assert_str_eq(r.group, "gpu-cost.io");
        ck_assert_int_eq(gc_authz_resource_parse("namespace=x", &r, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "resource: missing");
        ck_assert_int_eq(gc_authz_resource_parse("resource=a,verb=list", &r, err, sizeof(err)),
                         -EINVAL);
        ck_assert_msg(strstr(err, "unknown key \"verb\"") != NULL, "%s", err);
        ck_assert_int_eq(gc_authz_resource_parse("resource=a,resource=b", &r, err, sizeof(err)),
                         -EINVAL);
        ck_assert_int_eq(gc_authz_resource_parse("resource=a/b", &r, err, sizeof(err)), -EINVAL);
        ck_assert_int_eq(gc_authz_resource_parse("resource", &r, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(test_sar_body)
{
        static const char user_json[] =
            "{\"username\":\"system:serviceaccount:team:reader\",\"uid\":\"u-1\","
            "\"groups\":[\"system:serviceaccounts\",\"system:authenticated\"],"
            "\"extra\":{\"authentication.kubernetes.io/pod-name\":[\"p\"]}}";
        cJSON *user = cJSON_Parse(user_json), *body;
        gc_authz_resource res;
        gc_authz_attrs a = {.verb = "get", .path = "/api/v1/costs"};
        char err[128], *text;

        ck_assert_ptr_nonnull(user);
        body = gc_authz__sar_body(user, &a);
        ck_assert_ptr_nonnull(body);
        text = cJSON_PrintUnformatted(body);
        ck_assert_str_eq(text,
                         "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":"
                         "\"SubjectAccessReview\",\"spec\":{\"user\":\"system:serviceaccount:"
                         "team:reader\",\"uid\":\"u-1\",\"groups\":[\"system:serviceaccounts\","
                         "\"system:authenticated\"],\"extra\":{\"authentication.kubernetes.io/"
                         "pod-name\":[\"p\"]},\"nonResourceAttributes\":{\"path\":\"/api/v1/"
                         "costs\",\"verb\":\"get\"}}}");
        cJSON_free(text);
        cJSON_Delete(body);

        ck_assert_int_eq(gc_authz_resource_parse("namespace=gpu-cost,resource=services,"
                                                 "subresource=proxy,name=gpu-cost",
                                                 &res, err, sizeof(err)),
                         0);
        a.resource = &res;
        body = gc_authz__sar_body(user, &a);
        text = cJSON_PrintUnformatted(
            cJSON_GetObjectItem(cJSON_GetObjectItem(body, "spec"), "resourceAttributes"));
        ck_assert_str_eq(text, "{\"namespace\":\"gpu-cost\",\"verb\":\"get\",\"resource\":"
                               "\"services\",\"subresource\":\"proxy\",\"name\":\"gpu-cost\"}");
        cJSON_free(text);
        cJSON_Delete(body);
        cJSON_Delete(user);
}
END_TEST

/* ---- the cache and the queue -------------------------------------------------------------- */

START_TEST(test_verdicts_and_ttls)
{
        struct fake_api f;
        gc_authz_opts o = {0};
        gc_authz_stats st;
        gc_authz_verdict v;
        gc_authz *a;

        fake_init(&f);
        a = new_authz(&f, &o);
        ck_assert_int_eq(decide(a, &f, "alice", "/api/v1/costs"), GC_AUTHZ_ALLOWED);
        ck_assert_str_eq(f.last_path, "/api/v1/costs");
        ck_assert_int_eq(decide(a, &f, "alice", "/metrics"), GC_AUTHZ_FORBIDDEN);
        ck_assert_int_eq(decide(a, &f, "bob", "/api/v1/costs"), GC_AUTHZ_FORBIDDEN);
        ck_assert_int_eq(decide(a, &f, "mallory", "/api/v1/costs"), GC_AUTHZ_UNAUTHENTICATED);
        ck_assert_int_eq(reviews(&f), 4);

        /* Cached: the same questions are answered at once, without a review. */
        ck_assert_int_eq(gc_authz_check(a, "alice", 5, "/api/v1/costs", &v), 0);
        ck_assert_int_eq(v, GC_AUTHZ_ALLOWED);
        ck_assert_int_eq(gc_authz_check(a, "bob", 3, "/api/v1/costs", &v), 0);
        ck_assert_int_eq(v, GC_AUTHZ_FORBIDDEN);
        ck_assert_int_eq(reviews(&f), 4);

        /* Denials are forgotten after 10 s, permissions after 60 s. */
        advance(&f, 10001);
        ck_assert_int_eq(gc_authz_check(a, "alice", 5, "/api/v1/costs", &v), 0);
        ck_assert_int_eq(gc_authz_check(a, "bob", 3, "/api/v1/costs", &v), -EINPROGRESS);
        wait_wakes(&f, 5);
        advance(&f, 50000);
        ck_assert_int_eq(gc_authz_check(a, "alice", 5, "/api/v1/costs", &v), -EINPROGRESS);
        wait_wakes(&f, 6);
        ck_assert_int_eq(reviews(&f), 6);

        /* An unreachable API server: 503, remembered for a second only, and logged. */
        ck_assert_int_eq(decide(a, &f, "down", "/api/v1/costs"), GC_AUTHZ_UNAVAILABLE);
        ck_assert_int_eq(gc_authz_check(a, "down", 4, "/api/v1/costs", &v), 0);
        advance(&f, GC_AUTHZ_UNAVAILABLE_TTL_MS);
        ck_assert_int_eq(gc_authz_check(a, "down", 4, "/api/v1/costs", &v), -EINPROGRESS);
        wait_wakes(&f, 8);
        ck_assert_msg(strstr(f.log, "1 cannot check a caller with the API server (answering 503): "
                                    "TokenReview: connection refused") != NULL,
                      "%s", f.log);
        ck_assert_int_eq(decide(a, &f, "alice", "/api/v1/x"), GC_AUTHZ_ALLOWED);
        ck_assert_msg(strstr(f.log, "2 the API server answers reviews again") != NULL, "%s", f.log);
        /* No token reaches the log. */
        ck_assert(strstr(f.log, "alice") == NULL && strstr(f.log, "down\n") == NULL);

        /* Tokens that cannot be sent in a header are refused before any review. */
        ck_assert_int_eq(gc_authz_check(a, "a b", 3, "/api", &v), -EINVAL);
        ck_assert_int_eq(gc_authz_check(a, "", 0, "/api", &v), -EINVAL);
        ck_assert_int_eq(gc_authz_check(a, "tab\t", 4, "/api", &v), -EINVAL);

        gc_authz_stats_get(a, &st);
        ck_assert_uint_eq(st.reviews, (uint64_t)reviews(&f));
        ck_assert_uint_eq(st.verdicts[GC_AUTHZ_ALLOWED], 3);
        ck_assert_uint_eq(st.verdicts[GC_AUTHZ_UNAVAILABLE], 2);
        ck_assert_uint_ge(st.hits, 4);
        a = gc_authz_free(a);
        ck_assert_ptr_null(a);
}
END_TEST

START_TEST(test_queue_dedup_and_bound)
{
        struct fake_api f;
        gc_authz_opts o = {.max_queue = 2};
        gc_authz_stats st;
        gc_authz_verdict v;
        gc_authz *a;

        fake_init(&f);
        a = new_authz(&f, &o);
        gate(&f, true);
        /* The worker takes the first and is held; asking again queues nothing more. */
        ck_assert_int_eq(gc_authz_check(a, "alice", 5, "/api/a", &v), -EINPROGRESS);
        wait_in_review(&f);
        for (int i = 0; i < 5; i++)
                ck_assert_int_eq(gc_authz_check(a, "alice", 5, "/api/a", &v), -EINPROGRESS);
        ck_assert_int_eq(gc_authz_check(a, "alice", 5, "/api/b", &v), -EINPROGRESS);
        ck_assert_int_eq(gc_authz_check(a, "bob", 3, "/api/a", &v), -EINPROGRESS);
        /* The queue holds two: a third distinct question is refused, not queued. */
        ck_assert_int_eq(gc_authz_check(a, "carol", 5, "/api/a", &v), -EAGAIN);
        ck_assert_int_eq(gc_authz_check(a, "alice", 5, "/api/a", &v), -EINPROGRESS);
        gc_authz_stats_get(a, &st);
        ck_assert_uint_eq(st.queued, 2);
        ck_assert_uint_eq(st.queue_full, 1);
        ck_assert_uint_eq(st.misses, 3);
        gate(&f, false);
        wait_wakes(&f, 3);
        ck_assert_int_eq(reviews(&f), 3);
        ck_assert_int_eq(gc_authz_check(a, "alice", 5, "/api/b", &v), 0);
        ck_assert_int_eq(v, GC_AUTHZ_ALLOWED);
        ck_assert_int_eq(gc_authz_check(a, "bob", 3, "/api/a", &v), 0);
        ck_assert_int_eq(v, GC_AUTHZ_FORBIDDEN);

        /* Freed with reviews queued and one held: the worker stops, the queue is wiped. */
        gate(&f, true);
        ck_assert_int_eq(gc_authz_check(a, "dave", 4, "/api/a", &v), -EINPROGRESS);
        wait_in_review(&f);
        ck_assert_int_eq(gc_authz_check(a, "erin", 4, "/api/a", &v), -EINPROGRESS);
        gate(&f, false);
        a = gc_authz_free(a);
}
END_TEST

START_TEST(test_bounded_entries)
{
        struct fake_api f;
        gc_authz_opts o = {.max_entries = 16};
        gc_authz_stats st;
        gc_authz_verdict v;
        char path[32];
        gc_authz *a;

        fake_init(&f);
        a = new_authz(&f, &o);
        for (int i = 0; i < 40; i++) {
                snprintf(path, sizeof(path), "/api/%d", i);
                ck_assert_int_eq(decide(a, &f, "alice", path), GC_AUTHZ_ALLOWED);
                gc_authz_stats_get(a, &st);
                ck_assert_uint_le(st.entries, 16);
        }
        /* The newest are kept, the oldest made room. */
        ck_assert_int_eq(gc_authz_check(a, "alice", 5, "/api/39", &v), 0);
        ck_assert_int_eq(gc_authz_check(a, "alice", 5, "/api/24", &v), 0);
        ck_assert_int_eq(gc_authz_check(a, "alice", 5, "/api/0", &v), -EINPROGRESS);
        wait_wakes(&f, 41);
        a = gc_authz_free(a);
}
END_TEST

START_TEST(test_resource_attributes)
{
        struct fake_api f;
        gc_authz_resource res;
        gc_authz_opts o = {.resource = &res};
        gc_authz_verdict v;
        char err[128];
        gc_authz *a;

        fake_init(&f);
        ck_assert_int_eq(gc_authz_resource_parse("namespace=gpu-cost,resource=services,"
                                                 "subresource=proxy,name=gpu-cost",
                                                 &res, err, sizeof(err)),
                         0);
        a = new_authz(&f, &o);
        ck_assert_int_eq(decide(a, &f, "alice", "/metrics"), GC_AUTHZ_ALLOWED);
        ck_assert_str_eq(f.last_resource, "services");
        ck_assert_str_eq(f.last_path, "(none)");
        /* Every path asks the same question: one review for all. */
        ck_assert_int_eq(gc_authz_check(a, "alice", 5, "/api/v1/costs", &v), 0);
        ck_assert_int_eq(reviews(&f), 1);
        a = gc_authz_free(a);
}
END_TEST

START_TEST(test_bad_opts)
{
        gc_authz_opts o = {0};
        char err[256];

        ck_assert_ptr_null(gc_authz_new(NULL, err, sizeof(err)));
        ck_assert_ptr_null(gc_authz_new(&o, err, sizeof(err)));
        ck_assert_str_eq(err, "kube: missing (and no review function)");
        o.review = fake_review;
        o.max_entries = 3;
        ck_assert_ptr_null(gc_authz_new(&o, err, sizeof(err)));
        ck_assert_msg(strstr(err, "max_entries") == err, "%s", err);
        o.max_entries = 0;
        o.allow_ttl_sec = -1;
        ck_assert_ptr_null(gc_authz_new(&o, err, sizeof(err)));
        ck_assert_msg(strstr(err, "allow_ttl_sec") == err, "%s", err);
        ck_assert_ptr_null(gc_authz_free(NULL));
}
END_TEST

/* ---- the guard in a real server ------------------------------------------------------------- */

struct server {
        gc_httpd *h;
        pthread_t th;
        char base[64];
};

static void httpd_wake(void *ud)
{
        gc_httpd_wake(ud);
}

static int h_ok(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        (void)ud;
        res->content_type = "text/plain";
        return gc_buf_printf(&res->body, "ok %s", req->path);
}

static void *serve(void *p)
{
        gc_httpd_run(p, NULL);
        return NULL;
}

static size_t to_buf(char *p, size_t size, size_t n, void *ud)
{
        return gc_buf_append(ud, p, size * n) == 0 ? size * n : 0;
}

/* GET base+path with "Authorization: auth" (NULL: none): the status; body and headers kept. */
static long get(const struct server *s, const char *path, const char *auth, gc_buf *body,
                gc_buf *hdrs)
{
        struct curl_slist *sl = NULL;
        char url[160], line[128];
        CURL *c = curl_easy_init();
        long status = 0;

        snprintf(url, sizeof(url), "%s%s", s->base, path);
        if (auth) {
                snprintf(line, sizeof(line), "Authorization: %s", auth);
                sl = curl_slist_append(NULL, line);
        }
        gc_buf_reset(body);
        gc_buf_reset(hdrs);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, sl);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, to_buf);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, to_buf);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, hdrs);
        ck_assert_int_eq(curl_easy_perform(c), CURLE_OK);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        curl_slist_free_all(sl);
        curl_easy_cleanup(c);
        gc_buf_puts(body, "");
        gc_buf_puts(hdrs, "");
        return status;
}

START_TEST(test_guard_in_server)
{
        struct fake_api f;
        gc_httpd_opts ho = {.listen = "127.0.0.1:0"};
        gc_authz_opts o = {0};
        struct server s;
        gc_buf body, hdrs;
        char err[256];
        gc_authz *a;

        fake_init(&f);
        /* Real time: the server parks requests for seconds. */
        s.h = gc_httpd_new(&ho, err, sizeof(err));
        ck_assert_msg(s.h != NULL, "%s", err);
        o.review = fake_review;
        o.review_ud = &f;
        o.wake = httpd_wake;
        o.wake_ud = s.h;
        a = gc_authz_new(&o, err, sizeof(err));
        ck_assert_ptr_nonnull(a);
        ck_assert_int_eq(gc_httpd_route(s.h, "/api", GC_HTTPD_PREFIX, h_ok, NULL), 0);
        ck_assert_int_eq(gc_httpd_route(s.h, "/metrics", 0, h_ok, NULL), 0);
        ck_assert_int_eq(gc_httpd_route(s.h, "/healthz", GC_HTTPD_OPEN, h_ok, NULL), 0);
        ck_assert_int_eq(gc_httpd_set_guard(s.h, gc_authz_guard, a), 0);
        snprintf(s.base, sizeof(s.base), "http://127.0.0.1:%d", gc_httpd_port(s.h));
        ck_assert_int_eq(pthread_create(&s.th, NULL, serve, s.h), 0);
        gc_buf_init(&body, 1 << 16);
        gc_buf_init(&hdrs, 1 << 16);

        ck_assert_int_eq(get(&s, "/api/v1/costs", NULL, &body, &hdrs), 401);
        ck_assert_msg(strcasestr(hdrs.data, "www-authenticate: Bearer\r\n") != NULL, "%s",
                      hdrs.data);
        ck_assert_str_eq(body.data, "{\"error\":\"a bearer token is required\",\"status\":401}");
        ck_assert_int_eq(get(&s, "/api/v1/costs", "Basic YTpi", &body, &hdrs), 401);
        ck_assert_int_eq(get(&s, "/api/v1/costs", "Bearer alice", &body, &hdrs), 200);
        ck_assert_str_eq(body.data, "ok /api/v1/costs");
        ck_assert_int_eq(get(&s, "/metrics", "Bearer alice", &body, &hdrs), 403);
        ck_assert_str_eq(body.data, "{\"error\":\"forbidden\",\"status\":403}");
        ck_assert_int_eq(get(&s, "/api/v1/costs", "Bearer bob", &body, &hdrs), 403);
        ck_assert_int_eq(get(&s, "/api/v1/costs", "Bearer garbage", &body, &hdrs), 401);
        ck_assert_msg(
            strcasestr(hdrs.data, "www-authenticate: Bearer error=\"invalid_token\"\r\n") != NULL,
            "%s", hdrs.data);
        ck_assert_int_eq(get(&s, "/api/v1/costs", "Bearer down", &body, &hdrs), 503);
        ck_assert_msg(strcasestr(hdrs.data, "retry-after: 1\r\n") != NULL, "%s", hdrs.data);
        ck_assert_int_eq(get(&s, "/healthz", NULL, &body, &hdrs), 200);
        ck_assert_int_eq(get(&s, "/nowhere", NULL, &body, &hdrs), 404);
        /* The second time from the cache: no new review. */
        ck_assert_int_eq(reviews(&f), 5);
        ck_assert_int_eq(get(&s, "/api/v1/costs", "Bearer alice", &body, &hdrs), 200);
        ck_assert_int_eq(reviews(&f), 5);

        gc_httpd_stop(s.h);
        pthread_join(s.th, NULL);
        a = gc_authz_free(a);
        s.h = gc_httpd_free(s.h);
        gc_buf_free(&body);
        gc_buf_free(&hdrs);
}
END_TEST

static Suite *authz_suite(void)
{
        Suite *s = suite_create("authz");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 30);
        tcase_add_loop_test(tc, test_bearer, 0, sizeof(bearer_cases) / sizeof(bearer_cases[0]));
        tcase_add_test(tc, test_resource_parse);
        tcase_add_test(tc, test_sar_body);
        tcase_add_test(tc, test_verdicts_and_ttls);
        tcase_add_test(tc, test_queue_dedup_and_bound);
        tcase_add_test(tc, test_bounded_entries);
        tcase_add_test(tc, test_resource_attributes);
        tcase_add_test(tc, test_bad_opts);
        tcase_add_test(tc, test_guard_in_server);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr;
        int failed;

        curl_global_init(CURL_GLOBAL_DEFAULT);
        sr = srunner_create(authz_suite());
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        curl_global_cleanup();
        return failed != 0;
}
