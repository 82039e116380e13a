/* test_mirror: the cluster mirror's rules, one test each: gone pods, LISTs, estimates, blind
 * spans, restores with and without a replay, re-pricing when a node, namespace or owner changes,
 * nodes that stop being GPU nodes, ResourceSlices naming unknown nodes, DRA nodes whose devices
 * go, DeviceClasses. Each test fails when its rule is taken out of pkg/mirror. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "mirror/mirror.h"

/* 2026-11-16T00:00:00Z */
#define T0 1794787200
#define H  3600

typedef struct fixture {
        gc_config *cfg;
        gc_strpool *pool;
        gc_ledger *ledger;
        gc_accountant *acct;
        gc_owner_table *owners;
        gc_diag diag;
        gc_model_opts mo;
        gc_mirror *m;
        int relists;       /* relist_nodes calls */
        char relisted[64]; /* the last node named */
} fixture;

static void relist(void *ud, const char *node)
{
        fixture *f = ud;

        f->relists++;
        snprintf(f->relisted, sizeof(f->relisted), "%s", node);
}

static gc_mirror *mirror_over(fixture *f)
{
        gc_mirror_opts o;

        memset(&o, 0, sizeof(o));
        o.pool = f->pool;
        o.ledger = f->ledger;
        o.acct = f->acct;
        o.owners = f->owners;
        o.diag = &f->diag;
        o.relist_nodes = relist;
        o.ud = f;
        return gc_mirror_new(&o);
}

static void setup(fixture *f)
{
        gc_accountant_opts ao;
        gc_ledger_opts lo;

        memset(f, 0, sizeof(*f));
        f->cfg = gc_config_default();
        f->pool = gc_strpool_new(1 << 22);
        memset(&lo, 0, sizeof(lo));
        lo.pool = f->pool;
        f->ledger = gc_ledger_new(&lo);
        gc_config_account_opts(f->cfg, &ao);
        f->acct = gc_accountant_new(&ao, f->pool, f->ledger);
        f->owners = gc_owner_table_new(0);
        ck_assert_ptr_nonnull(f->acct);
        ck_assert_ptr_nonnull(f->owners);
        gc_accountant_set_owners(f->acct, f->owners);
        gc_config_model_opts(f->cfg, f->pool, &f->mo);
        f->mo.keep_node = gc_accountant_dra_node;
        f->mo.keep_node_ud = f->acct;
        f->m = mirror_over(f);
        ck_assert_ptr_nonnull(f->m);
}

static void teardown(fixture *f)
{
        gc_mirror_free(f->m);
        gc_accountant_free(f->acct);
        gc_owner_table_free(f->owners);
        gc_ledger_free(f->ledger);
        gc_strpool_free(f->pool);
        gc_config_free(f->cfg);
        gc_diag_clear(&f->diag);
}

/* A T4 node, 4 GPUs, priced by annotation. */
static void node(fixture *f, const char *name, const char *price)
{
        char json[1024];
        cJSON *obj;
        gc_node n;
        char err[256];

        snprintf(json, sizeof(json),
                 "{\"metadata\":{\"name\":\"%s\",\"uid\":\"u-%s\",\"creationTimestamp\":"
                 "\"2026-11-01T00:00:00Z\",\"labels\":{\"nvidia.com/gpu.product\":\"Tesla-T4\","
                 "\"node.kubernetes.io/instance-type\":\"g4dn.12xlarge\"},"
                 "\"annotations\":{\"gpu-cost.io/usd-per-gpu-hour\":\"%s\"}},"
                 "\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"4\"}}}",
                 name, name, price);
        obj = cJSON_Parse(json);
        ck_assert_ptr_nonnull(obj);
        memset(&n, 0, sizeof(n));
        ck_assert_int_eq(gc_node_from_json(obj, &f->mo, &n, err, sizeof(err)), 1);
        ck_assert_int_eq(gc_mirror_node(f->m, 0, name, &n, T0), 0);
        gc_node_release(&n);
        cJSON_Delete(obj);
}

