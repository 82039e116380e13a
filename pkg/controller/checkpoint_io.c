/* checkpoint_io: the ledger to and from its checkpoint ConfigMaps (docs/checkpoint.md). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint/checkpoint.h"
#include "controller_int.h"
#include "log/log.h"

static const gc_kube_kv ctl__checkpoint_labels[] = {
    {"app.kubernetes.io/name", "gpu-cost"},
    {"gpu-cost.io/kind", "checkpoint"},
};

/* data["checkpoint.json"] of a ConfigMap, copied; NULL when absent, or on an error (*ret_err,
 * with the reason in err). */
static char *ctl__fetch(ctl *c, const char *name, size_t *ret_len, int *ret_err, char *err,
                        size_t errlen)
{
        cJSON *obj = NULL;
        const cJSON *v;
        char *out = NULL;
        int r;

        *ret_err = 0;
        r = gc_kube_configmap_get(c->kw, c->ns, name, &obj, err, errlen);
        if (r == -ENOENT)
                return NULL;
        if (r < 0) {
                gc_log(GC_LOG_WARN, "cannot read a checkpoint ConfigMap", "configmap", name,
                       "error", err, NULL);
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
        gc_accountant_opts ao;

        c->acct = gc_accountant_free(c->acct);
        c->ledger = gc_ledger_free(c->ledger);
        c->ledger = gc__ctl_ledger_new(c);
        gc_config_account_opts(c->cfg, &ao);
        if (c->ledger)
                c->acct = gc_accountant_new(&ao, c->pool, c->ledger);
        gc_accountant_set_owners(c->acct, c->owners);
        gc_mirror_set_ledger(c->mirror, c->ledger, c->acct);
        return c->acct ? 0 : -ENOMEM;
}

/* Says loudly that history was lost: log, /readyz detail, metric, report note. */
static void ctl__checkpoint_lost(ctl *c, const char *why)
{
        snprintf(c->checkpoint_lost_msg, sizeof(c->checkpoint_lost_msg),
                 "no complete checkpoint generation could be restored (%.200s): the ledger started "
                 "empty, history before this start is missing",
                 why);
        atomic_store(&c->checkpoint_lost, 1);
        gc_log(GC_LOG_ERROR, "checkpoint lost: starting with an empty ledger", "error", why, NULL);
        pthread_mutex_lock(&c->mu);
        gc_diag_add(&c->diag, "%s", c->checkpoint_lost_msg);
        pthread_mutex_unlock(&c->mu);
}

/*
 * Fetches slot s: its chunk 0, then the parts its manifest names (an incremental write) or its
 * numbered chunks (version 1), into chunks/lens (room for GC_CHECKPOINT_MAX_PARTS + 1; the caller
 * frees them). *ret_n is how many entries were filled (0 for an empty slot). parts is scratch
 * room for as many names. < 0 when chunk 0 could not be read (absent is not an error).
 */
static int ctl__fetch_slot(ctl *c, size_t s, char **chunks, size_t *lens,
                           char (*parts)[GC_CHECKPOINT_NAME_MAX], size_t *ret_n, char *err,
                           size_t errlen)
{
        enum { MAXC = GC_CHECKPOINT_MAX_PARTS + 1 };
        char name[GC_CHECKPOINT_NAME_MAX];
        gc_checkpoint_header h;
        size_t n = 1, n_parts = 0;
        int fetch_err;

        *ret_n = 0;
        gc_checkpoint_slot_name(s, 0, name);
        chunks[0] = ctl__fetch(c, name, &lens[0], &fetch_err, err, errlen);
        if (fetch_err)
                return fetch_err;
        if (!chunks[0])
                return 0;
        if (gc_checkpoint_peek(chunks[0], lens[0], &h, NULL, 0) == 0)
                n = h.of;
        /* An incremental write's manifest names its parts; a version 1 write's chunks are the
           slot's numbered ConfigMaps. */
        if (gc_checkpoint_manifest_parts(chunks[0], lens[0], parts, MAXC - 1, &n_parts) < 0 ||
            n_parts + 1 != n)
                n_parts = 0;
        for (size_t i = 1; i < n && i < MAXC; i++) {
                if (n_parts)
                        gc_strlcpy(name, parts[i - 1], sizeof(name));
                else
                        gc_checkpoint_slot_name(s, i, name);
                chunks[i] = ctl__fetch(c, name, &lens[i], &fetch_err, err, errlen);
        }
        *ret_n = n < MAXC ? n : MAXC;
        return 0;
}

int gc__ctl_checkpoint_restore(ctl *c)
{
        enum { G = GC_CHECKPOINT_GENERATIONS, MAXC = GC_CHECKPOINT_MAX_PARTS + 1 };
        char **chunks[G] = {NULL};
        size_t *lens[G] = {NULL};
        char(*parts)[GC_CHECKPOINT_NAME_MAX] = calloc(MAXC, sizeof(*parts));
        gc_checkpoint_slot slots[G];
        gc_checkpoint_info info;
        char err[1024], when[GC_TIME_LEN];
        size_t slot = 0, refused = 0;
        int r = 0;

        memset(slots, 0, sizeof(slots));
        memset(&info, 0, sizeof(info));
        c->cp_slot = SIZE_MAX;
        for (size_t s = 0; s < G; s++) {
                chunks[s] = calloc(MAXC, sizeof(*chunks[s]));
                lens[s] = calloc(MAXC, sizeof(*lens[s]));
        }
        if (!parts || !chunks[0] || !chunks[1] || !lens[0] || !lens[1]) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t s = 0; s < G; s++) {
                r = ctl__fetch_slot(c, s, chunks[s], lens[s], parts, &slots[s].n, err, sizeof(err));
                if (r < 0) {
                        /* Unreadable is not absent: starting empty would lose history. */
                        gc__ctl_fatal_api(c, r, "cannot read the checkpoint ConfigMap",
                                          "the Role must grant get on configmaps in the "
                                          "controller's namespace",
                                          err);
                        r = -EIO;
                        goto finish;
                }
                slots[s].chunks = (const char *const *)chunks[s];
                slots[s].lens = lens[s];
        }
        pthread_mutex_lock(&c->mu);
        r = gc_checkpoint_decode_newest(c->ledger, slots, G, 0, (size_t)c->o->max_history_rows,
                                        &info, &slot, &refused, err, sizeof(err));
        if (r < 0) {
                int lost = r != -ENOENT;

                r = ctl__reset_ledger(c);
                pthread_mutex_unlock(&c->mu);
                if (lost)
                        ctl__checkpoint_lost(c, err);
                else
                        gc_log(GC_LOG_INFO, "no checkpoint: starting with an empty ledger", NULL);
                goto finish;
        }
        c->cp_slot = slot;
        c->cp_generation = info.header.generation;
        /* Pods the first LIST does not show are closed (unless the watches replay), DRA
           shares before the checkpoint final: the mirror's rules. */
        gc_mirror_restored(c->mirror, info.header.written_at);
        for (int kind = 0; kind < CTL_KINDS; kind++) {
                const char *rv = gc_checkpoint_rv_of(&info.header, gc__ctl_kind_name(kind));

                if (!gc__ctl_resumes(kind))
                        continue;

                /* The ledger holds every effect up to rv: resume there, and until the watch
                   moves on, a new checkpoint keeps the same point. */
                gc_strlcpy(c->resume_rv[kind], rv ? rv : "", sizeof(c->resume_rv[kind]));
                gc_strlcpy(c->rv[kind], rv ? rv : "", sizeof(c->rv[kind]));
        }
        gc_time_format(info.header.written_at, when);
        if (refused)
                gc_diag_add(&c->diag,
                            "the newest checkpoint write was incomplete; the previous one (%s) was "
                            "restored and the watches replayed what followed it",
                            when);
        pthread_mutex_unlock(&c->mu);
        if (refused)
                gc_log(GC_LOG_WARN,
                       "the newest checkpoint generation is incomplete: restored the "
                       "previous one",
                       "error", err, "written_at", when, NULL);
        {
                char counts[128];

                snprintf(counts, sizeof(counts),
                         "%zu intervals, %zu open, %zu rollups; generation %llu in slot %zu",
                         info.header.usage, info.n_open, info.header.rollups,
                         (unsigned long long)info.header.generation, slot);
                gc_log(GC_LOG_INFO, "checkpoint restored", "written_at", when, "by",
                       info.header.controller, "records", counts, NULL);
        }
finish:
        gc_checkpoint_info_release(&info);
        for (size_t s = 0; s < G; s++) {
                for (size_t i = 0; chunks[s] && i < MAXC; i++)
                        free(chunks[s][i]);
                free(chunks[s]);
                free(lens[s]);
        }
        free(parts);
        if (r < 0 && r != -EIO)
                gc__ctl_fatal(c, "out of memory restoring the checkpoint");
        return r;
}

