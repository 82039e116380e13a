/* checkpoint_io: the ledger to and from its checkpoint ConfigMaps (docs/checkpoint.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint/checkpoint.h"
#include "ctl_int.h"
#include "log.h"

static const gc_kube_kv ctl__checkpoint_labels[] = {
    {"app.kubernetes.io/name", "gpu-cost"},
    {"gpu-cost.io/kind", "checkpoint"},
};

/* data["checkpoint.json"] of a ConfigMap, copied; NULL when absent. */
static char *ctl__fetch(ctl *c, const char *name, size_t *ret_len, int *ret_err)
{
        cJSON *obj = NULL;
        const cJSON *v;
        char err[256];
        char *out = NULL;
        int r;

        *ret_err = 0;
        r = gc_kube_configmap_get(c->kw, c->ns, name, &obj, err, sizeof(err));
        if (r == -ENOENT)
                return NULL;
        if (r < 0) {
                ctl_log(CTL_WARN, "cannot read a checkpoint ConfigMap", "configmap", name, "error",
                        err, NULL);
                *ret_err = r;
                return NULL;
        }
        v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "data"),
                                             GC_CHECKPOINT_KEY);
        if (cJSON_IsString(v)) {
                *ret_len = strlen(v->valuestring);
                out = strdup(v->valuestring);
        }
        cJSON_Delete(obj);
        return out;
}

/* Starts over with an empty ledger (a partly restored one must not be used). */
static int ctl__reset_ledger(ctl *c)
{
        gc_ledger_opts lo;

        c->acct = gc_accountant_free(c->acct);
        c->ledger = gc_ledger_free(c->ledger);
        memset(&lo, 0, sizeof(lo));
        lo.pool = c->pool;
        lo.bucket_s = ctl_fold_bucket(c->cfg);
        c->ledger = gc_ledger_new(&lo);
        if (c->ledger)
                c->acct = gc_accountant_new(c->cfg, c->pool, c->ledger);
        return c->acct ? 0 : -ENOMEM;
}

int ctl_checkpoint_restore(ctl *c)
{
        char *chunks[GC_CHECKPOINT_MAX_CHUNKS] = {NULL};
        size_t lens[GC_CHECKPOINT_MAX_CHUNKS] = {0};
        gc_checkpoint_header h;
        gc_checkpoint_info info;
        char err[512], name[GC_CHECKPOINT_NAME_MAX], when[GC_TIME_LEN];
        int r = 0, fetch_err;
        size_t n = 0;

        memset(&info, 0, sizeof(info));
        gc_checkpoint_name(0, name);
        chunks[0] = ctl__fetch(c, name, &lens[0], &fetch_err);
        if (!chunks[0]) {
                if (fetch_err) {
                        /* Unreadable is not absent: starting empty would lose history. */
                        ctl_fatal(c, "cannot read the checkpoint ConfigMap: check the Role "
                                     "(get on configmaps in the controller's namespace)");
                        return -EIO;
                }
                ctl_log(CTL_INFO, "no checkpoint: starting with an empty ledger", NULL);
                return 0;
        }
        if (gc_checkpoint_peek(chunks[0], lens[0], &h, err, sizeof(err)) < 0) {
                ctl_log(CTL_WARN, "checkpoint unreadable: starting with an empty ledger", "error",
                        err, NULL);
                goto finish;
        }
        n = h.of;
        for (size_t i = 1; i < n && i < GC_CHECKPOINT_MAX_CHUNKS; i++) {
                gc_checkpoint_name(i, name);
                chunks[i] = ctl__fetch(c, name, &lens[i], &fetch_err);
        }
        pthread_mutex_lock(&c->mu);
        r = gc_checkpoint_decode(c->ledger, (const char *const *)chunks, lens, n, 0, 0, &info, err,
                                 sizeof(err));
        if (r < 0) {
                r = ctl__reset_ledger(c);
                pthread_mutex_unlock(&c->mu);
                ctl_log(CTL_WARN, "checkpoint refused: starting with an empty ledger", "error", err,
                        NULL);
                goto finish;
        }
        c->restored_at = info.header.written_at;
        c->restore_pending = 1;
        pthread_mutex_unlock(&c->mu);
        gc_time_format(info.header.written_at, when);
        {
                char counts[96];

                snprintf(counts, sizeof(counts), "%zu intervals, %zu open, %zu rollups",
                         info.header.usage, info.n_open, info.header.rollups);
                ctl_log(CTL_INFO, "checkpoint restored", "written_at", when, "by",
                        info.header.controller, "records", counts, NULL);
        }
finish:
        gc_checkpoint_info_release(&info);
        for (size_t i = 0; i < GC_CHECKPOINT_MAX_CHUNKS; i++)
                free(chunks[i]);
        if (r < 0)
                ctl_fatal(c, "out of memory restoring the checkpoint");
        return r;
}

static int ctl__seen(void *ud, const char *uid)
{
        ctl *c = ud;
        size_t idx;

        return gc_ptrmap_get(&c->pod_map, uid, &idx) == 0;
}

typedef struct ctl__caps {
        gc_capacity *v;
        size_t n, cap;
} ctl__caps;

static int ctl__collect_capacity(void *ud, const gc_capacity *cap)
{
        ctl__caps *cs = ud;

        if (cap->end != GC_OPEN)
                return 0;
        if (cs->n == cs->cap) {
                size_t nc = cs->cap ? cs->cap * 2 : 64;
                gc_capacity *p = realloc(cs->v, nc * sizeof(*p));

                if (!p)
                        return -ENOMEM;
                cs->v = p;
                cs->cap = nc;
        }
        cs->v[cs->n++] = *cap;
        return 0;
}

