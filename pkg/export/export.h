/* export: GPU cost as FOCUS (1.2, 1.3 or 1.4) or plain CSV rows, streamed period by period. */
#ifndef GC_EXPORT_H
#define GC_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "../ledger/ledger.h"
#include "../util/util.h"

/*
 * One row per charge period (a UTC day or hour, cut to the window) x node x (namespace, team,
 * project, workload, the values of the ledger's label keys) that held GPUs, one per period x node
 * for its idle capacity, and with chargeback one per period x node x team for the team's share of
 * that node's idle and unattributed cost. The rows are written as they are made, a period at a
 * time, so memory follows the rows of one period, not the window's length. Columns, values and why:
 * docs/export.md.
 */

typedef enum gc_export_format {
        GC_EXPORT_FOCUS = 0, /* FOCUS cost and usage dataset (CSV) */
        GC_EXPORT_CSV,       /* plain CSV with snake_case columns, for spreadsheets */
} gc_export_format;

#define GC_EXPORT_HOURLY ((int64_t)3600)
#define GC_EXPORT_DAILY  ((int64_t)86400)

/* The whole body is cut at this many bytes handed to write: the caller's bound on a stream. */
#define GC_EXPORT_PIECE_BYTES ((size_t)64 << 10) /* bytes gathered before each write */

/* Receives the next piece of the CSV text; a non-zero return stops the export and is returned. */
typedef int (*gc_export_write_fn)(void *ud, const char *data, size_t n);

typedef struct gc_export_opts {
        const gc_ledger *ledger;
        int64_t start, end;  /* the window, [start, end) */
        int64_t now;         /* open intervals accrue to min(end, now); 0 = end */
        int64_t granularity; /* GC_EXPORT_DAILY or GC_EXPORT_HOURLY */
        gc_export_format format;
        int focus_minor;     /* FOCUS 1.<minor>: 2, 3 or 4 (0 = 3, docs/export.md says why) */
        const char *cluster; /* BillingAccountId/Name, Tags; NULL = "default" */
        const char *currency;
        gc_chargeback chargeback;
        /* allocation, or usage: shared GPUs split by measured use (docs/ledger.md); the
         * usage rows then say so in 1.3's AllocatedMethodId. Totals and idle are the same. */
        gc_basis basis;
        /* The region of a node, for RegionId (NULL, or a NULL answer: no region). */
        const char *(*region_of)(void *ud, const char *node);
        void *region_ud;
} gc_export_opts;

/* What was written, for totals and tests. Money in the catalog currency. */
typedef struct gc_export_totals {
        uint64_t rows;
        double usage_cost;        /* attributed and unattributed usage rows */
        double idle_cost;         /* idle rows (unshared idle capacity) */
        double shared_cost;       /* chargeback share rows */
        double unattributed_cost; /* usage of no team (moved into shares when shared) */
        double billed_cost;       /* every row */
        double gpu_hours;         /* ConsumedQuantity of every row */
} gc_export_totals;

/*
 * 1 when every charge period gc_export_run would query is whole in the ledger
 * (gc_ledger_span_whole: none reaches hours kept only by period, or it is a day, week or month
 * of period history); 0 when one would miss such hours.
 */
int gc_export_whole(const gc_export_opts *o);

/*
 * Writes the header and every row through write. -EINVAL for bad options (empty window,
 * granularity other than daily or hourly, FOCUS minor other than 2, 3 or 4, chargeback weights);
 * a negative errno of the ledger query or write's non-zero return. ret_totals may be NULL.
 */
int gc_export_run(const gc_export_opts *o, gc_export_write_fn write, void *ud,
                  gc_export_totals *ret_totals);

/* "daily" / "hourly" -> seconds. */
int gc_export_granularity_parse(const char *s, int64_t *ret);
/* "focus" / "csv". */
int gc_export_format_parse(const char *s, gc_export_format *ret);
/* "1.2" / "1.3" / "1.4" -> the minor version; -EINVAL for anything else. */
int gc_export_focus_version_parse(const char *s, int *ret_minor);
/* The i-th column of the FOCUS 1.<minor> header, or NULL past the last (or for no such minor). */
const char *gc_export_focus_column(int minor, size_t i);

/* Appends s as one RFC 4180 field: quoted (quotes doubled) when it holds , " CR or LF. */
int gc_export_csv_field(gc_buf *b, const char *s);

#endif
