/* deliver chat: a report as a Slack Block Kit, a Teams Adaptive Card or a JSON message. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../report/report.h"
#include "deliver.h"

#define GC_DELIVER__SLACK_MAX   ((size_t)40 << 10) /* the whole payload: far below Slack's own */
#define GC_DELIVER__SLACK_HEAD  150                /* a header block's plain text */
#define GC_DELIVER__MORE_RESERV 48                 /* room kept for "… N more" */

int gc_deliver_chat_parse(const char *s, gc_deliver_chat *ret)
{
        if (!s)
                return -EINVAL;
        if (strcmp(s, "slack") == 0)
                *ret = GC_DELIVER_SLACK;
        else if (strcmp(s, "teams") == 0)
                *ret = GC_DELIVER_TEAMS;
        else if (strcmp(s, "json") == 0)
                *ret = GC_DELIVER_JSON;
        else
                return -EINVAL;
        return 0;
}

const char *gc_deliver_chat_name(gc_deliver_chat k)
{
        return k == GC_DELIVER_SLACK ? "slack" : k == GC_DELIVER_TEAMS ? "teams" : "json";
}

static int gc_deliver__host_ends(const char *url, const char *suffix)
{
        const char *p = url ? strstr(url, "://") : NULL;
        size_t n, m = strlen(suffix);

        if (!p)
                return 0;
        p += 3;
        n = strcspn(p, ":/?#");
        return n >= m && strncmp(p + n - m, suffix, m) == 0 && (n == m || p[n - m - 1] == '.');
}

gc_deliver_chat gc_deliver_chat_guess(const char *url)
{
        if (gc_deliver__host_ends(url, "hooks.slack.com"))
                return GC_DELIVER_SLACK;
        if (gc_deliver__host_ends(url, "logic.azure.com") ||
            gc_deliver__host_ends(url, "powerplatform.com") ||
            gc_deliver__host_ends(url, "webhook.office.com"))
                return GC_DELIVER_TEAMS;
        return GC_DELIVER_JSON;
}

static void gc_deliver__num(gc_buf *b, double v)
{
        if (isfinite(v))
                gc_buf_printf(b, "%.17g", v);
        else
                gc_buf_puts(b, "null");
}

static size_t gc_deliver__row_cap(const gc_deliver_view *v)
{
        return v && v->max_rows ? v->max_rows : 10;
}

/* Slack's mrkdwn: & < > escaped, as its documentation asks. */
static void gc_deliver__slack_escape(gc_buf *b, const char *s)
{
        for (; *s; s++) {
                if (*s == '&')
                        gc_buf_puts(b, "&amp;");
                else if (*s == '<')
                        gc_buf_puts(b, "&lt;");
                else if (*s == '>')
                        gc_buf_puts(b, "&gt;");
                else
                        gc_buf_append(b, s, 1);
        }
}

/* Rows as mrkdwn lines within max bytes, then "… N more" for the rest. */
static void gc_deliver__slack_rows(gc_buf *t, const gc_deliver_report *r, const char *heading,
                                   const gc_deliver_row *rows, size_t n, size_t more, size_t cap,
                                   size_t max)
{
        char m[GC_REPORT_MONEY_LEN];
        size_t i;

        gc_buf_printf(t, "*%s*", heading);
        for (i = 0; i < n && i < cap; i++) {
                size_t mark = t->len;

                gc_report_money(rows[i].cost, r->currency, m);
                gc_buf_puts(t, "\n\u2022 ");
                gc_deliver__slack_escape(t, rows[i].name);
                gc_buf_printf(t, ": %s", m);
                if (isfinite(rows[i].share))
                        gc_buf_printf(t, " (%.1f%%)", rows[i].share * 100);
                if (t->err || t->len > max - GC_DELIVER__MORE_RESERV) {
                        gc_buf_truncate(t, mark);
                        break;
                }
        }
        if (n - i + more)
                gc_buf_printf(t, "\n\u2026 %zu more", n - i + more);
}

static void gc_deliver__slack_section(gc_buf *b, const gc_buf *text)
{
        gc_buf_puts(b, ",{\"type\":\"section\",\"text\":{\"type\":\"mrkdwn\",\"text\":");
        gc_buf_json_str(b, text->data ? text->data : "");
        gc_buf_puts(b, "}}");
}

