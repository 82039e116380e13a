/* fuzz_gpuuse: any text body or Prometheus answer keeps the store's summaries in range and hands
 * the share sink well-formed shares; any list gives well-formed dcgm-exporter scrape URLs. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpuuse/gpuuse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every share: holders with a name and a use in [0, 1], a span (from, to] no longer than the
 * batch's interval, handed in time order; the store's bound of 256 holders a call. */
static int64_t last_to;

static int share(void *ud, const gc_gpuuse_share *sh)
{
        (void)ud;
        if (!sh->uuid || sh->n < 1 || sh->n > 256 || sh->from >= sh->to || sh->to < last_to ||
            sh->to - sh->from > 86400)
                __builtin_trap();
        last_to = sh->to;
        for (size_t i = 0; i < sh->n; i++)
                if (!sh->h[i].ns || !sh->h[i].pod || !(sh->h[i].use >= 0 && sh->h[i].use <= 1) ||
                    (!isnan(sh->h[i].mem_mib) && !isfinite(sh->h[i].mem_mib)))
                        __builtin_trap();
        return 0;
}

static void check(const gc_gpuuse *s)
{
        size_t cur = 0;
        gc_gpuuse_pod p;
        gc_gpuuse_device d;

        while (gc_gpuuse_pod_next(s, &cur, 1795166100, 1795169700, &p) == 0) {
                if (!p.ns || !p.pod || p.samples == 0 || p.devices_active > p.devices ||
                    p.coverage < 0 || p.coverage > 1 || p.idle_longest_s > p.idle_total_s ||
                    p.idle_longest_s < 0 || p.first_at > p.last_at ||
                    (!isnan(p.activity_p95) && (p.activity_p95 < 0 || p.activity_p95 > 1)))
                        __builtin_trap();
                if (gc_gpuuse_pod_get(s, p.ns, p.pod, 0, 1, &p) != 0)
                        __builtin_trap();
        }
        cur = 0;
        while (gc_gpuuse_device_next(s, &cur, &d) == 0)
                if (!d.uuid || gc_gpuuse_device_get(s, d.uuid, d.gpu_i_id, &d) != 0)
                        __builtin_trap();
}

/* The same bytes as the dcgm-exporter pods' list, and as their Service's Endpoints: every URL
 * is the scheme, an address and the port and path, and there are never more than the bound. */
static void check_targets(const uint8_t *data, size_t size)
{
        gc_gpuuse_targets_opts o = {.ns = "gpu-operator",
                                    .label_selector = "app=nvidia-dcgm-exporter",
                                    .port = 9400,
                                    .path = "/metrics",
                                    .scheme = "http"};
        char err[256], **urls = NULL;
        size_t n = 0;

        for (int k = 0; k < 2; k++) {
                o.service = k ? "dcgm" : NULL;
                if (gc_gpuuse_targets_parse(&o, (const char *)data, size, &urls, &n, err,
                                            sizeof(err)) < 0)
                        continue;
                if (n > GC_GPUUSE_MAX_TARGETS)
                        __builtin_trap();
                for (size_t i = 0; i < n; i++) {
                        size_t len = strlen(urls[i]);

                        if (strncmp(urls[i], "http://", 7) != 0 || len < 7 + 1 + 13 ||
                            strcmp(urls[i] + len - 13, ":9400/metrics") != 0)
                                __builtin_trap();
                }
                gc_gpuuse_targets_free(urls, n);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        gc_gpuuse_opts o;
        gc_gpuuse *s;
        gc_gpuuse_stats st;
        char err[256];

        gc_gpuuse_opts_default(&o);
        o.max_pods = 64;
        o.max_devices = 64;
        o.max_batch_readings = 1024;
        o.max_devices_per_pod = 4;
        s = gc_gpuuse_new(&o);
        if (!s)
                return 0;
        gc_gpuuse_set_share_sink(s, share, NULL);
        /* The same bytes as a scrape at two times, then as a Prometheus answer. */
        last_to = INT64_MIN; /* in time order within a batch */
        gc_gpuuse_ingest_text(s, (const char *)data, size, 1795166100, 0, &st);
        last_to = INT64_MIN;
        gc_gpuuse_ingest_text(s, (const char *)data, size, 1795166130, 0, &st);
        check(s);
        last_to = INT64_MIN;
        gc_gpuuse_ingest_prom_json(s, (const char *)data, size, 1 << 20, 60, &st, err, sizeof(err));
        check(s);
        /* Expiry drops everything last seen before the cut, and nothing after it. */
        {
                const int64_t now = 1795166100 + 8 * 86400;
                size_t cur = 0;
                gc_gpuuse_pod p;

                gc_gpuuse_expire(s, now);
                while (gc_gpuuse_pod_next(s, &cur, 0, 1, &p) == 0)
                        if (p.last_at < now - o.retention_s)
                                __builtin_trap();
        }
        gc_gpuuse_free(s);
        check_targets(data, size);
        return 0;
}
