/* test_log: one JSON object a line on standard error, levels, escaping, the error count and the
 * bound on a line. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log.h"

/* What the calls in between wrote to standard error (the caller frees it). */
static FILE *capture_file;
static int saved_fd = -1;

static void capture_begin(void)
{
        capture_file = tmpfile();
        ck_assert_ptr_nonnull(capture_file);
        fflush(stderr);
        saved_fd = dup(STDERR_FILENO);
        ck_assert_int_ge(saved_fd, 0);
        ck_assert_int_ge(dup2(fileno(capture_file), STDERR_FILENO), 0);
}

static char *capture_end(void)
{
        long n;
        char *out;

        ck_assert_int_ge(dup2(saved_fd, STDERR_FILENO), 0);
        close(saved_fd);
        n = ftell(capture_file);
        ck_assert_int_ge(n, 0);
        out = calloc(1, (size_t)n + 1);
        ck_assert_ptr_nonnull(out);
        rewind(capture_file);
        ck_assert_uint_eq(fread(out, 1, (size_t)n, capture_file), (size_t)n);
        fclose(capture_file);
        return out;
}

START_TEST(test_levels_parse)
{
        ck_assert_int_eq(gc_log_parse_level("debug"), GC_LOG_DEBUG);
        ck_assert_int_eq(gc_log_parse_level("info"), GC_LOG_INFO);
        ck_assert_int_eq(gc_log_parse_level("warn"), GC_LOG_WARN);
        ck_assert_int_eq(gc_log_parse_level("error"), GC_LOG_ERROR);
        ck_assert_int_eq(gc_log_parse_level("inf"), -1);
        ck_assert_int_eq(gc_log_parse_level("infos"), -1);
        ck_assert_int_eq(gc_log_parse_level("INFO"), -1);
        ck_assert_int_eq(gc_log_parse_level(""), -1);
}
END_TEST

START_TEST(test_line_is_json)
{
        cJSON *o;
        char *out;

        gc_log_set_level(GC_LOG_INFO);
        capture_begin();
        gc_log(GC_LOG_WARN, "a \"quoted\"\nmessage", "pod", "ns/a\\b", "empty", NULL, NULL);
        out = capture_end();
        ck_assert_ptr_nonnull(strchr(out, '\n'));
        ck_assert_ptr_eq(strchr(out, '\n'), out + strlen(out) - 1); /* one line */
        o = cJSON_Parse(out);
        ck_assert_ptr_nonnull(o);
        ck_assert_str_eq(cJSON_GetObjectItem(o, "level")->valuestring, "warn");
        ck_assert_str_eq(cJSON_GetObjectItem(o, "msg")->valuestring, "a \"quoted\"\nmessage");
        ck_assert_str_eq(cJSON_GetObjectItem(o, "pod")->valuestring, "ns/a\\b");
        ck_assert_str_eq(cJSON_GetObjectItem(o, "empty")->valuestring, "");
        ck_assert_uint_eq(strlen(cJSON_GetObjectItem(o, "ts")->valuestring), 20);
        cJSON_Delete(o);
        free(out);
}
END_TEST

START_TEST(test_level_filters_and_errors_count)
{
        long before = gc_log_errors();
        char *out;

        gc_log_set_level(GC_LOG_ERROR);
        capture_begin();
        gc_log(GC_LOG_INFO, "dropped", NULL);
        gc_log(GC_LOG_WARN, "dropped too", NULL);
        gc_log(GC_LOG_ERROR, "kept", NULL);
        gc_log(7, "no such level", NULL);
        out = capture_end();
        ck_assert_ptr_null(strstr(out, "dropped"));
        ck_assert_ptr_null(strstr(out, "no such level"));
        ck_assert_ptr_nonnull(strstr(out, "\"msg\":\"kept\""));
        ck_assert_int_eq(gc_log_errors(), before + 1);
        free(out);

        /* Errors count even when their level is filtered out: /metrics reads the count. */
        gc_log_set_level(GC_LOG_ERROR + 1);
        capture_begin();
        gc_log(GC_LOG_ERROR, "not written", NULL);
        out = capture_end();
        ck_assert_str_eq(out, "");
        ck_assert_int_eq(gc_log_errors(), before + 2);
        free(out);
        gc_log_set_level(GC_LOG_INFO);
}
END_TEST

START_TEST(test_long_line_dropped_whole)
{
        size_t n = 70 * 1024;
        char *big = malloc(n + 1), *out;

        ck_assert_ptr_nonnull(big);
        memset(big, 'x', n);
        big[n] = 0;
        gc_log_set_level(GC_LOG_INFO);
        capture_begin();
        gc_log(GC_LOG_INFO, "too long", "value", big, NULL);
        gc_log(GC_LOG_INFO, "after", NULL);
        out = capture_end();
        ck_assert_ptr_null(strstr(out, "too long"));
        ck_assert_ptr_nonnull(strstr(out, "\"msg\":\"after\""));
        free(out);
        free(big);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("log");
        TCase *tc = tcase_create("log");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_levels_parse);
        tcase_add_test(tc, test_line_is_json);
        tcase_add_test(tc, test_level_filters_and_errors_count);
        tcase_add_test(tc, test_long_line_dropped_whole);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
