// The default policy for a given home and workspace (docs/security.md, "Protected paths").
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "policy/sandbox_policy.hpp"

namespace pisandbox::policy {
namespace {

constexpr auto F = NodeKind::File;
constexpr auto D = NodeKind::Directory;
constexpr auto kSecurity = ProtectReason::SecurityControl;
constexpr auto kDanger = ProtectReason::DangerousFile;
constexpr auto kSecret = ProtectReason::Secret;

std::vector<fs::path> paths_of(const std::vector<Exposure>& exposures) {
  std::vector<fs::path> out;
  for (const auto& e : exposures) out.push_back(e.path);
  return out;
}

std::vector<ProtectedPath> expected_protected(const fs::path& ws, const fs::path& home) {
  std::vector<ProtectedPath> out = {
      {ws / ".pi/settings.json", kSecurity, F, true},
      {ws / ".pi/sandbox.json", kSecurity, F, true},
      {ws / ".pi/pi-auto-review.json", kSecurity, F, true},
      {ws / ".pi/mcp.json", kSecurity, F, true},
      {ws / ".pi/SYSTEM.md", kSecurity, F, true},
      {ws / ".pi/APPEND_SYSTEM.md", kSecurity, F, true},
      {ws / ".pi/extensions", kSecurity, D, true},
      {ws / ".pi/skills", kSecurity, D, true},
      {ws / ".pi/prompts", kSecurity, D, true},
      {ws / ".pi/themes", kSecurity, D, true},
      {ws / ".agents/skills", kSecurity, D, true},
  };
  for (auto name : {".gitconfig", ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile",
                    ".ripgreprc", ".mcp.json"})
    out.push_back({ws / name, kDanger, F, true});
  for (auto name : {".vscode", ".idea", ".claude/commands", ".claude/agents"})
    out.push_back({ws / name, kDanger, D, true});
  for (auto name : {".claude/settings.json", ".claude/settings.local.json"})
    out.push_back({ws / name, kDanger, F, true});
  for (auto name : {".claude/hooks", ".claude/skills", ".cursor", ".gemini", ".codex", ".roo",
                    ".clinerules", ".kiro", ".amazonq", ".continue", ".windsurf"})
    out.push_back({ws / name, kDanger, D, true});
  for (auto name : {"opencode.json", "opencode.jsonc"})
    out.push_back({ws / name, kDanger, F, true});
  out.push_back({ws / ".opencode", kDanger, D, true});
  out.push_back({ws / ".zed", kDanger, D, true});
  out.push_back({ws / ".devcontainer", kDanger, D, true});
  out.push_back({ws / ".devcontainer.json", kDanger, F, true});
  for (auto name : {"rust-toolchain", "rust-toolchain.toml", ".cargo/config.toml", ".cargo/config",
                    ".yarnrc.yml", ".yarnrc"})
    out.push_back({ws / name, kDanger, F, true});
  for (auto name : {".env", ".env.local", ".env.development", ".env.development.local", ".env.test",
                    ".env.test.local", ".env.production", ".env.production.local", ".env.staging",
                    ".env.staging.local", ".env.ci"})
    out.push_back({ws / name, kSecret, F, true});
  out.push_back({ws / "secrets", kSecret, D, true});
  out.push_back({ws / ".secrets", kSecret, D, true});
  for (auto name : {".gitconfig", ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile",
                    ".ripgreprc", ".mcp.json"})
    out.push_back({home / name, kDanger, F, false});
  out.push_back({home / ".config/git/config", kDanger, F, false});
  out.push_back({home / ".ssh", kDanger, D, false});
  const fs::path agent = home / ".pi/agent";
  for (auto name : {"settings.json", "permissions.json", "pi-sandbox.json", "sandbox.json"})
    out.push_back({agent / name, kSecurity, F, true});
  out.push_back({agent / "logs", kSecurity, D, true});
  out.push_back({agent / "extensions", kSecurity, D, true});
  return out;
}

TEST(DefaultPolicy, HidesTheHomeAndReExposesGitConfig) {
  PolicyInputs in{"/home/u/ws", "/home/u", "/usr/local/bin/pi-sandbox", {}, {}};
  const SandboxPolicy p = default_policy(in);
  SandboxPolicy expected;
  expected.workspace = "/home/u/ws";
  expected.home = "/home/u";
  expected.hide_home = true;
  expected.home_read_allowed = {{"/home/u/.gitconfig", "git's user configuration"},
                                {"/home/u/.config/git/config", "git's user configuration"}};
  expected.writable = {{"/home/u/ws", "the workspace", Access::ReadWrite}};
  expected.private_tmp = true;
  expected.protected_paths = expected_protected("/home/u/ws", "/home/u");
  expected.protected_paths.push_back(
      {"/usr/local/bin/pi-sandbox", ProtectReason::SandboxBinary, F, false});
  expected.protected_patterns = {{"/home/u/ws", "*.code-workspace", kDanger}};
  expected.sanitized = {{"/home/u/.npmrc", ConfigFormat::Npmrc},
                        {"/home/u/.yarnrc.yml", ConfigFormat::YarnrcYml},
                        {"/home/u/.config/pip/pip.conf", ConfigFormat::PipConf},
                        {"/home/u/.pip/pip.conf", ConfigFormat::PipConf},
                        {"/home/u/.cargo/config.toml", ConfigFormat::CargoToml},
                        {"/home/u/.cargo/config", ConfigFormat::CargoToml},
                        {"/home/u/.m2/settings.xml", ConfigFormat::MavenSettings},
                        {"/home/u/.docker/config.json", ConfigFormat::DockerConfig},
                        {"/home/u/.gitconfig", ConfigFormat::GitConfig},
                        {"/home/u/.config/git/config", ConfigFormat::GitConfig}};
  EXPECT_EQ(p, expected);
}

// Without a home ("/") there is no tool configuration to copy.
TEST(DefaultPolicy, NoSanitizedCopiesWithoutAHome) {
  EXPECT_EQ(default_policy({"/srv/ws", "/", "", {}, {}}).sanitized, std::vector<SanitizedCopy>{});
}

TEST(DefaultPolicy, ConfigLocationsAreProtectedAndDeduplicated) {
  PolicyInputs in{
      "/w",
      "/home/u",
      "",
      {},
      {"/home/u/.pi/agent/extensions/pi-sandbox/config.json", "/home/u/.pi/agent/pi-sandbox.json"}};
  const SandboxPolicy p = default_policy(in);
  auto expected = expected_protected("/w", "/home/u");
  expected.push_back({"/home/u/.pi/agent/extensions/pi-sandbox/config.json", kSecurity, F, true});
  EXPECT_EQ(p.protected_paths, expected);
}

TEST(DefaultPolicy, HomeSlashIsNotHidden) {
  const SandboxPolicy p = default_policy({"/srv/ws", "/", "", {}, {}});
  EXPECT_FALSE(p.hide_home);
  EXPECT_TRUE(p.home_read_allowed.empty());
}

TEST(DefaultPolicy, WorkspaceThatIsTheHomeKeepsItVisible) {
  EXPECT_FALSE(default_policy({"/home/u", "/home/u", "", {}, {}}).hide_home);
  EXPECT_FALSE(default_policy({"/home", "/home/u", "", {}, {}}).hide_home);
}

TEST(DefaultPolicy, AdditionalReadPathsInsideTheHomeAreReExposedInOrder) {
  PolicyInputs in{
      "/w",
      "/home/u",
      "",
      {"/home/u/.local/bin/rtk", "/opt/tool", "/home/u/.gitconfig", "/home/u/.local/bin/rtk"},
      {}};
  EXPECT_EQ(paths_of(default_policy(in).home_read_allowed),
            (std::vector<fs::path>{"/home/u/.gitconfig", "/home/u/.config/git/config",
                                   "/home/u/.local/bin/rtk"}));
}

TEST(DefaultPolicy, ABinaryInTheHiddenHomeStaysRunnable) {
  const SandboxPolicy p =
      default_policy({"/w", "/home/u", "/home/u/.local/bin/pi-sandbox", {}, {}});
  EXPECT_EQ(paths_of(p.home_read_allowed),
            (std::vector<fs::path>{"/home/u/.gitconfig", "/home/u/.config/git/config",
                                   "/home/u/.local/bin/pi-sandbox"}));
}

TEST(DefaultPolicy, BinaryInsideTheWorkspaceIsProtectedToo) {
  const SandboxPolicy p = default_policy({"/w", "/home/u", "/w/build/pi-sandbox", {}, {}});
  auto expected = expected_protected("/w", "/home/u");
  expected.push_back({"/w/build/pi-sandbox", ProtectReason::SandboxBinary, F, false});
  EXPECT_EQ(p.protected_paths, expected);
}

TEST(DefaultPolicy, ReExposesNothingInsideTheWorkspace) {
  PolicyInputs in{"/home/u/ws",
                  "/home/u",
                  "/home/u/ws/tools/pi-sandbox",
                  {"/home/u/ws/.git", "/home/u/ws", "/home/u/.cargo"},
                  {}};
  const SandboxPolicy p = default_policy(in);
  // Parents before children: by depth.
  EXPECT_EQ(paths_of(p.home_read_allowed),
            (std::vector<fs::path>{"/home/u/.gitconfig", "/home/u/.cargo",
                                   "/home/u/.config/git/config"}));
  EXPECT_NE(
      std::ranges::find(p.protected_paths, ProtectedPath{"/home/u/ws/tools/pi-sandbox",
                                                         ProtectReason::SandboxBinary, F, false}),
      p.protected_paths.end());
}

TEST(DefaultPolicy, AWorkspaceThatIsOrContainsTheHomeProtectsItsStartFiles) {
  for (const fs::path ws : {"/home/u", "/home"}) {
    PolicyInputs in{ws, "/home/u", "", {}, {}, {"/home/u/.npm-global/bin", "/usr/bin", "/home/u"}};
    const SandboxPolicy p = default_policy(in);
    const auto has = [&](const fs::path& path, NodeKind kind) {
      return std::ranges::find(p.protected_paths,
                               ProtectedPath{path, ProtectReason::StartupFile, kind, true}) !=
             p.protected_paths.end();
    };
    for (auto [name, kind] : {std::pair{".ssh", D},
                              {".config/git", D},
                              {".local/bin", D},
                              {".config/autostart", D},
                              {".config/systemd", D},
                              {".bash_logout", F},
                              {".inputrc", F},
                              {".npmrc", F},
                              {".aws", D},
                              {".pi/agent", D},
                              {"bin", D},
                              {".npm-global/bin", D}})
      EXPECT_TRUE(has(fs::path("/home/u") / name, kind)) << ws << " " << name;
    EXPECT_FALSE(has("/usr/bin", D));
    EXPECT_FALSE(has("/home/u", D));
  }
  // Outside such a workspace the home is hidden: its start files are out of reach anyway.
  const SandboxPolicy hidden = default_policy({"/home/u/ws", "/home/u", "", {}, {}});
  EXPECT_TRUE(std::ranges::none_of(hidden.protected_paths, [](const ProtectedPath& p) {
    return p.reason == ProtectReason::StartupFile;
  }));
}

TEST(DefaultPolicy, AWorkspaceThatContainsTheHomeKeepsOnlyItsOrdinaryEntriesWritable) {
  PolicyInputs in{"/home/u", "/home/u", "", {}, {}, {"/home/u/go/bin"}};
  in.home_entries = {"projects", ".local", "bin", "notes.txt", ".git", "go"};
  const SandboxPolicy p = default_policy(in);
  EXPECT_TRUE(p.home_read_only);
  EXPECT_EQ(p.home_writable_entries,
            (std::vector<fs::path>{"/home/u/go", "/home/u/notes.txt", "/home/u/projects"}));
  EXPECT_FALSE(default_policy({"/home/u/ws", "/home/u", "", {}, {}}).home_read_only);
}

TEST(SecretNames, PatternsOfItem88) {
  for (auto name : {".env", ".env.local", ".env.prod", ".ENV.Local", "server.pem", "id.KEY",
                    "cert.p12", "a.pfx"})
    EXPECT_TRUE(is_secret_file_name(name)) << name;
  for (auto name : {".env.example", ".env.sample", ".env.template", ".env.dist", ".envrc", "env",
                    "key", "pem.txt", "notes.keynote", "a.pem.bak"})
    EXPECT_FALSE(is_secret_file_name(name)) << name;
}

// docs/security.md, "Names that host programs run": the table there is this one, row for row.
TEST(HostProgramNames, TheDocumentedTableIsTheSourceTable) {
  const char* source = std::getenv("PI_SANDBOX_SOURCE_DIR");
  std::ifstream file(std::string(source != nullptr ? source : ".") + "/docs/security.md");
  ASSERT_TRUE(file) << "docs/security.md not found (PI_SANDBOX_SOURCE_DIR)";
  std::vector<std::string> documented;
  bool inside = false;
  for (std::string line; std::getline(file, line);) {
    if (line == "<!-- host-program-names:end -->") inside = false;
    if (inside && line.starts_with("| `")) documented.push_back(line);
    if (line == "<!-- host-program-names:begin -->") inside = true;
  }
  std::vector<std::string> expected;
  for (const auto& row : host_program_names())
    expected.push_back("| `" + std::string(row.name) + "` | " +
                       (row.kind == NodeKind::File ? "file" : "directory") + " | " +
                       std::string(row.program) + " | " + std::string(row.source) + " |");
  EXPECT_EQ(documented, expected);
}

TEST(HostProgramNames, OneRowPerNameAndPatternsMatchBySuffix) {
  std::vector<std::string_view> names;
  for (const auto& row : host_program_names()) names.push_back(row.name);
  auto sorted = names;
  std::ranges::sort(sorted);
  EXPECT_EQ(std::ranges::adjacent_find(sorted), sorted.end());
  EXPECT_TRUE(is_name_pattern("*.code-workspace"));
  EXPECT_FALSE(is_name_pattern(".vscode"));
  EXPECT_TRUE(matches_name_pattern("*.code-workspace", "x.code-workspace"));
  EXPECT_TRUE(matches_name_pattern("*.code-workspace", ".code-workspace"));
  EXPECT_FALSE(matches_name_pattern("*.code-workspace", "x.code-workspace.bak"));
  EXPECT_FALSE(matches_name_pattern("*.code-workspace", "x.Code-Workspace"));
  EXPECT_FALSE(matches_name_pattern(".vscode", ".vscode"));
  // The reference's lists are the table's ReferenceDenyList rows, in order (compatibility C25).
  EXPECT_EQ(dangerous_files(),
            (std::vector<std::string_view>{".gitconfig", ".bashrc", ".bash_profile", ".zshrc",
                                           ".zprofile", ".profile", ".ripgreprc", ".mcp.json"}));
  EXPECT_EQ(
      dangerous_directories(),
      (std::vector<std::string_view>{".vscode", ".idea", ".claude/commands", ".claude/agents"}));
}

// docs/security.md, "Every writable root": an additionalAllowWrite entry gets the names at its own
// root as the workspace does, whatever the order of the entries.
TEST(DefaultPolicy, AnAdditionalWritableRootGetsTheNamesAtItsRoot) {
  for (const auto& order : {std::vector<fs::path>{"/srv/src", "/srv/src/sub"},
                            std::vector<fs::path>{"/srv/src/sub", "/srv/src"}}) {
    PolicyInputs in{"/home/u/ws", "/home/u", "", {}, {}};
    in.additional_allow_write = order;
    const SandboxPolicy p = default_policy(in);
    EXPECT_EQ(p.refused, std::vector<std::string>{});
    for (const fs::path root : {"/srv/src", "/srv/src/sub"}) {
      for (auto [name, kind] : {std::pair{".cursor", D}, std::pair{".vscode", D},
                                std::pair{".mcp.json", F}, std::pair{".pi/settings.json", F}}) {
        const ProtectedPath want{
            root / name, std::string_view(name) == ".pi/settings.json" ? kSecurity : kDanger, kind,
            true};
        EXPECT_NE(std::ranges::find(p.protected_paths, want), p.protected_paths.end()) << want.path;
      }
      EXPECT_NE(std::ranges::find(p.protected_patterns,
                                  ProtectedPattern{root, "*.code-workspace", kDanger}),
                p.protected_patterns.end())
          << root;
    }
  }
}

TEST(IsWithin, ComponentWise) {
  EXPECT_TRUE(is_within("/a/b", "/a"));
  EXPECT_TRUE(is_within("/a", "/a"));
  EXPECT_TRUE(is_within("/a/b", "/"));
  EXPECT_FALSE(is_within("/ab", "/a"));
  EXPECT_FALSE(is_within("/a", "/a/b"));
}

TEST(HooksDirectory, AsGitResolvesCoreHooksPath) {
  EXPECT_EQ(hooks_directory(".husky", "/w", "/h"), fs::path("/w/.husky"));
  EXPECT_EQ(hooks_directory("./a/../.husky/_", "/w", "/h"), fs::path("/w/.husky/_"));
  EXPECT_EQ(hooks_directory("~/.githooks", "/w", "/h"), fs::path("/h/.githooks"));
  EXPECT_EQ(hooks_directory("/etc/hooks", "/w", "/h"), fs::path("/etc/hooks"));
  EXPECT_EQ(hooks_directory("~other/hooks", "/w", "/h"), fs::path());
  EXPECT_EQ(hooks_directory("", "/w", "/h"), fs::path());
  EXPECT_EQ(hooks_path_protection("/w/.husky/", {"/w"}),
            (ProtectedPath{"/w/.husky", ProtectReason::GitHooksPath, D, true}));
  EXPECT_EQ(hooks_path_protection("/etc/hooks", {"/w"}), std::nullopt);
  EXPECT_EQ(hooks_path_protection("/w", {"/w"}), std::nullopt);
  // husky 9: .husky/_/pre-commit runs .husky/pre-commit.
  EXPECT_EQ(hooks_path_protection("/w/.husky/_", {"/w"}),
            (ProtectedPath{"/w/.husky", ProtectReason::GitHooksPath, D, true}));
  EXPECT_EQ(hooks_path_protection("/w/hooks/_", {"/w"}),
            (ProtectedPath{"/w/hooks/_", ProtectReason::GitHooksPath, D, true}));
}

// The repository around the workspace sets core.hooksPath into its writable git directory, and
// the user's configuration into the workspace: both are protected; one outside every writable
// place is not (the command cannot write it).
TEST(DefaultPolicy, CoreHooksPathInAWritablePlaceIsProtected) {
  PolicyInputs inputs{"/repo/app", "/home/u", "/usr/bin/pi-sandbox", {}, {}};
  inputs.git = GitLayout{.worktree_root = "/repo",
                         .git_dir = "/repo/.git",
                         .common_dir = "/repo/.git",
                         .hooks_path = ".git/my-hooks"};
  inputs.user_hooks_path = "/repo/app/.githooks";
  const SandboxPolicy p = default_policy(inputs);
  const auto has = [&](const fs::path& path) {
    return std::ranges::any_of(p.protected_paths, [&](const ProtectedPath& q) {
      return q == ProtectedPath{path, ProtectReason::GitHooksPath, D, true};
    });
  };
  EXPECT_TRUE(has("/repo/.git/my-hooks"));
  EXPECT_TRUE(has("/repo/app/.githooks"));
  EXPECT_EQ(p.user_hooks_path, "/repo/app/.githooks");
  inputs.git->hooks_path = "/opt/hooks";
  inputs.user_hooks_path = "~/.githooks";
  const SandboxPolicy q = default_policy(inputs);
  EXPECT_FALSE(std::ranges::any_of(q.protected_paths, [](const ProtectedPath& r) {
    return r.reason == ProtectReason::GitHooksPath;
  }));
}

}  // namespace
}  // namespace pisandbox::policy

