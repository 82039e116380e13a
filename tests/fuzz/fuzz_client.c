/*
 * fuzz_client: arbitrary bytes as the controller's answers, through the cost-summary reader (and
 * pkg/report's table, Markdown and JSON of what it accepts) and the findings table, checking
 * what must hold for any answer, not only that nothing crashes: an accepted summary is one
 * pkg/report takes (a window in order, at most GC_KEY_COUNT distinct dimensions, finite
 * figures, strings no longer than the input); a refusal says why in a printable message. A
 * broken invariant traps, which libFuzzer reports as a crash and the replay test as a failure.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "client/client.h"
#include "report/report.h"
#include "util/util.h"

/* libFuzzer's name, not ours. */
/* NOLINTNEXTLINE(readability-identifier-naming) */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
        do {                                                                                       \
                if (!(cond))                                                                       \
                        __builtin_trap();                                                          \
        } while (0)

typedef struct ctx {
        size_t size; /* of the input */
        size_t n;
} ctx;

static void check_row(const gc_cost_row *row, size_t size)
{
        CHECK(isfinite(row->gpu_seconds) && isfinite(row->cost));
        for (size_t k = 0; k < GC_KEY_COUNT; k++)
                CHECK(!row->keys[k] || strlen(row->keys[k]) <= size);
}

/* A printable message, NUL-terminated within its buffer. */
static void check_err(const char *err, size_t errlen)
{
        size_t n = strnlen(err, errlen);

        CHECK(n > 0 && n < errlen);
        for (size_t i = 0; i < n; i++)
                CHECK((unsigned char)err[i] >= 0x20 && err[i] != 0x7f);
}

static int summary(void *ud, const gc_cost_summary *s, const char *currency, int stepped)
{
        ctx *c = ud;
        unsigned seen = 0;
        gc_buf out;
        int r;

        (void)stepped;
        c->n++;
        CHECK(c->n <= GC_LEDGER_MAX_STEPS);
        CHECK(s->start <= s->end);
        CHECK(s->n_by <= GC_KEY_COUNT && s->label_keys.n <= GC_LABEL_DIMS);
        for (size_t i = 0; i < s->n_by; i++) {
                CHECK((unsigned)s->by[i] < GC_DIM_COUNT + s->label_keys.n);
                CHECK(!(seen & (1u << s->by[i])));
                seen |= 1u << s->by[i];
        }
        CHECK(s->n_rows <= GC_CLIENT_MAX_ROWS && s->n_idle_nodes <= GC_CLIENT_MAX_NODES);
        for (size_t i = 0; i < s->n_rows; i++)
                check_row(&s->rows[i], c->size);
        for (size_t i = 0; i < s->n_idle_nodes; i++)
                check_row(&s->idle_nodes[i], c->size);
        check_row(&s->total, c->size);
        check_row(&s->idle, c->size);
        /* What the CLI does with it: pkg/report takes every summary the reader accepts. */
        gc_buf_init(&out, 4 << 20);
        r = gc_report_summary_table(s, currency, &out);
        CHECK(r == 0 || r == -E2BIG);
        gc_buf_reset(&out);
        r = gc_report_summary_markdown(s, currency, &out);
        CHECK(r == 0 || r == -E2BIG);
        gc_buf_reset(&out);
        r = gc_report_summary_json(s, currency, &out);
        CHECK(r == 0 || r == -E2BIG);
        gc_buf_free(&out);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *body = (const char *)data;
        ctx c = {size, 0};
        char err[512];
        gc_buf out;
        int r;

        r = gc_client_costs_each(body, size, summary, &c, err, sizeof(err));
        CHECK(r == 0 || r == -EINVAL || r == -E2BIG);
        if (r < 0)
                check_err(err, sizeof(err));
        else
                CHECK(c.n >= 1);

        gc_buf_init(&out, 4 << 20);
        r = gc_client_findings_table(body, size, &out, err, sizeof(err));
        CHECK(r == 0 || r == -EINVAL || r == -E2BIG);
        if (r < 0) {
                check_err(err, sizeof(err));
                CHECK(out.len == 0);
        } else {
                CHECK(out.len > 0 && strncmp(out.data, "KIND", 4) == 0);
        }
        gc_buf_free(&out);
        return 0;
}
