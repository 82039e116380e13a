/* test_savings: the advisor's input from a ledger, pod records and dcgm-exporter summaries. */
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "savings/savings.h"

#define H100 "NVIDIA-H100-80GB-HBM3"
#define T0   1795305600 /* 2026-11-23T00:00:00Z, a Monday */
#define STEP 60
#define N    120 /* two hours of scrapes */

static const char config_json[] =
    "{\"prices\":{\"currency\":\"USD\",\"prices\":["
    "{\"model\":\"" H100 "\",\"capacity_type\":\"on-demand\",\"usd_per_gpu_hour\":10}]}}";

typedef struct fixture {
        gc_config *cfg;
        gc_savings_opts so; /* the configuration's view */
        gc_strpool *pool;
        gc_ledger *l;
        gc_gpuuse *store;
        gc_buf body;
        gc_pod recs[2];
} fixture;

static void put_pod(fixture *f, const char *uid, const char *ns, const char *team, const char *name,
                    double geq)
{
        gc_usage u;

        memset(&u, 0, sizeof(u));
        u.pod_uid = uid;
        u.dims[GC_DIM_NAMESPACE] = ns;
        u.dims[GC_DIM_TEAM] = team;
        u.dims[GC_DIM_PROJECT] = "p";
        u.dims[GC_DIM_MODEL] = H100;
        u.dims[GC_DIM_CAPACITY_TYPE] = "on-demand";
        u.dims[GC_DIM_NODE] = "n1";
        u.dims[GC_DIM_POD] = name;
        u.geq = geq;
        u.price_per_gpu_hour = 10;
        u.start = T0;
        u.end = GC_OPEN;
        ck_assert_int_eq(gc_ledger_put_usage(f->l, &u), 0);
}

/* One device's series: activity and memory used (MiB of 81559) at every step. */
static void series(gc_buf *b, const char *ns, const char *pod, int gpu, double act, int used)
{
        for (int i = 0; i < N; i++) {
                long long ms = ((long long)T0 + (long long)i * STEP) * 1000;
                char l[256];

                snprintf(l, sizeof(l),
                         "gpu=\"%d\",UUID=\"GPU-%s-%d\",modelName=\"NVIDIA H100 80GB HBM3\","
                         "Hostname=\"n1\",namespace=\"%s\",pod=\"%s\"",
                         gpu, pod, gpu, ns, pod);
                ck_assert_int_eq(
                    gc_buf_printf(b, "DCGM_FI_PROF_GR_ENGINE_ACTIVE{%s} %g %lld\n", l, act, ms), 0);
                ck_assert_int_eq(gc_buf_printf(b, "DCGM_FI_DEV_FB_USED{%s} %d %lld\n", l, used, ms),
                                 0);
                ck_assert_int_eq(
                    gc_buf_printf(b, "DCGM_FI_DEV_FB_FREE{%s} %d %lld\n", l, 81559 - used, ms), 0);
        }
}

static const gc_pod *pod_of(void *ud, const char *uid)
{
        fixture *f = ud;

        for (int i = 0; i < 2; i++)
                if (strcmp(f->recs[i].uid, uid) == 0)
                        return &f->recs[i];
        return NULL;
}

/*
 * ml/nb-1 holds one H100 and sits idle holding 60 GB (idle_gpu); web/train-1 holds four and
 * keeps one busy (over_requested: 1). Both since T0, measured every minute for two hours.
 */
