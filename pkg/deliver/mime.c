/* deliver mime: an RFC 5322 multipart/alternative message, headers RFC 2047, bodies QP. */
#include <errno.h>
#include <openssl/rand.h>
#include <string.h>

#include "deliver.h"

#define GC_DELIVER__QP_LINE   76 /* RFC 2045: encoded lines of at most 76 characters */
#define GC_DELIVER__WORD_DATA 45 /* bytes per encoded-word: 60 base64 chars, 72 in all */
#define GC_DELIVER__MAX_SUBJ  2048

int gc_deliver_addr_ok(const char *s)
{
        const char *at;
        size_t n;

        if (!s || !(at = strchr(s, '@')) || at == s || strchr(at + 1, '@'))
                return 0;
        n = strlen(s);
        if (n > GC_DELIVER_MAX_ADDR || !at[1] || at[1] == '.' || s[n - 1] == '.')
                return 0;
        for (const char *p = s; *p; p++)
                if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f ||
                    strchr("<>\"(),;:\\[]", *p))
                        return 0;
        return 1;
}

static int gc_deliver__plain(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
                        return 0;
        return 1;
}

static void gc_deliver__b64(gc_buf *b, const unsigned char *p, size_t n)
{
        static const char tab[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        char q[4];

        for (size_t i = 0; i < n; i += 3) {
                unsigned v = (unsigned)p[i] << 16;

                if (i + 1 < n)
                        v |= (unsigned)p[i + 1] << 8;
                if (i + 2 < n)
                        v |= p[i + 2];
                q[0] = tab[(v >> 18) & 63];
                q[1] = tab[(v >> 12) & 63];
                q[2] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
                q[3] = i + 2 < n ? tab[v & 63] : '=';
                gc_buf_append(b, q, 4);
        }
}

/* Encoded-words of whole UTF-8 sequences (RFC 2047 section 5: no character split), each on its
 * own folded line; the first after `used` characters of its line, and no line past 78. */
static int gc_deliver__words(gc_buf *b, const char *s, size_t used)
{
        size_t n = strlen(s), i = 0, room;

        room =
            used + 12 + 4 < GC_DELIVER_LINE_SOFT ? (GC_DELIVER_LINE_SOFT - used - 12) / 4 * 3 : 0;
        if (room == 0) { /* no room on the first line: start on the next */
                gc_buf_puts(b, "\r\n ");
                room = GC_DELIVER__WORD_DATA;
        }
        while (i < n) {
                size_t take = n - i < room ? n - i : room;

                while (take < n - i && take > 0 && ((unsigned char)s[i + take] & 0xC0) == 0x80)
                        take--;
                if (take == 0)
                        take = 1;
                if (i)
                        gc_buf_puts(b, "\r\n ");
                gc_buf_puts(b, "=?UTF-8?B?");
                gc_deliver__b64(b, (const unsigned char *)s + i, take);
                gc_buf_puts(b, "?=");
                i += take;
                room = GC_DELIVER__WORD_DATA;
        }
        return b->err;
}

int gc_deliver_header_encode(gc_buf *b, const char *s, size_t first_line_used)
{
        if (gc_deliver__plain(s) && first_line_used + strlen(s) <= GC_DELIVER_LINE_SOFT)
                return gc_buf_puts(b, s);
        return gc_deliver__words(b, s, first_line_used);
}

int gc_deliver_qp(gc_buf *b, const char *s, size_t n)
{
        static const char hex[] = "0123456789ABCDEF";
        size_t col = 0;

        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                char enc[3];
                size_t w;

                if (c == '\n' || (c == '\r' && i + 1 < n && s[i + 1] == '\n')) {
                        if (c == '\r')
                                i++;
                        gc_buf_puts(b, "\r\n");
                        col = 0;
                        continue;
                }
                /* Literal: printable ASCII but '='; a blank unless a line break follows; a '.'
                 * not at a line's start (an SMTP server would take a lone "." for the end). */
                int next_eol = i + 1 == n || s[i + 1] == '\n' || s[i + 1] == '\r';
                if ((c >= 33 && c <= 126 && c != '=' && !(c == '.' && col == 0)) ||
                    ((c == ' ' || c == '\t') && !next_eol)) {
                        enc[0] = (char)c;
                        w = 1;
                } else {
                        enc[0] = '=';
                        enc[1] = hex[c >> 4];
                        enc[2] = hex[c & 15];
                        w = 3;
                }
                /* A soft break ("=") keeps every line at 76 characters at most. */
                if (col + w > GC_DELIVER__QP_LINE - 1) {
                        gc_buf_puts(b, "=\r\n");
                        col = 0;
                        if (enc[0] == '.' && w == 1) {
                                gc_buf_puts(b, "=2E");
                                col = 3;
                                continue;
                        }
                }
                gc_buf_append(b, enc, w);
                col += w;
        }
        return b->err;
}

static int gc_deliver__random_hex(char *out, size_t bytes)
{
        static const char hex[] = "0123456789abcdef";
        unsigned char r[32];

        if (bytes > sizeof(r) || RAND_bytes(r, (int)bytes) != 1)
                return -EIO;
        for (size_t i = 0; i < bytes; i++) {
                out[2 * i] = hex[r[i] >> 4];
                out[2 * i + 1] = hex[r[i] & 15];
        }
        out[2 * bytes] = '\0';
        return 0;
}

