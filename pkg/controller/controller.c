/* controller: wiring, leader election, and the main loop's timers (docs/controller.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "controller_int.h"
#include "log/log.h"

/* The write fence of `kw` (pkg/kube/kube.h): a write lands only within our lease. */
static int64_t ctl__fence(void *arg)
{
        ctl *c = arg;

        return atomic_load(&c->fence_ms);
}

static int64_t ctl__mono_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void ctl__free(ctl *c)
{
        c->kw = gc_kube_free(c->kw);
        gc_kube_config_release(&c->kcfg);
        c->mirror = gc_mirror_free(c->mirror);
        gc__ctl_memo_free(&c->written);
        gc__ctl_memo_free(&c->events);
        c->acct = gc_accountant_free(c->acct);
        c->owners = gc_owner_table_free(c->owners);
        c->ledger = gc_ledger_free(c->ledger);
        c->pool = gc_strpool_free(c->pool);
        c->cfg = gc_config_free(c->cfg);
        gc_diag_clear(&c->diag);
        pthread_mutex_destroy(&c->mu);
}

/* Loads the configuration and the API server's address; returns an exit status or 0. */
static int ctl__setup(ctl *c, const gc_controller_opts *o)
{
        gc_accountant_opts ao;
        char err[512];
        gc_buf file;
        int r;

        c->o = o;
        c->written.max = CTL_WRITTEN_MAX;
        c->events.max = CTL_EVENTS_MAX;
        pthread_mutex_init(&c->mu, NULL);
        if (o->config_path) {
                r = gc_read_file(o->config_path, GC_CONFIG_MAX_BYTES, &file);
                if (r < 0) {
                        gc_log(GC_LOG_ERROR, "cannot read the configuration", "file",
                               o->config_path, "error", strerror(-r), NULL);
                        return 2;
                }
                c->cfg = gc_config_parse(file.data, file.len, err, sizeof(err));
                gc_buf_free(&file);
                if (!c->cfg) {
                        gc_log(GC_LOG_ERROR, "bad configuration", "file", o->config_path, "error",
                               err, NULL);
                        return 2;
                }
        } else {
                c->cfg = gc_config_default();
        }
        if (o->kubeconfig)
                r = gc_kube_config_load(o->kubeconfig, o->context, &c->kcfg, err, sizeof(err));
        else
                r = gc_kube_config_incluster(&c->kcfg, err, sizeof(err));
        if (r < 0) {
                gc_log(GC_LOG_ERROR, "cannot find the API server", "kubeconfig",
                       o->kubeconfig ? o->kubeconfig : "(in-cluster)", "error", err, NULL);
                return 2;
        }
        c->ns = o->ns ? o->ns : c->kcfg.namespace;
        if (!c->ns || !*c->ns) {
                gc_log(GC_LOG_ERROR, "no namespace: give --namespace or GPU_COST_NAMESPACE", NULL);
                return 2;
        }
        c->kw = gc_kube_new(&c->kcfg, err, sizeof(err));
        if (c->kw && o->leader_election)
                gc_kube_set_write_fence(c->kw, ctl__fence, c);
        if (c->kw && o->id && gc_kube_set_writer(c->kw, o->id) < 0) {
                snprintf(err, sizeof(err), "out of memory");
                c->kw = gc_kube_free(c->kw);
        }
        c->pool = gc_strpool_new((size_t)1 << 30);
        if (!c->kw || !c->pool || !c->cfg) {
                gc_log(GC_LOG_ERROR, "cannot start", "error", c->kw ? "out of memory" : err, NULL);
                return 1;
        }
        c->ledger = gc__ctl_ledger_new(c);
        gc_config_account_opts(c->cfg, &ao);
        if (c->ledger)
                c->acct = gc_accountant_new(&ao, c->pool, c->ledger);
        c->owners = gc_owner_table_new(0);
        if (!c->acct || !c->owners || gc__ctl_mirror_new(c) < 0) {
                gc_log(GC_LOG_ERROR, "cannot start", "error", "out of memory", NULL);
                return 1;
        }
        gc_config_model_opts(c->cfg, c->pool, &c->mo);
        return 0;
}

