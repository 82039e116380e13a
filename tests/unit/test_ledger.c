/* test_ledger: intervals, clipping, prices, grouping, filters, idle, attribution, dims, fold. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/ledger.h"

#define T0 ((int64_t)1767225600) /* 2026-01-01T00:00:00Z, on an hour */
#define H  ((int64_t)3600)

static gc_strpool *pool;
static gc_ledger *led;

static void setup(void)
{
        gc_ledger_opts o = {0};

        pool = gc_strpool_new(64u << 20);
        ck_assert_ptr_nonnull(pool);
        o.pool = pool;
        led = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(led);
}

static void teardown(void)
{
        led = gc_ledger_free(led);
        pool = gc_strpool_free(pool);
}

typedef struct pod_spec {
        const char *uid, *ns, *team, *project, *model, *ctype, *node;
        double geq, price;
        int64_t start, end;
        uint32_t flags;
} pod_spec;

static int put(gc_ledger *l, const pod_spec *p)
{
        gc_usage u = {0};

        u.pod_uid = p->uid;
        u.dims[GC_DIM_NAMESPACE] = p->ns;
        u.dims[GC_DIM_TEAM] = p->team;
        u.dims[GC_DIM_PROJECT] = p->project;
        u.dims[GC_DIM_MODEL] = p->model;
        u.dims[GC_DIM_CAPACITY_TYPE] = p->ctype;
        u.dims[GC_DIM_NODE] = p->node;
        u.dims[GC_DIM_POD] = p->uid;
        u.geq = p->geq;
        u.price_per_gpu_hour = p->price;
        u.start = p->start;
        u.end = p->end;
        u.flags = p->flags;
        return gc_ledger_put_usage(l, &u);
}

static int put_simple(const char *uid, double geq, double price, int64_t start, int64_t end)
{
        pod_spec p = {uid,  "ns", "team", "proj", "H100", "on-demand",
                      "n1", geq,  price,  start,  end,    0};

        return put(led, &p);
}

static int put_cap(gc_ledger *l, const char *node, double geq, double price, int64_t start,
                   int64_t end)
{
        gc_capacity c = {node, "H100", "on-demand", geq, price, start, end};

        return gc_ledger_put_capacity(l, &c);
}

static const char *const label_keys[] = {"cost-center", "exp"};
static const gc_label_keys lkeys = {{"cost-center", "exp"}, 2};

static gc_query window(int64_t start, int64_t end, int64_t now, const char *by)
{
        gc_query q;
        char err[256];

        memset(&q, 0, sizeof(q));
        q.start = start;
        q.end = end;
        q.now = now;
        ck_assert_msg(gc_dims_parse(by, &lkeys, q.by, &q.n_by, err, sizeof(err)) == 0, "%s", err);
        return q;
}

static const gc_cost_row *row_of(const gc_cost_summary *s, gc_dim d, const char *v)
{
        for (size_t i = 0; i < s->n_rows; i++)
                if (s->rows[i].keys[d] && strcmp(s->rows[i].keys[d], v) == 0)
                        return &s->rows[i];
        return NULL;
}

/* ---- exactness and clipping ----------------------------------------------------------------- */

START_TEST(test_thirty_seconds)
{
        gc_query q = window(T0, T0 + H, 0, "");
        gc_cost_summary s = {0};

        ck_assert_int_eq(put_simple("p", 1, 3.6, T0 + 10, T0 + 40), 0);
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert_uint_eq(s.n_rows, 1);
        /* 30 s x 1 GPU = 30 GPU-seconds; 30/3600 h x 3.6 $/h = 0.03 $. */
        ck_assert(s.total.gpu_seconds == 30.0);
        ck_assert_double_eq_tol(s.total.cost, 0.03, 1e-12);
        ck_assert_uint_eq(s.total.pods, 1);
        ck_assert(s.rows[0].gpu_seconds == 30.0);
        gc_cost_summary_free(&s);
}
END_TEST

static const struct {
        const char *what;
        int64_t start, end, now; /* offsets from T0; end -1 = open */
        double gpu_seconds;      /* window is [T0+1000, T0+2000), geq 2 */
} clip_cases[] = {
    {"wholly before", 0, 500, 0, 0},
    {"wholly after", 2500, 3000, 0, 0},
    {"ends at the window start", 500, 1000, 0, 0},
    {"starts at the window end", 2000, 2100, 0, 0},
    {"straddles the start", 900, 1100, 0, 2 * 100},
    {"straddles the end", 1900, 2100, 0, 2 * 100},
    {"inside", 1200, 1300, 0, 2 * 100},
    {"contains the window", 0, 5000, 0, 2 * 1000},
    {"open, now inside", 1200, -1, 1500, 2 * 300},
    {"open, no now", 1200, -1, 0, 2 * 800},
    {"open, now after the window", 1200, -1, 9000, 2 * 800},
    {"open, now before it started", 1200, -1, 1100, 0},
    {"closed past now is still counted", 1200, 1800, 1500, 2 * 600},
};

START_TEST(test_clipping)
{
        gc_query q;
        gc_cost_summary s = {0};
        int64_t end = clip_cases[_i].end < 0 ? GC_OPEN : T0 + clip_cases[_i].end;
        int64_t now = clip_cases[_i].now ? T0 + clip_cases[_i].now : 0;

        q = window(T0 + 1000, T0 + 2000, now, "pod");
        ck_assert_int_eq(put_simple("p", 2, 1, T0 + clip_cases[_i].start, end), 0);
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert_msg(s.total.gpu_seconds == clip_cases[_i].gpu_seconds, "%s: got %g want %g",
                      clip_cases[_i].what, s.total.gpu_seconds, clip_cases[_i].gpu_seconds);
        ck_assert_uint_eq(s.n_rows, clip_cases[_i].gpu_seconds > 0);
        ck_assert_uint_eq(s.total.pods, clip_cases[_i].gpu_seconds > 0);
        gc_cost_summary_free(&s);
}
END_TEST

START_TEST(test_mig_share_price)
{
        gc_query q = window(T0, T0 + 24 * H, 0, "");
        gc_cost_summary s = {0};

        /* A MIG slice worth 0.25 of an H100 at 12.29 $/GPU-h, held 2 h. */
        ck_assert_int_eq(put_simple("mig", 0.25, 12.29, T0 + 3 * H, T0 + 5 * H), 0);
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert_double_eq_tol(s.total.gpu_seconds / 3600.0, 0.5, 1e-12); /* GPU-hours */
        ck_assert_double_eq_tol(s.total.cost, 6.145, 1e-9);                /* 12.29 x 0.25 x 2 */
        gc_cost_summary_free(&s);
}
END_TEST

/* ---- grouping, ordering, filters ------------------------------------------------------------ */

static const pod_spec group_pods[] = {
    /* uid  ns    team   project            model   ctype  node geq price start end */
    {"a", "ml", "ml", "llm", "H100", "od", "n1", 1, 2, T0, T0 + H, 0},
    {"b", "ml", "ml", "llm", "H100", "od", "n2", 2, 2, T0, T0 + H, GC_USAGE_F_ESTIMATE},
    {"c", "ml", "ml", "vision", "A100", "spot", "n1", 1, 4, T0, T0 + H, 0},
    {"d", "web", "web", GC_UNATTRIBUTED, "A100", "spot", "n1", 1, 2, T0, T0 + H / 2, 0},
};

static void load_group_pods(void)
{
        for (size_t i = 0; i < sizeof(group_pods) / sizeof(group_pods[0]); i++)
                ck_assert_int_eq(put(led, &group_pods[i]), 0);
}

START_TEST(test_group_team_project)
{
        gc_query q = window(T0, T0 + H, 0, "team,project");
        gc_cost_summary s = {0};

        load_group_pods();
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert_uint_eq(s.n_rows, 3);
        ck_assert_uint_eq(s.n_by, 2);
        /* (ml,llm): 1x3600 + 2x3600 GPU-s, 2 + 4 $; (ml,vision) 3600 GPU-s, 4 $; (web,-) 1 $. */
        ck_assert_str_eq(s.rows[0].keys[GC_DIM_TEAM], "ml");
        ck_assert_str_eq(s.rows[0].keys[GC_DIM_PROJECT], "llm");
        ck_assert_ptr_null(s.rows[0].keys[GC_DIM_NODE]);
        ck_assert(s.rows[0].gpu_seconds == 10800.0);
        ck_assert_double_eq_tol(s.rows[0].cost, 6.0, 1e-12);
        ck_assert_uint_eq(s.rows[0].pods, 2);
        ck_assert_uint_eq(s.rows[0].estimates, 1);
        ck_assert_str_eq(s.rows[1].keys[GC_DIM_PROJECT], "vision");
        ck_assert_double_eq_tol(s.rows[1].cost, 4.0, 1e-12);
        ck_assert_str_eq(s.rows[2].keys[GC_DIM_TEAM], "web");
        ck_assert_double_eq_tol(s.rows[2].cost, 1.0, 1e-12);
        ck_assert(s.total.gpu_seconds == 3600.0 + 7200.0 + 3600.0 + 1800.0);
        ck_assert_double_eq_tol(s.total.cost, 11.0, 1e-12);
        ck_assert_uint_eq(s.total.pods, 4);
        ck_assert(s.unattributed.gpu_seconds == 1800.0);
        ck_assert_double_eq_tol(s.unattributed.cost, 1.0, 1e-12);
        ck_assert_uint_eq(s.unattributed.pods, 1);
        gc_cost_summary_free(&s);
}
END_TEST

START_TEST(test_group_node)
{
        gc_query q = window(T0, T0 + H, 0, "node");
        gc_cost_summary s = {0};

        load_group_pods();
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert_uint_eq(s.n_rows, 2);
        /* n1: a 2 $ + c 4 $ + d 1 $ = 7 $, 9000 GPU-s; n2: b 4 $, 7200 GPU-s. */
        ck_assert_str_eq(s.rows[0].keys[GC_DIM_NODE], "n1");
        ck_assert(s.rows[0].gpu_seconds == 9000.0);
        ck_assert_double_eq_tol(s.rows[0].cost, 7.0, 1e-12);
        ck_assert_uint_eq(s.rows[0].pods, 3);
        ck_assert_str_eq(s.rows[1].keys[GC_DIM_NODE], "n2");
        ck_assert(s.rows[1].gpu_seconds == 7200.0);
        gc_cost_summary_free(&s);
}
END_TEST

START_TEST(test_order_ties)
{
        gc_query q = window(T0, T0 + H, 0, "team");
        gc_cost_summary s = {0};
        /* Same cost (2 $): "y" holds more GPU-seconds and leads; "b" and "a" tie fully. */
        pod_spec p[] = {
            {"1", "n", "b", "p", "m", "c", "n", 1, 2, T0, T0 + H, 0},
            {"2", "n", "a", "p", "m", "c", "n", 1, 2, T0, T0 + H, 0},
            {"3", "n", "y", "p", "m", "c", "n", 2, 1, T0, T0 + H, 0},
            {"4", "n", "z", "p", "m", "c", "n", 1, 9, T0, T0 + H, 0},
        };

        for (size_t i = 0; i < 4; i++)
                ck_assert_int_eq(put(led, &p[i]), 0);
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert_uint_eq(s.n_rows, 4);
        ck_assert_str_eq(s.rows[0].keys[GC_DIM_TEAM], "z");
        ck_assert_str_eq(s.rows[1].keys[GC_DIM_TEAM], "y");
        ck_assert_str_eq(s.rows[2].keys[GC_DIM_TEAM], "a");
        ck_assert_str_eq(s.rows[3].keys[GC_DIM_TEAM], "b");
        gc_cost_summary_free(&s);
}
END_TEST

static const struct {
        gc_dim dim;
        const char *value;
        size_t rows; /* grouped by project */
        double cost;
} filter_cases[] = {
    {GC_DIM_TEAM, "ml", 2, 10.0},   /* a 2 + b 4 + c 4 */
    {GC_DIM_NODE, "n2", 1, 4.0},    /* b */
    {GC_DIM_MODEL, "A100", 2, 5.0}, /* c 4 + d 1 */
    {GC_DIM_CAPACITY_TYPE, "spot", 2, 5.0},
    {GC_DIM_NAMESPACE, "web", 1, 1.0},
    {GC_DIM_POD, "c", 1, 4.0},
    {GC_DIM_TEAM, "nobody", 0, 0.0},
    {GC_DIM_PROJECT, GC_UNATTRIBUTED, 1, 1.0},
};

START_TEST(test_filters)
{
        gc_query q = window(T0, T0 + H, 0, "project");
        gc_cost_summary s = {0};
        char value[64];

        load_group_pods();
        /* A caller's own copy, not the pooled string: filters compare by value. */
        snprintf(value, sizeof(value), "%s", filter_cases[_i].value);
        q.filter[filter_cases[_i].dim] = value;
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert_uint_eq(s.n_rows, filter_cases[_i].rows);
        ck_assert_double_eq_tol(s.total.cost, filter_cases[_i].cost, 1e-12);
        gc_cost_summary_free(&s);
}
END_TEST

START_TEST(test_filters_combined)
{
        gc_query q = window(T0, T0 + H, 0, "pod");
        gc_cost_summary s = {0};

        load_group_pods();
        q.filter[GC_DIM_TEAM] = "ml";
        q.filter[GC_DIM_NODE] = "n1";
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert_uint_eq(s.n_rows, 2); /* a and c */
        ck_assert_double_eq_tol(s.total.cost, 6.0, 1e-12);
        ck_assert_ptr_nonnull(row_of(&s, GC_DIM_POD, "a"));
        ck_assert_ptr_nonnull(row_of(&s, GC_DIM_POD, "c"));
        gc_cost_summary_free(&s);
}
END_TEST

