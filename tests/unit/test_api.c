/* test_api: the REST API, /allocation and /metrics over a real server, against figures computed
 * by hand from a small ledger. */
#include <check.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "config/config.h"
#include "api/api_int.h"
#include "publish/publish.h"
#include "savings/savings.h"

#define T0  ((int64_t)1794787200) /* Monday 2026-11-16T00:00:00Z */
#define H   ((int64_t)3600)
#define DAY ((int64_t)86400)
#define NOW (T0 + 8 * H)
#define WIN "window=1794787200,1794816000" /* [T0, T0 + 8h) */

/* Expected figures, by hand (docs in the fixture below). */
#define COST_A   16.0                                /* 2 GPUs x 2 h x $4 */
#define COST_B   18.0                                /* 1 GPU x 4.5 h x $4 */
#define COST_C   40.0                                /* 4 GPUs x 5 h (to now) x $2 */
#define COST_D   (0.5 * 7217.0 / 3600.0 * 2.0)       /* 0.5 GPU x 2 h 17 s x $2 */
#define COST_ALL (COST_A + COST_B + COST_C + COST_D) /* held in the window */
#define CAP_N1   256.0                               /* 8 GPUs x 8 h x $4 */
#define CAP_N2   64.0                                /* 4 GPUs x 8 h x $2 */
#define IDLE_N1  (CAP_N1 - COST_A - COST_B)
#define IDLE_N2  (CAP_N2 - COST_C - COST_D)

static gc_strpool *pool;
static gc_ledger *base; /* the fixture; snapshots get clones */
static gc_config *cfg;
static gc_api *api;
static gc_httpd *srv;
static pthread_t srv_th;
static char url_base[64];

/* ---- fixture ----------------------------------------------------------------------------------
 */

/*
 * The fixture's workloads (top-level owners): train-a's Deployment, train-b a bare pod,
 * orphan-d a CronJob's (its snapshot record knows no owner), etl-c none recorded (its snapshot
 * record names its Job).
 */
static const char *workload_of(const char *name)
{
        static const char *const w[][2] = {{"train-a", "Deployment/ml/train"},
                                           {"old-e", "Deployment/ml/train"},
                                           {"train-b", "Pod/ml/train-b"},
                                           {"orphan-d", "CronJob/web/sweep"}};

        for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
                if (strcmp(w[i][0], name) == 0)
                        return w[i][1];
        return NULL;
}

/* The fixture's label cost-center (kept as a dimension): orphan-d has none. */
static const char *cost_center_of(const char *name)
{
        if (!strcmp(name, "train-b"))
                return "cc-2";
        return strcmp(name, "orphan-d") ? "cc-1" : NULL;
}

static void put_pod(gc_ledger *l, const char *ns, const char *name, const char *team,
                    const char *project, const char *node, const char *ctype, double geq,
                    double price, int64_t start, int64_t end)
{
        gc_usage u = {0};

        u.labels[0] = cost_center_of(name);
        u.pod_uid = name;
        u.dims[GC_DIM_NAMESPACE] = ns;
        u.dims[GC_DIM_TEAM] = team;
        u.dims[GC_DIM_PROJECT] = project;
        u.dims[GC_DIM_MODEL] = "NVIDIA-H100-80GB-HBM3";
        u.dims[GC_DIM_CAPACITY_TYPE] = ctype;
        u.dims[GC_DIM_NODE] = node;
        u.dims[GC_DIM_POD] = name;
        u.dims[GC_DIM_WORKLOAD] = workload_of(name);
        u.geq = geq;
        u.price_per_gpu_hour = price;
        u.start = start;
        u.end = end;
        ck_assert_int_eq(gc_ledger_put_usage(l, &u), 0);
}

static void put_node(gc_ledger *l, const char *node, const char *ctype, double geq, double price)
{
        gc_capacity c = {0};

        c.node = node;
        c.model = "NVIDIA-H100-80GB-HBM3";
        c.capacity_type = ctype;
        c.geq = geq;
        c.price_per_gpu_hour = price;
        c.start = T0;
        c.end = GC_OPEN;
        ck_assert_int_eq(gc_ledger_put_capacity(l, &c), 0);
}

/* The snapshot's pod table for the fixture (what the controller would send). */
static gc_api_pod *fixture_pods(size_t *n)
{
        gc_api_pod *v = calloc(5, sizeof(*v));
        const char *P = NULL;

        ck_assert_ptr_nonnull(v);
        /* uid, ns, name, node, team, project, model, ctype, kind, controller, container, ...,
         * workload */
        v[0] = (gc_api_pod){"train-a",    "ml",    "train-a", "n1", "red", "p1", P,   "on-demand",
                            "ReplicaSet", "train", "main",    2,    2,     4,    T0,  T0 + 2 * H,
                            0.5,          0.9,     1000,      10,   0,     0,    NULL};
        v[1] = (gc_api_pod){"train-b", "ml", "train-b", "n1", "blue", "p2", P,         "on-demand",
                            P,         P,    P,         1,    1,      4,    T0 + 1800, T0 + 5 * H,
                            NAN,       NAN,  NAN,       0,    0,      0,    NULL};
        v[2] = (gc_api_pod){"etl-c", "web", "etl-c",  "n2", "blue", "p3", P,          "spot",
                            "Job",   "etl", "worker", 4,    4,      2,    T0 + 3 * H, GC_OPEN,
                            0.25,    0.5,   100,      5,    0,      0,    NULL};
        v[3] = (gc_api_pod){"orphan-d",
                            "web",
                            "orphan-d",
                            "n2",
                            GC_UNATTRIBUTED,
                            GC_UNATTRIBUTED,
                            P,
                            "spot",
                            P,
                            P,
                            P,
                            0.5,
                            1,
                            2,
                            T0 + 4 * H,
                            T0 + 6 * H + 17,
                            NAN,
                            NAN,
                            NAN,
                            0,
                            0,
                            0,
                            NULL};
        v[4] = (gc_api_pod){"old-e", "ml", "old-e", "n1", "red", "p1", P,           "on-demand",
                            P,       P,    P,       1,    1,     4,    T0 - 10 * H, T0 - 8 * H,
                            NAN,     NAN,  NAN,     0,    0,     0,    NULL};
        *n = 5;
        return v;
}

/* A blind span the next make_snapshot carries (test_costs_blind_span). */
static int64_t blind_from, blind_to;

/* A snapshot of the fixture (plus `extra` GPU-hours of one more pod, at $1, if nonzero). */
static gc_snapshot *make_snapshot(int64_t now, double extra, const char *recommendations)
{
        gc_snapshot_parts p;
        gc_snapshot *s;

        memset(&p, 0, sizeof(p));
        p.ledger = gc_ledger_clone(base);
        ck_assert_ptr_nonnull(p.ledger);
        if (extra > 0)
                put_pod(p.ledger, "extra", "extra-pod", "green", "p9", "n2", "spot", 1, 1.0, T0 + H,
                        T0 + H + (int64_t)(extra * 3600));
        gc_config_api_settings(cfg, &p.settings);
        p.now = now;
        p.pods = fixture_pods(&p.n_pods);
        if (recommendations)
                p.recommendations_json = strdup(recommendations);
        p.finding_stats = calloc(1, sizeof(*p.finding_stats));
        p.finding_stats[0] = (gc_api_finding_stat){"idle_gpu", "red", 2, 1234.5};
        p.n_finding_stats = 1;
        p.health.started_at = T0 - DAY;
        p.health.ready = 1;
        p.health.leader = 1;
        p.health.watch_restarts[2] = 3;
        p.health.last_event_at[2] = now - 7;
        p.health.checkpoint_at = now - 30;
        p.health.report_writes = 4;
        p.health.blind_from = blind_from;
        p.health.blind_to = blind_to;
        p.health.blind_bound_cost = blind_to > blind_from ? 12.5 : 0;
        s = gc_snapshot_new(&p);
        ck_assert_ptr_nonnull(s);
        return s;
}

static void *serve(void *ud)
{
        (void)ud;
        gc_httpd_run(srv, NULL);
        return NULL;
}

static void setup(void)
{
        gc_ledger_opts lo = {0};
        gc_httpd_opts ho = {0};
        char err[256];

        static const char *const label_keys[] = {"cost-center"};

        pool = gc_strpool_new(64u << 20);
        lo.pool = pool;
        lo.label_keys = label_keys;
        lo.n_label_keys = 1;
        base = gc_ledger_new(&lo);
        ck_assert_ptr_nonnull(base);
        put_node(base, "n1", "on-demand", 8, 4.0);
        put_node(base, "n2", "spot", 4, 2.0);
        put_pod(base, "ml", "train-a", "red", "p1", "n1", "on-demand", 2, 4.0, T0, T0 + 2 * H);
        put_pod(base, "ml", "train-b", "blue", "p2", "n1", "on-demand", 1, 4.0, T0 + 1800,
                T0 + 5 * H);
        put_pod(base, "web", "etl-c", "blue", "p3", "n2", "spot", 4, 2.0, T0 + 3 * H, GC_OPEN);
        put_pod(base, "web", "orphan-d", GC_UNATTRIBUTED, GC_UNATTRIBUTED, "n2", "spot", 0.5, 2.0,
                T0 + 4 * H, T0 + 6 * H + 17);
        /* The day before: no node capacity recorded then, one pod. */
        put_pod(base, "ml", "old-e", "red", "p1", "n1", "on-demand", 1, 4.0, T0 - 10 * H,
                T0 - 8 * H);
        cfg = gc_config_default();
        ck_assert_ptr_nonnull(cfg);
        api = gc_api_new(NULL);
        ck_assert_ptr_nonnull(api);
        ho.listen = "127.0.0.1:0";
        srv = gc_httpd_new(&ho, err, sizeof(err));
        ck_assert_msg(srv != NULL, "%s", err);
        ck_assert_int_eq(gc_api_routes(api, srv), 0);
        snprintf(url_base, sizeof(url_base), "http://127.0.0.1:%d", gc_httpd_port(srv));
        ck_assert_int_eq(pthread_create(&srv_th, NULL, serve, NULL), 0);
}

static void teardown(void)
{
        gc_httpd_stop(srv);
        pthread_join(srv_th, NULL);
        srv = gc_httpd_free(srv);
        api = gc_api_free(api);
        base = gc_ledger_free(base);
        cfg = gc_config_free(cfg);
        pool = gc_strpool_free(pool);
}

/* ---- a client ---------------------------------------------------------------------------------
 */

typedef struct resp {
        long status;
        gc_buf body;
        gc_buf headers;
        char ctype[128];
} resp;

static size_t to_buf(char *p, size_t size, size_t n, void *ud)
{
        return gc_buf_append(ud, p, size * n) == 0 ? size * n : 0;
}

