/* catalog: the GPU price catalog: parsing, JSON output and most-specific-match lookup. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "price.h"

#define GC__MODEL_MAX  128 /* GFD product names are far shorter; a longer one is a mistake */
#define GC__TOKEN_MAX  63  /* a Kubernetes label value */
#define GC__SOURCE_MAX 512
#define GC__PATH_MAX   320

/* "where.name", or "name" when there is no prefix. */
static void gc__path(char *out, size_t n, const char *where, const char *name)
{
        int r;

        if (where && *where)
                r = snprintf(out, n, "%s.%s", where, name);
        else
                r = snprintf(out, n, "%s", name);
        /* A path longer than the buffer is cut short: the message still starts with the field. */
        if (r < 0 && n > 0)
                out[0] = '\0';
}

/* Models compare without case and with ' ' == '-', so DCGM's and GFD's spellings join. */
static int gc__model_char(char c)
{
        if (c == ' ')
                return '-';
        return tolower((unsigned char)c);
}

/* 1 when the first n bytes of a and b are equal as model names. */
static int gc__model_eqn(const char *a, const char *b, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                if (gc__model_char(a[i]) != gc__model_char(b[i]))
                        return 0;
                if (!a[i])
                        return 1;
        }
        return 1;
}

static int gc__model_eq(const char *a, const char *b)
{
        size_t la = strlen(a);

        return la == strlen(b) && gc__model_eqn(a, b, la);
}

static int gc__is_any(const char *s)
{
        return !s || strcmp(s, "*") == 0;
}

static int gc__region_eq(const char *a, const char *b)
{
        int any_a = gc__is_any(a), any_b = gc__is_any(b);

        if (any_a || any_b || !a || !b)
                return any_a && any_b;
        return strcasecmp(a, b) == 0;
}

/* ---- validation --------------------------------------------------------------------------- */

/* A model name or a pattern: printable, bounded, '*' only as the last character. */
static const char *gc__check_model(const char *s)
{
        size_t n = strlen(s);

        if (n == 0)
                return "must be a non-empty string";
        if (n > GC__MODEL_MAX)
                return "must be at most 128 characters";
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];

                if (c < 0x20 || c > 0x7e)
                        return "must be printable ASCII";
                if (c == '*' && i != n - 1)
                        return "'*' is allowed only as the last character";
        }
        return NULL;
}

/* Capacity types are lower-case tokens ("on-demand", "spot", "on-prem") or "*". */
static const char *gc__check_capacity(const char *s)
{
        size_t n = strlen(s);

        if (strcmp(s, "*") == 0)
                return NULL;
        if (n == 0 || n > GC__TOKEN_MAX)
                return "must be \"*\" or 1 to 63 characters";
        for (size_t i = 0; i < n; i++) {
                char c = s[i];

                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      (i > 0 && (c == '-' || c == '_' || c == '.'))))
                        return "must be \"*\" or lower-case letters, digits, '-', '_' and '.'";
        }
        return NULL;
}

/* Regions and zones as the topology labels write them ("us-east-1", "eastus", "europe-west4"). */
static const char *gc__check_region(const char *s)
{
        size_t n = strlen(s);

        if (strcmp(s, "*") == 0)
                return NULL;
        if (n == 0 || n > GC__TOKEN_MAX)
                return "must be \"*\" or 1 to 63 characters";
        for (size_t i = 0; i < n; i++) {
                char c = s[i];

                if (!(isalnum((unsigned char)c) || (i > 0 && (c == '-' || c == '_' || c == '.'))))
                        return "must be \"*\" or letters, digits, '-', '_' and '.'";
        }
        return NULL;
}

/* "YYYY-MM-DD", a real calendar date. */
static int gc__valid_date(const char *s)
{
        int64_t y;
        unsigned m, d, y2m, y2d;
        int64_t y2;

        if (strlen(s) != 10 || s[4] != '-' || s[7] != '-')
                return 0;
        for (int i = 0; i < 10; i++)
                if (i != 4 && i != 7 && !isdigit((unsigned char)s[i]))
                        return 0;
        y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
        m = (unsigned)((s[5] - '0') * 10 + (s[6] - '0'));
        d = (unsigned)((s[8] - '0') * 10 + (s[9] - '0'));
        if (m < 1 || m > 12 || d < 1 || d > 31)
                return 0;
        /* Feb 30 survives the range check: a round trip through day numbers catches it. */
        gc_civil_from_days(gc_days_from_civil(y, m, d), &y2, &y2m, &y2d);
        return y2 == y && y2m == m && y2d == d;
}

