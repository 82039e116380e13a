/* report summaries: a ledger cost summary as JSON, an aligned text table, or a Markdown table. */
#include "report.h"
#include "report_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gc_report__summary_check(const gc_cost_summary *s)
{
        unsigned seen = 0, dims;

        if (!s || s->n_by > GC_KEY_COUNT || (s->n_rows && !s->rows) ||
            (s->n_idle_nodes && !s->idle_nodes) || s->label_keys.n > GC_LABEL_DIMS)
                return -EINVAL;
        dims = GC_DIM_COUNT + (unsigned)s->label_keys.n;
        for (size_t i = 0; i < s->n_by; i++) {
                if ((unsigned)s->by[i] >= dims || (seen & (1u << s->by[i])))
                        return -EINVAL;
                seen |= 1u << s->by[i];
        }
        return 0;
}

static const char *gc_report__currency(const char *currency)
{
        return currency && *currency ? currency : "USD";
}

/* The figures every JSON row carries: hours, seconds and money. */
static int gc_report__json_amounts(gc_buf *b, const gc_cost_row *row)
{
        gc_report__json_field_num(b, "gpu_hours", row->gpu_seconds / 3600.0);
        gc_report__json_field_num(b, "gpu_seconds", row->gpu_seconds);
        return gc_report__json_field_money(b, "cost", row->cost);
}

/* A group's bill under chargeback (see gc_report_summary_json_chargeback). */
static double gc_report__bill(const gc_cost_row *row, double ratio, double pool)
{
        const char *t = row->keys[GC_DIM_TEAM];

        if (pool > 0 && (!t || strcmp(t, GC_UNATTRIBUTED) == 0))
                return 0;
        return row->cost + ratio * pool;
}

/* "groups": a row per group, its keys named as in "by"; its share and bill under chargeback. */
static int gc_report__json_groups(gc_buf *b, const gc_cost_summary *s, const char *const *names,
                                  const double *ratio, double pool)
{
        gc_buf_puts(b, ",\"groups\":[");
        for (size_t i = 0; !b->err && i < s->n_rows; i++) {
                const gc_cost_row *row = &s->rows[i];

                gc_buf_puts(b, i > 0 ? ",{\"keys\":{" : "{\"keys\":{");
                for (size_t k = 0; k < s->n_by; k++)
                        gc_report__json_field_str(b, names[k], row->keys[s->by[k]]);
                gc_buf_append(b, "}", 1);
                gc_report__json_amounts(b, row);
                if (s->basis == GC_BASIS_USAGE)
                        gc_report__json_field_money(b, "measured_cost", row->measured_cost);
                gc_report__json_field_u64(b, "pods", row->pods);
                gc_report__json_field_u64(b, "estimates", row->estimates);
                if (ratio) {
                        gc_report__json_field_money(b, "shared", ratio[i] * pool);
                        gc_report__json_field_money(b, "charged",
                                                    gc_report__bill(row, ratio[i], pool));
                }
                gc_buf_append(b, "}", 1);
        }
        return gc_buf_puts(b, "]");
}

/* "idle": allocatable capacity no pod held, in all and per node. */
static int gc_report__json_idle(gc_buf *b, const gc_cost_summary *s)
{
        gc_buf_puts(b, ",\"idle\":{");
        gc_report__json_amounts(b, &s->idle);
        gc_buf_puts(b, ",\"nodes\":[");
        for (size_t i = 0; !b->err && i < s->n_idle_nodes; i++) {
                const gc_cost_row *row = &s->idle_nodes[i];

                gc_buf_puts(b, i > 0 ? ",{" : "{");
                gc_report__json_field_str(b, "node", row->keys[GC_DIM_NODE]);
                gc_report__json_field_str(b, "model", row->keys[GC_DIM_MODEL]);
                gc_report__json_field_str(b, "capacity_type", row->keys[GC_DIM_CAPACITY_TYPE]);
                gc_report__json_amounts(b, row);
                gc_buf_append(b, "}", 1);
        }
        return gc_buf_puts(b, "]}");
}

