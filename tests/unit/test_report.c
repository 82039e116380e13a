/* Unit tests for pkg/report: summary JSON/table/Markdown, rounding, ISO weeks, period reports. */
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "ledger/ledger.h"
#include "report/report.h"
#include "report/report_internal.h"
#include "util/util.h"

#define LIMIT (1u << 20)
#define HOUR  3600
#define DAY   86400

static int64_t t_at(const char *s)
{
        int64_t t = 0;

        ck_assert_int_eq(gc_time_parse(s, strlen(s), &t), 0);
        return t;
}

static cJSON *parse(const gc_buf *b)
{
        cJSON *j = cJSON_ParseWithLength(b->data, b->len);

        ck_assert_msg(j != NULL, "output does not parse as JSON: %s", b->data);
        return j;
}

static cJSON *get(const cJSON *o, const char *name)
{
        cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

        ck_assert_msg(v != NULL, "missing member \"%s\"", name);
        return v;
}

static double num(const cJSON *o, const char *name)
{
        cJSON *v = get(o, name);

        ck_assert_msg(cJSON_IsNumber(v), "member \"%s\" is not a number", name);
        return v->valuedouble;
}

static const char *str(const cJSON *o, const char *name)
{
        cJSON *v = get(o, name);

        ck_assert_msg(cJSON_IsString(v), "member \"%s\" is not a string", name);
        return v->valuestring;
}

/* ---- a hand-built summary ---------------------------------------------------------------------
 */

/*
 * Three groups by team, project over the week of 2026-11-16:
 *   ml/train   10 h   $1,234.50  3 pods (1 estimate)
 *   web/search  2 h     $100.25  1 pod
 *   __unattributed__/__unattributed__  0.5 h  $12.125  1 pod
 * total 12.5 h, $1,346.875, 5 pods; capacity 48 h $4,000; idle 35.5 h $2,653.125 on two nodes.
 */
static void fill_summary(gc_cost_summary *s, gc_cost_row rows[3], gc_cost_row idle[2])
{
        memset(s, 0, sizeof(*s));
        memset(rows, 0, 3 * sizeof(*rows));
        memset(idle, 0, 2 * sizeof(*idle));
        s->start = t_at("2026-11-16T00:00:00Z");
        s->end = t_at("2026-11-23T00:00:00Z");
        s->by[0] = GC_DIM_TEAM;
        s->by[1] = GC_DIM_PROJECT;
        s->n_by = 2;
        rows[0].keys[GC_DIM_TEAM] = "ml";
        rows[0].keys[GC_DIM_PROJECT] = "train";
        rows[0].gpu_seconds = 36000;
        rows[0].cost = 1234.5;
        rows[0].pods = 3;
        rows[0].estimates = 1;
        rows[1].keys[GC_DIM_TEAM] = "web";
        rows[1].keys[GC_DIM_PROJECT] = "search";
        rows[1].gpu_seconds = 7200;
        rows[1].cost = 100.25;
        rows[1].pods = 1;
        rows[2].keys[GC_DIM_TEAM] = GC_UNATTRIBUTED;
        rows[2].keys[GC_DIM_PROJECT] = GC_UNATTRIBUTED;
        rows[2].gpu_seconds = 1800;
        rows[2].cost = 12.125;
        rows[2].pods = 1;
        s->rows = rows;
        s->n_rows = 3;
        s->total.gpu_seconds = 45000;
        s->total.cost = 1346.875;
        s->total.pods = 5;
        s->total.estimates = 1;
        s->unattributed.gpu_seconds = 1800;
        s->unattributed.cost = 12.125;
        s->unattributed.pods = 1;
        s->capacity.gpu_seconds = 172800;
        s->capacity.cost = 4000;
        s->idle.gpu_seconds = 127800;
        s->idle.cost = 2653.125;
        idle[0].keys[GC_DIM_NODE] = "node-a";
        idle[0].keys[GC_DIM_MODEL] = "NVIDIA-A100-SXM4-80GB";
        idle[0].keys[GC_DIM_CAPACITY_TYPE] = "on-demand";
        idle[0].gpu_seconds = 100000;
        idle[0].cost = 2000;
        idle[1].keys[GC_DIM_NODE] = "node-b";
        idle[1].keys[GC_DIM_MODEL] = "NVIDIA-H100-80GB-HBM3";
        idle[1].keys[GC_DIM_CAPACITY_TYPE] = "spot";
        idle[1].gpu_seconds = 27800;
        idle[1].cost = 653.125;
        s->idle_nodes = idle;
        s->n_idle_nodes = 2;
}

START_TEST(summary_json_shape)
{
        gc_cost_summary s;
        gc_cost_row rows[3], idle[2];
        gc_buf b;
        cJSON *j, *g, *o, *n;

        fill_summary(&s, rows, idle);
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_summary_json(&s, NULL, &b), 0);
        j = parse(&b);

        o = get(j, "window");
        ck_assert_str_eq(str(o, "start"), "2026-11-16T00:00:00Z");
        ck_assert_str_eq(str(o, "end"), "2026-11-23T00:00:00Z");
        o = get(j, "by");
        ck_assert_int_eq(cJSON_GetArraySize(o), 2);
        ck_assert_str_eq(cJSON_GetArrayItem(o, 0)->valuestring, "team");
        ck_assert_str_eq(cJSON_GetArrayItem(o, 1)->valuestring, "project");
        ck_assert_str_eq(str(j, "currency"), "USD");

        g = get(j, "groups");
        ck_assert_int_eq(cJSON_GetArraySize(g), 3);
        o = cJSON_GetArrayItem(g, 0);
        ck_assert_str_eq(str(get(o, "keys"), "team"), "ml");
        ck_assert_str_eq(str(get(o, "keys"), "project"), "train");
        ck_assert_int_eq(cJSON_GetArraySize(get(o, "keys")), 2);
        ck_assert(num(o, "gpu_hours") == 10.0);
        ck_assert(num(o, "gpu_seconds") == 36000.0);
        ck_assert(num(o, "cost_usd") == 1234.5);
        ck_assert(num(o, "pods") == 3);
        ck_assert(num(o, "estimates") == 1);
        o = cJSON_GetArrayItem(g, 2);
        ck_assert_str_eq(str(get(o, "keys"), "team"), "__unattributed__");
        ck_assert(num(o, "gpu_hours") == 0.5);
        ck_assert(num(o, "cost_usd") == 12.125);

        o = get(j, "idle");
        ck_assert(num(o, "gpu_hours") == 35.5);
        ck_assert(num(o, "gpu_seconds") == 127800.0);
        ck_assert(num(o, "cost_usd") == 2653.125);
        n = get(o, "nodes");
        ck_assert_int_eq(cJSON_GetArraySize(n), 2);
        o = cJSON_GetArrayItem(n, 1);
        ck_assert_str_eq(str(o, "node"), "node-b");
        ck_assert_str_eq(str(o, "model"), "NVIDIA-H100-80GB-HBM3");
        ck_assert_str_eq(str(o, "capacity_type"), "spot");
        ck_assert(num(o, "gpu_seconds") == 27800.0);
        ck_assert(num(o, "gpu_hours") == 27800.0 / 3600.0);
        ck_assert(num(o, "cost_usd") == 653.125);

        o = get(j, "unattributed");
        ck_assert(num(o, "gpu_hours") == 0.5);
        ck_assert(num(o, "cost_usd") == 12.125);
        ck_assert(num(o, "pods") == 1);
        o = get(j, "capacity");
        ck_assert(num(o, "gpu_hours") == 48.0);
        ck_assert(num(o, "cost_usd") == 4000.0);
        o = get(j, "total");
        ck_assert(num(o, "gpu_hours") == 12.5);
        ck_assert(num(o, "gpu_seconds") == 45000.0);
        ck_assert(num(o, "cost_usd") == 1346.875);
        ck_assert(num(o, "pods") == 5);
        ck_assert(num(o, "estimates") == 1);
        cJSON_Delete(j);
        gc_buf_free(&b);
}
END_TEST

/* Full precision: a third, 0.1+0.2 and a tiny amount read back as the same doubles. */
START_TEST(summary_json_precision)
{
        gc_cost_summary s;
        gc_cost_row rows[3], idle[2];
        gc_buf b;
        cJSON *j, *g;

        fill_summary(&s, rows, idle);
        rows[0].cost = 1.0 / 3.0;
        rows[1].cost = 0.1 + 0.2;
        rows[2].cost = 1e-300;
        s.capacity.cost = NAN;
        s.idle.cost = INFINITY;
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_summary_json(&s, "EUR", &b), 0);
        ck_assert_ptr_null(strstr(b.data, "nan"));
        ck_assert_ptr_null(strstr(b.data, "inf"));
        j = parse(&b);
        g = get(j, "groups");
        ck_assert(num(cJSON_GetArrayItem(g, 0), "cost_usd") == 1.0 / 3.0);
        ck_assert(num(cJSON_GetArrayItem(g, 1), "cost_usd") == 0.1 + 0.2);
        ck_assert(num(cJSON_GetArrayItem(g, 2), "cost_usd") == 1e-300);
        ck_assert(cJSON_IsNull(get(get(j, "capacity"), "cost_usd")));
        ck_assert(cJSON_IsNull(get(get(j, "idle"), "cost_usd")));
        ck_assert_str_eq(str(j, "currency"), "EUR");
        /* The shortest form: 1234.5 is written as such, not as 1234.5000000000000. */
        ck_assert_ptr_nonnull(strstr(b.data, "\"gpu_seconds\":36000,"));
        cJSON_Delete(j);
        gc_buf_free(&b);
}
END_TEST

START_TEST(summary_json_escaping)
{
        static const char odd[] = "a\"b\\c\nd\x01|\xc3\xa9";
        gc_cost_summary s;
        gc_cost_row rows[3], idle[2];
        gc_buf b;
        cJSON *j;

        fill_summary(&s, rows, idle);
        rows[0].keys[GC_DIM_TEAM] = odd;
        rows[1].keys[GC_DIM_PROJECT] = NULL; /* NULL counts as "" */
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_summary_json(&s, NULL, &b), 0);
        j = parse(&b);
        ck_assert_str_eq(str(get(cJSON_GetArrayItem(get(j, "groups"), 0), "keys"), "team"), odd);
        ck_assert_str_eq(str(get(cJSON_GetArrayItem(get(j, "groups"), 1), "keys"), "project"), "");
        cJSON_Delete(j);

        /* The text table never passes control bytes to the terminal; Markdown escapes the pipe. */
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_summary_table(&s, NULL, &b), 0);
        ck_assert_ptr_nonnull(strstr(b.data, "a\"b\\c?d?|\xc3\xa9"));
        ck_assert_ptr_null(strchr(b.data, '\x01'));
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_summary_markdown(&s, NULL, &b), 0);
        ck_assert_ptr_nonnull(strstr(b.data, "| a\"b\\\\c d \\|\xc3\xa9 "));
        ck_assert_ptr_nonnull(strstr(b.data, "\\_\\_unattributed\\_\\_"));
        ck_assert_ptr_nonnull(strstr(b.data, "| (none) "));
        gc_buf_free(&b);
}
END_TEST

START_TEST(summary_deterministic)
{
        gc_cost_summary s;
        gc_cost_row rows[3], idle[2];
        gc_buf a, b;
        int (*fn[])(const gc_cost_summary *, const char *, gc_buf *) = {
            gc_report_summary_json, gc_report_summary_table, gc_report_summary_markdown};

        fill_summary(&s, rows, idle);
        for (size_t i = 0; i < 3; i++) {
                gc_buf_init(&a, LIMIT);
                gc_buf_init(&b, LIMIT);
                ck_assert_int_eq(fn[i](&s, NULL, &a), 0);
                ck_assert_int_eq(fn[i](&s, NULL, &b), 0);
                ck_assert_uint_eq(a.len, b.len);
                ck_assert_mem_eq(a.data, b.data, a.len);
                gc_buf_free(&a);
                gc_buf_free(&b);
        }
}
END_TEST

static int summary_render(int how, const gc_cost_summary *s, gc_buf *b)
{
        const gc_chargeback cb = {.mode = GC_CHARGEBACK_PROPORTIONAL};

        switch (how) {
        case 0:
                return gc_report_summary_json(s, "EUR", b);
        case 1:
                return gc_report_summary_json_chargeback(s, "EUR", &cb, b);
        case 2:
                return gc_report_summary_table(s, "EUR", b);
        default:
                return gc_report_summary_markdown(s, "EUR", b);
        }
}

/* At every limit short of the whole summary: -E2BIG and the buffer as it was; then whole. */
START_TEST(summary_every_limit)
{
        gc_cost_summary s;
        gc_cost_row rows[3], idle[2];

        fill_summary(&s, rows, idle);
        for (int how = 0; how < 4; how++) {
                gc_buf whole, b;

                gc_buf_init(&whole, LIMIT);
                ck_assert_int_eq(summary_render(how, &s, &whole), 0);
                if (how == 1)
                        ck_assert_ptr_nonnull(strstr(whole.data, "\"chargeback\":{"));
                for (size_t limit = 0; limit < whole.len; limit++) {
                        gc_buf_init(&b, limit);
                        ck_assert_int_eq(summary_render(how, &s, &b), -E2BIG);
                        ck_assert_uint_eq(b.len, 0);
                        gc_buf_free(&b);
                }
                gc_buf_init(&b, whole.len);
                ck_assert_int_eq(summary_render(how, &s, &b), 0);
                ck_assert_str_eq(b.data, whole.data);
                gc_buf_free(&b);
                gc_buf_free(&whole);
        }
}
END_TEST

