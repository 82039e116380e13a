/* deliver render: the subject, the plain-text part and the HTML part of a report's email. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../report/report.h"
#include "deliver.h"

#define GC_DELIVER__BAR_TEXT 20 /* characters of a bar in the text part */

static size_t gc_deliver__rows_shown(const gc_deliver_view *v, size_t n)
{
        size_t max = v && v->max_rows ? v->max_rows : 10;

        return n < max ? n : max;
}

static void gc_deliver__money(const gc_deliver_report *r, double v, char out[GC_REPORT_MONEY_LEN])
{
        gc_report_money(v, r->currency, out);
}

/* "+10.1%" / "-3.0%"; "" without a previous period. */
static void gc_deliver__pct(const gc_deliver_report *r, char *out, size_t n)
{
        if (!r->has_prev || !isfinite(r->change_pct))
                out[0] = '\0';
        else
                snprintf(out, n, "%+.1f%%", r->change_pct);
}

int gc_deliver_subject(const gc_deliver_report *r, gc_buf *out)
{
        char m[GC_REPORT_MONEY_LEN], pct[32];

        gc_deliver__money(r, r->cost, m);
        gc_deliver__pct(r, pct, sizeof(pct));
        gc_buf_printf(out, "%s%s%s \u2014 %s", r->title, r->cluster[0] ? " \u2014 " : "",
                      r->cluster, m);
        if (pct[0])
                gc_buf_printf(out, " (%s)", pct);
        if (r->partial)
                gc_buf_puts(out, " (partial)");
        return out->err;
}

/* ---- plain text ----------------------------------------------------------------------------- */

static void gc_deliver__text_bar(gc_buf *b, double share)
{
        int n = isfinite(share) && share > 0 ? (int)lround(share * GC_DELIVER__BAR_TEXT) : 0;

        if (n > GC_DELIVER__BAR_TEXT)
                n = GC_DELIVER__BAR_TEXT;
        for (int i = 0; i < GC_DELIVER__BAR_TEXT; i++)
                gc_buf_puts(b, i < n ? "#" : ".");
}

/* A name padded to `width` characters (UTF-8 counted as characters), never cut: a longer one
 * takes its own line and the figures go on the next, aligned. */
static void gc_deliver__text_name(gc_buf *b, const char *name, size_t width)
{
        size_t chars = 0;

        for (const char *p = name; *p; p++)
                chars += ((unsigned char)*p & 0xC0) != 0x80;
        gc_buf_puts(b, name);
        if (chars > width) {
                gc_buf_puts(b, "\n  ");
                chars = 0;
        }
        for (; chars < width; chars++)
                gc_buf_puts(b, " ");
}

static void gc_deliver__text_rows(gc_buf *b, const gc_deliver_report *r, const char *heading,
                                  const gc_deliver_row *rows, size_t n, size_t more,
                                  const gc_deliver_view *v, int bars)
{
        size_t shown = gc_deliver__rows_shown(v, n);
        char m[GC_REPORT_MONEY_LEN];

        if (!n)
                return;
        gc_buf_printf(b, "\n%s\n", heading);
        for (size_t i = 0; i < shown; i++) {
                gc_deliver__money(r, rows[i].cost, m);
                gc_buf_puts(b, "  ");
                gc_deliver__text_name(b, rows[i].name, 30);
                gc_buf_printf(b, " %16s", m);
                if (bars && isfinite(rows[i].share)) {
                        gc_buf_puts(b, "  ");
                        gc_deliver__text_bar(b, rows[i].share);
                        gc_buf_printf(b, " %.1f%%", rows[i].share * 100);
                }
                gc_buf_puts(b, "\n");
        }
        if (n - shown + more)
                gc_buf_printf(b, "  ... %zu more\n", n - shown + more);
}

