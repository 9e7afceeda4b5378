# The gitlinks of a git index: index files written by the real git binary, git's index format
# on synthetic bytes and malformed indexes (policy/git_index.hpp).
pisandbox_unit_test(unit_git_index
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/git_index_test.cpp
  LIBS pisandbox_policy)
