/* fuzz_config: the configuration parser must refuse any bad input with a message, never crash. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char err[512];
        gc_config *c;

        err[0] = '\0';
        c = gc_config_parse((const char *)data, size, err, sizeof(err));
        /* Either a configuration or a message naming what was wrong. */
        if (!c && err[0] == '\0')
                __builtin_trap();
        gc_config_free(c);
        return 0;
}
