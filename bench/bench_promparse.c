/* bench_promparse: parse (and ingest) a large dcgm-exporter body read in 64 KiB chunks; MB/s, peak
 * RSS. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "gpuuse/gpuuse.h"
#include "promtext/promtext.h"
#include "util/util.h"

/* dcgm-exporter's default counters (etc/default-counters.csv), in its order. */
static const struct {
        const char *name, *type, *help;
} counters[] = {
    {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."},
    {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."},
    {"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."},
    {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
     "Total energy consumption since boot (in mJ)."},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."},
    {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."},
    {"DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %)."},
    {"DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %)."},
    {"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."},
    {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."},
    {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."},
    {"DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB)."},
    {"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter",
     "Total number of NVLink bandwidth counters for all lanes."},
    {"DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "vGPU License status"},
    {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter",
     "Number of remapped rows for uncorrectable errors"},
    {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter",
     "Number of remapped rows for correctable errors"},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge",
     "Ratio of cycles the tensor (HMMA) pipe is active."},
    {"DCGM_FI_PROF_DRAM_ACTIVE", "gauge",
     "Ratio of cycles the device memory interface is active sending or receiving data."},
    {"DCGM_FI_PROF_PCIE_TX_BYTES", "gauge",
     "The rate of data transmitted over the PCIe bus - including both protocol headers and data "
     "payloads - in bytes per second."},
    {"DCGM_FI_PROF_PCIE_RX_BYTES", "gauge",
     "The rate of data received over the PCIe bus - including both protocol headers and data "
     "payloads - in bytes per second."},
};
#define NCOUNTERS (sizeof(counters) / sizeof(counters[0]))

static unsigned long long rng = 0x9E3779B97F4A7C15ull;

static unsigned rnd(unsigned n)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return (unsigned)(rng % n);
}

/* One sample value, shaped like what dcgm-exporter prints for that counter. */
static void value(FILE *f, size_t c, unsigned g)
{
        const char *n = counters[c].name;

        if (strstr(n, "ACTIVE"))
                fprintf(f, "0.%06u", rnd(1000000));
        else if (strstr(n, "POWER_USAGE"))
                fprintf(f, "%u.%06u", 60 + rnd(640), rnd(1000000));
        else if (strstr(n, "FB_USED"))
                fprintf(f, "%u", rnd(81559));
        else if (strstr(n, "FB_FREE"))
                fprintf(f, "%u", rnd(81559));
        else if (strstr(n, "GPU_UTIL"))
                fprintf(f, "%u", rnd(101));
        else if (strstr(n, "ENERGY"))
                fprintf(f, "%llu", 1000000000ull + (unsigned long long)g * 7919 + rnd(1000000));
        else if (strstr(n, "PCIE_"))
                fprintf(f, "%u", rnd(100000000));
        else if (strstr(n, "CLOCK"))
                fprintf(f, "%u", 210 + rnd(1800));
        else if (strstr(n, "TEMP"))
                fprintf(f, "%u", 25 + rnd(60));
        else
                fprintf(f, "0");
}

/*
 * A body of about `mb` MB: 8-GPU nodes, every default counter, the full label set. With
 * scrapes > 1 it is that many scrapes of one fleet, 30 s apart, each sample with its timestamp
 * (as a federation dump over time): the same bytes over fewer GPUs.
 */
static int gen(const char *path, double mb, unsigned scrapes)
{
        FILE *f = fopen(path, "w");
        unsigned ngpus;
        long per_gpu;

        if (!f) {
                perror(path);
                return 1;
        }
        /* About 25 lines of ~300 bytes per GPU. */
        per_gpu = (long)NCOUNTERS * 300;
        if (scrapes == 0)
                scrapes = 1;
        ngpus = (unsigned)(mb * 1e6 / (double)per_gpu / scrapes);
        ngpus = (ngpus + 7) / 8 * 8;
        if (ngpus == 0)
                ngpus = 8;
        /* Grouped by metric, as an exporter or a federation endpoint writes them. */
        for (size_t k = 0; k < scrapes * NCOUNTERS; k++) {
                size_t c = k / scrapes;

                if (k % scrapes == 0)
                        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", counters[c].name,
                                counters[c].help, counters[c].name, counters[c].type);
                rng = 0x9E3779B97F4A7C15ull + k;
                for (unsigned g = 0; g < ngpus; g++) {
                        unsigned node = g / 8, idx = g % 8, job = g / 4;
                        int held = (g * 2654435761u) % 10 != 0; /* 10% of GPUs free */
                        char ns[32] = "", pod[48] = "";

                        if (held) {
                                snprintf(ns, sizeof(ns), "team-%03u", job % 200);
                                snprintf(pod, sizeof(pod), "train-%06u-worker-%u", job, g % 4);
                        }
                        fprintf(f,
                                "%s{gpu=\"%u\",UUID=\"GPU-%08x-%04x-4%03x-8%03x-%012x\","
                                "pci_bus_id=\"00000000:%02X:00.0\",device=\"nvidia%u\","
                                "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"gpu-node-%05u\","
                                "DCGM_FI_DRIVER_VERSION=\"550.54.15\",container=\"%s\","
                                "namespace=\"%s\",pod=\"%s",
                                counters[c].name, idx, g * 2654435761u, node & 0xffff, idx,
                                node % 4096, g, 0x18 + idx * 8, idx, node, held ? "worker" : "", ns,
                                pod);
                        fputs("\"} ", f);
                        value(f, c, g);
                        if (scrapes > 1)
                                fprintf(f, " %lld000",
                                        1795166100LL + 30LL * (long long)(k % scrapes));
                        fputc('\n', f);
                }
        }
        if (fclose(f) != 0) {
                perror(path);
                return 1;
        }
        return 0;
}

static int count_sample(const gc_prom_sample *s, void *userdata)
{
        unsigned long long *n = userdata;

        (void)s;
        (*n)++;
        return 0;
}

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds (user + system) so far: on a busy machine wall time also counts waiting. */
static double cpu_s(void)
{
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static long peak_rss_kib(void)
{
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return ru.ru_maxrss;
}

/* Reads the file 64 KiB at a time, like a network read, into the parser or the store. */
static int run(const char *mode, const char *path)
{
        static char chunk[64 * 1024];
        int ingest = strcmp(mode, "ingest") == 0;
        int fd = open(path, O_RDONLY);
        unsigned long long samples = 0, bytes = 0;
        gc_prom_parser *p = NULL;
        gc_gpuuse *s = NULL;
        gc_gpuuse_batch *b = NULL;
        gc_gpuuse_stats st;
        gc_prom_stats ps;
        double t0, t, c0, c;
        int r;

        if (fd < 0) {
                perror(path);
                return 1;
        }
        memset(&st, 0, sizeof(st));
        memset(&ps, 0, sizeof(ps));
        t0 = now_s();
        c0 = cpu_s();
        if (ingest) {
                s = gc_gpuuse_new(NULL);
                b = s ? gc_gpuuse_batch_begin(s, 1795166100, 30, 0) : NULL;
        } else {
                p = gc_prom_parser_new(0, 0, count_sample, &samples);
        }
        if (!p && !b) {
                fprintf(stderr, "bench_promparse: out of memory\n");
                close(fd);
                return 1;
        }
        for (;;) {
                ssize_t n = read(fd, chunk, sizeof(chunk));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                bytes += (unsigned long long)n;
                r = ingest ? gc_gpuuse_batch_feed(b, chunk, (size_t)n)
                           : gc_prom_parser_feed(p, chunk, (size_t)n);
                if (r < 0) {
                        fprintf(stderr, "bench_promparse: %s\n", strerror(-r));
                        return 1;
                }
        }
        close(fd);
        if (ingest) {
                r = gc_gpuuse_batch_end(b, &st);
                samples = st.samples;
                ps.errors = st.parse_errors;
        } else {
                r = gc_prom_parser_finish(p);
                gc_prom_parser_stats(p, &ps);
        }
        t = now_s() - t0;
        c = cpu_s() - c0;
        if (r < 0) {
                fprintf(stderr, "bench_promparse: %s\n", strerror(-r));
                return 1;
        }
        printf("mode=%s bytes=%llu total_s=%.4f mb_per_s=%.1f cpu_s=%.4f mb_per_cpu_s=%.1f "
               "samples=%llu errors=%llu",
               mode, bytes, t, (double)bytes / 1e6 / t, c, (double)bytes / 1e6 / c, samples,
               (unsigned long long)ps.errors);
        if (ingest)
                printf(" readings=%llu pods=%zu devices=%zu store_kib=%zu",
                       (unsigned long long)st.readings, gc_gpuuse_pod_count(s),
                       gc_gpuuse_device_count(s), gc_gpuuse_bytes(s) / 1024);
        printf(" peak_rss_kib=%ld\n", peak_rss_kib());
        gc_prom_parser_free(p);
        gc_gpuuse_free(s);
        return ps.errors ? 1 : 0;
}

int main(int argc, char **argv)
{
        if ((argc == 4 || argc == 5) && strcmp(argv[1], "gen") == 0)
                return gen(argv[2], strtod(argv[3], NULL),
                           argc == 5 ? (unsigned)strtoul(argv[4], NULL, 10) : 1);
        if (argc == 3 && (strcmp(argv[1], "parse") == 0 || strcmp(argv[1], "ingest") == 0))
                return run(argv[1], argv[2]);
        fprintf(stderr,
                "usage: bench_promparse gen FILE MB [SCRAPES] | parse FILE | ingest FILE\n");
        return 2;
}
