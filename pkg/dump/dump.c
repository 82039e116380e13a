/* dump: decodes `kubectl get -o json` dumps and feeds them to the accountant, nodes first. */
#include "dump.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

/* Enough for the largest cluster a dump can come from; the vectors refuse more. */
#define GC__DUMP_MAX_PODS       10000000
#define GC__DUMP_MAX_NODES      1000000
#define GC__DUMP_MAX_NAMESPACES 1000000
#define GC__DUMP_MAX_DEVICES    10000000

int gc_dump_start(gc_dump *d, const gc_dump_input *config, const gc_dump_input *prices, char *err,
                  size_t errlen)
{
        return gc_dump_start_labels(d, config, prices, NULL, 0, err, errlen);
}

int gc_dump_start_labels(gc_dump *d, const gc_dump_input *config, const gc_dump_input *prices,
                         const char *const *keys, size_t n_keys, char *err, size_t errlen)
{
        gc_ledger_opts lo;
        gc_accountant_opts ao;
        gc_mirror_opts mo;
        char msg[512];
        int r;

        if (!d || (n_keys && !keys))
                return -EINVAL;
        memset(d, 0, sizeof(*d));
        if (config) {
                d->cfg = gc_config_parse(config->data, config->len, msg, sizeof(msg));
                if (!d->cfg) {
                        snprintf(err, errlen, "%s: %s", config->name, msg);
                        return -EINVAL;
                }
        } else {
                d->cfg = gc_config_default();
                if (!d->cfg)
                        goto nomem;
        }
        if (prices) {
                gc_catalog *cat = gc_catalog_parse(prices->data, prices->len, msg, sizeof(msg));

                if (!cat) {
                        snprintf(err, errlen, "%s: %s", prices->name, msg);
                        return -EINVAL;
                }
                gc_config_set_catalog(d->cfg, cat);
        }
        d->pool = gc_strpool_new((size_t)1 << 30);
        if (!d->pool)
                goto nomem;
        for (size_t i = 0; i < n_keys; i++) {
                r = gc_config_add_label_key(d->cfg, keys[i], strlen(keys[i]), msg, sizeof(msg));
                if (r == -ENOMEM)
                        goto nomem;
                if (r < 0) {
                        snprintf(err, errlen, "%s", msg);
                        return r;
                }
        }
        memset(&lo, 0, sizeof(lo));
        lo.pool = d->pool;
        lo.label_keys = d->cfg->label_keys;
        lo.n_label_keys = d->cfg->n_label_keys;
        d->ledger = gc_ledger_new(&lo);
        gc_config_account_opts(d->cfg, &ao);
        if (d->ledger)
                d->acct = gc_accountant_new(&ao, d->pool, d->ledger);
        if (!d->acct)
                goto nomem;
        /* No owners: a dump's owner files go straight into the table (gc_dump_load_owners). */
        memset(&mo, 0, sizeof(mo));
        mo.pool = d->pool;
        mo.ledger = d->ledger;
        mo.acct = d->acct;
        mo.diag = &d->diag;
        mo.currency = d->cfg->catalog ? d->cfg->catalog->currency : NULL;
        d->mirror = gc_mirror_new(&mo);
        if (!d->mirror)
                goto nomem;
        d->pods.limit = GC__DUMP_MAX_PODS;
        d->nodes.limit = GC__DUMP_MAX_NODES;
        d->nss.limit = GC__DUMP_MAX_NAMESPACES;
        d->devs.limit = GC__DUMP_MAX_DEVICES;
        d->claims.limit = GC__DUMP_MAX_PODS;
        return 0;
nomem:
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
}

int gc_dump_load(gc_dump *d, const gc_dump_input *pods, const gc_dump_input *nodes,
                 const gc_dump_input *nss, char *err, size_t errlen)
{
        gc_model_opts mo;
        gc_decode_stats st;
        char msg[512];
        int r;

        if (!d || !d->mirror || !pods || !nodes)
                return -EINVAL;
        gc_config_model_opts(d->cfg, d->pool, &mo);
        if (d->devs.n) {
                mo.keep_node = gc_accountant_dra_node;
                mo.keep_node_ud = d->acct;
        }
        r = gc_decode_nodes(nodes->data, nodes->len, &mo, &d->nodes, &st, &d->diag, msg,
                            sizeof(msg));
        if (r < 0) {
                snprintf(err, errlen, "%s: %s", nodes->name, msg);
                return r;
        }
        if (nss) {
                r = gc_decode_namespaces(nss->data, nss->len, &mo, &d->nss, &st, &d->diag, msg,
                                         sizeof(msg));
                if (r < 0) {
                        snprintf(err, errlen, "%s: %s", nss->name, msg);
                        return r;
                }
        }
        r = gc_decode_pods(pods->data, pods->len, &mo, &d->pods, &st, &d->diag, msg, sizeof(msg));
        if (r < 0) {
                snprintf(err, errlen, "%s: %s", pods->name, msg);
                return r;
        }
        for (size_t i = 0; i < d->nodes.n; i++) {
                r = gc_mirror_node(d->mirror, 0, d->nodes.v[i].name, &d->nodes.v[i], 0);
                if (r < 0) {
                        snprintf(err, errlen, "node %s: cannot record: %s", d->nodes.v[i].name,
                                 strerror(-r));
                        return r;
                }
        }
        for (size_t i = 0; i < d->nss.n; i++) {
                r = gc_mirror_namespace(d->mirror, 0, &d->nss.v[i]);
                if (r < 0) {
                        snprintf(err, errlen, "namespace %s: cannot record: %s", d->nss.v[i].name,
                                 strerror(-r));
                        return r;
                }
        }
        if (d->claims.n == 0) {
                size_t with_claims = 0;

                for (size_t i = 0; i < d->pods.n; i++)
                        with_claims += d->pods.v[i].claims != NULL;
                if (with_claims)
                        gc_diag_add(&d->diag,
                                    "%zu pods name ResourceClaims, and no claim holding a GPU "
                                    "was given: their DRA GPUs are not billed (give the "
                                    "resourceclaims and resourceslices dumps)",
                                    with_claims);
        }
        for (size_t i = 0; i < d->pods.n; i++) {
                r = gc_mirror_pod(d->mirror, 0, &d->pods.v[i], 0);
                if (r < 0) {
                        snprintf(err, errlen, "pod %s/%s: cannot record: %s", d->pods.v[i].ns,
                                 d->pods.v[i].name, strerror(-r));
                        return r;
                }
        }
        return 0;
}

