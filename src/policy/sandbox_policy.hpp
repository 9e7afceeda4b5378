// pisandbox::policy — the default sandbox policy (pure: no syscalls, no I/O).
//
// Source of every rule: compatibility C15–C20 (default policy), C21–C22 (secrets), C24
// (private temp), C25–C27 (dangerous files), and docs/security.md.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/credential_lines.hpp"
#include "policy/limits.hpp"
#include "policy/signing.hpp"

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
  GitControl,       ///< what makes git run or trust something in a git directory outside the
                    ///< workspace (`hooks/`, `config`, `info/`, `commondir`, a worktree's `.git`
                    ///< file): docs/security.md, "Repositories around the workspace"
  GitHooksPath,     ///< the directory `core.hooksPath` names, where host git runs hooks from
                    ///< (githooks(5)), when it lies in a writable place: docs/security.md,
                    ///< "Hooks where git looks for them"
  Secret,           ///< `.env*`, `*.pem`, `secrets/`, ... (compatibility C21–C22)
};

/// The text of a ProtectReason as `pi-sandbox policy` prints it ("security-control", ...).
std::string_view to_string(ProtectReason reason);

/// Whether a protected path names a file or a directory when it has to be created.
enum class NodeKind { File, Directory };

/// Entries of one directory protected by a name pattern (HostProgramName, is_name_pattern()).
///   dir: absolute, lexically normal: a writable root (the workspace, an additionalAllowWrite
///     entry); pattern: `*<suffix>`; reason: the row's.
struct ProtectedPattern {
  fs::path dir;
  std::string pattern;
  ProtectReason reason = ProtectReason::DangerousFile;

  friend bool operator==(const ProtectedPattern&, const ProtectedPattern&) = default;
};

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

/// How protected names that do not exist yet are kept from being created (docs/security.md,
/// "The guard"; `filesystem.protection` in docs/configuration.md).
enum class Protection {
  Guard,   ///< watched by the supervisor: what a command creates there is moved to the
           ///< quarantine at once; missing secret names are not protected (the default)
  Strict,  ///< held by an empty read-only placeholder directory for the length of the command
};

/// The text of a Protection as the configuration spells it ("guard", "strict").
std::string_view to_string(Protection protection);

/// How an exposed host path is seen inside the sandbox.
enum class Access {
  ReadOnly,     ///< a read-only bind mount
  CopyOnWrite,  ///< an overlay on the host directory with a throw-away upper layer in the
                ///< tmpfs budget: writes succeed inside and never reach the host (a read-only
                ///< bind where overlayfs cannot be mounted)
  ReadWrite,    ///< a read-write bind mount: writes reach the host
};

/// The text of an Access as `pi-sandbox policy` prints it ("read-only", ...).
std::string_view to_string(Access access);

/// Where an exposure comes from, for the rules that depend on it (pi-sandbox's own reasons
/// are in Exposure::why).
enum class Origin {
  Default,         ///< the default policy (git's configuration, the workspace, a repository)
  Toolchain,       ///< a `$PATH` entry in the home and its roots (policy/toolchains.hpp)
  ConfiguredRead,  ///< `filesystem.additionalAllowRead`
  ConfiguredWrite  ///< `filesystem.additionalAllowWrite`: made on the host when missing
};

/// One host path made visible again inside the hidden home, or made writable.
///   path: absolute, lexically normal (a real path where the session could resolve it).
///   why:  the reason `pi-sandbox policy` prints ("$PATH entry /home/u/.cargo/bin: rustup
///         and cargo").
struct Exposure {
  fs::path path;
  std::string why;
  Access access = Access::ReadOnly;
  Origin origin = Origin::Default;

  Exposure() = default;
  Exposure(fs::path p, std::string w = {}, Access a = Access::ReadOnly, Origin o = Origin::Default)
      : path(std::move(p)), why(std::move(w)), access(a), origin(o) {}
  Exposure(const char* p) : path(p) {}  // NOLINT: a list of paths reads naturally in tests

  friend bool operator==(const Exposure&, const Exposure&) = default;
};