int gc_deliver_text(const gc_deliver_report *r, const gc_deliver_view *v, gc_buf *b)
{
        char m[GC_REPORT_MONEY_LEN], m2[GC_REPORT_MONEY_LEN], pct[32];

        gc_buf_printf(b, "%s\n", r->title);
        if (r->cluster[0])
                gc_buf_printf(b, "Cluster: %s\n", r->cluster);
        if (r->team[0])
                gc_buf_printf(b, "Team: %s\n", r->team);
        gc_deliver__money(r, r->cost, m);
        gc_buf_printf(b, "\nTotal: %s for %.2f GPU-hours, %llu pods%s\n", m, r->gpu_hours,
                      (unsigned long long)r->pods, r->partial ? " (so far)" : "");
        gc_deliver__pct(r, pct, sizeof(pct));
        if (r->has_prev) {
                gc_deliver__money(r, r->prev_cost, m);
                gc_deliver__money(r, r->change, m2);
                gc_buf_printf(b, "Previous period: %s; change %s%s%s%s\n", m,
                              r->change > 0 ? "+" : "", m2, pct[0] ? ", " : "", pct);
        }
        if (r->has_forecast) {
                gc_deliver__money(r, r->forecast_cost, m);
                gc_buf_printf(b, "Forecast to the period's end: %s\n", m);
        }
        if (isfinite(r->idle_cost)) {
                gc_deliver__money(r, r->idle_cost, m);
                gc_buf_printf(b, "Idle capacity: %s\n", m);
        }
        if (isfinite(r->unattributed_cost) && r->unattributed_cost > 0) {
                gc_deliver__money(r, r->unattributed_cost, m);
                gc_buf_printf(b, "Unattributed: %s\n", m);
        }
        gc_deliver__text_rows(b, r, "By team", r->teams, r->n_teams, r->more_teams, v, 1);
        gc_deliver__text_rows(b, r, "Top projects", r->projects, r->n_projects, r->more_projects, v,
                              1);
        if (r->n_budgets) {
                gc_buf_puts(b, "\nBudgets\n");
                for (size_t i = 0; i < r->n_budgets; i++) {
                        const gc_deliver_budget *bu = &r->budgets[i];

                        gc_deliver__money(r, bu->spent, m);
                        gc_deliver__money(r, bu->amount, m2);
                        gc_buf_printf(b, "  %s %s: %s of %s (%.0f%%), %s\n", bu->scope, bu->name, m,
                                      m2, bu->share * 100, bu->state);
                }
                if (r->more_budgets)
                        gc_buf_printf(b, "  ... %zu more\n", r->more_budgets);
        }
        if (r->n_savings) {
                gc_deliver__money(r, r->savings_monthly, m);
                gc_buf_printf(b, "\nEstimated savings: %s a month; the largest:\n", m);
                for (size_t i = 0; i < r->n_savings && i < 3; i++) {
                        gc_deliver__money(r, r->savings[i].monthly, m);
                        gc_buf_printf(b, "  - %s a month: %s\n", m, r->savings[i].summary);
                }
                if (r->n_savings + r->more_savings > 3)
                        gc_buf_printf(b, "  ... %zu more\n", r->n_savings + r->more_savings - 3);
        }
        if (v && v->dashboard_url && *v->dashboard_url)
                gc_buf_printf(b, "\nDashboard: %s\n", v->dashboard_url);
        return b->err;
}

/* ---- HTML ----------------------------------------------------------------------------------- */

int gc_deliver_html_escape(gc_buf *b, const char *s)
{
        for (; s && *s; s++) {
                switch (*s) {
                case '&':
                        gc_buf_puts(b, "&amp;");
                        break;
                case '<':
                        gc_buf_puts(b, "&lt;");
                        break;
                case '>':
                        gc_buf_puts(b, "&gt;");
                        break;
                case '"':
                        gc_buf_puts(b, "&quot;");
                        break;
                case '\'':
                        gc_buf_puts(b, "&#39;");
                        break;
                default:
                        if ((unsigned char)*s < 0x20 || *s == 0x7f)
                                gc_buf_puts(b, " ");
                        else
                                gc_buf_append(b, s, 1);
                }
        }
        return b->err;
}

#define GC_DELIVER__TD                                                                             \
        "<td style=\"padding:4px 4px;border-bottom:1px solid #e5e5e5;word-break:break-word;\">"
