/* bench_decode: decode and account a large PodList, beside cJSON parsing the same bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "account/account.h"
#include "config/config.h"
#include "ledger/ledger.h"
#include "model/model.h"
#include "util/util.h"

/*
 * Modes, each run in its own process so peak RSS belongs to one thing:
 *   gen FILE N PCT   write a PodList of N pods, PCT percent asking for GPUs, shaped like
 *                    `kubectl get pods -A -o json` (labels, owner, probes, env, status)
 *   cjson FILE       cJSON_ParseWithLength of the whole file (the peer), then delete
 *   decode FILE      gc_decode_pods + gc_account_pod of every GPU pod into a ledger
 * Each prints one line of key=value figures; scripts/bench.sh compares them.
 */

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long peak_rss_kib(void)
{
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return ru.ru_maxrss;
}

static const char *const teams[] = {"research", "platform", "search", "vision", "ads"};
static const char *const resources[] = {"nvidia.com/gpu", "nvidia.com/mig-1g.10gb",
                                        "nvidia.com/mig-3g.40gb"};

static int gen_pod(FILE *f, long i, int gpu)
{
        const char *team = teams[i % 5];
        long node = gpu ? i % 200 : 200 + i % 800;
        int day = 1 + (int)(i % 20), hour = (int)(i % 24);

        return fprintf(
            f,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"creationTimestamp\":"
            "\"2026-11-%02dT%02d:00:00Z\",\"generateName\":\"%s-worker-7d9f8c6b5-\","
            "\"labels\":{\"app\":\"%s-worker\",\"pod-template-hash\":\"7d9f8c6b5\","
            "\"team\":\"%s\",\"project\":\"p%ld\"},\"name\":\"%s-worker-7d9f8c6b5-%06ld\","
            "\"namespace\":\"ns-%s\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
            "\"blockOwnerDeletion\":true,\"controller\":true,\"kind\":\"ReplicaSet\","
            "\"name\":\"%s-worker-7d9f8c6b5\",\"uid\":\"0b6e3f1c-1d2e-4f5a-9b8c-%012ld\"}],"
            "\"resourceVersion\":\"%ld\",\"uid\":\"7f3c2a1b-4d5e-6f70-8192-%012ld\"},"
            "\"spec\":{\"containers\":[{\"args\":[\"--port=8080\",\"--log-level=info\"],"
            "\"env\":[{\"name\":\"MODEL_DIR\",\"value\":\"/models\"},{\"name\":\"POD_NAME\","
            "\"valueFrom\":{\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":"
            "\"metadata.name\"}}}],\"image\":\"registry.example.com/%s/worker:1.4.2\","
            "\"imagePullPolicy\":\"IfNotPresent\",\"livenessProbe\":{\"failureThreshold\":3,"
            "\"httpGet\":{\"path\":\"/healthz\",\"port\":8080,\"scheme\":\"HTTP\"},"
            "\"periodSeconds\":10,\"successThreshold\":1,\"timeoutSeconds\":1},\"name\":"
            "\"worker\",\"ports\":[{\"containerPort\":8080,\"name\":\"http\",\"protocol\":"
            "\"TCP\"}],\"resources\":{\"limits\":{\"cpu\":\"4\",\"memory\":\"16Gi\"%s%s%s},"
            "\"requests\":{\"cpu\":\"2\",\"memory\":\"8Gi\"%s%s%s}},\"terminationMessagePath\":"
            "\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\",\"volumeMounts\":"
            "[{\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\",\"name\":"
            "\"kube-api-access-x7k2p\",\"readOnly\":true}]}],\"dnsPolicy\":\"ClusterFirst\","
            "\"enableServiceLinks\":true,\"nodeName\":\"node-%04ld\",\"preemptionPolicy\":"
            "\"PreemptLowerPriority\",\"priority\":0,\"restartPolicy\":\"Always\","
            "\"schedulerName\":\"default-scheduler\",\"securityContext\":{},"
            "\"serviceAccount\":\"default\",\"serviceAccountName\":\"default\","
            "\"terminationGracePeriodSeconds\":30,\"tolerations\":[{\"effect\":\"NoExecute\","
            "\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
            "\"tolerationSeconds\":300},{\"effect\":\"NoExecute\",\"key\":"
            "\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\",\"tolerationSeconds\":"
            "300}],\"volumes\":[{\"name\":\"kube-api-access-x7k2p\",\"projected\":{"
            "\"defaultMode\":420,\"sources\":[{\"serviceAccountToken\":{\"expirationSeconds\":"
            "3607,\"path\":\"token\"}},{\"configMap\":{\"items\":[{\"key\":\"ca.crt\",\"path\":"
            "\"ca.crt\"}],\"name\":\"kube-root-ca.crt\"}}]}}]},\"status\":{\"conditions\":["
            "{\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-11-%02dT%02d:00:02Z\","
            "\"status\":\"True\",\"type\":\"Initialized\"},{\"lastProbeTime\":null,"
            "\"lastTransitionTime\":\"2026-11-%02dT%02d:00:40Z\",\"status\":\"True\",\"type\":"
            "\"Ready\"},{\"lastProbeTime\":null,\"lastTransitionTime\":"
            "\"2026-11-%02dT%02d:00:40Z\",\"status\":\"True\",\"type\":\"ContainersReady\"},"
            "{\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-11-%02dT%02d:00:01Z\","
            "\"status\":\"True\",\"type\":\"PodScheduled\"}],\"containerStatuses\":[{"
            "\"containerID\":\"containerd://%064ld\",\"image\":"
            "\"registry.example.com/%s/worker:1.4.2\",\"imageID\":\"registry.example.com/%s/"
            "worker@sha256:%064ld\",\"lastState\":{},\"name\":\"worker\",\"ready\":true,"
            "\"restartCount\":0,\"started\":true,\"state\":{\"running\":{\"startedAt\":"
            "\"2026-11-%02dT%02d:00:39Z\"}}}],\"hostIP\":\"10.0.%ld.%ld\",\"phase\":"
            "\"Running\",\"podIP\":\"10.244.%ld.%ld\",\"podIPs\":[{\"ip\":\"10.244.%ld.%ld\"}],"
            "\"qosClass\":\"Burstable\",\"startTime\":\"2026-11-%02dT%02d:00:01Z\"}}",
            day, hour, team, team, team, i % 40, team, i, team, team, i, 1000 + i, i, team,
            gpu ? ",\"" : "", gpu ? resources[i % 3] : "", gpu ? "\":\"1\"" : "", gpu ? ",\"" : "",
            gpu ? resources[i % 3] : "", gpu ? "\":\"1\"" : "", node, day, hour, day, hour, day,
            hour, day, hour, i, team, team, i, day, hour, (node / 250) % 256, node % 250,
            (i / 250) % 256, i % 250, (i / 250) % 256, i % 250, day, hour);
}

