/* test_util: buffers, RFC 3339 time, durations, numbers, the string pool, hash tables, diagnostics,
 * jscan. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/jscan.h"
#include "util/util.h"

static const struct {
        const char *in;
        int ok;
        int64_t want;
} time_cases[] = {
    {"1970-01-01T00:00:00Z", 1, 0},
    {"2026-11-20T09:15:03Z", 1, 1795166103},
    {"2026-11-20T09:15:03.999999Z", 1, 1795166103}, /* fractions truncate */
    {"2026-11-20T10:15:03+01:00", 1, 1795166103},
    {"2026-11-20T08:45:03-00:30", 1, 1795166103},
    {"2024-02-29T00:00:00Z", 1, 1709164800}, /* leap day */
    {"2000-03-01T00:00:00Z", 1, 951868800},
    {"2023-02-29T00:00:00Z", 0, 0}, /* not a leap year */
    {"2026-13-01T00:00:00Z", 0, 0},
    {"2026-11-20T24:00:00Z", 0, 0},
    {"2026-11-20T09:15:03", 0, 0}, /* no zone */
    {"2026-11-20 09:15:03Z", 1, 1795166103},
    {"2026-11-20T09:15:03.Z", 0, 0},
    {"2026-11-20T09:15:03Zjunk", 0, 0},
    {"26-11-20T09:15:03Z", 0, 0},
    {"", 0, 0},
};

START_TEST(test_time_parse)
{
        int64_t t = -1;
        int r = gc_time_parse(time_cases[_i].in, strlen(time_cases[_i].in), &t);

        if (time_cases[_i].ok) {
                ck_assert_msg(r == 0, "%s should parse", time_cases[_i].in);
                ck_assert_int_eq(t, time_cases[_i].want);
        } else {
                ck_assert_msg(r < 0, "%s should fail", time_cases[_i].in);
        }
}
END_TEST

START_TEST(test_time_format)
{
        char out[GC_TIME_LEN];

        gc_time_format(1795166103, out);
        ck_assert_str_eq(out, "2026-11-20T09:15:03Z");
        gc_time_format(0, out);
        ck_assert_str_eq(out, "1970-01-01T00:00:00Z");
        gc_time_format(-1, out);
        ck_assert_str_eq(out, "1969-12-31T23:59:59Z");
        /* Round trip across many days, leap years included. */
        for (int64_t t = 946684800; t < 4102444800; t += 86400 * 37 + 3607) {
                int64_t back;

                gc_time_format(t, out);
                ck_assert_int_eq(gc_time_parse(out, strlen(out), &back), 0);
                ck_assert_int_eq(back, t);
        }
}
END_TEST

START_TEST(test_calendar)
{
        /* Toward minus infinity, whatever the signs. */
        ck_assert_int_eq(gc_floor_div(7, 2), 3);
        ck_assert_int_eq(gc_floor_div(-7, 2), -4);
        ck_assert_int_eq(gc_floor_div(7, -2), -4);
        ck_assert_int_eq(gc_floor_div(-7, -2), 3);
        ck_assert_int_eq(gc_floor_div(-86400, 86400), -1);
        ck_assert_int_eq(gc_floor_div(-1, 86400), -1);
        ck_assert_int_eq(gc_floor_div(0, 86400), 0);
        /* 1970-01-01 a Thursday, 1969-12-29 a Monday, 2026-11-23 a Monday. */
        ck_assert_int_eq(gc_weekday(0), 3);
        ck_assert_int_eq(gc_weekday(-3), 0);
        ck_assert_int_eq(gc_weekday(-1), 2);
        ck_assert_int_eq(gc_weekday(gc_days_from_civil(2026, 11, 23)), 0);
        ck_assert_int_eq(gc_weekday(gc_days_from_civil(2026, 11, 29)), 6);
        ck_assert_int_eq(gc_weekday(gc_days_from_civil(1900, 1, 1)), 0);
}
END_TEST

START_TEST(test_grow)
{
        int *v = NULL;
        size_t cap = 0, n;

        /* From first, doubling; room only when full. */
        ck_assert_int_eq(gc_grow((void **)&v, &cap, 0, sizeof(*v), 4, 0), 0);
        ck_assert_uint_eq(cap, 4);
        for (n = 0; n < 100; n++) {
                ck_assert_int_eq(gc_grow((void **)&v, &cap, n, sizeof(*v), 4, 0), 0);
                ck_assert_uint_gt(cap, n);
                v[n] = (int)n;
        }
        ck_assert_uint_eq(cap, 128);
        for (n = 0; n < 100; n++)
                ck_assert_int_eq(v[n], (int)n);
        free(v);
        /* A limit caps the room and refuses the element past it. */
        v = NULL;
        cap = 0;
        for (n = 0; n < 10; n++)
                ck_assert_int_eq(gc_grow((void **)&v, &cap, n, sizeof(*v), 8, 10), 0);
        ck_assert_uint_eq(cap, 10);
        ck_assert_int_eq(gc_grow((void **)&v, &cap, 10, sizeof(*v), 8, 10), -E2BIG);
        ck_assert_uint_eq(cap, 10);
        free(v);
        /* A size that would overflow is refused, the array untouched. */
        v = NULL;
        cap = 0;
        ck_assert_int_eq(gc_grow((void **)&v, &cap, 0, SIZE_MAX / 2, 4, 0), -ENOMEM);
        ck_assert_ptr_null(v);
        ck_assert_uint_eq(cap, 0);
}
END_TEST

