/* kube config: where the API server is and how to authenticate, in a pod or from a kubeconfig. */
#include "kube_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#define GC__SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

static void gc__free_secret(char *s)
{
        if (!s)
                return;
        explicit_bzero(s, strlen(s));
        free(s);
}

void gc_kube_config_release(gc_kube_config *c)
{
        if (!c)
                return;
        free(c->server);
        free(c->ca_file);
        free(c->ca_data);
        gc__free_secret(c->token);
        free(c->token_file);
        free(c->client_cert_file);
        free(c->client_key_file);
        free(c->client_cert_data);
        gc__free_secret(c->client_key_data);
        free(c->namespace);
        memset(c, 0, sizeof(*c));
}

/* ---- base64 --------------------------------------------------------------------------------- */

static int gc__b64_val(unsigned char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

int gc__kube_base64_decode(const char *s, size_t n, gc_buf *out)
{
        uint32_t acc = 0;
        int nbits = 0, pad = 0;
        size_t ndig = 0;
        int r;

        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                int v;

                if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
                        continue;
                if (c == '=') {
                        pad++;
                        continue;
                }
                v = gc__b64_val(c);
                /* Nothing but padding may follow padding. */
                if (v < 0 || pad)
                        return -EINVAL;
                ndig++;
                acc = (acc << 6) | (uint32_t)v;
                nbits += 6;
                if (nbits >= 8) {
                        char b;

                        nbits -= 8;
                        b = (char)((acc >> nbits) & 0xff);
                        r = gc_buf_append(out, &b, 1);
                        if (r < 0)
                                return r;
                }
        }
        /* Go's StdEncoding, which kubectl writes: padded to a multiple of four. */
        if ((ndig + (size_t)pad) % 4 != 0 || pad > 2 || (ndig % 4 == 1))
                return -EINVAL;
        if ((pad == 1 && ndig % 4 != 3) || (pad == 2 && ndig % 4 != 2))
                return -EINVAL;
        /* The unused low bits of the last digit must be zero (canonical encoding). */
        if (nbits > 0 && (acc & ((1u << nbits) - 1)) != 0)
                return -EINVAL;
        return gc_buf_append(out, "", 0);
}

/* ---- YAML navigation ------------------------------------------------------------------------ */

typedef struct gc__kc {
        yaml_document_t *doc;
        char *err;
        size_t errlen;
        const char *base_dir;
} gc__kc;

static yaml_node_t *gc__node(gc__kc *kc, int ix)
{
        return ix ? yaml_document_get_node(kc->doc, ix) : NULL;
}

/* A scalar that means "no value": empty, ~ or null (plain). */
static int gc__is_null(const yaml_node_t *n)
{
        const char *v;
        size_t len;

        if (!n)
                return 1;
        if (n->type != YAML_SCALAR_NODE)
                return 0;
        v = (const char *)n->data.scalar.value;
        len = n->data.scalar.length;
        if (len == 0)
                return 1;
        if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                return 0;
        return (len == 1 && v[0] == '~') || (len == 4 && memcmp(v, "null", 4) == 0) ||
               (len == 4 && memcmp(v, "Null", 4) == 0) || (len == 4 && memcmp(v, "NULL", 4) == 0);
}

static int gc__scalar_is(const yaml_node_t *n, const char *s)
{
        size_t len = strlen(s);

        return n && n->type == YAML_SCALAR_NODE && n->data.scalar.length == len &&
               memcmp(n->data.scalar.value, s, len) == 0;
}

/* The value of key in a mapping, or NULL (absent, or a null value). */
static yaml_node_t *gc__get(gc__kc *kc, const yaml_node_t *map, const char *key)
{
        if (!map || map->type != YAML_MAPPING_NODE)
                return NULL;
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
             p++) {
                if (gc__scalar_is(gc__node(kc, p->key), key)) {
                        yaml_node_t *v = gc__node(kc, p->value);

                        return gc__is_null(v) ? NULL : v;
                }
        }
        return NULL;
}

