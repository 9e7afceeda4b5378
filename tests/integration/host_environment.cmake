# What pi-sandbox starts on the host: a real reviewer, real host-IPC runs of tmux and a real
# serve worker, with a caller environment that points into the workspace (docs/security.md,
# "What pi-sandbox starts on the host").
pisandbox_integration_test(integration_host_environment
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/host_environment_test.cpp
  LIBS nlohmann_json::nlohmann_json)
