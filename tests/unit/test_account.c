/* test_account: pods and nodes decoded, priced, attributed and queried, with figures by hand. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "account/account.h"
#include "config/config.h"

/* 2026-11-16T00:00:00Z */
#define T0 1794787200

static const char nodes_json[] =
    "{\"kind\":\"NodeList\",\"items\":["
    /* an H100 node, MIG mixed: 7 x 1g.10gb and 1 x 3g.40gb allocatable, Karpenter spot */
    "{\"metadata\":{\"name\":\"h100-a\",\"uid\":\"n1\",\"creationTimestamp\":"
    "\"2026-11-01T00:00:00Z\",\"labels\":{\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\","
    "\"nvidia.com/mig.strategy\":\"mixed\",\"karpenter.sh/capacity-type\":\"spot\"}},"
    "\"status\":{\"allocatable\":{\"nvidia.com/mig-1g.10gb\":\"4\","
    "\"nvidia.com/mig-3g.40gb\":\"1\",\"cpu\":\"96\"}}},"
    /* a T4 node, time-sliced 4 GPUs x 4 replicas, priced by annotation */
    "{\"metadata\":{\"name\":\"t4-a\",\"uid\":\"n2\",\"creationTimestamp\":"
    "\"2026-11-01T00:00:00Z\",\"labels\":{\"nvidia.com/gpu.product\":\"Tesla-T4-SHARED\","
    "\"nvidia.com/gpu.replicas\":\"4\",\"nvidia.com/gpu.count\":\"4\"},"
    "\"annotations\":{\"gpu-cost.io/usd-per-gpu-hour\":\"0.40\"}},"
    "\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"16\"}}}]}";

static const char ns_json[] = "{\"kind\":\"NamespaceList\",\"items\":["
                              "{\"metadata\":{\"name\":\"ml\",\"labels\":{\"team\":\"research\"}}},"
                              "{\"metadata\":{\"name\":\"misc\"}}]}";

#define POD(name, uid, ns, labels, node, phase, res, count, bound, fin)                            \
        "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"" ns "\",\"uid\":\"" uid             \
        "\",\"creationTimestamp\":\"2026-11-16T00:00:00Z\",\"labels\":{" labels "}},"              \
        "\"spec\":{\"nodeName\":\"" node "\",\"containers\":[{\"name\":\"c\",\"resources\":"       \
        "{\"limits\":{\"" res "\":\"" count "\"}}}]},\"status\":{\"phase\":\"" phase "\","         \
        "\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\","                          \
        "\"lastTransitionTime\":\"" bound "\"}],\"containerStatuses\":[{\"name\":\"c\","           \
        "\"state\":{" fin "}}]}}"

static const char pods_json[] = "{\"kind\":\"PodList\",\"items\":["
    /* 3g.40gb (4/8 of an H100) for 2 h, finished: research via namespace label */
    POD("train", "p1", "ml", "\"project\":\"llm\"", "h100-a", "Succeeded", "nvidia.com/mig-3g.40gb",
        "1", "2026-11-16T01:00:00Z",
        "\"terminated\":{\"startedAt\":\"2026-11-16T01:00:05Z\","
        "\"finishedAt\":\"2026-11-16T03:00:00Z\"}") ","
    /* two time-sliced units (2/4 of a T4), running since 10:00 */
    POD("serve", "p2", "misc", "\"team\":\"web\",\"project\":\"chat\"", "t4-a", "Running",
        "nvidia.com/gpu", "2", "2026-11-16T10:00:00Z",
        "\"running\":{\"startedAt\":\"2026-11-16T10:00:30Z\"}") ","
    /* a 30-second job on an unknown node: priced at the catalog fallback, an estimate */
    POD("blip", "p3", "misc", "", "gone-node", "Succeeded", "nvidia.com/gpu", "1",
        "2026-11-16T05:00:00Z",
        "\"terminated\":{\"finishedAt\":\"2026-11-16T05:00:30Z\"}") ","
                                                                    /* not bound: costs nothing */
                                                                    "{\"metadata\":{\"name\":"
                                                                    "\"wait\",\"namespace\":\"ml\","
                                                                    "\"uid\":\"p4\"},"
                                                                    "\"spec\":{\"containers\":[{"
                                                                    "\"name\":\"c\",\"resources\":{"
                                                                    "\"limits\":"
                                                                    "{\"nvidia.com/"
                                                                    "gpu\":\"8\"}}}]},\"status\":{"
                                                                    "\"phase\":\"Pending\"}}"
                                                                    "]}";

