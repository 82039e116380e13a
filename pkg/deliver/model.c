/* deliver model: a report's JSON (report.json) read into the figures every message shows. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deliver.h"

/* Control bytes become blanks and bytes that are not well-formed UTF-8 '?': every message
 * built from the text is then valid UTF-8 (JSON parsers pass such bytes through). */
static void gc_deliver__clean(char *s)
{
        unsigned char *p = (unsigned char *)s;

        while (*p) {
                size_t n = *p < 0x80                  ? 0
                           : *p >= 0xC2 && *p <= 0xDF ? 1
                           : *p >= 0xE0 && *p <= 0xEF ? 2
                           : *p >= 0xF0 && *p <= 0xF4 ? 3
                                                      : 9,
                       i;

                if (n == 0) {
                        if (*p < 0x20 || *p == 0x7f)
                                *p = ' ';
                        p++;
                        continue;
                }
                for (i = 1; n != 9 && i <= n; i++)
                        if ((p[i] & 0xC0) != 0x80)
                                break;
                if (n == 9 || i <= n) {
                        *p++ = '?';
                        continue;
                }
                p += n + 1;
        }
}

/* Copies a string member (cut to size, control bytes as blanks); "" when absent or null. */
static int gc_deliver__str(const cJSON *o, const char *name, char *out, size_t size, char *err,
                           size_t errlen)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

        out[0] = '\0';
        if (!v || cJSON_IsNull(v))
                return 0;
        if (!cJSON_IsString(v) || !v->valuestring) {
                gc_errf(err, errlen, "\"%s\" is not a string", name);
                return -EINVAL;
        }
        gc_strlcpy(out, v->valuestring, size);
        /* A cut in the middle of a UTF-8 sequence drops the sequence's start. */
        size_t n = strlen(out);
        if (n == size - 1) {
                while (n && ((unsigned char)out[n - 1] & 0xC0) == 0x80)
                        n--;
                if (n && (unsigned char)out[n - 1] >= 0xC0)
                        n--;
                out[n] = '\0';
        }
        gc_deliver__clean(out);
        return 0;
}

/* A finite number member; `opt`: absent or null gives NAN. */
static int gc_deliver__num(const cJSON *o, const char *name, int opt, double *ret, char *err,
                           size_t errlen)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

        if (opt && (!v || cJSON_IsNull(v))) {
                *ret = NAN;
                return 0;
        }
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
                gc_errf(err, errlen, "\"%s\" is not a finite number", name);
                return -EINVAL;
        }
        *ret = v->valuedouble;
        return 0;
}

static const cJSON *gc_deliver__obj(const cJSON *o, const char *name, char *err, size_t errlen)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

        if (!cJSON_IsObject(v)) {
                gc_errf(err, errlen, "\"%s\" is not an object", name);
                return NULL;
        }
        return v;
}

static const cJSON *gc_deliver__arr(const cJSON *o, const char *name, char *err, size_t errlen)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

        if (!cJSON_IsArray(v)) {
                gc_errf(err, errlen, "\"%s\" is not an array", name);
                return NULL;
        }
        return v;
}

static int gc_deliver__time(const cJSON *o, const char *name, int64_t *ret, char *err,
                            size_t errlen)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

        if (!cJSON_IsString(v) || !v->valuestring ||
            gc_time_parse(v->valuestring, strlen(v->valuestring), ret) < 0) {
                gc_errf(err, errlen, "\"%s\" is not an RFC 3339 time", name);
                return -EINVAL;
        }
        return 0;
}

/* One cost row: its name from up to two members joined with " / ". */
static int gc_deliver__row(const cJSON *o, const char *k1, const char *k2, gc_deliver_row *row,
                           char *err, size_t errlen)
{
        char a[GC_DELIVER_MAX_TEXT], b[GC_DELIVER_MAX_TEXT];
        int r;

        if (!cJSON_IsObject(o)) {
                gc_errf(err, errlen, "a row is not an object");
                return -EINVAL;
        }
        r = gc_deliver__str(o, k1, a, sizeof(a), err, errlen);
        if (r == 0 && k2)
                r = gc_deliver__str(o, k2, b, sizeof(b), err, errlen);
        if (r == 0)
                r = gc_deliver__num(o, "cost", 0, &row->cost, err, errlen);
        if (r == 0)
                r = gc_deliver__num(o, "gpu_hours", 0, &row->gpu_hours, err, errlen);
        if (r == 0)
                r = gc_deliver__num(o, "share", 1, &row->share, err, errlen);
        if (r < 0)
                return r;
        if (k2)
                gc_errf(row->name, sizeof(row->name), "%s / %s", a, b);
        else
                gc_strlcpy(row->name, a, sizeof(row->name));
        return 0;
}

