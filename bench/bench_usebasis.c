/* bench_usebasis: the usage basis over many shared GPU pods and every 15-second sample, beside the
 * allocation basis alone, in one run (docs/ledger.md, "The usage basis"). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ledger/ledger.h"
#include "util/util.h"

/*
 * usage: bench_usebasis [PODS] [DAYS] [STEP_S] (defaults 10000, 28, 15)
 *
 * PODS GPU pods, four to a time-sliced GPU (a quarter each, PODS / 4 GPUs of 125 nodes), across
 * 20 teams; each pod runs for its whole GPU's life in rolling generations of 1-3 days. Two
 * ledgers are fed the same pods: one by allocation alone, one also given every sample of
 * every GPU's four holders (their measured use) through gc_ledger_split_by_use, as the
 * controller's share sink does. Both fold every simulated hour as the controller does (before
 * = now - 6 h, 35 days kept).
 *
 * Printed: the split calls and their time (per call and in all), each ledger's bytes and
 * intervals at the end, the process's peak RSS, and the time of a query of the whole span by
 * team in each basis; the two totals must agree.
 */

#define DAY         ((int64_t)86400)
#define HOUR        ((int64_t)3600)
#define N_TEAMS     20
#define PER_GPU     4
#define T0          ((int64_t)1793491200) /* 2026-11-01T00:00:00Z */
#define KEEP_DAYS   35
#define FOLD_BEHIND (6 * HOUR)

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(uint32_t n)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return (uint32_t)(rng_state % n);
}

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long peak_rss_kib(void)
{
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        long kib = -1;

        while (f && fgets(line, sizeof(line), f))
                if (strncmp(line, "VmHWM:", 6) == 0)
                        kib = strtol(line + 6, NULL, 10);
        if (f)
                fclose(f);
        return kib;
}

typedef struct slot {
        char uid[48];
        int64_t start, end; /* the current generation's pod */
        unsigned gen;
        uint32_t team;
        double use;
} slot;

static int put_pod(gc_ledger *l, const slot *s, uint32_t gpu)
{
        static const char *const teams[N_TEAMS] = {"t00", "t01", "t02", "t03", "t04", "t05", "t06",
                                                   "t07", "t08", "t09", "t10", "t11", "t12", "t13",
                                                   "t14", "t15", "t16", "t17", "t18", "t19"};
        char node[32];
        gc_usage u;

        memset(&u, 0, sizeof(u));
        snprintf(node, sizeof(node), "node-%03u", gpu / 8);
        u.pod_uid = s->uid;
        u.dims[GC_DIM_NAMESPACE] = teams[s->team];
        u.dims[GC_DIM_TEAM] = teams[s->team];
        u.dims[GC_DIM_PROJECT] = "p";
        u.dims[GC_DIM_MODEL] = "Tesla-T4";
        u.dims[GC_DIM_CAPACITY_TYPE] = "on-demand";
        u.dims[GC_DIM_NODE] = node;
        u.dims[GC_DIM_POD] = s->uid;
        u.geq = 1.0 / PER_GPU;
        u.price_per_gpu_hour = 0.40;
        u.start = s->start;
        u.end = s->end;
        return gc_ledger_put_usage(l, &u);
}

/* A new generation in the slot: a pod of 1-3 days from `at`. */
static void next_pod(slot *s, size_t i, int64_t at)
{
        s->gen++;
        snprintf(s->uid, sizeof(s->uid), "pod-%06zu-%u", i, s->gen);
        s->start = at;
        s->end = at + DAY + (int64_t)rnd(2 * DAY);
        s->team = rnd(N_TEAMS);
        s->use = (double)rnd(101) / 100.0;
}

static int query_all(const gc_ledger *l, gc_basis b, int64_t start, int64_t end, double *ret_cost,
                     double *ret_s)
{
        gc_cost_summary sum;
        gc_query q;
        double t0 = now_s();
        int r;

        memset(&q, 0, sizeof(q));
        q.start = start;
        q.end = end;
        q.now = end;
        q.basis = b;
        q.by[0] = GC_DIM_TEAM;
        q.n_by = 1;
        r = gc_ledger_query(l, &q, &sum);
        *ret_s = now_s() - t0;
        if (r == 0)
                *ret_cost = sum.total.cost;
        gc_cost_summary_free(&sum);
        return r;
}

