/* api export: GET /api/v1/export/focus and /api/v1/export/csv (docs/api.md, docs/export.md). */
#include "api_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"

/*
 * An export is streamed (docs/api.md): a thread of its own runs gc_export_run() over the
 * snapshot it holds a reference to and hands the CSV over in pieces, at most GC__EXS_AHEAD
 * bytes ahead of what the server has taken; the server's thread takes them as the client reads
 * (gc_httpd_stream). So memory follows a piece, never the window, and the server's thread never
 * computes an export. At most GC__EXS_MAX run at once per process: one more is a 503.
 */
#define GC__EXS_MAX   2
#define GC__EXS_AHEAD ((size_t)256 << 10)

static atomic_int gc__exs_running;

typedef struct gc__exs {
        pthread_mutex_t mu;
        pthread_cond_t cv; /* the producer waits here for room */
        gc_buf ready;      /* made, not yet taken by the server */
        int done;          /* the producer finished: err says how */
        int err;
        int released; /* the server is done with it: stop, and never wake it again */
        int refs;     /* the producer and the server */
        gc_httpd *h;
        gc_snapshot *s;
        gc_export_opts o;
} gc__exs;

static void gc__exs_unref(gc__exs *e)
{
        int last;

        pthread_mutex_lock(&e->mu);
        last = --e->refs == 0;
        pthread_mutex_unlock(&e->mu);
        if (!last)
                return;
        gc_snapshot_unref(e->s);
        gc_buf_free(&e->ready);
        pthread_cond_destroy(&e->cv);
        pthread_mutex_destroy(&e->mu);
        free(e);
        atomic_fetch_sub(&gc__exs_running, 1);
}

/* The producer's write: waits for room, stops once the server let go. */
static int gc__exs_write(void *ud, const char *data, size_t n)
{
        gc__exs *e = ud;
        int r = 0;

        pthread_mutex_lock(&e->mu);
        while (!e->released && e->ready.len > 0 && e->ready.len + n > GC__EXS_AHEAD)
                pthread_cond_wait(&e->cv, &e->mu);
        if (e->released)
                r = -ECANCELED;
        else
                r = gc_buf_append(&e->ready, data, n);
        if (r == 0)
                gc_httpd_wake(e->h);
        pthread_mutex_unlock(&e->mu);
        return r;
}

static void *gc__exs_main(void *arg)
{
        gc__exs *e = arg;
        int r = gc_export_run(&e->o, gc__exs_write, e, NULL);

        pthread_mutex_lock(&e->mu);
        e->done = 1;
        e->err = r;
        if (!e->released)
                gc_httpd_wake(e->h);
        pthread_mutex_unlock(&e->mu);
        gc__exs_unref(e);
        return NULL;
}

/* The server's side: what is ready, the end, or "not yet". */
static int gc__exs_next(void *ud, gc_buf *out)
{
        gc__exs *e = ud;
        int r;

        pthread_mutex_lock(&e->mu);
        if (e->ready.len) {
                r = gc_buf_append(out, e->ready.data, e->ready.len);
                gc_buf_reset(&e->ready);
                pthread_cond_signal(&e->cv);
                if (r == 0)
                        r = e->done && e->err == 0 ? 0 : e->done ? -EIO : 1;
        } else if (e->done) {
                r = e->err == 0 ? 0 : -EIO;
        } else {
                r = -EAGAIN;
        }
        pthread_mutex_unlock(&e->mu);
        return r;
}

static void gc__exs_release(void *ud)
{
        gc__exs *e = ud;

        pthread_mutex_lock(&e->mu);
        e->released = 1;
        pthread_cond_signal(&e->cv);
        pthread_mutex_unlock(&e->mu);
        gc__exs_unref(e);
}

/* Starts the producer and hands the stream to the response; a 503 when too many run. */
static int gc__exs_start(gc__api_ctx *x, const gc_export_opts *o)
{
        pthread_attr_t attr;
        pthread_t t;
        gc__exs *e;
        int r;

        if (atomic_fetch_add(&gc__exs_running, 1) >= GC__EXS_MAX) {
                atomic_fetch_sub(&gc__exs_running, 1);
                r = gc_httpd_error(x->res, 503, "too many exports running: try again shortly");
                return r == 0 ? gc_httpd_add_header(x->res, "Retry-After", "5") : r;
        }
        e = calloc(1, sizeof(*e));
        if (!e) {
                atomic_fetch_sub(&gc__exs_running, 1);
                return -ENOMEM;
        }
        pthread_mutex_init(&e->mu, NULL);
        pthread_cond_init(&e->cv, NULL);
        gc_buf_init(&e->ready, GC__EXS_AHEAD + GC_EXPORT_PIECE_BYTES + (64u << 10));
        e->h = gc_httpd_server(x->req);
        e->s = gc_snapshot_ref(x->s);
        e->o = *o;
        e->o.region_ud = e->s;
        e->refs = 2;
        r = pthread_attr_init(&attr);
        if (r == 0) {
                pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
                r = pthread_create(&t, &attr, gc__exs_main, e);
                pthread_attr_destroy(&attr);
        }
        if (r != 0) {
                e->refs = 1;
                gc__exs_unref(e);
                return -r;
        }
        x->res->stream.next = gc__exs_next;
        x->res->stream.release = gc__exs_release;
        x->res->stream.ud = e;
        x->res->content_type = "text/csv; charset=utf-8";
        return 0;
}

