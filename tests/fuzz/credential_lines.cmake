# The reader of tool configuration that mixes settings and credentials (policy/credential_lines.hpp).
pisandbox_fuzz_target(fuzz_credential_lines
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/credential_lines_fuzz.cpp
  LIBS pisandbox_policy_credential_lines)
