/* test_kube: line splitter, list scanner, kubeconfig, escaping, lease decisions; no network. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kube/kube.h"
#include "kube/kube_int.h"

/* ---- the line splitter ----------------------------------------------------------------------- */

#define MAX_GOT 64

typedef struct got {
        char *lines[MAX_GOT];
        size_t n;
        size_t drops;
        int fail_at; /* return -EIO on this line (1-based), 0 = never */
} got;

static int got_line(void *ud, const char *line, size_t len)
{
        got *g = ud;

        if (!line) {
                g->drops++;
                return 0;
        }
        ck_assert_uint_lt(g->n, MAX_GOT);
        /* Lines are not NUL-terminated and must not contain the newline. */
        ck_assert_ptr_null(memchr(line, '\n', len));
        g->lines[g->n] = strndup(line, len);
        g->n++;
        if (g->fail_at && (int)g->n == g->fail_at)
                return -EIO;
        return 0;
}

static void got_free(got *g)
{
        for (size_t i = 0; i < g->n; i++)
                free(g->lines[i]);
        memset(g, 0, sizeof(*g));
}

static const struct {
        const char *in;
        size_t max;
        size_t n_lines;
        const char *lines[6];
        size_t drops;
} line_cases[] = {
    {"", 16, 0, {NULL}, 0},
    {"abc\n", 16, 1, {"abc"}, 0},
    {"abc", 16, 0, {NULL}, 0}, /* no trailing newline: still pending */
    {"a\nbb\nccc\n", 16, 3, {"a", "bb", "ccc"}, 0},
    {"\n\nx\n\n", 16, 4, {"", "", "x", ""}, 0}, /* empty lines are lines */
    {"a\nlast", 16, 1, {"a"}, 0},
    {"abcde\nabcdef\nxy\n", 5, 2, {"abcde", "xy"}, 1}, /* 5 fits, 6 is dropped */
    {"abcdefghij\nk\n", 3, 1, {"k"}, 1},
    {"toolongline\ntoolongagain\nok\n", 4, 1, {"ok"}, 2},
    {"{\"type\":\"ADDED\"}\r\n", 64, 1, {"{\"type\":\"ADDED\"}\r"}, 0},
};

static void check_lines(size_t c, got *g)
{
        ck_assert_uint_eq(g->n, line_cases[c].n_lines);
        for (size_t i = 0; i < g->n; i++)
                ck_assert_str_eq(g->lines[i], line_cases[c].lines[i]);
        ck_assert_uint_eq(g->drops, line_cases[c].drops);
}

/* Every way to cut the input in two, and byte by byte. */
START_TEST(test_lines_every_boundary)
{
        const char *in = line_cases[_i].in;
        size_t n = strlen(in);

        for (size_t cut = 0; cut <= n; cut++) {
                gc_kube_lines s;
                got g = {0};

                gc_kube_lines_init(&s, line_cases[_i].max);
                ck_assert_int_eq(gc_kube_lines_feed(&s, in, cut, got_line, &g), 0);
                ck_assert_int_eq(gc_kube_lines_feed(&s, in + cut, n - cut, got_line, &g), 0);
                check_lines((size_t)_i, &g);
                /* Pending never holds more than the cap. */
                ck_assert_uint_le(s.pending.len, line_cases[_i].max);
                ck_assert_uint_eq(s.scanned, s.pending.len);
                gc_kube_lines_release(&s);
                got_free(&g);
        }
        {
                gc_kube_lines s;
                got g = {0};

                gc_kube_lines_init(&s, line_cases[_i].max);
                for (size_t i = 0; i < n; i++)
                        ck_assert_int_eq(gc_kube_lines_feed(&s, in + i, 1, got_line, &g), 0);
                check_lines((size_t)_i, &g);
                gc_kube_lines_release(&s);
                got_free(&g);
        }
}
END_TEST

/* Three slices, every pair of cut points. */
START_TEST(test_lines_three_slices)
{
        const char *in = "first\nsecond line\n\nthird\nfourth, longer than the others\nend\n";
        const char *want[] = {"first", "second line", "", "third", "end"};
        size_t n = strlen(in);

        for (size_t a = 0; a <= n; a++) {
                for (size_t b = a; b <= n; b++) {
                        gc_kube_lines s;
                        got g = {0};

                        gc_kube_lines_init(&s, 12); /* "fourth, ..." (31 bytes) is dropped */
                        ck_assert_int_eq(gc_kube_lines_feed(&s, in, a, got_line, &g), 0);
                        ck_assert_int_eq(gc_kube_lines_feed(&s, in + a, b - a, got_line, &g), 0);
                        ck_assert_int_eq(gc_kube_lines_feed(&s, in + b, n - b, got_line, &g), 0);
                        ck_assert_uint_eq(g.n, 5);
                        for (size_t i = 0; i < 5; i++)
                                ck_assert_str_eq(g.lines[i], want[i]);
                        ck_assert_uint_eq(g.drops, 1);
                        gc_kube_lines_release(&s);
                        got_free(&g);
                }
        }
}
END_TEST

static size_t drop_len;

static int drop_line(void *ud, const char *line, size_t len)
{
        (void)ud;
        if (!line)
                drop_len = len;
        return 0;
}

START_TEST(test_lines_drop_report)
{
        gc_kube_lines s;

        /* The report counts the bytes dropped when the cap was passed, once per line. */
        gc_kube_lines_init(&s, 4);
        drop_len = 0;
        ck_assert_int_eq(gc_kube_lines_feed(&s, "abc", 3, drop_line, NULL), 0);
        ck_assert_uint_eq(drop_len, 0);
        ck_assert_int_eq(gc_kube_lines_feed(&s, "defg", 4, drop_line, NULL), 0);
        ck_assert_uint_eq(drop_len, 7);
        drop_len = 0;
        ck_assert_int_eq(gc_kube_lines_feed(&s, "hijklmn", 7, drop_line, NULL), 0);
        ck_assert_uint_eq(drop_len, 0); /* already reported */
        ck_assert_uint_eq(s.pending.len, 0);
        ck_assert_int_eq(gc_kube_lines_feed(&s, "\nab\n", 4, drop_line, NULL), 0);
        ck_assert_uint_eq(drop_len, 0);
        gc_kube_lines_release(&s);
}
END_TEST

START_TEST(test_lines_callback_error)
{
        gc_kube_lines s;
        got g = {0};

        g.fail_at = 2;
        gc_kube_lines_init(&s, 64);
        ck_assert_int_eq(gc_kube_lines_feed(&s, "a\nb\nc\n", 6, got_line, &g), -EIO);
        ck_assert_uint_eq(g.n, 2); /* stopped at the failing line */
        gc_kube_lines_release(&s);
        got_free(&g);
        gc_kube_lines_release(NULL);
}
END_TEST

/* ---- the list scanner ------------------------------------------------------------------------ */

typedef struct items {
        char *json[MAX_GOT];
        size_t n;
        size_t dropped;
} items;

static int item_cb(void *ud, const char *json, size_t len)
{
        items *it = ud;

        if (!json) {
                it->dropped++;
                return 0;
        }
        ck_assert_uint_lt(it->n, MAX_GOT);
        it->json[it->n++] = strndup(json, len);
        return 0;
}

static void items_free(items *it)
{
        for (size_t i = 0; i < it->n; i++)
                free(it->json[i]);
        memset(it, 0, sizeof(*it));
}

static const char *const list_doc =
    "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"12345\","
    "\"continue\":\"eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ\"},\"items\":[ {\"metadata\":{\"name\":\"a\"}},"
    "{\"metadata\":{\"name\":\"b]}\\\"{[\"},\"spec\":{\"x\":[1,2,{\"y\":\"}\"}]}} ,\n"
    "{\"metadata\":{\"name\":\"c\\\\\"}}],\"extra\":[[\"items\"],{\"items\":[{}]}],\"n\":-1.5e3,"
    "\"t\":true }\n";

START_TEST(test_scan_every_boundary)
{
        size_t n = strlen(list_doc);

        for (size_t cut = 0; cut <= n; cut++) {
                gc__kube_scan s;
                items it = {0};
                cJSON *meta, *o;

                gc__kube_scan_init(&s, 4096, item_cb, &it);
                ck_assert_int_eq(gc__kube_scan_feed(&s, list_doc, cut), 0);
                ck_assert_int_eq(gc__kube_scan_feed(&s, list_doc + cut, n - cut), 0);
                ck_assert_int_eq(gc__kube_scan_finish(&s), 0);
                ck_assert_uint_eq(it.n, 3);
                ck_assert_str_eq(it.json[0], "{\"metadata\":{\"name\":\"a\"}}");
                /* Brackets and quotes inside strings do not end an item. */
                o = cJSON_Parse(it.json[1]);
                ck_assert_ptr_nonnull(o);
                ck_assert_str_eq(gc_kube_meta(o, "name"), "b]}\"{[");
                cJSON_Delete(o);
                o = cJSON_Parse(it.json[2]);
                ck_assert_str_eq(gc_kube_meta(o, "name"), "c\\");
                cJSON_Delete(o);
                meta = cJSON_ParseWithLength(s.meta.data, s.meta.len);
                ck_assert_str_eq(cJSON_GetObjectItem(meta, "resourceVersion")->valuestring,
                                 "12345");
                cJSON_Delete(meta);
                gc__kube_scan_release(&s);
                items_free(&it);
        }
}
END_TEST

