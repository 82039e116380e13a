/* test_config: defaults, a full configuration, and errors that name the field. */
#include <check.h>
#include <errno.h>
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
        ck_assert_int_eq(gc_res_table_match(c->res, "amd.com/gpu")->kind, GC_RES_AMD);
        ck_assert_ptr_null(gc_res_table_match(c->res, "example.com/gpu"));
        /* No usage source unless configured; the advisor's documented thresholds. */
        ck_assert_int_eq(c->has_dcgm, 0);
        ck_assert_int_eq(c->has_prometheus, 0);
        ck_assert_int_eq(c->usage_retention_days, 30);
        ck_assert_double_eq_tol(c->advisor.idle_activity, 0.05, 1e-12);
        ck_assert_double_eq_tol(c->advisor.idle_memory_fraction, 0.10, 1e-12);
        ck_assert_double_eq_tol(c->advisor.idle_minutes, 30, 1e-12);
        gc_config_free(c);
}
END_TEST

/* usage: {} sections take every default; null is off; given fields replace defaults. */
START_TEST(test_usage)
{
        static const char empty[] = "{\"usage\":{\"dcgm\":{},\"prometheus\":null}}";
        static const char given[] =
            "{\"usage\":{\"dcgm\":{\"namespace\":\"monitoring\",\"label_selector\":"
            "\"app.kubernetes.io/name=dcgm-exporter,tier!=test\",\"service\":\"dcgm-exporter\","
            "\"port\":19400,\"path\":"
            "\"/m\",\"scheme\":\"https\",\"interval_seconds\":60,\"timeout_seconds\":60,"
            "\"max_body_bytes\":1048576},\"prometheus\":{\"url\":\"https://prom.example:9091/"
            "x\",\"interval_seconds\":120,\"timeout_seconds\":30,\"lookback_days\":14,"
            "\"step_seconds\":300,\"bearer_token_file\":\"/var/run/secrets/token\","
            "\"max_body_bytes\":2048},\"retention_days\":9},"
            "\"advisor\":{\"idle_activity\":0.1,\"idle_minutes\":60,\"min_samples\":5,"
            "\"min_coverage\":0.25,\"hours_per_month\":720,\"max_findings\":0,"
            "\"cheaper_classes\":[{\"from\":\"NVIDIA-H100*\",\"to\":\"NVIDIA-L4\","
            "\"max_tensor_activity\":0.2,\"to_memory_mib\":23034}]}}";
        char err[256] = "";
        gc_config *c = gc_config_parse(empty, strlen(empty), err, sizeof(err));

        ck_assert_msg(c != NULL, "parse failed: %s", err);
        ck_assert_int_eq(c->has_dcgm, 1);
        ck_assert_int_eq(c->has_prometheus, 0);
        ck_assert_str_eq(c->dcgm.ns, "gpu-operator");
        ck_assert_str_eq(c->dcgm.label_selector, "app=nvidia-dcgm-exporter");
        ck_assert_ptr_null(c->dcgm.service);
        ck_assert_int_eq(c->dcgm.port, 9400);
        ck_assert_str_eq(c->dcgm.path, "/metrics");
        ck_assert_str_eq(c->dcgm.scheme, "http");
        ck_assert_int_eq(c->dcgm.interval_s, 30);
        ck_assert_int_eq(c->dcgm.timeout_s, 5);
        ck_assert_uint_eq(c->dcgm.max_body_bytes, 64u << 20);
        gc_config_free(c);

        c = gc_config_parse(given, strlen(given), err, sizeof(err));
        ck_assert_msg(c != NULL, "parse failed: %s", err);
        ck_assert_str_eq(c->dcgm.ns, "monitoring");
        ck_assert_str_eq(c->dcgm.label_selector, "app.kubernetes.io/name=dcgm-exporter,tier!=test");
        ck_assert_str_eq(c->dcgm.service, "dcgm-exporter");
        ck_assert_int_eq(c->dcgm.port, 19400);
        ck_assert_str_eq(c->dcgm.path, "/m");
        ck_assert_str_eq(c->dcgm.scheme, "https");
        ck_assert_int_eq(c->dcgm.interval_s, 60);
        ck_assert_int_eq(c->dcgm.timeout_s, 60);
        ck_assert_uint_eq(c->dcgm.max_body_bytes, 1048576);
        ck_assert_int_eq(c->has_prometheus, 1);
        ck_assert_str_eq(c->prometheus.url, "https://prom.example:9091/x");
        ck_assert_int_eq(c->prometheus.interval_s, 120);
        ck_assert_int_eq(c->prometheus.timeout_s, 30);
        ck_assert_int_eq(c->prometheus.lookback_days, 14);
        ck_assert_int_eq(c->prometheus.step_s, 300);
        ck_assert_str_eq(c->prometheus.bearer_token_file, "/var/run/secrets/token");
        ck_assert_uint_eq(c->prometheus.max_body_bytes, 2048);
        ck_assert_int_eq(c->usage_retention_days, 9);
        ck_assert_double_eq_tol(c->advisor.idle_activity, 0.1, 1e-12);
        ck_assert_double_eq_tol(c->advisor.idle_memory_fraction, 0.10, 1e-12); /* kept */
        ck_assert_double_eq_tol(c->advisor.idle_minutes, 60, 1e-12);
        ck_assert_uint_eq(c->advisor.min_samples, 5);
        ck_assert_double_eq_tol(c->advisor.min_coverage, 0.25, 1e-12);
        ck_assert_double_eq_tol(c->advisor.hours_per_month, 720, 1e-12);
        ck_assert_uint_eq(c->advisor.max_findings, 0);
        ck_assert_uint_eq(c->advisor.n_cheaper_classes, 1); /* replaces the defaults */
        ck_assert_str_eq(c->advisor.cheaper_classes[0].from, "NVIDIA-H100*");
        ck_assert_str_eq(c->advisor.cheaper_classes[0].to, "NVIDIA-L4");
        ck_assert_double_eq_tol(c->advisor.cheaper_classes[0].max_tensor_activity, 0.2, 1e-12);
        ck_assert_double_eq_tol(c->advisor.cheaper_classes[0].to_memory_mib, 23034, 1e-12);
        gc_config_free(c);
}
END_TEST