START_TEST(test_duration)
{
        int64_t d;

        ck_assert_int_eq(gc_duration_parse("30m", &d), 0);
        ck_assert_int_eq(d, 1800);
        ck_assert_int_eq(gc_duration_parse("7d", &d), 0);
        ck_assert_int_eq(d, 604800);
        ck_assert_int_eq(gc_duration_parse("2w", &d), 0);
        ck_assert_int_eq(d, 1209600);
        ck_assert_int_lt(gc_duration_parse("7", &d), 0);
        ck_assert_int_lt(gc_duration_parse("d", &d), 0);
        ck_assert_int_lt(gc_duration_parse("-1h", &d), 0);
        ck_assert_int_lt(gc_duration_parse("1hh", &d), 0);
        ck_assert_int_lt(gc_duration_parse("99999999999999999999d", &d), 0);
}
END_TEST

START_TEST(test_numbers)
{
        int64_t i;
        double x;

        ck_assert_int_eq(gc_parse_int64("42", &i), 0);
        ck_assert_int_eq(i, 42);
        ck_assert_int_eq(gc_parse_int64("-7", &i), 0);
        ck_assert_int_eq(i, -7);
        ck_assert_int_lt(gc_parse_int64(" 1", &i), 0);
        ck_assert_int_lt(gc_parse_int64("1x", &i), 0);
        ck_assert_int_lt(gc_parse_int64("", &i), 0);
        ck_assert_int_eq(gc_parse_int64("99999999999999999999", &i), -ERANGE);
        ck_assert_int_eq(gc_parse_double("12.29", &x), 0);
        ck_assert_double_eq_tol(x, 12.29, 1e-12);
        ck_assert_int_lt(gc_parse_double("nan", &x), 0);
        ck_assert_int_lt(gc_parse_double("inf", &x), 0);
        ck_assert_int_lt(gc_parse_double("1e999", &x), 0);
        ck_assert_int_lt(gc_parse_double("3.5 ", &x), 0);
}
END_TEST

START_TEST(test_buf_limit)
{
        gc_buf b;

        gc_buf_init(&b, 8);
        ck_assert_int_eq(gc_buf_puts(&b, "12345678"), 0);
        ck_assert_int_eq(gc_buf_puts(&b, "9"), -E2BIG);
        ck_assert_uint_eq(b.len, 8);
        ck_assert_str_eq(b.data, "12345678");
        /* Sticky: after a failure nothing more is appended, even what would fit. */
        ck_assert_int_eq(b.err, -E2BIG);
        gc_buf_reset(&b);
        ck_assert_int_eq(b.err, 0);
        ck_assert_int_eq(gc_buf_printf(&b, "%d", 123456789), -E2BIG);
        ck_assert_int_eq(gc_buf_printf(&b, "%d", 1234567), -E2BIG);
        ck_assert_int_eq(gc_buf_puts(&b, ""), -E2BIG);
        ck_assert_int_eq(gc_buf_json_str(&b, "x"), -E2BIG);
        ck_assert_uint_eq(b.len, 0);
        /* A rollback to a mark clears the error; so does a reset. */
        gc_buf_truncate(&b, 0);
        ck_assert_int_eq(gc_buf_printf(&b, "%d", 1234567), 0);
        ck_assert_str_eq(b.data, "1234567");
        ck_assert_int_eq(gc_buf_puts(&b, "89"), -E2BIG);
        gc_buf_truncate(&b, 3);
        ck_assert_str_eq(b.data, "123");
        ck_assert_int_eq(gc_buf_puts(&b, "ab"), 0);
        ck_assert_str_eq(b.data, "123ab");
        gc_buf_free(&b);
        ck_assert_int_eq(b.err, 0);

        /* A limit of SIZE_MAX: the room for the NUL must not wrap to a zero-byte buffer. */
        gc_buf_init(&b, SIZE_MAX);
        for (int i = 0; i < 100; i++)
                ck_assert_int_eq(gc_buf_puts(&b, "0123456789"), 0);
        ck_assert_uint_eq(b.len, 1000);
        ck_assert_uint_eq(strlen(b.data), 1000);
        ck_assert_int_eq(gc_buf_append(&b, "x", SIZE_MAX - b.len), -E2BIG);
        gc_buf_free(&b);
}
END_TEST

START_TEST(test_buf_json)
{
        gc_buf b;

        gc_buf_init(&b, 1024);
        ck_assert_int_eq(gc_buf_json_str(&b, "a\"b\\c\n\x01"), 0);
        ck_assert_str_eq(b.data, "\"a\\\"b\\\\c\\n\\u0001\"");
        gc_buf_free(&b);
}
END_TEST

START_TEST(test_strpool)
{
        gc_strpool *p = gc_strpool_new(1 << 20);
        const char *a, *b, *c;
        char name[32];

        ck_assert_ptr_nonnull(p);
        a = gc_strpool_intern0(p, "team");
        b = gc_strpool_intern(p, "teamX", 4);
        c = gc_strpool_intern0(p, "project");
        ck_assert_ptr_eq(a, b);
        ck_assert_ptr_ne(a, c);
        ck_assert_str_eq(b, "team");
        for (int i = 0; i < 5000; i++) {
                snprintf(name, sizeof(name), "n%d", i);
                ck_assert_ptr_nonnull(gc_strpool_intern0(p, name));
        }
        ck_assert_ptr_eq(gc_strpool_intern0(p, "team"), a);
        ck_assert_str_eq(gc_strpool_intern0(p, "n4999"), "n4999");
        p = gc_strpool_free(p);
        ck_assert_ptr_null(p);

        p = gc_strpool_new(10);
        ck_assert_ptr_nonnull(gc_strpool_intern0(p, "abcd"));
        ck_assert_ptr_null(gc_strpool_intern0(p, "efghijkl")); /* over the limit */
        gc_strpool_free(p);
}
END_TEST

