// Real developer machines: repositories around the workspace, toolchains in the home,
// configured writable caches, a workspace in the private /tmp (docs/security.md,
// "Repositories around the workspace", "Toolchains in the home").
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "policy/sandbox_policy.hpp"
#include "policy/toolchains.hpp"
#include "sandbox/linux/mount_plan.hpp"

namespace pisandbox::policy {
namespace {

using sandbox::linux_::MountOp;
using sandbox::linux_::MountOpKind;
using sandbox::linux_::PathFacts;
using sandbox::linux_::PathKind;

constexpr auto F = NodeKind::File;
constexpr auto D = NodeKind::Directory;
constexpr auto kCow = Access::CopyOnWrite;
constexpr auto kRw = Access::ReadWrite;

PolicyInputs inputs(const fs::path& ws) {
  PolicyInputs in{ws, "/home/u", "/usr/bin/pi-sandbox", {}, {}};
  return in;
}

bool protects(const SandboxPolicy& p, const ProtectedPath& expected) {
  return std::ranges::find(p.protected_paths, expected) != p.protected_paths.end();
}

const Exposure* exposure(const std::vector<Exposure>& list, const fs::path& path) {
  auto it = std::ranges::find(list, path, &Exposure::path);
  return it == list.end() ? nullptr : &*it;
}

// Row 1: the workspace is a subdirectory of a repository in the home.
TEST(GitLayoutPolicy, ASubdirectoryOfARepositorySeesItsRepositoryAndWritesItsGitDirectory) {
  PolicyInputs in = inputs("/home/u/repo/packages/app");
  in.git = GitLayout{"/home/u/repo", "/home/u/repo/.git", "/home/u/repo/.git"};
  in.git->module_dirs = {"/home/u/repo/.git/modules/lib"};
  in.git->worktree_dirs = {"/home/u/repo/.git/worktrees/wt"};
  const SandboxPolicy p = default_policy(in);
  const Exposure* tree = exposure(p.home_read_allowed, "/home/u/repo");
  ASSERT_NE(tree, nullptr);
  EXPECT_EQ(tree->access, Access::ReadOnly);
  EXPECT_EQ(tree->why, "the repository that contains the workspace (read-only outside it)");
  const Exposure* git = exposure(p.writable, "/home/u/repo/.git");
  ASSERT_NE(git, nullptr);
  EXPECT_EQ(git->access, kRw);
  constexpr auto kGit = ProtectReason::GitControl;
  EXPECT_TRUE(protects(p, {"/home/u/repo/.git/hooks", kGit, D, true}));
  EXPECT_TRUE(protects(p, {"/home/u/repo/.git/config", kGit, F, false}));
  EXPECT_TRUE(protects(p, {"/home/u/repo/.git/info", kGit, D, true}));
  EXPECT_TRUE(protects(p, {"/home/u/repo/.git/config.worktree", kGit, F, true}));
  EXPECT_TRUE(protects(p, {"/home/u/repo/.git/modules/lib/hooks", kGit, D, true}));
  EXPECT_TRUE(protects(p, {"/home/u/repo/.git/modules/lib/config", kGit, F, false}));
  EXPECT_TRUE(protects(p, {"/home/u/repo/.git/worktrees/wt/commondir", kGit, F, false}));
  EXPECT_EQ(p.writable.front().path, "/home/u/repo/packages/app");
}

// Row 2: a linked worktree writes the main repository's git directory as a main worktree
// does (branches, stashes, packed-refs.lock), with that repository's control protected.
TEST(GitLayoutPolicy, ALinkedWorktreeWritesTheCommonDirectoryButNotItsControl) {
  PolicyInputs in = inputs("/home/u/wt");
  in.git = GitLayout{"/home/u/wt", "/home/u/repo/.git/worktrees/wt", "/home/u/repo/.git",
                     "/home/u/wt/.git"};
  in.git->worktree_dirs = {"/home/u/repo/.git/worktrees/other", "/home/u/repo/.git/worktrees/wt"};
  const SandboxPolicy p = default_policy(in);
  EXPECT_EQ(p.home_read_allowed.size(), 2u);  // git's user configuration only
  std::vector<fs::path> writable;
  for (const auto& e : p.writable) writable.push_back(e.path);
  EXPECT_EQ(writable, (std::vector<fs::path>{"/home/u/wt", "/home/u/repo/.git"}));
  EXPECT_EQ(p.writable.back().why,
            "the git directory of the main repository of this linked worktree");
  constexpr auto kGit = ProtectReason::GitControl;
  for (const ProtectedPath& expected :
       std::vector<ProtectedPath>{{"/home/u/wt/.git", kGit, F, false},
                                  {"/home/u/repo/.git/worktrees/wt/commondir", kGit, F, false},
                                  {"/home/u/repo/.git/worktrees/wt/config.worktree", kGit, F, true},
                                  {"/home/u/repo/.git/hooks", kGit, D, true},
                                  {"/home/u/repo/.git/config", kGit, F, false},
                                  {"/home/u/repo/.git/info", kGit, D, true},
                                  {"/home/u/repo/.git/worktrees/other/commondir", kGit, F, false}})
    EXPECT_TRUE(protects(p, expected)) << expected.path;
}

// With extensions.worktreeConfig on, git refuses to run while a placeholder stands at a
// missing config.worktree: it is held only when it exists.
TEST(GitLayoutPolicy, AMissingConfigWorktreeIsHeldOnlyWhileTheExtensionIsOff) {
  PolicyInputs in = inputs("/home/u/repo/app");
  in.git = GitLayout{"/home/u/repo", "/home/u/repo/.git", "/home/u/repo/.git"};
  in.git->worktree_config = true;
  EXPECT_TRUE(protects(default_policy(in),
                       {"/home/u/repo/.git/config.worktree", ProtectReason::GitControl, F, false}));
}

TEST(GitLayoutPolicy, ARepositoryThatHoldsTheHomeIsNotExposed) {
  PolicyInputs in = inputs("/home/u/src/app");
  in.git = GitLayout{"/home/u", "/home/u/.git", "/home/u/.git"};
  const SandboxPolicy p = default_policy(in);
  EXPECT_EQ(exposure(p.home_read_allowed, "/home/u"), nullptr);
  EXPECT_EQ(p.writable.size(), 1u);
  EXPECT_EQ(p.notes, std::vector<std::string>{
                         "the repository at /home/u contains the home: it is not exposed (the "
                         "home stays hidden)"});
}

// The workspace's own repository: nothing is exposed or made writable (its .git is in the
// workspace), and what would point host git at something the command wrote is protected: a
// planted `.git/commondir`, its submodules' hooks and `commondir`, its linked worktrees'
// `commondir` and `config.worktree` (a submodule's config is checked by content by the guard,
// as .git/config is: sandbox/linux plan_guard()).
TEST(GitLayoutPolicy, TheWorkspacesOwnGitDirectoryProtectsItsControlFiles) {
  PolicyInputs in = inputs("/home/u/repo");
  in.git = GitLayout{"/home/u/repo", "/home/u/repo/.git", "/home/u/repo/.git"};
  in.git->module_dirs = {"/home/u/repo/.git/modules/libs/sub"};
  in.git->worktree_dirs = {"/home/u/repo/.git/worktrees/wt"};
  PolicyInputs without = inputs("/home/u/repo");
  SandboxPolicy with_git = default_policy(in);
  EXPECT_EQ(with_git.git, in.git);  // kept for the guard's reading of the index
  SandboxPolicy expected = default_policy(without);
  const auto control = [](const char* path, NodeKind kind, bool missing) {
    return ProtectedPath{path, ProtectReason::GitControl, kind, missing};
  };
  std::vector<ProtectedPath> added;
  for (const auto& p : with_git.protected_paths)
    if (std::ranges::find(expected.protected_paths, p) == expected.protected_paths.end())
      added.push_back(p);
  EXPECT_EQ(added,
            (std::vector<ProtectedPath>{
                control("/home/u/repo/.git/commondir", NodeKind::File, true),
                control("/home/u/repo/.git/modules/libs/sub/hooks", NodeKind::Directory, true),
                control("/home/u/repo/.git/modules/libs/sub/commondir", NodeKind::File, true),
                control("/home/u/repo/.git/worktrees/wt/commondir", NodeKind::File, false),
                control("/home/u/repo/.git/worktrees/wt/config.worktree", NodeKind::File, true),
            }));
  with_git.git.reset();
  with_git.protected_paths = expected.protected_paths;
  EXPECT_EQ(with_git, expected);
}

// Row 3: toolchains in the home.
TEST(Toolchains, PathEntriesInTheHomeBringTheirToolchainRoots) {
  std::vector<fs::path> hidden;
  const auto exposed = toolchain_exposures(
      "/home/u", "/home/u/ws",
      {"/home/u/.cargo/bin", "/home/u/.pyenv/shims", "/home/u/.pyenv/bin",
       "/home/u/.nvm/versions/node/v20.1.0/bin", "/home/u/.local/bin", "/usr/bin",
       "/home/u/.npm-global/bin", "/home/u/ws/node_modules/.bin", "/home/u", "/home/u/.ssh/bin"},
      {}, hidden);
  std::vector<std::pair<fs::path, std::string>> got;
  for (const auto& e : exposed) {
    EXPECT_EQ(e.access, kCow) << e.path;
    got.emplace_back(e.path, e.why);
  }
  EXPECT_EQ(
      got,
      (std::vector<std::pair<fs::path, std::string>>{
          {"/home/u/.cargo", "$PATH entry /home/u/.cargo/bin: rustup and cargo"},
          {"/home/u/.rustup", "$PATH entry /home/u/.cargo/bin: rustup and cargo"},
          {"/home/u/.pyenv", "$PATH entry /home/u/.pyenv/shims: pyenv"},
          {"/home/u/.nvm", "$PATH entry /home/u/.nvm/versions/node/v20.1.0/bin: nvm"},
          {"/home/u/.local/bin", "$PATH entry /home/u/.local/bin: ~/.local (pip --user, pipx)"},
          {"/home/u/.local/lib", "$PATH entry /home/u/.local/bin: ~/.local (pip --user, pipx)"},
          {"/home/u/.local/share/pipx",
           "$PATH entry /home/u/.local/bin: ~/.local (pip --user, pipx)"},
          {"/home/u/.npm-global/bin", "$PATH entry /home/u/.npm-global/bin: a $PATH entry"},
      }));
  EXPECT_EQ(hidden, (std::vector<fs::path>{"/home/u", "/home/u/.ssh/bin"}));
}

TEST(Toolchains, MovedRootsFollowTheirVariables) {
  std::vector<fs::path> hidden;
  const auto exposed = toolchain_exposures(
      "/home/u", "/w", {"/home/u/tools/cargo/bin", "/home/u/go-work/bin"},
      {{"CARGO_HOME", "/home/u/tools/cargo"}, {"GOPATH", "/home/u/go-work"}}, hidden);
  std::vector<fs::path> paths;
  for (const auto& e : exposed) paths.push_back(e.path);
  EXPECT_EQ(paths,
            (std::vector<fs::path>{"/home/u/tools/cargo", "/home/u/.rustup", "/home/u/go-work"}));
  EXPECT_EQ(exposed.front().why,
            "$PATH entry /home/u/tools/cargo/bin: rustup and cargo ($CARGO_HOME)");
  EXPECT_TRUE(hidden.empty());
}

TEST(Toolchains, AnActivatedVirtualEnvironmentBringsItsRootAndTheInterpreterItWasMadeFrom) {
  std::vector<fs::path> hidden;
  const auto exposed = toolchain_exposures(
      "/home/u", "/home/u/ws", {"/home/u/venvs/app/bin", "/usr/bin"},
      {{"VIRTUAL_ENV", "/home/u/venvs/app"}, {"PYVENV_HOME", "/home/u/.pyenv/versions/3.11.7"}},
      hidden);
  std::vector<std::pair<fs::path, std::string>> got;
  for (const auto& e : exposed) got.emplace_back(e.path, e.why);
  const std::string why =
      "$PATH entry /home/u/venvs/app/bin: a Python virtual environment ($VIRTUAL_ENV)";
  EXPECT_EQ(got, (std::vector<std::pair<fs::path, std::string>>{
                     {"/home/u/venvs/app", why}, {"/home/u/.pyenv/versions/3.11.7", why}}));
  // An interpreter outside the home is visible anyway; one holding a credential store never
  // comes in.
  const auto system = toolchain_exposures(
      "/home/u", "/home/u/ws", {"/home/u/venvs/app/bin"},
      {{"VIRTUAL_ENV", "/home/u/venvs/app"}, {"PYVENV_HOME", "/home/u/.ssh"}}, hidden);
  ASSERT_EQ(system.size(), 1U);
  EXPECT_EQ(system.front().path, "/home/u/venvs/app");
  EXPECT_TRUE(hidden.empty());
}

TEST(Toolchains, ThePolicyReExposesThemCopyOnWriteAndHidesCargoCredentials) {
  PolicyInputs in = inputs("/home/u/ws");
  in.path_dirs = {"/home/u/.cargo/bin", "/usr/bin", "/home/u"};
  const SandboxPolicy p = default_policy(in);
  ASSERT_NE(exposure(p.home_read_allowed, "/home/u/.cargo"), nullptr);
  EXPECT_EQ(exposure(p.home_read_allowed, "/home/u/.cargo")->access, kCow);
  EXPECT_EQ(p.concealed, (std::vector<fs::path>{"/home/u/.cargo/credentials.toml",
                                                "/home/u/.cargo/credentials"}));
  EXPECT_EQ(p.hidden_path_dirs, std::vector<fs::path>{"/home/u"});
}

TEST(Toolchains, TheSwitchTurnsTheAutomaticPartOff) {
  PolicyInputs in = inputs("/home/u/ws");
  in.path_dirs = {"/home/u/.cargo/bin", "/usr/bin", "/home/u/.cargo/bin"};
  in.expose_home_toolchains = false;
  const SandboxPolicy p = default_policy(in);
  EXPECT_EQ(exposure(p.home_read_allowed, "/home/u/.cargo"), nullptr);
  EXPECT_TRUE(p.concealed.empty());
  EXPECT_EQ(p.hidden_path_dirs, std::vector<fs::path>{"/home/u/.cargo/bin"});
}

TEST(Toolchains, ConfiguredReadPathsAreCopyOnWriteToo) {
  PolicyInputs in = inputs("/home/u/ws");
  in.additional_allow_read = {"/home/u/.cargo"};
  in.expose_home_toolchains = false;
  const SandboxPolicy p = default_policy(in);
  ASSERT_NE(exposure(p.home_read_allowed, "/home/u/.cargo"), nullptr);
  EXPECT_EQ(exposure(p.home_read_allowed, "/home/u/.cargo")->access, kCow);
  EXPECT_EQ(p.concealed.size(), 2u);
}

// Row 5: configured writable caches.
TEST(AdditionalWrite, CachesPersistAndDangerousPlacesAreRefused) {
  PolicyInputs in = inputs("/home/u/ws");
  in.path_dirs = {"/home/u/.local/bin", "/usr/bin"};
  in.additional_allow_write = {"/home/u/.cache/go-build",
                               "/home/u/.cargo/registry",
                               "/home/u/ws/cache",
                               "/",
                               "/home",
                               "/home/u",
                               "/tmp",
                               "/etc/x",
                               "/home/u/.ssh",
                               "/home/u/.config",
                               "/home/u/.local",
                               "/home/u/.pi/agent",
                               "/usr/local"};
  const SandboxPolicy p = default_policy(in);
  EXPECT_EQ(exposure(p.writable, "/home/u/.cache/go-build")->why, kConfiguredWritable);
  EXPECT_EQ(exposure(p.writable, "/home/u/.cargo/registry")->access, kRw);
  EXPECT_EQ(exposure(p.writable, "/home/u/ws/cache"), nullptr);  // writable already
  EXPECT_EQ(
      p.refused,
      (std::vector<std::string>{
          R"(filesystem.additionalAllowWrite: "/" is the root of the host)",
          R"(filesystem.additionalAllowWrite: "/home" is or contains the home /home/u)",
          R"(filesystem.additionalAllowWrite: "/home/u" is or contains the home /home/u)",
          R"(filesystem.additionalAllowWrite: "/tmp" is a private temporary directory in every sandbox already)",
          R"(filesystem.additionalAllowWrite: "/etc/x" is or lies inside /etc, part of the system)",
          R"(filesystem.additionalAllowWrite: "/home/u/.ssh" lies inside the protected path /home/u/.ssh)",
          R"(filesystem.additionalAllowWrite: "/home/u/.config" contains the protected path /home/u/.config/git/config)",
          R"(filesystem.additionalAllowWrite: "/home/u/.local" contains the protected path /home/u/.local/share/systemd)",
          R"(filesystem.additionalAllowWrite: "/home/u/.pi/agent" contains the protected path /home/u/.pi/agent/settings.json)",
          R"(filesystem.additionalAllowWrite: "/usr/local" is or lies inside /usr, part of the system)",
      }));
}

// Row 7.
TEST(PrivateTmp, AWorkspaceUnderTmpIsWarnedAbout) {
  EXPECT_EQ(default_policy(inputs("/tmp/x/ws")).warnings,
            std::vector<std::string>{
                "the workspace lies in /tmp, which is private to each command: what it writes "
                "there outside the workspace is discarded when it ends"});
  EXPECT_TRUE(default_policy(inputs("/home/u/ws")).warnings.empty());
}

// The planner: copy-on-write overlays, concealed credentials, extra read-write binds.
TEST(AdditionalWrite, AToolchainRootIsRefusedACacheInsideItIsNot) {
  PolicyInputs in = inputs("/home/u/ws");
  in.path_dirs = {"/home/u/.cargo/bin"};
  in.additional_allow_write = {"/home/u/.rustup", "/home/u/.cargo/registry", "/home/u/.gradle"};
  const SandboxPolicy p = default_policy(in);
  EXPECT_NE(exposure(p.writable, "/home/u/.cargo/registry"), nullptr);
  EXPECT_EQ(
      p.refused,
      (std::vector<std::string>{
          R"(filesystem.additionalAllowWrite: "/home/u/.rustup" is or contains the toolchain directory /home/u/.rustup ($PATH entry /home/u/.cargo/bin: rustup and cargo))",
          R"(filesystem.additionalAllowWrite: "/home/u/.gradle" contains the protected path /home/u/.gradle/init.d)"}));
}

TEST(RealMachinePlan, OverlaysConcealAndWritableBindsInOrder) {
  PolicyInputs in = inputs("/home/u/ws");
  in.path_dirs = {"/home/u/.cargo/bin"};
  in.additional_allow_write = {"/home/u/.cargo/registry"};
  const SandboxPolicy p = default_policy(in);
  std::map<fs::path, PathFacts> host = {
      {"/home", {PathKind::Directory, {}}},
      {"/home/u", {PathKind::Directory, {}}},
      {"/home/u/ws", {PathKind::Directory, {}}},
      {"/home/u/.cargo", {PathKind::Directory, {}}},
      {"/home/u/.cargo/bin", {PathKind::Directory, {}}},
      {"/home/u/.cargo/registry", {PathKind::Directory, {}}},
      {"/home/u/.cargo/credentials.toml", {PathKind::File, {}}},
      {"/home/u/.rustup", {PathKind::Directory, {}}},
  };
  const auto plan = sandbox::linux_::plan_mounts(p, p.protected_paths, [&](const fs::path& path) {
    auto it = host.find(path);
    return it == host.end() ? PathFacts{} : it->second;
  });
  std::vector<std::string> lines;
  for (const auto& op : plan.ops)
    if ((op.target.string().starts_with("/home/u/.") &&
         !op.target.string().starts_with("/home/u/.pi")) ||
        op.target == "/home/u/ws")
      lines.push_back(sandbox::linux_::describe(op));
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "overlay           /home/u/.cargo  # re-exposed copy-on-write: $PATH entry "
                       "/home/u/.cargo/bin: rustup and cargo",
                       "overlay           /home/u/.rustup  # re-exposed copy-on-write: $PATH entry "
                       "/home/u/.cargo/bin: rustup and cargo",
                       "bind-rw           /home/u/ws  # workspace (read-write)",
                       "bind-rw           /home/u/.cargo/registry  # read-write: "
                       "filesystem.additionalAllowWrite (persists)",
                       "conceal-file      /home/u/.cargo/credentials.toml  # credential: hidden "
                       "(an empty read-only file)",
                   }));
}

}  // namespace
}  // namespace pisandbox::policy
