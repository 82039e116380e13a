/* config: parses and validates the configuration file, on top of documented defaults. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const gc__default_team_keys[] = {"team", "app.kubernetes.io/team",
                                                    "gpu-cost.io/team"};
static const char *const gc__default_project_keys[] = {"project", "app.kubernetes.io/project",
                                                       "gpu-cost.io/project", "cost-center"};

static void gc__usage_defaults(gc_config *c);
gc_config *gc_config_free(gc_config *c)
{
        if (!c)
                return NULL;
        free(c->team_keys);
        free(c->project_keys);
        free(c->ns_teams);
        free(c->ns_projects);
        free(c->team_namespaces);
        free(c->team_weights);
        free(c->budgets);
        gc_tz_free(c->tz);
        gc_res_table_free(c->res);
        gc_price_rules_free(&c->rules);
        gc_catalog_free(c->catalog);
        gc_strpool_free(c->pool);
        free(c);
        return NULL;
}

/* Replaces *ret_keys with pooled copies of keys[]. */
static int gc__set_keys(gc_config *c, const char ***ret_keys, size_t *ret_n,
                        const char *const *keys, size_t n)
{
        const char **v = calloc(n ? n : 1, sizeof(*v));

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                v[i] = gc_strpool_intern0(c->pool, keys[i]);
                if (!v[i]) {
                        free(v);
                        return -ENOMEM;
                }
        }
        free(*ret_keys);
        *ret_keys = v;
        *ret_n = n;
        return 0;
}

gc_config *gc_config_default(void)
{
        gc_config *c = calloc(1, sizeof(*c));

        if (!c)
                return NULL;
        c->pool = gc_strpool_new(GC_CONFIG_MAX_BYTES);
        c->res = gc_res_table_new_default();
        c->catalog = gc_catalog_builtin();
        c->catalog_builtin = 1;
        c->top_n = 10;
        c->daily_retention_days = 35;
        c->weekly_retention_weeks = 12;
        c->monthly_retention_months = 12;
        c->budget_warn_share = 0.8;
        c->usage_retention_days = 30;
        gc__usage_defaults(c);
        gc_advisor_opts_default(&c->advisor);
        if (!c->pool || !c->res || !c->catalog || gc_tz_fixed(0, &c->tz) < 0)
                return gc_config_free(c);
        c->cluster = gc_strpool_intern0(c->pool, "default");
        if (!c->cluster ||
            gc__set_keys(c, &c->team_keys, &c->n_team_keys, gc__default_team_keys,
                         sizeof(gc__default_team_keys) / sizeof(gc__default_team_keys[0])) < 0 ||
            gc__set_keys(c, &c->project_keys, &c->n_project_keys, gc__default_project_keys,
                         sizeof(gc__default_project_keys) / sizeof(gc__default_project_keys[0])) <
                0)
                return gc_config_free(c);
        return c;
}

void gc_config_set_catalog(gc_config *c, gc_catalog *cat)
{
        gc_catalog_free(c->catalog);
        c->catalog = cat;
        c->catalog_builtin = 0;
}

/* A label key: an optional DNS prefix and '/', then a name of at most 63 characters. */
static int gc__valid_label_key(const char *s)
{
        const char *slash = strrchr(s, '/');
        const char *name = slash ? slash + 1 : s;
        size_t n = strlen(name);

        if (n == 0 || n > 63 || (slash && (slash == s || (size_t)(slash - s) > 253)))
                return 0;
        for (const char *p = s; *p; p++) {
                char ch = *p;

                if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' || ch == '/'))
                        return 0;
        }
        return 1;
}

static int gc__check_keys(const cJSON *obj, const char *where, const char *const *known,
                          size_t n_known, char *err, size_t errlen);

/*
 * A member under its name or, for one release, under the name it had before money fields
 * became currency-neutral (old); both only when they are the same number. *ret: the member or
 * NULL, *ret_name: the name it was given under.
 */
static int gc__renamed(const cJSON *obj, const char *where, const char *name, const char *old,
                       const cJSON **ret, const char **ret_name, char *err, size_t errlen)
{
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, name);
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(obj, old);

        if (a && b &&
            !(cJSON_IsNumber(a) && cJSON_IsNumber(b) && a->valuedouble == b->valuedouble)) {
                gc_errf(err, errlen, "%s: %s and %s (its old name) differ: give one", where, name,
                        old);
                return -EINVAL;
        }
        *ret = a ? a : b;
        *ret_name = a || !b ? name : old;
        return 0;
}

int gc_config_add_label_key(gc_config *c, const char *key, size_t n, char *err, size_t errlen)
{
        char k[GC_LABEL_KEY_MAX + 1];

        if (!c || !key || n == 0 || n > GC_LABEL_KEY_MAX || memchr(key, '\0', n)) {
                gc_errf(err, errlen, "label:%.*s: not a label key", n > 64 ? 64 : (int)n,
                        key ? key : "");
                return -EINVAL;
        }
        memcpy(k, key, n);
        k[n] = '\0';
        if (!gc__valid_label_key(k)) {
                gc_errf(err, errlen, "label:%.64s: not a label key", k);
                return -EINVAL;
        }
        for (size_t i = 0; i < c->n_label_keys; i++)
                if (strcmp(c->label_keys[i], k) == 0)
                        return 0;
        if (c->n_label_keys >= GC_LABEL_DIMS) {
                gc_errf(err, errlen, "label:%.64s: at most %d label keys are kept as dimensions", k,
                        GC_LABEL_DIMS);
                return -E2BIG;
        }
        c->label_keys[c->n_label_keys] = gc_strpool_intern0(c->pool, k);
        if (!c->label_keys[c->n_label_keys])
                return -ENOMEM;
        c->n_label_keys++;
        return 0;
}

/* labels: {"dimensions": ["cost-center", ...]}, distinct keys, at most GC_LABEL_DIMS. */
static int gc__parse_labels(gc_config *c, const cJSON *obj, char *err, size_t errlen)
{
        static const char *const known[] = {"dimensions"};
        const cJSON *arr, *it;
        size_t n = 0;
        int r;

        if (!cJSON_IsObject(obj)) {
                gc_errf(err, errlen, "labels: must be an object");
                return -EINVAL;
        }
        r = gc__check_keys(obj, "labels", known, 1, err, errlen);
        if (r < 0)
                return r;
        arr = cJSON_GetObjectItemCaseSensitive(obj, "dimensions");
        if (!arr)
                return 0;
        if (!cJSON_IsArray(arr)) {
                gc_errf(err, errlen, "labels.dimensions: must be an array of label keys");
                return -EINVAL;
        }
        c->n_label_keys = 0;
        cJSON_ArrayForEach(it, arr)
        {
                if (n >= GC_LABEL_DIMS) {
                        gc_errf(err, errlen, "labels.dimensions: at most %d keys", GC_LABEL_DIMS);
                        return -E2BIG;
                }
                if (!cJSON_IsString(it) || !gc__valid_label_key(it->valuestring)) {
                        gc_errf(err, errlen,
                                "labels.dimensions[%zu]: must be a label key (such as "
                                "\"cost-center\")",
                                n);
                        return -EINVAL;
                }
                for (size_t i = 0; i < c->n_label_keys; i++) {
                        if (strcmp(c->label_keys[i], it->valuestring) == 0) {
                                gc_errf(err, errlen,
                                        "labels.dimensions[%zu]: \"%s\" is given twice", n,
                                        it->valuestring);
                                return -EINVAL;
                        }
                }
                c->label_keys[c->n_label_keys] = gc_strpool_intern0(c->pool, it->valuestring);
                if (!c->label_keys[c->n_label_keys])
                        return -ENOMEM;
                c->n_label_keys++;
                n++;
        }
        return 0;
}