/// The git repository whose working tree contains the workspace, as read from the host by
/// the session (session/git_layout.hpp). All paths absolute and real.
///   worktree_root: the top of that working tree (the workspace or one of its ancestors).
///   git_dir:       its git directory: `<root>/.git`, or the directory a `.git` file names
///                  (a linked worktree's `<main>/.git/worktrees/<name>`, a submodule's
///                  `<super>/.git/modules/<name>`).
///   common_dir:    where objects, refs and the shared config live (`commondir`); equal to
///                  git_dir except for a linked worktree.
///   git_file:      `<root>/.git` when it is a file, else empty.
///   worktree_config: the common config turns on `extensions.worktreeConfig`, so git reads
///                  `config.worktree` files (and refuses to run when one is a directory).
///   module_dirs:   git directories of submodules under `<common_dir>/modules`.
///   worktree_dirs: `<common_dir>/worktrees/<name>` of every linked worktree.
struct GitLayout {
  fs::path worktree_root;
  fs::path git_dir;
  fs::path common_dir;
  fs::path git_file = {};
  bool worktree_config = false;
  std::vector<fs::path> module_dirs = {};
  std::vector<fs::path> worktree_dirs = {};
  /// `core.hooksPath` as the repository's own configuration (`<common_dir>/config`) sets it,
  /// the last value, unresolved; empty when it sets none.
  std::string hooks_path = {};

  friend bool operator==(const GitLayout&, const GitLayout&) = default;
};

/// The `why` of an Exposure from `filesystem.additionalAllowWrite` (Origin::ConfiguredWrite).
inline constexpr std::string_view kConfiguredWritable =
    "filesystem.additionalAllowWrite (persists)";

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
  /// The repository around the workspace (none outside a repository).
  std::optional<GitLayout> git = {};
  /// `filesystem.additionalAllowWrite`: directories that stay writable and persist.
  std::vector<fs::path> additional_allow_write = {};
  /// `filesystem.protection`: how missing protected names are protected.
  Protection protection = Protection::Guard;
  /// `filesystem.exposeHomeToolchains`: re-expose $PATH entries inside the hidden home and
  /// the toolchain roots they need (policy/toolchains.hpp).
  bool expose_home_toolchains = true;
  /// The caller's toolchain variables that move a root (`CARGO_HOME`, `RUSTUP_HOME`,
  /// `PYENV_ROOT`, `NVM_DIR`, ...: policy/toolchains.hpp), name and absolute value.
  std::vector<std::pair<std::string, fs::path>> toolchain_env = {};
  /// The install prefixes of the versions that version managers keep in the home
  /// (installed_versions() of policy/toolchain_configs.hpp): their configuration files are
  /// shown as copies without their credentials where a command could read them.
  std::vector<fs::path> installed_versions = {};
  /// The user's git configuration files and every file they include (git_config_closure() of
  /// policy/git_config_copies.hpp): each is shown as a copy without its credentials where a
  /// command could read it.
  std::vector<fs::path> git_config_files = {};
  /// `core.hooksPath` of the user's and the system's git configuration (`/etc/gitconfig`,
  /// `~/.config/git/config`, `~/.gitconfig`: the last value in git's order), unresolved; empty
  /// when none sets it. It applies to every repository whose own configuration sets none.
  std::string user_hooks_path = {};
  /// `filesystem.exposeCredentials`: credentials handed in on purpose, relative to the home
  /// (`.config/gh/hosts.yml`), each a row of credential_names() or a file under a directory row
  /// (is_credential_name()); others are ignored (the configuration refuses them).
  std::vector<std::string> expose_credentials = {};
  /// What git's signing reads (policy/signing.hpp), found on the host by the session: shown
  /// read-only in the hidden home (docs/security.md, "Signed commits").
  SigningFiles signing = {};
};

/// A file of the home shown as a copy without its credentials (policy/credential_lines.hpp).
///   path:   absolute, lexically normal, as in the home (`/home/u/.npmrc`);
///   format: how its credentials are found.
struct SanitizedCopy {
  fs::path path;
  ConfigFormat format;

  friend bool operator==(const SanitizedCopy&, const SanitizedCopy&) = default;
};

