/* promtext: the Prometheus text exposition format, read as a bounded stream and written. */
#ifndef GC_PROMTEXT_H
#define GC_PROMTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "../util/util.h"

/*
 * Reading (docs/usage.md "Parser rules"). The parser is fed arbitrary chunks; a line may span
 * chunks. Memory is one line buffer of at most max_line_bytes plus a label table, never the body.
 * Accepted: "# HELP" / "# TYPE" / other comments, blank lines, CRLF line ends, labels in any order
 * with the escapes \\ \" \n and a trailing comma, values as Go's ParseFloat reads them (NaN, +Inf,
 * -Inf, Inf, decimals, exponents, hex not included), an optional integer timestamp in
 * milliseconds, OpenMetrics' "# EOF" (later lines are ignored and counted as errors) and an
 * exemplar (" # {...} v") after the value, which is skipped.
 * A malformed line, and a line longer than max_line_bytes, is skipped and counted; the first
 * error's line number and reason are kept. The parse goes on after them.
 */

#define GC_PROM_MAX_LABELS   64          /* labels per sample; more is a malformed line */
#define GC_PROM_DEFAULT_LINE (64 * 1024) /* max_line_bytes when 0 is given */
#define GC_PROM_SENTINEL_MIN 9.2e18      /* DCGM's "blank" values start here */
#define GC_PROM_OPENMETRICS  0x1         /* flag: timestamps are seconds (may have fractions) */

typedef struct gc_prom_label {
        const char *name;  /* NUL-terminated, valid during the callback only */
        const char *value; /* unescaped, NUL-terminated; may be "" */
        size_t value_len;
} gc_prom_label;

typedef struct gc_prom_sample {
        const char *name; /* metric name as written (case kept) */
        const gc_prom_label *labels;
        size_t n_labels;
        /*
         * NaN when the line said NaN, or when it held DCGM's blank sentinel (a value at or above
         * 9.2e18, see `missing`). Consumers treat isnan(value) as "no measurement".
         */
        double value;
        int missing;       /* 1: the value was the blank sentinel (value is NaN) */
        int has_timestamp; /* 0: no timestamp on the line */
        int64_t timestamp_ms;
        uint64_t line_no; /* 1-based */
} gc_prom_sample;

/*
 * Called once per sample. Return 0 to go on; any other value (a negative errno) stops the parse:
 * the feed that called it returns that value and so does every later feed and finish.
 */
typedef int (*gc_prom_sample_fn)(const gc_prom_sample *s, void *userdata);

typedef struct gc_prom_stats {
        uint64_t bytes;   /* fed so far */
        uint64_t lines;   /* complete lines seen (the last one without a newline included) */
        uint64_t samples; /* delivered to the callback */
        uint64_t errors;  /* malformed or over-long lines skipped */
        uint64_t first_error_line; /* 0 = no error */
        char first_error[96];      /* reason of the first error, "" when none */
        int eof_seen;              /* an OpenMetrics "# EOF" line was read */
} gc_prom_stats;

typedef struct gc_prom_parser gc_prom_parser;

/* max_line_bytes: 0 means GC_PROM_DEFAULT_LINE; flags: 0 or GC_PROM_OPENMETRICS. NULL on ENOMEM. */
gc_prom_parser *gc_prom_parser_new(size_t max_line_bytes, unsigned flags, gc_prom_sample_fn fn,
                                   void *userdata);
gc_prom_parser *gc_prom_parser_free(gc_prom_parser *p); /* accepts NULL, returns NULL */
/* Forgets a partial line, the counters and a stop, to parse a new body with the same buffers. */
void gc_prom_parser_reset(gc_prom_parser *p);
/* 0, or the callback's non-zero result (the parse is then stopped). */
int gc_prom_parser_feed(gc_prom_parser *p, const void *data, size_t n);
/* Parses a last line that has no newline. Same results as feed. */
int gc_prom_parser_finish(gc_prom_parser *p);
void gc_prom_parser_stats(const gc_prom_parser *p, gc_prom_stats *ret_stats);

/*
 * Which format a body is in, as the flags for gc_prom_parser_new. Text format 0.0.4 stamps
 * samples in milliseconds, OpenMetrics in seconds, so reading one as the other is off by 1000.
 * On the wire the Content-Type decides (as Prometheus does): GC_PROM_OPENMETRICS for
 * "application/openmetrics-text" with any parameters, in any case; 0 for anything else or NULL.
 * A saved body has no Content-Type: GC_PROM_OPENMETRICS when its last non-blank line is "# EOF"
 * (OpenMetrics ends every body so; promtool's backfill requires it), else 0.
 */
unsigned gc_prom_content_type_flags(const char *content_type);
unsigned gc_prom_body_flags(const char *body, size_t n);

/* One whole body: new + feed + finish + free. ret_stats may be NULL. */
int gc_prom_parse(const char *body, size_t n, size_t max_line_bytes, unsigned flags,
                  gc_prom_sample_fn fn, void *userdata, gc_prom_stats *ret_stats);

/*
 * Number reading, exposed for tests and for Prometheus' JSON ("NaN", "+Inf", "1.5"): the whole
 * of s[0..n) must be a number. Simple decimals take an exact fast path; the rest go to strtod.
 */
int gc_prom_parse_value(const char *s, size_t n, double *ret);

/*
 * Writing, for /metrics. All append to b and return 0 or -E2BIG (b's limit) / -ENOMEM.
 */
/* A label value with \\, \" and \n escaped (no quotes added). */
int gc_prom_escape_label_value(gc_buf *b, const char *s);
/* HELP text with \\ and \n escaped. */
int gc_prom_escape_help(gc_buf *b, const char *s);
/* A double as Prometheus writes it: NaN, +Inf, -Inf, else the shortest text that reads back. */
int gc_prom_format_double(gc_buf *b, double v);
/* "# HELP name help\n# TYPE name type\n"; help may be NULL (no HELP line). */
int gc_prom_write_header(gc_buf *b, const char *name, const char *type, const char *help);
/*
 * `name{l1="v1",...} value\n`; labels whose value is NULL are left out; n_labels may be 0.
 * Label names are written as given (the caller keeps them valid).
 */
int gc_prom_write_sample(gc_buf *b, const char *name, const gc_prom_label *labels, size_t n_labels,
                         double value);

#endif
