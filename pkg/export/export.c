/* export: FOCUS and plain CSV rows of GPU cost, one charge period at a time (docs/export.md). */
#include "export.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GC__EX_TAG        "gpu-cost/"       /* prefix of the tags this program defines */
#define GC__EX_LABEL_TAG  "gpu-cost/label/" /* before a label key that has GC__EX_TAG's prefix */
#define GC__EX_M_USAGE    "gpu-cost:held-gpu-equivalents"
#define GC__EX_M_MEASURED "gpu-cost:measured-use"
#define GC__EX_M_IDLE     "gpu-cost:idle-capacity"
#define GC__EX_M_PROP     "gpu-cost:shared-proportional"
#define GC__EX_M_WEIGHTS  "gpu-cost:shared-weights"
#define GC__EX_UNIT       "GPU-Hours"
#define GC__EX_ACCT       "Kubernetes Cluster" /* BillingAccountType: the cluster */
#define GC__EX_METER      "GPU Usage"          /* SkuMeter: what a SKU meters */
#define GC__EX_CHUNK      24 /* periods per stepped query: a day of hours (<= GC_LEDGER_MAX_STEPS) */

typedef enum { GC__EX_USAGE, GC__EX_IDLE, GC__EX_SHARED } gc__ex_kind;

static const char *const gc__ex_kind_name[] = {"usage", "idle", "shared"};

/* A node's figures in one period: the origin charge its rows split. */
typedef struct gc__ex_node {
        const char *node, *model, *capacity_type;
        double held_cost, held_s;
        double unattr_cost, unattr_s;
        double idle_cost, idle_s;
} gc__ex_node;

typedef struct gc__ex_team {
        const char *team;
        double frac; /* of every node's shared cost */
} gc__ex_team;

typedef struct gc__ex {
        const gc_export_opts *o;
        gc_export_write_fn write;
        void *ud;
        gc_buf out;
        gc_buf cell; /* JSON cells before quoting */
        gc_export_totals t;
        int minor;
        const char *cluster, *currency;
        gc_label_keys lk; /* the ledger's label keys: their dimensions group the rows */
} gc__ex;

/* One row's values; NULL strings are empty (null) cells. */
typedef struct gc__ex_row {
        gc__ex_kind kind;
        int64_t start, end;
        const gc__ex_node *n;
        const char *ns, *team, *project;
        const char *workload;              /* GC_FOLDED_POD for folded hours */
        const char *labels[GC_LABEL_DIMS]; /* usage rows: the kept label keys' values */
        double hours, cost, origin_cost;
} gc__ex_row;

int gc_export_granularity_parse(const char *s, int64_t *ret)
{
        if (!s || !ret)
                return -EINVAL;
        if (strcmp(s, "daily") == 0)
                *ret = GC_EXPORT_DAILY;
        else if (strcmp(s, "hourly") == 0)
                *ret = GC_EXPORT_HOURLY;
        else
                return -EINVAL;
        return 0;
}

int gc_export_format_parse(const char *s, gc_export_format *ret)
{
        if (!s || !ret)
                return -EINVAL;
        if (strcmp(s, "focus") == 0)
                *ret = GC_EXPORT_FOCUS;
        else if (strcmp(s, "csv") == 0)
                *ret = GC_EXPORT_CSV;
        else
                return -EINVAL;
        return 0;
}

int gc_export_csv_field(gc_buf *b, const char *s)
{
        if (!b)
                return -EINVAL;
        if (!s || !s[strcspn(s, ",\"\r\n")])
                return s ? gc_buf_puts(b, s) : 0;
        gc_buf_append(b, "\"", 1);
        for (const char *p = s; !b->err && *p; p++) {
                if (*p == '"')
                        gc_buf_append(b, "\"\"", 2);
                else
                        gc_buf_append(b, p, 1);
        }
        return gc_buf_append(b, "\"", 1);
}

/*
 * Fails b as an append past its limit would (the first error sticks), so that a writer's one
 * check of b->err sees a failure that is not the buffer's own.
 */
static int gc__ex_fail(gc_buf *b, int err)
{
        if (!b->err)
                b->err = err;
        return b->err;
}

/* A number without exponent, trailing zeros trimmed: every FOCUS reader parses it. */
static int gc__ex_num(gc_buf *b, double v)
{
        char s[64];
        int n;

        if (!isfinite(v))
                return gc__ex_fail(b, -EINVAL);
        if (v == 0)
                v = 0; /* no "-0" */
        n = snprintf(s, sizeof(s), "%.10f", v);
        if (n <= 0 || (size_t)n >= sizeof(s))
                return gc__ex_fail(b, -ERANGE);
        while (n > 1 && s[n - 1] == '0')
                n--;
        if (s[n - 1] == '.')
                n--;
        return gc_buf_append(b, s, (size_t)n);
}

static int gc__ex_time(gc_buf *b, int64_t t)
{
        char s[GC_TIME_LEN];

        gc_time_format(t, s);
        return gc_buf_puts(b, s);
}

/* The UTC calendar month holding t. */
static void gc__ex_month(int64_t t, int64_t *ret_start, int64_t *ret_end)
{
        int64_t y, days = gc_floor_div(t, 86400);
        unsigned m, d;

        gc_civil_from_days(days, &y, &m, &d);
        *ret_start = gc_days_from_civil(y, m, 1) * 86400;
        *ret_end =
            (m == 12 ? gc_days_from_civil(y + 1, 1, 1) : gc_days_from_civil(y, m + 1, 1)) * 86400;
}

