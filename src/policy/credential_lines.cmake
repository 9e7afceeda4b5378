# policy: tool configuration that mixes settings and credentials, shown inside as a copy
# without its credentials (docs/security.md, "Tool configuration without its credentials").
# Kept in its own target (and file) so the policy CMakeLists.txt can grow without conflicts.
# git's parser (the configuration guard's) is a target of its own: the copy of the user's git
# configuration reads with it, and the policy library uses both.
add_library(pisandbox_policy_git_config STATIC ${CMAKE_CURRENT_LIST_DIR}/git_config_guard.cpp
                                               ${CMAKE_CURRENT_LIST_DIR}/git_config_rules.cpp)
target_link_libraries(pisandbox_policy_git_config PUBLIC pisandbox_core)
add_library(pisandbox_policy_credential_lines STATIC
  ${CMAKE_CURRENT_LIST_DIR}/credential_lines.cpp
  ${CMAKE_CURRENT_LIST_DIR}/credential_lines_git.cpp
  ${CMAKE_CURRENT_LIST_DIR}/credential_lines_structured.cpp
  ${CMAKE_CURRENT_LIST_DIR}/credential_lines_text.cpp)
target_link_libraries(pisandbox_policy_credential_lines PUBLIC pisandbox_core
                                                        pisandbox_policy_git_config)
target_link_libraries(pisandbox_policy PUBLIC pisandbox_policy_credential_lines)
# The configuration files of install prefixes in the home (`<prefix>/etc/npmrc`, ...) and the
# files git's user configuration includes.
target_sources(pisandbox_policy PRIVATE ${CMAKE_CURRENT_LIST_DIR}/toolchain_configs.cpp
                                        ${CMAKE_CURRENT_LIST_DIR}/git_config_copies.cpp)
