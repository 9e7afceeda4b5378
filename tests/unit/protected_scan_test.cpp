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

// A credential's other names (docs/security.md, "Hard links and binds of a credential"): a hard
// link in the workspace, in an additionalAllowWrite root or in an additionalAllowRead directory
// is found by the scan, with its credential; a link nothing reads is counted as unlocated.
class CredentialLinkTest : public ScanTest {
 protected:
  void SetUp() override {
    ScanTest::SetUp();
    home_ = root_ / "home";
    file("home/.ssh/id_rsa");
    file("home/.ssh/id_rsa.pub");
    file("home/.ssh/known_hosts");
    file("home/.ssh/work_key");
    file("home/.gnupg/private-keys-v1.d/AB.key");
    file("home/.netrc");
    dir("home/ws");
  }
  void hard_link(const std::string& target, const std::string& rel) {
    fs::create_directories((root_ / rel).parent_path());
    fs::create_hard_link(root_ / target, root_ / rel);
  }
  std::vector<std::string> links(const PolicyInputs& in, ScanResult* out = nullptr) {
    const SandboxPolicy policy = default_policy(in);
    ScanResult r = scan_writable_roots(policy, scan_options(policy));
    std::vector<std::string> found;
    for (const auto& l : r.credential_links)
      found.push_back(l.path.lexically_relative(root_).string() + " -> " +
                      l.credential.lexically_relative(root_).string());
    std::ranges::sort(found);
    if (out != nullptr) *out = std::move(r);
    return found;
  }
  PolicyInputs inputs(const std::string& ws = "home/ws") {
    return PolicyInputs{root_ / ws, home_, "", {}, {}};
  }

  fs::path home_;
};

TEST_F(CredentialLinkTest, CredentialInodesAreTheTableAndThePrivateFilesOfSsh) {
  std::vector<std::string> names;
  for (const auto& c : credential_inodes(home_))
    names.push_back(c.path.lexically_relative(home_).string() + (c.directory ? "/" : ""));
  std::ranges::sort(names);
  EXPECT_EQ(names, (std::vector<std::string>{".gnupg/private-keys-v1.d/",
                                             ".gnupg/private-keys-v1.d/AB.key", ".netrc",
                                             ".ssh/id_rsa", ".ssh/work_key"}));
  EXPECT_TRUE(credential_inodes("/").empty());
}

TEST_F(CredentialLinkTest, NoLinkNoExtraWork) {
  file("home/ws/a/b");
  ScanResult r;
  EXPECT_TRUE(links(inputs(), &r).empty());
  EXPECT_TRUE(r.unlocated_links.empty());
}

TEST_F(CredentialLinkTest, AHardLinkInTheWorkspaceIsFound) {
  hard_link("home/.ssh/id_rsa", "home/ws/deploy/key");
  hard_link("home/.ssh/work_key", "home/ws/w");
  hard_link("home/.gnupg/private-keys-v1.d/AB.key", "home/ws/gpg.key");
  hard_link("home/.ssh/id_rsa.pub", "home/ws/id_rsa.pub");  // public: not a credential
  ScanResult r;
  EXPECT_EQ(links(inputs(), &r),
            (std::vector<std::string>{"home/ws/deploy/key -> home/.ssh/id_rsa",
                                      "home/ws/gpg.key -> home/.gnupg/private-keys-v1.d/AB.key",
                                      "home/ws/w -> home/.ssh/work_key"}));
  EXPECT_TRUE(r.unlocated_links.empty());
}

TEST_F(CredentialLinkTest, BeyondTheScanItIsUnlocated) {
  hard_link("home/.netrc", "home/ws/a/b/c/d/e/netrc");  // deeper than the scan's 4 levels
  hard_link("home/.netrc", "elsewhere/netrc");
  ScanResult r;
  EXPECT_TRUE(links(inputs(), &r).empty());
  EXPECT_EQ(r.unlocated_links,
            (std::vector<std::pair<fs::path, std::size_t>>{{home_ / ".netrc", 2}}));
}

TEST_F(CredentialLinkTest, ReadAndWriteRootsAreSearched) {
  hard_link("home/.netrc", "home/notes/n");
  hard_link("home/.ssh/id_rsa", "home/cache/k");
  hard_link("home/.ssh/work_key", "home/single");
  PolicyInputs in = inputs();
  in.additional_allow_read = {home_ / "notes", home_ / "single"};
  in.additional_allow_write = {home_ / "cache"};
  EXPECT_EQ(links(in), (std::vector<std::string>{"home/cache/k -> home/.ssh/id_rsa",
                                                 "home/notes/n -> home/.netrc",
                                                 "home/single -> home/.ssh/work_key"}));
}

// The workspace is the home: the credential is masked by name already, its link is found.
TEST_F(CredentialLinkTest, WorkspaceIsTheHome) {
  hard_link("home/.ssh/id_rsa", "home/projects/key");
  EXPECT_EQ(links(inputs("home")),
            (std::vector<std::string>{"home/projects/key -> home/.ssh/id_rsa"}));
}

// A credential handed in on purpose is readable: its links are too.
TEST_F(CredentialLinkTest, AHandedInCredentialIsNotSearched) {
  hard_link("home/.netrc", "home/ws/netrc");
  PolicyInputs in = inputs();
  in.expose_credentials = {".netrc"};
  EXPECT_TRUE(links(in).empty());
}

// A bind mount of a credential: its mount point (proc(5), /proc/[pid]/mountinfo, the fifth
// field, octal escapes undone) lies in a readable place and is the credential's inode.
TEST_F(CredentialLinkTest, BindsFromMountinfo) {
  hard_link("home/.ssh/id_rsa", "home/ws/my key");  // stands for the mount point
  file("home/ws/other");
  const std::string ws = (home_ / "ws").string();
  const std::string text = "36 35 98:0 /home/u/.ssh/id_rsa " + ws +
                           "/my\\040key rw,noatime master:1 - ext4 /dev/sda1 rw\n"
                           "37 35 98:0 /x " +
                           ws +
                           "/other rw - ext4 /dev/sda1 rw\n"
                           "38 35 98:0 /x /elsewhere rw - ext4 /dev/sda1 rw";
  const auto binds = credential_binds(text, {home_ / "ws"}, credential_inodes(home_));
  EXPECT_EQ(binds, (std::vector<CredentialLink>{{home_ / "ws/my key", home_ / ".ssh/id_rsa"}}));
  EXPECT_TRUE(credential_binds(text, {root_ / "nowhere"}, credential_inodes(home_)).empty());
}

}  // namespace
}  // namespace pisandbox::policy
