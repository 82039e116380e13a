/* checkpoint: encodes a ledger into ConfigMap-sized JSON chunks and restores it all-or-nothing. */
#include "checkpoint.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#define GC_CP__TIME_MAX ((int64_t)253402300799) /* 9999-12-31T23:59:59Z, as the ledger */
#define GC_CP__HOUR     ((int64_t)3600)
#define GC_CP__HEADER_ROOM                                                                         \
        1536 /* the header's bytes at most (identity <= 253 plain bytes,                           \
                4 resourceVersions of <= 64) */
#define GC_CP__BUCKET      ((int64_t)900) /* rollup rows start on a quarter hour at least */
#define GC_CP__MAX_ENTRIES 1024           /* chunks a caller may hand to one decode */
#define GC_CP__NUM_LEN     32
/* Strings of one record: a pod interval's uid, 8 dims and a value per label key. */
#define GC_CP__MAX_STRS (9 + GC_LABEL_DIMS)

enum {
        GC_CP__USAGE = 0,
        GC_CP__CAPACITY,
        GC_CP__ROLLUP,
        GC_CP__CROLLUP,
        GC_CP__PERIOD,
        GC_CP__N_SECTIONS
};

static const char *const gc_cp__section[GC_CP__N_SECTIONS] = {"usage", "capacity", "rollups",
                                                              "capacity_rollups", "periods"};
/* Strings, then numbers, per record of each section (docs/checkpoint.md). */
static const size_t gc_cp__n_strs[GC_CP__N_SECTIONS] = {9, 3, 6, 3, 9};
/* A usage record written before the workload dimension: its uid and 7 dims, no workload. */
#define GC_CP__USAGE_STRS_V1 8
static const size_t gc_cp__n_nums[GC_CP__N_SECTIONS] = {5, 4, 3, 3, 7};

/* Whether a section's records carry label values (after their dimensions). */
static int gc_cp__labelled(int section)
{
        return section == GC_CP__USAGE || section == GC_CP__ROLLUP || section == GC_CP__PERIOD;
}
#define GC_CP__MAX_NUMS 7

void gc_checkpoint_name(size_t chunk, char out[GC_CHECKPOINT_NAME_MAX])
{
        gc_checkpoint_slot_name(0, chunk, out);
}

void gc_checkpoint_slot_name(size_t slot, size_t chunk, char out[GC_CHECKPOINT_NAME_MAX])
{
        if (slot == 0 && chunk == 0)
                snprintf(out, GC_CHECKPOINT_NAME_MAX, "%s", GC_CHECKPOINT_NAME);
        else if (slot == 0)
                snprintf(out, GC_CHECKPOINT_NAME_MAX, "%s-%zu", GC_CHECKPOINT_NAME, chunk);
        else if (chunk == 0)
                snprintf(out, GC_CHECKPOINT_NAME_MAX, "%s-g%zu", GC_CHECKPOINT_NAME, slot);
        else
                snprintf(out, GC_CHECKPOINT_NAME_MAX, "%s-g%zu-%zu", GC_CHECKPOINT_NAME, slot,
                         chunk);
}

/* A decimal number of 1-3 digits without a leading zero, ending the string or at '-'. */
static const char *gc_cp__small_num(const char *p, size_t *ret)
{
        size_t v = 0, n = 0;

        if (*p == '0')
                return NULL;
        for (; *p >= '0' && *p <= '9' && n < 4; p++, n++)
                v = v * 10 + (size_t)(*p - '0');
        if (n == 0 || n > 3)
                return NULL;
        *ret = v;
        return p;
}

int gc_checkpoint_parse_name(const char *name, size_t *ret_slot, size_t *ret_chunk)
{
        size_t base = strlen(GC_CHECKPOINT_NAME), slot = 0, chunk = 0;
        const char *p;

        if (!name || strncmp(name, GC_CHECKPOINT_NAME, base) != 0)
                return -EINVAL;
        p = name + base;
        if (p[0] == '-' && p[1] == 'g') {
                p = gc_cp__small_num(p + 2, &slot);
                if (!p || slot >= GC_CHECKPOINT_GENERATIONS)
                        return -EINVAL;
        }
        if (p[0] == '-') {
                p = gc_cp__small_num(p + 1, &chunk);
                if (!p || chunk >= GC_CHECKPOINT_MAX_CHUNKS)
                        return -EINVAL;
        }
        if (*p)
                return -EINVAL;
        if (ret_slot)
                *ret_slot = slot;
        if (ret_chunk)
                *ret_chunk = chunk;
        return 0;
}

/* The shortest of %.15g, %.16g, %.17g that reads back as the same double: exact, and short. */
static void gc_cp__num(double v, char out[GC_CP__NUM_LEN])
{
        for (int prec = 15; prec <= 17; prec++) {
                snprintf(out, GC_CP__NUM_LEN, "%.*g", prec, v);
                if (strtod(out, NULL) == v)
                        return;
        }
}

static int gc_cp__valid_id(const char *s)
{
        size_t n = 0;

        for (; s[n]; n++)
                if ((unsigned char)s[n] < 0x20 || (unsigned char)s[n] >= 0x7f || s[n] == '"' ||
                    s[n] == '\\')
                        return 0;
        return n > 0 && n <= GC_CHECKPOINT_MAX_ID;
}

static int gc_cp__valid_rv(const char *s)
{
        size_t n = 0;

        for (; s[n]; n++)
                if ((unsigned char)s[n] <= 0x20 || (unsigned char)s[n] >= 0x7f || s[n] == '"' ||
                    s[n] == '\\')
                        return 0;
        return n > 0 && n < GC_CHECKPOINT_RV_MAX;
}

static int gc_cp__valid_resource(const char *s)
{
        size_t n = 0;

        for (; s[n]; n++)
                if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '.' ||
                      s[n] == '-'))
                        return 0;
        return n > 0 && n < GC_CHECKPOINT_RESOURCE_MAX;
}

/* Checks a set of resume points: valid names and versions, each resource once. */
static int gc_cp__valid_rvs(const gc_checkpoint_rv *rvs, size_t n)
{
        if (n > GC_CHECKPOINT_MAX_RVS || (n && !rvs))
                return 0;
        for (size_t i = 0; i < n; i++) {
                if (!gc_cp__valid_resource(rvs[i].resource) || !gc_cp__valid_rv(rvs[i].rv))
                        return 0;
                for (size_t j = 0; j < i; j++)
                        if (strcmp(rvs[i].resource, rvs[j].resource) == 0)
                                return 0;
        }
        return 1;
}

const char *gc_checkpoint_rv_of(const gc_checkpoint_header *h, const char *resource)
{
        if (!h || !resource)
                return NULL;
        for (size_t i = 0; i < h->n_rvs && i < GC_CHECKPOINT_MAX_RVS; i++)
                if (strcmp(h->rvs[i].resource, resource) == 0)
                        return h->rvs[i].rv;
        return NULL;
}

/* ---- encoding ------------------------------------------------------------------------------- */

/* Consecutive hours of one rollup key with the same figures, not written yet. */
typedef struct gc_cp__run {
        int section;
        const char *strs[GC_CP__MAX_STRS];
        int64_t hour; /* the first */
        size_t hours; /* 0 = no run */
        double v[4];  /* GPU-seconds, cost, and the usage basis's adjustment and covered cost */
} gc_cp__run;

typedef struct gc_cp__enc {
        size_t limit;                  /* bytes of a chunk's body */
        gc_buf strings;                /* the chunk's string table, comma separated */
        gc_buf sec[GC_CP__N_SECTIONS]; /* its records, comma separated */
        size_t n_str, n_records;       /* in the chunk being built */
        gc_ptrmap tab;        /* the chunk's strings, by interned pointer -> index in the chunk */
        gc_buf rec, rec_strs; /* one record, and its strings new to the chunk */
        gc_buf *bodies;       /* finished chunk bodies */
        size_t n_bodies;      /* at most GC_CHECKPOINT_MAX_CHUNKS */
        size_t counts[GC_CP__N_SECTIONS]; /* records in all */
        uint64_t hash;                    /* of every body, in order */
        gc_cp__run run;                   /* rollup rows being gathered */
        int64_t step;                     /* seconds from one row of a run to the next */
        size_t n_labels;                  /* label keys: values each labelled record carries */
        gc_buf labels;                    /* "label_keys":[...], opening every body; or empty */
        char *err;
        size_t errlen;
} gc_cp__enc;

/* Bytes of the body if closed now, plus `more`. */
static size_t gc_cp__body_len(const gc_cp__enc *e, size_t more)
{
        /* `"strings":[`, `],"usage":[`, ..., `]}` */
        size_t n = 16 + e->labels.len + e->strings.len + more;

        for (size_t s = 0; s < GC_CP__N_SECTIONS; s++)
                n += strlen(gc_cp__section[s]) + 6 + e->sec[s].len;
        return n;
}

/* Finishes the chunk being built (its body) and starts an empty one. */
static int gc_cp__close_chunk(gc_cp__enc *e)
{
        gc_buf body;
        int r;

        if (e->n_bodies >= GC_CHECKPOINT_MAX_CHUNKS) {
                gc_errf(e->err, e->errlen,
                        "checkpoint: more than %d chunks of %zu bytes would be needed",
                        GC_CHECKPOINT_MAX_CHUNKS, e->limit + GC_CP__HEADER_ROOM);
                return -E2BIG;
        }
        gc_buf_init(&body, GC_CHECKPOINT_MAX_CHUNK);
        r = gc_buf_append(&body, e->labels.data ? e->labels.data : "", e->labels.len);
        if (r == 0)
                r = gc_buf_puts(&body, "\"strings\":[");
        if (r == 0)
                r = gc_buf_append(&body, e->strings.data ? e->strings.data : "", e->strings.len);
        for (size_t s = 0; r == 0 && s < GC_CP__N_SECTIONS; s++) {
                r = gc_buf_printf(&body, "],\"%s\":[", gc_cp__section[s]);
                if (r == 0)
                        r = gc_buf_append(&body, e->sec[s].data ? e->sec[s].data : "",
                                          e->sec[s].len);
        }
        if (r == 0)
                r = gc_buf_puts(&body, "]}");
        if (r < 0) {
                gc_buf_free(&body);
                return r;
        }
        e->hash = gc_hash(body.data, body.len, e->hash);
        e->bodies[e->n_bodies++] = body;
        gc_buf_reset(&e->strings);
        for (size_t s = 0; s < GC_CP__N_SECTIONS; s++)
                gc_buf_reset(&e->sec[s]);
        gc_ptrmap_clear(&e->tab);
        e->n_str = 0;
        e->n_records = 0;
        return 0;
}

/* Formats the record into e->rec and its new strings into e->rec_strs; ret_new = their count. */
static int gc_cp__format(gc_cp__enc *e, const char *const *strs, size_t n_strs, const char *nums,
                         const char **ret_new, size_t *ret_n_new)
{
        size_t n_new = 0;
        int r = 0;

        gc_buf_reset(&e->rec);
        gc_buf_reset(&e->rec_strs);
        r = gc_buf_append(&e->rec, "[", 1);
        for (size_t i = 0; r == 0 && i < n_strs; i++) {
                size_t ix = 0, k;

                if (gc_ptrmap_get(&e->tab, strs[i], &ix) < 0) {
                        for (k = 0; k < n_new && ret_new[k] != strs[i]; k++)
                                ;
                        if (k == n_new) {
                                if (e->strings.len || e->rec_strs.len)
                                        r = gc_buf_append(&e->rec_strs, ",", 1);
                                if (r == 0)
                                        r = gc_buf_json_str(&e->rec_strs, strs[i]);
                                ret_new[n_new++] = strs[i];
                        }
                        ix = e->n_str + k;
                }
                if (r == 0)
                        r = gc_buf_printf(&e->rec, i ? ",%zu" : "%zu", ix);
        }
        if (r == 0)
                r = gc_buf_puts(&e->rec, nums);
        if (r == 0)
                r = gc_buf_append(&e->rec, "]", 1);
        *ret_n_new = n_new;
        return r;
}

/* Appends one record (its strings by index into the chunk's table), closing the chunk if full. */
static int gc_cp__record(gc_cp__enc *e, int section, const char *const *strs, const char *nums)
{
        size_t n_strs = gc_cp__n_strs[section] + (gc_cp__labelled(section) ? e->n_labels : 0);
        const char *fresh[GC_CP__MAX_STRS];
        size_t n_new = 0;
        int r;

        for (size_t i = 0; i < n_strs; i++) {
                if (strlen(strs[i]) > GC_CHECKPOINT_MAX_STRING) {
                        gc_errf(e->err, e->errlen,
                                "checkpoint: %s record: a string of %zu bytes (more than %d)",
                                gc_cp__section[section], strlen(strs[i]), GC_CHECKPOINT_MAX_STRING);
                        return -E2BIG;
                }
        }
        for (int attempt = 0;; attempt++) {
                size_t need;

                r = gc_cp__format(e, strs, n_strs, nums, fresh, &n_new);
                if (r < 0)
                        return r;
                need = gc_cp__body_len(e, e->rec_strs.len + e->rec.len + 1);
                if (need <= e->limit)
                        break;
                /* A record always fits an empty chunk: strings are bounded, chunks are not tiny. */
                if (attempt > 0 || e->n_records == 0)
                        return -E2BIG;
                r = gc_cp__close_chunk(e);
                if (r < 0)
                        return r;
        }
        r = gc_buf_append(&e->strings, e->rec_strs.data, e->rec_strs.len);
        for (size_t k = 0; r == 0 && k < n_new; k++)
                r = gc_ptrmap_put(&e->tab, fresh[k], e->n_str + k);
        if (r == 0 && e->sec[section].len)
                r = gc_buf_append(&e->sec[section], ",", 1);
        if (r == 0)
                r = gc_buf_append(&e->sec[section], e->rec.data, e->rec.len);
        if (r < 0)
                return r;
        e->n_str += n_new;
        e->n_records++;
        e->counts[section]++;
        return 0;
}

