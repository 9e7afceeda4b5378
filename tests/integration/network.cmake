# Integration tests of the per-command proxy with real clients and servers in a test
# network namespace (docs/network.md).
pisandbox_integration_test(integration_network
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/network_test.cpp)
# The network setup script is shared with bench/network.sh and embedded at build time.
file(READ ${CMAKE_CURRENT_LIST_DIR}/net_setup.sh PI_SANDBOX_NET_SETUP)
configure_file(${CMAKE_CURRENT_LIST_DIR}/net_setup.hpp.in
               ${CMAKE_CURRENT_BINARY_DIR}/generated/net_setup.hpp @ONLY)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${CMAKE_CURRENT_LIST_DIR}/net_setup.sh)
target_include_directories(integration_network PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)
