/* test_price: catalog parsing and matching, node classification precedence, the TCO model. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price/price.h"

#define MAXL 16

/* A catalog where every key level is exercised; prices are the entry numbers, to read easily. */
static const char TEST_CATALOG[] =
    "{\"currency\":\"USD\",\"as_of\":\"2025-06-01\",\"source\":\"test\",\"notes\":[1,2],"
    "\"prices\":["
    "{\"model\":\"*\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":1.0},"
    "{\"model\":\"NVIDIA-H100*\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":2.0},"
    "{\"model\":\"NVIDIA-H100-80GB*\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":3.0},"
    "{\"model\":\"NVIDIA-H100-80GB-HBM3\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":4.0},"
    "{\"model\":\"NVIDIA-H100-80GB-HBM3\",\"capacity_type\":\"spot\",\"usd_per_gpu_hour\":5},"
    "{\"model\":\"NVIDIA-H100-80GB-HBM3\",\"capacity_type\":\"spot\",\"region\":\"us-east-1\","
    "\"usd_per_gpu_hour\":6.0,\"comment\":\"unknown fields are ignored\"},"
    "{\"model\":\"*\",\"capacity_type\":\"reserved\",\"usd_per_gpu_hour\":7.0},"
    "{\"model\":\"*\",\"capacity_type\":\"reserved\",\"region\":\"eu-west-1\","
    "\"usd_per_gpu_hour\":8.0},"
    "{\"model\":\"Tesla-T4\",\"capacity_type\":\"on-demand\",\"region\":\"*\","
    "\"usd_per_gpu_hour\":9.0},"
    "{\"model\":\"tesla t4\",\"capacity_type\":\"spot\",\"usd_per_gpu_hour\":10.0},"
    "{\"model\":\"NVIDIA-A100*\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":11.0},"
    "{\"model\":\"NVIDIA-A100*\",\"capacity_type\":\"on-demand\",\"region\":\"us-east-1\","
    "\"usd_per_gpu_hour\":12.0,\"source\":\"a note\"}"
    "]}";

static gc_catalog *test_catalog(void)
{
        char err[256] = "";
        gc_catalog *c = gc_catalog_parse(TEST_CATALOG, strlen(TEST_CATALOG), err, sizeof(err));

        ck_assert_msg(c != NULL, "test catalog: %s", err);
        return c;
}

/* ---- lookup --------------------------------------------------------------------------------- */

static const struct {
        const char *model, *capacity, *region;
        double want;
} lookup_cases[] = {
    /* exact model, exact capacity type, exact region */
    {"NVIDIA-H100-80GB-HBM3", "spot", "us-east-1", 6.0},
    {"NVIDIA-H100-80GB-HBM3", "spot", "US-EAST-1", 6.0},
    /* the region entry does not match: the same model and capacity without region */
    {"NVIDIA-H100-80GB-HBM3", "spot", "us-west-2", 5.0},
    {"NVIDIA-H100-80GB-HBM3", "spot", NULL, 5.0},
    /* no spot: the exact model with "*" */
    {"NVIDIA-H100-80GB-HBM3", "on-demand", NULL, 4.0},
    /* the model outranks capacity and region: not the reserved eu-west-1 catch-all (8.0) */
    {"NVIDIA-H100-80GB-HBM3", "reserved", "eu-west-1", 4.0},
    /* DCGM's spelling and other cases name the same GPU */
    {"NVIDIA H100 80GB HBM3", "spot", "us-east-1", 6.0},
    {"nvidia-h100-80gb-hbm3", "spot", NULL, 5.0},
    /* a longer glob beats a shorter one */
    {"NVIDIA-H100-80GB-PCIe", "on-demand", NULL, 3.0},
    {"NVIDIA H100 80GB PCIe", "spot", NULL, 3.0},
    {"NVIDIA-H100-NVL", "spot", NULL, 2.0},
    {"NVIDIA-H100", "spot", NULL, 2.0}, /* "NVIDIA-H100*" matches an empty tail */
    /* an entry written "tesla t4" matches GFD's "Tesla-T4" */
    {"Tesla-T4", "on-demand", "us-east-1", 9.0},
    {"Tesla-T4", "spot", NULL, 10.0},
    /* no T4 reserved entry: the catch-all model with the exact capacity type wins */
    {"Tesla-T4", "reserved", "eu-west-1", 8.0},
    {"Tesla-T4", "reserved", "us-east-1", 7.0},
    {"Tesla-T4", "reserved", NULL, 7.0},
    {"NVIDIA-A100-SXM4-40GB", "on-demand", "us-east-1", 12.0},
    {"NVIDIA-A100-SXM4-40GB", "on-demand", "eu-west-1", 11.0},
    {"NVIDIA-A100-SXM4-40GB", "spot", "us-east-1", 11.0},
    {"NVIDIA-L4", "reserved", "eu-west-1", 8.0},
    {"NVIDIA-L4", "spot", NULL, 1.0},
    {"unknown", "on-demand", NULL, 1.0},
    {"", "on-demand", NULL, 1.0},
    {"NVIDIA-H10", "on-demand", NULL, 1.0}, /* shorter than the glob's prefix */
};

START_TEST(test_lookup)
{
        gc_catalog *c = test_catalog();
        const gc_price_entry *e = NULL;
        int r;

        r = gc_catalog_lookup(c, lookup_cases[_i].model, lookup_cases[_i].capacity,
                              lookup_cases[_i].region, &e);
        ck_assert_int_eq(r, 0);
        ck_assert_msg(e->price_per_gpu_hour == lookup_cases[_i].want, "%s/%s/%s: got %g, want %g",
                      lookup_cases[_i].model, lookup_cases[_i].capacity,
                      lookup_cases[_i].region ? lookup_cases[_i].region : "-",
                      e->price_per_gpu_hour, lookup_cases[_i].want);
        gc_catalog_free(c);
}
END_TEST

START_TEST(test_lookup_no_catchall)
{
        static const char json[] = "{\"currency\":\"USD\",\"prices\":[{\"model\":\"Tesla-T4\","
                                   "\"capacity_type\":\"spot\",\"usd_per_gpu_hour\":0.2}]}";
        char err[256];
        gc_catalog *c = gc_catalog_parse(json, strlen(json), err, sizeof(err));
        const gc_price_entry *e = (const gc_price_entry *)&e;

        ck_assert_ptr_nonnull(c);
        ck_assert_int_eq(gc_catalog_lookup(c, "Tesla-T4", "on-demand", NULL, &e), -ENOENT);
        ck_assert_ptr_eq(e, (const gc_price_entry *)&e); /* untouched */
        ck_assert_int_eq(gc_catalog_lookup(c, "NVIDIA-L4", "spot", NULL, &e), -ENOENT);
        ck_assert_int_eq(gc_catalog_lookup(c, "Tesla-T4", "spot", "x", &e), 0);
        ck_assert_int_eq(gc_catalog_lookup(c, NULL, "spot", NULL, &e), -EINVAL);
        ck_assert_int_eq(gc_catalog_lookup(c, "Tesla-T4", NULL, NULL, &e), -EINVAL);
        ck_assert_int_eq(gc_catalog_lookup(NULL, "Tesla-T4", "spot", NULL, &e), -EINVAL);
        gc_catalog_free(c);
}
END_TEST

/* Ties can only come from a catalog built in code (a parsed one refuses duplicates). */
START_TEST(test_lookup_tie_earlier_wins)
{
        gc_price_entry entries[] = {
            {"*", "*", NULL, 1.0, NULL},
            {"NVIDIA-L4", "spot", NULL, 2.0, NULL},
            {"nvidia l4", "spot", "*", 3.0, NULL},
            {"NVIDIA-L4", "spot", NULL, 4.0, NULL},
        };
        gc_catalog c = {"USD", NULL, NULL, entries, 4};
        const gc_price_entry *e = NULL;

        ck_assert_int_eq(gc_catalog_lookup(&c, "NVIDIA-L4", "spot", "us-east-1", &e), 0);
        ck_assert_ptr_eq(e, &entries[1]);
        /* Two globs of one length that match the same model: the earlier. */
        entries[1].model = "NVIDIA-L*";
        entries[2].model = "nvidia l*";
        entries[3].model = "NVIDIA-*";
        ck_assert_int_eq(gc_catalog_lookup(&c, "NVIDIA-L4", "spot", NULL, &e), 0);
        ck_assert_ptr_eq(e, &entries[1]);
}
END_TEST

/* The example catalog and matching table of docs/prices.md, so the page stays true. */
static const char DOCS_CATALOG[] =
    "{\"currency\":\"USD\",\"as_of\":\"2025-06-01\",\"source\":\"our negotiated prices\","
    "\"prices\":["
    "{\"model\":\"NVIDIA-H100-80GB-HBM3\",\"capacity_type\":\"reserved\","
    "\"usd_per_gpu_hour\":4.10},"
    "{\"model\":\"NVIDIA-H100-80GB-HBM3\",\"capacity_type\":\"spot\",\"region\":\"us-east-1\","
    "\"usd_per_gpu_hour\":5.60,\"source\":\"average spot price, May 2025\"},"
    "{\"model\":\"NVIDIA-A100*\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":3.40},"
    "{\"model\":\"*\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":2.00}]}";

static const struct {
        const char *model, *capacity, *region;
        double want;
} docs_cases[] = {
    {"NVIDIA-H100-80GB-HBM3", "spot", "us-east-1", 5.60},
    {"NVIDIA H100 80GB HBM3", "spot", "us-east-1", 5.60},
    {"NVIDIA-H100-80GB-HBM3", "spot", "eu-west-1", 2.00},
    {"NVIDIA-H100-80GB-HBM3", "reserved", NULL, 4.10},
    {"NVIDIA-A100-SXM4-80GB", "spot", NULL, 3.40},
    {"Tesla-T4", "on-demand", NULL, 2.00},
};

