/* authz: TokenReview and SubjectAccessReview against the API server, and resource attributes. */
#include "authz_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#define TOKENREVIEWS "/apis/authentication.k8s.io/v1/tokenreviews"
#define SARS         "/apis/authorization.k8s.io/v1/subjectaccessreviews"

/* "HTTP 403: <the Status message>" from an answer that is not the review. */
static void status_reason(const char *what, long status, const gc_buf *body, char *reason,
                          size_t reasonlen)
{
        cJSON *doc = NULL;
        const cJSON *msg = NULL;
        const char *m = NULL;

        if (body->data && body->len)
                doc = cJSON_ParseWithLengthOpts(body->data, body->len, NULL, 0);
        if (doc)
                msg = cJSON_GetObjectItemCaseSensitive(doc, "message");
        if (msg && cJSON_IsString(msg))
                m = msg->valuestring;
        snprintf(reason, reasonlen, "%s: HTTP %ld%s%.200s", what, status, m ? ": " : "",
                 m ? m : "");
        cJSON_Delete(doc);
}

/* The TokenReview echoes spec.token: wipe it from the parsed answer before it is freed. */
static void wipe_echoed_token(cJSON *doc)
{
        cJSON *spec = cJSON_GetObjectItemCaseSensitive(doc, "spec");
        cJSON *tok = cJSON_GetObjectItemCaseSensitive(spec, "token");

        if (cJSON_IsString(tok) && tok->valuestring)
                explicit_bzero(tok->valuestring, strlen(tok->valuestring));
}

/* 0 with *ret_user (status.user, caller deletes) or *ret set to a verdict that ends it. */
static int token_review(gc_kube *k, const char *token, cJSON **ret_user, gc_authz_verdict *ret,
                        char *reason, size_t reasonlen)
{
        gc_buf req, resp = {0};
        cJSON *doc = NULL, *status, *user, *e;
        char err[256];
        long code = 0;
        int r;

        *ret_user = NULL;
        *ret = GC_AUTHZ_UNAVAILABLE;
        gc_buf_init(&req, 2 * GC_AUTHZ_MAX_TOKEN_BYTES + 256);
        r = gc_buf_puts(&req, "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":"
                              "\"TokenReview\",\"spec\":{\"token\":");
        if (r == 0)
                r = gc_buf_json_str(&req, token);
        if (r == 0)
                r = gc_buf_puts(&req, "}}");
        if (r == 0)
                r = gc_kube_request(k, "POST", TOKENREVIEWS, "application/json", req.data, req.len,
                                    &code, &resp, err, sizeof(err));
        if (req.data)
                explicit_bzero(req.data, req.len);
        gc_buf_free(&req);
        if (r < 0) {
                snprintf(reason, reasonlen, "TokenReview: %s",
                         r == -ENOMEM ? "out of memory" : err);
                goto out;
        }
        if (code != 201 && code != 200) {
                status_reason("TokenReview", code, &resp, reason, reasonlen);
                goto out;
        }
        doc = cJSON_ParseWithLengthOpts(resp.data, resp.len, NULL, 0);
        if (!doc) {
                snprintf(reason, reasonlen, "TokenReview: the answer is not JSON");
                goto out;
        }
        wipe_echoed_token(doc);
        status = cJSON_GetObjectItemCaseSensitive(doc, "status");
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(status, "authenticated"))) {
                e = cJSON_GetObjectItemCaseSensitive(status, "error");
                snprintf(reason, reasonlen, "token not authenticated%s%.200s",
                         cJSON_IsString(e) ? ": " : "", cJSON_IsString(e) ? e->valuestring : "");
                *ret = GC_AUTHZ_UNAUTHENTICATED;
                goto out;
        }
        user = cJSON_DetachItemFromObjectCaseSensitive(status, "user");
        if (!cJSON_IsObject(user) ||
            !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(user, "username"))) {
                cJSON_Delete(user);
                snprintf(reason, reasonlen, "TokenReview: authenticated without a user name");
                *ret = GC_AUTHZ_UNAUTHENTICATED;
                goto out;
        }
        *ret_user = user;
