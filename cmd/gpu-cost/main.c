/* gpu-cost: the command-line tool: offline analysis of cluster dumps, TCO, the demo. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char gc__usage[] =
    "gpu-cost: what your Kubernetes GPUs cost, by team and project, to the second.\n"
    "\n"
    "Usage: gpu-cost <command> [flags]\n"
    "\n"
    "Commands:\n"
    "  demo       print the weekly report of a bundled example cluster (no cluster needed)\n"
    "  analyze    cost of `kubectl get pods/nodes/namespaces -o json` dumps over a window\n"
    "  export     GPU cost as FOCUS 1.3/1.2 or plain CSV rows (offline, or --server URL)\n"
    "  tco        cost per productive GPU-hour of owning GPUs, and the break-even utilization\n"
    "  version    print the version\n"
    "\n"
    "From a running controller's REST API (--server URL, or GPU_COST_SERVER):\n"
    "  costs            GPU cost by team and project (any grouping, window and step)\n"
    "  report           the daily, weekly or monthly report (Markdown)\n"
    "  recommendations  the advisor's findings with their monthly savings\n"
    "  health           whether the controller is alive and ready (/healthz, /readyz)\n"
    "\n"
    "Run `gpu-cost <command> --help` for a command's flags. Installed on PATH as\n"
    "kubectl-gpu_cost (a copy or a symbolic link), it is also `kubectl gpu-cost <command>`.\n";

void cli_error(const char *fmt, ...)
{
        va_list ap;

        fputs("gpu-cost: error: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

void cli_warn(const char *fmt, ...)
{
        va_list ap;

        fputs("gpu-cost: warning: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

int main(int argc, char **argv)
{
        const char *cmd = argc > 1 ? argv[1] : NULL;

        if (!cmd || strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 ||
            strcmp(cmd, "-h") == 0) {
                fputs(gc__usage, cmd ? stdout : stderr);
                return cmd ? GC_EXIT_OK : GC_EXIT_USAGE;
        }
        if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
                /* The image's test compares the revision with the commit it was built from. */
                printf("gpu-cost %s%s%s%s\n", GC_VERSION, GC_REVISION[0] ? " (revision " : "",
                       GC_REVISION, GC_REVISION[0] ? ")" : "");
                return GC_EXIT_OK;
        }
        if (strcmp(cmd, "analyze") == 0)
                return cmd_analyze(argc - 1, argv + 1);
        if (strcmp(cmd, "demo") == 0)
                return cmd_demo(argc - 1, argv + 1);
        if (strcmp(cmd, "export") == 0)
                return cmd_export(argc - 1, argv + 1);
        if (strcmp(cmd, "tco") == 0)
                return cmd_tco(argc - 1, argv + 1);
        if (strcmp(cmd, "costs") == 0)
                return cmd_costs(argc - 1, argv + 1);
        if (strcmp(cmd, "report") == 0)
                return cmd_report(argc - 1, argv + 1);
        if (strcmp(cmd, "recommendations") == 0)
                return cmd_recommendations(argc - 1, argv + 1);
        if (strcmp(cmd, "health") == 0)
                return cmd_health(argc - 1, argv + 1);
        cli_error("unknown command \"%s\" (try gpu-cost --help)", cmd);
        return GC_EXIT_USAGE;
}
