/*
 * controller: the in-cluster daemon (docs/controller.md). It watches the API server (informer
 * threads), accounts GPU pods into the ledger, checkpoints it into ConfigMaps, publishes report
 * ConfigMaps, fetches measured GPU use for the advisor, holds the Lease when several replicas
 * run, and serves the API, dashboard, /metrics and probes from immutable snapshots. The program
 * (cmd/gpu-cost-controller) parses flags into gc_controller_opts, handles signals and calls one
 * of the two entry points below; everything else is here.
 */
#ifndef GC_CONTROLLER_H
#define GC_CONTROLLER_H

#include <signal.h>
#include <stdint.h>

#include "dump/dump.h"

typedef struct gc_controller_opts {
        const char *config_path; /* NULL = built-in defaults */
        const char *kubeconfig;  /* NULL = in-cluster */
        const char *context;
        const char *ns;     /* NULL = from the service account or kubeconfig */
        const char *listen; /* "0.0.0.0:8080" */
        /* /healthz and /readyz also on this address, a server and thread of their own, so no
         * load on the API delays the kubelet's probes; NULL: only on listen. */
        const char *probe_listen;
        const char *id; /* identity in the Lease */
        const char *lease_name;
        int64_t lease_duration_s;
        int leader_election;
        int64_t checkpoint_interval_s;
        int64_t report_interval_s;
        int64_t fold_after_s;        /* intervals that ended this long ago become hourly rollups */
        int64_t max_history_rows;    /* the ledger's max_rollup_rows; 0 = GC_LEDGER_DEFAULT_LIMIT */
        int64_t hourly_history_s;    /* older folded history is kept only by period; 0: default */
        int64_t snapshot_interval_s; /* API snapshots at most this often */
        int demo;                    /* serve the bundled example cluster, no API server */
        const char *tls_cert_file;   /* with tls_key_file: HTTPS, reloaded when the files change */
        const char *tls_key_file;
        int auth_delegate;         /* callers' tokens checked by the API server (docs/auth.md) */
        int64_t auth_cache_ttl_s;  /* how long an allowed caller is remembered; 0 = 60 s */
        const char *auth_resource; /* resourceAttributes in place of the path, or NULL */
        int64_t checkpoint_chunk_bytes; /* 0 = GC_CHECKPOINT_CHUNK_BYTES */
        int64_t test_kill_after_chunks; /* fault injection: SIGKILL after N ConfigMaps; 0 = off */
        int64_t test_stall_report_s;    /* fault injection: each report round hangs this long */
        int test_sweep_always;          /* sweep the string pool at every snapshot */
} gc_controller_opts;

/*
 * Runs until *stop (set by the caller's SIGTERM/SIGINT handler); returns the process exit status
 * (0 after a clean stop, 1 when it could not start or a watch failed for good). Logs go to
 * standard error (pkg/log). The caller initialises libcurl first.
 */
int gc_controller_run(const gc_controller_opts *o, const volatile sig_atomic_t *stop);

/* The example cluster --demo serves: a dump's files (docs/dump.md) and the demo's settings. */
typedef struct gc_controller_demo {
        gc_dump_input pods, nodes, namespaces;
        gc_dump_input config;   /* replaced by o->config_path when that is set */
        gc_dump_input settings; /* demo.json: the example's now and its window */
        gc_dump_input metrics;  /* dcgm-exporter series for the advisor */
} gc_controller_demo;

/*
 * --demo: the API and dashboard over the example cluster, standing at its `now`, until *stop; no
 * API server. The inputs are borrowed for the call. Returns the process exit status.
 */
int gc_controller_demo_run(const gc_controller_opts *o, const gc_controller_demo *demo,
                           const volatile sig_atomic_t *stop);

#endif
