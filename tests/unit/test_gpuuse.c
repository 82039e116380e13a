/* test_gpuuse: dcgm samples into per-pod summaries (every label scheme), Prometheus answers, fetch.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gpuuse/gpuuse.h"
#include "util/util.h"

#define T0 1795166100 /* 2026-11-20T09:15:00Z */

static char *read_fixture(const char *name, size_t *ret_n)
{
        char path[1024];
        gc_buf b;

        snprintf(path, sizeof(path), "%s/tests/fixtures/dcgm/%s", GC_SOURCE_DIR, name);
        ck_assert_int_eq(gc_read_file(path, 16 << 20, &b), 0);
        *ret_n = b.len;
        return gc_buf_steal(&b);
}

static void ingest_fixture(gc_gpuuse *s, const char *name, int64_t now, gc_gpuuse_stats *st)
{
        size_t n;
        char *body = read_fixture(name, &n);

        ck_assert_int_eq(gc_gpuuse_ingest_text(s, body, n, now, 0, st), 0);
        free(body);
}

#define EPS 1e-6

START_TEST(test_a100_scrape)
{
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        gc_gpuuse_stats st;
        gc_gpuuse_pod p;
        gc_gpuuse_device d;
        size_t cur = 0, npods = 0;

        ingest_fixture(s, "a100-k8s.prom", T0, &st);
        ck_assert_uint_eq(st.samples, 100);
        ck_assert_uint_eq(st.used, 4 * 6); /* six metrics we use, four GPUs */
        ck_assert_uint_eq(st.ignored, 100 - 24);
        ck_assert_uint_eq(st.readings, 4);
        ck_assert_uint_eq(st.parse_errors, 0);
        ck_assert_uint_eq(gc_gpuuse_pod_count(s), 2);
        ck_assert_uint_eq(gc_gpuuse_device_count(s), 4);

        ck_assert_int_eq(gc_gpuuse_pod_get(s, "ml", "train-0", T0, T0 + 30, &p), 0);
        ck_assert_str_eq(p.ns, "ml");
        ck_assert_str_eq(p.pod, "train-0");
        ck_assert_str_eq(p.container, "trainer");
        ck_assert_str_eq(p.model, "NVIDIA A100-SXM4-80GB");
        ck_assert_str_eq(p.hostname, "gpu-a100-1");
        ck_assert_ptr_null(p.mig_profile);
        ck_assert_uint_eq(p.devices, 2);
        ck_assert_uint_eq(p.devices_active, 2);
        ck_assert_int_eq(p.activity_src, GC_GPUUSE_SRC_GR_ENGINE);
        ck_assert_str_eq(gc_gpuuse_source_name(p.activity_src), "gr_engine_active");
        ck_assert_double_eq_tol(p.activity_mean, (0.912345 + 0.884) / 2, EPS);
        ck_assert_double_eq_tol(p.activity_p95, 0.91, EPS);
        ck_assert_double_eq_tol(p.tensor_mean, (0.412 + 0.398) / 2, EPS);
        ck_assert_double_eq_tol(p.power_mean_w, (302.206 + 296.511) / 2, 1e-3);
        ck_assert_double_eq_tol(p.mem_used_peak_mib, 61234, EPS);
        ck_assert_double_eq_tol(p.mem_used_mean_mib, (61234 + 60110) / 2.0, EPS);
        ck_assert_double_eq_tol(p.mem_total_mib, 80920, EPS);
        ck_assert_uint_eq(p.samples, 1);
        ck_assert_uint_eq(p.device_samples, 2);
        ck_assert_int_eq(p.first_at, T0);
        ck_assert_int_eq(p.last_at, T0);
        ck_assert_double_eq_tol(p.coverage, 1.0, EPS);
        ck_assert_int_eq(p.idle_longest_s, 0);

        /* The notebook holds half of its memory and does nothing: idle for its one reading. */
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "research", "notebook-7", T0, T0 + 60, &p), 0);
        ck_assert_uint_eq(p.devices_active, 0);
        ck_assert_double_eq_tol(p.activity_mean, 0, EPS);
        ck_assert_int_eq(p.idle_longest_s, 30);
        ck_assert_int_eq(p.idle_total_s, 30);
        ck_assert_double_eq_tol(p.coverage, 0.5, EPS);

        /* The free GPU is a device without a pod; the others join by UUID. */
        ck_assert_int_eq(
            gc_gpuuse_device_get(s, "GPU-9e8d7c6b-5a49-4382-9170-f1e2d3c4b5a6", NULL, &d), 0);
        ck_assert_ptr_null(d.pod);
        ck_assert_uint_eq(d.unheld_samples, 1);
        ck_assert_double_eq_tol(d.unheld_activity_mean, 0, EPS);
        ck_assert_str_eq(d.gpu, "3");
        ck_assert_str_eq(d.hostname, "gpu-a100-1");
        ck_assert_int_eq(
            gc_gpuuse_device_get(s, "GPU-1a2b3c4d-5e6f-4071-8293-a4b5c6d7e8f9", NULL, &d), 0);
        ck_assert_str_eq(d.ns, "research");
        ck_assert_str_eq(d.pod, "notebook-7");
        ck_assert_uint_eq(d.unheld_samples, 0);
        ck_assert_int_eq(gc_gpuuse_device_get(s, "GPU-nope", NULL, &d), -ENOENT);
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "ml", "nope", T0, T0 + 1, &p), -ENOENT);

        while (gc_gpuuse_pod_next(s, &cur, T0, T0 + 30, &p) == 0)
                npods++;
        ck_assert_uint_eq(npods, 2);
        cur = 0;
        npods = 0;
        while (gc_gpuuse_device_next(s, &cur, &d) == 0)
                npods++;
        ck_assert_uint_eq(npods, 4);
        gc_gpuuse_free(s);
}
END_TEST

START_TEST(test_label_schemes)
{
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        gc_gpuuse_stats st;
        gc_gpuuse_pod p;
        gc_gpuuse_device d;

        /* Lower-case names and legacy labels; GPU_UTIL is the only activity (off MIG). */
        ingest_fixture(s, "legacy-lowercase.prom", T0, &st);
        ck_assert_uint_eq(st.used, 3);
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "serving", "infer-5f7c", T0, T0 + 30, &p), 0);
        ck_assert_int_eq(p.activity_src, GC_GPUUSE_SRC_GPU_UTIL);
        ck_assert_double_eq_tol(p.activity_mean, 0.37, EPS);
        ck_assert_str_eq(p.container, "server");
        ck_assert_str_eq(p.hostname, "t4-node-3");
        ck_assert_str_eq(p.model, "Tesla T4");
        ck_assert_double_eq_tol(p.mem_total_mib, 15109, EPS);
        ck_assert(isnan(p.tensor_mean));

        /* Behind Prometheus: exported_* win over the exporter's own pod; timestamps are used. */
        ingest_fixture(s, "federate-exported.prom", T0 + 999, &st);
        ck_assert_int_eq(
            gc_gpuuse_pod_get(s, "gpu-operator", "nvidia-dcgm-exporter-x8k2p", 0, 1, &p), -ENOENT);
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "chat", "vllm-0", T0, T0 + 30, &p), 0);
        ck_assert_str_eq(p.container, "llm");
        ck_assert_int_eq(p.first_at, T0);
        ck_assert_double_eq_tol(p.activity_mean, 0.25, EPS);
        ck_assert_double_eq_tol(p.mem_used_peak_mib, 18000, EPS);

        /* MIG: one device per GPU_I_ID under the parent UUID; GPU_UTIL (0) is not activity. */
        ingest_fixture(s, "h100-mig.prom", T0, &st);
        ck_assert_uint_eq(st.missing, 1); /* the blank sentinel */
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "ml", "embed-1", T0, T0 + 30, &p), 0);
        ck_assert_str_eq(p.mig_profile, "1g.10gb");
        ck_assert_str_eq(p.hostname, "h100-node-1");
        ck_assert_int_eq(p.activity_src, GC_GPUUSE_SRC_GR_ENGINE);
        ck_assert_double_eq_tol(p.activity_mean, 0.3, EPS);
        ck_assert(isnan(p.tensor_mean));
        ck_assert_double_eq_tol(p.mem_total_mib, 9823, EPS);
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "ml", "ft-2", T0, T0 + 30, &p), 0);
        ck_assert_str_eq(p.mig_profile, "3g.40gb");
        ck_assert_double_eq_tol(p.tensor_mean, 0.1, EPS);
        ck_assert_int_eq(
            gc_gpuuse_device_get(s, "GPU-h100aaaa-bbbb-4ccc-8ddd-eeeeffff0000", "9", &d), 0);
        ck_assert_str_eq(d.pod, "embed-1");
        ck_assert_str_eq(d.gpu_i_id, "9");
        ck_assert_str_eq(d.mig_profile, "1g.10gb");
        ck_assert_int_eq(
            gc_gpuuse_device_get(s, "GPU-h100aaaa-bbbb-4ccc-8ddd-eeeeffff0000", NULL, &d), -ENOENT);
        gc_gpuuse_free(s);
}
END_TEST

