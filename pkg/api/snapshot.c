/* snapshot: immutable, reference-counted API state, its response cache, and request dispatch. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api_int.h"
#include "web/web.h"

static void gc__api_marks_clear(gc__api_marks *m);

/* ---- snapshots ------------------------------------------------------------------------------ */

static int gc__strcmp0(const char *a, const char *b)
{
        return strcmp(a ? a : "", b ? b : "");
}

/*
 * Sorts pointers into the pod array, so the comparator needs no context (qsort has no argument
 * for one, and a global set around the call made every snapshot wait on one mutex). Equal keys
 * keep the array's order: the same pods always list the same way.
 */
typedef struct gc__pod_ref {
        const gc_api_pod *p;
} gc__pod_ref;

static int gc__pod_order(const void *pa, const void *pb)
{
        const gc_api_pod *a = ((const gc__pod_ref *)pa)->p;
        const gc_api_pod *b = ((const gc__pod_ref *)pb)->p;
        int c = gc__strcmp0(a->ns, b->ns);

        if (c == 0)
                c = gc__strcmp0(a->name, b->name);
        if (c == 0)
                c = (a->start > b->start) - (a->start < b->start);
        if (c == 0)
                c = (a > b) - (a < b);
        return c;
}

/* pods_by_name: indexes of the pods in (namespace, name, start) order. 0 or -ENOMEM. */
static int gc__pods_sort(gc_snapshot *s)
{
        gc__pod_ref *v;

        if (s->p.n_pods < 2) {
                for (size_t i = 0; i < s->p.n_pods; i++)
                        s->pods_by_name[i] = i;
                return 0;
        }
        v = malloc(s->p.n_pods * sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < s->p.n_pods; i++)
                v[i].p = &s->p.pods[i];
        qsort(v, s->p.n_pods, sizeof(*v), gc__pod_order);
        for (size_t i = 0; i < s->p.n_pods; i++)
                s->pods_by_name[i] = (size_t)(v[i].p - s->p.pods);
        free(v);
        return 0;
}

static void gc__parts_free(gc_snapshot_parts *p)
{
        gc_ledger_free(p->ledger);
        free(p->pods);
        free(p->recommendations_json);
        free(p->recommendations_md);
        free(p->finding_stats);
        gc_advisor_result_unref(p->advice);
        free(p->nodes);
        if (p->pool) /* last: what the pin kept may be freed from now on */
                gc_strpool_unpin(p->pool, p->pin);
        memset(p, 0, sizeof(*p));
}

gc_snapshot *gc_snapshot_new(gc_snapshot_parts *parts)
{
        gc_snapshot *s;

        if (!parts)
                return NULL;
        if (!parts->ledger || !parts->settings.catalog || parts->now < 0 ||
            (parts->n_pods && !parts->pods)) {
                gc__parts_free(parts);
                errno = EINVAL;
                return NULL;
        }
        s = calloc(1, sizeof(*s));
        if (s && parts->n_pods)
                s->pods_by_name = malloc(parts->n_pods * sizeof(*s->pods_by_name));
        if (!s || (parts->n_pods && !s->pods_by_name)) {
                free(s);
                gc__parts_free(parts);
                errno = ENOMEM;
                return NULL;
        }
        s->p = *parts;
        memset(parts, 0, sizeof(*parts));
        atomic_init(&s->refs, 1);
        gc_ledger_stats_get(s->p.ledger, &s->lstats);
        s->cluster = s->p.settings.report.cluster && *s->p.settings.report.cluster
                         ? s->p.settings.report.cluster
                         : "default";
        s->currency = s->p.settings.report.currency ? s->p.settings.report.currency : "USD";
        /* The document goes into other JSON as it is: it must be one JSON value. */
        if (s->p.recommendations_json) {
                const char *end = NULL;
                cJSON *j = cJSON_ParseWithLengthOpts(s->p.recommendations_json,
                                                     strlen(s->p.recommendations_json), &end, 0);

                if (!j || (end && end[strspn(end, " \t\r\n")] != '\0')) {
                        free(s->p.recommendations_json);
                        s->p.recommendations_json = NULL;
                        s->recommendations_bad = 1;
                }
                cJSON_Delete(j);
        }
        if (gc__pods_sort(s) < 0) {
                gc__parts_free(&s->p);
                free(s->pods_by_name);
                free(s);
                errno = ENOMEM;
                return NULL;
        }
        pthread_mutex_init(&s->cache.mu, NULL);
        pthread_mutex_init(&s->plan_mu, NULL);
        s->cache.max_entries = GC__API_DEFAULT_ENTRIES;
        s->cache.max_bytes = GC__API_DEFAULT_BYTES;
        return s;
}

