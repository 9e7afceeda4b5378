# Unit tests of src/rpc: the serve protocol's requests, events and framing.
pisandbox_unit_test(unit_rpc
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/rpc_test.cpp
  LIBS pisandbox_rpc)