static const char *gc_cp__s(const char *s)
{
        return s ? s : "";
}

static int gc_cp__time(gc_buf *b, int64_t t)
{
        return t == GC_OPEN ? gc_buf_puts(b, ",null") : gc_buf_printf(b, ",%lld", (long long)t);
}

static int gc_cp__nums(gc_buf *b, const double *v, size_t n)
{
        char num[GC_CP__NUM_LEN];
        int r = 0;

        for (size_t i = 0; r == 0 && i < n; i++) {
                gc_cp__num(v[i], num);
                r = gc_buf_printf(b, ",%s", num);
        }
        return r;
}

static int gc_cp__enc_usage(void *ud, const gc_usage *u)
{
        gc_cp__enc *e = ud;
        const char *strs[GC_CP__MAX_STRS];
        double money[2] = {u->geq, u->price_per_gpu_hour};
        gc_buf nums;
        int r;

        strs[0] = u->pod_uid;
        for (size_t d = 0; d < GC_DIM_COUNT; d++)
                strs[1 + d] = gc_cp__s(u->dims[d]);
        for (size_t i = 0; i < e->n_labels; i++)
                strs[1 + GC_DIM_COUNT + i] = gc_cp__s(u->labels[i]);
        gc_buf_init(&nums, 256);
        r = gc_cp__nums(&nums, money, 2);
        if (r == 0)
                r = gc_cp__time(&nums, u->start);
        if (r == 0)
                r = gc_cp__time(&nums, u->end);
        if (r == 0)
                r = gc_buf_printf(&nums, ",%u", u->flags);
        /* The usage basis's two figures follow only where there are any (docs/checkpoint.md). */
        if (r == 0 && (u->adj_cost != 0 || u->covered_cost != 0)) {
                double use[2] = {u->adj_cost, u->covered_cost};

                r = gc_cp__nums(&nums, use, 2);
        }
        if (r == 0)
                r = gc_cp__record(e, GC_CP__USAGE, strs, nums.data);
        gc_buf_free(&nums);
        return r;
}

static int gc_cp__enc_capacity(void *ud, const gc_capacity *c)
{
        gc_cp__enc *e = ud;
        const char *strs[3] = {c->node, gc_cp__s(c->model), gc_cp__s(c->capacity_type)};
        double money[2] = {c->geq, c->price_per_gpu_hour};
        gc_buf nums;
        int r;

        gc_buf_init(&nums, 256);
        r = gc_cp__nums(&nums, money, 2);
        if (r == 0)
                r = gc_cp__time(&nums, c->start);
        if (r == 0)
                r = gc_cp__time(&nums, c->end);
        if (r == 0)
                r = gc_cp__record(e, GC_CP__CAPACITY, strs, nums.data);
        gc_buf_free(&nums);
        return r;
}

/*
 * Rollup rows come in runs: a pod folded over many hours adds one row per hour with the same
 * figures, and a node's capacity is the same every hour. Consecutive rows of the same key whose
 * hours follow each other and whose figures are equal bit for bit are written as one record
 * with a count of hours, which makes the rollups several times smaller.
 */
static int gc_cp__same_bits(double a, double b)
{
        uint64_t x, y;

        memcpy(&x, &a, sizeof(x));
        memcpy(&y, &b, sizeof(y));
        return x == y;
}

static int gc_cp__run_flush(gc_cp__enc *e)
{
        gc_cp__run *u = &e->run;
        gc_buf nums;
        int r;

        if (u->hours == 0)
                return 0;
        gc_buf_init(&nums, 256);
        r = gc_cp__time(&nums, u->hour);
        if (r == 0)
                r = gc_cp__nums(&nums, u->v, u->v[2] != 0 || u->v[3] != 0 ? 4 : 2);
        if (r == 0 && u->hours > 1)
                r = gc_buf_printf(&nums, ",%zu", u->hours);
        if (r == 0)
                r = gc_cp__record(e, u->section, u->strs, nums.data);
        /* Every hour of the run is a row of the ledger. */
        if (r == 0)
                e->counts[u->section] += u->hours - 1;
        gc_buf_free(&nums);
        u->hours = 0;
        return r;
}

static int gc_cp__run_add(gc_cp__enc *e, int section, const char *const *strs, size_t n_strs,
                          int64_t hour, const double v[4])
{
        gc_cp__run *u = &e->run;
        int same =
            u->hours > 0 && u->section == section && u->hour + (int64_t)u->hours * e->step == hour;
        int r;

        for (size_t i = 0; same && i < 4; i++)
                same = gc_cp__same_bits(u->v[i], v[i]);
        for (size_t i = 0; same && i < n_strs; i++)
                same = u->strs[i] == strs[i];
        if (same) {
                u->hours++;
                return 0;
        }
        r = gc_cp__run_flush(e);
        if (r < 0)
                return r;
        u->section = section;
        for (size_t i = 0; i < n_strs; i++)
                u->strs[i] = strs[i];
        u->hour = hour;
        memcpy(u->v, v, sizeof(u->v));
        u->hours = 1;
        return 0;
}

static int gc_cp__enc_rollup(void *ud, const gc_rollup *rw)
{
        gc_cp__enc *e = ud;
        const char *strs[GC_DIM_POD + GC_LABEL_DIMS];

        for (size_t d = 0; d < GC_DIM_POD; d++)
                strs[d] = gc_cp__s(rw->dims[d]);
        for (size_t i = 0; i < e->n_labels; i++)
                strs[GC_DIM_POD + i] = gc_cp__s(rw->labels[i]);
        double v[4] = {rw->gpu_seconds, rw->cost, rw->adj_cost, rw->covered_cost};

        return gc_cp__run_add(e, GC_CP__ROLLUP, strs, GC_DIM_POD + e->n_labels, rw->hour, v);
}

static int gc_cp__enc_crollup(void *ud, const gc_capacity_rollup *rw)
{
        gc_cp__enc *e = ud;
        const char *strs[3] = {rw->node, gc_cp__s(rw->model), gc_cp__s(rw->capacity_type)};

        double v[4] = {rw->geq_seconds, rw->cost, 0, 0};

        return gc_cp__run_add(e, GC_CP__CROLLUP, strs, 3, rw->hour, v);
}

static int gc_cp__enc_period(void *ud, const gc_period_row *pr)
{
        gc_cp__enc *e = ud;
        const char *strs[GC_CP__MAX_STRS];
        double money[2] = {pr->gpu_seconds, pr->cost};
        gc_buf nums;
        int r;

        strs[0] = gc_cp__s(pr->pod_uid); /* "" for a row of the rest */
        for (size_t d = 0; d < GC_DIM_COUNT; d++)
                strs[1 + d] = gc_cp__s(pr->dims[d]);
        for (size_t i = 0; i < e->n_labels; i++)
                strs[1 + GC_DIM_COUNT + i] = gc_cp__s(pr->labels[i]);
        gc_buf_init(&nums, 256);
        r = gc_buf_printf(&nums, ",%d", (int)pr->unit);
        if (r == 0)
                r = gc_cp__time(&nums, pr->start);
        if (r == 0)
                r = gc_cp__time(&nums, pr->end);
        if (r == 0)
                r = gc_cp__nums(&nums, money, 2);
        if (r == 0)
                r = gc_buf_printf(&nums, ",%u,%u", pr->pods, pr->estimates);
        if (r == 0 && (pr->adj_cost != 0 || pr->covered_cost != 0)) {
                double use[2] = {pr->adj_cost, pr->covered_cost};

                r = gc_cp__nums(&nums, use, 2);
        }
        if (r == 0)
                r = gc_cp__record(e, GC_CP__PERIOD, strs, nums.data);
        gc_buf_free(&nums);
        return r;
}

static void gc_cp__enc_free(gc_cp__enc *e)
{
        gc_buf_free(&e->strings);
        for (size_t s = 0; s < GC_CP__N_SECTIONS; s++)
                gc_buf_free(&e->sec[s]);
        gc_buf_free(&e->rec);
        gc_buf_free(&e->rec_strs);
        gc_buf_free(&e->labels);
        gc_ptrmap_free(&e->tab);
        gc_checkpoint_chunks_free(e->bodies, e->n_bodies);
        e->bodies = NULL;
        e->n_bodies = 0;
}

void gc_checkpoint_chunks_free(gc_buf *chunks, size_t n)
{
        if (!chunks)
                return;
        for (size_t i = 0; i < n; i++)
                gc_buf_free(&chunks[i]);
        free(chunks);
}

/* The arguments every encoder checks first. */
static int gc_cp__check_args(const char *controller, int64_t written_at,
                             const gc_checkpoint_meta *m, size_t chunk_bytes, char *err,
                             size_t errlen)
{
        if (chunk_bytes < GC_CHECKPOINT_MIN_CHUNK || chunk_bytes > GC_CHECKPOINT_MAX_CHUNK) {
                gc_errf(err, errlen, "checkpoint: chunk_bytes %zu not in [%u, %u]", chunk_bytes,
                        GC_CHECKPOINT_MIN_CHUNK, GC_CHECKPOINT_MAX_CHUNK);
                return -EINVAL;
        }
        if (!gc_cp__valid_id(controller)) {
                gc_errf(err, errlen,
                        "checkpoint: controller: must be 1-%d printable ASCII bytes without "
                        "quotes or backslashes",
                        GC_CHECKPOINT_MAX_ID);
                return -EINVAL;
        }
        if (written_at < 0 || written_at > GC_CP__TIME_MAX) {
                gc_errf(err, errlen, "checkpoint: written_at %lld out of range",
                        (long long)written_at);
                return -EINVAL;
        }
        if (!gc_cp__valid_rvs(m->rvs, m->n_rvs)) {
                gc_errf(err, errlen,
                        "checkpoint: resource_versions: at most %d, each resource once, names "
                        "of [a-z0-9.-] and versions of 1-%d printable bytes",
                        GC_CHECKPOINT_MAX_RVS, GC_CHECKPOINT_RV_MAX - 1);
                return -EINVAL;
        }
        if (m->generation >= GC_CHECKPOINT_MAX_GEN) {
                gc_errf(err, errlen, "checkpoint: generation out of range");
                return -EINVAL;
        }
        return 0;
}

/*
 * ,"period_since":N,"coarse_to":N,"bucket_s":N: the first two null when INT64_MIN (every period
 * in period history, no coarsened bucket); bucket_s, the ledger's bucket, is the step of runs.
 */
static int gc_cp__since(gc_buf *b, const int64_t since[3])
{
        static const char *const names[3] = {"period_since", "coarse_to", "bucket_s"};
        int r = 0;

        for (size_t i = 0; r == 0 && i < 3; i++)
                r = since[i] == INT64_MIN
                        ? gc_buf_printf(b, ",\"%s\":null", names[i])
                        : gc_buf_printf(b, ",\"%s\":%lld", names[i], (long long)since[i]);
        return r;
}

static int gc_cp__counts(gc_buf *b, const size_t counts[GC_CP__N_SECTIONS])
{
        return gc_buf_printf(b,
                             ",\"counts\":{\"usage\":%zu,\"capacity\":%zu,\"rollups\":%zu,"
                             "\"capacity_rollups\":%zu,\"periods\":%zu},",
                             counts[0], counts[1], counts[2], counts[3], counts[4]);
}

