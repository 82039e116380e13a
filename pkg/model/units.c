/* model units: GPU resource names, Kubernetes quantities, MIG shares and GPU-equivalents. */
#include "model.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Resource names are <DNS subdomain (253)>/<name (63)> at most. */
#define GC__RES_NAME_MAX  317
#define GC__RES_RULES_MAX 256
#define GC__QTY_MAX_LEN   64
#define GC__MODEL_MAX_LEN 253

/* ---- the resource-name table ----------------------------------------------------------------- */

gc_res_table *gc_res_table_free(gc_res_table *t)
{
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n; i++)
                free(t->rules[i].name);
        free(t->rules);
        free(t);
        return NULL;
}

/*
 * The device plugins' resource names, each vendor's as its plugin registers it (docs/model.md
 * cites the sources): NVIDIA's k8s-device-plugin; AMD's ROCm k8s-device-plugin, whose "mixed"
 * strategy names a partitioned GPU's units <compute>_<memory> ("cpx_nps4"); Habana's
 * habanalabs-k8s-device-plugin ("habana.ai/" + "gaudi" for Gaudi, Gaudi2 and Gaudi3); AWS's
 * Neuron device plugin (neurondevice is the older name of neuron); GKE's TPU plugin.
 */
static const struct {
        const char *name;
        gc_res_kind kind;
        double gpus_per_unit; /* GC_RES_FIXED only */
} gc__builtin_rules[] = {
    {"nvidia.com/gpu", GC_RES_GPU, 1.0},
    {"nvidia.com/gpu.shared", GC_RES_GPU_SHARED, 1.0},
    {"nvidia.com/mig-*", GC_RES_MIG, 1.0},
    {"amd.com/gpu", GC_RES_AMD, 0},
    {"amd.com/spx_*", GC_RES_AMD, 0},
    {"amd.com/dpx_*", GC_RES_AMD, 0},
    {"amd.com/tpx_*", GC_RES_AMD, 0},
    {"amd.com/qpx_*", GC_RES_AMD, 0},
    {"amd.com/cpx_*", GC_RES_AMD, 0},
    {"habana.ai/gaudi", GC_RES_FIXED, 1.0},
    {"aws.amazon.com/neuron", GC_RES_NEURON, 0},
    {"aws.amazon.com/neurondevice", GC_RES_NEURON, 0},
    {"aws.amazon.com/neuroncore", GC_RES_NEURONCORE, 0},
    {"google.com/tpu", GC_RES_FIXED, 1.0},
};

gc_res_table *gc_res_table_new_default(void)
{
        gc_res_table *t = calloc(1, sizeof(*t));

        if (!t)
                return NULL;
        for (size_t i = 0; i < sizeof(gc__builtin_rules) / sizeof(gc__builtin_rules[0]); i++)
                if (gc_res_table_set(t, gc__builtin_rules[i].name, gc__builtin_rules[i].kind,
                                     gc__builtin_rules[i].gpus_per_unit) < 0)
                        return gc_res_table_free(t);
        return t;
}

static int gc__res_name_valid(const char *name)
{
        size_t n = strlen(name);

        if (n == 0 || n > GC__RES_NAME_MAX)
                return 0;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)name[i];

                /* '*' only as the last byte, marking a prefix rule. */
                if (c == '*' && i != n - 1)
                        return 0;
                if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\')
                        return 0;
        }
        return 1;
}

/* May reallocate t->rules. */
int gc_res_table_set(gc_res_table *t, const char *name, gc_res_kind kind, double gpus_per_unit)
{
        gc_res_rule *rules;
        char *copy;

        if (!t || !name || !gc__res_name_valid(name))
                return -EINVAL;
        if (kind != GC_RES_GPU && kind != GC_RES_GPU_SHARED && kind != GC_RES_MIG &&
            kind != GC_RES_FIXED && kind != GC_RES_AMD && kind != GC_RES_NEURON &&
            kind != GC_RES_NEURONCORE)
                return -EINVAL;
        if (kind == GC_RES_FIXED &&
            (!isfinite(gpus_per_unit) || gpus_per_unit < 0 || gpus_per_unit > 1000.0))
                return -ERANGE;
        if (kind != GC_RES_FIXED)
                gpus_per_unit = 0;
        for (size_t i = 0; i < t->n; i++) {
                if (strcmp(t->rules[i].name, name) == 0) {
                        t->rules[i].kind = kind;
                        t->rules[i].gpus_per_unit = gpus_per_unit;
                        return 0;
                }
        }
        if (t->n >= GC__RES_RULES_MAX)
                return -E2BIG;
        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        rules = realloc(t->rules, (t->n + 1) * sizeof(*rules));
        if (!rules) {
                free(copy);
                return -ENOMEM;
        }
        t->rules = rules;
        t->rules[t->n].name = copy;
        t->rules[t->n].kind = kind;
        t->rules[t->n].gpus_per_unit = gpus_per_unit;
        t->n++;
        return 0;
}

