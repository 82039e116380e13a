/* test_httpd: the HTTP server driven by libcurl and raw sockets: routing, limits, keep-alive, TLS.
 */
#include <arpa/inet.h>
#include <check.h>
#include <curl/curl.h>
#include <libwebsockets.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "httpd/httpd.h"
#include "httpd/httpd_int.h"

/* ---- a server in a thread -------------------------------------------------------------------- */

struct srv {
        gc_httpd *h;
        pthread_t th;
        int port;
        char base[64];
        int run_result;
};

static int h_hello(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        (void)ud;
        res->content_type = "text/plain";
        return gc_buf_printf(&res->body, "hello %s", req->path);
}

/* Echoes what the request carried, one "key=value" per line. */
static int h_echo(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        const char *auth = gc_httpd_header(req, "Authorization");
        const char *custom = gc_httpd_header(req, "x-Custom-Thing");
        int r;

        (void)ud;
        res->content_type = "text/plain";
        r = gc_buf_printf(&res->body, "method=%s\npath=%s\nquery=%s\nn=%zu\n", req->method,
                          req->path, req->query, req->n_params);
        for (size_t i = 0; i < req->n_params && r == 0; i++)
                r = gc_buf_printf(&res->body, "[%s]=[%s]\n", req->params[i].name,
                                  req->params[i].value);
        if (r == 0)
                r = gc_buf_printf(&res->body, "auth=%s\ncustom=%s\n", auth ? auth : "(none)",
                                  custom ? custom : "(none)");
        if (r == 0)
                r = gc_httpd_add_header(res, "X-Echo", "yes");
        return r;
}

/* 100000 bytes: lines "000000000\n" .. "000009999\n". */
static int h_big(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        int r = 0;

        (void)ud;
        (void)req;
        res->content_type = "text/plain";
        for (int i = 0; i < 10000 && r == 0; i++)
                r = gc_buf_printf(&res->body, "%09d\n", i);
        return r;
}

/* 8 MiB of 'z', more than socket buffers hold. */
static int h_huge(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        static char block[65536];
        int r = 0;

        (void)ud;
        (void)req;
        memset(block, 'z', sizeof(block));
        for (int i = 0; i < 128 && r == 0; i++)
                r = gc_buf_append(&res->body, block, sizeof(block));
        return r;
}

static int h_fail(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        (void)ud;
        (void)req;
        gc_buf_puts(&res->body, "partial");
        return -EIO;
}

static int h_prefix(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        return gc_buf_printf(&res->body, "%s %s", (const char *)ud, req->path);
}

/* ud "status": an impossible status; "type": a content type that would inject a header. */
static int h_invalid(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        (void)req;
        gc_httpd_add_header(res, "X-Kept", "no");
        if (!strcmp(ud, "status"))
                res->status = 99;
        else
                res->content_type = "text/plain\r\nSet-Cookie: a=b";
        return gc_buf_puts(&res->body, "x");
}

static int h_teapot(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        (void)ud;
        (void)req;
        return gc_httpd_error(res, 418, "short \"and\" stout");
}

/* Deferred answers wait at this gate, open unless a test closes it. */
static struct {
        pthread_mutex_t mu;
        pthread_cond_t cv;
        bool closed;
        int waiting; /* workers held at the gate */
} gate = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void gate_set(bool closed)
{
        pthread_mutex_lock(&gate.mu);
        gate.closed = closed;
        pthread_cond_broadcast(&gate.cv);
        pthread_mutex_unlock(&gate.mu);
}

static void gate_wait_for(int n)
{
        pthread_mutex_lock(&gate.mu);
        while (gate.waiting < n)
                pthread_cond_wait(&gate.cv, &gate.mu);
        pthread_mutex_unlock(&gate.mu);
}

/* On a worker: ud "big" is h_big's body, "fail" an error, else what the worker saw. */
static int w_deferred(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        const char *inm = gc_httpd_header(req, "If-None-Match");
        const char *other = gc_httpd_header(req, "X-Other");

        pthread_mutex_lock(&gate.mu);
        gate.waiting++;
        pthread_cond_broadcast(&gate.cv);
        while (gate.closed)
                pthread_cond_wait(&gate.cv, &gate.mu);
        gate.waiting--;
        pthread_mutex_unlock(&gate.mu);
        if (!strcmp(ud, "big"))
                return h_big(NULL, req, res);
        if (!strcmp(ud, "fail"))
                return -EIO;
        res->content_type = "text/plain";
        return gc_buf_printf(&res->body, "%s %s?%s inm=%s other=%s server=%s", req->method,
                             req->path, req->query, inm ? inm : "(none)", other ? other : "(none)",
                             gc_httpd_server(req) ? "yes" : "no");
}

/* On the serving thread: looks up If-None-Match (the worker sees it; X-Other it does not). */
static int h_deferred(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        gc_httpd_header(req, "If-None-Match");
        gc_httpd_add_header(res, "X-Before", "kept");
        return gc_httpd_defer(res, w_deferred, ud);
}

static void *run_thread(void *p)
{
        struct srv *s = p;

        s->run_result = gc_httpd_run(s->h, NULL);
        return NULL;
}

static void add_routes(gc_httpd *h)
{
        ck_assert_int_eq(gc_httpd_route(h, "/hello", 0, h_hello, NULL), 0);
        ck_assert_int_eq(gc_httpd_route(h, "/echo", 0, h_echo, NULL), 0);
        ck_assert_int_eq(gc_httpd_route(h, "/big", 0, h_big, NULL), 0);
        ck_assert_int_eq(gc_httpd_route(h, "/fail", 0, h_fail, NULL), 0);
        ck_assert_int_eq(gc_httpd_route(h, "/huge", 0, h_huge, NULL), 0);
        ck_assert_int_eq(gc_httpd_route(h, "/teapot", 0, h_teapot, NULL), 0);
        ck_assert_int_eq(gc_httpd_route(h, "/invalid/status", 0, h_invalid, "status"), 0);
        ck_assert_int_eq(gc_httpd_route(h, "/invalid/type", 0, h_invalid, "type"), 0);
        ck_assert_int_eq(gc_httpd_route(h, "/api", GC_HTTPD_PREFIX, h_prefix, "api"), 0);
        ck_assert_int_eq(gc_httpd_route(h, "/api/v1/", GC_HTTPD_PREFIX, h_prefix, "v1"), 0);
        ck_assert_int_eq(gc_httpd_route(h, "/api/v1/exact", 0, h_prefix, "exact"), 0);
        ck_assert_int_eq(gc_httpd_route(h, "/deferred", 0, h_deferred, "echo"), 0);
        ck_assert_int_eq(gc_httpd_route(h, "/deferred/big", 0, h_deferred, "big"), 0);
        ck_assert_int_eq(gc_httpd_route(h, "/deferred/fail", 0, h_deferred, "fail"), 0);
}

static void srv_start(struct srv *s, gc_httpd_opts *o)
{
        char err[256] = "";

        if (!o->listen)
                o->listen = "127.0.0.1:0";
        s->h = gc_httpd_new(o, err, sizeof(err));
        ck_assert_msg(s->h != NULL, "gc_httpd_new: %s", err);
        add_routes(s->h);
        s->port = gc_httpd_port(s->h);
        ck_assert_int_gt(s->port, 0);
        snprintf(s->base, sizeof(s->base), "%s://127.0.0.1:%d", o->tls_cert_file ? "https" : "http",
                 s->port);
        ck_assert_int_eq(pthread_create(&s->th, NULL, run_thread, s), 0);
}

static void srv_stop(struct srv *s)
{
        gc_httpd_stop(s->h);
        ck_assert_int_eq(pthread_join(s->th, NULL), 0);
        ck_assert_int_eq(s->run_result, 0);
        s->h = gc_httpd_free(s->h);
}

/* ---- a libcurl client --------------------------------------------------------------------------
 */

struct resp {
        long status;
        gc_buf body;
        gc_buf headers;
        curl_off_t content_length;
        long new_connections;
        CURLcode rc;
};

static size_t to_buf(char *p, size_t size, size_t n, void *ud)
{
        return gc_buf_append(ud, p, size * n) == 0 ? size * n : 0;
}

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
        (void)p;
        (void)ud;
        return size * n;
}

static void resp_free(struct resp *r)
{
        gc_buf_free(&r->body);
        gc_buf_free(&r->headers);
}

/* One request on c (so a reused handle keeps its connection). method NULL is GET. */
static void request(CURL *c, const char *url, const char *method, const char *cainfo,
                    struct curl_slist *hdrs, struct resp *r)
{
        memset(r, 0, sizeof(*r));
        gc_buf_init(&r->body, 16u << 20);
        gc_buf_init(&r->headers, 1u << 16);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, to_buf);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, to_buf);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, &r->headers);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
        curl_easy_setopt(c, CURLOPT_NOBODY, method && !strcmp(method, "HEAD") ? 1L : 0L);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST,
                         method && strcmp(method, "HEAD") != 0 ? method : NULL);
        if (method && !strcmp(method, "POST"))
                curl_easy_setopt(c, CURLOPT_POSTFIELDS, "x=1&y=2");
        else
                curl_easy_setopt(c, CURLOPT_HTTPGET, method ? 0L : 1L);
        if (cainfo) {
                curl_easy_setopt(c, CURLOPT_CAINFO, cainfo);
                curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
                curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
        }
        r->rc = curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
        curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &r->content_length);
        curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &r->new_connections);
}

static void get(const char *url, const char *method, struct resp *r)
{
        CURL *c = curl_easy_init();

        ck_assert_ptr_nonnull(c);
        request(c, url, method, NULL, NULL, r);
        curl_easy_cleanup(c);
}

static bool has_header(const struct resp *r, const char *line)
{
        return r->headers.data && strcasestr(r->headers.data, line) != NULL;
}

static double now_sec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int connect_raw(int port)
{
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        int fd = socket(AF_INET, SOCK_STREAM, 0);

        ck_assert_int_ge(fd, 0);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        return fd;
}

/* Seconds until the server closes fd (reads and discards), or -1 after limit_sec. */
static double wait_closed(int fd, double limit_sec)
{
        struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
        double t0 = now_sec();
        char buf[4096];

        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        while (now_sec() - t0 < limit_sec) {
                ssize_t n = read(fd, buf, sizeof(buf));

                if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
                        return now_sec() - t0;
        }
        return -1;
}

/* ---- pure helpers -------------------------------------------------------------------------- */

static const struct {
        const char *in;
        int ok;
        const char *host;
        int port;
        int family;
} listen_cases[] = {
    {"127.0.0.1:8080", 1, "127.0.0.1", 8080, AF_INET},
    {"0.0.0.0:8080", 1, "", 8080, AF_INET},
    {"10.1.2.3:0", 1, "10.1.2.3", 0, AF_INET},
    {"[::1]:8080", 1, "::1", 8080, AF_INET6},
    {"[::]:65535", 1, "", 65535, AF_INET6},
    {"[fe80::1]:1", 1, "fe80::1", 1, AF_INET6},
    {"127.0.0.1:65536", 0, NULL, 0, 0},
    {"127.0.0.1:-1", 0, NULL, 0, 0},
    {"127.0.0.1:+80", 0, NULL, 0, 0},
    {"127.0.0.1:", 0, NULL, 0, 0},
    {"127.0.0.1", 0, NULL, 0, 0},
    {"127.0.0.1:80x", 0, NULL, 0, 0},
    {"127.0.0.1:000080", 0, NULL, 0, 0},
    {":8080", 0, NULL, 0, 0},
    {"localhost:8080", 0, NULL, 0, 0},
    {"1.2.3:80", 0, NULL, 0, 0},
    {"::1:8080", 0, NULL, 0, 0},
    {"[::1]8080", 0, NULL, 0, 0},
    {"[::1]:", 0, NULL, 0, 0},
    {"[127.0.0.1]:80", 0, NULL, 0, 0},
    {"", 0, NULL, 0, 0},
};

START_TEST(test_parse_listen)
{
        char host[64] = "unchanged";
        int port = -7, family = -7;
        int r = gc_httpd__parse_listen(listen_cases[_i].in, host, sizeof(host), &port, &family);

        if (!listen_cases[_i].ok) {
                ck_assert_msg(r < 0, "%s should be refused", listen_cases[_i].in);
                ck_assert_str_eq(host, "unchanged");
                ck_assert_int_eq(port, -7);
                return;
        }
        ck_assert_msg(r == 0, "%s should parse", listen_cases[_i].in);
        ck_assert_str_eq(host, listen_cases[_i].host);
        ck_assert_int_eq(port, listen_cases[_i].port);
        ck_assert_int_eq(family, listen_cases[_i].family);
}
END_TEST

