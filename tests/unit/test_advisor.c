/* test_advisor: every rule with its thresholds and boundaries, the notes, order, JSON and Markdown.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "advisor/advisor.h"

#define DAY ((int64_t)86400)
#define W0  ((int64_t)1793577600) /* 2026-11-02T00:00:00Z, a Monday */
#define W1  (W0 + 7 * DAY)

#define A100 "NVIDIA-A100-SXM4-40GB"
#define H100 "NVIDIA-H100-80GB-HBM3"

static const char catalog_json[] =
    "{\"currency\":\"USD\",\"prices\":["
    "{\"model\":\"NVIDIA-H100-80GB-HBM3\",\"capacity_type\":\"on-demand\",\"usd_per_gpu_hour\":12."
    "29},"
    "{\"model\":\"NVIDIA-H100-80GB-HBM3\",\"capacity_type\":\"reserved\",\"usd_per_gpu_hour\":5.25}"
    ","
    "{\"model\":\"NVIDIA-H100-80GB-HBM3\",\"capacity_type\":\"spot\",\"usd_per_gpu_hour\":5.00},"
    "{\"model\":\"NVIDIA-A100-SXM4-40GB\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":4.10},"
    "{\"model\":\"NVIDIA-A10G\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":2.04},"
    "{\"model\":\"*\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":2.00}]}";

/* The same without the A10G: the cheaper class has no price of its own (only the catch-all). */
static const char catalog_no_a10g_json[] =
    "{\"currency\":\"USD\",\"prices\":["
    "{\"model\":\"NVIDIA-H100-80GB-HBM3\",\"capacity_type\":\"on-demand\",\"usd_per_gpu_hour\":12."
    "29},"
    "{\"model\":\"*\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":2.00}]}";

static gc_strpool *pool;
static gc_ledger *led;
static gc_catalog *cat;
static gc_advisor_result *res;

static void setup(void)
{
        gc_ledger_opts o = {0};
        char err[256];

        pool = gc_strpool_new(16u << 20);
        ck_assert_ptr_nonnull(pool);
        o.pool = pool;
        led = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(led);
        cat = gc_catalog_parse(catalog_json, strlen(catalog_json), err, sizeof(err));
        ck_assert_msg(cat != NULL, "%s", err);
        res = NULL;
}

static void teardown(void)
{
        res = gc_advisor_result_unref(res);
        cat = gc_catalog_free(cat);
        led = gc_ledger_free(led);
        pool = gc_strpool_free(pool);
}

/* A measured, busy, one-GPU inference pod on an A100 40GB over the whole week: no finding. */
static gc_advisor_pod base_pod(void)
{
        gc_advisor_pod p;

        memset(&p, 0, sizeof(p));
        p.uid = "uid-p";
        p.ns = "ml";
        p.name = "p";
        p.team = "vision";
        p.project = "p1";
        p.node = "n1";
        p.model = A100;
        p.capacity_type = "on-demand";
        p.controller_kind = "ReplicaSet";
        p.controller = "srv-7d9f8c6b5";
        p.resource = "nvidia.com/gpu";
        p.gpus_requested = 1;
        p.geq = 1;
        p.price_per_gpu_hour = 4.10;
        p.start = W0;
        p.end = GC_OPEN;
        p.has_usage = 1;
        p.samples = 2016;
        p.coverage = 1;
        p.usage_start = W0;
        p.usage_end = W1;
        p.activity_mean = 0.5;
        p.activity_p95 = 0.8;
        p.tensor_mean = 0.3;
        p.mem_used_peak_mib = 30000;
        p.mem_total_mib = 40960;
        p.devices_seen = 1;
        p.devices_active = 1;
        p.activity_source = "DCGM_FI_PROF_GR_ENGINE_ACTIVE";
        return p;
}

static int run_full(const gc_advisor_pod *pods, size_t n, const gc_advisor_opts *o,
                    const gc_tco_inputs *tco, int64_t start, int64_t end)
{
        gc_advisor_input in;
        char err[256] = "";
        int r;

        memset(&in, 0, sizeof(in));
        in.opts = o;
        in.start = start;
        in.end = end;
        in.now = end;
        in.ledger = led;
        in.catalog = cat;
        in.tco = tco;
        in.pods = pods;
        in.n_pods = n;
        res = gc_advisor_result_unref(res);
        r = gc_advisor_run(&in, &res, err, sizeof(err));
        ck_assert_msg(r == 0, "gc_advisor_run: %d %s", r, err);
        return r;
}

static void run(const gc_advisor_pod *pods, size_t n, const gc_advisor_opts *o)
{
        run_full(pods, n, o, NULL, W0, W1);
}

static size_t count_kind(gc_finding_kind k)
{
        size_t c = 0;

        for (size_t i = 0; i < res->n_findings; i++)
                c += res->findings[i].kind == k;
        return c;
}

static const gc_finding *first_kind(gc_finding_kind k)
{
        for (size_t i = 0; i < res->n_findings; i++)
                if (res->findings[i].kind == k)
                        return &res->findings[i];
        return NULL;
}

static double fig(const gc_finding *f, const char *name)
{
        for (size_t i = 0; i < f->n_figures; i++)
                if (strcmp(f->figures[i].name, name) == 0)
                        return f->figures[i].value;
        ck_abort_msg("no figure %s", name);
        return NAN;
}

static const char *fig_text(const gc_finding *f, const char *name)
{
        for (size_t i = 0; i < f->n_figures; i++)
                if (strcmp(f->figures[i].name, name) == 0)
                        return f->figures[i].text;
        return NULL;
}

static int has_note(const char *needle)
{
        for (size_t i = 0; i < res->n_notes; i++)
                if (strstr(res->notes[i], needle))
                        return 1;
        return 0;
}

static void put_usage(const char *uid, const char *ns, const char *team, const char *project,
                      const char *model, const char *ctype, const char *node, double geq,
                      double price, int64_t start, int64_t end)
{
        gc_usage u;

        memset(&u, 0, sizeof(u));
        u.pod_uid = uid;
        u.dims[GC_DIM_NAMESPACE] = ns;
        u.dims[GC_DIM_TEAM] = team;
        u.dims[GC_DIM_PROJECT] = project;
        u.dims[GC_DIM_MODEL] = model;
        u.dims[GC_DIM_CAPACITY_TYPE] = ctype;
        u.dims[GC_DIM_NODE] = node;
        u.dims[GC_DIM_POD] = uid;
        u.geq = geq;
        u.price_per_gpu_hour = price;
        u.start = start;
        u.end = end;
        ck_assert_int_eq(gc_ledger_put_usage(led, &u), 0);
}

static void put_node(const char *node, const char *model, const char *ctype, double geq,
                     double price, int64_t start, int64_t end)
{
        gc_capacity c;

        memset(&c, 0, sizeof(c));
        c.node = node;
        c.model = model;
        c.capacity_type = ctype;
        c.geq = geq;
        c.price_per_gpu_hour = price;
        c.start = start;
        c.end = end;
        ck_assert_int_eq(gc_ledger_put_capacity(led, &c), 0);
}

#define MONTH_A100 (4.10 * 730.0) /* one A100 all month */

/* ---- options ----------------------------------------------------------------------------------
 */

START_TEST(test_opts_default_valid)
{
        gc_advisor_opts o;
        char err[200] = "";

        gc_advisor_opts_default(&o);
        ck_assert_int_eq(gc_advisor_opts_check(&o, err, sizeof(err)), 0);
        ck_assert_double_eq(o.idle_activity, 0.05);
        ck_assert_double_eq(o.idle_memory_fraction, 0.10);
        ck_assert_double_eq(o.idle_minutes, 30);
        ck_assert_double_eq(o.hours_per_month, 730);
        ck_assert_uint_eq(o.n_cheaper_classes, 2);
        ck_assert_str_eq(o.cheaper_classes[0].to, "NVIDIA-A10G");
}
END_TEST

