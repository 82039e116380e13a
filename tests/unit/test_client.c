/* test_client: the API's answers read back (real, malformed, hostile) and GETs over HTTP. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/client.h"
#include "report/report.h"
#include "util/util.h"

/* A real answer: gpu-cost-controller --demo, /api/v1/costs of week 47 by team. */
static const char team_week[] =
    "{\"window\":{\"start\":\"2026-11-16T00:00:00Z\",\"end\":\"2026-11-23T00:00:00Z\"},\"by\":["
    "\"team\"],\"currency\":\"USD\",\"groups\":[{\"keys\":{\"team\":\"platform\"},\"gpu_hours\""
    ":1084.2155952380951,\"gpu_seconds\":3903176.1428571427,\"cost\":11229.715976587302,\"cost_"
    "usd\":11229.715976587302,\"pods\":21,\"estimates\":0},{\"keys\":{\"team\":\"research\"},\""
    "gpu_hours\":1671.7288888888888,\"gpu_seconds\":6018224,\"cost\":7527.621499999999,\"cost_u"
    "sd\":7527.621499999999,\"pods\":27,\"estimates\":0},{\"keys\":{\"team\":\"vision\"},\"gpu_"
    "hours\":1399.0634126984125,\"gpu_seconds\":5036628.285714285,\"cost\":2828.6003003968253,"
    "\"cost_usd\":2828.6003003968253,\"pods\":17,\"estimates\":0},{\"keys\":{\"team\":\"search"
    "\"},\"gpu_hours\":229.0088888888889,\"gpu_seconds\":824432,\"cost\":785.7531111111111,\"co"
    "st_usd\":785.7531111111111,\"pods\":7,\"estimates\":0},{\"keys\":{\"team\":\"recommendatio"
    "ns\"},\"gpu_hours\":352.74652777777777,\"gpu_seconds\":1269887.5,\"cost\":273.098634722222"
    "24,\"cost_usd\":273.09863472222224,\"pods\":33,\"estimates\":0},{\"keys\":{\"team\":\"__un"
    "attributed__\"},\"gpu_hours\":10.866825396825396,\"gpu_seconds\":39120.57142857143,\"cost"
    "\":55.825833333333335,\"cost_usd\":55.825833333333335,\"pods\":3,\"estimates\":0}],\"idle"
    "\":{\"gpu_hours\":7802.672083333333,\"gpu_seconds\":28089619.5,\"cost\":38128.0135327381,"
    "\"cost_usd\":38128.0135327381,\"nodes\":[{\"node\":\"ip-10-0-41-12.ec2.internal\",\"model"
    "\":\"NVIDIA-H100-80GB-HBM3\",\"capacity_type\":\"on-demand\",\"gpu_hours\":936.73444444444"
    "44,\"gpu_seconds\":3372244,\"cost\":11512.46632222222,\"cost_usd\":11512.46632222222},{\"n"
    "ode\":\"ip-10-0-35-201.ec2.internal\",\"model\":\"NVIDIA-H100-80GB-HBM3\",\"capacity_type"
    "\":\"on-demand\",\"gpu_hours\":858.7832936507937,\"gpu_seconds\":3091619.8571428573,\"cost"
    "\":10554.446678968254,\"cost_usd\":10554.446678968254},{\"node\":\"ip-10-0-33-117.ec2.inte"
    "rnal\",\"model\":\"NVIDIA-H100-80GB-HBM3\",\"capacity_type\":\"reserved\",\"gpu_hours\":95"
    "5.074007936508,\"gpu_seconds\":3438266.4285714286,\"cost\":5014.138541666667,\"cost_usd\":"
    "5014.138541666667},{\"node\":\"ip-10-0-74-19.ec2.internal\",\"model\":\"NVIDIA-A100-SXM4-4"
    "0GB\",\"capacity_type\":\"on-demand\",\"gpu_hours\":1222.2190873015875,\"gpu_seconds\":439"
    "9988.714285715,\"cost\":5011.098257936507,\"cost_usd\":5011.098257936507},{\"node\":\"ip-1"
    "0-0-71-5.ec2.internal\",\"model\":\"NVIDIA-A100-SXM4-40GB\",\"capacity_type\":\"on-demand"
    "\",\"gpu_hours\":1189.256388888889,\"gpu_seconds\":4281323,\"cost\":3805.6204444444447,\"c"
    "ost_usd\":3805.6204444444447},{\"node\":\"ip-10-0-52-88.ec2.internal\",\"model\":\"NVIDIA-"
    "A100-SXM4-40GB\",\"capacity_type\":\"spot\",\"gpu_hours\":984.5055555555556,\"gpu_seconds"
    "\":3544220,\"cost\":1476.7583333333334,\"cost_usd\":1476.7583333333334},{\"node\":\"gke-de"
    "mo-l4-pool-2a7e5d90-fh2m\",\"model\":\"NVIDIA-L4\",\"capacity_type\":\"on-demand\",\"gpu_h"
    "ours\":672,\"gpu_seconds\":2419200,\"cost\":477.12,\"cost_usd\":477.12},{\"node\":\"gke-de"
    "mo-t4-pool-6f2b9c1e-k3xq\",\"model\":\"Tesla-T4\",\"capacity_type\":\"on-demand\",\"gpu_ho"
    "urs\":376.71791666666667,\"gpu_seconds\":1356184.5,\"cost\":131.85127083333333,\"cost_usd"
    "\":131.85127083333333},{\"node\":\"gke-demo-t4-spot-8d41a7b2-w9zt\",\"model\":\"Tesla-T4\""
    ",\"capacity_type\":\"spot\",\"gpu_hours\":587.9725,\"gpu_seconds\":2116701,\"cost\":82.316"
    "15000000001,\"cost_usd\":82.31615000000001},{\"node\":\"dgx-h100-01\",\"model\":\"NVIDIA-H"
    "100-80GB-HBM3\",\"capacity_type\":\"on-prem\",\"gpu_hours\":15.597777777777777,\"gpu_secon"
    "ds\":56152,\"cost\":55.528088888888895,\"cost_usd\":55.528088888888895},{\"node\":\"ip-10-"
    "1-60-23.us-west-2.compute.internal\",\"model\":\"NVIDIA-A100-SXM4-40GB\",\"capacity_type\""
    ":\"spot\",\"gpu_hours\":3.811111111111111,\"gpu_seconds\":13720,\"cost\":6.669444444444444"
    ",\"cost_usd\":6.669444444444444}]},\"unattributed\":{\"gpu_hours\":43.76849206349206,\"gpu"
    "_seconds\":157566.57142857142,\"cost\":229.67017222222222,\"cost_usd\":229.67017222222222,"
    "\"pods\":9},\"capacity\":{\"gpu_hours\":12550.302222222223,\"gpu_seconds\":45181088,\"cost"
    "\":60828.62888888889,\"cost_usd\":60828.62888888889},\"total\":{\"gpu_hours\":4747.6301388"
    "88889,\"gpu_seconds\":17091468.5,\"cost\":22700.61535615081,\"cost_usd\":22700.61535615081"
    ",\"pods\":108,\"estimates\":0}}";

