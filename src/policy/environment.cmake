# policy: the environment a sandboxed command inherits (the credential filter) and the
# variables that point its tools at the proxy (docs/security.md "Environment", docs/network.md),
# and the environment of what pi-sandbox starts on the host (host_environment.hpp).
# Kept in its own target (and file) so the policy CMakeLists.txt can grow without conflicts.
add_library(pisandbox_policy_environment STATIC ${CMAKE_CURRENT_LIST_DIR}/environment.cpp
                                                ${CMAKE_CURRENT_LIST_DIR}/proxy_environment.cpp
                                                ${CMAKE_CURRENT_LIST_DIR}/host_environment.cpp)
target_link_libraries(pisandbox_policy_environment PUBLIC pisandbox_core)
