/* e2e_kube: the kube client against a real kube-apiserver and etcd (run by run.sh beside it). */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube/kube.h"
#include "kube/kube_int.h"
#include "util/util.h"

/* Set from the environment by main; every one is required. */
static const char *env_server, *env_ca, *env_admin, *env_ctrl, *env_dir, *env_etcd, *env_script;

/* This run's suffix for namespaces and labels, so a kept cluster can run the test again. */
static char run_id[16];

/* "base-<run>", kept for the life of the process. */
static const char *nsn(const char *base)
{
        static char names[16][64];
        static size_t n;

        for (size_t i = 0; i < n; i++) {
                size_t len = strlen(base);

                if (strncmp(names[i], base, len) == 0 && names[i][len] == '-' &&
                    strcmp(names[i] + len + 1, run_id) == 0)
                        return names[i];
        }
        ck_assert_uint_lt(n, 16);
        snprintf(names[n], sizeof(names[n]), "%s-%s", base, run_id);
        return names[n++];
}

/* Formats into buf and returns it, for paths and labels with the run's names filled in. */
static char *fmt_into(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static char *fmt_into(char *buf, size_t size, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        return buf;
}
#define PATH(buf, ...) fmt_into(buf, sizeof(buf), __VA_ARGS__)

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap(double s)
{
        struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

        nanosleep(&ts, NULL);
}

static gc_kube *client(const char *server, const char *ca, const char *token)
{
        gc_kube_config cfg;
        gc_kube *k;
        char err[512];

        memset(&cfg, 0, sizeof(cfg));
        cfg.server = (char *)server;
        cfg.ca_file = (char *)ca;
        cfg.token = (char *)token;
        k = gc_kube_new(&cfg, err, sizeof(err));
        ck_assert_msg(k != NULL, "gc_kube_new: %s", err);
        return k;
}

static gc_kube *admin(void)
{
        return client(env_server, env_ca, env_admin);
}

/* One request that must reach the server; returns the status, the body in *out if given. */
static long api(gc_kube *k, const char *method, const char *path, const char *ctype,
                const char *body, gc_buf *out)
{
        gc_buf b;
        long status = 0;
        char err[512];
        int r;

        r = gc_kube_request(k, method, path, ctype, body, body ? strlen(body) : 0, &status, &b, err,
                            sizeof(err));
        ck_assert_msg(r == 0, "%s %s: %s", method, path, err);
        if (out)
                *out = b;
        else
                gc_buf_free(&b);
        return status;
}

static void mk_ns(gc_kube *k, const char *name, const char *labels_json)
{
        char body[512];
        long st;

        snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\",\"labels\":%s}}", name,
                 labels_json ? labels_json : "{}");
        st = api(k, "POST", "/api/v1/namespaces", "application/json", body, NULL);
        ck_assert_msg(st == 201 || st == 409, "create namespace %s: HTTP %ld", name, st);
}

static void mk_pod(gc_kube *k, const char *ns, const char *name)
{
        char path[256], body[512];
        long st;

        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
        snprintf(body, sizeof(body),
                 "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"team\":\"e2e\"}},"
                 "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}",
                 name);
        st = api(k, "POST", path, "application/json", body, NULL);
        ck_assert_msg(st == 201, "create pod %s/%s: HTTP %ld", ns, name, st);
}

static void del_pod(gc_kube *k, const char *ns, const char *name)
{
        char path[256];
        long st;

        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
        st = api(k, "DELETE", path, "application/json", "{\"gracePeriodSeconds\":0}", NULL);
        ck_assert_msg(st == 200 || st == 202, "delete pod %s/%s: HTTP %ld", ns, name, st);
}

/* ---- a watch in its own thread, recording what a cache built on it would hold --------------- */

#define MAX_OBJ 64
#define MAX_EV  256

typedef struct rec {
        pthread_mutex_t mu;
        pthread_cond_t cv;
        /* the object set, by name, as the caller of the watch would keep it */
        char *names[MAX_OBJ];
        int seen[MAX_OBJ]; /* delivered since the current list_begin */
        size_t n;
        int listing;
        /* the event log */
        int ev_type[MAX_EV];
        char *ev_name[MAX_EV];
        size_t n_ev;
        int n_list_begin, n_list_end;
        int notes[8];
        long note_status[8];
        char note_msg[8][512];
        /* hooks */
        const char *block_on; /* block the callback for this object's ADDED until released */
        int blocked, release;
        int stop_after_list; /* set stop at list_end */
        void (*on_first_object)(void);
        int first_done;
        /* the watch */
        volatile sig_atomic_t stop;
        gc_kube *k;
        gc_kube_watch_opts o;
        pthread_t th;
        int result;
        int done;
} rec;

static void rec_init(rec *r, const char *path)
{
        memset(r, 0, sizeof(*r));
        pthread_mutex_init(&r->mu, NULL);
        pthread_cond_init(&r->cv, NULL);
        r->o.path = path;
        r->o.timeout_seconds = 30;
        r->o.backoff_min_s = 0.2;
        r->o.backoff_max_s = 1;
}

static void rec_free(rec *r)
{
        for (size_t i = 0; i < r->n; i++)
                free(r->names[i]);
        for (size_t i = 0; i < r->n_ev; i++)
                free(r->ev_name[i]);
        gc_kube_free(r->k);
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->cv);
}