static void ns(fixture *f, const char *name, const char *team)
{
        char json[512];
        cJSON *obj;
        gc_namespace n;
        char err[256];

        snprintf(json, sizeof(json),
                 "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"team\":\"%s\"}}}", name, team);
        obj = cJSON_Parse(json);
        ck_assert_ptr_nonnull(obj);
        ck_assert_int_eq(gc_namespace_from_json(obj, &f->mo, &n, err, sizeof(err)), 1);
        ck_assert_int_eq(gc_mirror_namespace(f->m, 0, &n), 0);
        cJSON_Delete(obj);
}

/* A pod holding one GPU on node from `bound`; finished at `fin` unless NULL; owned by a
 * ReplicaSet of that uid unless NULL. Returns the record (strings pooled). */
static gc_pod pod(fixture *f, const char *name, const char *uid, const char *nsname,
                  const char *nodename, const char *bound, const char *fin, const char *rs_uid)
{
        char json[2048], owner[256] = "", state[256];
        cJSON *obj;
        gc_pod p;
        char err[256];

        if (rs_uid)
                snprintf(owner, sizeof(owner),
                         ",\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"web-7d9f\","
                         "\"uid\":\"%s\",\"controller\":true}]",
                         rs_uid);
        if (fin)
                snprintf(state, sizeof(state), "\"terminated\":{\"finishedAt\":\"%s\"}", fin);
        else
                snprintf(state, sizeof(state), "\"running\":{\"startedAt\":\"%s\"}", bound);
        snprintf(json, sizeof(json),
                 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"%s\"%s},"
                 "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\",\"resources\":"
                 "{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]},\"status\":{\"phase\":\"%s\","
                 "\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\","
                 "\"lastTransitionTime\":\"%s\"}],\"containerStatuses\":[{\"name\":\"c\","
                 "\"state\":{%s}}]}}",
                 name, nsname, uid, owner, nodename, fin ? "Succeeded" : "Running", bound, state);
        obj = cJSON_Parse(json);
        ck_assert_ptr_nonnull(obj);
        ck_assert_msg(gc_pod_from_json(obj, &f->mo, &p, err, sizeof(err)) == 1, "%s", err);
        cJSON_Delete(obj);
        return p;
}

static void put_pod(fixture *f, const gc_pod *p)
{
        ck_assert_int_eq(gc_mirror_pod(f->m, 0, p, T0), 0);
}

static gc_usage usage(fixture *f, const char *uid)
{
        gc_usage u;

        ck_assert_int_eq(gc_ledger_get_usage(f->ledger, gc_strpool_intern0(f->pool, uid), &u), 0);
        return u;
}

static double capacity_seconds(fixture *f, int64_t start, int64_t end)
{
        gc_cost_summary s;
        gc_query q;
        double secs;

        memset(&q, 0, sizeof(q));
        memset(&s, 0, sizeof(s));
        q.start = start;
        q.end = end;
        q.now = end;
        ck_assert_int_eq(gc_ledger_query(f->ledger, &q, &s), 0);
        secs = s.capacity.gpu_seconds;
        gc_cost_summary_free(&s);
        return secs;
}

/* A pod deleted while running ends where it was seen to go, and the mirror forgets it. */
START_TEST(test_deleted_pod_ends_when_seen_gone)
{
        fixture f;
        gc_pod p;

        setup(&f);
        node(&f, "t4-a", "0.40");
        p = pod(&f, "serve", "p1", "web", "t4-a", "2026-11-16T01:00:00Z", NULL, NULL);
        put_pod(&f, &p);
        ck_assert_ptr_nonnull(gc_mirror_pod_get(f.m, gc_strpool_intern0(f.pool, "p1")));
        ck_assert_int_eq(usage(&f, "p1").end, GC_OPEN);
        ck_assert_int_eq(gc_mirror_pod(f.m, 1, &p, T0 + 5 * H), 0);
        ck_assert_int_eq(usage(&f, "p1").end, T0 + 5 * H);
        ck_assert_ptr_null(gc_mirror_pod_get(f.m, gc_strpool_intern0(f.pool, "p1")));
        ck_assert_uint_eq(gc_mirror_pods_count(f.m), 0);
        teardown(&f);
}
END_TEST

