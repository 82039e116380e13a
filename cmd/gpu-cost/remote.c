/* remote: costs, report and recommendations read from a controller's REST API (docs/api.md). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "cli.h"
#include "ledger/ledger.h"
#include "report/report.h"

#define REMOTE_MAX_BODY   ((size_t)64 << 20) /* a year of daily steps by pod stays far below */
#define REMOTE_MAX_TOKEN  ((size_t)16 << 10)
#define REMOTE_TIMEOUT_S  30
#define REMOTE_CONNECT_S  10
#define REMOTE_MAX_PARAMS 8

typedef enum { RFMT_TABLE, RFMT_JSON, RFMT_MARKDOWN } remote_format;

/* What every remote command takes: where the API is and how to reach it. */
typedef struct remote {
        const char *server; /* base URL, e.g. http://127.0.0.1:8080 */
        const char *token;
        const char *token_file;
        const char *cacert;
        int insecure;
        int64_t timeout_s;
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
        r->server = s && *s ? s : NULL;
        r->token = t && *t ? t : NULL;
        r->timeout_s = REMOTE_TIMEOUT_S;
        gc_buf_init(&r->token_buf, REMOTE_MAX_TOKEN);
}

static void remote_done(remote *r)
{
        gc_buf_free(&r->token_buf);
}

/* 1 when the option was one of the shared ones, 0 when not, -1 on a bad value. */
static int remote_option(remote *r, int c, const char *arg)
{
        switch (c) {
        case OPT_SERVER:
                r->server = arg;
                return 1;
        case OPT_TOKEN:
                r->token = arg;
                r->token_file = NULL;
                return 1;
        case OPT_TOKEN_FILE:
                r->token_file = arg;
                r->token = NULL;
                return 1;
        case OPT_CACERT:
                r->cacert = arg;
                return 1;
        case OPT_INSECURE:
                r->insecure = 1;
                return 1;
        case OPT_TIMEOUT:
                if (gc_duration_parse(arg, &r->timeout_s) < 0 || r->timeout_s < 1) {
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
        if (!r->server) {
                cli_error("no server: give --server URL or set GPU_COST_SERVER (e.g. "
                          "http://127.0.0.1:8080 after kubectl port-forward)");
                return GC_EXIT_USAGE;
        }
        if (strncmp(r->server, "http://", 7) != 0 && strncmp(r->server, "https://", 8) != 0) {
                cli_error("--server: expected an http:// or https:// URL, got \"%s\"", r->server);
                return GC_EXIT_USAGE;
        }
        if (r->token_file) {
                int e = gc_read_file(r->token_file, REMOTE_MAX_TOKEN, &r->token_buf);

                if (e < 0) {
                        cli_error("--token-file %s: cannot read: %s", r->token_file,
                                  e == -E2BIG ? "larger than 16 KiB" : strerror(-e));
                        return GC_EXIT_USAGE;
                }
                while (r->token_buf.len && (r->token_buf.data[r->token_buf.len - 1] == '\n' ||
                                            r->token_buf.data[r->token_buf.len - 1] == '\r' ||
                                            r->token_buf.data[r->token_buf.len - 1] == ' '))
                        r->token_buf.data[--r->token_buf.len] = '\0';
                r->token = r->token_buf.data;
        }
        if (r->token && strpbrk(r->token, "\r\n")) {
                cli_error("the token holds a line break");
                return GC_EXIT_USAGE;
        }
        return 0;
}

static size_t remote_write(char *p, size_t size, size_t n, void *ud)
{
        gc_buf *b = ud;

        /* A short count makes libcurl fail the transfer with CURLE_WRITE_ERROR. */
        return gc_buf_append(b, p, size * n) == 0 ? size * n : 0;
}

/* The API's {"error":"..."} message, or the body's start when it is not that. */
static void remote_server_error(long status, const gc_buf *body)
{
        cJSON *doc = cJSON_ParseWithLengthOpts(body->data ? body->data : "", body->len, NULL, 0);
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(doc, "error");

        if (!cJSON_IsString(msg)) /* OpenCost's envelope says "message" */
                msg = cJSON_GetObjectItemCaseSensitive(doc, "message");
        if (cJSON_IsString(msg))
                cli_error("server answered %ld: %s", status, msg->valuestring);
        else
                cli_error("server answered %ld: %.200s", status, body->data ? body->data : "");
        cJSON_Delete(doc);
}

/*
 * GETs path with the given parameters (name/value pairs, NULL values skipped) into body.
 * Returns 0, or an exit status after printing why.
 */
static int remote_get(const remote *r, const char *path, const char *const *params, size_t n_params,
                      gc_buf *body)
{
        struct curl_slist *hdrs = NULL;
        char errbuf[CURL_ERROR_SIZE] = "";
        gc_buf url, auth;
        long status = 0;
        size_t base_len = strlen(r->server);
        CURL *h = curl_easy_init();
        CURLcode cc;
        int rc = GC_EXIT_FAIL, sep = '?';

        gc_buf_init(&url, 64 << 10);
        gc_buf_init(&auth, REMOTE_MAX_TOKEN + 64);
        while (base_len && r->server[base_len - 1] == '/')
                base_len--;
        if (!h || gc_buf_append(&url, r->server, base_len) < 0 || gc_buf_puts(&url, path) < 0)
                goto nomem;
        for (size_t i = 0; i + 1 < n_params * 2; i += 2) {
                char *v;

                if (!params[i + 1])
                        continue;
                v = curl_easy_escape(h, params[i + 1], 0);
                if (!v || gc_buf_printf(&url, "%c%s=%s", sep, params[i], v) < 0) {
                        curl_free(v);
                        goto nomem;
                }
                curl_free(v);
                sep = '&';
        }
        hdrs = curl_slist_append(hdrs, "Accept: application/json, text/markdown, text/plain");
        if (r->token) {
                if (gc_buf_printf(&auth, "Authorization: Bearer %s", r->token) < 0)
                        goto nomem;
                hdrs = curl_slist_append(hdrs, auth.data);
        }
        if (!hdrs)
                goto nomem;
        curl_easy_setopt(h, CURLOPT_URL, url.data);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
        curl_easy_setopt(h, CURLOPT_USERAGENT, "gpu-cost/" GC_VERSION);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, remote_write);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)REMOTE_CONNECT_S);
        curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)r->timeout_s);
        curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)REMOTE_MAX_BODY);