/* MIG series where GR_ENGINE is absent: GPU_UTIL must not stand in (it reads 0 on MIG). */
/* An OpenMetrics file (promtool's backfill input) has timestamps in seconds. */
START_TEST(test_openmetrics_seconds)
{
        static const char body[] =
            "# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge\n"
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"G\",namespace=\"a\",pod=\"b\"} 0.5 1795166100\n"
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"G\",namespace=\"a\",pod=\"b\"} 0.7 1795166160.0\n"
            "# EOF\n";
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        gc_gpuuse_pod p;

        ck_assert_int_eq(gc_gpuuse_ingest_text(s, body, sizeof(body) - 1, 0, 60, NULL), 0);
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "a", "b", T0, T0 + 120, &p), 0);
        ck_assert_int_eq(p.first_at, T0);
        ck_assert_int_eq(p.last_at, T0 + 60);
        ck_assert_double_eq_tol(p.activity_mean, 0.6, EPS);
        ck_assert_double_eq_tol(p.coverage, 1.0, EPS);
        gc_gpuuse_free(s);
}
END_TEST

START_TEST(test_mig_no_util_fallback)
{
        static const char body[] =
            "DCGM_FI_DEV_GPU_UTIL{UUID=\"G\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"1\","
            "namespace=\"a\",pod=\"b\"} 0\n";
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        gc_gpuuse_pod p;

        ck_assert_int_eq(gc_gpuuse_ingest_text(s, body, sizeof(body) - 1, T0, 0, NULL), 0);
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "a", "b", T0, T0 + 30, &p), 0);
        ck_assert_int_eq(p.activity_src, GC_GPUUSE_SRC_NONE);
        ck_assert(isnan(p.activity_mean));
        ck_assert(isnan(p.activity_p95));
        gc_gpuuse_free(s);
}
END_TEST

/* ---- synthetic scrapes -------------------------------------------------------------------------
 */

typedef struct gpu {
        const char *uuid, *ns, *pod;
        double act, used, free_mib;
} gpu;

static void scrape(gc_gpuuse *s, int64_t t, const gpu *g, size_t n)
{
        gc_buf b;
        gc_gpuuse_stats st;

        gc_buf_init(&b, 1 << 20);
        for (size_t i = 0; i < n; i++) {
#define LAB                                                                                        \
        "{UUID=\"%s\",modelName=\"NVIDIA H100 80GB "                                               \
        "HBM3\",Hostname=\"n1\",namespace=\"%s\",pod=\"%s\"} "
                gc_buf_puts(&b, "DCGM_FI_PROF_GR_ENGINE_ACTIVE");
                gc_buf_printf(&b, LAB, g[i].uuid, g[i].ns, g[i].pod);
                gc_buf_printf(&b, "%.6f\nDCGM_FI_DEV_FB_USED", g[i].act);
                gc_buf_printf(&b, LAB, g[i].uuid, g[i].ns, g[i].pod);
                gc_buf_printf(&b, "%.0f\nDCGM_FI_DEV_FB_FREE", g[i].used);
                gc_buf_printf(&b, LAB, g[i].uuid, g[i].ns, g[i].pod);
#undef LAB
                gc_buf_printf(&b, "%.0f\n", g[i].free_mib);
        }
        ck_assert_int_eq(gc_gpuuse_ingest_text(s, b.data, b.len, t, 30, &st), 0);
        ck_assert_uint_eq(st.readings, n);
        gc_buf_free(&b);
}

START_TEST(test_mean_p95_peak)
{
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        gc_gpuuse_pod p;

        /* activity 0.00 .. 0.99 in a shuffled order: the order must not matter */
        for (int i = 0; i < 100; i++) {
                int k = (i * 37) % 100;
                gpu g = {"GPU-a", "ns", "job", k / 100.0, 1000 + k, 79000 - k};

                scrape(s, T0 + 30 * i, &g, 1);
        }
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "ns", "job", T0, T0 + 3000, &p), 0);
        ck_assert_uint_eq(p.samples, 100);
        ck_assert_double_eq_tol(p.activity_mean, 0.495, EPS);
        ck_assert_double_eq_tol(p.activity_p95, 0.94, EPS);
        ck_assert_double_eq_tol(p.mem_used_peak_mib, 1099, EPS);
        ck_assert_double_eq_tol(p.mem_used_mean_mib, 1049.5, EPS);
        ck_assert_double_eq_tol(p.mem_total_mib, 80000, EPS);
        ck_assert_double_eq_tol(p.coverage, 1.0, EPS);
        ck_assert_double_eq_tol(p.sampled_s, 3000, EPS);
        ck_assert_uint_eq(p.devices_active, 1);
        gc_gpuuse_free(s);
}
END_TEST

/* More readings than a 16-bit bin holds: halving keeps the percentile where it belongs. */
static double p95_of_many(int pct_high)
{
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        gc_gpuuse_pod p;
        gc_gpuuse_stats st;
        gc_buf b;
        double r;

        gc_buf_init(&b, 64 << 20);
        for (int i = 0; i < 80000; i++)
                gc_buf_printf(&b,
                              "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"G\",namespace=\"n\",pod=\"p\"} "
                              "%s %lld\n",
                              i % 100 < pct_high ? "0.9" : "0.1",
                              (long long)(T0 + 30LL * i) * 1000);
        ck_assert_int_eq(gc_gpuuse_ingest_text(s, b.data, b.len, T0, 30, &st), 0);
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "n", "p", T0, T0 + 30 * 80000, &p), 0);
        ck_assert_uint_eq(p.samples, 80000);
        ck_assert_double_eq_tol(p.activity_mean, (0.9 * pct_high + 0.1 * (100 - pct_high)) / 100,
                                1e-6);
        r = p.activity_p95;
        gc_buf_free(&b);
        gc_gpuuse_free(s);
        return r;
}

START_TEST(test_p95_many)
{
        ck_assert_double_eq_tol(p95_of_many(6), 0.9, EPS);
        ck_assert_double_eq_tol(p95_of_many(4), 0.1, EPS);
}
END_TEST

/* Idle: activity < 5% while > 10% of memory is held. n idle readings 30 s apart. */
static int64_t idle_run(int n_idle, int64_t *ret_total)
{
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        gc_gpuuse_pod p;
        int64_t t = T0, longest;
        gpu busy = {"GPU-i", "ns", "nb", 0.80, 40000, 40000};
        gpu idle = {"GPU-i", "ns", "nb", 0.01, 40000, 40000};
        gpu idle_nomem = {"GPU-i", "ns", "nb", 0.01, 4000, 76000}; /* 5%: not "held" */

        for (int i = 0; i < 5; i++, t += 30)
                scrape(s, t, &busy, 1);
        for (int i = 0; i < 3; i++, t += 30)
                scrape(s, t, &idle_nomem, 1);
        for (int i = 0; i < n_idle; i++, t += 30)
                scrape(s, t, &idle, 1);
        for (int i = 0; i < 5; i++, t += 30)
                scrape(s, t, &busy, 1);
        /* a short idle stretch after */
        for (int i = 0; i < 4; i++, t += 30)
                scrape(s, t, &idle, 1);
        scrape(s, t, &busy, 1);
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "ns", "nb", T0, t + 30, &p), 0);
        longest = p.idle_longest_s;
        *ret_total = p.idle_total_s;
        gc_gpuuse_free(s);
        return longest;
}

