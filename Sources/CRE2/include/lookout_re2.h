// Google's RE2 (Debian's libre2-dev) behind `extern "C"` functions over one opaque handle: the
// engine Go's regexp follows, so blackbox_exporter's patterns mean here what they mean there, and
// a match takes time linear in its input. RE2 is C++; this header is plain C so that no Swift
// module needs C++ interop.
#ifndef LOOKOUT_RE2_H
#define LOOKOUT_RE2_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A compiled pattern; `lookout_re2_free` releases it.
typedef struct lookout_re2 lookout_re2;

/// Why a pattern did not compile: RE2's own words (`error`, NUL-terminated, cut to `capacity`)
/// and the part of the pattern it names (`argument`, likewise).
typedef struct lookout_re2_error {
    int code;
    char message[256];
    char argument[256];
} lookout_re2_error;

/// Compiles `length` bytes of `pattern` (UTF-8, Perl classes, no POSIX mode: Go's syntax) with
/// at most `max_memory` bytes for the compiled program and its DFA caches. Returns NULL and fills
/// `error` when the pattern is not valid or too large.
lookout_re2 *lookout_re2_compile(const char *pattern, size_t length, int64_t max_memory, lookout_re2_error *error);

void lookout_re2_free(lookout_re2 *re);

/// The number of capturing groups (without group 0).
int lookout_re2_group_count(const lookout_re2 *re);

/// The number of the group named `name`, or -1.
int lookout_re2_group_named(const lookout_re2 *re, const char *name, size_t length);

/// The size of the compiled program, RE2's measure of a pattern's cost.
int lookout_re2_program_size(const lookout_re2 *re);

/// Searches `length` bytes of `text` for the leftmost match (anywhere, or the whole of it when
/// `whole` is not 0). Returns 1 on a match, 0 on none. With `groups` > 0, `offsets` receives
/// 2 × `groups` byte offsets (start, end) of group 0 and the next ones; -1 for a group that took
/// no part in the match. Returns -1 when memory for the groups could not be had.
int lookout_re2_match(const lookout_re2 *re, const char *text, size_t length, int whole, int64_t *offsets, int groups);

#ifdef __cplusplus
}
#endif

#endif
