// The floor any libcurl prober pays: the same fresh-connection GETs as `lookout-bench probes`,
// from C, with the options Lookout's EasyHandle sets (one connection per request, "Connection:
// close", every header line and body byte passed to a callback), N in flight through one multi
// handle, easy handles reused after curl_easy_reset. Nothing of Lookout runs: the difference to
// `lookout-bench probes` is what Lookout's client adds.
//
// usage: curl-floor URL TRANSFERS IN_FLIGHT [CA_FILE]
// With CA_FILE (an https:// URL's CA), the CA store is kept between connections as Lookout keeps
// it: each transfer is a full TLS handshake, the floor of an HTTPS probe through libcurl.
// prints: CPU µs per transfer (user + system, from the first request to the last answer), the
// user and system parts, and the failed transfers.
#include "curl-options.h"
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: curl-floor URL TRANSFERS IN_FLIGHT [CA_FILE]\n");
        return 2;
    }
    const char *url = argv[1];
    caFile = argc == 5 ? argv[4] : NULL;
    long total = strtol(argv[2], NULL, 10), inFlight = strtol(argv[3], NULL, 10);
    if (total < 1 || inFlight < 1 || inFlight > 4096) {
        fprintf(stderr, "curl-floor: TRANSFERS must be at least 1, IN_FLIGHT from 1 to 4096\n");
        return 2;
    }
    curl_global_init(CURL_GLOBAL_ALL);
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, 0L);
    struct curl_slist *headers = curl_slist_append(NULL, "Connection: close");
    static char errors[4096][CURL_ERROR_SIZE];
    long started = 0, finished = 0, failed = 0;
    struct rusage before;
    getrusage(RUSAGE_SELF, &before);
    for (; started < inFlight && started < total; started++) {
        CURL *easy = curl_easy_init();
        configure(easy, url, headers, errors[started]);
        curl_easy_setopt(easy, CURLOPT_PRIVATE, errors[started]);
        curl_multi_add_handle(multi, easy);
    }
    while (finished < total) {
        int running = 0;
        curl_multi_perform(multi, &running);
        for (CURLMsg *message; (message = next_finished(multi));) {
            CURL *easy = message->easy_handle;
            if (message->data.result != CURLE_OK) failed++;
            char *slot;
            curl_easy_getinfo(easy, CURLINFO_PRIVATE, &slot);
            curl_multi_remove_handle(multi, easy);
            finished++;
            if (started < total) {
                curl_easy_reset(easy);
                configure(easy, url, headers, slot);
                curl_easy_setopt(easy, CURLOPT_PRIVATE, slot);
                curl_multi_add_handle(multi, easy);
                started++;
            } else {
                curl_easy_cleanup(easy);
            }
        }
        if (finished < total) curl_multi_poll(multi, NULL, 0, 100, NULL);
    }
    struct rusage after;
    getrusage(RUSAGE_SELF, &after);
    double user = (after.ru_utime.tv_sec - before.ru_utime.tv_sec) * 1e6 + (after.ru_utime.tv_usec - before.ru_utime.tv_usec);
    double system = (after.ru_stime.tv_sec - before.ru_stime.tv_sec) * 1e6 + (after.ru_stime.tv_usec - before.ru_stime.tv_usec);
    printf("%.1f %.1f %.1f %ld\n", (user + system) / total, user / total, system / total, failed);
    curl_slist_free_all(headers);
    curl_multi_cleanup(multi);
    curl_global_cleanup();
    return failed == 0 ? 0 : 1;
}
