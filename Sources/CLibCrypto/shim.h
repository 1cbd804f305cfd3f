// CLibCrypto: OpenSSL (already linked by libcurl): SHA-256, certificates, and TLS on a socket of our own.
#ifndef LOOKOUT_CRYPTO_SHIM_H
#define LOOKOUT_CRYPTO_SHIM_H

#include <string.h>
#include <time.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/err.h>
#include <stdio.h>

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

/// The protocol of an OpenSSL connection as Go's tls.VersionName writes it ("TLS 1.3"), or
/// OpenSSL's own name for another; NULL without a connection.
static inline const char *lookout_ssl_version(void *ssl) {
    if (!ssl) return NULL;
    switch (SSL_version((const SSL *)ssl)) {
    case TLS1_VERSION: return "TLS 1.0";
    case TLS1_1_VERSION: return "TLS 1.1";
    case TLS1_2_VERSION: return "TLS 1.2";
    case TLS1_3_VERSION: return "TLS 1.3";
    default: return SSL_get_version((const SSL *)ssl);
    }
}

/// The earliest notAfter among `chain`'s certificates, as a Unix time, or -1 for none.
static inline long long lookout_chain_earliest_expiry(STACK_OF(X509) *chain) {
    long long earliest = -1;
    int count = chain ? sk_X509_num(chain) : 0;
    for (int i = 0; i < count; i++) {
        const ASN1_TIME *after = X509_get0_notAfter(sk_X509_value(chain, i));
        struct tm when;
        if (!after || !ASN1_TIME_to_tm(after, &when)) continue;
        long long seconds = (long long)timegm(&when);
        if (earliest < 0 || seconds < earliest) earliest = seconds;
    }
    return earliest;
}

/// The earliest notAfter among the certificates the peer presented, as a Unix time, or -1: read
/// from the live connection, where libcurl's CURLOPT_CERTINFO would print every field of every
/// certificate (public keys included) as text on each handshake.
static inline long long lookout_ssl_earliest_expiry(void *ssl) {
    return ssl ? lookout_chain_earliest_expiry(SSL_get_peer_cert_chain((const SSL *)ssl)) : -1;
}

/// The peer's leaf certificate as DER in *out (free with lookout_openssl_free); its length, or -1.
static inline int lookout_ssl_leaf_der(void *ssl, unsigned char **out) {
    if (!ssl) return -1;
    X509 *leaf = SSL_get1_peer_certificate((const SSL *)ssl);
    if (!leaf) return -1;
    *out = NULL;
    int length = i2d_X509(leaf, out);
    X509_free(leaf);
    return length;
}

static inline void lookout_openssl_free(void *pointer) { OPENSSL_free(pointer); }

/// The peer's leaf certificate as OpenSSL parsed it during the handshake (free with
/// lookout_x509_free), or NULL. Parsing its DER again would cost OpenSSL 3.0's key decoders
/// (about 100 µs per certificate) a second time.
static inline X509 *lookout_ssl_leaf(void *ssl) {
    return ssl ? SSL_get1_peer_certificate((const SSL *)ssl) : NULL;
}

/// `x`'s DER in *out (free with lookout_openssl_free); its length, or -1.
static inline int lookout_x509_der(X509 *x, unsigned char **out) {
    *out = NULL;
    return i2d_X509(x, out);
}

/// A certificate from its DER bytes, or NULL; free it with lookout_x509_free.
static inline X509 *lookout_x509_from_der(const unsigned char *der, long length) {
    const unsigned char *cursor = der;
    return d2i_X509(NULL, &cursor, length);
}
static inline void lookout_x509_free(X509 *x) { X509_free(x); }

/// The subject's (issuer != 0: the issuer's) attributes, in the certificate's order.
static inline int lookout_x509_name_count(X509 *x, int issuer) {
    return X509_NAME_entry_count(issuer ? X509_get_issuer_name(x) : X509_get_subject_name(x));
}
/// Attribute `index`: its NID (NID_undef for an unknown one), its OID in dotted form in `oid`,
/// its string type (V_ASN1_UTF8STRING…) and its raw value; 0 when there is no such attribute.
static inline int lookout_x509_name_entry(X509 *x, int issuer, int index, char *oid, int oid_length,
                                          int *type, const unsigned char **value, int *value_length) {
    X509_NAME_ENTRY *entry = X509_NAME_get_entry(issuer ? X509_get_issuer_name(x) : X509_get_subject_name(x), index);
    if (!entry) return 0;
    ASN1_OBJECT *object = X509_NAME_ENTRY_get_object(entry);
    ASN1_STRING *data = X509_NAME_ENTRY_get_data(entry);
    OBJ_obj2txt(oid, oid_length, object, 1);
    *type = ASN1_STRING_type(data);
    *value = ASN1_STRING_get0_data(data);
    *value_length = ASN1_STRING_length(data);
    return OBJ_obj2nid(object) == NID_undef ? -1 : OBJ_obj2nid(object);
}