/* The resource.k8s.io versions gpu-cost reads, newest first (the decoders read all three). */
static const char *const ctl__dra_versions[] = {"v1", "v1beta2", "v1beta1"};

/* Which version of group (an APIGroup document) to use, or NULL. */
static const char *ctl__dra_pick(const cJSON *group)
{
        const cJSON *vs = cJSON_GetObjectItemCaseSensitive(group, "versions"), *v;

        for (size_t i = 0; i < sizeof(ctl__dra_versions) / sizeof(ctl__dra_versions[0]); i++)
                cJSON_ArrayForEach(v, vs)
                {
                        const cJSON *ver = cJSON_GetObjectItemCaseSensitive(v, "version");

                        if (cJSON_IsString(ver) && ver->valuestring &&
                            strcmp(ver->valuestring, ctl__dra_versions[i]) == 0)
                                return ctl__dra_versions[i];
                }
        return NULL;
}

int gc__ctl_dra_discover(ctl *c)
{
        long status = 0;
        gc_buf body;
        char err[256];
        cJSON *doc;
        const char *v;
        int r = -EIO;

        /* A restarting API server may fail a request or two: retry for about 30 s. */
        for (int attempt = 0; attempt < 30 && !c->inf_stop; attempt++) {
                r = gc_kube_request(c->kw, "GET", "/apis/resource.k8s.io", NULL, NULL, 0, &status,
                                    &body, err, sizeof(err));
                if (r == 0 && (status == 200 || status == 404))
                        break;
                if (r == 0)
                        snprintf(err, sizeof(err), "HTTP %ld", status);
                gc_buf_free(&body);
                r = -EIO;
                sleep(1);
        }
        if (r < 0) {
                gc_log(GC_LOG_ERROR,
                       "cannot ask the API server which resource.k8s.io versions it serves",
                       "error", err, NULL);
                return r;
        }
        doc = status == 200 ? cJSON_ParseWithLength(body.data, body.len) : NULL;
        v = doc ? ctl__dra_pick(doc) : NULL;
        gc_buf_free(&body);
        cJSON_Delete(doc);
        if (!v) {
                c->dra_version[0] = '\0';
                snprintf(c->dra_note, sizeof(c->dra_note),
                         "the API server serves no resource.k8s.io version gpu-cost reads (v1, "
                         "v1beta2, v1beta1): GPUs allocated through ResourceClaims are not seen");
                gc_log(GC_LOG_INFO,
                       "Dynamic Resource Allocation not served: watching device-plugin "
                       "GPUs only",
                       "detail", c->dra_note, NULL);
                return 0;
        }
        gc_strlcpy(c->dra_version, v, sizeof(c->dra_version));
        snprintf(c->dra_paths[0], sizeof(c->dra_paths[0]),
                 "/apis/resource.k8s.io/%s/resourceslices", v);
        snprintf(c->dra_paths[1], sizeof(c->dra_paths[1]),
                 "/apis/resource.k8s.io/%s/resourceclaims", v);
        snprintf(c->dra_paths[2], sizeof(c->dra_paths[2]), "/apis/resource.k8s.io/%s/deviceclasses",
                 v);
        gc_log(GC_LOG_INFO,
               "Dynamic Resource Allocation served: watching ResourceSlices, "
               "ResourceClaims and DeviceClasses",
               "version", v, NULL);
        return 0;
}

/* Waits until the informers of kinds[0..n) did their first LIST; 0, or -1 when stopped. */
static int ctl__wait_synced(ctl *c, const int *kinds, size_t n, const volatile sig_atomic_t *stop)
{
        for (;;) {
                size_t done = 0;

                for (size_t i = 0; i < n; i++)
                        done += atomic_load(&c->inf[kinds[i]].synced) != 0;
                if (done == n)
                        return 0;
                if (*stop || atomic_load(&c->fatal))
                        return -1;
                atomic_store(&c->last_tick, (long)gc__ctl_mono());
                usleep(50 * 1000);
        }
}

