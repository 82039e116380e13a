/* report internals: number formatting, rounding that adds up, and table layout for the renderers.
 */
#ifndef GC_REPORT_INTERNAL_H
#define GC_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../ledger/ledger.h"
#include "../util/util.h"

#define GC_REPORT__NUM_LEN  32 /* a double in its shortest round-trip form, or "null" */
#define GC_REPORT__TEXT_LEN 64 /* a formatted amount of money or hours */
#define GC_REPORT__MAX_COLS 12

/* The shortest decimal that reads back as v ("%.17g" at most); "null" when v is not finite. */
void gc_report__num(double v, char out[GC_REPORT__NUM_LEN]);
int gc_report__json_num(gc_buf *b, double v);
/* Append `"name":value`, after a comma unless the buffer ends in '{' or '['. */
int gc_report__json_field_num(gc_buf *b, const char *name, double v);
/*
 * A money field in the catalog currency: "name":v, then "name_usd":v, the name it had before
 * money fields became currency-neutral, kept as an alias for one release (docs/api.md,
 * "Renamed fields").
 */
int gc_report__json_field_money(gc_buf *b, const char *name, double v);
int gc_report__json_field_str(gc_buf *b, const char *name, const char *s); /* NULL = "" */
int gc_report__json_field_u64(gc_buf *b, const char *name, uint64_t v);
int gc_report__json_field_time(gc_buf *b, const char *name, int64_t t);
/* Appends `"name":` with its comma, for a value the caller writes. */
int gc_report__json_key(gc_buf *b, const char *name);

/*
 * Largest-remainder rounding: sets ret[i] to v[i]*scale rounded to an integer so that the
 * ret[] add up to exactly *ret_total = round(total*scale). Each ret[i] is v[i]*scale rounded
 * down or up (never further). When that cannot be reached (total is not the sum of v, values
 * that are not finite or too large to round) every value is rounded on its own; returns 1 then,
 * else 0, or -ENOMEM.
 */
int gc_report__round_to_total(const double *v, size_t n, double total, double scale, int64_t *ret,
                              int64_t *ret_total);
/* A rounded whole number of hundredths etc. as "-1,234.56": `decimals` digits after the point. */
void gc_report__fixed(int64_t units, int decimals, char out[GC_REPORT__TEXT_LEN]);
/* Cents as "$12,345.67" for USD (or no currency), "1,234.56 EUR" for any other currency. */
void gc_report__money(int64_t cents, const char *currency, char out[GC_REPORT__TEXT_LEN]);
/* 1 when the currency is written with a dollar sign. */
int gc_report__is_usd(const char *currency);

/*
 * The displayed figures of a list of rows against its total: cents, hundredths of an hour and
 * tenths of a percent of the total's cost, each rounded so that the rows add up to the total
 * shown. share is NULL when the total cost is not positive (no share to show).
 */
typedef struct gc_report__rounded {
        int64_t *cents, *centi_hours, *share; /* n each */
        int64_t total_cents, total_centi_hours;
} gc_report__rounded;

int gc_report__round_rows(const gc_cost_row *rows, size_t n, const gc_cost_row *total,
                          gc_report__rounded *ret);
void gc_report__rounded_free(gc_report__rounded *r);
/* Formats hundredths of an hour, tenths of a percent ("12.5%"), as the tables show them. */
void gc_report__hours(int64_t centi_hours, char out[GC_REPORT__TEXT_LEN]);
void gc_report__pct(int64_t tenths, char out[GC_REPORT__TEXT_LEN]);
/* The same for one figure on its own. */
int64_t gc_report__to_cents(double usd);
int64_t gc_report__to_centi_hours(double gpu_seconds);
int64_t gc_report__share_tenths(double part, double whole); /* 0 when whole is not positive */

/* Checks a summary's shape (dims, arrays) before it is rendered. */
int gc_report__summary_check(const gc_cost_summary *s);

/*
 * A table of text cells laid out once every cell is known: aligned columns for terminals, or a
 * GitHub-flavoured Markdown table. Cells are copied into one buffer bounded by `limit` bytes.
 */
typedef struct gc_report__table {
        gc_buf text;
        size_t *cells; /* offsets into text; SIZE_MAX marks a rule row */
        size_t n_cells, cap_cells;
        size_t n_cols;
        char align[GC_REPORT__MAX_COLS]; /* 'l' or 'r' */
} gc_report__table;

int gc_report__table_init(gc_report__table *t, const char *align, size_t limit);
void gc_report__table_free(gc_report__table *t);
int gc_report__table_cell(gc_report__table *t, const char *s);
int gc_report__table_cellf(gc_report__table *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A label value: "(none)" when empty; Markdown-escaped when md, control bytes replaced always. */
int gc_report__table_key(gc_report__table *t, const char *key, int md);
/* A horizontal rule between rows (text tables only; Markdown skips it). */
int gc_report__table_rule(gc_report__table *t);
int gc_report__table_text(const gc_report__table *t, gc_buf *out);
int gc_report__table_markdown(const gc_report__table *t, gc_buf *out);

/* Appends s with Markdown's special characters escaped and control bytes made blanks. */
int gc_report__md_escape(gc_buf *b, const char *s);

#endif