START_TEST(test_docs_example)
{
        char err[256] = "";
        gc_catalog *c = gc_catalog_parse(DOCS_CATALOG, strlen(DOCS_CATALOG), err, sizeof(err));
        const gc_price_entry *e = NULL;

        ck_assert_msg(c != NULL, "%s", err);
        ck_assert_int_eq(gc_catalog_lookup(c, docs_cases[_i].model, docs_cases[_i].capacity,
                                           docs_cases[_i].region, &e),
                         0);
        ck_assert(e->price_per_gpu_hour == docs_cases[_i].want);
        gc_catalog_free(c);
}
END_TEST

/* ---- parsing -------------------------------------------------------------------------------- */

#define ENTRY(fields) "{\"currency\":\"USD\",\"prices\":[" fields "]}"
#define OK_ENTRY      "{\"model\":\"*\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":1}"

static const struct {
        const char *json;
        const char *want; /* a substring of the error */
} bad_catalogs[] = {
    {"{", "not valid JSON"},
    {"[]", "must be an object"},
    {"\"USD\"", "must be an object"},
    {"{\"prices\":[" OK_ENTRY "]}", "currency: required"},
    {"{\"currency\":\"US\",\"prices\":[" OK_ENTRY "]}", "currency: required, 3 letters"},
    {"{\"currency\":\"U5D\",\"prices\":[" OK_ENTRY "]}", "currency:"},
    {"{\"currency\":840,\"prices\":[" OK_ENTRY "]}", "currency: must be a string"},
    {"{\"currency\":\"USD\"}", "prices: required"},
    {"{\"currency\":\"USD\",\"prices\":{}}", "prices: required"},
    {"{\"currency\":\"USD\",\"prices\":[]}", "prices: must hold at least one entry"},
    {"{\"currency\":\"USD\",\"as_of\":\"2025-02-30\",\"prices\":[" OK_ENTRY "]}",
     "as_of: must be a date YYYY-MM-DD"},
    {"{\"currency\":\"USD\",\"as_of\":\"June 2025\",\"prices\":[" OK_ENTRY "]}", "as_of:"},
    {"{\"currency\":\"USD\",\"as_of\":20250601,\"prices\":[" OK_ENTRY "]}",
     "as_of: must be a string"},
    {ENTRY("1"), "prices[0]: must be an object"},
    {ENTRY(OK_ENTRY ",null"), "prices[1]: must be an object"},
    {ENTRY("{\"capacity_type\":\"*\",\"usd_per_gpu_hour\":1}"), "prices[0].model: required"},
    {ENTRY("{\"model\":\"\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":1}"),
     "prices[0].model: must be a non-empty string"},
    {ENTRY("{\"model\":7,\"capacity_type\":\"*\",\"usd_per_gpu_hour\":1}"),
     "prices[0].model: must be a string"},
    {ENTRY("{\"model\":\"NVIDIA-*-80GB\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":1}"),
     "prices[0].model: '*' is allowed only as the last character"},
    {ENTRY("{\"model\":\"a\\tb\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":1}"),
     "prices[0].model: must be printable"},
    {ENTRY("{\"model\":\"*\",\"usd_per_gpu_hour\":1}"), "prices[0].capacity_type: required"},
    {ENTRY("{\"model\":\"*\",\"capacity_type\":\"On-Demand\",\"usd_per_gpu_hour\":1}"),
     "prices[0].capacity_type: must be"},
    {ENTRY("{\"model\":\"*\",\"capacity_type\":\"\",\"usd_per_gpu_hour\":1}"),
     "prices[0].capacity_type: must be"},
    {ENTRY("{\"model\":\"*\",\"capacity_type\":\"*\",\"region\":\"us east\","
           "\"usd_per_gpu_hour\":1}"),
     "prices[0].region: must be"},
    {ENTRY("{\"model\":\"*\",\"capacity_type\":\"*\",\"region\":[],\"usd_per_gpu_hour\":1}"),
     "prices[0].region: must be a string"},
    /* No price: the error names the price under its current name. */
    {ENTRY("{\"model\":\"*\",\"capacity_type\":\"*\"}"),
     "prices[0].price_per_gpu_hour: must be a number >= 0"},
    {ENTRY("{\"model\":\"*\",\"capacity_type\":\"*\",\"price_per_gpu_hour\":-1}"),
     "prices[0].price_per_gpu_hour: must be a number >= 0"},
    /* The old name beside the new one: only when they agree. */
    {ENTRY("{\"model\":\"*\",\"capacity_type\":\"*\",\"price_per_gpu_hour\":1,"
           "\"usd_per_gpu_hour\":2}"),
     "prices[0]: price_per_gpu_hour and usd_per_gpu_hour (its old name) differ: give one"},
    {ENTRY("{\"model\":\"*\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":-0.01}"),
     "prices[0].usd_per_gpu_hour: must be a number >= 0"},
    {ENTRY("{\"model\":\"*\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":\"12\"}"),
     "prices[0].usd_per_gpu_hour: must be a number >= 0"},
    {ENTRY("{\"model\":\"*\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":1e999}"),
     "prices[0].usd_per_gpu_hour: must be a number >= 0"},
    {ENTRY("{\"model\":\"*\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":1,"
           "\"source\":{}}"),
     "prices[0].source: must be a string"},
    /* the fourth entry, index 3, is the bad one */
    {ENTRY("{\"model\":\"a\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":1},"
           "{\"model\":\"b\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":1},"
           "{\"model\":\"c\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":1},"
           "{\"model\":\"d\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":null}"),
     "prices[3].usd_per_gpu_hour: must be a number >= 0"},
    /* the same key spelt three ways: DCGM spaces, lower case, region "*" = none */
    {ENTRY("{\"model\":\"NVIDIA H100 80GB HBM3\",\"capacity_type\":\"spot\","
           "\"usd_per_gpu_hour\":1},"
           "{\"model\":\"NVIDIA-H100-80GB-HBM3\",\"capacity_type\":\"spot\","
           "\"region\":\"us-east-1\",\"usd_per_gpu_hour\":2},"
           "{\"model\":\"nvidia-h100-80gb-hbm3\",\"capacity_type\":\"spot\","
           "\"region\":\"*\",\"usd_per_gpu_hour\":3}"),
     "prices[2]: same model, capacity_type and region as prices[0]"},
    {ENTRY(OK_ENTRY ",{\"model\":\"a\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":1},"
                    "{\"model\":\"A\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":1}," OK_ENTRY),
     "prices[2]: same model, capacity_type and region as prices[1]"},
    {ENTRY(OK_ENTRY) " x", "unexpected data after the JSON value"},
};

START_TEST(test_bad_catalog)
{
        char err[256] = "";
        gc_catalog *c = gc_catalog_parse(bad_catalogs[_i].json, strlen(bad_catalogs[_i].json), err,
                                         sizeof(err));

        ck_assert_msg(c == NULL, "%s: should fail", bad_catalogs[_i].json);
        ck_assert_msg(strstr(err, bad_catalogs[_i].want) != NULL, "%s: error \"%s\" lacks \"%s\"",
                      bad_catalogs[_i].json, err, bad_catalogs[_i].want);
}
END_TEST

START_TEST(test_catalog_limits)
{
        const size_t n = GC_CATALOG_MAX_ENTRIES + 1;
        char err[256] = "";
        gc_buf b;
        gc_catalog *c;

        ck_assert_ptr_null(gc_catalog_parse("", 0, err, sizeof(err)));
        ck_assert_ptr_nonnull(strstr(err, "empty"));
        /* One entry too many (each with its own model, so no duplicate is reported first). */
        gc_buf_init(&b, 8u << 20);
        ck_assert_int_eq(gc_buf_puts(&b, "{\"currency\":\"USD\",\"prices\":["), 0);
        for (size_t i = 0; i < n; i++)
                ck_assert_int_eq(gc_buf_printf(&b,
                                               "%s{\"model\":\"m%zu\",\"capacity_type\":\"*\","
                                               "\"usd_per_gpu_hour\":1}",
                                               i ? "," : "", i),
                                 0);
        ck_assert_int_eq(gc_buf_puts(&b, "]}"), 0);
        ck_assert_uint_lt(b.len, GC_CATALOG_MAX_BYTES);
        c = gc_catalog_parse(b.data, b.len, err, sizeof(err));
        ck_assert_ptr_null(c);
        ck_assert_msg(strstr(err, "prices: more than 10000 entries") != NULL, "%s", err);
        /* Exactly the limit parses. */
        b.len -= 2;
        b.data[b.len] = '\0';
        while (b.len > 0 && b.data[b.len - 1] != '{')
                b.len--;
        b.len--; /* drop the last entry's '{' and its ',' */
        b.len--;
        ck_assert_int_eq(gc_buf_puts(&b, "]}"), 0);
        c = gc_catalog_parse(b.data, b.len, err, sizeof(err));
        ck_assert_msg(c != NULL, "%s", err);
        ck_assert_uint_eq(c->n, GC_CATALOG_MAX_ENTRIES);
        gc_catalog_free(c);
        /* Over the byte limit: refused before parsing. */
        ck_assert_ptr_null(gc_catalog_parse(b.data, GC_CATALOG_MAX_BYTES + 1u, err, sizeof(err)));
        ck_assert_ptr_nonnull(strstr(err, "larger than"));
        gc_buf_free(&b);
}
END_TEST