START_TEST(test_idle_stretch)
{
        int64_t total;

        ck_assert_int_eq(idle_run(60, &total), 1800); /* exactly 30 minutes */
        ck_assert_int_eq(total, 1800 + 120);
        ck_assert_int_eq(idle_run(58, &total), 1740); /* 29 minutes: under the rule */
        ck_assert_int_eq(total, 1740 + 120);
}
END_TEST

START_TEST(test_idle_gap_and_open)
{
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        gc_gpuuse_pod p;
        gpu idle = {"GPU-g", "ns", "nb", 0.0, 40000, 40000};
        int64_t t = T0;

        /* 10 idle readings, a 10-minute hole, 10 more: two stretches of 300 s, not one. */
        for (int i = 0; i < 10; i++, t += 30)
                scrape(s, t, &idle, 1);
        t += 600;
        for (int i = 0; i < 10; i++, t += 30)
                scrape(s, t, &idle, 1);
        /* The last stretch is still open: its last reading covers one interval. */
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "ns", "nb", T0, t, &p), 0);
        ck_assert_int_eq(p.idle_longest_s, 300);
        ck_assert_int_eq(p.idle_total_s, 600);
        ck_assert_double_eq_tol(p.sampled_s, 600, EPS);
        ck_assert_double_eq_tol(p.coverage, 600.0 / (t - T0), EPS);
        /* A window that ends at the last reading gives that reading no time. */
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "ns", "nb", T0, t - 30, &p), 0);
        ck_assert_double_eq_tol(p.sampled_s, 570, EPS);
        gc_gpuuse_free(s);
}
END_TEST

START_TEST(test_eight_gpus_two_active)
{
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        gc_gpuuse_pod p;
        gpu g[8];
        char uu[8][16];

        for (int i = 0; i < 8; i++) {
                snprintf(uu[i], sizeof(uu[i]), "GPU-%d", i);
                g[i] = (gpu){uu[i], "train", "big-0", i < 2 ? 0.9 : 0.0, 30000, 50000};
        }
        for (int k = 0; k < 20; k++)
                scrape(s, T0 + 30 * k, g, 8);
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "train", "big-0", T0, T0 + 600, &p), 0);
        ck_assert_uint_eq(p.devices, 8);
        ck_assert_uint_eq(p.devices_active, 2);
        ck_assert_uint_eq(p.samples, 20);
        ck_assert_uint_eq(p.device_samples, 160);
        ck_assert_double_eq_tol(p.activity_mean, 0.9 * 2 / 8, EPS);
        ck_assert_double_eq_tol(p.activity_p95, 0.9, EPS);
        ck_assert_double_eq_tol(p.coverage, 1.0, EPS);
        /* Not idle: two devices are busy. */
        ck_assert_int_eq(p.idle_longest_s, 0);
        gc_gpuuse_free(s);
}
END_TEST

START_TEST(test_order_and_limits)
{
        gc_gpuuse_opts o;
        gc_gpuuse *s;
        gc_gpuuse_stats st;
        gc_gpuuse_pod p;
        gpu a = {"GPU-1", "ns", "a", 0.5, 1, 1};
        gpu three[3] = {{"GPU-1", "ns", "a", 0.5, 1, 1},
                        {"GPU-2", "ns", "b", 0.5, 1, 1},
                        {"GPU-3", "ns", "c", 0.5, 1, 1}};
        static const char body[] =
            "DCGM_FI_DEV_FB_USED{UUID=\"GPU-1\",namespace=\"ns\",pod=\"a\"} 1\n";

        gc_gpuuse_opts_default(&o);
        o.max_pods = 2;
        s = gc_gpuuse_new(&o);
        scrape(s, T0 + 60, &a, 1);
        /* An older reading is dropped and counted. */
        ck_assert_int_eq(gc_gpuuse_ingest_text(s, body, sizeof(body) - 1, T0, 0, &st), 0);
        ck_assert_uint_eq(st.out_of_order, 1);
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "ns", "a", T0, T0 + 90, &p), 0);
        ck_assert_uint_eq(p.samples, 1);
        /* A third pod is over the limit. */
        {
                gc_buf b;

                gc_buf_init(&b, 4096);
                for (int i = 0; i < 3; i++)
                        gc_buf_printf(
                            &b, "DCGM_FI_DEV_FB_USED{UUID=\"%s\",namespace=\"ns\",pod=\"%s\"} 1\n",
                            three[i].uuid, three[i].pod);
                ck_assert_int_eq(gc_gpuuse_ingest_text(s, b.data, b.len, T0 + 90, 0, &st), 0);
                ck_assert_uint_eq(st.pods_over_limit, 1);
                ck_assert_uint_eq(gc_gpuuse_pod_count(s), 2);
                gc_buf_free(&b);
        }
        gc_gpuuse_free(s);

        /* A batch over its limit applies what fit and says so. */
        gc_gpuuse_opts_default(&o);
        o.max_batch_readings = 2;
        s = gc_gpuuse_new(&o);
        {
                static const char b3[] =
                    "DCGM_FI_DEV_FB_USED{UUID=\"A\"} 1 1000\nDCGM_FI_DEV_FB_USED{UUID=\"A\"} 1 "
                    "2000\nDCGM_FI_DEV_FB_USED{UUID=\"A\"} 1 3000\n";

                ck_assert_int_eq(gc_gpuuse_ingest_text(s, b3, sizeof(b3) - 1, T0, 0, &st), -ENOSPC);
                ck_assert_uint_eq(st.readings_over_limit, 1);
                ck_assert_uint_eq(st.readings, 2);
        }
        gc_gpuuse_free(s);

        /* Bad options are refused. */
        gc_gpuuse_opts_default(&o);
        o.interval_s = 0;
        ck_assert_ptr_null(gc_gpuuse_new(&o));
        ck_assert_ptr_null(gc_gpuuse_free(NULL));
}
END_TEST

/* Pods come and go for days: expiry keeps the store's memory flat. */
START_TEST(test_churn_bounded)
{
        gc_gpuuse_opts o;
        gc_gpuuse *s;
        size_t after_first_day = 0;

        gc_gpuuse_opts_default(&o);
        o.retention_s = 3600;
        s = gc_gpuuse_new(&o);
        for (int k = 0; k < 2000; k++) {
                char pod[32], uuid[32];
                gpu g[4];
                int64_t t = T0 + (int64_t)k * 120;

                for (int i = 0; i < 4; i++) {
                        snprintf(pod, sizeof(pod), "job-%d", k / 10);
                        snprintf(uuid, sizeof(uuid), "GPU-%d-%d", k / 10 % 100, i);
                        g[i] = (gpu){strdup(uuid), "batch", strdup(pod), 0.5, 100, 100};
                }
                scrape(s, t, g, 4);
                for (int i = 0; i < 4; i++) {
                        free((char *)g[i].uuid);
                        free((char *)g[i].pod);
                }
                gc_gpuuse_expire(s, t);
                if (k == 720)
                        after_first_day = gc_gpuuse_bytes(s);
                /* pods of 20 minutes, kept an hour: about 4 alive at a time */
                ck_assert_uint_le(gc_gpuuse_pod_count(s), 5);
        }
        ck_assert_uint_gt(after_first_day, 0);
        ck_assert_uint_le(gc_gpuuse_bytes(s), after_first_day + 4096);
        gc_gpuuse_free(s);
}
END_TEST

