# Unit tests of src/serve: the internal ledger lines between serve and its workers and the
# SessionBook that answers them (docs/ARCHITECTURE.md, "The approval ledger between serve and
# its workers"); serve's event loop through its system-call seam (serve/sys_calls.hpp):
# descriptors exhausted at each call, workers that cannot start, EINTR, EAGAIN, short writes
# and a host that reads nothing (docs/protocol.md, "Flow control").
pisandbox_unit_test(unit_serve
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/serve_ledger_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/serve_test.cpp
  LIBS pisandbox_serve)