/* ---- idle capacity -------------------------------------------------------------------------- */

START_TEST(test_idle)
{
        gc_query q = window(T0, T0 + 10 * H, 0, "");
        gc_cost_summary s = {0};
        pod_spec over[] = {
            {"o1", "x", "t", "p", "H100", "od", "n2", 1, 5, T0, T0 + H, 0},
            {"o2", "x", "t", "p", "H100", "od", "n2", 1, 5, T0, T0 + H, 0},
        };

        /* n1: 4 GPUs for 10 h at 3 $/h, one GPU held 5 h -> 35 GPU-h idle, 105 $. */
        ck_assert_int_eq(put_cap(led, "n1", 4, 3, T0, T0 + 10 * H), 0);
        ck_assert_int_eq(put_simple("held", 1, 3, T0, T0 + 5 * H), 0);
        /* n2: 1 GPU for 1 h at 5 $/h, but 2 GPUs held (overcommit) -> idle clamps at 0. */
        ck_assert_int_eq(put_cap(led, "n2", 1, 5, T0, T0 + H), 0);
        ck_assert_int_eq(put(led, &over[0]), 0);
        ck_assert_int_eq(put(led, &over[1]), 0);

        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert(s.capacity.gpu_seconds == (40.0 + 1.0) * 3600);
        ck_assert_double_eq_tol(s.capacity.cost, 40 * 3.0 + 5.0, 1e-9);
        ck_assert_uint_eq(s.n_idle_nodes, 2);
        ck_assert_str_eq(s.idle_nodes[0].keys[GC_DIM_NODE], "n1");
        ck_assert_str_eq(s.idle_nodes[0].keys[GC_DIM_MODEL], "H100");
        ck_assert_str_eq(s.idle_nodes[0].keys[GC_DIM_CAPACITY_TYPE], "on-demand");
        ck_assert(s.idle_nodes[0].gpu_seconds == 35.0 * 3600);
        ck_assert_double_eq_tol(s.idle_nodes[0].cost, 105.0, 1e-9);
        ck_assert_str_eq(s.idle_nodes[1].keys[GC_DIM_NODE], "n2");
        ck_assert(s.idle_nodes[1].gpu_seconds == 0.0);
        ck_assert(s.idle_nodes[1].cost == 0.0);
        ck_assert(s.idle.gpu_seconds == 35.0 * 3600);
        ck_assert_double_eq_tol(s.idle.cost, 105.0, 1e-9);
        gc_cost_summary_free(&s);

        /* Team filters do not narrow idle; a node filter does. */
        q.filter[GC_DIM_TEAM] = "nobody";
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert(s.total.gpu_seconds == 0.0);
        ck_assert(s.idle.gpu_seconds == 35.0 * 3600);
        gc_cost_summary_free(&s);
        q.filter[GC_DIM_TEAM] = NULL;
        q.filter[GC_DIM_NODE] = "n2";
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert_uint_eq(s.n_idle_nodes, 1);
        ck_assert(s.idle.gpu_seconds == 0.0);
        ck_assert(s.capacity.gpu_seconds == 3600.0);
        gc_cost_summary_free(&s);

        /* The second half: n1 offers 20 GPU-h and the pod had ended, so all 20 are idle. */
        q = window(T0 + 5 * H, T0 + 10 * H, 0, "");
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert(s.idle.gpu_seconds == 20.0 * 3600);
        ck_assert_double_eq_tol(s.idle.cost, 60.0, 1e-9);
        gc_cost_summary_free(&s);
}
END_TEST

/* ---- attribution ---------------------------------------------------------------------------- */

static const struct {
        const char *pod_team, *pod_project, *ns_team, *ns_project; /* NULL = no label */
        const char *pod_ns;
        const char *team, *project; /* expected */
        int have_ns;
        gc_attr_source team_src, project_src;
} attr_cases[] = {
    /* pod team, project; namespace team, project; pod's namespace -> team, project */
    {"a", "p", "nt", "np", "ns1", "a", "p", 1, GC_ATTR_POD_LABEL, GC_ATTR_POD_LABEL},
    {"a", NULL, "nt", "np", "ns1", "a", "np", 1, GC_ATTR_POD_LABEL, GC_ATTR_NAMESPACE_LABEL},
    {NULL, "p", "nt", NULL, "ns1", "nt", "p", 1, GC_ATTR_NAMESPACE_LABEL, GC_ATTR_POD_LABEL},
    {NULL, NULL, "nt", NULL, "ns1", "nt", "map-p1", 1, GC_ATTR_NAMESPACE_LABEL, GC_ATTR_CONFIG_MAP},
    {NULL, NULL, NULL, NULL, "ns1", "map-t1", "map-p1", 1, GC_ATTR_CONFIG_MAP, GC_ATTR_CONFIG_MAP},
    /* No namespace record: the maps still apply by the pod's namespace. */
    {NULL, NULL, NULL, NULL, "ns1", "map-t1", "map-p1", 0, GC_ATTR_CONFIG_MAP, GC_ATTR_CONFIG_MAP},
    /* ns2 is in the team map only. */
    {NULL, NULL, NULL, NULL, "ns2", "map-t2", GC_UNATTRIBUTED, 0, GC_ATTR_CONFIG_MAP, GC_ATTR_NONE},
    {NULL, NULL, NULL, NULL, "other", GC_UNATTRIBUTED, GC_UNATTRIBUTED, 0, GC_ATTR_NONE,
     GC_ATTR_NONE},
    /* An empty label value attributes nothing. */
    {"", NULL, "nt", NULL, "other", "nt", GC_UNATTRIBUTED, 1, GC_ATTR_NAMESPACE_LABEL,
     GC_ATTR_NONE},
};

START_TEST(test_attribution)
{
        static const gc_label teams[] = {{"ns1", "map-t1"}, {"ns2", "map-t2"}};
        static const gc_label projects[] = {{"ns1", "map-p1"}};
        gc_attribution a = {teams, 2, projects, 1};
        gc_pod pod;
        gc_namespace ns;
        const char *team = NULL, *project = NULL;
        gc_attr_source ts = GC_ATTR_NONE, ps = GC_ATTR_NONE;

        memset(&pod, 0, sizeof(pod));
        memset(&ns, 0, sizeof(ns));
        pod.uid = "u";
        pod.ns = attr_cases[_i].pod_ns;
        pod.team = attr_cases[_i].pod_team;
        pod.project = attr_cases[_i].pod_project;
        ns.name = attr_cases[_i].pod_ns;
        ns.team = attr_cases[_i].ns_team;
        ns.project = attr_cases[_i].ns_project;
        gc_attribute(&pod, attr_cases[_i].have_ns ? &ns : NULL, &a, &team, &ts, &project, &ps);
        ck_assert_str_eq(team, attr_cases[_i].team);
        ck_assert_int_eq(ts, attr_cases[_i].team_src);
        ck_assert_str_eq(project, attr_cases[_i].project);
        ck_assert_int_eq(ps, attr_cases[_i].project_src);
}
END_TEST

START_TEST(test_attribution_no_config)
{
        gc_pod pod;
        const char *team = NULL, *project = NULL;
        gc_attr_source ts = GC_ATTR_POD_LABEL, ps = GC_ATTR_POD_LABEL;

        memset(&pod, 0, sizeof(pod));
        pod.ns = "x";
        pod.project = "p";
        gc_attribute(&pod, NULL, NULL, &team, &ts, &project, &ps);
        ck_assert_str_eq(team, GC_UNATTRIBUTED);
        ck_assert_int_eq(ts, GC_ATTR_NONE);
        ck_assert_str_eq(project, "p");
        ck_assert_int_eq(ps, GC_ATTR_POD_LABEL);
}
END_TEST

/* ---- dimensions ----------------------------------------------------------------------------- */

static const struct {
        const char *csv;
        size_t n;
        const char *err_has; /* a word the error must name */
        int rc;
        gc_dim dims[3];
} dims_cases[] = {
    {"team,project", 2, NULL, 0, {GC_DIM_TEAM, GC_DIM_PROJECT}},
    {"ns, gpu_model", 2, NULL, 0, {GC_DIM_NAMESPACE, GC_DIM_MODEL}},
    {"capacity-type", 1, NULL, 0, {GC_DIM_CAPACITY_TYPE}},
    {"capacity,node,pod", 3, NULL, 0, {GC_DIM_CAPACITY_TYPE, GC_DIM_NODE, GC_DIM_POD}},
    {"capacity_type", 1, NULL, 0, {GC_DIM_CAPACITY_TYPE}},
    {"", 0, NULL, 0, {0}},
    {"team,bogus", 0, "bogus", -EINVAL, {0}},
    {"Team", 0, "Team", -EINVAL, {0}},
    {"team,team", 0, "duplicate", -EINVAL, {0}},
    {"ns,namespace", 0, "namespace", -EINVAL, {0}},
    {"team,", 0, "empty", -EINVAL, {0}},
    {",team", 0, "empty", -EINVAL, {0}},
};

START_TEST(test_dims_parse)
{
        gc_dim d[GC_KEY_COUNT];
        size_t n = 99;
        char err[128] = "";
        int rc = gc_dims_parse(dims_cases[_i].csv, NULL, d, &n, err, sizeof(err));

        ck_assert_int_eq(rc, dims_cases[_i].rc);
        if (rc == 0) {
                ck_assert_uint_eq(n, dims_cases[_i].n);
                for (size_t i = 0; i < n; i++)
                        ck_assert_int_eq(d[i], dims_cases[_i].dims[i]);
        } else {
                ck_assert_uint_eq(n, 99); /* untouched on failure */
                ck_assert_msg(strstr(err, dims_cases[_i].err_has), "error \"%s\" lacks \"%s\"", err,
                              dims_cases[_i].err_has);
        }
}
END_TEST

START_TEST(test_dim_names)
{
        static const char *const names[] = {"namespace",     "team", "project", "model",
                                            "capacity_type", "node", "pod",     "workload"};
        gc_dim d;

        for (size_t i = 0; i < GC_DIM_COUNT; i++) {
                ck_assert_str_eq(gc_dim_name((gc_dim)i), names[i]);
                ck_assert_int_eq(gc_dim_parse(names[i], strlen(names[i]), &d), 0);
                ck_assert_int_eq(d, (gc_dim)i);
        }
        ck_assert_ptr_null(gc_dim_name(GC_DIM_COUNT));
        ck_assert_int_eq(gc_dim_parse("teamwork", 4, &d), 0); /* only n bytes are read */
        ck_assert_int_eq(d, GC_DIM_TEAM);
        ck_assert_int_eq(gc_dim_parse("teamwork", 8, &d), -EINVAL);
        ck_assert_int_eq(gc_dim_parse("controller", 10, &d), 0); /* OpenCost's word */
        ck_assert_int_eq(d, GC_DIM_WORKLOAD);
}
END_TEST

/* ---- table operations and limits ------------------------------------------------------------ */

START_TEST(test_pieces_count_one_pod)
{
        /* One pod as three contiguous pieces (a shared DRA claim gaining and losing a holder):
         * 1.0 over [0, 2 h), 0.5 over [2 h, 3 h), 1.0 from 3 h on. Every piece carries the
         * pod's dimensions; only the key differs. */
        static const struct {
                const char *key;
                double geq;
                int64_t start, end;
                uint32_t flags;
        } pieces[] = {{"a", 1.0, T0, T0 + 2 * H, 0},
                      {"a#dra1", 0.5, T0 + 2 * H, T0 + 3 * H, GC_USAGE_F_PART},
                      {"a#dra2", 1.0, T0 + 3 * H, GC_OPEN, GC_USAGE_F_PART}};
        gc_cost_summary s = {0}, steps[4];
        gc_query q;

        for (size_t i = 0; i < 3; i++) {
                gc_usage u = {0};

                u.pod_uid = pieces[i].key;
                u.dims[GC_DIM_NAMESPACE] = "ns";
                u.dims[GC_DIM_POD] = "a";
                u.dims[GC_DIM_NODE] = "n1";
                u.geq = pieces[i].geq;
                u.price_per_gpu_hour = 2.0;
                u.start = pieces[i].start;
                u.end = pieces[i].end;
                u.flags = pieces[i].flags;
                ck_assert_int_eq(gc_ledger_put_usage(led, &u), 0);
        }
        /* Grouped by pod, the pieces are one row (their dimensions are the pod's). */
        q = window(T0, T0 + 4 * H, 0, "pod");
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert_uint_eq(s.n_rows, 1);
        ck_assert(s.rows[0].gpu_seconds == 3.5 * H);
        ck_assert(s.rows[0].cost == 7.0);
        ck_assert_uint_eq(s.rows[0].pods, 1);
        ck_assert_uint_eq(s.total.pods, 1);
        gc_cost_summary_free(&s);
        /* A window seeing only later pieces counts the pod once. */
        q = window(T0 + 2 * H + 1800, T0 + 4 * H, 0, "");
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert_uint_eq(s.total.pods, 1);
        ck_assert(s.total.gpu_seconds == 0.5 * 1800 + 1.0 * H);
        gc_cost_summary_free(&s);
        /* Hour steps: each counts the pod once, whichever piece covers it. */
        q = window(T0, T0 + 4 * H, 0, "");
        ck_assert_int_eq(gc_ledger_query_steps(led, &q, H, steps, 4), 0);
        for (int i = 0; i < 4; i++) {
                ck_assert_uint_eq(steps[i].total.pods, 1);
                gc_cost_summary_free(&steps[i]);
        }
}
END_TEST

