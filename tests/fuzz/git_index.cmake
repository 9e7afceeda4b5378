# The parser of git index files a sandboxed command wrote, for their gitlinks
# (policy/git_index.hpp).
pisandbox_fuzz_target(fuzz_git_index
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/git_index_fuzz.cpp
  LIBS pisandbox_policy)