const gc_res_rule *gc_res_table_match(const gc_res_table *t, const char *resource)
{
        const gc_res_rule *best = NULL;
        size_t best_len = 0;

        if (!t || !resource)
                return NULL;
        for (size_t i = 0; i < t->n; i++) {
                const char *name = t->rules[i].name;
                size_t n = strlen(name);

                if (n > 0 && name[n - 1] == '*') {
                        /* The longest prefix wins, so a narrower rule can override a broad one. */
                        if (strncmp(resource, name, n - 1) == 0 && (!best || best_len < n - 1)) {
                                best = &t->rules[i];
                                best_len = n - 1;
                        }
                } else if (strcmp(resource, name) == 0) {
                        return &t->rules[i];
                }
        }
        return best;
}

/* ---- quantities ------------------------------------------------------------------------------ */

/* Multiplies *v by m; -ERANGE when the product passes INT64_MAX. */
static int gc__mul(uint64_t *v, uint64_t m)
{
        if (*v != 0 && m > (uint64_t)INT64_MAX / *v)
                return -ERANGE;
        *v *= m;
        return 0;
}

/*
 * Quantities follow k8s.io/apimachinery resource.Quantity: <sign><digits>[.<digits>][suffix],
 * suffix one of the binary (Ki..Ei), decimal (n u m "" k M G T P E) or exponent (e3, E-2) forms.
 * Values below a thousandth round up, as Quantity.MilliValue does.
 */
/* The number of a quantity: digits with at most one '.', into mant (the digits as an integer)
 * and *frac (how many of them follow the dot). The byte after it, or NULL (-ERANGE in *ret_err
 * on overflow, -EINVAL with no digit). */
static const char *gc__qty_number(const char *p, uint64_t *mant, int *frac, int *ret_err)
{
        int seen_dot = 0, pend = 0, digits = 0;

        *ret_err = -ERANGE;
        for (; *p == '.' || (*p >= '0' && *p <= '9'); p++) {
                int d = *p - '0';

                if (*p == '.') {
                        if (seen_dot) {
                                *ret_err = -EINVAL;
                                return NULL;
                        }
                        seen_dot = 1;
                        continue;
                }
                digits++;
                /* Zeros at the end of a fraction change nothing: count them only when a digit
                 * follows, so "1.000000000000000000000" does not overflow. */
                if (seen_dot && d == 0) {
                        pend++;
                        continue;
                }
                for (int z = 0; z < pend; z++)
                        if (gc__mul(mant, 10) < 0)
                                return NULL;
                if (seen_dot)
                        *frac += pend + 1;
                pend = 0;
                if (gc__mul(mant, 10) < 0 || *mant > (uint64_t)INT64_MAX - (uint64_t)d)
                        return NULL;
                *mant += (uint64_t)d;
        }
        if (digits == 0) {
                *ret_err = -EINVAL;
                return NULL;
        }
        return p;
}

/* The suffix after the number, which must end the string: binary (Ki..Ei: *bin_pow 1..6), an
 * exponent (e3, E-2) or decimal SI (n..P, and a lone E for exa) into *exp10. 0 or -EINVAL,
 * -ERANGE (an exponent past 1000). */
static int gc__qty_suffix(const char *p, int *exp10, int *bin_pow)
{
        static const char bin[] = "KMGTPE";
        static const struct {
                char c;
                int exp10;
        } si[] = {{'n', -9}, {'u', -6}, {'m', -3}, {'k', 3},
                  {'M', 6},  {'G', 9},  {'T', 12}, {'P', 15}};

        if (*p && p[1] == 'i') {
                const char *b = strchr(bin, *p);

                if (!b || p[2] != '\0')
                        return -EINVAL;
                *bin_pow = (int)(b - bin) + 1;
                return 0;
        }
        if (*p == 'e' || *p == 'E') {
                const char *q = p + 1;
                int eneg = 0, ev = 0, ed = 0;

                if (*q == '+' || *q == '-')
                        eneg = *q++ == '-';
                for (; *q >= '0' && *q <= '9'; q++, ed++) {
                        if (ev > 1000)
                                return -ERANGE;
                        ev = ev * 10 + (*q - '0');
                }
                if (ed > 0) {
                        *exp10 = eneg ? -ev : ev;
                        return *q == '\0' ? 0 : -EINVAL;
                }
                if (*p == 'E' && p[1] == '\0') {
                        *exp10 = 18;
                        return 0;
                }
                return -EINVAL;
        }
        if (!*p)
                return 0;
        for (size_t i = 0; i < sizeof(si) / sizeof(si[0]); i++) {
                if (si[i].c == *p) {
                        *exp10 = si[i].exp10;
                        return p[1] == '\0' ? 0 : -EINVAL;
                }
        }
        return -EINVAL;
}