static const struct {
        gc_httpd_opts o;
        const char *field; /* the error names it */
} bad_opts[] = {
    {{.listen = NULL}, "listen"},
    {{.listen = "localhost:80"}, "listen"},
    {{.listen = "127.0.0.1:0", .max_connections = -1}, "max_connections"},
    {{.listen = "127.0.0.1:0", .max_url_bytes = 8}, "max_url_bytes"},
    {{.listen = "127.0.0.1:0", .max_header_bytes = 10}, "max_header_bytes"},
    {{.listen = "127.0.0.1:0", .idle_timeout_sec = -3}, "idle_timeout_sec"},
    {{.listen = "127.0.0.1:0", .header_timeout_sec = -1}, "header_timeout_sec"},
    {{.listen = "127.0.0.1:0", .max_connections = 8, .max_per_address = 9}, "max_per_address"},
    {{.listen = "127.0.0.1:0", .max_per_address = -2}, "max_per_address"},
    {{.listen = "127.0.0.1:0", .max_response_bytes = 100}, "max_response_bytes"},
    {{.listen = "127.0.0.1:0", .workers = 65}, "workers"},
    {{.listen = "127.0.0.1:0", .workers = -1}, "workers"},
    {{.listen = "127.0.0.1:0", .max_connections = 8, .max_queued = 9}, "max_queued"},
    {{.listen = "127.0.0.1:0", .tls_cert_file = "/nonexistent.pem"}, "tls_key_file"},
    {{.listen = "127.0.0.1:0", .tls_key_file = "/nonexistent.pem"}, "tls_cert_file"},
    {{.listen = "127.0.0.1:0",
      .tls_cert_file = "/nonexistent/c.pem",
      .tls_key_file = "/nonexistent/k.pem"},
     "tls_cert_file"},
};

START_TEST(test_bad_opts)
{
        char err[256] = "";
        gc_httpd *h = gc_httpd_new(&bad_opts[_i].o, err, sizeof(err));

        ck_assert_ptr_null(h);
        ck_assert_msg(strncmp(err, bad_opts[_i].field, strlen(bad_opts[_i].field)) == 0,
                      "error \"%s\" should name %s", err, bad_opts[_i].field);
}
END_TEST

/* A cap the process cannot hold is refused at start, not found out at accept(). */
START_TEST(test_fd_limit)
{
        struct rlimit rl;
        gc_httpd_opts o = {.listen = "127.0.0.1:0", .max_connections = 256};
        char err[256] = "";
        gc_httpd *h;

        ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
        rl.rlim_cur = 300; /* this test runs in a process of its own (CK_FORK) */
        ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
        h = gc_httpd_new(&o, err, sizeof(err));
        ck_assert_ptr_null(h);
        ck_assert_msg(strstr(err, "max_connections: 256 needs 392 descriptors") == err, "%s", err);
        o.max_connections = 160;
        h = gc_httpd_new(&o, err, sizeof(err));
        ck_assert_msg(h != NULL, "%s", err);
        h = gc_httpd_free(h);
}
END_TEST

START_TEST(test_port_in_use)
{
        gc_httpd_opts o = {.listen = "127.0.0.1:0"};
        char addr[64], err[256] = "";
        struct srv s = {0};
        gc_httpd *h2;

        srv_start(&s, &o);
        snprintf(addr, sizeof(addr), "127.0.0.1:%d", s.port);
        o.listen = addr;
        h2 = gc_httpd_new(&o, err, sizeof(err));
        ck_assert_ptr_null(h2);
        ck_assert_msg(strncmp(err, "listen:", 7) == 0, "%s", err);
        srv_stop(&s);
}
END_TEST

START_TEST(test_routes_and_helpers)
{
        gc_httpd_opts o = {.listen = "127.0.0.1:0"};
        gc_httpd_response res = {.status = 200};
        char err[256];
        gc_httpd *h = gc_httpd_new(&o, err, sizeof(err));

        ck_assert_ptr_nonnull(h);
        ck_assert_int_eq(gc_httpd_route(h, "/x", 0, h_hello, NULL), 0);
        ck_assert_int_eq(gc_httpd_route(h, "/x", 0, h_hello, NULL), -EEXIST);
        ck_assert_int_eq(gc_httpd_route(h, "/x", GC_HTTPD_PREFIX, h_hello, NULL), 0);
        ck_assert_int_eq(gc_httpd_route(h, "x", 0, h_hello, NULL), -EINVAL);
        ck_assert_int_eq(gc_httpd_route(h, "/y", 0, NULL, NULL), -EINVAL);
        ck_assert_int_eq(gc_httpd_route(h, "/y", 4, h_hello, NULL), -EINVAL);
        for (int i = 2; i < GC_HTTPD_MAX_ROUTES; i++) {
                char p[16];

                snprintf(p, sizeof(p), "/r%d", i);
                ck_assert_int_eq(gc_httpd_route(h, p, 0, h_hello, NULL), 0);
        }
        ck_assert_int_eq(gc_httpd_route(h, "/one-too-many", 0, h_hello, NULL), -E2BIG);
        h = gc_httpd_free(h);
        ck_assert_ptr_null(h);
        ck_assert_ptr_null(gc_httpd_free(NULL));

        gc_buf_init(&res.body, 1024);
        gc_buf_init(&res.headers_, 4096);
        ck_assert_int_eq(gc_httpd_add_header(&res, "Cache-Control", "no-store"), 0);
        ck_assert_int_eq(gc_httpd_add_header(&res, "X-Bad", "a\r\nSet-Cookie: x"), -EINVAL);
        ck_assert_int_eq(gc_httpd_add_header(&res, "X Bad", "v"), -EINVAL);
        ck_assert_int_eq(gc_httpd_add_header(&res, "content-length", "3"), -EINVAL);
        ck_assert_int_eq(gc_httpd_add_header(&res, "Connection", "close"), -EINVAL);
        ck_assert_int_eq(gc_httpd_add_header(&res, "", "v"), -EINVAL);
        ck_assert_int_eq(gc_httpd_error(&res, 400, "window: \"x\" is not a duration"), 0);
        ck_assert_int_eq(res.status, 400);
        ck_assert_str_eq(res.body.data,
                         "{\"error\":\"window: \\\"x\\\" is not a duration\",\"status\":400}");
        ck_assert_int_eq(gc_httpd_error(&res, 99, "x"), -EINVAL);
        gc_buf_free(&res.body);
        gc_buf_free(&res.headers_);
}
END_TEST

/* ---- over the network ---------------------------------------------------------------------- */

START_TEST(test_get_200)
{
        gc_httpd_opts o = {0};
        struct srv s = {0};
        struct resp r;
        char url[128];

        srv_start(&s, &o);
        snprintf(url, sizeof(url), "%s/hello", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.rc, CURLE_OK);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.body.data, "hello /hello");
        ck_assert_int_eq(r.content_length, 12);
        ck_assert(has_header(&r, "content-type: text/plain\r\n"));
        ck_assert(has_header(&r, "content-length: 12\r\n"));
        resp_free(&r);

        /* A body spanning many writes arrives whole. */
        snprintf(url, sizeof(url), "%s/big", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_int_eq(r.content_length, 100000);
        ck_assert_uint_eq(r.body.len, 100000);
        ck_assert(memcmp(r.body.data, "000000000\n000000001\n", 20) == 0);
        ck_assert(memcmp(r.body.data + 99990, "000009999\n", 10) == 0);
        resp_free(&r);
        srv_stop(&s);
}
END_TEST

START_TEST(test_errors_json)
{
        gc_httpd_opts o = {.max_response_bytes = 50000};
        struct srv s = {0};
        struct resp r;
        char url[128];

        srv_start(&s, &o);
        snprintf(url, sizeof(url), "%s/nope", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 404);
        ck_assert_str_eq(r.body.data, "{\"error\":\"not found\",\"status\":404}");
        ck_assert(has_header(&r, "content-type: application/json\r\n"));
        ck_assert_int_eq(r.content_length, 34);
        resp_free(&r);

        /* "/hellox" is neither "/hello" nor below a prefix. */
        snprintf(url, sizeof(url), "%s/hellox", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 404);
        resp_free(&r);

        snprintf(url, sizeof(url), "%s/hello", s.base);
        get(url, "POST", &r);
        ck_assert_int_eq(r.status, 405);
        ck_assert_str_eq(r.body.data, "{\"error\":\"method not allowed\",\"status\":405}");
        ck_assert(has_header(&r, "Allow: GET, HEAD\r\n"));
        resp_free(&r);
        get(url, "DELETE", &r);
        ck_assert_int_eq(r.status, 405);
        resp_free(&r);

        snprintf(url, sizeof(url), "%s/fail", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 500);
        ck_assert_str_eq(r.body.data, "{\"error\":\"internal error\",\"status\":500}");
        resp_free(&r);

        /* 100000 bytes do not fit in max_response_bytes. */
        snprintf(url, sizeof(url), "%s/big", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 500);
        ck_assert_str_eq(r.body.data, "{\"error\":\"response too large\",\"status\":500}");
        resp_free(&r);

        for (int i = 0; i < 2; i++) {
                snprintf(url, sizeof(url), "%s/invalid/%s", s.base, i ? "type" : "status");
                get(url, NULL, &r);
                ck_assert_int_eq(r.status, 500);
                ck_assert_str_eq(r.body.data,
                                 "{\"error\":\"internal error: invalid response\",\"status\":500}");
                ck_assert(!has_header(&r, "X-Kept"));
                ck_assert(!has_header(&r, "Set-Cookie"));
                resp_free(&r);
        }

        snprintf(url, sizeof(url), "%s/teapot", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 418);
        ck_assert_str_eq(r.body.data, "{\"error\":\"short \\\"and\\\" stout\",\"status\":418}");
        resp_free(&r);
        srv_stop(&s);
}
END_TEST

START_TEST(test_prefix_routes)
{
        static const struct {
                const char *path;
                long status;
                const char *body;
        } cases[] = {
            {"/api", 200, "api /api"},
            {"/api/x", 200, "api /api/x"},
            {"/apix", 404, NULL},
            {"/api/v1/", 200, "v1 /api/v1/"},
            {"/api/v1/costs", 200, "v1 /api/v1/costs"},
            {"/api/v1", 200, "api /api/v1"},
            {"/api/v1/exact", 200, "exact /api/v1/exact"},
            {"/api/v1/exact/more", 200, "v1 /api/v1/exact/more"},
            {"/api/v1//x/../costs", 200, "v1 /api/v1/costs"},
        };
        gc_httpd_opts o = {0};
        struct srv s = {0};

        srv_start(&s, &o);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct resp r;
                char url[128];

                snprintf(url, sizeof(url), "%s%s", s.base, cases[i].path);
                get(url, NULL, &r);
                ck_assert_msg(r.status == cases[i].status, "%s: %ld", cases[i].path, r.status);
                if (cases[i].body)
                        ck_assert_str_eq(r.body.data, cases[i].body);
                resp_free(&r);
        }
        srv_stop(&s);
}
END_TEST

