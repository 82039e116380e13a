/* config: the one configuration file (label keys, resources, node rules, prices, TCO, reports). */
#ifndef GC_CONFIG_H
#define GC_CONFIG_H

#include <stddef.h>

#include "../account/account.h"
#include "../advisor/advisor.h"
#include "../api/api.h"
#include "../ledger/ledger.h"
#include "../model/model.h"
#include "../price/price.h"
#include "../publish/publish.h"
#include "../report/report.h"
#include "../savings/savings.h"
#include "../tz/tz.h"
#include "../util/util.h"

#define GC_CONFIG_MAX_BYTES   (8u << 20)
#define GC_CONFIG_MAX_KEYS    32   /* label keys per list */
#define GC_CONFIG_MAX_MAP     4096 /* namespace map entries, node rules, instance types */
#define GC_CONFIG_MAX_BUDGETS 1000

/* usage.dcgm: scrape the dcgm-exporter pods directly (docs/configuration.md, docs/usage.md). */
typedef struct gc_config_dcgm {
        const char *ns;             /* namespace of the dcgm-exporter pods */
        const char *label_selector; /* selects them (a LIST of pods in ns) */
        const char *service;        /* or: the addresses of this Service's Endpoints in ns */
        int port;                   /* their metrics port */
        const char *path;           /* "/metrics" */
        const char *scheme;         /* "http" or "https" */
        int64_t interval_s;         /* one scrape of every pod this often */
        int64_t timeout_s;          /* per scrape */
        size_t max_body_bytes;      /* a larger body is refused (a cut body is no scrape) */
} gc_config_dcgm;

/* usage.prometheus: ask a Prometheus server that scrapes dcgm-exporter (history included). */
typedef struct gc_config_prometheus {
        const char *url;               /* "http://prometheus:9090" (no trailing /api/v1) */
        int64_t interval_s;            /* one query this often */
        int64_t timeout_s;             /* per query */
        int64_t lookback_days;         /* history read at start (query_range) */
        int64_t step_s;                /* resolution of the history */
        const char *bearer_token_file; /* NULL: no Authorization header */
        size_t max_body_bytes;
} gc_config_prometheus;

typedef struct gc_config {
        gc_strpool *pool; /* owns every string below */
        const char *cluster;
        const char **team_keys;
        size_t n_team_keys;
        const char **project_keys;
        size_t n_project_keys;
        gc_label *ns_teams;
        size_t n_ns_teams;
        gc_label *ns_projects;
        size_t n_ns_projects;
        /* labels.dimensions: label keys kept as grouping dimensions (label:<key>), pooled */
        const char *label_keys[GC_LABEL_DIMS];
        size_t n_label_keys;
        gc_res_table *res;
        gc_price_rules rules;
        gc_catalog *catalog; /* the configured catalog, or the built-in one */
        int catalog_builtin; /* 1 when no catalog was configured */
        int has_tco;
        gc_tco_inputs tco;
        size_t top_n;
        int64_t utc_offset_s; /* report days start at 00:00 at this offset */
        const char *timezone; /* report.timezone, or NULL (then utc_offset_s) */
        gc_tz *tz; /* always set: the IANA zone of report.timezone, else the fixed utc_offset */
        int64_t daily_retention_days; /* daily report ConfigMaps kept */
        int64_t weekly_retention_weeks;
        int64_t monthly_retention_months;
        gc_budget *budgets; /* budgets.items */
        size_t n_budgets;
        double budget_warn_share;  /* budgets.warn_share: the warning state from this share on */
        int budget_events;         /* budgets.events: the controller emits Kubernetes Events */
        gc_label *team_namespaces; /* team -> namespace for per-team report copies */
        size_t n_team_namespaces;
        int has_dcgm; /* usage.dcgm given (not null) */
        gc_config_dcgm dcgm;
        int has_prometheus; /* usage.prometheus given (not null) */
        gc_config_prometheus prometheus;
        int64_t usage_retention_days; /* usage summaries of pods unseen this long are dropped */
        gc_advisor_opts advisor;
        /* chargeback: how idle capacity and unattributed spend reach the teams' bills in
         * reports, the API's default and exports; weights point into team_weights. */
        gc_chargeback chargeback;
        gc_team_weight *team_weights;
        /* dra: NVIDIA's driver on or off, and configured drivers (docs/dra.md) */
        gc_dra_rules dra;                        /* .rules points at dra_rules */
        gc_dra_rule dra_rules[GC_DRA_MAX_RULES]; /* strings pooled */
} gc_config;

/* The defaults: documented in docs/configuration.md. */
gc_config *gc_config_default(void);
/*
 * Parses a JSON configuration on top of the defaults. Unknown top-level keys are refused (a
 * typo must not be ignored silently); err names the field ("attribution.team_label_keys[2]:
 * must be a non-empty string").
 */
gc_config *gc_config_parse(const char *json, size_t len, char *err, size_t errlen);
gc_config *gc_config_free(gc_config *c); /* accepts NULL, returns NULL */

/* Replaces the catalog (ownership of cat passes to c). */
void gc_config_set_catalog(gc_config *c, gc_catalog *cat);

/*
 * Keeps one more label key as a dimension (gpu-cost analyze's --by label:<key>): nothing when
 * kept already. -EINVAL for no label key, -E2BIG past GC_LABEL_DIMS; err says which.
 */
int gc_config_add_label_key(gc_config *c, const char *key, size_t n, char *err, size_t errlen);

/* Views of the configuration for the modules that take it. */
void gc_config_model_opts(const gc_config *c, gc_strpool *pool, gc_model_opts *ret);
void gc_config_attribution(const gc_config *c, gc_attribution *ret);
/* The advisor's run and the usage store's (thresholds, catalog, TCO, attribution keys). */
void gc_config_savings_opts(const gc_config *c, gc_savings_opts *ret);
/* The API's: the reports' options, catalog, TCO, chargeback and attribution keys. */
void gc_config_api_settings(const gc_config *c, gc_api_settings *ret);
/* The accountant's: resources, node rules, the catalog and attribution (pointers into c). */
void gc_config_account_opts(const gc_config *c, gc_accountant_opts *ret);
/* The reports' options (zone, retention, top pods, budgets, chargeback, currency); no savings. */
void gc_config_publish_opts(const gc_config *c, gc_publish_opts *ret);

#endif
