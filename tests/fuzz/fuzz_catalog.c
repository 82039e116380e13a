/* fuzz_catalog: gc_catalog_parse on arbitrary bytes; what parses must round-trip and look up. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "price/price.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const models[] = {
            "NVIDIA-H100-80GB-HBM3", "NVIDIA H100 80GB HBM3", "Tesla-T4", "", "unknown", "*"};
        static const char *const caps[] = {"on-demand", "spot", "reserved", "*"};
        char err[256];
        gc_catalog *c, *back;
        gc_buf b;

        c = gc_catalog_parse((const char *)data, size, err, sizeof(err));
        if (!c) {
                /* Every refusal explains itself. */
                if (!err[0])
                        abort();
                return 0;
        }
        for (size_t m = 0; m < sizeof(models) / sizeof(models[0]); m++) {
                for (size_t k = 0; k < sizeof(caps) / sizeof(caps[0]); k++) {
                        const gc_price_entry *e = NULL;

                        if (gc_catalog_lookup(c, models[m], caps[k], "us-east-1", &e) == 0 &&
                            (e < c->entries || e >= c->entries + c->n))
                                abort();
                }
        }
        /* What was accepted is written back and reads back the same. */
        gc_buf_init(&b, 64u << 20);
        if (gc_catalog_to_json(c, &b) < 0)
                abort();
        back = gc_catalog_parse(b.data, b.len, err, sizeof(err));
        if (!back || back->n != c->n || strcmp(back->currency, c->currency) != 0)
                abort();
        for (size_t i = 0; i < c->n; i++) {
                if (strcmp(back->entries[i].model, c->entries[i].model) != 0 ||
                    strcmp(back->entries[i].capacity_type, c->entries[i].capacity_type) != 0 ||
                    back->entries[i].price_per_gpu_hour != c->entries[i].price_per_gpu_hour)
                        abort();
        }
        gc_catalog_free(back);
        gc_buf_free(&b);
        gc_catalog_free(c);
        return 0;
}