START_TEST(test_scan_bytewise_and_caps)
{
        gc__kube_scan s;
        items it = {0};
        const char *doc = "{\"items\":[{\"a\":\"0123456789\"},{\"b\":1}],\"metadata\":{}}";

        /* One byte at a time, and an item cap that drops the first (18 bytes) only. */
        gc__kube_scan_init(&s, 16, item_cb, &it);
        for (size_t i = 0; doc[i]; i++)
                ck_assert_int_eq(gc__kube_scan_feed(&s, doc + i, 1), 0);
        ck_assert_int_eq(gc__kube_scan_finish(&s), 0);
        ck_assert_uint_eq(it.dropped, 1);
        ck_assert_uint_eq(it.n, 1);
        ck_assert_str_eq(it.json[0], "{\"b\":1}");
        ck_assert_uint_eq(s.n_items, 2);
        gc__kube_scan_release(&s);
        items_free(&it);
}
END_TEST

START_TEST(test_scan_metadata_cap)
{
        gc__kube_scan s;
        items it = {0};
        gc_buf doc;

        /* The list's metadata is kept for its resourceVersion: 64 KiB of it at most. */
        gc_buf_init(&doc, 1u << 20);
        gc_buf_puts(&doc, "{\"items\":[{}],\"metadata\":{\"x\":\"");
        for (size_t i = 0; i < GC__KUBE_MAX_META; i++)
                gc_buf_puts(&doc, "a");
        gc_buf_puts(&doc, "\"}}");
        ck_assert_int_eq(doc.err, 0);
        gc__kube_scan_init(&s, 4096, item_cb, &it);
        ck_assert_int_eq(gc__kube_scan_feed(&s, doc.data, 100), 0);
        ck_assert_int_eq(gc__kube_scan_feed(&s, doc.data + 100, doc.len - 100), -E2BIG);
        ck_assert_uint_eq(it.n, 1);
        gc__kube_scan_release(&s);
        items_free(&it);
        gc_buf_free(&doc);
}
END_TEST

static const struct {
        const char *doc;
        int feed_ok;
        int complete;
        size_t n_items;
} scan_cases[] = {
    {"{}", 1, 1, 0},
    {"{\"items\":[]}", 1, 1, 0},
    {"{\"items\":null}", 1, 1, 0},
    {" {\"items\":[{}, {}]} \n", 1, 1, 2},
    {"{\"items\":[{}", 1, 0, 1},       /* truncated */
    {"{\"items\":[{\"a\":1", 1, 0, 0}, /* truncated inside an item */
    {"[]", 0, 0, 0},                   /* not an object */
    {"{\"items\":[1,2]}", 0, 0, 0},    /* items are objects */
    {"{\"a\" 1}", 0, 0, 0},
    {"{\"a\":1}x", 0, 1, 0},
    {"{,}", 0, 0, 0},
    {"{\"items\":{}}", 0, 0, 0},              /* items is an array (or null) */
    {"{\"items\":[],\"items\":[]}", 0, 0, 0}, /* once */
    {"{\"items\":[{\"a\":[}]}", 0, 0, 0},     /* brackets must match */
};

START_TEST(test_scan_table)
{
        gc__kube_scan s;
        items it = {0};
        const char *doc = scan_cases[_i].doc;
        int r;

        gc__kube_scan_init(&s, 1024, item_cb, &it);
        r = gc__kube_scan_feed(&s, doc, strlen(doc));
        if (scan_cases[_i].feed_ok) {
                ck_assert_int_eq(r, 0);
                ck_assert_int_eq(gc__kube_scan_finish(&s) == 0, scan_cases[_i].complete);
                ck_assert_uint_eq(it.n, scan_cases[_i].n_items);
        } else {
                ck_assert_int_eq(r, -EINVAL);
        }
        gc__kube_scan_release(&s);
        items_free(&it);
}
END_TEST

/* ---- base64, escaping, metadata ---------------------------------------------------------------
 */

static const struct {
        const char *in;
        const char *out; /* NULL: refused */
} b64_cases[] = {
    {"aGVsbG8=", "hello"},   {"aGk=", "hi"},         {"aA==", "h"},           {"", ""},
    {"aGVs\nbG8=", "hello"}, {"aGVsbG8", NULL},      {"aGk", NULL},           {"aA=", NULL},
    {"a===", NULL},          {"aGk=aGk=", NULL},     {"aGk*", NULL},          {"aB==", NULL},
    {"aGVsbG8==", NULL},     {"Zm9vYmFy", "foobar"}, {"Zm9v YmFy", "foobar"},
};

START_TEST(test_base64)
{
        gc_buf b;
        int r;

        gc_buf_init(&b, 1024);
        r = gc__kube_base64_decode(b64_cases[_i].in, strlen(b64_cases[_i].in), &b);
        if (b64_cases[_i].out) {
                ck_assert_msg(r == 0, "%s should decode", b64_cases[_i].in);
                ck_assert_str_eq(b.data, b64_cases[_i].out);
        } else {
                ck_assert_msg(r < 0, "%s should be refused", b64_cases[_i].in);
        }
        gc_buf_free(&b);
}
END_TEST

START_TEST(test_escape)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
            {"app=gpu-cost", "app%3Dgpu-cost"},
            {"a b&c", "a%20b%26c"},
            {"gpu-cost.io/kind in (report,checkpoint)",
             "gpu-cost.io%2Fkind%20in%20%28report%2Ccheckpoint%29"},
            {"~._-AZaz09", "~._-AZaz09"},
            {"\xc3\xa9", "%C3%A9"},
            {"", ""},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                gc_buf b;

                gc_buf_init(&b, 256);
                ck_assert_int_eq(gc_kube_escape(&b, cases[i].in), 0);
                ck_assert_str_eq(b.data ? b.data : "", cases[i].out);
                gc_buf_free(&b);
        }
        {
                gc_buf b;

                gc_buf_init(&b, 4);
                ck_assert_int_eq(gc_kube_escape(&b, "a b"), -E2BIG);
                gc_buf_free(&b);
        }
}
END_TEST

START_TEST(test_meta)
{
        cJSON *o = cJSON_Parse("{\"metadata\":{\"name\":\"n\",\"resourceVersion\":\"007\","
                               "\"generation\":3}}");

        ck_assert_str_eq(gc_kube_meta(o, "name"), "n");
        /* Kept as the text it is: "007" is not 7. */
        ck_assert_str_eq(gc_kube_meta(o, "resourceVersion"), "007");
        ck_assert_ptr_null(gc_kube_meta(o, "generation"));
        ck_assert_ptr_null(gc_kube_meta(o, "uid"));
        ck_assert_ptr_null(gc_kube_meta(NULL, "name"));
        cJSON_Delete(o);
}
END_TEST

/* ---- kubeconfig --------------------------------------------------------------------------------
 */

#define CERT_B64                                                                                   \
        "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJmYWtlCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"
#define KEY_B64                                                                                    \
        "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY2Zha2UKLS0tLS1FTkQgRUMgUFJJVkFURSBLRVktLS0t" \
        "LQo="
#define CERT_PEM "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
#define KEY_PEM  "-----BEGIN EC PRIVATE KEY-----\nMHcfake\n-----END EC PRIVATE KEY-----\n"

static const char *const kc_full = "apiVersion: v1\n"
                                   "kind: Config\n"
                                   "clusters:\n"
                                   "- name: prod\n"
                                   "  cluster:\n"
                                   "    server: https://10.0.0.1:6443\n"
                                   "    certificate-authority-data: " CERT_B64 "\n"
                                   "- name: dev\n"
                                   "  cluster:\n"
                                   "    server: https://[fd00::1]:443/\n"
                                   "    certificate-authority: certs/ca.pem\n"
                                   "users:\n"
                                   "- name: admin\n"
                                   "  user:\n"
                                   "    client-certificate-data: " CERT_B64 "\n"
                                   "    client-key-data: " KEY_B64 "\n"
                                   "- name: bot\n"
                                   "  user:\n"
                                   "    token: \"abc.def-123\"\n"
                                   "- name: filebot\n"
                                   "  user:\n"
                                   "    tokenFile: /var/run/token\n"
                                   "    client-certificate: /etc/c.pem\n"
                                   "    client-key: k.pem\n"
                                   "contexts:\n"
                                   "- name: prod-admin\n"
                                   "  context: {cluster: prod, user: admin, namespace: gpu-cost}\n"
                                   "- name: dev-bot\n"
                                   "  context:\n"
                                   "    cluster: dev\n"
                                   "    user: bot\n"
                                   "- name: dev-file\n"
                                   "  context:\n"
                                   "    cluster: dev\n"
                                   "    user: filebot\n"
                                   "    namespace: ~\n"
                                   "- name: anon\n"
                                   "  context:\n"
                                   "    cluster: prod\n"
                                   "current-context: prod-admin\n"
                                   "preferences: {}\n";

