/* advisor output: the recommendations JSON document and the report's "## Savings" section. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "../report/report.h"
#include "advisor_int.h"

#define GC__MD_ROWS 50 /* findings in the Markdown table; the JSON has all that were kept */

/* Runs an append and leaves the function on failure (every renderer has a plain `r`). */
#define GC__TRY(call)                                                                              \
        do {                                                                                       \
                if ((r = (call)) < 0)                                                              \
                        return r;                                                                  \
        } while (0)

static int gc__json_num(gc_buf *b, double v)
{
        if (!isfinite(v))
                return gc_buf_puts(b, "null");
        return gc_buf_printf(b, "%.10g", v);
}

/* Money: cents, as displayed. */
static int gc__json_money(gc_buf *b, double v)
{
        if (!isfinite(v))
                return gc_buf_puts(b, "null");
        return gc_buf_printf(b, "%.2f", v);
}

static int gc__json_time(gc_buf *b, int64_t t)
{
        char s[GC_TIME_LEN];

        gc_time_format(t, s);
        return gc_buf_json_str(b, s);
}

static int gc__json_field(gc_buf *b, int *first, const char *name, const char *value)
{
        int r;

        if (!value)
                return 0;
        GC__TRY(gc_buf_puts(b, *first ? "" : ","));
        *first = 0;
        GC__TRY(gc_buf_json_str(b, name));
        GC__TRY(gc_buf_puts(b, ":"));
        return gc_buf_json_str(b, value);
}

/*
 * Evidence figures renamed when money became currency-neutral: each is written again under its
 * old name, with the same value, for one release (docs/api.md, "Renamed fields").
 */
static const struct {
        const char *name, *old;
} gc__renamed[] = {
    {"price_per_gpu_hour", "usd_per_gpu_hour"},
    {"from_price_per_gpu_hour", "from_usd_per_gpu_hour"},
    {"to_price_per_gpu_hour", "to_usd_per_gpu_hour"},
    {"on_demand_price_per_gpu_hour", "on_demand_usd_per_gpu_hour"},
    {"reserved_price_per_gpu_hour", "reserved_usd_per_gpu_hour"},
    {"spot_price_per_gpu_hour", "spot_usd_per_gpu_hour"},
    {"owned_cost_per_productive_gpu_hour", "owned_usd_per_productive_gpu_hour"},
    {"cloud_price_per_gpu_hour", "cloud_usd_per_gpu_hour"},
};

static const char *gc__old_name(const char *name)
{
        for (size_t i = 0; i < sizeof(gc__renamed) / sizeof(gc__renamed[0]); i++)
                if (strcmp(gc__renamed[i].name, name) == 0)
                        return gc__renamed[i].old;
        return NULL;
}

static int gc__json_finding(gc_buf *b, const gc_finding *f)
{
        int r, first = 1;

        GC__TRY(gc_buf_puts(b, "{\"kind\":"));
        GC__TRY(gc_buf_json_str(b, gc_finding_kind_name(f->kind)));
        GC__TRY(gc_buf_puts(b, ",\"subject\":{"));
        GC__TRY(gc__json_field(b, &first, "namespace", f->ns));
        GC__TRY(gc__json_field(b, &first, "pod", f->pod));
        GC__TRY(gc__json_field(b, &first, "team", f->team));
        GC__TRY(gc__json_field(b, &first, "project", f->project));
        GC__TRY(gc__json_field(b, &first, "node", f->node));
        GC__TRY(gc__json_field(b, &first, "model", f->model));
        GC__TRY(gc__json_field(b, &first, "capacity_type", f->capacity_type));
        GC__TRY(gc__json_field(b, &first, "controller_kind", f->controller_kind));
        GC__TRY(gc__json_field(b, &first, "controller", f->controller));
        GC__TRY(gc_buf_puts(b, "},\"evidence\":{\"window\":{\"start\":"));
        GC__TRY(gc__json_time(b, f->window_start));
        GC__TRY(gc_buf_puts(b, ",\"end\":"));
        GC__TRY(gc__json_time(b, f->window_end));
        GC__TRY(
            gc_buf_printf(b, "},\"samples\":%llu,\"coverage\":", (unsigned long long)f->samples));
        GC__TRY(gc__json_num(b, f->coverage));
        for (size_t i = 0; i < f->n_figures; i++) {
                const gc_advisor_figure *g = &f->figures[i];
                const char *old = gc__old_name(g->name);

                GC__TRY(gc_buf_puts(b, ","));
                GC__TRY(gc_buf_json_str(b, g->name));
                GC__TRY(gc_buf_puts(b, ":"));
                GC__TRY(g->text ? gc_buf_json_str(b, g->text) : gc__json_num(b, g->value));
                if (old) {
                        GC__TRY(gc_buf_puts(b, ","));
                        GC__TRY(gc_buf_json_str(b, old));
                        GC__TRY(gc_buf_puts(b, ":"));
                        GC__TRY(gc__json_num(b, g->value));
                }
        }
        GC__TRY(gc_buf_puts(b, "},\"change\":{\"summary\":"));
        GC__TRY(gc_buf_json_str(b, f->summary ? f->summary : ""));
        GC__TRY(gc_buf_puts(b, ",\"stanza\":"));
        GC__TRY(f->stanza ? gc_buf_json_str(b, f->stanza) : gc_buf_puts(b, "null"));
        GC__TRY(gc_buf_puts(b, "},\"monthly_savings\":"));
        GC__TRY(gc__json_money(b, f->monthly_savings));
        return gc_buf_puts(b, "}");
}