static void setup(fixture *f)
{
        char err[256];
        gc_ledger_opts lo;
        gc_capacity cap;
        gc_gpuuse_stats st;

        memset(f, 0, sizeof(*f));
        f->cfg = gc_config_parse(config_json, strlen(config_json), err, sizeof(err));
        ck_assert_msg(f->cfg != NULL, "%s", err);
        f->pool = gc_strpool_new(1u << 20);
        memset(&lo, 0, sizeof(lo));
        lo.pool = f->pool;
        f->l = gc_ledger_new(&lo);
        ck_assert_ptr_nonnull(f->l);
        memset(&cap, 0, sizeof(cap));
        cap.node = "n1";
        cap.model = H100;
        cap.capacity_type = "on-demand";
        cap.geq = 8;
        cap.price_per_gpu_hour = 10;
        cap.start = T0 - 86400;
        cap.end = GC_OPEN;
        ck_assert_int_eq(gc_ledger_put_capacity(f->l, &cap), 0);
        put_pod(f, "uid-nb", "ml", "ml", "nb-1", 1);
        put_pod(f, "uid-train", "web", "web", "train-1", 4);
        f->recs[0].uid = "uid-nb";
        f->recs[0].gpu[0].resource = "nvidia.com/gpu";
        f->recs[0].gpu[0].count = 1;
        f->recs[0].n_gpu = 1;
        f->recs[1].uid = "uid-train";
        f->recs[1].controller_kind = "Job";
        f->recs[1].controller = "train";
        f->recs[1].gpu[0].resource = "nvidia.com/gpu";
        f->recs[1].gpu[0].count = 4;
        f->recs[1].n_gpu = 1;

        gc_buf_init(&f->body, 16u << 20);
        series(&f->body, "ml", "nb-1", 0, 0.0, 60000);
        series(&f->body, "web", "train-1", 1, 0.9, 30000);
        for (int g = 2; g < 5; g++)
                series(&f->body, "web", "train-1", g, 0.0, 0);
        gc_config_savings_opts(f->cfg, &f->so);
        f->store = gc_gpuuse_new(&f->so.usage);
        ck_assert_ptr_nonnull(f->store);
        memset(&st, 0, sizeof(st));
        ck_assert_int_eq(
            gc_gpuuse_ingest_text(f->store, f->body.data, f->body.len, T0 + N * STEP, STEP, &st),
            0);
        ck_assert_uint_eq(st.parse_errors, 0);
}

static void teardown(fixture *f)
{
        gc_gpuuse_free(f->store);
        gc_buf_free(&f->body);
        gc_ledger_free(f->l);
        gc_strpool_free(f->pool);
        gc_config_free(f->cfg);
}

static cJSON *parse(const gc_buf *b)
{
        cJSON *j = cJSON_ParseWithLengthOpts(b->data, b->len, NULL, 0);

        ck_assert_msg(j != NULL, "not JSON: %.200s", b->data ? b->data : "");
        return j;
}

/* "kind:namespace/pod" of every finding, in order, joined by spaces. */
static void kinds(const cJSON *doc, char *out, size_t n)
{
        const cJSON *f;

        out[0] = '\0';
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doc, "findings"))
        {
                const cJSON *sub = cJSON_GetObjectItemCaseSensitive(f, "subject");
                const cJSON *pod = cJSON_GetObjectItemCaseSensitive(sub, "pod");
                const cJSON *ns = cJSON_GetObjectItemCaseSensitive(sub, "namespace");
                size_t len = strlen(out);

                snprintf(out + len, n - len, "%s%s:%s/%s", len ? " " : "",
                         cJSON_GetObjectItemCaseSensitive(f, "kind")->valuestring,
                         cJSON_IsString(ns) ? ns->valuestring : "-",
                         cJSON_IsString(pod) ? pod->valuestring : "-");
        }
}

START_TEST(series_interval)
{
        fixture f;
        int64_t first = 0;

        setup(&f);
        ck_assert_int_eq(gc_savings_series_interval(f.body.data, f.body.len, &first), STEP);
        ck_assert_int_eq(first, T0);
        /* No timestamps: no series. */
        ck_assert_int_eq(
            gc_savings_series_interval("DCGM_FI_DEV_FB_USED{pod=\"a\"} 1\n", 32, &first), 0);
        /* Two scrapes two hours apart are holes, not an interval. */
        ck_assert_int_eq(gc_savings_series_interval("m 1 1000\nm 2 7201000\n", 22, &first), 0);
        teardown(&f);
}
END_TEST

