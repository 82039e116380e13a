/* tz: a bounded TZif (RFC 8536) reader with its POSIX TZ footer, and local days, weeks, months. */
#include "tz.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"

#define GC_TZ__DAY       ((int64_t)86400)
#define GC_TZ__HDR       44
#define GC_TZ__T_LIMIT   ((int64_t)1 << 45) /* times are clamped to +-1.1 million years */
#define GC_TZ__MAX_FIXED (18 * 3600)
#define GC_TZ__MAX_RULE  (167 * 3600) /* a rule's time of day, RFC 8536 section 3.3.1 */
#define GC_TZ__MAX_STEPS 64           /* changes walked to find one day's start */

/* A POSIX TZ rule date: Jn (1-365, no 29 Feb), n (0-365), or Mm.w.d; then a time of day. */
typedef struct gc_tz__date {
        char kind; /* 'J', 'D' or 'M' */
        int a, b, c;
        int32_t time; /* seconds after local midnight, may be negative or past 24 h */
} gc_tz__date;

struct gc_tz {
        char name[GC_TZ_NAME_MAX];
        size_t n_trans;
        int64_t *trans; /* ascending */
        uint8_t *idx;   /* type of each transition */
        size_t n_types;
        int32_t *utoff;
        int has_footer;           /* a TZ string rules times after the last transition */
        int footer_dst;           /* ... and it has daylight saving time */
        int32_t std_off, dst_off; /* the footer's offsets, east of UTC */
        gc_tz__date start, end;   /* when daylight saving time starts and ends */
};

static int64_t gc_tz__clamp(int64_t t)
{
        return t < -GC_TZ__T_LIMIT ? -GC_TZ__T_LIMIT : t > GC_TZ__T_LIMIT ? GC_TZ__T_LIMIT : t;
}

int gc_tz_name_valid(const char *name)
{
        size_t n;

        if (!name)
                return 0;
        n = strlen(name);
        if (n == 0 || n >= GC_TZ_NAME_MAX || name[0] == '/' || name[n - 1] == '/' ||
            strstr(name, ".."))
                return 0;
        for (size_t i = 0; i < n; i++) {
                char c = name[i];

                if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '+' || c == '-' || c == '/'))
                        return 0;
        }
        return 1;
}

gc_tz *gc_tz_free(gc_tz *z)
{
        if (!z)
                return NULL;
        free(z->trans);
        free(z->idx);
        free(z->utoff);
        free(z);
        return NULL;
}

const char *gc_tz_name(const gc_tz *z)
{
        return z ? z->name : "UTC";
}

/* ---- the footer's POSIX TZ string ------------------------------------------------------------ */

typedef struct gc_tz__cur {
        const char *p, *end;
} gc_tz__cur;

static int gc_tz__peek(const gc_tz__cur *c)
{
        return c->p < c->end ? (unsigned char)*c->p : -1;
}

static int gc_tz__num(gc_tz__cur *c, int max, int *ret)
{
        int v = 0, n = 0;

        while (gc_tz__peek(c) >= '0' && gc_tz__peek(c) <= '9') {
                v = v * 10 + (*c->p++ - '0');
                if (++n > 3 || v > max)
                        return -EINVAL;
        }
        if (n == 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* A zone abbreviation: three or more letters, or <...> of letters, digits, '+' and '-'. */
static int gc_tz__abbr(gc_tz__cur *c)
{
        size_t n = 0;

        if (gc_tz__peek(c) == '<') {
                c->p++;
                while (c->p < c->end && *c->p != '>') {
                        char ch = *c->p++;

                        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                              (ch >= '0' && ch <= '9') || ch == '+' || ch == '-'))
                                return -EINVAL;
                        n++;
                }
                if (gc_tz__peek(c) != '>')
                        return -EINVAL;
                c->p++;
        } else {
                while ((gc_tz__peek(c) >= 'A' && gc_tz__peek(c) <= 'Z') ||
                       (gc_tz__peek(c) >= 'a' && gc_tz__peek(c) <= 'z')) {
                        c->p++;
                        n++;
                }
        }
        return n >= 3 ? 0 : -EINVAL;
}