/* Header + body of every chunk, now that the number of chunks and the write id are known. */
static int gc_cp__assemble(gc_cp__enc *e, int64_t written_at, const char *controller,
                           const gc_ledger_stats *st, const int64_t since[3],
                           const gc_checkpoint_meta *m, gc_buf **ret_chunks)
{
        const gc_checkpoint_rv *rvs = m->rvs;
        size_t n_rvs = m->n_rvs;
        int64_t horizon = st->horizon;
        char when[GC_TIME_LEN], write_id[GC_CHECKPOINT_WRITE_LEN];
        gc_buf *out;
        uint64_t h = e->hash;
        int r = 0;

        h = gc_hash(&written_at, sizeof(written_at), h);
        h = gc_hash(controller, strlen(controller), h);
        h = gc_hash(&horizon, sizeof(horizon), h);
        h = gc_hash(since, 3 * sizeof(*since), h);
        h = gc_hash(e->counts, sizeof(e->counts), h);
        for (size_t i = 0; i < n_rvs; i++) {
                h = gc_hash(rvs[i].resource, strlen(rvs[i].resource) + 1, h);
                h = gc_hash(rvs[i].rv, strlen(rvs[i].rv) + 1, h);
        }
        h = gc_hash(&m->generation, sizeof(m->generation), h);
        snprintf(write_id, sizeof(write_id), "%016llx", (unsigned long long)h);
        gc_time_format(written_at, when);
        out = calloc(e->n_bodies, sizeof(*out));
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < e->n_bodies; i++)
                gc_buf_init(&out[i], GC_CHECKPOINT_MAX_CHUNK);
        for (size_t i = 0; r == 0 && i < e->n_bodies; i++) {
                gc_buf *b = &out[i];

                r = gc_buf_printf(b,
                                  "{\"version\":%d,\"write\":\"%s\",\"chunk\":%zu,\"of\":%zu,"
                                  "\"written_at\":\"%s\",\"controller\":\"%s\",\"horizon\":",
                                  e->n_labels ? GC_CHECKPOINT_VERSION_LABELS
                                              : GC_CHECKPOINT_VERSION,
                                  write_id, i, e->n_bodies, when, controller);
                if (r == 0)
                        r = horizon == INT64_MIN ? gc_buf_puts(b, "null")
                                                 : gc_buf_printf(b, "%lld", (long long)horizon);
                if (r == 0)
                        r = gc_cp__since(b, since);
                if (r == 0)
                        r = gc_cp__counts(b, e->counts);
                for (size_t k = 0; r == 0 && k < n_rvs; k++)
                        r = gc_buf_printf(b, "%s\"%s\":\"%s\"%s",
                                          k == 0 ? "\"resource_versions\":{" : "", rvs[k].resource,
                                          rvs[k].rv, k + 1 == n_rvs ? "}," : ",");
                if (r == 0 && m->generation)
                        r = gc_buf_printf(b, "\"generation\":%llu,",
                                          (unsigned long long)m->generation);
                if (r == 0)
                        r = gc_buf_append(b, e->bodies[i].data, e->bodies[i].len);
                /* The body is no longer needed: keep the peak near one copy of the checkpoint. */
                gc_buf_free(&e->bodies[i]);
        }
        if (r < 0) {
                gc_checkpoint_chunks_free(out, e->n_bodies);
                return r;
        }
        *ret_chunks = out;
        return 0;
}

/* e for bodies of chunk_bytes at most, runs stepping by step, the ledger's label keys lk. */
static int gc_cp__enc_init(gc_cp__enc *e, size_t chunk_bytes, int64_t step, const gc_label_keys *lk,
                           char *err, size_t errlen)
{
        int r = 0;

        memset(e, 0, sizeof(*e));
        e->limit = chunk_bytes - GC_CP__HEADER_ROOM;
        e->step = step;
        e->err = err;
        e->errlen = errlen;
        e->n_labels = lk->n;
        gc_buf_init(&e->labels, 4096);
        for (size_t i = 0; r == 0 && i < lk->n; i++) {
                r = gc_buf_puts(&e->labels, i ? "," : "\"label_keys\":[");
                if (r == 0)
                        r = gc_buf_json_str(&e->labels, lk->key[i]);
        }
        if (r == 0 && lk->n)
                r = gc_buf_puts(&e->labels, "],");
        if (r < 0)
                return r;
        gc_buf_init(&e->strings, chunk_bytes);
        for (size_t s = 0; s < GC_CP__N_SECTIONS; s++)
                gc_buf_init(&e->sec[s], chunk_bytes);
        gc_buf_init(&e->rec, chunk_bytes);
        gc_buf_init(&e->rec_strs, chunk_bytes);
        e->bodies = calloc(GC_CHECKPOINT_MAX_CHUNKS, sizeof(*e->bodies));
        return e->bodies ? 0 : -ENOMEM;
}

int gc_checkpoint_encode(const gc_ledger *l, int64_t written_at, const char *controller,
                         size_t chunk_bytes, gc_buf **ret_chunks, size_t *ret_n, char *err,
                         size_t errlen)
{
        return gc_checkpoint_encode_meta(l, written_at, controller, NULL, chunk_bytes, ret_chunks,
                                         ret_n, err, errlen);
}

int gc_checkpoint_encode_meta(const gc_ledger *l, int64_t written_at, const char *controller,
                              const gc_checkpoint_meta *meta, size_t chunk_bytes,
                              gc_buf **ret_chunks, size_t *ret_n, char *err, size_t errlen)
{
        static const gc_checkpoint_meta none;
        const gc_checkpoint_meta *m = meta ? meta : &none;
        static const gc_ledger_visitor v = {gc_cp__enc_usage, gc_cp__enc_capacity,
                                            gc_cp__enc_rollup, gc_cp__enc_crollup,
                                            gc_cp__enc_period};
        const int64_t since[3] = {gc_ledger_period_since(l), gc_ledger_coarse_to(l),
                                  gc_ledger_granularity(l)};
        gc_ledger_stats st;
        gc_label_keys lk;
        gc_cp__enc e;
        gc_buf *chunks = NULL;
        size_t n = 0;
        int r;

        if (err && errlen)
                err[0] = '\0';
        if (!l || !controller || !ret_chunks || !ret_n) {
                gc_errf(err, errlen, "checkpoint: no ledger, identity or result");
                return -EINVAL;
        }
        if (chunk_bytes == 0)
                chunk_bytes = GC_CHECKPOINT_CHUNK_BYTES;
        r = gc_cp__check_args(controller, written_at, m, chunk_bytes, err, errlen);
        if (r < 0)
                return r;
        gc_ledger_label_keys(l, &lk);
        r = gc_cp__enc_init(&e, chunk_bytes, gc_ledger_granularity(l), &lk, err, errlen);
        if (r < 0)
                goto finish;
        gc_ledger_stats_get(l, &st);
        r = gc_ledger_visit(l, &v, &e);
        if (r == 0)
                r = gc_cp__run_flush(&e);
        /* The last chunk, or the only one of an empty ledger. */
        if (r == 0 && (e.n_records > 0 || e.n_bodies == 0))
                r = gc_cp__close_chunk(&e);
        if (r == 0)
                r = gc_cp__assemble(&e, written_at, controller, &st, since, m, &chunks);
        if (r == 0) {
                n = e.n_bodies;
                *ret_chunks = chunks;
                *ret_n = n;
        }
finish:
        if (r < 0 && err && errlen && !err[0])
                gc_errf(err, errlen, "checkpoint: %s", strerror(-r));
        gc_cp__enc_free(&e);
        return r;
}

/* ---- incremental writes (version 2) ------------------------------------------------------- */

/* Rollup rows of one UTC day go into their own stream: a closed day's parts never change. */
#define GC_CP__DAY ((int64_t)86400)

/* One stream of records cut into parts (a usage bucket, the capacity, or one day's rollups). */
typedef struct gc_cp__stream {
        int64_t key; /* the day, for rollup streams */
        gc_cp__enc e;
} gc_cp__stream;

typedef struct gc_cp__incr {
        size_t chunk_bytes;
        int64_t step;     /* the ledger's bucket: the step of runs */
        gc_label_keys lk; /* the ledger's label keys, named in every part */
        gc_cp__stream *fixed[GC_CHECKPOINT_USAGE_BUCKETS + 1]; /* usage buckets, then capacity */
        gc_cp__stream *days;                                   /* sorted by key */
        size_t n_days, cap_days;
        int too_many; /* more days than parts allowed */
        char *err;
        size_t errlen;
} gc_cp__incr;

/* A new stream; NULL when out of memory. */
static gc_cp__stream *gc_cp__stream_new(const gc_cp__incr *x, int64_t key)
{
        gc_cp__stream *st = calloc(1, sizeof(*st));

        if (!st)
                return NULL;
        st->key = key;
        if (gc_cp__enc_init(&st->e, x->chunk_bytes, x->step, &x->lk, x->err, x->errlen) < 0) {
                gc_cp__enc_free(&st->e);
                free(st);
                return NULL;
        }
        return st;
}

static gc_cp__stream *gc_cp__stream_free(gc_cp__stream *st)
{
        if (st) {
                gc_cp__enc_free(&st->e);
                free(st);
        }
        return NULL;
}

/* The stream of a usage bucket or of the capacity, made on first use. */
static gc_cp__enc *gc_cp__fixed(gc_cp__incr *x, size_t i)
{
        if (!x->fixed[i])
                x->fixed[i] = gc_cp__stream_new(x, 0);
        return x->fixed[i] ? &x->fixed[i]->e : NULL;
}

/* The stream of the day that holds `hour`, made on first use (may reallocate x->days). */
static gc_cp__enc *gc_cp__day(gc_cp__incr *x, int64_t hour)
{
        int64_t day = hour >= 0 ? hour / GC_CP__DAY : -1 - (-1 - hour) / GC_CP__DAY;
        size_t lo = 0, hi = x->n_days;
        gc_cp__stream *st;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (x->days[mid].key < day)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo < x->n_days && x->days[lo].key == day)
                return &x->days[lo].e;
        if (x->n_days == x->cap_days) {
                size_t nc = x->cap_days ? x->cap_days * 2 : 64;
                gc_cp__stream *p;

                if (nc > GC_CHECKPOINT_MAX_PARTS)
                        nc = GC_CHECKPOINT_MAX_PARTS;
                if (nc <= x->n_days) {
                        x->too_many = 1;
                        gc_errf(x->err, x->errlen, "checkpoint: rollups of more than %d days",
                                GC_CHECKPOINT_MAX_PARTS);
                        return NULL;
                }
                p = realloc(x->days, nc * sizeof(*p));
                if (!p)
                        return NULL;
                x->days = p;
                x->cap_days = nc;
        }
        memmove(&x->days[lo + 1], &x->days[lo], (x->n_days - lo) * sizeof(*x->days));
        st = &x->days[lo];
        st->key = day;
        x->n_days++;
        if (gc_cp__enc_init(&st->e, x->chunk_bytes, x->step, &x->lk, x->err, x->errlen) < 0)
                return NULL; /* the half-made stream is freed with the others */
        return &st->e;
}

static int gc_cp__incr_usage(void *ud, const gc_usage *u)
{
        gc_cp__incr *x = ud;
        size_t b =
            (size_t)(gc_hash(u->pod_uid, strlen(u->pod_uid), 0) % GC_CHECKPOINT_USAGE_BUCKETS);
        gc_cp__enc *e = gc_cp__fixed(x, b);

        return e ? gc_cp__enc_usage(e, u) : -ENOMEM;
}

static int gc_cp__incr_capacity(void *ud, const gc_capacity *c)
{
        gc_cp__incr *x = ud;
        gc_cp__enc *e = gc_cp__fixed(x, GC_CHECKPOINT_USAGE_BUCKETS);

        return e ? gc_cp__enc_capacity(e, c) : -ENOMEM;
}

static int gc_cp__incr_rollup(void *ud, const gc_rollup *rw)
{
        gc_cp__incr *x = ud;
        gc_cp__enc *e = gc_cp__day(x, rw->hour);

        return e ? gc_cp__enc_rollup(e, rw) : x->too_many ? -E2BIG : -ENOMEM;
}

static int gc_cp__incr_crollup(void *ud, const gc_capacity_rollup *rw)
{
        gc_cp__incr *x = ud;
        gc_cp__enc *e = gc_cp__day(x, rw->hour);

        return e ? gc_cp__enc_crollup(e, rw) : x->too_many ? -E2BIG : -ENOMEM;
}

/* A period's rows go into the stream of the UTC day it starts on, beside that day's rollups. */
static int gc_cp__incr_period(void *ud, const gc_period_row *pr)
{
        gc_cp__incr *x = ud;
        gc_cp__enc *e = gc_cp__day(x, pr->start);

        return e ? gc_cp__enc_period(e, pr) : x->too_many ? -E2BIG : -ENOMEM;
}

static void gc_cp__part_hash(const char *data, size_t len, char out[GC_CHECKPOINT_PART_HASH])
{
        uint64_t a = gc_hash(data, len, 0);
        uint64_t b = gc_hash(&len, sizeof(len), gc_hash(data, len, a ^ 0x9e3779b97f4a7c15ull));

        snprintf(out, GC_CHECKPOINT_PART_HASH, "%016llx%016llx", (unsigned long long)a,
                 (unsigned long long)b);
}

void gc_checkpoint_write_release(gc_checkpoint_write *w)
{
        if (!w)
                return;
        gc_buf_free(&w->manifest);
        for (size_t i = 0; w->parts && i < w->n_parts; i++)
                gc_buf_free(&w->parts[i].data);
        free(w->parts);
        w->parts = NULL;
        w->n_parts = 0;
}

