/* test_tz: offsets of real tzdata zones against the C library's own reader, local days of 23 and
 * 25 hours, :30 and :45 zones, skipped midnights, weeks and months, and bad files refused. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tz/tz.h"
#include "util/util.h"

#define H   ((int64_t)3600)
#define DAY ((int64_t)86400)

static int64_t at(const char *s)
{
        int64_t t = 0;

        ck_assert_int_eq(gc_time_parse(s, strlen(s), &t), 0);
        return t;
}

static gc_tz *load(const char *name)
{
        gc_tz *z = NULL;

        ck_assert_int_eq(gc_tz_load(NULL, name, &z), 0);
        ck_assert_ptr_nonnull(z);
        ck_assert_str_eq(gc_tz_name(z), name);
        return z;
}

static const char *const zones[] = {
    "Europe/Berlin",      "Asia/Kathmandu",
    "Asia/Kolkata",       "America/New_York",
    "Australia/Adelaide", "Australia/Lord_Howe",
    "America/Santiago",   "Pacific/Chatham",
    "Africa/Casablanca",  "Europe/Dublin",
    "America/Sao_Paulo",  "Asia/Tehran",
    "Pacific/Apia",       "UTC",
    "America/St_Johns",   "Asia/Gaza",
};

/*
 * The C library reads the same files with its own code: at a million instants from 1900 to
 * 2100 (past the last transition of fat files, where the footer rules), offsets agree. This test
 * is single-threaded, so setting TZ here is safe; the daemon never does.
 */
START_TEST(offsets_match_libc)
{
        const char *name = zones[_i];
        gc_tz *z = load(name);
        uint64_t x = 0x9e3779b97f4a7c15ULL ^ (uint64_t)_i;
        int64_t lo = at("1900-01-01T00:00:00Z"), hi = at("2100-01-01T00:00:00Z");

        ck_assert_int_eq(setenv("TZ", name, 1), 0);
        tzset();
        for (int k = 0; k < 60000; k++) {
                struct tm tm;
                time_t t;

                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                t = (time_t)(lo + (int64_t)(x % (uint64_t)(hi - lo)));
                ck_assert_ptr_nonnull(localtime_r(&t, &tm));
                if (gc_tz_offset(z, t) != tm.tm_gmtoff)
                        ck_abort_msg("%s at %lld: %d, libc %ld", name, (long long)t,
                                     gc_tz_offset(z, t), tm.tm_gmtoff);
        }
        /* Every change of offset is where the C library sees one, from 1970 to 2100. */
        for (int64_t t = at("1970-01-01T00:00:00Z"); t < hi;) {
                int64_t n = gc_tz_next_change(z, t);
                struct tm a, b;
                time_t ta, tb;

                if (n == INT64_MAX || n >= hi)
                        break;
                ta = (time_t)(n - 1);
                tb = (time_t)n;
                localtime_r(&ta, &a);
                localtime_r(&tb, &b);
                ck_assert_int_ne(a.tm_gmtoff, b.tm_gmtoff);
                ck_assert_int_eq(gc_tz_offset(z, n), b.tm_gmtoff);
                t = n;
        }
        unsetenv("TZ");
        tzset();
        gc_tz_free(z);
}
END_TEST

/* Every local day from 1990 to 2060 starts where the C library's mktime puts local midnight. */
START_TEST(day_starts_match_libc)
{
        const char *name = zones[_i];
        gc_tz *z = load(name);
        int64_t d0 = gc_days_from_civil(1990, 1, 1), d1 = gc_days_from_civil(2060, 1, 1);

        ck_assert_int_eq(setenv("TZ", name, 1), 0);
        tzset();
        for (int64_t d = d0; d < d1; d++) {
                int64_t s = gc_tz_day_start(z, d), e = gc_tz_day_start(z, d + 1);
                int64_t y;
                unsigned m, dd;

                /* Samoa skipped 30 December 2011 whole: a day that does not exist is empty. */
                if (gc_tz_day_of(z, s) != d) {
                        ck_assert_int_eq(s, e);
                        continue;
                }
                /* The day's first instant has its date, and the one before an earlier date. */
                ck_assert_int_lt(gc_tz_day_of(z, s - 1), d);
                ck_assert_int_ge(e - s, e == gc_tz_day_start(z, d + 2) ? 0 : 20 * H);
                ck_assert_int_le(e - s, 48 * H);
                gc_civil_from_days(d, &y, &m, &dd);
                {
                        struct tm tm;
                        time_t lt;

                        memset(&tm, 0, sizeof(tm));
                        tm.tm_year = (int)y - 1900;
                        tm.tm_mon = (int)m - 1;
                        tm.tm_mday = (int)dd;
                        tm.tm_isdst = -1;
                        lt = mktime(&tm);
                        /* mktime of a midnight that does not exist moves it on by the gap. */
                        if (tm.tm_hour == 0 && tm.tm_min == 0)
                                ck_assert_int_eq(s, lt);
                }
        }
        unsetenv("TZ");
        tzset();
        gc_tz_free(z);
}
END_TEST

