/* ledger: GPU intervals, hourly rollups, idle capacity and attribution; answers cost queries. */
#ifndef GC_LEDGER_H
#define GC_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include "../model/model.h"
#include "../tz/tz.h"
#include "../util/util.h"

/*
 * The ledger holds two things (docs/ledger.md):
 *  - intervals: one per pod (keyed by UID) and one capacity interval per node (keyed by node
 *    name), exact to the second, upserted as the pod or node changes;
 *  - hourly rollups: GPU-seconds and cost per hour x (namespace, team, project, model, capacity
 *    type, node), and capacity-seconds per hour x node, into which closed intervals are folded.
 * A query clips every interval to its window exactly and adds the rollup hours inside the window,
 * so a window is exact to the second over intervals and exact to the hour over folded history.
 */

#define GC_OPEN                 INT64_MAX /* interval end of a pod that still holds its GPUs */
#define GC_UNATTRIBUTED         "__unattributed__"
#define GC_FOLDED_POD           "__folded__"     /* the pod and workload key of folded hours */
#define GC_UNLABELLED           "__unlabelled__" /* a label dimension of a pod without the label */
#define GC_LEDGER_DEFAULT_LIMIT 1000000          /* intervals or rollup rows, each */
#define GC_LEDGER_DEFAULT_TOP_N 100              /* pods named per period of period history */
#define GC_LEDGER_MAX_TOP_N     10000

typedef enum gc_dim {
        GC_DIM_NAMESPACE = 0,
        GC_DIM_TEAM,
        GC_DIM_PROJECT,
        GC_DIM_MODEL,
        GC_DIM_CAPACITY_TYPE,
        GC_DIM_NODE,
        GC_DIM_POD, /* intervals and period history only: folded hours do not remember pods */
        /* The pod's top-level owner, "Kind/namespace/name" (docs/workloads.md); like the pod,
         * kept by intervals and period history, not by folded hours. */
        GC_DIM_WORKLOAD,
        GC_DIM_COUNT, /* the fixed dimensions */
        /* label:<key>, the ledger's label key i (gc_ledger_opts.label_keys) is GC_DIM_LABEL + i:
         * the pod's label, else its namespace's, else GC_UNLABELLED (docs/ledger.md). */
        GC_DIM_LABEL = GC_DIM_COUNT,
        GC_KEY_COUNT = GC_DIM_COUNT + GC_LABEL_DIMS, /* fixed and label dimensions */
} gc_dim;

/* The label keys a ledger keeps as dimensions, in slot order (GC_DIM_LABEL + i). */
typedef struct gc_label_keys {
        const char *key[GC_LABEL_DIMS];
        size_t n;
} gc_label_keys;

#define GC_LABEL_KEY_MAX 317 /* a label key: a 253-byte DNS prefix, '/', a 63-byte name */

/* "namespace", "team", "project", "model", "capacity_type", "node", "pod", "workload"; NULL for
 * a label dimension (gc_dim_label_name). */
const char *gc_dim_name(gc_dim d);
/* "label:<key>" of a label dimension d (or the fixed dimension's name) into buf; NULL when d is
 * neither a fixed dimension nor one of lk's. */
const char *gc_dim_label_name(gc_dim d, const gc_label_keys *lk, char *buf, size_t n);
/* Also takes the aliases "ns", "gpu_model", "capacity-type", "capacity", "controller". */
int gc_dim_parse(const char *name, size_t n, gc_dim *ret);
/*
 * "team,project" -> dims; err names the bad word. No duplicates. "label:<key>" is the label
 * dimension of key in lk (NULL: none kept); a key not there fails naming the keys that are.
 */
int gc_dims_parse(const char *csv, const gc_label_keys *lk, gc_dim ret[GC_KEY_COUNT], size_t *ret_n,
                  char *err, size_t errlen);
