# Signed commits: git signs through a real ssh-agent and gpg-agent on the host once their socket
# is allowed, with the public keys read-only and the private ones never readable
# (docs/security.md, "Signed commits").
pisandbox_integration_test(integration_signing
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/signing_test.cpp)