/* A request to the server at server ("http://127.0.0.1:port"). */
static void fetch_from(const char *server, const char *path, const char *method, const char *inm,
                       resp *r)
{
        CURL *c = curl_easy_init();
        struct curl_slist *hdrs = NULL;
        char url[4096], h[256];
        char *ct = NULL;

        ck_assert_ptr_nonnull(c);
        memset(r, 0, sizeof(*r));
        gc_buf_init(&r->body, 32u << 20);
        gc_buf_init(&r->headers, 1u << 16);
        snprintf(url, sizeof(url), "%s%s", server, path);
        if (inm) {
                snprintf(h, sizeof(h), "If-None-Match: %s", inm);
                hdrs = curl_slist_append(hdrs, h);
        }
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, to_buf);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, to_buf);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, &r->headers);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
        if (method && !strcmp(method, "HEAD"))
                curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
        else if (method)
                curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        ck_assert_int_eq(curl_easy_perform(c), CURLE_OK);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
        curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
        gc_strlcpy(r->ctype, ct ? ct : "", sizeof(r->ctype));
        curl_slist_free_all(hdrs);
        curl_easy_cleanup(c);
        if (!r->body.data)
                gc_buf_puts(&r->body, "");
}

static void fetch(const char *path, const char *method, const char *inm, resp *r)
{
        fetch_from(url_base, path, method, inm, r);
}

static void resp_free(resp *r)
{
        gc_buf_free(&r->body);
        gc_buf_free(&r->headers);
}

/* The value of a response header (first), copied into out; "" when absent. */
static const char *header(const resp *r, const char *name, char *out, size_t n)
{
        size_t nl = strlen(name);
        const char *p = r->headers.data;

        out[0] = '\0';
        while (p && *p) {
                const char *e = strstr(p, "\r\n");

                if (!e)
                        break;
                if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
                        const char *v = p + nl + 1;

                        while (*v == ' ')
                                v++;
                        snprintf(out, n, "%.*s", (int)(e - v), v);
                        return out;
                }
                p = e + 2;
        }
        return out;
}

/* GET path, expect status, return the parsed JSON (caller deletes). */
static cJSON *get_json(const char *path, long status)
{
        resp r;
        cJSON *j;

        fetch(path, NULL, NULL, &r);
        ck_assert_msg(r.status == status, "%s: status %ld, want %ld: %s", path, r.status, status,
                      r.body.data);
        j = cJSON_ParseWithLengthOpts(r.body.data, r.body.len, NULL, 0);
        ck_assert_msg(j != NULL, "%s: not JSON: %s", path, r.body.data);
        resp_free(&r);
        return j;
}

static double num(const cJSON *o, const char *name)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

        ck_assert_msg(cJSON_IsNumber(v), "%s is not a number", name);
        return v->valuedouble;
}

static const char *str(const cJSON *o, const char *name)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

        ck_assert_msg(cJSON_IsString(v), "%s is not a string", name);
        return v->valuestring;
}

#define ck_near(a, b, eps) ck_assert_msg(fabs((a) - (b)) <= (eps), "%.9f != %.9f", (a), (b))

/* A 400 naming the parameter, in our shape or OpenCost's. */
static void expect_bad(const char *path, long status, const char *param, int opencost)
{
        cJSON *j = get_json(path, status);
        const char *msg = str(j, opencost ? "message" : "error");

        ck_assert_msg(strncmp(msg, param, strlen(param)) == 0, "%s: %s", path, msg);
        ck_assert_str_eq(str(j, "parameter"), param);
        ck_assert_int_eq((int)num(j, opencost ? "code" : "status"), (int)status);
        if (opencost)
                ck_assert_str_eq(str(j, "status"), "error");
        cJSON_Delete(j);
}

/* ---- windows ----------------------------------------------------------------------------------
 */

START_TEST(test_window_forms)
{
        static const struct {
                const char *s;
                int64_t off;
                int64_t start, end;
        } ok[] = {
            {"30m", 0, T0 + 8 * H + 1800 - 1800, T0 + 8 * H + 1800},
            {"12h", 0, T0 + 8 * H + 1800 - 12 * H, T0 + 8 * H + 1800},
            {"7d", 0, T0 + 8 * H + 1800 - 7 * DAY, T0 + 8 * H + 1800},
            {"2w", 0, T0 + 8 * H + 1800 - 14 * DAY, T0 + 8 * H + 1800},
            {"today", 0, T0, T0 + 8 * H + 1800},
            {"yesterday", 0, T0 - DAY, T0},
            {"week", 0, T0, T0 + 8 * H + 1800},
            {"lastweek", 0, T0 - 7 * DAY, T0},
            {"month", 0, 1793491200 /* 2026-11-01 */, T0 + 8 * H + 1800},
            {"lastmonth", 0, 1790812800 /* 2026-10-01 */, 1793491200},
            {"2026-11-16T00:00:00Z,2026-11-16T08:00:00Z", 0, T0, T0 + 8 * H},
            {"2026-11-16T02:00:00+02:00,1794816000", 0, T0, T0 + 8 * H},
            {"1794787200,1794816000", 0, T0, T0 + 8 * H},
            /* Days at +02:00: 08:30Z is 10:30 local; the local day began at 22:00Z. */
            {"today", 7200, T0 - 7200, T0 + 8 * H + 1800},
            {"yesterday", 7200, T0 - 7200 - DAY, T0 - 7200},
            /* At -05:00 it is 03:30 on Monday: the week began at 05:00Z today. */
            {"week", -5 * H, T0 + 5 * H, T0 + 8 * H + 1800},
            {"lastweek", -5 * H, T0 + 5 * H - 7 * DAY, T0 + 5 * H},
            {"month", -5 * H, 1793491200 + 5 * H, T0 + 8 * H + 1800},
        };
        static const char *const bad[] = {
            "",
            "7x",
            "0d",
            "401d",
            "abc",
            "-5m",
            "1794816000,1794787200",
            "1794787200,",
            ",1794787200",
            "1794787200,1794787200",
            "2026-13-01T00:00:00Z,1794816000",
            "0,99999999",
            "1,2,3",
            "Today",
            "7d ",
            "99999999999999999999d",
        };
        char err[256];
        int64_t s, e;

        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
                int r = gc_api_window_parse(ok[i].s, T0 + 8 * H + 1800, ok[i].off, &s, &e, err,
                                            sizeof(err));

                ck_assert_msg(r == 0, "%s: %s", ok[i].s, err);
                ck_assert_msg(s == ok[i].start && e == ok[i].end, "%s@%lld: [%lld, %lld)", ok[i].s,
                              (long long)ok[i].off, (long long)s, (long long)e);
        }
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                err[0] = '\0';
                ck_assert_msg(gc_api_window_parse(bad[i], NOW, 0, &s, &e, err, sizeof(err)) ==
                                  -EINVAL,
                              "%s accepted", bad[i]);
                ck_assert_msg(err[0] != '\0', "%s: no reason", bad[i]);
        }
        /* "today" at 00:00 exactly is empty. */
        ck_assert_int_eq(gc_api_window_parse("today", T0, 0, &s, &e, err, sizeof(err)), -EINVAL);
        /* Steps. */
        ck_assert_int_eq(gc_api_step_parse("1h", T0, T0 + DAY, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(s, H);
        ck_assert_int_eq(gc_api_step_parse("2m", T0, T0 + DAY, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(gc_api_step_parse("1m", T0, T0 + DAY, &s, err, sizeof(err)), -EINVAL);
        ck_assert_int_eq(gc_api_step_parse("1s", T0, T0 + DAY, &s, err, sizeof(err)), -EINVAL);
        ck_assert_int_eq(gc_api_step_parse("0h", T0, T0 + DAY, &s, err, sizeof(err)), -EINVAL);
        ck_assert_int_eq(gc_api_step_parse("h", T0, T0 + DAY, &s, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(test_no_data_yet)
{
        cJSON *j = get_json("/api/v1/costs", 503);

        ck_assert_str_eq(str(j, "error"), "no data yet");
        cJSON_Delete(j);
}
END_TEST

START_TEST(test_bad_parameters)
{
        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        expect_bad("/api/v1/costs?window=7x", 400, "window", 0);
        expect_bad("/api/v1/costs?window=lastyear", 400, "window", 0);
        expect_bad("/api/v1/costs?window=1794816000,1794787200", 400, "window", 0);
        expect_bad("/api/v1/costs?window=1d&step=1s", 400, "step", 0);
        expect_bad("/api/v1/costs?by=team,colour", 400, "by", 0);
        expect_bad("/api/v1/costs?windw=7d", 400, "windw", 0);
        expect_bad("/api/v1/pods?limit=0", 400, "limit", 0);
        expect_bad("/api/v1/reports/daily/2026-11-16?format=pdf", 400, "format", 0);
        expect_bad("/api/v1/reports/daily/16-11-2026", 400, "id", 0);
        expect_bad("/allocation", 400, "window", 1);
        expect_bad("/allocation?window=7x", 400, "window", 1);
        expect_bad("/allocation?window=7d&step=0h", 400, "step", 1);
        expect_bad("/allocation?window=7d&includeIdle=maybe", 400, "includeIdle", 1);
        expect_bad("/allocation?window=7d&aggregate=colour", 400, "aggregate", 1);
}
END_TEST

START_TEST(test_not_found_and_methods)
{
        resp r;
        char allow[128];
        cJSON *j;

        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        j = get_json("/api/v1/nope", 404);
        ck_assert_int_eq((int)num(j, "status"), 404);
        cJSON_Delete(j);
        cJSON_Delete(get_json("/api/v1/reports/yearly", 404));
        cJSON_Delete(get_json("/api/v1/reports/daily/2026-11-16/x", 404));
        fetch("/api/v1/costs", "POST", NULL, &r);
        ck_assert_int_eq(r.status, 405);
        ck_assert_ptr_nonnull(strstr(header(&r, "Allow", allow, sizeof(allow)), "GET"));
        resp_free(&r);
        fetch("/allocation?window=1d", "DELETE", NULL, &r);
        ck_assert_int_eq(r.status, 405);
        resp_free(&r);
        /* HEAD answers as GET without a body. */
        fetch("/api/v1/costs?" WIN, "HEAD", NULL, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_uint_eq(r.body.len, 0);
        resp_free(&r);
}
END_TEST

/* ---- /api/v1/costs -----------------------------------------------------------------------------
 */

static const cJSON *group(const cJSON *summary, const char *dim, const char *value)
{
        const cJSON *g;

        cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(summary, "groups"))
        {
                const cJSON *k = cJSON_GetObjectItemCaseSensitive(g, "keys");

                if (!strcmp(str(k, dim), value))
                        return g;
        }
        ck_abort_msg("no group %s=%s", dim, value);
        return NULL;
}

START_TEST(test_costs)
{
        cJSON *j, *sets, *set;
        double sum = 0, red = 0;
        int n = 0;

        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        j = get_json("/api/v1/costs?" WIN "&by=team", 200);
        ck_near(num(group(j, "team", "red"), "cost_usd"), COST_A, 1e-9);
        ck_near(num(group(j, "team", "blue"), "cost_usd"), COST_B + COST_C, 1e-9);
        ck_near(num(group(j, "team", GC_UNATTRIBUTED), "cost_usd"), COST_D, 1e-9);
        ck_near(num(cJSON_GetObjectItemCaseSensitive(j, "total"), "cost_usd"), COST_ALL, 1e-9);
        ck_near(num(cJSON_GetObjectItemCaseSensitive(j, "idle"), "cost_usd"), IDLE_N1 + IDLE_N2,
                1e-9);
        cJSON_Delete(j);

        /* A filter. */
        j = get_json("/api/v1/costs?" WIN "&by=namespace,team&namespace=ml", 200);
        ck_near(num(cJSON_GetObjectItemCaseSensitive(j, "total"), "cost_usd"), COST_A + COST_B,
                1e-9);
        cJSON_Delete(j);

        /* By workload (the top-level owner), and filtered to one (its '/' escaped or not). */
        j = get_json("/api/v1/costs?" WIN "&by=workload", 200);
        ck_assert_str_eq(
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "by"), 0)->valuestring,
            "workload");
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "groups")), 4);
        ck_near(num(group(j, "workload", "Deployment/ml/train"), "cost_usd"), COST_A, 1e-9);
        ck_assert_int_eq((int)num(group(j, "workload", "Deployment/ml/train"), "pods"), 1);
        ck_near(num(group(j, "workload", "Pod/ml/train-b"), "cost_usd"), COST_B, 1e-9);
        ck_near(num(group(j, "workload", "CronJob/web/sweep"), "cost_usd"), COST_D, 1e-9);
        ck_near(num(group(j, "workload", ""), "cost_usd"), COST_C, 1e-9);
        cJSON_Delete(j);
        j = get_json("/api/v1/costs?" WIN "&by=workload,team&workload=Deployment%2Fml%2Ftrain",
                     200);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "groups")), 1);
        ck_near(num(group(j, "team", "red"), "cost_usd"), COST_A, 1e-9);
        ck_near(num(cJSON_GetObjectItemCaseSensitive(j, "total"), "cost_usd"), COST_A, 1e-9);
        cJSON_Delete(j);
        j = get_json("/api/v1/costs?" WIN "&by=controller&workload=CronJob/web/sweep", 200);
        ck_near(num(group(j, "workload", "CronJob/web/sweep"), "cost_usd"), COST_D, 1e-9);
        ck_near(num(cJSON_GetObjectItemCaseSensitive(j, "total"), "cost_usd"), COST_D, 1e-9);
        cJSON_Delete(j);

        /* Steps of one hour add up to the whole. */
        j = get_json("/api/v1/costs?" WIN "&by=team&step=1h", 200);
        ck_assert_str_eq(str(j, "step"), "1h");
        sets = cJSON_GetObjectItemCaseSensitive(j, "sets");
        cJSON_ArrayForEach(set, sets)
        {
                const cJSON *g;

                sum += num(cJSON_GetObjectItemCaseSensitive(set, "total"), "cost_usd");
                cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(set, "groups"))
                {
                        if (!strcmp(str(cJSON_GetObjectItemCaseSensitive(g, "keys"), "team"),
                                    "red"))
                                red += num(g, "cost_usd");
                }
                n++;
        }
        ck_assert_int_eq(n, 8);
        ck_near(sum, COST_ALL, 1e-9);
        ck_near(red, COST_A, 1e-9);
        cJSON_Delete(j);

        /* A step that does not divide the window: the last set is shorter. */
        j = get_json("/api/v1/costs?" WIN "&by=&step=3h", 200);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "sets")), 3);
        cJSON_Delete(j);

        /* The window anchors at the snapshot's now: yesterday holds old-e only. */
        j = get_json("/api/v1/costs?window=yesterday&by=team", 200);
        ck_near(num(cJSON_GetObjectItemCaseSensitive(j, "total"), "cost_usd"), 8.0, 1e-9);
        cJSON_Delete(j);
}
END_TEST