out:
        cJSON_Delete(doc);
        if (resp.data)
                explicit_bzero(resp.data, resp.len);
        gc_buf_free(&resp);
        return *ret_user ? 0 : -EACCES;
}

static int add_str(cJSON *o, const char *name, const char *v)
{
        return cJSON_AddStringToObject(o, name, v) ? 0 : -ENOMEM;
}

cJSON *gc_authz__sar_body(const cJSON *user, const gc_authz_attrs *a)
{
        cJSON *doc = cJSON_CreateObject(), *spec, *attrs, *x;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(user, "username");
        const cJSON *uid = cJSON_GetObjectItemCaseSensitive(user, "uid");
        int r = 0;

        if (!doc || !cJSON_IsString(name))
                goto fail;
        r |= add_str(doc, "apiVersion", "authorization.k8s.io/v1");
        r |= add_str(doc, "kind", "SubjectAccessReview");
        spec = cJSON_AddObjectToObject(doc, "spec");
        if (!spec)
                goto fail;
        r |= add_str(spec, "user", name->valuestring);
        if (cJSON_IsString(uid) && uid->valuestring[0])
                r |= add_str(spec, "uid", uid->valuestring);
        /* Groups and extra as the TokenReview said: RBAC may bind a group, and extra carries
         * scopes some authorizers read. */
        x = cJSON_GetObjectItemCaseSensitive(user, "groups");
        if (cJSON_IsArray(x) && !cJSON_AddItemToObject(spec, "groups", cJSON_Duplicate(x, 1)))
                goto fail;
        x = cJSON_GetObjectItemCaseSensitive(user, "extra");
        if (cJSON_IsObject(x) && !cJSON_AddItemToObject(spec, "extra", cJSON_Duplicate(x, 1)))
                goto fail;
        if (a->resource) {
                const gc_authz_resource *res = a->resource;

                attrs = cJSON_AddObjectToObject(spec, "resourceAttributes");
                if (!attrs)
                        goto fail;
                if (res->ns[0])
                        r |= add_str(attrs, "namespace", res->ns);
                r |= add_str(attrs, "verb", a->verb);
                if (res->group[0])
                        r |= add_str(attrs, "group", res->group);
                r |= add_str(attrs, "resource", res->resource);
                if (res->subresource[0])
                        r |= add_str(attrs, "subresource", res->subresource);
                if (res->name[0])
                        r |= add_str(attrs, "name", res->name);
        } else {
                attrs = cJSON_AddObjectToObject(spec, "nonResourceAttributes");
                if (!attrs)
                        goto fail;
                r |= add_str(attrs, "path", a->path);
                r |= add_str(attrs, "verb", a->verb);
        }
        if (r)
                goto fail;
        return doc;
fail:
        cJSON_Delete(doc);
        return NULL;
}

static void access_review(gc_kube *k, const cJSON *user, const gc_authz_attrs *a,
                          gc_authz_verdict *ret, char *reason, size_t reasonlen)
{
        cJSON *body = gc_authz__sar_body(user, a), *doc = NULL, *status, *why;
        gc_buf resp = {0};
        char err[256], *text = NULL;
        long code = 0;
        int r;

        *ret = GC_AUTHZ_UNAVAILABLE;
        if (body)
                text = cJSON_PrintUnformatted(body);
        if (!text) {
                snprintf(reason, reasonlen, "SubjectAccessReview: out of memory");
                goto out;
        }
        r = gc_kube_request(k, "POST", SARS, "application/json", text, strlen(text), &code, &resp,
                            err, sizeof(err));
        if (r < 0) {
                snprintf(reason, reasonlen, "SubjectAccessReview: %s", err);
                goto out;
        }
        if (code != 201 && code != 200) {
                status_reason("SubjectAccessReview", code, &resp, reason, reasonlen);
                goto out;
        }
        doc = cJSON_ParseWithLengthOpts(resp.data, resp.len, NULL, 0);
        status = cJSON_GetObjectItemCaseSensitive(doc, "status");
        if (!cJSON_IsObject(status)) {
                snprintf(reason, reasonlen, "SubjectAccessReview: no status in the answer");
                goto out;
        }
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(status, "allowed"))) {
                *ret = GC_AUTHZ_ALLOWED;
        } else {
                why = cJSON_GetObjectItemCaseSensitive(status, "reason");
                snprintf(reason, reasonlen, "denied%s%.200s", cJSON_IsString(why) ? ": " : "",
                         cJSON_IsString(why) ? why->valuestring : "");
                *ret = GC_AUTHZ_FORBIDDEN;
        }