START_TEST(table_and_collect)
{
        fixture f;
        gc_savings_table t;
        const gc_gpuuse_pod *p;
        gc_advisor_pod *pods = NULL;
        size_t n = 0;

        setup(&f);
        ck_assert_int_eq(gc_savings_table_build(f.store, T0, T0 + N * STEP, &t), 0);
        ck_assert_uint_eq(t.n, 2);
        p = gc_savings_table_find(&t, "web", "train-1");
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq(p->devices, 4);
        ck_assert_uint_eq(p->devices_active, 1);
        ck_assert_uint_eq(p->samples, N);
        ck_assert_ptr_null(gc_savings_table_find(&t, "web", "train-2"));
        ck_assert_ptr_null(gc_savings_table_find(&t, "ml", "train-1"));

        ck_assert_int_eq(
            gc_savings_collect(f.l, T0, T0 + N * STEP, T0 + N * STEP, pod_of, &f, &t, &pods, &n),
            0);
        ck_assert_uint_eq(n, 2);
        for (size_t i = 0; i < n; i++) {
                const gc_advisor_pod *a = &pods[i];

                ck_assert_int_eq(a->has_usage, 1);
                ck_assert_uint_eq(a->samples, N);
                /* every minute of the two hours it held the GPUs */
                ck_assert_double_eq_tol(a->coverage, 1.0, 1e-9);
                ck_assert_str_eq(a->resource, "nvidia.com/gpu");
                ck_assert_str_eq(a->activity_source, "DCGM_FI_PROF_GR_ENGINE_ACTIVE");
                if (strcmp(a->name, "train-1") == 0) {
                        ck_assert_double_eq(a->gpus_requested, 4);
                        ck_assert_str_eq(a->controller_kind, "Job");
                        ck_assert_uint_eq(a->devices_seen, 4);
                } else {
                        ck_assert_str_eq(a->team, "ml");
                        ck_assert_int_ge(a->idle_longest_s, 110 * 60);
                }
        }
        free(pods);

        /* Half the pods' time measured: coverage one half. */
        ck_assert_int_eq(gc_savings_collect(f.l, T0, T0 + 2 * N * STEP, T0 + 2 * N * STEP, pod_of,
                                            &f, &t, &pods, &n),
                         0);
        ck_assert_double_eq_tol(pods[0].coverage, 0.5, 1e-9);
        free(pods);
        /* Without a table: pods, no usage. */
        ck_assert_int_eq(gc_savings_collect(f.l, T0, T0 + N * STEP, 0, NULL, NULL, NULL, &pods, &n),
                         0);
        ck_assert_uint_eq(n, 2);
        ck_assert_int_eq(pods[0].has_usage + pods[1].has_usage, 0);
        ck_assert_ptr_null(pods[0].resource);
        free(pods);
        /* A window the pods never touched. */
        ck_assert_int_eq(gc_savings_collect(f.l, T0 - 7200, T0, T0, pod_of, &f, &t, &pods, &n), 0);
        ck_assert_uint_eq(n, 0);
        free(pods);
        gc_savings_table_release(&t);
        teardown(&f);
}
END_TEST

