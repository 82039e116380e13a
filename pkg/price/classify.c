/* classify: a node's GPU model, capacity type, region and price, each with where it came from. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "price.h"

#define GC__NAME_MAX  128 /* GPU model names */
#define GC__TOKEN_MAX 63  /* capacity types, as a label value */

#define GC__ANN_MODEL    "gpu-cost.io/gpu-model"
#define GC__ANN_CAPACITY "gpu-cost.io/capacity-type"
#define GC__ANN_PRICE    "gpu-cost.io/price-per-gpu-hour"

void gc_price_rules_free(gc_price_rules *r)
{
        if (!r)
                return;
        for (size_t i = 0; r->rules && i < r->n; i++) {
                free(r->rules[i].match);
                free(r->rules[i].capacity_type);
                free(r->rules[i].model);
                free(r->rules[i].region);
        }
        free(r->rules);
        free(r->instance_models);
        free(r->default_capacity_type);
        memset(r, 0, sizeof(*r));
}

/* ---- well-known names ---------------------------------------------------------------------- */

/* GKE's accelerator names, mapped to the product names GPU Feature Discovery writes. */
static const gc_label gc__gke_models[] = {
    {"nvidia-tesla-k80", "Tesla-K80"},
    {"nvidia-tesla-p4", "Tesla-P4"},
    {"nvidia-tesla-p100", "Tesla-P100-PCIE-16GB"},
    {"nvidia-tesla-v100", "Tesla-V100-SXM2-16GB"},
    {"nvidia-tesla-t4", "Tesla-T4"},
    {"nvidia-l4", "NVIDIA-L4"},
    {"nvidia-tesla-a100", "NVIDIA-A100-SXM4-40GB"},
    {"nvidia-a100-80gb", "NVIDIA-A100-SXM4-80GB"},
    {"nvidia-h100-80gb", "NVIDIA-H100-80GB-HBM3"},
    {"nvidia-h100-mega-80gb", "NVIDIA-H100-80GB-HBM3"},
    {"nvidia-h200-141gb", "NVIDIA-H200"},
    {"nvidia-b200", "NVIDIA-B200"},
};

/*
 * Cloud instance types with a fixed GPU model. A trailing '*' matches any suffix; the '.'
 * before it keeps "g6.*" from matching g6e (L40S) instances.
 */
static const gc_label gc__instance_models[] = {
    /* AWS */
    {"p5.48xlarge", "NVIDIA-H100-80GB-HBM3"},
    {"p5e.48xlarge", "NVIDIA-H200"},
    {"p5en.48xlarge", "NVIDIA-H200"},
    {"p4d.24xlarge", "NVIDIA-A100-SXM4-40GB"},
    {"p4de.24xlarge", "NVIDIA-A100-SXM4-80GB"},
    {"p3.*", "Tesla-V100-SXM2-16GB"},
    {"p3dn.24xlarge", "Tesla-V100-SXM2-32GB"},
    {"g5.*", "NVIDIA-A10G"},
    {"g6.*", "NVIDIA-L4"},
    {"g6e.*", "NVIDIA-L40S"},
    {"g4dn.*", "Tesla-T4"},
    /* AWS accelerators of other vendors: devices per instance and generation from the AWS Neuron
     * docs ("Trn1/Trn1n Architecture", "Trn2 Architecture", "Inf2 Architecture", "Inf1
     * Architecture") and the AWS DL1 deep dive (eight Gaudi accelerators in a dl1.24xlarge). The
     * names follow GFD's Vendor-Product form, with the generation always written. */
    {"trn1.*", "AWS-Trainium1"},
    {"trn1n.*", "AWS-Trainium1"},
    {"trn2.*", "AWS-Trainium2"},
    {"trn2u.*", "AWS-Trainium2"},
    {"inf1.*", "AWS-Inferentia1"},
    {"inf2.*", "AWS-Inferentia2"},
    {"dl1.*", "Intel-Gaudi1"},
    /* Google Cloud */
    {"a3-highgpu-*", "NVIDIA-H100-80GB-HBM3"},
    {"a3-megagpu-8g", "NVIDIA-H100-80GB-HBM3"},
    {"a3-edgegpu-8g", "NVIDIA-H100-80GB-HBM3"},
    {"a3-ultragpu-8g", "NVIDIA-H200"},
    {"a2-highgpu-*", "NVIDIA-A100-SXM4-40GB"},
    {"a2-megagpu-16g", "NVIDIA-A100-SXM4-40GB"},
    {"a2-ultragpu-*", "NVIDIA-A100-SXM4-80GB"},
    {"g2-standard-*", "NVIDIA-L4"},
    /* Google Cloud TPU VMs, as GKE's TPU nodes name their machine type (AI-Hypercomputer xpk
     * system characteristics); the gke-tpu-accelerator label says the same first. */
    {"ct4p-*", "Google-TPU-v4"},
    {"ct5l-*", "Google-TPU-v5e"},
    {"ct5lp-*", "Google-TPU-v5e"},
    {"ct5p-*", "Google-TPU-v5p"},
    {"ct6e-*", "Google-TPU-v6e"},
    {"tpu7x-*", "Google-TPU-7x"},
    /* Azure */
    {"Standard_ND96isr_H100_v5", "NVIDIA-H100-80GB-HBM3"},
    {"Standard_ND96isr_H200_v5", "NVIDIA-H200"},
    {"Standard_ND96asr_v4", "NVIDIA-A100-SXM4-40GB"},
    {"Standard_ND96amsr_A100_v4", "NVIDIA-A100-SXM4-80GB"},
    {"Standard_NC24ads_A100_v4", "NVIDIA-A100-80GB-PCIe"},
    {"Standard_NC48ads_A100_v4", "NVIDIA-A100-80GB-PCIe"},
    {"Standard_NC96ads_A100_v4", "NVIDIA-A100-80GB-PCIe"},
    {"Standard_NC4as_T4_v3", "Tesla-T4"},
    {"Standard_NC8as_T4_v3", "Tesla-T4"},
    {"Standard_NC16as_T4_v3", "Tesla-T4"},
    {"Standard_NC64as_T4_v3", "Tesla-T4"},
    {"Standard_ND96isr_MI300X_v5", "AMD-Instinct-MI300X"},
    /* DigitalOcean GPU Droplets (DOKS nodes), one or eight MI300X */
    {"gpu-mi300x1-192gb", "AMD-Instinct-MI300X"},
    {"gpu-mi300x8-1536gb", "AMD-Instinct-MI300X"},
};

