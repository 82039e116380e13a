/* kube client: the libcurl handle, bearer tokens, and the one request core everything uses. */
#include "kube_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* ---- small helpers -------------------------------------------------------------------------- */

int64_t gc__kube_mono_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t gc__kube_mono_s(void)
{
        return gc__kube_mono_ms() / 1000;
}

int gc__kube_sleep(double seconds, const volatile sig_atomic_t *stop)
{
        int64_t until = gc__kube_mono_ms() + (int64_t)(seconds * 1000.0);

        for (;;) {
                int64_t left = until - gc__kube_mono_ms();
                struct timespec ts;

                if (stop && *stop)
                        return 1;
                if (left <= 0)
                        return 0;
                /* Short naps, so a stop request is seen within 100 ms. */
                if (left > 100)
                        left = 100;
                ts.tv_sec = 0;
                ts.tv_nsec = (long)left * 1000000L;
                nanosleep(&ts, NULL);
        }
}

double gc__kube_rand(gc_kube *k)
{
        /* xorshift64*: jitter only, so it need not be cryptographic. */
        uint64_t x = k->rng;

        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        k->rng = x;
        return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

/* Frees a secret after overwriting it, so it does not linger in freed heap memory. */
static void gc__free_secret(char *s)
{
        if (!s)
                return;
        explicit_bzero(s, strlen(s));
        free(s);
}

int gc_kube_escape(gc_buf *out, const char *s)
{
        static const char hex[] = "0123456789ABCDEF";

        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;
                int r;

                if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.' || c == '_' || c == '~') {
                        r = gc_buf_append(out, s, 1);
                } else {
                        char e[3] = {'%', hex[c >> 4], hex[c & 15]};

                        r = gc_buf_append(out, e, 3);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

int gc__kube_valid_name(const char *s, size_t max, int dots)
{
        size_t n;

        if (!s)
                return 0;
        n = strlen(s);
        if (n == 0 || n > max)
                return 0;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

                if (alnum)
                        continue;
                if (i == 0 || i == n - 1 || !(c == '-' || (dots && c == '.')))
                        return 0;
        }
        return 1;
}

const char *gc_kube_meta(const cJSON *obj, const char *field)
{
        const cJSON *m, *v;

        if (!obj || !field)
                return NULL;
        m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
        v = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, field) : NULL;
        return v && cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

void gc__kube_status_msg(const gc_buf *body, long status, char *err, size_t errlen)
{
        cJSON *j = NULL;
        const cJSON *m = NULL;

        if (!err || errlen == 0)
                return;
        if (body && body->data && body->len)
                j = cJSON_ParseWithLength(body->data, body->len);
        if (j)
                m = cJSON_GetObjectItemCaseSensitive(j, "message");
        if (m && cJSON_IsString(m) && m->valuestring && m->valuestring[0])
                snprintf(err, errlen, "HTTP %ld: %s", status, m->valuestring);
        else
                snprintf(err, errlen, "HTTP %ld", status);
        cJSON_Delete(j);
}

int gc__kube_status_errno(long status)
{
        switch (status) {
        case 400:
        case 422:
                return -EINVAL;
        case 401:
                return -EKEYREJECTED; /* who we are was not accepted: not a missing grant */
        case 403:
                return -EACCES;
        case 404:
                return -ENOENT;
        case 409:
                return -EBUSY;
        case 410:
                return -ESTALE;
        case 413:
                return -E2BIG;
        case 429:
                return -EAGAIN;
        default:
                return status >= 500 ? -EAGAIN : -EIO;
        }
}

/* ---- tokens --------------------------------------------------------------------------------- */

/* Reads a token file as client-go does: white space trimmed, empty refused. */
static int gc__token_read(const char *path, char **ret, char *err, size_t errlen)
{
        gc_buf b;
        size_t i, start = 0, end;
        char *t;
        int r;

        r = gc_read_file(path, GC__KUBE_MAX_TOKEN, &b);
        if (r < 0) {
                snprintf(err, errlen, "token file %s: %s", path,
                         r == -E2BIG ? "too large" : strerror(-r));
                return r;
        }
        end = b.len;
        while (start < end && strchr(" \t\r\n", b.data[start]))
                start++;
        while (end > start && strchr(" \t\r\n", b.data[end - 1]))
                end--;
        r = 0;
        if (start == end) {
                snprintf(err, errlen, "token file %s: empty", path);
                r = -EINVAL;
                goto out;
        }
        /* A control byte would let a rotated file inject HTTP headers. */
        for (i = start; i < end; i++) {
                unsigned char c = (unsigned char)b.data[i];

                if (c < 0x21 || c > 0x7e) {
                        snprintf(err, errlen, "token file %s: not a bearer token", path);
                        r = -EINVAL;
                        goto out;
                }
        }
        t = strndup(b.data + start, end - start);
        if (!t) {
                r = -ENOMEM;
                goto out;
        }
        *ret = t;
out:
        explicit_bzero(b.data, b.len);
        gc_buf_free(&b);
        return r;
}

/* Re-reads the token file when due (or forced); a failed read keeps the token in use. */
static void gc__token_refresh(gc_kube *k, int force)
{
        char ebuf[256];
        char *t = NULL;
        int64_t now = gc__kube_mono_s();

        if (!k->token_file)
                return;
        if (!force && now - k->token_read_mono < GC__KUBE_TOKEN_REREAD_S)
                return;
        k->token_read_mono = now;
        if (gc__token_read(k->token_file, &t, ebuf, sizeof(ebuf)) < 0)
                return;
        gc__free_secret(k->token);
        k->token = t;
}

/* ---- the client ----------------------------------------------------------------------------- */

gc_kube *gc_kube_free(gc_kube *k)
{
        if (!k)
                return NULL;
        if (k->curl)
                curl_easy_cleanup(k->curl);
        free(k->server);
        free(k->ca_file);
        free(k->ca_data);
        free(k->cert_file);
        free(k->key_file);
        free(k->cert_data);
        gc__free_secret(k->key_data);
        gc__free_secret(k->token);
        free(k->token_file);
        free(k->writer);
        free(k);
        return NULL;
}

static int gc__copy_opt(char **dst, const char *src)
{
        if (!src)
                return 0;
        *dst = strdup(src);
        return *dst ? 0 : -ENOMEM;
}

gc_kube *gc_kube_new(const gc_kube_config *cfg, char *err, size_t errlen)
{
        gc_kube *k = NULL;
        size_t n;
        uint64_t seed = 0;
        int r = -ENOMEM;

        if (!cfg || !cfg->server || !cfg->server[0]) {
                snprintf(err, errlen, "server: missing");
                return NULL;
        }
        if (strncmp(cfg->server, "https://", 8) != 0 && strncmp(cfg->server, "http://", 7) != 0) {
                snprintf(err, errlen, "server: \"%.200s\" is not an http(s) URL", cfg->server);
                return NULL;
        }
        if ((cfg->client_cert_file || cfg->client_cert_data) !=
            (cfg->client_key_file || cfg->client_key_data)) {
                snprintf(err, errlen, "%s: missing (a client certificate needs its key)",
                         cfg->client_key_file || cfg->client_key_data ? "client-certificate"
                                                                      : "client-key");
                return NULL;
        }
        k = calloc(1, sizeof(*k));
        if (!k)
                goto fail;
        k->server = strdup(cfg->server);
        if (!k->server)
                goto fail;
        n = strlen(k->server);
        while (n > 0 && k->server[n - 1] == '/')
                k->server[--n] = '\0';
        if (gc__copy_opt(&k->ca_file, cfg->ca_file) < 0 ||
            gc__copy_opt(&k->ca_data, cfg->ca_data) < 0 ||
            gc__copy_opt(&k->cert_file, cfg->client_cert_file) < 0 ||
            gc__copy_opt(&k->key_file, cfg->client_key_file) < 0 ||
            gc__copy_opt(&k->cert_data, cfg->client_cert_data) < 0 ||
            gc__copy_opt(&k->key_data, cfg->client_key_data) < 0 ||
            gc__copy_opt(&k->token, cfg->token) < 0 ||
            gc__copy_opt(&k->token_file, cfg->token_file) < 0)
                goto fail;
        if (k->token_file) {
                char *t = NULL;

                r = gc__token_read(k->token_file, &t, err, errlen);
                if (r < 0 && !k->token)
                        goto fail;
                if (r == 0) {
                        gc__free_secret(k->token);
                        k->token = t;
                }
                k->token_read_mono = gc__kube_mono_s();
        }
        r = -ENOMEM;
        k->curl = curl_easy_init();
        if (!k->curl)
                goto fail;
        if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed))
                seed = (uint64_t)gc__kube_mono_ms() ^ ((uint64_t)getpid() << 32);
        k->rng = seed | 1;
        return k;