namespace pisandbox::policy {
namespace {

// docs/security.md, "Credentials": the table there is this one, row for row.
TEST(CredentialNames, TheDocumentedTableIsTheSourceTable) {
  const char* source = std::getenv("PI_SANDBOX_SOURCE_DIR");
  std::ifstream file(std::string(source != nullptr ? source : ".") + "/docs/security.md");
  ASSERT_TRUE(file) << "docs/security.md not found (PI_SANDBOX_SOURCE_DIR)";
  std::vector<std::string> documented;
  bool inside = false;
  for (std::string line; std::getline(file, line);) {
    if (line == "<!-- credential-names:end -->") inside = false;
    if (inside && line.starts_with("| `")) documented.push_back(line);
    if (line == "<!-- credential-names:begin -->") inside = true;
  }
  std::vector<std::string> expected;
  for (const auto& row : credential_names())
    expected.push_back("| `~/" + std::string(row.name) + "` | " +
                       (row.kind == NodeKind::File ? "file" : "directory") + " | " +
                       std::string(row.program) + " | " + std::string(row.source) + " |");
  EXPECT_EQ(documented, expected);
}

std::vector<fs::path> every_credential(const fs::path& home) {
  std::vector<fs::path> out;
  for (const auto& row : credential_names()) out.push_back(home / row.name);
  return out;
}

// The workspace is the home, or contains it: every credential is concealed.
TEST(CredentialNames, ConcealedWhenTheWorkspaceIsOrContainsTheHome) {
  for (const fs::path ws : {"/home/u", "/home"}) {
    const SandboxPolicy p = default_policy({ws, "/home/u", "", {}, {}});
    for (const auto& path : every_credential("/home/u"))
      EXPECT_NE(std::ranges::find(p.concealed, path), p.concealed.end()) << ws << " " << path;
  }
}

// An additionalAllowRead entry that is or contains the credentials re-exposes the home: each is
// concealed again. One that only covers other places conceals nothing.
TEST(CredentialNames, ConcealedWhenAnAllowReadEntryCoversThem) {
  PolicyInputs in{"/home/u/ws", "/home/u", "", {"/home/u"}, {}};
  SandboxPolicy p = default_policy(in);
  for (const auto& path : every_credential("/home/u"))
    EXPECT_NE(std::ranges::find(p.concealed, path), p.concealed.end()) << path;
  in.additional_allow_read = {"/home/u/.aws"};
  p = default_policy(in);
  EXPECT_EQ(p.concealed, (std::vector<fs::path>{"/home/u/.aws/credentials"}));
  in.additional_allow_read = {"/home/u/projects"};
  EXPECT_TRUE(default_policy(in).concealed.empty());
}

TEST(CredentialNames, SystemAndCredentialDirectoriesAreRefusedAsWorkspaces) {
  EXPECT_EQ(workspace_refusal("/etc", "/home/u"),
            "it is or lies inside /etc, part of the system: a command could change what the host "
            "runs");
  EXPECT_EQ(workspace_refusal("/usr/local/src", "/home/u"),
            "it is or lies inside /usr, part of the system: a command could change what the host "
            "runs");
  for (const char* dir : {"/boot", "/bin", "/sbin", "/lib", "/lib64", "/proc/1", "/sys", "/dev"})
    EXPECT_NE(workspace_refusal(dir, "/home/u"), "") << dir;
  EXPECT_EQ(workspace_refusal("/var/lib", "/home/u"),
            "it is /var/lib, a system directory that holds other programs' and users' data");
  for (const char* dir : {"/var", "/opt", "/srv", "/home", "/run", "/mnt", "/media"})
    EXPECT_NE(workspace_refusal(dir, "/home/u"), "") << dir;
  EXPECT_EQ(workspace_refusal("/home/u/.gnupg/private-keys-v1.d", "/home/u"),
            "it is or lies inside the credential directory /home/u/.gnupg/private-keys-v1.d "
            "(gpg-agent (GnuPG 2.1+))");
  EXPECT_NE(workspace_refusal("/home/u/.config/gcloud/legacy_credentials/x", "/home/u"), "");
  // Projects in ordinary places, the home itself included (it is warned about).
  for (const char* dir : {"/home/u", "/home/u/ws", "/var/lib/build", "/opt/app", "/srv/site",
                          "/etcetera", "/usr2", "/tmp/work"})
    EXPECT_EQ(workspace_refusal(dir, "/home/u"), "") << dir;
  EXPECT_EQ(workspace_refusal("/home/u/.gnupg/private-keys-v1.d", "/"), "");
}

}  // namespace
}  // namespace pisandbox::policy