static int gc_deliver__rows(const cJSON *arr, const char *k1, const char *k2, gc_deliver_row *rows,
                            size_t *n, size_t *more, char *err, size_t errlen)
{
        const cJSON *it;

        cJSON_ArrayForEach(it, arr)
        {
                if (*n == GC_DELIVER_MAX_ROWS) {
                        if (more)
                                (*more)++;
                        continue;
                }
                int r = gc_deliver__row(it, k1, k2, &rows[*n], err, errlen);
                if (r < 0)
                        return r;
                (*n)++;
        }
        return 0;
}

static int gc_deliver__budgets(const cJSON *arr, gc_deliver_report *d, char *err, size_t errlen)
{
        const cJSON *it;

        cJSON_ArrayForEach(it, arr)
        {
                gc_deliver_budget *b = &d->budgets[d->n_budgets];
                int r;

                if (d->n_budgets == GC_DELIVER_MAX_ROWS) {
                        d->more_budgets++;
                        continue;
                }
                if (!cJSON_IsObject(it)) {
                        gc_errf(err, errlen, "a budget is not an object");
                        return -EINVAL;
                }
                r = gc_deliver__str(it, "scope", b->scope, sizeof(b->scope), err, errlen);
                if (r == 0)
                        r = gc_deliver__str(it, "name", b->name, sizeof(b->name), err, errlen);
                if (r == 0)
                        r = gc_deliver__str(it, "state", b->state, sizeof(b->state), err, errlen);
                if (r == 0)
                        r = gc_deliver__num(it, "amount", 0, &b->amount, err, errlen);
                if (r == 0)
                        r = gc_deliver__num(it, "spent", 0, &b->spent, err, errlen);
                if (r == 0)
                        r = gc_deliver__num(it, "share", 0, &b->share, err, errlen);
                if (r == 0)
                        r = gc_deliver__num(it, "forecast", 1, &b->forecast, err, errlen);
                if (r < 0)
                        return r;
                d->n_budgets++;
        }
        return 0;
}

/* The advisor's findings, largest monthly saving kept (the report lists them largest first). */
static int gc_deliver__savings(const cJSON *sv, gc_deliver_report *d, char *err, size_t errlen)
{
        const cJSON *arr, *it;

        if (!sv || cJSON_IsNull(sv))
                return 0;
        if (!cJSON_IsObject(sv) || !(arr = gc_deliver__arr(sv, "findings", err, errlen))) {
                gc_errf(err, errlen, "\"savings\" is not an object with \"findings\"");
                return -EINVAL;
        }
        cJSON_ArrayForEach(it, arr)
        {
                const cJSON *ch;
                double m;
                int r;

                if (!cJSON_IsObject(it)) {
                        gc_errf(err, errlen, "a finding is not an object");
                        return -EINVAL;
                }
                r = gc_deliver__num(it, "monthly_savings", 0, &m, err, errlen);
                if (r < 0)
                        return r;
                d->savings_monthly += m;
                if (d->n_savings == GC_DELIVER_MAX_SAVES) {
                        d->more_savings++;
                        continue;
                }
                gc_deliver_saving *s = &d->savings[d->n_savings];
                s->monthly = m;
                r = gc_deliver__str(it, "kind", s->kind, sizeof(s->kind), err, errlen);
                ch = cJSON_GetObjectItemCaseSensitive(it, "change");
                if (r == 0 && cJSON_IsObject(ch))
                        r = gc_deliver__str(ch, "summary", s->summary, sizeof(s->summary), err,
                                            errlen);
                else
                        s->summary[0] = '\0';
                if (r < 0)
                        return r;
                d->n_savings++;
        }
        /* The report's own total (findings it left out included), the figure report.md states. */
        const cJSON *tot = cJSON_GetObjectItemCaseSensitive(sv, "totals");
        if (cJSON_IsObject(tot) && cJSON_GetObjectItemCaseSensitive(tot, "monthly_savings"))
                return gc_deliver__num(tot, "monthly_savings", 0, &d->savings_monthly, err, errlen);
        return 0;
}