START_TEST(test_upsert_replaces)
{
        gc_query q = window(T0, T0 + H, 0, "");
        gc_cost_summary s = {0};
        gc_ledger_stats st;

        ck_assert_int_eq(put_simple("p", 1, 1, T0, GC_OPEN), 0);
        gc_ledger_stats_get(led, &st);
        ck_assert_uint_eq(st.intervals, 1);
        ck_assert_uint_eq(st.open_intervals, 1);
        ck_assert_int_eq(put_simple("p", 2, 1, T0, T0 + 50), 0);
        gc_ledger_stats_get(led, &st);
        ck_assert_uint_eq(st.intervals, 1);
        ck_assert_uint_eq(st.open_intervals, 0);
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert(s.total.gpu_seconds == 100.0); /* 2 GPUs x 50 s, not the open interval */
        ck_assert_uint_eq(s.total.pods, 1);
        gc_cost_summary_free(&s);
}
END_TEST

START_TEST(test_forget_removes)
{
        gc_query q = window(T0, T0 + H, 0, "pod");
        gc_cost_summary s = {0};
        gc_ledger_stats st;
        char uid[16];

        ck_assert_int_eq(put_simple("a", 1, 1, T0, T0 + 10), 0);
        ck_assert_int_eq(put_simple("b", 1, 1, T0, T0 + 20), 0);
        ck_assert_int_eq(put_simple("c", 1, 1, T0, GC_OPEN), 0);
        ck_assert_int_eq(gc_ledger_forget_usage(led, "a"), 0);
        ck_assert_int_eq(gc_ledger_forget_usage(led, "a"), -ENOENT);
        ck_assert_int_eq(gc_ledger_forget_usage(led, "never-seen"), -ENOENT);
        /* "c" moved into a's place; it must still be found, by a caller's own copy too. */
        ck_assert_int_eq(put_simple("c", 1, 1, T0, T0 + 30), 0);
        gc_ledger_stats_get(led, &st);
        ck_assert_uint_eq(st.intervals, 2);
        ck_assert_uint_eq(st.open_intervals, 0);
        snprintf(uid, sizeof(uid), "%s", "c");
        ck_assert_int_eq(gc_ledger_forget_usage(led, uid), 0);
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert_uint_eq(s.n_rows, 1);
        ck_assert_str_eq(s.rows[0].keys[GC_DIM_POD], "b");
        ck_assert(s.total.gpu_seconds == 20.0);
        gc_cost_summary_free(&s);
}
END_TEST

START_TEST(test_many_puts_and_forgets)
{
        gc_query q = window(T0, T0 + H, 0, "");
        gc_cost_summary s = {0};
        char uid[32];

        /* Enough to grow the index several times and shift probe runs on delete. */
        for (int i = 0; i < 5000; i++) {
                snprintf(uid, sizeof(uid), "pod-%d", i);
                ck_assert_int_eq(put_simple(uid, 1, 1, T0, T0 + 1), 0);
        }
        for (int i = 0; i < 5000; i += 2) {
                snprintf(uid, sizeof(uid), "pod-%d", i);
                ck_assert_int_eq(gc_ledger_forget_usage(led, uid), 0);
        }
        for (int i = 0; i < 5000; i++) {
                snprintf(uid, sizeof(uid), "pod-%d", i);
                ck_assert_int_eq(gc_ledger_forget_usage(led, uid), i % 2 ? 0 : -ENOENT);
        }
        ck_assert_int_eq(put_simple("last", 1, 1, T0, T0 + 7), 0);
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert(s.total.gpu_seconds == 7.0);
        gc_cost_summary_free(&s);
}
END_TEST

START_TEST(test_limits)
{
        gc_ledger_opts o = {0};
        gc_ledger *l;
        gc_ledger_stats st;
        gc_query q = window(T0, T0 + 4 * H, 0, "");
        gc_cost_summary s = {0};
        pod_spec p = {"p1", "n", "t", "p", "m", "c", "node", 1, 1, T0, T0 + 3 * H, 0};

        o.pool = pool;
        o.max_intervals = 2;
        o.max_rollup_rows = 2;
        l = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(l);
        ck_assert_int_eq(put(l, &p), 0);
        p.uid = "p2";
        ck_assert_int_eq(put(l, &p), 0);
        p.uid = "p3";
        ck_assert_int_eq(put(l, &p), -E2BIG);
        p.uid = "p2"; /* replacing is not growing */
        ck_assert_int_eq(put(l, &p), 0);
        ck_assert_int_eq(put_cap(l, "n1", 1, 1, T0, GC_OPEN), 0);
        ck_assert_int_eq(put_cap(l, "n2", 1, 1, T0, GC_OPEN), 0);
        ck_assert_int_eq(put_cap(l, "n3", 1, 1, T0, GC_OPEN), -E2BIG);

        /* Folding a 3-hour pod needs 3 rows; only 2 are allowed, so nothing is folded. */
        ck_assert_int_eq(gc_ledger_fold(l, T0 + 4 * H, 0), -E2BIG);
        gc_ledger_stats_get(l, &st);
        ck_assert_uint_eq(st.intervals, 2);
        ck_assert_uint_eq(st.rollup_rows, 0);
        ck_assert_int_eq(gc_ledger_query(l, &q, &s), 0);
        ck_assert(s.total.gpu_seconds == 2 * 3 * 3600.0);
        gc_cost_summary_free(&s);
        ck_assert_ptr_null(gc_ledger_free(l));

        o.max_intervals = (size_t)1 << 30;
        errno = 0;
        ck_assert_ptr_null(gc_ledger_new(&o));
        ck_assert_int_eq(errno, EINVAL);
        ck_assert_ptr_null(gc_ledger_free(NULL));
}
END_TEST

START_TEST(test_bad_input)
{
        gc_query q = window(T0, T0 + H, 0, "");
        gc_cost_summary s = {0};

        ck_assert_int_eq(put_simple(NULL, 1, 1, T0, T0 + 1), -EINVAL);
        ck_assert_int_eq(put_simple("", 1, 1, T0, T0 + 1), -EINVAL);
        ck_assert_int_eq(put_simple("p", 1, 1, T0 + 2, T0 + 1), -EINVAL);
        ck_assert_int_eq(put_simple("p", 1, 1, -5, T0 + 1), -EINVAL);
        ck_assert_int_eq(put_simple("p", -1, 1, T0, T0 + 1), -EINVAL);
        ck_assert_int_eq(put_simple("p", 1, NAN, T0, T0 + 1), -EINVAL);
        ck_assert_int_eq(put_simple("p", INFINITY, 1, T0, T0 + 1), -EINVAL);
        ck_assert_int_eq(put_cap(led, "", 1, 1, T0, T0 + 1), -EINVAL);
        ck_assert_int_eq(gc_ledger_forget_usage(led, NULL), -EINVAL);

        q.start = T0 + 2 * H;
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), -EINVAL);
        q = window(T0, T0 + H, 0, "team");
        q.by[1] = GC_DIM_TEAM;
        q.n_by = 2;
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), -EINVAL);
        q.by[1] = GC_DIM_COUNT;
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), -EINVAL);
        ck_assert_ptr_null(s.rows);
        gc_cost_summary_free(&s);
        gc_cost_summary_free(NULL);
}
END_TEST

/* ---- folding -------------------------------------------------------------------------------- */

/* xorshift64*: a fixed seed gives the same intervals on every run and platform. */
static uint64_t rng_state;

static uint64_t rng(void)
{
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        return rng_state * 0x2545f4914f6cdd1dULL;
}

static int64_t rng_below(int64_t n)
{
        return (int64_t)(rng() % (uint64_t)n);
}

static void load_random(gc_ledger *l, size_t n)
{
        static const char *const teams[] = {"ml", "web", "data", "infra", GC_UNATTRIBUTED};
        static const char *const projects[] = {"llm", "search", "etl", GC_UNATTRIBUTED};
        static const char *const nodes[] = {"n0", "n1", "n2", "n3"};
        static const double geqs[] = {1, 0.5, 0.25, 1.0 / 7, 2, 8};
        char uid[32];

        rng_state = 0x9e3779b97f4a7c15ULL;
        for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
                /* Nodes come and go at odd seconds; one is still present. */
                int64_t start = T0 + rng_below(10 * H);
                int64_t end = i == 0 ? GC_OPEN : T0 + 30 * H + rng_below(40 * H);

                ck_assert_int_eq(put_cap(l, nodes[i], 8, 1.5 + (double)i, start, end), 0);
        }
        for (size_t i = 0; i < n; i++) {
                pod_spec p;
                int64_t start = T0 + rng_below(70 * H);
                int64_t len = rng_below(8) == 0 ? 1 + rng_below(60) : 1 + rng_below(20 * H);

                snprintf(uid, sizeof(uid), "pod-%zu", i);
                p.uid = uid;
                p.ns = projects[rng_below(4)];
                p.team = teams[rng_below(5)];
                p.project = projects[rng_below(4)];
                p.model = rng_below(2) ? "H100" : "A100";
                p.ctype = rng_below(3) ? "on-demand" : "spot";
                p.node = nodes[rng_below(4)];
                p.geq = geqs[rng_below(6)];
                p.price = 0.5 + (double)rng_below(1300) / 100.0;
                p.start = start;
                p.end = rng_below(10) == 0 ? GC_OPEN : start + len;
                p.flags = 0;
                ck_assert_int_eq(put(l, &p), 0);
        }
}

static int close_rel(double a, double b)
{
        double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);

        return fabs(a - b) <= 1e-6 * m + 1e-9;
}

static void assert_same(const gc_cost_summary *a, const gc_cost_summary *b, const char *what)
{
        ck_assert_msg(close_rel(a->total.gpu_seconds, b->total.gpu_seconds), "%s: total", what);
        ck_assert_msg(close_rel(a->total.cost, b->total.cost), "%s: total $", what);
        ck_assert_msg(close_rel(a->unattributed.cost, b->unattributed.cost), "%s: unattributed",
                      what);
        ck_assert_msg(close_rel(a->capacity.gpu_seconds, b->capacity.gpu_seconds), "%s: capacity",
                      what);
        ck_assert_msg(close_rel(a->capacity.cost, b->capacity.cost), "%s: capacity $", what);
        ck_assert_msg(close_rel(a->idle.gpu_seconds, b->idle.gpu_seconds), "%s: idle", what);
        ck_assert_msg(close_rel(a->idle.cost, b->idle.cost), "%s: idle $", what);
        ck_assert_uint_eq(a->n_rows, b->n_rows);
        ck_assert_uint_eq(a->n_idle_nodes, b->n_idle_nodes);
        for (size_t i = 0; i < a->n_rows; i++) {
                const gc_cost_row *r = &a->rows[i], *o = NULL;

                for (size_t j = 0; j < b->n_rows && !o; j++)
                        if (strcmp(b->rows[j].keys[GC_DIM_TEAM], r->keys[GC_DIM_TEAM]) == 0)
                                o = &b->rows[j];
                ck_assert_msg(o != NULL, "%s: team %s missing", what, r->keys[GC_DIM_TEAM]);
                ck_assert_msg(close_rel(r->gpu_seconds, o->gpu_seconds), "%s: %s GPU-s %.17g %.17g",
                              what, r->keys[GC_DIM_TEAM], r->gpu_seconds, o->gpu_seconds);
                ck_assert_msg(close_rel(r->cost, o->cost), "%s: %s $", what, r->keys[GC_DIM_TEAM]);
        }
}

static const int64_t fold_windows[][2] = {
    {T0, T0 + 80 * H},          {T0 + 5 * H, T0 + 30 * H},  {T0 + 24 * H, T0 + 48 * H},
    {T0 + 39 * H, T0 + 41 * H}, {T0 + 60 * H, T0 + 72 * H},
};
#define N_WINDOWS (sizeof(fold_windows) / sizeof(fold_windows[0]))

START_TEST(test_fold_equivalence)
{
        gc_cost_summary before[N_WINDOWS], after;
        const int64_t now = T0 + 72 * H + 17;
        gc_ledger_stats st0, st1;
        int folded;

        load_random(led, 3000);
        for (size_t w = 0; w < N_WINDOWS; w++) {
                gc_query q = window(fold_windows[w][0], fold_windows[w][1], now, "team");

                ck_assert_int_eq(gc_ledger_query(led, &q, &before[w]), 0);
                ck_assert(before[w].total.gpu_seconds > 0);
        }
        gc_ledger_stats_get(led, &st0);
        folded = gc_ledger_fold(led, T0 + 40 * H + 1234, T0 - 24 * H);
        ck_assert_int_gt(folded, 0);
        gc_ledger_stats_get(led, &st1);
        ck_assert_uint_eq(st1.intervals, st0.intervals - (size_t)folded);
        ck_assert_uint_gt(st1.rollup_rows, 0);
        ck_assert_int_eq(st1.horizon, T0 + 40 * H);
        for (size_t w = 0; w < N_WINDOWS; w++) {
                gc_query q = window(fold_windows[w][0], fold_windows[w][1], now, "team");

                ck_assert_int_eq(gc_ledger_query(led, &q, &after), 0);
                assert_same(&before[w], &after, "first fold");
                gc_cost_summary_free(&after);
        }
        /* Folding again, later, changes nothing either. */
        ck_assert_int_ge(gc_ledger_fold(led, T0 + 70 * H, T0 - 24 * H), 0);
        for (size_t w = 0; w < N_WINDOWS; w++) {
                gc_query q = window(fold_windows[w][0], fold_windows[w][1], now, "team");

                ck_assert_int_eq(gc_ledger_query(led, &q, &after), 0);
                assert_same(&before[w], &after, "second fold");
                gc_cost_summary_free(&after);
                gc_cost_summary_free(&before[w]);
        }
}
END_TEST

