/* common: what every file of the controller uses: clocks, the fatal stop, the watched kinds'
 * names, the ledger as the controller keeps it. It calls none of the others. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "controller_int.h"

int64_t gc__ctl_now(void)
{
        return (int64_t)time(NULL);
}

int64_t gc__ctl_mono(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec;
}

static const char *const ctl__kind_names[CTL_KINDS] = {
    "namespaces",     "nodes",         "pods",        "resourceslices",
    "resourceclaims", "deviceclasses", "replicasets", "jobs"};

const char *gc__ctl_kind_name(int kind)
{
        return kind >= 0 && kind < CTL_KINDS ? ctl__kind_names[kind] : "?";
}
int gc__ctl_resumes(int kind)
{
        return (kind >= 0 && kind < CTL_RESUMED) || kind == CTL_CLAIMS;
}

void gc__ctl_fatal(ctl *c, const char *msg)
{
        int expected = 0;

        if (atomic_compare_exchange_strong(&c->fatal, &expected, 1))
                gc_strlcpy(c->fatal_msg, msg, sizeof(c->fatal_msg));
        c->inf_stop = 1;
        for (int i = 0; i < CTL_KINDS; i++)
                c->inf[i].wake = 1;
}

/* Which credential the API server refused with a 401, and what usually makes it refuse it. */
static const char *ctl__credential_hint(const ctl *c)
{
        if (c->kcfg.client_cert_file || c->kcfg.client_cert_data)
                return "the kubeconfig's client certificate was refused: is it signed by a CA in "
                       "kube-apiserver's --client-ca-file, and still valid?";
        if (c->kcfg.token_file)
                return "the token file's token was refused: expired, revoked, or its "
                       "ServiceAccount deleted?";
        if (c->kcfg.token)
                return "the kubeconfig's token was refused: expired or revoked?";
        return "no credential was given (the kubeconfig has no token nor client certificate)";
}

void gc__ctl_fatal_api(ctl *c, int r, const char *what, const char *grant, const char *cause)
{
        char msg[sizeof(c->fatal_msg)];

        if (r == -EKEYREJECTED)
                gc_errf(msg, sizeof(msg),
                        "%s: the API server does not accept the controller's credentials "
                        "(HTTP 401): %s",
                        what, ctl__credential_hint(c));
        else if (r == -EACCES)
                gc_errf(msg, sizeof(msg), "%s: forbidden (HTTP 403): %s", what,
                        grant ? grant : "check the roles bound to the controller");
        else
                gc_errf(msg, sizeof(msg), "%s: %s", what,
                        cause && cause[0] ? cause : strerror(r < 0 ? -r : EIO));
        gc__ctl_fatal(c, msg);
}

int64_t gc__ctl_fold_bucket(const gc_config *cfg)
{
        /* From 1972, when the last zones left offsets in seconds, to the far future. */
        return gc_tz_granularity(cfg->tz, 63072000, INT64_MAX);
}

gc_ledger *gc__ctl_ledger_new(const ctl *c)
{
        gc_ledger_opts lo;

        memset(&lo, 0, sizeof(lo));
        lo.pool = c->pool;
        lo.bucket_s = gc__ctl_fold_bucket(c->cfg);
        lo.max_rollup_rows = (size_t)c->o->max_history_rows; /* 0: the ledger's default */
        /* Period history follows the reports' calendar and names at least their top pods. */
        lo.tz = c->cfg->tz;
        lo.top_n = c->cfg->top_n > GC_LEDGER_DEFAULT_TOP_N ? c->cfg->top_n : 0;
        if (lo.top_n > GC_LEDGER_MAX_TOP_N)
                lo.top_n = GC_LEDGER_MAX_TOP_N;
        lo.label_keys = c->cfg->label_keys;
        lo.n_label_keys = c->cfg->n_label_keys;
        return gc_ledger_new(&lo);
}