/* Appends to what the buffer holds; over its limit the buffer is left as it was. */
START_TEST(summary_bounded)
{
        gc_cost_summary s;
        gc_cost_row rows[3], idle[2];
        gc_buf b;
        int (*fn[])(const gc_cost_summary *, const char *, gc_buf *) = {
            gc_report_summary_json, gc_report_summary_table, gc_report_summary_markdown};

        fill_summary(&s, rows, idle);
        for (size_t i = 0; i < 3; i++) {
                gc_buf_init(&b, 64);
                ck_assert_int_eq(gc_buf_puts(&b, "kept"), 0);
                ck_assert_int_eq(fn[i](&s, NULL, &b), -E2BIG);
                ck_assert_str_eq(b.data, "kept");
                ck_assert_int_eq(fn[i](NULL, NULL, &b), -EINVAL);
                gc_buf_free(&b);
        }
        s.by[1] = GC_DIM_TEAM; /* a repeated dimension would repeat a JSON member */
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_summary_json(&s, NULL, &b), -EINVAL);
        gc_buf_free(&b);
}
END_TEST

/* Three thirds of a dollar: the displayed rows must still add up to $1.00 and 100.0%. */
static void fill_thirds(gc_cost_summary *s, gc_cost_row rows[3])
{
        static const char *const teams[] = {"alpha", "beta", "gamma"};

        memset(s, 0, sizeof(*s));
        memset(rows, 0, 3 * sizeof(*rows));
        s->start = t_at("2026-11-20T00:00:00Z");
        s->end = t_at("2026-11-21T00:00:00Z");
        s->by[0] = GC_DIM_TEAM;
        s->n_by = 1;
        for (int i = 0; i < 3; i++) {
                rows[i].keys[GC_DIM_TEAM] = teams[i];
                rows[i].gpu_seconds = 1200;
                rows[i].cost = 1.0 / 3.0;
                rows[i].pods = 1;
        }
        s->rows = rows;
        s->n_rows = 3;
        s->total.gpu_seconds = 3600;
        s->total.cost = 1.0;
        s->total.pods = 3;
}

/* The line of out that starts with prefix. */
static const char *line_of(const char *out, const char *prefix)
{
        const char *p = out;

        while (p && *p) {
                if (strncmp(p, prefix, strlen(prefix)) == 0)
                        return p;
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        ck_abort_msg("no line starts with \"%s\" in:\n%.3000s", prefix, out);
        return NULL;
}

/* Column of the end of needle within its line. */
static long end_col(const char *line, const char *needle)
{
        const char *nl = strchr(line, '\n');
        const char *p = strstr(line, needle);

        ck_assert_msg(p && (!nl || p < nl), "\"%s\" not on the line", needle);
        return (long)(p - line) + (long)strlen(needle);
}

/* Splits a Markdown table line into its cells, trimmed; returns how many (at most max). */
static size_t md_cells(const char *line, char cells[][128], size_t max)
{
        const char *nl = strchr(line, '\n');
        const char *start = line + 1;
        size_t n = 0;

        if (!nl)
                nl = line + strlen(line);
        if (*line != '|')
                return 0;
        for (const char *p = start; p < nl && n < max; p++) {
                const char *a = start, *z = p;

                if (*p != '|' || p[-1] == '\\')
                        continue;
                while (a < z && *a == ' ')
                        a++;
                while (z > a && z[-1] == ' ')
                        z--;
                ck_assert_uint_lt((size_t)(z - a), 128);
                memcpy(cells[n], a, (size_t)(z - a));
                cells[n++][z - a] = '\0';
                start = p + 1;
        }
        return n;
}

/* Some line of the Markdown out is a table row with exactly these cells (NULL-terminated). */
static void md_row(const char *out, const char *const want[])
{
        size_t n_want = 0;

        while (want[n_want])
                n_want++;
        for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
                char cells[16][128];
                size_t n = md_cells(p, cells, 16), k;

                if (n != n_want)
                        continue;
                for (k = 0; k < n && strcmp(cells[k], want[k]) == 0; k++)
                        ;
                if (k == n)
                        return;
        }
        ck_abort_msg("no row | %s | %s | ... in:\n%s", want[0], want[1] ? want[1] : "", out);
}

/* n full blocks, the day bar's unit (only one bar is in use at a time) */
static const char *bar(int n)
{
        static char b[3 * 32 + 1];

        ck_assert_int_le(n, 32);
        for (int i = 0; i < n; i++)
                memcpy(b + 3 * i, "\u2588", 3);
        b[3 * n] = '\0';
        return b;
}

#define ROW(out, ...) md_row(out, (const char *const[]){__VA_ARGS__, NULL})

START_TEST(summary_table_adds_up)
{
        gc_cost_summary s;
        gc_cost_row rows[3];
        gc_buf b;
        const char *head, *l;

        fill_thirds(&s, rows);
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_summary_table(&s, NULL, &b), 0);
        head = line_of(b.data, "TEAM");
        /* Largest remainder: the first of three equal remainders takes the extra cent. */
        l = line_of(b.data, "alpha");
        ck_assert_int_eq(end_col(l, "$0.34"), end_col(head, "COST"));
        ck_assert_int_eq(end_col(l, "0.34"), end_col(head, "GPU-HOURS"));
        ck_assert_int_eq(end_col(l, "33.4%"), end_col(head, "SHARE"));
        l = line_of(b.data, "beta");
        ck_assert_int_eq(end_col(l, "$0.33"), end_col(head, "COST"));
        ck_assert_int_eq(end_col(l, "33.3%"), end_col(head, "SHARE"));
        l = line_of(b.data, "gamma");
        ck_assert_int_eq(end_col(l, "$0.33"), end_col(head, "COST"));
        l = line_of(b.data, "Total");
        ck_assert_int_eq(end_col(l, "$1.00"), end_col(head, "COST"));
        ck_assert_int_eq(end_col(l, "1.00"), end_col(head, "GPU-HOURS"));
        ck_assert_int_eq(end_col(l, "100.0%"), end_col(head, "SHARE"));
        ck_assert_int_eq(end_col(l, "3"), end_col(head, "PODS"));
        line_of(b.data, "Idle capacity (not in total)");
        line_of(b.data, "Unattributed (included above)");
        ck_assert_ptr_null(strstr(b.data, " \n")); /* no trailing blanks */
        gc_buf_free(&b);
}
END_TEST

START_TEST(summary_table_money)
{
        gc_cost_summary s;
        gc_cost_row rows[3], idle[2];
        gc_buf b;

        fill_summary(&s, rows, idle);
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_summary_table(&s, NULL, &b), 0);
        /* $1,346.875 is $1,346.88; rows 1,234.50 + 100.25 + 12.13 (12.125 takes the cent). */
        ck_assert_ptr_nonnull(strstr(line_of(b.data, "ml "), "$1,234.50"));
        ck_assert_ptr_nonnull(strstr(line_of(b.data, "ml "), "91.7%"));
        ck_assert_ptr_nonnull(strstr(line_of(b.data, "web "), "$100.25"));
        ck_assert_ptr_nonnull(strstr(line_of(b.data, "__unattributed__"), "$12.13"));
        ck_assert_ptr_nonnull(strstr(line_of(b.data, "Total"), "$1,346.88"));
        ck_assert_ptr_nonnull(strstr(line_of(b.data, "Total"), "12.50"));
        ck_assert_ptr_nonnull(strstr(line_of(b.data, "Idle capacity"), "$2,653.13"));
        ck_assert_ptr_nonnull(strstr(line_of(b.data, "Idle capacity"), "35.50"));
        ck_assert_ptr_nonnull(strstr(line_of(b.data, "Unattributed"), "$12.13"));
        /* Shares 91.66, 7.44, 0.90 (tenths 916.59, 74.43, 9.00 -> 917, 74, 9). */
        ck_assert_ptr_nonnull(strstr(line_of(b.data, "web "), "7.4%"));
        ck_assert_ptr_nonnull(strstr(line_of(b.data, "__unattributed__"), "0.9%"));

        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_summary_table(&s, "EUR", &b), 0);
        ck_assert_ptr_nonnull(strstr(line_of(b.data, "ml "), "1,234.50 EUR"));
        ck_assert_ptr_null(strchr(b.data, '$'));
        gc_buf_free(&b);
}
END_TEST

START_TEST(summary_markdown)
{
        gc_cost_summary s;
        gc_cost_row rows[3];
        gc_buf b;

        fill_thirds(&s, rows);
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_summary_markdown(&s, NULL, &b), 0);
        ck_assert_ptr_nonnull(strstr(b.data, "| Team "));
        ck_assert_ptr_nonnull(strstr(b.data, "| GPU-hours | "));
        ROW(b.data, "Team", "GPU-hours", "Cost", "Share", "Pods");
        ROW(b.data, "-------------------------------",
            "--------:", "--------:", "---------:", "----:");
        ROW(b.data, "alpha", "0.34", "$0.34", "33.4%", "1");
        ROW(b.data, "beta", "0.33", "$0.33", "33.3%", "1");
        ROW(b.data, "gamma", "0.33", "$0.33", "33.3%", "1");
        ROW(b.data, "_Idle capacity (not in total)_", "0.00", "$0.00", "", "");
        ROW(b.data, "_Unattributed (included above)_", "0.00", "$0.00", "0.0%", "0");
        ROW(b.data, "**Total**", "**1.00**", "**$1.00**", "**100.0%**", "**3**");
        /* Every line of the table has as many cells as the heading. */
        for (const char *p = b.data; *p;) {
                const char *nl = strchr(p, '\n');
                int pipes = 0;

                for (const char *q = p; q < nl; q++)
                        pipes += *q == '|' && (q == p || q[-1] != '\\');
                ck_assert_int_eq(pipes, 6); /* five cells */
                p = nl + 1;
        }
        gc_buf_free(&b);
}
END_TEST

/* ---- rounding and money, table-driven ------------------------------------------------------- */

static const struct {
        double v[4];
        size_t n;
        double total;
        double scale;
        int64_t want[4];
        int64_t want_total;
        int independent;
} round_cases[] = {
    {{1.0 / 3, 1.0 / 3, 1.0 / 3}, 3, 1.0, 100, {34, 33, 33}, 100, 0},
    {{0.005, 0.005, 0.005, 0.005}, 4, 0.02, 100, {1, 1, 0, 0}, 2, 0},
    {{10.004, 20.006, 30.002}, 3, 60.012, 100, {1000, 2001, 3000}, 6001, 0},
    {{2.0 / 3, 1.0 / 3}, 2, 1.0, 100, {67, 33}, 100, 0},
    {{1.25, 2.5}, 2, 3.75, 10, {13, 25}, 38, 0},
    {{0, 0}, 2, 0, 100, {0, 0}, 0, 0},
    {{5.0}, 1, 5.0, 100, {500}, 500, 0},
    {{0}, 0, 0, 100, {0}, 0, 0},
    /* a total that is not the sum: each row on its own, the total as it is */
    {{1.004, 1.004}, 2, 5.0, 100, {100, 100}, 500, 1},
    {{NAN, 1.0}, 2, 1.0, 100, {0, 100}, 100, 1},
    /* negative amounts (a refund) round the same way */
    {{-0.334, -0.666}, 2, -1.0, 100, {-33, -67}, -100, 0},
};

START_TEST(round_table)
{
        int64_t got[4] = {0}, total = -1;
        int r =
            gc_report__round_to_total(round_cases[_i].v, round_cases[_i].n, round_cases[_i].total,
                                      round_cases[_i].scale, got, &total);

        ck_assert_int_eq(r, round_cases[_i].independent);
        ck_assert_int_eq(total, round_cases[_i].want_total);
        for (size_t k = 0; k < round_cases[_i].n; k++)
                ck_assert_msg(got[k] == round_cases[_i].want[k], "case %d row %zu: %lld != %lld",
                              _i, k, (long long)got[k], (long long)round_cases[_i].want[k]);
}
END_TEST

static const struct {
        int64_t cents;
        const char *currency;
        const char *want;
} money_cases[] = {
    {0, NULL, "$0.00"},
    {5, "USD", "$0.05"},
    {99, "usd", "$0.99"},
    {100000, "", "$1,000.00"},
    {1234567, NULL, "$12,345.67"},
    {123456789, NULL, "$1,234,567.89"},
    {-150, NULL, "-$1.50"},
    {-123456, NULL, "-$1,234.56"},
    {123456, "EUR", "1,234.56 EUR"},
    {-5, "GBP", "-0.05 GBP"},
    {100, "A B\x01", "1.00 A?B?"},
    {INT64_MAX, NULL, "$92,233,720,368,547,758.07"},
    {INT64_MIN, NULL, "-$92,233,720,368,547,758.08"},
};

START_TEST(money_table)
{
        char out[GC_REPORT__TEXT_LEN];

        gc_report__money(money_cases[_i].cents, money_cases[_i].currency, out);
        ck_assert_str_eq(out, money_cases[_i].want);
}
END_TEST

static const struct {
        double v;
        const char *want;
} num_cases[] = {
    {0, "0"},
    {-0.0, "0"},
    {1, "1"},
    {0.5, "0.5"},
    {1234.5, "1234.5"},
    {36000, "36000"},
    {172800, "172800"},
    {-2.25, "-2.25"},
    {0.1, "0.1"},
    {1e-5, "0.00001"},
    {1.5e-7, "0.00000015"},
    {1e-8, "1e-08"},
    {1e20, "100000000000000000000"},
    {1e21, "1e+21"},
    {27800.0 / 3600.0, "7.722222222222222"},
    {0.30000000000000004, "0.30000000000000004"},
    {9007199254740993.0, "9007199254740992"},
    {NAN, "null"},
    {INFINITY, "null"},
    {-INFINITY, "null"},
};