/*
 * ResourceSlices and ResourceClaims first (a DRA node is kept by the node decoder only once its
 * slices are known), then namespaces, nodes, ReplicaSets and Jobs, so that pods are priced, and
 * their workloads resolved, from the first LIST on.
 */
static int ctl__start_watching(ctl *c, const volatile sig_atomic_t *stop)
{
        static const int dra[] = {CTL_SLICES, CTL_CLAIMS, CTL_CLASSES},
                         base[] = {CTL_NAMESPACES, CTL_NODES, CTL_REPLICASETS, CTL_JOBS};
        int r;

        /* DRA nodes offer no GPU resource: kept when their slices publish GPU devices. The
           accountant is the one the checkpoint restore left. */
        c->mo.keep_node = gc_accountant_dra_node;
        c->mo.keep_node_ud = c->acct;
        gc_accountant_set_owners(c->acct, c->owners);
        if (gc__ctl_dra_discover(c) < 0) {
                gc__ctl_fatal(c, "cannot discover the resource.k8s.io API group");
                return 0;
        }
        if (c->dra_version[0]) {
                for (size_t i = 0; i < sizeof(dra) / sizeof(dra[0]); i++) {
                        r = gc__ctl_informer_start(c, dra[i]);
                        if (r < 0)
                                return r;
                }
                if (ctl__wait_synced(c, dra, sizeof(dra) / sizeof(dra[0]), stop) < 0)
                        return 0;
        }
        for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++) {
                r = gc__ctl_informer_start(c, base[i]);
                if (r < 0)
                        return r;
        }
        (void)ctl__wait_synced(c, base, sizeof(base) / sizeof(base[0]), stop);
        if (*stop || atomic_load(&c->fatal))
                return 0;
        return gc__ctl_informer_start(c, CTL_PODS);
}

/* One Lease attempt (lease thread); returns 1 leader, 0 not, -1 when leadership was lost.
 * *ret_failed: the API server did not answer the attempt (who holds it is not known). */
static int ctl__lease(ctl *c, gc_kube_lease *lease, int *ret_failed)
{
        char err[256];
        int leader = 0, r;

        r = gc_kube_lease_tick(c->kl, lease, gc__ctl_mono(), &leader, err, sizeof(err));
        /* Before `leader` changes: a replica that reads it set finds the fence already open. */
        atomic_store(&c->fence_ms, gc_kube_lease_fence_ms(lease));
        *ret_failed = r < 0;
        if (r < 0)
                gc_log(GC_LOG_WARN, "lease update failed", "lease", lease->name, "error", err,
                       NULL);
        if (atomic_load(&c->leader) && !leader) {
                atomic_store(&c->leader, 0);
                return -1;
        }
        if (!atomic_load(&c->leader) && leader)
                gc_log(GC_LOG_INFO, "became the leader", "lease", lease->name, "identity",
                       lease->identity, NULL);
        atomic_store(&c->leader, leader);
        return leader;
}

/* The lease thread: acquire or renew every 2 s, whatever the main loop is doing. */
static void *ctl__lease_main(void *arg)
{
        ctl *c = arg;
        int was_standby = 0;

        while (!c->lease_stop && !atomic_load(&c->fatal)) {
                int failed;

                if (ctl__lease(c, &c->lease, &failed) < 0) {
                        gc__ctl_fatal(c, "lost the leader lease: exiting so that only one replica "
                                         "writes");
                        break;
                }
                /* A failed read says nothing of another replica: the warning said what. */
                if (!atomic_load(&c->leader) && !was_standby && !failed) {
                        gc_log(GC_LOG_INFO, "standby: another replica holds the lease", "holder",
                               c->lease.holder, NULL);
                        was_standby = 1;
                }
                for (int i = 0; i < 20 && !c->lease_stop && !atomic_load(&c->fatal); i++)
                        usleep(100 * 1000);
        }
        return NULL;
}

/*
 * Frees the strings nothing holds any more (the uids and names of pods long gone, folded into
 * history's rest or past retention): each holder marks what it keeps, then the pool sweeps
 * (util.h). Once the pool holds half again as many strings as after its last sweep, so the work
 * is proportional to the garbage; always with --test-sweep-strings. A snapshot still read from
 * before the last sweep defers it (-EBUSY). Takes c->mu; main thread.
 */
