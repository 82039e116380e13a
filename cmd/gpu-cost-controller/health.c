/* health: /healthz (the main loop is alive) and /readyz (synced and restored) on the HTTP port. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ctl_int.h"
#include "httpd/httpd.h"
#include "log.h"

/* The main loop ticks every 200 ms; a minute without a tick means it is stuck. */
#define CTL_STUCK_AFTER_S 60

static gc_httpd *ctl__httpd;
static pthread_t ctl__httpd_thread;

static int ctl__healthz(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        ctl *c = ud;
        long last = atomic_load(&c->last_tick);

        (void)req;
        if (last && ctl_mono() - last > CTL_STUCK_AFTER_S)
                return gc_httpd_error(res, 503, "the controller's main loop is stuck");
        res->content_type = "text/plain";
        return gc_buf_puts(&res->body, "ok\n");
}

static int ctl__readyz(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        ctl *c = ud;

        (void)req;
        if (!atomic_load(&c->ready))
                return gc_httpd_error(res, 503,
                                      c->leader ? "initial sync not done"
                                                : "standby: another replica holds the lease");
        res->content_type = "text/plain";
        return gc_buf_puts(&res->body, "ok\n");
}

static void ctl__httpd_log(void *ud, int level, const char *msg)
{
        (void)ud;
        ctl_log(level == GC_HTTPD_LOG_ERROR  ? CTL_ERROR
                : level == GC_HTTPD_LOG_WARN ? CTL_WARN
                                             : CTL_INFO,
                "http server", "detail", msg, NULL);
}

static void *ctl__httpd_main(void *arg)
{
        int r = gc_httpd_run(arg, NULL);

        if (r < 0)
                ctl_log(CTL_ERROR, "http server stopped", "error", strerror(-r), NULL);
        return NULL;
}

int ctl_health_start(ctl *c)
{
        gc_httpd_opts o;
        char err[256], port[16];

        memset(&o, 0, sizeof(o));
        o.listen = c->o->listen;
        o.log = ctl__httpd_log;
        ctl__httpd = gc_httpd_new(&o, err, sizeof(err));
        if (!ctl__httpd) {
                ctl_log(CTL_ERROR, "cannot listen", "listen", c->o->listen, "error", err, NULL);
                return -EINVAL;
        }
        if (gc_httpd_route(ctl__httpd, "/healthz", 0, ctl__healthz, c) < 0 ||
            gc_httpd_route(ctl__httpd, "/readyz", 0, ctl__readyz, c) < 0 ||
            (c->api && gc_api_routes(c->api, ctl__httpd) < 0) ||
            pthread_create(&ctl__httpd_thread, NULL, ctl__httpd_main, ctl__httpd) != 0) {
                ctl__httpd = gc_httpd_free(ctl__httpd);
                return -ENOMEM;
        }
        snprintf(port, sizeof(port), "%d", gc_httpd_port(ctl__httpd));
        ctl_log(CTL_INFO, "listening", "listen", c->o->listen, "port", port, NULL);
        return 0;
}

void ctl_health_stop(ctl *c)
{
        (void)c;
        if (!ctl__httpd)
                return;
        gc_httpd_stop(ctl__httpd);
        pthread_join(ctl__httpd_thread, NULL);
        ctl__httpd = gc_httpd_free(ctl__httpd);
}