/* Moves a stream's finished bodies into w as parts "{" + body, named by their hash. */
static int gc_cp__take_parts(gc_cp__enc *e, gc_checkpoint_write *w,
                             size_t counts[GC_CP__N_SECTIONS], char *err, size_t errlen)
{
        int r = gc_cp__run_flush(e);

        if (r == 0 && e->n_records > 0)
                r = gc_cp__close_chunk(e);
        for (size_t s = 0; s < GC_CP__N_SECTIONS; s++)
                counts[s] += e->counts[s];
        for (size_t i = 0; r == 0 && i < e->n_bodies; i++) {
                gc_checkpoint_part *p;
                char hash[GC_CHECKPOINT_PART_HASH];

                if (w->n_parts >= GC_CHECKPOINT_MAX_PARTS) {
                        gc_errf(err, errlen, "checkpoint: more than %d parts would be needed",
                                GC_CHECKPOINT_MAX_PARTS);
                        return -E2BIG;
                }
                p = &w->parts[w->n_parts];
                gc_buf_init(&p->data, GC_CHECKPOINT_MAX_CHUNK);
                r = gc_buf_append(&p->data, "{", 1);
                if (r == 0)
                        r = gc_buf_append(&p->data, e->bodies[i].data, e->bodies[i].len);
                if (r < 0) {
                        gc_buf_free(&p->data);
                        return r;
                }
                w->n_parts++;
                gc_cp__part_hash(p->data.data, p->data.len, hash);
                snprintf(p->name, sizeof(p->name), "%s%s", GC_CHECKPOINT_PART_PREFIX, hash);
                gc_buf_free(&e->bodies[i]);
        }
        return r;
}

/* The manifest: the header of version 1 (chunk 0 of n_parts + 1) and the parts it names. */
static int gc_cp__manifest(gc_checkpoint_write *w, const size_t counts[GC_CP__N_SECTIONS],
                           int64_t written_at, const char *controller, int64_t horizon,
                           const int64_t since[3], size_t n_labels, const gc_checkpoint_meta *m)
{
        const size_t pl = strlen(GC_CHECKPOINT_PART_PREFIX);
        char when[GC_TIME_LEN], write_id[GC_CHECKPOINT_WRITE_LEN];
        gc_buf *b = &w->manifest;
        uint64_t h = 0;
        int r;

        for (size_t i = 0; i < w->n_parts; i++)
                h = gc_hash(w->parts[i].name, strlen(w->parts[i].name) + 1, h);
        h = gc_hash(&written_at, sizeof(written_at), h);
        h = gc_hash(controller, strlen(controller), h);
        h = gc_hash(&horizon, sizeof(horizon), h);
        h = gc_hash(since, 3 * sizeof(*since), h);
        h = gc_hash(counts, GC_CP__N_SECTIONS * sizeof(*counts), h);
        for (size_t i = 0; i < m->n_rvs; i++) {
                h = gc_hash(m->rvs[i].resource, strlen(m->rvs[i].resource) + 1, h);
                h = gc_hash(m->rvs[i].rv, strlen(m->rvs[i].rv) + 1, h);
        }
        h = gc_hash(&m->generation, sizeof(m->generation), h);
        snprintf(write_id, sizeof(write_id), "%016llx", (unsigned long long)h);
        gc_time_format(written_at, when);
        gc_buf_init(b, GC_CHECKPOINT_MAX_CHUNK);
        r = gc_buf_printf(b,
                          "{\"version\":%d,\"write\":\"%s\",\"chunk\":0,\"of\":%zu,"
                          "\"written_at\":\"%s\",\"controller\":\"%s\",\"horizon\":",
                          n_labels ? GC_CHECKPOINT_VERSION_INCR_LABELS : GC_CHECKPOINT_VERSION_INCR,
                          write_id, w->n_parts + 1, when, controller);
        if (r == 0)
                r = horizon == INT64_MIN ? gc_buf_puts(b, "null")
                                         : gc_buf_printf(b, "%lld", (long long)horizon);
        if (r == 0)
                r = gc_cp__since(b, since);
        if (r == 0)
                r = gc_cp__counts(b, counts);
        for (size_t k = 0; r == 0 && k < m->n_rvs; k++)
                r = gc_buf_printf(b, "%s\"%s\":\"%s\"%s", k == 0 ? "\"resource_versions\":{" : "",
                                  m->rvs[k].resource, m->rvs[k].rv, k + 1 == m->n_rvs ? "}," : ",");
        if (r == 0 && m->generation)
                r = gc_buf_printf(b, "\"generation\":%llu,", (unsigned long long)m->generation);
        if (r == 0)
                r = gc_buf_puts(b, "\"parts\":[");
        for (size_t i = 0; r == 0 && i < w->n_parts; i++)
                r = gc_buf_printf(b, "%s[\"%s\",%zu]", i ? "," : "", w->parts[i].name + pl,
                                  w->parts[i].data.len);
        if (r == 0)
                r = gc_buf_puts(b, "]}");
        return r;
}

int gc_checkpoint_encode_incr(const gc_ledger *l, int64_t written_at, const char *controller,
                              const gc_checkpoint_meta *meta, size_t chunk_bytes,
                              gc_checkpoint_write *ret, char *err, size_t errlen)
{
        static const gc_checkpoint_meta none;
        const gc_checkpoint_meta *m = meta ? meta : &none;
        static const gc_ledger_visitor v = {gc_cp__incr_usage, gc_cp__incr_capacity,
                                            gc_cp__incr_rollup, gc_cp__incr_crollup,
                                            gc_cp__incr_period};
        const int64_t since[3] = {gc_ledger_period_since(l), gc_ledger_coarse_to(l),
                                  gc_ledger_granularity(l)};
        size_t counts[GC_CP__N_SECTIONS] = {0};
        gc_checkpoint_write w;
        gc_ledger_stats st;
        gc_cp__incr x;
        int r;

        memset(&w, 0, sizeof(w));
        memset(&x, 0, sizeof(x));
        if (err && errlen)
                err[0] = '\0';
        if (!l || !controller || !ret) {
                gc_errf(err, errlen, "checkpoint: no ledger, identity or result");
                return -EINVAL;
        }
        if (chunk_bytes == 0)
                chunk_bytes = GC_CHECKPOINT_CHUNK_BYTES;
        r = gc_cp__check_args(controller, written_at, m, chunk_bytes, err, errlen);
        if (r < 0)
                return r;
        x.chunk_bytes = chunk_bytes;
        x.step = gc_ledger_granularity(l);
        gc_ledger_label_keys(l, &x.lk);
        x.err = err;
        x.errlen = errlen;
        w.parts = calloc(GC_CHECKPOINT_MAX_PARTS, sizeof(*w.parts));
        if (!w.parts) {
                r = -ENOMEM;
                goto finish;
        }
        gc_ledger_stats_get(l, &st);
        r = gc_ledger_visit(l, &v, &x);
        /* Usage buckets, the capacity, then the days in order: the order a restore puts them. */
        for (size_t i = 0; r == 0 && i <= GC_CHECKPOINT_USAGE_BUCKETS; i++)
                if (x.fixed[i])
                        r = gc_cp__take_parts(&x.fixed[i]->e, &w, counts, err, errlen);
        for (size_t i = 0; r == 0 && i < x.n_days; i++)
                r = gc_cp__take_parts(&x.days[i].e, &w, counts, err, errlen);
        if (r == 0)
                r = gc_cp__manifest(&w, counts, written_at, controller, st.horizon, since, x.lk.n,
                                    m);
finish:
        for (size_t i = 0; i <= GC_CHECKPOINT_USAGE_BUCKETS; i++)
                x.fixed[i] = gc_cp__stream_free(x.fixed[i]);
        for (size_t i = 0; i < x.n_days; i++)
                gc_cp__enc_free(&x.days[i].e);
        free(x.days);
        if (r < 0) {
                if (err && errlen && !err[0])
                        gc_errf(err, errlen, "checkpoint: %s", strerror(-r));
                gc_checkpoint_write_release(&w);
                return r;
        }
        *ret = w;
        return 0;
}

unsigned char *gc_checkpoint_parts_to_put(const gc_checkpoint_write *w, const char *const *existing,
                                          size_t n_existing, size_t *ret_n)
{
        unsigned char *put;
        size_t n = 0;

        if (!w || (n_existing && !existing) || !ret_n)
                return NULL;
        put = calloc(w->n_parts + 1, 1);
        if (!put)
                return NULL;
        for (size_t i = 0; i < w->n_parts; i++) {
                int have = 0;

                for (size_t k = 0; !have && k < n_existing; k++)
                        have = strcmp(existing[k], w->parts[i].name) == 0;
                put[i] = (unsigned char)!have;
                n += !have;
        }
        *ret_n = n;
        return put;
}

int gc_checkpoint_is_part_name(const char *name)
{
        size_t pl = strlen(GC_CHECKPOINT_PART_PREFIX);

        if (!name || strncmp(name, GC_CHECKPOINT_PART_PREFIX, pl) != 0 ||
            strlen(name + pl) != GC_CHECKPOINT_PART_HASH - 1)
                return 0;
        for (const char *p = name + pl; *p; p++)
                if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                        return 0;
        return 1;
}

int gc_checkpoint_is_garbage(const char *name, size_t slot, char (*keep)[GC_CHECKPOINT_NAME_MAX],
                             size_t n_keep)
{
        size_t s, k;

        if (gc_checkpoint_is_part_name(name)) {
                for (size_t i = 0; i < n_keep; i++)
                        if (strcmp(keep[i], name) == 0)
                                return 0;
                return 1;
        }
        return gc_checkpoint_parse_name(name, &s, &k) == 0 && s == slot && k > 0;
}

/* ---- decoding ------------------------------------------------------------------------------- */

static int gc_cp__int(const cJSON *v, int64_t lo, int64_t hi, int64_t *ret)
{
        double d;

        if (!cJSON_IsNumber(v))
                return -EINVAL;
        d = v->valuedouble;
        /* Every integer here is below 2^53, where doubles are exact. */
        if (!isfinite(d) || d != floor(d) || d < (double)lo || d > (double)hi)
                return -EINVAL;
        *ret = (int64_t)d;
        return 0;
}

static const cJSON *gc_cp__member(const cJSON *o, const char *name)
{
        return cJSON_GetObjectItemCaseSensitive(o, name);
}

