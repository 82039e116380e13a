/* authz internals shared by the cache and the Kubernetes reviews; not part of the public API. */
#ifndef GC_AUTHZ_INT_H
#define GC_AUTHZ_INT_H

#include "authz.h"

/* The default gc_authz_review_fn: ud is a gc_kube used only by the worker thread. */
int gc_authz__kube_review(void *ud, const char *token, const gc_authz_attrs *a,
                          gc_authz_verdict *ret, char *reason, size_t reasonlen);

/* The SubjectAccessReview body for user (a TokenReview's status.user); caller deletes. */
cJSON *gc_authz__sar_body(const cJSON *user, const gc_authz_attrs *a);

#endif