/* Mark and sweep: what is marked stays (same pointer), the rest goes to the graveyard, which is
 * freed only once every pin taken before the sweep is let go (ASan sees a read of a freed one). */
START_TEST(test_strpool_sweep)
{
        gc_strpool *p = gc_strpool_new(1 << 24);
        const char *keep[1000], *drop0, *late, *again;
        char name[32], copy[8] = "team";
        gc_strpool_stats st;
        unsigned pin;
        size_t freed = 0;

        ck_assert_int_eq(gc_strpool_sweep(p, &freed), -EINVAL); /* no sweep_begin */
        for (int i = 0; i < 2000; i++) {
                snprintf(name, sizeof(name), "pod-%d", i);
                const char *s = gc_strpool_intern0(p, name);

                ck_assert_ptr_nonnull(s);
                if (i % 2 == 0)
                        keep[i / 2] = s;
        }
        drop0 = gc_strpool_intern0(p, "pod-1");
        ck_assert_uint_eq(gc_strpool_count(p), 2000);
        pin = gc_strpool_pin(p); /* a snapshot made now may show pod-1 */

        ck_assert_int_eq(gc_strpool_sweep_begin(p), 0);
        for (int i = 0; i < 1000; i++)
                gc_strpool_mark(p, keep[i]);
        gc_strpool_mark(p, copy);    /* not the pool's: ignored */
        gc_strpool_mark(p, "pod-3"); /* equal text, another pointer: ignored */
        gc_strpool_mark(p, NULL);
        late = gc_strpool_intern0(p, "interned-while-marking"); /* in use: kept */
        for (int i = 0; i < 200; i++) { /* growing the table while marking keeps the marks */
                snprintf(name, sizeof(name), "late-%d", i);
                ck_assert_ptr_nonnull(gc_strpool_intern0(p, name));
        }
        ck_assert_int_eq(gc_strpool_sweep(p, &freed), 0);
        ck_assert_uint_eq(freed, 1000);
        ck_assert_uint_eq(gc_strpool_count(p), 1201);
        for (int i = 0; i < 1000; i++) {
                snprintf(name, sizeof(name), "pod-%d", i * 2);
                ck_assert_ptr_eq(gc_strpool_intern0(p, name), keep[i]);
        }
        ck_assert_ptr_eq(gc_strpool_intern0(p, "interned-while-marking"), late);
        ck_assert_ptr_eq(gc_strpool_intern0(p, "late-199"), gc_strpool_intern0(p, "late-199"));
        /* The swept text interned again is a new copy; the old one still reads (pinned). */
        again = gc_strpool_intern0(p, "pod-1");
        ck_assert_ptr_ne(again, drop0);
        ck_assert_str_eq(drop0, "pod-1");
        gc_strpool_stats_get(p, &st);
        ck_assert_uint_eq(st.graveyard, 1000);
        ck_assert_uint_eq(st.sweeps, 1);
        ck_assert_uint_eq(st.freed, 1000);

        /* The pin from before the sweep holds the graveyard. */
        ck_assert_int_eq(gc_strpool_sweep_begin(p), -EBUSY);
        ck_assert_str_eq(drop0, "pod-1");
        gc_strpool_unpin(p, pin);
        pin = gc_strpool_pin(p); /* taken after the sweep: holds nothing of the graveyard */
        ck_assert_int_eq(gc_strpool_sweep_begin(p), 0);
        gc_strpool_stats_get(p, &st);
        ck_assert_uint_eq(st.graveyard, 0);
        ck_assert_uint_eq(st.busy, 1);
        gc_strpool_mark(p, again);
        ck_assert_int_eq(gc_strpool_sweep(p, &freed), 0);
        ck_assert_uint_eq(freed, 1201); /* all but "pod-1" */
        ck_assert_uint_eq(gc_strpool_count(p), 1);
        ck_assert_ptr_eq(gc_strpool_intern0(p, "pod-1"), again);
        /* That pin is of the epoch the second sweep's graveyard was made in: it holds it. */
        ck_assert_int_eq(gc_strpool_sweep_begin(p), -EBUSY);
        gc_strpool_unpin(p, pin);
        ck_assert_int_eq(gc_strpool_sweep_begin(p), 0);
        ck_assert_int_eq(gc_strpool_sweep(p, &freed), 0);
        ck_assert_uint_eq(gc_strpool_count(p), 0);
        ck_assert_uint_eq(gc_strpool_bytes(p), 64 * sizeof(char *));
        gc_strpool_free(p); /* frees the graveyard too */
}
END_TEST

