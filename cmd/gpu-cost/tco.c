/* tco: cost per productive GPU-hour of owned GPUs, and the utilization where owning pays. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "price/price.h"

static const char tco_usage[] =
    "Usage: gpu-cost tco --node-price N --gpus-per-node N --years N --utilization U\n"
    "                    --cluster-gpus N --ftes N --fte-cost N --kw-per-gpu N --pue N\n"
    "                    --price-per-kwh N --network-per-gpu-hour N [--cloud-price P]\n"
    "                    [--format text|json]\n"
    "       gpu-cost tco --annual-cost N --cloud-price P [--format text|json]\n"
    "\n"
    "The first form prices one productive GPU-hour of owned hardware:\n"
    "  hardware   = node_price / gpus_per_node / years / (8760 x U)\n"
    "  operations = ftes x fte_cost / (cluster_gpus x 8760 x U)\n"
    "  power      = kw_per_gpu x 8760 x pue x price_per_kwh / (8760 x U)\n"
    "  total      = hardware + operations + power + network_per_gpu_hour\n"
    "With --cloud-price, or in the second form, it also prints the break-even utilization\n"
    "annual_cost / (8760 x cloud_price): above it owning is cheaper, below it renting is.\n"
    "U is a fraction in (0, 1]; measure it, do not assume it. Money is in any one currency;\n"
    "--usd-per-kwh is the old name of --price-per-kwh, read for one release.\n";

enum {
        O_NODE_PRICE,
        O_GPUS,
        O_YEARS,
        O_UTIL,
        O_CLUSTER,
        O_FTES,
        O_FTE_COST,
        O_KW,
        O_PUE,
        O_KWH,
        O_NET,
        O_COUNT
};

static const char *const tco_names[O_COUNT] = {
    "node-price", "gpus-per-node", "years", "utilization",   "cluster-gpus",         "ftes",
    "fte-cost",   "kw-per-gpu",    "pue",   "price-per-kwh", "network-per-gpu-hour",
};

static int tco_number(const char *flag, const char *s, double *ret)
{
        if (gc_parse_double(s, ret) < 0) {
                cli_error("--%s: not a number: \"%s\"", flag, s);
                return -EINVAL;
        }
        return 0;
}

int cmd_tco(int argc, char **argv)
{
        static const struct option opts[] = {
            {"node-price", required_argument, NULL, 0},
            {"gpus-per-node", required_argument, NULL, 0},
            {"years", required_argument, NULL, 0},
            {"utilization", required_argument, NULL, 0},
            {"cluster-gpus", required_argument, NULL, 0},
            {"ftes", required_argument, NULL, 0},
            {"fte-cost", required_argument, NULL, 0},
            {"kw-per-gpu", required_argument, NULL, 0},
            {"pue", required_argument, NULL, 0},
            {"price-per-kwh", required_argument, NULL, 0},
            {"network-per-gpu-hour", required_argument, NULL, 0},
            {"usd-per-kwh", required_argument, NULL, 'k'}, /* the old name, for one release */
            {"annual-cost", required_argument, NULL, 'a'},
            {"cloud-price", required_argument, NULL, 'c'},
            {"format", required_argument, NULL, 'f'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        double v[O_COUNT];
        int set[O_COUNT] = {0};
        double annual = 0, cloud = 0, be = 0;
        int have_annual = 0, have_cloud = 0, json = 0, n_set = 0, c, idx;
        gc_tco_result res;
        char err[256];

        memset(&res, 0, sizeof(res));
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", opts, &idx)) != -1) {
                switch (c) {
                case 'k':
                        idx = O_KWH;
                        /* fall through */
                case 0:
                        if (tco_number(c == 'k' ? "usd-per-kwh" : tco_names[idx], optarg, &v[idx]) <
                            0)
                                return GC_EXIT_USAGE;
                        n_set += !set[idx];
                        set[idx] = 1;
                        break;
                case 'a':
                        if (tco_number("annual-cost", optarg, &annual) < 0)
                                return GC_EXIT_USAGE;
                        have_annual = 1;
                        break;
                case 'c':
                        if (tco_number("cloud-price", optarg, &cloud) < 0)
                                return GC_EXIT_USAGE;
                        have_cloud = 1;
                        break;
                case 'f':
                        if (strcmp(optarg, "json") == 0)
                                json = 1;
                        else if (strcmp(optarg, "text") != 0 && strcmp(optarg, "table") != 0) {
                                cli_error("--format: must be text or json, got \"%s\"", optarg);
                                return GC_EXIT_USAGE;
                        }
                        break;
                case 'h':
                        fputs(tco_usage, stdout);
                        return GC_EXIT_OK;
                default:
                        cli_error("tco: unknown or incomplete flag \"%s\" (see --help)",
                                  argv[optind - 1]);
                        return GC_EXIT_USAGE;
                }
        }
        if (optind < argc) {
                cli_error("tco: unexpected argument \"%s\"", argv[optind]);
                return GC_EXIT_USAGE;
        }
        if (have_annual && n_set) {
                cli_error("tco: give either --annual-cost or the cost-model inputs, not both");
                return GC_EXIT_USAGE;
        }
        if (!have_annual) {
                gc_tco_inputs in;

                if (n_set != O_COUNT) {
                        for (int i = 0; i < O_COUNT; i++)
                                if (!set[i]) {
                                        cli_error("tco: --%s is required (or use --annual-cost "
                                                  "with --cloud-price)",
                                                  tco_names[i]);
                                        break;
                                }
                        return GC_EXIT_USAGE;
                }
                in = (gc_tco_inputs){
                    .node_price = v[O_NODE_PRICE],
                    .gpus_per_node = v[O_GPUS],
                    .years = v[O_YEARS],
                    .utilization = v[O_UTIL],
                    .cluster_gpus = v[O_CLUSTER],
                    .ftes = v[O_FTES],
                    .fte_cost = v[O_FTE_COST],
                    .kw_per_gpu = v[O_KW],
                    .pue = v[O_PUE],
                    .price_per_kwh = v[O_KWH],
                    .network_per_gpu_hour = v[O_NET],
                };
                if (gc_tco_compute(&in, &res, err, sizeof(err)) < 0) {
                        /* err names the input in the file's spelling; flags use dashes. */
                        for (char *p = err; *p && *p != ':'; p++)
                                if (*p == '_')
                                        *p = '-';
                        cli_error("--%s", err);
                        return GC_EXIT_USAGE;
                }
                annual = res.annual_cost_per_gpu;
        } else if (!have_cloud) {
                cli_error("tco: --annual-cost needs --cloud-price");
                return GC_EXIT_USAGE;
        }
        if (have_cloud && gc_tco_break_even(annual, cloud, &be) < 0) {
                cli_error("--cloud-price: must be a number > 0; --annual-cost must be >= 0");
                return GC_EXIT_USAGE;
        }
        if (json) {
                printf("{");
                if (!have_annual)
                        printf("\"cost_per_productive_gpu_hour\":%.17g,"
                               "\"usd_per_productive_gpu_hour\":%.17g,\"hardware_per_hour\":%.17g,"
                               "\"operations_per_hour\":%.17g,\"power_per_hour\":%.17g,"
                               "\"network_per_hour\":%.17g,",
                               res.cost_per_productive_gpu_hour, res.cost_per_productive_gpu_hour,
                               res.hardware_per_hour, res.operations_per_hour, res.power_per_hour,
                               res.network_per_hour);
                printf("\"annual_cost_per_gpu\":%.17g", annual);
                if (have_cloud)
                        printf(
                            ",\"cloud_price_per_gpu_hour\":%.17g,\"cloud_usd_per_gpu_hour\":%.17g,"
                            "\"break_even_utilization\":%.17g",
                            cloud, cloud, be);
                printf("}\n");
                return GC_EXIT_OK;
        }
        if (!have_annual) {
                printf("Cost per productive GPU-hour at %.1f%% utilization\n", v[O_UTIL] * 100.0);
                printf("  hardware     %10.4f\n", res.hardware_per_hour);
                printf("  operations   %10.4f\n", res.operations_per_hour);
                printf("  power        %10.4f\n", res.power_per_hour);
                printf("  network      %10.4f\n", res.network_per_hour);
                printf("  total        %10.4f per productive GPU-hour\n",
                       res.cost_per_productive_gpu_hour);
        }
        printf("Annual cost of one GPU: %.2f\n", annual);
        if (have_cloud)
                printf("Break-even utilization against %.4f per GPU-hour: %.1f%% (above it, owning "
                       "is cheaper; below it, renting is)\n",
                       cloud, be * 100.0);
        return GC_EXIT_OK;
}