/* A string field: *ret points into the document (NUL-terminated there), or NULL when absent. */
static int gc__get_str(gc__kc *kc, const yaml_node_t *map, const char *key, const char *path,
                       const char **ret)
{
        yaml_node_t *v = gc__get(kc, map, key);

        *ret = NULL;
        if (!v)
                return 0;
        if (v->type != YAML_SCALAR_NODE) {
                snprintf(kc->err, kc->errlen, "%s%s: not a string", path, key);
                return -EINVAL;
        }
        if (memchr(v->data.scalar.value, '\0', v->data.scalar.length)) {
                snprintf(kc->err, kc->errlen, "%s%s: contains a NUL byte", path, key);
                return -EINVAL;
        }
        *ret = (const char *)v->data.scalar.value;
        return 0;
}

/*
 * Finds the entry named `name` in the list `list_key` ({name: ..., <inner>: {...}}) and returns
 * its inner mapping, with the entry's path ("clusters[2].cluster.") for messages.
 */
static int gc__find_named(gc__kc *kc, const yaml_node_t *root, const char *list_key,
                          const char *inner, const char *name, yaml_node_t **ret, char *path,
                          size_t pathlen)
{
        yaml_node_t *list = gc__get(kc, root, list_key);
        size_t i = 0;

        if (!list) {
                snprintf(kc->err, kc->errlen, "%s: missing (looking for \"%.100s\")", list_key,
                         name);
                return -ENOENT;
        }
        if (list->type != YAML_SEQUENCE_NODE) {
                snprintf(kc->err, kc->errlen, "%s: not a list", list_key);
                return -EINVAL;
        }
        for (yaml_node_item_t *it = list->data.sequence.items.start;
             it < list->data.sequence.items.top; it++, i++) {
                yaml_node_t *e = gc__node(kc, *it);
                yaml_node_t *v;

                if (!e || e->type != YAML_MAPPING_NODE) {
                        snprintf(kc->err, kc->errlen, "%s[%zu]: not a mapping", list_key, i);
                        return -EINVAL;
                }
                if (!gc__scalar_is(gc__get(kc, e, "name"), name))
                        continue;
                v = gc__get(kc, e, inner);
                if (!v || v->type != YAML_MAPPING_NODE) {
                        snprintf(kc->err, kc->errlen, "%s[%zu].%s: %s", list_key, i, inner,
                                 v ? "not a mapping" : "missing");
                        return -EINVAL;
                }
                snprintf(path, pathlen, "%s[%zu].%s.", list_key, i, inner);
                *ret = v;
                return 0;
        }
        snprintf(kc->err, kc->errlen, "%s: no entry named \"%.100s\"", list_key, name);
        return -ENOENT;
}

static int gc__set(char **dst, const char *s)
{
        if (!s)
                return 0;
        *dst = strdup(s);
        return *dst ? 0 : -ENOMEM;
}

/* A file named by the kubeconfig: relative names are relative to the kubeconfig's directory. */
static int gc__set_path(gc__kc *kc, char **dst, const char *s)
{
        gc_buf b;
        int r;

        if (!s)
                return 0;
        if (s[0] == '/' || !kc->base_dir)
                return gc__set(dst, s);
        gc_buf_init(&b, PATH_MAX);
        r = gc_buf_printf(&b, "%s/%s", kc->base_dir, s);
        if (r < 0) {
                gc_buf_free(&b);
                return r;
        }
        *dst = gc_buf_steal(&b);
        return 0;
}

/* base64 PEM data: decoded, checked to be PEM text. */
static int gc__set_pem(gc__kc *kc, char **dst, const char *s, const char *path, const char *key)
{
        gc_buf b;
        int r;

        if (!s)
                return 0;
        gc_buf_init(&b, GC__KUBE_MAX_PEM);
        r = gc__kube_base64_decode(s, strlen(s), &b);
        if (r < 0) {
                snprintf(kc->err, kc->errlen, "%s%s: %s", path, key,
                         r == -E2BIG ? "too large" : "not base64");
                goto fail;
        }
        if (b.len == 0 || memchr(b.data, '\0', b.len) || !strstr(b.data, "-----BEGIN ")) {
                snprintf(kc->err, kc->errlen, "%s%s: not PEM data", path, key);
                r = -EINVAL;
                goto fail;
        }
        *dst = gc_buf_steal(&b);
        return 0;
fail:
        if (b.data)
                explicit_bzero(b.data, b.len);
        gc_buf_free(&b);
        return r;
}