START_TEST(test_diag_bounded)
{
        gc_diag d;

        memset(&d, 0, sizeof(d));
        for (int i = 0; i < GC_DIAG_KEEP + 50; i++)
                gc_diag_add(&d, "warning %d", i);
        ck_assert_uint_eq(d.n_kept, GC_DIAG_KEEP);
        ck_assert_uint_eq(d.n_total, GC_DIAG_KEEP + 50);
        ck_assert_str_eq(d.msgs[0], "warning 0");
        gc_diag_clear(&d);
        ck_assert_uint_eq(d.n_total, 0);
}
END_TEST

START_TEST(test_read_file)
{
        gc_buf b;

        ck_assert_int_eq(gc_read_file(GC_SOURCE_DIR "/tests/unit/test_util.c", 1 << 20, &b), 0);
        ck_assert_ptr_nonnull(strstr(b.data, "test_util"));
        gc_buf_free(&b);
        ck_assert_int_eq(gc_read_file(GC_SOURCE_DIR "/tests/unit/test_util.c", 10, &b), -E2BIG);
        ck_assert_int_eq(gc_read_file("/nonexistent/x", 10, &b), -ENOENT);
}
END_TEST

START_TEST(test_ptrmap)
{
        static char keys[5000];
        gc_ptrmap m;
        size_t v;

        memset(&m, 0, sizeof(m));
        ck_assert_int_eq(gc_ptrmap_get(&m, &keys[0], &v), -ENOENT);
        for (size_t i = 0; i < 5000; i++)
                ck_assert_int_eq(gc_ptrmap_put(&m, &keys[i], i), 0);
        ck_assert_uint_eq(m.ix.count, 5000);
        /* delete every third, then check every key against a model */
        for (size_t i = 0; i < 5000; i += 3)
                ck_assert_int_eq(gc_ptrmap_del(&m, &keys[i]), 0);
        ck_assert_int_eq(gc_ptrmap_del(&m, &keys[0]), -ENOENT);
        for (size_t i = 0; i < 5000; i++) {
                int r = gc_ptrmap_get(&m, &keys[i], &v);

                if (i % 3 == 0) {
                        ck_assert_int_eq(r, -ENOENT);
                } else {
                        ck_assert_int_eq(r, 0);
                        ck_assert_uint_eq(v, i);
                }
        }
        ck_assert_int_eq(gc_ptrmap_put(&m, &keys[1], 77), 0);
        ck_assert_int_eq(gc_ptrmap_get(&m, &keys[1], &v), 0);
        ck_assert_uint_eq(v, 77);
        /* Emptied and filled again past its old size: the rows' room (not stored) holds. */
        for (size_t i = 0; i < 5000; i++)
                gc_ptrmap_del(&m, &keys[i]);
        ck_assert_uint_eq(m.ix.count, 0);
        for (size_t k = 0; k < 2; k++)
                for (size_t i = 0; i < 5000; i++)
                        ck_assert_int_eq(gc_ptrmap_put(&m, &keys[i], i + k), 0);
        ck_assert_uint_eq(m.ix.count, 5000);
        for (size_t i = 0; i < 5000; i++) {
                ck_assert_int_eq(gc_ptrmap_get(&m, &keys[i], &v), 0);
                ck_assert_uint_eq(v, i + 1);
        }
        /* Cleared: nothing is found, and it fills again, small and then past its old size. */
        gc_ptrmap_clear(&m);
        ck_assert_uint_eq(m.ix.count, 0);
        for (size_t i = 0; i < 5000; i++)
                ck_assert_int_eq(gc_ptrmap_get(&m, &keys[i], &v), -ENOENT);
        for (size_t n = 3; n <= 6000; n += 5997) {
                for (size_t i = 0; i < n && i < 5000; i++)
                        ck_assert_int_eq(gc_ptrmap_put(&m, &keys[i], i * 7), 0);
                for (size_t i = 0; i < 5000; i++) {
                        int r = gc_ptrmap_get(&m, &keys[i], &v);

                        ck_assert_int_eq(r, i < n ? 0 : -ENOENT);
                        if (r == 0)
                                ck_assert_uint_eq(v, i * 7);
                }
                gc_ptrmap_clear(&m);
        }
        gc_ptrmap_free(&m);
        gc_ptrmap_free(&m);
        ck_assert_uint_eq(sizeof(gc_ptrmap), 32); /* structs holding maps keep their size */
}
END_TEST

/* Rows of the index tests: keys in a dense array, as a caller holds them. */
typedef struct ix_rows {
        uint64_t key[512];
        uint32_t h[512];
        size_t n;
} ix_rows;

typedef struct ix_key {
        const ix_rows *rows;
        uint64_t key;
} ix_key;

static int ix_eq(const void *ctx, size_t row)
{
        const ix_key *k = ctx;

        return k->rows->key[row] == k->key;
}

/* The row holding key, or -1. */
static long ix_lookup(const gc_index *t, const ix_rows *r, uint64_t key, uint32_t h)
{
        ix_key k = {r, key};
        size_t pos;

        return gc_index_find(t, h, ix_eq, &k, &pos) ? (long)gc_index_row(t, pos) : -1;
}

/* Removes a row as the ledger does: unindex it, move the last row into its place. */
static void ix_remove(gc_index *t, ix_rows *r, uint64_t key)
{
        ix_key k = {r, key};
        size_t pos, row, last = r->n - 1;

        for (row = 0; row < r->n && r->key[row] != key; row++)
                ;
        ck_assert_uint_lt(row, r->n);
        ck_assert(gc_index_find(t, r->h[row], ix_eq, &k, &pos));
        ck_assert_uint_eq(gc_index_row(t, pos), row);
        if (key % 3) /* both ways of deleting: by the slot found, by row */
                gc_index_del(t, pos);
        else
                ck_assert_int_eq(gc_index_del_row(t, r->h[row], row), 0);
        if (row != last) {
                gc_index_renumber(t, r->h[last], last, row);
                r->key[row] = r->key[last];
                r->h[row] = r->h[last];
        }
        r->n--;
}

