# The pure parts of Unix-socket brokering: reading a socket address as the kernel does, the
# expansion of hostIPC.allowedSockets, and its configuration (docs/host-ipc.md, "Host sockets").
pisandbox_unit_test(unit_unix_sockets
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/unix_sockets_test.cpp
  LIBS pisandbox_sandbox pisandbox_policy pisandbox_config)