static int gc__check_token(gc__kc *kc, const char *t, const char *path)
{
        for (const char *p = t; *p; p++) {
                if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e) {
                        snprintf(kc->err, kc->errlen, "%stoken: not a bearer token", path);
                        return -EINVAL;
                }
        }
        return 0;
}

static int gc__kc_cluster(gc__kc *kc, const yaml_node_t *root, const char *name, gc_kube_config *c)
{
        char path[128];
        yaml_node_t *cl = NULL, *skip;
        const char *server, *ca, *ca_data;
        int r;

        r = gc__find_named(kc, root, "clusters", "cluster", name, &cl, path, sizeof(path));
        if (r < 0)
                return r;
        if ((r = gc__get_str(kc, cl, "server", path, &server)) < 0 ||
            (r = gc__get_str(kc, cl, "certificate-authority", path, &ca)) < 0 ||
            (r = gc__get_str(kc, cl, "certificate-authority-data", path, &ca_data)) < 0)
                return r;
        if (!server) {
                snprintf(kc->err, kc->errlen, "%sserver: missing", path);
                return -EINVAL;
        }
        if (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0) {
                snprintf(kc->err, kc->errlen, "%sserver: not an http(s) URL", path);
                return -EINVAL;
        }
        skip = gc__get(kc, cl, "insecure-skip-tls-verify");
        if (skip && !gc__scalar_is(skip, "false")) {
                snprintf(kc->err, kc->errlen,
                         "%sinsecure-skip-tls-verify: not supported (TLS is always verified)",
                         path);
                return -EINVAL;
        }
        if ((r = gc__set(&c->server, server)) < 0 || (r = gc__set_path(kc, &c->ca_file, ca)) < 0)
                return r;
        return gc__set_pem(kc, &c->ca_data, ca_data, path, "certificate-authority-data");
}

static int gc__kc_user(gc__kc *kc, const yaml_node_t *root, const char *name, gc_kube_config *c)
{
        char path[128];
        yaml_node_t *u = NULL;
        const char *token, *token_file, *cert, *cert_data, *key, *key_data;
        int r;

        r = gc__find_named(kc, root, "users", "user", name, &u, path, sizeof(path));
        if (r < 0)
                return r;
        if ((r = gc__get_str(kc, u, "token", path, &token)) < 0 ||
            (r = gc__get_str(kc, u, "tokenFile", path, &token_file)) < 0 ||
            (r = gc__get_str(kc, u, "client-certificate", path, &cert)) < 0 ||
            (r = gc__get_str(kc, u, "client-certificate-data", path, &cert_data)) < 0 ||
            (r = gc__get_str(kc, u, "client-key", path, &key)) < 0 ||
            (r = gc__get_str(kc, u, "client-key-data", path, &key_data)) < 0)
                return r;
        if (token && (r = gc__check_token(kc, token, path)) < 0)
                return r;
        if (!token && !token_file && !cert && !cert_data) {
                static const char *const unsupported[] = {"exec", "auth-provider", "username",
                                                          "password"};

                for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
                        if (gc__get(kc, u, unsupported[i])) {
                                snprintf(kc->err, kc->errlen,
                                         "%s%s: not supported (use a token or a client "
                                         "certificate)",
                                         path, unsupported[i]);
                                return -ENOTSUP;
                        }
                }
        }
        /* The data first, so a broken field is named even when its partner is missing. */
        if ((r = gc__set_pem(kc, &c->client_cert_data, cert_data, path,
                             "client-certificate-data")) < 0 ||
            (r = gc__set_pem(kc, &c->client_key_data, key_data, path, "client-key-data")) < 0)
                return r;
        if ((cert || cert_data) && !(key || key_data)) {
                snprintf(kc->err, kc->errlen, "%sclient-key: missing (client-certificate is set)",
                         path);
                return -EINVAL;
        }
        if ((key || key_data) && !(cert || cert_data)) {
                snprintf(kc->err, kc->errlen, "%sclient-certificate: missing (client-key is set)",
                         path);
                return -EINVAL;
        }
        if ((r = gc__set(&c->token, token)) < 0 ||
            (r = gc__set_path(kc, &c->token_file, token_file)) < 0 ||
            (r = gc__set_path(kc, &c->client_cert_file, cert)) < 0 ||
            (r = gc__set_path(kc, &c->client_key_file, key)) < 0)
                return r;
        return 0;
}

