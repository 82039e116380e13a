/* test_promtext: the exposition parser on every shape dcgm-exporter writes, chunked anyhow;
 * writers. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "promtext/promtext.h"

/* Every sample as one canonical line, so two parses can be compared as strings. */
typedef struct capture {
        gc_buf out;
        size_t n;
        size_t stop_at; /* 0: never stop */
} capture;

static int on_sample(const gc_prom_sample *s, void *userdata)
{
        capture *c = userdata;

        c->n++;
        gc_buf_printf(&c->out, "%s|", s->name);
        for (size_t i = 0; i < s->n_labels; i++) {
                ck_assert_uint_eq(strlen(s->labels[i].value), s->labels[i].value_len);
                gc_buf_printf(&c->out, "%s%s=%s", i ? "," : "", s->labels[i].name,
                              s->labels[i].value);
        }
        if (isnan(s->value))
                gc_buf_printf(&c->out, "|NaN");
        else
                gc_buf_printf(&c->out, "|%.17g", s->value);
        gc_buf_printf(&c->out, "|%d|%d|%lld|%llu\n", s->missing, s->has_timestamp,
                      (long long)s->timestamp_ms, (unsigned long long)s->line_no);
        if (c->stop_at && c->n == c->stop_at)
                return -ECANCELED;
        return 0;
}

static void cap_init(capture *c)
{
        memset(c, 0, sizeof(*c));
        gc_buf_init(&c->out, 64 << 20);
}

static char *read_fixture(const char *name, size_t *ret_n)
{
        char path[1024];
        gc_buf b;

        snprintf(path, sizeof(path), "%s/tests/fixtures/dcgm/%s", GC_SOURCE_DIR, name);
        ck_assert_int_eq(gc_read_file(path, 16 << 20, &b), 0);
        *ret_n = b.len;
        return gc_buf_steal(&b);
}

/* ---- one line at a time ------------------------------------------------------------------------
 */

