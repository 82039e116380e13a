/* kube scan: yields the "items" of a LIST body one at a time, as the bytes arrive. */
#include "kube_int.h"

#include <errno.h>
#include <string.h>

/*
 * A page of 500 pods is megabytes of JSON and several times that as a cJSON tree. The scanner
 * walks the top-level object byte by byte, tracking only strings and bracket nesting, copies
 * each element of "items" and the "metadata" object, and skips everything else. An element is
 * handed to cJSON alone, so memory stays near one object whatever the page size. Elements are
 * not validated here: cJSON does that when the caller parses one.
 */

enum {
        GC__S_START = 0, /* before the top-level '{' */
        GC__S_KEY,       /* a key or '}' */
        GC__S_IN_KEY,
        GC__S_COLON,
        GC__S_VALUE,
        GC__S_SCALAR, /* a number or literal at the top level */
        GC__S_STRING, /* a string value at the top level */
        GC__S_NESTED, /* an object or array value at the top level */
        GC__S_ITEMS,  /* inside "items": [ ... ], between elements */
        GC__S_ITEM,   /* inside one element */
        GC__S_COMMA,  /* ',' or '}' */
        GC__S_DONE,   /* after the final '}': white space only */
};

#define GC__SCAN_MAX_DEPTH (1 << 20) /* only to keep the counter sane; nothing recurses */
#define GC__CAP_META       1
#define GC__CAP_ITEM       2

void gc__kube_scan_init(gc__kube_scan *s, size_t max_item,
                        int (*item)(void *ud, const char *json, size_t len), void *ud)
{
        memset(s, 0, sizeof(*s));
        s->st = GC__S_START;
        s->max_item = max_item;
        gc_buf_init(&s->cap, max_item);
        gc_buf_init(&s->meta, GC__KUBE_MAX_META);
        s->item = item;
        s->ud = ud;
}

void gc__kube_scan_release(gc__kube_scan *s)
{
        if (!s)
                return;
        gc_buf_free(&s->cap);
        gc_buf_free(&s->meta);
}

int gc__kube_scan_finish(const gc__kube_scan *s)
{
        return s->st == GC__S_DONE ? 0 : -EINVAL;
}

