/* gpu-cost-controller: flags, environment and signals around the controller (docs/controller.md).
 */
#include <getopt.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "authz/authz.h"
#include "checkpoint/checkpoint.h"
#include "controller/controller.h"
#include "embedded.h"
#include "log/log.h"
#include "util/util.h"

static volatile sig_atomic_t ctl__stop;

/* Long options without a short form. */
enum {
        CTL_OPT_TLS_CERT = 1000,
        CTL_OPT_TLS_KEY,
        CTL_OPT_AUTH,
        CTL_OPT_AUTH_TTL,
        CTL_OPT_AUTH_RESOURCE,
        CTL_OPT_PROBE_LISTEN,
        CTL_OPT_CP_CHUNK,
        CTL_OPT_CP_KILL,
        CTL_OPT_STALL_REPORTS,
        CTL_OPT_SWEEP_ALWAYS,
        CTL_OPT_HISTORY_ROWS,
        CTL_OPT_HOURLY_HISTORY,
        CTL_OPT_VERSION,
};

/* A non-negative integer flag within [lo, hi]; prints the error and returns -1 otherwise. */
static int int_flag(const char *name, const char *s, int64_t lo, int64_t hi, int64_t *ret)
{
        int64_t v;

        if (gc_parse_int64(s, &v) < 0 || v < lo || v > hi) {
                fprintf(stderr,
                        "gpu-cost-controller: --%s: expected an integer in [%lld, %lld], "
                        "got \"%s\"\n",
                        name, (long long)lo, (long long)hi, s);
                return -1;
        }
        *ret = v;
        return 0;
}

/* The example cluster compiled into the binary, for --demo. */
static int ctl__embedded(const char *name, gc_dump_input *ret)
{
        for (const gc_embedded_file *f = gc_embedded_files; f->name; f++) {
                if (strcmp(f->name, name) == 0) {
                        ret->name = f->name;
                        ret->data = f->data;
                        ret->len = f->len;
                        return 0;
                }
        }
        gc_log(GC_LOG_ERROR, "an embedded example is missing from this build", "file", name, NULL);
        return -1;
}

static int ctl__demo(const gc_controller_opts *o, const volatile sig_atomic_t *stop)
{
        gc_controller_demo demo;

        memset(&demo, 0, sizeof(demo));
        if (ctl__embedded("pods.json", &demo.pods) < 0 ||
            ctl__embedded("nodes.json", &demo.nodes) < 0 ||
            ctl__embedded("namespaces.json", &demo.namespaces) < 0 ||
            ctl__embedded("config.json", &demo.config) < 0 ||
            ctl__embedded("demo.json", &demo.settings) < 0 ||
            ctl__embedded("metrics.prom", &demo.metrics) < 0)
                return 1;
        return gc_controller_demo_run(o, &demo, stop);
}

static void ctl__on_signal(int sig)
{
        (void)sig;
        ctl__stop = 1;
}

