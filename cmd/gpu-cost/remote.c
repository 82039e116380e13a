/* remote: costs, report, recommendations, health and export --server: flags, output, exit codes. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "client/client.h"
#include "ledger/ledger.h"
#include "report/report.h"

#define REMOTE_MAX_PARAMS     8
#define REMOTE_PROBE_MAX_BODY ((size_t)64 << 10) /* /healthz and /readyz say a line */

typedef enum { RFMT_TABLE, RFMT_JSON, RFMT_MARKDOWN } remote_format;

/* What every remote command takes: where the API is and how to reach it. */
typedef struct remote {
        gc_client_opts o; /* server, token, cacert, insecure, timeout */
        const char *token_file;
        gc_buf token_buf;
} remote;

/* The flags every remote command shares; getopt_long codes from 1000 up. */
enum { OPT_SERVER = 1000, OPT_TOKEN, OPT_TOKEN_FILE, OPT_CACERT, OPT_INSECURE, OPT_TIMEOUT };
#define REMOTE_OPTIONS                                                                             \
        {"server", required_argument, NULL, OPT_SERVER},                                           \
            {"token", required_argument, NULL, OPT_TOKEN},                                         \
            {"token-file", required_argument, NULL, OPT_TOKEN_FILE},                               \
            {"cacert", required_argument, NULL, OPT_CACERT},                                       \
            {"insecure-skip-tls-verify", no_argument, NULL, OPT_INSECURE},                         \
        {                                                                                          \
                "timeout", required_argument, NULL, OPT_TIMEOUT                                    \
        }

#define REMOTE_HELP                                                                                \
        "  --server URL       the controller's address, e.g. http://127.0.0.1:8080 after\n"        \
        "                     `kubectl -n gpu-cost port-forward svc/gpu-cost 8080:8080` (env\n"    \
        "                     GPU_COST_SERVER)\n"                                                  \
        "  --token T          bearer token when the API checks callers (env GPU_COST_TOKEN);\n"    \
        "                     e.g. $(kubectl create token NAME)\n"                                 \
        "  --token-file F     read the token from F\n"                                             \
        "  --cacert F         CA certificates (PEM) to verify an https server with\n"              \
        "  --insecure-skip-tls-verify  do not verify the server's certificate\n"                   \
        "  --timeout D        give up after D (default 30s)\n"

static void remote_init(remote *r)
{
        const char *s = getenv("GPU_COST_SERVER"), *t = getenv("GPU_COST_TOKEN");

        memset(r, 0, sizeof(*r));
        r->o.server = s && *s ? s : NULL;
        r->o.token = t && *t ? t : NULL;
        r->o.timeout_s = GC_CLIENT_TIMEOUT_S;
        gc_buf_init(&r->token_buf, GC_CLIENT_MAX_TOKEN);
}

static void remote_done(remote *r)
{
        if (r->token_buf.data) /* the token is a secret: leave no copy behind */
                memset(r->token_buf.data, 0, r->token_buf.cap);
        gc_buf_free(&r->token_buf);
}

/* 1 when the option was one of the shared ones, 0 when not, -1 on a bad value. */
static int remote_option(remote *r, int c, const char *arg)
{
        switch (c) {
        case OPT_SERVER:
                r->o.server = arg;
                return 1;
        case OPT_TOKEN:
                r->o.token = arg;
                r->token_file = NULL;
                return 1;
        case OPT_TOKEN_FILE:
                r->token_file = arg;
                r->o.token = NULL;
                return 1;
        case OPT_CACERT:
                r->o.cacert = arg;
                return 1;
        case OPT_INSECURE:
                r->o.insecure = 1;
                return 1;
        case OPT_TIMEOUT:
                if (gc_duration_parse(arg, &r->o.timeout_s) < 0 || r->o.timeout_s < 1) {
                        cli_error("--timeout: expected a duration (30s, 2m), got \"%s\"", arg);
                        return -1;
                }
                return 1;
        default:
                return 0;
        }
}

