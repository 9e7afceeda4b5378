# Links of the workspace that lead out of it: what the sandbox shows where they lead, the
# bounded scan, and which of them a failed command named (docs/security.md, "Links out of the
# workspace"), and the local remotes a failed git command read that the sandbox hides
# ("Remotes in the hidden home").
pisandbox_unit_test(unit_workspace_links
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/workspace_links_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/git_remotes_test.cpp
  LIBS pisandbox_policy)
