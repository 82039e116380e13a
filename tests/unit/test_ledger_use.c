/* test_ledger_use: the usage basis (gc_ledger_split_by_use), figures worked by hand. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/ledger.h"

#define T0 ((int64_t)1767225600) /* 2026-01-01T00:00:00Z, a Thursday, on an hour */
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

/* A quarter of a time-sliced T4 node's GPU (replicas 4) at $4 per GPU-hour. */
static void put_pod(const char *uid, const char *team, double geq, int64_t start, int64_t end)
{
        gc_usage u = {0};

        u.pod_uid = uid;
        u.dims[GC_DIM_NAMESPACE] = "ns";
        u.dims[GC_DIM_TEAM] = team;
        u.dims[GC_DIM_PROJECT] = "p";
        u.dims[GC_DIM_MODEL] = "T4";
        u.dims[GC_DIM_CAPACITY_TYPE] = "on-demand";
        u.dims[GC_DIM_NODE] = "t4";
        u.dims[GC_DIM_POD] = uid;
        u.geq = geq;
        u.price_per_gpu_hour = 4.0;
        u.start = start;
        u.end = end;
        ck_assert_int_eq(gc_ledger_put_usage(led, &u), 0);
}

static void put_node(void)
{
        gc_capacity c = {"t4", "T4", "on-demand", 1.0, 4.0, T0 - 10 * H, GC_OPEN};

        ck_assert_int_eq(gc_ledger_put_capacity(led, &c), 0);
}

static gc_cost_summary query(gc_basis b, int64_t start, int64_t end, const char *by)
{
        gc_cost_summary s;
        gc_query q;
        char err[128];

        memset(&q, 0, sizeof(q));
        q.start = start;
        q.end = end;
        q.now = end;
        q.basis = b;
        ck_assert_msg(gc_dims_parse(by, NULL, q.by, &q.n_by, err, sizeof(err)) == 0, "%s", err);
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        return s;
}

static const gc_cost_row *row(const gc_cost_summary *s, gc_dim d, const char *v)
{
        for (size_t i = 0; i < s->n_rows; i++)
                if (s->rows[i].keys[d] && strcmp(s->rows[i].keys[d], v) == 0)
                        return &s->rows[i];
        return NULL;
}

static double cost_of(const gc_cost_summary *s, gc_dim d, const char *v)
{
        const gc_cost_row *r = row(s, d, v);

        return r ? r->cost : 0.0;
}

static int split1(const char *a, double ua, const char *b, double ub, const char *c, double uc,
                  int64_t from, int64_t to)
{
        const char *ka[] = {a}, *kb[] = {b}, *kc[] = {c};
        gc_use_holder h[3] = {{ka, 1, ua}, {kb, 1, ub}, {kc, 1, uc}};

        return gc_ledger_split_by_use(led, from, to, h, c ? 3 : 2);
}

#define EPS 1e-9

/*
 * Three pods on one time-sliced GPU for an hour, each allocated a quarter ($1 an hour each):
 * measured 60%, 20% and idle. The pot is $3: by use 3 x 0.6/0.8 = 2.25, 0.75 and 0. The total,
 * the node's idle quarter ($1) and the capacity ($4) are the same in both bases.
 */