static long find(const rec *r, const char *name)
{
        for (size_t i = 0; i < r->n; i++)
                if (strcmp(r->names[i], name) == 0)
                        return (long)i;
        return -1;
}

static void drop_at(rec *r, size_t i)
{
        free(r->names[i]);
        r->names[i] = r->names[r->n - 1];
        r->seen[i] = r->seen[r->n - 1];
        r->n--;
}

static int cb_list_begin(void *ud)
{
        rec *r = ud;

        pthread_mutex_lock(&r->mu);
        r->n_list_begin++;
        r->listing = 1;
        for (size_t i = 0; i < r->n; i++)
                r->seen[i] = 0;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        return 0;
}

static int cb_list_end(void *ud)
{
        rec *r = ud;

        pthread_mutex_lock(&r->mu);
        /* Whatever the LIST did not show is gone. */
        for (size_t i = r->n; i-- > 0;)
                if (!r->seen[i])
                        drop_at(r, i);
        r->listing = 0;
        r->n_list_end++;
        if (r->stop_after_list)
                r->stop = 1;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        return 0;
}

static int cb_object(void *ud, gc_kube_event ev, const cJSON *obj)
{
        rec *r = ud;
        const char *name = gc_kube_meta(obj, "name");
        long i;

        ck_assert_ptr_nonnull(name);
        if (r->on_first_object && !r->first_done) {
                r->first_done = 1;
                r->on_first_object();
        }
        pthread_mutex_lock(&r->mu);
        if (r->n_ev < MAX_EV) {
                r->ev_type[r->n_ev] = (int)ev;
                r->ev_name[r->n_ev] = strdup(name);
                r->n_ev++;
        }
        i = find(r, name);
        if (ev == GC_KUBE_DELETED) {
                if (i >= 0)
                        drop_at(r, (size_t)i);
        } else if (i < 0 && r->n < MAX_OBJ) {
                r->names[r->n] = strdup(name);
                r->seen[r->n] = 1;
                r->n++;
        } else if (i >= 0) {
                r->seen[i] = 1;
        }
        pthread_cond_broadcast(&r->cv);
        if (ev == GC_KUBE_ADDED && r->block_on && strcmp(name, r->block_on) == 0) {
                r->blocked = 1;
                pthread_cond_broadcast(&r->cv);
                while (!r->release)
                        pthread_cond_wait(&r->cv, &r->mu);
        }
        pthread_mutex_unlock(&r->mu);
        return 0;
}

static void cb_note(void *ud, gc_kube_note note, long status, const char *msg)
{
        rec *r = ud;

        pthread_mutex_lock(&r->mu);
        r->notes[note]++;
        r->note_status[note] = status;
        gc_strlcpy(r->note_msg[note], msg, sizeof(r->note_msg[note]));
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
}

static const gc_kube_watch_ops rec_ops = {
    .list_begin = cb_list_begin,
    .object = cb_object,
    .list_end = cb_list_end,
    .note = cb_note,
};

static void *watch_thread(void *arg)
{
        rec *r = arg;
        int res = gc_kube_watch_run(r->k, &r->o, &rec_ops, r, &r->stop);

        pthread_mutex_lock(&r->mu);
        r->result = res;
        r->done = 1;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        return NULL;
}

static void rec_start(rec *r, gc_kube *k)
{
        r->k = k;
        ck_assert_int_eq(pthread_create(&r->th, NULL, watch_thread, r), 0);
}

/* Stops the watch and returns how long it took to return. */
static double rec_stop(rec *r)
{
        double t0 = now_s();

        r->stop = 1;
        pthread_join(r->th, NULL);
        return now_s() - t0;
}

typedef int (*rec_pred)(rec *r, const void *arg);

/* Waits until pred holds (checked under the lock), at most timeout_s. */
static int rec_wait(rec *r, rec_pred pred, const void *arg, double timeout_s)
{
        double until = now_s() + timeout_s;
        int ok;

        pthread_mutex_lock(&r->mu);
        while (!(ok = pred(r, arg)) && now_s() < until) {
                struct timespec ts;

                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_nsec += 100 * 1000 * 1000;
                if (ts.tv_nsec >= 1000000000L) {
                        ts.tv_sec++;
                        ts.tv_nsec -= 1000000000L;
                }
                pthread_cond_timedwait(&r->cv, &r->mu, &ts);
        }
        pthread_mutex_unlock(&r->mu);
        return ok;
}

static int p_present(rec *r, const void *name)
{
        return find(r, name) >= 0 && !r->listing;
}

static int p_absent(rec *r, const void *name)
{
        return find(r, name) < 0 && !r->listing;
}

static int p_list_ends(rec *r, const void *n)
{
        return r->n_list_end >= *(const int *)n;
}

static int p_blocked(rec *r, const void *unused)
{
        (void)unused;
        return r->blocked;
}

static int p_done(rec *r, const void *unused)
{
        (void)unused;
        return r->done;
}

typedef struct ev_want {
        int type;
        const char *name;
} ev_want;

static int p_event(rec *r, const void *arg)
{
        const ev_want *w = arg;

        for (size_t i = 0; i < r->n_ev; i++)
                if (r->ev_type[i] == w->type && strcmp(r->ev_name[i], w->name) == 0)
                        return 1;
        return 0;
}

typedef struct note_want {
        gc_kube_note note;
        int at_least;
} note_want;

