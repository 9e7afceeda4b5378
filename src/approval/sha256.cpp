#include "approval/sha256.hpp"

#include <openssl/evp.h>
#include <openssl/opensslv.h>

#include <array>
#include <span>

#include "approval/hex.hpp"

#if defined(__linux__)
#include <dlfcn.h>
#endif

namespace pisandbox::approval {
namespace {

struct LibCrypto {
  decltype(&EVP_Digest) digest = nullptr;
  decltype(&EVP_sha256) sha256 = nullptr;
  std::string error;  ///< why it could not be loaded; empty when it was
};

#if defined(__linux__)
LibCrypto load() {
  const std::string soname = "libcrypto.so." + std::to_string(OPENSSL_VERSION_MAJOR);
  LibCrypto lib;
  // RTLD_NODELETE: never unloaded, so the pointers hold for the life of the process.
  void* handle = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    lib.error = "dlopen(" + soname + "): " + (why != nullptr ? why : "failed");
    return lib;
  }
  const auto symbol = [&](const char* name, auto& out) {
    out = reinterpret_cast<std::remove_reference_t<decltype(out)>>(::dlsym(handle, name));
    if (out == nullptr && lib.error.empty())
      lib.error = std::string("dlsym(") + name + ") in " + soname + ": not found";
  };
  symbol("EVP_Digest", lib.digest);
  symbol("EVP_sha256", lib.sha256);
  return lib;
}
#else
LibCrypto load() {
  return {&EVP_Digest, &EVP_sha256, {}};
}
#endif

const LibCrypto& libcrypto() {
  static const LibCrypto loaded = load();  // thread-safe initialisation (C++11 [stmt.dcl])
  return loaded;
}

}  // namespace

core::Result<std::string> sha256_hex(std::string_view bytes) {
  const LibCrypto& lib = libcrypto();
  if (!lib.error.empty()) return core::fail(lib.error);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (lib.digest(bytes.data(), bytes.size(), digest.data(), &length, lib.sha256(), nullptr) != 1)
    return core::fail("EVP_Digest(SHA-256) failed");
  return to_lower_hex(std::span(digest.data(), length));
}

}  // namespace pisandbox::approval