/* Each spoils one option; the error must start with its JSON field name. */
static void spoil_idle_activity(gc_advisor_opts *o)
{
        o->idle_activity = 1.5;
}
static void spoil_idle_memory_fraction(gc_advisor_opts *o)
{
        o->idle_memory_fraction = -0.1;
}
static void spoil_idle_minutes(gc_advisor_opts *o)
{
        o->idle_minutes = 0;
}
static void spoil_min_samples(gc_advisor_opts *o)
{
        o->min_samples = 0;
}
static void spoil_min_coverage(gc_advisor_opts *o)
{
        o->min_coverage = NAN;
}
static void spoil_over_request(gc_advisor_opts *o)
{
        o->over_request_active_activity = 2;
}
static void spoil_mig_headroom(gc_advisor_opts *o)
{
        o->mig_headroom = -1;
}
static void spoil_classes_n(gc_advisor_opts *o)
{
        o->n_cheaper_classes = GC_ADVISOR_MAX_CLASSES + 1;
}
static void spoil_class_from(gc_advisor_opts *o)
{
        o->cheaper_classes[1].from[0] = '\0';
}
static void spoil_class_from_star(gc_advisor_opts *o)
{
        gc_strlcpy(o->cheaper_classes[0].from, "NVIDIA-*-80GB", sizeof(o->cheaper_classes[0].from));
}
static void spoil_class_to(gc_advisor_opts *o)
{
        gc_strlcpy(o->cheaper_classes[1].to, "NVIDIA-L*", sizeof(o->cheaper_classes[1].to));
}
static void spoil_class_tensor(gc_advisor_opts *o)
{
        o->cheaper_classes[0].max_tensor_activity = 1.01;
}
static void spoil_class_memory(gc_advisor_opts *o)
{
        o->cheaper_classes[0].to_memory_mib = -1;
}
static void spoil_reserve_percentile(gc_advisor_opts *o)
{
        o->reserve_percentile = 101;
}
static void spoil_hours_per_month(gc_advisor_opts *o)
{
        o->hours_per_month = 745;
}
static void spoil_max_findings(gc_advisor_opts *o)
{
        o->max_findings = 2000000;
}
static void spoil_max_notes(gc_advisor_opts *o)
{
        o->max_notes = 200000;
}

static const struct {
        const char *field;
        void (*spoil)(gc_advisor_opts *o);
} bad_opts[] = {
    {"idle_activity:", spoil_idle_activity},
    {"idle_memory_fraction:", spoil_idle_memory_fraction},
    {"idle_minutes:", spoil_idle_minutes},
    {"min_samples:", spoil_min_samples},
    {"min_coverage:", spoil_min_coverage},
    {"over_request_active_activity:", spoil_over_request},
    {"mig_headroom:", spoil_mig_headroom},
    {"cheaper_classes:", spoil_classes_n},
    {"cheaper_classes[1].from:", spoil_class_from},
    {"cheaper_classes[0].from:", spoil_class_from_star},
    {"cheaper_classes[1].to:", spoil_class_to},
    {"cheaper_classes[0].max_tensor_activity:", spoil_class_tensor},
    {"cheaper_classes[0].to_memory_mib:", spoil_class_memory},
    {"reserve_percentile:", spoil_reserve_percentile},
    {"hours_per_month:", spoil_hours_per_month},
    {"max_findings:", spoil_max_findings},
    {"max_notes:", spoil_max_notes},
};

/* ---- idle_gpu ----------------------------------------------------------------------------------
 */

static const struct {
        int64_t longest_s, total_s;
        int fires;
        double frac;
} idle_cases[] = {
    {29 * 60, 29 * 60, 0, 0},                  /* 29 minutes: not yet */
    {30 * 60, 30 * 60, 1, 1800.0 / (7 * DAY)}, /* exactly 30 minutes: idle */
    {30 * 60 + 1, 6 * 3600, 1, 6 * 3600.0 / (7 * DAY)},
    {7 * DAY, 7 * DAY, 1, 1}, /* idle all week: release */
};

START_TEST(test_idle_gpu_boundaries)
{
        gc_advisor_pod p = base_pod();
        const gc_finding *f;

        p.idle_longest_s = idle_cases[_i].longest_s;
        p.idle_total_s = idle_cases[_i].total_s;
        p.activity_mean = 0.01;
        run(&p, 1, NULL);
        ck_assert_uint_eq(count_kind(GC_FINDING_IDLE_GPU), (size_t)idle_cases[_i].fires);
        if (!idle_cases[_i].fires)
                return;
        f = first_kind(GC_FINDING_IDLE_GPU);
        ck_assert_double_eq_tol(fig(f, "idle_fraction"), idle_cases[_i].frac, 1e-9);
        ck_assert_double_eq_tol(f->monthly_savings, MONTH_A100 * idle_cases[_i].frac, 1e-6);
        ck_assert_double_eq_tol(fig(f, "cost_per_day"), 4.10 * 24, 1e-9);
        ck_assert_str_eq(f->ns, "ml");
        ck_assert_str_eq(f->pod, "p");
        ck_assert_str_eq(f->team, "vision");
        ck_assert_uint_eq(f->samples, 2016);
        ck_assert_int_eq(f->window_start, W0);
        ck_assert_int_eq(f->window_end, W1);
        /* The Deployment owning ReplicaSet srv-7d9f8c6b5. */
        ck_assert_str_eq(f->stanza, "kubectl -n ml scale deployment/srv --replicas=0");
        if (idle_cases[_i].frac >= 0.9)
                ck_assert_ptr_nonnull(strstr(f->summary, "release"));
}
END_TEST

START_TEST(test_idle_gpu_threshold_from_opts)
{
        gc_advisor_opts o;
        gc_advisor_pod p = base_pod();

        gc_advisor_opts_default(&o);
        o.idle_minutes = 60;
        p.idle_longest_s = 59 * 60;
        p.idle_total_s = 59 * 60;
        run(&p, 1, &o);
        ck_assert_uint_eq(count_kind(GC_FINDING_IDLE_GPU), 0);
        p.idle_longest_s = 60 * 60;
        run(&p, 1, &o);
        ck_assert_uint_eq(count_kind(GC_FINDING_IDLE_GPU), 1);
}
END_TEST

/* The pod's cost rate over the window: a pod held half the window saves half a month. */
START_TEST(test_idle_gpu_monthly_rate)
{
        gc_advisor_pod p = base_pod();
        const gc_finding *f;

        p.start = W0 + 3 * DAY + DAY / 2;
        p.end = W1;
        p.usage_start = p.start;
        p.idle_longest_s = p.end - p.start;
        p.idle_total_s = p.end - p.start;
        run(&p, 1, NULL);
        f = first_kind(GC_FINDING_IDLE_GPU);
        ck_assert_ptr_nonnull(f);
        ck_assert_double_eq_tol(f->monthly_savings, MONTH_A100 / 2, 1e-6);
        ck_assert_double_eq_tol(fig(f, "idle_fraction"), 1, 1e-12);
}
END_TEST

/* ---- over_requested ----------------------------------------------------------------------------
 */

static const struct {
        double requested;
        uint32_t seen, active;
        int fires;
} over_cases[] = {
    {8, 8, 2, 1},               /* the field's example: 8 requested, 2 active -> 2 */
    {8, 8, 7, 1}, {8, 8, 8, 0}, /* all active */
    {8, 8, 0, 0},               /* none active: idle, not over-requested */
    {8, 6, 2, 0},               /* not every device measured: no conclusion */
    {2, 2, 1, 1}, {1, 1, 1, 0},
};

START_TEST(test_over_requested)
{
        gc_advisor_pod p = base_pod();
        const gc_finding *f;
        char want[64];

        p.model = H100;
        p.price_per_gpu_hour = 12.29;
        p.gpus_requested = over_cases[_i].requested;
        p.geq = over_cases[_i].requested;
        p.devices_seen = over_cases[_i].seen;
        p.devices_active = over_cases[_i].active;
        p.controller_kind = "Job";
        p.controller = "train";
        run(&p, 1, NULL);
        ck_assert_uint_eq(count_kind(GC_FINDING_OVER_REQUESTED), (size_t)over_cases[_i].fires);
        if (!over_cases[_i].fires)
                return;
        f = first_kind(GC_FINDING_OVER_REQUESTED);
        snprintf(want, sizeof(want), "resources:\n  limits:\n    nvidia.com/gpu: %u\n",
                 over_cases[_i].active);
        ck_assert_str_eq(f->stanza, want);
        ck_assert_double_eq(fig(f, "suggested_gpus"), over_cases[_i].active);
        ck_assert_double_eq_tol(f->monthly_savings,
                                p.geq * 12.29 * 730 *
                                    (over_cases[_i].requested - over_cases[_i].active) /
                                    over_cases[_i].requested,
                                1e-6);
}
END_TEST

