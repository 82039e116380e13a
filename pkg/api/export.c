/* api export: GET /api/v1/export/focus and /api/v1/export/csv (docs/api.md, docs/export.md). */
#include "api_int.h"

#include <errno.h>
#include <string.h>

#include "export/export.h"

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
 * The body is gathered in the response (the server sends whole bodies), so an export is bounded
 * by the server's response limit: a longer one is a 400 naming the window, with what to ask.
 */
int gc__api_export(gc__api_ctx *x)
{
        static const char *const known[] = {"window", "granularity", "focus_version", "share_idle",
                                            NULL};
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
                if (strcmp(ver, "1.2") != 0 && strcmp(ver, "1.3") != 0)
                        return gc__api_bad(x, 400, "focus_version", "must be 1.2 or 1.3");
                o.focus_minor = ver[2] - '0';
        }
        o.chargeback = x->s->p.cfg->chargeback;
        if (share && gc_chargeback_mode_parse(share, &o.chargeback.mode) < 0)
                return gc__api_bad(x, 400, "share_idle", "must be none, proportional or weights");
        if (o.chargeback.mode == GC_CHARGEBACK_WEIGHTS && o.chargeback.n_weights == 0)
                return gc__api_bad(x, 400, "share_idle",
                                   "weights needs chargeback.weights in the configuration");
        o.ledger = x->s->p.ledger;
        o.now = x->s->p.now;
        o.cluster = x->s->cluster;
        o.currency = x->s->currency;
        o.region_of = gc__export_region;
        o.region_ud = x->s;
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