/* Whether a word is a label dimension ("label:<key>"); *ret_key, *ret_n: the key. */
int gc_dim_is_label(const char *name, size_t n, const char **ret_key, size_t *ret_n);

/* ---- attribution ---------------------------------------------------------------------------- */

typedef struct gc_attribution {
        const gc_label *ns_teams; /* namespace -> team, from configuration */
        size_t n_ns_teams;
        const gc_label *ns_projects; /* namespace -> project */
        size_t n_ns_projects;
} gc_attribution;

typedef enum gc_attr_source {
        GC_ATTR_POD_LABEL = 0,
        GC_ATTR_NAMESPACE_LABEL,
        GC_ATTR_CONFIG_MAP,
        GC_ATTR_NONE, /* GC_UNATTRIBUTED */
} gc_attr_source;

/*
 * Team and project of a pod: its own labels (already picked by the model's configured keys),
 * then its namespace's labels (ns may be NULL), then the configured namespace maps, else
 * GC_UNATTRIBUTED. Returned strings are the records' own or the static GC_UNATTRIBUTED.
 */
void gc_attribute(const gc_pod *pod, const gc_namespace *ns, const gc_attribution *a,
                  const char **ret_team, gc_attr_source *ret_team_src, const char **ret_project,
                  gc_attr_source *ret_project_src);
/*
 * The values of the label dimensions (gc_model_opts.label_keys), as team and project fall back:
 * the pod's label, else its namespace's (ns may be NULL); NULL when neither has it, which the
 * ledger keeps as GC_UNLABELLED (there is no configured map to fall back to).
 */
void gc_attribute_labels(const gc_pod *pod, const gc_namespace *ns, const char *ret[GC_LABEL_DIMS]);

/* ---- the ledger ----------------------------------------------------------------------------- */

typedef struct gc_ledger gc_ledger;

enum {
        GC_USAGE_F_ESTIMATE = 1u << 0, /* GPU-equivalents or times rest on an estimate */
        /*
         * A later piece of a pod whose GPU-equivalents changed while it ran (a shared DRA claim
         * gained or lost a holder): the pieces are contiguous, carry the pod's dimensions, and
         * count as one pod (in a step, a piece counts only when no earlier piece overlaps it).
         */
        GC_USAGE_F_PART = 1u << 1,
        /*
         * A usage-basis adjustment (docs/ledger.md, "The usage basis"): no GPUs held (geq 0), it
         * carries what measured use moved to or from the pod within one bucket: adj_cost, and
         * the allocation cost of the measured time, covered_cost. Its key is its own (made by
         * gc_ledger_split_by_use); its span lies within one bucket and within the pod's; it
         * counts no pod, and its dimensions are the pod's when it was made.
         */
        GC_USAGE_F_ADJUST = 1u << 2,
};

typedef struct gc_usage {
        const char *pod_uid;            /* the key */
        const char *dims[GC_DIM_COUNT]; /* every dimension's value; NULL counts as "" */
        /* The values of the ledger's label keys, in their order; NULL or "" is GC_UNLABELLED. */
        const char *labels[GC_LABEL_DIMS];
        double geq;                /* GPU-equivalents held */
        double price_per_gpu_hour; /* price of one whole GPU of this node */
        int64_t start;             /* bound to the node */
        int64_t end;               /* finished or deleted; GC_OPEN while held */
        uint32_t flags;            /* GC_USAGE_F_* */
        double adj_cost;           /* GC_USAGE_F_ADJUST only: the usage basis's change, +/- */
        double covered_cost;       /* GC_USAGE_F_ADJUST only: allocation cost measured, >= 0 */
} gc_usage;

typedef struct gc_capacity {
        const char *node; /* the key */
        const char *model;
        const char *capacity_type;
        double geq; /* allocatable GPU-equivalents */
        double price_per_gpu_hour;
        int64_t start; /* node created (or first seen) */
        int64_t end;   /* node gone; GC_OPEN while present */
} gc_capacity;

