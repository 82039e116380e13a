/* bench_advisor: the advisor over a 4-week ledger of 10,000 GPU pods with churn, folding and usage.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "advisor/advisor.h"
#include "ledger/ledger.h"
#include "price/price.h"
#include "util/util.h"

/*
 * usage: bench_advisor [SLOTS] [DAYS] [RUNS]   (defaults 10000, 28 and 5; the best run counts)
 *
 * SLOTS pod slots run GPU pods back to back for DAYS days: each pod lives 2 to 60 hours, then its
 * slot waits up to 2 hours and starts a new pod (a new UID), so about SLOTS pods hold GPUs at any
 * time and ~20 x SLOTS pods pass through the ledger. Five slots share a node of 8 GPUs (one asks
 * for 4 GPUs, four for 1); nodes are H100 on demand, H100 spot and A100 40GB on demand; 40
 * namespaces, one of them unlabelled. The ledger is written through its public API the way the
 * controller writes it: a pod is put open when it starts and again closed when it ends, and each
 * simulated day the ledger folds every interval that ended before then (keeping 35 days). Then
 * the 10,000-odd pods running at the end get synthetic dcgm-exporter summaries (idle ones,
 * over-requests, small inference that fits a MIG slice, busy training) and the advisor runs over
 * the whole window. Prints one line of key=value figures; scripts/bench.sh runs it.
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

static long rss_kib(void)
{
        FILE *f = fopen("/proc/self/statm", "r");
        long pages = 0, res = 0;

        if (!f)
                return -1;
        if (fscanf(f, "%ld %ld", &pages, &res) != 2)
                res = -1;
        fclose(f);
        return res < 0 ? -1 : res * 4;
}

/* A fixed generator, so every run builds the same ledger. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return (uint32_t)(rng_state % n);
}

typedef struct slot {
        int64_t start, end; /* the current pod's interval */
        uint32_t seq;       /* pods this slot has run */
} slot;

typedef struct world {
        gc_strpool *pool;
        gc_ledger *led;
        const char *ns[40], *team[40], *project[40];
        const char *models[3], *ctypes[3];
        double prices[3];
        size_t nodes;
        const char **node_names;
} world;

/* prefix + a zero-padded number, interned: "ns-07". */
static const char *intern(world *w, const char *prefix, int width, long a)
{
        char buf[96];

        snprintf(buf, sizeof(buf), "%s%0*ld", prefix, width, a);
        return gc_strpool_intern0(w->pool, buf);
}

static size_t node_class(size_t node, size_t nodes)
{
        return node * 10 < nodes * 5 ? 0 : node * 10 < nodes * 7 ? 1 : 2;
}

static int put_pod(world *w, size_t s, const slot *sl, int open)
{
        size_t node = s / 5, k = node % 40, c = node_class(node, w->nodes);
        char uid[48];
        gc_usage u;

        snprintf(uid, sizeof(uid), "pod-%zu-%u", s, sl->seq);
        memset(&u, 0, sizeof(u));
        u.pod_uid = uid;
        u.dims[GC_DIM_NAMESPACE] = w->ns[k];
        u.dims[GC_DIM_TEAM] = w->team[k];
        u.dims[GC_DIM_PROJECT] = w->project[k];
        u.dims[GC_DIM_MODEL] = w->models[c];
        u.dims[GC_DIM_CAPACITY_TYPE] = w->ctypes[c];
        u.dims[GC_DIM_NODE] = w->node_names[node];
        u.dims[GC_DIM_POD] = uid;
        u.geq = s % 5 == 0 ? 4 : 1;
        u.price_per_gpu_hour = w->prices[c];
        u.start = sl->start;
        u.end = open ? GC_OPEN : sl->end;
        return gc_ledger_put_usage(w->led, &u);
}