static int gc__export_write(void *ud, const char *data, size_t n)
{
        return gc_buf_append(ud, data, n);
}

/* A node's region from the snapshot's node table (none without it). */
static const char *gc__export_region(void *ud, const char *node)
{
        const gc_snapshot *s = ud;

        for (size_t i = 0; node && i < s->p.n_nodes; i++)
                if (s->p.nodes[i].name && strcmp(s->p.nodes[i].name, node) == 0)
                        return s->p.nodes[i].region;
        return NULL;
}

/*
 * Served by a server, the export is streamed (any window); outside one (the fuzz target, no
 * server to stream through) it is gathered in the response, bounded by its limit: a longer one
 * is a 400 naming the window, with what to ask.
 */
int gc__api_export(gc__api_ctx *x)
{
        static const char *const known[] = {"window",     "granularity", "focus_version",
                                            "share_idle", "basis",       NULL};
        const char *basis = gc_httpd_query(x->req, "basis");
        const char *path = x->req->path;
        const char *gran = gc_httpd_query(x->req, "granularity");
        const char *ver = gc_httpd_query(x->req, "focus_version");
        const char *share = gc_httpd_query(x->req, "share_idle");
        const char *w = gc_httpd_query(x->req, "window");
        gc_export_opts o = {0};
        char err[GC__API_ERR];
        int r;

        if (gc__api_known_params(x, known))
                return 0;
        o.format = strcmp(path, "/api/v1/export/csv") == 0 ? GC_EXPORT_CSV : GC_EXPORT_FOCUS;
        if (gc_api_window_parse(w ? w : "lastmonth", x->s->p.now, 0, &o.start, &o.end, err,
                                sizeof(err)) < 0)
                return gc__api_bad(x, 400, "window", "%s", err);
        o.granularity = GC_EXPORT_DAILY;
        if (gran && gc_export_granularity_parse(gran, &o.granularity) < 0)
                return gc__api_bad(x, 400, "granularity", "must be daily or hourly");
        o.focus_minor = 3;
        if (ver) {
                if (o.format != GC_EXPORT_FOCUS)
                        return gc__api_bad(x, 400, "focus_version", "only for /export/focus");
                if (gc_export_focus_version_parse(ver, &o.focus_minor) < 0)
                        return gc__api_bad(x, 400, "focus_version", "must be 1.2, 1.3 or 1.4");
        }
        o.chargeback = x->s->p.settings.chargeback;
        if (share && gc_chargeback_mode_parse(share, &o.chargeback.mode) < 0)
                return gc__api_bad(x, 400, "share_idle", "must be none, proportional or weights");
        if (basis && gc_basis_parse(basis, strlen(basis), &o.basis) < 0)
                return gc__api_bad(x, 400, "basis", "must be allocation or usage");
        if (o.chargeback.mode == GC_CHARGEBACK_WEIGHTS && o.chargeback.n_weights == 0)
                return gc__api_bad(x, 400, "share_idle",
                                   "weights needs chargeback.weights in the configuration");
        o.ledger = x->s->p.ledger;
        o.now = x->s->p.now;
        /* Charge periods are UTC days or hours: each must be whole. */
        if (!gc_export_whole(&o)) {
                char when[GC_TIME_LEN];

                gc_time_format(gc_ledger_coarse_to(o.ledger), when);
                return gc__api_bad(x, 400, "window",
                                   "history before %s is kept only by whole local day, ISO week "
                                   "and month (--hourly-history), and this export's UTC %s are "
                                   "not: ask a later window, or granularity=daily with a UTC "
                                   "report zone",
                                   when, o.granularity == GC_EXPORT_HOURLY ? "hours" : "days");
        }
        o.cluster = x->s->cluster;
        o.currency = x->s->currency;
        o.region_of = gc__export_region;
        o.region_ud = x->s;
        if (gc_httpd_server(x->req)) {
                if (!x->req->head)
                        return gc__exs_start(x, &o);
                x->res->content_type = "text/csv; charset=utf-8";
                return 0; /* HEAD: the headers GET would get, nothing computed */
        }
        r = gc_export_run(&o, gc__export_write, &x->res->body, NULL);
        if (r == -E2BIG) {
                gc_buf_reset(&x->res->body);
                return gc__api_bad(x, 400, "window",
                                   "the export is larger than the server's response limit (%zu "
                                   "MiB): ask a shorter window, daily granularity, or export "
                                   "offline",
                                   x->res->body.limit >> 20);
        }
        if (r == 0)
                x->res->content_type = "text/csv; charset=utf-8";
        return r;
}
