/* client: the client of a controller's REST API: GETs, and its answers read back (docs/api.md). */
#ifndef GC_CLIENT_H
#define GC_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "../ledger/ledger.h"
#include "../util/util.h"

/*
 * What `gpu-cost costs|report|recommendations|health|export --server` do over HTTP, without the
 * flags and the printing: results are 0 or a negative errno, and what went wrong is a message
 * in err (errlen bytes, cut to fit; nothing when err is NULL). Nothing here prints or exits.
 * Every input is bounded: the answer's body by max_body, a summary's rows and idle nodes by the
 * limits below, a stepped answer by GC_LEDGER_MAX_STEPS. An answer is the server's word, not
 * trusted: a malformed or hostile one is refused with -EINVAL (or -E2BIG past a limit) and a
 * message naming the member, never read past its end. curl_global_init() is the program's job.
 */

#define GC_CLIENT_MAX_BODY  ((size_t)64 << 20) /* a year of daily steps by pod stays far below */
#define GC_CLIENT_MAX_TOKEN ((size_t)16 << 10)
#define GC_CLIENT_TIMEOUT_S 30
#define GC_CLIENT_MAX_ROWS  1000000 /* groups of one summary */
#define GC_CLIENT_MAX_NODES 100000  /* idle nodes of one summary */

/* ---- the request ------------------------------------------------------------------------------
 */

typedef struct gc_client_opts {
        const char *server; /* base URL, http:// or https:// (trailing slashes ignored) */
        const char *token;  /* bearer token, or NULL; no line break, at most GC_CLIENT_MAX_TOKEN */
        const char *cacert; /* PEM file of the CAs to verify an https server with; NULL: system's */
        int insecure;       /* do not verify the server's certificate (nor its name) */
        int64_t timeout_s;  /* the whole request; 0: GC_CLIENT_TIMEOUT_S */
        size_t max_body;    /* the answer's body in bytes; 0: GC_CLIENT_MAX_BODY */
} gc_client_opts;

/*
 * GETs server + path (path starts with '/') with the query parameters params[2i] = params[2i+1]
 * for i < n_params, each value percent-encoded; a NULL value leaves its parameter out. body is
 * reset and receives the answer's body, whatever its status (the caller initialises and frees
 * it; its own limit applies too). *ret_status is the HTTP status, 0 when no answer came; it is
 * written on every return. The Authorization header is built in memory that is zeroed before
 * it is freed, and the token appears in no message. Redirects are not followed.
 *
 *   0          a 200 answer
 *   -EPROTO    any other status; err is "server answered <status>: <its JSON "error" (or
 *              OpenCost's "message")>", else the body's first 200 bytes (control characters of
 *              the server's text are replaced, so no answer can write to a terminal)
 *   -E2BIG     the body passed max_body: "<url>: the answer is larger than 64 MiB"
 *   -ETIMEDOUT the timeout passed; -EIO no answer (refused, TLS, ...): "<url>: <libcurl's reason>"
 *   -EINVAL    bad arguments (no server or not http(s), a path without '/', a bad token)
 *   -ENOMEM    out of memory
 */
int gc_client_get(const gc_client_opts *o, const char *path, const char *const *params,
                  size_t n_params, gc_buf *body, long *ret_status, char *err, size_t errlen);

/* ---- cost summaries read back ---------------------------------------------------------------- */

/*
 * One cost summary (docs/report.md's shape, as pkg/report writes it) into *ret, so that
 * pkg/report formats it: "window" {start, end} (RFC 3339, start <= end), "by" (known dimension
 * names or label:<key>, no repeats), "groups" and "total" are required; "idle" (with its
 * "nodes"), "unattributed" and "capacity" may be absent (zeros). Figures are finite numbers
 * (gpu_seconds, else gpu_hours x 3600; absent: 0), counts whole numbers within 32 bits, keys
 * strings; other members (shared_usd, chargeback, blind_span...) are ignored. Strings are
 * interned in pool. *ret is written only on success; free it with gc_cost_summary_free.
 * -EINVAL (err names the member: "groups[3].cost_usd: not a finite number"), -E2BIG past
 * GC_CLIENT_MAX_ROWS groups or GC_CLIENT_MAX_NODES idle nodes, -ENOMEM (or the pool full).
 */
int gc_client_summary_from_json(const cJSON *doc, gc_strpool *pool, gc_cost_summary *ret, char *err,
                                size_t errlen);

/*
 * The member of a stepped /api/v1/costs answer that holds its summaries ("sets": an array whose
 * first item has "groups"), or NULL when doc is a single summary (it has "groups") or neither.
 */
const cJSON *gc_client_steps(const cJSON *doc);

/*
 * Reads a /api/v1/costs answer (len bytes of body) and hands fn each summary in order: one, or
 * each step's (stepped is then 1) with the currency it is in: its own "currency", else the
 * answer's, else NULL. A summary and its strings live until fn returns. A non-zero return of fn
 * stops the walk and is returned as is (err left empty). -EINVAL when the body is not JSON, not
 * an object or not a cost summary (err says why), -E2BIG past the limits (more than
 * GC_LEDGER_MAX_STEPS steps), -ENOMEM.
 */
typedef int (*gc_client_summary_fn)(void *ud, const gc_cost_summary *s, const char *currency,
                                    int stepped);
int gc_client_costs_each(const char *body, size_t len, gc_client_summary_fn fn, void *ud, char *err,
                         size_t errlen);

/* ---- findings -------------------------------------------------------------------------------- */

/*
 * A /api/v1/recommendations answer as an aligned text table appended to out: KIND, TEAM,
 * SUBJECT (what to change, named as a reader finds it: namespace/controller, namespace/pod,
 * node N, namespace N, model and capacity type...), SAVING/MONTH in the answer's currency and
 * CHANGE, in the server's order (largest saving first); "(no findings)" when there are none;
 * then its notes. -EINVAL when the answer holds no "findings" array (err says so), or out's
 * error (-E2BIG, -ENOMEM) with err set.
 */
int gc_client_findings_table(const char *body, size_t len, gc_buf *out, char *err, size_t errlen);

#endif
