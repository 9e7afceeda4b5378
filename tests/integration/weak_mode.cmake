# The weaker sandbox where user namespaces cannot be made (docs/security.md, "Where namespaces
# cannot be made"): pi-sandbox run through pi-sandbox-deny-userns, a seccomp filter like Docker's
# default profile (clone/unshare with CLONE_NEWUSER: EPERM, clone3: ENOSYS).
add_executable(pi-sandbox-deny-userns ${CMAKE_CURRENT_LIST_DIR}/deny_userns.cpp)
target_link_libraries(pi-sandbox-deny-userns PRIVATE PkgConfig::SECCOMP)
pisandbox_integration_test(integration_weak_mode
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/weak_mode_test.cpp)
foreach(target IN ITEMS integration_weak_mode integration_network)
  add_dependencies(${target} pi-sandbox-deny-userns)
  target_compile_definitions(${target} PRIVATE
    PI_SANDBOX_DENY_USERNS_BUILT="$<TARGET_FILE:pi-sandbox-deny-userns>")
endforeach()
