/* demo: --demo serves the API and dashboard over the embedded example cluster, no API server. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller_int.h"
#include "dump/dump.h"
#include "log/log.h"

/* Where a browser on this machine finds the dashboard. */
static void ctl__url(const gc_controller_opts *o, int port, char *out, size_t n)
{
        const char *colon = strrchr(o->listen, ':');
        int host_len = colon ? (int)(colon - o->listen) : 0;
        const char *host = o->listen;

        /* A wildcard address is not one to browse to. */
        if (host_len == 0 || (host_len == 7 && strncmp(host, "0.0.0.0", 7) == 0)) {
                host = "127.0.0.1";
                host_len = 9;
        } else if (host_len == 4 && strncmp(host, "[::]", 4) == 0) {
                host = "[::1]";
                host_len = 5;
        }
        snprintf(out, n, "%s://%.*s:%d/", o->tls_cert_file ? "https" : "http", host_len, host,
                 port);
}

int gc_controller_demo_run(const gc_controller_opts *o, const gc_controller_demo *demo,
                           const volatile sig_atomic_t *stop)
{
        gc_dump_input config = demo->config;
        int64_t now = 0, start, end;
        char err[640], when[GC_TIME_LEN], url[300];
        gc_buf own_config;
        gc_dump d;
        ctl c;
        int rc = 1, r;

        memset(&c, 0, sizeof(c));
        memset(&d, 0, sizeof(d));
        c.o = o;
        c.demo = demo;
        gc_buf_init(&own_config, 0);
        pthread_mutex_init(&c.mu, NULL);
        /* A configuration of one's own (label dimensions, prices) over the same cluster. */
        if (o->config_path) {
                r = gc_read_file(o->config_path, (size_t)16 << 20, &own_config);
                if (r < 0) {
                        gc_log(GC_LOG_ERROR, "cannot read the configuration", "file",
                               o->config_path, "error", strerror(-r), NULL);
                        goto finish;
                }
                config.name = o->config_path;
                config.data = own_config.data ? own_config.data : "";
                config.len = own_config.len;
        }
        if (gc_dump_demo_settings(demo->settings.data, demo->settings.len, &now, &start, &end, err,
                                  sizeof(err)) < 0 ||
            gc_dump_start(&d, &config, NULL, err, sizeof(err)) < 0 ||
            gc_dump_load(&d, &demo->pods, &demo->nodes, &demo->namespaces, err, sizeof(err)) < 0) {
                gc_log(GC_LOG_ERROR, "cannot load the example cluster", "error", err, NULL);
                goto finish;
        }
        /* Borrowed from the dump, which outlives every use below. */
        c.cfg = d.cfg;
        c.pool = d.pool;
        c.ledger = d.ledger;
        c.acct = d.acct;
        c.mirror = d.mirror; /* the dump was loaded through it: its pods and GPU nodes */
        c.leader = 1;
        c.started_at = gc__ctl_now();
        atomic_store(&c.ready, 1);
        atomic_store(&c.last_tick, (long)gc__ctl_mono());
        if (gc__ctl_usage_start(&c) < 0 || gc__ctl_api_new(&c) < 0) {
                gc_log(GC_LOG_ERROR, "cannot start", "error", "out of memory", NULL);
                goto finish;
        }
        /* The examples are a dump taken at `now`: the API stands at that moment, for ever. */
        if (gc__ctl_snapshot_publish(&c, now) < 0 || gc__ctl_health_start(&c) < 0)
                goto finish;
        gc_time_format(now, when);
        ctl__url(o, gc__ctl_health_port(), url, sizeof(url));
        gc_log(GC_LOG_INFO, "demo: serving the bundled example cluster (no API server)", "url", url,
               "now", when, NULL);
        while (!*stop) {
                atomic_store(&c.last_tick, (long)gc__ctl_mono());
                usleep(200 * 1000);
        }
        gc__ctl_health_stop(&c);
        gc_log(GC_LOG_INFO, "stopped", NULL);
        rc = 0;
finish:
        c.api = gc_api_free(c.api);
        gc__ctl_usage_stop(&c);
        gc_dump_release(&d);
        gc_buf_free(&own_config);
        pthread_mutex_destroy(&c.mu);
        return rc;
}