/* ---- stepped queries ------------------------------------------------------------------------ */

static void assert_row_identical(const gc_cost_row *a, const gc_cost_row *b, const char *what,
                                 size_t k)
{
        for (size_t d = 0; d < GC_DIM_COUNT; d++)
                ck_assert_msg(a->keys[d] == b->keys[d] ||
                                  (a->keys[d] && b->keys[d] && strcmp(a->keys[d], b->keys[d]) == 0),
                              "%s step %zu: key %zu", what, k, d);
        /* Bit for bit: the stepped query adds the same figures in the same order. */
        ck_assert_msg(a->gpu_seconds == b->gpu_seconds, "%s step %zu: GPU-s %.17g %.17g", what, k,
                      a->gpu_seconds, b->gpu_seconds);
        ck_assert_msg(a->cost == b->cost, "%s step %zu: $ %.17g %.17g", what, k, a->cost, b->cost);
        ck_assert_uint_eq(a->pods, b->pods);
        ck_assert_uint_eq(a->estimates, b->estimates);
}

static void assert_identical(const gc_cost_summary *a, const gc_cost_summary *b, const char *what,
                             size_t k)
{
        ck_assert_int_eq(a->start, b->start);
        ck_assert_int_eq(a->end, b->end);
        ck_assert_uint_eq(a->n_by, b->n_by);
        ck_assert_uint_eq(a->n_rows, b->n_rows);
        ck_assert_uint_eq(a->n_idle_nodes, b->n_idle_nodes);
        assert_row_identical(&a->total, &b->total, what, k);
        assert_row_identical(&a->unattributed, &b->unattributed, what, k);
        assert_row_identical(&a->capacity, &b->capacity, what, k);
        assert_row_identical(&a->idle, &b->idle, what, k);
        for (size_t i = 0; i < a->n_rows; i++)
                assert_row_identical(&a->rows[i], &b->rows[i], what, k);
        for (size_t i = 0; i < a->n_idle_nodes; i++)
                assert_row_identical(&a->idle_nodes[i], &b->idle_nodes[i], what, k);
}

/*
 * Random windows, steps (hour-aligned or not, a last step cut short), now, groupings and filters
 * over a random ledger, folded in odd iterations: every step's summary is the one gc_ledger_query
 * gives for that step alone.
 */
START_TEST(test_steps_equivalence)
{
        static const char *const bys[] = {"",
                                          "team",
                                          "team,project",
                                          "node,pod",
                                          "namespace,pod,node,team,project",
                                          "namespace,team,project,model,capacity_type,node,pod"};
        static const int64_t steps[] = {H, 24 * H, 6 * H, 1800, 5400, 7 * H + 13, 2 * H + 1};
        char what[96];

        load_random(led, 1500);
        if (_i % 2)
                ck_assert_int_gt(gc_ledger_fold(led, T0 + 40 * H + 1234, T0 - 24 * H), 0);
        rng_state = 0x1234567ULL + (uint64_t)_i;
        for (int round = 0; round < 12; round++) {
                int64_t start = T0 - 5 * H + rng_below(60 * H);
                int64_t step = steps[rng_below(sizeof(steps) / sizeof(steps[0]))];
                int64_t end, now;
                gc_query q;
                gc_cost_summary *sums;
                size_t n;

                if (rng_below(2))
                        start = start / H * H; /* hour-aligned windows too */
                end = start + 1 + rng_below(50 * H);
                now = rng_below(4) == 0 ? 0 : start + rng_below(60 * H);
                q = window(start, end, now, bys[rng_below(sizeof(bys) / sizeof(bys[0]))]);
                if (rng_below(4) == 0)
                        q.filter[GC_DIM_TEAM] = "ml";
                if (rng_below(4) == 0)
                        q.filter[GC_DIM_NODE] = "n1";
                n = gc_ledger_step_count(start, end, step);
                ck_assert_uint_gt(n, 0);
                sums = calloc(n, sizeof(*sums));
                ck_assert_ptr_nonnull(sums);
                ck_assert_int_eq(gc_ledger_query_steps(led, &q, step, sums, n), 0);
                for (size_t k = 0; k < n; k++) {
                        gc_query one = q;
                        gc_cost_summary s;

                        one.start = start + (int64_t)k * step;
                        one.end = end - one.start > step ? one.start + step : end;
                        ck_assert_int_eq(gc_ledger_query(led, &one, &s), 0);
                        snprintf(what, sizeof(what), "iteration %d round %d step %lld", _i, round,
                                 (long long)step);
                        assert_identical(&sums[k], &s, what, k);
                        gc_cost_summary_free(&s);
                        gc_cost_summary_free(&sums[k]);
                }
                free(sums);
        }
}
END_TEST

typedef struct each_ctx {
        const gc_query *q;
        int64_t step;
        size_t seen;
        size_t stop_at; /* 0: never */
} each_ctx;

static int each_check(void *ud, const gc_cost_summary *s)
{
        each_ctx *c = ud;
        gc_query one = *c->q;
        gc_cost_summary want;

        one.start = c->q->start + (int64_t)c->seen * c->step;
        one.end = c->q->end - one.start > c->step ? one.start + c->step : c->q->end;
        ck_assert_int_eq(gc_ledger_query(led, &one, &want), 0);
        assert_identical(s, &want, "each step", c->seen);
        gc_cost_summary_free(&want);
        c->seen++;
        return c->stop_at && c->seen == c->stop_at ? 7 : 0;
}

/*
 * 960 steps over 1500 open and closed intervals take several passes (memory is bounded by
 * intervals x steps per pass): every step still equals its own query, in time order, and a
 * non-zero return stops the walk.
 */
START_TEST(test_each_step)
{
        gc_query q = window(T0 + 7, T0 + 7 + 960 * 300 - 17, T0 + 50 * H, "team,pod");
        each_ctx c = {&q, 300, 0, 0};

        load_random(led, 1500);
        ck_assert_uint_eq(gc_ledger_step_count(q.start, q.end, 300), 960);
        ck_assert_int_eq(gc_ledger_query_each_step(led, &q, 300, each_check, &c), 0);
        ck_assert_uint_eq(c.seen, 960);
        c.seen = 0;
        c.stop_at = 400;
        ck_assert_int_eq(gc_ledger_query_each_step(led, &q, 300, each_check, &c), 7);
        ck_assert_uint_eq(c.seen, 400);
        ck_assert_int_eq(gc_ledger_query_each_step(led, &q, 0, each_check, &c), -EINVAL);
        ck_assert_int_eq(gc_ledger_query_each_step(led, &q, 60, each_check, &c), -E2BIG);
        q.end = q.start;
        ck_assert_int_eq(gc_ledger_query_each_step(led, &q, 300, each_check, &c), 0);
        ck_assert_uint_eq(c.seen, 400);
}
END_TEST

typedef struct span_ctx {
        const gc_query *q;
        const int64_t *edges;
        size_t seen;
} span_ctx;

static int span_check(void *ud, const gc_cost_summary *s)
{
        span_ctx *c = ud;
        gc_query one = *c->q;
        gc_cost_summary want;

        one.start = c->edges[c->seen];
        one.end = c->edges[c->seen + 1];
        ck_assert_int_eq(gc_ledger_query(led, &one, &want), 0);
        assert_identical(s, &want, "each span", c->seen);
        gc_cost_summary_free(&want);
        c->seen++;
        return 0;
}

/* Spans of uneven length (days of 23 and 25 hours, months) each equal their own query. */
START_TEST(test_each_span)
{
        gc_query q = window(0, 1, T0 + 50 * H, "team,pod");
        int64_t edges[401];
        span_ctx c = {&q, edges, 0};

        load_random(led, 1500);
        ck_assert_int_ge(gc_ledger_fold(led, T0 + 20 * H + 77, 0), 0);
        edges[0] = T0 - 5 * H + 900;
        for (size_t k = 1; k < 401; k++)
                edges[k] = edges[k - 1] + 900 * (int64_t)(1 + (k * 7) % 5);
        ck_assert_int_eq(gc_ledger_query_each_span(led, &q, edges, 400, span_check, &c), 0);
        ck_assert_uint_eq(c.seen, 400);
        c.seen = 0;
        ck_assert_int_eq(gc_ledger_query_each_span(led, &q, edges, 1, span_check, &c), 0);
        ck_assert_uint_eq(c.seen, 1);
        edges[5] = edges[4];
        ck_assert_int_eq(gc_ledger_query_each_span(led, &q, edges, 400, span_check, &c), -EINVAL);
        ck_assert_int_eq(gc_ledger_query_each_span(led, &q, edges, 0, span_check, &c), -EINVAL);
        ck_assert_int_eq(
            gc_ledger_query_each_span(led, &q, edges, GC_LEDGER_MAX_STEPS + 1, span_check, &c),
            -E2BIG);
}
END_TEST

/* Folded hours cut by a step's edge count in neither step, as a window's edge cuts them. */
START_TEST(test_steps_cut_folded_hour)
{
        pod_spec p = {"a", "ns", "ml", "llm", "H100", "on-demand", "n0", 1, 3.6, T0, T0 + 4 * H, 0};
        gc_query q = window(T0, T0 + 4 * H, T0 + 10 * H, "team");
        gc_cost_summary s[3];

        ck_assert_int_eq(put(led, &p), 0);
        ck_assert_int_eq(gc_ledger_fold(led, T0 + 5 * H, T0 - H), 1);
        /* Steps of 90 minutes: [0, 1.5h) holds hour 0, [1.5h, 3h) holds hour 2, [3h, 4h) hour 3;
         * hour 1 is cut and counted nowhere. */
        ck_assert_uint_eq(gc_ledger_step_count(q.start, q.end, 5400), 3);
        ck_assert_int_eq(gc_ledger_query_steps(led, &q, 5400, s, 3), 0);
        ck_assert(s[0].total.gpu_seconds == 3600);
        ck_assert(s[1].total.gpu_seconds == 3600);
        ck_assert(s[2].total.gpu_seconds == 3600);
        ck_assert_int_eq(s[2].start, T0 + 3 * H);
        ck_assert_int_eq(s[2].end, T0 + 4 * H);
        for (size_t k = 0; k < 3; k++)
                gc_cost_summary_free(&s[k]);
}
END_TEST

START_TEST(test_steps_bad_input)
{
        gc_query q = window(T0, T0 + 10 * H, 0, "team");
        gc_cost_summary s[11];

        memset(s, 0, sizeof(s));
        ck_assert_int_eq(gc_ledger_query_steps(led, &q, H, s, 9), -EINVAL);
        ck_assert_int_eq(gc_ledger_query_steps(led, &q, H, s, 11), -EINVAL);
        ck_assert_int_eq(gc_ledger_query_steps(led, &q, 0, s, 10), -EINVAL);
        ck_assert_int_eq(gc_ledger_query_steps(led, &q, -H, s, 10), -EINVAL);
        ck_assert_ptr_null(s[0].rows);
        q.end = T0 + 1001 * H;
        ck_assert_int_eq(gc_ledger_query_steps(led, &q, H, s, 1001), -E2BIG);
        q.end = T0;
        ck_assert_uint_eq(gc_ledger_step_count(q.start, q.end, H), 0);
        ck_assert_int_eq(gc_ledger_query_steps(led, &q, H, NULL, 0), 0);
        ck_assert_uint_eq(gc_ledger_step_count(INT64_MIN, INT64_MAX, INT64_MAX), 3);
}
END_TEST

static int visit_min_hour(void *ud, const gc_rollup *r)
{
        int64_t *min = ud;

        if (r->hour < *min)
                *min = r->hour;
        ck_assert_ptr_null(r->dims[GC_DIM_POD]);
        return 0;
}

START_TEST(test_fold_keep_since)
{
        gc_ledger_visitor v = {0};
        int64_t min = INT64_MAX;
        gc_query q = window(T0 + 24 * H, T0 + 72 * H, T0 + 72 * H, "team");
        gc_cost_summary a = {0}, b = {0};

        load_random(led, 2000);
        ck_assert_int_eq(gc_ledger_query(led, &q, &a), 0);
        /* keep_since in the middle of an hour keeps that hour whole. */
        ck_assert_int_gt(gc_ledger_fold(led, T0 + 60 * H, T0 + 24 * H + 600), 0);
        v.rollup = visit_min_hour;
        ck_assert_int_eq(gc_ledger_visit(led, &v, &min), 0);
        ck_assert_int_eq(min, T0 + 24 * H);
        /* Windows inside what is kept are untouched. */
        ck_assert_int_eq(gc_ledger_query(led, &q, &b), 0);
        assert_same(&a, &b, "keep_since");
        gc_cost_summary_free(&a);
        gc_cost_summary_free(&b);
}
END_TEST

