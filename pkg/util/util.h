/* util: bounded buffers, UTC time, number parsing and string interning shared by every module. */
#ifndef GC_UTIL_H
#define GC_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Results: 0 on success or a negative errno (-EINVAL bad input, -ENOMEM out of memory,
 * -E2BIG over a limit, -ENOENT not found, -ERANGE out of range).
 */

/* ---- growable buffer with a hard limit ("toobig") ---------------------------------------- */

typedef struct gc_buf {
        char *data;   /* always NUL-terminated when non-NULL */
        size_t len;   /* bytes in use, without the NUL */
        size_t cap;   /* bytes allocated */
        size_t limit; /* len may never exceed this */
        int err;      /* the first failed append's error, sticky: see below */
} gc_buf;

/*
 * The error is sticky: once an append fails (-E2BIG past the limit, -ENOMEM), every later
 * append does nothing and returns the same error, so a writer may append a whole document and
 * check b->err (or the last result) once. gc_buf_reset and gc_buf_truncate clear it.
 */
void gc_buf_init(gc_buf *b, size_t limit);
/* Appends n bytes; may reallocate b->data. -E2BIG when len would pass the limit (b unchanged). */
int gc_buf_append(gc_buf *b, const void *p, size_t n);
int gc_buf_puts(gc_buf *b, const char *s);
int gc_buf_printf(gc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int gc_buf_vprintf(gc_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Appends s as a JSON string literal, quotes included. */
int gc_buf_json_str(gc_buf *b, const char *s);
void gc_buf_reset(gc_buf *b);
/* Cuts back to len bytes (a writer's rollback to a mark it took); clears the error. */
void gc_buf_truncate(gc_buf *b, size_t len);
/* Hands the data to the caller (who frees it) and resets b. */
char *gc_buf_steal(gc_buf *b);
void gc_buf_free(gc_buf *b);

/*
 * The one growable array: makes room for element n of elem bytes in *arr (room for *cap now),
 * doubling from first. limit (0: none) bounds the elements: -E2BIG when n reaches it. -ENOMEM
 * (and *arr unchanged) when realloc fails or the size would overflow; -EINVAL for elem 0. New
 * room is not zeroed.
 */
int gc_grow(void **arr, size_t *cap, size_t n, size_t elem, size_t first, size_t limit);

/* Reads a whole file into ret (initialised here with the given limit). -E2BIG when larger. */
int gc_read_file(const char *path, size_t limit, gc_buf *ret);

/* ---- time: UTC seconds since the epoch ----------------------------------------------------- */

/*
 * RFC 3339 ("2026-11-20T09:15:03Z", "...03.123456Z", "...03+02:00"); n bytes of s are read and
 * must all be consumed. Fractions of a second are truncated toward the earlier second.
 */
int gc_time_parse(const char *s, size_t n, int64_t *ret_sec);
/* Formats as "YYYY-MM-DDTHH:MM:SSZ"; out needs GC_TIME_LEN bytes. */
#define GC_TIME_LEN 21
void gc_time_format(int64_t sec, char out[GC_TIME_LEN]);
/* Days since 1970-01-01 for a civil date, and back (proleptic Gregorian). */
int64_t gc_days_from_civil(int64_t y, unsigned m, unsigned d);
void gc_civil_from_days(int64_t days, int64_t *ret_y, unsigned *ret_m, unsigned *ret_d);
/* a / b rounded toward minus infinity (b != 0): the second before the epoch is on day -1. */
int64_t gc_floor_div(int64_t a, int64_t b);
/* The weekday of a day since 1970-01-01 (a Thursday): Monday = 0 ... Sunday = 6. */
int gc_weekday(int64_t days);
/* Durations "90s", "30m", "12h", "7d", "2w" (one unit, integer). */
int gc_duration_parse(const char *s, int64_t *ret_sec);

/* ---- numbers ------------------------------------------------------------------------------- */

/* Whole string must be a number; no leading blanks, no trailing garbage. */
int gc_parse_int64(const char *s, int64_t *ret);
int gc_parse_double(const char *s, double *ret); /* finite values only */

/* ---- string interning ---------------------------------------------------------------------- */

/*
 * A pool hands out one stable copy per distinct string, so records can hold pointers and
 * compare strings by pointer. Bounded by max_bytes. Not thread-safe: its owner locks.
 *
 * Strings nothing refers to any more are reclaimed by mark and sweep, in three steps the owner
 * takes under its lock:
 *   gc_strpool_sweep_begin()  -EBUSY while a pin taken before the previous sweep is held;
 *   gc_strpool_mark(s)        for every pooled pointer each holder keeps (the holders' mark
 *                             functions: gc_ledger_mark, gc_accountant_mark, gc_pod_mark...);
 *   gc_strpool_sweep()        the unmarked strings leave the table (a later intern of the same
 *                             text makes a new copy) and wait in a graveyard.
 * A copy made for other threads (the API's snapshots) is immutable and is not marked: it takes
 * a pin (gc_strpool_pin, under the owner's lock) and lets go of it from any thread
 * (gc_strpool_unpin). The graveyard of a sweep is freed at the next sweep_begin, which waits
 * until every pin taken before that sweep has been let go: a snapshot never sees a string
 * freed. A holder that is not marked frees its strings under it: every struct holding pooled
 * strings has its mark function next to it (docs/architecture.md, "Memory").
 */
typedef struct gc_strpool gc_strpool;

gc_strpool *gc_strpool_new(size_t max_bytes);
gc_strpool *gc_strpool_free(gc_strpool *p); /* accepts NULL, returns NULL */
/* Returns the pooled copy of s[0..n), or NULL (out of memory or over the limit). */
const char *gc_strpool_intern(gc_strpool *p, const char *s, size_t n);
const char *gc_strpool_intern0(gc_strpool *p, const char *s);
/* Bytes of the live strings and the table (the graveyard not counted). */
size_t gc_strpool_bytes(const gc_strpool *p);
size_t gc_strpool_count(const gc_strpool *p); /* live strings */

/* 0: marking may start; -EBUSY: an older pin is held (try later); -ENOMEM. */
int gc_strpool_sweep_begin(gc_strpool *p);
/* Keeps s through the sweep under way when it is one of p's strings; anything else (NULL, a
 * literal, another pool's string) is ignored. */
void gc_strpool_mark(gc_strpool *p, const char *s);
/* Takes the unmarked strings out of the table; *ret_freed (may be NULL): how many. -EINVAL
 * without sweep_begin, -ENOMEM (nothing changed). */
int gc_strpool_sweep(gc_strpool *p, size_t *ret_freed);
/* A pin for an immutable copy made now; let go of it with gc_strpool_unpin (any thread). */
unsigned gc_strpool_pin(gc_strpool *p);
void gc_strpool_unpin(gc_strpool *p, unsigned pin);

typedef struct gc_strpool_stats {
        size_t strings, bytes;  /* live */
        size_t graveyard;       /* swept, waiting for older pins to go */
        uint64_t sweeps, freed; /* ever */
        uint64_t busy;          /* sweep_begin refused for a pin */
} gc_strpool_stats;
void gc_strpool_stats_get(const gc_strpool *p, gc_strpool_stats *ret);

/* ---- hash tables ---------------------------------------------------------------------------- */

/* FNV-1a over n bytes, for hash tables (and content hashes). */
uint64_t gc_hash(const void *p, size_t n, uint64_t seed);
/* Mixes a pointer (an interned string's, compared by pointer) into h: keys of pointer tuples. */
uint64_t gc_hash_ptr(uint64_t h, const void *p);
/* The 32 bits a gc_index takes, with well-mixed low bits (murmur3's finaliser). */
uint32_t gc_hash_fin(uint64_t h);

/*
 * The one hash table: an index of rows of the caller's own array, so records stay dense and are
 * scanned in order. Open addressing with linear probing and backward-shift deletion (no
 * tombstones), at most 3/4 full. A slot holds the key's 32-bit hash beside the row number + 1
 * (0: empty), 8 bytes, so growing and deleting never read the rows and a probe calls eq only
 * when the hashes match. The caller hashes its key (gc_hash, gc_hash_ptr, then gc_hash_fin) and
 * says whether a row holds it (gc_index_eq_fn); rows number below GC_INDEX_MAX_ROWS.
 * Zero-initialise to use. Positions are valid until the next reserve, del or clear.
 */
typedef struct gc_index_slot {
        uint32_t h;
        uint32_t ix; /* row + 1; 0 = empty */
} gc_index_slot;

typedef struct gc_index {
        gc_index_slot *s;
        size_t nslots; /* 0 or a power of two */
        size_t count;
} gc_index;

#define GC_INDEX_MAX_ROWS ((size_t)(UINT32_MAX / 2))

/* Returns 1 when row `row` holds the key in ctx. */
typedef int (*gc_index_eq_fn)(const void *ctx, size_t row);

/* 1 and *ret_pos = its slot when found; 0 and *ret_pos = the empty slot to fill when not. */
int gc_index_find(const gc_index *t, uint32_t h, gc_index_eq_fn eq, const void *ctx,
                  size_t *ret_pos);
/* The row at a slot find returned. */
static inline size_t gc_index_row(const gc_index *t, size_t pos)
{
        return (size_t)t->s[pos].ix - 1;
}
/* Points the slot find returned at another row of the same key. */
static inline void gc_index_set_row(gc_index *t, size_t pos, size_t row)
{
        t->s[pos].ix = (uint32_t)(row + 1);
}
/* Makes room for n rows; may reallocate the slots (positions move). -E2BIG from
 * GC_INDEX_MAX_ROWS on, -ENOMEM (t unchanged). */
int gc_index_reserve(gc_index *t, size_t n);
/* Fills the empty slot a find just returned (room reserved, no reserve since). */
void gc_index_fill(gc_index *t, size_t pos, uint32_t h, size_t row);
/* Adds a key known to be absent (room reserved). */
void gc_index_add_new(gc_index *t, uint32_t h, size_t row);
/* Reserves room for one more, then adds a key known to be absent. */
int gc_index_insert(gc_index *t, uint32_t h, size_t row);
/* Empties a slot find returned, pulling later members of its probe run back. */
void gc_index_del(gc_index *t, size_t pos);
/* Unindexes row `row`, its key hashed h (found by row: no key compared); -ENOENT when absent. */
int gc_index_del_row(gc_index *t, uint32_t h, size_t row);
/* The row `from` (its key's hash h) is now row `to`: a dense array's swap-remove. */
void gc_index_renumber(gc_index *t, uint32_t h, size_t from, size_t to);
/* Empties every slot, keeping them allocated (a rebuild adds the rows again). */
void gc_index_clear(gc_index *t);
/* Makes dst (uninitialised or freed) a copy of src; -ENOMEM (dst empty). */
int gc_index_dup(gc_index *dst, const gc_index *src);
void gc_index_free(gc_index *t);
/* Bytes of the slots. */
size_t gc_index_bytes(const gc_index *t);

/*
 * A map from pointers (interned strings, so equal strings are equal pointers) to values, for a
 * caller with no array of its own to index: its rows are (key, value) pairs in a dense array of
 * its own, indexed by a gc_index (removal moves the last row in). As large as before it was
 * one (32 bytes), so the structs holding maps keep their size. Zero-initialise to use.
 */
typedef struct gc_ptrmap_row {
        const void *key;
        size_t val;
} gc_ptrmap_row;

typedef struct gc_ptrmap {
        gc_ptrmap_row *rows; /* ix.count of them; room for 16, or the power of two above */
        gc_index ix;
} gc_ptrmap;

int gc_ptrmap_get(const gc_ptrmap *m, const void *key, size_t *ret_val);
/* Inserts or replaces; may reallocate the map's arrays. */
int gc_ptrmap_put(gc_ptrmap *m, const void *key, size_t val);
/* -ENOENT when absent. */
int gc_ptrmap_del(gc_ptrmap *m, const void *key);
void gc_ptrmap_free(gc_ptrmap *m);
/* Empties the map, keeping its room (for a map refilled again and again). */
void gc_ptrmap_clear(gc_ptrmap *m);
/* Marks every key as a pooled string (for a map keyed by interned strings). */
void gc_ptrmap_mark_keys(const gc_ptrmap *m, gc_strpool *p);

/* ---- diagnostics ---------------------------------------------------------------------------- */

/*
 * Warnings about input that was skipped or estimated, kept for the user to read. At most
 * GC_DIAG_KEEP messages are kept; the rest are only counted, so no input can grow it unbounded.
 */
#define GC_DIAG_KEEP 100
typedef struct gc_diag {
        char *msgs[GC_DIAG_KEEP];
        size_t n_kept;
        size_t n_total;
} gc_diag;

void gc_diag_add(gc_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gc_diag_clear(gc_diag *d);

/* Copies at most size-1 bytes and NUL-terminates; returns strlen(src). */
size_t gc_strlcpy(char *dst, const char *src, size_t size);

/*
 * The allocator of a long-running process that gives memory back (glibc; nothing elsewhere):
 * gc_malloc_tune, called once before any thread starts, asks for two arenas rather than one per
 * thread (each would keep its own heap at its high-water mark) and a fixed 128 KiB mmap
 * threshold (glibc otherwise raises it to the largest block freed so far, and later large
 * buffers stay in the heap); gc_malloc_give_back returns free pages to the system (after a
 * burst of garbage: the initial LISTs, a checkpoint, a fold).
 */
void gc_malloc_tune(void);
void gc_malloc_give_back(void);
/* The one error formatter: writes into err[errlen] (cut to fit); nothing when err is NULL or
 * errlen 0. */
void gc_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void gc_verrf(char *err, size_t errlen, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