START_TEST(test_index_collisions)
{
        /* Few distinct hashes (long probe runs); the last two are homed at the last slots of
         * a table of any size, so their runs wrap to slot 0. */
        static const uint32_t hs[] = {0, 1, 1, 5, 14, 15, 15, 15, 31, 63, 0xfffffffeu, 0xffffffffu};
        static ix_rows r;
        gc_index t;
        unsigned seed = 7;

        memset(&t, 0, sizeof(t));
        memset(&r, 0, sizeof(r));
        ck_assert_int_eq(ix_lookup(&t, &r, 1, 0), -1); /* empty, never allocated */
        for (uint64_t key = 1; key <= 300; key++) {
                ix_key k = {&r, key};
                uint32_t h = hs[key % (sizeof(hs) / sizeof(hs[0]))];
                size_t pos;

                ck_assert(!gc_index_find(&t, h, ix_eq, &k, &pos));
                if (key % 2) { /* both ways of inserting */
                        ck_assert_int_eq(gc_index_insert(&t, h, r.n), 0);
                } else {
                        ck_assert_int_eq(gc_index_reserve(&t, t.count + 1), 0);
                        ck_assert(!gc_index_find(&t, h, ix_eq, &k, &pos)); /* slots moved */
                        gc_index_fill(&t, pos, h, r.n);
                }
                r.key[r.n] = key;
                r.h[r.n++] = h;
        }
        ck_assert_uint_eq(t.count, 300);
        ck_assert_uint_le(t.count * 4, t.nslots * 3);
        for (size_t i = 0; i < r.n; i++)
                ck_assert_int_eq(ix_lookup(&t, &r, r.key[i], r.h[i]), (long)i);
        /* Delete in a scrambled order; after each, every key left is found at its row (no
         * probe run broken by the hole) and the deleted one is not. */
        while (r.n) {
                uint64_t gone;

                seed = seed * 1103515245u + 12345u;
                gone = r.key[(seed >> 8) % r.n];
                ix_remove(&t, &r, gone);
                ck_assert_uint_eq(t.count, r.n);
                ck_assert_int_eq(ix_lookup(&t, &r, gone, hs[gone % (sizeof(hs) / sizeof(hs[0]))]),
                                 -1);
                for (size_t i = 0; i < r.n; i++)
                        ck_assert_int_eq(ix_lookup(&t, &r, r.key[i], r.h[i]), (long)i);
        }
        for (size_t i = 0; i < t.nslots; i++)
                ck_assert_uint_eq(t.s[i].ix, 0);
        gc_index_free(&t);
        ck_assert_ptr_null(t.s);
        ck_assert_uint_eq(t.nslots, 0);
}
END_TEST

START_TEST(test_index_grow_and_rebuild)
{
        static ix_rows r;
        gc_index t, c;
        size_t last = 0;

        memset(&t, 0, sizeof(t));
        memset(&r, 0, sizeof(r));
        for (uint64_t key = 0; key < 500; key++) {
                uint32_t h = gc_hash_fin(gc_hash(&key, sizeof(key), 0));

                ck_assert_int_eq(gc_index_insert(&t, h, r.n), 0);
                r.key[r.n] = key;
                r.h[r.n++] = h;
                /* Doubles from 16, never past 3/4 full. */
                ck_assert_uint_ge(t.nslots, 16);
                ck_assert_uint_eq(t.nslots & (t.nslots - 1), 0);
                ck_assert_uint_le(t.count * 4, t.nslots * 3);
                ck_assert_uint_ge(t.nslots, last);
                last = t.nslots;
        }
        ck_assert_uint_eq(t.nslots, 1024);
        ck_assert_uint_eq(gc_index_bytes(&t), 1024 * sizeof(gc_index_slot));
        /* Reserving less than it holds never shrinks it. */
        ck_assert_int_eq(gc_index_reserve(&t, 1), 0);
        ck_assert_uint_eq(t.nslots, 1024);
        /* A copy answers alike and is its own. */
        ck_assert_int_eq(gc_index_dup(&c, &t), 0);
        ck_assert_ptr_ne(c.s, t.s);
        ck_assert_uint_eq(c.count, 500);
        for (size_t i = 0; i < r.n; i++)
                ck_assert_int_eq(ix_lookup(&c, &r, r.key[i], r.h[i]), (long)i);
        /* Cleared, then rebuilt from the rows in another order (as a compaction does). */
        gc_index_clear(&t);
        ck_assert_uint_eq(t.count, 0);
        ck_assert_uint_eq(t.nslots, 1024);
        for (size_t i = 0; i < r.n; i++)
                ck_assert_int_eq(ix_lookup(&t, &r, r.key[i], r.h[i]), -1);
        for (size_t i = r.n; i-- > 0;)
                gc_index_add_new(&t, r.h[i], i);
        for (size_t i = 0; i < r.n; i++)
                ck_assert_int_eq(ix_lookup(&t, &r, r.key[i], r.h[i]), (long)i);
        /* A row pointed elsewhere (a newer row of the same key). */
        {
                ix_key k = {&r, r.key[3]};
                size_t pos;

                ck_assert(gc_index_find(&t, r.h[3], ix_eq, &k, &pos));
                gc_index_set_row(&t, pos, 3);
                ck_assert_uint_eq(gc_index_row(&t, pos), 3);
        }
        gc_index_free(&c);
        gc_index_free(&t);
        gc_index_free(&t); /* twice is harmless */
        memset(&c, 0, sizeof(c));
        ck_assert_int_eq(gc_index_dup(&t, &c), 0); /* an empty copy allocates nothing */
        ck_assert_ptr_null(t.s);
}
END_TEST

