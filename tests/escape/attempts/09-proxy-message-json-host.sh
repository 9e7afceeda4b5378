#!/usr/bin/env bash
# attempt: `CONNECT evil"},{"a":1}:443` through the proxy is refused as an "IP address literal", a wrong reason for an input that is not shown whole
# layer: proxy (destination check) and its messages
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  capture sandbox -- "$PY" -c '
import socket
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"CONNECT evil\"},{\"a\":1}:443 HTTP/1.1\r\nHost: evil\r\n\r\n")
print(s.recv(200).split(b"\r\n")[0].decode())'
  expect_rc 0
  expect_out "HTTP/1.1 403" 
  local line
  line="$(grep -F 'pi-sandbox: network: refused' <<<"$ERR" | head -1)"
  [ -n "$line" ] || { show; escaped "no refusal line on stderr"; }
  case "$line" in *"IP address literal"*) show; escaped "called an IP address literal: $line" ;; esac
  case "$line" in *evil*'},{'*a*1*) ;; *) show; escaped "the host is not shown whole: $line" ;; esac
}

run_attempt "$@"