/* Expiry removes index entries out of the middle of probe runs: every survivor stays findable. */
START_TEST(test_expire_index)
{
        gc_gpuuse_opts o;
        gc_gpuuse *s;
        gc_buf b;
        gc_gpuuse_pod p;
        gc_gpuuse_device d;

        gc_gpuuse_opts_default(&o);
        o.retention_s = 1000;
        s = gc_gpuuse_new(&o);
        gc_buf_init(&b, 1 << 20);
        /* 3000 pods, pod i last seen at T0 + (i * 7919) % 3000 */
        for (int i = 0; i < 3000; i++)
                gc_buf_printf(&b,
                              "DCGM_FI_DEV_FB_USED{UUID=\"U%d\",namespace=\"n\",pod=\"p%d\"} 1 "
                              "%lld\n",
                              i, i, (long long)(T0 + (i * 7919) % 3000) * 1000);
        ck_assert_int_eq(gc_gpuuse_ingest_text(s, b.data, b.len, T0, 30, NULL), 0);
        ck_assert_uint_eq(gc_gpuuse_pod_count(s), 3000);
        for (int64_t cut = 0; cut <= 3000; cut += 500) {
                gc_gpuuse_expire(s, T0 + cut + 1000);
                for (int i = 0; i < 3000; i++) {
                        char pod[16], uuid[16];
                        int alive = (i * 7919) % 3000 >= cut;

                        snprintf(pod, sizeof(pod), "p%d", i);
                        snprintf(uuid, sizeof(uuid), "U%d", i);
                        ck_assert_int_eq(gc_gpuuse_pod_get(s, "n", pod, T0, T0 + 1, &p),
                                         alive ? 0 : -ENOENT);
                        ck_assert_int_eq(gc_gpuuse_device_get(s, uuid, NULL, &d),
                                         alive ? 0 : -ENOENT);
                }
        }
        ck_assert_uint_eq(gc_gpuuse_pod_count(s), 0);
        ck_assert_uint_eq(gc_gpuuse_device_count(s), 0);
        gc_buf_free(&b);
        gc_gpuuse_free(s);
}
END_TEST

/* ---- Prometheus API answers ---------------------------------------------------------------------
 */

/* ---- shares: per-pod readings of shared GPUs --------------------------------------------------
 */

typedef struct sink {
        size_t n;
        struct {
                char uuid[64];
                int64_t from, to;
                size_t n;
                char who[4][96];
                double use[4], mem[4];
        } s[16];
} sink;

static int sink_fn(void *ud, const gc_gpuuse_share *sh)
{
        sink *k = ud;

        ck_assert_uint_lt(k->n, 16);
        snprintf(k->s[k->n].uuid, sizeof(k->s[0].uuid), "%s", sh->uuid);
        k->s[k->n].from = sh->from;
        k->s[k->n].to = sh->to;
        k->s[k->n].n = sh->n;
        for (size_t i = 0; i < sh->n && i < 4; i++) {
                snprintf(k->s[k->n].who[i], sizeof(k->s[0].who[0]), "%s/%s %s", sh->h[i].ns,
                         sh->h[i].pod, sh->h[i].pod_uid ? sh->h[i].pod_uid : "-");
                k->s[k->n].use[i] = sh->h[i].use;
                k->s[k->n].mem[i] = sh->h[i].mem_mib;
        }
        k->n++;
        return 0;
}

static int who_index(const sink *k, size_t i, const char *prefix)
{
        for (size_t j = 0; j < k->s[i].n; j++)
                if (strncmp(k->s[i].who[j], prefix, strlen(prefix)) == 0)
                        return (int)j;
        return -1;
}

/*
 * dcgm-exporter with KUBERNETES_VIRTUAL_GPUS (tests/fixtures/SOURCES.md): one T4 shared by two
 * pods, read twice 15 s apart. Each sample hands the sink the pods with their own SM use (60%
 * and 20%, then 30% and 15%) and pod_uid; the device's own series and the engine figure copied
 * to every sharer (0.75) are nobody's use. The first sample covers the interval before it, the
 * second the 15 s since the first. The pods' activity is their own.
 */
START_TEST(test_shares_dcgm_virtual_gpus)
{
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        gc_gpuuse_stats st;
        gc_gpuuse_pod p;
        sink k = {0};
        int a;
        size_t n;
        char *body = read_fixture("t4-virtual-gpus.prom", &n);

        gc_gpuuse_set_share_sink(s, sink_fn, &k);
        memset(&st, 0, sizeof(st));
        ck_assert_int_eq(gc_gpuuse_ingest_text(s, body, n, T0 + 60, 15, &st), 0);
        ck_assert_uint_eq(k.n, 2);
        ck_assert_uint_eq(st.shares, 2);
        ck_assert_str_eq(k.s[0].uuid, "GPU-5f0b9c1e-7a31-4c2b-9d0e-1a2b3c4d5e6f");
        ck_assert_int_eq(k.s[0].from, T0 - 15);
        ck_assert_int_eq(k.s[0].to, T0);
        ck_assert_int_eq(k.s[1].from, T0);
        ck_assert_int_eq(k.s[1].to, T0 + 15);
        ck_assert_uint_eq(k.s[0].n, 2);
        a = who_index(&k, 0, "recsys/ranker-7d9f8-abcde 0b6e3c1a-1111");
        ck_assert_int_ge(a, 0);
        ck_assert_double_eq_tol(k.s[0].use[a], 0.60, EPS);
        ck_assert_double_eq_tol(k.s[0].mem[a], 3000, EPS);
        ck_assert_double_eq_tol(k.s[0].use[1 - a], 0.20, EPS);
        a = who_index(&k, 1, "research/jupyter-ana-x2k9p 0b6e3c1a-2222");
        ck_assert_double_eq_tol(k.s[1].use[a], 0.15, EPS);
        ck_assert(isnan(k.s[1].mem[a])); /* no FB sample at the second time */
        /* The pods' own activity, not the device's 0.75 copied to them. */
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "recsys", "ranker-7d9f8-abcde", T0 - 15, T0 + 15, &p),
                         0);
        ck_assert_double_eq_tol(p.activity_mean, 0.45, EPS);
        ck_assert_int_eq(p.activity_src, GC_GPUUSE_SRC_GPU_UTIL);
        /* Read again: out of order for every pod, no share twice. */
        memset(&st, 0, sizeof(st));
        ck_assert_int_eq(gc_gpuuse_ingest_text(s, body, n, T0 + 60, 15, &st), 0);
        ck_assert_uint_eq(k.n, 2);
        ck_assert_uint_gt(st.out_of_order, 0);
        free(body);
        gc_gpuuse_free(s);
}
END_TEST

/* HAMi's vGPU monitor, current names and legacy ones: the same shares. A pod's two containers
 * on one device add up (35% + 5%); bytes are MiB; percent is a ratio. */
START_TEST(test_shares_hami)
{
        static const char *const files[] = {"hami-vgpu-monitor.prom",
                                            "hami-vgpu-monitor-legacy.prom"};

        for (size_t f = 0; f < 2; f++) {
                gc_gpuuse *s = gc_gpuuse_new(NULL);
                gc_gpuuse_stats st;
                sink k = {0};
                int a;

                gc_gpuuse_set_share_sink(s, sink_fn, &k);
                memset(&st, 0, sizeof(st));
                ingest_fixture(s, files[f], T0, &st);
                ck_assert_uint_eq(k.n, 1);
                ck_assert_uint_eq(k.s[0].n, 2);
                ck_assert_str_eq(k.s[0].uuid, "GPU-7a1c2e3f-4b5d-6e7f-8091-a2b3c4d5e6f7");
                ck_assert_int_eq(k.s[0].to, T0);
                ck_assert_int_eq(k.s[0].from, T0 - 30); /* the store's default interval */
                a = who_index(&k, 0, "ml/train-small-5c7d9 -");
                ck_assert_msg(a >= 0, "%s", files[f]);
                ck_assert_double_eq_tol(k.s[0].use[a], 0.40, EPS);
                ck_assert_double_eq_tol(k.s[0].mem[a], 2048, EPS);
                ck_assert_double_eq_tol(k.s[0].use[1 - a], 0.10, EPS);
                ck_assert_double_eq_tol(k.s[0].mem[1 - a], 1024, EPS);
                gc_gpuuse_free(s);
        }
}
END_TEST