typedef struct fixture {
        gc_config *cfg;
        gc_strpool *pool;
        gc_ledger *ledger;
        gc_accountant *acct;
        gc_pod_vec pods;
        gc_node_vec nodes;
        gc_ns_vec nss;
        gc_diag diag;
} fixture;

static void load(fixture *f)
{
        gc_accountant_opts ao;
        gc_ledger_opts lo;
        gc_model_opts mo;
        gc_decode_stats st;
        char err[256];

        memset(f, 0, sizeof(*f));
        f->cfg = gc_config_default();
        f->pool = gc_strpool_new(1 << 20);
        memset(&lo, 0, sizeof(lo));
        lo.pool = f->pool;
        f->ledger = gc_ledger_new(&lo);
        gc_config_account_opts(f->cfg, &ao);
        f->acct = gc_accountant_new(&ao, f->pool, f->ledger);
        ck_assert_ptr_nonnull(f->acct);
        f->pods.limit = f->nodes.limit = f->nss.limit = 100;
        gc_config_model_opts(f->cfg, f->pool, &mo);
        ck_assert_int_eq(gc_decode_nodes(nodes_json, strlen(nodes_json), &mo, &f->nodes, &st,
                                         &f->diag, err, sizeof(err)),
                         0);
        ck_assert_int_eq(gc_decode_namespaces(ns_json, strlen(ns_json), &mo, &f->nss, &st, &f->diag,
                                              err, sizeof(err)),
                         0);
        ck_assert_msg(gc_decode_pods(pods_json, strlen(pods_json), &mo, &f->pods, &st, &f->diag,
                                     err, sizeof(err)) == 0,
                      "%s", err);
        ck_assert_uint_eq(f->nodes.n, 2);
        ck_assert_uint_eq(f->pods.n, 4);
        for (size_t i = 0; i < f->nodes.n; i++)
                ck_assert_int_eq(gc_account_node(f->acct, &f->nodes.v[i], &f->diag), 0);
        for (size_t i = 0; i < f->nss.n; i++)
                ck_assert_int_eq(gc_account_namespace(f->acct, &f->nss.v[i]), 0);
}

static void unload(fixture *f)
{
        gc_accountant_free(f->acct);
        gc_ledger_free(f->ledger);
        gc_pod_vec_free(&f->pods);
        gc_node_vec_free(&f->nodes);
        gc_ns_vec_free(&f->nss);
        gc_strpool_free(f->pool);
        gc_config_free(f->cfg);
        gc_diag_clear(&f->diag);
}

static const gc_cost_row *row_by(const gc_cost_summary *s, gc_dim dim, const char *key)
{
        for (size_t i = 0; i < s->n_rows; i++)
                if (s->rows[i].keys[dim] && strcmp(s->rows[i].keys[dim], key) == 0)
                        return &s->rows[i];
        return NULL;
}

static const gc_cost_row *row_for(const gc_cost_summary *s, const char *team)
{
        return row_by(s, GC_DIM_TEAM, team);
}

