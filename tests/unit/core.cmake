# Unit tests of src/core (header-only): the Error every layer returns, UniqueFd, write_all and
# printable(), against real descriptors.
pisandbox_unit_test(unit_core
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/core_test.cpp
  LIBS pisandbox_core Threads::Threads)
