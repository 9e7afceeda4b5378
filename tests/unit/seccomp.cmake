# The seccomp program compiled into the binary at build time against libseccomp's at run time,
# and the phase trace's encoding between the sandbox's processes.
pisandbox_unit_test(unit_seccomp
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/seccomp_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/phase_trace_test.cpp
  LIBS pisandbox_sandbox)
