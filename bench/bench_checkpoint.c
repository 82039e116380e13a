/* bench_checkpoint: bytes written to the API server per hour by checkpoints at the target shape. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "checkpoint/checkpoint.h"
#include "ledger/ledger.h"
#include "util/util.h"

/*
 * usage: bench_checkpoint [SLOTS] [DAYS] [INTERVAL_S] [incr|full]   (defaults 10000, 28, 60, incr)
 *
 * The ledger of bench_advisor (SLOTS pod slots running GPU pods back to back for DAYS days, ~20 x
 * SLOTS pods in all, daily folds, 35 days kept), then one hour of operation minute by minute:
 * pods end and start as their slots say, the ledger folds as the controller does at every
 * checkpoint (before = now - 6 h), and a checkpoint is encoded every INTERVAL_S seconds with the
 * controller's chunk size and resume points.
 *
 * full: the version 1 layout, where every write puts every chunk, so the bytes of an hour are the
 * sum of all chunks written. `unchanged_bytes` counts the chunk bodies (string table and records,
 * after the header) that are equal to the same chunk of the write before.
 *
 * incr: incremental writes (version 2), as the controller makes them: a write puts the parts
 * whose names (content hashes) no kept generation holds, then the manifest; afterwards only the
 * parts of the last two manifests are kept. `bytes_per_hour` is what is put;
 * `full_rewrite_bytes_per_hour` what putting every part and the manifest would be.
 *
 * Prints one line of key=value figures.
 */

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

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

/* Puts every pod of every slot that started before t: closed when it ended by t, else open. */
static int advance(world *w, slot *sl, size_t slots, int64_t t, size_t *npods)
{
        for (size_t s = 0; s < slots; s++) {
                while (sl[s].start < t) {
                        int r;

                        if (sl[s].end > t) {
                                r = put_pod(w, s, &sl[s], 1);
                                if (r < 0)
                                        return r;
                                break;
                        }
                        r = put_pod(w, s, &sl[s], 0);
                        if (r < 0)
                                return r;
                        (*npods)++;
                        sl[s].seq++;
                        sl[s].start = sl[s].end + (int64_t)rnd(7200);
                        sl[s].end = sl[s].start + 7200 + (int64_t)rnd(58 * 3600);
                }
        }
        return 0;
}

/* The part names a generation holds, for the incremental mode (sorted, for bsearch). */
typedef struct names {
        char (*v)[GC_CHECKPOINT_NAME_MAX];
        size_t n;
} names;

static int name_cmp(const void *a, const void *b)
{
        return strcmp(a, b);
}

static int names_has(const names *ns, const char *name)
{
        return ns->n && bsearch(name, ns->v, ns->n, sizeof(*ns->v), name_cmp) != NULL;
}

/* The parts of w, sorted. */
static int names_of(const gc_checkpoint_write *w, names *ret)
{
        names ns = {calloc(w->n_parts + 1, sizeof(*ns.v)), w->n_parts};

        if (!ns.v)
                return -ENOMEM;
        for (size_t i = 0; i < w->n_parts; i++)
                memcpy(ns.v[i], w->parts[i].name, sizeof(ns.v[i]));
        qsort(ns.v, ns.n, sizeof(*ns.v), name_cmp);
        *ret = ns;
        return 0;
}

/* Where a chunk's body (string table and records) starts: after the header. */
static const char *body_of(const gc_buf *b)
{
        const char *p = strstr(b->data, "\"strings\":");

        return p ? p : b->data;
}

