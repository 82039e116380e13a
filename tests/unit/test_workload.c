/* test_workload: the owner table, the ReplicaSet/Job decoder and every workload rule. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "util/util.h"

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

typedef struct env {
        gc_strpool *pool;
        gc_res_table *res;
        gc_model_opts o;
        gc_owner_table *t;
} env;

static void env_init(env *e)
{
        memset(e, 0, sizeof(*e));
        e->pool = gc_strpool_new(1u << 24);
        e->res = gc_res_table_new_default();
        e->t = gc_owner_table_new(0);
        ck_assert_ptr_nonnull(e->pool);
        ck_assert_ptr_nonnull(e->res);
        ck_assert_ptr_nonnull(e->t);
        e->o.pool = e->pool;
        e->o.res = e->res;
}

static void env_done(env *e)
{
        gc_owner_table_free(e->t);
        gc_res_table_free(e->res);
        gc_strpool_free(e->pool);
}

/* A GPU pod in namespace ml with the given labels and ownerReferences (JSON fragments). */
static void pod(env *e, const char *labels, const char *owners, gc_pod *ret)
{
        char buf[4096], err[256];
        cJSON *obj;
        char *js;
        int r;

        snprintf(buf, sizeof(buf),
                 "{'metadata':{'name':'p-1','namespace':'ml','uid':'pod-uid',"
                 "'labels':{%s},'ownerReferences':[%s]},"
                 "'spec':{'nodeName':'n1','containers':[{'name':'c','resources':"
                 "{'limits':{'nvidia.com/gpu':'1'}}}]}}",
                 labels, owners);
        js = J(buf);
        obj = cJSON_Parse(js);
        ck_assert_ptr_nonnull(obj);
        r = gc_pod_from_json(obj, &e->o, ret, err, sizeof(err));
        ck_assert_msg(r == 1, "pod: %d %s", r, err);
        cJSON_Delete(obj);
        free(js);
}

static void put(env *e, const char *uid, const char *kind, const char *name, const char *okind,
                const char *oname)
{
        gc_owner o = {uid, kind, "ml", name, okind, oname};

        ck_assert_int_eq(gc_owner_put(e->t, &o, 0), 0);
}

#define CTRL(kind, name, uid)                                                                      \
        "{'apiVersion':'v1','kind':'" kind "','name':'" name "','uid':'" uid "','controller':"     \
        "true}"

static const char *wl(env *e, const gc_pod *p)
{
        const char *s = gc_workload_of(p, e->t, e->pool);

        ck_assert_ptr_nonnull(s);
        return s;
}

START_TEST(bare_pod)
{
        env e;
        gc_pod p;

        env_init(&e);
        pod(&e, "", "", &p);
        ck_assert_str_eq(wl(&e, &p), "Pod/ml/p-1");
        /* An ownerReference that is not the controller does not count. */
        pod(&e, "", "{'kind':'ConfigMap','name':'x','uid':'u'}", &p);
        ck_assert_str_eq(wl(&e, &p), "Pod/ml/p-1");
        ck_assert_ptr_null(p.controller_uid);
        env_done(&e);
}
END_TEST

