/* test_dra: ResourceSlices, ResourceClaims and pods' claims decoded, mapped and accounted. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account/account.h"
#include "config/config.h"
#include "model/model.h"

/* 2026-11-16T00:00:00Z */
#define T0 1794787200
#define H  3600

/*
 * The device shapes below are those NVIDIA's DRA driver publishes: NVIDIA/k8s-dra-driver-gpu
 * (now kubernetes-sigs/dra-driver-nvidia-gpu), cmd/gpu-kubelet-plugin/deviceinfo.go,
 * GpuInfo.GetDevice() and MigDeviceInfo.GetDevice() on main at commit 03af8246 (2025-2026,
 * resource.k8s.io/v1): names "gpu-<minor>" and "gpu-<minor>-mig-<GI profile id>-<placement
 * start>-<placement size>"; string attributes type ("gpu" | "mig" | "vfio"), uuid, parentUUID
 * (MIG), profile (MIG, e.g. "1g.10gb"), productName (the parent's for MIG, with spaces), brand,
 * architecture, pcieBusID, addressingMode; version attributes cudaComputeCapability,
 * driverVersion, cudaDriverVersion; capacities memory (whole GPU), and for MIG multiprocessors,
 * copyEngines, decoders, encoders, jpegEngines, ofaEngines, memory and one memorySlice<i> per
 * memory slice of the placement. JSON is written with ' for " to stay readable.
 */

static char *dq(const char *s)
{
        char *d = strdup(s);

        ck_assert_ptr_nonnull(d);
        for (char *p = d; *p; p++)
                if (*p == '\'')
                        *p = '"';
        return d;
}

#define COMMON_ATTRS(prod, arch)                                                                   \
        "'productName':{'string':'" prod "'},'brand':{'string':'Nvidia'},'architecture':"          \
        "{'string':'" arch "'},'cudaComputeCapability':{'version':'9.0.0'},'driverVersion':"       \
        "{'version':'580.95.5'},'cudaDriverVersion':{'version':'13.0.0'},'pcieBusID':"             \
        "{'string':'0000:18:00.0'},'addressingMode':{'string':'None'}"

#define GPU_DEV(minor, uuid, prod)                                                                 \
        "{'name':'gpu-" minor "','attributes':{'type':{'string':'gpu'},'uuid':{'string':'" uuid    \
        "'}," COMMON_ATTRS(prod, "Hopper") "},'capacity':{'memory':{'value':'81559Mi'}}}"

#define MIG_DEV(name, uuid, parent, profile, prod, slices)                                         \
        "{'name':'" name "','attributes':{'type':{'string':'mig'},'uuid':{'string':'" uuid         \
        "'},'parentUUID':{'string':'" parent "'},'profile':{'string':'" profile                    \
        "'}," COMMON_ATTRS(                                                                        \
            prod, "Hopper") "},'capacity':{'multiprocessors':{'value':'16'},'copyEngines':"        \
                            "{'value':'1'},'memory':{'value':'9856Mi'}" slices "}}"

#define SLICE(api, node, gen, devices)                                                             \
        "{'apiVersion':'resource.k8s.io/" api "','kind':'ResourceSlice','metadata':{'name':'" node \
        "-s'},'spec':{'driver':'gpu.nvidia.com','nodeName':'" node "','pool':{'name':'" node       \
        "','generation':" gen ",'resourceSliceCount':1},'devices':[" devices "]}}"

typedef struct env {
        gc_strpool *pool;
        gc_res_table *res;
        gc_model_opts o;
        gc_dra_device_vec devs;
        gc_claim_vec claims;
        gc_pod_vec pods;
        gc_diag diag;
        char err[512];
} env;

static void env_init(env *e)
{
        memset(e, 0, sizeof(*e));
        e->pool = gc_strpool_new(1 << 22);
        e->res = gc_res_table_new_default();
        ck_assert_ptr_nonnull(e->pool);
        ck_assert_ptr_nonnull(e->res);
        e->o.pool = e->pool;
        e->o.res = e->res;
        e->devs.limit = e->claims.limit = e->pods.limit = 1000;
}

static void env_done(env *e)
{
        gc_dra_device_vec_free(&e->devs);
        gc_claim_vec_free(&e->claims);
        gc_pod_vec_free(&e->pods);
        gc_diag_clear(&e->diag);
        gc_res_table_free(e->res);
        gc_strpool_free(e->pool);
}

static int slices(env *e, const char *json)
{
        char *j = dq(json);
        gc_decode_stats st;
        int r =
            gc_decode_slices(j, strlen(j), &e->o, &e->devs, &st, &e->diag, e->err, sizeof(e->err));

        free(j);
        return r;
}

static const gc_dra_device *dev(const env *e, const char *name)
{
        for (size_t i = 0; i < e->devs.n; i++)
                if (strcmp(e->devs.v[i].name, name) == 0)
                        return &e->devs.v[i];
        return NULL;
}

/* ---- the device mapping, pinned to the driver's shapes --------------------------------------- */

START_TEST(nvidia_devices)
{
        static const struct {
                const char *name;
                int kind;
                double geq;
                int estimate;
                const char *gpu;
                const char *profile;
        } want[] = {
            {"gpu-0", GC_DRA_GPU, 1.0, 0, "GPU-aaaa", NULL},
            /* H100 80GB: max(compute/7, memory/8) of the parent, the nvidia.com/mig-* tables */
            {"gpu-1-mig-19-0-1", GC_DRA_MIG, 1.0 / 7, 0, "GPU-bbbb", "1g.10gb"},
            {"gpu-1-mig-15-2-2", GC_DRA_MIG, 2.0 / 8, 0, "GPU-bbbb", "1g.20gb"},
            {"gpu-1-mig-14-4-2", GC_DRA_MIG, 2.0 / 7, 0, "GPU-bbbb", "2g.20gb"},
            {"gpu-2-mig-9-4-4", GC_DRA_MIG, 4.0 / 8, 0, "GPU-cccc", "3g.40gb"},
            {"gpu-2-mig-20-0-1", GC_DRA_MIG, 1.0 / 7, 0, "GPU-cccc", "1g.10gb+me"},
            /* a profile no table knows: the compute/memory-slice pattern (6g: 7 of 8 memory
             * slices, above its compute share), an estimate */
            {"gpu-2-mig-99-0-8", GC_DRA_MIG, 7.0 / 8, 1, "GPU-cccc", "6g.70gb"},
            /* no profile, two memory slices in its placement: 2/8, an estimate */
            {"gpu-3-mig-14-0-2", GC_DRA_MIG, 2.0 / 8, 1, "n1/gpu-3", NULL},
            /* VFIO passthrough: the whole GPU */
            {"gpu-vfio-0", GC_DRA_GPU, 1.0, 0, "GPU-dddd", NULL},
        };
        env e;

        env_init(&e);
        ck_assert_msg(slices(
                          &e, SLICE("v1", "n1", "4",
                                    GPU_DEV("0", "GPU-aaaa", "NVIDIA H100 80GB HBM3") "," MIG_DEV("gpu-1-mig-19-0-1", "MIG-1", "GPU-bbbb", "1g.10gb", "NVIDIA H100 80GB HBM3", ",'memorySlice0':{'value':'1'}") "," MIG_DEV(
                                        "gpu-1-mig-15-2-2", "MIG-2", "GPU-bbbb", "1g.20gb",
                                        "NVIDIA H100 80GB HBM3",
                                        "") "," MIG_DEV("gpu-1-mig-14-4-2", "MIG-3", "GPU-bbbb",
                                                        "2g.20gb", "NVIDIA H100 80GB HBM3",
                                                        "") "," MIG_DEV("gpu-2-mig-9-4-4", "MIG-4",
                                                                        "GPU-cccc", "3g.40gb",
                                                                        "NVIDIA H100 80GB HBM3",
                                                                        "") "," MIG_DEV("gpu-2-mig-"
                                                                                        "20-0-1",
                                                                                        "MIG-5",
                                                                                        "GPU-cccc",
                                                                                        "1g.10gb+"
                                                                                        "me",
                                                                                        "NVIDIA "
                                                                                        "H100 80GB "
                                                                                        "HBM3",
                                                                                        "") "," MIG_DEV("gpu-2-mig-99-0-8",
                                                                                                        "MIG-6",
                                                                                                        "GPU-cccc",
                                                                                                        "6g.70gb",
                                                                                                        "NVIDIA H100 80GB HBM3",
                                                                                                        "")
                                    /* no parentUUID, no profile: the name gives the parent */
                                    ",{'name':'gpu-3-mig-14-0-2','attributes':{'type':{'string':'"
                                    "mig'}"
                                    ",'productName':{'string':'NVIDIA H100 80GB "
                                    "HBM3'}},'capacity':{"
                                    "'memorySlice0':{'value':'1'},'memorySlice1':{'value':'1'}}}"
                                    ",{'name':'gpu-vfio-0','attributes':{'type':{'string':'vfio'},"
                                    "'uuid':{'string':'GPU-dddd'},'productName':{'string':'NVIDIA "
                                    "H100 80GB HBM3'},'numa':{'int':0}},'capacity':{"
                                    "'addressableMemory':{'value':'80Gi'}}}"
                                    /* a type this version does not know: not a GPU it can price */
                                    ",{'name':'gpu-x','attributes':{'type':{'string':'mps'}}}")) ==
                          0,
                      "%s", e.err);
        ck_assert_uint_eq(e.devs.n, sizeof(want) / sizeof(want[0]));
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                const gc_dra_device *d = dev(&e, want[i].name);

                ck_assert_msg(d != NULL, "%s missing", want[i].name);
                ck_assert_int_eq(d->kind, want[i].kind);
                ck_assert_msg(d->geq > want[i].geq - 1e-12 && d->geq < want[i].geq + 1e-12,
                              "%s: %g, want %g", want[i].name, d->geq, want[i].geq);
                ck_assert_int_eq(d->estimate, want[i].estimate);
                ck_assert_str_eq(d->gpu, want[i].gpu);
                ck_assert_str_eq(d->model, "NVIDIA-H100-80GB-HBM3");
                ck_assert_str_eq(d->driver, "gpu.nvidia.com");
                ck_assert_str_eq(d->pool, "n1");
                ck_assert_str_eq(d->node, "n1");
                ck_assert_int_eq(d->generation, 4);
                if (want[i].profile)
                        ck_assert_str_eq(d->profile, want[i].profile);
        }
        env_done(&e);
}
END_TEST

START_TEST(v1beta1_and_other_drivers)
{
        env e;
        const gc_dra_device *d;

        env_init(&e);
        /* v1beta1: attributes under "basic"; A100 40GB's 3g.20gb is 4/8 of it. */
        ck_assert_msg(
            slices(&e,
                   "{'kind':'List','items':["
                   "{'apiVersion':'resource.k8s.io/v1beta1','kind':'ResourceSlice','spec':{"
                   "'driver':'gpu.nvidia.com','nodeName':'a1','pool':{'name':'a1','generation':1},"
                   "'devices':[{'name':'gpu-0-mig-9-0-4','basic':{'attributes':{'type':{'string':"
                   "'mig'},'parentUUID':{'string':'GPU-a'},'profile':{'string':'3g.20gb'},"
                   "'productName':{'string':'NVIDIA A100-SXM4-40GB'}}}}]}},"
                   /* qualified attribute names are read too */
                   "{'kind':'ResourceSlice','spec':{'driver':'gpu.nvidia.com','nodeName':'a2',"
                   "'pool':{'name':'a2'},'devices':[{'name':'gpu-0','attributes':{"
                   "'gpu.nvidia.com/type':{'string':'gpu'},'gpu.nvidia.com/productName':{"
                   "'string':'NVIDIA A100-SXM4-80GB'}}}]}},"
                   /* another driver: nothing kept by default */
                   "{'kind':'ResourceSlice','spec':{'driver':'gpu.example.com','nodeName':'x',"
                   "'pool':{'name':'x'},'devices':[{'name':'d0','attributes':{'model':{"
                   "'string':'X1'}}}]}},"
                   /* another kind in the List */
                   "{'kind':'ResourceClaim','metadata':{'name':'c'}}]}") == 0,
            "%s", e.err);
        ck_assert_uint_eq(e.devs.n, 2);
        d = dev(&e, "gpu-0-mig-9-0-4");
        ck_assert_ptr_nonnull(d);
        ck_assert_double_eq_tol(d->geq, 0.5, 1e-12);
        ck_assert_str_eq(d->model, "NVIDIA-A100-SXM4-40GB");
        ck_assert_str_eq(d->gpu, "GPU-a");
        ck_assert_int_eq(d->estimate, 0);
        d = &e.devs.v[1];
        ck_assert_str_eq(d->name, "gpu-0");
        ck_assert_str_eq(d->model, "NVIDIA-A100-SXM4-80GB");
        ck_assert_str_eq(d->gpu, "a2/gpu-0"); /* no uuid: named by node and device */
        env_done(&e);
}
END_TEST