/* The summary's groups, by team and project, largest first. */
static int gc_deliver__projects(const cJSON *arr, gc_deliver_report *d, char *err, size_t errlen)
{
        const cJSON *it;
        int r;

        cJSON_ArrayForEach(it, arr)
        {
                const cJSON *keys = cJSON_GetObjectItemCaseSensitive(it, "keys");
                gc_deliver_row *row = &d->projects[d->n_projects];
                char t[GC_DELIVER_MAX_TEXT], p[GC_DELIVER_MAX_TEXT];

                if (d->n_projects == GC_DELIVER_MAX_ROWS) {
                        d->more_projects++;
                        continue;
                }
                if (!cJSON_IsObject(keys)) {
                        gc_errf(err, errlen, "a group's \"keys\" is not an object");
                        return -EINVAL;
                }
                r = gc_deliver__str(keys, "team", t, sizeof(t), err, errlen);
                if (r == 0)
                        r = gc_deliver__str(keys, "project", p, sizeof(p), err, errlen);
                if (r == 0)
                        r = gc_deliver__row(it, "__none__", NULL, row, err, errlen);
                if (r < 0)
                        return r;
                gc_errf(row->name, sizeof(row->name), "%s / %s", t, p);
                row->share = d->cost > 0 ? row->cost / d->cost : NAN;
                d->n_projects++;
        }
        return 0;
}

/* The previous period and the change against it, and the forecast of a partial period. */
static int gc_deliver__change(const cJSON *root, gc_deliver_report *d, char *err, size_t errlen)
{
        const cJSON *prev, *change, *fc;
        int r;

        prev = cJSON_GetObjectItemCaseSensitive(root, "previous");
        change = cJSON_GetObjectItemCaseSensitive(root, "change");
        if (cJSON_IsObject(prev) && cJSON_IsTrue(cJSON_GetObjectItem(prev, "has_data")) &&
            cJSON_IsObject(change)) {
                r = gc_deliver__num(prev, "cost", 0, &d->prev_cost, err, errlen);
                if (r == 0)
                        r = gc_deliver__num(change, "cost", 0, &d->change, err, errlen);
                if (r == 0)
                        r = gc_deliver__num(change, "percent", 1, &d->change_pct, err, errlen);
                if (r < 0)
                        return r;
                d->has_prev = 1;
        }
        fc = cJSON_GetObjectItemCaseSensitive(root, "forecast");
        if (cJSON_IsObject(fc)) {
                r = gc_deliver__num(fc, "cost", 0, &d->forecast_cost, err, errlen);
                if (r < 0)
                        return r;
                d->has_forecast = 1;
        }

        return 0;
}

