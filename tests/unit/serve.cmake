# Unit tests of src/serve that need no worker process: the internal ledger lines between serve
# and its workers, and the SessionBook that answers them (docs/ARCHITECTURE.md, "The approval
# ledger between serve and its workers").
pisandbox_unit_test(unit_serve
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/serve_ledger_test.cpp
  LIBS pisandbox_serve)