/* ---- /allocation -------------------------------------------------------------------------------
 */

static const cJSON *alloc_set(const cJSON *j, int i)
{
        ck_assert_int_eq((int)num(j, "code"), 200);
        ck_assert_str_eq(str(j, "status"), "success");
        return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "data"), i);
}

static const cJSON *alloc(const cJSON *set, const char *name)
{
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(set, name);

        ck_assert_msg(a != NULL, "no allocation %s", name);
        ck_assert_str_eq(str(a, "name"), name);
        return a;
}

static double sum_field(const cJSON *set, const char *field)
{
        const cJSON *a;
        double s = 0;

        cJSON_ArrayForEach(a, set) s += num(a, field);
        return s;
}

START_TEST(test_allocation_aggregates)
{
        cJSON *j;
        const cJSON *set, *a, *props;

        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        j = get_json("/allocation?" WIN "&aggregate=namespace", 200);
        set = alloc_set(j, 0);
        ck_assert_int_eq(cJSON_GetArraySize(set), 2);
        a = alloc(set, "ml");
        ck_near(num(a, "gpuCost"), COST_A + COST_B, 1e-5);
        ck_near(num(a, "gpuHours"), 8.5, 1e-5);
        ck_near(num(a, "gpuCount"), 8.5 / 8, 1e-5);
        ck_near(num(a, "minutes"), 480.0, 1e-9);
        ck_near(num(a, "totalCost"), COST_A + COST_B, 1e-5);
        ck_assert_str_eq(str(cJSON_GetObjectItemCaseSensitive(a, "window"), "start"),
                         "2026-11-16T00:00:00Z");
        props = cJSON_GetObjectItemCaseSensitive(a, "properties");
        ck_assert_str_eq(str(props, "namespace"), "ml");
        ck_assert_str_eq(str(props, "cluster"), "default");
        ck_near(num(alloc(set, "web"), "gpuCost"), round((COST_C + COST_D) * 1e5) / 1e5, 1e-9);
        cJSON_Delete(j);

        /* Two keys, joined by '/'; the node is a property. */
        j = get_json("/allocation?" WIN "&aggregate=namespace,node", 200);
        set = alloc_set(j, 0);
        a = alloc(set, "web/n2");
        ck_assert_str_eq(str(cJSON_GetObjectItemCaseSensitive(a, "properties"), "node"), "n2");
        cJSON_Delete(j);

        /*
         * Controllers from the ledger's workload (the top-level owner: train-a's Deployment, not
         * its ReplicaSet; orphan-d's CronJob though its pod record is gone), else from the pod
         * record (etl-c's Job); a bare pod (train-b) has none: __unallocated__, as in OpenCost.
         * OpenCost's key is "kind:name"; the properties are the name and the kind.
         */
        j = get_json("/allocation?" WIN "&aggregate=controller", 200);
        set = alloc_set(j, 0);
        ck_assert_int_eq(cJSON_GetArraySize(set), 4);
        a = alloc(set, "deployment:train");
        ck_near(num(a, "gpuCost"), COST_A, 1e-5);
        props = cJSON_GetObjectItemCaseSensitive(a, "properties");
        ck_assert_str_eq(str(props, "controller"), "train");
        ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(props, "controllerKind"));
        ck_near(num(alloc(set, "cronjob:sweep"), "gpuCost"), round(COST_D * 1e5) / 1e5, 1e-9);
        ck_near(num(alloc(set, "job:etl"), "gpuCost"), COST_C, 1e-5);
        ck_near(num(alloc(set, "__unallocated__"), "gpuCost"), COST_B, 1e-5);
        cJSON_Delete(j);
        j = get_json("/allocation?" WIN "&aggregate=controllerKind", 200);
        set = alloc_set(j, 0);
        ck_assert_int_eq(cJSON_GetArraySize(set), 4);
        a = alloc(set, "deployment");
        ck_near(num(a, "gpuCost"), COST_A, 1e-5);
        ck_assert_str_eq(str(cJSON_GetObjectItemCaseSensitive(a, "properties"), "controllerKind"),
                         "deployment");
        ck_near(num(alloc(set, "cronjob"), "gpuCost"), round(COST_D * 1e5) / 1e5, 1e-9);
        ck_near(num(alloc(set, "job"), "gpuCost"), COST_C, 1e-5);
        ck_near(num(alloc(set, "__unallocated__"), "gpuCost"), COST_B, 1e-5);
        cJSON_Delete(j);
        j = get_json("/allocation?" WIN "&aggregate=controllerKind,controller", 200);
        set = alloc_set(j, 0);
        props = cJSON_GetObjectItemCaseSensitive(alloc(set, "deployment/deployment:train"),
                                                 "properties");
        ck_assert_str_eq(str(props, "controllerKind"), "deployment");
        ck_assert_str_eq(str(props, "controller"), "train");
        props = cJSON_GetObjectItemCaseSensitive(alloc(set, "job/job:etl"), "properties");
        ck_assert_str_eq(str(props, "controller"), "etl");
        ck_near(num(alloc(set, "__unallocated__/__unallocated__"), "gpuCost"), COST_B, 1e-5);
        cJSON_Delete(j);
        j = get_json("/allocation?" WIN "&aggregate=controllerKind,container", 200);
        set = alloc_set(j, 0);
        ck_near(num(alloc(set, "job/worker"), "gpuCost"), COST_C, 1e-5);
        ck_near(num(alloc(set, "deployment/main"), "gpuCost"), COST_A, 1e-5);
        cJSON_Delete(j);

        /* Measured use: train-a was 50% busy, train-b not measured. */
        j = get_json("/allocation?" WIN "&aggregate=pod", 200);
        set = alloc_set(j, 0);
        a = alloc(set, "train-a");
        ck_near(num(a, "gpuUsageAverage"), 0.5 * 4 / 8, 1e-9);
        ck_near(num(a, "gpuEfficiency"), 0.5, 1e-9);
        ck_near(num(a, "gpuRequestAverage"), 4.0 / 8, 1e-9);
        /* Not measured: unknown, which is null, never 0 (0 would read as all waste). */
        a = alloc(set, "train-b");
        ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(a, "gpuUsageAverage")));
        ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(a, "gpuEfficiency")));
        ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(a, "totalEfficiency")));
        cJSON_Delete(j);

        /* Default: one allocation per container, OpenCost's name. */
        j = get_json("/allocation?" WIN, 200);
        set = alloc_set(j, 0);
        ck_near(num(alloc(set, "default/n1/ml/train-a/main"), "gpuCost"), COST_A, 1e-5);
        ck_near(num(alloc(set, "default/n1/ml/train-b/__unallocated__"), "gpuCost"), COST_B, 1e-5);
        cJSON_Delete(j);
}
END_TEST