static void ctl__sweep_strings(ctl *c)
{
        size_t n, freed = 0;
        char count[24], left[24], ms[24];
        int64_t t0;
        int r;

        pthread_mutex_lock(&c->mu);
        n = gc_strpool_count(c->pool);
        if (!c->o->test_sweep_always && n < c->pool_live + c->pool_live / 2 + 4096) {
                pthread_mutex_unlock(&c->mu);
                return;
        }
        t0 = ctl__mono_ms();
        r = gc_strpool_sweep_begin(c->pool);
        if (r == 0) {
                gc_ledger_mark(c->ledger, c->pool);
                gc_accountant_mark(c->acct, c->pool);
                gc_mirror_mark(c->mirror);
                gc__ctl_usage_mark(c);
                r = gc_strpool_sweep(c->pool, &freed);
        }
        if (r == 0)
                c->pool_live = gc_strpool_count(c->pool);
        pthread_mutex_unlock(&c->mu);
        if (r == -EBUSY)
                return; /* an older snapshot is still read: next time */
        snprintf(count, sizeof(count), "%zu", freed);
        snprintf(left, sizeof(left), "%zu", n - freed);
        snprintf(ms, sizeof(ms), "%lld", (long long)(ctl__mono_ms() - t0));
        if (r < 0)
                gc_log(GC_LOG_WARN, "cannot sweep the string pool", "error", strerror(-r), NULL);
        else
                gc_log(GC_LOG_DEBUG, "string pool swept", "freed", count, "strings", left, "ms", ms,
                       NULL);
}

/* Everything up to the main loop: configuration, usage thread, API, servers, Lease thread. An
 * exit status, or 0 to go on. */
static int ctl__start(ctl *c, const gc_controller_opts *o)
{
        char err[256];
        int rc;

        rc = ctl__setup(c, o);
        if (rc != 0)
                return rc;
        if (gc__ctl_usage_start(c) < 0 || gc__ctl_api_new(c) < 0)
                return 1;
        c->started_at = gc__ctl_now();
        if (gc__ctl_health_start(c) < 0)
                return 1;
        c->lease.ns = c->ns;
        c->lease.name = o->lease_name;
        c->lease.identity = o->id;
        c->lease.duration_s = (int)o->lease_duration_s;
        atomic_store(&c->leader, !o->leader_election);
        gc_log(GC_LOG_INFO, "started", "namespace", c->ns, "identity", o->id, "server",
               c->kcfg.server, NULL);
        if (o->leader_election) {
                c->kl = gc_kube_new(&c->kcfg, err, sizeof(err));
                if (!c->kl || pthread_create(&c->lease_thread, NULL, ctl__lease_main, c) != 0) {
                        gc_log(GC_LOG_ERROR, "cannot start the lease thread", "error",
                               c->kl ? "pthread_create" : err, NULL);
                        return 1;
                }
                c->lease_started = 1;
        }
        return 0;
}

/* The main loop's own state (main thread only). */
typedef struct ctl__loop {
        int64_t next_checkpoint, next_report;
        int watching; /* the checkpoint restored and the informers started */
        int leading;  /* this replica writes: checkpoints, reports, snapshots */
} ctl__loop;