int gc__kube_config_parse(const char *text, size_t len, const char *base_dir, const char *context,
                          gc_kube_config *ret, char *err, size_t errlen)
{
        yaml_parser_t parser;
        yaml_document_t doc;
        gc_kube_config c;
        gc__kc kc = {&doc, err, errlen, base_dir};
        yaml_node_t *root, *ctx = NULL;
        const char *cur, *cluster, *user, *ns;
        char path[128];
        int r, have_doc = 0;

        memset(&c, 0, sizeof(c));
        if (len > GC__KUBE_MAX_KUBECONFIG) {
                snprintf(err, errlen, "kubeconfig: larger than %u bytes", GC__KUBE_MAX_KUBECONFIG);
                return -E2BIG;
        }
        if (!yaml_parser_initialize(&parser)) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
        if (!yaml_parser_load(&parser, &doc)) {
                snprintf(err, errlen, "kubeconfig: line %zu column %zu: %s",
                         parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                         parser.problem ? parser.problem : "not YAML");
                r = -EINVAL;
                goto out;
        }
        have_doc = 1;
        root = yaml_document_get_root_node(&doc);
        if (!root || root->type != YAML_MAPPING_NODE) {
                snprintf(err, errlen, "kubeconfig: %s", root ? "not a mapping" : "empty");
                r = -EINVAL;
                goto out;
        }
        if ((r = gc__get_str(&kc, root, "current-context", "", &cur)) < 0)
                goto out;
        if (context && context[0])
                cur = context;
        if (!cur) {
                snprintf(err, errlen, "current-context: missing (and no context was chosen)");
                r = -EINVAL;
                goto out;
        }
        r = gc__find_named(&kc, root, "contexts", "context", cur, &ctx, path, sizeof(path));
        if (r < 0)
                goto out;
        if ((r = gc__get_str(&kc, ctx, "cluster", path, &cluster)) < 0 ||
            (r = gc__get_str(&kc, ctx, "user", path, &user)) < 0 ||
            (r = gc__get_str(&kc, ctx, "namespace", path, &ns)) < 0)
                goto out;
        if (!cluster) {
                snprintf(err, errlen, "%scluster: missing", path);
                r = -EINVAL;
                goto out;
        }
        if ((r = gc__kc_cluster(&kc, root, cluster, &c)) < 0)
                goto out;
        if (user && (r = gc__kc_user(&kc, root, user, &c)) < 0)
                goto out;
        if ((r = gc__set(&c.namespace, ns)) < 0)
                goto out;
        *ret = c;
        memset(&c, 0, sizeof(c));
out:
        if (r == -ENOMEM)
                snprintf(err, errlen, "out of memory");
        gc_kube_config_release(&c);
        if (have_doc)
                yaml_document_delete(&doc);
        yaml_parser_delete(&parser);
        return r;
}

