/* informer: list/watch threads for namespaces, nodes, pods, (Dynamic Resource Allocation)
 * ResourceSlices and ResourceClaims, and the ReplicaSets and Jobs owning pods, decoding what
 * they receive for the cluster mirror (pkg/mirror). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller_int.h"
#include "log/log.h"

static const char *const ctl__paths[CTL_RESUMED] = {"/api/v1/namespaces", "/api/v1/nodes",
                                                    "/api/v1/pods"};

/* The collection an informer watches. */
static const char *ctl__path(const ctl *c, int kind)
{
        if (kind < CTL_RESUMED)
                return ctl__paths[kind];
        if (kind == CTL_REPLICASETS)
                return "/apis/apps/v1/replicasets";
        if (kind == CTL_JOBS)
                return "/apis/batch/v1/jobs";
        return c->dra_paths[kind - CTL_RESUMED];
}

/* The objects' decoders, each feeding the mirror (pkg/mirror holds the rules); a refused
 * object is noted and logged here. Under c->mu. */

static int ctl__on_namespace(ctl *c, gc_kube_event ev, const cJSON *obj, int64_t now)
{
        gc_namespace ns;
        char err[256];
        int r;

        (void)now;
        r = gc_namespace_from_json(obj, &c->mo, &ns, err, sizeof(err));
        if (r <= 0) {
                if (r < 0)
                        gc_diag_add(&c->diag, "namespace %s skipped: %s",
                                    gc_kube_meta(obj, "name") ? gc_kube_meta(obj, "name") : "?",
                                    err);
                return 0;
        }
        return gc_mirror_namespace(c->mirror, ev == GC_KUBE_DELETED, &ns);
}

static int ctl__on_node(ctl *c, gc_kube_event ev, const cJSON *obj, int64_t now)
{
        gc_node n;
        char err[256];
        int r;

        memset(&n, 0, sizeof(n));
        r = gc_node_from_json(obj, &c->mo, &n, err, sizeof(err));
        if (r < 0) {
                gc_diag_add(&c->diag, "node %s skipped: %s",
                            gc_kube_meta(obj, "name") ? gc_kube_meta(obj, "name") : "?", err);
                return 0;
        }
        r = gc_mirror_node(c->mirror, ev == GC_KUBE_DELETED, gc_kube_meta(obj, "name"),
                           r == 0 ? NULL : &n, now);
        gc_node_release(&n);
        return r;
}

static int ctl__on_pod(ctl *c, gc_kube_event ev, const cJSON *obj, int64_t now)
{
        gc_pod p;
        char err[256];
        int r;

        r = gc_pod_from_json(obj, &c->mo, &p, err, sizeof(err));
        if (r < 0) {
                const char *ns = gc_kube_meta(obj, "namespace"), *name = gc_kube_meta(obj, "name");

                gc_diag_add(&c->diag, "pod %s/%s skipped: %s", ns ? ns : "?", name ? name : "?",
                            err);
                gc_log(GC_LOG_WARN, "pod skipped", "namespace", ns, "pod", name, "error", err,
                       NULL);
                return 0;
        }
        if (r == 0)
                return 0; /* holds no GPU */
        return gc_mirror_pod(c->mirror, ev == GC_KUBE_DELETED, &p, now);
}

/* ---- Dynamic Resource Allocation (docs/dra.md) ------------------------------------------------
 */

static int ctl__on_slice(ctl *c, gc_kube_event ev, const cJSON *obj, int64_t now)
{
        gc_dra_device_vec v;
        const char *name = gc_kube_meta(obj, "name");
        char err[256];
        int r;

        if (!name)
                return 0;
        if (ev == GC_KUBE_DELETED)
                return gc_mirror_slice(c->mirror, 1, name, NULL, 0, now);
        memset(&v, 0, sizeof(v));
        r = gc_slice_from_json(obj, &c->mo, &v, err, sizeof(err));
        if (r < 0) {
                /* Refused whole (a bound, a bad device): what it published before stays. */
                gc_diag_add(&c->diag, "ResourceSlice %s skipped: %s", name, err);
                gc_log(GC_LOG_WARN, "ResourceSlice skipped", "resourceslice", name, "error", err,
                       NULL);
                free(v.v);
                return 0;
        }
        r = gc_mirror_slice(c->mirror, 0, name, v.v, v.n, now);
        free(v.v);
        return r;
}