START_TEST(test_fold_hour_granular)
{
        gc_query q = window(T0, T0 + H, 0, "pod");
        gc_cost_summary s = {0};

        ck_assert_int_eq(put_simple("p", 1, 2, T0 + 600, T0 + 2400), 0);
        ck_assert_int_eq(put_simple("q", 1, 2, T0 + 600, GC_OPEN), 0);
        ck_assert_int_eq(gc_ledger_fold(led, T0 + H + 5, 0), 1); /* only the closed one */
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        /* The folded hour is wholly inside: 1800 + the open pod's 3000 s. */
        ck_assert(s.total.gpu_seconds == 1800.0 + 3000.0);
        ck_assert_uint_eq(s.total.pods, 1); /* folded hours add no pods */
        ck_assert_ptr_nonnull(row_of(&s, GC_DIM_POD, GC_FOLDED_POD));
        ck_assert_ptr_nonnull(row_of(&s, GC_DIM_POD, "q"));
        gc_cost_summary_free(&s);
        /* A window cutting the folded hour cannot split it: only the open pod counts. */
        q = window(T0 + 900, T0 + H, 0, "");
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert(s.total.gpu_seconds == 2700.0);
        gc_cost_summary_free(&s);
}
END_TEST

/*
 * Quarter-hour buckets: over windows on the quarter hour (a day at +05:45 starts at 18:15 UTC),
 * every figure is what it was before the fold; a bad bucket size is refused; rows of a finer
 * ledger restored into an hourly one go into the hour holding them.
 */
START_TEST(test_fold_quarter_hours)
{
        static const int64_t wins[][2] = {
            {T0 + 18 * H + 900, T0 + 42 * H + 900},
            {T0 + 5 * H + 2700, T0 + 30 * H + 1800},
            {T0 + 39 * H + 2700, T0 + 40 * H},
        };
        gc_ledger_opts o = {0};
        gc_ledger *q4, *hourly;
        gc_cost_summary before[3], after;
        const int64_t now = T0 + 72 * H + 17;
        gc_rollup rw;

        o.pool = pool;
        o.bucket_s = 1000;
        ck_assert_ptr_null(gc_ledger_new(&o));
        o.bucket_s = 900;
        q4 = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(q4);
        ck_assert_int_eq(gc_ledger_granularity(q4), 900);
        ck_assert_int_eq(gc_ledger_granularity(led), 3600);
        load_random(q4, 3000);
        for (size_t w = 0; w < 3; w++) {
                gc_query q = window(wins[w][0], wins[w][1], now, "team");

                ck_assert_int_eq(gc_ledger_query(q4, &q, &before[w]), 0);
                ck_assert(before[w].total.gpu_seconds > 0);
        }
        ck_assert_int_gt(gc_ledger_fold(q4, T0 + 44 * H + 1000, T0 - 24 * H), 0);
        for (size_t w = 0; w < 3; w++) {
                gc_query q = window(wins[w][0], wins[w][1], now, "team");

                ck_assert_int_eq(gc_ledger_query(q4, &q, &after), 0);
                assert_same(&before[w], &after, "quarter-hour fold");
                gc_cost_summary_free(&after);
                gc_cost_summary_free(&before[w]);
        }
        q4 = gc_ledger_free(q4);

        /* A quarter-hour row into an hourly ledger: counted in its hour. */
        o.bucket_s = 0;
        hourly = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(hourly);
        memset(&rw, 0, sizeof(rw));
        rw.hour = T0 + 2700;
        rw.dims[GC_DIM_TEAM] = "t";
        rw.gpu_seconds = 900;
        rw.cost = 1;
        ck_assert_int_eq(gc_ledger_add_rollup(hourly, &rw), 0);
        rw.hour = T0 + 100;
        ck_assert_int_eq(gc_ledger_add_rollup(hourly, &rw), -EINVAL);
        {
                gc_query q = window(T0, T0 + H, 0, "");

                ck_assert_int_eq(gc_ledger_query(hourly, &q, &after), 0);
                ck_assert(after.total.gpu_seconds == 900.0);
                gc_cost_summary_free(&after);
        }
        gc_ledger_free(hourly);
}
END_TEST

START_TEST(test_fold_no_double_count)
{
        gc_query q = window(T0, T0 + 4 * H, T0 + 4 * H, "");
        gc_cost_summary s = {0};
        gc_ledger_stats st;

        ck_assert_int_eq(put_simple("done", 1, 1, T0, T0 + H), 0);
        ck_assert_int_eq(put_cap(led, "n1", 4, 1, T0, GC_OPEN), 0);
        ck_assert_int_eq(gc_ledger_fold(led, T0 + 2 * H, 0), 1);
        /* A re-list sends the finished pod and the node (with its creation time) again. */
        ck_assert_int_eq(put_simple("done", 1, 1, T0, T0 + H), 0);
        ck_assert_int_eq(put_cap(led, "n1", 4, 1, T0, GC_OPEN), 0);
        gc_ledger_stats_get(led, &st);
        ck_assert_uint_eq(st.intervals, 0);
        /* A pod first seen now that began before the horizon counts from the horizon. */
        ck_assert_int_eq(put_simple("late", 1, 1, T0 + H, T0 + 3 * H), 0);
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert(s.total.gpu_seconds == 3600.0 + 3600.0);
        ck_assert(s.capacity.gpu_seconds == 4 * 4 * 3600.0);
        gc_cost_summary_free(&s);
}
END_TEST

START_TEST(test_fold_capacity)
{
        gc_query q = window(T0, T0 + 2 * H, 0, "");
        gc_cost_summary s = {0};
        gc_ledger_stats st;

        /* Hour 0 is folded at 2 $/h; the node then comes back priced at 4 $/h. */
        ck_assert_int_eq(put_cap(led, "n1", 1, 2, T0, GC_OPEN), 0);
        ck_assert_int_eq(gc_ledger_fold(led, T0 + H, 0), 0);
        ck_assert_int_eq(put_cap(led, "n1", 1, 4, T0, GC_OPEN), 0);
        ck_assert_int_eq(put_simple("p", 1, 4, T0 + H, T0 + H + 1800), 0);
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert(s.capacity.gpu_seconds == 2 * 3600.0);
        ck_assert_double_eq_tol(s.capacity.cost, 2.0 + 4.0, 1e-12);
        /* 1.5 GPU-h idle at the window's time-weighted price (6 $ / 2 h = 3 $/h). */
        ck_assert(s.idle.gpu_seconds == 5400.0);
        ck_assert_double_eq_tol(s.idle.cost, 4.5, 1e-12);
        gc_cost_summary_free(&s);

        /* The node turns out to have gone before the horizon: it stops, folded hours stay. */
        ck_assert_int_eq(put_cap(led, "n1", 1, 4, T0, T0 + 1800), 0);
        gc_ledger_stats_get(led, &st);
        ck_assert_uint_eq(st.capacities, 0);
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert(s.capacity.gpu_seconds == 3600.0);
        ck_assert_uint_eq(s.n_idle_nodes, 1);
        gc_cost_summary_free(&s);
}
END_TEST

static int cp_usage(void *ud, const gc_usage *u)
{
        return gc_ledger_put_usage(ud, u);
}

static int cp_capacity(void *ud, const gc_capacity *c)
{
        return gc_ledger_put_capacity(ud, c);
}

static int cp_rollup(void *ud, const gc_rollup *r)
{
        return gc_ledger_add_rollup(ud, r);
}

static int cp_capacity_rollup(void *ud, const gc_capacity_rollup *r)
{
        return gc_ledger_add_capacity_rollup(ud, r);
}

START_TEST(test_checkpoint_roundtrip)
{
        gc_ledger_visitor v = {cp_usage, cp_capacity, cp_rollup, cp_capacity_rollup, NULL};
        gc_ledger_opts o = {0};
        gc_ledger *copy;
        gc_ledger_stats a, b;
        gc_query q = window(T0, T0 + 80 * H, T0 + 72 * H, "team");
        gc_cost_summary s1 = {0}, s2 = {0};

        load_random(led, 1000);
        ck_assert_int_gt(gc_ledger_fold(led, T0 + 30 * H, 0), 0);
        o.pool = pool;
        copy = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(copy);
        ck_assert_int_eq(gc_ledger_visit(led, &v, copy), 0);
        gc_ledger_stats_get(led, &a);
        ck_assert_int_eq(gc_ledger_set_horizon(copy, a.horizon), 0);
        gc_ledger_stats_get(copy, &b);
        ck_assert_uint_eq(a.intervals, b.intervals);
        ck_assert_uint_eq(a.open_intervals, b.open_intervals);
        ck_assert_uint_eq(a.capacities, b.capacities);
        ck_assert_uint_eq(a.rollup_rows, b.rollup_rows);
        ck_assert_int_eq(a.horizon, b.horizon);
        ck_assert_int_eq(gc_ledger_query(led, &q, &s1), 0);
        ck_assert_int_eq(gc_ledger_query(copy, &q, &s2), 0);
        assert_same(&s1, &s2, "restored");
        gc_cost_summary_free(&s2);
        /* The restored node still never counts folded hours again. */
        ck_assert_int_eq(put_cap(copy, "n0", 8, 1.5, T0, GC_OPEN), 0);
        ck_assert_int_eq(gc_ledger_query(copy, &q, &s2), 0);
        ck_assert(close_rel(s1.capacity.gpu_seconds, s2.capacity.gpu_seconds));
        gc_cost_summary_free(&s1);
        gc_cost_summary_free(&s2);
        ck_assert_ptr_null(gc_ledger_free(copy));
}
END_TEST

START_TEST(test_stats_bytes)
{
        gc_ledger_stats a, b;
        char uid[32];

        gc_ledger_stats_get(led, &a);
        ck_assert_int_eq(a.horizon, INT64_MIN);
        for (int i = 0; i < 1000; i++) {
                snprintf(uid, sizeof(uid), "pod-%d", i);
                ck_assert_int_eq(put_simple(uid, 1, 1, T0, T0 + 1), 0);
        }
        gc_ledger_stats_get(led, &b);
        /* At least the records themselves (7 dims + uid + 2 doubles + 2 times each). */
        ck_assert_uint_ge(b.bytes - a.bytes, 1000 * (8 * sizeof(char *) + 32));
        ck_assert_uint_lt(b.bytes, 1000 * 256);
}
END_TEST

START_TEST(test_large_query)
{
        gc_query q = window(T0, T0 + 24 * H, 0, "team");
        gc_cost_summary s = {0};
        static const char *const teams[] = {"a", "b", "c", "d"};
        char uid[32];

        /* 100,000 one-minute pods of one GPU: 6,000,000 GPU-seconds in four rows. */
        for (int i = 0; i < 100000; i++) {
                pod_spec p = {uid, "ns",          teams[i % 4],       "p", "m", "c", "n", 1,
                              3.6, T0 + i % 3600, T0 + i % 3600 + 60, 0};

                snprintf(uid, sizeof(uid), "pod-%d", i);
                ck_assert_int_eq(put(led, &p), 0);
        }
        ck_assert_int_eq(gc_ledger_query(led, &q, &s), 0);
        ck_assert_uint_eq(s.n_rows, 4);
        ck_assert(s.total.gpu_seconds == 6000000.0);
        ck_assert_double_eq_tol(s.total.cost, 6000.0, 1e-6);
        ck_assert_uint_eq(s.total.pods, 100000);
        ck_assert(s.rows[0].gpu_seconds == 1500000.0);
        ck_assert_str_eq(s.rows[0].keys[GC_DIM_TEAM], "a"); /* equal rows: keys ascending */
        gc_cost_summary_free(&s);
}
END_TEST

/* ---- period history ------------------------------------------------------------------------- */

#define DAY_S ((int64_t)86400)

/* 1,500 pods over twelve days from T0 (a Thursday), some running on, each with a workload. */
static void load_periods(gc_ledger *l)
{
        /* Label values (kept only by ledgers keeping the keys): some absent, some empty. */
        static const char *const ccs[] = {"cc-a", "cc-b", NULL, "cc-c", ""};
        static const char *const exps[] = {"e1", "e2", "e3", "e4", "e5", "e6", NULL};
        static const char *const teams[] = {"ml", "web", "data", GC_UNATTRIBUTED};
        static const char *const nodes[] = {"n0", "n1", "n2"};
        char uid[32], wl[48];

        rng_state = 0x5eed;
        for (size_t i = 0; i < 3; i++)
                ck_assert_int_eq(put_cap(l, nodes[i], 16, 2.0 + (double)i, T0 - DAY_S, GC_OPEN), 0);
        for (size_t i = 0; i < 1500; i++) {
                gc_usage u = {0};
                int64_t start = T0 + rng_below(12 * DAY_S);
                int64_t len = rng_below(6) == 0 ? 1 + rng_below(4 * DAY_S) : 1 + rng_below(5 * H);

                snprintf(uid, sizeof(uid), "pod-%zu", i);
                snprintf(wl, sizeof(wl), "Job/ns%zu/w%zu", i % 3, i % 23);
                u.pod_uid = uid;
                u.dims[GC_DIM_NAMESPACE] = i % 3 == 0 ? "ns0" : i % 3 == 1 ? "ns1" : "ns2";
                u.dims[GC_DIM_TEAM] = teams[rng_below(4)];
                u.dims[GC_DIM_PROJECT] = rng_below(2) ? "p1" : "p2";
                u.dims[GC_DIM_MODEL] = "H100";
                u.dims[GC_DIM_CAPACITY_TYPE] = rng_below(3) ? "on-demand" : "spot";
                u.dims[GC_DIM_NODE] = nodes[rng_below(3)];
                u.dims[GC_DIM_POD] = uid;
                u.dims[GC_DIM_WORKLOAD] = wl;
                u.labels[0] = ccs[i % 5];
                u.labels[1] = exps[(i / 5) % 7];
                u.geq = rng_below(4) == 0 ? 0.5 : 1.0 + (double)rng_below(4);
                u.price_per_gpu_hour = 1.0 + (double)rng_below(900) / 100.0;
                u.start = start;
                u.end = rng_below(20) == 0 ? GC_OPEN : start + len;
                u.flags = rng_below(9) == 0 ? GC_USAGE_F_ESTIMATE : 0;
                ck_assert_int_eq(gc_ledger_put_usage(l, &u), 0);
        }
}

