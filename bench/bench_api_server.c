/* bench_api_server: the REST API over four weeks of 10,000 GPU pods, for a wrk load run. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "config/config.h"
#include "httpd/httpd.h"
#include "ledger/ledger.h"
#include "report/report.h"
#include "util/util.h"

/*
 * Builds the ledger a controller holds after four weeks of churn (pods started at random over
 * 28 days, 5 minutes to 10 days long; intervals that ended more than 6 h ago folded into hourly
 * rollups, as --fold-after does), publishes one snapshot with gc_api, and serves it with
 * gc_httpd on 127.0.0.1 until SIGINT/SIGTERM. Before serving it prints key=value figures: the
 * ledger's size and the cold (uncached) time of the benchmark's query, gc_ledger_query plus the
 * cost-summary JSON, which is what the API's per-snapshot cache saves on every repeat.
 *
 *   bench_api_server [PODS] [LISTEN]     (defaults 10000 127.0.0.1:0)
 */

#define N_TEAMS    20
#define N_PROJECTS 3 /* per team */
#define N_NODES    400
#define DAY        86400

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
        (void)sig;
        stop = 1;
}

static double mono_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
        uint64_t x = rng_state;

        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        rng_state = x;
        return x;
}

static double rnd01(void)
{
        return (double)(rnd() >> 11) / 9007199254740992.0;
}

static const struct {
        const char *model;
        double gpus, usd;
} classes[] = {
    {"NVIDIA-H100-80GB-HBM3", 8, 9.8},
    {"NVIDIA-A100-SXM4-80GB", 8, 4.1},
    {"NVIDIA-L4", 4, 0.8},
    {"Tesla-T4", 4, 0.35},
};
static const char *const capacity_types[] = {"on-demand", "spot", "reserved"};

