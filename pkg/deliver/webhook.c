/* deliver webhook: one signed JSON POST to a chat or any receiver, over libcurl. */
#include <curl/curl.h>
#include <errno.h>
#include <string.h>

#include "deliver.h"

#define GC_DELIVER__HOOK_TIMEOUT_S 30
#define GC_DELIVER__HOOK_MAX_URL   2048
#define GC_DELIVER__HOOK_ANSWER    4096 /* bytes of the receiver's answer kept for messages */

void gc_deliver_url_origin(const char *url, char *out, size_t outlen)
{
        const char *p = url ? strstr(url, "://") : NULL;
        size_t n;

        if (!p) {
                gc_errf(out, outlen, "(not a URL)");
                return;
        }
        p += 3;
        n = strcspn(p, "/?#");
        const char *at = memchr(p, '@', n); /* no user:password@ in messages */
        if (at) {
                n -= (size_t)(at + 1 - p);
                p = at + 1;
        }
        gc_errf(out, outlen, "%.*s://%.*s", (int)(strstr(url, "://") - url), url, (int)n, p);
        for (char *q = out; *q; q++)
                if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f)
                        *q = '?';
}

static size_t gc_deliver__sink(char *p, size_t size, size_t n, void *ud)
{
        gc_buf *b = ud;
        size_t len = size * n, room = b->limit - b->len;

        gc_buf_append(b, p, len < room ? len : room); /* the rest is not needed */
        return len;
}

int gc_deliver_webhook_post(const gc_deliver_webhook *o, const char *body, size_t len,
                            long *ret_status, char *err, size_t errlen)
{
        char cerr[CURL_ERROR_SIZE] = "", sig[GC_DELIVER_HMAC_HEX], hdr[128], origin[256];
        struct curl_slist *h = NULL;
        gc_buf answer;
        long status = 0;
        CURL *c = NULL;
        CURLcode cc;
        int r = -EIO;
        size_t n = o && o->url ? strlen(o->url) : 0;

        if (!o || n == 0 || n > GC_DELIVER__HOOK_MAX_URL ||
            (strncmp(o->url, "https://", 8) != 0 && strncmp(o->url, "http://", 7) != 0) ||
            strpbrk(o->url, " \t\r\n")) {
                gc_errf(err, errlen,
                        "the webhook is not an https:// (or http://) URL of at most "
                        "%d bytes",
                        GC_DELIVER__HOOK_MAX_URL);
                return -EINVAL;
        }
        if (!body) {
                gc_errf(err, errlen, "no body");
                return -EINVAL;
        }
        gc_deliver_url_origin(o->url, origin, sizeof(origin));
        gc_buf_init(&answer, GC_DELIVER__HOOK_ANSWER);
        h = curl_slist_append(NULL, "Content-Type: application/json; charset=utf-8");
        if (h && o->secret) {
                if (gc_deliver_hmac_sha256_hex(o->secret, strlen(o->secret), body, len, sig) < 0) {
                        gc_errf(err, errlen, "cannot sign the body");
                        goto finish;
                }
                gc_errf(hdr, sizeof(hdr), "%s: sha256=%s", GC_DELIVER_WEBHOOK_HEADER, sig);
                h = curl_slist_append(h, hdr);
        }
        c = curl_easy_init();
        if (!c || !h) {
                gc_errf(err, errlen, "out of memory");
                r = -ENOMEM;
                goto finish;
        }
        curl_easy_setopt(c, CURLOPT_URL, o->url);
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, gc_deliver__sink);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 15L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT,
                         (long)(o->timeout_s > 0 ? o->timeout_s : GC_DELIVER__HOOK_TIMEOUT_S));
        if (o->cacert)
                curl_easy_setopt(c, CURLOPT_CAINFO, o->cacert);
        cc = curl_easy_perform(c);
        if (cc != CURLE_OK) {
                gc_errf(err, errlen, "posting to %s failed: %s", origin,
                        cerr[0] ? cerr : curl_easy_strerror(cc));
                r = cc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EIO;
                goto finish;
        }
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        if (ret_status)
                *ret_status = status;
        if (status < 200 || status > 299) {
                char *a = answer.data ? answer.data : "";

                for (char *q = a; *q; q++)
                        if ((unsigned char)*q < 0x20 || *q == 0x7f)
                                *q = ' ';
                gc_errf(err, errlen, "%s answered %ld: %.200s", origin, status, a);
                goto finish;
        }
        r = 0;
finish:
        gc_buf_free(&answer);
        curl_slist_free_all(h);
        if (c)
                curl_easy_cleanup(c);
        return r;
}
