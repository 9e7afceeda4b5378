# Unit tests of src/hostipc: every branch of the host-IPC fallback with scripted runners,
# a scripted approver and a clock advanced by hand (docs/host-ipc.md).
pisandbox_unit_test(unit_hostipc
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/hostipc_test.cpp
  LIBS pisandbox_hostipc)