/* The same answer from a controller before money fields became currency-neutral (cost
 * only): read the same. */
static const char team_week_usd[] =
    "{\"window\":{\"start\":\"2026-11-16T00:00:00Z\",\"end\":\"2026-11-23T00:00:00Z\"},\"by\":["
    "\"team\""
    "],\"currency\":\"USD\",\"groups\":[{\"keys\":{\"team\":\"platform\"},\"gpu_hours\":1084."
    "2155952380"
    "951,\"gpu_seconds\":3903176.1428571427,\"cost_usd\":11229.715976587302,\"pods\":21,\"estima"
    "tes\":0},{\"keys\":{\"team\":\"research\"},\"gpu_hours\":1671.7288888888888,\"gpu_seconds\":"
    "601"
    "8224,\"cost_usd\":7527.621499999999,\"pods\":27,\"estimates\":0},{\"keys\":{\"team\":"
    "\"vision\"}"
    ",\"gpu_hours\":1399.0634126984125,\"gpu_seconds\":5036628.285714285,\"cost_usd\":2828.6003"
    "003968253,\"pods\":17,\"estimates\":0},{\"keys\":{\"team\":\"search\"},\"gpu_hours\":229."
    "0088888"
    "888889,\"gpu_seconds\":824432,\"cost_usd\":785.7531111111111,\"pods\":7,\"estimates\":0},{\"k"
    "eys\":{\"team\":\"recommendations\"},\"gpu_hours\":352.74652777777777,\"gpu_seconds\":1269887"
    ".5,\"cost_usd\":273.09863472222224,\"pods\":33,\"estimates\":0},{\"keys\":{\"team\":\"__"
    "unattri"
    "buted__\"},\"gpu_hours\":10.866825396825396,\"gpu_seconds\":39120.57142857143,\"cost_usd\":"
    "55.825833333333335,\"pods\":3,\"estimates\":0}],\"idle\":{\"gpu_hours\":7802.672083333333,\"g"
    "pu_seconds\":28089619.5,\"cost_usd\":38128.0135327381,\"nodes\":[{\"node\":\"ip-10-0-41-12.e"
    "c2.internal\",\"model\":\"NVIDIA-H100-80GB-HBM3\",\"capacity_type\":\"on-demand\",\"gpu_"
    "hours\""
    ":936.7344444444444,\"gpu_seconds\":3372244,\"cost_usd\":11512.46632222222},{\"node\":\"ip-1"
    "0-0-35-201.ec2.internal\",\"model\":\"NVIDIA-H100-80GB-HBM3\",\"capacity_type\":\"on-demand\""
    ",\"gpu_hours\":858.7832936507937,\"gpu_seconds\":3091619.8571428573,\"cost_usd\":10554.446"
    "678968254},{\"node\":\"ip-10-0-33-117.ec2.internal\",\"model\":\"NVIDIA-H100-80GB-HBM3\",\"ca"
    "pacity_type\":\"reserved\",\"gpu_hours\":955.074007936508,\"gpu_seconds\":3438266.428571428"
    "6,\"cost_usd\":5014.138541666667},{\"node\":\"ip-10-0-74-19.ec2.internal\",\"model\":\"NVIDIA"
    "-A100-SXM4-40GB\",\"capacity_type\":\"on-demand\",\"gpu_hours\":1222.2190873015875,\"gpu_sec"
    "onds\":4399988.714285715,\"cost_usd\":5011.098257936507},{\"node\":\"ip-10-0-71-5.ec2.inte"
    "rnal\",\"model\":\"NVIDIA-A100-SXM4-40GB\",\"capacity_type\":\"on-demand\",\"gpu_hours\":1189."
    "2"
    "56388888889,\"gpu_seconds\":4281323,\"cost_usd\":3805.6204444444447},{\"node\":\"ip-10-0-52"
    "-88.ec2.internal\",\"model\":\"NVIDIA-A100-SXM4-40GB\",\"capacity_type\":\"spot\",\"gpu_"
    "hours\""
    ":984.5055555555556,\"gpu_seconds\":3544220,\"cost_usd\":1476.7583333333334},{\"node\":\"gke"
    "-demo-l4-pool-2a7e5d90-fh2m\",\"model\":\"NVIDIA-L4\",\"capacity_type\":\"on-demand\",\"gpu_ho"
    "urs\":672,\"gpu_seconds\":2419200,\"cost_usd\":477.12},{\"node\":\"gke-demo-t4-pool-6f2b9c1e"
    "-k3xq\",\"model\":\"Tesla-T4\",\"capacity_type\":\"on-demand\",\"gpu_hours\":376."
    "71791666666667"
    ",\"gpu_seconds\":1356184.5,\"cost_usd\":131.85127083333333},{\"node\":\"gke-demo-t4-spot-8d"
    "41a7b2-w9zt\",\"model\":\"Tesla-T4\",\"capacity_type\":\"spot\",\"gpu_hours\":587.9725,\"gpu_"
    "sec"
    "onds\":2116701,\"cost_usd\":82.31615000000001},{\"node\":\"dgx-h100-01\",\"model\":\"NVIDIA-H1"
    "00-80GB-HBM3\",\"capacity_type\":\"on-prem\",\"gpu_hours\":15.597777777777777,\"gpu_seconds\""
    ":56152,\"cost_usd\":55.528088888888895},{\"node\":\"ip-10-1-60-23.us-west-2.compute.inter"
    "nal\",\"model\":\"NVIDIA-A100-SXM4-40GB\",\"capacity_type\":\"spot\",\"gpu_hours\":3."
    "8111111111"
    "11111,\"gpu_seconds\":13720,\"cost_usd\":6.669444444444444}]},\"unattributed\":{\"gpu_hours"
    "\":43.76849206349206,\"gpu_seconds\":157566.57142857142,\"cost_usd\":229.67017222222222,\""
    "pods\":9},\"capacity\":{\"gpu_hours\":12550.302222222223,\"gpu_seconds\":45181088,\"cost_usd"
    "\":60828.62888888889},\"total\":{\"gpu_hours\":4747.630138888889,\"gpu_seconds\":17091468.5"
    ",\"cost_usd\":22700.61535615081,\"pods\":108,\"estimates\":0}}";