/*
 * Coverage: a reading covers the interval before it, or the time since the device's last one
 * when that is shorter; after a gap longer than the interval, only the interval. Pods come and
 * go between samples. Plain dcgm-exporter (no pod_uid: the pod label names the one holder)
 * hands over nothing: a whole GPU has nothing to split.
 */
START_TEST(test_shares_coverage)
{
        static const char fmt[] =
            "DCGM_FI_DEV_GPU_UTIL{UUID=\"GPU-1\",namespace=\"n\",pod=\"%s\",pod_uid=\"u-%s\"} %d "
            "%lld\n";
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        sink k = {0};
        char body[4096];
        size_t len = 0;
        gc_gpuuse_stats st;
        const struct {
                const char *pod;
                int util;
                int64_t t;
        } rows[] = {{"a", 50, T0},       {"b", 10, T0},       {"a", 40, T0 + 10},
                    {"a", 40, T0 + 100}, {"c", 70, T0 + 100}, {"c", 70, T0 + 115}};

        gc_gpuuse_set_share_sink(s, sink_fn, &k);
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                len += (size_t)snprintf(body + len, sizeof(body) - len, fmt, rows[i].pod,
                                        rows[i].pod, rows[i].util, (long long)rows[i].t * 1000);
        len += (size_t)snprintf(body + len, sizeof(body) - len,
                                "DCGM_FI_DEV_GPU_UTIL{UUID=\"GPU-2\",namespace=\"n\","
                                "pod=\"whole\"} 90 %lld\n",
                                (long long)T0 * 1000);
        memset(&st, 0, sizeof(st));
        ck_assert_int_eq(gc_gpuuse_ingest_text(s, body, len, T0, 15, &st), 0);
        ck_assert_uint_eq(k.n, 4);
        ck_assert_int_eq(k.s[0].from, T0 - 15);
        ck_assert_uint_eq(k.s[0].n, 2);
        ck_assert_int_eq(k.s[1].from, T0); /* 10 s later: since the last */
        ck_assert_int_eq(k.s[1].to, T0 + 10);
        ck_assert_uint_eq(k.s[1].n, 1);
        ck_assert_int_eq(k.s[2].from, T0 + 100 - 15); /* after a 90 s gap: the interval only */
        ck_assert_uint_eq(k.s[2].n, 2);
        ck_assert_int_eq(k.s[3].from, T0 + 100);
        for (size_t i = 0; i < k.n; i++)
                ck_assert_str_eq(k.s[i].uuid, "GPU-1");
        gc_gpuuse_free(s);
}
END_TEST

/*
 * A reading of a shared device at or before its last share (a new pod's sample carrying an
 * older timestamp) covers time already handed: it hands nothing and is counted out of order,
 * never a span that ends before it begins (found by fuzz_gpuuse).
 */
START_TEST(test_shares_backwards)
{
        static const char fmt[] =
            "DCGM_FI_DEV_GPU_UTIL{UUID=\"GPU-1\",namespace=\"n\",pod=\"%s\",pod_uid=\"u-%s\"} 50 "
            "%lld\n";
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        sink k = {0};
        char body[512];
        int len;
        gc_gpuuse_stats st;

        gc_gpuuse_set_share_sink(s, sink_fn, &k);
        len = snprintf(body, sizeof(body), fmt, "a", "a", (long long)(T0 + 100) * 1000);
        memset(&st, 0, sizeof(st));
        ck_assert_int_eq(gc_gpuuse_ingest_text(s, body, (size_t)len, T0 + 100, 15, &st), 0);
        ck_assert_uint_eq(k.n, 1);
        len = snprintf(body, sizeof(body), fmt, "b", "b", (long long)(T0 + 50) * 1000);
        memset(&st, 0, sizeof(st));
        ck_assert_int_eq(gc_gpuuse_ingest_text(s, body, (size_t)len, T0 + 110, 15, &st), 0);
        ck_assert_uint_eq(k.n, 1);
        ck_assert_uint_eq(st.shares, 0);
        ck_assert_uint_eq(st.out_of_order, 1);
        /* The same time again hands nothing; a later one covers the time since the last. */
        len = snprintf(body, sizeof(body), fmt, "b", "b", (long long)(T0 + 110) * 1000);
        ck_assert_int_eq(gc_gpuuse_ingest_text(s, body, (size_t)len, T0 + 110, 15, &st), 0);
        ck_assert_uint_eq(k.n, 2);
        ck_assert_int_eq(k.s[1].from, T0 + 100);
        ck_assert_int_eq(k.s[1].to, T0 + 110);
        gc_gpuuse_free(s);
}
END_TEST

static const char matrix[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":["
    "{\"metric\":{\"__name__\":\"DCGM_FI_PROF_GR_ENGINE_ACTIVE\",\"UUID\":\"GPU-q\","
    "\"exported_namespace\":\"ml\",\"exported_pod\":\"p1\",\"namespace\":\"gpu-operator\","
    "\"pod\":\"dcgm-x\",\"modelName\":\"NVIDIA A10G\",\"Hostname\":\"n\"},"
    "\"values\":[[1795166100,\"0.5\"],[1795166160,\"NaN\"],[1795166220,\"0.25\"]]},"
    "{\"metric\":{\"__name__\":\"DCGM_FI_DEV_FB_USED\",\"UUID\":\"GPU-q\","
    "\"exported_namespace\":\"ml\",\"exported_pod\":\"p1\"},"
    "\"values\":[[1795166100.5,\"1000\"],[1795166160,\"2000\"],[1795166220,\"+Inf\"]]},"
    "{\"metric\":{\"UUID\":\"GPU-q\"},\"values\":[[1795166100,\"1\"]]},"
    "{\"metric\":{\"__name__\":\"DCGM_FI_DEV_FB_FREE\",\"UUID\":\"GPU-q\","
    "\"exported_namespace\":\"ml\",\"exported_pod\":\"p1\"},"
    "\"values\":[[1795166100,\"21000\"],[1795166160,\"bad\"],[1795166220,\"20000\"]]}"
    "]}}";

START_TEST(test_prom_matrix)
{
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        gc_gpuuse_stats st;
        gc_gpuuse_pod p;
        char err[256];

        ck_assert_int_eq(gc_gpuuse_ingest_prom_json(s, matrix, sizeof(matrix) - 1, 1 << 20, 60, &st,
                                                    err, sizeof(err)),
                         0);
        ck_assert_uint_eq(st.parse_errors, 1); /* "bad" */
        ck_assert_uint_eq(st.missing, 2);      /* NaN and +Inf */
        ck_assert_uint_eq(st.ignored, 1);      /* no __name__ */
        ck_assert_uint_eq(st.readings, 3);
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "ml", "p1", T0, T0 + 180, &p), 0);
        ck_assert_uint_eq(p.samples, 3);
        ck_assert_double_eq_tol(p.activity_mean, 0.375, EPS);
        ck_assert_double_eq_tol(p.mem_used_peak_mib, 2000, EPS);
        ck_assert_double_eq_tol(p.mem_total_mib, 22000, EPS);
        ck_assert_str_eq(p.model, "NVIDIA A10G");
        ck_assert_double_eq_tol(p.coverage, 1.0, EPS); /* step 60: 3 x 60 s of 180 s */
        gc_gpuuse_free(s);
}
END_TEST