fail:
        if (r == -ENOMEM)
                snprintf(err, errlen, "out of memory");
        gc_kube_free(k);
        return NULL;
}

/* ---- one transfer --------------------------------------------------------------------------- */

typedef struct gc__xfer {
        CURL *curl;
        const gc__kube_io *io;
        gc_buf *body;
        long status;
        int status_known;
        int streaming;
        int stream_err;
        int toobig;
        int stopped;
} gc__xfer;

static size_t gc__write_cb(char *p, size_t size, size_t nmemb, void *ud)
{
        gc__xfer *x = ud;
        size_t n = size * nmemb;
        int r;

        if (!x->status_known) {
                curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &x->status);
                x->status_known = 1;
                /* Only a 200 is a stream of items or events; anything else is a Status. */
                x->streaming = x->io->stream && x->status == 200;
        }
        if (x->streaming) {
                r = x->io->stream(x->io->stream_ud, p, n);
                if (r < 0) {
                        x->stream_err = r;
                        return CURL_WRITEFUNC_ERROR;
                }
                return n;
        }
        if (!x->body)
                return n;
        r = gc_buf_append(x->body, p, n);
        if (r < 0) {
                if (r == -E2BIG)
                        x->toobig = 1;
                else
                        x->stream_err = r;
                return CURL_WRITEFUNC_ERROR;
        }
        return n;
}

