/* promtext: a streaming, bounded reader of the Prometheus text format, and its writer. */
#include "promtext.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct gc_prom_parser {
        char *line; /* the line being assembled; cap is at most max + 1 (NUL) */
        size_t len; /* bytes of it so far */
        size_t cap;
        size_t max;   /* longest line accepted, newline excluded */
        int skipping; /* inside an over-long line: drop bytes until its newline */
        int stopped;  /* the callback's non-zero result, kept */
        unsigned flags;
        gc_prom_sample_fn fn;
        void *userdata;
        gc_prom_stats st;
        gc_prom_label labels[GC_PROM_MAX_LABELS];
};

/*
 * Character classes for names; one table lookup per byte keeps the hot loop short. The table is
 * built by the compiler: a table filled on first use behind a plain flag is a data race when two
 * threads create their first parsers at once.
 */
enum { C_NAME0 = 1, C_NAME = 2, C_LNAME0 = 4, C_LNAME = 8, C_BLANK = 16 };
#define CT_ALPHA(c) (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') || (c) == '_')
#define CT_DIGIT(c) ((c) >= '0' && (c) <= '9')
#define CT1(c)                                                                                     \
        (unsigned char)((CT_ALPHA(c) ? C_NAME0 | C_NAME | C_LNAME0 | C_LNAME : 0) |                \
                        ((c) == ':' ? C_NAME0 | C_NAME : 0) |                                      \
                        (CT_DIGIT(c) ? C_NAME | C_LNAME : 0) |                                     \
                        ((c) == ' ' || (c) == '\t' ? C_BLANK : 0))
#define CT4(c)  CT1(c), CT1((c) + 1), CT1((c) + 2), CT1((c) + 3)
#define CT16(c) CT4(c), CT4((c) + 4), CT4((c) + 8), CT4((c) + 12)
#define CT64(c) CT16(c), CT16((c) + 16), CT16((c) + 32), CT16((c) + 48)
static const unsigned char ctab[256] = {CT64(0), CT64(64), CT64(128), CT64(192)};

#define IS(c, cls) (ctab[(unsigned char)(c)] & (cls))

gc_prom_parser *gc_prom_parser_new(size_t max_line_bytes, unsigned flags, gc_prom_sample_fn fn,
                                   void *userdata)
{
        gc_prom_parser *p;

        if (!fn)
                return NULL;
        p = calloc(1, sizeof(*p));
        if (!p)
                return NULL;
        p->max = max_line_bytes ? max_line_bytes : GC_PROM_DEFAULT_LINE;
        p->flags = flags;
        p->fn = fn;
        p->userdata = userdata;
        return p;
}

gc_prom_parser *gc_prom_parser_free(gc_prom_parser *p)
{
        if (p) {
                free(p->line);
                free(p);
        }
        return NULL;
}

void gc_prom_parser_reset(gc_prom_parser *p)
{
        if (!p)
                return;
        p->len = 0;
        p->skipping = 0;
        p->stopped = 0;
        memset(&p->st, 0, sizeof(p->st));
}

void gc_prom_parser_stats(const gc_prom_parser *p, gc_prom_stats *ret_stats)
{
        if (p && ret_stats)
                *ret_stats = p->st;
}

static void line_error(gc_prom_parser *p, const char *why)
{
        p->st.errors++;
        if (p->st.first_error_line == 0) {
                p->st.first_error_line = p->st.lines;
                gc_strlcpy(p->st.first_error, why, sizeof(p->st.first_error));
        }
}

/* ---- numbers -------------------------------------------------------------------------------- */