int gc_advisor_json(const gc_advisor_result *res, const char *currency, gc_buf *out)
{
        int r;

        if (!res || !out)
                return -EINVAL;
        GC__TRY(gc_buf_puts(out, "{\"window\":{\"start\":"));
        GC__TRY(gc__json_time(out, res->start));
        GC__TRY(gc_buf_puts(out, ",\"end\":"));
        GC__TRY(gc__json_time(out, res->end));
        GC__TRY(gc_buf_puts(out, ",\"now\":"));
        GC__TRY(gc__json_time(out, res->now));
        GC__TRY(gc_buf_puts(out, "},\"currency\":"));
        GC__TRY(gc_buf_json_str(out, currency ? currency : "USD"));
        GC__TRY(gc_buf_puts(out, ",\"hours_per_month\":"));
        GC__TRY(gc__json_num(out, res->hours_per_month));
        GC__TRY(gc_buf_printf(out,
                              ",\"usage\":{\"has_usage\":%s,\"pods\":%zu,\"pods_measured\":%zu,"
                              "\"pods_insufficient\":%zu},\"findings\":[",
                              res->has_usage ? "true" : "false", res->pods, res->pods_measured,
                              res->pods_insufficient));
        for (size_t i = 0; i < res->n_findings; i++) {
                if (i)
                        GC__TRY(gc_buf_puts(out, ","));
                GC__TRY(gc__json_finding(out, &res->findings[i]));
        }
        GC__TRY(gc_buf_printf(out, "],\"findings_omitted\":%zu,\"totals\":{\"findings\":%zu,",
                              res->n_findings_total - res->n_findings, res->n_findings_total));
        GC__TRY(gc_buf_puts(out, "\"monthly_savings\":"));
        GC__TRY(gc__json_money(out, res->monthly_savings));
        GC__TRY(gc_buf_puts(out, ",\"by_kind\":{"));
        for (int k = 0; k < GC_FINDING_KIND_COUNT; k++) {
                GC__TRY(
                    gc_buf_printf(out, "%s\"%s\":{\"count\":%u,\"monthly_savings\":", k ? "," : "",
                                  gc_finding_kind_name((gc_finding_kind)k), res->count_by_kind[k]));
                GC__TRY(gc__json_money(out, res->savings_by_kind[k]));
                GC__TRY(gc_buf_puts(out, "}"));
        }
        GC__TRY(gc_buf_puts(out, "},\"by_team\":["));
        for (size_t i = 0; i < res->n_stats; i++) {
                const gc_advisor_stat *st = &res->stats[i];

                GC__TRY(gc_buf_puts(out, i ? ",{\"kind\":" : "{\"kind\":"));
                GC__TRY(gc_buf_json_str(out, st->kind));
                GC__TRY(gc_buf_puts(out, ",\"team\":"));
                GC__TRY(gc_buf_json_str(out, st->team));
                GC__TRY(gc_buf_printf(out, ",\"count\":%u,\"monthly_savings\":", st->count));
                GC__TRY(gc__json_money(out, st->monthly_savings));
                GC__TRY(gc_buf_puts(out, "}"));
        }
        GC__TRY(gc_buf_puts(out, "]},\"notes\":["));
        for (size_t i = 0; i < res->n_notes; i++) {
                if (i)
                        GC__TRY(gc_buf_puts(out, ","));
                GC__TRY(gc_buf_json_str(out, res->notes[i]));
        }
        return gc_buf_printf(out, "],\"notes_omitted\":%zu}", res->n_notes_total - res->n_notes);
}

/* ---- Markdown ------------------------------------------------------------------------------- */

/* Table cells: a pipe or a line break would end the cell. */
static int gc__md_cell(gc_buf *b, const char *s)
{
        int r;

        for (; s && *s; s++) {
                if (*s == '|')
                        GC__TRY(gc_buf_puts(b, "\\|"));
                else if (*s == '\n' || *s == '\r')
                        GC__TRY(gc_buf_puts(b, " "));
                else
                        GC__TRY(gc_buf_append(b, s, 1));
        }
        return 0;
}