int main(int argc, char **argv)
{
        size_t slots = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 10000;
        int64_t days = argc > 2 ? strtol(argv[2], NULL, 10) : 28;
        long runs = argc > 3 ? strtol(argv[3], NULL, 10) : 5;
        int64_t t0 = (int64_t)1790812800; /* 2026-10-01T00:00:00Z */
        int64_t tend = t0 + days * 86400;
        gc_ledger_opts lo = {0};
        gc_ledger_stats st;
        gc_advisor_pod *pods = NULL;
        gc_advisor_result *res = NULL;
        gc_advisor_input in;
        gc_catalog *cat = NULL;
        gc_tco_inputs tco = {425000, 8, 3, 0.8, 64, 1.5, 250000, 0.56, 1.3, 0.10, 0.10};
        slot *sl = NULL;
        world w;
        gc_buf json, md;
        char err[256] = "";
        double t_build0, t_build, t_run = 1e9, t_json = 1e9, t_md = 1e9;
        long rss_before, rss_after;
        size_t npods = 0, running = 0, folded = 0;
        int rc = 1, r = 0;

        memset(&w, 0, sizeof(w));
        gc_buf_init(&json, 256u << 20);
        gc_buf_init(&md, 64u << 20);
        if (slots < 5 || days < 1 || days > 60 || runs < 1 || runs > 1000) {
                fprintf(stderr, "usage: bench_advisor [SLOTS >= 5] [DAYS 1..60] [RUNS 1..1000]\n");
                return 2;
        }
        w.pool = gc_strpool_new(256u << 20);
        lo.pool = w.pool;
        lo.max_intervals = 4 * slots + 1000;
        lo.max_rollup_rows = 8000000;
        w.led = gc_ledger_new(&lo);
        cat = gc_catalog_builtin();
        w.nodes = (slots + 4) / 5;
        w.node_names = calloc(w.nodes, sizeof(*w.node_names));
        sl = calloc(slots, sizeof(*sl));
        if (!w.pool || !w.led || !cat || !w.node_names || !sl)
                goto oom;
        for (long k = 0; k < 40; k++) {
                w.ns[k] = intern(&w, "ns-", 2, k);
                w.team[k] = k == 39 ? GC_UNATTRIBUTED : intern(&w, "team-", 2, k % 20);
                w.project[k] = intern(&w, "project-", 2, k);
        }
        w.models[0] = w.models[1] = gc_strpool_intern0(w.pool, "NVIDIA-H100-80GB-HBM3");
        w.models[2] = gc_strpool_intern0(w.pool, "NVIDIA-A100-SXM4-40GB");
        w.ctypes[0] = w.ctypes[2] = gc_strpool_intern0(w.pool, "on-demand");
        w.ctypes[1] = gc_strpool_intern0(w.pool, "spot");
        w.prices[0] = 12.29;
        w.prices[1] = 5.00;
        w.prices[2] = 4.10;
        for (size_t n = 0; n < w.nodes; n++) {
                size_t c = node_class(n, w.nodes);
                gc_capacity cap;

                w.node_names[n] = intern(&w, "gpu-node-", 4, (long)n);
                memset(&cap, 0, sizeof(cap));
                cap.node = w.node_names[n];
                cap.model = w.models[c];
                cap.capacity_type = w.ctypes[c];
                cap.geq = 8;
                cap.price_per_gpu_hour = w.prices[c];
                cap.start = t0 - 86400;
                cap.end = GC_OPEN;
                if (gc_ledger_put_capacity(w.led, &cap) < 0)
                        goto oom;
        }

        /* Day by day: start pods, close the ones that ended, fold what is closed. */
        t_build0 = now_s();
        for (size_t s = 0; s < slots; s++) {
                sl[s].start = t0 + (int64_t)rnd(7200);
                sl[s].end = sl[s].start + 7200 + (int64_t)rnd(58 * 3600);
        }
        for (int64_t day = 1; day <= days; day++) {
                int64_t t = t0 + day * 86400;

                for (size_t s = 0; s < slots; s++) {
                        r = 0;
                        while (sl[s].start < t) {
                                if (sl[s].end > t) {
                                        r = put_pod(&w, s, &sl[s], 1);
                                        break;
                                }
                                r = put_pod(&w, s, &sl[s], 0);
                                if (r < 0)
                                        break;
                                npods++;
                                sl[s].seq++;
                                sl[s].start = sl[s].end + (int64_t)rnd(7200);
                                sl[s].end = sl[s].start + 7200 + (int64_t)rnd(58 * 3600);
                        }
                        if (r < 0) {
                                fprintf(stderr, "put: %s\n", strerror(-r));
                                goto out;
                        }
                }
                r = gc_ledger_fold(w.led, t - 900, t - 35 * 86400);
                if (r < 0) {
                        fprintf(stderr, "fold: %s\n", strerror(-r));
                        goto out;
                }
                folded += (size_t)r;
        }
        t_build = now_s() - t_build0;

        /* The pods running at the end, with usage summaries shaped like pkg/gpuuse's. */
        pods = calloc(slots, sizeof(*pods));
        if (!pods)
                goto oom;
        for (size_t s = 0; s < slots; s++) {
                gc_advisor_pod *p = &pods[s];
                size_t node = s / 5, k = node % 40, c = node_class(node, w.nodes);
                uint32_t kind = rnd(100);
                char uid[48];

                if (sl[s].start >= tend)
                        continue;
                snprintf(uid, sizeof(uid), "pod-%zu-%u", s, sl[s].seq);
                p->uid = gc_strpool_intern0(w.pool, uid);
                p->ns = w.ns[k];
                p->name = p->uid;
                p->team = w.team[k];
                p->project = w.project[k];
                p->node = w.node_names[node];
                p->model = w.models[c];
                p->capacity_type = w.ctypes[c];
                p->controller_kind = kind < 40 ? "ReplicaSet" : "Job";
                p->controller = kind < 40 ? "server-7d9f8c6b5" : "train";
                p->resource = "nvidia.com/gpu";
                p->gpus_requested = s % 5 == 0 ? 4 : 1;
                p->geq = p->gpus_requested;
                p->price_per_gpu_hour = w.prices[c];
                p->start = sl[s].start;
                p->end = GC_OPEN;
                p->has_usage = kind < 97; /* a few pods the exporter does not see */
                p->samples = kind < 95 ? 2000 : 12;
                p->coverage = kind < 95 ? 0.95 : 0.1;
                p->usage_start = p->start > t0 ? p->start : t0;
                p->usage_end = tend;
                p->activity_mean = kind < 10 ? 0.01 : kind < 40 ? 0.08 : 0.7;
                p->activity_p95 = kind < 10 ? 0.02 : kind < 40 ? 0.1 : 0.95;
                p->tensor_mean = kind < 40 ? 0.04 : 0.6;
                p->mem_used_peak_mib = kind < 40 ? 6000 : 60000;
                p->mem_total_mib = c == 2 ? 40960 : 81559;
                p->devices_seen = (uint32_t)p->gpus_requested;
                p->devices_active = kind >= 10 && kind < 20 && p->gpus_requested > 1
                                        ? 1
                                        : (uint32_t)p->gpus_requested;
                p->idle_longest_s = kind < 10 ? p->usage_end - p->usage_start : 600;
                p->idle_total_s = kind < 10 ? p->usage_end - p->usage_start : 600;
                p->activity_source = "DCGM_FI_PROF_GR_ENGINE_ACTIVE";
                running++;
        }

        memset(&in, 0, sizeof(in));
        in.start = t0;
        in.end = tend;
        in.now = tend;
        in.ledger = w.led;
        in.catalog = cat;
        in.tco = &tco;
        in.pods = pods;
        in.n_pods = slots;
        rss_before = rss_kib();
        for (long i = 0; i < runs; i++) {
                double a = now_s(), b, c2, d;

                res = gc_advisor_result_unref(res);
                r = gc_advisor_run(&in, &res, err, sizeof(err));
                if (r < 0) {
                        fprintf(stderr, "advisor: %s\n", err);
                        goto out;
                }
                b = now_s();
                gc_buf_reset(&json);
                if (gc_advisor_json(res, "USD", &json) < 0)
                        goto oom;
                c2 = now_s();
                gc_buf_reset(&md);
                if (gc_advisor_markdown(res, "USD", &md) < 0)
                        goto oom;
                d = now_s();
                t_run = fmin(t_run, b - a);
                t_json = fmin(t_json, c2 - b);
                t_md = fmin(t_md, d - c2);
        }
        rss_after = rss_kib();
        gc_ledger_stats_get(w.led, &st);
        printf("slots=%zu days=%lld pods_total=%zu folded=%zu intervals=%zu rollup_rows=%zu "
               "ledger_mib=%.1f build_s=%.2f advisor_pods=%zu findings=%zu findings_kept=%zu "
               "idle_gpu=%u over_requested=%u mig_fit=%u cheaper_class=%u unattributed=%u "
               "idle_capacity=%u reserve_floor=%u buy_vs_rent=%u notes=%zu "
               "monthly_savings=%.0f run_ms=%.1f json_ms=%.1f json_bytes=%zu markdown_ms=%.1f "
               "markdown_bytes=%zu rss_kib_before=%ld rss_kib_after=%ld peak_rss_kib=%ld\n",
               slots, (long long)days, npods, folded, st.intervals, st.rollup_rows,
               (double)st.bytes / 1048576.0, t_build, running, res->n_findings_total,
               res->n_findings, res->count_by_kind[GC_FINDING_IDLE_GPU],
               res->count_by_kind[GC_FINDING_OVER_REQUESTED],
               res->count_by_kind[GC_FINDING_MIG_FIT], res->count_by_kind[GC_FINDING_CHEAPER_CLASS],
               res->count_by_kind[GC_FINDING_UNATTRIBUTED],
               res->count_by_kind[GC_FINDING_IDLE_CAPACITY],
               res->count_by_kind[GC_FINDING_RESERVE_FLOOR],
               res->count_by_kind[GC_FINDING_BUY_VS_RENT], res->n_notes_total, res->monthly_savings,
               t_run * 1e3, t_json * 1e3, json.len, t_md * 1e3, md.len, rss_before, rss_after,
               peak_rss_kib());
        rc = 0;
        goto out;
oom:
        fprintf(stderr, "out of memory\n");
out:
        gc_advisor_result_unref(res);
        free(pods);
        free(sl);
        free(w.node_names);
        gc_buf_free(&json);
        gc_buf_free(&md);
        gc_catalog_free(cat);
        gc_ledger_free(w.led);
        gc_strpool_free(w.pool);
        return rc;
}