static void gc_deliver__cut(char *s, size_t max)
{
        size_t n = strlen(s);

        if (n <= max)
                return;
        n = max;
        while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
                n--;
        s[n] = '\0';
}

/* The budgets as mrkdwn lines within a section's text. */
static void gc_deliver__slack_budgets(gc_buf *t, const gc_deliver_report *r, size_t cap)
{
        char m[GC_REPORT_MONEY_LEN], m2[GC_REPORT_MONEY_LEN];
        size_t i;

        gc_buf_puts(t, "*Budgets*");
        for (i = 0; i < r->n_budgets && i < cap; i++) {
                size_t at = t->len;

                gc_report_money(r->budgets[i].spent, r->currency, m);
                gc_report_money(r->budgets[i].amount, r->currency, m2);
                gc_buf_printf(t, "\n\u2022 %s ", r->budgets[i].scope);
                gc_deliver__slack_escape(t, r->budgets[i].name);
                gc_buf_printf(t, ": %s of %s (%.0f%%, %s)", m, m2, r->budgets[i].share * 100,
                              r->budgets[i].state);
                if (t->err || t->len > GC_DELIVER_SLACK_TEXT - GC_DELIVER__MORE_RESERV) {
                        gc_buf_truncate(t, at);
                        break;
                }
        }
        if (r->n_budgets - i + r->more_budgets)
                gc_buf_printf(t, "\n\u2026 %zu more", r->n_budgets - i + r->more_budgets);
}

int gc_deliver_slack(const gc_deliver_report *r, const gc_deliver_view *v, gc_buf *b)
{
        char head[GC_DELIVER__SLACK_HEAD + 1], m[GC_REPORT_MONEY_LEN], m2[GC_REPORT_MONEY_LEN];
        gc_buf t;
        size_t cap = gc_deliver__row_cap(v), mark = b->len;

        gc_buf_init(&t, GC_DELIVER_SLACK_TEXT);
        gc_strlcpy(head, r->title, sizeof(head));
        gc_deliver__cut(head, GC_DELIVER__SLACK_HEAD);
        gc_report_money(r->cost, r->currency, m);
        /* "text" is the notification's and the fallback's. */
        gc_buf_puts(b, "{\"text\":");
        gc_buf_printf(&t, "%s: %s", head, m);
        gc_buf_json_str(b, t.data);
        gc_buf_puts(b, ",\"blocks\":[{\"type\":\"header\",\"text\":{\"type\":\"plain_text\","
                       "\"text\":");
        gc_buf_json_str(b, head);
        gc_buf_puts(b, "}},{\"type\":\"section\",\"fields\":[");
        /* At most 4 fields of a few dozen bytes: within Slack's 10 of 2,000. */
        gc_buf_reset(&t);
        gc_buf_printf(&t, "*%s*\n%s", r->partial ? "Spend so far" : "Spend", m);
        gc_buf_json_str(b, t.data);
        gc_buf_reset(&t);
        gc_buf_printf(&t, "*GPU-hours*\n%.2f (%llu pods)", r->gpu_hours,
                      (unsigned long long)r->pods);
        gc_buf_puts(b, ",");
        gc_buf_json_str(b, t.data);
        if (r->has_prev) {
                gc_report_money(r->change, r->currency, m);
                gc_report_money(r->prev_cost, r->currency, m2);
                gc_buf_reset(&t);
                gc_buf_printf(&t, "*Change*\n%s%s", r->change > 0 ? "+" : "", m);
                if (isfinite(r->change_pct))
                        gc_buf_printf(&t, " (%+.1f%%)", r->change_pct);
                gc_buf_printf(&t, " vs %s", m2);
                gc_buf_puts(b, ",");
                gc_buf_json_str(b, t.data);
        }
        if (r->has_forecast || isfinite(r->idle_cost)) {
                gc_report_money(r->has_forecast ? r->forecast_cost : r->idle_cost, r->currency, m);
                gc_buf_reset(&t);
                gc_buf_printf(&t, "*%s*\n%s", r->has_forecast ? "Forecast" : "Idle capacity", m);
                gc_buf_puts(b, ",");
                gc_buf_json_str(b, t.data);
        }
        gc_buf_puts(b, "]}");
        if (r->n_teams) {
                gc_buf_reset(&t);
                gc_deliver__slack_rows(&t, r, "Top teams", r->teams, r->n_teams, r->more_teams, cap,
                                       GC_DELIVER_SLACK_TEXT);
                gc_deliver__slack_section(b, &t);
        }
        if (r->n_projects) {
                gc_buf_reset(&t);
                gc_deliver__slack_rows(&t, r, "Top projects", r->projects, r->n_projects,
                                       r->more_projects, cap, GC_DELIVER_SLACK_TEXT);
                gc_deliver__slack_section(b, &t);
        }
        if (r->n_budgets) {
                gc_buf_reset(&t);
                gc_deliver__slack_budgets(&t, r, cap);
                gc_deliver__slack_section(b, &t);
        }
        if (r->n_savings) {
                gc_report_money(r->savings_monthly, r->currency, m);
                gc_buf_reset(&t);
                gc_buf_printf(&t, "*Savings*: %s a month", m);
                gc_buf_puts(b, ",{\"type\":\"context\",\"elements\":[{\"type\":\"mrkdwn\","
                               "\"text\":");
                gc_buf_json_str(b, t.data);
                gc_buf_puts(b, "}]}");
        }
        if (v && v->dashboard_url && *v->dashboard_url && strlen(v->dashboard_url) <= 3000) {
                gc_buf_puts(b, ",{\"type\":\"actions\",\"elements\":[{\"type\":\"button\","
                               "\"text\":{\"type\":\"plain_text\",\"text\":\"Open the "
                               "dashboard\"},\"url\":");
                gc_buf_json_str(b, v->dashboard_url);
                gc_buf_puts(b, "}]}");
        }
        gc_buf_puts(b, "]}");
        gc_buf_free(&t);
        if (!b->err && b->len - mark > GC_DELIVER__SLACK_MAX) {
                gc_buf_truncate(b, mark);
                return -E2BIG;
        }
        return b->err;
}