typedef struct gc_ledger_opts {
        gc_strpool *pool;     /* required; every string given to the ledger is interned here */
        size_t max_intervals; /* 0 = GC_LEDGER_DEFAULT_LIMIT */
        size_t max_rollup_rows;
        /* Seconds per folded bucket: 3600 (0, the default), 1800 or 900. Days that start on a
         * :30 or :45 offset need 900 to stay exact; each long interval then folds into four
         * times the rows (docs/ledger.md). */
        int64_t bucket_s;
        /* The calendar of period history (local days, ISO weeks, months: docs/ledger.md); NULL
         * is UTC. Borrowed: it must outlive the ledger and every clone of it. */
        const gc_tz *tz;
        /* Pods named per period (the rest is summed by group): 0 = GC_LEDGER_DEFAULT_TOP_N,
         * at most GC_LEDGER_MAX_TOP_N. */
        size_t top_n;
        /* Label keys kept as dimensions (label:<key>), at most GC_LABEL_DIMS, distinct and
         * non-empty; none by default, and then rows carry none. */
        const char *const *label_keys;
        size_t n_label_keys;
} gc_ledger_opts;

gc_ledger *gc_ledger_new(const gc_ledger_opts *o);
gc_ledger *gc_ledger_free(gc_ledger *l); /* accepts NULL, returns NULL */
/*
 * A deep copy (intervals, capacities, rollups and their indexes) that shares l's string pool:
 * pooled strings never move, so the copy stays valid while the original keeps changing, as
 * long as the pool outlives it. The copy may be read from another thread. NULL with errno set.
 */
gc_ledger *gc_ledger_clone(const gc_ledger *l);
/* Marks every pooled string the ledger holds, for the pool's sweep (util.h: gc_strpool_mark).
 * A clone is a copy for readers: it pins the pool instead (gc_strpool_pin). */
void gc_ledger_mark(const gc_ledger *l, gc_strpool *p);
/* Marks a usage record's pooled strings, for its holder's mark. */
void gc_usage_mark(const gc_usage *u, gc_strpool *p);
/* The label keys kept (pooled strings, in slot order). */
void gc_ledger_label_keys(const gc_ledger *l, gc_label_keys *ret);

/*
 * Insert or replace the pod's interval (by pod_uid). -E2BIG at the interval limit, -EINVAL for
 * a bad record (no uid, start < 0, end < start, geq or price negative or not finite).
 * Hours before the fold horizon are closed books: a pod not in the ledger (e.g. one folded
 * already and seen again on a re-list) only counts from the horizon on, and not at all when it
 * ended before it. A pod already in the ledger is replaced as given.
 */
int gc_ledger_put_usage(gc_ledger *l, const gc_usage *u);
/* The same for a node's capacity; its start never goes back before hours already folded. */
int gc_ledger_put_capacity(gc_ledger *l, const gc_capacity *c);
/* Removes a pod's interval entirely (e.g. it never held GPUs after all). */
int gc_ledger_forget_usage(gc_ledger *l, const char *pod_uid);
/* The interval kept under pod_uid (its strings the ledger's), or -ENOENT (never put, folded). */
int gc_ledger_get_usage(const gc_ledger *l, const char *pod_uid, gc_usage *ret);

/*
 * The usage basis (docs/ledger.md): the allocation cost of the pods holding one GPU over
 * (from, to] is split among them in proportion to their measured use x the seconds they held it
 * in the span, and each pod's difference from its allocation cost is kept as adjustments
 * (GC_USAGE_F_ADJUST), one per interval key and bucket. The adjustments of one call add up to
 * zero, so every total, node and idle figure is the same in both bases. A holder names its
 * intervals (a pod priced in pieces has several, a key each) and its measured use (>= 0,
 * finite); keys the ledger does not hold (folded, never put) and time they do not cover are
 * left on allocation. When the holders' measured use is zero, or fewer than two hold the span,
 * nothing moves. A span split already (the same sample read again) is not split twice: spans
 * must come in time order per GPU. Spans before the fold horizon are closed books. -EINVAL for from
 * >= to, negative or not finite use; -E2BIG at the interval limit (each bucket of the span is split
 * whole or not at all: the buckets before the one that did not fit are kept).
 */
