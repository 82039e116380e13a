/* test_web: every file of web/ is embedded byte for byte, with its type and ETag. */
#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "web/web.h"

#define WEB_DIR GC_SOURCE_DIR "/web"

static int is_hex16_etag(const char *e)
{
        size_t i;

        if (strlen(e) != 18 || e[0] != '"' || e[17] != '"')
                return 0;
        for (i = 1; i < 17; i++)
                if (!strchr("0123456789abcdef", e[i]))
                        return 0;
        return 1;
}

START_TEST(test_every_file_embedded)
{
        DIR *d = opendir(WEB_DIR);
        struct dirent *de;
        size_t n = 0;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d))) {
                char path[PATH_MAX + 300], url[300];
                gc_buf b = {0};
                const gc_web_asset *a;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%s", WEB_DIR, de->d_name);
                snprintf(url, sizeof(url), "/%s", de->d_name);
                a = gc_web_find(url);
                ck_assert_msg(a != NULL, "%s is not embedded", url);
                ck_assert_str_eq(a->path, url);
                ck_assert_int_eq(gc_read_file(path, 16u << 20, &b), 0);
                ck_assert_uint_eq(a->len, b.len);
                ck_assert_msg(memcmp(a->data, b.data, b.len) == 0, "%s differs from web/", url);
                ck_assert_int_eq(a->data[a->len], 0); /* NUL after the bytes, for C string users */
                ck_assert_msg(is_hex16_etag(a->etag), "%s: bad ETag %s", url, a->etag);
                gc_buf_free(&b);
                n++;
        }
        closedir(d);
        ck_assert_uint_ge(n, 3);
}
END_TEST

START_TEST(test_types_and_index)
{
        const gc_web_asset *root = gc_web_find("/"), *index = gc_web_find("/index.html");
        const gc_web_asset *js = gc_web_find("/app.js"), *css = gc_web_find("/style.css");

        ck_assert_ptr_nonnull(root);
        ck_assert_ptr_eq(root, index);
        ck_assert_str_eq(index->content_type, "text/html; charset=utf-8");
        ck_assert_ptr_nonnull(js);
        ck_assert_str_eq(js->content_type, "text/javascript; charset=utf-8");
        ck_assert_ptr_nonnull(css);
        ck_assert_str_eq(css->content_type, "text/css; charset=utf-8");
        /* Different bytes, different validators. */
        ck_assert_str_ne(index->etag, js->etag);
        ck_assert_ptr_nonnull(strstr((const char *)index->data, "<!doctype html>"));
}
END_TEST

START_TEST(test_not_found)
{
        char longpath[4096];

        memset(longpath, 'a', sizeof(longpath) - 1);
        longpath[0] = '/';
        longpath[sizeof(longpath) - 1] = '\0';
        ck_assert_ptr_null(gc_web_find(NULL));
        ck_assert_ptr_null(gc_web_find(""));
        ck_assert_ptr_null(gc_web_find("index.html"));
        ck_assert_ptr_null(gc_web_find("/nope.html"));
        ck_assert_ptr_null(gc_web_find("/../web/index.html"));
        ck_assert_ptr_null(gc_web_find("/index.html?x=1"));
        ck_assert_ptr_null(gc_web_find("//index.html"));
        ck_assert_ptr_null(gc_web_find("/INDEX.HTML"));
        ck_assert_ptr_null(gc_web_find(longpath));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("web");
        TCase *tc = tcase_create("web");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_every_file_embedded);
        tcase_add_test(tc, test_types_and_index);
        tcase_add_test(tc, test_not_found);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