int main(int argc, char **argv)
{
        size_t pods = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
        int64_t days = argc > 2 ? strtoll(argv[2], NULL, 10) : 28;
        int64_t step = argc > 3 ? strtoll(argv[3], NULL, 10) : 15;
        size_t gpus = pods / PER_GPU;
        gc_ledger_opts o = {0};
        gc_ledger *alloc, *use;
        gc_strpool *pool = gc_strpool_new((size_t)8 << 30);
        gc_ledger_stats sa, su;
        slot *sl;
        uint64_t calls = 0;
        double split_s = 0, ca = 0, cu = 0, qa = 0, qu = 0;
        int64_t end = T0 + days * DAY, next_fold = T0 + HOUR;

        if (!pool || pods < PER_GPU || days < 1 || step < 1 || step > 3600)
                return 2;
        o.pool = pool;
        o.max_intervals = (size_t)1 << 26;
        o.max_rollup_rows = (size_t)1 << 26;
        alloc = gc_ledger_new(&o);
        use = gc_ledger_new(&o);
        sl = calloc(gpus * PER_GPU, sizeof(*sl));
        if (!alloc || !use || !sl)
                return 1;
        for (size_t i = 0; i < gpus * PER_GPU; i++) {
                next_pod(&sl[i], i, T0);
                if (put_pod(alloc, &sl[i], (uint32_t)(i / PER_GPU)) < 0 ||
                    put_pod(use, &sl[i], (uint32_t)(i / PER_GPU)) < 0)
                        return 1;
        }
        for (int64_t t = T0 + step; t <= end; t += step) {
                /* Pods that ended give their replica to the next generation. */
                for (size_t i = 0; i < gpus * PER_GPU; i++) {
                        if (sl[i].end > t - step)
                                continue;
                        next_pod(&sl[i], i, sl[i].end);
                        if (put_pod(alloc, &sl[i], (uint32_t)(i / PER_GPU)) < 0 ||
                            put_pod(use, &sl[i], (uint32_t)(i / PER_GPU)) < 0)
                                return 1;
                }
                /* Every GPU's sample: its four holders' use over (t - step, t]. */
                {
                        double t0 = now_s();

                        for (size_t g = 0; g < gpus; g++) {
                                const char *keys[PER_GPU][1];
                                gc_use_holder h[PER_GPU];

                                for (size_t k = 0; k < PER_GPU; k++) {
                                        keys[k][0] = sl[g * PER_GPU + k].uid;
                                        h[k].keys = keys[k];
                                        h[k].n_keys = 1;
                                        h[k].use = sl[g * PER_GPU + k].use;
                                }
                                if (gc_ledger_split_by_use(use, t - step, t, h, PER_GPU) < 0)
                                        return 1;
                                calls++;
                        }
                        split_s += now_s() - t0;
                }
                if (t >= next_fold) {
                        int64_t keep = t - KEEP_DAYS * DAY;

                        if (gc_ledger_fold(alloc, t - FOLD_BEHIND, keep) < 0 ||
                            gc_ledger_fold(use, t - FOLD_BEHIND, keep) < 0)
                                return 1;
                        next_fold += HOUR;
                }
        }
        gc_ledger_stats_get(alloc, &sa);
        gc_ledger_stats_get(use, &su);
        if (query_all(alloc, GC_BASIS_ALLOCATION, T0, end, &ca, &qa) < 0 ||
            query_all(use, GC_BASIS_USAGE, T0, end, &cu, &qu) < 0)
                return 1;
        printf("pods=%zu gpus=%zu days=%lld step_s=%lld split_calls=%llu split_s=%.2f "
               "per_call_us=%.3f\n",
               pods, gpus, (long long)days, (long long)step, (unsigned long long)calls, split_s,
               calls ? split_s * 1e6 / (double)calls : 0.0);
        printf("allocation: ledger_bytes=%zu intervals=%zu rollup_rows=%zu period_rows=%zu "
               "query_s=%.4f total=%.4f\n",
               sa.bytes, sa.intervals, sa.rollup_rows, sa.period_rows, qa, ca);
        printf("usage:      ledger_bytes=%zu intervals=%zu rollup_rows=%zu period_rows=%zu "
               "query_s=%.4f total=%.4f\n",
               su.bytes, su.intervals, su.rollup_rows, su.period_rows, qu, cu);
        printf("peak_rss_kib=%ld pool_bytes=%zu totals_agree=%s\n", peak_rss_kib(),
               gc_strpool_bytes(pool), (cu - ca < 1e-6 * ca && ca - cu < 1e-6 * ca) ? "yes" : "NO");
        gc_ledger_free(alloc);
        gc_ledger_free(use);
        gc_strpool_free(pool);
        free(sl);
        return 0;
}
