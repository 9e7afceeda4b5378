# Tool configuration without its credentials: exact copies of npmrc, .yarnrc.yml, pip.conf,
# Cargo's config.toml, Maven's settings.xml and Docker's config.json (policy/credential_lines.hpp).
pisandbox_unit_test(unit_credential_lines
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/credential_lines_test.cpp
  LIBS pisandbox_policy)
