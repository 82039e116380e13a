/* test_dump: the example cluster loaded from its dumps, and errors that name the input. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dump/dump.h"

static gc_buf read_example(const char *name)
{
        char path[512];
        gc_buf b;

        snprintf(path, sizeof(path), "%s/examples/%s", GC_SOURCE_DIR, name);
        ck_assert_int_eq(gc_read_file(path, (size_t)64 << 20, &b), 0);
        return b;
}

static gc_dump_input input(const char *name, const gc_buf *b)
{
        gc_dump_input in = {name, b->data, b->len};

        return in;
}

START_TEST(examples_load_and_query)
{
        gc_buf pb = read_example("pods.json"), nb = read_example("nodes.json");
        gc_buf sb = read_example("namespaces.json"), cb = read_example("config.json");
        gc_buf db = read_example("demo.json");
        gc_dump_input p = input("pods.json", &pb), n = input("nodes.json", &nb);
        gc_dump_input s = input("namespaces.json", &sb), c = input("config.json", &cb);
        gc_cost_summary sum;
        gc_query q;
        gc_dump d;
        char err[256];
        int64_t now, start, end;

        ck_assert_int_eq(
            gc_dump_demo_settings(db.data, db.len, &now, &start, &end, err, sizeof(err)), 0);
        ck_assert_int_eq(end - start, 7 * 86400);
        ck_assert_int_gt(now, end - 1);
        ck_assert_int_eq(gc_dump_start(&d, &c, NULL, err, sizeof(err)), 0);
        ck_assert_int_eq(gc_dump_load(&d, &p, &n, &s, err, sizeof(err)), 0);
        ck_assert_uint_gt(d.pods.n, 10);
        ck_assert_uint_gt(d.nodes.n, 3);
        ck_assert_uint_gt(d.nss.n, 3);
        memset(&q, 0, sizeof(q));
        q.start = start;
        q.end = end;
        q.now = now;
        ck_assert_int_eq(gc_ledger_query(d.ledger, &q, &sum), 0);
        ck_assert(sum.total.cost > 0);
        ck_assert(sum.capacity.gpu_seconds >= sum.total.gpu_seconds);
        gc_cost_summary_free(&sum);
        gc_dump_release(&d);
        gc_dump_release(&d); /* twice is harmless */
        gc_buf_free(&pb);
        gc_buf_free(&nb);
        gc_buf_free(&sb);
        gc_buf_free(&cb);
        gc_buf_free(&db);
}
END_TEST

/* label:<key>: the pod's label, else its namespace's, else __unlabelled__; keys from the
 * configuration first, then those asked for. */