static int gc__parse_keys(gc_config *c, const cJSON *arr, const char *where, const char ***ret,
                          size_t *ret_n, char *err, size_t errlen)
{
        const char *keys[GC_CONFIG_MAX_KEYS];
        size_t n = 0;
        const cJSON *it;

        if (!cJSON_IsArray(arr)) {
                gc_errf(err, errlen, "%s: must be an array of label keys", where);
                return -EINVAL;
        }
        cJSON_ArrayForEach(it, arr)
        {
                if (n >= GC_CONFIG_MAX_KEYS) {
                        gc_errf(err, errlen, "%s: at most %d keys", where, GC_CONFIG_MAX_KEYS);
                        return -E2BIG;
                }
                if (!cJSON_IsString(it) || !gc__valid_label_key(it->valuestring)) {
                        gc_errf(err, errlen, "%s[%zu]: must be a label key (such as \"team\")",
                                where, n);
                        return -EINVAL;
                }
                keys[n++] = it->valuestring;
        }
        return gc__set_keys(c, ret, ret_n, keys, n);
}

/* Parses {"k":"v",...} into a malloc'd label array with pooled strings. */
static int gc__parse_map(gc_config *c, const cJSON *obj, const char *where, int keys_are_labels,
                         gc_label **ret, size_t *ret_n, char *err, size_t errlen)
{
        size_t n = 0, cap = (size_t)cJSON_GetArraySize(obj);
        gc_label *v;
        const cJSON *it;

        if (!cJSON_IsObject(obj)) {
                gc_errf(err, errlen, "%s: must be an object of string values", where);
                return -EINVAL;
        }
        if (cap > GC_CONFIG_MAX_MAP) {
                gc_errf(err, errlen, "%s: at most %d entries", where, GC_CONFIG_MAX_MAP);
                return -E2BIG;
        }
        v = calloc(cap ? cap : 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        cJSON_ArrayForEach(it, obj)
        {
                if (!it->string || !*it->string ||
                    (keys_are_labels && !gc__valid_label_key(it->string))) {
                        gc_errf(err, errlen, "%s: bad key \"%.64s\"", where,
                                it->string ? it->string : "");
                        free(v);
                        return -EINVAL;
                }
                if (!cJSON_IsString(it)) {
                        gc_errf(err, errlen, "%s.%.64s: must be a string", where, it->string);
                        free(v);
                        return -EINVAL;
                }
                v[n].key = gc_strpool_intern0(c->pool, it->string);
                v[n].value = gc_strpool_intern0(c->pool, it->valuestring);
                if (!v[n].key || !v[n].value) {
                        free(v);
                        return -ENOMEM;
                }
                n++;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

static int gc__check_keys(const cJSON *obj, const char *where, const char *const *known,
                          size_t n_known, char *err, size_t errlen)
{
        const cJSON *it;

        cJSON_ArrayForEach(it, obj)
        {
                size_t i;

                for (i = 0; i < n_known; i++)
                        if (it->string && strcmp(it->string, known[i]) == 0)
                                break;
                if (i == n_known) {
                        gc_errf(err, errlen, "%s%s%.64s: unknown field", where, *where ? "." : "",
                                it->string ? it->string : "?");
                        return -EINVAL;
                }
        }
        return 0;
}

/* Returns a pooled, malloc-free copy for the price rules, which own plain strdup'd strings. */
static char *gc__dup_string(const cJSON *s)
{
        return cJSON_IsString(s) ? strdup(s->valuestring) : NULL;
}

static int gc__parse_number(const cJSON *v, const char *where, double lo, double hi, double *ret,
                            char *err, size_t errlen)
{
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
            v->valuedouble > hi) {
                gc_errf(err, errlen, "%s: must be a number in [%g, %g]", where, lo, hi);
                return -EINVAL;
        }
        *ret = v->valuedouble;
        return 0;
}

static int gc__parse_resources(gc_config *c, const cJSON *arr, char *err, size_t errlen)
{
        static const char *const known[] = {"name", "kind", "gpus_per_unit"};
        const cJSON *it;
        size_t i = 0;

        if (!cJSON_IsArray(arr)) {
                gc_errf(err, errlen, "resources: must be an array");
                return -EINVAL;
        }
        cJSON_ArrayForEach(it, arr)
        {
                char where[64];
                const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
                const cJSON *kind = cJSON_GetObjectItemCaseSensitive(it, "kind");
                gc_res_kind k = GC_RES_FIXED;
                double per_unit = 0;
                int r;

                snprintf(where, sizeof(where), "resources[%zu]", i);
                if (i++ >= GC_CONFIG_MAX_KEYS) {
                        gc_errf(err, errlen, "resources: at most %d entries", GC_CONFIG_MAX_KEYS);
                        return -E2BIG;
                }
                if (!cJSON_IsObject(it)) {
                        gc_errf(err, errlen, "%s: must be an object", where);
                        return -EINVAL;
                }
                r = gc__check_keys(it, where, known, 3, err, errlen);
                if (r < 0)
                        return r;
                if (!cJSON_IsString(name) || !*name->valuestring ||
                    strlen(name->valuestring) > 253 || !strchr(name->valuestring, '/')) {
                        gc_errf(err, errlen,
                                "%s.name: must be an extended resource name (\"vendor.com/gpu\")",
                                where);
                        return -EINVAL;
                }
                if (kind) {
                        const char *ks = cJSON_IsString(kind) ? kind->valuestring : "";

                        if (strcmp(ks, "fixed") == 0)
                                k = GC_RES_FIXED;
                        else if (strcmp(ks, "gpu") == 0)
                                k = GC_RES_GPU;
                        else if (strcmp(ks, "gpu-shared") == 0)
                                k = GC_RES_GPU_SHARED;
                        else if (strcmp(ks, "mig") == 0)
                                k = GC_RES_MIG;
                        else {
                                gc_errf(err, errlen,
                                        "%s.kind: must be \"fixed\", \"gpu\", \"gpu-shared\" or "
                                        "\"mig\"",
                                        where);
                                return -EINVAL;
                        }
                }
                if (k == GC_RES_FIXED) {
                        char w2[96];

                        snprintf(w2, sizeof(w2), "%s.gpus_per_unit", where);
                        r = gc__parse_number(cJSON_GetObjectItemCaseSensitive(it, "gpus_per_unit"),
                                             w2, 0, 1e6, &per_unit, err, errlen);
                        if (r < 0)
                                return r;
                }
                r = gc_res_table_set(c->res, name->valuestring, k, per_unit);
                if (r < 0) {
                        gc_errf(err, errlen, "%s: cannot add the rule", where);
                        return r;
                }
        }
        return 0;
}

static int gc__parse_rule(gc_config *c, const cJSON *it, const char *where, gc_node_rule *ret,
                          char *err, size_t errlen)
{
        static const char *const known[] = {"match",  "capacity_type",      "model",
                                            "region", "price_per_gpu_hour", "usd_per_gpu_hour"};
        const cJSON *match = cJSON_GetObjectItemCaseSensitive(it, "match");
        const cJSON *price = NULL;
        const char *pname = NULL;
        char w2[96];
        int r;

        memset(ret, 0, sizeof(*ret));
        ret->price_per_gpu_hour = -1;
        if (!cJSON_IsObject(it)) {
                gc_errf(err, errlen, "%s: must be an object", where);
                return -EINVAL;
        }
        r = gc__check_keys(it, where, known, 6, err, errlen);
        if (r == 0)
                r = gc__renamed(it, where, "price_per_gpu_hour", "usd_per_gpu_hour", &price, &pname,
                                err, errlen);
        if (r < 0)
                return r;
        snprintf(w2, sizeof(w2), "%s.match", where);
        if (!match || cJSON_GetArraySize(match) == 0) {
                gc_errf(err, errlen, "%s: must be an object of at least one label", w2);
                return -EINVAL;
        }
        r = gc__parse_map(c, match, w2, 1, &ret->match, &ret->n_match, err, errlen);
        if (r < 0)
                return r;
        for (int f = 0; f < 3; f++) {
                static const char *const names[] = {"capacity_type", "model", "region"};
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, names[f]);
                char **dst = f == 0 ? &ret->capacity_type : f == 1 ? &ret->model : &ret->region;

                if (!v)
                        continue;
                if (!cJSON_IsString(v) || !*v->valuestring || strlen(v->valuestring) > 253) {
                        gc_errf(err, errlen, "%s.%s: must be a non-empty string", where, names[f]);
                        return -EINVAL;
                }
                *dst = gc__dup_string(v);
                if (!*dst)
                        return -ENOMEM;
        }
        if (price) {
                snprintf(w2, sizeof(w2), "%s.%s", where, pname);
                r = gc__parse_number(price, w2, 0, 1e6, &ret->price_per_gpu_hour, err, errlen);
                if (r < 0)
                        return r;
        }
        if (!ret->capacity_type && !ret->model && !ret->region && ret->price_per_gpu_hour < 0) {
                gc_errf(err, errlen,
                        "%s: sets nothing (give capacity_type, model, region or "
                        "price_per_gpu_hour)",
                        where);
                return -EINVAL;
        }
        return 0;
}

static void gc__rule_free(gc_node_rule *r)
{
        free(r->match);
        free(r->capacity_type);
        free(r->model);
        free(r->region);
}

static int gc__parse_rules(gc_config *c, const cJSON *arr, char *err, size_t errlen)
{
        size_t n = (size_t)cJSON_GetArraySize(arr), i = 0;
        const cJSON *it;

        if (!cJSON_IsArray(arr)) {
                gc_errf(err, errlen, "node_rules: must be an array");
                return -EINVAL;
        }
        if (n > GC_CONFIG_MAX_MAP) {
                gc_errf(err, errlen, "node_rules: at most %d rules", GC_CONFIG_MAX_MAP);
                return -E2BIG;
        }
        c->rules.rules = calloc(n ? n : 1, sizeof(gc_node_rule));
        if (!c->rules.rules)
                return -ENOMEM;
        cJSON_ArrayForEach(it, arr)
        {
                char where[64];
                int r;

                snprintf(where, sizeof(where), "node_rules[%zu]", i);
                r = gc__parse_rule(c, it, where, &c->rules.rules[i], err, errlen);
                if (r < 0) {
                        gc__rule_free(&c->rules.rules[i]);
                        return r;
                }
                c->rules.n = ++i;
        }
        return 0;
}

static int gc__parse_tco(gc_config *c, const cJSON *obj, char *err, size_t errlen)
{
        static const char *const names[] = {
            "node_price", "gpus_per_node", "years", "utilization",   "cluster_gpus",        "ftes",
            "fte_cost",   "kw_per_gpu",    "pue",   "price_per_kwh", "network_per_gpu_hour"};
        /* The keys known: the names, and price_per_kwh's old name for one release. */
        static const char *const known[] = {
            "node_price",   "gpus_per_node", "years",       "utilization",
            "cluster_gpus", "ftes",          "fte_cost",    "kw_per_gpu",
            "pue",          "price_per_kwh", "usd_per_kwh", "network_per_gpu_hour"};
        double *fields[] = {&c->tco.node_price,    &c->tco.gpus_per_node,       &c->tco.years,
                            &c->tco.utilization,   &c->tco.cluster_gpus,        &c->tco.ftes,
                            &c->tco.fte_cost,      &c->tco.kw_per_gpu,          &c->tco.pue,
                            &c->tco.price_per_kwh, &c->tco.network_per_gpu_hour};
        gc_tco_result res;
        char inner[256];
        int r;

        if (!cJSON_IsObject(obj)) {
                gc_errf(err, errlen, "tco: must be an object");
                return -EINVAL;
        }
        r = gc__check_keys(obj, "tco", known, 12, err, errlen);
        if (r < 0)
                return r;
        for (size_t i = 0; i < 11; i++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, names[i]);
                const char *name = names[i];
                char where[64];

                if (i == 9 && (r = gc__renamed(obj, "tco", "price_per_kwh", "usd_per_kwh", &v,
                                               &name, err, errlen)) < 0)
                        return r;
                snprintf(where, sizeof(where), "tco.%s", name);
                if (!v) {
                        gc_errf(err, errlen, "%s: required when tco is given", where);
                        return -EINVAL;
                }
                r = gc__parse_number(v, where, 0, 1e12, fields[i], err, errlen);
                if (r < 0)
                        return r;
        }
        r = gc_tco_compute(&c->tco, &res, inner, sizeof(inner));
        if (r < 0) {
                gc_errf(err, errlen, "tco.%s", inner);
                return r;
        }
        c->has_tco = 1;
        return 0;
}

