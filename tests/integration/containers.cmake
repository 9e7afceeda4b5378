# What pi-sandbox says and does where a container's seccomp profile refuses new user
# namespaces (docs/containers.md): `doctor` run under a filter like Docker's default one.
pisandbox_integration_test(integration_containers
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/container_test.cpp
  LIBS PkgConfig::SECCOMP)