int gc__ctl_checkpoint_sync_generation(ctl *c)
{
        char name[GC_CHECKPOINT_NAME_MAX], err[256];
        gc_checkpoint_header h;
        int fetch_err;

        /* Chunk 0 goes last, so a chunk 0 of generation G means write G completed; a write that
           died later went into the other slot. The newest chunk 0 is the newest complete write. */
        for (size_t s = 0; s < GC_CHECKPOINT_GENERATIONS; s++) {
                size_t len = 0;
                char *data;

                gc_checkpoint_slot_name(s, 0, name);
                data = ctl__fetch(c, name, &len, &fetch_err, err, sizeof(err));
                if (fetch_err) {
                        gc__ctl_fatal_api(c, fetch_err, "cannot read the checkpoint ConfigMaps",
                                          "the Role must grant get on configmaps", err);
                        return fetch_err;
                }
                if (data && gc_checkpoint_peek(data, len, &h, NULL, 0) == 0 &&
                    (c->cp_slot == SIZE_MAX || h.generation > c->cp_generation)) {
                        c->cp_slot = s;
                        c->cp_generation = h.generation;
                }
                free(data);
        }
        return 0;
}

static int ctl__fold(ctl *c, int64_t now)
{
        gc_publish_opts po;
        int64_t keep_since, hourly_since;
        long forgot;
        int r, rc;

        /* History the reports within retention read stays whole (pkg/publish says how far). */
        gc_config_publish_opts(c->cfg, &po);
        if (gc_publish_history_since(&po, now, &keep_since) < 0)
                return -EINVAL;
        /* Claim-holding pods gone before the fold point: the accountant forgets them. */
        forgot = gc_account_dra_forget(c->acct, now - c->o->fold_after_s);
        if (forgot < 0)
                gc_log(GC_LOG_WARN, "cannot forget old DRA pods", "error", strerror((int)-forgot),
                       NULL);
        r = gc_ledger_fold(c->ledger, now - c->o->fold_after_s, keep_since);
        /* Older history keeps what whole periods need; it also frees rows a full fold wants. */
        rc = gc_publish_hourly_since(&po, now, c->o->hourly_history_s, &hourly_since);
        if (rc == 0)
                rc = gc_ledger_coarsen(c->ledger, hourly_since);
        return r < 0 ? r : rc < 0 ? rc : r;
}