START_TEST(test_kubeconfig_current_context)
{
        gc_kube_config c;
        char err[256] = "";

        memset(&c, 0xff, sizeof(c)); /* ret is written whole on success */
        ck_assert_int_eq(gc__kube_config_parse(kc_full, strlen(kc_full), "/home/u/.kube", NULL, &c,
                                               err, sizeof(err)),
                         0);
        ck_assert_str_eq(c.server, "https://10.0.0.1:6443");
        ck_assert_str_eq(c.ca_data, CERT_PEM);
        ck_assert_ptr_null(c.ca_file);
        ck_assert_str_eq(c.client_cert_data, CERT_PEM);
        ck_assert_str_eq(c.client_key_data, KEY_PEM);
        ck_assert_ptr_null(c.token);
        ck_assert_str_eq(c.namespace, "gpu-cost");
        gc_kube_config_release(&c);
        ck_assert_ptr_null(c.server);
        gc_kube_config_release(&c); /* twice is fine */
}
END_TEST

START_TEST(test_kubeconfig_contexts)
{
        gc_kube_config c;
        char err[256] = "";

        ck_assert_int_eq(gc__kube_config_parse(kc_full, strlen(kc_full), "/home/u/.kube", "dev-bot",
                                               &c, err, sizeof(err)),
                         0);
        ck_assert_str_eq(c.server, "https://[fd00::1]:443/");
        /* Relative to the kubeconfig's directory. */
        ck_assert_str_eq(c.ca_file, "/home/u/.kube/certs/ca.pem");
        ck_assert_str_eq(c.token, "abc.def-123");
        ck_assert_ptr_null(c.namespace);
        ck_assert_ptr_null(c.client_cert_data);
        gc_kube_config_release(&c);

        ck_assert_int_eq(gc__kube_config_parse(kc_full, strlen(kc_full), "/home/u/.kube",
                                               "dev-file", &c, err, sizeof(err)),
                         0);
        ck_assert_str_eq(c.token_file, "/var/run/token");
        ck_assert_str_eq(c.client_cert_file, "/etc/c.pem");
        ck_assert_str_eq(c.client_key_file, "/home/u/.kube/k.pem");
        ck_assert_ptr_null(c.namespace);
        gc_kube_config_release(&c);

        /* A context without a user: anonymous. */
        ck_assert_int_eq(
            gc__kube_config_parse(kc_full, strlen(kc_full), NULL, "anon", &c, err, sizeof(err)), 0);
        ck_assert_ptr_null(c.token);
        ck_assert_ptr_null(c.client_cert_data);
        gc_kube_config_release(&c);
}
END_TEST

static const struct {
        const char *yaml;
        const char *context;
        const char *err; /* a substring of the message */
} kc_bad[] = {
    {"", NULL, "kubeconfig: empty"},
    {"- a\n- b\n", NULL, "not a mapping"},
    {"a: [\n", NULL, "kubeconfig: line"},
    {"clusters: []\n", NULL, "current-context: missing"},
    {"current-context: x\n", NULL, "contexts: missing"},
    {"current-context: x\ncontexts:\n- name: y\n  context: {cluster: c}\n", NULL,
     "contexts: no entry named \"x\""},
    {"current-context: x\ncontexts: {a: b}\n", NULL, "contexts: not a list"},
    {"current-context: x\ncontexts:\n- name: x\n", NULL, "contexts[0].context: missing"},
    {"current-context: x\ncontexts:\n- name: x\n  context: {user: u}\n", NULL,
     "contexts[0].context.cluster: missing"},
    {"current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n"
     "  cluster: {certificate-authority: /ca}\n",
     NULL, "clusters[0].cluster.server: missing"},
    {"current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n"
     "  cluster: {server: ftp://h}\n",
     NULL, "clusters[0].cluster.server: not an http(s) URL"},
    {"current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n"
     "  cluster: {server: 'https://h', insecure-skip-tls-verify: true}\n",
     NULL, "clusters[0].cluster.insecure-skip-tls-verify: not supported"},
    {"current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n"
     "  cluster: {server: 'https://h', certificate-authority-data: 'not*base64'}\n",
     NULL, "clusters[0].cluster.certificate-authority-data: not base64"},
    {"current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n"
     "  cluster: {server: 'https://h', certificate-authority-data: 'bm90IHBlbQ=='}\n",
     NULL, "clusters[0].cluster.certificate-authority-data: not PEM data"},
    {"current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nclusters:\n"
     "- name: c\n  cluster: {server: 'https://h'}\nusers:\n- name: other\n  user: {}\n"
     "- name: u\n  user: {client-key-data: '%%%'}\n",
     NULL, "users[1].user.client-key-data: not base64"},
    {"current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nclusters:\n"
     "- name: c\n  cluster: {server: 'https://h'}\nusers:\n"
     "- name: u\n  user: {client-certificate-data: " CERT_B64 "}\n",
     NULL, "users[0].user.client-key: missing"},
    {"current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nclusters:\n"
     "- name: c\n  cluster: {server: 'https://h'}\nusers:\n"
     "- name: u\n  user: {exec: {command: aws}}\n",
     NULL, "users[0].user.exec: not supported"},
    {"current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nclusters:\n"
     "- name: c\n  cluster: {server: 'https://h'}\nusers:\n"
     "- name: u\n  user: {token: \"a\\r\\nX-Evil: 1\"}\n",
     NULL, "users[0].user.token: not a bearer token"},
    {"current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nclusters:\n"
     "- name: c\n  cluster: {server: [a]}\n",
     NULL, "clusters[0].cluster.server: not a string"},
    {"current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nclusters:\n"
     "- name: c\n  cluster: {server: 'https://h'}\n",
     NULL, "users: missing"},
    {"current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n"
     "- name: c\n  cluster: {server: \"https://h\\0\"}\n",
     NULL, "contains a NUL byte"},
    {"current-context: x\n", "", "contexts: missing"},
};

START_TEST(test_kubeconfig_errors)
{
        gc_kube_config c;
        char err[256] = "";
        int r;

        memset(&c, 0, sizeof(c));
        r = gc__kube_config_parse(kc_bad[_i].yaml, strlen(kc_bad[_i].yaml), NULL,
                                  kc_bad[_i].context, &c, err, sizeof(err));
        ck_assert_msg(r < 0, "case %d should fail", _i);
        ck_assert_msg(strstr(err, kc_bad[_i].err) != NULL, "case %d: \"%s\" lacks \"%s\"", _i, err,
                      kc_bad[_i].err);
        ck_assert_ptr_null(c.server); /* untouched on failure */
}
END_TEST

static char tmpdir[64];

static void write_file(const char *dir, const char *name, const char *text)
{
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        fclose(f);
}

static void rm_tmpdir(void)
{
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_kubeconfig_load_file)
{
        gc_kube_config c;
        char err[256] = "", path[256];

        snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_kube.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
        write_file(tmpdir, "config", kc_full);
        snprintf(path, sizeof(path), "%s/config", tmpdir);
        ck_assert_int_eq(gc_kube_config_load(path, "dev-file", &c, err, sizeof(err)), 0);
        {
                char want[256];

                snprintf(want, sizeof(want), "%s/k.pem", tmpdir);
                ck_assert_str_eq(c.client_key_file, want);
        }
        gc_kube_config_release(&c);
        /* Bounded: a file over 1 MiB is refused before parsing. */
        {
                FILE *f = fopen(path, "w");

                for (int i = 0; i < 70000; i++)
                        fputs("# padding line\n", f);
                fclose(f);
        }
        ck_assert_int_eq(gc_kube_config_load(path, NULL, &c, err, sizeof(err)), -E2BIG);
        snprintf(path, sizeof(path), "%s/absent", tmpdir);
        ck_assert_int_eq(gc_kube_config_load(path, NULL, &c, err, sizeof(err)), -ENOENT);
        ck_assert_ptr_nonnull(strstr(err, "absent"));
        rm_tmpdir();
}
END_TEST

START_TEST(test_incluster)
{
        gc_kube_config c;
        char err[256] = "", want[256];

        snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_kube.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
        write_file(tmpdir, "token", "  tok-1\n");
        write_file(tmpdir, "ca.crt", CERT_PEM);
        write_file(tmpdir, "namespace", "gpu-cost\n");
        unsetenv("KUBERNETES_SERVICE_HOST");
        setenv("KUBERNETES_SERVICE_PORT", "443", 1);
        ck_assert_int_eq(gc_kube_config_incluster_dir(tmpdir, &c, err, sizeof(err)), -ENOENT);
        ck_assert_ptr_nonnull(strstr(err, "KUBERNETES_SERVICE_HOST"));
        setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
        ck_assert_int_eq(gc_kube_config_incluster_dir(tmpdir, &c, err, sizeof(err)), 0);
        ck_assert_str_eq(c.server, "https://[fd00::1]:443"); /* IPv6 in brackets */
        ck_assert_str_eq(c.namespace, "gpu-cost");
        snprintf(want, sizeof(want), "%s/token", tmpdir);
        ck_assert_str_eq(c.token_file, want);
        snprintf(want, sizeof(want), "%s/ca.crt", tmpdir);
        ck_assert_str_eq(c.ca_file, want);
        gc_kube_config_release(&c);
        setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
        setenv("KUBERNETES_SERVICE_PORT", "99999", 1);
        ck_assert_int_eq(gc_kube_config_incluster_dir(tmpdir, &c, err, sizeof(err)), -EINVAL);
        setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
        ck_assert_int_eq(gc_kube_config_incluster_dir(tmpdir, &c, err, sizeof(err)), 0);
        ck_assert_str_eq(c.server, "https://10.0.0.1:6443");
        gc_kube_config_release(&c);
        rm_tmpdir();
}
END_TEST

