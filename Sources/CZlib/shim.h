// CZlib: zlib for Swift. deflateInit2 is a macro; this wrapper gives it a typed entry point.
#ifndef LOOKOUT_ZLIB_SHIM_H
#define LOOKOUT_ZLIB_SHIM_H

#include <zlib.h>

/// Starts a gzip stream (RFC 1952 header and trailer: windowBits 15 + 16) at `level`.
static inline int lookout_zlib_gzip_init(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

#endif
