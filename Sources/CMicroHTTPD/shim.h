// CMicroHTTPD: libmicrohttpd for Swift. MHD_start_daemon and MHD_get_daemon_info are variadic,
// and MHD's enums arrive in Swift as raw-value structs; these wrappers give typed entry points.
#ifndef LOOKOUT_MHD_SHIM_H
#define LOOKOUT_MHD_SHIM_H

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdarg.h>
#include <microhttpd.h>

/// Starts a daemon with its own polling thread (epoll), suspend/resume enabled, bound to `addr`.
/// With `key_pem` and `cert_pem` (PEM text, not paths) it serves HTTPS through GnuTLS.
static size_t lookout_mhd_unescape(void *cls, struct MHD_Connection *c, char *s);

static inline struct MHD_Daemon *lookout_mhd_start(
        int ipv6,
        const struct sockaddr *addr,
        MHD_AccessHandlerCallback handler, void *handler_cls,
        MHD_RequestCompletedCallback completed, void *completed_cls,
        MHD_NotifyConnectionCallback notify, void *notify_cls,
        unsigned int connection_limit,
        unsigned int connection_timeout_seconds,
        size_t connection_memory_limit,
        const char *key_pem, const char *cert_pem) {
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
    if (ipv6) flags |= MHD_USE_IPv6;
    if (key_pem && cert_pem) {
        return MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, handler, handler_cls,
                                MHD_OPTION_SOCK_ADDR, addr,
                                MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                                MHD_OPTION_NOTIFY_CONNECTION, notify, notify_cls,
                                MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                                MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                            MHD_OPTION_UNESCAPE_CALLBACK, lookout_mhd_unescape, NULL,
                                MHD_OPTION_HTTPS_MEM_KEY, key_pem,
                                MHD_OPTION_HTTPS_MEM_CERT, cert_pem,
                                MHD_OPTION_END);
    }
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_SOCK_ADDR, addr,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_NOTIFY_CONNECTION, notify, notify_cls,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                            MHD_OPTION_UNESCAPE_CALLBACK, lookout_mhd_unescape, NULL,
                            MHD_OPTION_END);
}

/// Whether this libmicrohttpd was built with TLS.
static inline int lookout_mhd_supports_tls(void) { return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES; }

/// The port the daemon listens on (useful after binding port 0), or 0.
static inline uint16_t lookout_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/// Whether a connection notification says the connection started (1) or closed (0).
static inline int lookout_mhd_notify_started(enum MHD_ConnectionNotificationCode code) {
    return code == MHD_CONNECTION_NOTIFY_STARTED;
}

/// The connection's socket, or -1.
static inline int lookout_mhd_connection_fd(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

static inline int lookout_mhd_yes(void) { return MHD_YES; }
static inline enum MHD_Result lookout_mhd_result(int ok) { return ok ? MHD_YES : MHD_NO; }
static inline enum MHD_ValueKind lookout_mhd_header_kind(void) { return MHD_HEADER_KIND; }
static inline enum MHD_ValueKind lookout_mhd_query_kind(void) { return MHD_GET_ARGUMENT_KIND; }
static inline enum MHD_ResponseMemoryMode lookout_mhd_copy_mode(void) { return MHD_RESPMEM_MUST_COPY; }
static inline ssize_t lookout_mhd_end_of_stream(void) { return MHD_CONTENT_READER_END_OF_STREAM; }
static inline ssize_t lookout_mhd_end_with_error(void) { return MHD_CONTENT_READER_END_WITH_ERROR; }

/// Iterates header or query values into `iterator`, with their lengths: a value holding a NUL
/// ("Bearer TOKEN\0junk") must not read as the text before it.
static inline int lookout_mhd_values(struct MHD_Connection *c, enum MHD_ValueKind kind,
                                     MHD_KeyValueIteratorN iterator, void *cls) {
    return MHD_get_connection_values_n(c, kind, iterator, cls);
}

static inline int lookout_mhd_hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/// Decodes %XX in the path and query values in place, as libmicrohttpd's own unescaping does,
/// except %00: decoded, it would end the C string there, and /api/v1/sources/NAME%00x would
/// serve NAME. It stays as the three characters, which match no name.
static size_t lookout_mhd_unescape(void *cls, struct MHD_Connection *c, char *s) {
    (void)cls;
    (void)c;
    char *read = s, *write = s;
    while (*read) {
        if (read[0] == '%' && read[1] && read[2]) {
            int high = lookout_mhd_hex(read[1]), low = lookout_mhd_hex(read[2]);
            if (high >= 0 && low >= 0 && (high | low) != 0) {
                *write++ = (char)(high * 16 + low);
                read += 3;
                continue;
            }
        }
        *write++ = *read++;
    }
    *write = 0;
    return (size_t)(write - s);
}

/// The peer's address as text ("127.0.0.1"), written into `out`; returns 0 when unknown.
static inline int lookout_mhd_client_address(struct MHD_Connection *c, char *out, socklen_t len) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!info || !info->client_addr) return 0;
    const struct sockaddr *sa = info->client_addr;
    if (sa->sa_family == AF_INET)
        return inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, len) != NULL;
    if (sa->sa_family == AF_INET6)
        return inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, len) != NULL;
    return 0;
}

#endif
