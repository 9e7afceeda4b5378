# Integration tests of the per-command proxy with real clients and servers in a test
# network namespace (issue 5 "Tests").
pisandbox_integration_test(integration_network
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/network_test.cpp)