static int gc__ex_flush(gc__ex *x, int force)
{
        int r;

        if (x->out.len == 0 || (!force && x->out.len < GC_EXPORT_PIECE_BYTES))
                return 0;
        r = x->write(x->ud, x->out.data, x->out.len);
        gc_buf_reset(&x->out);
        return r;
}

/* ---- columns ------------------------------------------------------------------------------ */

static const char *const gc__ex_csv_cols[] = {"period_start",
                                              "period_end",
                                              "cluster",
                                              "node",
                                              "model",
                                              "capacity_type",
                                              "namespace",
                                              "team",
                                              "project",
                                              "workload",
                                              "kind",
                                              "gpu_hours",
                                              "cost",
                                              "currency",
                                              "price_per_gpu_hour",
                                              NULL};

/*
 * FOCUS columns in the order written, each with the first and last minor version that has it
 * (docs/export.md cites each). The 1.2 columns, then 1.3's split allocation, then the 1.3
 * columns the official 1.3 rules check whatever a file declares (carried, null where they do
 * not apply), then what 1.4 adds. 1.4 removed ProviderName and PublisherName.
 */
typedef struct gc__ex_col {
        const char *name;
        int since, until;
} gc__ex_col;

#define GC__EX_MINOR_MIN 2
#define GC__EX_MINOR_MAX 4

static const gc__ex_col gc__ex_focus_cols[] = {
    {"BilledCost", 2, 4},
    {"BillingAccountId", 2, 4},
    {"BillingAccountName", 2, 4},
    {"BillingCurrency", 2, 4},
    {"BillingPeriodEnd", 2, 4},
    {"BillingPeriodStart", 2, 4},
    {"ChargeCategory", 2, 4},
    {"ChargeClass", 2, 4},
    {"ChargeDescription", 2, 4},
    {"ChargeFrequency", 2, 4},
    {"ChargePeriodEnd", 2, 4},
    {"ChargePeriodStart", 2, 4},
    {"ConsumedQuantity", 2, 4},
    {"ConsumedUnit", 2, 4},
    {"ContractedCost", 2, 4},
    {"ContractedUnitPrice", 2, 4},
    {"EffectiveCost", 2, 4},
    {"InvoiceId", 2, 4},
    {"InvoiceIssuerName", 2, 4},
    {"ListCost", 2, 4},
    {"ListUnitPrice", 2, 4},
    {"PricingCategory", 2, 4},
    {"PricingQuantity", 2, 4},
    {"PricingUnit", 2, 4},
    {"ProviderName", 2, 3},
    {"PublisherName", 2, 3},
    {"RegionId", 2, 4},
    {"ResourceId", 2, 4},
    {"ResourceName", 2, 4},
    {"ResourceType", 2, 4},
    {"ServiceCategory", 2, 4},
    {"ServiceName", 2, 4},
    {"ServiceSubcategory", 2, 4},
    {"SkuId", 2, 4},
    {"SkuPriceId", 2, 4},
    {"Tags", 2, 4},
    {"x_CostKind", 2, 4},
    {"AllocatedMethodDetails", 3, 4},
    {"AllocatedMethodId", 3, 4},
    {"AllocatedResourceId", 3, 4},
    {"AllocatedResourceName", 3, 4},
    {"AllocatedTags", 3, 4},
    {"HostProviderName", 3, 4},
    {"ServiceProviderName", 3, 4},
    {"AvailabilityZone", 3, 4},
    {"BillingAccountType", 3, 4},
    {"CapacityReservationId", 3, 4},
    {"CapacityReservationStatus", 3, 4},
    {"CommitmentDiscountCategory", 3, 4},
    {"CommitmentDiscountId", 3, 4},
    {"CommitmentDiscountName", 3, 4},
    {"CommitmentDiscountQuantity", 3, 4},
    {"CommitmentDiscountStatus", 3, 4},
    {"CommitmentDiscountType", 3, 4},
    {"CommitmentDiscountUnit", 3, 4},
    {"ContractApplied", 3, 4},
    {"PricingCurrency", 3, 4},
    {"PricingCurrencyContractedUnitPrice", 3, 4},
    {"PricingCurrencyEffectiveCost", 3, 4},
    {"PricingCurrencyListUnitPrice", 3, 4},
    {"RegionName", 3, 4},
    {"SkuMeter", 3, 4},
    {"SkuPriceDetails", 3, 4},
    {"SubAccountId", 3, 4},
    {"SubAccountName", 3, 4},
    {"SubAccountType", 3, 4},
    {"CommitmentProgramEligibilityDetails", 4, 4},
    {"InvoiceDetailId", 4, 4},
    {NULL, 0, 0},
};

int gc_export_focus_version_parse(const char *s, int *ret_minor)
{
        if (!s || !ret_minor)
                return -EINVAL;
        if (s[0] != '1' || s[1] != '.' || s[2] < '0' + GC__EX_MINOR_MIN ||
            s[2] > '0' + GC__EX_MINOR_MAX || s[3])
                return -EINVAL;
        *ret_minor = s[2] - '0';
        return 0;
}