START_TEST(test_prom_vector_and_errors)
{
        static const char vector[] =
            "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
            "{\"metric\":{\"__name__\":\"dcgm_fi_prof_gr_engine_active\",\"UUID\":\"GPU-v\","
            "\"namespace\":\"a\",\"pod\":\"b\"},\"value\":[1795166100.123,\"0.75\"]}]}}";
        static const char error[] =
            "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"invalid parameter "
            "\\\"query\\\": 1:5: parse error\"}";
        static const char scalar[] =
            "{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1,\"1\"]}}";
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        gc_gpuuse_stats st;
        gc_gpuuse_pod p;
        char err[256];

        ck_assert_int_eq(gc_gpuuse_ingest_prom_json(s, vector, sizeof(vector) - 1, 1 << 20, 0, &st,
                                                    err, sizeof(err)),
                         0);
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "a", "b", T0, T0 + 30, &p), 0);
        ck_assert_double_eq_tol(p.activity_mean, 0.75, EPS);
        ck_assert_int_eq(p.first_at, T0);

        ck_assert_int_eq(gc_gpuuse_ingest_prom_json(s, error, sizeof(error) - 1, 1 << 20, 0, &st,
                                                    err, sizeof(err)),
                         -EINVAL);
        ck_assert_str_eq(err,
                         "Prometheus: bad_data: invalid parameter \"query\": 1:5: parse error");
        ck_assert_int_eq(gc_gpuuse_ingest_prom_json(s, scalar, sizeof(scalar) - 1, 1 << 20, 0, &st,
                                                    err, sizeof(err)),
                         -EINVAL);
        ck_assert_int_eq(gc_gpuuse_ingest_prom_json(s, "{", 1, 1 << 20, 0, &st, err, sizeof(err)),
                         -EINVAL);
        ck_assert_str_eq(err, "answer is not JSON");
        ck_assert_int_eq(gc_gpuuse_ingest_prom_json(s, vector, sizeof(vector) - 1, 100, 0, &st, err,
                                                    sizeof(err)),
                         -E2BIG);
        gc_gpuuse_free(s);
}
END_TEST

/* ---- over HTTP: a one-shot server on 127.0.0.1 -------------------------------------------------
 */

typedef struct server {
        int fd, port;
        pthread_t th;
        const char *response; /* whole HTTP response */
        size_t response_len;
        char request[4096];
} server;

static void *serve(void *arg)
{
        server *sv = arg;
        int c = accept(sv->fd, NULL, NULL);
        size_t got = 0;

        if (c < 0)
                return NULL;
        while (got < sizeof(sv->request) - 1) {
                ssize_t n = read(c, sv->request + got, sizeof(sv->request) - 1 - got);

                if (n <= 0)
                        break;
                got += (size_t)n;
                sv->request[got] = '\0';
                if (strstr(sv->request, "\r\n\r\n"))
                        break;
        }
        for (size_t off = 0; off < sv->response_len;) {
                ssize_t n = write(c, sv->response + off, sv->response_len - off);

                if (n <= 0)
                        break;
                off += (size_t)n;
        }
        close(c);
        return NULL;
}

static void server_start_with(server *sv, const char *response, size_t len, void *(*fn)(void *))
{
        struct sockaddr_in a;
        socklen_t al = sizeof(a);

        memset(sv, 0, sizeof(*sv));
        sv->response = response;
        sv->response_len = len;
        sv->fd = socket(AF_INET, SOCK_STREAM, 0);
        ck_assert_int_ge(sv->fd, 0);
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ck_assert_int_eq(bind(sv->fd, (struct sockaddr *)&a, sizeof(a)), 0);
        ck_assert_int_eq(listen(sv->fd, 1), 0);
        ck_assert_int_eq(getsockname(sv->fd, (struct sockaddr *)&a, &al), 0);
        sv->port = ntohs(a.sin_port);
        ck_assert_int_eq(pthread_create(&sv->th, NULL, fn, sv), 0);
}

static void server_start(server *sv, const char *response, size_t len)
{
        server_start_with(sv, response, len, serve);
}

static void server_stop(server *sv)
{
        pthread_join(sv->th, NULL);
        close(sv->fd);
}

static char *http_response(const char *status, const char *ctype, const char *body, size_t n,
                           size_t *ret_len)
{
        gc_buf b;

        gc_buf_init(&b, 64 << 20);
        gc_buf_printf(&b,
                      "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                      "Connection: close\r\n\r\n",
                      status, ctype, n);
        gc_buf_append(&b, body, n);
        *ret_len = b.len;
        return gc_buf_steal(&b);
}

START_TEST(test_scrape_http)
{
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        gc_gpuuse_stats st;
        gc_gpuuse_pod p;
        server sv;
        char url[128], err[256];
        size_t n, rl;
        char *body = read_fixture("a100-k8s.prom", &n), *resp;

        resp = http_response("200 OK", "text/plain; version=0.0.4", body, n, &rl);

        /* Over the cap: an error, and nothing of the partial body is applied. */
        server_start(&sv, resp, rl);
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", sv.port);
        ck_assert_int_eq(gc_gpuuse_scrape(s, url, 5, n - 1, NULL, T0, 0, &st, err, sizeof(err)),
                         -E2BIG);
        server_stop(&sv);
        ck_assert_ptr_nonnull(strstr(err, "over the limit"));
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "ml", "train-0", T0, T0 + 30, &p), -ENOENT);

        /* Within the cap, with a bearer token. */
        server_start(&sv, resp, rl);
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", sv.port);
        ck_assert_msg(gc_gpuuse_scrape(s, url, 5, n, "s3cr3t", T0, 0, &st, err, sizeof(err)) == 0,
                      "%s", err);
        server_stop(&sv);
        ck_assert_ptr_nonnull(strstr(sv.request, "GET /metrics HTTP/1.1\r\n"));
        ck_assert_ptr_nonnull(strstr(sv.request, "Authorization: Bearer s3cr3t\r\n"));
        ck_assert_uint_eq(st.readings, 4);
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "ml", "train-0", T0, T0 + 30, &p), 0);
        ck_assert_uint_eq(p.devices, 2);
        free(resp);

        /* A 500 is an error and applies nothing. */
        resp = http_response("500 Internal Server Error", "text/plain", body, n, &rl);
        server_start(&sv, resp, rl);
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", sv.port);
        ck_assert_int_eq(gc_gpuuse_scrape(s, url, 5, n, NULL, T0 + 30, 0, &st, err, sizeof(err)),
                         -EIO);
        server_stop(&sv);
        ck_assert_ptr_nonnull(strstr(err, "HTTP 500"));
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "ml", "train-0", T0, T0 + 30, &p), 0);
        ck_assert_uint_eq(p.samples, 1);
        free(resp);

        /* Nobody listening. */
        ck_assert_int_eq(gc_gpuuse_scrape(s, "http://127.0.0.1:1/metrics", 5, n, NULL, T0, 0, &st,
                                          err, sizeof(err)),
                         -EIO);
        ck_assert(err[0] != '\0');
        free(body);
        gc_gpuuse_free(s);
}
END_TEST

/*
 * An exporter answering OpenMetrics (seconds, fractions allowed) whatever was asked: its
 * Content-Type decides, so a minute of samples is a minute, not 60 ms. Served under text/plain
 * the same body cannot be read right (seconds taken for milliseconds): refused, nothing applied.
 */