static int ctl__on_claim(ctl *c, gc_kube_event ev, const cJSON *obj, int64_t now)
{
        const char *ns = gc_kube_meta(obj, "namespace"), *name = gc_kube_meta(obj, "name");
        gc_claim cl;
        char err[256];
        int r;

        (void)now;
        if (!name)
                return 0; /* a name no claim can have: the decoder would refuse it too */
        if (ev == GC_KUBE_DELETED)
                return gc_mirror_claim(c->mirror, 1, ns, name, NULL);
        memset(&cl, 0, sizeof(cl));
        r = gc_claim_from_json(obj, &c->mo, &cl, err, sizeof(err));
        if (r < 0) {
                char key[64 + 1 + 253 + 1];

                snprintf(key, sizeof(key), "%s/%s", ns ? ns : "default", name);
                gc_diag_add(&c->diag, "ResourceClaim %s skipped: %s", key, err);
                gc_log(GC_LOG_WARN, "ResourceClaim skipped", "resourceclaim", key, "error", err,
                       NULL);
                return 0;
        }
        r = gc_mirror_claim(c->mirror, 0, ns, name, r == 1 ? &cl : NULL);
        gc_claim_release(&cl);
        return r;
}

/* A DeviceClass: kept when its selectors require a GPU driver read (for the advisor's advice). */
static int ctl__on_class(ctl *c, gc_kube_event ev, const cJSON *obj, int64_t now)
{
        gc_device_class dc;
        char err[256];
        int r;

        (void)now;
        memset(&dc, 0, sizeof(dc));
        r = gc_device_class_from_json(obj, &c->mo, &dc, err, sizeof(err));
        if (r < 0) {
                const char *name = gc_kube_meta(obj, "name");

                gc_log(GC_LOG_WARN, "DeviceClass skipped", "deviceclass", name, "error", err, NULL);
                return 0;
        }
        return gc_mirror_device_class(c->mirror, ev == GC_KUBE_DELETED, gc_kube_meta(obj, "name"),
                                      r == 0 ? NULL : &dc);
}

/* A ReplicaSet or Job: the pods' workloads (docs/workloads.md). */
static int ctl__on_owner(ctl *c, int kind, gc_kube_event ev, const cJSON *obj, int64_t now)
{
        const char *okind = gc_mirror_owner_kind(kind);
        gc_owner o;
        char err[256];
        int r;

        r = gc_owner_from_json(obj, okind, &o, err, sizeof(err));
        if (r < 0) {
                const char *ns = gc_kube_meta(obj, "namespace"), *name = gc_kube_meta(obj, "name");

                gc_log(GC_LOG_WARN, "owner skipped", "kind", okind, "namespace", ns, "name", name,
                       "error", err, NULL);
                return 0;
        }
        return gc_mirror_owner(c->mirror, kind, ev == GC_KUBE_DELETED, &o, now);
}

/* The mirror's log lines are the daemon's. */
static void ctl__mirror_log(void *ud, int level, const char *msg, const char *const *f)
{
        (void)ud;
        gc_log(level == GC_MIRROR_LOG_ERROR  ? GC_LOG_ERROR
               : level == GC_MIRROR_LOG_WARN ? GC_LOG_WARN
               : level == GC_MIRROR_LOG_INFO ? GC_LOG_INFO
                                             : GC_LOG_DEBUG,
               msg, f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], NULL);
}

/* A ResourceSlice names a node not known as a GPU node: the nodes' informer lists again. */
static void ctl__mirror_relist_nodes(void *ud, const char *node)
{
        ctl *c = ud;

        if (!c->inf[CTL_NODES].started)
                return;
        gc_log(GC_LOG_DEBUG, "a ResourceSlice names a node not known as a GPU node: listing nodes",
               "node", node, NULL);
        c->inf[CTL_NODES].wake = 1;
}