#define GC_DELIVER__TDR                                                                            \
        "<td style=\"padding:4px 4px;border-bottom:1px solid "                                     \
        "#e5e5e5;text-align:right;white-space:nowrap;\">"
#define GC_DELIVER__H2 "<h2 style=\"font-size:16px;margin:20px 0 6px 0;color:#222;\">"

/* A bar of table cells (mail clients drop CSS widths on divs, and images are not loaded). */
static void gc_deliver__html_bar(gc_buf *b, double share)
{
        int pct = isfinite(share) && share > 0 ? (int)lround(share * 100) : 0;

        if (pct > 100)
                pct = 100;
        gc_buf_puts(b, "<table role=\"presentation\" cellpadding=\"0\" cellspacing=\"0\" "
                       "style=\"width:100%;border-collapse:collapse;\"><tr>");
        if (pct > 0)
                gc_buf_printf(b,
                              "<td style=\"width:%d%%;background:#3b7ddd;height:10px;"
                              "font-size:1px;line-height:1px;\">&nbsp;</td>",
                              pct);
        if (pct < 100)
                gc_buf_printf(b,
                              "<td style=\"width:%d%%;background:#eef2f8;height:10px;"
                              "font-size:1px;line-height:1px;\">&nbsp;</td>",
                              100 - pct);
        gc_buf_puts(b, "</tr></table>");
}

static void gc_deliver__html_rows(gc_buf *b, const gc_deliver_report *r, const char *heading,
                                  const char *col, const gc_deliver_row *rows, size_t n,
                                  size_t more, const gc_deliver_view *v)
{
        size_t shown = gc_deliver__rows_shown(v, n);
        char m[GC_REPORT_MONEY_LEN];

        if (!n)
                return;
        gc_buf_printf(b, GC_DELIVER__H2 "%s</h2>\n", heading);
        gc_buf_puts(b, "<table role=\"presentation\" cellpadding=\"0\" cellspacing=\"0\" "
                       "style=\"width:100%;border-collapse:collapse;font-size:14px;\">\n<tr>");
        gc_buf_printf(b,
                      GC_DELIVER__TD "<b>%s</b></td>" GC_DELIVER__TDR
                                     "<b>Cost</b></td>" GC_DELIVER__TDR
                                     "<b>GPU-h</b></td>" GC_DELIVER__TD "<b>Share</b></td></tr>\n",
                      col);
        for (size_t i = 0; i < shown; i++) {
                gc_deliver__money(r, rows[i].cost, m);
                gc_buf_puts(b, "<tr>" GC_DELIVER__TD);
                gc_deliver_html_escape(b, rows[i].name);
                gc_buf_printf(b, "</td>" GC_DELIVER__TDR "%s</td>" GC_DELIVER__TDR "%.2f</td>", m,
                              rows[i].gpu_hours);
                gc_buf_puts(b, "<td style=\"padding:4px 6px;border-bottom:1px solid #e5e5e5;"
                               "width:22%;\">");
                if (isfinite(rows[i].share)) {
                        gc_deliver__html_bar(b, rows[i].share);
                        gc_buf_printf(b, "<span style=\"font-size:12px;color:#555;\">%.1f%%</span>",
                                      rows[i].share * 100);
                }
                gc_buf_puts(b, "</td></tr>\n");
        }
        if (n - shown + more)
                gc_buf_printf(b,
                              "<tr><td colspan=\"4\" style=\"padding:4px 6px;color:#555;\">"
                              "&hellip; %zu more</td></tr>\n",
                              n - shown + more);
        gc_buf_puts(b, "</table>\n");
}