START_TEST(test_scrape_openmetrics)
{
        static const char body[] =
            "# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge\n"
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"G\",namespace=\"a\",pod=\"b\"} 0.5 1795166100\n"
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"G\",namespace=\"a\",pod=\"b\"} 0.7 1795166160.5\n"
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"G\",namespace=\"a\",pod=\"b\"} 0.6 1795166220\n"
            "# EOF\n";
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        gc_gpuuse_stats st;
        gc_gpuuse_pod p;
        server sv;
        char url[128], err[256];
        size_t rl;
        char *resp = http_response("200 OK",
                                   "application/openmetrics-text; version=1.0.0; "
                                   "charset=utf-8",
                                   body, sizeof(body) - 1, &rl);

        server_start(&sv, resp, rl);
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", sv.port);
        ck_assert_msg(
            gc_gpuuse_scrape(s, url, 5, 1 << 20, NULL, T0 + 600, 60, &st, err, sizeof(err)) == 0,
            "%s", err);
        server_stop(&sv);
        free(resp);
        ck_assert_uint_eq(st.parse_errors, 0);
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "a", "b", T0, T0 + 180, &p), 0);
        ck_assert_uint_eq(p.samples, 3);
        ck_assert_int_eq(p.first_at, T0);
        ck_assert_int_eq(p.last_at, T0 + 120);
        ck_assert_double_eq_tol(p.coverage, 1.0, EPS);
        gc_gpuuse_free(s);

        s = gc_gpuuse_new(NULL);
        resp = http_response("200 OK", "text/plain; version=0.0.4", body, sizeof(body) - 1, &rl);
        server_start(&sv, resp, rl);
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", sv.port);
        ck_assert_int_eq(
            gc_gpuuse_scrape(s, url, 5, 1 << 20, NULL, T0 + 600, 60, &st, err, sizeof(err)),
            -EPROTO);
        server_stop(&sv);
        free(resp);
        ck_assert_msg(strstr(err, "# EOF") && strstr(err, "text/plain"), "%s", err);
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "a", "b", 0, T0 + 180, &p), -ENOENT);
        gc_gpuuse_free(s);
}
END_TEST

/* A server that takes the request and never answers: the timeout ends the scrape. */
static void *serve_silent(void *arg)
{
        server *sv = arg;
        int c = accept(sv->fd, NULL, NULL);
        char buf[4096];

        if (c < 0)
                return NULL;
        while (read(c, buf, sizeof(buf)) > 0)
                ;
        close(c);
        return NULL;
}

START_TEST(test_scrape_timeout)
{
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        gc_gpuuse_stats st;
        server sv;
        char url[128], err[256];

        server_start_with(&sv, "", 0, serve_silent);
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", sv.port);
        ck_assert_int_eq(gc_gpuuse_scrape(s, url, 1, 1 << 20, NULL, T0, 0, &st, err, sizeof(err)),
                         -ETIMEDOUT);
        server_stop(&sv);
        ck_assert(err[0] != '\0');
        gc_gpuuse_free(s);
}
END_TEST

START_TEST(test_query_range_http)
{
        static const char error[] = "{\"status\":\"error\",\"errorType\":\"bad_data\","
                                    "\"error\":\"exceeded maximum resolution of 11,000 points\"}";
        gc_gpuuse *s = gc_gpuuse_new(NULL);
        gc_gpuuse_stats st;
        gc_gpuuse_pod p;
        server sv;
        char url[128], err[256];
        size_t rl;
        char *resp = http_response("200 OK", "application/json", matrix, sizeof(matrix) - 1, &rl);

        server_start(&sv, resp, rl);
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/prom/", sv.port);
        ck_assert_int_eq(gc_gpuuse_prom_query_range(s, url, NULL, T0, T0 + 180, 60, 5, 1 << 20,
                                                    NULL, &st, err, sizeof(err)),
                         0);
        server_stop(&sv);
        ck_assert_ptr_nonnull(strstr(sv.request, "GET /prom/api/v1/query_range?query=%7B__name__"));
        ck_assert_ptr_nonnull(strstr(sv.request, "&start=1795166100&end=1795166280&step=60 "));
        ck_assert_int_eq(gc_gpuuse_pod_get(s, "ml", "p1", T0, T0 + 180, &p), 0);
        ck_assert_uint_eq(p.samples, 3);
        free(resp);

        resp = http_response("400 Bad Request", "application/json", error, sizeof(error) - 1, &rl);
        server_start(&sv, resp, rl);
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/prom/", sv.port);
        ck_assert_int_eq(
            gc_gpuuse_prom_query(s, url, "up", T0, 5, 1 << 20, NULL, &st, err, sizeof(err)),
            -EINVAL);
        server_stop(&sv);
        ck_assert_ptr_nonnull(
            strstr(sv.request, "GET /prom/api/v1/query?query=up&time=1795166100 "));
        ck_assert_str_eq(err, "Prometheus: bad_data: exceeded maximum resolution of 11,000 points");
        free(resp);

        resp = http_response("200 OK", "application/json", matrix, sizeof(matrix) - 1, &rl);
        server_start(&sv, resp, rl);
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/prom/", sv.port);
        ck_assert_int_eq(gc_gpuuse_prom_query_range(s, url, NULL, T0, T0 + 180, 60, 5, 100, NULL,
                                                    &st, err, sizeof(err)),
                         -E2BIG);
        server_stop(&sv);
        free(resp);
        gc_gpuuse_free(s);
}
END_TEST

/* ---- targets: dcgm-exporter discovery, token files, the Prometheus plan -------------------- */

static const gc_gpuuse_targets_opts pods_opts = {.ns = "gpu-operator",
                                                 .label_selector =
                                                     "app=nvidia-dcgm-exporter,x in (a b)",
                                                 .port = 9400,
                                                 .path = "/metrics",
                                                 .scheme = "http"};

START_TEST(test_targets_path)
{
        gc_gpuuse_targets_opts svc = pods_opts;
        gc_buf b;

        gc_buf_init(&b, 4096);
        ck_assert_int_eq(gc_gpuuse_targets_path(&pods_opts, &b), 0);
        ck_assert_str_eq(b.data, "/api/v1/namespaces/gpu-operator/pods?labelSelector="
                                 "app%3Dnvidia-dcgm-exporter%2Cx%20in%20%28a%20b%29");
        gc_buf_reset(&b);
        svc.service = "dcgm";
        ck_assert_int_eq(gc_gpuuse_targets_path(&svc, &b), 0);
        ck_assert_str_eq(b.data, "/api/v1/namespaces/gpu-operator/endpoints/dcgm");
        gc_buf_free(&b);
        /* A selector past the limit is an error, not a cut selector. */
        gc_buf_init(&b, 40);
        ck_assert_int_lt(gc_gpuuse_targets_path(&pods_opts, &b), 0);
        gc_buf_free(&b);
}
END_TEST

START_TEST(test_targets_parse)
{
        static const char pods[] =
            "{\"items\":["
            "{\"status\":{\"phase\":\"Running\",\"podIP\":\"10.0.0.7\"}},"
            "{\"status\":{\"phase\":\"Pending\",\"podIP\":\"10.0.0.8\"}},"
            "{\"status\":{\"phase\":\"Running\",\"podIP\":\"fd00::9\"}},"
            "{\"status\":{\"phase\":\"Running\",\"podIP\":\"\"}},"
            "{\"status\":{\"phase\":\"Running\",\"podIP\":7}},"
            "{\"status\":{\"phase\":\"Running\",\"podIP\":"
            "\"0123456789012345678901234567890123456789012345678901234567890123456789\"}},"
            "{\"status\":{\"phase\":\"Running\"}}]}";
        static const char endpoints[] =
            "{\"subsets\":[{\"addresses\":[{\"ip\":\"10.1.0.1\"},{\"ip\":\"10.1.0.2\"}],"
            "\"notReadyAddresses\":[{\"ip\":\"10.1.0.3\"}]},{\"addresses\":[{\"ip\":\"10.1.0.4\"}]}"
            "]}";
        gc_gpuuse_targets_opts svc = pods_opts;
        char err[256] = "", **urls = NULL;
        size_t n = 0;

        ck_assert_int_eq(
            gc_gpuuse_targets_parse(&pods_opts, pods, strlen(pods), &urls, &n, err, sizeof(err)),
            0);
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(urls[0], "http://10.0.0.7:9400/metrics");
        ck_assert_str_eq(urls[1], "http://[fd00::9]:9400/metrics");
        gc_gpuuse_targets_free(urls, n);

        svc.service = "dcgm";
        svc.scheme = "https";
        svc.path = "/m";
        ck_assert_int_eq(gc_gpuuse_targets_parse(&svc, endpoints, strlen(endpoints), &urls, &n, err,
                                                 sizeof(err)),
                         0);
        ck_assert_uint_eq(n, 3);
        ck_assert_str_eq(urls[0], "https://10.1.0.1:9400/m");
        ck_assert_str_eq(urls[2], "https://10.1.0.4:9400/m");
        gc_gpuuse_targets_free(urls, n);

        /* Nothing there: no URLs, no error. Not JSON: an error naming what was read. */
        ck_assert_int_eq(gc_gpuuse_targets_parse(&svc, "{}", 2, &urls, &n, err, sizeof(err)), 0);
        ck_assert_uint_eq(n, 0);
        gc_gpuuse_targets_free(urls, n);
        ck_assert_int_eq(
            gc_gpuuse_targets_parse(&svc, "{\"subsets\":[", 12, &urls, &n, err, sizeof(err)),
            -EINVAL);
        ck_assert_str_eq(err, "reading the Endpoints in gpu-operator: not JSON");
        ck_assert_int_eq(gc_gpuuse_targets_parse(&pods_opts, NULL, 0, &urls, &n, err, sizeof(err)),
                         -EINVAL);
        ck_assert_str_eq(err, "listing pods in gpu-operator: not JSON");
}
END_TEST