START_TEST(test_split_by_use)
{
        gc_cost_summary al, us;

        put_node();
        put_pod("a", "vision", 0.25, T0, T0 + H);
        put_pod("b", "nlp", 0.25, T0, T0 + H);
        put_pod("c", "ads", 0.25, T0, T0 + H);
        /* In 15-second samples, as dcgm-exporter is scraped. */
        for (int64_t t = T0; t < T0 + H; t += 15)
                ck_assert_int_eq(split1("a", 0.6, "b", 0.2, "c", 0.0, t, t + 15), 0);
        /* Read again (Prometheus asked for the same range after a restart): nothing changes. */
        for (int64_t t = T0; t < T0 + H; t += 15)
                ck_assert_int_eq(split1("a", 0.1, "b", 0.9, "c", 0.0, t, t + 15), 0);
        al = query(GC_BASIS_ALLOCATION, T0, T0 + H, "pod");
        us = query(GC_BASIS_USAGE, T0, T0 + H, "pod");
        ck_assert_double_eq_tol(cost_of(&al, GC_DIM_POD, "a"), 1.0, EPS);
        ck_assert_double_eq_tol(cost_of(&us, GC_DIM_POD, "a"), 2.25, EPS);
        ck_assert_double_eq_tol(cost_of(&us, GC_DIM_POD, "b"), 0.75, EPS);
        ck_assert_double_eq_tol(cost_of(&us, GC_DIM_POD, "c"), 0.0, EPS);
        ck_assert_double_eq_tol(us.total.cost, al.total.cost, EPS);
        ck_assert_double_eq_tol(us.total.cost, 3.0, EPS);
        ck_assert_double_eq_tol(us.idle.cost, 1.0, EPS);
        ck_assert_double_eq_tol(al.idle.cost, 1.0, EPS);
        ck_assert_double_eq_tol(us.capacity.cost, 4.0, EPS);
        /* GPU-seconds and pods are the allocation's in both. */
        ck_assert_double_eq_tol(row(&us, GC_DIM_POD, "c")->gpu_seconds, 900.0, EPS);
        ck_assert_uint_eq(us.total.pods, 3);
        /* All of it measured: in the usage basis measured cost is the cost. */
        ck_assert_double_eq_tol(us.total.measured_cost, 3.0, EPS);
        ck_assert_double_eq_tol(row(&us, GC_DIM_POD, "a")->measured_cost, 2.25, EPS);
        ck_assert_double_eq_tol(row(&al, GC_DIM_POD, "a")->measured_cost, 1.0, EPS);
        gc_cost_summary_free(&al);
        gc_cost_summary_free(&us);
        /* By team, the same. */
        us = query(GC_BASIS_USAGE, T0, T0 + H, "team");
        ck_assert_double_eq_tol(cost_of(&us, GC_DIM_TEAM, "vision"), 2.25, EPS);
        ck_assert_double_eq_tol(cost_of(&us, GC_DIM_TEAM, "nlp"), 0.75, EPS);
        gc_cost_summary_free(&us);
}
END_TEST

/*
 * Gaps and holders coming and going: "b" starts half-way through; samples cover only the first
 * 45 minutes. Minutes 0-30: a alone holds it (nothing moves). 30-45: a 0.3, b 0.1, each
 * holding a quarter GPU ($0.25 per quarter hour), so the pot is $0.5: a 0.375, b 0.125.
 * 45-60: no sample, allocation.
 */
START_TEST(test_gaps_and_arrivals)
{
        gc_cost_summary us;

        put_node();
        put_pod("a", "vision", 0.25, T0, T0 + H);
        put_pod("b", "nlp", 0.25, T0 + H / 2, T0 + H);
        for (int64_t t = T0; t < T0 + 45 * 60; t += 30)
                ck_assert_int_eq(split1("a", 0.3, "b", 0.1, NULL, 0, t, t + 30), 0);
        us = query(GC_BASIS_USAGE, T0, T0 + H, "pod");
        ck_assert_double_eq_tol(cost_of(&us, GC_DIM_POD, "a"), 0.5 + 0.375 + 0.25, EPS);
        ck_assert_double_eq_tol(cost_of(&us, GC_DIM_POD, "b"), 0.125 + 0.25, EPS);
        ck_assert_double_eq_tol(us.total.cost, 1.0 + 0.5, EPS);
        /* Measured: the 15 shared minutes, $0.5 of pot; a's 30 minutes alone are no share. */
        ck_assert_double_eq_tol(us.total.measured_cost, 0.5, EPS);
        gc_cost_summary_free(&us);
}
END_TEST

/* One span crossing an hour is split per hour; the adjustments fold into hourly history and
 * period history, and a day still answers in both bases with the same total. */
