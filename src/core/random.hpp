// pisandbox::core — random bytes from the kernel, for ids, tokens and credentials.
//
// getentropy(3) (glibc: getrandom(2) without flags; macOS: the same call) instead of OpenSSL's
// RAND_bytes: the bytes come from the same kernel source, but nothing is set up for them,
// where OpenSSL's first RAND_bytes reads its configuration file and builds its provider
// tables: 1.4 ms of every `pi-sandbox run` (docs/benchmarks.md, "Phases": `session`), which
// needs one random id.
#pragma once

#include <unistd.h>
#if defined(__APPLE__)
#include <sys/random.h>
#endif

#include <cerrno>
#include <cstddef>
#include <span>

#include "core/error.hpp"

namespace pisandbox::core {

/// Fills `bytes` with random bytes from the kernel (getentropy(3), 256 bytes at a time; it
/// blocks only until the kernel's pool is first initialized at boot). Error:
/// `getentropy(<n> bytes)` with errno (ENOSYS on a kernel without getrandom(2)).
inline Result<void> random_bytes(std::span<unsigned char> bytes) {
  constexpr std::size_t kMaxChunk = 256;  // getentropy(3) refuses more with EIO
  for (std::size_t at = 0; at < bytes.size(); at += kMaxChunk) {
    const std::size_t n = bytes.size() - at < kMaxChunk ? bytes.size() - at : kMaxChunk;
    if (::getentropy(bytes.data() + at, n) != 0)
      return fail_errno("getentropy(" + std::to_string(n) + " bytes)");
  }
  return {};
}

}  // namespace pisandbox::core