/* One turn of the main loop: -1 to stop (c->fatal says why, when it is set). */
static int ctl__tick(ctl *c, ctl__loop *l, const volatile sig_atomic_t *stop)
{
        const gc_controller_opts *o = c->o;
        int64_t now;

        atomic_store(&c->last_tick, (long)gc__ctl_mono());
        /* Leader or standby alike: restore, then watch and account (a warm standby writes
           nothing, but its ledger is live when it takes over). */
        if (!l->watching) {
                if (gc__ctl_checkpoint_restore(c) < 0)
                        return -1;
                if (ctl__start_watching(c, stop) < 0) {
                        gc__ctl_fatal(c, "cannot start the informer threads");
                        return -1;
                }
                l->watching = 1;
        }
        if (atomic_load(&c->leader) && !l->leading) {
                /* A standby taking over: the old leader went on writing generations. */
                if (o->leader_election && gc__ctl_checkpoint_sync_generation(c) < 0)
                        return -1; /* it said why */
                l->leading = 1;
        }
        if (l->leading && !atomic_load(&c->ready) && atomic_load(&c->inf[CTL_PODS].synced)) {
                atomic_store(&c->ready, 1);
                gc_log(GC_LOG_INFO, "ready", NULL);
                gc_malloc_give_back(); /* the garbage of the initial LISTs */
        }
        now = gc__ctl_now();
        if (!l->leading && atomic_load(&c->inf[CTL_PODS].synced) && now >= l->next_checkpoint) {
                l->next_checkpoint = now + o->checkpoint_interval_s;
                gc__ctl_checkpoint_fold(c, now); /* memory stays bounded on a standby too */
                ctl__sweep_strings(c);
        }
        if (!atomic_load(&c->ready))
                return 0;
        /* Every interval even when nothing changed: open intervals accrue with time, and a
         * snapshot's "now" is where they end. A standby publishes none (its API answers 503, as
         * its /readyz does). */
        gc__ctl_usage_tick(c, now);
        if (now >= c->snapshot_at + o->snapshot_interval_s) {
                c->snapshot_at = now;
                gc__ctl_snapshot_publish(c, now);
                if (o->test_sweep_always)
                        ctl__sweep_strings(c);
        }
        if (now >= l->next_checkpoint) {
                l->next_checkpoint = now + o->checkpoint_interval_s;
                gc__ctl_checkpoint_save(c);
                ctl__sweep_strings(c); /* after the fold: what it let go */
                gc_malloc_give_back(); /* its parts, and the fold's garbage */
        }
        if (now >= l->next_report) {
                l->next_report = now + o->report_interval_s;
                gc__ctl_publish(c, now);
        }
        return 0;
}

/* After the loop: informers and Lease thread stopped, a last checkpoint on SIGTERM, the Lease
 * let go. The exit status. */
static int ctl__shutdown(ctl *c, const ctl__loop *l)
{
        const gc_controller_opts *o = c->o;
        char err[256];
        int rc = 0;

        gc__ctl_informers_stop(c);
        c->lease_stop = 1;
        if (c->lease_started)
                pthread_join(c->lease_thread, NULL);
        c->lease_started = 0;
        if (atomic_load(&c->fatal)) {
                gc_log(GC_LOG_ERROR, c->fatal_msg, NULL);
                rc = 1;
        }
        if (l->watching && atomic_load(&c->leader) && atomic_load(&c->ready) &&
            !atomic_load(&c->fatal)) {
                /* SIGTERM: keep what we know, then let a standby take over at once. */
                if (gc__ctl_checkpoint_save(c) < 0)
                        rc = 1;
        }
        /* The lease thread is joined: its client and record are the main thread's now. */
        if (o->leader_election && atomic_load(&c->leader) && c->kl &&
            gc_kube_lease_release(c->kl, &c->lease, err, sizeof(err)) < 0)
                gc_log(GC_LOG_WARN, "cannot release the lease", "error", err, NULL);
        gc__ctl_health_stop(c);
        gc_log(GC_LOG_INFO, "stopped", NULL);
        return rc;
}

int gc_controller_run(const gc_controller_opts *o, const volatile sig_atomic_t *stop)
{
        ctl__loop l;
        int rc;
        ctl c;

        memset(&c, 0, sizeof(c));
        memset(&l, 0, sizeof(l));
        rc = ctl__start(&c, o);
        if (rc == 0) {
                while (!*stop && !atomic_load(&c.fatal) && ctl__tick(&c, &l, stop) == 0)
                        usleep(200 * 1000);
                rc = ctl__shutdown(&c, &l);
        }
        c.lease_stop = 1;
        if (c.lease_started)
                pthread_join(c.lease_thread, NULL);
        c.kl = gc_kube_free(c.kl);
        c.api = gc_api_free(c.api); /* the server is stopped: no request holds a snapshot */
        gc__ctl_usage_stop(&c);
        ctl__free(&c);
        return rc;
}