/* ---- Teams -------------------------------------------------------------------------------- */

static void gc_deliver__fact(gc_buf *b, int *first, const char *title, const char *value)
{
        gc_buf_puts(b, *first ? "{\"title\":" : ",{\"title\":");
        gc_buf_json_str(b, title);
        gc_buf_puts(b, ",\"value\":");
        gc_buf_json_str(b, value);
        gc_buf_puts(b, "}");
        *first = 0;
}

static void gc_deliver__teams_rows(gc_buf *b, const gc_deliver_report *r, const char *heading,
                                   const gc_deliver_row *rows, size_t n, size_t more, size_t cap)
{
        char m[GC_REPORT_MONEY_LEN], val[GC_REPORT_MONEY_LEN + 32];
        size_t shown = n < cap ? n : cap;
        int first = 1;

        if (!n)
                return;
        gc_buf_puts(b, ",{\"type\":\"TextBlock\",\"weight\":\"Bolder\",\"spacing\":\"Medium\","
                       "\"text\":");
        gc_buf_json_str(b, heading);
        gc_buf_puts(b, "},{\"type\":\"FactSet\",\"facts\":[");
        for (size_t i = 0; i < shown; i++) {
                gc_report_money(rows[i].cost, r->currency, m);
                if (isfinite(rows[i].share))
                        snprintf(val, sizeof(val), "%s (%.1f%%)", m, rows[i].share * 100);
                else
                        snprintf(val, sizeof(val), "%s", m);
                gc_deliver__fact(b, &first, rows[i].name, val);
        }
        gc_buf_puts(b, "]}");
        if (n - shown + more)
                gc_buf_printf(b,
                              ",{\"type\":\"TextBlock\",\"isSubtle\":true,\"text\":\"\u2026 %zu "
                              "more\"}",
                              n - shown + more);
}

