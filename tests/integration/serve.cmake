# Protocol tests of `pi-sandbox serve`, driving the real binary over its stdin/stdout
# (docs/protocol.md).
pisandbox_integration_test(integration_serve
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/serve_test.cpp
  LIBS nlohmann_json::nlohmann_json OpenSSL::Crypto)
# The approval tests use the private test network of network.cmake; every event is checked
# against docs/protocol.schema.json.
include(${CMAKE_SOURCE_DIR}/cmake/protocol_schema.cmake)
target_include_directories(integration_serve PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated
                                                     ${PI_SANDBOX_PROTOCOL_SCHEMA_DIR})