static int cmd_gen(const char *path, long n, long pct)
{
        FILE *f = fopen(path, "w");
        long every = pct > 0 ? 100 / pct : 0;

        if (!f) {
                perror(path);
                return 1;
        }
        fputs("{\"apiVersion\":\"v1\",\"items\":[", f);
        for (long i = 0; i < n; i++) {
                if (i)
                        fputc(',', f);
                gen_pod(f, i, every > 0 && i % every == 0);
        }
        fputs("],\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\"}}\n", f);
        return fclose(f) == 0 ? 0 : 1;
}

static int cmd_cjson(const gc_buf *in)
{
        double t0 = now_s(), t1, t2;
        cJSON *root = cJSON_ParseWithLength(in->data, in->len);

        t1 = now_s();
        if (!root) {
                fprintf(stderr, "cjson: parse failed\n");
                return 1;
        }
        printf("mode=cjson bytes=%zu items=%d parse_s=%.4f mb_s=%.1f peak_rss_kib=%ld", in->len,
               cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "items")), t1 - t0,
               (double)in->len / 1e6 / (t1 - t0), peak_rss_kib());
        cJSON_Delete(root);
        t2 = now_s();
        printf(" delete_s=%.4f\n", t2 - t1);
        return 0;
}

static int cmd_decode(const gc_buf *in)
{
        gc_config *cfg = gc_config_default();
        gc_strpool *pool = gc_strpool_new((size_t)1 << 30);
        gc_ledger_opts lo = {.pool = pool};
        gc_ledger *ledger = gc_ledger_new(&lo);
        gc_accountant_opts ao;
        gc_accountant *acct;
        gc_pod_vec pods = {.limit = 10000000};
        gc_decode_stats st;
        gc_model_opts mo;
        gc_diag diag;
        char err[256];
        double t0, t1, t2;
        int rc = 1;

        memset(&diag, 0, sizeof(diag));
        memset(&ao, 0, sizeof(ao));
        if (cfg)
                gc_config_account_opts(cfg, &ao);
        acct = gc_accountant_new(&ao, pool, ledger);
        if (!acct)
                goto finish;
        gc_config_model_opts(cfg, pool, &mo);
        t0 = now_s();
        if (gc_decode_pods(in->data, in->len, &mo, &pods, &st, &diag, err, sizeof(err)) < 0) {
                fprintf(stderr, "decode: %s\n", err);
                goto finish;
        }
        t1 = now_s();
        for (size_t i = 0; i < pods.n; i++)
                if (gc_account_pod(acct, &pods.v[i], NULL) < 0)
                        goto finish;
        t2 = now_s();
        printf("mode=decode bytes=%zu items=%zu gpu_pods=%zu decode_s=%.4f account_s=%.4f "
               "total_s=%.4f mb_s=%.1f pods_s=%.0f peak_rss_kib=%ld\n",
               in->len, st.objects, pods.n, t1 - t0, t2 - t1, t2 - t0,
               (double)in->len / 1e6 / (t2 - t0), (double)st.objects / (t2 - t0), peak_rss_kib());
        rc = 0;
finish:
        gc_diag_clear(&diag);
        gc_pod_vec_free(&pods);
        gc_accountant_free(acct);
        gc_ledger_free(ledger);
        gc_strpool_free(pool);
        gc_config_free(cfg);
        return rc;
}

int main(int argc, char **argv)
{
        gc_buf in;
        int rc;

        if (argc == 5 && strcmp(argv[1], "gen") == 0)
                return cmd_gen(argv[2], strtol(argv[3], NULL, 10), strtol(argv[4], NULL, 10));
        if (argc != 3 || (strcmp(argv[1], "cjson") != 0 && strcmp(argv[1], "decode") != 0)) {
                fprintf(stderr, "usage: bench_decode gen FILE N PCT | cjson FILE | decode FILE\n");
                return 2;
        }
        if (gc_read_file(argv[2], (size_t)4 << 30, &in) < 0) {
                perror(argv[2]);
                return 1;
        }
        rc = strcmp(argv[1], "cjson") == 0 ? cmd_cjson(&in) : cmd_decode(&in);
        gc_buf_free(&in);
        return rc;
}
