// CLibCrypto: OpenSSL's libcrypto (already linked by libcurl) for SHA-256.
#ifndef LOOKOUT_CRYPTO_SHIM_H
#define LOOKOUT_CRYPTO_SHIM_H

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>

static inline EVP_MD_CTX *lookout_sha256_new(void) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) { EVP_MD_CTX_free(ctx); return NULL; }
    return ctx;
}
static inline int lookout_sha256_update(EVP_MD_CTX *ctx, const void *data, size_t count) {
    return EVP_DigestUpdate(ctx, data, count);
}
/// Writes 32 bytes to `out`.
static inline int lookout_sha256_final(EVP_MD_CTX *ctx, unsigned char *out) {
    unsigned int len = 0;
    return EVP_DigestFinal_ex(ctx, out, &len);
}
static inline void lookout_sha256_free(EVP_MD_CTX *ctx) { EVP_MD_CTX_free(ctx); }

/// HMAC-SHA256 of `data` under `key`; writes 32 bytes to `out`.
static inline int lookout_hmac_sha256(const void *key, int key_len, const unsigned char *data,
                                      size_t data_len, unsigned char *out) {
    unsigned int len = 0;
    return HMAC(EVP_sha256(), key, key_len, data, data_len, out, &len) != NULL;
}
/// Constant-time comparison.
static inline int lookout_memcmp_consttime(const void *a, const void *b, size_t len) {
    return CRYPTO_memcmp(a, b, len);
}

#endif