/* [+-]hh[:mm[:ss]] with hh at most max_h; the value as written (POSIX: west of UTC positive). */
static int gc_tz__hms(gc_tz__cur *c, int max_h, int32_t *ret)
{
        int sign = 1, h, m = 0, s = 0;

        if (gc_tz__peek(c) == '+' || gc_tz__peek(c) == '-')
                sign = *c->p++ == '-' ? -1 : 1;
        if (gc_tz__num(c, max_h, &h) < 0)
                return -EINVAL;
        if (gc_tz__peek(c) == ':') {
                c->p++;
                if (gc_tz__num(c, 59, &m) < 0)
                        return -EINVAL;
                if (gc_tz__peek(c) == ':') {
                        c->p++;
                        if (gc_tz__num(c, 59, &s) < 0)
                                return -EINVAL;
                }
        }
        *ret = sign * (h * 3600 + m * 60 + s);
        return 0;
}

static int gc_tz__rule_date(gc_tz__cur *c, gc_tz__date *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->time = 2 * 3600;
        if (gc_tz__peek(c) == 'J') {
                c->p++;
                ret->kind = 'J';
                if (gc_tz__num(c, 365, &ret->a) < 0 || ret->a < 1)
                        return -EINVAL;
        } else if (gc_tz__peek(c) == 'M') {
                c->p++;
                ret->kind = 'M';
                if (gc_tz__num(c, 12, &ret->a) < 0 || ret->a < 1 || gc_tz__peek(c) != '.')
                        return -EINVAL;
                c->p++;
                if (gc_tz__num(c, 5, &ret->b) < 0 || ret->b < 1 || gc_tz__peek(c) != '.')
                        return -EINVAL;
                c->p++;
                if (gc_tz__num(c, 6, &ret->c) < 0)
                        return -EINVAL;
        } else {
                ret->kind = 'D';
                if (gc_tz__num(c, 365, &ret->a) < 0)
                        return -EINVAL;
        }
        if (gc_tz__peek(c) == '/') {
                c->p++;
                if (gc_tz__hms(c, 167, &ret->time) < 0)
                        return -EINVAL;
        }
        return 0;
}

/* "CET-1CEST,M3.5.0,M10.5.0/3", "<+0545>-5:45", or empty (no rule). */
static int gc_tz__footer(gc_tz *z, const char *s, size_t n)
{
        gc_tz__cur c = {s, s + n};
        int32_t v;

        if (n == 0)
                return 0;
        if (gc_tz__abbr(&c) < 0 || gc_tz__hms(&c, 24, &v) < 0)
                return -EINVAL;
        z->std_off = -v;
        z->has_footer = 1;
        if (c.p == c.end)
                return 0;
        if (gc_tz__abbr(&c) < 0)
                return -EINVAL;
        z->dst_off = z->std_off + 3600;
        if (gc_tz__peek(&c) != ',') {
                if (gc_tz__hms(&c, 24, &v) < 0)
                        return -EINVAL;
                z->dst_off = -v;
        }
        /* Daylight saving time without its rule is POSIX's guess; TZif footers always say. */
        if (gc_tz__peek(&c) != ',')
                return -EINVAL;
        c.p++;
        if (gc_tz__rule_date(&c, &z->start) < 0 || gc_tz__peek(&c) != ',')
                return -EINVAL;
        c.p++;
        if (gc_tz__rule_date(&c, &z->end) < 0 || c.p != c.end)
                return -EINVAL;
        z->footer_dst = 1;
        return 0;
}

/* The day (since the epoch) a rule date falls on in year y. */
static int64_t gc_tz__rule_day(const gc_tz__date *d, int64_t y)
{
        int64_t jan1 = gc_days_from_civil(y, 1, 1);
        int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

        if (d->kind == 'J')
                return jan1 + d->a - 1 + (leap && d->a >= 60);
        if (d->kind == 'D')
                return jan1 + d->a;
        {
                int64_t first = gc_days_from_civil(y, (unsigned)d->a, 1);
                int64_t next = d->a == 12 ? gc_days_from_civil(y + 1, 1, 1)
                                          : gc_days_from_civil(y, (unsigned)d->a + 1, 1);
                int wd = (gc_weekday(first) + 1) % 7; /* Sunday = 0, as POSIX TZ counts */
                int64_t day = first + (d->c - wd + 7) % 7 + (int64_t)(d->b - 1) * 7;

                while (day >= next)
                        day -= 7;
                return day;
        }
}

/* When daylight saving time starts and ends in year y, in UTC. */
static void gc_tz__rule_year(const gc_tz *z, int64_t y, int64_t *ret_start, int64_t *ret_end)
{
        *ret_start = gc_tz__rule_day(&z->start, y) * GC_TZ__DAY + z->start.time - z->std_off;
        *ret_end = gc_tz__rule_day(&z->end, y) * GC_TZ__DAY + z->end.time - z->dst_off;
}

