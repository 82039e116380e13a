/* util: bounded buffers, UTC time, number parsing and string interning. */
#include "util.h"

#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void gc_buf_init(gc_buf *b, size_t limit)
{
        b->data = NULL;
        b->len = 0;
        b->cap = 0;
        b->limit = limit;
        b->err = 0;
}

/* May reallocate b->data so that it holds need+1 bytes. */
static int gc__buf_reserve(gc_buf *b, size_t need)
{
        size_t cap;
        char *p;

        /* need + 1 (the NUL) must not wrap: a limit of SIZE_MAX is "as much as memory allows". */
        if (need > b->limit || need == SIZE_MAX)
                return -E2BIG;
        if (need + 1 <= b->cap)
                return 0;
        cap = b->cap ? b->cap : 256;
        while (cap < need + 1)
                cap = cap > SIZE_MAX / 2 ? need + 1 : cap * 2;
        if (b->limit < SIZE_MAX && cap > b->limit + 1)
                cap = b->limit + 1;
        p = realloc(b->data, cap);
        if (!p)
                return -ENOMEM;
        b->data = p;
        b->cap = cap;
        return 0;
}

int gc_buf_append(gc_buf *b, const void *p, size_t n)
{
        int r;

        if (b->err)
                return b->err;
        if (n > b->limit || b->len > b->limit - n)
                return b->err = -E2BIG;
        r = gc__buf_reserve(b, b->len + n);
        if (r < 0)
                return b->err = r;
        if (n)
                memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
        return 0;
}

int gc_buf_puts(gc_buf *b, const char *s)
{
        return gc_buf_append(b, s, strlen(s));
}

int gc_buf_vprintf(gc_buf *b, const char *fmt, va_list ap)
{
        va_list aq;
        int n, r;

        if (b->err)
                return b->err;
        va_copy(aq, ap);
        n = vsnprintf(NULL, 0, fmt, aq);
        va_end(aq);
        if (n < 0)
                return b->err = -EINVAL;
        if ((size_t)n > b->limit || b->len > b->limit - (size_t)n)
                return b->err = -E2BIG;
        r = gc__buf_reserve(b, b->len + (size_t)n);
        if (r < 0)
                return b->err = r;
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
        b->len += (size_t)n;
        return 0;
}

int gc_buf_printf(gc_buf *b, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = gc_buf_vprintf(b, fmt, ap);
        va_end(ap);
        return r;
}

int gc_buf_json_str(gc_buf *b, const char *s)
{
        const unsigned char *p;
        const unsigned char *run;
        int r;

        r = gc_buf_append(b, "\"", 1);
        for (p = run = (const unsigned char *)s; r == 0 && *p; p++) {
                char esc[8];

                if (*p >= 0x20 && *p != '"' && *p != '\\')
                        continue;
                r = gc_buf_append(b, run, (size_t)(p - run));
                if (r < 0)
                        break;
                switch (*p) {
                case '"':
                        r = gc_buf_append(b, "\\\"", 2);
                        break;
                case '\\':
                        r = gc_buf_append(b, "\\\\", 2);
                        break;
                case '\n':
                        r = gc_buf_append(b, "\\n", 2);
                        break;
                case '\t':
                        r = gc_buf_append(b, "\\t", 2);
                        break;
                case '\r':
                        r = gc_buf_append(b, "\\r", 2);
                        break;
                default:
                        snprintf(esc, sizeof(esc), "\\u%04x", *p);
                        r = gc_buf_append(b, esc, 6);
                }
                run = p + 1;
        }
        if (r == 0)
                r = gc_buf_append(b, run, (size_t)(p - run));
        if (r == 0)
                r = gc_buf_append(b, "\"", 1);
        return r;
}

void gc_buf_reset(gc_buf *b)
{
        b->len = 0;
        b->err = 0;
        if (b->data)
                b->data[0] = '\0';
}

void gc_buf_truncate(gc_buf *b, size_t len)
{
        if (len < b->len) {
                b->len = len;
                b->data[len] = '\0';
        }
        b->err = 0;
}

char *gc_buf_steal(gc_buf *b)
{
        char *p = b->data;

        if (!p)
                p = calloc(1, 1);
        b->data = NULL;
        b->len = 0;
        b->cap = 0;
        b->err = 0;
        return p;
}

