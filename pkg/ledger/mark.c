/* mark: every pooled string the ledger holds, for the pool's sweep (gc_strpool_mark). */
#include "ledger_int.h"

/*
 * A member added to one of these records that holds a pooled string must be marked below, or
 * the sweep frees it under the ledger: these sizes stop the build until it is.
 */
_Static_assert(sizeof(gc__iv) == 128, "gc__iv changed: mark its strings in gc_ledger_mark");
_Static_assert(sizeof(gc__cap) == 64, "gc__cap changed: mark its strings in gc_ledger_mark");
_Static_assert(sizeof(gc__grp) == 56, "gc__grp changed: mark its strings in gc_ledger_mark");
_Static_assert(sizeof(gc__crun) == 56, "gc__crun changed: mark its strings in gc_ledger_mark");
_Static_assert(sizeof(gc__prow) == 120, "gc__prow changed: mark its strings in gc_ledger_mark");
_Static_assert(sizeof(gc__pnode) == 64, "gc__pnode changed: mark its strings in gc_ledger_mark");
_Static_assert(sizeof(gc__lbl) == 32, "gc__lbl changed: mark its strings in gc_ledger_mark");
_Static_assert(sizeof(gc__period) == 152, "gc__period changed: mark its rows in gc_ledger_mark");
_Static_assert(sizeof(gc_usage) == 160, "gc_usage changed: mark its strings in gc_usage_mark");
_Static_assert(sizeof(struct gc_ledger) == 512,
               "gc_ledger changed: mark its strings in gc_ledger_mark");

static void mark_dims(gc_strpool *p, const char *const *dims, size_t n)
{
        for (size_t i = 0; i < n; i++)
                gc_strpool_mark(p, dims[i]);
}

static void mark_period(gc_strpool *p, const gc__period *per)
{
        for (size_t i = 0; i < per->n_rest; i++) {
                mark_dims(p, per->rest[i].dims, GC_DIM_COUNT);
                gc_strpool_mark(p, per->rest[i].uid);
        }
        for (size_t i = 0; i < per->n_top; i++) {
                mark_dims(p, per->top[i].dims, GC_DIM_COUNT);
                gc_strpool_mark(p, per->top[i].uid);
        }
        for (size_t i = 0; i < per->n_nodes; i++) {
                gc_strpool_mark(p, per->nodes[i].node);
                gc_strpool_mark(p, per->nodes[i].model);
                gc_strpool_mark(p, per->nodes[i].capacity_type);
        }
}

void gc_ledger_mark(const gc_ledger *l, gc_strpool *p)
{
        if (!l || !p)
                return;
        gc_strpool_mark(p, l->empty);
        gc_strpool_mark(p, l->unattributed);
        gc_strpool_mark(p, l->folded_pod);
        gc_strpool_mark(p, l->unlabelled);
        mark_dims(p, l->label_keys, GC_LABEL_DIMS);
        for (size_t i = 0; i < l->n_lbl; i++) /* an emptied tuple's values are NULL */
                mark_dims(p, l->lbl[i].v, GC_LABEL_DIMS);
        for (size_t i = 0; i < l->n_iv; i++) {
                mark_dims(p, l->iv[i].dims, GC_DIM_COUNT);
                gc_strpool_mark(p, l->iv[i].uid);
        }
        for (size_t i = 0; i < l->n_cap; i++) {
                gc_strpool_mark(p, l->cap[i].node);
                gc_strpool_mark(p, l->cap[i].model);
                gc_strpool_mark(p, l->cap[i].capacity_type);
        }
        for (size_t i = 0; i < l->n_grp; i++)
                mark_dims(p, l->grp[i].dims, GC__ROLL_DIMS);
        for (size_t i = 0; i < l->n_crun; i++) {
                gc_strpool_mark(p, l->crun[i].node);
                gc_strpool_mark(p, l->crun[i].model);
                gc_strpool_mark(p, l->crun[i].capacity_type);
        }
        for (size_t i = 0; i < l->n_per; i++)
                mark_period(p, l->per[i]);
}

void gc_usage_mark(const gc_usage *u, gc_strpool *p)
{
        gc_strpool_mark(p, u->pod_uid);
        mark_dims(p, u->dims, GC_DIM_COUNT);
        mark_dims(p, u->labels, GC_LABEL_DIMS);
}
