# The git configuration guard's parser of `.git/config` files a sandboxed command wrote
# (docs/security.md "The git configuration guard").
pisandbox_fuzz_target(fuzz_git_config
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/git_config_fuzz.cpp
  LIBS pisandbox_policy)