START_TEST(test_index_limits)
{
        gc_index t;

        memset(&t, 0, sizeof(t));
        ck_assert_int_eq(gc_index_insert(&t, 9, 0), 0);
        /* Past the rows a uint32 slot can name: refused, and the index as it was. */
        ck_assert_int_eq(gc_index_reserve(&t, GC_INDEX_MAX_ROWS), -E2BIG);
        ck_assert_int_eq(gc_index_reserve(&t, SIZE_MAX), -E2BIG);
        ck_assert_uint_eq(t.count, 1);
        ck_assert_uint_eq(t.nslots, 16);
        ck_assert_uint_eq(t.s[9].ix, 1);
        /* Renumbering or deleting a row that is not there changes nothing. */
        gc_index_renumber(&t, 9, 5, 6);
        ck_assert_int_eq(gc_index_del_row(&t, 9, 5), -ENOENT);
        ck_assert_int_eq(gc_index_del_row(&t, 3, 0), -ENOENT);
        ck_assert_uint_eq(t.s[9].ix, 1);
        ck_assert_uint_eq(t.count, 1);
        gc_index_free(&t);
        gc_index_renumber(&t, 9, 0, 1); /* nor in an empty index */
        ck_assert_int_eq(gc_index_del_row(&t, 9, 0), -ENOENT);
}
END_TEST

/* ---- jscan: the items of a list, fed in pieces ------------------------------------------------
 */

/* What a scan reported, as text: one line per value, then the result and its message. */
typedef struct jlog {
        gc_buf b;
        int fail_at; /* the callback fails on this value (1-based), 0 never */
        int seen;
        int in_place; /* values passed pointing into the fed text */
        const char *text;
        size_t text_len;
} jlog;

static int jlog_value(void *ud, const gc_jscan_value *v)
{
        jlog *l = ud;

        if (v->json && v->json >= l->text && v->json < l->text + l->text_len)
                l->in_place++;
        gc_buf_printf(&l->b, "%d %zu %d %c %zu ", (int)v->what, v->index, v->depth, v->first,
                      v->len);
        if (v->json)
                gc_buf_append(&l->b, v->json, v->len);
        else
                gc_buf_puts(&l->b, "(dropped)");
        gc_buf_puts(&l->b, "\n");
        return ++l->seen == l->fail_at ? -ECANCELED : 0;
}

/*
 * Scans doc in pieces: cuts[] are the offsets where a piece ends (sorted, n_cuts of them);
 * step > 0 instead feeds step bytes at a time. Returns the log (the caller frees it).
 */
static char *jscan_run(const char *doc, size_t max_value, const size_t *cuts, size_t n_cuts,
                       size_t step, int fail_at, int *ret_in_place)
{
        size_t n = strlen(doc), off = 0, k = 0;
        char err[160] = "";
        gc_jscan s;
        jlog l;
        int r = 0;

        memset(&l, 0, sizeof(l));
        gc_buf_init(&l.b, 1u << 20);
        l.fail_at = fail_at;
        l.text = doc;
        l.text_len = n;
        gc_jscan_init(&s, max_value, jlog_value, &l);
        while (r == 0 && off < n) {
                size_t to = step ? off + step : (k < n_cuts ? cuts[k++] : n);

                if (to > n)
                        to = n;
                r = gc_jscan_feed(&s, doc + off, to - off, err, sizeof(err));
                off = to;
        }
        if (r == 0)
                r = gc_jscan_finish(&s, err, sizeof(err));
        /* An error is sticky. */
        if (r < 0) {
                ck_assert_int_eq(gc_jscan_feed(&s, "{", 1, NULL, 0), r);
                ck_assert_int_eq(gc_jscan_finish(&s, NULL, 0), r);
        }
        gc_buf_printf(&l.b, "= %d %s items=%d n=%zu depth=%d", r, r == -EINVAL ? err : "", s.items,
                      s.n_items, s.depth);
        gc_jscan_release(&s);
        if (ret_in_place)
                *ret_in_place = l.in_place;
        return gc_buf_steal(&l.b);
}

static const char *const jscan_docs[] = {
    /* a list as the API server writes it, with strings that look like structure */
    "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"12345\","
    "\"continue\":\"eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ\"},\"items\":[ {\"metadata\":{\"name\":\"a\"}},"
    "{\"metadata\":{\"name\":\"b]}\\\"{[\"},\"spec\":{\"x\":[1,2,{\"y\":\"}\"}]}} ,\n"
    "{\"metadata\":{\"name\":\"c\\\\\"}},\"s\\\\\\\"\",-1.5e3,[[],{}],null],"
    "\"extra\":[[\"items\"],{\"items\":[{}]}],\"n\":-1.5e3,\"t\":true }\n",
    /* backslash runs of every parity before quotes */
    "{\"items\":[{\"a\":\"\\\\\\\\\",\"b\":\"\\\\\\\"\\\\\",\"c\":\"\\\"\"},\"\\\\\"],"
    "\"kind\":\"x\\\"y\"}",
    "{\"items\":null,\"metadata\":{}}",
    "  {}  ",
};