START_TEST(test_day)
{
        const gc_price_entry *spot = NULL, *fallback = NULL;
        const gc_node_class *h100;
        const gc_cost_row *r;
        gc_cost_summary s;
        gc_query q;
        fixture f;
        int held[4] = {-1, -1, -1, -1};

        load(&f);
        ck_assert_uint_eq(f.pods.n, 4);
        for (size_t i = 0; i < f.pods.n; i++)
                held[i] = gc_account_pod(f.acct, &f.pods.v[i], &f.diag);
        ck_assert_int_eq(held[0], 1);
        ck_assert_int_eq(held[1], 1);
        ck_assert_int_eq(held[2], 1);
        ck_assert_int_eq(held[3], 0); /* pending, unbound */

        h100 = gc_accountant_node_class(f.acct, "h100-a");
        ck_assert_ptr_nonnull(h100);
        ck_assert_str_eq(h100->capacity_type, "spot");
        ck_assert_int_eq(
            gc_catalog_lookup(f.cfg->catalog, "NVIDIA-H100-80GB-HBM3", "spot", NULL, &spot), 0);
        ck_assert_double_eq_tol(h100->price_per_gpu_hour, spot->price_per_gpu_hour, 1e-12);
        ck_assert_int_eq(gc_catalog_lookup(f.cfg->catalog, "unknown", "on-demand", NULL, &fallback),
                         0);

        memset(&q, 0, sizeof(q));
        q.start = T0;
        q.end = T0 + 86400;
        q.now = T0 + 12 * 3600; /* the running pod has run 2 h by now */
        q.by[0] = GC_DIM_TEAM;
        q.n_by = 1;
        ck_assert_int_eq(gc_ledger_query(f.ledger, &q, &s), 0);

        /* research: 0.5 GPU x 2 h = 1 GPU-hour = 3600 GPU-seconds at the H100 spot price */
        r = row_for(&s, "research");
        ck_assert_ptr_nonnull(r);
        ck_assert_double_eq_tol(r->gpu_seconds, 3600.0, 1e-9);
        ck_assert_double_eq_tol(r->cost, spot->price_per_gpu_hour, 1e-9);
        /* web: 2 of 16 T4 units = 0.5 GPU x 2 h = 1 GPU-hour at the annotated 0.40 */
        r = row_for(&s, "web");
        ck_assert_ptr_nonnull(r);
        ck_assert_double_eq_tol(r->gpu_seconds, 3600.0, 1e-9);
        ck_assert_double_eq_tol(r->cost, 0.40, 1e-9);
        /* the 30-second job: 30 GPU-seconds at the fallback price, unattributed, an estimate */
        r = row_for(&s, GC_UNATTRIBUTED);
        ck_assert_ptr_nonnull(r);
        ck_assert_double_eq_tol(r->gpu_seconds, 30.0, 1e-9);
        ck_assert_double_eq_tol(r->cost, 30.0 / 3600.0 * fallback->price_per_gpu_hour, 1e-9);
        ck_assert_uint_eq(r->estimates, 1);
        ck_assert_double_eq_tol(s.total.gpu_seconds, 7230.0, 1e-9);

        /* Capacity: H100 4/7 + 4/8 GPU, T4 4 GPU, each for the 12 h up to now. */
        ck_assert_double_eq_tol(s.capacity.gpu_seconds, (4.0 / 7.0 + 0.5 + 4.0) * 12 * 3600, 1e-6);
        gc_cost_summary_free(&s);
        ck_assert_uint_ge(f.diag.n_total, 1); /* the unknown node was noted */
        unload(&f);
}
END_TEST

/* The workload dimension: bare pods name themselves; an owner table resolves a Job's CronJob. */
START_TEST(test_workload)
{
        gc_owner_table *t = gc_owner_table_new(0);
        gc_owner job = {"j1", "Job", "ml", "nightly-1", "CronJob", "nightly"};
        const gc_cost_row *r;
        gc_cost_summary s;
        gc_query q;
        gc_pod p;
        fixture f;

        load(&f);
        ck_assert_int_eq(gc_owner_put(t, &job, 0), 0);
        gc_accountant_set_owners(f.acct, t);
        for (size_t i = 0; i < f.pods.n; i++)
                gc_account_pod(f.acct, &f.pods.v[i], &f.diag);
        p = f.pods.v[0]; /* "train", again, now a pod of the CronJob's Job */
        p.controller_kind = "Job";
        p.controller = "nightly-1";
        p.controller_uid = "j1";
        ck_assert_int_eq(gc_account_pod(f.acct, &p, &f.diag), 1);

        memset(&q, 0, sizeof(q));
        q.start = T0;
        q.end = T0 + 86400;
        q.now = T0 + 12 * 3600;
        q.by[0] = GC_DIM_WORKLOAD;
        q.n_by = 1;
        ck_assert_int_eq(gc_ledger_query(f.ledger, &q, &s), 0);
        r = row_by(&s, GC_DIM_WORKLOAD, "CronJob/ml/nightly");
        ck_assert_ptr_nonnull(r);
        ck_assert_double_eq_tol(r->gpu_seconds, 3600.0, 1e-9);
        ck_assert_ptr_null(
            row_by(&s, GC_DIM_WORKLOAD, "Pod/ml/train")); /* replaced by the same uid */
        r = row_by(&s, GC_DIM_WORKLOAD, "Pod/misc/serve");
        ck_assert_ptr_nonnull(r);
        ck_assert_double_eq_tol(r->gpu_seconds, 3600.0, 1e-9);
        ck_assert_ptr_nonnull(row_by(&s, GC_DIM_WORKLOAD, "Pod/misc/blip"));
        gc_cost_summary_free(&s);
        gc_accountant_set_owners(f.acct, NULL);
        gc_owner_table_free(t);
        unload(&f);
}
END_TEST

