/* gpuuse fetch: scrape a dcgm-exporter and query Prometheus over HTTP (libcurl), with a body cap.
 */
#include "gpuuse_int.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct sink {
        size_t max, got;
        int over;               /* the body passed max: the transfer was aborted */
        int failed;             /* the consumer refused the data (out of memory) */
        gc_gpuuse_batch *batch; /* scrape: streamed into the parser */
        gc_buf *buf;            /* query: kept for cJSON */
        char ctype[128];        /* the answer's Content-Type, cut to fit; "" when none */
} sink;

/* Header lines arrive whole, before any body byte: the Content-Type sets a scrape's format. */
static size_t header_cb(char *data, size_t size, size_t nmemb, void *userdata)
{
        static const char name[] = "content-type:";
        sink *k = userdata;
        size_t n = size * nmemb, i = sizeof(name) - 1, len;

        if (n < i || strncasecmp(data, name, i) != 0)
                return n;
        while (i < n && (data[i] == ' ' || data[i] == '\t'))
                i++;
        len = n - i;
        while (len && (data[i + len - 1] == '\r' || data[i + len - 1] == '\n' ||
                       data[i + len - 1] == ' ' || data[i + len - 1] == '\t'))
                len--;
        if (len >= sizeof(k->ctype))
                len = sizeof(k->ctype) - 1;
        memcpy(k->ctype, data + i, len);
        k->ctype[len] = '\0';
        if (k->batch && gc__batch_wire_format(k->batch, k->ctype) < 0) {
                k->failed = 1;
                return 0;
        }
        return n;
}

static size_t write_cb(char *data, size_t size, size_t nmemb, void *userdata)
{
        sink *k = userdata;
        size_t n = size * nmemb;

        if (n > k->max - k->got) {
                k->over = 1;
                return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
        }
        k->got += n;
        if (k->batch && gc_gpuuse_batch_feed(k->batch, data, n) < 0) {
                k->failed = 1;
                return 0;
        }
        if (k->buf && gc_buf_append(k->buf, data, n) < 0) {
                k->failed = 1;
                return 0;
        }
        return n;
}

/* GET url into k. 0, or -errno with err set; *ret_status is the HTTP status (0 if none). */
static int http_get(const char *url, long timeout_s, const char *bearer, const char *accept,
                    sink *k, long *ret_status, char *err, size_t errlen)
{
        CURL *c = NULL;
        struct curl_slist *hdrs = NULL, *h;
        char line[4096], ebuf[CURL_ERROR_SIZE];
        CURLcode cc;
        long status = 0;
        int r = -ENOMEM;

        ebuf[0] = '\0';
        if (!(c = curl_easy_init()))
                goto out;
        snprintf(line, sizeof(line), "Accept: %s", accept);
        if (!(h = curl_slist_append(hdrs, line)))
                goto out;
        hdrs = h;
        if (bearer) {
                if ((size_t)snprintf(line, sizeof(line), "Authorization: Bearer %s", bearer) >=
                    sizeof(line)) {
                        r = -EINVAL;
                        snprintf(err, errlen, "bearer token too long");
                        goto out;
                }
                if (!(h = curl_slist_append(hdrs, line)))
                        goto out;
                hdrs = h;
        }
        if (curl_easy_setopt(c, CURLOPT_URL, url) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s > 0 ? timeout_s : 30L) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_USERAGENT, "gpu-cost/" GC_VERSION) != CURLE_OK ||
            /* The cap counts decoded bytes, so a compressed bomb stops at it too. */
            curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "") != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_HEADERDATA, k) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_WRITEDATA, k) != CURLE_OK) {
                r = -EINVAL;
                snprintf(err, errlen, "libcurl refused an option");
                goto out;
        }
        cc = curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        *ret_status = status;
        if (k->over) {
                r = -E2BIG;
                snprintf(err, errlen, "%s: body over the limit of %zu bytes", url, k->max);
                goto out;
        }
        if (k->failed) {
                r = -ENOMEM;
                snprintf(err, errlen, "%s: out of memory reading the body", url);
                goto out;
        }
        if (cc != CURLE_OK) {
                r = cc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EIO;
                snprintf(err, errlen, "%s: %s", url, ebuf[0] ? ebuf : curl_easy_strerror(cc));
                goto out;
        }
        r = 0;
out:
        curl_slist_free_all(hdrs);
        curl_easy_cleanup(c);
        return r;
}