gc_snapshot *gc_snapshot_ref(gc_snapshot *s)
{
        if (s)
                atomic_fetch_add(&s->refs, 1);
        return s;
}

void gc_snapshot_unref(gc_snapshot *s)
{
        if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
                return;
        for (size_t i = 0; i < s->cache.n; i++) {
                free(s->cache.e[i].key);
                free(s->cache.e[i].body);
        }
        free(s->cache.e);
        pthread_mutex_destroy(&s->cache.mu);
        gc_publish_plan_release(&s->plan);
        pthread_mutex_destroy(&s->plan_mu);
        free(s->pods_by_name);
        gc__parts_free(&s->p);
        free(s);
}

const gc_publish_plan *gc__api_plan(gc_snapshot *s, int *ret_err)
{
        int state;

        pthread_mutex_lock(&s->plan_mu);
        if (s->plan_state == 0) {
                gc_publish_opts o;
                int r;

                o = s->p.settings.report;
                r = gc_publish_plan_make(s->p.ledger, &o, s->p.now, &s->plan);
                s->plan_state = r < 0 ? r : 1;
        }
        state = s->plan_state;
        pthread_mutex_unlock(&s->plan_mu);
        if (state < 0) {
                *ret_err = state;
                return NULL;
        }
        return &s->plan;
}

const gc_api_pod *gc__api_pod_find(const gc_snapshot *s, const char *ns, const char *name)
{
        size_t lo = 0, hi = s->p.n_pods;
        const gc_api_pod *found = NULL;

        if (!ns || !name)
                return NULL;
        /* The first (ns, name) at or after the key, then the last of its run (latest start). */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const gc_api_pod *p = &s->p.pods[s->pods_by_name[mid]];
                int c = gc__strcmp0(p->ns, ns);

                if (c == 0)
                        c = gc__strcmp0(p->name, name);
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (; lo < s->p.n_pods; lo++) {
                const gc_api_pod *p = &s->p.pods[s->pods_by_name[lo]];

                if (gc__strcmp0(p->ns, ns) != 0 || gc__strcmp0(p->name, name) != 0)
                        break;
                found = p;
        }
        return found;
}

/* ---- the API object ------------------------------------------------------------------------- */

/* The API's routes, each bound to the API object in gc_api_new(). */
typedef int (*gc__api_fn)(gc__api_ctx *x);

typedef struct gc__route {
        const char *path;
        gc__api_fn fn;
        unsigned flags;
        int opencost;
} gc__route;

static const gc__route gc__routes[] = {
    {"/api/v1/costs", gc__api_costs, 0, 0},
    {"/api/v1/pods", gc__api_pods, 0, 0},
    {"/api/v1/reports", gc__api_reports, GC_HTTPD_PREFIX, 0},
    {"/api/v1/recommendations", gc__api_recommendations, 0, 0},
    {"/api/v1/prices", gc__api_prices, 0, 0},
    {"/api/v1/dimensions", gc__api_dimensions, 0, 0},
    {"/api/v1/tco", gc__api_tco, 0, 0},
    {"/api/v1/export/focus", gc__api_export, 0, 0},
    {"/api/v1/export/csv", gc__api_export, 0, 0},
    {"/allocation", gc__api_allocation, 0, 1},
    {"/allocation/compute", gc__api_allocation, 0, 1},
    {"/metrics", gc__api_metrics, 0, 0},
};

_Static_assert(sizeof(gc__routes) / sizeof(gc__routes[0]) <= GC__API_MAX_ROUTES,
               "bind[] too small");