static void gc_deliver__html_figure(gc_buf *b, const char *label, const char *value,
                                    const char *note)
{
        gc_buf_puts(b, "<tr><td style=\"padding:3px 0;color:#555;\">");
        gc_deliver_html_escape(b, label);
        gc_buf_puts(b, "</td><td style=\"padding:3px 0 3px 12px;text-align:right;font-weight:bold;"
                       "\"><span style=\"white-space:nowrap;\">");
        gc_deliver_html_escape(b, value);
        gc_buf_puts(b, "</span>");
        if (note && *note) {
                gc_buf_puts(b, " <span style=\"font-weight:normal;color:#555;\">");
                gc_deliver_html_escape(b, note);
                gc_buf_puts(b, "</span>");
        }
        gc_buf_puts(b, "</td></tr>\n");
}

static void gc_deliver__html_budgets(gc_buf *b, const gc_deliver_report *r)
{
        char m[GC_REPORT_MONEY_LEN], m2[GC_REPORT_MONEY_LEN];

        if (!r->n_budgets)
                return;
        gc_buf_puts(b,
                    GC_DELIVER__H2 "Budgets</h2>\n<table role=\"presentation\" cellpadding=\"0\" "
                                   "cellspacing=\"0\" style=\"width:100%;border-collapse:collapse;"
                                   "font-size:14px;\">\n");
        for (size_t i = 0; i < r->n_budgets; i++) {
                const gc_deliver_budget *bu = &r->budgets[i];
                const char *color = strcmp(bu->state, "over") == 0   ? "#c62828"
                                    : strcmp(bu->state, "warn") == 0 ? "#b26a00"
                                                                     : "#2e7d32";

                gc_deliver__money(r, bu->spent, m);
                gc_deliver__money(r, bu->amount, m2);
                gc_buf_puts(b, "<tr>" GC_DELIVER__TD);
                gc_deliver_html_escape(b, bu->scope);
                gc_buf_puts(b, " ");
                gc_deliver_html_escape(b, bu->name);
                gc_buf_printf(b,
                              "</td>" GC_DELIVER__TDR "%s of %s</td>" GC_DELIVER__TDR
                              "<span style=\"color:%s;font-weight:bold;\">%.0f%% ",
                              m, m2, color, bu->share * 100);
                gc_deliver_html_escape(b, bu->state);
                gc_buf_puts(b, "</span></td></tr>\n");
        }
        if (r->more_budgets)
                gc_buf_printf(b,
                              "<tr><td colspan=\"3\" style=\"padding:4px 6px;color:#555;\">"
                              "&hellip; %zu more</td></tr>\n",
                              r->more_budgets);
        gc_buf_puts(b, "</table>\n");
}

static void gc_deliver__html_savings(gc_buf *b, const gc_deliver_report *r)
{
        char m[GC_REPORT_MONEY_LEN];

        if (!r->n_savings)
                return;
        gc_deliver__money(r, r->savings_monthly, m);
        gc_buf_printf(b,
                      GC_DELIVER__H2 "Estimated savings: %s a month</h2>\n<ul style=\"margin:0;"
                                     "padding-left:20px;font-size:14px;\">\n",
                      m);
        for (size_t i = 0; i < r->n_savings && i < 3; i++) {
                gc_deliver__money(r, r->savings[i].monthly, m);
                gc_buf_printf(b, "<li style=\"margin:4px 0;\"><b>%s a month</b>: ", m);
                gc_deliver_html_escape(b, r->savings[i].summary);
                gc_buf_puts(b, "</li>\n");
        }
        if (r->n_savings + r->more_savings > 3)
                gc_buf_printf(b, "<li style=\"margin:4px 0;color:#555;\">%zu more</li>\n",
                              r->n_savings + r->more_savings - 3);
        gc_buf_puts(b, "</ul>\n");
}

