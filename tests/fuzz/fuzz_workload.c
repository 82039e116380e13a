/* fuzz_workload: arbitrary bytes through the ReplicaSet and Job decoders into a small owner table
 * (its bound reached), then the pod decoder and each pod's workload, as analyze goes. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "config/config.h"
#include "model/model.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        gc_config *cfg = gc_config_default();
        gc_strpool *pool = gc_strpool_new(1u << 22);
        gc_owner_table *t = gc_owner_table_new(8);
        gc_pod_vec pods = {.limit = 64};
        gc_decode_stats st;
        gc_model_opts o;
        gc_diag diag;
        char err[256];
        const char *json = (const char *)data;

        memset(&diag, 0, sizeof(diag));
        if (!cfg || !pool || !t)
                goto done;
        gc_config_model_opts(cfg, pool, &o);
        (void)gc_decode_owners(json, size, "ReplicaSet", &o, t, &st, &diag, err, sizeof(err));
        (void)gc_decode_owners(json, size, "Job", &o, t, &st, &diag, err, sizeof(err));
        (void)gc_decode_pods(json, size, &o, &pods, &st, &diag, err, sizeof(err));
        for (size_t i = 0; i < pods.n; i++) {
                const char *w = gc_workload_of(&pods.v[i], t, pool);

                if (w && strnlen(w, GC_WORKLOAD_MAX) >= GC_WORKLOAD_MAX)
                        __builtin_trap();
                if (pods.v[i].controller_uid)
                        (void)gc_owner_gone(t, pods.v[i].controller_uid, 10);
        }
        (void)gc_owner_sweep(t, "Job", 1, 5);
        (void)gc_owner_expire(t, 11);
        for (size_t i = 0; i < pods.n; i++)
                (void)gc_workload_of(&pods.v[i], t, pool);
done:
        gc_pod_vec_free(&pods);
        gc_diag_clear(&diag);
        gc_owner_table_free(t);
        gc_strpool_free(pool);
        gc_config_free(cfg);
        return 0;
}
