/* fuzz_hami: arbitrary bytes as HAMi's node and pod annotations, through the decoders (inside a
 * Node and a Pod) and straight into the readers; what a decoder accepts must read back whole. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A Node and a Pod carrying text as HAMi's annotations (cJSON escapes it). */
static char *gc__wrap(const char *text, int pod)
{
        cJSON *o = cJSON_CreateObject(), *md, *ann, *spec, *status, *c, *res, *lim;
        char *out = NULL;

        if (!o)
                return NULL;
        md = cJSON_AddObjectToObject(o, "metadata");
        cJSON_AddStringToObject(md, "name", "n1");
        cJSON_AddStringToObject(md, "uid", "u1");
        ann = cJSON_AddObjectToObject(md, "annotations");
        cJSON_AddStringToObject(ann, pod ? GC_HAMI_ALLOCATED : GC_HAMI_REGISTER, text);
        if (pod) {
                spec = cJSON_AddObjectToObject(o, "spec");
                cJSON_AddStringToObject(spec, "nodeName", "n1");
                c = cJSON_CreateObject();
                cJSON_AddStringToObject(c, "name", "c");
                res = cJSON_AddObjectToObject(c, "resources");
                lim = cJSON_AddObjectToObject(res, "limits");
                cJSON_AddStringToObject(lim, "nvidia.com/gpu", "1");
                cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "containers"), c);
        } else {
                status = cJSON_AddObjectToObject(o, "status");
                lim = cJSON_AddObjectToObject(status, "allocatable");
                cJSON_AddStringToObject(lim, "nvidia.com/gpu", "20");
        }
        out = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        gc_strpool *pool = gc_strpool_new(1u << 22);
        gc_res_table *res = gc_res_table_new_default();
        gc_dra_device_vec devs = {.limit = 256};
        gc_model_opts o;
        gc_node n;
        gc_pod p;
        gc_claim cl;
        char err[256], *text = NULL, *json = NULL;
        cJSON *obj = NULL;
        int r;

        if (!pool || !res || size > (1u << 17))
                goto done;
        text = malloc(size + 1);
        if (!text)
                goto done;
        memcpy(text, data, size);
        text[size] = '\0';
        memset(&o, 0, sizeof(o));
        o.pool = pool;
        o.res = res;

        /* As the node decoder reads it: kept only when it reads back, and then whole. */
        json = gc__wrap(text, 0);
        obj = json ? cJSON_Parse(json) : NULL;
        memset(&n, 0, sizeof(n));
        if (obj && gc_node_from_json(obj, &o, &n, err, sizeof(err)) == 1) {
                if (n.hami_register) {
                        r = gc_hami_node_devices(&n, pool, &devs, err, sizeof(err));
                        if (r <= 0 || (size_t)r != devs.n || devs.n > GC_HAMI_MAX_GPUS ||
                            n.alloc_geq != 0)
                                __builtin_trap();
                        for (size_t i = 0; i < devs.n; i++)
                                if (!devs.v[i].shared || devs.v[i].geq != 1.0 ||
                                    devs.v[i].n_caps > 2 || !devs.v[i].name)
                                        __builtin_trap();
                }
                gc_node_release(&n);
        }
        cJSON_Delete(obj);
        free(json);

        /* As the pod decoder reads it: an allocation kept builds its claim. */
        json = gc__wrap(text, 1);
        obj = json ? cJSON_Parse(json) : NULL;
        memset(&p, 0, sizeof(p));
        if (obj && gc_pod_from_json(obj, &o, &p, err, sizeof(err)) == 1 && p.hami_alloc) {
                if (gc_hami_pod_claim(&p, pool, &cl, err, sizeof(err)) != 1 || cl.n_devices < 1 ||
                    cl.n_devices > GC_HAMI_MAX_ALLOC || p.n_gpu != 0)
                        __builtin_trap();
                for (size_t k = 0; k < cl.n_devices; k++)
                        if (cl.devices[k].n_used != 2 || !isfinite(cl.devices[k].used[0].value) ||
                            cl.devices[k].used[0].value < 0)
                                __builtin_trap();
                gc_claim_release(&cl);
        }
        cJSON_Delete(obj);

        /* Straight into the readers, whatever the bytes. */
        memset(&n, 0, sizeof(n));
        n.name = gc_strpool_intern0(pool, "n1");
        n.hami_register = gc_strpool_intern0(pool, text);
        devs.n = 0;
        if (n.name && n.hami_register)
                (void)gc_hami_node_devices(&n, pool, &devs, err, sizeof(err));
        memset(&p, 0, sizeof(p));
        p.name = p.uid = p.node = n.name;
        p.hami_alloc = n.hami_register;
        if (p.name && p.hami_alloc && gc_hami_pod_claim(&p, pool, &cl, err, sizeof(err)) == 1)
                gc_claim_release(&cl);
done:
        free(json);
        free(text);
        gc_dra_device_vec_free(&devs);
        gc_res_table_free(res);
        gc_strpool_free(pool);
        return 0;
}
