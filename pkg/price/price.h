/* price: the GPU price catalog, node classification (model, capacity type) and the TCO model. */
#ifndef GC_PRICE_H
#define GC_PRICE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "../model/model.h"
#include "../util/util.h"

/* ---- catalog ------------------------------------------------------------------------------- */

#define GC_CATALOG_MAX_ENTRIES 10000
#define GC_CATALOG_MAX_BYTES   (4u << 20)

typedef struct gc_price_entry {
        char *model;         /* GPU model as GFD writes it ("NVIDIA-H100-80GB-HBM3"), a glob with
                                a trailing '*' ("NVIDIA-H100*"), or "*" */
        char *capacity_type; /* "on-demand", "spot", "reserved", "on-prem", ... or "*" */
        char *region;        /* NULL or "*" = any region */
        double price_per_gpu_hour;
        char *source; /* optional note: where the figure comes from */
} gc_price_entry;

typedef struct gc_catalog {
        char *currency; /* "USD" */
        char *as_of;    /* optional date of the figures */
        char *source;   /* optional description */
        gc_price_entry *entries;
        size_t n;
} gc_catalog;

/*
 * {"currency":"USD","as_of":"2025-06-01","prices":[{"model":"...","capacity_type":"on-demand",
 * "region":"us-east-1","price_per_gpu_hour":12.29}, ...]} (or the old name usd_per_gpu_hour, read
 * for one release). Errors name the field ("prices[3].price_per_gpu_hour: must be a number >= 0").
 */
gc_catalog *gc_catalog_parse(const char *json, size_t len, char *err, size_t errlen);
gc_catalog *gc_catalog_from_cjson(const cJSON *obj, const char *where, char *err, size_t errlen);
/* A fresh copy of the built-in, dated catalog (docs/prices.md). */
gc_catalog *gc_catalog_builtin(void);
gc_catalog *gc_catalog_free(gc_catalog *c); /* accepts NULL, returns NULL */
int gc_catalog_to_json(const gc_catalog *c, gc_buf *out);

/*
 * The most specific entry for (model, capacity type, region): an exact model beats a glob, a
 * longer glob beats a shorter, any model pattern beats "*"; then an exact capacity type beats
 * "*"; then an exact region beats none. Ties go to the earlier entry. Models compare without
 * case, with spaces and dashes equal. -ENOENT when nothing matches (no catch-all entry).
 */
int gc_catalog_lookup(const gc_catalog *c, const char *model, const char *capacity_type,
                      const char *region, const gc_price_entry **ret_entry);

/* ---- classifying a node ------------------------------------------------------------------- */

typedef struct gc_node_rule {
        gc_label *match; /* every key must equal its value (value "*" = key present) */
        size_t n_match;
        char *capacity_type; /* each NULL = not set by this rule */
        char *model;
        char *region;
        double price_per_gpu_hour; /* < 0 = not set */
} gc_node_rule;

typedef struct gc_price_rules {
        gc_node_rule *rules; /* first match wins, per field */
        size_t n;
        gc_label *instance_models; /* instance type -> GPU model, added to the built-ins */
        size_t n_instance_models;
        char *default_capacity_type; /* when nothing says; NULL = "on-demand" */
} gc_price_rules;

/*
 * Frees rules[] with each rule's match array and char * fields, the instance_models array and
 * default_capacity_type. The strings inside gc_label entries are not freed: they are const and
 * owned by the pool that interned them (the configuration's). Accepts a zeroed struct.
 */
void gc_price_rules_free(gc_price_rules *r);

typedef struct gc_node_class {
        const char *model;           /* interned */
        const char *capacity_type;   /* interned: on-demand, spot, reserved, on-prem, ... */
        const char *region;          /* interned or NULL */
        const char *model_source;    /* static text: "annotation gpu-cost.io/gpu-model", ...,
                                        or "rule 2" interned in the pool */
        const char *capacity_source; /* static text: "label karpenter.sh/capacity-type", ... */
        double price_per_gpu_hour;
        char price_source[160]; /* "annotation gpu-cost.io/price-per-gpu-hour", "rule 2" (rules[2],
                                   counted from 0), or "catalog NVIDIA-H100-80GB-HBM3/on-demand/
                                   us-east-1" (the matched entry's keys, "*" = any region) */
} gc_node_class;

/*
 * Model, capacity type, region and price of a node. Order of precedence for each: the node's
 * gpu-cost.io annotation, then the first matching user rule, then the well-known labels
 * (docs/prices.md), then the defaults. -ENOENT when no catalog entry matches (err says which
 * key); the rest of *ret is still filled then.
 */
int gc_node_classify(const gc_price_rules *r, const gc_catalog *c, const gc_node *node,
                     gc_strpool *pool, gc_node_class *ret, char *err, size_t errlen);
/* Marks the class's pooled strings, for its holder's mark (util.h: gc_strpool_mark). */
void gc_node_class_mark(const gc_node_class *cls, gc_strpool *p);

/* ---- owning GPUs (docs/prices.md) --------------------------------------------------------- */

typedef struct gc_tco_inputs {
        double node_price; /* purchase price of one node, installed */
        double gpus_per_node;
        double years;        /* amortization */
        double utilization;  /* fraction of hours doing productive work, (0, 1] */
        double cluster_gpus; /* GPUs the operations staff run */
        double ftes;         /* operations staff */
        double fte_cost;     /* fully loaded cost of one, per year */
        double kw_per_gpu;   /* average power draw */
        double pue;          /* data-centre power usage effectiveness, >= 1 */
        double price_per_kwh;
        double network_per_gpu_hour; /* fabric cost per productive GPU-hour */
} gc_tco_inputs;

typedef struct gc_tco_result {
        double hardware_per_hour; /* each per productive GPU-hour */
        double operations_per_hour;
        double power_per_hour;
        double network_per_hour;
        double cost_per_productive_gpu_hour;
        double annual_cost_per_gpu; /* what one GPU costs a year, busy or idle */
} gc_tco_result;

/* Validates (err names the input) and computes. */
int gc_tco_compute(const gc_tco_inputs *in, gc_tco_result *ret, char *err, size_t errlen);
/* annual_cost / (8760 * cloud price): above it owning is cheaper. */
int gc_tco_break_even(double annual_cost_per_gpu, double cloud_usd_per_gpu_hour,
                      double *ret_utilization);

#endif