/* A pod a completed LIST does not show is gone at the LIST's end; the listed one stays. */
START_TEST(test_list_ends_pods_not_listed)
{
        fixture f;
        gc_pod a, b;

        setup(&f);
        node(&f, "t4-a", "0.40");
        a = pod(&f, "a", "pa", "web", "t4-a", "2026-11-16T01:00:00Z", NULL, NULL);
        b = pod(&f, "b", "pb", "web", "t4-a", "2026-11-16T01:00:00Z", NULL, NULL);
        put_pod(&f, &a);
        put_pod(&f, &b);
        gc_mirror_list_begin(f.m, GC_MIRROR_PODS);
        put_pod(&f, &a);
        ck_assert_int_eq(gc_mirror_list_end(f.m, GC_MIRROR_PODS, T0 + 3 * H, 0, 0), 0);
        ck_assert_int_eq(usage(&f, "pa").end, GC_OPEN);
        ck_assert_int_eq(usage(&f, "pb").end, T0 + 3 * H);
        ck_assert(!(usage(&f, "pb").flags & GC_USAGE_F_ESTIMATE));
        ck_assert_uint_eq(gc_mirror_pods_count(f.m), 1);
        teardown(&f);
}
END_TEST

/* After a watch lost events (a 410), a pod gone by the LIST ends where the watch was last whole,
 * an estimate, said in the notes; the span to the LIST is a blind span with its bound. */
START_TEST(test_lost_watch_estimates_and_names_blind_span)
{
        fixture f;
        gc_pod a;
        int64_t from, to;
        double bound;

        setup(&f);
        node(&f, "t4-a", "0.40");
        a = pod(&f, "a", "pa", "web", "t4-a", "2026-11-16T01:00:00Z", NULL, NULL);
        put_pod(&f, &a);
        gc_mirror_blind_span(f.m, &from, &to, &bound);
        ck_assert_int_eq(from, 0);
        gc_mirror_list_begin(f.m, GC_MIRROR_PODS);
        ck_assert_int_eq(gc_mirror_list_end(f.m, GC_MIRROR_PODS, T0 + 4 * H, T0 + 2 * H, 0), 0);
        ck_assert_int_eq(usage(&f, "pa").end, T0 + 2 * H);
        ck_assert(usage(&f, "pa").flags & GC_USAGE_F_ESTIMATE);
        gc_mirror_blind_span(f.m, &from, &to, &bound);
        ck_assert_int_eq(from, T0 + 2 * H);
        ck_assert_int_eq(to, T0 + 4 * H);
        /* Four GPUs free for two hours at 0.40: what unseen pods could at most have used. */
        ck_assert(fabs(bound - 4 * 2 * 0.40) < 1e-9);
        ck_assert_uint_ge(f.diag.n_total, 2); /* the estimate and the span */
        teardown(&f);
}
END_TEST

/* A restart: a fresh mirror over the restored ledger. */
static void restart(fixture *f, int64_t written_at)
{
        f->m = gc_mirror_free(f->m);
        f->m = mirror_over(f);
        ck_assert_ptr_nonnull(f->m);
        gc_mirror_restored(f->m, written_at);
}

