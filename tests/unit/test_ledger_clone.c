/* test_ledger_clone: a cloned ledger answers as the original did and lives on independently. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/ledger.h"

#define T0 ((int64_t)1767225600) /* 2026-01-01T00:00:00Z, on an hour */
#define H  ((int64_t)3600)

static gc_strpool *pool;
static gc_ledger *led;

static void setup(void)
{
        gc_ledger_opts o = {0};

        pool = gc_strpool_new(64u << 20);
        ck_assert_ptr_nonnull(pool);
        o.pool = pool;
        led = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(led);
}

static void teardown(void)
{
        led = gc_ledger_free(led);
        pool = gc_strpool_free(pool);
}

static void put_pod(gc_ledger *l, const char *uid, const char *ns, const char *team,
                    const char *node, double geq, double price, int64_t start, int64_t end)
{
        gc_usage u = {0};

        u.pod_uid = uid;
        u.dims[GC_DIM_NAMESPACE] = ns;
        u.dims[GC_DIM_TEAM] = team;
        u.dims[GC_DIM_PROJECT] = "p";
        u.dims[GC_DIM_MODEL] = "H100";
        u.dims[GC_DIM_CAPACITY_TYPE] = "on-demand";
        u.dims[GC_DIM_NODE] = node;
        u.dims[GC_DIM_POD] = uid;
        u.geq = geq;
        u.price_per_gpu_hour = price;
        u.start = start;
        u.end = end;
        ck_assert_int_eq(gc_ledger_put_usage(l, &u), 0);
}

static void put_node(gc_ledger *l, const char *node, double geq, int64_t start)
{
        gc_capacity c = {0};

        c.node = node;
        c.model = "H100";
        c.capacity_type = "on-demand";
        c.geq = geq;
        c.price_per_gpu_hour = 4.0;
        c.start = start;
        c.end = GC_OPEN;
        ck_assert_int_eq(gc_ledger_put_capacity(l, &c), 0);
}

/* A ledger with folded hours, closed and open intervals on two nodes. */
static void fill(gc_ledger *l)
{
        put_node(l, "n1", 8, T0);
        put_node(l, "n2", 4, T0 + H);
        put_pod(l, "a", "ml", "red", "n1", 2, 4.0, T0, T0 + 2 * H);
        put_pod(l, "b", "ml", "blue", "n1", 1, 4.0, T0 + 1800, T0 + 5 * H);
        put_pod(l, "c", "web", "blue", "n2", 4, 4.0, T0 + 3 * H, GC_OPEN);
        ck_assert_int_eq(gc_ledger_fold(l, T0 + 3 * H, 0), 1);
        put_pod(l, "d", "web", "red", "n2", 0.5, 4.0, T0 + 4 * H, T0 + 6 * H + 17);
}

/* Renders a summary as text so two summaries compare as strings. */
static void dump(const gc_ledger *l, const gc_dim *by, size_t n_by, int64_t start, int64_t end,
                 int64_t now, char *out, size_t outlen)
{
        gc_query q = {0};
        gc_cost_summary s = {0};
        size_t off = 0;

        q.start = start;
        q.end = end;
        q.now = now;
        memcpy(q.by, by, n_by * sizeof(*by));
        q.n_by = n_by;
        ck_assert_int_eq(gc_ledger_query(l, &q, &s), 0);
        for (size_t i = 0; i < s.n_rows && off < outlen; i++) {
                off += (size_t)snprintf(out + off, outlen - off, "%s|%s=%.9f/%.9f/%u;",
                                        s.rows[i].keys[by[0]] ? s.rows[i].keys[by[0]] : "-",
                                        n_by > 1 && s.rows[i].keys[by[1]] ? s.rows[i].keys[by[1]]
                                                                          : "-",
                                        s.rows[i].gpu_seconds, s.rows[i].cost, s.rows[i].pods);
        }
        if (off < outlen)
                snprintf(out + off, outlen - off, "T=%.9f/%.9f I=%.9f C=%.9f n=%zu",
                         s.total.gpu_seconds, s.total.cost, s.idle.gpu_seconds,
                         s.capacity.gpu_seconds, s.n_idle_nodes);
        gc_cost_summary_free(&s);
}