static int gc_cp__is_hex16(const char *s)
{
        if (strlen(s) != 16)
                return 0;
        for (size_t i = 0; i < 16; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return 0;
        return 1;
}

/* version: the one written, and the current form it reads as. */
static int gc_cp__header_version(const cJSON *root, gc_checkpoint_header *h, char *err,
                                 size_t errlen)
{
        const cJSON *v;
        int64_t x;

        v = gc_cp__member(root, "version");
        if (gc_cp__int(v, 0, INT32_MAX, &x) < 0) {
                gc_errf(err, errlen, "version: missing or not an integer");
                return -EINVAL;
        }
        h->written_version = (int)x;
        /* Writes of earlier builds (1 and 3, 2 and 4) read as their current forms (5, 6). */
        /* 7 and 8: 5 and 6 with label values, which the bodies themselves name. */
        if (x == GC_CHECKPOINT_VERSION_V1 || x == GC_CHECKPOINT_VERSION_V3 ||
            x == GC_CHECKPOINT_VERSION_LABELS)
                x = GC_CHECKPOINT_VERSION;
        else if (x == GC_CHECKPOINT_VERSION_V2 || x == GC_CHECKPOINT_VERSION_V4 ||
                 x == GC_CHECKPOINT_VERSION_INCR_LABELS)
                x = GC_CHECKPOINT_VERSION_INCR;
        else if (x != GC_CHECKPOINT_VERSION && x != GC_CHECKPOINT_VERSION_INCR) {
                gc_errf(err, errlen, "version: %lld is not supported (this build reads %d to %d)",
                        (long long)x, GC_CHECKPOINT_VERSION_V1, GC_CHECKPOINT_VERSION_INCR_LABELS);
                return -EINVAL;
        }
        h->version = (int)x;
        return 0;
}

/* The history's edges: horizon, period_since, bucket_s, coarse_to (later builds' additions). */
static int gc_cp__header_edges(const cJSON *root, gc_checkpoint_header *h, char *err, size_t errlen)
{
        const cJSON *v;

        v = gc_cp__member(root, "horizon");
        if (cJSON_IsNull(v)) {
                h->horizon = INT64_MIN;
        } else if (gc_cp__int(v, 0, GC_CP__TIME_MAX, &h->horizon) < 0 ||
                   h->horizon % GC_CP__BUCKET != 0) {
                gc_errf(err, errlen,
                        "horizon: must be null or a whole quarter hour in UTC seconds");
                return -EINVAL;
        }
        /* Absent in a write of a build before period history: periods start at its horizon. */
        v = gc_cp__member(root, "period_since");
        if (!v) {
                h->period_since = h->horizon;
        } else if (cJSON_IsNull(v)) {
                h->period_since = INT64_MIN;
        } else if (gc_cp__int(v, 0, GC_CP__TIME_MAX, &h->period_since) < 0) {
                gc_errf(err, errlen, "period_since: must be null or UTC seconds");
                return -EINVAL;
        }
        /* Absent in a write of a build before coarsening: runs of hours. */
        v = gc_cp__member(root, "bucket_s");
        if (!v) {
                h->bucket_s = GC_CP__HOUR;
        } else if (gc_cp__int(v, GC_CP__BUCKET, GC_CP__HOUR, &h->bucket_s) < 0 ||
                   GC_CP__HOUR % h->bucket_s != 0 || h->bucket_s % GC_CP__BUCKET != 0) {
                gc_errf(err, errlen, "bucket_s: must be 900, 1800 or 3600");
                return -EINVAL;
        }
        /* Absent in a write of a build before coarsening: no bucket is coarsened. */
        v = gc_cp__member(root, "coarse_to");
        if (!v || cJSON_IsNull(v)) {
                h->coarse_to = INT64_MIN;
        } else if (gc_cp__int(v, 0, GC_CP__TIME_MAX, &h->coarse_to) < 0 ||
                   h->coarse_to % GC_CP__BUCKET != 0) {
                gc_errf(err, errlen,
                        "coarse_to: must be null or a whole quarter hour in UTC seconds");
                return -EINVAL;
        }
        return 0;
}

/* counts: the records of each section. */
static int gc_cp__header_counts(const cJSON *root, gc_checkpoint_header *h, char *err,
                                size_t errlen)
{
        const cJSON *counts;
        int64_t x;

        counts = gc_cp__member(root, "counts");
        if (!cJSON_IsObject(counts)) {
                gc_errf(err, errlen, "counts: missing or not an object");
                return -EINVAL;
        }
        for (size_t s = 0; s < GC_CP__N_SECTIONS; s++) {
                size_t *dst[GC_CP__N_SECTIONS] = {&h->usage, &h->capacity, &h->rollups,
                                                  &h->capacity_rollups, &h->periods};
                const cJSON *c = gc_cp__member(counts, gc_cp__section[s]);

                /* A write of a build before period history has none. */
                if (s == GC_CP__PERIOD && !c) {
                        *dst[s] = 0;
                        continue;
                }
                if (gc_cp__int(c, 0, INT32_MAX, &x) < 0) {
                        gc_errf(err, errlen, "counts.%s: must be a count", gc_cp__section[s]);
                        return -EINVAL;
                }
                *dst[s] = (size_t)x;
        }
        return 0;
}

/* resource_versions: where each watch resumes. */
static int gc_cp__header_rvs(const cJSON *root, gc_checkpoint_header *h, char *err, size_t errlen)
{
        const cJSON *v;

        /* Optional: a write by an earlier build keeps no resume points. */
        v = gc_cp__member(root, "resource_versions");
        if (v && !cJSON_IsObject(v)) {
                gc_errf(err, errlen, "resource_versions: must be an object");
                return -EINVAL;
        }
        for (const cJSON *m = v ? v->child : NULL; m; m = m->next) {
                gc_checkpoint_rv *d;

                if (h->n_rvs == GC_CHECKPOINT_MAX_RVS || !m->string ||
                    strlen(m->string) >= sizeof(d->resource) || !cJSON_IsString(m) ||
                    strlen(m->valuestring) >= sizeof(d->rv)) {
                        gc_errf(err, errlen,
                                "resource_versions: at most %d strings of at most %d bytes",
                                GC_CHECKPOINT_MAX_RVS, GC_CHECKPOINT_RV_MAX - 1);
                        return -EINVAL;
                }
                d = &h->rvs[h->n_rvs++];
                gc_strlcpy(d->resource, m->string, sizeof(d->resource));
                gc_strlcpy(d->rv, m->valuestring, sizeof(d->rv));
        }
        if (!gc_cp__valid_rvs(h->rvs, h->n_rvs)) {
                gc_errf(err, errlen,
                        "resource_versions: names of [a-z0-9.-], printable versions, each "
                        "resource once");
                return -EINVAL;
        }
        return 0;
}

static int gc_cp__header(const cJSON *root, gc_checkpoint_header *h, char *err, size_t errlen)
{
        const cJSON *v;
        int64_t x, max_of;

        memset(h, 0, sizeof(*h));
        if (!cJSON_IsObject(root)) {
                gc_errf(err, errlen, "not a JSON object");
                return -EINVAL;
        }
        if (gc_cp__header_version(root, h, err, errlen) < 0)
                return -EINVAL;
        v = gc_cp__member(root, "write");
        if (!cJSON_IsString(v) || !gc_cp__is_hex16(v->valuestring)) {
                gc_errf(err, errlen, "write: must be 16 lower-case hex digits");
                return -EINVAL;
        }
        memcpy(h->write_id, v->valuestring, GC_CHECKPOINT_WRITE_LEN);
        max_of = h->version == GC_CHECKPOINT_VERSION ? GC_CHECKPOINT_MAX_CHUNKS
                                                     : GC_CHECKPOINT_MAX_PARTS + 1;
        if (gc_cp__int(gc_cp__member(root, "of"), 1, max_of, &x) < 0) {
                gc_errf(err, errlen, "of: must be an integer in [1, %lld]", (long long)max_of);
                return -EINVAL;
        }
        h->of = (size_t)x;
        if (gc_cp__int(gc_cp__member(root, "chunk"), 0, GC_CHECKPOINT_MAX_CHUNKS - 1, &x) < 0) {
                gc_errf(err, errlen, "chunk: must be an integer in [0, %d]",
                        GC_CHECKPOINT_MAX_CHUNKS - 1);
                return -EINVAL;
        }
        h->chunk = (size_t)x;
        if (h->version == GC_CHECKPOINT_VERSION_INCR && h->chunk != 0) {
                gc_errf(err, errlen, "chunk: a manifest is chunk 0");
                return -EINVAL;
        }
        v = gc_cp__member(root, "written_at");
        if (!cJSON_IsString(v) ||
            gc_time_parse(v->valuestring, strlen(v->valuestring), &h->written_at) < 0 ||
            h->written_at < 0 || h->written_at > GC_CP__TIME_MAX) {
                gc_errf(err, errlen, "written_at: must be an RFC 3339 time");
                return -EINVAL;
        }
        v = gc_cp__member(root, "controller");
        if (!cJSON_IsString(v) || !gc_cp__valid_id(v->valuestring)) {
                gc_errf(err, errlen, "controller: must be 1-%d printable ASCII bytes",
                        GC_CHECKPOINT_MAX_ID);
                return -EINVAL;
        }
        gc_strlcpy(h->controller, v->valuestring, sizeof(h->controller));
        if (gc_cp__header_edges(root, h, err, errlen) < 0)
                return -EINVAL;
        if (gc_cp__header_counts(root, h, err, errlen) < 0)
                return -EINVAL;
        if (h->chunk >= h->of) {
                gc_errf(err, errlen, "chunk: %zu is not below of (%zu)", h->chunk, h->of);
                return -EINVAL;
        }
        if (gc_cp__header_rvs(root, h, err, errlen) < 0)
                return -EINVAL;
        v = gc_cp__member(root, "generation");
        if (v) {
                if (gc_cp__int(v, 1, (int64_t)GC_CHECKPOINT_MAX_GEN - 1, &x) < 0) {
                        gc_errf(err, errlen, "generation: must be a positive integer");
                        return -EINVAL;
                }
                h->generation = (uint64_t)x;
        }
        return 0;
}

static cJSON *gc_cp__parse(const char *data, size_t len, char *err, size_t errlen)
{
        cJSON *root;

        if (!data) {
                gc_errf(err, errlen, "no data");
                return NULL;
        }
        if (len > GC_CHECKPOINT_MAX_CHUNK) {
                gc_errf(err, errlen, "%zu bytes, more than the %u a chunk may have", len,
                        GC_CHECKPOINT_MAX_CHUNK);
                return NULL;
        }
        root = cJSON_ParseWithLength(data, len);
        if (!root)
                gc_errf(err, errlen, "not valid JSON");
        return root;
}

int gc_checkpoint_peek(const char *data, size_t len, gc_checkpoint_header *ret, char *err,
                       size_t errlen)
{
        gc_checkpoint_header h;
        cJSON *root;
        int r;

        if (!ret)
                return -EINVAL;
        root = gc_cp__parse(data, len, err, errlen);
        if (!root)
                return -EINVAL;
        r = gc_cp__header(root, &h, err, errlen);
        cJSON_Delete(root);
        if (r == 0)
                *ret = h;
        return r;
}

/* A part a manifest names: its content hash and length. */
typedef struct gc_cp__ref {
        char hash[GC_CHECKPOINT_PART_HASH];
        size_t len;
} gc_cp__ref;

/* The of - 1 parts a manifest lists, into refs (room for GC_CHECKPOINT_MAX_PARTS). */
static int gc_cp__refs(const cJSON *root, size_t of, gc_cp__ref *refs, char *err, size_t errlen)
{
        const cJSON *parts = gc_cp__member(root, "parts"), *v;
        size_t i = 0;

        if (!cJSON_IsArray(parts) || (size_t)cJSON_GetArraySize(parts) != of - 1) {
                gc_errf(err, errlen, "parts: must be an array of of - 1 (%zu) parts", of - 1);
                return -EINVAL;
        }
        cJSON_ArrayForEach(v, parts)
        {
                const cJSON *h = cJSON_GetArrayItem(v, 0);
                char name[GC_CHECKPOINT_NAME_MAX];
                int64_t len;

                if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 || !cJSON_IsString(h) ||
                    strlen(h->valuestring) != GC_CHECKPOINT_PART_HASH - 1 ||
                    gc_cp__int(cJSON_GetArrayItem(v, 1), 2, GC_CHECKPOINT_MAX_CHUNK, &len) < 0) {
                        gc_errf(err, errlen,
                                "parts[%zu]: must be [\"<32 hex digits>\", bytes up to %u]", i,
                                GC_CHECKPOINT_MAX_CHUNK);
                        return -EINVAL;
                }
                snprintf(name, sizeof(name), "%s%s", GC_CHECKPOINT_PART_PREFIX, h->valuestring);
                if (!gc_checkpoint_is_part_name(name)) {
                        gc_errf(err, errlen, "parts[%zu]: not 32 lower-case hex digits", i);
                        return -EINVAL;
                }
                for (size_t k = 0; k < i; k++) {
                        if (strcmp(refs[k].hash, h->valuestring) == 0) {
                                gc_errf(err, errlen, "parts[%zu]: named twice", i);
                                return -EINVAL;
                        }
                }
                memcpy(refs[i].hash, h->valuestring, GC_CHECKPOINT_PART_HASH);
                refs[i].len = (size_t)len;
                i++;
        }
        return 0;
}

int gc_checkpoint_manifest_parts(const char *data, size_t len,
                                 char (*ret_names)[GC_CHECKPOINT_NAME_MAX], size_t max,
                                 size_t *ret_n)
{
        gc_checkpoint_header h;
        gc_cp__ref *refs = NULL;
        cJSON *root;
        int r;

        if (!ret_n || (max && !ret_names))
                return -EINVAL;
        root = gc_cp__parse(data, len, NULL, 0);
        if (!root)
                return -EINVAL;
        r = gc_cp__header(root, &h, NULL, 0);
        if (r == 0 && h.chunk != 0)
                r = -EINVAL;
        if (r == 0 && h.version == GC_CHECKPOINT_VERSION) {
                *ret_n = 0;
                goto finish;
        }
        if (r == 0 && h.of - 1 > max)
                r = -E2BIG;
        if (r == 0) {
                refs = calloc(h.of, sizeof(*refs));
                r = refs ? gc_cp__refs(root, h.of, refs, NULL, 0) : -ENOMEM;
        }
        if (r == 0) {
                for (size_t i = 0; i + 1 < h.of; i++)
                        snprintf(ret_names[i], GC_CHECKPOINT_NAME_MAX, "%s%s",
                                 GC_CHECKPOINT_PART_PREFIX, refs[i].hash);
                *ret_n = h.of - 1;
        }
finish:
        free(refs);
        cJSON_Delete(root);
        return r;
}

/* One record's fields, read from its JSON array. */
typedef struct gc_cp__fields {
        const char *s[GC_CP__MAX_STRS];
        double d[5];
        int64_t t[2];
        uint32_t flags;
        uint32_t n[3]; /* counts: a period's unit, pods, estimates */
        size_t n_count;
        size_t hours;  /* rollups: the figures repeat for this many hours from t[0] */
        double use[2]; /* the usage basis's adjustment and covered cost, when written */
} gc_cp__fields;

static int gc_cp__time_field(const cJSON *v, int open_ok, int64_t *ret)
{
        if (open_ok && cJSON_IsNull(v)) {
                *ret = GC_OPEN;
                return 0;
        }
        return gc_cp__int(v, 0, GC_CP__TIME_MAX, ret);
}

static int gc_cp__money(const cJSON *v, double *ret)
{
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
                return -EINVAL;
        *ret = v->valuedouble;
        return 0;
}

/* What each number of a record is, in order (docs/checkpoint.md). */
typedef enum gc_cp__kind {
        GC_CP__MONEY,
        GC_CP__START,
        GC_CP__END,
        GC_CP__HOUR_START,
        GC_CP__FLAGS,
        GC_CP__PERIOD_END, /* never null */
        GC_CP__COUNT
} gc_cp__kind;

