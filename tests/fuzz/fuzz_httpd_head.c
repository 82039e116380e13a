/* fuzz_httpd_head: any bytes as the start of a request head, looked at before libwebsockets. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "httpd/httpd_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *p = (const char *)data, *msg = NULL;
        size_t len = 0, len2 = 0, limit = 256;
        int r = gc_httpd__head_check(p, size, limit, &len, &msg);

        if (r != GC_HTTPD__HEAD_MORE && r != GC_HTTPD__HEAD_PASS && r != 400 && r != 414 &&
            r != 431)
                __builtin_trap();
        if (r >= 400 && (!msg || !*msg))
                __builtin_trap();
        /* A whole head ends with its empty line, within what was given and the limit, and is
         * whole on its own: the bytes after it are the next request's. */
        if (r == GC_HTTPD__HEAD_PASS && len) {
                if (len > size || len > limit || p[len - 1] != '\n')
                        __builtin_trap();
                if (gc_httpd__head_check(p, len, limit, &len2, &msg) != GC_HTTPD__HEAD_PASS ||
                    len2 != len)
                        __builtin_trap();
        }
        /* Not whole yet: never at the limit. */
        if (r == GC_HTTPD__HEAD_MORE && size >= limit)
                __builtin_trap();
        return 0;
}