int main(int argc, char **argv)
{
        size_t slots = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 10000;
        int64_t days = argc > 2 ? strtol(argv[2], NULL, 10) : 28;
        int64_t interval = argc > 3 ? strtol(argv[3], NULL, 10) : 60;
        int incr = argc <= 4 || strcmp(argv[4], "incr") == 0;
        names kept[2] = {{NULL, 0}, {NULL, 0}}; /* the last two generations' parts */
        gc_checkpoint_write wr;
        double full_bytes = 0;
        size_t parts = 0;
        int64_t t0 = (int64_t)1790812800; /* 2026-10-01T00:00:00Z */
        int64_t t;
        gc_ledger_opts lo = {0};
        gc_ledger_stats st;
        gc_checkpoint_rv rvs[3] = {{"namespaces", "1000"}, {"nodes", "1001"}, {"pods", "1002"}};
        gc_checkpoint_meta meta = {rvs, 3, 0};
        gc_buf *prev = NULL, *cur = NULL;
        size_t n_prev = 0, n_cur = 0, npods = 0, writes = 0, chunks = 0, max_chunks = 0;
        double bytes = 0, unchanged = 0, t_enc = 0, t_build;
        slot *sl = NULL;
        world w;
        char err[256] = "";
        int rc = 1, r;

        memset(&w, 0, sizeof(w));
        memset(&wr, 0, sizeof(wr));
        if (slots < 5 || days < 1 || days > 60 || interval < 1 || interval > 3600 ||
            (argc > 4 && !incr && strcmp(argv[4], "full") != 0)) {
                fprintf(stderr, "usage: bench_checkpoint [SLOTS >= 5] [DAYS 1..60] "
                                "[INTERVAL_S 1..3600] [incr|full]\n");
                return 2;
        }
        w.pool = gc_strpool_new(256u << 20);
        lo.pool = w.pool;
        lo.max_intervals = 4 * slots + 1000;
        lo.max_rollup_rows = 8000000;
        w.led = gc_ledger_new(&lo);
        w.nodes = (slots + 4) / 5;
        w.node_names = calloc(w.nodes, sizeof(*w.node_names));
        sl = calloc(slots, sizeof(*sl));
        if (!w.pool || !w.led || !w.node_names || !sl)
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
        t_build = now_s();
        for (size_t s = 0; s < slots; s++) {
                sl[s].start = t0 + (int64_t)rnd(7200);
                sl[s].end = sl[s].start + 7200 + (int64_t)rnd(58 * 3600);
        }
        for (int64_t day = 1; day <= days; day++) {
                t = t0 + day * 86400;
                r = advance(&w, sl, slots, t, &npods);
                if (r == 0)
                        r = gc_ledger_fold(w.led, t - 6 * 3600, t - 35 * 86400);
                if (r < 0) {
                        fprintf(stderr, "build: %s\n", strerror(-r));
                        goto out;
                }
        }
        t_build = now_s() - t_build;

        /* One hour of operation after the history: a checkpoint every interval. */
        t = t0 + days * 86400;
        for (int64_t k = 0; k <= 3600 / interval; k++, t += interval) {
                double e0;

                r = advance(&w, sl, slots, t, &npods);
                if (r == 0)
                        r = gc_ledger_fold(w.led, t - 6 * 3600, t - 35 * 86400);
                if (r < 0) {
                        fprintf(stderr, "hour: %s\n", strerror(-r));
                        goto out;
                }
                meta.generation = (uint64_t)k + 1;
                e0 = now_s();
                if (incr)
                        r = gc_checkpoint_encode_incr(w.led, t, "gpu-cost-controller-0", &meta, 0,
                                                      &wr, err, sizeof(err));
                else
                        r = gc_checkpoint_encode_meta(w.led, t, "gpu-cost-controller-0", &meta, 0,
                                                      &cur, &n_cur, err, sizeof(err));
                t_enc += now_s() - e0;
                if (r < 0) {
                        fprintf(stderr, "encode: %s\n", err);
                        goto out;
                }
                if (incr) {
                        names now;

                        /* Parts no kept generation holds, then the manifest. */
                        if (k > 0) {
                                writes++;
                                chunks++;
                                bytes += (double)wr.manifest.len;
                                full_bytes += (double)wr.manifest.len;
                                for (size_t i = 0; i < wr.n_parts; i++) {
                                        full_bytes += (double)wr.parts[i].data.len;
                                        if (names_has(&kept[0], wr.parts[i].name) ||
                                            names_has(&kept[1], wr.parts[i].name)) {
                                                unchanged += (double)wr.parts[i].data.len;
                                                continue;
                                        }
                                        chunks++;
                                        bytes += (double)wr.parts[i].data.len;
                                }
                                parts += wr.n_parts;
                        }
                        if (wr.n_parts + 1 > max_chunks)
                                max_chunks = wr.n_parts + 1;
                        r = names_of(&wr, &now);
                        gc_checkpoint_write_release(&wr);
                        if (r < 0)
                                goto oom;
                        free(kept[0].v);
                        kept[0] = kept[1];
                        kept[1] = now;
                        continue;
                }
                /* The first write only sets the baseline: an hour holds 3600 / interval writes. */
                if (k > 0) {
                        writes++;
                        chunks += n_cur;
                        for (size_t i = 0; i < n_cur; i++) {
                                bytes += (double)cur[i].len;
                                if (i < n_prev && strcmp(body_of(&cur[i]), body_of(&prev[i])) == 0)
                                        unchanged += (double)strlen(body_of(&cur[i]));
                        }
                }
                if (n_cur > max_chunks)
                        max_chunks = n_cur;
                gc_checkpoint_chunks_free(prev, n_prev);
                prev = cur;
                n_prev = n_cur;
                cur = NULL;
                n_cur = 0;
        }
        gc_ledger_stats_get(w.led, &st);
        if (incr) {
                printf("slots=%zu days=%lld pods=%zu intervals=%zu open=%zu rollup_rows=%zu "
                       "build_s=%.2f interval_s=%lld writes_per_hour=%zu parts_per_write=%.1f "
                       "max_configmaps=%zu configmaps_put_per_write=%.1f bytes_per_write=%.0f "
                       "encode_s_per_write=%.3f bytes_per_hour=%.0f "
                       "full_rewrite_bytes_per_hour=%.0f reused_bytes_per_hour=%.0f "
                       "saving=%.1fx\n",
                       slots, (long long)days, npods, st.intervals, st.open_intervals,
                       st.rollup_rows, t_build, (long long)interval, writes,
                       writes ? (double)parts / (double)writes : 0, max_chunks,
                       writes ? (double)chunks / (double)writes : 0,
                       writes ? bytes / (double)writes : 0,
                       writes ? t_enc / (double)(writes + 1) : 0, bytes, full_bytes, unchanged,
                       bytes > 0 ? full_bytes / bytes : 0);
                rc = 0;
                goto out;
        }
        printf("slots=%zu days=%lld pods=%zu intervals=%zu open=%zu rollup_rows=%zu "
               "build_s=%.2f interval_s=%lld writes_per_hour=%zu chunks_per_write=%.1f "
               "max_chunks=%zu bytes_per_write=%.0f encode_s_per_write=%.3f "
               "full_rewrite_bytes_per_hour=%.0f unchanged_bytes_per_hour=%.0f "
               "unchanged_pct=%.1f\n",
               slots, (long long)days, npods, st.intervals, st.open_intervals, st.rollup_rows,
               t_build, (long long)interval, writes, writes ? (double)chunks / (double)writes : 0,
               max_chunks, writes ? bytes / (double)writes : 0,
               writes ? t_enc / (double)(writes + 1) : 0, bytes, unchanged,
               bytes > 0 ? 100.0 * unchanged / bytes : 0);
        rc = 0;
        goto out;
oom:
        fprintf(stderr, "out of memory\n");
out:
        gc_checkpoint_write_release(&wr);
        free(kept[0].v);
        free(kept[1].v);
        gc_checkpoint_chunks_free(prev, n_prev);
        gc_checkpoint_chunks_free(cur, n_cur);
        free(sl);
        free(w.node_names);
        gc_ledger_free(w.led);
        gc_strpool_free(w.pool);
        return rc;
}