/* ---- the client: construction and tokens (no request leaves the machine) -----------------------
 */

START_TEST(test_client_tokens)
{
        gc_kube_config cfg;
        gc_kube *k;
        char err[256] = "", path[256];

        snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_kube.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
        snprintf(path, sizeof(path), "%s/token", tmpdir);
        memset(&cfg, 0, sizeof(cfg));
        cfg.server = "https://127.0.0.1:1/";
        cfg.token_file = path;

        /* Missing, empty, and header-injecting tokens are refused. */
        ck_assert_ptr_null(gc_kube_new(&cfg, err, sizeof(err)));
        ck_assert_ptr_nonnull(strstr(err, "token file"));
        write_file(tmpdir, "token", " \n\t\n");
        ck_assert_ptr_null(gc_kube_new(&cfg, err, sizeof(err)));
        ck_assert_ptr_nonnull(strstr(err, "empty"));
        write_file(tmpdir, "token", "abc\r\nX-Evil: 1\n");
        ck_assert_ptr_null(gc_kube_new(&cfg, err, sizeof(err)));
        ck_assert_ptr_nonnull(strstr(err, "not a bearer token"));

        /* Trimmed. */
        write_file(tmpdir, "token", "\n  tok-1 \n");
        k = gc_kube_new(&cfg, err, sizeof(err));
        ck_assert_msg(k != NULL, "%s", err);
        ck_assert_str_eq(k->token, "tok-1");
        ck_assert_str_eq(k->server, "https://127.0.0.1:1");
        k = gc_kube_free(k);
        ck_assert_ptr_null(k);
        ck_assert_ptr_null(gc_kube_free(NULL));

        /* A fixed token is the fallback while the file cannot be read. */
        unlink(path);
        cfg.token = "fixed";
        k = gc_kube_new(&cfg, err, sizeof(err));
        ck_assert_ptr_nonnull(k);
        ck_assert_str_eq(k->token, "fixed");
        gc_kube_free(k);
        rm_tmpdir();
}
END_TEST

START_TEST(test_client_config_errors)
{
        gc_kube_config cfg;
        char err[256] = "";

        memset(&cfg, 0, sizeof(cfg));
        ck_assert_ptr_null(gc_kube_new(&cfg, err, sizeof(err)));
        ck_assert_str_eq(err, "server: missing");
        cfg.server = "ftp://h";
        ck_assert_ptr_null(gc_kube_new(&cfg, err, sizeof(err)));
        ck_assert_ptr_nonnull(strstr(err, "server"));
        cfg.server = "https://h";
        cfg.client_cert_data = CERT_PEM;
        ck_assert_ptr_null(gc_kube_new(&cfg, err, sizeof(err)));
        ck_assert_ptr_nonnull(strstr(err, "client-key"));
}
END_TEST

START_TEST(test_client_unreachable)
{
        gc_kube_config cfg;
        gc_kube *k;
        gc_buf body;
        long status = -1;
        char err[256] = "";

        memset(&cfg, 0, sizeof(cfg));
        cfg.server = "https://127.0.0.1:1";
        cfg.token = "secret-token";
        k = gc_kube_new(&cfg, err, sizeof(err));
        ck_assert_ptr_nonnull(k);
        ck_assert_int_eq(
            gc_kube_request(k, "GET", "/api", NULL, NULL, 0, &status, &body, err, sizeof(err)),
            -ECONNREFUSED);
        ck_assert_int_eq(status, -1); /* untouched on failure */
        ck_assert_ptr_null(strstr(err, "secret-token"));
        gc_buf_free(&body);
        ck_assert_int_eq(
            gc_kube_request(k, "GET", "api", NULL, NULL, 0, &status, &body, err, sizeof(err)),
            -EINVAL);
        gc_buf_free(&body);
        gc_kube_free(k);
}
END_TEST

/* ConfigMap input is checked before anything is sent (the server here does not exist). */
START_TEST(test_configmap_validation)
{
        gc_kube_config cfg;
        gc_kube *k;
        char err[256] = "";
        char *big = malloc((1u << 20) + 1);
        gc_kube_kv bad_key[] = {{"report.md", "x"}, {"bad/key", "y"}};
        gc_kube_kv dup[] = {{"a", "x"}, {"a", "y"}};
        gc_kube_kv huge[] = {{"a", NULL}, {"b", "c"}};

        memset(&cfg, 0, sizeof(cfg));
        cfg.server = "https://127.0.0.1:1";
        k = gc_kube_new(&cfg, err, sizeof(err));
        ck_assert_ptr_nonnull(k);
        ck_assert_int_eq(
            gc_kube_configmap_put(k, "ns", "cm", NULL, 0, bad_key, 2, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "bad/key"));
        ck_assert_int_eq(gc_kube_configmap_put(k, "ns", "cm", NULL, 0, dup, 2, err, sizeof(err)),
                         -EINVAL);
        ck_assert_int_eq(
            gc_kube_configmap_put(k, "Bad_NS", "cm", NULL, 0, NULL, 0, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "namespace"));
        ck_assert_int_eq(
            gc_kube_configmap_put(k, "ns", "cm/../x", NULL, 0, NULL, 0, err, sizeof(err)), -EINVAL);
        /* Keys count too: 1 MiB - 1 of value plus a 1-byte key fits, plus a second does not. */
        memset(big, 'x', (1u << 20) - 1);
        big[(1u << 20) - 1] = '\0';
        huge[0].value = big;
        ck_assert_int_eq(gc_kube_configmap_put(k, "ns", "cm", NULL, 0, huge, 2, err, sizeof(err)),
                         -E2BIG);
        /* Within the limit it gets as far as the (absent) server. */
        ck_assert_int_eq(gc_kube_configmap_put(k, "ns", "cm", NULL, 0, huge, 1, err, sizeof(err)),
                         -ECONNREFUSED);
        free(big);
        gc_kube_free(k);
}
END_TEST

/* ---- lease decisions ------------------------------------------------------------------------- */

START_TEST(test_lease_decide)
{
        gc_kube_lease l;

        memset(&l, 0, sizeof(l));
        l.identity = "me";
        l.duration_s = 15;
        /* No holder (released): take it at once. */
        ck_assert_int_eq(gc__lease_decide(&l, "", "1", "", 0, 100), GC__LEASE_ACQUIRE);
        /* Someone else's lease, first seen now: wait a full duration by our clock, whatever its
         * renewTime says (another machine's clock). */
        ck_assert_int_eq(gc__lease_decide(&l, "other", "2", "2020-01-01T00:00:00.000000Z", 15, 100),
                         GC__LEASE_WAIT);
        ck_assert_int_eq(l.observed_at_mono, 100);
        ck_assert_str_eq(l.holder, "other");
        ck_assert_int_eq(gc__lease_decide(&l, "other", "2", "2020-01-01T00:00:00.000000Z", 15, 115),
                         GC__LEASE_WAIT);
        /* It renews at 110: the clock starts again. */
        ck_assert_int_eq(gc__lease_decide(&l, "other", "3", "2020-01-01T00:00:10.000000Z", 15, 110),
                         GC__LEASE_WAIT);
        ck_assert_int_eq(l.observed_at_mono, 110);
        ck_assert_int_eq(gc__lease_decide(&l, "other", "3", "2020-01-01T00:00:10.000000Z", 15, 124),
                         GC__LEASE_WAIT);
        /* Unchanged for 15 s by a clock counting whole seconds: seen at 110.0-110.99, so only
         * 126 is surely 15 s later. */
        ck_assert_int_eq(gc__lease_decide(&l, "other", "3", "2020-01-01T00:00:10.000000Z", 15, 125),
                         GC__LEASE_WAIT);
        ck_assert_int_eq(gc__lease_decide(&l, "other", "3", "2020-01-01T00:00:10.000000Z", 15, 126),
                         GC__LEASE_ACQUIRE);
        /* The record's own duration counts. */
        ck_assert_int_eq(gc__lease_decide(&l, "third", "4", "x", 60, 200), GC__LEASE_WAIT);
        ck_assert_int_eq(gc__lease_decide(&l, "third", "4", "x", 60, 260), GC__LEASE_WAIT);
        ck_assert_int_eq(gc__lease_decide(&l, "third", "4", "x", 60, 261), GC__LEASE_ACQUIRE);
        /* Ours: renew. */
        ck_assert_int_eq(gc__lease_decide(&l, "me", "5", "y", 15, 300), GC__LEASE_RENEW);
        /* A new resourceVersion alone (same holder and renewTime) is a change too. */
        ck_assert_int_eq(gc__lease_decide(&l, "other", "6", "z", 15, 400), GC__LEASE_WAIT);
        ck_assert_int_eq(gc__lease_decide(&l, "other", "7", "z", 15, 414), GC__LEASE_WAIT);
        ck_assert_int_eq(gc__lease_decide(&l, "other", "7", "z", 15, 429), GC__LEASE_WAIT);
        ck_assert_int_eq(gc__lease_decide(&l, "other", "7", "z", 15, 430), GC__LEASE_ACQUIRE);
}
END_TEST