#define GC_LEDGER_MAX_SHARE_KEYS 64 /* interval keys of one holder */
#define GC_LEDGER_MAX_HOLDERS    256
typedef struct gc_use_holder {
        const char *const *keys; /* its interval keys (n_keys, at most GC_LEDGER_MAX_SHARE_KEYS) */
        size_t n_keys;
        double use;
} gc_use_holder;
int gc_ledger_split_by_use(gc_ledger *l, int64_t from, int64_t to, const gc_use_holder *h,
                           size_t n);
/*
 * Folds into hourly rollups every interval that ended before `before` (rounded down to the
 * hour) and drops it; also folds capacity hours before it. Rollup hours older than
 * `keep_since` are discarded. Returns the number of intervals folded. Each interval folds whole
 * or not at all: -E2BIG at the rollup row limit leaves the rest as intervals. `before` should
 * lag now by more than event delays (hours before it are closed books, see put_usage) and
 * never lie ahead of now (a present node's capacity would be folded up to it).
 */
int gc_ledger_fold(gc_ledger *l, int64_t before, int64_t keep_since);
/*
 * History that coarsens with age (docs/ledger.md, "Coarsening"): the folded buckets before
 * `before` (rounded down to a bucket, and never past the horizon) stop being kept by the bucket.
 * The pods' rows go (period history holds their figures); each node's held GPU-seconds move into
 * the node rows of every day, week and month holding the bucket, so every period still answers
 * exactly, idle included, while a window that is no period and reaches those buckets cannot
 * (gc_ledger_span_whole). Buckets whose periods start before gc_ledger_period_since stay.
 * 0, or -ENOMEM / -E2BIG (period rows at max_rollup_rows) with the buckets not yet moved kept
 * by the bucket, exactly as before. Call it after each fold.
 */
int gc_ledger_coarsen(gc_ledger *l, int64_t before);
/* Where coarsened buckets end (a checkpoint restores it); INT64_MIN when none are. */
int gc_ledger_set_coarse_to(gc_ledger *l, int64_t to);
int64_t gc_ledger_coarse_to(const gc_ledger *l);
/*
 * 1 when a query of [start, end) is whole: it reaches no coarsened bucket, or it is a day, week
 * or month of period history. 0 when it would miss the coarsened buckets it reaches.
 * gc_ledger_steps_whole asks it of every step of a stepped query (step_s 0: the window).
 */
int gc_ledger_span_whole(const gc_ledger *l, int64_t start, int64_t end);
int gc_ledger_steps_whole(const gc_ledger *l, int64_t start, int64_t end, int64_t step_s);

typedef struct gc_ledger_stats {
        size_t intervals;
        size_t open_intervals;
        size_t capacities;
        size_t rollup_rows;   /* pod rows and node capacity buckets */
        size_t capacity_runs; /* the runs holding those buckets (what memory holds) */
        size_t periods;       /* days, weeks and months of period history */
        size_t period_rows;   /* their top pods, rows of the rest and node rows, together */
        size_t label_tuples;  /* distinct tuples of label values held (0 keeping no keys) */
        size_t bytes;         /* memory held, approximately (the string pool is the caller's) */
        int64_t horizon;      /* hours before it are folded; INT64_MIN when nothing is */
} gc_ledger_stats;
void gc_ledger_stats_get(const gc_ledger *l, gc_ledger_stats *ret);

/* ---- queries -------------------------------------------------------------------------------- */