/* Without a resume point the first LIST closes at the checkpoint what it does not show. */
START_TEST(test_restore_without_replay_closes_missing)
{
        fixture f;
        gc_pod a;

        setup(&f);
        node(&f, "t4-a", "0.40");
        a = pod(&f, "a", "pa", "web", "t4-a", "2026-11-16T01:00:00Z", NULL, NULL);
        put_pod(&f, &a);
        restart(&f, T0 + 2 * H);
        gc_mirror_list_begin(f.m, GC_MIRROR_NODES);
        node(&f, "t4-a", "0.40");
        gc_mirror_list_end(f.m, GC_MIRROR_NODES, T0 + 3 * H, 0, 0);
        gc_mirror_list_begin(f.m, GC_MIRROR_PODS);
        gc_mirror_list_end(f.m, GC_MIRROR_PODS, T0 + 3 * H, 0, 0);
        ck_assert_int_eq(usage(&f, "pa").end, T0 + 2 * H);
        ck_assert(usage(&f, "pa").flags & GC_USAGE_F_ESTIMATE);
        teardown(&f);
}
END_TEST

/* Resuming from the checkpoint, the replay brings the deletions: nothing is closed by the
 * LIST; when the resume point had expired, it is, and the span since is a blind span. */
START_TEST(test_restore_resuming_waits_for_replay)
{
        fixture f;
        gc_pod a;
        int64_t from, to;
        double bound;

        setup(&f);
        node(&f, "t4-a", "0.40");
        a = pod(&f, "a", "pa", "web", "t4-a", "2026-11-16T01:00:00Z", NULL, NULL);
        put_pod(&f, &a);
        restart(&f, T0 + 2 * H);
        gc_mirror_list_begin(f.m, GC_MIRROR_PODS);
        gc_mirror_list_end(f.m, GC_MIRROR_PODS, T0 + 3 * H, 0, GC_MIRROR_RESUMING);
        ck_assert_int_eq(usage(&f, "pa").end, GC_OPEN);
        gc_mirror_blind_span(f.m, &from, &to, &bound);
        ck_assert_int_eq(from, 0);

        restart(&f, T0 + 2 * H);
        gc_mirror_list_begin(f.m, GC_MIRROR_PODS);
        gc_mirror_list_end(f.m, GC_MIRROR_PODS, T0 + 3 * H, 0,
                           GC_MIRROR_RESUMING | GC_MIRROR_RESUME_FAILED);
        ck_assert_int_eq(usage(&f, "pa").end, T0 + 2 * H);
        gc_mirror_blind_span(f.m, &from, &to, &bound);
        ck_assert_int_eq(from, T0 + 2 * H);
        ck_assert_int_eq(to, T0 + 3 * H);
        teardown(&f);
}
END_TEST

/* A watch that resumed (an event or bookmark of the replay) leaves the restore to the replay:
 * a later LIST without the resume flag closes nothing as an estimate. */
START_TEST(test_replayed_restore_closes_nothing)
{
        fixture f;
        gc_pod a, b;

        setup(&f);
        node(&f, "t4-a", "0.40");
        a = pod(&f, "a", "pa", "web", "t4-a", "2026-11-16T01:00:00Z", NULL, NULL);
        put_pod(&f, &a);
        restart(&f, T0 + 2 * H);
        gc_mirror_replayed(f.m);
        b = pod(&f, "b", "pb", "web", "t4-a", "2026-11-16T01:00:00Z", NULL, NULL);
        gc_mirror_list_begin(f.m, GC_MIRROR_PODS);
        put_pod(&f, &b);
        gc_mirror_list_end(f.m, GC_MIRROR_PODS, T0 + 3 * H, 0, 0);
        ck_assert_int_eq(usage(&f, "pa").end, GC_OPEN);
        teardown(&f);
}
END_TEST