static int gc__md_subject(gc_buf *b, const gc_finding *f)
{
        int r;

        if (f->pod)
                return gc_buf_printf(b, "%s/%s", f->ns ? f->ns : "", f->pod);
        if (f->ns)
                return gc_buf_printf(b, "namespace %s", f->ns);
        if (f->model && f->capacity_type && f->kind == GC_FINDING_IDLE_CAPACITY)
                return gc_buf_printf(b, "pool %s / %s", f->model, f->capacity_type);
        if (f->model) {
                GC__TRY(gc_buf_puts(b, f->model));
                return f->capacity_type ? gc_buf_printf(b, " (%s)", f->capacity_type) : 0;
        }
        return gc_buf_puts(b, "cluster");
}

/* The few figures that justify the finding, in words. */
static int gc__md_evidence(gc_buf *b, const gc_finding *f, const char *cur)
{
        char from[GC_TIME_LEN], to[GC_TIME_LEN];
        char m1[GC_REPORT_MONEY_LEN], m2[GC_REPORT_MONEY_LEN];
        int r = 0;

        switch (f->kind) {
        case GC_FINDING_IDLE_GPU:
                r = gc_buf_printf(
                    b, "idle %.0f%% of %.1f h, longest %.0f min; activity mean %.3f",
                    gc__adv_num(f, "idle_fraction") * 100, gc__adv_num(f, "measured_hours"),
                    gc__adv_num(f, "idle_longest_minutes"), gc__adv_num(f, "activity_mean"));
                break;
        case GC_FINDING_OVER_REQUESTED:
                r = gc_buf_printf(b, "%.0f of %.0f GPUs active", gc__adv_num(f, "devices_active"),
                                  gc__adv_num(f, "gpus_requested"));
                break;
        case GC_FINDING_MIG_FIT:
                r = gc_buf_printf(
                    b, "peak %.0f MiB, p95 activity %.3f: fits %s",
                    gc__adv_num(f, "mem_used_peak_mib"), gc__adv_num(f, "activity_p95"),
                    gc__adv_figure(f, "profile") ? gc__adv_figure(f, "profile")->text : "?");
                break;
        case GC_FINDING_CHEAPER_CLASS:
                gc_report_money(gc__adv_num(f, "from_price_per_gpu_hour"), cur, m1);
                gc_report_money(gc__adv_num(f, "to_price_per_gpu_hour"), cur, m2);
                r = gc_buf_printf(b, "tensor activity %.3f; %s -> %s per GPU-hour",
                                  gc__adv_num(f, "tensor_mean"), m1, m2);
                break;
        case GC_FINDING_UNATTRIBUTED:
                gc_report_money(gc__adv_num(f, "cost"), cur, m1);
                r = gc_buf_printf(
                    b, "%s spent, %.1f GPU-hours, no %s", m1, gc__adv_num(f, "gpu_hours"),
                    gc__adv_figure(f, "missing") ? gc__adv_figure(f, "missing")->text : "labels");
                break;
        case GC_FINDING_IDLE_CAPACITY:
                r = gc_buf_printf(b, "%.1f GPUs idle on average over %.0f node(s) (%.0f GPU-hours)",
                                  gc__adv_num(f, "average_idle_gpus"), gc__adv_num(f, "nodes"),
                                  gc__adv_num(f, "idle_gpu_hours"));
                break;
        case GC_FINDING_RESERVE_FLOOR:
                r = gc_buf_printf(
                    b, "floor %.0f GPU-hours/day over %.0f day(s) (min %.0f, max %.0f)",
                    gc__adv_num(f, "floor_gpu_hours_per_day"), gc__adv_num(f, "days"),
                    gc__adv_num(f, "daily_gpu_hours_min"), gc__adv_num(f, "daily_gpu_hours_max"));
                break;
        case GC_FINDING_BUY_VS_RENT:
                r = gc_buf_printf(b, "utilization %.1f%% vs break-even %.1f%%",
                                  gc__adv_num(f, "utilization") * 100,
                                  gc__adv_num(f, "break_even_utilization") * 100);
                break;
        default:
                break;
        }
        if (r < 0)
                return r;
        if (f->samples)
                GC__TRY(gc_buf_printf(b, "; %llu samples, coverage %.2f",
                                      (unsigned long long)f->samples, f->coverage));
        gc_time_format(f->window_start, from);
        gc_time_format(f->window_end, to);
        return gc_buf_printf(b, "; %.10s..%.10s", from, to);
}

