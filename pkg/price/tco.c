/* tco: the cost of owning a GPU per productive GPU-hour, and the utilization where owning wins. */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "price.h"

#define GC__HOURS_PER_YEAR 8760.0

typedef enum gc__bound {
        GC__GE0,  /* >= 0 */
        GC__GT0,  /* > 0 */
        GC__UNIT, /* (0, 1] */
        GC__GE1,  /* >= 1 */
} gc__bound;

/* Written as positive tests so that NaN fails every one of them. */
static int gc__in_bound(double v, gc__bound b)
{
        if (!isfinite(v))
                return 0;
        switch (b) {
        case GC__GE0:
                return v >= 0;
        case GC__GT0:
                return v > 0;
        case GC__UNIT:
                return v > 0 && v <= 1;
        case GC__GE1:
                return v >= 1;
        }
        return 0;
}

static const char *gc__bound_text(gc__bound b)
{
        switch (b) {
        case GC__GE0:
                return "must be a number >= 0";
        case GC__GT0:
                return "must be a number > 0";
        case GC__UNIT:
                return "must be in (0, 1]";
        case GC__GE1:
                return "must be a number >= 1";
        }
        return "out of range";
}

int gc_tco_compute(const gc_tco_inputs *in, gc_tco_result *ret, char *err, size_t errlen)
{
        const struct {
                const char *name;
                double v;
                gc__bound b;
        } checks[] = {
            {"node_price", in ? in->node_price : 0, GC__GE0},
            {"gpus_per_node", in ? in->gpus_per_node : 0, GC__GT0},
            {"years", in ? in->years : 0, GC__GT0},
            {"utilization", in ? in->utilization : 0, GC__UNIT},
            {"cluster_gpus", in ? in->cluster_gpus : 0, GC__GT0},
            {"ftes", in ? in->ftes : 0, GC__GE0},
            {"fte_cost", in ? in->fte_cost : 0, GC__GE0},
            {"kw_per_gpu", in ? in->kw_per_gpu : 0, GC__GE0},
            {"pue", in ? in->pue : 0, GC__GE1},
            {"price_per_kwh", in ? in->price_per_kwh : 0, GC__GE0},
            {"network_per_gpu_hour", in ? in->network_per_gpu_hour : 0, GC__GE0},
        };
        gc_tco_result r;
        double productive_hours;

        if (!in || !ret)
                return -EINVAL;
        for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
                if (!gc__in_bound(checks[i].v, checks[i].b)) {
                        if (err && errlen)
                                snprintf(err, errlen, "%s: %s", checks[i].name,
                                         gc__bound_text(checks[i].b));
                        return -EINVAL;
                }
        }
        productive_hours = GC__HOURS_PER_YEAR * in->utilization;
        r.hardware_per_hour = in->node_price / in->gpus_per_node / in->years / productive_hours;
        r.operations_per_hour = in->ftes * in->fte_cost / (in->cluster_gpus * productive_hours);
        r.power_per_hour =
            in->kw_per_gpu * GC__HOURS_PER_YEAR * in->pue * in->price_per_kwh / productive_hours;
        r.network_per_hour = in->network_per_gpu_hour;
        r.cost_per_productive_gpu_hour =
            r.hardware_per_hour + r.operations_per_hour + r.power_per_hour + r.network_per_hour;
        /* Owned hardware costs the same busy or idle, so a year costs every productive hour. */
        r.annual_cost_per_gpu = r.cost_per_productive_gpu_hour * productive_hours;
        /* Huge but finite inputs can still overflow; report it rather than return inf. */
        if (!isfinite(r.annual_cost_per_gpu)) {
                if (err && errlen)
                        snprintf(err, errlen, "tco: the inputs overflow a double");
                return -ERANGE;
        }
        *ret = r;
        return 0;
}

int gc_tco_break_even(double annual_cost_per_gpu, double cloud_usd_per_gpu_hour,
                      double *ret_utilization)
{
        double u;

        if (!ret_utilization || !gc__in_bound(annual_cost_per_gpu, GC__GE0) ||
            !gc__in_bound(cloud_usd_per_gpu_hour, GC__GT0))
                return -EINVAL;
        u = annual_cost_per_gpu / (GC__HOURS_PER_YEAR * cloud_usd_per_gpu_hour);
        if (!isfinite(u))
                return -ERANGE;
        *ret_utilization = u;
        return 0;
}
