# The weaker sandbox's plans (src/sandbox/linux/landlock_only.hpp): its Landlock rules from a
# policy and a listing, its seccomp table.
pisandbox_unit_test(unit_landlock_only
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/landlock_only_test.cpp
  LIBS pisandbox_sandbox)