START_TEST(test_allocation_idle)
{
        cJSON *j;
        const cJSON *set, *a;

        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        /* No idle unless asked. */
        j = get_json("/allocation?" WIN "&aggregate=namespace", 200);
        ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(alloc_set(j, 0), "__idle__"));
        cJSON_Delete(j);

        j = get_json("/allocation?" WIN "&aggregate=namespace&includeIdle=true", 200);
        set = alloc_set(j, 0);
        ck_near(num(alloc(set, "__idle__"), "gpuCost"), IDLE_N1 + IDLE_N2, 1e-5);
        ck_near(sum_field(set, "totalCost"), CAP_N1 + CAP_N2, 1e-4);
        cJSON_Delete(j);

        j = get_json("/allocation?" WIN "&aggregate=namespace&includeIdle=true&idleByNode=true",
                     200);
        set = alloc_set(j, 0);
        ck_near(num(alloc(set, "n1/__idle__"), "gpuCost"), IDLE_N1, 1e-5);
        ck_near(num(alloc(set, "n2/__idle__"), "gpuCost"), IDLE_N2, 1e-5);
        cJSON_Delete(j);

        /* Shared over the cluster in proportion to cost: no idle row, totals make capacity. */
        j = get_json("/allocation?" WIN "&aggregate=namespace&shareIdle=true", 200);
        set = alloc_set(j, 0);
        ck_assert_int_eq(cJSON_GetArraySize(set), 2);
        a = alloc(set, "ml");
        ck_near(num(a, "gpuCostIdle"), (IDLE_N1 + IDLE_N2) * (COST_A + COST_B) / COST_ALL, 1e-5);
        ck_near(num(a, "totalCost"),
                COST_A + COST_B + (IDLE_N1 + IDLE_N2) * (COST_A + COST_B) / COST_ALL, 1e-5);
        ck_near(sum_field(set, "totalCost"), CAP_N1 + CAP_N2, 1e-4);
        cJSON_Delete(j);

        /* Shared per node: each namespace runs on one node, so it carries that node. */
        j = get_json("/allocation?" WIN "&aggregate=namespace&shareIdle=true&idleByNode=true", 200);
        set = alloc_set(j, 0);
        ck_near(num(alloc(set, "ml"), "totalCost"), CAP_N1, 1e-4);
        ck_near(num(alloc(set, "web"), "totalCost"), CAP_N2, 1e-4);
        cJSON_Delete(j);

        /* Steps: one map per step, adding up; accumulate merges them. */
        j = get_json("/allocation?" WIN "&aggregate=namespace&step=2h", 200);
        {
                const cJSON *data = cJSON_GetObjectItemCaseSensitive(j, "data");
                double ml = 0;

                ck_assert_int_eq(cJSON_GetArraySize(data), 4);
                cJSON_ArrayForEach(set, data)
                {
                        a = cJSON_GetObjectItemCaseSensitive(set, "ml");
                        if (a)
                                ml += num(a, "gpuCost");
                        ck_near(num(cJSON_GetArrayItem(set, 0), "minutes"), 120.0, 0);
                }
                ck_near(ml, COST_A + COST_B, 1e-4);
        }
        cJSON_Delete(j);
        j = get_json("/allocation?" WIN "&aggregate=namespace&step=2h&accumulate=true", 200);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "data")), 1);
        ck_near(num(alloc(alloc_set(j, 0), "ml"), "gpuCost"), COST_A + COST_B, 1e-5);
        cJSON_Delete(j);
}
END_TEST

/* label:<key> kept as a dimension: grouped and filtered by in /costs, aggregated by in
 * /allocation with its real values; a key not kept is a 400 naming the kept ones. */
START_TEST(test_label_dimensions)
{
        cJSON *j;
        const cJSON *set, *a, *labels;
        resp r;

        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        j = get_json("/api/v1/costs?" WIN "&by=label:cost-center", 200);
        ck_assert_str_eq(
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "by"), 0)->valuestring,
            "label:cost-center");
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "groups")), 3);
        ck_near(num(group(j, "label:cost-center", "cc-1"), "cost_usd"), COST_A + COST_C, 1e-9);
        ck_near(num(group(j, "label:cost-center", "cc-2"), "cost_usd"), COST_B, 1e-9);
        ck_near(num(group(j, "label:cost-center", GC_UNLABELLED), "cost_usd"), COST_D, 1e-9);
        cJSON_Delete(j);
        j = get_json("/api/v1/costs?" WIN "&by=team&label:cost-center=cc-1", 200);
        ck_near(num(cJSON_GetObjectItemCaseSensitive(j, "total"), "cost_usd"), COST_A + COST_C,
                1e-9);
        ck_near(num(group(j, "team", "blue"), "cost_usd"), COST_C, 1e-9);
        cJSON_Delete(j);
        j = get_json("/api/v1/costs?" WIN "&by=label:cost-center&step=4h", 200);
        ck_near(num(group(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "sets"), 0),
                          "label:cost-center", "cc-1"),
                    "cost_usd"),
                COST_A + 4.0 * 1 * 2.0, 1e-9); /* train-a, and etl-c's first hour */
        cJSON_Delete(j);
        fetch("/api/v1/costs?" WIN "&by=label:exp", NULL, NULL, &r);
        ck_assert_int_eq(r.status, 400);
        ck_assert_ptr_nonnull(strstr(r.body.data, "(kept: cost-center)"));
        ck_assert_ptr_nonnull(strstr(r.body.data, "labels.dimensions"));
        resp_free(&r);
        expect_bad("/api/v1/costs?" WIN "&label:exp=x", 400, "label:exp", 0);
        expect_bad("/api/v1/costs?" WIN "&by=team&label:cost-center=cc-1&share_idle=proportional",
                   400, "share_idle", 0);

        j = get_json("/allocation?" WIN "&aggregate=label:cost-center", 200);
        set = alloc_set(j, 0);
        ck_assert_int_eq(cJSON_GetArraySize(set), 3);
        a = alloc(set, "cc-1");
        ck_near(num(a, "gpuCost"), COST_A + COST_C, 1e-5);
        labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(a, "properties"),
                                                  "labels");
        ck_assert_str_eq(str(labels, "cost-center"), "cc-1");
        ck_near(num(alloc(set, "cc-2"), "gpuCost"), COST_B, 1e-5);
        ck_near(num(alloc(set, "__unallocated__"), "gpuCost"), COST_D, 1e-5);
        cJSON_Delete(j);
        j = get_json("/allocation?" WIN "&aggregate=namespace,label:cost-center,label:cost-center",
                     200);
        ck_near(num(alloc(alloc_set(j, 0), "web/cc-1/cc-1"), "gpuCost"), COST_C, 1e-5);
        cJSON_Delete(j);
        fetch("/allocation?" WIN "&aggregate=label:exp", NULL, NULL, &r);
        ck_assert_int_eq(r.status, 400);
        ck_assert_ptr_nonnull(strstr(r.body.data, "label dimensions: label:cost-center"));
        resp_free(&r);

        /* What by= takes, label dimensions last. */
        j = get_json("/api/v1/dimensions", 200);
        labels = cJSON_GetObjectItemCaseSensitive(j, "dimensions");
        ck_assert_int_eq(cJSON_GetArraySize(labels), GC_DIM_COUNT + 1);
        ck_assert_str_eq(cJSON_GetArrayItem(labels, 0)->valuestring, "namespace");
        ck_assert_str_eq(cJSON_GetArrayItem(labels, GC_DIM_COUNT)->valuestring,
                         "label:cost-center");
        ck_assert_str_eq(
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "label_keys"), 0)->valuestring,
            "cost-center");
        cJSON_Delete(j);
        expect_bad("/api/v1/dimensions?x=1", 400, "x", 0);
}
END_TEST

START_TEST(test_allocation_labels)
{
        cJSON *j;
        const cJSON *set, *a, *labels;
        resp r;

        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        j = get_json("/allocation?" WIN "&aggregate=label:team", 200);
        set = alloc_set(j, 0);
        a = alloc(set, "blue");
        ck_near(num(a, "gpuCost"), COST_B + COST_C, 1e-5);
        labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(a, "properties"),
                                                  "labels");
        ck_assert_str_eq(str(labels, "team"), "blue");
        ck_near(num(alloc(set, "__unallocated__"), "gpuCost"), COST_D, 1e-5);
        cJSON_Delete(j);

        /* Another configured key for the same attribution, the alias, and project. */
        j = get_json("/allocation?" WIN "&aggregate=label:app.kubernetes.io/team", 200);
        ck_near(num(alloc(alloc_set(j, 0), "red"), "gpuCost"), COST_A, 1e-5);
        cJSON_Delete(j);
        j = get_json("/allocation?" WIN "&aggregate=team,label:project", 200);
        ck_near(num(alloc(alloc_set(j, 0), "blue/p3"), "gpuCost"), COST_C, 1e-5);
        cJSON_Delete(j);

        /* A label that is not kept is refused, naming the kept ones, never __unallocated__. */
        fetch("/allocation?" WIN "&aggregate=label:colour", NULL, NULL, &r);
        ck_assert_int_eq(r.status, 400);
        ck_assert_ptr_nonnull(strstr(r.body.data, "label:colour"));
        ck_assert_ptr_nonnull(strstr(r.body.data, "label:team"));
        ck_assert_ptr_nonnull(strstr(r.body.data, "label:project"));
        ck_assert_ptr_nonnull(strstr(r.body.data, "\"parameter\":\"aggregate\""));
        resp_free(&r);
        expect_bad("/allocation?" WIN "&aggregate=annotation:owner", 400, "aggregate", 1);
        expect_bad("/allocation?" WIN "&aggregate=department", 400, "aggregate", 1);
}
END_TEST

/* ---- the rest of /api/v1 --------------------------------------------------------------------- */