START_TEST(num_table)
{
        char out[GC_REPORT__NUM_LEN];

        gc_report__num(num_cases[_i].v, out);
        ck_assert_str_eq(out, num_cases[_i].want);
}
END_TEST

/* ---- ISO weeks ------------------------------------------------------------------------------ */

static const struct {
        const char *t;
        int year, week;
        const char *monday;
} week_cases[] = {
    {"2026-01-01T00:00:00Z", 2026, 1, "2025-12-29T00:00:00Z"},  /* a Thursday */
    {"2027-01-01T12:00:00Z", 2026, 53, "2026-12-28T00:00:00Z"}, /* a Friday */
    {"2024-12-30T00:00:00Z", 2025, 1, "2024-12-30T00:00:00Z"},  /* a Monday */
    {"2024-12-29T23:59:59Z", 2024, 52, "2024-12-23T00:00:00Z"}, /* the Sunday before */
    {"2026-11-20T09:15:03Z", 2026, 47, "2026-11-16T00:00:00Z"},
    {"2026-11-16T00:00:00Z", 2026, 47, "2026-11-16T00:00:00Z"},
    {"2026-11-22T23:59:59Z", 2026, 47, "2026-11-16T00:00:00Z"},
    {"2021-01-03T00:00:00Z", 2020, 53, "2020-12-28T00:00:00Z"},
    {"2008-12-29T00:00:00Z", 2009, 1, "2008-12-29T00:00:00Z"},
    {"2010-01-03T00:00:00Z", 2009, 53, "2009-12-28T00:00:00Z"},
    {"1970-01-01T00:00:00Z", 1970, 1, "1969-12-29T00:00:00Z"},
    {"1969-12-31T23:00:00Z", 1970, 1, "1969-12-29T00:00:00Z"},
};

START_TEST(iso_week_table)
{
        int year = 0, week = 0;
        int64_t monday = 0;

        gc_iso_week(t_at(week_cases[_i].t), &year, &week, &monday);
        ck_assert_int_eq(year, week_cases[_i].year);
        ck_assert_int_eq(week, week_cases[_i].week);
        ck_assert_int_eq(monday, t_at(week_cases[_i].monday));
}
END_TEST

/* ---- period reports over a small ledger ----------------------------------------------------- */

#define A100 "NVIDIA-A100-SXM4-80GB"
#define H100 "NVIDIA-H100-80GB-HBM3"

typedef struct fixture {
        gc_strpool *pool;
        gc_ledger *l;
        int64_t t0; /* Monday 2026-11-16 00:00 UTC */
} fixture;

/* The fixture's pods' top-level owners (Kind/namespace/name); p2 has none, so it is its own. */
static const char *workload_of(const char *uid)
{
        static const char *const owners[][2] = {
            {"p0", "Deployment/ml/trainer"},  {"p1", "Deployment/ml/trainer"},
            {"p6", "Deployment/ml/trainer"},  {"p2", "Pod/ml/p2"},
            {"p3", "StatefulSet/web/search"}, {"p5", "StatefulSet/web/search"},
            {"p4", "CronJob/scratch/probe"},
        };

        for (size_t i = 0; i < sizeof(owners) / sizeof(owners[0]); i++)
                if (strcmp(owners[i][0], uid) == 0)
                        return owners[i][1];
        return NULL;
}

/* The label keys fill_ledger's ledger keeps (period_labels), and each pod's cost-center. */
static const char *const *fill_keys;
static size_t n_fill_keys;

static const char *cost_center_of(const char *uid)
{
        if (!strcmp(uid, "p1") || !strcmp(uid, "p6") || !strcmp(uid, "p0"))
                return "cc-ml";
        return strcmp(uid, "p3") && strcmp(uid, "p5") ? NULL : "cc-web";
}

static void put_pod(fixture *f, const char *uid, const char *ns, const char *team,
                    const char *project, const char *node, const char *model, const char *ct,
                    double geq, double price, int64_t start, int64_t end, uint32_t flags)
{
        gc_usage u;

        memset(&u, 0, sizeof(u));
        u.labels[0] = cost_center_of(uid);
        u.pod_uid = uid;
        u.dims[GC_DIM_NAMESPACE] = ns;
        u.dims[GC_DIM_TEAM] = team;
        u.dims[GC_DIM_PROJECT] = project;
        u.dims[GC_DIM_MODEL] = model;
        u.dims[GC_DIM_CAPACITY_TYPE] = ct;
        u.dims[GC_DIM_NODE] = node;
        u.dims[GC_DIM_POD] = uid;
        u.dims[GC_DIM_WORKLOAD] = workload_of(uid);
        u.geq = geq;
        u.price_per_gpu_hour = price;
        u.start = start;
        u.end = end;
        u.flags = flags;
        ck_assert_int_eq(gc_ledger_put_usage(f->l, &u), 0);
}

static void put_node(fixture *f, const char *node, const char *model, const char *ct, double geq,
                     double price, int64_t start)
{
        gc_capacity c;

        memset(&c, 0, sizeof(c));
        c.node = node;
        c.model = model;
        c.capacity_type = ct;
        c.geq = geq;
        c.price_per_gpu_hour = price;
        c.start = start;
        c.end = GC_OPEN;
        ck_assert_int_eq(gc_ledger_put_capacity(f->l, &c), 0);
}

/*
 * The week of Monday 2026-11-16 (t0), with node-a (4 A100, on-demand, $4/GPU-hour) and node-b
 * (2 H100, spot, $2.50/GPU-hour), both present since two weeks before:
 *   p1 ml/train    node-a 2 GPUs  Mon 00:00-10:00          20 GPU-h  $80
 *   p6 ml/train    node-a 1 GPU   Sun(prev) 22:00-Mon 03:00 3 GPU-h  $12 (2 h, $8 the week before)
 *   p2 ml/infer    node-b MIG 1g.10gb = 1/7 GPU, Tue 00:00-07:00  1 GPU-h $2.50
 *   p3 web/search  node-a 1 GPU   Wed 12:00-Thu 06:00      18 GPU-h  $72 (Wed $48, Thu $24)
 *   p4 unattributed (namespace scratch) node-b 1 GPU Fri 00:00-02:00  2 GPU-h $5, an estimate
 *   p5 web/search  node-a 1 GPU   Sun 20:00-still running  4 GPU-h  $16 (to the period's end)
 *   p0 ml/train    node-a 1 GPU   the Monday before, 25 h  (previous week only: $100)
 * This week: 48 GPU-h, $187.50, 6 pods. Previous week: 27 GPU-h, $108, 2 pods.
 * Workloads this week: Deployment/ml/trainer (p1, p6) 23 GPU-h $92, StatefulSet/web/search (p3,
 * p5) 22 GPU-h $88, CronJob/scratch/probe (p4) 2 GPU-h $5, and the bare Pod/ml/p2 1 GPU-h $2.50.
 * Capacity: node-a 672 GPU-h $2,688; node-b 336 GPU-h $840. Idle: node-a 627 GPU-h $2,508,
 * node-b 333 GPU-h $832.50; $3,340.50 in all.
 */
static void fill_ledger(fixture *f)
{
        gc_ledger_opts o;
        int64_t t0 = t_at("2026-11-16T00:00:00Z");

        memset(f, 0, sizeof(*f));
        f->pool = gc_strpool_new(1u << 20);
        ck_assert_ptr_nonnull(f->pool);
        memset(&o, 0, sizeof(o));
        o.pool = f->pool;
        o.label_keys = fill_keys;
        o.n_label_keys = n_fill_keys;
        f->l = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(f->l);
        f->t0 = t0;
        put_node(f, "node-a", A100, "on-demand", 4, 4.0, t0 - 14 * DAY);
        put_node(f, "node-b", H100, "spot", 2, 2.5, t0 - 14 * DAY);
        put_pod(f, "p1", "ml", "ml", "train", "node-a", A100, "on-demand", 2, 4.0, t0,
                t0 + 10 * HOUR, 0);
        put_pod(f, "p6", "ml", "ml", "train", "node-a", A100, "on-demand", 1, 4.0, t0 - 2 * HOUR,
                t0 + 3 * HOUR, 0);
        put_pod(f, "p2", "ml", "ml", "infer", "node-b", H100, "spot", 1.0 / 7.0, 2.5, t0 + DAY,
                t0 + DAY + 7 * HOUR, 0);
        put_pod(f, "p3", "web", "web", "search", "node-a", A100, "on-demand", 1, 4.0,
                t0 + 2 * DAY + 12 * HOUR, t0 + 3 * DAY + 6 * HOUR, 0);
        put_pod(f, "p4", "scratch", GC_UNATTRIBUTED, GC_UNATTRIBUTED, "node-b", H100, "spot", 1,
                2.5, t0 + 4 * DAY, t0 + 4 * DAY + 2 * HOUR, GC_USAGE_F_ESTIMATE);
        put_pod(f, "p5", "web", "web", "search", "node-a", A100, "on-demand", 1, 4.0,
                t0 + 6 * DAY + 20 * HOUR, GC_OPEN, 0);
        put_pod(f, "p0", "ml", "ml", "train", "node-a", A100, "on-demand", 1, 4.0, t0 - 7 * DAY,
                t0 - 7 * DAY + 25 * HOUR, 0);
}

static void free_ledger(fixture *f)
{
        f->l = gc_ledger_free(f->l);
        f->pool = gc_strpool_free(f->pool);
}

static void weekly(const fixture *f, gc_period_report *r, gc_diag *d)
{
        static const char *const extra[] = {"Prices for `spot` capacity are estimates."};

        memset(r, 0, sizeof(*r));
        r->ledger = f->l;
        r->kind = "weekly";
        r->currency = "USD";
        r->start = f->t0;
        r->end = f->t0 + 7 * DAY;
        r->now = f->t0 + 7 * DAY + 5 * HOUR;
        r->top_n = 3;
        r->notes = d;
        r->extra_notes = extra;
        r->n_extra_notes = 1;
        /* More warnings than are kept: the report says how many it leaves out. */
        gc_diag_add(d, "pod a_b/<x>: `odd` *name*");
        for (int i = 1; i < GC_DIAG_KEEP + 3; i++)
                gc_diag_add(d, "pod default/w%d: skipped, no node", i);
}

static double sum_of(const cJSON *arr, const char *member)
{
        double s = 0;
        const cJSON *e;

        cJSON_ArrayForEach(e, arr)
        {
                s += num(e, member);
        }
        return s;
}

/* The first table line after `section` that starts with `row` has every cell, in order. */
static void assert_row_cells(const char *doc, const char *section, const char *row,
                             const char *const *cells)
{
        const char *p = strstr(doc, section), *end, *at;

        ck_assert_msg(p != NULL, "no %s", section);
        p = strstr(p, row);
        ck_assert_msg(p != NULL, "no row %s", row);
        end = strchr(p, '\n');
        at = p;
        for (size_t i = 0; cells[i]; i++) {
                char cell[64];

                snprintf(cell, sizeof(cell), " %s |", cells[i]);
                at = strstr(at, cell);
                ck_assert_msg(at != NULL && at < end, "row %s: no cell %s in order", row, cells[i]);
        }
}

/*
 * The usage basis in a weekly report: two half-GPU pods of ml and web on a time-sliced node-c
 * share one GPU Tue 00:00-04:00 ($4 per GPU-hour: $8 each by allocation), measured 0.9 and 0.1
 * for the first two hours: that pot is 2 h x 2 x 0.5 x $4 = $8, ml gets $7.20 (+$3.20), web
 * $0.80 (-$3.20). The
 * section lists both bases, the difference and the measured part; the total does not change,
 * and a report with no measurement has no such section (period_json and period_markdown).
 */