int gc__ctl_mirror_new(ctl *c)
{
        gc_mirror_opts mo;

        memset(&mo, 0, sizeof(mo));
        mo.pool = c->pool;
        mo.ledger = c->ledger;
        mo.acct = c->acct;
        mo.owners = c->owners;
        mo.diag = &c->diag;
        mo.currency = c->cfg->catalog ? c->cfg->catalog->currency : NULL;
        mo.log = ctl__mirror_log;
        mo.relist_nodes = ctl__mirror_relist_nodes;
        mo.ud = c;
        c->mirror = gc_mirror_new(&mo);
        return c->mirror ? 0 : -ENOMEM;
}

static int ctl__list_begin(void *ud)
{
        ctl_informer *inf = ud;
        ctl *c = inf->c;

        pthread_mutex_lock(&c->mu);
        gc_mirror_list_begin(c->mirror, inf->kind);
        inf->listing = 1;
        pthread_mutex_unlock(&c->mu);
        return 0;
}

/* The watch library's resume point moved (a completed LIST, a bookmark): the ledger has it all. */
static void ctl__progress(void *ud, const char *rv)
{
        ctl_informer *inf = ud;
        ctl *c = inf->c;

        pthread_mutex_lock(&c->mu);
        gc_strlcpy(c->rv[inf->kind], rv, sizeof(c->rv[inf->kind]));
        if (inf->resuming && inf->kind == CTL_PODS)
                gc_mirror_replayed(
                    c->mirror); /* a bookmark: the server accepted the resume point */
        pthread_mutex_unlock(&c->mu);
        inf->resuming = 0;
        inf->lost_at = 0; /* a bookmark: the stream is whole up to here */
}

/* Objects not seen in the LIST that just completed are gone (the mirror's rules). */
static int ctl__list_end(void *ud)
{
        ctl_informer *inf = ud;
        ctl *c = inf->c;
        int64_t now = gc__ctl_now();
        unsigned flags = (inf->resuming ? GC_MIRROR_RESUMING : 0) |
                         (inf->resume_failed ? GC_MIRROR_RESUME_FAILED : 0);

        inf->lost_at = 0; /* the LIST is the state now */
        pthread_mutex_lock(&c->mu);
        inf->listing = 0;
        (void)gc_mirror_list_end(c->mirror, inf->kind, now,
                                 inf->kind == CTL_PODS ? inf->expired_since : 0, flags);
        inf->expired_since = 0;
        pthread_mutex_unlock(&c->mu);
        if (!atomic_exchange(&inf->synced, 1))
                gc_log(GC_LOG_INFO, "initial sync done", "resource", gc__ctl_kind_name(inf->kind),
                       NULL);
        else
                atomic_fetch_add(&inf->relists, 1);
        return 0;
}

static int ctl__object(void *ud, gc_kube_event ev, const cJSON *obj)
{
        ctl_informer *inf = ud;
        ctl *c = inf->c;
        int64_t now = gc__ctl_now();
        int r;

        atomic_store(&inf->last_event, (long)now);
        pthread_mutex_lock(&c->mu);
        if (!inf->listing)
                inf->lost_at = 0; /* the stream delivers again: nothing was lost */
        switch (inf->kind) {
        case CTL_PODS:
                r = ctl__on_pod(c, ev, obj, now);
                break;
        case CTL_NODES:
                r = ctl__on_node(c, ev, obj, now);
                break;
        case CTL_SLICES:
                r = ctl__on_slice(c, ev, obj, now);
                break;
        case CTL_CLAIMS:
                r = ctl__on_claim(c, ev, obj, now);
                break;
        case CTL_CLASSES:
                r = ctl__on_class(c, ev, obj, now);
                break;
        case CTL_REPLICASETS:
        case CTL_JOBS:
                r = ctl__on_owner(c, inf->kind, ev, obj, now);
                break;
        default:
                r = ctl__on_namespace(c, ev, obj, now);
                break;
        }
        /* A watch event's resourceVersion is the resume point once its effects are in, under
           the same lock (a LIST's objects are not: its own version counts at its end). */
        if (r >= 0 && !inf->listing) {
                const char *rv = gc_kube_meta(obj, "resourceVersion");

                if (rv && strlen(rv) < sizeof(c->rv[inf->kind]))
                        gc_strlcpy(c->rv[inf->kind], rv, sizeof(c->rv[inf->kind]));
                if (inf->resuming && inf->kind == CTL_PODS)
                        gc_mirror_replayed(
                            c->mirror); /* the replay brings what happened meanwhile */
                inf->resuming = 0;
        }
        pthread_mutex_unlock(&c->mu);
        if (r < 0) {
                char msg[256];

                snprintf(msg, sizeof(msg), "%s: cannot record an object: %s",
                         gc__ctl_kind_name(inf->kind), strerror(-r));
                gc__ctl_fatal(c, msg);
        }
        return r;
}

