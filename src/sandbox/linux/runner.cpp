#include "sandbox/linux/runner.hpp"

#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>

#include "core/phase_trace.hpp"
#include "sandbox/linux/git_state.hpp"
#include "sandbox/linux/landlock_only.hpp"
#include "sandbox/linux/placeholders.hpp"

namespace pisandbox::sandbox::linux_ {

namespace fs = std::filesystem;

core::Result<PreparedSandbox> prepare_sandbox(const policy::SandboxPolicy& policy,
                                              Command command) {
  PreparedSandbox prepared;
  prepared.scan = policy::scan_writable_roots(policy, policy::scan_options(policy));
  core::phases::mark(core::phases::Mark::Scanned);
  prepared.protected_paths =
      policy::merge_protected(policy.protected_paths, prepared.scan.protected_paths);
  LaunchSpec& spec = prepared.spec;
  // A credential's other names (hard links, binds) are masked as the credential is
  // (docs/security.md, "Hard links and binds of a credential").
  policy::SandboxPolicy masked = policy;
  for (const auto& link : prepared.scan.credential_links) masked.concealed.push_back(link.path);
  spec.mounts = plan_mounts(masked, prepared.protected_paths, probe_host_path);
  if (!spec.mounts.unprotectable.empty())
    return core::fail("cannot enforce a protected path: " + spec.mounts.unprotectable.front(),
                      "hint: run pi-sandbox from a workspace outside the protected paths");
  spec.guard = plan_guard(policy, prepared.protected_paths, spec.mounts);
  if (quarantine_writable_inside(policy, spec.guard.quarantine))
    return core::fail("the quarantine " + spec.guard.quarantine.string() +
                          " would be writable by the command (it lies in the workspace)",
                      "hint: run pi-sandbox from a workspace that does not contain it (the home "
                      "itself is fine: its dot-directories are read-only)");
  spec.landlock = plan_landlock(policy);
  spec.landlock_abi = landlock_abi_version();
  // Unix sockets are brokered where the kernel can (docs/security.md, "Unix sockets");
  // otherwise refused, as without a broker.
  spec.seccomp = seccomp_rules(unix_broker_unsupported().empty() ? UnixSockets::Brokered
                                                                 : UnixSockets::Refused);
  spec.limits = policy.limits;
  if (policy.limits.max_processes != 0) spec.cgroups = probe_cgroups();
  spec.command = std::move(command);
  core::phases::mark(core::phases::Mark::Planned);
  return prepared;
}

bool quarantine_writable_inside(const policy::SandboxPolicy& policy, const fs::path& quarantine) {
  if (!deepest_root(quarantine, policy.home_writable_entries).empty()) return true;
  // The home bound read-only over the workspace: only its ordinary entries are writable.
  if (policy.home_read_only && policy::is_within(quarantine, policy.home)) return false;
  return std::ranges::any_of(policy.writable, [&](const policy::Exposure& e) {
    return policy::is_within(quarantine, e.path);
  });
}

namespace {

/// The `filesystem.additionalAllowWrite` entry (the deepest) that contains `path`, or empty.
fs::path configured_root(const policy::SandboxPolicy& policy, const fs::path& path) {
  std::vector<fs::path> roots;
  for (const auto& e : policy.writable)
    if (e.origin == policy::Origin::ConfiguredWrite) roots.push_back(e.path);
  return deepest_root(path, roots);
}

}  // namespace

GuardPlan plan_guard(const policy::SandboxPolicy& policy,
                     const std::vector<policy::ProtectedPath>& protected_paths,
                     const MountPlan& mounts) {
  GuardPlan plan;
  plan.names = mounts.guarded;
  plan.workspace = policy.workspace;
  plan.quarantine = default_quarantine_root(policy.home);
  for (const auto& e : policy.writable) plan.writable_roots.push_back(e.path);
  for (const auto& e : policy.home_writable_entries) plan.writable_roots.push_back(e);
  const auto root_of = [&](const fs::path& path) {
    return deepest_root(path, plan.writable_roots);
  };
  // The repository around the workspace: its index is where a command registers a gitlink.
  if (policy.git &&
      (!policy.git->git_file.empty() || policy.git->worktree_root != policy.workspace))
    if (const fs::path base = root_of(policy.git->git_dir); !base.empty())
      plan.indexes.push_back({policy.git->git_dir / "index", policy.git->worktree_root, base});
  // `.gitmodules` at the root of a working tree in a writable root: git reads submodule keys
  // from it (gitmodules(5)), and `git submodule add` writes it, so it is guarded by content.
  const auto add_gitmodules = [&](const fs::path& worktree) {
    const fs::path path = worktree / ".gitmodules";
    const fs::path base = root_of(path);
    if (base.empty()) return;
    const GuardedConfig config{path, base, policy::GitConfigFile::Gitmodules};
    if (std::ranges::find(plan.configs, config) == plan.configs.end())
      plan.configs.push_back(config);
  };
  if (policy.git) add_gitmodules(policy.git->worktree_root);
  // Submodules known before the command are not the command's; in the workspace, their
  // configurations are checked by content, as .git/config is.
  if (policy.git)
    for (const auto& module : policy.git->module_dirs) {
      plan.known_git_dirs.push_back(module);
      if (policy::is_within(module, policy.workspace))
        plan.configs.push_back({module / "config", policy.workspace});
    }
  for (const auto& p : protected_paths) {
    char value[8];
    if (policy.protection == policy::Protection::Guard && p.create_if_missing &&
        ::lgetxattr(p.path.c_str(), kPlaceholderXattr, value, sizeof value) >= 0)
      plan.leftover_placeholders.push_back(p.path);
    // `config.worktree` of a repository around the workspace while extensions.worktreeConfig is
    // on: git writes it (`git sparse-checkout`), so a missing one is guarded by content.
    if (p.reason == policy::ProtectReason::GitControl && p.path.filename() == "config.worktree" &&
        !p.create_if_missing) {
      if (const fs::path base = root_of(p.path); !base.empty())
        plan.configs.push_back({p.path, base});
      continue;
    }
    if (p.reason != policy::ProtectReason::GitHooks) continue;
    // The scan's repositories: the workspace's, and those of each additionalAllowWrite entry,
    // which is protected like the workspace (docs/security.md, "Every writable root").
    const fs::path git_dir = p.path.parent_path();
    const fs::path config_base = policy::is_within(git_dir, policy.workspace)
                                     ? policy.workspace
                                     : configured_root(policy, git_dir);
    if (config_base.empty()) continue;
    plan.known_git_dirs.push_back(git_dir);
    plan.indexes.push_back({git_dir / "index", git_dir.parent_path(), root_of(git_dir)});
    for (const char* leaf : {"config", "config.worktree"})
      plan.configs.push_back({git_dir / leaf, config_base});
    if (git_dir.filename() == ".git") add_gitmodules(git_dir.parent_path());
  }
  // Names by pattern at a writable root (`*.code-workspace`): guarded in either protection
  // mode, since no placeholder can stand for a pattern.
  for (const auto& pattern : policy.protected_patterns) {
    if (std::ranges::find(plan.writable_roots, pattern.dir) == plan.writable_roots.end()) continue;
    GuardedPattern guarded{pattern.dir, pattern.pattern,
                           std::string(policy::to_string(pattern.reason))};
    // What the scan found there is bound read-only (the user's own workspace file).
    for (const auto& p : protected_paths)
      if (p.path.parent_path() == pattern.dir &&
          policy::matches_name_pattern(pattern.pattern, p.path.filename().string()))
        guarded.existing.push_back(p.path.filename().string());
    plan.patterns.push_back(std::move(guarded));
  }
  return plan;
}

namespace {

/// The identity (st_dev, st_ino) of `path`, following symlinks or not; nullopt when missing.
SourceIdentity identity(const fs::path& path, SourceSymlinks symlinks) {
  struct stat st {};
  const int r =
      symlinks == SourceSymlinks::Follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st);
  return r == 0 ? SourceIdentity(std::pair{st.st_dev, st.st_ino}) : std::nullopt;
}

/// What the host files of `mounts` are, in the plan's order: each op's target (a mount covers
/// the file that was there when it was made, so a credential replaced by rename under a
/// concealing mount, or a pinned symlink replaced, is no longer covered) and each Bind and
/// Overlay source (reached through symlinks only where the plan follows them).
std::vector<SourceIdentity> source_identities(const MountPlan& mounts) {
  std::vector<SourceIdentity> out;
  for (const auto& op : mounts.ops) {
    // What is made inside a private tmpfs (a symlink, a mask of a missing name) covers nothing
    // of the host.
    if (op.kind != MountOpKind::Symlink && op.kind != MountOpKind::MaskMissing)
      out.push_back(identity(op.target, SourceSymlinks::Refuse));
    if (op.kind == MountOpKind::Bind || op.kind == MountOpKind::Overlay)
      out.push_back(identity(op.source, op.source_symlinks));
  }
  return out;
}

}  // namespace

