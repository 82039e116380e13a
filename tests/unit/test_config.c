/* test_config: defaults, a full configuration, and errors that name the field. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

START_TEST(test_defaults)
{
        gc_config *c = gc_config_default();

        ck_assert_ptr_nonnull(c);
        ck_assert_str_eq(c->cluster, "default");
        ck_assert_uint_eq(c->n_team_keys, 3);
        ck_assert_str_eq(c->team_keys[0], "team");
        ck_assert_str_eq(c->project_keys[3], "cost-center");
        ck_assert_int_eq(c->catalog_builtin, 1);
        ck_assert_ptr_nonnull(c->catalog);
        ck_assert_uint_eq(c->top_n, 10);
        ck_assert_ptr_nonnull(gc_res_table_match(c->res, "nvidia.com/gpu"));
        ck_assert_ptr_null(gc_res_table_match(c->res, "amd.com/gpu"));
        gc_config_free(c);
}
END_TEST

static const char full[] =
    "{\"cluster\":\"prod-eu\","
    "\"attribution\":{\"team_label_keys\":[\"squad\"],\"project_label_keys\":[\"app\"],"
    "\"namespace_teams\":{\"sandbox\":\"research\"},\"namespace_projects\":{\"sandbox\":\"x\"}},"
    "\"resources\":[{\"name\":\"amd.com/gpu\",\"kind\":\"fixed\",\"gpus_per_unit\":1},"
    "{\"name\":\"nvidia.com/gpucores\",\"gpus_per_unit\":0.01}],"
    "\"node_rules\":[{\"match\":{\"node-pool\":\"dgx\"},\"capacity_type\":\"on-prem\","
    "\"usd_per_gpu_hour\":3.56},{\"match\":{\"gpu\":\"*\"},\"region\":\"onprem-1\"}],"
    "\"instance_types\":{\"p5.48xlarge\":\"NVIDIA-H100-80GB-HBM3\"},"
    "\"default_capacity_type\":\"reserved\","
    "\"prices\":{\"currency\":\"EUR\",\"prices\":[{\"model\":\"*\",\"capacity_type\":\"*\","
    "\"usd_per_gpu_hour\":1.5}]},"
    "\"tco\":{\"node_price\":425000,\"gpus_per_node\":8,\"years\":3,\"utilization\":0.8,"
    "\"cluster_gpus\":64,\"ftes\":1.5,\"fte_cost\":250000,\"kw_per_gpu\":0.56,\"pue\":1.3,"
    "\"usd_per_kwh\":0.1,\"network_per_gpu_hour\":0.1},"
    "\"report\":{\"top_n\":25,\"utc_offset\":\"+05:30\",\"daily_retention_days\":7,"
    "\"weekly_retention_weeks\":4,\"team_namespaces\":{\"research\":\"ml\"}}}";

START_TEST(test_full)
{
        char err[256] = "";
        gc_config *c = gc_config_parse(full, strlen(full), err, sizeof(err));
        const gc_res_rule *rule;

        ck_assert_msg(c != NULL, "parse failed: %s", err);
        ck_assert_str_eq(c->cluster, "prod-eu");
        ck_assert_uint_eq(c->n_team_keys, 1);
        ck_assert_str_eq(c->team_keys[0], "squad");
        ck_assert_uint_eq(c->n_ns_teams, 1);
        ck_assert_str_eq(c->ns_teams[0].key, "sandbox");
        ck_assert_str_eq(c->ns_teams[0].value, "research");
        rule = gc_res_table_match(c->res, "amd.com/gpu");
        ck_assert_ptr_nonnull(rule);
        ck_assert_int_eq(rule->kind, GC_RES_FIXED);
        ck_assert_double_eq_tol(rule->gpus_per_unit, 1.0, 1e-12);
        rule = gc_res_table_match(c->res, "nvidia.com/gpucores");
        ck_assert_ptr_nonnull(rule);
        ck_assert_double_eq_tol(rule->gpus_per_unit, 0.01, 1e-12);
        ck_assert_uint_eq(c->rules.n, 2);
        ck_assert_str_eq(c->rules.rules[0].capacity_type, "on-prem");
        ck_assert_double_eq_tol(c->rules.rules[0].usd_per_gpu_hour, 3.56, 1e-12);
        ck_assert_double_lt(c->rules.rules[1].usd_per_gpu_hour, 0);
        ck_assert_str_eq(c->rules.rules[1].region, "onprem-1");
        ck_assert_uint_eq(c->rules.n_instance_models, 1);
        ck_assert_str_eq(c->rules.default_capacity_type, "reserved");
        ck_assert_int_eq(c->catalog_builtin, 0);
        ck_assert_str_eq(c->catalog->currency, "EUR");
        ck_assert_int_eq(c->has_tco, 1);
        ck_assert_double_eq_tol(c->tco.pue, 1.3, 1e-12);
        ck_assert_uint_eq(c->top_n, 25);
        ck_assert_int_eq(c->utc_offset_s, 5 * 3600 + 1800);
        ck_assert_int_eq(c->daily_retention_days, 7);
        ck_assert_int_eq(c->weekly_retention_weeks, 4);
        ck_assert_uint_eq(c->n_team_namespaces, 1);
        ck_assert_str_eq(c->team_namespaces[0].value, "ml");
        gc_config_free(c);
}
END_TEST

static const struct {
        const char *json;
        const char *field; /* the error must contain this */
} bad[] = {
    {"[]", "configuration"},
    {"{", "not valid JSON"},
    {"{\"clustr\":\"x\"}", "clustr: unknown field"},
    {"{\"cluster\":\"\"}", "cluster"},
    {"{\"attribution\":{\"team_label_keys\":[\"ok\",5]}}", "attribution.team_label_keys[1]"},
    {"{\"attribution\":{\"team_label_keys\":[\"bad key!\"]}}", "attribution.team_label_keys[0]"},
    {"{\"attribution\":{\"team_keys\":[]}}", "attribution.team_keys: unknown field"},
    {"{\"attribution\":{\"namespace_teams\":{\"a\":1}}}", "attribution.namespace_teams.a"},
    {"{\"resources\":[{\"name\":\"gpu\",\"gpus_per_unit\":1}]}", "resources[0].name"},
    {"{\"resources\":[{\"name\":\"x.com/gpu\"}]}", "resources[0].gpus_per_unit"},
    {"{\"resources\":[{\"name\":\"x.com/gpu\",\"gpus_per_unit\":-1}]}",
     "resources[0].gpus_per_unit"},
    {"{\"resources\":[{\"name\":\"x.com/gpu\",\"kind\":\"half\"}]}", "resources[0].kind"},
    {"{\"node_rules\":[{\"match\":{}}]}", "node_rules[0].match"},
    {"{\"node_rules\":[{\"match\":{\"a\":\"b\"}}]}", "node_rules[0]: sets nothing"},
    {"{\"node_rules\":[{\"match\":{\"a\":\"b\"},\"usd_per_gpu_hour\":\"3\"}]}",
     "node_rules[0].usd_per_gpu_hour"},
    {"{\"node_rules\":[{\"match\":{\"a\":\"b\"},\"capacity\":\"spot\"}]}",
     "node_rules[0].capacity: unknown field"},
    {"{\"default_capacity_type\":7}", "default_capacity_type"},
    {"{\"prices\":{\"currency\":\"USD\",\"prices\":[{\"model\":\"*\",\"capacity_type\":\"*\","
     "\"usd_per_gpu_hour\":-2}]}}",
     "prices"},
    {"{\"tco\":{\"node_price\":1}}", "tco.gpus_per_node"},
    {"{\"tco\":{\"node_price\":425000,\"gpus_per_node\":8,\"years\":3,\"utilization\":1.5,"
     "\"cluster_gpus\":64,\"ftes\":1.5,\"fte_cost\":250000,\"kw_per_gpu\":0.56,\"pue\":1.3,"
     "\"usd_per_kwh\":0.1,\"network_per_gpu_hour\":0.1}}",
     "utilization"},
    {"{\"report\":{\"top_n\":0}}", "report.top_n"},
    {"{\"report\":{\"utc_offset\":\"+5\"}}", "report.utc_offset"},
    {"{\"report\":{\"utc_offset\":\"+15:00\"}}", "report.utc_offset"},
    {"{\"report\":{\"daily_retention_days\":0}}", "report.daily_retention_days"},
    {"{\"report\":{\"team_namespaces\":[]}}", "report.team_namespaces"},
};

START_TEST(test_bad)
{
        char err[256] = "";
        gc_config *c = gc_config_parse(bad[_i].json, strlen(bad[_i].json), err, sizeof(err));

        ck_assert_msg(c == NULL, "accepted: %s", bad[_i].json);
        ck_assert_msg(strstr(err, bad[_i].field) != NULL, "error \"%s\" does not name \"%s\"", err,
                      bad[_i].field);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("config");
        TCase *tc = tcase_create("config");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_defaults);
        tcase_add_test(tc, test_full);
        tcase_add_loop_test(tc, test_bad, 0, sizeof(bad) / sizeof(bad[0]));
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