START_TEST(configured_driver)
{
        static const gc_dra_rule rules[] = {
            {"gpu.example.com", "model", "X1", "Example-X1", 0.5},
            {"gpu.example.com", "cores", "64", "Example-X2", 1.0},
        };
        gc_dra_rules rs = {rules, 2, 0};
        env e;

        env_init(&e);
        e.o.dra = &rs;
        ck_assert_msg(slices(&e, "{'kind':'ResourceSlice','spec':{'driver':'gpu.example.com',"
                                 "'nodeName':'x','pool':{'name':'x'},'devices':["
                                 "{'name':'d0','attributes':{'model':{'string':'X1'}}},"
                                 "{'name':'d1','attributes':{'cores':{'int':64}}},"
                                 "{'name':'d2','attributes':{'model':{'string':'X9'}}}]}}") == 0,
                      "%s", e.err);
        ck_assert_uint_eq(e.devs.n, 2);
        ck_assert_int_eq(e.devs.v[0].kind, GC_DRA_CONFIGURED);
        ck_assert_double_eq_tol(e.devs.v[0].geq, 0.5, 1e-12);
        ck_assert_str_eq(e.devs.v[0].model, "Example-X1");
        ck_assert_str_eq(e.devs.v[1].model, "Example-X2");
        ck_assert_ptr_null(e.devs.v[1].gpu);
        /* NVIDIA's driver can be switched off. */
        rs.no_nvidia = 1;
        gc_dra_device_vec_free(&e.devs);
        ck_assert_int_eq(slices(&e, SLICE("v1", "n", "1", GPU_DEV("0", "G", "NVIDIA L4"))), 0);
        ck_assert_uint_eq(e.devs.n, 0);
        env_done(&e);
}
END_TEST

START_TEST(model_names)
{
        static const struct {
                const char *in, *out;
        } t[] = {
            {"NVIDIA H100 80GB HBM3", "NVIDIA-H100-80GB-HBM3"},
            {"NVIDIA A100-SXM4-80GB", "NVIDIA-A100-SXM4-80GB"},
            {"Tesla T4", "Tesla-T4"},
            {"NVIDIA H100 NVL", "NVIDIA-H100-NVL"},
            {"NVIDIA GeForce RTX 4090 (x)", "NVIDIA-GeForce-RTX-4090-x"},
            {"NVIDIA L4 ", "NVIDIA-L4"},
        };
        char out[64];

        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                ck_assert_int_eq(gc_dra_model_name(t[i].in, out, sizeof(out)), 0);
                ck_assert_str_eq(out, t[i].out);
        }
        ck_assert_int_eq(gc_dra_model_name("   ", out, sizeof(out)), -EINVAL);
        ck_assert_int_eq(gc_dra_model_name("", out, sizeof(out)), -EINVAL);
        ck_assert_int_eq(
            gc_dra_model_name("NVIDIA 0123456789 0123456789 0123456789 0123456789 0123456789 xyz",
                              out, sizeof(out)),
            -EINVAL);
        ck_assert_int_eq(gc_dra_model_name("NVIDIA H100", out, 6), -EINVAL);
}
END_TEST

START_TEST(bad_slices_name_the_field)
{
        static const struct {
                const char *json, *msg;
        } t[] = {
            {SLICE("v1", "n", "1", "{'attributes':{}}"), "spec.devices[0].name"},
            {SLICE("v1", "n", "1", "{'name':'g','attributes':{'type':{'string':7}}}"),
             "spec.devices[0].attributes[type].string"},
            {SLICE("v1", "n", "1", "{'name':'g','attributes':{'type':'gpu'}}"),
             "spec.devices[0].attributes[type]: not an object"},
            {SLICE("v1", "n", "-1", "{'name':'g'}"), "spec.pool.generation"},
            {"{'kind':'ResourceSlice','spec':{'driver':'gpu.nvidia.com','devices':[]}}",
             "spec.pool: missing"},
            {"{'kind':'ResourceSlice','spec':{'driver':'gpu.nvidia.com','pool':{'name':'p'},"
             "'devices':{}}}",
             "spec.devices: not an array"},
        };

        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                env e;

                env_init(&e);
                /* One object: refused, and said in diag; a list goes on. */
                ck_assert_int_eq(slices(&e, t[i].json), 0);
                ck_assert_uint_eq(e.devs.n, 0);
                ck_assert_uint_eq(e.diag.n_total, 1);
                ck_assert_msg(strstr(e.diag.msgs[0], t[i].msg) != NULL, "%zu: %s", i,
                              e.diag.msgs[0]);
                env_done(&e);
        }
}
END_TEST

/* ---- claims and pods ------------------------------------------------------------------------ */

static int claims(env *e, const char *json)
{
        char *j = dq(json);
        gc_decode_stats st;
        int r = gc_decode_claims(j, strlen(j), &e->o, &e->claims, &st, &e->diag, e->err,
                                 sizeof(e->err));

        free(j);
        return r;
}

START_TEST(claim_shapes)
{
        env e;

        env_init(&e);
        ck_assert_msg(
            claims(&e,
                   "{'kind':'ResourceClaimList','items':["
                   /* v1: two GPUs and an admin-access look at a third */
                   "{'metadata':{'name':'c1','namespace':'ml','uid':'u1',"
                   "'creationTimestamp':'2026-11-16T00:00:00Z'},'spec':{'devices':{'requests':["
                   "{'name':'g','exactly':{'deviceClassName':'gpu.nvidia.com','count':2}},"
                   "{'name':'w','exactly':{'deviceClassName':'gpu.nvidia.com','adminAccess':true}}"
                   "]}},'status':{'allocation':{'devices':{'results':["
                   "{'request':'g','driver':'gpu.nvidia.com','pool':'n1','device':'gpu-0'},"
                   "{'request':'g','driver':'gpu.nvidia.com','pool':'n1','device':'gpu-1'},"
                   "{'request':'w','driver':'gpu.nvidia.com','pool':'n1','device':'gpu-2'}]}},"
                   "'reservedFor':[{'resource':'pods','name':'a','uid':'pa'},"
                   "{'resource':'pods','name':'b','uid':'pb'}]}},"
                   /* v1beta1: adminAccess on the request itself, and on the result */
                   "{'apiVersion':'resource.k8s.io/v1beta1','metadata':{'name':'c2','namespace':"
                   "'mon'},'spec':{'devices':{'requests':[{'name':'w','deviceClassName':'gpu.nvidia"
                   ".com','adminAccess':true}]}},'status':{'allocation':{'devices':{'results':["
                   "{'request':'w','driver':'gpu.nvidia.com','pool':'n1','device':'gpu-0'},"
                   "{'request':'x','driver':'gpu.nvidia.com','pool':'n1','device':'gpu-1',"
                   "'adminAccess':true}]}}}},"
                   /* another driver's device, and an unallocated claim: not kept */
                   "{'metadata':{'name':'c3'},'status':{'allocation':{'devices':{'results':["
                   "{'request':'n','driver':'dra.net','pool':'n1','device':'eth1'}]}}}},"
                   "{'metadata':{'name':'c4'},'status':{}},"
                   /* the extended-resource claim; prioritized list subrequest "g/big" */
                   "{'metadata':{'name':'c5','namespace':'ml','annotations':{"
                   "'resource.kubernetes.io/extended-resource-claim':'true'}},'spec':{'devices':{"
                   "'requests':[{'name':'g','firstAvailable':[{'name':'big'}]}]}},'status':{"
                   "'allocation':{'devices':{'results':[{'request':'g/big','driver':"
                   "'gpu.nvidia.com','pool':'n2','device':'gpu-0-mig-9-4-4'}]}}}}]}") == 0,
            "%s", e.err);
        ck_assert_uint_eq(e.claims.n, 2);
        ck_assert_str_eq(e.claims.v[0].name, "c1");
        ck_assert_str_eq(e.claims.v[0].ns, "ml");
        ck_assert_str_eq(e.claims.v[0].uid, "u1");
        ck_assert_str_eq(e.claims.v[0].devices[0].key, "gpu.nvidia.com/n1/gpu-0");
        ck_assert_str_eq(e.claims.v[0].devices[1].key, "gpu.nvidia.com/n1/gpu-1");
        ck_assert_ptr_null(e.claims.v[0].devices[0].share_id);
        ck_assert_int_eq(e.claims.v[0].n_devices, 2);
        ck_assert_int_eq(e.claims.v[0].n_reserved, 2);
        ck_assert_int_eq(e.claims.v[0].created_at, T0);
        ck_assert_str_eq(e.claims.v[1].name, "c5");
        ck_assert_uint_eq(e.claims.v[1].flags & GC_CLAIM_F_EXTENDED, GC_CLAIM_F_EXTENDED);
        ck_assert_int_eq(e.claims.v[1].n_devices, 1);
        ck_assert_str_eq(e.claims.v[1].devices[0].key, "gpu.nvidia.com/n2/gpu-0-mig-9-4-4");
        ck_assert_uint_eq(e.diag.n_total, 0);
        env_done(&e);
}
END_TEST

START_TEST(bad_claims_name_the_field)
{
        env e;
        char big[8192];
        size_t n = 0;

        env_init(&e);
        ck_assert_int_eq(claims(&e, "{'kind':'ResourceClaimList','items':["
                                    "{'metadata':{'name':'a'},'status':{'allocation':{'devices':{"
                                    "'results':[{'driver':'gpu.nvidia.com','pool':'p'}]}}}},"
                                    "{'metadata':{'name':'b'},'status':{'allocation':{'devices':{"
                                    "'results':[{'driver':'gpu.nvidia.com','pool':'p','device':"
                                    "'d'}]}}}},"
                                    "{'status':{'allocation':{'devices':{'results':[{'driver':"
                                    "'gpu.nvidia.com','pool':'p','device':'d'}]}}}}]}"),
                         0);
        ck_assert_uint_eq(e.claims.n, 1);
        ck_assert_uint_eq(e.diag.n_total, 2);
        ck_assert_ptr_nonnull(strstr(e.diag.msgs[0], "items[0] (a)"));
        ck_assert_ptr_nonnull(strstr(e.diag.msgs[0], "results[0]: driver, pool and device"));
        ck_assert_ptr_nonnull(strstr(e.diag.msgs[1], "metadata: missing"));
        /* More results than the API allows: refused, not truncated. */
        n += (size_t)snprintf(big + n, sizeof(big) - n,
                              "{'kind':'ResourceClaim','metadata':{'name':'x'},'status':{"
                              "'allocation':{'devices':{'results':[");
        for (int i = 0; i < GC_CLAIM_MAX_RESULTS + 1; i++)
                n += (size_t)snprintf(big + n, sizeof(big) - n,
                                      "%s{'driver':'gpu.nvidia.com','pool':'p','device':'d%d'}",
                                      i ? "," : "", i);
        snprintf(big + n, sizeof(big) - n, "]}}}}");
        ck_assert_int_eq(claims(&e, big), 0);
        ck_assert_uint_eq(e.claims.n, 1);
        ck_assert_ptr_nonnull(strstr(e.diag.msgs[2], "more than 32 entries"));
        env_done(&e);
}
END_TEST

static int pods(env *e, const char *json)
{
        char *j = dq(json);
        gc_decode_stats st;
        int r =
            gc_decode_pods(j, strlen(j), &e->o, &e->pods, &st, &e->diag, e->err, sizeof(e->err));

        free(j);
        return r;
}

#define DRA_POD(name, extra_spec, extra_status, limits)                                            \
        "{'metadata':{'name':'" name "','namespace':'ml','uid':'" name "'},'spec':{'nodeName':"    \
        "'n1','containers':[{'name':'c','resources':{'limits':{" limits "}}}]" extra_spec "},"     \
        "'status':{'phase':'Running','conditions':[{'type':'PodScheduled','status':'True',"        \
        "'lastTransitionTime':'2026-11-16T00:00:00Z'}]" extra_status "}}"

