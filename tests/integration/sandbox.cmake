pisandbox_integration_test(integration_sandbox
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/sandbox_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/lifetime_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/config_cli_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/limits_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/real_machine_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/monorepo_git_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/guard_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/full_disk_test.cpp
  LIBS nlohmann_json::nlohmann_json)
