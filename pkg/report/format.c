/* report formatting: JSON numbers, money, rounding that adds up, and aligned or Markdown tables. */
#include "report.h"
#include "report_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- numbers -------------------------------------------------------------------------------- */

void gc_report__num(double v, char out[GC_REPORT__NUM_LEN])
{
        char fixed[GC_REPORT__NUM_LEN];
        const char *e;
        int prec;

        if (!isfinite(v)) {
                gc_strlcpy(out, "null", GC_REPORT__NUM_LEN);
                return;
        }
        if (v == 0) { /* also -0, which JSON readers would keep as a surprising "-0" */
                gc_strlcpy(out, "0", GC_REPORT__NUM_LEN);
                return;
        }
        /*
         * The shortest decimal that reads back as v. When 15 significant digits read back, %g's
         * dropping of trailing zeros already leaves the shortest form: a double's half-ulp is
         * below half a unit in the 15th digit, so the shortest digits are v rounded to 15
         * digits, zero-padded. Otherwise 16 or 17 digits are needed (17 always suffice).
         */
        for (prec = 15; prec < 17; prec++) {
                snprintf(out, GC_REPORT__NUM_LEN, "%.*g", prec, v);
                if (strtod(out, NULL) == v)
                        break;
        }
        if (prec == 17)
                snprintf(out, GC_REPORT__NUM_LEN, "%.17g", v);
        /*
         * %g writes 1e20 as "1e+20" and 1.5e-7 as "1.5e-07"; plain decimals read better, so the
         * same digits are written without an exponent where JavaScript does so too.
         */
        e = strchr(out, 'e');
        if (e && fabs(v) >= 1e-7 && fabs(v) < 1e21) {
                long exp10 = strtol(e + 1, NULL, 10);
                int decimals = prec - 1 - (int)exp10;

                snprintf(fixed, sizeof(fixed), "%.*f", decimals > 0 ? decimals : 0, v);
                if (strchr(fixed, '.') || strchr(fixed, ',')) {
                        size_t n = strlen(fixed);

                        while (n > 0 && fixed[n - 1] == '0')
                                fixed[--n] = '\0';
                        if (n > 0 && (fixed[n - 1] == '.' || fixed[n - 1] == ','))
                                fixed[--n] = '\0';
                }
                if (strtod(fixed, NULL) == v)
                        gc_strlcpy(out, fixed, GC_REPORT__NUM_LEN);
        }
        /* A program may set a locale whose decimal point is a comma; JSON wants a point. */
        for (char *p = out; *p; p++)
                if (*p == ',')
                        *p = '.';
}

int gc_report__json_num(gc_buf *b, double v)
{
        char num[GC_REPORT__NUM_LEN];

        gc_report__num(v, num);
        return gc_buf_puts(b, num);
}

int gc_report__json_key(gc_buf *b, const char *name)
{
        if (b->len > 0 && b->data[b->len - 1] != '{' && b->data[b->len - 1] != '[')
                gc_buf_append(b, ",", 1);
        gc_buf_json_str(b, name);
        return gc_buf_append(b, ":", 1);
}

int gc_report__json_field_num(gc_buf *b, const char *name, double v)
{
        gc_report__json_key(b, name);
        return gc_report__json_num(b, v);
}

int gc_report__json_field_money(gc_buf *b, const char *name, double v)
{
        char alias[64];

        gc_report__json_field_num(b, name, v);
        snprintf(alias, sizeof(alias), "%s_usd", name);
        return gc_report__json_field_num(b, alias, v);
}

int gc_report__json_field_str(gc_buf *b, const char *name, const char *s)
{
        gc_report__json_key(b, name);
        return gc_buf_json_str(b, s ? s : "");
}

int gc_report__json_field_u64(gc_buf *b, const char *name, uint64_t v)
{
        gc_report__json_key(b, name);
        return gc_buf_printf(b, "%llu", (unsigned long long)v);
}