gc_api *gc_api_new(const gc_api_opts *o)
{
        gc_api *a = calloc(1, sizeof(*a));

        if (!a) {
                errno = ENOMEM;
                return NULL;
        }
        /* Bound here, not when routed: a second server's routes are added while the first
         * serves, and must not write what its thread reads. */
        for (size_t i = 0; i < sizeof(gc__routes) / sizeof(gc__routes[0]); i++) {
                a->bind[i].a = a;
                a->bind[i].route = &gc__routes[i];
        }
        pthread_mutex_init(&a->mu, NULL);
        pthread_mutex_init(&a->marks.mu, NULL);
        a->cache_entries = o && o->cache_entries ? o->cache_entries : GC__API_DEFAULT_ENTRIES;
        a->cache_bytes = o && o->cache_bytes ? o->cache_bytes : GC__API_DEFAULT_BYTES;
        gc_strlcpy(a->currency, o && o->currency ? o->currency : "USD", sizeof(a->currency));
        return a;
}

gc_api *gc_api_free(gc_api *a)
{
        if (!a)
                return NULL;
        gc_snapshot_unref(a->cur);
        gc__api_marks_clear(&a->marks);
        pthread_mutex_destroy(&a->marks.mu);
        pthread_mutex_destroy(&a->mu);
        free(a);
        return NULL;
}

void gc_api_publish(gc_api *a, gc_snapshot *s)
{
        gc_snapshot *old;

        if (!a) {
                gc_snapshot_unref(s);
                return;
        }
        if (s) {
                /* Set before anyone else can see s. */
                s->cache.max_entries = a->cache_entries;
                s->cache.max_bytes = a->cache_bytes;
        }
        pthread_mutex_lock(&a->mu);
        old = a->cur;
        a->cur = s;
        pthread_mutex_unlock(&a->mu);
        /* The last reference may free a large ledger: never under the lock. */
        gc_snapshot_unref(old);
}

gc_snapshot *gc_api_acquire(gc_api *a)
{
        gc_snapshot *s;

        if (!a)
                return NULL;
        pthread_mutex_lock(&a->mu);
        s = gc_snapshot_ref(a->cur);
        pthread_mutex_unlock(&a->mu);
        return s;
}

/* ---- counters that never go down ------------------------------------------------------------ */

static void gc__api_marks_clear(gc__api_marks *m)
{
        for (size_t i = 0; i < m->n; i++)
                free(m->rows[i].key);
        free(m->rows);
        gc_index_free(&m->ix);
        m->rows = NULL;
        m->n = 0;
        m->cap = 0;
}

int64_t gc__api_counter_anchor(gc_api *a, const gc_snapshot *s)
{
        const gc_publish_opts *c = &s->p.settings.report;
        int64_t keep = c->daily_retention_days > c->weekly_retention_weeks * 7
                           ? c->daily_retention_days * 86400
                           : c->weekly_retention_weeks * 7 * 86400;
        int64_t span = keep / 2 < GC__API_COUNTER_SPAN ? keep / 2 : GC__API_COUNTER_SPAN;
        int64_t anchor;

        if (span < 86400)
                span = 86400;
        if (!a) /* no server: from the snapshot's start */
                return s->p.health.started_at > 0 ? s->p.health.started_at : s->p.now;
        pthread_mutex_lock(&a->marks.mu);
        if (a->marks.anchor == 0)
                a->marks.anchor = s->p.health.started_at > 0 && s->p.health.started_at <= s->p.now
                                      ? s->p.health.started_at
                                      : s->p.now;
        /* Past the span the oldest hours could leave the ledger: start again (a counter reset,
         * which Prometheus expects), with nothing remembered. */
        if (s->p.now - a->marks.anchor > span || s->p.now < a->marks.anchor) {
                a->marks.anchor = s->p.now;
                gc__api_marks_clear(&a->marks);
        }
        anchor = a->marks.anchor;
        pthread_mutex_unlock(&a->marks.mu);
        return anchor;
}

typedef struct gc__mark_key {
        const gc__api_mark *rows;
        const char *key;
} gc__mark_key;