/* Instance types compare without case; a pattern may end in '*'. */
static int gc__pattern_match(const char *pattern, const char *s)
{
        size_t n = strlen(pattern);

        if (n > 0 && pattern[n - 1] == '*')
                return strncasecmp(pattern, s, n - 1) == 0;
        return strcasecmp(pattern, s) == 0;
}

static const char *gc__map_find(const gc_label *map, size_t n, const char *key)
{
        for (size_t i = 0; i < n; i++)
                if (map[i].key && map[i].value && gc__pattern_match(map[i].key, key))
                        return map[i].value;
        return NULL;
}

/* ---- labels and rules ---------------------------------------------------------------------- */

/* Our own lookup, so classification does not depend on how the model module indexes labels. */
static const char *gc__label(const gc_node *n, const char *key)
{
        for (size_t i = 0; n->labels && i < n->n_labels; i++)
                if (n->labels[i].key && strcmp(n->labels[i].key, key) == 0)
                        return n->labels[i].value ? n->labels[i].value : "";
        return NULL;
}

static int gc__rule_matches(const gc_node_rule *r, const gc_node *n)
{
        for (size_t i = 0; i < r->n_match; i++) {
                const char *v;

                if (!r->match[i].key)
                        return 0;
                v = gc__label(n, r->match[i].key);
                if (!v)
                        return 0;
                if (r->match[i].value && strcmp(r->match[i].value, "*") != 0 &&
                    strcmp(v, r->match[i].value) != 0)
                        return 0;
        }
        return 1;
}

/* ---- normalising values -------------------------------------------------------------------- */

/* A capacity type in lower case, or -EINVAL when it is not a plain token. */
static int gc__norm_capacity(const char *s, char out[GC__TOKEN_MAX + 1])
{
        size_t n = strlen(s);

        if (n == 0 || n > GC__TOKEN_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                char c = (char)tolower((unsigned char)s[i]);

                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      (i > 0 && (c == '-' || c == '_' || c == '.'))))
                        return -EINVAL;
                out[i] = c;
        }
        out[n] = '\0';
        return 0;
}

/* A model as GFD writes it: spaces (DCGM's spelling) become dashes. */
static int gc__norm_model(const char *s, char out[GC__NAME_MAX + 1])
{
        size_t n = strlen(s);

        if (n == 0 || n > GC__NAME_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];

                if (c < 0x20 || c > 0x7e)
                        return -EINVAL;
                out[i] = c == ' ' ? '-' : (char)c;
        }
        out[n] = '\0';
        return 0;
}