START_TEST(berlin_dst_days)
{
        gc_tz *z = load("Europe/Berlin");
        int64_t spring = gc_days_from_civil(2026, 3, 29), autumn = gc_days_from_civil(2026, 10, 25);
        char date[16];
        int wd;

        ck_assert_int_eq(gc_tz_day_start(z, spring), at("2026-03-28T23:00:00Z"));
        ck_assert_int_eq(gc_tz_granularity(z, at("1972-01-01T00:00:00Z"), INT64_MAX), 3600);
        ck_assert_int_eq(gc_tz_day_start(z, spring + 1) - gc_tz_day_start(z, spring), 23 * H);
        ck_assert_int_eq(gc_tz_day_start(z, autumn), at("2026-10-24T22:00:00Z"));
        ck_assert_int_eq(gc_tz_day_start(z, autumn + 1) - gc_tz_day_start(z, autumn), 25 * H);
        /* October 2026: 31 days and one extra hour; November 30 days of 24 h. */
        ck_assert_int_eq(gc_tz_period_start(z, GC_TZ_MONTH, at("2026-10-31T23:30:00Z")),
                         at("2026-10-31T23:00:00Z"));
        ck_assert_int_eq(gc_tz_period_start(z, GC_TZ_MONTH, at("2026-10-31T22:30:00Z")),
                         at("2026-09-30T22:00:00Z"));
        ck_assert_int_eq(gc_tz_period_add(z, GC_TZ_MONTH, at("2026-10-15T00:00:00Z"), 1) -
                             gc_tz_period_start(z, GC_TZ_MONTH, at("2026-10-15T00:00:00Z")),
                         31 * DAY + H);
        ck_assert_int_eq(gc_tz_period_add(z, GC_TZ_MONTH, at("2026-11-15T00:00:00Z"), -1),
                         at("2026-09-30T22:00:00Z"));
        ck_assert_int_eq(gc_tz_period_add(z, GC_TZ_MONTH, at("2026-12-15T00:00:00Z"), 1),
                         at("2026-12-31T23:00:00Z"));
        /* The ISO week holding the autumn change: Mon 19 Oct (CEST) to Mon 26 Oct (CET). */
        ck_assert_int_eq(gc_tz_period_start(z, GC_TZ_WEEK, at("2026-10-25T12:00:00Z")),
                         at("2026-10-18T22:00:00Z"));
        ck_assert_int_eq(gc_tz_period_add(z, GC_TZ_WEEK, at("2026-10-25T12:00:00Z"), 1),
                         at("2026-10-25T23:00:00Z"));
        gc_tz_date(z, at("2026-10-31T23:30:00Z"), date, &wd);
        ck_assert_str_eq(date, "2026-11-01");
        ck_assert_int_eq(wd, 6);
        gc_tz_free(z);
}
END_TEST

START_TEST(quarter_hour_zones)
{
        gc_tz *ktm = load("Asia/Kathmandu"), *ist = load("Asia/Kolkata");

        ck_assert_int_eq(gc_tz_offset(ktm, at("2026-11-20T00:00:00Z")), 5 * H + 45 * 60);
        ck_assert_int_eq(gc_tz_day_start(ktm, gc_days_from_civil(2026, 11, 1)),
                         at("2026-10-31T18:15:00Z"));
        ck_assert_int_eq(gc_tz_period_start(ktm, GC_TZ_MONTH, at("2026-11-20T00:00:00Z")),
                         at("2026-10-31T18:15:00Z"));
        ck_assert_int_eq(gc_tz_period_start(ist, GC_TZ_DAY, at("2026-11-20T18:29:59Z")),
                         at("2026-11-19T18:30:00Z"));
        ck_assert_int_eq(gc_tz_next_change(ktm, at("2026-01-01T00:00:00Z")), INT64_MAX);
        /* Kathmandu moved from +05:30 to +05:45 in 1986: quarter hours; India half hours. */
        ck_assert_int_eq(gc_tz_granularity(ktm, at("1972-01-01T00:00:00Z"), INT64_MAX), 900);
        ck_assert_int_eq(
            gc_tz_granularity(ktm, at("1972-01-01T00:00:00Z"), at("1985-12-31T00:00:00Z")), 1800);
        ck_assert_int_eq(gc_tz_granularity(ist, at("1972-01-01T00:00:00Z"), INT64_MAX), 1800);
        gc_tz_free(ktm);
        gc_tz_free(ist);
}
END_TEST