/*
 * At the bound of folded history's rows a fold leaves its intervals unfolded: figures stay
 * exact, but intervals grow toward their own bound. Said loudly: an error log each hour, a
 * note in the reports, a counter in /metrics.
 */
static void ctl__fold_full(ctl *c, int64_t now)
{
        gc_ledger_stats st;
        char rows[32], bound[32];

        int64_t last = atomic_load(&c->fold_full_logged);

        atomic_fetch_add(&c->fold_failures, 1);
        if (last && now - last < 3600)
                return;
        pthread_mutex_lock(&c->mu);
        gc_ledger_stats_get(c->ledger, &st);
        if (!last)
                gc_diag_add(&c->diag,
                            "Folded history is at its bound of %lld rows (--max-history-rows): "
                            "pods that ended are no longer folded, so figures stay exact but "
                            "memory grows. Lower report.monthly_retention_months or raise the "
                            "bound with the memory request (docs/ledger.md).",
                            (long long)(c->o->max_history_rows ? c->o->max_history_rows
                                                               : GC_LEDGER_DEFAULT_LIMIT));
        pthread_mutex_unlock(&c->mu);
        atomic_store(&c->fold_full_logged, now);
        snprintf(rows, sizeof(rows), "%zu", st.rollup_rows);
        snprintf(
            bound, sizeof(bound), "%lld",
            (long long)(c->o->max_history_rows ? c->o->max_history_rows : GC_LEDGER_DEFAULT_LIMIT));
        gc_log(GC_LOG_ERROR,
               "folded history is full: intervals are no longer folded; lower "
               "report.monthly_retention_months or raise --max-history-rows",
               "rollup_rows", rows, "bound", bound, NULL);
}