/* A node whose price changes after its pods were seen re-prices them. */
START_TEST(test_node_change_reprices_its_pods)
{
        fixture f;
        gc_pod a;

        setup(&f);
        node(&f, "t4-a", "0.40");
        a = pod(&f, "a", "pa", "web", "t4-a", "2026-11-16T01:00:00Z", NULL, NULL);
        put_pod(&f, &a);
        ck_assert(fabs(usage(&f, "pa").price_per_gpu_hour - 0.40) < 1e-9);
        node(&f, "t4-a", "0.90");
        ck_assert(fabs(usage(&f, "pa").price_per_gpu_hour - 0.90) < 1e-9);
        ck_assert_uint_eq(gc_mirror_nodes_count(f.m), 1);
        ck_assert_str_eq(gc_mirror_node_at(f.m, 0)->instance_type, "g4dn.12xlarge");
        ck_assert(gc_mirror_node_at(f.m, 0)->gpus == 4);
        teardown(&f);
}
END_TEST

/* A node seen before its pods' namespace changes labels: the pods are attributed again. */
START_TEST(test_namespace_change_reattributes_its_pods)
{
        fixture f;
        gc_pod a;

        setup(&f);
        node(&f, "t4-a", "0.40");
        ns(&f, "web", "blue");
        a = pod(&f, "a", "pa", "web", "t4-a", "2026-11-16T01:00:00Z", NULL, NULL);
        put_pod(&f, &a);
        ck_assert_str_eq(usage(&f, "pa").dims[GC_DIM_TEAM], "blue");
        ns(&f, "web", "green");
        ck_assert_str_eq(usage(&f, "pa").dims[GC_DIM_TEAM], "green");
        teardown(&f);
}
END_TEST

/* A node that stops being a GPU node, or that a LIST no longer shows, ends its capacity. */
START_TEST(test_node_gone_ends_capacity)
{
        fixture f;

        setup(&f);
        node(&f, "t4-a", "0.40");
        node(&f, "t4-b", "0.40");
        ck_assert_int_eq(gc_mirror_node(f.m, 0, "t4-a", NULL, T0 + H), 0);
        ck_assert_uint_eq(gc_mirror_nodes_count(f.m), 1);
        gc_mirror_list_begin(f.m, GC_MIRROR_NODES);
        gc_mirror_list_end(f.m, GC_MIRROR_NODES, T0 + 2 * H, 0, 0);
        ck_assert_uint_eq(gc_mirror_nodes_count(f.m), 0);
        /* From T0: 4 GPUs for one hour (t4-a), 4 for two (t4-b); nothing after. */
        ck_assert(fabs(capacity_seconds(&f, T0, T0 + 4 * H) - 4.0 * 3 * H) < 1e-6);
        teardown(&f);
}
END_TEST

/* An owner seen after its pods gives their intervals its workload, and only that: a finished
 * pod's interval stays closed. */
START_TEST(test_owner_arrival_sets_workload)
{
        fixture f;
        gc_pod a;
        gc_owner o;

        setup(&f);
        node(&f, "t4-a", "0.40");
        a = pod(&f, "web-7d9f-x", "pa", "web", "t4-a", "2026-11-16T01:00:00Z",
                "2026-11-16T02:00:00Z", "rs-1");
        put_pod(&f, &a);
        ck_assert_int_eq(usage(&f, "pa").end, T0 + 2 * H);
        memset(&o, 0, sizeof(o));
        o.uid = "rs-1";
        o.kind = "ReplicaSet";
        o.ns = "web";
        o.name = "web-7d9f";
        o.owner_kind = "Deployment";
        o.owner_name = "frontend";
        ck_assert_int_eq(gc_mirror_owner(f.m, GC_MIRROR_REPLICASETS, 0, &o, T0 + 3 * H), 0);
        ck_assert_str_eq(usage(&f, "pa").dims[GC_DIM_WORKLOAD], "Deployment/web/frontend");
        ck_assert_int_eq(usage(&f, "pa").end, T0 + 2 * H);
        /* Deleted: kept, marked gone, for pods deleted after it. */
        ck_assert_int_eq(gc_mirror_owner(f.m, GC_MIRROR_REPLICASETS, 1, &o, T0 + 4 * H), 0);
        ck_assert_ptr_nonnull(gc_owner_get(f.owners, "rs-1"));
        /* ... until GC_MIRROR_OWNER_KEEP_S later, at the next owner event. */
        o.uid = "rs-2";
        ck_assert_int_eq(gc_mirror_owner(f.m, GC_MIRROR_REPLICASETS, 0, &o,
                                         T0 + 4 * H + GC_MIRROR_OWNER_KEEP_S + 60),
                         0);
        ck_assert_ptr_null(gc_owner_get(f.owners, "rs-1"));
        teardown(&f);
}
END_TEST

