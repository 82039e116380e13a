/* use: measured use of a shared GPU handed to the ledger's usage basis (docs/ledger.md). */
#include "account_int.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The pod's interval key: its uid when the accountant knows it, else by namespace/name. */
static const char *gc__use_key(gc_accountant *a, const gc_account_use *h)
{
        const char *k = NULL;
        size_t v;

        if (h->pod_uid && *h->pod_uid) {
                k = gc_strpool_intern0(a->pool, h->pod_uid);
                if (k && gc_ledger_get_usage(a->ledger, k, &(gc_usage){0}) == 0)
                        return k;
                if (k && gc_ptrmap_get(&a->dra_pod_map, k, &v) == 0)
                        return k;
        }
        if (h->ns && h->pod) {
                gc_buf b;
                const char *name;

                gc_buf_init(&b, 1024);
                name = gc_buf_printf(&b, "%s/%s", h->ns, h->pod) == 0
                           ? gc_strpool_intern0(a->pool, b.data)
                           : NULL;
                gc_buf_free(&b);
                if (name && gc_ptrmap_get(&a->pod_names, name, &v) == 0)
                        return a->named[v].key;
        }
        return NULL;
}

int gc_account_split_by_use(gc_accountant *a, int64_t from, int64_t to, const gc_account_use *h,
                            size_t n)
{
        gc_use_holder *lh;
        const char **keys;
        size_t found = 0, nk = 0;
        int r = 0;

        if (!a || (!h && n) || n > GC_LEDGER_MAX_HOLDERS)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!isfinite(h[i].use) || h[i].use < 0)
                        return -EINVAL;
        lh = calloc(n ? n : 1, sizeof(*lh));
        keys = calloc((n ? n : 1) * GC_LEDGER_MAX_SHARE_KEYS, sizeof(*keys));
        if (!lh || !keys) {
                free(lh);
                free(keys);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n && r == 0; i++) {
                const char *k = gc__use_key(a, &h[i]);
                uint32_t parts = 1;
                size_t v;

                if (!k)
                        continue;
                if (gc_ptrmap_get(&a->dra_pod_map, k, &v) == 0 && a->dra_pods[v].n_parts > 0)
                        parts = a->dra_pods[v].n_parts;
                if (parts > GC_LEDGER_MAX_SHARE_KEYS)
                        parts = GC_LEDGER_MAX_SHARE_KEYS;
                lh[found].keys = &keys[nk];
                lh[found].n_keys = 0;
                lh[found].use = h[i].use;
                for (uint32_t p = 0; p < parts; p++) {
                        const char *pk = gc__account_piece_key(a, k, p);

                        if (!pk) {
                                r = -ENOMEM;
                                break;
                        }
                        keys[nk++] = pk;
                        lh[found].n_keys++;
                }
                found++;
        }
        if (r == 0)
                r = gc_ledger_split_by_use(a->ledger, from, to, lh, found);
        free(lh);
        free(keys);
        return r < 0 ? r : (int)found;
}