/* "chargeback": the mode, the pool shared and the sum of every bill (the groups' in order). */
static int gc_report__json_chargeback(gc_buf *b, const gc_cost_summary *s, const gc_chargeback *cb,
                                      const double *ratio, double pool)
{
        double charged = 0;

        for (size_t i = 0; i < s->n_rows; i++)
                charged += gc_report__bill(&s->rows[i], ratio[i], pool);
        /* Nothing to share (no team spent): idle stays the cluster's own line. */
        if (pool <= 0)
                charged += s->idle.cost;
        gc_buf_puts(b, ",\"chargeback\":{");
        gc_buf_json_str(b, "mode");
        gc_buf_puts(b, ":");
        gc_buf_json_str(b, gc_chargeback_mode_name(cb->mode));
        gc_report__json_field_money(b, "shared", pool);
        gc_report__json_field_money(b, "charged", charged);
        return gc_buf_puts(b, "}");
}

static int gc_report__json_summary(const gc_cost_summary *s, const char *currency,
                                   const gc_chargeback *cb, const double *ratio, double pool,
                                   gc_buf *b)
{
        char bufs[GC_KEY_COUNT][GC_LABEL_KEY_MAX + 8];
        const char *names[GC_KEY_COUNT];

        for (size_t i = 0; i < s->n_by; i++)
                names[i] = gc_dim_label_name(s->by[i], &s->label_keys, bufs[i], sizeof(bufs[i]));
        gc_buf_puts(b, "{\"window\":{");
        gc_report__json_field_time(b, "start", s->start);
        gc_report__json_field_time(b, "end", s->end);
        gc_buf_puts(b, "},\"by\":[");
        for (size_t i = 0; i < s->n_by; i++) {
                if (i > 0)
                        gc_buf_append(b, ",", 1);
                gc_buf_json_str(b, names[i]);
        }
        gc_buf_puts(b, "]");
        gc_report__json_field_str(b, "currency", gc_report__currency(currency));
        /* The usage basis says so, and how much of each figure measurement decided; an
         * allocation answer is as it always was. */
        if (s->basis == GC_BASIS_USAGE)
                gc_report__json_field_str(b, "basis", gc_basis_name(s->basis));
        gc_report__json_groups(b, s, names, ratio, pool);
        gc_report__json_idle(b, s);
        gc_buf_puts(b, ",\"unattributed\":{");
        gc_report__json_amounts(b, &s->unattributed);
        gc_report__json_field_u64(b, "pods", s->unattributed.pods);
        gc_buf_puts(b, "},\"capacity\":{");
        gc_report__json_amounts(b, &s->capacity);
        gc_buf_puts(b, "},\"total\":{");
        gc_report__json_amounts(b, &s->total);
        if (s->basis == GC_BASIS_USAGE)
                gc_report__json_field_money(b, "measured_cost", s->total.measured_cost);
        gc_report__json_field_u64(b, "pods", s->total.pods);
        gc_report__json_field_u64(b, "estimates", s->total.estimates);
        gc_buf_puts(b, "}");
        if (ratio)
                gc_report__json_chargeback(b, s, cb, ratio, pool);
        return gc_buf_puts(b, "}");
}

int gc_report_summary_json(const gc_cost_summary *s, const char *currency, gc_buf *out)
{
        size_t orig;
        int r;

        if (!out || gc_report__summary_check(s) < 0)
                return -EINVAL;
        orig = out->len;
        r = gc_report__json_summary(s, currency, NULL, NULL, 0, out);
        if (r < 0 && out->data) /* nothing half-written is left behind */
                gc_buf_truncate(out, orig);
        return r;
}

