// pisandbox::shell — commands that turn TLS certificate verification off: the
// `transport-security-weakening` hard-deny rule (compatibility C77). Used only by the
// hard-deny rules (approval/hard_deny.cpp).
#pragma once

#include <optional>
#include <string>

#include "shell/command_view.hpp"

namespace pisandbox::shell {

/// What in `view` turns TLS verification off, in a few words (`curl -k`,
/// `git config http.sslVerify false`, `GIT_SSL_NO_VERIFY=1`), or nullopt:
///   curl `-k` (alone or in a cluster such as `-sSk`), `--insecure`, `--proxy-insecure`,
///   `--doh-insecure`; wget `--no-check-certificate`, `-e check_certificate=off`;
///   git `-c`/`--config` `http[.<url>].sslVerify=false|0|no|off|` (key in any case) and
///   `git config [set] http[.<url>].sslVerify false` (not `--get`, `--unset`, …);
///   npm/yarn/pnpm `config set strict-ssl false` (also `key=false`, `enableStrictSsl`),
///   `--strict-ssl=false`, `--no-strict-ssl`;
///   `NODE_TLS_REJECT_UNAUTHORIZED` set to `0` anywhere in a word (`=0`, `= '0'`, `: "0"`);
///   the assignments `GIT_SSL_NO_VERIFY=<anything>`, `npm_config_strict_ssl=false`,
///   `PYTHONHTTPSVERIFY=0`.
[[nodiscard]] std::optional<std::string> find_tls_weakening(const CommandView& view);

}  // namespace pisandbox::shell
