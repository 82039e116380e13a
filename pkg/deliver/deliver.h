/* deliver: a period report as an email (MIME, SMTP) or a chat message (Slack, Teams, JSON). */
#ifndef GC_DELIVER_H
#define GC_DELIVER_H

#include <stddef.h>
#include <stdint.h>

#include "../util/util.h"

/*
 * What a delivered report shows, read from the report's JSON (report.json, the one the
 * ConfigMaps and /api/v1/reports serve, written by pkg/report from the same figures as the
 * Markdown). Every renderer here (plain text, HTML, Slack, Teams, JSON) reads this and nothing
 * else, so an email and a chat message never disagree with report.md. The JSON is outside
 * input: members are checked, strings cut to GC_DELIVER_MAX_TEXT bytes, lists to the limits.
 */
#define GC_DELIVER_MAX_JSON  ((size_t)8 << 20) /* a report's JSON */
#define GC_DELIVER_MAX_TEXT  256               /* a name, a title (bytes; longer is cut) */
#define GC_DELIVER_MAX_ROWS  50                /* teams, projects, days, budgets kept */
#define GC_DELIVER_MAX_SAVES 10                /* savings findings kept, largest first */
#define GC_DELIVER_MAX_NOTE  600               /* a finding's summary (bytes) */

typedef struct gc_deliver_row {
        char name[GC_DELIVER_MAX_TEXT]; /* team, "team / project", or a date */
        double cost, gpu_hours;
        double share; /* of the total cost, 0..1; NAN when the report gives none */
} gc_deliver_row;

typedef struct gc_deliver_budget {
        char scope[16];
        char name[GC_DELIVER_MAX_TEXT];
        double amount, spent, share, forecast; /* forecast NAN when the period is over */
        char state[8];                         /* "ok", "warn", "over" */
} gc_deliver_budget;

typedef struct gc_deliver_saving {
        char kind[32];
        char summary[GC_DELIVER_MAX_NOTE];
        double monthly; /* the saving a month */
} gc_deliver_saving;

typedef struct gc_deliver_report {
        char kind[16]; /* daily, weekly, monthly */
        char title[GC_DELIVER_MAX_TEXT];
        char cluster[GC_DELIVER_MAX_TEXT]; /* "" when none */
        char team[GC_DELIVER_MAX_TEXT];    /* a team's own report, else "" */
        char currency[16];
        char period_id[32]; /* "2026-W47", "2026-11" or the date */
        int64_t start, end;
        int partial;
        double cost, gpu_hours;
        uint64_t pods;
        int has_prev; /* the previous period had data: change is meaningful */
        double prev_cost, change, change_pct;
        int has_forecast;
        double forecast_cost;
        double idle_cost, unattributed_cost; /* NAN for a team's own report (no idle) */
        gc_deliver_row teams[GC_DELIVER_MAX_ROWS];
        size_t n_teams, more_teams; /* kept, and left out past the limit */
        gc_deliver_row projects[GC_DELIVER_MAX_ROWS];
        size_t n_projects, more_projects;
        gc_deliver_row days[GC_DELIVER_MAX_ROWS];
        size_t n_days;
        gc_deliver_budget budgets[GC_DELIVER_MAX_ROWS];
        size_t n_budgets, more_budgets;
        gc_deliver_saving savings[GC_DELIVER_MAX_SAVES];
        size_t n_savings, more_savings;
        double savings_monthly; /* all findings' monthly savings */
} gc_deliver_report;

/* Reads a report's JSON; -EINVAL with the member named in err, -E2BIG, -ENOMEM. */
int gc_deliver_report_parse(const char *json, size_t len, gc_deliver_report *ret, char *err,
                            size_t errlen);

/* ---- renderers ------------------------------------------------------------------------------ */

/* Options every renderer takes. */
typedef struct gc_deliver_view {
        const char *dashboard_url; /* a link to the dashboard; NULL or "" = none */
        size_t max_rows;           /* rows per table; 0 = 10 */
} gc_deliver_view;

