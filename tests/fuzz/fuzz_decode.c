/*
 * fuzz_decode: arbitrary bytes through the pod, node and namespace list decoders and GPU shares,
 * checking what must hold for any input, not only that nothing crashes: decoding is a function of
 * the bytes (twice, into separate pools, gives equal records); every kept record is within its
 * limits and every string in it is a real NUL-terminated string no longer than the input; every
 * GPU-equivalent figure is finite and >= 0. A broken invariant traps, which libFuzzer reports as a
 * crash and the replay test as a failure.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/model.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const team_keys[] = {"team", "app.kubernetes.io/team"};
static const char *const project_keys[] = {"project"};

/* Short inputs are also tried as a quantity and a MIG profile: those parsers see node labels. */
static void small_parsers(const uint8_t *data, size_t size)
{
        char s[80];
        int64_t milli;
        double share;
        int est;

        if (size >= sizeof(s))
                return;
        memcpy(s, data, size);
        s[size] = '\0';
        (void)gc_quantity_parse(s, &milli);
        (void)gc_mig_share("NVIDIA-H100-80GB-HBM3", s, &share, &est);
        (void)gc_mig_share(s, "1g.10gb", &share, &est);
}

#define CHECK(cond)                                                                                \
        do {                                                                                       \
                if (!(cond))                                                                       \
                        __builtin_trap();                                                          \
        } while (0)

/* A record string: NULL, or a string no longer than what it came from. */
static void check_str(const char *s, size_t size)
{
        if (s)
                CHECK(strlen(s) <= (size > 64 ? size : 64));
}

static int same_str(const char *a, const char *b)
{
        return a == b || (a && b && strcmp(a, b) == 0);
}

static void check_pod(const gc_pod *p, size_t size)
{
        check_str(p->uid, size);
        check_str(p->ns, size);
        check_str(p->name, size);
        check_str(p->node, size);
        check_str(p->team, size);
        check_str(p->project, size);
        check_str(p->controller_kind, size);
        check_str(p->controller, size);
        check_str(p->container, size);
        CHECK(p->n_gpu <= GC_POD_MAX_GPU_RES);
        for (size_t i = 0; i < p->n_gpu; i++) {
                CHECK(p->gpu[i].resource != NULL);
                check_str(p->gpu[i].resource, size);
                CHECK(p->gpu[i].count >= 0);
        }
        CHECK(p->phase >= GC_PHASE_PENDING && p->phase <= GC_PHASE_UNKNOWN);
}

static void same_pod(const gc_pod *a, const gc_pod *b)
{
        CHECK(same_str(a->uid, b->uid) && same_str(a->ns, b->ns) && same_str(a->name, b->name));
        CHECK(same_str(a->node, b->node) && same_str(a->team, b->team));
        CHECK(same_str(a->project, b->project) && same_str(a->container, b->container));
        CHECK(same_str(a->controller_kind, b->controller_kind));
        CHECK(same_str(a->controller, b->controller));
        CHECK(a->n_gpu == b->n_gpu && a->phase == b->phase && a->flags == b->flags);
        for (size_t i = 0; i < a->n_gpu; i++)
                CHECK(same_str(a->gpu[i].resource, b->gpu[i].resource) &&
                      a->gpu[i].count == b->gpu[i].count);
        CHECK(a->created_at == b->created_at && a->bound_at == b->bound_at);
        CHECK(a->finished_at == b->finished_at && a->deleting_at == b->deleting_at);
        CHECK(a->terminated_at == b->terminated_at);
}

static void check_node(const gc_node *n, size_t size)
{
        check_str(n->uid, size);
        check_str(n->name, size);
        check_str(n->product, size);
        check_str(n->gpu_model, size);
        check_str(n->mig_strategy, size);
        check_str(n->mig_single_profile, size);
        check_str(n->ann_capacity_type, size);
        check_str(n->ann_gpu_model, size);
        check_str(n->ann_price, size);
        CHECK(n->n_alloc <= GC_NODE_MAX_GPU_RES);
        for (size_t i = 0; i < n->n_alloc; i++) {
                CHECK(n->alloc[i].resource != NULL);
                check_str(n->alloc[i].resource, size);
        }
        for (size_t i = 0; i < n->n_labels; i++) {
                check_str(n->labels[i].key, size);
                check_str(n->labels[i].value, size);
        }
        CHECK(n->replicas >= 1);
        CHECK(isfinite(n->alloc_geq) && n->alloc_geq >= 0);
}