static const double pow10_tab[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int ieq(const char *s, size_t n, const char *lit)
{
        size_t i;

        for (i = 0; i < n && lit[i]; i++) {
                char c = s[i];

                if (c >= 'A' && c <= 'Z')
                        c = (char)(c - 'A' + 'a');
                if (c != lit[i])
                        return 0;
        }
        return i == n && lit[i] == '\0';
}

int gc_prom_parse_value(const char *s, size_t n, double *ret)
{
        const char *q = s, *end = s + n;
        int neg = 0;
        uint64_t mant = 0;
        int digits = 0, frac = 0, seen_dot = 0;
        char tmp[128];
        char *e;
        double v;

        if (!s || n == 0 || !ret)
                return -EINVAL;
        if (*q == '+' || *q == '-') {
                neg = *q == '-';
                q++;
        }
        if (q == end)
                return -EINVAL;
        if (ieq(q, (size_t)(end - q), "nan")) {
                *ret = NAN;
                return 0;
        }
        if (ieq(q, (size_t)(end - q), "inf") || ieq(q, (size_t)(end - q), "infinity")) {
                *ret = neg ? -INFINITY : INFINITY;
                return 0;
        }
        /*
         * Fast path, exact: at most 15 significant digits make an integer below 2^53, and a
         * power of ten up to 1e22 is exact, so one IEEE division is correctly rounded — the
         * same double strtod gives.
         */
        for (; q < end; q++) {
                char c = *q;

                if (c >= '0' && c <= '9') {
                        if (mant == 0 && c == '0') {
                                /* leading zeros are not significant */
                        } else {
                                digits++;
                        }
                        mant = mant * 10 + (uint64_t)(c - '0');
                        if (seen_dot)
                                frac++;
                        if (digits > 15 || frac > 22)
                                break;
                } else if (c == '.' && !seen_dot) {
                        seen_dot = 1;
                } else {
                        break;
                }
        }
        if (q == end) {
                size_t intdigits = n - (size_t)(neg || *s == '+') - (size_t)seen_dot;

                if (intdigits == 0) /* "." or "+" alone */
                        return -EINVAL;
                v = (double)mant;
                if (frac)
                        v /= pow10_tab[frac];
                *ret = neg ? -v : v;
                return 0;
        }
        /* Slow path: exponents, long mantissas. Only the characters Go's ParseFloat takes. */
        if (n >= sizeof(tmp))
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];

                if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' ||
                      c == '-'))
                        return -EINVAL;
        }
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        errno = 0;
        v = strtod(tmp, &e);
        if (e != tmp + n || e == tmp)
                return -EINVAL;
        /* Overflow to +-Inf is what Go returns too (with an error we ignore); underflow is 0. */
        *ret = v;
        return 0;
}

/* Integer milliseconds, or (OpenMetrics) seconds with an optional fraction. */
static int parse_timestamp(const char *s, size_t n, unsigned flags, int64_t *ret_ms)
{
        int64_t v = 0;
        int neg = 0;
        size_t i = 0;

        if (n && (s[0] == '-' || s[0] == '+')) {
                neg = s[0] == '-';
                i = 1;
        }
        if (i == n)
                return -EINVAL;
        if (flags & GC_PROM_OPENMETRICS) {
                double d;

                if (gc_prom_parse_value(s, n, &d) < 0 || !isfinite(d) || fabs(d) > 9.2e15)
                        return -EINVAL;
                *ret_ms = (int64_t)floor(d * 1000.0 + 0.5);
                return 0;
        }
        for (; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                if (v > (INT64_MAX - 9) / 10)
                        return -ERANGE;
                v = v * 10 + (s[i] - '0');
        }
        *ret_ms = neg ? -v : v;
        return 0;
}

/* ---- one line ---------------------------------------------------------------------------------
 */

static int is_eof_line(const char *s, const char *end)
{
        /* s points after '#'. */
        while (s < end && IS(*s, C_BLANK))
                s++;
        if (end - s < 3 || memcmp(s, "EOF", 3) != 0)
                return 0;
        for (s += 3; s < end; s++)
                if (!IS(*s, C_BLANK))
                        return 0;
        return 1;
}

/*
 * A label value from just after its opening quote: unescaped in place (the write pointer never
 * passes the read pointer) and NUL-terminated; *sp ends after the closing quote. NULL, or why not.
 */
static const char *read_label_value(char **sp, char *end, size_t *ret_len)
{
        char *s = *sp, *w = s, *start = s;

        for (;;) {
                char *q = s;

                /* Copy the run up to the next quote or backslash in one go. */
                while (q < end && *q != '"' && *q != '\\')
                        q++;
                if (w != s)
                        memmove(w, s, (size_t)(q - s));
                w += q - s;
                s = q;
                if (s == end)
                        return "unterminated label value";
                if (*s == '"')
                        break;
                if (s + 1 == end)
                        return "unterminated label value";
                switch (s[1]) {
                case '\\':
                        *w++ = '\\';
                        break;
                case '"':
                        *w++ = '"';
                        break;
                case 'n':
                        *w++ = '\n';
                        break;
                default:
                        return "bad escape in label value";
                }
                s += 2;
        }
        *ret_len = (size_t)(w - start);
        *w = '\0'; /* w <= s, the closing quote, already read */
        *sp = s + 1;
        return NULL;
}