/* The subject line: "<title> — $12,345.67 (+10.1%)" (UTF-8, not yet encoded). */
int gc_deliver_subject(const gc_deliver_report *r, gc_buf *out);
/* The plain-text part: lines of at most 78 characters before any encoding (names may run on). */
int gc_deliver_text(const gc_deliver_report *r, const gc_deliver_view *v, gc_buf *out);
/* The HTML part: one document, styles inline, tables, bars of cells, no images or scripts. */
int gc_deliver_html(const gc_deliver_report *r, const gc_deliver_view *v, gc_buf *out);

/* Appends s HTML-escaped (& < > " '), control bytes as blanks. */
int gc_deliver_html_escape(gc_buf *b, const char *s);

/* ---- MIME ----------------------------------------------------------------------------------- */

/* RFC 5322 header lines are at most 998 octets; encoded bodies keep to 78 (RFC 2045/5322). */
#define GC_DELIVER_LINE_MAX  998
#define GC_DELIVER_LINE_SOFT 78
#define GC_DELIVER_MAX_ADDR  254 /* RFC 5321's path limit, less the angle brackets */

typedef struct gc_deliver_mail {
        const char *from;      /* an address: "gpu-cost@example.com" */
        const char *from_name; /* a display name, any UTF-8; NULL = none */
        const char *to;        /* one address */
        const char *subject;   /* any UTF-8 */
        const char *text;      /* the plain-text part, UTF-8 */
        const char *html;      /* the HTML part, UTF-8 */
        int64_t date;          /* the Date header, UTC seconds */
        const char *msg_id;    /* the Message-ID's left part; NULL = made from random bytes */
} gc_deliver_mail;

/* 1 when s is an address we send to: local@domain, printable ASCII, no blanks, <> or quotes. */
int gc_deliver_addr_ok(const char *s);
/*
 * Writes an RFC 5322 message: From, To, Subject (RFC 2047 encoded-words when not plain ASCII),
 * Date, Message-ID, MIME-Version, and a multipart/alternative body with a text/plain and a
 * text/html part, each UTF-8 in quoted-printable. The boundary is chosen so that no part holds
 * it. Lines end in CRLF. -EINVAL with the field named in err.
 */
int gc_deliver_mime(const gc_deliver_mail *m, gc_buf *out, char *err, size_t errlen);
/* RFC 2047 "B" encoded-words (UTF-8) for a header value that is not plain ASCII, folded at 75
 * characters per word; plain printable ASCII is copied. */
int gc_deliver_header_encode(gc_buf *b, const char *s, size_t first_line_used);
/* Quoted-printable (RFC 2045) of n bytes, CRLF line ends, soft breaks before 76 characters. */
int gc_deliver_qp(gc_buf *b, const char *s, size_t n);

/* ---- SMTP ----------------------------------------------------------------------------------- */

typedef enum gc_deliver_tls {
        GC_DELIVER_TLS_REQUIRED = 0, /* smtp://: STARTTLS or fail; smtps:// is always TLS */
        GC_DELIVER_TLS_OPTIONAL,     /* STARTTLS when offered */
        GC_DELIVER_TLS_NONE,         /* plain SMTP (a relay on localhost, a test server) */
} gc_deliver_tls;

typedef enum gc_deliver_auth {
        GC_DELIVER_AUTH_ANY = 0, /* what the server offers (with a username) */
        GC_DELIVER_AUTH_PLAIN,
        GC_DELIVER_AUTH_LOGIN,
} gc_deliver_auth;

typedef struct gc_deliver_smtp {
        const char *url;      /* smtp://host[:port] or smtps://host[:port] */
        gc_deliver_tls tls;   /* for smtp:// */
        gc_deliver_auth auth; /* with a username */
        const char *username; /* NULL = no AUTH */
        const char *password;
        const char *cacert; /* a CA bundle (PEM) instead of the system's */
        int64_t timeout_s;  /* the whole exchange; 0 = 60 */
} gc_deliver_smtp;