START_TEST(pod_claims)
{
        env e;

        env_init(&e);
        ck_assert_msg(
            pods(&e, "{'kind':'PodList','items':["
                 /* a named claim and a template's claim, as status names it */
                 DRA_POD("a",
                         ",'resourceClaims':[{'name':'x','resourceClaimName':'shared'},"
                         "{'name':'y','resourceClaimTemplateName':'t'}]",
                         ",'resourceClaimStatuses':[{'name':'y','resourceClaimName':'a-y-k2j'}]",
                         "") ","
                 /* a template not generated yet, and a claim named twice */
                 DRA_POD("b",
                         ",'resourceClaims':[{'name':'x','resourceClaimName':'shared'},"
                         "{'name':'z','resourceClaimName':'shared'},"
                         "{'name':'y','resourceClaimTemplateName':'t'}]",
                         "", "") ","
                 /* the extended-resource path: nvidia.com/gpu served by DRA counts once */
                 DRA_POD("c", "",
                         ",'extendedResourceClaimStatus':{'resourceClaimName':'c-ext','"
                         "requestMappings':[{'containerName':'c','resourceName':'nvidia.com/gpu',"
                         "'requestName':'container-0-request-0'}]}",
                         "'nvidia.com/gpu':'1','nvidia.com/mig-1g.10gb':'1'") ","
                 /* no claim resolved and no GPU resource: not kept */
                 DRA_POD("d", ",'resourceClaims':[{'name':'y','resourceClaimTemplateName':'t'}]",
                         "", "") "]}") == 0,
            "%s", e.err);
        ck_assert_uint_eq(e.pods.n, 3);
        ck_assert_str_eq(e.pods.v[0].claims, "shared a-y-k2j");
        ck_assert_int_eq(e.pods.v[0].n_gpu, 0);
        ck_assert_str_eq(e.pods.v[1].claims, "shared");
        ck_assert_str_eq(e.pods.v[2].claims, "c-ext");
        ck_assert_int_eq(e.pods.v[2].n_gpu, 1);
        ck_assert_str_eq(e.pods.v[2].gpu[0].resource, "nvidia.com/mig-1g.10gb");
        ck_assert_uint_eq(e.diag.n_total, 0);
        /* Refused with the field named. */
        ck_assert_int_eq(
            pods(&e, "{'kind':'List','items':[" DRA_POD(
                         "e", ",'resourceClaims':[{'resourceClaimName':'s'}]", "", "") "]}"),
            0);
        ck_assert_ptr_nonnull(strstr(e.diag.msgs[0], "spec.resourceClaims[0].name: missing"));
        env_done(&e);
}
END_TEST

START_TEST(list_next)
{
        const char *cur = NULL, *s;
        size_t n;

        ck_assert_int_eq(gc_list_next("a bb  c", ' ', &cur, &s, &n), 1);
        ck_assert_int_eq((int)n, 1);
        ck_assert_int_eq(gc_list_next("a bb  c", ' ', &cur, &s, &n), 1);
        ck_assert_int_eq(strncmp(s, "bb", n), 0);
        ck_assert_int_eq(gc_list_next("a bb  c", ' ', &cur, &s, &n), 1);
        ck_assert_int_eq(*s, 'c');
        ck_assert_int_eq(gc_list_next("a bb  c", ' ', &cur, &s, &n), 0);
        cur = NULL;
        ck_assert_int_eq(gc_list_next("", ' ', &cur, &s, &n), 0);
        ck_assert_int_eq(gc_list_next(NULL, ' ', &cur, &s, &n), 0);
}
END_TEST

/* ---- accounting ----------------------------------------------------------------------------- */

typedef struct acct {
        env e;
        gc_config *cfg;
        gc_ledger *ledger;
        gc_accountant *a;
        gc_node_vec nodes;
} acct;

static void acct_init(acct *x, const char *slices_json, const char *claims_json,
                      const char *nodes_json)
{
        gc_accountant_opts ao;
        gc_ledger_opts lo;
        gc_decode_stats st;
        char *j;

        env_init(&x->e);
        x->cfg = gc_config_default();
        memset(&lo, 0, sizeof(lo));
        lo.pool = x->e.pool;
        x->ledger = gc_ledger_new(&lo);
        gc_config_account_opts(x->cfg, &ao);
        x->a = gc_accountant_new(&ao, x->e.pool, x->ledger);
        ck_assert_ptr_nonnull(x->a);
        memset(&x->nodes, 0, sizeof(x->nodes));
        x->nodes.limit = 100;
        ck_assert_int_eq(slices(&x->e, slices_json), 0);
        ck_assert_int_eq(claims(&x->e, claims_json), 0);
        for (size_t i = 0; i < x->e.devs.n; i++)
                ck_assert_int_eq(gc_account_dra_device(x->a, &x->e.devs.v[i]), 0);
        for (size_t i = 0; i < x->e.claims.n; i++)
                ck_assert_int_eq(gc_account_claim(x->a, &x->e.claims.v[i], &x->e.diag), 0);
        x->e.o.keep_node = gc_accountant_dra_node;
        x->e.o.keep_node_ud = x->a;
        j = dq(nodes_json);
        ck_assert_int_eq(gc_decode_nodes(j, strlen(j), &x->e.o, &x->nodes, &st, &x->e.diag,
                                         x->e.err, sizeof(x->e.err)),
                         0);
        free(j);
        for (size_t i = 0; i < x->nodes.n; i++)
                ck_assert_int_eq(gc_account_node(x->a, &x->nodes.v[i], &x->e.diag), 0);
}

static void acct_done(acct *x)
{
        gc_accountant_free(x->a);
        gc_ledger_free(x->ledger);
        gc_node_vec_free(&x->nodes);
        gc_config_free(x->cfg);
        env_done(&x->e);
}

static gc_pod claim_pod(acct *x, const char *uid, const char *claims_list, int64_t bound,
                        int64_t finished)
{
        gc_pod p;

        memset(&p, 0, sizeof(p));
        p.uid = gc_strpool_intern0(x->e.pool, uid);
        p.name = p.uid;
        p.ns = gc_strpool_intern0(x->e.pool, "ml");
        p.node = gc_strpool_intern0(x->e.pool, "n1");
        p.claims = gc_strpool_intern0(x->e.pool, claims_list);
        p.bound_at = bound;
        p.phase = finished ? GC_PHASE_SUCCEEDED : GC_PHASE_RUNNING;
        p.finished_at = finished;
        return p;
}

static void query(acct *x, int64_t start, int64_t end, gc_dim by, gc_cost_summary *s)
{
        gc_query q;

        memset(&q, 0, sizeof(q));
        q.start = start;
        q.end = end;
        q.by[0] = by;
        q.n_by = 1;
        ck_assert_int_eq(gc_ledger_query(x->ledger, &q, s), 0);
}

static const gc_cost_row *row(const gc_cost_summary *s, const char *key, gc_dim dim)
{
        for (size_t i = 0; i < s->n_rows; i++)
                if (strcmp(s->rows[i].keys[dim], key) == 0)
                        return &s->rows[i];
        return NULL;
}

#define NODE_N1                                                                                    \
        "{'kind':'NodeList','items':[{'metadata':{'name':'n1','creationTimestamp':"                \
        "'2026-11-01T00:00:00Z','labels':{'karpenter.sh/capacity-type':'on-demand'}},"             \
        "'status':{'allocatable':{'cpu':'8'}}},{'metadata':{'name':'cpu-only'},'status':{}}]}"

START_TEST(shared_claim_split_at_each_moment)
{
        acct x;
        gc_cost_summary s;
        gc_pod a, b, c;
        const gc_cost_row *r;

        acct_init(&x,
                  SLICE("v1", "n1", "1",
                        GPU_DEV("0", "GPU-a", "NVIDIA H100 80GB HBM3") "," MIG_DEV(
                            "gpu-1-mig-9-4-4", "MIG-1", "GPU-b", "3g.40gb", "NVIDIA H100 80GB HBM3",
                            "") "," MIG_DEV("gpu-1-mig-9-0-4", "MIG-2", "GPU-b", "3g.40gb",
                                            "NVIDIA H100 80GB HBM3", "")),
                  "{'kind':'List','items':[{'metadata':{'name':'whole','namespace':'ml'},"
                  "'status':{'allocation':{'devices':{'results':[{'request':'g','driver':"
                  "'gpu.nvidia.com','pool':'n1','device':'gpu-0'}]}}}},"
                  "{'metadata':{'name':'half','namespace':'ml'},'status':{'allocation':{'devices':"
                  "{'results':[{'request':'g','driver':'gpu.nvidia.com','pool':'n1','device':"
                  "'gpu-1-mig-9-4-4'}]}}}}]}",
                  NODE_N1);
        /* The DRA node is kept although it offers no GPU resource; the CPU node is not. */
        ck_assert_uint_eq(x.nodes.n, 1);
        /* a: [0 h, 10 h); b: [5 h, open); c: [2 h, 4 h) on both claims. */
        a = claim_pod(&x, "a", "whole", T0, T0 + 10 * H);
        b = claim_pod(&x, "b", "whole", T0 + 5 * H, 0);
        c = claim_pod(&x, "c", "whole half", T0 + 2 * H, T0 + 4 * H);
        ck_assert_int_eq(gc_account_pod(x.a, &a, &x.e.diag), 1);
        ck_assert_int_eq(gc_account_pod(x.a, &b, &x.e.diag), 1);
        ck_assert_int_eq(gc_account_pod(x.a, &c, &x.e.diag), 1);

        query(&x, T0, T0 + 20 * H, GC_DIM_POD, &s);
        /* a: 2 h alone, 2 h with c (1/2), 1 h alone, 5 h with b (1/2) = 2 + 1 + 1 + 2.5 */
        r = row(&s, "a", GC_DIM_POD);
        ck_assert_ptr_nonnull(r);
        ck_assert_double_eq_tol(r->gpu_seconds, 6.5 * H, 1e-6);
        ck_assert_uint_eq(r->pods, 1);
        /* b: 5 h with a (1/2), then 10 h alone */
        r = row(&s, "b", GC_DIM_POD);
        ck_assert_double_eq_tol(r->gpu_seconds, 12.5 * H, 1e-6);
        ck_assert_uint_eq(r->pods, 1);
        /* c: 2 h of half of the GPU, plus the 3g.40gb (0.5) alone */
        r = row(&s, "c", GC_DIM_POD);
        ck_assert_double_eq_tol(r->gpu_seconds, 2 * H * (0.5 + 0.5), 1e-6);
        /* Every second of the whole GPU is billed once: 20 h; the 3g.40gb 2 h x 0.5. */
        ck_assert_double_eq_tol(s.total.gpu_seconds, 20.0 * H + 1.0 * H, 1e-6);
        ck_assert_uint_eq(s.total.pods, 3);
        /* Capacity: 2 physical GPUs (the whole one, and the parent of two partitions). */
        ck_assert_double_eq_tol(s.capacity.gpu_seconds, 2.0 * 20 * H, 1e-6);
        gc_cost_summary_free(&s);

        /* A window that sees only a later piece of a still counts it as one pod. */
        query(&x, T0 + 6 * H, T0 + 7 * H, GC_DIM_POD, &s);
        ck_assert_uint_eq(row(&s, "a", GC_DIM_POD)->pods, 1);
        ck_assert_double_eq_tol(row(&s, "a", GC_DIM_POD)->gpu_seconds, 0.5 * H, 1e-6);
        gc_cost_summary_free(&s);

        /* b is deleted at 8 h: a's share from 8 h to 10 h goes back to whole. */
        ck_assert_int_eq(gc_account_pod_gone(x.a, &b, T0 + 8 * H, 0, &x.e.diag), 1);
        query(&x, T0, T0 + 20 * H, GC_DIM_POD, &s);
        ck_assert_double_eq_tol(row(&s, "a", GC_DIM_POD)->gpu_seconds, 7.5 * H, 1e-6);
        ck_assert_double_eq_tol(row(&s, "b", GC_DIM_POD)->gpu_seconds, 1.5 * H, 1e-6);
        gc_cost_summary_free(&s);
        acct_done(&x);
}
END_TEST