/* "+05:30", "-08:00", "Z" or "+00:00": a fixed offset from UTC. */
static int gc__parse_offset(const char *s, int64_t *ret)
{
        int h, m;

        if (strcmp(s, "Z") == 0 || strcmp(s, "UTC") == 0) {
                *ret = 0;
                return 0;
        }
        if (strlen(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':')
                return -EINVAL;
        for (int i = 1; i < 6; i++)
                if (i != 3 && (s[i] < '0' || s[i] > '9'))
                        return -EINVAL;
        h = (s[1] - '0') * 10 + (s[2] - '0');
        m = (s[4] - '0') * 10 + (s[5] - '0');
        if (h > 14 || m > 59)
                return -EINVAL;
        *ret = (s[0] == '-' ? -1 : 1) * (int64_t)(h * 3600 + m * 60);
        return 0;
}

static int gc__parse_report(gc_config *c, const cJSON *v, char *err, size_t errlen)
{
        static const char *const rk[] = {"top_n",
                                         "utc_offset",
                                         "timezone",
                                         "daily_retention_days",
                                         "weekly_retention_weeks",
                                         "monthly_retention_months",
                                         "team_namespaces"};
        const cJSON *t;
        double num;
        int r;

        if (!cJSON_IsObject(v)) {
                gc_errf(err, errlen, "report: must be an object");
                return -EINVAL;
        }
        r = gc__check_keys(v, "report", rk, sizeof(rk) / sizeof(rk[0]), err, errlen);
        if (r < 0)
                return r;
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "top_n"))) {
                r = gc__parse_number(t, "report.top_n", 1, 1000, &num, err, errlen);
                if (r < 0)
                        return r;
                c->top_n = (size_t)num;
        }
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "utc_offset")) &&
            (!cJSON_IsString(t) || gc__parse_offset(t->valuestring, &c->utc_offset_s) < 0)) {
                gc_errf(err, errlen,
                        "report.utc_offset: must be a UTC offset such as \"+00:00\" or "
                        "\"-05:00\"");
                return -EINVAL;
        }
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "timezone"))) {
                gc_tz *z = NULL;

                if (cJSON_GetObjectItemCaseSensitive(v, "utc_offset")) {
                        gc_errf(err, errlen,
                                "report.timezone: give report.timezone or report.utc_offset, "
                                "not both");
                        return -EINVAL;
                }
                if (!cJSON_IsString(t) || !gc_tz_name_valid(t->valuestring)) {
                        gc_errf(err, errlen,
                                "report.timezone: must be an IANA time zone name such as "
                                "\"Europe/Berlin\"");
                        return -EINVAL;
                }
                r = gc_tz_load(NULL, t->valuestring, &z);
                if (r < 0) {
                        gc_errf(err, errlen,
                                "report.timezone: \"%s\" is not a time zone in %s (%s)",
                                t->valuestring, GC_TZ_DIR,
                                r == -ENOENT ? "no such file" : "not a valid TZif file");
                        return r == -ENOMEM ? r : -EINVAL;
                }
                gc_tz_free(c->tz);
                c->tz = z;
                c->timezone = gc_strpool_intern0(c->pool, t->valuestring);
                if (!c->timezone)
                        return -ENOMEM;
        } else if (c->utc_offset_s != 0) {
                gc_tz *z = NULL;

                r = gc_tz_fixed((int32_t)c->utc_offset_s, &z);
                if (r < 0)
                        return r;
                gc_tz_free(c->tz);
                c->tz = z;
        }
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "monthly_retention_months"))) {
                r = gc__parse_number(t, "report.monthly_retention_months", 1, 120, &num, err,
                                     errlen);
                if (r < 0)
                        return r;
                c->monthly_retention_months = (int64_t)num;
        }
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "daily_retention_days"))) {
                r = gc__parse_number(t, "report.daily_retention_days", 1, 3660, &num, err, errlen);
                if (r < 0)
                        return r;
                c->daily_retention_days = (int64_t)num;
        }
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "weekly_retention_weeks"))) {
                r = gc__parse_number(t, "report.weekly_retention_weeks", 1, 520, &num, err, errlen);
                if (r < 0)
                        return r;
                c->weekly_retention_weeks = (int64_t)num;
        }
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "team_namespaces"))) {
                r = gc__parse_map(c, t, "report.team_namespaces", 0, &c->team_namespaces,
                                  &c->n_team_namespaces, err, errlen);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A whole number in [lo, hi]. */
static int gc__parse_int(const cJSON *v, const char *where, double lo, double hi, int64_t *ret,
                         char *err, size_t errlen)
{
        double d = 0;
        int r = gc__parse_number(v, where, lo, hi, &d, err, errlen);

        if (r == 0 && d != floor(d)) {
                gc_errf(err, errlen, "%s: must be a whole number in [%g, %g]", where, lo, hi);
                return -EINVAL;
        }
        if (r == 0)
                *ret = (int64_t)d;
        return r;
}

/* A pooled string of 1 to max bytes without control characters. */
static int gc__parse_str(gc_config *c, const cJSON *v, const char *where, size_t max,
                         const char **ret, char *err, size_t errlen)
{
        if (!cJSON_IsString(v) || !*v->valuestring || strlen(v->valuestring) > max) {
                gc_errf(err, errlen, "%s: must be a string of 1 to %zu characters", where, max);
                return -EINVAL;
        }
        for (const char *p = v->valuestring; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f) {
                        gc_errf(err, errlen, "%s: must not hold control characters", where);
                        return -EINVAL;
                }
        *ret = gc_strpool_intern0(c->pool, v->valuestring);
        return *ret ? 0 : -ENOMEM;
}

/* budgets: {"warn_share": 0.8, "events": false, "items": [{scope, name, period, amount}]} */
static int gc__parse_budgets(gc_config *c, const cJSON *v, char *err, size_t errlen)
{
        static const char *const bk[] = {"warn_share", "events", "items"};
        static const char *const ik[] = {"scope", "name", "period", "amount"};
        const cJSON *t, *it;
        size_t n;
        int r;

        if (!cJSON_IsObject(v)) {
                gc_errf(err, errlen, "budgets: must be an object");
                return -EINVAL;
        }
        r = gc__check_keys(v, "budgets", bk, sizeof(bk) / sizeof(bk[0]), err, errlen);
        if (r < 0)
                return r;
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "warn_share"))) {
                r = gc__parse_number(t, "budgets.warn_share", 0.01, 0.99, &c->budget_warn_share,
                                     err, errlen);
                if (r < 0)
                        return r;
        }
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "events"))) {
                if (!cJSON_IsBool(t)) {
                        gc_errf(err, errlen, "budgets.events: must be true or false");
                        return -EINVAL;
                }
                c->budget_events = cJSON_IsTrue(t);
        }
        t = cJSON_GetObjectItemCaseSensitive(v, "items");
        if (!t)
                return 0;
        if (!cJSON_IsArray(t) || (n = (size_t)cJSON_GetArraySize(t)) > GC_CONFIG_MAX_BUDGETS) {
                gc_errf(err, errlen, "budgets.items: must be an array of at most %d budgets",
                        GC_CONFIG_MAX_BUDGETS);
                return -EINVAL;
        }
        free(c->budgets);
        c->n_budgets = 0;
        c->budgets = calloc(n + 1, sizeof(*c->budgets));
        if (!c->budgets)
                return -ENOMEM;
        cJSON_ArrayForEach(it, t)
        {
                gc_budget *b = &c->budgets[c->n_budgets];
                char w[64], w2[96];
                const cJSON *f;

                snprintf(w, sizeof(w), "budgets.items[%zu]", c->n_budgets);
                if (!cJSON_IsObject(it)) {
                        gc_errf(err, errlen, "%s: must be an object", w);
                        return -EINVAL;
                }
                r = gc__check_keys(it, w, ik, sizeof(ik) / sizeof(ik[0]), err, errlen);
                if (r < 0)
                        return r;
                f = cJSON_GetObjectItemCaseSensitive(it, "scope");
                if (!cJSON_IsString(f) || gc_budget_scope_parse(f->valuestring, &b->dim) < 0) {
                        gc_errf(err, errlen,
                                "%s.scope: must be \"team\", \"project\", \"namespace\" or "
                                "\"workload\"",
                                w);
                        return -EINVAL;
                }
                snprintf(w2, sizeof(w2), "%s.name", w);
                f = cJSON_GetObjectItemCaseSensitive(it, "name");
                if (!f) {
                        gc_errf(err, errlen, "%s: is required", w2);
                        return -EINVAL;
                }
                /* A workload is Kind/namespace/name: a kind, a namespace and an object name. */
                r = gc__parse_str(c, f, w2, b->dim == GC_DIM_WORKLOAD ? 63 + 1 + 63 + 1 + 253 : 253,
                                  &b->name, err, errlen);
                if (r == 0 && b->dim == GC_DIM_WORKLOAD && !gc_budget_workload_ns(b->name, NULL)) {
                        gc_errf(err, errlen,
                                "%s: a workload is Kind/namespace/name, e.g. "
                                "Deployment/ml/summarizer (got \"%s\")",
                                w2, b->name);
                        return -EINVAL;
                }
                if (r < 0)
                        return r;
                f = cJSON_GetObjectItemCaseSensitive(it, "period");
                if (!cJSON_IsString(f) || (strcmp(f->valuestring, "monthly") != 0 &&
                                           strcmp(f->valuestring, "weekly") != 0)) {
                        gc_errf(err, errlen, "%s.period: must be \"monthly\" or \"weekly\"", w);
                        return -EINVAL;
                }
                b->period = f->valuestring[0] == 'm' ? GC_BUDGET_MONTHLY : GC_BUDGET_WEEKLY;
                snprintf(w2, sizeof(w2), "%s.amount", w);
                f = cJSON_GetObjectItemCaseSensitive(it, "amount");
                if (!f) {
                        gc_errf(err, errlen, "%s: is required", w2);
                        return -EINVAL;
                }
                r = gc__parse_number(f, w2, 0.01, 1e12, &b->amount, err, errlen);
                if (r < 0)
                        return r;
                for (size_t k = 0; k < c->n_budgets; k++)
                        if (c->budgets[k].dim == b->dim && c->budgets[k].period == b->period &&
                            c->budgets[k].name == b->name) {
                                gc_errf(err, errlen,
                                        "%s: a second %s budget of %s %s (the first is "
                                        "budgets.items[%zu])",
                                        w, gc_budget_period_name(b->period),
                                        gc_budget_scope_name(b->dim), b->name, k);
                                return -EINVAL;
                        }
                c->n_budgets++;
        }
        return 0;
}