core::Result<ReadyPlan> plan_ready(const policy::SandboxPolicy& policy) {
  auto prepared = prepare_sandbox(policy, Command{});
  if (!prepared) return std::unexpected(prepared.error());
  LaunchSpec& spec = prepared->spec;
  if (std::ranges::any_of(spec.mounts.ops, [](const MountOp& op) {
        return op.kind == MountOpKind::HostPlaceholder || op.kind == MountOpKind::HostScaffold;
      }))
    return core::fail("the plan makes placeholders on the host");
  spec.proxy_listeners = true;
  spec.confine_ahead = true;
  std::vector<SourceIdentity> sources = source_identities(spec.mounts);
  return ReadyPlan{std::move(*prepared), std::move(sources)};
}

core::Result<ReadyOffer> launch_ready(ReadyPlan plan) {
  auto sandbox = prepare_launch(plan.prepared.spec);
  if (!sandbox) return core::fail(sandbox.error().message);
  return ReadyOffer{std::move(plan.prepared.spec),
                    std::move(plan.sources),
                    std::move(*sandbox),
                    std::move(plan.prepared.protected_paths),
                    std::move(plan.prepared.scan),
                    HostRecord{},
                    false};
}

core::Result<ReadyOffer> prepare_ready(const policy::SandboxPolicy& policy) {
  auto plan = plan_ready(policy);
  if (!plan) return std::unexpected(plan.error());
  return launch_ready(std::move(*plan));
}

