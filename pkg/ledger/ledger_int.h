/* ledger internals shared by the ledger's own files (records, hash index); not a public face. */
#ifndef GC_LEDGER_INT_H
#define GC_LEDGER_INT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ledger.h"
#include "../util/util.h"

#define GC__HOUR      ((int64_t)3600)
#define GC__QUARTER   ((int64_t)900) /* the finest bucket: every zone since 1972 is on it */
#define GC__TIME_MAX  ((int64_t)253402300799) /* 9999-12-31T23:59:59Z */
#define GC__ROLL_DIMS GC_DIM_POD              /* rollups keep every dimension before the pod */
#define GC__MAX_LIMIT ((size_t)1 << 28)       /* item indices must fit the index's uint32_t */

/* Floor division to the hour, for any time (negative included). */
int64_t gc__floor_bucket(int64_t t, int64_t bucket);

/* The usage basis's figures of a row (ledger.h, GC_USAGE_F_ADJUST): adjustment and the
 * allocation cost measured. Zero wherever nothing was measured. */
typedef struct gc__use {
        double adj, covered;
} gc__use;

/* A pod's interval. */
typedef struct gc__iv {
        const char *dims[GC_DIM_COUNT];
        const char *uid;
        double geq;
        double price_per_gpu_hour;
        int64_t start, end;
        uint32_t flags;
        uint32_t lbl; /* its label values: index into gc_ledger.lbl (in the padding: free) */
        gc__use use;  /* GC_USAGE_F_ADJUST only */
} gc__iv;

/* A node's capacity interval; start has moved past the hours already folded. */
typedef struct gc__cap {
        const char *node, *model, *capacity_type;
        double geq;
        double price_per_gpu_hour;
        int64_t start, end;
        int64_t folded_to; /* hours before this are in capacity rollups; INT64_MIN = none */
} gc__cap;

/* A pod rollup row: its dimensions are a group's, kept once in the ledger's group table. */
typedef struct gc__roll {
        int64_t hour;
        uint32_t grp; /* index into gc_ledger.grp */
        double gpu_seconds;
        double cost;
        gc__use use;
} gc__roll;

/*
 * The dimensions of rollup rows, each tuple once (ledger.c). A folded hour is two rows: the
 * pods' (namespace, team, project, model, capacity type; node "") and the node's (namespace,
 * team and project "", model, capacity type, node: its held GPU-seconds), so hourly history
 * grows with the groups and the nodes, not with pods x nodes.
 */
typedef struct gc__grp {
        const char *dims[GC__ROLL_DIMS];
        int node_row; /* GC__ROW_* */
        uint32_t lbl; /* label values (gc_ledger.lbl); 0 for node rows */
} gc__grp;

enum {
        GC__ROW_PODS = 0,   /* the pods' hours by group, node "" */
        GC__ROW_NODE,       /* a node's held hours: team "" */
        GC__ROW_NODE_UNATTR /* the part of them whose team or project is GC_UNATTRIBUTED */
};

/* n consecutive buckets of a node's folded capacity, each with the same figures (capruns.c). */
typedef struct gc__crun {
        const char *node, *model, *capacity_type;
        int64_t first; /* start of the first bucket */
        int64_t n;
        double geq_seconds; /* of each bucket */
        double cost;
} gc__crun;

/* A row of period history: a top pod (uid set) or the rest of a group (uid NULL, pod folded). */
typedef struct gc__prow {
        const char *dims[GC_DIM_COUNT];
        const char *uid;
        double gpu_seconds, cost;
        gc__use use;
        uint32_t pods, estimates;
        uint32_t lbl; /* label values (gc_ledger.lbl) */
} gc__prow;

/*
 * One tuple of label values, each pooled (GC_UNLABELLED where a pod has none), in the order of
 * gc_ledger.label_keys. Rows name theirs by index, so a ledger keeping no label keys spends
 * nothing on them: tuple 0 is every value GC_UNLABELLED. Indexes never move (a clone's shared
 * periods name tuples by index, in the clone's own copy of the table): a tuple no record names
 * any more is emptied (every value NULL) by gc__lbl_sweep and its index reused.
 */
typedef struct gc__lbl {
        const char *v[GC_LABEL_DIMS];
} gc__lbl;

/*
 * A node's held GPU-seconds in the buckets of a period that history no longer keeps by the
 * hour (gc_ledger_coarsen): what its node rows (GC__ROW_NODE, GC__ROW_NODE_UNATTR) held.
 */
typedef struct gc__pnode {
        const char *node, *model, *capacity_type;
        int unattr; /* the part whose team or project is GC_UNATTRIBUTED */
        double gpu_seconds, cost;
        gc__use use;
} gc__pnode;

/* One local day, ISO week or month of period history (tier.c). */
typedef struct gc__period {
        int64_t start, end;
        int unit;       /* gc_tz_unit */
        gc__prow *rest; /* by dims, node "" and pod GC_FOLDED_POD */
        size_t n_rest, cap_rest;
        gc_index rest_ix;
        gc__prow *top; /* at most top_n pods, by uid */
        size_t n_top, cap_top;
        gc__pnode *nodes; /* held GPU-seconds of its coarsened buckets, by node */
        size_t n_nodes, cap_nodes;
        gc_index nodes_ix;
        int dirty; /* rows added since the period was last compacted */
        /* Ledgers holding it: a clone shares its periods, and a ledger changes one only when it
         * holds it alone, else it changes a copy (tier.c). The last to let go frees it. */
        atomic_uint refs;
} gc__period;

