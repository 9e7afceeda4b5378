// Where the tests of the weaker sandbox (docs/security.md, "Where namespaces cannot be made")
// find pi-sandbox-deny-userns (deny_userns.cpp), which runs pi-sandbox where no user namespace
// can be made.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace pisandbox::testing {

/// $PI_SANDBOX_DENY_USERNS, else pi-sandbox-deny-userns beside the test binary (scripts/test
/// copies both), else the one CMake built.
inline std::string deny_userns_wrapper() {
  if (const char* set = std::getenv("PI_SANDBOX_DENY_USERNS"); set != nullptr && *set != '\0')
    return set;
  std::error_code error;
  const std::filesystem::path beside =
      std::filesystem::read_symlink("/proc/self/exe", error).parent_path() /
      "pi-sandbox-deny-userns";
  if (!error && ::access(beside.c_str(), X_OK) == 0) return beside.string();
  return PI_SANDBOX_DENY_USERNS_BUILT;
}

}  // namespace pisandbox::testing
