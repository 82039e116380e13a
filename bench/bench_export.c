/* bench_export: the export's peak memory for a thousand rows beside a million (docs/benchmarks.md).
 *
 * Each size runs in its own child process over the same ledger (100 GPU pods on 10 nodes, held
 * the whole window), exporting FOCUS 1.3 hourly rows to /dev/null: a window of 9 hours gives
 * 990 rows, one of 9,100 hours (379 days) 1,001,000. The ledger is the same size in both; the
 * export's own memory is the difference, which should stay flat.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "export/export.h"
#include "ledger/ledger.h"
#include "util/util.h"

#define BENCH_NODES 10
#define BENCH_PODS  100

static int64_t bench_t0(void)
{
        int64_t t = 0;

        gc_time_parse("2025-10-01T00:00:00Z", 20, &t);
        return t;
}

static int sink(void *ud, const char *data, size_t n)
{
        return fwrite(data, 1, n, ud) == n ? 0 : -EIO;
}

/* In the child: build the ledger, export `hours` hourly periods, print the figures. */
static int run(int64_t hours)
{
        gc_strpool *pool = gc_strpool_new((size_t)64 << 20);
        gc_ledger_opts lo = {.pool = pool};
        gc_ledger *l = gc_ledger_new(&lo);
        gc_export_opts o = {0};
        gc_export_totals t;
        int64_t t0 = bench_t0();
        struct timespec a, b;
        struct rusage ru;
        FILE *null = fopen("/dev/null", "w");
        char name[64];
        int r = 0;

        if (!pool || !l || !null)
                return 1;
        for (int i = 0; r == 0 && i < BENCH_NODES; i++) {
                gc_capacity c = {0};

                snprintf(name, sizeof(name), "gpu-node-%02d", i);
                c.node = gc_strpool_intern0(pool, name);
                c.model = gc_strpool_intern0(pool, "NVIDIA-H100-80GB-HBM3");
                c.capacity_type = gc_strpool_intern0(pool, "on-demand");
                c.geq = 16;
                c.price_per_gpu_hour = 4.5;
                c.start = t0 - 86400;
                c.end = GC_OPEN;
                r = gc_ledger_put_capacity(l, &c);
        }
        for (int i = 0; r == 0 && i < BENCH_PODS; i++) {
                gc_usage u = {0};

                snprintf(name, sizeof(name), "pod-%03d", i);
                u.pod_uid = gc_strpool_intern0(pool, name);
                u.dims[GC_DIM_POD] = u.pod_uid;
                snprintf(name, sizeof(name), "ns-%02d", i % 20);
                u.dims[GC_DIM_NAMESPACE] = gc_strpool_intern0(pool, name);
                snprintf(name, sizeof(name), "team-%d", i % 8);
                u.dims[GC_DIM_TEAM] = gc_strpool_intern0(pool, name);
                snprintf(name, sizeof(name), "project-%03d", i);
                u.dims[GC_DIM_PROJECT] = gc_strpool_intern0(pool, name);
                u.dims[GC_DIM_MODEL] = gc_strpool_intern0(pool, "NVIDIA-H100-80GB-HBM3");
                u.dims[GC_DIM_CAPACITY_TYPE] = gc_strpool_intern0(pool, "on-demand");
                snprintf(name, sizeof(name), "gpu-node-%02d", i % BENCH_NODES);
                u.dims[GC_DIM_NODE] = gc_strpool_intern0(pool, name);
                u.geq = 1;
                u.price_per_gpu_hour = 4.5;
                u.start = t0;
                u.end = GC_OPEN;
                r = gc_ledger_put_usage(l, &u);
        }
        o.ledger = l;
        o.start = t0;
        o.end = t0 + hours * 3600;
        o.granularity = GC_EXPORT_HOURLY;
        o.format = GC_EXPORT_FOCUS;
        o.cluster = "bench";
        clock_gettime(CLOCK_MONOTONIC, &a);
        if (r == 0)
                r = gc_export_run(&o, sink, null, &t);
        clock_gettime(CLOCK_MONOTONIC, &b);
        getrusage(RUSAGE_SELF, &ru);
        if (r < 0) {
                fprintf(stderr, "bench_export: %s\n", strerror(-r));
                return 1;
        }
        printf("hours=%lld rows=%llu export_s=%.2f rows_per_s=%.0f peak_rss_kib=%ld\n",
               (long long)hours, (unsigned long long)t.rows,
               (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9,
               (double)t.rows /
                   ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 + 1e-9),
               ru.ru_maxrss);
        fflush(stdout); /* the child leaves by _exit */
        fclose(null);
        gc_ledger_free(l);
        gc_strpool_free(pool);
        return 0;
}

int main(int argc, char **argv)
{
        static const int64_t sizes[] = {9, 9100}; /* ~1,000 and ~1,000,000 rows */

        if (argc == 2)
                return run(strtoll(argv[1], NULL, 10));
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                pid_t pid;
                int st = 0;

                fflush(stdout);
                pid = fork();
                if (pid < 0)
                        return 1;
                if (pid == 0)
                        _exit(run(sizes[i]));
                if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                        return 1;
        }
        return 0;
}