static const gc_dim by_sets[][2] = {
    {GC_DIM_TEAM, GC_DIM_PROJECT},
    {GC_DIM_NAMESPACE, GC_DIM_NODE},
    {GC_DIM_POD, GC_DIM_TEAM},
    {GC_DIM_NODE, GC_DIM_MODEL},
};

static void same_answers(const gc_ledger *a, const gc_ledger *b, int64_t now)
{
        char x[4096], y[4096];

        for (size_t i = 0; i < sizeof(by_sets) / sizeof(by_sets[0]); i++)
                for (int64_t w = 0; w < 8; w++) {
                        dump(a, by_sets[i], 2, T0 + w * 1800, T0 + 7 * H, now, x, sizeof(x));
                        dump(b, by_sets[i], 2, T0 + w * 1800, T0 + 7 * H, now, y, sizeof(y));
                        ck_assert_str_eq(x, y);
                }
}

START_TEST(test_clone_answers_the_same)
{
        gc_ledger *c;
        gc_ledger_stats sa, sb;

        fill(led);
        c = gc_ledger_clone(led);
        ck_assert_ptr_nonnull(c);
        same_answers(led, c, T0 + 7 * H);
        gc_ledger_stats_get(led, &sa);
        gc_ledger_stats_get(c, &sb);
        ck_assert_uint_eq(sa.intervals, sb.intervals);
        ck_assert_uint_eq(sa.open_intervals, sb.open_intervals);
        ck_assert_uint_eq(sa.capacities, sb.capacities);
        ck_assert_uint_eq(sa.rollup_rows, sb.rollup_rows);
        ck_assert_int_eq(sa.horizon, sb.horizon);
        gc_ledger_free(c);
}
END_TEST

START_TEST(test_clone_is_independent)
{
        gc_ledger *c;
        char before[4096], after[4096], orig[4096];
        const gc_dim by[2] = {GC_DIM_TEAM, GC_DIM_NODE};

        fill(led);
        c = gc_ledger_clone(led);
        ck_assert_ptr_nonnull(c);
        dump(c, by, 2, T0, T0 + 8 * H, T0 + 8 * H, before, sizeof(before));

        /* The original changes: new pods (enough to grow its arrays and indexes), a pod
         * forgotten, a fold. The clone still answers as before. */
        for (int i = 0; i < 200; i++) {
                char uid[32];

                snprintf(uid, sizeof(uid), "x%d", i);
                put_pod(led, uid, "ml", "green", "n1", 1, 2.0, T0 + 5 * H, T0 + 6 * H);
        }
        ck_assert_int_eq(gc_ledger_forget_usage(led, "d"), 0);
        ck_assert_int_ge(gc_ledger_fold(led, T0 + 7 * H, 0), 1);
        dump(c, by, 2, T0, T0 + 8 * H, T0 + 8 * H, after, sizeof(after));
        ck_assert_str_eq(before, after);
        dump(led, by, 2, T0, T0 + 8 * H, T0 + 8 * H, orig, sizeof(orig));
        ck_assert_str_ne(before, orig);
        ck_assert_ptr_nonnull(strstr(orig, "green"));

        /* The clone changes: the original does not see it. */
        put_pod(c, "y", "ml", "violet", "n2", 1, 1.0, T0 + 6 * H, T0 + 7 * H);
        dump(led, by, 2, T0, T0 + 8 * H, T0 + 8 * H, after, sizeof(after));
        ck_assert_str_eq(orig, after);
        ck_assert_ptr_null(strstr(after, "violet"));

        /* The original goes; the clone, sharing only the pool, still answers. */
        led = gc_ledger_free(led);
        dump(c, by, 2, T0, T0 + 8 * H, T0 + 8 * H, after, sizeof(after));
        ck_assert_ptr_nonnull(strstr(after, "violet"));
        gc_ledger_free(c);
}
END_TEST