static const struct {
        const char *line;
        const char *want; /* canonical capture without the line number, or NULL: an error */
} lines[] = {
    /* the full dcgm-exporter label set */
    {"DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",pci_bus_id=\"00000000:07:00.0\","
     "device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-80GB\",Hostname=\"n1\","
     "DCGM_FI_DRIVER_VERSION=\"535.129.03\",container=\"c\",namespace=\"ns\",pod=\"p\"} 97",
     "DCGM_FI_DEV_GPU_UTIL|gpu=0,UUID=GPU-1,pci_bus_id=00000000:07:00.0,device=nvidia0,"
     "modelName=NVIDIA A100-SXM4-80GB,Hostname=n1,DCGM_FI_DRIVER_VERSION=535.129.03,container=c,"
     "namespace=ns,pod=p|97|0|0|0"},
    /* lower-case names, legacy labels, labels in another order */
    {"dcgm_fi_dev_fb_used{pod_namespace=\"s\",uuid=\"GPU-2\",pod_name=\"x\",hostname=\"h\"} 9000",
     "dcgm_fi_dev_fb_used|pod_namespace=s,uuid=GPU-2,pod_name=x,hostname=h|9000|0|0|0"},
    /* trailing comma, blanks around everything */
    {"  m { a = \"1\" , b=\"2\", } 0.5  ", "m|a=1,b=2|0.5|0|0|0"},
    {"m{a=\"1\",} 1", "m|a=1|1|0|0|0"},
    {"m{} 1", "m||1|0|0|0"},
    {"m{a=\"\"}1", "m|a=|1|0|0|0"},
    /* escapes */
    {"m{a=\"x\\\"y\\\\z\\nw\"} 1", "m|a=x\"y\\z\nw|1|0|0|0"},
    {"m{a=\"}{,=\"} 1", "m|a=}{,=|1|0|0|0"},
    /* values */
    {"m 302.206000", "m||302.20600000000002|0|0|0"},
    {"m NaN", "m||NaN|0|0|0"},
    {"m nan", "m||NaN|0|0|0"},
    {"m +Inf", "m||inf|0|0|0"},
    {"m -Inf", "m||-inf|0|0|0"},
    {"m -0.25", "m||-0.25|0|0|0"},
    {"m 1e3", "m||1000|0|0|0"},
    {"m 1.5E-3", "m||0.0015|0|0|0"},
    {"m .5", "m||0.5|0|0|0"},
    {"m 5.", "m||5|0|0|0"},
    {"m 12345678901234567890", "m||NaN|1|0|0"}, /* at or over 9.2e18: DCGM's blank */
    {"m 9223372036854775794", "m||NaN|1|0|0"},
    {"m 9100000000000000000", "m||9.1e+18|0|0|0"},
    {"m 9.2e18", "m||NaN|1|0|0"},
    /* timestamps, CRLF, exemplar */
    {"m{a=\"b\"} 1 1795166100000", "m|a=b|1|0|1|1795166100000"},
    {"m 1 -5", "m||1|0|1|-5"},
    {"m 1 1795166100000\r", "m||1|0|1|1795166100000"},
    {"m 1\r", "m||1|0|0|0"},
    {"m 1 # {trace_id=\"x\"} 2", "m||1|0|0|0"},
    {"name_with:colon 1", "name_with:colon||1|0|0|0"},
    /* comments and blanks deliver nothing */
    {"# HELP m help text", ""},
    {"# TYPE m gauge", ""},
    {"#", ""},
    {"", ""},
    {"   \t ", ""},
    {"\r", ""},
    /* malformed */
    {"m", NULL},
    {"m{a=\"1\"}", NULL},
    {"m{a=\"1\"", NULL},
    {"m{a=\"1} 1", NULL},
    {"m{a=1} 1", NULL},
    {"m{a} 1", NULL},
    {"m{=\"1\"} 1", NULL},
    {"m{1a=\"1\"} 1", NULL},
    {"m{a=\"1\" b=\"2\"} 1", NULL},
    {"m{a=\"\\q\"} 1", NULL},
    {"m{a=\"1\"}} 1", NULL},
    {"1m 1", NULL},
    {"m 1x", NULL},
    {"m 0x10", NULL},
    {"m 1 2 3", NULL},
    {"m 1 1.5", NULL}, /* a float timestamp is OpenMetrics only */
    {"m 1 99999999999999999999", NULL},
    {"m +", NULL},
    {"m .", NULL},
    {"m infx", NULL},
    {"m{a=\"1\",,} 1", NULL},
    {"{a=\"1\"} 1", NULL},
};

START_TEST(test_lines)
{
        capture c;
        gc_prom_stats st;
        const char *in = lines[_i].line;
        const char *want = lines[_i].want;
        int r;

        cap_init(&c);
        r = gc_prom_parse(in, strlen(in), 0, 0, on_sample, &c, &st);
        ck_assert_int_eq(r, 0);
        ck_assert_uint_eq(st.lines, strlen(in) ? 1 : 0);
        if (!want) {
                ck_assert_msg(st.errors == 1, "'%s' should be refused", in);
                ck_assert_uint_eq(st.first_error_line, 1);
                ck_assert_msg(st.first_error[0] != '\0', "a reason");
                ck_assert_uint_eq(c.n, 0);
        } else {
                ck_assert_msg(st.errors == 0, "'%s': %s", in, st.first_error);
                if (!want[0]) {
                        ck_assert_uint_eq(c.n, 0);
                } else {
                        /* drop the trailing "|<line>\n" */
                        char *bar = strrchr(c.out.data, '|');

                        ck_assert_ptr_nonnull(bar);
                        *bar = '\0';
                        ck_assert_str_eq(c.out.data, want);
                }
        }
        gc_buf_free(&c.out);
}
END_TEST

