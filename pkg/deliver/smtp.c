/* deliver smtp: one message to one recipient through libcurl's SMTP (STARTTLS, TLS, AUTH). */
#include <curl/curl.h>
#include <errno.h>
#include <string.h>

#include "deliver.h"

#define GC_DELIVER__SMTP_TIMEOUT_S 60
#define GC_DELIVER__CONNECT_S      15
#define GC_DELIVER__MAX_URL        1024

typedef struct gc_deliver__src {
        const char *p;
        size_t left;
} gc_deliver__src;

static size_t gc_deliver__read(char *buf, size_t size, size_t n, void *ud)
{
        gc_deliver__src *s = ud;
        size_t want = size * n;

        if (want > s->left)
                want = s->left;
        memcpy(buf, s->p, want);
        s->p += want;
        s->left -= want;
        return want;
}

static int gc_deliver__smtp_url_ok(const char *url, int *ret_tls)
{
        size_t n = url ? strlen(url) : 0;

        if (n == 0 || n > GC_DELIVER__MAX_URL)
                return 0;
        for (const char *p = url; *p; p++)
                if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
                        return 0;
        if (strncmp(url, "smtp://", 7) == 0 && url[7])
                *ret_tls = 0;
        else if (strncmp(url, "smtps://", 8) == 0 && url[8])
                *ret_tls = 1;
        else
                return 0;
        /* The credentials go in their own options, never in the URL (it ends up in messages). */
        return strchr(url, '@') == NULL;
}

int gc_deliver_smtp_send(const gc_deliver_smtp *o, const char *from, const char *to,
                         const char *message, size_t len, char *err, size_t errlen)
{
        char cerr[CURL_ERROR_SIZE] = "", from_path[GC_DELIVER_MAX_ADDR + 3],
             to_path[GC_DELIVER_MAX_ADDR + 3];
        struct curl_slist *rcpt = NULL;
        gc_deliver__src src = {message, len};
        CURL *c = NULL;
        CURLcode cc;
        int implicit = 0, r = -EIO;

        if (!o || !gc_deliver__smtp_url_ok(o->url, &implicit)) {
                gc_errf(err, errlen,
                        "the SMTP server is not smtp://host[:port] or "
                        "smtps://host[:port] (no credentials in it)");
                return -EINVAL;
        }
        if (!gc_deliver_addr_ok(from) || !gc_deliver_addr_ok(to)) {
                gc_errf(err, errlen, "the sender or the recipient is not an address");
                return -EINVAL;
        }
        if (!message || (o->username && (!o->password || strpbrk(o->username, "\r\n") ||
                                         strpbrk(o->password, "\r\n")))) {
                gc_errf(err, errlen,
                        "a username needs a password, and neither may hold a line "
                        "break");
                return -EINVAL;
        }
        gc_errf(from_path, sizeof(from_path), "<%s>", from);
        gc_errf(to_path, sizeof(to_path), "<%s>", to);
        c = curl_easy_init();
        rcpt = curl_slist_append(NULL, to_path);
        if (!c || !rcpt) {
                gc_errf(err, errlen, "out of memory");
                r = -ENOMEM;
                goto finish;
        }
        curl_easy_setopt(c, CURLOPT_URL, o->url);
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
        curl_easy_setopt(c, CURLOPT_MAIL_FROM, from_path);
        curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpt);
        curl_easy_setopt(c, CURLOPT_READFUNCTION, gc_deliver__read);
        curl_easy_setopt(c, CURLOPT_READDATA, &src);
        curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)GC_DELIVER__CONNECT_S);
        curl_easy_setopt(c, CURLOPT_TIMEOUT,
                         (long)(o->timeout_s > 0 ? o->timeout_s : GC_DELIVER__SMTP_TIMEOUT_S));
        if (!implicit)
                curl_easy_setopt(c, CURLOPT_USE_SSL,
                                 (long)(o->tls == GC_DELIVER_TLS_REQUIRED   ? CURLUSESSL_ALL
                                        : o->tls == GC_DELIVER_TLS_OPTIONAL ? CURLUSESSL_TRY
                                                                            : CURLUSESSL_NONE));
        if (o->cacert)
                curl_easy_setopt(c, CURLOPT_CAINFO, o->cacert);
        if (o->username) {
                curl_easy_setopt(c, CURLOPT_USERNAME, o->username);
                curl_easy_setopt(c, CURLOPT_PASSWORD, o->password);
                if (o->auth == GC_DELIVER_AUTH_PLAIN)
                        curl_easy_setopt(c, CURLOPT_LOGIN_OPTIONS, "AUTH=PLAIN");
                else if (o->auth == GC_DELIVER_AUTH_LOGIN)
                        curl_easy_setopt(c, CURLOPT_LOGIN_OPTIONS, "AUTH=LOGIN");
        }
        cc = curl_easy_perform(c);
        if (cc != CURLE_OK) {
                char origin[128];

                gc_deliver_url_origin(o->url, origin, sizeof(origin));
                gc_errf(err, errlen, "sending through %s failed: %s", origin,
                        cerr[0] ? cerr : curl_easy_strerror(cc));
                r = cc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EIO;
                goto finish;
        }
        r = 0;
finish:
        curl_slist_free_all(rcpt);
        if (c)
                curl_easy_cleanup(c);
        return r;
}