namespace {

/// The prepared sandbox of a verified `offer` for `command`: its plans as they were made,
/// moved out of it (the offer serves one command).
PreparedSandbox prepared_from(ReadyOffer& offer, Command command) {
  PreparedSandbox prepared{std::move(offer.spec), std::move(offer.protected_paths),
                           std::move(offer.scan)};
  prepared.spec.command = std::move(command);
  core::phases::mark(core::phases::Mark::Scanned);
  core::phases::mark(core::phases::Mark::Planned);
  return prepared;
}

}  // namespace

bool plans_hold(const ReadyPlan& made, const LaunchSpec& fresh) {
  const LaunchSpec& spec = made.prepared.spec;
  return spec.mounts == fresh.mounts && spec.landlock == fresh.landlock &&
         spec.landlock_abi == fresh.landlock_abi && spec.seccomp == fresh.seccomp &&
         spec.limits == fresh.limits && spec.cgroups == fresh.cgroups &&
         spec.guard == fresh.guard && made.sources == source_identities(fresh.mounts);
}

bool still_holds(const ReadyOffer& offer, const LaunchSpec& fresh) {
  const LaunchSpec& made = offer.spec;
  return offer.sandbox.pid() > 0 && made.mounts == fresh.mounts &&
         made.landlock == fresh.landlock && made.landlock_abi == fresh.landlock_abi &&
         made.seccomp == fresh.seccomp && made.limits == fresh.limits &&
         made.cgroups == fresh.cgroups && made.guard == fresh.guard &&
         offer.sources == source_identities(fresh.mounts);
}