START_TEST(test_too_many_labels)
{
        gc_buf b;
        capture c;
        gc_prom_stats st;

        gc_buf_init(&b, 1 << 20);
        gc_buf_puts(&b, "m{");
        for (int i = 0; i <= GC_PROM_MAX_LABELS; i++)
                gc_buf_printf(&b, "l%d=\"v\",", i);
        gc_buf_puts(&b, "} 1\nok 2\n");
        cap_init(&c);
        ck_assert_int_eq(gc_prom_parse(b.data, b.len, 0, 0, on_sample, &c, &st), 0);
        ck_assert_uint_eq(st.errors, 1);
        ck_assert_uint_eq(c.n, 1);
        gc_buf_free(&b);
        gc_buf_free(&c.out);
}
END_TEST

/* ---- bodies, chunked
 * ------------------------------------------------------------------------------ */

static void parse_chunked(const char *body, size_t n, size_t max_line, const size_t *cuts,
                          size_t ncuts, capture *c, gc_prom_stats *st)
{
        gc_prom_parser *p = gc_prom_parser_new(max_line, 0, on_sample, c);
        size_t at = 0;

        ck_assert_ptr_nonnull(p);
        for (size_t i = 0; i <= ncuts; i++) {
                size_t to = i < ncuts ? cuts[i] : n;

                ck_assert_int_eq(gc_prom_parser_feed(p, body + at, to - at), 0);
                at = to;
        }
        ck_assert_int_eq(gc_prom_parser_finish(p), 0);
        gc_prom_parser_stats(p, st);
        gc_prom_parser_free(p);
}

START_TEST(test_fixture_a100)
{
        size_t n;
        char *body = read_fixture("a100-k8s.prom", &n);
        capture whole, bytes;
        gc_prom_stats st, st2;
        size_t *cuts = malloc(n * sizeof(*cuts));

        cap_init(&whole);
        ck_assert_int_eq(gc_prom_parse(body, n, 0, 0, on_sample, &whole, &st), 0);
        ck_assert_uint_eq(st.errors, 0);
        ck_assert_uint_eq(whole.n, 25 * 4); /* 25 default counters x 4 GPUs */
        ck_assert_uint_eq(st.lines, 25 * 6);
        ck_assert_ptr_nonnull(strstr(whole.out.data,
                                     "DCGM_FI_DEV_POWER_USAGE|gpu=0,UUID=GPU-604ac76c"
                                     "-d9cf-fef3-62e9-d92044ab6e52,"));
        ck_assert_ptr_nonnull(strstr(whole.out.data, ",namespace=,pod=|"));
        /* one byte at a time */
        for (size_t i = 0; i < n; i++)
                cuts[i] = i + 1;
        cap_init(&bytes);
        parse_chunked(body, n, 0, cuts, n - 1, &bytes, &st2);
        ck_assert_str_eq(bytes.out.data, whole.out.data);
        ck_assert_uint_eq(st2.lines, st.lines);
        ck_assert_uint_eq(st2.bytes, n);
        free(cuts);
        free(body);
        gc_buf_free(&whole.out);
        gc_buf_free(&bytes.out);
}
END_TEST

/* A cut at every byte of a body with every shape: the samples never change. */
START_TEST(test_every_cut)
{
        static const char *names[] = {"h100-mig.prom", "legacy-lowercase.prom",
                                      "federate-exported.prom"};
        for (size_t f = 0; f < sizeof(names) / sizeof(names[0]); f++) {
                size_t n;
                char *body = read_fixture(names[f], &n);
                capture whole;
                gc_prom_stats st;

                cap_init(&whole);
                ck_assert_int_eq(gc_prom_parse(body, n, 0, 0, on_sample, &whole, &st), 0);
                ck_assert_msg(st.errors == 0, "%s: %s", names[f], st.first_error);
                ck_assert_uint_gt(whole.n, 0);
                for (size_t k = 0; k <= n; k++) {
                        capture c;
                        gc_prom_stats s2;

                        cap_init(&c);
                        parse_chunked(body, n, 0, &k, 1, &c, &s2);
                        ck_assert_msg(strcmp(c.out.data, whole.out.data) == 0, "%s cut at %zu",
                                      names[f], k);
                        gc_buf_free(&c.out);
                }
                free(body);
                gc_buf_free(&whole.out);
        }
}
END_TEST

