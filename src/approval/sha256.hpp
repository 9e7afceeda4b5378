// pisandbox::approval — SHA-256 by OpenSSL's libcrypto, loaded when the first hash is asked for.
//
// A request hash is needed only when a boundary request is decided by the broker; most
// commands ask nothing. Linked at start, libcrypto costs every command its load: the
// relocation of about 360 KiB of its tables (private pages) and its share of the pages it
// touches (docs/benchmarks.md, "Memory"). So on Linux it is opened with dlopen(3) the first
// time, by the soname of the OpenSSL the build was compiled against (`libcrypto.so.3`), and
// kept for the life of the process.
#pragma once

#include <string>
#include <string_view>

#include "core/error.hpp"

namespace pisandbox::approval {

/// SHA-256 (FIPS 180-4) of `bytes`: 64 lowercase hex digits. Thread-safe.
/// Errors: `dlopen(libcrypto.so.3): <dlerror(3)'s text>` (OpenSSL's runtime library is
/// missing: the package `libssl3` on Debian and Ubuntu), `dlsym(<name>) in libcrypto.so.3: not
/// found`, `EVP_Digest(SHA-256) failed`.
[[nodiscard]] core::Result<std::string> sha256_hex(std::string_view bytes);

}  // namespace pisandbox::approval