static const char usage[] =
    "Usage: gpu-cost-controller [flags]\n"
    "\n"
    "Watches the Kubernetes API for pods holding GPUs and publishes their cost by team and\n"
    "project as report ConfigMaps (docs/controller.md).\n"
    "\n"
    "  --config FILE             configuration JSON (env GPU_COST_CONFIG)\n"
    "  --kubeconfig FILE         use a kubeconfig instead of the service account (env\n"
    "                            KUBECONFIG)\n"
    "  --context NAME            kubeconfig context (default: the current one)\n"
    "  --namespace NS            where checkpoint, reports and Lease live (env\n"
    "                            GPU_COST_NAMESPACE; default: the service account's)\n"
    "  --listen ADDR:PORT        the REST API, /metrics, the dashboard, /healthz and /readyz\n"
    "                            (env GPU_COST_LISTEN; 0.0.0.0:8080, with --demo\n"
    "                            127.0.0.1:8080; port 0 picks a free one, logged)\n"
    "  --probe-listen ADDR:PORT  /healthz, /readyz and /metrics (not with --auth-delegate)\n"
    "                            also here, plain HTTP, served apart so no load on --listen\n"
    "                            delays them (env GPU_COST_PROBE_LISTEN; default: none, all\n"
    "                            of them only on --listen)\n"
    "  --id NAME                 identity in the Lease (env POD_NAME; default: host name)\n"
    "  --checkpoint-interval D   checkpoint every D (default 60s)\n"
    "  --checkpoint-chunk-bytes N  largest checkpoint ConfigMap value (default 921600)\n"
    "  --test-kill-after-checkpoint-chunks N  fault injection for tests: SIGKILL itself\n"
    "                            after writing N ConfigMaps of its first checkpoint\n"
    "  --test-stall-report-writes D  fault injection for tests: every round of report\n"
    "                            writes first hangs for D\n"
    "  --test-sweep-strings      for tests: sweep the string pool at every snapshot, not\n"
    "                            only when it has grown by half\n"
    "  --report-interval D       refresh report ConfigMaps every D (default 5m)\n"
    "  --fold-after D            intervals ended D ago become hourly rollups (default 6h)\n"
    "  --max-history-rows N      bound on folded history's rows (default 2000000, about\n"
    "                            40 bytes each; docs/ledger.md)\n"
    "  --hourly-history D        keep folded history by the hour for D (default: 35d,\n"
    "                            and back to the start of last month); older history\n"
    "                            answers whole days, weeks and months only\n"
    "                            (docs/ledger.md, \"Coarsening\")\n"
    "  --snapshot-interval D     refresh what the API serves every D (default 5s)\n"
    "  --lease-name NAME         Lease for leader election (default gpu-cost-controller)\n"
    "  --lease-duration D        (default 15s)\n"
    "  --no-leader-election      run as the only replica\n"
    "  --log-level L             debug, info, warn or error (default info)\n"
    "  --demo                    serve the API and dashboard over the bundled example\n"
    "                            cluster: no API server, no configuration needed\n"
    "  --tls-cert-file FILE      serve HTTPS with this PEM certificate chain ...\n"
    "  --tls-key-file FILE       ... and key (both reloaded when they change)\n"
    "  --auth-delegate[=on|off]  every route but /healthz and /readyz needs a bearer token\n"
    "                            the API server accepts (TokenReview) for a user it allows\n"
    "                            to get the path (SubjectAccessReview); docs/auth.md\n"
    "  --auth-cache-ttl D        remember an allowed caller D (default 60s; denials 10s)\n"
    "  --auth-resource ATTRS     ask for resource attributes instead of the path, e.g.\n"
    "                            namespace=gpu-cost,resource=services,subresource=proxy,\n"
    "                            name=gpu-cost\n"
    "  --version                 print the version and revision, then exit\n"
    "\n"
    "Durations: 90s, 5m, 1h. Exit status: 0 after SIGTERM, 1 on a fatal error, 2 on bad\n"
    "flags or configuration.\n";

static int duration_flag(const char *name, const char *v, int64_t min, int64_t *ret)
{
        if (gc_duration_parse(v, ret) < 0 || *ret < min) {
                fprintf(stderr,
                        "gpu-cost-controller: --%s: expected a duration of at least %llds "
                        "(90s, 5m, 1h), got \"%s\"\n",
                        name, (long long)min, v);
                return -1;
        }
        return 0;
}

static const char *env_or(const char *name, const char *def)
{
        const char *v = getenv(name);

        return v && *v ? v : def;
}

/* The flags' defaults, and those the environment gives (the chart sets them). */
static void ctl__defaults(gc_controller_opts *o)
{
        memset(o, 0, sizeof(*o));
        o->config_path = env_or("GPU_COST_CONFIG", NULL);
        o->kubeconfig = env_or("KUBECONFIG", NULL);
        o->ns = env_or("GPU_COST_NAMESPACE", NULL);
        o->listen = env_or("GPU_COST_LISTEN", "0.0.0.0:8080");
        o->probe_listen = env_or("GPU_COST_PROBE_LISTEN", NULL);
        o->id = env_or("POD_NAME", NULL);
        o->lease_name = "gpu-cost-controller";
        o->lease_duration_s = 15;
        o->leader_election = 1;
        o->checkpoint_interval_s = 60;
        o->report_interval_s = 300;
        o->fold_after_s = 6 * 3600;
        /* Up to 62 days of hours (back to the start of last month) at 500 busy GPU nodes are
         * about 1.3 million rows (docs/benchmarks.md). */
        o->max_history_rows = 2000000;
        o->snapshot_interval_s = 5;
}

/*
 * One flag (getopt_long's ch and optarg) into o: 0 to go on, 2 for a bad one (said on standard
 * error), -1 when it was answered (--version, --help) and the program ends with 0. flag: as given.
 */