/* A ResourceSlice that names a node the GPU-node table does not hold asks for the nodes to be
 * listed again, once per node. */
START_TEST(test_slice_on_unknown_node_relists_once)
{
        fixture f;
        gc_dra_device d;

        setup(&f);
        memset(&d, 0, sizeof(d));
        d.driver = gc_strpool_intern0(f.pool, "gpu.nvidia.com");
        d.pool = gc_strpool_intern0(f.pool, "dra-a");
        d.name = gc_strpool_intern0(f.pool, "gpu-0");
        d.node = gc_strpool_intern0(f.pool, "dra-a");
        d.model = gc_strpool_intern0(f.pool, "NVIDIA-H100-80GB-HBM3");
        d.geq = 1;
        ck_assert_int_eq(gc_mirror_slice(f.m, 0, "dra-a-slice", &d, 1, T0), 0);
        ck_assert_int_eq(f.relists, 1);
        ck_assert_str_eq(f.relisted, "dra-a");
        ck_assert_int_eq(gc_mirror_slice(f.m, 0, "dra-a-slice", &d, 1, T0 + 60), 0);
        ck_assert_int_eq(f.relists, 1);
        teardown(&f);
}
END_TEST

/* The advisor's DRA classes: NVIDIA's, the first by name of each type; a class deleted goes. */
START_TEST(test_device_classes)
{
        fixture f;
        gc_device_class a, b, other;
        const char *gpu, *mig;

        setup(&f);
        memset(&a, 0, sizeof(a));
        a.name = gc_strpool_intern0(f.pool, "gpu.nvidia.com");
        a.driver = GC_DRA_NVIDIA_DRIVER;
        a.device_type = "gpu";
        b = a;
        b.name = gc_strpool_intern0(f.pool, "a-gpu.nvidia.com");
        other = a;
        other.name = gc_strpool_intern0(f.pool, "mig.nvidia.com");
        other.device_type = "mig";
        ck_assert_int_eq(gc_mirror_device_class(f.m, 0, a.name, &a), 0);
        ck_assert_int_eq(gc_mirror_device_class(f.m, 0, b.name, &b), 0);
        ck_assert_int_eq(gc_mirror_device_class(f.m, 0, other.name, &other), 0);
        gc_mirror_dra_classes(f.m, &gpu, &mig);
        ck_assert_str_eq(gpu, "a-gpu.nvidia.com");
        ck_assert_str_eq(mig, "mig.nvidia.com");
        ck_assert_int_eq(gc_mirror_device_class(f.m, 1, b.name, &b), 0);
        ck_assert_int_eq(gc_mirror_device_class(f.m, 0, other.name, NULL), 0);
        gc_mirror_dra_classes(f.m, &gpu, &mig);
        ck_assert_str_eq(gpu, "gpu.nvidia.com");
        ck_assert_ptr_null(mig);
        teardown(&f);
}
END_TEST

