/* httpd: listen-address parsing, query encoding and the helpers handlers call on a response. */
#include "httpd_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libwebsockets.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "../util/util.h"

int gc_httpd__parse_listen(const char *s, char *ret_host, size_t hostlen, int *ret_port,
                           int *ret_family)
{
        char host[INET6_ADDRSTRLEN];
        unsigned char addr[sizeof(struct in6_addr)];
        const char *colon, *hs, *he;
        int64_t port;
        int family;

        if (!s || !*s)
                return -EINVAL;
        if (s[0] == '[') {
                hs = s + 1;
                he = strchr(hs, ']');
                if (!he || he[1] != ':')
                        return -EINVAL;
                colon = he + 1;
                family = AF_INET6;
        } else {
                hs = s;
                colon = strrchr(s, ':');
                if (!colon)
                        return -EINVAL;
                he = colon;
                family = AF_INET;
        }
        if (he == hs || (size_t)(he - hs) >= sizeof(host))
                return -EINVAL;
        memcpy(host, hs, (size_t)(he - hs));
        host[he - hs] = '\0';
        if (inet_pton(family, host, addr) != 1)
                return -EINVAL;
        /* Digits only: gc_parse_int64 would accept a sign. */
        if (!colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
            strlen(colon + 1) > 5)
                return -EINVAL;
        if (gc_parse_int64(colon + 1, &port) < 0 || port > 65535)
                return -EINVAL;
        if (strlen(host) >= hostlen)
                return -E2BIG;
        if ((family == AF_INET && !strcmp(host, "0.0.0.0")) ||
            (family == AF_INET6 && !memcmp(addr, &in6addr_any, sizeof(in6addr_any))))
                host[0] = '\0';
        gc_strlcpy(ret_host, host, hostlen);
        *ret_port = (int)port;
        *ret_family = family;
        return 0;
}

static int encode_part(gc_buf *b, const char *s)
{
        static const char hex[] = "0123456789ABCDEF";
        const unsigned char *p;
        int r = 0;

        for (p = (const unsigned char *)s; *p && r == 0; p++) {
                if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~') {
                        r = gc_buf_append(b, p, 1);
                } else {
                        char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};

                        r = gc_buf_append(b, esc, sizeof(esc));
                }
        }
        return r;
}

int gc_httpd__query_encode(gc_buf *b, const gc_httpd_param *params, size_t n)
{
        int r = 0;

        for (size_t i = 0; i < n && r == 0; i++) {
                if (i)
                        r = gc_buf_puts(b, "&");
                if (r == 0)
                        r = encode_part(b, params[i].name);
                if (r == 0)
                        r = gc_buf_puts(b, "=");
                if (r == 0)
                        r = encode_part(b, params[i].value);
        }
        return r;
}

const char *gc_httpd_query(const gc_httpd_request *req, const char *name)
{
        if (!req || !name)
                return NULL;
        for (size_t i = 0; i < req->n_params; i++)
                if (!strcmp(req->params[i].name, name))
                        return req->params[i].value;
        return NULL;
}

bool gc_httpd__header_name_ok(const char *name)
{
        size_t n;

        if (!name)
                return false;
        n = strlen(name);
        if (n == 0 || n > GC_HTTPD__MAX_HDR_NAME)
                return false;
        /* tchar from RFC 9110 section 5.6.2 */
        return strspn(name, "!#$%&'*+-.^_`|~0123456789"
                            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") == n;
}

int gc_httpd_add_header(gc_httpd_response *res, const char *name, const char *value)
{
        static const char *const reserved[] = {"content-length", "content-type", "connection",
                                               "transfer-encoding"};
        size_t old;
        int r;

        if (!res || !value || !gc_httpd__header_name_ok(name))
                return -EINVAL;
        for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
                if (!strcasecmp(name, reserved[i]))
                        return -EINVAL;
        /* Control characters would let a value start a header or a body of its own. */
        for (const unsigned char *p = (const unsigned char *)value; *p; p++)
                if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
                        return -EINVAL;
        /* Stored as "name\0value\0" pairs; rolled back whole on -E2BIG. */
        old = res->headers_.len;
        r = gc_buf_append(&res->headers_, name, strlen(name) + 1);
        if (r == 0)
                r = gc_buf_append(&res->headers_, value, strlen(value) + 1);
        if (r < 0 && res->headers_.data)
                gc_buf_truncate(&res->headers_, old);
        return r;
}

int gc_httpd_error(gc_httpd_response *res, int status, const char *msg)
{
        int r;

        if (!res || status < 200 || status > 599 || !msg)
                return -EINVAL;
        res->status = status;
        res->content_type = "application/json";
        gc_buf_reset(&res->body);
        r = gc_buf_puts(&res->body, "{\"error\":");
        if (r == 0)
                r = gc_buf_json_str(&res->body, msg);
        if (r == 0)
                r = gc_buf_printf(&res->body, ",\"status\":%d}", status);
        return r;
}

int gc_httpd_defer(gc_httpd_response *res, gc_httpd_handler fn, void *ud)
{
        if (!res || !fn)
                return -EINVAL;
        res->defer_.fn = fn;
        res->defer_.ud = ud;
        return 0;
}

/* A control character, a tab aside when tab_ok; a CR is one unless it ends the line. */
static bool raw_ctl(const char *p, size_t n, bool tab_ok)
{
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)p[i];

                if (c == '\r' && i + 1 == n)
                        continue;
                if ((c < 0x20 && !(tab_ok && c == '\t')) || c == 0x7f)
                        return true;
        }
        return false;
}