void ctl_checkpoint_close_missing(ctl *c)
{
        gc_ledger_visitor vis;
        ctl__caps caps;
        size_t count = 0, gone_nodes = 0;
        double gpu_seconds = 0;
        gc_buf note;

        /* Pods that were holding GPUs at the checkpoint and are gone now. */
        if (gc_checkpoint_close_missing(c->ledger, ctl__seen, c, c->restored_at, &count,
                                        &gpu_seconds) < 0)
                ctl_log(CTL_WARN, "cannot close the intervals of pods deleted meanwhile", NULL);
        if (count) {
                gc_buf_init(&note, 4096);
                if (gc_checkpoint_estimate_note(count, gpu_seconds, c->restored_at, &note) == 0) {
                        gc_diag_add(&c->diag, "%s", note.data);
                        ctl_log(CTL_WARN, "pods deleted while the controller was away", "detail",
                                note.data, NULL);
                }
                gc_buf_free(&note);
        }
        /* Nodes likewise: capacity restored open, node absent from the first LIST. */
        memset(&caps, 0, sizeof(caps));
        memset(&vis, 0, sizeof(vis));
        vis.capacity = ctl__collect_capacity;
        if (gc_ledger_visit(c->ledger, &vis, &caps) == 0) {
                for (size_t i = 0; i < caps.n; i++) {
                        size_t idx;

                        if (gc_ptrmap_get(&c->named_map[1], caps.v[i].node, &idx) == 0)
                                continue;
                        caps.v[i].end =
                            c->restored_at > caps.v[i].start ? c->restored_at : caps.v[i].start;
                        if (gc_ledger_put_capacity(c->ledger, &caps.v[i]) == 0)
                                gone_nodes++;
                }
        }
        free(caps.v);
        if (gone_nodes)
                gc_diag_add(&c->diag,
                            "%zu GPU node(s) disappeared while the controller was away; their "
                            "capacity is counted up to the last checkpoint",
                            gone_nodes);
        c->changes++;
}

int ctl_checkpoint_save(ctl *c)
{
        gc_buf *chunks = NULL;
        size_t n = 0;
        int64_t now = ctl_now();
        int64_t keep_days = c->cfg->daily_retention_days > c->cfg->weekly_retention_weeks * 7
                                ? c->cfg->daily_retention_days
                                : c->cfg->weekly_retention_weeks * 7;
        char err[512], name[GC_CHECKPOINT_NAME_MAX];
        char **existing = NULL;
        size_t n_existing = 0;
        int r, folded;
        /* Monthly reports within retention, and the month before the oldest (its change line),
         * must stay whole: folded history is kept back to that month's start. */
        int64_t keep_since = now - keep_days * 86400;
        int64_t month_since =
            gc_tz_period_add(c->cfg->tz, GC_TZ_MONTH, now, -c->cfg->monthly_retention_months);

        if (month_since < keep_since)
                keep_since = month_since;
        pthread_mutex_lock(&c->mu);
        folded = gc_ledger_fold(c->ledger, now - c->o->fold_after_s, keep_since);
        r = gc_checkpoint_encode(c->ledger, now, c->o->id, 0, &chunks, &n, err, sizeof(err));
        pthread_mutex_unlock(&c->mu);
        if (folded < 0)
                ctl_log(CTL_WARN, "fold failed", "error", strerror(-folded), NULL);
        if (r < 0) {
                atomic_fetch_add(&c->checkpoint_errors, 1);
                ctl_log(CTL_ERROR, "cannot encode the checkpoint", "error", err, NULL);
                return r;
        }
        /* Chunk 0 last: a restore reads it first and refuses a write missing its others. */
        for (size_t k = n; k-- > 0;) {
                gc_kube_kv data = {GC_CHECKPOINT_KEY, chunks[k].data};

                gc_checkpoint_name(k, name);
                r = gc_kube_configmap_put(c->kw, c->ns, name, ctl__checkpoint_labels, 2, &data, 1,
                                          err, sizeof(err));
                if (r < 0) {
                        atomic_fetch_add(&c->checkpoint_errors, 1);
                        ctl_log(CTL_ERROR, "cannot write the checkpoint", "configmap", name,
                                "error", err, NULL);
                        goto finish;
                }
        }
        atomic_store(&c->checkpoint_at, (long)now);
        /* Chunks left over from an earlier, longer write. */
        if (gc_kube_configmap_list(c->kw, c->ns, "gpu-cost.io/kind=checkpoint", &existing,
                                   &n_existing, err, sizeof(err)) == 0) {
                for (size_t i = 0; i < n_existing; i++) {
                        int keep = 0;

                        for (size_t k = 0; k < n && !keep; k++) {
                                gc_checkpoint_name(k, name);
                                keep = strcmp(name, existing[i]) == 0;
                        }
                        if (!keep && gc_kube_configmap_delete(c->kw, c->ns, existing[i], err,
                                                              sizeof(err)) < 0)
                                ctl_log(CTL_WARN, "cannot delete an old checkpoint chunk",
                                        "configmap", existing[i], "error", err, NULL);
                }
        }
        ctl_log(CTL_DEBUG, "checkpoint written", NULL);
finish:
        for (size_t i = 0; i < n_existing; i++)
                free(existing[i]);
        free(existing);
        gc_checkpoint_chunks_free(chunks, n);
        return r;
}