/* A label selector as the API server takes it: key=value, key!=value, key, !key, comma-separated.
 */
static int gc__valid_selector(const char *s)
{
        for (const char *p = s; *p; p++) {
                char ch = *p;

                if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      (ch >= '0' && ch <= '9') || strchr("-_./=!,", ch)))
                        return 0;
        }
        return *s && s[strlen(s) - 1] != ',' && *s != ',';
}

static int gc__parse_dcgm(gc_config *c, const cJSON *v, char *err, size_t errlen)
{
        static const char *const known[] = {
            "namespace", "label_selector",   "service",         "port",          "path",
            "scheme",    "interval_seconds", "timeout_seconds", "max_body_bytes"};
        gc_config_dcgm *d = &c->dcgm;
        const cJSON *t;
        int64_t n = 0;
        int r;

        if (!cJSON_IsObject(v)) {
                gc_errf(err, errlen, "usage.dcgm: must be an object or null");
                return -EINVAL;
        }
        r = gc__check_keys(v, "usage.dcgm", known, sizeof(known) / sizeof(known[0]), err, errlen);
        if (r < 0)
                return r;
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "namespace"))) {
                r = gc__parse_str(c, t, "usage.dcgm.namespace", 63, &d->ns, err, errlen);
                if (r < 0)
                        return r;
        }
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "label_selector"))) {
                if (!cJSON_IsString(t) || strlen(t->valuestring) > 1024 ||
                    !gc__valid_selector(t->valuestring)) {
                        gc_errf(err, errlen,
                                "usage.dcgm.label_selector: must be a label selector such as "
                                "\"app=nvidia-dcgm-exporter\"");
                        return -EINVAL;
                }
                d->label_selector = gc_strpool_intern0(c->pool, t->valuestring);
                if (!d->label_selector)
                        return -ENOMEM;
        }
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "service")) && !cJSON_IsNull(t)) {
                int ok = cJSON_IsString(t) && *t->valuestring && strlen(t->valuestring) <= 63 &&
                         t->valuestring[0] >= 'a' && t->valuestring[0] <= 'z';

                for (const char *p = ok ? t->valuestring : ""; *p; p++)
                        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
                                ok = 0;
                if (!ok || t->valuestring[strlen(t->valuestring) - 1] == '-') {
                        gc_errf(err, errlen,
                                "usage.dcgm.service: must be a Service name (lower case letters, "
                                "digits and '-', 1 to 63) or null");
                        return -EINVAL;
                }
                d->service = gc_strpool_intern0(c->pool, t->valuestring);
                if (!d->service)
                        return -ENOMEM;
        }
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "port"))) {
                r = gc__parse_int(t, "usage.dcgm.port", 1, 65535, &n, err, errlen);
                if (r < 0)
                        return r;
                d->port = (int)n;
        }
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "path"))) {
                r = gc__parse_str(c, t, "usage.dcgm.path", 1024, &d->path, err, errlen);
                if (r == 0 && (d->path[0] != '/' || strpbrk(d->path, " ?#"))) {
                        gc_errf(err, errlen,
                                "usage.dcgm.path: must start with / and hold no space, ? or #");
                        r = -EINVAL;
                }
                if (r < 0)
                        return r;
        }
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "scheme"))) {
                if (!cJSON_IsString(t) ||
                    (strcmp(t->valuestring, "http") != 0 && strcmp(t->valuestring, "https") != 0)) {
                        gc_errf(err, errlen, "usage.dcgm.scheme: must be \"http\" or \"https\"");
                        return -EINVAL;
                }
                d->scheme = strcmp(t->valuestring, "http") == 0 ? "http" : "https";
        }
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "interval_seconds")) &&
            (r = gc__parse_int(t, "usage.dcgm.interval_seconds", 1, 3600, &d->interval_s, err,
                               errlen)) < 0)
                return r;
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "timeout_seconds")) &&
            (r = gc__parse_int(t, "usage.dcgm.timeout_seconds", 1, 300, &d->timeout_s, err,
                               errlen)) < 0)
                return r;
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "max_body_bytes"))) {
                r = gc__parse_int(t, "usage.dcgm.max_body_bytes", 1024, 4294967296.0, &n, err,
                                  errlen);
                if (r < 0)
                        return r;
                d->max_body_bytes = (size_t)n;
        }
        if (d->timeout_s > d->interval_s) {
                gc_errf(err, errlen,
                        "usage.dcgm.timeout_seconds: must not exceed interval_seconds (%lld)",
                        (long long)d->interval_s);
                return -EINVAL;
        }
        c->has_dcgm = 1;
        return 0;
}