START_TEST(period_usage_basis)
{
        fixture f;
        gc_period_report r;
        gc_diag d = {0};
        gc_buf b, j;
        cJSON *doc, *u, *team;
        int64_t tue;
        const char *ka[] = {"u-ml"}, *kb[] = {"u-web"};
        gc_use_holder h[2] = {{ka, 1, 0.9}, {kb, 1, 0.1}};

        fill_ledger(&f);
        tue = f.t0 + DAY;
        put_node(&f, "node-c", "Tesla-T4", "on-demand", 1, 4.0, f.t0 - 14 * DAY);
        put_pod(&f, "u-ml", "ml", "ml", "train", "node-c", "Tesla-T4", "on-demand", 0.5, 4.0, tue,
                tue + 4 * HOUR, 0);
        put_pod(&f, "u-web", "web", "web", "search", "node-c", "Tesla-T4", "on-demand", 0.5, 4.0,
                tue, tue + 4 * HOUR, 0);
        for (int64_t at = tue; at < tue + 2 * HOUR; at += 15)
                ck_assert_int_eq(gc_ledger_split_by_use(f.l, at, at + 15, h, 2), 0);
        weekly(&f, &r, &d);
        gc_buf_init(&b, LIMIT);
        gc_buf_init(&j, LIMIT);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        ck_assert_int_eq(gc_report_period_json(&r, &j), 0);
        ck_assert(strstr(b.data, "\n## Usage basis\n") != NULL);
        /* ml: 94.50 + 8 = $102.50 by allocation, $105.70 by usage; web: 88 + 8 = $96.00 and
         * $92.80; the unattributed $5 measured nothing. */
        assert_row_cells(b.data, "## Usage basis", "| ml ",
                         (const char *[]){"$102.50", "$105.70", "+$3.20", "$7.20", NULL});
        assert_row_cells(b.data, "## Usage basis", "| web ",
                         (const char *[]){"$96.00", "$92.80", "-$3.20", "$0.80", NULL});
        assert_row_cells(b.data, "## Usage basis", "| **Total**",
                         (const char *[]){"**$203.50**", "**$203.50**", "**$8.00**", NULL});
        doc = parse(&j);
        u = get(doc, "usage_basis");
        ck_assert_ptr_nonnull(u);
        ck_assert_double_eq_tol(num(u, "measured_cost"), 8.0, 1e-9);
        ck_assert_double_eq_tol(num(get(get(doc, "summary"), "total"), "cost"),
                                num(u, "total_cost"), 1e-9);
        team = cJSON_GetArrayItem(get(u, "teams"), 0);
        ck_assert_double_eq_tol(num(team, "usage_cost") - num(team, "allocation_cost"),
                                num(team, "difference"), 1e-9);
        cJSON_Delete(doc);
        /* Chargeback in the usage basis bills the usage-basis spend ($105.70 for ml), and the
         * bills still add up to the capacity's cost. */
        {
                const gc_chargeback cb = {GC_CHARGEBACK_PROPORTIONAL, NULL, 0, GC_BASIS_USAGE};
                const cJSON *c, *tm;
                double charged = 0;

                r.chargeback = &cb;
                gc_buf_reset(&j);
                ck_assert_int_eq(gc_report_period_json(&r, &j), 0);
                doc = parse(&j);
                c = get(doc, "chargeback");
                ck_assert_str_eq(str(c, "basis"), "usage");
                cJSON_ArrayForEach(tm, get(c, "teams"))
                {
                        if (strcmp(str(tm, "team"), "ml") == 0)
                                ck_assert_double_eq_tol(num(tm, "cost"), 105.70, 1e-9);
                        charged += num(tm, "charged");
                }
                ck_assert_double_eq_tol(charged, num(c, "capacity_cost"), 1e-6);
                cJSON_Delete(doc);
                gc_buf_reset(&b);
                ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
                ck_assert(strstr(b.data, "## Chargeback (proportional, usage basis)") != NULL);
                r.chargeback = NULL;
        }
        gc_buf_free(&b);
        gc_buf_free(&j);
        gc_diag_clear(&d);
        free_ledger(&f);
        /* Without measurements: no section, no member. */
        fill_ledger(&f);
        weekly(&f, &r, &d);
        gc_buf_init(&b, LIMIT);
        gc_buf_init(&j, LIMIT);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        ck_assert_int_eq(gc_report_period_json(&r, &j), 0);
        ck_assert(strstr(b.data, "Usage basis") == NULL);
        ck_assert(strstr(j.data, "usage_basis") == NULL);
        gc_buf_free(&b);
        gc_buf_free(&j);
        gc_diag_clear(&d);
        free_ledger(&f);
}
END_TEST

START_TEST(period_json)
{
        fixture f;
        gc_period_report r;
        gc_diag d = {0};
        gc_buf b;
        cJSON *j, *o, *a, *e;

        fill_ledger(&f);
        weekly(&f, &r, &d);
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_period_json(&r, &b), 0);
        j = parse(&b);
        ck_assert_str_eq(str(j, "kind"), "weekly");
        ck_assert_str_eq(str(j, "title"),
                         "GPU spend, week 2026-W47 (Mon 2026-11-16 \u2013 Sun 2026-11-22, UTC)");
        ck_assert(cJSON_IsNull(get(j, "cluster")));
        ck_assert_str_eq(str(j, "currency"), "USD");
        o = get(j, "period");
        ck_assert_str_eq(str(o, "start"), "2026-11-16T00:00:00Z");
        ck_assert_str_eq(str(o, "end"), "2026-11-23T00:00:00Z");
        ck_assert_str_eq(str(o, "iso_week"), "2026-W47");
        ck_assert(num(o, "days") == 7);

        o = get(j, "previous");
        ck_assert_str_eq(str(o, "start"), "2026-11-09T00:00:00Z");
        ck_assert_str_eq(str(o, "end"), "2026-11-16T00:00:00Z");
        ck_assert(cJSON_IsTrue(get(o, "has_data")));
        ck_assert_double_eq_tol(num(o, "cost_usd"), 108.0, 1e-9);
        ck_assert_double_eq_tol(num(o, "gpu_hours"), 27.0, 1e-9);
        ck_assert(num(o, "pods") == 2);
        o = get(j, "change");
        ck_assert_double_eq_tol(num(o, "cost_usd"), 79.5, 1e-9);
        ck_assert_double_eq_tol(num(o, "percent"), 79.5 / 108.0 * 100.0, 1e-9);

        /* summary: the cost-summary shape by team, project */
        o = get(j, "summary");
        ck_assert_str_eq(cJSON_GetArrayItem(get(o, "by"), 0)->valuestring, "team");
        ck_assert_str_eq(cJSON_GetArrayItem(get(o, "by"), 1)->valuestring, "project");
        ck_assert_int_eq(cJSON_GetArraySize(get(o, "groups")), 4);
        e = cJSON_GetArrayItem(get(o, "groups"), 0);
        ck_assert_str_eq(str(get(e, "keys"), "team"), "ml");
        ck_assert_str_eq(str(get(e, "keys"), "project"), "train");
        ck_assert_double_eq_tol(num(e, "cost_usd"), 92.0, 1e-9);
        ck_assert_double_eq_tol(num(get(o, "total"), "cost_usd"), 187.5, 1e-9);
        ck_assert_double_eq_tol(num(get(o, "total"), "gpu_hours"), 48.0, 1e-9);
        ck_assert(num(get(o, "total"), "pods") == 6);
        ck_assert_double_eq_tol(num(get(o, "capacity"), "cost_usd"), 3528.0, 1e-9);
        ck_assert_double_eq_tol(num(get(o, "idle"), "cost_usd"), 3340.5, 1e-9);

        /* Every figure agrees: by team, by model, by day and the groups all sum to the total. */
        ck_assert_double_eq_tol(sum_of(get(o, "groups"), "cost_usd"), 187.5, 1e-9);
        a = get(j, "by_team");
        ck_assert_int_eq(cJSON_GetArraySize(a), 3);
        ck_assert_double_eq_tol(sum_of(a, "cost_usd"), 187.5, 1e-9);
        ck_assert_double_eq_tol(sum_of(a, "gpu_hours"), 48.0, 1e-9);
        ck_assert_double_eq_tol(sum_of(a, "share"), 1.0, 1e-9);
        e = cJSON_GetArrayItem(a, 0);
        ck_assert_str_eq(str(e, "team"), "ml");
        ck_assert_double_eq_tol(num(e, "cost_usd"), 94.5, 1e-9);
        ck_assert_double_eq_tol(num(e, "gpu_hours"), 24.0, 1e-9);
        ck_assert_double_eq_tol(num(e, "share"), 94.5 / 187.5, 1e-12);
        ck_assert(num(e, "pods") == 3);
        e = cJSON_GetArrayItem(a, 1);
        ck_assert_str_eq(str(e, "team"), "web");
        ck_assert_double_eq_tol(num(e, "cost_usd"), 88.0, 1e-9);
        e = cJSON_GetArrayItem(a, 2);
        ck_assert_str_eq(str(e, "team"), GC_UNATTRIBUTED);
        ck_assert_double_eq_tol(num(e, "cost_usd"), 5.0, 1e-9);

        a = get(j, "by_model");
        ck_assert_int_eq(cJSON_GetArraySize(a), 2);
        e = cJSON_GetArrayItem(a, 0);
        ck_assert_str_eq(str(e, "model"), A100);
        ck_assert_str_eq(str(e, "capacity_type"), "on-demand");
        ck_assert_double_eq_tol(num(e, "cost_usd"), 180.0, 1e-9);
        ck_assert_double_eq_tol(num(e, "gpu_hours"), 45.0, 1e-9);
        e = cJSON_GetArrayItem(a, 1);
        ck_assert_str_eq(str(e, "model"), H100);
        ck_assert_double_eq_tol(num(e, "cost_usd"), 7.5, 1e-9);
        ck_assert_double_eq_tol(num(e, "gpu_hours"), 3.0, 1e-9);
        ck_assert_double_eq_tol(sum_of(a, "cost_usd"), 187.5, 1e-9);

        a = get(j, "by_day");
        ck_assert_int_eq(cJSON_GetArraySize(a), 7);
        {
                static const double want[] = {92, 2.5, 48, 24, 5, 0, 16};
                static const char *const dates[] = {"2026-11-16", "2026-11-17", "2026-11-18",
                                                    "2026-11-19", "2026-11-20", "2026-11-21",
                                                    "2026-11-22"};

                for (int i = 0; i < 7; i++) {
                        e = cJSON_GetArrayItem(a, i);
                        ck_assert_str_eq(str(e, "date"), dates[i]);
                        ck_assert_double_eq_tol(num(e, "cost_usd"), want[i], 1e-9);
                }
        }
        ck_assert_str_eq(str(cJSON_GetArrayItem(a, 0), "start"), "2026-11-16T00:00:00Z");
        ck_assert_str_eq(str(cJSON_GetArrayItem(a, 6), "end"), "2026-11-23T00:00:00Z");
        ck_assert_double_eq_tol(sum_of(a, "cost_usd"), 187.5, 1e-9);
        ck_assert_double_eq_tol(sum_of(a, "gpu_hours"), 48.0, 1e-9);

        a = get(j, "idle_nodes");
        ck_assert_int_eq(cJSON_GetArraySize(a), 2);
        e = cJSON_GetArrayItem(a, 0);
        ck_assert_str_eq(str(e, "node"), "node-a");
        ck_assert_double_eq_tol(num(e, "gpu_hours"), 627.0, 1e-9);
        ck_assert_double_eq_tol(num(e, "cost_usd"), 2508.0, 1e-9);
        e = cJSON_GetArrayItem(a, 1);
        ck_assert_str_eq(str(e, "node"), "node-b");
        ck_assert_str_eq(str(e, "capacity_type"), "spot");
        ck_assert_double_eq_tol(num(e, "gpu_hours"), 333.0, 1e-9);
        ck_assert_double_eq_tol(num(e, "cost_usd"), 832.5, 1e-9);

        o = get(j, "unattributed");
        ck_assert_double_eq_tol(num(o, "cost_usd"), 5.0, 1e-9);
        ck_assert_double_eq_tol(num(o, "gpu_hours"), 2.0, 1e-9);
        ck_assert(num(o, "pods") == 1);
        a = get(o, "namespaces");
        ck_assert_int_eq(cJSON_GetArraySize(a), 1);
        ck_assert_str_eq(str(cJSON_GetArrayItem(a, 0), "namespace"), "scratch");
        ck_assert_double_eq_tol(sum_of(a, "cost_usd"), 5.0, 1e-9);

        a = get(j, "top_pods");
        ck_assert_int_eq(cJSON_GetArraySize(a), 3);
        e = cJSON_GetArrayItem(a, 0);
        ck_assert_str_eq(str(e, "namespace"), "ml");
        ck_assert_str_eq(str(e, "pod"), "p1");
        ck_assert_str_eq(str(e, "team"), "ml");
        ck_assert_str_eq(str(e, "model"), A100);
        ck_assert_double_eq_tol(num(e, "cost_usd"), 80.0, 1e-9);
        ck_assert_double_eq_tol(num(e, "gpu_hours"), 20.0, 1e-9);
        ck_assert_str_eq(str(cJSON_GetArrayItem(a, 1), "pod"), "p3");
        ck_assert_str_eq(str(cJSON_GetArrayItem(a, 2), "pod"), "p5");

        a = get(j, "notes");
        ck_assert_int_eq(cJSON_GetArraySize(a), GC_DIAG_KEEP + 2);
        ck_assert_str_eq(cJSON_GetArrayItem(a, 0)->valuestring, "pod a_b/<x>: `odd` *name*");
        ck_assert_str_eq(cJSON_GetArrayItem(a, 1)->valuestring, "pod default/w1: skipped, no node");
        ck_assert_str_eq(cJSON_GetArrayItem(a, GC_DIAG_KEEP)->valuestring,
                         "... and 3 more input warnings not shown.");
        ck_assert_str_eq(cJSON_GetArrayItem(a, GC_DIAG_KEEP + 1)->valuestring,
                         "Prices for `spot` capacity are estimates.");
        ck_assert(num(j, "notes_omitted") == 3);
        ck_assert_ptr_nonnull(strstr(str(j, "method"), "exact to the second"));

        cJSON_Delete(j);
        gc_buf_free(&b);
        gc_diag_clear(&d);
        free_ledger(&f);
}
END_TEST