/* The labels from just after '{' to just after '}', into p->labels. NULL, or why not. */
static const char *read_labels(gc_prom_parser *p, char **sp, char *end, size_t *ret_nl)
{
        char *s = *sp;
        size_t nl = 0;

        for (;;) {
                const char *why;
                char *ln;

                while (s < end && IS(*s, C_BLANK))
                        s++;
                if (s < end && *s == '}')
                        break;
                if (s == end || !IS(*s, C_LNAME0))
                        return "label name expected";
                ln = s;
                while (s < end && IS(*s, C_LNAME))
                        s++;
                if (s < end && IS(*s, C_BLANK)) {
                        *s++ = '\0';
                        while (s < end && IS(*s, C_BLANK))
                                s++;
                }
                if (s == end || *s != '=')
                        return "'=' expected after label name";
                *s++ = '\0';
                while (s < end && IS(*s, C_BLANK))
                        s++;
                if (s == end || *s != '"')
                        return "'\"' expected before label value";
                s++;
                if (nl == GC_PROM_MAX_LABELS)
                        return "too many labels";
                p->labels[nl].name = ln;
                p->labels[nl].value = s;
                why = read_label_value(&s, end, &p->labels[nl].value_len);
                if (why)
                        return why;
                nl++;
                while (s < end && IS(*s, C_BLANK))
                        s++;
                if (s < end && *s == ',') {
                        s++;
                        continue;
                }
                if (s < end && *s == '}')
                        break;
                return "',' or '}' expected after label value";
        }
        *sp = s + 1;
        *ret_nl = nl;
        return NULL;
}

/* Parses buf[0..n) (mutable, buf[n] writable); delivers a sample or counts an error. */
static int parse_line(gc_prom_parser *p, char *buf, size_t n)
{
        char *s = buf, *end = buf + n;
        char *name, *name_end, *v, *v_end;
        size_t nl = 0;
        gc_prom_sample smp;

        p->st.lines++;
        if (n && end[-1] == '\r')
                end--;
        while (s < end && IS(*s, C_BLANK))
                s++;
        if (s == end)
                return 0;
        /* Names and values are handed out as C strings: a NUL inside would cut them short. */
        if (memchr(s, '\0', (size_t)(end - s))) {
                line_error(p, "NUL byte in line");
                return 0;
        }
        if (*s == '#') {
                if (is_eof_line(s + 1, end))
                        p->st.eof_seen = 1;
                return 0;
        }
        if (p->st.eof_seen) {
                line_error(p, "data after # EOF");
                return 0;
        }
        if (!IS(*s, C_NAME0)) {
                line_error(p, "metric name expected");
                return 0;
        }
        name = s;
        while (s < end && IS(*s, C_NAME))
                s++;
        name_end = s;
        while (s < end && IS(*s, C_BLANK))
                s++;
        if (s < end && *s == '{') {
                const char *why;

                s++;
                why = read_labels(p, &s, end, &nl);
                if (why) {
                        line_error(p, why);
                        return 0;
                }
                while (s < end && IS(*s, C_BLANK))
                        s++;
        } else if (s == name_end) {
                line_error(p, "blank expected after metric name");
                return 0;
        }
        /* The byte at name_end is a blank or '{', both consumed: terminate the name there. */
        v = s;
        while (s < end && !IS(*s, C_BLANK))
                s++;
        v_end = s;
        if (v == v_end) {
                line_error(p, "value expected");
                return 0;
        }
        memset(&smp, 0, sizeof(smp));
        if (gc_prom_parse_value(v, (size_t)(v_end - v), &smp.value) < 0) {
                line_error(p, "bad value");
                return 0;
        }
        while (s < end && IS(*s, C_BLANK))
                s++;
        if (s < end && *s != '#') {
                char *t = s;

                while (s < end && !IS(*s, C_BLANK))
                        s++;
                if (parse_timestamp(t, (size_t)(s - t), p->flags, &smp.timestamp_ms) < 0) {
                        line_error(p, "bad timestamp");
                        return 0;
                }
                smp.has_timestamp = 1;
                while (s < end && IS(*s, C_BLANK))
                        s++;
        }
        /* What may follow is an OpenMetrics exemplar (" # {...} v"), which we do not use. */
        if (s < end && *s != '#') {
                line_error(p, "unexpected text after value");
                return 0;
        }
        *name_end = '\0';
        if (smp.value >= GC_PROM_SENTINEL_MIN && !isinf(smp.value)) {
                smp.value = NAN;
                smp.missing = 1;
        }
        smp.name = name;
        smp.labels = p->labels;
        smp.n_labels = nl;
        smp.line_no = p->st.lines;
        p->st.samples++;
        return p->fn(&smp, p->userdata);
}

