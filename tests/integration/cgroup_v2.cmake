# cgroup v2 delegation on the real kernel, with a private cgroup2 mount and the hugetlb
# controller (docs/security.md, "Resource limits"): as root; skipped for other users.
pisandbox_integration_test(integration_cgroup_v2
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/cgroup_v2_test.cpp
  LIBS pisandbox_sandbox)