const char *gc_export_focus_column(int minor, size_t i)
{
        for (size_t k = 0; gc__ex_focus_cols[k].name; k++) {
                const gc__ex_col *c = &gc__ex_focus_cols[k];

                if (minor < c->since || minor > c->until)
                        continue;
                if (i-- == 0)
                        return c->name;
        }
        return NULL;
}

/* Cells, each preceded by a comma unless first. */
static int gc__ex_str(gc__ex *x, const char *s)
{
        gc_buf_append(&x->out, ",", 1);
        return gc_export_csv_field(&x->out, s);
}

static int gc__ex_header(gc__ex *x)
{
        const char *col;

        for (size_t i = 0; x->o->format == GC_EXPORT_CSV && gc__ex_csv_cols[i]; i++) {
                if (i > 0)
                        gc_buf_append(&x->out, ",", 1);
                gc_buf_puts(&x->out, gc__ex_csv_cols[i]);
        }
        for (size_t i = 0;
             x->o->format == GC_EXPORT_FOCUS && (col = gc_export_focus_column(x->minor, i)); i++) {
                if (i > 0)
                        gc_buf_append(&x->out, ",", 1);
                gc_buf_puts(&x->out, col);
        }
        /* The plain CSV: one column per kept label key, named as the dimension, after the
         * fixed ones (FOCUS carries them in its tags). */
        for (size_t i = 0; x->o->format == GC_EXPORT_CSV && i < x->lk.n; i++) {
                char name[GC_LABEL_KEY_MAX + 8];

                snprintf(name, sizeof(name), "label:%s", x->lk.key[i]);
                gc__ex_str(x, name);
        }
        return gc_buf_append(&x->out, "\r\n", 2);
}

static int gc__ex_numc(gc__ex *x, double v)
{
        gc_buf_append(&x->out, ",", 1);
        return gc__ex_num(&x->out, v);
}

static int gc__ex_timec(gc__ex *x, int64_t t)
{
        gc_buf_append(&x->out, ",", 1);
        return gc__ex_time(&x->out, t);
}

/* A unit price, or an empty cell for a row of no hours (it has none). */
static int gc__ex_pricec(gc__ex *x, double price)
{
        return isfinite(price) ? gc__ex_numc(x, price) : gc__ex_str(x, NULL);
}

/* x->cell holds a JSON value: quote it into the row. A cell that failed fails the row. */
static int gc__ex_cell(gc__ex *x)
{
        if (x->cell.err)
                return gc__ex_fail(&x->out, x->cell.err);
        return gc__ex_str(x, x->cell.data ? x->cell.data : "");
}

/* A label value as a tag's: none for pods without the label (FOCUS: the row is untagged). */
static const char *gc__ex_label_tag(const char *v)
{
        return v && *v && strcmp(v, GC_UNLABELLED) != 0 ? v : NULL;
}

/*
 * ,"<key>":"v" of the row's label values, the label key itself as the tag key, as FOCUS keeps
 * user-defined tags. A key with this program's own prefix could name one of its tags
 * ("gpu-cost/team"), so such a key gets GC__EX_LABEL_TAG before it, which no tag of this
 * program starts with: no label tag repeats another key.
 */
static int gc__ex_label_tags(gc__ex *x, const gc__ex_row *w, int first)
{
        for (size_t i = 0; w && i < x->lk.n; i++) {
                const char *v = gc__ex_label_tag(w->labels[i]), *k = x->lk.key[i];
                char key[sizeof(GC__EX_LABEL_TAG) + GC_LABEL_KEY_MAX + 1];

                if (!v || !k)
                        continue;
                snprintf(
                    key, sizeof(key), "%s%s",
                    strncmp(k, GC__EX_TAG, sizeof(GC__EX_TAG) - 1) == 0 ? GC__EX_LABEL_TAG : "", k);
                if (!first)
                        gc_buf_append(&x->cell, ",", 1);
                first = 0;
                gc_buf_json_str(&x->cell, key);
                gc_buf_append(&x->cell, ":", 1);
                gc_buf_json_str(&x->cell, v);
        }
        return x->cell.err;
}

/* {"<prefix>k":"v",...} of the non-NULL pairs, then the label tags of w (NULL: none). */
static int gc__ex_tags(gc__ex *x, const char *const *kv, size_t n, const gc__ex_row *w)
{
        int first = 1;

        gc_buf_reset(&x->cell);
        gc_buf_append(&x->cell, "{", 1);
        for (size_t i = 0; i + 1 < n; i += 2) {
                if (!kv[i + 1])
                        continue;
                if (!first)
                        gc_buf_append(&x->cell, ",", 1);
                first = 0;
                gc_buf_printf(&x->cell, "\"%s%s\":", GC__EX_TAG, kv[i]);
                gc_buf_json_str(&x->cell, kv[i + 1]);
        }
        gc__ex_label_tags(x, w, first);
        return gc_buf_append(&x->cell, "}", 1);
}