START_TEST(claims_arrive_after_pods)
{
        acct x;
        gc_cost_summary s;
        gc_pod a;

        acct_init(&x, SLICE("v1", "n1", "1", GPU_DEV("0", "GPU-a", "NVIDIA H100 80GB HBM3")),
                  "{'kind':'List','items':[]}", NODE_N1);
        a = claim_pod(&x, "a", "late", T0, T0 + H);
        /* No claim seen at all yet: nothing to bill. */
        ck_assert_int_eq(gc_account_pod(x.a, &a, &x.e.diag), 0);
        ck_assert_int_eq(
            claims(&x.e,
                   "{'kind':'ResourceClaim','metadata':{'name':'other','namespace':'ml'},'status':{"
                   "'allocation':{'devices':{'results':[{'driver':"
                   "'gpu.nvidia.com','pool':'n1','device':'gpu-0'}]}}}}"),
            0);
        ck_assert_int_eq(gc_account_claim(x.a, &x.e.claims.v[0], &x.e.diag), 0);
        ck_assert_int_eq(gc_account_pod(x.a, &a, &x.e.diag), 0); /* its claim still unseen */
        ck_assert_int_eq(
            claims(&x.e,
                   "{'kind':'ResourceClaim','metadata':{'name':'late','namespace':'ml'},'status':{"
                   "'allocation':{'devices':{'results':[{'driver':"
                   "'gpu.nvidia.com','pool':'n1','device':'gpu-0'}]}}}}"),
            0);
        ck_assert_int_eq(gc_account_claim(x.a, &x.e.claims.v[1], &x.e.diag), 0);
        query(&x, T0, T0 + 2 * H, GC_DIM_POD, &s);
        ck_assert_double_eq_tol(s.total.gpu_seconds, 1.0 * H, 1e-6);
        gc_cost_summary_free(&s);
        acct_done(&x);
}
END_TEST

START_TEST(mixed_node_counts_each_gpu_once)
{
        acct x;
        gc_cost_summary s;

        /* The device plugin advertises 2 GPUs and the DRA driver publishes the same 2: the
         * node has 2 (nvidia.com/gpu.count). A newer pool generation supersedes an older. */
        acct_init(
            &x,
            "{'kind':'List','items':[" SLICE(
                "v1", "n1", "2",
                GPU_DEV("0", "GPU-a", "NVIDIA H100 80GB HBM3") "," GPU_DEV(
                    "1", "GPU-b", "NVIDIA H100 80GB HBM3")) "," SLICE("v1", "n1", "1",
                                                                      GPU_DEV("7", "GPU-old",
                                                                              "NVIDIA H100 "
                                                                              "80GB HBM3")) "]}",
            "{'kind':'List','items':[]}",
            "{'kind':'NodeList','items':[{'metadata':{'name':'n1','creationTimestamp':"
            "'2026-11-01T00:00:00Z','labels':{'nvidia.com/gpu.count':'2',"
            "'nvidia.com/gpu.product':'NVIDIA-H100-80GB-HBM3'}},'status':{'allocatable':{"
            "'nvidia.com/gpu':'2'}}}]}");
        query(&x, T0, T0 + H, GC_DIM_NODE, &s);
        ck_assert_double_eq_tol(s.capacity.gpu_seconds, 2.0 * H, 1e-6);
        gc_cost_summary_free(&s);
        acct_done(&x);
}
END_TEST

/* Two claims on two whole GPUs of n1, for the controller-facing tests below. */
#define TWO_GPUS_TWO_CLAIMS                                                                        \
        "{'kind':'List','items':[{'metadata':{'name':'solo','namespace':'ml'},"                    \
        "'status':{'allocation':{'devices':{'results':[{'request':'g','driver':"                   \
        "'gpu.nvidia.com','pool':'n1','device':'gpu-0'}]}}}},"                                     \
        "{'metadata':{'name':'shared','namespace':'ml'},'status':{'allocation':{'devices':"        \
        "{'results':[{'request':'g','driver':'gpu.nvidia.com','pool':'n1','device':"               \
        "'gpu-1'}]}}}}]}"

START_TEST(slice_gone_ends_capacity_not_billing)
{
        acct x;
        gc_cost_summary s;
        gc_pod a;

        acct_init(&x,
                  SLICE("v1", "n1", "1",
                        GPU_DEV("0", "GPU-a", "NVIDIA H100 80GB HBM3") "," GPU_DEV(
                            "1", "GPU-b", "NVIDIA H100 80GB HBM3")),
                  TWO_GPUS_TWO_CLAIMS, NODE_N1);
        a = claim_pod(&x, "a", "solo", T0, T0 + H);
        ck_assert_int_eq(gc_account_pod(x.a, &a, &x.e.diag), 1);
        ck_assert_double_eq_tol(gc_accountant_node(x.a, "n1")->alloc_geq, 2.0, 1e-9);
        /* The driver republishes its pool without gpu-1: capacity follows, billing stays. */
        ck_assert_int_eq(gc_account_dra_device_gone(x.a, "gpu.nvidia.com/n1/gpu-1"), 0);
        ck_assert_int_eq(gc_account_dra_device_gone(x.a, "gpu.nvidia.com/n1/nope"), -ENOENT);
        ck_assert_int_eq(gc_account_node_refresh(x.a, "n1", &x.e.diag), 0);
        ck_assert_double_eq_tol(gc_accountant_node(x.a, "n1")->alloc_geq, 1.0, 1e-9);
        ck_assert_int_eq(gc_account_node_refresh(x.a, "nope", &x.e.diag), -ENOENT);
        /* gpu-0 is gone too (the slice was deleted): the pod still bills its hour. */
        ck_assert_int_eq(gc_account_dra_device_gone(x.a, "gpu.nvidia.com/n1/gpu-0"), 0);
        /* No GPU left on it: not a DRA node any more, and a refresh changes nothing (the
           caller ends the node now, so its past capacity stays). */
        ck_assert_int_eq(gc_accountant_dra_node(x.a, "n1"), 0);
        ck_assert_int_eq(gc_account_node_refresh(x.a, "n1", &x.e.diag), -ENODEV);
        ck_assert_double_eq_tol(gc_accountant_node(x.a, "n1")->alloc_geq, 1.0, 1e-9);
        ck_assert_int_eq(gc_account_pod(x.a, &a, &x.e.diag), 1);
        query(&x, T0, T0 + 2 * H, GC_DIM_POD, &s);
        ck_assert_double_eq_tol(s.total.gpu_seconds, 1.0 * H, 1e-6);
        gc_cost_summary_free(&s);
        /* Published again (a driver restart): counted again. */
        ck_assert_int_eq(gc_account_dra_device(x.a, &x.e.devs.v[0]), 0);
        ck_assert_int_eq(gc_accountant_dra_node(x.a, "n1"), 1);
        ck_assert_int_eq(gc_account_node_refresh(x.a, "n1", &x.e.diag), 0);
        ck_assert_double_eq_tol(gc_accountant_node(x.a, "n1")->alloc_geq, 1.0, 1e-9);
        acct_done(&x);
}
END_TEST

START_TEST(forget_keeps_what_a_shared_claim_needs)
{
        acct x;
        gc_cost_summary s;
        gc_account_dra_counts n;
        gc_pod a, b, c, d;

        acct_init(&x,
                  SLICE("v1", "n1", "1",
                        GPU_DEV("0", "GPU-a", "NVIDIA H100 80GB HBM3") "," GPU_DEV(
                            "1", "GPU-b", "NVIDIA H100 80GB HBM3")),
                  TWO_GPUS_TWO_CLAIMS, NODE_N1);
        /* solo: a [0, 1 h), gone. shared: b [0, 2 h) gone, c [1 h, 5 h) running, d [3 h, 4 h)
         * gone. Forgetting before 4.5 h freezes the pieces before it (c's with b and d among
         * them), so a, b and d may all go: c is priced again only from 4.5 h on. */
        a = claim_pod(&x, "a", "solo", T0, T0 + H);
        b = claim_pod(&x, "b", "shared", T0, T0 + 2 * H);
        c = claim_pod(&x, "c", "shared", T0 + H, 0);
        d = claim_pod(&x, "d", "shared", T0 + 3 * H, T0 + 4 * H);
        ck_assert_int_eq(gc_account_pod_gone(x.a, &a, T0 + H, 0, &x.e.diag), 1);
        ck_assert_int_eq(gc_account_pod_gone(x.a, &b, T0 + 2 * H, 0, &x.e.diag), 1);
        ck_assert_int_eq(gc_account_pod(x.a, &c, &x.e.diag), 1);
        ck_assert_int_eq(gc_account_pod_gone(x.a, &d, T0 + 4 * H, 0, &x.e.diag), 1);
        ck_assert_int_eq(gc_account_claim_gone(x.a, "ml", "solo"), 0);
        ck_assert_int_eq(gc_account_claim_gone(x.a, "ml", "nope"), -ENOENT);
        ck_assert_int_eq(gc_account_dra_forget(x.a, T0 + 4 * H + H / 2), 3);
        gc_account_dra_stats(x.a, &n);
        ck_assert_uint_eq(n.pods, 1);
        ck_assert_uint_eq(n.claims, 1); /* solo: deleted, held by no one */
        ck_assert_uint_eq(n.devices, 2);
        /* c finishes at 5 h: its pieces are re-put from 4.5 h, those with b and d kept. */
        c.phase = GC_PHASE_SUCCEEDED;
        c.finished_at = T0 + 5 * H;
        ck_assert_int_eq(gc_account_pod_gone(x.a, &c, T0 + 5 * H, 0, &x.e.diag), 1);
        query(&x, T0, T0 + 6 * H, GC_DIM_POD, &s);
        /* c: 1 h with b (1/2), 1 h alone, 1 h with d (1/2), 1 h alone = 3 h */
        ck_assert_double_eq_tol(row(&s, "c", GC_DIM_POD)->gpu_seconds, 3.0 * H, 1e-6);
        ck_assert_double_eq_tol(row(&s, "a", GC_DIM_POD)->gpu_seconds, 1.0 * H, 1e-6);
        ck_assert_double_eq_tol(row(&s, "b", GC_DIM_POD)->gpu_seconds, 1.5 * H, 1e-6);
        ck_assert_double_eq_tol(s.total.gpu_seconds, 1.0 * H + 5.0 * H, 1e-6);
        gc_cost_summary_free(&s);
        /* All gone and ended: everything goes, the ledger keeps every piece. */
        ck_assert_int_eq(gc_account_claim_gone(x.a, "ml", "shared"), 0);
        ck_assert_int_eq(gc_account_dra_device_gone(x.a, "gpu.nvidia.com/n1/gpu-0"), 0);
        ck_assert_int_eq(gc_account_dra_forget(x.a, T0 + 6 * H), 1);
        gc_account_dra_stats(x.a, &n);
        ck_assert_uint_eq(n.pods, 0);
        ck_assert_uint_eq(n.claims, 0);
        ck_assert_uint_eq(n.holders, 0);
        ck_assert_uint_eq(n.devices, 1); /* gpu-1 is still published */
        ck_assert_double_eq_tol(gc_accountant_node(x.a, "n1")->alloc_geq, 2.0, 1e-9);
        ck_assert_int_eq(gc_account_node_refresh(x.a, "n1", &x.e.diag), 0);
        ck_assert_double_eq_tol(gc_accountant_node(x.a, "n1")->alloc_geq, 1.0, 1e-9);
        query(&x, T0, T0 + 6 * H, GC_DIM_POD, &s);
        ck_assert_double_eq_tol(s.total.gpu_seconds, 6.0 * H, 1e-6);
        gc_cost_summary_free(&s);
        acct_done(&x);
}
END_TEST

