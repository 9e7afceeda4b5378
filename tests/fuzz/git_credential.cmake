# The reader of git's credential helper protocol (policy/git_credential.hpp): the lines git
# inside the sandbox sends `pi-sandbox credential-helper`, and the host's helper's answer.
pisandbox_fuzz_target(fuzz_git_credential
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/git_credential_fuzz.cpp
  LIBS pisandbox_policy_git_credential)