/*
 * A restart from the checkpoint: a new accountant on the restored ledger knows only the nodes and
 * owners listed now. The node the pod ran on and its Job (of a CronJob) went while it was away;
 * the pod's deletion, replayed by the resumed watch, keeps the price, GPU-equivalents, model,
 * capacity type and workload its interval had, and only its end may change.
 */
START_TEST(test_restart_keeps_gone_node_and_owner)
{
        gc_owner_table *t = gc_owner_table_new(0), *t2 = gc_owner_table_new(0);
        gc_owner job = {"j1", "Job", "ml", "nightly-1", "CronJob", "nightly"};
        gc_cost_summary s1, s2;
        gc_accountant_opts ao;
        gc_accountant *b;
        const gc_cost_row *r;
        gc_query q;
        gc_pod p;
        fixture f;

        load(&f);
        ck_assert_int_eq(gc_owner_put(t, &job, 0), 0);
        gc_accountant_set_owners(f.acct, t);
        p = f.pods.v[0]; /* "train": 3g.40gb on h100-a, 01:00 to 03:00 */
        p.controller_kind = "Job";
        p.controller = "nightly-1";
        p.controller_uid = "j1";
        ck_assert_int_eq(gc_account_pod(f.acct, &p, &f.diag), 1);
        memset(&q, 0, sizeof(q));
        q.start = T0;
        q.end = T0 + 86400;
        q.now = T0 + 86400;
        q.by[0] = GC_DIM_WORKLOAD;
        q.by[1] = GC_DIM_MODEL;
        q.by[2] = GC_DIM_CAPACITY_TYPE;
        q.n_by = 3;
        ck_assert_int_eq(gc_ledger_query(f.ledger, &q, &s1), 0);
        r = row_by(&s1, GC_DIM_WORKLOAD, "CronJob/ml/nightly");
        ck_assert_ptr_nonnull(r);
        ck_assert_double_eq_tol(r->gpu_seconds, 0.5 * 2 * 3600, 1e-9);
        ck_assert_uint_eq(r->estimates, 0);

        /* restarted: only the T4 node and an empty owner table (nothing lists the Job now) */
        gc_config_account_opts(f.cfg, &ao);
        b = gc_accountant_new(&ao, f.pool, f.ledger);
        ck_assert_ptr_nonnull(b);
        gc_accountant_set_owners(b, t2);
        ck_assert_int_eq(gc_account_node(b, &f.nodes.v[1], &f.diag), 0);
        for (size_t i = 0; i < f.nss.n; i++)
                ck_assert_int_eq(gc_account_namespace(b, &f.nss.v[i]), 0);
        ck_assert_int_eq(gc_account_pod_gone(b, &p, T0 + 12 * 3600, 0, &f.diag), 1);
        ck_assert_int_eq(gc_ledger_query(f.ledger, &q, &s2), 0);
        ck_assert_uint_eq(s1.n_rows, 1);
        ck_assert_uint_eq(s2.n_rows, 1);
        r = row_by(&s2, GC_DIM_WORKLOAD, "CronJob/ml/nightly");
        ck_assert_ptr_nonnull(r);
        ck_assert_ptr_null(row_by(&s2, GC_DIM_WORKLOAD, "Job/ml/nightly-1"));
        ck_assert_str_eq(r->keys[GC_DIM_MODEL], "NVIDIA-H100-80GB-HBM3");
        ck_assert_str_eq(r->keys[GC_DIM_CAPACITY_TYPE], "spot");
        ck_assert_double_eq_tol(r->gpu_seconds, 0.5 * 2 * 3600, 1e-9);
        ck_assert_double_eq_tol(r->cost, s1.rows[0].cost, 1e-9);
        ck_assert_uint_eq(r->estimates, 0);
        gc_cost_summary_free(&s1);
        gc_cost_summary_free(&s2);

        /* a Job listed again after the restart resolves afresh */
        ck_assert_int_eq(gc_owner_put(t2, &job, 0), 0);
        job.owner_name = "weekly";
        ck_assert_int_eq(gc_owner_put(t2, &job, 0), 0);
        ck_assert_int_eq(gc_account_pod_gone(b, &p, T0 + 12 * 3600, 0, &f.diag), 1);
        ck_assert_int_eq(gc_ledger_query(f.ledger, &q, &s2), 0);
        ck_assert_ptr_nonnull(row_by(&s2, GC_DIM_WORKLOAD, "CronJob/ml/weekly"));
        gc_cost_summary_free(&s2);

        gc_accountant_free(b);
        gc_accountant_set_owners(f.acct, NULL);
        gc_owner_table_free(t);
        gc_owner_table_free(t2);
        unload(&f);
}
END_TEST

