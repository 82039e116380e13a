/* fuzz_kubeconfig: any kubeconfig text gives a configuration or a message, never a crash. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kube/kube.h"
#include "kube/kube_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const contexts[] = {NULL, "a", "dev"};
        char err[512];

        for (size_t i = 0; i < sizeof(contexts) / sizeof(contexts[0]); i++) {
                gc_kube_config c;
                int r;

                memset(&c, 0, sizeof(c));
                err[0] = '\0';
                r = gc__kube_config_parse((const char *)data, size, "/base", contexts[i], &c, err,
                                          sizeof(err));
                if (r < 0) {
                        /* Refused: with a message, and nothing handed out. */
                        if (err[0] == '\0' || c.server)
                                __builtin_trap();
                        continue;
                }
                if (!c.server ||
                    (strncmp(c.server, "https://", 8) != 0 && strncmp(c.server, "http://", 7) != 0))
                        __builtin_trap();
                /* Paired credentials only. */
                if ((c.client_cert_file || c.client_cert_data) !=
                    (c.client_key_file || c.client_key_data))
                        __builtin_trap();
                gc_kube_config_release(&c);
        }
        return 0;
}
