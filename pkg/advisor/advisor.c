/* advisor rules: per-pod findings from measured use, cluster findings from the ledger and prices.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/model.h"
#include "../report/report.h"
#include "advisor_int.h"

#define GC__DAY                86400
#define GC__POOL_BYTES         (256u << 20) /* texts of one result; findings are capped anyway */
#define GC__TEXT_MAX           4096         /* one summary, stanza or text figure */
#define GC__MIB_PER_PROFILE_GB 972.8        /* 0.95 GiB: nvidia.com/mig-1g.5gb.memory is 4864 MiB */

static const char *const gc__kind_names[GC_FINDING_KIND_COUNT] = {
    [GC_FINDING_IDLE_GPU] = "idle_gpu",
    [GC_FINDING_OVER_REQUESTED] = "over_requested",
    [GC_FINDING_MIG_FIT] = "mig_fit",
    [GC_FINDING_SHARE_FIT] = "share_fit",
    [GC_FINDING_CHEAPER_CLASS] = "cheaper_class",
    [GC_FINDING_UNATTRIBUTED] = "unattributed",
    [GC_FINDING_IDLE_CAPACITY] = "idle_capacity",
    [GC_FINDING_RESERVE_FLOOR] = "reserve_floor",
    [GC_FINDING_BUY_VS_RENT] = "buy_vs_rent",
};

const char *gc_finding_kind_name(gc_finding_kind k)
{
        if ((unsigned)k >= GC_FINDING_KIND_COUNT)
                return NULL;
        return gc__kind_names[k];
}

int gc_finding_kind_parse(const char *s, gc_finding_kind *ret)
{
        if (!s || !ret)
                return -EINVAL;
        for (int k = 0; k < GC_FINDING_KIND_COUNT; k++)
                if (strcmp(s, gc__kind_names[k]) == 0) {
                        *ret = (gc_finding_kind)k;
                        return 0;
                }
        return -ENOENT;
}

/* ---- options -------------------------------------------------------------------------------- */

void gc_advisor_opts_default(gc_advisor_opts *ret)
{
        /* A10G: published price about a third of an A100's and a sixth of an H100's, 24 GB. */
        static const char *const from[] = {"NVIDIA-H100*", "NVIDIA-A100*"};

        memset(ret, 0, sizeof(*ret));
        ret->idle_activity = 0.05;
        ret->idle_memory_fraction = 0.10;
        ret->idle_minutes = 30;
        ret->min_samples = 30;
        ret->min_coverage = 0.5;
        ret->over_request_active_activity = 0.05;
        ret->mig_headroom = 0.2;
        gc_strlcpy(ret->dra_gpu_class, "gpu.nvidia.com", sizeof(ret->dra_gpu_class));
        gc_strlcpy(ret->dra_mig_class, "mig.nvidia.com", sizeof(ret->dra_mig_class));
        for (size_t i = 0; i < 2; i++) {
                gc_advisor_class *c = &ret->cheaper_classes[i];

                gc_strlcpy(c->from, from[i], sizeof(c->from));
                gc_strlcpy(c->to, "NVIDIA-A10G", sizeof(c->to));
                c->max_tensor_activity = 0.10;
                c->to_memory_mib = 22528; /* 22 GiB of the 24 GB: what a workload can hold */
        }
        ret->n_cheaper_classes = 2;
        ret->reserve_percentile = 0;
        ret->hours_per_month = 730;
        ret->max_findings = 1000;
        ret->max_notes = 100;
}