START_TEST(test_targets_bounded)
{
        gc_buf body;
        char err[256], **urls = NULL;
        size_t n = 0;

        gc_buf_init(&body, 1 << 20);
        ck_assert_int_eq(gc_buf_puts(&body, "{\"subsets\":[{\"addresses\":["), 0);
        for (int i = 0; i < GC_GPUUSE_MAX_TARGETS + 5; i++)
                ck_assert_int_eq(gc_buf_printf(&body, "%s{\"ip\":\"10.%d.%d.%d\"}", i ? "," : "",
                                               i >> 16, (i >> 8) & 255, i & 255),
                                 0);
        ck_assert_int_eq(gc_buf_puts(&body, "]}]}"), 0);
        {
                gc_gpuuse_targets_opts svc = pods_opts;

                svc.service = "dcgm";
                ck_assert_int_eq(
                    gc_gpuuse_targets_parse(&svc, body.data, body.len, &urls, &n, err, sizeof(err)),
                    0);
        }
        ck_assert_uint_eq(n, GC_GPUUSE_MAX_TARGETS);
        gc_gpuuse_targets_free(urls, n);
        gc_buf_free(&body);
}
END_TEST

START_TEST(test_read_token)
{
        char path[] = "/tmp/gc-token-XXXXXX", err[256] = "";
        gc_buf t;
        int fd = mkstemp(path);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "abc.def \r\n\n", 11), 11);
        close(fd);
        memset(&t, 0, sizeof(t));
        ck_assert_int_eq(gc_gpuuse_read_token(path, &t, err, sizeof(err)), 0);
        ck_assert_str_eq(t.data, "abc.def");
        gc_buf_free(&t);
        unlink(path);
        ck_assert_int_eq(gc_gpuuse_read_token(path, &t, err, sizeof(err)), -ENOENT);
        ck_assert_ptr_nonnull(strstr(err, "gc-token-"));
        ck_assert_ptr_nonnull(strstr(err, "No such file"));
}
END_TEST

START_TEST(test_prom_plan)
{
        gc_gpuuse_prom_plan p;
        int64_t s = 0, e = 0, now = T0;

        /* Two days and a half of history: three queries, oldest first, then the history is in. */
        memset(&p, 0, sizeof(p));
        p.lookback_s = 2 * 86400 + 43200;
        p.step_s = 60;
        ck_assert_int_eq(gc_gpuuse_prom_plan_next(&p, now, &s, &e), GC_GPUUSE_PROM_DUE);
        ck_assert_int_eq(s, now - p.lookback_s);
        ck_assert_int_eq(e, s + 86400);
        gc_gpuuse_prom_plan_done(&p, e, 1);
        ck_assert_int_eq(gc_gpuuse_prom_plan_next(&p, now, &s, &e), GC_GPUUSE_PROM_DUE);
        ck_assert_int_eq(e, now - 43200);
        /* A failure: the next round starts the pass over, from its own now. */
        gc_gpuuse_prom_plan_done(&p, e, 0);
        now += 10;
        ck_assert_int_eq(gc_gpuuse_prom_plan_next(&p, now, &s, &e), GC_GPUUSE_PROM_DUE);
        ck_assert_int_eq(s, now - p.lookback_s);
        for (int i = 0; i < 3; i++) {
                if (i)
                        ck_assert_int_eq(gc_gpuuse_prom_plan_next(&p, now, &s, &e),
                                         GC_GPUUSE_PROM_DUE);
                gc_gpuuse_prom_plan_done(&p, e, 1);
        }
        ck_assert_int_eq(e, now);
        ck_assert_int_eq(gc_gpuuse_prom_plan_next(&p, now, &s, &e), GC_GPUUSE_PROM_HISTORY_DONE);
        ck_assert_int_eq(p.history_done, 1);
        ck_assert_int_eq(p.until, now);
        /* Then from the last reading on, once a step has passed. */
        ck_assert_int_eq(gc_gpuuse_prom_plan_next(&p, now + 30, &s, &e), GC_GPUUSE_PROM_NONE);
        ck_assert_int_eq(gc_gpuuse_prom_plan_next(&p, now + 300, &s, &e), GC_GPUUSE_PROM_DUE);
        ck_assert_int_eq(s, now + 60);
        ck_assert_int_eq(e, now + 300);
        gc_gpuuse_prom_plan_done(&p, e, 0);
        ck_assert_int_eq(p.until, now);
        ck_assert_int_eq(gc_gpuuse_prom_plan_next(&p, now + 360, &s, &e), GC_GPUUSE_PROM_DUE);
        ck_assert_int_eq(s, now + 60);
        gc_gpuuse_prom_plan_done(&p, e, 1);
        ck_assert_int_eq(p.until, now + 360);

        /* No lookback: the readings start now, not at the epoch (a query from 1970 at a one-minute
         * step is more points than Prometheus answers, so it never would). */
        memset(&p, 0, sizeof(p));
        p.step_s = 60;
        ck_assert_int_eq(gc_gpuuse_prom_plan_next(&p, T0, &s, &e), GC_GPUUSE_PROM_HISTORY_DONE);
        ck_assert_int_eq(p.until, T0);
        ck_assert_int_eq(gc_gpuuse_prom_plan_next(&p, T0 + 120, &s, &e), GC_GPUUSE_PROM_DUE);
        ck_assert_int_eq(s, T0 + 60);
        p.step_s = 0;
        ck_assert_int_eq(gc_gpuuse_prom_plan_next(&p, T0, &s, &e), -EINVAL);
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("gpuuse");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_a100_scrape);
        tcase_add_test(tc, test_label_schemes);
        tcase_add_test(tc, test_mig_no_util_fallback);
        tcase_add_test(tc, test_openmetrics_seconds);
        tcase_add_test(tc, test_mean_p95_peak);
        tcase_add_test(tc, test_p95_many);
        tcase_add_test(tc, test_idle_stretch);
        tcase_add_test(tc, test_idle_gap_and_open);
        tcase_add_test(tc, test_eight_gpus_two_active);
        tcase_add_test(tc, test_order_and_limits);
        tcase_add_test(tc, test_churn_bounded);
        tcase_add_test(tc, test_expire_index);
        tcase_add_test(tc, test_prom_matrix);
        tcase_add_test(tc, test_prom_vector_and_errors);
        tcase_add_test(tc, test_scrape_http);
        tcase_add_test(tc, test_scrape_openmetrics);
        tcase_add_test(tc, test_query_range_http);
        tcase_add_test(tc, test_scrape_timeout);
        tcase_add_test(tc, test_targets_path);
        tcase_add_test(tc, test_targets_parse);
        tcase_add_test(tc, test_targets_bounded);
        tcase_add_test(tc, test_read_token);
        tcase_add_test(tc, test_prom_plan);
        tcase_add_test(tc, test_shares_dcgm_virtual_gpus);
        tcase_add_test(tc, test_shares_hami);
        tcase_add_test(tc, test_shares_coverage);
        tcase_add_test(tc, test_shares_backwards);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