static int p_note(rec *r, const void *arg)
{
        const note_want *w = arg;

        return r->notes[w->note] >= w->at_least;
}

/* The object set, sorted and joined with ',', for exact comparisons. */
static void rec_set(rec *r, char *out, size_t outlen)
{
        char *sorted[MAX_OBJ];
        size_t n;

        pthread_mutex_lock(&r->mu);
        n = r->n;
        for (size_t i = 0; i < n; i++)
                sorted[i] = r->names[i];
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && strcmp(sorted[j - 1], sorted[j]) > 0; j--) {
                        char *t = sorted[j];

                        sorted[j] = sorted[j - 1];
                        sorted[j - 1] = t;
                }
        out[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                size_t len = strlen(out);

                snprintf(out + len, outlen - len, "%s%s", i ? "," : "", sorted[i]);
        }
        pthread_mutex_unlock(&r->mu);
}

/* ---- etcd, for a stale continue token -------------------------------------------------------- */

/* Writes something, then compacts etcd to the newest revision: older snapshots are gone. */
static void bump_and_compact(void)
{
        gc_kube *a = admin();
        gc_kube *e = client(env_etcd, NULL, NULL);
        gc_buf b;
        char name[64], body[128];
        cJSON *j;
        const cJSON *rev;

        snprintf(name, sizeof(name), "e2e-bump-%ld", (long)getpid());
        mk_ns(a, name, NULL);
        ck_assert_int_eq(
            api(e, "POST", "/v3/kv/range", "application/json", "{\"key\":\"AA==\"}", &b), 200);
        j = cJSON_ParseWithLength(b.data, b.len);
        rev = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "header"), "revision");
        ck_assert(cJSON_IsString(rev));
        snprintf(body, sizeof(body), "{\"revision\":\"%s\",\"physical\":true}", rev->valuestring);
        cJSON_Delete(j);
        gc_buf_free(&b);
        ck_assert_int_eq(api(e, "POST", "/v3/kv/compaction", "application/json", body, NULL), 200);
        gc_kube_free(e);
        gc_kube_free(a);
}

/* ---- tests ------------------------------------------------------------------------------------
 */

/* Paged LIST over 7 namespaces, 2 a page; etcd is compacted after the first page. Up to
 * Kubernetes 1.33 the continue token then goes stale (410) and the LIST starts again from the
 * top; since 1.34 kube-apiserver serves the later pages from its watch cache's snapshot of the
 * first page's revision (the snapshottable cache, on by default), which etcd's compaction does
 * not touch, so the pages simply continue. Either way the LIST is complete, and a restart
 * happens only for a 410. */
START_TEST(test_paged_list_stale_continue)
{
        gc_kube *a = admin();
        rec r;
        gc_buf b;
        cJSON *j;
        char set[1024], q[512], sel[128];
        int one = 1;

        for (int i = 0; i < 7; i++) {
                char name[32];

                snprintf(name, sizeof(name), "e2e-paged-%s-%d", run_id, i);
                mk_ns(a, name, PATH(q, "{\"e2e-kube\":\"paged-%s\"}", run_id));
        }
        /* The server does page: 2 items and a continue token. */
        ck_assert_int_eq(
            api(a, "GET",
                PATH(q, "/api/v1/namespaces?labelSelector=e2e-kube%%3Dpaged-%s&limit=2", run_id),
                NULL, NULL, &b),
            200);
        j = cJSON_ParseWithLength(b.data, b.len);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 2);
        ck_assert_str_ne(gc_kube_meta(j, "continue"), "");
        cJSON_Delete(j);
        gc_buf_free(&b);

        rec_init(&r, "/api/v1/namespaces");
        r.o.label_selector = PATH(sel, "e2e-kube=paged-%s", run_id);
        r.o.page_limit = 2;
        r.o.paged_list = 1; /* the stale-continue path is the paged LIST's */
        r.stop_after_list = 1;
        r.on_first_object = bump_and_compact;
        rec_start(&r, admin());
        ck_assert(rec_wait(&r, p_list_ends, &one, 30));
        ck_assert(rec_wait(&r, p_done, NULL, 5));
        ck_assert_int_eq(r.result, 0);
        /* One restart for a stale token (then the whole list), or none. */
        ck_assert_int_le(r.notes[GC_KUBE_NOTE_EXPIRED], 1);
        if (r.notes[GC_KUBE_NOTE_EXPIRED] == 1)
                ck_assert_int_eq(r.note_status[GC_KUBE_NOTE_EXPIRED], 410);
        ck_assert_int_eq(r.n_list_begin, 1 + r.notes[GC_KUBE_NOTE_EXPIRED]);
        ck_assert_int_eq(r.notes[GC_KUBE_NOTE_LISTED], 1);
        ck_assert_ptr_nonnull(strstr(r.note_msg[GC_KUBE_NOTE_LISTED], "7 objects"));
        rec_set(&r, set, sizeof(set));
        ck_assert_str_eq(set, PATH(q,
                                   "e2e-paged-%s-0,e2e-paged-%s-1,e2e-paged-%s-2,e2e-paged-%s-3,"
                                   "e2e-paged-%s-4,e2e-paged-%s-5,e2e-paged-%s-6",
                                   run_id, run_id, run_id, run_id, run_id, run_id, run_id));
        pthread_join(r.th, NULL);
        rec_free(&r);
        gc_kube_free(a);
}
END_TEST

