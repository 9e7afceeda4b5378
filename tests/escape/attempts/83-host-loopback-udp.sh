#!/usr/bin/env bash
# attempt: send UDP datagrams to services on the host's 127.0.0.1 and [::1] (DNS stubs, statsd, syslog)
# layer: namespaces: a private network namespace (datagrams stay on the sandbox's own loopback)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen udp 127.0.0.1
  local log4="$LISTEN_LOG" port4="$LISTEN_PORT"
  inside_sc "udp:127.0.0.1,$port4" "udp:::ffff:127.0.0.1,$port4"
  expect_rc 0
  LISTEN_LOG="$log4"
  listen_saw_nothing
  if "$PY" -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
    host_listen udp ::1
    inside_sc "udp:::1,$LISTEN_PORT"
    expect_rc 0
    listen_saw_nothing
  fi
}

run_attempt "$@"