static int gc__mark_eq(const void *ctx, size_t row)
{
        const gc__mark_key *k = ctx;

        return strcmp(k->rows[row].key, k->key) == 0;
}

double gc__api_counter(gc_api *a, int64_t anchor, const char *key, double v)
{
        gc__api_marks *m;
        gc__mark_key k;
        uint32_t h;
        size_t pos;
        char *copy;

        if (!a || !isfinite(v))
                return v;
        m = &a->marks;
        h = gc_hash_fin(gc_hash(key, strlen(key), 0));
        pthread_mutex_lock(&m->mu);
        if (m->anchor != anchor)
                goto out;
        k.rows = m->rows;
        k.key = key;
        if (gc_index_find(&m->ix, h, gc__mark_eq, &k, &pos)) {
                gc__api_mark *e = &m->rows[gc_index_row(&m->ix, pos)];

                if (e->v > v)
                        v = e->v;
                e->v = v;
                goto out;
        }
        /* Past the bound a series is served as computed, remembered by none. */
        if (m->n >= GC__API_MAX_MARKS ||
            gc_grow((void **)&m->rows, &m->cap, m->n, sizeof(*m->rows), 1024, 0) < 0 ||
            gc_index_reserve(&m->ix, m->n + 1) < 0 || !(copy = strdup(key)))
                goto out;
        gc_index_add_new(&m->ix, h, m->n);
        m->rows[m->n].key = copy;
        m->rows[m->n].v = v;
        m->n++;
out:
        pthread_mutex_unlock(&m->mu);
        return v;
}

/* ---- the response cache --------------------------------------------------------------------- */

void gc__api_etag(const char *body, size_t len, char out[24])
{
        snprintf(out, 24, "\"%016" PRIx64 "\"", gc_hash(body, len, 0x9e3779b97f4a7c15ull));
}

int gc__api_etag_match(const char *inm, const char *etag)
{
        size_t el = strlen(etag);

        if (!inm)
                return 0;
        /* A list of entity tags, weak or strong: a GET compares them weakly (RFC 9110 13.1.2). */
        while (*inm) {
                const char *end;

                while (*inm == ' ' || *inm == '\t' || *inm == ',')
                        inm++;
                if (*inm == '*')
                        return 1;
                if (strncmp(inm, "W/", 2) == 0)
                        inm += 2;
                end = inm;
                while (*end && *end != ',')
                        end++;
                while (end > inm && (end[-1] == ' ' || end[-1] == '\t'))
                        end--;
                if ((size_t)(end - inm) == el && memcmp(inm, etag, el) == 0)
                        return 1;
                inm = *end ? end + 1 : end;
        }
        return 0;
}

const gc__api_entry *gc__api_cache_get(gc__api_cache *c, const char *key, uint64_t h)
{
        for (size_t i = 0; i < c->n; i++)
                if (c->e[i].key_hash == h && strcmp(c->e[i].key, key) == 0) {
                        c->e[i].used = ++c->clock;
                        c->hits++;
                        return &c->e[i];
                }
        c->misses++;
        return NULL;
}

static void gc__cache_drop(gc__api_cache *c, size_t i)
{
        c->bytes -= c->e[i].len + c->e[i].key_len;
        free(c->e[i].key);
        free(c->e[i].body);
        c->n--;
        if (i != c->n)
                c->e[i] = c->e[c->n];
        memset(&c->e[c->n], 0, sizeof(c->e[c->n]));
}

