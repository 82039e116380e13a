/* embedded: the example cluster compiled into the binary for `gpu-cost demo`. */
#ifndef GC_EMBEDDED_H
#define GC_EMBEDDED_H

#include <stddef.h>

typedef struct gc_embedded_file {
        const char *name; /* "pods.json", ... */
        const char *data; /* NUL-terminated */
        size_t len;
} gc_embedded_file;

extern const gc_embedded_file gc_embedded_files[]; /* ends with a NULL name */

#endif
