/* controller: the in-cluster daemon's state and main loop (docs/controller.md). */
#ifndef CTL_CONTROLLER_H
#define CTL_CONTROLLER_H

#include <signal.h>
#include <stdint.h>

typedef struct ctl_opts {
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
} ctl_opts;

/* Runs until *stop (set by SIGTERM/SIGINT); returns the process exit status. */
int ctl_run(const ctl_opts *o, const volatile sig_atomic_t *stop);
/* --demo: the API and dashboard over the embedded example cluster until *stop (demo.c). */
int ctl_demo_run(const ctl_opts *o, const volatile sig_atomic_t *stop);

#endif
