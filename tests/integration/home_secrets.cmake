# Secrets of the home's tool configuration that a command could read: git's user configuration
# and the configuration files of install prefixes (a virtual environment's pip.conf, nvm's global
# npmrc), each shown as a copy without its credentials (docs/security.md, "Tool configuration
# without its credentials").
pisandbox_integration_test(integration_home_secrets
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/home_secrets_test.cpp)
