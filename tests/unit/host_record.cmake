# The record of a computation's host inputs (src/sandbox/linux/host_record.hpp): a real child
# under the recording seccomp filter, real files changed between the record and the check.
pisandbox_unit_test(unit_host_record
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/host_record_test.cpp
  LIBS pisandbox_sandbox)