/* The physical model of a GFD product: "-MIG-<profile>" and "-SHARED" name how it is cut. */
static void gc__strip_product(const char *product, char out[GC__NAME_MAX + 1])
{
        char *p;
        size_t n;

        gc_strlcpy(out, product, GC__NAME_MAX + 1);
        p = strstr(out, "-MIG-");
        if (p)
                *p = '\0';
        n = strlen(out);
        if (n > 7 && strcmp(out + n - 7, "-SHARED") == 0)
                out[n - 7] = '\0';
}

/* ---- classification ------------------------------------------------------------------------ */

typedef struct gc__rule_hits {
        long model, capacity, region, price; /* index of the first matching rule setting it */
} gc__rule_hits;

static void gc__find_rules(const gc_price_rules *r, const gc_node *n, gc__rule_hits *h)
{
        h->model = h->capacity = h->region = h->price = -1;
        for (size_t i = 0; r && r->rules && i < r->n; i++) {
                const gc_node_rule *rule = &r->rules[i];

                if (!gc__rule_matches(rule, n))
                        continue;
                if (h->model < 0 && rule->model)
                        h->model = (long)i;
                if (h->capacity < 0 && rule->capacity_type)
                        h->capacity = (long)i;
                if (h->region < 0 && rule->region)
                        h->region = (long)i;
                if (h->price < 0 && rule->price_per_gpu_hour >= 0)
                        h->price = (long)i;
        }
}

/* "rule N", interned so the source outlives this call like the values do. */
static const char *gc__rule_source(gc_strpool *pool, long i)
{
        char buf[32];

        snprintf(buf, sizeof(buf), "rule %ld", i);
        return gc_strpool_intern0(pool, buf);
}

/* Which label the model module took a record's gpu_model from: GPU Feature Discovery's product,
 * GKE's accelerator (mapped), or another vendor's label (gc_accel_model). */
static const char *gc__record_model_source(const gc_node *n, int gke_mapped)
{
        char buf[GC__NAME_MAX + 1];
        const char *src;

        if (gke_mapped)
                return "label cloud.google.com/gke-accelerator";
        if (n->product || gc__label(n, "nvidia.com/gpu.product"))
                return "label nvidia.com/gpu.product";
        if (gc_accel_model(n, buf, sizeof(buf), &src) == 0 && strcmp(buf, n->gpu_model) == 0)
                return src;
        return "label nvidia.com/gpu.product";
}

static int gc__classify_model(const gc_price_rules *r, const gc_node *n, const gc__rule_hits *h,
                              gc_strpool *pool, gc_node_class *cls, const char *node_name,
                              char *err, size_t errlen)
{
        char buf[GC__NAME_MAX + 1];
        const char *v, *itype = NULL;

        if (n->ann_gpu_model && *n->ann_gpu_model) {
                if (gc__norm_model(n->ann_gpu_model, buf) < 0) {
                        gc_errf(err, errlen,
                                "node %s: annotation " GC__ANN_MODEL
                                ": must be 1 to 128 printable characters",
                                node_name);
                        return -EINVAL;
                }
                cls->model_source = "annotation " GC__ANN_MODEL;
        } else if (h->model >= 0) {
                if (gc__norm_model(r->rules[h->model].model, buf) < 0) {
                        gc_errf(err, errlen,
                                "node %s: rule %ld: model: must be 1 to 128 "
                                "printable characters",
                                node_name, h->model);
                        return -EINVAL;
                }
                cls->model_source = gc__rule_source(pool, h->model);
                if (!cls->model_source)
                        return -ENOMEM;
        } else if (n->gpu_model && *n->gpu_model) {
                /* The model module falls back to the GKE accelerator name when GFD is absent:
                   map it to the GFD spelling so one model has one key in reports. */
                const char *m =
                    gc__map_find(gc__gke_models, sizeof(gc__gke_models) / sizeof(gc__gke_models[0]),
                                 n->gpu_model);

                gc_strlcpy(buf, m ? m : n->gpu_model, sizeof(buf));
                cls->model_source = gc__record_model_source(n, m != NULL);
        } else if ((v = n->product) || (v = gc__label(n, "nvidia.com/gpu.product"))) {
                /* A record decoded without the model module's stripping: strip here. */
                gc__strip_product(v, buf);
                cls->model_source = "label nvidia.com/gpu.product";
        } else if ((v = gc__label(n, "cloud.google.com/gke-accelerator"))) {
                const char *m = gc__map_find(gc__gke_models,
                                             sizeof(gc__gke_models) / sizeof(gc__gke_models[0]), v);

                gc_strlcpy(buf, m ? m : v, sizeof(buf));
                cls->model_source = "label cloud.google.com/gke-accelerator";
        } else if (gc_accel_model(n, buf, sizeof(buf), &v) == 0) {
                /* Another vendor's labels on a record decoded without the model module. */
                cls->model_source = v;
        } else if (((itype = gc__label(n, "node.kubernetes.io/instance-type")) ||
                    (itype = gc__label(n, "beta.kubernetes.io/instance-type"))) &&
                   r && (v = gc__map_find(r->instance_models, r->n_instance_models, itype))) {
                gc_strlcpy(buf, v, sizeof(buf));
                cls->model_source = "instance type, configured map";
        } else if (itype &&
                   (v = gc__map_find(gc__instance_models,
                                     sizeof(gc__instance_models) / sizeof(gc__instance_models[0]),
                                     itype))) {
                gc_strlcpy(buf, v, sizeof(buf));
                cls->model_source = "instance type, built-in map";
        } else {
                gc_strlcpy(buf, "unknown", sizeof(buf));
                cls->model_source = "default";
        }
        if (!*buf)
                gc_strlcpy(buf, "unknown", sizeof(buf));
        cls->model = gc_strpool_intern0(pool, buf);
        return cls->model ? 0 : -ENOMEM;
}