int gc_report__json_field_time(gc_buf *b, const char *name, int64_t t)
{
        char ts[GC_TIME_LEN];

        gc_time_format(t, ts);
        return gc_report__json_field_str(b, name, ts);
}

/* ---- rounding ------------------------------------------------------------------------------- */

/* Beyond 2^52 a double has no fraction left to round, and llround could overflow. */
#define GC_REPORT__ROUND_MAX 4503599627370496.0

typedef struct gc_report__rem {
        double rem;
        size_t i;
} gc_report__rem;

/* Largest remainder first; equal remainders go to the earlier row, so the result is stable. */
static int gc_report__rem_cmp(const void *a, const void *b)
{
        const gc_report__rem *x = a, *y = b;

        if (x->rem != y->rem)
                return x->rem > y->rem ? -1 : 1;
        return x->i < y->i ? -1 : x->i > y->i;
}

static int64_t gc_report__round1(double x)
{
        if (!isfinite(x))
                return 0;
        if (x > GC_REPORT__ROUND_MAX)
                x = GC_REPORT__ROUND_MAX;
        if (x < -GC_REPORT__ROUND_MAX)
                x = -GC_REPORT__ROUND_MAX;
        return llround(x);
}

int gc_report__round_to_total(const double *v, size_t n, double total, double scale, int64_t *ret,
                              int64_t *ret_total)
{
        gc_report__rem *rem = NULL;
        int64_t target = gc_report__round1(total * scale), floors = 0, deficit;
        int independent = 0;

        if (!isfinite(total * scale) || fabs(total * scale) > GC_REPORT__ROUND_MAX)
                independent = 1;
        for (size_t i = 0; i < n && !independent; i++) {
                double x = v[i] * scale;

                if (!isfinite(x) || fabs(x) > GC_REPORT__ROUND_MAX)
                        independent = 1;
                else
                        floors += (int64_t)floor(x);
        }
        deficit = target - floors;
        /* Rounding each row up or down can move the sum by fewer than n units and no more. */
        if (independent || deficit < 0 || (uint64_t)deficit > n) {
                for (size_t i = 0; i < n; i++)
                        ret[i] = gc_report__round1(v[i] * scale);
                *ret_total = target;
                return 1;
        }
        if (n > 0) {
                rem = calloc(n, sizeof(*rem));
                if (!rem)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                double x = v[i] * scale;

                ret[i] = (int64_t)floor(x);
                rem[i].rem = x - floor(x);
                rem[i].i = i;
        }
        if (n > 1)
                qsort(rem, n, sizeof(*rem), gc_report__rem_cmp);
        for (int64_t k = 0; k < deficit; k++)
                ret[rem[k].i]++;
        free(rem);
        *ret_total = target;
        return 0;
}

int gc_report__round_rows(const gc_cost_row *rows, size_t n, const gc_cost_row *total,
                          gc_report__rounded *ret)
{
        gc_report__rounded rr = {0};
        double *v = NULL;
        int64_t share_total;
        int has_share = isfinite(total->cost) && total->cost > 0;
        int r = -ENOMEM;

        /* One allocation of n+1 so that an empty list is no special case. */
        rr.cents = calloc(3 * (n + 1), sizeof(int64_t));
        v = calloc(n + 1, sizeof(double));
        if (!rr.cents || !v)
                goto out;
        rr.centi_hours = rr.cents + (n + 1);
        rr.share = has_share ? rr.cents + 2 * (n + 1) : NULL;

        for (size_t i = 0; i < n; i++)
                v[i] = rows[i].cost;
        r = gc_report__round_to_total(v, n, total->cost, 100, rr.cents, &rr.total_cents);
        if (r < 0)
                goto out;
        for (size_t i = 0; i < n; i++)
                v[i] = rows[i].gpu_seconds / 3600.0;
        r = gc_report__round_to_total(v, n, total->gpu_seconds / 3600.0, 100, rr.centi_hours,
                                      &rr.total_centi_hours);
        if (r < 0)
                goto out;
        if (has_share) {
                for (size_t i = 0; i < n; i++)
                        v[i] = rows[i].cost / total->cost * 100.0;
                r = gc_report__round_to_total(v, n, 100.0, 10, rr.share, &share_total);
                if (r < 0)
                        goto out;
        }
        *ret = rr;
        rr.cents = NULL;
        r = 0;
out:
        free(rr.cents);
        free(v);
        return r;
}