START_TEST(period_markdown)
{
        fixture f;
        gc_period_report r;
        gc_diag d = {0};
        gc_buf b;

        fill_ledger(&f);
        weekly(&f, &r, &d);
        r.cluster = "prod-eu";
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        line_of(b.data, "# GPU spend, week 2026-W47 (Mon 2026-11-16 \u2013 Sun 2026-11-22, UTC)\n");
        line_of(b.data, "Cluster: prod-eu. Period: 2026-11-16T00:00:00Z to 2026-11-23T00:00:00Z");
        line_of(b.data, "- **Total spend: $187.50** for 48.00 GPU-hours, 6 pods.\n");
        line_of(b.data,
                "- Change against the previous week (Mon 2026-11-09 \u2013 Sun 2026-11-15): "
                "**+$79.50 (+73.6%)**, from $108.00.\n");
        line_of(b.data, "- Idle GPUs you pay for: **$3,340.50** (960.00 GPU-hours, 94.7% of the "
                        "capacity's cost).\n");
        line_of(b.data, "- Unattributed: **$5.00** (2.7% of spend)");

        /* by team: shares 50.4, 46.93, 2.67 -> 50.4%, 46.9%, 2.7% (the largest remainder) */
        ROW(b.data, "Team", "GPU-hours", "Cost", "Share", "Pods");
        ROW(b.data, "ml", "24.00", "$94.50", "50.4%", "3");
        ROW(b.data, "web", "22.00", "$88.00", "46.9%", "2");
        ROW(b.data, "\\_\\_unattributed\\_\\_", "2.00", "$5.00", "2.7%", "1");
        ROW(b.data, "**Total**", "**48.00**", "**$187.50**", "**100.0%**", "**6**");

        /* by team and project: 49.07, 46.93, 2.67, 1.33 -> tenths 490+469+26+13 = 998, +2 */
        line_of(b.data, "## Spend by team and project\n");
        ROW(b.data, "ml", "train", "23.00", "$92.00", "49.1%", "2");
        ROW(b.data, "web", "search", "22.00", "$88.00", "46.9%", "2");
        ROW(b.data, "ml", "infer", "1.00", "$2.50", "1.3%", "1");
        ROW(b.data, "**Total**", "", "**48.00**", "**$187.50**", "**100.0%**", "**6**");

        line_of(b.data, "## Spend by GPU model and capacity type\n");
        ROW(b.data, A100, "on-demand", "45.00", "$180.00", "96.0%", "4");
        ROW(b.data, H100, "spot", "3.00", "$7.50", "4.0%", "2");

        /* per day: bars of 20 at the dearest day; Tuesday's 2.5/92*20 = 0.54 rounds to 1 */
        line_of(b.data, "## Spend per day\n");
        ROW(b.data, "Mon 2026-11-16", "23.00", "$92.00", bar(20));
        ROW(b.data, "Tue 2026-11-17", "1.00", "$2.50", bar(1));
        ROW(b.data, "Wed 2026-11-18", "12.00", "$48.00", bar(10));
        ROW(b.data, "Thu 2026-11-19", "6.00", "$24.00", bar(5));
        ROW(b.data, "Fri 2026-11-20", "2.00", "$5.00", bar(1)); /* 5/92*20 = 1.09 */
        ROW(b.data, "Sat 2026-11-21", "0.00", "$0.00", "");
        ROW(b.data, "Sun 2026-11-22", "4.00", "$16.00", bar(3)); /* 16/92*20 = 3.48 */
        ROW(b.data, "**Total**", "**48.00**", "**$187.50**", "");

        line_of(b.data, "## Idle GPUs you pay for\n");
        ROW(b.data, "node-a", A100, "on-demand", "627.00", "$2,508.00");
        ROW(b.data, "node-b", H100, "spot", "333.00", "$832.50");
        ROW(b.data, "**Total**", "", "", "**960.00**", "**$3,340.50**");

        line_of(b.data, "## Unattributed spend\n");
        ROW(b.data, "scratch", "2.00", "$5.00", "1");
        ROW(b.data, "**Total**", "**2.00**", "**$5.00**", "**1**");

        line_of(b.data, "## Top 3 pods\n");
        ROW(b.data, "1", "ml/p1", "ml", "train", A100, "20.00", "$80.00");
        ROW(b.data, "2", "web/p3", "web", "search", A100, "18.00", "$72.00");
        ROW(b.data, "3", "web/p5", "web", "search", A100, "4.00", "$16.00");

        line_of(b.data, "## Notes");
        line_of(b.data, "- 1 of 6 pods have figures that rest on estimates");
        /* Input warnings carry names from the cluster: escaped, never Markdown. */
        line_of(b.data, "- pod a\\_b/\\<x\\>: \\`odd\\` \\*name\\*\n");
        line_of(b.data, "- pod default/w1: skipped, no node\n");
        line_of(b.data, "- ... and 3 more input warnings not shown.\n");
        line_of(b.data, "- Prices for `spot` capacity are estimates.\n");
        line_of(b.data, "_How these figures are computed: GPU time is exact to the second");
        ck_assert_ptr_null(strstr(b.data, "The period is not over"));

        gc_buf_free(&b);
        gc_diag_clear(&d);
        free_ledger(&f);
}
END_TEST

/* A day with nothing before it: no previous data, and a running pod accrues only up to now. */
/* A ledger keeping label dimensions: a "Spend by label" section per key, adding up; none else. */
START_TEST(period_labels)
{
        static const char *const keys[] = {"cost-center"};
        fixture f;
        gc_period_report r;
        gc_diag d = {0};
        gc_buf b, j;
        cJSON *doc, *lab, *rows, *row;
        double sum = 0;

        fill_keys = keys;
        n_fill_keys = 1;
        fill_ledger(&f);
        fill_keys = NULL;
        n_fill_keys = 0;
        weekly(&f, &r, &d);
        gc_buf_init(&b, LIMIT);
        gc_buf_init(&j, LIMIT);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        ck_assert_int_eq(gc_report_period_json(&r, &j), 0);
        ck_assert_ptr_nonnull(strstr(b.data, "\n## Spend by label cost-center\n\n"));
        ck_assert_ptr_nonnull(strstr(b.data, "| cc-ml "));
        ck_assert_ptr_nonnull(strstr(b.data, "| \\_\\_unlabelled\\_\\_ ")); /* escaped */
        doc = cJSON_Parse(j.data);
        ck_assert_ptr_nonnull(doc);
        lab = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "labels"), 0);
        ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(lab, "key")->valuestring, "cost-center");
        rows = cJSON_GetObjectItemCaseSensitive(lab, "rows");
        ck_assert_int_eq(cJSON_GetArraySize(rows), 3);
        cJSON_ArrayForEach(row, rows) sum +=
            cJSON_GetObjectItemCaseSensitive(row, "cost_usd")->valuedouble;
        ck_assert_double_eq_tol(sum,
                                cJSON_GetObjectItemCaseSensitive(
                                    cJSON_GetObjectItemCaseSensitive(
                                        cJSON_GetObjectItemCaseSensitive(doc, "summary"), "total"),
                                    "cost_usd")
                                    ->valuedouble,
                                1e-9);
        cJSON_Delete(doc);
        gc_diag_clear(&d);
        gc_buf_free(&b);
        gc_buf_free(&j);
        free_ledger(&f);

        /* Keeping none: no such section, no member (the report is as before). */
        memset(&d, 0, sizeof(d));
        fill_ledger(&f);
        weekly(&f, &r, &d);
        gc_buf_init(&b, LIMIT);
        gc_buf_init(&j, LIMIT);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        ck_assert_int_eq(gc_report_period_json(&r, &j), 0);
        ck_assert_ptr_null(strstr(b.data, "Spend by label"));
        ck_assert_ptr_null(strstr(j.data, "\"labels\""));
        gc_diag_clear(&d);
        gc_buf_free(&b);
        gc_buf_free(&j);
        free_ledger(&f);
}
END_TEST

START_TEST(period_daily_no_previous)
{
        fixture f;
        gc_ledger_opts o;
        gc_period_report r;
        gc_buf b;
        cJSON *j;

        memset(&f, 0, sizeof(f));
        f.pool = gc_strpool_new(1u << 20);
        memset(&o, 0, sizeof(o));
        o.pool = f.pool;
        f.l = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(f.l);
        f.t0 = t_at("2026-11-20T00:00:00Z");
        put_pod(&f, "q1", "ml", "ml", "train", "node-a", A100, "on-demand", 1, 3.0, f.t0 + 6 * HOUR,
                GC_OPEN, 0);

        memset(&r, 0, sizeof(r));
        r.ledger = f.l;
        r.kind = "daily";
        r.start = f.t0;
        r.end = f.t0 + DAY;
        r.now = f.t0 + 10 * HOUR; /* 4 h so far: $12 */
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        line_of(b.data, "# GPU spend, Fri 2026-11-20 (UTC)\n");
        line_of(b.data, "- **Total spend: $12.00** for 4.00 GPU-hours, 1 pod.\n");
        line_of(b.data, "- Change against the previous day (Thu 2026-11-19): no previous data.\n");
        line_of(b.data, "- The period is not over: pods still running are counted up to "
                        "2026-11-20T10:00:00Z.\n");
        line_of(b.data, "No idle capacity");
        line_of(b.data, "None: every pod had a team and a project.\n");

        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_json(&r, &b), 0);
        j = parse(&b);
        ck_assert(cJSON_IsFalse(get(get(j, "previous"), "has_data")));
        ck_assert(cJSON_IsNull(get(get(j, "change"), "cost_usd")));
        ck_assert(cJSON_IsNull(get(get(j, "change"), "percent")));
        ck_assert_int_eq(cJSON_GetArraySize(get(j, "by_day")), 1);
        ck_assert_double_eq_tol(num(cJSON_GetArrayItem(get(j, "by_day"), 0), "cost_usd"), 12.0,
                                1e-9);
        ck_assert_int_eq(cJSON_GetArraySize(get(j, "notes")), 0);
        ck_assert_str_eq(str(j, "currency"), "USD");
        cJSON_Delete(j);
        gc_buf_free(&b);
        free_ledger(&f);
}
END_TEST

/*
 * The week before, after the ledger folded everything that ended three days before t0 into
 * hourly history: p0 (Mon 2026-11-09 00:00 to Tue 01:00, 25 GPU-hours, $100) is no longer a pod
 * of its own, p6 (Sun 22:00 to t0, 2 GPU-hours, $8 of it in this week) still is. The week
 * before that had nodes but no spend: a change in money, but no percentage.
 */
/* The same week folded with period history: the folded pod keeps its name and its count. */
START_TEST(period_history_names_folded_pods)
{
        fixture f;
        gc_period_report r;
        gc_buf b;

        fill_ledger(&f);
        ck_assert_int_eq(gc_ledger_fold(f.l, f.t0 - 3 * DAY, f.t0 - 30 * DAY), 1);
        memset(&r, 0, sizeof(r));
        r.ledger = f.l;
        r.kind = "weekly";
        r.start = f.t0 - 7 * DAY;
        r.end = f.t0;
        r.now = f.t0 + 7 * DAY;
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        line_of(b.data, "- **Total spend: $108.00** for 27.00 GPU-hours, 2 pods.\n");
        ROW(b.data, "Mon 2026-11-09", "24.00", "$96.00", bar(20));
        ROW(b.data, "Sun 2026-11-15", "2.00", "$8.00", bar(2));
        line_of(b.data, "## Top 2 pods\n");
        ROW(b.data, "1", "ml/p0", "ml", "train", A100, "25.00", "$100.00");
        ROW(b.data, "2", "ml/p6", "ml", "train", A100, "2.00", "$8.00");
        ck_assert_ptr_null(strstr(b.data, "not name its pods"));
        /* ... and its workload: p0 and p6 are both the trainer Deployment's. */
        line_of(b.data, "## Spend by workload\n");
        ROW(b.data, "Deployment/ml/trainer", "ml", "train", "27.00", "$108.00", "2");
        ck_assert_ptr_null(strstr(b.data, "not name its workloads"));
        /* Idle is what the hourly history gives (its nodes' held hours). */
        line_of(b.data, "- Idle GPUs you pay for: **$3,420.00** (981.00 GPU-hours, 96.9% of the "
                        "capacity's cost).\n");
        gc_buf_free(&b);
        free_ledger(&f);
}
END_TEST

START_TEST(period_folded_history)
{
        fixture f;
        gc_period_report r;
        gc_buf b;
        cJSON *j, *a;

        fill_ledger(&f);
        /* History folded by a build before period history: hourly rows only. */
        ck_assert_int_eq(gc_ledger_set_period_since(f.l, f.t0), 0);
        ck_assert_int_eq(gc_ledger_fold(f.l, f.t0 - 3 * DAY, f.t0 - 30 * DAY), 1);
        memset(&r, 0, sizeof(r));
        r.ledger = f.l;
        r.kind = "weekly";
        r.start = f.t0 - 7 * DAY;
        r.end = f.t0;
        r.now = f.t0 + 7 * DAY;
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        line_of(b.data, "# GPU spend, week 2026-W46 (Mon 2026-11-09 \u2013 Sun 2026-11-15, UTC)\n");
        line_of(b.data, "- **Total spend: $108.00** for 27.00 GPU-hours, 1 pod.\n");
        line_of(b.data,
                "- Change against the previous week (Mon 2026-11-02 \u2013 Sun 2026-11-08): "
                "**+$108.00**, from $0.00.\n");
        ROW(b.data, "Mon 2026-11-09", "24.00", "$96.00", bar(20));
        ROW(b.data, "Tue 2026-11-10", "1.00", "$4.00", bar(1));
        ROW(b.data, "Sun 2026-11-15", "2.00", "$8.00", bar(2));
        ROW(b.data, "**Total**", "**27.00**", "**$108.00**", "");
        line_of(b.data, "## Top 1 pod\n");
        ROW(b.data, "1", "ml/p6", "ml", "train", A100, "2.00", "$8.00");
        line_of(b.data, "- Idle GPUs you pay for: **$3,420.00** (981.00 GPU-hours, 96.9% of the "
                        "capacity's cost).\n");
        ck_assert_ptr_null(strstr(b.data, "__folded__"));
        ck_assert_ptr_null(strstr(b.data, "\\_\\_folded\\_\\_"));
        line_of(b.data, "Folded history that does not name its pods: 25.00 GPU-hours, $100.00.\n");

        /* A caller's title is used as given: verbatim in JSON, escaped in Markdown. */
        r.title = "Week \"46\" | ml";
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        line_of(b.data, "# Week \"46\" \\| ml\n");
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_json(&r, &b), 0);
        j = parse(&b);
        ck_assert_str_eq(str(j, "title"), "Week \"46\" | ml");
        ck_assert(cJSON_IsTrue(get(get(j, "previous"), "has_data")));
        ck_assert_double_eq_tol(num(get(j, "change"), "cost_usd"), 108.0, 1e-9);
        ck_assert(cJSON_IsNull(get(get(j, "change"), "percent")));
        a = get(j, "top_pods");
        ck_assert_int_eq(cJSON_GetArraySize(a), 1);
        ck_assert_str_eq(str(cJSON_GetArrayItem(a, 0), "pod"), "p6");
        ck_assert_double_eq_tol(sum_of(get(j, "by_day"), "cost_usd"), 108.0, 1e-9);
        ck_assert_double_eq_tol(sum_of(get(j, "by_team"), "cost_usd"), 108.0, 1e-9);
        ck_assert_double_eq_tol(num(get(get(j, "summary"), "total"), "cost_usd"), 108.0, 1e-9);
        cJSON_Delete(j);
        gc_buf_free(&b);
        free_ledger(&f);
}
END_TEST