int gc_quantity_parse(const char *s, int64_t *ret_milli)
{
        const char *p;
        uint64_t mant = 0, v;
        int neg = 0, frac = 0, exp10 = 0, bin_pow = 0, e, r;
        size_t len;

        if (!s || !ret_milli)
                return -EINVAL;
        len = strnlen(s, GC__QTY_MAX_LEN + 1);
        if (len == 0 || len > GC__QTY_MAX_LEN)
                return -EINVAL;
        p = s;
        if (*p == '+' || *p == '-')
                neg = *p++ == '-';
        p = gc__qty_number(p, &mant, &frac, &r);
        if (!p)
                return r;
        r = gc__qty_suffix(p, &exp10, &bin_pow);
        if (r < 0)
                return r;
        /* milli = mant * 10^(exp10 - frac + 3) * 1024^bin_pow, rounded up. */
        e = exp10 - frac + 3;
        v = mant;
        for (int i = 0; i < bin_pow; i++)
                if (gc__mul(&v, 1024) < 0)
                        return -ERANGE;
        for (; e > 0 && v != 0; e--)
                if (gc__mul(&v, 10) < 0)
                        return -ERANGE;
        for (; e < 0 && v > 1; e++)
                v = v / 10 + (v % 10 != 0);
        if (v > (uint64_t)INT64_MAX)
                return -ERANGE;
        *ret_milli = neg ? -(int64_t)v : (int64_t)v;
        return 0;
}

/* ---- MIG shares ------------------------------------------------------------------------------ */

typedef struct gc__mig_profile {
        const char *name; /* "<c>g.<m>gb" */
        uint8_t compute;  /* compute slices */
        uint8_t memory;   /* memory slices */
} gc__mig_profile;

typedef struct gc__mig_family {
        const char *name;
        uint8_t compute_total; /* C */
        uint8_t memory_total;  /* M */
        int memory_gb;
        const gc__mig_profile *profiles;
} gc__mig_family;

/* The NVIDIA MIG user guide's profile tables, as docs/model.md lists them. */
static const gc__mig_profile gc__mig_a30[] = {
    {"1g.6gb", 1, 1}, {"2g.12gb", 2, 2}, {"4g.24gb", 4, 4}, {NULL, 0, 0}};
static const gc__mig_profile gc__mig_a100_40[] = {
    {"1g.5gb", 1, 1},  {"1g.10gb", 1, 2}, {"2g.10gb", 2, 2}, {"3g.20gb", 3, 4},
    {"4g.20gb", 4, 4}, {"7g.40gb", 7, 8}, {NULL, 0, 0}};
static const gc__mig_profile gc__mig_80[] = {
    {"1g.10gb", 1, 1}, {"1g.20gb", 1, 2}, {"2g.20gb", 2, 2}, {"3g.40gb", 3, 4},
    {"4g.40gb", 4, 4}, {"7g.80gb", 7, 8}, {NULL, 0, 0}};
static const gc__mig_profile gc__mig_94[] = {
    {"1g.12gb", 1, 1}, {"1g.24gb", 1, 2}, {"2g.24gb", 2, 2}, {"3g.47gb", 3, 4},
    {"4g.47gb", 4, 4}, {"7g.94gb", 7, 8}, {NULL, 0, 0}};
static const gc__mig_profile gc__mig_96[] = {
    {"1g.12gb", 1, 1}, {"1g.24gb", 1, 2}, {"2g.24gb", 2, 2}, {"3g.48gb", 3, 4},
    {"4g.48gb", 4, 4}, {"7g.96gb", 7, 8}, {NULL, 0, 0}};
static const gc__mig_profile gc__mig_141[] = {
    {"1g.18gb", 1, 1}, {"1g.35gb", 1, 2},  {"2g.35gb", 2, 2}, {"3g.71gb", 3, 4},
    {"4g.71gb", 4, 4}, {"7g.141gb", 7, 8}, {NULL, 0, 0}};
static const gc__mig_profile gc__mig_144[] = {
    {"1g.18gb", 1, 1}, {"1g.36gb", 1, 2},  {"2g.36gb", 2, 2}, {"3g.72gb", 3, 4},
    {"4g.72gb", 4, 4}, {"7g.144gb", 7, 8}, {NULL, 0, 0}};
static const gc__mig_profile gc__mig_180[] = {
    {"1g.23gb", 1, 1}, {"1g.45gb", 1, 2},  {"2g.45gb", 2, 2}, {"3g.90gb", 3, 4},
    {"4g.90gb", 4, 4}, {"7g.180gb", 7, 8}, {NULL, 0, 0}};
static const gc__mig_profile gc__mig_186[] = {
    {"1g.23gb", 1, 1}, {"1g.47gb", 1, 2},  {"2g.47gb", 2, 2}, {"3g.93gb", 3, 4},
    {"4g.93gb", 4, 4}, {"7g.186gb", 7, 8}, {NULL, 0, 0}};

enum {
        GC__FAM_A30,
        GC__FAM_A100_40,
        GC__FAM_80,
        GC__FAM_94,
        GC__FAM_96,
        GC__FAM_141,
        GC__FAM_144,
        GC__FAM_180,
        GC__FAM_186,
        GC__FAM_COUNT,
};

