/* deliver hmac: the HMAC-SHA256 signature of a webhook's body (OpenSSL). */
#include <errno.h>
#include <limits.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "deliver.h"

int gc_deliver_hmac_sha256_hex(const void *key, size_t key_len, const void *msg, size_t msg_len,
                               char out[GC_DELIVER_HMAC_HEX])
{
        static const char hex[] = "0123456789abcdef";
        unsigned char mac[EVP_MAX_MD_SIZE];
        unsigned int n = 0;

        if ((!key && key_len) || (!msg && msg_len) || key_len > INT_MAX)
                return -EINVAL;
        if (!HMAC(EVP_sha256(), key ? key : "", (int)key_len, msg ? msg : (const void *)"", msg_len,
                  mac, &n) ||
            n != 32)
                return -EIO;
        for (unsigned i = 0; i < n; i++) {
                out[2 * i] = hex[mac[i] >> 4];
                out[2 * i + 1] = hex[mac[i] & 15];
        }
        out[64] = '\0';
        return 0;
}
