/* test_model: resource rules, quantities, MIG shares, GPU-equivalents and the pod/node decoders. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "util/util.h"

#define EPS 1e-9

/* Test JSON is written with single quotes; this turns them into double quotes. */
static char *J(const char *s)
{
        char *d = strdup(s);

        ck_assert_ptr_nonnull(d);
        for (char *p = d; *p; p++)
                if (*p == '\'')
                        *p = '"';
        return d;
}

static const char *const team_keys[] = {"team", "app.kubernetes.io/team"};
static const char *const project_keys[] = {"project", "cost-center"};

typedef struct env {
        gc_strpool *pool;
        gc_res_table *res;
        gc_model_opts o;
} env;

static void env_init(env *e)
{
        e->pool = gc_strpool_new(1u << 24);
        e->res = gc_res_table_new_default();
        ck_assert_ptr_nonnull(e->pool);
        ck_assert_ptr_nonnull(e->res);
        ck_assert_int_eq(gc_res_table_set(e->res, "amd.com/gpu", GC_RES_FIXED, 1.0), 0);
        ck_assert_int_eq(gc_res_table_set(e->res, "nvidia.com/gpucores", GC_RES_FIXED, 0.01), 0);
        memset(&e->o, 0, sizeof(e->o));
        e->o.pool = e->pool;
        e->o.res = e->res;
        e->o.team_keys = team_keys;
        e->o.n_team_keys = 2;
        e->o.project_keys = project_keys;
        e->o.n_project_keys = 2;
}

static void env_done(env *e)
{
        gc_res_table_free(e->res);
        gc_strpool_free(e->pool);
}

/* Decodes one pod written with single quotes; returns gc_pod_from_json's result. */
static int pod_of(env *e, const char *json, gc_pod *ret, char *err, size_t errlen)
{
        char *s = J(json);
        cJSON *obj = cJSON_Parse(s);
        int r;

        ck_assert_msg(obj != NULL, "test JSON does not parse: %s", s);
        r = gc_pod_from_json(obj, &e->o, ret, err, errlen);
        cJSON_Delete(obj);
        free(s);
        return r;
}

static int node_of(env *e, const char *json, gc_node *ret, char *err, size_t errlen)
{
        char *s = J(json);
        cJSON *obj = cJSON_Parse(s);
        int r;

        ck_assert_msg(obj != NULL, "test JSON does not parse: %s", s);
        r = gc_node_from_json(obj, &e->o, ret, err, errlen);
        cJSON_Delete(obj);
        free(s);
        return r;
}

static int64_t gpu_count(const gc_pod *p, const char *res)
{
        for (size_t i = 0; i < p->n_gpu; i++)
                if (strcmp(p->gpu[i].resource, res) == 0)
                        return p->gpu[i].count;
        return 0;
}

/* ---- resource table ----------------------------------------------------------------------- */

START_TEST(res_table_rules)
{
        gc_res_table *t = gc_res_table_new_default();
        const gc_res_rule *r;

        ck_assert_ptr_nonnull(t);
        r = gc_res_table_match(t, "nvidia.com/gpu");
        ck_assert_ptr_nonnull(r);
        ck_assert_int_eq(r->kind, GC_RES_GPU);
        ck_assert_int_eq(gc_res_table_match(t, "nvidia.com/gpu.shared")->kind, GC_RES_GPU_SHARED);
        ck_assert_int_eq(gc_res_table_match(t, "nvidia.com/mig-1g.10gb")->kind, GC_RES_MIG);
        ck_assert_int_eq(gc_res_table_match(t, "nvidia.com/mig-1g.10gb.shared")->kind, GC_RES_MIG);
        ck_assert_ptr_null(gc_res_table_match(t, "nvidia.com/gpucores"));
        ck_assert_ptr_null(gc_res_table_match(t, "nvidia.com/gpu "));
        ck_assert_ptr_null(gc_res_table_match(t, "cpu"));
        /* Other vendors' plugins are built in (issue 27); their other resources are not GPUs. */
        ck_assert_int_eq(gc_res_table_match(t, "amd.com/gpu")->kind, GC_RES_AMD);
        ck_assert_ptr_null(gc_res_table_match(t, "amd.com/nic"));

        /* Additions, an exact name over a prefix, and replacement. */
        ck_assert_int_eq(gc_res_table_set(t, "amd.com/gpu", GC_RES_FIXED, 1.0), 0);
        ck_assert_int_eq(gc_res_table_set(t, "nvidia.com/mig-1g.5gb", GC_RES_FIXED, 0.5), 0);
        ck_assert_int_eq(gc_res_table_match(t, "nvidia.com/mig-1g.5gb")->kind, GC_RES_FIXED);
        ck_assert_int_eq(gc_res_table_match(t, "nvidia.com/mig-2g.10gb")->kind, GC_RES_MIG);
        ck_assert_int_eq(gc_res_table_set(t, "nvidia.com/gpu", GC_RES_FIXED, 0), 0);
        r = gc_res_table_match(t, "nvidia.com/gpu");
        ck_assert_int_eq(r->kind, GC_RES_FIXED);
        ck_assert_double_eq(r->gpus_per_unit, 0);
        ck_assert_uint_eq(t->n, 15); /* 14 built in (amd.com/gpu replaced), one added */

        /* A longer prefix wins over a shorter one. */
        ck_assert_int_eq(gc_res_table_set(t, "example.com/*", GC_RES_FIXED, 1), 0);
        ck_assert_int_eq(gc_res_table_set(t, "example.com/half-*", GC_RES_FIXED, 0.5), 0);
        ck_assert_double_eq(gc_res_table_match(t, "example.com/half-x")->gpus_per_unit, 0.5);
        ck_assert_double_eq(gc_res_table_match(t, "example.com/x")->gpus_per_unit, 1);

        ck_assert_int_eq(gc_res_table_set(t, "", GC_RES_GPU, 1), -EINVAL);
        ck_assert_int_eq(gc_res_table_set(t, "a*b", GC_RES_GPU, 1), -EINVAL);
        ck_assert_int_eq(gc_res_table_set(t, "with space", GC_RES_GPU, 1), -EINVAL);
        ck_assert_int_eq(gc_res_table_set(t, "x.io/y", GC_RES_FIXED, -1), -ERANGE);
        ck_assert_int_eq(gc_res_table_set(t, "x.io/y", GC_RES_FIXED, NAN), -ERANGE);
        ck_assert_ptr_null(gc_res_table_free(t));
        ck_assert_ptr_null(gc_res_table_free(NULL));
}
END_TEST

/* ---- quantities ---------------------------------------------------------------------------- */

static const struct {
        const char *in;
        int64_t milli;
        int rc;
} quantities[] = {
    {"1", 1000, 0},
    {"2", 2000, 0},
    {"0", 0, 0},
    {"+2", 2000, 0},
    {"-1", -1000, 0},
    {"500m", 500, 0},
    {"1000m", 1000, 0},
    {"0.5", 500, 0},
    {"1.5k", 1500000, 0},
    {"1k", 1000000, 0},
    {"1M", 1000000000, 0},
    {"1Ki", 1024000, 0},
    {"1Mi", 1048576000, 0},
    {"100Gi", INT64_C(107374182400000), 0},
    {"1e3", 1000000, 0},
    {"1E3", 1000000, 0},
    {"5e-3", 5, 0},
    {"1n", 1, 0},     /* below a thousandth: rounds up, as MilliValue does */
    {"0.0001", 1, 0}, /* same */
    {"1.000000000000000000000000", 1000, 0},
    {"0001", 1000, 0},
    {"1u", 1, 0},
    {"2500u", 3, 0},
    {"8E", 0, -ERANGE}, /* 8e18 units do not fit in milli-units */
    {"9Ei", 0, -ERANGE},
    {"99999999999999999999", 0, -ERANGE},
    {"", 0, -EINVAL},
    {"abc", 0, -EINVAL},
    {"1x", 0, -EINVAL},
    {"1.2.3", 0, -EINVAL},
    {".", 0, -EINVAL},
    {"1ki", 0, -EINVAL},
    {"1KB", 0, -EINVAL},
    {"1K", 0, -EINVAL},
    {" 1", 0, -EINVAL},
    {"1 ", 0, -EINVAL},
    {"1e", 0, -EINVAL},
    {"--1", 0, -EINVAL},
    {"1Gi1", 0, -EINVAL},
    {"1111111111111111111111111111111111111111111111111111111111111111111", 0, -EINVAL},
};

START_TEST(quantity_table)
{
        int64_t v = -42;
        int rc = gc_quantity_parse(quantities[_i].in, &v);

        ck_assert_msg(rc == quantities[_i].rc, "\"%s\": rc %d, want %d", quantities[_i].in, rc,
                      quantities[_i].rc);
        if (rc == 0)
                ck_assert_msg(v == quantities[_i].milli, "\"%s\": %lld, want %lld",
                              quantities[_i].in, (long long)v, (long long)quantities[_i].milli);
        else
                ck_assert_int_eq(v, -42); /* ret untouched on failure */
}
END_TEST

/* ---- MIG shares ---------------------------------------------------------------------------- */

