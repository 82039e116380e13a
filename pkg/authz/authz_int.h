/* authz internals shared by the cache and the Kubernetes reviews; not part of the public API. */
#ifndef GC_AUTHZ_INT_H
#define GC_AUTHZ_INT_H

#include "authz.h"

/*
 * The default reviewer: a gc_kube and the TokenReview answers of recent tokens, used only by
 * the worker thread (so without a lock).
 */
typedef struct gc_authz__reviewer gc_authz__reviewer;

#define GC_AUTHZ__AUTHN_ENTRIES 256 /* tokens whose TokenReview answer is kept */

gc_authz__reviewer *gc_authz__reviewer_new(const gc_kube_config *kube, int64_t allow_ms,
                                           int64_t deny_ms, char *err, size_t errlen);
gc_authz__reviewer *gc_authz__reviewer_free(gc_authz__reviewer *r);
/* The default gc_authz_review_fn: ud is a gc_authz__reviewer. */
int gc_authz__kube_review(void *ud, const char *token, const gc_authz_attrs *a,
                          gc_authz_verdict *ret, char *reason, size_t reasonlen);

/* The SubjectAccessReview body for user (a TokenReview's status.user); caller deletes. */
cJSON *gc_authz__sar_body(const cJSON *user, const gc_authz_attrs *a);

#endif