static int gc__xferinfo_cb(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                           curl_off_t ulnow)
{
        gc__xfer *x = ud;

        (void)dltotal;
        (void)dlnow;
        (void)ultotal;
        (void)ulnow;
        if (x->io->stop && *x->io->stop) {
                x->stopped = 1;
                return 1;
        }
        return 0;
}

static int gc__curl_errno(CURLcode c)
{
        switch (c) {
        case CURLE_OK:
                return 0;
        case CURLE_OUT_OF_MEMORY:
                return -ENOMEM;
        case CURLE_OPERATION_TIMEDOUT:
                return -ETIMEDOUT;
        case CURLE_COULDNT_CONNECT:
                return -ECONNREFUSED;
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
                return -EHOSTUNREACH;
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_SSL_CERTPROBLEM:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_CIPHER:
                return -EPROTO;
        case CURLE_ABORTED_BY_CALLBACK:
                return -ECANCELED;
        default:
                return -EIO;
        }
}

#define GC__SET(opt, val)                                                                          \
        do {                                                                                       \
                if (curl_easy_setopt(c, opt, val) != CURLE_OK)                                     \
                        goto setopt_fail;                                                          \
        } while (0)

/* One attempt. The header list and the URL stay alive until curl_easy_perform returns. */
/* The request's headers into *hdrs (appended; the caller frees the list); auth and line hold
 * the strings libcurl copies. -ENOMEM. */
static int gc__headers(const gc_kube *k, const char *content_type, const gc__kube_io *io,
                       struct curl_slist **hdrs, gc_buf *auth, gc_buf *line)
{
        struct curl_slist *h;