static void ctl__note(void *ud, gc_kube_note note, long http_status, const char *msg)
{
        ctl_informer *inf = ud;
        char status[24];

        snprintf(status, sizeof(status), "%ld", http_status);
        switch (note) {
        case GC_KUBE_NOTE_LISTED:
                gc_log(GC_LOG_DEBUG, "listed", "resource", gc__ctl_kind_name(inf->kind), "detail",
                       msg, NULL);
                break;
        case GC_KUBE_NOTE_WATCH_START:
                atomic_fetch_add(&inf->restarts, 1);
                gc_log(GC_LOG_DEBUG, "watch started", "resource", gc__ctl_kind_name(inf->kind),
                       "detail", msg, NULL);
                break;
        case GC_KUBE_NOTE_WATCH_END:
                if (inf->resuming && inf->kind == CTL_PODS) {
                        pthread_mutex_lock(&inf->c->mu);
                        gc_mirror_replayed(inf->c->mirror);
                        pthread_mutex_unlock(&inf->c->mu);
                }
                inf->resuming = 0;
                inf->lost_at = 0; /* a normal end: the stream held everything until now */
                gc_log(GC_LOG_DEBUG, "watch ended by the server", "resource",
                       gc__ctl_kind_name(inf->kind), NULL);
                break;
        case GC_KUBE_NOTE_EXPIRED:
                if (inf->resuming) {
                        inf->resume_failed = 1;
                        inf->resuming = 0;
                        gc_log(GC_LOG_WARN,
                               "the checkpoint's resourceVersion is past the API server's event "
                               "window (410): listing again; what happened between the "
                               "checkpoint and now is estimated and reported as a blind span",
                               "resource", gc__ctl_kind_name(inf->kind), "detail", msg, NULL);
                        break;
                }
                /* Lost since the connection broke, or (a 410 inside a live stream: it fell
                   behind) since its last event. */
                pthread_mutex_lock(&inf->c->mu);
                inf->expired_since =
                    inf->lost_at > 0 ? inf->lost_at : (int64_t)atomic_load(&inf->last_event);
                if (inf->expired_since <= 0)
                        inf->expired_since = gc__ctl_now();
                pthread_mutex_unlock(&inf->c->mu);
                gc_log(GC_LOG_WARN,
                       "watch expired (410): listing again; what the server no "
                       "longer holds is estimated and reported as a blind span",
                       "resource", gc__ctl_kind_name(inf->kind), "detail", msg, NULL);
                break;
        case GC_KUBE_NOTE_IDLE_TIMEOUT:
                if (inf->lost_at == 0)
                        inf->lost_at = gc__ctl_now();
                gc_log(GC_LOG_WARN, "watch idle too long: reconnecting", "resource",
                       gc__ctl_kind_name(inf->kind), NULL);
                break;
        case GC_KUBE_NOTE_RETRY:
                if (inf->lost_at == 0)
                        inf->lost_at = gc__ctl_now();
                gc_log(GC_LOG_WARN, "API request failed: retrying", "resource",
                       gc__ctl_kind_name(inf->kind), "status", status, "detail", msg, NULL);
                break;
        case GC_KUBE_NOTE_FORBIDDEN:
                gc_log(GC_LOG_ERROR, "the API server refused list/watch: check the ClusterRole",
                       "resource", gc__ctl_kind_name(inf->kind), "verb", "list,watch", "status",
                       status, "detail", msg, NULL);
                break;
        case GC_KUBE_NOTE_BAD_EVENT:
                gc_log(GC_LOG_WARN, "bad watch event skipped: listing again", "resource",
                       gc__ctl_kind_name(inf->kind), "detail", msg, NULL);
                break;
        }
}