/* Prometheus answers at most 11,000 points per series in one query_range; the history is asked
 * for a day at a time (GC_GPUUSE_PROM_CHUNK_S), so a day's points are what must fit. */
#define GC_CONFIG_PROM_MAX_POINTS 11000

static int gc__parse_prometheus(gc_config *c, const cJSON *v, char *err, size_t errlen)
{
        static const char *const known[] = {
            "url",          "interval_seconds",  "timeout_seconds", "lookback_days",
            "step_seconds", "bearer_token_file", "max_body_bytes"};
        gc_config_prometheus *p = &c->prometheus;
        const cJSON *t;
        int64_t n = 0;
        int r;

        if (!cJSON_IsObject(v)) {
                gc_errf(err, errlen, "usage.prometheus: must be an object or null");
                return -EINVAL;
        }
        r = gc__check_keys(v, "usage.prometheus", known, sizeof(known) / sizeof(known[0]), err,
                           errlen);
        if (r < 0)
                return r;
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "url"))) {
                size_t len;

                r = gc__parse_str(c, t, "usage.prometheus.url", 2048, &p->url, err, errlen);
                if (r < 0)
                        return r;
                len = strlen(p->url);
                if ((strncmp(p->url, "http://", 7) != 0 && strncmp(p->url, "https://", 8) != 0) ||
                    strpbrk(p->url, " ?#") || p->url[len - 1] == '/' || strstr(p->url, "/api/v1")) {
                        gc_errf(err, errlen,
                                "usage.prometheus.url: must be the server's base URL, "
                                "http(s)://host:port[/prefix], without a trailing / or /api/v1");
                        return -EINVAL;
                }
        }
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "interval_seconds")) &&
            (r = gc__parse_int(t, "usage.prometheus.interval_seconds", 10, 86400, &p->interval_s,
                               err, errlen)) < 0)
                return r;
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "timeout_seconds")) &&
            (r = gc__parse_int(t, "usage.prometheus.timeout_seconds", 1, 600, &p->timeout_s, err,
                               errlen)) < 0)
                return r;
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "lookback_days")) &&
            (r = gc__parse_int(t, "usage.prometheus.lookback_days", 0, 90, &p->lookback_days, err,
                               errlen)) < 0)
                return r;
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "step_seconds")) &&
            (r = gc__parse_int(t, "usage.prometheus.step_seconds", 1, 86400, &p->step_s, err,
                               errlen)) < 0)
                return r;
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "bearer_token_file")) && !cJSON_IsNull(t)) {
                r = gc__parse_str(c, t, "usage.prometheus.bearer_token_file", 4096,
                                  &p->bearer_token_file, err, errlen);
                if (r < 0)
                        return r;
        }
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "max_body_bytes"))) {
                r = gc__parse_int(t, "usage.prometheus.max_body_bytes", 1024, 4294967296.0, &n, err,
                                  errlen);
                if (r < 0)
                        return r;
                p->max_body_bytes = (size_t)n;
        }
        if (p->timeout_s > p->interval_s) {
                gc_errf(err, errlen,
                        "usage.prometheus.timeout_seconds: must not exceed interval_seconds (%lld)",
                        (long long)p->interval_s);
                return -EINVAL;
        }
        if (86400 / p->step_s > GC_CONFIG_PROM_MAX_POINTS) {
                gc_errf(err, errlen,
                        "usage.prometheus.step_seconds: a day's query (86400 / step_seconds "
                        "points) must be at most %d points (Prometheus' points per series); "
                        "raise the step to at least %d",
                        GC_CONFIG_PROM_MAX_POINTS,
                        (86400 + GC_CONFIG_PROM_MAX_POINTS - 1) / GC_CONFIG_PROM_MAX_POINTS);
                return -EINVAL;
        }
        c->has_prometheus = 1;
        return 0;
}

static void gc__usage_defaults(gc_config *c)
{
        c->dcgm.ns = "gpu-operator";
        c->dcgm.label_selector = "app=nvidia-dcgm-exporter";
        c->dcgm.port = 9400;
        c->dcgm.path = "/metrics";
        c->dcgm.scheme = "http";
        c->dcgm.interval_s = 30;
        c->dcgm.timeout_s = 5;
        c->dcgm.max_body_bytes = (size_t)64 << 20;
        c->prometheus.url = "http://prometheus:9090";
        c->prometheus.interval_s = 300;
        c->prometheus.timeout_s = 10;
        c->prometheus.lookback_days = 7;
        c->prometheus.step_s = 60;
        c->prometheus.bearer_token_file = NULL;
        c->prometheus.max_body_bytes = (size_t)256 << 20;
}