static const gc__mig_family gc__mig_families[GC__FAM_COUNT] = {
    [GC__FAM_A30] = {"A30 24GB", 4, 4, 24, gc__mig_a30},
    [GC__FAM_A100_40] = {"A100 40GB", 7, 8, 40, gc__mig_a100_40},
    [GC__FAM_80] = {"80GB (A100, H100, H800)", 7, 8, 80, gc__mig_80},
    [GC__FAM_94] = {"H100 94GB", 7, 8, 94, gc__mig_94},
    [GC__FAM_96] = {"96GB (H100, GH200, H20)", 7, 8, 96, gc__mig_96},
    [GC__FAM_141] = {"H200 141GB", 7, 8, 141, gc__mig_141},
    [GC__FAM_144] = {"GH200 144GB", 7, 8, 144, gc__mig_144},
    [GC__FAM_180] = {"B200 180GB", 7, 8, 180, gc__mig_180},
    [GC__FAM_186] = {"GB200 186GB", 7, 8, 186, gc__mig_186},
};

/* A "<digits>G" or "<digits>GB" token (memory size in a product name); 0 when not one. */
static int gc__size_token(const char *tok, size_t n)
{
        int v = 0;
        size_t i = 0;

        while (i < n && tok[i] >= '0' && tok[i] <= '9' && v < 100000)
                v = v * 10 + (tok[i++] - '0');
        if (i == 0)
                return 0;
        if (i + 1 == n && tok[i] == 'G')
                return v;
        if (i + 2 == n && tok[i] == 'G' && tok[i + 1] == 'B')
                return v;
        return 0;
}

/*
 * The MIG family of a GPU model, or -1. The model is split into dash- (or space-) separated
 * tokens so that "H20" never matches "H200": the GPU name must be a whole token.
 */
static int gc__mig_family_of(const char *model, int *ret_size_gb)
{
        char buf[GC__MODEL_MAX_LEN + 1];
        const char *tok[16];
        size_t tlen[16], nt = 0, n;
        int gpu = -1, size_gb = 0, nvl = 0;

        *ret_size_gb = 0;
        if (!model)
                return -1;
        n = strnlen(model, GC__MODEL_MAX_LEN + 1);
        if (n > GC__MODEL_MAX_LEN)
                return -1;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)model[i];

                buf[i] = c == ' ' || c == '_' ? '-' : (char)toupper(c);
        }
        buf[n] = '\0';
        for (size_t i = 0; i < n && nt < 16;) {
                size_t j = i;

                while (j < n && buf[j] != '-')
                        j++;
                if (j > i) {
                        tok[nt] = buf + i;
                        tlen[nt] = j - i;
                        nt++;
                }
                i = j + 1;
        }
        for (size_t k = 0; k < nt; k++) {
                static const struct {
                        const char *name;
                        int id;
                } gpus[] = {{"A30", 0},  {"A100", 1},  {"A800", 1}, {"H100", 2}, {"H800", 2},
                            {"H200", 3}, {"GH200", 4}, {"H20", 5},  {"B200", 6}, {"GB200", 7}};
                int sz;

                /* Everything from "MIG" on names the slice, not the parent. */
                if (tlen[k] == 3 && memcmp(tok[k], "MIG", 3) == 0)
                        break;
                if (tlen[k] == 3 && memcmp(tok[k], "NVL", 3) == 0)
                        nvl = 1;
                sz = gc__size_token(tok[k], tlen[k]);
                if (sz && !size_gb)
                        size_gb = sz;
                for (size_t g = 0; gpu < 0 && g < sizeof(gpus) / sizeof(gpus[0]); g++)
                        if (strlen(gpus[g].name) == tlen[k] &&
                            memcmp(gpus[g].name, tok[k], tlen[k]) == 0)
                                gpu = gpus[g].id;
        }
        *ret_size_gb = size_gb;
        switch (gpu) {
        case 0:
                return GC__FAM_A30;
        case 1:
                return size_gb == 80 ? GC__FAM_80 : GC__FAM_A100_40;
        case 2:
                if (size_gb == 94 || (nvl && size_gb != 96))
                        return GC__FAM_94;
                return size_gb == 96 ? GC__FAM_96 : GC__FAM_80;
        case 3:
                return GC__FAM_141;
        case 4:
                return size_gb == 144 ? GC__FAM_144 : GC__FAM_96;
        case 5:
                return GC__FAM_96;
        case 6:
                return GC__FAM_180;
        case 7:
                return GC__FAM_186;
        default:
                return -1;
        }
}

/*
 * Splits "<c>g.<m>gb[suffixes]" into c, m and the length of the base name. Suffixes are
 * ([.+-][a-z]+)*; *ret_known_suffix is 0 when one of them is not me, gfx or all.
 */
