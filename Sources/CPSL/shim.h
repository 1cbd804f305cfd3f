// CPSL: libpsl (Debian's libpsl-dev, which libcurl already links) for Swift: the registrable
// domain of a host by the Public Suffix List.
#ifndef LOOKOUT_PSL_SHIM_H
#define LOOKOUT_PSL_SHIM_H

#include <libpsl.h>
#include <stddef.h>

/// The list: the newest of libpsl's built-in copy and the system's (Debian's publicsuffix).
/// Loaded once, never freed.
static inline const psl_ctx_t *lookout_psl_list(void) {
    static const psl_ctx_t *list = NULL;
    if (!list) list = psl_latest(NULL);
    if (!list) list = psl_builtin();
    return list;
}

/// The registrable domain of `host` (lower case, no trailing dot), a pointer into `host`; NULL
/// when it has none (it is a public suffix itself, like `co.uk`, or a single label).
static inline const char *lookout_psl_registrable_domain(const char *host) {
    const psl_ctx_t *list = lookout_psl_list();
    return list ? psl_registrable_domain(list, host) : NULL;
}

#endif