static int gc__parse_usage(gc_config *c, const cJSON *v, char *err, size_t errlen)
{
        static const char *const known[] = {"dcgm", "prometheus", "retention_days"};
        const cJSON *t;
        int r;

        if (!cJSON_IsObject(v)) {
                gc_errf(err, errlen, "usage: must be an object");
                return -EINVAL;
        }
        r = gc__check_keys(v, "usage", known, sizeof(known) / sizeof(known[0]), err, errlen);
        if (r < 0)
                return r;
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "dcgm")) && !cJSON_IsNull(t) &&
            (r = gc__parse_dcgm(c, t, err, errlen)) < 0)
                return r;
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "prometheus")) && !cJSON_IsNull(t) &&
            (r = gc__parse_prometheus(c, t, err, errlen)) < 0)
                return r;
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "retention_days")) &&
            (r = gc__parse_int(t, "usage.retention_days", 1, 366, &c->usage_retention_days, err,
                               errlen)) < 0)
                return r;
        return 0;
}

static int gc__parse_class(const cJSON *it, const char *where, gc_advisor_class *ret, char *err,
                           size_t errlen)
{
        static const char *const known[] = {"from", "to", "max_tensor_activity", "to_memory_mib"};
        char w2[96];
        int r;

        memset(ret, 0, sizeof(*ret));
        if (!cJSON_IsObject(it)) {
                gc_errf(err, errlen, "%s: must be an object", where);
                return -EINVAL;
        }
        r = gc__check_keys(it, where, known, 4, err, errlen);
        if (r < 0)
                return r;
        for (int f = 0; f < 2; f++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, known[f]);
                char *dst = f == 0 ? ret->from : ret->to;

                if (!cJSON_IsString(v) || !*v->valuestring ||
                    strlen(v->valuestring) >= GC_ADVISOR_MODEL_MAX) {
                        gc_errf(err, errlen, "%s.%s: must be a GPU model of 1 to %d characters",
                                where, known[f], GC_ADVISOR_MODEL_MAX - 1);
                        return -EINVAL;
                }
                gc_strlcpy(dst, v->valuestring, GC_ADVISOR_MODEL_MAX);
        }
        snprintf(w2, sizeof(w2), "%s.max_tensor_activity", where);
        r = gc__parse_number(cJSON_GetObjectItemCaseSensitive(it, "max_tensor_activity"), w2, 0, 1,
                             &ret->max_tensor_activity, err, errlen);
        if (r < 0)
                return r;
        if (cJSON_GetObjectItemCaseSensitive(it, "to_memory_mib")) {
                snprintf(w2, sizeof(w2), "%s.to_memory_mib", where);
                r = gc__parse_number(cJSON_GetObjectItemCaseSensitive(it, "to_memory_mib"), w2, 0,
                                     1e7, &ret->to_memory_mib, err, errlen);
        }
        return r;
}

static int gc__parse_advisor(gc_config *c, const cJSON *v, char *err, size_t errlen)
{
        /* name, lo, hi, whole number, where it goes */
        static const struct {
                const char *name;
                double lo, hi;
                int whole;
        } nums[] = {
            {"idle_activity", 0, 1, 0},     {"idle_memory_fraction", 0, 1, 0},
            {"idle_minutes", 1, 525600, 0}, {"min_samples", 1, 1e8, 1},
            {"min_coverage", 0, 1, 0},      {"over_request_active_activity", 0, 1, 0},
            {"mig_headroom", 0, 10, 0},     {"reserve_percentile", 0, 100, 0},
            {"hours_per_month", 1, 744, 0}, {"max_findings", 0, 1e6, 1},
            {"max_notes", 0, 1e5, 1},
        };
        gc_advisor_opts *o = &c->advisor;
        double *dst_d[] = {&o->idle_activity,
                           &o->idle_memory_fraction,
                           &o->idle_minutes,
                           NULL,
                           &o->min_coverage,
                           &o->over_request_active_activity,
                           &o->mig_headroom,
                           &o->reserve_percentile,
                           &o->hours_per_month,
                           NULL,
                           NULL};
        const char *known[sizeof(nums) / sizeof(nums[0]) + 1];
        char inner[256];
        const cJSON *t;
        size_t n_nums = sizeof(nums) / sizeof(nums[0]);
        int r;

        if (!cJSON_IsObject(v)) {
                gc_errf(err, errlen, "advisor: must be an object");
                return -EINVAL;
        }
        for (size_t i = 0; i < n_nums; i++)
                known[i] = nums[i].name;
        known[n_nums] = "cheaper_classes";
        r = gc__check_keys(v, "advisor", known, n_nums + 1, err, errlen);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_nums; i++) {
                char where[64];
                int64_t whole = 0;
                double d = 0;

                if (!(t = cJSON_GetObjectItemCaseSensitive(v, nums[i].name)))
                        continue;
                snprintf(where, sizeof(where), "advisor.%s", nums[i].name);
                if (nums[i].whole) {
                        r = gc__parse_int(t, where, nums[i].lo, nums[i].hi, &whole, err, errlen);
                        d = (double)whole;
                } else {
                        r = gc__parse_number(t, where, nums[i].lo, nums[i].hi, &d, err, errlen);
                }
                if (r < 0)
                        return r;
                if (dst_d[i])
                        *dst_d[i] = d;
                else if (strcmp(nums[i].name, "min_samples") == 0)
                        o->min_samples = (uint64_t)d;
                else if (strcmp(nums[i].name, "max_findings") == 0)
                        o->max_findings = (size_t)d;
                else
                        o->max_notes = (size_t)d;
        }
        if ((t = cJSON_GetObjectItemCaseSensitive(v, "cheaper_classes"))) {
                const cJSON *it;
                size_t i = 0;

                if (!cJSON_IsArray(t)) {
                        gc_errf(err, errlen, "advisor.cheaper_classes: must be an array");
                        return -EINVAL;
                }
                if (cJSON_GetArraySize(t) > GC_ADVISOR_MAX_CLASSES) {
                        gc_errf(err, errlen, "advisor.cheaper_classes: at most %d entries",
                                GC_ADVISOR_MAX_CLASSES);
                        return -E2BIG;
                }
                cJSON_ArrayForEach(it, t)
                {
                        char where[64];

                        snprintf(where, sizeof(where), "advisor.cheaper_classes[%zu]", i);
                        r = gc__parse_class(it, where, &o->cheaper_classes[i], err, errlen);
                        if (r < 0)
                                return r;
                        i++;
                }
                o->n_cheaper_classes = i;
        }
        r = gc_advisor_opts_check(o, inner, sizeof(inner));
        if (r < 0) {
                gc_errf(err, errlen, "advisor.%s", inner);
                return r;
        }
        return 0;
}