/* Chile moves its clocks at 24:00: the first Sunday of September 2026 starts at 01:00. */
START_TEST(skipped_midnight)
{
        gc_tz *z = load("America/Santiago");
        int64_t d = gc_days_from_civil(2026, 9, 6);

        ck_assert_int_eq(gc_tz_day_start(z, d), at("2026-09-06T04:00:00Z"));
        ck_assert_int_eq(gc_tz_offset(z, at("2026-09-06T04:00:00Z")), -3 * H);
        ck_assert_int_eq(gc_tz_day_start(z, d) - gc_tz_day_start(z, d - 1), 24 * H);
        ck_assert_int_eq(gc_tz_day_start(z, d + 1) - gc_tz_day_start(z, d), 23 * H);
        gc_tz_free(z);
}
END_TEST

START_TEST(fixed_offsets)
{
        gc_tz *z = NULL;

        ck_assert_int_eq(gc_tz_fixed(5 * 3600 + 1800, &z), 0);
        ck_assert_str_eq(gc_tz_name(z), "UTC+05:30");
        ck_assert_int_eq(gc_tz_day_start(z, gc_days_from_civil(2026, 11, 20)),
                         at("2026-11-19T18:30:00Z"));
        ck_assert_int_eq(gc_tz_next_change(z, 0), INT64_MAX);
        gc_tz_free(z);
        ck_assert_int_eq(gc_tz_fixed(-3600 * 3, &z), 0);
        ck_assert_str_eq(gc_tz_name(z), "UTC-03:00");
        gc_tz_free(z);
        ck_assert_int_eq(gc_tz_fixed(0, &z), 0);
        ck_assert_str_eq(gc_tz_name(z), "UTC");
        gc_tz_free(z);
        ck_assert_int_eq(gc_tz_fixed(19 * 3600, &z), -EINVAL);
        ck_assert_int_eq(gc_tz_fixed(30, &z), -EINVAL);
        /* NULL is UTC. */
        ck_assert_int_eq(gc_tz_offset(NULL, 12345), 0);
        ck_assert_int_eq(gc_tz_day_start(NULL, 2), 2 * DAY);
}
END_TEST

START_TEST(bad_names_and_files)
{
        static const char *const bad[] = {
            "",        "/etc/passwd", "../etc/passwd",   "Europe/../../x",
            "Europe/", "a b",         "Europe/Berlin\n", "x;y"};
        unsigned char buf[256];
        gc_tz *z = NULL;
        char longname[GC_TZ_NAME_MAX + 1];

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ck_assert_int_eq(gc_tz_name_valid(bad[i]), 0);
                ck_assert_int_eq(gc_tz_load(NULL, bad[i], &z), -EINVAL);
        }
        memset(longname, 'a', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        ck_assert_int_eq(gc_tz_load(NULL, longname, &z), -EINVAL);
        ck_assert_int_eq(gc_tz_load(NULL, "Europe/Atlantis", &z), -ENOENT);
        ck_assert_int_eq(gc_tz_load(NULL, "Europe", &z), -ENOENT);
        /* Not TZif, and a TZif header whose counts run past the end. */
        ck_assert_int_eq(gc_tz_load(NULL, "iso3166.tab", &z), -EINVAL);
        memset(buf, 0, sizeof(buf));
        memcpy(buf, "TZif2", 5);
        buf[35] = 200; /* 200 transitions */
        buf[39] = 1;
        buf[43] = 1;
        ck_assert_int_eq(gc_tz_parse("x", buf, 60, &z), -EINVAL);
        ck_assert_int_eq(gc_tz_parse("x", buf, GC_TZ_FILE_MAX + 1, &z), -E2BIG);
        /* Leap-second zones are refused. */
        if (gc_tz_load(NULL, "right/UTC", &z) != -ENOENT)
                ck_assert_int_eq(gc_tz_load(NULL, "right/UTC", &z), -EINVAL);
        ck_assert_ptr_null(gc_tz_free(NULL));
}
END_TEST

static Suite *tz_suite(void)
{
        Suite *s = suite_create("tz");
        TCase *tc = tcase_create("core");
        int n = (int)(sizeof(zones) / sizeof(zones[0]));

        tcase_set_timeout(tc, 300);
        tcase_add_loop_test(tc, offsets_match_libc, 0, n);
        tcase_add_loop_test(tc, day_starts_match_libc, 0, n);
        tcase_add_test(tc, berlin_dst_days);
        tcase_add_test(tc, quarter_hour_zones);
        tcase_add_test(tc, skipped_midnight);
        tcase_add_test(tc, fixed_offsets);
        tcase_add_test(tc, bad_names_and_files);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(tz_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed != 0;
}