/* ADDED, MODIFIED, DELETED of a pod the test makes; stopping is prompt. */
START_TEST(test_watch_events)
{
        gc_kube *a = admin();
        rec r;
        int one = 1;
        ev_want added = {GC_KUBE_ADDED, "w1"}, modified = {GC_KUBE_MODIFIED, "w1"},
                deleted = {GC_KUBE_DELETED, "w1"};
        double took;

        char wpath[256], q[256];

        mk_ns(a, nsn("e2e-watch"), NULL);
        rec_init(&r, PATH(wpath, "/api/v1/namespaces/%s/pods", nsn("e2e-watch")));
        rec_start(&r, admin());
        ck_assert(rec_wait(&r, p_list_ends, &one, 20));
        mk_pod(a, nsn("e2e-watch"), "w1");
        ck_assert_msg(rec_wait(&r, p_event, &added, 10), "no ADDED");
        ck_assert_int_eq(api(a, "PATCH", PATH(q, "/api/v1/namespaces/%s/pods/w1", nsn("e2e-watch")),
                             "application/merge-patch+json",
                             "{\"metadata\":{\"labels\":{\"project\":\"p1\"}}}", NULL),
                         200);
        ck_assert_msg(rec_wait(&r, p_event, &modified, 10), "no MODIFIED");
        del_pod(a, nsn("e2e-watch"), "w1");
        ck_assert_msg(rec_wait(&r, p_event, &deleted, 10), "no DELETED");
        ck_assert(rec_wait(&r, p_absent, "w1", 1));
        ck_assert_int_ge(r.notes[GC_KUBE_NOTE_WATCH_START], 1);
        /* Shutdown within a second even in the middle of a stream. */
        took = rec_stop(&r);
        ck_assert_msg(took < 1.5, "stop took %.2f s", took);
        ck_assert_int_eq(r.result, 0);
        ck_assert_int_eq(r.n_list_begin, 1);
        rec_free(&r);
        gc_kube_free(a);
}
END_TEST

/* A forced 410: the watch is held while a pod is deleted and kube-apiserver restarts; the
 * resumed watch is too old, so the client LISTs again and the deleted pod is gone. */
START_TEST(test_expired_relist)
{
        gc_kube *a = admin();
        rec r;
        char cmd[2048], set[1024];
        int one = 1, two = 2;
        note_want expired = {GC_KUBE_NOTE_EXPIRED, 1};
        char wpath[256];

        mk_ns(a, nsn("e2e-expire"), NULL);
        mk_pod(a, nsn("e2e-expire"), "a");
        mk_pod(a, nsn("e2e-expire"), "b");
        mk_pod(a, nsn("e2e-expire"), "c");
        rec_init(&r, PATH(wpath, "/api/v1/namespaces/%s/pods", nsn("e2e-expire")));
        r.block_on = "trigger";
        rec_start(&r, admin());
        ck_assert(rec_wait(&r, p_list_ends, &one, 20));
        rec_set(&r, set, sizeof(set));
        ck_assert_str_eq(set, "a,b,c");

        mk_pod(a, nsn("e2e-expire"), "trigger");
        ck_assert_msg(rec_wait(&r, p_blocked, NULL, 10), "the watch never saw the trigger");
        del_pod(a, nsn("e2e-expire"), "b");
        /* In a session of its own: Check kills the test's process group when the test ends, and
         * the restarted kube-apiserver must outlive it. */
        snprintf(cmd, sizeof(cmd), "setsid -w '%s' restart-apiserver '%s' >/dev/null 2>&1",
                 env_script, env_dir);
        ck_assert_msg(system(cmd) == 0, "restart-apiserver failed");
        pthread_mutex_lock(&r.mu);
        r.release = 1;
        pthread_cond_broadcast(&r.cv);
        pthread_mutex_unlock(&r.mu);

        ck_assert_msg(rec_wait(&r, p_note, &expired, 30), "no 410");
        ck_assert(rec_wait(&r, p_list_ends, &two, 30));
        ck_assert(rec_wait(&r, p_absent, "b", 5));
        rec_set(&r, set, sizeof(set));
        ck_assert_str_eq(set, "a,c,trigger");
        ck_assert_int_eq(r.n_list_begin, 2);
        /* The watch goes on after the relist. */
        mk_pod(a, nsn("e2e-expire"), "d");
        ck_assert(rec_wait(&r, p_present, "d", 10));
        rec_stop(&r);
        ck_assert_int_eq(r.result, 0);
        rec_free(&r);
        gc_kube_free(a);
}
END_TEST

/* Nothing arrives for idle_seconds: the client reconnects from where it was, losing nothing. */
START_TEST(test_idle_timeout)
{
        gc_kube *a = admin();
        rec r;
        int one = 1;
        note_want idle = {GC_KUBE_NOTE_IDLE_TIMEOUT, 2};
        ev_want added = {GC_KUBE_ADDED, "i1"};
        char wpath[256];

        mk_ns(a, nsn("e2e-idle"), NULL);
        rec_init(&r, PATH(wpath, "/api/v1/namespaces/%s/pods", nsn("e2e-idle")));
        r.o.timeout_seconds = 60;
        r.o.idle_seconds = 2;
        rec_start(&r, admin());
        ck_assert(rec_wait(&r, p_list_ends, &one, 20));
        ck_assert_msg(rec_wait(&r, p_note, &idle, 10), "no idle timeouts");
        mk_pod(a, nsn("e2e-idle"), "i1");
        ck_assert_msg(rec_wait(&r, p_event, &added, 10), "pod lost across idle reconnects");
        /* Reconnects resume from the last resourceVersion: no second LIST. */
        ck_assert_int_eq(r.n_list_begin, 1);
        ck_assert_int_eq(r.notes[GC_KUBE_NOTE_EXPIRED], 0);
        rec_stop(&r);
        rec_free(&r);
        gc_kube_free(a);
}
END_TEST

