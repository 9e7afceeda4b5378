// libFuzzer target for the parser of git index files (policy/git_index.hpp).
//
// Properties checked on every input, for both hash sizes (abort on violation):
//   - index_gitlinks never crashes nor reads out of bounds (ASan);
//   - an error has a text;
//   - every gitlink path is non-empty, holds no NUL and is at most kMaxGitIndexPathBytes;
//   - split_index_entries (the input cut in two: a 32-bit big-endian length, the split index,
//     the shared index) never crashes, and its entries have such paths, in strictly ascending
//     (path, stage) order.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "policy/git_index.hpp"

namespace {

namespace policy = pisandbox::policy;

[[noreturn]] void violation(const char* what, std::string_view detail) {
  std::fprintf(stderr, "property violated: %s: %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

void check(std::string_view bytes, std::size_t hash_bytes) {
  const auto gitlinks = policy::index_gitlinks(bytes, hash_bytes);
  if (!gitlinks) {
    if (gitlinks.error().empty()) violation("error without text", "");
    return;
  }
  for (const auto& path : *gitlinks) {
    if (path.empty()) violation("empty path", "");
    if (path.find('\0') != std::string_view::npos) violation("NUL in path", path);
    if (path.size() > policy::kMaxGitIndexPathBytes) violation("path too long", path);
  }
}

void check_split(std::string_view bytes, std::size_t hash_bytes) {
  if (bytes.size() < 4) return;
  std::size_t length = 0;
  for (std::size_t i = 0; i < 4; ++i) length = (length << 8) | static_cast<unsigned char>(bytes[i]);
  bytes.remove_prefix(4);
  length = std::min(length, bytes.size());
  const auto merged =
      policy::split_index_entries(bytes.substr(0, length), bytes.substr(length), hash_bytes);
  if (!merged) {
    if (merged.error().empty()) violation("split: error without text", "");
    return;
  }
  for (std::size_t i = 0; i < merged->size(); ++i) {
    const auto& e = (*merged)[i];
    if (e.path.empty()) violation("split: empty path", "");
    if (e.path.find('\0') != std::string::npos) violation("split: NUL in path", e.path);
    if (e.path.size() > policy::kMaxGitIndexPathBytes) violation("split: path too long", e.path);
    if (i > 0) {
      const auto& p = (*merged)[i - 1];
      if (!(p.path < e.path || (p.path == e.path && p.stage < e.stage)))
        violation("split: entries out of order", e.path);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check(bytes, 20);
  check(bytes, 32);
  check_split(bytes, 20);
  check_split(bytes, 32);
  return 0;
}
