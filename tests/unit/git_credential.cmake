# git's credential helper protocol (policy/git_credential.hpp): messages, queries, answers.
pisandbox_unit_test(unit_git_credential
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/git_credential_test.cpp
  LIBS pisandbox_policy_git_credential)