START_TEST(run_and_team_filter)
{
        fixture f;
        gc_savings_table t;
        gc_advisor_pod *pods = NULL;
        size_t n = 0;
        gc_buf md, json;
        char err[256], got[512];
        cJSON *doc;
        double all_saving;

        setup(&f);
        ck_assert_int_eq(gc_savings_table_build(f.store, T0, T0 + N * STEP, &t), 0);
        ck_assert_int_eq(
            gc_savings_collect(f.l, T0, T0 + N * STEP, T0 + N * STEP, pod_of, &f, &t, &pods, &n),
            0);
        gc_buf_init(&md, 1u << 20);
        gc_buf_init(&json, 1u << 20);

        ck_assert_int_eq(gc_savings_run(&f.so, f.l, T0, T0 + N * STEP, T0 + N * STEP, pods, n, NULL,
                                        NULL, 0, &md, &json, NULL, err, sizeof(err)),
                         0);
        doc = parse(&json);
        kinds(doc, got, sizeof(got));
        /* train-1's 3 idle GPUs save more than nb-1's one: by saving, descending */
        ck_assert_str_eq(got, "over_requested:web/train-1 idle_gpu:ml/nb-1");
        all_saving = cJSON_GetObjectItemCaseSensitive(
                         cJSON_GetObjectItemCaseSensitive(doc, "totals"), "monthly_savings")
                         ->valuedouble;
        cJSON_Delete(doc);
        ck_assert_ptr_nonnull(strstr(md.data, "train-1"));
        ck_assert_ptr_nonnull(strstr(md.data, "nb-1"));

        /* A team's copy: its findings only, its totals, no notes naming other teams' pods. */
        gc_buf_reset(&md);
        gc_buf_reset(&json);
        ck_assert_int_eq(gc_savings_run(&f.so, f.l, T0, T0 + N * STEP, T0 + N * STEP, pods, n, NULL,
                                        "ml", 0, &md, &json, NULL, err, sizeof(err)),
                         0);
        doc = parse(&json);
        kinds(doc, got, sizeof(got));
        ck_assert_str_eq(got, "idle_gpu:ml/nb-1");
        {
                const cJSON *tot = cJSON_GetObjectItemCaseSensitive(doc, "totals");
                const cJSON *f0 =
                    cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "findings"), 0);
                double s0 = cJSON_GetObjectItemCaseSensitive(f0, "monthly_savings")->valuedouble;

                ck_assert_double_eq_tol(
                    cJSON_GetObjectItemCaseSensitive(tot, "monthly_savings")->valuedouble, s0,
                    0.005);
                ck_assert_double_lt(s0, all_saving);
                ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(tot, "findings")->valueint, 1);
                ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "notes")),
                                 0);
        }
        cJSON_Delete(doc);
        ck_assert_ptr_null(strstr(md.data, "train-1"));

        gc_buf_reset(&json);
        ck_assert_int_eq(gc_savings_run(&f.so, f.l, T0, T0 + N * STEP, T0 + N * STEP, pods, n, NULL,
                                        "web", 0, NULL, &json, NULL, err, sizeof(err)),
                         0);
        doc = parse(&json);
        kinds(doc, got, sizeof(got));
        ck_assert_str_eq(got, "over_requested:web/train-1");
        cJSON_Delete(doc);

        /* A report's cut: the largest listed, the others counted. */
        gc_buf_reset(&json);
        ck_assert_int_eq(gc_savings_run(&f.so, f.l, T0, T0 + N * STEP, T0 + N * STEP, pods, n, NULL,
                                        NULL, 1, NULL, &json, NULL, err, sizeof(err)),
                         0);
        doc = parse(&json);
        kinds(doc, got, sizeof(got));
        ck_assert_str_eq(got, "over_requested:web/train-1");
        ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(doc, "findings_omitted")->valueint, 1);
        cJSON_Delete(doc);

        gc_buf_free(&md);
        gc_buf_free(&json);
        free(pods);
        gc_savings_table_release(&t);
        teardown(&f);
}
END_TEST

/*
 * A report's section rendered from one shared result (the controller's: the advisor's findings
 * kept whole) is the section a run of its own for that report gives: the cluster's, cut to the
 * report's count, and a team's.
 */
START_TEST(render_from_a_shared_result)
{
        static const struct {
                const char *team;
                size_t max;
        } cases[] = {{NULL, 0}, {NULL, 1}, {"ml", 0}, {"web", 1}, {"nobody", 0}};
        fixture f;
        gc_savings_table t;
        gc_advisor_pod *pods = NULL;
        gc_advisor_result *shared = NULL;
        size_t n = 0;
        gc_buf md, json, md2, json2;
        char err[256];

        setup(&f);
        ck_assert_int_eq(gc_savings_table_build(f.store, T0, T0 + N * STEP, &t), 0);
        ck_assert_int_eq(
            gc_savings_collect(f.l, T0, T0 + N * STEP, T0 + N * STEP, pod_of, &f, &t, &pods, &n),
            0);
        ck_assert_int_eq(gc_savings_run(&f.so, f.l, T0, T0 + N * STEP, T0 + N * STEP, pods, n, NULL,
                                        NULL, 0, NULL, NULL, &shared, err, sizeof(err)),
                         0);
        gc_buf_init(&md, 1u << 20);
        gc_buf_init(&json, 1u << 20);
        gc_buf_init(&md2, 1u << 20);
        gc_buf_init(&json2, 1u << 20);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                gc_buf_reset(&md);
                gc_buf_reset(&json);
                gc_buf_reset(&md2);
                gc_buf_reset(&json2);
                ck_assert_int_eq(gc_savings_run(&f.so, f.l, T0, T0 + N * STEP, T0 + N * STEP, pods,
                                                n, NULL, cases[i].team, cases[i].max, &md, &json,
                                                NULL, err, sizeof(err)),
                                 0);
                ck_assert_int_eq(gc_savings_render(f.so.currency, shared, cases[i].team,
                                                   cases[i].max, &md2, &json2),
                                 0);
                ck_assert_str_eq(json2.data, json.data);
                ck_assert_str_eq(md2.data, md.data);
        }
        ck_assert_int_eq(gc_savings_render(f.so.currency, NULL, NULL, 0, &md, NULL), -EINVAL);
        gc_buf_free(&md);
        gc_buf_free(&json);
        gc_buf_free(&md2);
        gc_buf_free(&json2);
        gc_advisor_result_unref(shared);
        free(pods);
        gc_savings_table_release(&t);
        teardown(&f);
}
END_TEST

