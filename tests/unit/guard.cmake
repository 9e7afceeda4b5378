# The guard and its quarantine (docs/security.md, "The guard"), driven directly on a scratch
# directory: no sandbox, the real filesystem and inotify.
pisandbox_unit_test(unit_guard
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/guard_test.cpp
  LIBS pisandbox_sandbox)