/* "Spend by workload": every workload by cost, cut to top_n with the rest summed; a team's copy
 * shows its own; folded history is counted, not listed. */
START_TEST(period_workloads)
{
        fixture f;
        gc_period_report r;
        gc_diag d = {0};
        gc_buf b;
        cJSON *j, *a, *e;

        fill_ledger(&f);
        weekly(&f, &r, &d);
        r.top_n = 10;
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_period_json(&r, &b), 0);
        j = parse(&b);
        a = get(j, "workloads");
        ck_assert_int_eq(cJSON_GetArraySize(a), 4);
        e = cJSON_GetArrayItem(a, 0);
        ck_assert_str_eq(str(e, "workload"), "Deployment/ml/trainer");
        ck_assert_str_eq(str(e, "team"), "ml");
        ck_assert_str_eq(str(e, "project"), "train");
        ck_assert_double_eq_tol(num(e, "gpu_hours"), 23.0, 1e-9);
        ck_assert_double_eq_tol(num(e, "cost_usd"), 92.0, 1e-9);
        ck_assert(num(e, "pods") == 2);
        e = cJSON_GetArrayItem(a, 1);
        ck_assert_str_eq(str(e, "workload"), "StatefulSet/web/search");
        ck_assert_double_eq_tol(num(e, "cost_usd"), 88.0, 1e-9);
        ck_assert(num(e, "pods") == 2);
        e = cJSON_GetArrayItem(a, 2);
        ck_assert_str_eq(str(e, "workload"), "CronJob/scratch/probe");
        ck_assert_str_eq(str(e, "team"), GC_UNATTRIBUTED);
        ck_assert_double_eq_tol(num(e, "cost_usd"), 5.0, 1e-9);
        e = cJSON_GetArrayItem(a, 3);
        ck_assert_str_eq(str(e, "workload"), "Pod/ml/p2");
        ck_assert_double_eq_tol(num(e, "gpu_hours"), 1.0, 1e-9);
        ck_assert_double_eq_tol(num(e, "cost_usd"), 2.5, 1e-9);
        ck_assert(num(e, "pods") == 1);
        ck_assert_double_eq_tol(sum_of(a, "cost_usd"), 187.5, 1e-9);
        ck_assert(sum_of(a, "pods") == 6);
        ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "workloads_omitted"));
        ck_assert(num(get(j, "workloads_folded"), "cost_usd") == 0);
        cJSON_Delete(j);

        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        line_of(b.data, "## Spend by workload\n");
        line_of(b.data, "Each pod counts under its top-level owner (Kind/namespace/name).\n");
        ROW(b.data, "Workload", "Team", "Project", "GPU-hours", "Cost", "Pods");
        ROW(b.data, "Deployment/ml/trainer", "ml", "train", "23.00", "$92.00", "2");
        ROW(b.data, "StatefulSet/web/search", "web", "search", "22.00", "$88.00", "2");
        ROW(b.data, "CronJob/scratch/probe", "\\_\\_unattributed\\_\\_", "\\_\\_unattributed\\_\\_",
            "2.00", "$5.00", "1");
        ROW(b.data, "Pod/ml/p2", "ml", "infer", "1.00", "$2.50", "1");
        ROW(b.data, "**Total**", "", "", "**48.00**", "**$187.50**", "**6**");
        /* The section comes before the top pods. */
        ck_assert(strstr(b.data, "## Spend by workload") < strstr(b.data, "## Top 6 pods"));

        /* Cut to the two dearest; the other two are summed in the last row. */
        r.top_n = 2;
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        line_of(b.data, "Each pod counts under its top-level owner (Kind/namespace/name); the 2 "
                        "dearest are listed, the other 2 summed in the last row.\n");
        ROW(b.data, "(2 more rows)", "", "", "3.00", "$7.50", "2");
        ROW(b.data, "**Total**", "", "", "**48.00**", "**$187.50**", "**6**");
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_json(&r, &b), 0);
        j = parse(&b);
        ck_assert_int_eq(cJSON_GetArraySize(get(j, "workloads")), 2);
        e = get(j, "workloads_omitted");
        ck_assert(num(e, "rows") == 2);
        ck_assert_double_eq_tol(num(e, "cost_usd"), 7.5, 1e-9);
        ck_assert(num(e, "pods") == 2);
        /* top_n alone cuts no other table: no note, no rows_cut_to. */
        ck_assert(cJSON_IsNull(get(j, "rows_cut_to")));
        cJSON_Delete(j);

        /* max_rows smaller than top_n cuts the workloads like every table, and says so. */
        r.top_n = 10;
        r.max_rows = 1;
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_json(&r, &b), 0);
        j = parse(&b);
        ck_assert_int_eq(cJSON_GetArraySize(get(j, "workloads")), 1);
        ck_assert(num(get(j, "workloads_omitted"), "rows") == 3);
        ck_assert_double_eq_tol(num(get(j, "workloads_omitted"), "cost_usd"), 95.5, 1e-9);
        ck_assert(num(j, "rows_cut_to") == 1);
        cJSON_Delete(j);
        r.max_rows = 0;

        /* A team's copy: its own workloads only. */
        r.team = "web";
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_json(&r, &b), 0);
        j = parse(&b);
        a = get(j, "workloads");
        ck_assert_int_eq(cJSON_GetArraySize(a), 1);
        ck_assert_str_eq(str(cJSON_GetArrayItem(a, 0), "workload"), "StatefulSet/web/search");
        ck_assert_double_eq_tol(num(cJSON_GetArrayItem(a, 0), "cost_usd"), 88.0, 1e-9);
        cJSON_Delete(j);
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        ROW(b.data, "StatefulSet/web/search", "web", "search", "22.00", "$88.00", "2");
        ck_assert_ptr_null(strstr(b.data, "Deployment/ml/trainer"));
        gc_buf_free(&b);
        gc_diag_clear(&d);
        free_ledger(&f);
}
END_TEST

/* The week before, folded: p0's hours no longer name their workload; p6's still do. */
START_TEST(period_workloads_folded)
{
        fixture f;
        gc_period_report r;
        gc_buf b;
        cJSON *j, *a;

        fill_ledger(&f);
        /* History folded by a build before period history: hourly rows only. */
        ck_assert_int_eq(gc_ledger_set_period_since(f.l, f.t0), 0);
        ck_assert_int_eq(gc_ledger_fold(f.l, f.t0 - 3 * DAY, f.t0 - 30 * DAY), 1);
        memset(&r, 0, sizeof(r));
        r.ledger = f.l;
        r.kind = "weekly";
        r.start = f.t0 - 7 * DAY;
        r.end = f.t0;
        r.now = f.t0 + 7 * DAY;
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        line_of(b.data, "## Spend by workload\n");
        ROW(b.data, "Deployment/ml/trainer", "ml", "train", "2.00", "$8.00", "1");
        ROW(b.data, "**Total**", "", "", "**2.00**", "**$8.00**", "**1**");
        line_of(b.data,
                "Folded history that does not name its workloads: 25.00 GPU-hours, $100.00.\n");
        ck_assert_ptr_null(strstr(b.data, "__folded__"));
        ck_assert_ptr_null(strstr(b.data, "\\_\\_folded\\_\\_"));
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_json(&r, &b), 0);
        j = parse(&b);
        a = get(j, "workloads");
        ck_assert_int_eq(cJSON_GetArraySize(a), 1);
        ck_assert_str_eq(str(cJSON_GetArrayItem(a, 0), "workload"), "Deployment/ml/trainer");
        ck_assert_double_eq_tol(num(get(j, "workloads_folded"), "cost_usd"), 100.0, 1e-9);
        ck_assert_double_eq_tol(num(get(j, "workloads_folded"), "gpu_hours"), 25.0, 1e-9);
        cJSON_Delete(j);
        gc_buf_free(&b);
        free_ledger(&f);
}
END_TEST

START_TEST(period_bad_input)
{
        fixture f;
        gc_period_report r;
        gc_diag d = {0};
        gc_buf b;

        fill_ledger(&f);
        weekly(&f, &r, &d);
        gc_buf_init(&b, 256);
        ck_assert_int_eq(gc_buf_puts(&b, "kept"), 0);
        /* Over the caller's limit: -E2BIG and the buffer as it was. */
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), -E2BIG);
        ck_assert_str_eq(b.data, "kept");
        ck_assert_int_eq(gc_report_period_json(&r, &b), -E2BIG);
        ck_assert_str_eq(b.data, "kept");
        r.end = r.start;
        ck_assert_int_eq(gc_report_period_json(&r, &b), -EINVAL);
        r.end = r.start + 400 * (int64_t)DAY;
        ck_assert_int_eq(gc_report_period_json(&r, &b), -ERANGE);
        r.end = r.start + DAY;
        r.ledger = NULL;
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), -EINVAL);
        ck_assert_int_eq(gc_report_period_markdown(NULL, &b), -EINVAL);
        ck_assert_str_eq(b.data, "kept");
        gc_buf_free(&b);
        gc_diag_clear(&d);
        free_ledger(&f);
}
END_TEST

/*
 * The advisor's findings: a "Savings" section before the notes, under our heading unless the text
 * brings its own, and the "savings" member (null without findings, else the given JSON value).
 */
START_TEST(period_savings)
{
        fixture f;
        gc_period_report r;
        gc_diag d = {0};
        gc_buf b;
        cJSON *j;
        const char *sv, *notes;

        fill_ledger(&f);
        weekly(&f, &r, &d);
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        ck_assert_ptr_null(strstr(b.data, "## Savings"));
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_json(&r, &b), 0);
        j = parse(&b);
        ck_assert(cJSON_IsNull(get(j, "savings")));
        cJSON_Delete(j);

        r.savings_markdown = "1 finding could save **$210.00** a month.\n\n| Kind | Pod |\n"
                             "|---|---|\n| idle_gpu | ml/p1 |";
        r.savings_json = "{\"findings\":[{\"kind\":\"idle_gpu\",\"monthly_savings\":210}],"
                         "\"monthly_savings\":210}";
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        sv = strstr(b.data, "\n## Savings\n\n1 finding could save **$210.00** a month.\n");
        notes = strstr(b.data, "\n## Notes\n");
        ck_assert_ptr_nonnull(sv);
        ck_assert_ptr_nonnull(notes);
        ck_assert(sv > strstr(b.data, "## Top 3 pods") && sv < notes);
        /* the last line of the section ended, before the next heading */
        ck_assert_ptr_nonnull(strstr(b.data, "| idle_gpu | ml/p1 |\n\n## Notes\n"));
        ck_assert_ptr_null(strstr(sv + 2, "## Savings"));

        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_json(&r, &b), 0);
        j = parse(&b);
        ck_assert_double_eq_tol(num(get(j, "savings"), "monthly_savings"), 210, 1e-9);
        ck_assert_str_eq(str(cJSON_GetArrayItem(get(get(j, "savings"), "findings"), 0), "kind"),
                         "idle_gpu");
        /* the rest of the document is unchanged by it */
        ck_assert_ptr_nonnull(get(j, "summary"));
        ck_assert_ptr_nonnull(get(j, "notes"));
        cJSON_Delete(j);

        /* A section that brings its own heading keeps it, once. */
        r.savings_markdown = "## Savings\n\nNo finding: every measured GPU was busy.\n";
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        sv = strstr(b.data, "\n## Savings\n\nNo finding: every measured GPU was busy.\n\n## Notes");
        ck_assert_ptr_nonnull(sv);
        ck_assert_ptr_null(strstr(sv + 2, "## Savings"));

        gc_buf_free(&b);
        gc_diag_clear(&d);
        free_ledger(&f);
}
END_TEST

/*
 * At every limit short of the whole document a period report fails with -E2BIG and leaves the
 * buffer as it was, wherever the limit falls (a table, the chargeback, budgets, the notes); at
 * the document's own length it is written whole, the same bytes.
 */