/* Sends message (gc_deliver_mime's) from `from` to one recipient. -EIO with libcurl's reason in
 * err (the password never), -EINVAL for a bad option. */
int gc_deliver_smtp_send(const gc_deliver_smtp *o, const char *from, const char *to,
                         const char *message, size_t len, char *err, size_t errlen);

/* ---- chat ----------------------------------------------------------------------------------- */

typedef enum gc_deliver_chat {
        GC_DELIVER_SLACK = 0, /* incoming webhook, Block Kit */
        GC_DELIVER_TEAMS,     /* workflow webhook, an Adaptive Card */
        GC_DELIVER_JSON,      /* the figures as JSON, signed */
} gc_deliver_chat;

/*
 * Receivers' documented limits: Slack's 50 blocks a message, 3,000 characters of a section's
 * text and 10 fields of 2,000; Teams' 28 KB a card message. Payloads are cut to fit, ending in
 * an "N more" line, never refused.
 */
#define GC_DELIVER_SLACK_BLOCKS   50
#define GC_DELIVER_SLACK_TEXT     3000
#define GC_DELIVER_SLACK_FIELDS   10
#define GC_DELIVER_SLACK_FIELD    2000
#define GC_DELIVER_TEAMS_MAX      (28u * 1000u)
#define GC_DELIVER_JSON_MAX       ((size_t)256 << 10)
#define GC_DELIVER_WEBHOOK_HEADER "X-Gpu-Cost-Signature" /* "sha256=<hex>" */

/* "slack", "teams" or "json" to its kind; -EINVAL for anything else. */
int gc_deliver_chat_parse(const char *s, gc_deliver_chat *ret);
const char *gc_deliver_chat_name(gc_deliver_chat k);
/* The kind a webhook URL's host says (hooks.slack.com: Slack; a Power Automate or Logic Apps
 * host: Teams), else JSON. */
gc_deliver_chat gc_deliver_chat_guess(const char *url);

/* The message for kind k, within its receiver's limits. */
int gc_deliver_slack(const gc_deliver_report *r, const gc_deliver_view *v, gc_buf *out);
int gc_deliver_teams(const gc_deliver_report *r, const gc_deliver_view *v, gc_buf *out);
int gc_deliver_json(const gc_deliver_report *r, const gc_deliver_view *v, gc_buf *out);
int gc_deliver_chat_render(gc_deliver_chat k, const gc_deliver_report *r, const gc_deliver_view *v,
                           gc_buf *out);

/* HMAC-SHA256 of msg under key, as 64 lower-case hex digits and a NUL. */
#define GC_DELIVER_HMAC_HEX 65
int gc_deliver_hmac_sha256_hex(const void *key, size_t key_len, const void *msg, size_t msg_len,
                               char out[GC_DELIVER_HMAC_HEX]);

typedef struct gc_deliver_webhook {
        const char *url;    /* https:// (or http:// for a receiver on this machine) */
        const char *secret; /* signs the body (GC_DELIVER_WEBHOOK_HEADER); NULL = unsigned */
        const char *cacert;
        int64_t timeout_s; /* 0 = 30 */
} gc_deliver_webhook;

/* POSTs body as application/json; the receiver's status in *ret_status. -EIO (unreachable, or a
 * status other than 2xx, with the start of its answer) with the reason in err. The URL's path is
 * a secret for Slack and Teams: err names its scheme and host only. */
int gc_deliver_webhook_post(const gc_deliver_webhook *o, const char *body, size_t len,
                            long *ret_status, char *err, size_t errlen);
/* "https://host" of a URL, for messages: the rest may be a secret. */
void gc_deliver_url_origin(const char *url, char *out, size_t outlen);

#endif
