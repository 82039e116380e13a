/* client http: one GET of the controller's API over libcurl: a body cap, the token kept secret. */
#include <curl/curl.h>
#include <errno.h>
#include <string.h>

#include "client_int.h"

#define GC_CLIENT__CONNECT_S 10
#define GC_CLIENT__MAX_URL   ((size_t)64 << 10)
#define GC_CLIENT__SHOWN     200 /* bytes of a non-JSON error body quoted */

typedef struct gc_client__sink {
        gc_buf *body;
        size_t max;
        int over; /* the body passed max (or body's own limit): the transfer was aborted */
} gc_client__sink;

static size_t gc_client__write(char *p, size_t size, size_t n, void *ud)
{
        gc_client__sink *k = ud;
        size_t len = size * n;
        int r;

        if (len > k->max - k->body->len) {
                k->over = 1;
                return 0; /* a short count fails the transfer with CURLE_WRITE_ERROR */
        }
        r = gc_buf_append(k->body, p, len);
        if (r == -E2BIG)
                k->over = 1;
        return r == 0 ? len : 0;
}

/* "64 MiB", "64 KiB" or "100 bytes": a limit as a person reads it. */
static void gc_client__size(size_t n, char *out, size_t outlen)
{
        if (n >= ((size_t)1 << 20) && n % ((size_t)1 << 20) == 0)
                gc_errf(out, outlen, "%zu MiB", n >> 20);
        else if (n >= 1024 && n % 1024 == 0)
                gc_errf(out, outlen, "%zu KiB", n >> 10);
        else
                gc_errf(out, outlen, "%zu bytes", n);
}

void gc__client_printable(char *s)
{
        for (; s && *s; s++) {
                unsigned char c = (unsigned char)*s;

                if (c == '\n' || c == '\r' || c == '\t')
                        *s = ' ';
                else if (c < 0x20 || c == 0x7f)
                        *s = '?';
        }
}

/* The API's {"error":"..."} message, or the body's start when it is not that. */
static void gc_client__refusal(long status, const gc_buf *body, char *err, size_t errlen)
{
        const char *text = body->data ? body->data : "";
        cJSON *doc = cJSON_ParseWithLengthOpts(text, body->len, NULL, 0);
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(doc, "error");

        if (!cJSON_IsString(msg)) /* OpenCost's envelope says "message" */
                msg = cJSON_GetObjectItemCaseSensitive(doc, "message");
        if (cJSON_IsString(msg))
                gc_errf(err, errlen, "server answered %ld: %s", status, msg->valuestring);
        else
                gc_errf(err, errlen, "server answered %ld: %.*s", status, GC_CLIENT__SHOWN, text);
        cJSON_Delete(doc);
        if (err && errlen)
                gc__client_printable(err);
}

/* server + path + ?name=value&...; -ENOMEM, -E2BIG past GC_CLIENT__MAX_URL. */
static int gc_client__url(CURL *h, const gc_client_opts *o, const char *path,
                          const char *const *params, size_t n_params, gc_buf *url)
{
        size_t base_len = strlen(o->server);
        int sep = '?';

        while (base_len && o->server[base_len - 1] == '/')
                base_len--;
        gc_buf_append(url, o->server, base_len);
        gc_buf_puts(url, path);
        for (size_t i = 0; i < n_params; i++) {
                char *v;

                if (!params[2 * i + 1])
                        continue;
                v = curl_easy_escape(h, params[2 * i + 1], 0);
                if (!v)
                        return -ENOMEM;
                gc_buf_printf(url, "%c%s=%s", sep, params[2 * i], v);
                curl_free(v);
                sep = '&';
        }
        return url->err;
}

/* Zeroes the copies libcurl's list made of the headers (one holds the token), then frees it. */
static void gc_client__headers_free(struct curl_slist *hdrs)
{
        for (struct curl_slist *l = hdrs; l; l = l->next)
                if (l->data)
                        memset(l->data, 0, strlen(l->data));
        curl_slist_free_all(hdrs);
}

static int gc_client__check(const gc_client_opts *o, const char *path, const char *const *params,
                            size_t n_params, const gc_buf *body, char *err, size_t errlen)
{
        if (!o || !path || !body || (n_params && !params)) {
                gc_errf(err, errlen, "invalid arguments");
                return -EINVAL;
        }
        if (!o->server ||
            (strncmp(o->server, "http://", 7) != 0 && strncmp(o->server, "https://", 8) != 0)) {
                gc_errf(err, errlen, "the server is not an http:// or https:// URL");
                return -EINVAL;
        }
        if (path[0] != '/') {
                gc_errf(err, errlen, "the path \"%.64s\" does not start with /", path);
                return -EINVAL;
        }
        for (size_t i = 0; i < n_params; i++)
                if (!params[2 * i]) {
                        gc_errf(err, errlen, "query parameter %zu has no name", i);
                        return -EINVAL;
                }
        if (o->token && (strpbrk(o->token, "\r\n") || strlen(o->token) > GC_CLIENT_MAX_TOKEN)) {
                gc_errf(err, errlen, "the token holds a line break or is longer than %zu bytes",
                        GC_CLIENT_MAX_TOKEN);
                return -EINVAL;
        }
        if (o->timeout_s < 0) {
                gc_errf(err, errlen, "a negative timeout");
                return -EINVAL;
        }
        return 0;
}

