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
        const char *id;     /* identity in the Lease */
        const char *lease_name;
        int64_t lease_duration_s;
        int leader_election;
        int64_t checkpoint_interval_s;
        int64_t report_interval_s;
        int64_t fold_after_s;        /* intervals that ended this long ago become hourly rollups */
        int64_t snapshot_interval_s; /* API snapshots at most this often */
        int demo;                    /* serve the bundled example cluster, no API server */
} ctl_opts;

/* Runs until *stop (set by SIGTERM/SIGINT); returns the process exit status. */
int ctl_run(const ctl_opts *o, const volatile sig_atomic_t *stop);
/* --demo: the API and dashboard over the embedded example cluster until *stop (demo.c). */
int ctl_demo_run(const ctl_opts *o, const volatile sig_atomic_t *stop);

#endif