/* The smallest summary the decoder takes, with one group. */
#define SMALL_WINDOW                                                                               \
        "\"window\":{\"start\":\"2026-11-20T00:00:00Z\",\"end\":\"2026-11-21T00:00:00Z\"}"
static const char small[] = "{" SMALL_WINDOW ",\"by\":[\"team\"],\"groups\":[{\"keys\":{\"team\":"
                            "\"ml\"},\"gpu_seconds\":7200,\"cost_usd\":6.5,\"pods\":2}],"
                            "\"total\":{\"gpu_seconds\":7200,\"cost_usd\":6.5,\"pods\":2}}";

static int decode(const char *json, gc_strpool *pool, gc_cost_summary *ret, char *err,
                  size_t errlen)
{
        cJSON *doc = cJSON_Parse(json);
        int r;

        ck_assert_msg(doc != NULL, "the test's JSON does not parse: %s", json);
        r = gc_client_summary_from_json(doc, pool, ret, err, errlen);
        cJSON_Delete(doc);
        return r;
}

/* Read back and written again by pkg/report, a real answer is the same text, byte for byte. */
START_TEST(test_summary_round_trip)
{
        gc_strpool *pool = gc_strpool_new(1 << 20);
        gc_cost_summary sum;
        char err[256] = "";
        gc_buf out;

        ck_assert_msg(decode(team_week, pool, &sum, err, sizeof(err)) == 0, "%s", err);
        ck_assert_uint_eq(sum.n_by, 1);
        ck_assert_int_eq(sum.by[0], GC_DIM_TEAM);
        ck_assert_uint_eq(sum.n_rows, 6);
        ck_assert_str_eq(sum.rows[0].keys[GC_DIM_TEAM], "platform");
        ck_assert_uint_eq(sum.rows[0].pods, 21);
        ck_assert_uint_eq(sum.n_idle_nodes, 11);
        ck_assert_str_eq(sum.idle_nodes[0].keys[GC_DIM_NODE], "ip-10-0-41-12.ec2.internal");
        ck_assert_uint_eq(sum.total.pods, 108);
        ck_assert_uint_eq(sum.unattributed.pods, 9);
        gc_buf_init(&out, 1 << 20);
        ck_assert_int_eq(gc_report_summary_json(&sum, "USD", &out), 0);
        ck_assert_str_eq(out.data, team_week);
        gc_buf_reset(&out);
        ck_assert_int_eq(gc_report_summary_table(&sum, "USD", &out), 0);
        ck_assert_msg(strstr(out.data, "$22,700.62") != NULL, "%s", out.data);
        gc_buf_free(&out);
        gc_cost_summary_free(&sum);
        gc_strpool_free(pool);
}
END_TEST

/* An answer of a controller before the rename (cost only) reads as the same summary. */
START_TEST(test_summary_before_rename)
{
        gc_strpool *pool = gc_strpool_new(1 << 20);
        gc_cost_summary a, b;
        char err[256] = "";

        ck_assert_msg(decode(team_week, pool, &a, err, sizeof(err)) == 0, "%s", err);
        ck_assert_msg(decode(team_week_usd, pool, &b, err, sizeof(err)) == 0, "%s", err);
        ck_assert_uint_eq(a.n_rows, b.n_rows);
        for (size_t i = 0; i < a.n_rows; i++) {
                ck_assert_str_eq(a.rows[i].keys[GC_DIM_TEAM], b.rows[i].keys[GC_DIM_TEAM]);
                ck_assert(a.rows[i].cost == b.rows[i].cost);
                ck_assert(a.rows[i].cost > 0);
        }
        ck_assert(a.total.cost == b.total.cost);
        ck_assert(a.idle.cost == b.idle.cost);
        gc_cost_summary_free(&a);
        gc_cost_summary_free(&b);
        gc_strpool_free(pool);
}
END_TEST

