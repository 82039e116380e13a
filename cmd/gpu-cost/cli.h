/* cli: what the gpu-cost commands share: exit codes, error printing, loading inputs. */
#ifndef GC_CLI_H
#define GC_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "deliver/deliver.h"
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

/* `report --send-test-email ADDR | --send-test-webhook URL` (send.c): one report sent now. */
enum {
        CLI_OPT_SEND_EMAIL = 2000,
        CLI_OPT_SEND_WEBHOOK,
        CLI_OPT_WEBHOOK_FORMAT,
        CLI_OPT_WEBHOOK_SECRET_FILE,
        CLI_OPT_SMTP_SERVER,
        CLI_OPT_SMTP_FROM,
        CLI_OPT_SMTP_USER,
        CLI_OPT_SMTP_PASSWORD_FILE,
        CLI_OPT_SMTP_STARTTLS,
        CLI_OPT_SMTP_AUTH,
        CLI_OPT_SMTP_CACERT,
        CLI_OPT_DASHBOARD_URL,
};

typedef struct cli_send {
        const char *to, *webhook, *from, *dashboard;
        gc_deliver_smtp smtp; /* its password from the file or the environment */
        int chat;             /* a gc_deliver_chat; -1 = from the webhook's host */
        const char *password_file, *password_env, *secret_file, *secret_env, *secret_value;
        gc_buf password, secret; /* the files' contents, zeroed when done */
} cli_send;

void cli_send_init(cli_send *s);
void cli_send_done(cli_send *s);
/* 1 when c was a send option, 0 when not, -1 on a bad value (said). */
int cli_send_option(cli_send *s, int c, const char *arg);
static inline int cli_send_wanted(const cli_send *s)
{
        return s->to || s->webhook;
}
/* Checks what a send needs and reads its secrets: 0 or an exit status (said). */
int cli_send_check(cli_send *s, int64_t timeout_s);
/* Renders the report's JSON as the message and sends it, printing what was sent; an exit
 * status. */
int cli_send_report(cli_send *s, const char *json, size_t len);

#define CLI_SEND_OPTIONS                                                                           \
        {"send-test-email", required_argument, NULL, CLI_OPT_SEND_EMAIL},                          \
            {"send-test-webhook", required_argument, NULL, CLI_OPT_SEND_WEBHOOK},                  \
            {"webhook-format", required_argument, NULL, CLI_OPT_WEBHOOK_FORMAT},                   \
            {"webhook-secret-file", required_argument, NULL, CLI_OPT_WEBHOOK_SECRET_FILE},         \
            {"smtp-server", required_argument, NULL, CLI_OPT_SMTP_SERVER},                         \
            {"smtp-from", required_argument, NULL, CLI_OPT_SMTP_FROM},                             \
            {"smtp-user", required_argument, NULL, CLI_OPT_SMTP_USER},                             \
            {"smtp-password-file", required_argument, NULL, CLI_OPT_SMTP_PASSWORD_FILE},           \
            {"smtp-starttls", required_argument, NULL, CLI_OPT_SMTP_STARTTLS},                     \
            {"smtp-auth", required_argument, NULL, CLI_OPT_SMTP_AUTH},                             \
            {"smtp-cacert", required_argument, NULL, CLI_OPT_SMTP_CACERT},                         \
        {                                                                                          \
                "dashboard-url", required_argument, NULL, CLI_OPT_DASHBOARD_URL                    \
        }

#define CLI_REMOTE_HELP_SHORT                                                                      \
        "  --server URL, --token T, --token-file F, --cacert F, --insecure-skip-tls-verify,\n"     \
        "  --timeout D        as for costs (see gpu-cost costs --help)\n"

#endif