/* ---- building ------------------------------------------------------------------------------ */

gc_catalog *gc_catalog_free(gc_catalog *c)
{
        if (!c)
                return NULL;
        for (size_t i = 0; c->entries && i < c->n; i++) {
                free(c->entries[i].model);
                free(c->entries[i].capacity_type);
                free(c->entries[i].region);
                free(c->entries[i].source);
        }
        free(c->entries);
        free(c->currency);
        free(c->as_of);
        free(c->source);
        free(c);
        return NULL;
}

/*
 * An optional string member. Returns 1 with *ret set when present, 0 when absent or null,
 * -EINVAL (err names the field) when it is not a string.
 */
static int gc__opt_string(const cJSON *obj, const char *key, const char *base, const char **ret,
                          char *err, size_t errlen)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
        char path[GC__PATH_MAX];

        if (!v || cJSON_IsNull(v))
                return 0;
        if (!cJSON_IsString(v) || !v->valuestring) {
                gc__path(path, sizeof(path), base, key);
                gc_errf(err, errlen, "%s: must be a string", path);
                return -EINVAL;
        }
        *ret = v->valuestring;
        return 1;
}

static int gc__dup(const char *s, char **ret)
{
        char *p = strdup(s);

        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

/*
 * A price under its name, or under the name it had before money fields became currency-neutral
 * (price_per_gpu_hour), accepted for one release; giving both is refused unless they agree. *ret:
 * the item (NULL: neither), *ret_name: the name it was given under.
 */
static int gc__price_member(const cJSON *it, const char *base, const cJSON **ret,
                            const char **ret_name, char *err, size_t errlen)
{
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(it, "price_per_gpu_hour");
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(it, "usd_per_gpu_hour");

        if (a && b &&
            !(cJSON_IsNumber(a) && cJSON_IsNumber(b) && a->valuedouble == b->valuedouble)) {
                gc_errf(err, errlen,
                        "%s: price_per_gpu_hour and usd_per_gpu_hour (its old name) differ: give "
                        "one",
                        base);
                return -EINVAL;
        }
        *ret = a ? a : b;
        *ret_name = a || !b ? "price_per_gpu_hour" : "usd_per_gpu_hour";
        return 0;
}

static int gc__parse_entry(const cJSON *it, const char *base, gc_price_entry *e, char *err,
                           size_t errlen)
{
        const char *model = NULL, *cap = NULL, *region = NULL, *source = NULL, *why, *pname;
        const cJSON *price;
        char path[GC__PATH_MAX];
        int r;

        if (!cJSON_IsObject(it)) {
                gc_errf(err, errlen, "%s: must be an object", base);
                return -EINVAL;
        }
        if ((r = gc__opt_string(it, "model", base, &model, err, errlen)) < 0 ||
            (r = gc__opt_string(it, "capacity_type", base, &cap, err, errlen)) < 0 ||
            (r = gc__opt_string(it, "region", base, &region, err, errlen)) < 0 ||
            (r = gc__opt_string(it, "source", base, &source, err, errlen)) < 0)
                return r;
        /* Required, since unknown fields are ignored: a misspelt key must not widen a price. */
        if (!model) {
                gc_errf(err, errlen,
                        "%s.model: required (a GPU model, a pattern ending in '*', "
                        "or \"*\")",
                        base);
                return -EINVAL;
        }
        if ((why = gc__check_model(model))) {
                gc_errf(err, errlen, "%s.model: %s", base, why);
                return -EINVAL;
        }
        if (!cap) {
                gc_errf(err, errlen,
                        "%s.capacity_type: required (\"on-demand\", \"spot\", "
                        "\"reserved\", \"on-prem\", ... or \"*\")",
                        base);
                return -EINVAL;
        }
        if ((why = gc__check_capacity(cap))) {
                gc_errf(err, errlen, "%s.capacity_type: %s", base, why);
                return -EINVAL;
        }
        if (region && (why = gc__check_region(region))) {
                gc_errf(err, errlen, "%s.region: %s", base, why);
                return -EINVAL;
        }
        if (source && strlen(source) > GC__SOURCE_MAX) {
                gc_errf(err, errlen, "%s.source: must be at most %d characters", base,
                        GC__SOURCE_MAX);
                return -EINVAL;
        }
        if ((r = gc__price_member(it, base, &price, &pname, err, errlen)) < 0)
                return r;
        if (!cJSON_IsNumber(price) || !isfinite(price->valuedouble) || price->valuedouble < 0) {
                gc__path(path, sizeof(path), base, pname);
                gc_errf(err, errlen, "%s: must be a number >= 0", path);
                return -EINVAL;
        }
        e->price_per_gpu_hour = price->valuedouble;
        if ((r = gc__dup(model, &e->model)) < 0 || (r = gc__dup(cap, &e->capacity_type)) < 0 ||
            (region && (r = gc__dup(region, &e->region)) < 0) ||
            (source && (r = gc__dup(source, &e->source)) < 0)) {
                gc_errf(err, errlen, "%s: out of memory", base);
                return r;
        }
        return 0;
}

/* Hashes s as lookup compares it: each byte through norm (NULL: as is), then a separator. */
static uint64_t gc__hash_norm(uint64_t h, const char *s, int (*norm)(int))
{
        for (; *s; s++) {
                unsigned char c = (unsigned char)(norm ? norm((unsigned char)*s) : *s);

                h = gc_hash(&c, 1, h);
        }
        return gc_hash("\xff", 1, h);
}

static int gc__model_norm(int c)
{
        return gc__model_char((char)c);
}

/* Hash of the (model, capacity type, region) key, equal for keys that lookup cannot tell apart. */
static uint32_t gc__key_hash(const gc_price_entry *e)
{
        uint64_t h = gc__hash_norm(0, e->model ? e->model : "", gc__model_norm);

        h = gc__hash_norm(h, e->capacity_type ? e->capacity_type : "", tolower);
        h = gc__hash_norm(h, gc__is_any(e->region) ? "*" : e->region, tolower);
        return gc_hash_fin(h);
}

static int gc__same_key(const gc_price_entry *a, const gc_price_entry *b)
{
        /* NULL only in a catalog built by hand: compare it as the empty string. */
        return gc__model_eq(a->model ? a->model : "", b->model ? b->model : "") &&
               strcasecmp(a->capacity_type ? a->capacity_type : "",
                          b->capacity_type ? b->capacity_type : "") == 0 &&
               gc__region_eq(a->region, b->region);
}

typedef struct gc__entry_key {
        const gc_catalog *c;
        const gc_price_entry *e;
} gc__entry_key;

static int gc__entry_eq(const void *ctx, size_t row)
{
        const gc__entry_key *k = ctx;

        return gc__same_key(&k->c->entries[row], k->e);
}

/*
 * Finds two entries with the same key: each entry is looked up among those before it, so the
 * pair reported is the one whose later index is smallest (the message names the first repeat).
 * Returns 1 with the pair, 0 when none, -ENOMEM.
 */
static int gc__find_duplicate(const gc_catalog *c, size_t *ret_first, size_t *ret_second)
{
        gc_index ix = {0};
        int r = 0;

        if (c->n < 2)
                return 0;
        if (gc_index_reserve(&ix, c->n) < 0)
                return -ENOMEM;
        for (size_t j = 0; j < c->n && r == 0; j++) {
                gc__entry_key k = {c, &c->entries[j]};
                uint32_t h = gc__key_hash(&c->entries[j]);
                size_t pos;

                if (gc_index_find(&ix, h, gc__entry_eq, &k, &pos)) {
                        *ret_first = gc_index_row(&ix, pos);
                        *ret_second = j;
                        r = 1;
                } else {
                        gc_index_fill(&ix, pos, h, j);
                }
        }
        gc_index_free(&ix);
        return r;
}

gc_catalog *gc_catalog_from_cjson(const cJSON *obj, const char *where, char *err, size_t errlen)
{
        const char *currency = NULL, *as_of = NULL, *source = NULL;
        const char *w = where ? where : "";
        char path[GC__PATH_MAX], base[GC__PATH_MAX + 24];
        gc_catalog *c = NULL;
        const cJSON *prices, *it;
        size_t n = 0, i, dup_i, dup_j;
        int r;

        if (!cJSON_IsObject(obj)) {
                gc_errf(err, errlen, "%s: must be an object", *w ? w : "catalog");
                return NULL;
        }
        if (gc__opt_string(obj, "currency", w, &currency, err, errlen) < 0 ||
            gc__opt_string(obj, "as_of", w, &as_of, err, errlen) < 0 ||
            gc__opt_string(obj, "source", w, &source, err, errlen) < 0)
                return NULL;
        gc__path(path, sizeof(path), w, "currency");
        if (!currency || strlen(currency) != 3 || !isalpha((unsigned char)currency[0]) ||
            !isalpha((unsigned char)currency[1]) || !isalpha((unsigned char)currency[2])) {
                gc_errf(err, errlen, "%s: required, 3 letters (ISO 4217, e.g. \"USD\")", path);
                return NULL;
        }
        gc__path(path, sizeof(path), w, "as_of");
        if (as_of && !gc__valid_date(as_of)) {
                gc_errf(err, errlen, "%s: must be a date YYYY-MM-DD", path);
                return NULL;
        }
        gc__path(path, sizeof(path), w, "source");
        if (source && strlen(source) > GC__SOURCE_MAX) {
                gc_errf(err, errlen, "%s: must be at most %d characters", path, GC__SOURCE_MAX);
                return NULL;
        }
        gc__path(path, sizeof(path), w, "prices");
        prices = cJSON_GetObjectItemCaseSensitive(obj, "prices");
        if (!cJSON_IsArray(prices)) {
                gc_errf(err, errlen, "%s: required, an array of price entries", path);
                return NULL;
        }
        cJSON_ArrayForEach(it, prices)
        {
                if (++n > GC_CATALOG_MAX_ENTRIES) {
                        gc_errf(err, errlen, "%s: more than %d entries", path,
                                GC_CATALOG_MAX_ENTRIES);
                        return NULL;
                }
        }
        if (n == 0) {
                gc_errf(err, errlen, "%s: must hold at least one entry", path);
                return NULL;
        }
        c = calloc(1, sizeof(*c));
        if (!c || !(c->entries = calloc(n, sizeof(gc_price_entry))))
                goto nomem;
        c->currency = strdup(currency);
        if (!c->currency || (as_of && !(c->as_of = strdup(as_of))) ||
            (source && !(c->source = strdup(source))))
                goto nomem;
        for (i = 0; i < 3; i++)
                c->currency[i] = (char)toupper((unsigned char)c->currency[i]);
        i = 0;
        cJSON_ArrayForEach(it, prices)
        {
                snprintf(base, sizeof(base), "%s[%zu]", path, i);
                /* n counts the entries parsed so far, so free() sees only initialised ones. */
                c->n = i + 1;
                r = gc__parse_entry(it, base, &c->entries[i], err, errlen);
                if (r < 0)
                        return gc_catalog_free(c);
                i++;
        }
        r = gc__find_duplicate(c, &dup_i, &dup_j);
        if (r < 0)
                goto nomem;
        if (r > 0) {
                const gc_price_entry *e = &c->entries[dup_j];

                gc_errf(err, errlen,
                        "%s[%zu]: same model, capacity_type and region as %s[%zu] (\"%s\", "
                        "\"%s\", %s%s%s)",
                        path, dup_j, path, dup_i, e->model, e->capacity_type,
                        gc__is_any(e->region) ? "" : "\"",
                        gc__is_any(e->region) ? "any region" : e->region,
                        gc__is_any(e->region) ? "" : "\"");
                return gc_catalog_free(c);
        }
        return c;
nomem:
        gc_errf(err, errlen, "%s: out of memory", *w ? w : "catalog");
        return gc_catalog_free(c);
}

gc_catalog *gc_catalog_parse(const char *json, size_t len, char *err, size_t errlen)
{
        const char *end = NULL;
        gc_catalog *c;
        cJSON *root;

        if (!json || len == 0) {
                gc_errf(err, errlen, "catalog: empty");
                return NULL;
        }
        if (len > GC_CATALOG_MAX_BYTES) {
                gc_errf(err, errlen, "catalog: larger than %u bytes", GC_CATALOG_MAX_BYTES);
                return NULL;
        }
        root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
        if (!root) {
                size_t at = end && end >= json && end <= json + len ? (size_t)(end - json) : 0;

                gc_errf(err, errlen, "catalog: not valid JSON (near byte %zu)", at);
                return NULL;
        }
        /* cJSON stops after the first value; anything but blanks after it is a mistake. */
        for (const char *p = end; p && p < json + len; p++) {
                if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
                        gc_errf(err, errlen,
                                "catalog: unexpected data after the JSON value "
                                "(byte %zu)",
                                (size_t)(p - json));
                        cJSON_Delete(root);
                        return NULL;
                }
        }
        c = gc_catalog_from_cjson(root, "", err, errlen);
        cJSON_Delete(root);
        return c;
}