static int gc__is_ws(unsigned char c)
{
        return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* Copies a run of the value being captured; an item that grows past its cap is dropped. */
static int gc__scan_copy(gc__kube_scan *s, const char *p, size_t n)
{
        int r;

        if (!s->capturing || n == 0)
                return 0;
        r = gc_buf_append(&s->cap, p, n);
        if (r == -E2BIG && s->cap_kind == GC__CAP_ITEM) {
                s->dropping = 1;
                s->capturing = 0;
                return 0;
        }
        return r;
}

/* The captured value is complete. */
static int gc__scan_done_value(gc__kube_scan *s)
{
        int r = 0;

        if (s->cap_kind == GC__CAP_META) {
                gc_buf_reset(&s->meta);
                r = gc_buf_append(&s->meta, s->cap.data, s->cap.len);
        } else if (s->cap_kind == GC__CAP_ITEM) {
                s->n_items++;
                if (s->dropping)
                        r = s->item(s->ud, NULL, s->cap.len);
                else
                        r = s->item(s->ud, s->cap.data, s->cap.len);
        }
        s->capturing = 0;
        s->dropping = 0;
        s->cap_kind = 0;
        /* One huge object must not pin its buffer for the rest of the list. */
        if (s->cap.cap > 65536)
                gc_buf_free(&s->cap);
        else
                gc_buf_reset(&s->cap);
        return r;
}

static void gc__scan_begin_capture(gc__kube_scan *s, int kind)
{
        s->cap_kind = kind;
        s->capturing = 1;
        s->dropping = 0;
        gc_buf_reset(&s->cap);
}

int gc__kube_scan_feed(gc__kube_scan *s, const char *p, size_t n)
{
        size_t i, span = 0; /* p[span..i) is the part of a captured value not yet copied */
        int r;

        for (i = 0; i < n; i++) {
                unsigned char c = (unsigned char)p[i];

                switch (s->st) {
                case GC__S_NESTED:
                case GC__S_ITEM:
                        if (s->in_str) {
                                if (s->esc)
                                        s->esc = 0;
                                else if (c == '\\')
                                        s->esc = 1;
                                else if (c == '"')
                                        s->in_str = 0;
                                continue;
                        }
                        if (c == '"') {
                                s->in_str = 1;
                        } else if (c == '{' || c == '[') {
                                if (++s->depth > GC__SCAN_MAX_DEPTH)
                                        return -EINVAL;
                        } else if (c == '}' || c == ']') {
                                int base = s->st == GC__S_ITEM ? 2 : 1;

                                if (--s->depth > base)
                                        continue;
                                r = gc__scan_copy(s, p + span, i + 1 - span);
                                if (r < 0)
                                        return r;
                                r = gc__scan_done_value(s);
                                if (r < 0)
                                        return r;
                                s->st = s->st == GC__S_ITEM ? GC__S_ITEMS : GC__S_COMMA;
                        }
                        continue;
                case GC__S_START:
                        if (gc__is_ws(c))
                                continue;
                        if (c != '{')
                                return -EINVAL;
                        s->depth = 1;
                        s->st = GC__S_KEY;
                        continue;
                case GC__S_KEY:
                        if (gc__is_ws(c))
                                continue;
                        if (c == '}') {
                                s->depth = 0;
                                s->st = GC__S_DONE;
                                continue;
                        }
                        if (c != '"')
                                return -EINVAL;
                        s->key_len = 0;
                        s->esc = 0;
                        s->st = GC__S_IN_KEY;
                        continue;
                case GC__S_IN_KEY:
                case GC__S_STRING:
                        if (s->esc) {
                                s->esc = 0;
                        } else if (c == '\\') {
                                s->esc = 1;
                        } else if (c == '"') {
                                s->st = s->st == GC__S_IN_KEY ? GC__S_COLON : GC__S_COMMA;
                                continue;
                        }
                        if (s->st == GC__S_IN_KEY) {
                                /* Too long to be a key we want: remembered as none. */
                                if (s->key_len < sizeof(s->key))
                                        s->key[s->key_len] = (char)c;
                                if (s->key_len <= sizeof(s->key))
                                        s->key_len++;
                        }
                        continue;
                case GC__S_COLON:
                        if (gc__is_ws(c))
                                continue;
                        if (c != ':')
                                return -EINVAL;
                        s->st = GC__S_VALUE;
                        continue;
                case GC__S_VALUE: {
                        int is_items = s->key_len == 5 && memcmp(s->key, "items", 5) == 0;
                        int is_meta = s->key_len == 8 && memcmp(s->key, "metadata", 8) == 0;

                        if (gc__is_ws(c))
                                continue;
                        if (c == '"') {
                                s->esc = 0;
                                s->st = GC__S_STRING;
                        } else if (c == '[' && is_items) {
                                s->depth = 2;
                                s->st = GC__S_ITEMS;
                        } else if (c == '{' || c == '[') {
                                s->depth = 2;
                                s->in_str = 0;
                                s->esc = 0;
                                s->st = GC__S_NESTED;
                                if (is_meta && c == '{') {
                                        gc__scan_begin_capture(s, GC__CAP_META);
                                        span = i;
                                }
                        } else if (c == ',' || c == '}' || c == ']' || c == ':') {
                                return -EINVAL;
                        } else {
                                s->st = GC__S_SCALAR;
                        }
                        continue;
                }
                case GC__S_SCALAR:
                        if (c == ',') {
                                s->st = GC__S_KEY;
                        } else if (c == '}') {
                                s->depth = 0;
                                s->st = GC__S_DONE;
                        } else if (gc__is_ws(c)) {
                                s->st = GC__S_COMMA;
                        } else if (c == '"' || c == '{' || c == '[' || c == ']' || c == ':') {
                                return -EINVAL;
                        }
                        continue;
                case GC__S_COMMA:
                        if (gc__is_ws(c))
                                continue;
                        if (c == ',') {
                                s->st = GC__S_KEY;
                        } else if (c == '}') {
                                s->depth = 0;
                                s->st = GC__S_DONE;
                        } else {
                                return -EINVAL;
                        }
                        continue;
                case GC__S_ITEMS:
                        if (gc__is_ws(c) || c == ',')
                                continue;
                        if (c == ']') {
                                s->depth = 1;
                                s->st = GC__S_COMMA;
                        } else if (c == '{') {
                                s->depth = 3;
                                s->in_str = 0;
                                s->esc = 0;
                                s->st = GC__S_ITEM;
                                gc__scan_begin_capture(s, GC__CAP_ITEM);
                                span = i;
                        } else {
                                /* Kubernetes lists hold objects only. */
                                return -EINVAL;
                        }
                        continue;
                case GC__S_DONE:
                        if (!gc__is_ws(c))
                                return -EINVAL;
                        continue;
                default:
                        return -EINVAL;
                }
        }
        /* The value being captured continues in the next slice. */
        if (s->capturing && (s->st == GC__S_NESTED || s->st == GC__S_ITEM))
                return gc__scan_copy(s, p + span, n - span);
        return 0;
}
