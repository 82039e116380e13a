/* fuzz_dra: arbitrary bytes through the ResourceSlice, ResourceClaim, DeviceClass and pod decoders,
 * then the accountant (shared claims, shared devices, DRA capacity) and a query, as a dump would
 * go; what the decoders keep and what the query answers must stay within their stated bounds. */
#include <math.h>
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
        /* A device: finite GPU-equivalents, at most one GPU unless a rule says more; a shared
           one's capacities positive and at most GC_DRA_MAX_CAPS. A claim: 1..32 devices, each
           consumed amount finite and not negative. */
        for (size_t i = 0; i < devs.n; i++) {
                const gc_dra_device *d = &devs.v[i];

                if (!isfinite(d->geq) || d->geq < 0 ||
                    (d->kind != GC_DRA_CONFIGURED && d->geq > 1.0) || d->n_caps > GC_DRA_MAX_CAPS ||
                    (!d->shared && d->n_caps))
                        __builtin_trap();
                for (size_t k = 0; k < d->n_caps; k++)
                        if (!d->caps[k].name || !isfinite(d->caps[k].value) ||
                            d->caps[k].value <= 0)
                                __builtin_trap();
        }
        for (size_t i = 0; i < claims.n; i++) {
                const gc_claim *c = &claims.v[i];

                if (c->n_devices < 1 || c->n_devices > GC_CLAIM_MAX_RESULTS || !c->devices)
                        __builtin_trap();
                for (size_t k = 0; k < c->n_devices; k++)
                        for (size_t u = 0; u < c->devices[k].n_used; u++)
                                if (!isfinite(c->devices[k].used[u].value) ||
                                    c->devices[k].used[u].value < 0)
                                        __builtin_trap();
        }
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
        /* The answer adds up: rows sum to the total, nothing negative or not finite. */
        if (gc_ledger_query(ledger, &q, &sum) == 0) {
                double rows = 0;

                for (size_t i = 0; i < sum.n_rows; i++) {
                        if (!isfinite(sum.rows[i].gpu_seconds) || sum.rows[i].gpu_seconds < 0)
                                __builtin_trap();
                        rows += sum.rows[i].gpu_seconds;
                }
                if (!isfinite(sum.total.gpu_seconds) || !isfinite(sum.capacity.gpu_seconds) ||
                    sum.capacity.gpu_seconds < 0 || sum.idle.gpu_seconds < 0 ||
                    fabs(rows - sum.total.gpu_seconds) > 1e-6 * (1 + fabs(rows)))
                        __builtin_trap();
        }
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
