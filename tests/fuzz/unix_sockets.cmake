# The socket addresses a sandboxed command passes to bind() and connect() (read by the
# supervisor's Unix-socket broker) and the expansion of hostIPC.allowedSockets entries.
pisandbox_fuzz_target(fuzz_unix_address
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/unix_address_fuzz.cpp
          ${CMAKE_SOURCE_DIR}/src/sandbox/linux/unix_address.cpp
  LIBS pisandbox_policy)
target_include_directories(fuzz_unix_address PRIVATE ${CMAKE_SOURCE_DIR}/src)