void gc__ctl_checkpoint_fold(ctl *c, int64_t now)
{
        int r;

        pthread_mutex_lock(&c->mu);
        r = ctl__fold(c, now);
        pthread_mutex_unlock(&c->mu);
        if (r == -E2BIG)
                ctl__fold_full(c, now);
        else if (r < 0)
                gc_log(GC_LOG_WARN, "fold failed", "error", strerror(-r), NULL);
}

/* Fault injection for the e2e tests: a real SIGKILL at a real point of a write. */
static void ctl__maybe_die(const ctl *c, size_t written, size_t total)
{
        char what[64];

        if (c->o->test_kill_after_chunks <= 0 || (int64_t)written != c->o->test_kill_after_chunks)
                return;
        snprintf(what, sizeof(what), "%zu of %zu", written, total);
        gc_log(GC_LOG_WARN, "test: killing myself mid-checkpoint", "written", what, NULL);
        raise(SIGKILL);
}

/*
 * Deletes the checkpoint ConfigMaps no generation needs: version 1 chunks 1.. of the slot just
 * written (its manifest replaced them), and parts named neither by the manifest just written nor
 * by the other slot's. When the other slot cannot be read, no part is deleted.
 */
static void ctl__collect_garbage(ctl *c, size_t slot, const gc_checkpoint_write *w, char **existing,
                                 size_t n_existing)
{
        enum { MAXP = GC_CHECKPOINT_MAX_PARTS };
        char(*keep)[GC_CHECKPOINT_NAME_MAX] = calloc(2 * MAXP, sizeof(*keep));
        char name[GC_CHECKPOINT_NAME_MAX], err[512];
        size_t n_keep = 0, n_other = 0, len = 0;
        char *other;
        int fetch_err, parts_ok = 0;

        if (!keep)
                return;
        for (size_t i = 0; i < w->n_parts; i++)
                gc_strlcpy(keep[n_keep++], w->parts[i].name, sizeof(keep[0]));
        gc_checkpoint_slot_name(slot == 0 ? 1 : 0, 0, name);
        other = ctl__fetch(c, name, &len, &fetch_err, err, sizeof(err));
        if (!fetch_err && (!other || gc_checkpoint_manifest_parts(other, len, keep + n_keep, MAXP,
                                                                  &n_other) == 0)) {
                n_keep += n_other;
                parts_ok = 1;
        }
        free(other);
        for (size_t i = 0; i < n_existing; i++) {
                int drop = (parts_ok || !gc_checkpoint_is_part_name(existing[i])) &&
                           gc_checkpoint_is_garbage(existing[i], slot, keep, n_keep);

                if (drop &&
                    gc_kube_configmap_delete(c->kw, c->ns, existing[i], err, sizeof(err)) < 0)
                        gc_log(GC_LOG_WARN, "cannot delete an old checkpoint chunk", "configmap",
                               existing[i], "error", err, NULL);
        }
        free(keep);
}