START_TEST(test_jscan_pieces)
{
        const char *doc = jscan_docs[_i];
        size_t n = strlen(doc);
        int in_place = 0;
        char *whole = jscan_run(doc, 4096, NULL, 0, 0, 0, &in_place), *got;

        ck_assert_ptr_nonnull(strstr(whole, "= 0 "));
        /* Fed whole, no value is copied: every line but the result's was passed in place. */
        for (const char *q = whole; (q = strchr(q, '\n')); q++)
                in_place--;
        ck_assert_int_eq(in_place, 0);
        for (size_t cut = 0; cut <= n; cut++) {
                got = jscan_run(doc, 4096, &cut, 1, 0, 0, NULL);
                ck_assert_str_eq(got, whole);
                free(got);
        }
        for (size_t a = 1; a < n; a += 3)
                for (size_t b = a; b < n; b += 5) {
                        size_t cuts[2] = {a, b};

                        got = jscan_run(doc, 4096, cuts, 2, 0, 0, NULL);
                        ck_assert_str_eq(got, whole);
                        free(got);
                }
        got = jscan_run(doc, 4096, NULL, 0, 1, 0, NULL);
        ck_assert_str_eq(got, whole);
        free(got);
        free(whole);
}
END_TEST

START_TEST(test_jscan_results)
{
        int in_place = 0;
        char *got = jscan_run(jscan_docs[0], 4096, NULL, 0, 0, 0, &in_place);

        ck_assert_str_eq(
            got, "3 0 0 \" 9 \"PodList\"\n"
                 "2 0 1 { 71 {\"resourceVersion\":\"12345\",\"continue\":"
                 "\"eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ\"}\n"
                 "1 0 2 { 25 {\"metadata\":{\"name\":\"a\"}}\n"
                 "1 1 4 { 60 {\"metadata\":{\"name\":\"b]}\\\"{[\"},\"spec\":{\"x\":[1,2,{\"y\":"
                 "\"}\"}]}}\n"
                 "1 2 2 { 27 {\"metadata\":{\"name\":\"c\\\\\"}}\n"
                 "1 3 0 \" 7 \"s\\\\\\\"\"\n"
                 "1 4 0 - 6 -1.5e3\n"
                 "1 5 2 [ 7 [[],{}]\n"
                 "1 6 0 n 4 null\n"
                 "= 0  items=1 n=7 depth=4");
        /* Fed whole, every value is passed in place. */
        ck_assert_int_eq(in_place, 9);
        free(got);
}
END_TEST

START_TEST(test_jscan_limits)
{
        gc_buf b;
        char *got, *whole;

        /* An item over max_value: reported without bytes, its whole length, fed any way. */
        whole =
            jscan_run("{\"items\":[{\"a\":\"0123456789\"},{\"b\":1}]}", 16, NULL, 0, 0, 0, NULL);
        ck_assert_str_eq(whole, "1 0 1 { 18 (dropped)\n1 1 1 { 7 {\"b\":1}\n"
                                "= 0  items=1 n=2 depth=1");
        for (size_t step = 1; step < 8; step++) {
                got = jscan_run("{\"items\":[{\"a\":\"0123456789\"},{\"b\":1}]}", 16, NULL, 0, step,
                                0, NULL);
                ck_assert_str_eq(got, whole);
                free(got);
        }
        free(whole);
        /* GC_JSCAN_MAX_DEPTH levels in an item, its own included, and one more. */
        for (int extra = 0; extra < 2; extra++) {
                gc_buf_init(&b, 1u << 20);
                gc_buf_puts(&b, "{\"items\":[{\"x\":");
                for (int i = 1; i < GC_JSCAN_MAX_DEPTH + extra; i++)
                        gc_buf_puts(&b, "[");
                for (int i = 1; i < GC_JSCAN_MAX_DEPTH + extra; i++)
                        gc_buf_puts(&b, "]");
                gc_buf_puts(&b, "}]}");
                got = jscan_run(b.data, SIZE_MAX, NULL, 0, 7, 0, NULL);
                ck_assert_ptr_nonnull(strstr(got, extra ? "= -22 items[0]: nesting too deep"
                                                        : "= 0  items=1 n=1 depth=1024"));
                free(got);
                gc_buf_free(&b);
        }
        /* The same bound for any member. */
        gc_buf_init(&b, 1u << 20);
        gc_buf_puts(&b, "{\"metadata\":");
        for (int i = 0; i < GC_JSCAN_MAX_DEPTH + 1; i++)
                gc_buf_puts(&b, "{\"a\":");
        got = jscan_run(b.data, SIZE_MAX, NULL, 0, 0, 0, NULL);
        ck_assert_str_eq(got, "= -22 document: metadata: nesting too deep items=0 n=0 depth=0");
        free(got);
        gc_buf_free(&b);
        /* The callback's error stops the scan, and err is left alone. */
        got = jscan_run("{\"items\":[{},{},{}]}", 64, NULL, 0, 0, 2, NULL);
        ck_assert_str_eq(got, "1 0 1 { 2 {}\n1 1 1 { 2 {}\n= -125  items=1 n=2 depth=1");
        free(got);
}
END_TEST