START_TEST(test_pods_prices_tco_recommendations)
{
        cJSON *j;
        const cJSON *pods, *p;

        gc_api_publish(api, make_snapshot(NOW, 0, "{\"findings\":[{\"kind\":\"idle_gpu\"}]}"));
        j = get_json("/api/v1/pods?namespace=web", 200);
        ck_assert_int_eq((int)num(j, "count"), 2);
        pods = cJSON_GetObjectItemCaseSensitive(j, "pods");
        p = cJSON_GetArrayItem(pods, 0);
        ck_assert_str_eq(str(p, "name"), "etl-c");
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "running")));
        ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(p, "end")));
        ck_near(num(p, "cost_usd"), COST_C, 1e-9);
        ck_near(num(cJSON_GetObjectItemCaseSensitive(p, "usage"), "activity_mean"), 0.25, 0);
        ck_assert(
            cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(pods, 1), "usage")));
        cJSON_Delete(j);
        j = get_json("/api/v1/pods?limit=2", 200);
        ck_assert_int_eq((int)num(j, "count"), 2);
        ck_assert_int_eq((int)num(j, "matched"), 5);
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "truncated")));
        cJSON_Delete(j);

        j = get_json("/api/v1/prices", 200);
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "builtin")));
        ck_assert_int_gt(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
                             cJSON_GetObjectItemCaseSensitive(j, "catalog"), "prices")),
                         0);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "in_use")), 2);
        cJSON_Delete(j);

        j = get_json("/api/v1/tco", 404);
        ck_assert_ptr_nonnull(strstr(str(j, "error"), "not configured"));
        cJSON_Delete(j);

        j = get_json("/api/v1/recommendations", 200);
        ck_assert_str_eq(
            str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "findings"), 0), "kind"),
            "idle_gpu");
        cJSON_Delete(j);
        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        j = get_json("/api/v1/recommendations", 200);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "findings")), 0);
        ck_assert_ptr_nonnull(strstr(cJSON_GetStringValue(cJSON_GetArrayItem(
                                         cJSON_GetObjectItemCaseSensitive(j, "notes"), 0)),
                                     "advisor has not run"));
        cJSON_Delete(j);

        /* A document that is not JSON is not passed on (it would break the reports' JSON). */
        gc_api_publish(api, make_snapshot(NOW, 0, "{\"findings\":[} trailing"));
        cJSON_Delete(get_json("/api/v1/recommendations", 500));
        j = get_json("/api/v1/reports/daily/2026-11-15", 200);
        ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "savings")));
        cJSON_Delete(j);
        gc_api_publish(api, make_snapshot(NOW, 0, "{\"findings\":[]} "));
        j = get_json("/api/v1/reports/daily/2026-11-15", 200);
        ck_assert(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "savings")));
        cJSON_Delete(j);
}
END_TEST

START_TEST(test_tco_configured)
{
        static const char conf[] =
            "{\"tco\":{\"node_price\":300000,\"gpus_per_node\":8,\"years\":4,\"utilization\":0.6,"
            "\"cluster_gpus\":512,\"ftes\":2,\"fte_cost\":200000,\"kw_per_gpu\":1.0,\"pue\":1.3,"
            "\"usd_per_kwh\":0.1,\"network_per_gpu_hour\":0.05}}";
        char err[256];
        gc_config *old = cfg;
        cJSON *j;
        const cJSON *be;

        cfg = gc_config_parse(conf, sizeof(conf) - 1, err, sizeof(err));
        ck_assert_msg(cfg != NULL, "%s", err);
        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        j = get_json("/api/v1/tco", 200);
        ck_near(num(cJSON_GetObjectItemCaseSensitive(j, "inputs"), "node_price"), 300000.0, 0);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "break_even")), 2);
        be = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "break_even"), 0);
        /* annual cost / (8760 x price) */
        ck_near(num(be, "break_even_utilization"),
                num(j, "annual_cost_per_gpu") / (8760.0 * num(be, "usd_per_gpu_hour")), 1e-9);
        cJSON_Delete(j);
        gc_api_publish(api, NULL);
        gc_config_free(cfg);
        cfg = old;
}
END_TEST

START_TEST(test_reports)
{
        cJSON *j;
        const cJSON *periods;
        resp r;

        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        j = get_json("/api/v1/reports/daily", 200);
        periods = cJSON_GetObjectItemCaseSensitive(j, "periods");
        ck_assert_int_eq(cJSON_GetArraySize(periods), 2);
        ck_assert_str_eq(str(cJSON_GetArrayItem(periods, 0), "id"), "2026-11-16");
        ck_assert(cJSON_IsTrue(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(periods, 0), "partial")));
        ck_assert_str_eq(str(cJSON_GetArrayItem(periods, 1), "id"), "2026-11-15");
        ck_assert_str_eq(str(j, "latest"), "2026-11-15");
        cJSON_Delete(j);
        j = get_json("/api/v1/reports/weekly", 200);
        periods = cJSON_GetObjectItemCaseSensitive(j, "periods");
        ck_assert_str_eq(str(cJSON_GetArrayItem(periods, 0), "id"), "2026-W47");
        ck_assert_str_eq(str(j, "latest"), "2026-W46");
        cJSON_Delete(j);

        j = get_json("/api/v1/reports/daily/2026-11-15", 200);
        ck_near(num(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "summary"),
                                                     "total"),
                    "cost_usd"),
                8.0, 1e-9);
        cJSON_Delete(j);
        j = get_json("/api/v1/reports/daily/latest", 200);
        cJSON_Delete(j);
        j = get_json("/api/v1/reports/weekly/2026-w47", 200);
        ck_near(num(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "summary"),
                                                     "total"),
                    "cost_usd"),
                COST_ALL, 1e-9);
        cJSON_Delete(j);
        cJSON_Delete(get_json("/api/v1/reports/daily/2026-01-01", 404));

        fetch("/api/v1/reports/weekly/2026-W47?format=md", NULL, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.ctype, "text/markdown; charset=utf-8");
        ck_assert_ptr_nonnull(strstr(r.body.data, "2026-W47"));
        resp_free(&r);
}
END_TEST

/* The "## Savings" section of a report.md, up to the next section: malloc'd. */
static char *savings_section(const char *md)
{
        const char *from = strstr(md, "## Savings"), *to;

        ck_assert_ptr_nonnull(from);
        to = strstr(from + 1, "\n## ");
        if (!to)
                to = strstr(from, "\n---\n");
        ck_assert_ptr_nonnull(to);
        return strndup(from, (size_t)(to - from));
}

/*
 * A weekly report ConfigMap and /api/v1/reports/weekly/... of one snapshot carry the same
 * Savings: the controller renders the ConfigMap's from the advisor's result the snapshot serves
 * (gc_snapshot_advice, through gc_savings_render with a report's cut), as it does here.
 */
START_TEST(test_report_savings_from_the_snapshot)
{
        gc_savings_opts so;
        gc_snapshot_parts p;
        gc_advisor_pod *pods = NULL;
        gc_advisor_result *res = NULL;
        gc_publish_opts po;
        gc_publish_plan plan;
        gc_buf md, json;
        gc_snapshot *s;
        size_t n = 0, weeks = 0;
        char err[256];

        /* The advisor over the fixture's last seven days, as the controller runs it. */
        ck_assert_int_eq(
            gc_savings_collect(base, NOW - 7 * DAY, NOW, NOW, NULL, NULL, NULL, &pods, &n), 0);
        gc_buf_init(&md, 1u << 20);
        gc_buf_init(&json, 1u << 20);
        gc_config_savings_opts(cfg, &so);
        ck_assert_int_eq(gc_savings_run(&so, base, NOW - 7 * DAY, NOW, NOW, pods, n, NULL, NULL, 0,
                                        &md, &json, &res, err, sizeof(err)),
                         0);
        free(pods);
        ck_assert_uint_gt(res->n_findings, 0);
        memset(&p, 0, sizeof(p));
        p.ledger = gc_ledger_clone(base);
        gc_config_api_settings(cfg, &p.settings);
        p.now = NOW;
        p.recommendations_json = json.data; /* taken over */
        p.recommendations_md = md.data;
        p.advice = res;
        s = gc_snapshot_new(&p);
        ck_assert_ptr_nonnull(s);
        ck_assert_ptr_eq(gc_snapshot_advice(s), res);
        gc_api_publish(api, gc_snapshot_ref(s));

        gc_config_publish_opts(cfg, &po);
        ck_assert_int_eq(
            gc_publish_plan_make(gc_snapshot_ledger(s), &po, gc_snapshot_now(s), &plan), 0);
        /* This week's (partial) and the latest complete one's: the weekly reports with Savings. */
        for (size_t i = 0; i < plan.n_periods; i++) {
                const gc_publish_period *w = &plan.periods[i];
                gc_publish_opts wo = po;
                gc_publish_report rep;
                gc_buf smd, sjson;
                char path[128], *a, *b;
                cJSON *api_doc, *cm_doc;
                resp r;

                if (w->kind != GC_PUBLISH_WEEKLY || (w->complete && w != plan.latest_weekly))
                        continue;
                weeks++;
                gc_buf_init(&smd, GC_PUBLISH_MAX_BYTES / 4);
                gc_buf_init(&sjson, GC_PUBLISH_MAX_BYTES / 4);
                ck_assert_int_eq(
                    gc_savings_render(so.currency, gc_snapshot_advice(s), NULL, 50, &smd, &sjson),
                    0);
                wo.savings_markdown = smd.data;
                wo.savings_json = sjson.data;
                memset(&rep, 0, sizeof(rep));
                ck_assert_int_eq(gc_publish_render(gc_snapshot_ledger(s), &wo, w,
                                                   gc_snapshot_now(s), NULL, NULL, 0, &rep),
                                 0);

                snprintf(path, sizeof(path), "/api/v1/reports/weekly/%s",
                         w->complete ? "latest" : "2026-W47");
                api_doc = get_json(path, 200);
                cm_doc = cJSON_ParseWithLength(rep.json.data, rep.json.len);
                ck_assert_ptr_nonnull(cm_doc);
                ck_assert(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(cm_doc, "savings")));
                ck_assert_msg(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(api_doc, "savings"),
                                            cJSON_GetObjectItemCaseSensitive(cm_doc, "savings"), 1),
                              "%s: the ConfigMap's savings are not the API's", path);
                cJSON_Delete(api_doc);
                cJSON_Delete(cm_doc);

                snprintf(path + strlen(path), sizeof(path) - strlen(path), "?format=md");
                fetch(path, NULL, NULL, &r);
                ck_assert_int_eq(r.status, 200);
                a = savings_section(r.body.data);
                b = savings_section(rep.md.data);
                ck_assert_str_eq(a, b);
                free(a);
                free(b);
                resp_free(&r);
                gc_publish_report_release(&rep);
                gc_buf_free(&smd);
                gc_buf_free(&sjson);
        }
        ck_assert_uint_eq(weeks, 2);
        gc_publish_plan_release(&plan);
        /* The API lets go of the snapshot; the result lives as long as a holder does. */
        gc_api_publish(api, NULL);
        ck_assert_uint_gt(gc_snapshot_advice(s)->n_findings, 0);
        gc_snapshot_unref(s);
}
END_TEST

/* ---- /metrics ----------------------------------------------------------------------------------
 */

static int have_promtool(void)
{
        return system("command -v promtool >/dev/null 2>&1") == 0;
}

/*
 * promtool check metrics on text: 0 when it parses and the only lint findings are the ones our
 * names carry on purpose (the chart's gpu_cost_gpu_hours_total and its idle twin are in hours,
 * and OpenCost's node_gpu_count ends in _count); else the first other line in out.
 */