void gc__api_cache_put(gc__api_cache *c, const char *key, uint64_t h, const char *body, size_t len,
                       const char *content_type)
{
        gc__api_entry *e;
        size_t klen = strlen(key);

        /* An answer larger than a quarter of the cache would evict everything else. */
        if (c->max_entries == 0 || len + klen > c->max_bytes / 4)
                return;
        /* Two servers may miss the same key at once and both compute it: keep one copy. */
        for (size_t i = 0; i < c->n; i++)
                if (c->e[i].key_hash == h && strcmp(c->e[i].key, key) == 0)
                        return;
        if (!c->e) {
                c->e = calloc(c->max_entries, sizeof(*c->e));
                if (!c->e)
                        return;
        }
        while (c->n && (c->n >= c->max_entries || c->bytes + len + klen > c->max_bytes)) {
                size_t lru = 0;

                for (size_t i = 1; i < c->n; i++)
                        if (c->e[i].used < c->e[lru].used)
                                lru = i;
                gc__cache_drop(c, lru);
        }
        e = &c->e[c->n];
        e->key = malloc(klen + 1);
        e->body = malloc(len ? len : 1);
        if (!e->key || !e->body) {
                free(e->key);
                free(e->body);
                return;
        }
        memcpy(e->key, key, klen + 1);
        if (len)
                memcpy(e->body, body, len);
        e->len = len;
        e->key_len = klen;
        e->key_hash = h;
        e->content_type = content_type;
        e->used = ++c->clock;
        gc__api_etag(body, len, e->etag);
        c->bytes += len + klen;
        c->n++;
}

/* ---- helpers for handlers ------------------------------------------------------------------- */

int gc__api_bad(gc__api_ctx *x, int status, const char *param, const char *fmt, ...)
{
        char msg[GC__API_ERR], full[GC__API_ERR + 64];
        gc_buf *b = &x->res->body;
        va_list ap;
        int r;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (param)
                snprintf(full, sizeof(full), "%s: %s", param, msg);
        else
                snprintf(full, sizeof(full), "%s", msg);
        gc_buf_reset(b);
        x->res->status = status;
        x->res->content_type = "application/json";
        if (x->opencost) {
                r = gc_buf_printf(b, "{\"code\":%d,\"status\":\"error\",\"message\":", status);
                if (r == 0)
                        r = gc_buf_json_str(b, full);
        } else {
                r = gc_buf_puts(b, "{\"error\":");
                if (r == 0)
                        r = gc_buf_json_str(b, full);
        }
        if (r == 0 && param) {
                r = gc_buf_puts(b, ",\"parameter\":");
                if (r == 0)
                        r = gc_buf_json_str(b, param);
        }
        if (r == 0)
                r = gc_buf_printf(b, ",\"status\":%d}", status);
        return r;
}

int gc__api_coarse(gc__api_ctx *x, int64_t start, int64_t end, int64_t step_s,
                   const char *step_param)
{
        const gc_ledger *l = x->s->p.ledger;
        char when[GC_TIME_LEN];

        if (gc_ledger_steps_whole(l, start, end, step_s))
                return 0;
        gc_time_format(gc_ledger_coarse_to(l), when);
        gc__api_bad(x, 400, step_s > 0 ? step_param : "window",
                    "history before %s is kept only by whole local day, ISO week and month "
                    "(--hourly-history): ask for one of those, steps that are, or a window "
                    "after it",
                    when);
        return 1;
}

int gc__api_known_params(gc__api_ctx *x, const char *const *names)
{
        for (size_t i = 0; i < x->req->n_params; i++) {
                const char *n = x->req->params[i].name;
                size_t j;

                /* A name ending in '*' stands for every name it starts ("label:*"). */
                for (j = 0; names[j]; j++) {
                        size_t len = strlen(names[j]);

                        if (strcmp(names[j], n) == 0 ||
                            (len && names[j][len - 1] == '*' && strncmp(names[j], n, len - 1) == 0))
                                break;
                }
                if (!names[j]) {
                        char list[GC__API_ERR];
                        size_t off = 0;

                        for (j = 0; names[j] && off < sizeof(list); j++)
                                off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
                                                        j ? ", " : "", names[j]);
                        gc__api_bad(x, 400, n, "unknown parameter (known: %s)", j ? list : "none");
                        return 1;
                }
        }
        return 0;
}

int gc__api_num5(gc_buf *b, double v)
{
        char tmp[64];
        int n;

        if (!isfinite(v))
                return gc_buf_puts(b, "null");
        n = snprintf(tmp, sizeof(tmp), "%.5f", v);
        if (n <= 0 || (size_t)n >= sizeof(tmp))
                return gc_buf_puts(b, "null");
        /* "1.50000" -> "1.5", "2.00000" -> "2", "-0" -> "0" */
        if (strchr(tmp, '.') && !strchr(tmp, 'e')) {
                while (n > 0 && tmp[n - 1] == '0')
                        tmp[--n] = '\0';
                if (n > 0 && tmp[n - 1] == '.')
                        tmp[--n] = '\0';
        }
        if (strcmp(tmp, "-0") == 0)
                return gc_buf_puts(b, "0");
        return gc_buf_puts(b, tmp);
}