/* The controller's identity without RBAC: refused loudly, never an empty cluster. */
START_TEST(test_forbidden)
{
        gc_kube *c = client(env_server, env_ca, env_ctrl);
        rec r;
        gc_kube_kv data[] = {{"k", "v"}};
        gc_kube_lease l;
        char err[512];
        int leader = -1;

        rec_init(&r, "/api/v1/pods");
        r.k = c;
        r.o.forbidden_grace_s = 2; /* refused for 2 s in a row: final */
        r.result = gc_kube_watch_run(c, &r.o, &rec_ops, &r, &r.stop);
        ck_assert_int_eq(r.result, -EACCES);
        ck_assert_int_ge(r.notes[GC_KUBE_NOTE_RETRY], 1); /* retried within the grace */
        ck_assert_int_eq(r.notes[GC_KUBE_NOTE_FORBIDDEN], 1);
        ck_assert_int_eq(r.note_status[GC_KUBE_NOTE_FORBIDDEN], 403);
        ck_assert_ptr_nonnull(strstr(r.note_msg[GC_KUBE_NOTE_FORBIDDEN], "forbidden"));
        ck_assert_ptr_null(strstr(r.note_msg[GC_KUBE_NOTE_FORBIDDEN], env_ctrl));
        ck_assert_int_eq(r.n_list_end, 0);

        ck_assert_int_eq(
            gc_kube_configmap_put(c, "default", "nope", NULL, 0, data, 1, err, sizeof(err)),
            -EACCES);
        ck_assert_msg(strstr(err, "forbidden") != NULL, "%s", err);
        memset(&l, 0, sizeof(l));
        l.ns = "default";
        l.name = "nope";
        l.identity = "x";
        ck_assert_int_eq(gc_kube_lease_tick(c, &l, 1, &leader, err, sizeof(err)), -EACCES);
        ck_assert_int_eq(leader, 0);
        rec_free(&r);
}
END_TEST

static cJSON *cm_get(gc_kube *k, const char *ns, const char *name)
{
        cJSON *o = NULL;
        char err[512];

        ck_assert_msg(gc_kube_configmap_get(k, ns, name, &o, err, sizeof(err)) == 0, "%s", err);
        return o;
}

static const char *cm_field(const cJSON *o, const char *section, const char *key)
{
        const cJSON *s = strcmp(section, "data") == 0
                             ? cJSON_GetObjectItem(o, "data")
                             : cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), section);
        const cJSON *v = cJSON_GetObjectItem(s, key);

        return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void names_str(char **names, size_t n, char *out, size_t outlen)
{
        out[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                size_t len = strlen(out);

                snprintf(out + len, outlen - len, "%s%s", i ? "," : "", names[i]);
                free(names[i]);
        }
        free(names);
}

