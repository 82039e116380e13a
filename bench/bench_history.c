/* bench_history: the ledger over 90 simulated days at 50,000 GPU pods a day, with period history
 * beside the history earlier builds kept (folded hours without pods), in one run. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint/checkpoint.h"
#include "ledger/ledger.h"
#include "report/report.h"
#include "tz/tz.h"
#include "util/util.h"

/*
 * usage: bench_history [DAYS] [PODS_PER_DAY] [KEEP_DAYS] [tuned|glibc] [ZONE] [HOURLY_DAYS]
 *        [sweep|nosweep] [LABELS] (defaults 90, 50000, 35, tuned, UTC, 35, sweep, 0)
 *
 * LABELS is how many label dimensions the ledger with period history keeps (label:<key>,
 * docs/ledger.md): 0 none; 1 cost-center (8 values, by namespace); 2 also experiment-id, a
 * value per Job and training run (their own workloads) and one of 50 for the rest.
 *
 * ZONE is the report zone (an IANA name from the system's tzdata): it sets the ledger's fold
 * bucket (an hour, or 30 or 15 minutes for zones that had such offsets, e.g. Asia/Kathmandu)
 * and the days, weeks and months of period history, as report.timezone does in the controller.
 *
 * A cluster of 500 nodes of 8 GPUs runs PODS_PER_DAY GPU pods a day, started evenly over each
 * hour: 60% Jobs of 200 CronJobs (5-60 min), 20% Jobs of their own (10-120 min, a workload each),
 * 15% pods of 100 Deployments rolling (6-48 h) and 5% training runs (1-5 days, a workload each),
 * across 20 namespaces and teams. Every simulated hour both ledgers fold as the controller does
 * (before = now - 6 h, history kept for KEEP_DAYS), and the one with period history coarsens as
 * the controller's --hourly-history does (buckets older than HOURLY_DAYS kept only by period;
 * 0: never). At the end of every simulated week the
 * ledger with period history is checkpointed (an incremental write: the bytes of one whole
 * generation and the encode time) and the completed week's report is rendered from it.
 *
 * After each fold the string pool is swept as the controller sweeps it (once it holds half again
 * as many strings as after its last sweep; `nosweep`: never, as builds before mark and sweep).
 *
 * Printed per week: the process's RSS, the string pool's bytes (shared by both ledgers: every
 * uid, pod and workload name they hold) and strings, the week's sweeps and the longest, each
 * ledger's own bytes, the rows of period history, the pods the week's report names, the
 * checkpoint's size and encode time, and the report's render time.
 */