START_TEST(replicaset_rules)
{
        env e;
        gc_pod p;

        env_init(&e);
        /* In the table, with a Deployment over it. */
        put(&e, "rs-1", "ReplicaSet", "summarizer-7d9f8", "Deployment", "summarizer");
        pod(&e, "'pod-template-hash':'7d9f8'", CTRL("ReplicaSet", "summarizer-7d9f8", "rs-1"), &p);
        ck_assert_str_eq(p.controller_uid, "rs-1");
        ck_assert_str_eq(p.template_hash, "7d9f8");
        ck_assert_str_eq(wl(&e, &p), "Deployment/ml/summarizer");
        /* The table wins over the name: a Deployment named otherwise. */
        put(&e, "rs-2", "ReplicaSet", "odd-abc", "Deployment", "real-name");
        pod(&e, "'pod-template-hash':'abc'", CTRL("ReplicaSet", "odd-abc", "rs-2"), &p);
        ck_assert_str_eq(wl(&e, &p), "Deployment/ml/real-name");
        /* In the table without an owner: the ReplicaSet itself, whatever its name says. */
        put(&e, "rs-3", "ReplicaSet", "solo-abc", NULL, NULL);
        pod(&e, "'pod-template-hash':'abc'", CTRL("ReplicaSet", "solo-abc", "rs-3"), &p);
        ck_assert_str_eq(wl(&e, &p), "ReplicaSet/ml/solo-abc");
        /* Unknown, hash suffix: the Deployment named by the prefix. */
        pod(&e, "'pod-template-hash':'5c6b'", CTRL("ReplicaSet", "web-front-5c6b", "rs-x"), &p);
        ck_assert_str_eq(wl(&e, &p), "Deployment/ml/web-front");
        /* Unknown, without the label, or a name not ending in it: the ReplicaSet. */
        pod(&e, "", CTRL("ReplicaSet", "web-front-5c6b", "rs-x"), &p);
        ck_assert_str_eq(wl(&e, &p), "ReplicaSet/ml/web-front-5c6b");
        pod(&e, "'pod-template-hash':'zzz'", CTRL("ReplicaSet", "web-front-5c6b", "rs-x"), &p);
        ck_assert_str_eq(wl(&e, &p), "ReplicaSet/ml/web-front-5c6b");
        pod(&e, "'pod-template-hash':'5c6b'", CTRL("ReplicaSet", "-5c6b", "rs-x"), &p);
        ck_assert_str_eq(wl(&e, &p), "ReplicaSet/ml/-5c6b");
        pod(&e, "'pod-template-hash':'5c6b'", CTRL("ReplicaSet", "x5c6b", "rs-x"), &p);
        ck_assert_str_eq(wl(&e, &p), "ReplicaSet/ml/x5c6b");
        /* A table entry of another name under the same uid is not trusted: as if unknown. */
        pod(&e, "'pod-template-hash':'7d9f8'", CTRL("ReplicaSet", "other-7d9f8", "rs-1"), &p);
        ck_assert_str_eq(wl(&e, &p), "Deployment/ml/other");
        pod(&e, "", CTRL("ReplicaSet", "other-7d9f8", "rs-1"), &p);
        ck_assert_str_eq(wl(&e, &p), "ReplicaSet/ml/other-7d9f8");
        /* Without a table: the fallbacks only. */
        pod(&e, "'pod-template-hash':'7d9f8'", CTRL("ReplicaSet", "summarizer-7d9f8", "rs-1"), &p);
        ck_assert_str_eq(gc_workload_of(&p, NULL, e.pool), "Deployment/ml/summarizer");
        env_done(&e);
}
END_TEST

START_TEST(job_rules)
{
        env e;
        gc_pod p;

        env_init(&e);
        put(&e, "j-1", "Job", "nightly-2891", "CronJob", "nightly");
        put(&e, "j-2", "Job", "train-42", NULL, NULL);
        put(&e, "j-3", "Job", "rj-submit", "RayJob", "rj");
        pod(&e, "", CTRL("Job", "nightly-2891", "j-1"), &p);
        ck_assert_str_eq(wl(&e, &p), "CronJob/ml/nightly");
        pod(&e, "", CTRL("Job", "train-42", "j-2"), &p);
        ck_assert_str_eq(wl(&e, &p), "Job/ml/train-42");
        pod(&e, "", CTRL("Job", "rj-submit", "j-3"), &p);
        ck_assert_str_eq(wl(&e, &p), "RayJob/ml/rj");
        /* Unknown Job (a Kueue-managed one too): the Job itself. */
        pod(&e, "'kueue.x-k8s.io/queue-name':'q'", CTRL("Job", "nightly-2891", "j-9"), &p);
        ck_assert_str_eq(wl(&e, &p), "Job/ml/nightly-2891");
        /* Gone from the API: still resolves until expired. */
        ck_assert_int_eq(gc_owner_gone(e.t, "j-1", 100), 0);
        pod(&e, "", CTRL("Job", "nightly-2891", "j-1"), &p);
        ck_assert_str_eq(wl(&e, &p), "CronJob/ml/nightly");
        ck_assert_uint_eq(gc_owner_expire(e.t, 100), 0);
        ck_assert_uint_eq(gc_owner_expire(e.t, 101), 1);
        ck_assert_str_eq(wl(&e, &p), "Job/ml/nightly-2891");
        env_done(&e);
}
END_TEST

