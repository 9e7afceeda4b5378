# policy: the lines of git's credential helper protocol (git-credential(1)), read by
# `pi-sandbox credential-helper` and by the host side that answers it (docs/network.md,
# "Credentials for HTTPS"). A target of its own so that the fuzz preset builds it alone.
add_library(pisandbox_policy_git_credential STATIC ${CMAKE_CURRENT_LIST_DIR}/git_credential.cpp)
target_link_libraries(pisandbox_policy_git_credential PUBLIC pisandbox_core)
target_link_libraries(pisandbox_policy PUBLIC pisandbox_policy_git_credential)
