# Unit tests of src/shell (the shell-command reader behind the hard-deny rules).
pisandbox_unit_test(unit_shell
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/shell_test.cpp
  LIBS pisandbox_shell)
