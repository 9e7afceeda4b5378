# Unit tests of src/sandbox (shared by every runner): the output pipes a command writes into.
pisandbox_unit_test(unit_sandbox
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/output_pipes_test.cpp
  LIBS pisandbox_sandbox_io)
