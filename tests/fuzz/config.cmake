# Trusted configuration parser and domain patterns (docs/configuration.md).
pisandbox_fuzz_target(fuzz_config
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/config_fuzz.cpp
  LIBS pisandbox_config nlohmann_json::nlohmann_json)
