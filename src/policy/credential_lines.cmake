# policy: tool configuration that mixes settings and credentials, shown inside as a copy
# without its credentials (docs/security.md, "Tool configuration without its credentials").
# Kept in its own target (and file) so the policy CMakeLists.txt can grow without conflicts.
add_library(pisandbox_policy_credential_lines STATIC
  ${CMAKE_CURRENT_LIST_DIR}/credential_lines.cpp
  ${CMAKE_CURRENT_LIST_DIR}/credential_lines_structured.cpp
  ${CMAKE_CURRENT_LIST_DIR}/credential_lines_text.cpp)
target_link_libraries(pisandbox_policy_credential_lines PUBLIC pisandbox_core)
target_link_libraries(pisandbox_policy PUBLIC pisandbox_policy_credential_lines)
