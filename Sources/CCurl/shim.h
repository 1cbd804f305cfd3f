// CCurl: libcurl for Swift. curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are
// variadic, which Swift cannot call; these typed, non-variadic wrappers stand in for them.
#ifndef LOOKOUT_CURL_SHIM_H
#define LOOKOUT_CURL_SHIM_H

#include <curl/curl.h>
#include <string.h>

static inline CURLcode lookout_curl_setopt_long(CURL *h, CURLoption o, long v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode lookout_curl_setopt_int64(CURL *h, CURLoption o, curl_off_t v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode lookout_curl_setopt_ptr(CURL *h, CURLoption o, const void *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode lookout_curl_setopt_string(CURL *h, CURLoption o, const char *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode lookout_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode lookout_curl_setopt_write_function(CURL *h, CURLoption o,
        size_t (*f)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(h, o, f);
}
static inline CURLcode lookout_curl_setopt_xferinfo_function(CURL *h,
        int (*f)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t)) {
    return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, f);
}

static inline CURLcode lookout_curl_getinfo_long(CURL *h, CURLINFO i, long *v) {
    return curl_easy_getinfo(h, i, v);
}
static inline CURLcode lookout_curl_getinfo_int64(CURL *h, CURLINFO i, curl_off_t *v) {
    return curl_easy_getinfo(h, i, v);
}
static inline CURLcode lookout_curl_getinfo_string(CURL *h, CURLINFO i, char **v) {
    return curl_easy_getinfo(h, i, v);
}
static inline CURLcode lookout_curl_getinfo_ptr(CURL *h, CURLINFO i, void **v) {
    return curl_easy_getinfo(h, i, v);
}
static inline CURLcode lookout_curl_getinfo_certinfo(CURL *h, struct curl_certinfo **v) {
    return curl_easy_getinfo(h, CURLINFO_CERTINFO, v);
}

static inline CURLMcode lookout_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) {
    return curl_multi_setopt(m, o, v);
}

/// The easy handle a finished CURLMsg is about, and its result code.
static inline CURL *lookout_curl_msg_easy(CURLMsg *msg) { return msg->easy_handle; }
static inline CURLcode lookout_curl_msg_result(CURLMsg *msg) { return msg->data.result; }
static inline int lookout_curl_msg_is_done(CURLMsg *msg) { return msg->msg == CURLMSG_DONE; }

/// The earliest "Expire date" among the peer's certificates (CURLOPT_CERTINFO), as a Unix
/// time, or -1 when there is none.
static inline long long lookout_curl_earliest_cert_expiry(CURL *h) {
    struct curl_certinfo *info = NULL;
    if (curl_easy_getinfo(h, CURLINFO_CERTINFO, &info) != CURLE_OK || !info) return -1;
    long long earliest = -1;
    for (int i = 0; i < info->num_of_certs; i++) {
        for (struct curl_slist *item = info->certinfo[i]; item; item = item->next) {
            if (strncmp(item->data, "Expire date:", 12) != 0) continue;
            time_t when = curl_getdate(item->data + 12, NULL);
            if (when >= 0 && (earliest < 0 || when < earliest)) earliest = when;
        }
    }
    return earliest;
}

/// The PEM text of the peer's first (leaf) certificate from CURLOPT_CERTINFO, or NULL; valid
/// until the handle's next transfer.
static inline const char *lookout_curl_leaf_cert_pem(CURL *h) {
    struct curl_certinfo *info = NULL;
    if (curl_easy_getinfo(h, CURLINFO_CERTINFO, &info) != CURLE_OK || !info || info->num_of_certs < 1) return NULL;
    for (struct curl_slist *item = info->certinfo[0]; item; item = item->next) {
        if (strncmp(item->data, "Cert:", 5) == 0) return item->data + 5;
    }
    return NULL;
}

/// The SSL* of the transfer's connection when libcurl uses OpenSSL, or NULL; valid only while
/// the transfer runs.
static inline void *lookout_curl_openssl_ptr(CURL *h) {
    struct curl_tlssessioninfo *info = NULL;
    if (curl_easy_getinfo(h, CURLINFO_TLS_SSL_PTR, &info) != CURLE_OK || !info) return NULL;
    return info->backend == CURLSSLBACKEND_OPENSSL ? info->internals : NULL;
}

#endif
