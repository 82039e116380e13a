/* fuzz_decode: arbitrary bytes through the pod, node and namespace list decoders and GPU shares. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/model.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const team_keys[] = {"team", "app.kubernetes.io/team"};
static const char *const project_keys[] = {"project"};

/* Short inputs are also tried as a quantity and a MIG profile: those parsers see node labels. */
static void small_parsers(const uint8_t *data, size_t size)
{
        char s[80];
        int64_t milli;
        double share;
        int est;

        if (size >= sizeof(s))
                return;
        memcpy(s, data, size);
        s[size] = '\0';
        (void)gc_quantity_parse(s, &milli);
        (void)gc_mig_share("NVIDIA-H100-80GB-HBM3", s, &share, &est);
        (void)gc_mig_share(s, "1g.10gb", &share, &est);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        gc_strpool *pool = gc_strpool_new(1u << 22);
        gc_res_table *res = gc_res_table_new_default();
        gc_pod_vec pods = {.limit = 64};
        gc_node_vec nodes = {.limit = 64};
        gc_ns_vec nss = {.limit = 64};
        gc_decode_stats st;
        gc_model_opts o;
        gc_diag diag;
        char err[256];
        const char *json = (const char *)data;

        memset(&diag, 0, sizeof(diag));
        if (!pool || !res || gc_res_table_set(res, "amd.com/gpu", GC_RES_FIXED, 1.0) < 0)
                goto done;
        memset(&o, 0, sizeof(o));
        o.pool = pool;
        o.res = res;
        o.team_keys = team_keys;
        o.n_team_keys = 2;
        o.project_keys = project_keys;
        o.n_project_keys = 1;

        (void)gc_decode_pods(json, size, &o, &pods, &st, &diag, err, sizeof(err));
        (void)gc_decode_nodes(json, size, &o, &nodes, &st, &diag, err, sizeof(err));
        (void)gc_decode_namespaces(json, size, &o, &nss, &st, &diag, err, sizeof(err));

        /* Every kept pod priced on every kept node, as the ledger would. */
        for (size_t i = 0; i < pods.n; i++) {
                for (size_t k = 0; k <= nodes.n && k < 8; k++) {
                        double geq;
                        int est;

                        (void)gc_pod_gpu_equivalents(res, &pods.v[i],
                                                     k < nodes.n ? &nodes.v[k] : NULL, &geq, &est);
                }
        }
        small_parsers(data, size);
done:
        gc_diag_clear(&diag);
        gc_pod_vec_free(&pods);
        gc_node_vec_free(&nodes);
        gc_ns_vec_free(&nss);
        gc_res_table_free(res);
        gc_strpool_free(pool);
        return 0;
}
