/* httpd: the libwebsockets server: listening, limits, routing, the guard, responses, TLS reload.
 */
#include "httpd_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/sockios.h> /* SIOCINQ */
#include <linux/tcp.h>     /* tcpi_bytes_received, which glibc's netinet/tcp.h lacks */

#include <libwebsockets.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

/*
 * One lws_write() of body. lws cuts every write to its per-thread service buffer, 4 KiB by
 * default: a 79 KB answer then left in 21 send()s, and each loopback send runs the receiver and a
 * task switch (121 us of CPU a request, 82% of it in send()). 64 KiB pieces through a 256 KiB
 * buffer send it in 2 and cost 33 us (docs/benchmarks.md).
 */
#define CHUNK_BYTES      (64 * 1024)
#define SERVICE_BUF_SIZE (256 * 1024)
#define HDR_BYTES        1024 /* status line, Content-Type, Content-Length, Server */
#define TICK_US          (200 * LWS_US_PER_MS)
#define PROTOCOL         "gc-httpd"

/*
 * lws counts its own descriptors against fd_limit_per_thread: the listening socket, the pipe
 * lws_cancel_service() writes to and the epoll set that watches heads (below). Past the limit it
 * stops accepting, so further clients wait in the kernel's backlog until a connection closes.
 */
#define LWS_OWN_FDS 3
/* Looks at one partial head before its reading is left to lws alone (each copies what came). */
#define HEAD_LOOKS 64
/* Descriptors the process keeps beside the server's connections (files, API clients, logs). */
#define FDS_RESERVED 64
/*
 * Slots beyond max_connections: for connections shed to admit a newer one (they close on lws'
 * next pass, not at once), and for a burst of new clients when no connection is stale enough to
 * shed. With every slot in use lws stops accepting and clients wait in the kernel's backlog.
 */
#define SHED_SLOTS(max) ((max) / 4 + 8)
/* Only a connection without an answer for this long is shed: a burst does not shed itself. */
#define SHED_AFTER_US (1000 * LWS_US_PER_MS)
#define RAW_PROTOCOL  "gc-httpd-raw"
/* A backstop behind a deferred answer: a worker that never returns does not hold the connection. */
#define WORK_BACKSTOP_SEC 120

/* One accepted connection, for admission (one per lws_get_opaque_user_data()). */
struct slot {
        struct lws *wsi; /* NULL: free */
        struct slot *next_free;
        unsigned char addr[16];  /* the client's address; IPv4 as ::ffff:a.b.c.d */
        lws_usec_t last_done_us; /* accepted, or the last answer written */
        uint64_t rx_base;        /* bytes received when the last answer was written */
        bool busy;               /* between a whole request head and the end of its answer */
        bool shed;               /* closing to make room */
        bool cut;                /* lws cut its transaction (pipelining): hang up at the next */
        bool close_after;        /* the answer being written ends the connection */

        /* Heads checked before lws reads them (plain HTTP; head_look()). */
        uint64_t checked; /* bytes of heads checked and left to lws: all lws read, if in step */
        unsigned looks;   /* at the current, partial head */
        bool unchecked;   /* lws read past what was checked: its parser alone from now on */
        bool held;        /* reading held for this pass of the loop (heads_release) */
        bool lowat;       /* SO_RCVLOWAT raised: woken only when more of the head came */
        bool refused;     /* answered from the head: closing */
};

struct route {
        char *path;
        size_t len;
        unsigned flags;
        gc_httpd_handler fn;
        void *ud;
};

struct file_stamp {
        bool ok;
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime;
};

/* What the request line said, decoded by lws; owned by the caller (free_target). */
struct target {
        char *path;
        gc_httpd_param *params; /* owns the block args points into */
        char *args;             /* the parameters, each NUL-terminated */
        size_t n_params;
        gc_buf query;
};

struct conn;

/* A deferred answer (gc_httpd_defer): the job the pool runs, and the request it answers. */
struct work {
        struct gc_httpd__job j;
        struct target t; /* j.req points into it */
        size_t mi;
        struct lws *wsi;
};

/* lws per-session data: the response being written on this connection, or a parked request. */
struct conn {
        gc_buf body;
        size_t sent;
        bool active;

        /* A streamed body (gc_httpd_stream): `body` holds the piece being sent; linked into
         * gc_httpd's list of streams while it lasts. */
        gc_httpd_stream stream;
        bool streaming, stream_end, stream_waiting;
        struct conn *stream_prev, *stream_next;

        /* Parked by the guard: the request as read (lws keeps its header table attached until
         * the transaction completes), linked into gc_httpd's list until it is answered. */
        bool parked;
        struct lws *wsi;
        struct conn *park_prev, *park_next;
        lws_usec_t park_deadline_us;
        struct target t;
        size_t mi;
        const struct route *rt;

        /* Being computed on a worker (or waiting for one); the answer is sent when it returns. */
        struct work *work;
};

struct gc_httpd {
        struct lws_context *ctx;
        struct lws_vhost *vh;
        /* lws keeps pointers to these for the context's life. */
        struct lws_protocols protocols[3];
        struct lws_http_mount mount;
        struct lws_token_limits token_limits;
        char host[INET6_ADDRSTRLEN];
        lws_sorted_usec_list_t tick;

        struct route routes[GC_HTTPD_MAX_ROUTES];
        size_t n_routes;

        size_t max_url, max_header, max_response;
        int idle_sec, head_sec, max_conns, max_per_addr, port, tls_check_sec;

        /* Admission: lws accepts n_accept connections (max_conns + SHED_SLOTS); n_slots are
         * more than that (lws counts its descriptors its own way), the free ones linked. */
        struct slot *slots;
        int n_accept, n_slots, n_open, n_shedding;
        struct slot *free_slots;
        gc_httpd_stats stats;

        char *cert, *key;
        lws_usec_t next_tls_check_us;
        struct file_stamp cert_loaded, key_loaded; /* the pair being served */
        struct file_stamp cert_bad, key_bad;       /* the last pair refused, warned about once */

        gc_httpd_log_fn log;
        void *log_ud;

        atomic_bool stop_req;
        bool tls;

        gc_httpd_guard guard;
        void *guard_ud;
        int max_parked, park_sec, n_parked;
        struct conn *parked; /* doubly linked through park_prev/park_next */
        atomic_bool wake_req;
        struct conn *streams; /* doubly linked through stream_prev/stream_next */

        struct gc_httpd__pool pool; /* computes deferred answers */
        int n_workers, max_queued;
        atomic_bool work_done;

        /* Request heads are looked at as sent, before lws reads them: every plain connection is
         * in this epoll set (edge-triggered), which lws polls as a file before the connections
         * (head_look). */
        int epfd;
        struct lws *ep_wsi;
        char *peek;
        size_t peek_len;
        lws_sorted_usec_list_t release; /* lets held connections read again, next pass */

        unsigned char *wbuf; /* LWS_PRE headroom, then headers or one body chunk */
        size_t wbuf_len;
        char *hdr_scan; /* one known header's value, to look for control characters */
        size_t hdr_scan_len;
};

static const struct {
        enum lws_token_indexes tok;
        const char *name;
} methods[] = {
    {WSI_TOKEN_GET_URI, "GET"},       {WSI_TOKEN_HEAD_URI, "HEAD"},
    {WSI_TOKEN_POST_URI, "POST"},
#if defined(LWS_WITH_HTTP_UNCOMMON_HEADERS)
    {WSI_TOKEN_PUT_URI, "PUT"},       {WSI_TOKEN_PATCH_URI, "PATCH"},
    {WSI_TOKEN_DELETE_URI, "DELETE"}, {WSI_TOKEN_OPTIONS_URI, "OPTIONS"},
#endif
    {WSI_TOKEN_CONNECT, "CONNECT"},
};

/* ---- logging ------------------------------------------------------------------------------- */

static void hlog(const struct gc_httpd *h, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void hlog(const struct gc_httpd *h, int level, const char *fmt, ...)
{
        char msg[512];
        va_list ap;

        if (!h->log)
                return;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        h->log(h->log_ud, level, msg);
}

/* lws's log level and emitter are process-wide, so its messages go to one server's hook. */
static pthread_mutex_t lws_log_mu = PTHREAD_MUTEX_INITIALIZER;
static const struct gc_httpd *lws_log_owner;

static void lws_emit(int level, const char *line)
{
        char msg[512];
        size_t n;

        pthread_mutex_lock(&lws_log_mu);
        if (lws_log_owner && lws_log_owner->log) {
                gc_strlcpy(msg, line, sizeof(msg));
                n = strlen(msg);
                while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
                        msg[--n] = '\0';
                lws_log_owner->log(lws_log_owner->log_ud,
                                   level == LLL_ERR ? GC_HTTPD_LOG_ERROR : GC_HTTPD_LOG_WARN, msg);
        }
        pthread_mutex_unlock(&lws_log_mu);
}

/* ---- TLS files ------------------------------------------------------------------------------ */

static struct file_stamp file_stamp(const char *path)
{
        struct file_stamp s = {0};
        struct stat st;

        if (stat(path, &st) == 0) {
                s.ok = true;
                s.dev = st.st_dev;
                s.ino = st.st_ino;
                s.size = st.st_size;
                s.mtime = st.st_mtim;
        }
        return s;
}

static bool stamp_eq(const struct file_stamp *a, const struct file_stamp *b)
{
        return a->ok == b->ok && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
               a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* An encrypted key would otherwise make OpenSSL prompt on the terminal. */
static int no_password(char *buf, int size, int rwflag, void *ud)
{
        (void)buf;
        (void)size;
        (void)rwflag;
        (void)ud;
        return 0;
}

/*
 * Loads the pair into a scratch SSL_CTX, so a half-rotated or broken pair is refused before
 * lws replaces the certificate it serves.
 */
static int tls_pair_check(const char *cert, const char *key, char *msg, size_t msglen)
{
        SSL_CTX *ctx;
        int r = 0;

        ctx = SSL_CTX_new(TLS_server_method());
        if (!ctx) {
                snprintf(msg, msglen, "tls: out of memory");
                return -ENOMEM;
        }
        SSL_CTX_set_default_passwd_cb(ctx, no_password);
        if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
                snprintf(msg, msglen, "tls_cert_file: no PEM certificate chain in %s", cert);
                r = -EINVAL;
        } else if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
                   SSL_CTX_check_private_key(ctx) != 1) {
                snprintf(msg, msglen,
                         "tls_key_file: %s is not an unencrypted PEM key matching the certificate",
                         key);
                r = -EINVAL;
        }
        ERR_clear_error();
        SSL_CTX_free(ctx);
        return r;
}

