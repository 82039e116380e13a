/* usage_io: measured GPU use (dcgm-exporter, Prometheus) and the advisor's latest findings. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_int.h"
#include "log.h"

/*
 * The state is behind its own lock, never c->mu: the snapshot builder calls in here while it
 * holds c->mu, and the usage thread must not wait on the informers.
 */
struct ctl_usage {
        pthread_mutex_t mu;
        char *advice_json; /* the advisor's latest document; NULL before it ran */
        gc_api_finding_stat *stats;
        size_t n_stats;
        int64_t fetched_at; /* last successful fetch */
        long errors;
        uint64_t samples;
};

int ctl_usage_start(ctl *c)
{
        struct ctl_usage *u = calloc(1, sizeof(*u));

        if (!u)
                return -ENOMEM;
        pthread_mutex_init(&u->mu, NULL);
        c->usage = u;
        return 0;
}

void ctl_usage_stop(ctl *c)
{
        struct ctl_usage *u = c->usage;

        if (!u)
                return;
        c->usage = NULL;
        free(u->advice_json);
        free(u->stats);
        pthread_mutex_destroy(&u->mu);
        free(u);
}

void ctl_usage_for_snapshot(ctl *c, char **ret_json, gc_api_finding_stat **ret_stats, size_t *ret_n)
{
        struct ctl_usage *u = c->usage;
        gc_api_finding_stat *stats = NULL;
        char *json = NULL;
        size_t n = 0;

        if (u) {
                pthread_mutex_lock(&u->mu);
                if (u->advice_json) {
                        json = strdup(u->advice_json);
                        if (json && u->n_stats) {
                                stats = malloc(u->n_stats * sizeof(*stats));
                                if (stats) {
                                        memcpy(stats, u->stats, u->n_stats * sizeof(*stats));
                                        n = u->n_stats;
                                }
                        }
                }
                pthread_mutex_unlock(&u->mu);
        }
        *ret_json = json;
        *ret_stats = stats;
        *ret_n = n;
}

void ctl_usage_pod(ctl *c, const char *ns, const char *name, double *ret_mean, double *ret_p95,
                   double *ret_peak_mib, uint64_t *ret_samples)
{
        (void)c;
        (void)ns;
        (void)name;
        *ret_mean = NAN;
        *ret_p95 = NAN;
        *ret_peak_mib = NAN;
        *ret_samples = 0;
}

void ctl_usage_health(ctl *c, gc_api_health *h)
{
        struct ctl_usage *u = c->usage;

        if (!u)
                return;
        pthread_mutex_lock(&u->mu);
        h->usage_at = u->fetched_at;
        h->usage_errors = u->errors;
        h->usage_samples = u->samples;
        pthread_mutex_unlock(&u->mu);
}