static int gc__mig_profile_parse(const char *p, int *ret_c, int *ret_m, size_t *ret_base,
                                 int *ret_known_suffix)
{
        const char *s = p;
        int c = 0, m = 0, known = 1;

        if (!p || *s < '1' || *s > '9')
                return -EINVAL;
        while (*s >= '0' && *s <= '9' && c < 1000)
                c = c * 10 + (*s++ - '0');
        if (*s++ != 'g' || *s++ != '.' || *s < '1' || *s > '9')
                return -EINVAL;
        while (*s >= '0' && *s <= '9' && m < 100000)
                m = m * 10 + (*s++ - '0');
        if (s[0] != 'g' || s[1] != 'b')
                return -EINVAL;
        s += 2;
        *ret_base = (size_t)(s - p);
        while (*s) {
                const char *w;

                if (*s != '.' && *s != '+' && *s != '-')
                        return -EINVAL;
                w = ++s;
                while (*s >= 'a' && *s <= 'z')
                        s++;
                if (s == w)
                        return -EINVAL;
                if (!((s - w == 2 && memcmp(w, "me", 2) == 0) ||
                      (s - w == 3 && memcmp(w, "gfx", 3) == 0) ||
                      (s - w == 3 && memcmp(w, "all", 3) == 0)))
                        known = 0;
        }
        if (c < 1 || c > 7 || m < 1)
                return -EINVAL;
        *ret_c = c;
        *ret_m = m;
        *ret_known_suffix = known;
        return 0;
}

static const gc__mig_profile *gc__mig_lookup(const gc__mig_family *f, const char *base, size_t n)
{
        for (const gc__mig_profile *q = f->profiles; q->name; q++)
                if (strlen(q->name) == n && memcmp(q->name, base, n) == 0)
                        return q;
        return NULL;
}

/*
 * Memory slices of a 1g profile the tables do not place: the larger 1g holds two eighths of the
 * memory. Decided by the parent's memory when known, else by what every table that lists the
 * name agrees on, else the smaller.
 */
static int gc__mig_1g_memory(int parent_gb, const char *base, size_t n, int mem_gb)
{
        int seen1 = 0, seen2 = 0;

        if (parent_gb > 0)
                return (int64_t)mem_gb * 16 >= (int64_t)parent_gb * 3 ? 2 : 1;
        for (int f = 0; f < GC__FAM_COUNT; f++) {
                const gc__mig_profile *q = gc__mig_lookup(&gc__mig_families[f], base, n);

                if (q && gc__mig_families[f].memory_total == 8) {
                        seen1 |= q->memory == 1;
                        seen2 |= q->memory == 2;
                }
        }
        return seen2 && !seen1 ? 2 : 1;
}

int gc_mig_share(const char *parent_model, const char *profile, double *ret_share,
                 int *ret_estimate)
{
        int c, m, known_suffix, fam, mem, size_gb;
        size_t base;
        double share;

        if (!profile || !ret_share || !ret_estimate)
                return -EINVAL;
        if (gc__mig_profile_parse(profile, &c, &m, &base, &known_suffix) < 0)
                return -EINVAL;
        fam = gc__mig_family_of(parent_model, &size_gb);
        if (fam >= 0) {
                const gc__mig_family *f = &gc__mig_families[fam];
                const gc__mig_profile *q = gc__mig_lookup(f, profile, base);

                if (q) {
                        share = fmax((double)q->compute / f->compute_total,
                                     (double)q->memory / f->memory_total);
                        *ret_share = share;
                        *ret_estimate = !known_suffix;
                        return 0;
                }
        }
        /* The pattern: C=7, M=8; 1g -> 1 or 2, 2g -> 2, 3g and 4g -> 4, 7g -> 8 slices. */
        switch (c) {
        case 1:
                mem = gc__mig_1g_memory(fam >= 0 ? gc__mig_families[fam].memory_gb : size_gb,
                                        profile, base, m);
                break;
        case 2:
                mem = 2;
                break;
        case 3:
        case 4:
                mem = 4;
                break;
        case 7:
                mem = 8;
                break;
        default: /* 5g and 6g exist on no GPU; keep the memory share above the compute share */
                mem = c + 1;
        }
        share = fmax(c / 7.0, mem / 8.0);
        *ret_share = share > 1.0 ? 1.0 : share;
        *ret_estimate = 1;
        return 0;
}

/* ---- other accelerators ---------------------------------------------------------------------- */

/*
 * AMD Instinct GPUs that partition, with their compute units and XCDs (the compute dies; CPX
 * makes one partition of each), from the ROCm "GPU hardware specifications" table
 * (rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html: "304 (38 per XCD)" for an MI300X).
 * The partition counts are the amdgpu driver's (drivers/gpu/drm/amd/amdgpu/aqua_vanjaram.c,
 * __aqua_vanjaram_get_xcc_per_xcp: SPX all XCCs in one, DPX halves, TPX thirds, QPX quarters,
 * CPX one XCC each), which amdsmi.h states for the MI300X as SPX 1, DPX 2, QPX 4, CPX 8.
 */
static const struct {
        const char *name;
        int cus;
        int xcds;
} gc__amd_partitionable[] = {
    {"MI300X", 304, 8}, {"MI325X", 304, 8}, {"MI300A", 228, 6},
    {"MI350X", 256, 8}, {"MI355X", 256, 8}, {"MI350P", 128, 4},
};

