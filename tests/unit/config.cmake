# Trusted configuration and domain patterns (docs/configuration.md).
pisandbox_unit_test(unit_config
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/config_test.cpp ${CMAKE_CURRENT_LIST_DIR}/domain_pattern_test.cpp
  LIBS pisandbox_config)