int gc_deliver_html(const gc_deliver_report *r, const gc_deliver_view *v, gc_buf *b)
{
        char m[GC_REPORT_MONEY_LEN], m2[GC_REPORT_MONEY_LEN], pct[32], note[160];

        gc_buf_puts(
            b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" "
               "content=\"width=device-width,initial-scale=1\">\n<title>");
        gc_deliver_html_escape(b, r->title);
        gc_buf_puts(b, "</title></head>\n<body style=\"margin:0;padding:0;background:#f6f7f9;\">\n"
                       "<div style=\"max-width:640px;margin:0 auto;padding:16px;background:#ffffff;"
                       "font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;"
                       "color:#222;\">\n<h1 style=\"font-size:20px;margin:0 0 4px 0;\">");
        gc_deliver_html_escape(b, r->title);
        gc_buf_puts(b, "</h1>\n");
        if (r->cluster[0] || r->team[0]) {
                gc_buf_puts(b, "<p style=\"margin:0 0 12px 0;color:#555;font-size:13px;\">");
                if (r->cluster[0]) {
                        gc_buf_puts(b, "Cluster ");
                        gc_deliver_html_escape(b, r->cluster);
                }
                if (r->team[0]) {
                        gc_buf_puts(b, r->cluster[0] ? " &middot; team " : "Team ");
                        gc_deliver_html_escape(b, r->team);
                }
                gc_buf_puts(b, "</p>\n");
        }
        gc_buf_puts(b, "<table role=\"presentation\" cellpadding=\"0\" cellspacing=\"0\" "
                       "style=\"width:100%;font-size:15px;\">\n");
        gc_deliver__money(r, r->cost, m);
        gc_deliver__html_figure(b, r->partial ? "Spend so far" : "Spend", m, NULL);
        gc_buf_printf(
            b,
            "<tr><td style=\"padding:3px 0;color:#555;\">GPU-hours</td><td "
            "style=\"padding:3px 0 3px 12px;text-align:right;\">%.2f (%llu pods)</td></tr>\n",
            r->gpu_hours, (unsigned long long)r->pods);
        if (r->has_prev) {
                gc_deliver__pct(r, pct, sizeof(pct));
                gc_deliver__money(r, r->change, m);
                gc_deliver__money(r, r->prev_cost, m2);
                snprintf(note, sizeof(note), "%s%s(previous %s)", pct, pct[0] ? " " : "", m2);
                gc_buf_printf(
                    b,
                    "<tr><td style=\"padding:3px 0;color:#555;\">Change</td><td "
                    "style=\"padding:3px 0 3px 12px;text-align:right;color:%s;"
                    "\"><b style=\"white-space:nowrap;\">%s%s</b><br><span style=\"color:#555;\">",
                    r->change > 0 ? "#c62828" : "#2e7d32", r->change > 0 ? "+" : "", m);
                gc_deliver_html_escape(b, note);
                gc_buf_puts(b, "</span></td></tr>\n");
        }
        if (r->has_forecast) {
                gc_deliver__money(r, r->forecast_cost, m);
                gc_deliver__html_figure(b, "Forecast to the end", m, NULL);
        }
        if (isfinite(r->idle_cost)) {
                gc_deliver__money(r, r->idle_cost, m);
                gc_deliver__html_figure(b, "Idle capacity", m, NULL);
        }
        if (isfinite(r->unattributed_cost) && r->unattributed_cost > 0) {
                gc_deliver__money(r, r->unattributed_cost, m);
                gc_deliver__html_figure(b, "Unattributed", m, NULL);
        }
        gc_buf_puts(b, "</table>\n");
        gc_deliver__html_rows(b, r, "By team", "Team", r->teams, r->n_teams, r->more_teams, v);
        gc_deliver__html_rows(b, r, "Top projects", "Team / project", r->projects, r->n_projects,
                              r->more_projects, v);
        gc_deliver__html_budgets(b, r);
        gc_deliver__html_savings(b, r);
        if (v && v->dashboard_url && *v->dashboard_url) {
                gc_buf_puts(b,
                            "<p style=\"margin:20px 0 0 0;\"><a style=\"color:#3b7ddd;\" href=\"");
                gc_deliver_html_escape(b, v->dashboard_url);
                gc_buf_puts(b, "\">Open the dashboard</a></p>\n");
        }
        gc_buf_puts(b,
                    "<p style=\"margin:20px 0 0 0;font-size:12px;color:#777;\">Sent by gpu-cost. "
                    "Figures are exact to the second; the report's JSON keeps full "
                    "precision.</p>\n</div>\n</body></html>\n");
        return b->err;
}
