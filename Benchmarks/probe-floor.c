// The floor of a /probe served the way Lookout serves it, from C: libmicrohttpd on its own epoll
// thread (the flags MicroHTTPServer starts it with) suspends each request and hands it to one
// transfer thread, which runs it through a libcurl multi handle with Lookout's options
// (curl-options.h) and resumes the connection with a few lines of metrics. Nothing of Swift or of
// Lookout runs, so what Lookout's /probe costs over this is Lookout's own; what this costs over
// curl-floor is serving an HTTP request and handing it between two threads at all.
//
// usage: probe-floor PORT [CA_FILE]   listens on 127.0.0.1:PORT; GET /probe?target=URL (any path
// answers alike)
// Runs until killed; time it from outside (CPU ticks of the process around wrk), as Lookout is.
#include "curl-options.h"
#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct probe {
    struct MHD_Connection *connection;
    char url[2048];
    char errors[CURL_ERROR_SIZE];
    int started, done;
    long status;
    double seconds;
    CURLcode result;
    struct probe *next;
};

static CURLM *multi;
static struct curl_slist *headers;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct probe *pending;  // handed over by the server's thread, taken by the transfer thread
static CURL *spare[1024];      // easy handles kept for reuse (their CA store stays warm)
static int spareCount;

static void *transfers(void *unused) {
    (void)unused;
    for (;;) {
        pthread_mutex_lock(&lock);
        struct probe *taken = pending;
        pending = NULL;
        pthread_mutex_unlock(&lock);
        for (struct probe *probe = taken, *next; probe; probe = next) {
            next = probe->next;
            CURL *easy = spareCount > 0 ? spare[--spareCount] : curl_easy_init();
            curl_easy_reset(easy);
            configure(easy, probe->url, headers, probe->errors);
            curl_easy_setopt(easy, CURLOPT_PRIVATE, probe);
            curl_multi_add_handle(multi, easy);
        }
        int running = 0;
        curl_multi_perform(multi, &running);
        for (CURLMsg *message; (message = next_finished(multi));) {
            CURL *easy = message->easy_handle;
            struct probe *probe;
            curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&probe);
            probe->result = message->data.result;
            curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &probe->status);
            curl_easy_getinfo(easy, CURLINFO_TOTAL_TIME, &probe->seconds);
            curl_multi_remove_handle(multi, easy);
            if (spareCount < 1024) spare[spareCount++] = easy;
            else curl_easy_cleanup(easy);
            probe->done = 1;
            MHD_resume_connection(probe->connection);
        }
        curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    return NULL;
}

static enum MHD_Result answer(void *unused, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload, size_t *uploadSize, void **state) {
    (void)unused, (void)url, (void)method, (void)version, (void)upload;
    struct probe *probe = *state;
    if (!probe) {
        *state = calloc(1, sizeof(struct probe));
        return *state ? MHD_YES : MHD_NO;
    }
    if (*uploadSize) {
        *uploadSize = 0;
        return MHD_YES;
    }
    if (probe->done) {
        char body[256];
        int length = snprintf(body, sizeof body,
                              "probe_success %d\nprobe_http_status_code %ld\nprobe_duration_seconds %.6f\n",
                              probe->result == CURLE_OK && probe->status >= 200 && probe->status < 300, probe->status,
                              probe->seconds);
        struct MHD_Response *response = MHD_create_response_from_buffer((size_t)length, body, MHD_RESPMEM_MUST_COPY);
        MHD_add_response_header(response, "Content-Type", "text/plain; version=0.0.4");
        enum MHD_Result queued = MHD_queue_response(connection, MHD_HTTP_OK, response);
        MHD_destroy_response(response);
        return queued;
    }
    if (probe->started) return MHD_YES;
    const char *target = MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "target");
    if (!target || strlen(target) >= sizeof probe->url) return MHD_NO;
    strcpy(probe->url, target);
    probe->connection = connection;
    probe->started = 1;
    MHD_suspend_connection(connection);
    pthread_mutex_lock(&lock);
    probe->next = pending;
    pending = probe;
    pthread_mutex_unlock(&lock);
    curl_multi_wakeup(multi);
    return MHD_YES;
}

static void completed(void *unused, struct MHD_Connection *connection, void **state,
                      enum MHD_RequestTerminationCode code) {
    (void)unused, (void)connection, (void)code;
    free(*state);
    *state = NULL;
}

int main(int argc, char **argv) {
    long port = argc >= 2 ? strtol(argv[1], NULL, 10) : 0;
    if ((argc != 2 && argc != 3) || port < 1 || port > 65535) {
        fprintf(stderr, "usage: probe-floor PORT [CA_FILE]\n");
        return 2;
    }
    caFile = argc == 3 ? argv[2] : NULL;
    curl_global_init(CURL_GLOBAL_ALL);
    multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, 0L);
    headers = curl_slist_append(NULL, "Connection: close");
    struct sockaddr_in loopback = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    loopback.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    pthread_t thread;
    pthread_create(&thread, NULL, transfers, NULL);
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, (uint16_t)port, NULL, NULL, answer,
        NULL, MHD_OPTION_SOCK_ADDR, &loopback, MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
    if (!daemon) {
        fprintf(stderr, "probe-floor: cannot listen on port %ld\n", port);
        return 1;
    }
    pthread_join(thread, NULL);
    return 0;
}
