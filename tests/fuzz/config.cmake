# Trusted configuration parser and domain patterns (issue 3).
pisandbox_fuzz_target(fuzz_config
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/config_fuzz.cpp
  LIBS pisandbox_config nlohmann_json::nlohmann_json)
