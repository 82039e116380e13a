/* tz: IANA time zones read from the system's tzdata (TZif files), and local calendar periods. */
#ifndef GC_TZ_H
#define GC_TZ_H

#include <stddef.h>
#include <stdint.h>

/*
 * A zone is immutable once made, so any number of threads may read it at once; nothing here
 * touches TZ, localtime or any process-wide state. Times are UTC seconds (int64_t); an offset is
 * seconds east of UTC. Results: 0 or a negative errno (-EINVAL bad input, -ENOENT no such zone,
 * -E2BIG over a bound, -ENOMEM).
 */

#define GC_TZ_DIR       "/usr/share/zoneinfo"
#define GC_TZ_NAME_MAX  64          /* "America/Argentina/ComodRivadavia" is 32 */
#define GC_TZ_FILE_MAX  (64u << 10) /* the largest tzdata file is under 4 KiB */
#define GC_TZ_MAX_TRANS 2000        /* transitions kept from a file (fat files hold ~240) */
#define GC_TZ_MAX_TYPES 256         /* local time types, as RFC 8536 allows */
#define GC_TZ_MAX_OFF   (26 * 3600) /* |offset| at most 26 h (RFC 8536: under 25 h) */

typedef struct gc_tz gc_tz;

/* Whether name can be a zone name: 1-63 of [A-Za-z0-9._+-/], no "..", no leading '/'. */
int gc_tz_name_valid(const char *name);
/*
 * Reads dir/name (dir NULL = GC_TZ_DIR), a TZif file of version 1 to 4 (RFC 8536), at most
 * GC_TZ_FILE_MAX bytes. -ENOENT when there is no such zone, -EINVAL for a bad name or file.
 */
int gc_tz_load(const char *dir, const char *name, gc_tz **ret);
/* The same from bytes in memory (the fuzz target's entry); name is what gc_tz_name returns. */
int gc_tz_parse(const char *name, const void *data, size_t n, gc_tz **ret);
/* A fixed offset (whole minutes, |off| <= 18 h), named "UTC" or "UTC+05:30". */
int gc_tz_fixed(int32_t off, gc_tz **ret);
gc_tz *gc_tz_free(gc_tz *z); /* accepts NULL, returns NULL */

const char *gc_tz_name(const gc_tz *z);
/* The offset in effect at t. */
int32_t gc_tz_offset(const gc_tz *z, int64_t t);
/* The first change of offset after t (> t), or INT64_MAX when the offset never changes again. */
int64_t gc_tz_next_change(const gc_tz *z, int64_t t);

/*
 * The coarsest bucket, 3600, 1800 or 900 seconds, that every offset of the zone in [from, to] is
 * a whole number of: then every local midnight there falls on a bucket's edge (Europe/Berlin
 * 3600, Asia/Kolkata 1800, Asia/Kathmandu 900; 900 too for odd historical offsets).
 */
int64_t gc_tz_granularity(const gc_tz *z, int64_t from, int64_t to);

/* ---- local calendar -------------------------------------------------------------------------- */

/* Days since 1970-01-01 of the local date holding t. */
int64_t gc_tz_day_of(const gc_tz *z, int64_t t);
/*
 * The first instant of local day `day`: local 00:00, or, when a transition skips midnight, the
 * first instant after it. Days are 23, 24 or 25 hours long (or what else the zone's rules give).
 */
int64_t gc_tz_day_start(const gc_tz *z, int64_t day);

typedef enum gc_tz_unit {
        GC_TZ_DAY = 0,
        GC_TZ_WEEK,  /* ISO week, Monday to Monday */
        GC_TZ_MONTH, /* calendar month */
} gc_tz_unit;

/* Start of the local day, ISO week or month holding t. */
int64_t gc_tz_period_start(const gc_tz *z, gc_tz_unit u, int64_t t);
/* Start of the period k periods after (k < 0: before) the one holding t. */
int64_t gc_tz_period_add(const gc_tz *z, gc_tz_unit u, int64_t t, int64_t k);

/* The local date of t as "YYYY-MM-DD" (out: at least 16 bytes) and its weekday, Monday = 0. */
void gc_tz_date(const gc_tz *z, int64_t t, char out[16], int *ret_weekday);

#endif