static int gc_deliver__parse(const cJSON *root, gc_deliver_report *d, char *err, size_t errlen)
{
        const cJSON *period, *total, *sum, *arr, *v;
        int r;

        if (!cJSON_IsObject(root)) {
                gc_errf(err, errlen, "the report is not a JSON object");
                return -EINVAL;
        }
        r = gc_deliver__str(root, "kind", d->kind, sizeof(d->kind), err, errlen);
        if (r == 0)
                r = gc_deliver__str(root, "title", d->title, sizeof(d->title), err, errlen);
        if (r == 0)
                r = gc_deliver__str(root, "cluster", d->cluster, sizeof(d->cluster), err, errlen);
        if (r == 0)
                r = gc_deliver__str(root, "team", d->team, sizeof(d->team), err, errlen);
        if (r == 0)
                r = gc_deliver__str(root, "currency", d->currency, sizeof(d->currency), err,
                                    errlen);
        if (r < 0)
                return r;
        if (!d->title[0]) {
                gc_errf(err, errlen, "\"title\" is missing: not a period report (docs/report.md)");
                return -EINVAL;
        }
        if (!(period = gc_deliver__obj(root, "period", err, errlen)))
                return -EINVAL;
        r = gc_deliver__time(period, "start", &d->start, err, errlen);
        if (r == 0)
                r = gc_deliver__time(period, "end", &d->end, err, errlen);
        if (r < 0)
                return r;
        if (d->end <= d->start) {
                gc_errf(err, errlen, "\"period\": its end is not after its start");
                return -EINVAL;
        }
        v = cJSON_GetObjectItemCaseSensitive(period, "partial");
        d->partial = cJSON_IsTrue(v);
        r = gc_deliver__str(period, "iso_week", d->period_id, sizeof(d->period_id), err, errlen);
        if (r == 0 && (strcmp(d->kind, "weekly") != 0 || !d->period_id[0]))
                r = gc_deliver__str(period, strcmp(d->kind, "monthly") == 0 ? "month" : "start",
                                    d->period_id, sizeof(d->period_id), err, errlen);
        if (r < 0)
                return r;
        if (strcmp(d->kind, "daily") == 0 && strlen(d->period_id) > 10)
                d->period_id[10] = '\0';

        if (!(sum = gc_deliver__obj(root, "summary", err, errlen)) ||
            !(total = gc_deliver__obj(sum, "total", err, errlen)))
                return -EINVAL;
        r = gc_deliver__num(total, "cost", 0, &d->cost, err, errlen);
        if (r == 0)
                r = gc_deliver__num(total, "gpu_hours", 0, &d->gpu_hours, err, errlen);
        if (r == 0) {
                double pods;
                r = gc_deliver__num(total, "pods", 0, &pods, err, errlen);
                if (r == 0 && (pods < 0 || pods > 1e15)) {
                        gc_errf(err, errlen, "\"pods\" is out of range");
                        r = -EINVAL;
                }
                d->pods = r == 0 ? (uint64_t)pods : 0;
        }
        if (r < 0)
                return r;
        d->idle_cost = d->unattributed_cost = NAN;
        v = cJSON_GetObjectItemCaseSensitive(sum, "idle");
        if (cJSON_IsObject(v) && (r = gc_deliver__num(v, "cost", 0, &d->idle_cost, err, errlen)))
                return r;
        v = cJSON_GetObjectItemCaseSensitive(root, "unattributed");
        if (cJSON_IsObject(v) &&
            (r = gc_deliver__num(v, "cost", 0, &d->unattributed_cost, err, errlen)))
                return r;

        r = gc_deliver__change(root, d, err, errlen);
        if (r < 0)
                return r;
        if (!(arr = gc_deliver__arr(root, "by_team", err, errlen)))
                return -EINVAL;
        r = gc_deliver__rows(arr, "team", NULL, d->teams, &d->n_teams, &d->more_teams, err, errlen);
        if (r < 0)
                return r;
        if (!(arr = gc_deliver__arr(sum, "groups", err, errlen)))
                return -EINVAL;
        r = gc_deliver__projects(arr, d, err, errlen);
        if (r < 0)
                return r;
        v = cJSON_GetObjectItemCaseSensitive(root, "by_day");
        if (cJSON_IsArray(v) &&
            (r = gc_deliver__rows(v, "date", NULL, d->days, &d->n_days, NULL, err, errlen)))
                return r;
        v = cJSON_GetObjectItemCaseSensitive(root, "budgets");
        if (cJSON_IsArray(v) && (r = gc_deliver__budgets(v, d, err, errlen)))
                return r;
        return gc_deliver__savings(cJSON_GetObjectItemCaseSensitive(root, "savings"), d, err,
                                   errlen);
}

int gc_deliver_report_parse(const char *json, size_t len, gc_deliver_report *ret, char *err,
                            size_t errlen)
{
        gc_deliver_report *d;
        cJSON *root;
        int r;

        if (!json || !ret)
                return -EINVAL;
        if (len > GC_DELIVER_MAX_JSON) {
                gc_errf(err, errlen, "the report is larger than %zu MiB",
                        GC_DELIVER_MAX_JSON >> 20);
                return -E2BIG;
        }
        root = cJSON_ParseWithLength(json, len);
        if (!root) {
                gc_errf(err, errlen, "the report is not JSON");
                return -EINVAL;
        }
        d = calloc(1, sizeof(*d));
        if (!d) {
                cJSON_Delete(root);
                return -ENOMEM;
        }
        r = gc_deliver__parse(root, d, err, errlen);
        if (r == 0)
                memcpy(ret, d, sizeof(*d));
        free(d);
        cJSON_Delete(root);
        return r;
}