static bool hex_digit(char c)
{
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The request target t[0..n): percent escapes and the number of parameters; 0 or a 400. */
static int target_check(const char *t, size_t n, size_t *ret_params, const char **ret_msg)
{
        const char *q = memchr(t, '?', n);
        size_t params = 0;

        for (size_t i = 0; i < n; i++) {
                if (t[i] != '%')
                        continue;
                if (i + 2 >= n || !hex_digit(t[i + 1]) || !hex_digit(t[i + 2])) {
                        *ret_msg = "malformed percent escape";
                        return 400;
                }
                if (t[i + 1] == '0' && t[i + 2] == '0') {
                        *ret_msg = q && t + i > q ? "control character in a query parameter"
                                                  : "control character in the path";
                        return 400;
                }
        }
        for (const char *a = q ? q + 1 : t + n, *e = t + n; a < e;) {
                const char *amp = memchr(a, '&', (size_t)(e - a));
                const char *end = amp ? amp : e;

                params += end > a;
                a = end + 1;
        }
        *ret_params = params;
        if (params > GC_HTTPD_MAX_PARAMS) {
                *ret_msg = "too many query parameters";
                return 400;
        }
        return 0;
}

/*
 * lws 4.1 reads header names through its lexical table: a name that is a proper prefix of one
 * it knows and not itself one ("A", "Ho", "Content", "Accept-Enc"), followed by ':', leaves its
 * parser waiting for the rest, and the request is never answered (the connection hangs until
 * the client gives up). 1 for such a name (compared without case), from lws' own table, so it
 * holds for the lws built against.
 */
bool gc_httpd__lws_stalls(const char *name, size_t n)
{
        bool prefix = false;

        if (n == 0)
                return false;
        for (int t = 0; t < WSI_TOKEN_COUNT; t++) {
                const char *s = (const char *)lws_token_to_string((enum lws_token_indexes)t);
                size_t sl = s ? strlen(s) : 0;

                /* Header tokens end with ':' ("accept:"); methods with ' ' ("get "). */
                if (sl < 2 || s[sl - 1] != ':' || n > sl - 1 || strncasecmp(s, name, n) != 0)
                        continue;
                if (n == sl - 1)
                        return false; /* a name it knows ("Accept", though "Accept-Encoding") */
                prefix = true;
        }
        return prefix;
}

int gc_httpd__head_check(const char *p, size_t n, size_t limit, size_t *ret_len,
                         const char **ret_msg)
{
        const char *eol, *line, *t, *te;
        size_t i = 0, params = 0, lines = 0;
        int r;

        *ret_len = 0;
        /* A method (1 to 16 capitals) and a space; anything else is libwebsockets' to refuse. */
        while (i < n && i < 16 && p[i] >= 'A' && p[i] <= 'Z')
                i++;
        if (i == n)
                return GC_HTTPD__HEAD_MORE;
        if (i == 0 || p[i] != ' ')
                return GC_HTTPD__HEAD_PASS;
        eol = memchr(p, '\n', n);
        if (raw_ctl(p + i, (size_t)((eol ? eol : p + n) - (p + i)), false)) {
                *ret_msg = "control character in the request line";
                return 400;
        }
        if (!eol) {
                *ret_msg = "URL too long";
                return n >= limit ? 414 : GC_HTTPD__HEAD_MORE;
        }
        t = p + i + 1;
        te = memchr(t, ' ', (size_t)(eol - t));
        if (!te)
                te = eol > t && eol[-1] == '\r' ? eol - 1 : eol;
        r = target_check(t, (size_t)(te - t), &params, ret_msg);
        if (r)
                return r;
        for (line = eol + 1;; line = eol + 1) {
                size_t len;

                eol = line < p + n ? memchr(line, '\n', (size_t)(p + n - line)) : NULL;
                len = (size_t)((eol ? eol : p + n) - line);
                if (raw_ctl(line, len, true)) {
                        *ret_msg = "control character in a header";
                        return 400;
                }
                if (!eol) {
                        *ret_msg = "request header fields too large";
                        return n >= limit ? 431 : GC_HTTPD__HEAD_MORE;
                }
                if (len == 0 || (len == 1 && line[0] == '\r'))
                        break;
                {
                        const char *colon = memchr(line, ':', len);

                        if (colon && gc_httpd__lws_stalls(line, (size_t)(colon - line))) {
                                *ret_msg = "a header name that is the beginning of one this "
                                           "server's HTTP library knows, and that it cannot "
                                           "read";
                                return 400;
                        }
                }
                if (++lines + params > GC_HTTPD__MAX_HEAD_PIECES) {
                        *ret_msg = "too many header lines";
                        return 431;
                }
        }
        if ((size_t)(eol + 1 - p) > limit) {
                *ret_msg = "request header fields too large";
                return 431;
        }
        *ret_len = (size_t)(eol + 1 - p);
        return GC_HTTPD__HEAD_PASS;
}
