/* fuzz_authz: any Authorization header or --auth-resource text is parsed or refused, never a
 * crash, and what is accepted holds. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "authz/authz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int name_ok(const char *s, size_t cap)
{
        size_t n = strnlen(s, cap);

        if (n == cap)
                return 0;
        return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = malloc(size + 1), err[256];
        gc_authz_resource res;
        const char *tok = NULL;
        size_t len = 0;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';

        /* The header as lws hands it over (up to the first NUL). */
        if (gc_authz_bearer(s, &tok, &len) == 0) {
                /* Inside the header, after the scheme, without surrounding blanks. */
                if (tok < s || tok + len > s + strlen(s) || len == 0 || tok[0] == ' ' ||
                    tok[0] == '\t' || tok[len - 1] == ' ' || tok[len - 1] == '\t')
                        __builtin_trap();
        }

        err[0] = '\0';
        if (gc_authz_resource_parse(s, &res, err, sizeof(err)) == 0) {
                if (!res.resource[0] || !name_ok(res.ns, sizeof(res.ns)) ||
                    !name_ok(res.group, sizeof(res.group)) ||
                    !name_ok(res.resource, sizeof(res.resource)) ||
                    !name_ok(res.subresource, sizeof(res.subresource)) ||
                    !name_ok(res.name, sizeof(res.name)))
                        __builtin_trap();
        } else if (!err[0]) {
                __builtin_trap(); /* refused without a message */
        }
        free(s);
        return 0;
}