/* A fenced block inside a numbered list item: every line indented by three spaces. */
static int gc__md_block(gc_buf *b, const char *text)
{
        const char *lang = strncmp(text, "kubectl ", 8) == 0 ? "sh"
                           : strchr(text, '\n')              ? "yaml"
                                                             : "";
        int r;

        GC__TRY(gc_buf_printf(b, "\n   ```%s\n", lang));
        while (*text) {
                const char *nl = strchr(text, '\n');
                size_t n = nl ? (size_t)(nl - text) : strlen(text);

                GC__TRY(gc_buf_printf(b, "   %.*s\n", (int)n, text));
                text += n + (nl ? 1 : 0);
        }
        return gc_buf_puts(b, "   ```\n\n");
}

int gc_advisor_markdown(const gc_advisor_result *res, const char *currency, gc_buf *out)
{
        char from[GC_TIME_LEN], to[GC_TIME_LEN], money[GC_REPORT_MONEY_LEN];
        const char *cur = currency ? currency : "USD";
        size_t rows;
        gc_buf cell;
        int r;

        if (!res || !out)
                return -EINVAL;
        gc_time_format(res->start, from);
        gc_time_format(res->end, to);
        GC__TRY(gc_buf_puts(out, "## Savings\n\n"));
        if (!res->n_findings_total) {
                GC__TRY(gc_buf_printf(out, "No savings found from %s to %s.\n", from, to));
        } else {
                gc_report_money(res->monthly_savings, cur, money);
                GC__TRY(gc_buf_printf(out,
                                      "Estimated savings: **%s a month** from %zu finding(s), "
                                      "measured from %s to %s (a month is %g hours).\n",
                                      money, res->n_findings_total, from, to,
                                      res->hours_per_month));
        }
        if (res->has_usage)
                GC__TRY(gc_buf_printf(out,
                                      "\nMeasured GPU use: %zu of %zu GPU pods (%zu with too few "
                                      "samples).\n",
                                      res->pods_measured, res->pods, res->pods_insufficient));
        else
                GC__TRY(gc_buf_puts(out, "\nNo usage data: only cost-based findings.\n"));
        rows = res->n_findings < GC__MD_ROWS ? res->n_findings : GC__MD_ROWS;
        if (rows) {
                GC__TRY(gc_buf_puts(out, "\n| # | finding | subject | team | saving / month | "
                                         "evidence |\n|---|---|---|---|---:|---|\n"));
                gc_buf_init(&cell, 4096);
                for (size_t i = 0; i < rows && r >= 0; i++) {
                        const gc_finding *f = &res->findings[i];

                        r = gc_buf_printf(out, "| %zu | %s | ", i + 1,
                                          gc_finding_kind_name(f->kind));
                        gc_buf_reset(&cell);
                        if (r >= 0 && (r = gc__md_subject(&cell, f)) >= 0)
                                r = gc__md_cell(out, cell.data);
                        if (r >= 0)
                                r = gc_buf_puts(out, " | ");
                        if (r >= 0)
                                r = gc__md_cell(out, f->team ? f->team : "");
                        gc_report_money(f->monthly_savings, cur, money);
                        if (r >= 0)
                                r = gc_buf_printf(out, " | %s | ", money);
                        gc_buf_reset(&cell);
                        if (r >= 0 && (r = gc__md_evidence(&cell, f, cur)) >= 0)
                                r = gc__md_cell(out, cell.data);
                        if (r >= 0)
                                r = gc_buf_puts(out, " |\n");
                }
                gc_buf_free(&cell);
                if (r < 0)
                        return r;
                if (res->n_findings_total > rows)
                        GC__TRY(gc_buf_printf(out,
                                              "\n%zu more finding(s) in report.json and "
                                              "/api/v1/recommendations.\n",
                                              res->n_findings_total - rows));
                GC__TRY(gc_buf_puts(out, "\n### Changes\n\n"));
                for (size_t i = 0; i < rows; i++) {
                        const gc_finding *f = &res->findings[i];

                        gc_report_money(f->monthly_savings, cur, money);
                        GC__TRY(gc_buf_printf(out, "%zu. **%s** (%s a month): %s\n", i + 1,
                                              gc_finding_kind_name(f->kind), money,
                                              f->summary ? f->summary : ""));
                        if (f->stanza)
                                GC__TRY(gc__md_block(out, f->stanza));
                }
        }
        if (res->n_notes) {
                GC__TRY(gc_buf_puts(out, "\n### Notes\n\n"));
                for (size_t i = 0; i < res->n_notes; i++)
                        GC__TRY(gc_buf_printf(out, "- %s\n", res->notes[i]));
                if (res->n_notes_total > res->n_notes)
                        GC__TRY(gc_buf_printf(out, "- and %zu more note(s)\n",
                                              res->n_notes_total - res->n_notes));
        }
        return 0;
}