START_TEST(test_catalog_fields)
{
        static const char json[] = "{\"currency\":\"eur\",\"prices\":[{\"model\":\"NVIDIA-L4\","
                                   "\"capacity_type\":\"on-prem\",\"region\":\"*\","
                                   "\"usd_per_gpu_hour\":0}]}";
        char err[256] = "";
        gc_catalog *c = test_catalog();

        ck_assert_str_eq(c->currency, "USD");
        ck_assert_str_eq(c->as_of, "2025-06-01");
        ck_assert_str_eq(c->source, "test");
        ck_assert_uint_eq(c->n, 12);
        ck_assert_str_eq(c->entries[5].model, "NVIDIA-H100-80GB-HBM3");
        ck_assert_str_eq(c->entries[5].capacity_type, "spot");
        ck_assert_str_eq(c->entries[5].region, "us-east-1");
        ck_assert_ptr_null(c->entries[5].source);
        ck_assert_ptr_null(c->entries[4].region);
        ck_assert_str_eq(c->entries[11].source, "a note");
        c = gc_catalog_free(c);
        ck_assert_ptr_null(c);
        /* Currency is upper-cased; a zero price is allowed (hardware already paid for). */
        c = gc_catalog_parse(json, strlen(json), err, sizeof(err));
        ck_assert_msg(c != NULL, "%s", err);
        ck_assert_str_eq(c->currency, "EUR");
        ck_assert_ptr_null(c->as_of);
        ck_assert(c->entries[0].price_per_gpu_hour == 0);
        gc_catalog_free(c);
        /* The price's name, its old name (for one release), or both when they agree. */
        {
                static const char *const forms[] = {
                    "{\"currency\":\"EUR\",\"prices\":[{\"model\":\"*\",\"capacity_type\":\"*\","
                    "\"price_per_gpu_hour\":2.5}]}",
                    "{\"currency\":\"EUR\",\"prices\":[{\"model\":\"*\",\"capacity_type\":\"*\","
                    "\"usd_per_gpu_hour\":2.5}]}",
                    "{\"currency\":\"EUR\",\"prices\":[{\"model\":\"*\",\"capacity_type\":\"*\","
                    "\"price_per_gpu_hour\":2.5,\"usd_per_gpu_hour\":2.5}]}"};
                gc_buf b;

                for (size_t i = 0; i < 3; i++) {
                        c = gc_catalog_parse(forms[i], strlen(forms[i]), err, sizeof(err));
                        ck_assert_msg(c != NULL, "%s: %s", forms[i], err);
                        ck_assert(c->entries[0].price_per_gpu_hour == 2.5);
                        /* Written back under both names. */
                        gc_buf_init(&b, 1 << 16);
                        ck_assert_int_eq(gc_catalog_to_json(c, &b), 0);
                        ck_assert_ptr_nonnull(strstr(b.data, "\"price_per_gpu_hour\":2.5,"
                                                             "\"usd_per_gpu_hour\":2.5"));
                        gc_buf_free(&b);
                        gc_catalog_free(c);
                }
        }
}
END_TEST

START_TEST(test_catalog_from_cjson_where)
{
        static const char cfg[] =
            "{\"prices\":{\"currency\":\"USD\",\"prices\":[" OK_ENTRY
            ",{\"model\":\"x\",\"capacity_type\":\"spot\",\"usd_per_gpu_hour\":-1}]},"
            "\"nocur\":{\"prices\":[" OK_ENTRY "]}}";
        cJSON *root = cJSON_Parse(cfg);
        char err[256] = "";

        ck_assert_ptr_nonnull(root);
        ck_assert_ptr_null(gc_catalog_from_cjson(cJSON_GetObjectItem(root, "prices"),
                                                 "config.prices", err, sizeof(err)));
        ck_assert_str_eq(err, "config.prices.prices[1].usd_per_gpu_hour: must be a number >= 0");
        ck_assert_ptr_null(gc_catalog_from_cjson(cJSON_GetObjectItem(root, "nocur"), "config.p",
                                                 err, sizeof(err)));
        ck_assert_msg(strncmp(err, "config.p.currency: required", 27) == 0, "%s", err);
        ck_assert_ptr_null(
            gc_catalog_from_cjson(root->child->child, "config.prices.currency", err, sizeof(err)));
        ck_assert_str_eq(err, "config.prices.currency: must be an object");
        ck_assert_ptr_null(gc_catalog_from_cjson(NULL, NULL, err, sizeof(err)));
        cJSON_Delete(root);
}
END_TEST

static void assert_same_catalog(const gc_catalog *a, const gc_catalog *b)
{
        ck_assert_str_eq(a->currency, b->currency);
        ck_assert_pstr_eq(a->as_of, b->as_of);
        ck_assert_pstr_eq(a->source, b->source);
        ck_assert_uint_eq(a->n, b->n);
        for (size_t i = 0; i < a->n; i++) {
                ck_assert_str_eq(a->entries[i].model, b->entries[i].model);
                ck_assert_str_eq(a->entries[i].capacity_type, b->entries[i].capacity_type);
                ck_assert_pstr_eq(a->entries[i].region, b->entries[i].region);
                ck_assert_pstr_eq(a->entries[i].source, b->entries[i].source);
                ck_assert_msg(a->entries[i].price_per_gpu_hour == b->entries[i].price_per_gpu_hour,
                              "entry %zu: %.17g != %.17g", i, a->entries[i].price_per_gpu_hour,
                              b->entries[i].price_per_gpu_hour);
        }
}

START_TEST(test_catalog_round_trip)
{
        /* Prices that %g would not keep: a third, a tenth, a huge and a tiny one. */
        static const char json[] =
            "{\"currency\":\"USD\",\"source\":\"quote \\\"q\\\" \\\\ tab\\t\",\"prices\":["
            "{\"model\":\"a\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":0.3333333333333333},"
            "{\"model\":\"b\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":0.1},"
            "{\"model\":\"c\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":1.7976931348623157e308},"
            "{\"model\":\"d\",\"capacity_type\":\"*\",\"usd_per_gpu_hour\":5e-324},"
            "{\"model\":\"e\",\"capacity_type\":\"spot\",\"region\":\"r\",\"source\":\"\","
            "\"usd_per_gpu_hour\":12.29}]}";
        gc_catalog *cats[3];
        char err[256] = "";

        cats[0] = test_catalog();
        cats[1] = gc_catalog_parse(json, strlen(json), err, sizeof(err));
        ck_assert_msg(cats[1] != NULL, "%s", err);
        cats[2] = gc_catalog_builtin();
        ck_assert_ptr_nonnull(cats[2]);
        for (int k = 0; k < 3; k++) {
                gc_catalog *back;
                gc_buf b;

                gc_buf_init(&b, 1u << 20);
                ck_assert_int_eq(gc_catalog_to_json(cats[k], &b), 0);
                back = gc_catalog_parse(b.data, b.len, err, sizeof(err));
                ck_assert_msg(back != NULL, "%s\n%s", err, b.data);
                assert_same_catalog(cats[k], back);
                gc_catalog_free(back);
                /* A buffer too small says so rather than truncating. */
                gc_buf_free(&b);
                gc_buf_init(&b, 16);
                ck_assert_int_eq(gc_catalog_to_json(cats[k], &b), -E2BIG);
                gc_buf_free(&b);
                gc_catalog_free(cats[k]);
        }
}
END_TEST

/* ---- the built-in catalog ------------------------------------------------------------------- */

START_TEST(test_builtin_sanity)
{
        gc_catalog *c = gc_catalog_builtin();
        int catchall = 0;

        ck_assert_ptr_nonnull(c);
        ck_assert_str_eq(c->currency, "USD");
        ck_assert_str_eq(c->as_of, "2025-06-01");
        ck_assert_ptr_nonnull(strstr(c->source, "published cloud list prices, 2023-2025"));
        ck_assert_uint_gt(c->n, 10);
        for (size_t i = 0; i < c->n; i++) {
                const gc_price_entry *e = &c->entries[i];

                ck_assert_msg(e->price_per_gpu_hour > 0 && isfinite(e->price_per_gpu_hour), "%s/%s",
                              e->model, e->capacity_type);
                ck_assert_msg(e->source && *e->source, "%s/%s has no source", e->model,
                              e->capacity_type);
                if (strcmp(e->model, "*") == 0 && strcmp(e->capacity_type, "*") == 0 && !e->region)
                        catchall = 1;
        }
        ck_assert(catchall);
        gc_catalog_free(c);
}
END_TEST

/* The reference table's figures, and which entries must say they are estimates. */
static const struct {
        const char *model, *capacity;
        double want;
        int estimate;
} builtin_cases[] = {
    {"NVIDIA-H100-80GB-HBM3", "on-demand", 12.29, 0},
    {"NVIDIA H100 80GB HBM3", "reserved", 5.25, 0},
    {"NVIDIA-H100-80GB-HBM3", "spot", 5.00, 0},
    {"NVIDIA-H100-80GB-HBM3", "on-prem", 2.84, 1},
    {"NVIDIA-H100-PCIe", "on-demand", 12.29, 1},
    {"NVIDIA-H100-NVL", "spot", 5.00, 1},
    {"NVIDIA-H100-80GB-HBM3", "capacity-block", 12.29, 1},
    {"NVIDIA-A100-SXM4-40GB", "on-demand", 4.10, 0},
    {"NVIDIA-A100-SXM4-40GB", "spot", 4.10, 0},
    {"NVIDIA-A100-PCIE-40GB", "on-demand", 4.10, 1},
    {"NVIDIA-A100-SXM4-80GB", "on-demand", 4.00, 0},
    {"NVIDIA-A100-80GB-PCIe", "on-demand", 4.00, 1},
    {"NVIDIA-A10G", "on-demand", 2.04, 0},
    {"NVIDIA-L4", "on-demand", 0.80, 1},
    {"Tesla-T4", "spot", 0.53, 1},
    {"NVIDIA-A16", "on-prem", 0.53, 1},
    {"NVIDIA-A16-4Q", "on-demand", 0.53, 1},
    {"unknown", "on-demand", 2.00, 1},
    /* Other vendors, per device-hour (docs/prices.md has each source). */
    {"AMD-Instinct-MI300X", "on-demand", 1.99, 0},
    {"AMD Instinct MI300X", "spot", 1.99, 0},
    {"AMD-Instinct-MI325X", "on-demand", 1.99, 1},
    {"AMD-Instinct-MI355X", "reserved", 1.99, 1},
    {"AMD-Instinct-MI210", "on-demand", 2.00, 1},
    {"AWS-Trainium1", "on-demand", 21.50 / 16, 0},
    {"AWS-Trainium2", "on-demand", 2.00, 1},
    {"AWS-Inferentia2", "on-demand", 1.0818, 0},
    {"AWS-Inferentia1", "on-demand", 0.2951, 0},
    {"Intel-Gaudi1", "on-demand", 1.6386, 0},
    {"Google-TPU-v4", "on-demand", 3.22, 0},
    {"Google-TPU-v5e", "on-demand", 1.20, 0},
    {"Google-TPU-v5p", "spot", 4.20, 0},
    {"Google-TPU-v6e", "on-demand", 2.70, 0},
    {"Google-TPU-7x", "on-demand", 2.00, 1},
};