int gc_kube_config_load(const char *path, const char *context, gc_kube_config *ret, char *err,
                        size_t errlen)
{
        gc_buf b, dir;
        const char *slash;
        int r;

        if (!path) {
                snprintf(err, errlen, "kubeconfig: no file given");
                return -EINVAL;
        }
        r = gc_read_file(path, GC__KUBE_MAX_KUBECONFIG, &b);
        if (r < 0) {
                snprintf(err, errlen, "kubeconfig %s: %s", path,
                         r == -E2BIG ? "larger than 1 MiB" : strerror(-r));
                return r;
        }
        gc_buf_init(&dir, PATH_MAX);
        slash = strrchr(path, '/');
        if (slash)
                r = gc_buf_append(&dir, path, slash == path ? 1 : (size_t)(slash - path));
        else
                r = gc_buf_puts(&dir, ".");
        if (r == 0)
                r = gc__kube_config_parse(b.data, b.len, dir.data, context, ret, err, errlen);
        else
                snprintf(err, errlen, "kubeconfig %s: path too long", path);
        explicit_bzero(b.data, b.len);
        gc_buf_free(&b);
        gc_buf_free(&dir);
        return r;
}

/* ---- in a pod -------------------------------------------------------------------------------- */

int gc_kube_config_incluster_dir(const char *sa_dir, gc_kube_config *ret, char *err, size_t errlen)
{
        const char *host = getenv("KUBERNETES_SERVICE_HOST");
        const char *port = getenv("KUBERNETES_SERVICE_PORT");
        gc_kube_config c;
        gc_buf b;
        int64_t pn;
        int r;

        memset(&c, 0, sizeof(c));
        if (!host || !host[0] || !port || !port[0]) {
                snprintf(err, errlen, "%s: not set (not running in a pod?)",
                         !host || !host[0] ? "KUBERNETES_SERVICE_HOST" : "KUBERNETES_SERVICE_PORT");
                return -ENOENT;
        }
        if (gc_parse_int64(port, &pn) < 0 || pn < 1 || pn > 65535) {
                snprintf(err, errlen, "KUBERNETES_SERVICE_PORT: \"%.20s\" is not a port", port);
                return -EINVAL;
        }
        if (strlen(host) > 255 || strpbrk(host, "/@?#[] \t\r\n")) {
                snprintf(err, errlen, "KUBERNETES_SERVICE_HOST: not a host name or address");
                return -EINVAL;
        }
        gc_buf_init(&b, 4096);
        /* An IPv6 address goes in brackets in a URL. */
        r = gc_buf_printf(&b, strchr(host, ':') ? "https://[%s]:%lld" : "https://%s:%lld", host,
                          (long long)pn);
        if (r < 0)
                goto out;
        c.server = gc_buf_steal(&b);
        r = gc_buf_printf(&b, "%s/token", sa_dir);
        if (r < 0)
                goto out;
        c.token_file = gc_buf_steal(&b);
        r = gc_buf_printf(&b, "%s/ca.crt", sa_dir);
        if (r < 0)
                goto out;
        c.ca_file = gc_buf_steal(&b);
        if (access(c.token_file, R_OK) < 0 || access(c.ca_file, R_OK) < 0) {
                r = -errno;
                snprintf(err, errlen, "%s: %s",
                         access(c.token_file, R_OK) < 0 ? c.token_file : c.ca_file, strerror(-r));
                goto out;
        }
        r = gc_buf_printf(&b, "%s/namespace", sa_dir);
        if (r < 0)
                goto out;
        {
                gc_buf nsb;

                if (gc_read_file(b.data, 256, &nsb) == 0) {
                        size_t n = nsb.len;

                        while (n > 0 && strchr(" \t\r\n", nsb.data[n - 1]))
                                nsb.data[--n] = '\0';
                        if (n > 0)
                                c.namespace = strdup(nsb.data);
                        gc_buf_free(&nsb);
                }
        }
        gc_buf_free(&b);
        *ret = c;
        return 0;
out:
        if (r == -ENOMEM)
                snprintf(err, errlen, "out of memory");
        gc_buf_free(&b);
        gc_kube_config_release(&c);
        return r;
}

int gc_kube_config_incluster(gc_kube_config *ret, char *err, size_t errlen)
{
        return gc_kube_config_incluster_dir(GC__SA_DIR, ret, err, errlen);
}
