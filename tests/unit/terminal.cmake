# The private pseudo-terminal: when a command gets one and how it is wired (pure), and the
# lease that lends the caller's terminal to a question (docs/security.md, "The terminal").
pisandbox_unit_test(unit_terminal
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/terminal_test.cpp
  LIBS pisandbox_sandbox)
