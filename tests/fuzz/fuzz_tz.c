/* fuzz_tz: any bytes as a TZif file: refused, or a zone whose offsets and days stay in bounds:
 * each instant near its own local day of a plausible length, its month and earlier weeks before
 * it, a day's start the start of its own day. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "tz/tz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const int64_t probes[] = {INT64_MIN,   -2208988800, 0,          1774746000,
                                         1792011600,  1796083200,  2147483647, 4102444800,
                                         64060588800, INT64_MAX};
        gc_tz *z = NULL;

        if (gc_tz_parse("Fuzz/Zone", data, size, &z) < 0) {
                if (z)
                        __builtin_trap();
                return 0;
        }
        for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
                int64_t t = probes[i], d, s, e, n;
                int32_t off = gc_tz_offset(z, t);
                char date[16];
                int wd;

                if (off < -GC_TZ_MAX_OFF || off > GC_TZ_MAX_OFF)
                        __builtin_trap();
                n = gc_tz_next_change(z, t);
                if (n != INT64_MAX && n <= t)
                        __builtin_trap();
                d = gc_tz_day_of(z, t);
                s = gc_tz_day_start(z, d);
                e = gc_tz_day_start(z, d + 1);
                gc_tz_date(z, t, date, &wd);
                if (wd < 0 || wd > 6)
                        __builtin_trap();
                /* Within the calendar's range: t lies near its own local day (a transition
                   that sets the clock back across midnight repeats part of a date, so only
                   within two of the largest offsets), which is a day give or take two such
                   offsets long, and its month and a week three weeks back start before it.
                   (The probes at the int64 ends saturate.) */
                if (t > -INT64_C(100000000000) && t < INT64_C(100000000000)) {
                        int64_t m = gc_tz_period_start(z, GC_TZ_MONTH, t);
                        int64_t w = gc_tz_period_add(z, GC_TZ_WEEK, t, -3);

                        if (s > t + 2 * GC_TZ_MAX_OFF || t >= e + 2 * GC_TZ_MAX_OFF ||
                            e - s < 86400 - 2 * GC_TZ_MAX_OFF ||
                            e - s > 86400 + 2 * GC_TZ_MAX_OFF || m > t || w > t ||
                            gc_tz_day_start(z, gc_tz_day_of(z, s)) != s)
                                __builtin_trap();
                }
        }
        gc_tz_free(z);
        return 0;
}
