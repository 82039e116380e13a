/* window: the time windows and steps the API's query parameters name. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api.h"

#define GC__DAY        ((int64_t)86400)
#define GC__MAX_OFFSET ((int64_t)18 * 3600)
#define GC__TIME_MAX   ((int64_t)253402300799) /* 9999-12-31T23:59:59Z */

static int gc__err(char *err, size_t errlen, const char *msg)
{
        if (err && errlen)
                snprintf(err, errlen, "%s", msg);
        return -EINVAL;
}

/* One end of a pair: unix seconds (digits only) or RFC 3339. */
static int gc__instant(const char *s, size_t n, int64_t *ret)
{
        char tmp[64];
        int64_t v;

        if (n == 0 || n >= sizeof(tmp))
                return -EINVAL;
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        if (strspn(tmp, "0123456789") == n) {
                if (gc_parse_int64(tmp, &v) < 0 || v > GC__TIME_MAX)
                        return -EINVAL;
                *ret = v;
                return 0;
        }
        if (gc_time_parse(tmp, n, &v) < 0 || v < 0 || v > GC__TIME_MAX)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* Named windows: local days, ISO weeks and calendar months in the zone. */
static int gc__named(const char *s, int64_t now, const gc_tz *tz, int64_t *ret_start,
                     int64_t *ret_end)
{
        gc_tz_unit u;
        int last;

        if (strcmp(s, "today") == 0 || strcmp(s, "yesterday") == 0)
                u = GC_TZ_DAY;
        else if (strcmp(s, "week") == 0 || strcmp(s, "lastweek") == 0)
                u = GC_TZ_WEEK;
        else if (strcmp(s, "month") == 0 || strcmp(s, "lastmonth") == 0)
                u = GC_TZ_MONTH;
        else
                return -ENOENT;
        last = strcmp(s, "yesterday") == 0 || strncmp(s, "last", 4) == 0;
        if (last) {
                *ret_start = gc_tz_period_add(tz, u, now, -1);
                *ret_end = gc_tz_period_start(tz, u, now);
        } else {
                *ret_start = gc_tz_period_start(tz, u, now);
                *ret_end = now;
        }
        return 0;
}

int gc_api_window_parse(const char *s, int64_t now, int64_t utc_offset_s, int64_t *ret_start,
                        int64_t *ret_end, char *err, size_t errlen)
{
        gc_tz *z = NULL;
        int r;

        if (utc_offset_s < -GC__MAX_OFFSET || utc_offset_s > GC__MAX_OFFSET ||
            gc_tz_fixed((int32_t)utc_offset_s, &z) < 0)
                return gc__err(err, errlen, "internal: bad time or offset");
        r = gc_api_window_parse_tz(s, now, z, ret_start, ret_end, err, errlen);
        gc_tz_free(z);
        return r;
}

int gc_api_window_parse_tz(const char *s, int64_t now, const gc_tz *tz, int64_t *ret_start,
                           int64_t *ret_end, char *err, size_t errlen)
{
        int64_t start, end, d;
        const char *comma;

        if (now < 0 || now > GC__TIME_MAX)
                return gc__err(err, errlen, "internal: bad time or offset");
        if (!s || !*s)
                return gc__err(err, errlen,
                               "empty: give a duration (7d), today, yesterday, "
                               "week, lastweek, month, lastmonth or start,end");
        comma = strchr(s, ',');
        if (comma) {
                if (gc__instant(s, (size_t)(comma - s), &start) < 0)
                        return gc__err(err, errlen, "start: not an RFC 3339 time or unix seconds");
                if (gc__instant(comma + 1, strlen(comma + 1), &end) < 0)
                        return gc__err(err, errlen, "end: not an RFC 3339 time or unix seconds");
                if (end <= start)
                        return gc__err(err, errlen, "end must be after start");
        } else if (gc__named(s, now, tz, &start, &end) == 0) {
                if (end <= start) /* "today" at exactly 00:00: an empty window */
                        return gc__err(err, errlen, "empty: the period has just begun");
        } else if (gc_duration_parse(s, &d) == 0) {
                if (d <= 0)
                        return gc__err(err, errlen, "duration must be positive");
                if (d > GC_API_MAX_WINDOW_S)
                        return gc__err(err, errlen, "longer than 400 days");
                end = now;
                start = now - d;
                if (start < 0)
                        return gc__err(err, errlen, "starts before 1970");
        } else {
                return gc__err(err, errlen,
                               "not a duration (30m, 12h, 7d), today, yesterday, "
                               "week, lastweek, month, lastmonth or start,end");
        }
        if (end - start > GC_API_MAX_WINDOW_S)
                return gc__err(err, errlen, "longer than 400 days");
        *ret_start = start;
        *ret_end = end;
        return 0;
}

int gc_api_step_parse(const char *s, int64_t start, int64_t end, int64_t *ret_step, char *err,
                      size_t errlen)
{
        int64_t d;

        if (!s || gc_duration_parse(s, &d) < 0)
                return gc__err(err, errlen, "not a duration (1h, 1d, 1w)");
        if (d <= 0)
                return gc__err(err, errlen, "must be positive");
        if (end > start && (end - start + d - 1) / d > GC_API_MAX_SETS)
                return gc__err(err, errlen, "more than 1000 steps in the window");
        *ret_step = d;
        return 0;
}
