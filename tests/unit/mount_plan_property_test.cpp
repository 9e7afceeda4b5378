// A property of the mount plan over random policies and random hosts: a protected path is
// protected whatever else the plan exposes, in whatever order the binds are made. No
// protected path that exists, and no missing one that must stay uncreatable, ends up with a
// read-write host bind as the last mount covering it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "policy/sandbox_policy.hpp"
#include "sandbox/linux/mount_plan.hpp"

namespace pisandbox::sandbox::linux_ {
namespace {

using policy::is_within;
using policy::NodeKind;
using policy::ProtectedPath;

/// Paths below a workspace or a home that random hosts may hold; a directory entry ends in '/'.
const std::vector<std::string> kRelative = {".git/",
                                            ".git/hooks/",
                                            ".git/config",
                                            "tools/",
                                            "tools/pi-sandbox",
                                            ".bashrc",
                                            ".vscode/",
                                            ".claude/",
                                            ".claude/commands/",
                                            ".pi/",
                                            ".pi/settings.json",
                                            "sub/",
                                            "sub/.git/",
                                            "sub/.git/hooks/",
                                            ".env",
                                            ".ssh/",
                                            ".config/",
                                            ".config/git/",
                                            ".config/git/config",
                                            ".local/",
                                            ".local/bin/",
                                            ".local/bin/pi-sandbox",
                                            ".gitconfig",
                                            ".pi/agent/",
                                            ".cargo/",
                                            ".cargo/bin/",
                                            "bin/"};

/// Where workspaces, homes and binaries may be in a random case.
const std::vector<std::string> kWorkspaces = {
    "/home/u/ws", "/home/u", "/tmp/ws", "/opt/ws", "/home", "/home/u/ws/sub", "/home/u/.local"};

struct RandomHost {
  std::map<fs::path, PathFacts> entries;