START_TEST(test_configmap_crud)
{
        gc_kube *a = admin();
        gc_kube_kv labels[] = {{"app.kubernetes.io/name", "gpu-cost"},
                               {"gpu-cost.io/kind", "report"}};
        gc_kube_kv other[] = {{"gpu-cost.io/kind", "other"}};
        gc_kube_kv d1[] = {{"report.json", "{\"a\":1}"}, {"report.md", "# one\n\"quoted\" \\ é"}};
        gc_kube_kv d2[] = {{"report.md", "# two"}};
        char err[512], got[512], q[256];
        char **names = NULL;
        size_t n = 0;
        cJSON *o;

        mk_ns(a, nsn("e2e-cm"), NULL);
        ck_assert_msg(
            gc_kube_configmap_put(a, nsn("e2e-cm"), "cm1", labels, 2, d1, 2, err, sizeof(err)) == 0,
            "%s", err);
        o = cm_get(a, nsn("e2e-cm"), "cm1");
        ck_assert_str_eq(cm_field(o, "data", "report.md"), "# one\n\"quoted\" \\ é");
        ck_assert_str_eq(cm_field(o, "data", "report.json"), "{\"a\":1}");
        ck_assert_str_eq(cm_field(o, "labels", "gpu-cost.io/kind"), "report");
        cJSON_Delete(o);

        /* Someone annotates it; a replace keeps that and swaps labels and data whole. */
        ck_assert_int_eq(api(a, "PATCH",
                             PATH(q, "/api/v1/namespaces/%s/configmaps/cm1", nsn("e2e-cm")),
                             "application/merge-patch+json",
                             "{\"metadata\":{\"annotations\":{\"note\":\"kept\"}}}", NULL),
                         200);
        ck_assert_msg(
            gc_kube_configmap_put(a, nsn("e2e-cm"), "cm1", labels, 2, d2, 1, err, sizeof(err)) == 0,
            "%s", err);
        o = cm_get(a, nsn("e2e-cm"), "cm1");
        ck_assert_str_eq(cm_field(o, "data", "report.md"), "# two");
        ck_assert_ptr_null(cm_field(o, "data", "report.json"));
        ck_assert_str_eq(cm_field(o, "annotations", "note"), "kept");
        cJSON_Delete(o);

        ck_assert_int_eq(
            gc_kube_configmap_put(a, nsn("e2e-cm"), "cm2", labels, 2, d2, 1, err, sizeof(err)), 0);
        ck_assert_int_eq(
            gc_kube_configmap_put(a, nsn("e2e-cm"), "cm3", labels, 2, d2, 1, err, sizeof(err)), 0);
        ck_assert_int_eq(
            gc_kube_configmap_put(a, nsn("e2e-cm"), "cm4", other, 1, d2, 1, err, sizeof(err)), 0);
        ck_assert_int_eq(gc_kube_configmap_list(a, nsn("e2e-cm"), "gpu-cost.io/kind=report", &names,
                                                &n, err, sizeof(err)),
                         0);
        names_str(names, n, got, sizeof(got));
        ck_assert_str_eq(got, "cm1,cm2,cm3");

        ck_assert_int_eq(gc_kube_configmap_delete(a, nsn("e2e-cm"), "cm2", err, sizeof(err)), 0);
        ck_assert_int_eq(gc_kube_configmap_get(a, nsn("e2e-cm"), "cm2", &o, err, sizeof(err)),
                         -ENOENT);
        ck_assert_int_eq(gc_kube_configmap_delete(a, nsn("e2e-cm"), "cm2", err, sizeof(err)), 0);
        ck_assert_int_eq(gc_kube_configmap_list(a, nsn("e2e-cm"), "gpu-cost.io/kind=report", &names,
                                                &n, err, sizeof(err)),
                         0);
        names_str(names, n, got, sizeof(got));
        ck_assert_str_eq(got, "cm1,cm3");
        /* The API's own message comes back on failure. */
        ck_assert_int_eq(gc_kube_configmap_list(a, nsn("e2e-cm"), "bad selector !!", &names, &n,
                                                err, sizeof(err)),
                         -EINVAL);
        ck_assert_msg(strstr(err, "HTTP 400") != NULL, "%s", err);
        gc_kube_free(a);
}
END_TEST

typedef struct writer {
        const char *who;
        int fails;
        unsigned long conflicts;
        char err[512]; /* the last failure's message */
} writer;

static void *writer_thread(void *arg)
{
        writer *w = arg;
        gc_kube *k = admin();
        char err[512], val[64];

        for (int i = 0; i < 25; i++) {
                gc_kube_kv d[] = {{"writer", w->who}, {"n", val}};

                snprintf(val, sizeof(val), "%d", i);
                if (gc_kube_configmap_put(k, nsn("e2e-cm"), "race", NULL, 0, d, 2, err,
                                          sizeof(err)) < 0) {
                        w->fails++;
                        gc_strlcpy(w->err, err, sizeof(w->err));
                }
        }
        w->conflicts = k->n_conflicts;
        gc_kube_free(k);
        return NULL;
}

/* Two writers on one ConfigMap: every write lands, 409s are re-read and retried. */
START_TEST(test_configmap_conflicts)
{
        gc_kube *a = admin();
        unsigned long conflicts = 0;
        gc_buf b;
        cJSON *o;
        char path[256], body[512];

        mk_ns(a, nsn("e2e-cm"), NULL);
        for (int round = 0; round < 5 && conflicts == 0; round++) {
                writer w1 = {"one", 0, 0, ""}, w2 = {"two", 0, 0, ""};
                pthread_t t1, t2;

                pthread_create(&t1, NULL, writer_thread, &w1);
                pthread_create(&t2, NULL, writer_thread, &w2);
                pthread_join(t1, NULL);
                pthread_join(t2, NULL);
                ck_assert_msg(w1.fails == 0, "writer one: %d failed, last: %s", w1.fails, w1.err);
                ck_assert_msg(w2.fails == 0, "writer two: %d failed, last: %s", w2.fails, w2.err);
                conflicts += w1.conflicts + w2.conflicts;
        }
        ck_assert_msg(conflicts > 0, "two writers never conflicted");
        /* And the server does refuse a stale resourceVersion. */
        o = cm_get(a, nsn("e2e-cm"), "race");
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/race", nsn("e2e-cm"));
        snprintf(body, sizeof(body),
                 "{\"metadata\":{\"name\":\"race\",\"resourceVersion\":\"%s\"},\"data\":{}}",
                 gc_kube_meta(o, "resourceVersion"));
        ck_assert_int_eq(api(a, "PUT", path, "application/json",
                             "{\"metadata\":{\"name\":\"race\"},\"data\":{\"x\":\"y\"}}", NULL),
                         200);
        ck_assert_int_eq(api(a, "PUT", path, "application/json", body, &b), 409);
        gc_buf_free(&b);
        cJSON_Delete(o);
        gc_kube_free(a);
}
END_TEST

