/* analyze, demo: cost of cluster dumps (files, or the embedded example cluster) over a window. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account/account.h"
#include "dump/dump.h"
#include "cli.h"
#include "config/config.h"
#include "embedded.h"
#include "export/export.h"
#include "ledger/ledger.h"
#include "model/model.h"
#include "price/price.h"
#include "report/report.h"

typedef enum { FMT_TABLE, FMT_JSON, FMT_MARKDOWN } out_format;

#define CLI_MAX_METRICS 1024 /* --metrics files in one run */

/* Everything one analysis holds; released by gc_dump_release(). */
typedef gc_dump analysis;

/* An input: a file's bytes, or an embedded file's. */
typedef struct input {
        const char *name; /* for messages: the path or "embedded examples/x.json" */
        const char *data;
        size_t len;
        gc_buf owned;
} input;

static int input_read(input *in, const char *path)
{
        int r;

        memset(in, 0, sizeof(*in));
        in->name = path;
        r = gc_read_file(strcmp(path, "-") == 0 ? "/dev/stdin" : path, GC_CLI_MAX_INPUT,
                         &in->owned);
        if (r < 0) {
                if (r == -E2BIG)
                        cli_error("%s: larger than %zu MiB", path, GC_CLI_MAX_INPUT >> 20);
                else
                        cli_error("%s: cannot read: %s", path, strerror(-r));
                return r;
        }
        in->data = in->owned.data;
        in->len = in->owned.len;
        return 0;
}

static int input_embedded(input *in, const char *name)
{
        memset(in, 0, sizeof(*in));
        for (const gc_embedded_file *f = gc_embedded_files; f->name; f++) {
                if (strcmp(f->name, name) == 0) {
                        in->name = f->name;
                        in->data = f->data;
                        in->len = f->len;
                        return 0;
                }
        }
        cli_error("embedded example %s is missing from this build", name);
        return -ENOENT;
}

static void input_done(input *in)
{
        gc_buf_free(&in->owned);
}

static void input_dump(const input *in, gc_dump_input *ret)
{
        ret->name = in->name;
        ret->data = in->data;
        ret->len = in->len;
}

/* Label keys the dumps' ledger keeps beside the configuration's: those --by names. */
typedef struct label_words {
        char key[GC_LABEL_DIMS][GC_LABEL_KEY_MAX + 1];
        const char *ptr[GC_LABEL_DIMS];
        size_t n;
} label_words;

/*
 * The label:<key> words of a --by list (any key: a dump has every pod's labels), so the ledger
 * keeps them; gc_dims_parse checks the list itself afterwards.
 */
static int label_words_of(const char *csv, label_words *ret)
{
        memset(ret, 0, sizeof(*ret));
        for (const char *p = csv; p && *p;) {
                const char *end = strchr(p, ',');
                size_t len = end ? (size_t)(end - p) : strlen(p), klen;
                const char *w = p, *key;

                while (len && (*w == ' ' || *w == '\t')) {
                        w++;
                        len--;
                }
                while (len && (w[len - 1] == ' ' || w[len - 1] == '\t'))
                        len--;
                if (gc_dim_is_label(w, len, &key, &klen)) {
                        if (klen == 0 || klen > GC_LABEL_KEY_MAX) {
                                cli_error("--by: \"%.*s\" names no label key",
                                          len > 64 ? 64 : (int)len, w);
                                return -EINVAL;
                        }
                        if (ret->n == GC_LABEL_DIMS) {
                                cli_error("--by: at most %d label dimensions", GC_LABEL_DIMS);
                                return -E2BIG;
                        }
                        memcpy(ret->key[ret->n], key, klen);
                        ret->key[ret->n][klen] = '\0';
                        ret->ptr[ret->n] = ret->key[ret->n];
                        ret->n++;
                }
                p = end ? end + 1 : NULL;
        }
        return 0;
}

/* lw: label keys to keep beside the configuration's (NULL: none). */
static int analysis_start(analysis *a, const input *config, const input *prices,
                          const label_words *lw)
{
        gc_dump_input c, p;
        char err[640];
        int r;

        if (config)
                input_dump(config, &c);
        if (prices)
                input_dump(prices, &p);
        r = gc_dump_start_labels(a, config ? &c : NULL, prices ? &p : NULL, lw ? lw->ptr : NULL,
                                 lw ? lw->n : 0, err, sizeof(err));
        if (r < 0)
                cli_error("%s", err);
        return r;
}