/* ---- output -------------------------------------------------------------------------------- */

/* The shortest of %.15g and %.17g that reads back as the same double. */
static void gc__fmt_number(double v, char *out, size_t n)
{
        snprintf(out, n, "%.15g", v);
        if (strtod(out, NULL) != v)
                snprintf(out, n, "%.17g", v);
}

/* Appends to out (which may reallocate); -E2BIG past its limit, -EINVAL for a bad entry. */
int gc_catalog_to_json(const gc_catalog *c, gc_buf *out)
{
        char num[40];
        int r = 0;

        if (!c || !out || !c->currency)
                return -EINVAL;
        for (size_t i = 0; i < c->n; i++) {
                const gc_price_entry *e = &c->entries[i];

                if (!e->model || !e->capacity_type || !isfinite(e->price_per_gpu_hour) ||
                    e->price_per_gpu_hour < 0)
                        return -EINVAL;
        }
        if ((r = gc_buf_puts(out, "{\"currency\":")) < 0 ||
            (r = gc_buf_json_str(out, c->currency)) < 0)
                return r;
        if (c->as_of &&
            ((r = gc_buf_puts(out, ",\"as_of\":")) < 0 || (r = gc_buf_json_str(out, c->as_of)) < 0))
                return r;
        if (c->source && ((r = gc_buf_puts(out, ",\"source\":")) < 0 ||
                          (r = gc_buf_json_str(out, c->source)) < 0))
                return r;
        if ((r = gc_buf_puts(out, ",\"prices\":[")) < 0)
                return r;
        for (size_t i = 0; i < c->n; i++) {
                const gc_price_entry *e = &c->entries[i];

                gc__fmt_number(e->price_per_gpu_hour, num, sizeof(num));
                if ((r = gc_buf_puts(out, i ? ",\n{\"model\":" : "\n{\"model\":")) < 0 ||
                    (r = gc_buf_json_str(out, e->model)) < 0 ||
                    (r = gc_buf_puts(out, ",\"capacity_type\":")) < 0 ||
                    (r = gc_buf_json_str(out, e->capacity_type)) < 0)
                        return r;
                if (e->region && ((r = gc_buf_puts(out, ",\"region\":")) < 0 ||
                                  (r = gc_buf_json_str(out, e->region)) < 0))
                        return r;
                /* The old name too, for one release (docs/prices.md). */
                if ((r = gc_buf_printf(out, ",\"price_per_gpu_hour\":%s,\"usd_per_gpu_hour\":%s",
                                       num, num)) < 0)
                        return r;
                if (e->source && ((r = gc_buf_puts(out, ",\"source\":")) < 0 ||
                                  (r = gc_buf_json_str(out, e->source)) < 0))
                        return r;
                if ((r = gc_buf_puts(out, "}")) < 0)
                        return r;
        }
        return gc_buf_puts(out, "\n]}");
}