/* ---- mig_fit -----------------------------------------------------------------------------------
 */

static const struct {
        const char *model;
        double peak_mib, p95, headroom;
        const char *profile; /* NULL: none fits */
        double share;
} mig_cases[] = {
    /* Inference that fits a 1g.10gb on an A100 40GB: 7000 MiB x 1.2 = 8400 > 4864 of a 1g.5gb. */
    {A100, 7000, 0.10, 0.2, "1g.10gb", 0.25},
    {A100, 4000, 0.10, 0.2, "1g.5gb", 1.0 / 7},
    /* Exactly at the limits (no headroom): 4864 MiB and 1/7 of the compute fit a 1g.5gb. */
    {A100, 4864, 1.0 / 7, 0, "1g.5gb", 1.0 / 7},
    {A100, 4865, 1.0 / 7, 0, "1g.10gb", 0.25},
    {A100, 4864, 1.0 / 7 + 1e-9, 0, "2g.10gb", 2.0 / 7},
    {A100, 7000, 0.30, 0.2, "3g.20gb", 0.5}, /* 0.36 of the compute needs 3 of 7 slices */
    {A100, 39000, 0.10, 0.2, NULL, 0},       /* needs the whole GPU */
    {A100, 7000, 0.9, 0.2, NULL, 0},         /* busy */
    {H100, 15000, 0.10, 0.2, "1g.20gb", 0.25},
    {"Tesla-T4", 1000, 0.05, 0.2, NULL, 0}, /* no MIG */
    {"NVIDIA-A10G", 1000, 0.05, 0.2, NULL, 0},
};

START_TEST(test_mig_fit)
{
        gc_advisor_opts o;
        gc_advisor_pod p = base_pod();
        const gc_finding *f;
        char want[80];

        gc_advisor_opts_default(&o);
        o.mig_headroom = mig_cases[_i].headroom;
        p.model = mig_cases[_i].model;
        p.mem_used_peak_mib = mig_cases[_i].peak_mib;
        p.activity_p95 = mig_cases[_i].p95;
        p.activity_mean = mig_cases[_i].p95 / 2;
        p.tensor_mean = 0.05;
        /* Training: the cheaper class (inference only) does not compete, except in case 0. */
        p.controller_kind = _i == 0 ? "ReplicaSet" : "Job";
        run(&p, 1, &o);
        if (!mig_cases[_i].profile) {
                ck_assert_uint_eq(count_kind(GC_FINDING_MIG_FIT), 0);
                return;
        }
        ck_assert_uint_eq(res->n_findings, 1);
        f = first_kind(GC_FINDING_MIG_FIT);
        ck_assert_msg(f != NULL, "case %d: kind %s", _i,
                      gc_finding_kind_name(res->findings[0].kind));
        ck_assert_str_eq(fig_text(f, "profile"), mig_cases[_i].profile);
        snprintf(want, sizeof(want), "resources:\n  limits:\n    nvidia.com/mig-%s: 1\n",
                 mig_cases[_i].profile);
        ck_assert_str_eq(f->stanza, want);
        ck_assert_double_eq_tol(fig(f, "share"), mig_cases[_i].share, 1e-12);
        ck_assert_double_eq_tol(f->monthly_savings,
                                (1 - mig_cases[_i].share) * p.price_per_gpu_hour * 730, 1e-6);
}
END_TEST

/* A pod holding a whole GPU through a DRA claim: the change is a claim for a MIG partition of
 * the MIG DeviceClass (the controller names the one it watches), not a device-plugin resource. */
START_TEST(test_mig_fit_dra_names_the_device_class)
{
        gc_advisor_opts o;
        gc_advisor_pod p = base_pod();
        const gc_finding *f;

        gc_advisor_opts_default(&o);
        ck_assert_str_eq(o.dra_mig_class, "mig.nvidia.com");
        gc_strlcpy(o.dra_mig_class, "mig.example.com", sizeof(o.dra_mig_class));
        p.resource = GC_ADVISOR_DRA_RESOURCE;
        p.model = A100;
        p.mem_used_peak_mib = 4000;
        p.activity_p95 = 0.10;
        p.controller_kind = "Job";
        run(&p, 1, &o);
        f = first_kind(GC_FINDING_MIG_FIT);
        ck_assert_ptr_nonnull(f);
        ck_assert_str_eq(fig_text(f, "profile"), "1g.5gb");
        ck_assert_str_eq(f->stanza, "# the pod's ResourceClaimTemplate\nspec:\n  devices:\n    "
                                    "requests:\n    - name: gpu\n      exactly:\n        "
                                    "deviceClassName: mig.example.com\n        selectors:\n"
                                    "        - cel:\n            expression: "
                                    "\"device.attributes['gpu.nvidia.com'].profile == "
                                    "'1g.5gb'\"\n");
        ck_assert_ptr_nonnull(strstr(f->summary, "claim one from DeviceClass mig.example.com"));
        /* A DRA pod on a partition already (geq < 1) gets no MIG advice. */
        p.geq = p.gpus_requested = 3.0 / 7;
        run(&p, 1, &o);
        ck_assert_uint_eq(count_kind(GC_FINDING_MIG_FIT), 0);
}
END_TEST

START_TEST(test_mig_fit_only_whole_single_gpu)
{
        gc_advisor_pod p = base_pod();

        p.mem_used_peak_mib = 3000;
        p.activity_p95 = 0.05;
        p.tensor_mean = 0.5;
        p.resource = "nvidia.com/mig-3g.20gb";
        p.mig_profile = "3g.20gb";
        p.geq = 0.5;
        run(&p, 1, NULL);
        ck_assert_uint_eq(count_kind(GC_FINDING_MIG_FIT), 0);
        p = base_pod();
        p.mem_used_peak_mib = 3000;
        p.activity_p95 = 0.05;
        p.geq = 0.25; /* time-sliced: already a share */
        run(&p, 1, NULL);
        ck_assert_uint_eq(count_kind(GC_FINDING_MIG_FIT), 0);
}
END_TEST

/* ---- cheaper_class -----------------------------------------------------------------------------
 */

static const struct {
        double tensor, peak_mib;
        const char *controller_kind;
        int no_a10g;
        gc_finding_kind want; /* GC_FINDING_KIND_COUNT: none */
} cheap_cases[] = {
    {0.10, 10000, "ReplicaSet", 0, GC_FINDING_CHEAPER_CLASS},  /* exactly at the threshold */
    {0.05, 10000, "StatefulSet", 0, GC_FINDING_CHEAPER_CLASS}, /* inference */
    {0.1001, 10000, "ReplicaSet", 0, GC_FINDING_MIG_FIT},      /* above: MIG is what is left */
    {0.05, 10000, "Job", 0, GC_FINDING_MIG_FIT},               /* training: no class change */
    {0.05, 20000, "ReplicaSet", 0, GC_FINDING_MIG_FIT},        /* 24000 MiB > the A10G's 22528 */
    {0.05, 10000, "ReplicaSet", 1, GC_FINDING_MIG_FIT},        /* no A10G price: skipped */
};

/* ---- share_fit ------------------------------------------------------------------------------ */

/* A pod on a whole H100 (80 GB: 81559 MiB) peaking at 12000 MiB and 10 % activity (p95): with
 * 20 % headroom it needs 14400 MiB and 12 % of the compute. Where the cluster offers shared H100s,
 * the share it would take (docs/dra.md) and the claim or resources that ask for it. */
static void share_offer(gc_advisor_opts *o, const char *model, gc_advisor_share_way way,
                        const char *klass, double shares)
{
        gc_advisor_shared *s = &o->shared[o->n_shared++];

        memset(s, 0, sizeof(*s));
        gc_strlcpy(s->model, model, sizeof(s->model));
        if (klass)
                gc_strlcpy(s->device_class, klass, sizeof(s->device_class));
        s->way = (uint8_t)way;
        s->shares = shares;
        s->memory_mib = 81559;
}