/* Decodes the dumps and feeds them to the accountant: nodes and namespaces first. */
static int analysis_load(analysis *a, const input *pods, const input *nodes, const input *nss)
{
        gc_dump_input p, n, s;
        char err[640];
        int r;

        input_dump(pods, &p);
        input_dump(nodes, &n);
        if (nss)
                input_dump(nss, &s);
        r = gc_dump_load(a, &p, &n, nss ? &s : NULL, err, sizeof(err));
        if (r < 0)
                cli_error("%s", err);
        return r;
}

/* The DRA dumps: slices' GPU devices and the claims holding them, before the pods. */
static int analysis_load_dra(analysis *a, const input *claims, const input *slices)
{
        gc_dump_input c, s;
        char err[640];
        int r;

        if (claims)
                input_dump(claims, &c);
        if (slices)
                input_dump(slices, &s);
        r = gc_dump_load_dra(a, claims ? &c : NULL, slices ? &s : NULL, err, sizeof(err));
        if (r < 0)
                cli_error("%s", err);
        return r;
}

/* The pods' owners, for the workload dimension, before the pods. */
static int analysis_load_owners(analysis *a, const input *replicasets, const input *jobs)
{
        gc_dump_input rs, j;
        char err[640];
        int r;

        if (replicasets)
                input_dump(replicasets, &rs);
        if (jobs)
                input_dump(jobs, &j);
        r = gc_dump_load_owners(a, replicasets ? &rs : NULL, jobs ? &j : NULL, err, sizeof(err));
        if (r < 0)
                cli_error("%s", err);
        return r;
}

static void analysis_print_warnings(const analysis *a)
{
        for (size_t i = 0; i < a->diag.n_kept; i++)
                cli_warn("%s", a->diag.msgs[i]);
        if (a->diag.n_total > a->diag.n_kept)
                cli_warn("%zu more warnings not shown", a->diag.n_total - a->diag.n_kept);
}

static int parse_window(const char *s, int64_t *ret_start, int64_t *ret_end)
{
        const char *comma = s ? strchr(s, ',') : NULL;
        int64_t start, end;

        if (!comma) {
                cli_error("--window: expected START,END as RFC 3339 times "
                          "(2026-11-16T00:00:00Z,2026-11-23T00:00:00Z), got \"%s\"",
                          s ? s : "");
                return -EINVAL;
        }
        if (gc_time_parse(s, (size_t)(comma - s), &start) < 0) {
                cli_error("--window: START \"%.*s\" is not an RFC 3339 time", (int)(comma - s), s);
                return -EINVAL;
        }
        if (gc_time_parse(comma + 1, strlen(comma + 1), &end) < 0) {
                cli_error("--window: END \"%s\" is not an RFC 3339 time", comma + 1);
                return -EINVAL;
        }
        if (end <= start) {
                cli_error("--window: END must be after START");
                return -EINVAL;
        }
        *ret_start = start;
        *ret_end = end;
        return 0;
}

static int parse_format(const char *s, int allow_table, out_format *ret)
{
        if (allow_table && strcmp(s, "table") == 0)
                *ret = FMT_TABLE;
        else if (strcmp(s, "json") == 0)
                *ret = FMT_JSON;
        else if (strcmp(s, "markdown") == 0 || strcmp(s, "md") == 0)
                *ret = FMT_MARKDOWN;
        else {
                cli_error("--format: must be %s, got \"%s\"",
                          allow_table ? "table, json or markdown" : "markdown or json", s);
                return -EINVAL;
        }
        return 0;
}

static int write_out(const gc_buf *b)
{
        if (b->len && fwrite(b->data, 1, b->len, stdout) != b->len)
                return -EIO;
        if (b->len && b->data[b->len - 1] != '\n')
                fputc('\n', stdout);
        return fflush(stdout) == 0 ? 0 : -EIO;
}