START_TEST(restored_pod_whose_claim_is_gone_keeps_its_figures)
{
        gc_accountant_opts ao;
        acct x, y;
        gc_cost_summary s;
        gc_pod a, b;
        gc_usage u;

        /* The first controller priced a (0.5 of shared from 1 h, with b) and checkpointed. */
        acct_init(&x,
                  SLICE("v1", "n1", "1",
                        GPU_DEV("0", "GPU-a", "NVIDIA H100 80GB HBM3") "," GPU_DEV(
                            "1", "GPU-b", "NVIDIA H100 80GB HBM3")),
                  TWO_GPUS_TWO_CLAIMS, NODE_N1);
        a = claim_pod(&x, "a", "shared", T0, 0);
        b = claim_pod(&x, "b", "shared", T0 + H, 0);
        ck_assert_int_eq(gc_account_pod(x.a, &a, &x.e.diag), 1);
        ck_assert_int_eq(gc_account_pod(x.a, &b, &x.e.diag), 1);
        /* A restart: a new accountant over the restored ledger, with no claim seen (both
         * pods and their generated claim were deleted while it was away). a's deletion is
         * replayed: its pieces end there, with the figures they had. */
        memset(&y, 0, sizeof(y));
        y.e = x.e;
        y.cfg = x.cfg;
        y.ledger = x.ledger;
        gc_config_account_opts(y.cfg, &ao);
        y.a = gc_accountant_new(&ao, y.e.pool, y.ledger);
        ck_assert_ptr_nonnull(y.a);
        for (size_t i = 0; i < x.nodes.n; i++)
                ck_assert_int_eq(gc_account_node(y.a, &x.nodes.v[i], &x.e.diag), 0);
        /* A replayed MODIFIED first (still running), then the DELETED: both keep the pieces. */
        ck_assert_int_eq(gc_account_pod(y.a, &a, &x.e.diag), 1);
        ck_assert_int_eq(gc_ledger_get_usage(y.ledger, "a#dra1", &u), 0);
        ck_assert_int_eq(u.end, GC_OPEN);
        ck_assert_int_eq(gc_account_pod_gone(y.a, &a, T0 + 3 * H, 0, &x.e.diag), 1);
        ck_assert_int_eq(gc_ledger_get_usage(y.ledger, "a", &u), 0);
        ck_assert_int_eq(u.end, T0 + H);
        ck_assert_int_eq(gc_ledger_get_usage(y.ledger, "a#dra1", &u), 0);
        ck_assert_int_eq(u.end, T0 + 3 * H);
        ck_assert_double_eq_tol(u.geq, 0.5, 1e-9);
        query(&x, T0, T0 + 4 * H, GC_DIM_POD, &s);
        ck_assert_double_eq_tol(row(&s, "a", GC_DIM_POD)->gpu_seconds, 1.0 * H + 1.0 * H, 1e-6);
        gc_cost_summary_free(&s);
        /* A pod never priced and not in the ledger with an unseen claim still bills nothing. */
        b.uid = b.name = gc_strpool_intern0(x.e.pool, "never");
        ck_assert_int_eq(gc_account_pod_gone(y.a, &b, T0 + 3 * H, 0, &x.e.diag), 0);
        gc_accountant_free(y.a);
        acct_done(&x);
}
END_TEST

START_TEST(config_rules)
{
        static const struct {
                const char *json, *msg;
        } bad[] = {
            {"{'dra':[]}", "dra: must be an object"},
            {"{'dra':{'nvidia':'no'}}", "dra.nvidia: must be true or false"},
            {"{'dra':{'drivers':[{'attribute':'a','gpus_per_device':1}]}}",
             "dra.drivers[0].driver: must be a string"},
            {"{'dra':{'drivers':[{'driver':'d','gpus_per_device':1}]}}",
             "dra.drivers[0].attribute: must be a string"},
            {"{'dra':{'drivers':[{'driver':'d','attribute':'a'}]}}",
             "dra.drivers[0].gpus_per_device: must be a number"},
            {"{'dra':{'drivers':[{'driver':'d','attribute':'a','gpus_per_device':1,'x':1}]}}",
             "dra.drivers[0].x: unknown field"},
        };
        char err[256], *j;
        gc_config *c;
        gc_model_opts mo;

        j = dq("{'dra':{'nvidia':false,'drivers':[{'driver':'gpu.example.com','attribute':"
               "'model','value':'X1','model':'Example-X1','gpus_per_device':0.5},{'driver':"
               "'gpu.example.com','attribute':'cores','gpus_per_device':1}]}}");
        c = gc_config_parse(j, strlen(j), err, sizeof(err));
        free(j);
        ck_assert_msg(c != NULL, "%s", err);
        gc_config_model_opts(c, c->pool, &mo);
        ck_assert_ptr_eq(mo.dra, &c->dra);
        ck_assert_int_eq(mo.dra->no_nvidia, 1);
        ck_assert_uint_eq(mo.dra->n, 2);
        ck_assert_str_eq(mo.dra->rules[0].driver, "gpu.example.com");
        ck_assert_str_eq(mo.dra->rules[0].value, "X1");
        ck_assert_str_eq(mo.dra->rules[0].model, "Example-X1");
        ck_assert_double_eq_tol(mo.dra->rules[0].gpus_per_device, 0.5, 1e-12);
        ck_assert_ptr_null(mo.dra->rules[1].value);
        ck_assert_ptr_null(mo.dra->rules[1].model);
        gc_config_free(c);
        /* Off by default: NVIDIA's driver only. */
        c = gc_config_default();
        gc_config_model_opts(c, c->pool, &mo);
        ck_assert_int_eq(mo.dra->no_nvidia, 0);
        ck_assert_uint_eq(mo.dra->n, 0);
        gc_config_free(c);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                j = dq(bad[i].json);
                c = gc_config_parse(j, strlen(j), err, sizeof(err));
                free(j);
                ck_assert_ptr_null(c);
                ck_assert_msg(strstr(err, bad[i].msg) != NULL, "%zu: %s", i, err);
        }
}
END_TEST

START_TEST(device_classes)
{
        gc_device_class_vec v = {.limit = 10};
        gc_decode_stats st;
        env e;
        char *j;

        env_init(&e);
        /* As the driver's chart renders them (deviceclass-gpu.yaml, deviceclass-mig.yaml) on
         * resource.k8s.io/v1: the GPU class also serves nvidia.com/gpu (extended resources). */
        /* Plain JSON here: the CEL expressions hold single quotes. */
        j = strdup(
            "{\"kind\":\"DeviceClassList\",\"items\":["
            "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{"
            "\"name\":\"gpu.nvidia.com\"},\"spec\":{\"selectors\":[{\"cel\":{\"expression\":"
            "\"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == "
            "'gpu'\"}}],\"extendedResourceName\":\"nvidia.com/gpu\"}},"
            "{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"mig.nvidia.com\"},\"spec\":{"
            "\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'gpu.nvidia.com' && "
            "device.attributes['gpu.nvidia.com'].type == 'mig'\"}}]}},"
            /* by type alone, with double quotes */
            "{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"mig-only\"},\"spec\":{"
            "\"selectors\":[{\"cel\":{\"expression\":"
            "\"device.attributes[\\\"gpu.nvidia.com\\\"].type==\\\"mig\\\"\"}}]}},"
            /* another driver's class: not kept */
            "{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"nic\"},\"spec\":{\"selectors\":[{"
            "\"cel\":{\"expression\":\"device.driver == 'dra.net' && 'gpu.nvidia.com' != "
            "''\"}}]}},"
            /* a malformed selector: refused, named */
            "{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"bad\"},\"spec\":{\"selectors\":[{"
            "\"cel\":{\"expression\":7}}],\"x\":\"gpu.nvidia.com\"}}]}");
        ck_assert_ptr_nonnull(j);
        ck_assert_msg(gc_decode_device_classes(j, strlen(j), &e.o, &v, &st, &e.diag, e.err,
                                               sizeof(e.err)) == 0,
                      "%s", e.err);
        free(j);
        ck_assert_uint_eq(v.n, 3);
        ck_assert_str_eq(v.v[0].name, "gpu.nvidia.com");
        ck_assert_str_eq(v.v[0].driver, "gpu.nvidia.com");
        ck_assert_str_eq(v.v[0].device_type, "gpu");
        ck_assert_str_eq(v.v[0].extended_resource, "nvidia.com/gpu");
        ck_assert_str_eq(v.v[1].name, "mig.nvidia.com");
        ck_assert_str_eq(v.v[1].device_type, "mig");
        ck_assert_ptr_null(v.v[1].extended_resource);
        ck_assert_str_eq(v.v[2].name, "mig-only");
        ck_assert_str_eq(v.v[2].driver, "gpu.nvidia.com");
        ck_assert_str_eq(v.v[2].device_type, "mig");
        ck_assert_uint_eq(e.diag.n_total, 1);
        ck_assert_ptr_nonnull(strstr(e.diag.msgs[0], "spec.selectors[0].cel.expression"));
        gc_device_class_vec_free(&v);
        env_done(&e);
}
END_TEST

/* ---- shared devices: consumable capacity (KEP-5075) --------------------------------------- */

/*
 * NVIDIA's driver v0.5.0 publishes a shareable GPU (cmd/gpu-kubelet-plugin/consumable_shares.go)
 * as a whole-GPU device with allowMultipleAllocations and its memory consumable: in memory mode
 * default the whole device, range 1Mi..max, step 1Mi; in "N shares" mode memory default 0 with a
 * shares capacity of N (default 1, range 1..N, step 1). 80Gi here, so shares come out round.
 */
#define SHARED_MEM_DEV(minor, uuid)                                                                \
        "{'name':'gpu-" minor "','allowMultipleAllocations':true,'attributes':{'type':{'string':"  \
        "'gpu'},'uuid':{'string':'" uuid "'}," COMMON_ATTRS(                                       \
            "NVIDIA H100 80GB HBM3", "Hopper") "},'capacity':{'memory':{'value':'80Gi','"          \
                                               "requestPolicy':{'default':'80Gi','validRange':{"   \
                                               "'min':'1Mi','max':'80Gi','step':'1Mi'}}}}}"
#define SHARED_SHARES_DEV(minor, uuid, n)                                                          \
        "{'name':'gpu-" minor "','allowMultipleAllocations':true,'attributes':{'type':{'string':"  \
        "'gpu'},'uuid':{'string':'" uuid                                                           \
        "'}," COMMON_ATTRS("NVIDIA H100 80GB HBM3",                                                \
                           "Hopper") "},'capacity':{'memory':{'value':'80Gi','requestPolicy':{'"   \
                                     "default':'0','validRange':{"                                 \
                                     "'min':'0','max':'80Gi'}}},'shares':{'value':'" n             \
                                     "','requestPolicy':{'default':'1',"                           \
                                     "'validRange':{'min':'1','max':'" n "','step':'1'}}}}}"
/* An allocation result on n1 as the 1.37 kube-scheduler writes it for a shared device. */
#define SHARE_RESULT(dev, id, used)                                                                \
        "{'request':'g','driver':'gpu.nvidia.com','pool':'n1','device':'" dev "','shareID':'" id   \
        "','consumedCapacity':{" used "}}"
#define SHARE_CLAIM(name, results)                                                                 \
        "{'metadata':{'name':'" name "','namespace':'ml'},'status':{'allocation':{'devices':{"     \
        "'results':[" results "]}}}}"

START_TEST(shared_device_shapes)
{
        env e;
        const gc_dra_device *d;

        env_init(&e);
        ck_assert_int_eq(slices(&e, "{'kind':'List','items':[" SLICE(
                                        "v1", "n1", "1",
                                        SHARED_MEM_DEV("0", "GPU-m") "," SHARED_SHARES_DEV(
                                            "1", "GPU-s", "4") "," GPU_DEV("2", "GPU-w",
                                                                           "NVIDIA H100 80GB "
                                                                           "HBM3")) "]}"),
                         0);
        d = dev(&e, "gpu-0");
        ck_assert_ptr_nonnull(d);
        ck_assert_int_eq(d->shared, 1);
        ck_assert_int_eq(d->n_caps, 1);
        ck_assert_str_eq(d->caps[0].name, "memory");
        ck_assert_double_eq(d->caps[0].value, 80.0 * 1024 * 1024 * 1024);
        ck_assert_double_eq(d->geq, 1.0);
        d = dev(&e, "gpu-1");
        ck_assert_int_eq(d->shared, 1);
        ck_assert_int_eq(d->n_caps, 2);
        ck_assert_str_eq(d->caps[0].name, "memory");
        ck_assert_str_eq(d->caps[1].name, "shares");
        ck_assert_double_eq(d->caps[1].value, 4.0);
        d = dev(&e, "gpu-2");
        ck_assert_int_eq(d->shared, 0);
        ck_assert_int_eq(d->n_caps, 0);

        ck_assert_int_eq(
            claims(&e, "{'kind':'List','items':[" SHARE_CLAIM(
                           "c1", SHARE_RESULT("gpu-0", "7e5a0b3c-1d2e-4f60-8a9b-0c1d2e3f4a5b",
                                              "'gpu.nvidia.com/memory':'20Gi'")) "]}"),
            0);
        ck_assert_uint_eq(e.claims.n, 1);
        ck_assert_str_eq(e.claims.v[0].devices[0].key, "gpu.nvidia.com/n1/gpu-0");
        ck_assert_str_eq(e.claims.v[0].devices[0].share_id, "7e5a0b3c-1d2e-4f60-8a9b-0c1d2e3f4a5b");
        ck_assert_int_eq(e.claims.v[0].devices[0].n_used, 1);
        ck_assert_str_eq(e.claims.v[0].devices[0].used[0].name, "memory");
        ck_assert_double_eq(e.claims.v[0].devices[0].used[0].value, 20.0 * 1024 * 1024 * 1024);
        ck_assert_uint_eq(e.diag.n_total, 0);
        env_done(&e);
}
END_TEST

