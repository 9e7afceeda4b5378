# The macOS runner (src/sandbox/macos/runner.hpp) run whole on Linux with a stand-in for
# sandbox-exec (docs/macos.md, "What is tested where"): everything but Seatbelt itself. Linux
# only: the test uses /proc and a private /etc/hosts in a mount namespace for its test names.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  pisandbox_unit_test(unit_macos_runner
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/macos_runner_test.cpp
    LIBS pisandbox_sandbox_macos pisandbox_proxy)
endif()