static const gc_cost_row *row_keys(const gc_cost_summary *s, const gc_query *q,
                                   const gc_cost_row *like)
{
        for (size_t i = 0; i < s->n_rows; i++) {
                size_t d = 0;

                while (d < q->n_by && strcmp(s->rows[i].keys[q->by[d]], like->keys[q->by[d]]) == 0)
                        d++;
                if (d == q->n_by)
                        return &s->rows[i];
        }
        return NULL;
}

/* The periods of the twelve days: each day, the ISO weeks, January. */
static size_t period_windows(int64_t (*w)[2], size_t max)
{
        size_t n = 0;

        for (int64_t d = 0; d < 14 && n < max; d++, n++) {
                w[n][0] = T0 + d * DAY_S;
                w[n][1] = w[n][0] + DAY_S;
        }
        /* 2025-12-29, 2026-01-05, 2026-01-12 (Mondays), then the month of January. */
        for (int64_t k = 0; k < 3 && n < max; k++, n++) {
                w[n][0] = T0 - 3 * DAY_S + k * 7 * DAY_S;
                w[n][1] = w[n][0] + 7 * DAY_S;
        }
        w[n][0] = T0;
        w[n][1] = T0 + 31 * DAY_S;
        return n + 1;
}

/*
 * Folded with period history, a period answers what the unfolded ledger answers: by every
 * group (workload included), with the same pod counts and estimates; by pod, its top pods are
 * exactly the unfolded ledger's top pods among those folded, the rest summed under
 * GC_FOLDED_POD with its pod count.
 */
static int cp_period(void *ud, const gc_period_row *r);

/*
 * Variant 0: folded. 1: and coarsened up to day 10 (the pods' hours go, the nodes' held hours
 * move into the periods). 2: that, restored from its visit into a new ledger, then cloned.
 */
static gc_ledger *period_history_ledger(int variant, const gc_ledger_opts *o)
{
        gc_ledger_visitor v = {cp_usage, cp_capacity, cp_rollup, cp_capacity_rollup, cp_period};
        gc_ledger *f = gc_ledger_new(o), *copy, *c;
        gc_ledger_stats st, st2;

        ck_assert_ptr_nonnull(f);
        load_periods(f);
        ck_assert_int_gt(gc_ledger_fold(f, T0 + 13 * DAY_S, 0), 1000);
        gc_ledger_stats_get(f, &st);
        ck_assert_uint_eq(st.periods, 13 + 3 + 1); /* Jan 1-13, three ISO weeks, January */
        ck_assert_uint_gt(st.period_rows, 0);
        if (variant == 0)
                return f;
        ck_assert_int_eq(gc_ledger_coarsen(f, T0 + 10 * DAY_S + 1800), 0);
        ck_assert_int_eq(gc_ledger_coarse_to(f), T0 + 10 * DAY_S);
        gc_ledger_stats_get(f, &st2);
        ck_assert_uint_lt(st2.rollup_rows, st.rollup_rows);
        ck_assert_uint_gt(st2.period_rows, st.period_rows); /* the node rows */
        /* Coarsening again changes nothing; it never passes the horizon. */
        ck_assert_int_eq(gc_ledger_coarsen(f, T0 + 10 * DAY_S), 0);
        ck_assert_int_eq(gc_ledger_coarsen(f, T0 + 99 * DAY_S), 0);
        ck_assert_int_eq(gc_ledger_coarse_to(f), T0 + 13 * DAY_S);
        ck_assert_int_eq(gc_ledger_coarsen(f, T0 + 10 * DAY_S), 0);
        ck_assert_int_eq(gc_ledger_coarse_to(f), T0 + 13 * DAY_S);
        if (variant == 1)
                return f;
        copy = gc_ledger_new(o);
        ck_assert_ptr_nonnull(copy);
        ck_assert_int_eq(gc_ledger_visit(f, &v, copy), 0);
        gc_ledger_stats_get(f, &st);
        ck_assert_int_eq(gc_ledger_set_horizon(copy, st.horizon), 0);
        ck_assert_int_eq(gc_ledger_set_coarse_to(copy, gc_ledger_coarse_to(f)), 0);
        gc_ledger_stats_get(copy, &st2);
        ck_assert_uint_eq(st.period_rows, st2.period_rows);
        ck_assert_uint_eq(st.rollup_rows, st2.rollup_rows);
        c = gc_ledger_clone(copy);
        ck_assert_ptr_nonnull(c);
        gc_ledger_free(copy);
        gc_ledger_free(f);
        return c;
}

START_TEST(test_period_history_exact)
{
        static const char *const bys[] = {
            "",     "team,project,workload", "namespace,team", "workload", "pod", "node,team",
            "node", "model,capacity_type"};
        gc_ledger_opts o = {0};
        gc_ledger *f;
        int64_t w[20][2];
        size_t nw = period_windows(w, 19);

        o.pool = pool;
        o.top_n = 5;
        load_periods(led);
        f = period_history_ledger(_i, &o);
        for (size_t k = 0; k < nw; k++) {
                for (size_t b = 0; b < sizeof(bys) / sizeof(bys[0]); b++) {
                        gc_query q = window(w[k][0], w[k][1], T0 + 13 * DAY_S, bys[b]);
                        gc_cost_summary a = {0}, s = {0};
                        int node_only = b >= 6;
                        double min_named = INFINITY;
                        uint32_t pods = 0;

                        ck_assert_int_eq(gc_ledger_query(led, &q, &a), 0);
                        ck_assert_int_eq(gc_ledger_query(f, &q, &s), 0);
                        ck_assert_msg(close_rel(a.total.gpu_seconds, s.total.gpu_seconds),
                                      "window %zu by %s: total", k, bys[b]);
                        ck_assert(close_rel(a.total.cost, s.total.cost));
                        ck_assert(close_rel(a.unattributed.cost, s.unattributed.cost));
                        ck_assert(close_rel(a.idle.gpu_seconds, s.idle.gpu_seconds));
                        if (node_only) {
                                /* Nodes' rows keep held seconds, not pods. */
                                ck_assert_uint_eq(a.n_rows, s.n_rows);
                                for (size_t i = 0; i < a.n_rows; i++) {
                                        const gc_cost_row *r = row_keys(&s, &q, &a.rows[i]);

                                        ck_assert_ptr_nonnull(r);
                                        ck_assert(close_rel(r->gpu_seconds, a.rows[i].gpu_seconds));
                                        ck_assert(close_rel(r->cost, a.rows[i].cost));
                                }
                                gc_cost_summary_free(&a);
                                gc_cost_summary_free(&s);
                                continue;
                        }
                        ck_assert_uint_eq(a.total.pods, s.total.pods);
                        ck_assert_uint_eq(a.total.estimates, s.total.estimates);
                        if (strstr(bys[b], "node,")) {
                                /* With other dimensions, the top pods keep their nodes, the
                                 * rest reads __folded__: named rows never exceed the truth. */
                                double named = 0, all = 0;

                                for (size_t i = 0; i < s.n_rows; i++) {
                                        const gc_cost_row *r = &s.rows[i], *x;

                                        all += r->gpu_seconds;
                                        if (strcmp(r->keys[GC_DIM_NODE], GC_FOLDED_POD) == 0)
                                                continue;
                                        x = row_keys(&a, &q, r);
                                        ck_assert_ptr_nonnull(x);
                                        ck_assert(r->gpu_seconds <= x->gpu_seconds * (1 + 1e-9));
                                        named += r->gpu_seconds;
                                }
                                ck_assert(close_rel(all, a.total.gpu_seconds));
                                ck_assert(a.total.gpu_seconds == 0 || named > 0);
                        } else if (strstr(bys[b], "workload")) {
                                /* A closed period names its top workloads (and those that
                                 * could still grow), exactly; the rest is __folded__. */
                                size_t named = 0;

                                for (size_t i = 0; i < s.n_rows; i++) {
                                        const gc_cost_row *r = &s.rows[i], *x;

                                        if (strcmp(r->keys[GC_DIM_WORKLOAD], GC_FOLDED_POD) == 0)
                                                continue;
                                        x = row_keys(&a, &q, r);
                                        ck_assert_ptr_nonnull(x);
                                        ck_assert(close_rel(r->gpu_seconds, x->gpu_seconds));
                                        ck_assert(close_rel(r->cost, x->cost));
                                        ck_assert_uint_eq(r->pods, x->pods);
                                        named++;
                                }
                                ck_assert_uint_ge(named, a.n_rows < 5 ? a.n_rows : 5);
                                /* Grouped by workload alone, the five dearest are named. */
                                for (size_t i = 0;
                                     strcmp(bys[b], "workload") == 0 && i < 5 && i < a.n_rows; i++)
                                        ck_assert_ptr_nonnull(row_keys(&s, &q, &a.rows[i]));
                        } else if (strcmp(bys[b], "pod") != 0) {
                                ck_assert_uint_eq(a.n_rows, s.n_rows);
                                for (size_t i = 0; i < a.n_rows; i++) {
                                        const gc_cost_row *r = row_keys(&s, &q, &a.rows[i]);

                                        ck_assert_msg(r != NULL, "window %zu by %s: row %zu", k,
                                                      bys[b], i);
                                        ck_assert(close_rel(r->gpu_seconds, a.rows[i].gpu_seconds));
                                        ck_assert(close_rel(r->cost, a.rows[i].cost));
                                        ck_assert_uint_eq(r->pods, a.rows[i].pods);
                                        ck_assert_uint_eq(r->estimates, a.rows[i].estimates);
                                }
                        } else {
                                /* Named rows are exact; folded pods named are the top ones. */
                                for (size_t i = 0; i < s.n_rows; i++) {
                                        const gc_cost_row *r = &s.rows[i], *x;
                                        gc_usage u;

                                        pods += r->pods;
                                        if (strcmp(r->keys[GC_DIM_POD], GC_FOLDED_POD) == 0)
                                                continue;
                                        x = row_keys(&a, &q, r);
                                        ck_assert_ptr_nonnull(x);
                                        ck_assert(close_rel(r->cost, x->cost));
                                        ck_assert_uint_eq(r->pods, x->pods);
                                        if (gc_ledger_get_usage(f, r->keys[GC_DIM_POD], &u) ==
                                                -ENOENT &&
                                            r->cost < min_named)
                                                min_named = r->cost;
                                }
                                ck_assert_uint_eq(pods, a.total.pods);
                                for (size_t i = 0; i < a.n_rows; i++) {
                                        gc_usage u;

                                        if (row_keys(&s, &q, &a.rows[i]) ||
                                            gc_ledger_get_usage(f, a.rows[i].keys[GC_DIM_POD],
                                                                &u) == 0)
                                                continue;
                                        ck_assert_msg(a.rows[i].cost <= min_named,
                                                      "window %zu: %s left out", k,
                                                      a.rows[i].keys[GC_DIM_POD]);
                                }
                        }
                        gc_cost_summary_free(&a);
                        gc_cost_summary_free(&s);
                }
        }
        gc_ledger_free(f);
}
END_TEST

/*
 * Coarsened buckets answer only whole periods: a window that is no period and reaches them is
 * not whole; one past them, or before the first period of period history, is. A query by node
 * filtered to one node over a coarsened day still sees that node's idle exactly.
 */
START_TEST(test_coarsened_windows)
{
        gc_ledger_opts o = {0};
        gc_ledger *f;
        gc_query q;
        gc_cost_summary a = {0}, s = {0};

        o.pool = pool;
        f = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(f);
        load_periods(led);
        load_periods(f);
        ck_assert_int_eq(gc_ledger_span_whole(f, T0, T0 + H), 1); /* nothing coarsened yet */
        ck_assert_int_gt(gc_ledger_fold(f, T0 + 13 * DAY_S, 0), 1000);
        ck_assert_int_eq(gc_ledger_coarsen(f, T0 + 10 * DAY_S), 0);
        ck_assert_int_eq(gc_ledger_span_whole(f, T0 + DAY_S, T0 + 2 * DAY_S), 1);
        ck_assert_int_eq(gc_ledger_span_whole(f, T0, T0 + 31 * DAY_S), 1);
        ck_assert_int_eq(gc_ledger_span_whole(f, T0 + H, T0 + DAY_S + H), 0);
        ck_assert_int_eq(gc_ledger_span_whole(f, T0 + 9 * DAY_S, T0 + 11 * DAY_S), 0);
        ck_assert_int_eq(gc_ledger_span_whole(f, T0 + 10 * DAY_S, T0 + 11 * DAY_S + H), 1);
        ck_assert_int_eq(gc_ledger_steps_whole(f, T0, T0 + 3 * DAY_S, DAY_S), 1);
        ck_assert_int_eq(gc_ledger_steps_whole(f, T0, T0 + 3 * DAY_S, H), 0);
        ck_assert_int_eq(gc_ledger_steps_whole(f, T0 + 10 * DAY_S, T0 + 12 * DAY_S, H), 1);
        q = window(T0 + 2 * DAY_S, T0 + 3 * DAY_S, T0 + 13 * DAY_S, "team");
        q.filter[GC_DIM_NODE] = "n1";
        ck_assert_int_eq(gc_ledger_query(led, &q, &a), 0);
        ck_assert_int_eq(gc_ledger_query(f, &q, &s), 0);
        ck_assert(close_rel(a.idle.gpu_seconds, s.idle.gpu_seconds));
        ck_assert(close_rel(a.capacity.gpu_seconds, s.capacity.gpu_seconds));
        gc_cost_summary_free(&a);
        gc_cost_summary_free(&s);
        gc_ledger_free(f);

        /* Periods before period_since keep their buckets: nothing before them is coarsened. */
        f = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(f);
        load_periods(f);
        ck_assert_int_eq(gc_ledger_set_period_since(f, T0 + 2 * DAY_S), 0);
        ck_assert_int_gt(gc_ledger_fold(f, T0 + 13 * DAY_S, 0), 1000);
        ck_assert_int_eq(gc_ledger_coarsen(f, T0 + 10 * DAY_S), 0);
        ck_assert_int_eq(gc_ledger_span_whole(f, T0 + H, T0 + DAY_S + H), 1);
        q = window(T0 + DAY_S, T0 + 2 * DAY_S, T0 + 13 * DAY_S, "team");
        ck_assert_int_eq(gc_ledger_query(led, &q, &a), 0);
        ck_assert_int_eq(gc_ledger_query(f, &q, &s), 0);
        ck_assert(close_rel(a.total.gpu_seconds, s.total.gpu_seconds));
        ck_assert(close_rel(a.idle.gpu_seconds, s.idle.gpu_seconds));
        gc_cost_summary_free(&a);
        gc_cost_summary_free(&s);
        gc_ledger_free(f);
}
END_TEST

