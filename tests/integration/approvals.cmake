# Integration tests of the approval broker through `pi-sandbox approvals`: real reviewer
# programs, the terminal prompt on a pseudo-terminal, the audit file under concurrency.
pisandbox_integration_test(integration_approvals
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/approvals_test.cpp
  LIBS nlohmann_json::nlohmann_json util)
# A real reviewer asked by the proxy needs a name that resolves: the private test network of
# network.cmake.
target_include_directories(integration_approvals PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)

# The approvals front end (docs/approvals.md, "The reviewer program" and "Reading the log"):
# `--reviewer`, the reviewer example of
# docs/approvals.md, `approvals tail`.
pisandbox_integration_test(integration_approvals_cli
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/approvals_cli_test.cpp
  LIBS nlohmann_json::nlohmann_json)
# The reviewer example of docs/approvals.md and its two results, embedded at build time so
# that the test runs exactly what the document shows. Each block follows a marker comment.
file(READ ${CMAKE_SOURCE_DIR}/docs/approvals.md approvals_doc)
foreach(example IN ITEMS "reviewer" "reviewer allowed" "reviewer deferred")
  string(REGEX MATCH "<!-- example: ${example} -->\n```[a-z]*\n([^`]*)```" matched
               "${approvals_doc}")
  if(NOT matched)
    message(FATAL_ERROR "docs/approvals.md has no block after <!-- example: ${example} -->")
  endif()
  string(REPLACE " " "_" name "${example}")
  string(TOUPPER "${name}" name)
  set(PI_SANDBOX_EXAMPLE_${name} "${CMAKE_MATCH_1}")
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/approvals_cli_example.hpp.in
               ${CMAKE_CURRENT_BINARY_DIR}/generated/approvals_cli_example.hpp @ONLY)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${CMAKE_SOURCE_DIR}/docs/approvals.md)
target_include_directories(integration_approvals_cli PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)