/* Flags whose value is a duration (at least min seconds) or a bounded integer, by getopt code. */
static const struct {
        const char *name;
        int64_t lo, hi; /* a duration's least seconds (hi unused); an integer's bounds */
        size_t off;     /* the int64_t in gc_controller_opts */
        int ch;
        int duration; /* else an integer */
} ctl__numeric[] = {
    {"checkpoint-interval", 1, 0, offsetof(gc_controller_opts, checkpoint_interval_s), 'C', 1},
    {"report-interval", 1, 0, offsetof(gc_controller_opts, report_interval_s), 'R', 1},
    {"fold-after", 3600, 0, offsetof(gc_controller_opts, fold_after_s), 'F', 1},
    {"lease-duration", 5, 0, offsetof(gc_controller_opts, lease_duration_s), 'D', 1},
    {"snapshot-interval", 1, 0, offsetof(gc_controller_opts, snapshot_interval_s), 'S', 1},
    {"hourly-history", 3600, 0, offsetof(gc_controller_opts, hourly_history_s),
     CTL_OPT_HOURLY_HISTORY, 1},
    {"test-stall-report-writes", 1, 0, offsetof(gc_controller_opts, test_stall_report_s),
     CTL_OPT_STALL_REPORTS, 1},
    {"checkpoint-chunk-bytes", GC_CHECKPOINT_MIN_CHUNK, GC_CHECKPOINT_CHUNK_BYTES,
     offsetof(gc_controller_opts, checkpoint_chunk_bytes), CTL_OPT_CP_CHUNK, 0},
    {"max-history-rows", 1000, 100000000, offsetof(gc_controller_opts, max_history_rows),
     CTL_OPT_HISTORY_ROWS, 0},
    {"test-kill-after-checkpoint-chunks", 1, GC_CHECKPOINT_MAX_CHUNKS,
     offsetof(gc_controller_opts, test_kill_after_chunks), CTL_OPT_CP_KILL, 0},
};

/* Flags whose value is kept as given, by getopt code: the const char * in gc_controller_opts. */
static const struct {
        int ch;
        size_t off;
} ctl__strings[] = {
    {'c', offsetof(gc_controller_opts, config_path)},
    {'k', offsetof(gc_controller_opts, kubeconfig)},
    {'x', offsetof(gc_controller_opts, context)},
    {'n', offsetof(gc_controller_opts, ns)},
    {'i', offsetof(gc_controller_opts, id)},
    {'L', offsetof(gc_controller_opts, lease_name)},
    {CTL_OPT_TLS_CERT, offsetof(gc_controller_opts, tls_cert_file)},
    {CTL_OPT_TLS_KEY, offsetof(gc_controller_opts, tls_key_file)},
};

static int ctl__flag(int ch, const char *flag, gc_controller_opts *o, int *listen_given)
{
        int level;

        for (size_t i = 0; i < sizeof(ctl__strings) / sizeof(ctl__strings[0]); i++) {
                if (ctl__strings[i].ch == ch) {
                        *(const char **)(void *)((char *)o + ctl__strings[i].off) = optarg;
                        return 0;
                }
        }
        for (size_t i = 0; i < sizeof(ctl__numeric) / sizeof(ctl__numeric[0]); i++) {
                int64_t *dst = (int64_t *)(void *)((char *)o + ctl__numeric[i].off);

                if (ctl__numeric[i].ch != ch)
                        continue;
                if (ctl__numeric[i].duration)
                        return duration_flag(ctl__numeric[i].name, optarg, ctl__numeric[i].lo,
                                             dst) < 0
                                   ? 2
                                   : 0;
                return int_flag(ctl__numeric[i].name, optarg, ctl__numeric[i].lo,
                                ctl__numeric[i].hi, dst) < 0
                           ? 2
                           : 0;
        }
        switch (ch) {
        case 'l':
                o->listen = optarg;
                *listen_given = 1;
                break;
        case 'N':
                o->leader_election = 0;
                break;
        case 'M':
                o->demo = 1;
                break;
        case 'v':
                level = gc_log_parse_level(optarg);
                if (level < 0) {
                        fprintf(stderr,
                                "gpu-cost-controller: --log-level: expected "
                                "debug, info, warn or error, got \"%s\"\n",
                                optarg);
                        return 2;
                }
                gc_log_set_level(level);
                break;
        case CTL_OPT_PROBE_LISTEN:
                o->probe_listen = optarg && *optarg ? optarg : NULL;
                break;
        case CTL_OPT_AUTH:
                if (!optarg || !strcmp(optarg, "on") || !strcmp(optarg, "true")) {
                        o->auth_delegate = 1;
                } else if (!strcmp(optarg, "off") || !strcmp(optarg, "false")) {
                        o->auth_delegate = 0;
                } else {
                        fprintf(stderr,
                                "gpu-cost-controller: --auth-delegate: expected on or off, "
                                "got \"%s\"\n",
                                optarg);
                        return 2;
                }
                break;
        case CTL_OPT_AUTH_TTL:
                if (duration_flag("auth-cache-ttl", optarg, 1, &o->auth_cache_ttl_s) < 0)
                        return 2;
                if (o->auth_cache_ttl_s > 3600) {
                        fprintf(stderr, "gpu-cost-controller: --auth-cache-ttl: at most "
                                        "1h\n");
                        return 2;
                }
                break;
        case CTL_OPT_AUTH_RESOURCE: {
                gc_authz_resource res;
                char err[256];

                if (gc_authz_resource_parse(optarg, &res, err, sizeof(err)) < 0) {
                        fprintf(stderr, "gpu-cost-controller: --auth-resource: %s\n", err);
                        return 2;
                }
                o->auth_resource = optarg;
                break;
        }
        case CTL_OPT_SWEEP_ALWAYS:
                o->test_sweep_always = 1;
                break;
        case CTL_OPT_VERSION:
                printf("gpu-cost-controller %s%s%s%s\n", GC_VERSION,
                       GC_REVISION[0] ? " (revision " : "", GC_REVISION, GC_REVISION[0] ? ")" : "");
                return -1;
        case 'h':
                fputs(usage, stdout);
                return -1;
        default:
                fprintf(stderr,
                        "gpu-cost-controller: unknown or incomplete flag \"%s\" (see "
                        "--help)\n",
                        flag);
                return 2;
        }
        return 0;
}