START_TEST(test_head_and_keepalive)
{
        gc_httpd_opts o = {0};
        struct srv s = {0};
        struct resp r;
        char url[128];
        CURL *c = curl_easy_init();

        srv_start(&s, &o);
        snprintf(url, sizeof(url), "%s/big", s.base);
        request(c, url, "HEAD", NULL, NULL, &r);
        ck_assert_int_eq(r.rc, CURLE_OK);
        ck_assert_int_eq(r.status, 200);
        ck_assert_uint_eq(r.body.len, 0);
        ck_assert(has_header(&r, "content-length: 100000\r\n"));
        ck_assert_int_eq(r.new_connections, 1);
        resp_free(&r);

        /* The same connection serves a GET after the HEAD, a 404 and a 405. */
        request(c, url, NULL, NULL, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_uint_eq(r.body.len, 100000);
        ck_assert_int_eq(r.new_connections, 0);
        resp_free(&r);
        snprintf(url, sizeof(url), "%s/missing", s.base);
        request(c, url, "HEAD", NULL, NULL, &r);
        ck_assert_int_eq(r.status, 404);
        ck_assert(has_header(&r, "content-length: 34\r\n"));
        ck_assert_int_eq(r.new_connections, 0);
        resp_free(&r);
        snprintf(url, sizeof(url), "%s/hello", s.base);
        request(c, url, "HEAD", NULL, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_int_eq(r.new_connections, 0);
        resp_free(&r);
        /* A POST's body is not read: the 405 ends the connection, the next request opens one. */
        request(c, url, "POST", NULL, NULL, &r);
        ck_assert_int_eq(r.status, 405);
        ck_assert(has_header(&r, "connection: close\r\n"));
        resp_free(&r);
        request(c, url, NULL, NULL, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.body.data, "hello /hello");
        ck_assert_int_eq(r.new_connections, 1);
        resp_free(&r);
        curl_easy_cleanup(c);
        srv_stop(&s);
}
END_TEST

START_TEST(test_query_and_headers)
{
        gc_httpd_opts o = {0};
        struct srv s = {0};
        struct curl_slist *hdrs = NULL;
        struct resp r;
        char url[256];
        CURL *c = curl_easy_init();

        srv_start(&s, &o);
        hdrs = curl_slist_append(hdrs, "Authorization: Bearer abc.def");
        hdrs = curl_slist_append(hdrs, "X-Custom-Thing: v1");
        /*
         * %26 is a '&' inside a value, '+' a space, %C3%A9 UTF-8 e-acute; an encoded '='
         * in a name becomes '_' (lws); "flag" has no value.
         */
        snprintf(
            url, sizeof(url),
            "%s/echo?window=7d&by=team,project&b=x%%26y&c=h%%C3%%A9+llo%%21&d%%3De=5&empty=&flag",
            s.base);
        request(c, url, NULL, NULL, hdrs, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert(has_header(&r, "X-Echo: yes\r\n"));
        ck_assert_str_eq(r.body.data, "method=GET\n"
                                      "path=/echo\n"
                                      "query=window=7d&by=team%2Cproject&b=x%26y&"
                                      "c=h%C3%A9%20llo%21&d_e=5&empty=&flag=\n"
                                      "n=7\n"
                                      "[window]=[7d]\n"
                                      "[by]=[team,project]\n"
                                      "[b]=[x&y]\n"
                                      "[c]=[h\xc3\xa9 llo!]\n"
                                      "[d_e]=[5]\n"
                                      "[empty]=[]\n"
                                      "[flag]=[]\n"
                                      "auth=Bearer abc.def\n"
                                      "custom=v1\n");
        resp_free(&r);

        /* Headers and parameters do not leak into the next request on the connection. */
        snprintf(url, sizeof(url), "%s/echo", s.base);
        request(c, url, NULL, NULL, NULL, &r);
        ck_assert_int_eq(r.new_connections, 0);
        ck_assert_str_eq(r.body.data, "method=GET\npath=/echo\nquery=\nn=0\n"
                                      "auth=(none)\ncustom=(none)\n");
        resp_free(&r);
        curl_slist_free_all(hdrs);
        curl_easy_cleanup(c);
        srv_stop(&s);
}
END_TEST

START_TEST(test_bad_urls)
{
        gc_httpd_opts o = {.max_url_bytes = 1024};
        struct srv s = {0};
        struct resp r;
        char *url = malloc(8192);
        int n;

        srv_start(&s, &o);
        /* Over the limit in the path, then in one parameter. */
        n = snprintf(url, 8192, "%s/", s.base);
        memset(url + n, 'a', 3000);
        url[n + 3000] = '\0';
        get(url, NULL, &r);
        ck_assert_msg(r.status == 414, "status %ld", r.status);
        ck_assert_str_eq(r.body.data, "{\"error\":\"URL too long\",\"status\":414}");
        resp_free(&r);
        n = snprintf(url, 8192, "%s/echo?q=", s.base);
        memset(url + n, 'b', 3000);
        url[n + 3000] = '\0';
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 414);
        resp_free(&r);

        /* A decoded CR would make lws 4.1 drop the rest of the line. */
        snprintf(url, 8192, "%s/echo?q=%%0Dx&admin=1", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 400);
        resp_free(&r);
        snprintf(url, 8192, "%s/echo?q=%%01", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 400);
        ck_assert_str_eq(r.body.data,
                         "{\"error\":\"control character in a query parameter\",\"status\":400}");
        resp_free(&r);
        n = snprintf(url, 8192, "%s/echo?", s.base);
        for (int i = 0; i <= GC_HTTPD_MAX_PARAMS; i++)
                n += snprintf(url + n, 8192 - (size_t)n, "p%d=%d&", i, i);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 400);
        ck_assert_str_eq(r.body.data, "{\"error\":\"too many query parameters\",\"status\":400}");
        resp_free(&r);

        /* Still serving. */
        snprintf(url, 8192, "%s/hello", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        resp_free(&r);
        free(url);
        srv_stop(&s);
}
END_TEST

START_TEST(test_oversized_headers)
{
        gc_httpd_opts o = {.max_url_bytes = 1024, .max_header_bytes = 2048};
        struct srv s = {0};
        struct curl_slist *hdrs = NULL;
        struct resp r;
        char url[128], *big = malloc(20000);
        CURL *c = curl_easy_init();

        srv_start(&s, &o);
        memcpy(big, "X-Big: ", 7);
        memset(big + 7, 'h', 19000);
        big[19007] = '\0';
        hdrs = curl_slist_append(hdrs, big);
        snprintf(url, sizeof(url), "%s/hello", s.base);
        request(c, url, NULL, NULL, hdrs, &r);
        ck_assert_msg(r.rc == CURLE_OK && r.status == 431, "rc %d status %ld", r.rc, r.status);
        ck_assert_str_eq(r.body.data,
                         "{\"error\":\"request header fields too large\",\"status\":431}");
        resp_free(&r);
        curl_slist_free_all(hdrs);
        curl_easy_cleanup(c);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        resp_free(&r);
        free(big);
        srv_stop(&s);
}
END_TEST

/* Many clients at once, each on its own connection, against a limit of 4 connections. */
START_TEST(test_many_connections)
{
        enum { N = 48 };
        /* An idle timeout longer than a request's own (10 s): no idle connection leaves by it. */
        gc_httpd_opts o = {.max_connections = 4, .idle_timeout_sec = 60};
        struct srv s = {0};
        CURL *easy[N];
        CURLM *m = curl_multi_init();
        char url[128];
        int running = 0, ok = 0, idle[4];
        CURLMsg *msg;

        srv_start(&s, &o);
        snprintf(url, sizeof(url), "%s/big", s.base);
        for (int i = 0; i < N; i++) {
                easy[i] = curl_easy_init();
                curl_easy_setopt(easy[i], CURLOPT_URL, url);
                curl_easy_setopt(easy[i], CURLOPT_NOSIGNAL, 1L);
                curl_easy_setopt(easy[i], CURLOPT_TIMEOUT, 15L);
                curl_easy_setopt(easy[i], CURLOPT_FORBID_REUSE, 1L);
                curl_easy_setopt(easy[i], CURLOPT_FRESH_CONNECT, 1L);
                curl_easy_setopt(easy[i], CURLOPT_WRITEFUNCTION, discard);
                curl_multi_add_handle(m, easy[i]);
        }
        curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, 0L);
        do {
                curl_multi_perform(m, &running);
                curl_multi_poll(m, NULL, 0, 100, NULL);
        } while (running);
        while ((msg = curl_multi_info_read(m, &running))) {
                long status = 0;

                curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &status);
                if (msg->msg == CURLMSG_DONE && msg->data.result == CURLE_OK && status == 200)
                        ok++;
        }
        ck_assert_int_eq(ok, N);
        for (int i = 0; i < N; i++) {
                curl_multi_remove_handle(m, easy[i]);
                curl_easy_cleanup(easy[i]);
        }
        curl_multi_cleanup(m);

        /*
         * Four idle connections fill the server. The next client is served (within its own
         * 10 s, so not after an idle connection's timeout), and the stalest idle connection
         * (more than a second without a request) is shed to bring the server back to its four:
         * that one only.
         */
        for (int i = 0; i < 4; i++)
                idle[i] = connect_raw(s.port);
        usleep(1200000); /* the age at which an idle connection may be shed */
        {
                struct resp r;

                snprintf(url, sizeof(url), "%s/hello", s.base);
                get(url, NULL, &r);
                ck_assert_int_eq(r.status, 200);
                resp_free(&r);
        }
        ck_assert_msg(wait_closed(idle[0], 10.0) >= 0, "the stalest idle connection is still open");
        for (int i = 1; i < 4; i++) {
                struct timeval tv = {.tv_sec = 0, .tv_usec = 1000};
                char c;

                setsockopt(idle[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
                ck_assert_msg(read(idle[i], &c, 1) < 0 && errno == EAGAIN,
                              "idle connection %d was closed too", i);
        }
        for (int i = 0; i < 4; i++)
                close(idle[i]);
        srv_stop(&s);
}
END_TEST

START_TEST(test_slow_client_dropped)
{
        gc_httpd_opts o = {.idle_timeout_sec = 1};
        struct srv s = {0};
        struct resp r;
        char url[128];
        int slow, silent;
        double t;

        srv_start(&s, &o);
        slow = connect_raw(s.port);
        ck_assert_int_eq(write(slow, "GET /hel", 8), 8);
        silent = connect_raw(s.port);
        /* Others are served meanwhile. */
        snprintf(url, sizeof(url), "%s/hello", s.base);
        for (int i = 0; i < 3; i++) {
                get(url, NULL, &r);
                ck_assert_int_eq(r.status, 200);
                resp_free(&r);
        }
        t = wait_closed(slow, 5.0);
        ck_assert_msg(t >= 0, "the slow client was not dropped");
        t = wait_closed(silent, 5.0);
        ck_assert_msg(t >= 0, "the silent client was not dropped");
        close(slow);
        close(silent);

        /* An idle keep-alive connection is closed too. */
        slow = connect_raw(s.port);
        ck_assert_int_eq(write(slow, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n", 32), 32);
        t = wait_closed(slow, 5.0);
        ck_assert_msg(t >= 0.5, "keep-alive connection closed after %.2fs", t);
        close(slow);
        srv_stop(&s);
}
END_TEST

static int connect_small_window(int port)
{
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        int fd = socket(AF_INET, SOCK_STREAM, 0), small = 8192;

        ck_assert_int_ge(fd, 0);
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        return fd;
}

/* Bytes read from fd until EOF, an error or limit_sec. */
static size_t drain(int fd, double limit_sec)
{
        struct timeval tv = {.tv_sec = 0, .tv_usec = 200000};
        double t0 = now_sec();
        size_t total = 0;
        char buf[65536];

        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        while (now_sec() - t0 < limit_sec) {
                ssize_t n = read(fd, buf, sizeof(buf));

                if (n > 0)
                        total += (size_t)n;
                else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
                        break;
        }
        return total;
}

START_TEST(test_stalled_and_vanishing_readers)
{
        static const char get_huge[] = "GET /huge HTTP/1.1\r\nHost: x\r\n\r\n";
        gc_httpd_opts o = {.idle_timeout_sec = 1};
        struct srv s = {0};
        struct resp r;
        char url[128];
        size_t got;
        int fd;

        srv_start(&s, &o);
        /* A client that stops reading is dropped before it has the whole body. */
        fd = connect_small_window(s.port);
        ck_assert_int_eq(write(fd, get_huge, strlen(get_huge)), (ssize_t)strlen(get_huge));
        usleep(2500000);
        got = drain(fd, 3.0);
        ck_assert_msg(got < (8u << 20), "a stalled reader got %zu bytes", got);
        close(fd);

        /* A client that goes away mid-body: its response is freed (ASan) and others served. */
        fd = connect_small_window(s.port);
        ck_assert_int_eq(write(fd, get_huge, strlen(get_huge)), (ssize_t)strlen(get_huge));
        usleep(100000);
        close(fd);
        snprintf(url, sizeof(url), "%s/huge", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_uint_eq(r.body.len, 8u << 20);
        resp_free(&r);
        srv_stop(&s);
}
END_TEST

START_TEST(test_raw_requests)
{
        static const struct {
                const char *req;
                const char *want_prefix; /* "" when the server may just hang up */
        } cases[] = {
            {"GET /hello\r\n\r\n", "HTTP/1.0 400"}, /* no HTTP version */
            {"GET /hello HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
             ""},
            {"GET /hello HTTP/1.1\r\nHost: a\r\nUpgrade: h2c\r\nConnection: Upgrade, "
             "HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n",
             ""},
            {"BREW /hello HTTP/1.1\r\nHost: a\r\n\r\n", ""},
            {"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", ""},
            {"GET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", "HTTP/1.1 200"},
            /* A deferred answer after which the connection closes (the worker's job was freed
             * before its connection was read from it: ASan's use-after-free). */
            {"GET /deferred HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", "HTTP/1.1 200"},
            {"GET /deferred HTTP/1.0\r\n\r\n", "HTTP/1.0 200"},
        };
        gc_httpd_opts o = {.idle_timeout_sec = 2};
        struct srv s = {0};
        struct resp r;
        char url[128];

        srv_start(&s, &o);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                int fd = connect_raw(s.port);
                char buf[512] = "";
                size_t got = 0;
                struct timeval tv = {.tv_sec = 4};
                ssize_t n;

                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
                ck_assert_int_eq(write(fd, cases[i].req, strlen(cases[i].req)),
                                 (ssize_t)strlen(cases[i].req));
                while (got < sizeof(buf) - 1 &&
                       (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
                        got += (size_t)n;
                buf[got] = '\0';
                close(fd);
                if (cases[i].want_prefix[0])
                        ck_assert_msg(
                            !strncmp(buf, cases[i].want_prefix, strlen(cases[i].want_prefix)),
                            "case %zu: %s", i, buf);
                else
                        ck_assert_msg(strstr(buf, " 200 ") == NULL, "case %zu served: %s", i, buf);
        }
        snprintf(url, sizeof(url), "%s/hello", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        resp_free(&r);
        srv_stop(&s);
}
END_TEST

/* Sends req (len bytes) on a new connection and reads the answer until the server closes. */
static void raw_exchange(int port, const char *req, size_t len, char *buf, size_t buflen,
                         bool *ret_closed)
{
        struct timeval tv = {.tv_sec = 5};
        size_t got = 0, off = 0;
        ssize_t n;
        int fd = connect_raw(port);

        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        while (off < len) {
                n = send(fd, req + off, len - off, MSG_NOSIGNAL);
                if (n <= 0)
                        break;
                off += (size_t)n;
        }
        *ret_closed = false;
        while (got < buflen - 1) {
                n = read(fd, buf + got, buflen - 1 - got);
                if (n == 0)
                        *ret_closed = true;
                if (n <= 0)
                        break;
                got += (size_t)n;
        }
        buf[got] = '\0';
        close(fd);
}

static char *repeat(const char *prefix, char c, size_t n, const char *suffix)
{
        size_t a = strlen(prefix), b = strlen(suffix);
        char *s = malloc(a + n + b + 1);

        ck_assert_ptr_nonnull(s);
        memcpy(s, prefix, a);
        memset(s + a, c, n);
        memcpy(s + a + n, suffix, b + 1);
        return s;
}

/*
 * Each bad head gets its status and the JSON error, then the connection ends: the body or the
 * rest of the head is never read as a next request.
 */
/* prefix, unit n times, suffix. */
static char *repeat_str(const char *prefix, const char *unit, size_t n, const char *suffix)
{
        size_t a = strlen(prefix), u = strlen(unit), b = strlen(suffix);
        char *s = malloc(a + u * n + b + 1);

        ck_assert_ptr_nonnull(s);
        memcpy(s, prefix, a);
        for (size_t i = 0; i < n; i++)
                memcpy(s + a + i * u, unit, u);
        memcpy(s + a + u * n, suffix, b + 1);
        return s;
}

START_TEST(test_bad_heads)
{
        struct {
                char *req;
                const char *status;
                const char *error;
        } cases[] = {
            /* 40 KB of query (many short parameters), and 40 KB in one. */
            {repeat("GET /hello?", 'a', 40000, " HTTP/1.1\r\nHost: a\r\n\r\n"), "414",
             "URL too long"},
            {repeat("GET /hello?a=1&b=", 'b', 40000, " HTTP/1.1\r\nHost: a\r\n\r\n"), "414",
             "URL too long"},
            /* 60 KB in a header lws does not know, and in one it knows. */
            {repeat("GET /hello HTTP/1.1\r\nHost: a\r\nX-Pad: ", 'p', 60000, "\r\n\r\n"), "431",
             "request header fields too large"},
            {repeat("GET /hello HTTP/1.1\r\nHost: a\r\nCookie: ", 'c', 60000, "\r\n\r\n"), "431",
             "request header too large"},
            {strdup("GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: "
                    "chunked\r\n\r\n0\r\n\r\nGET /hello HTTP/1.1\r\nHost: a\r\n\r\n"),
             "400", "Content-Length together with Transfer-Encoding"},
            {strdup("GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: "
                    "6\r\n\r\nhello!"),
             "400", "invalid Content-Length"},
            {strdup("GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n"), "400",
             "invalid Content-Length"},
            {strdup("GET /hello HTTP/1.1\r\nHost: a\x01b\r\n\r\n"), "400",
             "control character in a header"},
            {strdup("GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nGET /"), "400",
             "a request body is not accepted"},
            {strdup("GET /hello HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "5\r\nhello\r\n0\r\n\r\n"),
             "400", "a request body is not accepted"},
            {repeat("POST /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000\r\n\r\n", 'x',
                    100000, ""),
             "405", "method not allowed"},
            /* What lws 4.1 fails without an answer, or with its own HTML 403: looked at first. */
            {repeat_str("GET /hello?", "a=1&", 200, " HTTP/1.1\r\nHost: a\r\n\r\n"), "400",
             "too many query parameters"},
            {repeat_str("GET /hello?", "a=1&", 10000, " HTTP/1.1\r\nHost: a\r\n\r\n"), "400",
             "too many query parameters"},
            {repeat_str("GET /hello HTTP/1.1\r\nHost: a\r\n", "Accept: x\r\n", 100, "\r\n"), "431",
             "too many header lines"},
            {strdup("GET /hel%zzlo HTTP/1.1\r\nHost: a\r\n\r\n"), "400",
             "malformed percent escape"},
            {strdup("GET /hello?a=%4 HTTP/1.1\r\nHost: a\r\n\r\n"), "400",
             "malformed percent escape"},
            {strdup("GET /hello?a=%00 HTTP/1.1\r\nHost: a\r\n\r\n"), "400",
             "control character in a query parameter"},
            {strdup("GET /he%00llo HTTP/1.1\r\nHost: a\r\n\r\n"), "400",
             "control character in the path"},
            {repeat("GET /hello HTTP/1.1\r\nHost: a\r\nX-Pad: ", 'p', 70000, "\r\n\r\n"), "431",
             "request header fields too large"},
            {repeat("GET /hello?a=", 'a', 70000, " HTTP/1.1\r\nHost: a\r\n\r\n"), "414",
             "URL too long"},
            /* No HTTP request line at all: a 400, not lws' 403. */
            {strdup("HELLO WORLD\r\n\r\n"), "400", "not an HTTP/1.1 request"},
            {strdup("BREW /hello HTTP/1.1\r\nHost: a\r\n\r\n"), "400", "not an HTTP/1.1 request"},
            {strdup("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"), "400",
             "not an HTTP/1.1 request"},
        };
        gc_httpd_opts o = {.idle_timeout_sec = 3};
        struct srv s = {0};
        struct resp r;
        char url[128], want[128], *buf = malloc(65536);

        srv_start(&s, &o);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                bool closed;

                raw_exchange(s.port, cases[i].req, strlen(cases[i].req), buf, 65536, &closed);
                /* lws answers a request line cut at the URL limit as HTTP/1.0. */
                snprintf(want, sizeof(want), " %s ", cases[i].status);
                ck_assert_msg(!strncmp(buf, "HTTP/1.", 7) && !strncmp(buf + 8, want, strlen(want)),
                              "case %zu: %.200s", i, buf);
                ck_assert_msg(strcasestr(buf, "content-type: application/json\r\n"), "case %zu: %s",
                              i, buf);
                snprintf(want, sizeof(want), "{\"error\":\"%s", cases[i].error);
                ck_assert_msg(strstr(buf, want), "case %zu: %s", i, buf);
                ck_assert_msg(strcasestr(buf, "connection: close\r\n"), "case %zu: %s", i, buf);
                ck_assert_msg(closed, "case %zu: the connection stayed open", i);
                /* One answer only: nothing after the body was taken as a request. */
                ck_assert_msg(strstr(strstr(buf, "\r\n\r\n") + 4, "\r\n\r\n") == NULL,
                              "case %zu: %s", i, buf);
                free(cases[i].req);
        }
        {
                /* A NUL in any header, and in the request line as sent: a 400 before lws
                 * parses it (it stops at a NUL in a header it does not know, and fails one in
                 * the request line, both without an answer). */
                static const struct {
                        const char *req;
                        size_t len;
                        const char *error;
                } nuls[] = {
                    {"GET /hello HTTP/1.1\r\nHost: a\0b\r\n\r\n", 34,
                     "control character in a header"},
                    {"GET /hello HTTP/1.1\r\nX-A: a\0b\r\n\r\n", 33,
                     "control character in a header"},
                    {"GET /hel\0lo HTTP/1.1\r\nHost: a\r\n\r\n", 33,
                     "control character in the request line"},
                };
                bool closed;

                for (size_t i = 0; i < sizeof(nuls) / sizeof(nuls[0]); i++) {
                        raw_exchange(s.port, nuls[i].req, nuls[i].len, buf, 65536, &closed);
                        ck_assert_msg(!strncmp(buf, "HTTP/1.1 400 ", 13) &&
                                          strstr(buf, nuls[i].error) && closed,
                                      "%zu: %s", i, buf);
                }
        }
        snprintf(url, sizeof(url), "%s/hello", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        resp_free(&r);
        free(buf);
        srv_stop(&s);
}
END_TEST

/* A client connected from a given loopback address (127.0.0.x). */
static int connect_from(int port, const char *from)
{
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        struct sockaddr_in src = {.sin_family = AF_INET};
        int fd = socket(AF_INET, SOCK_STREAM, 0);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(inet_pton(AF_INET, from, &src.sin_addr), 1);
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&src, sizeof(src)), 0);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        return fd;
}

/*
 * The issue's stall: more slow-header clients than the server holds (100 against 64 here, from
 * two addresses) each sent a request line and trickle the rest. Other clients are answered at
 * once all along, the probes included; the slow ones are shed oldest first, and one address
 * never holds more than its cap.
 */
START_TEST(test_slow_clients_do_not_stall)
{
        enum { SLOW = 100 };
        gc_httpd_opts o = {.max_connections = 64, .max_per_address = 40, .header_timeout_sec = 30};
        struct srv s = {0};
        int slow[SLOW];
        char url[128];

        srv_start(&s, &o);
        for (int i = 0; i < SLOW; i++) {
                slow[i] = connect_from(s.port, i % 2 ? "127.0.0.2" : "127.0.0.3");
                ck_assert_int_eq(write(slow[i], "GET /hello HTTP/1.1\r\n", 21), 21);
        }
        snprintf(url, sizeof(url), "%s/hello", s.base);
        /*
         * The bug made a request wait until a slow client's head deadline freed a header table.
         * That deadline is 30 s here and a request gives up after 10 s (request()): every one
         * answered was answered without waiting for it.
         */
        for (int round = 0; round < 20; round++) {
                struct resp r;

                for (int i = 0; i < SLOW; i++)
                        if (write(slow[i], "X-a: b\r\n", 8) < 0)
                                continue; /* shed: closed by the server */
                get(url, NULL, &r);
                ck_assert_msg(r.status == 200, "round %d: %ld (%s)", round, r.status,
                              curl_easy_strerror(r.rc));
                resp_free(&r);
                usleep(100000);
        }
        for (int i = 0; i < SLOW; i++)
                close(slow[i]);
        srv_stop(&s);
}
END_TEST

/* Past its cap an address sheds its own stalest connection; other addresses keep theirs. */
START_TEST(test_per_address_cap)
{
        gc_httpd_opts o = {.max_connections = 16, .max_per_address = 4};
        struct srv s = {0};
        int mine[4], other[4], extra;
        gc_httpd_stats st;

        srv_start(&s, &o);
        for (int i = 0; i < 4; i++) {
                mine[i] = connect_from(s.port, "127.0.0.2");
                other[i] = connect_from(s.port, "127.0.0.3");
        }
        /* Young connections are not shed: a fifth from the same address is closed at once. */
        extra = connect_from(s.port, "127.0.0.2");
        ck_assert_msg(wait_closed(extra, 2.0) >= 0, "a fifth connection was kept");
        close(extra);
        usleep(1200000);
        /* Now the address's stalest goes, and the new one is served. */
        extra = connect_from(s.port, "127.0.0.2");
        ck_assert_int_eq(write(extra, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n", 32), 32);
        {
                char buf[256] = "";
                struct timeval tv = {.tv_sec = 3};

                setsockopt(extra, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
                ck_assert_int_gt(read(extra, buf, sizeof(buf) - 1), 0);
                ck_assert_msg(!strncmp(buf, "HTTP/1.1 200", 12), "%s", buf);
        }
        ck_assert_msg(wait_closed(mine[0], 2.0) >= 0, "the address's stalest is still open");
        for (int i = 0; i < 4; i++) {
                struct timeval tv = {.tv_sec = 0, .tv_usec = 1000};
                char c;

                setsockopt(other[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
                ck_assert_msg(read(other[i], &c, 1) < 0, "another address lost connection %d", i);
        }
        gc_httpd_stop(s.h);
        ck_assert_int_eq(pthread_join(s.th, NULL), 0);
        ck_assert_int_eq(gc_httpd_get_stats(s.h, &st), 0);
        ck_assert_uint_ge(st.refused, 1);
        ck_assert_uint_ge(st.shed, 1);
        ck_assert_uint_eq(st.accepted, 9);
        s.h = gc_httpd_free(s.h);
        for (int i = 0; i < 4; i++) {
                close(mine[i]);
                close(other[i]);
        }
        close(extra);
}
END_TEST

/* ---- TLS ------------------------------------------------------------------------------------ */

static void write_pem(const char *dir, const char *file, X509 *x, EVP_PKEY *key)
{
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, file);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        if (x)
                ck_assert_int_eq(PEM_write_X509(f, x), 1);
        else
                ck_assert_int_eq(PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL), 1);
        ck_assert_int_eq(fclose(f), 0);
}

static void add_ext(X509 *x, int nid, const char *value)
{
        X509V3_CTX ctx;
        X509_EXTENSION *ext;

        X509V3_set_ctx_nodb(&ctx);
        X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
        ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
        ck_assert_ptr_nonnull(ext);
        ck_assert_int_eq(X509_add_ext(x, ext, -1), 1);
        X509_EXTENSION_free(ext);
}

/* A self-signed P-256 certificate for 127.0.0.1, as <name>.crt and <name>.key in dir. */
static void make_cert(const char *dir, const char *name)
{
        static long serial = 1;
        EVP_PKEY *key = EVP_EC_gen("P-256");
        X509 *x = X509_new();
        X509_NAME *subject;
        char file[64];

        ck_assert_ptr_nonnull(key);
        ck_assert_ptr_nonnull(x);
        X509_set_version(x, 2);
        ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
        X509_gmtime_adj(X509_getm_notBefore(x), -60);
        X509_gmtime_adj(X509_getm_notAfter(x), 2 * 86400);
        X509_set_pubkey(x, key);
        subject = X509_get_subject_name(x);
        X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, (const unsigned char *)name, -1, -1,
                                   0);
        X509_set_issuer_name(x, subject);
        add_ext(x, NID_basic_constraints, "critical,CA:TRUE");
        add_ext(x, NID_subject_key_identifier, "hash");
        add_ext(x, NID_subject_alt_name, "IP:127.0.0.1");
        ck_assert_int_gt(X509_sign(x, key, EVP_sha256()), 0);
        snprintf(file, sizeof(file), "%s.crt", name);
        write_pem(dir, file, x, NULL);
        snprintf(file, sizeof(file), "%s.key", name);
        write_pem(dir, file, NULL, key);
        X509_free(x);
        EVP_PKEY_free(key);
}

/* Replaces dst by src the way a Secret volume does: a new file renamed over the old. */
static void install(const char *dir, const char *src, const char *dst)
{
        char from[256], tmp[256], to[256], buf[8192];
        FILE *in, *out;
        size_t n;

        snprintf(from, sizeof(from), "%s/%s", dir, src);
        snprintf(tmp, sizeof(tmp), "%s/%s.tmp", dir, dst);
        snprintf(to, sizeof(to), "%s/%s", dir, dst);
        in = fopen(from, "r");
        out = fopen(tmp, "w");
        ck_assert_ptr_nonnull(in);
        ck_assert_ptr_nonnull(out);
        while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
                ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
        fclose(in);
        ck_assert_int_eq(fclose(out), 0);
        ck_assert_int_eq(rename(tmp, to), 0);
}

static void remove_dir(const char *dir)
{
        static const char *const files[] = {"one.crt", "one.key", "two.crt",
                                            "two.key", "tls.crt", "tls.key"};
        char path[256];

        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
                unlink(path);
        }
        ck_assert_int_eq(rmdir(dir), 0);
}

struct logbuf {
        pthread_mutex_t mu;
        char text[4096];
};

static void log_to_buf(void *ud, int level, const char *msg)
{
        struct logbuf *lb = ud;
        size_t n;

        pthread_mutex_lock(&lb->mu);
        n = strlen(lb->text);
        snprintf(lb->text + n, sizeof(lb->text) - n, "%d %s\n", level, msg);
        pthread_mutex_unlock(&lb->mu);
}

START_TEST(test_tls_and_reload)
{
        char dir[] = "/tmp/test_httpd_XXXXXX", cert[128], key[128], ca1[128], ca2[128];
        char url[128];
        struct logbuf lb = {.mu = PTHREAD_MUTEX_INITIALIZER};
        gc_httpd_opts o = {.tls_check_sec = 1, .log = log_to_buf, .log_ud = &lb};
        struct srv s = {0};
        struct resp r;
        bool switched = false;
        double t0;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        make_cert(dir, "one");
        make_cert(dir, "two");
        install(dir, "one.crt", "tls.crt");
        install(dir, "one.key", "tls.key");
        snprintf(cert, sizeof(cert), "%s/tls.crt", dir);
        snprintf(key, sizeof(key), "%s/tls.key", dir);
        snprintf(ca1, sizeof(ca1), "%s/one.crt", dir);
        snprintf(ca2, sizeof(ca2), "%s/two.crt", dir);
        o.tls_cert_file = cert;
        o.tls_key_file = key;
        srv_start(&s, &o);
        snprintf(url, sizeof(url), "%s/hello", s.base);

        {
                CURL *c = curl_easy_init();

                request(c, url, NULL, ca1, NULL, &r);
                ck_assert_msg(r.rc == CURLE_OK, "%s", curl_easy_strerror(r.rc));
                ck_assert_int_eq(r.status, 200);
                ck_assert_str_eq(r.body.data, "hello /hello");
                resp_free(&r);
                /* Deferred answers over TLS, a small one and one of several pieces, on the
                 * same connection. */
                snprintf(url, sizeof(url), "%s/deferred", s.base);
                request(c, url, NULL, ca1, NULL, &r);
                ck_assert_int_eq(r.status, 200);
                ck_assert_str_eq(r.body.data, "GET /deferred? inm=(none) other=(none) server=no");
                resp_free(&r);
                snprintf(url, sizeof(url), "%s/deferred/big", s.base);
                request(c, url, NULL, ca1, NULL, &r);
                ck_assert_int_eq(r.status, 200);
                ck_assert_uint_eq(r.body.len, 100000);
                ck_assert_int_eq(r.new_connections, 0);
                resp_free(&r);
                snprintf(url, sizeof(url), "%s/hello", s.base);
                /* The certificate of "two" does not verify it. */
                request(c, url, NULL, ca2, NULL, &r);
                ck_assert_int_ne(r.rc, CURLE_OK);
                resp_free(&r);
                curl_easy_cleanup(c);
        }

        /* Half a rotation (new certificate, old key) is refused and "one" is still served. */
        install(dir, "two.crt", "tls.crt");
        usleep(1500000);
        {
                CURL *c = curl_easy_init();

                request(c, url, NULL, ca1, NULL, &r);
                ck_assert_msg(r.rc == CURLE_OK, "%s", curl_easy_strerror(r.rc));
                resp_free(&r);
                curl_easy_cleanup(c);
        }

        install(dir, "two.key", "tls.key");
        t0 = now_sec();
        while (!switched && now_sec() - t0 < 15.0) {
                CURL *c = curl_easy_init();

                request(c, url, NULL, ca2, NULL, &r);
                switched = r.rc == CURLE_OK && r.status == 200;
                resp_free(&r);
                curl_easy_cleanup(c);
                if (!switched)
                        usleep(200000);
        }
        ck_assert_msg(switched, "the new certificate was not picked up");
        {
                CURL *c = curl_easy_init();

                request(c, url, NULL, ca1, NULL, &r);
                ck_assert_int_ne(r.rc, CURLE_OK);
                resp_free(&r);
                curl_easy_cleanup(c);
        }
        srv_stop(&s);
        ck_assert_msg(strstr(lb.text, "1 tls_key_file: ") != NULL, "log: %s", lb.text);
        ck_assert_msg(strstr(lb.text, "2 tls: loaded the new certificate") != NULL, "log: %s",
                      lb.text);
        remove_dir(dir);
}
END_TEST

/* What fd received until the server closed it (EOF or reset), or -1 if it is still open after
 * limit_sec; the time of the close, in seconds since t0 (now_sec()), in *ret_at. */
static ssize_t read_to_close(int fd, char *buf, size_t buflen, double t0, double limit_sec,
                             double *ret_at)
{
        struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
        size_t got = 0;

        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        while (now_sec() - t0 < limit_sec) {
                char scratch[4096];
                ssize_t n = read(fd, got < buflen ? buf + got : scratch,
                                 got < buflen ? buflen - got : sizeof(scratch));

                if (n > 0 && got < buflen)
                        got += (size_t)n;
                if (n == 0 ||
                    (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                        *ret_at = now_sec() - t0;
                        return (ssize_t)got;
                }
        }
        return -1;
}

/*
 * The TLS handshake is bounded like a request head (docs/httpd.md, Limits): a client that sends
 * nothing, or a ClientHello cut short, is dropped header_timeout_sec after it connected; one that
 * finishes the handshake and asks nothing, header_timeout_sec after that; all of them well before
 * idle_timeout_sec. Bytes that are no TLS (garbage, a plain HTTP request) are dropped unanswered.
 * HTTPS clients are answered meanwhile.
 */
START_TEST(test_tls_handshake_deadline)
{
        enum { HEAD_SEC = 3, SLACK_SEC = 10 };
        /* A handshake record announcing 512 bytes, a ClientHello's first 6 of them. */
        static const unsigned char half_hello[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01,
                                                   0x00, 0x01, 0xfc, 0x03, 0x03};
        static const char plain[] = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
        char dir[] = "/tmp/test_httpd_hsXXXXXX", cert[256], key[256], ca[256], url[128];
        char buf[256], junk[64];
        gc_httpd_opts o = {.header_timeout_sec = HEAD_SEC, .idle_timeout_sec = 60};
        struct srv s = {0};
        struct resp r;
        SSL_CTX *ctx;
        SSL *ssl;
        int silent, half, idle, garbage, http;
        double t_silent, t_half, t_idle, at;
        ssize_t n;
        CURL *c;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        make_cert(dir, "one");
        snprintf(cert, sizeof(cert), "%s/one.crt", dir);
        snprintf(key, sizeof(key), "%s/one.key", dir);
        snprintf(ca, sizeof(ca), "%s/one.crt", dir);
        o.tls_cert_file = cert;
        o.tls_key_file = key;
        srv_start(&s, &o);

        t_silent = now_sec();
        silent = connect_raw(s.port);
        t_half = now_sec();
        half = connect_raw(s.port);
        ck_assert_int_eq(write(half, half_hello, sizeof(half_hello)), (ssize_t)sizeof(half_hello));
        /* A whole handshake, then no request. */
        ctx = SSL_CTX_new(TLS_client_method());
        ck_assert_ptr_nonnull(ctx);
        ck_assert_int_eq(SSL_CTX_load_verify_locations(ctx, ca, NULL), 1);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        idle = connect_raw(s.port);
        ssl = SSL_new(ctx);
        SSL_set_fd(ssl, idle);
        ck_assert_int_eq(SSL_connect(ssl), 1);
        t_idle = now_sec();
        garbage = connect_raw(s.port);
        for (size_t i = 0; i < sizeof(junk); i++)
                junk[i] = (char)(0xa5 ^ (i * 37));
        ck_assert_int_eq(write(garbage, junk, sizeof(junk)), (ssize_t)sizeof(junk));
        http = connect_raw(s.port);
        ck_assert_int_eq(write(http, plain, sizeof(plain) - 1), (ssize_t)(sizeof(plain) - 1));

        snprintf(url, sizeof(url), "%s/hello", s.base);
        c = curl_easy_init();
        for (int i = 0; i < 3; i++) {
                request(c, url, NULL, ca, NULL, &r);
                ck_assert_msg(r.rc == CURLE_OK, "%s", curl_easy_strerror(r.rc));
                ck_assert_int_eq(r.status, 200);
                resp_free(&r);
        }
        curl_easy_cleanup(c);

        /* No TLS at all: closed, and nothing that looks like an HTTP answer. */
        n = read_to_close(garbage, buf, sizeof(buf) - 1, now_sec(), SLACK_SEC, &at);
        ck_assert_msg(n >= 0, "garbage instead of a ClientHello: still open");
        n = read_to_close(http, buf, sizeof(buf) - 1, now_sec(), SLACK_SEC, &at);
        ck_assert_msg(n >= 0, "plain HTTP on the TLS port: still open");
        buf[n] = '\0';
        ck_assert_msg(strstr(buf, "HTTP/") == NULL, "plain HTTP answered: %s", buf);
        /* The handshakes: at their deadline, not before, and long before the idle timeout. */
        ck_assert_int_ge(
            read_to_close(silent, buf, sizeof(buf), t_silent, HEAD_SEC + SLACK_SEC, &at), 0);
        ck_assert_msg(at >= HEAD_SEC - 0.5, "silent client closed after %.2f s", at);
        ck_assert_int_ge(read_to_close(half, buf, sizeof(buf), t_half, HEAD_SEC + SLACK_SEC, &at),
                         0);
        ck_assert_msg(at >= HEAD_SEC - 0.5, "half a ClientHello closed after %.2f s", at);
        ck_assert_int_ge(read_to_close(idle, buf, sizeof(buf), t_idle, HEAD_SEC + SLACK_SEC, &at),
                         0);
        ck_assert_msg(at >= HEAD_SEC - 0.5, "a handshake without a request closed after %.2f s",
                      at);

        SSL_free(ssl);
        SSL_CTX_free(ctx);
        close(silent);
        close(half);
        close(idle);
        close(garbage);
        close(http);
        srv_stop(&s);
        remove_dir(dir);
}
END_TEST

/* ---- the guard and parked requests ------------------------------------------------------- */

/*
 * A fake authority standing in for the Kubernetes API (pkg/authz does the real one): the token
 * "ok" may read, "no" may not, "wait" is undecided until release() (then allowed), anything
 * else is unknown. It counts its calls, as a guard would be asked again after each wake.
 */
struct fake_authority {
        pthread_mutex_t mu;
        bool released;
        int calls, pending;
        bool fail; /* answer -EIO */
        bool deny_with_200;
};

static int fake_guard(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        struct fake_authority *fa = ud;
        const char *auth = gc_httpd_header(req, "Authorization");
        int r;

        pthread_mutex_lock(&fa->mu);
        fa->calls++;
        if (fa->fail) {
                r = -EIO;
        } else if (fa->deny_with_200) {
                r = GC_HTTPD_DENY;
        } else if (!auth) {
                gc_httpd_error(res, 401, "missing bearer token");
                gc_httpd_add_header(res, "WWW-Authenticate", "Bearer");
                r = GC_HTTPD_DENY;
        } else if (!strcmp(auth, "Bearer ok")) {
                r = GC_HTTPD_ALLOW;
        } else if (!strcmp(auth, "Bearer no")) {
                gc_httpd_error(res, 403, "forbidden");
                r = GC_HTTPD_DENY;
        } else if (!strcmp(auth, "Bearer wait")) {
                r = fa->released ? GC_HTTPD_ALLOW : GC_HTTPD_PENDING;
                if (r == GC_HTTPD_PENDING)
                        fa->pending++;
        } else {
                gc_httpd_error(res, 401, "unknown token");
                r = GC_HTTPD_DENY;
        }
        pthread_mutex_unlock(&fa->mu);
        return r;
}

static int fa_calls(struct fake_authority *fa)
{
        int n;

        pthread_mutex_lock(&fa->mu);
        n = fa->calls;
        pthread_mutex_unlock(&fa->mu);
        return n;
}

static void fa_release(struct fake_authority *fa, gc_httpd *h)
{
        pthread_mutex_lock(&fa->mu);
        fa->released = true;
        pthread_mutex_unlock(&fa->mu);
        gc_httpd_wake(h);
}

static void srv_start_guarded(struct srv *s, gc_httpd_opts *o, struct fake_authority *fa)
{
        char err[256] = "";

        if (!o->listen)
                o->listen = "127.0.0.1:0";
        s->h = gc_httpd_new(o, err, sizeof(err));
        ck_assert_msg(s->h != NULL, "gc_httpd_new: %s", err);
        add_routes(s->h);
        ck_assert_int_eq(gc_httpd_route(s->h, "/healthz", GC_HTTPD_OPEN, h_hello, NULL), 0);
        ck_assert_int_eq(gc_httpd_route(s->h, "/healthz", GC_HTTPD_OPEN, h_hello, NULL), -EEXIST);
        ck_assert_int_eq(gc_httpd_set_guard(s->h, fake_guard, fa), 0);
        s->port = gc_httpd_port(s->h);
        snprintf(s->base, sizeof(s->base), "%s://127.0.0.1:%d", o->tls_cert_file ? "https" : "http",
                 s->port);
        ck_assert_int_eq(pthread_create(&s->th, NULL, run_thread, s), 0);
}

/* One GET with an Authorization header (NULL: none), in a fresh connection. */
static void get_auth(const char *url, const char *auth, const char *cainfo, struct resp *r)
{
        struct curl_slist *hdrs = NULL;
        char line[128];
        CURL *c = curl_easy_init();

        ck_assert_ptr_nonnull(c);
        if (auth) {
                snprintf(line, sizeof(line), "Authorization: %s", auth);
                hdrs = curl_slist_append(NULL, line);
        }
        request(c, url, NULL, cainfo, hdrs, r);
        curl_slist_free_all(hdrs);
        curl_easy_cleanup(c);
}

/* A request in a thread of its own, to be parked while the test goes on. */
struct bg_get {
        pthread_t th;
        char url[160];
        const char *auth;
        const char *cainfo;
        struct resp r;
        double took_sec;
        atomic_bool done; /* r is in */
};

static void *bg_get_main(void *p)
{
        struct bg_get *g = p;
        double t0 = now_sec();

        get_auth(g->url, g->auth, g->cainfo, &g->r);
        g->took_sec = now_sec() - t0;
        atomic_store(&g->done, true);
        return NULL;
}

static void bg_start(struct bg_get *g, const char *base, const char *path, const char *auth,
                     const char *cainfo)
{
        snprintf(g->url, sizeof(g->url), "%s%s", base, path);
        g->auth = auth;
        g->cainfo = cainfo;
        atomic_store(&g->done, false);
        ck_assert_int_eq(pthread_create(&g->th, NULL, bg_get_main, g), 0);
}

static void bg_join(struct bg_get *g)
{
        ck_assert_int_eq(pthread_join(g->th, NULL), 0);
}

static int fa_pending(struct fake_authority *fa)
{
        int n;

        pthread_mutex_lock(&fa->mu);
        n = fa->pending;
        pthread_mutex_unlock(&fa->mu);
        return n;
}

/* Waits until the fake has answered "pending" n times in all. */
static void wait_pending(struct fake_authority *fa, int n)
{
        double t0 = now_sec();
        int got = 0;

        while (now_sec() - t0 < 5.0) {
                pthread_mutex_lock(&fa->mu);
                got = fa->pending;
                pthread_mutex_unlock(&fa->mu);
                if (got >= n)
                        return;
                usleep(10000);
        }
        ck_abort_msg("%d requests parked after 5 s, wanted %d", got, n);
}

START_TEST(test_guard_decisions)
{
        struct fake_authority fa = {.mu = PTHREAD_MUTEX_INITIALIZER};
        gc_httpd_opts o = {0};
        struct srv s = {0};
        struct resp r;
        char url[128];
        int calls;

        srv_start_guarded(&s, &o, &fa);
        snprintf(url, sizeof(url), "%s/hello", s.base);

        get_auth(url, NULL, NULL, &r);
        ck_assert_int_eq(r.status, 401);
        ck_assert(has_header(&r, "www-authenticate: Bearer\r\n"));
        ck_assert_str_eq(r.body.data, "{\"error\":\"missing bearer token\",\"status\":401}");
        resp_free(&r);

        get_auth(url, "Bearer no", NULL, &r);
        ck_assert_int_eq(r.status, 403);
        ck_assert_str_eq(r.body.data, "{\"error\":\"forbidden\",\"status\":403}");
        resp_free(&r);

        get_auth(url, "Bearer garbage", NULL, &r);
        ck_assert_int_eq(r.status, 401);
        resp_free(&r);

        get_auth(url, "Bearer ok", NULL, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.body.data, "hello /hello");
        resp_free(&r);

        /* Open routes never ask the guard; unknown paths and wrong methods neither. */
        calls = fa_calls(&fa);
        snprintf(url, sizeof(url), "%s/healthz", s.base);
        get_auth(url, NULL, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        resp_free(&r);
        snprintf(url, sizeof(url), "%s/nowhere", s.base);
        get_auth(url, NULL, NULL, &r);
        ck_assert_int_eq(r.status, 404);
        resp_free(&r);
        ck_assert_int_eq(fa_calls(&fa), calls);

        /* A failing guard is a 500; a "denial" that says 200 is one too, never the handler. */
        snprintf(url, sizeof(url), "%s/hello", s.base);
        pthread_mutex_lock(&fa.mu);
        fa.fail = true;
        pthread_mutex_unlock(&fa.mu);
        get_auth(url, "Bearer ok", NULL, &r);
        ck_assert_int_eq(r.status, 500);
        resp_free(&r);
        pthread_mutex_lock(&fa.mu);
        fa.fail = false;
        fa.deny_with_200 = true;
        pthread_mutex_unlock(&fa.mu);
        get_auth(url, "Bearer ok", NULL, &r);
        ck_assert_int_eq(r.status, 500);
        ck_assert(strstr(r.body.data, "hello") == NULL);
        resp_free(&r);
        srv_stop(&s);
}
END_TEST

START_TEST(test_guard_park_and_wake)
{
        struct fake_authority fa = {.mu = PTHREAD_MUTEX_INITIALIZER};
        gc_httpd_opts o = {0};
        struct srv s = {0};
        struct bg_get g[3];
        struct resp r;
        char url[128];
        int calls;

        memset(g, 0, sizeof(g));
        srv_start_guarded(&s, &o, &fa);
        bg_start(&g[0], s.base, "/hello", "Bearer wait", NULL);
        bg_start(&g[1], s.base, "/api/v1/x?a=1", "Bearer wait", NULL);
        wait_pending(&fa, 2);

        /* The server thread is free meanwhile: other requests are answered at once. */
        snprintf(url, sizeof(url), "%s/healthz", s.base);
        get_auth(url, NULL, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        resp_free(&r);
        snprintf(url, sizeof(url), "%s/hello", s.base);
        get_auth(url, "Bearer ok", NULL, &r);
        ck_assert_int_eq(r.status, 200);
        resp_free(&r);

        /* A wake without a decision re-asks the guard and parks them again. */
        calls = fa_calls(&fa);
        gc_httpd_wake(s.h);
        wait_pending(&fa, 4);
        ck_assert_int_ge(fa_calls(&fa), calls + 2);

        /* One that gives up while parked leaves nothing behind. */
        bg_start(&g[2], s.base, "/hello", "Bearer wait", NULL);
        wait_pending(&fa, 5);

        fa_release(&fa, s.h);
        bg_join(&g[0]);
        bg_join(&g[1]);
        bg_join(&g[2]);
        ck_assert_int_eq(g[0].r.status, 200);
        ck_assert_str_eq(g[0].r.body.data, "hello /hello");
        ck_assert_int_eq(g[1].r.status, 200);
        ck_assert_str_eq(g[1].r.body.data, "v1 /api/v1/x");
        ck_assert_int_eq(g[2].r.status, 200);
        for (int i = 0; i < 3; i++)
                resp_free(&g[i].r);
        srv_stop(&s);
}
END_TEST

START_TEST(test_guard_park_limits)
{
        struct fake_authority fa = {.mu = PTHREAD_MUTEX_INITIALIZER};
        gc_httpd_opts o = {.max_parked = 2, .park_timeout_sec = 3};
        struct srv s = {0};
        struct bg_get g[2];
        struct resp r;
        char url[128];
        int fd, n;

        memset(g, 0, sizeof(g));
        srv_start_guarded(&s, &o, &fa);
        bg_start(&g[0], s.base, "/hello", "Bearer wait", NULL);
        bg_start(&g[1], s.base, "/hello", "Bearer wait", NULL);
        wait_pending(&fa, 2);

        /* A third is refused at once (503 with Retry-After): while the two are still parked, not
         * after a place came free. */
        snprintf(url, sizeof(url), "%s/hello", s.base);
        get_auth(url, "Bearer wait", NULL, &r);
        ck_assert_int_eq(r.status, 503);
        ck_assert(has_header(&r, "retry-after: 1\r\n"));
        ck_assert(strstr(r.body.data, "\"status\":503") != NULL);
        ck_assert_msg(!atomic_load(&g[0].done) && !atomic_load(&g[1].done),
                      "a parked request was answered before the third was refused");
        resp_free(&r);

        /* Never decided: 504 after park_timeout_sec, however many wakes came in between. */
        gc_httpd_wake(s.h);
        bg_join(&g[0]);
        bg_join(&g[1]);
        for (int i = 0; i < 2; i++) {
                ck_assert_int_eq(g[i].r.status, 504);
                ck_assert_str_eq(g[i].r.body.data,
                                 "{\"error\":\"authorization timed out\",\"status\":504}");
                /* At the deadline, not before: the 504 is the park timeout's. */
                ck_assert_msg(g[i].took_sec >= o.park_timeout_sec - 0.1, "took %.2f s",
                              g[i].took_sec);
                resp_free(&g[i].r);
        }

        /* A client that hangs up while parked frees its place. */
        n = fa_pending(&fa);
        fd = connect_raw(s.port);
        {
                static const char req[] =
                    "GET /hello HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wait\r\n\r\n";

                ck_assert_int_eq(write(fd, req, sizeof(req) - 1), (ssize_t)(sizeof(req) - 1));
        }
        wait_pending(&fa, n + 1);
        close(fd);
        usleep(200000);
        bg_start(&g[0], s.base, "/hello", "Bearer wait", NULL);
        bg_start(&g[1], s.base, "/hello", "Bearer wait", NULL);
        wait_pending(&fa, n + 3);
        fa_release(&fa, s.h);
        bg_join(&g[0]);
        bg_join(&g[1]);
        ck_assert_int_eq(g[0].r.status, 200);
        ck_assert_int_eq(g[1].r.status, 200);
        resp_free(&g[0].r);
        resp_free(&g[1].r);
        srv_stop(&s);
}
END_TEST

START_TEST(test_pipelined)
{
        struct fake_authority fa = {.mu = PTHREAD_MUTEX_INITIALIZER};
        gc_httpd_opts o = {.park_timeout_sec = 1};
        struct srv s = {0};
        static const char parked[] =
            "GET /hello HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wait\r\n\r\n"
            "GET /api/v1/two HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wait\r\n\r\n";
        static const char busy[] =
            "GET /big HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ok\r\n\r\n"
            "GET /hello HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ok\r\n\r\n";
        struct resp r;
        char url[128], buf[256];
        double t;
        int fd;

        /*
         * libwebsockets 4.1 does not hold a pipelined request back while the previous one is
         * answered later: the connection is closed (never two answers interleaved), within the
         * park timeout and its backstop, and the server goes on serving.
         */
        srv_start_guarded(&s, &o, &fa);
        fd = connect_raw(s.port);
        ck_assert_int_eq(write(fd, parked, sizeof(parked) - 1), (ssize_t)(sizeof(parked) - 1));
        wait_pending(&fa, 1);
        t = wait_closed(fd, 15.0); /* the park timeout and its 5 s backstop, and slack */
        ck_assert_msg(t >= 0, "still open after 15 s");
        close(fd);

        fd = connect_raw(s.port);
        ck_assert_int_eq(write(fd, busy, sizeof(busy) - 1), (ssize_t)(sizeof(busy) - 1));
        {
                struct timeval tv = {.tv_sec = 5};
                ssize_t n;

                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
                n = read(fd, buf, sizeof(buf) - 1);
                ck_assert_int_gt(n, 0);
                buf[n] = '\0';
                ck_assert_msg(strncmp(buf, "HTTP/1.1 200", 12) == 0, "%s", buf);
        }
        t = wait_closed(fd, 15.0); /* the park timeout and its 5 s backstop, and slack */
        ck_assert_msg(t >= 0, "still open after 15 s");
        close(fd);

        snprintf(url, sizeof(url), "%s/hello", s.base);
        get_auth(url, "Bearer ok", NULL, &r);
        ck_assert_int_eq(r.status, 200);
        resp_free(&r);
        srv_stop(&s);
}
END_TEST

/* ---- heads looked at as sent ----------------------------------------------------------------- */

static const struct {
        const char *head;
        int want; /* GC_HTTPD__HEAD_MORE, _PASS or a status */
        size_t len;
        const char *msg;
} head_cases[] = {
    {"GET / HTTP/1.1\r\nHost: a\r\n\r\n", GC_HTTPD__HEAD_PASS, 27, NULL},
    {"GET / HTTP/1.1\r\n\r\nGET /next", GC_HTTPD__HEAD_PASS, 18, NULL},
    {"GET / HTTP/1.1\n\n", GC_HTTPD__HEAD_PASS, 16, NULL},
    {"GET /a?x=%41&y=%7e+z HTTP/1.1\r\nX-T: a\tb\r\n\r\n", GC_HTTPD__HEAD_PASS, 43, NULL},
    {"GET /a HTTP/1.1\r\nHost: a\r\n", GC_HTTPD__HEAD_MORE, 0, NULL},
    {"GET /a HTT", GC_HTTPD__HEAD_MORE, 0, NULL},
    {"GE", GC_HTTPD__HEAD_MORE, 0, NULL},
    {"HELLO WORLD\r\n\r\n", GC_HTTPD__HEAD_PASS, 15, NULL},
    {"\x16\x03\x01", GC_HTTPD__HEAD_PASS, 0, NULL},
    {"get / HTTP/1.1\r\n\r\n", GC_HTTPD__HEAD_PASS, 0, NULL},
    {"GET /a\x01 HTTP/1.1\r\n\r\n", 400, 0, "control character in the request line"},
    {"GET /a\x7f", 400, 0, "control character in the request line"},
    {"GET /a\tb HTTP/1.1\r\n\r\n", 400, 0, "control character in the request line"},
    {"GET /a%4 HTTP/1.1\r\n\r\n", 400, 0, "malformed percent escape"},
    {"GET /a% HTTP/1.1\r\n\r\n", 400, 0, "malformed percent escape"},
    {"GET /a?b=%g1 HTTP/1.1\r\n\r\n", 400, 0, "malformed percent escape"},
    {"GET /a%00 HTTP/1.1\r\n\r\n", 400, 0, "control character in the path"},
    {"GET /a?b=%00 HTTP/1.1\r\n\r\n", 400, 0, "control character in a query parameter"},
    {"GET /a HTTP/1.1\r\nX: a\x01b\r\n\r\n", 400, 0, "control character in a header"},
    {"GET /a HTTP/1.1\r\nX: a\x01", 400, 0, "control character in a header"},
    {"GET /a HTTP/1.1\r\nX: a\rb\r\n\r\n", 400, 0, "control character in a header"},
};

/* The head looked at before libwebsockets parses it: one case a row. */
START_TEST(test_head_check)
{
        const char *msg = NULL;
        size_t len = 99, n = strlen(head_cases[_i].head);
        int r = gc_httpd__head_check(head_cases[_i].head, n, 1000, &len, &msg);

        ck_assert_msg(r == head_cases[_i].want, "%zu: %d", (size_t)_i, r);
        if (r == GC_HTTPD__HEAD_PASS)
                ck_assert_uint_eq(len, head_cases[_i].len);
        if (head_cases[_i].msg)
                ck_assert_str_eq(msg, head_cases[_i].msg);
}
END_TEST

/* The limits: parameters, header lines, the whole head and the request line. */
/*
 * lws leaves a request unanswered when a header name is a proper prefix of one it knows ("A:",
 * "Ho:", "Content:"). Every header name of lws' own table and every prefix of it: the prefixes
 * are refused with a 400 by the head check, the whole names pass; and live, each is answered
 * (200 or 400) within the read timeout instead of hanging.
 */
static size_t lws_header_names(char names[][64], size_t max)
{
        size_t n = 0;

        for (int t = 0; t < WSI_TOKEN_COUNT && n < max; t++) {
                const char *s = (const char *)lws_token_to_string((enum lws_token_indexes)t);
                size_t sl = s ? strlen(s) : 0;

                if (sl < 2 || sl >= 64 || s[sl - 1] != ':')
                        continue;
                memcpy(names[n], s, sl - 1);
                names[n++][sl - 1] = '\0';
        }
        return n;
}

START_TEST(test_head_check_header_name_prefixes)
{
        static char names[WSI_TOKEN_COUNT][64];
        size_t n = lws_header_names(names, WSI_TOKEN_COUNT), checked = 0;

        ck_assert_uint_gt(n, 30);
        for (size_t i = 0; i < n; i++) {
                size_t len = strlen(names[i]);

                for (size_t k = 1; k <= len; k++) {
                        char head[256];
                        const char *msg = NULL;
                        size_t hl;
                        int r;

                        snprintf(head, sizeof(head), "GET / HTTP/1.1\r\nHost: a\r\n%.*s: v\r\n\r\n",
                                 (int)k, names[i]);
                        r = gc_httpd__head_check(head, strlen(head), 4096, &hl, &msg);
                        /* Whole names pass; a prefix passes only when it is itself a name. */
                        if (k == len || !gc_httpd__lws_stalls(names[i], k))
                                ck_assert_msg(r == GC_HTTPD__HEAD_PASS, "%.*s: %d", (int)k,
                                              names[i], r);
                        else
                                ck_assert_msg(r == 400 && strstr(msg, "header name"), "%.*s: %d",
                                              (int)k, names[i], r);
                        checked++;
                }
        }
        ck_assert(gc_httpd__lws_stalls("A", 1) && gc_httpd__lws_stalls("ho", 2) &&
                  gc_httpd__lws_stalls("Content", 7));
        ck_assert(!gc_httpd__lws_stalls("Accept", 6) && !gc_httpd__lws_stalls("X-Foo", 5) &&
                  !gc_httpd__lws_stalls("Acceptx", 7));
        ck_assert_uint_gt(checked, 300);
}
END_TEST

START_TEST(test_header_name_prefixes_answered)
{
        static char names[WSI_TOKEN_COUNT][64];
        size_t n = lws_header_names(names, WSI_TOKEN_COUNT);
        gc_httpd_opts o = {.idle_timeout_sec = 2};
        struct srv s = {0};

        srv_start(&s, &o);
        for (size_t i = 0; i < n; i++) {
                size_t len = strlen(names[i]);

                for (size_t k = 1; k <= len; k++) {
                        char req[256], buf[1024];
                        bool closed;

                        snprintf(req, sizeof(req),
                                 "GET /hello HTTP/1.1\r\nHost: a\r\n%.*s: v\r\nConnection: "
                                 "close\r\n\r\n",
                                 (int)k, names[i]);
                        raw_exchange(s.port, req, strlen(req), buf, sizeof(buf), &closed);
                        /* Answered, whatever the status: lws itself refuses a few (an
                           "Upgrade: v" with its HTML 403, docs/httpd.md). */
                        ck_assert_msg(!strncmp(buf, "HTTP/1.", 7), "header %.*s: no answer (%s)",
                                      (int)k, names[i], buf);
                }
        }
        srv_stop(&s);
}
END_TEST

START_TEST(test_head_check_limits)
{
        const char *msg = NULL;
        size_t len;
        char *p;

        p = repeat_str("GET /a?", "x=1&", 64, " HTTP/1.1\r\n\r\n");
        ck_assert_int_eq(gc_httpd__head_check(p, strlen(p), 1000, &len, &msg), GC_HTTPD__HEAD_PASS);
        free(p);
        p = repeat_str("GET /a?", "x=1&", 65, " HTTP/1.1\r\n\r\n");
        ck_assert_int_eq(gc_httpd__head_check(p, strlen(p), 1000, &len, &msg), 400);
        ck_assert_str_eq(msg, "too many query parameters");
        free(p);
        /* 64 parameters and 24 header lines are 88 pieces; one more is too many. */
        p = repeat_str("GET /a?", "x=1&", 64, " HTTP/1.1\r\n");
        {
                char *q = repeat_str(p, "Xa: b\r\n", 24, "\r\n");

                ck_assert_int_eq(gc_httpd__head_check(q, strlen(q), 10000, &len, &msg),
                                 GC_HTTPD__HEAD_PASS);
                free(q);
                q = repeat_str(p, "Xa: b\r\n", 25, "\r\n");
                ck_assert_int_eq(gc_httpd__head_check(q, strlen(q), 10000, &len, &msg), 431);
                ck_assert_str_eq(msg, "too many header lines");
                free(q);
        }
        free(p);
        /* Not whole at the limit: a request line is a 414, a head a 431; whole over it, a 431. */
        p = repeat("GET /", 'a', 2000, "");
        ck_assert_int_eq(gc_httpd__head_check(p, 999, 1000, &len, &msg), GC_HTTPD__HEAD_MORE);
        ck_assert_int_eq(gc_httpd__head_check(p, 1000, 1000, &len, &msg), 414);
        free(p);
        p = repeat("GET / HTTP/1.1\r\nXq: ", 'a', 2000, "\r\n\r\n");
        ck_assert_int_eq(gc_httpd__head_check(p, 1000, 1000, &len, &msg), 431);
        ck_assert_int_eq(gc_httpd__head_check(p, strlen(p), 1000, &len, &msg), 431);
        ck_assert_str_eq(msg, "request header fields too large");
        ck_assert_int_eq(gc_httpd__head_check(p, strlen(p), 3000, &len, &msg), GC_HTTPD__HEAD_PASS);
        free(p);
}
END_TEST

/* Reads from fd until want is in buf (or 5 s); what came. */
static void read_until(int fd, char *buf, size_t buflen, const char *want)
{
        size_t got = 0;
        double t0 = now_sec();

        buf[0] = '\0';
        while (got < buflen - 1 && !strstr(buf, want) && now_sec() - t0 < 5.0) {
                ssize_t n = read(fd, buf + got, buflen - 1 - got);

                if (n <= 0)
                        break;
                got += (size_t)n;
                buf[got] = '\0';
        }
}

/* A head sent in pieces is answered when whole; a bad one on a kept-alive connection, or one
 * too large sent in pieces, gets its JSON error. */
START_TEST(test_heads_in_pieces)
{
        gc_httpd_opts o = {0};
        struct srv s = {0};
        struct timeval tv = {.tv_sec = 5};
        char buf[4096];
        int fd;

        srv_start(&s, &o);
        fd = connect_raw(s.port);
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        ck_assert_int_eq(write(fd, "GET /hel", 8), 8);
        usleep(100000);
        ck_assert_int_eq(write(fd, "lo HTTP/1.1\r\nHo", 15), 15);
        usleep(100000);
        ck_assert_int_eq(write(fd, "st: a\r\n\r\n", 9), 9);
        read_until(fd, buf, sizeof(buf), "hello /hello");
        ck_assert_msg(!strncmp(buf, "HTTP/1.1 200 ", 13) && strstr(buf, "hello /hello"), "%s", buf);
        /* The next head on the same connection is looked at too. */
        ck_assert_int_eq(write(fd, "GET /he\0llo HTTP/1.1\r\n\r\n", 24), 24);
        read_until(fd, buf, sizeof(buf), "}");
        ck_assert_msg(!strncmp(buf, "HTTP/1.1 400 ", 13) &&
                          strstr(buf, "{\"error\":\"control character in the request line\""),
                      "%s", buf);
        ck_assert(wait_closed(fd, 3.0) >= 0);
        close(fd);

        /* 70 KB of head in ten pieces: a 431 once the table's worth is in. */
        fd = connect_raw(s.port);
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        {
                char *p = repeat("GET /hello HTTP/1.1\r\nX-Pad: ", 'p', 70000, "\r\n\r\n");
                size_t len = strlen(p), step = len / 10 + 1;

                for (size_t off = 0; off < len; off += step) {
                        size_t k = len - off < step ? len - off : step;

                        if (send(fd, p + off, k, MSG_NOSIGNAL) != (ssize_t)k)
                                break;
                        usleep(20000);
                }
                free(p);
        }
        read_until(fd, buf, sizeof(buf), "}");
        ck_assert_msg(!strncmp(buf, "HTTP/1.1 431 ", 13) &&
                          strstr(buf, "request header fields too large"),
                      "%s", buf);
        close(fd);
        srv_stop(&s);
}
END_TEST

/* ---- deferred answers ------------------------------------------------------------------------ */

struct bg_plain {
        pthread_t th;
        char url[160];
        struct resp r;
};

static void *bg_plain_main(void *p)
{
        struct bg_plain *g = p;

        get(g->url, NULL, &g->r);
        return NULL;
}

static void bg_plain_start(struct bg_plain *g, const struct srv *s, const char *path)
{
        snprintf(g->url, sizeof(g->url), "%s%s", s->base, path);
        ck_assert_int_eq(pthread_create(&g->th, NULL, bg_plain_main, g), 0);
}

/*
 * A deferred answer is computed on a worker while the serving thread answers others; it sees the
 * request and the headers looked up before deferring; a full queue is a 503, a failure a 500, a
 * client that hangs up meanwhile costs nothing.
 */
START_TEST(test_deferred)
{
        gc_httpd_opts o = {.workers = 1, .max_queued = 1};
        struct curl_slist *hdrs = NULL;
        struct srv s = {0};
        struct bg_plain g[2];
        struct resp r;
        char url[160];
        double t0;
        CURL *c;
        int fd;

        memset(g, 0, sizeof(g));
        srv_start(&s, &o);

        /* Open gate: the answer, with the header looked up on the serving thread only. */
        hdrs = curl_slist_append(hdrs, "If-None-Match: \"abc\"");
        hdrs = curl_slist_append(hdrs, "X-Other: hidden");
        snprintf(url, sizeof(url), "%s/deferred?b=2&a=x%%20y", s.base);
        c = curl_easy_init();
        request(c, url, NULL, NULL, hdrs, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.body.data,
                         "GET /deferred?b=2&a=x%20y inm=\"abc\" other=(none) server=no");
        ck_assert(has_header(&r, "x-before: kept\r\n"));
        resp_free(&r);
        /* HEAD: the length of the body the worker made, no body. */
        request(c, url, "HEAD", NULL, hdrs, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_int_eq(r.content_length, 59);
        ck_assert_uint_eq(r.body.len, 0);
        resp_free(&r);
        curl_easy_cleanup(c);
        curl_slist_free_all(hdrs);
        snprintf(url, sizeof(url), "%s/deferred/big", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_uint_eq(r.body.len, 100000);
        resp_free(&r);
        snprintf(url, sizeof(url), "%s/deferred/fail", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 500);
        ck_assert_str_eq(r.body.data, "{\"error\":\"internal error\",\"status\":500}");
        resp_free(&r);

        /* Gate closed: one computing, one queued; a third is a 503, a cheap answer is at once:
         * both while the gate stays closed, so neither waited for a computation. */
        gate_set(true);
        bg_plain_start(&g[0], &s, "/deferred/big");
        gate_wait_for(1);
        bg_plain_start(&g[1], &s, "/deferred");
        usleep(200000);
        snprintf(url, sizeof(url), "%s/deferred", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 503);
        ck_assert(has_header(&r, "retry-after: 1\r\n"));
        ck_assert_str_eq(r.body.data,
                         "{\"error\":\"too many requests being computed\",\"status\":503}");
        resp_free(&r);
        snprintf(url, sizeof(url), "%s/hello", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.body.data, "hello /hello");
        resp_free(&r);

        /* A client that hangs up while its answer is computed. */
        gate_set(false);
        ck_assert_int_eq(pthread_join(g[0].th, NULL), 0);
        ck_assert_int_eq(pthread_join(g[1].th, NULL), 0);
        ck_assert_int_eq(g[0].r.status, 200);
        ck_assert_uint_eq(g[0].r.body.len, 100000);
        ck_assert_int_eq(g[1].r.status, 200);
        resp_free(&g[0].r);
        resp_free(&g[1].r);
        gate_set(true);
        fd = connect_raw(s.port);
        {
                static const char req[] = "GET /deferred/big HTTP/1.1\r\nHost: x\r\n\r\n";

                ck_assert_int_eq(write(fd, req, sizeof(req) - 1), (ssize_t)(sizeof(req) - 1));
        }
        gate_wait_for(1);
        close(fd);
        usleep(100000);
        gate_set(false);
        snprintf(url, sizeof(url), "%s/deferred", s.base);
        get(url, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        resp_free(&r);

        /* Pipelined behind a deferred answer: held until it is written, then served in turn. */
        fd = connect_raw(s.port);
        {
                static const char req[] = "GET /deferred HTTP/1.1\r\nHost: x\r\n\r\n"
                                          "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
                struct timeval tv = {.tv_sec = 0, .tv_usec = 300000};
                char buf[2048] = "";
                size_t got = 0;
                ssize_t n;
                const char *a, *b;

                ck_assert_int_eq(write(fd, req, sizeof(req) - 1), (ssize_t)(sizeof(req) - 1));
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
                t0 = now_sec();
                while (got < sizeof(buf) - 1 && now_sec() - t0 < 10.0 &&
                       !strstr(buf, "hello /hello")) {
                        n = read(fd, buf + got, sizeof(buf) - 1 - got);
                        if (n == 0)
                                break;
                        if (n > 0)
                                got += (size_t)n;
                        buf[got] = '\0';
                }
                a = strstr(buf, "GET /deferred? inm=(none)");
                b = strstr(buf, "hello /hello");
                ck_assert_msg(a && b && a < b && !strncmp(buf, "HTTP/1.1 200", 12), "%s", buf);
        }
        close(fd);

        /* Stopped with a request queued behind a running one: freed, nothing leaks. */
        gate_set(true);
        bg_plain_start(&g[0], &s, "/deferred/big");
        gate_wait_for(1);
        bg_plain_start(&g[1], &s, "/deferred");
        usleep(200000);
        gate_set(false);
        srv_stop(&s);
        ck_assert_int_eq(pthread_join(g[0].th, NULL), 0);
        ck_assert_int_eq(pthread_join(g[1].th, NULL), 0);
        resp_free(&g[0].r);
        resp_free(&g[1].r);
}
END_TEST

/* ---- stopping -------------------------------------------------------------------------------- */

static volatile sig_atomic_t stop_flag;

static void *run_with_flag(void *p)
{
        struct srv *s = p;

        s->run_result = gc_httpd_run(s->h, &stop_flag);
        return NULL;
}

START_TEST(test_stop_flag)
{
        gc_httpd_opts o = {.listen = "127.0.0.1:0"};
        char err[256];
        struct srv s = {0};
        struct timespec until;

        s.h = gc_httpd_new(&o, err, sizeof(err));
        ck_assert_ptr_nonnull(s.h);
        stop_flag = 0;
        ck_assert_int_eq(pthread_create(&s.th, NULL, run_with_flag, &s), 0);
        usleep(100000);
        /* Nothing else happens to wake the loop: only its 200 ms tick sees the flag. */
        stop_flag = 1;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 10;
        ck_assert_msg(pthread_timedjoin_np(s.th, NULL, &until) == 0,
                      "the loop did not see the stop flag");
        ck_assert_int_eq(s.run_result, 0);
        s.h = gc_httpd_free(s.h);

        /* A stop before run: run returns at once. */
        s.h = gc_httpd_new(&o, err, sizeof(err));
        ck_assert_ptr_nonnull(s.h);
        gc_httpd_stop(s.h);
        ck_assert_int_eq(gc_httpd_run(s.h, NULL), 0);
        s.h = gc_httpd_free(s.h);
}
END_TEST

static Suite *httpd_suite(void)
{
        Suite *s = suite_create("httpd");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 30);
        tcase_add_loop_test(tc, test_parse_listen, 0,
                            sizeof(listen_cases) / sizeof(listen_cases[0]));
        tcase_add_loop_test(tc, test_bad_opts, 0, sizeof(bad_opts) / sizeof(bad_opts[0]));
        tcase_add_test(tc, test_port_in_use);
        if (getenv("CK_FORK") == NULL || strcmp(getenv("CK_FORK"), "no") != 0)
                tcase_add_test(tc, test_fd_limit);
        tcase_add_test(tc, test_routes_and_helpers);
        tcase_add_test(tc, test_get_200);
        tcase_add_test(tc, test_errors_json);
        tcase_add_test(tc, test_prefix_routes);
        tcase_add_test(tc, test_head_and_keepalive);
        tcase_add_test(tc, test_query_and_headers);
        tcase_add_test(tc, test_bad_urls);
        tcase_add_test(tc, test_oversized_headers);
        tcase_add_test(tc, test_many_connections);
        tcase_add_test(tc, test_slow_client_dropped);
        tcase_add_test(tc, test_stalled_and_vanishing_readers);
        tcase_add_test(tc, test_raw_requests);
        tcase_add_test(tc, test_bad_heads);
        tcase_add_test(tc, test_slow_clients_do_not_stall);
        tcase_add_test(tc, test_per_address_cap);
        tcase_add_test(tc, test_tls_and_reload);
        tcase_add_test(tc, test_tls_handshake_deadline);
        tcase_add_test(tc, test_guard_decisions);
        tcase_add_test(tc, test_guard_park_and_wake);
        tcase_add_test(tc, test_guard_park_limits);
        tcase_add_test(tc, test_pipelined);
        tcase_add_test(tc, test_deferred);
        tcase_add_loop_test(tc, test_head_check, 0, sizeof(head_cases) / sizeof(head_cases[0]));
        tcase_add_test(tc, test_head_check_limits);
        tcase_add_test(tc, test_head_check_header_name_prefixes);
        tcase_add_test(tc, test_header_name_prefixes_answered);
        tcase_add_test(tc, test_heads_in_pieces);
        tcase_add_test(tc, test_stop_flag);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr;
        int failed;

        curl_global_init(CURL_GLOBAL_DEFAULT);
        sr = srunner_create(httpd_suite());
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        curl_global_cleanup();
        return failed != 0;
}