static int64_t gc_tz__year_of(int64_t t)
{
        int64_t y;
        unsigned m, d;

        gc_civil_from_days(gc_floor_div(t, GC_TZ__DAY), &y, &m, &d);
        return y;
}

static int32_t gc_tz__footer_offset(const gc_tz *z, int64_t t)
{
        int64_t s, e;

        if (!z->footer_dst)
                return z->std_off;
        gc_tz__rule_year(z, gc_tz__year_of(t + z->std_off), &s, &e);
        if (s < e)
                return t >= s && t < e ? z->dst_off : z->std_off;
        return t >= e && t < s ? z->std_off : z->dst_off;
}

/* ---- TZif ------------------------------------------------------------------------------------ */

static uint32_t gc_tz__be32(const unsigned char *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t gc_tz__be64(const unsigned char *p)
{
        return (int64_t)((uint64_t)gc_tz__be32(p) << 32 | gc_tz__be32(p + 4));
}

typedef struct gc_tz__hdr {
        int version;
        uint32_t isut, isstd, leap, time, type, chars;
} gc_tz__hdr;

static int gc_tz__header(const unsigned char *p, size_t n, gc_tz__hdr *h)
{
        if (n < GC_TZ__HDR || memcmp(p, "TZif", 4) != 0)
                return -EINVAL;
        h->version = p[4] == 0 ? 1 : p[4] - '0';
        if (h->version < 1 || h->version > 4)
                return -EINVAL;
        h->isut = gc_tz__be32(p + 20);
        h->isstd = gc_tz__be32(p + 24);
        h->leap = gc_tz__be32(p + 28);
        h->time = gc_tz__be32(p + 32);
        h->type = gc_tz__be32(p + 36);
        h->chars = gc_tz__be32(p + 40);
        if (h->type == 0 || h->type > GC_TZ_MAX_TYPES || h->time > GC_TZ_MAX_TRANS ||
            h->chars > 65536 || h->leap > 1000 || (h->isut && h->isut != h->type) ||
            (h->isstd && h->isstd != h->type))
                return -EINVAL;
        return 0;
}

/* Bytes of a data block whose times are tsize bytes wide. */
static size_t gc_tz__block(const gc_tz__hdr *h, size_t tsize)
{
        return (size_t)h->time * (tsize + 1) + (size_t)h->type * 6 + h->chars +
               (size_t)h->leap * (tsize + 4) + h->isstd + h->isut;
}

/* Takes the transitions and types of a data block (times tsize bytes wide) into z. */
static int gc_tz__data(gc_tz *z, const gc_tz__hdr *h, const unsigned char *p, size_t tsize)
{
        const unsigned char *idx = p + (size_t)h->time * tsize, *types = idx + h->time;

        /* Leap-second zones ("right/...") count seconds Kubernetes' timestamps do not. */
        if (h->leap)
                return -EINVAL;
        z->n_trans = h->time;
        z->n_types = h->type;
        z->trans = calloc(h->time + 1, sizeof(*z->trans));
        z->idx = calloc(h->time + 1, 1);
        z->utoff = calloc(h->type, sizeof(*z->utoff));
        if (!z->trans || !z->idx || !z->utoff)
                return -ENOMEM;
        for (size_t i = 0; i < h->type; i++) {
                int32_t off = (int32_t)gc_tz__be32(types + 6 * i);

                if (off < -GC_TZ_MAX_OFF || off > GC_TZ_MAX_OFF || types[6 * i + 4] > 1 ||
                    types[6 * i + 5] >= h->chars)
                        return -EINVAL;
                z->utoff[i] = off;
        }
        for (size_t i = 0; i < h->time; i++) {
                int64_t t = tsize == 8 ? gc_tz__be64(p + 8 * i) : (int32_t)gc_tz__be32(p + 4 * i);

                if ((i > 0 && t <= z->trans[i - 1]) || idx[i] >= h->type)
                        return -EINVAL;
                z->trans[i] = gc_tz__clamp(t);
                z->idx[i] = idx[i];
        }
        /* Clamping may have made two equal: they must stay strictly ascending. */
        for (size_t i = 1; i < h->time; i++)
                if (z->trans[i] <= z->trans[i - 1])
                        return -EINVAL;
        return 0;
}

int gc_tz_parse(const char *name, const void *data, size_t n, gc_tz **ret)
{
        const unsigned char *p = data;
        gc_tz__hdr h;
        gc_tz *z;
        size_t len;
        int r;

        if (!ret || (!data && n) || !gc_tz_name_valid(name))
                return -EINVAL;
        if (n > GC_TZ_FILE_MAX)
                return -E2BIG;
        if (gc_tz__header(p, n, &h) < 0)
                return -EINVAL;
        len = gc_tz__block(&h, 4);
        if (n - GC_TZ__HDR < len)
                return -EINVAL;
        z = calloc(1, sizeof(*z));
        if (!z)
                return -ENOMEM;
        gc_strlcpy(z->name, name, sizeof(z->name));
        if (h.version == 1) {
                r = gc_tz__data(z, &h, p + GC_TZ__HDR, 4);
        } else {
                /* Version 2 on: skip the 32-bit block, read the 64-bit one and the footer. */
                const unsigned char *q = p + GC_TZ__HDR + len, *nl;
                size_t left = n - GC_TZ__HDR - len;

                r = gc_tz__header(q, left, &h);
                if (r == 0 && (h.version < 2 || left - GC_TZ__HDR < gc_tz__block(&h, 8)))
                        r = -EINVAL;
                if (r == 0)
                        r = gc_tz__data(z, &h, q + GC_TZ__HDR, 8);
                if (r == 0) {
                        q += GC_TZ__HDR + gc_tz__block(&h, 8);
                        left = (size_t)(p + n - q);
                        nl = left > 1 ? memchr(q + 1, '\n', left - 1) : NULL;
                        if (left < 2 || q[0] != '\n' || !nl)
                                r = -EINVAL;
                        else
                                r = gc_tz__footer(z, (const char *)q + 1, (size_t)(nl - q - 1));
                }
        }
        if (r < 0) {
                gc_tz_free(z);
                return r;
        }
        *ret = z;
        return 0;
}

int gc_tz_load(const char *dir, const char *name, gc_tz **ret)
{
        char path[512];
        gc_buf b;
        int r;

        if (!ret || !gc_tz_name_valid(name))
                return -EINVAL;
        if (snprintf(path, sizeof(path), "%s/%s", dir ? dir : GC_TZ_DIR, name) >= (int)sizeof(path))
                return -EINVAL;
        r = gc_read_file(path, GC_TZ_FILE_MAX, &b);
        if (r == -ENOENT || r == -EISDIR || r == -ENOTDIR)
                return -ENOENT;
        if (r < 0)
                return r;
        r = gc_tz_parse(name, b.data, b.len, ret);
        gc_buf_free(&b);
        return r;
}

int gc_tz_fixed(int32_t off, gc_tz **ret)
{
        gc_tz *z;
        unsigned a = (unsigned)(off < 0 ? -off : off);

        if (!ret || off < -GC_TZ__MAX_FIXED || off > GC_TZ__MAX_FIXED || off % 60 != 0)
                return -EINVAL;
        z = calloc(1, sizeof(*z));
        if (!z)
                return -ENOMEM;
        z->n_types = 1;
        z->utoff = calloc(1, sizeof(*z->utoff));
        if (!z->utoff)
                return gc_tz_free(z), -ENOMEM;
        z->utoff[0] = off;
        if (off == 0)
                snprintf(z->name, sizeof(z->name), "UTC");
        else
                snprintf(z->name, sizeof(z->name), "UTC%c%02u:%02u", off < 0 ? '-' : '+', a / 3600u,
                         a % 3600u / 60u);
        *ret = z;
        return 0;
}

/* ---- offsets --------------------------------------------------------------------------------- */

/* Index of the last transition at or before t, or -1. */
static int64_t gc_tz__find(const gc_tz *z, int64_t t)
{
        size_t lo = 0, hi = z->n_trans;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (z->trans[mid] <= t)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return (int64_t)lo - 1;
}

int32_t gc_tz_offset(const gc_tz *z, int64_t t)
{
        int64_t i;

        if (!z)
                return 0;
        t = gc_tz__clamp(t);
        i = gc_tz__find(z, t);
        if (z->has_footer && (z->n_trans == 0 || i == (int64_t)z->n_trans - 1))
                return gc_tz__footer_offset(z, t);
        return z->utoff[i < 0 ? 0 : z->idx[i]];
}

/* The first instant after t at which a transition may happen (the offset may stay the same). */
static int64_t gc_tz__next_edge(const gc_tz *z, int64_t t)
{
        int64_t i = gc_tz__find(z, t), best = INT64_MAX;

        if (i + 1 < (int64_t)z->n_trans)
                return z->trans[i + 1];
        if (z->has_footer && z->footer_dst) {
                int64_t y = gc_tz__year_of(t);

                for (int64_t k = y - 1; k <= y + 1; k++) {
                        int64_t s, e;

                        gc_tz__rule_year(z, k, &s, &e);
                        if (s > t && s < best)
                                best = s;
                        if (e > t && e < best)
                                best = e;
                }
        }
        return best;
}

int64_t gc_tz_next_change(const gc_tz *z, int64_t t)
{
        int32_t cur;

        if (!z)
                return INT64_MAX;
        t = gc_tz__clamp(t);
        cur = gc_tz_offset(z, t);
        /* Some transitions change only the abbreviation: walk on until the offset moves. */
        for (int k = 0; k < 4 * GC_TZ_MAX_TRANS && t < GC_TZ__T_LIMIT; k++) {
                t = gc_tz__next_edge(z, t);
                if (t == INT64_MAX || t >= GC_TZ__T_LIMIT)
                        return INT64_MAX;
                if (gc_tz_offset(z, t) != cur)
                        return t;
        }
        return INT64_MAX;
}

int64_t gc_tz_granularity(const gc_tz *z, int64_t from, int64_t to)
{
        int64_t g = 3600, t = gc_tz__clamp(from);

        to = gc_tz__clamp(to);
        for (int k = 0; k < 4 * GC_TZ_MAX_TRANS && t <= to; k++) {
                int32_t off = gc_tz_offset(z, t);

                while (g > 900 && off % g != 0)
                        g /= 2;
                if (g == 900)
                        break;
                t = gc_tz_next_change(z, t);
                if (t == INT64_MAX)
                        break;
        }
        return g;
}

/* ---- local calendar -------------------------------------------------------------------------- */

int64_t gc_tz_day_of(const gc_tz *z, int64_t t)
{
        t = gc_tz__clamp(t);
        return gc_floor_div(t + gc_tz_offset(z, t), GC_TZ__DAY);
}

int64_t gc_tz_day_start(const gc_tz *z, int64_t day)
{
        int64_t l = gc_tz__clamp(day * GC_TZ__DAY);
        int64_t t = l - GC_TZ_MAX_OFF - 3600;

        /*
         * Local time runs at one second per second between changes of offset: the day starts at
         * the first instant whose local time is l or later, found segment by segment.
         */
        for (int k = 0; k < GC_TZ__MAX_STEPS; k++) {
                int32_t off = gc_tz_offset(z, t);
                int64_t next = gc_tz_next_change(z, t);
                int64_t c = l - off > t ? l - off : t;

                if (c < next)
                        return c;
                t = next;
        }
        return l - gc_tz_offset(z, l);
}

/* The first day of the period holding local day d, and k periods on. */
static int64_t gc_tz__first_day(gc_tz_unit u, int64_t d, int64_t k)
{
        int64_t y;
        unsigned m, dd;

        switch (u) {
        case GC_TZ_WEEK:
                return d - gc_weekday(d) + 7 * k;
        case GC_TZ_MONTH: {
                int64_t mi;

                gc_civil_from_days(d, &y, &m, &dd);
                mi = y * 12 + (m - 1) + k;
                return gc_days_from_civil(gc_floor_div(mi, 12),
                                          (unsigned)(mi - gc_floor_div(mi, 12) * 12) + 1, 1);
        }
        case GC_TZ_DAY:
        default:
                return d + k;
        }
}

int64_t gc_tz_period_start(const gc_tz *z, gc_tz_unit u, int64_t t)
{
        return gc_tz_period_add(z, u, t, 0);
}

int64_t gc_tz_period_add(const gc_tz *z, gc_tz_unit u, int64_t t, int64_t k)
{
        /* At most a million periods either way keeps every day inside the clamped range. */
        if (k > 1000000)
                k = 1000000;
        if (k < -1000000)
                k = -1000000;
        return gc_tz_day_start(z, gc_tz__first_day(u, gc_tz_day_of(z, t), k));
}

void gc_tz_date(const gc_tz *z, int64_t t, char out[16], int *ret_weekday)
{
        int64_t d = gc_tz_day_of(z, t), y;
        unsigned m, dd;

        gc_civil_from_days(d, &y, &m, &dd);
        snprintf(out, 16, "%04lld-%02u-%02u", (long long)y, m, dd);
        if (ret_weekday)
                *ret_weekday = gc_weekday(d);
}
