/* kube scan: the items of a LIST body one at a time, as the bytes arrive (over util's jscan). */
#include "kube_int.h"

#include <errno.h>

/*
 * A page of 500 pods is megabytes of JSON and several times that as a cJSON tree. gc_jscan finds
 * each element of "items" and the "metadata" object as the body arrives; an element is handed to
 * cJSON alone, so memory stays near one object whatever the page size. What a LIST adds to the
 * scanner: elements must be objects, and the metadata is kept (64 KiB at most) for its
 * resourceVersion and continue token.
 */

static int gc__scan_value(void *ud, const gc_jscan_value *v)
{
        gc__kube_scan *s = ud;

        if (v->what == GC_JSCAN_METADATA) {
                gc_buf_reset(&s->meta);
                return v->json ? gc_buf_append(&s->meta, v->json, v->len) : -E2BIG;
        }
        if (v->what != GC_JSCAN_ITEM)
                return 0;
        /* Kubernetes lists hold objects only. */
        if (v->first != '{')
                return -EINVAL;
        s->n_items++;
        return s->item(s->ud, v->json, v->len);
}

void gc__kube_scan_init(gc__kube_scan *s, size_t max_item,
                        int (*item)(void *ud, const char *json, size_t len), void *ud)
{
        gc_jscan_init(&s->js, max_item, gc__scan_value, s);
        gc_buf_init(&s->meta, GC__KUBE_MAX_META);
        s->n_items = 0;
        s->item = item;
        s->ud = ud;
}

void gc__kube_scan_release(gc__kube_scan *s)
{
        if (!s)
                return;
        gc_jscan_release(&s->js);
        gc_buf_free(&s->meta);
}

int gc__kube_scan_feed(gc__kube_scan *s, const char *p, size_t n)
{
        return gc_jscan_feed(&s->js, p, n, NULL, 0);
}

int gc__kube_scan_finish(gc__kube_scan *s)
{
        return gc_jscan_finish(&s->js, NULL, 0);
}
