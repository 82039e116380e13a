/* controller internals: the controller's state, shared by its files (main loop, informers,
 * writers). */
#ifndef GC_CONTROLLER_INT_H
#define GC_CONTROLLER_INT_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "account/account.h"
#include "api/api.h"
#include "checkpoint/checkpoint.h"
#include "config/config.h"
#include "kube/kube.h"
#include "ledger/ledger.h"
#include "mirror/mirror.h"
#include "model/model.h"
#include "util/util.h"

#include "controller.h"

/* The watched resources, as the mirror numbers them. ResourceSlices, ResourceClaims and
 * DeviceClasses (Dynamic Resource Allocation) are watched when the API server serves
 * resource.k8s.io (docs/dra.md); ReplicaSets and Jobs, metadata only, for the pods' workloads
 * (docs/workloads.md). Namespaces, nodes and pods (the first CTL_RESUMED) and ResourceClaims
 * resume from the checkpoint (gc__ctl_resumes); the others are state, not history, and a restart
 * LISTs them. */
enum {
        CTL_NAMESPACES = GC_MIRROR_NAMESPACES,
        CTL_NODES = GC_MIRROR_NODES,
        CTL_PODS = GC_MIRROR_PODS,
        CTL_SLICES = GC_MIRROR_SLICES,
        CTL_CLAIMS = GC_MIRROR_CLAIMS,
        CTL_CLASSES = GC_MIRROR_CLASSES,
        CTL_REPLICASETS = GC_MIRROR_REPLICASETS,
        CTL_JOBS = GC_MIRROR_JOBS,
        CTL_KINDS = GC_MIRROR_KINDS
};
#define CTL_RESUMED 3 /* the kinds with a core API path (ctl__path) */

typedef struct ctl ctl;

/* Keys this process remembers with a value, at most max, the oldest forgotten first (indexed:
 * publish_io.c looks one up per report and budget Event). Main thread only. */
typedef struct ctl_memo {
        char **keys; /* max of them, NULL where empty; allocated on first use */
        uint64_t *values;
        size_t max, next; /* next: the slot written next (the oldest when full) */
        gc_index ix;
} ctl_memo;

typedef struct ctl_informer {
        ctl *c;
        int kind;
        pthread_t thread;
        int started;
        atomic_int synced;    /* the first LIST completed */
        atomic_long relists;  /* LISTs after the first (410, bad events, reconnects) */
        atomic_long restarts; /* watches resumed */
        atomic_long last_event;
        int listing; /* between list_begin and list_end (under c->mu) */
        /* Resuming from the checkpoint's resourceVersion (c->resume_rv): 1 until the server
         * accepts the watch (an event, a bookmark or a normal end), or it answers 410. Informer
         * thread only. */
        int resuming;
        int resume_failed; /* the resume point had expired: the relist leaves a blind span */
        /* The last moment the watch was known to hold every event: when its connection was
         * lost (a failed request, an idle stream), 0 while it is healthy. Informer thread. */
        int64_t lost_at;
        /* A 410 while running (not the checkpoint's resume): the events since this moment
         * are gone, and the LIST that follows closes what it no longer shows here, as
         * estimates, and names the blind span up to it. 0: none. Under c->mu. */
        int64_t expired_since;
        /* The watch's stop flag: set with c->inf_stop, and on its own to LIST again (nodes:
         * a ResourceSlice names a node the GPU-node table does not hold). */
        volatile sig_atomic_t wake;
} ctl_informer;

struct ctl {
        const gc_controller_opts *o;
        const gc_controller_demo *demo; /* --demo's example cluster, else NULL */
        gc_config *cfg;
        gc_kube_config kcfg;
        const char *ns; /* our namespace */
        gc_kube *kw;    /* requests from the main thread: Lease, checkpoint, reports */

