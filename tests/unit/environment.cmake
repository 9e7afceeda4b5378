# The environment of a sandboxed command: the credential filter and the proxy's knobs
# (docs/security.md "Environment", docs/network.md).
pisandbox_unit_test(unit_environment
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/environment_test.cpp
  LIBS pisandbox_policy_environment)