struct gc_ledger {
        gc_strpool *pool;
        size_t max_intervals;
        size_t max_rollup_rows;
        const char *empty;                     /* interned "" (a NULL dimension) */
        const char *unattributed;              /* interned GC_UNATTRIBUTED */
        const char *folded_pod;                /* interned GC_FOLDED_POD */
        const char *unlabelled;                /* interned GC_UNLABELLED */
        const char *label_keys[GC_LABEL_DIMS]; /* pooled; label dimension i is key i */
        size_t n_label_keys;
        gc__lbl *lbl; /* label value tuples; pooled strings (see gc__lbl), NULL when emptied */
        size_t n_lbl, cap_lbl;
        gc_index lbl_ix;
        uint32_t *lbl_free; /* emptied tuples, reused first */
        size_t n_lbl_free, cap_lbl_free;
        size_t lbl_live; /* tuples in use after the last sweep */
        int64_t horizon; /* hours before this are folded; INT64_MIN = none yet */
        int64_t bucket;  /* seconds per rollup bucket: 3600, 1800 or 900 */

        gc__iv *iv;
        size_t n_iv, cap_iv, n_open;
        gc_index iv_ix;

        gc__cap *cap;
        size_t n_cap, cap_cap;
        gc_index cap_ix;

        gc__roll *roll;
        size_t n_roll, cap_roll;
        gc_index roll_ix;
        gc__grp *grp;
        size_t n_grp, cap_grp;
        gc_index grp_ix;

        gc__crun *crun;
        size_t n_crun, cap_crun;
        gc_index crun_ix; /* node -> its latest run */

        const gc_tz *tz; /* the calendar of period history: the caller's, or own_tz */
        gc_tz *own_tz;   /* UTC, when the caller gave none */
        size_t top_n;
        int64_t period_since; /* periods starting before it are not in period history */
        gc__period **per;     /* sorted by start, then unit; shared with clones */
        size_t n_per, cap_per;
        size_t n_prows; /* rest rows, top pods and node rows of every period */
        /* Buckets in [coarse_from, coarse_to) are kept only in periods (gc_ledger_coarsen);
         * INT64_MIN when none are. coarse_from follows from period_since (tier.c). */
        int64_t coarse_to;
};

/* The tuple of pooled label values (n_label_keys of them), made when new; -ENOMEM, -E2BIG. */
int gc__lbl_get(gc_ledger *l, const char *const v[GC_LABEL_DIMS], uint32_t *ret);
/* The tuple of caller's values (interned; NULL or "" is GC_UNLABELLED); tuple 0 when none. */
int gc__lbl_of(gc_ledger *l, const char *const v[GC_LABEL_DIMS], uint32_t *ret);
/*
 * Empties the tuples no interval, hourly group or period row names: after retention `dropped`
 * rows or periods (at most once an hour), else once the table has doubled since the last sweep
 * (amortized). So the table is bounded by what history holds, not by every value ever seen.
 */
void gc__lbl_sweep(gc_ledger *l, int dropped);
/* Tuples in use (not emptied). */
size_t gc__lbl_count(const gc_ledger *l);

/* The interval kept under uid (it may move on the next put or removal), or NULL. */
gc__iv *gc__iv_find(const gc_ledger *l, const char *uid);

/* Period history (tier.c). */
void gc__tier_free(gc_ledger *l);
/* Adds a closed interval to every kept period it overlaps, or to none (-ENOMEM, -E2BIG). */
int gc__tier_fold(gc_ledger *l, const gc__iv *v, int64_t keep_since);
void gc__tier_drop_old(gc_ledger *l, int64_t keep_since);
/* Compacts the closed periods that changed: their rest keeps the top workloads by name. */
void gc__tier_compact(gc_ledger *l);
/* The period [start, end) of any unit, when period history holds it whole; else NULL. */
const gc__period *gc__tier_find(const gc_ledger *l, int64_t start, int64_t end);
int gc__tier_visit(const gc_ledger *l, int (*fn)(void *ud, const gc_period_row *r), void *ud);
/* The first bucket history may keep only in periods: every period holding it is kept whole. */
int64_t gc__coarse_from(const gc_ledger *l);
/* Adds a node row's bucket to the node rows of every period holding it (-ENOMEM, -E2BIG). */
int gc__tier_add_node(gc_ledger *l, int64_t bucket_start, const char *node, const char *model,
                      const char *capacity_type, int unattr, double gpu_seconds, double cost,
                      gc__use use);
int gc__tier_clone(gc_ledger *c, const gc_ledger *l);
size_t gc__tier_bytes(const gc_ledger *l);

uint32_t gc__roll_hash(int64_t hour, uint32_t grp);

/* Folded capacity (capruns.c). */
int gc__crun_reserve(gc_ledger *l, size_t more);
void gc__crun_add(gc_ledger *l, const char *node, const char *model, const char *capacity_type,
                  int64_t first, int64_t n, double geq_seconds, double cost);
void gc__crun_fold(gc_ledger *l, const gc__cap *c, int64_t end, int64_t first);
void gc__crun_drop_old(gc_ledger *l, int64_t first);
int gc__crun_visit(const gc_ledger *l, int (*fn)(void *ud, const gc_capacity_rollup *r), void *ud);
int gc__crun_clone(gc_ledger *c, const gc_ledger *l);

static inline void gc__use_add(gc__use *to, gc__use u)
{
        to->adj += u.adj;
        to->covered += u.covered;
}

/* Grows a dense array to hold n items of `size` bytes (gc_grow underneath); may reallocate *p. */
int gc__vec_reserve(void **p, size_t *cap, size_t n, size_t size);

#endif
