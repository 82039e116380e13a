/* event: Kubernetes Events (core v1) the controller emits, once per name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_int.h"

#define GC__EVENT_MAX_MSG 1024 /* the API server keeps at most 1 KiB of a message */

int gc_kube_event_create(gc_kube *k, const gc_kube_event_spec *e, int64_t now, char *err,
                         size_t errlen)
{
        char path[512], what[384], ts[GC_TIME_LEN];
        cJSON *obj, *meta, *inv, *src;
        char *text;
        gc_buf body;
        long status = 0;
        int r;

        if (!k || !e || !e->reason || !e->message || now < 0 ||
            (e->type && strcmp(e->type, "Normal") != 0 && strcmp(e->type, "Warning") != 0)) {
                snprintf(err, errlen, "event: bad arguments");
                return -EINVAL;
        }
        if (!gc__kube_valid_name(e->ns, 63, 0) || !gc__kube_valid_name(e->name, 253, 1) ||
            !e->involved_kind || !*e->involved_kind ||
            !gc__kube_valid_name(e->involved_name, 253, 1)) {
                snprintf(err, errlen, "event: \"%.64s/%.254s\" is not a valid namespace and name",
                         e->ns ? e->ns : "", e->name ? e->name : "");
                return -EINVAL;
        }
        if (strlen(e->reason) > 128 || strlen(e->message) > GC__EVENT_MAX_MSG) {
                snprintf(err, errlen, "event %s: reason or message too long", e->name);
                return -E2BIG;
        }
        gc_time_format(now, ts);
        obj = cJSON_CreateObject();
        meta = cJSON_AddObjectToObject(obj, "metadata");
        inv = cJSON_AddObjectToObject(obj, "involvedObject");
        src = cJSON_AddObjectToObject(obj, "source");
        if (!obj || !meta || !inv || !src || !cJSON_AddStringToObject(obj, "apiVersion", "v1") ||
            !cJSON_AddStringToObject(obj, "kind", "Event") ||
            !cJSON_AddStringToObject(meta, "name", e->name) ||
            !cJSON_AddStringToObject(meta, "namespace", e->ns) ||
            !cJSON_AddStringToObject(inv, "apiVersion",
                                     e->involved_api_version ? e->involved_api_version : "v1") ||
            !cJSON_AddStringToObject(inv, "kind", e->involved_kind) ||
            !cJSON_AddStringToObject(inv, "name", e->involved_name) ||
            !cJSON_AddStringToObject(inv, "namespace", e->ns) ||
            !cJSON_AddStringToObject(obj, "reason", e->reason) ||
            !cJSON_AddStringToObject(obj, "message", e->message) ||
            !cJSON_AddStringToObject(obj, "type", e->type ? e->type : "Normal") ||
            !cJSON_AddStringToObject(obj, "firstTimestamp", ts) ||
            !cJSON_AddStringToObject(obj, "lastTimestamp", ts) ||
            !cJSON_AddNumberToObject(obj, "count", 1) ||
            !cJSON_AddStringToObject(src, "component", e->component ? e->component : "gpu-cost") ||
            !cJSON_AddStringToObject(obj, "reportingComponent",
                                     e->component ? e->component : "gpu-cost")) {
                cJSON_Delete(obj);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        text = cJSON_PrintUnformatted(obj);
        cJSON_Delete(obj);
        if (!text) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        snprintf(what, sizeof(what), "event %s/%s", e->ns, e->name);
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", e->ns);
        r = gc__kube_do(k, "POST", path, "application/json", text, strlen(text), NULL, &status,
                        &body, NULL, err, errlen);
        free(text);
        if (r == 0 && status == 409) {
                r = -EEXIST; /* emitted before (by this or an earlier process) */
        } else if (r == 0 && status != 201 && status != 200) {
                char msg[384];

                gc__kube_status_msg(&body, status, msg, sizeof(msg));
                snprintf(err, errlen, "%s: %s", what, msg);
                r = gc__kube_status_errno(status);
        }
        gc_buf_free(&body);
        return r;
}