/* label:<key> dimensions take label slots in order; gpu_hours stands in for gpu_seconds. */
START_TEST(test_summary_labels_and_hours)
{
        static const char doc[] =
            "{" SMALL_WINDOW ",\"by\":[\"team\",\"label:cost-center\",\"label:env\"],"
            "\"groups\":[{\"keys\":{\"team\":\"ml\",\"label:cost-center\":\"cc-7\","
            "\"label:env\":\"prod\"},\"gpu_hours\":2,\"cost_usd\":1}],\"total\":{\"gpu_hours\":2,"
            "\"cost_usd\":1}}";
        gc_strpool *pool = gc_strpool_new(1 << 20);
        gc_cost_summary sum;
        char err[256] = "";

        ck_assert_msg(decode(doc, pool, &sum, err, sizeof(err)) == 0, "%s", err);
        ck_assert_uint_eq(sum.n_by, 3);
        ck_assert_uint_eq(sum.label_keys.n, 2);
        ck_assert_str_eq(sum.label_keys.key[0], "cost-center");
        ck_assert_int_eq(sum.by[1], GC_DIM_LABEL);
        ck_assert_int_eq(sum.by[2], GC_DIM_LABEL + 1);
        ck_assert_str_eq(sum.rows[0].keys[GC_DIM_LABEL], "cc-7");
        ck_assert_str_eq(sum.rows[0].keys[GC_DIM_LABEL + 1], "prod");
        ck_assert_double_eq(sum.rows[0].gpu_seconds, 7200);
        ck_assert_double_eq(sum.total.gpu_seconds, 7200);
        ck_assert_uint_eq(sum.n_idle_nodes, 0); /* no "idle": zeros */
        gc_cost_summary_free(&sum);
        gc_strpool_free(pool);
}
END_TEST

/* What a malformed answer is refused with: the member it names. */
static const struct {
        const char *json;
        int r;
        const char *err;
} bad[] = {
    {"{\"hello\":\"world\"}", -EINVAL, "window: missing"},
    {"{\"window\":{\"start\":1,\"end\":\"2026-11-21T00:00:00Z\"}}", -EINVAL, "window.start"},
    {"{\"window\":{\"start\":\"2026-11-22T00:00:00Z\",\"end\":\"2026-11-21T00:00:00Z\"}}", -EINVAL,
     "start is after the end"},
    {"{" SMALL_WINDOW ",\"by\":\"team\"}", -EINVAL, "by: missing or not an array"},
    {"{" SMALL_WINDOW ",\"by\":[\"colour\"]}", -EINVAL, "by[0]: \"colour\" is no dimension"},
    {"{" SMALL_WINDOW ",\"by\":[\"team\",\"team\"]}", -EINVAL, "by[1]: \"team\" repeated"},
    {"{" SMALL_WINDOW ",\"by\":[\"label:a\",\"label:a\"]}", -EINVAL, "by[1]: label:a repeated"},
    {"{" SMALL_WINDOW ",\"by\":[\"label:\"]}", -EINVAL, "by[0]: a bad label key"},
    {"{" SMALL_WINDOW ",\"by\":[\"label:a\",\"label:b\",\"label:c\",\"label:d\",\"label:e\"]}",
     -EINVAL, "by[4]: more than"},
    {"{" SMALL_WINDOW ",\"by\":[\"team\",\"project\",\"namespace\",\"model\",\"node\",\"pod\","
     "\"workload\",\"capacity_type\",\"label:a\",\"label:b\",\"label:c\",\"label:d\",\"label:e\"]}",
     -EINVAL, "by: more than 12"},
    {"{" SMALL_WINDOW ",\"by\":[7]}", -EINVAL, "by[0]: not a string"},
    {"{" SMALL_WINDOW ",\"by\":[]}", -EINVAL, "groups: missing or not an array"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":{}}", -EINVAL, "groups: missing or not an array"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":[7]}", -EINVAL, "groups[0]: not an object"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":[{}]}", -EINVAL, "groups[0].keys: missing"},
    {"{" SMALL_WINDOW ",\"by\":[\"team\"],\"groups\":[{\"keys\":{\"team\":7}}]}", -EINVAL,
     "groups[0].keys.team: not a string"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":[{\"keys\":{},\"cost_usd\":\"12\"}]}", -EINVAL,
     "groups[0].cost_usd: not a finite number"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":[{\"keys\":{},\"gpu_seconds\":1e999}]}", -EINVAL,
     "groups[0].gpu_seconds: not a finite number"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":[{\"keys\":{},\"gpu_hours\":1e306}]}", -EINVAL,
     "groups[0].gpu_hours: out of range"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":[{\"keys\":{},\"pods\":-1}]}", -EINVAL,
     "groups[0].pods: not a whole number"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":[{\"keys\":{},\"pods\":1.5}]}", -EINVAL,
     "groups[0].pods: not a whole number"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":[{\"keys\":{},\"estimates\":5e9}]}", -EINVAL,
     "groups[0].estimates: not a whole number"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":[{\"keys\":{},\"pods\":null}]}", -EINVAL,
     "groups[0].pods: not a whole number"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":[]}", -EINVAL, "total: missing"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":[],\"total\":[]}", -EINVAL, "total: missing"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":[],\"total\":{},\"idle\":7}", -EINVAL,
     "idle: not an object"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":[],\"total\":{},\"idle\":{\"nodes\":{}}}", -EINVAL,
     "idle.nodes: missing or not an array"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":[],\"total\":{},\"idle\":{\"nodes\":[[]]}}", -EINVAL,
     "idle.nodes[0]: not an object"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":[],\"total\":{},\"idle\":{\"nodes\":[{\"node\":"
     "false}]}}",
     -EINVAL, "idle.nodes[0].node: not a string"},
    {"{" SMALL_WINDOW ",\"by\":[],\"groups\":[],\"total\":{},\"capacity\":{\"cost_usd\":[]}}",
     -EINVAL, "capacity.cost_usd: not a finite number"},
};