int gc__api_num(gc_buf *b, double v)
{
        char tmp[64];

        if (!isfinite(v))
                return gc_buf_puts(b, "null");
        /* The shortest of %.15g and %.17g that reads back exactly. */
        snprintf(tmp, sizeof(tmp), "%.15g", v);
        if (strtod(tmp, NULL) != v)
                snprintf(tmp, sizeof(tmp), "%.17g", v);
        if (strcmp(tmp, "-0") == 0)
                return gc_buf_puts(b, "0");
        return gc_buf_puts(b, tmp);
}

int gc__api_time(gc_buf *b, int64_t t)
{
        char s[GC_TIME_LEN];

        gc_time_format(t, s);
        return gc_buf_printf(b, "\"%s\"", s);
}

/* ---- dispatch ------------------------------------------------------------------------------- */

static int gc__answer_cached(const gc_httpd_request *req, gc_httpd_response *res, const char *body,
                             size_t len, const char *ctype, const char *etag)
{
        int r = gc_httpd_add_header(res, "ETag", etag);

        if (r == 0)
                r = gc_httpd_add_header(res, "Cache-Control", "no-cache");
        if (r < 0)
                return r;
        res->content_type = ctype;
        if (gc__api_etag_match(gc_httpd_header(req, "If-None-Match"), etag)) {
                res->status = 304;
                return 0;
        }
        res->status = 200;
        return gc_buf_append(&res->body, body, len);
}

/* The answer's key in the snapshot's cache; false when the request is too long for one. */
static bool gc__cache_key(const gc__route *rt, const gc_httpd_request *req, gc_buf *key)
{
        gc_buf_init(key, GC__API_MAX_KEY);
        /* An export is streamed (its body is made while it is sent): neither cached nor tagged. */
        return rt->fn != gc__api_export && gc_buf_printf(key, "%s?%s", req->path, req->query) == 0;
}

/*
 * What the cache missed, computed on one of the server's workers (gc_httpd_defer): the route's
 * answer, cached and tagged. The snapshot is taken again: the newest one by now.
 */
static int gc__compute(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        const gc__api_binding *bd = ud;
        const gc__route *rt = bd->route;
        gc__api_ctx x = {.a = bd->a, .req = req, .res = res, .opencost = rt->opencost};
        char etag[24];
        const char *ctype;
        int cacheable;
        gc_buf key;
        uint64_t h;
        int r;

        x.s = gc_api_acquire(bd->a);
        if (!x.s) {
                r = gc__api_bad(&x, 503, NULL, "no data yet");
                return r == 0 ? gc_httpd_add_header(res, "Retry-After", "5") : r;
        }
        cacheable = gc__cache_key(rt, req, &key);
        h = cacheable ? gc_hash(key.data, key.len, 0) : 0;
        r = rt->fn(&x);
        if (r != 0 || res->status != 200 || rt->fn == gc__api_export)
                goto out;
        ctype = res->content_type ? res->content_type : "application/json";
        if (cacheable) {
                pthread_mutex_lock(&x.s->cache.mu);
                gc__api_cache_put(&x.s->cache, key.data, h, res->body.data ? res->body.data : "",
                                  res->body.len, ctype);
                pthread_mutex_unlock(&x.s->cache.mu);
        }
        gc__api_etag(res->body.data ? res->body.data : "", res->body.len, etag);
        r = gc_httpd_add_header(res, "ETag", etag);
        if (r == 0)
                r = gc_httpd_add_header(res, "Cache-Control", "no-cache");
        if (r == 0 && gc__api_etag_match(gc_httpd_header(req, "If-None-Match"), etag)) {
                res->status = 304;
                gc_buf_reset(&res->body);
        }
out:
        gc_buf_free(&key);
        gc_snapshot_unref(x.s);
        return r;
}

