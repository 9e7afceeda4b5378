# The network counters that tell a direct connection attempt (docs/network.md, "Clients that
# ignore the proxy").
pisandbox_unit_test(unit_net_counters
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/net_counters_test.cpp
  LIBS pisandbox_sandbox)