static const struct {
        const char *doc;
        const char *err;
} jscan_bad[] = {
    {"", "not a JSON object"},
    {"  ", "not a JSON object"},
    {"[]", "not a JSON object"},
    {"null", "not a JSON object"},
    {"{", "document: object key expected"},
    {"{,}", "document: object key expected"},
    {"{\"a\":1,}", "document: object key expected"},
    {"{\"a", "document: unterminated string"},
    {"{\"a\" 1}", "document: ':' expected"},
    {"{\"a\"", "document: ':' expected"},
    {"{\"a\":", "document: a: value expected"},
    {"{\"a\":}", "document: a: value expected"},
    {"{\"a\":1", "document: ',' or '}' expected"},
    {"{\"a\":1]", "document: ',' or '}' expected"},
    {"{\"a\":{\"b\":[}]}", "document: a: mismatched bracket"},
    {"{\"a\":{\"b\":[", "document: a: unexpected end of document"},
    {"{\"a\":\"x}", "document: a: unterminated string"},
    {"{\"a\":\"x\\\"}", "document: a: unterminated string"},
    {"{\"metadata\":{\"a\":\"x}, \"items\":[]}", "document: metadata: unterminated string"},
    {"{\"items\":{}}", "items: not an array, or given twice"},
    {"{\"items\":5}", "items: not an array, or given twice"},
    {"{\"items\":nul}", "items: not an array, or given twice"},
    {"{\"items\":nu", "items: not an array, or given twice"},
    {"{\"items\":", "items: not an array, or given twice"},
    {"{\"items\":[],\"items\":[]}", "items: not an array, or given twice"},
    {"{\"items\":null,\"items\":null}", "items: not an array, or given twice"},
    {"{\"items\":nullx}", "document: ',' or '}' expected"},
    {"{\"items\":[] x}", "document: ',' or '}' expected"},
    {"{\"items\":[]", "document: ',' or '}' expected"},
    {"{\"items\":[]} x", "document: data after the end"},
    {"{}}", "document: data after the end"},
    {"{\"items\":[", "items[0]: value expected"},
    {"{\"items\":[,]}", "items[0]: value expected"},
    {"{\"items\":[{},]}", "items[1]: value expected"},
    {"{\"items\":[{}:]}", "items[0]: ',' or ']' expected after it"},
    {"{\"items\":[1 2]}", "items[0]: ',' or ']' expected after it"},
    {"{\"items\":[{},1", "items[1]: ',' or ']' expected after it"},
    {"{\"items\":[{\"a\":1}", "items[0]: ',' or ']' expected after it"},
    {"{\"items\":[{\"a\":\"b}]}", "items[0]: unterminated string"},
    {"{\"items\":[{\"a\":[}]}", "items[0]: mismatched bracket"},
    {"{\"items\":[{\"a\":[]]}", "items[0]: mismatched bracket"},
    {"{\"items\":[{}, {\"a\":1", "items[1]: unexpected end of document"},
};

START_TEST(test_jscan_malformed)
{
        const char *doc = jscan_bad[_i].doc;
        size_t n = strlen(doc);
        char *whole = jscan_run(doc, 4096, NULL, 0, 0, 0, NULL), *got;
        char want[256];

        snprintf(want, sizeof(want), "= -22 %s items=", jscan_bad[_i].err);
        ck_assert_msg(strstr(whole, want) != NULL, "%s: got %s", doc, whole);
        /* The same values and the same message, however the text is cut. */
        for (size_t cut = 0; cut <= n; cut++) {
                got = jscan_run(doc, 4096, &cut, 1, 0, 0, NULL);
                ck_assert_str_eq(got, whole);
                free(got);
        }
        got = jscan_run(doc, 4096, NULL, 0, 1, 0, NULL);
        ck_assert_str_eq(got, whole);
        free(got);
        free(whole);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("util");
        TCase *tc = tcase_create("util");
        SRunner *sr;
        int failed;

        tcase_add_loop_test(tc, test_time_parse, 0, sizeof(time_cases) / sizeof(time_cases[0]));
        tcase_add_test(tc, test_time_format);
        tcase_add_test(tc, test_duration);
        tcase_add_test(tc, test_calendar);
        tcase_add_test(tc, test_grow);
        tcase_add_test(tc, test_numbers);
        tcase_add_test(tc, test_buf_limit);
        tcase_add_test(tc, test_buf_json);
        tcase_add_test(tc, test_strpool);
        tcase_add_test(tc, test_strpool_sweep);
        tcase_add_test(tc, test_diag_bounded);
        tcase_add_test(tc, test_read_file);
        tcase_add_test(tc, test_index_collisions);
        tcase_add_test(tc, test_index_grow_and_rebuild);
        tcase_add_test(tc, test_index_limits);
        tcase_add_test(tc, test_ptrmap);
        suite_add_tcase(s, tc);
        tc = tcase_create("jscan");
        tcase_add_loop_test(tc, test_jscan_pieces, 0,
                            (int)(sizeof(jscan_docs) / sizeof(jscan_docs[0])));
        tcase_add_test(tc, test_jscan_results);
        tcase_add_test(tc, test_jscan_limits);
        tcase_add_loop_test(tc, test_jscan_malformed, 0,
                            (int)(sizeof(jscan_bad) / sizeof(jscan_bad[0])));
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