static void same_node(const gc_node *a, const gc_node *b)
{
        CHECK(same_str(a->uid, b->uid) && same_str(a->name, b->name));
        CHECK(same_str(a->product, b->product) && same_str(a->gpu_model, b->gpu_model));
        CHECK(a->n_alloc == b->n_alloc && a->n_labels == b->n_labels);
        CHECK(a->replicas == b->replicas && a->gpu_count == b->gpu_count);
        CHECK(a->alloc_geq == b->alloc_geq && a->geq_estimate == b->geq_estimate);
        for (size_t i = 0; i < a->n_alloc; i++)
                CHECK(same_str(a->alloc[i].resource, b->alloc[i].resource) &&
                      a->alloc[i].count == b->alloc[i].count);
}

typedef struct decoded {
        gc_strpool *pool;
        gc_pod_vec pods;
        gc_node_vec nodes;
        gc_ns_vec nss;
        int rp, rn, rs; /* the decoders' results */
} decoded;

static int decode(const char *json, size_t size, gc_res_table *res, decoded *d)
{
        gc_decode_stats st;
        gc_model_opts o;
        gc_diag diag;
        char err[256];

        memset(d, 0, sizeof(*d));
        memset(&diag, 0, sizeof(diag));
        d->pods.limit = d->nodes.limit = d->nss.limit = 64;
        d->pool = gc_strpool_new(1u << 22);
        if (!d->pool)
                return -1;
        memset(&o, 0, sizeof(o));
        o.pool = d->pool;
        o.res = res;
        o.team_keys = team_keys;
        o.n_team_keys = 2;
        o.project_keys = project_keys;
        o.n_project_keys = 1;
        d->rp = gc_decode_pods(json, size, &o, &d->pods, &st, &diag, err, sizeof(err));
        d->rn = gc_decode_nodes(json, size, &o, &d->nodes, &st, &diag, err, sizeof(err));
        d->rs = gc_decode_namespaces(json, size, &o, &d->nss, &st, &diag, err, sizeof(err));
        gc_diag_clear(&diag);
        return 0;
}

static void decoded_free(decoded *d)
{
        gc_pod_vec_free(&d->pods);
        gc_node_vec_free(&d->nodes);
        gc_ns_vec_free(&d->nss);
        gc_strpool_free(d->pool);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        gc_res_table *res = gc_res_table_new_default();
        const char *json = (const char *)data;
        decoded a, b;

        if (!res || gc_res_table_set(res, "amd.com/gpu", GC_RES_FIXED, 1.0) < 0) {
                gc_res_table_free(res);
                return 0;
        }
        if (decode(json, size, res, &a) < 0 || decode(json, size, res, &b) < 0) {
                decoded_free(&a);
                gc_res_table_free(res);
                return 0;
        }
        /* A function of the bytes: the same results and the same records, field by field. */
        CHECK(a.rp == b.rp && a.rn == b.rn && a.rs == b.rs);
        CHECK(a.pods.n == b.pods.n && a.nodes.n == b.nodes.n && a.nss.n == b.nss.n);
        CHECK(a.pods.n <= a.pods.limit && a.nodes.n <= a.nodes.limit && a.nss.n <= a.nss.limit);
        for (size_t i = 0; i < a.pods.n; i++) {
                check_pod(&a.pods.v[i], size);
                same_pod(&a.pods.v[i], &b.pods.v[i]);
        }
        for (size_t i = 0; i < a.nodes.n; i++) {
                check_node(&a.nodes.v[i], size);
                same_node(&a.nodes.v[i], &b.nodes.v[i]);
        }
        for (size_t i = 0; i < a.nss.n; i++) {
                check_str(a.nss.v[i].name, size);
                check_str(a.nss.v[i].team, size);
                check_str(a.nss.v[i].project, size);
                CHECK(same_str(a.nss.v[i].name, b.nss.v[i].name));
                CHECK(same_str(a.nss.v[i].team, b.nss.v[i].team));
                CHECK(same_str(a.nss.v[i].project, b.nss.v[i].project));
        }

        /* Every kept pod priced on every kept node, as the ledger would: finite, >= 0, stable. */
        for (size_t i = 0; i < a.pods.n; i++) {
                for (size_t k = 0; k <= a.nodes.n && k < 8; k++) {
                        double g1 = -1, g2 = -1;
                        int e1 = 0, e2 = 0, r1, r2;

                        r1 = gc_pod_gpu_equivalents(res, &a.pods.v[i],
                                                    k < a.nodes.n ? &a.nodes.v[k] : NULL, &g1, &e1);
                        r2 = gc_pod_gpu_equivalents(res, &b.pods.v[i],
                                                    k < b.nodes.n ? &b.nodes.v[k] : NULL, &g2, &e2);
                        CHECK(r1 == r2);
                        if (r1 < 0)
                                continue;
                        CHECK(isfinite(g1) && g1 >= 0);
                        CHECK(g1 == g2 && e1 == e2);
                }
        }
        small_parsers(data, size);
        decoded_free(&a);
        decoded_free(&b);
        gc_res_table_free(res);
        return 0;
}