void gc_buf_free(gc_buf *b)
{
        free(b->data);
        b->data = NULL;
        b->len = 0;
        b->cap = 0;
        b->err = 0;
}

int gc_read_file(const char *path, size_t limit, gc_buf *ret)
{
        char chunk[65536];
        int fd, r = 0;
        ssize_t n;

        gc_buf_init(ret, limit);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (;;) {
                n = read(fd, chunk, sizeof(chunk));
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        break;
                }
                if (n == 0)
                        break;
                r = gc_buf_append(ret, chunk, (size_t)n);
                if (r < 0)
                        break;
        }
        close(fd);
        if (r == 0 && !ret->data)
                r = gc_buf_append(ret, "", 0);
        if (r < 0)
                gc_buf_free(ret);
        return r;
}

/* ---- time ---------------------------------------------------------------------------------- */

/* Howard Hinnant's days_from_civil: exact for the proleptic Gregorian calendar. */
int64_t gc_days_from_civil(int64_t y, unsigned m, unsigned d)
{
        int64_t era, yoe, doy, doe;

        y -= m <= 2;
        era = (y >= 0 ? y : y - 399) / 400;
        yoe = y - era * 400;
        doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
}

void gc_civil_from_days(int64_t z, int64_t *ret_y, unsigned *ret_m, unsigned *ret_d)
{
        int64_t era, doe, yoe, y, doy, mp;
        unsigned m, d;

        z += 719468;
        era = (z >= 0 ? z : z - 146096) / 146097;
        doe = z - era * 146097;
        yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        y = yoe + era * 400;
        doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        mp = (5 * doy + 2) / 153;
        d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
        m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
        *ret_y = y + (m <= 2);
        *ret_m = m;
        *ret_d = d;
}

static int gc__digits(const char *s, size_t n, int *ret)
{
        int v = 0;

        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                v = v * 10 + (s[i] - '0');
        }
        *ret = v;
        return 0;
}

