/* ctl_int: the controller's state, shared by its files (main loop, informers, writers). */
#ifndef CTL_INT_H
#define CTL_INT_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "account/account.h"
#include "api/api.h"
#include "config/config.h"
#include "kube/kube.h"
#include "ledger/ledger.h"
#include "model/model.h"
#include "util/util.h"

#include "controller.h"

enum { CTL_NAMESPACES = 0, CTL_NODES, CTL_PODS, CTL_KINDS };

typedef struct ctl_pod {
        gc_pod pod;   /* the last observed record (pooled strings) */
        uint32_t gen; /* the LIST generation it was last seen in */
} ctl_pod;

typedef struct ctl_named {
        const char *name; /* pooled */
        uint32_t gen;
        /* what pricing of the pods depends on, to re-price them only when it changes */
        const char *a, *b;
        double x;
        /* nodes only, for the API's node table: */
        const char *instance_type, *region; /* pooled, or NULL */
        double gpus, geq;                   /* allocatable devices and GPU-equivalents */
} ctl_named;

typedef struct ctl ctl;

typedef struct ctl_informer {
        ctl *c;
        int kind;
        pthread_t thread;
        int started;
        atomic_int synced;    /* the first LIST completed */
        atomic_long relists;  /* LISTs after the first (410, bad events, reconnects) */
        atomic_long restarts; /* watches resumed */
        atomic_long last_event;
} ctl_informer;

struct ctl {
        const ctl_opts *o;
        gc_config *cfg;
        gc_kube_config kcfg;
        const char *ns; /* our namespace */
        gc_kube *kw;    /* requests from the main thread: Lease, checkpoint, reports */

        pthread_mutex_t mu; /* guards everything below up to `diag` */
        gc_strpool *pool;
        gc_ledger *ledger;
        gc_accountant *acct;
        gc_model_opts mo;
        ctl_pod *pods;
        size_t n_pods, cap_pods;
        gc_ptrmap pod_map;   /* uid -> index in pods */
        ctl_named *named[2]; /* namespaces, nodes */
        size_t n_named[2], cap_named[2];
        gc_ptrmap named_map[2];
        uint32_t gen[CTL_KINDS];
        int64_t restored_at; /* checkpoint time when one was restored, else 0 */
        int restore_pending; /* the first pod LIST after a restore is not yet complete */
        uint64_t changes;    /* bumped by every accounted change, for report refreshes */
        gc_diag diag;        /* notes for reports (estimates, skipped objects) */

        ctl_informer inf[CTL_KINDS];
        volatile sig_atomic_t inf_stop;
        atomic_int fatal;
        char fatal_msg[512];

        atomic_int ready;
        atomic_long last_tick;
        int leader;

        struct ctl_usage *usage; /* usage_io.c: measured GPU use and the advisor; own lock */

        /* The API (snapshot.c): snapshots published by the main loop, health figures they carry. */
        gc_api *api;
        int64_t started_at;
        int64_t snapshot_at;       /* the last one published (main thread only) */
        atomic_long checkpoint_at; /* last successful checkpoint write, unix seconds */
        atomic_long checkpoint_errors;
        atomic_long report_writes, report_errors;
};

/* Informers (informer.c). */
int ctl_informer_start(ctl *c, int kind);
void ctl_informers_stop(ctl *c);
void ctl_fatal(ctl *c, const char *msg);

/* Checkpoint (checkpoint_io.c): under c->mu for encode/restore, writes outside it. */
int ctl_checkpoint_restore(ctl *c);
int ctl_checkpoint_save(ctl *c);
/* After the first pod LIST following a restore: end open intervals of pods that are gone. */
void ctl_checkpoint_close_missing(ctl *c);

/* Reports (publish_io.c). */
int ctl_publish(ctl *c, int64_t now);
/* The ledger's fold bucket for the report zone: local midnights must fall on its edges. */
int64_t ctl_fold_bucket(const gc_config *cfg);

/*
 * Measured GPU use and the advisor (usage_io.c). Safe to call under c->mu (they take only the
 * usage state's own lock). Before the advisor has run: NULL/0; unmeasured pods: NaN/0.
 */
int ctl_usage_start(ctl *c);
void ctl_usage_stop(ctl *c);
/* Copies of the advisor's latest JSON document and Markdown "Savings" section, and its rows. */
void ctl_usage_for_snapshot(ctl *c, char **ret_json, char **ret_md, gc_api_finding_stat **ret_stats,
                            size_t *ret_n);
void ctl_usage_pod(ctl *c, const char *ns, const char *name, double *ret_mean, double *ret_p95,
                   double *ret_peak_mib, uint64_t *ret_samples);
/* Fills the usage_* fields of h (last fetch, errors, samples taken in). */
void ctl_usage_health(ctl *c, gc_api_health *h);
/* Main loop, without c->mu: reruns the advisor (last 7 days) once a minute. */
void ctl_usage_tick(ctl *c, int64_t now);
/*
 * Under c->mu: the advisor over [start, end) at now rendered for a report (Markdown section and
 * JSON document); team non-NULL keeps only that team's findings.
 */
int ctl_usage_savings(ctl *c, int64_t start, int64_t end, int64_t now, const char *team, gc_buf *md,
                      gc_buf *json);

/*
 * API snapshots (snapshot.c). ctl_api_new after the configuration is loaded; publish copies the
 * ledger and the pods under c->mu and swaps the snapshot in (no handler waits on it).
 */
int ctl_api_new(ctl *c);
int ctl_snapshot_publish(ctl *c, int64_t now);
/* Keeps what the node table of snapshots shows of a GPU node (e: its entry). Under c->mu. */
void ctl_node_facts(ctl *c, ctl_named *e, const gc_node *n);

/* Health server (health.c). */
int ctl_health_start(ctl *c);
int ctl_health_port(void); /* the port bound (--listen may say 0) */
void ctl_health_stop(ctl *c);

int64_t ctl_now(void);
int64_t ctl_mono(void);

#endif