namespace pisandbox::policy {
namespace {

TEST(CredentialNames, TheHomeWarningNamesWhatStaysHidden) {
  EXPECT_EQ(home_workspace_warning(default_policy({"/home/u", "/home/u", "", {}, {}})),
            "the workspace contains the home directory /home/u, so the home is not hidden: the "
            "command can read it, except the credentials tools keep there (ssh and gpg private "
            "keys, ~/.aws/credentials, gcloud's and Azure's tokens, ~/.kube/config, "
            "~/.git-credentials, ~/.netrc, ~/.config/gh/hosts.yml, ~/.pypirc, cargo's and the "
            "agents' logins: masked empty; ~/.npmrc, ~/.docker/config.json and the like show "
            "their settings without their tokens; `pi-sandbox policy` lists them), and write "
            "inside its ordinary directories, but not its top level nor any dot-file or "
            "dot-directory in it; readable: everything else in the home, a key saved under another "
            "name included, but not a hard link of a masked credential that the start finds (masked "
            "too)");
  EXPECT_EQ(home_workspace_warning(default_policy({"/home/u/ws", "/home/u", "", {}, {}})), "");
  EXPECT_EQ(home_workspace_warning(default_policy({"/srv/ws", "/", "", {}, {}})), "");
}

}  // namespace
}  // namespace pisandbox::policy