/*
 * A result the advisor cut to its max_findings still gives a team its whole totals (from the
 * per-(kind, team) rows): ml's one idle GPU, past the cut, is counted and priced, not listed.
 */
START_TEST(render_team_of_a_cut_result)
{
        fixture f;
        gc_savings_table t;
        gc_advisor_pod *pods = NULL;
        gc_advisor_result *whole = NULL, *cut = NULL;
        gc_savings_opts o;
        size_t n = 0;
        gc_buf json;
        char err[256], got[512];
        cJSON *doc, *want;
        const cJSON *tot;

        setup(&f);
        ck_assert_int_eq(gc_savings_table_build(f.store, T0, T0 + N * STEP, &t), 0);
        ck_assert_int_eq(
            gc_savings_collect(f.l, T0, T0 + N * STEP, T0 + N * STEP, pod_of, &f, &t, &pods, &n),
            0);
        ck_assert_int_eq(gc_savings_run(&f.so, f.l, T0, T0 + N * STEP, T0 + N * STEP, pods, n, NULL,
                                        NULL, 0, NULL, NULL, &whole, err, sizeof(err)),
                         0);
        o = f.so;
        o.advisor.max_findings = 1; /* keeps train-1's over_request, the larger */
        ck_assert_int_eq(gc_savings_run(&o, f.l, T0, T0 + N * STEP, T0 + N * STEP, pods, n, NULL,
                                        NULL, 0, NULL, NULL, &cut, err, sizeof(err)),
                         0);
        ck_assert_uint_eq(cut->n_findings, 1);
        gc_buf_init(&json, 1u << 20);
        ck_assert_int_eq(gc_savings_render(f.so.currency, whole, "ml", 0, NULL, &json), 0);
        want = parse(&json);
        gc_buf_reset(&json);
        ck_assert_int_eq(gc_savings_render(f.so.currency, cut, "ml", 0, NULL, &json), 0);
        doc = parse(&json);
        kinds(doc, got, sizeof(got));
        ck_assert_str_eq(got, "");
        ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(doc, "findings_omitted")->valueint, 1);
        tot = cJSON_GetObjectItemCaseSensitive(doc, "totals");
        ck_assert(cJSON_Compare(tot, cJSON_GetObjectItemCaseSensitive(want, "totals"), 1));
        ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(tot, "findings")->valueint, 1);
        ck_assert_double_gt(cJSON_GetObjectItemCaseSensitive(tot, "monthly_savings")->valuedouble,
                            0);
        cJSON_Delete(doc);
        cJSON_Delete(want);
        gc_buf_free(&json);
        gc_advisor_result_unref(whole);
        gc_advisor_result_unref(cut);
        free(pods);
        gc_savings_table_release(&t);
        teardown(&f);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("savings");
        TCase *tc = tcase_create("savings");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, series_interval);
        tcase_add_test(tc, table_and_collect);
        tcase_add_test(tc, run_and_team_filter);
        tcase_add_test(tc, render_from_a_shared_result);
        tcase_add_test(tc, render_team_of_a_cut_result);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
