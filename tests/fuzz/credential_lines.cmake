# The reader of tool configuration that mixes settings and credentials (policy/credential_lines.hpp).
pisandbox_fuzz_target(fuzz_credential_lines
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/credential_lines_fuzz.cpp
  LIBS pisandbox_policy_credential_lines)
# The reader of git's configuration that makes the copy of ~/.gitconfig without its credentials
# (ConfigFormat::GitConfig).
pisandbox_fuzz_target(fuzz_git_config_copy
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/git_config_copy_fuzz.cpp
  LIBS pisandbox_policy_credential_lines)
