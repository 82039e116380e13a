/* kube lease: leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection. */
#include "kube_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GC__LEASE_DEFAULT_S 15
#define GC__LEASE_MAX_S     86400 /* a record asking for more is taken as this */

/* Equal, when `stored` may hold a truncated copy of `incoming`. */
static int gc__same(const char *stored, size_t size, const char *incoming)
{
        return strncmp(stored, incoming, size - 1) == 0;
}

gc__lease_action gc__lease_decide(gc_kube_lease *l, const char *holder, const char *rv,
                                  const char *renew, int duration_s, int64_t now_mono)
{
        if (!gc__same(l->holder, sizeof(l->holder), holder) ||
            !gc__same(l->record_rv, sizeof(l->record_rv), rv) ||
            !gc__same(l->observed_renew, sizeof(l->observed_renew), renew)) {
                /* The record moved: its holder is alive, as of now by our own clock. */
                gc_strlcpy(l->holder, holder, sizeof(l->holder));
                gc_strlcpy(l->record_rv, rv, sizeof(l->record_rv));
                gc_strlcpy(l->observed_renew, renew, sizeof(l->observed_renew));
                l->observed_at_mono = now_mono;
        }
        if (holder[0] && strcmp(holder, l->identity) == 0)
                return GC__LEASE_RENEW;
        if (!holder[0])
                return GC__LEASE_ACQUIRE;
        if (duration_s <= 0)
                duration_s = l->duration_s > 0 ? l->duration_s : GC__LEASE_DEFAULT_S;
        if (duration_s > GC__LEASE_MAX_S)
                duration_s = GC__LEASE_MAX_S;
        /* Whole seconds: the record was seen at observed_at + [0, 1), so waiting until strictly
         * past observed_at + duration guarantees a full duration has gone by. */
        if (now_mono <= l->observed_at_mono + duration_s)
                return GC__LEASE_WAIT;
        return GC__LEASE_ACQUIRE;
}

/* metav1.MicroTime of now: "2026-11-20T09:15:03.123456Z". */
static void gc__micro_now(char out[32])
{
        struct timespec ts;
        char sec[GC_TIME_LEN];

        clock_gettime(CLOCK_REALTIME, &ts);
        gc_time_format((int64_t)ts.tv_sec, sec);
        sec[19] = '\0'; /* drop the 'Z' */
        snprintf(out, 32, "%.19s.%06uZ", sec, (unsigned)(ts.tv_nsec / 1000) % 1000000u);
}

static int gc__lease_args(const gc_kube *k, const gc_kube_lease *l, char *err, size_t errlen)
{
        if (!k || !l) {
                snprintf(err, errlen, "lease: bad arguments");
                return -EINVAL;
        }
        if (!gc__kube_valid_name(l->ns, 63, 0)) {
                snprintf(err, errlen, "lease namespace: not a valid name");
                return -EINVAL;
        }
        if (!gc__kube_valid_name(l->name, 253, 1)) {
                snprintf(err, errlen, "lease name: not a valid name");
                return -EINVAL;
        }
        if (!l->identity || !l->identity[0] || strlen(l->identity) >= sizeof(l->holder)) {
                snprintf(err, errlen, "lease identity: empty or longer than %zu bytes",
                         sizeof(l->holder) - 1);
                return -EINVAL;
        }
        return 0;
}

static int gc__lease_duration(const gc_kube_lease *l)
{
        return l->duration_s > 0 ? l->duration_s : GC__LEASE_DEFAULT_S;
}

/* Requests for a lease must fail well within its renew deadline, never hang past it. */
static gc__kube_io gc__lease_io(const gc_kube_lease *l)
{
        gc__kube_io io = {0};
        int t = gc__lease_duration(l) / 3;

        io.timeout_s = t < 2 ? 2 : t > 10 ? 10 : t;
        return io;
}

static int gc__set_str(cJSON *o, const char *key, const char *v)
{
        cJSON *s = cJSON_CreateString(v);

        if (!s)
                return -ENOMEM;
        cJSON_DeleteItemFromObjectCaseSensitive(o, key);
        if (!cJSON_AddItemToObject(o, key, s)) {
                cJSON_Delete(s);
                return -ENOMEM;
        }
        return 0;
}

static int gc__set_num(cJSON *o, const char *key, double v)
{
        cJSON *s = cJSON_CreateNumber(v);

        if (!s)
                return -ENOMEM;
        cJSON_DeleteItemFromObjectCaseSensitive(o, key);
        if (!cJSON_AddItemToObject(o, key, s)) {
                cJSON_Delete(s);
                return -ENOMEM;
        }
        return 0;
}