START_TEST(test_summary_malformed)
{
        gc_strpool *pool = gc_strpool_new(1 << 20);
        gc_cost_summary sum;
        char err[256];

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                snprintf(err, sizeof(err), "untouched");
                ck_assert_int_eq(decode(bad[i].json, pool, &sum, err, sizeof(err)), bad[i].r);
                ck_assert_msg(strstr(err, bad[i].err) != NULL, "%s: want \"%s\", got \"%s\"",
                              bad[i].json, bad[i].err, err);
        }
        /* Not an object at all. */
        ck_assert_int_eq(gc_client_summary_from_json(NULL, pool, &sum, err, sizeof(err)), -EINVAL);
        gc_strpool_free(pool);
}
END_TEST

typedef struct seen {
        size_t n, stepped, rows;
        char currency[16];
        int64_t start[4];
        int fail; /* the callback's answer from the nth call on (0: never) */
} seen;

static int count(void *ud, const gc_cost_summary *s, const char *currency, int stepped)
{
        seen *v = ud;

        if (v->n < 4)
                v->start[v->n] = s->start;
        v->n++;
        v->stepped += (size_t)stepped;
        v->rows += s->n_rows;
        snprintf(v->currency, sizeof(v->currency), "%s", currency ? currency : "(none)");
        return v->fail && v->n >= 2 ? v->fail : 0;
}

/* "window":{...},"step":"1d","currency":"EUR","sets":[<n summaries>] built in b. */
static void stepped(gc_buf *b, size_t n, const char *step)
{
        gc_buf_puts(b, "{" SMALL_WINDOW ",\"step\":\"1d\",\"currency\":\"EUR\",\"sets\":[");
        for (size_t i = 0; i < n; i++)
                gc_buf_printf(b, "%s%s", i ? "," : "", step);
        gc_buf_puts(b, "]}");
        ck_assert_int_eq(b->err, 0);
}