int gc_report_summary_json_chargeback(const gc_cost_summary *s, const char *currency,
                                      const gc_chargeback *cb, gc_buf *out)
{
        double *ratio, pool = 0;
        size_t orig;
        int r;

        if (!cb || cb->mode == GC_CHARGEBACK_NONE)
                return gc_report_summary_json(s, currency, out);
        if (!out || gc_report__summary_check(s) < 0)
                return -EINVAL;
        ratio = calloc(s->n_rows + 1, sizeof(*ratio));
        if (!ratio)
                return -ENOMEM;
        r = gc_chargeback_ratios(s, cb, ratio, &pool);
        orig = out->len;
        if (r == 0)
                r = gc_report__json_summary(s, currency, cb, ratio, pool, out);
        if (r < 0 && out->data)
                gc_buf_truncate(out, orig);
        free(ratio);
        return r;
}

/* "capacity_type" as a column heading: "CAPACITY-TYPE" for terminals, "Capacity type" else. */
static void gc_report__heading(const gc_cost_summary *s, gc_dim d, int md,
                               char out[GC_REPORT__TEXT_LEN])
{
        char buf[GC_LABEL_KEY_MAX + 8];
        const char *name = gc_dim_label_name(d, &s->label_keys, buf, sizeof(buf));
        size_t i;

        for (i = 0; name && name[i] && i < GC_REPORT__TEXT_LEN - 1; i++) {
                char c = name[i];

                if (c == '_')
                        c = md ? ' ' : '-';
                else if ((!md || i == 0) && c >= 'a' && c <= 'z')
                        c = (char)(c - 'a' + 'A');
                out[i] = c;
        }
        out[i] = '\0';
}

static int gc_report__cell_em(gc_report__table *t, int bold, const char *s)
{
        if (!s)
                return gc_report__table_cell(t, "");
        return bold ? gc_report__table_cellf(t, "**%s**", s) : gc_report__table_cell(t, s);
}

/* The figures of one line: GPU-hours, cost, share and pods; NULL leaves a cell blank. */
static int gc_report__figures(gc_report__table *t, int bold, int64_t centi_hours, int64_t cents,
                              const char *currency, const char *share, const char *pods)
{
        char hours[GC_REPORT__TEXT_LEN], money[GC_REPORT__TEXT_LEN];
        int r;

        gc_report__hours(centi_hours, hours);
        gc_report__money(cents, currency, money);
        r = gc_report__cell_em(t, bold, hours);
        if (r == 0)
                r = gc_report__cell_em(t, bold, money);
        if (r == 0)
                r = gc_report__cell_em(t, bold, share);
        if (r == 0)
                r = gc_report__cell_em(t, bold, pods);
        return r;
}

/* A label in the first key column, blanks in the others. */
static int gc_report__label(gc_report__table *t, size_t n_key_cols, const char *label)
{
        int r = gc_report__table_cell(t, label);

        for (size_t k = 1; r == 0 && k < n_key_cols; k++)
                r = gc_report__table_cell(t, "");
        return r;
}

