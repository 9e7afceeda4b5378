# The environment a sandboxed command inherits: the credential filter, its configuration, what
# `policy` shows, and what pi-sandbox sets after it (docs/security.md "Environment").
pisandbox_integration_test(integration_environment
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/environment_test.cpp
  LIBS nlohmann_json::nlohmann_json)
