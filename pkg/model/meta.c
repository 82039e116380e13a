/* model meta: the one reader of an object's metadata (ObjectMeta) every decoder uses. */
#include "model.h"
#include "model_int.h"

#include <errno.h>
#include <string.h>

/*
 * The fields are read in one fixed order (name, namespace, uid, creationTimestamp,
 * deletionTimestamp, labels, annotations), so that of several bad fields the message names the
 * first, whichever decoder asks. Nothing is interned here: a decoder may still refuse the object
 * after its metadata, and then leaves nothing in the pool.
 */
int gc__meta_read(const cJSON *obj, unsigned want, gc__meta *ret, char *err, size_t errlen)
{
        size_t name_max = want & GC__META_SHORT_NAME ? GC__LABEL_VALUE_MAX : GC__NAME_MAX;
        gc__meta m;
        int r;

        memset(&m, 0, sizeof(m));
        r = gc__opt_obj(obj, "metadata", "", &m.meta, err, errlen);
        if (r == 0 && !m.meta)
                r = GC__FAIL(err, errlen, -EINVAL, "metadata: missing");
        if (r == 0)
                r = gc__opt_str(m.meta, "name", name_max, 0, "metadata", &m.name, err, errlen);
        if (r == 0 && !m.name)
                r = GC__FAIL(err, errlen, -EINVAL, "metadata.name: missing");
        if (r == 0 && (want & GC__META_NS))
                r = gc__opt_str(m.meta, "namespace", GC__LABEL_VALUE_MAX, 0, "metadata", &m.ns, err,
                                errlen);
        if (r == 0 && (want & GC__META_UID))
                r = gc__opt_str(m.meta, "uid", GC__UID_MAX, 0, "metadata", &m.uid, err, errlen);
        /* gc__opt_time is 1 when it read a time: only below 0 is an error. */
        if (r == 0 && (want & GC__META_CREATED) &&
            gc__opt_time(m.meta, "creationTimestamp", "metadata", &m.created_at, err, errlen) < 0)
                r = -EINVAL;
        if (r == 0 && (want & GC__META_DELETING) &&
            gc__opt_time(m.meta, "deletionTimestamp", "metadata", &m.deleting_at, err, errlen) < 0)
                r = -EINVAL;
        if (r == 0 && (want & GC__META_LABELS))
                r = gc__opt_obj(m.meta, "labels", "metadata", &m.labels, err, errlen);
        if (r == 0 && (want & GC__META_ANNOTATIONS))
                r = gc__opt_obj(m.meta, "annotations", "metadata", &m.annotations, err, errlen);
        if (r < 0)
                return r;
        /* What the API server assumes for a namespaced object without one. */
        if ((want & GC__META_NS) && !m.ns)
                m.ns = "default";
        *ret = m;
        return 0;
}
