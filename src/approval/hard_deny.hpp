// pisandbox::approval — deterministic hard denies: requests that are refused before any
// reviewer or human sees them, and can never be allowed.
//
// Source: compatibility C71 (hard denies come first, count as denials, audit
// `hard_deny`), C76 (protected writes: `security-control-tampering`) and C77 (rules on the
// request's shell command). The rules read the command through parse_shell(), so they look
// at real command words and options, not at substrings: `curl -kv` matches, `curl
// --keepalive-time 5` and `echo curl -k` do not.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "approval/boundary_request.hpp"

namespace pisandbox::approval {

/// The hard-deny rules, in the order they are checked.
enum class HardDenyRule {
  /// A write, create, delete, rename, chmod or chown of a protected path: by the request
  /// itself (compatibility C76) or by a command in `command` (for host-IPC runs, which
  /// happen outside the sandbox).
  SecurityControlTampering,
  /// `rm -r` of `/`, `~`, `$HOME`, an ancestor of the home directory, or all of their
  /// entries (`/*`, `~/*`).
  DestructiveRootOrHomeDelete,
  /// Turning TLS verification off: `curl -k`/`--insecure`, `wget --no-check-certificate`,
  /// `git -c http.sslVerify=false`, `git config http.sslVerify false`, `npm config set
  /// strict-ssl false`, `NODE_TLS_REJECT_UNAUTHORIZED=0`, `GIT_SSL_NO_VERIFY=…`.
  TransportSecurityWeakening,
  /// A credential file (`~/.ssh/id_*` but not `*.pub`, `.env`, `.env.*`,
  /// `~/.aws/credentials`, `~/.netrc`, `~/.docker/config.json`, `~/.git-credentials`,
  /// `~/.npmrc`, `~/.pypirc`, `~/.kube/config`, `gh/hosts.yml`, `~/.gnupg/…`,
  /// `/etc/shadow`) read by a network tool (`curl`, `wget`, `nc`, `ncat`, `netcat`,
  /// `socat`, `telnet`, `scp`, `sftp`, `rsync`, `ftp`, `http`, `https`, `xh`, or a
  /// redirection to `/dev/tcp/…`) or by an earlier command of the same pipeline.
  CredentialExfiltration,
  /// A write to `authorized_keys`, `/etc/sudoers` or `/etc/sudoers.d/…` (redirection,
  /// `tee`, `cp`/`mv`/`install`/`ln` destination, `dd of=`, `sed -i`, `curl -o`, `wget -O`).
  AccessPersistence,
};

/// The rule's name as it appears in reasons: `security-control-tampering`,
/// `destructive-root-or-home-delete`, `transport-security-weakening`,
/// `credential-exfiltration`, `access-persistence`.
[[nodiscard]] std::string_view to_string(HardDenyRule rule);

/// A hard deny.
///   reason: `Hard deny (<rule name>): <what matched>.` — one line; quotes at most 120
///           bytes of the command's own text.
struct HardDeny {
  HardDenyRule rule;
  std::string reason;
};

/// What the rules need to know about the host.
///   protected_paths: absolute paths (files or directories) the sandboxed side must never
///                    change: pi-sandbox's configuration, `~/.pi/agent/logs`, … (compatibility
///                    C76). A leading `~` is expanded with `home`.
///   home:            the absolute home directory, used to expand `~` and `$HOME` and to
///                    recognise it by name (`rm -rf /home/alice`); empty = unknown, then
///                    only `~`, `$HOME` and `${HOME}` themselves count as the home.
struct HardDenyOptions {
  std::vector<std::string> protected_paths;
  std::string home;
};

/// Checks `request` against the rules in HardDenyRule order and returns the first match,
/// or nullopt. Relative paths are resolved against `request.cwd`, following `cd` and
/// `pushd` in the command (`cd / && rm -rf *` matches). Commands nested in
/// `$(…)`, backquotes, `<(…)`, here-documents, `sh -c`/`bash -c`, `su -c` and `eval` are
/// checked too, up to 8 levels deep and 512 command texts in all (beyond that, text is not
/// looked at: the reviewer and the sandbox still are).
[[nodiscard]] std::optional<HardDeny> find_hard_deny(const BoundaryRequest& request,
                                                     const HardDenyOptions& options);

}  // namespace pisandbox::approval