/* Checks the server and loads the token file; an exit status or 0. */
static int remote_ready(remote *r)
{
        gc_buf *t = &r->token_buf;

        if (!r->o.server) {
                cli_error("no server: give --server URL or set GPU_COST_SERVER (e.g. "
                          "http://127.0.0.1:8080 after kubectl port-forward)");
                return GC_EXIT_USAGE;
        }
        if (strncmp(r->o.server, "http://", 7) != 0 && strncmp(r->o.server, "https://", 8) != 0) {
                cli_error("--server: expected an http:// or https:// URL, got \"%s\"", r->o.server);
                return GC_EXIT_USAGE;
        }
        if (r->token_file) {
                int e = gc_read_file(r->token_file, GC_CLIENT_MAX_TOKEN, t);

                if (e < 0) {
                        cli_error("--token-file %s: cannot read: %s", r->token_file,
                                  e == -E2BIG ? "larger than 16 KiB" : strerror(-e));
                        return GC_EXIT_USAGE;
                }
                while (t->len && (t->data[t->len - 1] == '\n' || t->data[t->len - 1] == '\r' ||
                                  t->data[t->len - 1] == ' '))
                        t->data[--t->len] = '\0';
                r->o.token = t->data;
        }
        if (r->o.token && strpbrk(r->o.token, "\r\n")) {
                cli_error("the token holds a line break");
                return GC_EXIT_USAGE;
        }
        return 0;
}

/*
 * GETs path with the given parameters (name/value pairs, NULL values skipped) into body, at most
 * max_body bytes. Returns 0, or an exit status after printing why: a refused request (400, 404:
 * a bad window, an unknown report) is bad input.
 */
static int remote_get(remote *r, const char *path, const char *const *params, size_t n_params,
                      size_t max_body, gc_buf *body)
{
        char err[1024];
        long status = 0;
        int e;

        r->o.max_body = max_body;
        e = gc_client_get(&r->o, path, params, n_params, body, &status, err, sizeof(err));
        if (e == 0)
                return 0;
        cli_error("%s", err);
        return e == -EPROTO && (status == 400 || status == 404) ? GC_EXIT_USAGE : GC_EXIT_FAIL;
}

static int write_body(const char *data, size_t len)
{
        if (len && fwrite(data, 1, len, stdout) != len)
                return -EIO;
        if (len && data[len - 1] != '\n')
                fputc('\n', stdout);
        return fflush(stdout) == 0 ? 0 : -EIO;
}

static int parse_rformat(const char *s, remote_format *ret)
{
        if (strcmp(s, "table") == 0)
                *ret = RFMT_TABLE;
        else if (strcmp(s, "json") == 0)
                *ret = RFMT_JSON;
        else if (strcmp(s, "markdown") == 0 || strcmp(s, "md") == 0)
                *ret = RFMT_MARKDOWN;
        else {
                cli_error("--format: must be table, json or markdown, got \"%s\"", s);
                return -EINVAL;
        }
        return 0;
}

/* ---- cost summaries as tables ------------------------------------------------------------- */

typedef struct costs_out {
        remote_format fmt;
        gc_buf *out;
        int err; /* a formatting error (the answer was read) */
} costs_out;

/* A summary as a table or Markdown; a step's under a heading naming its window. */
static int costs_summary(void *ud, const gc_cost_summary *s, const char *currency, int stepped)
{
        costs_out *c = ud;
        int md = c->fmt == RFMT_MARKDOWN;

        if (stepped) {
                char start[GC_TIME_LEN], end[GC_TIME_LEN];

                gc_time_format(s->start, start);
                gc_time_format(s->end, end);
                gc_buf_printf(c->out, "%s%s%s to %s\n%s", c->out->len ? "\n" : "", md ? "### " : "",
                              start, end, md ? "\n" : "");
        }
        if (c->out->err == 0)
                c->err = md ? gc_report_summary_markdown(s, currency, c->out)
                            : gc_report_summary_table(s, currency, c->out);
        else
                c->err = c->out->err;
        return c->err;
}