/* The 1 MiB data limit, checked before sending; and the 16 MiB response cap. */
START_TEST(test_configmap_caps)
{
        gc_kube *a = admin();
        size_t n = (1u << 20) - 3; /* key "big" (3 bytes) + value = exactly 1 MiB */
        char *v = malloc(n + 2);
        gc_kube_kv d[] = {{"big", v}};
        char err[512], name[32], q[256];
        gc_buf b;
        long status = 0;
        char **names = NULL;
        size_t nn = 0;

        memset(v, 'x', n + 1);
        v[n] = '\0';
        mk_ns(a, nsn("e2e-big"), NULL);
        ck_assert_msg(
            gc_kube_configmap_put(a, nsn("e2e-big"), "big-0", NULL, 0, d, 1, err, sizeof(err)) == 0,
            "%s", err);
        v[n] = 'x';
        v[n + 1] = '\0';
        ck_assert_int_eq(
            gc_kube_configmap_put(a, nsn("e2e-big"), "big-x", NULL, 0, d, 1, err, sizeof(err)),
            -E2BIG);
        v[n] = '\0';
        for (int i = 1; i < 17; i++) {
                snprintf(name, sizeof(name), "big-%d", i);
                ck_assert_msg(gc_kube_configmap_put(a, nsn("e2e-big"), name, NULL, 0, d, 1, err,
                                                    sizeof(err)) == 0,
                              "%s", err);
        }
        /* 17 MiB in one answer: over the cap, refused, not truncated. */
        ck_assert_int_eq(
            gc_kube_request(a, "GET", PATH(q, "/api/v1/namespaces/%s/configmaps", nsn("e2e-big")),
                            NULL, NULL, 0, &status, &b, err, sizeof(err)),
            -E2BIG);
        gc_buf_free(&b);
        /* Listing names only does not fetch the data. kube-controller-manager's root CA
         * publisher adds kube-root-ca.crt to every namespace. */
        ck_assert_int_eq(
            gc_kube_configmap_list(a, nsn("e2e-big"), NULL, &names, &nn, err, sizeof(err)), 0);
        ck_assert_uint_eq(nn, 18);
        for (size_t i = 0; i < nn; i++) {
                ck_assert_msg(!strncmp(names[i], "big-", 4) ||
                                  !strcmp(names[i], "kube-root-ca.crt"),
                              "%s", names[i]);
                free(names[i]);
        }
        free(names);
        free(v);
        gc_kube_free(a);
}
END_TEST

static int64_t mono(void)
{
        return (int64_t)now_s();
}

static int tick(gc_kube *k, gc_kube_lease *l)
{
        char err[512];
        int leader = -1;

        ck_assert_msg(gc_kube_lease_tick(k, l, mono(), &leader, err, sizeof(err)) == 0, "%s", err);
        return leader;
}

/* Two contenders: one leader; the other takes over after the duration when the leader stops
 * renewing, and at once when it releases. */
START_TEST(test_lease)
{
        gc_kube *a = admin(), *ka = admin(), *kb = admin();
        gc_kube_lease la, lb;
        double last_a = 0, t0, took;
        char err[512];
        gc_buf body;
        cJSON *o, *spec;
        regex_t re;
        char q[256];

        mk_ns(a, nsn("e2e-lease"), NULL);
        memset(&la, 0, sizeof(la));
        la.ns = nsn("e2e-lease");
        la.name = "ctl";
        la.identity = "replica-a";
        la.duration_s = 3;
        lb = la;
        lb.identity = "replica-b";

        ck_assert_int_eq(tick(ka, &la), 1);
        ck_assert_int_eq(tick(kb, &lb), 0);
        for (int i = 0; i < 4; i++) {
                nap(0.5);
                ck_assert_int_eq(tick(ka, &la), 1);
                last_a = now_s();
                ck_assert_int_eq(tick(kb, &lb), 0);
                ck_assert_str_eq(lb.holder, "replica-a");
        }
        /* A stops renewing (as if it died). */
        t0 = now_s();
        while (!tick(kb, &lb)) {
                ck_assert_msg(now_s() - t0 < 8, "no takeover");
                nap(0.25);
        }
        took = now_s() - last_a;
        ck_assert_msg(took >= 2.9 && took <= 5.0, "takeover %.2f s after the last renewal", took);
        /* A comes back: sees B's record, is not leader. */
        ck_assert_int_eq(tick(ka, &la), 0);
        ck_assert_int_eq(tick(kb, &lb), 1);

        /* Release: A takes it on its next try. */
        ck_assert_int_eq(gc_kube_lease_release(kb, &lb, err, sizeof(err)), 0);
        ck_assert_int_eq(lb.leader, 0);
        ck_assert_int_eq(tick(ka, &la), 1);
        ck_assert_int_eq(tick(kb, &lb), 0);

        ck_assert_int_eq(
            api(a, "GET",
                PATH(q, "/apis/coordination.k8s.io/v1/namespaces/%s/leases/ctl", nsn("e2e-lease")),
                NULL, NULL, &body),
            200);
        o = cJSON_ParseWithLength(body.data, body.len);
        spec = cJSON_GetObjectItem(o, "spec");
        ck_assert_str_eq(cJSON_GetObjectItem(spec, "holderIdentity")->valuestring, "replica-a");
        /* a created it (0), b took over (1), a took it after the release (2). */
        ck_assert_int_eq(cJSON_GetObjectItem(spec, "leaseTransitions")->valueint, 2);
        ck_assert_int_eq(cJSON_GetObjectItem(spec, "leaseDurationSeconds")->valueint, 3);
        ck_assert_int_eq(
            regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z$",
                    REG_EXTENDED | REG_NOSUB),
            0);
        ck_assert_int_eq(
            regexec(&re, cJSON_GetObjectItem(spec, "renewTime")->valuestring, 0, NULL, 0), 0);
        ck_assert_int_eq(
            regexec(&re, cJSON_GetObjectItem(spec, "acquireTime")->valuestring, 0, NULL, 0), 0);
        regfree(&re);
        cJSON_Delete(o);
        gc_buf_free(&body);
        gc_kube_free(ka);
        gc_kube_free(kb);
        gc_kube_free(a);
}
END_TEST