START_TEST(test_share_fit)
{
        static const struct {
                gc_advisor_share_way way;
                const char *klass;
                double shares, share;
                const char *stanza;
        } cases[] = {
            {GC_SHARE_DRA_MEMORY, "gpu.nvidia.com", 0, 14400.0 / 81559,
             "# the pod's ResourceClaimTemplate\nspec:\n  devices:\n    requests:\n    - name: "
             "gpu\n      exactly:\n        deviceClassName: gpu.nvidia.com\n        capacity:\n"
             "          requests:\n            memory: 14400Mi\n"},
            /* 10 shares: 0.18 of the GPU rounds up to two shares of ten (a 1g.20gb, 0.25,
               would save less). */
            {GC_SHARE_DRA_SHARES, "gpu.nvidia.com", 10, 0.2,
             "# the pod's ResourceClaimTemplate\nspec:\n  devices:\n    requests:\n    - name: "
             "gpu\n      exactly:\n        deviceClassName: gpu.nvidia.com\n        capacity:\n"
             "          requests:\n            shares: \"2\"\n"},
            {GC_SHARE_DRA_CORES, "hami-core-gpu.project-hami.io", 0, 14400.0 / 81559,
             "# the pod's ResourceClaimTemplate\nspec:\n  devices:\n    requests:\n    - name: "
             "gpu\n      exactly:\n        deviceClassName: hami-core-gpu.project-hami.io\n"
             "        capacity:\n          requests:\n            cores: \"12\"\n"
             "            memory: 14400Mi\n"},
            {GC_SHARE_HAMI, NULL, 0, 14400.0 / 81559,
             "resources:\n  limits:\n    nvidia.com/gpu: 1\n    nvidia.com/gpumem: 14400\n    "
             "nvidia.com/gpucores: 12\n"},
        };
        gc_advisor_opts o;
        gc_advisor_pod p = base_pod();
        const gc_finding *f;

        gc_advisor_opts_default(&o);
        share_offer(&o, H100, cases[_i].way, cases[_i].klass, cases[_i].shares);
        p.model = H100;
        p.mem_used_peak_mib = 12000;
        p.activity_p95 = 0.10;
        p.activity_mean = 0.05;
        p.controller_kind = "Job"; /* no cheaper class */
        run(&p, 1, &o);
        ck_assert_uint_eq(res->n_findings, 1);
        f = first_kind(GC_FINDING_SHARE_FIT);
        ck_assert_msg(f != NULL, "case %d: kind %s", _i,
                      gc_finding_kind_name(res->findings[0].kind));
        ck_assert_double_eq_tol(fig(f, "share"), cases[_i].share, 1e-12);
        ck_assert_str_eq(f->stanza, cases[_i].stanza);
        ck_assert_double_eq_tol(f->monthly_savings,
                                (1 - cases[_i].share) * p.price_per_gpu_hour * 730, 1e-6);
}
END_TEST

START_TEST(test_share_fit_only_where_offered)
{
        gc_advisor_opts o;
        gc_advisor_pod p = base_pod();

        gc_advisor_opts_default(&o);
        p.model = H100;
        p.mem_used_peak_mib = 12000;
        p.activity_p95 = 0.10;
        p.controller_kind = "Job";
        /* No shared GPU offered: the MIG advice stands alone, as before. */
        run(&p, 1, &o);
        ck_assert_uint_eq(count_kind(GC_FINDING_SHARE_FIT), 0);
        ck_assert_uint_eq(count_kind(GC_FINDING_MIG_FIT), 1);
        /* Shared A100s only: not for an H100 pod. */
        share_offer(&o, A100, GC_SHARE_DRA_MEMORY, "gpu.nvidia.com", 0);
        run(&p, 1, &o);
        ck_assert_uint_eq(count_kind(GC_FINDING_SHARE_FIT), 0);
        /* Needs the whole GPU's memory: no share. */
        share_offer(&o, H100, GC_SHARE_DRA_MEMORY, "gpu.nvidia.com", 0);
        p.mem_used_peak_mib = 70000;
        run(&p, 1, &o);
        ck_assert_uint_eq(count_kind(GC_FINDING_SHARE_FIT), 0);
        /* Two whole GPUs: over_requested's business, not a share. */
        p.mem_used_peak_mib = 12000;
        p.gpus_requested = p.geq = 2;
        run(&p, 1, &o);
        ck_assert_uint_eq(count_kind(GC_FINDING_SHARE_FIT), 0);
}
END_TEST

START_TEST(test_cheaper_class)
{
        gc_advisor_pod p = base_pod();
        const gc_finding *f;
        char err[200];

        if (cheap_cases[_i].no_a10g) {
                cat = gc_catalog_free(cat);
                cat = gc_catalog_parse(catalog_no_a10g_json, strlen(catalog_no_a10g_json), err,
                                       sizeof(err));
                ck_assert_ptr_nonnull(cat);
        }
        p.model = H100;
        p.price_per_gpu_hour = 12.29;
        p.tensor_mean = cheap_cases[_i].tensor;
        p.mem_used_peak_mib = cheap_cases[_i].peak_mib;
        p.activity_p95 = 0.4; /* 0.48 with headroom: a MIG slice would need 4g.40gb */
        p.controller_kind = cheap_cases[_i].controller_kind;
        run(&p, 1, NULL);
        ck_assert_uint_eq(res->n_findings, 1);
        f = &res->findings[0];
        ck_assert_str_eq(gc_finding_kind_name(f->kind), gc_finding_kind_name(cheap_cases[_i].want));
        if (f->kind == GC_FINDING_CHEAPER_CLASS) {
                ck_assert_str_eq(f->stanza,
                                 "nodeSelector:\n  nvidia.com/gpu.product: NVIDIA-A10G\n");
                ck_assert_double_eq(fig(f, "from_price_per_gpu_hour"), 12.29);
                ck_assert_double_eq(fig(f, "to_price_per_gpu_hour"), 2.04);
                ck_assert_double_eq_tol(f->monthly_savings, 12.29 * 730 * (1 - 2.04 / 12.29), 1e-6);
        } else {
                ck_assert_str_eq(fig_text(f, "profile"), "4g.40gb");
        }
}
END_TEST

/* ---- usage sufficiency and no usage -------------------------------------------------------------
 */

START_TEST(test_too_few_samples)
{
        gc_advisor_pod p = base_pod();

        p.idle_longest_s = 7 * DAY;
        p.idle_total_s = 7 * DAY;
        p.samples = 29;
        run(&p, 1, NULL);
        ck_assert_uint_eq(res->n_findings, 0);
        ck_assert_uint_eq(res->pods_insufficient, 1);
        ck_assert(has_note("ml/p has 29 samples"));
        p.samples = 30; /* exactly min_samples */
        run(&p, 1, NULL);
        ck_assert_uint_eq(count_kind(GC_FINDING_IDLE_GPU), 1);
        ck_assert_uint_eq(res->pods_measured, 1);
        p.coverage = 0.49;
        run(&p, 1, NULL);
        ck_assert_uint_eq(res->n_findings, 0);
        ck_assert(has_note("coverage 0.49"));
        p.coverage = 0.5;
        run(&p, 1, NULL);
        ck_assert_uint_eq(count_kind(GC_FINDING_IDLE_GPU), 1);
}
END_TEST

START_TEST(test_no_usage_data)
{
        gc_advisor_pod p[2] = {base_pod(), base_pod()};

        for (int i = 0; i < 2; i++) {
                p[i].has_usage = 0;
                p[i].idle_longest_s = 7 * DAY; /* ignored without has_usage */
        }
        /* Cost-only findings still come: spend nobody owns. */
        put_usage("u1", "scratch", GC_UNATTRIBUTED, GC_UNATTRIBUTED, A100, "on-demand", "n1", 1,
                  4.10, W0, W1);
        run(p, 2, NULL);
        ck_assert(!res->has_usage);
        ck_assert(has_note("no usage data"));
        ck_assert_uint_eq(count_kind(GC_FINDING_IDLE_GPU), 0);
        ck_assert_uint_eq(count_kind(GC_FINDING_UNATTRIBUTED), 1);
}
END_TEST

/* ---- cost-only findings ------------------------------------------------------------------------
 */