START_TEST(period_every_limit)
{
        static const gc_budget budgets[] = {{GC_DIM_TEAM, "ml", GC_BUDGET_WEEKLY, 100.0}};
        static const char *const has[][3] = {
            {"## Chargeback", "## Budgets", "## Savings"},
            {"\"chargeback\":{", "\"budgets\":[{", "\"savings\":{"}};
        int (*fn[])(const gc_period_report *, gc_buf *) = {gc_report_period_markdown,
                                                           gc_report_period_json};
        const gc_chargeback cb = {.mode = GC_CHARGEBACK_PROPORTIONAL};
        fixture f;
        gc_period_report r;
        gc_diag d = {0};

        fill_ledger(&f);
        weekly(&f, &r, &d);
        r.chargeback = &cb;
        r.budgets = budgets;
        r.n_budgets = 1;
        r.savings_markdown = "1 finding could save **$210.00** a month.\n";
        r.savings_json = "{\"monthly_savings\":210}";
        for (size_t i = 0; i < 2; i++) {
                gc_buf whole, b;

                gc_buf_init(&whole, LIMIT);
                ck_assert_int_eq(fn[i](&r, &whole), 0);
                for (size_t k = 0; k < 3; k++)
                        ck_assert_ptr_nonnull(strstr(whole.data, has[i][k]));
                for (size_t limit = 0; limit < whole.len; limit++) {
                        gc_buf_init(&b, limit);
                        ck_assert_int_eq(fn[i](&r, &b), -E2BIG);
                        ck_assert_uint_eq(b.len, 0);
                        gc_buf_free(&b);
                }
                gc_buf_init(&b, whole.len);
                ck_assert_int_eq(fn[i](&r, &b), 0);
                ck_assert_str_eq(b.data, whole.data);
                gc_buf_free(&b);
                gc_buf_free(&whole);
        }
        gc_diag_clear(&d);
        free_ledger(&f);
}
END_TEST

static gc_tz *zone(const char *name)
{
        gc_tz *z = NULL;

        ck_assert_int_eq(gc_tz_load(NULL, name, &z), 0);
        return z;
}

static void tz_ledger(fixture *f, int64_t bucket_s)
{
        gc_ledger_opts o;

        memset(f, 0, sizeof(*f));
        f->pool = gc_strpool_new(1u << 20);
        ck_assert_ptr_nonnull(f->pool);
        memset(&o, 0, sizeof(o));
        o.pool = f->pool;
        o.bucket_s = bucket_s;
        f->l = gc_ledger_new(&o);
        ck_assert_ptr_nonnull(f->l);
}

/*
 * October 2026 in Europe/Berlin: 1 October 00:00 CEST to 1 November 00:00 CET, 31 days and the
 * hour the clocks went back (745 h). One GPU at $4 all month, folded into hourly history: $2,980,
 * its 25-hour Sunday $100; September (from the 20th, 00:00 UTC) $1,048.
 */
START_TEST(period_monthly_berlin_dst)
{
        gc_tz *z = zone("Europe/Berlin");
        gc_period_report r;
        fixture f;
        cJSON *j, *days;
        gc_buf b;
        double sum = 0;

        tz_ledger(&f, 0);
        put_node(&f, "node-a", A100, "on-demand", 1, 4.0, t_at("2026-09-01T00:00:00Z"));
        put_pod(&f, "m1", "ml", "ml", "train", "node-a", A100, "on-demand", 1, 4.0,
                t_at("2026-09-20T00:00:00Z"), t_at("2026-11-10T00:00:00Z"), 0);
        ck_assert_int_ge(gc_ledger_fold(f.l, t_at("2026-11-12T00:00:00Z"), 0), 0);
        memset(&r, 0, sizeof(r));
        r.ledger = f.l;
        r.kind = "monthly";
        r.tz = z;
        r.start = gc_tz_period_start(z, GC_TZ_MONTH, t_at("2026-10-15T00:00:00Z"));
        r.end = gc_tz_period_add(z, GC_TZ_MONTH, r.start, 1);
        ck_assert_int_eq(r.start, t_at("2026-09-30T22:00:00Z"));
        ck_assert_int_eq(r.end, t_at("2026-10-31T23:00:00Z"));
        r.now = t_at("2026-11-20T00:00:00Z");
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_period_json(&r, &b), 0);
        j = parse(&b);
        ck_assert_str_eq(str(j, "title"), "GPU spend, October 2026 (Europe/Berlin)");
        ck_assert_str_eq(str(get(j, "period"), "month"), "2026-10");
        ck_assert_str_eq(str(get(j, "period"), "time_zone"), "Europe/Berlin");
        ck_assert_double_eq(num(get(j, "period"), "days"), 31);
        ck_assert_double_eq_tol(num(get(get(j, "summary"), "total"), "cost_usd"), 2980.0, 1e-9);
        ck_assert_str_eq(str(get(j, "previous"), "start"), "2026-08-31T22:00:00Z");
        ck_assert_double_eq_tol(num(get(j, "previous"), "cost_usd"), 1048.0, 1e-9);
        ck_assert(cJSON_IsNull(get(j, "forecast")));
        days = get(j, "by_day");
        ck_assert_int_eq(cJSON_GetArraySize(days), 31);
        for (int i = 0; i < 31; i++) {
                const cJSON *d = cJSON_GetArrayItem(days, i);

                sum += num(d, "cost_usd");
                ck_assert_double_eq_tol(num(d, "cost_usd"), i == 24 ? 100.0 : 96.0, 1e-9);
        }
        ck_assert_str_eq(str(cJSON_GetArrayItem(days, 24), "date"), "2026-10-25");
        ck_assert_str_eq(str(cJSON_GetArrayItem(days, 24), "end"), "2026-10-25T23:00:00Z");
        ck_assert_double_eq_tol(sum, 2980.0, 1e-9);
        ck_assert_int_eq(cJSON_GetArraySize(get(j, "notes")), 0);
        cJSON_Delete(j);

        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        line_of(b.data, "# GPU spend, October 2026 (Europe/Berlin)\n");
        line_of(b.data,
                "- Change against the previous month (Tue 2026-09-01 \u2013 Wed 2026-09-30): "
                "**+$1,932.00 (+184.4%)**, from $1,048.00.\n");
        {
                const char *day = line_of(b.data, "| Sun 2026-10-25 ");
                const char *eol = strchr(day, '\n');
                const char *h = strstr(day, " 25.00 "), *c = strstr(day, " $100.00 ");

                ck_assert(h && c && h < eol && c < eol);
        }

        /* The day the clocks went back is a daily report of 25 hours; the one after, 24. */
        gc_buf_reset(&b);
        r.kind = "daily";
        r.start = gc_tz_day_start(z, gc_days_from_civil(2026, 10, 25));
        r.end = gc_tz_day_start(z, gc_days_from_civil(2026, 10, 26));
        ck_assert_int_eq(gc_report_period_json(&r, &b), 0);
        j = parse(&b);
        ck_assert_str_eq(str(j, "title"), "GPU spend, Sun 2026-10-25 (Europe/Berlin)");
        ck_assert_double_eq_tol(num(get(get(j, "summary"), "total"), "cost_usd"), 100.0, 1e-9);
        ck_assert_double_eq_tol(num(get(j, "previous"), "cost_usd"), 96.0, 1e-9);
        ck_assert_str_eq(str(get(j, "previous"), "start"), "2026-10-23T22:00:00Z");
        cJSON_Delete(j);
        gc_buf_free(&b);
        free_ledger(&f);
        gc_tz_free(z);
}
END_TEST

/*
 * November 2026 in Asia/Kathmandu (+05:45) starts at 31 October 18:15 UTC. One GPU at $4 from
 * 25 October 00:00 UTC, still running on 20 November 06:00 UTC, history folded up to an hour
 * before: with quarter-hour buckets every figure is exact (October $649 from 162.25 h, November
 * so far $1,871 from 467.75 h, the forecast the whole month's 720 h, $2,880); with hourly
 * buckets the quarter hour the month's edge cuts is lost, and the report says so.
 */
START_TEST(period_monthly_kathmandu_exact)
{
        gc_tz *z = zone("Asia/Kathmandu");
        int64_t now = t_at("2026-11-20T06:00:00Z");
        gc_period_report r;
        fixture f;
        cJSON *j;
        gc_buf b;

        for (int pass = 0; pass < 2; pass++) {
                int64_t bucket = pass == 0 ? 900 : 3600;

                tz_ledger(&f, bucket);
                ck_assert_int_eq(gc_ledger_granularity(f.l), bucket);
                /* One GPU all along: a pod that ended (and folds), then one still running. */
                put_pod(&f, "k1", "ml", "ml", "train", "node-a", A100, "on-demand", 1, 4.0,
                        t_at("2026-10-25T00:00:00Z"), now - 2 * HOUR, 0);
                put_pod(&f, "k2", "ml", "ml", "train", "node-a", A100, "on-demand", 1, 4.0,
                        now - 2 * HOUR, GC_OPEN, 0);
                ck_assert_int_ge(gc_ledger_fold(f.l, now - HOUR, 0), 0);
                memset(&r, 0, sizeof(r));
                r.ledger = f.l;
                r.kind = "monthly";
                r.tz = z;
                r.start = gc_tz_period_start(z, GC_TZ_MONTH, now);
                r.end = gc_tz_period_add(z, GC_TZ_MONTH, now, 1);
                r.now = now;
                ck_assert_int_eq(r.start, t_at("2026-10-31T18:15:00Z"));
                gc_buf_init(&b, LIMIT);
                ck_assert_int_eq(gc_report_period_json(&r, &b), 0);
                j = parse(&b);
                ck_assert_str_eq(str(j, "title"), "GPU spend, November 2026 (Asia/Kathmandu)");
                ck_assert_double_eq(num(get(j, "period"), "utc_offset_seconds"), 20700);
                ck_assert(cJSON_IsTrue(get(get(j, "period"), "partial")));
                ck_assert_str_eq(str(get(j, "forecast"), "method"), "elapsed_average");
                ck_assert_str_eq(str(get(j, "forecast"), "to"), "2026-11-30T18:15:00Z");
                if (pass == 0) {
                        ck_assert_double_eq_tol(num(get(get(j, "summary"), "total"), "cost_usd"),
                                                1871.0, 1e-9);
                        ck_assert_double_eq_tol(num(get(j, "previous"), "cost_usd"), 649.0, 1e-9);
                        ck_assert_double_eq_tol(num(get(j, "forecast"), "cost_usd"), 2880.0, 1e-9);
                        ck_assert_int_eq(cJSON_GetArraySize(get(j, "notes")), 0);
                } else {
                        /* 18:00-19:00 UTC on 31 October is cut by both months: in neither. */
                        ck_assert_double_eq_tol(num(get(get(j, "summary"), "total"), "cost_usd"),
                                                1868.0, 1e-9);
                        ck_assert_double_eq_tol(num(get(j, "previous"), "cost_usd"), 648.0, 1e-9);
                        ck_assert_int_eq(cJSON_GetArraySize(get(j, "notes")), 1);
                }
                cJSON_Delete(j);
                gc_buf_reset(&b);
                ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
                if (pass == 0)
                        line_of(b.data, "- Forecast to the end of the month (Mon 2026-11-30): "
                                        "**$2,880.00** for 720.00 GPU-hours");
                gc_buf_free(&b);
                free_ledger(&f);
        }
        gc_tz_free(z);
}
END_TEST

/*
 * A workload's budget over a month whose past is folded: the month's workload totals (period
 * history) and what is still live add up to the spend before folding, other workloads apart.
 */
START_TEST(budget_workload_folded)
{
        gc_tz *z = zone("UTC");
        int64_t now = t_at("2026-11-25T06:00:00Z");
        const gc_budget b = {GC_DIM_WORKLOAD, "Deployment/ml/trainer", GC_BUDGET_MONTHLY, 100.0};
        const gc_budget other = {GC_DIM_WORKLOAD, "StatefulSet/web/search", GC_BUDGET_MONTHLY,
                                 100.0};
        const gc_budget node = {GC_DIM_NODE, "node-a", GC_BUDGET_MONTHLY, 100.0};
        gc_budget_status before, after, st;
        fixture f;
        size_t n = 0;

        tz_ledger(&f, 3600);
        /* p6 from October into November (November's 24 h count), p0 a day, p1 running (2 GPUs
           for 24 h so far); p3 is another workload. $4 a GPU-hour. */
        put_pod(&f, "p6", "ml", "ml", "train", "node-a", A100, "on-demand", 1, 4.0,
                t_at("2026-10-31T12:00:00Z"), t_at("2026-11-02T00:00:00Z"), 0);
        put_pod(&f, "p0", "ml", "ml", "train", "node-a", A100, "on-demand", 1, 4.0,
                t_at("2026-11-03T00:00:00Z"), t_at("2026-11-04T00:00:00Z"), 0);
        put_pod(&f, "p3", "web", "web", "search", "node-a", A100, "on-demand", 1, 4.0,
                t_at("2026-11-05T00:00:00Z"), t_at("2026-11-06T00:00:00Z"), 0);
        put_pod(&f, "p1", "ml", "ml", "train", "node-a", A100, "on-demand", 2, 4.0,
                t_at("2026-11-24T06:00:00Z"), GC_OPEN, 0);
        ck_assert_int_eq(gc_budget_eval_now(f.l, &b, z, now, 0, &before), 0);
        ck_assert_double_eq_tol(before.spent, 96 + 96 + 192, 1e-9);
        ck_assert_int_eq(before.state, GC_BUDGET_OVER);
        ck_assert_int_eq(gc_ledger_fold(f.l, now - 6 * HOUR, 0), 3);
        ck_assert_int_eq(gc_budget_eval_now(f.l, &b, z, now, 0, &after), 0);
        ck_assert_double_eq_tol(after.spent, before.spent, 1e-9);
        ck_assert_double_eq_tol(after.forecast, before.forecast, 1e-9);
        ck_assert_int_eq(gc_budget_eval_now(f.l, &other, z, now, 0, &st), 0);
        ck_assert_double_eq_tol(st.spent, 96, 1e-9);
        /* Only the four scopes are budgets. */
        ck_assert_int_eq(gc_budget_eval_now(f.l, &node, z, now, 0, &st), -EINVAL);
        ck_assert_str_eq(gc_budget_scope_name(GC_DIM_WORKLOAD), "workload");
        /* A workload's namespace is its middle part; anything else is no workload. */
        ck_assert_ptr_nonnull(gc_budget_workload_ns("Deployment/ml/trainer", &n));
        ck_assert_uint_eq(n, 2);
        ck_assert_int_eq(strncmp(gc_budget_workload_ns("Deployment/ml/trainer", NULL), "ml/", 3),
                         0);
        ck_assert_ptr_null(gc_budget_workload_ns("trainer", NULL));
        ck_assert_ptr_null(gc_budget_workload_ns("Deployment//trainer", NULL));
        ck_assert_ptr_null(gc_budget_workload_ns("/ml/trainer", NULL));
        ck_assert_ptr_null(gc_budget_workload_ns("Deployment/ml/", NULL));
        ck_assert_ptr_null(gc_budget_workload_ns("Deployment/ml/a/b", NULL));
        free_ledger(&f);
        gc_tz_free(z);
}
END_TEST