out:
        cJSON_free(text);
        cJSON_Delete(body);
        cJSON_Delete(doc);
        gc_buf_free(&resp);
}

/*
 * A token's TokenReview answer: who it is (status.user as JSON) or that it is not valid. A new
 * path for a known token then costs one SubjectAccessReview, not two requests.
 */
struct authn {
        unsigned char key[32]; /* SHA-256 of the token */
        bool used;
        char *user; /* NULL: not authenticated */
        int64_t expires_ms;
};

struct gc_authz__reviewer {
        gc_kube *k;
        int64_t allow_ms, deny_ms;
        struct authn ents[GC_AUTHZ__AUTHN_ENTRIES];
        size_t hand; /* the next slot to reuse, first in first out */
};

static int64_t mono_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int token_key(const char *token, unsigned char key[32])
{
        unsigned int n = 0;

        return EVP_Digest(token, strlen(token), key, &n, EVP_sha256(), NULL) == 1 && n == 32 ? 0
                                                                                             : -EIO;
}

gc_authz__reviewer *gc_authz__reviewer_new(const gc_kube_config *kube, int64_t allow_ms,
                                           int64_t deny_ms, char *err, size_t errlen)
{
        gc_authz__reviewer *r = calloc(1, sizeof(*r));

        if (!r) {
                snprintf(err, errlen, "out of memory");
                return NULL;
        }
        r->k = gc_kube_new(kube, err, errlen);
        if (!r->k) {
                free(r);
                return NULL;
        }
        r->allow_ms = allow_ms;
        r->deny_ms = deny_ms;
        return r;
}

gc_authz__reviewer *gc_authz__reviewer_free(gc_authz__reviewer *r)
{
        if (!r)
                return NULL;
        for (size_t i = 0; i < GC_AUTHZ__AUTHN_ENTRIES; i++)
                free(r->ents[i].user);
        gc_kube_free(r->k);
        free(r);
        return NULL;
}

static struct authn *authn_find(gc_authz__reviewer *r, const unsigned char key[32], int64_t now)
{
        for (size_t i = 0; i < GC_AUTHZ__AUTHN_ENTRIES; i++)
                if (r->ents[i].used && now < r->ents[i].expires_ms &&
                    !memcmp(r->ents[i].key, key, 32))
                        return &r->ents[i];
        return NULL;
}

/* Remembers a TokenReview's answer (user NULL: not authenticated); errors are not kept. */
static void authn_store(gc_authz__reviewer *r, const unsigned char key[32], const cJSON *user,
                        int64_t now)
{
        struct authn *e = &r->ents[r->hand];
        char *text = user ? cJSON_PrintUnformatted(user) : NULL;

        if (user && !text)
                return;
        r->hand = (r->hand + 1) % GC_AUTHZ__AUTHN_ENTRIES;
        free(e->user);
        memcpy(e->key, key, 32);
        e->used = true;
        e->user = text;
        e->expires_ms = now + (user ? r->allow_ms : r->deny_ms);
}