START_TEST(test_fixture_shapes)
{
        size_t n;
        char *body;
        capture c;
        gc_prom_stats st;

        body = read_fixture("h100-mig.prom", &n);
        cap_init(&c);
        ck_assert_int_eq(gc_prom_parse(body, n, 0, 0, on_sample, &c, &st), 0);
        ck_assert_uint_eq(c.n, 10);
        ck_assert_ptr_nonnull(strstr(c.out.data, "GPU_I_PROFILE=1g.10gb,GPU_I_ID=9,"));
        ck_assert_ptr_nonnull(strstr(c.out.data, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE|"));
        ck_assert_ptr_nonnull(strstr(c.out.data, "pod=embed-1|NaN|1|0|0|")); /* the sentinel */
        free(body);
        gc_buf_free(&c.out);

        body = read_fixture("legacy-lowercase.prom", &n);
        cap_init(&c);
        ck_assert_int_eq(gc_prom_parse(body, n, 0, 0, on_sample, &c, &st), 0);
        ck_assert_uint_eq(c.n, 4);
        ck_assert_uint_eq(st.errors, 0);
        ck_assert_ptr_nonnull(strstr(c.out.data, "dcgm_fi_dev_gpu_util|gpu=0,uuid="));
        free(body);
        gc_buf_free(&c.out);

        body = read_fixture("federate-exported.prom", &n);
        cap_init(&c);
        ck_assert_int_eq(gc_prom_parse(body, n, 0, 0, on_sample, &c, &st), 0);
        ck_assert_uint_eq(c.n, 3);
        ck_assert_ptr_nonnull(strstr(c.out.data, "|0.25|0|1|1795166100000|"));
        free(body);
        gc_buf_free(&c.out);
}
END_TEST

START_TEST(test_long_line)
{
        /* A 500-byte line between good ones, with a 100-byte limit, cut anyhow. */
        gc_buf b;
        size_t cuts[3];

        gc_buf_init(&b, 1 << 20);
        gc_buf_puts(&b, "a 1\nlong{l=\"");
        for (int i = 0; i < 500; i++)
                gc_buf_puts(&b, "x");
        gc_buf_puts(&b, "\"} 1\nb 2\nc 3");
        for (size_t k1 = 1; k1 < b.len; k1 += 7) {
                for (size_t k2 = k1; k2 < b.len; k2 += 53) {
                        capture c;
                        gc_prom_stats st;

                        cuts[0] = k1;
                        cuts[1] = k2;
                        cap_init(&c);
                        parse_chunked(b.data, b.len, 100, cuts, 2, &c, &st);
                        ck_assert_uint_eq(c.n, 3);
                        ck_assert_uint_eq(st.errors, 1);
                        ck_assert_uint_eq(st.first_error_line, 2);
                        ck_assert_str_eq(st.first_error, "line longer than the limit");
                        ck_assert_uint_eq(st.lines, 4);
                        ck_assert_str_eq(c.out.data, "a||1|0|0|0|1\nb||2|0|0|0|3\nc||3|0|0|0|4\n");
                        gc_buf_free(&c.out);
                }
        }
        /* An over-long last line without a newline. */
        {
                capture c;
                gc_prom_stats st;
                const char *t = "a 1\nbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb 1";

                cap_init(&c);
                ck_assert_int_eq(gc_prom_parse(t, strlen(t), 20, 0, on_sample, &c, &st), 0);
                ck_assert_uint_eq(c.n, 1);
                ck_assert_uint_eq(st.errors, 1);
                ck_assert_uint_eq(st.first_error_line, 2);
                gc_buf_free(&c.out);
        }
        gc_buf_free(&b);
}
END_TEST

START_TEST(test_garbage)
{
        /* Binary garbage and broken lines between good samples: the good ones still come. */
        static const char body[] = "ok 1\n\x01\x02\xff garbage\n{{{\nm{a=\"\n\"} 2\nok 3\n"
                                   "m{a=\"x\\\"} 4\nok 5\nm{a=\"x\0y\"} 6\n";
        capture c;
        gc_prom_stats st;

        cap_init(&c);
        ck_assert_int_eq(gc_prom_parse(body, sizeof(body) - 1, 0, 0, on_sample, &c, &st), 0);
        ck_assert_uint_eq(c.n, 3);
        ck_assert_uint_eq(st.errors, 6); /* the NUL byte included */
        ck_assert_uint_eq(st.first_error_line, 2);
        ck_assert_str_eq(st.first_error, "metric name expected");
        gc_buf_free(&c.out);
}
END_TEST

START_TEST(test_stop)
{
        static const char body[] = "a 1\nb 2\nc 3\nd 4\n";
        gc_prom_parser *p;
        capture c;
        gc_prom_stats st;

        cap_init(&c);
        c.stop_at = 2;
        p = gc_prom_parser_new(0, 0, on_sample, &c);
        ck_assert_int_eq(gc_prom_parser_feed(p, body, 6), 0);
        ck_assert_int_eq(gc_prom_parser_feed(p, body + 6, sizeof(body) - 7), -ECANCELED);
        ck_assert_int_eq(gc_prom_parser_feed(p, "e 5\n", 4), -ECANCELED);
        ck_assert_int_eq(gc_prom_parser_finish(p), -ECANCELED);
        ck_assert_uint_eq(c.n, 2);
        /* reset: a new body with the same buffers */
        gc_prom_parser_reset(p);
        c.stop_at = 0;
        ck_assert_int_eq(gc_prom_parser_feed(p, "x 1\n", 4), 0);
        gc_prom_parser_stats(p, &st);
        ck_assert_uint_eq(st.samples, 1);
        ck_assert_uint_eq(c.n, 3);
        gc_prom_parser_free(p);
        ck_assert_ptr_null(gc_prom_parser_free(NULL));
        ck_assert_ptr_null(gc_prom_parser_new(0, 0, NULL, NULL));
        gc_buf_free(&c.out);
}
END_TEST

START_TEST(test_openmetrics_eof)
{
        static const char body[] = "# TYPE m gauge\nm{a=\"1\"} 0.5 1795166100.25\nm 1 1795166101\n"
                                   "# EOF\nlate 1\n";
        capture c;
        gc_prom_stats st;

        cap_init(&c);
        ck_assert_int_eq(
            gc_prom_parse(body, sizeof(body) - 1, 0, GC_PROM_OPENMETRICS, on_sample, &c, &st), 0);
        ck_assert_uint_eq(c.n, 2);
        ck_assert_int_eq(st.eof_seen, 1);
        ck_assert_uint_eq(st.errors, 1);
        ck_assert_str_eq(st.first_error, "data after # EOF");
        ck_assert_str_eq(c.out.data, "m|a=1|0.5|0|1|1795166100250|2\nm||1|0|1|1795166101000|3\n");
        gc_buf_free(&c.out);
}
END_TEST

/* ---- numbers ------------------------------------------------------------------------------------
 */

static unsigned long long rng = 88172645463325252ull;

static unsigned long long next_rand(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

/* Which format a body is: the Content-Type on the wire, the "# EOF" terminator in a file. */
START_TEST(test_format_flags)
{
        static const struct {
                const char *ct;
                unsigned want;
        } ct[] = {
            {"application/openmetrics-text", GC_PROM_OPENMETRICS},
            {"application/openmetrics-text; version=1.0.0; charset=utf-8", GC_PROM_OPENMETRICS},
            {"Application/OpenMetrics-Text;version=0.0.1", GC_PROM_OPENMETRICS},
            {" application/openmetrics-text", GC_PROM_OPENMETRICS},
            {"text/plain; version=0.0.4; charset=utf-8", 0},
            {"application/openmetrics-textual", 0},
            {"application/octet-stream", 0},
            {"", 0},
            {NULL, 0},
        };
        static const struct {
                const char *body;
                unsigned want;
        } body[] = {
            {"m 1 1795166100\n# EOF\n", GC_PROM_OPENMETRICS},
            {"m 1 1795166100\n# EOF", GC_PROM_OPENMETRICS},
            {"m 1 1795166100\r\n# EOF\r\n\n  ", GC_PROM_OPENMETRICS},
            {"# EOF\n", GC_PROM_OPENMETRICS},
            {"m 1 1795166100000\n", 0},
            {"m 1\n# EOF\nm 2\n", 0},
            {"m 1 # EOF\n", 0},
            {"", 0},
        };

        for (size_t i = 0; i < sizeof(ct) / sizeof(ct[0]); i++)
                ck_assert_msg(gc_prom_content_type_flags(ct[i].ct) == ct[i].want, "%s",
                              ct[i].ct ? ct[i].ct : "(null)");
        for (size_t i = 0; i < sizeof(body) / sizeof(body[0]); i++)
                ck_assert_msg(gc_prom_body_flags(body[i].body, strlen(body[i].body)) ==
                                  body[i].want,
                              "%s", body[i].body);
        ck_assert_uint_eq(gc_prom_body_flags(NULL, 0), 0);
}
END_TEST

START_TEST(test_value_vs_strtod)
{
        char s[64];

        /* Random decimals of every length the fast path and the slow path take: bit-exact. */
        for (int i = 0; i < 200000; i++) {
                int len = 1 + (int)(next_rand() % 24), dot = (int)(next_rand() % (len + 1));
                size_t n = 0;
                double a, b;

                if (next_rand() % 4 == 0)
                        s[n++] = '-';
                for (int k = 0; k < len; k++) {
                        if (k == dot && k)
                                s[n++] = '.';
                        s[n++] = (char)('0' + next_rand() % 10);
                }
                if (next_rand() % 8 == 0)
                        n += (size_t)snprintf(s + n, sizeof(s) - n, "e%d",
                                              (int)(next_rand() % 40) - 20);
                s[n] = '\0';
                ck_assert_int_eq(gc_prom_parse_value(s, n, &a), 0);
                b = strtod(s, NULL);
                ck_assert_msg(memcmp(&a, &b, sizeof(a)) == 0, "%s: %.17g vs %.17g", s, a, b);
        }
        {
                static const char *bad[] = {"",    "-",  "+",  ".",      "e5",  "1e",  "0x1p3",
                                            "1_0", " 1", "1 ", "nan(1)", "--1", "1..2"};
                double v;

                for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                        ck_assert_msg(gc_prom_parse_value(bad[i], strlen(bad[i]), &v) < 0,
                                      "'%s' should fail", bad[i]);
                ck_assert_int_eq(gc_prom_parse_value("Infinity", 8, &v), 0);
                ck_assert(isinf(v) && v > 0);
                ck_assert_int_eq(gc_prom_parse_value("-inf", 4, &v), 0);
                ck_assert(isinf(v) && v < 0);
                ck_assert_int_eq(gc_prom_parse_value("1e400", 5, &v), 0);
                ck_assert(isinf(v));
        }
}
END_TEST

/* ---- writing ------------------------------------------------------------------------------------
 */

static const struct {
        double v;
        const char *want;
} doubles[] = {
    {0, "0"},
    {1, "1"},
    {-1, "-1"},
    {0.1, "0.1"},
    {302.206, "302.206"},
    {123456, "123456"},
    {1e6, "1e+06"},
    {1234567, "1.234567e+06"},
    {0.0001, "0.0001"},
    {0.00001, "1e-05"},
    {1.0 / 3, "0.3333333333333333"},
    {-2.5e-300, "-2.5e-300"},
    {1.7976931348623157e308, "1.7976931348623157e+308"},
    {5e-324, "5e-324"},
};

START_TEST(test_format_double)
{
        gc_buf b;

        gc_buf_init(&b, 1024);
        for (size_t i = 0; i < sizeof(doubles) / sizeof(doubles[0]); i++) {
                gc_buf_reset(&b);
                ck_assert_int_eq(gc_prom_format_double(&b, doubles[i].v), 0);
                ck_assert_str_eq(b.data, doubles[i].want);
        }
        gc_buf_reset(&b);
        gc_prom_format_double(&b, NAN);
        gc_buf_puts(&b, " ");
        gc_prom_format_double(&b, INFINITY);
        gc_buf_puts(&b, " ");
        gc_prom_format_double(&b, -INFINITY);
        ck_assert_str_eq(b.data, "NaN +Inf -Inf");
        /* Everything written reads back to the same double. */
        for (int i = 0; i < 20000; i++) {
                unsigned long long bits = next_rand();
                double v, back;

                memcpy(&v, &bits, sizeof(v));
                if (!isfinite(v))
                        continue;
                gc_buf_reset(&b);
                ck_assert_int_eq(gc_prom_format_double(&b, v), 0);
                ck_assert_int_eq(gc_prom_parse_value(b.data, b.len, &back), 0);
                ck_assert_msg(memcmp(&v, &back, sizeof(v)) == 0, "%s", b.data);
        }
        gc_buf_free(&b);
}
END_TEST

START_TEST(test_write_roundtrip)
{
        gc_buf b;
        capture c;
        gc_prom_stats st;
        gc_prom_label l[] = {
            {"team", "a\"b\\c\nd", 0}, {"skipped", NULL, 0}, {"model", "NVIDIA H100", 0}};

        gc_buf_init(&b, 4096);
        ck_assert_int_eq(gc_prom_write_header(&b, "gpucost_x", "gauge", "Line\none \\ two"), 0);
        ck_assert_int_eq(gc_prom_write_sample(&b, "gpucost_x", l, 3, 0.5), 0);
        ck_assert_int_eq(gc_prom_write_sample(&b, "gpucost_y", NULL, 0, NAN), 0);
        ck_assert_str_eq(b.data, "# HELP gpucost_x Line\\none \\\\ two\n# TYPE gpucost_x gauge\n"
                                 "gpucost_x{team=\"a\\\"b\\\\c\\nd\",model=\"NVIDIA H100\"} 0.5\n"
                                 "gpucost_y NaN\n");
        cap_init(&c);
        ck_assert_int_eq(gc_prom_parse(b.data, b.len, 0, 0, on_sample, &c, &st), 0);
        ck_assert_uint_eq(st.errors, 0);
        ck_assert_str_eq(c.out.data, "gpucost_x|team=a\"b\\c\nd,model=NVIDIA H100|0.5|0|0|0|3\n"
                                     "gpucost_y||NaN|0|0|0|4\n");
        /* the limit holds */
        {
                gc_buf small;

                gc_buf_init(&small, 8);
                ck_assert_int_eq(gc_prom_escape_label_value(&small, "0123456789"), -E2BIG);
                gc_buf_free(&small);
        }
        gc_buf_free(&b);
        gc_buf_free(&c.out);
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("promtext");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 120);
        tcase_add_loop_test(tc, test_lines, 0, sizeof(lines) / sizeof(lines[0]));
        tcase_add_test(tc, test_too_many_labels);
        tcase_add_test(tc, test_fixture_a100);
        tcase_add_test(tc, test_every_cut);
        tcase_add_test(tc, test_fixture_shapes);
        tcase_add_test(tc, test_long_line);
        tcase_add_test(tc, test_garbage);
        tcase_add_test(tc, test_stop);
        tcase_add_test(tc, test_openmetrics_eof);
        tcase_add_test(tc, test_format_flags);
        tcase_add_test(tc, test_value_vs_strtod);
        tcase_add_test(tc, test_format_double);
        tcase_add_test(tc, test_write_roundtrip);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
