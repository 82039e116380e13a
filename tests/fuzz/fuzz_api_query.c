/* fuzz_api_query: the API's query parameters (windows, steps, groupings, aggregates, flags) and
 * If-None-Match lists, run through every handler over a small fixed snapshot. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "config/config.h"
#include "api/api_int.h"

#define T0 ((int64_t)1794787200) /* 2026-11-16T00:00:00Z */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gc_snapshot *snap;

static void put(gc_ledger *l, const char *ns, const char *pod, const char *team, const char *node,
                double geq, int64_t start, int64_t end)
{
        gc_usage u = {0};

        u.pod_uid = pod;
        u.labels[0] = team; /* a label kept as a dimension: label:cost-center */
        u.dims[GC_DIM_NAMESPACE] = ns;
        u.dims[GC_DIM_TEAM] = team;
        u.dims[GC_DIM_PROJECT] = "p";
        u.dims[GC_DIM_MODEL] = "H100";
        u.dims[GC_DIM_CAPACITY_TYPE] = "on-demand";
        u.dims[GC_DIM_NODE] = node;
        u.dims[GC_DIM_POD] = pod;
        u.geq = geq;
        u.price_per_gpu_hour = 3.0;
        u.start = start;
        u.end = end;
        gc_ledger_put_usage(l, &u);
}

static void init(void)
{
        static const char *const keys[] = {"cost-center"};
        gc_ledger_opts lo = {0};
        gc_capacity c = {0};
        gc_snapshot_parts p;

        memset(&p, 0, sizeof(p));
        lo.pool = gc_strpool_new(1u << 20);
        lo.label_keys = keys;
        lo.n_label_keys = 1;
        p.ledger = gc_ledger_new(&lo);
        c.node = "n1";
        c.model = "H100";
        c.capacity_type = "on-demand";
        c.geq = 8;
        c.price_per_gpu_hour = 3.0;
        c.start = T0 - 40 * 86400;
        c.end = GC_OPEN;
        gc_ledger_put_capacity(p.ledger, &c);
        put(p.ledger, "ml", "a", "red", "n1", 2, T0 - 30 * 86400, T0 - 29 * 86400);
        put(p.ledger, "ml", "b", GC_UNATTRIBUTED, "n1", 1, T0 - 3600, GC_OPEN);
        put(p.ledger, "web", "c", "blue", "n1", 0.5, T0 - 7200, T0 - 60);
        gc_ledger_fold(p.ledger, T0 - 86400, 0);
        gc_config_api_settings(gc_config_default(), &p.settings); /* kept for the process */
        p.now = T0;
        p.pods = calloc(1, sizeof(*p.pods));
        p.n_pods = 1;
        p.pods[0] = (gc_api_pod){
            "b", "ml", "b", "n1", GC_UNATTRIBUTED, "p",     "H100", "on-demand", "Job", "j",
            "x", 1,    1,   3.0,  T0 - 3600,       GC_OPEN, 0.5,    0.6,         10,    3,
            0,   0,    NULL};
        snap = gc_snapshot_new(&p);
}

typedef int (*handler)(gc__api_ctx *x);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const struct {
                const char *path;
                handler fn;
                int opencost, json;
        } routes[] = {
            {"/api/v1/costs", gc__api_costs, 0, 1},
            {"/allocation", gc__api_allocation, 1, 1},
            {"/api/v1/pods", gc__api_pods, 0, 1},
            {"/api/v1/reports/daily", gc__api_reports, 0, 1},
            {"/api/v1/reports/weekly/latest", gc__api_reports, 0, 0},
            {"/api/v1/reports/daily/2026-11-15", gc__api_reports, 0, 0},
            {"/metrics", gc__api_metrics, 0, 0},
            {"/api/v1/prices", gc__api_prices, 0, 1},
            {"/api/v1/export/focus", gc__api_export, 0, 0}, /* CSV; its errors are JSON */
            {"/api/v1/export/csv", gc__api_export, 0, 0},
        };
        gc_httpd_param params[GC_HTTPD_MAX_PARAMS];
        gc_httpd_request req;
        gc_httpd_response res;
        gc__api_ctx x;
        char *text, *p;
        size_t n = 0, which;
        int64_t s, e, step;
        char err[256];

        if (!snap)
                init();
        if (!snap || size < 1 || size > 4096)
                return 0;
        which = data[0] % (sizeof(routes) / sizeof(routes[0]));
        text = malloc(size);
        if (!text)
                return 0;
        memcpy(text, data + 1, size - 1);
        text[size - 1] = '\0';

        /* The whole text as an If-None-Match list and as a window. */
        gc__api_etag_match(text, "\"0123456789abcdef\"");
        if (gc_api_window_parse(text, T0, 0, &s, &e, err, sizeof(err)) == 0 &&
            (e <= s || e - s > GC_API_MAX_WINDOW_S))
                abort();

        /* "a=b&c=d", undecoded, as httpd would hand it over decoded. */
        for (p = text; p && *p && n < GC_HTTPD_MAX_PARAMS;) {
                char *amp = strchr(p, '&'), *eq;

                if (amp)
                        *amp = '\0';
                eq = strchr(p, '=');
                if (eq)
                        *eq = '\0';
                params[n].name = p;
                params[n].value = eq ? eq + 1 : "";
                n++;
                if (gc_api_window_parse(params[n - 1].value, T0, 3600, &s, &e, err, sizeof(err)) ==
                        0 &&
                    gc_api_step_parse("1h", s, e, &step, err, sizeof(err)) == 0 &&
                    (e - s + step - 1) / step > GC_API_MAX_SETS)
                        abort();
                p = amp ? amp + 1 : NULL;
        }

        memset(&req, 0, sizeof(req));
        memset(&res, 0, sizeof(res));
        req.method = "GET";
        req.path = routes[which].path;
        req.params = params;
        req.n_params = n;
        req.query = "";
        res.status = 200;
        gc_buf_init(&res.body, 16u << 20);
        gc_buf_init(&res.headers_, 4096);
        memset(&x, 0, sizeof(x));
        x.s = snap;
        x.req = &req;
        x.res = &res;
        x.opencost = routes[which].opencost;
        /* Whatever came in, a JSON route answers JSON: a result or an error naming the input. */
        if (routes[which].fn(&x) == 0 && (routes[which].json || res.status != 200)) {
                cJSON *j = cJSON_ParseWithLengthOpts(res.body.data ? res.body.data : "",
                                                     res.body.len, NULL, 0);

                if (!j)
                        abort();
                cJSON_Delete(j);
        }
        gc_buf_free(&res.body);
        gc_buf_free(&res.headers_);
        free(text);
        return 0;
}