/* The other ways in: a kubeconfig (CA as data, given to libcurl in memory), the in-cluster files,
 * and a rotated token file: a 401 makes the client read the file again and retry once. */
START_TEST(test_auth_paths)
{
        gc_kube_config cfg;
        gc_kube *k;
        char err[512], path[512], dir[64], cmd[1024];
        FILE *f;

        snprintf(path, sizeof(path), "%s/admin.kubeconfig", env_dir);
        ck_assert_msg(gc_kube_config_load(path, NULL, &cfg, err, sizeof(err)) == 0, "%s", err);
        ck_assert_ptr_nonnull(cfg.ca_data);
        ck_assert_ptr_null(cfg.ca_file);
        k = gc_kube_new(&cfg, err, sizeof(err));
        ck_assert_msg(k != NULL, "%s", err);
        gc_kube_config_release(&cfg);
        ck_assert_int_eq(api(k, "GET", "/api/v1/namespaces/default", NULL, NULL, NULL), 200);
        gc_kube_free(k);

        /* In a pod: the service host and port, and the service account's files. */
        snprintf(dir, sizeof(dir), "/tmp/e2e-kube-sa.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(cmd, sizeof(cmd), "cp '%s' '%s/ca.crt'", env_ca, dir);
        ck_assert_int_eq(system(cmd), 0);
        snprintf(path, sizeof(path), "%s/token", dir);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "not-a-valid-token\n");
        fclose(f);
        setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
        setenv("KUBERNETES_SERVICE_PORT", strrchr(env_server, ':') + 1, 1);
        ck_assert_msg(gc_kube_config_incluster_dir(dir, &cfg, err, sizeof(err)) == 0, "%s", err);
        ck_assert_str_eq(cfg.server, env_server);
        k = gc_kube_new(&cfg, err, sizeof(err));
        ck_assert_msg(k != NULL, "%s", err);
        gc_kube_config_release(&cfg);
        ck_assert_int_eq(api(k, "GET", "/api/v1/namespaces/default", NULL, NULL, NULL), 401);
        /* The kubelet rotates the token: the next 401 reads it again, and the retry works. */
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "%s\n", env_admin);
        fclose(f);
        ck_assert_int_eq(api(k, "GET", "/api/v1/namespaces/default", NULL, NULL, NULL), 200);
        gc_kube_free(k);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);

        /* TLS is verified: trusted CAs that did not sign the server's certificate are refused. */
        if (access("/etc/ssl/certs/ca-certificates.crt", R_OK) == 0) {
                gc_buf b;
                long status = 0;

                memset(&cfg, 0, sizeof(cfg));
                cfg.server = (char *)env_server;
                cfg.ca_file = "/etc/ssl/certs/ca-certificates.crt";
                cfg.token = (char *)env_admin;
                k = gc_kube_new(&cfg, err, sizeof(err));
                ck_assert_ptr_nonnull(k);
                ck_assert_int_eq(
                    gc_kube_request(k, "GET", "/api", NULL, NULL, 0, &status, &b, err, sizeof(err)),
                    -EPROTO);
                gc_buf_free(&b);
                gc_kube_free(k);
        }
}
END_TEST

static Suite *e2e_suite(void)
{
        Suite *s = suite_create("e2e_kube");
        TCase *t = tcase_create("apiserver");

        tcase_set_timeout(t, 90);
        tcase_add_test(t, test_auth_paths);
        tcase_add_test(t, test_paged_list_stale_continue);
        tcase_add_test(t, test_watch_events);
        tcase_add_test(t, test_idle_timeout);
        tcase_add_test(t, test_forbidden);
        tcase_add_test(t, test_configmap_crud);
        tcase_add_test(t, test_configmap_conflicts);
        tcase_add_test(t, test_configmap_caps);
        tcase_add_test(t, test_lease);
        tcase_add_test(t, test_expired_relist);
        suite_add_tcase(s, t);
        return s;
}

static const char *need(const char *name, int *missing)
{
        const char *v = getenv(name);

        if (!v || !v[0]) {
                fprintf(stderr, "e2e_kube: %s is not set (run tests/e2e/kube/run.sh)\n", name);
                (*missing)++;
        }
        return v;
}

int main(void)
{
        SRunner *sr;
        int failed, missing = 0;

        env_server = need("E2E_SERVER", &missing);
        env_ca = need("E2E_CA", &missing);
        env_admin = need("E2E_ADMIN_TOKEN", &missing);
        env_ctrl = need("E2E_CONTROLLER_TOKEN", &missing);
        env_dir = need("E2E_DIR", &missing);
        env_etcd = need("E2E_ETCD_URL", &missing);
        env_script = need("E2E_CLUSTER_SCRIPT", &missing);
        if (missing)
                return 1;
        snprintf(run_id, sizeof(run_id), "%lx", (unsigned long)time(NULL) % 0xfffff);
        curl_global_init(CURL_GLOBAL_DEFAULT);
        sr = srunner_create(e2e_suite());
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        curl_global_cleanup();
        return failed != 0;
}