/* Periods before period_since, and queries by node alone, answer from the hourly rows as before. */
START_TEST(test_period_history_fallbacks)
{
        gc_ledger_opts o = {0};
        gc_ledger *f;
        gc_query q = window(T0 + DAY_S, T0 + 2 * DAY_S, 0, "pod");
        gc_cost_summary s = {0};

        o.pool = pool;
        f = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(f);
        load_periods(f);
        ck_assert_int_eq(gc_ledger_set_period_since(f, T0 + 2 * DAY_S), 0);
        ck_assert_int_gt(gc_ledger_fold(f, T0 + 13 * DAY_S, 0), 1000);
        ck_assert_int_eq(gc_ledger_query(f, &q, &s), 0);
        ck_assert_ptr_nonnull(row_of(&s, GC_DIM_POD, GC_FOLDED_POD));
        gc_cost_summary_free(&s);
        /* A day from period_since on names its pods. */
        q = window(T0 + 3 * DAY_S, T0 + 4 * DAY_S, 0, "pod");
        ck_assert_int_eq(gc_ledger_query(f, &q, &s), 0);
        ck_assert_uint_gt(s.total.pods, 0);
        ck_assert_uint_ge(s.n_rows, 2);
        ck_assert_ptr_ne(s.rows[0].keys[GC_DIM_POD], NULL);
        ck_assert_str_ne(s.rows[0].keys[GC_DIM_POD], GC_FOLDED_POD);
        gc_cost_summary_free(&s);
        /* By node: hourly rows, which keep nodes but no pods. */
        q = window(T0 + 3 * DAY_S, T0 + 4 * DAY_S, 0, "node");
        ck_assert_int_eq(gc_ledger_query(f, &q, &s), 0);
        ck_assert_uint_eq(s.n_rows, 3);
        gc_cost_summary_free(&s);
        gc_ledger_free(f);
}
END_TEST

/* A ledger restored from the visit of another answers its periods the same. */
static int cp_period(void *ud, const gc_period_row *r)
{
        return gc_ledger_add_period_row(ud, r);
}

/*
 * Label dimensions (label:<key>): every period answers by them exactly (folded, coarsened,
 * restored and cloned: the variants of period_history_ledger), as do whole-hour windows of
 * hourly history; the values of a key add up to the total; filters on them work.
 */
START_TEST(test_label_dims_exact)
{
        static const char *const bys[] = {"label:cost-center", "team,label:exp",
                                          "label:exp,label:cost-center",
                                          "project,label:cost-center"};
        gc_ledger_opts o = {0};
        gc_ledger *u, *f;
        int64_t w[22][2];
        size_t nw = period_windows(w, 19);

        /* Windows of whole hours on hourly history (variant 0: the others coarsened them). */
        w[nw][0] = T0 + 10 * DAY_S + 3 * H;
        w[nw][1] = T0 + 12 * DAY_S + 5 * H;
        nw++;
        w[nw][0] = T0 + 11 * DAY_S + 7 * H;
        w[nw][1] = T0 + 11 * DAY_S + 8 * H;
        nw++;
        o.pool = pool;
        o.top_n = 5;
        o.label_keys = label_keys;
        o.n_label_keys = 2;
        u = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(u);
        load_periods(u);
        f = period_history_ledger(_i, &o);
        for (size_t k = 0; k < nw; k++) {
                for (size_t b = 0; b < sizeof(bys) / sizeof(bys[0]); b++) {
                        gc_query q = window(w[k][0], w[k][1], T0 + 13 * DAY_S, bys[b]);
                        gc_cost_summary a = {0}, s = {0};
                        double sum = 0;

                        /* Coarsened hours (variants 1, 2) answer periods only. */
                        if (!gc_ledger_span_whole(f, q.start, q.end))
                                continue;
                        ck_assert_int_eq(gc_ledger_query(u, &q, &a), 0);
                        ck_assert_int_eq(gc_ledger_query(f, &q, &s), 0);
                        ck_assert(close_rel(a.total.gpu_seconds, s.total.gpu_seconds));
                        ck_assert(close_rel(a.total.cost, s.total.cost));
                        ck_assert_uint_eq(a.n_rows, s.n_rows);
                        ck_assert_uint_eq(s.label_keys.n, 2);
                        ck_assert_str_eq(s.label_keys.key[1], "exp");
                        for (size_t i = 0; i < a.n_rows; i++) {
                                const gc_cost_row *r = row_keys(&s, &q, &a.rows[i]);

                                ck_assert_msg(r != NULL, "window %zu by %s: row %zu", k, bys[b], i);
                                ck_assert(close_rel(r->gpu_seconds, a.rows[i].gpu_seconds));
                                ck_assert(close_rel(r->cost, a.rows[i].cost));
                                /* Pods count where the window is a period or on intervals. */
                                if (k < nw - 2)
                                        ck_assert_uint_eq(r->pods, a.rows[i].pods);
                                sum += r->cost;
                        }
                        ck_assert(close_rel(sum, s.total.cost));
                        gc_cost_summary_free(&a);
                        gc_cost_summary_free(&s);
                }
        }
        /* Absent and empty values read GC_UNLABELLED; a filter on a value keeps only it. */
        {
                gc_query q = window(T0, T0 + 31 * DAY_S, T0 + 13 * DAY_S, "label:cost-center");
                gc_cost_summary s = {0}, t = {0};
                const gc_cost_row *none, *b;

                ck_assert_int_eq(gc_ledger_query(f, &q, &s), 0);
                ck_assert_uint_eq(s.n_rows, 4); /* cc-a, cc-b, cc-c, unlabelled */
                none = row_of(&s, GC_DIM_LABEL, GC_UNLABELLED);
                b = row_of(&s, GC_DIM_LABEL, "cc-b");
                ck_assert_ptr_nonnull(none);
                ck_assert_ptr_nonnull(b);
                q = window(T0, T0 + 31 * DAY_S, T0 + 13 * DAY_S, "team");
                q.filter[GC_DIM_LABEL] = "cc-b";
                ck_assert_int_eq(gc_ledger_query(f, &q, &t), 0);
                ck_assert(close_rel(t.total.cost, b->cost));
                ck_assert_uint_eq(t.total.pods, b->pods);
                gc_cost_summary_free(&t);
                /* A key the ledger does not keep is refused, grouped or filtered. */
                q.filter[GC_DIM_LABEL] = NULL;
                q.filter[GC_DIM_LABEL + 2] = "x";
                ck_assert_int_eq(gc_ledger_query(f, &q, &t), -EINVAL);
                q.filter[GC_DIM_LABEL + 2] = NULL;
                q.by[0] = GC_DIM_LABEL + 2;
                ck_assert_int_eq(gc_ledger_query(f, &q, &t), -EINVAL);
                ck_assert_int_eq(gc_ledger_query(led, &q, &t), -EINVAL); /* keeps none */
                gc_cost_summary_free(&s);
        }
        gc_ledger_free(f);
        gc_ledger_free(u);
}
END_TEST

