#include "lookout_re2.h"

#include <re2/re2.h>

#include <cstring>
#include <string>
#include <vector>

struct lookout_re2 {
    re2::RE2 *regex;
};

static void copy_text(char *to, size_t capacity, const std::string &text) {
    size_t count = text.size() < capacity - 1 ? text.size() : capacity - 1;
    std::memcpy(to, text.data(), count);
    to[count] = 0;
}

lookout_re2 *lookout_re2_compile(const char *pattern, size_t length, int64_t max_memory, lookout_re2_error *error) {
    re2::RE2::Options options;
    options.set_encoding(re2::RE2::Options::EncodingUTF8);
    options.set_log_errors(false);
    options.set_max_mem(max_memory);
    // Go's syntax: Perl's classes and word boundaries, `.` not matching `\n`, `$` only at the end
    // of the text unless (?m): what RE2 does with posix_syntax off.
    options.set_posix_syntax(false);
    options.set_longest_match(false);
    re2::RE2 *regex = nullptr;
    // No C++ exception may cross into Swift: an allocation that fails is an error like any other.
    try {
        regex = new re2::RE2(re2::StringPiece(pattern, length), options);
    } catch (...) {
        regex = nullptr;
    }
    if (regex == nullptr) {
        error->code = -1;
        copy_text(error->message, sizeof error->message, "out of memory");
        error->argument[0] = 0;
        return nullptr;
    }
    if (!regex->ok()) {
        error->code = regex->error_code();
        copy_text(error->message, sizeof error->message, regex->error());
        copy_text(error->argument, sizeof error->argument, regex->error_arg());
        delete regex;
        return nullptr;
    }
    auto *handle = new (std::nothrow) lookout_re2{regex};
    if (handle == nullptr) {
        error->code = -1;
        copy_text(error->message, sizeof error->message, "out of memory");
        error->argument[0] = 0;
    }
    if (handle == nullptr) delete regex;
    return handle;
}

void lookout_re2_free(lookout_re2 *re) {
    if (re == nullptr) return;
    delete re->regex;
    delete re;
}

int lookout_re2_group_count(const lookout_re2 *re) { return re->regex->NumberOfCapturingGroups(); }

int lookout_re2_group_named(const lookout_re2 *re, const char *name, size_t length) {
    const auto &names = re->regex->NamedCapturingGroups();
    auto found = names.find(std::string(name, length));
    return found == names.end() ? -1 : found->second;
}

int lookout_re2_program_size(const lookout_re2 *re) { return re->regex->ProgramSize(); }

int lookout_re2_match(const lookout_re2 *re, const char *text, size_t length, int whole, int64_t *offsets, int groups) {
    re2::StringPiece input(text, length);
    auto anchor = whole ? re2::RE2::ANCHOR_BOTH : re2::RE2::UNANCHORED;
    if (groups <= 0) return re->regex->Match(input, 0, length, anchor, nullptr, 0) ? 1 : 0;
    std::vector<re2::StringPiece> found;
    try {
        found.resize(static_cast<size_t>(groups));
    } catch (...) {
        return -1;
    }
    if (!re->regex->Match(input, 0, length, anchor, found.data(), groups)) return 0;
    for (int index = 0; index < groups; index++) {
        const auto &piece = found[static_cast<size_t>(index)];
        if (piece.data() == nullptr) {
            offsets[2 * index] = -1;
            offsets[2 * index + 1] = -1;
        } else {
            offsets[2 * index] = piece.data() - text;
            offsets[2 * index + 1] = piece.data() - text + static_cast<int64_t>(piece.size());
        }
    }
    return 1;
}
