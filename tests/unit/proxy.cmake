# Unit tests of src/proxy (docs/network.md): the pure protocol core.
pisandbox_unit_test(unit_proxy
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/proxy_credential_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/proxy_destination_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/proxy_http_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/proxy_parent_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/proxy_socks5_test.cpp
  LIBS pisandbox_proxy_protocol pisandbox_policy_domain)

# The Asio server with real sockets on 127.0.0.1 (test names through a private /etc/hosts in a
# mount namespace of the test process; skipped with the reason when none can be made).
pisandbox_unit_test(unit_proxy_server
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/proxy_server_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/lookup_cache_test.cpp
  LIBS pisandbox_proxy)
