# Integration tests of the approval broker through `pi-sandbox approvals`: real reviewer
# programs, the terminal prompt on a pseudo-terminal, the audit file under concurrency.
pisandbox_integration_test(integration_approvals
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/approvals_test.cpp
  LIBS nlohmann_json::nlohmann_json util)
# A real reviewer asked by the proxy needs a name that resolves: the private test network of
# network.cmake.
target_include_directories(integration_approvals PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)
