/* fuzz_deliver: any bytes as a report's JSON: refused, or every message made of it keeps its
 * format's rules: the email's lines CRLF, ASCII and within 78 octets, its boundary only on the
 * delimiter lines; the HTML with no markup from the input; the chat payloads valid JSON within
 * their receivers' limits. */
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deliver/deliver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_mime(const gc_buf *m)
{
        const char *p = m->data, *bnd = strstr(p, "boundary=\"");
        char boundary[64];
        size_t n, count = 0;

        for (size_t i = 0; i < m->len; i++)
                if ((unsigned char)p[i] >= 0x80 || p[i] == '\0')
                        __builtin_trap();
        while (*p) {
                const char *e = strstr(p, "\r\n");

                if (!e || (size_t)(e - p) > GC_DELIVER_LINE_SOFT ||
                    memchr(p, '\n', (size_t)(e - p)))
                        __builtin_trap();
                p = e + 2;
        }
        if (!bnd)
                __builtin_trap();
        bnd += 10;
        n = strcspn(bnd, "\"");
        if (n == 0 || n >= sizeof(boundary))
                __builtin_trap();
        memcpy(boundary, bnd, n);
        boundary[n] = '\0';
        for (p = strstr(bnd + n, boundary); p; p = strstr(p + 1, boundary)) {
                if (p[-1] != '-' || p[-2] != '-' || p[-3] != '\n')
                        __builtin_trap();
                count++;
        }
        if (count != 3)
                __builtin_trap();
}

static void check_json(const gc_buf *b, size_t max, int slack)
{
        cJSON *j;

        if (b->len > max)
                __builtin_trap();
        j = cJSON_ParseWithLength(b->data, b->len);
        if (!j)
                __builtin_trap();
        if (slack) {
                const cJSON *blocks = cJSON_GetObjectItem(j, "blocks"), *it;

                if (cJSON_GetArraySize(blocks) > GC_DELIVER_SLACK_BLOCKS)
                        __builtin_trap();
                cJSON_ArrayForEach(it, blocks)
                {
                        const cJSON *t = cJSON_GetObjectItem(it, "text");
                        const cJSON *s = cJSON_IsObject(t) ? cJSON_GetObjectItem(t, "text") : NULL;

                        if (cJSON_IsString(s) && strlen(s->valuestring) > GC_DELIVER_SLACK_TEXT)
                                __builtin_trap();
                        if (cJSON_GetArraySize(cJSON_GetObjectItem(it, "fields")) >
                            GC_DELIVER_SLACK_FIELDS)
                                __builtin_trap();
                }
        }
        cJSON_Delete(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const tags[] = {"<script", "<img", "<iframe", "<a href=\"javascript"};
        gc_deliver_view v = {"https://gpu-cost.example.com/", 0};
        gc_deliver_report *r = calloc(1, sizeof(*r));
        gc_buf subj, text, html, mime, chat;
        char err[256];

        if (!r)
                return 0;
        if (gc_deliver_report_parse((const char *)data, size, r, err, sizeof(err)) < 0) {
                free(r);
                return 0;
        }
        gc_buf_init(&subj, 1 << 16);
        gc_buf_init(&text, 1 << 22);
        gc_buf_init(&html, 1 << 22);
        gc_buf_init(&mime, 1 << 24);
        gc_buf_init(&chat, 1 << 22);
        if (gc_deliver_subject(r, &subj) || gc_deliver_text(r, &v, &text) ||
            gc_deliver_html(r, &v, &html))
                __builtin_trap();
        for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
                if (strstr(html.data, tags[i]))
                        __builtin_trap();
        gc_deliver_mail m = {"gpu-cost@example.com",
                             "gpu-cost \xc3\xa9",
                             "lead@example.com",
                             subj.data,
                             text.data,
                             html.data,
                             1795000000,
                             "fuzz"};
        /* Every text read was made valid UTF-8: the message is always built. */
        if (gc_deliver_mime(&m, &mime, err, sizeof(err)) != 0)
                __builtin_trap();
        check_mime(&mime);
        if (gc_deliver_slack(r, &v, &chat) != 0)
                __builtin_trap();
        check_json(&chat, (size_t)40 << 10, 1);
        gc_buf_reset(&chat);
        if (gc_deliver_teams(r, &v, &chat) != 0)
                __builtin_trap();
        check_json(&chat, GC_DELIVER_TEAMS_MAX, 0);
        gc_buf_reset(&chat);
        if (gc_deliver_json(r, &v, &chat) != 0)
                __builtin_trap();
        check_json(&chat, GC_DELIVER_JSON_MAX, 0);
        gc_buf_free(&subj);
        gc_buf_free(&text);
        gc_buf_free(&html);
        gc_buf_free(&mime);
        gc_buf_free(&chat);
        free(r);
        return 0;
}