static const char full[] =
    "{\"cluster\":\"prod-eu\","
    "\"attribution\":{\"team_label_keys\":[\"squad\"],\"project_label_keys\":[\"app\"],"
    "\"namespace_teams\":{\"sandbox\":\"research\"},\"namespace_projects\":{\"sandbox\":\"x\"}},"
    "\"labels\":{\"dimensions\":[\"cost-center\",\"example.com/experiment-id\"]},"
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

/* Money inputs under their currency-neutral names; the old names are read the same. */
START_TEST(test_money_names)
{
        static const char *const docs[] = {
            "{\"node_rules\":[{\"match\":{\"a\":\"b\"},\"price_per_gpu_hour\":3.5}],"
            "\"tco\":{\"node_price\":425000,\"gpus_per_node\":8,\"years\":3,\"utilization\":0.6,"
            "\"cluster_gpus\":64,\"ftes\":1.5,\"fte_cost\":250000,\"kw_per_gpu\":0.56,\"pue\":1.3,"
            "\"price_per_kwh\":0.12,\"network_per_gpu_hour\":0.1}}",
            "{\"node_rules\":[{\"match\":{\"a\":\"b\"},\"usd_per_gpu_hour\":3.5}],"
            "\"tco\":{\"node_price\":425000,\"gpus_per_node\":8,\"years\":3,\"utilization\":0.6,"
            "\"cluster_gpus\":64,\"ftes\":1.5,\"fte_cost\":250000,\"kw_per_gpu\":0.56,\"pue\":1.3,"
            "\"usd_per_kwh\":0.12,\"network_per_gpu_hour\":0.1}}"};
        char err[512];

        for (size_t i = 0; i < 2; i++) {
                gc_config *c = gc_config_parse(docs[i], strlen(docs[i]), err, sizeof(err));

                ck_assert_msg(c != NULL, "%s", err);
                ck_assert_double_eq(c->rules.rules[0].price_per_gpu_hour, 3.5);
                ck_assert(c->has_tco);
                ck_assert_double_eq(c->tco.price_per_kwh, 0.12);
                gc_config_free(c);
        }
}
END_TEST

