# git over HTTPS with the user's credentials kept on the host (docs/network.md, "Credentials for
# HTTPS"): a git server asking for basic auth on 203.0.113.2 in a test network (net_setup.sh),
# and git's `store` helper on the host.
pisandbox_integration_test(integration_git_credentials
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/git_credentials_test.cpp
  LIBS nlohmann_json::nlohmann_json)
target_include_directories(integration_git_credentials PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)