static const struct {
        const char *parent;
        const char *profile;
        double share;
        int rc;
        int estimate;
} migs[] = {
    /* H100 80GB (C=7, M=8): max(compute/7, memory/8) */
    {"NVIDIA-H100-80GB-HBM3", "1g.20gb", 2.0 / 8, 0, 0},
    {"NVIDIA-H100-80GB-HBM3", "2g.20gb", 2.0 / 7, 0, 0},
    {"NVIDIA-H100-80GB-HBM3", "3g.40gb", 4.0 / 8, 0, 0},
    {"NVIDIA-H100-80GB-HBM3", "4g.40gb", 4.0 / 7, 0, 0},
    {"NVIDIA-H100-80GB-HBM3", "1g.10gb", 1.0 / 7, 0, 0},
    {"NVIDIA-H100-80GB-HBM3", "1g.10gb+me", 1.0 / 7, 0, 0},
    {"NVIDIA-H100-80GB-HBM3", "1g.10gb.me", 1.0 / 7, 0, 0},
    {"NVIDIA-H100-80GB-HBM3", "7g.80gb", 1.0, 0, 0},
    {"NVIDIA H100 80GB HBM3", "3g.40gb", 4.0 / 8, 0, 0}, /* DCGM spelling */
    {"NVIDIA-H100-PCIe", "1g.20gb", 2.0 / 8, 0, 0},
    {"NVIDIA-H800", "1g.20gb", 2.0 / 8, 0, 0},
    {"NVIDIA-A100-SXM4-80GB", "2g.20gb", 2.0 / 7, 0, 0},
    {"NVIDIA-A100-80GB-PCIe", "1g.20gb", 2.0 / 8, 0, 0},
    /* A100 40GB: 1g.10gb is the larger 1g there */
    {"NVIDIA-A100-SXM4-40GB", "1g.10gb", 2.0 / 8, 0, 0},
    {"NVIDIA-A100-SXM4-40GB", "1g.5gb", 1.0 / 7, 0, 0},
    {"NVIDIA-A100-PCIE-40GB", "3g.20gb", 4.0 / 8, 0, 0},
    {"NVIDIA-A100-SXM4-40GB", "7g.40gb", 1.0, 0, 0},
    {"A100-SXM4-40GB", "4g.20gb", 4.0 / 7, 0, 0},
    /* A30 (C=4, M=4) */
    {"NVIDIA-A30", "1g.6gb", 1.0 / 4, 0, 0},
    {"NVIDIA-A30", "1g.6gb+me", 1.0 / 4, 0, 0},
    {"NVIDIA-A30", "2g.12gb", 2.0 / 4, 0, 0},
    {"NVIDIA-A30", "4g.24gb", 1.0, 0, 0},
    /* H100 94GB (NVL) and 96GB */
    {"NVIDIA-H100-NVL", "1g.12gb", 1.0 / 7, 0, 0},
    {"NVIDIA-H100-NVL", "1g.24gb", 2.0 / 8, 0, 0},
    {"NVIDIA-H100-NVL", "3g.47gb", 4.0 / 8, 0, 0},
    {"NVIDIA-H100-NVL", "7g.94gb", 1.0, 0, 0},
    {"NVIDIA-H100-SXM5-94GB", "4g.47gb", 4.0 / 7, 0, 0},
    {"NVIDIA-H100-96GB", "3g.48gb", 4.0 / 8, 0, 0},
    {"NVIDIA-GH200-480GB", "3g.48gb", 4.0 / 8, 0, 0},
    {"NVIDIA-GH200-480GB", "7g.96gb", 1.0, 0, 0},
    /* H20 is a prefix of H200: each has its own table */
    {"NVIDIA-H20", "1g.24gb", 2.0 / 8, 0, 0},
    {"NVIDIA-H20", "7g.96gb", 1.0, 0, 0},
    {"NVIDIA-H200", "1g.35gb", 2.0 / 8, 0, 0},
    {"NVIDIA-H200", "1g.18gb", 1.0 / 7, 0, 0},
    {"NVIDIA-H200", "7g.141gb", 1.0, 0, 0},
    {"NVIDIA-H200", "1g.24gb", 1.0 / 7, 0, 1}, /* not an H200 profile: pattern, 24*8/141 < 1.5 */
    {"NVIDIA-H20", "1g.35gb", 2.0 / 8, 0, 1},  /* not an H20 profile: 35*8/96 >= 1.5 */
    /* GH200 144GB, B200, GB200 */
    {"NVIDIA GH200 144G HBM3e", "1g.36gb", 2.0 / 8, 0, 0},
    {"NVIDIA-GH200-144G-HBM3e", "3g.72gb", 4.0 / 8, 0, 0},
    {"NVIDIA-B200", "2g.45gb", 2.0 / 7, 0, 0},
    {"NVIDIA-B200", "1g.23gb", 1.0 / 7, 0, 0},
    {"NVIDIA-B200", "1g.45gb", 2.0 / 8, 0, 0},
    {"NVIDIA-GB200", "1g.47gb", 2.0 / 8, 0, 0},
    /* a product label under MIG single: the parent is what precedes -MIG- */
    {"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "1g.10gb", 2.0 / 8, 0, 0},
    /* unknown profiles and parents: the pattern, flagged */
    {"NVIDIA-H100-80GB-HBM3", "2g.30gb", 2.0 / 7, 0, 1},
    {"NVIDIA-H100-80GB-HBM3", "1g.10gb+foo", 1.0 / 7, 0, 1},
    {"Tesla-T4", "3g.40gb", 4.0 / 8, 0, 1},
    {"Tesla-T4", "7g.80gb", 1.0, 0, 1},
    {"Tesla-T4", "4g.40gb", 4.0 / 7, 0, 1},
    {NULL, "2g.20gb", 2.0 / 7, 0, 1},
    {NULL, "1g.20gb", 2.0 / 8, 0, 1}, /* every table that lists 1g.20gb says 2 slices */
    {NULL, "1g.10gb", 1.0 / 7, 0, 1}, /* the tables disagree: the smaller */
    {"NVIDIA-X900-160GB", "1g.40gb", 2.0 / 8, 0, 1},
    {"NVIDIA-X900-160GB", "1g.20gb", 1.0 / 7, 0, 1},
    /* not profiles */
    {"NVIDIA-H100-80GB-HBM3", "", 0, -EINVAL, 0},
    {"NVIDIA-H100-80GB-HBM3", "0g.5gb", 0, -EINVAL, 0},
    {"NVIDIA-H100-80GB-HBM3", "8g.80gb", 0, -EINVAL, 0},
    {"NVIDIA-H100-80GB-HBM3", "1g", 0, -EINVAL, 0},
    {"NVIDIA-H100-80GB-HBM3", "1g.5", 0, -EINVAL, 0},
    {"NVIDIA-H100-80GB-HBM3", "g.5gb", 0, -EINVAL, 0},
    {"NVIDIA-H100-80GB-HBM3", "1g.5gb+", 0, -EINVAL, 0},
    {"NVIDIA-H100-80GB-HBM3", "1g.5gb+ME", 0, -EINVAL, 0},
    {"NVIDIA-H100-80GB-HBM3", "1g.0gb", 0, -EINVAL, 0},
};

START_TEST(mig_share_table)
{
        double share = -1;
        int est = -1;
        int rc = gc_mig_share(migs[_i].parent, migs[_i].profile, &share, &est);

        ck_assert_msg(rc == migs[_i].rc, "%s %s: rc %d", migs[_i].parent, migs[_i].profile, rc);
        if (rc < 0)
                return;
        ck_assert_msg(fabs(share - migs[_i].share) < EPS, "%s %s: share %f, want %f",
                      migs[_i].parent, migs[_i].profile, share, migs[_i].share);
        ck_assert_msg(est == migs[_i].estimate, "%s %s: estimate %d", migs[_i].parent,
                      migs[_i].profile, est);
}
END_TEST

/* ---- GPU-equivalents per node kind ---------------------------------------------------------- */

static const struct {
        const char *what;
        const char *labels;      /* JSON object, single quotes */
        const char *allocatable; /* JSON object */
        double geq;              /* hand-computed allocatable GPU-equivalents */
        int estimate;
} node_kinds[] = {
    {"whole GPUs", "{'nvidia.com/gpu.product':'NVIDIA-H100-80GB-HBM3','nvidia.com/gpu.count':'8'}",
     "{'nvidia.com/gpu':'8','cpu':'96'}", 8.0, 0},
    {"no GFD labels", "{}", "{'nvidia.com/gpu':'2'}", 2.0, 0},
    {"MIG single 1g.5gb on A100-40GB: 7 x 1/7",
     "{'nvidia.com/gpu.product':'NVIDIA-A100-SXM4-40GB-MIG-1g.5gb','nvidia.com/mig.strategy':"
     "'single','nvidia.com/gpu.slices.gi':'1'}",
     "{'nvidia.com/gpu':'7'}", 1.0, 0},
    {"MIG single 3g.40gb on H100, 2 GPUs: 4 x 4/8",
     "{'nvidia.com/gpu.product':'NVIDIA-H100-80GB-HBM3-MIG-3g.40gb','nvidia.com/mig.strategy':"
     "'single'}",
     "{'nvidia.com/gpu':'4'}", 2.0, 0},
    {"MIG single known only from slices.gi=2: 2/7 each, estimate",
     "{'nvidia.com/gpu.product':'NVIDIA-A100-SXM4-40GB','nvidia.com/mig.strategy':'single',"
     "'nvidia.com/gpu.slices.gi':'2'}",
     "{'nvidia.com/gpu':'3'}", 6.0 / 7, 1},
    {"MIG single, all disabled: whole GPUs",
     "{'nvidia.com/gpu.product':'NVIDIA-H100-80GB-HBM3','nvidia.com/mig.strategy':'single',"
     "'nvidia.com/mig.config':'all-disabled'}",
     "{'nvidia.com/gpu':'1'}", 1.0, 0},
    {"time-sliced T4: 4 GPUs x 4 replicas = 16 units",
     "{'nvidia.com/gpu.product':'Tesla-T4-SHARED','nvidia.com/gpu.count':'4',"
     "'nvidia.com/gpu.replicas':'4','nvidia.com/gpu.sharing-strategy':'time-slicing'}",
     "{'nvidia.com/gpu':'16'}", 4.0, 0},
    {"MPS, replicas 10, 2 GPUs",
     "{'nvidia.com/gpu.product':'NVIDIA-A10G-SHARED','nvidia.com/gpu.replicas':'10',"
     "'nvidia.com/gpu.sharing-strategy':'mps'}",
     "{'nvidia.com/gpu':'20'}", 2.0, 0},
    {"-SHARED without a replica count: estimate", "{'nvidia.com/gpu.product':'Tesla-T4-SHARED'}",
     "{'nvidia.com/gpu':'4'}", 4.0, 1},
    {"replicas 0 means not shared", "{'nvidia.com/gpu.replicas':'0'}", "{'nvidia.com/gpu':'2'}",
     2.0, 0},
    {"renamed time-slicing: gpu.shared x 1/4",
     "{'nvidia.com/gpu.product':'Tesla-T4','nvidia.com/gpu.replicas':'4'}",
     "{'nvidia.com/gpu.shared':'8'}", 2.0, 0},
    {"MIG mixed on A100-40GB: 4 x 1g.10gb (2/8) + 2 x 3g.20gb (4/8)",
     "{'nvidia.com/gpu.product':'NVIDIA-A100-SXM4-40GB','nvidia.com/mig.strategy':'mixed'}",
     "{'nvidia.com/mig-1g.10gb':'4','nvidia.com/mig-3g.20gb':'2','nvidia.com/gpu':'0'}", 2.0, 0},
    {"MIG mixed on H100 with a whole GPU beside: 7 x 1g.10gb + 1",
     "{'nvidia.com/gpu.product':'NVIDIA-H100-80GB-HBM3','nvidia.com/mig.strategy':'mixed'}",
     "{'nvidia.com/mig-1g.10gb':'7','nvidia.com/gpu':'1'}", 2.0, 0},
    {"MIG mixed shared, per-profile replicas 2: 14 x 1/7 / 2",
     "{'nvidia.com/gpu.product':'NVIDIA-A100-SXM4-40GB','nvidia.com/mig.strategy':'mixed',"
     "'nvidia.com/mig-1g.5gb.replicas':'2','nvidia.com/gpu.replicas':'3'}",
     "{'nvidia.com/mig-1g.5gb.shared':'14'}", 1.0, 0},
    {"MIG mixed shared, node replicas 3: 6 x 2/8 / 3",
     "{'nvidia.com/gpu.product':'NVIDIA-A100-SXM4-40GB','nvidia.com/gpu.replicas':'3'}",
     "{'nvidia.com/mig-1g.10gb.shared':'6'}", 0.5, 0},
    {"MIG mixed time-sliced, not renamed: 14 x mig-1g.5gb (1/7) / 2",
     "{'nvidia.com/gpu.product':'NVIDIA-A100-SXM4-40GB','nvidia.com/mig.strategy':'mixed',"
     "'nvidia.com/mig-1g.5gb.replicas':'2','nvidia.com/mig-1g.5gb.product':"
     "'NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED'}",
     "{'nvidia.com/mig-1g.5gb':'14','nvidia.com/mig-2g.10gb':'3'}", 1.0 + 3 * 2.0 / 7, 0},
    {"MIG -SHARED product without replicas: estimate",
     "{'nvidia.com/gpu.product':'NVIDIA-A100-SXM4-40GB','nvidia.com/mig-1g.5gb.product':"
     "'NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED'}",
     "{'nvidia.com/mig-1g.5gb':'7'}", 1.0, 1},
    {"MIG on an unknown model: pattern, estimate", "{'nvidia.com/gpu.product':'NVIDIA-X1'}",
     "{'nvidia.com/mig-3g.40gb':'2'}", 1.0, 1},
    {"configured amd.com/gpu (1.0 each)", "{}", "{'amd.com/gpu':'3'}", 3.0, 0},
    {"HAMi gpucores 0.01 each", "{}", "{'nvidia.com/gpucores':'300'}", 3.0, 0},
    {"GKE MIG partition 1g.5gb on nvidia-tesla-a100",
     "{'cloud.google.com/gke-accelerator':'nvidia-tesla-a100',"
     "'cloud.google.com/gke-gpu-partition-size':'1g.5gb'}",
     "{'nvidia.com/gpu':'7'}", 1.0, 0},
    {"GKE time-sharing, 2 clients per GPU",
     "{'cloud.google.com/gke-accelerator':'nvidia-l4',"
     "'cloud.google.com/gke-max-shared-clients-per-gpu':'2'}",
     "{'nvidia.com/gpu':'4'}", 2.0, 0},
};

START_TEST(node_geq_table)
{
        char buf[2048], err[256] = "";
        gc_node n;
        env e;
        int r;

        env_init(&e);
        snprintf(buf, sizeof(buf),
                 "{'kind':'Node','metadata':{'name':'n1','uid':'u-1','labels':%s},"
                 "'status':{'allocatable':%s}}",
                 node_kinds[_i].labels, node_kinds[_i].allocatable);
        r = node_of(&e, buf, &n, err, sizeof(err));
        ck_assert_msg(r == 1, "%s: rc %d (%s)", node_kinds[_i].what, r, err);
        ck_assert_msg(fabs(n.alloc_geq - node_kinds[_i].geq) < EPS, "%s: geq %f, want %f",
                      node_kinds[_i].what, n.alloc_geq, node_kinds[_i].geq);
        ck_assert_msg(n.geq_estimate == node_kinds[_i].estimate, "%s: estimate %d",
                      node_kinds[_i].what, n.geq_estimate);
        gc_node_release(&n);
        env_done(&e);
}
END_TEST

START_TEST(geq_direct)
{
        char err[256];
        double g;
        int est;
        gc_node n;
        env e;

        env_init(&e);
        /* No node: whole GPUs count 1, MIG profiles the pattern (an estimate). */
        ck_assert_int_eq(gc_gpu_equivalents(e.res, "nvidia.com/gpu", 3, NULL, &g, &est), 0);
        ck_assert_double_eq_tol(g, 3.0, EPS);
        ck_assert_int_eq(est, 0);
        ck_assert_int_eq(gc_gpu_equivalents(e.res, "nvidia.com/mig-1g.20gb", 2, NULL, &g, &est), 0);
        ck_assert_double_eq_tol(g, 0.5, EPS);
        ck_assert_int_eq(est, 1);
        ck_assert_int_eq(gc_gpu_equivalents(e.res, "nvidia.com/gpu.shared", 1, NULL, &g, &est), 0);
        ck_assert_int_eq(est, 1);
        ck_assert_int_eq(gc_gpu_equivalents(e.res, "cpu", 1, NULL, &g, &est), -ENOENT);
        ck_assert_int_eq(gc_gpu_equivalents(e.res, "nvidia.com/mig-foo", 1, NULL, &g, &est),
                         -EINVAL);
        ck_assert_int_eq(gc_gpu_equivalents(e.res, "nvidia.com/gpu", -1, NULL, &g, &est), -EINVAL);

        /* A pod's sum on a MIG mixed H100 node: 1 x 1g.20gb + 1 x 3g.40gb = 0.25 + 0.5. */
        ck_assert_int_eq(node_of(&e,
                                 "{'metadata':{'name':'h','labels':{'nvidia.com/gpu.product':"
                                 "'NVIDIA-H100-80GB-HBM3'}},'status':{'allocatable':{"
                                 "'nvidia.com/mig-1g.20gb':'4','nvidia.com/mig-3g.40gb':'1'}}}",
                                 &n, err, sizeof(err)),
                         1);
        {
                gc_pod p;

                memset(&p, 0, sizeof(p));
                p.gpu[0].resource = "nvidia.com/mig-1g.20gb";
                p.gpu[0].count = 1;
                p.gpu[1].resource = "nvidia.com/mig-3g.40gb";
                p.gpu[1].count = 1;
                p.n_gpu = 2;
                ck_assert_int_eq(gc_pod_gpu_equivalents(e.res, &p, &n, &g, &est), 0);
                ck_assert_double_eq_tol(g, 0.75, EPS);
                ck_assert_int_eq(est, 0);
        }
        ck_assert_double_eq_tol(n.alloc_geq, 1.5, EPS);
        gc_node_release(&n);
        env_done(&e);
}
END_TEST

/* ---- effective request ---------------------------------------------------------------------- */

static const struct {
        const char *what;
        const char *spec;
        int rc;
        int64_t gpus; /* nvidia.com/gpu */
        int64_t mig;  /* nvidia.com/mig-1g.10gb */
        const char *container;
} effective[] = {
    {"two app containers add",
     "{'containers':[{'name':'a','resources':{'limits':{"
     "'nvidia.com/gpu':'1'}}},{'name':'b','resources':{'limits':{"
     "'nvidia.com/gpu':'2'}}}]}",
     1, 3, 0, "a"},
    {"an init container bigger than the app containers raises the request",
     "{'initContainers':[{'name':'prep','resources':{'limits':{'nvidia.com/gpu':'4'}}}],"
     "'containers':[{'name':'main','resources':{'limits':{'nvidia.com/gpu':'1'}}}]}",
     1, 4, 0, "main"},
    {"an init container smaller than the app containers does not",
     "{'initContainers':[{'name':'prep','resources':{'limits':{'nvidia.com/gpu':'1'}}}],"
     "'containers':[{'name':'main','resources':{'limits':{'nvidia.com/gpu':'2'}}}]}",
     1, 2, 0, "main"},
    {"a sidecar started before an init container adds to it: max(1+1, 2+1)",
     "{'initContainers':[{'name':'side','restartPolicy':'Always','resources':{'limits':{"
     "'nvidia.com/gpu':'1'}}},{'name':'prep','resources':{'limits':{'nvidia.com/gpu':'2'}}}],"
     "'containers':[{'name':'main','resources':{'limits':{'nvidia.com/gpu':'1'}}}]}",
     1, 3, 0, "main"},
    {"a sidecar after an init container does not: max(1+1, 2)",
     "{'initContainers':[{'name':'prep','resources':{'limits':{'nvidia.com/gpu':'2'}}},"
     "{'name':'side','restartPolicy':'Always','resources':{'limits':{'nvidia.com/gpu':'1'}}}],"
     "'containers':[{'name':'main','resources':{'limits':{'nvidia.com/gpu':'1'}}}]}",
     1, 2, 0, "main"},
    {"a sidecar alone counts with the app containers",
     "{'initContainers':[{'name':'side','restartPolicy':'Always','resources':{'requests':{"
     "'nvidia.com/gpu':'1'}}}],'containers':[{'name':'main'}]}",
     1, 1, 0, "side"},
    {"overhead adds",
     "{'overhead':{'nvidia.com/gpu':'1','cpu':'250m'},'containers':[{"
     "'name':'m','resources':{'limits':{'nvidia.com/gpu':'1'}}}]}",
     1, 2, 0, "m"},
    {"requests only",
     "{'containers':[{'name':'m','resources':{'requests':{"
     "'nvidia.com/gpu':'2'}}}]}",
     1, 2, 0, "m"},
    {"requests win over limits",
     "{'containers':[{'name':'m','resources':{'requests':{"
     "'nvidia.com/gpu':'1'},'limits':{'nvidia.com/gpu':'1'}}}]}",
     1, 1, 0, "m"},
    {"a JSON number is a quantity too",
     "{'containers':[{'name':'m','resources':{'limits':{"
     "'nvidia.com/gpu':2}}}]}",
     1, 2, 0, "m"},
    {"MIG and whole GPUs in one pod",
     "{'containers':[{'name':'a','resources':{'limits':{'cpu':'1','memory':'1Gi'}}},{'name':"
     "'b','resources':{'limits':{'nvidia.com/mig-1g.10gb':'2'}}},{'name':'c','resources':{"
     "'limits':{'nvidia.com/gpu':'1'}}}]}",
     1, 1, 2, "b"},
    {"no GPU", "{'containers':[{'name':'a','resources':{'limits':{'cpu':'1'}}}]}", 0, 0, 0, NULL},
    {"a zero GPU request",
     "{'containers':[{'name':'a','resources':{'limits':{"
     "'nvidia.com/gpu':'0'}}}]}",
     0, 0, 0, NULL},
    {"no containers", "{}", 0, 0, 0, NULL},
    {"half a GPU", "{'containers':[{'name':'a','resources':{'limits':{'nvidia.com/gpu':'0.5'}}}]}",
     -EINVAL, 0, 0, NULL},
    {"500m GPU", "{'containers':[{'name':'a','resources':{'limits':{'nvidia.com/gpu':'500m'}}}]}",
     -EINVAL, 0, 0, NULL},
    {"negative", "{'containers':[{'name':'a','resources':{'limits':{'nvidia.com/gpu':'-1'}}}]}",
     -EINVAL, 0, 0, NULL},
    {"a MIG name without a profile",
     "{'containers':[{'name':'a','resources':{'limits':{'nvidia.com/mig-foo':'1'}}}]}", -EINVAL, 0,
     0, NULL},
    {"containers not an array", "{'containers':{}}", -EINVAL, 0, 0, NULL},
    {"five GPU resources",
     "{'containers':[{'name':'a','resources':{'limits':{'nvidia.com/gpu':'1',"
     "'nvidia.com/mig-1g.10gb':'1','nvidia.com/mig-2g.20gb':'1','nvidia.com/mig-3g.40gb':'1',"
     "'nvidia.com/mig-7g.80gb':'1'}}}]}",
     -E2BIG, 0, 0, NULL},
};

START_TEST(effective_table)
{
        char buf[2048], err[256] = "";
        gc_pod p;
        env e;
        int r;

        env_init(&e);
        snprintf(buf, sizeof(buf), "{'metadata':{'name':'p','namespace':'ns','uid':'u'},'spec':%s}",
                 effective[_i].spec);
        memset(&p, 0x5a, sizeof(p));
        r = pod_of(&e, buf, &p, err, sizeof(err));
        ck_assert_msg(r == effective[_i].rc, "%s: rc %d (%s)", effective[_i].what, r, err);
        if (r == 1) {
                ck_assert_msg(gpu_count(&p, "nvidia.com/gpu") == effective[_i].gpus,
                              "%s: %lld GPUs", effective[_i].what,
                              (long long)gpu_count(&p, "nvidia.com/gpu"));
                ck_assert_int_eq(gpu_count(&p, "nvidia.com/mig-1g.10gb"), effective[_i].mig);
                ck_assert_str_eq(p.container, effective[_i].container);
        }
        env_done(&e);
}
END_TEST

START_TEST(errors_name_the_field)
{
        char err[256] = "";
        gc_pod p;
        env e;

        env_init(&e);
        ck_assert_int_eq(
            pod_of(&e,
                   "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'a'},{'name':'b',"
                   "'resources':{'limits':{'nvidia.com/gpu':'x'}}}]}}",
                   &p, err, sizeof(err)),
            -EINVAL);
        ck_assert_str_eq(err, "spec.containers[1].resources.limits[nvidia.com/gpu]: not a "
                              "quantity: \"x\"");
        ck_assert_int_eq(pod_of(&e,
                                "{'metadata':{'name':'p'},'spec':{'initContainers':[{'name':'a',"
                                "'resources':{'requests':{'nvidia.com/gpu':'1.5'}}}]}}",
                                &p, err, sizeof(err)),
                         -EINVAL);
        ck_assert_str_eq(err, "spec.initContainers[0].resources.requests[nvidia.com/gpu]: not a "
                              "whole number: \"1.5\"");
        ck_assert_int_eq(pod_of(&e,
                                "{'metadata':{'name':'p'},'spec':{'overhead':{'nvidia.com/gpu':"
                                "true}}}",
                                &p, err, sizeof(err)),
                         -EINVAL);
        ck_assert_str_eq(err, "spec.overhead[nvidia.com/gpu]: not a quantity");
        ck_assert_int_eq(pod_of(&e,
                                "{'metadata':{'labels':{}},'spec':{'containers':[{'resources':{"
                                "'limits':{'nvidia.com/gpu':'1'}}}]}}",
                                &p, err, sizeof(err)),
                         -EINVAL);
        ck_assert_str_eq(err, "metadata.name: missing");
        /* The container-status path is built whole for each level (it was strncat'ed). */
        ck_assert_int_eq(pod_of(&e,
                                "{'metadata':{'name':'p'},'spec':{'containers':[{'resources':{"
                                "'limits':{'nvidia.com/gpu':'1'}}}]},'status':{'phase':'Succeeded',"
                                "'containerStatuses':[{'name':'a','state':{'running':{}}},{'name':"
                                "'b','state':{'terminated':{'finishedAt':'yesterday'}}}]}}",
                                &p, err, sizeof(err)),
                         -EINVAL);
        ck_assert_msg(
            strncmp(err, "status.containerStatuses[1].state.terminated.finishedAt: ", 57) == 0,
            "%s", err);
        ck_assert_int_eq(pod_of(&e,
                                "{'metadata':{'name':'p'},'spec':{'containers':[{'resources':{"
                                "'limits':{'nvidia.com/gpu':'1'}}}]},'status':{'phase':'Failed',"
                                "'initContainerStatuses':[{'name':'a','state':{'terminated':3}}]}}",
                                &p, err, sizeof(err)),
                         -EINVAL);
        ck_assert_msg(strncmp(err, "status.initContainerStatuses[0].state.terminated: ", 50) == 0,
                      "%s", err);
        ck_assert_int_eq(pod_of(&e,
                                "{'metadata':{'name':'p','labels':{'team':'a b'}},'spec':{"
                                "'containers':[{'resources':{'limits':{'nvidia.com/gpu':'1'}}}]}}",
                                &p, err, sizeof(err)),
                         -EINVAL);
        ck_assert_str_eq(err, "metadata.labels[team]: value not printable");
        ck_assert_int_eq(
            pod_of(&e,
                   "{'metadata':{'name':'p','labels':{'team':'"
                   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'}},"
                   "'spec':{'containers':[{'resources':{'limits':{'nvidia.com/gpu':"
                   "'1'}}}]}}",
                   &p, err, sizeof(err)),
            -EINVAL);
        ck_assert_str_eq(err, "metadata.labels[team]: value longer than 63 bytes");
        ck_assert_int_eq(pod_of(&e,
                                "{'metadata':{'name':'p'},'spec':{'containers':[{'resources':{"
                                "'limits':{'nvidia.com/gpu':'1'}}}]},'status':{'conditions':[{"
                                "'type':'PodScheduled','status':'True','lastTransitionTime':"
                                "'2026-13-01T00:00:00Z'}]}}",
                                &p, err, sizeof(err)),
                         -EINVAL);
        ck_assert_str_eq(err, "status.conditions[0].lastTransitionTime: not an RFC 3339 time: "
                              "\"2026-13-01T00:00:00Z\"");
        env_done(&e);
}
END_TEST

/* ---- times and phases ----------------------------------------------------------------------- */

#define GPU_SPEC                                                                                   \
        "'spec':{'nodeName':'n1','containers':[{'name':'c','resources':{'limits':{'nvidia.com/"    \
        "gpu':'1'}}}]}"

/* 2026-11-20T09:15:03Z, hand-computed: 20,777 days from the epoch to 2026-11-20 (20777*86400 =
 * 1,795,132,800) plus 9h15m03s (33,303 s). */
#define T0 INT64_C(1795166103)

static const struct {
        const char *what;
        const char *rest; /* metadata and status, after the spec */
        int64_t bound_at, finished_at;
        gc_phase phase;
        uint32_t flags;
} times[] = {
    {"running, PodScheduled with a fraction",
     "'metadata':{'name':'p','creationTimestamp':'2026-11-20T09:14:00Z'},'status':{'phase':"
     "'Running','conditions':[{'type':'Ready','status':'True','lastTransitionTime':"
     "'2026-11-20T09:20:00Z'},{'type':'PodScheduled','status':'True','lastTransitionTime':"
     "'2026-11-20T09:15:03.987654Z'}]}",
     T0, 0, GC_PHASE_RUNNING, 0},
    {"an offset is converted to UTC",
     "'metadata':{'name':'p'},'status':{'phase':'Running','conditions':[{'type':"
     "'PodScheduled','status':'True','lastTransitionTime':'2026-11-20T11:15:03+02:00'}]}",
     T0, 0, GC_PHASE_RUNNING, 0},
    {"PodScheduled False is not bound; startTime is the guess",
     "'metadata':{'name':'p'},'status':{'phase':'Running','startTime':'2026-11-20T09:15:13Z',"
     "'conditions':[{'type':'PodScheduled','status':'False','lastTransitionTime':"
     "'2026-11-20T09:15:03Z'}]}",
     T0 + 10, 0, GC_PHASE_RUNNING, GC_POD_F_BOUND_GUESSED},
    {"no conditions, no startTime: the creation time",
     "'metadata':{'name':'p','creationTimestamp':'2026-11-20T09:15:00Z'},'status':{'phase':"
     "'Pending'}",
     T0 - 3, 0, GC_PHASE_PENDING, GC_POD_F_BOUND_GUESSED},
    {"succeeded: the latest finishedAt of app and init containers",
     "'metadata':{'name':'p'},'status':{'phase':'Succeeded','conditions':[{'type':"
     "'PodScheduled','status':'True','lastTransitionTime':'2026-11-20T09:15:03Z'},{'type':"
     "'Ready','status':'False','lastTransitionTime':'2026-11-20T12:00:00Z'}],"
     "'initContainerStatuses':[{'name':'i','state':{'terminated':{'exitCode':0,'finishedAt':"
     "'2026-11-20T09:16:03Z'}}}],'containerStatuses':[{'name':'a','state':{'terminated':{"
     "'exitCode':0,'finishedAt':'2026-11-20T10:15:03Z'}}},{'name':'b','state':{'terminated':{"
     "'exitCode':0,'finishedAt':'2026-11-20T10:15:02.5Z'}}}]}",
     T0, T0 + 3600, GC_PHASE_SUCCEEDED, 0},
    {"failed without finishedAt: the latest condition, guessed",
     "'metadata':{'name':'p'},'status':{'phase':'Failed','conditions':[{'type':"
     "'PodScheduled','status':'True','lastTransitionTime':'2026-11-20T09:15:03Z'},{'type':"
     "'Ready','status':'False','lastTransitionTime':'2026-11-20T09:45:03Z'}],"
     "'containerStatuses':[{'name':'a','state':{'waiting':{'reason':'x'}}}]}",
     T0, T0 + 1800, GC_PHASE_FAILED, GC_POD_F_END_GUESSED},
    {"failed, nothing at all: bound and ended at the creation time",
     "'metadata':{'name':'p','creationTimestamp':'2026-11-20T09:15:03Z'},'status':{'phase':"
     "'Failed'}",
     T0, T0, GC_PHASE_FAILED, GC_POD_F_BOUND_GUESSED | GC_POD_F_END_GUESSED},
    {"a finishedAt before the binding (clock skew) is clamped",
     "'metadata':{'name':'p'},'status':{'phase':'Succeeded','conditions':[{'type':"
     "'PodScheduled','status':'True','lastTransitionTime':'2026-11-20T09:15:03Z'}],"
     "'containerStatuses':[{'name':'a','state':{'terminated':{'finishedAt':"
     "'2026-11-20T09:15:01Z'}}}]}",
     T0, T0, GC_PHASE_SUCCEEDED, 0},
    {"an unknown phase",
     "'metadata':{'name':'p'},'status':{'phase':'Lost','conditions':[{'type':'PodScheduled',"
     "'status':'True','lastTransitionTime':'2026-11-20T09:15:03Z','lastProbeTime':null}]}",
     T0, 0, GC_PHASE_UNKNOWN, 0},
    {"Running: a terminated container does not end the pod",
     "'metadata':{'name':'p'},'status':{'phase':'Running','conditions':[{'type':"
     "'PodScheduled','status':'True','lastTransitionTime':'2026-11-20T09:15:03Z'}],"
     "'containerStatuses':[{'name':'a','state':{'terminated':{'finishedAt':"
     "'2026-11-20T10:15:03Z'}}}]}",
     T0, 0, GC_PHASE_RUNNING, 0},
};

START_TEST(times_table)
{
        char buf[2048], err[256] = "";
        gc_pod p;
        env e;
        int r;

        env_init(&e);
        snprintf(buf, sizeof(buf), "{%s,%s}", GPU_SPEC, times[_i].rest);
        r = pod_of(&e, buf, &p, err, sizeof(err));
        ck_assert_msg(r == 1, "%s: rc %d (%s)", times[_i].what, r, err);
        ck_assert_msg(p.phase == times[_i].phase, "%s: phase %d", times[_i].what, p.phase);
        ck_assert_msg(p.bound_at == times[_i].bound_at, "%s: bound_at %lld, want %lld",
                      times[_i].what, (long long)p.bound_at, (long long)times[_i].bound_at);
        ck_assert_msg(p.finished_at == times[_i].finished_at, "%s: finished_at %lld, want %lld",
                      times[_i].what, (long long)p.finished_at, (long long)times[_i].finished_at);
        ck_assert_msg(p.flags == times[_i].flags, "%s: flags %u", times[_i].what, p.flags);
        env_done(&e);
}
END_TEST

START_TEST(pod_identity)
{
        char err[256] = "";
        gc_pod p, p2;
        env e;

        env_init(&e);
        ck_assert_int_eq(
            pod_of(&e,
                   "{'metadata':{'name':'train-0','namespace':'ml','uid':'abc-1',"
                   "'creationTimestamp':'2026-11-20T09:15:03Z','deletionTimestamp':"
                   "'2026-11-20T10:15:03Z','labels':{'app.kubernetes.io/team':'vision',"
                   "'cost-center':'cc-7'},'ownerReferences':[{'kind':'Workflow','name':'w',"
                   "'controller':false},{'kind':'Job','name':'train','controller':true}]}," GPU_SPEC
                   "}",
                   &p, err, sizeof(err)),
            1);
        ck_assert_str_eq(p.uid, "abc-1");
        ck_assert_str_eq(p.ns, "ml");
        ck_assert_str_eq(p.name, "train-0");
        ck_assert_str_eq(p.node, "n1");
        ck_assert_str_eq(p.team, "vision");
        ck_assert_str_eq(p.project, "cc-7");
        ck_assert_str_eq(p.controller_kind, "Job");
        ck_assert_str_eq(p.controller, "train");
        ck_assert_int_eq(p.created_at, T0);
        ck_assert_int_eq(p.deleting_at, T0 + 3600);
        ck_assert_int_eq(p.n_gpu, 1);
        /* Interned: the same string is the same pointer. */
        ck_assert_ptr_eq(p.node, gc_strpool_intern0(e.pool, "n1"));
        ck_assert_ptr_eq(p.gpu[0].resource, gc_strpool_intern0(e.pool, "nvidia.com/gpu"));

        /* No namespace, uid or node: "default", a namespace/name key, unbound. */
        ck_assert_int_eq(pod_of(&e,
                                "{'metadata':{'name':'x'},'spec':{'containers':[{'name':'c',"
                                "'resources':{'limits':{'nvidia.com/gpu':'1'}}}]}}",
                                &p2, err, sizeof(err)),
                         1);
        ck_assert_str_eq(p2.ns, "default");
        ck_assert_str_eq(p2.uid, "default/x");
        ck_assert_ptr_null(p2.node);
        ck_assert_ptr_null(p2.team);
        ck_assert_ptr_null(p2.controller);
        ck_assert_int_eq(p2.bound_at, 0);
        ck_assert_int_eq(p2.flags, 0);
        env_done(&e);
}
END_TEST

static const struct {
        const char *labels;
        const char *team, *project;
} label_order[] = {
    {"{'team':'a','app.kubernetes.io/team':'b'}", "a", NULL},
    {"{'app.kubernetes.io/team':'b'}", "b", NULL},
    {"{'team':'','app.kubernetes.io/team':'b'}", "b", NULL}, /* empty says nothing */
    {"{'project':'p','cost-center':'c'}", NULL, "p"},
    {"{'cost-center':'c','project':'p'}", NULL, "p"}, /* key order, not document order */
    {"{'cost-center':'c'}", NULL, "c"},
    {"{'Team':'x','owner':'y'}", NULL, NULL},
    {"{}", NULL, NULL},
};

START_TEST(label_fallback_table)
{
        char buf[1024], err[256] = "";
        gc_pod p;
        env e;

        env_init(&e);
        snprintf(buf, sizeof(buf), "{'metadata':{'name':'p','labels':%s},%s}",
                 label_order[_i].labels, GPU_SPEC);
        ck_assert_int_eq(pod_of(&e, buf, &p, err, sizeof(err)), 1);
        if (label_order[_i].team)
                ck_assert_str_eq(p.team, label_order[_i].team);
        else
                ck_assert_ptr_null(p.team);
        if (label_order[_i].project)
                ck_assert_str_eq(p.project, label_order[_i].project);
        else
                ck_assert_ptr_null(p.project);
        env_done(&e);
}
END_TEST

START_TEST(namespace_decode)
{
        char *s = J("{'kind':'Namespace','metadata':{'name':'ml','labels':{'team':'vision',"
                    "'cost-center':'cc-1'}}}");
        cJSON *obj = cJSON_Parse(s);
        char err[256] = "";
        gc_namespace ns;
        env e;

        env_init(&e);
        ck_assert_int_eq(gc_namespace_from_json(obj, &e.o, &ns, err, sizeof(err)), 1);
        ck_assert_str_eq(ns.name, "ml");
        ck_assert_str_eq(ns.team, "vision");
        ck_assert_str_eq(ns.project, "cc-1");
        cJSON_Delete(obj);
        free(s);
        s = J("{'kind':'Namespace','metadata':{}}");
        obj = cJSON_Parse(s);
        ck_assert_int_eq(gc_namespace_from_json(obj, &e.o, &ns, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "metadata.name: missing");
        cJSON_Delete(obj);
        free(s);
        env_done(&e);
}
END_TEST

/* ---- list decoding -------------------------------------------------------------------------- */

#define GPU_POD(name)                                                                              \
        "{'metadata':{'name':'" name "','namespace':'ml','uid':'uid-" name "'},'spec':{"           \
        "'containers':[{'name':'c','resources':{'limits':{'nvidia.com/gpu':'1'}}}]}}"
#define CPU_POD(name)                                                                              \
        "{'metadata':{'name':'" name "','namespace':'web'},'spec':{'containers':[{'name':'c',"     \
        "'resources':{'limits':{'cpu':'1'}}}]}}"

static int decode_pods_str(env *e, const char *json, gc_pod_vec *v, gc_decode_stats *st, gc_diag *d,
                           char *err, size_t errlen)
{
        char *s = J(json);
        int r = gc_decode_pods(s, strlen(s), &e->o, v, st, d, err, errlen);

        free(s);
        return r;
}

START_TEST(list_shapes)
{
        gc_pod_vec v = {0};
        gc_decode_stats st;
        gc_diag d = {0};
        char err[256] = "";
        env e;

        env_init(&e);
        /* PodList from the API server: items first or last, no kind on the items. */
        ck_assert_int_eq(decode_pods_str(&e,
                                         "{'kind':'PodList','apiVersion':'v1','metadata':{"
                                         "'resourceVersion':'12'},'items':[" GPU_POD(
                                             "a") "," CPU_POD("b") "," GPU_POD("c") "]}",
                                         &v, &st, &d, err, sizeof(err)),
                         0);
        ck_assert_uint_eq(v.n, 2);
        ck_assert_str_eq(v.v[0].name, "a");
        ck_assert_str_eq(v.v[1].name, "c");
        ck_assert_uint_eq(st.objects, 3);
        ck_assert_uint_eq(st.kept, 2);
        ck_assert_uint_eq(st.skipped, 0);
        ck_assert_uint_eq(d.n_total, 0);

        /* kubectl's List, with kind after the items; appended to what is there. */
        ck_assert_int_eq(
            decode_pods_str(&e,
                            "{'apiVersion':'v1','items':[" GPU_POD(
                                "d") "],'kind':'List','metadata':{'resourceVersion':''}}",
                            &v, &st, &d, err, sizeof(err)),
            0);
        ck_assert_uint_eq(v.n, 3);
        ck_assert_str_eq(v.v[2].name, "d");

        /* One Pod. */
        ck_assert_int_eq(
            decode_pods_str(&e,
                            "  {'kind':'Pod','apiVersion':'v1','metadata':{'name':'e'},"
                            "'spec':{'containers':[{'name':'c','resources':{"
                            "'limits':{'nvidia.com/gpu':'2'}}}]}}\n",
                            &v, &st, &d, err, sizeof(err)),
            0);
        ck_assert_uint_eq(v.n, 4);
        ck_assert_int_eq(v.v[3].gpu[0].count, 2);
        ck_assert_uint_eq(st.objects, 1);

        /* Empty lists. */
        ck_assert_int_eq(
            decode_pods_str(&e, "{'kind':'PodList','items':[]}", &v, &st, &d, err, sizeof(err)), 0);
        ck_assert_uint_eq(st.objects, 0);
        ck_assert_int_eq(
            decode_pods_str(&e, "{'kind':'PodList','items':[ \n ]}", &v, &st, &d, err, sizeof(err)),
            0);
        ck_assert_int_eq(
            decode_pods_str(&e, "{'kind':'List','items':null}", &v, &st, &d, err, sizeof(err)), 0);
        ck_assert_uint_eq(v.n, 4);

        /* A List holding other kinds: those are not pods, and not errors. */
        ck_assert_int_eq(decode_pods_str(&e,
                                         "{'kind':'List','items':[{'kind':'Service','metadata':{"
                                         "'name':'s','annotations':{'x':'nvidia.com/gpu'}}},"
                                         "{'kind':'Pod','metadata':{'name':'f'},'spec':{"
                                         "'containers':[{'name':'c','resources':{'limits':{"
                                         "'nvidia.com/gpu':'1'}}}]}}]}",
                                         &v, &st, &d, err, sizeof(err)),
                         0);
        ck_assert_uint_eq(v.n, 5);
        ck_assert_uint_eq(st.objects, 2);
        ck_assert_uint_eq(st.skipped, 0);
        gc_pod_vec_free(&v);
        gc_diag_clear(&d);
        env_done(&e);
}
END_TEST

START_TEST(list_garbage_items)
{
        gc_pod_vec v = {0};
        gc_decode_stats st;
        gc_diag d = {0};
        char err[256] = "";
        env e;

        env_init(&e);
        ck_assert_int_eq(
            decode_pods_str(
                &e,
                "{'kind':'PodList','items':[" GPU_POD(
                    "a") ",42,'text',[1,2],"
                         "{'metadata':{'name':'bad'},'spec':{'containers':[{'resources':{"
                         "'limits':{'nvidia.com/gpu':'half'}}}]}},"
                         "{'metadata':{'name':'broken','x':'nvidia.com/gpu'} 'y':1},"
                         "{'metadata':{'name':'nogpu'},'spec':{'containers':[tru]}}," GPU_POD(
                             "b") "]}",
                &v, &st, &d, err, sizeof(err)),
            0);
        ck_assert_uint_eq(v.n, 2);
        ck_assert_uint_eq(st.objects, 8);
        ck_assert_uint_eq(st.kept, 2);
        /* The non-GPU item with invalid JSON is never parsed, so it is not noted. */
        ck_assert_uint_eq(st.skipped, 5);
        ck_assert_uint_eq(d.n_total, 5);
        ck_assert_str_eq(d.msgs[0], "items[1]: not an object");
        ck_assert_str_eq(d.msgs[1], "items[2]: not an object");
        ck_assert_str_eq(d.msgs[2], "items[3]: not an object");
        ck_assert_str_eq(d.msgs[3], "items[4] (bad): spec.containers[0].resources.limits["
                                    "nvidia.com/gpu]: not a quantity: \"half\"");
        ck_assert_str_eq(d.msgs[4], "items[5]: not valid JSON");
        gc_pod_vec_free(&v);
        gc_diag_clear(&d);
        env_done(&e);
}
END_TEST

START_TEST(list_prefilter)
{
        gc_pod_vec v = {0};
        gc_decode_stats st;
        gc_diag d = {0};
        char err[256] = "";
        const char *doc =
            "{\"kind\":\"PodList\",\"items\":["
            /* no nvidia.com and no escape: skipped unparsed, even though not valid JSON */
            "{\"metadata\":{\"name\":\"a\"},\"spec\":[tru, 1 2]},"
            /* the resource name spelled with escapes must still be found */
            "{\"metadata\":{\"name\":\"esc\"},\"spec\":{\"containers\":[{\"name\":\"c\","
            "\"resources\":{\"limits\":{\"\\u006evidia.com/gpu\":\"1\"}}}]}},"
            /* an escaped slash: the domain is still there */
            "{\"metadata\":{\"name\":\"slash\"},\"spec\":{\"containers\":[{\"name\":\"c\","
            "\"resources\":{\"limits\":{\"nvidia.com\\/gpu\":\"1\"}}}]}},"
            /* amd.com is a configured domain too */
            "{\"metadata\":{\"name\":\"amd\"},\"spec\":{\"containers\":[{\"name\":\"c\","
            "\"resources\":{\"limits\":{\"amd.com/gpu\":\"1\"}}}]}}"
            "]}";
        env e;

        env_init(&e);
        ck_assert_int_eq(gc_decode_pods(doc, strlen(doc), &e.o, &v, &st, &d, err, sizeof(err)), 0);
        ck_assert_uint_eq(st.objects, 4);
        ck_assert_uint_eq(st.skipped, 0);
        ck_assert_uint_eq(v.n, 3);
        ck_assert_str_eq(v.v[0].name, "esc");
        ck_assert_str_eq(v.v[0].gpu[0].resource, "nvidia.com/gpu");
        ck_assert_str_eq(v.v[1].name, "slash");
        ck_assert_str_eq(v.v[1].gpu[0].resource, "nvidia.com/gpu");
        ck_assert_str_eq(v.v[2].gpu[0].resource, "amd.com/gpu");
        gc_pod_vec_free(&v);
        gc_diag_clear(&d);
        env_done(&e);
}
END_TEST

START_TEST(list_tricky_strings)
{
        gc_pod_vec v = {0};
        gc_decode_stats st;
        gc_diag d = {0};
        char err[256] = "";
        const char *doc =
            "{\"metadata\":{\"note\":\"items: [ { } ]\",\"x\\\"items\":\"]\"},"
            "\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"name\":\"a\","
            "\"annotations\":{\"a\":\"]}\\\"{[\\\\\",\"b\":\"\\\\\\\"}]\","
            "\"c\":\"nvidia.com/gpu \\\\\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
            "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}},"
            "{\"metadata\":{\"name\":\"b\"},\"spec\":{\"containers\":[{\"name\":\"c\","
            "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\"}}}]}}]}";
        env e;

        env_init(&e);
        ck_assert_int_eq(gc_decode_pods(doc, strlen(doc), &e.o, &v, &st, &d, err, sizeof(err)), 0);
        ck_assert_uint_eq(st.objects, 2);
        ck_assert_uint_eq(v.n, 2);
        ck_assert_str_eq(v.v[0].name, "a");
        ck_assert_str_eq(v.v[1].name, "b");
        ck_assert_int_eq(v.v[1].gpu[0].count, 2);
        gc_pod_vec_free(&v);
        gc_diag_clear(&d);
        env_done(&e);
}
END_TEST

/* A GPU pod nested `depth` levels deeper inside an annotation-like value. */
static char *deep_doc(int item_depth, int doc_extra)
{
        gc_buf b;

        gc_buf_init(&b, 1u << 20);
        for (int i = 0; i < doc_extra; i++)
                gc_buf_puts(&b, "{\"x\":");
        if (doc_extra)
                gc_buf_puts(&b, "0");
        for (int i = 0; i < doc_extra; i++)
                gc_buf_puts(&b, "}");
        if (doc_extra) {
                char *s = gc_buf_steal(&b);

                return s;
        }
        gc_buf_puts(&b, "{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"name\":\"d\"},"
                        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{"
                        "\"nvidia.com/gpu\":\"1\"}}}]},\"deep\":");
        for (int i = 0; i < item_depth; i++)
                gc_buf_puts(&b, "[");
        for (int i = 0; i < item_depth; i++)
                gc_buf_puts(&b, "]");
        gc_buf_puts(&b, "}]}");
        return gc_buf_steal(&b);
}

START_TEST(list_depth)
{
        gc_pod_vec v = {0};
        gc_decode_stats st;
        gc_diag d = {0};
        char err[256] = "";
        char *s;
        env e;

        env_init(&e);
        /* 1 (item) + 10 nested arrays: fine. */
        s = deep_doc(10, 0);
        ck_assert_int_eq(gc_decode_pods(s, strlen(s), &e.o, &v, &st, &d, err, sizeof(err)), 0);
        ck_assert_uint_eq(v.n, 1);
        free(s);
        /* 1 + 70 levels inside one item: that item is refused, the document is not. */
        s = deep_doc(70, 0);
        ck_assert_int_eq(gc_decode_pods(s, strlen(s), &e.o, &v, &st, &d, err, sizeof(err)), 0);
        ck_assert_uint_eq(v.n, 1);
        ck_assert_uint_eq(st.skipped, 1);
        ck_assert_str_eq(d.msgs[0], "items[0]: nested deeper than 64");
        free(s);
        /* 5000 levels anywhere: the document is refused. */
        s = deep_doc(5000, 0);
        ck_assert_int_eq(gc_decode_pods(s, strlen(s), &e.o, &v, &st, &d, err, sizeof(err)),
                         -EINVAL);
        ck_assert_str_eq(err, "items[0]: nesting too deep");
        ck_assert_uint_eq(v.n, 1);
        free(s);
        s = deep_doc(0, 3000);
        ck_assert_int_eq(gc_decode_pods(s, strlen(s), &e.o, &v, &st, &d, err, sizeof(err)),
                         -EINVAL);
        free(s);
        /* One pod, not a list: the document is the item, 1024 levels with its own at most. */
        for (int extra = 1; extra <= 2; extra++) {
                gc_buf b;

                gc_buf_init(&b, 1u << 20);
                gc_buf_puts(&b, "{\"kind\":\"Pod\",\"deep\":");
                for (int i = 0; i < 1023 + extra; i++)
                        gc_buf_puts(&b, "[");
                for (int i = 0; i < 1023 + extra; i++)
                        gc_buf_puts(&b, "]");
                gc_buf_puts(&b, "}");
                ck_assert_int_eq(gc_decode_pods(b.data, b.len, &e.o, &v, &st, &d, err, sizeof(err)),
                                 -EINVAL);
                ck_assert_str_eq(err, extra == 1 ? "document: nesting too deep"
                                                 : "document: deep: nesting too deep");
                gc_buf_free(&b);
        }
        gc_pod_vec_free(&v);
        gc_diag_clear(&d);
        env_done(&e);
}
END_TEST

static const struct {
        const char *doc;
        const char *err;
} bad_docs[] = {
    {"", "not a JSON object"},
    {"   ", "not a JSON object"},
    {"[]", "not a JSON object"},
    {"null", "not a JSON object"},
    {"{", "document: object key expected"},
    {"{}", "no items array, and kind is not Pod"},
    {"{'kind':'Node','metadata':{'name':'n'}}", "no items array, and kind is not Pod"},
    {"{'kind':'NodeList','items':[]}", "kind NodeList is not a PodList or List"},
    {"{'items':{}}", "items: not an array, or given twice"},
    {"{'items':[],'items':[]}", "items: not an array, or given twice"},
    {"{'items':[] x}", "document: ',' or '}' expected"},
    {"{'items':[]} x", "document: data after the end"},
    {"{'items':[1 2]}", "items[0]: ',' or ']' expected after it"},
    {"{'items':[{'a':'b}]}", "items[0]: unterminated string"},
    {"{'items':[{'a':[}]}", "items[0]: mismatched bracket"},
    {"{'items':[{'a':1}", "items[0]: ',' or ']' expected after it"},
    {"{'items':[,]}", "items[0]: value expected"},
    {"{'items':[{},]}", "items[1]: value expected"},
    {"{'kind' 'x'}", "document: ':' expected"},
    {"{'metadata':{'a':'x}, 'items':[]}", "document: metadata: unterminated string"},
};

START_TEST(list_bad_docs)
{
        gc_pod_vec v = {0};
        gc_decode_stats st = {0};
        gc_diag d = {0};
        char err[256] = "";
        env e;

        env_init(&e);
        ck_assert_int_eq(decode_pods_str(&e, bad_docs[_i].doc, &v, &st, &d, err, sizeof(err)),
                         -EINVAL);
        ck_assert_str_eq(err, bad_docs[_i].err);
        ck_assert_uint_eq(v.n, 0);
        gc_pod_vec_free(&v);
        gc_diag_clear(&d);
        env_done(&e);
}
END_TEST

START_TEST(list_limit_rolls_back)
{
        gc_pod_vec v = {.limit = 3};
        gc_decode_stats st = {0};
        gc_diag d = {0};
        char err[256] = "";
        env e;

        env_init(&e);
        ck_assert_int_eq(decode_pods_str(&e, "{'items':[" GPU_POD("a") "," GPU_POD("b") "]}", &v,
                                         &st, &d, err, sizeof(err)),
                         0);
        ck_assert_uint_eq(v.n, 2);
        ck_assert_int_eq(
            decode_pods_str(&e, "{'items':[" GPU_POD("c") "," GPU_POD("d") "," GPU_POD("e") "]}",
                            &v, &st, &d, err, sizeof(err)),
            -E2BIG);
        ck_assert_str_eq(err, "items[1] (ml/d): more pods than the limit");
        ck_assert_uint_eq(v.n, 2); /* the failed call left nothing behind */
        gc_pod_vec_free(&v);
        gc_diag_clear(&d);
        env_done(&e);
}
END_TEST

START_TEST(list_pool_full)
{
        gc_pod_vec v = {0};
        gc_decode_stats st = {0};
        gc_diag d = {0};
        char err[256] = "";
        env e;

        env_init(&e);
        gc_strpool_free(e.pool);
        e.pool = gc_strpool_new(20);
        e.o.pool = e.pool;
        ck_assert_int_eq(decode_pods_str(&e, "{'items':[" GPU_POD("a") "," GPU_POD("b") "]}", &v,
                                         &st, &d, err, sizeof(err)),
                         -ENOMEM);
        ck_assert_uint_eq(v.n, 0);
        gc_pod_vec_free(&v);
        gc_diag_clear(&d);
        env_done(&e);
}
END_TEST

START_TEST(list_nodes_and_namespaces)
{
        gc_node_vec nv = {0};
        gc_ns_vec sv = {0};
        gc_decode_stats st;
        gc_diag d = {0};
        char err[256] = "";
        char *s;
        env e;

        env_init(&e);
        s = J("{'kind':'NodeList','items':[{'metadata':{'name':'cpu-1','labels':{'a':'b'}},"
              "'status':{'allocatable':{'cpu':'8'}}},{'metadata':{'name':'gpu-1','labels':{"
              "'nvidia.com/gpu.product':'Tesla-T4'},'annotations':{'gpu-cost.io/capacity-type':"
              "'spot','gpu-cost.io/gpu-model':'NVIDIA T4','gpu-cost.io/usd-per-gpu-hour':"
              "'0.35'}},'status':{'capacity':{'nvidia.com/gpu':'4'}}},{'metadata':{'name':"
              "'gpu-2'},'status':{'allocatable':{'nvidia.com/gpu':'0'},'capacity':{"
              "'nvidia.com/gpu':'4'}}}]}");
        ck_assert_int_eq(gc_decode_nodes(s, strlen(s), &e.o, &nv, &st, &d, err, sizeof(err)), 0);
        free(s);
        /* The CPU node never is; gpu-2 has nothing allocatable (allocatable wins over capacity). */
        ck_assert_uint_eq(st.objects, 3);
        ck_assert_uint_eq(nv.n, 1);
        ck_assert_str_eq(nv.v[0].name, "gpu-1");
        ck_assert_str_eq(nv.v[0].uid, "gpu-1");
        ck_assert_str_eq(nv.v[0].ann_capacity_type, "spot");
        ck_assert_str_eq(nv.v[0].ann_gpu_model, "NVIDIA T4");
        ck_assert_str_eq(nv.v[0].ann_price, "0.35");
        ck_assert_str_eq(nv.v[0].gpu_model, "Tesla-T4");
        ck_assert_double_eq_tol(nv.v[0].alloc_geq, 4.0, EPS);
        ck_assert_int_eq(nv.v[0].replicas, 1);

        /* The price annotation's current name wins over its old name (read for one release). */
        gc_node_vec_free(&nv);
        s = J("{'kind':'NodeList','items':[{'metadata':{'name':'gpu-3','annotations':{"
              "'gpu-cost.io/usd-per-gpu-hour':'9','gpu-cost.io/price-per-gpu-hour':'0.5'}},"
              "'status':{'allocatable':{'nvidia.com/gpu':'1'}}},{'metadata':{'name':'gpu-4',"
              "'annotations':{'gpu-cost.io/price-per-gpu-hour':'0.25'}},"
              "'status':{'allocatable':{'nvidia.com/gpu':'1'}}}]}");
        ck_assert_int_eq(gc_decode_nodes(s, strlen(s), &e.o, &nv, &st, &d, err, sizeof(err)), 0);
        free(s);
        ck_assert_uint_eq(nv.n, 2);
        ck_assert_str_eq(nv.v[0].ann_price, "0.5");
        ck_assert_str_eq(nv.v[1].ann_price, "0.25");

        s = J("{'kind':'PodList','items':[]}");
        ck_assert_int_eq(gc_decode_nodes(s, strlen(s), &e.o, &nv, &st, &d, err, sizeof(err)),
                         -EINVAL);
        ck_assert_str_eq(err, "kind PodList is not a NodeList or List");
        free(s);

        s = J("{'kind':'NamespaceList','items':[{'metadata':{'name':'a','labels':{'team':'t'}}},"
              "{'metadata':{'name':'b'}},{'metadata':{}}]}");
        ck_assert_int_eq(gc_decode_namespaces(s, strlen(s), &e.o, &sv, &st, &d, err, sizeof(err)),
                         0);
        free(s);
        ck_assert_uint_eq(sv.n, 2);
        ck_assert_str_eq(sv.v[0].team, "t");
        ck_assert_ptr_null(sv.v[1].team);
        ck_assert_uint_eq(st.skipped, 1);
        ck_assert_str_eq(d.msgs[0], "items[2]: metadata.name: missing");
        gc_node_vec_free(&nv);
        gc_ns_vec_free(&sv);
        gc_diag_clear(&d);
        env_done(&e);
}
END_TEST

/* ---- real fixtures --------------------------------------------------------------------------- */

START_TEST(fixture_rke2_a16_vgpu)
{
        gc_node_vec nv = {0};
        gc_decode_stats st;
        gc_diag d = {0};
        char err[256] = "";
        gc_buf b;
        env e;

        env_init(&e);
        ck_assert_int_eq(gc_read_file(GC_SOURCE_DIR
                                      "/tests/fixtures/nodelist-rke2-a16-vgpu-gpu-operator.json",
                                      1u << 20, &b),
                         0);
        ck_assert_int_eq(gc_decode_nodes(b.data, b.len, &e.o, &nv, &st, &d, err, sizeof(err)), 0);
        ck_assert_uint_eq(st.objects, 1);
        ck_assert_uint_eq(nv.n, 1);
        ck_assert_str_eq(nv.v[0].name, "nori");
        ck_assert_str_eq(nv.v[0].uid, "a585cb64-68e9-4ee3-804e-754d7c13bbb1");
        ck_assert_int_eq(nv.v[0].created_at, INT64_C(1742416847)); /* 2025-03-19T20:40:47Z */
        ck_assert_uint_eq(nv.v[0].n_labels, 85);
        ck_assert_str_eq(gc_node_label(&nv.v[0], "node.kubernetes.io/instance-type"), "rke2");
        ck_assert_str_eq(nv.v[0].product, "NVIDIA-A16-4Q");
        ck_assert_str_eq(nv.v[0].gpu_model, "NVIDIA-A16-4Q");
        ck_assert_str_eq(nv.v[0].mig_strategy, "single");
        ck_assert_ptr_null(nv.v[0].mig_single_profile);
        ck_assert_int_eq(nv.v[0].replicas, 1);
        ck_assert_int_eq(nv.v[0].gpu_count, 1);
        ck_assert_int_eq(nv.v[0].gpu_memory_mib, 4096);
        ck_assert_uint_eq(nv.v[0].n_alloc, 1);
        ck_assert_str_eq(nv.v[0].alloc[0].resource, "nvidia.com/gpu");
        ck_assert_int_eq(nv.v[0].alloc[0].count, 1);
        ck_assert_double_eq_tol(nv.v[0].alloc_geq, 1.0, EPS);
        ck_assert_int_eq(nv.v[0].geq_estimate, 0);
        ck_assert_ptr_null(nv.v[0].ann_price);
        gc_buf_free(&b);
        gc_node_vec_free(&nv);
        gc_diag_clear(&d);
        env_done(&e);
}
END_TEST

/* The real H100 MIG-single label set, inside a node object built around it. */
static int h100_node(env *e, const char *product, const char *alloc, gc_node *ret)
{
        char err[256] = "";
        gc_buf b, doc;
        cJSON *obj, *labels;
        int r;

        ck_assert_int_eq(
            gc_read_file(GC_SOURCE_DIR
                         "/tests/fixtures/gfd-node-labels-h100-mig-single-all-disabled.json",
                         1u << 20, &b),
            0);
        gc_buf_init(&doc, 1u << 20);
        gc_buf_printf(&doc,
                      "{\"kind\":\"Node\",\"metadata\":{\"name\":\"s4124-0073\",\"uid\":\"u\","
                      "\"labels\":%s},\"status\":{\"allocatable\":%s}}",
                      b.data, alloc);
        obj = cJSON_Parse(doc.data);
        ck_assert_ptr_nonnull(obj);
        if (product) {
                labels = cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "labels");
                cJSON_ReplaceItemInObjectCaseSensitive(labels, "nvidia.com/gpu.product",
                                                       cJSON_CreateString(product));
        }
        r = gc_node_from_json(obj, &e->o, ret, err, sizeof(err));
        ck_assert_msg(r == 1, "rc %d: %s", r, err);
        cJSON_Delete(obj);
        gc_buf_free(&doc);
        gc_buf_free(&b);
        return r;
}

START_TEST(fixture_h100_mig_single)
{
        gc_node n;
        env e;

        env_init(&e);
        /* As published: MIG strategy single, every GPU whole (all-disabled). */
        h100_node(&e, NULL, "{\"nvidia.com/gpu\":\"1\"}", &n);
        ck_assert_uint_eq(n.n_labels, 158);
        ck_assert_str_eq(n.product, "NVIDIA-H100-80GB-HBM3");
        ck_assert_str_eq(n.gpu_model, "NVIDIA-H100-80GB-HBM3");
        ck_assert_str_eq(n.mig_strategy, "single");
        ck_assert_ptr_null(n.mig_single_profile);
        ck_assert_int_eq(n.gpu_count, 1);
        ck_assert_int_eq(n.gpu_memory_mib, 81559);
        ck_assert_int_eq(n.replicas, 1);
        ck_assert_double_eq_tol(n.alloc_geq, 1.0, EPS);
        ck_assert_int_eq(n.geq_estimate, 0);
        gc_node_release(&n);

        /* The same node after mig.config=all-1g.20gb: 4 devices of 2/8 each. */
        h100_node(&e, "NVIDIA-H100-80GB-HBM3-MIG-1g.20gb", "{\"nvidia.com/gpu\":\"4\"}", &n);
        ck_assert_str_eq(n.gpu_model, "NVIDIA-H100-80GB-HBM3");
        ck_assert_str_eq(n.mig_single_profile, "1g.20gb");
        ck_assert_double_eq_tol(n.alloc_geq, 1.0, EPS);
        gc_node_release(&n);

        /* all-1g.10gb: 7 devices of 1/7. */
        h100_node(&e, "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", "{\"nvidia.com/gpu\":\"7\"}", &n);
        ck_assert_double_eq_tol(n.alloc_geq, 1.0, EPS);
        gc_node_release(&n);
        env_done(&e);
}
END_TEST

/* ---- other vendors' accelerators (docs/model.md, "Other accelerators") ------------------------
 */

/* The built-in table alone: env_init configures amd.com/gpu, which a default does not. */
static void env_builtin(env *e)
{
        env_init(e);
        gc_res_table_free(e->res);
        e->res = gc_res_table_new_default();
        ck_assert_ptr_nonnull(e->res);
        e->o.res = e->res;
}

/*
 * Label sets as the vendors' labellers write them. AMD: ROCm k8s-device-plugin
 * docs/user-guide/installation.md ("Example labels for an AMD MI300X GPU": cu-count 304,
 * device-id 74a1, family AI, product-name AMD_Instinct_MI300X_OAM, simd-count 1216, vram 192G),
 * its labeller's beta twins (cmd/k8s-node-labeller/main.go, createLabels), the partition label
 * its code writes (amd.com/gpu.compute-memory-partition) and the one its docs name
 * (amd.com/compute-memory-partition); resources per docs/user-guide/configuration.md ("single":
 * 64 amd.com/gpu for 8 CPX GPUs; "mixed": amd.com/spx_nps1 5 and amd.com/cpx_nps1 24). Neuron:
 * the device plugin's aws.amazon.com/neuron and neuroncore (AWS Neuron docs,
 * k8s-neuron-device-plugin). TPU: GKE's cloud.google.com/gke-tpu-accelerator.
 */
#define MI300X_LABELS                                                                              \
        "'amd.com/gpu.cu-count':'304','amd.com/gpu.device-id':'74a1','amd.com/gpu.family':'AI',"   \
        "'amd.com/gpu.product-name':'AMD_Instinct_MI300X_OAM','amd.com/gpu.simd-count':'1216',"    \
        "'amd.com/gpu.vram':'192G','beta.amd.com/gpu.product-name':'AMD_Instinct_MI300X_OAM',"     \
        "'beta.amd.com/gpu.product-name.AMD_Instinct_MI300X_OAM':'8'"

static const struct {
        const char *what;
        const char *labels;      /* JSON object, single quotes */
        const char *allocatable; /* JSON object */
        double geq;              /* hand-computed */
        int estimate;
        const char *model; /* gpu_model, or NULL */
        int units;         /* units_per_device */
        int64_t gpu_count; /* physical devices */
} vendor_nodes[] = {
    {"AMD MI300X, 8 whole GPUs", "{" MI300X_LABELS "}", "{'amd.com/gpu':'8','cpu':'192'}", 8.0, 0,
     "AMD-Instinct-MI300X", 1, 8},
    {"AMD MI300X CPX by the labeller's partition label: 64 x 1/8",
     "{" MI300X_LABELS ",'amd.com/gpu.compute-memory-partition':'cpx_nps4'}",
     "{'amd.com/gpu':'64'}", 8.0, 0, "AMD-Instinct-MI300X", 8, 8},
    {"AMD MI300X DPX by the documented label name: 16 x 1/2",
     "{" MI300X_LABELS ",'amd.com/compute-memory-partition':'dpx_nps2'}", "{'amd.com/gpu':'16'}",
     8.0, 0, "AMD-Instinct-MI300X", 2, 8},
    {"AMD MI300X CPX without a partition label: 38 of 304 CUs a device",
     "{'amd.com/gpu.product-name':'AMD_Instinct_MI300X_OAM','amd.com/gpu.cu-count':'38'}",
     "{'amd.com/gpu':'64'}", 8.0, 0, "AMD-Instinct-MI300X", 8, 8},
    {"AMD MI300X QPX, beta labels only: 76 CUs",
     "{'beta.amd.com/gpu.device-id':'74a1','beta.amd.com/gpu.cu-count':'76'}",
     "{'amd.com/gpu':'32'}", 8.0, 0, "AMD-Instinct-MI300X", 4, 8},
    {"AMD mixed strategy, heterogeneous: 5 SPX + 24 CPX partitions = 8 GPUs",
     "{'amd.com/gpu.product-name':'AMD_Instinct_MI300X_OAM','amd.com/gpu.cu-count.304':'5',"
     "'amd.com/gpu.cu-count.38':'24'}",
     "{'amd.com/spx_nps1':'5','amd.com/cpx_nps1':'24'}", 8.0, 0, "AMD-Instinct-MI300X", 1, 8},
    {"AMD MI300A TPX (6 XCDs): 12 x 1/3",
     "{'amd.com/gpu.product-name':'AMD_Instinct_MI300A','amd.com/gpu.compute-memory-partition':"
     "'tpx_nps1'}",
     "{'amd.com/gpu':'12'}", 4.0, 0, "AMD-Instinct-MI300A", 3, 4},
    {"AMD MI325X by device id, CPX: 8 XCDs", "{'amd.com/gpu.device-id':'74a5'}",
     "{'amd.com/cpx_nps4':'16'}", 2.0, 0, "AMD-Instinct-MI325X", 1, 2},
    {"AMD MI308X CPX: XCDs not in the table, taken as 8, estimate",
     "{'amd.com/gpu.device-id':'74a2'}", "{'amd.com/cpx_nps1':'32'}", 4.0, 1, "AMD-Instinct-MI308X",
     1, 0},
    {"AMD MI210, not partitionable", "{'amd.com/gpu.product-name':'Instinct_MI210'}",
     "{'amd.com/gpu':'4'}", 4.0, 0, "AMD-Instinct-MI210", 1, 4},
    {"AMD without labels: whole GPUs", "{}", "{'amd.com/gpu':'2'}", 2.0, 0, NULL, 1, 2},
    {"AMD NIC is not a GPU", "{}", "{'amd.com/gpu':'1','amd.com/nic':'8'}", 1.0, 0, NULL, 1, 1},
    {"Gaudi on dl1.24xlarge: 8 devices", "{'node.kubernetes.io/instance-type':'dl1.24xlarge'}",
     "{'habana.ai/gaudi':'8'}", 8.0, 0, NULL, 1, 8},
    {"Trainium trn1.32xlarge: devices and cores are one set of 16 devices",
     "{'node.kubernetes.io/instance-type':'trn1.32xlarge'}",
     "{'aws.amazon.com/neuron':'16','aws.amazon.com/neuroncore':'32'}", 16.0, 0, NULL, 2, 16},
    {"Neuron with the old neurondevice name too",
     "{'node.kubernetes.io/instance-type':'trn1.32xlarge'}",
     "{'aws.amazon.com/neurondevice':'16','aws.amazon.com/neuron':'16',"
     "'aws.amazon.com/neuroncore':'32'}",
     16.0, 0, NULL, 2, 16},
    {"Inferentia inf1.24xlarge, cores only: 4 a device by family",
     "{'node.kubernetes.io/instance-type':'inf1.24xlarge'}", "{'aws.amazon.com/neuroncore':'64'}",
     16.0, 0, NULL, 4, 16},
    {"Trainium2, cores only: 4 logical a device (LNC=2), estimate",
     "{'node.kubernetes.io/instance-type':'trn2.48xlarge'}", "{'aws.amazon.com/neuroncore':'64'}",
     16.0, 1, NULL, 4, 0},
    {"Trainium2 with LNC=1: 8 cores a device, read from the node",
     "{'node.kubernetes.io/instance-type':'trn2.48xlarge'}",
     "{'aws.amazon.com/neuron':'16','aws.amazon.com/neuroncore':'128'}", 16.0, 0, NULL, 8, 16},
    {"GKE TPU v5e slice host: 4 chips",
     "{'cloud.google.com/gke-tpu-accelerator':'tpu-v5-lite-podslice',"
     "'cloud.google.com/gke-tpu-topology':'2x4','node.kubernetes.io/instance-type':"
     "'ct5lp-hightpu-4t'}",
     "{'google.com/tpu':'4'}", 4.0, 0, "Google-TPU-v5e", 1, 4},
    {"GKE TPU of a later generation: kept as written",
     "{'cloud.google.com/gke-tpu-accelerator':'tpu-v9-slice'}", "{'google.com/tpu':'4'}", 4.0, 0,
     "tpu-v9-slice", 1, 4},
};

START_TEST(vendor_node_table)
{
        char buf[2048], err[256] = "";
        gc_node n;
        env e;
        int r;

        env_builtin(&e);
        snprintf(buf, sizeof(buf),
                 "{'kind':'Node','metadata':{'name':'n1','uid':'u-1','labels':%s},"
                 "'status':{'allocatable':%s}}",
                 vendor_nodes[_i].labels, vendor_nodes[_i].allocatable);
        r = node_of(&e, buf, &n, err, sizeof(err));
        ck_assert_msg(r == 1, "%s: rc %d (%s)", vendor_nodes[_i].what, r, err);
        ck_assert_msg(fabs(n.alloc_geq - vendor_nodes[_i].geq) < EPS, "%s: geq %f, want %f",
                      vendor_nodes[_i].what, n.alloc_geq, vendor_nodes[_i].geq);
        ck_assert_msg(n.geq_estimate == vendor_nodes[_i].estimate, "%s: estimate %d",
                      vendor_nodes[_i].what, n.geq_estimate);
        if (vendor_nodes[_i].model)
                ck_assert_msg(n.gpu_model && strcmp(n.gpu_model, vendor_nodes[_i].model) == 0,
                              "%s: model %s", vendor_nodes[_i].what,
                              n.gpu_model ? n.gpu_model : "(null)");
        else
                ck_assert_ptr_null(n.gpu_model);
        ck_assert_msg(n.units_per_device == vendor_nodes[_i].units, "%s: units %d",
                      vendor_nodes[_i].what, n.units_per_device);
        ck_assert_msg(n.gpu_count == vendor_nodes[_i].gpu_count, "%s: gpu_count %lld",
                      vendor_nodes[_i].what, (long long)n.gpu_count);
        gc_node_release(&n);
        env_done(&e);
}
END_TEST

/* A pod's share of a partitioned device: what its units are worth on its node. */
static const struct {
        const char *labels, *allocatable, *resource;
        int64_t count;
        double geq;
        int estimate;
} vendor_pods[] = {
    {"{" MI300X_LABELS ",'amd.com/gpu.compute-memory-partition':'cpx_nps4'}",
     "{'amd.com/gpu':'64'}", "amd.com/gpu", 3, 3.0 / 8, 0},
    {"{" MI300X_LABELS "}", "{'amd.com/gpu':'8'}", "amd.com/gpu", 3, 3.0, 0},
    {"{" MI300X_LABELS "}", "{'amd.com/dpx_nps2':'16'}", "amd.com/dpx_nps2", 1, 0.5, 0},
    {"{" MI300X_LABELS "}", "{'amd.com/qpx_nps1':'32'}", "amd.com/qpx_nps1", 2, 0.5, 0},
    {"{'node.kubernetes.io/instance-type':'trn1.2xlarge'}",
     "{'aws.amazon.com/neuron':'1','aws.amazon.com/neuroncore':'2'}", "aws.amazon.com/neuroncore",
     1, 0.5, 0},
    {"{'node.kubernetes.io/instance-type':'trn1.2xlarge'}",
     "{'aws.amazon.com/neuron':'1','aws.amazon.com/neuroncore':'2'}", "aws.amazon.com/neuron", 1,
     1.0, 0},
    {"{'node.kubernetes.io/instance-type':'inf1.6xlarge'}", "{'aws.amazon.com/neuroncore':'16'}",
     "aws.amazon.com/neuroncore", 2, 0.5, 0},
    {"{'cloud.google.com/gke-tpu-accelerator':'tpu-v6e-slice'}", "{'google.com/tpu':'8'}",
     "google.com/tpu", 8, 8.0, 0},
    {"{'node.kubernetes.io/instance-type':'dl1.24xlarge'}", "{'habana.ai/gaudi':'8'}",
     "habana.ai/gaudi", 2, 2.0, 0},
};

START_TEST(vendor_pod_table)
{
        char buf[2048], err[256] = "";
        double g = -1;
        int est = -1;
        gc_node n;
        env e;

        env_builtin(&e);
        snprintf(buf, sizeof(buf),
                 "{'kind':'Node','metadata':{'name':'n1','labels':%s},'status':{'allocatable':%s}}",
                 vendor_pods[_i].labels, vendor_pods[_i].allocatable);
        ck_assert_int_eq(node_of(&e, buf, &n, err, sizeof(err)), 1);
        ck_assert_int_eq(gc_gpu_equivalents(e.res, vendor_pods[_i].resource, vendor_pods[_i].count,
                                            &n, &g, &est),
                         0);
        ck_assert_msg(fabs(g - vendor_pods[_i].geq) < EPS, "%s x%lld: %f, want %f",
                      vendor_pods[_i].resource, (long long)vendor_pods[_i].count, g,
                      vendor_pods[_i].geq);
        ck_assert_int_eq(est, vendor_pods[_i].estimate);
        gc_node_release(&n);
        env_done(&e);
}
END_TEST

START_TEST(vendor_units_direct)
{
        int64_t p = -1;
        int est = -1;
        double g;
        env e;

        /* The partition modes (amdgpu's aqua_vanjaram.c; amdsmi.h for the MI300X). */
        ck_assert_int_eq(gc_amd_partitions("AMD-Instinct-MI300X", "SPX", 0, &p, &est), 0);
        ck_assert_int_eq(p, 1);
        ck_assert_int_eq(gc_amd_partitions("AMD Instinct MI300X", "dpx_nps2", 0, &p, &est), 0);
        ck_assert_int_eq(p, 2);
        ck_assert_int_eq(gc_amd_partitions("AMD_Instinct_MI300A", "TPX", 0, &p, &est), 0);
        ck_assert_int_eq(p, 3);
        ck_assert_int_eq(gc_amd_partitions("AMD-Instinct-MI300X", "qpx", 0, &p, &est), 0);
        ck_assert_int_eq(p, 4);
        ck_assert_int_eq(gc_amd_partitions("AMD-Instinct-MI300A", "cpx", 0, &p, &est), 0);
        ck_assert_int_eq(p, 6);
        ck_assert_int_eq(est, 0);
        ck_assert_int_eq(gc_amd_partitions("AMD-Instinct-MI355X", "CPX", 0, &p, &est), 0);
        ck_assert_int_eq(p, 8);
        ck_assert_int_eq(gc_amd_partitions(NULL, "cpx", 0, &p, &est), 0);
        ck_assert_int_eq(p, 8);
        ck_assert_int_eq(est, 1);
        ck_assert_int_eq(gc_amd_partitions("AMD-Instinct-MI300X", "xpx", 0, &p, &est), -EINVAL);
        ck_assert_int_eq(gc_amd_partitions("AMD-Instinct-MI300X", "cpxx", 0, &p, &est), -EINVAL);
        ck_assert_int_eq(gc_amd_partitions("AMD-Instinct-MI300X", "c", 0, &p, &est), -EINVAL);
        /* From compute units: only a whole partition count a model allows. */
        ck_assert_int_eq(gc_amd_partitions("AMD-Instinct-MI300X", NULL, 152, &p, &est), 0);
        ck_assert_int_eq(p, 2);
        ck_assert_int_eq(gc_amd_partitions("AMD-Instinct-MI300X", NULL, 304, &p, &est), 0);
        ck_assert_int_eq(p, 1);
        ck_assert_int_eq(gc_amd_partitions("AMD-Instinct-MI300X", NULL, 100, &p, &est), 0);
        ck_assert_int_eq(p, 1);
        ck_assert_int_eq(gc_amd_partitions("AMD-Instinct-MI210", NULL, 52, &p, &est), 0);
        ck_assert_int_eq(p, 1);

        /* No node: an AMD unit is a whole GPU, a NeuronCore half a device (flagged). */
        env_builtin(&e);
        ck_assert_int_eq(gc_gpu_equivalents(e.res, "amd.com/gpu", 2, NULL, &g, &est), 0);
        ck_assert_double_eq_tol(g, 2.0, EPS);
        ck_assert_int_eq(est, 0);
        ck_assert_int_eq(gc_gpu_equivalents(e.res, "amd.com/cpx_nps4", 8, NULL, &g, &est), 0);
        ck_assert_double_eq_tol(g, 1.0, EPS);
        ck_assert_int_eq(est, 1);
        ck_assert_int_eq(gc_gpu_equivalents(e.res, "aws.amazon.com/neuroncore", 2, NULL, &g, &est),
                         0);
        ck_assert_double_eq_tol(g, 1.0, EPS);
        ck_assert_int_eq(est, 1);
        ck_assert_int_eq(gc_gpu_equivalents(e.res, "google.com/tpu", 4, NULL, &g, &est), 0);
        ck_assert_double_eq_tol(g, 4.0, EPS);
        env_done(&e);
}
END_TEST

START_TEST(vendor_config_overrides)
{
        char err[256] = "";
        gc_node n;
        env e;

        /* A configured rule replaces the built-in one: here HAMi-style, half a GPU a unit. */
        env_builtin(&e);
        ck_assert_int_eq(gc_res_table_set(e.res, "amd.com/gpu", GC_RES_FIXED, 0.5), 0);
        ck_assert_int_eq(node_of(&e,
                                 "{'metadata':{'name':'n','labels':{" MI300X_LABELS
                                 ",'amd.com/gpu.compute-memory-partition':'cpx_nps4'}},"
                                 "'status':{'allocatable':{'amd.com/gpu':'64'}}}",
                                 &n, err, sizeof(err)),
                         1);
        ck_assert_double_eq_tol(n.alloc_geq, 32.0, EPS);
        gc_node_release(&n);
        /* ...and configuring neuroncore as a plain resource sums it like any other. */
        ck_assert_int_eq(gc_res_table_set(e.res, "aws.amazon.com/neuroncore", GC_RES_FIXED, 0), 0);
        ck_assert_int_eq(
            node_of(&e,
                    "{'metadata':{'name':'n'},'status':{'allocatable':"
                    "{'aws.amazon.com/neuron':'16','aws.amazon.com/neuroncore':'32'}}}",
                    &n, err, sizeof(err)),
            1);
        ck_assert_double_eq_tol(n.alloc_geq, 16.0, EPS);
        gc_node_release(&n);
        env_done(&e);
}
END_TEST

START_TEST(vendor_model_names)
{
        static const struct {
                const char *labels[5];
                const char *want, *source;
                int rc;
        } cases[] = {
            {{"amd.com/gpu.product-name", "AMD_Instinct_MI300X_OAM"},
             "AMD-Instinct-MI300X",
             "label amd.com/gpu.product-name",
             0},
            /* the GPU Operator's own test data writes it without "AMD" */
            {{"beta.amd.com/gpu.product-name", "Instinct_MI210"},
             "AMD-Instinct-MI210",
             "label beta.amd.com/gpu.product-name",
             0},
            /* not an Instinct: as written, dashes for underscores (GPU Operator release notes) */
            {{"amd.com/gpu.product-name", "AMD_Radeon_Graphics"},
             "AMD-Radeon-Graphics",
             "label amd.com/gpu.product-name",
             0},
            {{"amd.com/gpu.device-id", "74B5"},
             "AMD-Instinct-MI300X",
             "label amd.com/gpu.device-id",
             0},
            {{"beta.amd.com/gpu.device-id", "0x75a3"},
             "AMD-Instinct-MI355X",
             "label beta.amd.com/gpu.device-id",
             0},
            {{"amd.com/gpu.device-id", "ffff"}, NULL, NULL, -ENOENT},
            {{"cloud.google.com/gke-tpu-accelerator", "tpu-v5p-slice"},
             "Google-TPU-v5p",
             "label cloud.google.com/gke-tpu-accelerator",
             0},
            {{"cloud.google.com/gke-tpu-accelerator", "tpu7x"},
             "Google-TPU-7x",
             "label cloud.google.com/gke-tpu-accelerator",
             0},
            {{"nvidia.com/gpu.product", "Tesla-T4"}, NULL, NULL, -ENOENT},
        };
        char out[64];
        gc_label l[2];
        gc_node n;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *src = NULL;
                int rc;

                memset(&n, 0, sizeof(n));
                l[0].key = cases[i].labels[0];
                l[0].value = cases[i].labels[1];
                n.labels = l;
                n.n_labels = 1;
                rc = gc_accel_model(&n, out, sizeof(out), &src);
                ck_assert_msg(rc == cases[i].rc, "%s: rc %d", cases[i].labels[1], rc);
                if (rc < 0)
                        continue;
                ck_assert_str_eq(out, cases[i].want);
                ck_assert_str_eq(src, cases[i].source);
        }
        l[0].key = "amd.com/gpu.product-name";
        l[0].value = "AMD_Instinct_MI300X_OAM";
        n.labels = l;
        n.n_labels = 1;
        ck_assert_int_eq(gc_accel_model(&n, out, 8, &l[1].key), -ENAMETOOLONG);
}
END_TEST

static Suite *model_suite(void)
{
        Suite *s = suite_create("model");
        TCase *tc;

        tc = tcase_create("units");
        tcase_add_test(tc, res_table_rules);
        tcase_add_loop_test(tc, quantity_table, 0, sizeof(quantities) / sizeof(quantities[0]));
        tcase_add_loop_test(tc, mig_share_table, 0, sizeof(migs) / sizeof(migs[0]));
        tcase_add_loop_test(tc, node_geq_table, 0, sizeof(node_kinds) / sizeof(node_kinds[0]));
        tcase_add_test(tc, geq_direct);
        suite_add_tcase(s, tc);

        tc = tcase_create("pods");
        tcase_add_loop_test(tc, effective_table, 0, sizeof(effective) / sizeof(effective[0]));
        tcase_add_test(tc, errors_name_the_field);
        tcase_add_loop_test(tc, times_table, 0, sizeof(times) / sizeof(times[0]));
        tcase_add_test(tc, pod_identity);
        tcase_add_loop_test(tc, label_fallback_table, 0,
                            sizeof(label_order) / sizeof(label_order[0]));
        tcase_add_test(tc, namespace_decode);
        suite_add_tcase(s, tc);

        tc = tcase_create("lists");
        tcase_add_test(tc, list_shapes);
        tcase_add_test(tc, list_garbage_items);
        tcase_add_test(tc, list_prefilter);
        tcase_add_test(tc, list_tricky_strings);
        tcase_add_test(tc, list_depth);
        tcase_add_loop_test(tc, list_bad_docs, 0, sizeof(bad_docs) / sizeof(bad_docs[0]));
        tcase_add_test(tc, list_limit_rolls_back);
        tcase_add_test(tc, list_pool_full);
        tcase_add_test(tc, list_nodes_and_namespaces);
        suite_add_tcase(s, tc);

        tc = tcase_create("vendors");
        tcase_add_loop_test(tc, vendor_node_table, 0,
                            sizeof(vendor_nodes) / sizeof(vendor_nodes[0]));
        tcase_add_loop_test(tc, vendor_pod_table, 0, sizeof(vendor_pods) / sizeof(vendor_pods[0]));
        tcase_add_test(tc, vendor_units_direct);
        tcase_add_test(tc, vendor_config_overrides);
        tcase_add_test(tc, vendor_model_names);
        suite_add_tcase(s, tc);

        tc = tcase_create("fixtures");
        tcase_add_test(tc, fixture_rke2_a16_vgpu);
        tcase_add_test(tc, fixture_h100_mig_single);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(model_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed != 0;
}