typedef struct gc_cp__num_spec {
        const char *name;
        gc_cp__kind kind;
} gc_cp__num_spec;

static const gc_cp__num_spec gc_cp__nums_of[GC_CP__N_SECTIONS][GC_CP__MAX_NUMS] = {
    {{"geq", GC_CP__MONEY},
     {"usd_per_gpu_hour", GC_CP__MONEY},
     {"start", GC_CP__START},
     {"end", GC_CP__END},
     {"flags", GC_CP__FLAGS}},
    {{"geq", GC_CP__MONEY},
     {"usd_per_gpu_hour", GC_CP__MONEY},
     {"start", GC_CP__START},
     {"end", GC_CP__END}},
    {{"hour", GC_CP__HOUR_START}, {"gpu_seconds", GC_CP__MONEY}, {"cost_usd", GC_CP__MONEY}},
    {{"hour", GC_CP__HOUR_START}, {"geq_seconds", GC_CP__MONEY}, {"cost_usd", GC_CP__MONEY}},
    {{"unit", GC_CP__COUNT},
     {"start", GC_CP__START},
     {"end", GC_CP__PERIOD_END},
     {"gpu_seconds", GC_CP__MONEY},
     {"cost_usd", GC_CP__MONEY},
     {"pods", GC_CP__COUNT},
     {"estimates", GC_CP__COUNT}},
};

/* Reads one number of a record into f; money fills d[] in order, times t[0] then t[1]. */
static int gc_cp__read_num(const cJSON *v, gc_cp__kind kind, gc_cp__fields *f, size_t *n_money)
{
        int64_t x;

        switch (kind) {
        case GC_CP__MONEY:
                return gc_cp__money(v, &f->d[(*n_money)++]);
        case GC_CP__START:
                return gc_cp__time_field(v, 0, &f->t[0]);
        case GC_CP__END:
                return gc_cp__time_field(v, 1, &f->t[1]);
        case GC_CP__HOUR_START:
                if (gc_cp__time_field(v, 0, &f->t[0]) < 0 || f->t[0] % GC_CP__BUCKET != 0)
                        return -EINVAL;
                return 0;
        case GC_CP__PERIOD_END:
                return gc_cp__time_field(v, 0, &f->t[1]);
        case GC_CP__COUNT:
                if (gc_cp__int(v, 0, UINT32_MAX, &x) < 0 || f->n_count >= 3)
                        return -EINVAL;
                f->n[f->n_count++] = (uint32_t)x;
                return 0;
        default:
                if (gc_cp__int(v, 0, UINT32_MAX, &x) < 0)
                        return -EINVAL;
                f->flags = (uint32_t)x;
                return 0;
        }
}

/* Reads and checks a record; on error, names the field in err. */
static int gc_cp__read(int section, const cJSON *rec, const char *const *strings, size_t n_strings,
                       size_t n_labels, gc_cp__fields *f, char *err, size_t errlen)
{
        size_t ns = gc_cp__n_strs[section] + (gc_cp__labelled(section) ? n_labels : 0);
        size_t nn = gc_cp__n_nums[section];
        const cJSON *v;
        size_t i = 0, size, n_money = 0, extra;
        int64_t x;
        int use;

        memset(f, 0, sizeof(*f));
        f->hours = 1;
        size = cJSON_IsArray(rec) ? (size_t)cJSON_GetArraySize(rec) : 0;
        /* Usage records written before the workload dimension have one string fewer. */
        if (section == GC_CP__USAGE && n_labels == 0 && size == GC_CP__USAGE_STRS_V1 + nn)
                ns = GC_CP__USAGE_STRS_V1;
        /* Usage, rollup and period records may carry the usage basis's two figures after
         * their numbers; rollup records may end with a count of hours that repeat them all. */
        extra = size > ns + nn ? size - ns - nn : 0;
        use = section != GC_CP__CAPACITY && section != GC_CP__CROLLUP && extra >= 2;
        if (size < ns + nn || extra > (size_t)(use ? 2 : 0) +
                                          (section == GC_CP__ROLLUP || section == GC_CP__CROLLUP)) {
                gc_errf(err, errlen, "must be an array of %zu values", ns + nn);
                return -EINVAL;
        }
        cJSON_ArrayForEach(v, rec)
        {
                if (i < ns) {
                        if (gc_cp__int(v, 0, (int64_t)n_strings - 1, &x) < 0) {
                                gc_errf(err, errlen,
                                        "value %zu: must index the chunk's %zu strings", i,
                                        n_strings);
                                return -EINVAL;
                        }
                        f->s[i] = strings[x];
                } else if (i < ns + nn) {
                        const gc_cp__num_spec *sp = &gc_cp__nums_of[section][i - ns];

                        if (gc_cp__read_num(v, sp->kind, f, &n_money) < 0) {
                                gc_errf(err, errlen, "%s: out of range or not a number", sp->name);
                                return -EINVAL;
                        }
                } else if (use && i < ns + nn + 2) {
                        size_t k = i - ns - nn;

                        /* The adjustment may be negative; the covered cost may not. */
                        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
                            (k == 1 && v->valuedouble < 0)) {
                                gc_errf(err, errlen, "%s: out of range or not a number",
                                        k == 0 ? "adj_cost" : "covered_cost");
                                return -EINVAL;
                        }
                        f->use[k] = v->valuedouble;
                } else {
                        if (gc_cp__int(v, 1, (GC_CP__TIME_MAX - f->t[0]) / GC_CP__BUCKET + 1, &x) <
                            0) {
                                gc_errf(err, errlen, "hours: must be a count of buckets");
                                return -EINVAL;
                        }
                        f->hours = (size_t)x;
                }
                i++;
        }
        for (i = 0; i < ns; i++)
                if (!f->s[i])
                        return -EINVAL;
        /* What the ledger itself would refuse, refused before anything is put. */
        if (section != GC_CP__ROLLUP && section != GC_CP__PERIOD && !*f->s[0]) {
                gc_errf(err, errlen, "%s: must not be empty",
                        section == GC_CP__USAGE ? "pod_uid" : "node");
                return -EINVAL;
        }
        if ((section == GC_CP__USAGE || section == GC_CP__CAPACITY) && f->t[1] != GC_OPEN &&
            f->t[1] < f->t[0]) {
                gc_errf(err, errlen, "end: before start");
                return -EINVAL;
        }
        return 0;
}

/*
 * How a body's label values reach the ledger: value j of a record goes to the ledger's label
 * slot map[j], or nowhere (-1: a key this ledger does not keep).
 */
typedef struct gc_cp__lmap {
        size_t n;
        int map[GC_LABEL_DIMS];
} gc_cp__lmap;

static void gc_cp__labels_to(const gc_cp__lmap *lm, const char *const *vals, const char **ret)
{
        for (size_t j = 0; j < lm->n; j++)
                if (lm->map[j] >= 0)
                        ret[lm->map[j]] = vals[j];
}

static int gc_cp__apply(gc_ledger *l, int section, const gc_cp__fields *f, int64_t step,
                        const gc_cp__lmap *lm)
{
        switch (section) {
        case GC_CP__USAGE: {
                gc_usage u;

                memset(&u, 0, sizeof(u));
                u.pod_uid = f->s[0];
                for (size_t d = 0; d < GC_DIM_COUNT; d++)
                        u.dims[d] = f->s[1 + d];
                gc_cp__labels_to(lm, &f->s[1 + GC_DIM_COUNT], u.labels);
                u.geq = f->d[0];
                u.price_per_gpu_hour = f->d[1];
                u.start = f->t[0];
                u.end = f->t[1];
                u.flags = f->flags;
                u.adj_cost = f->use[0];
                u.covered_cost = f->use[1];
                return gc_ledger_put_usage(l, &u);
        }
        case GC_CP__CAPACITY: {
                gc_capacity c = {f->s[0], f->s[1], f->s[2], f->d[0], f->d[1], f->t[0], f->t[1]};

                return gc_ledger_put_capacity(l, &c);
        }
        case GC_CP__ROLLUP: {
                gc_rollup rw;
                int r = 0;

                memset(&rw, 0, sizeof(rw));
                for (size_t d = 0; d < GC_DIM_POD; d++)
                        rw.dims[d] = f->s[d];
                gc_cp__labels_to(lm, &f->s[GC_DIM_POD], rw.labels);
                rw.gpu_seconds = f->d[0];
                rw.cost = f->d[1];
                rw.adj_cost = f->use[0];
                rw.covered_cost = f->use[1];
                for (size_t k = 0; r == 0 && k < f->hours; k++) {
                        rw.hour = f->t[0] + (int64_t)k * step;
                        r = gc_ledger_add_rollup(l, &rw);
                }
                return r;
        }
        case GC_CP__PERIOD: {
                gc_period_row pr;

                memset(&pr, 0, sizeof(pr));
                pr.unit = (gc_tz_unit)f->n[0];
                pr.start = f->t[0];
                pr.end = f->t[1];
                pr.pod_uid = *f->s[0] ? f->s[0] : NULL;
                for (size_t d = 0; d < GC_DIM_COUNT; d++)
                        pr.dims[d] = f->s[1 + d];
                gc_cp__labels_to(lm, &f->s[1 + GC_DIM_COUNT], pr.labels);
                pr.gpu_seconds = f->d[0];
                pr.cost = f->d[1];
                pr.pods = f->n[1];
                pr.estimates = f->n[2];
                pr.adj_cost = f->use[0];
                pr.covered_cost = f->use[1];
                return gc_ledger_add_period_row(l, &pr);
        }
        default: {
                gc_capacity_rollup rw = {f->t[0], f->s[0], f->s[1], f->s[2], f->d[0], f->d[1]};
                int r = 0;

                for (size_t k = 0; r == 0 && k < f->hours; k++) {
                        rw.hour = f->t[0] + (int64_t)k * step;
                        r = gc_ledger_add_capacity_rollup(l, &rw);
                }
                return r;
        }
        }
}

/*
 * Checks a chunk's string table and records, counting them into counts[]; with l, also puts
 * them into the ledger.
 */
/*
 * The label keys a body names ("label_keys", absent before versions 7 and 8) mapped to l's
 * slots (l NULL: checked only); *ret_dropped set when one is a key l does not keep.
 */
static int gc_cp__body_labels(const cJSON *root, const gc_ledger *l, gc_cp__lmap *ret,
                              int *ret_dropped, char *err, size_t errlen)
{
        const cJSON *keys = gc_cp__member(root, "label_keys"), *v;
        gc_label_keys lk;
        size_t n = 0;

        memset(ret, 0, sizeof(*ret));
        if (!keys)
                return 0;
        gc_ledger_label_keys(l, &lk);
        if (!cJSON_IsArray(keys) || cJSON_GetArraySize(keys) > GC_LABEL_DIMS) {
                gc_errf(err, errlen, "label_keys: not an array of at most %d keys", GC_LABEL_DIMS);
                return -EINVAL;
        }
        cJSON_ArrayForEach(v, keys)
        {
                if (!cJSON_IsString(v) || !*v->valuestring ||
                    strlen(v->valuestring) > GC_LABEL_KEY_MAX) {
                        gc_errf(err, errlen, "label_keys[%zu]: not a label key", n);
                        return -EINVAL;
                }
                ret->map[n] = -1;
                for (size_t i = 0; i < lk.n; i++)
                        if (strcmp(lk.key[i], v->valuestring) == 0)
                                ret->map[n] = (int)i;
                if (l && ret->map[n] < 0 && ret_dropped)
                        *ret_dropped = 1;
                n++;
        }
        ret->n = n;
        return 0;
}

static int gc_cp__body(const cJSON *root, gc_ledger *l, int64_t step,
                       size_t counts[GC_CP__N_SECTIONS], int *ret_dropped, char *err, size_t errlen)
{
        const cJSON *strs = gc_cp__member(root, "strings"), *v;
        const char **table = NULL;
        char sub[256];
        size_t n_strings, i = 0;
        gc_cp__lmap lm;
        int r = 0;

        r = gc_cp__body_labels(root, l, &lm, ret_dropped, err, errlen);
        if (r < 0)
                return r;
        if (!cJSON_IsArray(strs)) {
                gc_errf(err, errlen, "strings: missing or not an array");
                return -EINVAL;
        }
        n_strings = (size_t)cJSON_GetArraySize(strs);
        table = calloc(n_strings + 1, sizeof(*table));
        if (!table)
                return -ENOMEM;
        cJSON_ArrayForEach(v, strs)
        {
                if (!cJSON_IsString(v) || strlen(v->valuestring) > GC_CHECKPOINT_MAX_STRING) {
                        gc_errf(err, errlen, "strings[%zu]: not a string of at most %d bytes", i,
                                GC_CHECKPOINT_MAX_STRING);
                        r = -EINVAL;
                        goto finish;
                }
                table[i++] = v->valuestring;
        }
        for (int s = 0; s < GC_CP__N_SECTIONS; s++) {
                const cJSON *sec = gc_cp__member(root, gc_cp__section[s]), *rec;
                size_t k = 0;

                if (s == GC_CP__PERIOD && !sec)
                        continue; /* a chunk of a build before period history */
                if (!cJSON_IsArray(sec)) {
                        gc_errf(err, errlen, "%s: missing or not an array", gc_cp__section[s]);
                        r = -EINVAL;
                        goto finish;
                }
                cJSON_ArrayForEach(rec, sec)
                {
                        gc_cp__fields f;

                        r = gc_cp__read(s, rec, table, n_strings, lm.n, &f, sub, sizeof(sub));
                        if (r < 0) {
                                gc_errf(err, errlen, "%s[%zu]: %s", gc_cp__section[s], k, sub);
                                goto finish;
                        }
                        if (l && (r = gc_cp__apply(l, s, &f, step, &lm)) < 0) {
                                gc_errf(err, errlen, "%s[%zu]: the ledger refused it: %s",
                                        gc_cp__section[s], k, strerror(-r));
                                goto finish;
                        }
                        k++;
                        counts[s] += f.hours;
                }
        }
finish:
        free(table);
        return r;
}

