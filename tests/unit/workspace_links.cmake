# Links of the workspace that lead out of it: what the sandbox shows where they lead, the
# bounded scan, and which of them a failed command named (docs/security.md, "Links out of the
# workspace").
pisandbox_unit_test(unit_workspace_links
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/workspace_links_test.cpp
  LIBS pisandbox_policy)