/* ---- lookup -------------------------------------------------------------------------------- */

/*
 * How specifically pattern names model: -1 no match, 0 for "*", the prefix length for a glob,
 * and above any prefix length for an exact name.
 */
static long gc__model_score(const char *pattern, const char *model)
{
        size_t n = strlen(pattern);

        if (n > 0 && pattern[n - 1] == '*') {
                n--;
                if (strlen(model) < n || !gc__model_eqn(pattern, model, n))
                        return -1;
                return (long)n;
        }
        return gc__model_eq(pattern, model) ? GC__MODEL_MAX + 1 : -1;
}

int gc_catalog_lookup(const gc_catalog *c, const char *model, const char *capacity_type,
                      const char *region, const gc_price_entry **ret_entry)
{
        const gc_price_entry *best = NULL;
        long best_score = -1;

        if (!c || !model || !capacity_type || !ret_entry)
                return -EINVAL;
        for (size_t i = 0; i < c->n; i++) {
                const gc_price_entry *e = &c->entries[i];
                long m, score;
                int cap_exact, region_exact;

                m = gc__model_score(e->model, model);
                if (m < 0)
                        continue;
                cap_exact = strcmp(e->capacity_type, "*") != 0;
                if (cap_exact && strcasecmp(e->capacity_type, capacity_type) != 0)
                        continue;
                region_exact = !gc__is_any(e->region);
                if (region_exact && (!region || strcasecmp(e->region, region) != 0))
                        continue;
                /* Lexicographic (model, capacity type, region); '>' keeps the earlier on ties. */
                score = m * 4 + cap_exact * 2 + region_exact;
                if (score > best_score) {
                        best = e;
                        best_score = score;
                }
        }
        if (!best)
                return -ENOENT;
        *ret_entry = best;
        return 0;
}
