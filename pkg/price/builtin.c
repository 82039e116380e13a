/* builtin: the dated default price catalog used until the user configures their own. */
#include <stdlib.h>
#include <string.h>

#include "price.h"

/*
 * Every figure is explained in docs/prices.md. Keys are GPU Feature Discovery product names.
 * A figure that is not a published list price says "estimate" in its source.
 */
static const struct {
        const char *model;
        const char *capacity_type;
        double price_per_gpu_hour;
        const char *source;
} gc__builtin[] = {
    {"NVIDIA-H100-80GB-HBM3", "on-demand", 12.29,
     "AWS p5.48xlarge on-demand list price, 98.32/h for 8 GPUs"},
    {"NVIDIA-H100-80GB-HBM3", "reserved", 5.25,
     "AWS p5.48xlarge 3-year partial-upfront reservation, about 5.25 per GPU-hour "
     "(1-year no-upfront: 8.05)"},
    {"NVIDIA-H100-80GB-HBM3", "spot", 5.00,
     "conservative (low) end of the typical H100 spot range, 5-8 per GPU-hour; spot "
     "prices move by hour and zone"},
    {"NVIDIA-H100-80GB-HBM3", "on-prem", 2.84,
     "estimate: owning cost of the docs/prices.md worked example (DGX H100, 3 years), "
     "3.554 per productive GPU-hour x utilization 0.80"},
    {"NVIDIA-H100*", "on-demand", 12.29,
     "estimate: other H100 variants priced as the H100 80GB SXM5 (AWS p5.48xlarge on-demand)"},
    {"NVIDIA-H100*", "reserved", 5.25,
     "estimate: other H100 variants priced as the H100 80GB SXM5 (AWS p5.48xlarge 3-year "
     "reservation)"},
    {"NVIDIA-H100*", "spot", 5.00,
     "estimate: other H100 variants priced as the H100 80GB SXM5 (conservative end of the 5-8 spot "
     "range)"},
    {"NVIDIA-H100*", "on-prem", 2.84,
     "estimate: other H100 variants priced as the H100 80GB SXM5 (TCO worked example)"},
    {"NVIDIA-H100*", "*", 12.29,
     "estimate: H100, any other capacity type, at the on-demand list price (an upper bound)"},
    {"NVIDIA-A100-SXM4-40GB", "*", 4.10,
     "AWS p4d.24xlarge on-demand list price, 32.77/h for 8 GPUs; no spot or reserved "
     "figure, so an upper bound for those"},
    {"NVIDIA-A100-PCIE-40GB", "*", 4.10,
     "estimate: priced as the A100 40GB SXM4 (AWS p4d.24xlarge on-demand)"},
    {"NVIDIA-A100-SXM4-80GB", "*", 4.00,
     "Azure ND96amsr A100 v4 on-demand list price, about 32/h for 8 GPUs; no spot or "
     "reserved figure, so an upper bound for those"},
    {"NVIDIA-A100-80GB-PCIe", "*", 4.00,
     "estimate: priced as the A100 80GB SXM4 (Azure ND96amsr A100 v4 on-demand)"},
    {"NVIDIA-A100*", "*", 4.10,
     "estimate: other A100 variants priced as the A100 40GB SXM4 (AWS p4d.24xlarge)"},
    {"NVIDIA-A10G", "*", 2.04,
     "AWS g5.48xlarge on-demand list price, 16.29/h for 8 GPUs (host CPUs and memory "
     "included)"},
    {"NVIDIA-L4", "*", 0.80,
     "estimate: about the AWS g6.xlarge on-demand list price (one L4 with its host)"},
    {"Tesla-T4", "*", 0.53,
     "estimate: about the AWS g4dn.xlarge on-demand list price (one T4 with its host)"},
    {"NVIDIA-A16*", "*", 0.53,
     "estimate: no cloud rents an A16; priced as the comparable T4 cloud instance. A vGPU "
     "profile is priced as a whole GPU"},
    /* Other vendors' accelerators, per device-hour: the instance's list price over the devices in
     * it. Each source carries its own date; docs/prices.md has the table. */
    {"AMD-Instinct-MI300X", "*", 1.99,
     "DigitalOcean GPU Droplet list price, 1.99/h for one MI300X (15.92/h for 8), Droplet pricing "
     "page validated 2026-05-28; the only hourly MI300X list price published, a neocloud's, so "
     "lower than a hyperscaler's would be; an upper bound for spot and reserved"},
    {"AMD-Instinct-MI3*", "*", 1.99,
     "estimate: other MI300-series (MI325X, MI350X, MI355X: sold per contract, no list price) "
     "priced as the MI300X"},
    {"AWS-Trainium1", "*", 1.34375,
     "AWS trn1.32xlarge on-demand list price in us-east-1, 21.50/h for 16 Trainium (trn1.2xlarge "
     "1.34375/h for one), AWS price list of 2026-07-20; an upper bound for spot and reserved"},
    {"AWS-Inferentia2", "*", 1.0818,
     "AWS inf2.48xlarge on-demand list price in us-east-1, 12.98127/h for 12 Inferentia2 "
     "(inf2.24xlarge the same per device), AWS price list of 2026-07-20"},
    {"AWS-Inferentia1", "*", 0.2951,
     "AWS inf1.24xlarge on-demand list price in us-east-1, 4.721/h for 16 Inferentia, AWS price "
     "list of 2026-07-20"},
    {"Intel-Gaudi1", "*", 1.6386,
     "AWS dl1.24xlarge on-demand list price in us-east-1, 13.10904/h for 8 Gaudi, AWS price list "
     "of 2026-07-20"},
    {"Google-TPU-v4", "*", 3.22,
     "Google Cloud TPU v4 on-demand price in us-central2, 9891.84/h for a v4-6144 (3072 chips), "
     "as the SkyPilot catalog of Google's SKUs records it (skypilot-catalog 017e2502)"},
    {"Google-TPU-v5e", "*", 1.20,
     "Google Cloud TPU v5e on-demand price in us-central1, 1.20/h for a v5litepod-1 (one chip), "
     "as the SkyPilot catalog of Google's SKUs records it (skypilot-catalog 017e2502)"},
    {"Google-TPU-v5p", "*", 4.20,
     "Google Cloud TPU v5p on-demand price in us-central1, 16.80/h for a v5p-8 (4 chips), as the "
     "SkyPilot catalog of Google's SKUs records it (skypilot-catalog 017e2502)"},
    {"Google-TPU-v6e", "*", 2.70,
     "Google Cloud TPU v6e (Trillium) on-demand price in us-central1, 2.70/h for a v6e-1 (one "
     "chip), as the SkyPilot catalog of Google's SKUs records it (skypilot-catalog 017e2502)"},
    {"*", "*", 2.00,
     "estimate: catch-all for GPU models not in the catalog, a mid-range figure near the "
     "A10G; add your models"},
};

gc_catalog *gc_catalog_builtin(void)
{
        const size_t n = sizeof(gc__builtin) / sizeof(gc__builtin[0]);
        gc_catalog *c = calloc(1, sizeof(*c));

        if (!c)
                return NULL;
        c->entries = calloc(n, sizeof(gc_price_entry));
        c->currency = strdup("USD");
        c->as_of = strdup("2025-06-01");
        c->source = strdup("published cloud list prices, 2023-2025 (on-demand, 3-year reserved, "
                           "spot ranges); entries marked estimate are not list prices");
        if (!c->entries || !c->currency || !c->as_of || !c->source)
                return gc_catalog_free(c);
        for (size_t i = 0; i < n; i++) {
                gc_price_entry *e = &c->entries[i];

                /* n counts initialised entries, so a failure here frees only those. */
                c->n = i + 1;
                e->model = strdup(gc__builtin[i].model);
                e->capacity_type = strdup(gc__builtin[i].capacity_type);
                e->source = strdup(gc__builtin[i].source);
                e->price_per_gpu_hour = gc__builtin[i].price_per_gpu_hour;
                if (!e->model || !e->capacity_type || !e->source)
                        return gc_catalog_free(c);
        }
        return c;
}