/* ---- feeding ----------------------------------------------------------------------------------
 */

static int line_reserve(gc_prom_parser *p, size_t need)
{
        size_t cap;
        char *n;

        if (p->line && need + 1 <= p->cap)
                return 0;
        cap = p->cap ? p->cap : 4096;
        while (cap < need + 1)
                cap *= 2;
        if (cap > p->max + 1)
                cap = p->max + 1;
        n = realloc(p->line, cap);
        if (!n)
                return -ENOMEM;
        p->line = n;
        p->cap = cap;
        return 0;
}

int gc_prom_parser_feed(gc_prom_parser *p, const void *data, size_t n)
{
        const char *s = data, *end;
        int r;

        if (!p || (!data && n))
                return -EINVAL;
        if (p->stopped)
                return p->stopped;
        end = s + n;
        p->st.bytes += n;
        while (s < end) {
                const char *nl = memchr(s, '\n', (size_t)(end - s));
                size_t seg = (size_t)((nl ? nl : end) - s);

                if (p->skipping) {
                        if (nl) {
                                p->skipping = 0;
                                p->st.lines++;
                                line_error(p, "line longer than the limit");
                        }
                } else if (p->len + seg > p->max) {
                        /* Too long: forget it and drop the rest of it as it comes. */
                        p->len = 0;
                        if (nl) {
                                p->st.lines++;
                                line_error(p, "line longer than the limit");
                        } else {
                                p->skipping = 1;
                        }
                } else {
                        if (line_reserve(p, p->len + seg) < 0)
                                return -ENOMEM;
                        memcpy(p->line + p->len, s, seg);
                        p->len += seg;
                        if (nl) {
                                size_t len = p->len;

                                p->len = 0;
                                r = parse_line(p, p->line, len);
                                if (r) {
                                        p->stopped = r;
                                        return r;
                                }
                        }
                }
                if (!nl)
                        break;
                s = nl + 1;
        }
        return 0;
}

int gc_prom_parser_finish(gc_prom_parser *p)
{
        int r = 0;

        if (!p)
                return -EINVAL;
        if (p->stopped)
                return p->stopped;
        if (p->skipping) {
                p->skipping = 0;
                p->st.lines++;
                line_error(p, "line longer than the limit");
        } else if (p->len) {
                size_t len = p->len;

                if (line_reserve(p, len) < 0)
                        return -ENOMEM;
                p->len = 0;
                r = parse_line(p, p->line, len);
                if (r)
                        p->stopped = r;
        }
        return r;
}

unsigned gc_prom_content_type_flags(const char *content_type)
{
        static const char om[] = "application/openmetrics-text";
        const char *s = content_type;

        if (!s)
                return 0;
        while (*s == ' ' || *s == '\t')
                s++;
        if (strncasecmp(s, om, sizeof(om) - 1) != 0)
                return 0;
        s += sizeof(om) - 1;
        return *s == '\0' || *s == ';' || *s == ' ' || *s == '\t' ? GC_PROM_OPENMETRICS : 0;
}

unsigned gc_prom_body_flags(const char *body, size_t n)
{
        if (!body)
                return 0;
        while (n && (body[n - 1] == '\n' || body[n - 1] == '\r' || body[n - 1] == ' ' ||
                     body[n - 1] == '\t'))
                n--;
        return n >= 5 && memcmp(body + n - 5, "# EOF", 5) == 0 && (n == 5 || body[n - 6] == '\n')
                   ? GC_PROM_OPENMETRICS
                   : 0;
}

