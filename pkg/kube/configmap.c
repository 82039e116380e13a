/* kube configmap: create-or-replace with optimistic concurrency, get, list names, delete. */
#include "kube_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GC__CM_LIST_PAGE 250
#define GC__CM_MAX_NAMES 100000
/* Names only: the server leaves out data, so listing megabyte reports costs nothing. */
#define GC__ACCEPT_META                                                                            \
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json"

static int gc__cm_check_names(const char *ns, const char *name, char *err, size_t errlen)
{
        if (!gc__kube_valid_name(ns, 63, 0)) {
                snprintf(err, errlen, "namespace: \"%.64s\" is not a valid name", ns ? ns : "");
                return -EINVAL;
        }
        if (name && !gc__kube_valid_name(name, 253, 1)) {
                snprintf(err, errlen, "name: \"%.254s\" is not a valid ConfigMap name", name);
                return -EINVAL;
        }
        return 0;
}

static int gc__cm_key_ok(const char *key)
{
        size_t n = strlen(key);

        if (n == 0 || n > 253 || strcmp(key, ".") == 0 || strcmp(key, "..") == 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                char c = key[i];

                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_'))
                        return 0;
        }
        return 1;
}

/* The data as the API will count it (keys plus values), checked before anything is sent. */
static int gc__cm_check_data(const gc_kube_kv *data, size_t n_data, char *err, size_t errlen)
{
        size_t total = 0;

        for (size_t i = 0; i < n_data; i++) {
                if (!data[i].key || !gc__cm_key_ok(data[i].key)) {
                        snprintf(err, errlen, "data[%zu]: key \"%.64s\" must match [-._a-zA-Z0-9]+",
                                 i, data[i].key ? data[i].key : "");
                        return -EINVAL;
                }
                if (!data[i].value) {
                        snprintf(err, errlen, "data.%s: no value", data[i].key);
                        return -EINVAL;
                }
                for (size_t j = 0; j < i; j++) {
                        if (strcmp(data[i].key, data[j].key) == 0) {
                                snprintf(err, errlen, "data.%s: given twice", data[i].key);
                                return -EINVAL;
                        }
                }
                total += strlen(data[i].key) + strlen(data[i].value);
                if (total > GC__KUBE_CM_MAX_DATA) {
                        snprintf(err, errlen, "data: over the ConfigMap limit of %u bytes",
                                 GC__KUBE_CM_MAX_DATA);
                        return -E2BIG;
                }
        }
        return 0;
}

static cJSON *gc__kv_object(const gc_kube_kv *kv, size_t n)
{
        cJSON *o = cJSON_CreateObject();

        for (size_t i = 0; o && i < n; i++) {
                if (!kv[i].key || !kv[i].value ||
                    !cJSON_AddStringToObject(o, kv[i].key, kv[i].value)) {
                        cJSON_Delete(o);
                        return NULL;
                }
        }
        return o;
}

/* Puts item into obj under key, replacing what was there; takes ownership of item. */
static int gc__replace(cJSON *obj, const char *key, cJSON *item)
{
        if (!item)
                return -ENOMEM;
        cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
        if (!cJSON_AddItemToObject(obj, key, item)) {
                cJSON_Delete(item);
                return -ENOMEM;
        }
        return 0;
}

/* The error for an answer that is not the one wanted: the API's Status message. */
static int gc__fail_status(const char *what, long status, const gc_buf *body, char *err,
                           size_t errlen)
{
        char msg[384];

        gc__kube_status_msg(body, status, msg, sizeof(msg));
        snprintf(err, errlen, "%s: %s", what, msg);
        return gc__kube_status_errno(status);
}