void gc_report__rounded_free(gc_report__rounded *r)
{
        free(r->cents);
        r->cents = r->centi_hours = r->share = NULL;
}

int64_t gc_report__to_cents(double usd)
{
        return gc_report__round1(usd * 100);
}

int64_t gc_report__to_centi_hours(double gpu_seconds)
{
        return gc_report__round1(gpu_seconds / 3600.0 * 100);
}

int64_t gc_report__share_tenths(double part, double whole)
{
        if (!(whole > 0))
                return 0;
        return gc_report__round1(part / whole * 1000.0);
}

void gc_report__hours(int64_t centi_hours, char out[GC_REPORT__TEXT_LEN])
{
        gc_report__fixed(centi_hours, 2, out);
}

void gc_report__pct(int64_t tenths, char out[GC_REPORT__TEXT_LEN])
{
        size_t n;

        gc_report__fixed(tenths, 1, out);
        n = strlen(out);
        if (n + 1 < GC_REPORT__TEXT_LEN) {
                out[n] = '%';
                out[n + 1] = '\0';
        }
}

/* ---- money and hours ------------------------------------------------------------------------ */

void gc_report__fixed(int64_t units, int decimals, char out[GC_REPORT__TEXT_LEN])
{
        char rev[GC_REPORT__TEXT_LEN]; /* the digits, last first */
        uint64_t mag = units < 0 ? (uint64_t)0 - (uint64_t)units : (uint64_t)units;
        size_t n = 0, o = 0;
        int d = 0;

        if (decimals < 0 || decimals > 9)
                decimals = 0;
        /* 20 digits, 6 separators, a point and 9 decimals: always inside rev and out. */
        do {
                if (d > decimals && (d - decimals) % 3 == 0)
                        rev[n++] = ',';
                if (d == decimals && decimals > 0)
                        rev[n++] = '.';
                rev[n++] = (char)('0' + mag % 10);
                mag /= 10;
                d++;
        } while (mag > 0 || d <= decimals);
        if (units < 0)
                out[o++] = '-';
        while (n > 0)
                out[o++] = rev[--n];
        out[o] = '\0';
}

int gc_report__is_usd(const char *currency)
{
        return !currency || !*currency || strcasecmp(currency, "USD") == 0;
}

void gc_report__money(int64_t cents, const char *currency, char out[GC_REPORT__TEXT_LEN])
{
        char num[GC_REPORT__TEXT_LEN];
        size_t o = 0;

        gc_report__fixed(cents, 2, num);
        if (gc_report__is_usd(currency)) {
                const char *digits = num[0] == '-' ? num + 1 : num;

                if (num[0] == '-')
                        out[o++] = '-';
                out[o++] = '$';
                gc_strlcpy(out + o, digits, GC_REPORT__TEXT_LEN - o);
                return;
        }
        o = gc_strlcpy(out, num, GC_REPORT__TEXT_LEN);
        out[o++] = ' ';
        /* A currency code is a short word; anything else is cut and made printable. */
        for (const char *p = currency; *p && o < GC_REPORT__TEXT_LEN - 1 && p - currency < 8; p++)
                out[o++] = (unsigned char)*p > 0x20 && (unsigned char)*p < 0x7f ? *p : '?';
        out[o] = '\0';
}

_Static_assert(GC_REPORT_MONEY_LEN == GC_REPORT__TEXT_LEN, "one buffer size for money");

void gc_report_money(double amount, const char *currency, char out[GC_REPORT_MONEY_LEN])
{
        gc_report__money(gc_report__to_cents(amount), currency, out);
}

/* ---- tables --------------------------------------------------------------------------------- */