        if (gc_buf_printf(line, "Accept: %s", io->accept ? io->accept : "application/json") < 0)
                return -ENOMEM;
        if (!(h = curl_slist_append(*hdrs, line->data)))
                return -ENOMEM;
        *hdrs = h;
        if (content_type) {
                gc_buf_reset(line);
                if (gc_buf_printf(line, "Content-Type: %s", content_type) < 0)
                        return -ENOMEM;
                if (!(h = curl_slist_append(*hdrs, line->data)))
                        return -ENOMEM;
                *hdrs = h;
        }
        /* A body is sent at once; waiting for "100 Continue" only adds a round trip. */
        if (!(h = curl_slist_append(*hdrs, "Expect:")))
                return -ENOMEM;
        *hdrs = h;
        if (k->token) {
                if (gc_buf_printf(auth, "Authorization: Bearer %s", k->token) < 0)
                        return -ENOMEM;
                if (!(h = curl_slist_append(*hdrs, auth->data)))
                        return -ENOMEM;
                *hdrs = h;
        }
        return 0;
}

/* TLS: verification, the CA, the client certificate and key (files or data). -EINVAL when
 * libcurl refuses an option. */
static int gc__set_tls(gc_kube *k)
{
        CURL *c = k->curl;

        GC__SET(CURLOPT_SSL_VERIFYPEER, 1L);
        GC__SET(CURLOPT_SSL_VERIFYHOST, 2L);
        /* A rotated CA bundle is read again within the hour, not after libcurl's default day. */
        GC__SET(CURLOPT_CA_CACHE_TIMEOUT, 3600L);
        if (k->ca_file)
                GC__SET(CURLOPT_CAINFO, k->ca_file);
        if (k->ca_data) {
                struct curl_blob b = {k->ca_data, strlen(k->ca_data), CURL_BLOB_COPY};

                GC__SET(CURLOPT_CAINFO_BLOB, &b);
        }
        if (k->cert_file) {
                GC__SET(CURLOPT_SSLCERT, k->cert_file);
                GC__SET(CURLOPT_SSLCERTTYPE, "PEM");
        }
        if (k->cert_data) {
                struct curl_blob b = {k->cert_data, strlen(k->cert_data), CURL_BLOB_COPY};

                GC__SET(CURLOPT_SSLCERT_BLOB, &b);
                GC__SET(CURLOPT_SSLCERTTYPE, "PEM");
        }
        if (k->key_file) {
                GC__SET(CURLOPT_SSLKEY, k->key_file);
                GC__SET(CURLOPT_SSLKEYTYPE, "PEM");
        }
        if (k->key_data) {
                struct curl_blob b = {k->key_data, strlen(k->key_data), CURL_BLOB_COPY};

                GC__SET(CURLOPT_SSLKEY_BLOB, &b);
                GC__SET(CURLOPT_SSLKEYTYPE, "PEM");
        }
        return 0;
setopt_fail:
        return -EINVAL;
}

/* A failed transfer: what fail says of it, the error for the caller and its message. */
static int gc__failed(gc_kube *k, CURLcode cc, const char *method, const char *url,
                      const gc__kube_io *io, const gc__xfer *x, gc__kube_fail *fail, char *err,
                      size_t errlen)
{
        curl_off_t pre = 0;
        int r;

        curl_easy_getinfo(k->curl, CURLINFO_PRETRANSFER_TIME_T, &pre);
        fail->connected = x->status_known || pre > 0;
        fail->stopped = x->stopped;
        fail->toobig = x->toobig;
        if (x->stream_err < 0) {
                r = x->stream_err;
                snprintf(err, errlen, "%s %s: %s", method, url,
                         r == -ENOMEM ? "out of memory" : "stream handler failed");
        } else if (x->toobig) {
                r = -E2BIG;
                snprintf(err, errlen, "%s %s: response larger than %zu bytes", method, url,
                         x->body ? x->body->limit : (size_t)0);
        } else if (x->stopped) {
                r = -ECANCELED;
                snprintf(err, errlen, "%s %s: stopped", method, url);
        } else {
                r = gc__curl_errno(cc);
                if (cc == CURLE_OPERATION_TIMEDOUT && io->idle_s > 0 && io->timeout_s < 0 &&
                    fail->connected)
                        fail->idle = 1;
                snprintf(err, errlen, "%s %s: %s", method, url,
                         k->errbuf[0] ? k->errbuf : curl_easy_strerror(cc));
        }
        return r;
}