/// The certificate's DNS subject alternative names joined by commas (as Go's
/// strings.Join(cert.DNSNames, ",")), written to `out`; the length written, or -1 when they do
/// not fit in `capacity` bytes.
static inline int lookout_x509_dns_names(X509 *x, char *out, int capacity) {
    GENERAL_NAMES *names = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
    if (!names) return 0;
    int written = 0;
    for (int i = 0; i < sk_GENERAL_NAME_num(names); i++) {
        GENERAL_NAME *name = sk_GENERAL_NAME_value(names, i);
        if (name->type != GEN_DNS) continue;
        int length = ASN1_STRING_length(name->d.dNSName);
        if (written + length + 1 > capacity) { written = -1; break; }
        if (written > 0) out[written++] = ',';
        memcpy(out + written, ASN1_STRING_get0_data(name->d.dNSName), (size_t)length);
        written += length;
    }
    GENERAL_NAMES_free(names);
    return written;
}
/// A TLS client's settings for a conversation on a socket of its own (STARTTLS): trust (a PEM
/// CA file, or the system's), an optional client certificate, the versions allowed (0: OpenSSL's
/// default; else TLS1_VERSION…), no session cache. NULL with OpenSSL's reason in `error`.
static inline SSL_CTX *lookout_tls_client_context(const char *ca_file, const char *cert_file, const char *key_file,
                                                  int verify, int min_version, int max_version,
                                                  char *error, int error_length) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) goto fail;
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_verify(ctx, verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
    if (ca_file) {
        if (SSL_CTX_load_verify_locations(ctx, ca_file, NULL) != 1) goto fail;
    } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
        goto fail;
    }
    if (cert_file && SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) goto fail;
    if (key_file && SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1) goto fail;
    if (min_version && SSL_CTX_set_min_proto_version(ctx, min_version) != 1) goto fail;
    if (max_version && SSL_CTX_set_max_proto_version(ctx, max_version) != 1) goto fail;
    return ctx;
fail:
    if (error && error_length > 0) {
        unsigned long code = ERR_get_error();
        if (code) ERR_error_string_n(code, error, (size_t)error_length); else snprintf(error, (size_t)error_length, "cannot set up TLS");
    }
    ERR_clear_error();
    if (ctx) SSL_CTX_free(ctx);
    return NULL;
}
static inline void lookout_tls_context_up_ref(SSL_CTX *ctx) { SSL_CTX_up_ref(ctx); }
static inline void lookout_tls_context_free(SSL_CTX *ctx) { SSL_CTX_free(ctx); }

/// A client connection on the connected socket `fd`, checking the certificate for `name` (a host
/// name, sent in SNI too, or an IP address, as Go's crypto/tls does); NULL on failure.
static inline SSL *lookout_tls_client(SSL_CTX *ctx, int fd, const char *name) {
    SSL *ssl = SSL_new(ctx);
    if (!ssl) return NULL;
    if (SSL_set_fd(ssl, fd) != 1) { SSL_free(ssl); return NULL; }
    if (name && *name) {
        X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
        if (X509_VERIFY_PARAM_set1_ip_asc(param, name) != 1) {
            SSL_set_tlsext_host_name(ssl, name);
            SSL_set1_host(ssl, name);
        }
    }
    return ssl;
}
static inline void lookout_tls_free(SSL *ssl) { SSL_free(ssl); }

/// What a call's result means: 1 done (or bytes moved), 0 closed, -1 wait to read, -2 wait to
/// write, -3 failed.
static inline int lookout_tls_result(SSL *ssl, int ret) {
    if (ret > 0) return 1;
    switch (SSL_get_error(ssl, ret)) {
    case SSL_ERROR_WANT_READ: return -1;
    case SSL_ERROR_WANT_WRITE: return -2;
    case SSL_ERROR_ZERO_RETURN: return 0;
    default: return -3;
    }
}
static inline int lookout_tls_connect(SSL *ssl) { return lookout_tls_result(ssl, SSL_connect(ssl)); }
static inline int lookout_tls_read(SSL *ssl, void *buffer, int count, int *moved) {
    int ret = SSL_read(ssl, buffer, count);
    *moved = ret > 0 ? ret : 0;
    return lookout_tls_result(ssl, ret);
}
static inline int lookout_tls_write(SSL *ssl, const void *buffer, int count, int *moved) {
    int ret = SSL_write(ssl, buffer, count);
    *moved = ret > 0 ? ret : 0;
    return lookout_tls_result(ssl, ret);
}

/// Why the handshake failed, in words: the certificate check's reason when it failed there.
static inline void lookout_tls_failure(SSL *ssl, char *out, int length) {
    long verified = SSL_get_verify_result(ssl);
    unsigned long code = ERR_peek_last_error();
    if (verified != X509_V_OK) {
        snprintf(out, (size_t)length, "certificate verify failed: %s", X509_verify_cert_error_string(verified));
    } else if (code) {
        ERR_error_string_n(code, out, (size_t)length);
    } else {
        snprintf(out, (size_t)length, "the server ended the TLS handshake");
    }
    ERR_clear_error();
}
/// How the certificate check went: 0 passed (or was not made), 1 failed on a validity period
/// (expired, not yet valid), 2 failed otherwise (untrusted, another name).
static inline int lookout_tls_verify_outcome(SSL *ssl) {
    long verified = SSL_get_verify_result(ssl);
    if (verified == X509_V_OK) return 0;
    return verified == X509_V_ERR_CERT_HAS_EXPIRED || verified == X509_V_ERR_CERT_NOT_YET_VALID ? 1 : 2;
}

/// The earliest notAfter of the chain OpenSSL verified (as Go's VerifiedChains), or -1 when
/// none was (no verification).
static inline long long lookout_ssl_verified_chain_expiry(SSL *ssl) {
    return lookout_chain_earliest_expiry(SSL_get0_verified_chain(ssl));
}
#endif