START_TEST(direct_kinds)
{
        static const char *const kinds[] = {"StatefulSet", "DaemonSet",       "RayCluster",
                                            "RayJob",      "PyTorchJob",      "TrainJob",
                                            "Workflow",    "LeaderWorkerSet", "JobSet"};
        env e;
        gc_pod p;

        env_init(&e);
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
                char owners[256], want[128];

                snprintf(owners, sizeof(owners),
                         "{'kind':'%s','name':'w','uid':'u-%zu','controller':true}", kinds[i], i);
                pod(&e, "", owners, &p);
                snprintf(want, sizeof(want), "%s/ml/w", kinds[i]);
                ck_assert_str_eq(wl(&e, &p), want);
        }
        env_done(&e);
}
END_TEST

START_TEST(label_fallbacks)
{
        env e;
        gc_pod p;

        env_init(&e);
        /* JobSet -> Job -> Pod, Jobs not known: the label. */
        pod(&e, "'jobset.sigs.k8s.io/jobset-name':'js'", CTRL("Job", "js-workers-0", "j"), &p);
        ck_assert_str_eq(wl(&e, &p), "JobSet/ml/js");
        /* Known Job owned by the JobSet: the same. */
        put(&e, "j", "Job", "js-workers-0", "JobSet", "js");
        ck_assert_str_eq(wl(&e, &p), "JobSet/ml/js");
        /* TrainJob -> JobSet -> Job: the TrainJob label is above the JobSet's. */
        pod(&e, "'jobset.sigs.k8s.io/jobset-name':'tj','trainer.kubeflow.org/trainjob-name':'tj'",
            CTRL("Job", "tj-node-0", "j2"), &p);
        ck_assert_str_eq(wl(&e, &p), "TrainJob/ml/tj");
        put(&e, "j2", "Job", "tj-node-0", "JobSet", "tj");
        ck_assert_str_eq(wl(&e, &p), "TrainJob/ml/tj");
        /* LeaderWorkerSet: pods of its StatefulSets. */
        pod(&e, "'leaderworkerset.sigs.k8s.io/name':'lws'", CTRL("StatefulSet", "lws-0", "s"), &p);
        ck_assert_str_eq(wl(&e, &p), "LeaderWorkerSet/ml/lws");
        /* Argo, Ray on a Job. */
        pod(&e, "'workflows.argoproj.io/workflow':'wf'", CTRL("Job", "wf-step", "j3"), &p);
        ck_assert_str_eq(wl(&e, &p), "Workflow/ml/wf");
        pod(&e, "'ray.io/cluster':'rc'", CTRL("ReplicaSet", "rc-x", "r9"), &p);
        ck_assert_str_eq(wl(&e, &p), "RayCluster/ml/rc");
        /* A label never overrides an owner above the building blocks. */
        pod(&e, "'ray.io/cluster':'rc'", CTRL("RayCluster", "rc", "r"), &p);
        ck_assert_str_eq(wl(&e, &p), "RayCluster/ml/rc");
        put(&e, "j4", "Job", "rj-submit", "RayJob", "rj");
        pod(&e, "'ray.io/cluster':'rc'", CTRL("Job", "rj-submit", "j4"), &p);
        ck_assert_str_eq(wl(&e, &p), "RayJob/ml/rj");
        put(&e, "j5", "Job", "n-1", "CronJob", "n");
        pod(&e, "'jobset.sigs.k8s.io/jobset-name':'js'", CTRL("Job", "n-1", "j5"), &p);
        ck_assert_str_eq(wl(&e, &p), "CronJob/ml/n");
        /* Nor a pod without a controller. */
        pod(&e, "'ray.io/cluster':'rc'", "", &p);
        ck_assert_str_eq(wl(&e, &p), "Pod/ml/p-1");
        /* Empty label values say nothing. */
        pod(&e, "'jobset.sigs.k8s.io/jobset-name':''", CTRL("Job", "x", "j6"), &p);
        ck_assert_ptr_null(p.workload_hint);
        ck_assert_str_eq(wl(&e, &p), "Job/ml/x");
        env_done(&e);
}
END_TEST

