/* chargeback: the shares of idle capacity and unattributed spend each team's bill carries. */
#include "ledger.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const gc__cb_names[] = {"none", "proportional", "weights"};

const char *gc_chargeback_mode_name(gc_chargeback_mode m)
{
        return (unsigned)m < sizeof(gc__cb_names) / sizeof(gc__cb_names[0]) ? gc__cb_names[m]
                                                                            : NULL;
}

int gc_chargeback_mode_parse(const char *s, gc_chargeback_mode *ret)
{
        if (!s || !ret)
                return -EINVAL;
        for (size_t i = 0; i < sizeof(gc__cb_names) / sizeof(gc__cb_names[0]); i++)
                if (strcmp(s, gc__cb_names[i]) == 0) {
                        *ret = (gc_chargeback_mode)i;
                        return 0;
                }
        return -EINVAL;
}

static int gc__cb_unattributed(const char *team)
{
        return !team || strcmp(team, GC_UNATTRIBUTED) == 0;
}

static int gc__cb_has_team(const gc_cost_summary *s)
{
        for (size_t i = 0; i < s->n_by; i++)
                if (s->by[i] == GC_DIM_TEAM)
                        return 1;
        return 0;
}

static double gc__cb_weight(const gc_chargeback *c, const char *team)
{
        for (size_t i = 0; i < c->n_weights; i++)
                if (c->weights[i].team && strcmp(c->weights[i].team, team) == 0)
                        return c->weights[i].weight;
        return 0;
}

/*
 * A team's spend and weight, summed over its rows: teams are few, rows many, so the rows are
 * walked once per distinct team found (rows of one team are not adjacent: they sort by cost).
 */
int gc_chargeback_ratios(const gc_cost_summary *s, const gc_chargeback *c, double *ret_ratio,
                         double *ret_pool)
{
        double pool, spent = 0, weighed = 0;
        double *team_cost = NULL; /* per row: the spend of the row's team */
        int use_weights;

        if (!s || !c || !ret_pool || (s->n_rows && (!ret_ratio || !s->rows)) ||
            (unsigned)c->mode > GC_CHARGEBACK_WEIGHTS || c->n_weights > GC_CHARGEBACK_MAX_WEIGHTS ||
            (c->n_weights && !c->weights))
                return -EINVAL;
        for (size_t i = 0; i < c->n_weights; i++)
                if (!c->weights[i].team || !isfinite(c->weights[i].weight) ||
                    c->weights[i].weight <= 0)
                        return -EINVAL;
        if (c->mode != GC_CHARGEBACK_NONE && !gc__cb_has_team(s))
                return -EINVAL;
        for (size_t i = 0; i < s->n_rows; i++)
                ret_ratio[i] = 0;
        *ret_pool = 0;
        if (c->mode == GC_CHARGEBACK_NONE || s->n_rows == 0)
                return 0;

        team_cost = calloc(s->n_rows, sizeof(*team_cost));
        if (!team_cost)
                return -ENOMEM;
        pool = s->idle.cost;
        for (size_t i = 0; i < s->n_rows; i++) {
                const char *t = s->rows[i].keys[GC_DIM_TEAM];

                if (gc__cb_unattributed(t)) {
                        pool += s->rows[i].cost;
                        continue;
                }
                spent += s->rows[i].cost;
                if (team_cost[i] > 0)
                        continue; /* its team was summed already */
                double sum = 0;
                for (size_t j = i; j < s->n_rows; j++)
                        if (s->rows[j].keys[GC_DIM_TEAM] &&
                            strcmp(s->rows[j].keys[GC_DIM_TEAM], t) == 0)
                                sum += s->rows[j].cost;
                for (size_t j = i; j < s->n_rows; j++)
                        if (s->rows[j].keys[GC_DIM_TEAM] &&
                            strcmp(s->rows[j].keys[GC_DIM_TEAM], t) == 0)
                                team_cost[j] = sum > 0 ? sum : -1; /* -1: summed, nothing spent */
                if (c->mode == GC_CHARGEBACK_WEIGHTS && sum > 0)
                        weighed += gc__cb_weight(c, t);
        }
        if (spent <= 0 || pool <= 0) {
                free(team_cost);
                return 0; /* no team to carry it, or nothing to carry */
        }
        use_weights = c->mode == GC_CHARGEBACK_WEIGHTS && weighed > 0;
        for (size_t i = 0; i < s->n_rows; i++) {
                const gc_cost_row *row = &s->rows[i];
                double team_frac;

                if (gc__cb_unattributed(row->keys[GC_DIM_TEAM]) || team_cost[i] <= 0)
                        continue;
                team_frac = use_weights ? gc__cb_weight(c, row->keys[GC_DIM_TEAM]) / weighed
                                        : team_cost[i] / spent;
                ret_ratio[i] = team_frac * row->cost / team_cost[i];
        }
        free(team_cost);
        *ret_pool = pool;
        return 0;
}