/* Which cost a query answers (docs/ledger.md, "The usage basis"). */
typedef enum gc_basis {
        GC_BASIS_ALLOCATION = 0, /* what each pod was allocated, x the time it held it */
        GC_BASIS_USAGE,          /* shared GPUs split by measured use: allocation + adjustments */
} gc_basis;
/* "allocation", "usage". */
const char *gc_basis_name(gc_basis b);
int gc_basis_parse(const char *s, size_t n, gc_basis *ret);

typedef struct gc_query {
        int64_t start, end; /* [start, end) */
        gc_basis basis;
        int64_t now;             /* open intervals accrue up to min(end, now); 0 = end */
        gc_dim by[GC_KEY_COUNT]; /* grouping, in order; label dimensions of kept keys only */
        size_t n_by;
        const char *filter[GC_KEY_COUNT]; /* NULL = any value; else only rows with this value */
} gc_query;

typedef struct gc_cost_row {
        const char *keys[GC_KEY_COUNT]; /* the grouping dims' values; others NULL */
        double gpu_seconds;             /* GPU-equivalent seconds */
        double cost;                    /* in the query's basis */
        /* Of cost, the part of time a measurement covered (usage basis: what measured use
         * decided; allocation basis: the allocation cost of that time). */
        double measured_cost;
        uint32_t pods;      /* distinct pod intervals contributing (folded hours add none) */
        uint32_t estimates; /* of them, resting on estimates */
} gc_cost_row;

typedef struct gc_cost_summary {
        int64_t start, end;
        gc_basis basis; /* the query's */
        gc_dim by[GC_KEY_COUNT];
        size_t n_by;
        gc_label_keys label_keys; /* the ledger's, naming its label dimensions */
        gc_cost_row *rows; /* sorted by cost, then GPU-seconds, descending; then keys ascending */
        size_t n_rows;
        gc_cost_row total;        /* everything held by pods (the sum of rows) */
        gc_cost_row unattributed; /* the part whose team or project is GC_UNATTRIBUTED */
        gc_cost_row capacity;     /* allocatable GPU-equivalent seconds of all nodes */
        gc_cost_row idle;         /* capacity minus held, per node, never below zero */
        gc_cost_row *idle_nodes;  /* keys[NODE], [MODEL], [CAPACITY_TYPE]; by idle cost desc */
        size_t n_idle_nodes;
} gc_cost_summary;

/*
 * -EINVAL for start > end, now < 0, or a bad or repeated grouping dimension. Key strings in the
 * summary are the pool's. Idle and capacity follow only the node, model and capacity-type
 * filters; idle_nodes lists every node with capacity in the window, idle or not.
 */
int gc_ledger_query(const gc_ledger *l, const gc_query *q, gc_cost_summary *ret);
void gc_cost_summary_free(gc_cost_summary *s); /* accepts a zeroed struct */

#define GC_LEDGER_MAX_STEPS 1000 /* summaries of one stepped query */

/*
 * The steps of [start, end): [start + k*step_s, min(start + (k+1)*step_s, end)) for k < the
 * count returned; 0 for an empty window or step_s <= 0.
 */
size_t gc_ledger_step_count(int64_t start, int64_t end, int64_t step_s);
/*
 * gc_ledger_query of every step of [q->start, q->end) at once, into ret[0 .. n_steps): one pass
 * over the ledger instead of one per step, and each summary equal to what gc_ledger_query of
 * its step alone returns (a folded hour cut by a step's edge counts in neither step, as with a
 * window's edge; open intervals accrue up to min(step's end, q->now)). n_steps must be
 * gc_ledger_step_count(q->start, q->end, step_s), else -EINVAL; -E2BIG above
 * GC_LEDGER_MAX_STEPS. Free each summary with gc_cost_summary_free.
 */
int gc_ledger_query_steps(const gc_ledger *l, const gc_query *q, int64_t step_s,
                          gc_cost_summary *ret, size_t n_steps);
