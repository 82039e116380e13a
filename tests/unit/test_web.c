/* test_web: every file of web/ is embedded (index.html self-contained) with its type and ETag. */
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

static void read_web(const char *name, gc_buf *ret)
{
        char path[PATH_MAX + 300];

        snprintf(path, sizeof(path), "%s/%s", WEB_DIR, name);
        ck_assert_msg(gc_read_file(path, 16u << 20, ret) == 0, "cannot read %s", path);
}

/* Appends hay with its one occurrence of tag replaced by open, the file's bytes, close. */
static void replace_once(gc_buf *out, const char *hay, const char *tag, const char *open,
                         const char *name, const char *close)
{
        const char *at = strstr(hay, tag);
        gc_buf file = {0};

        ck_assert_msg(at != NULL, "index.html lost %s", tag);
        ck_assert_ptr_null(strstr(at + 1, tag));
        read_web(name, &file);
        ck_assert_int_eq(gc_buf_append(out, hay, (size_t)(at - hay)), 0);
        ck_assert_int_eq(gc_buf_puts(out, open), 0);
        ck_assert_int_eq(gc_buf_append(out, file.data, file.len), 0);
        ck_assert_int_eq(gc_buf_puts(out, close), 0);
        ck_assert_int_eq(gc_buf_puts(out, at + strlen(tag)), 0);
        gc_buf_free(&file);
}

/* What the build serves for web/index.html: the page with its style and script inlined. */
static void expected_index(gc_buf *ret)
{
        gc_buf html = {0}, styled = {0};

        read_web("index.html", &html);
        gc_buf_init(&styled, 16u << 20);
        replace_once(&styled, html.data, "<link rel=\"stylesheet\" href=\"style.css\">",
                     "<style>\n", "style.css", "</style>");
        gc_buf_init(ret, 16u << 20);
        replace_once(ret, styled.data, "<script src=\"app.js\"></script>", "<script>\n", "app.js",
                     "</script>");
        gc_buf_free(&html);
        gc_buf_free(&styled);
}

START_TEST(test_every_file_embedded)
{
        DIR *d = opendir(WEB_DIR);
        struct dirent *de;
        size_t n = 0;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d))) {
                char url[300];
                gc_buf b = {0};
                const gc_web_asset *a;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(url, sizeof(url), "/%s", de->d_name);
                a = gc_web_find(url);
                ck_assert_msg(a != NULL, "%s is not embedded", url);
                ck_assert_str_eq(a->path, url);
                if (strcmp(de->d_name, "index.html") == 0)
                        expected_index(&b);
                else
                        read_web(de->d_name, &b);
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
        /* Self-contained: no request for the style or the script. */
        ck_assert_ptr_null(strstr((const char *)index->data, "href=\"style.css\""));
        ck_assert_ptr_null(strstr((const char *)index->data, "src=\"app.js\""));
        ck_assert_ptr_nonnull(strstr((const char *)index->data, "<style>"));
        ck_assert_ptr_nonnull(strstr((const char *)index->data, "<script>"));
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