static int gc__days_in_month(int y, int m)
{
        static const int dim[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

        return m == 2 ? 28 + leap : dim[m - 1];
}

int gc_time_parse(const char *s, size_t n, int64_t *ret_sec)
{
        int y, mo, d, h, mi, se, oh = 0, om = 0, sign = 0;
        size_t i;
        int64_t t;

        if (!s || n < 20)
                return -EINVAL;
        if (s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
            s[13] != ':' || s[16] != ':')
                return -EINVAL;
        if (gc__digits(s, 4, &y) || gc__digits(s + 5, 2, &mo) || gc__digits(s + 8, 2, &d) ||
            gc__digits(s + 11, 2, &h) || gc__digits(s + 14, 2, &mi) || gc__digits(s + 17, 2, &se))
                return -EINVAL;
        if (mo < 1 || mo > 12 || d < 1 || d > gc__days_in_month(y, mo) || h > 23 || mi > 59 ||
            se > 60)
                return -EINVAL;
        i = 19;
        if (i < n && s[i] == '.') {
                size_t start = ++i;

                while (i < n && s[i] >= '0' && s[i] <= '9')
                        i++;
                if (i == start || i - start > 9)
                        return -EINVAL;
        }
        if (i >= n)
                return -EINVAL;
        if (s[i] == 'Z' || s[i] == 'z') {
                i++;
        } else if (s[i] == '+' || s[i] == '-') {
                sign = s[i] == '-' ? -1 : 1;
                if (n - i < 6 || s[i + 3] != ':' || gc__digits(s + i + 1, 2, &oh) ||
                    gc__digits(s + i + 4, 2, &om) || oh > 23 || om > 59)
                        return -EINVAL;
                i += 6;
        } else {
                return -EINVAL;
        }
        if (i != n)
                return -EINVAL;
        if (se == 60) /* a leap second counts as the next second's start */
                se = 59;
        t = gc_days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + se;
        t -= (int64_t)sign * (oh * 3600 + om * 60);
        *ret_sec = t;
        return 0;
}

int64_t gc_floor_div(int64_t a, int64_t b)
{
        int64_t q = a / b;

        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int gc_weekday(int64_t days)
{
        return (int)(((days % 7) + 7 + 3) % 7);
}

void gc_time_format(int64_t sec, char out[GC_TIME_LEN])
{
        int64_t days = gc_floor_div(sec, 86400);
        int64_t rem = sec - days * 86400;
        int64_t y;
        unsigned m, d;

        gc_civil_from_days(days, &y, &m, &d);
        if (y < 0 || y > 9999) {
                gc_strlcpy(out, y < 0 ? "0000-01-01T00:00:00Z" : "9999-12-31T23:59:59Z",
                           GC_TIME_LEN);
                return;
        }
        {
                /* Written digit by digit: every field is in range here, and the width is fixed. */
                unsigned v[6] = {
                    (unsigned)y,         m, d, (unsigned)(rem / 3600), (unsigned)(rem / 60 % 60),
                    (unsigned)(rem % 60)};
                static const char sep[] = "--T::Z";
                char *o = out;

                for (int i = 0; i < 6; i++) {
                        int w = i == 0 ? 4 : 2;

                        for (int k = w - 1; k >= 0; k--) {
                                o[k] = (char)('0' + v[i] % 10);
                                v[i] /= 10;
                        }
                        o += w;
                        *o++ = sep[i];
                }
                *o = '\0';
        }
}

int gc_duration_parse(const char *s, int64_t *ret_sec)
{
        int64_t v = 0, unit;
        const char *p = s;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        while (*p >= '0' && *p <= '9') {
                if (v > (INT64_MAX - 9) / 10)
                        return -ERANGE;
                v = v * 10 + (*p++ - '0');
        }
        switch (*p) {
        case 's':
                unit = 1;
                break;
        case 'm':
                unit = 60;
                break;
        case 'h':
                unit = 3600;
                break;
        case 'd':
                unit = 86400;
                break;
        case 'w':
                unit = 7 * 86400;
                break;
        default:
                return -EINVAL;
        }
        if (p[1] != '\0')
                return -EINVAL;
        if (v > (int64_t)100 * 366 * 86400 / unit)
                return -ERANGE;
        *ret_sec = v * unit;
        return 0;
}

/* ---- numbers ------------------------------------------------------------------------------- */

int gc_parse_int64(const char *s, int64_t *ret)
{
        char *end;
        long long v;

        if (!s || !*s || (*s != '-' && (*s < '0' || *s > '9')))
                return -EINVAL;
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (*end != '\0')
                return -EINVAL;
        *ret = v;
        return 0;
}

int gc_parse_double(const char *s, double *ret)
{
        char *end;
        double v;

        if (!s || !*s || (*s != '-' && *s != '+' && *s != '.' && (*s < '0' || *s > '9')))
                return -EINVAL;
        errno = 0;
        v = strtod(s, &end);
        if (errno == ERANGE || !isfinite(v))
                return -ERANGE;
        if (*end != '\0')
                return -EINVAL;
        *ret = v;
        return 0;
}

/* ---- string pool --------------------------------------------------------------------------- */

struct gc_strpool {
        char **slots; /* open addressing, NULL = empty; no deletion but by a sweep's rebuild */
        size_t nslots;
        size_t count;
        size_t bytes;
        size_t max_bytes;
        unsigned char *marks; /* one per slot while a sweep is under way, else NULL */
        char **grave;         /* the last sweep's strings, freed once older pins are gone */
        size_t n_grave;
        unsigned epoch;      /* sweeps done; a pin is the epoch it was taken in */
        atomic_uint pins[2]; /* pins held, by the parity of their epoch */
        uint64_t sweeps, freed, busy;
};

gc_strpool *gc_strpool_new(size_t max_bytes)
{
        gc_strpool *p = calloc(1, sizeof(*p));

        if (!p)
                return NULL;
        p->nslots = 64;
        p->slots = calloc(p->nslots, sizeof(char *));
        if (!p->slots) {
                free(p);
                return NULL;
        }
        p->max_bytes = max_bytes;
        return p;
}

static void gc__strpool_bury(gc_strpool *p)
{
        for (size_t i = 0; i < p->n_grave; i++)
                free(p->grave[i]);
        free(p->grave);
        p->grave = NULL;
        p->n_grave = 0;
}

gc_strpool *gc_strpool_free(gc_strpool *p)
{
        if (!p)
                return NULL;
        for (size_t i = 0; p->slots && i < p->nslots; i++)
                free(p->slots[i]);
        free(p->slots);
        free(p->marks);
        gc__strpool_bury(p);
        free(p);
        return NULL;
}

/* The free slot a string of length len goes to in a table of n slots (n a power of two). */
static size_t gc__strpool_place(char *const *slots, size_t n, const char *str, size_t len)
{
        size_t j = gc_hash(str, len, 0) & (n - 1);

        while (slots[j])
                j = (j + 1) & (n - 1);
        return j;
}

/* Reallocates the slot table to twice its size (and the marks of a sweep under way). */
static int gc__strpool_grow(gc_strpool *p)
{
        size_t n = p->nslots * 2;
        char **s = calloc(n, sizeof(char *));
        unsigned char *m = p->marks ? calloc(n, 1) : NULL;

        if (!s || (p->marks && !m)) {
                free(s);
                free(m);
                return -ENOMEM;
        }
        for (size_t i = 0; i < p->nslots; i++) {
                char *str = p->slots[i];
                size_t j;

                if (!str)
                        continue;
                j = gc__strpool_place(s, n, str, strlen(str));
                s[j] = str;
                if (m)
                        m[j] = p->marks[i];
        }
        free(p->slots);
        free(p->marks);
        p->slots = s;
        p->marks = m;
        p->nslots = n;
        return 0;
}

const char *gc_strpool_intern(gc_strpool *p, const char *s, size_t n)
{
        size_t j;
        char *copy;

        if (!p || (!s && n))
                return NULL;
        if (memchr(s, '\0', n))
                n = strlen(s);
        j = gc_hash(s, n, 0) & (p->nslots - 1);
        while (p->slots[j]) {
                if (strncmp(p->slots[j], s, n) == 0 && p->slots[j][n] == '\0') {
                        if (p->marks) /* interned while marking: in use */
                                p->marks[j] = 1;
                        return p->slots[j];
                }
                j = (j + 1) & (p->nslots - 1);
        }
        if (p->bytes + n + 1 > p->max_bytes)
                return NULL;
        if ((p->count + 1) * 4 > p->nslots * 3) {
                if (gc__strpool_grow(p) < 0)
                        return NULL;
                j = gc__strpool_place(p->slots, p->nslots, s, n);
        }
        copy = malloc(n + 1);
        if (!copy)
                return NULL;
        if (n)
                memcpy(copy, s, n);
        copy[n] = '\0';
        p->slots[j] = copy;
        if (p->marks)
                p->marks[j] = 1;
        p->count++;
        p->bytes += n + 1;
        return copy;
}

const char *gc_strpool_intern0(gc_strpool *p, const char *s)
{
        return s ? gc_strpool_intern(p, s, strlen(s)) : NULL;
}

size_t gc_strpool_bytes(const gc_strpool *p)
{
        return p ? p->bytes + p->nslots * sizeof(char *) : 0;
}

size_t gc_strpool_count(const gc_strpool *p)
{
        return p ? p->count : 0;
}

int gc_strpool_sweep_begin(gc_strpool *p)
{
        if (!p)
                return -EINVAL;
        /* The graveyard holds what the last sweep (at epoch - 1) took out: a pin of that epoch
           or older may still show it. Older ones were gone before that sweep began. */
        if (atomic_load(&p->pins[(p->epoch - 1u) & 1u]) != 0) {
                p->busy++;
                return -EBUSY;
        }
        gc__strpool_bury(p);
        free(p->marks);
        p->marks = calloc(p->nslots, 1);
        return p->marks ? 0 : -ENOMEM;
}

void gc_strpool_mark(gc_strpool *p, const char *s)
{
        size_t j;

        if (!p || !p->marks || !s)
                return;
        j = gc_hash(s, strlen(s), 0) & (p->nslots - 1);
        for (; p->slots[j]; j = (j + 1) & (p->nslots - 1)) {
                if (p->slots[j] == s) {
                        p->marks[j] = 1;
                        return;
                }
        }
}

int gc_strpool_sweep(gc_strpool *p, size_t *ret_freed)
{
        size_t live = 0, n = 64, dead = 0, bytes = 0;
        char **slots, **grave;

        if (!p || !p->marks)
                return -EINVAL;
        for (size_t i = 0; i < p->nslots; i++) {
                live += p->slots[i] && p->marks[i];
                dead += p->slots[i] && !p->marks[i];
        }
        while ((live + 1) * 4 > n * 3)
                n *= 2;
        slots = calloc(n, sizeof(char *));
        grave = malloc((dead ? dead : 1) * sizeof(char *));
        if (!slots || !grave) {
                free(slots);
                free(grave);
                return -ENOMEM;
        }
        p->n_grave = 0;
        for (size_t i = 0; i < p->nslots; i++) {
                char *str = p->slots[i];
                size_t len;

                if (!str)
                        continue;
                len = strlen(str);
                if (!p->marks[i]) {
                        grave[p->n_grave++] = str;
                        continue;
                }
                bytes += len + 1;
                slots[gc__strpool_place(slots, n, str, len)] = str;
        }
        free(p->slots);
        free(p->marks);
        p->marks = NULL;
        p->slots = slots;
        p->nslots = n;
        p->count = live;
        p->bytes = bytes;
        p->grave = grave;
        p->epoch++;
        p->sweeps++;
        p->freed += dead;
        if (ret_freed)
                *ret_freed = dead;
        return 0;
}

unsigned gc_strpool_pin(gc_strpool *p)
{
        if (!p)
                return 0;
        atomic_fetch_add(&p->pins[p->epoch & 1u], 1);
        return p->epoch;
}

void gc_strpool_unpin(gc_strpool *p, unsigned pin)
{
        if (p)
                atomic_fetch_sub(&p->pins[pin & 1u], 1);
}

void gc_strpool_stats_get(const gc_strpool *p, gc_strpool_stats *ret)
{
        memset(ret, 0, sizeof(*ret));
        if (!p)
                return;
        ret->strings = p->count;
        ret->bytes = gc_strpool_bytes(p);
        ret->graveyard = p->n_grave;
        ret->sweeps = p->sweeps;
        ret->freed = p->freed;
        ret->busy = p->busy;
}

size_t gc_strlcpy(char *dst, const char *src, size_t size)
{
        size_t n = strlen(src);

        if (size) {
                size_t c = n < size - 1 ? n : size - 1;

                memcpy(dst, src, c);
                dst[c] = '\0';
        }
        return n;
}

void gc_diag_add(gc_diag *d, const char *fmt, ...)
{
        gc_buf b;
        va_list ap;

        if (!d)
                return;
        d->n_total++;
        if (d->n_kept >= GC_DIAG_KEEP)
                return;
        gc_buf_init(&b, 1024);
        va_start(ap, fmt);
        if (gc_buf_vprintf(&b, fmt, ap) < 0) {
                gc_buf_free(&b);
                va_end(ap);
                return;
        }
        va_end(ap);
        d->msgs[d->n_kept++] = gc_buf_steal(&b);
}

void gc_diag_clear(gc_diag *d)
{
        for (size_t i = 0; i < d->n_kept; i++)
                free(d->msgs[i]);
        d->n_kept = 0;
        d->n_total = 0;
}

/* ---- hash tables ---------------------------------------------------------------------------- */

uint64_t gc_hash(const void *p, size_t n, uint64_t seed)
{
        const unsigned char *c = p;
        uint64_t h = 1469598103934665603ULL ^ seed;

        for (size_t i = 0; i < n; i++) {
                h ^= c[i];
                h *= 1099511628211ULL;
        }
        return h;
}

uint64_t gc_hash_ptr(uint64_t h, const void *p)
{
        h ^= (uint64_t)(uintptr_t)p;
        h *= 0x9e3779b97f4a7c15ULL;
        return h ^ (h >> 32);
}

uint32_t gc_hash_fin(uint64_t h)
{
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        h *= 0xc4ceb9fe1a85ec53ULL;
        h ^= h >> 33;
        return (uint32_t)h;
}

int gc_index_find(const gc_index *t, uint32_t h, gc_index_eq_fn eq, const void *ctx,
                  size_t *ret_pos)
{
        size_t mask, p;

        if (!t->nslots) {
                *ret_pos = 0;
                return 0;
        }
        mask = t->nslots - 1;
        for (p = h & mask; t->s[p].ix; p = (p + 1) & mask) {
                if (t->s[p].h == h && eq(ctx, t->s[p].ix - 1)) {
                        *ret_pos = p;
                        return 1;
                }
        }
        *ret_pos = p;
        return 0;
}

static void gc__index_place(gc_index_slot *s, size_t nslots, gc_index_slot e)
{
        size_t mask = nslots - 1, p;

        for (p = e.h & mask; s[p].ix; p = (p + 1) & mask)
                ;
        s[p] = e;
}

int gc_index_reserve(gc_index *t, size_t n)
{
        size_t want = t->nslots ? t->nslots : 16;
        gc_index_slot *s;

        if (n >= GC_INDEX_MAX_ROWS)
                return -E2BIG;
        while (n * 4 > want * 3)
                want *= 2;
        if (want == t->nslots)
                return 0;
        s = calloc(want, sizeof(*s));
        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < t->nslots; i++)
                if (t->s[i].ix)
                        gc__index_place(s, want, t->s[i]);
        free(t->s);
        t->s = s;
        t->nslots = want;
        return 0;
}

void gc_index_fill(gc_index *t, size_t pos, uint32_t h, size_t row)
{
        t->s[pos].h = h;
        t->s[pos].ix = (uint32_t)(row + 1);
        t->count++;
}

void gc_index_add_new(gc_index *t, uint32_t h, size_t row)
{
        gc_index_slot e = {h, (uint32_t)(row + 1)};

        gc__index_place(t->s, t->nslots, e);
        t->count++;
}

int gc_index_insert(gc_index *t, uint32_t h, size_t row)
{
        int r = gc_index_reserve(t, t->count + 1);

        if (r < 0)
                return r;
        gc_index_add_new(t, h, row);
        return 0;
}

void gc_index_del(gc_index *t, size_t pos)
{
        size_t mask = t->nslots - 1, j = pos;

        /* Pull later members of the probe run back over the hole so lookups never stop early:
           a member moves unless its home lies cyclically in (hole, its slot]. */
        for (;;) {
                size_t home;

                j = (j + 1) & mask;
                if (!t->s[j].ix)
                        break;
                home = t->s[j].h & mask;
                if (pos <= j ? (pos < home && home <= j) : (pos < home || home <= j))
                        continue;
                t->s[pos] = t->s[j];
                pos = j;
        }
        t->s[pos].h = 0;
        t->s[pos].ix = 0;
        t->count--;
}

int gc_index_del_row(gc_index *t, uint32_t h, size_t row)
{
        size_t mask = t->nslots - 1;

        if (!t->nslots)
                return -ENOENT;
        for (size_t p = h & mask; t->s[p].ix; p = (p + 1) & mask) {
                if (t->s[p].ix == row + 1) {
                        gc_index_del(t, p);
                        return 0;
                }
        }
        return -ENOENT;
}

void gc_index_renumber(gc_index *t, uint32_t h, size_t from, size_t to)
{
        size_t mask = t->nslots - 1;

        if (!t->nslots)
                return;
        for (size_t p = h & mask; t->s[p].ix; p = (p + 1) & mask) {
                if (t->s[p].ix == from + 1) {
                        t->s[p].ix = (uint32_t)(to + 1);
                        return;
                }
        }
}

void gc_index_clear(gc_index *t)
{
        if (t->s)
                memset(t->s, 0, t->nslots * sizeof(*t->s));
        t->count = 0;
}

int gc_index_dup(gc_index *dst, const gc_index *src)
{
        *dst = *src;
        if (!src->nslots)
                return 0;
        dst->s = malloc(src->nslots * sizeof(*src->s));
        if (!dst->s) {
                memset(dst, 0, sizeof(*dst));
                return -ENOMEM;
        }
        memcpy(dst->s, src->s, src->nslots * sizeof(*src->s));
        return 0;
}

void gc_index_free(gc_index *t)
{
        free(t->s);
        t->s = NULL;
        t->nslots = 0;
        t->count = 0;
}

size_t gc_index_bytes(const gc_index *t)
{
        return t->nslots * sizeof(gc_index_slot);
}

/* ---- pointer map: rows of (key, value) under a gc_index ------------------------------------ */

typedef struct gc__ptrmap_key {
        const gc_ptrmap_row *rows;
        const void *key;
} gc__ptrmap_key;

static int gc__ptrmap_eq(const void *ctx, size_t row)
{
        const gc__ptrmap_key *k = ctx;

        return k->rows[row].key == k->key;
}

static uint32_t gc__ptrmap_hash(const void *key)
{
        return gc_hash_fin(gc_hash_ptr(0, key));
}

/* 1 and *ret_pos when key is in m (a non-empty map), else 0. */
static int gc__ptrmap_find(const gc_ptrmap *m, const void *key, uint32_t h, size_t *ret_pos)
{
        gc__ptrmap_key k = {m->rows, key};

        return gc_index_find(&m->ix, h, gc__ptrmap_eq, &k, ret_pos);
}

int gc_ptrmap_get(const gc_ptrmap *m, const void *key, size_t *ret_val)
{
        size_t pos;

        if (!m || !key || !gc__ptrmap_find(m, key, gc__ptrmap_hash(key), &pos))
                return -ENOENT;
        *ret_val = m->rows[gc_index_row(&m->ix, pos)].val;
        return 0;
}

int gc_ptrmap_put(gc_ptrmap *m, const void *key, size_t val)
{
        uint32_t h;
        size_t pos, n, cap;
        int r;

        if (!m || !key)
                return -EINVAL;
        h = gc__ptrmap_hash(key);
        if (gc__ptrmap_find(m, key, h, &pos)) {
                m->rows[gc_index_row(&m->ix, pos)].val = val;
                return 0;
        }
        n = m->ix.count;
        /* The rows' room is not stored (the map stays 32 bytes): gc_grow doubles it from 16, so
           it is full at 16 rows and at each larger power of two (deleting never shrinks it). */
        cap = !m->rows ? 0 : (n >= 16 && !(n & (n - 1))) ? n : n + 1;
        r = gc_grow((void **)&m->rows, &cap, n, sizeof(*m->rows), 16, 0);
        if (r < 0)
                return r;
        r = gc_index_insert(&m->ix, h, n);
        if (r < 0)
                return r;
        m->rows[n].key = key;
        m->rows[n].val = val;
        return 0;
}

int gc_ptrmap_del(gc_ptrmap *m, const void *key)
{
        size_t pos, row, last;

        if (!m || !key || !gc__ptrmap_find(m, key, gc__ptrmap_hash(key), &pos))
                return -ENOENT;
        row = gc_index_row(&m->ix, pos);
        last = m->ix.count - 1;
        gc_index_del(&m->ix, pos);
        if (row != last) {
                gc_index_renumber(&m->ix, gc__ptrmap_hash(m->rows[last].key), last, row);
                m->rows[row] = m->rows[last];
        }
        return 0;
}

void gc_ptrmap_mark_keys(const gc_ptrmap *m, gc_strpool *p)
{
        for (size_t i = 0; m && i < m->ix.count; i++)
                gc_strpool_mark(p, (const char *)m->rows[i].key);
}

void gc_ptrmap_clear(gc_ptrmap *m)
{
        if (m)
                gc_index_clear(&m->ix);
}

void gc_ptrmap_free(gc_ptrmap *m)
{
        if (!m)
                return;
        free(m->rows);
        gc_index_free(&m->ix);
        m->rows = NULL;
}

void gc_verrf(char *err, size_t errlen, const char *fmt, va_list ap)
{
        if (err && errlen)
                vsnprintf(err, errlen, fmt, ap);
}

void gc_errf(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        gc_verrf(err, errlen, fmt, ap);
        va_end(ap);
}

int gc_grow(void **arr, size_t *cap, size_t n, size_t elem, size_t first, size_t limit)
{
        size_t nc;
        void *p;

        if (elem == 0)
                return -EINVAL;
        if (limit && n >= limit)
                return -E2BIG;
        if (n < *cap)
                return 0;
        nc = *cap ? (*cap > SIZE_MAX / 2 ? SIZE_MAX : *cap * 2) : (first ? first : 16);
        if (nc <= n) {
                if (n == SIZE_MAX)
                        return -ENOMEM;
                nc = n + 1;
        }
        if (limit && nc > limit)
                nc = limit;
        if (nc > SIZE_MAX / elem)
                return -ENOMEM;
        p = realloc(*arr, nc * elem);
        if (!p)
                return -ENOMEM;
        *arr = p;
        *cap = nc;
        return 0;
}

void gc_malloc_tune(void)
{
#ifdef __GLIBC__
        mallopt(M_ARENA_MAX, 2);
        mallopt(M_MMAP_THRESHOLD, 128 * 1024);
        mallopt(M_TRIM_THRESHOLD, 256 * 1024);
#endif
}

void gc_malloc_give_back(void)
{
#ifdef __GLIBC__
        malloc_trim(0);
#endif
}