static int render_costs(const gc_buf *body, remote_format fmt, gc_buf *out)
{
        costs_out c = {fmt, out, 0};
        char err[1024];
        int r = gc_client_costs_each(body->data ? body->data : "", body->len, costs_summary, &c,
                                     err, sizeof(err));

        if (r == 0)
                return 0;
        if (c.err)
                cli_error("cannot format the answer: %s", strerror(-c.err));
        else if (r == -ENOMEM)
                cli_error("cannot format the answer: %s", strerror(-r));
        else
                cli_error("the server's answer is not a cost summary (docs/report.md): %s", err);
        return r;
}

/* ---- commands -------------------------------------------------------------------------------- */

static const char costs_usage[] =
    "Usage: gpu-cost costs --server URL [--window W] [--by DIMS] [--step D]\n"
    "                      [--format table|json|markdown] [--token T | --token-file F]\n"
    "\n"
    "GPU cost by team and project (or any grouping) from a running controller's REST API\n"
    "(/api/v1/costs). Also `kubectl gpu-cost costs ...` when installed as a kubectl plugin.\n"
    "\n"
    "  --window W         7d (the last 7 days, default), 12h, today, yesterday, week,\n"
    "                     lastweek, month, lastmonth, or START,END (RFC 3339)\n"
    "  --by DIMS          namespace, team, project, model, capacity_type, node, pod,\n"
    "                     workload, label:KEY (a key the controller keeps:\n"
    "                     labels.dimensions of its configuration)\n"
    "                     (comma-separated; default team,project)\n"
    "  --step D           one summary per D (1d, 1h) across the window\n"
    "  --team T, --project P, --namespace NS  only that team's, project's or namespace's pods\n"
    "  --format F         table (default), json (the API's answer as is) or markdown\n" REMOTE_HELP
    "\n"
    "Exit status: 0 on success, 1 when the server cannot be reached or fails, 2 on bad\n"
    "input (also when the server refuses a parameter: its message says which).\n";