static void tls_check(struct gc_httpd *h)
{
        struct file_stamp c = file_stamp(h->cert), k = file_stamp(h->key);
        char msg[512];

        if (stamp_eq(&c, &h->cert_loaded) && stamp_eq(&k, &h->key_loaded))
                return;
        if (stamp_eq(&c, &h->cert_bad) && stamp_eq(&k, &h->key_bad))
                return;
        if (!c.ok || !k.ok) {
                snprintf(msg, sizeof(msg), "%s: cannot stat %s",
                         c.ok ? "tls_key_file" : "tls_cert_file", c.ok ? h->key : h->cert);
        } else if (tls_pair_check(h->cert, h->key, msg, sizeof(msg)) == 0) {
                /* lws reloads every vhost that was created with these two paths. */
                if (lws_tls_cert_updated(h->ctx, h->cert, h->key, NULL, 0, NULL, 0) == 0) {
                        h->cert_loaded = c;
                        h->key_loaded = k;
                        hlog(h, GC_HTTPD_LOG_INFO, "tls: loaded the new certificate from %s",
                             h->cert);
                        return;
                }
                snprintf(msg, sizeof(msg), "tls: libwebsockets refused the new certificate");
        }
        h->cert_bad = c;
        h->key_bad = k;
        hlog(h, GC_HTTPD_LOG_WARN, "%s; still serving the previous certificate", msg);
}

/* ---- admission ------------------------------------------------------------------------------ */

/* The client's address of fd as 16 bytes, IPv4 as ::ffff:a.b.c.d; false when unknown. */
static bool peer_addr(int fd, unsigned char ret[16])
{
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);

        memset(&ss, 0, sizeof(ss));
        if (fd < 0 || getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
                return false;
        if (ss.ss_family == AF_INET6) {
                memcpy(ret, &((const struct sockaddr_in6 *)&ss)->sin6_addr, 16);
                return true;
        }
        if (ss.ss_family != AF_INET)
                return false;
        memset(ret, 0, 10);
        ret[10] = 0xff;
        ret[11] = 0xff;
        memcpy(ret + 12, &((const struct sockaddr_in *)&ss)->sin_addr, 4);
        return true;
}

/* Bytes the kernel received on the connection so far (0 when it cannot say). */
static uint64_t rx_bytes(struct lws *wsi)
{
        struct tcp_info ti;
        socklen_t len = sizeof(ti);
        int fd = lws_get_socket_fd(wsi);

        memset(&ti, 0, sizeof(ti));
        if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 ||
            len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received))
                return 0;
        return ti.tcpi_bytes_received;
}

static struct slot *slot_of(struct lws *wsi)
{
        struct slot *s = lws_get_opaque_user_data(wsi);

        return s && s->wsi == wsi ? s : NULL;
}

/*
 * The connection that has gone longest without an answer (idle the longest, or the slowest
 * to send its request), among those not being answered; of one address when addr is set.
 */
static struct slot *stalest(struct gc_httpd *h, const unsigned char *addr)
{
        lws_usec_t before = lws_now_usecs() - SHED_AFTER_US;
        struct slot *best = NULL;

        for (int i = 0; i < h->n_slots; i++) {
                struct slot *s = &h->slots[i];

                if (!s->wsi || s->busy || s->shed || s->last_done_us > before ||
                    (addr && memcmp(s->addr, addr, 16) != 0))
                        continue;
                if (!best || s->last_done_us < best->last_done_us)
                        best = s;
        }
        return best;
}

/* Closed on lws' next pass; the slot is free after LWS_CALLBACK_WSI_DESTROY. */
static void shed(struct gc_httpd *h, struct slot *s)
{
        s->shed = true;
        h->n_open--;
        h->n_shedding++;
        h->stats.shed++;
        lws_set_timeout(s->wsi, PENDING_TIMEOUT_HTTP_KEEPALIVE_IDLE, LWS_TO_KILL_ASYNC);
}

/* Every tick: connections admitted to spare places while none was stale are shed once stale. */
static void shed_excess(struct gc_httpd *h)
{
        while (h->n_open > h->max_conns) {
                struct slot *victim = stalest(h, NULL);

                if (!victim)
                        break;
                shed(h, victim);
        }
}

/*
 * LWS_CALLBACK_FILTER_NETWORK_CONNECTION, before lws adopts fd: 0 admits it, 1 has lws close
 * it at once. Past a cap the stalest connection is shed to make room; with none stale, a new
 * connection past the address's cap is closed, one past max_connections takes a spare slot.
 */
static int admit(struct gc_httpd *h, int fd)
{
        unsigned char addr[16];
        struct slot *victim = NULL;
        int same = 0;

        if (!h->free_slots || !peer_addr(fd, addr))
                goto refuse;
        for (int i = 0; i < h->n_slots; i++)
                if (h->slots[i].wsi && !h->slots[i].shed && !memcmp(h->slots[i].addr, addr, 16))
                        same++;
        /* A per-address cap as large as the total is no cap: the total's rule applies. */
        if (same >= h->max_per_addr && h->max_per_addr < h->max_conns) {
                victim = stalest(h, addr);
                if (!victim)
                        goto refuse;
        } else if (h->n_open >= h->max_conns) {
                victim = stalest(h, NULL);
        }
        if (victim)
                shed(h, victim);
        return 0;
refuse:
        h->stats.refused++;
        return 1;
}

static void heads_watch(struct gc_httpd *h, struct slot *s);

/* LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED: the admitted connection takes its slot. */
static int slot_take(struct gc_httpd *h, struct lws *wsi)
{
        struct slot *s = h->free_slots;

        if (!s)
                return -1;
        h->free_slots = s->next_free;
        memset(s, 0, sizeof(*s));
        s->wsi = wsi;
        peer_addr(lws_get_socket_fd(wsi), s->addr);
        s->last_done_us = lws_now_usecs();
        h->n_open++;
        h->stats.accepted++;
        lws_set_opaque_user_data(wsi, s);
        heads_watch(h, s);
        return 0;
}

/* LWS_CALLBACK_WSI_DESTROY. */
static void slot_release(struct gc_httpd *h, struct lws *wsi)
{
        struct slot *s = slot_of(wsi);

        if (!s)
                return;
        if (s->shed)
                h->n_shedding--;
        else
                h->n_open--;
        s->wsi = NULL;
        s->next_free = h->free_slots;
        h->free_slots = s;
        lws_set_opaque_user_data(wsi, NULL);
}

/* An answer was written whole: the connection waits for its next request. */
static void slot_done(struct lws *wsi)
{
        struct slot *s = slot_of(wsi);

        if (!s)
                return;
        s->busy = false;
        s->last_done_us = lws_now_usecs();
        s->rx_base = rx_bytes(wsi);
}

/* ---- request heads, as sent ------------------------------------------------------------------ */

/*
 * lws 4.1 fails some heads without an answer (one over its table, over 90 pieces, a NUL in the
 * request line) or with its own HTML 403 (a bad % escape). So on plain HTTP each head is looked
 * at as sent (MSG_PEEK) before lws reads it: every connection is in an edge-triggered epoll set
 * that lws polls as a file, and lws services its descriptors in the order they were added, the
 * set before any connection, so that head_look() runs first in a pass that has new bytes. A head
 * not whole yet is held for that pass (lws_rx_flow_control) and the socket wakes again only with
 * more (SO_RCVLOWAT); a whole one is left to lws; a bad one is answered here and closed. A
 * connection whose bytes lws read past what was looked at (a pipelined request, bytes in a race
 * with the look, a body) is left to lws from then on.
 */

/* The whole answer, status line to body, in h->wbuf (after LWS_PRE); its length, or 0. */
static size_t raw_error(struct gc_httpd *h, int status, const char *msg)
{
        gc_httpd_response res = {.status = status};
        const char *reason = status == 414   ? "URI Too Long"
                             : status == 431 ? "Request Header Fields Too Large"
                                             : "Bad Request";
        int n;

        gc_buf_init(&res.body, 1024);
        if (gc_httpd_error(&res, status, msg) < 0) {
                gc_buf_free(&res.body);
                return 0;
        }
        n = snprintf((char *)h->wbuf + LWS_PRE, h->wbuf_len - LWS_PRE,
                     "HTTP/1.1 %d %s\r\nserver: gpu-cost\r\ncontent-type: application/json\r\n"
                     "content-length: %zu\r\nconnection: close\r\n\r\n%s",
                     status, reason, res.body.len, res.body.data);
        gc_buf_free(&res.body);
        return n > 0 && (size_t)n < h->wbuf_len - LWS_PRE ? (size_t)n : 0;
}

static void lowat_set(struct slot *s, int fd, int bytes)
{
        if (bytes <= 1 && !s->lowat)
                return;
        setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof(bytes));
        s->lowat = bytes > 1;
}

/* Bytes lws has read from fd so far: what the kernel received less what is still queued. */
static uint64_t rx_consumed(struct lws *wsi, int fd)
{
        int queued = 0;

        if (ioctl(fd, SIOCINQ, &queued) < 0)
                return UINT64_MAX;
        return rx_bytes(wsi) - (uint64_t)queued;
}

