# Fuzz targets of src/proxy/protocol (docs/network.md): the HTTP/1.1 request, response and
# chunked-body parsers; the SOCKS5 greeting and request with the host-name normaliser; the
# parent proxy URL and NO_PROXY.
pisandbox_fuzz_target(fuzz_proxy_http
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/proxy_http_fuzz.cpp
  LIBS pisandbox_proxy_protocol)
pisandbox_fuzz_target(fuzz_proxy_socks5
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/proxy_socks5_fuzz.cpp
  LIBS pisandbox_proxy_protocol)
pisandbox_fuzz_target(fuzz_proxy_parent
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/proxy_parent_fuzz.cpp
  LIBS pisandbox_proxy_protocol)