int cmd_costs(int argc, char **argv)
{
        static const struct option opts[] = {
            REMOTE_OPTIONS,
            {"window", required_argument, NULL, 'w'},
            {"by", required_argument, NULL, 'b'},
            {"step", required_argument, NULL, 's'},
            {"team", required_argument, NULL, 'T'},
            {"project", required_argument, NULL, 'P'},
            {"namespace", required_argument, NULL, 'n'},
            {"format", required_argument, NULL, 'f'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        const char *params[REMOTE_MAX_PARAMS * 2] = {"window",  "7d", "by",        "team,project",
                                                     "step",    NULL, "team",      NULL,
                                                     "project", NULL, "namespace", NULL};
        remote_format fmt = RFMT_TABLE;
        gc_buf body, out;
        remote rm;
        int c, r, rc = GC_EXIT_USAGE;

        remote_init(&rm);
        gc_buf_init(&body, GC_CLIENT_MAX_BODY);
        gc_buf_init(&out, GC_CLIENT_MAX_BODY * 2);
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                r = remote_option(&rm, c, optarg);
                if (r < 0)
                        goto finish;
                if (r > 0)
                        continue;
                switch (c) {
                case 'w':
                        params[1] = optarg;
                        break;
                case 'b':
                        params[3] = optarg;
                        break;
                case 's':
                        params[5] = optarg;
                        break;
                case 'T':
                        params[7] = optarg;
                        break;
                case 'P':
                        params[9] = optarg;
                        break;
                case 'n':
                        params[11] = optarg;
                        break;
                case 'f':
                        if (parse_rformat(optarg, &fmt) < 0)
                                goto finish;
                        break;
                case 'h':
                        fputs(costs_usage, stdout);
                        rc = GC_EXIT_OK;
                        goto finish;
                default:
                        cli_error("costs: unknown or incomplete flag \"%s\" (see --help)",
                                  argv[optind - 1]);
                        goto finish;
                }
        }
        if (optind < argc) {
                cli_error("costs: unexpected argument \"%s\"", argv[optind]);
                goto finish;
        }
        rc = remote_ready(&rm);
        if (rc == 0)
                rc = remote_get(&rm, "/api/v1/costs", params, 6, GC_CLIENT_MAX_BODY, &body);
        if (rc != 0)
                goto finish;
        rc = GC_EXIT_FAIL;
        if (fmt == RFMT_JSON)
                r = write_body(body.data, body.len);
        else if (render_costs(&body, fmt, &out) < 0)
                goto finish;
        else
                r = write_body(out.data, out.len);
        if (r < 0) {
                cli_error("cannot write the result: %s", strerror(-r));
                goto finish;
        }
        rc = GC_EXIT_OK;
finish:
        gc_buf_free(&body);
        gc_buf_free(&out);
        remote_done(&rm);
        return rc;
}

static const char report_usage[] =
    "Usage: gpu-cost report daily|weekly|monthly [ID|latest] --server URL [--format "
    "markdown|json]\n"
    "       gpu-cost report --period daily|weekly|monthly [ID|latest] ...\n"
    "\n"
    "A period report from a running controller's REST API (/api/v1/reports): the weekly report\n"
    "team leads read, a day's, or a calendar month's (with month-over-month change, a forecast\n"
    "while the month runs, and spend against budgets), at local midnight in the controller's\n"
    "report.timezone. ID is a date (2026-11-20), an ISO week (2026-w47) or a month (2026-11);\n"
    "latest (the default) is the newest complete period.\n"
    "\n"
    "  --period P         daily, weekly or monthly (instead of the first argument)\n"
    "  --format F         markdown (default) or json\n"
    "  --from-file F      a report's JSON saved before (report.json of a report ConfigMap,\n"
    "                     or --format json; - reads standard input) instead of the "
    "server\n" REMOTE_HELP "\n"
    "Sending the report now, to check a delivery set-up (docs/delivery.md): the report is\n"
    "rendered from its JSON and sent, and what was sent is printed instead of the report.\n"
    "  --send-test-email ADDR      one email (a plain-text and an HTML part) to ADDR\n"
    "  --smtp-server URL           smtp://HOST[:587] (STARTTLS) or smtps://HOST[:465] (env\n"
    "                              GPU_COST_SMTP_SERVER)\n"
    "  --smtp-from ADDR            the sender (env GPU_COST_SMTP_FROM)\n"
    "  --smtp-user U               log in as U (env GPU_COST_SMTP_USER)\n"
    "  --smtp-password-file F      its password from F (or env GPU_COST_SMTP_PASSWORD; never\n"
    "                              on the command line)\n"
    "  --smtp-auth M               any (default: what the server offers), plain or login\n"
    "  --smtp-starttls T           for smtp://: required (default), optional or none\n"
    "  --smtp-cacert F             CA certificates (PEM) to verify the server, or a webhook, with\n"
    "  --send-test-webhook URL     one chat message POSTed to URL\n"
    "  --webhook-format F          slack (Block Kit), teams (an Adaptive Card) or json; default\n"
    "                              from the URL's host (hooks.slack.com: slack, Power Automate:\n"
    "                              teams), else json\n"
    "  --webhook-secret-file F     sign the body with HMAC-SHA256 under the secret in F (or env\n"
    "                              GPU_COST_WEBHOOK_SECRET): header X-Gpu-Cost-Signature\n"
    "  --dashboard-url URL         the link to the dashboard the messages carry\n"
    "  --timeout D                 also bounds the sending\n";

/* The API path of the report the arguments name (KIND [ID]); -1 after saying why. */
static int report_path(int argc, char **argv, const char *kind, char *path, size_t len)
{
        const char *id = "latest";

        if (!kind)
                kind = optind < argc ? argv[optind++] : NULL;
        if (!kind || (strcmp(kind, "weekly") != 0 && strcmp(kind, "daily") != 0 &&
                      strcmp(kind, "monthly") != 0)) {
                cli_error("report: say daily, weekly or monthly (see --help)");
                return -1;
        }
        if (optind < argc)
                id = argv[optind++];
        if (optind < argc) {
                cli_error("report: unexpected argument \"%s\"", argv[optind]);
                return -1;
        }
        if (!*id || strpbrk(id, "/?#%") || strlen(id) > 64) {
                cli_error("report: \"%s\" is not a report ID (2026-11-20, 2026-w47, 2026-11, "
                          "latest)",
                          id);
                return -1;
        }
        snprintf(path, len, "/api/v1/reports/%s/%s", kind, id);
        return 0;
}

/* A report's JSON saved before: printed as it is, or sent. An exit status. */
static int report_from_file(const char *path, cli_send *snd, gc_buf *body)
{
        int r =
            gc_read_file(strcmp(path, "-") == 0 ? "/dev/stdin" : path, GC_DELIVER_MAX_JSON, body);

        if (r < 0) {
                cli_error("--from-file %s: cannot read: %s", path,
                          r == -E2BIG ? "larger than 8 MiB" : strerror(-r));
                return GC_EXIT_USAGE;
        }
        if (cli_send_wanted(snd))
                return cli_send_report(snd, body->data, body->len);
        return write_body(body->data, body->len) < 0 ? GC_EXIT_FAIL : GC_EXIT_OK;
}

int cmd_report(int argc, char **argv)
{
        static const struct option opts[] = {
            REMOTE_OPTIONS,
            {"format", required_argument, NULL, 'f'},
            {"period", required_argument, NULL, 'p'},
            {"from-file", required_argument, NULL, 'F'},
            {"help", no_argument, NULL, 'h'},
            CLI_SEND_OPTIONS,
            {NULL, 0, NULL, 0},
        };
        const char *params[2] = {"format", "md"};
        const char *kind = NULL, *from_file = NULL;
        char path[256];
        remote_format fmt = RFMT_MARKDOWN;
        gc_buf body;
        remote rm;
        cli_send snd;
        int c, r, rc = GC_EXIT_USAGE;

        remote_init(&rm);
        cli_send_init(&snd);
        gc_buf_init(&body, GC_CLIENT_MAX_BODY);
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                r = remote_option(&rm, c, optarg);
                if (r < 0)
                        goto finish;
                if (r == 0)
                        r = cli_send_option(&snd, c, optarg);
                if (r < 0)
                        goto finish;
                if (r > 0)
                        continue;
                switch (c) {
                case 'f':
                        if (parse_rformat(optarg, &fmt) < 0)
                                goto finish;
                        if (fmt == RFMT_TABLE) {
                                cli_error("--format: a report is markdown or json");
                                goto finish;
                        }
                        break;
                case 'p':
                        kind = optarg;
                        break;
                case 'F':
                        from_file = optarg;
                        break;
                case 'h':
                        fputs(report_usage, stdout);
                        rc = GC_EXIT_OK;
                        goto finish;
                default:
                        cli_error("report: unknown or incomplete flag \"%s\" (see --help)",
                                  argv[optind - 1]);
                        goto finish;
                }
        }
        rc = cli_send_check(&snd, rm.o.timeout_s);
        if (rc != 0)
                goto finish;
        rc = GC_EXIT_USAGE;
        if (from_file) {
                rc = optind < argc
                         ? (cli_error("report: --from-file takes no period (\"%s\")", argv[optind]),
                            GC_EXIT_USAGE)
                         : report_from_file(from_file, &snd, &body);
                goto finish;
        }
        if (report_path(argc, argv, kind, path, sizeof(path)) < 0)
                goto finish;
        params[1] = fmt == RFMT_JSON || cli_send_wanted(&snd) ? "json" : "md";
        rc = remote_ready(&rm);
        if (rc == 0)
                rc = remote_get(&rm, path, params, 1, GC_CLIENT_MAX_BODY, &body);
        if (rc != 0)
                goto finish;
        if (cli_send_wanted(&snd)) {
                rc = cli_send_report(&snd, body.data, body.len);
                goto finish;
        }
        r = write_body(body.data, body.len);
        if (r < 0) {
                cli_error("cannot write the result: %s", strerror(-r));
                rc = GC_EXIT_FAIL;
        }
finish:
        gc_buf_free(&body);
        cli_send_done(&snd);
        remote_done(&rm);
        return rc;
}

