/* fuzz_kube_list: the LIST scanner (kube over util's jscan), in input-chosen slices, vs cJSON. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube.h"
#include "kube/kube_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ITEM 4096

typedef struct got {
        const cJSON *next; /* the element of cJSON's "items" expected next, when comparing */
        int compare;
        size_t n, dropped;
} got;

static int on_item(void *ud, const char *json, size_t len)
{
        got *g = ud;
        cJSON *o;
        char *a, *b;

        if (!json) {
                /* Dropped only when over the cap, and len is its whole size. */
                if (len <= MAX_ITEM)
                        __builtin_trap();
                g->dropped++;
                if (g->compare)
                        g->next = g->next ? g->next->next : NULL;
                return 0;
        }
        if (len > MAX_ITEM)
                __builtin_trap();
        g->n++;
        if (!g->compare)
                return 0;
        /* The scanner's bytes of an element read as the same value cJSON found there. */
        /* Compared as printed: cJSON_Compare mismatches objects with duplicate keys. */
        o = cJSON_ParseWithLength(json, len);
        if (!o || !g->next)
                __builtin_trap();
        a = cJSON_PrintUnformatted(o);
        b = cJSON_PrintUnformatted(g->next);
        if (!a || !b || strcmp(a, b) != 0)
                __builtin_trap();
        cJSON_free(a);
        cJSON_free(b);
        cJSON_Delete(o);
        g->next = g->next->next;
        return 0;
}

/* cJSON's reading, when the input is one JSON object whose "items" the scanner must find. */
static cJSON *reference(const char *p, size_t n, const cJSON **ret_items)
{
        const char *end = NULL;
        cJSON *root = cJSON_ParseWithLengthOpts(p, n, &end, 0);
        const cJSON *items, *e;
        size_t keys = 0;

        *ret_items = NULL;
        if (!root)
                return NULL;
        for (const char *q = end; q && q < p + n; q++)
                if (!strchr(" \t\r\n", *q) || *q == '\0')
                        goto no;
        /* A \u escape could spell "items" in a way the scanner (rightly) does not decode. */
        if (memmem(p, n, "\\u", 2) || !cJSON_IsObject(root))
                goto no;
        /* cJSON takes any control byte for white space; JSON (and the scanner) only these. */
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)p[i];

                if (c < 0x20 && c != '\t' && c != '\r' && c != '\n')
                        goto no;
        }
        cJSON_ArrayForEach(e, root) keys += e->string && strcmp(e->string, "items") == 0;
        if (keys > 1)
                goto no;
        /* "items" is an array, or null (a list without items); anything else is refused. */
        items = cJSON_GetObjectItemCaseSensitive(root, "items");
        if (items && !cJSON_IsArray(items) && !cJSON_IsNull(items))
                goto no;
        if (cJSON_IsArray(items)) {
                cJSON_ArrayForEach(e, items) if (!cJSON_IsObject(e)) goto no;
                *ret_items = items;
        }
        return root;
no:
        cJSON_Delete(root);
        return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        gc__kube_scan s;
        got g;
        const cJSON *items;
        cJSON *root;
        const char *body;
        size_t n, off = 0;
        uint32_t x;
        int r = 0;

        if (size < 1)
                return 0;
        x = 0x85ebca6bu ^ data[0];
        body = (const char *)data + 1;
        n = size - 1;
        root = reference(body, n, &items);
        memset(&g, 0, sizeof(g));
        g.compare = root != NULL;
        g.next = items ? items->child : NULL;
        gc__kube_scan_init(&s, MAX_ITEM, on_item, &g);
        while (off < n && r == 0) {
                size_t slice;

                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                slice = 1 + x % 31;
                if (slice > n - off)
                        slice = n - off;
                r = gc__kube_scan_feed(&s, body + off, slice);
                off += slice;
        }
        if (root) {
                /* A valid list: read whole, every element found, none left over. */
                if (r != 0 || gc__kube_scan_finish(&s) != 0 || g.next != NULL)
                        __builtin_trap();
        }
        gc__kube_scan_release(&s);
        cJSON_Delete(root);
        return 0;
}