  void add_with_parents(const fs::path& path, PathKind kind) {
    for (fs::path dir = path.parent_path(); dir != dir.root_path(); dir = dir.parent_path())
      entries.emplace(dir, PathFacts{PathKind::Directory, {}});
    entries[path] = PathFacts{kind, {}};
  }
  PathFacts probe(const fs::path& path) const {
    const auto it = entries.find(path);
    return it == entries.end() ? PathFacts{} : it->second;
  }
};

/// The last mount of the plan, in order, whose target is `path` or one of its ancestors: the
/// one whose content and flags decide what `path` is inside the sandbox.
const MountOp* covering_mount(const MountPlan& plan, const fs::path& path) {
  const MountOp* found = nullptr;
  for (const auto& op : plan.ops) {
    const bool covers = op.kind == MountOpKind::RootReadOnly || op.kind == MountOpKind::Tmpfs ||
                        op.kind == MountOpKind::Bind || op.kind == MountOpKind::HostPlaceholder ||
                        op.kind == MountOpKind::MaskMissing || op.kind == MountOpKind::Proc;
    if (covers && is_within(path, op.target)) found = &op;
  }
  return found;
}

/// Whether the protection of `p` holds in `plan`: the mount that covers it last is not a
/// read-write bind of the host.
bool holds(const MountPlan& plan, const ProtectedPath& p, const RandomHost& host,
           policy::Protection protection) {
  const PathKind kind = host.probe(p.path).kind;
  const bool must_hold = kind != PathKind::Missing || p.create_if_missing;
  if (!must_hold) return true;
  if (protection == policy::Protection::Guard && kind == PathKind::Missing) {
    // Guarded from a writable root that contains it, or (a secret) deliberately creatable.
    if (p.reason == policy::ProtectReason::Secret) return true;
    if (std::ranges::any_of(plan.guarded, [&](const GuardedName& g) {
          return g.path == p.path && is_within(g.path, g.base) && g.path != g.base;
        }))
      return true;
  }
  const MountOp* op = covering_mount(plan, p.path);
  return op != nullptr && !(op->kind == MountOpKind::Bind && !op->read_only);
}

std::string describe_case(const policy::SandboxPolicy& policy, const RandomHost& host,
                          const MountPlan& plan) {
  std::string out =
      "workspace " + policy.workspace.string() + ", home " + policy.home.string() + "\nre-exposed:";
  for (const auto& p : policy.home_read_allowed) out += " " + p.path.string();
  out += "\nhost:";
  for (const auto& [path, facts] : host.entries)
    out += " " + path.string() + (facts.kind == PathKind::Directory ? "/" : "");
  out += "\nplan:\n";
  for (const auto& op : plan.ops) out += "  " + describe(op) + (op.read_only ? " [ro]\n" : "\n");
  return out;
}

TEST(MountPlanProperty, NoProtectedPathEndsUnderALaterWritableBind) {
  std::mt19937 random(20261130);  // fixed: a failure reproduces
  const auto chance = [&](int percent) {
    return std::uniform_int_distribution<int>(0, 99)(random) < percent;
  };
  const auto pick = [&](const std::vector<std::string>& from) {
    return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(random)];
  };
  int checked = 0;
  for (int round = 0; round < 500; ++round) {
    RandomHost host;
    const fs::path home = "/home/u";
    const fs::path workspace = pick(kWorkspaces);
    host.add_with_parents(home / "x", PathKind::Missing);
    host.entries.erase(home / "x");
    host.entries[home] = PathFacts{PathKind::Directory, {}};
    host.add_with_parents(workspace / "x", PathKind::Missing);
    host.entries.erase(workspace / "x");
    host.entries[workspace] = PathFacts{PathKind::Directory, {}};
    host.add_with_parents("/var/tmp/x", PathKind::Missing);
    host.entries.erase("/var/tmp/x");
    for (const fs::path& base : {workspace, home, workspace / "sub"})
      for (const auto& relative : kRelative)
        if (chance(35)) {
          const bool dir = relative.ends_with('/');
          const fs::path path = (base / relative).lexically_normal();
          host.add_with_parents(dir ? path.parent_path() : path,
                                dir ? PathKind::Directory : PathKind::File);
        }

    policy::PolicyInputs inputs;
    inputs.workspace = workspace;
    inputs.home = home;
    const std::vector<std::string> binaries = {
        "/usr/bin/pi-sandbox", "/home/u/.local/bin/pi-sandbox",
        (workspace / "tools/pi-sandbox").string(), "/tmp/stage/pi-sandbox"};
    inputs.self_exe = pick(binaries);
    host.add_with_parents(inputs.self_exe, PathKind::File);
    for (const auto& relative : kRelative)
      if (chance(10))
        inputs.additional_allow_read.push_back(
            (pick({home.string(), workspace.string()}) + "/" + relative));
    for (const auto& dir : {"/home/u/.local/bin", "/home/u/.cargo/bin", "/usr/bin", "/home/u/bin"})
      if (chance(50)) inputs.path_dirs.emplace_back(dir);
    inputs.config_locations = {home / ".pi/agent/extensions/pi-sandbox/config.json"};
    for (const auto& [path, facts] : host.entries)
      if (path.parent_path() == home) inputs.home_entries.push_back(path.filename().string());
    // Both protections, alternately: the guard must hold what strict mode holds.
    inputs.protection = round % 2 == 0 ? policy::Protection::Guard : policy::Protection::Strict;
    policy::SandboxPolicy policy = policy::default_policy(inputs);
    // The planner must hold on its own too: re-exposes the policy would never produce (inside
    // the workspace, over the binary) are added directly.
    if (policy.hide_home)
      for (const auto& relative : kRelative)
        if (chance(8))
          policy.home_read_allowed.push_back((workspace / relative).lexically_normal());

    std::vector<ProtectedPath> protect = policy.protected_paths;
    for (const fs::path& repo : {workspace, workspace / "sub"})
      if (host.probe(repo / ".git").kind == PathKind::Directory)
        protect.push_back(
            {repo / ".git/hooks", policy::ProtectReason::GitHooks, NodeKind::Directory, true});
    const MountPlan plan =
        plan_mounts(policy, protect, [&](const fs::path& p) { return host.probe(p); });
    if (!plan.unprotectable.empty()) continue;  // the run refuses to start: nothing to hold
    for (const auto& p : protect) {
      ++checked;
      ASSERT_TRUE(holds(plan, p, host, policy.protection))
          << "round " << round << ": " << p.path << " is writable\n"
          << describe_case(policy, host, plan);
    }
  }
  EXPECT_GT(checked, 10000);
}

}  // namespace
}  // namespace pisandbox::sandbox::linux_