static int gc__perform(gc_kube *k, const char *method, const char *url, const char *content_type,
                       const char *body, size_t body_len, const gc__kube_io *io, gc__xfer *x,
                       gc__kube_fail *fail, char *err, size_t errlen)
{
        CURL *c = k->curl;
        struct curl_slist *hdrs = NULL;
        gc_buf auth, line;
        CURLcode cc;
        int r = -ENOMEM;

        gc_buf_init(&auth, GC__KUBE_MAX_TOKEN + 64);
        gc_buf_init(&line, 512);
        curl_easy_reset(c);
        k->errbuf[0] = '\0';

        if (gc__headers(k, content_type, io, &hdrs, &auth, &line) < 0)
                goto out;
        GC__SET(CURLOPT_URL, url);
        GC__SET(CURLOPT_PROTOCOLS_STR, strncmp(url, "https:", 6) == 0 ? "https" : "http");
        GC__SET(CURLOPT_NOSIGNAL, 1L);
        GC__SET(CURLOPT_ERRORBUFFER, k->errbuf);
        GC__SET(CURLOPT_FAILONERROR, 0L);
        GC__SET(CURLOPT_CONNECTTIMEOUT, (long)GC__KUBE_CONNECT_S);
        GC__SET(CURLOPT_TCP_KEEPALIVE, 1L);
        GC__SET(CURLOPT_TCP_KEEPIDLE, 30L);
        GC__SET(CURLOPT_TCP_KEEPINTVL, 10L);
        if (gc__set_tls(k) < 0)
                goto setopt_fail;
        GC__SET(CURLOPT_HTTPHEADER, hdrs);
        GC__SET(CURLOPT_USERAGENT, "gpu-cost/" GC_VERSION);
        GC__SET(CURLOPT_ACCEPT_ENCODING, "gzip");
        if (body) {
                GC__SET(CURLOPT_POSTFIELDS, body);
                GC__SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
        }
        if (strcmp(method, "GET") != 0 && !(body && strcmp(method, "POST") == 0))
                GC__SET(CURLOPT_CUSTOMREQUEST, method);
        GC__SET(CURLOPT_WRITEFUNCTION, gc__write_cb);
        GC__SET(CURLOPT_WRITEDATA, x);
        GC__SET(CURLOPT_XFERINFOFUNCTION, gc__xferinfo_cb);
        GC__SET(CURLOPT_XFERINFODATA, x);
        GC__SET(CURLOPT_NOPROGRESS, 0L);
        /* Streams have no overall limit: the server ends them, and the idle limit catches a dead
         * connection that never would. */
        if (io->timeout_ms > 0)
                GC__SET(CURLOPT_TIMEOUT_MS, io->timeout_ms);
        else if (io->timeout_s >= 0)
                GC__SET(CURLOPT_TIMEOUT,
                        (long)(io->timeout_s ? io->timeout_s : GC__KUBE_REQUEST_S));
        if (io->idle_s > 0) {
                GC__SET(CURLOPT_LOW_SPEED_LIMIT, 1L);
                GC__SET(CURLOPT_LOW_SPEED_TIME, (long)io->idle_s);
        }

        k->busy = 1;
        cc = curl_easy_perform(c);
        k->busy = 0;
        if (cc == CURLE_OK) {
                if (!x->status_known)
                        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &x->status);
                r = 0;
                goto out;
        }
        r = gc__failed(k, cc, method, url, io, x, fail, err, errlen);
        goto out;
setopt_fail:
        snprintf(err, errlen, "%s %s: libcurl refused an option", method, url);
        r = -EINVAL;
out:
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
        curl_slist_free_all(hdrs);
        if (auth.data)
                explicit_bzero(auth.data, auth.len);
        gc_buf_free(&auth);
        gc_buf_free(&line);
        return r;
}

void gc_kube_set_write_fence(gc_kube *k, gc_kube_fence_fn fn, void *arg)
{
        if (!k)
                return;
        k->fence = fn;
        k->fence_arg = arg;
}