/* A ResourceSlice of node n1 publishing GPU devices (NVIDIA's DRA driver), or none. */
static void dra_slice(fixture *f, int with_gpu, int64_t now)
{
        static const char gpu[] =
            "{\"name\":\"gpu-0\",\"attributes\":{\"type\":{\"string\":\"gpu\"},\"uuid\":"
            "{\"string\":\"GPU-a\"},\"productName\":{\"string\":\"NVIDIA H100 80GB HBM3\"}},"
            "\"capacity\":{\"memory\":{\"value\":\"81559Mi\"}}}";
        char json[2048];
        gc_dra_device_vec v;
        cJSON *obj;
        char err[256];

        snprintf(json, sizeof(json),
                 "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\","
                 "\"metadata\":{\"name\":\"n1-s\"},\"spec\":{\"driver\":\"gpu.nvidia.com\","
                 "\"nodeName\":\"n1\",\"pool\":{\"name\":\"n1\",\"generation\":1,"
                 "\"resourceSliceCount\":1},\"devices\":[%s]}}",
                 with_gpu ? gpu : "");
        obj = cJSON_Parse(json);
        ck_assert_ptr_nonnull(obj);
        memset(&v, 0, sizeof(v));
        ck_assert_msg(gc_slice_from_json(obj, &f->mo, &v, err, sizeof(err)) >= 0, "%s", err);
        ck_assert_int_eq(gc_mirror_slice(f->m, 0, "n1-s", v.v, v.n, now), 0);
        free(v.v);
        cJSON_Delete(obj);
}

/* A DRA node (no GPU resource: kept for its slices' devices) whose last GPU devices leave its
 * slice ends its capacity then, and a slice that brings some back lists the nodes again. */
START_TEST(test_dra_node_without_devices_ends_capacity)
{
        static const char n1[] =
            "{\"metadata\":{\"name\":\"n1\",\"creationTimestamp\":\"2026-11-01T00:00:00Z\"},"
            "\"status\":{\"allocatable\":{\"cpu\":\"8\"}}}";
        fixture f;
        cJSON *obj;
        gc_node n;
        char err[256];

        setup(&f);
        dra_slice(&f, 1, T0);
        ck_assert_int_eq(f.relists, 1); /* n1 is not known as a GPU node yet */
        obj = cJSON_Parse(n1);
        memset(&n, 0, sizeof(n));
        ck_assert_int_eq(gc_node_from_json(obj, &f.mo, &n, err, sizeof(err)), 1);
        ck_assert_int_eq(gc_mirror_node(f.m, 0, "n1", &n, T0), 0);
        gc_node_release(&n);
        cJSON_Delete(obj);
        ck_assert_uint_eq(gc_mirror_nodes_count(f.m), 1);
        dra_slice(&f, 0, T0 + 2 * H);
        ck_assert_uint_eq(gc_mirror_nodes_count(f.m), 0);
        /* One GPU from T0 to T0 + 2 h, none after. */
        ck_assert(fabs(capacity_seconds(&f, T0, T0 + 4 * H) - 2.0 * H) < 1e-6);
        dra_slice(&f, 1, T0 + 3 * H);
        ck_assert_int_eq(f.relists, 2);
        teardown(&f);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("mirror");
        TCase *tc = tcase_create("mirror");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_deleted_pod_ends_when_seen_gone);
        tcase_add_test(tc, test_list_ends_pods_not_listed);
        tcase_add_test(tc, test_lost_watch_estimates_and_names_blind_span);
        tcase_add_test(tc, test_restore_without_replay_closes_missing);
        tcase_add_test(tc, test_restore_resuming_waits_for_replay);
        tcase_add_test(tc, test_replayed_restore_closes_nothing);
        tcase_add_test(tc, test_node_change_reprices_its_pods);
        tcase_add_test(tc, test_namespace_change_reattributes_its_pods);
        tcase_add_test(tc, test_node_gone_ends_capacity);
        tcase_add_test(tc, test_owner_arrival_sets_workload);
        tcase_add_test(tc, test_slice_on_unknown_node_relists_once);
        tcase_add_test(tc, test_device_classes);
        tcase_add_test(tc, test_dra_node_without_devices_ends_capacity);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