/// The effective filesystem policy of one command. Paths are absolute and lexically normal.
struct SandboxPolicy {
  fs::path workspace;      ///< read-write
  fs::path home;           ///< as given
  bool hide_home = false;  ///< $HOME is replaced by an empty private layer
  /// Re-exposed inside the hidden home (ReadOnly or CopyOnWrite), parents before children.
  std::vector<Exposure> home_read_allowed;
  /// Read-write bind mounts: the workspace first, then the git directories a commit writes
  /// and `filesystem.additionalAllowWrite`, parents before children.
  std::vector<Exposure> writable;
  bool private_tmp = true;                     ///< private /tmp and /var/tmp (compatibility C24)
  Protection protection = Protection::Guard;   ///< how missing protected names are protected
  std::vector<ProtectedPath> protected_paths;  ///< fixed paths; scanned ones are added later
  /// The workspace is or contains the home: the home is bound read-only over the workspace's
  /// bind (nothing at its top level can be created, renamed or changed, and no dot-entry at
  /// all), then home_writable_entries are bound read-write again.
  bool home_read_only = false;
  std::vector<fs::path> home_writable_entries;  ///< the home's non-dot, unprotected entries
  ResourceLimits limits;                        ///< what the command may cost the host
  /// Credential files inside re-exposed directories (`~/.cargo/credentials.toml`), hidden
  /// again behind an empty read-only file where they exist.
  std::vector<fs::path> concealed = {};
  /// Tool configuration of the home that mixes settings and credentials (mixed_config_names()):
  /// each existing one is shown at its path as a read-only copy without its credentials,
  /// made per command (docs/security.md, "Tool configuration without its credentials").
  std::vector<SanitizedCopy> sanitized = {};
  /// $PATH entries that stay hidden in the home (nothing re-exposes them), for `doctor`.
  std::vector<fs::path> hidden_path_dirs = {};
  /// Printed on stderr when a command starts, and by `pi-sandbox policy`.
  std::vector<std::string> warnings = {};
  /// Printed by `pi-sandbox policy` only.
  std::vector<std::string> notes = {};
  /// `filesystem.additionalAllowWrite` entries refused, each a whole message; a run refuses
  /// to start while this is not empty.
  std::vector<std::string> refused = {};
  /// The repository around the workspace, as given (PolicyInputs::git): the guard reads its
  /// index after the command (sandbox/linux/guard.hpp).
  std::optional<GitLayout> git = {};
  /// PolicyInputs::user_hooks_path, for the scan of nested repositories (scan_options()).
  std::string user_hooks_path = {};
  /// Pattern rows of host_program_names() at the root of each writable root: no path names
  /// them in advance, so the guard matches the root's entries as they appear (in strict mode
  /// too: no placeholder can stand for a pattern).
  std::vector<ProtectedPattern> protected_patterns = {};
  /// Credentials handed in by `filesystem.exposeCredentials` (absolute, lexically normal):
  /// readable read-only inside, never concealed (docs/security.md, "Handing a credential in").
  std::vector<fs::path> handed_in = {};
  /// PolicyInputs::signing, as given: the session names the agent's socket after a failed
  /// command that could not reach it (signing_socket_hint()).
  SigningFiles signing = {};

  friend bool operator==(const SandboxPolicy&, const SandboxPolicy&) = default;
};

/// Where a row of host_program_names() comes from.
enum class NameOrigin {
  ReferenceDenyList,  ///< the reference runtime's mandatory deny list (compatibility C25)
  Widened,            ///< added by pi-sandbox (docs/security.md, "Names that host programs run")
};

/// One name that a program on the host runs or trusts when it starts in, or opens, a directory:
/// an agent's project configuration (MCP servers, hooks, commands), an editor's tasks, a
/// devcontainer's host commands, a shell's or git's start file. Adding a tool is one row.
///   name:    relative to a writable root (`.cursor`, `.claude/settings.json`), or a pattern
///            `*<suffix>` (is_name_pattern()) for the entries of a directory whose name ends so
///            (`*.code-workspace`);
///   kind:    a file or a directory (a Seatbelt `literal` or `subpath`; a strict-mode
///            placeholder is a directory either way);
///   reason:  SecurityControl for Pi's own files, DangerousFile for everything else;
///   origin:  the reference's list or pi-sandbox's widening;
///   program: who runs or trusts it;
///   source:  where that program documents the file (a URL or a manual page).
/// docs/security.md, "Names that host programs run", shows the same table (a unit test compares
/// them).
struct HostProgramName {
  std::string_view name;
  NodeKind kind;
  ProtectReason reason;
  NameOrigin origin;
  std::string_view program;
  std::string_view source;
};

/// Every HostProgramName, in the order the policy lists them. Each is protected at the root of
/// every writable root (the workspace and each `filesystem.additionalAllowWrite` entry),
/// existing or not; the DangerousFile ones also wherever the scan finds them
/// (policy/protected_scan.hpp).
const std::vector<HostProgramName>& host_program_names();