START_TEST(test_unattributed)
{
        const gc_finding *f;

        put_usage("u1", "scratch", GC_UNATTRIBUTED, GC_UNATTRIBUTED, A100, "on-demand", "n1", 1,
                  4.10, W0, W1);
        put_usage("u2", "lab", "vision", GC_UNATTRIBUTED, A100, "on-demand", "n1", 1, 4.10, W0,
                  W0 + DAY);
        put_usage("u3", "ok", "vision", "p1", A100, "on-demand", "n1", 1, 4.10, W0, W1);
        run(NULL, 0, NULL);
        ck_assert_uint_eq(count_kind(GC_FINDING_UNATTRIBUTED), 2);
        for (size_t i = 0; i < res->n_findings; i++) {
                f = &res->findings[i];
                if (f->kind != GC_FINDING_UNATTRIBUTED)
                        continue;
                ck_assert_double_eq(f->monthly_savings, 0);
                if (strcmp(f->ns, "scratch") == 0) {
                        ck_assert_str_eq(f->stanza, "kubectl label namespace scratch "
                                                    "team=<team> project=<project>");
                        ck_assert_double_eq_tol(fig(f, "cost"), 4.10 * 168, 1e-9);
                        ck_assert_double_eq_tol(fig(f, "monthly_spend"), MONTH_A100, 1e-9);
                        ck_assert_str_eq(fig_text(f, "missing"), "team and project");
                } else {
                        ck_assert_str_eq(f->ns, "lab");
                        ck_assert_str_eq(f->stanza,
                                         "kubectl label namespace lab project=<project>");
                        ck_assert_double_eq_tol(fig(f, "gpu_hours"), 24, 1e-9);
                }
        }
}
END_TEST

START_TEST(test_idle_capacity)
{
        const gc_finding *f;

        put_node("n1", H100, "on-demand", 8, 12.29, W0 - DAY, GC_OPEN);
        put_node("n2", H100, "on-demand", 8, 12.29, W0 - DAY, GC_OPEN);
        put_usage("u1", "ml", "vision", "p1", H100, "on-demand", "n1", 4, 12.29, W0, GC_OPEN);
        run(NULL, 0, NULL);
        f = first_kind(GC_FINDING_IDLE_CAPACITY);
        ck_assert_ptr_nonnull(f);
        ck_assert_str_eq(f->model, H100);
        ck_assert_str_eq(f->capacity_type, "on-demand");
        ck_assert_str_eq(f->team, GC_ADVISOR_CLUSTER);
        ck_assert_double_eq_tol(fig(f, "average_idle_gpus"), 12, 1e-9);
        ck_assert_double_eq(fig(f, "nodes_idle"), 1);
        ck_assert_double_eq(fig(f, "gpus_per_node"), 8);
        ck_assert_double_eq_tol(fig(f, "idle_gpu_hours"), 12 * 168, 1e-6);
        ck_assert_double_eq_tol(f->monthly_savings, 8 * 12.29 * 730, 1e-6);
        /* It names the node to take out (the most idle), its whole GPUs and what it costs. */
        ck_assert_str_eq(fig_text(f, "nodes_to_remove"), "n2");
        ck_assert_msg(strstr(f->summary, "take out 1 node, the most idle: n2 (8 GPUs, $71,773.60 a "
                                         "month)"),
                      "%s", f->summary);
        ck_assert_str_eq(f->stanza, "node pool " H100 " / on-demand: 1 fewer node: n2");
        /* 7.9 idle GPUs on average is less than a node: nothing to scale down. */
        put_usage("u2", "ml", "vision", "p1", H100, "on-demand", "n2", 4.1, 12.29, W0, GC_OPEN);
        run(NULL, 0, NULL);
        ck_assert_uint_eq(count_kind(GC_FINDING_IDLE_CAPACITY), 0);
}
END_TEST

/*
 * A pool of a MIG node whose slices' shares add up to 8.57 GPU-equivalents (1g.10gb x 16, 2g.20gb
 * x 8, 3g.40gb x 8 on 8 H100s) and a whole 8-GPU node: the sentence never says "8.57 GPUs" (a node
 * holds whole GPUs); it names the node(s) it takes out and what each costs, the most idle first.
 */
START_TEST(test_idle_capacity_names_nodes)
{
        const double mig = 16.0 / 7 + 16.0 / 7 + 8 * 0.5;
        const gc_finding *f;

        put_node("mig-1", H100, "on-demand", mig, 12.29, W0 - DAY, GC_OPEN);
        put_node("whole-1", H100, "on-demand", 8, 12.29, W0 - DAY, GC_OPEN);
        put_node("whole-2", H100, "on-demand", 8, 12.29, W0 - DAY, GC_OPEN);
        put_node("whole-3", H100, "on-demand", 8, 12.29, W0 - DAY, GC_OPEN);
        /* whole-1 is busy; the other three idle. 32.57 - 8 = 24.57 idle: 2 nodes of <= 8.57. */
        put_usage("u1", "ml", "vision", "p1", H100, "on-demand", "whole-1", 8, 12.29, W0, GC_OPEN);
        run(NULL, 0, NULL);
        f = first_kind(GC_FINDING_IDLE_CAPACITY);
        ck_assert_ptr_nonnull(f);
        ck_assert_double_eq(fig(f, "nodes_idle"), 2);
        /* mig-1 idles most (8.57), then whole-2 and whole-3 tie at 8: by name. */
        ck_assert_str_eq(fig_text(f, "nodes_to_remove"), "mig-1 whole-2");
        ck_assert_msg(strstr(f->summary, "take out 2 nodes, the most idle: mig-1 (8.57 "
                                         "GPU-equivalents, $76,900.29 a month), whole-2 (8 GPUs, "
                                         "$71,773.60 a month)"),
                      "%s", f->summary);
        ck_assert_ptr_null(strstr(f->summary, "8.57 GPUs"));
        ck_assert_double_eq_tol(f->monthly_savings, (mig + 8) * 12.29 * 730, 1e-6);
        ck_assert_str_eq(f->stanza, "node pool " H100 " / on-demand: 2 fewer nodes: mig-1 whole-2");
}
END_TEST

START_TEST(test_reserve_floor)
{
        const gc_finding *f;
        double floor_h = 96, od = 12.29, rv = 5.25, saving_day = floor_h * (od - rv);

        /* 4 GPUs every hour of the week, plus 2 more for 12 hours on the fourth day. */
        put_usage("u1", "ml", "vision", "p1", H100, "on-demand", "n1", 4, od, W0 - DAY, GC_OPEN);
        put_usage("u2", "ml", "vision", "p1", H100, "on-demand", "n1", 2, od, W0 + 3 * DAY,
                  W0 + 3 * DAY + 12 * 3600);
        /* Spot and A100 hours: the A100 has no reserved price, spot hours are not on demand. */
        put_usage("u3", "ml", "vision", "p1", H100, "spot", "n3", 8, 5.0, W0, W1);
        put_usage("u4", "ml", "vision", "p1", A100, "on-demand", "n4", 1, 4.10, W0, W1);
        run(NULL, 0, NULL);
        ck_assert_uint_eq(count_kind(GC_FINDING_RESERVE_FLOOR), 1);
        f = first_kind(GC_FINDING_RESERVE_FLOOR);
        ck_assert_str_eq(f->model, H100);
        ck_assert_double_eq(fig(f, "days"), 7);
        ck_assert_double_eq_tol(fig(f, "daily_gpu_hours_min"), 96, 1e-9);
        ck_assert_double_eq_tol(fig(f, "daily_gpu_hours_max"), 120, 1e-9);
        ck_assert_double_eq_tol(fig(f, "floor_gpu_hours_per_day"), 96, 1e-9);
        ck_assert_double_eq_tol(fig(f, "reserve_gpus"), 4, 1e-9);
        ck_assert_double_eq(fig(f, "reserved_price_per_gpu_hour"), 5.25);
        ck_assert_double_eq(fig(f, "spot_price_per_gpu_hour"), 5.00);
        ck_assert_double_eq_tol(fig(f, "on_demand_price_per_gpu_hour"), od, 1e-9);
        ck_assert_double_eq_tol(f->monthly_savings, saving_day * 730 / 24, 1e-6);
        ck_assert_ptr_null(fig_text(f, "days_note"));
        ck_assert(has_note("no reserved price for " A100));
}
END_TEST