#define GC__AMD_TOKEN_MAX 15

/* The "MI300X"-style token of an AMD product or model name (separated by '-', '_', ' ' or '/'),
 * upper-cased into out; 0 when there is none. */
static size_t gc__amd_token(const char *s, char out[GC__AMD_TOKEN_MAX + 1])
{
        size_t n = s ? strnlen(s, GC__MODEL_MAX_LEN + 1) : 0;

        for (size_t i = 0; i < n && n <= GC__MODEL_MAX_LEN;) {
                size_t j = i;

                while (j < n && s[j] != '-' && s[j] != '_' && s[j] != ' ' && s[j] != '/')
                        j++;
                if (j - i >= 3 && j - i <= GC__AMD_TOKEN_MAX &&
                    toupper((unsigned char)s[i]) == 'M' &&
                    toupper((unsigned char)s[i + 1]) == 'I' && isdigit((unsigned char)s[i + 2])) {
                        for (size_t k = i; k < j; k++)
                                out[k - i] = (char)toupper((unsigned char)s[k]);
                        out[j - i] = '\0';
                        return j - i;
                }
                i = j + 1;
        }
        return 0;
}

int gc_amd_partitions(const char *model, const char *mode, int64_t cu_count,
                      int64_t *ret_partitions, int *ret_estimate)
{
        static const char *const modes = "sdtqc"; /* spx dpx tpx qpx cpx: 1 2 3 4 per-XCD */
        char tok[GC__AMD_TOKEN_MAX + 1];
        int cus = 0, xcds = 0;
        const char *m;

        if (!ret_partitions || !ret_estimate)
                return -EINVAL;
        if (gc__amd_token(model, tok) > 0)
                for (size_t i = 0;
                     i < sizeof(gc__amd_partitionable) / sizeof(gc__amd_partitionable[0]); i++)
                        if (strcmp(tok, gc__amd_partitionable[i].name) == 0) {
                                cus = gc__amd_partitionable[i].cus;
                                xcds = gc__amd_partitionable[i].xcds;
                        }
        if (mode && *mode) {
                char c = (char)tolower((unsigned char)mode[0]);

                m = strchr(modes, c);
                if (!m || tolower((unsigned char)mode[1]) != 'p' ||
                    tolower((unsigned char)mode[2]) != 'x' || (mode[3] && mode[3] != '_'))
                        return -EINVAL;
                if (*m == 'c') {
                        *ret_partitions = xcds ? xcds : 8;
                        *ret_estimate = !xcds;
                } else {
                        *ret_partitions = (m - modes) + 1;
                        *ret_estimate = 0;
                }
                return 0;
        }
        *ret_partitions = 1;
        *ret_estimate = 0;
        /* The labeller reports one device's compute units: a partition's when partitioned. */
        if (cus && cu_count > 0 && cu_count < cus && cus % cu_count == 0) {
                int64_t p = cus / cu_count;

                if (p == xcds || (p <= 4 && p <= xcds))
                        *ret_partitions = p;
        }
        return 0;
}

/* AMD device ids to their products, from the labeller's own table (ROCm k8s-device-plugin,
 * cmd/k8s-node-labeller/amdgpu.ids); VF and HF variants are the same GPU for pricing. */
static const gc_label gc__amd_device_ids[] = {
    {"738c", "MI100"},  {"7408", "MI250X"}, {"740c", "MI250X"}, {"740f", "MI210"},
    {"74a0", "MI300A"}, {"74a1", "MI300X"}, {"74a2", "MI308X"}, {"74a5", "MI325X"},
    {"74a8", "MI308X"}, {"74a9", "MI300X"}, {"74b5", "MI300X"}, {"74b6", "MI308X"},
    {"74b9", "MI325X"}, {"74bc", "MI308X"}, {"74bd", "MI300X"}, {"75a0", "MI350X"},
    {"75a3", "MI355X"}, {"75b0", "MI350X"}, {"75b3", "MI355X"},
};

/* GKE's TPU accelerator names (cloud.google.com/gke-tpu-accelerator, as the AI-Hypercomputer
 * xpk system characteristics and GKE's "Plan TPUs" page list them) to model names. */
static const gc_label gc__gke_tpus[] = {
    {"tpu-v4-podslice", "Google-TPU-v4"},     {"tpu-v5-lite-podslice", "Google-TPU-v5e"},
    {"tpu-v5-lite-device", "Google-TPU-v5e"}, {"tpu-v5p-slice", "Google-TPU-v5p"},
    {"tpu-v6e-slice", "Google-TPU-v6e"},      {"tpu7x", "Google-TPU-7x"},
};

/* The first of two label keys present (the current one, then its beta twin). */
static const char *gc__label2(const gc_node *n, const char *key, const char *beta,
                              const char **ret_key)
{
        const char *v = gc_node_label(n, key);

        if (!v || !*v) {
                v = gc_node_label(n, beta);
                key = beta;
        }
        *ret_key = key;
        return v && *v ? v : NULL;
}