static int gc__ex_csv_row(gc__ex *x, const gc__ex_row *w)
{
        double price = w->hours > 0 ? w->cost / w->hours : 0;

        gc__ex_time(&x->out, w->start);
        gc__ex_timec(x, w->end);
        gc__ex_str(x, x->cluster);
        gc__ex_str(x, w->n->node);
        gc__ex_str(x, w->n->model);
        gc__ex_str(x, w->n->capacity_type);
        gc__ex_str(x, w->ns);
        gc__ex_str(x, w->team);
        gc__ex_str(x, w->project);
        gc__ex_str(x, w->workload);
        gc__ex_str(x, gc__ex_kind_name[w->kind]);
        gc__ex_numc(x, w->hours);
        gc__ex_numc(x, w->cost);
        gc__ex_str(x, x->currency);
        gc__ex_numc(x, price);
        for (size_t i = 0; i < x->lk.n; i++) /* empty on idle and shared rows */
                gc__ex_str(x, w->kind == GC__EX_USAGE ? w->labels[i] : NULL);
        return x->out.err;
}

static const char *gc__ex_method(const gc__ex *x, gc__ex_kind k)
{
        if (k == GC__EX_USAGE)
                return x->o->basis == GC_BASIS_USAGE ? GC__EX_M_MEASURED : GC__EX_M_USAGE;
        if (k == GC__EX_IDLE)
                return GC__EX_M_IDLE;
        return x->o->chargeback.mode == GC_CHARGEBACK_WEIGHTS ? GC__EX_M_WEIGHTS : GC__EX_M_PROP;
}

/* A dimension's value for text: the ledger counts NULL as "". */
static const char *gc__ex_s(const char *s)
{
        return s ? s : "";
}

/* The row's workload for a tag: none for folded hours (they keep no workload), as for nodes. */
static const char *gc__ex_wl(const gc__ex_row *w)
{
        if (!w->workload || !*w->workload || strcmp(w->workload, GC_FOLDED_POD) == 0)
                return NULL;
        return w->workload;
}

/* ChargeDescription: what the row charges for, on the resource named rname. */
static void gc__ex_focus_desc(const gc__ex_row *w, const char *rname, char *desc, size_t n)
{
        if (w->kind == GC__EX_USAGE && gc__ex_wl(w))
                snprintf(desc, n, "GPU-equivalent hours held on %s by %s/%s in %s (%s)", rname,
                         gc__ex_s(w->team), gc__ex_s(w->project), gc__ex_s(w->ns), gc__ex_wl(w));
        else if (w->kind == GC__EX_USAGE)
                snprintf(desc, n, "GPU-equivalent hours held on %s by %s/%s in %s", rname,
                         gc__ex_s(w->team), gc__ex_s(w->project), gc__ex_s(w->ns));
        else if (w->kind == GC__EX_IDLE)
                snprintf(desc, n, "Idle GPU capacity of %s", rname);
        else
                snprintf(desc, n,
                         "Share of idle and unattributed GPU cost of %s charged to team %s", rname,
                         gc__ex_s(w->team));
}

/*
 * Tags. 1.2 has no allocation columns: who the cost is for goes into Tags. 1.3's allocated
 * charges keep the origin charge's (the node's) Tags and name the team in AllocatedTags, which
 * must not repeat a key of Tags.
 */
static int gc__ex_focus_tags(gc__ex *x, const gc__ex_row *w, int pool)
{
        const char *node = pool ? NULL : w->n->node;
        const char *kv12[] = {"cluster",  x->cluster,   "node",  node,      "namespace",
                              w->ns,      "team",       w->team, "project", w->project,
                              "workload", gc__ex_wl(w), "idle",  NULL};
        const char *kv13[] = {"cluster", x->cluster, "node", node};

        if (w->kind == GC__EX_IDLE)
                kv12[13] = "true";
        if (x->minor >= 3)
                gc__ex_tags(x, kv13, 4, NULL);
        else
                gc__ex_tags(x, kv12, 14, w->kind == GC__EX_USAGE ? w : NULL);
        return gc__ex_cell(x);
}

/* 1.3's split-allocation columns: the share of the origin charge, how, and to whom. */
static int gc__ex_focus13(gc__ex *x, const gc__ex_row *w)
{
        double ratio = w->origin_cost > 0 ? w->cost / w->origin_cost : 0;
        char aid[512], aname[512];

        gc_buf_reset(&x->cell);
        gc_buf_puts(&x->cell, "{\"Elements\":[{\"AllocatedRatio\":");
        gc__ex_num(&x->cell, ratio);
        gc_buf_puts(&x->cell, ",\"UsageUnit\":\"" GC__EX_UNIT "\",\"UsageQuantity\":");
        gc__ex_num(&x->cell, w->hours);
        gc_buf_puts(&x->cell, "}]}");
        gc__ex_cell(x); /* AllocatedMethodDetails */
        gc__ex_str(x, gc__ex_method(x, w->kind));
        if (w->kind == GC__EX_USAGE) {
                snprintf(aid, sizeof(aid), "%s/%s/%s", gc__ex_s(w->ns), gc__ex_s(w->team),
                         gc__ex_s(w->project));
                snprintf(aname, sizeof(aname), "%s/%s in namespace %s", gc__ex_s(w->team),
                         gc__ex_s(w->project), gc__ex_s(w->ns));
        } else {
                snprintf(aid, sizeof(aid), "%s", gc__ex_s(w->team));
                snprintf(aname, sizeof(aname), "team %s", gc__ex_s(w->team));
        }
        /* The unallocated portion (idle, not shared) has no allocated resource. */
        gc__ex_str(x, w->kind == GC__EX_IDLE ? NULL : aid);
        gc__ex_str(x, w->kind == GC__EX_IDLE ? NULL : aname);
        if (w->kind != GC__EX_IDLE) {
                const char *kv[] = {"namespace", w->ns,      "team",     w->team,
                                    "project",   w->project, "workload", gc__ex_wl(w)};

                gc__ex_tags(x, kv, 8, w->kind == GC__EX_USAGE ? w : NULL);
                gc__ex_cell(x); /* AllocatedTags */
        } else {
                gc__ex_str(x, NULL);
        }
        gc__ex_str(x, x->cluster);        /* HostProviderName */
        return gc__ex_str(x, x->cluster); /* ServiceProviderName */
}

