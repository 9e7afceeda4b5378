// libFuzzer target for the parser of git index files (policy/git_index.hpp).
//
// Properties checked on every input, for both hash sizes (abort on violation):
//   - index_gitlinks never crashes nor reads out of bounds (ASan);
//   - an error has a text;
//   - every gitlink path is non-empty, holds no NUL and is at most kMaxGitIndexPathBytes.
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check(bytes, 20);
  check(bytes, 32);
  return 0;
}
