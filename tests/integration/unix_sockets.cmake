# Unix sockets inside the sandbox and brokered to the host: the sandbox's own sockets, host
# sockets refused, allowed by list or by approval, and a real ssh-agent (docs/host-ipc.md).
pisandbox_integration_test(integration_unix_sockets
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/unix_socket_test.cpp
  LIBS nlohmann_json::nlohmann_json)