int gc_dump_load_dra(gc_dump *d, const gc_dump_input *claims, const gc_dump_input *slices,
                     char *err, size_t errlen)
{
        gc_model_opts mo;
        gc_decode_stats st;
        char msg[512];
        int r;

        if (!d || !d->mirror)
                return -EINVAL;
        gc_config_model_opts(d->cfg, d->pool, &mo);
        if (slices) {
                r = gc_decode_slices(slices->data, slices->len, &mo, &d->devs, &st, &d->diag, msg,
                                     sizeof(msg));
                if (r < 0) {
                        snprintf(err, errlen, "%s: %s", slices->name, msg);
                        return r;
                }
        }
        if (claims) {
                r = gc_decode_claims(claims->data, claims->len, &mo, &d->claims, &st, &d->diag, msg,
                                     sizeof(msg));
                if (r < 0) {
                        snprintf(err, errlen, "%s: %s", claims->name, msg);
                        return r;
                }
        }
        for (size_t i = 0; i < d->devs.n; i++) {
                r = gc_account_dra_device(d->acct, &d->devs.v[i]);
                if (r < 0) {
                        snprintf(err, errlen, "device %s/%s: cannot record: %s", d->devs.v[i].pool,
                                 d->devs.v[i].name, strerror(-r));
                        return r;
                }
        }
        for (size_t i = 0; i < d->claims.n; i++) {
                r = gc_mirror_claim(d->mirror, 0, d->claims.v[i].ns, d->claims.v[i].name,
                                    &d->claims.v[i]);
                if (r < 0) {
                        snprintf(err, errlen, "claim %s/%s: cannot record: %s", d->claims.v[i].ns,
                                 d->claims.v[i].name, strerror(-r));
                        return r;
                }
        }
        return 0;
}

int gc_dump_load_owners(gc_dump *d, const gc_dump_input *replicasets, const gc_dump_input *jobs,
                        char *err, size_t errlen)
{
        const gc_dump_input *in[2] = {replicasets, jobs};
        static const char *const kinds[2] = {"ReplicaSet", "Job"};
        gc_model_opts mo;
        gc_decode_stats st;
        char msg[512];
        int r;

        if (!d || !d->acct)
                return -EINVAL;
        if (!d->owners) {
                d->owners = gc_owner_table_new(0);
                if (!d->owners) {
                        snprintf(err, errlen, "out of memory");
                        return -ENOMEM;
                }
                gc_accountant_set_owners(d->acct, d->owners);
        }
        gc_config_model_opts(d->cfg, d->pool, &mo);
        for (int i = 0; i < 2; i++) {
                if (!in[i])
                        continue;
                r = gc_decode_owners(in[i]->data, in[i]->len, kinds[i], &mo, d->owners, &st,
                                     &d->diag, msg, sizeof(msg));
                if (r < 0) {
                        snprintf(err, errlen, "%s: %s", in[i]->name, msg);
                        return r;
                }
        }
        return 0;
}

void gc_dump_release(gc_dump *d)
{
        if (!d)
                return;
        d->mirror = gc_mirror_free(d->mirror);
        d->acct = gc_accountant_free(d->acct);
        d->owners = gc_owner_table_free(d->owners);
        d->ledger = gc_ledger_free(d->ledger);
        gc_pod_vec_free(&d->pods);
        gc_node_vec_free(&d->nodes);
        gc_ns_vec_free(&d->nss);
        gc_dra_device_vec_free(&d->devs);
        gc_claim_vec_free(&d->claims);
        d->pool = gc_strpool_free(d->pool);
        d->cfg = gc_config_free(d->cfg);
        gc_diag_clear(&d->diag);
}

int gc_dump_demo_settings(const char *data, size_t len, int64_t *ret_now, int64_t *ret_start,
                          int64_t *ret_end, char *err, size_t errlen)
{
        cJSON *root = cJSON_ParseWithLengthOpts(data, len, NULL, 0);
        const cJSON *now = cJSON_GetObjectItemCaseSensitive(root, "now");
        const cJSON *win = cJSON_GetObjectItemCaseSensitive(root, "window");
        const char *comma = cJSON_IsString(win) ? strchr(win->valuestring, ',') : NULL;
        int64_t t, start, end;
        int r = -EINVAL;

        if (!cJSON_IsString(now) || !comma ||
            gc_time_parse(now->valuestring, strlen(now->valuestring), &t) < 0 ||
            gc_time_parse(win->valuestring, (size_t)(comma - win->valuestring), &start) < 0 ||
            gc_time_parse(comma + 1, strlen(comma + 1), &end) < 0 || end <= start) {
                snprintf(err, errlen,
                         "demo settings: need \"now\" (RFC 3339) and \"window\" (START,END)");
                goto finish;
        }
        *ret_now = t;
        *ret_start = start;
        *ret_end = end;
        r = 0;
finish:
        cJSON_Delete(root);
        return r;
}