START_TEST(test_lease_args)
{
        gc_kube_config cfg;
        gc_kube *k;
        gc_kube_lease l;
        char err[256] = "";
        int leader = -1;

        memset(&cfg, 0, sizeof(cfg));
        cfg.server = "https://127.0.0.1:1";
        k = gc_kube_new(&cfg, err, sizeof(err));
        memset(&l, 0, sizeof(l));
        l.ns = "gpu-cost";
        l.name = "gpu-cost-controller";
        ck_assert_int_eq(gc_kube_lease_tick(k, &l, 1, &leader, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "identity"));
        l.identity = "pod-a";
        /* Unreachable, never leader: not leader, and the transport error is returned. */
        ck_assert_int_eq(gc_kube_lease_tick(k, &l, 1, &leader, err, sizeof(err)), -ECONNREFUSED);
        ck_assert_int_eq(leader, 0);
        /* Was leader, renewed at 100 with 15 s: stays leader up to 112, not at 113. */
        l.leader = 1;
        l.renewed_at_mono = 100;
        ck_assert_int_lt(gc_kube_lease_tick(k, &l, 112, &leader, err, sizeof(err)), 0);
        ck_assert_int_eq(leader, 1);
        ck_assert_int_lt(gc_kube_lease_tick(k, &l, 113, &leader, err, sizeof(err)), 0);
        ck_assert_int_eq(leader, 0);
        gc_kube_free(k);
}
END_TEST

/* ---- the watch loop against a scripted HTTP server on loopback ----------------------------------
 */

/*
 * A real kube-apiserver (tests/e2e/kube) cannot be made to send a broken line, an in-stream 500
 * or a 503 on cue; this server answers each request with the next step of a script, so every
 * transition of the list/watch loop is checked in order.
 */
typedef struct step {
        const char *path; /* the request's path and query must start with this */
        long status;
        const char *body;
        long hold; /* send the headers, then nothing, and keep the connection open */
} step;

#define FAKE_MAX 32

typedef struct fake {
        int lfd, port;
        const step *script;
        size_t n, next;
        char req[FAKE_MAX][512];
        char auth[FAKE_MAX][64];
        int held[FAKE_MAX];
        size_t n_held;
        volatile int stop;
        pthread_t th;
} fake;

static void fake_serve_one(fake *f, int c)
{
        char buf[16384], head[256];
        size_t len = 0;
        const step *s;
        char *line_end, *a;

        while (len < sizeof(buf) - 1) {
                ssize_t n = read(c, buf + len, sizeof(buf) - 1 - len);

                if (n <= 0)
                        break;
                len += (size_t)n;
                buf[len] = '\0';
                if (strstr(buf, "\r\n\r\n"))
                        break;
        }
        buf[len] = '\0';
        if (f->next >= FAKE_MAX) {
                close(c);
                return;
        }
        line_end = strstr(buf, "\r\n");
        if (line_end)
                *line_end = '\0';
        gc_strlcpy(f->req[f->next], buf, sizeof(f->req[0]));
        a = line_end ? strstr(line_end + 2, "Authorization: Bearer ") : NULL;
        if (a) {
                char *e = strstr(a, "\r\n");

                if (e)
                        *e = '\0';
                gc_strlcpy(f->auth[f->next], a + 22, sizeof(f->auth[0]));
        }
        s = f->next < f->n ? &f->script[f->next] : NULL;
        f->next++;
        snprintf(head, sizeof(head),
                 "HTTP/1.1 %ld X\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
                 s ? s->status : 500L);
        if (write(c, head, strlen(head)) < 0 ||
            (s && s->body && !s->hold && write(c, s->body, strlen(s->body)) < 0)) {
                close(c);
                return;
        }
        if (s && s->hold && f->n_held < FAKE_MAX) {
                f->held[f->n_held++] = c;
                return;
        }
        close(c);
}

static void *fake_thread(void *arg)
{
        fake *f = arg;

        while (!f->stop) {
                struct pollfd p = {f->lfd, POLLIN, 0};

                if (poll(&p, 1, 50) == 1) {
                        int c = accept(f->lfd, NULL, NULL);

                        if (c >= 0)
                                fake_serve_one(f, c);
                }
        }
        return NULL;
}

static void fake_start(fake *f, const step *script, size_t n)
{
        struct sockaddr_in sa;
        socklen_t sl = sizeof(sa);

        memset(f, 0, sizeof(*f));
        f->script = script;
        f->n = n;
        f->lfd = socket(AF_INET, SOCK_STREAM, 0);
        ck_assert_int_ge(f->lfd, 0);
        memset(&sa, 0, sizeof(sa));
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        ck_assert_int_eq(listen(f->lfd, 8), 0);
        ck_assert_int_eq(getsockname(f->lfd, (struct sockaddr *)&sa, &sl), 0);
        f->port = ntohs(sa.sin_port);
        ck_assert_int_eq(pthread_create(&f->th, NULL, fake_thread, f), 0);
}

static void fake_stop(fake *f)
{
        f->stop = 1;
        pthread_join(f->th, NULL);
        for (size_t i = 0; i < f->n_held; i++)
                close(f->held[i]);
        close(f->lfd);
}

typedef struct trace {
        char log[4096]; /* what the callbacks saw, in order */
        int list_begin, list_end;
} trace;

static void trace_add(trace *t, const char *s)
{
        size_t n = strlen(t->log);

        snprintf(t->log + n, sizeof(t->log) - n, "%s%s", n ? " " : "", s);
}

static int tr_list_begin(void *ud)
{
        trace *t = ud;

        t->list_begin++;
        trace_add(t, "[");
        return 0;
}

static int tr_list_end(void *ud)
{
        trace *t = ud;

        t->list_end++;
        trace_add(t, "]");
        return 0;
}

static int tr_object(void *ud, gc_kube_event ev, const cJSON *obj)
{
        static const char *const evs[] = {"+", "~", "-"};
        char s[64];

        snprintf(s, sizeof(s), "%s%s", evs[ev], gc_kube_meta(obj, "name"));
        trace_add(ud, s);
        return 0;
}

static void tr_note(void *ud, gc_kube_note note, long status, const char *msg)
{
        static const char *const notes[] = {"LISTED", "START", "END",       "EXPIRED",
                                            "IDLE",   "RETRY", "FORBIDDEN", "BAD"};
        char s[64];

        (void)msg;
        if (note == GC_KUBE_NOTE_WATCH_START) {
                trace_add(ud, "START");
                return;
        }
        snprintf(s, sizeof(s), "%s:%ld", notes[note], status);
        trace_add(ud, s);
}

#define LIST_PATH  "GET /api/v1/pods?limit=500"
#define WATCH_PATH "GET /api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=60"

static const step script[] = {
    /* a body that is no list (a proxy's error page, say): back off, LIST again */
    {LIST_PATH " ", 200, "<html>bad gateway</html>", 0},
    /* 0 */
    {LIST_PATH " ", 200,
     "{\"metadata\":{\"resourceVersion\":\"10\"},\"items\":[{\"metadata\":{\"name\":\"a\","
     "\"resourceVersion\":\"5\"}}]}",
     0},
    /* 1: an event, a bookmark, then a line that is not JSON: LIST again */
    {WATCH_PATH "&resourceVersion=10 ", 200,
     "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"11\"}}}\n"
     "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}\n"
     "not json\n",
     0},
    /* 2 */
    {LIST_PATH " ", 200,
     "{\"metadata\":{\"resourceVersion\":\"20\"},\"items\":[{\"metadata\":{\"name\":\"a\"}},"
     "{\"metadata\":{\"name\":\"b\"}}]}",
     0},
    /* 3: an in-stream error that is not 410: back off, watch again from the same place */
    {WATCH_PATH "&resourceVersion=20 ", 200,
     "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500,\"message\":\"etcd\"}}\n",
     0},
    /* 4 */
    {WATCH_PATH "&resourceVersion=20 ", 503, "{\"kind\":\"Status\",\"message\":\"busy\"}", 0},
    /* 5: nothing at all: cut after idle_seconds, resumed from the same place */
    {WATCH_PATH "&resourceVersion=20 ", 200, NULL, 1},
    /* 6: an event (whose RV is not used: 410 follows), then 410 in the stream */
    {WATCH_PATH "&resourceVersion=20 ", 200,
     "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"21\"}}}"
     "\r\n{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}}"
     "\n",
     0},
    /* 7-9: the first page, a stale continue token, the LIST again from the top */
    {LIST_PATH " ", 200,
     "{\"metadata\":{\"resourceVersion\":\"30\",\"continue\":\"c/1\"},\"items\":[{\"metadata\":{"
     "\"name\":\"a\"}}]}",
     0},
    {LIST_PATH "&continue=c%2F1 ", 410, "{\"kind\":\"Status\",\"code\":410}", 0},
    {LIST_PATH " ", 200,
     "{\"metadata\":{\"resourceVersion\":\"31\"},\"items\":[{\"metadata\":{\"name\":\"a\"}},"
     "{\"metadata\":{\"name\":\"c\"}}]}",
     0},
    /* 10-11: 401 (the token file is read again, the request retried once), then 403: stop */
    {WATCH_PATH "&resourceVersion=31 ", 401, "{\"kind\":\"Status\",\"code\":401}", 0},
    {WATCH_PATH "&resourceVersion=31 ", 403,
     "{\"kind\":\"Status\",\"code\":403,\"message\":\"pods is forbidden\"}", 0},
};

