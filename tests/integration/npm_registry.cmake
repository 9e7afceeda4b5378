# Tool configuration without its credentials, end to end: npm inside the sandbox installs from a
# private HTTPS registry whose address and CA are only in ~/.npmrc, next to a token it never sees
# (docs/security.md, "Tool configuration without its credentials").
pisandbox_integration_test(integration_npm_registry
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/npm_registry_test.cpp)
target_include_directories(integration_npm_registry PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)