static const char analyze_usage[] =
    "Usage: gpu-cost analyze --pods FILE --nodes FILE [--namespaces FILE] [--prices FILE]\n"
    "                        [--claims FILE] [--slices FILE]\n"
    "                        [--replicasets FILE] [--jobs FILE]\n"
    "                        [--config FILE] --window START,END [--by DIMS]\n"
    "                        [--format table|json|markdown]\n"
    "                        [--metrics FILE]... [--now TIME] [--scrape-interval DURATION]\n"
    "                        [--basis allocation|usage]\n"
    "\n"
    "Cost of the GPUs held by the pods of `kubectl get pods -A -o json` (FILE, or - for\n"
    "standard input) over the window [START, END), RFC 3339 times. Pods still running\n"
    "accrue up to END. Nodes come from `kubectl get nodes -o json`, namespace labels from\n"
    "`kubectl get namespaces -o json`.\n"
    "\n"
    "  --pods FILE        pod list (required)\n"
    "  --nodes FILE       node list (required): GPU model, MIG and sharing, capacity type\n"
    "  --namespaces FILE  namespace list: team/project labels on namespaces\n"
    "  --claims FILE      `kubectl get resourceclaims -A -o json`: GPUs of pods on DRA claims\n"
    "  --slices FILE      `kubectl get resourceslices -o json`: the DRA nodes' GPU devices\n"
    "                     (one `kubectl get resourceclaims,resourceslices -A -o json` file\n"
    "                     may be given to both)\n"
    "  --replicasets FILE `kubectl get replicasets -A -o json`: Deployments of pods (workload)\n"
    "  --jobs FILE        `kubectl get jobs -A -o json`: CronJobs and other owners of Jobs\n"
    "                     (without them, workloads resolve by names and labels:\n"
    "                     docs/workloads.md)\n"
    "  --prices FILE      price catalog JSON (replaces the configured or built-in one)\n"
    "  --config FILE      configuration JSON (label keys, namespace map, node rules, ...)\n"
    "  --window S,E       the window, e.g. 2026-11-16T00:00:00Z,2026-11-23T00:00:00Z\n"
    "  --by DIMS          grouping: namespace, team, project, model, capacity_type, node, pod,\n"
    "                     workload, label:KEY (a pod label, else its namespace's; pods with\n"
    "                     neither read __unlabelled__; at most 4 label keys)\n"
    "                     (comma-separated; default team,project)\n"
    "  --format F         table (default), json or markdown\n"
    "  --metrics FILE     a saved dcgm-exporter /metrics body (repeatable): adds the Savings\n"
    "                     section (JSON: a \"savings\" member), the advisor's findings over the\n"
    "                     window. Samples with timestamps (ms) form a series; a file without\n"
    "                     them is one scrape taken at --now, else at the file's mtime\n"
    "  --now TIME         RFC 3339: when untimestamped scrapes were taken, and the advisor's\n"
    "                     present (default: END)\n"
    "  --scrape-interval D  what one reading stands for (e.g. 30s); default: a series' own\n"
    "                     spacing, else usage.dcgm.interval_seconds or 30s\n"
    "  --basis B          allocation (default): what each pod was allocated; usage: shared\n"
    "                     GPUs (time-sliced, MPS, HAMi, shared DRA devices) split by the\n"
    "                     per-pod use in --metrics (docs/ledger.md); the same totals\n"
    "\n"
    "Exit status: 0 on success, 2 on bad input (the message names the file and field).\n";