static void heads_release(lws_sorted_usec_list_t *sul)
{
        struct gc_httpd *h = lws_container_of(sul, struct gc_httpd, release);

        for (int i = 0; i < h->n_slots; i++) {
                struct slot *s = &h->slots[i];

                if (s->wsi && s->held && !s->refused) {
                        s->held = false;
                        lws_rx_flow_control(s->wsi, 1);
                }
        }
}

/* lws does not read s in this pass of the loop; the next pass lets it (heads_release). */
static void hold_pass(struct gc_httpd *h, struct slot *s)
{
        lws_rx_flow_control(s->wsi, 0);
        s->held = true;
        lws_sul_schedule(h->ctx, 0, &h->release, heads_release, 1);
}

/* A bad head: the JSON error, what was sent is read and dropped (so the close is no reset),
 * and the connection closes without lws reading on. */
static void head_refuse(struct gc_httpd *h, struct slot *s, int fd, int status, const char *msg)
{
        size_t n = raw_error(h, status, msg), drained = 0;
        ssize_t k;

        if (n)
                (void)!send(fd, h->wbuf + LWS_PRE, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        while (drained < (1u << 20) && (k = recv(fd, h->peek, h->peek_len, MSG_DONTWAIT)) > 0)
                drained += (size_t)k;
        lowat_set(s, fd, 1);
        s->refused = true;
        s->close_after = true;
        hold_pass(h, s);
        lws_set_timeout(s->wsi, PENDING_TIMEOUT_HTTP_KEEPALIVE_IDLE, LWS_TO_KILL_ASYNC);
}

/* New bytes on a connection: when they start its next head, look at them before lws does. */
static void head_look(struct gc_httpd *h, struct slot *s)
{
        int fd = lws_get_socket_fd(s->wsi), status;
        const char *msg = "";
        size_t len = 0;
        ssize_t n;

        if (s->busy || s->shed || s->cut || s->unchecked || s->refused || fd < 0)
                return;
        if (rx_consumed(s->wsi, fd) != s->checked) {
                s->unchecked = true; /* lws has bytes of its own: the head does not start here */
                lowat_set(s, fd, 1);
                return;
        }
        n = recv(fd, h->peek, h->peek_len, MSG_PEEK | MSG_DONTWAIT);
        if (n <= 0) {
                lowat_set(s, fd, 1); /* the end, or an error: lws finds it */
                return;
        }
        status = gc_httpd__head_check(h->peek, (size_t)n, h->peek_len - 1, &len, &msg);
        if (status == GC_HTTPD__HEAD_PASS) {
                s->checked += len;
                s->unchecked = len == 0;
                s->looks = 0;
                lowat_set(s, fd, 1);
        } else if (status == GC_HTTPD__HEAD_MORE && ++s->looks > HEAD_LOOKS) {
                s->unchecked = true;
                lowat_set(s, fd, 1);
        } else if (status == GC_HTTPD__HEAD_MORE) {
                /* The head deadline runs from its first byte. */
                if (s->looks == 1)
                        lws_set_timeout(s->wsi, PENDING_TIMEOUT_HTTP_KEEPALIVE_IDLE, h->head_sec);
                lowat_set(s, fd, (int)n + 1);
                hold_pass(h, s);
        } else {
                head_refuse(h, s, fd, status, msg);
        }
}

/* LWS_CALLBACK_RAW_RX_FILE on the epoll set. */
static void heads_ready(struct gc_httpd *h)
{
        struct epoll_event ev[64];
        int n;

        do {
                n = epoll_wait(h->epfd, ev, 64, 0);
                for (int i = 0; i < n; i++) {
                        struct slot *s = ev[i].data.ptr;

                        if (s->wsi)
                                head_look(h, s);
                }
        } while (n == 64);
}

/* The epoll set, adopted by lws as a file it polls (before any connection). */
static int heads_start(struct gc_httpd *h)
{
        lws_sock_file_fd_type u;

        h->peek = malloc(h->peek_len);
        if (!h->peek)
                return -ENOMEM;
        h->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (h->epfd < 0)
                return -errno;
        u.filefd = h->epfd;
        h->ep_wsi =
            lws_adopt_descriptor_vhost(h->vh, LWS_ADOPT_RAW_FILE_DESC, u, RAW_PROTOCOL, NULL);
        return h->ep_wsi ? 0 : -EIO;
}

/* A new plain connection joins the epoll set. */
static void heads_watch(struct gc_httpd *h, struct slot *s)
{
        struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.ptr = s};
        int fd = lws_get_socket_fd(s->wsi);

        if (h->tls || h->epfd < 0 || fd < 0 || epoll_ctl(h->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
                s->unchecked = true;
}

/* Asks for a writeable callback on every parked request (all of them, or only expired ones). */
static void parked_poke(struct gc_httpd *h, bool expired_only)
{
        lws_usec_t now = lws_now_usecs();

        for (struct conn *c = h->parked; c; c = c->park_next)
                if (!expired_only || now >= c->park_deadline_us)
                        lws_callback_on_writable(c->wsi);
}

static void on_tick(lws_sorted_usec_list_t *sul)
{
        struct gc_httpd *h = lws_container_of(sul, struct gc_httpd, tick);
        lws_usec_t now = lws_now_usecs();

        if (h->n_parked)
                parked_poke(h, true);
        shed_excess(h);
        if (h->cert && now >= h->next_tls_check_us) {
                tls_check(h);
                h->next_tls_check_us = now + (lws_usec_t)h->tls_check_sec * LWS_US_PER_SEC;
        }
        /* Also bounds how long lws_service() sleeps, so *stop is seen promptly. */
        lws_sul_schedule(h->ctx, 0, &h->tick, on_tick, TICK_US);
}

/* ---- requests -------------------------------------------------------------------------------- */

static const struct route *route_find(const struct gc_httpd *h, const char *path)
{
        const struct route *best = NULL;
        size_t n = strlen(path);

        for (size_t i = 0; i < h->n_routes; i++) {
                const struct route *r = &h->routes[i];

                if (!(r->flags & GC_HTTPD_PREFIX)) {
                        if (r->len == n && !memcmp(r->path, path, n))
                                return r;
                        continue;
                }
                if (n < r->len || memcmp(r->path, path, r->len) != 0)
                        continue;
                /* "/a" must not match "/ab". */
                if (r->path[r->len - 1] != '/' && path[r->len] != '\0' && path[r->len] != '/')
                        continue;
                if (!best || r->len > best->len)
                        best = r;
        }
        return best;
}

static bool has_ctl(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
                        return true;
        return false;
}

static void free_target(struct target *t)
{
        free(t->path);
        free(t->params);
        gc_buf_free(&t->query);
        memset(t, 0, sizeof(*t));
}

/*
 * lws 4.1 ends the target at a decoded CR or LF, or at the token limit, and skips the rest of
 * the line: a request line without its HTTP version was cut, so refuse it rather than serve
 * what was left. Checked last, so a target over the limit is still a 414.
 */
static int check_version(struct lws *wsi, const char **ret_msg)
{
        if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP) > 0)
                return 0;
        *ret_msg = "malformed request line";
        return 400;
}

/* 0, or an HTTP status (400, 414, 500) with *ret_msg saying why. */
static int read_target(const struct gc_httpd *h, struct lws *wsi, enum lws_token_indexes tok,
                       struct target *t, const char **ret_msg)
{
        int len, total, n;
        size_t off = 0;

        len = lws_hdr_total_length(wsi, tok);
        if (len <= 0) {
                *ret_msg = "missing request target";
                return 400;
        }
        /* lws stops storing a token at its limit: reaching it means the URL was cut. */
        if ((size_t)len >= h->max_url) {
                *ret_msg = "URL too long";
                return 414;
        }
        t->path = malloc((size_t)len + 1);
        if (!t->path || lws_hdr_copy(wsi, t->path, len + 1, tok) != len) {
                *ret_msg = "out of memory";
                return 500;
        }
        if (has_ctl(t->path, (size_t)len)) {
                *ret_msg = "control character in the path";
                return 400;
        }

        total = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS);
        if (total <= 0)
                return check_version(wsi, ret_msg);
        if ((size_t)total >= h->max_url) {
                *ret_msg = "URL too long";
                return 414;
        }
        /*
         * One block: the parameter array, then the parameters' text, each copied with a NUL in
         * place of the '&' that lws counts.
         */
        t->params = malloc(GC_HTTPD_MAX_PARAMS * sizeof(*t->params) + (size_t)total + 1);
        if (!t->params) {
                *ret_msg = "out of memory";
                return 500;
        }
        t->args = (char *)(t->params + GC_HTTPD_MAX_PARAMS);
        for (int i = 0;; i++) {
                char *frag = t->args + off, *eq;

                n = lws_hdr_copy_fragment(wsi, frag, total + 1 - (int)off, WSI_TOKEN_HTTP_URI_ARGS,
                                          i);
                if (n == -1)
                        break;
                if (n < 0) {
                        *ret_msg = "malformed query";
                        return 400;
                }
                off += (size_t)n + 1;
                if ((size_t)n >= h->max_url) {
                        *ret_msg = "URL too long";
                        return 414;
                }
                if (n == 0)
                        continue;
                /* lws 4.1 lets %00 and other control bytes through in parameters. */
                if (memchr(frag, '\0', (size_t)n) || has_ctl(frag, (size_t)n)) {
                        *ret_msg = "control character in a query parameter";
                        return 400;
                }
                if (t->n_params == GC_HTTPD_MAX_PARAMS) {
                        *ret_msg = "too many query parameters";
                        return 400;
                }
                eq = strchr(frag, '=');
                if (eq)
                        *eq = '\0';
                t->params[t->n_params].name = frag;
                t->params[t->n_params].value = eq ? eq + 1 : "";
                t->n_params++;
        }
        if (gc_httpd__query_encode(&t->query, t->params, t->n_params) < 0) {
                *ret_msg = "URL too long";
                return 414;
        }
        return check_version(wsi, ret_msg);
}

