# The git operation a failed command's words name, for the line after an operation in a
# monorepo's package that stopped before it wrote anything (src/sandbox/linux/git_state.hpp).
pisandbox_unit_test(unit_git_operation
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/git_operation_test.cpp
  LIBS pisandbox_sandbox pisandbox_shell)
