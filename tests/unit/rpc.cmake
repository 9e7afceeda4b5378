# Unit tests of src/rpc: the serve protocol's requests, events and framing, and what src/rpc
# builds and accepts against docs/protocol.schema.json.
include(${CMAKE_SOURCE_DIR}/cmake/protocol_schema.cmake)
pisandbox_unit_test(unit_rpc
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/rpc_test.cpp ${CMAKE_CURRENT_LIST_DIR}/rpc_schema_test.cpp
  LIBS pisandbox_rpc nlohmann_json::nlohmann_json)
target_include_directories(unit_rpc PRIVATE ${PI_SANDBOX_PROTOCOL_SCHEMA_DIR})