/* RFC 5322 section 3.3: "Sat, 28 Nov 2026 13:05:00 +0000". */
static void gc_deliver__date(gc_buf *b, int64_t t)
{
        static const char *const wd[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
        static const char *const mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
        int64_t days = gc_floor_div(t, 86400), sec = t - days * 86400, y;
        unsigned m, d;

        gc_civil_from_days(days, &y, &m, &d);
        gc_buf_printf(b, "%s, %02u %s %04lld %02lld:%02lld:%02lld +0000", wd[gc_weekday(days)], d,
                      mon[m - 1], (long long)y, (long long)(sec / 3600), (long long)(sec / 60 % 60),
                      (long long)(sec % 60));
}

static int gc_deliver__valid_utf8(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;

        while (*p) {
                size_t n = *p < 0x80         ? 0
                           : (*p >> 5) == 6  ? 1
                           : (*p >> 4) == 14 ? 2
                           : (*p >> 3) == 30 ? 3
                                             : 9;

                if (n == 9)
                        return 0;
                for (size_t i = 1; i <= n; i++)
                        if ((p[i] & 0xC0) != 0x80)
                                return 0;
                p += n + 1;
        }
        return 1;
}

static int gc_deliver__part(gc_buf *b, const char *boundary, const char *type, const char *body)
{
        gc_buf_printf(b,
                      "--%s\r\nContent-Type: %s; charset=UTF-8\r\n"
                      "Content-Transfer-Encoding: quoted-printable\r\n\r\n",
                      boundary, type);
        gc_deliver_qp(b, body, strlen(body));
        return gc_buf_puts(b, "\r\n");
}

int gc_deliver_mime(const gc_deliver_mail *m, gc_buf *out, char *err, size_t errlen)
{
        char boundary[64], id[48];
        const char *domain;
        size_t mark = out->len;

        if (!m || !gc_deliver_addr_ok(m->from)) {
                gc_errf(err, errlen, "the sender is not an address (name@domain): \"%.80s\"",
                        m && m->from ? m->from : "");
                return -EINVAL;
        }
        if (!gc_deliver_addr_ok(m->to)) {
                gc_errf(err, errlen, "the recipient is not an address (name@domain): \"%.80s\"",
                        m->to ? m->to : "");
                return -EINVAL;
        }
        if (!m->subject || strlen(m->subject) > GC_DELIVER__MAX_SUBJ ||
            !gc_deliver__valid_utf8(m->subject) ||
            (m->from_name &&
             (strlen(m->from_name) > 256 || !gc_deliver__valid_utf8(m->from_name)))) {
                gc_errf(err, errlen, "the subject or sender name is not UTF-8 of at most %d bytes",
                        GC_DELIVER__MAX_SUBJ);
                return -EINVAL;
        }
        if (!m->text || !m->html || !gc_deliver__valid_utf8(m->text) ||
            !gc_deliver__valid_utf8(m->html)) {
                gc_errf(err, errlen, "a body part is missing or not UTF-8");
                return -EINVAL;
        }
        if (m->msg_id && (strlen(m->msg_id) > 40 || !gc_deliver__plain(m->msg_id) ||
                          strpbrk(m->msg_id, "<>@ "))) {
                gc_errf(err, errlen, "the Message-ID's left part is not plain (<= 40 bytes)");
                return -EINVAL;
        }
        if (m->msg_id)
                gc_strlcpy(id, m->msg_id, sizeof(id));
        else if (gc_deliver__random_hex(id, 16) < 0) {
                gc_errf(err, errlen, "no random bytes for the Message-ID");
                return -EIO;
        }
        /* "=_" never occurs in quoted-printable text ("=" is followed by hex or a line break),
         * so the boundary cannot appear in a part; it is checked anyway. */
        memcpy(boundary, "=_gpu-cost_", 12);
        if (gc_deliver__random_hex(boundary + 11, 12) < 0)
                memcpy(boundary + 11, "000000000000", 13);
        if (strstr(m->text, boundary) || strstr(m->html, boundary)) {
                gc_errf(err, errlen, "a part holds the MIME boundary");
                return -EINVAL;
        }
        domain = strchr(m->from, '@') + 1;

        gc_buf_puts(out, "From: ");
        if (m->from_name && *m->from_name) {
                /* Always encoded-words: a plain name may hold the specials ,<>" of addresses. */
                gc_deliver__words(out, m->from_name, 6);
                gc_buf_puts(out, "\r\n ");
        }
        gc_buf_printf(out, "<%s>\r\nTo: <%s>\r\nSubject: ", m->from, m->to);
        gc_deliver_header_encode(out, m->subject, 9);
        gc_buf_puts(out, "\r\nDate: ");
        gc_deliver__date(out, m->date);
        gc_buf_printf(out,
                      "\r\nMessage-ID: <%s@%s>\r\nMIME-Version: 1.0\r\n"
                      "Content-Type: multipart/alternative;\r\n boundary=\"%s\"\r\n"
                      "Auto-Submitted: auto-generated\r\n\r\n"
                      "This is a report in MIME format: a plain-text and an HTML part.\r\n\r\n",
                      id, domain, boundary);
        gc_deliver__part(out, boundary, "text/plain", m->text);
        gc_deliver__part(out, boundary, "text/html", m->html);
        gc_buf_printf(out, "--%s--\r\n", boundary);
        if (out->err) {
                int e = out->err;

                gc_buf_truncate(out, mark);
                gc_errf(err, errlen, "the message is too large");
                return e;
        }
        return 0;
}