START_TEST(label_dimensions)
{
        static const char cfg[] = "{\"labels\":{\"dimensions\":[\"exp\"]}}";
        static const char nodes[] =
            "{\"kind\":\"NodeList\",\"items\":[{\"metadata\":{\"name\":\"n1\",\"uid\":\"u1\","
            "\"creationTimestamp\":\"2026-01-01T00:00:00Z\",\"labels\":{\"nvidia.com/gpu.product\":"
            "\"NVIDIA-H100-80GB-HBM3\"}},\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"8\"},"
            "\"capacity\":{\"nvidia.com/gpu\":\"8\"}}}]}";
        static const char nss[] =
            "{\"kind\":\"NamespaceList\",\"items\":[{\"metadata\":{\"name\":\"a\",\"labels\":"
            "{\"cost-center\":\"cc-ns\"}}},{\"metadata\":{\"name\":\"b\"}}]}";
#define POD(NAME, NS, LABELS)                                                                      \
        "{\"metadata\":{\"name\":\"" NAME "\",\"namespace\":\"" NS "\",\"uid\":\"" NAME "\","      \
        "\"labels\":{" LABELS "}},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\","  \
        "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]},\"status\":{\"phase\":"          \
        "\"Running\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\","              \
        "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}"
        static const char pods[] = "{\"kind\":\"PodList\",\"items\":[" POD(
            "p1", "a",
            "\"cost-center\":\"cc-pod\",\"exp\":\"e1\"") "," POD("p2", "a",
                                                                 "\"exp\":\"\"") "," POD("p3", "b",
                                                                                         "") "]}";
#undef POD
        static const char *const want[] = {"cost-center"};
        gc_dump_input c = {"c.json", cfg, sizeof(cfg) - 1};
        gc_dump_input n = {"n.json", nodes, sizeof(nodes) - 1};
        gc_dump_input s = {"ns.json", nss, sizeof(nss) - 1};
        gc_dump_input p = {"p.json", pods, sizeof(pods) - 1};
        gc_label_keys lk;
        gc_cost_summary sum;
        gc_usage u;
        gc_query q;
        gc_dump d;
        char err[256];

        ck_assert_int_eq(gc_dump_start_labels(&d, &c, NULL, want, 1, err, sizeof(err)), 0);
        ck_assert_msg(gc_dump_load(&d, &p, &n, &s, err, sizeof(err)) == 0, "%s", err);
        gc_ledger_label_keys(d.ledger, &lk);
        ck_assert_uint_eq(lk.n, 2);
        ck_assert_str_eq(lk.key[0], "exp");
        ck_assert_str_eq(lk.key[1], "cost-center");
        ck_assert_int_eq(gc_ledger_get_usage(d.ledger, "p1", &u), 0);
        ck_assert_str_eq(u.labels[0], "e1");
        ck_assert_str_eq(u.labels[1], "cc-pod");
        ck_assert_int_eq(gc_ledger_get_usage(d.ledger, "p2", &u), 0);
        ck_assert_str_eq(u.labels[0], GC_UNLABELLED); /* an empty value is none */
        ck_assert_str_eq(u.labels[1], "cc-ns");       /* the namespace's */
        ck_assert_int_eq(gc_ledger_get_usage(d.ledger, "p3", &u), 0);
        ck_assert_str_eq(u.labels[1], GC_UNLABELLED);
        memset(&q, 0, sizeof(q));
        q.start = 1767225600;
        q.end = q.start + 3600;
        ck_assert_int_eq(gc_dims_parse("label:cost-center", &lk, q.by, &q.n_by, err, sizeof(err)),
                         0);
        ck_assert_int_eq(gc_ledger_query(d.ledger, &q, &sum), 0);
        ck_assert_uint_eq(sum.n_rows, 3);
        ck_assert(sum.total.gpu_seconds == 3 * 3600.0);
        gc_cost_summary_free(&sum);
        gc_dump_release(&d);
        /* Five keys in all are too many, and the error says so. */
        {
                static const char *const more[] = {"a", "b", "c", "d"};

                ck_assert_int_eq(gc_dump_start_labels(&d, &c, NULL, more, 4, err, sizeof(err)),
                                 -E2BIG);
                ck_assert_ptr_nonnull(strstr(err, "label:d"));
                gc_dump_release(&d);
        }
}
END_TEST

START_TEST(errors_name_the_input)
{
        static const char bad_cfg[] = "{\"clusterr\":\"x\"}";
        static const char nodes[] = "{\"kind\":\"NodeList\",\"items\":[]}";
        static const char pods[] = "{\"kind\":\"PodList\",\"items\":";
        gc_dump_input c = {"my-config.json", bad_cfg, sizeof(bad_cfg) - 1};
        gc_dump_input n = {"n.json", nodes, sizeof(nodes) - 1};
        gc_dump_input p = {"broken-pods.json", pods, sizeof(pods) - 1};
        gc_dump d;
        char err[256];
        int64_t a, b, e;

        ck_assert_int_eq(gc_dump_start(&d, &c, NULL, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "my-config.json: "));
        ck_assert_ptr_nonnull(strstr(err, "clusterr"));
        gc_dump_release(&d);
        ck_assert_int_eq(gc_dump_start(&d, NULL, NULL, err, sizeof(err)), 0);
        ck_assert_int_lt(gc_dump_load(&d, &p, &n, NULL, err, sizeof(err)), 0);
        ck_assert_ptr_nonnull(strstr(err, "broken-pods.json: "));
        gc_dump_release(&d);
        ck_assert_int_eq(gc_dump_demo_settings("{\"now\":\"x\"}", 11, &a, &b, &e, err, sizeof(err)),
                         -EINVAL);
        ck_assert_int_eq(gc_dump_demo_settings("{\"now\":\"2026-11-23T06:00:00Z\",\"window\":"
                                               "\"2026-11-23T00:00:00Z,2026-11-16T00:00:00Z\"}",
                                               83, &a, &b, &e, err, sizeof(err)),
                         -EINVAL);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("dump");
        TCase *tc = tcase_create("dump");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, examples_load_and_query);
        tcase_add_test(tc, errors_name_the_input);
        tcase_add_test(tc, label_dimensions);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