typedef struct gc_cp__entry {
        gc_checkpoint_header h;
        size_t counts[GC_CP__N_SECTIONS]; /* rows its records make */
        int present;
        int part;                           /* a part of an incremental write: no header */
        char hash[GC_CHECKPOINT_PART_HASH]; /* a part's content hash */
        gc_cp__ref *refs;                   /* a manifest's parts (of - 1) */
} gc_cp__entry;

static int gc_cp__collect_open(void *ud, const gc_usage *u)
{
        gc_checkpoint_info *info = ud;
        gc_checkpoint_open *o;

        if (u->end != GC_OPEN)
                return 0;
        o = &info->open[info->n_open++];
        o->pod_uid = u->pod_uid;
        memcpy(o->dims, u->dims, sizeof(o->dims));
        o->geq = u->geq;
        o->start = u->start;
        return 0;
}

/*
 * The parts the manifest ent[auth] names, each matched by content hash and length: part k's entry
 * gets h.chunk = k + 1 (so pass 2 puts them in the manifest's order). Parts no manifest of this
 * write names are ignored and counted.
 */
static int gc_cp__select_parts(gc_cp__entry *ent, size_t n, size_t auth, size_t *ret_auth,
                               size_t *ret_ignored, size_t ignored, char *err, size_t errlen)
{
        const gc_checkpoint_header *a = &ent[auth].h;

        for (size_t i = 0; i < n; i++)
                if (ent[i].part)
                        ent[i].h.chunk = 0; /* matched to no part yet */
        for (size_t k = 0; k + 1 < a->of; k++) {
                const gc_cp__ref *ref = &ent[auth].refs[k];
                size_t i;

                for (i = 0; i < n; i++)
                        if (ent[i].present && ent[i].part && ent[i].h.chunk == 0 &&
                            strcmp(ent[i].hash, ref->hash) == 0 && ent[i].h.of == ref->len)
                                break;
                if (i == n) {
                        gc_errf(err, errlen,
                                "part %zu of %zu (ConfigMap %s%s) of write %s is missing or "
                                "its content does not match its hash",
                                k + 1, a->of - 1, GC_CHECKPOINT_PART_PREFIX, ref->hash,
                                a->write_id);
                        return -EINVAL;
                }
                ent[i].h.chunk = k + 1;
        }
        for (size_t i = 0; i < n; i++) {
                if (ent[i].present && ent[i].part && ent[i].h.chunk == 0) {
                        ent[i].present = 0;
                        ignored++;
                }
        }
        *ret_auth = auth;
        *ret_ignored = ignored;
        return 0;
}

/* Which entries make up the write named by chunk 0; every chunk 1..of-1 must be among them. */
static int gc_cp__select(gc_cp__entry *ent, size_t n, size_t *ret_auth, size_t *ret_ignored,
                         char *err, size_t errlen)
{
        unsigned char seen[GC_CHECKPOINT_MAX_CHUNKS] = {0};
        size_t auth = SIZE_MAX, ignored = 0;
        char name[GC_CHECKPOINT_NAME_MAX];

        for (size_t i = 0; i < n; i++) {
                if (!ent[i].present || ent[i].part || ent[i].h.chunk != 0)
                        continue;
                if (auth != SIZE_MAX && strcmp(ent[auth].h.write_id, ent[i].h.write_id) != 0) {
                        gc_errf(err, errlen, "two chunks 0, of writes %s and %s",
                                ent[auth].h.write_id, ent[i].h.write_id);
                        return -EINVAL;
                }
                auth = i;
        }
        if (auth == SIZE_MAX) {
                gc_errf(err, errlen, "chunk 0 (ConfigMap %s) is missing", GC_CHECKPOINT_NAME);
                return -EINVAL;
        }
        for (size_t i = 0; i < n; i++) {
                const gc_checkpoint_header *a = &ent[auth].h, *h = &ent[i].h;

                if (!ent[i].present)
                        continue;
                if (ent[i].part && a->version == GC_CHECKPOINT_VERSION_INCR)
                        continue; /* matched by gc_cp__select_parts */
                if (ent[i].part || a->version != h->version) {
                        /* A part, or a chunk of the other format's write: not of this write. */
                        ent[i].present = 0;
                        ignored++;
                        continue;
                }
                if (strcmp(h->write_id, a->write_id) != 0) {
                        if (h->chunk >= a->of) {
                                /* Left over from an earlier write that needed more chunks. */
                                ent[i].present = 0;
                                ignored++;
                                continue;
                        }
                        gc_errf(err, errlen,
                                "chunk %zu is of write %s, chunk 0 of write %s: a write that "
                                "did not finish",
                                h->chunk, h->write_id, a->write_id);
                        return -EINVAL;
                }
                if (h->of != a->of || h->written_at != a->written_at || h->horizon != a->horizon ||
                    h->period_since != a->period_since || h->coarse_to != a->coarse_to ||
                    h->bucket_s != a->bucket_s || h->periods != a->periods ||
                    strcmp(h->controller, a->controller) != 0 || h->usage != a->usage ||
                    h->capacity != a->capacity || h->rollups != a->rollups ||
                    h->capacity_rollups != a->capacity_rollups || h->n_rvs != a->n_rvs ||
                    h->generation != a->generation || memcmp(h->rvs, a->rvs, sizeof(h->rvs)) != 0) {
                        gc_errf(err, errlen, "chunk %zu: its header differs from chunk 0's",
                                h->chunk);
                        return -EINVAL;
                }
                if (seen[h->chunk]) {
                        gc_errf(err, errlen, "chunk %zu of write %s is given twice", h->chunk,
                                h->write_id);
                        return -EINVAL;
                }
                seen[h->chunk] = 1;
        }
        if (ent[auth].h.version == GC_CHECKPOINT_VERSION_INCR)
                return gc_cp__select_parts(ent, n, auth, ret_auth, ret_ignored, ignored, err,
                                           errlen);
        for (size_t c = 1; c < ent[auth].h.of; c++) {
                if (seen[c])
                        continue;
                gc_checkpoint_name(c, name);
                gc_errf(err, errlen, "chunk %zu of %zu (ConfigMap %s) of write %s is missing", c,
                        ent[auth].h.of, name, ent[auth].h.write_id);
                return -EINVAL;
        }
        *ret_auth = auth;
        *ret_ignored = ignored;
        return 0;
}

/*
 * Reads one chunk given to a decode into *e, checking everything and putting nothing: a chunk
 * with a header (version 1, or a version 2 manifest and the parts it names), or a part of an
 * incremental write (no header), known by the hash of its bytes. May allocate e->refs.
 */
static int gc_cp__entry_read(gc_cp__entry *e, const char *data, size_t len, char *err,
                             size_t errlen)
{
        cJSON *root = gc_cp__parse(data, len, err, errlen);
        int r;

        if (!root)
                return -EINVAL;
        if (cJSON_IsObject(root) && !gc_cp__member(root, "version")) {
                e->part = 1;
                gc_cp__part_hash(data, len, e->hash);
                e->h.of = len; /* a part's length, matched against the manifest's */
                r = gc_cp__body(root, NULL, GC_CP__HOUR, e->counts, NULL, err, errlen);
        } else {
                r = gc_cp__header(root, &e->h, err, errlen);
                if (r == 0 && e->h.version == GC_CHECKPOINT_VERSION_INCR) {
                        e->refs = calloc(e->h.of, sizeof(*e->refs));
                        r = e->refs ? gc_cp__refs(root, e->h.of, e->refs, err, errlen) : -ENOMEM;
                } else if (r == 0) {
                        r = gc_cp__body(root, NULL, GC_CP__HOUR, e->counts, NULL, err, errlen);
                }
        }
        if (r == 0)
                e->present = 1;
        cJSON_Delete(root);
        return r;
}

/* The header's counts within the ledger's limits, and equal to the rows the records make. */
static int gc_cp__check_counts(const gc_cp__entry *ent, size_t n, const gc_checkpoint_header *a,
                               size_t max_intervals, size_t max_rollup_rows, char *err,
                               size_t errlen)
{
        size_t counts[GC_CP__N_SECTIONS] = {0};

        if (a->usage > max_intervals || a->capacity > max_intervals ||
            a->rollups + a->capacity_rollups > max_rollup_rows || a->periods > max_rollup_rows) {
                gc_errf(err, errlen,
                        "checkpoint: %zu pod intervals, %zu capacities and %zu rollup rows "
                        "exceed the ledger's limits (%zu intervals, %zu rollup rows)",
                        a->usage, a->capacity, a->rollups + a->capacity_rollups, max_intervals,
                        max_rollup_rows);
                return -E2BIG;
        }

        /* The rows the records make must be what the header says, before any is put. */
        for (size_t i = 0; i < n; i++)
                for (size_t s = 0; ent[i].present && s < GC_CP__N_SECTIONS; s++)
                        counts[s] += ent[i].counts[s];
        if (counts[0] != a->usage || counts[1] != a->capacity || counts[2] != a->rollups ||
            counts[3] != a->capacity_rollups || counts[4] != a->periods) {
                gc_errf(err, errlen,
                        "checkpoint: the chunks hold %zu/%zu/%zu/%zu records, the header "
                        "says %zu/%zu/%zu/%zu (usage/capacity/rollups/capacity_rollups)",
                        counts[0], counts[1], counts[2], counts[3], a->usage, a->capacity,
                        a->rollups, a->capacity_rollups);
                return -EINVAL;
        }

        return 0;
}

/* Pass 2 of the decode: every chunk's records into l, then the history's edges. *dropped: rows
 * told apart only by a label key l does not keep were merged. */
static int gc_cp__put_all(const gc_cp__entry *ent, const char *const *chunks, const size_t *lens,
                          const gc_checkpoint_header *a, gc_ledger *l, int *dropped, char *err,
                          size_t errlen)
{
        size_t counts[GC_CP__N_SECTIONS];
        char sub[512];
        int r = 0;

        /*
         * Pass 2: the records go into the ledger in the order they were written (so the ledger
         * walks them as the original did), then the horizon (puts clip to it).
         */
        for (size_t c = 0; c < a->of && r == 0; c++) {
                size_t i = 0;
                cJSON *root;

                while (!ent[i].present || ent[i].h.chunk != c)
                        i++;
                if (ent[i].refs)
                        continue; /* a manifest: no records */
                root = gc_cp__parse(chunks[i], lens[i], sub, sizeof(sub));
                if (!root) {
                        r = -ENOMEM; /* it parsed in pass 1 */
                        break;
                }
                memset(counts, 0, sizeof(counts));
                r = gc_cp__body(root, l, a->bucket_s, counts, dropped, sub, sizeof(sub));
                if (r < 0)
                        gc_errf(err, errlen, "checkpoint: chunk %zu: %s", c, sub);
                cJSON_Delete(root);
        }
        if (r < 0)
                return r;
        r = gc_ledger_set_horizon(l, a->horizon);
        if (r < 0) {
                gc_errf(err, errlen, "checkpoint: horizon: refused by the ledger");
                return r;
        }
        gc_ledger_set_period_since(l, a->period_since);
        if (gc_ledger_set_coarse_to(l, a->coarse_to) < 0) {
                gc_errf(err, errlen, "checkpoint: coarse_to: refused by the ledger");
                return -EINVAL;
        }
        return 0;
}

/* After the puts: the rows are what the header said (fewer where finer rows merged). *st: the
 * ledger's figures now. */
static int gc_cp__check_merged(const gc_ledger *l, const gc_checkpoint_header *a, int dropped,
                               gc_ledger_stats *st, char *err, size_t errlen)
{
        int finer;

        gc_ledger_stats_get(l, st);
        /* A key given twice would have been merged: the checkpoint was not what a ledger writes. */
        /* An earlier build's rows of (namespace, ..., node) split into the pods' and the
         * node's rows here (docs/ledger.md). */
        /* Rows of a finer ledger (a report zone at :30 or :45 before, whole hours now) merge
         * into this one's buckets: fewer rows, never more. */
        finer = a->bucket_s < gc_ledger_granularity(l);
        /* So do rows told apart only by a label key this ledger no longer keeps. */
        finer |= dropped;
        if (st->intervals != a->usage || st->capacities != a->capacity ||
            (a->written_version >= GC_CHECKPOINT_VERSION_V3 &&
             (finer ? st->rollup_rows > a->rollups + a->capacity_rollups
                    : st->rollup_rows != a->rollups + a->capacity_rollups))) {
                gc_errf(err, errlen, "checkpoint: records with the same key given twice");
                return -EINVAL;
        }
        return 0;
}

