/* web: the dashboard's files (web/), compiled into the binary; no network needed to show it. */
#ifndef GC_WEB_H
#define GC_WEB_H

#include <stddef.h>

typedef struct gc_web_asset {
        const char *path; /* "/index.html", "/app.js", ... */
        const unsigned char *data;
        size_t len;
        const char *content_type; /* "text/html; charset=utf-8", ... */
        const char *etag;         /* "\"<hex of a content hash>\"" */
} gc_web_asset;

/* The asset served at path ("/" is "/index.html"), or NULL when there is none. */
const gc_web_asset *gc_web_find(const char *path);

#endif