/*
 * Period history is shared with clones, not copied: a day's answer (from period history) of a
 * clone stays what it was while the original folds, coarsens and lets go of it, and the clone's
 * own changes reach neither the original nor a clone of the clone.
 */
START_TEST(test_clone_shares_period_history)
{
        static const gc_dim by[2] = {GC_DIM_POD, GC_DIM_NODE};
        const int64_t day = T0 + 24 * H;
        char before[4096], after[4096], orig[4096];
        gc_ledger *c, *c2;

        fill(led);
        c = gc_ledger_clone(led);
        ck_assert_ptr_nonnull(c);
        dump(c, by, 2, T0, day, day, before, sizeof(before));
        ck_assert_ptr_nonnull(strstr(before, "a|"));
        for (int i = 0; i < 50; i++) {
                char uid[32];

                snprintf(uid, sizeof(uid), "x%d", i);
                put_pod(led, uid, "ml", "green", "n1", 1, 2.0, T0 + 4 * H, T0 + 5 * H);
        }
        ck_assert_int_ge(gc_ledger_fold(led, T0 + 7 * H, 0), 50);
        ck_assert_int_eq(gc_ledger_coarsen(led, T0 + 7 * H), 0);
        dump(c, by, 2, T0, day, day, after, sizeof(after));
        ck_assert_str_eq(before, after);
        dump(led, by, 2, T0, day, day, orig, sizeof(orig));
        ck_assert_ptr_nonnull(strstr(orig, "x7|"));

        /* The clone folds on its own; a clone of it shares what it then holds. */
        put_pod(c, "y", "ml", "violet", "n2", 1, 1.0, T0 + 5 * H, T0 + 6 * H);
        ck_assert_int_ge(gc_ledger_fold(c, T0 + 7 * H, 0), 1);
        c2 = gc_ledger_clone(c);
        ck_assert_ptr_nonnull(c2);
        dump(led, by, 2, T0, day, day, after, sizeof(after));
        ck_assert_str_eq(orig, after);
        ck_assert_ptr_null(strstr(after, "y|"));
        dump(c, by, 2, T0, day, day, before, sizeof(before));
        ck_assert_ptr_nonnull(strstr(before, "y|"));
        ck_assert_ptr_null(strstr(before, "x7|"));

        /* Each lets go in turn; what is left still answers the same. */
        led = gc_ledger_free(led);
        gc_ledger_free(c);
        dump(c2, by, 2, T0, day, day, after, sizeof(after));
        ck_assert_str_eq(before, after);
        gc_ledger_free(c2);
}
END_TEST

START_TEST(test_clone_empty_and_bad)
{
        gc_ledger *c = gc_ledger_clone(led);
        gc_ledger *c2;

        ck_assert_ptr_nonnull(c);
        same_answers(led, c, T0);
        /* The clone of an empty ledger grows like any ledger. */
        fill(c);
        c2 = gc_ledger_clone(c);
        ck_assert_ptr_nonnull(c2);
        same_answers(c, c2, T0 + 9 * H);
        gc_ledger_free(c2);
        gc_ledger_free(c);
        ck_assert_ptr_null(gc_ledger_clone(NULL));
}
END_TEST

static Suite *clone_suite(void)
{
        Suite *s = suite_create("ledger_clone");
        TCase *tc = tcase_create("clone");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_clone_answers_the_same);
        tcase_add_test(tc, test_clone_is_independent);
        tcase_add_test(tc, test_clone_shares_period_history);
        tcase_add_test(tc, test_clone_empty_and_bad);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(clone_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