int cmd_analyze(int argc, char **argv)
{
        static const struct option opts[] = {
            {"pods", required_argument, NULL, 'p'},
            {"nodes", required_argument, NULL, 'n'},
            {"namespaces", required_argument, NULL, 's'},
            {"claims", required_argument, NULL, 'C'},
            {"slices", required_argument, NULL, 'S'},
            {"replicasets", required_argument, NULL, 'R'},
            {"jobs", required_argument, NULL, 'J'},
            {"prices", required_argument, NULL, 'P'},
            {"config", required_argument, NULL, 'c'},
            {"window", required_argument, NULL, 'w'},
            {"by", required_argument, NULL, 'b'},
            {"format", required_argument, NULL, 'f'},
            {"metrics", required_argument, NULL, 'm'},
            {"now", required_argument, NULL, 'N'},
            {"scrape-interval", required_argument, NULL, 'I'},
            {"basis", required_argument, NULL, 'B'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        const char *metrics_paths[CLI_MAX_METRICS];
        size_t n_metrics = 0;
        int64_t scrape_at = 0, interval_s = 0;
        const char *pods_path = NULL, *nodes_path = NULL, *ns_path = NULL, *prices_path = NULL;
        const char *config_path = NULL, *window = NULL, *by = "team,project";
        const char *claims_path = NULL, *slices_path = NULL, *rs_path = NULL, *jobs_path = NULL;
        out_format fmt = FMT_TABLE;
        input pods, nodes, nss, config, prices, claims, slices, rss, jobs;
        cli_metrics_file metrics[CLI_MAX_METRICS];
        gc_buf metrics_owned[CLI_MAX_METRICS];
        analysis a;
        gc_query q;
        gc_cost_summary sum;
        gc_label_keys lk;
        label_words lw;
        gc_gpuuse *store = NULL;
        gc_buf out;
        char err[640];
        int c, r, rc = GC_EXIT_USAGE;

        memset(&pods, 0, sizeof(pods));
        nodes = nss = config = prices = claims = slices = rss = jobs = pods;
        memset(metrics_owned, 0, sizeof(metrics_owned));
        memset(&a, 0, sizeof(a));
        memset(&sum, 0, sizeof(sum));
        memset(&q, 0, sizeof(q));
        gc_buf_init(&out, (size_t)1 << 30);
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'p':
                        pods_path = optarg;
                        break;
                case 'n':
                        nodes_path = optarg;
                        break;
                case 's':
                        ns_path = optarg;
                        break;
                case 'C':
                        claims_path = optarg;
                        break;
                case 'S':
                        slices_path = optarg;
                        break;
                case 'R':
                        rs_path = optarg;
                        break;
                case 'J':
                        jobs_path = optarg;
                        break;
                case 'P':
                        prices_path = optarg;
                        break;
                case 'c':
                        config_path = optarg;
                        break;
                case 'w':
                        window = optarg;
                        break;
                case 'b':
                        by = optarg;
                        break;
                case 'f':
                        if (parse_format(optarg, 1, &fmt) < 0)
                                goto finish;
                        break;
                case 'm':
                        if (n_metrics == CLI_MAX_METRICS) {
                                cli_error("--metrics: at most %d files", CLI_MAX_METRICS);
                                goto finish;
                        }
                        metrics_paths[n_metrics++] = optarg;
                        break;
                case 'N':
                        if (gc_time_parse(optarg, strlen(optarg), &scrape_at) < 0) {
                                cli_error("--now: \"%s\" is not an RFC 3339 time", optarg);
                                goto finish;
                        }
                        break;
                case 'I':
                        if (gc_duration_parse(optarg, &interval_s) < 0 || interval_s <= 0 ||
                            interval_s > 86400) {
                                cli_error("--scrape-interval: \"%s\" is not a duration from 1s "
                                          "to 24h",
                                          optarg);
                                goto finish;
                        }
                        break;
                case 'B':
                        if (gc_basis_parse(optarg, strlen(optarg), &q.basis) < 0) {
                                cli_error("--basis: \"%s\" is neither allocation nor usage",
                                          optarg);
                                goto finish;
                        }
                        break;
                case 'h':
                        fputs(analyze_usage, stdout);
                        rc = GC_EXIT_OK;
                        goto finish;
                default:
                        cli_error("analyze: unknown or incomplete flag \"%s\" (see --help)",
                                  argv[optind - 1]);
                        goto finish;
                }
        }
        if (optind < argc) {
                cli_error("analyze: unexpected argument \"%s\"", argv[optind]);
                goto finish;
        }
        if (!pods_path || !nodes_path || !window) {
                cli_error("analyze: --pods, --nodes and --window are required (see --help)");
                goto finish;
        }
        if (parse_window(window, &q.start, &q.end) < 0)
                goto finish;
        /* The words are checked before any file is read: the label keys are kept if asked. */
        if (label_words_of(by, &lw) < 0)
                goto finish;
        lk.n = lw.n;
        memcpy(lk.key, lw.ptr, sizeof(lk.key));
        if (gc_dims_parse(by, &lk, q.by, &q.n_by, err, sizeof(err)) < 0) {
                cli_error("--by: %s", err);
                goto finish;
        }
        q.now = q.end;
        if (scrape_at && n_metrics == 0) {
                cli_error("--now: only with --metrics");
                goto finish;
        }
        for (size_t i = 0; i < n_metrics; i++)
                if (cli_metrics_read(metrics_paths[i], &metrics[i], &metrics_owned[i]) < 0)
                        goto finish;
        if (input_read(&pods, pods_path) < 0 || input_read(&nodes, nodes_path) < 0 ||
            (ns_path && input_read(&nss, ns_path) < 0) ||
            (claims_path && input_read(&claims, claims_path) < 0) ||
            (slices_path && input_read(&slices, slices_path) < 0) ||
            (rs_path && input_read(&rss, rs_path) < 0) ||
            (jobs_path && input_read(&jobs, jobs_path) < 0) ||
            (config_path && input_read(&config, config_path) < 0) ||
            (prices_path && input_read(&prices, prices_path) < 0))
                goto finish;
        r = analysis_start(&a, config_path ? &config : NULL, prices_path ? &prices : NULL, &lw);
        if (r < 0) {
                rc = r == -ENOMEM ? GC_EXIT_FAIL : GC_EXIT_USAGE;
                goto finish;
        }
        /* Again, in the ledger's slots (the configuration's labels.dimensions come first). */
        gc_ledger_label_keys(a.ledger, &lk);
        if (gc_dims_parse(by, &lk, q.by, &q.n_by, err, sizeof(err)) < 0) {
                cli_error("--by: %s", err);
                goto finish;
        }
        r = 0;
        if (claims_path || slices_path)
                r = analysis_load_dra(&a, claims_path ? &claims : NULL,
                                      slices_path ? &slices : NULL);
        if (r == 0 && (rs_path || jobs_path))
                r = analysis_load_owners(&a, rs_path ? &rss : NULL, jobs_path ? &jobs : NULL);
        if (r == 0)
                r = analysis_load(&a, &pods, &nodes, ns_path ? &nss : NULL);
        analysis_print_warnings(&a);
        if (r < 0) {
                rc = r == -ENOMEM ? GC_EXIT_FAIL : GC_EXIT_USAGE;
                goto finish;
        }
        rc = GC_EXIT_FAIL;
        /* Measured use first: shared GPUs' per-pod use goes into the usage basis. */
        if (n_metrics &&
            cli_metrics_ingest(&a, metrics, n_metrics, scrape_at, interval_s, &store) < 0)
                goto finish;
        r = gc_ledger_query(a.ledger, &q, &sum);
        if (r < 0) {
                cli_error("query failed: %s", strerror(-r));
                goto finish;
        }
        if (fmt == FMT_JSON)
                r = gc_report_summary_json(&sum, a.cfg->catalog->currency, &out);
        else if (fmt == FMT_MARKDOWN)
                r = gc_report_summary_markdown(&sum, a.cfg->catalog->currency, &out);
        else
                r = gc_report_summary_table(&sum, a.cfg->catalog->currency, &out);
        if (r == 0 && n_metrics) {
                gc_buf sv;

                /* The summary's members, then "savings"; or the Savings section after it. */
                gc_buf_init(&sv, (size_t)1 << 30);
                r = cli_metrics_savings(&a, store, q.start, q.end, scrape_at ? scrape_at : q.end,
                                        fmt == FMT_JSON ? NULL : &sv, fmt == FMT_JSON ? &sv : NULL);
                if (r == 0 && fmt == FMT_JSON && out.len && out.data[out.len - 1] == '}') {
                        out.data[--out.len] = '\0';
                        r = gc_buf_puts(&out, ",\"savings\":");
                        if (r == 0)
                                r = gc_buf_append(&out, sv.data, sv.len);
                        if (r == 0)
                                r = gc_buf_puts(&out, "}");
                } else if (r == 0) {
                        r = gc_buf_puts(&out, "\n");
                        if (r == 0)
                                r = gc_buf_append(&out, sv.data, sv.len);
                }
                gc_buf_free(&sv);
        }
        if (r == 0)
                r = write_out(&out);
        if (r < 0) {
                cli_error("cannot write the result: %s", strerror(-r));
                goto finish;
        }
        rc = GC_EXIT_OK;
finish:
        gc_gpuuse_free(store);
        gc_cost_summary_free(&sum);
        gc_buf_free(&out);
        gc_dump_release(&a);
        input_done(&pods);
        input_done(&nodes);
        input_done(&nss);
        input_done(&claims);
        input_done(&slices);
        input_done(&rss);
        input_done(&jobs);
        input_done(&config);
        input_done(&prices);
        for (size_t i = 0; i < CLI_MAX_METRICS; i++)
                gc_buf_free(&metrics_owned[i]);
        return rc;
}