/* A daily report shows every budget over its week or month holding the day, spent up to the
 * day's end, with the forecast while that week or month goes on. */
START_TEST(period_budgets_daily)
{
        gc_tz *z = zone("Asia/Kathmandu");
        int64_t day = t_at("2026-11-19T12:00:00Z"), now = t_at("2026-11-25T06:00:00Z");
        const gc_budget budgets[] = {
            {GC_DIM_TEAM, "ml", GC_BUDGET_MONTHLY, 2000.0},
            {GC_DIM_PROJECT, "train", GC_BUDGET_WEEKLY, 10.0},
        };
        gc_period_report r;
        gc_budget_status want_m, want_w;
        fixture f;
        cJSON *j, *b0, *b1;
        gc_buf b;

        tz_ledger(&f, 900);
        put_pod(&f, "k1", "ml", "ml", "train", "node-a", A100, "on-demand", 1, 4.0,
                t_at("2026-10-25T00:00:00Z"), GC_OPEN, 0);
        memset(&r, 0, sizeof(r));
        r.ledger = f.l;
        r.kind = "daily";
        r.tz = z;
        r.start = gc_tz_period_start(z, GC_TZ_DAY, day);
        r.end = gc_tz_period_add(z, GC_TZ_DAY, day, 1);
        r.now = now; /* the day is complete */
        r.budgets = budgets;
        r.n_budgets = 2;
        ck_assert_int_eq(gc_budget_eval(f.l, &budgets[0], gc_tz_period_start(z, GC_TZ_MONTH, day),
                                        gc_tz_period_add(z, GC_TZ_MONTH, day, 1), r.end, 0.8,
                                        &want_m),
                         0);
        ck_assert_int_eq(gc_budget_eval(f.l, &budgets[1], gc_tz_period_start(z, GC_TZ_WEEK, day),
                                        gc_tz_period_add(z, GC_TZ_WEEK, day, 1), r.end, 0.8,
                                        &want_w),
                         0);
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_period_json(&r, &b), 0);
        j = parse(&b);
        ck_assert_int_eq(cJSON_GetArraySize(get(j, "budgets")), 2);
        b0 = cJSON_GetArrayItem(get(j, "budgets"), 0);
        ck_assert_str_eq(str(b0, "period"), "monthly");
        ck_assert_str_eq(str(b0, "start"), "2026-10-31T18:15:00Z"); /* Nov 1 in Kathmandu */
        ck_assert_double_eq_tol(num(b0, "spent"), want_m.spent, 1e-9);
        ck_assert(want_m.spent > 0 && want_m.spent < 4.0 * 24 * 20);
        ck_assert_double_eq_tol(num(b0, "forecast"), want_m.forecast, 1e-9);
        b1 = cJSON_GetArrayItem(get(j, "budgets"), 1);
        ck_assert_str_eq(str(b1, "period"), "weekly");
        ck_assert_double_eq_tol(num(b1, "spent"), want_w.spent, 1e-9);
        ck_assert_str_eq(str(b1, "state"), "over");
        cJSON_Delete(j);
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        line_of(b.data, "## Budgets\n");
        line_of(b.data, "| team, monthly ");
        line_of(b.data, "| project, weekly ");
        ck_assert_ptr_nonnull(strstr(b.data, "holding this day, spent up to the day's end"));
        gc_buf_free(&b);
        free_ledger(&f);
        gc_tz_free(z);
}
END_TEST

/* Budgets in a running month: spend, share, forecast and state, Markdown and JSON alike. */
START_TEST(period_budgets)
{
        gc_tz *z = zone("Asia/Kathmandu");
        int64_t now = t_at("2026-11-20T06:00:00Z");
        const gc_budget budgets[] = {
            {GC_DIM_TEAM, "ml", GC_BUDGET_MONTHLY, 2000.0},      /* 93.6% used, forecast $2,880 */
            {GC_DIM_NAMESPACE, "ml", GC_BUDGET_MONTHLY, 5000.0}, /* 37.4%, forecast 57.6% */
            {GC_DIM_PROJECT, "train", GC_BUDGET_WEEKLY, 10.0},   /* weekly: not in a month */
            {GC_DIM_TEAM, "web", GC_BUDGET_MONTHLY, 100.0},      /* nothing spent */
        };
        gc_period_report r;
        fixture f;
        cJSON *j, *b0, *b1;
        gc_buf b;
        gc_budget_status st;

        tz_ledger(&f, 900);
        put_pod(&f, "k1", "ml", "ml", "train", "node-a", A100, "on-demand", 1, 4.0,
                t_at("2026-10-25T00:00:00Z"), GC_OPEN, 0);
        memset(&r, 0, sizeof(r));
        r.ledger = f.l;
        r.kind = "monthly";
        r.tz = z;
        r.start = gc_tz_period_start(z, GC_TZ_MONTH, now);
        r.end = gc_tz_period_add(z, GC_TZ_MONTH, now, 1);
        r.now = now;
        r.budgets = budgets;
        r.n_budgets = 4;
        gc_buf_init(&b, LIMIT);
        ck_assert_int_eq(gc_report_period_json(&r, &b), 0);
        j = parse(&b);
        ck_assert_int_eq(cJSON_GetArraySize(get(j, "budgets")), 3);
        b0 = cJSON_GetArrayItem(get(j, "budgets"), 0);
        ck_assert_str_eq(str(b0, "scope"), "team");
        ck_assert_double_eq_tol(num(b0, "spent"), 1871.0, 1e-9);
        ck_assert_double_eq_tol(num(b0, "forecast"), 2880.0, 1e-9);
        ck_assert_str_eq(str(b0, "state"), "warn");
        ck_assert(cJSON_IsTrue(get(b0, "forecast_over")));
        b1 = cJSON_GetArrayItem(get(j, "budgets"), 1);
        ck_assert_str_eq(str(b1, "scope"), "namespace");
        ck_assert_str_eq(str(b1, "state"), "ok");
        ck_assert(cJSON_IsFalse(get(b1, "forecast_over")));
        ck_assert_double_eq(num(cJSON_GetArrayItem(get(j, "budgets"), 2), "spent"), 0);
        cJSON_Delete(j);
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_markdown(&r, &b), 0);
        line_of(b.data, "## Budgets\n");
        {
                const char *row = line_of(b.data, "| team ");
                const char *eol = strchr(row, '\n');
                const char *w = strstr(row, "warning; forecast over budget");

                ck_assert(w && w < eol);
                ck_assert(strstr(row, "$2,000.00") < eol);
                ck_assert(strstr(row, "93.6%") < eol);
        }
        /* A team's copy shows its own team's budget only. */
        r.team = "web";
        gc_buf_reset(&b);
        ck_assert_int_eq(gc_report_period_json(&r, &b), 0);
        j = parse(&b);
        ck_assert_int_eq(cJSON_GetArraySize(get(j, "budgets")), 1);
        ck_assert_str_eq(str(cJSON_GetArrayItem(get(j, "budgets"), 0), "name"), "web");
        cJSON_Delete(j);
        /* Over the amount: over, whatever the forecast. */
        ck_assert_int_eq(
            gc_budget_eval_now(f.l, &budgets[0], z, t_at("2026-11-29T00:00:00Z"), 0.5, &st), 0);
        ck_assert_int_eq(st.state, GC_BUDGET_OVER);
        ck_assert_int_eq(st.start, t_at("2026-10-31T18:15:00Z"));
        ck_assert_int_eq(gc_budget_eval_now(f.l, &budgets[0], z, now, 1.5, &st), -EINVAL);
        /* Alerts: the thresholds crossed, and one stable name per budget, period, threshold. */
        {
                gc_budget_alert a, b2;

                ck_assert_uint_eq(gc_budget_crossed(&st),
                                  GC_BUDGET_AT_WARN | GC_BUDGET_AT_OVER | GC_BUDGET_AT_FORECAST);
                ck_assert_int_eq(gc_budget_eval_now(f.l, &budgets[0], z, now, 0, &st), 0);
                ck_assert_uint_eq(gc_budget_crossed(&st),
                                  GC_BUDGET_AT_WARN | GC_BUDGET_AT_FORECAST);
                ck_assert_int_eq(
                    gc_budget_alert_make(&budgets[0], &st, GC_BUDGET_AT_WARN, 0, "EUR", z, &a), 0);
                ck_assert_str_eq(a.reason, "GpuBudgetWarning");
                ck_assert_int_eq(strncmp(a.name, "gpu-cost-budget-", 16), 0);
                ck_assert_str_eq(a.name + strlen(a.name) - 5, "-warn");
                ck_assert_str_eq(a.message,
                                 "The monthly GPU budget of team ml (2000.00 EUR, the month from "
                                 "2026-11-01, Asia/Kathmandu) is 93.6% spent (1871.00 EUR), past "
                                 "80%; forecast 2880.00 EUR by the period's end.");
                /* Later in the same month: the same name; another threshold: another. */
                ck_assert_int_eq(gc_budget_eval_now(f.l, &budgets[0], z, now + 3600, 0, &st), 0);
                ck_assert_int_eq(
                    gc_budget_alert_make(&budgets[0], &st, GC_BUDGET_AT_WARN, 0, "EUR", z, &b2), 0);
                ck_assert_str_eq(a.name, b2.name);
                ck_assert_int_eq(
                    gc_budget_alert_make(&budgets[0], &st, GC_BUDGET_AT_FORECAST, 0, "EUR", z, &b2),
                    0);
                ck_assert_str_ne(a.name, b2.name);
                ck_assert_str_eq(b2.reason, "GpuBudgetForecastExceeded");
                ck_assert_int_eq(gc_budget_alert_make(&budgets[0], &st, 3, 0, "EUR", z, &b2),
                                 -EINVAL);
        }
        gc_buf_free(&b);
        free_ledger(&f);
        gc_tz_free(z);
}
END_TEST

static Suite *report_suite(void)
{
        Suite *s = suite_create("report");
        TCase *tc = tcase_create("summary");

        tcase_add_test(tc, summary_json_shape);
        tcase_add_test(tc, summary_json_precision);
        tcase_add_test(tc, summary_json_escaping);
        tcase_add_test(tc, summary_deterministic);
        tcase_add_test(tc, summary_bounded);
        tcase_add_test(tc, summary_every_limit);
        tcase_add_test(tc, summary_table_adds_up);
        tcase_add_test(tc, summary_table_money);
        tcase_add_test(tc, summary_markdown);
        suite_add_tcase(s, tc);

        tc = tcase_create("format");
        tcase_add_loop_test(tc, round_table, 0, sizeof(round_cases) / sizeof(round_cases[0]));
        tcase_add_loop_test(tc, money_table, 0, sizeof(money_cases) / sizeof(money_cases[0]));
        tcase_add_loop_test(tc, num_table, 0, sizeof(num_cases) / sizeof(num_cases[0]));
        tcase_add_loop_test(tc, iso_week_table, 0, sizeof(week_cases) / sizeof(week_cases[0]));
        suite_add_tcase(s, tc);

        tc = tcase_create("period");
        tcase_add_test(tc, period_json);
        tcase_add_test(tc, period_usage_basis);
        tcase_add_test(tc, period_markdown);
        tcase_add_test(tc, period_labels);
        tcase_add_test(tc, period_daily_no_previous);
        tcase_add_test(tc, period_folded_history);
        tcase_add_test(tc, period_history_names_folded_pods);
        tcase_add_test(tc, period_workloads);
        tcase_add_test(tc, period_workloads_folded);
        tcase_add_test(tc, period_bad_input);
        tcase_add_test(tc, period_savings);
        tcase_add_test(tc, period_every_limit);
        tcase_add_test(tc, period_monthly_berlin_dst);
        tcase_add_test(tc, period_monthly_kathmandu_exact);
        tcase_add_test(tc, period_budgets);
        tcase_add_test(tc, period_budgets_daily);
        tcase_add_test(tc, budget_workload_folded);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(report_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed != 0;
}
