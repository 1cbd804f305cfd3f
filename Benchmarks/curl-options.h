// The options Lookout's EasyHandle sets on a probe's transfer (one connection per request,
// "Connection: close", every header line and body byte passed to a callback), for the C floors
// (curl-floor.c, probe-floor.c): what they time is libcurl doing Lookout's transfer, nothing else.
// With caFile (an https:// URL's CA), the CA store is kept between connections as Lookout keeps it.
#ifndef LOOKOUT_CURL_OPTIONS_H
#define LOOKOUT_CURL_OPTIONS_H
#include <curl/curl.h>

static size_t take(char *data, size_t size, size_t count, void *owner) {
    (void)data;
    (void)owner;
    return size * count;
}

static const char *caFile;

static void configure(CURL *easy, const char *url, struct curl_slist *headers, char *errors) {
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errors);
    curl_easy_setopt(easy, CURLOPT_USERAGENT, "Lookout/floor");
    curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(easy, CURLOPT_SSL_SESSIONID_CACHE, 0L);
    curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, take);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, take);
    if (caFile) {
        curl_easy_setopt(easy, CURLOPT_CAINFO, caFile);
        curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
        curl_easy_setopt(easy, CURLOPT_CA_CACHE_TIMEOUT, 300L);
    }
}

// The next transfer of `multi` that has finished (after curl_multi_perform), or NULL.
static CURLMsg *next_finished(CURLM *multi) {
    int left = 0;
    CURLMsg *message;
    while ((message = curl_multi_info_read(multi, &left)))
        if (message->msg == CURLMSG_DONE) return message;
    return NULL;
}

#endif