/*
 * The 1.3 columns past the split allocation. The official 1.3 rules check a conditional column
 * whatever a file declares, so each is carried: null where gpu-cost has no such thing (zones,
 * capacity reservations, commitment discounts, contracts, sub accounts), and otherwise the
 * value FOCUS asks for (prices are in the billing currency; one account type, the cluster).
 */
static int gc__ex_focus13_rest(gc__ex *x, const gc__ex_row *w, const char *region, double price)
{
        gc__ex_str(x, NULL);        /* AvailabilityZone */
        gc__ex_str(x, GC__EX_ACCT); /* BillingAccountType */
        /* CapacityReservationId and Status, CommitmentDiscountCategory, Id, Name, Quantity,
         * Status, Type and Unit: none. */
        for (int i = 0; i < 9; i++)
                gc__ex_str(x, NULL);
        gc__ex_str(x, NULL);         /* ContractApplied */
        gc__ex_str(x, x->currency);  /* PricingCurrency */
        gc__ex_pricec(x, price);     /* PricingCurrencyContractedUnitPrice */
        gc__ex_numc(x, w->cost);     /* PricingCurrencyEffectiveCost */
        gc__ex_pricec(x, price);     /* PricingCurrencyListUnitPrice */
        gc__ex_str(x, region);       /* RegionName: the region's only name is its id */
        gc__ex_str(x, GC__EX_METER); /* SkuMeter */
        gc__ex_str(x, NULL);         /* SkuPriceDetails */
        gc__ex_str(x, NULL);         /* SubAccountId */
        gc__ex_str(x, NULL);         /* SubAccountName */
        return gc__ex_str(x, NULL);  /* SubAccountType */
}

static int gc__ex_focus_row(gc__ex *x, const gc__ex_row *w)
{
        const gc__ex_node *n = w->n;
        /* Folded hours keep no node: their resource is the model and capacity type's nodes. */
        int pool = n->node && strcmp(n->node, GC_FOLDED_POD) == 0;
        const char *region =
            x->o->region_of && !pool ? x->o->region_of(x->o->region_ud, n->node) : NULL;
        double price = w->hours > 0 ? w->cost / w->hours : NAN;
        int64_t bp_start, bp_end;
        char desc[512], rid[512], sku[256], rname[300];

        gc__ex_month(w->start, &bp_start, &bp_end);
        snprintf(sku, sizeof(sku), "%s/%s", n->model ? n->model : "unknown",
                 n->capacity_type ? n->capacity_type : "unknown");
        if (pool) {
                snprintf(rid, sizeof(rid), "%s/" GC_FOLDED_POD "/%s", x->cluster, sku);
                snprintf(rname, sizeof(rname), "%s nodes", sku);
        } else {
                snprintf(rid, sizeof(rid), "%s/%s", x->cluster, gc__ex_s(n->node));
                snprintf(rname, sizeof(rname), "%s", gc__ex_s(n->node));
        }
        gc__ex_focus_desc(w, rname, desc, sizeof(desc));

        gc__ex_num(&x->out, w->cost); /* BilledCost */
        gc__ex_str(x, x->cluster);    /* BillingAccountId */
        gc__ex_str(x, x->cluster);    /* BillingAccountName */
        gc__ex_str(x, x->currency);   /* BillingCurrency */
        gc__ex_timec(x, bp_end);      /* BillingPeriodEnd */
        gc__ex_timec(x, bp_start);    /* BillingPeriodStart */
        gc__ex_str(x, "Usage");       /* ChargeCategory */
        gc__ex_str(x, NULL);          /* ChargeClass: not a correction */
        gc__ex_str(x, desc);          /* ChargeDescription */
        gc__ex_str(x, "Usage-Based"); /* ChargeFrequency */
        gc__ex_timec(x, w->end);      /* ChargePeriodEnd */
        gc__ex_timec(x, w->start);    /* ChargePeriodStart */
        gc__ex_numc(x, w->hours);     /* ConsumedQuantity */
        gc__ex_str(x, GC__EX_UNIT);   /* ConsumedUnit */
        gc__ex_numc(x, w->cost);      /* ContractedCost: no discounts */
        gc__ex_pricec(x, price);      /* ContractedUnitPrice */
        gc__ex_numc(x, w->cost);      /* EffectiveCost */
        gc__ex_str(x, NULL);          /* InvoiceId: the cluster issues no invoice */
        gc__ex_str(x, x->cluster);    /* InvoiceIssuerName */
        gc__ex_numc(x, w->cost);      /* ListCost */
        gc__ex_pricec(x, price);      /* ListUnitPrice */
        gc__ex_str(x, "Standard");    /* PricingCategory */
        gc__ex_numc(x, w->hours);     /* PricingQuantity */
        gc__ex_str(x, GC__EX_UNIT);   /* PricingUnit */
        if (x->minor <= 3) {
                gc__ex_str(x, x->cluster); /* ProviderName (removed in 1.4) */
                gc__ex_str(x, "gpu-cost"); /* PublisherName (removed in 1.4) */
        }
        gc__ex_str(x, region);                          /* RegionId */
        gc__ex_str(x, rid);                             /* ResourceId */
        gc__ex_str(x, rname);                           /* ResourceName */
        gc__ex_str(x, pool ? "GPU nodes" : "GPU node"); /* ResourceType */
        gc__ex_str(x, "Compute");                       /* ServiceCategory */
        gc__ex_str(x, "Kubernetes GPU");                /* ServiceName */
        gc__ex_str(x, "Containers");                    /* ServiceSubcategory */
        gc__ex_str(x, sku);                             /* SkuId */
        gc__ex_str(x, sku);                       /* SkuPriceId: one price per SKU and region */
        gc__ex_focus_tags(x, w, pool);            /* Tags */
        gc__ex_str(x, gc__ex_kind_name[w->kind]); /* x_CostKind */
        if (x->minor >= 3) {
                gc__ex_focus13(x, w);
                gc__ex_focus13_rest(x, w, region, price);
        }
        if (x->minor >= 4) {
                gc__ex_str(x, NULL); /* CommitmentProgramEligibilityDetails: no commitments */
                gc__ex_str(x, NULL); /* InvoiceDetailId: no invoice */
        }
        return x->out.err;
}