START_TEST(bad_labels_refused)
{
        env e;
        char buf[1024], err[256];
        cJSON *obj;
        gc_pod p;
        char *js;

        env_init(&e);
        snprintf(
            buf, sizeof(buf),
            "{'metadata':{'name':'p','labels':{'ray.io/cluster':'%0100d'}},"
            "'spec':{'containers':[{'name':'c','resources':{'limits':{'nvidia.com/gpu':1}}}]}}",
            0);
        js = J(buf);
        obj = cJSON_Parse(js);
        ck_assert_int_eq(gc_pod_from_json(obj, &e.o, &p, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "ray.io/cluster"));
        cJSON_Delete(obj);
        free(js);
        js = J("{'metadata':{'name':'p','labels':{'pod-template-hash':5}},"
               "'spec':{'containers':[{'name':'c','resources':{'limits':{'nvidia.com/gpu':1}}}]}}");
        obj = cJSON_Parse(js);
        ck_assert_int_eq(gc_pod_from_json(obj, &e.o, &p, err, sizeof(err)), -EINVAL);
        cJSON_Delete(obj);
        free(js);
        env_done(&e);
}
END_TEST

START_TEST(table_bound)
{
        gc_owner_table *t = gc_owner_table_new(3);
        gc_owner o = {"a", "Job", "ns", "n", NULL, NULL};
        gc_owner_stats st;
        char uid[16];

        ck_assert_ptr_nonnull(t);
        for (int i = 0; i < 3; i++) {
                snprintf(uid, sizeof(uid), "u%d", i);
                o.uid = uid;
                ck_assert_int_eq(gc_owner_put(t, &o, 1), 0);
        }
        o.uid = "u9";
        ck_assert_int_eq(gc_owner_put(t, &o, 1), -ENOSPC);
        /* Replacing a known uid is not refused. */
        o.uid = "u1";
        o.owner_kind = "CronJob";
        o.owner_name = "c";
        ck_assert_int_eq(gc_owner_put(t, &o, 1), 0);
        ck_assert_str_eq(gc_owner_get(t, "u1")->owner_name, "c");
        gc_owner_table_stats(t, &st);
        ck_assert_uint_eq(st.entries, 3);
        ck_assert_uint_eq(st.refused, 1);
        /* Gone ones count until expired. */
        ck_assert_int_eq(gc_owner_gone(t, "u0", 50), 0);
        ck_assert_int_eq(gc_owner_gone(t, "nope", 50), -ENOENT);
        o.uid = "u9";
        ck_assert_int_eq(gc_owner_put(t, &o, 1), -ENOSPC);
        ck_assert_uint_eq(gc_owner_expire(t, 60), 1);
        ck_assert_int_eq(gc_owner_put(t, &o, 1), 0);
        ck_assert_ptr_null(gc_owner_get(t, "u0"));
        gc_owner_table_free(t);
}
END_TEST