START_TEST(test_watch_state_machine)
{
        static const gc_kube_watch_ops ops = {
            .list_begin = tr_list_begin,
            .object = tr_object,
            .list_end = tr_list_end,
            .note = tr_note,
        };
        gc_kube_watch_opts o;
        gc_kube_config cfg;
        gc_kube *k;
        fake f;
        trace t;
        char server[64], path[256], err[256];
        volatile sig_atomic_t stop = 0;
        size_t n = sizeof(script) / sizeof(script[0]);

        snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_kube.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
        write_file(tmpdir, "token", "old-token\n");
        snprintf(path, sizeof(path), "%s/token", tmpdir);
        fake_start(&f, script, n);
        snprintf(server, sizeof(server), "http://127.0.0.1:%d", f.port);
        memset(&cfg, 0, sizeof(cfg));
        cfg.server = server;
        cfg.token_file = path;
        k = gc_kube_new(&cfg, err, sizeof(err));
        ck_assert_msg(k != NULL, "%s", err);
        /* Rotated, but within 60 s nothing reads it again until a 401 says so. */
        write_file(tmpdir, "token", "new-token\n");

        memset(&o, 0, sizeof(o));
        o.path = "/api/v1/pods";
        o.timeout_seconds = 60;
        o.idle_seconds = 1;
        o.backoff_min_s = 0.01;
        o.backoff_max_s = 0.02;
        o.forbidden_grace_s = -1; /* the first 403 is final here; e2e covers the grace */
        memset(&t, 0, sizeof(t));
        ck_assert_int_eq(gc_kube_watch_run(k, &o, &ops, &t, &stop), -EACCES);
        fake_stop(&f);

        ck_assert_uint_eq(f.next, n);
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(strncmp(f.req[i], script[i].path, strlen(script[i].path)) == 0,
                              "request %zu: got \"%s\", want \"%s...\"", i, f.req[i],
                              script[i].path);
        for (size_t i = 0; i < 12; i++)
                ck_assert_str_eq(f.auth[i], "old-token");
        ck_assert_str_eq(f.auth[12], "new-token");
        ck_assert_str_eq(t.log, "[ RETRY:200 [ +a ] LISTED:200 START +b BAD:200 "
                                "[ +a +b ] LISTED:200 START RETRY:500 "
                                "START RETRY:503 START IDLE:0 START ~a EXPIRED:410 "
                                "[ +a EXPIRED:410 [ +a +c ] LISTED:200 START FORBIDDEN:403");
        ck_assert_int_eq(t.list_begin, 5);
        ck_assert_int_eq(t.list_end, 3);
        gc_kube_free(k);
        rm_tmpdir();
}
END_TEST

static void tr_progress(void *ud, const char *rv)
{
        char s[80];

        snprintf(s, sizeof(s), "@%s", rv);
        trace_add(ud, s);
}

/*
 * A restart's resume point: the LIST still runs (objects as they are now) but reports no
 * progress, the first watch starts from resume_rv and replays what happened since (a whole
 * lifetime: b added and deleted), a bookmark moves the resume point, and a 410 there falls
 * back to a LIST whose own resourceVersion then counts.
 */
static const step resume_script[] = {
    {LIST_PATH " ", 200,
     "{\"metadata\":{\"resourceVersion\":\"50\"},\"items\":[{\"metadata\":{\"name\":\"a\","
     "\"resourceVersion\":\"40\"}}]}",
     0},
    {WATCH_PATH "&resourceVersion=7 ", 200,
     "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"8\"}}}\n"
     "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}}}\n"
     "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"10\"}}}"
     "\n",
     0},
    {WATCH_PATH "&resourceVersion=10 ", 200,
     "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}}\n",
     0},
    {LIST_PATH " ", 200,
     "{\"metadata\":{\"resourceVersion\":\"60\"},\"items\":[{\"metadata\":{\"name\":\"a\"}}]}", 0},
    /* a 410 naming the oldest version the server holds (kube-apiserver after a restart): the
       LIST, then a replay from there, with no progress for that LIST */
    {WATCH_PATH "&resourceVersion=60 ", 200,
     "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"message\":"
     "\"too old resource version: 60 (61)\"}}\n",
     0},
    {LIST_PATH " ", 200,
     "{\"metadata\":{\"resourceVersion\":\"70\"},\"items\":[{\"metadata\":{\"name\":\"a\"}}]}", 0},
    {WATCH_PATH "&resourceVersion=61 ", 200,
     "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"c\",\"resourceVersion\":\"65\"}}}"
     "\n"
     "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"message\":"
     "\"too old resource version: 65 (6x)\"}}\n",
     0},
    /* a message whose version is not digits: an ordinary relist */
    {LIST_PATH " ", 200, "{\"metadata\":{\"resourceVersion\":\"80\"},\"items\":[]}", 0},
    {WATCH_PATH "&resourceVersion=80 ", 403, "{\"kind\":\"Status\",\"code\":403}", 0},
};