        pthread_mutex_t mu; /* guards everything below up to `diag` */
        gc_strpool *pool;
        gc_ledger *ledger;
        gc_accountant *acct;
        gc_owner_table *owners; /* ReplicaSets and Jobs: the pods' workloads */
        /* The cluster as the informers last saw it (GPU pods, nodes, namespaces, DRA objects),
         * and its rules: fed under this lock, it feeds acct, owners and ledger. */
        gc_mirror *mirror;
        gc_model_opts mo;
        /* Dynamic Resource Allocation: the resource.k8s.io version discovery chose ("v1",
         * "v1beta2", "v1beta1"), "" when the server does not serve it; the collection paths;
         * the nodes a relist of nodes was asked for (once each). */
        char dra_version[16];
        char dra_paths[3][96]; /* resourceslices, resourceclaims, deviceclasses */
        char dra_note[256];
        /* Per watched resource, the last resourceVersion whose effects are in the ledger (set
         * by that resource's informer as it applies an event, a bookmark or a completed LIST);
         * the checkpoint stores them encoded under this lock, so they match its ledger. */
        char rv[CTL_KINDS][GC_CHECKPOINT_RV_MAX];
        /* Where each watch resumes after a restore (written by the restore before the
         * informers start, read-only after). */
        char resume_rv[CTL_KINDS][GC_CHECKPOINT_RV_MAX];
        gc_diag diag; /* notes for reports (the mirror's estimates, skipped objects) */

        ctl_informer inf[CTL_KINDS];
        volatile sig_atomic_t inf_stop;
        atomic_int fatal;
        char fatal_msg[512];

        atomic_int ready;
        atomic_long last_tick;
        /* Leader election (controller.c): a thread of its own renews the Lease every 2 s, so
         * no report, advisor or checkpoint work on the main loop can delay a renewal. It owns
         * `lease` and `kl` (its own API client) until joined; it publishes `leader`, which
         * every thread reads, and `fence_ms`, until when the main loop's writes may land
         * (gc_kube_set_write_fence on `kw`). */
        atomic_int leader;
        _Atomic int64_t fence_ms;
        gc_kube *kl;
        gc_kube_lease lease;
        pthread_t lease_thread;
        int lease_started;
        volatile sig_atomic_t lease_stop;

        struct ctl_usage *usage; /* usage_io.c: measured GPU use and the advisor; own lock */

        /* The API (snapshot.c): snapshots published by the main loop, health figures they carry. */
        gc_api *api;
        /* The servers (health.c): the API's, with --auth-delegate its guard, and with
         * --probe-listen the probes' and the scrape's own, untouched by API load. Each runs
         * in a thread of its own between gc__ctl_health_start and _stop. */
        struct gc_httpd *httpd, *probe;
        struct gc_authz *authz;
        pthread_t httpd_thread, probe_thread;
        int64_t started_at;
        int64_t snapshot_at;       /* the last one published (main thread only) */
        atomic_long checkpoint_at; /* last successful checkpoint write, unix seconds */
        /* Generations (checkpoint_io.c, main thread only): the slot holding the newest complete
         * write (SIZE_MAX: none known) and its generation; the next write goes to another slot. */
        size_t cp_slot;
        uint64_t cp_generation;
        /* Checkpoint ConfigMaps existed but no generation was complete: history was lost and
         * the controller started empty. The message is written before the flag is set (both
         * once, before the informers start); /readyz and /metrics read them. */
        atomic_int checkpoint_lost;
        char checkpoint_lost_msg[512];
        atomic_long checkpoint_errors;
        atomic_long report_writes, report_errors;
        /* Reports (publish_io.c, main thread): what was last written under each ConfigMap name
         * (its content hash), so a complete period is rewritten only on change; the budget
         * Events created, so none is sent twice. */
        ctl_memo written, events;
        size_t pool_live;          /* strings the pool held after its last sweep (main thread) */
        atomic_long fold_failures; /* folds refused at the history's row bound */
        atomic_llong fold_full_logged; /* when that was last logged; 0 = never */
};

/*
 * Shared by every file (common.c, which calls none of the others: the files call down to it, so
 * they form no loop).
 */
int64_t gc__ctl_now(void);
int64_t gc__ctl_mono(void);
void gc__ctl_fatal(ctl *c, const char *msg);
/* gc__ctl_fatal for an API call doing `what` that failed with r: a 401 (-EKEYREJECTED) names the
 * credential refused, a 403 (-EACCES) says `grant` (what the roles must grant), anything else
 * `cause` (an err buffer; NULL or empty: r's strerror). */
void gc__ctl_fatal_api(ctl *c, int r, const char *what, const char *grant, const char *cause);
const char *gc__ctl_kind_name(int kind); /* "namespaces", "nodes", "pods", "resourceslices", ... */
/* 1 when a restart resumes the kind's watch from the checkpoint's resourceVersion: namespaces,
 * nodes and pods (their history), and ResourceClaims, whose first LIST is then the state at
 * that resourceVersion: a claim deallocated and deleted while the controller was away is still
 * known, and the shares of the pods that held a device with it stay exact (docs/dra.md). */