static void *ctl__informer_main(void *arg)
{
        ctl_informer *inf = arg;
        ctl *c = inf->c;
        gc_kube_watch_ops ops = {
            .list_begin = ctl__list_begin,
            .object = ctl__object,
            .list_end = ctl__list_end,
            .note = ctl__note,
            .progress = ctl__progress,
        };
        gc_kube_watch_opts wo;
        char err[256], msg[400];
        gc_kube *k;
        int r;

        memset(&wo, 0, sizeof(wo));
        wo.path = ctl__path(c, inf->kind);
        wo.metadata_only = gc_mirror_owner_kind(inf->kind) != NULL;
        if (gc__ctl_resumes(inf->kind) && c->resume_rv[inf->kind][0]) {
                wo.resume_rv = c->resume_rv[inf->kind];
                wo.resume_exact = inf->kind == CTL_CLAIMS;
                inf->resuming = 1;
                gc_log(GC_LOG_INFO, "resuming the watch from the checkpoint", "resource",
                       gc__ctl_kind_name(inf->kind), "resourceVersion", wo.resume_rv, NULL);
        }
        k = gc_kube_new(&c->kcfg, err, sizeof(err));
        if (!k) {
                snprintf(msg, sizeof(msg), "%s: API client: %s", gc__ctl_kind_name(inf->kind), err);
                gc__ctl_fatal(c, msg);
                return NULL;
        }
        /* Woken without a stop: LIST again (the objects as they are now), then watch on. */
        for (;;) {
                r = gc_kube_watch_run(k, &wo, &ops, inf, &inf->wake);
                if (r < 0 || c->inf_stop)
                        break;
                inf->wake = 0;
                wo.resume_rv = NULL;
                gc_log(GC_LOG_DEBUG, "listing again on request", "resource",
                       gc__ctl_kind_name(inf->kind), NULL);
        }
        gc_kube_free(k);
        if (r == -EACCES && gc_mirror_owner_kind(inf->kind)) {
                /* Workloads are a convenience: without the owners, pods resolve by the
                   fallbacks (docs/workloads.md); pricing goes on. */
                gc_log(GC_LOG_ERROR,
                       "forbidden to list/watch the pods' owners: workloads resolve by names "
                       "and labels only; grant get, list and watch on them in the ClusterRole",
                       "resource", gc__ctl_kind_name(inf->kind), NULL);
                atomic_store(&inf->synced, 1);
                return NULL;
        }
        if (r == -EACCES) {
                snprintf(msg, sizeof(msg),
                         "forbidden to list/watch %s: the ClusterRole must grant list and watch "
                         "on %s%s",
                         gc__ctl_kind_name(inf->kind), gc__ctl_kind_name(inf->kind),
                         inf->kind < CTL_RESUMED ? "" : " in the resource.k8s.io API group");
                gc__ctl_fatal(c, msg);
        } else if (r == -EKEYREJECTED) {
                snprintf(msg, sizeof(msg), "cannot list/watch %s", gc__ctl_kind_name(inf->kind));
                gc__ctl_fatal_api(c, r, msg, NULL, NULL);
        } else if (r < 0 && !atomic_load(&c->fatal)) {
                snprintf(msg, sizeof(msg), "%s: watch failed: %s", gc__ctl_kind_name(inf->kind),
                         strerror(-r));
                gc__ctl_fatal(c, msg);
        }
        return NULL;
}

int gc__ctl_informer_start(ctl *c, int kind)
{
        ctl_informer *inf = &c->inf[kind];
        int r;

        inf->c = c;
        inf->kind = kind;
        inf->wake = c->inf_stop;
        r = pthread_create(&inf->thread, NULL, ctl__informer_main, inf);
        if (r != 0)
                return -r;
        inf->started = 1;
        return 0;
}

void gc__ctl_informers_stop(ctl *c)
{
        c->inf_stop = 1;
        for (int i = 0; i < CTL_KINDS; i++)
                c->inf[i].wake = 1;
        for (int i = 0; i < CTL_KINDS; i++) {
                if (c->inf[i].started)
                        pthread_join(c->inf[i].thread, NULL);
                c->inf[i].started = 0;
        }
}
