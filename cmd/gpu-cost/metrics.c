/* metrics: saved dcgm-exporter bodies -> the advisor's Savings, for `analyze --metrics` and demo.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "savings/savings.h"

typedef struct cli__order {
        const cli_metrics_file *f;
        int64_t at; /* when its samples start */
        int64_t interval_s;
} cli__order;

static int cli__by_time(const void *a, const void *b)
{
        const cli__order *x = a, *y = b;

        return (x->at > y->at) - (x->at < y->at);
}

static const gc_pod *cli__pod(void *ud, const char *uid)
{
        const gc_dump *d = ud;

        for (size_t i = 0; i < d->pods.n; i++)
                if (d->pods.v[i].uid == uid ||
                    (d->pods.v[i].uid && strcmp(d->pods.v[i].uid, uid) == 0))
                        return &d->pods.v[i];
        return NULL;
}

/* The share sink: measured use of a shared GPU into the usage basis (docs/ledger.md). */
static int cli__share(void *ud, const gc_gpuuse_share *sh)
{
        gc_dump *d = ud;
        gc_account_use h[GC_LEDGER_MAX_HOLDERS];
        size_t n = sh->n < GC_LEDGER_MAX_HOLDERS ? sh->n : GC_LEDGER_MAX_HOLDERS;
        int r;

        if (n < 2)
                return 0;
        for (size_t i = 0; i < n; i++) {
                h[i].ns = sh->h[i].ns;
                h[i].pod = sh->h[i].pod;
                h[i].pod_uid = sh->h[i].pod_uid;
                h[i].use = sh->h[i].use;
        }
        r = gc_account_split_by_use(d->acct, sh->from, sh->to, h, n);
        return r < 0 ? r : 0;
}

int cli_metrics_ingest(gc_dump *d, const cli_metrics_file *files, size_t n_files, int64_t scrape_at,
                       int64_t interval_s, gc_gpuuse **ret_store)
{
        gc_savings_opts so;
        gc_gpuuse *store;
        cli__order *order;
        int r = 0;

        *ret_store = NULL;
        gc_config_savings_opts(d->cfg, &so);
        store = gc_gpuuse_new(&so.usage);
        order = calloc(n_files ? n_files : 1, sizeof(*order));
        if (!store || !order) {
                free(order);
                gc_gpuuse_free(store);
                cli_error("out of memory");
                return -ENOMEM;
        }
        gc_gpuuse_set_share_sink(store, cli__share, d);
        for (size_t i = 0; i < n_files; i++) {
                int64_t first;
                int64_t series = gc_savings_series_interval(files[i].data, files[i].len, &first);

                order[i].f = &files[i];
                order[i].interval_s = interval_s ? interval_s : series;
                order[i].at = series || first ? first : scrape_at ? scrape_at : files[i].mtime;
        }
        /* Older readings than a pod has already taken in are dropped: oldest file first. */
        qsort(order, n_files, sizeof(*order), cli__by_time);
        for (size_t i = 0; i < n_files; i++) {
                const cli_metrics_file *f = order[i].f;
                gc_gpuuse_stats st;

                memset(&st, 0, sizeof(st));
                r = gc_gpuuse_ingest_text(store, f->data, f->len, scrape_at ? scrape_at : f->mtime,
                                          order[i].interval_s, &st);
                if (r == -ENOSPC)
                        cli_warn("%s: more readings than one batch holds; the rest is left out",
                                 f->name);
                else if (r < 0)
                        break;
                r = 0;
                if (st.parse_errors)
                        cli_warn("%s: %llu malformed lines skipped (line %llu: %s)", f->name,
                                 (unsigned long long)st.parse_errors,
                                 (unsigned long long)st.first_error_line, st.first_error);
                if (st.out_of_order)
                        cli_warn("%s: %llu readings older than ones already read were dropped",
                                 f->name, (unsigned long long)st.out_of_order);
                if (st.used == 0)
                        cli_warn("%s: no dcgm-exporter sample of a known metric with a GPU UUID",
                                 f->name);
                if (st.share_errors)
                        cli_warn("%s: %llu samples of shared GPUs could not be split by measured "
                                 "use (they stay as allocated)",
                                 f->name, (unsigned long long)st.share_errors);
        }
        free(order);
        if (r < 0) {
                cli_error("cannot read the metrics: %s", strerror(-r));
                gc_gpuuse_free(store);
                return r;
        }
        *ret_store = store;
        return 0;
}

int cli_metrics_savings(const gc_dump *d, const gc_gpuuse *store, int64_t start, int64_t end,
                        int64_t now, gc_buf *md, gc_buf *json)
{
        gc_savings_opts so;
        gc_advisor_pod *pods = NULL;
        size_t n_pods = 0;
        gc_savings_table tab;
        char err[512];
        int r;

        memset(&tab, 0, sizeof(tab));
        gc_config_savings_opts(d->cfg, &so);
        gc_savings_shared_opts(&so.advisor, d->acct);
        r = gc_savings_table_build(store, start, end, &tab);
        if (r == 0)
                r = gc_savings_collect(d->ledger, start, end, now, cli__pod, (void *)d, &tab, &pods,
                                       &n_pods);
        if (r < 0)
                goto finish;
        r = gc_savings_run(&so, d->ledger, start, end, now, pods, n_pods, NULL, NULL, 0, md, json,
                           NULL, err, sizeof(err));
        if (r < 0)
                cli_error("advisor: %s", err);
finish:
        if (r == -ENOMEM)
                cli_error("out of memory");
        free(pods);
        gc_savings_table_release(&tab);
        return r;
}

int cli_metrics_read(const char *path, cli_metrics_file *ret, gc_buf *owned)
{
        struct stat sb;
        int r;

        memset(ret, 0, sizeof(*ret));
        r = gc_read_file(path, GC_CLI_MAX_INPUT, owned);
        if (r < 0) {
                if (r == -E2BIG)
                        cli_error("%s: larger than %zu MiB", path, GC_CLI_MAX_INPUT >> 20);
                else
                        cli_error("%s: cannot read: %s", path, strerror(-r));
                return r;
        }
        ret->name = path;
        ret->data = owned->data;
        ret->len = owned->len;
        ret->mtime = stat(path, &sb) == 0 ? (int64_t)sb.st_mtime : 0;
        return 0;
}
