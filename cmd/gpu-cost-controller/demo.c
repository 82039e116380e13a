/* demo: --demo serves the API and dashboard over the embedded example cluster, no API server. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_int.h"
#include "dump/dump.h"
#include "embedded.h"
#include "log.h"

static int ctl__embedded(const char *name, gc_dump_input *ret)
{
        for (const gc_embedded_file *f = gc_embedded_files; f->name; f++) {
                if (strcmp(f->name, name) == 0) {
                        ret->name = f->name;
                        ret->data = f->data;
                        ret->len = f->len;
                        return 0;
                }
        }
        ctl_log(CTL_ERROR, "an embedded example is missing from this build", "file", name, NULL);
        return -ENOENT;
}

/* The dump's pod records as the controller's own, so snapshots join them the same way. */
static int ctl__adopt_pods(ctl *c, const gc_dump *d)
{
        if (!d->pods.n)
                return 0;
        c->pods = calloc(d->pods.n, sizeof(*c->pods));
        if (!c->pods)
                return -ENOMEM;
        c->cap_pods = d->pods.n;
        for (size_t i = 0; i < d->pods.n; i++) {
                const gc_pod *p = &d->pods.v[i];
                size_t idx;

                if (!p->uid || gc_ptrmap_get(&c->pod_map, p->uid, &idx) == 0)
                        continue;
                if (gc_ptrmap_put(&c->pod_map, p->uid, c->n_pods) < 0)
                        return -ENOMEM;
                c->pods[c->n_pods++].pod = *p;
        }
        return 0;
}

/* The dump's GPU nodes as the informer would have recorded them (the snapshots' node table). */
static int ctl__adopt_nodes(ctl *c, const gc_dump *d)
{
        if (!d->nodes.n)
                return 0;
        c->named[1] = calloc(d->nodes.n, sizeof(*c->named[1]));
        if (!c->named[1])
                return -ENOMEM;
        c->cap_named[1] = d->nodes.n;
        for (size_t i = 0; i < d->nodes.n; i++) {
                const gc_node *n = &d->nodes.v[i];
                ctl_named *e = &c->named[1][c->n_named[1]];
                size_t idx;

                if (!n->name || gc_ptrmap_get(&c->named_map[1], n->name, &idx) == 0)
                        continue;
                if (gc_ptrmap_put(&c->named_map[1], n->name, c->n_named[1]) < 0)
                        return -ENOMEM;
                e->name = n->name;
                ctl_node_facts(c, e, n);
                c->n_named[1]++;
        }
        return 0;
}

/* Where a browser on this machine finds the dashboard. */
static void ctl__url(const ctl_opts *o, int port, char *out, size_t n)
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

int ctl_demo_run(const ctl_opts *o, const volatile sig_atomic_t *stop)
{
        gc_dump_input pods, nodes, nss, config, settings;
        int64_t now = 0, start, end;
        char err[640], when[GC_TIME_LEN], url[300];
        gc_buf own_config;
        gc_dump d;
        ctl c;
        int rc = 1, r;

        memset(&c, 0, sizeof(c));
        memset(&d, 0, sizeof(d));
        c.o = o;
        gc_buf_init(&own_config, 0);
        pthread_mutex_init(&c.mu, NULL);
        if (ctl__embedded("pods.json", &pods) < 0 || ctl__embedded("nodes.json", &nodes) < 0 ||
            ctl__embedded("namespaces.json", &nss) < 0 ||
            ctl__embedded("config.json", &config) < 0 || ctl__embedded("demo.json", &settings) < 0)
                goto finish;
        /* A configuration of one's own (label dimensions, prices) over the same cluster. */
        if (o->config_path) {
                r = gc_read_file(o->config_path, (size_t)16 << 20, &own_config);
                if (r < 0) {
                        ctl_log(CTL_ERROR, "cannot read the configuration", "file", o->config_path,
                                "error", strerror(-r), NULL);
                        goto finish;
                }
                config.name = o->config_path;
                config.data = own_config.data ? own_config.data : "";
                config.len = own_config.len;
        }
        if (gc_dump_demo_settings(settings.data, settings.len, &now, &start, &end, err,
                                  sizeof(err)) < 0 ||
            gc_dump_start(&d, &config, NULL, err, sizeof(err)) < 0 ||
            gc_dump_load(&d, &pods, &nodes, &nss, err, sizeof(err)) < 0) {
                ctl_log(CTL_ERROR, "cannot load the example cluster", "error", err, NULL);
                goto finish;
        }
        /* Borrowed from the dump, which outlives every use below. */
        c.cfg = d.cfg;
        c.pool = d.pool;
        c.ledger = d.ledger;
        c.acct = d.acct;
        c.leader = 1;
        c.started_at = ctl_now();
        atomic_store(&c.ready, 1);
        atomic_store(&c.last_tick, (long)ctl_mono());
        if (ctl__adopt_pods(&c, &d) < 0 || ctl__adopt_nodes(&c, &d) < 0 ||
            ctl_usage_start(&c) < 0 || ctl_api_new(&c) < 0) {
                ctl_log(CTL_ERROR, "cannot start", "error", "out of memory", NULL);
                goto finish;
        }
        /* The examples are a dump taken at `now`: the API stands at that moment, for ever. */
        if (ctl_snapshot_publish(&c, now) < 0 || ctl_health_start(&c) < 0)
                goto finish;
        gc_time_format(now, when);
        ctl__url(o, ctl_health_port(), url, sizeof(url));
        ctl_log(CTL_INFO, "demo: serving the bundled example cluster (no API server)", "url", url,
                "now", when, NULL);
        while (!*stop) {
                atomic_store(&c.last_tick, (long)ctl_mono());
                usleep(200 * 1000);
        }
        ctl_health_stop(&c);
        ctl_log(CTL_INFO, "stopped", NULL);
        rc = 0;
finish:
        c.api = gc_api_free(c.api);
        ctl_usage_stop(&c);
        free(c.pods);
        gc_ptrmap_free(&c.pod_map);
        free(c.named[1]);
        gc_ptrmap_free(&c.named_map[1]);
        gc_dump_release(&d);
        gc_buf_free(&own_config);
        pthread_mutex_destroy(&c.mu);
        return rc;
}
