// pisandbox::policy — the default sandbox policy (pure: no syscalls, no I/O).
//
// Source of every rule: compatibility C15–C20 (default policy), C21–C22 (secrets), C24
// (private temp), C25–C27 (dangerous files), and docs/security.md.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "policy/limits.hpp"

namespace pisandbox::policy {

namespace fs = std::filesystem;

/// Why a path is protected; shown by `pi-sandbox policy`.
enum class ProtectReason {
  SecurityControl,  ///< a configuration file of the reference or of pi-sandbox (compatibility C18,
                    ///< C9, C23)
  StartupFile,      ///< read at start by a login, shell, desktop session, package manager, git or
                    ///< the agent: protected when the workspace is or contains the home
  SandboxBinary,    ///< the running pi-sandbox itself, wherever it is (compatibility C18, widened)
  DangerousFile,    ///< a file of the reference runtime's mandatory deny list (compatibility C25)
  GitHooks,         ///< `.git/hooks` of a repository (compatibility C20, C25)
  Secret,           ///< `.env*`, `*.pem`, `secrets/`, ... (compatibility C21–C22)
};

/// The text of a ProtectReason as `pi-sandbox policy` prints it ("security-control", ...).
std::string_view to_string(ProtectReason reason);

/// Whether a protected path names a file or a directory when it has to be created.
enum class NodeKind { File, Directory };

/// One path that must not be writable, creatable, or replaceable inside the sandbox.
///   path: absolute, lexically normal, as seen on the host (symlinks not resolved).
///   kind: what the path is expected to be (decides the placeholder when it is missing).
///   create_if_missing: when true and the path does not exist, the sandbox must still make
///     its creation impossible (a placeholder); when false, the rule applies only if the
///     path exists (pattern matches, compatibility C22).
struct ProtectedPath {
  fs::path path;
  ProtectReason reason;
  NodeKind kind = NodeKind::File;
  bool create_if_missing = false;

  friend bool operator==(const ProtectedPath&, const ProtectedPath&) = default;
};

/// What the default policy is computed from.
///   workspace: the realpath of --cwd (absolute).
///   home:      $HOME (absolute); "/" means "no home to hide" (compatibility C15).
///   self_exe:  the realpath of the running pi-sandbox binary.
///   additional_allow_read: `filesystem.additionalAllowRead` of the trusted configuration.
///   config_locations: the trusted configuration files (docs/configuration.md), protected in every
///   sandbox.
///   path_dirs: the absolute directories of the caller's $PATH, in order (real paths where they
///     exist); those inside the home are protected when the workspace is or contains it.
struct PolicyInputs {
  fs::path workspace;
  fs::path home;
  fs::path self_exe;
  std::vector<fs::path> additional_allow_read;
  std::vector<fs::path> config_locations;
  std::vector<fs::path> path_dirs = {};
  /// The names at the top of the home (readdir order), listed only when the workspace is or
  /// contains the home: its non-dot entries stay writable there, nothing else does.
  std::vector<std::string> home_entries = {};
  ResourceLimits limits = {};  ///< resolved for this machine (resolve_limits())
};

/// The effective filesystem policy of one command. Paths are absolute and lexically normal.
struct SandboxPolicy {
  fs::path workspace;                          ///< read-write
  fs::path home;                               ///< as given
  bool hide_home = false;                      ///< $HOME is replaced by an empty private layer
  std::vector<fs::path> home_read_allowed;     ///< re-exposed read-only inside the hidden home
  std::vector<fs::path> writable;              ///< read-write bind mounts (the workspace)
  bool private_tmp = true;                     ///< private /tmp and /var/tmp (compatibility C24)
  std::vector<ProtectedPath> protected_paths;  ///< fixed paths; scanned ones are added later
  /// The workspace is or contains the home: the home is bound read-only over the workspace's
  /// bind (nothing at its top level can be created, renamed or changed, and no dot-entry at
  /// all), then home_writable_entries are bound read-write again.
  bool home_read_only = false;
  std::vector<fs::path> home_writable_entries;  ///< the home's non-dot, unprotected entries
  ResourceLimits limits;                        ///< what the command may cost the host

  friend bool operator==(const SandboxPolicy&, const SandboxPolicy&) = default;
};

/// Names that are protected at the workspace root and in every nested repository, existing
/// or not (compatibility C25, C26): files first, then directories.
const std::vector<std::string_view>& dangerous_files();
const std::vector<std::string_view>& dangerous_directories();

/// A name relative to the home that a program starting on the host reads and may execute or
/// trust: login and shell start files, desktop autostart and user units, package-manager and
/// cloud-tool configuration, git's, the agent's, the usual executable directories. Protected,
/// existing or not, when the workspace is or contains the home (docs/security.md, "The
/// workspace is the home").
struct StartupName {
  std::string_view name;
  NodeKind kind;
};

/// Every StartupName, files and directories mixed, in the order `pi-sandbox policy` shows them.
const std::vector<StartupName>& home_startup_names();

/// Secret files protected at the workspace root even when missing (compatibility C21).
const std::vector<std::string_view>& root_secret_files();
/// Secret directories protected at the workspace root even when missing (compatibility C21).
const std::vector<std::string_view>& secret_directories();

/// True for a file name that is a secret by pattern (compatibility C22): `.env`, `.env.*` except
/// `.env.example/.sample/.template/.dist`, and `*.pem *.key *.p12 *.pfx` (case-insensitive).
bool is_secret_file_name(std::string_view name);

/// Directory names the protected-path scan never descends into (compatibility C22).
bool is_skipped_directory_name(std::string_view name);

/// Builds the default policy (compatibility C15–C20, C21, C24, C25–C26; docs/security.md,
/// "Protected paths"). Pure; never fails. Paths in `inputs` must be absolute.
SandboxPolicy default_policy(const PolicyInputs& inputs);

/// True when `path` is `base` or lies beneath it (both absolute and lexically normal).
bool is_within(const fs::path& path, const fs::path& base);

}  // namespace pisandbox::policy