static int gc_client__setopts(CURL *h, const gc_client_opts *o, const char *url,
                              struct curl_slist *hdrs, gc_client__sink *k, char *errbuf)
{
        long timeout = (long)(o->timeout_s ? o->timeout_s : GC_CLIENT_TIMEOUT_S);
        int bad = 0;

        bad |= curl_easy_setopt(h, CURLOPT_URL, url) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_USERAGENT, "gpu-cost/" GC_VERSION) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, gc_client__write) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_WRITEDATA, k) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)GC_CLIENT__CONNECT_S) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout) != CURLE_OK;
        /* A Content-Length over the cap is refused before any byte is read. */
        bad |= curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)k->max) != CURLE_OK;
#if LIBCURL_VERSION_NUM >= 0x075500
        bad |= curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
#else
        bad |= curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) !=
               CURLE_OK;
#endif
        if (o->cacert)
                bad |= curl_easy_setopt(h, CURLOPT_CAINFO, o->cacert) != CURLE_OK;
        if (o->insecure) {
                bad |= curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L) != CURLE_OK;
                bad |= curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L) != CURLE_OK;
        }
        return bad ? -EINVAL : 0;
}

int gc_client_get(const gc_client_opts *o, const char *path, const char *const *params,
                  size_t n_params, gc_buf *body, long *ret_status, char *err, size_t errlen)
{
        struct curl_slist *hdrs = NULL, *l;
        char errbuf[CURL_ERROR_SIZE] = "", limit[32];
        gc_client__sink k = {body, 0, 0};
        gc_buf url, auth;
        long status = 0;
        CURL *h = NULL;
        CURLcode cc;
        int r;

        if (ret_status)
                *ret_status = 0;
        r = gc_client__check(o, path, params, n_params, body, err, errlen);
        if (r < 0)
                return r;
        gc_buf_init(&url, GC_CLIENT__MAX_URL);
        gc_buf_init(&auth, GC_CLIENT_MAX_TOKEN + 64);
        gc_buf_reset(body);
        k.max = o->max_body ? o->max_body : GC_CLIENT_MAX_BODY;
        r = -ENOMEM;
        h = curl_easy_init();
        if (!h)
                goto nomem;
        r = gc_client__url(h, o, path, params, n_params, &url);
        if (r == -E2BIG) {
                gc_errf(err, errlen, "the URL is longer than %zu bytes", GC_CLIENT__MAX_URL);
                goto finish;
        }
        if (r < 0)
                goto nomem;
        r = -ENOMEM;
        l = curl_slist_append(hdrs, "Accept: application/json, text/markdown, text/plain");
        if (!l)
                goto nomem;
        hdrs = l;
        if (o->token) {
                if (gc_buf_printf(&auth, "Authorization: Bearer %s", o->token) < 0)
                        goto nomem;
                l = curl_slist_append(hdrs, auth.data);
                if (!l)
                        goto nomem;
                hdrs = l;
        }
        r = gc_client__setopts(h, o, url.data, hdrs, &k, errbuf);
        if (r < 0) {
                gc_errf(err, errlen, "libcurl refused an option");
                goto finish;
        }
        cc = curl_easy_perform(h);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        if (ret_status)
                *ret_status = status;
        if (cc != CURLE_OK) {
                if (k.over || cc == CURLE_FILESIZE_EXCEEDED) {
                        gc_client__size(k.max, limit, sizeof(limit));
                        gc_errf(err, errlen, "%s: the answer is larger than %s", url.data, limit);
                        r = -E2BIG;
                } else if (cc == CURLE_WRITE_ERROR) {
                        r = -ENOMEM;
                        goto nomem;
                } else {
                        gc_errf(err, errlen, "%s: %s", url.data,
                                errbuf[0] ? errbuf : curl_easy_strerror(cc));
                        r = cc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EIO;
                }
                goto finish;
        }
        if (status != 200) {
                gc_client__refusal(status, body, err, errlen);
                r = -EPROTO;
                goto finish;
        }
        r = 0;
        goto finish;
nomem:
        gc_errf(err, errlen, "out of memory");
finish:
        gc_client__headers_free(hdrs);
        curl_easy_cleanup(h);
        gc_buf_free(&url);
        if (auth.data) /* the token is a secret: leave no copy behind */
                memset(auth.data, 0, auth.cap);
        gc_buf_free(&auth);
        return r;
}