#if LIBCURL_VERSION_NUM >= 0x075500
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
        curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
        if (r->cacert)
                curl_easy_setopt(h, CURLOPT_CAINFO, r->cacert);
        if (r->insecure) {
                curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
                curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
        }
        cc = curl_easy_perform(h);
        if (cc != CURLE_OK) {
                if (cc == CURLE_WRITE_ERROR || cc == CURLE_FILESIZE_EXCEEDED)
                        cli_error("%s: the answer is larger than %zu MiB", url.data,
                                  REMOTE_MAX_BODY >> 20);
                else
                        cli_error("%s: %s", url.data, errbuf[0] ? errbuf : curl_easy_strerror(cc));
                goto finish;
        }
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        if (status != 200) {
                remote_server_error(status, body);
                /* Our request was wrong (a bad window, an unknown report): as bad input. */
                rc = status == 400 || status == 404 ? GC_EXIT_USAGE : GC_EXIT_FAIL;
                goto finish;
        }
        rc = 0;
        goto finish;
nomem:
        cli_error("out of memory");
finish:
        curl_slist_free_all(hdrs);
        if (h)
                curl_easy_cleanup(h);
        gc_buf_free(&url);
        if (auth.data) /* the token is a secret: leave no copy behind */
                memset(auth.data, 0, auth.cap);
        gc_buf_free(&auth);
        return rc;
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

/* ---- the cost-summary JSON read back into a gc_cost_summary --------------------------------- */