static int promtool_check(const char *text, size_t len, char *out, size_t outlen)
{
        static const char *const allowed[] = {
            "gpu_cost_gpu_hours_total use base unit \"seconds\" instead of \"hours\"",
            "gpu_cost_idle_gpu_hours_total use base unit \"seconds\" instead of \"hours\"",
            "node_gpu_count non-histogram and non-summary metrics should not have \"_count\" "
            "suffix",
        };
        char path[] = "/tmp/test_api_metrics_XXXXXX", cmd[256], line[512];
        int fd = mkstemp(path), bad = 0;
        FILE *p;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
        close(fd);
        snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 2>&1", path);
        p = popen(cmd, "r");
        ck_assert_ptr_nonnull(p);
        out[0] = '\0';
        while (fgets(line, sizeof(line), p)) {
                size_t i;

                line[strcspn(line, "\n")] = '\0';
                for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
                        if (strcmp(line, allowed[i]) == 0)
                                break;
                if (i == sizeof(allowed) / sizeof(allowed[0]) && !bad++)
                        snprintf(out, outlen, "%s", line);
        }
        pclose(p);
        unlink(path);
        return bad ? -1 : 0;
}

/* A blind span shows in the answers whose window overlaps it, and in /metrics. */
START_TEST(test_costs_blind_span)
{
        cJSON *j, *bs;
        resp r;

        blind_from = T0 + 2 * H;
        blind_to = T0 + 3 * H;
        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        blind_from = blind_to = 0;
        j = get_json("/api/v1/costs?" WIN "&by=team", 200);
        bs = cJSON_GetObjectItemCaseSensitive(j, "blind_span");
        ck_assert_ptr_nonnull(bs);
        ck_assert_str_eq(str(bs, "from"), "2026-11-16T02:00:00Z");
        ck_near(num(bs, "bound_cost"), 12.5, 1e-12);
        ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(j, "total"));
        cJSON_Delete(j);
        j = get_json("/api/v1/costs?" WIN "&by=team&step=1h", 200);
        ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(j, "blind_span"));
        cJSON_Delete(j);
        /* a window that ends before it: not named */
        j = get_json("/api/v1/costs?window=2026-11-15T00:00:00Z,2026-11-16T01:00:00Z", 200);
        ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "blind_span"));
        cJSON_Delete(j);
        fetch("/metrics", NULL, NULL, &r);
        ck_assert_ptr_nonnull(strstr(r.body.data, "gpu_cost_blind_span_seconds 3600\n"));
        ck_assert_ptr_nonnull(strstr(r.body.data, "gpu_cost_blind_span_bound_cost 12.5\n"));
        ck_assert_ptr_nonnull(strstr(r.body.data, "gpu_cost_checkpoint_lost 0\n"));
        resp_free(&r);
}
END_TEST

/*
 * History coarsened before the snapshot's now: a day still answers, as before; a window that is
 * no period over those hours, and steps that are none, are a 400 that says why, on every route.
 */
START_TEST(test_coarsened_windows)
{
        cJSON *before, *after;
        resp r;

        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        before =
            get_json("/api/v1/costs?window=2026-11-16T00:00:00Z,2026-11-17T00:00:00Z&by=team", 200);
        ck_assert_int_gt(gc_ledger_fold(base, T0 + 7 * H, 0), 0);
        ck_assert_int_eq(gc_ledger_coarsen(base, T0 + 7 * H), 0);
        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        after =
            get_json("/api/v1/costs?window=2026-11-16T00:00:00Z,2026-11-17T00:00:00Z&by=team", 200);
        ck_near(num(cJSON_GetObjectItemCaseSensitive(after, "total"), "cost_usd"),
                num(cJSON_GetObjectItemCaseSensitive(before, "total"), "cost_usd"), 1e-9);
        ck_near(num(cJSON_GetObjectItemCaseSensitive(after, "idle"), "cost_usd"),
                num(cJSON_GetObjectItemCaseSensitive(before, "idle"), "cost_usd"), 1e-9);
        cJSON_Delete(before);
        cJSON_Delete(after);
        expect_bad("/api/v1/costs?window=2026-11-16T01:00:00Z,2026-11-16T05:00:00Z", 400, "window",
                   0);
        expect_bad("/api/v1/costs?window=2026-11-16T00:00:00Z,2026-11-17T00:00:00Z&step=1h", 400,
                   "step", 0);
        expect_bad("/allocation?window=1794790800,1794805200&aggregate=namespace", 400, "window",
                   1);
        expect_bad("/api/v1/export/csv?window=2026-11-16T00:00:00Z,2026-11-17T00:00:00Z"
                   "&granularity=hourly",
                   400, "window", 0);
        /* After the coarsened hours, hours answer; the exports' UTC days do. */
        cJSON_Delete(
            get_json("/api/v1/costs?window=2026-11-16T07:00:00Z,2026-11-16T08:00:00Z", 200));
        fetch("/api/v1/export/csv?window=2026-11-15T00:00:00Z,2026-11-17T00:00:00Z", NULL, NULL,
              &r);
        ck_assert_int_eq(r.status, 200);
        resp_free(&r);
        fetch("/metrics", NULL, NULL, &r);
        {
                const char *m =
                    strstr(r.body.data, "\ngpu_cost_ledger_hourly_since_timestamp_seconds ");

                ck_assert_ptr_nonnull(m);
                ck_assert(strtod(m + strlen("\ngpu_cost_ledger_hourly_since_timestamp_seconds "),
                                 NULL) == (double)(T0 + 7 * H));
        }
        resp_free(&r);
}
END_TEST

START_TEST(test_metrics)
{
        resp r;
        char line[256];

        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        fetch("/metrics", NULL, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_ptr_nonnull(strstr(r.ctype, "text/plain"));
        snprintf(line, sizeof(line),
                 "gpu_cost_usd_total{cluster=\"default\",namespace=\"ml\",team=\"red\","
                 "project=\"p1\"} %.15g\n",
                 COST_A + 8.0 /* old-e, the day before */);
        ck_assert_msg(strstr(r.body.data, line), "missing %s", line);
        ck_assert_ptr_nonnull(strstr(r.body.data, "# TYPE gpu_cost_usd_total counter\n"));
        ck_assert_ptr_nonnull(
            strstr(r.body.data, "gpu_cost_gpu_hours_total{cluster=\"default\",namespace=\"web\","
                                "team=\"blue\",project=\"p3\"} 20\n"));
        /* All time: n1's capacity (from T0) less everything held on it, old-e included. */
        ck_assert_ptr_nonnull(
            strstr(r.body.data, "gpu_cost_idle_usd_total{cluster=\"default\",node=\"n1\"} 214\n"));
        /* The currency-neutral names carry the same counters; the *_usd ones are their aliases. */
        snprintf(line, sizeof(line),
                 "gpu_cost_spend_total{cluster=\"default\",namespace=\"ml\",team=\"red\","
                 "project=\"p1\"} %.15g\n",
                 COST_A + 8.0);
        ck_assert_msg(strstr(r.body.data, line), "missing %s", line);
        ck_assert_ptr_nonnull(strstr(r.body.data, "# TYPE gpu_cost_spend_total counter\n"));
        /* Nothing measured here: the usage basis's counter is the same spend. */
        snprintf(line, sizeof(line),
                 "gpu_cost_usage_spend_total{cluster=\"default\",namespace=\"ml\",team=\"red\","
                 "project=\"p1\"} %.15g\n",
                 COST_A + 8.0);
        ck_assert_msg(strstr(r.body.data, line), "missing %s", line);
        ck_assert_ptr_nonnull(strstr(
            r.body.data, "gpu_cost_idle_spend_total{cluster=\"default\",node=\"n1\"} 214\n"));
        ck_assert_ptr_nonnull(
            strstr(r.body.data, "node_gpu_hourly_cost{cluster=\"default\",node=\"n2\","
                                "instance_type=\"\",region=\"\",model=\"NVIDIA-H100-80GB-HBM3\","
                                "capacity_type=\"spot\"} 2\n"));
        ck_assert_ptr_nonnull(
            strstr(r.body.data, "node_gpu_count{cluster=\"default\",node=\"n1\"} 8\n"));
        ck_assert_ptr_nonnull(
            strstr(r.body.data, "container_gpu_allocation{cluster=\"default\",namespace=\"web\","
                                "pod=\"etl-c\",container=\"worker\",node=\"n2\"} 4\n"));
        /* Finished pods hold nothing now. */
        ck_assert_ptr_null(strstr(r.body.data, "pod=\"train-a\""));
        ck_assert_ptr_nonnull(
            strstr(r.body.data, "gpu_cost_watch_restarts_total{resource=\"pods\"} 3\n"));
        ck_assert_ptr_nonnull(
            strstr(r.body.data, "gpu_cost_last_event_age_seconds{resource=\"pods\"} 7\n"));
        ck_assert_ptr_null(
            strstr(r.body.data, "gpu_cost_last_event_age_seconds{resource=\"nodes\""));
        ck_assert_ptr_nonnull(strstr(r.body.data, "gpu_cost_checkpoint_age_seconds 30\n"));
        ck_assert_ptr_nonnull(strstr(r.body.data, "gpu_cost_ready 1\n"));
        ck_assert_ptr_nonnull(
            strstr(r.body.data, "gpu_cost_findings{kind=\"idle_gpu\",team=\"red\"} 2\n"));
        ck_assert_ptr_nonnull(strstr(
            r.body.data, "gpu_cost_potential_savings_monthly{kind=\"idle_gpu\",team=\"red\"} "
                         "1234.5\n"));
        if (have_promtool()) {
                char why[512];
                static const char broken[] = "gpu_cost_ready{a=\"b} 1\n";

                ck_assert_msg(promtool_check(r.body.data, r.body.len, why, sizeof(why)) == 0,
                              "promtool: %s", why);
                /* The check can fail. */
                ck_assert_int_ne(promtool_check(broken, sizeof(broken) - 1, why, sizeof(why)), 0);
        }
        resp_free(&r);
}
END_TEST

/*
 * A zone and budgets: monthly reports at Berlin's local midnight, window=month from it, and the
 * gpu_cost_budget_* families (team red has spent $24 of $30 in November: 0.8, the warning share).
 */
START_TEST(test_monthly_and_budgets)
{
        static const char conf[] =
            "{\"report\":{\"timezone\":\"Europe/Berlin\"},\"budgets\":{\"items\":["
            "{\"scope\":\"team\",\"name\":\"red\",\"period\":\"monthly\",\"amount\":30},"
            "{\"scope\":\"namespace\",\"name\":\"web\",\"period\":\"weekly\",\"amount\":1000}]}}";
        char err[256], out[512];
        gc_config *old = cfg;
        const cJSON *periods, *b0;
        cJSON *j;
        resp r;

        cfg = gc_config_parse(conf, sizeof(conf) - 1, err, sizeof(err));
        ck_assert_msg(cfg != NULL, "%s", err);
        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        j = get_json("/api/v1/reports", 200);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "kinds")), 3);
        cJSON_Delete(j);
        j = get_json("/api/v1/reports/monthly", 200);
        periods = cJSON_GetObjectItemCaseSensitive(j, "periods");
        ck_assert_int_eq(cJSON_GetArraySize(periods), 1);
        ck_assert_str_eq(str(cJSON_GetArrayItem(periods, 0), "id"), "2026-11");
        ck_assert_str_eq(str(cJSON_GetArrayItem(periods, 0), "start"), "2026-10-31T23:00:00Z");
        ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "latest")));
        cJSON_Delete(j);
        cJSON_Delete(get_json("/api/v1/reports/monthly/latest", 404));
        cJSON_Delete(get_json("/api/v1/reports/monthly/2026-1", 400));
        cJSON_Delete(get_json("/api/v1/reports/monthly/2026-10", 404));
        j = get_json("/api/v1/reports/monthly/2026-11", 200);
        ck_assert_str_eq(str(j, "title"), "GPU spend, November 2026 (Europe/Berlin)");
        ck_assert_str_eq(str(cJSON_GetObjectItemCaseSensitive(j, "forecast"), "method"),
                         "elapsed_average");
        b0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "budgets"), 0);
        ck_assert_str_eq(str(b0, "name"), "red");
        ck_near(num(b0, "spent"), 24.0, 1e-9);
        ck_assert_str_eq(str(b0, "state"), "warn");
        cJSON_Delete(j);
        j = get_json("/api/v1/costs?window=month", 200);
        ck_assert_str_eq(str(cJSON_GetObjectItemCaseSensitive(j, "window"), "start"),
                         "2026-10-31T23:00:00Z");
        cJSON_Delete(j);

        fetch("/metrics", NULL, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_ptr_nonnull(strstr(r.body.data, "gpu_cost_budget_warn_ratio 0.8\n"));
        ck_assert_ptr_nonnull(
            strstr(r.body.data, "gpu_cost_budget_used_ratio{cluster=\"default\",scope=\"team\","
                                "name=\"red\",period=\"monthly\",currency=\"USD\"} 0.8\n"));
        ck_assert_ptr_nonnull(strstr(r.body.data,
                                     "gpu_cost_budget_spent{cluster=\"default\",scope=\"team\","
                                     "name=\"red\",period=\"monthly\",currency=\"USD\"} 24\n"));
        ck_assert_ptr_nonnull(
            strstr(r.body.data, "gpu_cost_budget_amount{cluster=\"default\",scope=\"namespace\","
                                "name=\"web\",period=\"weekly\",currency=\"USD\"} 1000\n"));
        if (have_promtool())
                ck_assert_msg(promtool_check(r.body.data, r.body.len, out, sizeof(out)) == 0,
                              "promtool: %s", out);
        resp_free(&r);
        gc_api_publish(api, NULL);
        gc_config_free(cfg);
        cfg = old;
}
END_TEST