static bool uri_token(int tok)
{
        if (tok == WSI_TOKEN_HTTP_URI_ARGS)
                return true;
        for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
                if ((int)methods[i].tok == tok)
                        return true;
        return false;
}

/* A control character other than a tab (RFC 9110 5.5: never valid in a field value). */
static bool field_ctl(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (((unsigned char)s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f)
                        return true;
        return false;
}

/*
 * The head as a whole: 0, or 431 when it is too large, 400 for a control character in a
 * header it knows, or 400 for a body this server does not read (with the framing a request smuggler
 * uses: Content-Length beside Transfer-Encoding, or a repeated or malformed Content-Length).
 * *ret_body says a body may follow, so the connection must end after the answer.
 */
static int check_head(const struct gc_httpd *h, struct lws *wsi, const struct slot *sl,
                      const char **ret_msg, bool *ret_body)
{
        int te = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING);
        int cl = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH);
        size_t known = 0, limit = h->max_header < 65535 ? h->max_header : 65535;
        char v[24];
        uint64_t rx;

        *ret_body = te > 0 || cl > 0;
        for (int tok = 0; tok < WSI_TOKEN_COUNT; tok++) {
                int n = lws_hdr_total_length(wsi, (enum lws_token_indexes)tok);

                if (n <= 0 || uri_token(tok))
                        continue;
                /* lws stops storing a header at its limit: one that reached it was longer. */
                if ((size_t)n >= limit) {
                        *ret_msg = "request header too large";
                        return 431;
                }
                known += (size_t)n;
                if (lws_hdr_copy(wsi, h->hdr_scan, (int)h->hdr_scan_len,
                                 (enum lws_token_indexes)tok) == n &&
                    field_ctl(h->hdr_scan, (size_t)n)) {
                        *ret_msg = "control character in a header";
                        return 400;
                }
        }
        /*
         * The bytes received for this request, as sent (unknown headers included, which lws
         * stores without a limit and cannot list). Under TLS the count would include the
         * handshake and record framing: there the headers lws knows are counted instead.
         */
        rx = sl && !h->tls ? rx_bytes(wsi) : 0;
        if (known > h->max_header || (sl && !*ret_body && rx > sl->rx_base &&
                                      rx - sl->rx_base > h->max_url + h->max_header)) {
                *ret_msg = "request header fields too large";
                return 431;
        }
        if (te > 0 && cl > 0) {
                *ret_msg = "Content-Length together with Transfer-Encoding";
                return 400;
        }
        if (cl > 0) {
                int64_t n;

                if ((size_t)cl >= sizeof(v) ||
                    lws_hdr_copy(wsi, v, sizeof(v), WSI_TOKEN_HTTP_CONTENT_LENGTH) != cl ||
                    strspn(v, "0123456789") != (size_t)cl || gc_parse_int64(v, &n) < 0) {
                        *ret_msg = "invalid Content-Length (one decimal number expected)";
                        return 400;
                }
                *ret_body = n > 0;
        }
        return 0;
}

static void park_unlink(struct gc_httpd *h, struct conn *c)
{
        if (!c->parked)
                return;
        if (c->park_prev)
                c->park_prev->park_next = c->park_next;
        else
                h->parked = c->park_next;
        if (c->park_next)
                c->park_next->park_prev = c->park_prev;
        c->park_prev = c->park_next = NULL;
        c->parked = false;
        h->n_parked--;
}

static void stream_end(struct gc_httpd *h, struct conn *c)
{
        gc_httpd_stream st = c->stream;

        if (!c->streaming)
                return;
        if (c->stream_prev)
                c->stream_prev->stream_next = c->stream_next;
        else if (h)
                h->streams = c->stream_next;
        if (c->stream_next)
                c->stream_next->stream_prev = c->stream_prev;
        c->stream_prev = c->stream_next = NULL;
        memset(&c->stream, 0, sizeof(c->stream));
        c->streaming = c->stream_end = c->stream_waiting = false;
        if (st.release)
                st.release(st.ud);
}

static void stream_release(gc_httpd_stream *st)
{
        if (st->next && st->release)
                st->release(st->ud);
        memset(st, 0, sizeof(*st));
}

static void work_drop(struct gc_httpd *h, struct conn *c);

static void conn_reset(struct gc_httpd *h, struct conn *c)
{
        work_drop(h, c);
        stream_end(h, c);
        gc_buf_free(&c->body);
        c->sent = 0;
        c->active = false;
        if (h)
                park_unlink(h, c);
        free_target(&c->t);
}

static bool content_type_ok(const char *s)
{
        size_t n = s ? strlen(s) : 0;

        return n > 0 && n < 128 && !has_ctl(s, n);
}

/* Writes the headers, then either completes the transaction or queues the body. */
static int send_response(struct gc_httpd *h, struct lws *wsi, struct conn *c, bool head,
                         gc_httpd_response *res)
{
        unsigned char *start = h->wbuf + LWS_PRE, *p = start, *end = h->wbuf + h->wbuf_len - 1;
        bool no_body = res->status == 204 || res->status == 304;
        const char *hp, *he;
        struct slot *sl;

        if (res->stream.next && (head || no_body))
                stream_release(&res->stream);
        if (no_body) {
                gc_buf_reset(&res->body);
                if (lws_add_http_header_status(wsi, (unsigned)res->status, &p, end))
                        return -1;
        } else if (res->stream.next) {
                /* No length: chunked, so that a cut body is told from a whole one. */
                if (lws_add_http_common_headers(wsi, (unsigned)res->status, res->content_type,
                                                LWS_ILLEGAL_HTTP_CONTENT_LEN, &p, end) ||
                    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING,
                                                 (const unsigned char *)"chunked", 7, &p, end))
                        return -1;
        } else if (lws_add_http_common_headers(wsi, (unsigned)res->status, res->content_type,
                                               (lws_filepos_t)res->body.len, &p, end)) {
                return -1;
        }
        hp = res->headers_.data;
        he = hp ? hp + res->headers_.len : hp;
        while (hp && hp < he) {
                char name[GC_HTTPD__MAX_HDR_NAME + 2];
                const char *value = hp + strlen(hp) + 1;

                /* lws wants the name with its colon. */
                snprintf(name, sizeof(name), "%s:", hp);
                if (lws_add_http_header_by_name(wsi, (const unsigned char *)name,
                                                (const unsigned char *)value, (int)strlen(value),
                                                &p, end))
                        return -1;
                hp = value + strlen(value) + 1;
        }
        sl = slot_of(wsi);
        if (sl && sl->close_after &&
            lws_add_http_header_by_token(wsi, WSI_TOKEN_CONNECTION, (const unsigned char *)"close",
                                         5, &p, end))
                return -1;
        if (lws_finalize_write_http_header(wsi, start, &p, end))
                return -1;
        if (res->stream.next) {
                c->stream = res->stream;
                memset(&res->stream, 0, sizeof(res->stream));
                c->streaming = true;
                c->wsi = wsi;
                c->stream_prev = NULL;
                c->stream_next = h->streams;
                if (h->streams)
                        h->streams->stream_prev = c;
                h->streams = c;
                gc_buf_init(&c->body, h->max_response);
                c->sent = 0;
                c->active = true;
                lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, h->idle_sec);
                lws_callback_on_writable(wsi);
                return 0;
        }
        /*
         * A body of one piece is written at once (lws keeps what the socket does not take and
         * completes the transaction after it), so the transaction ends before lws reads on: a
         * pipelined request behind a small answer is then served, not cut (docs/httpd.md), and
         * an error that ends the connection is sent before lws reads a body it would discard.
         */
        if (!head && res->body.len && res->body.len <= CHUNK_BYTES) {
                memcpy(h->wbuf + LWS_PRE, res->body.data, res->body.len);
                if (lws_write(wsi, h->wbuf + LWS_PRE, res->body.len, LWS_WRITE_HTTP_FINAL) !=
                    (int)res->body.len)
                        return -1;
                if (sl && sl->close_after)
                        return -1;
                slot_done(wsi);
                return lws_http_transaction_completed(wsi) ? -1 : 0;
        }
        if (head || res->body.len == 0) {
                if (sl && sl->close_after)
                        return -1;
                slot_done(wsi);
                return lws_http_transaction_completed(wsi) ? -1 : 0;
        }

        c->body = res->body;
        gc_buf_init(&res->body, 0);
        c->sent = 0;
        c->active = true;
        /* A client that stops reading must not hold the connection. */
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, h->idle_sec);
        lws_callback_on_writable(wsi);
        return 0;
}

static void free_header_cache(struct gc_httpd__req *priv)
{
        /* Copies of Authorization among them: leave no bearer token in freed memory. */
        for (size_t i = 0; i < priv->n_hdr; i++) {
                explicit_bzero(priv->hdr_vals[i], strlen(priv->hdr_vals[i]));
                free(priv->hdr_vals[i]);
                free(priv->hdr_names[i]);
        }
        priv->n_hdr = 0;
}

static void work_free(struct work *w)
{
        if (!w)
                return;
        free_header_cache(&w->j.priv);
        free_target(&w->t);
        stream_release(&w->j.res.stream);
        gc_buf_free(&w->j.res.body);
        gc_buf_free(&w->j.res.headers_);
        free(w);
}

/* The connection no longer waits for its deferred answer: the pool hands it back to be freed. */
static void work_drop(struct gc_httpd *h, struct conn *c)
{
        struct work *w = c->work;

        if (!w)
                return;
        c->work = NULL;
        if (h)
                gc_httpd__pool_orphan(&h->pool, &w->j);
}

static int on_work_done(struct gc_httpd *h, struct lws *wsi, struct conn *c);

/* On a worker, after each job: the serving thread collects it (LWS_CALLBACK_EVENT_WAIT_CANCELLED).
 */