int gc_prom_parse(const char *body, size_t n, size_t max_line_bytes, unsigned flags,
                  gc_prom_sample_fn fn, void *userdata, gc_prom_stats *ret_stats)
{
        gc_prom_parser *p = gc_prom_parser_new(max_line_bytes, flags, fn, userdata);
        int r;

        if (!p)
                return fn ? -ENOMEM : -EINVAL;
        r = gc_prom_parser_feed(p, body, n);
        if (r == 0)
                r = gc_prom_parser_finish(p);
        gc_prom_parser_stats(p, ret_stats);
        gc_prom_parser_free(p);
        return r;
}

/* ---- writing ----------------------------------------------------------------------------------
 */

static int escape(gc_buf *b, const char *s, int quotes)
{
        const char *run = s;
        int r;

        if (!s)
                return 0;
        for (; *s; s++) {
                const char *rep = NULL;

                if (*s == '\\')
                        rep = "\\\\";
                else if (*s == '\n')
                        rep = "\\n";
                else if (quotes && *s == '"')
                        rep = "\\\"";
                if (!rep)
                        continue;
                if ((r = gc_buf_append(b, run, (size_t)(s - run))) < 0 ||
                    (r = gc_buf_puts(b, rep)) < 0)
                        return r;
                run = s + 1;
        }
        return gc_buf_append(b, run, (size_t)(s - run));
}

int gc_prom_escape_label_value(gc_buf *b, const char *s)
{
        return escape(b, s, 1);
}

int gc_prom_escape_help(gc_buf *b, const char *s)
{
        return escape(b, s, 0);
}

int gc_prom_format_double(gc_buf *b, double v)
{
        char tmp[40];
        int prec, exp10, eprec;

        if (isnan(v))
                return gc_buf_puts(b, "NaN");
        if (isinf(v))
                return gc_buf_puts(b, v > 0 ? "+Inf" : "-Inf");
        if (v == 0)
                return gc_buf_puts(b, signbit(v) ? "-0" : "0");
        /* The fewest significant digits that read back to the same double. */
        for (prec = 1; prec < 17; prec++) {
                snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, v);
                if (strtod(tmp, NULL) == v)
                        break;
        }
        snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, v);
        exp10 = (int)strtol(strchr(tmp, 'e') + 1, NULL, 10);
        /* Go's strconv 'g' at shortest precision (what Prometheus writes): exponent form below
         * 1e-4 and from 1e6 on. */
        eprec = 6;
        if (exp10 < -4 || exp10 >= eprec) {
                /* Go writes at least two exponent digits, as C does. */
                return gc_buf_puts(b, tmp);
        }
        return gc_buf_printf(b, "%.*f", prec - 1 - exp10 > 0 ? prec - 1 - exp10 : 0, v);
}

int gc_prom_write_header(gc_buf *b, const char *name, const char *type, const char *help)
{
        int r;

        if (help) {
                if ((r = gc_buf_printf(b, "# HELP %s ", name)) < 0 ||
                    (r = gc_prom_escape_help(b, help)) < 0 || (r = gc_buf_puts(b, "\n")) < 0)
                        return r;
        }
        if (type)
                return gc_buf_printf(b, "# TYPE %s %s\n", name, type);
        return 0;
}

int gc_prom_write_sample(gc_buf *b, const char *name, const gc_prom_label *labels, size_t n_labels,
                         double value)
{
        int r, first = 1;

        if ((r = gc_buf_puts(b, name)) < 0)
                return r;
        for (size_t i = 0; i < n_labels; i++) {
                if (!labels[i].value)
                        continue;
                if ((r = gc_buf_puts(b, first ? "{" : ",")) < 0 ||
                    (r = gc_buf_puts(b, labels[i].name)) < 0 || (r = gc_buf_puts(b, "=\"")) < 0 ||
                    (r = gc_prom_escape_label_value(b, labels[i].value)) < 0 ||
                    (r = gc_buf_puts(b, "\"")) < 0)
                        return r;
                first = 0;
        }
        if (!first && (r = gc_buf_puts(b, "}")) < 0)
                return r;
        if ((r = gc_buf_puts(b, " ")) < 0 || (r = gc_prom_format_double(b, value)) < 0)
                return r;
        return gc_buf_puts(b, "\n");
}