START_TEST(test_reserve_floor_percentile_and_short_window)
{
        gc_advisor_opts o;
        const gc_finding *f;

        /* 24 GPU-hours on the first day, 48 on the other six. */
        put_usage("u1", "ml", "vision", "p1", H100, "on-demand", "n1", 1, 12.29, W0, GC_OPEN);
        put_usage("u2", "ml", "vision", "p1", H100, "on-demand", "n1", 1, 12.29, W0 + DAY, W1);
        run(NULL, 0, NULL);
        f = first_kind(GC_FINDING_RESERVE_FLOOR);
        ck_assert_ptr_nonnull(f);
        ck_assert_double_eq_tol(fig(f, "floor_gpu_hours_per_day"), 24, 1e-9);
        gc_advisor_opts_default(&o);
        o.reserve_percentile = 50;
        run(NULL, 0, &o);
        f = first_kind(GC_FINDING_RESERVE_FLOOR);
        ck_assert_double_eq_tol(fig(f, "floor_gpu_hours_per_day"), 48, 1e-9);
        /* Plan: 48 reserved every day; day one pays for 24 it does not use. */
        ck_assert_double_eq_tol(f->monthly_savings,
                                ((24 + 6 * 48) * 12.29 - 7 * 48 * 5.25) / 7 * 730 / 24, 1e-6);
        /* Three whole days (a window from mid-day): said so. */
        run_full(NULL, 0, NULL, NULL, W0 + DAY / 2, W0 + 4 * DAY);
        f = first_kind(GC_FINDING_RESERVE_FLOOR);
        ck_assert_ptr_nonnull(f);
        ck_assert_double_eq(fig(f, "days"), 3);
        ck_assert_ptr_nonnull(fig_text(f, "days_note"));
        ck_assert_int_eq(f->window_start, W0 + DAY);
        ck_assert_int_eq(f->window_end, W0 + 4 * DAY);
        /* Less than a day: a note, no finding. */
        run_full(NULL, 0, NULL, NULL, W0 + 3600, W0 + 5 * 3600);
        ck_assert_uint_eq(count_kind(GC_FINDING_RESERVE_FLOOR), 0);
        ck_assert(has_note("no whole UTC day"));
}
END_TEST

static gc_tco_inputs dgx(void)
{
        gc_tco_inputs t = {425000, 8, 3, 0.8, 64, 1.5, 250000, 0.56, 1.3, 0.10, 0.10};

        return t;
}

/* Folded history counts as intervals did: the same floor, saving and dominant model. */
START_TEST(test_reserve_floor_after_fold)
{
        gc_tco_inputs t = dgx();
        double floor_h, saving, be;
        const gc_finding *f;
        char uid[32];

        put_node("n1", H100, "on-demand", 8, 12.29, W0 - DAY, GC_OPEN);
        put_node("n2", A100, "on-demand", 8, 4.10, W0 - DAY, GC_OPEN);
        /* One 3-GPU pod a day on H100 (20 h each), and on day 5 a second one; an A100 pod. */
        for (int d = 0; d < 7; d++) {
                snprintf(uid, sizeof(uid), "h-%d", d);
                put_usage(gc_strpool_intern0(pool, uid), "ml", "vision", "p1", H100, "on-demand",
                          "n1", 3, 12.29, W0 + d * DAY + 3600, W0 + d * DAY + 21 * 3600);
        }
        put_usage("h-x", "ml", "vision", "p1", H100, "on-demand", "n1", 1, 12.29, W0 + 5 * DAY,
                  W0 + 6 * DAY);
        put_usage("a-0", "ml", "vision", "p1", A100, "on-demand", "n2", 2, 4.10, W0, W0 + 7 * DAY);
        run_full(NULL, 0, NULL, &t, W0, W1);
        f = first_kind(GC_FINDING_RESERVE_FLOOR);
        ck_assert_ptr_nonnull(f);
        floor_h = fig(f, "floor_gpu_hours_per_day");
        saving = f->monthly_savings;
        ck_assert_double_eq_tol(floor_h, 60, 1e-9);
        ck_assert_double_eq_tol(fig(f, "daily_gpu_hours_max"), 84, 1e-9);
        f = first_kind(GC_FINDING_BUY_VS_RENT);
        ck_assert_str_eq(f->model, H100); /* 444 GPU-hours against the A100's 336 */
        be = fig(f, "break_even_utilization");
        ck_assert_int_ge(gc_ledger_fold(led, W1, W0 - 30 * DAY), 9);
        run_full(NULL, 0, NULL, &t, W0, W1);
        f = first_kind(GC_FINDING_RESERVE_FLOOR);
        ck_assert_double_eq_tol(fig(f, "floor_gpu_hours_per_day"), floor_h, 1e-9);
        ck_assert_double_eq_tol(f->monthly_savings, saving, 1e-6);
        f = first_kind(GC_FINDING_BUY_VS_RENT);
        ck_assert_str_eq(f->model, H100);
        ck_assert_double_eq_tol(fig(f, "break_even_utilization"), be, 1e-12);
}
END_TEST

START_TEST(test_buy_vs_rent)
{
        gc_tco_inputs t = dgx(), at;
        gc_tco_result want;
        gc_advisor_pod p = base_pod();
        const gc_finding *f;
        double be, own, rent;
        char err[100];

        put_node("n1", H100, "on-prem", 8, 2.84, W0 - DAY, GC_OPEN);
        put_node("n2", H100, "on-prem", 8, 2.84, W0 - DAY, GC_OPEN);
        put_usage("u1", "ml", "vision", "p1", H100, "on-prem", "n1", 8, 2.84, W0, GC_OPEN);
        /* Without TCO inputs: no buy_vs_rent. */
        run(NULL, 0, NULL);
        ck_assert_uint_eq(count_kind(GC_FINDING_BUY_VS_RENT), 0);
        /* Allocation only (no usage): U = 8 / 16. */
        run_full(NULL, 0, NULL, &t, W0, W1);
        f = first_kind(GC_FINDING_BUY_VS_RENT);
        ck_assert_ptr_nonnull(f);
        at = t;
        at.utilization = 0.5;
        ck_assert_int_eq(gc_tco_compute(&at, &want, err, sizeof(err)), 0);
        ck_assert_int_eq(gc_tco_break_even(want.annual_cost_per_gpu, 5.25, &be), 0);
        ck_assert_double_eq_tol(fig(f, "allocation"), 0.5, 1e-12);
        ck_assert(isnan(fig(f, "activity")));
        ck_assert_double_eq_tol(fig(f, "utilization"), 0.5, 1e-12);
        ck_assert_double_eq_tol(fig(f, "break_even_utilization"), be, 1e-12);
        ck_assert_double_eq(fig(f, "cloud_price_per_gpu_hour"), 5.25); /* the reserved price */
        ck_assert_str_eq(fig_text(f, "fleet"), "owned");
        own = want.annual_cost_per_gpu * 16 * 730 / 8760;
        rent = 5.25 * 0.5 * 16 * 730;
        ck_assert(be > 0.5 && own > rent);
        ck_assert_double_eq_tol(f->monthly_savings, own - rent, 1e-6);
        ck_assert_ptr_nonnull(strstr(f->summary, "renting would be cheaper"));
        /* Measured activity 0.5 inside the allocation: U = 0.25. */
        p.model = H100;
        p.geq = 8;
        p.gpus_requested = 8;
        p.devices_seen = 8;
        p.devices_active = 8;
        p.price_per_gpu_hour = 2.84;
        p.capacity_type = "on-prem";
        run_full(&p, 1, NULL, &t, W0, W1);
        f = first_kind(GC_FINDING_BUY_VS_RENT);
        ck_assert_double_eq_tol(fig(f, "activity"), 0.5, 1e-12);
        ck_assert_double_eq_tol(fig(f, "utilization"), 0.25, 1e-12);
}
END_TEST

/* ---- order, cut, stats, renderers --------------------------------------------------------------
 */

static gc_advisor_pod idle_pod(const char *name, const char *team, double price)
{
        gc_advisor_pod p = base_pod();

        p.name = name;
        p.uid = name;
        p.team = team;
        p.price_per_gpu_hour = price;
        p.idle_longest_s = 7 * DAY;
        p.idle_total_s = 7 * DAY;
        return p;
}