START_TEST(test_watch_resume)
{
        static const gc_kube_watch_ops ops = {
            .list_begin = tr_list_begin,
            .object = tr_object,
            .list_end = tr_list_end,
            .note = tr_note,
            .progress = tr_progress,
        };
        gc_kube_watch_opts o;
        gc_kube_config cfg;
        gc_kube *k;
        fake f;
        trace t;
        char server[64], err[256], big[300];
        volatile sig_atomic_t stop = 0;
        size_t n = sizeof(resume_script) / sizeof(resume_script[0]);

        fake_start(&f, resume_script, n);
        snprintf(server, sizeof(server), "http://127.0.0.1:%d", f.port);
        memset(&cfg, 0, sizeof(cfg));
        cfg.server = server;
        cfg.token = "t";
        k = gc_kube_new(&cfg, err, sizeof(err));
        ck_assert_msg(k != NULL, "%s", err);
        memset(&o, 0, sizeof(o));
        o.path = "/api/v1/pods";
        o.timeout_seconds = 60;
        o.backoff_min_s = 0.01;
        o.backoff_max_s = 0.02;
        o.forbidden_grace_s = -1;
        /* A resume point longer than any resourceVersion is refused before any request. */
        memset(big, '7', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        o.resume_rv = big;
        memset(&t, 0, sizeof(t));
        ck_assert_int_eq(gc_kube_watch_run(k, &o, &ops, &t, &stop), -EINVAL);
        ck_assert_uint_eq(f.next, 0);
        o.resume_rv = "7";
        ck_assert_int_eq(gc_kube_watch_run(k, &o, &ops, &t, &stop), -EACCES);
        fake_stop(&f);
        ck_assert_uint_eq(f.next, n);
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(
                    strncmp(f.req[i], resume_script[i].path, strlen(resume_script[i].path)) == 0,
                    "request %zu: got \"%s\", want \"%s...\"", i, f.req[i], resume_script[i].path);
        ck_assert_str_eq(t.log, "[ +a ] LISTED:200 START +b @9 -b END:200 START EXPIRED:410 "
                                "[ +a ] LISTED:200 @60 START EXPIRED:410 [ +a ] LISTED:200 "
                                "START -c EXPIRED:410 [ ] LISTED:200 @80 START FORBIDDEN:403");
        gc_kube_free(k);
}
END_TEST

typedef struct retries {
        int n;
        double delay[16];
        long status;
} retries;

static void count_retry(void *ud, gc_kube_note note, long status, const char *msg)
{
        retries *r = ud;
        const char *p = strstr(msg, "retrying in ");

        if (note != GC_KUBE_NOTE_RETRY || r->n >= 16)
                return;
        r->status = status;
        r->delay[r->n] = p ? strtod(p + 12, NULL) : -1;
        /* Published last: another thread may wait for the count (retries_wait). */
        __atomic_store_n(&r->n, r->n + 1, __ATOMIC_RELEASE);
}

/* Waits until n retries were noted (by a watch on another thread); 0 after 30 s. */
static int retries_wait(retries *r, int n)
{
        for (int i = 0; i < 3000; i++) {
                if (__atomic_load_n(&r->n, __ATOMIC_ACQUIRE) >= n)
                        return 1;
                usleep(10000);
        }
        return 0;
}

static int no_object(void *ud, gc_kube_event ev, const cJSON *obj)
{
        (void)ud;
        (void)ev;
        (void)obj;
        return 0;
}

typedef struct bg_watch {
        gc_kube *k;
        gc_kube_watch_opts o;
        gc_kube_watch_ops ops;
        retries r;
        volatile sig_atomic_t stop;
        int result;
} bg_watch;

static void *bg_watch_run(void *arg)
{
        bg_watch *b = arg;

        b->result = gc_kube_watch_run(b->k, &b->o, &b->ops, &b->r, &b->stop);
        return NULL;
}

/*
 * 401 is not 403: credentials the API server does not accept (-EKEYREJECTED) are not a grant
 * RBAC lacks (-EACCES), so the caller can say which to fix. A ConfigMap read, a Lease read and a
 * watch each see both.
 */
static const step refusal_script[] = {
    {"GET /api/v1/namespaces/ns/configmaps/cm ", 401,
     "{\"kind\":\"Status\",\"code\":401,"
     "\"message\":\"Unauthorized\"}",
     0},
    {"GET /api/v1/namespaces/ns/configmaps/cm ", 403,
     "{\"kind\":\"Status\",\"code\":403,"
     "\"message\":\"configmaps \\\"cm\\\" is forbidden\"}",
     0},
    {"GET /apis/coordination.k8s.io/v1/namespaces/ns/leases/l ", 401, "{}", 0},
    {"GET /apis/coordination.k8s.io/v1/namespaces/ns/leases/l ", 403, "{}", 0},
    {LIST_PATH " ", 401, "{\"kind\":\"Status\",\"code\":401}", 0},
    {LIST_PATH " ", 403, "{\"kind\":\"Status\",\"code\":403}", 0},
};

START_TEST(test_refusals_401_and_403)
{
        gc_kube_watch_ops ops = {.object = no_object};
        gc_kube_watch_opts o;
        gc_kube_config cfg;
        gc_kube_lease l;
        gc_kube *k;
        cJSON *obj = NULL;
        fake f;
        char server[64], err[256];
        volatile sig_atomic_t stop = 0;
        int leader = 0;

        fake_start(&f, refusal_script, sizeof(refusal_script) / sizeof(refusal_script[0]));
        snprintf(server, sizeof(server), "http://127.0.0.1:%d", f.port);
        memset(&cfg, 0, sizeof(cfg));
        cfg.server = server;
        cfg.token = "t";
        k = gc_kube_new(&cfg, err, sizeof(err));
        ck_assert_msg(k != NULL, "%s", err);
        ck_assert_int_eq(gc_kube_configmap_get(k, "ns", "cm", &obj, err, sizeof(err)),
                         -EKEYREJECTED);
        ck_assert_msg(strstr(err, "HTTP 401: Unauthorized") != NULL, "%s", err);
        ck_assert_int_eq(gc_kube_configmap_get(k, "ns", "cm", &obj, err, sizeof(err)), -EACCES);
        ck_assert_msg(strstr(err, "HTTP 403") != NULL, "%s", err);
        ck_assert_ptr_null(obj);
        memset(&l, 0, sizeof(l));
        l.ns = "ns";
        l.name = "l";
        l.identity = "me";
        ck_assert_int_eq(gc_kube_lease_tick(k, &l, 1, &leader, err, sizeof(err)), -EKEYREJECTED);
        ck_assert_int_eq(gc_kube_lease_tick(k, &l, 2, &leader, err, sizeof(err)), -EACCES);
        ck_assert_int_eq(leader, 0);
        memset(&o, 0, sizeof(o));
        o.path = "/api/v1/pods";
        o.forbidden_grace_s = -1;
        ck_assert_int_eq(gc_kube_watch_run(k, &o, &ops, NULL, &stop), -EKEYREJECTED);
        ck_assert_int_eq(gc_kube_watch_run(k, &o, &ops, NULL, &stop), -EACCES);
        fake_stop(&f);
        ck_assert_uint_eq(f.next, sizeof(refusal_script) / sizeof(refusal_script[0]));
        for (size_t i = 0; i < f.next; i++)
                ck_assert_msg(
                    strncmp(f.req[i], refusal_script[i].path, strlen(refusal_script[i].path)) == 0,
                    "request %zu: got \"%s\", want \"%s...\"", i, f.req[i], refusal_script[i].path);
        gc_kube_free(k);
}
END_TEST

/* Nobody listens: transport errors back off, doubling with jitter up to the cap; a stop ends a
 * backoff early. */
START_TEST(test_watch_backoff)
{
        gc_kube_config cfg;
        bg_watch b;
        pthread_t th;
        char err[256];
        struct timespec until;

        memset(&cfg, 0, sizeof(cfg));
        cfg.server = "https://127.0.0.1:1";
        memset(&b, 0, sizeof(b));
        b.k = gc_kube_new(&cfg, err, sizeof(err));
        b.o.path = "/api/v1/nodes";
        b.o.backoff_min_s = 0.1;
        b.o.backoff_max_s = 0.4;
        b.ops.object = no_object;
        b.ops.note = count_retry;
        ck_assert_int_eq(pthread_create(&th, NULL, bg_watch_run, &b), 0);
        ck_assert_msg(retries_wait(&b.r, 6), "%d retries", b.r.n);
        b.stop = 1;
        pthread_join(th, NULL);
        ck_assert_int_eq(b.result, 0);
        ck_assert_int_eq(b.r.status, 0); /* transport errors carry no HTTP status */
        /* 0.1, 0.2, 0.4, 0.4, ... each jittered to [50%, 100%]. */
        ck_assert_int_ge(b.r.n, 6);
        ck_assert_msg(b.r.delay[0] >= 0.05 - 1e-9 && b.r.delay[0] <= 0.1 + 1e-9, "%f",
                      b.r.delay[0]);
        ck_assert(b.r.delay[1] >= 0.1 - 1e-9 && b.r.delay[1] <= 0.2 + 1e-9);
        for (int i = 2; i < b.r.n; i++)
                ck_assert_msg(b.r.delay[i] >= 0.2 - 1e-9 && b.r.delay[i] <= 0.4 + 1e-9, "%d: %f", i,
                              b.r.delay[i]);
        gc_kube_free(b.k);

        /* In a backoff of 60 s (30 to 60 with the jitter), a stop is seen at once: the thread
         * ends well before the backoff would have. */
        memset(&b, 0, sizeof(b));
        b.k = gc_kube_new(&cfg, err, sizeof(err));
        b.o.path = "/api/v1/nodes";
        b.o.backoff_min_s = 60;
        b.o.backoff_max_s = 60;
        b.ops.object = no_object;
        b.ops.note = count_retry;
        ck_assert_int_eq(pthread_create(&th, NULL, bg_watch_run, &b), 0);
        ck_assert_msg(retries_wait(&b.r, 1), "no retry");
        b.stop = 1;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 15;
        ck_assert_msg(pthread_timedjoin_np(th, NULL, &until) == 0,
                      "the stop waited for the backoff");
        ck_assert_int_eq(b.result, 0);
        ck_assert_int_eq(b.r.n, 1);
        ck_assert_msg(b.r.delay[0] >= 30 - 1e-9, "%f", b.r.delay[0]);
        gc_kube_free(b.k);
}
END_TEST

/*
 * Failures grow the backoff; a watch that then delivers events and breaks (here an in-stream
 * ERROR, which like a reset leaves no HTTP status behind) worked: the next wait starts from
 * the minimum again instead of where the failures left it.
 */
static const step backoff_script[] = {
    {LIST_PATH " ", 200, "{\"metadata\":{\"resourceVersion\":\"10\"},\"items\":[]}", 0},
    {WATCH_PATH "&resourceVersion=10 ", 503, "{\"kind\":\"Status\",\"message\":\"busy\"}", 0},
    {WATCH_PATH "&resourceVersion=10 ", 503, "{\"kind\":\"Status\",\"message\":\"busy\"}", 0},
    {WATCH_PATH "&resourceVersion=10 ", 503, "{\"kind\":\"Status\",\"message\":\"busy\"}", 0},
    {WATCH_PATH "&resourceVersion=10 ", 200,
     "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"11\"}}}\n"
     "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500,\"message\":\"etcd\"}}\n",
     0},
    {WATCH_PATH "&resourceVersion=11 ", 403, "{\"kind\":\"Status\",\"code\":403}", 0},
};

START_TEST(test_watch_backoff_reset_after_a_working_stream)
{
        gc_kube_watch_ops ops = {.object = no_object, .note = count_retry};
        gc_kube_watch_opts o;
        gc_kube_config cfg;
        gc_kube *k;
        fake f;
        retries r;
        char server[64], err[256];
        volatile sig_atomic_t stop = 0;

        fake_start(&f, backoff_script, sizeof(backoff_script) / sizeof(backoff_script[0]));
        snprintf(server, sizeof(server), "http://127.0.0.1:%d", f.port);
        memset(&cfg, 0, sizeof(cfg));
        cfg.server = server;
        k = gc_kube_new(&cfg, err, sizeof(err));
        ck_assert_msg(k != NULL, "%s", err);
        memset(&o, 0, sizeof(o));
        o.path = "/api/v1/pods";
        o.timeout_seconds = 60;
        o.backoff_min_s = 0.1;
        o.backoff_max_s = 0.8;
        o.forbidden_grace_s = -1;
        memset(&r, 0, sizeof(r));
        ck_assert_int_eq(gc_kube_watch_run(k, &o, &ops, &r, &stop), -EACCES);
        fake_stop(&f);
        ck_assert_int_eq(r.n, 4);
        /* 0.1, 0.2, 0.4, each jittered to [50%, 100%], then back to 0.1 after the stream. */
        ck_assert_msg(r.delay[2] >= 0.2 - 1e-9, "%f", r.delay[2]);
        ck_assert_int_eq(r.status, 500);
        ck_assert_msg(r.delay[3] >= 0.05 - 1e-9 && r.delay[3] <= 0.1 + 1e-9,
                      "after a working stream the wait was %f s, not the minimum", r.delay[3]);
        gc_kube_free(k);
}
END_TEST

/*
 * A partition grows the backoff; when the server answers again with 410 (its history moved on
 * meanwhile), the LIST follows at once, not after the grown backoff: the span left unseen is as
 * short as it can be. A second 410 right after that LIST is a loop, and backs off from the
 * minimum.
 */
static const step expired_after_retries_script[] = {
    {LIST_PATH " ", 200, "{\"metadata\":{\"resourceVersion\":\"10\"},\"items\":[]}", 0},
    {WATCH_PATH "&resourceVersion=10 ", 503, "{\"kind\":\"Status\",\"message\":\"busy\"}", 0},
    {WATCH_PATH "&resourceVersion=10 ", 503, "{\"kind\":\"Status\",\"message\":\"busy\"}", 0},
    {WATCH_PATH "&resourceVersion=10 ", 503, "{\"kind\":\"Status\",\"message\":\"busy\"}", 0},
    {WATCH_PATH "&resourceVersion=10 ", 410, "{\"kind\":\"Status\",\"code\":410}", 0},
    {LIST_PATH " ", 200, "{\"metadata\":{\"resourceVersion\":\"20\"},\"items\":[]}", 0},
    {WATCH_PATH "&resourceVersion=20 ", 410, "{\"kind\":\"Status\",\"code\":410}", 0},
    {LIST_PATH " ", 200, "{\"metadata\":{\"resourceVersion\":\"30\"},\"items\":[]}", 0},
    {WATCH_PATH "&resourceVersion=30 ", 403, "{\"kind\":\"Status\",\"code\":403}", 0},
};

START_TEST(test_watch_relists_at_once_when_the_server_answers_410)
{
        gc_kube_watch_ops ops = {.object = no_object, .note = count_retry};
        gc_kube_watch_opts o;
        gc_kube_config cfg;
        gc_kube *k;
        fake f;
        retries r;
        char server[64], err[256];
        volatile sig_atomic_t stop = 0;
        struct timespec t0, t1;
        double waited = 0, took;
        size_t n = sizeof(expired_after_retries_script) / sizeof(expired_after_retries_script[0]);

        fake_start(&f, expired_after_retries_script, n);
        snprintf(server, sizeof(server), "http://127.0.0.1:%d", f.port);
        memset(&cfg, 0, sizeof(cfg));
        cfg.server = server;
        k = gc_kube_new(&cfg, err, sizeof(err));
        ck_assert_msg(k != NULL, "%s", err);
        memset(&o, 0, sizeof(o));
        o.path = "/api/v1/pods";
        o.timeout_seconds = 60;
        o.backoff_min_s = 0.5;
        o.backoff_max_s = 8;
        o.forbidden_grace_s = -1;
        memset(&r, 0, sizeof(r));
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ck_assert_int_eq(gc_kube_watch_run(k, &o, &ops, &r, &stop), -EACCES);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        fake_stop(&f);
        ck_assert_uint_eq(f.next, n);
        ck_assert_int_eq(r.n, 3);
        for (int i = 0; i < r.n; i++)
                waited += r.delay[i];
        took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        /* The 503s' waits (0.5, 1, 2 jittered to [50%, 100%]), then the loop's wait from the
           minimum (0.25 to 0.5 s) after the second 410. A wait before the first LIST, with the
           backoff grown to 4 s, would add 2 s at least: the run took less than that more. */
        ck_assert_msg(took >= waited + 0.25 - 0.01, "took %f s, the retries waited %f s", took,
                      waited);
        ck_assert_msg(took < waited + 0.25 + 2.0, "took %f s, the retries waited %f s", took,
                      waited);
        gc_kube_free(k);
}
END_TEST

/* ---- the write fence: leader election's writes land only within the lease --------------------
 */

static int64_t fence_at_ms;

static int64_t fence_fn(void *arg)
{
        (void)arg;
        return fence_at_ms;
}

static int64_t mono_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const step fence_script[] = {
    {"GET /api/v1/namespaces/ns/configmaps/cm", 404, "{}", 0},
    {"POST /api/v1/namespaces/ns/configmaps", 201, "{}", 1}, /* headers, then nothing */
};

START_TEST(test_write_fence)
{
        gc_kube_kv data = {"k", "v"};
        gc_kube_lease l;
        gc_kube_config cfg;
        gc_kube *k;
        fake f;
        char server[64], err[256];
        int64_t t0;
        int r;

        /* The lease's side: renewed_at + duration - 2 while leader, 0 when not. */
        memset(&l, 0, sizeof(l));
        l.duration_s = 8;
        l.renewed_at_mono = 100;
        ck_assert_int_eq(gc_kube_lease_fence_ms(&l), 0);
        l.leader = 1;
        ck_assert_int_eq(gc_kube_lease_fence_ms(&l), 106000);
        l.duration_s = 0; /* the default, 15 s */
        ck_assert_int_eq(gc_kube_lease_fence_ms(&l), 113000);

        fake_start(&f, fence_script, 2);
        snprintf(server, sizeof(server), "http://127.0.0.1:%d", f.port);
        memset(&cfg, 0, sizeof(cfg));
        cfg.server = server;
        k = gc_kube_new(&cfg, err, sizeof(err));
        ck_assert_msg(k != NULL, "%s", err);
        gc_kube_set_write_fence(k, fence_fn, NULL);

        /* Past the fence: the read goes out, the write never does. */
        fence_at_ms = mono_ms() - 1;
        r = gc_kube_configmap_put(k, "ns", "cm", NULL, 0, &data, 1, err, sizeof(err));
        ck_assert_int_eq(r, -ESTALE);
        ck_assert_msg(strstr(err, "not written") != NULL, "%s", err);
        ck_assert_uint_eq(f.next, 1);
        ck_assert_msg(strncmp(f.req[0], "GET ", 4) == 0, "%s", f.req[0]);

        /* Before it: the write goes out, and a server that never finishes answering is left at
         * the fence, not at the 60 s request limit. */
        f.next = 0;
        fence_at_ms = mono_ms() + 500;
        t0 = mono_ms();
        r = gc_kube_configmap_put(k, "ns", "cm", NULL, 0, &data, 1, err, sizeof(err));
        ck_assert_int_lt(r, 0);
        ck_assert_uint_eq(f.next, 2);
        ck_assert_msg(strncmp(f.req[1], "POST ", 5) == 0, "%s", f.req[1]);
        ck_assert_msg(mono_ms() - t0 < 30000, "the write outlived its fence: %lld ms",
                      (long long)(mono_ms() - t0));

        /* No fence: a write is sent whatever the clock says. */
        gc_kube_set_write_fence(k, NULL, NULL);
        f.next = 0;
        f.script = fence_script;
        f.n = 1; /* the POST answered 500 by the fake: sent, refused by the server */
        r = gc_kube_configmap_put(k, "ns", "cm", NULL, 0, &data, 1, err, sizeof(err));
        ck_assert_int_lt(r, 0);
        ck_assert_uint_eq(f.next, 2);
        k = gc_kube_free(k);
        fake_stop(&f);
}
END_TEST

static Suite *kube_suite(void)
{
        Suite *s = suite_create("kube");
        TCase *t;

        t = tcase_create("lines");
        tcase_add_loop_test(t, test_lines_every_boundary, 0,
                            (int)(sizeof(line_cases) / sizeof(line_cases[0])));
        tcase_add_test(t, test_lines_three_slices);
        tcase_add_test(t, test_lines_drop_report);
        tcase_add_test(t, test_lines_callback_error);
        suite_add_tcase(s, t);

        t = tcase_create("scan");
        tcase_add_test(t, test_scan_every_boundary);
        tcase_add_test(t, test_scan_bytewise_and_caps);
        tcase_add_test(t, test_scan_metadata_cap);
        tcase_add_loop_test(t, test_scan_table, 0,
                            (int)(sizeof(scan_cases) / sizeof(scan_cases[0])));
        suite_add_tcase(s, t);

        t = tcase_create("helpers");
        tcase_add_loop_test(t, test_base64, 0, (int)(sizeof(b64_cases) / sizeof(b64_cases[0])));
        tcase_add_test(t, test_escape);
        tcase_add_test(t, test_meta);
        suite_add_tcase(s, t);

        t = tcase_create("kubeconfig");
        tcase_add_test(t, test_kubeconfig_current_context);
        tcase_add_test(t, test_kubeconfig_contexts);
        tcase_add_loop_test(t, test_kubeconfig_errors, 0,
                            (int)(sizeof(kc_bad) / sizeof(kc_bad[0])));
        tcase_add_test(t, test_kubeconfig_load_file);
        tcase_add_test(t, test_incluster);
        suite_add_tcase(s, t);

        t = tcase_create("client");
        tcase_add_test(t, test_client_tokens);
        tcase_add_test(t, test_client_config_errors);
        tcase_add_test(t, test_client_unreachable);
        tcase_add_test(t, test_configmap_validation);
        suite_add_tcase(s, t);

        t = tcase_create("watch");
        tcase_add_test(t, test_watch_state_machine);
        tcase_add_test(t, test_refusals_401_and_403);
        tcase_add_test(t, test_watch_resume);
        tcase_add_test(t, test_watch_backoff);
        tcase_add_test(t, test_watch_backoff_reset_after_a_working_stream);
        tcase_add_test(t, test_watch_relists_at_once_when_the_server_answers_410);
        tcase_add_test(t, test_write_fence);
        suite_add_tcase(s, t);

        t = tcase_create("lease");
        tcase_add_test(t, test_lease_decide);
        tcase_add_test(t, test_lease_args);
        suite_add_tcase(s, t);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(kube_suite());
        int failed;

        curl_global_init(CURL_GLOBAL_DEFAULT);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        curl_global_cleanup();
        return failed != 0;
}
