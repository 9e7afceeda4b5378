# The environment of what pi-sandbox starts on the host: the reviewer, the host-IPC run and
# serve's workers (docs/security.md, "What pi-sandbox starts on the host").
pisandbox_unit_test(unit_host_environment
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/host_environment_test.cpp
  LIBS pisandbox_policy_environment)