START_TEST(test_order_cut_and_stats)
{
        gc_advisor_pod p[5] = {idle_pod("e", "b", 1), idle_pod("d", "a", 3), idle_pod("c", "a", 3),
                               idle_pod("b", "b", 2), idle_pod("a", "a", 0.5)};
        gc_advisor_opts o;

        run(p, 5, NULL);
        ck_assert_uint_eq(res->n_findings, 5);
        /* By saving, then (equal savings) by subject. */
        ck_assert_str_eq(res->findings[0].pod, "c");
        ck_assert_str_eq(res->findings[1].pod, "d");
        ck_assert_str_eq(res->findings[2].pod, "b");
        ck_assert_str_eq(res->findings[3].pod, "e");
        ck_assert_str_eq(res->findings[4].pod, "a");
        ck_assert_double_eq_tol(res->monthly_savings, 9.5 * 730, 1e-6);
        ck_assert_uint_eq(res->n_stats, 2);
        ck_assert_str_eq(res->stats[0].kind, "idle_gpu");
        ck_assert_str_eq(res->stats[0].team, "a");
        ck_assert_uint_eq(res->stats[0].count, 3);
        ck_assert_double_eq_tol(res->stats[0].monthly_savings, 6.5 * 730, 1e-6);
        ck_assert_str_eq(res->stats[1].team, "b");
        ck_assert_uint_eq(res->stats[1].count, 2);
        gc_advisor_opts_default(&o);
        o.max_findings = 2;
        run(p, 5, &o);
        ck_assert_uint_eq(res->n_findings, 2);
        ck_assert_uint_eq(res->n_findings_total, 5);
        ck_assert_double_eq_tol(res->monthly_savings, 9.5 * 730, 1e-6);
        ck_assert_uint_eq(res->count_by_kind[GC_FINDING_IDLE_GPU], 5);
}
END_TEST

/* A result shared by two holders (a snapshot and a report writer) lives until both let go. */
START_TEST(test_result_shared)
{
        gc_advisor_pod p[2] = {idle_pod("a", "a", 1), idle_pod("b", "b", 2)};
        gc_advisor_result *other;

        run(p, 2, NULL);
        other = gc_advisor_result_ref(res);
        ck_assert_ptr_eq(other, res);
        res = gc_advisor_result_unref(res);
        ck_assert_ptr_null(res);
        /* Still whole for the other holder, strings included. */
        ck_assert_uint_eq(other->n_findings, 2);
        ck_assert_str_eq(other->findings[0].pod, "b");
        ck_assert_str_eq(other->stats[1].team, "b");
        ck_assert_ptr_null(gc_advisor_result_unref(other));
        ck_assert_ptr_null(gc_advisor_result_ref(NULL));
        ck_assert_ptr_null(gc_advisor_result_unref(NULL));
}
END_TEST

static cJSON *parse_json(const gc_buf *b)
{
        const char *end = NULL;
        cJSON *j = cJSON_ParseWithLengthOpts(b->data, b->len, &end, 0);

        ck_assert_msg(j != NULL, "not JSON: %s", b->data);
        ck_assert_msg(end == b->data + b->len, "trailing bytes after the JSON document");
        return j;
}

START_TEST(test_json_shape)
{
        gc_advisor_pod p[2] = {idle_pod("a", "vision", 4.10), base_pod()};
        gc_buf b, b2;
        cJSON *j, *f, *x;

        p[1].samples = 3;
        put_usage("u1", "scratch", GC_UNATTRIBUTED, GC_UNATTRIBUTED, A100, "on-demand", "n1", 1,
                  4.10, W0, W1);
        run(p, 2, NULL);
        gc_buf_init(&b, 1u << 20);
        ck_assert_int_eq(gc_advisor_json(res, "EUR", &b), 0);
        j = parse_json(&b);
        ck_assert_str_eq(cJSON_GetObjectItem(j, "currency")->valuestring, "EUR");
        x = cJSON_GetObjectItem(j, "window");
        ck_assert_str_eq(cJSON_GetObjectItem(x, "start")->valuestring, "2026-11-02T00:00:00Z");
        ck_assert_str_eq(cJSON_GetObjectItem(x, "end")->valuestring, "2026-11-09T00:00:00Z");
        x = cJSON_GetObjectItem(j, "usage");
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(x, "has_usage")));
        ck_assert_int_eq(cJSON_GetObjectItem(x, "pods_measured")->valueint, 1);
        ck_assert_int_eq(cJSON_GetObjectItem(x, "pods_insufficient")->valueint, 1);
        x = cJSON_GetObjectItem(j, "findings");
        ck_assert_int_eq(cJSON_GetArraySize(x), 2);
        f = cJSON_GetArrayItem(x, 0);
        ck_assert_str_eq(cJSON_GetObjectItem(f, "kind")->valuestring, "idle_gpu");
        ck_assert_str_eq(
            cJSON_GetObjectItem(cJSON_GetObjectItem(f, "subject"), "namespace")->valuestring, "ml");
        ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(f, "subject"), "pod")->valuestring,
                         "a");
        x = cJSON_GetObjectItem(f, "evidence");
        ck_assert_int_eq(cJSON_GetObjectItem(x, "samples")->valueint, 2016);
        ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(x, "coverage")));
        ck_assert(cJSON_IsObject(cJSON_GetObjectItem(x, "window")));
        ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(x, "idle_fraction")));
        ck_assert(cJSON_IsString(cJSON_GetObjectItem(x, "activity_source")));
        /* The price under its currency-neutral name, and its old name for one release. */
        ck_assert_double_eq(cJSON_GetObjectItem(x, "price_per_gpu_hour")->valuedouble, 4.10);
        ck_assert_double_eq(cJSON_GetObjectItem(x, "usd_per_gpu_hour")->valuedouble, 4.10);
        x = cJSON_GetObjectItem(f, "change");
        ck_assert(cJSON_IsString(cJSON_GetObjectItem(x, "summary")));
        ck_assert(cJSON_IsString(cJSON_GetObjectItem(x, "stanza")));
        ck_assert_double_eq_tol(cJSON_GetObjectItem(f, "monthly_savings")->valuedouble, MONTH_A100,
                                0.005);
        /* The unattributed finding: no samples, coverage null. */
        f = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "findings"), 1);
        ck_assert_str_eq(cJSON_GetObjectItem(f, "kind")->valuestring, "unattributed");
        ck_assert(
            cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(f, "evidence"), "coverage")));
        x = cJSON_GetObjectItem(j, "totals");
        ck_assert_int_eq(cJSON_GetObjectItem(x, "findings")->valueint, 2);
        /* every kind, share_fit among them */
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(x, "by_kind")),
                         GC_FINDING_KIND_COUNT);
        ck_assert_int_eq(
            cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(x, "by_kind"), "idle_gpu"),
                                "count")
                ->valueint,
            1);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(x, "by_team")), 2);
        /* Too few samples for ml/p; no reserved A100 price for the unattributed hours. */
        x = cJSON_GetObjectItem(j, "notes");
        ck_assert_int_eq(cJSON_GetArraySize(x), 2);
        ck_assert_ptr_nonnull(strstr(cJSON_GetArrayItem(x, 0)->valuestring, "ml/p has 3 samples"));
        cJSON_Delete(j);
        /* Deterministic: the same input renders the same bytes. */
        run(p, 2, NULL);
        gc_buf_init(&b2, 1u << 20);
        ck_assert_int_eq(gc_advisor_json(res, "EUR", &b2), 0);
        ck_assert_str_eq(b.data, b2.data);
        gc_buf_free(&b);
        gc_buf_free(&b2);
}
END_TEST

START_TEST(test_json_limit)
{
        gc_advisor_pod p = idle_pod("a", "vision", 4.10);
        gc_buf b;

        run(&p, 1, NULL);
        gc_buf_init(&b, 64);
        ck_assert_int_eq(gc_advisor_json(res, NULL, &b), -E2BIG);
        gc_buf_free(&b);
}
END_TEST