/// True for a name of host_program_names() that is a pattern: `*` followed by a suffix.
bool is_name_pattern(std::string_view name);

/// Whether the directory entry `entry` matches `pattern` (`*.code-workspace`: any name that ends
/// with the suffix, compared exactly; the suffix alone too, which is more than a program needs).
bool matches_name_pattern(std::string_view pattern, std::string_view entry);

/// The file and directory names of the reference's mandatory deny list (NameOrigin::
/// ReferenceDenyList rows of host_program_names()), in table order: protected at the workspace
/// root and in every nested repository, existing or not (compatibility C25, C26).
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

/// One credential a tool keeps in the home: never readable inside, whatever the workspace and
/// whatever `filesystem.additionalAllowRead` or a toolchain exposure covers (docs/security.md,
/// "Credentials", which shows the same table: a unit test compares them).
///   name:    relative to the home (`.ssh/id_ed25519`, `.gnupg/private-keys-v1.d`);
///   kind:    a file (masked by an empty read-only file) or a directory (an empty read-only
///            directory);
///   program: the tool that writes it;
///   source:  where that tool documents it (a manual page or a URL).
/// Chosen by name, so that it is planned before the command starts: a key saved under another
/// name (an `IdentityFile` of ssh_config(5)) is not recognised by its content.
struct CredentialName {
  std::string_view name;
  NodeKind kind;
  std::string_view program;
  std::string_view source;
};

/// Every CredentialName, in the order docs/security.md lists them.
const std::vector<CredentialName>& credential_names();

/// The credentials of credential_names() under `home` that a command could read: those inside
/// the workspace (it is, contains or lies above them) or inside one of `exposed` (re-exposed in
/// the hidden home), in table order, lexically normal. Empty when `home` is empty or "/".
std::vector<fs::path> visible_credentials(const fs::path& home, const fs::path& workspace,
                                          const std::vector<Exposure>& exposed);

/// Why `workspace` (absolute, real) may not be a workspace, or empty: it is or lies inside a
/// credential directory of credential_names() under `home`, or it is a system directory
/// (docs/security.md, "Workspaces that are refused"). The text follows `refusing the
/// workspace "<path>": `.
std::string workspace_refusal(const fs::path& workspace, const fs::path& home);

/// The warning a command starts with when the workspace is or contains the home, without the
/// `warning: ` prefix; empty otherwise. It names what stays hidden (credential_names(), by
/// their directories) and what is readable (docs/security.md, "The workspace is the home",
/// "Credentials").
std::string home_workspace_warning(const SandboxPolicy& policy);

/// True when `name` (relative to the home, as `filesystem.exposeCredentials` writes it after
/// `~/`) is a row of credential_names() or a file below one of its directory rows
/// (`.gnupg/private-keys-v1.d/<keygrip>.key`), written lexically normal: no `.` or `..`
/// component, no trailing `/` (docs/security.md, "Handing a credential in").
bool is_credential_name(std::string_view name);

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

/// The directory host git runs the hooks of a repository from when `core.hooksPath` is
/// `hooks_path` (githooks(5), git-config(1) core.hooksPath): `~/` is the home, a relative path
/// is relative to the working tree's top `worktree_root` (hooks run there), an absolute one is
/// itself. Lexically normal; empty for an empty value or `~user/` (another user's home).
fs::path hooks_directory(std::string_view hooks_path, const fs::path& worktree_root,
                         const fs::path& home);

/// The protected path for a repository's hooks directory `dir` (hooks_directory()) when it lies
/// inside one of `writable_roots` (absolute, lexically normal): the directory (for husky 9's
/// `<x>/.husky/_`, whose hooks run the scripts of `<x>/.husky`, that parent), read-only, held
/// when missing (docs/security.md, "Hooks where git looks for them"); nullopt when it
/// lies in no writable root (the command cannot write it), is or contains one (`.`: the root
/// would become read-only), or is empty.
std::optional<ProtectedPath> hooks_path_protection(const fs::path& dir,
                                                   const std::vector<fs::path>& writable_roots);

/// True when `path` is `base` or lies beneath it (both absolute and lexically normal).
bool is_within(const fs::path& path, const fs::path& base);

}  // namespace pisandbox::policy