START_TEST(test_fold_keeps_the_split)
{
        gc_cost_summary us, al;
        gc_ledger_stats st;

        put_node();
        put_pod("a", "vision", 0.5, T0, T0 + 2 * H);
        put_pod("b", "nlp", 0.5, T0, T0 + 2 * H);
        ck_assert_int_eq(split1("a", 0.9, "b", 0.1, NULL, 0, T0 + H / 2, T0 + H + H / 2), 0);
        gc_ledger_stats_get(led, &st);
        ck_assert_uint_eq(st.intervals, 2 + 4); /* two pods, an adjustment each per hour */
        us = query(GC_BASIS_USAGE, T0, T0 + 2 * H, "team");
        /* Pot of the measured hour: 2 x 0.5 x $4 = $4, a gets 3.6 (+1.6). */
        ck_assert_double_eq_tol(cost_of(&us, GC_DIM_TEAM, "vision"), 4.0 + 1.6, EPS);
        ck_assert_double_eq_tol(cost_of(&us, GC_DIM_TEAM, "nlp"), 4.0 - 1.6, EPS);
        gc_cost_summary_free(&us);
        ck_assert_int_ge(gc_ledger_fold(led, T0 + 3 * H, 0), 6);
        gc_ledger_stats_get(led, &st);
        ck_assert_uint_eq(st.intervals, 0);
        /* The hours, from hourly rollups. */
        us = query(GC_BASIS_USAGE, T0, T0 + H, "team");
        ck_assert_double_eq_tol(cost_of(&us, GC_DIM_TEAM, "vision"), 2.0 + 0.8, EPS);
        gc_cost_summary_free(&us);
        /* The day, from period history. */
        us = query(GC_BASIS_USAGE, T0, T0 + 24 * H, "team");
        al = query(GC_BASIS_ALLOCATION, T0, T0 + 24 * H, "team");
        ck_assert_double_eq_tol(cost_of(&us, GC_DIM_TEAM, "vision"), 5.6, EPS);
        ck_assert_double_eq_tol(cost_of(&al, GC_DIM_TEAM, "vision"), 4.0, EPS);
        ck_assert_double_eq_tol(us.total.cost, al.total.cost, EPS);
        ck_assert_double_eq_tol(us.total.measured_cost, 4.0, EPS);
        gc_cost_summary_free(&us);
        gc_cost_summary_free(&al);
        /* By pod, from the day's top pods. */
        us = query(GC_BASIS_USAGE, T0, T0 + 24 * H, "pod");
        ck_assert_double_eq_tol(cost_of(&us, GC_DIM_POD, "b"), 2.4, EPS);
        gc_cost_summary_free(&us);
}
END_TEST

/* Nothing moves when one pod holds the GPU, when no use was measured, or for keys the ledger
 * does not hold; bad input is refused. */
START_TEST(test_nothing_to_split)
{
        gc_ledger_stats st;
        const char *ka[] = {"a"}, *none[] = {NULL};
        gc_use_holder h1[1] = {{ka, 1, 0.5}};
        gc_use_holder bad[1] = {{none, 1, 0.5}};
        gc_cost_summary us;

        put_pod("a", "vision", 0.25, T0, T0 + H);
        put_pod("b", "nlp", 0.25, T0, T0 + H);
        ck_assert_int_eq(gc_ledger_split_by_use(led, T0, T0 + 60, h1, 1), 0);
        ck_assert_int_eq(split1("a", 0.5, "gone", 0.5, NULL, 0, T0, T0 + 60), 0);
        gc_ledger_stats_get(led, &st);
        ck_assert_uint_eq(st.intervals, 2);
        /* Both idle: measured, split by allocation. */
        ck_assert_int_eq(split1("a", 0.0, "b", 0.0, NULL, 0, T0, T0 + 60), 0);
        us = query(GC_BASIS_USAGE, T0, T0 + H, "pod");
        ck_assert_double_eq_tol(cost_of(&us, GC_DIM_POD, "a"), 1.0, EPS);
        ck_assert_double_eq_tol(us.total.measured_cost, 2 * 0.25 * 4.0 / 60.0, EPS);
        gc_cost_summary_free(&us);
        ck_assert_int_eq(split1("a", -0.1, "b", 0.5, NULL, 0, T0, T0 + 60), -EINVAL);
        ck_assert_int_eq(split1("a", NAN, "b", 0.5, NULL, 0, T0, T0 + 60), -EINVAL);
        ck_assert_int_eq(split1("a", 0.1, "b", 0.5, NULL, 0, T0 + 60, T0 + 60), -EINVAL);
        ck_assert_int_eq(gc_ledger_split_by_use(led, T0, T0 + 60, bad, 1), -EINVAL);
        ck_assert_int_eq(gc_ledger_split_by_use(NULL, T0, T0 + 60, h1, 1), -EINVAL);
        /* Before the fold horizon: closed books. */
        ck_assert_int_ge(gc_ledger_fold(led, T0 + 2 * H, 0), 0);
        ck_assert_int_eq(split1("a", 0.9, "b", 0.1, NULL, 0, T0, T0 + 60), 0);
}
END_TEST

/* A pod priced in pieces (a shared DRA claim gained a holder) takes its share over its pieces,
 * each by its own allocation; the adjustments are named after the pieces. */
