/* send: `gpu-cost report ... --send-test-email/--send-test-webhook`: one report sent now. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "deliver/deliver.h"

#define CLI_SECRET_MAX ((size_t)4 << 10) /* a password or a signing secret */

void cli_send_init(cli_send *s)
{
        const char *e;

        memset(s, 0, sizeof(*s));
        s->smtp.url = (e = getenv("GPU_COST_SMTP_SERVER")) && *e ? e : NULL;
        s->from = (e = getenv("GPU_COST_SMTP_FROM")) && *e ? e : NULL;
        s->smtp.username = (e = getenv("GPU_COST_SMTP_USER")) && *e ? e : NULL;
        s->password_env = (e = getenv("GPU_COST_SMTP_PASSWORD")) && *e ? e : NULL;
        s->secret_env = (e = getenv("GPU_COST_WEBHOOK_SECRET")) && *e ? e : NULL;
        s->chat = -1;
        gc_buf_init(&s->password, CLI_SECRET_MAX);
        gc_buf_init(&s->secret, CLI_SECRET_MAX);
}

void cli_send_done(cli_send *s)
{
        if (s->password.data)
                memset(s->password.data, 0, s->password.cap);
        if (s->secret.data)
                memset(s->secret.data, 0, s->secret.cap);
        gc_buf_free(&s->password);
        gc_buf_free(&s->secret);
}

int cli_send_option(cli_send *s, int c, const char *arg)
{
        gc_deliver_chat k;

        switch (c) {
        case CLI_OPT_SEND_EMAIL:
                s->to = arg;
                return 1;
        case CLI_OPT_SEND_WEBHOOK:
                s->webhook = arg;
                return 1;
        case CLI_OPT_WEBHOOK_FORMAT:
                if (gc_deliver_chat_parse(arg, &k) < 0) {
                        cli_error("--webhook-format: slack, teams or json, got \"%s\"", arg);
                        return -1;
                }
                s->chat = (int)k;
                return 1;
        case CLI_OPT_WEBHOOK_SECRET_FILE:
                s->secret_file = arg;
                return 1;
        case CLI_OPT_SMTP_SERVER:
                s->smtp.url = arg;
                return 1;
        case CLI_OPT_SMTP_FROM:
                s->from = arg;
                return 1;
        case CLI_OPT_SMTP_USER:
                s->smtp.username = arg;
                return 1;
        case CLI_OPT_SMTP_PASSWORD_FILE:
                s->password_file = arg;
                return 1;
        case CLI_OPT_SMTP_STARTTLS:
                if (strcmp(arg, "required") == 0)
                        s->smtp.tls = GC_DELIVER_TLS_REQUIRED;
                else if (strcmp(arg, "optional") == 0)
                        s->smtp.tls = GC_DELIVER_TLS_OPTIONAL;
                else if (strcmp(arg, "none") == 0)
                        s->smtp.tls = GC_DELIVER_TLS_NONE;
                else {
                        cli_error("--smtp-starttls: required, optional or none, got \"%s\"", arg);
                        return -1;
                }
                return 1;
        case CLI_OPT_SMTP_AUTH:
                if (strcmp(arg, "any") == 0)
                        s->smtp.auth = GC_DELIVER_AUTH_ANY;
                else if (strcmp(arg, "plain") == 0)
                        s->smtp.auth = GC_DELIVER_AUTH_PLAIN;
                else if (strcmp(arg, "login") == 0)
                        s->smtp.auth = GC_DELIVER_AUTH_LOGIN;
                else {
                        cli_error("--smtp-auth: any, plain or login, got \"%s\"", arg);
                        return -1;
                }
                return 1;
        case CLI_OPT_SMTP_CACERT:
                s->smtp.cacert = arg;
                return 1;
        case CLI_OPT_DASHBOARD_URL:
                s->dashboard = arg;
                return 1;
        default:
                return 0;
        }
}

/* A secret from a file (its trailing line break dropped), else from the environment. */
static int cli_send_secret(const char *file, const char *env, const char *what, gc_buf *b,
                           const char **ret)
{
        if (file) {
                int e = gc_read_file(file, CLI_SECRET_MAX, b);

                if (e < 0) {
                        cli_error("%s %s: cannot read: %s", what, file,
                                  e == -E2BIG ? "larger than 4 KiB" : strerror(-e));
                        return GC_EXIT_USAGE;
                }
                while (b->len && (b->data[b->len - 1] == '\n' || b->data[b->len - 1] == '\r'))
                        b->data[--b->len] = '\0';
                if (!b->len || strlen(b->data) != b->len) {
                        cli_error("%s %s: empty, or holds a NUL byte", what, file);
                        return GC_EXIT_USAGE;
                }
                *ret = b->data;
        } else {
                *ret = env;
        }
        return 0;
}

