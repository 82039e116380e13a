/* test_deliver: a report's JSON read for delivery; the email's MIME (headers, encoded names, line
 * lengths, boundary); the chat payloads within their receivers' limits; HMAC-SHA256 (RFC 4231). */
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deliver/deliver.h"

/* A weekly report as pkg/report writes it, cut to what delivery reads, with a non-ASCII team. */
static const char report_json[] =
    "{\"kind\":\"weekly\",\"title\":\"GPU spend, week 2026-W47\",\"cluster\":\"prod-eu\","
    "\"team\":null,\"currency\":\"USD\",\"period\":{\"start\":\"2026-11-16T00:00:00Z\","
    "\"end\":\"2026-11-23T00:00:00Z\",\"iso_week\":\"2026-W47\",\"month\":\"2026-11\","
    "\"partial\":false},\"previous\":{\"has_data\":true,\"cost\":1000},\"change\":{\"cost\":"
    "234.5,\"percent\":23.45},\"forecast\":null,\"summary\":{\"groups\":[{\"keys\":{\"team\":"
    "\"Forschung-\xc3\x9c"
    "bersetzung\",\"project\":\"llm\"},\"gpu_hours\":10,\"cost\":1000},"
    "{\"keys\":{\"team\":\"vision\",\"project\":\"det<ect>\"},\"gpu_hours\":5,\"cost\":234.5}],"
    "\"idle\":{\"cost\":50.25},\"total\":{\"gpu_hours\":15,\"cost\":1234.5,\"pods\":7}},"
    "\"by_team\":[{\"team\":\"Forschung-\xc3\x9c"
    "bersetzung\",\"gpu_hours\":10,\"cost\":1000,"
    "\"share\":0.81},{\"team\":\"vision\",\"gpu_hours\":5,\"cost\":234.5,\"share\":0.19}],"
    "\"by_day\":[],\"unattributed\":{\"cost\":0},\"budgets\":[{\"scope\":\"team\",\"name\":"
    "\"vision\",\"period\":\"weekly\",\"amount\":200,\"spent\":234.5,\"share\":1.1725,"
    "\"forecast\":null,\"state\":\"over\"}],\"savings\":{\"findings\":[{\"kind\":\"idle_gpu\","
    "\"monthly_savings\":99.5,\"change\":{\"summary\":\"free 1 idle GPU\"}}]}}";

static gc_deliver_report *parsed(void)
{
        static gc_deliver_report r;
        char err[256] = "";

        ck_assert_msg(
            gc_deliver_report_parse(report_json, strlen(report_json), &r, err, sizeof(err)) == 0,
            "%s", err);
        return &r;
}

START_TEST(test_parse_report)
{
        gc_deliver_report *r = parsed();

        ck_assert_str_eq(r->kind, "weekly");
        ck_assert_str_eq(r->period_id, "2026-W47");
        ck_assert_double_eq_tol(r->cost, 1234.5, 1e-9);
        ck_assert_uint_eq(r->pods, 7);
        ck_assert_int_eq(r->has_prev, 1);
        ck_assert_double_eq_tol(r->change_pct, 23.45, 1e-9);
        ck_assert_uint_eq(r->n_teams, 2);
        ck_assert_uint_eq(r->n_projects, 2);
        ck_assert_str_eq(r->projects[1].name, "vision / det<ect>");
        ck_assert_uint_eq(r->n_budgets, 1);
        ck_assert_uint_eq(r->n_savings, 1);
        ck_assert_double_eq_tol(r->idle_cost, 50.25, 1e-9);
}
END_TEST

