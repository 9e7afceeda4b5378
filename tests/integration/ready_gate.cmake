# The gate of a sandbox made ahead (sandbox::RunOptions::gate, docs/security.md "A sandbox made
# ahead"): a real sandbox made by the session's prepare_ready(), its command held before its
# execve(2) while the record of the host is compared, and thrown away when the host changed.
pisandbox_integration_test(integration_ready_gate
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/ready_gate_test.cpp
  LIBS pisandbox_session)