static int gc__ex_emit(gc__ex *x, const gc__ex_row *w)
{
        int r;

        if (x->o->format == GC_EXPORT_CSV)
                gc__ex_csv_row(x, w);
        else
                gc__ex_focus_row(x, w);
        /* The row writers fail only through x->out's sticky error: it is the row's result. */
        r = gc_buf_append(&x->out, "\r\n", 2);
        if (r < 0)
                return r;
        x->t.rows++;
        x->t.billed_cost += w->cost;
        x->t.gpu_hours += w->hours;
        if (w->kind == GC__EX_USAGE)
                x->t.usage_cost += w->cost;
        else if (w->kind == GC__EX_IDLE)
                x->t.idle_cost += w->cost;
        else
                x->t.shared_cost += w->cost;
        return gc__ex_flush(x, 0);
}

/* ---- one period ------------------------------------------------------------------------- */

static int gc__ex_unattributed(const char *team)
{
        return !team || strcmp(team, GC_UNATTRIBUTED) == 0;
}

static int gc__ex_cmp_str(const char *a, const char *b)
{
        return strcmp(a ? a : "", b ? b : "");
}

/* A row's resource against a resource: node, then model and capacity type (folded hours name
 * no node, so their resource is the model and capacity type's nodes together). */
static int gc__ex_cmp_res(const char *node, const char *model, const char *ct, const gc__ex_node *n)
{
        int c = gc__ex_cmp_str(node, n->node);

        if (c == 0)
                c = gc__ex_cmp_str(model, n->model);
        return c == 0 ? gc__ex_cmp_str(ct, n->capacity_type) : c;
}

static int gc__ex_cmp_row_res(const gc_cost_row *row, const gc__ex_node *n)
{
        return gc__ex_cmp_res(row->keys[GC_DIM_NODE], row->keys[GC_DIM_MODEL],
                              row->keys[GC_DIM_CAPACITY_TYPE], n);
}

/* Rows by resource, namespace, team, project: the file reads resource by resource. */
static int gc__ex_cmp_row(const void *pa, const void *pb, void *ud)
{
        const gc_cost_summary *s = ud;
        const gc_cost_row *a = &s->rows[*(const size_t *)pa];
        const gc_cost_row *b = &s->rows[*(const size_t *)pb];
        static const gc_dim order[] = {GC_DIM_NODE,      GC_DIM_MODEL, GC_DIM_CAPACITY_TYPE,
                                       GC_DIM_NAMESPACE, GC_DIM_TEAM,  GC_DIM_PROJECT,
                                       GC_DIM_WORKLOAD};
        int c = 0;

        for (size_t i = 0; c == 0 && i < sizeof(order) / sizeof(order[0]); i++)
                c = gc__ex_cmp_str(a->keys[order[i]], b->keys[order[i]]);
        for (size_t i = 0; c == 0 && i < s->label_keys.n; i++)
                c = gc__ex_cmp_str(a->keys[GC_DIM_LABEL + i], b->keys[GC_DIM_LABEL + i]);
        return c;
}

static int gc__ex_cmp_node(const void *pa, const void *pb)
{
        const gc__ex_node *a = pa;

        return gc__ex_cmp_res(a->node, a->model, a->capacity_type, pb);
}

static gc__ex_node *gc__ex_node_find(gc__ex_node *v, size_t n, const gc_cost_row *row)
{
        gc__ex_node key = {.node = row->keys[GC_DIM_NODE],
                           .model = row->keys[GC_DIM_MODEL],
                           .capacity_type = row->keys[GC_DIM_CAPACITY_TYPE]};

        return bsearch(&key, v, n, sizeof(*v), gc__ex_cmp_node);
}