/* The capacity type the cloud's own labels say, or NULL. */
static const char *gc__capacity_from_labels(const gc_node *n, char buf[GC__TOKEN_MAX + 1],
                                            const char **ret_source)
{
        const char *v;

        if ((v = gc__label(n, "karpenter.sh/capacity-type")) && gc__norm_capacity(v, buf) == 0) {
                *ret_source = "label karpenter.sh/capacity-type";
                return buf;
        }
        if ((v = gc__label(n, "eks.amazonaws.com/capacityType"))) {
                static const gc_label eks[] = {
                    {"ON_DEMAND", "on-demand"},
                    {"SPOT", "spot"},
                    {"CAPACITY_BLOCK", "reserved"},
                };

                for (size_t i = 0; i < sizeof(eks) / sizeof(eks[0]); i++) {
                        if (strcasecmp(v, eks[i].key) == 0) {
                                *ret_source = "label eks.amazonaws.com/capacityType";
                                return eks[i].value;
                        }
                }
        }
        if ((v = gc__label(n, "cloud.google.com/gke-spot")) && strcasecmp(v, "true") == 0) {
                *ret_source = "label cloud.google.com/gke-spot";
                return "spot";
        }
        if ((v = gc__label(n, "cloud.google.com/gke-preemptible")) && strcasecmp(v, "true") == 0) {
                *ret_source = "label cloud.google.com/gke-preemptible";
                return "spot";
        }
        if ((v = gc__label(n, "kubernetes.azure.com/scalesetpriority")) &&
            strcasecmp(v, "spot") == 0) {
                *ret_source = "label kubernetes.azure.com/scalesetpriority";
                return "spot";
        }
        return NULL;
}

static int gc__classify_capacity(const gc_price_rules *r, const gc_node *n, const gc__rule_hits *h,
                                 gc_strpool *pool, gc_node_class *cls, const char *node_name,
                                 char *err, size_t errlen)
{
        char buf[GC__TOKEN_MAX + 1], lbuf[GC__TOKEN_MAX + 1];
        const char *v = NULL;

        if (n->ann_capacity_type && *n->ann_capacity_type) {
                if (gc__norm_capacity(n->ann_capacity_type, buf) < 0) {
                        gc_errf(err, errlen,
                                "node %s: annotation " GC__ANN_CAPACITY
                                ": must be a capacity type such as \"on-demand\", \"spot\", "
                                "\"reserved\" or \"on-prem\"",
                                node_name);
                        return -EINVAL;
                }
                v = buf;
                cls->capacity_source = "annotation " GC__ANN_CAPACITY;
        } else if (h->capacity >= 0) {
                if (gc__norm_capacity(r->rules[h->capacity].capacity_type, buf) < 0) {
                        gc_errf(err, errlen,
                                "node %s: rule %ld: capacity_type: must be a token such as "
                                "\"on-demand\"",
                                node_name, h->capacity);
                        return -EINVAL;
                }
                v = buf;
                cls->capacity_source = gc__rule_source(pool, h->capacity);
                if (!cls->capacity_source)
                        return -ENOMEM;
        } else if ((v = gc__capacity_from_labels(n, lbuf, &cls->capacity_source))) {
                /* set by the helper */
        } else if (r && r->default_capacity_type) {
                if (gc__norm_capacity(r->default_capacity_type, buf) < 0) {
                        gc_errf(err, errlen,
                                "default_capacity_type: must be a token such as "
                                "\"on-prem\"");
                        return -EINVAL;
                }
                v = buf;
                cls->capacity_source = "default_capacity_type";
        } else {
                v = "on-demand";
                cls->capacity_source = "default";
        }
        cls->capacity_type = gc_strpool_intern0(pool, v);
        return cls->capacity_type ? 0 : -ENOMEM;
}