static void work_done(void *ud)
{
        struct gc_httpd *h = ud;

        atomic_store(&h->work_done, true);
        lws_cancel_service(h->ctx);
}

/*
 * On the serving thread: finished answers are sent at once (headers and a first piece, as from
 * LWS_CALLBACK_HTTP); orphans are freed. Sent here rather than from a writeable callback because
 * the connection's reading is held (defer()) and lws 4.1 delivers neither while it is.
 */
static void work_collect(struct gc_httpd *h)
{
        struct gc_httpd__job *j = gc_httpd__pool_take_done(&h->pool), *next;

        for (; j; j = next) {
                struct work *w = lws_container_of(j, struct work, j);
                struct lws *wsi = w->wsi; /* on_work_done frees w */
                struct conn *c;

                next = j->next;
                /* An orphan's connection may be gone: its wsi is not looked at. */
                c = j->orphan ? NULL : lws_wsi_user(wsi);
                if (!c || c->work != w) {
                        work_free(w);
                        continue;
                }
                lws_rx_flow_control(wsi, 1);
                /* < 0: the connection closes after the answer (Connection: close, HTTP/1.0). */
                if (on_work_done(h, wsi, c) < 0)
                        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, LWS_TO_KILL_ASYNC);
        }
}

/*
 * Hands the request to a worker, taking t, the headers looked up so far and res; -EBUSY (all
 * given back) when max_queued wait already.
 */
static int defer(struct gc_httpd *h, struct lws *wsi, struct conn *c, struct target *t, size_t mi,
                 struct gc_httpd__req *priv, gc_httpd_response *res)
{
        struct work *w = calloc(1, sizeof(*w));

        if (!w)
                return -ENOMEM;
        w->j.fn = res->defer_.fn;
        w->j.ud = res->defer_.ud;
        memset(&res->defer_, 0, sizeof(res->defer_));
        w->t = *t;
        w->j.priv = *priv;
        w->j.priv.wsi = NULL; /* the worker must not touch lws */
        w->j.res = *res;
        w->mi = mi;
        w->wsi = wsi;
        w->j.req = (gc_httpd_request){
            .method = methods[mi].name,
            .head = methods[mi].tok == WSI_TOKEN_HEAD_URI,
            .path = w->t.path,
            .params = w->t.params,
            .n_params = w->t.n_params,
            .query = w->t.query.data ? w->t.query.data : "",
            .internal_ = &w->j.priv,
        };
        if (gc_httpd__pool_submit(&h->pool, &w->j) < 0) {
                *res = w->j.res;
                free(w);
                return -EBUSY;
        }
        memset(t, 0, sizeof(*t));
        priv->n_hdr = 0;
        gc_buf_init(&res->body, 0);
        gc_buf_init(&res->headers_, 0);
        memset(&res->stream, 0, sizeof(res->stream));
        c->work = w;
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, WORK_BACKSTOP_SEC);
        /*
         * lws 4.1 would read a pipelined request behind this one meanwhile, end this transaction
         * and hand that one over; held until the answer is written, it is served after it.
         */
        lws_rx_flow_control(wsi, 0);
        return 0;
}

/*
 * Parks the request in c (taking t) until deadline_us (0: park_timeout_sec from now); false
 * when max_parked are parked already.
 */
static bool park(struct gc_httpd *h, struct lws *wsi, struct conn *c, struct target *t, size_t mi,
                 const struct route *rt, lws_usec_t deadline_us)
{
        lws_usec_t now = lws_now_usecs();

        if (h->n_parked >= h->max_parked)
                return false;
        c->t = *t;
        memset(t, 0, sizeof(*t));
        c->mi = mi;
        c->rt = rt;
        c->wsi = wsi;
        c->parked = true;
        c->park_prev = NULL;
        c->park_next = h->parked;
        if (h->parked)
                h->parked->park_prev = c;
        h->parked = c;
        h->n_parked++;
        c->park_deadline_us =
            deadline_us ? deadline_us : now + (lws_usec_t)h->park_sec * LWS_US_PER_SEC;
        /* A backstop behind the 504 sent at the deadline. */
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT,
                        (int)((c->park_deadline_us - now) / LWS_US_PER_SEC) + 5);
        return true;
}

/*
 * Sends what a handler (or a worker) answered with result r, or a 500 when it failed or made no
 * valid answer. The caller frees res' buffers.
 */
static int answer(struct gc_httpd *h, struct lws *wsi, struct conn *c, bool head, int r,
                  gc_httpd_response *res)
{
        /* A worker cannot defer again. */
        if (r == 0 && res->defer_.fn)
                r = -EINVAL;
        memset(&res->defer_, 0, sizeof(res->defer_));
        /* A failed answer keeps none of what the handler (or guard) set. */
        if (r < 0 || res->status < 200 || res->status > 599 || !content_type_ok(res->content_type))
                stream_release(&res->stream);
        if (r < 0) {
                gc_buf_reset(&res->headers_);
                gc_httpd_error(res, 500, r == -E2BIG ? "response too large" : "internal error");
        } else if (res->status < 200 || res->status > 599 || !content_type_ok(res->content_type)) {
                gc_buf_reset(&res->headers_);
                gc_httpd_error(res, 500, "internal error: invalid response");
        }
        r = send_response(h, wsi, c, head, res);
        stream_release(&res->stream); /* when send_response failed before taking it */
        return r;
}

/*
 * The guard, then the handler, then the answer, for a request whose target, route and method
 * are known. t is consumed, or taken by c when the request is parked (until deadline_us, 0 for
 * a first run).
 */
static int serve(struct gc_httpd *h, struct lws *wsi, struct conn *c, struct target *t, size_t mi,
                 const struct route *rt, lws_usec_t deadline_us)
{
        struct gc_httpd__req priv = {.wsi = wsi};
        gc_httpd_request req = {.query = "", .internal_ = &priv};
        gc_httpd_response res = {.status = 200, .content_type = "application/json"};
        int r = GC_HTTPD_ALLOW;

        gc_buf_init(&res.body, h->max_response);
        gc_buf_init(&res.headers_, GC_HTTPD__MAX_EXTRA_HEADERS);
        req.method = methods[mi].name;
        req.head = methods[mi].tok == WSI_TOKEN_HEAD_URI;
        req.path = t->path;
        req.params = t->params;
        req.n_params = t->n_params;
        if (t->query.data)
                req.query = t->query.data;

        if (h->guard && !(rt->flags & GC_HTTPD_OPEN)) {
                r = h->guard(h->guard_ud, &req, &res);
                if (r == GC_HTTPD_PENDING) {
                        free_header_cache(&priv);
                        gc_buf_free(&res.body);
                        gc_buf_free(&res.headers_);
                        if (park(h, wsi, c, t, mi, rt, deadline_us))
                                return 0;
                        gc_buf_init(&res.body, h->max_response);
                        gc_buf_init(&res.headers_, GC_HTTPD__MAX_EXTRA_HEADERS);
                        gc_httpd_error(&res, 503, "too many requests waiting for authorization");
                        gc_httpd_add_header(&res, "Retry-After", "1");
                        goto send;
                }
                /* A denial must say so: never a 2xx or 3xx without the handler. */
                if ((r != GC_HTTPD_ALLOW && r != GC_HTTPD_DENY && r >= 0) ||
                    (r == GC_HTTPD_DENY && res.status < 400))
                        r = -EINVAL;
        }
        if (r == GC_HTTPD_ALLOW)
                r = rt->fn(rt->ud, &req, &res);
        if (r == 0 && res.defer_.fn) {
                r = defer(h, wsi, c, t, mi, &priv, &res);
                if (r == 0)
                        return 0; /* answered when the worker is done (on_work_done) */
                if (r == -EBUSY) {
                        stream_release(&res.stream);
                        gc_buf_reset(&res.headers_);
                        gc_httpd_error(&res, 503, "too many requests being computed");
                        gc_httpd_add_header(&res, "Retry-After", "1");
                        r = 0;
                }
        }
send:
        r = answer(h, wsi, c, req.head, r, &res);
        free_header_cache(&priv);
        free_target(t);
        gc_buf_free(&res.body);
        gc_buf_free(&res.headers_);
        return r;
}

/* A deferred answer is back from its worker: send it (work_collect). */
static int on_work_done(struct gc_httpd *h, struct lws *wsi, struct conn *c)
{
        struct work *w = c->work;
        int r;

        c->work = NULL;
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
        r = answer(h, wsi, c, w->j.req.head, w->j.r, &w->j.res);
        work_free(w);
        return r;
}

/* An answer the server makes itself (404, 414, 503, ...), with a JSON body. */
static int send_error(struct gc_httpd *h, struct lws *wsi, struct conn *c, bool head, int status,
                      const char *msg, const char *allow)
{
        gc_httpd_response res = {.status = 200, .content_type = "application/json"};
        int r;

        gc_buf_init(&res.body, h->max_response);
        gc_buf_init(&res.headers_, GC_HTTPD__MAX_EXTRA_HEADERS);
        gc_httpd_error(&res, status, msg);
        if (allow)
                gc_httpd_add_header(&res, "Allow", allow);
        if (status == 503)
                gc_httpd_add_header(&res, "Retry-After", "1");
        r = send_response(h, wsi, c, head, &res);
        gc_buf_free(&res.body);
        gc_buf_free(&res.headers_);
        return r;
}

