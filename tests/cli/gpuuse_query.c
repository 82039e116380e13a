/*
 * gpuuse_query: a thin driver of pkg/gpuuse for the CLI tests, so the Prometheus path is tested
 * against a real Prometheus: per-pod summaries, one JSON object a line, from a Prometheus server
 * (query_range, the default PromQL) or from a saved body, over the window [start, end).
 *
 *   gpuuse_query prom URL START END STEP
 *   gpuuse_query file PATH START END INTERVAL   (the scrape interval, as analyze finds it)
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuuse/gpuuse.h"
#include "util/util.h"

static int usage(void)
{
        fprintf(stderr,
                "usage: gpuuse_query prom URL START END STEP | file PATH START END INTERVAL\n");
        return 2;
}

static int num(const char *s, int64_t *ret)
{
        char *end;
        long long v;

        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno || end == s || *end)
                return -EINVAL;
        *ret = v;
        return 0;
}

static void print_num(const char *name, double v)
{
        if (isfinite(v))
                printf(",\"%s\":%.10g", name, v);
        else
                printf(",\"%s\":null", name);
}

int main(int argc, char **argv)
{
        int64_t start, end, step = 0;
        gc_gpuuse *s;
        gc_gpuuse_stats st;
        gc_gpuuse_pod p;
        char err[512] = "";
        size_t cursor = 0;
        int r;

        if (argc < 5 || num(argv[3], &start) < 0 || num(argv[4], &end) < 0 || end <= start)
                return usage();
        s = gc_gpuuse_new(NULL);
        if (!s)
                return 1;
        if (strcmp(argv[1], "prom") == 0 && argc == 6 && num(argv[5], &step) == 0 && step > 0) {
                /* Points at start + k * step inside [start, end), as a scrape every step would. */
                r = gc_gpuuse_prom_query_range(s, argv[2], NULL, start, end - 1, step, 30,
                                               256u << 20, NULL, &st, err, sizeof(err));
        } else if (strcmp(argv[1], "file") == 0 && argc == 6 && num(argv[5], &step) == 0 &&
                   step > 0) {
                gc_buf b;

                r = gc_read_file(argv[2], 256u << 20, &b);
                if (r == 0) {
                        r = gc_gpuuse_ingest_text(s, b.data, b.len, end, step, &st);
                        gc_buf_free(&b);
                }
        } else {
                gc_gpuuse_free(s);
                return usage();
        }
        if (r < 0) {
                fprintf(stderr, "gpuuse_query: %s\n", err[0] ? err : strerror(-r));
                gc_gpuuse_free(s);
                return 1;
        }
        while (gc_gpuuse_pod_next(s, &cursor, start, end, &p) == 0) {
                printf("{\"namespace\":\"%s\",\"pod\":\"%s\",\"samples\":%" PRIu64
                       ",\"first_at\":%" PRId64 ",\"last_at\":%" PRId64
                       ",\"idle_longest_s\":%" PRId64,
                       p.ns, p.pod, p.samples, p.first_at, p.last_at, p.idle_longest_s);
                print_num("coverage", p.coverage);
                print_num("activity_mean", p.activity_mean);
                print_num("mem_used_peak_mib", p.mem_used_peak_mib);
                print_num("mem_total_mib", p.mem_total_mib);
                printf("}\n");
        }
        gc_gpuuse_free(s);
        return 0;
}