int gc_report__table_init(gc_report__table *t, const char *align, size_t limit)
{
        size_t n = strlen(align);

        memset(t, 0, sizeof(*t));
        if (n == 0 || n > GC_REPORT__MAX_COLS)
                return -EINVAL;
        memcpy(t->align, align, n);
        t->n_cols = n;
        gc_buf_init(&t->text, limit);
        return 0;
}

void gc_report__table_free(gc_report__table *t)
{
        gc_buf_free(&t->text);
        free(t->cells);
        t->cells = NULL;
        t->n_cells = t->cap_cells = 0;
}

/* May reallocate t->cells. */
static int gc_report__table_push(gc_report__table *t, size_t off)
{
        if (t->n_cells == t->cap_cells) {
                size_t cap = t->cap_cells ? t->cap_cells * 2 : 64;
                size_t *c;

                /* Every cell costs at least its NUL in text, so text's limit bounds cells too. */
                if (cap - 64 > t->text.limit || cap > SIZE_MAX / sizeof(*c))
                        return -E2BIG;
                c = realloc(t->cells, cap * sizeof(*c));
                if (!c)
                        return -ENOMEM;
                t->cells = c;
                t->cap_cells = cap;
        }
        t->cells[t->n_cells++] = off;
        return 0;
}

/* Ends the cell whose text starts at off: its NUL, then its offset. */
static int gc_report__table_end_cell(gc_report__table *t, size_t off)
{
        int r = gc_buf_append(&t->text, "", 1);

        if (r < 0) {
                gc_buf_truncate(&t->text, off);
                return r;
        }
        return gc_report__table_push(t, off);
}

int gc_report__table_cell(gc_report__table *t, const char *s)
{
        size_t off = t->text.len;
        int r = gc_buf_puts(&t->text, s);

        return r < 0 ? r : gc_report__table_end_cell(t, off);
}

int gc_report__table_cellf(gc_report__table *t, const char *fmt, ...)
{
        size_t off = t->text.len;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = gc_buf_vprintf(&t->text, fmt, ap);
        va_end(ap);
        return r < 0 ? r : gc_report__table_end_cell(t, off);
}

int gc_report__md_escape(gc_buf *b, const char *s)
{
        static const char special[] = "\\`*_[]<>|~#";
        const char *run = s;

        for (const char *p = s; !b->err && *p; p++) {
                unsigned char c = (unsigned char)*p;

                if (c >= 0x20 && c != 0x7f && !strchr(special, c))
                        continue;
                gc_buf_append(b, run, (size_t)(p - run));
                if (c < 0x20 || c == 0x7f)
                        gc_buf_append(b, " ", 1);
                else
                        gc_buf_printf(b, "\\%c", c);
                run = p + 1;
        }
        return gc_buf_puts(b, run);
}

int gc_report__table_key(gc_report__table *t, const char *key, int md)
{
        size_t off = t->text.len;
        int r;

        if (!key || !*key)
                return gc_report__table_cell(t, "(none)");
        if (md) {
                r = gc_report__md_escape(&t->text, key);
        } else {
                r = gc_buf_puts(&t->text, key);
                /* A label never holds control bytes; one that does must not drive the terminal. */
                for (size_t i = off; r == 0 && i < t->text.len; i++) {
                        unsigned char c = (unsigned char)t->text.data[i];

                        if (c < 0x20 || c == 0x7f)
                                t->text.data[i] = '?';
                }
        }
        if (r < 0) {
                if (t->text.data)
                        gc_buf_truncate(&t->text, off);
                return r;
        }
        return gc_report__table_end_cell(t, off);
}

int gc_report__table_rule(gc_report__table *t)
{
        int r = 0;

        for (size_t i = 0; r == 0 && i < t->n_cols; i++)
                r = gc_report__table_push(t, SIZE_MAX);
        return r;
}

/* Terminal columns of UTF-8 text: one per code point, which is right for the text we write. */
static size_t gc_report__width(const char *s)
{
        size_t w = 0;

        for (; *s; s++)
                w += ((unsigned char)*s & 0xc0) != 0x80;
        return w;
}