START_TEST(test_parse_refuses_with_the_member)
{
        static const struct {
                const char *json, *want;
        } cases[] = {
            {"[]", "not a JSON object"},
            {"{\"kind\":\"weekly\"}", "title"},
            {"{\"title\":\"t\",\"period\":{\"start\":\"x\",\"end\":\"2026-11-23T00:00:00Z\"}}",
             "start"},
            {"{\"title\":\"t\",\"period\":{\"start\":\"2026-11-23T00:00:00Z\",\"end\":"
             "\"2026-11-16T00:00:00Z\"}}",
             "end is not after"},
            {"{\"title\":\"t\",\"period\":{\"start\":\"2026-11-16T00:00:00Z\",\"end\":"
             "\"2026-11-23T00:00:00Z\"},\"summary\":{\"total\":{\"cost\":\"1\"}}}",
             "\"cost\""},
            {"{\"title\":5}", "\"title\" is not a string"},
            {"not json", "not JSON"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                gc_deliver_report r;
                char err[256] = "";

                ck_assert_int_lt(gc_deliver_report_parse(cases[i].json, strlen(cases[i].json), &r,
                                                         err, sizeof(err)),
                                 0);
                ck_assert_msg(strstr(err, cases[i].want), "case %zu: %s", i, err);
        }
}
END_TEST

/* The lines of a CRLF message: each at most max octets, and no bare LF. */
static void check_lines(const char *msg, size_t max)
{
        const char *p = msg;

        while (*p) {
                const char *e = strstr(p, "\r\n");

                ck_assert_ptr_nonnull(e);
                ck_assert_msg((size_t)(e - p) <= max, "a line of %zu octets: %.80s",
                              (size_t)(e - p), p);
                ck_assert_ptr_null(memchr(p, '\n', (size_t)(e - p)));
                p = e + 2;
        }
}

static char *mime_of(const gc_deliver_report *r, gc_buf *out)
{
        gc_buf subj, text, html;
        char err[256] = "";
        gc_deliver_view v = {"https://gpu-cost.example.com/", 0};

        gc_buf_init(&subj, 4096);
        gc_buf_init(&text, 1 << 20);
        gc_buf_init(&html, 1 << 20);
        ck_assert_int_eq(gc_deliver_subject(r, &subj), 0);
        ck_assert_int_eq(gc_deliver_text(r, &v, &text), 0);
        ck_assert_int_eq(gc_deliver_html(r, &v, &html), 0);
        gc_deliver_mail m = {"gpu-cost@example.com",
                             "GPU-Kosten \xc3\xbc"
                             "ber \"alles\"",
                             "lead@example.com",
                             subj.data,
                             text.data,
                             html.data,
                             1795000000,
                             "fixed-id"};
        gc_buf_init(out, 4 << 20);
        ck_assert_msg(gc_deliver_mime(&m, out, err, sizeof(err)) == 0, "%s", err);
        gc_buf_free(&subj);
        gc_buf_free(&text);
        gc_buf_free(&html);
        return out->data;
}

START_TEST(test_mime_headers_and_lines)
{
        gc_buf out;
        char *msg = mime_of(parsed(), &out), *body, *bnd, boundary[80];
        size_t n;

        ck_assert_ptr_nonnull(strstr(msg, "From: =?UTF-8?B?"));
        ck_assert_ptr_nonnull(strstr(msg, "<gpu-cost@example.com>\r\n"));
        ck_assert_ptr_nonnull(strstr(msg, "To: <lead@example.com>\r\n"));
        ck_assert_ptr_nonnull(strstr(msg, "Date: Wed, 18 Nov 2026 11:06:40 +0000\r\n"));
        ck_assert_ptr_nonnull(strstr(msg, "Message-ID: <fixed-id@example.com>\r\n"));
        ck_assert_ptr_nonnull(strstr(msg, "MIME-Version: 1.0\r\n"));
        ck_assert_ptr_nonnull(strstr(msg, "Content-Type: text/plain; charset=UTF-8"));
        ck_assert_ptr_nonnull(strstr(msg, "Content-Type: text/html; charset=UTF-8"));
        /* The subject's en dash makes it non-ASCII: encoded-words. */
        ck_assert_ptr_nonnull(strstr(msg, "Subject: =?UTF-8?B?"));
        /* Every line of the whole message within 78 octets (bodies are quoted-printable, headers
         * folded), so well within RFC 5322's 998. */
        check_lines(msg, GC_DELIVER_LINE_SOFT);
        bnd = strstr(msg, "boundary=\"");
        ck_assert_ptr_nonnull(bnd);
        bnd += 10;
        n = strcspn(bnd, "\"");
        ck_assert_uint_lt(n, sizeof(boundary) - 1);
        memcpy(boundary, bnd, n);
        boundary[n] = '\0';
        body = strstr(msg, "\r\n\r\n");
        ck_assert_ptr_nonnull(body);
        /* The boundary appears only as delimiter lines: 2 parts and the close. */
        n = 0;
        for (char *p = strstr(body, boundary); p; p = strstr(p + 1, boundary)) {
                ck_assert(p[-1] == '-' && p[-2] == '-' && p[-3] == '\n');
                n++;
        }
        ck_assert_uint_eq(n, 3);
        gc_buf_free(&out);
}
END_TEST

/* Decodes the B encoded-words of a header value back to text. */
static void b64_decode_words(const char *h, char *out, size_t outlen)
{
        static const char tab[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        size_t o = 0;

        for (const char *p = strstr(h, "=?UTF-8?B?"); p; p = strstr(p, "=?UTF-8?B?")) {
                unsigned v = 0;
                int bits = 0;

                for (p += 10; *p && *p != '?'; p++) {
                        const char *c = strchr(tab, *p);

                        if (*p == '=' || !c)
                                continue;
                        v = (v << 6) | (unsigned)(c - tab);
                        bits += 6;
                        if (bits >= 8) {
                                bits -= 8;
                                ck_assert_uint_lt(o + 1, outlen);
                                out[o++] = (char)((v >> bits) & 0xff);
                        }
                }
        }
        out[o] = '\0';
}

START_TEST(test_header_encoding_keeps_characters_whole)
{
        /* 40 two-byte characters: an encoded-word may not split one (RFC 2047 section 5). */
        char s[200] = "Team ", dec[400];
        size_t at = 5;
        gc_buf b;

        for (int i = 0; i < 40; i++, at += 2)
                memcpy(s + at, "\xc3\xa9", 3);
        gc_buf_init(&b, 4096);
        ck_assert_int_eq(gc_deliver_header_encode(&b, s, 9), 0);
        for (const char *p = strstr(b.data, "=?UTF-8?B?"); p; p = strstr(p + 1, "=?UTF-8?B?")) {
                size_t n = strstr(p, "?=") - p + 2;

                ck_assert_uint_le(n, 75);
        }
        gc_buf_puts(&b, "\r\n");
        check_lines(b.data, GC_DELIVER_LINE_SOFT);
        gc_buf_truncate(&b, b.len - 2);
        b64_decode_words(b.data, dec, sizeof(dec));
        ck_assert_str_eq(dec, s);
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_deliver_header_encode(&b, "plain ascii", 9), 0);
        ck_assert_str_eq(b.data, "plain ascii");
        gc_buf_free(&b);
}
END_TEST

START_TEST(test_qp_lines_and_round_trip)
{
        char in[3000];
        gc_buf b;
        size_t n = 0;

        /* A long line with '=' signs, non-ASCII, a trailing blank and a leading dot. */
        for (int i = 0; i < 300; i++)
                n += (size_t)snprintf(in + n, sizeof(in) - n, "a=\xc3\xbc ");
        n += (size_t)snprintf(in + n, sizeof(in) - n, "\n.dot line \n");
        gc_buf_init(&b, 1 << 16);
        ck_assert_int_eq(gc_deliver_qp(&b, in, n), 0);
        check_lines(b.data, 76);
        ck_assert_ptr_null(strstr(b.data, "\r\n."));
        ck_assert_ptr_null(strstr(b.data, " \r\n"));
        /* Decoded, it is the input (with CRLF line ends). */
        char *out = calloc(1, b.len + 1);
        size_t o = 0;
        for (size_t i = 0; i < b.len; i++) {
                if (b.data[i] == '=' && b.data[i + 1] == '\r') {
                        i += 2;
                } else if (b.data[i] == '=') {
                        unsigned v;
                        ck_assert_int_eq(sscanf(b.data + i + 1, "%2X", &v), 1);
                        out[o++] = (char)v;
                        i += 2;
                } else if (b.data[i] == '\r') {
                        continue;
                } else {
                        out[o++] = b.data[i];
                }
        }
        ck_assert_uint_eq(o, n);
        ck_assert_mem_eq(out, in, n);
        free(out);
        gc_buf_free(&b);
}
END_TEST

START_TEST(test_mime_refuses_bad_input)
{
        gc_buf out;
        char err[256];
        gc_deliver_mail m = {
            "gpu-cost@example.com", NULL, "lead@example.com", "s", "t", "h", 0, NULL};
        static const char *const bad_addr[] = {"",      "no-at",           "a@",    "@b",
                                               "a b@c", "a@b\r\nBcc: x@y", "<a@b>", "a@b@c"};

        gc_buf_init(&out, 1 << 20);
        for (size_t i = 0; i < sizeof(bad_addr) / sizeof(bad_addr[0]); i++) {
                m.to = bad_addr[i];
                ck_assert_int_eq(gc_deliver_mime(&m, &out, err, sizeof(err)), -EINVAL);
                ck_assert_ptr_nonnull(strstr(err, "recipient"));
        }
        m.to = "lead@example.com";
        m.subject = "bad \xff utf-8";
        ck_assert_int_eq(gc_deliver_mime(&m, &out, err, sizeof(err)), -EINVAL);
        m.subject = "s";
        ck_assert_int_eq(gc_deliver_mime(&m, &out, err, sizeof(err)), 0);
        ck_assert_ptr_nonnull(strstr(out.data, "Message-ID: <"));
        gc_buf_free(&out);
}
END_TEST

/* A report of many teams with long names: the chat payloads still fit. */
static gc_deliver_report *big_report(void)
{
        gc_deliver_report *r = calloc(1, sizeof(*r));

        *r = *parsed();
        r->n_teams = r->n_projects = GC_DELIVER_MAX_ROWS;
        r->more_teams = 950;
        for (size_t i = 0; i < GC_DELIVER_MAX_ROWS; i++) {
                memset(r->teams[i].name, 'x', GC_DELIVER_MAX_TEXT - 1);
                r->teams[i].name[GC_DELIVER_MAX_TEXT - 1] = '\0';
                memcpy(r->teams[i].name, "<&>", 3);
                r->teams[i].cost = 1000.0 - (double)i;
                r->teams[i].share = 0.01;
                r->projects[i] = r->teams[i];
        }
        return r;
}

START_TEST(test_slack_within_limits)
{
        gc_deliver_report *r = big_report();
        gc_deliver_view v = {"https://gpu-cost.example.com/", GC_DELIVER_MAX_ROWS};
        gc_buf b;
        cJSON *j, *blocks, *it;

        gc_buf_init(&b, 1 << 20);
        ck_assert_int_eq(gc_deliver_slack(r, &v, &b), 0);
        j = cJSON_Parse(b.data);
        ck_assert_ptr_nonnull(j);
        blocks = cJSON_GetObjectItem(j, "blocks");
        ck_assert_int_le(cJSON_GetArraySize(blocks), GC_DELIVER_SLACK_BLOCKS);
        int saw_more = 0;
        cJSON_ArrayForEach(it, blocks)
        {
                cJSON *t = cJSON_GetObjectItem(it, "text"), *f = cJSON_GetObjectItem(it, "fields");

                if (cJSON_IsObject(t)) {
                        const char *s = cJSON_GetObjectItem(t, "text")->valuestring;

                        ck_assert_uint_le(strlen(s), GC_DELIVER_SLACK_TEXT);
                        saw_more |= strstr(s, " more") != NULL;
                        ck_assert_ptr_null(strstr(s, "<&>")); /* escaped */
                }
                if (f) {
                        ck_assert_int_le(cJSON_GetArraySize(f), GC_DELIVER_SLACK_FIELDS);
                }
        }
        ck_assert(saw_more);
        cJSON_Delete(j);
        gc_buf_free(&b);
        free(r);
}
END_TEST

START_TEST(test_teams_and_json_within_limits)
{
        gc_deliver_report *r = big_report();
        gc_deliver_view v = {"https://gpu-cost.example.com/", GC_DELIVER_MAX_ROWS};
        gc_buf b;
        cJSON *j;

        gc_buf_init(&b, 1 << 20);
        ck_assert_int_eq(gc_deliver_teams(r, &v, &b), 0);
        ck_assert_uint_le(b.len, GC_DELIVER_TEAMS_MAX);
        ck_assert_ptr_nonnull(strstr(b.data, " more"));
        j = cJSON_Parse(b.data);
        ck_assert_ptr_nonnull(j);
        ck_assert_str_eq(cJSON_GetObjectItem(j, "type")->valuestring, "message");
        cJSON_Delete(j);
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_deliver_json(r, &v, &b), 0);
        ck_assert_uint_le(b.len, GC_DELIVER_JSON_MAX);
        j = cJSON_Parse(b.data);
        ck_assert_ptr_nonnull(j);
        ck_assert_int_eq(cJSON_GetObjectItem(j, "teams_more")->valueint, 950);
        cJSON_Delete(j);
        gc_buf_free(&b);
        free(r);
}
END_TEST