static int on_request(struct gc_httpd *h, struct lws *wsi, struct conn *c)
{
        struct slot *sl = slot_of(wsi);
        struct target t = {0};
        const struct route *rt;
        const char *msg = NULL, *hmsg = NULL;
        bool head = false, body = false;
        size_t mi;
        int status, hstatus, r;

        /* The connection of a cut transaction (see the callback): hang up. */
        if (c->active || c->parked || c->work || !sl || sl->cut || sl->shed)
                return -1;
        sl->busy = true;
        conn_reset(h, c);
        /* Percent-encoding at most triples a byte. */
        gc_buf_init(&t.query, 3 * (size_t)lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS) + 1);

        for (mi = 0; mi < sizeof(methods) / sizeof(methods[0]); mi++)
                if (lws_hdr_total_length(wsi, methods[mi].tok) > 0)
                        break;
        if (mi == sizeof(methods) / sizeof(methods[0])) {
                r = send_error(h, wsi, c, false, 400, "unsupported request", NULL);
                goto out;
        }
        head = methods[mi].tok == WSI_TOKEN_HEAD_URI;
        status = read_target(h, wsi, methods[mi].tok, &t, &msg);
        hstatus = check_head(h, wsi, sl, &hmsg, &body);
        /* A URL too long explains the rest; otherwise the head's size and framing come first. */
        if (hstatus && status != 414) {
                status = hstatus;
                msg = hmsg;
        }
        /* A bad head, or a body this server does not read: answer, then hang up. */
        if (status || body)
                sl->close_after = true;
        if (status) {
                r = send_error(h, wsi, c, head, status, msg, NULL);
                goto out;
        }
        rt = route_find(h, t.path);
        if (!rt) {
                r = send_error(h, wsi, c, head, 404, "not found", NULL);
                goto out;
        }
        if (methods[mi].tok != WSI_TOKEN_GET_URI && !head) {
                r = send_error(h, wsi, c, head, 405, "method not allowed", "GET, HEAD");
                goto out;
        }
        if (body) {
                r = send_error(h, wsi, c, head, 400, "a request body is not accepted", NULL);
                goto out;
        }
        return serve(h, wsi, c, &t, mi, rt, 0);
out:
        free_target(&t);
        return r;
}

/* A parked request's turn: run it again, or answer 504 once its time is up. */
static int on_parked_writeable(struct gc_httpd *h, struct lws *wsi, struct conn *c)
{
        struct target t = c->t;
        size_t mi = c->mi;
        const struct route *rt = c->rt;
        lws_usec_t deadline_us = c->park_deadline_us;

        memset(&c->t, 0, sizeof(c->t));
        park_unlink(h, c);
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
        if (lws_now_usecs() >= deadline_us) {
                free_target(&t);
                return send_error(h, wsi, c, methods[mi].tok == WSI_TOKEN_HEAD_URI, 504,
                                  "authorization timed out", NULL);
        }
        return serve(h, wsi, c, &t, mi, rt, deadline_us);
}

/* The end of a response on a connection that stays open (or closes when it must). */
static int transaction_done(struct gc_httpd *h, struct lws *wsi, struct conn *c)
{
        conn_reset(h, c);
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
        if (slot_of(wsi) && slot_of(wsi)->close_after)
                return -1;
        slot_done(wsi);
        return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/*
 * One chunk of a streamed body: what is left of the piece in hand, else the next piece asked
 * of the producer, framed "<hex>\r\n<bytes>\r\n"; the last chunk "0\r\n\r\n" after its end.
 */
static int on_stream_writeable(struct gc_httpd *h, struct lws *wsi, struct conn *c)
{
        static const unsigned char last_chunk[] = {'0', '\r', '\n', '\r', '\n'},
                                   crlf[] = {'\r', '\n'};
        unsigned char *b = h->wbuf + LWS_PRE;
        size_t n, k;
        int r;

        c->stream_waiting = false;
        if (c->sent == c->body.len && !c->stream_end) {
                gc_buf_reset(&c->body);
                c->sent = 0;
                r = c->stream.next(c->stream.ud, &c->body);
                if (r == -EAGAIN && c->body.len == 0) {
                        c->stream_waiting = true; /* gc_httpd_wake() asks again */
                        return 0;
                }
                if (r < 0 && r != -EAGAIN)
                        return -1; /* cut: no last chunk, the client sees the body is not whole */
                c->stream_end = r == 0;
        }
        n = c->body.len - c->sent;
        if (n == 0 && c->stream_end) {
                memcpy(b, last_chunk, sizeof(last_chunk));
                if (lws_write(wsi, b, sizeof(last_chunk), LWS_WRITE_HTTP_FINAL) !=
                    (int)sizeof(last_chunk))
                        return -1;
                return transaction_done(h, wsi, c);
        }
        if (n > CHUNK_BYTES)
                n = CHUNK_BYTES;
        k = (size_t)snprintf((char *)b, 16, "%zx\r\n", n);
        memcpy(b + k, c->body.data + c->sent, n);
        memcpy(b + k + n, crlf, sizeof(crlf));
        if (lws_write(wsi, b, k + n + 2, LWS_WRITE_HTTP) != (int)(k + n + 2))
                return -1;
        c->sent += n;
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, h->idle_sec);
        lws_callback_on_writable(wsi);
        return 0;
}

static int on_writeable(struct gc_httpd *h, struct lws *wsi, struct conn *c)
{
        size_t n;
        bool last;

        if (c->parked)
                return on_parked_writeable(h, wsi, c);
        if (c->work)
                return 0; /* sent when the worker is done (work_collect) */
        if (!c->active)
                return 0;
        if (c->streaming)
                return on_stream_writeable(h, wsi, c);
        n = c->body.len - c->sent;
        if (n > CHUNK_BYTES)
                n = CHUNK_BYTES;
        last = c->sent + n == c->body.len;
        memcpy(h->wbuf + LWS_PRE, c->body.data + c->sent, n);
        /* lws keeps what the socket did not take and sends it before the next writeable. */
        if (lws_write(wsi, h->wbuf + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) !=
            (int)n)
                return -1;
        c->sent += n;
        if (!last) {
                lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, h->idle_sec);
                lws_callback_on_writable(wsi);
                return 0;
        }
        return transaction_done(h, wsi, c);
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
        struct lws_context *ctx = lws_get_context(wsi);
        struct gc_httpd *h = ctx ? lws_context_user(ctx) : NULL;
        struct conn *c = user;

        (void)in;
        (void)len;
        switch (reason) {
        case LWS_CALLBACK_HTTP:
                return h && c ? on_request(h, wsi, c) : -1;
        case LWS_CALLBACK_HTTP_WRITEABLE:
                return h && c ? on_writeable(h, wsi, c) : -1;
        case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
                /*
                 * lws 4.1 ends a transaction on its own when a pipelined request follows in
                 * the same read, even while the previous answer's body is still to be written
                 * or the request is parked or computed, and then hands over the next request:
                 * answering it would put a response where the client expects the previous body.
                 * Mark the connection and hang up at that next request; a pipelining client retries
                 * what was not answered (RFC 9112 9.3.2).
                 */
                if (c && (c->active || c->parked || c->work) && slot_of(wsi))
                        slot_of(wsi)->cut = true;
                if (c)
                        conn_reset(h, c);
                return 0;
        case LWS_CALLBACK_CLOSED_HTTP:
                if (c)
                        conn_reset(h, c);
                return 0;
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
                /* gc_httpd_wake(), gc_httpd_stop() or a worker from another thread. */
                if (h && atomic_exchange(&h->work_done, false))
                        work_collect(h);
                if (h && atomic_exchange(&h->wake_req, false)) {
                        parked_poke(h, false);
                        for (struct conn *s = h->streams; s; s = s->stream_next)
                                if (s->stream_waiting)
                                        lws_callback_on_writable(s->wsi);
                }
                return 0;
        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
                return h ? admit(h, (int)(intptr_t)in) : 1;
        case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
                return h ? slot_take(h, wsi) : -1;
        case LWS_CALLBACK_WSI_DESTROY:
                if (h)
                        slot_release(h, wsi);
                return 0;
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
                /* No websocket or h2c upgrades: hang up. */
                return -1;
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
                return 1;
        default:
                return 0;
        }
}

/*
 * lws hands a connection whose first line is no HTTP request (an unknown method, TLS on the
 * plain port, a stray protocol) to this raw protocol instead of answering 403 itself: the
 * answer is a 400 with the usual JSON error, and the connection ends.
 */
static int raw_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                        size_t len)
{
        struct lws_context *ctx = lws_get_context(wsi);
        struct gc_httpd *h = ctx ? lws_context_user(ctx) : NULL;
        size_t n;

        (void)user;
        (void)in;
        (void)len;
        if (h && reason == LWS_CALLBACK_RAW_RX_FILE && wsi == h->ep_wsi) {
                heads_ready(h);
                return 0;
        }
        if (reason != LWS_CALLBACK_RAW_RX || !h)
                return 0;
        n = raw_error(h, 400, "not an HTTP/1.1 request");
        if (n)
                lws_write(wsi, h->wbuf + LWS_PRE, n, LWS_WRITE_RAW);
        return -1;
}

/* ---- handler helpers that need lws ------------------------------------------------------- */