static const char *intern(gc_strpool *pool, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static const char *intern(gc_strpool *pool, const char *fmt, ...)
{
        char s[128];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(s, sizeof(s), fmt, ap);
        va_end(ap);
        return gc_strpool_intern0(pool, s);
}

static int build(gc_ledger *l, gc_strpool *pool, long n_pods, int64_t now)
{
        const char *teams[N_TEAMS], *projects[N_TEAMS][N_PROJECTS], *nss[N_TEAMS];
        const char *nodes[N_NODES];
        int node_class[N_NODES], node_ct[N_NODES];
        int r;

        for (long t = 0; t < N_TEAMS; t++) {
                teams[t] = intern(pool, "team-%02ld", t);
                nss[t] = intern(pool, "ns-team-%02ld", t);
                for (long p = 0; p < N_PROJECTS; p++)
                        projects[t][p] = intern(pool, "project-%02ld-%ld", t, p);
        }
        for (long i = 0; i < N_NODES; i++) {
                gc_capacity cap;

                memset(&cap, 0, sizeof(cap));
                node_class[i] = (int)(i % 4);
                node_ct[i] = (int)((i / 4) % 3);
                nodes[i] = intern(pool, "gpu-node-%03ld", i);
                cap.node = nodes[i];
                cap.model = gc_strpool_intern0(pool, classes[node_class[i]].model);
                cap.capacity_type = gc_strpool_intern0(pool, capacity_types[node_ct[i]]);
                cap.geq = classes[node_class[i]].gpus;
                cap.price_per_gpu_hour = classes[node_class[i]].usd;
                cap.start = now - 35 * DAY;
                cap.end = GC_OPEN;
                r = gc_ledger_put_capacity(l, &cap);
                if (r < 0)
                        return r;
        }
        for (long i = 0; i < n_pods; i++) {
                static const double geqs[] = {1, 1, 1, 2, 4, 8, 0.25, 0.5};
                long t = (long)(rnd() % N_TEAMS), nd = (long)(rnd() % N_NODES);
                double u = rnd01(), dur;
                gc_usage us;

                /* 30% short jobs (5-60 min), 50% runs of hours, 20% services of days. */
                if (u < 0.3)
                        dur = 300 + rnd01() * 3300;
                else if (u < 0.8)
                        dur = 3600 + rnd01() * 23 * 3600;
                else
                        dur = DAY + rnd01() * 9 * DAY;
                memset(&us, 0, sizeof(us));
                us.pod_uid = intern(pool, "uid-%08ld", i);
                us.dims[GC_DIM_NAMESPACE] = nss[t];
                us.dims[GC_DIM_TEAM] = rnd() % 25 == 0 ? GC_UNATTRIBUTED : teams[t];
                us.dims[GC_DIM_PROJECT] = projects[t][rnd() % N_PROJECTS];
                us.dims[GC_DIM_MODEL] = gc_strpool_intern0(pool, classes[node_class[nd]].model);
                us.dims[GC_DIM_CAPACITY_TYPE] =
                    gc_strpool_intern0(pool, capacity_types[node_ct[nd]]);
                us.dims[GC_DIM_NODE] = nodes[nd];
                us.dims[GC_DIM_POD] = intern(pool, "worker-%ld-%06ld", t, i);
                us.geq = geqs[rnd() % 8];
                us.price_per_gpu_hour = classes[node_class[nd]].usd;
                us.start = now - 28 * DAY + (int64_t)(rnd01() * 28 * DAY);
                us.end = us.start + (int64_t)dur;
                if (us.end >= now)
                        us.end = GC_OPEN;
                r = gc_ledger_put_usage(l, &us);
                if (r < 0)
                        return r;
        }
        /* What the controller's checkpoint tick does with --fold-after 6h. */
        r = gc_ledger_fold(l, now - 6 * 3600, now - 35 * DAY);
        return r < 0 ? r : 0;
}

typedef struct pods {
        gc_api_pod *v;
        size_t n, cap;
} pods;

/* The snapshot's pod table, as the controller builds it from the ledger's intervals. */
static int pod_row(void *ud, const gc_usage *u)
{
        pods *ps = ud;
        gc_api_pod *row;

        if (ps->n == ps->cap) {
                size_t nc = ps->cap ? ps->cap * 2 : 1024;
                gc_api_pod *p = realloc(ps->v, nc * sizeof(*p));

                if (!p)
                        return -ENOMEM;
                ps->v = p;
                ps->cap = nc;
        }
        row = &ps->v[ps->n++];
        memset(row, 0, sizeof(*row));
        row->uid = u->pod_uid;
        row->ns = u->dims[GC_DIM_NAMESPACE];
        row->name = u->dims[GC_DIM_POD];
        row->node = u->dims[GC_DIM_NODE];
        row->team = u->dims[GC_DIM_TEAM];
        row->project = u->dims[GC_DIM_PROJECT];
        row->model = u->dims[GC_DIM_MODEL];
        row->capacity_type = u->dims[GC_DIM_CAPACITY_TYPE];
        row->geq = u->geq;
        row->gpus_requested = ceil(u->geq);
        row->price_per_gpu_hour = u->price_per_gpu_hour;
        row->start = u->start;
        row->end = u->end;
        row->activity_mean = row->activity_p95 = row->mem_used_peak_mib = NAN;
        return 0;
}

/* The cold path of /api/v1/costs?window=7d&by=team,project: query, then the JSON. */
static int cold_query(const gc_ledger *l, int64_t now, double *ret_query_ms, double *ret_total_ms,
                      size_t *ret_bytes)
{
        double best_q = 1e9, best_t = 1e9;
        size_t bytes = 0;
        int r = 0;

        for (int i = 0; i < 21 && r == 0; i++) {
                gc_cost_summary sum;
                gc_query q;
                gc_buf out;
                double t0, t1, t2;

                memset(&q, 0, sizeof(q));
                q.start = now - 7 * DAY;
                q.end = now;
                q.now = now;
                q.by[0] = GC_DIM_TEAM;
                q.by[1] = GC_DIM_PROJECT;
                q.n_by = 2;
                gc_buf_init(&out, (size_t)64 << 20);
                t0 = mono_s();
                r = gc_ledger_query(l, &q, &sum);
                t1 = mono_s();
                if (r == 0)
                        r = gc_report_summary_json(&sum, "USD", &out);
                t2 = mono_s();
                bytes = out.len;
                gc_cost_summary_free(&sum);
                gc_buf_free(&out);
                if ((t1 - t0) * 1e3 < best_q)
                        best_q = (t1 - t0) * 1e3;
                if ((t2 - t0) * 1e3 < best_t)
                        best_t = (t2 - t0) * 1e3;
        }
        *ret_query_ms = best_q;
        *ret_total_ms = best_t;
        *ret_bytes = bytes;
        return r;
}

static void log_cb(void *ud, int level, const char *msg)
{
        (void)ud;
        if (level <= GC_HTTPD_LOG_WARN)
                fprintf(stderr, "bench_api_server: %s\n", msg);
}

int main(int argc, char **argv)
{
        long n_pods = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
        const char *listen = argc > 2 ? argv[2] : "127.0.0.1:0";
        int64_t now = (int64_t)time(NULL);
        gc_snapshot_parts parts;
        gc_ledger_stats st;
        gc_ledger_visitor vis;
        gc_ledger_opts lo;
        gc_httpd_opts ho;
        gc_api_opts ao;
        gc_strpool *pool = gc_strpool_new((size_t)1 << 30);
        gc_config *cfg = gc_config_default();
        gc_ledger *l;
        gc_httpd *h = NULL;
        gc_api *api = NULL;
        gc_snapshot *s;
        pods ps;
        struct sigaction sa;
        double t0, build_s, q_ms, total_ms, copy_ms = 0;
        size_t bytes;
        char err[256];
        int r, rc = 1;

        memset(&lo, 0, sizeof(lo));
        lo.pool = pool;
        l = pool && cfg ? gc_ledger_new(&lo) : NULL;
        if (!l || n_pods < 1) {
                fprintf(stderr, "usage: bench_api_server [PODS] [LISTEN] (or out of memory)\n");
                goto finish;
        }
        t0 = mono_s();
        r = build(l, pool, n_pods, now);
        build_s = mono_s() - t0;
        if (r < 0 || cold_query(l, now, &q_ms, &total_ms, &bytes) < 0) {
                fprintf(stderr, "bench_api_server: cannot build the ledger: %s\n", strerror(-r));
                goto finish;
        }
        gc_ledger_stats_get(l, &st);
        /* What the controller pays every --snapshot-interval: a private copy of the ledger. */
        for (int i = 0; i < 5; i++) {
                double c0 = mono_s(), ms;
                gc_ledger *copy = gc_ledger_clone(l);

                ms = (mono_s() - c0) * 1e3;
                if (!copy)
                        goto finish;
                gc_ledger_free(copy);
                if (i == 0 || ms < copy_ms)
                        copy_ms = ms;
        }
        memset(&ps, 0, sizeof(ps));
        memset(&vis, 0, sizeof(vis));
        vis.usage = pod_row;
        if (gc_ledger_visit(l, &vis, &ps) < 0)
                goto finish;
        memset(&parts, 0, sizeof(parts));
        parts.ledger = l;
        l = NULL; /* the snapshot owns it now */
        gc_config_api_settings(cfg, &parts.settings);
        parts.now = now;
        parts.pods = ps.v;
        parts.n_pods = ps.n;
        parts.health.ready = parts.health.leader = 1;
        parts.health.started_at = now;
        parts.health.intervals = st.intervals;
        parts.health.rollup_rows = st.rollup_rows;
        parts.health.ledger_bytes = st.bytes;
        parts.health.pool_bytes = gc_strpool_bytes(pool);
        memset(&ao, 0, sizeof(ao));
        api = gc_api_new(&ao);
        s = gc_snapshot_new(&parts);
        if (!api || !s) {
                fprintf(stderr, "bench_api_server: out of memory\n");
                goto finish;
        }
        gc_api_publish(api, s);
        memset(&ho, 0, sizeof(ho));
        ho.listen = listen;
        ho.max_connections = 256;
        ho.log = log_cb;
        h = gc_httpd_new(&ho, err, sizeof(err));
        if (!h || gc_api_routes(api, h) < 0) {
                fprintf(stderr, "bench_api_server: %s\n", h ? "cannot add the routes" : err);
                goto finish;
        }
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        printf("pods=%ld intervals=%zu open=%zu rollup_rows=%zu periods=%zu period_rows=%zu "
               "ledger_bytes=%zu build_s=%.2f cold_query_ms=%.3f cold_query_json_ms=%.3f "
               "json_bytes=%zu snapshot_copy_ms=%.1f\n",
               n_pods, st.intervals, st.open_intervals, st.rollup_rows, st.periods, st.period_rows,
               st.bytes, build_s, q_ms, total_ms, bytes, copy_ms);
        printf("listening %d\n", gc_httpd_port(h));
        fflush(stdout);
        rc = gc_httpd_run(h, &stop) < 0 ? 1 : 0;
finish:
        h = gc_httpd_free(h);
        api = gc_api_free(api);
        gc_ledger_free(l);
        gc_config_free(cfg);
        gc_strpool_free(pool);
        return rc;
}
