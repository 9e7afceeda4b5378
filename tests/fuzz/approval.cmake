# Fuzz targets of src/approval: the reviewer's stdout, BoundaryRequest JSON and the shell
# commands read by the hard-deny rules.
pisandbox_fuzz_target(fuzz_reviewer_output
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/reviewer_output_fuzz.cpp
  LIBS pisandbox_approval)