int gc_checkpoint_decode(gc_ledger *l, const char *const *chunks, const size_t *lens, size_t n,
                         size_t max_intervals, size_t max_rollup_rows, gc_checkpoint_info *ret,
                         char *err, size_t errlen)
{
        static const gc_ledger_visitor open_v = {gc_cp__collect_open, NULL, NULL, NULL, NULL};
        gc_checkpoint_info info;
        gc_cp__entry *ent = NULL;
        gc_ledger_stats st;
        char sub[512];
        size_t auth = 0, ignored = 0;
        const gc_checkpoint_header *a;
        int r = 0, dropped = 0;

        memset(&info, 0, sizeof(info));
        if (err && errlen)
                err[0] = '\0';
        if (!l || (n && (!chunks || !lens)) || !ret) {
                gc_errf(err, errlen, "checkpoint: no ledger, chunks or result");
                return -EINVAL;
        }
        if (n > GC_CP__MAX_ENTRIES) {
                gc_errf(err, errlen, "checkpoint: %zu chunks given, at most %d", n,
                        GC_CP__MAX_ENTRIES);
                return -E2BIG;
        }
        gc_ledger_stats_get(l, &st);
        if (st.intervals || st.capacities || st.rollup_rows || st.period_rows ||
            st.horizon != INT64_MIN) {
                gc_errf(err, errlen, "checkpoint: the ledger to restore into is not empty");
                return -EINVAL;
        }
        if (max_intervals == 0)
                max_intervals = GC_LEDGER_DEFAULT_LIMIT;
        if (max_rollup_rows == 0)
                max_rollup_rows = GC_LEDGER_DEFAULT_LIMIT;
        ent = calloc(n + 1, sizeof(*ent));
        if (!ent)
                return -ENOMEM;

        /* Pass 1: every header and record checked, nothing put. */
        for (size_t i = 0; i < n && r == 0; i++) {
                if (!chunks[i])
                        continue;
                r = gc_cp__entry_read(&ent[i], chunks[i], lens[i], sub, sizeof(sub));
                if (r < 0)
                        gc_errf(err, errlen, "checkpoint: chunk given as entry %zu: %s", i, sub);
        }
        if (r == 0)
                r = gc_cp__select(ent, n, &auth, &ignored, sub, sizeof(sub));
        if (r < 0) {
                if (err && errlen && !err[0])
                        gc_errf(err, errlen, "checkpoint: %s", sub);
                goto finish;
        }
        a = &ent[auth].h;
        r = gc_cp__check_counts(ent, n, a, max_intervals, max_rollup_rows, err, errlen);
        if (r < 0)
                goto finish;
        r = gc_cp__put_all(ent, chunks, lens, a, l, &dropped, err, errlen);
        if (r < 0)
                goto finish;
        r = gc_cp__check_merged(l, a, dropped, &st, err, errlen);
        if (r < 0)
                goto finish;
        info.header = *a;
        info.ignored = ignored;
        info.open = calloc(st.open_intervals + 1, sizeof(*info.open));
        if (!info.open) {
                r = -ENOMEM;
                goto finish;
        }
        r = gc_ledger_visit(l, &open_v, &info);
finish:
        for (size_t i = 0; ent && i < n; i++)
                free(ent[i].refs);
        free(ent);
        if (r < 0) {
                if (err && errlen && !err[0])
                        gc_errf(err, errlen, "checkpoint: %s", strerror(-r));
                gc_checkpoint_info_release(&info);
                return r;
        }
        *ret = info;
        return 0;
}

void gc_checkpoint_info_release(gc_checkpoint_info *info)
{
        if (!info)
                return;
        free(info->open);
        info->open = NULL;
        info->n_open = 0;
}

/* ---- generations ----------------------------------------------------------------------------- */

typedef struct gc_cp__cand {
        size_t slot;
        int has_head;
        uint64_t generation;
        int64_t written_at;
} gc_cp__cand;

/* Newest first: a readable chunk 0, then the higher generation, then the later time. */
static int gc_cp__newer(const gc_cp__cand *a, const gc_cp__cand *b)
{
        if (a->has_head != b->has_head)
                return a->has_head;
        if (a->generation != b->generation)
                return a->generation > b->generation;
        if (a->written_at != b->written_at)
                return a->written_at > b->written_at;
        return a->slot < b->slot;
}

int gc_checkpoint_decode_newest(gc_ledger *l, const gc_checkpoint_slot *slots, size_t n_slots,
                                size_t max_intervals, size_t max_rollup_rows,
                                gc_checkpoint_info *ret, size_t *ret_slot, size_t *ret_refused,
                                char *err, size_t errlen)
{
        gc_cp__cand cand[GC_CHECKPOINT_GENERATIONS];
        size_t n = 0, refused = 0, used = 0;
        char why[512];
        int r = -ENOENT;

        if (err && errlen)
                err[0] = '\0';
        if (!l || !slots || !ret || n_slots == 0 || n_slots > GC_CHECKPOINT_GENERATIONS) {
                gc_errf(err, errlen, "checkpoint: no ledger, slots or result");
                return -EINVAL;
        }
        for (size_t s = 0; s < n_slots; s++) {
                gc_cp__cand c = {s, 0, 0, 0};
                int any = 0;

                for (size_t i = 0; i < slots[s].n; i++) {
                        gc_checkpoint_header h;

                        if (!slots[s].chunks || !slots[s].lens || !slots[s].chunks[i])
                                continue;
                        any = 1;
                        if (gc_checkpoint_peek(slots[s].chunks[i], slots[s].lens[i], &h, NULL, 0) ==
                                0 &&
                            h.chunk == 0) {
                                c.has_head = 1;
                                c.generation = h.generation;
                                c.written_at = h.written_at;
                        }
                }
                if (!any)
                        continue;
                /* insertion, newest first (at most GC_CHECKPOINT_GENERATIONS entries) */
                size_t at = n;

                while (at > 0 && gc_cp__newer(&c, &cand[at - 1])) {
                        cand[at] = cand[at - 1];
                        at--;
                }
                cand[at] = c;
                n++;
        }
        for (size_t k = 0; k < n; k++) {
                const gc_checkpoint_slot *sl = &slots[cand[k].slot];
                gc_ledger_stats st;

                gc_ledger_stats_get(l, &st);
                if (st.intervals || st.capacities || st.rollup_rows) {
                        gc_errf(err, errlen, "checkpoint: the ledger is not empty");
                        return -EINVAL;
                }
                /*
                 * A write can be refused after some of it was put (records with the same key
                 * given twice): with another generation to fall back on, try a scratch copy of
                 * the empty ledger first, so l stays empty for the next. The strings a refused
                 * write interned stay in the shared pool (bounded by the chunks' sizes).
                 */
                if (k + 1 < n) {
                        gc_ledger *tmp = gc_ledger_clone(l);
                        gc_checkpoint_info scratch;

                        if (!tmp)
                                return -ENOMEM;
                        memset(&scratch, 0, sizeof(scratch));
                        r = gc_checkpoint_decode(tmp, sl->chunks, sl->lens, sl->n, max_intervals,
                                                 max_rollup_rows, &scratch, why, sizeof(why));
                        gc_checkpoint_info_release(&scratch);
                        gc_ledger_free(tmp);
                        if (r == -EINVAL)
                                goto refused;
                        if (r < 0)
                                break;
                }
                r = gc_checkpoint_decode(l, sl->chunks, sl->lens, sl->n, max_intervals,
                                         max_rollup_rows, ret, why, sizeof(why));
                if (r == 0) {
                        *ret_slot = cand[k].slot;
                        if (ret_refused)
                                *ret_refused = refused;
                        return 0;
                }
                if (r != -EINVAL || k + 1 < n)
                        break; /* l may hold part of a write */
        refused:
                refused++;
                if (err && errlen && used < errlen) {
                        int w = snprintf(err + used, errlen - used, "%sgeneration in slot %zu: %s",
                                         used ? "; " : "", cand[k].slot, why);

                        used = w < 0 ? errlen : used + (size_t)w;
                }
        }
        if (r != 0 && r != -EINVAL && r != -ENOENT)
                gc_errf(err, errlen, "%s", why);
        if (r == -ENOENT)
                gc_errf(err, errlen, "checkpoint: no chunk in any slot");
        return r;
}

/* ---- pods deleted while the controller was away -------------------------------------------- */

typedef struct gc_cp__open_list {
        gc_usage *u;
        size_t n, cap;
        int (*seen)(void *ud, const char *pod_uid);
        void *ud;
} gc_cp__open_list;

static int gc_cp__gather_missing(void *ud, const gc_usage *u)
{
        gc_cp__open_list *o = ud;

        if (u->end != GC_OPEN || o->seen(o->ud, u->pod_uid))
                return 0;
        if (gc_grow((void **)&o->u, &o->cap, o->n, sizeof(*o->u), 64, 0) < 0)
                return -ENOMEM;
        o->u[o->n++] = *u;
        return 0;
}

int gc_checkpoint_close_missing(gc_ledger *l, int (*seen)(void *ud, const char *pod_uid), void *ud,
                                int64_t end_time, size_t *ret_count, double *ret_gpu_seconds)
{
        static const gc_ledger_visitor v = {gc_cp__gather_missing, NULL, NULL, NULL, NULL};
        gc_cp__open_list o = {0};
        double gs = 0;
        int r;

        if (!l || !seen || end_time < 0 || end_time > GC_CP__TIME_MAX)
                return -EINVAL;
        o.seen = seen;
        o.ud = ud;
        /* The ledger must not change during a walk: gather first, then end them. */
        r = gc_ledger_visit(l, &v, &o);
        for (size_t i = 0; r == 0 && i < o.n; i++) {
                gc_usage u = o.u[i];

                u.end = end_time > u.start ? end_time : u.start;
                u.flags |= GC_USAGE_F_ESTIMATE;
                r = gc_ledger_put_usage(l, &u);
                gs += (double)(u.end - u.start) * u.geq;
        }
        free(o.u);
        if (r < 0)
                return r;
        if (ret_count)
                *ret_count = o.n;
        if (ret_gpu_seconds)
                *ret_gpu_seconds = gs;
        return 0;
}

typedef struct gc_cp__open_caps {
        gc_capacity *v;
        size_t n, cap;
        int (*seen)(void *ud, const char *node);
        void *ud;
} gc_cp__open_caps;

static int gc_cp__gather_missing_node(void *ud, const gc_capacity *c)
{
        gc_cp__open_caps *o = ud;

        if (c->end != GC_OPEN || o->seen(o->ud, c->node))
                return 0;
        if (gc_grow((void **)&o->v, &o->cap, o->n, sizeof(*o->v), 64, 0) < 0)
                return -ENOMEM;
        o->v[o->n++] = *c;
        return 0;
}

int gc_checkpoint_close_missing_nodes(gc_ledger *l, int (*seen)(void *ud, const char *node),
                                      void *ud, int64_t end_time, size_t *ret_count)
{
        gc_ledger_visitor v = {0};
        gc_cp__open_caps o = {0};
        size_t ended = 0;
        int r;

        if (!l || !seen || end_time < 0 || end_time > GC_CP__TIME_MAX)
                return -EINVAL;
        v.capacity = gc_cp__gather_missing_node;
        o.seen = seen;
        o.ud = ud;
        /* Gather first, then end them: the ledger must not change during a walk. */
        r = gc_ledger_visit(l, &v, &o);
        for (size_t i = 0; r == 0 && i < o.n; i++) {
                o.v[i].end = end_time > o.v[i].start ? end_time : o.v[i].start;
                r = gc_ledger_put_capacity(l, &o.v[i]);
                ended += r == 0;
        }
        free(o.v);
        if (ret_count)
                *ret_count = ended;
        return r;
}

int gc_checkpoint_estimate_note(size_t count, double gpu_seconds, int64_t end_time, gc_buf *out)
{
        char when[GC_TIME_LEN];

        if (!out || !isfinite(gpu_seconds) || gpu_seconds < 0)
                return -EINVAL;
        gc_time_format(end_time, when);
        return gc_buf_printf(out,
                             "%zu pod%s running at the last checkpoint (%s) %s deleted while the "
                             "controller was not running; %s counted up to that time, the last "
                             "moment %s known to exist: %.2f GPU-hours rest on this estimate.",
                             count, count == 1 ? "" : "s", when, count == 1 ? "was" : "were",
                             count == 1 ? "it is" : "they are", count == 1 ? "it was" : "they were",
                             gpu_seconds / 3600.0);
}