START_TEST(test_full)
{
        char err[256] = "";
        gc_config *c = gc_config_parse(full, strlen(full), err, sizeof(err));
        const gc_res_rule *rule;

        ck_assert_msg(c != NULL, "parse failed: %s", err);
        ck_assert_str_eq(c->cluster, "prod-eu");
        ck_assert_uint_eq(c->n_team_keys, 1);
        ck_assert_str_eq(c->team_keys[0], "squad");
        ck_assert_uint_eq(c->n_label_keys, 2);
        ck_assert_str_eq(c->label_keys[1], "example.com/experiment-id");
        /* analyze keeps the keys its --by names too: once each, at most four. */
        ck_assert_int_eq(gc_config_add_label_key(c, "cost-center", 11, err, sizeof(err)), 0);
        ck_assert_int_eq(gc_config_add_label_key(c, "a", 1, err, sizeof(err)), 0);
        ck_assert_int_eq(gc_config_add_label_key(c, "bad key", 7, err, sizeof(err)), -EINVAL);
        ck_assert_int_eq(gc_config_add_label_key(c, "b", 1, err, sizeof(err)), 0);
        ck_assert_int_eq(gc_config_add_label_key(c, "c", 1, err, sizeof(err)), -E2BIG);
        ck_assert_ptr_nonnull(strstr(err, "at most 4"));
        ck_assert_uint_eq(c->n_label_keys, 4);
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
        ck_assert_double_eq_tol(c->rules.rules[0].price_per_gpu_hour, 3.56, 1e-12);
        ck_assert_double_lt(c->rules.rules[1].price_per_gpu_hour, 0);
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

START_TEST(test_timezone_and_budgets)
{
        static const char json[] =
            "{\"report\":{\"timezone\":\"Asia/Kathmandu\",\"monthly_retention_months\":24},"
            "\"budgets\":{\"warn_share\":0.75,\"events\":true,\"items\":["
            "{\"scope\":\"team\",\"name\":\"ml\",\"period\":\"monthly\",\"amount\":5000},"
            "{\"scope\":\"namespace\",\"name\":\"ml\",\"period\":\"weekly\",\"amount\":900.5},"
            "{\"scope\":\"project\",\"name\":\"ml\",\"period\":\"monthly\",\"amount\":1},"
            "{\"scope\":\"workload\",\"name\":\"Deployment/ml/summarizer\",\"period\":"
            "\"weekly\",\"amount\":250}]}}";
        char err[256] = "";
        gc_config *c = gc_config_default();

        /* The defaults: UTC, 12 months, no budgets, warn at 80%, no Events. */
        ck_assert_ptr_nonnull(c);
        ck_assert_str_eq(gc_tz_name(c->tz), "UTC");
        ck_assert_ptr_null(c->timezone);
        ck_assert_int_eq(c->monthly_retention_months, 12);
        ck_assert_uint_eq(c->n_budgets, 0);
        ck_assert_double_eq(c->budget_warn_share, 0.8);
        ck_assert_int_eq(c->budget_events, 0);
        gc_config_free(c);

        c = gc_config_parse(json, strlen(json), err, sizeof(err));
        ck_assert_msg(c != NULL, "%s", err);
        ck_assert_str_eq(c->timezone, "Asia/Kathmandu");
        ck_assert_str_eq(gc_tz_name(c->tz), "Asia/Kathmandu");
        ck_assert_int_eq(gc_tz_offset(c->tz, 1795000000), 5 * 3600 + 45 * 60);
        ck_assert_int_eq(c->monthly_retention_months, 24);
        ck_assert_uint_eq(c->n_budgets, 4);
        ck_assert_int_eq(c->budgets[3].dim, GC_DIM_WORKLOAD);
        ck_assert_str_eq(c->budgets[3].name, "Deployment/ml/summarizer");
        ck_assert_int_eq(c->budgets[0].dim, GC_DIM_TEAM);
        ck_assert_str_eq(c->budgets[0].name, "ml");
        ck_assert_int_eq(c->budgets[0].period, GC_BUDGET_MONTHLY);
        ck_assert_double_eq(c->budgets[0].amount, 5000);
        ck_assert_int_eq(c->budgets[1].dim, GC_DIM_NAMESPACE);
        ck_assert_int_eq(c->budgets[1].period, GC_BUDGET_WEEKLY);
        ck_assert_int_eq(c->budgets[2].dim, GC_DIM_PROJECT);
        ck_assert_double_eq(c->budget_warn_share, 0.75);
        ck_assert_int_eq(c->budget_events, 1);
        gc_config_free(c);

        /* utc_offset keeps working: a fixed zone of that offset. */
        c = gc_config_parse("{\"report\":{\"utc_offset\":\"+05:30\"}}", 35, err, sizeof(err));
        ck_assert_msg(c != NULL, "%s", err);
        ck_assert_str_eq(gc_tz_name(c->tz), "UTC+05:30");
        ck_assert_ptr_null(c->timezone);
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
    {"{\"labels\":[]}", "labels: must be an object"},
    {"{\"labels\":{\"dims\":[]}}", "labels.dims: unknown field"},
    {"{\"labels\":{\"dimensions\":\"x\"}}", "labels.dimensions: must be an array"},
    {"{\"labels\":{\"dimensions\":[\"a\",\"b c\"]}}", "labels.dimensions[1]: must be a label key"},
    {"{\"labels\":{\"dimensions\":[\"a\",\"b\",\"a\"]}}",
     "labels.dimensions[2]: \"a\" is given twice"},
    {"{\"labels\":{\"dimensions\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}}",
     "labels.dimensions: at most 4"},
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
    {"{\"node_rules\":[{\"match\":{\"a\":\"b\"},\"price_per_gpu_hour\":-1}]}",
     "node_rules[0].price_per_gpu_hour"},
    {"{\"node_rules\":[{\"match\":{\"a\":\"b\"},\"price_per_gpu_hour\":1,"
     "\"usd_per_gpu_hour\":2}]}",
     "node_rules[0]: price_per_gpu_hour and usd_per_gpu_hour (its old name) differ: give one"},
    {"{\"tco\":{\"node_price\":425000,\"gpus_per_node\":8,\"years\":3,\"utilization\":0.6,"
     "\"cluster_gpus\":64,\"ftes\":1.5,\"fte_cost\":250000,\"kw_per_gpu\":0.56,\"pue\":1.3,"
     "\"network_per_gpu_hour\":0.1}}",
     "tco.price_per_kwh: required"},
    {"{\"tco\":{\"node_price\":425000,\"gpus_per_node\":8,\"years\":3,\"utilization\":0.6,"
     "\"cluster_gpus\":64,\"ftes\":1.5,\"fte_cost\":250000,\"kw_per_gpu\":0.56,\"pue\":1.3,"
     "\"price_per_kwh\":0.1,\"usd_per_kwh\":0.2,\"network_per_gpu_hour\":0.1}}",
     "tco: price_per_kwh and usd_per_kwh (its old name) differ"},
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
    {"{\"report\":{\"timezone\":\"Europe/Atlantis\"}}", "report.timezone: \"Europe/Atlantis\""},
    {"{\"report\":{\"timezone\":\"../../etc/passwd\"}}", "report.timezone"},
    {"{\"report\":{\"timezone\":\"zone.tab\"}}", "report.timezone"},
    {"{\"report\":{\"timezone\":7}}", "report.timezone"},
    {"{\"report\":{\"timezone\":\"Europe/Berlin\",\"utc_offset\":\"+01:00\"}}",
     "report.timezone: give"},
    {"{\"report\":{\"monthly_retention_months\":0}}", "report.monthly_retention_months"},
    {"{\"report\":{\"monthly_retention_months\":121}}", "report.monthly_retention_months"},
    {"{\"budgets\":[]}", "budgets: must be an object"},
    {"{\"budgets\":{\"warn\":0.8}}", "budgets.warn: unknown field"},
    {"{\"budgets\":{\"warn_share\":1}}", "budgets.warn_share"},
    {"{\"budgets\":{\"events\":\"yes\"}}", "budgets.events"},
    {"{\"budgets\":{\"items\":{}}}", "budgets.items"},
    {"{\"budgets\":{\"items\":[{\"scope\":\"cluster\",\"name\":\"a\",\"period\":"
     "\"monthly\",\"amount\":1}]}}",
     "budgets.items[0].scope"},
    {"{\"budgets\":{\"items\":[{\"scope\":\"team\",\"period\":\"monthly\",\"amount\":1}]}}",
     "budgets.items[0].name"},
    {"{\"budgets\":{\"items\":[{\"scope\":\"workload\",\"name\":\"summarizer\",\"period\":"
     "\"monthly\",\"amount\":1}]}}",
     "budgets.items[0].name: a workload is Kind/namespace/name"},
    {"{\"budgets\":{\"items\":[{\"scope\":\"team\",\"name\":\"a\",\"period\":\"daily\","
     "\"amount\":1}]}}",
     "budgets.items[0].period"},
    {"{\"budgets\":{\"items\":[{\"scope\":\"team\",\"name\":\"a\",\"period\":"
     "\"monthly\",\"amount\":0}]}}",
     "budgets.items[0].amount"},
    {"{\"budgets\":{\"items\":[{\"scope\":\"team\",\"name\":\"a\",\"period\":"
     "\"monthly\",\"amount\":1,\"currency\":\"EUR\"}]}}",
     "budgets.items[0].currency: unknown field"},
    {"{\"budgets\":{\"items\":[{\"scope\":\"team\",\"name\":\"a\",\"period\":"
     "\"monthly\",\"amount\":1},{\"scope\":\"team\",\"name\":\"a\",\"period\":"
     "\"monthly\",\"amount\":2}]}}",
     "budgets.items[1]: a second monthly budget of team a"},
    {"{\"report\":{\"team_namespaces\":[]}}", "report.team_namespaces"},
    {"{\"usage\":[]}", "usage: must be an object"},
    {"{\"usage\":{\"dcgm_exporter\":{}}}", "usage.dcgm_exporter: unknown field"},
    {"{\"usage\":{\"dcgm\":{\"interval\":30}}}", "usage.dcgm.interval: unknown field"},
    {"{\"usage\":{\"dcgm\":\"on\"}}", "usage.dcgm: must be an object or null"},
    {"{\"usage\":{\"dcgm\":{\"namespace\":\"\"}}}", "usage.dcgm.namespace"},
    {"{\"usage\":{\"dcgm\":{\"label_selector\":\"app in (a,b)\"}}}", "usage.dcgm.label_selector"},
    {"{\"usage\":{\"dcgm\":{\"service\":\"DCGM\"}}}", "usage.dcgm.service"},
    {"{\"usage\":{\"dcgm\":{\"service\":\"dcgm-\"}}}", "usage.dcgm.service"},
    {"{\"usage\":{\"dcgm\":{\"service\":7}}}", "usage.dcgm.service"},
    {"{\"usage\":{\"dcgm\":{\"port\":0}}}", "usage.dcgm.port"},
    {"{\"usage\":{\"dcgm\":{\"port\":9400.5}}}", "usage.dcgm.port"},
    {"{\"usage\":{\"dcgm\":{\"port\":65536}}}", "usage.dcgm.port"},
    {"{\"usage\":{\"dcgm\":{\"path\":\"metrics\"}}}", "usage.dcgm.path"},
    {"{\"usage\":{\"dcgm\":{\"scheme\":\"ftp\"}}}", "usage.dcgm.scheme"},
    {"{\"usage\":{\"dcgm\":{\"interval_seconds\":0}}}", "usage.dcgm.interval_seconds"},
    {"{\"usage\":{\"dcgm\":{\"interval_seconds\":10,\"timeout_seconds\":20}}}",
     "usage.dcgm.timeout_seconds"},
    {"{\"usage\":{\"dcgm\":{\"max_body_bytes\":100}}}", "usage.dcgm.max_body_bytes"},
    {"{\"usage\":{\"prometheus\":{\"url\":\"prometheus:9090\"}}}", "usage.prometheus.url"},
    {"{\"usage\":{\"prometheus\":{\"url\":\"http://p:9090/\"}}}", "usage.prometheus.url"},
    {"{\"usage\":{\"prometheus\":{\"url\":\"http://p:9090/api/v1\"}}}", "usage.prometheus.url"},
    {"{\"usage\":{\"prometheus\":{\"lookback_days\":91}}}", "usage.prometheus.lookback_days"},
    {"{\"usage\":{\"prometheus\":{\"lookback_days\":1,\"step_seconds\":7}}}",
     "usage.prometheus.step_seconds"},
    {"{\"usage\":{\"prometheus\":{\"bearer_token_file\":5}}}",
     "usage.prometheus.bearer_token_file"},
    {"{\"usage\":{\"prometheus\":{\"token\":\"x\"}}}", "usage.prometheus.token: unknown field"},
    {"{\"usage\":{\"retention_days\":0}}", "usage.retention_days"},
    {"{\"advisor\":{\"idle_activty\":0.1}}", "advisor.idle_activty: unknown field"},
    {"{\"advisor\":{\"idle_activity\":1.5}}", "advisor.idle_activity"},
    {"{\"advisor\":{\"idle_memory_fraction\":-0.1}}", "advisor.idle_memory_fraction"},
    {"{\"advisor\":{\"idle_minutes\":0}}", "advisor.idle_minutes"},
    {"{\"advisor\":{\"min_samples\":2.5}}", "advisor.min_samples"},
    {"{\"advisor\":{\"min_coverage\":\"half\"}}", "advisor.min_coverage"},
    {"{\"advisor\":{\"hours_per_month\":0}}", "advisor.hours_per_month"},
    {"{\"advisor\":{\"cheaper_classes\":{}}}", "advisor.cheaper_classes"},
    {"{\"advisor\":{\"cheaper_classes\":[{\"from\":\"A*\",\"max_tensor_activity\":0.1}]}}",
     "advisor.cheaper_classes[0].to"},
    {"{\"advisor\":{\"cheaper_classes\":[{\"from\":\"A*\",\"to\":\"B\"}]}}",
     "advisor.cheaper_classes[0].max_tensor_activity"},
    {"{\"advisor\":{\"cheaper_classes\":[{\"from\":\"A*\",\"to\":\"B\",\"max_tensor_"
     "activity\":0.1,\"price\":1}]}}",
     "advisor.cheaper_classes[0].price: unknown field"},
    {"{\"chargeback\":\"proportional\"}", "chargeback: must be an object"},
    {"{\"chargeback\":{\"mode\":\"even\"}}", "chargeback.mode"},
    {"{\"chargeback\":{\"share\":\"none\"}}", "chargeback.share: unknown field"},
    {"{\"chargeback\":{\"mode\":\"weights\"}}", "chargeback.weights"},
    {"{\"chargeback\":{\"mode\":\"weights\",\"weights\":{\"ml\":0}}}", "chargeback.weights.ml"},
    {"{\"chargeback\":{\"weights\":{\"ml\":\"2\"}}}", "chargeback.weights.ml"},
    {"{\"chargeback\":{\"weights\":[1]}}", "chargeback.weights"},
    {"{\"chargeback\":{\"basis\":\"use\"}}", "chargeback.basis"},
    {"{\"chargeback\":{\"basis\":1}}", "chargeback.basis"},
};

START_TEST(test_chargeback)
{
        static const char json[] =
            "{\"chargeback\":{\"mode\":\"weights\",\"weights\":{\"ml\":3,\"web\":1.5}}}";
        char err[256] = "";
        gc_config *c = gc_config_default();

        ck_assert_int_eq(c->chargeback.mode, GC_CHARGEBACK_NONE); /* showback by default */
        ck_assert_uint_eq(c->chargeback.n_weights, 0);
        gc_config_free(c);
        c = gc_config_parse(json, strlen(json), err, sizeof(err));
        ck_assert_msg(c != NULL, "%s", err);
        ck_assert_int_eq(c->chargeback.mode, GC_CHARGEBACK_WEIGHTS);
        ck_assert_uint_eq(c->chargeback.n_weights, 2);
        ck_assert_str_eq(c->chargeback.weights[0].team, "ml");
        ck_assert_double_eq(c->chargeback.weights[0].weight, 3);
        ck_assert_str_eq(c->chargeback.weights[1].team, "web");
        ck_assert_double_eq(c->chargeback.weights[1].weight, 1.5);
        ck_assert_int_eq(c->chargeback.basis, GC_BASIS_ALLOCATION);
        gc_config_free(c);
        c = gc_config_parse("{\"chargeback\":{\"mode\":\"proportional\",\"basis\":\"usage\"}}", 54,
                            err, sizeof(err));
        ck_assert_msg(c != NULL, "%s", err);
        ck_assert_int_eq(c->chargeback.basis, GC_BASIS_USAGE);
        gc_config_free(c);
}
END_TEST

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
        tcase_add_test(tc, test_money_names);
        tcase_add_test(tc, test_usage);
        tcase_add_test(tc, test_chargeback);
        tcase_add_test(tc, test_timezone_and_budgets);
        tcase_add_loop_test(tc, test_bad, 0, sizeof(bad) / sizeof(bad[0]));
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