int gc_authz__kube_review(void *ud, const char *token, const gc_authz_attrs *a,
                          gc_authz_verdict *ret, char *reason, size_t reasonlen)
{
        gc_authz__reviewer *r = ud;
        unsigned char key[32];
        struct authn *e = NULL;
        cJSON *user = NULL;
        gc_authz_verdict v;
        int64_t now = mono_ms();
        bool keyed;

        if (!r || !token || !a || !ret)
                return -EINVAL;
        keyed = token_key(token, key) == 0;
        if (keyed)
                e = authn_find(r, key, now);
        if (e && !e->user) {
                snprintf(reason, reasonlen, "token not authenticated (remembered)");
                v = GC_AUTHZ_UNAUTHENTICATED;
        } else if (e) {
                user = cJSON_Parse(e->user);
                if (user) {
                        access_review(r->k, user, a, &v, reason, reasonlen);
                } else {
                        snprintf(reason, reasonlen, "out of memory");
                        v = GC_AUTHZ_UNAVAILABLE;
                }
        } else if (token_review(r->k, token, &user, &v, reason, reasonlen) == 0) {
                if (keyed)
                        authn_store(r, key, user, now);
                access_review(r->k, user, a, &v, reason, reasonlen);
        } else if (v == GC_AUTHZ_UNAUTHENTICATED && keyed) {
                authn_store(r, key, NULL, now);
        }
        cJSON_Delete(user);
        explicit_bzero(key, sizeof(key));
        *ret = v;
        return 0;
}

/* ---- resource attributes -------------------------------------------------------------------- */

static bool value_ok(const char *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                char c = v[i];

                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_'))
                        return false;
        }
        return true;
}

int gc_authz_resource_parse(const char *s, gc_authz_resource *ret, char *err, size_t errlen)
{
        static const struct {
                const char *key;
                size_t off, size;
        } keys[] = {
            {"namespace", offsetof(gc_authz_resource, ns), sizeof(((gc_authz_resource *)0)->ns)},
            {"group", offsetof(gc_authz_resource, group), sizeof(((gc_authz_resource *)0)->group)},
            {"resource", offsetof(gc_authz_resource, resource),
             sizeof(((gc_authz_resource *)0)->resource)},
            {"subresource", offsetof(gc_authz_resource, subresource),
             sizeof(((gc_authz_resource *)0)->subresource)},
            {"name", offsetof(gc_authz_resource, name), sizeof(((gc_authz_resource *)0)->name)},
        };
        gc_authz_resource r;
        bool seen[sizeof(keys) / sizeof(keys[0])] = {false};
        const char *p = s;

        if (!s || !ret)
                return -EINVAL;
        memset(&r, 0, sizeof(r));
        while (*p) {
                const char *end = strchr(p, ','), *eq;
                size_t n, k, klen;

                if (!end)
                        end = p + strlen(p);
                eq = memchr(p, '=', (size_t)(end - p));
                if (!eq) {
                        snprintf(err, errlen, "\"%.*s\" is not key=value", (int)(end - p), p);
                        return -EINVAL;
                }
                klen = (size_t)(eq - p);
                for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
                        if (strlen(keys[k].key) == klen && !memcmp(keys[k].key, p, klen))
                                break;
                if (k == sizeof(keys) / sizeof(keys[0])) {
                        snprintf(err, errlen,
                                 "unknown key \"%.*s\" (namespace, group, resource, subresource, "
                                 "name)",
                                 (int)klen, p);
                        return -EINVAL;
                }
                if (seen[k]) {
                        snprintf(err, errlen, "%s: given twice", keys[k].key);
                        return -EINVAL;
                }
                seen[k] = true;
                n = (size_t)(end - eq - 1);
                if (n >= keys[k].size || !value_ok(eq + 1, n)) {
                        snprintf(err, errlen, "%s: \"%.*s\" is not a name", keys[k].key, (int)n,
                                 eq + 1);
                        return -EINVAL;
                }
                memcpy((char *)&r + keys[k].off, eq + 1, n);
                p = *end ? end + 1 : end;
        }
        if (!r.resource[0]) {
                snprintf(err, errlen, "resource: missing");
                return -EINVAL;
        }
        *ret = r;
        return 0;
}