/* {"mode": "none|proportional|weights", "weights": {"team": 2, ...}} */
static int gc__parse_chargeback(gc_config *c, const cJSON *v, char *err, size_t errlen)
{
        static const char *const ck[] = {"mode", "weights", "basis"};
        const cJSON *t, *it;
        size_t n = 0;
        int r;

        if (!cJSON_IsObject(v)) {
                gc_errf(err, errlen, "chargeback: must be an object");
                return -EINVAL;
        }
        r = gc__check_keys(v, "chargeback", ck, 3, err, errlen);
        if (r < 0)
                return r;
        t = cJSON_GetObjectItemCaseSensitive(v, "basis");
        if (t && (!cJSON_IsString(t) || gc_basis_parse(t->valuestring, strlen(t->valuestring),
                                                       &c->chargeback.basis) < 0)) {
                gc_errf(err, errlen, "chargeback.basis: must be \"allocation\" or \"usage\"");
                return -EINVAL;
        }
        t = cJSON_GetObjectItemCaseSensitive(v, "mode");
        if (t && (!cJSON_IsString(t) ||
                  gc_chargeback_mode_parse(t->valuestring, &c->chargeback.mode) < 0)) {
                gc_errf(err, errlen,
                        "chargeback.mode: must be \"none\", \"proportional\" or "
                        "\"weights\"");
                return -EINVAL;
        }
        t = cJSON_GetObjectItemCaseSensitive(v, "weights");
        if (t) {
                size_t cap = (size_t)cJSON_GetArraySize(t);

                if (!cJSON_IsObject(t) || cap > GC_CHARGEBACK_MAX_WEIGHTS) {
                        gc_errf(err, errlen,
                                "chargeback.weights: must be an object of at most %d teams "
                                "with positive numbers",
                                GC_CHARGEBACK_MAX_WEIGHTS);
                        return -EINVAL;
                }
                free(c->team_weights);
                c->team_weights = calloc(cap ? cap : 1, sizeof(*c->team_weights));
                if (!c->team_weights)
                        return -ENOMEM;
                cJSON_ArrayForEach(it, t)
                {
                        if (!it->string || !*it->string || !cJSON_IsNumber(it) ||
                            !isfinite(it->valuedouble) || it->valuedouble <= 0 ||
                            it->valuedouble > 1e9) {
                                gc_errf(err, errlen,
                                        "chargeback.weights.%.64s: must be a positive number "
                                        "(at most 1e9)",
                                        it->string ? it->string : "");
                                return -EINVAL;
                        }
                        c->team_weights[n].team = gc_strpool_intern0(c->pool, it->string);
                        if (!c->team_weights[n].team)
                                return -ENOMEM;
                        c->team_weights[n++].weight = it->valuedouble;
                }
        }
        c->chargeback.weights = c->team_weights;
        c->chargeback.n_weights = n;
        if (c->chargeback.mode == GC_CHARGEBACK_WEIGHTS && n == 0) {
                gc_errf(err, errlen,
                        "chargeback.weights: mode \"weights\" needs at least one "
                        "team's weight");
                return -EINVAL;
        }
        return 0;
}

/* "dra": {"nvidia": bool, "drivers": [{driver, attribute, value, model, gpus_per_device}]}. */
static int gc__parse_dra(gc_config *c, const cJSON *v, char *err, size_t errlen)
{
        static const char *const known[] = {"nvidia", "drivers"};
        static const char *const rule_known[] = {"driver", "attribute", "value", "model",
                                                 "gpus_per_device"};
        const cJSON *nv, *arr, *it;
        size_t i = 0;
        int r;

        if (!cJSON_IsObject(v)) {
                gc_errf(err, errlen, "dra: must be an object");
                return -EINVAL;
        }
        r = gc__check_keys(v, "dra", known, 2, err, errlen);
        if (r < 0)
                return r;
        nv = cJSON_GetObjectItemCaseSensitive(v, "nvidia");
        if (nv && !cJSON_IsBool(nv)) {
                gc_errf(err, errlen, "dra.nvidia: must be true or false");
                return -EINVAL;
        }
        c->dra.no_nvidia = nv && cJSON_IsFalse(nv);
        arr = cJSON_GetObjectItemCaseSensitive(v, "drivers");
        if (!arr)
                return 0;
        if (!cJSON_IsArray(arr)) {
                gc_errf(err, errlen, "dra.drivers: must be an array");
                return -EINVAL;
        }
        cJSON_ArrayForEach(it, arr)
        {
                gc_dra_rule *rule;
                const cJSON *f;
                char where[64], w2[96];

                snprintf(where, sizeof(where), "dra.drivers[%zu]", i);
                if (i >= GC_DRA_MAX_RULES) {
                        gc_errf(err, errlen, "dra.drivers: at most %d entries", GC_DRA_MAX_RULES);
                        return -E2BIG;
                }
                if (!cJSON_IsObject(it)) {
                        gc_errf(err, errlen, "%s: must be an object", where);
                        return -EINVAL;
                }
                r = gc__check_keys(it, where, rule_known, 5, err, errlen);
                if (r < 0)
                        return r;
                rule = &c->dra_rules[i];
                memset(rule, 0, sizeof(*rule));
                snprintf(w2, sizeof(w2), "%s.driver", where);
                r = gc__parse_str(c, cJSON_GetObjectItemCaseSensitive(it, "driver"), w2, 253,
                                  &rule->driver, err, errlen);
                if (r == 0) {
                        snprintf(w2, sizeof(w2), "%s.attribute", where);
                        r = gc__parse_str(c, cJSON_GetObjectItemCaseSensitive(it, "attribute"), w2,
                                          317, &rule->attribute, err, errlen);
                }
                if (r == 0 && (f = cJSON_GetObjectItemCaseSensitive(it, "value"))) {
                        snprintf(w2, sizeof(w2), "%s.value", where);
                        r = gc__parse_str(c, f, w2, 64, &rule->value, err, errlen);
                }
                if (r == 0 && (f = cJSON_GetObjectItemCaseSensitive(it, "model"))) {
                        snprintf(w2, sizeof(w2), "%s.model", where);
                        r = gc__parse_str(c, f, w2, 63, &rule->model, err, errlen);
                }
                if (r == 0) {
                        snprintf(w2, sizeof(w2), "%s.gpus_per_device", where);
                        r = gc__parse_number(
                            cJSON_GetObjectItemCaseSensitive(it, "gpus_per_device"), w2, 0, 1024,
                            &rule->gpus_per_device, err, errlen);
                }
                if (r < 0)
                        return r;
                i++;
        }
        c->dra.rules = c->dra_rules;
        c->dra.n = i;
        return 0;
}

/* attribution: the label keys naming teams and projects, and namespaces' fixed ones. */
static int gc__parse_attribution(gc_config *c, const cJSON *attr, char *err, size_t errlen)
{
        static const char *const attr_known[] = {"team_label_keys", "project_label_keys",
                                                 "namespace_teams", "namespace_projects"};
        const cJSON *v;
        int r;

        if (!cJSON_IsObject(attr)) {
                gc_errf(err, errlen, "attribution: must be an object");
                return -EINVAL;
        }
        r = gc__check_keys(attr, "attribution", attr_known, 4, err, errlen);
        if (r == 0 && (v = cJSON_GetObjectItemCaseSensitive(attr, "team_label_keys")))
                r = gc__parse_keys(c, v, "attribution.team_label_keys", &c->team_keys,
                                   &c->n_team_keys, err, errlen);
        if (r == 0 && (v = cJSON_GetObjectItemCaseSensitive(attr, "project_label_keys")))
                r = gc__parse_keys(c, v, "attribution.project_label_keys", &c->project_keys,
                                   &c->n_project_keys, err, errlen);
        if (r == 0 && (v = cJSON_GetObjectItemCaseSensitive(attr, "namespace_teams")))
                r = gc__parse_map(c, v, "attribution.namespace_teams", 0, &c->ns_teams,
                                  &c->n_ns_teams, err, errlen);
        if (r == 0 && (v = cJSON_GetObjectItemCaseSensitive(attr, "namespace_projects")))
                r = gc__parse_map(c, v, "attribution.namespace_projects", 0, &c->ns_projects,
                                  &c->n_ns_projects, err, errlen);
        return r;
}