/*
 * On the server's thread: a cached answer at once, an export's stream started; anything else is
 * computed on a worker, so that a large answer does not hold the cheap ones (httpd.md, Fairness).
 */
static int gc__handle(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        const gc__api_binding *bd = ud;
        const gc__route *rt = bd->route;
        gc__api_ctx x = {.a = bd->a, .req = req, .res = res, .opencost = rt->opencost};
        const gc__api_entry *e = NULL;
        gc_buf key;
        int r = 0;

        x.s = gc_api_acquire(bd->a);
        if (!x.s) {
                r = gc__api_bad(&x, 503, NULL, "no data yet");
                return r == 0 ? gc_httpd_add_header(res, "Retry-After", "5") : r;
        }
        if (gc__cache_key(rt, req, &key)) {
                pthread_mutex_lock(&x.s->cache.mu);
                e = gc__api_cache_get(&x.s->cache, key.data, gc_hash(key.data, key.len, 0));
                if (e)
                        r = gc__answer_cached(req, res, e->body, e->len, e->content_type, e->etag);
                pthread_mutex_unlock(&x.s->cache.mu);
        }
        if (!e && rt->fn == gc__api_export) {
                r = rt->fn(&x);
        } else if (!e) {
                /* The worker sees only the headers looked up here. */
                gc_httpd_header(req, "If-None-Match");
                r = gc_httpd_defer(res, gc__compute, (void *)bd);
        }
        gc_buf_free(&key);
        gc_snapshot_unref(x.s);
        return r;
}

/* The dashboard: the embedded files, revalidated by ETag; everything else is a JSON 404. */
static int gc__static(void *ud, const gc_httpd_request *req, gc_httpd_response *res)
{
        const gc_web_asset *w = gc_web_find(req->path);
        int r;

        (void)ud;
        if (!w) {
                gc__api_ctx x = {0};
                char msg[96];

                x.req = req;
                x.res = res;
                /* The path is the client's own: cut, and only printable bytes reach the JSON. */
                snprintf(msg, sizeof(msg), "not found: %.64s", req->path);
                return gc__api_bad(&x, 404, NULL, "%s", msg);
        }
        r = gc_httpd_add_header(res, "ETag", w->etag);
        if (r == 0)
                r = gc_httpd_add_header(
                    res, "Cache-Control",
                    strstr(w->content_type, "text/html") ? "no-cache" : "public, max-age=300");
        if (r == 0)
                r = gc_httpd_add_header(res, "X-Content-Type-Options", "nosniff");
        if (r < 0)
                return r;
        res->content_type = w->content_type;
        if (gc__api_etag_match(gc_httpd_header(req, "If-None-Match"), w->etag)) {
                res->status = 304;
                return 0;
        }
        return gc_buf_append(&res->body, w->data, w->len);
}

int gc_api_routes(gc_api *a, gc_httpd *h)
{
        size_t n = sizeof(gc__routes) / sizeof(gc__routes[0]);
        int r;

        if (!a || !h)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                r = gc_httpd_route(h, gc__routes[i].path, gc__routes[i].flags, gc__handle,
                                   &a->bind[i]);
                if (r < 0)
                        return r;
        }
        return gc_httpd_route(h, "/", GC_HTTPD_PREFIX, gc__static, a);
}

int gc_api_metrics_route(gc_api *a, gc_httpd *h)
{
        if (!a || !h)
                return -EINVAL;
        for (size_t i = 0; i < sizeof(gc__routes) / sizeof(gc__routes[0]); i++)
                if (gc__routes[i].fn == gc__api_metrics)
                        return gc_httpd_route(h, gc__routes[i].path, gc__routes[i].flags,
                                              gc__handle, &a->bind[i]);
        return -ENOENT;
}

const gc_ledger *gc_snapshot_ledger(const gc_snapshot *s)
{
        return s ? s->p.ledger : NULL;
}

int64_t gc_snapshot_now(const gc_snapshot *s)
{
        return s ? s->p.now : 0;
}

const gc_advisor_result *gc_snapshot_advice(const gc_snapshot *s)
{
        return s ? s->p.advice : NULL;
}