static const char demo_usage[] =
    "Usage: gpu-cost demo [--format markdown|json] [--share-idle none|proportional]\n"
    "\n"
    "Prints the weekly GPU spend report of a bundled example cluster (H100 nodes with MIG,\n"
    "time-sliced T4s, spot and on-demand A100s, an on-premises node; five teams), as a team\n"
    "lead would read it. Needs no cluster and no files: the example is built in. The same\n"
    "files are in examples/ for `gpu-cost analyze`. --share-idle proportional adds the\n"
    "Chargeback section: each team's share of idle and unattributed cost, and its bill.\n";

/* Reads "now" and "window" from the embedded demo.json. */
static int demo_settings(const input *in, int64_t *ret_now, int64_t *ret_start, int64_t *ret_end)
{
        char err[256];
        int r =
            gc_dump_demo_settings(in->data, in->len, ret_now, ret_start, ret_end, err, sizeof(err));

        if (r < 0)
                cli_error("embedded demo.json: %s", err);
        return r;
}

int cmd_demo(int argc, char **argv)
{
        static const struct option opts[] = {
            {"format", required_argument, NULL, 'f'},
            {"share-idle", required_argument, NULL, 'S'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        out_format fmt = FMT_MARKDOWN;
        input pods, nodes, nss, config, settings, metrics;
        cli_metrics_file mf;
        gc_gpuuse *store = NULL;
        gc_buf sv_md, sv_json;
        gc_period_report rep;
        gc_chargeback cb = {GC_CHARGEBACK_NONE, NULL, 0, GC_BASIS_ALLOCATION};
        int64_t now = 0;
        const char *notes[1];
        analysis a;
        gc_buf out;
        int c, r, rc = GC_EXIT_USAGE;

        memset(&a, 0, sizeof(a));
        memset(&rep, 0, sizeof(rep));
        gc_buf_init(&out, (size_t)64 << 20);
        gc_buf_init(&sv_md, (size_t)16 << 20);
        gc_buf_init(&sv_json, (size_t)16 << 20);
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'f':
                        if (parse_format(optarg, 0, &fmt) < 0)
                                goto finish;
                        break;
                case 'S':
                        if (gc_chargeback_mode_parse(optarg, &cb.mode) < 0 ||
                            cb.mode == GC_CHARGEBACK_WEIGHTS) {
                                cli_error("--share-idle: must be none or proportional (the "
                                          "example configures no weights), got \"%s\"",
                                          optarg);
                                goto finish;
                        }
                        break;
                case 'h':
                        fputs(demo_usage, stdout);
                        rc = GC_EXIT_OK;
                        goto finish;
                default:
                        cli_error("demo: unknown or incomplete flag \"%s\" (see --help)",
                                  argv[optind - 1]);
                        goto finish;
                }
        }
        if (optind < argc) {
                cli_error("demo: unexpected argument \"%s\"", argv[optind]);
                goto finish;
        }
        rc = GC_EXIT_FAIL;
        if (input_embedded(&pods, "pods.json") < 0 || input_embedded(&nodes, "nodes.json") < 0 ||
            input_embedded(&nss, "namespaces.json") < 0 ||
            input_embedded(&config, "config.json") < 0 ||
            input_embedded(&settings, "demo.json") < 0 ||
            demo_settings(&settings, &now, &rep.start, &rep.end) < 0)
                goto finish;
        if (analysis_start(&a, &config, NULL, NULL) < 0 ||
            analysis_load(&a, &pods, &nodes, &nss) < 0)
                goto finish;
        rep.ledger = a.ledger;
        rep.kind = "weekly";
        rep.cluster = a.cfg->cluster;
        rep.currency = a.cfg->catalog->currency;
        rep.now = now;
        rep.top_n = a.cfg->top_n;
        rep.notes = &a.diag;
        notes[0] = "This is the bundled example cluster (examples/): run `gpu-cost analyze` on "
                   "your own `kubectl get -o json` dumps, or install the controller.";
        rep.extra_notes = notes;
        rep.n_extra_notes = 1;
        /* The example's dcgm-exporter series: the Savings section. */
        if (input_embedded(&metrics, "metrics.prom") < 0)
                goto finish;
        mf.name = "examples/metrics.prom";
        mf.data = metrics.data;
        mf.len = metrics.len;
        mf.mtime = now;
        if (cli_metrics_ingest(&a, &mf, 1, now, 0, &store) < 0 ||
            cli_metrics_savings(&a, store, rep.start, rep.end, now, &sv_md, &sv_json) < 0)
                goto finish;
        rep.savings_markdown = sv_md.data;
        rep.savings_json = sv_json.data;
        rep.chargeback = &cb;
        r = fmt == FMT_JSON ? gc_report_period_json(&rep, &out)
                            : gc_report_period_markdown(&rep, &out);
        if (r == 0)
                r = write_out(&out);
        if (r < 0) {
                cli_error("cannot write the report: %s", strerror(-r));
                goto finish;
        }
        rc = GC_EXIT_OK;
finish:
        gc_gpuuse_free(store);
        gc_buf_free(&out);
        gc_buf_free(&sv_md);
        gc_buf_free(&sv_json);
        gc_dump_release(&a);
        return rc;
}

