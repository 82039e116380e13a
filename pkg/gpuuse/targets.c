/* targets: where the dcgm-exporter pods are, a token file, and which Prometheus range is due. */
#include "gpuuse_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends s percent-encoded (a label selector in a query string). */
static int gc_gpuuse__escape(gc_buf *b, const char *s)
{
        int r = 0;

        for (; *s && r == 0; s++) {
                unsigned char ch = (unsigned char)*s;

                if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' || ch == '~')
                        r = gc_buf_append(b, s, 1);
                else
                        r = gc_buf_printf(b, "%%%02X", ch);
        }
        return r;
}

int gc_gpuuse_targets_path(const gc_gpuuse_targets_opts *o, gc_buf *ret)
{
        int r;

        if (!o || !ret || !o->ns || (!o->service && !o->label_selector))
                return -EINVAL;
        if (o->service)
                return gc_buf_printf(ret, "/api/v1/namespaces/%s/endpoints/%s", o->ns, o->service);
        r = gc_buf_printf(ret, "/api/v1/namespaces/%s/pods?labelSelector=", o->ns);
        return r == 0 ? gc_gpuuse__escape(ret, o->label_selector) : r;
}

/* Appends the scrape URL of one address; 0 when skipped (bad address, too many). */
static int gc_gpuuse__add_target(const gc_gpuuse_targets_opts *o, const cJSON *ip, char **urls,
                                 size_t *n)
{
        char url[1200];
        int v6;

        if (*n == GC_GPUUSE_MAX_TARGETS || !cJSON_IsString(ip) || !*ip->valuestring ||
            strlen(ip->valuestring) > 64)
                return 0;
        v6 = strchr(ip->valuestring, ':') != NULL;
        snprintf(url, sizeof(url), "%s://%s%s%s:%d%s", o->scheme, v6 ? "[" : "", ip->valuestring,
                 v6 ? "]" : "", o->port, o->path);
        urls[*n] = strdup(url);
        if (!urls[*n])
                return -ENOMEM;
        (*n)++;
        return 0;
}

/* The URLs of one item: an Endpoints subset's ready addresses, or a Running pod's IP. */
static int gc_gpuuse__item_targets(const gc_gpuuse_targets_opts *o, const cJSON *it, char **urls,
                                   size_t *n)
{
        const cJSON *st, *phase, *a;
        int r = 0;

        if (!o->service) {
                st = cJSON_GetObjectItemCaseSensitive(it, "status");
                phase = cJSON_GetObjectItemCaseSensitive(st, "phase");
                if (!cJSON_IsString(phase) || strcmp(phase->valuestring, "Running") != 0)
                        return 0;
                return gc_gpuuse__add_target(o, cJSON_GetObjectItemCaseSensitive(st, "podIP"), urls,
                                             n);
        }
        /* Ready addresses only: notReadyAddresses are not scraped. */
        cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(it, "addresses"))
        {
                r = gc_gpuuse__add_target(o, cJSON_GetObjectItemCaseSensitive(a, "ip"), urls, n);
                if (r < 0)
                        break;
        }
        return r;
}

int gc_gpuuse_targets_parse(const gc_gpuuse_targets_opts *o, const char *body, size_t len,
                            char ***ret_urls, size_t *ret_n, char *err, size_t errlen)
{
        const char *what;
        const cJSON *it;
        cJSON *root;
        char **urls;
        size_t n = 0;
        int r = 0;

        if (!o || !o->ns || !o->scheme || !o->path || (!body && len) || !ret_urls || !ret_n)
                return -EINVAL;
        what = o->service ? "reading the Endpoints" : "listing pods";
        root = cJSON_ParseWithLengthOpts(body ? body : "", len, NULL, 0);
        if (!root) {
                snprintf(err, errlen, "%s in %s: not JSON", what, o->ns);
                return -EINVAL;
        }
        urls = calloc(GC_GPUUSE_MAX_TARGETS, sizeof(*urls));
        if (!urls) {
                cJSON_Delete(root);
                return -ENOMEM;
        }
        cJSON_ArrayForEach(it,
                           cJSON_GetObjectItemCaseSensitive(root, o->service ? "subsets" : "items"))
        {
                r = gc_gpuuse__item_targets(o, it, urls, &n);
                if (r < 0)
                        break;
        }
        cJSON_Delete(root);
        if (r < 0) {
                gc_gpuuse_targets_free(urls, n);
                return r;
        }
        *ret_urls = urls;
        *ret_n = n;
        return 0;
}

void gc_gpuuse_targets_free(char **urls, size_t n)
{
        for (size_t i = 0; urls && i < n; i++)
                free(urls[i]);
        free(urls);
}

int gc_gpuuse_read_token(const char *path, gc_buf *ret, char *err, size_t errlen)
{
        int r;

        if (!path || !ret)
                return -EINVAL;
        r = gc_read_file(path, GC_GPUUSE_TOKEN_MAX, ret);
        if (r < 0) {
                snprintf(err, errlen, "%s: %s", path, strerror(-r));
                return r;
        }
        while (ret->len && (ret->data[ret->len - 1] == '\n' || ret->data[ret->len - 1] == '\r' ||
                            ret->data[ret->len - 1] == ' '))
                ret->data[--ret->len] = '\0';
        return 0;
}

/* ---- which Prometheus range is due ------------------------------------------------------- */

int gc_gpuuse_prom_plan_next(gc_gpuuse_prom_plan *p, int64_t now, int64_t *ret_start,
                             int64_t *ret_end)
{
        int64_t s;

        if (!p || !ret_start || !ret_end || p->lookback_s < 0 || p->step_s <= 0)
                return -EINVAL;
        if (!p->history_done) {
                if (!p->in_pass) {
                        p->in_pass = 1;
                        p->next = now - p->lookback_s;
                }
                s = p->next;
                if (s >= now) {
                        /* The whole lookback is in (or there is none): go on from now. */
                        p->history_done = 1;
                        p->in_pass = 0;
                        if (p->until < now)
                                p->until = now;
                        return GC_GPUUSE_PROM_HISTORY_DONE;
                }
                *ret_start = s;
                *ret_end = s + GC_GPUUSE_PROM_CHUNK_S < now ? s + GC_GPUUSE_PROM_CHUNK_S : now;
                return GC_GPUUSE_PROM_DUE;
        }
        s = p->until + p->step_s;
        if (now <= p->until || s > now)
                return GC_GPUUSE_PROM_NONE;
        *ret_start = s;
        *ret_end = now;
        return GC_GPUUSE_PROM_DUE;
}

void gc_gpuuse_prom_plan_done(gc_gpuuse_prom_plan *p, int64_t end, int ok)
{
        if (!p)
                return;
        if (!ok) {
                /* A failed history pass starts over at the next round (oldest day first: a store
                 * drops readings older than it has taken in). */
                p->in_pass = 0;
                return;
        }
        if (!p->history_done)
                p->next = end;
        if (end > p->until)
                p->until = end;
}
