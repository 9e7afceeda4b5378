// The default filesystem policy of one command (policy/sandbox_policy.hpp; docs/security.md):
// default_policy() and its rules (the workspace, the home, the repository around the workspace,
// hooks, filesystem.additionalAllowWrite and exposeCredentials, signing), the checks of a
// workspace, and the spellings of the policy's enums. The tables of names it applies are in
// sandbox_policy_names.cpp.
#include "policy/sandbox_policy.hpp"

#include <algorithm>

#include "policy/git_config_copies.hpp"
#include "policy/toolchain_configs.hpp"
#include "policy/toolchains.hpp"

namespace pisandbox::policy {

std::string_view to_string(ProtectReason reason) {
  switch (reason) {
    case ProtectReason::SecurityControl:
      return "security-control";
    case ProtectReason::StartupFile:
      return "startup-file";
    case ProtectReason::SandboxBinary:
      return "sandbox-binary";
    case ProtectReason::DangerousFile:
      return "dangerous-file";
    case ProtectReason::GitHooks:
      return "git-hooks";
    case ProtectReason::GitControl:
      return "git-control";
    case ProtectReason::GitHooksPath:
      return "git-hooks-path";
    case ProtectReason::Secret:
      return "secret";
  }
  return "unknown";
}

std::string_view to_string(Protection protection) {
  return protection == Protection::Strict ? "strict" : "guard";
}

std::string_view to_string(Access access) {
  switch (access) {
    case Access::ReadOnly:
      return "read-only";
    case Access::CopyOnWrite:
      return "copy-on-write";
    case Access::ReadWrite:
      return "read-write";
  }
  return "unknown";
}

namespace {

/// The end of home_workspace_warning(): what is readable besides the masked credentials.
std::string home_workspace_readable(const SandboxPolicy& policy) {
  std::string out =
      "; readable: everything else in the home, a key saved under another name included, but "
      "not a hard link of a masked credential that the start finds (masked too)";
  if (policy.handed_in.empty()) return out;
  out += "; handed in on purpose by filesystem.exposeCredentials (read-only):";
  for (const auto& path : policy.handed_in) out += " " + path.string();
  return out;
}

}  // namespace

std::string home_workspace_warning(const SandboxPolicy& policy) {
  if (policy.hide_home || policy.home == "/" || policy.home.empty()) return "";
  return "the workspace contains the home directory " + policy.home.string() +
         ", so the home is not hidden: the command can read it, except the credentials tools "
         "keep there (ssh and gpg private keys, ~/.aws/credentials, gcloud's and Azure's tokens, "
         "~/.kube/config, ~/.git-credentials, ~/.netrc, ~/.config/gh/hosts.yml, ~/.pypirc, "
         "cargo's and the agents' logins: masked empty; ~/.npmrc, ~/.docker/config.json and the "
         "like show their settings without their tokens; `pi-sandbox policy` lists them), and "
         "write inside its ordinary directories, but not its top level nor any dot-file or "
         "dot-directory in it" +
         home_workspace_readable(policy);
}

std::string workspace_refusal(const fs::path& workspace, const fs::path& home) {
  // Whole trees of the system: nothing in them is a project, and as root a command could
  // rewrite what the host runs or trusts.
  static constexpr std::string_view kSystemTrees[] = {"/etc",    "/usr",  "/boot",  "/bin",
                                                      "/sbin",   "/lib",  "/lib32", "/lib64",
                                                      "/libx32", "/proc", "/sys",   "/dev"};
  // Directories that hold everyone's data: refused themselves, a project inside them is fine
  // (`/opt/app`, `/srv/site`, `/var/lib/build`).
  static constexpr std::string_view kSystemRoots[] = {
      "/var", "/var/lib", "/var/log", "/opt", "/srv", "/home", "/run", "/mnt", "/media"};
  for (auto tree : kSystemTrees)
    if (is_within(workspace, fs::path(tree)))
      return "it is or lies inside " + std::string(tree) +
             ", part of the system: a command could change what the host runs";
  for (auto root : kSystemRoots)
    if (workspace == fs::path(root))
      return "it is " + std::string(root) +
             ", a system directory that holds other programs' and users' data";
  if (home.empty() || home == "/") return "";
  for (const auto& row : credential_names()) {
    const fs::path path = (home / row.name).lexically_normal();
    if (row.kind == NodeKind::Directory && is_within(workspace, path))
      return "it is or lies inside the credential directory " + path.string() + " (" +
             std::string(row.program) + ")";
  }
  return "";
}

namespace {

void add(std::vector<ProtectedPath>& out, fs::path path, ProtectReason reason, NodeKind kind,
         bool create_if_missing) {
  path = path.lexically_normal();
  const bool seen = std::ranges::any_of(out, [&](const auto& p) { return p.path == path; });
  if (!seen) out.push_back({std::move(path), reason, kind, create_if_missing});
}

constexpr auto kFile = NodeKind::File;
constexpr auto kDir = NodeKind::Directory;

}  // namespace

fs::path hooks_directory(std::string_view hooks_path, const fs::path& worktree_root,
                         const fs::path& home) {
  if (hooks_path.empty()) return {};
  if (hooks_path == "~" || hooks_path.starts_with("~/"))
    return (home / std::string(hooks_path.substr(std::min<std::size_t>(2, hooks_path.size()))))
        .lexically_normal();
  if (hooks_path.starts_with('~')) return {};
  const fs::path path{std::string(hooks_path)};
  return (path.is_absolute() ? path : worktree_root / path).lexically_normal();
}

std::optional<ProtectedPath> hooks_path_protection(const fs::path& dir,
                                                   const std::vector<fs::path>& writable_roots) {
  if (dir.empty()) return std::nullopt;
  // `dir/` normalises to a trailing empty name; the protected path is the directory itself.
  fs::path path = dir;
  if (!path.has_filename()) path = path.parent_path();
  // husky 9 sets core.hooksPath=.husky/_, whose hooks run `.husky/<hook>`: the hooks git runs
  // live in the parent (husky's documented layout), so the parent is what is protected.
  if (path.filename() == "_" && path.parent_path().filename() == ".husky")
    path = path.parent_path();
  if (std::ranges::none_of(writable_roots, [&](const fs::path& r) { return is_within(path, r); }))
    return std::nullopt;
  // `core.hooksPath = .` would make the whole root read-only: not done (docs/security.md,
  // "What is not protected").
  if (std::ranges::any_of(writable_roots, [&](const fs::path& r) { return is_within(r, path); }))
    return std::nullopt;
  return ProtectedPath{path, ProtectReason::GitHooksPath, NodeKind::Directory, true};
}

bool is_within(const fs::path& path, const fs::path& base) {
  auto [base_end, path_it] = std::mismatch(base.begin(), base.end(), path.begin(), path.end());
  if (base_end == base.end()) return true;
  // A trailing empty component ("/a/b/") still counts as within.
  return std::next(base_end) == base.end() && base_end->empty();
}

namespace {

/// The names host programs run or trust, at the root of a writable root (the workspace, an
/// `filesystem.additionalAllowWrite` entry), existing or not; patterns as ProtectedPattern.
void add_host_program_names(SandboxPolicy& policy, const fs::path& root) {
  for (const auto& row : host_program_names()) {
    if (is_name_pattern(row.name)) {
      const ProtectedPattern pattern{root, std::string(row.name), row.reason};
      if (std::ranges::find(policy.protected_patterns, pattern) == policy.protected_patterns.end())
        policy.protected_patterns.push_back(pattern);
      continue;
    }
    add(policy.protected_paths, root / row.name, row.reason, row.kind, true);
  }
}

void add_workspace_rules(SandboxPolicy& policy) {
  const fs::path& ws = policy.workspace;
  add_host_program_names(policy, ws);
  for (auto name : root_secret_files())
    add(policy.protected_paths, ws / name, ProtectReason::Secret, kFile, true);
  for (auto name : secret_directories())
    add(policy.protected_paths, ws / name, ProtectReason::Secret, kDir, true);
}

void add_home_rules(SandboxPolicy& policy, const PolicyInputs& inputs) {
  // The home's own dotfiles are hidden from the sandbox, but on the host they may be
  // symlinks into the workspace; the planner protects what they point to there.
  for (auto name : dangerous_files())
    add(policy.protected_paths, policy.home / name, ProtectReason::DangerousFile, kFile, false);
  add(policy.protected_paths, policy.home / ".config/git/config", ProtectReason::DangerousFile,
      kFile, false);
  add(policy.protected_paths, policy.home / ".ssh", ProtectReason::DangerousFile, kDir, false);
  const fs::path agent = policy.home / ".pi" / "agent";
  for (auto name : {"settings.json", "permissions.json", "pi-sandbox.json", "sandbox.json"})
    add(policy.protected_paths, agent / name, ProtectReason::SecurityControl, kFile, true);
  for (auto name : {"logs", "extensions"})
    add(policy.protected_paths, agent / name, ProtectReason::SecurityControl, kDir, true);
  for (const auto& location : inputs.config_locations)
    add(policy.protected_paths, location, ProtectReason::SecurityControl, kFile, true);
}

/// When the workspace is or contains the home, the home's start files lie in the writable
/// workspace: a command could create `~/.ssh/authorized_keys`, `~/.config/git/config` with
/// `core.fsmonitor`, or `~/.local/bin/git`, and the host would run or trust them later.
void add_startup_rules(SandboxPolicy& policy, const PolicyInputs& inputs) {
  if (policy.hide_home || policy.home.empty() || policy.home == "/") return;
  for (const auto& [name, kind] : home_startup_names())
    add(policy.protected_paths, policy.home / name, ProtectReason::StartupFile, kind, true);
  for (const auto& dir : inputs.path_dirs) {
    const fs::path normal = dir.lexically_normal();
    if (normal.is_absolute() && normal != policy.home && is_within(normal, policy.home))
      add(policy.protected_paths, normal, ProtectReason::StartupFile, kDir, true);
  }
}

/// When the workspace is or contains the home, no list of names can cover everything a host
/// program reads from it at start (`~/.local/lib/python3*/site-packages/*.pth`, a new
/// `~/.git/config`, `~/.cargo/env`, ...): the home's top level and every dot-entry are
/// read-only, and only its ordinary (non-dot) entries stay writable, minus the protected ones
/// (`~/bin`, `$PATH` directories).
void add_home_top_level(SandboxPolicy& policy, const PolicyInputs& inputs) {
  if (policy.hide_home || policy.home.empty() || policy.home == "/") return;
  policy.home_read_only = true;
  for (const auto& name : inputs.home_entries) {
    if (name.empty() || name.starts_with('.') || name.find('/') != std::string::npos) continue;
    const fs::path entry = policy.home / name;
    const bool protected_entry = std::ranges::any_of(
        policy.protected_paths, [&](const ProtectedPath& p) { return p.path == entry; });
    if (!protected_entry) policy.home_writable_entries.push_back(entry);
  }
  std::ranges::sort(policy.home_writable_entries);
}

}  // namespace

namespace {

void add_exposure(std::vector<Exposure>& out, Exposure exposure) {
  exposure.path = exposure.path.lexically_normal();
  if (std::ranges::none_of(out, [&](const Exposure& e) { return e.path == exposure.path; }))
    out.push_back(std::move(exposure));
}

/// A path inside the hidden home that is not yet visible (or inside the workspace).
bool needs_reexpose(const SandboxPolicy& policy, const fs::path& path) {
  return policy.hide_home && is_within(path, policy.home) && !is_within(path, policy.workspace);
}

/// Sorts by depth, keeping the given order among equals: a parent is mounted before what
/// lies inside it.
void parents_first(std::vector<Exposure>& exposures) {
  std::ranges::stable_sort(
      exposures, {}, [](const Exposure& e) { return std::distance(e.path.begin(), e.path.end()); });
}

/// The repository around the workspace (docs/security.md, "Repositories around the
/// workspace"): its working tree above the workspace is readable, what a commit writes in its
/// git directory is writable, and what makes git run or trust something there is protected.
void add_git_rules(SandboxPolicy& policy, const PolicyInputs& inputs) {
  if (!inputs.git) return;
  const GitLayout& git = *inputs.git;
  const fs::path& ws = policy.workspace;
  const fs::path root = git.worktree_root.lexically_normal();
  const fs::path git_dir = git.git_dir.lexically_normal();
  const fs::path common = git.common_dir.empty() ? git_dir : git.common_dir.lexically_normal();
  const auto control = [&](const fs::path& path, NodeKind kind, bool even_if_missing) {
    add(policy.protected_paths, path, ProtectReason::GitControl, kind, even_if_missing);
  };
  // `config.worktree` is read only while extensions.worktreeConfig is on. Off, a missing one
  // is held (`git sparse-checkout init` turns the extension on later, and a planted file
  // would then be read); on, it cannot be: git refuses to run while a placeholder stands
  // there, so a missing one stays creatable (docs/security.md, "Repositories around the
  // workspace").
  const bool hold_worktree_config = !git.worktree_config;
  // What makes host git read a configuration or run a hook that the command wrote, in the
  // git directories of the repository's submodules and linked worktrees.
  const auto control_modules_and_worktrees = [&](bool module_config_read_only) {
    for (const auto& module : git.module_dirs) {
      control(module / "hooks", NodeKind::Directory, true);
      // In the workspace's own repository a submodule's config is checked by content, as
      // .git/config is (plan_guard()): `git submodule` writes it.
      if (module_config_read_only) control(module / "config", NodeKind::File, false);
      control(module / "commondir", NodeKind::File, true);
    }
    for (const auto& worktree : git.worktree_dirs) {
      control(worktree / "commondir", NodeKind::File, false);
      control(worktree / "config.worktree", NodeKind::File, hold_worktree_config);
    }
  };
  if (git.git_file.empty() && root == ws) {
    // The workspace's own .git: its hooks come from the scan and its config is checked by
    // content (the guard); a planted `commondir` would point host git at a configuration the
    // command wrote, and so would its submodules' and linked worktrees' files.
    control(git_dir / "commondir", NodeKind::File, true);
    control_modules_and_worktrees(false);
    return;
  }
  if (!policy.home.empty() && policy.home != "/" && is_within(policy.home, root)) {
    policy.notes.push_back("the repository at " + root.string() +
                           " contains the home: it is not exposed (the home stays hidden)");
    return;
  }
  const auto writable = [&](const fs::path& path, const std::string& why) {
    if (!is_within(path, ws)) add_exposure(policy.writable, {path, why, Access::ReadWrite});
  };
  // A worktree's or submodule's `.git` file names the git directory: rewritten, it would
  // point host git at a configuration the command wrote.
  if (!git.git_file.empty()) control(git.git_file, NodeKind::File, false);
  if (root != ws && needs_reexpose(policy, root))
    add_exposure(policy.home_read_allowed,
                 {root, "the repository that contains the workspace (read-only outside it)"});
  if (common != git_dir) {
    // A linked worktree: its own git directory lies in the common one, which is written as a
    // main worktree's is (packed-refs.lock, gc.pid, new branches and stashes).
    control(git_dir / "commondir", NodeKind::File, false);
    control(git_dir / "config.worktree", NodeKind::File, hold_worktree_config);
  }
  writable(common, common == git_dir
                       ? "the git directory of the repository that contains the workspace"
                       : "the git directory of the main repository of this linked worktree");
  control(common / "hooks", NodeKind::Directory, true);
  control(common / "config", NodeKind::File, false);
  control(common / "info", NodeKind::Directory, true);
  control(common / "config.worktree", NodeKind::File, hold_worktree_config);
  // A `commondir` planted in a git directory points git at a configuration the command wrote;
  // the common directory of a linked worktree (the main repository's) has none either.
  control(common / "commondir", NodeKind::File, true);
  control_modules_and_worktrees(true);
}

/// The hooks directory of the repository around the workspace when its configuration, or the
/// user's, sets `core.hooksPath` into a writable place (docs/security.md, "Hooks where git
/// looks for them"). Nested repositories and the workspace's own are the scan's
/// (protected_scan.cpp); both use hooks_path_protection().
void add_hooks_path_rules(SandboxPolicy& policy, const PolicyInputs& inputs) {
  std::vector<fs::path> roots;
  for (const auto& e : policy.writable) roots.push_back(e.path);
  const auto protect = [&](std::string_view value, const fs::path& worktree_root) {
    if (auto p = hooks_path_protection(hooks_directory(value, worktree_root, policy.home), roots))
      add(policy.protected_paths, p->path, p->reason, p->kind, p->create_if_missing);
  };
  if (inputs.git) {
    const std::string& value =
        inputs.git->hooks_path.empty() ? inputs.user_hooks_path : inputs.git->hooks_path;
    protect(value, inputs.git->worktree_root);
  }
  // An absolute user-wide hooks directory (`~/.githooks`) serves every repository, those the
  // command creates too.
  if (inputs.user_hooks_path.starts_with('/') || inputs.user_hooks_path.starts_with("~/"))
    protect(inputs.user_hooks_path, policy.workspace);
}

/// Why `path` may not be an `filesystem.additionalAllowWrite` entry, or empty.
std::string refusal(const SandboxPolicy& policy, const PolicyInputs& inputs, const fs::path& path) {
  if (path == "/") return "is the root of the host";
  if (!policy.home.empty() && policy.home != "/" && is_within(policy.home, path))
    return "is or contains the home " + policy.home.string();
  for (auto temp : {"/tmp", "/var/tmp"})
    if (path == temp) return "is a private temporary directory in every sandbox already";
  for (auto system : {"/proc", "/sys", "/dev", "/etc", "/usr", "/boot"})
    if (is_within(system, path) || is_within(path, system))
      return std::string("is or lies inside ") + system + ", part of the system";
  const auto clash = [&](const fs::path& other) -> std::string {
    if (is_within(path, other)) return "lies inside the protected path " + other.string();
    if (is_within(other, path)) return "contains the protected path " + other.string();
    return "";
  };
  for (const auto& p : policy.protected_paths)
    if (auto why = clash(p.path); !why.empty()) return why;
  if (!policy.home.empty() && policy.home != "/")
    for (const auto& [name, kind] : home_startup_names())
      if (auto why = clash(policy.home / name); !why.empty()) return why;
  for (const auto& dir : inputs.path_dirs)
    if (auto why = clash(dir.lexically_normal()); !why.empty()) return why + " (a $PATH directory)";
  // A toolchain root holds the programs the host runs (`~/.rustup`): writable, a command
  // could replace them. A cache inside one (`~/.cargo/registry`) is fine.
  for (const auto& e : policy.home_read_allowed)
    if (e.origin == Origin::Toolchain && is_within(e.path, path))
      return "is or contains the toolchain directory " + e.path.string() + " (" + e.why + ")";
  return "";
}

void add_additional_write(SandboxPolicy& policy, const PolicyInputs& inputs) {
  std::vector<fs::path> accepted;
  for (const auto& raw : inputs.additional_allow_write) {
    const fs::path path = raw.lexically_normal();
    if (is_within(path, policy.workspace)) continue;  // writable already
    if (auto why = refusal(policy, inputs, path); !why.empty()) {
      policy.refused.push_back("filesystem.additionalAllowWrite: \"" + path.string() + "\" " + why);
      continue;
    }
    add_exposure(policy.writable, {path, std::string(kConfiguredWritable), Access::ReadWrite,
                                   Origin::ConfiguredWrite});
    accepted.push_back(path);
  }
  // Protected like the workspace (docs/security.md, "Every writable root"): a host program
  // started there (an editor, an agent) runs what a command leaves at these names. Added after
  // every refusal was decided, so that one entry's names never refuse another entry.
  for (const auto& path : accepted) add_host_program_names(policy, path);
}

/// The `why` of a credential handed in by `filesystem.exposeCredentials`.
constexpr std::string_view kHandedIn =
    "filesystem.exposeCredentials: a credential handed in on purpose (read-only)";

/// `filesystem.exposeCredentials` (docs/security.md, "Handing a credential in"): each credential
/// named there is readable and read-only: re-exposed in the hidden home, bound read-only where a
/// writable root holds it, and left out of the concealed set (drop_handed_in()).
void add_handed_in(SandboxPolicy& policy, const PolicyInputs& inputs) {
  if (policy.home.empty() || policy.home == "/") return;
  for (const auto& name : inputs.expose_credentials) {
    if (!is_credential_name(name)) continue;
    const fs::path path = (policy.home / name).lexically_normal();
    if (std::ranges::find(policy.handed_in, path) != policy.handed_in.end()) continue;
    policy.handed_in.push_back(path);
    if (needs_reexpose(policy, path))
      add_exposure(policy.home_read_allowed,
                   {path, std::string(kHandedIn), Access::ReadOnly, Origin::ConfiguredRead});
    const auto row = std::ranges::find(credential_names(), name, &CredentialName::name);
    const NodeKind kind = row == credential_names().end() ? kFile : row->kind;
    if (std::ranges::any_of(policy.writable,
                            [&](const Exposure& e) { return is_within(path, e.path); }))
      add(policy.protected_paths, path, ProtectReason::Secret, kind, false);
  }
}

/// Takes the handed-in credentials out of the concealed set. One that lies below a credential
/// directory that stays concealed whole (`~/.gnupg/private-keys-v1.d` in a home workspace) is
/// still masked by it: said in a warning.
void drop_handed_in(SandboxPolicy& policy) {
  std::erase_if(policy.concealed, [&](const fs::path& path) {
    return std::ranges::find(policy.handed_in, path) != policy.handed_in.end();
  });
  for (const auto& path : policy.handed_in)
    for (const auto& dir : policy.concealed)
      if (path != dir && is_within(path, dir))
        policy.warnings.push_back("filesystem.exposeCredentials: " + path.string() +
                                  " lies in the credential directory " + dir.string() +
                                  ", which stays masked whole here: it is not handed in (hand in "
                                  "the directory, or start in a project directory)");
}

/// What git's signing reads in the hidden home, read-only (docs/security.md, "Signed commits"):
/// the ssh public key `user.signingKey` names, `gpg.ssh.allowedSignersFile`, and the public
/// files of the gpg home. The session found them (SigningFiles); the private halves are never
/// among them, and the credential set masks them wherever an exposure would cover them.
void add_signing_exposures(SandboxPolicy& policy, const SigningFiles& signing) {
  if (!policy.hide_home) return;
  // A file in a directory already bound (the git directory of a package's or a linked
  // worktree's repository, read-write) is seen there as it is; bound again, a symlink the
  // command left at its name would fail every later start (the bind refuses symlinks).
  const auto already_bound = [&](const fs::path& path) {
    const auto covers = [&](const Exposure& e) { return is_within(path, e.path); };
    return std::ranges::any_of(policy.writable, covers) ||
           std::ranges::any_of(policy.home_read_allowed, covers);
  };
  const auto expose = [&](const fs::path& path, const std::string& why) {
    if (!path.empty() && needs_reexpose(policy, path.lexically_normal()) &&
        !already_bound(path.lexically_normal()))
      add_exposure(policy.home_read_allowed, {path, why});
  };
  expose(signing.ssh_public_key, "git's ssh signing key (user.signingKey), its public half");
  expose(signing.allowed_signers, "git's allowed ssh signers (gpg.ssh.allowedSignersFile)");
  for (const auto& file : signing.gnupg_files)
    expose(file, "gpg's public keys, trust and options, to sign through the host's gpg-agent");
}

void add_private_tmp_warning(SandboxPolicy& policy) {
  if (!policy.private_tmp) return;
  for (auto temp : {"/tmp", "/var/tmp"})
    if (is_within(policy.workspace, temp))
      policy.warnings.push_back(std::string("the workspace lies in ") + temp +
                                ", which is private to each command: what it writes there "
                                "outside the workspace is discarded when it ends");
}

}  // namespace

SandboxPolicy default_policy(const PolicyInputs& inputs) {
  SandboxPolicy policy;
  policy.workspace = inputs.workspace.lexically_normal();
  policy.home = inputs.home.lexically_normal();
  // Compatibility C15: hide $HOME unless it is "/". When the workspace *is* the home, or contains
  // it, the user has chosen to work there and hiding it would hide the workspace itself.
  policy.hide_home =
      policy.home != "/" && !policy.home.empty() && !is_within(policy.home, policy.workspace);
  if (policy.hide_home) {
    policy.home_read_allowed = {{policy.home / ".gitconfig", "git's user configuration"},
                                {policy.home / ".config/git/config", "git's user configuration"}};
    for (const auto& extra : inputs.additional_allow_read) {
      const fs::path normal = extra.lexically_normal();
      // Outside the home everything is readable already (compatibility C15); only paths inside
      // the hidden home need to be re-exposed. Inside the workspace it is readable (and
      // writable) already; a read-only bind there would be covered by the workspace's bind
      // anyway, and must never stand in for a protection (the planner protects what lies
      // beneath it).
      if (!needs_reexpose(policy, normal)) continue;
      add_exposure(policy.home_read_allowed, {normal, "filesystem.additionalAllowRead",
                                              Access::CopyOnWrite, Origin::ConfiguredRead});
    }
    // pi-sandbox itself stays runnable inside (`pi-sandbox proxy-connect` is the SSH
    // ProxyCommand, docs/network.md) when it is installed in the home, e.g. ~/.local/bin.
    const fs::path self = inputs.self_exe.lexically_normal();
    if (!self.empty() && needs_reexpose(policy, self))
      add_exposure(policy.home_read_allowed, {self, "pi-sandbox itself"});
    std::vector<fs::path> hidden;
    if (inputs.expose_home_toolchains) {
      for (auto& e : toolchain_exposures(policy.home, policy.workspace, inputs.path_dirs,
                                         inputs.toolchain_env, hidden))
        add_exposure(policy.home_read_allowed, std::move(e));
    } else {
      for (const auto& dir : inputs.path_dirs)
        if (needs_reexpose(policy, dir.lexically_normal())) hidden.push_back(dir);
    }
    // A $PATH entry stays hidden unless some exposure covers it.
    for (const auto& dir : hidden)
      if (std::ranges::none_of(policy.home_read_allowed,
                               [&](const Exposure& e) { return is_within(dir, e.path); }) &&
          std::ranges::find(policy.hidden_path_dirs, dir) == policy.hidden_path_dirs.end())
        policy.hidden_path_dirs.push_back(dir);
  }
  policy.writable = {{policy.workspace, "the workspace", Access::ReadWrite}};
  policy.limits = inputs.limits;
  policy.protection = inputs.protection;
  add_workspace_rules(policy);
  add_startup_rules(policy, inputs);
  add_home_rules(policy, inputs);
  add_home_top_level(policy, inputs);
  add_git_rules(policy, inputs);
  policy.git = inputs.git;
  // Even inside the workspace (a deviation from compatibility C18): a command that replaced the
  // binary would run unsandboxed the next time pi-sandbox starts.
  if (!inputs.self_exe.empty())
    add(policy.protected_paths, inputs.self_exe, ProtectReason::SandboxBinary, kFile, false);
  add_additional_write(policy, inputs);
  add_handed_in(policy, inputs);
  add_hooks_path_rules(policy, inputs);
  policy.user_hooks_path = inputs.user_hooks_path;
  add_signing_exposures(policy, inputs.signing);
  policy.signing = inputs.signing;
  parents_first(policy.home_read_allowed);
  // The workspace stays first; the other read-write binds never overlap it.
  std::stable_sort(policy.writable.begin() + 1, policy.writable.end(),
                   [](const Exposure& a, const Exposure& b) {
                     return std::distance(a.path.begin(), a.path.end()) <
                            std::distance(b.path.begin(), b.path.end());
                   });
  policy.concealed =
      concealed_credentials(policy.home, policy.home_read_allowed, inputs.toolchain_env);
  // The credential set stays masked wherever a command could read it: in a workspace that is
  // or contains the home, or in whatever re-exposes part of the hidden home (docs/security.md,
  // "Credentials").
  for (auto& path : visible_credentials(policy.home, policy.workspace, policy.home_read_allowed))
    if (std::ranges::find(policy.concealed, path) == policy.concealed.end())
      policy.concealed.push_back(std::move(path));
  // An additionalAllowWrite entry that holds a credential (`~/.config/gh`) shows it too.
  for (auto& path : visible_credentials(policy.home, policy.workspace, policy.writable))
    if (std::ranges::find(policy.concealed, path) == policy.concealed.end())
      policy.concealed.push_back(std::move(path));
  drop_handed_in(policy);
  if (!policy.home.empty() && policy.home != "/")
    for (const auto& row : mixed_config_names())
      policy.sanitized.push_back({(policy.home / row.name).lexically_normal(), row.format});
  for (auto& copy : prefix_config_copies(policy, inputs.path_dirs, inputs.toolchain_env,
                                         inputs.installed_versions))
    policy.sanitized.push_back(std::move(copy));
  for (auto& copy : git_config_copies(policy, inputs.git_config_files))
    policy.sanitized.push_back(std::move(copy));
  add_private_tmp_warning(policy);
  return policy;
}

}  // namespace pisandbox::policy
