// The mount plan and the Landlock plan, compared whole (docs/cases.md, C-01, C-04).
#include "sandbox/linux/mount_plan.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <algorithm>
#include <map>

#include "sandbox/linux/landlock.hpp"
#include "sandbox/linux/runner.hpp"
#include "sandbox/linux/seccomp.hpp"

namespace pisandbox::sandbox::linux_ {

// Readable failure output: one `describe()` line per op.
void PrintTo(const MountOp& op, std::ostream* os) {
  *os << describe(op) << (op.read_only ? " [ro]" : "") << " src=" << op.source;
}

namespace {

using policy::NodeKind;
using policy::ProtectedPath;
using policy::ProtectReason;

constexpr auto F = NodeKind::File;
constexpr auto D = NodeKind::Directory;
using K = MountOpKind;

/// A fake host: absolute path -> facts; everything else is missing.
PathProbe fake_host(std::map<fs::path, PathFacts> entries) {
  return [entries = std::move(entries)](const fs::path& p) {
    auto it = entries.find(p);
    return it == entries.end() ? PathFacts{} : it->second;
  };
}

/// Compares two plans op by op, so that a failure names the first op that differs.
void expect_ops(const std::vector<MountOp>& actual, const std::vector<MountOp>& expected) {
  for (std::size_t i = 0; i < std::min(actual.size(), expected.size()); ++i)
    EXPECT_EQ(actual[i], expected[i]) << "op " << i;
  EXPECT_EQ(actual.size(), expected.size());
  for (std::size_t i = expected.size(); i < actual.size(); ++i)
    ADD_FAILURE() << "unexpected op " << i << ": " << describe(actual[i]);
}

const PathFacts kDir{PathKind::Directory, {}};
const PathFacts kFile{PathKind::File, {}};
PathFacts symlink_to(const char* target) {
  return {PathKind::Symlink, target};
}

std::map<fs::path, PathFacts> base_host() {
  return {{"/home", kDir},
          {"/home/u", kDir},
          {"/home/u/ws", kDir},
          {"/var", kDir},
          {"/var/tmp", kDir},
          {"/home/u/.gitconfig", kFile},
          {"/home/u/dotfiles", kDir},
          {"/home/u/dotfiles/bashrc", kFile}};
}

policy::SandboxPolicy policy_for_ws() {
  policy::SandboxPolicy p;
  p.workspace = "/home/u/ws";
  p.home = "/home/u";
  p.hide_home = true;
  p.home_read_allowed = {"/home/u/.gitconfig", "/home/u/.config/git/config"};
  p.writable = {"/home/u/ws"};
  return p;
}

/// The same in strict mode (filesystem.protection "strict"): placeholders, not the guard.
policy::SandboxPolicy strict_policy_for_ws() {
  policy::SandboxPolicy p = policy_for_ws();
  p.protection = policy::Protection::Strict;
  return p;
}

std::vector<MountOp> base_ops() {
  std::vector<MountOp> ops = {
      {K::RootReadOnly, "/", "/", true, D, "", "host root"},
      {K::Tmpfs, "/dev", "", false, D, "0755", "private /dev"},
  };
  for (auto node : {"null", "zero", "full", "random", "urandom", "tty"}) {
    const fs::path p = fs::path("/dev") / node;
    ops.push_back({K::Bind, p, p, true, F, "", "device node"});
  }
  ops.push_back({K::DevPts, "/dev/pts", "", false, D, "", "private ptys"});
  ops.push_back({K::Symlink, "/dev/ptmx", "pts/ptmx", false, F, "", ""});
  ops.push_back({K::Tmpfs, "/dev/shm", "", false, D, "1777", "private shm"});
  ops.push_back({K::Symlink, "/dev/fd", "/proc/self/fd", false, F, "", ""});
  ops.push_back({K::Symlink, "/dev/stdin", "/proc/self/fd/0", false, F, "", ""});
  ops.push_back({K::Symlink, "/dev/stdout", "/proc/self/fd/1", false, F, "", ""});
  ops.push_back({K::Symlink, "/dev/stderr", "/proc/self/fd/2", false, F, "", ""});
  ops.push_back({K::Proc, "/proc", "", false, D, "", "private procfs"});
  ops.push_back({K::Tmpfs, "/tmp", "", false, D, "1777", "private temp"});
  ops.push_back({K::Tmpfs, "/var/tmp", "", false, D, "1777", "private temp"});
  ops.push_back(
      {K::Tmpfs, "/home/u", "", false, D, "0700", "hidden home (empty, private, throw-away)"});
  ops.push_back({K::Bind, "/home/u/.gitconfig", "/home/u/.gitconfig", true, F, "",
                 "re-exposed read-only", IfSourceMissing::Skip, SourceSymlinks::Follow});
  ops.push_back({K::Bind, "/home/u/ws", "/home/u/ws", false, D, "", "workspace (read-write)"});
  return ops;
}

// docs/cases.md, C-15: a missing parent of a protected name (`.claude`) is made as an
// ordinary directory (a scaffold, pinned so it cannot be renamed away), and only the
// protected name itself is held.
TEST(MountPlan, StrictMissingProtectedNamesGetPlaceholdersAndHomeOnesAreMaskedInTheTmpfs) {
  const std::vector<ProtectedPath> protect = {
      {"/home/u/ws/.bashrc", ProtectReason::DangerousFile, F, true},
      {"/home/u/ws/.claude/commands", ProtectReason::DangerousFile, D, true},
      {"/home/u/ws/key.pem", ProtectReason::Secret, F, false},  // pattern: only if it exists
      {"/home/u/.pi/agent/settings.json", ProtectReason::SecurityControl, F, true},
      {"/home/u/.pi/agent/logs", ProtectReason::SecurityControl, D, true},
      {"/usr/bin/pi-sandbox", ProtectReason::SandboxBinary, F, false},
  };
  const MountPlan plan = plan_mounts(strict_policy_for_ws(), protect, fake_host(base_host()));
  auto expected = base_ops();
  expected.push_back({K::HostScaffold, "/home/u/ws/.claude", "", false, D, "",
                      "dangerous-file (missing parent: made, removed afterwards if empty)"});
  expected.push_back({K::Bind, "/home/u/ws/.claude", "/home/u/ws/.claude", false, D, "",
                      "pinned parent of a protected path", IfSourceMissing::Scaffold});
  expected.push_back({K::HostPlaceholder, "/home/u/ws/.bashrc", "", true, D, "",
                      "dangerous-file (missing: placeholder)"});
  expected.push_back({K::HostPlaceholder, "/home/u/ws/.claude/commands", "", true, D, "",
                      "dangerous-file (missing: placeholder)"});
  expected.push_back(
      {K::MaskMissing, "/home/u/.pi/agent/settings.json", "", true, F, "", "security-control"});
  expected.push_back(
      {K::MaskMissing, "/home/u/.pi/agent/logs", "", true, D, "", "security-control"});
  expect_ops(plan.ops, expected);
  EXPECT_TRUE(plan.unprotectable.empty());
}

TEST(MountPlan, StrictSymlinksArePinnedAndTheirTargetsProtected) {
  auto host = base_host();
  host["/home/u/ws/.bashrc"] =
      symlink_to("/home/u/dotfiles/bashrc");               // docs/cases.md, C-01: outside the ws
  host["/home/u/ws/.vscode"] = symlink_to("sub/.vscode");  // docs/cases.md, C-04: inside the ws
  host["/home/u/ws/sub"] = kDir;
  host["/home/u/ws/sub/.vscode"] = kDir;
  host["/home/u/ws/.zshrc"] = symlink_to("dots/zshrc");  // dangling, inside the ws
  host["/home/u/ws/.git"] = kDir;
  host["/home/u/ws/.git/hooks"] = kDir;
  const std::vector<ProtectedPath> protect = {
      {"/home/u/ws/.bashrc", ProtectReason::DangerousFile, F, true},
      {"/home/u/ws/.vscode", ProtectReason::DangerousFile, D, true},
      {"/home/u/ws/.zshrc", ProtectReason::DangerousFile, F, true},
      {"/home/u/ws/.git/hooks", ProtectReason::GitHooks, D, true},
  };
  const MountPlan plan = plan_mounts(strict_policy_for_ws(), protect, fake_host(host));
  auto expected = base_ops();
  expected.push_back({K::HostScaffold, "/home/u/ws/dots", "", false, D, "",
                      "dangerous-file (missing parent: made, removed afterwards if empty)"});
  expected.push_back({K::Bind, "/home/u/ws/sub", "/home/u/ws/sub", false, D, "",
                      "pinned parent of a protected path", IfSourceMissing::Scaffold});
  expected.push_back({K::Bind, "/home/u/ws/dots", "/home/u/ws/dots", false, D, "",
                      "pinned parent of a protected path", IfSourceMissing::Scaffold});
  expected.push_back({K::Bind, "/home/u/ws/.git", "/home/u/ws/.git", false, D, "",
                      "pinned parent of a protected path", IfSourceMissing::Scaffold});
  expected.push_back({K::PinSymlink, "/home/u/ws/.bashrc", "/home/u/ws/.bashrc", true, F, "",
                      "dangerous-file (symlink)"});
  expected.push_back({K::PinSymlink, "/home/u/ws/.vscode", "/home/u/ws/.vscode", true, F, "",
                      "dangerous-file (symlink)"});
  expected.push_back({K::PinSymlink, "/home/u/ws/.zshrc", "/home/u/ws/.zshrc", true, F, "",
                      "dangerous-file (symlink)"});
  expected.push_back({K::Bind, "/home/u/ws/sub/.vscode", "/home/u/ws/sub/.vscode", true, D, "",
                      "dangerous-file", IfSourceMissing::Placeholder});
  expected.push_back({K::HostPlaceholder, "/home/u/ws/dots/zshrc", "", true, D, "",
                      "dangerous-file (missing: placeholder)"});
  expected.push_back({K::Bind, "/home/u/ws/.git/hooks", "/home/u/ws/.git/hooks", true, D, "",
                      "git-hooks", IfSourceMissing::Placeholder});
  expect_ops(plan.ops, expected);
}

// docs/security.md, "The guard": nothing is made on the host for a missing protected name;
// the supervisor guards it from its writable root; a missing secret is not protected at all.
TEST(MountPlan, MissingProtectedNamesAreGuardedWithoutPlaceholdersOrScaffolds) {
  const std::vector<ProtectedPath> protect = {
      {"/home/u/ws/.bashrc", ProtectReason::DangerousFile, F, true},
      {"/home/u/ws/.claude/commands", ProtectReason::DangerousFile, D, true},
      {"/home/u/ws/.env", ProtectReason::Secret, F, true},
      {"/home/u/ws/secrets", ProtectReason::Secret, D, true},
      {"/home/u/ws/key.pem", ProtectReason::Secret, F, false},
      {"/home/u/.pi/agent/settings.json", ProtectReason::SecurityControl, F, true},
      {"/usr/bin/pi-sandbox", ProtectReason::SandboxBinary, F, false},
  };
  const MountPlan plan = plan_mounts(policy_for_ws(), protect, fake_host(base_host()));
  auto expected = base_ops();
  expected.push_back(
      {K::MaskMissing, "/home/u/.pi/agent/settings.json", "", true, F, "", "security-control"});
  expect_ops(plan.ops, expected);
  const std::vector<GuardedName> guarded = {
      {"/home/u/ws/.bashrc", "/home/u/ws", "dangerous-file"},
      {"/home/u/ws/.claude/commands", "/home/u/ws", "dangerous-file"}};
  EXPECT_EQ(plan.guarded, guarded);
  EXPECT_TRUE(plan.unprotectable.empty());
}

TEST(MountPlan, AGuardedNameBehindASymlinkIsGuardedWhereItLeadsAndTheLinkIsPinned) {
  auto host = base_host();
  host["/home/u/ws/.zshrc"] = symlink_to("dots/zshrc");  // dangling, inside the ws
  host["/home/u/ws/.git"] = kDir;
  const std::vector<ProtectedPath> protect = {
      {"/home/u/ws/.zshrc", ProtectReason::DangerousFile, F, true},
      {"/home/u/ws/.git/hooks", ProtectReason::GitHooks, D, true},
  };
  const MountPlan plan = plan_mounts(policy_for_ws(), protect, fake_host(host));
  auto expected = base_ops();
  expected.push_back({K::PinSymlink, "/home/u/ws/.zshrc", "/home/u/ws/.zshrc", true, F, "",
                      "dangerous-file (symlink)"});
  expect_ops(plan.ops, expected);
  const std::vector<GuardedName> guarded = {
      {"/home/u/ws/dots/zshrc", "/home/u/ws", "dangerous-file"},
      {"/home/u/ws/.git/hooks", "/home/u/ws", "git-hooks"}};
  EXPECT_EQ(plan.guarded, guarded);
}

// A guarded name in a git directory the workspace writes (the enclosing repository's) is
// guarded from that read-write bind, the deepest writable root around it.
TEST(MountPlan, AGuardedNameIsWalkedFromItsDeepestWritableRoot) {
  auto host = base_host();
  host["/home/u/repo"] = kDir;
  host["/home/u/repo/.git"] = kDir;
  policy::SandboxPolicy p = policy_for_ws();
  p.writable.push_back({"/home/u/repo/.git", "git directory", policy::Access::ReadWrite});
  const std::vector<ProtectedPath> protect = {
      {"/home/u/repo/.git/hooks", ProtectReason::GitControl, D, true}};
  const MountPlan plan = plan_mounts(p, protect, fake_host(host));
  const std::vector<GuardedName> guarded = {
      {"/home/u/repo/.git/hooks", "/home/u/repo/.git", "git-control"}};
  EXPECT_EQ(plan.guarded, guarded);
}

// docs/security.md, "Every writable root": a filesystem.additionalAllowWrite entry holding a
// repository gets what the workspace gets: its hooks read-only (parents pinned), its
// configuration guarded by content, the names host programs run guarded at its root.
TEST(MountPlan, AnAdditionalWritableRootIsProtectedLikeTheWorkspace) {
  policy::PolicyInputs in{"/home/u/ws", "/home/u", "", {}, {}};
  in.additional_allow_write = {"/srv/src"};
  const policy::SandboxPolicy p = policy::default_policy(in);
  auto host = base_host();
  for (const char* dir :
       {"/srv", "/srv/src", "/srv/src/repo", "/srv/src/repo/.git", "/srv/src/repo/.git/hooks"})
    host[dir] = kDir;
  host["/srv/src/mine.code-workspace"] = kFile;
  const auto protect = policy::merge_protected(  // with what the scan finds
      p.protected_paths,
      {{"/srv/src/repo/.git/hooks", ProtectReason::GitHooks, D, true},
       {"/srv/src/mine.code-workspace", ProtectReason::DangerousFile, F, false}});
  const MountPlan plan = plan_mounts(p, protect, fake_host(host));
  const auto has = [&](const MountOp& op) {
    return std::ranges::find(plan.ops, op) != plan.ops.end();
  };
  EXPECT_TRUE(has({K::Bind, "/srv/src/repo/.git/hooks", "/srv/src/repo/.git/hooks", true, D, "",
                   "git-hooks", IfSourceMissing::Placeholder}));
  for (const char* dir : {"/srv/src/repo", "/srv/src/repo/.git"})
    EXPECT_TRUE(has({K::Bind, dir, dir, false, D, "", "pinned parent of a protected path",
                     IfSourceMissing::Scaffold}))
        << dir;
  for (const char* name : {"/srv/src/.vscode", "/srv/src/.cursor", "/srv/src/.mcp.json"})
    EXPECT_NE(std::ranges::find(plan.guarded, GuardedName{name, "/srv/src", "dangerous-file"}),
              plan.guarded.end())
        << name;
  const GuardPlan guard = plan_guard(p, protect, plan);
  EXPECT_NE(
      std::ranges::find(guard.configs, GuardedConfig{"/srv/src/repo/.git/config", "/srv/src"}),
      guard.configs.end());
  EXPECT_NE(std::ranges::find(guard.known_git_dirs, fs::path("/srv/src/repo/.git")),
            guard.known_git_dirs.end());
  // `.gitmodules` at the repository's working tree is guarded by content, not as a name.
  EXPECT_NE(std::ranges::find(guard.configs, GuardedConfig{"/srv/src/repo/.gitmodules", "/srv/src",
                                                           policy::GitConfigFile::Gitmodules}),
            guard.configs.end());
  for (const auto& name : plan.guarded) EXPECT_NE(name.path.filename(), ".gitmodules");
  EXPECT_EQ(guard.patterns,
            (std::vector<GuardedPattern>{
                {"/home/u/ws", "*.code-workspace", "dangerous-file"},
                {"/srv/src", "*.code-workspace", "dangerous-file", {"mine.code-workspace"}}}));
  EXPECT_TRUE(has({K::Bind, "/srv/src/mine.code-workspace", "/srv/src/mine.code-workspace", true, F,
                   "", "dangerous-file", IfSourceMissing::Placeholder}));
}

// The repository whose working tree is the workspace: its `.gitmodules` is guarded by content
// (gitmodules(5): `git submodule add` writes it), once; the one of a repository around the
// workspace, outside every writable root, is not the guard's (it is not writable).
TEST(MountPlan, GitmodulesOfAWorkingTreeInAWritableRootIsGuardedByContent) {
  const auto gitmodules_configs = [](const fs::path& ws, const policy::GitLayout& git) {
    policy::PolicyInputs in{ws, "/home/u", "", {}, {}};
    in.git = git;
    const policy::SandboxPolicy p = policy::default_policy(in);
    auto host = base_host();
    host[ws.string()] = kDir;
    const auto protect = policy::merge_protected(
        p.protected_paths, {{git.git_dir / "hooks", ProtectReason::GitHooks, D, true}});
    const GuardPlan guard = plan_guard(p, protect, plan_mounts(p, protect, fake_host(host)));
    std::vector<GuardedConfig> out;
    for (const auto& c : guard.configs)
      if (c.file == policy::GitConfigFile::Gitmodules) out.push_back(c);
    return out;
  };
  EXPECT_EQ(gitmodules_configs("/home/u/ws", {"/home/u/ws", "/home/u/ws/.git", "/home/u/ws/.git"}),
            (std::vector<GuardedConfig>{
                {"/home/u/ws/.gitmodules", "/home/u/ws", policy::GitConfigFile::Gitmodules}}));
  EXPECT_EQ(
      gitmodules_configs("/home/u/src/ws", {"/home/u/src", "/home/u/src/.git", "/home/u/src/.git"}),
      std::vector<GuardedConfig>{});
}

TEST(MountPlan, NothingIsMountedBelowAReadOnlyDirectory) {
  auto host = base_host();
  host["/home/u/ws/secrets"] = kDir;
  host["/home/u/ws/secrets/repo"] = kDir;
  host["/home/u/ws/secrets/repo/.git"] = kDir;
  const std::vector<ProtectedPath> protect = {
      {"/home/u/ws/secrets", ProtectReason::Secret, D, true},
      {"/home/u/ws/secrets/repo/.git/hooks", ProtectReason::GitHooks, D, true},
  };
  const MountPlan plan = plan_mounts(policy_for_ws(), protect, fake_host(host));
  auto expected = base_ops();
  expected.push_back({K::Bind, "/home/u/ws/secrets", "/home/u/ws/secrets", true, D, "", "secret",
                      IfSourceMissing::Placeholder});
  expect_ops(plan.ops, expected);
}

TEST(MountPlan, AWorkspaceInsideAProtectedDirectoryIsRefused) {
  auto policy = policy_for_ws();
  const std::vector<ProtectedPath> protect = {{"/home/u", ProtectReason::SecurityControl, D, true}};
  const MountPlan plan = plan_mounts(policy, protect, fake_host(base_host()));
  ASSERT_EQ(plan.unprotectable.size(), 1u);
  EXPECT_EQ(plan.unprotectable[0], "/home/u: the workspace lies inside this protected path");
}

TEST(MountPlan, WorkspaceUnderTmpComesAfterThePrivateTmp) {
  policy::SandboxPolicy p;
  p.workspace = "/tmp/ws";
  p.home = "/";
  p.writable = {"/tmp/ws"};
  const MountPlan plan = plan_mounts(p, {}, fake_host({}));
  ASSERT_GE(plan.ops.size(), 2u);
  EXPECT_EQ(plan.ops[plan.ops.size() - 2],
            (MountOp{K::Tmpfs, "/tmp", "", false, D, "1777", "private temp"}));
  EXPECT_EQ(plan.ops.back(),
            (MountOp{K::Bind, "/tmp/ws", "/tmp/ws", false, D, "", "workspace (read-write)"}));
}

TEST(MountPlan, ABinaryInThePrivateTmpIsBoundReadOnly) {
  policy::SandboxPolicy p;
  p.workspace = "/w";
  p.home = "/";
  p.writable = {"/w"};
  const std::vector<ProtectedPath> protect = {
      {"/tmp/stage/pi-sandbox", ProtectReason::SandboxBinary, F, false}};
  const MountPlan plan = plan_mounts(
      p, protect,
      fake_host(
          {{"/w", kDir}, {"/tmp", kDir}, {"/tmp/stage", kDir}, {"/tmp/stage/pi-sandbox", kFile}}));
  EXPECT_EQ(plan.ops.back(), (MountOp{K::Bind, "/tmp/stage/pi-sandbox", "/tmp/stage/pi-sandbox",
                                      true, F, "", "pi-sandbox itself, read-only",
                                      IfSourceMissing::Skip, SourceSymlinks::Follow}));
}

TEST(MountPlan, AReExposeInsideTheWorkspaceNeverUnprotectsWhatLiesBeneath) {
  // The escape: the binary (or `<ws>/.git`) on the home's read-only re-expose list was taken
  // as read-only already, and the workspace's read-write bind, made after, covered it.
  auto policy = policy_for_ws();
  policy.home_read_allowed.push_back("/home/u/ws/tools/pi-sandbox");
  policy.home_read_allowed.push_back("/home/u/ws/.git");
  auto host = base_host();
  host["/home/u/ws/tools"] = kDir;
  host["/home/u/ws/tools/pi-sandbox"] = kFile;
  host["/home/u/ws/.git"] = kDir;
  host["/home/u/ws/.git/hooks"] = kDir;
  const std::vector<ProtectedPath> protect = {
      {"/home/u/ws/tools/pi-sandbox", ProtectReason::SandboxBinary, F, false},
      {"/home/u/ws/.git/hooks", ProtectReason::GitHooks, D, true},
  };
  const MountPlan plan = plan_mounts(policy, protect, fake_host(host));
  ASSERT_GE(plan.ops.size(), 2u);
  EXPECT_EQ(plan.ops[plan.ops.size() - 2],
            (MountOp{K::Bind, "/home/u/ws/tools/pi-sandbox", "/home/u/ws/tools/pi-sandbox", true, F,
                     "", "sandbox-binary", IfSourceMissing::Placeholder}));
  EXPECT_EQ(plan.ops.back(), (MountOp{K::Bind, "/home/u/ws/.git/hooks", "/home/u/ws/.git/hooks",
                                      true, D, "", "git-hooks", IfSourceMissing::Placeholder}));
}

TEST(MountPlan, AHomeInTheWorkspaceIsReadOnlyButForItsOrdinaryEntries) {
  policy::SandboxPolicy p;
  p.workspace = p.home = "/home/u";
  p.writable = {"/home/u"};
  p.home_read_only = true;
  p.home_writable_entries = {"/home/u/projects", "/home/u/link"};
  auto host = base_host();
  host["/home/u/projects"] = kDir;
  host["/home/u/projects/.git"] = kDir;
  host["/home/u/projects/.git/hooks"] = kDir;
  host["/home/u/link"] = symlink_to("/elsewhere");
  host["/home/u/.local"] = kDir;
  host["/home/u/.local/bin"] = kDir;
  const std::vector<ProtectedPath> protect = {
      {"/home/u/.local/bin", ProtectReason::StartupFile, D, true},
      {"/home/u/.ssh", ProtectReason::StartupFile, D, true},
      {"/home/u/projects/.git/hooks", ProtectReason::GitHooks, D, true},
  };
  const MountPlan plan = plan_mounts(p, protect, fake_host(host));
  const std::vector<MountOp> tail(plan.ops.end() - 5, plan.ops.end());
  expect_ops(
      tail,
      {
          {K::Bind, "/home/u", "/home/u", false, D, "", "workspace (read-write)"},
          {K::Bind, "/home/u", "/home/u", true, D, "",
           "the home's top level and dot-entries, read-only (the workspace contains the home)"},
          {K::Bind, "/home/u/projects", "/home/u/projects", false, D, "",
           "an ordinary entry of the home (read-write)", IfSourceMissing::Skip},
          {K::Bind, "/home/u/projects/.git", "/home/u/projects/.git", false, D, "",
           "pinned parent of a protected path", IfSourceMissing::Scaffold},
          {K::Bind, "/home/u/projects/.git/hooks", "/home/u/projects/.git/hooks", true, D, "",
           "git-hooks", IfSourceMissing::Placeholder},
      });
}

/// A home with some credentials of policy::credential_names(): a key, its public half, the
/// AWS file, gpg's private keys, a kubeconfig that is a symlink elsewhere in the home.
std::map<fs::path, PathFacts> credential_host() {
  auto host = base_host();
  for (const char* dir : {"/home/u/.ssh", "/home/u/.aws", "/home/u/.gnupg",
                          "/home/u/.gnupg/private-keys-v1.d", "/home/u/.kube", "/home/u/kubes"})
    host[dir] = kDir;
  for (const char* file : {"/home/u/.ssh/id_ed25519", "/home/u/.ssh/id_ed25519.pub",
                           "/home/u/.aws/credentials", "/home/u/kubes/admin.conf"})
    host[file] = kFile;
  host["/home/u/.kube/config"] = symlink_to("../kubes/admin.conf");
  // No tool configuration: its copies come last too (ToolConfigurationIsCopied*).
  host.erase("/home/u/.gitconfig");
  return host;
}

/// The Conceal ops of `plan`, as describe() lines, and whether they are the last ops.
std::vector<std::string> trailing_conceals(const MountPlan& plan) {
  std::vector<std::string> out;
  auto it = plan.ops.rbegin();
  for (; it != plan.ops.rend() && it->kind == K::Conceal; ++it)
    out.insert(out.begin(), describe(*it));
  for (; it != plan.ops.rend(); ++it)
    if (it->kind == K::Conceal) ADD_FAILURE() << "a conceal before another op: " << describe(*it);
  return out;
}

const std::vector<std::string> kCredentialMasks = {
    "conceal-file      /home/u/.ssh/id_ed25519  # credential: hidden (an empty read-only file)",
    "conceal-dir       /home/u/.gnupg/private-keys-v1.d  # credential: hidden (an empty "
    "read-only directory)",
    "conceal-file      /home/u/.aws/credentials  # credential: hidden (an empty read-only file)",
    "conceal-file      /home/u/kubes/admin.conf  # credential: hidden (an empty read-only file)"};

// docs/security.md, "Credentials": the masks come last, over the workspace's bind, the
// read-only home and the protections of `~/.ssh`, whatever else is bound.
TEST(MountPlan, CredentialsAreMaskedLastWhenTheWorkspaceIsTheHome) {
  policy::PolicyInputs in{"/home/u", "/home/u", "", {}, {}};
  in.home_entries = {"ws", "kubes", ".ssh", ".aws", ".gnupg", ".kube"};
  const policy::SandboxPolicy p = policy::default_policy(in);
  const MountPlan plan = plan_mounts(p, p.protected_paths, fake_host(credential_host()));
  EXPECT_EQ(trailing_conceals(plan), kCredentialMasks);
}

TEST(MountPlan, CredentialsAreMaskedLastWhenAnAllowReadEntryIsTheHome) {
  const policy::SandboxPolicy p =
      policy::default_policy({"/home/u/ws", "/home/u", "", {"/home/u"}, {}});
  const MountPlan plan = plan_mounts(p, p.protected_paths, fake_host(credential_host()));
  EXPECT_EQ(trailing_conceals(plan), kCredentialMasks);
}

// A parent of the home is readable already outside the home; the home itself stays the empty
// layer, so there is nothing to mask.
TEST(MountPlan, AnAllowReadParentOfTheHomeLeavesTheHomeHidden) {
  const policy::SandboxPolicy p =
      policy::default_policy({"/home/u/ws", "/home/u", "", {"/home"}, {}});
  EXPECT_TRUE(p.hide_home);
  const MountPlan plan = plan_mounts(p, p.protected_paths, fake_host(credential_host()));
  EXPECT_EQ(trailing_conceals(plan), std::vector<std::string>{});
  EXPECT_TRUE(std::ranges::any_of(
      plan.ops, [](const MountOp& op) { return op.kind == K::Tmpfs && op.target == "/home/u"; }));
}

/// The ConfigCopy ops of `plan`: describe() and the source, and whether they are the last ops.
std::vector<std::string> trailing_config_copies(const MountPlan& plan) {
  std::vector<std::string> out;
  auto it = plan.ops.rbegin();
  for (; it != plan.ops.rend() && it->kind == K::ConfigCopy; ++it)
    out.insert(out.begin(), describe(*it) + " <- " + it->source.string());
  for (; it != plan.ops.rend(); ++it)
    if (it->kind == K::ConfigCopy) ADD_FAILURE() << "a copy before another op: " << describe(*it);
  return out;
}

/// A home with tool configuration: ~/.npmrc, pip's file a symlink into a dotfiles directory,
/// Docker's a directory (not a file: nothing to copy).
std::map<fs::path, PathFacts> tool_config_host() {
  auto host = base_host();
  for (const char* dir : {"/home/u/.config", "/home/u/.config/pip", "/home/u/dotfiles",
                          "/home/u/.docker", "/home/u/.docker/config.json"})
    host[dir] = kDir;
  for (const char* file : {"/home/u/.npmrc", "/home/u/dotfiles/pip.conf"}) host[file] = kFile;
  host["/home/u/.config/pip/pip.conf"] = symlink_to("../../dotfiles/pip.conf");
  return host;
}

// docs/security.md, "Tool configuration without its credentials": in the hidden home the copy
// stands at the path itself, read from where a symlink leads.
TEST(MountPlan, ToolConfigurationIsCopiedIntoTheHiddenHome) {
  const policy::SandboxPolicy p = policy::default_policy({"/home/u/ws", "/home/u", "", {}, {}});
  const MountPlan plan = plan_mounts(p, p.protected_paths, fake_host(tool_config_host()));
  EXPECT_EQ(trailing_config_copies(plan),
            (std::vector<std::string>{
                "config-copy       /home/u/.npmrc  # tool configuration: a read-only copy without "
                "its credentials (npmrc) <- /home/u/.npmrc",
                "config-copy       /home/u/.config/pip/pip.conf  # tool configuration: a "
                "read-only copy without its credentials (pip-conf) <- /home/u/dotfiles/pip.conf",
                "config-copy       /home/u/.gitconfig  # tool configuration: a read-only copy "
                "without its credentials (git-config) <- /home/u/.gitconfig"}));
  EXPECT_EQ(plan.ops.back().config, policy::ConfigFormat::GitConfig);
  EXPECT_TRUE(plan.ops.back().read_only);
}

// A re-exposed file is bound from where it leads, at its own path: `~/.gitconfig ->
// dotfiles/gitconfig` (a dotfiles repository) shows the host file at `~/.gitconfig`, so the
// copy goes there too, not to `~/dotfiles/gitconfig`, which the command never reads.
TEST(MountPlan, ACopyOfAReExposedSymlinkStandsWhereTheCommandReadsIt) {
  auto host = base_host();
  host["/home/u/dotfiles"] = kDir;
  host["/home/u/dotfiles/gitconfig"] = kFile;
  host["/home/u/.gitconfig"] = symlink_to("dotfiles/gitconfig");
  const policy::SandboxPolicy p = policy::default_policy({"/home/u/ws", "/home/u", "", {}, {}});
  const MountPlan plan = plan_mounts(p, p.protected_paths, fake_host(host));
  EXPECT_EQ(trailing_config_copies(plan),
            (std::vector<std::string>{
                "config-copy       /home/u/.gitconfig  # tool configuration: a read-only copy "
                "without its credentials (git-config) <- /home/u/dotfiles/gitconfig"}));
}

// Where the home is readable (the workspace), the copy goes over the file a symlink leads to,
// after every other bind (the read-only home, the protections of ~/.config/pip).
TEST(MountPlan, ToolConfigurationIsCopiedOverTheReadableHome) {
  policy::PolicyInputs in{"/home/u", "/home/u", "", {}, {}};
  in.home_entries = {"ws", "dotfiles", ".config", ".npmrc", ".docker"};
  const policy::SandboxPolicy p = policy::default_policy(in);
  const MountPlan plan = plan_mounts(p, p.protected_paths, fake_host(tool_config_host()));
  EXPECT_EQ(trailing_config_copies(plan),
            (std::vector<std::string>{
                "config-copy       /home/u/.npmrc  # tool configuration: a read-only copy without "
                "its credentials (npmrc) <- /home/u/.npmrc",
                "config-copy       /home/u/dotfiles/pip.conf  # tool configuration: a "
                "read-only copy without its credentials (pip-conf) <- /home/u/dotfiles/pip.conf",
                "config-copy       /home/u/.gitconfig  # tool configuration: a read-only copy "
                "without its credentials (git-config) <- /home/u/.gitconfig"}));
}

TEST(MountPlan, DeviceNodesAreReadOnlyBinds) {
  const MountPlan plan = plan_mounts(policy_for_ws(), {}, fake_host(base_host()));
  int devices = 0;
  for (const auto& op : plan.ops)
    if (op.kind == K::Bind && op.target.parent_path() == "/dev") {
      ++devices;
      EXPECT_TRUE(op.read_only) << op.target;
    }
  EXPECT_EQ(devices, 6);
}

TEST(LandlockPlan, WritesOnlyWherePolicyAllows) {
  const LandlockPlan plan = plan_landlock(policy_for_ws());
  const LandlockPlan expected{{{"/", LandlockAccess::ReadExecute},
                               {"/home/u/ws", LandlockAccess::ReadWrite},
                               {"/tmp", LandlockAccess::ReadWrite},
                               {"/var/tmp", LandlockAccess::ReadWrite},
                               {"/home/u", LandlockAccess::ReadWrite},
                               {"/dev", LandlockAccess::ReadWrite}},
                              true};
  EXPECT_EQ(plan, expected);
}

TEST(SeccompTable, RefusesUnixSocketsNamespacesMountsAndDatagramPairs) {
  std::vector<std::string> names;
  for (const auto& rule : seccomp_rules()) names.push_back(rule.syscall);
  for (auto name :
       {"socket",        "clone",           "unshare",    "clone3",     "mount",   "umount2",
        "pivot_root",    "setns",           "open_tree",  "move_mount", "fsopen",  "fsmount",
        "mount_setattr", "io_uring_setup",  "ioctl",      "keyctl",     "add_key", "request_key",
        "bpf",           "perf_event_open", "userfaultfd"})
    EXPECT_NE(std::ranges::find(names, name), names.end()) << name;
  const auto pair = std::ranges::find(seccomp_rules(), "socketpair", &SeccompRule::syscall);
  ASSERT_NE(pair, seccomp_rules().end());
  EXPECT_EQ(pair->conditions,
            (std::vector<ArgCondition>{{0, 0xffffffffULL, AF_UNIX}, {1, 0xf, SOCK_DGRAM}}));
  const auto clone3 = std::ranges::find(seccomp_rules(), "clone3", &SeccompRule::syscall);
  EXPECT_EQ(clone3->error, ENOSYS);
}

}  // namespace
}  // namespace pisandbox::sandbox::linux_
