# Integration tests of the host-IPC fallback with real host services: a tmux server and an
# ssh-agent started by the test on socket paths of their own (docs/host-ipc.md).
pisandbox_integration_test(integration_hostipc
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/hostipc_test.cpp
  LIBS nlohmann_json::nlohmann_json)
