/* web: looks up the dashboard's embedded files by request path. */
#include <string.h>

#include "web_int.h"

/* Longest path worth comparing: asset names are short, and a request path is untrusted. */
#define GC_WEB_PATH_MAX 128

const gc_web_asset *gc_web_find(const char *path)
{
        const gc_web_asset *a;

        if (!path || path[0] != '/' || strnlen(path, GC_WEB_PATH_MAX + 1) > GC_WEB_PATH_MAX)
                return NULL;
        if (strcmp(path, "/") == 0)
                path = "/index.html";
        /* A handful of files: a linear scan costs less than anything cleverer. */
        for (a = gc__web_assets; a->path; a++)
                if (strcmp(a->path, path) == 0)
                        return a;
        return NULL;
}
