/* fuzz_dra: arbitrary bytes through the ResourceSlice, ResourceClaim, DeviceClass and pod decoders,
 * then the accountant (shared claims, DRA capacity) and a query, as a dump would go. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "account/account.h"
#include "config/config.h"
#include "model/model.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const gc_dra_rule rules[] = {
    {"gpu.example.com", "model", "X1", "Example-X1", 0.5},
    {"gpu.example.com", "cores", NULL, NULL, 1.0},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const gc_dra_rules rs = {rules, 2, 0};
        gc_config *cfg = gc_config_default();
        gc_strpool *pool = gc_strpool_new(1u << 22);
        gc_ledger *ledger = NULL;
        gc_accountant *acct = NULL;
        gc_dra_device_vec devs = {.limit = 256};
        gc_claim_vec claims = {.limit = 64};
        gc_pod_vec pods = {.limit = 64};
        gc_node_vec nodes = {.limit = 16};
        gc_device_class_vec classes = {.limit = 16};
        gc_accountant_opts ao;
        gc_ledger_opts lo;
        gc_decode_stats st;
        gc_model_opts o;
        gc_cost_summary sum;
        gc_query q;
        gc_diag diag;
        char err[256], model[64];
        const char *json = (const char *)data;

        memset(&diag, 0, sizeof(diag));
        memset(&sum, 0, sizeof(sum));
        if (!cfg || !pool)
                goto done;
        memset(&lo, 0, sizeof(lo));
        lo.pool = pool;
        lo.max_intervals = 4096;
        ledger = gc_ledger_new(&lo);
        gc_config_account_opts(cfg, &ao);
        acct = ledger ? gc_accountant_new(&ao, pool, ledger) : NULL;
        if (!acct)
                goto done;
        gc_config_model_opts(cfg, pool, &o);
        o.dra = &rs;
        (void)gc_decode_slices(json, size, &o, &devs, &st, &diag, err, sizeof(err));
        (void)gc_decode_claims(json, size, &o, &claims, &st, &diag, err, sizeof(err));
        (void)gc_decode_device_classes(json, size, &o, &classes, &st, &diag, err, sizeof(err));
        for (size_t i = 0; i < devs.n; i++)
                (void)gc_account_dra_device(acct, &devs.v[i]);
        for (size_t i = 0; i < claims.n; i++)
                (void)gc_account_claim(acct, &claims.v[i], &diag);
        o.keep_node = gc_accountant_dra_node;
        o.keep_node_ud = acct;
        (void)gc_decode_nodes(json, size, &o, &nodes, &st, &diag, err, sizeof(err));
        (void)gc_decode_pods(json, size, &o, &pods, &st, &diag, err, sizeof(err));
        for (size_t i = 0; i < nodes.n; i++)
                (void)gc_account_node(acct, &nodes.v[i], &diag);
        for (size_t i = 0; i < pods.n; i++) {
                (void)gc_account_pod(acct, &pods.v[i], &diag);
                if (i % 2)
                        (void)gc_account_pod_gone(acct, &pods.v[i], pods.v[i].bound_at + 60, 0,
                                                  &diag);
        }
        memset(&q, 0, sizeof(q));
        q.start = 0;
        q.end = INT64_C(4102444800); /* 2100-01-01 */
        q.by[0] = GC_DIM_POD;
        q.n_by = 1;
        (void)gc_ledger_query(ledger, &q, &sum);
        if (size < 128) {
                char s[128];

                memcpy(s, data, size);
                s[size] = '\0';
                (void)gc_dra_model_name(s, model, sizeof(model));
        }
done:
        gc_cost_summary_free(&sum);
        gc_diag_clear(&diag);
        gc_dra_device_vec_free(&devs);
        gc_claim_vec_free(&claims);
        gc_device_class_vec_free(&classes);
        gc_pod_vec_free(&pods);
        gc_node_vec_free(&nodes);
        gc_accountant_free(acct);
        gc_ledger_free(ledger);
        gc_strpool_free(pool);
        gc_config_free(cfg);
        return 0;
}