static int gc__ex_period(gc__ex *x, const gc_cost_summary *s)
{
        size_t *idx = NULL, n_nodes = 0, n_teams = 0;
        gc__ex_node *nodes = NULL;
        gc__ex_team *teams = NULL;
        double *ratio = NULL, pool = 0;
        int r = 0, shared;

        idx = calloc(s->n_rows + 1, sizeof(*idx));
        ratio = calloc(s->n_rows + 1, sizeof(*ratio));
        teams = calloc(s->n_rows + 1, sizeof(*teams));
        nodes = calloc(s->n_rows + s->n_idle_nodes + 1, sizeof(*nodes));
        if (!idx || !ratio || !teams || !nodes) {
                r = -ENOMEM;
                goto out;
        }
        r = gc_chargeback_ratios(s, &x->o->chargeback, ratio, &pool);
        if (r < 0)
                goto out;
        shared = pool > 0;

        /* Nodes: every node with capacity, and any node holding GPUs without known capacity. */
        for (size_t i = 0; i < s->n_idle_nodes; i++) {
                const gc_cost_row *in = &s->idle_nodes[i];

                nodes[n_nodes++] = (gc__ex_node){.node = in->keys[GC_DIM_NODE],
                                                 .model = in->keys[GC_DIM_MODEL],
                                                 .capacity_type = in->keys[GC_DIM_CAPACITY_TYPE],
                                                 .idle_cost = in->cost,
                                                 .idle_s = in->gpu_seconds};
        }
        qsort(nodes, n_nodes, sizeof(*nodes), gc__ex_cmp_node);
        for (size_t i = 0; i < s->n_rows; i++) {
                const gc_cost_row *row = &s->rows[i];
                gc__ex_node *nd = gc__ex_node_find(nodes, n_nodes, row);

                idx[i] = i;
                if (!nd) {
                        nodes[n_nodes++] =
                            (gc__ex_node){.node = row->keys[GC_DIM_NODE],
                                          .model = row->keys[GC_DIM_MODEL],
                                          .capacity_type = row->keys[GC_DIM_CAPACITY_TYPE]};
                        qsort(nodes, n_nodes, sizeof(*nodes), gc__ex_cmp_node);
                        nd = gc__ex_node_find(nodes, n_nodes, row);
                }
                nd->held_cost += row->cost;
                nd->held_s += row->gpu_seconds;
                if (gc__ex_unattributed(row->keys[GC_DIM_TEAM])) {
                        nd->unattr_cost += row->cost;
                        nd->unattr_s += row->gpu_seconds;
                        x->t.unattributed_cost += row->cost;
                }
                if (ratio[i] > 0) { /* the team's fraction is the sum of its rows' */
                        size_t k;

                        for (k = 0; k < n_teams; k++)
                                if (strcmp(teams[k].team, row->keys[GC_DIM_TEAM]) == 0)
                                        break;
                        if (k == n_teams)
                                teams[n_teams++].team = row->keys[GC_DIM_TEAM];
                        teams[k].frac += ratio[i];
                }
        }
        qsort_r(idx, s->n_rows, sizeof(*idx), gc__ex_cmp_row, (void *)s);

        for (size_t ni = 0, ri = 0; r == 0 && ni < n_nodes; ni++) {
                const gc__ex_node *nd = &nodes[ni];
                double origin = nd->held_cost + nd->idle_cost;
                gc__ex_row w = {.start = s->start, .end = s->end, .n = nd, .origin_cost = origin};

                while (ri < s->n_rows && gc__ex_cmp_row_res(&s->rows[idx[ri]], nd) < 0)
                        ri++;
                for (; r == 0 && ri < s->n_rows && gc__ex_cmp_row_res(&s->rows[idx[ri]], nd) == 0;
                     ri++) {
                        const gc_cost_row *row = &s->rows[idx[ri]];

                        if (shared && gc__ex_unattributed(row->keys[GC_DIM_TEAM]))
                                continue; /* in the shares below */
                        w.kind = GC__EX_USAGE;
                        w.ns = row->keys[GC_DIM_NAMESPACE];
                        w.team = row->keys[GC_DIM_TEAM];
                        w.project = row->keys[GC_DIM_PROJECT];
                        w.workload = row->keys[GC_DIM_WORKLOAD];
                        for (size_t i = 0; i < x->lk.n; i++)
                                w.labels[i] = row->keys[GC_DIM_LABEL + i];
                        w.hours = row->gpu_seconds / 3600.0;
                        w.cost = row->cost;
                        r = gc__ex_emit(x, &w);
                }
                w.ns = w.project = w.workload = NULL;
                memset(w.labels, 0, sizeof(w.labels));
                if (!shared) {
                        if (r == 0 && (nd->idle_cost > 0 || nd->idle_s > 0)) {
                                w.kind = GC__EX_IDLE;
                                w.team = NULL;
                                w.hours = nd->idle_s / 3600.0;
                                w.cost = nd->idle_cost;
                                r = gc__ex_emit(x, &w);
                        }
                        continue;
                }
                for (size_t k = 0; r == 0 && k < n_teams; k++) {
                        double cost = (nd->idle_cost + nd->unattr_cost) * teams[k].frac;

                        if (cost <= 0)
                                continue;
                        w.kind = GC__EX_SHARED;
                        w.team = teams[k].team;
                        w.hours = (nd->idle_s + nd->unattr_s) / 3600.0 * teams[k].frac;
                        w.cost = cost;
                        r = gc__ex_emit(x, &w);
                }
        }
out:
        free(idx);
        free(ratio);
        free(teams);
        free(nodes);
        return r;
}