/* ---- export ----------------------------------------------------------------------------- */

static int export_write(void *ud, const char *data, size_t n)
{
        (void)ud;
        return fwrite(data, 1, n, stdout) == n ? 0 : -EIO;
}

/* The flags offline and remote export share; an exit status or 0. */
int cli_export_flag(int c, const char *arg, cli_export_flags *f)
{
        switch (c) {
        case 'F':
                if (gc_export_format_parse(arg, &f->format) < 0) {
                        cli_error("--format: must be focus or csv, got \"%s\"", arg);
                        return GC_EXIT_USAGE;
                }
                f->format_s = arg;
                return 0;
        case 'g':
                if (gc_export_granularity_parse(arg, &f->granularity) < 0) {
                        cli_error("--granularity: must be daily or hourly, got \"%s\"", arg);
                        return GC_EXIT_USAGE;
                }
                f->granularity_s = arg;
                return 0;
        case 'V':
                if (gc_export_focus_version_parse(arg, &f->focus_minor) < 0) {
                        cli_error("--focus-version: must be 1.2, 1.3 or 1.4, got \"%s\"", arg);
                        return GC_EXIT_USAGE;
                }
                f->focus_version_s = arg;
                return 0;
        case 'S':
                if (gc_chargeback_mode_parse(arg, &f->share) < 0) {
                        cli_error("--share-idle: must be none, proportional or weights, got "
                                  "\"%s\"",
                                  arg);
                        return GC_EXIT_USAGE;
                }
                f->share_s = arg;
                return 0;
        default:
                return -1;
        }
}

