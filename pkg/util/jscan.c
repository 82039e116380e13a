/* jscan: the elements of a Kubernetes list's "items", one at a time, from JSON fed in pieces. */
#include "jscan.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/*
 * The root object is read byte by byte (a state per place between tokens); a value is read by
 * gc__value, which skips runs of bytes that are neither a quote nor a bracket, and strings with
 * memchr, and keeps across pieces only a counter, a bit stack and whether it is in a string
 * after a backslash. A value that starts and ends in one piece is passed in place, so a whole
 * document fed at once is never copied.
 */

enum {
        GC__J_START = 0,   /* before the root's '{' */
        GC__J_FIRST_KEY,   /* a key or '}' */
        GC__J_KEY,         /* a key, after ',' */
        GC__J_IN_KEY,      /* inside a key's quotes */
        GC__J_COLON,       /* ':' */
        GC__J_VALUE,       /* a member's value */
        GC__J_NULL,        /* "items": null, being matched */
        GC__J_AFTER,       /* ',' or '}' after a member */
        GC__J_ITEMS_FIRST, /* an element or ']' */
        GC__J_ITEMS_NEXT,  /* an element, after ',' */
        GC__J_AFTER_ITEM,  /* ',' or ']' after an element */
        GC__J_IN_VALUE,    /* inside a value (a member's or an element's): gc__value */
        GC__J_DONE,        /* after the root's '}': white space only */
};

/* Bytes that end a run the value reader skips: quotes and brackets. */
static const unsigned char gc__special[256] = {
    ['"'] = 1, ['{'] = 1, ['}'] = 1, ['['] = 1, [']'] = 1,
};

