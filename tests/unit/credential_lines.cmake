# Tool configuration without its credentials: exact copies of npmrc, .yarnrc.yml, pip.conf,
# Cargo's config.toml, Maven's settings.xml, Docker's config.json and git's configuration
# (policy/credential_lines.hpp), and the configuration files of install prefixes
# (policy/toolchain_configs.hpp).
pisandbox_unit_test(unit_credential_lines
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/credential_lines_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/credential_lines_git_test.cpp
  LIBS pisandbox_policy)