static const char export_usage[] =
    "Usage: gpu-cost export --pods FILE --nodes FILE [--namespaces FILE] [--prices FILE]\n"
    "                       [--config FILE] --window START,END [--format focus|csv]\n"
    "                       [--focus-version 1.2|1.3|1.4] [--granularity daily|hourly]\n"
    "                       [--share-idle none|proportional|weights]\n"
    "                       [--metrics FILE]... [--basis allocation|usage]\n"
    "       gpu-cost export --server URL [--window W] [same flags but --metrics]\n"
    "\n"
    "GPU cost as CSV rows a FinOps tool or a spreadsheet reads, written to standard output as\n"
    "they are made: one row per charge period (UTC day or hour) x node x (namespace, team,\n"
    "project), one per period x node for idle capacity, and with chargeback one per period x\n"
    "node x team for its share of idle and unattributed cost (docs/export.md). Offline from\n"
    "`kubectl get -o json` dumps (as analyze), or from a controller with --server.\n"
    "\n"
    "  --metrics FILE     saved dcgm-exporter or HAMi /metrics bodies (repeatable): per-pod use\n"
    "                     of shared GPUs, for --basis usage\n"
    "  --basis B          allocation (default), or usage: shared GPUs split by measured use\n"
    "                     (docs/ledger.md); FOCUS 1.3 names it in AllocatedMethodId\n"
    "  --format F         focus (default): the FOCUS cost and usage dataset; csv: plain\n"
    "  --focus-version V  1.3 (default; split-allocation columns), 1.4 or 1.2\n"
    "  --granularity G    daily (default) or hourly charge periods, in UTC\n"
    "  --share-idle M     none, proportional or weights (default: the configuration's\n"
    "                     chargeback.mode, else none); weights come from chargeback.weights\n"
    "  --window W         offline: START,END as RFC 3339 times; remote: any API window\n"
    "                     (lastmonth, 7d, START,END, ...; default lastmonth)\n"
    "  --pods, --nodes, --namespaces, --prices, --config  as for analyze\n"
    "Remote flags:\n" CLI_REMOTE_HELP_SHORT "\n"
    "Exit status: 0 on success, 2 on bad input (the message names the flag or file).\n";