START_TEST(test_gone)
{
        gc_cost_summary s;
        gc_query q;
        gc_pod serve;
        fixture f;
        const gc_cost_row *r;

        load(&f);
        serve = f.pods.v[1]; /* running since 10:00, 0.5 GPU at 0.40 */
        ck_assert_str_eq(serve.name, "serve");
        memset(&q, 0, sizeof(q));
        q.start = T0;
        q.end = T0 + 86400;
        q.now = T0 + 86400;
        q.by[0] = GC_DIM_TEAM;
        q.n_by = 1;

        /* deletionTimestamp 10:30, seen gone at 11:00: ends 10:30 */
        serve.deleting_at = T0 + 10 * 3600 + 1800;
        ck_assert_int_eq(gc_account_pod_gone(f.acct, &serve, T0 + 11 * 3600, 0, NULL), 1);
        ck_assert_int_eq(gc_ledger_query(f.ledger, &q, &s), 0);
        r = row_for(&s, "web");
        ck_assert_double_eq_tol(r->gpu_seconds, 0.5 * 1800, 1e-9);
        ck_assert_uint_eq(r->estimates, 0);
        gc_cost_summary_free(&s);

        /* every container stopped at 10:10: that wins over the deletion time */
        serve.terminated_at = T0 + 10 * 3600 + 600;
        ck_assert_int_eq(gc_account_pod_gone(f.acct, &serve, T0 + 11 * 3600, 0, NULL), 1);
        ck_assert_int_eq(gc_ledger_query(f.ledger, &q, &s), 0);
        ck_assert_double_eq_tol(row_for(&s, "web")->gpu_seconds, 0.5 * 600, 1e-9);
        gc_cost_summary_free(&s);

        /* deletionTimestamp in the future (graceful deletion not over), no stopped containers:
           the moment it was seen gone, flagged as an estimate */
        serve.terminated_at = 0;
        serve.deleting_at = T0 + 12 * 3600;
        ck_assert_int_eq(gc_account_pod_gone(f.acct, &serve, T0 + 11 * 3600, 1, NULL), 1);
        ck_assert_int_eq(gc_ledger_query(f.ledger, &q, &s), 0);
        r = row_for(&s, "web");
        ck_assert_double_eq_tol(r->gpu_seconds, 0.5 * 3600, 1e-9);
        ck_assert_uint_eq(r->estimates, 1);
        gc_cost_summary_free(&s);

        /* the T4 node goes at 12:00: capacity 4 GPUs x 12 h; the H100 stays all day */
        ck_assert_int_eq(gc_account_node_gone(f.acct, "t4-a", T0 + 12 * 3600), 0);
        ck_assert_int_eq(gc_account_node_gone(f.acct, "nope", T0), -ENOENT);
        ck_assert_int_eq(gc_ledger_query(f.ledger, &q, &s), 0);
        ck_assert_double_eq_tol(s.capacity.gpu_seconds, 4.0 * 12 * 3600 + (4.0 / 7.0 + 0.5) * 86400,
                                1e-6);
        gc_cost_summary_free(&s);
        unload(&f);
}
END_TEST