START_TEST(bad_shared_shapes_name_the_field)
{
        env e;

        env_init(&e);
        /* A capacity that is no quantity refuses its slice, naming it. */
        ck_assert_int_eq(slices(&e, SLICE("v1", "n1", "1",
                                          "{'name':'gpu-0','allowMultipleAllocations':true,"
                                          "'attributes':{'type':{'string':'gpu'}},'capacity':{"
                                          "'memory':{'value':'lots'}}}")),
                         0);
        ck_assert_uint_eq(e.devs.n, 0);
        ck_assert_ptr_nonnull(strstr(e.diag.msgs[0], "spec.devices[0].capacity[memory].value"));
        /* A consumed amount that is negative, and a bad counter set, likewise. */
        ck_assert_int_eq(claims(&e, "{'kind':'List','items':[" SHARE_CLAIM(
                                        "c1", SHARE_RESULT("gpu-0", "x", "'memory':'-1Gi'")) "]}"),
                         0);
        ck_assert_uint_eq(e.claims.n, 0);
        ck_assert_ptr_nonnull(strstr(e.diag.msgs[1], "consumedCapacity[memory]"));
        ck_assert_int_eq(slices(&e, SLICE("v1", "n1", "1",
                                          "{'name':'gpu-0','attributes':{'type':{'string':"
                                          "'gpu'}},'consumesCounters':[{'counterSet':'a b'}]}")),
                         0);
        ck_assert_uint_eq(e.devs.n, 0);
        ck_assert_ptr_nonnull(
            strstr(e.diag.msgs[2], "spec.devices[0].consumesCounters[0].counterSet"));
        env_done(&e);
}
END_TEST

/* The window [T0, T0 + 2 h): what pod `name` held, in GPU-seconds. */
static double held(acct *x, const char *name)
{
        gc_cost_summary s;
        const gc_cost_row *r;
        double v;

        query(x, T0, T0 + 2 * H, GC_DIM_POD, &s);
        r = row(&s, name, GC_DIM_POD);
        v = r ? r->gpu_seconds : 0;
        gc_cost_summary_free(&s);
        return v;
}

START_TEST(shared_device_split_by_what_each_took)
{
        acct x;
        gc_cost_summary s;
        gc_pod p[4];

        /* The case: a memory-mode H100 (20Gi and 40Gi of 80Gi) and a 4-shares H100
         * (1 and 2 shares) held for two hours: 0.25 + 0.5 + 0.25 + 0.5 = 1.5 GPUs, 3.0
         * GPU-hours, not 8; the other 0.5 of the two GPUs is idle. */
        acct_init(
            &x,
            SLICE("v1", "n1", "1",
                  SHARED_MEM_DEV("0", "GPU-m") "," SHARED_SHARES_DEV("1", "GPU-s", "4")),
            "{'kind':'List','items':[" SHARE_CLAIM("m20", SHARE_RESULT("gpu-0", "s1", "'memory':'20Gi'")) "," SHARE_CLAIM(
                "m40",
                SHARE_RESULT(
                    "gpu-0", "s2",
                    "'memor"
                    "y':'"
                    "40Gi'")) "," SHARE_CLAIM("s1",
                                              SHARE_RESULT(
                                                  "gpu-1", "s3",
                                                  "'memory':'0','shares':'"
                                                  "1'")) "," SHARE_CLAIM("s2",
                                                                         SHARE_RESULT(
                                                                             "gpu-1", "s4",
                                                                             "'memory':'0','shares'"
                                                                             ":'2'")) "]}",
            NODE_N1);
        p[0] = claim_pod(&x, "p20", "m20", T0, T0 + 2 * H);
        p[1] = claim_pod(&x, "p40", "m40", T0, T0 + 2 * H);
        p[2] = claim_pod(&x, "ps1", "s1", T0, T0 + 2 * H);
        p[3] = claim_pod(&x, "ps2", "s2", T0, T0 + 2 * H);
        for (int i = 0; i < 4; i++)
                ck_assert_int_eq(gc_account_pod(x.a, &p[i], &x.e.diag), 1);
        ck_assert_double_eq_tol(held(&x, "p20"), 0.25 * 2 * H, 1e-6);
        ck_assert_double_eq_tol(held(&x, "p40"), 0.5 * 2 * H, 1e-6);
        ck_assert_double_eq_tol(held(&x, "ps1"), 0.25 * 2 * H, 1e-6);
        ck_assert_double_eq_tol(held(&x, "ps2"), 0.5 * 2 * H, 1e-6);
        query(&x, T0, T0 + 2 * H, GC_DIM_POD, &s);
        ck_assert_double_eq_tol(s.total.gpu_seconds, 3.0 * H, 1e-6);
        /* Two physical GPUs, each once; what the holders leave is idle. */
        ck_assert_double_eq_tol(s.capacity.gpu_seconds, 4.0 * H, 1e-6);
        ck_assert_double_eq_tol(s.idle.gpu_seconds, 1.0 * H, 1e-6);
        gc_cost_summary_free(&s);
        acct_done(&x);
}
END_TEST

START_TEST(shared_device_scaled_and_unlimited)
{
        acct x;
        gc_pod p[5];

        /* A device with memory and cores (as HAMi-DRA publishes one): a took 80% of the memory
         * and 10% of the cores, b 10% and 80%: each takes 0.8, together 1.6, scaled to 0.5
         * each. On an "unlimited" device (memory default 0): c took a quarter, d and e nothing
         * and share the other three quarters while they hold it; e comes at 1 h. */
        acct_init(
            &x,
            SLICE("v1", "n1", "1",
                  "{'name':'gpu-0','allowMultipleAllocations':true,'attributes':{'type':{"
                  "'string':'gpu'},'uuid':{'string':'GPU-h'}},'capacity':{'cores':{'value':'100',"
                  "'requestPolicy':{'default':'0','validRange':{'min':'0','max':'100'}}},"
                  "'memory':{'value':'100Gi','requestPolicy':{'default':'0','validRange':{"
                  "'min':'0','max':'100Gi'}}}}},"
                  "{'name':'gpu-1','allowMultipleAllocations':true,'attributes':{'type':{"
                  "'string':'gpu'},'uuid':{'string':'GPU-u'}},'capacity':{'memory':{'value':"
                  "'80Gi','requestPolicy':{'default':'0','validRange':{'min':'0','max':'80Gi'"
                  "}}}}}"),
            "{'kind':'List','items':[" SHARE_CLAIM("ca", SHARE_RESULT("gpu-0", "1", "'cores':'10','memory':'80Gi'")) "," SHARE_CLAIM("cb", SHARE_RESULT("gpu-0", "2", "'cores':'80','memory':'10Gi'")) "," SHARE_CLAIM(
                "cc",
                SHARE_RESULT(
                    "gpu-1", "3",
                    "'memory':'20Gi'")) "," SHARE_CLAIM("cd",
                                                        SHARE_RESULT(
                                                            "gpu-1", "4",
                                                            "'memory':'0'")) "," SHARE_CLAIM("ce",
                                                                                             SHARE_RESULT(
                                                                                                 "g"
                                                                                                 "p"
                                                                                                 "u"
                                                                                                 "-"
                                                                                                 "1",
                                                                                                 "5",
                                                                                                 "'"
                                                                                                 "m"
                                                                                                 "e"
                                                                                                 "m"
                                                                                                 "o"
                                                                                                 "r"
                                                                                                 "y"
                                                                                                 "'"
                                                                                                 ":"
                                                                                                 "'"
                                                                                                 "0"
                                                                                                 "'")) "]}",
            NODE_N1);
        p[0] = claim_pod(&x, "a", "ca", T0, T0 + 2 * H);
        p[1] = claim_pod(&x, "b", "cb", T0, T0 + 2 * H);
        p[2] = claim_pod(&x, "c", "cc", T0, T0 + 2 * H);
        p[3] = claim_pod(&x, "d", "cd", T0, T0 + 2 * H);
        p[4] = claim_pod(&x, "e", "ce", T0 + H, T0 + 2 * H);
        for (int i = 0; i < 5; i++)
                ck_assert_int_eq(gc_account_pod(x.a, &p[i], &x.e.diag), 1);
        ck_assert_double_eq_tol(held(&x, "a"), 0.5 * 2 * H, 1e-6);
        ck_assert_double_eq_tol(held(&x, "b"), 0.5 * 2 * H, 1e-6);
        ck_assert_double_eq_tol(held(&x, "c"), 0.25 * 2 * H, 1e-6);
        /* d: alone with c for an hour (0.75), then with e (0.375) */
        ck_assert_double_eq_tol(held(&x, "d"), 0.75 * H + 0.375 * H, 1e-6);
        ck_assert_double_eq_tol(held(&x, "e"), 0.375 * H, 1e-6);
        /* The holders plus idle are the two devices at every second: nothing idle here. */
        {
                gc_cost_summary s;

                query(&x, T0, T0 + 2 * H, GC_DIM_POD, &s);
                ck_assert_double_eq_tol(s.total.gpu_seconds, 4.0 * H, 1e-6);
                ck_assert_double_eq_tol(s.idle.gpu_seconds, 0, 1e-6);
                gc_cost_summary_free(&s);
        }
        /* d ends at 1.5 h: e holds the three quarters alone from then. */
        p[3].finished_at = T0 + 3 * H / 2;
        ck_assert_int_eq(gc_account_pod(x.a, &p[3], &x.e.diag), 1);
        ck_assert_double_eq_tol(held(&x, "e"), 0.375 * H / 2 + 0.75 * H / 2, 1e-6);
        ck_assert_double_eq_tol(held(&x, "c"), 0.25 * 2 * H, 1e-6);
        acct_done(&x);
}
END_TEST

START_TEST(shared_device_sharers_change_and_forget)
{
        acct x;
        gc_account_dra_counts n;
        gc_pod a, b;

        /* a took 3/4 shares for [0, 1 h) and is gone; b 1/4 share, still running. A claim
         * allocated anew is priced again; forgetting a freezes what came before. */
        acct_init(
            &x, SLICE("v1", "n1", "1", SHARED_SHARES_DEV("0", "GPU-s", "4")),
            "{'kind':'List','items':[" SHARE_CLAIM(
                "ca",
                SHARE_RESULT("gpu-0", "1",
                             "'memory':'0','shares':'3'")) "," SHARE_CLAIM("cb",
                                                                           SHARE_RESULT(
                                                                               "gpu-0", "2",
                                                                               "'memory':'0','"
                                                                               "shares':'1'")) "]}",
            NODE_N1);
        a = claim_pod(&x, "a", "ca", T0, T0 + H);
        b = claim_pod(&x, "b", "cb", T0, 0);
        ck_assert_int_eq(gc_account_pod_gone(x.a, &a, T0 + H, 0, &x.e.diag), 1);
        ck_assert_int_eq(gc_account_pod(x.a, &b, &x.e.diag), 1);
        ck_assert_double_eq_tol(held(&x, "a"), 0.75 * H, 1e-6);
        ck_assert_double_eq_tol(held(&x, "b"), 0.25 * 2 * H, 1e-6);
        /* cb is allocated two shares now (a new allocation): b is priced again, all of it,
         * and a with it: for a's hour the two took 5 of 4 shares, scaled to 0.6 and 0.4. */
        ck_assert_int_eq(
            claims(&x.e, "{'kind':'List','items':[" SHARE_CLAIM(
                             "cb", SHARE_RESULT("gpu-0", "9", "'memory':'0','shares':'2'")) "]}"),
            0);
        ck_assert_int_eq(gc_account_claim(x.a, &x.e.claims.v[x.e.claims.n - 1], &x.e.diag), 0);
        ck_assert_double_eq_tol(held(&x, "b"), 0.4 * H + 0.5 * H, 1e-6);
        ck_assert_double_eq_tol(held(&x, "a"), 0.6 * H, 1e-6);
        ck_assert_int_eq(gc_account_claim_gone(x.a, "ml", "ca"), 0);
        ck_assert_int_eq(gc_account_dra_forget(x.a, T0 + 3 * H / 2), 1);
        gc_account_dra_stats(x.a, &n);
        ck_assert_uint_eq(n.pods, 1);
        ck_assert_uint_eq(n.claims, 1);
        ck_assert_int_eq(gc_account_pod(x.a, &b, &x.e.diag), 1);
        ck_assert_double_eq_tol(held(&x, "b"), 0.4 * H + 0.5 * H, 1e-6);
        ck_assert_double_eq_tol(held(&x, "a"), 0.6 * H, 1e-6);
        /* Back to one share: priced again from the frozen moment (1.5 h) on only; what came
           before stays as it was. */
        ck_assert_int_eq(
            claims(&x.e, "{'kind':'List','items':[" SHARE_CLAIM(
                             "cb", SHARE_RESULT("gpu-0", "10", "'memory':'0','shares':'1'")) "]}"),
            0);
        ck_assert_int_eq(gc_account_claim(x.a, &x.e.claims.v[x.e.claims.n - 1], &x.e.diag), 0);
        ck_assert_double_eq_tol(held(&x, "b"), 0.4 * H + 0.5 * H / 2 + 0.25 * H / 2, 1e-6);
        acct_done(&x);
}
END_TEST