START_TEST(table_validation_and_sweep)
{
        gc_owner_table *t = gc_owner_table_new(0);
        gc_owner o = {"a", "Job", "ns", "n", NULL, NULL};
        char longname[300];
        gc_owner_stats st;

        memset(longname, 'x', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        o.name = longname;
        ck_assert_int_eq(gc_owner_put(t, &o, 0), -EINVAL);
        o.name = "bad name";
        ck_assert_int_eq(gc_owner_put(t, &o, 0), -EINVAL);
        o.name = "n";
        o.uid = NULL;
        ck_assert_int_eq(gc_owner_put(t, &o, 0), -EINVAL);
        o.uid = "a";
        o.owner_kind = "CronJob"; /* a kind without a name */
        ck_assert_int_eq(gc_owner_put(t, &o, 0), -EINVAL);
        o.owner_kind = NULL;
        /* Many entries: the buckets grow, every one is found. */
        for (int i = 0; i < 5000; i++) {
                char uid[16];

                snprintf(uid, sizeof(uid), "u%d", i);
                o.uid = uid;
                o.kind = i % 2 ? "Job" : "ReplicaSet";
                ck_assert_int_eq(gc_owner_put(t, &o, i < 100 ? 1 : 2), 0);
        }
        ck_assert_ptr_nonnull(gc_owner_get(t, "u4999"));
        ck_assert_str_eq(gc_owner_get(t, "u7")->kind, "Job");
        /* A LIST of Jobs in generation 2: the 50 Jobs of generation 1 are gone. */
        ck_assert_uint_eq(gc_owner_sweep(t, "Job", 2, 10), 50);
        ck_assert_uint_eq(gc_owner_sweep(t, "Job", 2, 10), 0);
        gc_owner_table_stats(t, &st);
        ck_assert_uint_eq(st.gone, 50);
        ck_assert_uint_eq(gc_owner_expire(t, 11), 50);
        gc_owner_table_stats(t, &st);
        ck_assert_uint_eq(st.entries, 4950);
        gc_owner_table_free(t);
}
END_TEST

START_TEST(decode_owner_objects)
{
        char err[256];
        gc_owner o;
        cJSON *obj;
        char *js;

        js = J("{'kind':'ReplicaSet','metadata':{'name':'web-abc','namespace':'ml','uid':'u1',"
               "'ownerReferences':[{'kind':'Other','name':'o','uid':'x'},"
               "{'kind':'Deployment','name':'web','uid':'d1','controller':true}]},"
               "'spec':{'replicas':1}}");
        obj = cJSON_Parse(js);
        ck_assert_int_eq(gc_owner_from_json(obj, "ReplicaSet", &o, err, sizeof(err)), 1);
        ck_assert_str_eq(o.uid, "u1");
        ck_assert_str_eq(o.ns, "ml");
        ck_assert_str_eq(o.name, "web-abc");
        ck_assert_str_eq(o.owner_kind, "Deployment");
        ck_assert_str_eq(o.owner_name, "web");
        /* The wrong kind. */
        ck_assert_int_eq(gc_owner_from_json(obj, "Job", &o, err, sizeof(err)), -EINVAL);
        cJSON_Delete(obj);
        free(js);
        /* A metadata-only watch's object. */
        js = J("{'kind':'PartialObjectMetadata','apiVersion':'meta.k8s.io/v1','metadata':"
               "{'name':'n-1','namespace':'b','uid':'j1','ownerReferences':"
               "[{'kind':'CronJob','name':'n','uid':'c','controller':true}]}}");
        obj = cJSON_Parse(js);
        ck_assert_int_eq(gc_owner_from_json(obj, "Job", &o, err, sizeof(err)), 1);
        ck_assert_str_eq(o.kind, "Job");
        ck_assert_str_eq(o.owner_name, "n");
        cJSON_Delete(obj);
        free(js);
        /* No uid, no name, a bad ownerReference. */
        js = J("{'metadata':{'name':'j'}}");
        obj = cJSON_Parse(js);
        ck_assert_int_eq(gc_owner_from_json(obj, "Job", &o, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "uid"));
        cJSON_Delete(obj);
        free(js);
        js = J("{'metadata':{'uid':'u'}}");
        obj = cJSON_Parse(js);
        ck_assert_int_eq(gc_owner_from_json(obj, "Job", &o, err, sizeof(err)), -EINVAL);
        cJSON_Delete(obj);
        free(js);
        js = J(
            "{'metadata':{'uid':'u','name':'j','ownerReferences':[{'kind':5,'controller':true}]}}");
        obj = cJSON_Parse(js);
        ck_assert_int_eq(gc_owner_from_json(obj, "Job", &o, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "ownerReferences[0].kind"));
        cJSON_Delete(obj);
        free(js);
        /* No namespace: default. */
        js = J("{'metadata':{'uid':'u','name':'j'}}");
        obj = cJSON_Parse(js);
        ck_assert_int_eq(gc_owner_from_json(obj, "Job", &o, err, sizeof(err)), 1);
        ck_assert_str_eq(o.ns, "default");
        ck_assert_ptr_null(o.owner_kind);
        cJSON_Delete(obj);
        free(js);
}
END_TEST

START_TEST(decode_owner_lists)
{
        env e;
        gc_decode_stats st;
        gc_diag diag;
        char err[256];
        char *js;

        env_init(&e);
        memset(&diag, 0, sizeof(diag));
        js = J("{'kind':'JobList','items':["
               "{'metadata':{'name':'n-1','namespace':'b','uid':'j1','ownerReferences':"
               "[{'kind':'CronJob','name':'n','uid':'c','controller':true}]}},"
               "{'metadata':{'name':'bad'}},"
               "{'metadata':{'name':'t','namespace':'b','uid':'j2'}}]}");
        ck_assert_int_eq(
            gc_decode_owners(js, strlen(js), "Job", &e.o, e.t, &st, &diag, err, sizeof(err)), 0);
        ck_assert_uint_eq(st.objects, 3);
        ck_assert_uint_eq(st.kept, 2);
        ck_assert_uint_eq(st.skipped, 1);
        ck_assert_str_eq(gc_owner_get(e.t, "j1")->owner_kind, "CronJob");
        ck_assert_ptr_null(gc_owner_get(e.t, "j2")->owner_kind);
        /* A ReplicaSet list is not a Job list. */
        ck_assert_int_eq(
            gc_decode_owners(js, strlen(js), "ReplicaSet", &e.o, e.t, &st, &diag, err, sizeof(err)),
            -EINVAL);
        ck_assert_int_eq(
            gc_decode_owners(js, strlen(js), "Pod", &e.o, e.t, &st, &diag, err, sizeof(err)),
            -EINVAL);
        free(js);
        js = J("{'kind':'List','items':[{'kind':'ReplicaSet','metadata':{'name':'r','uid':'r1'}},"
               "{'kind':'Pod','metadata':{'name':'p','uid':'p1'}}]}");
        ck_assert_int_eq(
            gc_decode_owners(js, strlen(js), "ReplicaSet", &e.o, e.t, &st, &diag, err, sizeof(err)),
            0);
        ck_assert_uint_eq(st.kept, 1);
        ck_assert_str_eq(gc_owner_get(e.t, "r1")->ns, "default");
        free(js);
        gc_diag_clear(&diag);
        env_done(&e);
}
END_TEST

static Suite *workload_suite(void)
{
        Suite *s = suite_create("workload");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, bare_pod);
        tcase_add_test(tc, replicaset_rules);
        tcase_add_test(tc, job_rules);
        tcase_add_test(tc, direct_kinds);
        tcase_add_test(tc, label_fallbacks);
        tcase_add_test(tc, bad_labels_refused);
        tcase_add_test(tc, table_bound);
        tcase_add_test(tc, table_validation_and_sweep);
        tcase_add_test(tc, decode_owner_objects);
        tcase_add_test(tc, decode_owner_lists);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(workload_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