static int gc__classify_region(const gc_price_rules *r, const gc_node *n, const gc__rule_hits *h,
                               gc_strpool *pool, gc_node_class *cls)
{
        const char *v;

        if (h->region >= 0)
                v = r->rules[h->region].region;
        else if (!(v = gc__label(n, "topology.kubernetes.io/region")))
                v = gc__label(n, "failure-domain.beta.kubernetes.io/region");
        if (!v || !*v) {
                cls->region = NULL;
                return 0;
        }
        cls->region = gc_strpool_intern0(pool, v);
        return cls->region ? 0 : -ENOMEM;
}

int gc_node_classify(const gc_price_rules *r, const gc_catalog *c, const gc_node *node,
                     gc_strpool *pool, gc_node_class *ret, char *err, size_t errlen)
{
        const char *name;
        const gc_price_entry *e;
        gc__rule_hits h;
        gc_node_class cls;
        int rc;

        if (!node || !pool || !ret)
                return -EINVAL;
        name = node->name && *node->name ? node->name : "(unnamed)";
        memset(&cls, 0, sizeof(cls));
        gc__find_rules(r, node, &h);
        if ((rc = gc__classify_model(r, node, &h, pool, &cls, name, err, errlen)) < 0 ||
            (rc = gc__classify_capacity(r, node, &h, pool, &cls, name, err, errlen)) < 0 ||
            (rc = gc__classify_region(r, node, &h, pool, &cls)) < 0)
                return rc;

        if (node->ann_price && *node->ann_price) {
                double v;

                if (gc_parse_double(node->ann_price, &v) < 0 || v < 0) {
                        gc_errf(err, errlen,
                                "node %s: annotation " GC__ANN_PRICE
                                " (or its old name gpu-cost.io/usd-per-gpu-hour): must be a "
                                "number >= 0, got \"%.40s\"",
                                name, node->ann_price);
                        return -EINVAL;
                }
                cls.price_per_gpu_hour = v;
                gc_strlcpy(cls.price_source, "annotation " GC__ANN_PRICE, sizeof(cls.price_source));
        } else if (h.price >= 0) {
                cls.price_per_gpu_hour = r->rules[h.price].price_per_gpu_hour;
                snprintf(cls.price_source, sizeof(cls.price_source), "rule %ld", h.price);
        } else if (c && gc_catalog_lookup(c, cls.model, cls.capacity_type, cls.region, &e) == 0) {
                cls.price_per_gpu_hour = e->price_per_gpu_hour;
                snprintf(cls.price_source, sizeof(cls.price_source), "catalog %s/%s/%s", e->model,
                         e->capacity_type, e->region ? e->region : "*");
        } else {
                cls.price_per_gpu_hour = 0;
                gc_strlcpy(cls.price_source, "none", sizeof(cls.price_source));
                gc_errf(err, errlen,
                        "node %s: no catalog price for model \"%s\", capacity type \"%s\", "
                        "region \"%s\" (add an entry, or a catch-all \"*\")",
                        name, cls.model, cls.capacity_type, cls.region ? cls.region : "*");
                *ret = cls;
                return -ENOENT;
        }
        *ret = cls;
        return 0;
}

_Static_assert(sizeof(gc_node_class) == 208,
               "gc_node_class changed: mark its strings in gc_node_class_mark");

void gc_node_class_mark(const gc_node_class *cls, gc_strpool *p)
{
        gc_strpool_mark(p, cls->model);
        gc_strpool_mark(p, cls->capacity_type);
        gc_strpool_mark(p, cls->region);
        gc_strpool_mark(p, cls->model_source);
        gc_strpool_mark(p, cls->capacity_source);
}