START_TEST(test_markdown)
{
        gc_advisor_pod p[2] = {idle_pod("a", "vi|sion", 4.10), base_pod()};
        gc_buf b;

        p[1].name = "big";
        p[1].model = H100;
        p[1].price_per_gpu_hour = 12.29;
        p[1].gpus_requested = 8;
        p[1].geq = 8;
        p[1].devices_seen = 8;
        p[1].devices_active = 2;
        run(p, 2, NULL);
        gc_buf_init(&b, 1u << 20);
        ck_assert_int_eq(gc_advisor_markdown(res, "USD", &b), 0);
        ck_assert_ptr_nonnull(strstr(b.data, "## Savings\n"));
        /* Money as the rest of the report writes it (pkg/report): "$53,830.20", never "USD". */
        ck_assert_ptr_nonnull(strstr(b.data, "| # | finding | subject | team | saving / month |"));
        ck_assert_ptr_nonnull(
            strstr(b.data, "| 1 | over_requested | ml/big | vision | $53,830.20 |"));
        ck_assert_ptr_nonnull(strstr(b.data, "1. **over_requested** ($53,830.20 a month): "));
        ck_assert_ptr_nonnull(strstr(b.data, "Estimated savings: **$"));
        ck_assert_ptr_null(strstr(b.data, "USD"));
        ck_assert_ptr_null(strstr(b.data, "53830.20"));
        gc_buf_free(&b);
        /* Another catalog currency: its code after the amount, as the report's tables do. */
        gc_buf_init(&b, 1u << 20);
        ck_assert_int_eq(gc_advisor_markdown(res, "EUR", &b), 0);
        ck_assert_ptr_nonnull(
            strstr(b.data, "| 1 | over_requested | ml/big | vision | 53,830.20 EUR |"));
        ck_assert_ptr_nonnull(strstr(b.data, "1. **over_requested** (53,830.20 EUR a month): "));
        ck_assert_ptr_nonnull(strstr(b.data, "| vi\\|sion |")); /* a pipe cannot end the cell */
        ck_assert_ptr_nonnull(strstr(b.data, "### Changes"));
        ck_assert_ptr_nonnull(strstr(b.data, "   ```yaml\n   resources:\n     limits:\n"
                                             "       nvidia.com/gpu: 2\n   ```\n"));
        ck_assert_ptr_nonnull(strstr(b.data, "   ```sh\n   kubectl -n ml scale deployment/srv"));
        gc_buf_free(&b);

        /* No finding, no usage data. */
        p[1] = base_pod();
        p[1].has_usage = 0;
        run(&p[1], 1, NULL);
        gc_buf_init(&b, 1u << 20);
        ck_assert_int_eq(gc_advisor_markdown(res, NULL, &b), 0);
        ck_assert_ptr_nonnull(strstr(b.data, "No savings found from 2026-11-02T00:00:00Z"));
        ck_assert_ptr_nonnull(strstr(b.data, "No usage data"));
        ck_assert_ptr_nonnull(strstr(b.data, "### Notes\n\n- no usage data: "));
        ck_assert_ptr_null(strstr(b.data, "| # |"));
        gc_buf_free(&b);
}
END_TEST

/* The Markdown table stops at 50 rows and says how many more there are; notes are capped. */
START_TEST(test_markdown_limits)
{
        gc_advisor_pod p[65];
        gc_advisor_opts o;
        char names[65][8];
        gc_buf b;

        for (int i = 0; i < 65; i++) {
                snprintf(names[i], sizeof(names[i]), "p%02d", i);
                p[i] = idle_pod(names[i], "vision", 1 + i);
                if (i >= 60)
                        p[i].samples = 1;
        }
        gc_advisor_opts_default(&o);
        o.max_notes = 2;
        run(p, 65, &o);
        ck_assert_uint_eq(res->n_findings, 60);
        ck_assert_uint_eq(res->n_notes, 2);
        ck_assert_uint_eq(res->n_notes_total, 5);
        gc_buf_init(&b, 1u << 20);
        ck_assert_int_eq(gc_advisor_markdown(res, "USD", &b), 0);
        ck_assert_ptr_nonnull(strstr(b.data, "| 50 | idle_gpu | ml/p10 |"));
        ck_assert_ptr_null(strstr(b.data, "| 51 |"));
        ck_assert_ptr_nonnull(strstr(b.data, "\n10 more finding(s) in report.json"));
        ck_assert_ptr_nonnull(strstr(b.data, "- and 3 more note(s)\n"));
        gc_buf_free(&b);
}
END_TEST

START_TEST(test_bad_input)
{
        gc_advisor_input in;
        gc_advisor_opts o;
        char err[200];

        memset(&in, 0, sizeof(in));
        in.start = W0;
        in.end = W1;
        ck_assert_int_eq(gc_advisor_run(&in, &res, err, sizeof(err)), -EINVAL); /* no ledger */
        in.ledger = led;
        in.end = W0;
        ck_assert_int_eq(gc_advisor_run(&in, &res, err, sizeof(err)), -EINVAL);
        in.end = W1;
        gc_advisor_opts_default(&o);
        o.hours_per_month = 0;
        in.opts = &o;
        ck_assert_int_eq(gc_advisor_run(&in, &res, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "hours_per_month"));
        ck_assert_ptr_null(res);
}
END_TEST

START_TEST(test_kind_names)
{
        gc_finding_kind k;

        for (int i = 0; i < GC_FINDING_KIND_COUNT; i++) {
                ck_assert_int_eq(
                    gc_finding_kind_parse(gc_finding_kind_name((gc_finding_kind)i), &k), 0);
                ck_assert_int_eq(k, i);
        }
        ck_assert_ptr_null(gc_finding_kind_name(GC_FINDING_KIND_COUNT));
        ck_assert_int_eq(gc_finding_kind_parse("idle", &k), -ENOENT);
}
END_TEST

START_TEST(test_opts_check_names_field)
{
        gc_advisor_opts o;
        char err[200] = "";

        gc_advisor_opts_default(&o);
        bad_opts[_i].spoil(&o);
        ck_assert_int_eq(gc_advisor_opts_check(&o, err, sizeof(err)), -EINVAL);
        ck_assert_msg(strncmp(err, bad_opts[_i].field, strlen(bad_opts[_i].field)) == 0,
                      "want %s, got %s", bad_opts[_i].field, err);
}
END_TEST

static Suite *advisor_suite(void)
{
        Suite *s = suite_create("advisor");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_opts_default_valid);
        tcase_add_loop_test(tc, test_opts_check_names_field, 0,
                            (int)(sizeof(bad_opts) / sizeof(bad_opts[0])));
        tcase_add_loop_test(tc, test_idle_gpu_boundaries, 0,
                            (int)(sizeof(idle_cases) / sizeof(idle_cases[0])));
        tcase_add_test(tc, test_idle_gpu_threshold_from_opts);
        tcase_add_test(tc, test_idle_gpu_monthly_rate);
        tcase_add_loop_test(tc, test_over_requested, 0,
                            (int)(sizeof(over_cases) / sizeof(over_cases[0])));
        tcase_add_loop_test(tc, test_mig_fit, 0, (int)(sizeof(mig_cases) / sizeof(mig_cases[0])));
        tcase_add_test(tc, test_mig_fit_only_whole_single_gpu);
        tcase_add_loop_test(tc, test_share_fit, 0, 4);
        tcase_add_test(tc, test_share_fit_only_where_offered);
        tcase_add_test(tc, test_mig_fit_dra_names_the_device_class);
        tcase_add_loop_test(tc, test_cheaper_class, 0,
                            (int)(sizeof(cheap_cases) / sizeof(cheap_cases[0])));
        tcase_add_test(tc, test_too_few_samples);
        tcase_add_test(tc, test_no_usage_data);
        tcase_add_test(tc, test_unattributed);
        tcase_add_test(tc, test_idle_capacity);
        tcase_add_test(tc, test_idle_capacity_names_nodes);
        tcase_add_test(tc, test_reserve_floor);
        tcase_add_test(tc, test_reserve_floor_percentile_and_short_window);
        tcase_add_test(tc, test_buy_vs_rent);
        tcase_add_test(tc, test_reserve_floor_after_fold);
        tcase_add_test(tc, test_order_cut_and_stats);
        tcase_add_test(tc, test_result_shared);
        tcase_add_test(tc, test_json_shape);
        tcase_add_test(tc, test_json_limit);
        tcase_add_test(tc, test_markdown);
        tcase_add_test(tc, test_markdown_limits);
        tcase_add_test(tc, test_bad_input);
        tcase_add_test(tc, test_kind_names);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(advisor_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