/* Bytes that end a scalar: the specials, ',', ':' and white space. */
static const unsigned char gc__delim[256] = {
    ['"'] = 1, ['{'] = 1, ['}'] = 1,  ['['] = 1,  [']'] = 1,  [','] = 1,
    [':'] = 1, [' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1,
};

static int gc__is_ws(unsigned char c)
{
        return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* Sets the sticky error and writes where into err (when given). */
static int gc__fail(gc_jscan *s, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int gc__fail(gc_jscan *s, char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;

        if (err && errlen) {
                va_start(ap, fmt);
                vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
        }
        s->err_ = -EINVAL;
        return -EINVAL;
}

/* The value's place in a message: "items[3]" or "document: metadata". */
static int gc__fail_value(gc_jscan *s, char *err, size_t errlen, const char *msg)
{
        int n = (int)(s->key_len_ < sizeof(s->key_) ? s->key_len_ : sizeof(s->key_));

        if (s->st_ == GC__J_IN_VALUE && s->what_ == GC_JSCAN_ITEM)
                return gc__fail(s, err, errlen, "items[%zu]: %s", s->n_items, msg);
        return gc__fail(s, err, errlen, "document: %.*s: %s", n, s->key_, msg);
}

/* What the state expected, when the input holds something else or ends there. */
static int gc__expect(gc_jscan *s, char *err, size_t errlen)
{
        static const char *const msg[] = {
            [GC__J_START] = "not a JSON object",
            [GC__J_FIRST_KEY] = "document: object key expected",
            [GC__J_KEY] = "document: object key expected",
            [GC__J_IN_KEY] = "document: unterminated string",
            [GC__J_COLON] = "document: ':' expected",
            [GC__J_NULL] = "items: not an array, or given twice",
            [GC__J_AFTER] = "document: ',' or '}' expected",
            [GC__J_DONE] = "document: data after the end",
        };

        switch (s->st_) {
        case GC__J_ITEMS_FIRST:
        case GC__J_ITEMS_NEXT:
                return gc__fail(s, err, errlen, "items[%zu]: value expected", s->n_items);
        case GC__J_AFTER_ITEM:
                return gc__fail(s, err, errlen, "items[%zu]: ',' or ']' expected after it",
                                s->n_items - 1);
        default:
                /* Values report their own errors; the root's states are all named. */
                return gc__fail(s, err, errlen, "%s", msg[s->st_] ? msg[s->st_] : "malformed");
        }
}

void gc_jscan_init(gc_jscan *s, size_t max_value, gc_jscan_fn fn, void *ud)
{
        memset(s, 0, sizeof(*s));
        s->fn_ = fn;
        s->ud_ = ud;
        s->max_value_ = max_value ? max_value : 1;
        s->st_ = GC__J_START;
        /* gc_buf reserves limit + 1 bytes: a limit of SIZE_MAX would wrap. */
        gc_buf_init(&s->cap_, max_value > SIZE_MAX / 2 ? SIZE_MAX / 2 : max_value);
}

void gc_jscan_release(gc_jscan *s)
{
        if (!s)
                return;
        gc_buf_free(&s->cap_);
}

static int gc__key_is(const gc_jscan *s, const char *lit)
{
        size_t n = strlen(lit);

        return s->key_len_ == n && memcmp(s->key_, lit, n) == 0;
}

/*
 * p is inside a string (s->esc_: its first byte is escaped). Returns the byte after the closing
 * quote, or NULL when the piece ends first (s->esc_ then says whether it ended in an escape).
 */
static const char *gc__string(gc_jscan *s, const char *p, const char *end)
{
        const char *from, *q, *b;

        if (s->esc_) {
                if (p == end)
                        return NULL;
                p++;
                s->esc_ = 0;
        }
        /* No backslash run before from reaches past it: from follows a quote or an escape. */
        from = p;
        for (;;) {
                q = memchr(p, '"', (size_t)(end - p));
                if (!q) {
                        for (b = end; b > from && b[-1] == '\\'; b--)
                                ;
                        s->esc_ = (int)((end - b) & 1);
                        return NULL;
                }
                /* An odd run of backslashes before the quote escapes it. */
                for (b = q; b > from && b[-1] == '\\'; b--)
                        ;
                if (((q - b) & 1) == 0) {
                        s->in_str_ = 0;
                        return q + 1;
                }
                p = q + 1;
        }
}

/*
 * Reads the value in progress from p. Returns 1 with *ret_p after it when it ended, 0 when the
 * piece ended first, -1 with *ret_msg when it is malformed.
 */
static int gc__value(gc_jscan *s, const char *p, const char *end, const char **ret_p,
                     const char **ret_msg)
{
        if (s->first_ != '{' && s->first_ != '[' && s->first_ != '"') {
                while (p < end && !gc__delim[(unsigned char)*p])
                        p++;
                *ret_p = p;
                return p < end;
        }
        for (;;) {
                unsigned char c;

                if (s->in_str_) {
                        p = gc__string(s, p, end);
                        if (!p)
                                return 0;
                        if (s->vdepth_ == 0) {
                                *ret_p = p;
                                return 1;
                        }
                }
                while (p < end && !gc__special[(unsigned char)*p])
                        p++;
                if (p == end)
                        return 0;
                c = (unsigned char)*p++;
                if (c == '"') {
                        s->in_str_ = 1;
                } else if (c == '{' || c == '[') {
                        int d = s->vdepth_;

                        if (d >= GC_JSCAN_MAX_DEPTH) {
                                *ret_msg = "nesting too deep";
                                return -1;
                        }
                        if (c == '{')
                                s->stack_[d / 8] |= (unsigned char)(1u << (d % 8));
                        else
                                s->stack_[d / 8] &= (unsigned char)~(1u << (d % 8));
                        s->vdepth_ = ++d;
                        if (d > s->vmax_)
                                s->vmax_ = d;
                } else {
                        int d = --s->vdepth_;

                        if (((s->stack_[d / 8] >> (d % 8)) & 1) != (c == '}')) {
                                *ret_msg = "mismatched bracket";
                                return -1;
                        }
                        if (d == 0) {
                                *ret_p = p;
                                return 1;
                        }
                }
        }
}

/* A value starts at c: 0, or -1 when c cannot start one. */
static int gc__value_begin(gc_jscan *s, unsigned char c, gc_jscan_what what)
{
        if (gc__delim[c] && c != '"' && c != '{' && c != '[')
                return -1;
        s->what_ = what;
        s->first_ = (char)c;
        s->vdepth_ = s->vmax_ = 0;
        s->in_str_ = 0; /* a string's opening quote is read by gc__value */
        s->esc_ = 0;
        s->dropped_ = 0;
        s->vlen_ = 0;
        gc_buf_reset(&s->cap_);
        s->st_ = GC__J_IN_VALUE;
        return 0;
}

/* The part of a reported value in this piece, [from, to), when the value goes on. */
static int gc__keep(gc_jscan *s, const char *from, const char *to, char *err, size_t errlen)
{
        size_t n = (size_t)(to - from);
        int r;

        if (s->what_ == 0 || s->dropped_) {
                s->vlen_ += n;
                return 0;
        }
        if (n > s->max_value_ - s->vlen_) {
                s->dropped_ = 1;
                s->vlen_ += n;
                gc_buf_free(&s->cap_);
                return 0;
        }
        r = gc_buf_append(&s->cap_, from, n);
        if (r < 0) {
                if (err && errlen)
                        snprintf(err, errlen, "out of memory");
                s->err_ = r;
                return r;
        }
        s->vlen_ += n;
        return 0;
}

/* The value ended: [from, to) is its last part in this piece. */
static int gc__value_end(gc_jscan *s, const char *from, const char *to, char *err, size_t errlen)
{
        gc_jscan_value v;
        int r, depth = s->vmax_;

        if (depth > s->depth)
                s->depth = depth;
        if (s->what_ == GC_JSCAN_ITEM)
                s->st_ = GC__J_AFTER_ITEM;
        else
                s->st_ = GC__J_AFTER;
        if (s->what_ == 0)
                return 0;
        memset(&v, 0, sizeof(v));
        v.what = s->what_;
        v.index = s->n_items;
        v.depth = depth;
        v.first = s->first_;
        if (s->vlen_ == 0 && (size_t)(to - from) <= s->max_value_) {
                v.json = from; /* all in this piece: in place */
                v.len = (size_t)(to - from);
        } else {
                r = gc__keep(s, from, to, err, errlen);
                if (r < 0)
                        return r;
                v.json = s->dropped_ ? NULL : s->cap_.data;
                v.len = s->vlen_;
        }
        if (s->what_ == GC_JSCAN_ITEM)
                s->n_items++;
        r = s->fn_(s->ud_, &v);
        /* One huge value must not pin its copy for the rest of the list. */
        if (s->cap_.cap > 65536)
                gc_buf_free(&s->cap_);
        else
                gc_buf_reset(&s->cap_);
        if (r < 0)
                s->err_ = r;
        return r < 0 ? r : 0;
}

/* The member whose key was just read takes the value starting at c. */
static int gc__member(gc_jscan *s, unsigned char c, char *err, size_t errlen)
{
        gc_jscan_what what = 0;

        if (gc__key_is(s, "items")) {
                if (s->items)
                        return gc__fail(s, err, errlen, "items: not an array, or given twice");
                if (c == '[') {
                        s->items = 1;
                        s->st_ = GC__J_ITEMS_FIRST;
                        return 0;
                }
                if (c == 'n') {
                        s->lit_ = 1;
                        s->st_ = GC__J_NULL;
                        return 0;
                }
                return gc__fail(s, err, errlen, "items: not an array, or given twice");
        }
        if (c == '{' && gc__key_is(s, "metadata"))
                what = GC_JSCAN_METADATA;
        else if (c == '"' && gc__key_is(s, "kind"))
                what = GC_JSCAN_KIND;
        if (gc__value_begin(s, c, what) < 0)
                return gc__fail_value(s, err, errlen, "value expected");
        return 0;
}

/*
 * One byte of the root object outside any value. A value that starts at c leaves the state at
 * GC__J_IN_VALUE, c unread: it is the value's first byte.
 */
static int gc__root(gc_jscan *s, unsigned char c, char *err, size_t errlen)
{
        if (gc__is_ws(c) && s->st_ != GC__J_IN_KEY && s->st_ != GC__J_NULL)
                return 0;
        switch (s->st_) {
        case GC__J_START:
                if (c != '{')
                        return gc__expect(s, err, errlen);
                s->st_ = GC__J_FIRST_KEY;
                return 0;
        case GC__J_FIRST_KEY:
        case GC__J_KEY:
                if (c == '}' && s->st_ == GC__J_FIRST_KEY) {
                        s->st_ = GC__J_DONE;
                        return 0;
                }
                if (c != '"')
                        return gc__expect(s, err, errlen);
                s->key_len_ = 0;
                s->esc_ = 0;
                s->st_ = GC__J_IN_KEY;
                return 0;
        case GC__J_IN_KEY:
                if (s->esc_) {
                        s->esc_ = 0;
                } else if (c == '\\') {
                        s->esc_ = 1;
                } else if (c == '"') {
                        s->st_ = GC__J_COLON;
                        return 0;
                }
                if (s->key_len_ < sizeof(s->key_))
                        s->key_[s->key_len_] = (char)c;
                s->key_len_++;
                return 0;
        case GC__J_COLON:
                if (c != ':')
                        return gc__expect(s, err, errlen);
                s->st_ = GC__J_VALUE;
                return 0;
        case GC__J_VALUE:
                return gc__member(s, c, err, errlen);
        case GC__J_NULL:
                if (c != (unsigned char)"null"[s->lit_])
                        return gc__expect(s, err, errlen);
                if (++s->lit_ == 4) {
                        s->items = 1;
                        s->st_ = GC__J_AFTER;
                }
                return 0;
        case GC__J_AFTER:
                if (c == ',')
                        s->st_ = GC__J_KEY;
                else if (c == '}')
                        s->st_ = GC__J_DONE;
                else
                        return gc__expect(s, err, errlen);
                return 0;
        case GC__J_ITEMS_FIRST:
        case GC__J_ITEMS_NEXT:
                if (c == ']' && s->st_ == GC__J_ITEMS_FIRST) {
                        s->st_ = GC__J_AFTER;
                        return 0;
                }
                if (gc__value_begin(s, c, GC_JSCAN_ITEM) < 0)
                        return gc__expect(s, err, errlen);
                return 0;
        case GC__J_AFTER_ITEM:
                if (c == ',')
                        s->st_ = GC__J_ITEMS_NEXT;
                else if (c == ']')
                        s->st_ = GC__J_AFTER;
                else
                        return gc__expect(s, err, errlen);
                return 0;
        default:
                return gc__expect(s, err, errlen);
        }
}

int gc_jscan_feed(gc_jscan *s, const char *p, size_t n, char *err, size_t errlen)
{
        const char *end = p + n, *vstart = p; /* where the value in progress starts here */
        int r;

        if (s->err_)
                return s->err_;
        while (p < end) {
                const char *q = NULL, *msg = "";

                if (s->st_ != GC__J_IN_VALUE) {
                        r = gc__root(s, (unsigned char)*p, err, errlen);
                        if (r < 0)
                                return r;
                        if (s->st_ == GC__J_IN_VALUE)
                                vstart = p;
                        else
                                p++;
                        continue;
                }
                r = gc__value(s, p, end, &q, &msg);
                if (r < 0)
                        return gc__fail_value(s, err, errlen, msg);
                if (r == 0)
                        return gc__keep(s, vstart, end, err, errlen);
                r = gc__value_end(s, vstart, q, err, errlen);
                if (r < 0)
                        return r;
                p = q;
        }
        return 0;
}

int gc_jscan_finish(gc_jscan *s, char *err, size_t errlen)
{
        if (s->err_)
                return s->err_;
        switch (s->st_) {
        case GC__J_DONE:
                return 0;
        case GC__J_VALUE:
                if (gc__key_is(s, "items"))
                        return gc__fail(s, err, errlen, "items: not an array, or given twice");
                return gc__fail_value(s, err, errlen, "value expected");
        case GC__J_IN_VALUE:
                if (s->first_ == '"' || s->in_str_)
                        return gc__fail_value(s, err, errlen, "unterminated string");
                if (s->first_ == '{' || s->first_ == '[')
                        return gc__fail_value(s, err, errlen, "unexpected end of document");
                /* A scalar ends with the input; what must follow it is missing. */
                if (s->what_ == GC_JSCAN_ITEM)
                        return gc__fail(s, err, errlen, "items[%zu]: ',' or ']' expected after it",
                                        s->n_items);
                s->st_ = GC__J_AFTER;
                return gc__expect(s, err, errlen);
        default:
                return gc__expect(s, err, errlen);
        }
}
