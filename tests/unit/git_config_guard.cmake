# The git configuration guard's keys: git's configuration syntax and the keys that make host git
# run a program or read another file (docs/security.md "The git configuration guard").
pisandbox_unit_test(unit_git_config_guard
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/git_config_guard_test.cpp
  LIBS pisandbox_policy)