START_TEST(test_label_dims_parse)
{
        static const char *const dup[] = {"a", "a"};
        static const char *const bad[] = {"a", ""};
        gc_ledger_opts o = {0};
        gc_dim d[GC_KEY_COUNT];
        size_t n = 0;
        char err[256], buf[64];
        gc_usage u = {0};
        gc_label_keys lk;
        gc_ledger *l;

        ck_assert_int_eq(
            gc_dims_parse("team,label:exp,label:cost-center", &lkeys, d, &n, err, sizeof(err)), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_int_eq(d[1], GC_DIM_LABEL + 1);
        ck_assert_int_eq(d[2], GC_DIM_LABEL);
        ck_assert_str_eq(gc_dim_label_name(d[1], &lkeys, buf, sizeof(buf)), "label:exp");
        ck_assert_str_eq(gc_dim_label_name(GC_DIM_TEAM, &lkeys, buf, sizeof(buf)), "team");
        ck_assert_ptr_null(gc_dim_label_name(GC_DIM_LABEL + 2, &lkeys, buf, sizeof(buf)));
        ck_assert_ptr_null(gc_dim_name(GC_DIM_LABEL));
        ck_assert_int_eq(gc_dims_parse("label:exp,label:exp", &lkeys, d, &n, err, sizeof(err)),
                         -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "duplicate"));
        ck_assert_int_eq(gc_dims_parse("label:team", &lkeys, d, &n, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "label key \"team\" is not kept as a dimension (kept: cost-center, "
                              "exp)");
        ck_assert_int_eq(gc_dims_parse("label:x", NULL, d, &n, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err,
                         "label key \"x\" is not kept as a dimension (no label keys are kept)");
        ck_assert_int_eq(gc_dims_parse("label:", &lkeys, d, &n, err, sizeof(err)), -EINVAL);
        ck_assert_int_eq(gc_dims_parse("labels", &lkeys, d, &n, err, sizeof(err)), -EINVAL);

        /* Keys: at most GC_LABEL_DIMS, distinct, non-empty. */
        o.pool = pool;
        o.label_keys = dup;
        o.n_label_keys = 2;
        ck_assert_ptr_null(gc_ledger_new(&o));
        o.label_keys = bad;
        ck_assert_ptr_null(gc_ledger_new(&o));
        o.label_keys = label_keys;
        o.n_label_keys = GC_LABEL_DIMS + 1;
        ck_assert_ptr_null(gc_ledger_new(&o));
        o.n_label_keys = 2;
        l = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(l);
        gc_ledger_label_keys(l, &lk);
        ck_assert_uint_eq(lk.n, 2);
        ck_assert_str_eq(lk.key[0], "cost-center");
        /* A pod's values come back as kept, GC_UNLABELLED for none. */
        u.pod_uid = "p";
        u.labels[1] = "e1";
        u.start = T0;
        u.end = T0 + H;
        u.geq = 1;
        ck_assert_int_eq(gc_ledger_put_usage(l, &u), 0);
        memset(&u, 0, sizeof(u));
        ck_assert_int_eq(gc_ledger_get_usage(l, "p", &u), 0);
        ck_assert_str_eq(u.labels[0], GC_UNLABELLED);
        ck_assert_str_eq(u.labels[1], "e1");
        ck_assert_ptr_null(u.labels[2]);
        gc_ledger_free(l);
        /* A ledger keeping none gives none back. */
        ck_assert_int_eq(put_simple("q", 1, 1, T0, T0 + H), 0);
        ck_assert_int_eq(gc_ledger_get_usage(led, "q", &u), 0);
        ck_assert_ptr_null(u.labels[0]);
}
END_TEST

/*
 * Label tuples no record names any more are emptied once history drops them, and their indexes
 * reused: a high-cardinality label (a run id) costs what history holds, not every value ever
 * seen. A clone made before keeps its own values.
 */
START_TEST(test_label_tuples_swept)
{
        static const char *const keys[] = {"run"};
        gc_ledger_opts o = {0};
        gc_ledger_stats st;
        gc_ledger *l, *c;
        char uid[32], run[32];
        gc_query q;
        gc_cost_summary s;
        size_t bytes;

        o.pool = pool;
        o.label_keys = keys;
        o.n_label_keys = 1;
        l = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(l);
        for (int i = 0; i < 3000; i++) {
                gc_usage u = {0};

                snprintf(uid, sizeof(uid), "old-%d", i);
                snprintf(run, sizeof(run), "run-%d", i);
                u.pod_uid = uid;
                u.labels[0] = run;
                u.geq = 1;
                u.price_per_gpu_hour = 1;
                u.start = T0 + i;
                u.end = T0 + i + 60;
                ck_assert_int_eq(gc_ledger_put_usage(l, &u), 0);
        }
        ck_assert_int_eq(gc_ledger_fold(l, T0 + 2 * H, 0), 3000);
        gc_ledger_stats_get(l, &st);
        ck_assert_uint_eq(st.label_tuples, 3001);
        c = gc_ledger_clone(l);
        ck_assert_ptr_nonnull(c);
        /* Retention drops that day: its rows and periods, and so its tuples. */
        ck_assert_int_ge(gc_ledger_fold(l, T0 + 40 * DAY_S, T0 + 35 * DAY_S), 0);
        gc_ledger_stats_get(l, &st);
        ck_assert_uint_eq(st.label_tuples, 1);
        bytes = st.bytes;
        for (int i = 0; i < 2000; i++) {
                gc_usage u = {0};

                snprintf(uid, sizeof(uid), "new-%d", i);
                snprintf(run, sizeof(run), "later-%d", i % 10);
                u.pod_uid = uid;
                u.labels[0] = run;
                u.geq = 1;
                u.price_per_gpu_hour = 1;
                u.start = T0 + 41 * DAY_S;
                u.end = T0 + 41 * DAY_S + 60;
                ck_assert_int_eq(gc_ledger_put_usage(l, &u), 0);
        }
        gc_ledger_stats_get(l, &st);
        ck_assert_uint_eq(st.label_tuples, 11);
        ck_assert_uint_le(st.bytes, bytes + 2000 * 200); /* the intervals, no larger table */
        memset(&q, 0, sizeof(q));
        q.start = T0 + 41 * DAY_S;
        q.end = q.start + H;
        q.by[0] = GC_DIM_LABEL;
        q.n_by = 1;
        ck_assert_int_eq(gc_ledger_query(l, &q, &s), 0);
        ck_assert_uint_eq(s.n_rows, 10);
        ck_assert_ptr_eq(strstr(s.rows[0].keys[GC_DIM_LABEL], "later-"),
                         s.rows[0].keys[GC_DIM_LABEL]);
        gc_cost_summary_free(&s);
        /* The clone still answers with the values it was made with. */
        q.start = T0;
        q.end = T0 + 2 * H;
        ck_assert_int_eq(gc_ledger_query(c, &q, &s), 0);
        ck_assert_uint_eq(s.n_rows, 3000);
        ck_assert_ptr_nonnull(row_of(&s, GC_DIM_LABEL, "run-2999"));
        gc_cost_summary_free(&s);
        gc_ledger_free(c);
        gc_ledger_free(l);
}
END_TEST

START_TEST(test_period_history_restore)
{
        gc_ledger_visitor v = {cp_usage, cp_capacity, cp_rollup, cp_capacity_rollup, cp_period};
        gc_ledger_opts o = {0};
        gc_ledger *copy;
        gc_ledger_stats a, b;
        gc_query q = window(T0 + 4 * DAY_S, T0 + 11 * DAY_S, T0 + 13 * DAY_S, "team,pod");
        gc_cost_summary s1 = {0}, s2 = {0};
        gc_period_row bad = {0};

        load_periods(led);
        ck_assert_int_gt(gc_ledger_fold(led, T0 + 13 * DAY_S, 0), 1000);
        o.pool = pool;
        copy = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(copy);
        ck_assert_int_eq(gc_ledger_visit(led, &v, copy), 0);
        gc_ledger_stats_get(led, &a);
        ck_assert_int_eq(gc_ledger_set_horizon(copy, a.horizon), 0);
        gc_ledger_stats_get(copy, &b);
        ck_assert_uint_eq(a.periods, b.periods);
        ck_assert_uint_eq(a.period_rows, b.period_rows);
        ck_assert_int_eq(gc_ledger_query(led, &q, &s1), 0);
        ck_assert_int_eq(gc_ledger_query(copy, &q, &s2), 0);
        ck_assert_uint_eq(s1.n_rows, s2.n_rows);
        ck_assert_uint_eq(s1.total.pods, s2.total.pods);
        for (size_t i = 0; i < s1.n_rows; i++) {
                ck_assert_str_eq(s1.rows[i].keys[GC_DIM_POD], s2.rows[i].keys[GC_DIM_POD]);
                ck_assert(s1.rows[i].cost == s2.rows[i].cost);
        }
        gc_cost_summary_free(&s1);
        gc_cost_summary_free(&s2);
        /* Bad rows are refused. */
        bad.unit = GC_TZ_DAY;
        bad.start = T0;
        bad.end = T0;
        ck_assert_int_eq(gc_ledger_add_period_row(copy, &bad), -EINVAL);
        bad.end = T0 + DAY_S;
        bad.gpu_seconds = NAN;
        ck_assert_int_eq(gc_ledger_add_period_row(copy, &bad), -EINVAL);
        bad.gpu_seconds = 1;
        bad.unit = (gc_tz_unit)7;
        ck_assert_int_eq(gc_ledger_add_period_row(copy, &bad), -EINVAL);
        gc_ledger_free(copy);
}
END_TEST

/* Every answer of the ledger for the period windows and a few hours, by several groupings, as
 * text: keys, pods and figures. */
static char *answers(const gc_ledger *l)
{
        static const char *const bys[] = {"",
                                          "team,project,workload",
                                          "namespace,pod",
                                          "workload",
                                          "pod",
                                          "node,team",
                                          "model,capacity_type",
                                          "label:cost-center",
                                          "team,label:exp",
                                          "label:exp,workload"};
        int64_t w[24][2];
        size_t nw = period_windows(w, 19);
        gc_buf b;

        w[nw][0] = T0 + 11 * DAY_S + 5 * H;
        w[nw][1] = w[nw][0] + 7 * H;
        nw++;
        w[nw][0] = T0 + 12 * DAY_S;
        w[nw][1] = T0 + 14 * DAY_S;
        nw++;
        gc_buf_init(&b, 64u << 20);
        for (size_t k = 0; k < nw; k++) {
                for (size_t i = 0; i < sizeof(bys) / sizeof(bys[0]); i++) {
                        gc_query q = window(w[k][0], w[k][1], T0 + 13 * DAY_S, bys[i]);
                        gc_cost_summary s = {0};

                        ck_assert_int_eq(gc_ledger_query(l, &q, &s), 0);
                        gc_buf_printf(&b, "%zu %s: %.9g %.9g %u idle %.9g\n", k, bys[i],
                                      s.total.gpu_seconds, s.total.cost, s.total.pods,
                                      s.idle.gpu_seconds);
                        for (size_t r = 0; r < s.n_rows; r++) {
                                for (size_t d = 0; d < q.n_by; d++)
                                        gc_buf_printf(&b, "%s|", s.rows[r].keys[q.by[d]]);
                                gc_buf_printf(&b, " %.9g %.9g %u\n", s.rows[r].gpu_seconds,
                                              s.rows[r].cost, s.rows[r].pods);
                        }
                        gc_cost_summary_free(&s);
                }
        }
        ck_assert_int_eq(b.err, 0);
        return b.data;
}

static size_t sweep_marking(gc_strpool *p, const gc_ledger *l)
{
        size_t freed = 0;

        ck_assert_int_eq(gc_strpool_sweep_begin(p), 0);
        gc_ledger_mark(l, p);
        ck_assert_int_eq(gc_strpool_sweep(p, &freed), 0);
        return freed;
}

/*
 * The pool's sweep frees what the ledger no longer holds (the uids of pods folded into period
 * history's rest) and nothing it does hold (label values in its tuples included): every answer,
 * from hours, period history and the node rows of coarsened hours, is the same after it, and a
 * clone made before it (pinned, as the API's snapshots are) reads on until let go. ASan sees any
 * freed string read.
 */
START_TEST(test_sweep_keeps_what_the_ledger_holds)
{
        gc_strpool *p = gc_strpool_new(64u << 20);
        gc_ledger_opts o = {0};
        gc_ledger *f, *c;
        char *before, *clone_before, *after;
        size_t count, freed;
        unsigned pin;
        gc_usage u;

        o.pool = p;
        o.top_n = 5;
        o.label_keys = label_keys; /* their values live in the ledger's tuples */
        o.n_label_keys = 2;
        f = period_history_ledger(1, &o); /* folded and coarsened */
        c = gc_ledger_clone(f);
        ck_assert_ptr_nonnull(c);
        pin = gc_strpool_pin(p);
        clone_before = answers(c);
        /* Retention drops the first days: their periods' pods and workloads go too. */
        ck_assert_int_ge(gc_ledger_fold(f, T0 + 13 * DAY_S, T0 + 4 * DAY_S), 0);
        before = answers(f);
        count = gc_strpool_count(p);
        freed = sweep_marking(p, f);
        ck_assert_uint_gt(freed, 100);
        ck_assert_uint_eq(gc_strpool_count(p), count - freed);
        after = answers(f);
        ck_assert_str_eq(after, before);
        free(after);
        after = answers(c); /* the graveyard is still there for it */
        ck_assert_str_eq(after, clone_before);
        free(after);
        /* A second sweep waits for the clone's pin, then frees the graveyard. */
        ck_assert_int_eq(gc_strpool_sweep_begin(p), -EBUSY);
        gc_ledger_free(c);
        gc_strpool_unpin(p, pin);
        ck_assert_uint_eq(sweep_marking(p, f), 0);
        after = answers(f);
        ck_assert_str_eq(after, before);
        free(after);
        /* The ledger goes on after sweeps: a pod whose uid was swept comes back as a new copy
         * and an existing team is the same pointer, so it groups with the rest. */
        memset(&u, 0, sizeof(u));
        u.pod_uid = "pod-7";
        u.dims[GC_DIM_NAMESPACE] = "ns1";
        u.dims[GC_DIM_TEAM] = "ml";
        u.dims[GC_DIM_PROJECT] = "p1";
        u.dims[GC_DIM_NODE] = "n0";
        u.dims[GC_DIM_POD] = "pod-7";
        u.geq = 1;
        u.price_per_gpu_hour = 1;
        u.start = T0 + 13 * DAY_S + H;
        u.end = u.start + H;
        ck_assert_int_eq(gc_ledger_put_usage(f, &u), 0);
        {
                gc_query q = window(T0 + 13 * DAY_S, T0 + 14 * DAY_S, T0 + 14 * DAY_S, "team");
                gc_cost_summary s = {0}, s2 = {0};
                gc_query q2 = window(T0 + 13 * DAY_S, T0 + 14 * DAY_S, T0 + 14 * DAY_S, "");

                ck_assert_int_eq(gc_ledger_query(f, &q, &s), 0);
                ck_assert_int_eq(gc_ledger_query(f, &q2, &s2), 0);
                ck_assert_ptr_nonnull(row_of(&s, GC_DIM_TEAM, "ml"));
                for (size_t i = 0; i < s.n_rows; i++)
                        for (size_t j = 0; j < i; j++)
                                ck_assert_str_ne(s.rows[i].keys[GC_DIM_TEAM],
                                                 s.rows[j].keys[GC_DIM_TEAM]);
                ck_assert(row_of(&s, GC_DIM_TEAM, "ml")->gpu_seconds >= 3600);
                gc_cost_summary_free(&s);
                gc_cost_summary_free(&s2);
        }
        free(before);
        free(clone_before);
        gc_ledger_free(f);
        gc_strpool_free(p);
}
END_TEST

static Suite *ledger_suite(void)
{
        Suite *s = suite_create("ledger");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_thirty_seconds);
        tcase_add_loop_test(tc, test_clipping, 0, sizeof(clip_cases) / sizeof(clip_cases[0]));
        tcase_add_test(tc, test_mig_share_price);
        tcase_add_test(tc, test_group_team_project);
        tcase_add_test(tc, test_group_node);
        tcase_add_test(tc, test_order_ties);
        tcase_add_loop_test(tc, test_filters, 0, sizeof(filter_cases) / sizeof(filter_cases[0]));
        tcase_add_test(tc, test_filters_combined);
        tcase_add_test(tc, test_idle);
        tcase_add_loop_test(tc, test_attribution, 0, sizeof(attr_cases) / sizeof(attr_cases[0]));
        tcase_add_test(tc, test_attribution_no_config);
        tcase_add_loop_test(tc, test_dims_parse, 0, sizeof(dims_cases) / sizeof(dims_cases[0]));
        tcase_add_test(tc, test_dim_names);
        tcase_add_test(tc, test_upsert_replaces);
        tcase_add_test(tc, test_pieces_count_one_pod);
        tcase_add_test(tc, test_forget_removes);
        tcase_add_test(tc, test_many_puts_and_forgets);
        tcase_add_test(tc, test_limits);
        tcase_add_test(tc, test_bad_input);
        tcase_add_test(tc, test_fold_equivalence);
        tcase_add_loop_test(tc, test_steps_equivalence, 0, 8);
        tcase_add_test(tc, test_steps_cut_folded_hour);
        tcase_add_test(tc, test_each_step);
        tcase_add_test(tc, test_each_span);
        tcase_add_test(tc, test_steps_bad_input);
        tcase_add_test(tc, test_fold_keep_since);
        tcase_add_test(tc, test_fold_hour_granular);
        tcase_add_test(tc, test_fold_quarter_hours);
        tcase_add_test(tc, test_fold_no_double_count);
        tcase_add_test(tc, test_fold_capacity);
        tcase_add_test(tc, test_checkpoint_roundtrip);
        tcase_add_test(tc, test_stats_bytes);
        tcase_add_test(tc, test_large_query);
        tcase_add_loop_test(tc, test_period_history_exact, 0, 3);
        tcase_add_test(tc, test_coarsened_windows);
        tcase_add_test(tc, test_sweep_keeps_what_the_ledger_holds);
        tcase_add_test(tc, test_period_history_fallbacks);
        tcase_add_test(tc, test_period_history_restore);
        tcase_add_loop_test(tc, test_label_dims_exact, 0, 3);
        tcase_add_test(tc, test_label_dims_parse);
        tcase_add_test(tc, test_label_tuples_swept);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(ledger_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed != 0;
}