/*
 * The same summaries handed to fn one at a time, in time order, each freed after fn returns: as
 * few passes as keep the memory held bounded (one pass while intervals x steps stays under
 * 500,000). A non-zero return of fn stops the walk and is returned. -EINVAL, -E2BIG as above.
 */
typedef int (*gc_step_fn)(void *ud, const gc_cost_summary *s);
int gc_ledger_query_each_step(const gc_ledger *l, const gc_query *q, int64_t step_s, gc_step_fn fn,
                              void *ud);
/*
 * The same over spans of any length (local days of 23 or 25 hours, calendar months): span k is
 * [edges[k], edges[k + 1]), edges strictly ascending, n_spans + 1 of them (q->start and q->end
 * are not used). Each span's figures are those gc_ledger_query of it returns. -E2BIG above
 * GC_LEDGER_MAX_STEPS spans.
 */
int gc_ledger_query_each_span(const gc_ledger *l, const gc_query *q, const int64_t *edges,
                              size_t n_spans, gc_step_fn fn, void *ud);

/* ---- chargeback: idle capacity and unattributed spend on the teams' bills -------------------- */

/*
 * How idle capacity and the spend of no team reach the teams' bills (docs/configuration.md,
 * "chargeback"): NONE leaves them as their own lines (showback); PROPORTIONAL shares them out
 * to each team in proportion to its attributed spend in the period; WEIGHTS by fixed weights per
 * team, among the weighted teams that spent in the period (proportionally when none did).
 */
typedef enum gc_chargeback_mode {
        GC_CHARGEBACK_NONE = 0,
        GC_CHARGEBACK_PROPORTIONAL,
        GC_CHARGEBACK_WEIGHTS,
} gc_chargeback_mode;

typedef struct gc_team_weight {
        const char *team;
        double weight; /* > 0, finite */
} gc_team_weight;

typedef struct gc_chargeback {
        gc_chargeback_mode mode;
        const gc_team_weight *weights; /* WEIGHTS only */
        size_t n_weights;
        /* Which spend the teams are billed (and shares are taken) by: the allocation basis, or
         * the usage basis, shared GPUs split by measured use (docs/ledger.md). */
        gc_basis basis;
} gc_chargeback;

#define GC_CHARGEBACK_MAX_WEIGHTS 1000

/* "none", "proportional", "weights". */
const char *gc_chargeback_mode_name(gc_chargeback_mode m);
int gc_chargeback_mode_parse(const char *s, gc_chargeback_mode *ret);

/*
 * The shares of a summary grouped by team (among other dimensions): the pool to share is the
 * idle capacity cost plus the cost of the rows whose team is GC_UNATTRIBUTED; ret_ratio[i] (n_rows
 * entries) is the fraction of the pool row i carries: its team's fraction (by spend or weight)
 * split over the team's rows by their cost. Unattributed rows carry 0, and the ratios sum to 1
 * whenever some team spent (else all are 0 and nothing is shared: *ret_pool is then 0). A row's
 * bill is its own cost plus ratio x pool, or 0 for an unattributed one when *ret_pool > 0 (its
 * cost is in the pool), so the bills add up to
 * total + idle. NONE gives ratios and pool of 0. -EINVAL when the summary is not grouped by team
 * or a weight is not positive and finite.
 */
int gc_chargeback_ratios(const gc_cost_summary *s, const gc_chargeback *c, double *ret_ratio,
                         double *ret_pool);

/* ---- state, for checkpoints ----------------------------------------------------------------- */

/*
 * A folded bucket is two kinds of row: the pods' (namespace, team, project, model, capacity
 * type; node "") and each node's (model, capacity type, node; namespace and project "", team ""
 * for all its held GPU-seconds, GC_UNATTRIBUTED for the unattributed part of them). A row with
 * both a namespace and a node (a checkpoint of an earlier build) is added as both kinds.
 */
