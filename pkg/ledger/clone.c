/* ledger clone: a private copy of a ledger for readers on other threads (API snapshots). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "ledger_int.h"

/* Copies n items of size bytes into a fresh array of exactly n (NULL when n is 0). */
static int gc__dup_array(void **ret, const void *src, size_t n, size_t size, size_t *ret_cap)
{
        void *p = NULL;

        if (n) {
                p = malloc(n * size);
                if (!p)
                        return -ENOMEM;
                memcpy(p, src, n * size);
        }
        *ret = p;
        *ret_cap = n;
        return 0;
}

gc_ledger *gc_ledger_clone(const gc_ledger *l)
{
        gc_ledger *c;
        int rc = 0;

        if (!l) {
                errno = EINVAL;
                return NULL;
        }
        c = calloc(1, sizeof(*c));
        if (!c) {
                errno = ENOMEM;
                return NULL;
        }
        /* Scalars and the pool's strings are shared; every array and index is the copy's own. */
        c->pool = l->pool;
        c->max_intervals = l->max_intervals;
        c->max_rollup_rows = l->max_rollup_rows;
        c->empty = l->empty;
        c->unattributed = l->unattributed;
        c->folded_pod = l->folded_pod;
        c->unlabelled = l->unlabelled;
        memcpy(c->label_keys, l->label_keys, sizeof(c->label_keys));
        c->n_label_keys = l->n_label_keys;
        c->n_lbl = l->n_lbl;
        c->horizon = l->horizon;
        c->bucket = l->bucket;
        c->n_iv = l->n_iv;
        c->n_open = l->n_open;
        c->n_cap = l->n_cap;
        c->n_roll = l->n_roll;
        c->top_n = l->top_n;
        c->period_since = l->period_since;
        c->coarse_to = l->coarse_to;
        c->tz = l->tz;
        /* A zone of the original's own would go with it: the copy makes its own UTC. */
        if (l->own_tz) {
                rc = gc_tz_fixed(0, &c->own_tz);
                c->tz = c->own_tz;
        }
        if (rc == 0)
                rc = gc__tier_clone(c, l);
        if (rc == 0)
                rc = gc__dup_array((void **)&c->iv, l->iv, l->n_iv, sizeof(*l->iv), &c->cap_iv);
        if (rc == 0)
                rc = gc_index_dup(&c->iv_ix, &l->iv_ix);
        if (rc == 0)
                rc =
                    gc__dup_array((void **)&c->cap, l->cap, l->n_cap, sizeof(*l->cap), &c->cap_cap);
        if (rc == 0)
                rc = gc_index_dup(&c->cap_ix, &l->cap_ix);
        if (rc == 0)
                rc = gc__dup_array((void **)&c->roll, l->roll, l->n_roll, sizeof(*l->roll),
                                   &c->cap_roll);
        if (rc == 0)
                rc = gc_index_dup(&c->roll_ix, &l->roll_ix);
        c->n_grp = l->n_grp;
        if (rc == 0)
                rc =
                    gc__dup_array((void **)&c->grp, l->grp, l->n_grp, sizeof(*l->grp), &c->cap_grp);
        if (rc == 0)
                rc = gc_index_dup(&c->grp_ix, &l->grp_ix);
        if (rc == 0)
                rc =
                    gc__dup_array((void **)&c->lbl, l->lbl, l->n_lbl, sizeof(*l->lbl), &c->cap_lbl);
        if (rc == 0)
                rc = gc_index_dup(&c->lbl_ix, &l->lbl_ix);
        c->n_lbl_free = l->n_lbl_free;
        c->lbl_live = l->lbl_live;
        if (rc == 0)
                rc = gc__dup_array((void **)&c->lbl_free, l->lbl_free, l->n_lbl_free,
                                   sizeof(*l->lbl_free), &c->cap_lbl_free);
        if (rc == 0)
                rc = gc__crun_clone(c, l);
        if (rc < 0) {
                errno = -rc;
                return gc_ledger_free(c);
        }
        return c;
}