/* instance_types: instance type -> GPU model, for nodes without the GPU's own labels. */
static int gc__parse_instance_types(gc_config *c, const cJSON *v, char *err, size_t errlen)
{
        gc_label *m = NULL;
        size_t n = 0;
        int r;

        r = gc__parse_map(c, v, "instance_types", 0, &m, &n, err, errlen);
        if (r < 0)
                return r;
        /* gc_price_rules owns plain strings: copy out of the pool. */
        c->rules.instance_models = calloc(n ? n : 1, sizeof(gc_label));
        if (!c->rules.instance_models) {
                free(m);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                c->rules.instance_models[i] = m[i];
        c->rules.n_instance_models = n;
        free(m);
        return 0;
}

/* default_capacity_type: for nodes no rule names one; lower case, as report keys are. */
static int gc__parse_default_capacity_type(gc_config *c, const cJSON *v, char *err, size_t errlen)
{
        if (!cJSON_IsString(v) || !*v->valuestring || strlen(v->valuestring) > 63) {
                gc_errf(err, errlen, "default_capacity_type: must be a non-empty string");
                return -EINVAL;
        }
        c->rules.default_capacity_type = strdup(v->valuestring);
        if (!c->rules.default_capacity_type)
                return -ENOMEM;
        /* Capacity types are keys in reports: one spelling, lower case. */
        for (char *p = c->rules.default_capacity_type; *p; p++)
                if (*p >= 'A' && *p <= 'Z')
                        *p = (char)(*p - 'A' + 'a');
        return 0;
}

static int gc__parse_root(gc_config *c, const cJSON *root, char *err, size_t errlen)
{
        static const char *const known[] = {"cluster",        "attribution",
                                            "resources",      "node_rules",
                                            "instance_types", "default_capacity_type",
                                            "prices",         "tco",
                                            "report",         "usage",
                                            "advisor",        "chargeback",
                                            "budgets",        "dra",
                                            "labels"};
        const cJSON *v, *attr;
        int r;

        if (!cJSON_IsObject(root)) {
                gc_errf(err, errlen, "configuration: must be a JSON object");
                return -EINVAL;
        }
        r = gc__check_keys(root, "", known, sizeof(known) / sizeof(known[0]), err, errlen);
        if (r < 0)
                return r;
        v = cJSON_GetObjectItemCaseSensitive(root, "cluster");
        if (v) {
                if (!cJSON_IsString(v) || !*v->valuestring || strlen(v->valuestring) > 63) {
                        gc_errf(err, errlen, "cluster: must be a name of 1 to 63 characters");
                        return -EINVAL;
                }
                c->cluster = gc_strpool_intern0(c->pool, v->valuestring);
        }
        attr = cJSON_GetObjectItemCaseSensitive(root, "attribution");
        if (attr && (r = gc__parse_attribution(c, attr, err, errlen)) < 0)
                return r;
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "labels")) &&
            (r = gc__parse_labels(c, v, err, errlen)) < 0)
                return r;
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "resources")) &&
            (r = gc__parse_resources(c, v, err, errlen)) < 0)
                return r;
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "chargeback")) &&
            (r = gc__parse_chargeback(c, v, err, errlen)) < 0)
                return r;
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "dra")) &&
            (r = gc__parse_dra(c, v, err, errlen)) < 0)
                return r;
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "node_rules")) &&
            (r = gc__parse_rules(c, v, err, errlen)) < 0)
                return r;
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "instance_types")) &&
            (r = gc__parse_instance_types(c, v, err, errlen)) < 0)
                return r;
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "default_capacity_type")) &&
            (r = gc__parse_default_capacity_type(c, v, err, errlen)) < 0)
                return r;
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "prices"))) {
                gc_catalog *cat = gc_catalog_from_cjson(v, "prices", err, errlen);

                if (!cat)
                        return -EINVAL;
                gc_config_set_catalog(c, cat);
        }
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "tco")) &&
            (r = gc__parse_tco(c, v, err, errlen)) < 0)
                return r;
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "report")) &&
            (r = gc__parse_report(c, v, err, errlen)) < 0)
                return r;
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "usage")) &&
            (r = gc__parse_usage(c, v, err, errlen)) < 0)
                return r;
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "advisor")) &&
            (r = gc__parse_advisor(c, v, err, errlen)) < 0)
                return r;
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "budgets")) &&
            (r = gc__parse_budgets(c, v, err, errlen)) < 0)
                return r;
        return 0;
}

gc_config *gc_config_parse(const char *json, size_t len, char *err, size_t errlen)
{
        gc_config *c;
        cJSON *root;
        int r;

        if (!json || len > GC_CONFIG_MAX_BYTES) {
                gc_errf(err, errlen, "configuration: larger than %u bytes", GC_CONFIG_MAX_BYTES);
                return NULL;
        }
        root = cJSON_ParseWithLength(json, len);
        if (!root) {
                gc_errf(err, errlen, "configuration: not valid JSON");
                return NULL;
        }
        c = gc_config_default();
        if (!c) {
                cJSON_Delete(root);
                gc_errf(err, errlen, "configuration: out of memory");
                return NULL;
        }
        r = gc__parse_root(c, root, err, errlen);
        cJSON_Delete(root);
        if (r < 0) {
                if (r == -ENOMEM)
                        gc_errf(err, errlen, "configuration: out of memory");
                return gc_config_free(c);
        }
        return c;
}

void gc_config_model_opts(const gc_config *c, gc_strpool *pool, gc_model_opts *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->pool = pool;
        ret->res = c->res;
        ret->team_keys = c->team_keys;
        ret->n_team_keys = c->n_team_keys;
        ret->project_keys = c->project_keys;
        ret->n_project_keys = c->n_project_keys;
        ret->label_keys = c->label_keys;
        ret->n_label_keys = c->n_label_keys;
        ret->dra = &c->dra;
}

void gc_config_attribution(const gc_config *c, gc_attribution *ret)
{
        ret->ns_teams = c->ns_teams;
        ret->n_ns_teams = c->n_ns_teams;
        ret->ns_projects = c->ns_projects;
        ret->n_ns_projects = c->n_ns_projects;
}

void gc_config_savings_opts(const gc_config *c, gc_savings_opts *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->advisor = c->advisor;
        ret->catalog = c->catalog;
        ret->tco = c->has_tco ? &c->tco : NULL;
        ret->team_label_key = c->n_team_keys ? c->team_keys[0] : NULL;
        ret->project_label_key = c->n_project_keys ? c->project_keys[0] : NULL;
        ret->currency = c->catalog && c->catalog->currency ? c->catalog->currency : "USD";
        gc_gpuuse_opts_default(&ret->usage);
        ret->usage.idle_activity = c->advisor.idle_activity;
        ret->usage.idle_mem_frac = c->advisor.idle_memory_fraction;
        ret->usage.active_activity = c->advisor.over_request_active_activity;
        if (c->has_dcgm)
                ret->usage.interval_s = c->dcgm.interval_s;
        ret->usage.retention_s = c->usage_retention_days * 86400;
}

void gc_config_api_settings(const gc_config *c, gc_api_settings *ret)
{
        memset(ret, 0, sizeof(*ret));
        gc_config_publish_opts(c, &ret->report);
        ret->catalog = c->catalog;
        ret->catalog_builtin = c->catalog_builtin;
        ret->tco = c->has_tco ? &c->tco : NULL;
        ret->chargeback = c->chargeback;
        ret->team_keys = c->team_keys;
        ret->n_team_keys = c->n_team_keys;
        ret->project_keys = c->project_keys;
        ret->n_project_keys = c->n_project_keys;
}

void gc_config_account_opts(const gc_config *c, gc_accountant_opts *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->res = c->res;
        ret->rules = &c->rules;
        ret->catalog = c->catalog;
        gc_config_attribution(c, &ret->attr);
}

void gc_config_publish_opts(const gc_config *c, gc_publish_opts *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->cluster = c->cluster;
        ret->currency = c->catalog && c->catalog->currency ? c->catalog->currency : "USD";
        ret->top_n = c->top_n;
        ret->utc_offset_s = c->utc_offset_s;
        ret->tz = c->tz;
        ret->daily_retention_days = c->daily_retention_days;
        ret->weekly_retention_weeks = c->weekly_retention_weeks;
        ret->monthly_retention_months = c->monthly_retention_months;
        ret->budgets = c->budgets;
        ret->n_budgets = c->n_budgets;
        ret->budget_warn_share = c->budget_warn_share;
        ret->chargeback = &c->chargeback;
}