int gc__ctl_checkpoint_save(ctl *c)
{
        gc_checkpoint_write w;
        int64_t now = gc__ctl_now();
        char err[512], name[GC_CHECKPOINT_NAME_MAX];
        char **existing = NULL;
        size_t n_existing = 0, n_rvs = 0, n_put = 0;
        gc_checkpoint_rv rvs[CTL_KINDS];
        gc_checkpoint_meta meta;
        /* Never the slot of the newest complete write: a write that dies leaves it whole. */
        size_t slot = c->cp_slot == 0 ? 1 : 0;
        unsigned char *put = NULL;
        int r, folded;

        memset(&w, 0, sizeof(w));
        memset(rvs, 0, sizeof(rvs));
        pthread_mutex_lock(&c->mu);
        folded = ctl__fold(c, now);
        /* The resume points under the same lock as the ledger: of one moment. */
        for (int kind = 0; kind < CTL_KINDS; kind++) {
                if (!gc__ctl_resumes(kind) || !c->rv[kind][0])
                        continue;
                gc_strlcpy(rvs[n_rvs].resource, gc__ctl_kind_name(kind),
                           sizeof(rvs[n_rvs].resource));
                gc_strlcpy(rvs[n_rvs].rv, c->rv[kind], sizeof(rvs[n_rvs].rv));
                n_rvs++;
        }
        meta.rvs = rvs;
        meta.n_rvs = n_rvs;
        meta.generation = c->cp_generation + 1;
        r = gc_checkpoint_encode_incr(c->ledger, now, c->o->id, &meta,
                                      (size_t)c->o->checkpoint_chunk_bytes, &w, err, sizeof(err));
        pthread_mutex_unlock(&c->mu);
        if (folded == -E2BIG)
                ctl__fold_full(c, now);
        else if (folded < 0)
                gc_log(GC_LOG_WARN, "fold failed", "error", strerror(-folded), NULL);
        if (r < 0) {
                atomic_fetch_add(&c->checkpoint_errors, 1);
                gc_log(GC_LOG_ERROR, "cannot encode the checkpoint", "error", err, NULL);
                return r;
        }
        /* A part whose name exists holds that content: only the others are written. When the
           list fails, every part is written. */
        if (gc_kube_configmap_list(c->kw, c->ns, "gpu-cost.io/kind=checkpoint", &existing,
                                   &n_existing, err, sizeof(err)) < 0) {
                existing = NULL;
                n_existing = 0;
        }
        put = gc_checkpoint_parts_to_put(&w, (const char *const *)existing, n_existing, &n_put);
        if (!put) {
                r = -ENOMEM;
                goto finish;
        }
        /* Parts first, the manifest last: a restore reads the manifest, and a manifest is only
           there once every part it names is. The fault injection counts the write's ConfigMaps
           in this order whether a part was put or was there already: "after k of n" is the
           same point of a write as with version 1 (n = the manifest's "of"). */
        for (size_t i = 0; i <= w.n_parts; i++) {
                const char *value = i < w.n_parts ? w.parts[i].data.data : w.manifest.data;
                gc_kube_kv data = {GC_CHECKPOINT_KEY, value};

                if (i < w.n_parts && !put[i]) {
                        ctl__maybe_die(c, i + 1, w.n_parts + 1);
                        continue;
                }
                if (i < w.n_parts)
                        gc_strlcpy(name, w.parts[i].name, sizeof(name));
                else
                        gc_checkpoint_slot_name(slot, 0, name);
                r = gc_kube_configmap_put(c->kw, c->ns, name, ctl__checkpoint_labels, 2, &data, 1,
                                          err, sizeof(err));
                if (r < 0) {
                        atomic_fetch_add(&c->checkpoint_errors, 1);
                        gc_log(GC_LOG_ERROR, "cannot write the checkpoint", "configmap", name,
                               "error", err, NULL);
                        goto finish;
                }
                ctl__maybe_die(c, i + 1, w.n_parts + 1);
        }
        atomic_store(&c->checkpoint_at, (long)now);
        c->cp_slot = slot;
        c->cp_generation = meta.generation;
        ctl__collect_garbage(c, slot, &w, existing, n_existing);
        {
                char what[128];

                snprintf(what, sizeof(what), "generation %llu in slot %zu, %zu parts, %zu written",
                         (unsigned long long)meta.generation, slot, w.n_parts, n_put);
                gc_log(GC_LOG_DEBUG, "checkpoint written", "detail", what, NULL);
        }
finish:
        for (size_t i = 0; i < n_existing; i++)
                free(existing[i]);
        free(existing);
        free(put);
        gc_checkpoint_write_release(&w);
        return r;
}