static int gc_report__pad(gc_buf *out, char c, size_t n)
{
        char blanks[64];

        memset(blanks, c, sizeof(blanks));
        while (!out->err && n > 0) {
                size_t k = n < sizeof(blanks) ? n : sizeof(blanks);

                gc_buf_append(out, blanks, k);
                n -= k;
        }
        return out->err;
}

static void gc_report__widths(const gc_report__table *t, size_t w[GC_REPORT__MAX_COLS], size_t min)
{
        for (size_t c = 0; c < t->n_cols; c++)
                w[c] = min;
        for (size_t i = 0; i < t->n_cells; i++) {
                size_t c = i % t->n_cols, cw;

                if (t->cells[i] == SIZE_MAX)
                        continue;
                cw = gc_report__width(t->text.data + t->cells[i]);
                if (cw > w[c])
                        w[c] = cw;
        }
}

int gc_report__table_text(const gc_report__table *t, gc_buf *out)
{
        size_t w[GC_REPORT__MAX_COLS];
        size_t n_rows = t->n_cells / t->n_cols;

        gc_report__widths(t, w, 0);
        for (size_t row = 0; !out->err && row < n_rows; row++) {
                const size_t *cell = t->cells + row * t->n_cols;
                int rule = cell[0] == SIZE_MAX;
                size_t pending = 0; /* blanks owed before the next cell, so no line ends in one */

                for (size_t c = 0; c < t->n_cols; c++) {
                        const char *s = rule ? "" : t->text.data + cell[c];
                        size_t cw = gc_report__width(s);

                        if (c > 0)
                                pending += 2;
                        if (rule) {
                                gc_report__pad(out, ' ', pending);
                                gc_report__pad(out, '-', w[c]);
                                pending = 0;
                                continue;
                        }
                        if (t->align[c] == 'r')
                                pending += w[c] - cw;
                        if (*s) {
                                gc_report__pad(out, ' ', pending);
                                gc_buf_puts(out, s);
                                pending = 0;
                        }
                        if (t->align[c] != 'r')
                                pending += w[c] - cw;
                }
                gc_buf_append(out, "\n", 1);
                if (row == 0) { /* the rule under the header */
                        for (size_t c = 0; c < t->n_cols; c++) {
                                gc_report__pad(out, ' ', c > 0 ? 2 : 0);
                                gc_report__pad(out, '-', w[c]);
                        }
                        gc_buf_append(out, "\n", 1);
                }
        }
        return out->err;
}

int gc_report__table_markdown(const gc_report__table *t, gc_buf *out)
{
        size_t w[GC_REPORT__MAX_COLS];
        size_t n_rows = t->n_cells / t->n_cols;

        gc_report__widths(t, w, 3);
        for (size_t row = 0; !out->err && row < n_rows; row++) {
                const size_t *cell = t->cells + row * t->n_cols;

                if (cell[0] == SIZE_MAX)
                        continue;
                for (size_t c = 0; c < t->n_cols; c++) {
                        const char *s = t->text.data + cell[c];
                        size_t pad = w[c] - gc_report__width(s);

                        gc_buf_puts(out, "| ");
                        if (t->align[c] == 'r')
                                gc_report__pad(out, ' ', pad);
                        gc_buf_puts(out, s);
                        if (t->align[c] != 'r')
                                gc_report__pad(out, ' ', pad);
                        gc_buf_append(out, " ", 1);
                }
                gc_buf_puts(out, "|\n");
                if (row == 0) {
                        for (size_t c = 0; c < t->n_cols; c++) {
                                gc_buf_puts(out, "| ");
                                gc_report__pad(out, '-', w[c] - (t->align[c] == 'r'));
                                gc_buf_puts(out, t->align[c] == 'r' ? ": " : " ");
                        }
                        gc_buf_puts(out, "|\n");
                }
        }
        return out->err;
}