Outcome run_sandboxed(const policy::SandboxPolicy& policy, Command command,
                      const RunOptions& options, const WarningSink& warn, ReadyOffer* ready) {
  // A verified offer's plans are those computed now would be: its record says nothing they
  // read has changed.
  const bool verified = ready != nullptr && ready->verified && ready->sandbox.pid() > 0;
  auto prepared = verified
                      ? core::Result<PreparedSandbox>(prepared_from(*ready, std::move(command)))
                      : prepare_sandbox(policy, std::move(command));
  if (!prepared)
    return std::unexpected(RunFailure{RunFailureKind::LaunchFailed, prepared.error().describe()});
  if (prepared->spec.landlock_abi == 0)
    warn(
        "warning: Landlock is unavailable on this kernel; the namespaces and the seccomp "
        "filter still confine the command (see `pi-sandbox doctor`)");
  if (policy.limits.max_processes != 0 &&
      prepared->spec.cgroups.kind == CgroupSupport::Kind::None &&
      (!options.say_no_cgroup || options.say_no_cgroup()))
    warn("warning: no cgroup for this command (" + prepared->spec.cgroups.why_not + "): " +
         (::geteuid() == 0 ? std::string("nothing limits its processes")
                           : "only RLIMIT_NPROC limits its processes (" +
                                 std::to_string(policy.limits.max_processes) + ")") +
         ", and nothing its memory but the tmpfs budget; `pi-sandbox doctor` says how to get one");
  if (auto line = policy::home_workspace_warning(policy);
      !line.empty() && (!options.say_home_workspace || options.say_home_workspace()))
    warn("warning: " + line);
  for (const auto& link : prepared->scan.credential_links)
    warn("warning: " + policy::credential_link_warning(link));
  RunOptions with_notices = options;
  if (!with_notices.notice) with_notices.notice = warn;
  // Kept before the command: what git may leave half done in the repository around a
  // workspace that is a strict subdirectory of it is put back afterwards.
  const auto git_state = GitStateSnapshot::take(policy, prepared->protected_paths);
  // The plans again for the weaker sandbox below: launch() takes them, run_command() does not.
  std::optional<LaunchSpec> launched;
  Outcome outcome = Outcome(Exited{0});
  if (ready != nullptr && (verified || still_holds(*ready, prepared->spec))) {
    core::phases::mark(core::phases::Mark::Checked);
    outcome = run_command(std::move(ready->sandbox), prepared->spec.command, with_notices);
  } else {
    // A sandbox whose plan no longer holds is never used: it goes before the fresh one starts.
    if (ready != nullptr) ReadySandbox stale = std::move(ready->sandbox);
    launched = prepared->spec;
    outcome = launch(std::move(prepared->spec), with_notices);
  }
  LaunchSpec& spare = launched ? *launched : prepared->spec;
  // The gate said no (RunOptions::gate): nothing of the command ran; its caller runs it again.
  if (!outcome && outcome.error().kind == RunFailureKind::Stale) return outcome;
  // Where the namespaces cannot be made (nothing of the command ran), the weaker sandbox, if
  // Landlock is there; never none (docs/security.md, "Where namespaces cannot be made").
  if (!outcome && outcome.error().kind == RunFailureKind::LaunchFailed)
    if (const std::string refused = namespaces_refused(); !refused.empty()) {
      if (spare.landlock_abi == 0) {
        outcome.error().message += "\nno weaker sandbox either: Landlock is unavailable";
        return outcome;
      }
      // The weaker sandbox has no gate: the check is waited for before it.
      if (options.gate && !options.gate())
        return std::unexpected(
            RunFailure{RunFailureKind::Stale, "the sandbox made ahead is stale"});
      warn(std::string(kLandlockOnlyNotice));
      // No placeholder can be mounted here: strict mode's missing names are guarded instead.
      if (policy.protection == policy::Protection::Strict) {
        policy::SandboxPolicy guarded = policy;
        guarded.protection = policy::Protection::Guard;
        auto replanned = prepare_sandbox(guarded, spare.command);
        if (!replanned)
          return std::unexpected(
              RunFailure{RunFailureKind::LaunchFailed, replanned.error().describe()});
        return run_landlock_only(guarded, std::move(replanned->spec), with_notices);
      }
      outcome = run_landlock_only(policy, std::move(spare), with_notices);
    }
  if (git_state) {
    // An operation that cannot have completed fails whatever status the shell gave the
    // command (docs/security.md, "Repositories around the workspace").
    const bool succeeded = outcome && std::holds_alternative<Exited>(*outcome) &&
                           std::get<Exited>(*outcome).code == 0 &&
                           !git_state->hidden_stop(with_notices.words);
    if (auto line = git_state->settle(!succeeded, with_notices.words); !line.empty()) {
      with_notices.notice(line);
      // Put back, the operation did not happen: no exit status of git's may say it did.
      if (outcome && std::holds_alternative<Exited>(*outcome)) outcome = Exited{kGitPutBackExit};
    } else if (!succeeded) {
      // Nothing was put back: the command keeps git's exit status.
      if (auto stopped = git_state->stopped_line(with_notices.words); !stopped.empty())
        with_notices.notice(stopped);
    }
  }
  core::phases::mark(core::phases::Mark::CleanedUp);
  return outcome;
}

}  // namespace pisandbox::sandbox::linux_