static double num(const cJSON *o, const char *name)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

        return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static void row_amounts(const cJSON *o, gc_cost_row *row)
{
        row->gpu_seconds = num(o, "gpu_seconds");
        if (!cJSON_GetObjectItemCaseSensitive(o, "gpu_seconds"))
                row->gpu_seconds = num(o, "gpu_hours") * 3600.0;
        row->cost_usd = num(o, "cost_usd");
        row->pods = (uint32_t)num(o, "pods");
        row->estimates = (uint32_t)num(o, "estimates");
}

static const char *pooled(gc_strpool *pool, const cJSON *v)
{
        return v && cJSON_IsString(v) ? gc_strpool_intern0(pool, v->valuestring) : NULL;
}

/*
 * Parses one cost summary (docs/report.md's shape) so that pkg/report formats it: the one place
 * that rounds money and hours for people. Strings go into pool.
 */
static int summary_from_json(const cJSON *doc, gc_strpool *pool, gc_cost_summary *ret)
{
        const cJSON *win = cJSON_GetObjectItemCaseSensitive(doc, "window");
        const cJSON *by = cJSON_GetObjectItemCaseSensitive(doc, "by");
        const cJSON *groups = cJSON_GetObjectItemCaseSensitive(doc, "groups");
        const cJSON *idle = cJSON_GetObjectItemCaseSensitive(doc, "idle");
        const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(idle, "nodes");
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(win, "start");
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(win, "end");
        const cJSON *it;
        gc_cost_summary sum;
        size_t i;

        memset(&sum, 0, sizeof(sum));
        if (!cJSON_IsArray(groups) || !cJSON_IsArray(by) || !cJSON_IsString(s) ||
            !cJSON_IsString(e) ||
            gc_time_parse(s->valuestring, strlen(s->valuestring), &sum.start) < 0 ||
            gc_time_parse(e->valuestring, strlen(e->valuestring), &sum.end) < 0)
                return -EINVAL;
        cJSON_ArrayForEach(it, by)
        {
                const char *key;
                size_t klen;

                if (!cJSON_IsString(it) || sum.n_by == GC_KEY_COUNT)
                        return -EINVAL;
                /* A label dimension takes the next label slot, named as the server named it. */
                if (gc_dim_is_label(it->valuestring, strlen(it->valuestring), &key, &klen)) {
                        if (klen == 0 || sum.label_keys.n == GC_LABEL_DIMS)
                                return -EINVAL;
                        sum.label_keys.key[sum.label_keys.n] = gc_strpool_intern0(pool, key);
                        if (!sum.label_keys.key[sum.label_keys.n])
                                return -ENOMEM;
                        sum.by[sum.n_by++] = (gc_dim)(GC_DIM_LABEL + sum.label_keys.n++);
                        continue;
                }
                if (gc_dim_parse(it->valuestring, strlen(it->valuestring), &sum.by[sum.n_by]) < 0)
                        return -EINVAL;
                sum.n_by++;
        }
        sum.n_rows = (size_t)cJSON_GetArraySize(groups);
        sum.rows = calloc(sum.n_rows ? sum.n_rows : 1, sizeof(*sum.rows));
        sum.n_idle_nodes = cJSON_IsArray(nodes) ? (size_t)cJSON_GetArraySize(nodes) : 0;
        sum.idle_nodes = calloc(sum.n_idle_nodes ? sum.n_idle_nodes : 1, sizeof(*sum.idle_nodes));
        if (!sum.rows || !sum.idle_nodes)
                goto nomem;
        i = 0;
        cJSON_ArrayForEach(it, groups)
        {
                const cJSON *keys = cJSON_GetObjectItemCaseSensitive(it, "keys");
                gc_cost_row *row = &sum.rows[i++];

                for (size_t k = 0; k < sum.n_by; k++) {
                        char name[GC_LABEL_KEY_MAX + 8];
                        const char *dn =
                            gc_dim_label_name(sum.by[k], &sum.label_keys, name, sizeof(name));
                        const cJSON *v = dn ? cJSON_GetObjectItemCaseSensitive(keys, dn) : NULL;

                        row->keys[sum.by[k]] = pooled(pool, v);
                        if (cJSON_IsString(v) && !row->keys[sum.by[k]])
                                goto nomem;
                }
                row_amounts(it, row);
        }
        i = 0;
        cJSON_ArrayForEach(it, nodes)
        {
                gc_cost_row *row = &sum.idle_nodes[i++];

                row->keys[GC_DIM_NODE] = pooled(pool, cJSON_GetObjectItemCaseSensitive(it, "node"));
                row->keys[GC_DIM_MODEL] =
                    pooled(pool, cJSON_GetObjectItemCaseSensitive(it, "model"));
                row->keys[GC_DIM_CAPACITY_TYPE] =
                    pooled(pool, cJSON_GetObjectItemCaseSensitive(it, "capacity_type"));
                row_amounts(it, row);
        }
        row_amounts(idle, &sum.idle);
        row_amounts(cJSON_GetObjectItemCaseSensitive(doc, "unattributed"), &sum.unattributed);
        row_amounts(cJSON_GetObjectItemCaseSensitive(doc, "capacity"), &sum.capacity);
        row_amounts(cJSON_GetObjectItemCaseSensitive(doc, "total"), &sum.total);
        *ret = sum;
        return 0;
nomem:
        gc_cost_summary_free(&sum);
        return -ENOMEM;
}

