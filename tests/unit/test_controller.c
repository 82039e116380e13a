/* test_controller: the daemon's entry points without an API server: --demo serving the example
 * cluster on loopback (the figures add up, probes answer, a stop ends it cleanly), bad demo input
 * refused, and the ledger it keeps following the report zone. The informers, checkpoints and
 * Lease run against a real kube-apiserver in tests/e2e. */
#include <check.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/controller.h"
#include "controller/controller_int.h"
#include "util/util.h"

static gc_dump_input file_input(const char *name, gc_buf *keep)
{
        char path[512];
        gc_dump_input in;

        snprintf(path, sizeof(path), "%s/examples/%s", GC_SOURCE_DIR, name);
        ck_assert_int_eq(gc_read_file(path, (size_t)64 << 20, keep), 0);
        memset(&in, 0, sizeof(in));
        in.name = name;
        in.data = keep->data;
        in.len = keep->len;
        return in;
}

typedef struct demo_run {
        gc_controller_opts o;
        gc_controller_demo demo;
        volatile sig_atomic_t stop;
        int rc;
} demo_run;

static void *demo_main(void *arg)
{
        demo_run *d = arg;

        d->rc = gc_controller_demo_run(&d->o, &d->demo, &d->stop);
        return NULL;
}

static size_t collect(char *p, size_t size, size_t n, void *ud)
{
        return gc_buf_append(ud, p, size * n) == 0 ? size * n : 0;
}

/* GET path on the demo's port: the status, the body into *body. */
static long get(int port, const char *path, gc_buf *body)
{
        char url[256];
        long status = 0;
        CURL *h = curl_easy_init();

        ck_assert_ptr_nonnull(h);
        snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
        gc_buf_reset(body);
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
        curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
        ck_assert_int_eq(curl_easy_perform(h), CURLE_OK);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_cleanup(h);
        return status;
}

START_TEST(test_demo_serves_and_stops)
{
        gc_buf keep[6], body;
        static const char *const names[] = {"pods.json",   "nodes.json", "namespaces.json",
                                            "config.json", "demo.json",  "metrics.prom"};
        gc_dump_input *ins[6];
        demo_run d;
        pthread_t t;
        double total = 0, sum = 0;
        cJSON *o, *rows, *row;
        int port = 0;

        memset(&d, 0, sizeof(d));
        d.o.listen = "127.0.0.1:0";
        d.o.demo = 1;
        ins[0] = &d.demo.pods;
        ins[1] = &d.demo.nodes;
        ins[2] = &d.demo.namespaces;
        ins[3] = &d.demo.config;
        ins[4] = &d.demo.settings;
        ins[5] = &d.demo.metrics;
        for (int i = 0; i < 6; i++)
                *ins[i] = file_input(names[i], &keep[i]);
        gc_buf_init(&body, (size_t)16 << 20);
        ck_assert_int_eq(pthread_create(&t, NULL, demo_main, &d), 0);
        for (int i = 0; i < 600 && !(port = gc__ctl_health_port()); i++)
                usleep(50 * 1000);
        ck_assert_int_gt(port, 0);

        ck_assert_int_eq(get(port, "/healthz", &body), 200);
        ck_assert_int_eq(get(port, "/readyz", &body), 200);
        /* The demo stands at its example's moment: a week of spend by team adds up to its total. */
        ck_assert_int_eq(get(port, "/api/v1/costs?window=7d&by=team", &body), 200);
        o = cJSON_Parse(body.data);
        ck_assert_ptr_nonnull(o);
        rows = cJSON_GetObjectItem(o, "groups");
        ck_assert_ptr_nonnull(rows);
        ck_assert_int_gt(cJSON_GetArraySize(rows), 1);
        cJSON_ArrayForEach(row, rows) sum += cJSON_GetObjectItem(row, "cost_usd")->valuedouble;
        total = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "total"), "cost_usd")->valuedouble;
        ck_assert(total > 0);
        ck_assert(fabs(sum - total) < 0.01);
        cJSON_Delete(o);
        /* The advisor ran over the example's dcgm-exporter series. */
        ck_assert_int_eq(get(port, "/api/v1/recommendations", &body), 200);
        ck_assert_ptr_nonnull(strstr(body.data, "\"findings\""));

        d.stop = 1;
        ck_assert_int_eq(pthread_join(t, NULL), 0);
        ck_assert_int_eq(d.rc, 0);
        ck_assert_int_eq(gc__ctl_health_port(), 0); /* the server is gone */
        for (int i = 0; i < 6; i++)
                gc_buf_free(&keep[i]);
        gc_buf_free(&body);
}
END_TEST

START_TEST(test_demo_bad_input_refused)
{
        static const char bad[] = "{\"items\": [ {\"metadata\": ";
        demo_run d;

        memset(&d, 0, sizeof(d));
        d.o.listen = "127.0.0.1:0";
        d.o.demo = 1;
        d.demo.pods.name = "pods.json";
        d.demo.pods.data = bad;
        d.demo.pods.len = sizeof(bad) - 1;
        d.demo.nodes = d.demo.pods;
        d.demo.namespaces = d.demo.pods;
        d.demo.config = d.demo.pods;
        d.demo.settings = d.demo.pods;
        d.demo.metrics = d.demo.pods;
        /* Nothing is served; the status says it did not start. */
        ck_assert_int_eq(gc_controller_demo_run(&d.o, &d.demo, &d.stop), 1);
        ck_assert_int_eq(gc__ctl_health_port(), 0);
}
END_TEST

/* The fold bucket: local midnights of the report zone fall on its edges. */
START_TEST(test_ledger_follows_report_zone)
{
        static const struct {
                const char *config;
                int64_t bucket;
        } cases[] = {
            {"{}", 3600},
            {"{\"report\": {\"timezone\": \"Europe/Berlin\"}}", 3600},
            {"{\"report\": {\"timezone\": \"Asia/Kolkata\"}}", 1800},
            {"{\"report\": {\"timezone\": \"Asia/Kathmandu\"}}", 900},
        };
        char err[512];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                gc_config *cfg =
                    gc_config_parse(cases[i].config, strlen(cases[i].config), err, sizeof(err));

                ck_assert_msg(cfg != NULL, "%s: %s", cases[i].config, err);
                ck_assert_int_eq(gc__ctl_fold_bucket(cfg), cases[i].bucket);
                gc_config_free(cfg);
        }
}
END_TEST

int main(void)
{
        Suite *s = suite_create("controller");
        TCase *tc = tcase_create("controller");
        SRunner *sr;
        int failed;

        curl_global_init(CURL_GLOBAL_DEFAULT);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_demo_serves_and_stops);
        tcase_add_test(tc, test_demo_bad_input_refused);
        tcase_add_test(tc, test_ledger_follows_report_zone);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        curl_global_cleanup();
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
