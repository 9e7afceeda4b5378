# The supervisor's release of its program's pages after the set-up (docs/benchmarks.md,
# "The set-up's program pages let go").
pisandbox_unit_test(unit_program_pages
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/program_pages_test.cpp
  LIBS pisandbox_sandbox)
