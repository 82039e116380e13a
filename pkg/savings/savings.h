/*
 * savings: the advisor's input from the ledger, pod records and dcgm usage, and the advisor run
 * on it with the configuration's catalog and TCO. The CLI (`analyze`, `demo`) and the controller
 * (its usage thread) share it, so both give the same findings from the same records.
 */
#ifndef GC_SAVINGS_H
#define GC_SAVINGS_H

#include <stddef.h>
#include <stdint.h>

#include "account/account.h"
#include "advisor/advisor.h"
#include "gpuuse/gpuuse.h"
#include "ledger/ledger.h"
#include "model/model.h"
#include "util/util.h"

/*
 * What savings takes of the configuration (config.h: gc_config_savings_opts fills it; pointers
 * into the configuration, which must outlive their use).
 */
typedef struct gc_savings_opts {
        gc_advisor_opts advisor;                        /* thresholds and the findings' bound */
        const gc_catalog *catalog;                      /* prices, for every money figure */
        const gc_tco_inputs *tco;                       /* NULL: no owned-hardware findings */
        const char *team_label_key, *project_label_key; /* the first of each, or NULL */
        const char *currency;                           /* the catalog's ("USD") */
        gc_gpuuse_opts usage; /* a usage store's options: idle thresholds shared with the advisor */
} gc_savings_opts;

/*
 * Per-pod usage summaries copied out of a gc_gpuuse store, sorted by (namespace, pod): the
 * store may then go on ingesting in another thread while the table is read. Strings live in the
 * table's own pool.
 */
typedef struct gc_savings_table {
        gc_strpool *pool;
        gc_gpuuse_pod *v;
        size_t n;
} gc_savings_table;

/* Copies every pod of s. [window_start, window_end) only scales each copy's coverage field. */
int gc_savings_table_build(const gc_gpuuse *s, int64_t window_start, int64_t window_end,
                           gc_savings_table *ret);
void gc_savings_table_release(gc_savings_table *t); /* accepts a zeroed table */
const gc_gpuuse_pod *gc_savings_table_find(const gc_savings_table *t, const char *ns,
                                           const char *pod);

/* The pod record of a uid (controller kind, container, GPU resource), or NULL. */
typedef const gc_pod *(*gc_savings_pod_fn)(void *ud, const char *uid);

/*
 * The advisor's pods: one per pod interval in the ledger overlapping [start, end), joined with
 * its record (pod_fn may be NULL) and its usage summary (usage may be NULL). Strings are the
 * ledger's and the table's: the ledger must not change while the result is used. *ret is
 * malloc'd.
 */
int gc_savings_collect(const gc_ledger *l, int64_t start, int64_t end, int64_t now,
                       gc_savings_pod_fn pod_fn, void *ud, const gc_savings_table *usage,
                       gc_advisor_pod **ret, size_t *ret_n);

/*
 * Runs the advisor over [start, end) with o's settings, catalog and TCO, and renders it as
 * gc_savings_render does. usage_note: why there is no usage data, or NULL. With a team the
 * advisor keeps every finding, so the team's are all there to pick from. ret_result (may be
 * NULL) receives the whole result (a reference: gc_advisor_result_unref). (The controller passes
 * a copy of its options whose advisor settings name the DeviceClasses it watches.)
 */
int gc_savings_run(const gc_savings_opts *o, const gc_ledger *l, int64_t start, int64_t end,
                   int64_t now, const gc_advisor_pod *pods, size_t n_pods, const char *usage_note,
                   const char *team, size_t max_findings, gc_buf *md, gc_buf *json,
                   gc_advisor_result **ret_result, char *err, size_t errlen);

/*
 * Renders a result made earlier, unchanged, in the given currency (NULL: "USD"): Markdown (the
 * report's "Savings" section) and JSON (/api/v1/recommendations, a report's "savings"). team
 * non-NULL keeps that team's findings only (a team's own copy of a report: no other team's
 * pods, no cluster-wide findings, no notes); its totals count all of its findings, those past
 * the advisor's max_findings too. max_findings non-zero lists at most that many (a report's
 * section; the totals still count all). md or json may be NULL. The controller renders its
 * report ConfigMaps' sections this way from the result its API serves, so both say the same.
 * -EINVAL, -ENOMEM, or the buffers' error (-E2BIG past a limit).
 */
/*
 * The shared GPUs the accountant saw (gc_account_shared_gpus), into the advisor's options: how
 * each is asked for (a claim on NVIDIA's whole-GPU class with memory or shares, on HAMi-DRA's
 * class with cores and memory, or HAMi's resources), for share_fit. o->dra_gpu_class names
 * NVIDIA's class ("gpu.nvidia.com" when empty).
 */
void gc_savings_shared_opts(gc_advisor_opts *o, const gc_accountant *a);

int gc_savings_render(const char *currency, const gc_advisor_result *res, const char *team,
                      size_t max_findings, gc_buf *md, gc_buf *json);

/*
 * A saved body's scrape interval: the smallest gap between two distinct sample times, so that
 * each reading covers the time to the next one; *ret_first the earliest time (0: none). 0 when
 * the body has fewer than two times, some samples carry no timestamp, or the gap is over an hour.
 */
int64_t gc_savings_series_interval(const char *data, size_t len, int64_t *ret_first);

#endif
