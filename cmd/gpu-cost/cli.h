/* cli: what the gpu-cost commands share: exit codes, error printing, loading inputs. */
#ifndef GC_CLI_H
#define GC_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "dump/dump.h"
#include "gpuuse/gpuuse.h"
#include "export/export.h"
#include "util/util.h"

#define GC_EXIT_OK    0
#define GC_EXIT_FAIL  1 /* the work failed (out of memory, an output error) */
#define GC_EXIT_USAGE 2 /* bad input: a flag, a file, a field */

/* Largest input file accepted (a `kubectl get pods -A -o json` of a very large cluster). */
#define GC_CLI_MAX_INPUT ((size_t)2 << 30)

void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Saved dcgm-exporter /metrics bodies (metrics.c). */
typedef struct cli_metrics_file {
        const char *name; /* for messages */
        const char *data;
        size_t len;
        int64_t mtime; /* when its samples without a timestamp were taken, by default */
} cli_metrics_file;

int cli_metrics_read(const char *path, cli_metrics_file *ret, gc_buf *owned);
/*
 * The bodies into a usage store, oldest first: samples without a timestamp are taken at
 * scrape_at (0: the file's mtime); interval_s 0: a series' own spacing. Shared GPUs' per-pod
 * use goes into the loaded cluster's usage basis (docs/ledger.md) as it is read, so load the
 * cluster first. Errors are said; free *ret_store with gc_gpuuse_free.
 */
int cli_metrics_ingest(gc_dump *d, const cli_metrics_file *files, size_t n_files, int64_t scrape_at,
                       int64_t interval_s, gc_gpuuse **ret_store);
/* The advisor over [start, end) at now from the store: the Savings section (md) and the
 * recommendations document (json); either may be NULL. */
int cli_metrics_savings(const gc_dump *d, const gc_gpuuse *store, int64_t start, int64_t end,
                        int64_t now, gc_buf *md, gc_buf *json);

int cmd_analyze(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_tco(int argc, char **argv);
/* Remote commands: a controller's REST API (remote.c). */
int cmd_costs(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_recommendations(int argc, char **argv);
/* gpu-cost health --server URL: /healthz and /readyz of a running controller. */
int cmd_health(int argc, char **argv);

/* export (analyze.c offline, remote.c with --server): the flags both take. */
typedef struct cli_export_flags {
        gc_export_format format;
        int64_t granularity;
        int focus_minor;
        gc_chargeback_mode share;
        const char *format_s, *granularity_s, *focus_version_s, *share_s; /* as given, or NULL */
} cli_export_flags;
/* Handles --format ('F'), --granularity ('g'), --focus-version ('V'), --share-idle ('S'): 0,
 * an exit status after printing why, or -1 for another flag. */
int cli_export_flag(int c, const char *arg, cli_export_flags *f);
int cmd_export(int argc, char **argv);
int cmd_export_remote(int argc, char **argv);

#define CLI_REMOTE_HELP_SHORT                                                                      \
        "  --server URL, --token T, --token-file F, --cacert F, --insecure-skip-tls-verify,\n"     \
        "  --timeout D        as for costs (see gpu-cost costs --help)\n"

#endif