static int gc_deliver__teams_once(const gc_deliver_report *r, const gc_deliver_view *v, size_t cap,
                                  gc_buf *b)
{
        char m[GC_REPORT_MONEY_LEN], m2[GC_REPORT_MONEY_LEN], val[160];
        int first = 1;

        gc_buf_puts(b, "{\"type\":\"message\",\"attachments\":[{\"contentType\":"
                       "\"application/vnd.microsoft.card.adaptive\",\"contentUrl\":null,"
                       "\"content\":{\"$schema\":\"http://adaptivecards.io/schemas/"
                       "adaptive-card.json\",\"type\":\"AdaptiveCard\",\"version\":\"1.4\","
                       "\"msteams\":{\"width\":\"Full\"},\"body\":[{\"type\":\"TextBlock\","
                       "\"size\":\"Medium\",\"weight\":\"Bolder\",\"wrap\":true,\"text\":");
        gc_buf_json_str(b, r->title);
        gc_buf_puts(b, "},{\"type\":\"FactSet\",\"facts\":[");
        gc_report_money(r->cost, r->currency, m);
        gc_deliver__fact(b, &first, r->partial ? "Spend so far" : "Spend", m);
        snprintf(val, sizeof(val), "%.2f (%llu pods)", r->gpu_hours, (unsigned long long)r->pods);
        gc_deliver__fact(b, &first, "GPU-hours", val);
        if (r->has_prev) {
                gc_report_money(r->change, r->currency, m);
                gc_report_money(r->prev_cost, r->currency, m2);
                if (isfinite(r->change_pct))
                        snprintf(val, sizeof(val), "%s%s (%+.1f%%) vs %s", r->change > 0 ? "+" : "",
                                 m, r->change_pct, m2);
                else
                        snprintf(val, sizeof(val), "%s%s vs %s", r->change > 0 ? "+" : "", m, m2);
                gc_deliver__fact(b, &first, "Change", val);
        }
        if (r->has_forecast) {
                gc_report_money(r->forecast_cost, r->currency, m);
                gc_deliver__fact(b, &first, "Forecast", m);
        }
        if (isfinite(r->idle_cost)) {
                gc_report_money(r->idle_cost, r->currency, m);
                gc_deliver__fact(b, &first, "Idle capacity", m);
        }
        if (r->n_savings) {
                gc_report_money(r->savings_monthly, r->currency, m);
                snprintf(val, sizeof(val), "%s a month", m);
                gc_deliver__fact(b, &first, "Savings", val);
        }
        gc_buf_puts(b, "]}");
        gc_deliver__teams_rows(b, r, "Top teams", r->teams, r->n_teams, r->more_teams, cap);
        gc_deliver__teams_rows(b, r, "Top projects", r->projects, r->n_projects, r->more_projects,
                               cap);
        gc_buf_puts(b, "]");
        if (v && v->dashboard_url && *v->dashboard_url) {
                gc_buf_puts(b, ",\"actions\":[{\"type\":\"Action.OpenUrl\",\"title\":\"Open the "
                               "dashboard\",\"url\":");
                gc_buf_json_str(b, v->dashboard_url);
                gc_buf_puts(b, "}]");
        }
        gc_buf_puts(b, "}}]}");
        return b->err;
}

/*
 * Renders with `once` at fewer and fewer rows (halving above 8, then one by one) until the
 * payload fits `max` bytes: long names can make ten rows too many. -E2BIG when not even none do.
 */
static int gc_deliver__fit(const gc_deliver_report *r, const gc_deliver_view *v, gc_buf *b,
                           int (*once)(const gc_deliver_report *, const gc_deliver_view *, size_t,
                                       gc_buf *),
                           size_t max)
{
        size_t mark = b->len;

        for (size_t cap = gc_deliver__row_cap(v);; cap = cap > 8 ? cap / 2 : cap - 1) {
                int e = once(r, v, cap, b);

                if (e == 0 && b->len - mark <= max)
                        return 0;
                gc_buf_truncate(b, mark);
                if (e && e != -E2BIG)
                        return e;
                if (cap == 0)
                        return -E2BIG;
        }
}

/* Fewer rows until the card fits Teams' 28 KB. */
int gc_deliver_teams(const gc_deliver_report *r, const gc_deliver_view *v, gc_buf *b)
{
        return gc_deliver__fit(r, v, b, gc_deliver__teams_once, GC_DELIVER_TEAMS_MAX);
}

/* ---- generic JSON ------------------------------------------------------------------------- */

static void gc_deliver__json_rows(gc_buf *b, const char *name, const gc_deliver_row *rows, size_t n,
                                  size_t more, size_t cap)
{
        size_t shown = n < cap ? n : cap;

        gc_buf_printf(b, ",\"%s\":[", name);
        for (size_t i = 0; i < shown; i++) {
                gc_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
                gc_buf_json_str(b, rows[i].name);
                gc_buf_puts(b, ",\"cost\":");
                gc_deliver__num(b, rows[i].cost);
                gc_buf_puts(b, ",\"gpu_hours\":");
                gc_deliver__num(b, rows[i].gpu_hours);
                gc_buf_puts(b, ",\"share\":");
                gc_deliver__num(b, rows[i].share);
                gc_buf_puts(b, "}");
        }
        gc_buf_printf(b, "],\"%s_more\":%zu", name, n - shown + more);
}