/* A summary as a table or Markdown; with steps, one per step under a heading. */
static int render_summary(const cJSON *doc, remote_format fmt, gc_strpool *pool, gc_buf *out)
{
        const cJSON *cur = cJSON_GetObjectItemCaseSensitive(doc, "currency");
        const char *currency = cJSON_IsString(cur) ? cur->valuestring : NULL;
        gc_cost_summary sum;
        int r;

        r = summary_from_json(doc, pool, &sum);
        if (r < 0)
                return r;
        r = fmt == RFMT_MARKDOWN ? gc_report_summary_markdown(&sum, currency, out)
                                 : gc_report_summary_table(&sum, currency, out);
        gc_cost_summary_free(&sum);
        return r;
}

/* The member holding a stepped answer's summaries, or NULL for a single summary. */
static const cJSON *steps_of(const cJSON *doc)
{
        const cJSON *it;

        if (cJSON_GetObjectItemCaseSensitive(doc, "groups"))
                return NULL;
        cJSON_ArrayForEach(it, doc)
        {
                if (cJSON_IsArray(it) && cJSON_GetArraySize(it) > 0 &&
                    cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(it, 0), "groups"))
                        return it;
        }
        return NULL;
}

static int render_costs(const gc_buf *body, remote_format fmt, gc_buf *out)
{
        cJSON *doc = cJSON_ParseWithLengthOpts(body->data, body->len, NULL, 0);
        const cJSON *steps = steps_of(doc), *it;
        gc_strpool *pool = gc_strpool_new((size_t)256 << 20);
        int r = -EINVAL;

        if (!doc || !pool)
                goto finish;
        if (!steps) {
                r = render_summary(doc, fmt, pool, out);
                goto finish;
        }
        r = 0;
        cJSON_ArrayForEach(it, steps)
        {
                const cJSON *win = cJSON_GetObjectItemCaseSensitive(it, "window");
                const cJSON *s = cJSON_GetObjectItemCaseSensitive(win, "start");
                const cJSON *e = cJSON_GetObjectItemCaseSensitive(win, "end");
                const cJSON *cur = cJSON_GetObjectItemCaseSensitive(doc, "currency");

                /* Steps may leave the currency to the envelope. */
                if (cJSON_IsString(cur) && !cJSON_GetObjectItemCaseSensitive(it, "currency"))
                        cJSON_AddStringToObject((cJSON *)it, "currency", cur->valuestring);
                r = gc_buf_printf(
                    out, "%s%s%s to %s\n%s", out->len ? "\n" : "",
                    fmt == RFMT_MARKDOWN ? "### " : "", cJSON_IsString(s) ? s->valuestring : "?",
                    cJSON_IsString(e) ? e->valuestring : "?", fmt == RFMT_MARKDOWN ? "\n" : "");
                if (r == 0)
                        r = render_summary(it, fmt, pool, out);
                if (r < 0)
                        break;
        }
finish:
        if (r == -EINVAL)
                cli_error("the server's answer is not a cost summary (docs/report.md)");
        else if (r < 0)
                cli_error("cannot format the answer: %s", strerror(-r));
        gc_strpool_free(pool);
        cJSON_Delete(doc);
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
        gc_buf_init(&body, REMOTE_MAX_BODY);
        gc_buf_init(&out, REMOTE_MAX_BODY * 2);
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
                rc = remote_get(&rm, "/api/v1/costs", params, 6, &body);
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
    "  --format F         markdown (default) or json\n" REMOTE_HELP;

int cmd_report(int argc, char **argv)
{
        static const struct option opts[] = {
            REMOTE_OPTIONS,
            {"format", required_argument, NULL, 'f'},
            {"period", required_argument, NULL, 'p'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        const char *params[2] = {"format", "md"};
        const char *kind = NULL, *id = "latest";
        char path[256];
        remote_format fmt = RFMT_MARKDOWN;
        gc_buf body;
        remote rm;
        int c, r, rc = GC_EXIT_USAGE;

        remote_init(&rm);
        gc_buf_init(&body, REMOTE_MAX_BODY);
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
                        if (fmt == RFMT_TABLE) {
                                cli_error("--format: a report is markdown or json");
                                goto finish;
                        }
                        break;
                case 'p':
                        kind = optarg;
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
        if (!kind)
                kind = optind < argc ? argv[optind++] : NULL;
        if (!kind || (strcmp(kind, "weekly") != 0 && strcmp(kind, "daily") != 0 &&
                      strcmp(kind, "monthly") != 0)) {
                cli_error("report: say daily, weekly or monthly (see --help)");
                goto finish;
        }
        if (optind < argc)
                id = argv[optind++];
        if (optind < argc) {
                cli_error("report: unexpected argument \"%s\"", argv[optind]);
                goto finish;
        }
        if (!*id || strpbrk(id, "/?#%") || strlen(id) > 64) {
                cli_error("report: \"%s\" is not a report ID (2026-11-20, 2026-w47, 2026-11, "
                          "latest)",
                          id);
                goto finish;
        }
        snprintf(path, sizeof(path), "/api/v1/reports/%s/%s", kind, id);
        params[1] = fmt == RFMT_JSON ? "json" : "md";
        rc = remote_ready(&rm);
        if (rc == 0)
                rc = remote_get(&rm, path, params, 1, &body);
        if (rc != 0)
                goto finish;
        r = write_body(body.data, body.len);
        if (r < 0) {
                cli_error("cannot write the result: %s", strerror(-r));
                rc = GC_EXIT_FAIL;
        }
finish:
        gc_buf_free(&body);
        remote_done(&rm);
        return rc;
}

/* One finding's subject: what to change, named as a reader finds it. */
static void finding_subject(const cJSON *f, char *out, size_t n)
{
        const cJSON *subj = cJSON_GetObjectItemCaseSensitive(f, "subject");
        const cJSON *src = cJSON_IsObject(subj) ? subj : f;
        const cJSON *ns = cJSON_GetObjectItemCaseSensitive(src, "namespace");
        const cJSON *pod = cJSON_GetObjectItemCaseSensitive(src, "pod");
        const cJSON *ctl = cJSON_GetObjectItemCaseSensitive(src, "controller");
        const cJSON *node = cJSON_GetObjectItemCaseSensitive(src, "node");
        const cJSON *model = cJSON_GetObjectItemCaseSensitive(src, "model");
        const cJSON *ct = cJSON_GetObjectItemCaseSensitive(src, "capacity_type");

        if (cJSON_IsString(ns) && cJSON_IsString(ctl))
                snprintf(out, n, "%s/%s", ns->valuestring, ctl->valuestring);
        else if (cJSON_IsString(ns) && cJSON_IsString(pod))
                snprintf(out, n, "%s/%s", ns->valuestring, pod->valuestring);
        else if (cJSON_IsString(node))
                snprintf(out, n, "node %s", node->valuestring);
        else if (cJSON_IsString(ns))
                snprintf(out, n, "namespace %s", ns->valuestring);
        else if (cJSON_IsString(model) && cJSON_IsString(ct))
                snprintf(out, n, "%s %s", model->valuestring, ct->valuestring);
        else if (cJSON_IsString(model))
                snprintf(out, n, "%s", model->valuestring);
        else if (cJSON_IsString(subj))
                snprintf(out, n, "%s", subj->valuestring);
        else
                snprintf(out, n, "cluster");
}

/* A finding's string member: at the top, in its "subject", or in its "change". */
static const char *str_or(const cJSON *o, const char *name, const char *def)
{
        static const char *const where[] = {"subject", "change"};
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

        for (size_t i = 0; i < 2 && !cJSON_IsString(v); i++)
                v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, where[i]),
                                                     name);
        return cJSON_IsString(v) ? v->valuestring : def;
}

/* The findings as an aligned table, largest saving first (the server's order). */
static int render_findings(const gc_buf *body, gc_buf *out)
{
        cJSON *doc = cJSON_ParseWithLengthOpts(body->data, body->len, NULL, 0);
        const cJSON *findings = cJSON_GetObjectItemCaseSensitive(doc, "findings");
        const cJSON *cur = cJSON_GetObjectItemCaseSensitive(doc, "currency");
        const char *currency = cJSON_IsString(cur) ? cur->valuestring : "USD";
        const cJSON *f;
        int r = 0;

        if (!cJSON_IsArray(findings)) {
                cJSON_Delete(doc);
                cli_error("the server's answer holds no \"findings\" (docs/advisor.md)");
                return -EINVAL;
        }
        r = gc_buf_printf(out, "%-15s %-16s %-40s %14s  %s\n", "KIND", "TEAM", "SUBJECT",
                          "SAVING/MONTH", "CHANGE");
        cJSON_ArrayForEach(f, findings)
        {
                char subject[256];
                double saving = num(f, "monthly_savings");

                if (r < 0)
                        break;
                finding_subject(f, subject, sizeof(subject));
                r = gc_buf_printf(out, "%-15s %-16s %-40s %10.2f %-3s  %s\n",
                                  str_or(f, "kind", "?"), str_or(f, "team", "-"), subject,
                                  isfinite(saving) ? saving : 0.0, currency,
                                  str_or(f, "summary", ""));
        }
        if (r == 0 && cJSON_GetArraySize(findings) == 0)
                r = gc_buf_puts(out, "(no findings)\n");
        if (r == 0) {
                const cJSON *notes = cJSON_GetObjectItemCaseSensitive(doc, "notes");

                cJSON_ArrayForEach(f, notes)
                {
                        if (r == 0 && cJSON_IsString(f))
                                r = gc_buf_printf(out, "note: %s\n", f->valuestring);
                }
        }
        cJSON_Delete(doc);
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
        gc_buf_init(&body, REMOTE_MAX_BODY);
        gc_buf_init(&out, REMOTE_MAX_BODY * 2);
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
                rc = remote_get(&rm, "/api/v1/recommendations", NULL, 0, &body);
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
        gc_buf_init(&body, 64 << 10);
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
                rc = remote_get(&rm, paths[i], NULL, 0, &body);
                if (rc != 0) {
                        cli_error("%s is not healthy: %s did not answer 200", rm.server, paths[i]);
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
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        const char *params[REMOTE_MAX_PARAMS * 2] = {
            "window", "lastmonth", "granularity", NULL, "focus_version", NULL, "share_idle", NULL};
        cli_export_flags f = {.format = GC_EXPORT_FOCUS};
        gc_buf body;
        remote rm;
        int c, r, rc = GC_EXIT_USAGE;

        remote_init(&rm);
        gc_buf_init(&body, REMOTE_MAX_BODY);
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
                    params, 4, &body);
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