const char *gc_httpd_header(const gc_httpd_request *req, const char *name)
{
        struct gc_httpd__req *priv;
        char lname[GC_HTTPD__MAX_HDR_NAME + 2];
        char *v = NULL;
        size_t n;
        int len = -1, tok;

        if (!req || !req->internal_ || !gc_httpd__header_name_ok(name))
                return NULL;
        priv = req->internal_;
        /* lws stores header names lower-case with their colon. */
        n = strlen(name);
        for (size_t i = 0; i < n; i++)
                lname[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
        lname[n] = ':';
        lname[n + 1] = '\0';
        /* Looked up already: the only way on a worker, which must not touch lws. */
        for (size_t i = 0; i < priv->n_hdr; i++)
                if (!strcmp(priv->hdr_names[i], lname))
                        return priv->hdr_vals[i];
        if (!priv->wsi || priv->n_hdr == GC_HTTPD__MAX_HDR_LOOKUPS)
                return NULL;

        for (tok = 0; tok < WSI_TOKEN_COUNT; tok++) {
                const char *s = (const char *)lws_token_to_string((enum lws_token_indexes)tok);

                if (s && !strcmp(s, lname))
                        break;
        }
        if (tok < WSI_TOKEN_COUNT) {
                len = lws_hdr_total_length(priv->wsi, (enum lws_token_indexes)tok);
                if (len <= 0)
                        return NULL;
                v = malloc((size_t)len + 1);
                if (!v || lws_hdr_copy(priv->wsi, v, len + 1, (enum lws_token_indexes)tok) < 0)
                        goto fail;
        } else {
#if defined(LWS_WITH_CUSTOM_HEADERS)
                len = lws_hdr_custom_length(priv->wsi, lname, (int)n + 1);
                if (len < 0)
                        return NULL;
                v = malloc((size_t)len + 1);
                if (!v || lws_hdr_custom_copy(priv->wsi, v, len + 1, lname, (int)n + 1) < 0)
                        goto fail;
#else
                return NULL;
#endif
        }
        priv->hdr_names[priv->n_hdr] = strdup(lname);
        if (!priv->hdr_names[priv->n_hdr]) {
                explicit_bzero(v, (size_t)len);
                goto fail;
        }
        priv->hdr_vals[priv->n_hdr++] = v;
        return v;
fail:
        free(v);
        return NULL;
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

/* The requests that wait: parked by the guard, deferred to a worker (take_opts). */
static int take_waiting_opts(struct gc_httpd *h, const gc_httpd_opts *o, char *err, size_t errlen)
{
        h->max_parked = o->max_parked                                ? o->max_parked
                        : h->max_conns < GC_HTTPD_DEFAULT_MAX_PARKED ? h->max_conns
                                                                     : GC_HTTPD_DEFAULT_MAX_PARKED;
        h->park_sec = o->park_timeout_sec ? o->park_timeout_sec : GC_HTTPD_DEFAULT_PARK_TIMEOUT_SEC;
        h->n_workers = o->workers ? o->workers : GC_HTTPD_DEFAULT_WORKERS;
        h->max_queued = o->max_queued                                ? o->max_queued
                        : h->max_conns < GC_HTTPD_DEFAULT_MAX_QUEUED ? h->max_conns
                                                                     : GC_HTTPD_DEFAULT_MAX_QUEUED;
        if (h->max_parked < 1 || h->max_parked > h->max_conns) {
                gc_errf(err, errlen, "max_parked: %d is not in 1..max_connections (%d)",
                        h->max_parked, h->max_conns);
                return -EINVAL;
        }
        if (h->park_sec < 1 || h->park_sec > 300) {
                gc_errf(err, errlen, "park_timeout_sec: %d is not in 1..300", h->park_sec);
                return -EINVAL;
        }
        if (h->n_workers < 1 || h->n_workers > 64) {
                gc_errf(err, errlen, "workers: %d is not in 1..64", h->n_workers);
                return -EINVAL;
        }
        if (h->max_queued < 1 || h->max_queued > h->max_conns) {
                gc_errf(err, errlen, "max_queued: %d is not in 1..max_connections (%d)",
                        h->max_queued, h->max_conns);
                return -EINVAL;
        }
        return 0;
}

/* Copies o's settings into h, with defaults; 0 or -EINVAL with err naming the field. */
static int take_opts(struct gc_httpd *h, const gc_httpd_opts *o, int *ret_family, char *err,
                     size_t errlen)
{
        struct rlimit rl;

        h->max_conns = o->max_connections ? o->max_connections : GC_HTTPD_DEFAULT_MAX_CONNECTIONS;
        h->max_url = o->max_url_bytes ? o->max_url_bytes : GC_HTTPD_DEFAULT_MAX_URL_BYTES;
        h->max_header =
            o->max_header_bytes ? o->max_header_bytes : GC_HTTPD_DEFAULT_MAX_HEADER_BYTES;
        h->idle_sec = o->idle_timeout_sec ? o->idle_timeout_sec : GC_HTTPD_DEFAULT_IDLE_TIMEOUT_SEC;
        h->head_sec = o->header_timeout_sec ? o->header_timeout_sec : h->idle_sec;
        h->max_per_addr = o->max_per_address ? o->max_per_address
                          : h->max_conns < GC_HTTPD_DEFAULT_MAX_PER_ADDRESS
                              ? h->max_conns
                              : GC_HTTPD_DEFAULT_MAX_PER_ADDRESS;
        h->max_response =
            o->max_response_bytes ? o->max_response_bytes : GC_HTTPD_DEFAULT_MAX_RESPONSE_BYTES;
        h->tls_check_sec = o->tls_check_sec ? o->tls_check_sec : GC_HTTPD_DEFAULT_TLS_CHECK_SEC;
        h->log = o->log;
        h->log_ud = o->log_ud;

        if (gc_httpd__parse_listen(o->listen, h->host, sizeof(h->host), &h->port, ret_family) < 0) {
                gc_errf(err, errlen, "listen: \"%.64s\" is not IPV4:PORT or [IPV6]:PORT",
                        o->listen ? o->listen : "");
                return -EINVAL;
        }
        if (h->max_conns < 1 || h->max_conns > 10000) {
                gc_errf(err, errlen, "max_connections: %d is not in 1..10000", h->max_conns);
                return -EINVAL;
        }
        if (h->max_per_addr < 1 || h->max_per_addr > h->max_conns) {
                gc_errf(err, errlen, "max_per_address: %d is not in 1..max_connections (%d)",
                        h->max_per_addr, h->max_conns);
                return -EINVAL;
        }
        /* Past the descriptor limit accept() fails and lws stops listening for a while. */
        h->n_accept = h->max_conns + SHED_SLOTS(h->max_conns);
        h->n_slots = h->n_accept + LWS_OWN_FDS + 8;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            (rlim_t)h->n_accept + FDS_RESERVED > rl.rlim_cur) {
                gc_errf(err, errlen,
                        "max_connections: %d needs %d descriptors, more than the %llu the process "
                        "may open (ulimit -n)",
                        h->max_conns, h->n_accept + FDS_RESERVED, (unsigned long long)rl.rlim_cur);
                return -EINVAL;
        }
        /* lws's token limit is 16-bit; the URL needs room for "/" and a NUL. */
        if (h->max_url < 16 || h->max_url > 60000) {
                gc_errf(err, errlen, "max_url_bytes: %zu is not in 16..60000", h->max_url);
                return -EINVAL;
        }
        if (h->max_header < 256 || h->max_header > (1u << 20)) {
                gc_errf(err, errlen, "max_header_bytes: %zu is not in 256..1048576", h->max_header);
                return -EINVAL;
        }
        if (h->idle_sec < 1 || h->idle_sec > 3600) {
                gc_errf(err, errlen, "idle_timeout_sec: %d is not in 1..3600", h->idle_sec);
                return -EINVAL;
        }
        if (h->head_sec < 1 || h->head_sec > 3600) {
                gc_errf(err, errlen, "header_timeout_sec: %d is not in 1..3600", h->head_sec);
                return -EINVAL;
        }
        /* Room for the server's own JSON errors. */
        if (h->max_response < 1024 || h->max_response > (1u << 30)) {
                gc_errf(err, errlen, "max_response_bytes: %zu is not in 1024..1073741824",
                        h->max_response);
                return -EINVAL;
        }
        if (h->tls_check_sec < 1 || h->tls_check_sec > 86400) {
                gc_errf(err, errlen, "tls_check_sec: %d is not in 1..86400", h->tls_check_sec);
                return -EINVAL;
        }
        if (take_waiting_opts(h, o, err, errlen) < 0)
                return -EINVAL;
        if (!o->tls_cert_file != !o->tls_key_file) {
                gc_errf(err, errlen, "%s: set both tls_cert_file and tls_key_file, or neither",
                        o->tls_cert_file ? "tls_key_file" : "tls_cert_file");
                return -EINVAL;
        }
        return 0;
}

/* The libwebsockets context: no listener of its own, one header table per connection. */
static struct lws_context *make_context(struct gc_httpd *h)
{
        struct lws_context_creation_info ci;

        memset(&ci, 0, sizeof(ci));
        ci.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
        if (h->cert)
                ci.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        ci.port = CONTEXT_PORT_NO_LISTEN;
        ci.gid = -1;
        ci.uid = -1;
        ci.user = h;
        ci.server_string = "gpu-cost";
        ci.token_limits = &h->token_limits;
        /*
         * One header table per connection reading a request holds the request line and every
         * header, allocated while it does. Larger than the limits, so that a head over them is
         * read whole and answered 414 or 431; a head over the table is closed unanswered. As
         * many tables as connections: a client waiting for a table was the 5 s stall behind 64
         * slow clients (docs/httpd.md).
         */
        ci.max_http_header_data2 = (unsigned)(h->peek_len - 1);
        ci.max_http_header_pool2 = (unsigned)h->n_slots;
        ci.fd_limit_per_thread = (unsigned)(h->n_accept + LWS_OWN_FDS);
        ci.pt_serv_buf_size = SERVICE_BUF_SIZE;
        /*
         * lws' own timer for a TLS handshake, and then for the request head after it (and for
         * a closing connection's last bytes), otherwise 5 s whatever the options say. Under TLS
         * the handshake must finish within head_sec of the accept (the header table's timer
         * from the vhost, whichever lws armed last) and the head within head_sec of the
         * handshake (docs/httpd.md, Limits).
         */
        ci.timeout_secs = (unsigned)h->head_sec;
        return lws_create_context(&ci);
}

/* The listening vhost on h->host:h->port (TLS when a certificate is loaded). */
static struct lws_vhost *make_vhost(struct gc_httpd *h, int family)
{
        struct lws_context_creation_info vi;

        memset(&vi, 0, sizeof(vi));
        vi.vhost_name = "default";
        vi.port = h->port;
        vi.iface = h->host[0] ? h->host : NULL;
        vi.protocols = h->protocols;
        vi.mounts = &h->mount;
        vi.user = h;
        vi.options = LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
        if (family == AF_INET)
                vi.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
        else if (h->host[0])
                vi.options |=
                    LWS_SERVER_OPTION_IPV6_V6ONLY_MODIFY | LWS_SERVER_OPTION_IPV6_V6ONLY_VALUE;
        vi.keepalive_timeout = h->idle_sec;
        vi.timeout_secs = (unsigned)h->idle_sec;
        vi.timeout_secs_ah_idle = (unsigned)h->head_sec;
        /* A first line that is no HTTP request goes to raw_callback (a 400), not lws' 403. */
        vi.options |= LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG;
        vi.listen_accept_role = "raw-skt";
        vi.listen_accept_protocol = RAW_PROTOCOL;
        if (h->cert) {
                vi.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
                vi.ssl_cert_filepath = h->cert;
                vi.ssl_private_key_filepath = h->key;
                vi.ssl_options_set =
                    SSL_OP_NO_SSLv3 | SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1 | SSL_OP_NO_COMPRESSION;
                /* HTTP/1.1 only: the limits and timeouts here are per connection. */
                vi.alpn = "http/1.1";
        }
        return lws_create_vhost(h->ctx, &vi);
}

/* --tls-cert-file and --tls-key-file: kept by name (they are reloaded when they change), and
 * checked to be a matching pair now. */
static int take_tls(struct gc_httpd *h, const gc_httpd_opts *o, char *err, size_t errlen)
{
        char msg[512];

        h->cert = strdup(o->tls_cert_file);
        h->key = strdup(o->tls_key_file);
        if (!h->cert || !h->key) {
                gc_errf(err, errlen, "out of memory");
                return -1;
        }
        h->cert_loaded = file_stamp(h->cert);
        h->key_loaded = file_stamp(h->key);
        if (tls_pair_check(h->cert, h->key, msg, sizeof(msg)) < 0) {
                gc_errf(err, errlen, "%s", msg);
                return -1;
        }
        return 0;
}

gc_httpd *gc_httpd_new(const gc_httpd_opts *o, char *err, size_t errlen)
{
        struct gc_httpd *h;
        int family;

        if (!o) {
                gc_errf(err, errlen, "opts: missing");
                return NULL;
        }
        h = calloc(1, sizeof(*h));
        if (!h) {
                gc_errf(err, errlen, "out of memory");
                return NULL;
        }
        h->epfd = -1;
        if (take_opts(h, o, &family, err, errlen) < 0)
                goto fail;
        if (o->tls_cert_file && take_tls(h, o, err, errlen) < 0)
                goto fail;
        h->wbuf_len = LWS_PRE + CHUNK_BYTES + HDR_BYTES + 2 * GC_HTTPD__MAX_EXTRA_HEADERS;
        h->wbuf = malloc(h->wbuf_len);
        /* More slots than lws accepts connections (it counts its descriptors its own way). */
        h->slots = calloc((size_t)h->n_slots, sizeof(*h->slots));
        h->hdr_scan_len = (h->max_header < 65535 ? h->max_header : 65535) + 1;
        h->hdr_scan = malloc(h->hdr_scan_len);
        h->peek_len = (h->max_url + h->max_header + 4096 > GC_HTTPD_HEAD_TABLE_BYTES
                           ? h->max_url + h->max_header + 4096
                           : GC_HTTPD_HEAD_TABLE_BYTES) +
                      1;
        if (!h->wbuf || !h->slots || !h->hdr_scan) {
                gc_errf(err, errlen, "out of memory");
                goto fail;
        }

        pthread_mutex_lock(&lws_log_mu);
        if (h->log)
                lws_log_owner = h;
        pthread_mutex_unlock(&lws_log_mu);
        lws_set_log_level(LLL_ERR | LLL_WARN, lws_emit);

        h->protocols[0] = (struct lws_protocols){
            .name = PROTOCOL,
            .callback = callback,
            .per_session_data_size = sizeof(struct conn),
        };
        h->protocols[1] = (struct lws_protocols){
            .name = RAW_PROTOCOL,
            .callback = raw_callback,
        };
        for (int i = h->n_slots - 1; i >= 0; i--) {
                h->slots[i].next_free = h->free_slots;
                h->free_slots = &h->slots[i];
        }
        h->tls = h->cert != NULL;
        h->mount = (struct lws_http_mount){
            .mountpoint = "/",
            .mountpoint_len = 1,
            .origin = PROTOCOL,
            .origin_protocol = LWSMPRO_CALLBACK,
        };
        /* lws stops storing a header at its limit, so no single header fills the table. */
        for (int i = 0; i < WSI_TOKEN_COUNT; i++)
                h->token_limits.token_limit[i] =
                    (unsigned short)(uri_token(i)            ? h->max_url
                                     : h->max_header < 65535 ? h->max_header
                                                             : 65535);

        h->ctx = make_context(h);
        if (!h->ctx) {
                gc_errf(err, errlen, "listen: cannot start the server (libwebsockets context)");
                goto fail;
        }

        h->vh = make_vhost(h, family);
        if (!h->vh) {
                gc_errf(err, errlen, "listen: cannot listen on %s (in use or not a local address)",
                        o->listen);
                goto fail;
        }
        h->port = lws_get_vhost_listen_port(h->vh);
        if (!h->tls && heads_start(h) < 0) {
                gc_errf(err, errlen, "listen: cannot watch request heads (epoll)");
                goto fail;
        }
        if (gc_httpd__pool_start(&h->pool, h->n_workers, h->max_queued, work_done, h) < 0) {
                gc_errf(err, errlen, "workers: cannot start %d threads", h->n_workers);
                goto fail;
        }
        h->next_tls_check_us = lws_now_usecs() + (lws_usec_t)h->tls_check_sec * LWS_US_PER_SEC;
        return h;
fail:
        gc_httpd_free(h);
        return NULL;
}

gc_httpd *gc_httpd_free(gc_httpd *h)
{
        struct gc_httpd__job *left, *next;

        if (!h)
                return NULL;
        /* The workers first: they wake the context. What they leave is freed once every
         * connection is closed (closing one orphans its job). */
        left = gc_httpd__pool_stop(&h->pool);
        if (h->ctx) {
                lws_sul_cancel(&h->tick);
                lws_sul_cancel(&h->release);
                lws_context_destroy(h->ctx);
        }
        for (; left; left = next) {
                next = left->next;
                work_free(lws_container_of(left, struct work, j));
        }
        pthread_mutex_lock(&lws_log_mu);
        if (lws_log_owner == h)
                lws_log_owner = NULL;
        pthread_mutex_unlock(&lws_log_mu);
        for (size_t i = 0; i < h->n_routes; i++)
                free(h->routes[i].path);
        free(h->cert);
        free(h->key);
        free(h->wbuf);
        free(h->slots);
        free(h->hdr_scan);
        free(h->peek);
        /* lws closes the epoll set with the context, once it adopted it. */
        if (h->epfd >= 0 && !h->ep_wsi)
                close(h->epfd);
        free(h);
        return NULL;
}

int gc_httpd_port(const gc_httpd *h)
{
        return h ? h->port : -EINVAL;
}

int gc_httpd_get_stats(const gc_httpd *h, gc_httpd_stats *ret)
{
        if (!h || !ret)
                return -EINVAL;
        *ret = h->stats;
        ret->open = h->n_open;
        return 0;
}

int gc_httpd_route(gc_httpd *h, const char *path, unsigned flags, gc_httpd_handler fn, void *ud)
{
        struct route *r;
        size_t n;

        if (!h || !path || path[0] != '/' || !fn || (flags & ~(GC_HTTPD_PREFIX | GC_HTTPD_OPEN)))
                return -EINVAL;
        n = strlen(path);
        if (n >= h->max_url || has_ctl(path, n))
                return -EINVAL;
        /* The same path twice as exact or twice as prefix, whatever GC_HTTPD_OPEN says. */
        for (size_t i = 0; i < h->n_routes; i++)
                if ((h->routes[i].flags & GC_HTTPD_PREFIX) == (flags & GC_HTTPD_PREFIX) &&
                    !strcmp(h->routes[i].path, path))
                        return -EEXIST;
        if (h->n_routes == GC_HTTPD_MAX_ROUTES)
                return -E2BIG;
        r = &h->routes[h->n_routes];
        r->path = strdup(path);
        if (!r->path)
                return -ENOMEM;
        r->len = n;
        r->flags = flags;
        r->fn = fn;
        r->ud = ud;
        h->n_routes++;
        return 0;
}

int gc_httpd_run(gc_httpd *h, const volatile sig_atomic_t *stop)
{
        int r = 0;

        if (!h)
                return -EINVAL;
        lws_sul_schedule(h->ctx, 0, &h->tick, on_tick, TICK_US);
        while (!(stop && *stop) && !atomic_load(&h->stop_req)) {
                if (lws_service(h->ctx, 0) < 0) {
                        r = -EIO;
                        break;
                }
        }
        lws_sul_cancel(&h->tick);
        lws_sul_cancel(&h->release);
        atomic_store(&h->stop_req, true);
        return r;
}

int gc_httpd_set_guard(gc_httpd *h, gc_httpd_guard fn, void *ud)
{
        if (!h)
                return -EINVAL;
        h->guard = fn;
        h->guard_ud = ud;
        return 0;
}

gc_httpd *gc_httpd_server(const gc_httpd_request *req)
{
        const struct gc_httpd__req *priv = req ? req->internal_ : NULL;
        struct lws_context *ctx = priv && priv->wsi ? lws_get_context(priv->wsi) : NULL;

        return ctx ? lws_context_user(ctx) : NULL;
}

void gc_httpd_wake(gc_httpd *h)
{
        if (!h || !h->ctx)
                return;
        atomic_store(&h->wake_req, true);
        lws_cancel_service(h->ctx);
}

void gc_httpd_stop(gc_httpd *h)
{
        if (!h)
                return;
        atomic_store(&h->stop_req, true);
        lws_cancel_service(h->ctx);
}