START_TEST(restart_keeps_shares_priced_with_claims_since_gone)
{
        gc_accountant_opts ao;
        acct x, y;
        gc_pod a, b, c;

        /* An "unlimited" GPU: a and b took nothing and split it while both held it; b ended
         * at 1 h and its generated claim went with it. The checkpoint at 2 h holds a's pieces.
         * After the restart cb is gone from the API: what came before the checkpoint stays as
         * priced (a held half for b's hour); from it on a is priced from what is known now, and
         * c comes at 3 h. */
        acct_init(
            &x,
            SLICE("v1", "n1", "1",
                  "{'name':'gpu-0','allowMultipleAllocations':true,'attributes':{'type':{"
                  "'string':'gpu'},'uuid':{'string':'GPU-u'}},'capacity':{'memory':{"
                  "'value':'80Gi','requestPolicy':{'default':'0','validRange':{'min':'0',"
                  "'max':'80Gi','step':'1Mi'}}}}}"),
            "{'kind':'List','items':[" SHARE_CLAIM(
                "ca",
                SHARE_RESULT(
                    "gpu-0", "1",
                    "'memory':'0'")) "," SHARE_CLAIM("cb",
                                                     SHARE_RESULT(
                                                         "gpu-0", "2",
                                                         "'memory':'0'")) "," SHARE_CLAIM("cc",
                                                                                          SHARE_RESULT(
                                                                                              "gpu-"
                                                                                              "0",
                                                                                              "3",
                                                                                              "'mem"
                                                                                              "ory'"
                                                                                              ":'"
                                                                                              "0'")) "]}",
            NODE_N1);
        a = claim_pod(&x, "a", "ca", T0, 0);
        b = claim_pod(&x, "b", "cb", T0, T0 + H);
        ck_assert_int_eq(gc_account_pod(x.a, &a, &x.e.diag), 1);
        ck_assert_int_eq(gc_account_pod(x.a, &b, &x.e.diag), 1);
        ck_assert_double_eq_tol(held(&x, "a"), 0.5 * H + 1.0 * H, 1e-6);
        memset(&y, 0, sizeof(y));
        y.e = x.e;
        y.cfg = x.cfg;
        y.ledger = x.ledger;
        gc_config_account_opts(y.cfg, &ao);
        y.a = gc_accountant_new(&ao, y.e.pool, y.ledger);
        ck_assert_ptr_nonnull(y.a);
        gc_account_dra_freeze(y.a, T0 + 2 * H);
        for (size_t i = 0; i < x.e.devs.n; i++)
                ck_assert_int_eq(gc_account_dra_device(y.a, &x.e.devs.v[i]), 0);
        ck_assert_int_eq(gc_account_claim(y.a, &x.e.claims.v[0], &x.e.diag), 0);
        ck_assert_int_eq(gc_account_claim(y.a, &x.e.claims.v[2], &x.e.diag), 0);
        for (size_t i = 0; i < x.nodes.n; i++)
                ck_assert_int_eq(gc_account_node(y.a, &x.nodes.v[i], &x.e.diag), 0);
        ck_assert_int_eq(gc_account_pod(y.a, &a, &x.e.diag), 1);
        c = claim_pod(&x, "c", "cc", T0 + 3 * H, 0);
        ck_assert_int_eq(gc_account_pod(y.a, &c, &x.e.diag), 1);
        {
                gc_cost_summary s;

                query(&x, T0, T0 + 4 * H, GC_DIM_POD, &s);
                /* a: 1 h at half, 2 h alone, 1 h at half with c */
                ck_assert_double_eq_tol(row(&s, "a", GC_DIM_POD)->gpu_seconds,
                                        0.5 * H + 2.0 * H + 0.5 * H, 1e-6);
                ck_assert_double_eq_tol(row(&s, "b", GC_DIM_POD)->gpu_seconds, 0.5 * H, 1e-6);
                ck_assert_double_eq_tol(row(&s, "c", GC_DIM_POD)->gpu_seconds, 0.5 * H, 1e-6);
                gc_cost_summary_free(&s);
        }
        /* Without the freeze, a would be priced whole for b's hour (cb unknown): 0.5 h more. */
        gc_accountant_free(y.a);
        acct_done(&x);
}
END_TEST

/* ---- HAMi (Project-HAMi/HAMi v2.10.0) ------------------------------------------------------ */

/*
 * hami.io/node-nvidia-register as the device plugin writes it: JSON since v2.8
 * (pkg/device/devices.go MarshalNodeDevices: id, index, count, devmem MiB, devcore, type, numa,
 * mode, health, each omitted when empty), "id,count,devmem,devcore,type,numa,health,index,mode:"
 * up to v2.7 (EncodeNodeDevices). hami.io/vgpu-devices-allocated as the scheduler writes it
 * (pkg/device/devices.go EncodePodSingleDevice): "UUID,NVIDIA,<MiB>,<cores>:" per device, ';'
 * per container, init containers first.
 */
#define HAMI_JSON                                                                                  \
        "[{\\\"id\\\":\\\"GPU-h0\\\",\\\"count\\\":10,\\\"devmem\\\":81559,\\\"devcore\\\":100,"   \
        "\\\"type\\\":\\\"NVIDIA H100 80GB "                                                       \
        "HBM3\\\",\\\"mode\\\":\\\"hami-core\\\",\\\"health\\\":"                                  \
        "true},{\\\"id\\\":\\\"GPU-h1\\\",\\\"index\\\":1,\\\"count\\\":10,\\\"devmem\\\":81559,"  \
        "\\\"devcore\\\":100,\\\"type\\\":\\\"NVIDIA H100 80GB "                                   \
        "HBM3\\\",\\\"numa\\\":1,\\\"mode\\\":"                                                    \
        "\\\"hami-core\\\",\\\"health\\\":true}]"
#define HAMI_CSV                                                                                   \
        "GPU-h0,10,81559,100,NVIDIA H100 80GB HBM3,0,true,0,hami-core:GPU-h1,10,81559,100,NVIDIA " \
        "H100 80GB HBM3,1,true,1,hami-core:"
#define HAMI_NODE(reg)                                                                             \
        "{'kind':'NodeList','items':[{'metadata':{'name':'n1','creationTimestamp':"                \
        "'2026-11-01T00:00:00Z','labels':{'karpenter.sh/capacity-type':'on-demand',"               \
        "'nvidia.com/gpu.product':'NVIDIA-H100-80GB-HBM3'},'annotations':{"                        \
        "'hami.io/node-nvidia-register':'" reg "'}},'status':{'allocatable':{"                     \
        "'nvidia.com/gpu':'20'}}}]}"

static gc_pod hami_pod(acct *x, const char *name, const char *alloc, int64_t bound,
                       int64_t finished)
{
        char json[2048];
        gc_pod p;
        char *j;

        snprintf(json, sizeof(json),
                 "{'metadata':{'name':'%s','namespace':'ml','uid':'%s','annotations':{"
                 "'hami.io/vgpu-node':'n1','hami.io/vgpu-devices-allocated':'%s'}},'spec':{"
                 "'nodeName':'n1','containers':[{'name':'c','resources':{'limits':{"
                 "'nvidia.com/gpu':'1','nvidia.com/gpumem':'20000','nvidia.com/gpucores':'30'}}}]},"
                 "'status':{'phase':'Running'}}",
                 name, name, alloc);
        j = dq(json);
        {
                cJSON *obj = cJSON_Parse(j);

                ck_assert_ptr_nonnull(obj);
                memset(&p, 0, sizeof(p));
                ck_assert_int_eq(gc_pod_from_json(obj, &x->e.o, &p, x->e.err, sizeof(x->e.err)), 1);
                cJSON_Delete(obj);
        }
        free(j);
        p.bound_at = bound;
        p.finished_at = finished;
        p.phase = finished ? GC_PHASE_SUCCEEDED : GC_PHASE_RUNNING;
        return p;
}

/* HAMi-DRA: Project-HAMi/k8s-dra-driver v0.1.0, cmd/hami-kubelet-plugin/hami_core.go: one
 * device per GPU, "hami-gpu-<minor>", type "hami-gpu", shared, cores (default 100, 0..100 step 1)
 * and memory in bytes (default all, 1Mi..all step 1Mi). Its webhook turns nvidia.com/gpucores
 * and nvidia.com/gpumem into capacity.requests cores and memory (bytes). */
START_TEST(hami_dra_device_priced_as_shared)
{
        acct x;
        gc_pod a;
        char slice[4096];

        snprintf(slice, sizeof(slice),
                 "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice','metadata':{'name':"
                 "'n1-hami'},'spec':{'driver':'%s','nodeName':'n1','pool':{'name':'n1',"
                 "'generation':1,'resourceSliceCount':1},'devices':[{'name':'hami-gpu-0',"
                 "'allowMultipleAllocations':true,'attributes':{'type':{'string':'hami-gpu'},"
                 "'uuid':{'string':'GPU-d0'},'minor':{'int':0},'productName':{'string':'NVIDIA "
                 "H100 80GB HBM3'}},'capacity':{'cores':{'value':'100','requestPolicy':{'default':"
                 "'100','validRange':{'min':'0','max':'100','step':'1'}}},'memory':{'value':"
                 "'85899345920','requestPolicy':{'default':'85899345920','validRange':{'min':"
                 "'1Mi','max':'85899345920','step':'1Mi'}}}}}]}}",
                 GC_DRA_HAMI_DRIVER);
        {
                char claims[1024];

                snprintf(claims, sizeof(claims),
                         "{'kind':'List','items':[{'metadata':{'name':'ml-a-c-nvidia','namespace':"
                         "'ml'},'status':{'allocation':{'devices':{'results':[{'request':'gpu',"
                         "'driver':'%s','pool':'n1','device':'hami-gpu-0','shareID':'s1',"
                         "'consumedCapacity':{'cores':'30','memory':'21474836480'}}]}}}}]}",
                         GC_DRA_HAMI_DRIVER);
                acct_init(&x, slice, claims, NODE_N1);
        }
        ck_assert_ptr_nonnull(dev(&x.e, "hami-gpu-0"));
        ck_assert_int_eq(dev(&x.e, "hami-gpu-0")->shared, 1);
        ck_assert_str_eq(dev(&x.e, "hami-gpu-0")->model, "NVIDIA-H100-80GB-HBM3");
        ck_assert_double_eq_tol(gc_accountant_node(x.a, "n1")->alloc_geq, 1.0, 1e-9);
        a = claim_pod(&x, "a", "ml-a-c-nvidia", T0, T0 + 2 * H);
        ck_assert_int_eq(gc_account_pod(x.a, &a, &x.e.diag), 1);
        /* 30 % of the cores is more of the GPU than 20 GiB of its 80: 0.3. */
        ck_assert_double_eq_tol(held(&x, "a"), 0.3 * 2 * H, 1e-6);
        acct_done(&x);
}
END_TEST

