// The one way a test that probes for something it needs (a kernel feature, a private mount
// namespace, a tool) gives up: it skips with the reason, or, when the run requires everything
// (PI_SANDBOX_REQUIRE_ALL=1, which .ci/run sets through scripts/test), it fails with it, so a
// suite that can no longer test something cannot pass in silence. Used by the unit tests and,
// through tests/integration/harness.hpp, the integration tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace pisandbox::testing {

/// Whether PI_SANDBOX_REQUIRE_ALL is "1": every skip becomes a failure.
inline bool require_all() {
  const char* env = std::getenv("PI_SANDBOX_REQUIRE_ALL");
  return env != nullptr && std::string_view(env) == "1";
}

}  // namespace pisandbox::testing

/// Unless `condition` holds, skips the test with `reason` or, when PI_SANDBOX_REQUIRE_ALL=1,
/// fails it with "required: <reason>". `reason` is streamed, so it may be `"text: " << value`.
/// Use it in the test body (it returns from the test, as GTEST_SKIP() and FAIL() do).
#define PI_SANDBOX_REQUIRE(condition, reason)                                    \
  do {                                                                           \
    if (!(condition)) {                                                          \
      if (::pisandbox::testing::require_all()) FAIL() << "required: " << reason; \
      GTEST_SKIP() << reason;                                                    \
    }                                                                            \
  } while (0)