START_TEST(test_pieces)
{
        gc_cost_summary us;
        const char *ka[] = {"a", "a#dra1"}, *kb[] = {"b"};
        gc_use_holder h[2] = {{ka, 2, 0.5}, {kb, 1, 0.5}};
        gc_usage u;

        put_pod("a", "vision", 0.5, T0, T0 + H / 2);
        put_pod("a#dra1", "vision", 0.25, T0 + H / 2, T0 + H);
        put_pod("b", "nlp", 0.25, T0, T0 + H);
        ck_assert_int_eq(gc_ledger_split_by_use(led, T0, T0 + H, h, 2), 0);
        /* Equal use and time: the pot (a 1.0 + 0.5 in pieces, b 1.0: $2.5) halves. */
        us = query(GC_BASIS_USAGE, T0, T0 + H, "team");
        ck_assert_double_eq_tol(cost_of(&us, GC_DIM_TEAM, "vision"), 1.25, EPS);
        ck_assert_double_eq_tol(cost_of(&us, GC_DIM_TEAM, "nlp"), 1.25, EPS);
        gc_cost_summary_free(&us);
        ck_assert_int_eq(gc_ledger_get_usage(led, "a#dra1#use1767225600", &u), 0);
        ck_assert(u.flags & GC_USAGE_F_ADJUST);
        ck_assert_double_eq_tol(u.covered_cost, 0.5, EPS);
        /* a's -0.25 over its pieces by their allocation: a third on the second piece. */
        ck_assert_double_eq_tol(u.adj_cost, -0.25 / 3.0, EPS);
}
END_TEST

/* The interval limit: a split that does not fit adds nothing of its bucket. */
START_TEST(test_limit)
{
        gc_ledger_opts o = {0};
        gc_ledger_stats st;

        led = gc_ledger_free(led);
        o.pool = pool;
        o.max_intervals = 3;
        led = gc_ledger_new(&o);
        put_pod("a", "vision", 0.25, T0, T0 + H);
        put_pod("b", "nlp", 0.25, T0, T0 + H);
        ck_assert_int_eq(split1("a", 0.9, "b", 0.1, NULL, 0, T0, T0 + 60), -E2BIG);
        gc_ledger_stats_get(led, &st);
        ck_assert_uint_eq(st.intervals, 2);
}
END_TEST

/* Adjustments are checked as records too. */
START_TEST(test_adjust_records_checked)
{
        gc_usage u = {0};

        u.pod_uid = "x#use1";
        u.start = T0;
        u.end = T0 + 60;
        u.flags = GC_USAGE_F_ADJUST;
        u.adj_cost = -0.5;
        u.covered_cost = 1.0;
        ck_assert_int_eq(gc_ledger_put_usage(led, &u), 0);
        u.geq = 0.5; /* an adjustment holds no GPUs */
        ck_assert_int_eq(gc_ledger_put_usage(led, &u), -EINVAL);
        u.geq = 0;
        u.adj_cost = -2.0; /* a share below zero */
        ck_assert_int_eq(gc_ledger_put_usage(led, &u), -EINVAL);
        u.adj_cost = 0.1;
        u.end = T0 + 2 * H; /* more than a bucket */
        ck_assert_int_eq(gc_ledger_put_usage(led, &u), -EINVAL);
        u.end = GC_OPEN;
        ck_assert_int_eq(gc_ledger_put_usage(led, &u), -EINVAL);
        /* Only adjustments carry usage figures. */
        u.end = T0 + 60;
        u.flags = 0;
        ck_assert_int_eq(gc_ledger_put_usage(led, &u), -EINVAL);
}
END_TEST

START_TEST(test_basis_names)
{
        gc_basis b;

        ck_assert_str_eq(gc_basis_name(GC_BASIS_USAGE), "usage");
        ck_assert_str_eq(gc_basis_name(GC_BASIS_ALLOCATION), "allocation");
        ck_assert_int_eq(gc_basis_parse("usage", 5, &b), 0);
        ck_assert_int_eq(b, GC_BASIS_USAGE);
        ck_assert_int_eq(gc_basis_parse("allocation", 10, &b), 0);
        ck_assert_int_eq(b, GC_BASIS_ALLOCATION);
        ck_assert_int_eq(gc_basis_parse("Usage", 5, &b), -EINVAL);
        ck_assert_int_eq(gc_basis_parse("use", 3, &b), -EINVAL);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("ledger_use");
        TCase *tc = tcase_create("core");
        SRunner *sr;
        int failed;

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_split_by_use);
        tcase_add_test(tc, test_gaps_and_arrivals);
        tcase_add_test(tc, test_fold_keeps_the_split);
        tcase_add_test(tc, test_nothing_to_split);
        tcase_add_test(tc, test_pieces);
        tcase_add_test(tc, test_limit);
        tcase_add_test(tc, test_adjust_records_checked);
        tcase_add_test(tc, test_basis_names);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
