/* health: the HTTP server, and /healthz (the main loop is alive) and /readyz (synced and restored)
 * on it and on the probe port, with /metrics there too. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "authz/authz.h"
#include "controller_int.h"
#include "httpd/httpd.h"
#include "log/log.h"

/* The main loop ticks every 200 ms; a minute without a tick means it is stuck. */
#define CTL_STUCK_AFTER_S 60

#define CTL_PROBE_MAX_CONNECTIONS 16

/* The port the API server listens on while it runs, else 0: what gc__ctl_health_port() tells a
 * caller that has no ctl (the unit suite finding --demo's port). The servers are the ctl's. */
static atomic_int ctl__port;

static int ctl__healthz(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        ctl *c = ud;
        long last = atomic_load(&c->last_tick);

        (void)req;
        if (last && gc__ctl_mono() - last > CTL_STUCK_AFTER_S)
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
        /* Ready, but loud about lost history: the body says what a probe's status cannot. */
        if (atomic_load(&c->checkpoint_lost))
                return gc_buf_printf(&res->body, "ok\ncheckpoint: %s\n", c->checkpoint_lost_msg);
        /* Set once before the informers start; ready implies it is written. */
        if (c->dra_note[0])
                return gc_buf_printf(&res->body, "ok\ndra: %s\n", c->dra_note);
        return gc_buf_puts(&res->body, "ok\n");
}

static void ctl__httpd_log(void *ud, int level, const char *msg)
{
        (void)ud;
        gc_log(level == GC_HTTPD_LOG_ERROR  ? GC_LOG_ERROR
               : level == GC_HTTPD_LOG_WARN ? GC_LOG_WARN
                                            : GC_LOG_INFO,
               "http server", "detail", msg, NULL);
}

static void *ctl__httpd_main(void *arg)
{
        int r = gc_httpd_run(arg, NULL);

        if (r < 0)
                gc_log(GC_LOG_ERROR, "http server stopped", "error", strerror(-r), NULL);
        return NULL;
}

static void ctl__authz_log(void *ud, int level, const char *msg)
{
        (void)ud;
        gc_log(level == GC_AUTHZ_LOG_ERROR  ? GC_LOG_ERROR
               : level == GC_AUTHZ_LOG_WARN ? GC_LOG_WARN
                                            : GC_LOG_INFO,
               "delegated auth", "detail", msg, NULL);
}

static void ctl__authz_wake(void *ud)
{
        gc_httpd_wake(ud);
}

/* --auth-delegate: every route but /healthz and /readyz asks the API server (docs/auth.md). */
static int ctl__auth_start(ctl *c)
{
        gc_authz_opts ao;
        gc_authz_resource res;
        char err[256];
        int64_t ttl = c->o->auth_cache_ttl_s;

        memset(&ao, 0, sizeof(ao));
        if (!c->kcfg.server) {
                gc_log(GC_LOG_ERROR, "--auth-delegate needs the API server (not with --demo)",
                       NULL);
                return -EINVAL;
        }
        if (c->o->auth_resource) {
                if (gc_authz_resource_parse(c->o->auth_resource, &res, err, sizeof(err)) < 0) {
                        gc_log(GC_LOG_ERROR, "bad --auth-resource", "error", err, NULL);
                        return -EINVAL;
                }
                ao.resource = &res;
        }
        ao.kube = &c->kcfg;
        ao.allow_ttl_sec = ttl > 0 ? (int)ttl : GC_AUTHZ_DEFAULT_ALLOW_TTL_SEC;
        ao.deny_ttl_sec = ao.allow_ttl_sec < GC_AUTHZ_DEFAULT_DENY_TTL_SEC
                              ? ao.allow_ttl_sec
                              : GC_AUTHZ_DEFAULT_DENY_TTL_SEC;
        ao.wake = ctl__authz_wake;
        ao.wake_ud = c->httpd;
        ao.log = ctl__authz_log;
        c->authz = gc_authz_new(&ao, err, sizeof(err));
        if (!c->authz) {
                gc_log(GC_LOG_ERROR, "cannot start delegated auth", "error", err, NULL);
                return -EINVAL;
        }
        if (!c->o->auth_resource)
                gc_log(GC_LOG_INFO,
                       "delegated auth asks for the request's path: kube-apiserver's default "
                       "ClusterRole system:discovery lets every authenticated user get /api/*, "
                       "so /api/v1 is open to any valid token (--auth-resource restricts it)",
                       NULL);
        return gc_httpd_set_guard(c->httpd, gc_authz_guard, c->authz);
}