int cli_send_check(cli_send *s, int64_t timeout_s)
{
        int rc;

        if (!cli_send_wanted(s))
                return 0;
        if (s->to && s->webhook) {
                cli_error("--send-test-email and --send-test-webhook: one at a time");
                return GC_EXIT_USAGE;
        }
        s->smtp.timeout_s = timeout_s;
        if (s->webhook) {
                if (strncmp(s->webhook, "https://", 8) != 0 &&
                    strncmp(s->webhook, "http://", 7) != 0) {
                        cli_error("--send-test-webhook: expected an https:// URL");
                        return GC_EXIT_USAGE;
                }
                if (s->chat < 0)
                        s->chat = (int)gc_deliver_chat_guess(s->webhook);
                return cli_send_secret(s->secret_file, s->secret_env, "--webhook-secret-file",
                                       &s->secret, &s->secret_value);
        }
        if (!gc_deliver_addr_ok(s->to)) {
                cli_error("--send-test-email: \"%s\" is not an address (name@domain)", s->to);
                return GC_EXIT_USAGE;
        }
        if (!s->smtp.url) {
                cli_error(
                    "no SMTP server: give --smtp-server smtp://HOST:587 (or smtps://HOST:465) "
                    "or set GPU_COST_SMTP_SERVER");
                return GC_EXIT_USAGE;
        }
        if (!s->from || !gc_deliver_addr_ok(s->from)) {
                cli_error("no sender address: give --smtp-from NAME@DOMAIN or set "
                          "GPU_COST_SMTP_FROM");
                return GC_EXIT_USAGE;
        }
        rc = cli_send_secret(s->password_file, s->password_env, "--smtp-password-file",
                             &s->password, &s->smtp.password);
        if (rc == 0 && s->smtp.username && !s->smtp.password) {
                cli_error("--smtp-user needs a password: --smtp-password-file F or "
                          "GPU_COST_SMTP_PASSWORD");
                rc = GC_EXIT_USAGE;
        }
        return rc;
}

static int cli_send_email(cli_send *s, const gc_deliver_report *r, const gc_deliver_view *v)
{
        gc_buf subj, text, html, msg;
        char err[1024];
        int rc = GC_EXIT_FAIL, e;

        gc_buf_init(&subj, 4096);
        gc_buf_init(&text, (size_t)1 << 20);
        gc_buf_init(&html, (size_t)4 << 20);
        gc_buf_init(&msg, (size_t)16 << 20);
        if (gc_deliver_subject(r, &subj) < 0 || gc_deliver_text(r, v, &text) < 0 ||
            gc_deliver_html(r, v, &html) < 0) {
                cli_error("cannot render the report: too large or out of memory");
                goto finish;
        }
        gc_deliver_mail m = {s->from,   "gpu-cost",          s->to, subj.data, text.data,
                             html.data, (int64_t)time(NULL), NULL};
        if (gc_deliver_mime(&m, &msg, err, sizeof(err)) < 0) {
                cli_error("cannot build the message: %s", err);
                goto finish;
        }
        e = gc_deliver_smtp_send(&s->smtp, s->from, s->to, msg.data, msg.len, err, sizeof(err));
        if (e < 0) {
                cli_error("%s", err);
                rc = e == -EINVAL ? GC_EXIT_USAGE : GC_EXIT_FAIL;
                goto finish;
        }
        const char *id = strstr(msg.data, "Message-ID: ");
        printf("sent the %s report %s to %s from %s: %zu bytes (text %zu, HTML %zu), %.*s\n",
               r->kind, r->period_id, s->to, s->from, msg.len, text.len, html.len,
               id ? (int)strcspn(id, "\r") : 0, id ? id : "");
        printf("subject: %s\n", subj.data);
        rc = fflush(stdout) == 0 ? GC_EXIT_OK : GC_EXIT_FAIL;
finish:
        gc_buf_free(&subj);
        gc_buf_free(&text);
        gc_buf_free(&html);
        gc_buf_free(&msg);
        return rc;
}

static int cli_send_hook(cli_send *s, const gc_deliver_report *r, const gc_deliver_view *v)
{
        gc_deliver_webhook o = {s->webhook, s->secret_value, s->smtp.cacert, s->smtp.timeout_s};
        char err[1024], origin[256];
        long status = 0;
        gc_buf body;
        int rc = GC_EXIT_FAIL, e;

        gc_buf_init(&body, (size_t)1 << 20);
        if (gc_deliver_chat_render((gc_deliver_chat)s->chat, r, v, &body) < 0) {
                cli_error("cannot render the %s message", gc_deliver_chat_name(s->chat));
                goto finish;
        }
        e = gc_deliver_webhook_post(&o, body.data, body.len, &status, err, sizeof(err));
        if (e < 0) {
                cli_error("%s", err);
                rc = e == -EINVAL ? GC_EXIT_USAGE : GC_EXIT_FAIL;
                goto finish;
        }
        gc_deliver_url_origin(s->webhook, origin, sizeof(origin));
        printf("sent the %s report %s to %s as a %s message: %zu bytes%s, answered %ld\n", r->kind,
               r->period_id, origin, gc_deliver_chat_name(s->chat), body.len,
               s->secret_value ? ", signed (" GC_DELIVER_WEBHOOK_HEADER ")" : "", status);
        rc = fflush(stdout) == 0 ? GC_EXIT_OK : GC_EXIT_FAIL;
finish:
        gc_buf_free(&body);
        return rc;
}

int cli_send_report(cli_send *s, const char *json, size_t len)
{
        gc_deliver_view v = {s->dashboard, 0};
        gc_deliver_report *r = calloc(1, sizeof(*r));
        char err[512];
        int rc;

        if (!r) {
                cli_error("out of memory");
                return GC_EXIT_FAIL;
        }
        if (gc_deliver_report_parse(json, len, r, err, sizeof(err)) < 0) {
                cli_error("the report is not a period report's JSON (docs/report.md): %s", err);
                free(r);
                return GC_EXIT_USAGE;
        }
        rc = s->webhook ? cli_send_hook(s, r, &v) : cli_send_email(s, r, &v);
        free(r);
        return rc;
}