int gc__ctl_resumes(int kind);
/* The ledger's fold bucket for the report zone: local midnights must fall on its edges. */
int64_t gc__ctl_fold_bucket(const gc_config *cfg);
/* An empty ledger as the controller keeps it: buckets and period history in the report zone. */
gc_ledger *gc__ctl_ledger_new(const ctl *c);

/* The main loop (controller.c). */
/* Asks the API server which resource.k8s.io version it serves; fills dra_version and paths. */
int gc__ctl_dra_discover(ctl *c);

/* Informers (informer.c). */
/* The cluster mirror over c's pool, ledger, accountant, owners and notes; its logs are ours. */
int gc__ctl_mirror_new(ctl *c);
int gc__ctl_informer_start(ctl *c, int kind);
void gc__ctl_informers_stop(ctl *c);

/* Checkpoint (checkpoint_io.c): under c->mu for encode/restore, writes outside it. */
int gc__ctl_checkpoint_restore(ctl *c);
int gc__ctl_checkpoint_save(ctl *c);
/*
 * A standby taking over: learns from the slots' chunk 0 which generation the old leader wrote
 * last, so the next write goes into the other slot with a higher number. Main thread.
 */
int gc__ctl_checkpoint_sync_generation(ctl *c);
/* Folds the ledger as a checkpoint would, without writing (a warm standby). Takes c->mu. */
void gc__ctl_checkpoint_fold(ctl *c, int64_t now);

/* Reports (publish_io.c). */
#define CTL_WRITTEN_MAX 512  /* report names remembered */
#define CTL_EVENTS_MAX  4096 /* budget Events remembered */
int gc__ctl_publish(ctl *c, int64_t now);
void gc__ctl_memo_free(ctl_memo *m);

/*
 * Measured GPU use and the advisor (usage_io.c). Safe to call under c->mu (they take only the
 * usage state's own lock). Before the advisor has run: NULL/0; unmeasured pods: NaN/0.
 */
int gc__ctl_usage_start(ctl *c);
void gc__ctl_usage_stop(ctl *c);
/*
 * Copies of the advisor's latest JSON document and Markdown "Savings" section, and its rows, and
 * a reference to the result they were rendered from (*ret_advice, NULL before the advisor ran).
 */
void gc__ctl_usage_for_snapshot(ctl *c, char **ret_json, char **ret_md,
                                gc_api_finding_stat **ret_stats, size_t *ret_n,
                                gc_advisor_result **ret_advice);
/* Marks the pooled team names of the advisor's rows it keeps, for the pool's sweep. */
void gc__ctl_usage_mark(ctl *c);
/* A reference to the advisor's latest result (NULL before it ran): the one the next snapshot
 * takes. For reports written before the first snapshot. */
gc_advisor_result *gc__ctl_usage_advice(ctl *c);
void gc__ctl_usage_pod(ctl *c, const char *ns, const char *name, double *ret_mean, double *ret_p95,
                       double *ret_peak_mib, uint64_t *ret_samples);
/* Fills the usage_* fields of h (last fetch, errors, samples taken in). */
void gc__ctl_usage_health(ctl *c, gc_api_health *h);
/* Main loop, without c->mu (it takes it): reruns the advisor (last 7 days) once a minute. */
void gc__ctl_usage_tick(ctl *c, int64_t now);
/* The advisor's settings with the DeviceClasses watched for NVIDIA's whole GPUs and MIG
 * partitions (the first by name of each), else its defaults. Under c->mu. */
void gc__ctl_dra_advisor_opts(ctl *c, gc_advisor_opts *ret);

/*
 * API snapshots (snapshot.c). gc__ctl_api_new after the configuration is loaded; publish copies the
 * ledger and the pods under c->mu and swaps the snapshot in (no handler waits on it).
 */
int gc__ctl_api_new(ctl *c);
int gc__ctl_snapshot_publish(ctl *c, int64_t now);

/* Health server (health.c). */
int gc__ctl_health_start(ctl *c);
int gc__ctl_health_port(void); /* the port bound (--listen may say 0) */
void gc__ctl_health_stop(ctl *c);

#endif
