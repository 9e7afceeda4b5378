# Links of the workspace that lead out of it: what `policy` lists, and the line after a failed
# command that named one (docs/security.md, "Links out of the workspace"); the line after a
# failed fetch, pull or clone of a remote in the hidden home ("Remotes in the hidden home").
pisandbox_integration_test(integration_workspace_links
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/workspace_links_test.cpp
  LIBS nlohmann_json::nlohmann_json)