int gc_kube_set_writer(gc_kube *k, const char *identity)
{
        char *w = NULL;

        if (!k)
                return -EINVAL;
        if (identity && !(w = strdup(identity)))
                return -ENOMEM;
        free(k->writer);
        k->writer = w;
        return 0;
}

static int64_t gc__mono_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A write under a fence: refused at or past its deadline, else limited to end there (*fenced). */
static int gc__fence(gc_kube *k, const char *method, const gc__kube_io *io, gc__kube_io *fenced,
                     const gc__kube_io **use, char *err, size_t errlen)
{
        int64_t left, limit;

        if (!k->fence || strcmp(method, "GET") == 0)
                return 0;
        left = k->fence(k->fence_arg) - gc__mono_ms();
        if (left <= 0) {
                snprintf(err, errlen,
                         "not written: the leader lease may have passed to another "
                         "replica");
                return -ESTALE;
        }
        *fenced = *io;
        limit = io->timeout_ms > 0   ? io->timeout_ms
                : io->timeout_s > 0  ? (int64_t)io->timeout_s * 1000
                : io->timeout_s == 0 ? (int64_t)GC__KUBE_REQUEST_S * 1000
                                     : left;
        fenced->timeout_ms = (long)(left < limit ? left : limit);
        *use = fenced;
        return 0;
}

int gc__kube_do(gc_kube *k, const char *method, const char *path, const char *content_type,
                const char *body, size_t body_len, const gc__kube_io *io, long *ret_status,
                gc_buf *ret_body, gc__kube_fail *ret_fail, char *err, size_t errlen)
{
        gc__kube_io fenced;
        static const gc__kube_io plain;
        gc__kube_fail fail;
        gc_buf url;
        int r;

        if (!io)
                io = &plain;
        if (ret_body)
                gc_buf_init(ret_body, io->stream ? GC__KUBE_MAX_ERRBODY : GC_KUBE_MAX_RESPONSE);
        memset(&fail, 0, sizeof(fail));
        if (ret_fail)
                *ret_fail = fail;
        if (!k || !method || !path || path[0] != '/') {
                snprintf(err, errlen, "request: path must start with '/'");
                return -EINVAL;
        }
        if (k->busy) {
                snprintf(err, errlen,
                         "request: this client is busy (called from a watch callback)");
                return -EBUSY;
        }
        r = gc__fence(k, method, io, &fenced, &io, err, errlen);
        if (r < 0)
                return r;
        gc_buf_init(&url, 16384);
        r = gc_buf_puts(&url, k->server);
        if (r == 0)
                r = gc_buf_puts(&url, path);
        if (r < 0) {
                snprintf(err, errlen, "request: path too long");
                goto out;
        }
        gc__token_refresh(k, 0);
        for (int attempt = 0;; attempt++) {
                gc__xfer x;

                memset(&x, 0, sizeof(x));
                x.curl = k->curl;
                x.io = io;
                x.body = ret_body;
                if (ret_body)
                        gc_buf_reset(ret_body);
                memset(&fail, 0, sizeof(fail));
                r = gc__perform(k, method, url.data, content_type, body, body_len, io, &x, &fail,
                                err, errlen);
                if (r < 0)
                        break;
                /* A rotated token: read the file again at once and retry, once. */
                if (x.status == 401 && attempt == 0 && k->token_file) {
                        gc__token_refresh(k, 1);
                        continue;
                }
                *ret_status = x.status;
                break;
        }
out:
        if (ret_fail)
                *ret_fail = fail;
        gc_buf_free(&url);
        return r;
}

int gc_kube_request(gc_kube *k, const char *method, const char *path, const char *content_type,
                    const char *body, size_t body_len, long *ret_status, gc_buf *ret_body,
                    char *err, size_t errlen)
{
        long status = 0;
        int r;

        r = gc__kube_do(k, method, path, content_type, body, body_len, NULL, &status, ret_body,
                        NULL, err, errlen);
        if (r == 0)
                *ret_status = status;
        return r;
}
