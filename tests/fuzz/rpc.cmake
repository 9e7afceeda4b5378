# Fuzz target of src/rpc: request lines of `pi-sandbox serve` from the host.
pisandbox_fuzz_target(fuzz_rpc_request
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/rpc_request_fuzz.cpp
  LIBS pisandbox_rpc)