static int gc_report__summary_tab(const gc_cost_summary *s, const char *currency, int md,
                                  gc_buf *out)
{
        static const char *const text_h[] = {"GPU-HOURS", "COST", "SHARE", "PODS"};
        static const char *const md_h[] = {"GPU-hours", "Cost", "Share", "Pods"};
        gc_report__table t;
        gc_report__rounded rr = {0};
        size_t n_keys = s->n_by ? s->n_by : 1;
        char align[GC_REPORT__MAX_COLS + 1];
        char share[GC_REPORT__TEXT_LEN], pods[GC_REPORT__TEXT_LEN];
        int r;

        memset(align, 'l', n_keys);
        memcpy(align + n_keys, "rrrr", 5);
        r = gc_report__table_init(&t, align, out->limit);
        if (r < 0)
                return r;
        r = gc_report__round_rows(s->rows, s->n_rows, &s->total, &rr);
        if (r < 0)
                goto out;

        for (size_t k = 0; r == 0 && k < n_keys; k++) {
                char h[GC_REPORT__TEXT_LEN];

                if (s->n_by)
                        gc_report__heading(s, s->by[k], md, h);
                else
                        gc_strlcpy(h, md ? "Group" : "GROUP", sizeof(h));
                r = gc_report__table_cell(&t, h);
        }
        for (size_t c = 0; r == 0 && c < 4; c++)
                r = gc_report__table_cell(&t, md ? md_h[c] : text_h[c]);

        for (size_t i = 0; r == 0 && i < s->n_rows; i++) {
                const gc_cost_row *row = &s->rows[i];

                if (s->n_by == 0)
                        r = gc_report__table_cell(&t, "(all)");
                for (size_t k = 0; r == 0 && k < s->n_by; k++)
                        r = gc_report__table_key(&t, row->keys[s->by[k]], md);
                if (rr.share)
                        gc_report__pct(rr.share[i], share);
                snprintf(pods, sizeof(pods), "%u", row->pods);
                if (r == 0)
                        r = gc_report__figures(&t, 0, rr.centi_hours[i], rr.cents[i], currency,
                                               rr.share ? share : NULL, pods);
        }
        if (r == 0)
                r = gc_report__table_rule(&t);

        if (r == 0)
                r = gc_report__label(&t, n_keys,
                                     md ? "_Idle capacity (not in total)_"
                                        : "Idle capacity (not in total)");
        if (r == 0)
                r = gc_report__figures(&t, 0, gc_report__to_centi_hours(s->idle.gpu_seconds),
                                       gc_report__to_cents(s->idle.cost), currency, NULL, NULL);

        if (r == 0)
                r = gc_report__label(&t, n_keys,
                                     md ? "_Unattributed (included above)_"
                                        : "Unattributed (included above)");
        if (rr.share)
                gc_report__pct(gc_report__share_tenths(s->unattributed.cost, s->total.cost), share);
        snprintf(pods, sizeof(pods), "%u", s->unattributed.pods);
        if (r == 0)
                r = gc_report__figures(&t, 0,
                                       gc_report__to_centi_hours(s->unattributed.gpu_seconds),
                                       gc_report__to_cents(s->unattributed.cost), currency,
                                       rr.share ? share : NULL, pods);

        if (r == 0)
                r = gc_report__label(&t, n_keys, md ? "**Total**" : "Total");
        snprintf(pods, sizeof(pods), "%u", s->total.pods);
        if (r == 0)
                r = gc_report__figures(&t, md, rr.total_centi_hours, rr.total_cents, currency,
                                       rr.share ? "100.0%" : NULL, pods);

        if (r == 0)
                r = md ? gc_report__table_markdown(&t, out) : gc_report__table_text(&t, out);
out:
        gc_report__rounded_free(&rr);
        gc_report__table_free(&t);
        return r;
}

static int gc_report__summary_render(const gc_cost_summary *s, const char *currency, int md,
                                     gc_buf *out)
{
        size_t orig;
        int r;

        if (!out || gc_report__summary_check(s) < 0)
                return -EINVAL;
        orig = out->len;
        r = gc_report__summary_tab(s, currency, md, out);
        /* The usage basis says so under the table, with what measured use decided. */
        if (r == 0 && s->basis == GC_BASIS_USAGE) {
                char m[GC_REPORT_MONEY_LEN];

                gc_report_money(s->total.measured_cost, gc_report__currency(currency), m);
                r = gc_buf_printf(out,
                                  "\n%sUsage basis%s: shared GPUs split by measured use; %s of "
                                  "the total rests on measurement, the rest as allocated.\n",
                                  md ? "_" : "", md ? "_" : "", m);
        }
        if (r < 0 && out->data)
                gc_buf_truncate(out, orig);
        return r;
}

int gc_report_summary_table(const gc_cost_summary *s, const char *currency, gc_buf *out)
{
        return gc_report__summary_render(s, currency, 0, out);
}

int gc_report_summary_markdown(const gc_cost_summary *s, const char *currency, gc_buf *out)
{
        return gc_report__summary_render(s, currency, 1, out);
}