/* Sends obj (POST to the collection, or PUT to the object); records what we wrote on success. */
static int gc__lease_write(gc_kube *k, gc_kube_lease *l, const char *method, cJSON *obj,
                           int64_t now_mono, long *ret_status, char *err, size_t errlen)
{
        gc__kube_io io = gc__lease_io(l);
        char path[512];
        char *text = cJSON_PrintUnformatted(obj);
        gc_buf body;
        long status = 0;
        int r;

        if (!text) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        if (strcmp(method, "POST") == 0)
                snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases",
                         l->ns);
        else
                snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s",
                         l->ns, l->name);
        r = gc__kube_do(k, method, path, "application/json", text, strlen(text), &io, &status,
                        &body, NULL, err, errlen);
        free(text);
        if (r < 0)
                goto out;
        *ret_status = status;
        if (status == 200 || status == 201) {
                cJSON *o = cJSON_ParseWithLength(body.data, body.len);
                const cJSON *spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
                const cJSON *h = cJSON_GetObjectItemCaseSensitive(spec, "holderIdentity");
                const cJSON *rt = cJSON_GetObjectItemCaseSensitive(spec, "renewTime");
                const char *rv = gc_kube_meta(o, "resourceVersion");

                /* What we wrote is the record now observed, as of now. */
                gc_strlcpy(l->holder,
                           h && cJSON_IsString(h) && h->valuestring ? h->valuestring : "",
                           sizeof(l->holder));
                gc_strlcpy(l->record_rv, rv ? rv : "", sizeof(l->record_rv));
                gc_strlcpy(l->observed_renew,
                           rt && cJSON_IsString(rt) && rt->valuestring ? rt->valuestring : "",
                           sizeof(l->observed_renew));
                l->observed_at_mono = now_mono;
                cJSON_Delete(o);
        } else if (status != 409) {
                char msg[384];

                gc__kube_status_msg(&body, status, msg, sizeof(msg));
                snprintf(err, errlen, "lease %s/%s: %s", l->ns, l->name, msg);
                r = gc__kube_status_errno(status);
        }
out:
        gc_buf_free(&body);
        return r;
}

/* Reads the lease: 0 with *ret_obj (NULL when there is none), or an error. */
static int gc__lease_get(gc_kube *k, gc_kube_lease *l, cJSON **ret_obj, char *err, size_t errlen)
{
        gc__kube_io io = gc__lease_io(l);
        char path[512];
        gc_buf body;
        long status = 0;
        cJSON *o = NULL;
        int r;

        snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", l->ns,
                 l->name);
        r = gc__kube_do(k, "GET", path, NULL, NULL, 0, &io, &status, &body, NULL, err, errlen);
        if (r < 0)
                goto out;
        if (status == 200) {
                o = cJSON_ParseWithLength(body.data, body.len);
                if (!cJSON_IsObject(o) || !gc_kube_meta(o, "resourceVersion")) {
                        cJSON_Delete(o);
                        snprintf(err, errlen, "lease %s/%s: not a Lease object", l->ns, l->name);
                        r = -EPROTO;
                        goto out;
                }
        } else if (status != 404) {
                char msg[384];

                gc__kube_status_msg(&body, status, msg, sizeof(msg));
                snprintf(err, errlen, "lease %s/%s: %s", l->ns, l->name, msg);
                r = gc__kube_status_errno(status);
                goto out;
        }
        *ret_obj = o;
out:
        gc_buf_free(&body);
        return r;
}

static const char *gc__spec_str(const cJSON *spec, const char *key)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, key);

        return v && cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}

static double gc__spec_num(const cJSON *spec, const char *key)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, key);

        return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Creates the lease held by us. *ret_won: it was created (0 when someone else created it). */
