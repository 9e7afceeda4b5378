# A command run from a terminal gets a private pseudo-terminal (docs/security.md, "The
# terminal"): driven through a real pty, as root and as the unprivileged user.
pisandbox_integration_test(integration_terminal
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/terminal_test.cpp)
# The approval questions' tests use the private test network of network.cmake.
target_include_directories(integration_terminal PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)
