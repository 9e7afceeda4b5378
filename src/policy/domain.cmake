# policy::DomainPattern — the network domain patterns of the trusted configuration.
# Kept in its own target (and file) so the policy CMakeLists.txt can grow without conflicts.
add_library(pisandbox_policy_domain STATIC ${CMAKE_CURRENT_LIST_DIR}/domain_pattern.cpp)
target_link_libraries(pisandbox_policy_domain PUBLIC pisandbox_core)