START_TEST(test_builtin_figures)
{
        gc_catalog *c = gc_catalog_builtin();
        const gc_price_entry *e = NULL;

        ck_assert_int_eq(gc_catalog_lookup(c, builtin_cases[_i].model, builtin_cases[_i].capacity,
                                           "us-east-1", &e),
                         0);
        ck_assert_double_eq_tol(e->price_per_gpu_hour, builtin_cases[_i].want, 1e-9);
        ck_assert_msg((strstr(e->source, "estimate") != NULL) == builtin_cases[_i].estimate,
                      "%s: source \"%s\"", builtin_cases[_i].model, e->source);
        gc_catalog_free(c);
}
END_TEST

/* ---- classification ------------------------------------------------------------------------- */

typedef struct tnode {
        gc_node n;
        gc_label l[MAXL];
} tnode;

/* kv: key, value, ..., NULL */
static gc_node *mknode(tnode *t, const char *const *kv)
{
        memset(t, 0, sizeof(*t));
        t->n.name = "gpu-node-1";
        t->n.labels = t->l;
        for (size_t i = 0; kv && kv[2 * i]; i++) {
                ck_assert_uint_lt(i, MAXL);
                t->l[i].key = kv[2 * i];
                t->l[i].value = kv[2 * i + 1];
                t->n.n_labels = i + 1;
        }
        return &t->n;
}

static gc_label r0_match[] = {{"gpu-cost/pool", "h100-reserved"}};
static gc_label r1_match[] = {{"gpu-cost/model-hint", "*"}};
static gc_label r2_match[] = {{"gpu-cost/pool", "onprem"}, {"rack", "r1"}};
static gc_label r3_match[] = {{"gpu-cost/pool", "onprem"}};
static gc_label r4_match[] = {{"gpu-cost/pool", "onprem"}};
static gc_node_rule test_rules[] = {
    {r0_match, 1, "reserved", NULL, NULL, 3.33},
    {r1_match, 1, NULL, "NVIDIA A100 SXM4 80GB", NULL, -1},
    {r2_match, 2, "on-prem", NULL, "dc-1", -1},
    {r3_match, 1, "reserved", NULL, NULL, 1.11},
    {r4_match, 1, NULL, NULL, NULL, 9.99},
};
static gc_label user_instances[] = {
    {"bm.gpu4.*", "NVIDIA-A100-SXM4-40GB"},
    {"p5.48xlarge", "NVIDIA-H200"},
};
static gc_price_rules RULES = {test_rules, 5, user_instances, 2, NULL};
static gc_price_rules RULES_ONPREM = {NULL, 0, NULL, 0, "On-Prem"};