#define N_NODES 500
#define N_NS    20
#define DAY     ((int64_t)86400)
#define HOUR    ((int64_t)3600)

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint32_t rnd(uint32_t n)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return n ? (uint32_t)(rng_state % n) : 0;
}

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double rss_mib(void)
{
        FILE *f = fopen("/proc/self/statm", "r");
        long pages = 0, resident = 0;

        if (!f)
                return 0;
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
                resident = 0;
        fclose(f);
        return (double)resident * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

typedef struct world {
        gc_strpool *pool;
        gc_ledger *now;  /* with period history */
        gc_ledger *hour; /* folded hours only: what builds before period history kept */
        const char *node[N_NODES];
        const char *ns[N_NS], *team[N_NS], *project[3];
        long seq;
        int sweep;        /* sweep the pool as the controller does (0: never, as before) */
        size_t pool_live; /* strings after the last sweep */
        unsigned sweeps;  /* this week */
        double sweep_ms;  /* the week's longest (mark and sweep, the lock held that long) */
} world;

static const char *fmt(world *w, const char *f, ...) __attribute__((format(printf, 2, 3)));

static const char *fmt(world *w, const char *f, ...)
{
        char s[96];
        va_list ap;

        va_start(ap, f);
        vsnprintf(s, sizeof(s), f, ap);
        va_end(ap);
        return gc_strpool_intern0(w->pool, s);
}

static long n_labels; /* LABELS */

/* One pod of the day's mix, starting at t, into both ledgers. */
static int put_pod(world *w, int64_t t)
{
        uint32_t kind = rnd(100), n = rnd(N_NS);
        int64_t dur;
        gc_usage u;
        char uid[48];
        int r;

        memset(&u, 0, sizeof(u));
        w->seq++;
        if (kind < 60) {
                dur = 300 + rnd(3300);
                u.dims[GC_DIM_WORKLOAD] = fmt(w, "CronJob/ns-%02u/nightly-%03u", n, rnd(200));
        } else if (kind < 80) {
                dur = 600 + rnd(6600);
                u.dims[GC_DIM_WORKLOAD] = fmt(w, "Job/ns-%02u/job-%ld", n, w->seq);
        } else if (kind < 95) {
                dur = 6 * HOUR + rnd(42 * 3600);
                u.dims[GC_DIM_WORKLOAD] = fmt(w, "Deployment/ns-%02u/svc-%03u", n, rnd(100));
        } else {
                dur = DAY + rnd(4 * 86400);
                u.dims[GC_DIM_WORKLOAD] = fmt(w, "PyTorchJob/ns-%02u/train-%ld", n, w->seq);
        }
        snprintf(uid, sizeof(uid), "%08lx-7d3c-4a1e-9f00-%012lx", (long)(w->seq * 2654435761u),
                 w->seq);
        u.pod_uid = uid;
        u.dims[GC_DIM_NAMESPACE] = w->ns[n];
        u.dims[GC_DIM_TEAM] = w->team[n];
        u.dims[GC_DIM_PROJECT] = w->project[rnd(3)];
        u.dims[GC_DIM_MODEL] = "NVIDIA-H100-80GB-HBM3";
        u.dims[GC_DIM_CAPACITY_TYPE] = rnd(4) ? "on-demand" : "spot";
        u.dims[GC_DIM_NODE] = w->node[rnd(N_NODES)];
        u.dims[GC_DIM_POD] = fmt(w, "pod-%ld-%ld", w->seq % 7919, w->seq);
        if (n_labels > 0)
                u.labels[0] = fmt(w, "cc-%u", n % 8);
        if (n_labels > 1)
                u.labels[1] = (kind >= 60 && kind < 80) || kind >= 95
                                  ? fmt(w, "exp-%ld", w->seq)
                                  : fmt(w, "exp-shared-%u", rnd(50));
        u.geq = rnd(10) == 0 ? 8 : 1 + rnd(2);
        u.price_per_gpu_hour = 4.1;
        u.start = t;
        u.end = t + dur;
        r = gc_ledger_put_usage(w->now, &u);
        return r < 0 ? r : gc_ledger_put_usage(w->hour, &u);
}

static int world_new(world *w, int64_t t0, const gc_tz *tz)
{
        gc_ledger_opts o;

        memset(w, 0, sizeof(*w));
        w->pool = gc_strpool_new((size_t)4 << 30);
        if (!w->pool)
                return -ENOMEM;
        memset(&o, 0, sizeof(o));
        o.pool = w->pool;
        o.max_intervals = 4000000;
        o.max_rollup_rows = 20000000;
        o.tz = tz;
        /* As the controller picks it: from 1972, when the last zones left offsets in seconds. */
        o.bucket_s = gc_tz_granularity(tz, 63072000, INT64_MAX);
        w->hour = gc_ledger_new(&o);
        {
                static const char *const keys[] = {"cost-center", "experiment-id"};

                o.label_keys = keys;
                o.n_label_keys = (size_t)n_labels;
        }
        w->now = gc_ledger_new(&o);
        if (!w->now || !w->hour || gc_ledger_set_period_since(w->hour, INT64_MAX) < 0)
                return -ENOMEM;
        for (long i = 0; i < N_NS; i++) {
                w->ns[i] = fmt(w, "ns-%02ld", i);
                w->team[i] = fmt(w, "team-%02ld", i % 12);
        }
        for (long i = 0; i < 3; i++)
                w->project[i] = fmt(w, "project-%ld", i);
        for (long i = 0; i < N_NODES; i++) {
                gc_capacity c = {NULL, "NVIDIA-H100-80GB-HBM3", "on-demand", 8, 4.1, t0, GC_OPEN};

                c.node = w->node[i] = fmt(w, "gpu-node-%03ld", i);
                if (gc_ledger_put_capacity(w->now, &c) < 0 ||
                    gc_ledger_put_capacity(w->hour, &c) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/*
 * As the controller does after a fold (ctl__sweep_strings): once the pool holds half again as
 * many strings as after the last sweep, every holder marks what it keeps and the pool sweeps.
 * Here the holders are both ledgers and the world's own names.
 */
static int sweep_strings(world *w)
{
        size_t n = gc_strpool_count(w->pool);
        double e0 = now_s(), ms;
        int r;

        if (!w->sweep || n < w->pool_live + w->pool_live / 2 + 4096)
                return 0;
        r = gc_strpool_sweep_begin(w->pool);
        if (r < 0)
                return r;
        gc_ledger_mark(w->now, w->pool);
        gc_ledger_mark(w->hour, w->pool);
        for (long i = 0; i < N_NODES; i++)
                gc_strpool_mark(w->pool, w->node[i]);
        for (long i = 0; i < N_NS; i++) {
                gc_strpool_mark(w->pool, w->ns[i]);
                gc_strpool_mark(w->pool, w->team[i]);
        }
        for (long i = 0; i < 3; i++)
                gc_strpool_mark(w->pool, w->project[i]);
        r = gc_strpool_sweep(w->pool, NULL);
        if (r < 0)
                return r;
        w->pool_live = gc_strpool_count(w->pool);
        w->sweeps++;
        ms = (now_s() - e0) * 1000;
        if (ms > w->sweep_ms)
                w->sweep_ms = ms;
        return 0;
}

/* The week that just ended: a checkpoint of the ledger and its report, measured. */
static int measure_week(world *w, int week, int64_t t)
{
        gc_checkpoint_write wr;
        gc_period_report rep;
        gc_ledger_stats sn, sh;
        gc_buf b;
        size_t cp_bytes = 0;
        double e0, enc_s, rep_ms, clone_ms;
        const char *top;
        char err[256];
        int r;

        /* The API's snapshot: a copy of the ledger every --snapshot-interval (best of 3). */
        clone_ms = 1e9;
        for (int k = 0; k < 3; k++) {
                gc_ledger *c;

                e0 = now_s();
                c = gc_ledger_clone(w->now);
                if (!c)
                        return -ENOMEM;
                gc_ledger_free(c);
                if ((now_s() - e0) * 1000 < clone_ms)
                        clone_ms = (now_s() - e0) * 1000;
        }
        e0 = now_s();
        r = gc_checkpoint_encode_incr(w->now, t, "gpu-cost-controller-0", NULL, 0, &wr, err,
                                      sizeof(err));
        enc_s = now_s() - e0;
        if (r < 0) {
                fprintf(stderr, "bench_history: checkpoint: %s\n", err);
                return r;
        }
        cp_bytes = wr.manifest.len;
        for (size_t i = 0; i < wr.n_parts; i++)
                cp_bytes += wr.parts[i].data.len;
        gc_checkpoint_write_release(&wr);
        memset(&rep, 0, sizeof(rep));
        rep.ledger = w->now;
        rep.kind = "weekly";
        rep.currency = "USD";
        rep.start = t - 7 * DAY;
        rep.end = t;
        rep.now = t;
        gc_buf_init(&b, (size_t)64 << 20);
        e0 = now_s();
        r = gc_report_period_markdown(&rep, &b);
        rep_ms = (now_s() - e0) * 1000;
        top = r == 0 ? strstr(b.data, "## Top ") : NULL;
        gc_ledger_stats_get(w->now, &sn);
        gc_ledger_stats_get(w->hour, &sh);
        printf("week=%d rss_mib=%.1f pool_mib=%.1f ledger_mib=%.1f hourly_only_ledger_mib=%.1f "
               "intervals=%zu rollup_rows=%zu capacity_runs=%zu periods=%zu period_rows=%zu "
               "report_top=\"%.*s\" report_ms=%.0f checkpoint_bytes=%zu encode_s=%.2f "
               "snapshot_copy_ms=%.1f label_tuples=%zu pool_strings=%zu sweeps=%u "
               "sweep_max_ms=%.0f\n",
               week, rss_mib(), (double)gc_strpool_bytes(w->pool) / 1048576.0,
               (double)sn.bytes / 1048576.0, (double)sh.bytes / 1048576.0, sn.intervals,
               sn.rollup_rows, sn.capacity_runs, sn.periods, sn.period_rows,
               top ? (int)strcspn(top + 3, "\n") : 0, top ? top + 3 : "", rep_ms, cp_bytes, enc_s,
               clone_ms, sn.label_tuples, gc_strpool_count(w->pool), w->sweeps, w->sweep_ms);
        fflush(stdout);
        w->sweeps = 0;
        w->sweep_ms = 0;
        gc_buf_free(&b);
        return r;
}

int main(int argc, char **argv)
{
        long days = argc > 1 ? strtol(argv[1], NULL, 10) : 90;
        long per_day = argc > 2 ? strtol(argv[2], NULL, 10) : 50000;
        long keep = argc > 3 ? strtol(argv[3], NULL, 10) : 35;
        /* The allocator as the controller sets it up, or glibc's defaults to compare. */
        int glibc = argc > 4 && strcmp(argv[4], "glibc") == 0;
        const char *zone = argc > 5 ? argv[5] : "UTC";
        long hourly = argc > 6 ? strtol(argv[6], NULL, 10) : 35;
        int sweep = !(argc > 7 && strcmp(argv[7], "nosweep") == 0);
        gc_tz *tz = NULL;
        int64_t t0 = gc_days_from_civil(2026, 1, 5) * DAY; /* a Monday */
        double start = now_s();
        world w;
        int r;

        n_labels = argc > 8 ? strtol(argv[8], NULL, 10) : 0;
        if (days < 7 || days > 400 || per_day < 24 || per_day > 1000000 || keep < 1 || keep > 400 ||
            hourly < 0 || hourly > 400 || n_labels < 0 || n_labels > 2 ||
            (argc > 4 && !glibc && strcmp(argv[4], "tuned") != 0) ||
            (argc > 7 && sweep && strcmp(argv[7], "sweep") != 0)) {
                fprintf(stderr, "usage: bench_history [DAYS 7..400] [PODS_PER_DAY 24..1000000] "
                                "[KEEP_DAYS 1..400] [tuned|glibc] [ZONE] [HOURLY_DAYS 0..400] "
                                "[sweep|nosweep] [LABELS 0..2]\n");
                return 2;
        }
        r = gc_tz_load(NULL, zone, &tz);
        if (r < 0) {
                fprintf(stderr, "bench_history: zone %s: %s\n", zone, strerror(-r));
                return 2;
        }
        if (!glibc)
                gc_malloc_tune();
        r = world_new(&w, t0, tz);
        w.sweep = sweep;
        for (int64_t h = 0; r == 0 && h < days * 24; h++) {
                int64_t t = t0 + h * HOUR;

                for (long k = 0; r == 0 && k < per_day / 24; k++)
                        r = put_pod(&w, t + (int64_t)rnd(3600));
                if (r == 0)
                        r = gc_ledger_fold(w.now, t + HOUR - 6 * HOUR, t + HOUR - keep * DAY);
                if (r >= 0 && hourly)
                        r = gc_ledger_coarsen(w.now, t + HOUR - hourly * DAY);
                if (r >= 0)
                        r = gc_ledger_fold(w.hour, t + HOUR - 6 * HOUR, t + HOUR - keep * DAY);
                if (r >= 0)
                        r = sweep_strings(&w);
                /* The controller gives the fold's garbage back after each checkpoint. */
                if (r >= 0 && !glibc)
                        gc_malloc_give_back();
                if (r >= 0)
                        r = (h + 1) % (7 * 24) == 0
                                ? measure_week(&w, (int)((h + 1) / 168), t + HOUR)
                                : 0;
        }
        if (r < 0) {
                fprintf(stderr, "bench_history: %s\n", strerror(-r));
                return 1;
        }
        printf("days=%ld pods_per_day=%ld keep_days=%ld hourly_days=%ld pods=%ld allocator=%s "
               "zone=%s bucket_s=%lld pool=%s labels=%ld run_s=%.0f\n",
               days, per_day, keep, hourly, w.seq, glibc ? "glibc" : "tuned", zone,
               (long long)gc_ledger_granularity(w.now), sweep ? "sweep" : "nosweep", n_labels,
               now_s() - start);
        gc_ledger_free(w.now);
        gc_ledger_free(w.hour);
        gc_strpool_free(w.pool);
        return 0;
}
