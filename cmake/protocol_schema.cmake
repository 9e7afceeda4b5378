# docs/protocol.schema.json as a C++ header (`protocol_schema.hpp`, kProtocolSchema) in
# ${CMAKE_BINARY_DIR}/generated-schema, for the tests that check the protocol against it: built
# in, so that a test binary copied elsewhere (scripts/test, the unprivileged user) needs no
# source tree. Changing the schema reconfigures.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${CMAKE_SOURCE_DIR}/docs/protocol.schema.json)
file(READ ${CMAKE_SOURCE_DIR}/docs/protocol.schema.json PI_SANDBOX_PROTOCOL_SCHEMA)
file(WRITE ${CMAKE_BINARY_DIR}/generated-schema/protocol_schema.hpp.in
     "// Generated from docs/protocol.schema.json by cmake/protocol_schema.cmake.\n"
     "#pragma once\n"
     "inline constexpr const char* kProtocolSchema = R\"schema(@PI_SANDBOX_PROTOCOL_SCHEMA@)schema\";\n")
configure_file(${CMAKE_BINARY_DIR}/generated-schema/protocol_schema.hpp.in
               ${CMAKE_BINARY_DIR}/generated-schema/protocol_schema.hpp @ONLY)
set(PI_SANDBOX_PROTOCOL_SCHEMA_DIR ${CMAKE_BINARY_DIR}/generated-schema)