int cmd_export(int argc, char **argv)
{
        static const struct option opts[] = {
            {"pods", required_argument, NULL, 'p'},
            {"nodes", required_argument, NULL, 'n'},
            {"namespaces", required_argument, NULL, 's'},
            {"prices", required_argument, NULL, 'P'},
            {"config", required_argument, NULL, 'c'},
            {"window", required_argument, NULL, 'w'},
            {"format", required_argument, NULL, 'F'},
            {"granularity", required_argument, NULL, 'g'},
            {"focus-version", required_argument, NULL, 'V'},
            {"share-idle", required_argument, NULL, 'S'},
            {"basis", required_argument, NULL, 'B'},
            {"metrics", required_argument, NULL, 'm'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        cli_export_flags f = {.granularity = GC_EXPORT_DAILY, .focus_minor = 3};
        const char *pods_path = NULL, *nodes_path = NULL, *ns_path = NULL, *prices_path = NULL;
        const char *config_path = NULL, *window = NULL;
        input pods, nodes, nss, config, prices;
        gc_export_opts eo;
        analysis a;
        const char *metrics_paths[CLI_MAX_METRICS];
        size_t n_metrics = 0;
        cli_metrics_file metrics[CLI_MAX_METRICS];
        gc_buf metrics_owned[CLI_MAX_METRICS];
        gc_gpuuse *store = NULL;
        int c, r, rc = GC_EXIT_USAGE;

        for (int i = 1; i < argc; i++)
                if (strcmp(argv[i], "--server") == 0 || strncmp(argv[i], "--server=", 9) == 0)
                        return cmd_export_remote(argc, argv);
        memset(&pods, 0, sizeof(pods));
        nodes = nss = config = prices = pods;
        memset(&a, 0, sizeof(a));
        memset(&eo, 0, sizeof(eo));
        memset(metrics_owned, 0, sizeof(metrics_owned));
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'p':
                        pods_path = optarg;
                        break;
                case 'n':
                        nodes_path = optarg;
                        break;
                case 's':
                        ns_path = optarg;
                        break;
                case 'P':
                        prices_path = optarg;
                        break;
                case 'c':
                        config_path = optarg;
                        break;
                case 'w':
                        window = optarg;
                        break;
                case 'B':
                        if (gc_basis_parse(optarg, strlen(optarg), &eo.basis) < 0) {
                                cli_error("--basis: \"%s\" is neither allocation nor usage",
                                          optarg);
                                goto finish;
                        }
                        break;
                case 'm':
                        if (n_metrics == CLI_MAX_METRICS) {
                                cli_error("--metrics: at most %d files", CLI_MAX_METRICS);
                                goto finish;
                        }
                        metrics_paths[n_metrics++] = optarg;
                        break;
                case 'h':
                        fputs(export_usage, stdout);
                        rc = GC_EXIT_OK;
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
        if (!pods_path && getenv("GPU_COST_SERVER"))
                return cmd_export_remote(argc, argv);
        if (f.focus_version_s && f.format != GC_EXPORT_FOCUS) {
                cli_error("--focus-version: only with --format focus");
                goto finish;
        }
        if (!pods_path || !nodes_path || !window) {
                cli_error("export: --pods, --nodes and --window are required offline, or "
                          "--server for a controller (see --help)");
                goto finish;
        }
        if (parse_window(window, &eo.start, &eo.end) < 0)
                goto finish;
        if (eo.end - eo.start > (int64_t)400 * 86400) {
                cli_error("--window: at most 400 days");
                goto finish;
        }
        for (size_t i = 0; i < n_metrics; i++)
                if (cli_metrics_read(metrics_paths[i], &metrics[i], &metrics_owned[i]) < 0)
                        goto finish;
        if (input_read(&pods, pods_path) < 0 || input_read(&nodes, nodes_path) < 0 ||
            (ns_path && input_read(&nss, ns_path) < 0) ||
            (config_path && input_read(&config, config_path) < 0) ||
            (prices_path && input_read(&prices, prices_path) < 0))
                goto finish;
        r = analysis_start(&a, config_path ? &config : NULL, prices_path ? &prices : NULL, NULL);
        if (r < 0) {
                rc = r == -ENOMEM ? GC_EXIT_FAIL : GC_EXIT_USAGE;
                goto finish;
        }
        r = analysis_load(&a, &pods, &nodes, ns_path ? &nss : NULL);
        analysis_print_warnings(&a);
        if (r < 0) {
                rc = r == -ENOMEM ? GC_EXIT_FAIL : GC_EXIT_USAGE;
                goto finish;
        }
        /* Measured use of shared GPUs into the usage basis before the rows are made. */
        if (n_metrics && cli_metrics_ingest(&a, metrics, n_metrics, 0, 0, &store) < 0) {
                rc = GC_EXIT_FAIL;
                goto finish;
        }
        eo.chargeback = a.cfg->chargeback;
        if (f.share_s)
                eo.chargeback.mode = f.share;
        if (eo.chargeback.mode == GC_CHARGEBACK_WEIGHTS && eo.chargeback.n_weights == 0) {
                cli_error("--share-idle: weights needs chargeback.weights in --config");
                goto finish;
        }
        eo.ledger = a.ledger;
        eo.now = eo.end;
        eo.granularity = f.granularity;
        eo.format = f.format;
        eo.focus_minor = f.focus_minor;
        eo.cluster = a.cfg->cluster;
        eo.currency = a.cfg->catalog->currency;
        rc = GC_EXIT_FAIL;
        r = gc_export_run(&eo, export_write, NULL, NULL);
        if (r == 0 && fflush(stdout) != 0)
                r = -EIO;
        if (r < 0) {
                cli_error("export failed: %s", strerror(-r));
                goto finish;
        }
        rc = GC_EXIT_OK;
finish:
        gc_gpuuse_free(store);
        gc_dump_release(&a);
        input_done(&pods);
        input_done(&nodes);
        input_done(&nss);
        input_done(&config);
        input_done(&prices);
        for (size_t i = 0; i < n_metrics; i++)
                gc_buf_free(&metrics_owned[i]);
        return rc;
}