namespace pisandbox::policy {
namespace {

// A workspace in the hidden home that holds credentials (`~/.aws`): they are masked there too.
TEST(CredentialNames, ConcealedInAWorkspaceThatHoldsThem) {
  const SandboxPolicy p = default_policy({"/home/u/.aws", "/home/u", "", {}, {}});
  EXPECT_TRUE(p.hide_home);
  EXPECT_EQ(p.concealed, (std::vector<fs::path>{"/home/u/.aws/credentials"}));
}

}  // namespace
}  // namespace pisandbox::policy

namespace pisandbox::policy {
namespace {

// `filesystem.exposeCredentials` (docs/security.md, "Handing a credential in"): the named
// credential is re-exposed read-only in the hidden home and left out of the concealed set; the
// others stay masked.
TEST(HandedIn, ReexposedReadOnlyInTheHiddenHome) {
  PolicyInputs in{"/home/u/ws", "/home/u", "", {"/home/u/.config/gh"}, {}};
  in.expose_credentials = {".config/gh/hosts.yml", "not/a/credential"};
  const SandboxPolicy p = default_policy(in);
  EXPECT_EQ(p.handed_in, (std::vector<fs::path>{"/home/u/.config/gh/hosts.yml"}));
  EXPECT_TRUE(std::ranges::none_of(
      p.concealed, [](const fs::path& c) { return c == "/home/u/.config/gh/hosts.yml"; }));
  const auto exposure = std::ranges::find(
      p.home_read_allowed, fs::path("/home/u/.config/gh/hosts.yml"), &Exposure::path);
  ASSERT_NE(exposure, p.home_read_allowed.end());
  EXPECT_EQ(exposure->access, Access::ReadOnly);
  EXPECT_EQ(exposure->why,
            "filesystem.exposeCredentials: a credential handed in on purpose (read-only)");
  // Not handed in: masked as before.
  EXPECT_TRUE(
      default_policy({"/home/u/ws", "/home/u", "", {"/home/u/.config/gh"}, {}}).concealed.size() ==
      1);
}

// In a home workspace the credential is readable where it is, read-only like every dot-entry;
// one inside a writable root is bound read-only; one below a directory that stays masked whole
// is not handed in, and a warning says so.
TEST(HandedIn, InAWorkspaceThatHoldsIt) {
  PolicyInputs in{"/home/u", "/home/u", "", {}, {}};
  in.expose_credentials = {".ssh/id_ed25519", ".gnupg/private-keys-v1.d/AB.key"};
  const SandboxPolicy p = default_policy(in);
  EXPECT_EQ(std::ranges::count(p.concealed, fs::path("/home/u/.ssh/id_ed25519")), 0);
  EXPECT_EQ(std::ranges::count(p.concealed, fs::path("/home/u/.ssh/id_rsa")), 1);
  const auto held = std::ranges::find(p.protected_paths, fs::path("/home/u/.ssh/id_ed25519"),
                                      &ProtectedPath::path);
  ASSERT_NE(held, p.protected_paths.end());
  EXPECT_EQ(held->reason, ProtectReason::Secret);
  EXPECT_EQ(p.warnings, (std::vector<std::string>{
                            "filesystem.exposeCredentials: /home/u/.gnupg/private-keys-v1.d/AB.key "
                            "lies in the credential directory /home/u/.gnupg/private-keys-v1.d, "
                            "which stays masked whole here: it is not handed in (hand in the "
                            "directory, or start in a project directory)"}));
  EXPECT_TRUE(home_workspace_warning(p).ends_with(
      "; handed in on purpose by filesystem.exposeCredentials (read-only): "
      "/home/u/.ssh/id_ed25519 /home/u/.gnupg/private-keys-v1.d/AB.key"));
}

TEST(HandedIn, IsCredentialName) {
  EXPECT_TRUE(is_credential_name(".netrc"));
  EXPECT_TRUE(is_credential_name(".gnupg/private-keys-v1.d"));
  EXPECT_TRUE(is_credential_name(".gnupg/private-keys-v1.d/AB.key"));
  EXPECT_TRUE(is_credential_name(".config/gcloud/legacy_credentials/me/adc.json"));
  EXPECT_FALSE(is_credential_name(".ssh/id_rsa/x"));  // below a file row
  EXPECT_FALSE(is_credential_name(".gnupg"));
  EXPECT_FALSE(is_credential_name(".gnupg/private-keys-v1.d/"));
  EXPECT_FALSE(is_credential_name(".gnupg/private-keys-v1.d/../pubring.kbx"));
  EXPECT_FALSE(is_credential_name("./.netrc"));
  EXPECT_FALSE(is_credential_name("/.netrc"));
  EXPECT_FALSE(is_credential_name(""));
}

// An additionalAllowWrite entry that holds a credential shows it as a workspace would: masked.
TEST(CredentialNames, ConcealedInAWritableRoot) {
  PolicyInputs in{"/home/u/ws", "/home/u", "", {}, {}};
  in.additional_allow_write = {"/home/u/.config/gh"};
  const SandboxPolicy p = default_policy(in);
  ASSERT_TRUE(p.refused.empty()) << p.refused.front();
  EXPECT_EQ(std::ranges::count(p.concealed, fs::path("/home/u/.config/gh/hosts.yml")), 1);
}

}  // namespace
}  // namespace pisandbox::policy