int gc_accel_model(const gc_node *n, char *out, size_t outlen, const char **ret_source)
{
        char tok[GC__AMD_TOKEN_MAX + 1];
        const char *v, *key;
        int w = -1;

        if (!n || !out || !outlen || !ret_source)
                return -EINVAL;
        if ((v = gc__label2(n, "amd.com/gpu.product-name", "beta.amd.com/gpu.product-name",
                            &key))) {
                /* The labeller writes the product name with '_' for ' '
                 * ("AMD_Instinct_MI300X_OAM"): an Instinct is named by its MI token, anything else
                 * as written, with dashes. */
                if (gc__amd_token(v, tok) > 0) {
                        w = snprintf(out, outlen, "AMD-Instinct-%s", tok);
                } else {
                        w = snprintf(out, outlen, "%s", v);
                        for (char *p = out; *p; p++)
                                if (*p == '_')
                                        *p = '-';
                }
                *ret_source = strcmp(key, "amd.com/gpu.product-name") == 0
                                  ? "label amd.com/gpu.product-name"
                                  : "label beta.amd.com/gpu.product-name";
        } else if ((v = gc__label2(n, "amd.com/gpu.device-id", "beta.amd.com/gpu.device-id",
                                   &key))) {
                if (strncmp(v, "0x", 2) == 0)
                        v += 2;
                for (size_t i = 0; i < sizeof(gc__amd_device_ids) / sizeof(gc__amd_device_ids[0]);
                     i++)
                        if (strcasecmp(v, gc__amd_device_ids[i].key) == 0)
                                w = snprintf(out, outlen, "AMD-Instinct-%s",
                                             gc__amd_device_ids[i].value);
                if (w < 0)
                        return -ENOENT;
                *ret_source = strcmp(key, "amd.com/gpu.device-id") == 0
                                  ? "label amd.com/gpu.device-id"
                                  : "label beta.amd.com/gpu.device-id";
        } else if ((v = gc_node_label(n, "cloud.google.com/gke-tpu-accelerator")) && *v) {
                const char *m = v;

                for (size_t i = 0; i < sizeof(gc__gke_tpus) / sizeof(gc__gke_tpus[0]); i++)
                        if (strcmp(v, gc__gke_tpus[i].key) == 0)
                                m = gc__gke_tpus[i].value;
                w = snprintf(out, outlen, "%s", m);
                *ret_source = "label cloud.google.com/gke-tpu-accelerator";
        } else {
                return -ENOENT;
        }
        return w >= 0 && (size_t)w < outlen ? 0 : -ENAMETOOLONG;
}

/* ---- GPU-equivalents ------------------------------------------------------------------------- */

/* The MIG profile a resource name carries: "nvidia.com/mig-1g.10gb.me.shared" -> "1g.10gb.me". */
static int gc__mig_profile_of(const char *resource, char *out, size_t outlen, int *ret_shared)
{
        const char *slash = strrchr(resource, '/');
        const char *p = slash ? slash + 1 : resource;
        size_t n;

        if (strncmp(p, "mig-", 4) == 0)
                p += 4;
        n = strlen(p);
        *ret_shared = 0;
        if (n > 7 && strcmp(p + n - 7, ".shared") == 0) {
                n -= 7;
                *ret_shared = 1;
        }
        if (n == 0 || n >= outlen)
                return -EINVAL;
        memcpy(out, p, n);
        out[n] = '\0';
        return 0;
}