/* Flags that must go together or not at all; no arguments besides flags. 0 or 2. */
static int ctl__validate(const gc_controller_opts *o, int argc, char **argv)
{
        if (!o->tls_cert_file != !o->tls_key_file) {
                fprintf(stderr, "gpu-cost-controller: --tls-cert-file and --tls-key-file go "
                                "together\n");
                return 2;
        }
        if (o->auth_delegate && o->demo) {
                fprintf(stderr, "gpu-cost-controller: --auth-delegate needs an API server to ask: "
                                "not with --demo\n");
                return 2;
        }
        if (optind < argc) {
                fprintf(stderr, "gpu-cost-controller: unexpected argument \"%s\"\n", argv[optind]);
                return 2;
        }
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
            {"config", required_argument, NULL, 'c'},
            {"kubeconfig", required_argument, NULL, 'k'},
            {"context", required_argument, NULL, 'x'},
            {"namespace", required_argument, NULL, 'n'},
            {"listen", required_argument, NULL, 'l'},
            {"id", required_argument, NULL, 'i'},
            {"checkpoint-interval", required_argument, NULL, 'C'},
            {"report-interval", required_argument, NULL, 'R'},
            {"fold-after", required_argument, NULL, 'F'},
            {"lease-name", required_argument, NULL, 'L'},
            {"lease-duration", required_argument, NULL, 'D'},
            {"no-leader-election", no_argument, NULL, 'N'},
            {"log-level", required_argument, NULL, 'v'},
            {"snapshot-interval", required_argument, NULL, 'S'},
            {"demo", no_argument, NULL, 'M'},
            {"tls-cert-file", required_argument, NULL, CTL_OPT_TLS_CERT},
            {"tls-key-file", required_argument, NULL, CTL_OPT_TLS_KEY},
            {"auth-delegate", optional_argument, NULL, CTL_OPT_AUTH},
            {"auth-cache-ttl", required_argument, NULL, CTL_OPT_AUTH_TTL},
            {"auth-resource", required_argument, NULL, CTL_OPT_AUTH_RESOURCE},
            {"probe-listen", required_argument, NULL, CTL_OPT_PROBE_LISTEN},
            {"checkpoint-chunk-bytes", required_argument, NULL, CTL_OPT_CP_CHUNK},
            {"max-history-rows", required_argument, NULL, CTL_OPT_HISTORY_ROWS},
            {"hourly-history", required_argument, NULL, CTL_OPT_HOURLY_HISTORY},
            {"test-kill-after-checkpoint-chunks", required_argument, NULL, CTL_OPT_CP_KILL},
            {"test-stall-report-writes", required_argument, NULL, CTL_OPT_STALL_REPORTS},
            {"test-sweep-strings", no_argument, NULL, CTL_OPT_SWEEP_ALWAYS},
            {"version", no_argument, NULL, CTL_OPT_VERSION},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        static char host[256];
        struct sigaction sa;
        gc_controller_opts o;
        int ch, rc, listen_given = 0;

        gc_malloc_tune(); /* before any thread (docs/controller.md, Memory) */
        ctl__defaults(&o);
        opterr = 0;
        while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                rc = ctl__flag(ch, argv[optind - 1], &o, &listen_given);
                if (rc)
                        return rc < 0 ? 0 : rc;
        }
        if (ctl__validate(&o, argc, argv))
                return 2;
        if (!o.id) {
                if (gethostname(host, sizeof(host) - 1) < 0)
                        gc_strlcpy(host, "gpu-cost-controller", sizeof(host));
                o.id = host;
        }
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = ctl__on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
                gc_log(GC_LOG_ERROR, "cannot initialise libcurl", NULL);
                return 1;
        }
        if (o.demo && !env_or("GPU_COST_LISTEN", NULL) && !listen_given)
                o.listen = "127.0.0.1:8080";
        rc = o.demo ? ctl__demo(&o, &ctl__stop) : gc_controller_run(&o, &ctl__stop);
        curl_global_cleanup();
        return rc;
}
