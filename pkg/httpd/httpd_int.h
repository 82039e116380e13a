/* httpd internals shared by the server and the request helpers; not part of the public API. */
#ifndef GC_HTTPD_INT_H
#define GC_HTTPD_INT_H

#include <stddef.h>

#include "httpd.h"

#define GC_HTTPD__MAX_EXTRA_HEADERS 4096 /* bytes of handler-added response headers */
#define GC_HTTPD__MAX_HDR_LOOKUPS   32   /* gc_httpd_header() calls per request */
#define GC_HTTPD__MAX_HDR_NAME      64

struct lws;

/* What req->internal_ points to. */
struct gc_httpd__req {
        struct lws *wsi;
        char *hdr_vals[GC_HTTPD__MAX_HDR_LOOKUPS]; /* freed after the handler returns */
        size_t n_hdr;
};

/*
 * "1.2.3.4:80" or "[::1]:80". ret_host gets the literal address without brackets ("" for the
 * wildcards 0.0.0.0 and ::), ret_family AF_INET or AF_INET6.
 */
int gc_httpd__parse_listen(const char *s, char *ret_host, size_t hostlen, int *ret_port,
                           int *ret_family);
/* Appends the parameters percent-encoded (RFC 3986 unreserved characters kept). */
int gc_httpd__query_encode(gc_buf *b, const gc_httpd_param *params, size_t n);
/* A header name: an RFC 9110 token of at most GC_HTTPD__MAX_HDR_NAME bytes. */
bool gc_httpd__header_name_ok(const char *name);

#endif