static int gc__ends_with(const char *s, const char *suffix)
{
        size_t n = strlen(s), k = strlen(suffix);

        return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A per-profile GFD label "nvidia.com/mig-<p>.<what>", or NULL. */
static const char *gc__mig_label(const gc_node *node, const char *profile, const char *what)
{
        char key[GC__RES_NAME_MAX + 32];

        if (!node)
                return NULL;
        snprintf(key, sizeof(key), "nvidia.com/mig-%s.%s", profile, what);
        return gc_node_label(node, key);
}

/* nvidia.com/mig-<p>.replicas when above 1, else 0. */
static int64_t gc__mig_replicas(const gc_node *node, const char *profile)
{
        const char *v = gc__mig_label(node, profile, "replicas");
        int64_t r;

        if (v && gc_parse_int64(v, &r) == 0 && r > 1 && r <= 1000000)
                return r;
        return 0;
}

/* The share of one nvidia.com/gpu device on a node running MIG strategy single. */
static int gc__mig_single_share(const gc_node *node, double *ret_share, int *ret_estimate)
{
        const char *gi;
        int64_t c;

        if (node->mig_single_profile)
                return gc_mig_share(node->gpu_model, node->mig_single_profile, ret_share,
                                    ret_estimate);
        gi = gc_node_label(node, "nvidia.com/gpu.slices.gi");
        if (node->mig_strategy && strcmp(node->mig_strategy, "single") == 0 && gi &&
            gc_parse_int64(gi, &c) == 0 && c >= 1 && c <= 7) {
                char profile[32];

                /* No profile in the product label: the slice count gives the pattern's share. */
                snprintf(profile, sizeof(profile), "%dg.1gb", (int)c);
                if (gc_mig_share(NULL, profile, ret_share, ret_estimate) == 0) {
                        *ret_estimate = 1;
                        return 0;
                }
        }
        *ret_share = 1.0;
        *ret_estimate = 0;
        return 0;
}

/* Partitions per GPU of one unit of an AMD resource: amd.com/gpu on a partitioned node counts the
 * node's (units_per_device), amd.com/<mode>_<nps> the partitions its name gives on the node's
 * model. A mode the name does not give is one unit a GPU, flagged. */
static int gc__amd_units(const char *resource, const gc_node *node, int64_t *ret_parts,
                         int *ret_estimate)
{
        const char *slash = strrchr(resource, '/');
        const char *name = slash ? slash + 1 : resource;

        *ret_parts = 1;
        *ret_estimate = 0;
        if (strcmp(name, "gpu") == 0) {
                if (node && node->units_per_device > 1) {
                        *ret_parts = node->units_per_device;
                        *ret_estimate = node->units_estimate;
                }
                return 0;
        }
        if (gc_amd_partitions(node ? node->gpu_model : NULL, name, 0, ret_parts, ret_estimate) <
            0) {
                *ret_parts = 1;
                *ret_estimate = 1;
        }
        return 0;
}

int gc_gpu_equivalents(const gc_res_table *t, const char *resource, int64_t count,
                       const gc_node *node, double *ret_geq, int *ret_estimate)
{
        const gc_res_rule *rule;
        double unit = 1.0;
        int est = 0, r;

        if (!t || !resource || !ret_geq || !ret_estimate || count < 0)
                return -EINVAL;
        rule = gc_res_table_match(t, resource);
        if (!rule)
                return -ENOENT;
        switch (rule->kind) {
        case GC_RES_FIXED:
                unit = rule->gpus_per_unit;
                break;
        case GC_RES_GPU:
        case GC_RES_GPU_SHARED: {
                int shared = rule->kind == GC_RES_GPU_SHARED;

                if (!node) {
                        est = shared; /* replicas unknown */
                        break;
                }
                r = gc__mig_single_share(node, &unit, &est);
                if (r < 0)
                        return r;
                if (node->replicas > 1 ||
                    (node->product && gc__ends_with(node->product, "-SHARED")))
                        shared = 1;
                if (shared && node->replicas > 1)
                        unit /= (double)node->replicas;
                else if (shared)
                        est = 1; /* shared, but by how many is unknown */
                break;
        }
        case GC_RES_MIG: {
                char profile[GC__RES_NAME_MAX + 1];
                int64_t reps;
                int shared;

                r = gc__mig_profile_of(resource, profile, sizeof(profile), &shared);
                if (r < 0)
                        return r;
                r = gc_mig_share(node ? node->gpu_model : NULL, profile, &unit, &est);
                if (r < 0)
                        return r;
                /*
                 * Time-sliced MIG devices keep their name unless renamed to .shared; either way
                 * the per-profile replicas label says how many share one device. A .shared name
                 * falls back to the node's replicas.
                 */
                reps = gc__mig_replicas(node, profile);
                if (shared && reps == 0 && node && node->replicas > 1)
                        reps = node->replicas;
                if (reps > 1) {
                        unit /= (double)reps;
                } else if (shared) {
                        est = 1; /* shared, but by how many is unknown */
                } else {
                        const char *prod = gc__mig_label(node, profile, "product");

                        if (prod && gc__ends_with(prod, "-SHARED"))
                                est = 1;
                }
                break;
        }
        case GC_RES_AMD: {
                int64_t parts;

                r = gc__amd_units(resource, node, &parts, &est);
                if (r < 0)
                        return r;
                unit = 1.0 / (double)parts;
                break;
        }
        case GC_RES_NEURON:
                break;
        case GC_RES_NEURONCORE:
                if (node && node->units_per_device > 1) {
                        unit = 1.0 / node->units_per_device;
                        est = node->units_estimate;
                } else if (!node || !node->units_per_device) {
                        /* Cores per device unknown: two, as on Trn1 and Inf2 (docs/model.md). */
                        unit = 0.5;
                        est = 1;
                }
                break;
        default:
                return -EINVAL;
        }
        *ret_geq = unit * (double)count;
        *ret_estimate = est;
        return 0;
}

int gc_pod_gpu_equivalents(const gc_res_table *t, const gc_pod *pod, const gc_node *node,
                           double *ret_geq, int *ret_estimate)
{
        double sum = 0;
        int est = 0;

        if (!t || !pod || !ret_geq || !ret_estimate || pod->n_gpu > GC_POD_MAX_GPU_RES)
                return -EINVAL;
        for (size_t i = 0; i < pod->n_gpu; i++) {
                double g;
                int e, r;

                r = gc_gpu_equivalents(t, pod->gpu[i].resource, pod->gpu[i].count, node, &g, &e);
                if (r < 0)
                        return r;
                sum += g;
                est |= e;
        }
        *ret_geq = sum;
        *ret_estimate = est;
        return 0;
}
