# The front end (README.md, "Usage"): unknown commands and options, --version, and what `policy` shows
# beyond the filesystem (the configuration file, network lists, host IPC, approvals).
pisandbox_integration_test(integration_cli
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/cli_test.cpp
  LIBS nlohmann_json::nlohmann_json)
