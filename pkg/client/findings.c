/* client findings: the advisor's answer (/api/v1/recommendations) as an aligned text table. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "client_int.h"

/* One finding's subject: what to change, named as a reader finds it. */
static void gc_client__subject(const cJSON *f, char *out, size_t n)
{
        const cJSON *subj = cJSON_GetObjectItemCaseSensitive(f, "subject");
        const cJSON *src = cJSON_IsObject(subj) ? subj : f;
        const cJSON *ns = cJSON_GetObjectItemCaseSensitive(src, "namespace");
        const cJSON *pod = cJSON_GetObjectItemCaseSensitive(src, "pod");
        const cJSON *ctl = cJSON_GetObjectItemCaseSensitive(src, "controller");
        const cJSON *node = cJSON_GetObjectItemCaseSensitive(src, "node");
        const cJSON *model = cJSON_GetObjectItemCaseSensitive(src, "model");
        const cJSON *ct = cJSON_GetObjectItemCaseSensitive(src, "capacity_type");

        if (cJSON_IsString(ns) && cJSON_IsString(ctl))
                snprintf(out, n, "%s/%s", ns->valuestring, ctl->valuestring);
        else if (cJSON_IsString(ns) && cJSON_IsString(pod))
                snprintf(out, n, "%s/%s", ns->valuestring, pod->valuestring);
        else if (cJSON_IsString(node))
                snprintf(out, n, "node %s", node->valuestring);
        else if (cJSON_IsString(ns))
                snprintf(out, n, "namespace %s", ns->valuestring);
        else if (cJSON_IsString(model) && cJSON_IsString(ct))
                snprintf(out, n, "%s %s", model->valuestring, ct->valuestring);
        else if (cJSON_IsString(model))
                snprintf(out, n, "%s", model->valuestring);
        else if (cJSON_IsString(subj))
                snprintf(out, n, "%s", subj->valuestring);
        else
                snprintf(out, n, "cluster");
}

/* A finding's string member: at the top, in its "subject", or in its "change". */
static const char *gc_client__str_or(const cJSON *o, const char *name, const char *def)
{
        static const char *const where[] = {"subject", "change"};
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

        for (size_t i = 0; i < 2 && !cJSON_IsString(v); i++)
                v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, where[i]),
                                                     name);
        return cJSON_IsString(v) ? v->valuestring : def;
}

static double gc_client__saving(const cJSON *f)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(f, "monthly_savings");

        return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : 0.0;
}

static int gc_client__findings(const cJSON *doc, const cJSON *findings, gc_buf *out)
{
        const cJSON *cur = cJSON_GetObjectItemCaseSensitive(doc, "currency");
        const char *currency = cJSON_IsString(cur) ? cur->valuestring : "USD";
        const cJSON *f;

        gc_buf_printf(out, "%-15s %-16s %-40s %14s  %s\n", "KIND", "TEAM", "SUBJECT",
                      "SAVING/MONTH", "CHANGE");
        cJSON_ArrayForEach(f, findings)
        {
                char subject[256];

                if (out->err)
                        break;
                gc_client__subject(f, subject, sizeof(subject));
                gc_buf_printf(out, "%-15s %-16s %-40s %10.2f %-3s  %s\n",
                              gc_client__str_or(f, "kind", "?"), gc_client__str_or(f, "team", "-"),
                              subject, gc_client__saving(f), currency,
                              gc_client__str_or(f, "summary", ""));
        }
        if (!findings->child)
                gc_buf_puts(out, "(no findings)\n");
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doc, "notes"))
        {
                if (out->err)
                        break;
                if (cJSON_IsString(f))
                        gc_buf_printf(out, "note: %s\n", f->valuestring);
        }
        return out->err;
}

int gc_client_findings_table(const char *body, size_t len, gc_buf *out, char *err, size_t errlen)
{
        cJSON *doc;
        const cJSON *findings;
        size_t orig;
        int r;

        if (!out) {
                gc_errf(err, errlen, "invalid arguments");
                return -EINVAL;
        }
        doc = body ? cJSON_ParseWithLengthOpts(body, len, NULL, 0) : NULL;
        findings = cJSON_GetObjectItemCaseSensitive(doc, "findings");
        if (!cJSON_IsArray(findings)) {
                cJSON_Delete(doc);
                gc_errf(err, errlen, "the server's answer holds no \"findings\" (docs/advisor.md)");
                return -EINVAL;
        }
        orig = out->len;
        r = gc_client__findings(doc, findings, out);
        if (r < 0) {
                gc_errf(err, errlen, "cannot format the findings: %s", strerror(-r));
                if (out->data) /* nothing half-written is left behind */
                        gc_buf_truncate(out, orig);
        }
        cJSON_Delete(doc);
        return r;
}