/*
 * Measured use of the time-sliced T4 shared by "serve" (found by uid) and a second pod of the
 * same size (found by namespace/name, as HAMi names pods), 11:00-12:00: use 0.75 and 0.25 of a
 * pot of 2 x 0.5 GPU x $0.40 = $0.40: 0.30 and 0.10. A holder not found (a pod gone, one never
 * seen) stays on allocation and is not counted; once gone, a pod is not found by name.
 */
START_TEST(test_split_by_use)
{
        gc_cost_summary s;
        gc_query q;
        gc_pod serve, other;
        fixture f;
        gc_account_use h[3] = {{"misc", "serve", "p2", 0.75},
                               {"misc", "serve-2", NULL, 0.25},
                               {"misc", "never", NULL, 0.9}};

        load(&f);
        serve = f.pods.v[1];
        ck_assert_int_eq(gc_account_pod(f.acct, &serve, NULL), 1);
        other = serve;
        other.uid = "p9";
        other.name = "serve-2";
        ck_assert_int_eq(gc_account_pod(f.acct, &other, NULL), 1);
        ck_assert_int_eq(gc_account_split_by_use(f.acct, T0 + 11 * 3600, T0 + 12 * 3600, h, 3), 2);
        memset(&q, 0, sizeof(q));
        q.start = T0 + 11 * 3600;
        q.end = T0 + 12 * 3600;
        q.now = q.end;
        q.by[0] = GC_DIM_POD;
        q.n_by = 1;
        q.basis = GC_BASIS_USAGE;
        ck_assert_int_eq(gc_ledger_query(f.ledger, &q, &s), 0);
        ck_assert_double_eq_tol(row_by(&s, GC_DIM_POD, "serve")->cost, 0.30, 1e-12);
        ck_assert_double_eq_tol(row_by(&s, GC_DIM_POD, "serve-2")->cost, 0.10, 1e-12);
        ck_assert_double_eq_tol(s.total.cost, 0.40, 1e-12);
        gc_cost_summary_free(&s);
        /* Gone: no longer found by name (a pod of the same name may follow it). */
        other.deleting_at = T0 + 13 * 3600;
        ck_assert_int_eq(gc_account_pod_gone(f.acct, &other, T0 + 13 * 3600, 0, NULL), 1);
        ck_assert_int_eq(gc_account_split_by_use(f.acct, T0 + 12 * 3600, T0 + 13 * 3600, h, 2), 1);
        h[0].use = NAN;
        ck_assert_int_eq(gc_account_split_by_use(f.acct, T0, T0 + 60, h, 1), -EINVAL);
        unload(&f);
}
END_TEST

START_TEST(test_interval)
{
        gc_pod p;
        int64_t s, e;

        memset(&p, 0, sizeof(p));
        ck_assert_int_lt(gc_pod_interval(&p, &s, &e), 0); /* unbound */
        p.node = "n";
        p.bound_at = 100;
        p.phase = GC_PHASE_RUNNING;
        ck_assert_int_eq(gc_pod_interval(&p, &s, &e), 0);
        ck_assert_int_eq(s, 100);
        ck_assert(e == GC_OPEN);
        p.phase = GC_PHASE_SUCCEEDED;
        p.finished_at = 130;
        ck_assert_int_eq(gc_pod_interval(&p, &s, &e), 0);
        ck_assert_int_eq(e, 130);
        p.finished_at = 50; /* finished before bound: clamped, never negative */
        ck_assert_int_eq(gc_pod_interval(&p, &s, &e), 0);
        ck_assert_int_eq(e, 100);
        p.finished_at = 0;
        p.deleting_at = 160;
        ck_assert_int_eq(gc_pod_interval(&p, &s, &e), 0);
        ck_assert_int_eq(e, 160);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("account");
        TCase *tc = tcase_create("account");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_day);
        tcase_add_test(tc, test_workload);
        tcase_add_test(tc, test_gone);
        tcase_add_test(tc, test_restart_keeps_gone_node_and_owner);
        tcase_add_test(tc, test_interval);
        tcase_add_test(tc, test_split_by_use);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