START_TEST(test_metrics_escaping)
{
        gc_snapshot_parts p;
        resp r;

        memset(&p, 0, sizeof(p));
        p.ledger = gc_ledger_clone(base);
        put_pod(p.ledger, "odd\"ns\\x\ny", "odd", "t", "p", "n1", "on-demand", 1, 1, T0, T0 + H);
        gc_config_api_settings(cfg, &p.settings);
        p.now = NOW;
        p.health.started_at = T0;
        gc_api_publish(api, gc_snapshot_new(&p));
        fetch("/metrics", NULL, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_ptr_nonnull(strstr(r.body.data, "namespace=\"odd\\\"ns\\\\x\\ny\""));
        if (have_promtool()) {
                char why[512];
                static const char broken[] = "gpu_cost_ready{a=\"b} 1\n";

                ck_assert_msg(promtool_check(r.body.data, r.body.len, why, sizeof(why)) == 0,
                              "promtool: %s", why);
                /* The check can fail. */
                ck_assert_int_ne(promtool_check(broken, sizeof(broken) - 1, why, sizeof(why)), 0);
        }
        resp_free(&r);
}
END_TEST

/* The value of one sample line starting with prefix (labels included), or NAN. */
static double metric(const char *text, const char *prefix)
{
        const char *p = text;
        size_t n = strlen(prefix);

        while (p && *p) {
                if (strncmp(p, prefix, n) == 0 && p[n] == ' ')
                        return strtod(p + n + 1, NULL);
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        return NAN;
}

START_TEST(test_metrics_counters_monotonic)
{
        static const char green[] = "gpu_cost_usd_total{cluster=\"default\",namespace=\"extra\","
                                    "team=\"green\",project=\"p9\"}";
        static const char blue[] = "gpu_cost_usd_total{cluster=\"default\",namespace=\"web\","
                                   "team=\"blue\",project=\"p3\"}";
        resp r;

        /* 3 GPU-hours at $1 for the extra pod. */
        gc_api_publish(api, make_snapshot(NOW, 3.0, NULL));
        fetch("/metrics", NULL, NULL, &r);
        ck_near(metric(r.body.data, green), 3.0, 1e-9);
        ck_near(metric(r.body.data, blue), COST_C, 1e-9);
        ck_near(metric(r.body.data, "gpu_cost_counters_start_time_seconds"), (double)(T0 - DAY), 0);
        resp_free(&r);
        /* The next snapshot knows less about the extra pod (its end learned late: 1 hour): the
         * counter holds at 3 rather than going down; the rest keeps growing. */
        gc_api_publish(api, make_snapshot(NOW + 3600, 1.0, NULL));
        fetch("/metrics", NULL, NULL, &r);
        ck_near(metric(r.body.data, green), 3.0, 1e-9);
        ck_near(metric(r.body.data, blue), COST_C + 8.0, 1e-9);
        resp_free(&r);
        /* Four weeks on the counters start again from that snapshot (a reset). */
        gc_api_publish(api, make_snapshot(NOW + 29 * DAY, 3.0, NULL));
        fetch("/metrics", NULL, NULL, &r);
        ck_near(metric(r.body.data, "gpu_cost_counters_start_time_seconds"),
                (double)(NOW + 29 * DAY), 0);
        ck_assert(isnan(metric(r.body.data, green)) || metric(r.body.data, green) == 0);
        resp_free(&r);
}
END_TEST

/* ---- snapshots, cache and ETags ------------------------------------------------------------- */

START_TEST(test_cache_and_etag)
{
        resp r1, r2, r3;
        char etag[64], etag2[64];
        gc_snapshot *s;

        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        fetch("/api/v1/costs?" WIN "&by=team", NULL, NULL, &r1);
        ck_assert_int_eq(r1.status, 200);
        header(&r1, "ETag", etag, sizeof(etag));
        ck_assert_int_eq(etag[0], '"');
        /* The same request again: served from the snapshot's cache, same bytes. */
        fetch("/api/v1/costs?by=team&" WIN, NULL, NULL, &r2);
        s = gc_api_acquire(api);
        ck_assert_uint_eq(s->cache.hits, 0); /* the order of parameters is part of the key */
        resp_free(&r2);
        fetch("/api/v1/costs?" WIN "&by=team", NULL, NULL, &r2);
        ck_assert_uint_eq(s->cache.hits, 1);
        gc_snapshot_unref(s);
        ck_assert_str_eq(r1.body.data, r2.body.data);
        resp_free(&r2);
        fetch("/api/v1/costs?" WIN "&by=team", NULL, etag, &r2);
        ck_assert_int_eq(r2.status, 304);
        ck_assert_uint_eq(r2.body.len, 0);
        resp_free(&r2);
        fetch("/api/v1/costs?" WIN "&by=team", NULL, "W/\"nope\", *", &r2);
        ck_assert_int_eq(r2.status, 304);
        resp_free(&r2);

        /* A new snapshot with more spend: never the old body, a new ETag, no 304. */
        gc_api_publish(api, make_snapshot(NOW, 3.0, NULL));
        fetch("/api/v1/costs?" WIN "&by=team", NULL, etag, &r3);
        ck_assert_int_eq(r3.status, 200);
        ck_assert_str_ne(r1.body.data, r3.body.data);
        ck_assert_ptr_nonnull(strstr(r3.body.data, "\"green\""));
        header(&r3, "ETag", etag2, sizeof(etag2));
        ck_assert_str_ne(etag, etag2);
        resp_free(&r1);
        resp_free(&r3);

        /* The cache is bounded: many distinct queries keep at most the configured entries. */
        for (int i = 0; i < 80; i++) {
                char path[128];

                snprintf(path, sizeof(path), "/api/v1/costs?window=%dh", i + 1);
                fetch(path, NULL, NULL, &r1);
                ck_assert_int_eq(r1.status, 200);
                resp_free(&r1);
        }
        /* A request too long to be a key is answered, and not cached. */
        {
                static char path[5 * 4100 + 64];
                size_t off = (size_t)snprintf(path, sizeof(path), "/allocation?window=1d");
                size_t before;

                for (int i = 0; i < 5; i++) {
                        off += (size_t)snprintf(path + off, sizeof(path) - off, "&x%d=", i);
                        memset(path + off, 'a', 4000);
                        off += 4000;
                        path[off] = '\0';
                }
                s = gc_api_acquire(api);
                before = s->cache.n;
                fetch(path, NULL, NULL, &r1);
                ck_assert_int_eq(r1.status, 200);
                ck_assert_uint_eq(s->cache.n, before);
                gc_snapshot_unref(s);
                resp_free(&r1);
        }
        s = gc_api_acquire(api);
        ck_assert_uint_le(s->cache.n, 64);
        ck_assert_uint_le(s->cache.bytes, s->cache.max_bytes);
        gc_snapshot_unref(s);
}
END_TEST

START_TEST(test_static)
{
        resp r;
        char etag[128];

        /* The dashboard is served with or without data. */
        fetch("/", NULL, NULL, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_ptr_nonnull(strstr(r.ctype, "text/html"));
        header(&r, "ETag", etag, sizeof(etag));
        ck_assert_int_gt(strlen(etag), 2);
        resp_free(&r);
        fetch("/", NULL, etag, &r);
        ck_assert_int_eq(r.status, 304);
        resp_free(&r);
        fetch("/no-such-file.js", NULL, NULL, &r);
        ck_assert_int_eq(r.status, 404);
        ck_assert_str_eq(r.ctype, "application/json");
        resp_free(&r);
}
END_TEST

typedef struct swapper {
        atomic_int stop;
        atomic_int published;
} swapper;

static void *swap_loop(void *ud)
{
        swapper *sw = ud;

        while (!atomic_load(&sw->stop)) {
                gc_api_publish(
                    api, make_snapshot(NOW, (atomic_load(&sw->published) % 2) ? 1.0 : 0, NULL));
                atomic_fetch_add(&sw->published, 1);
                usleep(500);
        }
        return NULL;
}

/* Waits (up to 10 s) until the swapper has published more than n snapshots. */
static void swaps_past(swapper *sw, int n)
{
        for (int i = 0; i < 10000 && atomic_load(&sw->published) <= n; i++)
                usleep(1000);
}

START_TEST(test_swap_while_serving)
{
        swapper sw = {0};
        pthread_t th;
        int seen[2] = {0, 0};

        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        ck_assert_int_eq(pthread_create(&th, NULL, swap_loop, &sw), 0);
        /* Under load the swapper may start late: the requests begin once it swaps. */
        swaps_past(&sw, 1);
        for (int i = 0; i < 300; i++) {
                const char *path = i % 3 == 0   ? "/api/v1/costs?" WIN "&by=team"
                                   : i % 3 == 1 ? "/allocation?" WIN "&aggregate=namespace"
                                                : "/metrics";
                resp r;

                fetch(path, NULL, NULL, &r);
                ck_assert_int_eq(r.status, 200);
                if (i % 3 == 0) {
                        cJSON *j = cJSON_ParseWithLengthOpts(r.body.data, r.body.len, NULL, 0);
                        double total;

                        ck_assert_ptr_nonnull(j);
                        total = num(cJSON_GetObjectItemCaseSensitive(j, "total"), "cost_usd");
                        /* Every answer is one whole snapshot's: with or without the extra hour. */
                        if (fabs(total - COST_ALL) < 1e-9)
                                seen[0]++;
                        else if (fabs(total - COST_ALL - 1.0) < 1e-9)
                                seen[1]++;
                        else
                                ck_abort_msg("total %.9f is neither snapshot's", total);
                        cJSON_Delete(j);
                }
                resp_free(&r);
        }
        swaps_past(&sw, 10);
        atomic_store(&sw.stop, 1);
        pthread_join(th, NULL);
        ck_assert_int_gt(atomic_load(&sw.published), 10);
        ck_assert_int_eq(seen[0] + seen[1], 100);
}
END_TEST

/* ---- /metrics on a second server (the controller's probe port) ----------------------------- */

typedef struct scraper {
        const char *base;
        int answers, bad;
} scraper;

static void *scrape_loop(void *ud)
{
        scraper *sc = ud;

        for (int i = 0; i < 100; i++) {
                resp r;

                fetch_from(sc->base, "/metrics", NULL, NULL, &r);
                if (r.status == 200 && strstr(r.body.data, "# TYPE gpu_cost_usd_total counter"))
                        sc->answers++;
                else
                        sc->bad++;
                resp_free(&r);
        }
        return NULL;
}

static void *serve2(void *ud)
{
        gc_httpd_run(ud, NULL);
        return NULL;
}

START_TEST(test_metrics_second_server)
{
        gc_httpd_opts ho = {0};
        gc_httpd *srv2;
        pthread_t th2, swap_th, scrape_th[2];
        scraper sc[2] = {{url_base, 0, 0}, {NULL, 0, 0}};
        swapper sw = {0};
        char err[256], base2[64];
        resp r1, r2;

        ho.listen = "127.0.0.1:0";
        srv2 = gc_httpd_new(&ho, err, sizeof(err));
        ck_assert_msg(srv2 != NULL, "%s", err);
        /* Added while the first server serves, as the controller starts its probe port. */
        ck_assert_int_eq(gc_api_metrics_route(api, srv2), 0);
        ck_assert_int_eq(gc_api_metrics_route(NULL, srv2), -EINVAL);
        snprintf(base2, sizeof(base2), "http://127.0.0.1:%d", gc_httpd_port(srv2));
        ck_assert_int_eq(pthread_create(&th2, NULL, serve2, srv2), 0);

        /* Before any snapshot: the same 503 as the API's. */
        fetch_from(base2, "/metrics", NULL, NULL, &r2);
        ck_assert_int_eq(r2.status, 503);
        resp_free(&r2);
        /* The same body, type and ETag on both; nothing else of the API on the second. */
        gc_api_publish(api, make_snapshot(NOW, 0, NULL));
        fetch("/metrics", NULL, NULL, &r1);
        fetch_from(base2, "/metrics", NULL, NULL, &r2);
        ck_assert_int_eq(r1.status, 200);
        ck_assert_int_eq(r2.status, 200);
        ck_assert_str_eq(r1.ctype, r2.ctype);
        ck_assert_uint_eq(r1.body.len, r2.body.len);
        ck_assert_int_eq(memcmp(r1.body.data, r2.body.data, r1.body.len), 0);
        resp_free(&r1);
        resp_free(&r2);
        fetch_from(base2, "/api/v1/prices", NULL, NULL, &r2);
        ck_assert_int_eq(r2.status, 404);
        resp_free(&r2);
        fetch_from(base2, "/", NULL, NULL, &r2);
        ck_assert_int_eq(r2.status, 404);
        resp_free(&r2);

        /* Both servers scrape at once while snapshots are swapped: every answer whole (ASan and
         * the unit-asan build watch the shared cache, counters and snapshots). */
        sc[1].base = base2;
        ck_assert_int_eq(pthread_create(&swap_th, NULL, swap_loop, &sw), 0);
        for (int i = 0; i < 2; i++)
                ck_assert_int_eq(pthread_create(&scrape_th[i], NULL, scrape_loop, &sc[i]), 0);
        for (int i = 0; i < 2; i++)
                pthread_join(scrape_th[i], NULL);
        atomic_store(&sw.stop, 1);
        pthread_join(swap_th, NULL);
        for (int i = 0; i < 2; i++) {
                ck_assert_int_eq(sc[i].bad, 0);
                ck_assert_int_eq(sc[i].answers, 100);
        }

        gc_httpd_stop(srv2);
        pthread_join(th2, NULL);
        gc_httpd_free(srv2);
}
END_TEST

/*
 * A scrape that took its anchor before another server's scrape re-anchored the counters serves
 * its figures but leaves no mark: the new span starts from nothing.
 */
START_TEST(test_metrics_counter_reanchored)
{
        gc_snapshot *s1 = make_snapshot(NOW, 0, NULL), *s2 = make_snapshot(NOW + 29 * DAY, 0, NULL);
        int64_t old_anchor = gc__api_counter_anchor(api, s1), new_anchor;
        double v;

        ck_assert_int_eq(old_anchor, T0 - DAY);
        v = gc__api_counter(api, old_anchor, "k", 5.0);
        ck_near(v, 5.0, 0);
        v = gc__api_counter(api, old_anchor, "k", 4.0);
        ck_near(v, 5.0, 0); /* held */
        new_anchor = gc__api_counter_anchor(api, s2);
        ck_assert_int_eq(new_anchor, NOW + 29 * DAY);
        /* The late scrape of the old span: served as computed, not remembered. */
        v = gc__api_counter(api, old_anchor, "k", 9.0);
        ck_near(v, 9.0, 0);
        v = gc__api_counter(api, new_anchor, "k", 1.0);
        ck_near(v, 1.0, 0);
        v = gc__api_counter(api, new_anchor, "k", 0.5);
        ck_near(v, 1.0, 0);
        gc_snapshot_unref(s1);
        gc_snapshot_unref(s2);
}
END_TEST

/* Two servers missing the same key at once both store it: the cache keeps one copy. */
START_TEST(test_cache_put_twice)
{
        gc_snapshot *s = make_snapshot(NOW, 0, NULL);
        uint64_t h = gc_hash("/metrics?", 9, 0);

        gc__api_cache_put(&s->cache, "/metrics?", h, "a", 1, "text/plain");
        gc__api_cache_put(&s->cache, "/metrics?", h, "a", 1, "text/plain");
        ck_assert_uint_eq(s->cache.n, 1);
        ck_assert_uint_eq(s->cache.bytes, 1 + 9);
        gc_snapshot_unref(s);
}
END_TEST

START_TEST(test_snapshot_refs)
{
        gc_snapshot *s = make_snapshot(NOW, 0, NULL), *held;
        gc_snapshot_parts bad;

        gc_api_publish(api, s);
        held = gc_api_acquire(api);
        ck_assert_ptr_eq(held, s);
        /* Replaced: the old one lives while a reader holds it. */
        gc_api_publish(api, make_snapshot(NOW + 60, 0, NULL));
        ck_assert_int_eq(held->p.now, NOW);
        ck_assert_ptr_nonnull(gc__api_pod_find(held, "web", "etl-c"));
        ck_assert_ptr_null(gc__api_pod_find(held, "web", "nope"));
        gc_snapshot_unref(held);
        gc_snapshot_unref(NULL);
        /* Parts without a ledger are refused and freed (ASan checks the freeing). */
        memset(&bad, 0, sizeof(bad));
        bad.pods = fixture_pods(&bad.n_pods);
        bad.recommendations_json = strdup("{}");
        ck_assert_ptr_null(gc_snapshot_new(&bad));
        ck_assert_ptr_null(bad.pods);
        ck_assert_ptr_null(gc_snapshot_new(NULL));
}
END_TEST

static Suite *api_suite(void)
{
        Suite *s = suite_create("api");
        TCase *tc = tcase_create("api");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_window_forms);
        tcase_add_test(tc, test_no_data_yet);
        tcase_add_test(tc, test_bad_parameters);
        tcase_add_test(tc, test_not_found_and_methods);
        tcase_add_test(tc, test_costs);
        tcase_add_test(tc, test_costs_blind_span);
        tcase_add_test(tc, test_coarsened_windows);
        tcase_add_test(tc, test_allocation_aggregates);
        tcase_add_test(tc, test_allocation_idle);
        tcase_add_test(tc, test_allocation_labels);
        tcase_add_test(tc, test_label_dimensions);
        tcase_add_test(tc, test_pods_prices_tco_recommendations);
        tcase_add_test(tc, test_report_savings_from_the_snapshot);
        tcase_add_test(tc, test_tco_configured);
        tcase_add_test(tc, test_reports);
        tcase_add_test(tc, test_metrics);
        tcase_add_test(tc, test_monthly_and_budgets);
        tcase_add_test(tc, test_metrics_escaping);
        tcase_add_test(tc, test_metrics_counters_monotonic);
        tcase_add_test(tc, test_cache_and_etag);
        tcase_add_test(tc, test_static);
        tcase_add_test(tc, test_swap_while_serving);
        tcase_add_test(tc, test_snapshot_refs);
        tcase_add_test(tc, test_metrics_second_server);
        tcase_add_test(tc, test_metrics_counter_reanchored);
        tcase_add_test(tc, test_cache_put_twice);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr;
        int failed;

        curl_global_init(CURL_GLOBAL_DEFAULT);
        sr = srunner_create(api_suite());
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        curl_global_cleanup();
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
