// Protected-path discovery on a real directory tree (docs/cases.md, C-01, C-04; compatibility C22,
// C26–C27).
#include "policy/protected_scan.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace pisandbox::policy {
namespace {

class ScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pi-sandbox-scan-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }

  void file(const std::string& rel) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << "x";
  }
  void dir(const std::string& rel) { fs::create_directories(root_ / rel); }
  void link(const std::string& target, const std::string& rel) {
    fs::create_directories((root_ / rel).parent_path());
    fs::create_symlink(target, root_ / rel);
  }
  std::vector<std::string> found(const ScanOptions& options = {}) {
    std::vector<std::string> out;
    for (const auto& p : scan_workspace(root_, options).protected_paths)
      out.push_back(p.path.lexically_relative(root_).string() + ":" +
                    std::string(to_string(p.reason)) + (p.create_if_missing ? ":create" : ""));
    std::ranges::sort(out);
    return out;
  }

  fs::path root_;
};

TEST_F(ScanTest, FindsNestedRepositoriesDangerousFilesAndSecrets) {
  dir(".git/hooks");
  dir("libs/inner/.git");  // a nested repository without hooks
  file("libs/inner/.bashrc");
  file("libs/inner/.vscode/settings.json");
  file("app/.env.production");
  file("app/.env.example");
  file("certs/server.PEM");
  file("config/secrets/token");
  file("docs/readme.md");
  link("../docs/readme.md", "app/.mcp.json");  // a symlink named like a dangerous file
  link("missing-target", "app/.env.local");    // a dangling one
  dir(".claude/commands");
  EXPECT_EQ(found(), (std::vector<std::string>{
                         ".claude/commands:dangerous-file",
                         ".git/hooks:git-hooks:create",
                         "app/.env.local:secret",
                         "app/.env.production:secret",
                         "app/.mcp.json:dangerous-file",
                         "certs/server.PEM:secret",
                         "config/secrets:secret",
                         "libs/inner/.bashrc:dangerous-file",
                         "libs/inner/.git/hooks:git-hooks:create",
                         "libs/inner/.vscode:dangerous-file",
                     }));
}

TEST_F(ScanTest, SkipsHeavyTreesAndRespectsTheDepth) {
  file("node_modules/pkg/.env");
  file("vendor/x/key.pem");
  file("a/b/c/.env");    // depth 4: found
  file("a/b/c/d/.env");  // depth 5: beyond the bound
  EXPECT_EQ(found(), (std::vector<std::string>{"a/b/c/.env:secret"}));
  EXPECT_EQ(found(ScanOptions{2}), (std::vector<std::string>{}));
}

TEST_F(ScanTest, NeverFollowsDirectorySymlinks) {
  dir("real/.git");
  link("real", "alias");
  EXPECT_EQ(found(), (std::vector<std::string>{"real/.git/hooks:git-hooks:create"}));
}

TEST_F(ScanTest, AWorktreeGitFileIsNotARepositoryDirectory) {
  file(".git");
  EXPECT_EQ(found(), (std::vector<std::string>{}));
}

// docs/security.md, "Names that host programs run": every row is found where it exists, a
// directory row as a whole (nothing below it is read), a pattern by its suffix.
TEST_F(ScanTest, FindsTheNamesHostProgramsRunAtAnyDepth) {
  file(".cursor/mcp.json");
  file(".cursor/deep/.env");  // inside a protected directory: covered by it, not listed
  file("pkg/.devcontainer/devcontainer.json");
  file("pkg/.devcontainer.json");
  file("x.code-workspace");
  file("pkg/app.code-workspace");
  file("pkg/app.code-workspace.bak");
  file("opencode.jsonc");
  file(".claude/hooks/pre.sh");
  file(".claude/notes.md");
  file(".pi/settings.json");  // Pi's own: protected at the root by the policy, not scanned
  EXPECT_EQ(found(), (std::vector<std::string>{
                         ".claude/hooks:dangerous-file",
                         ".cursor:dangerous-file",
                         "opencode.jsonc:dangerous-file",
                         "pkg/.devcontainer.json:dangerous-file",
                         "pkg/.devcontainer:dangerous-file",
                         "pkg/app.code-workspace:dangerous-file",
                         "x.code-workspace:dangerous-file",
                     }));
}

// docs/security.md, "Every writable root": each additionalAllowWrite entry is scanned as the
// workspace is.
TEST_F(ScanTest, ScansEveryConfiguredWritableRoot) {
  dir("ws/.git/hooks");
  dir("cache/repo/.git/hooks");
  file("cache/.vscode/tasks.json");
  dir("other/repo/.git/hooks");  // not writable: not scanned
  SandboxPolicy policy;
  policy.workspace = root_ / "ws";
  policy.writable = {{root_ / "ws", "the workspace", Access::ReadWrite},
                     {root_ / "cache", std::string(kConfiguredWritable), Access::ReadWrite,
                      Origin::ConfiguredWrite}};
  std::vector<std::string> out;
  for (const auto& p : scan_writable_roots(policy, {}).protected_paths)
    out.push_back(p.path.lexically_relative(root_).string() + ":" +
                  std::string(to_string(p.reason)));
  EXPECT_EQ(out,
            (std::vector<std::string>{"ws/.git/hooks:git-hooks", "cache/.vscode:dangerous-file",
                                      "cache/repo/.git/hooks:git-hooks"}));
}

TEST_F(ScanTest, CountsItsWork) {
  file("a/x");
  file("b/y");
  const ScanResult r = scan_workspace(root_, {});
  EXPECT_EQ(r.directories_read, 3u);
  EXPECT_EQ(r.entries_seen, 4u);
}

// The directory core.hooksPath names (husky's `.husky`) is where host git runs hooks from:
// protected like `.git/hooks` when it lies in the workspace, read from `.git/config` (the last
// value), else from the user's configuration (docs/security.md, "Hooks where git looks for
// them").
TEST_F(ScanTest, TheHooksPathOfARepositoryIsProtectedWhenItLiesInTheWorkspace) {
  dir(".git/hooks");
  std::ofstream(root_ / ".git/config") << "[core]\n\thooksPath = x\n[core]\n\thooksPath = .husky\n";
  dir("libs/inner/.git");
  std::ofstream(root_ / "libs/inner/.git/config") << "[core]\nhooksPath = /etc/githooks\n";
  dir("libs/user/.git");  // none of its own: the user's relative one, from its working tree
  EXPECT_EQ(found({.home = "/home/u", .user_hooks_path = "hooks"}),
            (std::vector<std::string>{".git/hooks:git-hooks:create", ".husky:git-hooks-path:create",
                                      "libs/inner/.git/hooks:git-hooks:create",
                                      "libs/user/.git/hooks:git-hooks:create",
                                      "libs/user/hooks:git-hooks-path:create"}));
  // Leaving the workspace, or not set anywhere: nothing more.
  std::ofstream(root_ / ".git/config") << "[core]\n\thooksPath = ../elsewhere\n";
  EXPECT_EQ(found(), (std::vector<std::string>{".git/hooks:git-hooks:create",
                                               "libs/inner/.git/hooks:git-hooks:create",
                                               "libs/user/.git/hooks:git-hooks:create"}));
}

}  // namespace
}  // namespace pisandbox::policy