static int gc__ex_step(void *ud, const gc_cost_summary *s)
{
        return gc__ex_period(ud, s);
}

static int gc__ex_query(gc__ex *x, int64_t start, int64_t end, int64_t step)
{
        gc_query q = {.start = start,
                      .end = end,
                      .now = x->o->now ? x->o->now : x->o->end,
                      .basis = x->o->basis};
        static const gc_dim by[] = {GC_DIM_NODE,    GC_DIM_NAMESPACE, GC_DIM_TEAM,
                                    GC_DIM_PROJECT, GC_DIM_MODEL,     GC_DIM_CAPACITY_TYPE,
                                    GC_DIM_WORKLOAD};

        memcpy(q.by, by, sizeof(by));
        q.n_by = sizeof(by) / sizeof(by[0]);
        /* Kept label keys split the usage rows by their values (none kept: as before). */
        for (size_t i = 0; i < x->lk.n; i++)
                q.by[q.n_by++] = (gc_dim)(GC_DIM_LABEL + i);
        if (start >= end)
                return 0;
        if (step == 0) {
                gc_cost_summary s = {0};
                int r = gc_ledger_query(x->o->ledger, &q, &s);

                if (r == 0)
                        r = gc__ex_period(x, &s);
                gc_cost_summary_free(&s);
                return r;
        }
        return gc_ledger_query_each_step(x->o->ledger, &q, step, gc__ex_step, x);
}

/* Charge periods are whole UTC days or hours from first to last, cut to the window at its
 * two ends ([start, first) and [last, end)); first > last when the window lies inside one. */
static void gc__ex_bounds(const gc_export_opts *o, int64_t *first, int64_t *last)
{
        int64_t g = o->granularity;

        *first = gc_floor_div(o->start, g) * g;
        if (*first < o->start)
                *first += g;
        *last = gc_floor_div(o->end, g) * g;
}

int gc_export_whole(const gc_export_opts *o)
{
        int64_t first, last;

        if (!o || !o->ledger || o->start >= o->end || o->granularity <= 0)
                return 1;
        gc__ex_bounds(o, &first, &last);
        if (first > last)
                return gc_ledger_span_whole(o->ledger, o->start, o->end);
        return (first == o->start || gc_ledger_span_whole(o->ledger, o->start, first)) &&
               gc_ledger_steps_whole(o->ledger, first, last, o->granularity) &&
               (last == o->end || gc_ledger_span_whole(o->ledger, last, o->end));
}

int gc_export_run(const gc_export_opts *o, gc_export_write_fn write, void *ud,
                  gc_export_totals *ret_totals)
{
        gc__ex x = {.o = o, .write = write, .ud = ud};
        int64_t g, first, last;
        int r;

        if (!o || !write || !o->ledger || o->start >= o->end || o->now < 0 ||
            (o->granularity != GC_EXPORT_DAILY && o->granularity != GC_EXPORT_HOURLY) ||
            (o->format != GC_EXPORT_FOCUS && o->format != GC_EXPORT_CSV) ||
            (o->focus_minor != 0 &&
             (o->focus_minor < GC__EX_MINOR_MIN || o->focus_minor > GC__EX_MINOR_MAX)))
                return -EINVAL;
        {
                /* The chargeback's weights are checked once here, not per period. */
                gc_cost_summary probe = {.by = {GC_DIM_TEAM}, .n_by = 1};
                double pool;

                r = gc_chargeback_ratios(&probe, &o->chargeback, NULL, &pool);
                if (r < 0)
                        return r;
        }
        x.minor = o->focus_minor ? o->focus_minor : 3;
        gc_ledger_label_keys(o->ledger, &x.lk);
        x.cluster = o->cluster && *o->cluster ? o->cluster : "default";
        x.currency = o->currency && *o->currency ? o->currency : "USD";
        gc_buf_init(&x.out, GC_EXPORT_PIECE_BYTES + (64u << 10));
        gc_buf_init(&x.cell, 16u << 10);

        g = o->granularity;
        gc__ex_bounds(o, &first, &last);
        r = gc__ex_header(&x);
        if (first > last) { /* the window lies inside one period */
                if (r == 0)
                        r = gc__ex_query(&x, o->start, o->end, 0);
        } else {
                if (r == 0)
                        r = gc__ex_query(&x, o->start, first, 0);
                /* Stepped queries of at most GC__EX_CHUNK periods each: one pass over the ledger
                 * per chunk, and a chunk's summaries held at once, so memory follows the chunk,
                 * never the window. */
                for (int64_t a = first; r == 0 && a < last;) {
                        int64_t b = last - a > g * GC__EX_CHUNK ? a + g * GC__EX_CHUNK : last;

                        r = gc__ex_query(&x, a, b, g);
                        a = b;
                }
                if (r == 0)
                        r = gc__ex_query(&x, last, o->end, 0);
        }
        if (r == 0)
                r = gc__ex_flush(&x, 1);
        if (r == 0 && ret_totals)
                *ret_totals = x.t;
        gc_buf_free(&x.out);
        gc_buf_free(&x.cell);
        return r;
}