static int gc__send_json(gc_kube *k, const char *method, const char *path, const cJSON *obj,
                         long *ret_status, gc_buf *ret_body, char *err, size_t errlen)
{
        char *text = cJSON_PrintUnformatted(obj);
        int r;

        if (!text) {
                gc_buf_init(ret_body, 0);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        r = gc__kube_do(k, method, path, "application/json", text, strlen(text), NULL, ret_status,
                        ret_body, NULL, err, errlen);
        free(text);
        return r;
}

/* Sets metadata.annotations[key] = value, keeping the other annotations. -ENOMEM. */
static int gc__annotate(cJSON *meta, const char *key, const char *value)
{
        cJSON *a = cJSON_GetObjectItemCaseSensitive(meta, "annotations");

        if (!cJSON_IsObject(a)) {
                cJSON_DeleteItemFromObjectCaseSensitive(meta, "annotations");
                a = cJSON_AddObjectToObject(meta, "annotations");
                if (!a)
                        return -ENOMEM;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(a, key);
        return cJSON_AddStringToObject(a, key, value) ? 0 : -ENOMEM;
}

/* A new ConfigMap with only its name and namespace (*ret_meta: its metadata); NULL when out of
 * memory. */
static cJSON *gc__cm_skeleton(const char *ns, const char *name, cJSON **ret_meta)
{
        cJSON *obj = cJSON_CreateObject(), *meta = cJSON_CreateObject();

        if (!obj || !meta || !cJSON_AddItemToObject(obj, "metadata", meta)) {
                cJSON_Delete(meta);
                cJSON_Delete(obj);
                return NULL;
        }
        if (!cJSON_AddStringToObject(obj, "apiVersion", "v1") ||
            !cJSON_AddStringToObject(obj, "kind", "ConfigMap") ||
            !cJSON_AddStringToObject(meta, "name", name) ||
            !cJSON_AddStringToObject(meta, "namespace", ns)) {
                cJSON_Delete(obj);
                return NULL;
        }
        *ret_meta = meta;
        return obj;
}

/* The server's copy of a ConfigMap to replace labels and data in, keeping the rest (annotations,
 * owners) and its resourceVersion; NULL when it is no ConfigMap object. */
static cJSON *gc__cm_server_copy(const gc_buf *body, cJSON **ret_meta)
{
        cJSON *obj = cJSON_ParseWithLength(body->data, body->len);
        cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");

        if (!cJSON_IsObject(meta) || !gc_kube_meta(obj, "resourceVersion")) {
                cJSON_Delete(obj);
                return NULL;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "binaryData");
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
        *ret_meta = meta;
        return obj;
}

int gc_kube_configmap_put(gc_kube *k, const char *ns, const char *name, const gc_kube_kv *labels,
                          size_t n_labels, const gc_kube_kv *data, size_t n_data, char *err,
                          size_t errlen)
{
        char path[512], what[384];
        int r;

        if (!k || (n_labels && !labels) || (n_data && !data)) {
                snprintf(err, errlen, "configmap: bad arguments");
                return -EINVAL;
        }
        if ((r = gc__cm_check_names(ns, name, err, errlen)) < 0 ||
            (r = gc__cm_check_data(data, n_data, err, errlen)) < 0)
                return r;
        for (size_t i = 0; i < n_labels; i++) {
                if (!labels[i].key || !labels[i].key[0] || !labels[i].value) {
                        snprintf(err, errlen, "labels[%zu]: empty key or no value", i);
                        return -EINVAL;
                }
        }
        snprintf(what, sizeof(what), "configmap %s/%s", ns, name);
        for (int attempt = 0; attempt < GC__KUBE_CM_RETRIES; attempt++) {
                gc_buf body;
                long status = 0;
                cJSON *obj = NULL, *meta;
                const char *method;

                snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/%s", ns, name);
                r = gc__kube_do(k, "GET", path, NULL, NULL, 0, NULL, &status, &body, NULL, err,
                                errlen);
                if (r < 0) {
                        gc_buf_free(&body);
                        return r;
                }
                if (status == 404) {
                        /* Absent: create it. A 409 means another writer created it first. */
                        method = "POST";
                        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", ns);
                        obj = gc__cm_skeleton(ns, name, &meta);
                        if (!obj)
                                r = -ENOMEM;
                } else if (status == 200) {
                        /* Present: replace labels and data, keep the rest of it (annotations,
                         * owners), and send its resourceVersion so a concurrent write is seen. */
                        method = "PUT";
                        obj = gc__cm_server_copy(&body, &meta);
                        if (!obj) {
                                snprintf(err, errlen, "%s: the server's copy is not an object",
                                         what);
                                gc_buf_free(&body);
                                return -EPROTO;
                        }
                } else {
                        r = gc__fail_status(what, status, &body, err, errlen);
                        gc_buf_free(&body);
                        return r;
                }
                gc_buf_free(&body);
                if (r == 0)
                        r = gc__replace(meta, "labels", gc__kv_object(labels, n_labels));
                if (r == 0)
                        r = gc__replace(obj, "data", gc__kv_object(data, n_data));
                if (r == 0 && k->writer)
                        r = gc__annotate(meta, GC_KUBE_WRITER_ANNOTATION, k->writer);
                if (r < 0) {
                        cJSON_Delete(obj);
                        snprintf(err, errlen, "out of memory");
                        return r;
                }
                r = gc__send_json(k, method, path, obj, &status, &body, err, errlen);
                cJSON_Delete(obj);
                if (r < 0) {
                        gc_buf_free(&body);
                        return r;
                }
                if (status == 200 || status == 201) {
                        gc_buf_free(&body);
                        return 0;
                }
                if (status != 409) {
                        r = gc__fail_status(what, status, &body, err, errlen);
                        gc_buf_free(&body);
                        return r;
                }
                /* Someone wrote in between: read it again and retry, after a jittered pause so
                 * two writers in lock step fall out of it (10 ms doubling to 640 ms, +-50%). */
                k->n_conflicts++;
                gc__fail_status(what, status, &body, err, errlen);
                gc_buf_free(&body);
                if (attempt + 1 < GC__KUBE_CM_RETRIES)
                        gc__kube_sleep(0.01 * (double)(1 << attempt) * (0.5 + gc__kube_rand(k)),
                                       NULL);
        }
        {
                char last[256];

                gc_strlcpy(last, err, sizeof(last));
                snprintf(err, errlen, "%s: still conflicting after %d attempts (%s)", what,
                         GC__KUBE_CM_RETRIES, last);
        }
        return -EBUSY;
}

int gc_kube_configmap_get(gc_kube *k, const char *ns, const char *name, cJSON **ret_obj, char *err,
                          size_t errlen)
{
        char path[512], what[384];
        gc_buf body;
        long status = 0;
        cJSON *obj;
        int r;

        if (!k || !ret_obj) {
                snprintf(err, errlen, "configmap: bad arguments");
                return -EINVAL;
        }
        if ((r = gc__cm_check_names(ns, name, err, errlen)) < 0)
                return r;
        snprintf(what, sizeof(what), "configmap %s/%s", ns, name);
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/%s", ns, name);
        r = gc__kube_do(k, "GET", path, NULL, NULL, 0, NULL, &status, &body, NULL, err, errlen);
        if (r < 0)
                goto out;
        if (status != 200) {
                r = gc__fail_status(what, status, &body, err, errlen);
                goto out;
        }
        obj = cJSON_ParseWithLength(body.data, body.len);
        if (!cJSON_IsObject(obj)) {
                cJSON_Delete(obj);
                snprintf(err, errlen, "%s: the answer is not a JSON object", what);
                r = -EPROTO;
                goto out;
        }
        *ret_obj = obj;
out:
        gc_buf_free(&body);
        return r;
}

static void gc__free_names(char **names, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

int gc_kube_configmap_list(gc_kube *k, const char *ns, const char *label_selector,
                           char ***ret_names, size_t *ret_n, char *err, size_t errlen)
{
        gc__kube_io io = {0};
        char **names = NULL;
        size_t n = 0, cap = 0;
        char *cont = NULL;
        int r;

        if (!k || !ret_names || !ret_n) {
                snprintf(err, errlen, "configmap list: bad arguments");
                return -EINVAL;
        }
        if ((r = gc__cm_check_names(ns, NULL, err, errlen)) < 0)
                return r;
        io.accept = GC__ACCEPT_META;
        for (;;) {
                gc_buf q, body;
                long status = 0;
                cJSON *list = NULL;
                const cJSON *items, *it, *c;

                gc_buf_init(&q, 65536);
                r = gc_buf_printf(&q, "/api/v1/namespaces/%s/configmaps?limit=%d", ns,
                                  GC__CM_LIST_PAGE);
                if (r == 0 && label_selector && label_selector[0]) {
                        r = gc_buf_puts(&q, "&labelSelector=");
                        if (r == 0)
                                r = gc_kube_escape(&q, label_selector);
                }
                if (r == 0 && cont) {
                        r = gc_buf_puts(&q, "&continue=");
                        if (r == 0)
                                r = gc_kube_escape(&q, cont);
                }
                free(cont);
                cont = NULL;
                if (r < 0) {
                        gc_buf_free(&q);
                        snprintf(err, errlen, "configmap list: selector too long");
                        goto fail;
                }
                r = gc__kube_do(k, "GET", q.data, NULL, NULL, 0, &io, &status, &body, NULL, err,
                                errlen);
                gc_buf_free(&q);
                if (r == 0 && status != 200) {
                        r = gc__fail_status("configmap list", status, &body, err, errlen);
                } else if (r == 0) {
                        list = cJSON_ParseWithLength(body.data, body.len);
                        items = cJSON_GetObjectItemCaseSensitive(list, "items");
                        if (!cJSON_IsArray(items) &&
                            !(cJSON_IsObject(list) && (!items || cJSON_IsNull(items)))) {
                                /* An empty metadata list says "items":null. */
                                snprintf(err, errlen, "configmap list: not a list");
                                r = -EPROTO;
                        }
                        if (!cJSON_IsArray(items))
                                items = NULL;
                        cJSON_ArrayForEach(it, items)
                        {
                                const char *nm = gc_kube_meta(it, "name");

                                if (r < 0 || !nm)
                                        continue;
                                if (n >= GC__CM_MAX_NAMES) {
                                        snprintf(err, errlen, "configmap list: over %d names",
                                                 GC__CM_MAX_NAMES);
                                        r = -E2BIG;
                                        break;
                                }
                                if (gc_grow((void **)&names, &cap, n, sizeof(*names), 16, 0) < 0) {
                                        r = -ENOMEM;
                                        break;
                                }
                                names[n] = strdup(nm);
                                if (!names[n]) {
                                        r = -ENOMEM;
                                        break;
                                }
                                n++;
                        }
                        c = cJSON_GetObjectItemCaseSensitive(
                            cJSON_GetObjectItemCaseSensitive(list, "metadata"), "continue");
                        if (r == 0 && cJSON_IsString(c) && c->valuestring && c->valuestring[0]) {
                                cont = strdup(c->valuestring);
                                if (!cont)
                                        r = -ENOMEM;
                        }
                }
                cJSON_Delete(list);
                gc_buf_free(&body);
                if (r < 0)
                        goto fail;
                if (!cont)
                        break;
        }
        *ret_names = names;
        *ret_n = n;
        return 0;
fail:
        if (r == -ENOMEM)
                snprintf(err, errlen, "out of memory");
        free(cont);
        gc__free_names(names, n);
        return r;
}

int gc_kube_configmap_delete(gc_kube *k, const char *ns, const char *name, char *err, size_t errlen)
{
        char path[512], what[384];
        gc_buf body;
        long status = 0;
        int r;

        if (!k) {
                snprintf(err, errlen, "configmap: bad arguments");
                return -EINVAL;
        }
        if ((r = gc__cm_check_names(ns, name, err, errlen)) < 0)
                return r;
        snprintf(what, sizeof(what), "configmap %s/%s", ns, name);
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/%s", ns, name);
        r = gc__kube_do(k, "DELETE", path, NULL, NULL, 0, NULL, &status, &body, NULL, err, errlen);
        if (r == 0 && status != 200 && status != 202 && status != 404)
                r = gc__fail_status(what, status, &body, err, errlen);
        gc_buf_free(&body);
        return r;
}