static int gc__bad(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int gc__bad(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        gc_verrf(err, errlen, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

static int gc__frac_ok(double v)
{
        return isfinite(v) && v >= 0 && v <= 1;
}

/* A model name or pattern: printable, no blanks at the ends, '*' only last. */
static int gc__model_ok(const char *s, size_t cap)
{
        size_t n = strnlen(s, cap);

        if (n == 0 || n >= cap)
                return 0;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];

                if (c < 0x20 || c > 0x7e || (c == '*' && i + 1 != n))
                        return 0;
        }
        return s[0] != ' ' && s[n - 1] != ' ';
}

int gc_advisor_opts_check(const gc_advisor_opts *o, char *err, size_t errlen)
{
        if (!o)
                return gc__bad(err, errlen, "advisor options missing");
        if (!gc__frac_ok(o->idle_activity))
                return gc__bad(err, errlen, "idle_activity: must be a number in [0, 1]");
        if (!gc__frac_ok(o->idle_memory_fraction))
                return gc__bad(err, errlen, "idle_memory_fraction: must be a number in [0, 1]");
        if (!isfinite(o->idle_minutes) || o->idle_minutes <= 0 || o->idle_minutes > 525600)
                return gc__bad(err, errlen, "idle_minutes: must be a number in (0, 525600]");
        if (o->min_samples < 1 || o->min_samples > 100000000)
                return gc__bad(err, errlen, "min_samples: must be an integer in [1, 100000000]");
        if (!gc__frac_ok(o->min_coverage))
                return gc__bad(err, errlen, "min_coverage: must be a number in [0, 1]");
        if (!gc__frac_ok(o->over_request_active_activity))
                return gc__bad(err, errlen,
                               "over_request_active_activity: must be a number in [0, 1]");
        if (!isfinite(o->mig_headroom) || o->mig_headroom < 0 || o->mig_headroom > 10)
                return gc__bad(err, errlen, "mig_headroom: must be a number in [0, 10]");
        if (o->n_cheaper_classes > GC_ADVISOR_MAX_CLASSES)
                return gc__bad(err, errlen, "cheaper_classes: at most %d entries",
                               GC_ADVISOR_MAX_CLASSES);
        for (size_t i = 0; i < o->n_cheaper_classes; i++) {
                const gc_advisor_class *c = &o->cheaper_classes[i];

                if (!gc__model_ok(c->from, sizeof(c->from)))
                        return gc__bad(err, errlen,
                                       "cheaper_classes[%zu].from: must be a GPU model or a "
                                       "pattern ending in '*', 1 to %d printable characters",
                                       i, GC_ADVISOR_MODEL_MAX - 1);
                if (!gc__model_ok(c->to, sizeof(c->to)) || strchr(c->to, '*'))
                        return gc__bad(err, errlen,
                                       "cheaper_classes[%zu].to: must be a GPU model, 1 to %d "
                                       "printable characters, no '*'",
                                       i, GC_ADVISOR_MODEL_MAX - 1);
                if (!gc__frac_ok(c->max_tensor_activity))
                        return gc__bad(err, errlen,
                                       "cheaper_classes[%zu].max_tensor_activity: must be a "
                                       "number in [0, 1]",
                                       i);
                if (!isfinite(c->to_memory_mib) || c->to_memory_mib < 0 || c->to_memory_mib > 1e7)
                        return gc__bad(err, errlen,
                                       "cheaper_classes[%zu].to_memory_mib: must be a number in "
                                       "[0, 10000000]",
                                       i);
        }
        if (!isfinite(o->reserve_percentile) || o->reserve_percentile < 0 ||
            o->reserve_percentile > 100)
                return gc__bad(err, errlen, "reserve_percentile: must be a number in [0, 100]");
        if (!isfinite(o->hours_per_month) || o->hours_per_month <= 0 || o->hours_per_month > 744)
                return gc__bad(err, errlen, "hours_per_month: must be a number in (0, 744]");
        if (o->max_findings > 1000000)
                return gc__bad(err, errlen, "max_findings: must be an integer in [0, 1000000]");
        if (o->max_notes > 100000)
                return gc__bad(err, errlen, "max_notes: must be an integer in [0, 100000]");
        return 0;
}

/* ---- the run's state ------------------------------------------------------------------------ */

#define GC__MIG_CACHE 16

struct gc__mig_table;

typedef struct gc__adv {
        const gc_advisor_input *in;
        const gc_advisor_opts *o;
        gc_advisor_result *r;
        int64_t wstart, wend; /* the window; wend = min(end, now) */
        double window_h;
        gc_finding *f; /* every finding, before the cut */
        size_t nf, capf;
        size_t capn;
        gc_buf scratch;
        struct gc__mig_table *mig; /* GC__MIG_CACHE + 1 (scratch) tables */
        size_t n_mig;
} gc__adv;

/* The catalog's currency for money in the findings' sentences (the JSON's "currency" says it too).
 */
static const char *gc__cur(const gc__adv *a)
{
        const gc_catalog *cat = a->in->catalog;

        return cat && cat->currency && *cat->currency ? cat->currency : "USD";
}

/* Money in a sentence as the report writes it everywhere ("$1,234.56", "1,234.56 EUR"). */
static const char *gc__money(const gc__adv *a, double v, char out[GC_REPORT_MONEY_LEN])
{
        gc_report_money(v, gc__cur(a), out);
        return out;
}

static const char *gc__str(gc__adv *a, const char *s)
{
        return s ? gc_strpool_intern0(a->r->pool, s) : NULL;
}

static const char *gc__fmt(gc__adv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *gc__fmt(gc__adv *a, const char *fmt, ...)
{
        va_list ap;
        int r;

        gc_buf_reset(&a->scratch);
        va_start(ap, fmt);
        r = gc_buf_vprintf(&a->scratch, fmt, ap);
        va_end(ap);
        if (r < 0)
                return NULL;
        return gc_strpool_intern(a->r->pool, a->scratch.data, a->scratch.len);
}

/* Keeps the first max_notes notes, counts them all. */
static int gc__note(gc__adv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int gc__note(gc__adv *a, const char *fmt, ...)
{
        gc_advisor_result *r = a->r;
        const char *s;
        va_list ap;
        int rc;

        r->n_notes_total++;
        if (r->n_notes >= a->o->max_notes)
                return 0;
        gc_buf_reset(&a->scratch);
        va_start(ap, fmt);
        rc = gc_buf_vprintf(&a->scratch, fmt, ap);
        va_end(ap);
        if (rc < 0)
                return rc;
        s = gc_strpool_intern(r->pool, a->scratch.data, a->scratch.len);
        if (!s)
                return -ENOMEM;
        if (r->n_notes == a->capn) {
                size_t cap = a->capn ? 2 * a->capn : 16;
                const char **v = realloc(r->notes, cap * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                r->notes = v;
                a->capn = cap;
        }
        r->notes[r->n_notes++] = s;
        return 0;
}

static gc_finding *gc__finding(gc__adv *a, gc_finding_kind kind)
{
        gc_finding *f;

        if (a->nf == a->capf) {
                size_t cap = a->capf ? 2 * a->capf : 64;
                gc_finding *v = realloc(a->f, cap * sizeof(*v));

                if (!v)
                        return NULL;
                a->f = v;
                a->capf = cap;
        }
        f = &a->f[a->nf++];
        memset(f, 0, sizeof(*f));
        f->kind = kind;
        f->coverage = NAN;
        f->window_start = a->wstart;
        f->window_end = a->wend;
        return f;
}

static void gc__num(gc_finding *f, const char *name, double v)
{
        if (f->n_figures < GC_ADVISOR_MAX_FIGURES) {
                f->figures[f->n_figures].name = name;
                f->figures[f->n_figures].value = v;
                f->figures[f->n_figures].text = NULL;
                f->n_figures++;
        }
}

static void gc__text(gc_finding *f, const char *name, const char *text)
{
        if (text && f->n_figures < GC_ADVISOR_MAX_FIGURES) {
                f->figures[f->n_figures].name = name;
                f->figures[f->n_figures].value = NAN;
                f->figures[f->n_figures].text = text;
                f->n_figures++;
        }
}

const gc_advisor_figure *gc__adv_figure(const gc_finding *f, const char *name)
{
        for (size_t i = 0; i < f->n_figures; i++)
                if (strcmp(f->figures[i].name, name) == 0)
                        return &f->figures[i];
        return NULL;
}

double gc__adv_num(const gc_finding *f, const char *name)
{
        const gc_advisor_figure *g = gc__adv_figure(f, name);

        return g && !g->text ? g->value : NAN;
}

/* ---- helpers -------------------------------------------------------------------------------- */

/* Catalog-style model comparison: no case, spaces and dashes equal; a trailing '*' is a prefix. */
static int gc__model_match(const char *pattern, const char *model)
{
        size_t i = 0;

        if (!pattern || !model)
                return 0;
        for (;; i++) {
                int p = (unsigned char)pattern[i], m = (unsigned char)model[i];

                if (p == '*' && pattern[i + 1] == '\0')
                        return 1;
                if (p == ' ')
                        p = '-';
                if (m == ' ')
                        m = '-';
                if (tolower(p) != tolower(m))
                        return 0;
                if (!p)
                        return 1;
        }
}

static int gc__ci_eq(const char *a, const char *b)
{
        return a && b && strcasecmp(a, b) == 0;
}

/* A catalog price for (model, capacity type) that names the model (not the "*" catch-all). */
static const gc_price_entry *gc__price(const gc_catalog *c, const char *model, const char *ctype,
                                       int exact_ctype)
{
        const gc_price_entry *e = NULL;

        if (!c || !model || gc_catalog_lookup(c, model, ctype, NULL, &e) < 0)
                return NULL;
        if (strcmp(e->model, "*") == 0)
                return NULL;
        if (exact_ctype && !gc__ci_eq(e->capacity_type, ctype))
                return NULL;
        return e;
}

static const char *gc__price_source(gc__adv *a, const gc_price_entry *e)
{
        return gc__fmt(a, "catalog %s/%s/%s", e->model, e->capacity_type,
                       e->region && *e->region ? e->region : "*");
}

static int64_t gc__min64(int64_t x, int64_t y)
{
        return x < y ? x : y;
}

static int64_t gc__max64(int64_t x, int64_t y)
{
        return x > y ? x : y;
}

/* What the pod costs a month at its rate over the window (docs/advisor.md). */
static double gc__pod_monthly(const gc__adv *a, const gc_advisor_pod *p, double *ret_hours)
{
        int64_t end = p->end == GC_OPEN || p->end > a->wend ? a->wend : p->end;
        int64_t start = gc__max64(p->start, a->wstart);
        double h = end > start ? (double)(end - start) / 3600.0 : 0;

        *ret_hours = h;
        if (a->window_h <= 0)
                return 0;
        return p->geq * p->price_per_gpu_hour * h / a->window_h * a->o->hours_per_month;
}

/* The pod holds its GPUs through DRA ResourceClaims. */
static int gc__dra(const gc_advisor_pod *p)
{
        return p->resource && strcmp(p->resource, GC_ADVISOR_DRA_RESOURCE) == 0;
}

static int gc__whole_gpus(const gc_advisor_pod *p)
{
        return p->resource && (strcmp(p->resource, "nvidia.com/gpu") == 0 || gc__dra(p)) &&
               !p->mig_profile && p->gpus_requested >= 1 &&
               p->gpus_requested == floor(p->gpus_requested) &&
               fabs(p->geq - p->gpus_requested) < 1e-9;
}

/* Long-running owners: what serves inference. Jobs and bare pods are batch or experiments. */
static int gc__inference(const gc_advisor_pod *p)
{
        static const char *const kinds[] = {"ReplicaSet", "Deployment", "StatefulSet"};

        for (size_t i = 0; p->controller_kind && i < sizeof(kinds) / sizeof(kinds[0]); i++)
                if (strcmp(p->controller_kind, kinds[i]) == 0)
                        return 1;
        return 0;
}

static void gc__subject(gc__adv *a, gc_finding *f, const gc_advisor_pod *p)
{
        f->ns = gc__str(a, p->ns);
        f->pod = gc__str(a, p->name);
        f->team = gc__str(a, p->team ? p->team : GC_UNATTRIBUTED);
        f->project = gc__str(a, p->project ? p->project : GC_UNATTRIBUTED);
        f->node = gc__str(a, p->node);
        f->model = gc__str(a, p->model);
        f->capacity_type = gc__str(a, p->capacity_type);
        f->controller_kind = gc__str(a, p->controller_kind);
        f->controller = gc__str(a, p->controller);
        f->samples = p->samples;
        f->coverage = p->coverage;
        if (p->usage_end > p->usage_start) {
                f->window_start = p->usage_start;
                f->window_end = p->usage_end;
        }
}

/* The owner to scale: a ReplicaSet's Deployment is its name without the template hash. */
static const char *gc__scale_cmd(gc__adv *a, const gc_advisor_pod *p, const char *what)
{
        const char *ns = p->ns ? p->ns : "default";

        if (p->controller_kind && p->controller && strcmp(p->controller_kind, "ReplicaSet") == 0) {
                const char *dash = strrchr(p->controller, '-');

                if (dash && dash != p->controller)
                        return gc__fmt(a, "kubectl -n %s scale deployment/%.*s --replicas=%s", ns,
                                       (int)(dash - p->controller), p->controller, what);
        }
        if (p->controller_kind && p->controller && strcmp(p->controller_kind, "StatefulSet") == 0)
                return gc__fmt(a, "kubectl -n %s scale statefulset/%s --replicas=%s", ns,
                               p->controller, what);
        return gc__fmt(a, "kubectl -n %s delete pod %s", ns, p->name ? p->name : "");
}

/* ---- per-pod rules -------------------------------------------------------------------------- */

/* A candidate finding for one pod, kept only when it saves the most of the pod's candidates. */
typedef struct gc__cand {
        int ok;
        gc_finding f;
} gc__cand;

static int gc__idle_gpu(gc__adv *a, const gc_advisor_pod *p, double monthly, gc__cand *c)
{
        char m1[GC_REPORT_MONEY_LEN];
        double span = (double)(p->usage_end - p->usage_start), frac, hpd;
        gc_finding *f = &c->f;

        if ((double)p->idle_longest_s < a->o->idle_minutes * 60.0)
                return 0;
        if (span < (double)p->idle_total_s)
                span = (double)p->idle_total_s;
        if (span < (double)p->idle_longest_s)
                span = (double)p->idle_longest_s;
        frac = span > 0 ? (double)p->idle_total_s / span : 1;
        if (frac > 1)
                frac = 1;
        f->kind = GC_FINDING_IDLE_GPU;
        gc__subject(a, f, p);
        hpd = p->geq * p->price_per_gpu_hour * 24;
        gc__num(f, "activity_mean", p->activity_mean);
        gc__num(f, "activity_p95", p->activity_p95);
        gc__num(f, "mem_used_peak_mib", p->mem_used_peak_mib);
        gc__num(f, "mem_total_mib", p->mem_total_mib);
        gc__num(f, "idle_activity", a->o->idle_activity);
        gc__num(f, "idle_memory_fraction", a->o->idle_memory_fraction);
        gc__num(f, "idle_longest_minutes", (double)p->idle_longest_s / 60.0);
        gc__num(f, "idle_hours", (double)p->idle_total_s / 3600.0);
        gc__num(f, "measured_hours", span / 3600.0);
        gc__num(f, "idle_fraction", frac);
        gc__num(f, "gpus", p->geq);
        gc__num(f, "price_per_gpu_hour", p->price_per_gpu_hour);
        gc__num(f, "cost_per_day", hpd);
        gc__num(f, "monthly_cost", monthly);
        gc__text(f, "activity_source", gc__str(a, p->activity_source));
        if (frac >= 0.9) {
                f->summary = gc__fmt(a,
                                     "%s/%s holds %.3g GPU(s) it does not use (idle %.0f%% of the "
                                     "measured time, %.1f h at a stretch): release them or scale "
                                     "to zero; they cost %s a day",
                                     p->ns, p->name, p->geq, frac * 100,
                                     (double)p->idle_longest_s / 3600.0, gc__money(a, hpd, m1));
                f->stanza = gc__scale_cmd(a, p, "0");
        } else {
                f->summary =
                    gc__fmt(a,
                            "%s/%s sits idle %.0f%% of the measured time (%.1f h at a "
                            "stretch) holding %.3g GPU(s): scale it to zero while idle "
                            "(e.g. KEDA on its queue) or share the GPU",
                            p->ns, p->name, frac * 100, (double)p->idle_longest_s / 3600.0, p->geq);
                f->stanza = gc__scale_cmd(a, p, "0");
        }
        f->monthly_savings = monthly * frac;
        c->ok = 1;
        return 0;
}

static int gc__over_requested(gc__adv *a, const gc_advisor_pod *p, double monthly, gc__cand *c)
{
        double n = p->gpus_requested;
        uint32_t k = p->devices_active;
        gc_finding *f = &c->f;

        if (!gc__whole_gpus(p) || n < 2 || k < 1 || (double)k >= n || (double)p->devices_seen < n)
                return 0;
        f->kind = GC_FINDING_OVER_REQUESTED;
        gc__subject(a, f, p);
        gc__num(f, "gpus_requested", n);
        gc__num(f, "devices_seen", p->devices_seen);
        gc__num(f, "devices_active", k);
        gc__num(f, "active_activity", a->o->over_request_active_activity);
        gc__num(f, "activity_mean", p->activity_mean);
        gc__num(f, "activity_p95", p->activity_p95);
        gc__num(f, "mem_used_peak_mib", p->mem_used_peak_mib);
        gc__num(f, "suggested_gpus", k);
        gc__num(f, "price_per_gpu_hour", p->price_per_gpu_hour);
        gc__num(f, "monthly_cost", monthly);
        gc__text(f, "activity_source", gc__str(a, p->activity_source));
        f->summary = gc__fmt(a,
                             "%s/%s requests %g GPUs but only %u show activity (mean >= %g): "
                             "request %u",
                             p->ns, p->name, n, k, a->o->over_request_active_activity, k);
        if (gc__dra(p))
                f->stanza = gc__fmt(a,
                                    "# the pod's ResourceClaimTemplate\nspec:\n  devices:\n    "
                                    "requests:\n    - name: gpu\n      exactly:\n        "
                                    "deviceClassName: %s\n        count: %u\n",
                                    a->o->dra_gpu_class, k);
        else
                f->stanza = gc__fmt(a, "resources:\n  limits:\n    nvidia.com/gpu: %u\n", k);
        f->monthly_savings = monthly * (n - k) / n;
        c->ok = 1;
        return 0;
}

/* Every MIG profile of the tables (docs/model.md) short of a whole GPU. */
static const char *const gc__mig_profiles[] = {
    "1g.5gb",  "1g.6gb",  "1g.10gb", "1g.12gb", "1g.18gb", "1g.20gb", "1g.23gb", "1g.24gb",
    "1g.35gb", "1g.36gb", "1g.45gb", "1g.47gb", "2g.10gb", "2g.12gb", "2g.20gb", "2g.24gb",
    "2g.35gb", "2g.36gb", "2g.45gb", "2g.47gb", "3g.20gb", "3g.40gb", "3g.47gb", "3g.48gb",
    "3g.71gb", "3g.72gb", "3g.90gb", "3g.93gb", "4g.20gb", "4g.24gb", "4g.40gb", "4g.47gb",
    "4g.48gb", "4g.71gb", "4g.72gb", "4g.90gb", "4g.93gb"};

typedef struct gc__mig_fit {
        const char *profile;
        double share, compute, memory_mib;
} gc__mig_fit;

#define GC__MIG_N (sizeof(gc__mig_profiles) / sizeof(gc__mig_profiles[0]))

/* A model's MIG profiles short of the whole GPU, smallest first (by share, then memory). */
typedef struct gc__mig_table {
        const char *model;
        gc__mig_fit p[GC__MIG_N];
        size_t n;
} gc__mig_table;

/* "<c>g.<m>gb" -> compute slices c and nominal memory m GB. */
static void gc__mig_parse(const char *p, int *ret_c, int *ret_gb)
{
        char *end;
        long c = strtol(p, &end, 10), gb = 0;

        if (*end == 'g' && end[1] == '.')
                gb = strtol(end + 2, NULL, 10);
        *ret_c = (int)c;
        *ret_gb = (int)gb;
}

static void gc__mig_table_build(const char *model, gc__mig_table *t)
{
        double share, compute_total = 7;
        int est;

        t->model = model;
        t->n = 0;
        /* A30's table has four compute slices, the others seven. */
        if (gc_mig_share(model, "1g.6gb", &share, &est) == 0 && !est)
                compute_total = 4;
        for (size_t i = 0; i < GC__MIG_N; i++) {
                const char *name = gc__mig_profiles[i];
                gc__mig_fit f;
                size_t j;
                int c, gb;

                /* Only the profiles the model's table lists: an estimate is no advice. */
                if (gc_mig_share(model, name, &share, &est) < 0 || est || share >= 1)
                        continue;
                gc__mig_parse(name, &c, &gb);
                f.profile = name;
                f.share = share;
                f.compute = c / compute_total;
                f.memory_mib = gb * GC__MIB_PER_PROFILE_GB;
                for (j = t->n; j > 0 && (t->p[j - 1].share > f.share ||
                                         (t->p[j - 1].share == f.share &&
                                          t->p[j - 1].memory_mib > f.memory_mib));
                     j--)
                        t->p[j] = t->p[j - 1];
                t->p[j] = f;
                t->n++;
        }
}

/* The model's table, built once per model per run (a handful of models, many pods). */
static const gc__mig_table *gc__mig_table_of(gc__adv *a, const char *model)
{
        gc__mig_table *t;

        for (size_t i = 0; i < a->n_mig; i++)
                if (a->mig[i].model == model || strcmp(a->mig[i].model, model) == 0)
                        return &a->mig[i];
        if (a->n_mig < GC__MIG_CACHE) {
                t = &a->mig[a->n_mig++];
        } else {
                t = &a->mig[GC__MIG_CACHE]; /* the scratch entry */
        }
        gc__mig_table_build(model, t);
        return t;
}

/*
 * The smallest profile of the model's MIG table that holds the peak memory and p95 activity with
 * headroom. 0 when the model has no MIG table or none fits.
 */
static int gc__mig_smallest(gc__adv *a, const char *model, double mem_need_mib, double act_need,
                            gc__mig_fit *ret)
{
        const gc__mig_table *t;

        if (!model)
                return 0;
        t = gc__mig_table_of(a, model);
        for (size_t i = 0; i < t->n; i++)
                if (mem_need_mib <= t->p[i].memory_mib && act_need <= t->p[i].compute) {
                        *ret = t->p[i];
                        return 1;
                }
        return 0;
}

static int gc__mig_fit_rule(gc__adv *a, const gc_advisor_pod *p, double monthly, gc__cand *c)
{
        double h = a->o->mig_headroom, mem_need, act_need;
        gc__mig_fit m;
        gc_finding *f = &c->f;

        if (!gc__whole_gpus(p) || p->gpus_requested != 1 || !isfinite(p->mem_used_peak_mib) ||
            !isfinite(p->activity_p95))
                return 0;
        mem_need = p->mem_used_peak_mib * (1 + h);
        act_need = p->activity_p95 * (1 + h);
        if (!gc__mig_smallest(a, p->model, mem_need, act_need, &m))
                return 0;
        f->kind = GC_FINDING_MIG_FIT;
        gc__subject(a, f, p);
        gc__text(f, "profile", m.profile);
        gc__num(f, "mem_used_peak_mib", p->mem_used_peak_mib);
        gc__num(f, "mem_total_mib", p->mem_total_mib);
        gc__num(f, "mem_needed_mib", mem_need);
        gc__num(f, "profile_memory_mib", m.memory_mib);
        gc__num(f, "activity_p95", p->activity_p95);
        gc__num(f, "activity_needed", act_need);
        gc__num(f, "profile_compute_fraction", m.compute);
        gc__num(f, "headroom", h);
        gc__num(f, "share", m.share);
        gc__num(f, "monthly_cost", monthly);
        gc__text(f, "activity_source", gc__str(a, p->activity_source));
        if (gc__dra(p)) {
                /* DRA: a claim for a MIG partition of that profile, of the driver's MIG class. */
                f->summary =
                    gc__fmt(a,
                            "%s/%s peaks at %.0f MiB and %.0f%% activity (p95) on a "
                            "whole %s: a MIG %s partition (%.0f%% of the GPU) holds it "
                            "with %.0f%% headroom; claim one from DeviceClass %s",
                            p->ns, p->name, p->mem_used_peak_mib, p->activity_p95 * 100, p->model,
                            m.profile, m.share * 100, h * 100, a->o->dra_mig_class);
                f->stanza = gc__fmt(
                    a,
                    "# the pod's ResourceClaimTemplate\nspec:\n  devices:\n    requests:\n    - "
                    "name: gpu\n      exactly:\n        deviceClassName: %s\n        selectors:\n"
                    "        - cel:\n            expression: "
                    "\"device.attributes['gpu.nvidia.com'].profile == '%s'\"\n",
                    a->o->dra_mig_class, m.profile);
        } else {
                f->summary = gc__fmt(a,
                                     "%s/%s peaks at %.0f MiB and %.0f%% activity (p95) on a "
                                     "whole %s: a MIG %s slice (%.0f%% of the GPU) holds it with "
                                     "%.0f%% headroom; needs a node with MIG (strategy mixed) "
                                     "offering that profile",
                                     p->ns, p->name, p->mem_used_peak_mib, p->activity_p95 * 100,
                                     p->model, m.profile, m.share * 100, h * 100);
                f->stanza =
                    gc__fmt(a, "resources:\n  limits:\n    nvidia.com/mig-%s: 1\n", m.profile);
        }
        f->monthly_savings = (1 - m.share) * monthly;
        c->ok = 1;
        return 0;
}

/*
 * A pod on one whole GPU whose measured peak memory and p95 activity, with headroom, fit a share
 * of a shared GPU of the same model the cluster offers: the claim (or HAMi's resources) that
 * asks for that share, priced as docs/dra.md prices one (the largest fraction it takes). The
 * offer that saves most wins.
 */
static int gc__share_fit(gc__adv *a, const gc_advisor_pod *p, double monthly, gc__cand *c)
{
        double h = a->o->mig_headroom, mem_need, act_need, best = 1;
        const gc_advisor_shared *o = NULL;
        gc_finding *f = &c->f;

        if (!a->o->n_shared || !gc__whole_gpus(p) || p->gpus_requested != 1 || !p->model ||
            !isfinite(p->mem_used_peak_mib) || !isfinite(p->activity_p95))
                return 0;
        mem_need = p->mem_used_peak_mib * (1 + h);
        act_need = p->activity_p95 * (1 + h);
        for (size_t i = 0; i < a->o->n_shared && i < GC_ADVISOR_MAX_SHARED; i++) {
                const gc_advisor_shared *s = &a->o->shared[i];
                double share;

                if (strcmp(s->model, p->model) != 0 || s->memory_mib <= 0)
                        continue;
                share = mem_need / s->memory_mib;
                /* Memory alone sets a share in memory mode; cores and shares cap compute too. */
                if (s->way != GC_SHARE_DRA_MEMORY && act_need > share)
                        share = act_need;
                if (s->way == GC_SHARE_DRA_SHARES && s->shares >= 1)
                        share = ceil(share * s->shares - 1e-9) / s->shares;
                if (share < best) {
                        best = share;
                        o = s;
                }
        }
        if (!o || best >= 1 || best <= 0)
                return 0;
        f->kind = GC_FINDING_SHARE_FIT;
        gc__subject(a, f, p);
        gc__num(f, "share", best);
        gc__num(f, "mem_used_peak_mib", p->mem_used_peak_mib);
        gc__num(f, "mem_needed_mib", mem_need);
        gc__num(f, "gpu_memory_mib", o->memory_mib);
        gc__num(f, "activity_p95", p->activity_p95);
        gc__num(f, "activity_needed", act_need);
        gc__num(f, "headroom", h);
        gc__num(f, "monthly_cost", monthly);
        gc__text(f, "device_class", o->device_class[0] ? gc__str(a, o->device_class) : NULL);
        gc__text(f, "activity_source", gc__str(a, p->activity_source));
        f->summary = gc__fmt(a,
                             "%s/%s peaks at %.0f MiB and %.0f%% activity (p95) on a whole %s: "
                             "a %.0f%% share of a shared %s holds it with %.0f%% headroom",
                             p->ns, p->name, p->mem_used_peak_mib, p->activity_p95 * 100, p->model,
                             best * 100, p->model, h * 100);
        switch (o->way) {
        case GC_SHARE_DRA_MEMORY:
                f->stanza = gc__fmt(a,
                                    "# the pod's ResourceClaimTemplate\nspec:\n  devices:\n    "
                                    "requests:\n    - name: gpu\n      exactly:\n        "
                                    "deviceClassName: %s\n        capacity:\n          "
                                    "requests:\n            memory: %.0fMi\n",
                                    o->device_class, ceil(mem_need));
                break;
        case GC_SHARE_DRA_SHARES:
                f->stanza = gc__fmt(a,
                                    "# the pod's ResourceClaimTemplate\nspec:\n  devices:\n    "
                                    "requests:\n    - name: gpu\n      exactly:\n        "
                                    "deviceClassName: %s\n        capacity:\n          "
                                    "requests:\n            shares: \"%.0f\"\n",
                                    o->device_class, best * o->shares);
                break;
        case GC_SHARE_DRA_CORES:
                f->stanza = gc__fmt(a,
                                    "# the pod's ResourceClaimTemplate\nspec:\n  devices:\n    "
                                    "requests:\n    - name: gpu\n      exactly:\n        "
                                    "deviceClassName: %s\n        capacity:\n          "
                                    "requests:\n            cores: \"%.0f\"\n            "
                                    "memory: %.0fMi\n",
                                    o->device_class, ceil(act_need * 100), ceil(mem_need));
                break;
        default:
                f->stanza = gc__fmt(a,
                                    "resources:\n  limits:\n    nvidia.com/gpu: 1\n    "
                                    "nvidia.com/gpumem: %.0f\n    nvidia.com/gpucores: %.0f\n",
                                    ceil(mem_need), ceil(act_need * 100));
                break;
        }
        f->monthly_savings = (1 - best) * monthly;
        c->ok = 1;
        return 0;
}

static int gc__cheaper_class(gc__adv *a, const gc_advisor_pod *p, double monthly, gc__cand *c)
{
        char m1[GC_REPORT_MONEY_LEN], m2[GC_REPORT_MONEY_LEN];
        const gc_catalog *cat = a->in->catalog;
        gc_finding *f = &c->f;

        /* (Not for DRA pods yet: their class change is a selector on productName.) */
        if (!cat || !gc__whole_gpus(p) || gc__dra(p) || !gc__inference(p) ||
            !isfinite(p->tensor_mean))
                return 0;
        for (size_t i = 0; i < a->o->n_cheaper_classes; i++) {
                const gc_advisor_class *k = &a->o->cheaper_classes[i];
                const gc_price_entry *from, *to;
                double need = p->mem_used_peak_mib * (1 + a->o->mig_headroom);

                if (!gc__model_match(k->from, p->model) || p->tensor_mean > k->max_tensor_activity)
                        continue;
                if (k->to_memory_mib > 0 && (!isfinite(need) || need > k->to_memory_mib))
                        continue;
                from = gc__price(cat, p->model, p->capacity_type, 0);
                to = gc__price(cat, k->to, p->capacity_type, 0);
                if (!from || !to || from->price_per_gpu_hour <= 0 ||
                    to->price_per_gpu_hour >= from->price_per_gpu_hour)
                        continue;
                f->kind = GC_FINDING_CHEAPER_CLASS;
                gc__subject(a, f, p);
                gc__text(f, "to_model", gc__str(a, k->to));
                gc__num(f, "tensor_mean", p->tensor_mean);
                gc__num(f, "max_tensor_activity", k->max_tensor_activity);
                gc__num(f, "activity_mean", p->activity_mean);
                gc__num(f, "mem_used_peak_mib", p->mem_used_peak_mib);
                gc__num(f, "to_memory_mib", k->to_memory_mib);
                gc__num(f, "from_price_per_gpu_hour", from->price_per_gpu_hour);
                gc__num(f, "to_price_per_gpu_hour", to->price_per_gpu_hour);
                gc__text(f, "from_price_source", gc__price_source(a, from));
                gc__text(f, "to_price_source", gc__price_source(a, to));
                gc__num(f, "gpus", p->geq);
                gc__num(f, "monthly_cost", monthly);
                f->summary = gc__fmt(a,
                                     "%s/%s serves with %.0f%% tensor-core activity on %s: "
                                     "%s costs %s instead of %s per GPU-hour (%s)",
                                     p->ns, p->name, p->tensor_mean * 100, p->model, k->to,
                                     gc__money(a, to->price_per_gpu_hour, m1),
                                     gc__money(a, from->price_per_gpu_hour, m2),
                                     p->capacity_type ? p->capacity_type : "any capacity");
                f->stanza = gc__fmt(a, "nodeSelector:\n  nvidia.com/gpu.product: %s\n", k->to);
                f->monthly_savings =
                    monthly * (1 - to->price_per_gpu_hour / from->price_per_gpu_hour);
                c->ok = 1;
                return 0;
        }
        return 0;
}

static int gc__pod_rules(gc__adv *a, const gc_advisor_pod *p)
{
        gc__cand c[5];
        double monthly, hours;
        size_t best = 5;

        memset(c, 0, sizeof(c));
        monthly = gc__pod_monthly(a, p, &hours);
        if (hours <= 0)
                return 0;
        /* An idle GPU is released whole; the others are alternatives: the largest saving wins. */
        gc__idle_gpu(a, p, monthly, &c[0]);
        if (!c[0].ok) {
                gc__over_requested(a, p, monthly, &c[1]);
                gc__mig_fit_rule(a, p, monthly, &c[2]);
                gc__cheaper_class(a, p, monthly, &c[3]);
                gc__share_fit(a, p, monthly, &c[4]);
        }
        for (size_t i = 0; i < 5; i++)
                if (c[i].ok && (best == 5 || c[i].f.monthly_savings > c[best].f.monthly_savings))
                        best = i;
        if (best < 5) {
                gc_finding *f = gc__finding(a, c[best].f.kind);

                if (!f)
                        return -ENOMEM;
                *f = c[best].f;
                if (!f->summary || !f->stanza)
                        return -ENOMEM;
        }
        return 0;
}

static int gc__pods(gc__adv *a)
{
        const gc_advisor_input *in = a->in;
        size_t without = 0, with = 0;
        int r;

        for (size_t i = 0; i < in->n_pods; i++) {
                const gc_advisor_pod *p = &in->pods[i];

                if (!p->has_usage) {
                        without++;
                        continue;
                }
                with++;
                if (p->samples < a->o->min_samples || !(p->coverage >= a->o->min_coverage)) {
                        a->r->pods_insufficient++;
                        r = gc__note(a,
                                     "too few samples: %s/%s has %llu samples, coverage %.2f "
                                     "(needs %llu and %.2f): no usage finding for it",
                                     p->ns ? p->ns : "", p->name ? p->name : "",
                                     (unsigned long long)p->samples, p->coverage,
                                     (unsigned long long)a->o->min_samples, a->o->min_coverage);
                        if (r < 0)
                                return r;
                        continue;
                }
                a->r->pods_measured++;
                r = gc__pod_rules(a, p);
                if (r < 0)
                        return r;
        }
        a->r->has_usage = with > 0;
        if (!with) {
                r = gc__note(a,
                             "no usage data: none of the %zu GPU pods has measured use in the "
                             "window, so idle_gpu, over_requested, mig_fit and cheaper_class "
                             "are not produced and buy_vs_rent uses allocation only%s%s",
                             in->n_pods, in->usage_note ? ": " : "",
                             in->usage_note ? in->usage_note : "");
                if (r < 0)
                        return r;
        } else if (without) {
                r = gc__note(a,
                             "%zu of %zu GPU pods have no usage data (no dcgm-exporter series "
                             "names them): no usage finding for them",
                             without, in->n_pods);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- one pass over the ledger: daily on-demand GPU-hours per model, node sizes ------------- */

typedef struct gc__model_days {
        const char *model;
        double *gpu_s;   /* on demand, per whole day of the window */
        double *cost;    /* per whole day */
        double window_s; /* every capacity type, over the window as a query counts it */
} gc__model_days;

typedef struct gc__node_size {
        const char *node;
        double geq; /* the largest allocatable GPU-equivalents seen in the window */
} gc__node_size;

typedef struct gc__pass {
        gc__adv *a;
        int64_t ds;    /* first whole day of the window */
        size_t n_days; /* whole days */
        gc__model_days *m;
        size_t nm, capm;
        gc_ptrmap mi;
        gc__node_size *nodes;
        size_t nn, capn;
        gc_ptrmap ni;
        double cap_s, cap_onprem_s; /* capacity GPU-seconds in the window, of which on-prem */
        const char *ondemand_ptr;   /* the pool's "on-demand", once seen */
} gc__pass;

static int gc__is_ondemand(gc__pass *x, const char *ctype)
{
        if (!ctype)
                return 0;
        if (ctype == x->ondemand_ptr)
                return 1;
        if (strcmp(ctype, "on-demand") == 0) {
                x->ondemand_ptr = ctype;
                return 1;
        }
        return 0;
}

static gc__model_days *gc__model_get(gc__pass *x, const char *model)
{
        size_t i;

        if (gc_ptrmap_get(&x->mi, model, &i) == 0)
                return &x->m[i];
        if (x->nm == x->capm) {
                size_t cap = x->capm ? 2 * x->capm : 16;
                gc__model_days *v = realloc(x->m, cap * sizeof(*v));

                if (!v)
                        return NULL;
                x->m = v;
                x->capm = cap;
        }
        i = x->nm;
        x->m[i].model = model;
        x->m[i].window_s = 0;
        x->m[i].gpu_s = calloc(x->n_days ? x->n_days : 1, sizeof(double));
        x->m[i].cost = calloc(x->n_days ? x->n_days : 1, sizeof(double));
        if (!x->m[i].gpu_s || !x->m[i].cost || gc_ptrmap_put(&x->mi, model, i) < 0) {
                free(x->m[i].gpu_s);
                free(x->m[i].cost);
                return NULL;
        }
        x->nm++;
        return &x->m[i];
}

static int gc__node_seen(gc__pass *x, const char *node, double geq)
{
        size_t i;

        if (!node)
                return 0;
        if (gc_ptrmap_get(&x->ni, node, &i) == 0) {
                if (geq > x->nodes[i].geq)
                        x->nodes[i].geq = geq;
                return 0;
        }
        if (x->nn == x->capn) {
                size_t cap = x->capn ? 2 * x->capn : 64;
                gc__node_size *v = realloc(x->nodes, cap * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                x->nodes = v;
                x->capn = cap;
        }
        if (gc_ptrmap_put(&x->ni, node, x->nn) < 0)
                return -ENOMEM;
        x->nodes[x->nn].node = node;
        x->nodes[x->nn].geq = geq;
        x->nn++;
        return 0;
}

static int gc__visit_usage(void *ud, const gc_usage *u)
{
        gc__pass *x = ud;
        const char *model = u->dims[GC_DIM_MODEL];
        int64_t de = x->ds + (int64_t)x->n_days * GC__DAY;
        int64_t s, e, held_end;
        gc__model_days *m;

        /* An adjustment of the usage basis holds no GPUs. */
        if (!model || (u->flags & GC_USAGE_F_ADJUST))
                return 0;
        /* As a query counts it: an open interval accrues up to now, a closed one as recorded. */
        held_end = u->end == GC_OPEN ? x->a->wend : u->end;
        s = gc__max64(u->start, x->a->wstart);
        e = gc__min64(held_end, u->end == GC_OPEN ? x->a->wend : x->a->in->end);
        if (e <= s)
                return 0;
        m = gc__model_get(x, model);
        if (!m)
                return -ENOMEM;
        m->window_s += (double)(e - s) * u->geq;
        if (!x->n_days || !gc__is_ondemand(x, u->dims[GC_DIM_CAPACITY_TYPE]))
                return 0;
        e = gc__min64(held_end, de);
        s = gc__max64(u->start, x->ds);
        while (s < e) {
                int64_t d = (s - x->ds) / GC__DAY;
                int64_t next = gc__min64(e, x->ds + (d + 1) * GC__DAY);
                double gs = (double)(next - s) * u->geq;

                m->gpu_s[d] += gs;
                m->cost[d] += gs / 3600.0 * u->price_per_gpu_hour;
                s = next;
        }
        return 0;
}

static int gc__visit_rollup(void *ud, const gc_rollup *r)
{
        gc__pass *x = ud;
        const char *model = r->dims[GC_DIM_MODEL];
        gc__model_days *m;
        int64_t d;

        /* Folded hours count only when wholly inside the window, as in a query; the pods' rows
         * only (a node's row holds the same GPU-seconds again). */
        if (!model || gc_rollup_is_node(r) || r->hour < x->a->wstart ||
            r->hour + gc_ledger_granularity(x->a->in->ledger) > x->a->in->end)
                return 0;
        m = gc__model_get(x, model);
        if (!m)
                return -ENOMEM;
        m->window_s += r->gpu_seconds;
        if (!x->n_days || r->hour < x->ds ||
            r->hour + gc_ledger_granularity(x->a->in->ledger) >
                x->ds + (int64_t)x->n_days * GC__DAY ||
            !gc__is_ondemand(x, r->dims[GC_DIM_CAPACITY_TYPE]))
                return 0;
        d = (r->hour - x->ds) / GC__DAY;
        m->gpu_s[d] += r->gpu_seconds;
        m->cost[d] += r->cost;
        return 0;
}

static int gc__visit_capacity(void *ud, const gc_capacity *c)
{
        gc__pass *x = ud;
        int64_t e = c->end == GC_OPEN ? x->a->wend : gc__min64(c->end, x->a->wend);
        int64_t s = gc__max64(c->start, x->a->wstart);
        double cs;

        if (e <= s)
                return 0;
        cs = (double)(e - s) * c->geq;
        x->cap_s += cs;
        if (c->capacity_type && strcmp(c->capacity_type, "on-prem") == 0)
                x->cap_onprem_s += cs;
        return gc__node_seen(x, c->node, c->geq);
}

static int gc__visit_capacity_rollup(void *ud, const gc_capacity_rollup *r)
{
        gc__pass *x = ud;

        if (r->hour < x->a->wstart ||
            r->hour + gc_ledger_granularity(x->a->in->ledger) > x->a->wend)
                return 0;
        x->cap_s += r->geq_seconds;
        if (r->capacity_type && strcmp(r->capacity_type, "on-prem") == 0)
                x->cap_onprem_s += r->geq_seconds;
        return gc__node_seen(x, r->node, r->geq_seconds / 3600.0);
}

static void gc__pass_free(gc__pass *x)
{
        for (size_t i = 0; i < x->nm; i++) {
                free(x->m[i].gpu_s);
                free(x->m[i].cost);
        }
        free(x->m);
        gc_ptrmap_free(&x->mi);
        free(x->nodes);
        gc_ptrmap_free(&x->ni);
}

/* ---- cluster rules ----------------------------------------------------------------------------
 */

typedef struct gc__ns_acc {
        const char *ns;
        double gpu_s, cost;
        uint32_t pods;
        int no_team, no_project;
} gc__ns_acc;

static int gc__unattributed(gc__adv *a, const gc_cost_summary *s)
{
        char m1[GC_REPORT_MONEY_LEN];
        const char *tk = a->in->team_label_key ? a->in->team_label_key : "team";
        const char *pk = a->in->project_label_key ? a->in->project_label_key : "project";
        gc__ns_acc *acc = NULL;
        size_t n = 0;
        gc_ptrmap map = {0};
        int r = 0;

        if (s->unattributed.cost <= 0 && s->unattributed.gpu_seconds <= 0)
                return 0;
        acc = calloc(s->n_rows, sizeof(*acc));
        if (!acc && s->n_rows)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_rows; i++) {
                const gc_cost_row *row = &s->rows[i];
                const char *team = row->keys[GC_DIM_TEAM], *proj = row->keys[GC_DIM_PROJECT];
                int nt = team && strcmp(team, GC_UNATTRIBUTED) == 0;
                int np = proj && strcmp(proj, GC_UNATTRIBUTED) == 0;
                const char *ns = row->keys[GC_DIM_NAMESPACE] ? row->keys[GC_DIM_NAMESPACE] : "";
                size_t k;

                if (!nt && !np)
                        continue;
                if (gc_ptrmap_get(&map, ns, &k) < 0) {
                        k = n++;
                        acc[k].ns = ns;
                        r = gc_ptrmap_put(&map, ns, k);
                        if (r < 0)
                                goto out;
                }
                acc[k].gpu_s += row->gpu_seconds;
                acc[k].cost += row->cost;
                acc[k].pods += row->pods;
                acc[k].no_team |= nt;
                acc[k].no_project |= np;
        }
        for (size_t k = 0; k < n; k++) {
                gc_finding *f = gc__finding(a, GC_FINDING_UNATTRIBUTED);
                const gc__ns_acc *x = &acc[k];
                const char *missing = x->no_team && x->no_project ? "team and project"
                                      : x->no_team                ? "team"
                                                                  : "project";

                if (!f) {
                        r = -ENOMEM;
                        goto out;
                }
                f->ns = gc__str(a, x->ns);
                f->team = gc__str(a, GC_UNATTRIBUTED);
                gc__num(f, "cost", x->cost);
                gc__num(f, "gpu_hours", x->gpu_s / 3600.0);
                gc__num(f, "monthly_spend",
                        a->window_h > 0 ? x->cost / a->window_h * a->o->hours_per_month : 0);
                gc__num(f, "pods", x->pods);
                gc__text(f, "missing", missing);
                f->summary = gc__fmt(a,
                                     "%s of GPU spend in namespace %s has no %s: label the "
                                     "namespace (or its pods) so it reaches a budget",
                                     gc__money(a, x->cost, m1), x->ns, missing);
                if (x->no_team && x->no_project)
                        f->stanza = gc__fmt(a, "kubectl label namespace %s %s=<team> %s=<project>",
                                            x->ns, tk, pk);
                else
                        f->stanza = gc__fmt(a, "kubectl label namespace %s %s=<%s>", x->ns,
                                            x->no_team ? tk : pk, x->no_team ? "team" : "project");
                if (!f->summary || !f->stanza) {
                        r = -ENOMEM;
                        goto out;
                }
        }
out:
        gc_ptrmap_free(&map);
        free(acc);
        return r;
}

typedef struct gc__pool_acc {
        const char *model, *ctype;
        double idle_s, idle_cost, gpus_per_node;
        uint32_t nodes;
} gc__pool_acc;

/* One node of a pool: what it idled in the window and what it costs. */
typedef struct gc__pool_node {
        size_t pool;
        const char *name;
        double idle_s;
        double geq;          /* its allocatable GPU-equivalents (the largest seen) */
        double per_gpu_hour; /* its price: idle cost per idle GPU-hour, else the pool's */
} gc__pool_node;

#define GC__IDLE_NODES_NAMED 10 /* nodes named in a sentence; the evidence counts them all */

/* By pool, then the most idle first, then by name: the nodes to take out lead their pool. */
static int gc__cmp_pool_node(const void *pa, const void *pb)
{
        const gc__pool_node *x = pa, *y = pb;

        if (x->pool != y->pool)
                return x->pool < y->pool ? -1 : 1;
        if (x->idle_s != y->idle_s)
                return x->idle_s > y->idle_s ? -1 : 1;
        return strcmp(x->name, y->name);
}

/* "a (8 GPUs, $1.00 a month), b (8.57 GPU-equivalents, ...)" for the first nodes of v[0..n). */
static const char *gc__node_list(gc__adv *a, const gc__pool_node *v, size_t n, double hpm)
{
        char money[GC_REPORT_MONEY_LEN];
        gc_buf b;
        const char *out = NULL;
        int r = 0;

        gc_buf_init(&b, 8192);
        for (size_t i = 0; i < n && i < GC__IDLE_NODES_NAMED && r >= 0; i++) {
                double g = v[i].geq;

                gc__money(a, g * v[i].per_gpu_hour * hpm, money);
                /* A node holds whole GPUs; MIG slices' shares may add up to a fraction. */
                r = gc_buf_printf(&b, "%s%s (%.*f %s, %s a month)", i ? ", " : "", v[i].name,
                                  fabs(g - round(g)) < 1e-9 ? 0 : 2, g,
                                  fabs(g - round(g)) < 1e-9 ? (g == 1 ? "GPU" : "GPUs")
                                                            : "GPU-equivalents",
                                  money);
        }
        if (r >= 0 && n > GC__IDLE_NODES_NAMED)
                r = gc_buf_printf(&b, " and %zu more", n - GC__IDLE_NODES_NAMED);
        if (r >= 0)
                out = gc_strpool_intern(a->r->pool, b.data ? b.data : "", b.len);
        gc_buf_free(&b);
        return out;
}

/* Names only, for the evidence and the stanza. */
static const char *gc__node_names(gc__adv *a, const gc__pool_node *v, size_t n)
{
        gc_buf b;
        const char *out = NULL;
        int r = 0;

        gc_buf_init(&b, 1 << 20);
        for (size_t i = 0; i < n && r >= 0; i++)
                r = gc_buf_printf(&b, "%s%s", i ? " " : "", v[i].name);
        if (r >= 0)
                out = gc_strpool_intern(a->r->pool, b.data ? b.data : "", b.len);
        gc_buf_free(&b);
        return out;
}

/* One pool's finding, when it idles at least one whole node on average; v: its nodes, sorted. */
static int gc__idle_pool(gc__adv *a, const gc__pool_acc *p, gc__pool_node *v, double window_s)
{
        double avg_idle = p->idle_s / window_s, price, nodes_idle, saving = 0;
        double hpm = a->o->hours_per_month;
        char m1[GC_REPORT_MONEY_LEN];
        const char *list, *names;
        gc_finding *f;

        if (p->idle_s <= 0 || p->gpus_per_node <= 0)
                return 0;
        /* Whole nodes only: the largest node of the pool, so the count never overshoots. */
        nodes_idle = floor(avg_idle / p->gpus_per_node + 1e-9);
        if (nodes_idle > p->nodes)
                nodes_idle = p->nodes;
        if (nodes_idle < 1)
                return 0;
        price = p->idle_cost / (p->idle_s / 3600.0);
        /* The most idle nodes go; each is worth what it costs whole. */
        for (size_t i = 0; i < (size_t)nodes_idle; i++) {
                if (!isfinite(v[i].per_gpu_hour))
                        v[i].per_gpu_hour = price;
                saving += v[i].geq * v[i].per_gpu_hour * hpm;
        }
        list = gc__node_list(a, v, (size_t)nodes_idle, hpm);
        names = gc__node_names(a, v, (size_t)nodes_idle);
        f = gc__finding(a, GC_FINDING_IDLE_CAPACITY);
        if (!f || !list || !names)
                return -ENOMEM;
        f->team = gc__str(a, GC_ADVISOR_CLUSTER);
        f->model = gc__str(a, p->model);
        f->capacity_type = gc__str(a, p->ctype);
        gc__num(f, "nodes", p->nodes);
        gc__num(f, "gpus_per_node", p->gpus_per_node);
        gc__num(f, "idle_gpu_hours", p->idle_s / 3600.0);
        gc__num(f, "idle_cost", p->idle_cost);
        gc__num(f, "average_idle_gpus", avg_idle);
        gc__num(f, "nodes_idle", nodes_idle);
        gc__text(f, "nodes_to_remove", names);
        gc__num(f, "price_per_gpu_hour", price);
        f->summary =
            gc__fmt(a,
                    "pool %s / %s: %.1f GPUs idle on average (%.0f GPU-hours, %s in the window): "
                    "take out %.0f node%s, the most idle: %s%s",
                    p->model, p->ctype, avg_idle, p->idle_s / 3600.0,
                    gc__money(a, p->idle_cost, m1), nodes_idle, nodes_idle == 1 ? "" : "s", list,
                    strcmp(p->ctype, "on-prem") == 0
                        ? " (owned: move work here from the cloud, or do not grow the pool)"
                        : " (lower the autoscaler's minimum, or bin-pack the pods)");
        f->stanza = gc__fmt(a, "node pool %s / %s: %.0f fewer node%s: %s", p->model, p->ctype,
                            nodes_idle, nodes_idle == 1 ? "" : "s", names);
        f->monthly_savings = saving;
        return f->summary && f->stanza ? 0 : -ENOMEM;
}

static int gc__idle_capacity(gc__adv *a, const gc_cost_summary *s, gc__pass *x)
{
        gc__pool_acc *acc = NULL;
        gc__pool_node *pn = NULL;
        size_t n = 0, first = 0;
        double window_s = a->window_h * 3600.0;
        int r = 0;

        if (!s->n_idle_nodes || window_s <= 0)
                return 0;
        acc = calloc(s->n_idle_nodes, sizeof(*acc));
        pn = calloc(s->n_idle_nodes, sizeof(*pn));
        if (!acc || !pn) {
                r = -ENOMEM;
                goto out;
        }
        /* Pools are few: a linear search keeps this simple. */
        for (size_t i = 0; i < s->n_idle_nodes; i++) {
                const gc_cost_row *row = &s->idle_nodes[i];
                const char *model = row->keys[GC_DIM_MODEL] ? row->keys[GC_DIM_MODEL] : "";
                const char *ct =
                    row->keys[GC_DIM_CAPACITY_TYPE] ? row->keys[GC_DIM_CAPACITY_TYPE] : "";
                size_t k, ni;

                for (k = 0; k < n; k++)
                        if (acc[k].model == model && acc[k].ctype == ct)
                                break;
                if (k == n) {
                        acc[n].model = model;
                        acc[n].ctype = ct;
                        n++;
                }
                acc[k].idle_s += row->gpu_seconds;
                acc[k].idle_cost += row->cost;
                acc[k].nodes++;
                pn[i].pool = k;
                pn[i].name = row->keys[GC_DIM_NODE] ? row->keys[GC_DIM_NODE] : "";
                pn[i].idle_s = row->gpu_seconds;
                pn[i].per_gpu_hour =
                    row->gpu_seconds > 0 ? row->cost / (row->gpu_seconds / 3600.0) : NAN;
                if (row->keys[GC_DIM_NODE] &&
                    gc_ptrmap_get(&x->ni, row->keys[GC_DIM_NODE], &ni) == 0) {
                        pn[i].geq = x->nodes[ni].geq;
                        if (x->nodes[ni].geq > acc[k].gpus_per_node)
                                acc[k].gpus_per_node = x->nodes[ni].geq;
                }
        }
        qsort(pn, s->n_idle_nodes, sizeof(*pn), gc__cmp_pool_node);
        for (size_t k = 0; k < n && r == 0; k++) {
                /* Sorted by pool, and pools are numbered as first met: pool k's nodes are next. */
                r = gc__idle_pool(a, &acc[k], &pn[first], window_s);
                first += acc[k].nodes;
        }
out:
        free(pn);
        free(acc);
        return r;
}

static int gc__cmp_double(const void *pa, const void *pb)
{
        double x = *(const double *)pa, y = *(const double *)pb;

        return x < y ? -1 : x > y;
}

static int gc__reserve_floor(gc__adv *a, gc__pass *x, const gc_cost_summary *s)
{
        char m1[GC_REPORT_MONEY_LEN], m2[GC_REPORT_MONEY_LEN];
        const gc_catalog *cat = a->in->catalog;
        double *sorted;
        int r = 0;

        if (!x->n_days) {
                if (s->total.gpu_seconds <= 0)
                        return 0;
                return gc__note(a, "reserve_floor: the window holds no whole UTC day");
        }
        sorted = malloc(x->n_days * sizeof(double));
        if (!sorted)
                return -ENOMEM;
        for (size_t i = 0; i < x->nm; i++) {
                const gc__model_days *m = &x->m[i];
                const gc_price_entry *res, *spot;
                double tot_s = 0, tot_cost = 0, floor_h, od, all_od = 0, plan = 0, plan_spot = 0;
                double rest = 0, pct = a->o->reserve_percentile, saving, nd = (double)x->n_days;
                size_t idx;
                gc_finding *f;

                for (size_t d = 0; d < x->n_days; d++) {
                        sorted[d] = m->gpu_s[d] / 3600.0;
                        tot_s += m->gpu_s[d];
                        tot_cost += m->cost[d];
                }
                if (tot_s <= 0)
                        continue;
                qsort(sorted, x->n_days, sizeof(double), gc__cmp_double);
                /* Nearest rank: the smallest day at or above pct percent of the days. */
                idx = pct <= 0 ? 0 : (size_t)ceil(pct / 100.0 * nd) - 1;
                if (idx >= x->n_days)
                        idx = x->n_days - 1;
                floor_h = sorted[idx];
                if (floor_h <= 0)
                        continue;
                if (!cat) {
                        r = gc__note(a, "reserve_floor: no price catalog for %s", m->model);
                        if (r < 0)
                                break;
                        continue;
                }
                res = gc__price(cat, m->model, "reserved", 1);
                if (!res) {
                        r = gc__note(a,
                                     "reserve_floor: the catalog has no reserved price for %s: "
                                     "add one to see what reserving %.0f GPU-hours a day saves",
                                     m->model, floor_h);
                        if (r < 0)
                                break;
                        continue;
                }
                spot = gc__price(cat, m->model, "spot", 1);
                od = tot_cost / (tot_s / 3600.0);
                for (size_t d = 0; d < x->n_days; d++) {
                        double h = m->gpu_s[d] / 3600.0, above = h > floor_h ? h - floor_h : 0;

                        all_od += h * od;
                        rest += above;
                        plan += floor_h * res->price_per_gpu_hour + above * od;
                        plan_spot += floor_h * res->price_per_gpu_hour +
                                     above * (spot ? spot->price_per_gpu_hour : od);
                }
                saving = all_od - plan;
                if (saving <= 0) {
                        r = gc__note(a,
                                     "reserve_floor: reserving %s at %s would not save against "
                                     "its on-demand %s per GPU-hour",
                                     m->model, gc__money(a, res->price_per_gpu_hour, m1),
                                     gc__money(a, od, m2));
                        if (r < 0)
                                break;
                        continue;
                }
                f = gc__finding(a, GC_FINDING_RESERVE_FLOOR);
                if (!f) {
                        r = -ENOMEM;
                        break;
                }
                f->team = gc__str(a, GC_ADVISOR_CLUSTER);
                f->model = gc__str(a, m->model);
                f->capacity_type = gc__str(a, "on-demand");
                f->window_start = x->ds;
                f->window_end = x->ds + (int64_t)x->n_days * GC__DAY;
                gc__num(f, "days", nd);
                gc__num(f, "daily_gpu_hours_min", sorted[0]);
                gc__num(f, "daily_gpu_hours_mean", tot_s / 3600.0 / nd);
                gc__num(f, "daily_gpu_hours_max", sorted[x->n_days - 1]);
                gc__num(f, "reserve_percentile", pct);
                gc__num(f, "floor_gpu_hours_per_day", floor_h);
                gc__num(f, "reserve_gpus", floor_h / 24.0);
                gc__num(f, "on_demand_price_per_gpu_hour", od);
                gc__num(f, "reserved_price_per_gpu_hour", res->price_per_gpu_hour);
                gc__num(f, "spot_price_per_gpu_hour", spot ? spot->price_per_gpu_hour : NAN);
                gc__num(f, "rest_gpu_hours_per_day", rest / nd);
                gc__num(f, "cost_all_on_demand", all_od);
                gc__num(f, "cost_reserved_floor", plan);
                gc__num(f, "cost_reserved_floor_rest_on_spot", plan_spot);
                gc__text(f, "reserved_price_source", gc__price_source(a, res));
                gc__text(f, "spot_price_source",
                         spot ? gc__price_source(a, spot) : "no spot price in the catalog");
                if (x->n_days < 7)
                        gc__text(f, "days_note",
                                 gc__fmt(a,
                                         "only %zu whole day(s): fewer than 7, so the floor may "
                                         "not hold over a week",
                                         x->n_days));
                f->summary = gc__fmt(
                    a,
                    "%s on demand never used less than %.0f GPU-hours a day over %zu day(s): "
                    "reserve %.1f GPUs at %s (vs %s per GPU-hour on demand), run the rest "
                    "(%.0f GPU-hours a day on average) on %s",
                    m->model, floor_h, x->n_days, floor_h / 24.0,
                    gc__money(a, res->price_per_gpu_hour, m1), gc__money(a, od, m2), rest / nd,
                    spot ? "spot where jobs tolerate interruption, else on demand" : "on demand");
                f->stanza = gc__fmt(a, "reserve %.1f x %s (%s)", floor_h / 24.0, m->model,
                                    res->capacity_type);
                f->monthly_savings = saving / nd * (a->o->hours_per_month / 24.0);
                if (!f->summary || !f->stanza) {
                        r = -ENOMEM;
                        break;
                }
        }
        free(sorted);
        return r;
}

static int gc__buy_vs_rent(gc__adv *a, const gc_cost_summary *s, const gc__pass *x)
{
        char m1[GC_REPORT_MONEY_LEN], m2[GC_REPORT_MONEY_LEN];
        const gc_tco_inputs *tco = a->in->tco;
        const gc_price_entry *cloud;
        const char *model = NULL;
        double alloc, act_w = 0, act_sum = 0, act = NAN, u, be, gpus, prod_h, own, rent;
        double cap_s = s->capacity.gpu_seconds, window_s = a->window_h * 3600.0;
        gc_tco_inputs in;
        gc_tco_result t;
        char err[160];
        int owned;
        gc_finding *f;

        if (!tco)
                return 0;
        if (cap_s <= 0 || window_s <= 0)
                return gc__note(a, "buy_vs_rent: no GPU capacity in the window");
        /* The model most GPU-hours went to (ties: the first by name, so runs agree). */
        for (size_t i = 0, best = 0; i < x->nm; i++) {
                const gc__model_days *m = &x->m[i];

                if (m->window_s > 0 &&
                    (!model || m->window_s > x->m[best].window_s ||
                     (m->window_s == x->m[best].window_s && strcmp(m->model, model) < 0))) {
                        model = m->model;
                        best = i;
                }
        }
        alloc = s->total.gpu_seconds / cap_s;
        if (alloc > 1)
                alloc = 1;
        /* Activity inside the allocated hours: measured pods, weighted by their GPU-hours. */
        for (size_t i = 0; i < a->in->n_pods; i++) {
                const gc_advisor_pod *p = &a->in->pods[i];
                double h;

                if (!p->has_usage || p->samples < a->o->min_samples ||
                    !(p->coverage >= a->o->min_coverage) || !isfinite(p->activity_mean))
                        continue;
                gc__pod_monthly(a, p, &h);
                act_w += h * p->geq;
                act_sum += h * p->geq * p->activity_mean;
        }
        if (act_w > 0)
                act = act_sum / act_w;
        u = isfinite(act) ? alloc * act : alloc;
        if (!(u > 0))
                return gc__note(a, "buy_vs_rent: measured utilization is 0 in the window");
        if (!model)
                return gc__note(a, "buy_vs_rent: no GPU model in use in the window");
        cloud = gc__price(a->in->catalog, model, "reserved", 1);
        if (!cloud)
                cloud = gc__price(a->in->catalog, model, "on-demand", 0);
        if (!cloud || cloud->price_per_gpu_hour <= 0)
                return gc__note(a, "buy_vs_rent: the catalog has no cloud price for %s", model);
        in = *tco;
        in.utilization = u;
        if (gc_tco_compute(&in, &t, err, sizeof(err)) < 0)
                return gc__note(a, "buy_vs_rent: tco: %s", err);
        if (gc_tco_break_even(t.annual_cost_per_gpu, cloud->price_per_gpu_hour, &be) < 0)
                return gc__note(a, "buy_vs_rent: no break-even for %s", model);
        gpus = cap_s / window_s;
        prod_h = u * gpus * a->o->hours_per_month;
        own = t.annual_cost_per_gpu * gpus * a->o->hours_per_month / 8760.0;
        rent = cloud->price_per_gpu_hour * prod_h;
        owned = x->cap_s > 0 && x->cap_onprem_s * 2 > x->cap_s;
        f = gc__finding(a, GC_FINDING_BUY_VS_RENT);
        if (!f)
                return -ENOMEM;
        f->team = gc__str(a, GC_ADVISOR_CLUSTER);
        f->model = gc__str(a, model);
        gc__text(f, "fleet", owned ? "owned" : "rented");
        gc__num(f, "capacity_gpu_hours", cap_s / 3600.0);
        gc__num(f, "allocated_gpu_hours", s->total.gpu_seconds / 3600.0);
        gc__num(f, "allocation", alloc);
        gc__num(f, "activity", act);
        gc__num(f, "utilization", u);
        gc__num(f, "break_even_utilization", be);
        gc__num(f, "owned_cost_per_productive_gpu_hour", t.cost_per_productive_gpu_hour);
        gc__num(f, "cloud_price_per_gpu_hour", cloud->price_per_gpu_hour);
        gc__text(f, "cloud_price_source", gc__price_source(a, cloud));
        gc__num(f, "annual_cost_per_gpu", t.annual_cost_per_gpu);
        gc__num(f, "fleet_gpus", gpus);
        gc__num(f, "monthly_cost_owned", own);
        gc__num(f, "monthly_cost_rented", rent);
        if (!isfinite(act))
                gc__text(f, "utilization_note", "allocation only: no usage data for activity");
        f->summary =
            gc__fmt(a,
                    "at the measured utilization %.1f%% (break-even %.1f%%) owning costs %s per "
                    "productive GPU-hour against %s to rent %s: %s",
                    u * 100, be * 100, gc__money(a, t.cost_per_productive_gpu_hour, m1),
                    gc__money(a, cloud->price_per_gpu_hour, m2), model,
                    u >= be ? (owned ? "keep owning" : "owning would be cheaper: consider buying")
                            : (owned ? "renting would be cheaper: do not grow the owned fleet"
                                     : "keep renting"));
        f->stanza = NULL;
        f->monthly_savings = owned ? (own > rent ? own - rent : 0) : (rent > own ? rent - own : 0);
        return f->summary ? 0 : -ENOMEM;
}

/* ---- order, cut, totals --------------------------------------------------------------------- */

static int gc__cmp_str(const char *x, const char *y)
{
        return strcmp(x ? x : "", y ? y : "");
}

static int gc__cmp_finding(const void *pa, const void *pb)
{
        const gc_finding *x = pa, *y = pb;
        int c;

        if (x->monthly_savings != y->monthly_savings)
                return x->monthly_savings > y->monthly_savings ? -1 : 1;
        if (x->kind != y->kind)
                return x->kind < y->kind ? -1 : 1;
        if ((c = gc__cmp_str(x->ns, y->ns)) || (c = gc__cmp_str(x->pod, y->pod)) ||
            (c = gc__cmp_str(x->model, y->model)) ||
            (c = gc__cmp_str(x->capacity_type, y->capacity_type)) ||
            (c = gc__cmp_str(x->node, y->node)) || (c = gc__cmp_str(x->team, y->team)))
                return c;
        return 0;
}

static int gc__cmp_stat(const void *pa, const void *pb)
{
        const gc_advisor_stat *x = pa, *y = pb;
        int c = strcmp(x->kind, y->kind);

        return c ? c : strcmp(x->team, y->team);
}

typedef struct gc__stat_key {
        const gc_advisor_stat *st;
        const char *kind, *team; /* compared by pointer: names and teams are the advisor's own */
} gc__stat_key;

static int gc__stat_eq(const void *ctx, size_t row)
{
        const gc__stat_key *k = ctx;

        return k->st[row].kind == k->kind && k->st[row].team == k->team;
}

static int gc__totals(gc__adv *a)
{
        gc_advisor_result *r = a->r;
        const char *cluster = gc__str(a, GC_ADVISOR_CLUSTER);
        gc_advisor_stat *st;
        gc_index ix = {0};
        size_t n = 0;

        st = calloc(a->nf ? a->nf : 1, sizeof(*st));
        if (!st || !cluster || gc_index_reserve(&ix, a->nf) < 0) {
                free(st);
                gc_index_free(&ix);
                return -ENOMEM;
        }
        for (size_t i = 0; i < a->nf; i++) {
                const gc_finding *f = &a->f[i];
                gc__stat_key key = {st, gc__kind_names[f->kind], f->team ? f->team : cluster};
                uint32_t h = gc_hash_fin(gc_hash_ptr(gc_hash_ptr(0, key.kind), key.team));
                size_t pos, k;

                r->monthly_savings += f->monthly_savings;
                r->savings_by_kind[f->kind] += f->monthly_savings;
                r->count_by_kind[f->kind]++;
                /* Findings are sorted by saving, not team: the stats sort once at the end. */
                if (gc_index_find(&ix, h, gc__stat_eq, &key, &pos)) {
                        k = gc_index_row(&ix, pos);
                } else {
                        k = n++;
                        gc_index_fill(&ix, pos, h, k); /* room for every finding reserved */
                        st[k].kind = key.kind;
                        st[k].team = key.team;
                }
                st[k].count++;
                st[k].monthly_savings += f->monthly_savings;
        }
        gc_index_free(&ix);
        qsort(st, n, sizeof(*st), gc__cmp_stat);
        r->stats = st;
        r->n_stats = n;
        return 0;
}

/*
 * A result and its reference count, kept beside it rather than in it: gc_advisor_result stays a
 * plain struct that copies by assignment (a team's view of a result is such a copy).
 */
typedef struct gc__result_box {
        gc_advisor_result r; /* first: a result's address is its box's */
        atomic_uint refs;
} gc__result_box;

static gc__result_box *gc__box_of(gc_advisor_result *r)
{
        return (gc__result_box *)(void *)((char *)r - offsetof(gc__result_box, r));
}

static gc_advisor_result *gc__result_new(void)
{
        gc__result_box *b = calloc(1, sizeof(*b));

        if (!b)
                return NULL;
        atomic_init(&b->refs, 1);
        return &b->r;
}

gc_advisor_result *gc_advisor_result_ref(gc_advisor_result *r)
{
        if (r)
                atomic_fetch_add_explicit(&gc__box_of(r)->refs, 1, memory_order_relaxed);
        return r;
}

gc_advisor_result *gc_advisor_result_unref(gc_advisor_result *r)
{
        gc__result_box *b;

        if (!r)
                return NULL;
        b = gc__box_of(r);
        /* acq_rel: every holder's reads happen before the last one frees. */
        if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
                return NULL;
        free(r->findings);
        free(r->notes);
        free(r->stats);
        gc_strpool_free(r->pool);
        free(b);
        return NULL;
}

static int gc__query(gc__adv *a, gc_cost_summary *s)
{
        gc_query q;

        memset(&q, 0, sizeof(q));
        q.start = a->wstart;
        q.end = a->in->end;
        q.now = a->wend;
        q.by[0] = GC_DIM_NAMESPACE;
        q.by[1] = GC_DIM_TEAM;
        q.by[2] = GC_DIM_PROJECT;
        q.n_by = 3;
        return gc_ledger_query(a->in->ledger, &q, s);
}

int gc_advisor_run(const gc_advisor_input *in, gc_advisor_result **ret_result, char *err,
                   size_t errlen)
{
        gc_advisor_opts defaults;
        gc_cost_summary s;
        gc__pass x;
        gc__adv a;
        gc_ledger_visitor v = {gc__visit_usage, gc__visit_capacity, gc__visit_rollup,
                               gc__visit_capacity_rollup, NULL};
        int r;

        if (err && errlen)
                err[0] = '\0';
        memset(&s, 0, sizeof(s));
        memset(&x, 0, sizeof(x));
        memset(&a, 0, sizeof(a));
        if (!in || !ret_result)
                return gc__bad(err, errlen, "advisor: no input");
        if (!in->ledger)
                return gc__bad(err, errlen, "advisor: no ledger");
        if (in->start < 0 || in->end <= in->start || in->now < 0)
                return gc__bad(err, errlen, "advisor: bad window");
        if (in->n_pods && !in->pods)
                return gc__bad(err, errlen, "advisor: pods missing");
        if (!in->opts)
                gc_advisor_opts_default(&defaults);
        a.o = in->opts ? in->opts : &defaults;
        r = gc_advisor_opts_check(a.o, err, errlen);
        if (r < 0)
                return r;
        a.in = in;
        a.wstart = in->start;
        a.wend = in->now && in->now < in->end ? in->now : in->end;
        if (a.wend < a.wstart)
                a.wend = a.wstart;
        a.window_h = (double)(a.wend - a.wstart) / 3600.0;
        gc_buf_init(&a.scratch, GC__TEXT_MAX);
        r = -ENOMEM;
        a.mig = calloc(GC__MIG_CACHE + 1, sizeof(*a.mig));
        if (!a.mig)
                goto out;
        a.r = gc__result_new();
        if (!a.r)
                goto out;
        a.r->pool = gc_strpool_new(GC__POOL_BYTES);
        if (!a.r->pool)
                goto out;
        a.r->start = in->start;
        a.r->end = in->end;
        a.r->now = a.wend;
        a.r->hours_per_month = a.o->hours_per_month;
        a.r->pods = in->n_pods;

        r = gc__pods(&a);
        if (r < 0)
                goto out;
        r = gc__query(&a, &s);
        if (r < 0)
                goto out;
        x.a = &a;
        x.ds = (a.wstart + GC__DAY - 1) / GC__DAY * GC__DAY;
        x.n_days = a.wend / GC__DAY * GC__DAY > x.ds
                       ? (size_t)((a.wend / GC__DAY * GC__DAY - x.ds) / GC__DAY)
                       : 0;
        r = gc_ledger_visit(in->ledger, &v, &x);
        if (r < 0)
                goto out;
        r = gc__unattributed(&a, &s);
        if (r < 0)
                goto out;
        r = gc__idle_capacity(&a, &s, &x);
        if (r < 0)
                goto out;
        r = gc__reserve_floor(&a, &x, &s);
        if (r < 0)
                goto out;
        r = gc__buy_vs_rent(&a, &s, &x);
        if (r < 0)
                goto out;

        if (a.nf)
                qsort(a.f, a.nf, sizeof(*a.f), gc__cmp_finding);
        r = gc__totals(&a);
        if (r < 0)
                goto out;
        a.r->n_findings_total = a.nf;
        a.r->n_findings = a.o->max_findings && a.nf > a.o->max_findings ? a.o->max_findings : a.nf;
        if (a.r->n_findings < a.nf) {
                gc_finding *v2 = realloc(a.f, a.r->n_findings * sizeof(*v2));

                if (v2)
                        a.f = v2;
        }
        a.r->findings = a.f;
        a.f = NULL;
        *ret_result = a.r;
        a.r = NULL;
        r = 0;
out:
        if (r < 0 && err && errlen && !*err)
                snprintf(err, errlen, "advisor: %s", strerror(-r));
        gc__pass_free(&x);
        gc_cost_summary_free(&s);
        gc_buf_free(&a.scratch);
        free(a.mig);
        free(a.f);
        gc_advisor_result_unref(a.r);
        return r;
}