/*
 * The probe server: plain HTTP, no guard (probes carry no token), a few connections. /metrics
 * too, the API's own handler, so a flood on --listen cannot starve Prometheus either; not with
 * --auth-delegate, where it would be a way around the guard (the scrape then stays on --listen
 * with a token).
 */
static int ctl__probe_start(ctl *c)
{
        gc_httpd_opts o;
        char err[256], port[16];
        int metrics = c->api && !c->o->auth_delegate;

        memset(&o, 0, sizeof(o));
        o.listen = c->o->probe_listen;
        o.max_connections = CTL_PROBE_MAX_CONNECTIONS;
        o.log = ctl__httpd_log;
        c->probe = gc_httpd_new(&o, err, sizeof(err));
        if (!c->probe) {
                gc_log(GC_LOG_ERROR, "cannot listen for probes", "probe_listen", c->o->probe_listen,
                       "error", err, NULL);
                return -EINVAL;
        }
        if (gc_httpd_route(c->probe, "/healthz", 0, ctl__healthz, c) < 0 ||
            gc_httpd_route(c->probe, "/readyz", 0, ctl__readyz, c) < 0 ||
            (metrics && gc_api_metrics_route(c->api, c->probe) < 0) ||
            pthread_create(&c->probe_thread, NULL, ctl__httpd_main, c->probe) != 0) {
                c->probe = gc_httpd_free(c->probe);
                return -ENOMEM;
        }
        snprintf(port, sizeof(port), "%d", gc_httpd_port(c->probe));
        gc_log(GC_LOG_INFO, "listening for probes", "probe_listen", c->o->probe_listen, "port",
               port, "metrics", metrics ? "on" : "off", NULL);
        return 0;
}

int gc__ctl_health_start(ctl *c)
{
        gc_httpd_opts o;
        char err[256], port[16];

        memset(&o, 0, sizeof(o));
        o.listen = c->o->listen;
        o.tls_cert_file = c->o->tls_cert_file;
        o.tls_key_file = c->o->tls_key_file;
        o.log = ctl__httpd_log;
        c->httpd = gc_httpd_new(&o, err, sizeof(err));
        if (!c->httpd) {
                gc_log(GC_LOG_ERROR, "cannot listen", "listen", c->o->listen, "error", err, NULL);
                return -EINVAL;
        }
        if (c->o->auth_delegate && ctl__auth_start(c) < 0) {
                c->authz = gc_authz_free(c->authz);
                c->httpd = gc_httpd_free(c->httpd);
                return -EINVAL;
        }
        /* Probes carry no token: the health routes stay open with --auth-delegate. */
        if (gc_httpd_route(c->httpd, "/healthz", GC_HTTPD_OPEN, ctl__healthz, c) < 0 ||
            gc_httpd_route(c->httpd, "/readyz", GC_HTTPD_OPEN, ctl__readyz, c) < 0 ||
            (c->api && gc_api_routes(c->api, c->httpd) < 0) ||
            pthread_create(&c->httpd_thread, NULL, ctl__httpd_main, c->httpd) != 0) {
                c->authz = gc_authz_free(c->authz);
                c->httpd = gc_httpd_free(c->httpd);
                return -ENOMEM;
        }
        if (c->o->probe_listen && ctl__probe_start(c) < 0) {
                gc_httpd_stop(c->httpd);
                pthread_join(c->httpd_thread, NULL);
                c->authz = gc_authz_free(c->authz);
                c->httpd = gc_httpd_free(c->httpd);
                return -EINVAL;
        }
        atomic_store(&ctl__port, gc_httpd_port(c->httpd));
        snprintf(port, sizeof(port), "%d", gc_httpd_port(c->httpd));
        gc_log(GC_LOG_INFO, "listening", "listen", c->o->listen, "port", port, "tls",
               c->o->tls_cert_file ? "on" : "off", "auth",
               c->o->auth_delegate ? "delegated" : "off", NULL);
        return 0;
}

int gc__ctl_health_port(void)
{
        return atomic_load(&ctl__port);
}

void gc__ctl_health_stop(ctl *c)
{
        if (c->probe) {
                gc_httpd_stop(c->probe);
                pthread_join(c->probe_thread, NULL);
                c->probe = gc_httpd_free(c->probe);
        }
        if (!c->httpd)
                return;
        gc_httpd_stop(c->httpd);
        pthread_join(c->httpd_thread, NULL);
        atomic_store(&ctl__port, 0);
        /* Before the server: its worker wakes the server. */
        c->authz = gc_authz_free(c->authz);
        c->httpd = gc_httpd_free(c->httpd);
}