START_TEST(test_costs_each)
{
        seen v;
        gc_buf b;
        char err[256];

        /* One summary: its own currency (none here). */
        memset(&v, 0, sizeof(v));
        ck_assert_int_eq(gc_client_costs_each(small, strlen(small), count, &v, err, sizeof(err)),
                         0);
        ck_assert_uint_eq(v.n, 1);
        ck_assert_uint_eq(v.stepped, 0);
        ck_assert_str_eq(v.currency, "(none)");
        memset(&v, 0, sizeof(v));
        ck_assert_int_eq(
            gc_client_costs_each(team_week, strlen(team_week), count, &v, err, sizeof(err)), 0);
        ck_assert_str_eq(v.currency, "USD");

        /* Steps leave the currency to the envelope. */
        gc_buf_init(&b, 64 << 20);
        stepped(&b, 3, small);
        memset(&v, 0, sizeof(v));
        ck_assert_int_eq(gc_client_costs_each(b.data, b.len, count, &v, err, sizeof(err)), 0);
        ck_assert_uint_eq(v.n, 3);
        ck_assert_uint_eq(v.stepped, 3);
        ck_assert_uint_eq(v.rows, 3);
        ck_assert_str_eq(v.currency, "EUR");

        /* The callback's error stops the walk and is returned as is. */
        memset(&v, 0, sizeof(v));
        v.fail = -ENOSPC;
        ck_assert_int_eq(gc_client_costs_each(b.data, b.len, count, &v, err, sizeof(err)), -ENOSPC);
        ck_assert_uint_eq(v.n, 2);

        /* A bad step names itself; no step after it is handed on. */
        gc_buf_reset(&b);
        gc_buf_puts(&b, "{\"sets\":[");
        gc_buf_puts(&b, small);
        gc_buf_puts(&b, ",{\"groups\":[]}]}");
        memset(&v, 0, sizeof(v));
        ck_assert_int_eq(gc_client_costs_each(b.data, b.len, count, &v, err, sizeof(err)), -EINVAL);
        ck_assert_uint_eq(v.n, 1);
        ck_assert_str_eq(err, "sets[1]: window: missing or not an object");

        /* More steps than a server ever sends. */
        gc_buf_reset(&b);
        stepped(&b, GC_LEDGER_MAX_STEPS + 1, small);
        memset(&v, 0, sizeof(v));
        ck_assert_int_eq(gc_client_costs_each(b.data, b.len, count, &v, err, sizeof(err)), -E2BIG);
        ck_assert_uint_eq(v.n, 0);
        ck_assert_msg(strstr(err, "sets: more than 1000 items") != NULL, "%s", err);

        /* Not JSON, not an object, the envelope's currency not a string. */
        ck_assert_int_eq(gc_client_costs_each("{\"window\"", 9, count, &v, err, sizeof(err)),
                         -EINVAL);
        ck_assert_str_eq(err, "not JSON");
        ck_assert_int_eq(gc_client_costs_each("[]", 2, count, &v, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "not a JSON object");
        ck_assert_int_eq(gc_client_costs_each("", 0, count, &v, err, sizeof(err)), -EINVAL);
        gc_buf_reset(&b);
        gc_buf_printf(&b, "{\"currency\":7,\"sets\":[%s]}", small);
        ck_assert_int_eq(gc_client_costs_each(b.data, b.len, count, &v, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "currency: not a string");

        /* The server's strings in a message cannot write to a terminal. */
        gc_buf_reset(&b);
        gc_buf_puts(&b, "{" SMALL_WINDOW ",\"by\":[\"\\u001b[2J\\n\"]}");
        ck_assert_int_eq(gc_client_costs_each(b.data, b.len, count, &v, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "by[0]: \"?[2J \" is no dimension");
        gc_buf_free(&b);
}
END_TEST

/* Hostile sizes: refused at the limits, before anything is allocated for them. */
START_TEST(test_costs_hostile)
{
        seen v;
        gc_buf b;
        char err[256];

        gc_buf_init(&b, 64 << 20);
        gc_buf_puts(&b, "{" SMALL_WINDOW ",\"by\":[],\"groups\":[");
        for (size_t i = 0; i <= GC_CLIENT_MAX_ROWS; i++)
                gc_buf_puts(&b, i ? ",{}" : "{}");
        gc_buf_puts(&b, "],\"total\":{}}");
        ck_assert_int_eq(b.err, 0);
        memset(&v, 0, sizeof(v));
        ck_assert_int_eq(gc_client_costs_each(b.data, b.len, count, &v, err, sizeof(err)), -E2BIG);
        ck_assert_msg(strstr(err, "groups: more than 1000000 items") != NULL, "%s", err);

        gc_buf_reset(&b);
        gc_buf_puts(&b, "{" SMALL_WINDOW ",\"by\":[],\"groups\":[],\"total\":{},\"idle\":{"
                        "\"nodes\":[");
        for (size_t i = 0; i <= GC_CLIENT_MAX_NODES; i++)
                gc_buf_puts(&b, i ? ",{}" : "{}");
        gc_buf_puts(&b, "]}}");
        ck_assert_int_eq(gc_client_costs_each(b.data, b.len, count, &v, err, sizeof(err)), -E2BIG);
        ck_assert_msg(strstr(err, "idle.nodes: more than 100000 items") != NULL, "%s", err);

        /* Nesting far past cJSON's limit is not JSON, not a deep recursion. */
        gc_buf_reset(&b);
        for (size_t i = 0; i < 100000; i++)
                gc_buf_puts(&b, "[");
        ck_assert_int_eq(gc_client_costs_each(b.data, b.len, count, &v, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "not JSON");
        ck_assert_uint_eq(v.n, 0);
        gc_buf_free(&b);
}
END_TEST

/* ---- findings ---------------------------------------------------------------------------------
 */

START_TEST(test_findings_table)
{
        static const char doc[] =
            "{\"currency\":\"EUR\",\"findings\":["
            "{\"kind\":\"idle_gpu\",\"subject\":{\"team\":\"ml\",\"namespace\":\"ml\","
            "\"controller\":\"train\",\"pod\":\"train-0\"},\"change\":{\"summary\":\"stop it\"},"
            "\"monthly_savings\":1234.5},"
            "{\"kind\":\"over_request\",\"subject\":{\"namespace\":\"ml\",\"pod\":\"p\"},"
            "\"monthly_savings\":\"lots\"},"
            "{\"kind\":\"idle_capacity\",\"subject\":{\"model\":\"L4\",\"capacity_type\":\"spot\"}}"
            ","
            "{\"kind\":\"k\",\"subject\":{\"node\":\"n1\"}},"
            "{\"kind\":\"k\",\"subject\":{\"namespace\":\"sandbox\"}},"
            "{\"kind\":\"k\",\"subject\":{\"model\":\"T4\"}},"
            "{\"kind\":\"k\",\"subject\":\"the whole fleet\"},"
            "{\"monthly_savings\":1e999}],"
            "\"notes\":[\"usage: 3 pods measured\",7]}";
        gc_buf out;
        char err[256];

        gc_buf_init(&out, 1 << 20);
        ck_assert_msg(gc_client_findings_table(doc, strlen(doc), &out, err, sizeof(err)) == 0, "%s",
                      err);
        ck_assert_msg(strncmp(out.data, "KIND            TEAM             SUBJECT", 40) == 0, "%s",
                      out.data);
        ck_assert_ptr_nonnull(strstr(out.data, "idle_gpu        ml               ml/train"));
        ck_assert_ptr_nonnull(strstr(out.data, "   1234.50 EUR  stop it\n"));
        ck_assert_ptr_nonnull(strstr(out.data, "ml/p "));
        ck_assert_ptr_nonnull(strstr(out.data, "      0.00 EUR"));
        ck_assert_ptr_nonnull(strstr(out.data, "L4 spot "));
        ck_assert_ptr_nonnull(strstr(out.data, "node n1 "));
        ck_assert_ptr_nonnull(strstr(out.data, "namespace sandbox "));
        ck_assert_ptr_nonnull(strstr(out.data, "T4 "));
        ck_assert_ptr_nonnull(strstr(out.data, "the whole fleet "));
        ck_assert_ptr_nonnull(strstr(out.data, "\n?               -                cluster "));
        ck_assert_ptr_nonnull(strstr(out.data, "note: usage: 3 pods measured\n"));
        ck_assert_ptr_null(strstr(out.data, "(no findings)"));

        gc_buf_reset(&out);
        ck_assert_int_eq(gc_client_findings_table("{\"findings\":[]}", 15, &out, err, sizeof(err)),
                         0);
        ck_assert_ptr_nonnull(strstr(out.data, "SAVING/MONTH  CHANGE\n(no findings)\n"));

        gc_buf_reset(&out);
        ck_assert_int_eq(gc_client_findings_table("{\"costs\":[]}", 12, &out, err, sizeof(err)),
                         -EINVAL);
        ck_assert_str_eq(err, "the server's answer holds no \"findings\" (docs/advisor.md)");
        ck_assert_int_eq(gc_client_findings_table(NULL, 0, &out, err, sizeof(err)), -EINVAL);
        gc_buf_free(&out);

        /* Past out's limit: an error that says so, and nothing half-written. */
        gc_buf_init(&out, 100);
        ck_assert_int_eq(gc_client_findings_table(doc, strlen(doc), &out, err, sizeof(err)),
                         -E2BIG);
        ck_assert_msg(strstr(err, "cannot format the findings") != NULL, "%s", err);
        ck_assert_uint_eq(out.len, 0);
        gc_buf_free(&out);
}
END_TEST

/* ---- over HTTP: a one-shot server on 127.0.0.1 ------------------------------------------------
 */

typedef struct server {
        int fd, port;
        pthread_t th;
        const char *response; /* the whole HTTP response; NULL: read and never answer */
        size_t response_len;
        char request[8192];
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
        if (!sv->response) { /* silent: until the client gives up */
                char buf[256];

                while (read(c, buf, sizeof(buf)) > 0)
                        ;
        }
        /* The client may close early (a body over its limit): no SIGPIPE. */
        for (size_t off = 0; sv->response && off < sv->response_len;) {
                ssize_t n = send(c, sv->response + off, sv->response_len - off, MSG_NOSIGNAL);

                if (n <= 0)
                        break;
                off += (size_t)n;
        }
        close(c);
        return NULL;
}

static void server_start(server *sv, const char *response, size_t len)
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
        ck_assert_int_eq(pthread_create(&sv->th, NULL, serve, sv), 0);
}

static void server_stop(server *sv)
{
        pthread_join(sv->th, NULL);
        close(sv->fd);
}

/* A response with a Content-Length (or none: the body ends when the connection does). */
static char *response(const char *status, const char *body, size_t n, int length, size_t *ret_len)
{
        gc_buf b;

        gc_buf_init(&b, 64 << 20);
        gc_buf_printf(&b, "HTTP/1.1 %s\r\nContent-Type: application/json\r\n", status);
        if (length)
                gc_buf_printf(&b, "Content-Length: %zu\r\n", n);
        gc_buf_puts(&b, "Connection: close\r\n\r\n");
        gc_buf_append(&b, body, n);
        ck_assert_int_eq(b.err, 0);
        *ret_len = b.len;
        return gc_buf_steal(&b);
}

typedef struct get {
        int r;
        long status;
        char err[512];
        gc_buf body;
} get;

/* GET path of the server answering resp (NULL: never) with o's options (server filled in). */
static void get_once(gc_client_opts *o, const char *resp, size_t rl, const char *const *params,
                     size_t n_params, get *g, server *sv)
{
        char url[64];

        server_start(sv, resp, rl);
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/", sv->port);
        o->server = url;
        gc_buf_init(&g->body, 64 << 20);
        g->err[0] = '\0';
        g->status = -1;
        g->r = gc_client_get(o, "/api/v1/costs", params, n_params, &g->body, &g->status, g->err,
                             sizeof(g->err));
        server_stop(sv);
        o->server = NULL;
}

START_TEST(test_get_ok)
{
        const char *params[] = {"window", "2026-11-16T00:00:00Z,2026-11-23T00:00:00Z",
                                "by",     "team,project",
                                "step",   NULL,
                                "team",   "a b&c"};
        gc_client_opts o = {.token = "s3cr3t-token"};
        server sv;
        get g;
        size_t rl;
        char *resp = response("200 OK", small, strlen(small), 1, &rl);

        get_once(&o, resp, rl, params, 4, &g, &sv);
        ck_assert_msg(g.r == 0, "%s", g.err);
        ck_assert_int_eq(g.status, 200);
        ck_assert_str_eq(g.body.data, small);
        ck_assert_msg(strstr(sv.request, "GET /api/v1/costs?window=2026-11-16T00%3A00%3A00Z%2C2026-"
                                         "11-23T00%3A00%3A00Z&by=team%2Cproject&team=a%20b%26c "
                                         "HTTP/1.1\r\n") != NULL,
                      "%s", sv.request);
        ck_assert_ptr_nonnull(strstr(sv.request, "Authorization: Bearer s3cr3t-token\r\n"));
        ck_assert_ptr_nonnull(strstr(sv.request, "User-Agent: gpu-cost/"));
        gc_buf_free(&g.body);
        free(resp);
}
END_TEST

START_TEST(test_get_refused)
{
        static const char json[] = "{\"error\":\"window: \\\"fortnight\\\" is not a window\","
                                   "\"parameter\":\"window\",\"status\":400}";
        static const char opencost[] = "{\"code\":404,\"message\":\"no such report\"}";
        gc_client_opts o = {0};
        server sv;
        get g;
        size_t rl;
        char *resp = response("400 Bad Request", json, strlen(json), 1, &rl);
        char page[600];

        get_once(&o, resp, rl, NULL, 0, &g, &sv);
        ck_assert_int_eq(g.r, -EPROTO);
        ck_assert_int_eq(g.status, 400);
        ck_assert_str_eq(g.err, "server answered 400: window: \"fortnight\" is not a window");
        ck_assert_ptr_null(strstr(sv.request, "Authorization"));
        gc_buf_free(&g.body);
        free(resp);

        resp = response("404 Not Found", opencost, strlen(opencost), 1, &rl);
        get_once(&o, resp, rl, NULL, 0, &g, &sv);
        ck_assert_int_eq(g.r, -EPROTO);
        ck_assert_str_eq(g.err, "server answered 404: no such report");
        gc_buf_free(&g.body);
        free(resp);

        /* Not JSON: the body's start, with no control characters left in it. */
        memset(page, 'x', sizeof(page) - 1);
        page[sizeof(page) - 1] = '\0';
        memcpy(page, "<html>\n\x1b[31m", 12);
        resp = response("502 Bad Gateway", page, strlen(page), 1, &rl);
        get_once(&o, resp, rl, NULL, 0, &g, &sv);
        ck_assert_int_eq(g.r, -EPROTO);
        ck_assert_int_eq(g.status, 502);
        ck_assert_msg(strncmp(g.err, "server answered 502: <html> ?[31mxxx", 36) == 0, "%s", g.err);
        ck_assert_uint_eq(strlen(g.err), strlen("server answered 502: ") + 200);
        gc_buf_free(&g.body);
        free(resp);
}
END_TEST

START_TEST(test_get_too_large)
{
        gc_client_opts o = {.max_body = 1000};
        char *big = malloc(1 << 20), *resp;
        server sv;
        get g;
        size_t rl;

        memset(big, ' ', 1 << 20);
        /* Said by its Content-Length. */
        resp = response("200 OK", big, 1001, 1, &rl);
        get_once(&o, resp, rl, NULL, 0, &g, &sv);
        ck_assert_int_eq(g.r, -E2BIG);
        ck_assert_msg(strstr(g.err, "/api/v1/costs: the answer is larger than 1000 bytes") != NULL,
                      "%s", g.err);
        gc_buf_free(&g.body);
        free(resp);
        /* Found while reading: a megabyte without a length, cut at 64 KiB. */
        o.max_body = 64 << 10;
        resp = response("200 OK", big, 1 << 20, 0, &rl);
        get_once(&o, resp, rl, NULL, 0, &g, &sv);
        ck_assert_int_eq(g.r, -E2BIG);
        ck_assert_msg(strstr(g.err, "the answer is larger than 64 KiB") != NULL, "%s", g.err);
        ck_assert_uint_le(g.body.len, 64 << 10);
        gc_buf_free(&g.body);
        free(resp);
        /* Exactly at the limit is fine. */
        o.max_body = 1000;
        resp = response("200 OK", big, 1000, 0, &rl);
        get_once(&o, resp, rl, NULL, 0, &g, &sv);
        ck_assert_msg(g.r == 0, "%s", g.err);
        ck_assert_uint_eq(g.body.len, 1000);
        gc_buf_free(&g.body);
        free(resp);
        free(big);
}
END_TEST

START_TEST(test_get_timeout_and_no_answer)
{
        gc_client_opts o = {.timeout_s = 1};
        server sv;
        get g;
        char err[256];
        long status = -1;
        gc_buf body;

        get_once(&o, NULL, 0, NULL, 0, &g, &sv);
        ck_assert_int_eq(g.r, -ETIMEDOUT);
        ck_assert_int_eq(g.status, 0);
        ck_assert_msg(strstr(g.err, "/api/v1/costs: ") != NULL, "%s", g.err);
        gc_buf_free(&g.body);

        /* Nobody listening. */
        gc_buf_init(&body, 1 << 20);
        o.server = "http://127.0.0.1:1";
        ck_assert_int_eq(gc_client_get(&o, "/healthz", NULL, 0, &body, &status, err, sizeof(err)),
                         -EIO);
        ck_assert_int_eq(status, 0);
        ck_assert_msg(strstr(err, "http://127.0.0.1:1/healthz: ") == err, "%s", err);
        gc_buf_free(&body);
}
END_TEST

START_TEST(test_get_bad_arguments)
{
        gc_client_opts o = {.server = "ftp://example.com"};
        char err[256];
        long status = -1;
        gc_buf body;

        gc_buf_init(&body, 1 << 20);
        ck_assert_int_eq(gc_client_get(&o, "/x", NULL, 0, &body, &status, err, sizeof(err)),
                         -EINVAL);
        ck_assert_int_eq(status, 0);
        ck_assert_ptr_nonnull(strstr(err, "http://"));
        o.server = "http://127.0.0.1:1";
        ck_assert_int_eq(gc_client_get(&o, "x", NULL, 0, &body, &status, err, sizeof(err)),
                         -EINVAL);
        o.token = "a\nb";
        ck_assert_int_eq(gc_client_get(&o, "/x", NULL, 0, &body, &status, err, sizeof(err)),
                         -EINVAL);
        ck_assert_ptr_null(strstr(err, "a\nb"));
        o.token = NULL;
        ck_assert_int_eq(gc_client_get(&o, "/x", (const char *const[]){NULL, "v"}, 1, &body,
                                       &status, err, sizeof(err)),
                         -EINVAL);
        ck_assert_int_eq(gc_client_get(NULL, "/x", NULL, 0, &body, &status, err, sizeof(err)),
                         -EINVAL);
        gc_buf_free(&body);
}
END_TEST

static Suite *client_suite(void)
{
        Suite *s = suite_create("client");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_summary_round_trip);
        tcase_add_test(tc, test_summary_before_rename);
        tcase_add_test(tc, test_summary_labels_and_hours);
        tcase_add_test(tc, test_summary_malformed);
        tcase_add_test(tc, test_costs_each);
        tcase_add_test(tc, test_costs_hostile);
        tcase_add_test(tc, test_findings_table);
        tcase_add_test(tc, test_get_ok);
        tcase_add_test(tc, test_get_refused);
        tcase_add_test(tc, test_get_too_large);
        tcase_add_test(tc, test_get_timeout_and_no_answer);
        tcase_add_test(tc, test_get_bad_arguments);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(client_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