START_TEST(hami_node_and_pod_shapes)
{
        for (int form = 0; form < 2; form++) {
                acct x;
                gc_dra_device_vec v;
                gc_pod p;
                gc_claim cl;
                const gc_node *n;

                acct_init(&x, "{'kind':'List','items':[]}", "{'kind':'List','items':[]}",
                          form ? HAMI_NODE(HAMI_CSV) : HAMI_NODE(HAMI_JSON));
                ck_assert_uint_eq(x.nodes.n, 1);
                n = &x.nodes.v[0];
                ck_assert_ptr_nonnull(n->hami_register);
                /* 20 vGPU slots are two GPUs split ten ways: not 20 GPUs. */
                ck_assert_int_eq(n->replicas, 10);
                ck_assert_double_eq(n->alloc_geq, 0.0);
                ck_assert_double_eq_tol(gc_accountant_node(x.a, "n1")->alloc_geq, 2.0, 1e-9);
                memset(&v, 0, sizeof(v));
                ck_assert_int_eq(gc_hami_node_devices(n, x.e.pool, &v, x.e.err, sizeof(x.e.err)),
                                 2);
                ck_assert_str_eq(v.v[1].name, "GPU-h1");
                ck_assert_str_eq(v.v[1].driver, GC_HAMI_DRIVER);
                ck_assert_str_eq(v.v[1].model, "NVIDIA-H100-80GB-HBM3");
                ck_assert_int_eq(v.v[1].shared, 1);
                ck_assert_str_eq(v.v[1].caps[0].name, "memory");
                ck_assert_double_eq(v.v[1].caps[0].value, 81559);
                ck_assert_str_eq(v.v[1].caps[1].name, "cores");
                ck_assert_double_eq(v.v[1].caps[1].value, 100);
                free(v.v);

                /* Two containers: the first on both GPUs, the second none. */
                p = hami_pod(&x, "a", "GPU-h0,NVIDIA,3000,50:GPU-h1,NVIDIA,3000,50:;;", T0, 0);
                ck_assert_uint_eq(p.n_gpu, 0); /* nvidia.com/gpu, gpumem, gpucores are HAMi's */
                ck_assert_str_eq(p.claims, "hami.io/a");
                ck_assert_int_eq(gc_hami_pod_claim(&p, x.e.pool, &cl, x.e.err, sizeof(x.e.err)), 1);
                ck_assert_str_eq(cl.name, "hami.io/a");
                ck_assert_int_eq(cl.n_devices, 2);
                ck_assert_str_eq(cl.devices[1].key, "hami.io/n1/GPU-h1");
                ck_assert_str_eq(cl.devices[1].used[0].name, "memory");
                ck_assert_double_eq(cl.devices[1].used[0].value, 3000);
                ck_assert_double_eq(cl.devices[1].used[1].value, 50);
                gc_claim_release(&cl);
                acct_done(&x);
        }
}
END_TEST

START_TEST(hami_bad_annotations_name_the_field)
{
        static const struct {
                const char *reg, *want;
        } cases[] = {
            {"GPU-h0,ten,81559,100,H100,0,true:", "a bad id, count, memory or cores"},
            {"GPU-h0,10,81559:", "not 7 or 9 comma-separated fields"},
            {"GPU-h0,10,81559,100,H100,0,true,0,hami-core,more:", "not 7 or 9 comma-separated"},
            {"[{\\\"count\\\":10}]", "[0].id: missing"},
            {"[{\\\"id\\\":\\\"GPU-h0\\\",\\\"devmem\\\":-1}]", "[0].devmem: not a whole number"},
            {"{}", "not 7 or 9 comma-separated fields"},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                env e;
                char json[1024], *j;
                gc_decode_stats st;

                env_init(&e);
                snprintf(json, sizeof(json), HAMI_NODE("%s"), cases[i].reg);
                j = dq(json);
                ck_assert_int_eq(gc_decode_nodes(j, strlen(j), &e.o, &(gc_node_vec){0}, &st,
                                                 &e.diag, e.err, sizeof(e.err)),
                                 0);
                free(j);
                ck_assert_uint_eq(st.kept, 0);
                ck_assert_msg(e.diag.n_total == 1 &&
                                  strstr(e.diag.msgs[0], "hami.io/node-nvidia-register") &&
                                  strstr(e.diag.msgs[0], cases[i].want),
                              "%zu: %s", i, e.diag.n_total ? e.diag.msgs[0] : "(none)");
                env_done(&e);
        }
}
END_TEST

START_TEST(hami_pods_priced_by_what_they_got)
{
        acct x;
        gc_cost_summary s;
        gc_pod a, b, c, d;

        /* a: 20000 MiB and 30 % of the cores of GPU-h0: 0.3 of it; b: 40000 MiB, no core cap:
         * 40000/81559; c: HAMi allocated nothing yet (no annotation devices): its vGPU slot is
         * 1/10 of a GPU, as any split unit; d: 0.2 of GPU-h0 (its cores) and about half of GPU-h1
         * (its memory). Two GPUs of capacity, not 20. */
        acct_init(&x, "{'kind':'List','items':[]}", "{'kind':'List','items':[]}",
                  HAMI_NODE(HAMI_JSON));
        a = hami_pod(&x, "a", "GPU-h0,NVIDIA,20000,30:;", T0, T0 + 2 * H);
        b = hami_pod(&x, "b", "GPU-h0,NVIDIA,40000,0:;", T0, T0 + 2 * H);
        c = hami_pod(&x, "c", ";", T0, T0 + 2 * H);
        d = hami_pod(&x, "d", "GPU-h0,NVIDIA,10000,20:GPU-h1,NVIDIA,40780,50:;", T0, T0 + H);
        ck_assert_int_eq(gc_account_pod(x.a, &a, &x.e.diag), 1);
        ck_assert_int_eq(gc_account_pod(x.a, &b, &x.e.diag), 1);
        ck_assert_int_eq(gc_account_pod(x.a, &c, &x.e.diag), 1);
        ck_assert_int_eq(gc_account_pod(x.a, &d, &x.e.diag), 1);
        ck_assert_double_eq_tol(held(&x, "a"), 0.3 * 2 * H, 1e-6);
        ck_assert_double_eq_tol(held(&x, "b"), 40000.0 / 81559 * 2 * H, 1e-6);
        ck_assert_double_eq_tol(held(&x, "c"), 0.1 * 2 * H, 1e-6);
        ck_assert_double_eq_tol(held(&x, "d"), (0.2 + 40780.0 / 81559) * H, 1e-6);
        query(&x, T0, T0 + 2 * H, GC_DIM_POD, &s);
        ck_assert_double_eq_tol(s.capacity.gpu_seconds, 2.0 * 2 * H, 1e-6);
        gc_cost_summary_free(&s);
        /* a is deleted at 1 h: its claim goes with it, b's share does not move. */
        a.phase = GC_PHASE_RUNNING;
        a.finished_at = 0;
        ck_assert_int_eq(gc_account_pod_gone(x.a, &a, T0 + H, 0, &x.e.diag), 1);
        ck_assert_double_eq_tol(held(&x, "a"), 0.3 * H, 1e-6);
        ck_assert_double_eq_tol(held(&x, "b"), 40000.0 / 81559 * 2 * H, 1e-6);
        acct_done(&x);
}
END_TEST

/* ---- partitionable devices: dynamic MIG (KEP-4815) --------------------------------------- */

START_TEST(partitionable_gpu_counts_once)
{
        acct x;
        gc_cost_summary s;
        gc_pod a;

        /* The pool's counter set in a slice of its own (a slice holds devices or counters,
         * never both), and the whole GPU and two MIG profiles that could be carved from it, each
         * consuming from the set. One 3g.40gb is allocated: 0.5 held, 0.5 idle, one GPU. */
        acct_init(
            &x,
            "{'kind':'List','items':["
            "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice','metadata':{'name':'n1-c'},"
            "'spec':{'driver':'gpu.nvidia.com','nodeName':'n1','pool':{'name':'n1','generation':"
            "1,'resourceSliceCount':2},'sharedCounters':[{'name':'gpu-0-counter-set','counters':{"
            "'memorySlice0':{'value':'1'},'multiprocessors':{'value':'132'}}}]}}," SLICE(
                "v1", "n1", "1",
                "{'name':'gpu-0','attributes':{'type':{'string':'gpu'},'uuid':{'string':'GPU-p'},"
                "'productName':{'string':'NVIDIA H100 80GB HBM3'}},'consumesCounters':[{"
                "'counterSet':'gpu-0-counter-set','counters':{'multiprocessors':{'value':'132'}}}]}"
                ","
                "{'name':'gpu-0-mig-9-4-4','attributes':{'type':{'string':'mig'},'profile':{"
                "'string':'3g.40gb'},'parentUUID':{'string':'GPU-p'},'productName':{'string':"
                "'NVIDIA H100 80GB HBM3'}},'consumesCounters':[{'counterSet':'gpu-0-counter-set',"
                "'counters':{'multiprocessors':{'value':'60'}}}]},"
                "{'name':'gpu-0-mig-19-0-1','attributes':{'type':{'string':'mig'},'profile':{"
                "'string':'1g.10gb'},'productName':{'string':'NVIDIA H100 80GB HBM3'}},"
                "'consumesCounters':[{'counterSet':'gpu-0-counter-set','counters':{"
                "'multiprocessors':{'value':'16'}}}]}") "]}",
            "{'kind':'List','items':[{'metadata':{'name':'carved','namespace':'ml'},'status':{"
            "'allocation':{'devices':{'results':[{'request':'g','driver':'gpu.nvidia.com','pool':"
            "'n1','device':'gpu-0-mig-9-4-4'}]}}}}]}",
            NODE_N1);
        ck_assert_str_eq(dev(&x.e, "gpu-0")->gpu, "gpu.nvidia.com/n1/gpu-0-counter-set");
        ck_assert_str_eq(dev(&x.e, "gpu-0-mig-19-0-1")->gpu, "gpu.nvidia.com/n1/gpu-0-counter-set");
        ck_assert_double_eq_tol(dev(&x.e, "gpu-0-mig-19-0-1")->geq, 1.0 / 7, 1e-9);
        ck_assert_double_eq_tol(gc_accountant_node(x.a, "n1")->alloc_geq, 1.0, 1e-9);
        a = claim_pod(&x, "a", "carved", T0, T0 + 2 * H);
        ck_assert_int_eq(gc_account_pod(x.a, &a, &x.e.diag), 1);
        query(&x, T0, T0 + 2 * H, GC_DIM_POD, &s);
        ck_assert_double_eq_tol(row(&s, "a", GC_DIM_POD)->gpu_seconds, 0.5 * 2 * H, 1e-6);
        ck_assert_double_eq_tol(s.capacity.gpu_seconds, 2.0 * H, 1e-6);
        ck_assert_double_eq_tol(s.idle.gpu_seconds, 1.0 * H, 1e-6);
        gc_cost_summary_free(&s);
        acct_done(&x);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("dra");
        TCase *tc = tcase_create("dra");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, nvidia_devices);
        tcase_add_test(tc, v1beta1_and_other_drivers);
        tcase_add_test(tc, configured_driver);
        tcase_add_test(tc, model_names);
        tcase_add_test(tc, config_rules);
        tcase_add_test(tc, bad_slices_name_the_field);
        tcase_add_test(tc, claim_shapes);
        tcase_add_test(tc, device_classes);
        tcase_add_test(tc, bad_claims_name_the_field);
        tcase_add_test(tc, pod_claims);
        tcase_add_test(tc, list_next);
        tcase_add_test(tc, shared_claim_split_at_each_moment);
        tcase_add_test(tc, claims_arrive_after_pods);
        tcase_add_test(tc, mixed_node_counts_each_gpu_once);
        tcase_add_test(tc, slice_gone_ends_capacity_not_billing);
        tcase_add_test(tc, forget_keeps_what_a_shared_claim_needs);
        tcase_add_test(tc, restored_pod_whose_claim_is_gone_keeps_its_figures);
        tcase_add_test(tc, shared_device_shapes);
        tcase_add_test(tc, bad_shared_shapes_name_the_field);
        tcase_add_test(tc, shared_device_split_by_what_each_took);
        tcase_add_test(tc, shared_device_scaled_and_unlimited);
        tcase_add_test(tc, shared_device_sharers_change_and_forget);
        tcase_add_test(tc, restart_keeps_shares_priced_with_claims_since_gone);
        tcase_add_test(tc, hami_dra_device_priced_as_shared);
        tcase_add_test(tc, hami_node_and_pod_shapes);
        tcase_add_test(tc, hami_bad_annotations_name_the_field);
        tcase_add_test(tc, hami_pods_priced_by_what_they_got);
        tcase_add_test(tc, partitionable_gpu_counts_once);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