START_TEST(test_html_escapes_and_inlines)
{
        gc_buf b;
        gc_deliver_view v = {"https://x.example/?a=1&b=\"2\"", 0};

        gc_buf_init(&b, 1 << 20);
        ck_assert_int_eq(gc_deliver_html(parsed(), &v, &b), 0);
        ck_assert_ptr_nonnull(strstr(b.data, "det&lt;ect&gt;"));
        ck_assert_ptr_nonnull(strstr(b.data, "a=1&amp;b=&quot;2&quot;"));
        ck_assert_ptr_null(strstr(b.data, "<img"));
        ck_assert_ptr_null(strstr(b.data, "<style"));
        ck_assert_ptr_null(strstr(b.data, "<script"));
        ck_assert_ptr_nonnull(strstr(b.data, "max-width:640px"));
        ck_assert_ptr_nonnull(strstr(b.data, "$1,234.50"));
        ck_assert_ptr_nonnull(strstr(b.data, "+23.4%"));
        gc_buf_free(&b);
}
END_TEST

/* RFC 4231 test cases 1, 2 and 6 (a key longer than the block). */
START_TEST(test_hmac_rfc4231)
{
        char hex[GC_DELIVER_HMAC_HEX];
        unsigned char key1[20], key6[131];

        memset(key1, 0x0b, sizeof(key1));
        ck_assert_int_eq(gc_deliver_hmac_sha256_hex(key1, sizeof(key1), "Hi There", 8, hex), 0);
        ck_assert_str_eq(hex, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
        ck_assert_int_eq(
            gc_deliver_hmac_sha256_hex("Jefe", 4, "what do ya want for nothing?", 28, hex), 0);
        ck_assert_str_eq(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
        memset(key6, 0xaa, sizeof(key6));
        ck_assert_int_eq(gc_deliver_hmac_sha256_hex(
                             key6, sizeof(key6),
                             "Test Using Larger Than Block-Size Key - Hash Key First", 54, hex),
                         0);
        ck_assert_str_eq(hex, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}
END_TEST

START_TEST(test_chat_kind_and_origin)
{
        gc_deliver_chat k;
        char o[128];

        ck_assert_int_eq(gc_deliver_chat_guess("https://hooks.slack.com/services/T/B/X"),
                         GC_DELIVER_SLACK);
        ck_assert_int_eq(gc_deliver_chat_guess("https://prod-1.westeurope.logic.azure.com:443/w"),
                         GC_DELIVER_TEAMS);
        ck_assert_int_eq(gc_deliver_chat_guess("https://evilhooks.slack.com.example/x"),
                         GC_DELIVER_JSON);
        ck_assert_int_eq(gc_deliver_chat_parse("teams", &k), 0);
        ck_assert_int_eq(k, GC_DELIVER_TEAMS);
        ck_assert_int_eq(gc_deliver_chat_parse("discord", &k), -EINVAL);
        gc_deliver_url_origin("https://u:p@hooks.slack.com/services/T/B/secret", o, sizeof(o));
        ck_assert_str_eq(o, "https://hooks.slack.com");
}
END_TEST

int main(void)
{
        Suite *s = suite_create("deliver");
        TCase *tc = tcase_create("deliver");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_parse_report);
        tcase_add_test(tc, test_parse_refuses_with_the_member);
        tcase_add_test(tc, test_mime_headers_and_lines);
        tcase_add_test(tc, test_header_encoding_keeps_characters_whole);
        tcase_add_test(tc, test_qp_lines_and_round_trip);
        tcase_add_test(tc, test_mime_refuses_bad_input);
        tcase_add_test(tc, test_slack_within_limits);
        tcase_add_test(tc, test_teams_and_json_within_limits);
        tcase_add_test(tc, test_html_escapes_and_inlines);
        tcase_add_test(tc, test_hmac_rfc4231);
        tcase_add_test(tc, test_chat_kind_and_origin);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