typedef struct gc_rollup {
        int64_t hour; /* start of the bucket (an hour, or a quarter hour: gc_ledger_granularity) */
        const char *dims[GC_DIM_COUNT];    /* the dimensions before GC_DIM_POD (NULL after) */
        const char *labels[GC_LABEL_DIMS]; /* the pods' rows' label values (as gc_usage) */
        double gpu_seconds;
        double cost;
        double adj_cost, covered_cost; /* the usage basis's, as gc_usage */
} gc_rollup;

/* Whether a visited row is a node's (see above), not the pods'. */
int gc_rollup_is_node(const gc_rollup *r);

typedef struct gc_capacity_rollup {
        int64_t hour;
        const char *node;
        const char *model;
        const char *capacity_type;
        double geq_seconds; /* allocatable GPU-equivalent seconds in the hour */
        double cost;
} gc_capacity_rollup;

/*
 * A row of period history: one of a period's top pods (pod_uid set; dims name the pod, its
 * node and workload), the rest of one group (pod_uid NULL; node "", pod GC_FOLDED_POD), or a
 * node row (pod_uid NULL, a node; model and capacity type, team "" or GC_UNATTRIBUTED for the
 * unattributed part, every other dimension "", no pods): the node's held GPU-seconds in the
 * period's coarsened buckets (gc_ledger_coarsen).
 */
typedef struct gc_period_row {
        gc_tz_unit unit;
        int64_t start, end; /* the period */
        const char *pod_uid;
        const char *dims[GC_DIM_COUNT];
        const char *labels[GC_LABEL_DIMS]; /* as gc_usage; GC_UNLABELLED in node rows */
        double gpu_seconds;
        double cost;
        double adj_cost, covered_cost; /* the usage basis's, as gc_usage */
        uint32_t pods, estimates;
} gc_period_row;

/* Callbacks may be NULL; a non-zero return stops the walk and is returned. */
typedef struct gc_ledger_visitor {
        int (*usage)(void *ud, const gc_usage *u);
        int (*capacity)(void *ud, const gc_capacity *c);
        int (*rollup)(void *ud, const gc_rollup *r);
        int (*capacity_rollup)(void *ud, const gc_capacity_rollup *r);
        int (*period)(void *ud, const gc_period_row *r);
} gc_ledger_visitor;

/* Walks every record; the ledger must not change during the walk. */
int gc_ledger_visit(const gc_ledger *l, const gc_ledger_visitor *v, void *ud);
/* Adds into the row of the same key (restoring a checkpoint). -E2BIG at the row limit. */
int gc_ledger_add_rollup(gc_ledger *l, const gc_rollup *r);
int gc_ledger_add_capacity_rollup(gc_ledger *l, const gc_capacity_rollup *r);
/*
 * Restores the fold horizon after the records (put records first: puts are clipped to the
 * horizon). Moves it forward only; every capacity then counts as folded up to its start.
 * INT64_MIN (never folded) is accepted and changes nothing.
 */
int gc_ledger_set_horizon(gc_ledger *l, int64_t horizon);
/*
 * Restores a row of period history (a checkpoint): a top pod is offered to its period's top
 * (it goes to the rest when this ledger keeps fewer pods), a row of the rest adds into its
 * group. -EINVAL for a bad row, -E2BIG at the row limit (rollup rows and period rows count
 * separately, each up to max_rollup_rows).
 */
int gc_ledger_add_period_row(gc_ledger *l, const gc_period_row *r);
/*
 * Periods starting before `since` are not answered from period history: history folded before
 * the ledger kept periods (a checkpoint of an earlier version restores its horizon here).
 * A new ledger answers every period (INT64_MIN).
 */
int gc_ledger_set_period_since(gc_ledger *l, int64_t since);
int64_t gc_ledger_period_since(const gc_ledger *l);
/* Seconds per folded bucket (gc_ledger_opts.bucket_s): a window edge not on one cuts history. */
int64_t gc_ledger_granularity(const gc_ledger *l);

#endif
