/* jscan: the elements of a Kubernetes list's "items", one at a time, from JSON fed in pieces. */
#ifndef GC_JSCAN_H
#define GC_JSCAN_H

#include <stddef.h>

#include "util.h"

/*
 * A list of 100,000 pods is hundreds of megabytes of JSON and several times that as a tree. The
 * scanner reads the root object once, checking only strings and the nesting and types of
 * brackets, and hands each element of its "items" array to a callback as a byte range, with the
 * root's "metadata" object and "kind" string. Nothing is parsed: the caller parses each element
 * alone (cJSON), so memory stays near one element whatever the list's size. Scalars are runs up
 * to a delimiter, left to that parser.
 *
 * The same scanner serves a body arriving from the network (fed as the bytes come) and a whole
 * document in memory (fed once). A value that lies within one piece is passed in place, without
 * a copy; one that spans pieces is copied into the scanner's buffer, at most max_value bytes.
 *
 * Limits: a value of the root object (an element of items, the metadata, any other member) may
 * nest GC_JSCAN_MAX_DEPTH brackets, its own included; deeper is -EINVAL. A value longer than
 * max_value is reported with json NULL (and its length), never copied past that. The root's
 * keys and punctuation are read byte by byte; a value skips runs without a quote or a bracket by
 * a table, and strings with memchr.
 *
 * Results: 0, or -EINVAL (err says where: "items[3]: mismatched bracket", "document: metadata:
 * unterminated string", "document: ',' or '}' expected"), -ENOMEM (a value spanning pieces
 * could not be copied), or the callback's own negative result (err untouched). An error is sticky:
 * every later feed or finish returns it again.
 */

#define GC_JSCAN_MAX_DEPTH 1024

typedef enum gc_jscan_what {
        GC_JSCAN_ITEM = 1, /* an element of the root's "items" array (any JSON value) */
        GC_JSCAN_METADATA, /* the root's "metadata", when it is an object */
        GC_JSCAN_KIND,     /* the root's "kind", when it is a string (quotes included) */
} gc_jscan_what;

typedef struct gc_jscan_value {
        gc_jscan_what what;
        const char *json; /* its bytes, borrowed for the callback only; NULL when over max_value */
        size_t len;       /* its length, whole (also when json is NULL) */
        size_t index;     /* an item's index in items */
        int depth;        /* brackets nested in it, its own included; 0 for a string or scalar */
        char first;       /* its first byte: '{', '[', '"' or a scalar's */
} gc_jscan_value;

/* A negative result stops the scan, and feed returns it. */
typedef int (*gc_jscan_fn)(void *ud, const gc_jscan_value *v);

typedef struct gc_jscan {
        /* Read-only results. */
        size_t n_items; /* elements of items reported so far */
        int items;      /* 1 once "items" was read: an array, or null (Go's empty list) */
        int depth; /* the deepest nesting of a member's value or an element, its own included */

        /* The scanner's own. */
        gc_jscan_fn fn_;
        void *ud_;
        size_t max_value_;
        int st_;  /* where in the root object */
        int err_; /* the sticky error */
        /* The value being read. */
        gc_jscan_what what_; /* 0 when it is not reported */
        char first_;
        int vdepth_, vmax_;
        int in_str_, esc_;
        int dropped_;  /* over max_value: no longer copied */
        size_t vlen_;  /* its bytes in earlier pieces */
        size_t lit_;   /* bytes of "null" matched, for items */
        gc_buf cap_;   /* its bytes from earlier pieces, when reported */
        char key_[64]; /* the member's key, its first bytes (messages, and the keys we want) */
        size_t key_len_;
        unsigned char stack_[GC_JSCAN_MAX_DEPTH / 8]; /* 1 = '{', 0 = '[' */
} gc_jscan;

/* max_value > 0: the longest value reported with its bytes (SIZE_MAX: any). */
void gc_jscan_init(gc_jscan *s, size_t max_value, gc_jscan_fn fn, void *ud);
/*
 * Reads the next n bytes; calls fn for each value they complete. May reallocate the scanner's
 * copy of a value that spans pieces.
 */
int gc_jscan_feed(gc_jscan *s, const char *p, size_t n, char *err, size_t errlen);
/* The input has ended: 0 when it was one whole JSON object (white space around it). */
int gc_jscan_finish(gc_jscan *s, char *err, size_t errlen);
/* Frees the copy buffer (s may be NULL, or initialised and never fed). */
void gc_jscan_release(gc_jscan *s);

#endif