static const struct {
        const char *labels[11];
        const char *ann_model, *gpu_model;
        const gc_price_rules *rules;
        const char *want, *want_source;
} model_cases[] = {
    /* the annotation beats a rule, GFD, GKE and the instance type; DCGM spelling becomes GFD */
    {{"gpu-cost/model-hint", "x", "cloud.google.com/gke-accelerator", "nvidia-l4",
      "node.kubernetes.io/instance-type", "p4d.24xlarge", NULL},
     "NVIDIA H100 80GB HBM3",
     "Tesla-T4",
     &RULES,
     "NVIDIA-H100-80GB-HBM3",
     "annotation gpu-cost.io/gpu-model"},
    /* a rule beats GFD */
    {{"gpu-cost/model-hint", "x", "node.kubernetes.io/instance-type", "p4d.24xlarge", NULL},
     NULL,
     "Tesla-T4",
     &RULES,
     "NVIDIA-A100-SXM4-80GB",
     "rule 1"},
    /* GFD beats GKE and the instance type */
    {{"cloud.google.com/gke-accelerator", "nvidia-l4", "node.kubernetes.io/instance-type",
      "p5.48xlarge", NULL},
     NULL,
     "Tesla-T4",
     &RULES,
     "Tesla-T4",
     "label nvidia.com/gpu.product"},
    /* a record without gpu_model: the product label, MIG and sharing suffixes stripped */
    {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-A100-SXM4-40GB",
     "label nvidia.com/gpu.product"},
    {{"nvidia.com/gpu.product", "Tesla-T4-SHARED", NULL},
     NULL,
     NULL,
     NULL,
     "Tesla-T4",
     "label nvidia.com/gpu.product"},
    /* GKE beats the instance type */
    {{"cloud.google.com/gke-accelerator", "nvidia-tesla-t4", "node.kubernetes.io/instance-type",
      "p5.48xlarge", NULL},
     NULL,
     NULL,
     &RULES,
     "Tesla-T4",
     "label cloud.google.com/gke-accelerator"},
    {{"cloud.google.com/gke-accelerator", "nvidia-l4", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-L4",
     "label cloud.google.com/gke-accelerator"},
    {{"cloud.google.com/gke-accelerator", "nvidia-h100-80gb", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-H100-80GB-HBM3",
     "label cloud.google.com/gke-accelerator"},
    {{"cloud.google.com/gke-accelerator", "nvidia-tesla-a100", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-A100-SXM4-40GB",
     "label cloud.google.com/gke-accelerator"},
    {{"cloud.google.com/gke-accelerator", "nvidia-a100-80gb", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-A100-SXM4-80GB",
     "label cloud.google.com/gke-accelerator"},
    /* an accelerator we do not know is kept as GKE wrote it */
    {{"cloud.google.com/gke-accelerator", "nvidia-future-9", NULL},
     NULL,
     NULL,
     NULL,
     "nvidia-future-9",
     "label cloud.google.com/gke-accelerator"},
    /* the user's instance map comes before the built-in one */
    {{"node.kubernetes.io/instance-type", "p5.48xlarge", NULL},
     NULL,
     NULL,
     &RULES,
     "NVIDIA-H200",
     "instance type, configured map"},
    {{"node.kubernetes.io/instance-type", "BM.GPU4.8", NULL},
     NULL,
     NULL,
     &RULES,
     "NVIDIA-A100-SXM4-40GB",
     "instance type, configured map"},
    {{"node.kubernetes.io/instance-type", "p5.48xlarge", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-H100-80GB-HBM3",
     "instance type, built-in map"},
    {{"node.kubernetes.io/instance-type", "p4d.24xlarge", NULL},
     NULL,
     NULL,
     &RULES,
     "NVIDIA-A100-SXM4-40GB",
     "instance type, built-in map"},
    {{"node.kubernetes.io/instance-type", "p4de.24xlarge", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-A100-SXM4-80GB",
     "instance type, built-in map"},
    {{"node.kubernetes.io/instance-type", "g5.12xlarge", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-A10G",
     "instance type, built-in map"},
    {{"node.kubernetes.io/instance-type", "g6.xlarge", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-L4",
     "instance type, built-in map"},
    /* "g6.*" must not take g6e (L40S) */
    {{"node.kubernetes.io/instance-type", "g6e.12xlarge", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-L40S",
     "instance type, built-in map"},
    {{"node.kubernetes.io/instance-type", "a3-highgpu-8g", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-H100-80GB-HBM3",
     "instance type, built-in map"},
    {{"node.kubernetes.io/instance-type", "a2-highgpu-4g", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-A100-SXM4-40GB",
     "instance type, built-in map"},
    {{"node.kubernetes.io/instance-type", "a2-megagpu-16g", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-A100-SXM4-40GB",
     "instance type, built-in map"},
    {{"node.kubernetes.io/instance-type", "Standard_ND96isr_H100_v5", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-H100-80GB-HBM3",
     "instance type, built-in map"},
    {{"node.kubernetes.io/instance-type", "Standard_ND96amsr_A100_v4", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-A100-SXM4-80GB",
     "instance type, built-in map"},
    /* the deprecated beta label still counts */
    {{"beta.kubernetes.io/instance-type", "g4dn.xlarge", NULL},
     NULL,
     NULL,
     NULL,
     "Tesla-T4",
     "instance type, built-in map"},
    /* RKE2 writes "rke2": says nothing */
    {{"node.kubernetes.io/instance-type", "rke2", NULL}, NULL, NULL, &RULES, "unknown", "default"},
    {{NULL}, NULL, NULL, NULL, "unknown", "default"},
};

START_TEST(test_classify_model)
{
        gc_strpool *pool = gc_strpool_new(1u << 20);
        gc_catalog *c = test_catalog();
        gc_node_class cls;
        char err[256] = "";
        tnode t;
        gc_node *n = mknode(&t, model_cases[_i].labels);
        int r;

        n->ann_gpu_model = model_cases[_i].ann_model;
        n->gpu_model = model_cases[_i].gpu_model;
        r = gc_node_classify(model_cases[_i].rules, c, n, pool, &cls, err, sizeof(err));
        ck_assert_msg(r == 0, "%d %s", r, err);
        ck_assert_str_eq(cls.model, model_cases[_i].want);
        ck_assert_str_eq(cls.model_source, model_cases[_i].want_source);
        /* interned: the pool's copy */
        ck_assert_ptr_eq(cls.model, gc_strpool_intern0(pool, model_cases[_i].want));
        gc_catalog_free(c);
        gc_strpool_free(pool);
}
END_TEST

static const struct {
        const char *labels[9];
        const char *ann;
        const gc_price_rules *rules;
        const char *want, *want_source;
} capacity_cases[] = {
    /* the annotation beats a rule and every label; it is lower-cased */
    {{"gpu-cost/pool", "h100-reserved", "karpenter.sh/capacity-type", "spot", NULL},
     "On-Prem",
     &RULES,
     "on-prem",
     "annotation gpu-cost.io/capacity-type"},
    /* a rule beats the labels */
    {{"gpu-cost/pool", "h100-reserved", "karpenter.sh/capacity-type", "spot", NULL},
     NULL,
     &RULES,
     "reserved",
     "rule 0"},
    /* the first matching rule that sets the field: 2 needs rack r1, else 3 */
    {{"gpu-cost/pool", "onprem", "rack", "r1", NULL}, NULL, &RULES, "on-prem", "rule 2"},
    {{"gpu-cost/pool", "onprem", "rack", "r2", NULL}, NULL, &RULES, "reserved", "rule 3"},
    {{"gpu-cost/pool", "onprem", NULL}, NULL, &RULES, "reserved", "rule 3"},
    /* a rule's match value must equal: no rule matches here */
    {{"gpu-cost/pool", "h100-reserved-2", NULL}, NULL, &RULES, "on-demand", "default"},
    /* Karpenter */
    {{"karpenter.sh/capacity-type", "spot", NULL},
     NULL,
     &RULES,
     "spot",
     "label karpenter.sh/capacity-type"},
    {{"karpenter.sh/capacity-type", "on-demand", NULL},
     NULL,
     NULL,
     "on-demand",
     "label karpenter.sh/capacity-type"},
    {{"karpenter.sh/capacity-type", "reserved", NULL},
     NULL,
     NULL,
     "reserved",
     "label karpenter.sh/capacity-type"},
    /* Karpenter beats EKS */
    {{"eks.amazonaws.com/capacityType", "SPOT", "karpenter.sh/capacity-type", "on-demand", NULL},
     NULL,
     NULL,
     "on-demand",
     "label karpenter.sh/capacity-type"},
    /* EKS managed node groups */
    {{"eks.amazonaws.com/capacityType", "ON_DEMAND", NULL},
     NULL,
     NULL,
     "on-demand",
     "label eks.amazonaws.com/capacityType"},
    {{"eks.amazonaws.com/capacityType", "SPOT", NULL},
     NULL,
     NULL,
     "spot",
     "label eks.amazonaws.com/capacityType"},
    {{"eks.amazonaws.com/capacityType", "CAPACITY_BLOCK", NULL},
     NULL,
     NULL,
     "reserved",
     "label eks.amazonaws.com/capacityType"},
    {{"eks.amazonaws.com/capacityType", "SOMETHING_NEW", NULL}, NULL, NULL, "on-demand", "default"},
    /* GKE */
    {{"cloud.google.com/gke-spot", "true", NULL},
     NULL,
     NULL,
     "spot",
     "label cloud.google.com/gke-spot"},
    {{"cloud.google.com/gke-spot", "false", NULL}, NULL, NULL, "on-demand", "default"},
    {{"cloud.google.com/gke-preemptible", "true", NULL},
     NULL,
     NULL,
     "spot",
     "label cloud.google.com/gke-preemptible"},
    /* AKS */
    {{"kubernetes.azure.com/scalesetpriority", "spot", NULL},
     NULL,
     NULL,
     "spot",
     "label kubernetes.azure.com/scalesetpriority"},
    {{"kubernetes.azure.com/scalesetpriority", "regular", NULL},
     NULL,
     NULL,
     "on-demand",
     "default"},
    /* the configured default, lower-cased, and the built-in one */
    {{"node.kubernetes.io/instance-type", "rke2", NULL},
     NULL,
     &RULES_ONPREM,
     "on-prem",
     "default_capacity_type"},
    {{"cloud.google.com/gke-spot", "true", NULL},
     NULL,
     &RULES_ONPREM,
     "spot",
     "label cloud.google.com/gke-spot"},
    {{NULL}, NULL, &RULES, "on-demand", "default"},
};

START_TEST(test_classify_capacity)
{
        gc_strpool *pool = gc_strpool_new(1u << 20);
        gc_catalog *c = test_catalog();
        gc_node_class cls;
        char err[256] = "";
        tnode t;
        gc_node *n = mknode(&t, capacity_cases[_i].labels);
        int r;

        n->ann_capacity_type = capacity_cases[_i].ann;
        n->gpu_model = "NVIDIA-L4";
        r = gc_node_classify(capacity_cases[_i].rules, c, n, pool, &cls, err, sizeof(err));
        ck_assert_msg(r == 0, "%d %s", r, err);
        ck_assert_str_eq(cls.capacity_type, capacity_cases[_i].want);
        ck_assert_str_eq(cls.capacity_source, capacity_cases[_i].want_source);
        ck_assert_ptr_eq(cls.capacity_type, gc_strpool_intern0(pool, capacity_cases[_i].want));
        gc_catalog_free(c);
        gc_strpool_free(pool);
}
END_TEST

static const struct {
        const char *labels[9];
        const char *want; /* NULL = none */
} region_cases[] = {
    /* a rule beats the topology labels */
    {{"gpu-cost/pool", "onprem", "rack", "r1", "topology.kubernetes.io/region", "us-east-1", NULL},
     "dc-1"},
    {{"topology.kubernetes.io/region", "us-east-1", "failure-domain.beta.kubernetes.io/region",
      "us-west-2", NULL},
     "us-east-1"},
    {{"failure-domain.beta.kubernetes.io/region", "us-west-2", NULL}, "us-west-2"},
    {{"topology.kubernetes.io/zone", "us-east-1a", NULL}, NULL},
    {{NULL}, NULL},
};

START_TEST(test_classify_region)
{
        gc_strpool *pool = gc_strpool_new(1u << 20);
        gc_catalog *c = test_catalog();
        gc_node_class cls;
        char err[256] = "";
        tnode t;
        gc_node *n = mknode(&t, region_cases[_i].labels);

        n->gpu_model = "NVIDIA-L4";
        ck_assert_int_eq(gc_node_classify(&RULES, c, n, pool, &cls, err, sizeof(err)), 0);
        if (region_cases[_i].want)
                ck_assert_ptr_eq(cls.region, gc_strpool_intern0(pool, region_cases[_i].want));
        else
                ck_assert_ptr_null(cls.region);
        gc_catalog_free(c);
        gc_strpool_free(pool);
}
END_TEST

/*
 * Price precedence: each row's expectation is read off TEST_CATALOG and the rules above by hand
 * (the catalog's prices are its entry numbers).
 */
static const struct {
        const char *labels[9];
        const char *ann_model, *ann_capacity, *ann_price, *gpu_model;
        double want;
        const char *want_source;
} price_cases[] = {
    /* the annotation beats rule 0 (3.33) and the catalog (H100 reserved: entry 3, 4.0) */
    {{"gpu-cost/pool", "h100-reserved", NULL},
     NULL,
     NULL,
     "7.5",
     "NVIDIA-H100-80GB-HBM3",
     7.5,
     "annotation gpu-cost.io/price-per-gpu-hour"},
    {{"gpu-cost/pool", "h100-reserved", NULL},
     NULL,
     NULL,
     "0",
     "NVIDIA-H100-80GB-HBM3",
     0.0,
     "annotation gpu-cost.io/price-per-gpu-hour"},
    /* an empty annotation is no annotation */
    {{"gpu-cost/pool", "h100-reserved", NULL},
     NULL,
     NULL,
     "",
     "NVIDIA-H100-80GB-HBM3",
     3.33,
     "rule 0"},
    /* rule 3 is the first matching rule with a price, not rule 4 (9.99) */
    {{"gpu-cost/pool", "onprem", "rack", "r2", NULL}, NULL, NULL, NULL, "Tesla-T4", 1.11, "rule 3"},
    /* the catalog: exact model, capacity and region (entry 5) */
    {{"karpenter.sh/capacity-type", "spot", "topology.kubernetes.io/region", "us-east-1", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-H100-80GB-HBM3",
     6.0,
     "catalog NVIDIA-H100-80GB-HBM3/spot/us-east-1"},
    /* another region: entry 4 */
    {{"karpenter.sh/capacity-type", "spot", "topology.kubernetes.io/region", "us-west-2", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-H100-80GB-HBM3",
     5.0,
     "catalog NVIDIA-H100-80GB-HBM3/spot/*"},
    /* annotated model and capacity type are what the catalog is asked (entry 6) */
    {{"karpenter.sh/capacity-type", "spot", NULL},
     "Tesla T4",
     "Reserved",
     NULL,
     "NVIDIA-H100-80GB-HBM3",
     7.0,
     "catalog */reserved/*"},
    /* an EKS capacity block is reserved: entry 7 for an L4 in eu-west-1 */
    {{"eks.amazonaws.com/capacityType", "CAPACITY_BLOCK", "topology.kubernetes.io/region",
      "eu-west-1", NULL},
     NULL,
     NULL,
     NULL,
     "NVIDIA-L4",
     8.0,
     "catalog */reserved/eu-west-1"},
    /* a T4 on demand: entry 8, whose region was written "*" */
    {{"topology.kubernetes.io/region", "us-west-2", NULL},
     NULL,
     NULL,
     NULL,
     "Tesla-T4",
     9.0,
     "catalog Tesla-T4/on-demand/*"},
    /* GKE A100 on spot: the A100 glob (entry 10) */
    {{"cloud.google.com/gke-accelerator", "nvidia-tesla-a100", "cloud.google.com/gke-spot", "true",
      NULL},
     NULL,
     NULL,
     NULL,
     NULL,
     11.0,
     "catalog NVIDIA-A100*/*/*"},
    /* p4d in us-east-1 on demand: entry 11 */
    {{"node.kubernetes.io/instance-type", "p4d.24xlarge", "topology.kubernetes.io/region",
      "us-east-1", NULL},
     NULL,
     NULL,
     NULL,
     NULL,
     12.0,
     "catalog NVIDIA-A100*/on-demand/us-east-1"},
    /* nothing known: the catch-all (entry 0) */
    {{"node.kubernetes.io/instance-type", "rke2", NULL},
     NULL,
     NULL,
     NULL,
     NULL,
     1.0,
     "catalog */*/*"},
};

START_TEST(test_classify_price)
{
        gc_strpool *pool = gc_strpool_new(1u << 20);
        gc_catalog *c = test_catalog();
        gc_node_class cls;
        char err[256] = "";
        tnode t;
        gc_node *n = mknode(&t, price_cases[_i].labels);
        int r;

        n->ann_gpu_model = price_cases[_i].ann_model;
        n->ann_capacity_type = price_cases[_i].ann_capacity;
        n->ann_price = price_cases[_i].ann_price;
        n->gpu_model = price_cases[_i].gpu_model;
        r = gc_node_classify(&RULES, c, n, pool, &cls, err, sizeof(err));
        ck_assert_msg(r == 0, "%d %s", r, err);
        ck_assert_msg(cls.price_per_gpu_hour == price_cases[_i].want, "got %g want %g",
                      cls.price_per_gpu_hour, price_cases[_i].want);
        ck_assert_str_eq(cls.price_source, price_cases[_i].want_source);
        gc_catalog_free(c);
        gc_strpool_free(pool);
}
END_TEST

START_TEST(test_annotations_override_everything)
{
        static const char *const labels[] = {"gpu-cost/pool",
                                             "h100-reserved",
                                             "gpu-cost/model-hint",
                                             "x",
                                             "karpenter.sh/capacity-type",
                                             "spot",
                                             "eks.amazonaws.com/capacityType",
                                             "ON_DEMAND",
                                             "cloud.google.com/gke-accelerator",
                                             "nvidia-l4",
                                             "node.kubernetes.io/instance-type",
                                             "p5.48xlarge",
                                             "topology.kubernetes.io/region",
                                             "us-east-1",
                                             NULL};
        gc_strpool *pool = gc_strpool_new(1u << 20);
        gc_catalog *c = test_catalog();
        gc_node_class cls;
        char err[256] = "";
        tnode t;
        gc_node *n = mknode(&t, labels);

        n->gpu_model = "Tesla-T4";
        n->ann_gpu_model = "NVIDIA-B200";
        n->ann_capacity_type = "on-prem";
        n->ann_price = "3.25";
        ck_assert_int_eq(gc_node_classify(&RULES, c, n, pool, &cls, err, sizeof(err)), 0);
        ck_assert_str_eq(cls.model, "NVIDIA-B200");
        ck_assert_str_eq(cls.model_source, "annotation gpu-cost.io/gpu-model");
        ck_assert_str_eq(cls.capacity_type, "on-prem");
        ck_assert_str_eq(cls.capacity_source, "annotation gpu-cost.io/capacity-type");
        ck_assert_str_eq(cls.region, "us-east-1");
        ck_assert(cls.price_per_gpu_hour == 3.25);
        ck_assert_str_eq(cls.price_source, "annotation gpu-cost.io/price-per-gpu-hour");
        gc_catalog_free(c);
        gc_strpool_free(pool);
}
END_TEST

static const char *const bad_prices[] = {"abc", "-1",  "-0.5", "1e999", " 1",
                                         "1 ",  "nan", "inf",  "1,5",   "$3"};

START_TEST(test_bad_price_annotation)
{
        gc_strpool *pool = gc_strpool_new(1u << 20);
        gc_catalog *c = test_catalog();
        gc_node_class cls;
        char err[256] = "";
        tnode t;
        gc_node *n = mknode(&t, NULL);

        n->name = "gpu-7";
        n->gpu_model = "Tesla-T4";
        n->ann_price = bad_prices[_i];
        memset(&cls, 0xa5, sizeof(cls));
        ck_assert_int_eq(gc_node_classify(&RULES, c, n, pool, &cls, err, sizeof(err)), -EINVAL);
        ck_assert_msg(strstr(err, "gpu-7") && strstr(err, "gpu-cost.io/price-per-gpu-hour"), "%s",
                      err);
        ck_assert_uint_eq((unsigned char)cls.price_source[0], 0xa5); /* untouched */
        gc_catalog_free(c);
        gc_strpool_free(pool);
}
END_TEST

START_TEST(test_classify_errors)
{
        static const char one[] = "{\"currency\":\"USD\",\"prices\":[{\"model\":\"Tesla-T4\","
                                  "\"capacity_type\":\"*\",\"usd_per_gpu_hour\":0.35}]}";
        static const char *const spot[] = {"karpenter.sh/capacity-type", "spot", NULL};
        char longname[200];
        gc_strpool *pool = gc_strpool_new(1u << 20);
        gc_catalog *c = gc_catalog_parse(one, strlen(one), NULL, 0);
        gc_node_class cls;
        char err[256] = "";
        tnode t;
        gc_node *n = mknode(&t, spot);

        ck_assert_ptr_nonnull(c);
        /* No entry matches: -ENOENT, the rest filled in, err names the key. */
        n->gpu_model = "NVIDIA-H100-80GB-HBM3";
        ck_assert_int_eq(gc_node_classify(NULL, c, n, pool, &cls, err, sizeof(err)), -ENOENT);
        ck_assert_str_eq(cls.model, "NVIDIA-H100-80GB-HBM3");
        ck_assert_str_eq(cls.capacity_type, "spot");
        ck_assert(cls.price_per_gpu_hour == 0);
        ck_assert_str_eq(cls.price_source, "none");
        ck_assert_msg(strstr(err, "gpu-node-1") && strstr(err, "NVIDIA-H100-80GB-HBM3") &&
                          strstr(err, "spot"),
                      "%s", err);
        /* Without a catalog, the same. */
        ck_assert_int_eq(gc_node_classify(NULL, NULL, n, pool, &cls, err, sizeof(err)), -ENOENT);
        /* The DCGM spelling of the T4 finds the GFD-keyed entry. */
        n->gpu_model = NULL;
        n->ann_gpu_model = "Tesla T4";
        ck_assert_int_eq(gc_node_classify(NULL, c, n, pool, &cls, err, sizeof(err)), 0);
        ck_assert_str_eq(cls.model, "Tesla-T4");
        ck_assert(cls.price_per_gpu_hour == 0.35);
        /* A capacity type annotation that is not a token. */
        n->ann_capacity_type = "spot instance";
        ck_assert_int_eq(gc_node_classify(NULL, c, n, pool, &cls, err, sizeof(err)), -EINVAL);
        ck_assert_msg(strstr(err, "gpu-node-1") && strstr(err, "gpu-cost.io/capacity-type"), "%s",
                      err);
        n->ann_capacity_type = NULL;
        /* A model annotation longer than any model. */
        memset(longname, 'x', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        n->ann_gpu_model = longname;
        ck_assert_int_eq(gc_node_classify(NULL, c, n, pool, &cls, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "gpu-cost.io/gpu-model"));
        /* Required arguments. */
        ck_assert_int_eq(gc_node_classify(NULL, c, NULL, pool, &cls, err, sizeof(err)), -EINVAL);
        ck_assert_int_eq(gc_node_classify(NULL, c, n, NULL, &cls, err, sizeof(err)), -EINVAL);
        gc_catalog_free(c);
        gc_strpool_free(pool);
}
END_TEST

/* Rules own their arrays and char * fields; gc_price_rules_free must free exactly those. */
START_TEST(test_rules_free)
{
        gc_price_rules r;
        gc_price_rules zero;

        memset(&zero, 0, sizeof(zero));
        gc_price_rules_free(&zero);
        gc_price_rules_free(NULL);
        memset(&r, 0, sizeof(r));
        r.rules = calloc(2, sizeof(gc_node_rule));
        ck_assert_ptr_nonnull(r.rules);
        r.n = 2;
        r.rules[0].match = calloc(1, sizeof(gc_label));
        r.rules[0].match[0].key = "pool"; /* not owned: left alone */
        r.rules[0].match[0].value = "x";
        r.rules[0].n_match = 1;
        r.rules[0].capacity_type = strdup("spot");
        r.rules[1].model = strdup("NVIDIA-L4");
        r.rules[1].region = strdup("r");
        r.instance_models = calloc(1, sizeof(gc_label));
        r.n_instance_models = 1;
        r.default_capacity_type = strdup("on-prem");
        gc_price_rules_free(&r);
        ck_assert_ptr_null(r.rules);
        ck_assert_uint_eq(r.n, 0);
        ck_assert_ptr_null(r.default_capacity_type);
}
END_TEST

/* ---- real node labels ----------------------------------------------------------------------- */

/* Labels of a real object, pointing into the cJSON tree (kept alive by the caller). */
static size_t labels_from_json(const cJSON *obj, gc_label **ret)
{
        size_t n = (size_t)cJSON_GetArraySize(obj), i = 0;
        gc_label *l = calloc(n ? n : 1, sizeof(*l));
        const cJSON *it;

        ck_assert_ptr_nonnull(l);
        cJSON_ArrayForEach(it, obj)
        {
                l[i].key = it->string;
                l[i].value = it->valuestring;
                i++;
        }
        *ret = l;
        return n;
}

static cJSON *read_fixture(const char *name)
{
        char path[512];
        gc_buf b;
        cJSON *root;

        snprintf(path, sizeof(path), "%s/tests/fixtures/%s", GC_SOURCE_DIR, name);
        ck_assert_int_eq(gc_read_file(path, 1u << 20, &b), 0);
        root = cJSON_ParseWithLength(b.data, b.len);
        gc_buf_free(&b);
        ck_assert_ptr_nonnull(root);
        return root;
}

START_TEST(test_real_gfd_h100_node)
{
        cJSON *root = read_fixture("gfd-node-labels-h100-mig-single-all-disabled.json");
        gc_strpool *pool = gc_strpool_new(1u << 20);
        gc_catalog *c = gc_catalog_builtin();
        gc_label onprem_match[] = {{"nvidia.com/gpu.machine", "PIO-4124GS-TNR-01-NC24B"}};
        gc_node_rule onprem_rule[] = {{onprem_match, 1, "on-prem", NULL, NULL, -1}};
        gc_price_rules rules = {onprem_rule, 1, NULL, 0, NULL};
        gc_node_class cls;
        char err[256] = "";
        gc_node n;

        memset(&n, 0, sizeof(n));
        n.name = "s4124-0073";
        n.n_labels = labels_from_json(root, &n.labels);
        /* A record with only its labels: the product label is read directly. */
        ck_assert_int_eq(gc_node_classify(NULL, c, &n, pool, &cls, err, sizeof(err)), 0);
        ck_assert_str_eq(cls.model, "NVIDIA-H100-80GB-HBM3");
        ck_assert_str_eq(cls.capacity_type, "on-demand");
        ck_assert_ptr_null(cls.region);
        ck_assert_double_eq_tol(cls.price_per_gpu_hour, 12.29, 1e-9);
        ck_assert_str_eq(cls.price_source, "catalog NVIDIA-H100-80GB-HBM3/on-demand/*");
        /* On-prem hardware, said by a rule on the machine label: the owning-cost estimate. */
        ck_assert_int_eq(gc_node_classify(&rules, c, &n, pool, &cls, err, sizeof(err)), 0);
        ck_assert_str_eq(cls.capacity_type, "on-prem");
        ck_assert_str_eq(cls.capacity_source, "rule 0");
        ck_assert_double_eq_tol(cls.price_per_gpu_hour, 2.84, 1e-9);
        free(n.labels);
        gc_catalog_free(c);
        gc_strpool_free(pool);
        cJSON_Delete(root);
}
END_TEST

/*
 * Other vendors' nodes, decoded as the controller decodes them and classified against the
 * built-in catalog: no configuration. Labels as the vendors write them (test_model.c and
 * docs/model.md cite them); prices per docs/prices.md.
 */
static const struct {
        const char *labels;      /* JSON object */
        const char *allocatable; /* JSON object */
        const char *model, *model_source;
        double price;
        const char *price_source;
        double geq;
} vendor_classes[] = {
    {"{\"amd.com/gpu.product-name\":\"AMD_Instinct_MI300X_OAM\",\"amd.com/gpu.device-id\":\"74a1\","
     "\"amd.com/gpu.compute-memory-partition\":\"cpx_nps4\"}",
     "{\"amd.com/gpu\":\"64\"}", "AMD-Instinct-MI300X", "label amd.com/gpu.product-name", 1.99,
     "catalog AMD-Instinct-MI300X/*/*", 8},
    {"{\"beta.amd.com/gpu.device-id\":\"74a5\"}", "{\"amd.com/gpu\":\"8\"}", "AMD-Instinct-MI325X",
     "label beta.amd.com/gpu.device-id", 1.99, "catalog AMD-Instinct-MI3*/*/*", 8},
    /* Azure names the MI300X in its VM size; AKS writes it as the instance type */
    {"{\"node.kubernetes.io/instance-type\":\"Standard_ND96isr_MI300X_v5\"}",
     "{\"amd.com/gpu\":\"8\"}", "AMD-Instinct-MI300X", "instance type, built-in map", 1.99,
     "catalog AMD-Instinct-MI300X/*/*", 8},
    {"{\"node.kubernetes.io/instance-type\":\"trn1.32xlarge\",\"topology.kubernetes.io/region\":"
     "\"us-east-1\"}",
     "{\"aws.amazon.com/neuron\":\"16\",\"aws.amazon.com/neuroncore\":\"32\"}", "AWS-Trainium1",
     "instance type, built-in map", 1.34375, "catalog AWS-Trainium1/*/*", 16},
    {"{\"node.kubernetes.io/instance-type\":\"trn1n.32xlarge\"}",
     "{\"aws.amazon.com/neuron\":\"16\"}", "AWS-Trainium1", "instance type, built-in map", 1.34375,
     "catalog AWS-Trainium1/*/*", 16},
    {"{\"node.kubernetes.io/instance-type\":\"trn2.48xlarge\"}",
     "{\"aws.amazon.com/neuron\":\"16\",\"aws.amazon.com/neuroncore\":\"64\"}", "AWS-Trainium2",
     "instance type, built-in map", 2.00, "catalog */*/*", 16},
    {"{\"node.kubernetes.io/instance-type\":\"inf2.48xlarge\"}",
     "{\"aws.amazon.com/neuron\":\"12\",\"aws.amazon.com/neuroncore\":\"24\"}", "AWS-Inferentia2",
     "instance type, built-in map", 1.0818, "catalog AWS-Inferentia2/*/*", 12},
    {"{\"beta.kubernetes.io/instance-type\":\"inf1.xlarge\"}",
     "{\"aws.amazon.com/neuroncore\":\"4\"}", "AWS-Inferentia1", "instance type, built-in map",
     0.2951, "catalog AWS-Inferentia1/*/*", 1},
    {"{\"node.kubernetes.io/instance-type\":\"dl1.24xlarge\"}", "{\"habana.ai/gaudi\":\"8\"}",
     "Intel-Gaudi1", "instance type, built-in map", 1.6386, "catalog Intel-Gaudi1/*/*", 8},
    {"{\"cloud.google.com/gke-tpu-accelerator\":\"tpu-v6e-slice\",\"cloud.google.com/gke-spot\":"
     "\"true\",\"node.kubernetes.io/instance-type\":\"ct6e-standard-4t\"}",
     "{\"google.com/tpu\":\"4\"}", "Google-TPU-v6e", "label cloud.google.com/gke-tpu-accelerator",
     2.70, "catalog Google-TPU-v6e/*/*", 4},
    /* the machine type alone still names the TPU */
    {"{\"node.kubernetes.io/instance-type\":\"ct5p-hightpu-4t\"}", "{\"google.com/tpu\":\"4\"}",
     "Google-TPU-v5p", "instance type, built-in map", 4.20, "catalog Google-TPU-v5p/*/*", 4},
    {"{\"cloud.google.com/gke-tpu-accelerator\":\"tpu-v4-podslice\"}", "{\"google.com/tpu\":\"4\"}",
     "Google-TPU-v4", "label cloud.google.com/gke-tpu-accelerator", 3.22,
     "catalog Google-TPU-v4/*/*", 4},
};

START_TEST(test_vendor_nodes)
{
        gc_strpool *pool = gc_strpool_new(1u << 20);
        gc_res_table *res = gc_res_table_new_default();
        gc_catalog *c = gc_catalog_builtin();
        gc_model_opts o = {.pool = pool, .res = res};
        char doc[1024], err[256] = "";
        gc_node_class cls;
        cJSON *obj;
        gc_node n;

        snprintf(doc, sizeof(doc),
                 "{\"kind\":\"Node\",\"metadata\":{\"name\":\"accel-1\",\"labels\":%s},"
                 "\"status\":{\"allocatable\":%s}}",
                 vendor_classes[_i].labels, vendor_classes[_i].allocatable);
        obj = cJSON_Parse(doc);
        ck_assert_ptr_nonnull(obj);
        ck_assert_int_eq(gc_node_from_json(obj, &o, &n, err, sizeof(err)), 1);
        ck_assert_double_eq_tol(n.alloc_geq, vendor_classes[_i].geq, 1e-9);
        ck_assert_msg(gc_node_classify(NULL, c, &n, pool, &cls, err, sizeof(err)) == 0, "%s", err);
        ck_assert_str_eq(cls.model, vendor_classes[_i].model);
        ck_assert_str_eq(cls.model_source, vendor_classes[_i].model_source);
        ck_assert_double_eq_tol(cls.price_per_gpu_hour, vendor_classes[_i].price, 1e-9);
        ck_assert_str_eq(cls.price_source, vendor_classes[_i].price_source);
        /* A rule still beats the vendor's labels and the catalog. */
        {
                gc_label m[] = {{"kubernetes.io/hostname", "*"}};
                gc_label host[] = {{"kubernetes.io/hostname", "accel-1"}};
                gc_node_rule rule[] = {{m, 1, NULL, "Mine", NULL, 0.75}};
                gc_price_rules rules = {rule, 1, NULL, 0, NULL};
                gc_node copy = n;

                copy.labels = host;
                copy.n_labels = 1;
                ck_assert_int_eq(gc_node_classify(&rules, c, &copy, pool, &cls, err, sizeof(err)),
                                 0);
                ck_assert_str_eq(cls.model, "Mine");
                ck_assert_double_eq_tol(cls.price_per_gpu_hour, 0.75, 1e-9);
        }
        gc_node_release(&n);
        cJSON_Delete(obj);
        gc_catalog_free(c);
        gc_res_table_free(res);
        gc_strpool_free(pool);
}
END_TEST

START_TEST(test_real_rke2_a16_node)
{
        cJSON *root = read_fixture("nodelist-rke2-a16-vgpu-gpu-operator.json");
        const cJSON *item = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "items"), 0);
        const cJSON *meta = cJSON_GetObjectItem(item, "metadata");
        gc_strpool *pool = gc_strpool_new(1u << 20);
        gc_catalog *c = gc_catalog_builtin();
        gc_node_class cls;
        char err[256] = "";
        gc_node n;

        memset(&n, 0, sizeof(n));
        n.name = cJSON_GetObjectItem(meta, "name")->valuestring;
        n.n_labels = labels_from_json(cJSON_GetObjectItem(meta, "labels"), &n.labels);
        ck_assert_int_eq(gc_node_classify(&RULES_ONPREM, c, &n, pool, &cls, err, sizeof(err)), 0);
        /* vGPU profile A16-4Q: the A16 glob; instance type "rke2" is ignored */
        ck_assert_str_eq(cls.model, "NVIDIA-A16-4Q");
        ck_assert_str_eq(cls.capacity_type, "on-prem");
        ck_assert_str_eq(cls.capacity_source, "default_capacity_type");
        ck_assert_double_eq_tol(cls.price_per_gpu_hour, 0.53, 1e-9);
        ck_assert_str_eq(cls.price_source, "catalog NVIDIA-A16*/*/*");
        free(n.labels);
        gc_catalog_free(c);
        gc_strpool_free(pool);
        cJSON_Delete(root);
}
END_TEST

/* ---- TCO ------------------------------------------------------------------------------------ */

/* The worked example of docs/prices.md: DGX H100. */
static gc_tco_inputs dgx(void)
{
        gc_tco_inputs in = {
            .node_price = 425000,
            .gpus_per_node = 8,
            .years = 3,
            .utilization = 0.80,
            .cluster_gpus = 64,
            .ftes = 1.5,
            .fte_cost = 250000,
            .kw_per_gpu = 0.56,
            .pue = 1.3,
            .price_per_kwh = 0.10,
            .network_per_gpu_hour = 0.10,
        };
        return in;
}

START_TEST(test_tco_worked_example)
{
        gc_tco_inputs in = dgx();
        gc_tco_result r;
        char err[128] = "";

        ck_assert_int_eq(gc_tco_compute(&in, &r, err, sizeof(err)), 0);
        /*
         * By hand: productive hours 8760 x 0.80 = 7008.
         * hardware   425000 / 8 = 53125 per GPU; / 3 = 17708.33 a year; / 7008 = 2.52687
         * operations 1.5 x 250000 = 375000; 64 x 7008 = 448512; 375000 / 448512 = 0.83610
         * power      0.56 x 8760 x 1.3 x 0.10 = 637.728 a year; / 7008 = 0.09100
         * total      2.52687 + 0.83610 + 0.09100 + 0.10 = 3.55397
         * annual     3.55397 x 7008 = 24906.2
         * The reference rounds each part (2.53, 0.84, 0.091, 0.10) and so prints "about 3.56".
         */
        ck_assert_double_eq_tol(r.hardware_per_hour, 2.52687, 0.00001);
        ck_assert_double_eq_tol(r.operations_per_hour, 0.83610, 0.00001);
        ck_assert_double_eq_tol(r.power_per_hour, 0.09100, 0.00001);
        ck_assert_double_eq_tol(r.network_per_hour, 0.10, 1e-12);
        ck_assert_double_eq_tol(r.cost_per_productive_gpu_hour, 3.55397, 0.00001);
        ck_assert_double_eq_tol(r.annual_cost_per_gpu, 24906.2, 0.1);
        /* against the reference's published figures */
        ck_assert_double_eq_tol(r.hardware_per_hour, 2.53, 0.005);
        ck_assert_double_eq_tol(r.operations_per_hour, 0.84, 0.005);
        ck_assert_double_eq_tol(r.power_per_hour, 0.091, 0.005);
        ck_assert_double_eq_tol(r.power_per_hour * 7008, 637, 1); /* "637 a year per GPU" */
        ck_assert_double_eq_tol(r.cost_per_productive_gpu_hour, 3.56, 0.01);
        /* Full utilization: productive hours 8760, so hardware = 17708.33 / 8760 = 2.02150. */
        in.utilization = 1.0;
        ck_assert_int_eq(gc_tco_compute(&in, &r, err, sizeof(err)), 0);
        ck_assert_double_eq_tol(r.hardware_per_hour, 2.02150, 0.00001);
        /* A GPU costs the same a year whatever its utilization, except nothing: 17708.33 +
         * 375000 / 64 (5859.38) + 637.73 + 0.10 x 8760 (876) = 25081.4. */
        ck_assert_double_eq_tol(r.annual_cost_per_gpu, 25081.4, 0.1);
}
END_TEST

START_TEST(test_break_even)
{
        double u = -1;

        /* 18628 / (8760 x 5.25 = 45990) = 0.40504 */
        ck_assert_int_eq(gc_tco_break_even(18628, 5.25, &u), 0);
        ck_assert_double_eq_tol(u, 0.405, 0.001);
        /* against on demand: 18628 / (8760 x 12.29 = 107660.4) = 0.17303 */
        ck_assert_int_eq(gc_tco_break_even(18628, 12.29, &u), 0);
        ck_assert_double_eq_tol(u, 0.17303, 0.00001);
        /* dearer than renting every hour: above 1, returned as is */
        ck_assert_int_eq(gc_tco_break_even(100000, 5.25, &u), 0);
        ck_assert_double_eq_tol(u, 2.17439, 0.00001);
        ck_assert_int_eq(gc_tco_break_even(0, 5.25, &u), 0);
        ck_assert(u == 0);
        u = -1;
        ck_assert_int_eq(gc_tco_break_even(18628, 0, &u), -EINVAL);
        ck_assert_int_eq(gc_tco_break_even(18628, -1, &u), -EINVAL);
        ck_assert_int_eq(gc_tco_break_even(-1, 5.25, &u), -EINVAL);
        ck_assert_int_eq(gc_tco_break_even(NAN, 5.25, &u), -EINVAL);
        ck_assert_int_eq(gc_tco_break_even(18628, INFINITY, &u), -EINVAL);
        ck_assert_int_eq(gc_tco_break_even(18628, 5.25, NULL), -EINVAL);
        ck_assert(u == -1);
        /* a tiny price overflows the quotient */
        ck_assert_int_eq(gc_tco_break_even(1e308, 1e-300, &u), -ERANGE);
}
END_TEST

static const struct {
        const char *field;
        size_t offset;
        double bad;
} tco_bad[] = {
    {"node_price", offsetof(gc_tco_inputs, node_price), -1},
    {"node_price", offsetof(gc_tco_inputs, node_price), NAN},
    {"gpus_per_node", offsetof(gc_tco_inputs, gpus_per_node), 0},
    {"years", offsetof(gc_tco_inputs, years), 0},
    {"years", offsetof(gc_tco_inputs, years), INFINITY},
    {"utilization", offsetof(gc_tco_inputs, utilization), 0},
    {"utilization", offsetof(gc_tco_inputs, utilization), 1.01},
    {"utilization", offsetof(gc_tco_inputs, utilization), -0.5},
    {"utilization", offsetof(gc_tco_inputs, utilization), NAN},
    {"cluster_gpus", offsetof(gc_tco_inputs, cluster_gpus), 0},
    {"ftes", offsetof(gc_tco_inputs, ftes), -1},
    {"fte_cost", offsetof(gc_tco_inputs, fte_cost), -1},
    {"kw_per_gpu", offsetof(gc_tco_inputs, kw_per_gpu), -0.1},
    {"pue", offsetof(gc_tco_inputs, pue), 0.9},
    {"pue", offsetof(gc_tco_inputs, pue), 0},
    {"price_per_kwh", offsetof(gc_tco_inputs, price_per_kwh), -0.1},
    {"network_per_gpu_hour", offsetof(gc_tco_inputs, network_per_gpu_hour), -0.1},
    {"network_per_gpu_hour", offsetof(gc_tco_inputs, network_per_gpu_hour), NAN},
};

START_TEST(test_tco_invalid)
{
        gc_tco_inputs in = dgx();
        gc_tco_result r;
        char err[128] = "";
        char want[64];

        memcpy((char *)&in + tco_bad[_i].offset, &tco_bad[_i].bad, sizeof(double));
        memset(&r, 0x5a, sizeof(r));
        ck_assert_int_eq(gc_tco_compute(&in, &r, err, sizeof(err)), -EINVAL);
        snprintf(want, sizeof(want), "%s: ", tco_bad[_i].field);
        ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
        ck_assert_uint_eq(((unsigned char *)&r)[0], 0x5a); /* untouched */
}
END_TEST

START_TEST(test_tco_messages_and_edges)
{
        gc_tco_inputs in = dgx();
        gc_tco_result r;
        char err[128] = "";

        in.utilization = 0;
        ck_assert_int_eq(gc_tco_compute(&in, &r, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "utilization: must be in (0, 1]");
        in = dgx();
        in.pue = 0.5;
        ck_assert_int_eq(gc_tco_compute(&in, &r, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "pue: must be a number >= 1");
        ck_assert_int_eq(gc_tco_compute(NULL, &r, err, sizeof(err)), -EINVAL);
        in = dgx();
        ck_assert_int_eq(gc_tco_compute(&in, NULL, err, sizeof(err)), -EINVAL);
        /* No staff, power or network: only the hardware, 53125 / 3 / 7008 = 2.52687. */
        in.ftes = 0;
        in.kw_per_gpu = 0;
        in.network_per_gpu_hour = 0;
        ck_assert_int_eq(gc_tco_compute(&in, &r, NULL, 0), 0);
        ck_assert_double_eq_tol(r.cost_per_productive_gpu_hour, 2.52687, 0.00001);
        /* Finite inputs whose quotient overflows. */
        in = dgx();
        in.node_price = 1e308;
        in.gpus_per_node = 1e-10;
        ck_assert_int_eq(gc_tco_compute(&in, &r, err, sizeof(err)), -ERANGE);
}
END_TEST

static Suite *price_suite(void)
{
        Suite *s = suite_create("price");
        TCase *tc;

        tc = tcase_create("catalog");
        tcase_add_loop_test(tc, test_lookup, 0, sizeof(lookup_cases) / sizeof(lookup_cases[0]));
        tcase_add_test(tc, test_lookup_no_catchall);
        tcase_add_test(tc, test_lookup_tie_earlier_wins);
        tcase_add_loop_test(tc, test_docs_example, 0, sizeof(docs_cases) / sizeof(docs_cases[0]));
        tcase_add_loop_test(tc, test_bad_catalog, 0,
                            sizeof(bad_catalogs) / sizeof(bad_catalogs[0]));
        tcase_add_test(tc, test_catalog_limits);
        tcase_add_test(tc, test_catalog_fields);
        tcase_add_test(tc, test_catalog_from_cjson_where);
        tcase_add_test(tc, test_catalog_round_trip);
        tcase_add_test(tc, test_builtin_sanity);
        tcase_add_loop_test(tc, test_builtin_figures, 0,
                            sizeof(builtin_cases) / sizeof(builtin_cases[0]));
        suite_add_tcase(s, tc);

        tc = tcase_create("classify");
        tcase_add_loop_test(tc, test_classify_model, 0,
                            sizeof(model_cases) / sizeof(model_cases[0]));
        tcase_add_loop_test(tc, test_classify_capacity, 0,
                            sizeof(capacity_cases) / sizeof(capacity_cases[0]));
        tcase_add_loop_test(tc, test_classify_region, 0,
                            sizeof(region_cases) / sizeof(region_cases[0]));
        tcase_add_loop_test(tc, test_classify_price, 0,
                            sizeof(price_cases) / sizeof(price_cases[0]));
        tcase_add_test(tc, test_annotations_override_everything);
        tcase_add_loop_test(tc, test_bad_price_annotation, 0,
                            sizeof(bad_prices) / sizeof(bad_prices[0]));
        tcase_add_test(tc, test_classify_errors);
        tcase_add_test(tc, test_rules_free);
        tcase_add_test(tc, test_real_gfd_h100_node);
        tcase_add_test(tc, test_real_rke2_a16_node);
        tcase_add_loop_test(tc, test_vendor_nodes, 0,
                            sizeof(vendor_classes) / sizeof(vendor_classes[0]));
        suite_add_tcase(s, tc);

        tc = tcase_create("tco");
        tcase_add_test(tc, test_tco_worked_example);
        tcase_add_test(tc, test_break_even);
        tcase_add_loop_test(tc, test_tco_invalid, 0, sizeof(tco_bad) / sizeof(tco_bad[0]));
        tcase_add_test(tc, test_tco_messages_and_edges);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(price_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed != 0;
}
