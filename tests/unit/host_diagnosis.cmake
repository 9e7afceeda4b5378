# Why the sandbox cannot be made here and the fix that works (src/sandbox/linux/host_diagnosis,
# docs/containers.md): the diagnosis fed facts, no probing; and the AppArmor profile the package
# ships, parsed by apparmor_parser -Q.
pisandbox_unit_test(unit_host_diagnosis
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/host_diagnosis_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/apparmor_profile_test.cpp
  LIBS pisandbox_sandbox)