static int gc_deliver__json_once(const gc_deliver_report *r, const gc_deliver_view *v, size_t cap,
                                 gc_buf *b)
{
        char start[GC_TIME_LEN], end[GC_TIME_LEN];

        gc_time_format(r->start, start);
        gc_time_format(r->end, end);
        gc_buf_puts(b, "{\"type\":\"gpu-cost.report\",\"version\":1,\"kind\":");
        gc_buf_json_str(b, r->kind);
        gc_buf_puts(b, ",\"title\":");
        gc_buf_json_str(b, r->title);
        gc_buf_puts(b, ",\"cluster\":");
        gc_buf_json_str(b, r->cluster);
        gc_buf_puts(b, ",\"team\":");
        gc_buf_json_str(b, r->team);
        gc_buf_puts(b, ",\"currency\":");
        gc_buf_json_str(b, r->currency);
        gc_buf_puts(b, ",\"period\":{\"id\":");
        gc_buf_json_str(b, r->period_id);
        gc_buf_printf(b, ",\"start\":\"%s\",\"end\":\"%s\",\"partial\":%s},\"total\":{\"cost\":",
                      start, end, r->partial ? "true" : "false");
        gc_deliver__num(b, r->cost);
        gc_buf_puts(b, ",\"gpu_hours\":");
        gc_deliver__num(b, r->gpu_hours);
        gc_buf_printf(b, ",\"pods\":%llu},\"previous_cost\":", (unsigned long long)r->pods);
        gc_deliver__num(b, r->has_prev ? r->prev_cost : NAN);
        gc_buf_puts(b, ",\"change\":");
        gc_deliver__num(b, r->has_prev ? r->change : NAN);
        gc_buf_puts(b, ",\"change_percent\":");
        gc_deliver__num(b, r->has_prev ? r->change_pct : NAN);
        gc_buf_puts(b, ",\"forecast_cost\":");
        gc_deliver__num(b, r->has_forecast ? r->forecast_cost : NAN);
        gc_buf_puts(b, ",\"idle_cost\":");
        gc_deliver__num(b, r->idle_cost);
        gc_buf_puts(b, ",\"unattributed_cost\":");
        gc_deliver__num(b, r->unattributed_cost);
        gc_deliver__json_rows(b, "teams", r->teams, r->n_teams, r->more_teams, cap);
        gc_deliver__json_rows(b, "projects", r->projects, r->n_projects, r->more_projects, cap);
        gc_buf_puts(b, ",\"budgets\":[");
        for (size_t i = 0; i < r->n_budgets && i < cap; i++) {
                const gc_deliver_budget *bu = &r->budgets[i];

                gc_buf_puts(b, i ? ",{\"scope\":" : "{\"scope\":");
                gc_buf_json_str(b, bu->scope);
                gc_buf_puts(b, ",\"name\":");
                gc_buf_json_str(b, bu->name);
                gc_buf_puts(b, ",\"amount\":");
                gc_deliver__num(b, bu->amount);
                gc_buf_puts(b, ",\"spent\":");
                gc_deliver__num(b, bu->spent);
                gc_buf_puts(b, ",\"state\":");
                gc_buf_json_str(b, bu->state);
                gc_buf_puts(b, "}");
        }
        gc_buf_puts(b, "],\"savings_monthly\":");
        gc_deliver__num(b, r->savings_monthly);
        gc_buf_puts(b, ",\"dashboard_url\":");
        if (v && v->dashboard_url && *v->dashboard_url)
                gc_buf_json_str(b, v->dashboard_url);
        else
                gc_buf_puts(b, "null");
        gc_buf_puts(b, "}");
        return b->err;
}

int gc_deliver_json(const gc_deliver_report *r, const gc_deliver_view *v, gc_buf *b)
{
        return gc_deliver__fit(r, v, b, gc_deliver__json_once, GC_DELIVER_JSON_MAX);
}

int gc_deliver_chat_render(gc_deliver_chat k, const gc_deliver_report *r, const gc_deliver_view *v,
                           gc_buf *out)
{
        if (!r || !out)
                return -EINVAL;
        return k == GC_DELIVER_SLACK   ? gc_deliver_slack(r, v, out)
               : k == GC_DELIVER_TEAMS ? gc_deliver_teams(r, v, out)
                                       : gc_deliver_json(r, v, out);
}