static int gc__lease_create(gc_kube *k, gc_kube_lease *l, int64_t now_mono, int *ret_won, char *err,
                            size_t errlen)
{
        char now[32];
        cJSON *o = cJSON_CreateObject();
        cJSON *meta = o ? cJSON_AddObjectToObject(o, "metadata") : NULL;
        cJSON *spec = o ? cJSON_AddObjectToObject(o, "spec") : NULL;
        long status = 0;
        int r;

        gc__micro_now(now);
        if (!meta || !spec || gc__set_str(o, "apiVersion", "coordination.k8s.io/v1") < 0 ||
            gc__set_str(o, "kind", "Lease") < 0 || gc__set_str(meta, "name", l->name) < 0 ||
            gc__set_str(meta, "namespace", l->ns) < 0 ||
            gc__set_str(spec, "holderIdentity", l->identity) < 0 ||
            gc__set_num(spec, "leaseDurationSeconds", gc__lease_duration(l)) < 0 ||
            gc__set_str(spec, "acquireTime", now) < 0 || gc__set_str(spec, "renewTime", now) < 0 ||
            gc__set_num(spec, "leaseTransitions", 0) < 0) {
                cJSON_Delete(o);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        r = gc__lease_write(k, l, "POST", o, now_mono, &status, err, errlen);
        cJSON_Delete(o);
        if (r == 0)
                *ret_won = status == 201 || status == 200;
        return r;
}

int gc_kube_lease_tick(gc_kube *k, gc_kube_lease *l, int64_t now_mono, int *ret_leader, char *err,
                       size_t errlen)
{
        cJSON *o = NULL, *spec;
        int won = 0, r;
        char now[32];

        r = gc__lease_args(k, l, err, errlen);
        if (r < 0)
                return r;
        r = gc__lease_get(k, l, &o, err, errlen);
        if (r < 0)
                goto failed;
        if (!o) {
                r = gc__lease_create(k, l, now_mono, &won, err, errlen);
                if (r < 0)
                        goto failed;
        } else {
                gc__lease_action act;
                long status = 0;
                const char *holder, *renew;

                spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
                if (!cJSON_IsObject(spec)) {
                        spec = cJSON_CreateObject();
                        if (!spec || !cJSON_AddItemToObject(o, "spec", spec)) {
                                cJSON_Delete(spec);
                                r = -ENOMEM;
                                snprintf(err, errlen, "out of memory");
                                goto failed;
                        }
                }
                holder = gc__spec_str(spec, "holderIdentity");
                renew = gc__spec_str(spec, "renewTime");
                act = gc__lease_decide(l, holder, gc_kube_meta(o, "resourceVersion"), renew,
                                       (int)gc__spec_num(spec, "leaseDurationSeconds"), now_mono);
                if (act == GC__LEASE_WAIT) {
                        l->leader = 0;
                        cJSON_Delete(o);
                        *ret_leader = 0;
                        return 0;
                }
                gc__micro_now(now);
                /* client-go: a new holder sets acquireTime and counts a transition. */
                if (act == GC__LEASE_ACQUIRE) {
                        if (gc__set_str(spec, "acquireTime", now) < 0 ||
                            gc__set_num(spec, "leaseTransitions",
                                        gc__spec_num(spec, "leaseTransitions") + 1) < 0)
                                r = -ENOMEM;
                }
                if (r == 0 &&
                    (gc__set_str(spec, "holderIdentity", l->identity) < 0 ||
                     gc__set_num(spec, "leaseDurationSeconds", gc__lease_duration(l)) < 0 ||
                     gc__set_str(spec, "renewTime", now) < 0))
                        r = -ENOMEM;
                cJSON_DeleteItemFromObjectCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(o, "metadata"), "managedFields");
                if (r < 0) {
                        snprintf(err, errlen, "out of memory");
                        goto failed;
                }
                /* metadata.resourceVersion stays: a 409 means we lost a race, not leader. */
                r = gc__lease_write(k, l, "PUT", o, now_mono, &status, err, errlen);
                if (r < 0)
                        goto failed;
                won = status == 200;
        }
        cJSON_Delete(o);
        l->leader = won;
        if (won)
                l->renewed_at_mono = now_mono;
        *ret_leader = l->leader;
        return 0;
failed:
        cJSON_Delete(o);
        /* Keep leading only while the lease we last wrote is surely still ours, with margin. */
        l->leader = l->leader && now_mono < l->renewed_at_mono + gc__lease_duration(l) - 2;
        *ret_leader = l->leader;
        return r;
}

int64_t gc_kube_lease_fence_ms(const gc_kube_lease *l)
{
        if (!l || !l->leader)
                return 0;
        return (l->renewed_at_mono + gc__lease_duration(l) - 2) * 1000;
}

int gc_kube_lease_release(gc_kube *k, gc_kube_lease *l, char *err, size_t errlen)
{
        cJSON *o = NULL, *spec;
        char now[32];
        long status = 0;
        int r;

        r = gc__lease_args(k, l, err, errlen);
        if (r < 0)
                return r;
        /* Ours by our last look, even if a failed renewal already made us step down. */
        if (!l->leader && strcmp(l->holder, l->identity) != 0)
                return 0;
        l->leader = 0;
        r = gc__lease_get(k, l, &o, err, errlen);
        if (r < 0 || !o)
                goto out;
        spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
        if (!cJSON_IsObject(spec) || strcmp(gc__spec_str(spec, "holderIdentity"), l->identity) != 0)
                goto out; /* no longer ours: nothing to give up */
        gc__micro_now(now);
        /* As client-go: no holder, a one-second duration, so a standby takes it on its next try. */
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "holderIdentity");
        if (gc__set_num(spec, "leaseDurationSeconds", 1) < 0 ||
            gc__set_str(spec, "renewTime", now) < 0 || gc__set_str(spec, "acquireTime", now) < 0) {
                snprintf(err, errlen, "out of memory");
                r = -ENOMEM;
                goto out;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"),
                                                "managedFields");
        r = gc__lease_write(k, l, "PUT", o, gc__kube_mono_s(), &status, err, errlen);
        if (r == 0 && status == 409) {
                snprintf(err, errlen, "lease %s/%s: changed meanwhile, not released", l->ns,
                         l->name);
                r = -EBUSY;
        }
out:
        cJSON_Delete(o);
        return r;
}