int gc_gpuuse_scrape(gc_gpuuse *s, const char *url, long timeout_s, size_t max_body_bytes,
                     const char *bearer_token, int64_t now, int64_t interval_s, gc_gpuuse_stats *st,
                     char *err, size_t errlen)
{
        char dummy[1];
        sink k;
        long status = 0;
        int r;

        if (st)
                memset(st, 0, sizeof(*st));
        if (!err || !errlen) {
                err = dummy;
                errlen = sizeof(dummy);
        }
        err[0] = '\0';
        if (!s || !url)
                return -EINVAL;
        memset(&k, 0, sizeof(k));
        k.max = max_body_bytes;
        /*
         * Text format 0.0.4 is asked for (its timestamps are milliseconds) and assumed unless the
         * answer's Content-Type says OpenMetrics (seconds), as a server may answer regardless.
         */
        k.batch = gc_gpuuse_batch_begin(s, now, interval_s, 0);
        if (!k.batch || gc__batch_wire_format(k.batch, NULL) < 0) {
                gc_gpuuse_batch_abort(k.batch);
                return -ENOMEM;
        }
        r = http_get(url, timeout_s, bearer_token, "text/plain;version=0.0.4", &k, &status, err,
                     errlen);
        if (r == 0 && (status < 200 || status > 299)) {
                r = -EIO;
                snprintf(err, errlen, "%s: HTTP %ld", url, status);
        }
        if (r < 0) {
                /* A cut or failed body is a partial scrape: none of it is applied. */
                gc_gpuuse_batch_abort(k.batch);
                if (st)
                        st->bytes = k.got;
                return r;
        }
        r = gc_gpuuse_batch_end(k.batch, st);
        if (r == -EPROTO)
                snprintf(err, errlen,
                         "%s: the body ends with \"# EOF\" (OpenMetrics, timestamps in seconds) "
                         "but was served as \"%s\": nothing applied",
                         url, k.ctype[0] ? k.ctype : "(no Content-Type)");
        else if (r < 0)
                snprintf(err, errlen, "%s: %s", url,
                         r == -ENOSPC ? "more readings than the batch limit (what fit is applied)"
                                      : "out of memory");
        return r;
}

static int query(gc_gpuuse *s, const char *url, int64_t step_s, long timeout_s,
                 size_t max_body_bytes, const char *bearer_token, gc_gpuuse_stats *st, char *err,
                 size_t errlen)
{
        gc_buf body;
        sink k;
        long status = 0;
        int r;

        memset(&k, 0, sizeof(k));
        gc_buf_init(&body, max_body_bytes);
        k.max = max_body_bytes;
        k.buf = &body;
        r = http_get(url, timeout_s, bearer_token, "application/json", &k, &status, err, errlen);
        if (r == 0) {
                /* Prometheus answers errors (400, 422, 503) with a JSON body that says why. */
                r = gc_gpuuse_ingest_prom_json(s, body.data ? body.data : "", body.len,
                                               max_body_bytes, step_s, st, err, errlen);
                if (r == 0 && (status < 200 || status > 299)) {
                        r = -EIO;
                        snprintf(err, errlen, "HTTP %ld", status);
                } else if (r == -EINVAL && (status < 200 || status > 299) && !strstr(err, ": ")) {
                        snprintf(err, errlen, "HTTP %ld", status);
                }
        }
        gc_buf_free(&body);
        return r;
}

/* base_url + path + "?" + query=<escaped promql> + extra; -E2BIG when it does not fit. */
static int build_url(gc_buf *u, const char *base_url, const char *path, const char *promql,
                     const char *extra)
{
        CURL *c = curl_easy_init();
        char *q;
        size_t bl = strlen(base_url);
        int r;

        if (!c)
                return -ENOMEM;
        q = curl_easy_escape(c, promql, 0);
        curl_easy_cleanup(c);
        if (!q)
                return -ENOMEM;
        while (bl && base_url[bl - 1] == '/')
                bl--;
        r = gc_buf_append(u, base_url, bl);
        if (r == 0)
                r = gc_buf_printf(u, "%s?query=%s%s", path, q, extra);
        curl_free(q);
        return r;
}

int gc_gpuuse_prom_query_range(gc_gpuuse *s, const char *base_url, const char *promql,
                               int64_t start, int64_t end, int64_t step_s, long timeout_s,
                               size_t max_body_bytes, const char *bearer_token, gc_gpuuse_stats *st,
                               char *err, size_t errlen)
{
        char dummy[1], extra[96];
        gc_buf u;
        int r;

        if (st)
                memset(st, 0, sizeof(*st));
        if (!err || !errlen) {
                err = dummy;
                errlen = sizeof(dummy);
        }
        err[0] = '\0';
        if (!s || !base_url || step_s <= 0 || end < start)
                return -EINVAL;
        snprintf(extra, sizeof(extra), "&start=%" PRId64 "&end=%" PRId64 "&step=%" PRId64, start,
                 end, step_s);
        gc_buf_init(&u, 64 * 1024);
        r = build_url(&u, base_url, "/api/v1/query_range",
                      promql ? promql : gc_gpuuse_default_promql, extra);
        if (r == 0)
                r = query(s, u.data, step_s, timeout_s, max_body_bytes, bearer_token, st, err,
                          errlen);
        else
                snprintf(err, errlen, "query URL too long");
        gc_buf_free(&u);
        return r;
}

int gc_gpuuse_prom_query(gc_gpuuse *s, const char *base_url, const char *promql, int64_t at,
                         long timeout_s, size_t max_body_bytes, const char *bearer_token,
                         gc_gpuuse_stats *st, char *err, size_t errlen)
{
        char dummy[1], extra[48];
        gc_buf u;
        int r;

        if (st)
                memset(st, 0, sizeof(*st));
        if (!err || !errlen) {
                err = dummy;
                errlen = sizeof(dummy);
        }
        err[0] = '\0';
        if (!s || !base_url)
                return -EINVAL;
        snprintf(extra, sizeof(extra), "&time=%" PRId64, at);
        gc_buf_init(&u, 64 * 1024);
        r = build_url(&u, base_url, "/api/v1/query", promql ? promql : gc_gpuuse_default_promql,
                      extra);
        if (r == 0)
                r = query(s, u.data, 0, timeout_s, max_body_bytes, bearer_token, st, err, errlen);
        else
                snprintf(err, errlen, "query URL too long");
        gc_buf_free(&u);
        return r;
}