/* The findings as an aligned table, largest saving first (the server's order). */
static int render_findings(const gc_buf *body, gc_buf *out)
{
        char err[1024];
        int r = gc_client_findings_table(body->data, body->len, out, err, sizeof(err));

        if (r < 0)
                cli_error("%s", err);
        return r;
}

static const char recommendations_usage[] =
    "Usage: gpu-cost recommendations --server URL [--format table|json]\n"
    "\n"
    "The advisor's findings from a running controller's REST API (/api/v1/recommendations):\n"
    "idle or over-requested GPUs, MIG slices that fit, cheaper classes, unattributed spend,\n"
    "idle capacity, reservations, buy versus rent; each with its monthly saving and the change\n"
    "to make.\n"
    "\n"
    "  --format F         table (default) or json (the API's answer as is)\n" REMOTE_HELP;

int cmd_recommendations(int argc, char **argv)
{
        static const struct option opts[] = {
            REMOTE_OPTIONS,
            {"format", required_argument, NULL, 'f'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        remote_format fmt = RFMT_TABLE;
        gc_buf body, out;
        remote rm;
        int c, r, rc = GC_EXIT_USAGE;

        remote_init(&rm);
        gc_buf_init(&body, GC_CLIENT_MAX_BODY);
        gc_buf_init(&out, GC_CLIENT_MAX_BODY * 2);
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                r = remote_option(&rm, c, optarg);
                if (r < 0)
                        goto finish;
                if (r > 0)
                        continue;
                switch (c) {
                case 'f':
                        if (parse_rformat(optarg, &fmt) < 0)
                                goto finish;
                        if (fmt == RFMT_MARKDOWN) {
                                cli_error("--format: recommendations are table or json");
                                goto finish;
                        }
                        break;
                case 'h':
                        fputs(recommendations_usage, stdout);
                        rc = GC_EXIT_OK;
                        goto finish;
                default:
                        cli_error("recommendations: unknown or incomplete flag \"%s\" (see "
                                  "--help)",
                                  argv[optind - 1]);
                        goto finish;
                }
        }
        if (optind < argc) {
                cli_error("recommendations: unexpected argument \"%s\"", argv[optind]);
                goto finish;
        }
        rc = remote_ready(&rm);
        if (rc == 0)
                rc = remote_get(&rm, "/api/v1/recommendations", NULL, 0, GC_CLIENT_MAX_BODY, &body);
        if (rc != 0)
                goto finish;
        rc = GC_EXIT_FAIL;
        if (fmt == RFMT_JSON)
                r = write_body(body.data, body.len);
        else if (render_findings(&body, &out) < 0)
                goto finish;
        else
                r = write_body(out.data, out.len);
        if (r < 0) {
                cli_error("cannot write the result: %s", strerror(-r));
                goto finish;
        }
        rc = GC_EXIT_OK;
finish:
        gc_buf_free(&body);
        gc_buf_free(&out);
        remote_done(&rm);
        return rc;
}

/* ---- health ----------------------------------------------------------------------------- */

static const char health_usage[] =
    "Usage: gpu-cost health --server URL\n"
    "\n"
    "Asks a running controller whether it is alive (/healthz) and serving current figures\n"
    "(/readyz), as the kubelet's probes do; prints each answer and exits 0 only when both are\n"
    "200. A standby replica (it does not hold the lease) and a controller that has not synced\n"
    "yet answer 503 on /readyz. `helm test` runs it from the controller's image.\n"
    "\n" REMOTE_HELP;

int cmd_health(int argc, char **argv)
{
        static const struct option opts[] = {
            REMOTE_OPTIONS,
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        static const char *const paths[] = {"/healthz", "/readyz"};
        gc_buf body;
        remote rm;
        int c, r, rc = GC_EXIT_USAGE;

        remote_init(&rm);
        gc_buf_init(&body, REMOTE_PROBE_MAX_BODY);
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                r = remote_option(&rm, c, optarg);
                if (r < 0)
                        goto finish;
                if (r > 0)
                        continue;
                if (c == 'h') {
                        fputs(health_usage, stdout);
                        rc = GC_EXIT_OK;
                        goto finish;
                }
                cli_error("health: unknown or incomplete flag \"%s\" (see --help)",
                          argv[optind - 1]);
                goto finish;
        }
        if (optind < argc) {
                cli_error("health: unexpected argument \"%s\"", argv[optind]);
                goto finish;
        }
        rc = remote_ready(&rm);
        for (size_t i = 0; rc == 0 && i < sizeof(paths) / sizeof(paths[0]); i++) {
                gc_buf_reset(&body);
                rc = remote_get(&rm, paths[i], NULL, 0, REMOTE_PROBE_MAX_BODY, &body);
                if (rc != 0) {
                        cli_error("%s is not healthy: %s did not answer 200", rm.o.server,
                                  paths[i]);
                        rc = GC_EXIT_FAIL;
                        break;
                }
                /* The probes answer a short text; its first line (200 bytes at most) is shown. */
                const char *text = body.data ? body.data : "";
                size_t n = strcspn(text, "\r\n");

                printf("%s: 200 %.*s\n", paths[i], (int)(n > 200 ? 200 : n), text);
        }
finish:
        gc_buf_free(&body);
        remote_done(&rm);
        return rc;
}

/* ---- export ----------------------------------------------------------------------------- */

int cmd_export_remote(int argc, char **argv)
{
        static const struct option opts[] = {
            REMOTE_OPTIONS,
            {"window", required_argument, NULL, 'w'},
            {"format", required_argument, NULL, 'F'},
            {"granularity", required_argument, NULL, 'g'},
            {"focus-version", required_argument, NULL, 'V'},
            {"share-idle", required_argument, NULL, 'S'},
            {"basis", required_argument, NULL, 'B'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        const char *params[REMOTE_MAX_PARAMS * 2] = {
            "window", "lastmonth",  "granularity", NULL,    "focus_version",
            NULL,     "share_idle", NULL,          "basis", NULL};
        cli_export_flags f = {.format = GC_EXPORT_FOCUS};
        gc_buf body;
        remote rm;
        int c, r, rc = GC_EXIT_USAGE;

        remote_init(&rm);
        gc_buf_init(&body, GC_CLIENT_MAX_BODY);
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                r = remote_option(&rm, c, optarg);
                if (r < 0)
                        goto finish;
                if (r > 0)
                        continue;
                switch (c) {
                case 'w':
                        params[1] = optarg;
                        break;
                case 'B':
                        params[9] = optarg; /* the controller checks it */
                        break;
                case 'h':
                        rc = cmd_export(2, (char *[]){"export", "--help", NULL});
                        goto finish;
                case 'F':
                case 'g':
                case 'V':
                case 'S':
                        if (cli_export_flag(c, optarg, &f) != 0)
                                goto finish;
                        break;
                default:
                        cli_error("export: unknown or incomplete flag \"%s\" (see --help)",
                                  argv[optind - 1]);
                        goto finish;
                }
        }
        if (optind < argc) {
                cli_error("export: unexpected argument \"%s\"", argv[optind]);
                goto finish;
        }
        if (f.focus_version_s && f.format != GC_EXPORT_FOCUS) {
                cli_error("--focus-version: only with --format focus");
                goto finish;
        }
        params[3] = f.granularity_s;
        params[5] = f.focus_version_s;
        params[7] = f.share_s;
        rc = remote_ready(&rm);
        if (rc == 0)
                rc = remote_get(
                    &rm, f.format == GC_EXPORT_CSV ? "/api/v1/export/csv" : "/api/v1/export/focus",
                    params, 5, GC_CLIENT_MAX_BODY, &body);
        if (rc != 0)
                goto finish;
        rc = GC_EXIT_FAIL;
        r = body.len && fwrite(body.data, 1, body.len, stdout) != body.len ? -EIO : 0;
        if (r == 0 && fflush(stdout) != 0)
                r = -EIO;
        if (r < 0) {
                cli_error("cannot write the result: %s", strerror(-r));
                goto finish;
        }
        rc = GC_EXIT_OK;
finish:
        gc_buf_free(&body);
        remote_done(&rm);
        return rc;
}
