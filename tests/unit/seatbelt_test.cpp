// The Seatbelt profile (sandbox/macos/seatbelt.hpp): exact escaping, golden profiles, the
// structure of every profile, and a table of (operation, path) verdicts compared with the Linux
// sandbox's (docs/macos.md, "What is tested where").
#include "sandbox/macos/seatbelt.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "sandbox/macos/launch_plan.hpp"
#include "seatbelt_sbpl.hpp"

namespace pisandbox::sandbox::macos {
namespace {

using policy::NodeKind;
using policy::ProtectedPath;
using policy::ProtectReason;
using sbpl::Target;

// --- Escaping ---

TEST(SbplString, EscapesQuotesBackslashesAndControlBytesExactly) {
  EXPECT_EQ(sbpl_string("/a b"), "\"/a b\"");
  EXPECT_EQ(sbpl_string("a\"b"), "\"a\\\"b\"");
  EXPECT_EQ(sbpl_string("a\\b"), "\"a\\\\b\"");
  EXPECT_EQ(sbpl_string("a\nb\tc\rd"), "\"a\\nb\\tc\\rd\"");
  EXPECT_EQ(sbpl_string(std::string("a\x01"
                                    "b\x1f"
                                    "c\x7f",
                                    6)),
            "\"a\\x01b\\x1fc\\x7f\"");
  EXPECT_EQ(sbpl_string("(p) ; é 名"), "\"(p) ; é 名\"");
  EXPECT_EQ(sbpl_string(""), "\"\"");
}

TEST(SbplString, EveryByteReadsBackAsItself) {
  std::string all;
  for (int byte = 1; byte < 256; ++byte) all += static_cast<char>(byte);
  auto forms = sbpl::read("(literal " + sbpl_string(all) + ")");
  ASSERT_TRUE(forms) << forms.error().message;
  ASSERT_EQ(forms->size(), 1u);
  ASSERT_EQ((*forms)[0].items.size(), 2u);
  EXPECT_EQ((*forms)[0].items[1].text, all);
}

TEST(RegexLiteral, EscapesEveryMetacharacterExactly) {
  EXPECT_EQ(regex_literal("/a.b"), "/a\\.b");
  EXPECT_EQ(regex_literal("^$.|?*+()[]{}\\"), "\\^\\$\\.\\|\\?\\*\\+\\(\\)\\[]\\{}\\\\");
  EXPECT_EQ(regex_literal("é\n名"), "é\n名");
  EXPECT_EQ(regex_literal_any_case(".Env1"), "\\.[eE][nN][vV]1");
}

// A regex made of a name matches that name and nothing else, whatever the name holds.
TEST(RegexLiteral, MatchesTheNameItselfAndNoNearMiss) {
  const std::vector<std::string> names = {
      "/Users/u/a.b",      "/Users/u/(x)",         "/Users/u/[ab]",      "/Users/u/a+b*c?",
      "/Users/u/{1,2}|^$", "/Users/u/back\\slash", "/Users/u/new\nline", "/Users/u/é 名"};
  for (const auto& name : names) {
    const std::regex exact("^" + regex_literal(name) + "$", std::regex::extended);
    EXPECT_TRUE(std::regex_match(name, exact)) << name;
    for (std::size_t i = 9; i < name.size(); ++i) {
      std::string near = name;
      near[i] = near[i] == 'x' ? 'y' : 'x';
      EXPECT_FALSE(std::regex_match(near, exact)) << name << " vs " << near;
    }
    const std::regex folded("^" + regex_literal_any_case(name) + "$", std::regex::extended);
    std::string upper = name;
    for (auto& c : upper)
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    EXPECT_TRUE(std::regex_match(upper, folded)) << upper;
  }
}

// --- The policies of the tests ---

const fs::path kHome = "/Users/u";
const fs::path kTemp = "/private/var/folders/pi-sandbox/tmp";
const fs::path kLayer = "/private/var/folders/pi-sandbox/home";

/// What the scan adds in a repository (policy/protected_scan.hpp): its `.git/hooks`, and an
/// existing secret.
std::vector<ProtectedPath> with_scan(const policy::SandboxPolicy& p) {
  auto out = p.protected_paths;
  out.push_back({p.workspace / ".git/hooks", ProtectReason::GitHooks, NodeKind::Directory, true});
  out.push_back({p.workspace / "config/server.pem", ProtectReason::Secret, NodeKind::File, false});
  return out;
}

/// The host of the tests: these paths exist, nothing else does.
PathExists fake_host(const policy::SandboxPolicy& p) {
  std::set<fs::path> existing = {p.workspace / "config/server.pem", kHome / ".gitconfig",
                                 kHome / ".zshrc", kHome / ".ssh"};
  return [existing](const fs::path& path) { return existing.contains(path); };
}

struct Case {
  policy::SandboxPolicy policy;
  std::vector<ProtectedPath> protected_paths;
  SeatbeltInputs inputs;
};

Case make_case(const policy::PolicyInputs& in, SeatbeltInputs inputs = example_inputs()) {
  auto p = policy::default_policy(in);
  auto protected_paths = with_scan(p);
  return {std::move(p), std::move(protected_paths), std::move(inputs)};
}

Case default_case() {
  return make_case({"/Users/u/ws", kHome, "/opt/pi-sandbox/bin/pi-sandbox", {}, {}});
}

/// Every option of the policy that changes the profile: a repository around the workspace,
/// configured reads and writes, toolchains in the home, strict protection, an allowed socket.
Case every_option_case() {
  policy::PolicyInputs in{"/Users/u/src/repo/ws",
                          kHome,
                          "/Users/u/.local/bin/pi-sandbox",
                          {"/Users/u/.local/share/tool", "/opt/tool"},
                          {"/Users/u/.pi/agent/extensions/pi-sandbox/config.json"}};
  in.path_dirs = {"/Users/u/.cargo/bin", "/usr/bin"};
  in.git =
      policy::GitLayout{"/Users/u/src/repo", "/Users/u/src/repo/.git", "/Users/u/src/repo/.git"};
  in.additional_allow_write = {"/Users/u/cache"};
  in.protection = policy::Protection::Strict;
  auto inputs = example_inputs();
  inputs.http_port = 49152;
  inputs.socks_port = 49153;
  inputs.allowed_sockets = {"/Users/u/.ssh/agent.sock"};
  return make_case(in, inputs);
}

/// The workspace is the home: its top level and dot-entries read-only, its directories writable.
Case workspace_is_home_case() {
  policy::PolicyInputs in{kHome, kHome, "/opt/pi-sandbox/bin/pi-sandbox", {}, {}};
  in.home_entries = {"Documents", ".zshrc", "src"};
  return make_case(in);
}

/// Names that break a careless generator: quotes, parentheses, brackets, regex metacharacters,
/// a backslash, a newline, a tab, non-ASCII.
const fs::path kHostileWorkspace =
    "/Users/u/a \"q\" (p) [b] {c} $d ^e .f *g +h ?i |j \\k\nl\tm é 名";

Case hostile_case() {
  return make_case({kHostileWorkspace,
                    kHome,
                    "/opt/pi-sandbox/bin/pi-sandbox",
                    {"/Users/u/.config/tool (x)/\"rc\""},
                    {}});
}

std::string profile_text(const Case& c) {
  return render(plan_seatbelt(c.policy, c.protected_paths, c.inputs, fake_host(c.policy)));
}

// --- Golden profiles ---

std::string golden_path(const std::string& name) {
  const char* source = std::getenv("PI_SANDBOX_SOURCE_DIR");
  return std::string(source != nullptr ? source : ".") + "/tests/unit/golden/seatbelt/" + name +
         ".sb";
}

/// Compares `text` with the golden file `name`; PI_SANDBOX_UPDATE_GOLDEN=1 rewrites the file
/// instead (then review the diff).
void expect_golden(const std::string& name, const std::string& text) {
  const std::string path = golden_path(name);
  if (std::getenv("PI_SANDBOX_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << text;
    return;
  }
  std::ifstream file(path, std::ios::binary);
  ASSERT_TRUE(file) << "missing golden file " << path;
  std::stringstream golden;
  golden << file.rdbuf();
  EXPECT_EQ(text, golden.str()) << "the profile differs from " << path;
}

TEST(SeatbeltGolden, DefaultPolicy) {
  expect_golden("default", profile_text(default_case()));
}

TEST(SeatbeltGolden, EveryOption) {
  expect_golden("every-option", profile_text(every_option_case()));
}

TEST(SeatbeltGolden, WorkspaceIsTheHome) {
  expect_golden("workspace-is-home", profile_text(workspace_is_home_case()));
}

TEST(SeatbeltGolden, HostileNames) {
  expect_golden("hostile-names", profile_text(hostile_case()));
}

// --- Structure ---

std::vector<sbpl::Node> read_profile(const Case& c) {
  auto forms = sbpl::read(profile_text(c));
  EXPECT_TRUE(forms) << forms.error().message;
  return forms ? *forms : std::vector<sbpl::Node>{};
}

TEST(SeatbeltStructure, EveryProfileIsBalancedAndUsesOnlyKnownOperationsAndFilters) {
  for (const auto& c :
       {default_case(), every_option_case(), workspace_is_home_case(), hostile_case()}) {
    const auto forms = read_profile(c);
    EXPECT_GT(forms.size(), 10u);
    EXPECT_EQ(sbpl::check(forms), std::vector<std::string>{}) << c.policy.workspace;
  }
}

// The check itself can fail: each broken profile is named by its first problem.
TEST(SeatbeltStructure, TheCheckRefusesBrokenProfiles) {
  EXPECT_FALSE(sbpl::read("(version 1)\n(deny default"));
  EXPECT_FALSE(sbpl::read("(version 1))"));
  EXPECT_FALSE(sbpl::read("(literal \"a)"));
  EXPECT_FALSE(sbpl::read("(literal \"a\\qb\")"));
  EXPECT_FALSE(sbpl::read("(literal \"a\nb\")"));
  const auto problems = [](std::string_view text) {
    auto forms = sbpl::read(text);
    return forms ? sbpl::check(*forms) : std::vector<std::string>{forms.error().message};
  };
  const std::string head = "(version 1)\n(deny default)\n";
  EXPECT_EQ(problems(head + "(allow file-read-everything)"),
            std::vector<std::string>{"form 2: unknown operation file-read-everything"});
  EXPECT_EQ(problems(head + "(allow file-read* (prefix \"/a\"))"),
            std::vector<std::string>{"form 2: unknown filter prefix"});
  EXPECT_EQ(problems(head + "(allow file-read* (subpath \"a\"))"),
            std::vector<std::string>{"form 2: subpath of a relative path"});
  EXPECT_EQ(problems(head + "(allow network-outbound (remote ip \"example.com:80\"))"),
            std::vector<std::string>{"form 2: an ip address must be localhost:PORT or *:PORT"});
  EXPECT_EQ(problems("(version 2)\n(allow default)\n").size(), 2u);
  EXPECT_EQ(problems(head + "(allow file-read* (regex \"^/a(\"))").size(), 1u);
}

// --- Semantics: the same verdicts as the Linux sandbox ---

/// One (operation, target) pair: the Linux sandbox's verdict, as its integration test (named in
/// `source`) asserts it, and the profile's. Where they differ, `difference` says why (and
/// docs/macos.md, "What differs from Linux", lists the same rows).
struct Row {
  std::string operation;
  std::string target;
  Target kind;
  bool linux_allows;
  bool macos_allows;
  std::string source;
  std::string difference = {};
};

constexpr bool kAllow = true;
constexpr bool kDeny = false;

void expect_rows(const Case& c, const std::vector<Row>& rows) {
  const auto forms = read_profile(c);
  for (const auto& row : rows) {
    EXPECT_EQ(sbpl::allows(forms, row.operation, row.target, row.kind), row.macos_allows)
        << row.operation << " " << row.target << " (" << row.source << ")";
    EXPECT_EQ(row.linux_allows != row.macos_allows, !row.difference.empty())
        << row.target << ": a difference from Linux needs its reason, and only a difference";
  }
}

const std::string kWs = "/Users/u/ws";
const std::string kT = kTemp.string();
const std::string kL = kLayer.string();

TEST(SeatbeltSemantics, DefaultPolicyDecidesAsTheLinuxSandbox) {
  const std::vector<Row> rows = {
      {"file-write-create", kWs + "/new.txt", Target::File, kAllow, kAllow,
       "Sandbox.WritesInsideTheWorkspaceReachTheHost"},
      {"file-write-data", kWs + "/src/main.c", Target::File, kAllow, kAllow,
       "Sandbox.WritesInsideTheWorkspaceReachTheHost"},
      {"file-read-data", "/etc/hosts", Target::File, kAllow, kAllow,
       "Sandbox.TheHostOutsideTheWorkspaceIsReadOnly"},
      {"file-write-data", "/etc/hosts", Target::File, kDeny, kDeny,
       "Sandbox.TheHostOutsideTheWorkspaceIsReadOnly"},
      {"file-write-create", "/usr/local/bin/tool", Target::File, kDeny, kDeny,
       "Sandbox.TheHostOutsideTheWorkspaceIsReadOnly"},
      {"file-write-unlink", "/Users/u/other/file", Target::File, kDeny, kDeny,
       "Sandbox.TheHostOutsideTheWorkspaceIsReadOnly"},
      {"file-read-data", "/Users/u/.ssh/id_ed25519", Target::File, kDeny, kDeny,
       "Sandbox.TheHomeIsHiddenButGitConfigIsReadable"},
      {"file-read-data", "/Users/u/Documents/notes.txt", Target::File, kDeny, kDeny,
       "Sandbox.TheHomeIsHiddenButGitConfigIsReadable"},
      {"file-read-data", "/Users/u/.gitconfig", Target::File, kAllow, kAllow,
       "Sandbox.TheHomeIsHiddenButGitConfigIsReadable"},
      {"file-write-data", "/Users/u/.gitconfig", Target::File, kDeny, kDeny,
       "Sandbox.TheHomeIsHiddenButGitConfigIsReadable"},
      {"file-read-metadata", "/Users/u", Target::File, kAllow, kAllow,
       "Sandbox.TheHomeIsHiddenButGitConfigIsReadable (cd ~ works)"},
      {"file-write-create", kT + "/build.o", Target::File, kAllow, kAllow,
       "Sandbox.PrivateTempIsWritableAndGoneAfterwards"},
      {"file-read-data", "/private/tmp/host-file", Target::File, kDeny, kDeny,
       "Sandbox.PrivateTempIsWritableAndGoneAfterwards (the host's /tmp is not seen)"},
      {"file-write-create", kL + "/.cache/pip/x", Target::File, kAllow, kAllow,
       "Sandbox.PythonVirtualEnvironmentsWork (writes to the hidden home succeed, then vanish)"},
      {"file-write-create", kWs + "/.git/hooks/pre-commit", Target::File, kDeny, kDeny,
       "Sandbox.GitInitAddCommitWorkAndHooksAreProtectedLater"},
      {"file-write-data", kWs + "/.bashrc", Target::File, kDeny, kDeny,
       "Sandbox.ProtectedPathsRefuseWriteCreateRenameLinkAndSymlinkReplacement"},
      {"file-write-unlink", kWs + "/.bashrc", Target::File, kDeny, kDeny,
       "Sandbox.ProtectedPathsRefuseWriteCreateRenameLinkAndSymlinkReplacement"},
      {"file-write-create", kWs + "/.vscode/tasks.json", Target::File, kDeny, kDeny,
       "Sandbox.ProtectedPathsRefuseWriteCreateRenameLinkAndSymlinkReplacement"},
      {"file-write-create", kWs + "/.claude/settings.json", Target::File, kDeny, kDeny,
       "Sandbox.ProtectedPathsRefuseWriteCreateRenameLinkAndSymlinkReplacement"},
      {"file-write-create", kWs + "/.pi/settings.json", Target::File, kDeny, kDeny,
       "Sandbox.ProtectedPathsRefuseWriteCreateRenameLinkAndSymlinkReplacement"},
      {"file-write-create", kWs + "/.cursor/mcp.json", Target::File, kDeny, kDeny,
       "Guard.NamesHostProgramsRunAreQuarantined (docs/security.md, \"Names that host programs "
       "run\")"},
      {"file-write-create", kWs + "/x.code-workspace", Target::File, kDeny, kDeny,
       "Guard.NamesHostProgramsRunAreQuarantined (a pattern)"},
      {"file-write-create", kWs + "/x.code-workspace.txt", Target::File, kAllow, kAllow,
       "Guard.NamesHostProgramsRunAreQuarantined (only the suffix matches)"},
      {"file-write-unlink", kWs + "/.git", Target::File, kDeny, kDeny,
       "Sandbox.ARenameOfAProtectedPathsParentIsRefused"},
      {"file-write-unlink", kWs + "/.pi", Target::File, kDeny, kDeny,
       "Sandbox.ARenameOfAProtectedPathsParentIsRefused"},
      {"file-write-unlink", kWs + "/src", Target::File, kAllow, kAllow,
       "Sandbox.WritesInsideTheWorkspaceReachTheHost"},
      {"file-write-create", kWs + "/.env", Target::File, kAllow, kAllow,
       "docs/security.md, \"The guard\": a missing secret is not protected"},
      {"file-write-data", kWs + "/config/server.pem", Target::File, kDeny, kDeny,
       "Sandbox.ProtectedPathsRefuseWriteCreateRenameLinkAndSymlinkReplacement (a secret)"},
      {"network-outbound", "localhost:3128", Target::Ip, kAllow, kAllow,
       "Network tests (every client reaches the proxy)"},
      {"network-outbound", "localhost:1080", Target::Ip, kAllow, kAllow, "Network tests (SOCKS5)"},
      {"network-outbound", "localhost:5432", Target::Ip, kDeny, kDeny,
       "Network tests (the host's loopback services are not reachable)"},
      {"network-outbound", "*:443", Target::Ip, kDeny, kDeny,
       "Network tests (no direct connection)"},
      {"network-outbound", "/private/var/run/docker.sock", Target::RemoteSocket, kDeny, kDeny,
       "UnixSockets.AHostSocketIsRefusedWithOneLineAndNeverConnected"},
      {"network-outbound", kT + "/app.sock", Target::RemoteSocket, kAllow, kAllow,
       "UnixSockets.AServerAndClientOnASocketInThePrivateTmpWork"},
      {"network-bind", kWs + "/app.sock", Target::LocalSocket, kAllow, kAllow,
       "UnixSockets.SocketsTheSandboxBindsInTheWorkspaceAndAbstractNamesAreItsOwn"},
      {"process-exec", "/bin/sh", Target::File, kAllow, kAllow, "every test"},
      {"signal", "a host process", Target::File, kDeny, kDeny,
       "Linux: the host's processes are in another pid namespace (only same-sandbox here)"},
      {"file-write-create", "/private/tmp/x", Target::File, kAllow, kDeny,
       "Sandbox.PrivateTempIsWritableAndGoneAfterwards (/tmp/x)",
       "the private temporary directory is TMPDIR, not /tmp (no mount namespace)"},
      {"file-write-create", "/Users/u/.cache/x", Target::File, kAllow, kDeny,
       "Sandbox.PythonVirtualEnvironmentsWork (~/.cache)",
       "the throw-away home layer is HOME at a path of its own (no mount over the home)"},
      {"file-write-create", kWs + "/lib/.vscode/settings.json", Target::File, kAllow, kDeny,
       "Sandbox.ProtectedPathsRefuse... (nested names only in repositories on Linux)",
       "protected names are refused at any depth"},
      {"file-write-create", kWs + "/.BASHRC", Target::File, kAllow, kDeny,
       "Linux file systems are case-sensitive",
       "macOS file systems are case-insensitive: .BASHRC is .bashrc"},
      {"network-outbound", kWs + "/app.sock", Target::RemoteSocket, kAllow, kDeny,
       "UnixSockets.SocketsTheSandboxBindsInTheWorkspaceAndAbstractNamesAreItsOwn",
       "no broker: a socket in the workspace may be a host process's"},
  };
  expect_rows(default_case(), rows);
}

TEST(SeatbeltSemantics, EveryOptionDecidesAsTheLinuxSandbox) {
  const std::string ws = "/Users/u/src/repo/ws";
  const std::vector<Row> rows = {
      {"file-write-create", "/Users/u/cache/x", Target::File, kAllow, kAllow,
       "filesystem.additionalAllowWrite (docs/configuration.md)"},
      {"file-write-create", "/Users/u/cache/.vscode/tasks.json", Target::File, kDeny, kDeny,
       "Guard.AnAdditionalWritableRootIsProtectedLikeTheWorkspace (docs/security.md, \"Every "
       "writable root\")"},
      {"file-write-create", "/Users/u/cache/a.code-workspace", Target::File, kDeny, kDeny,
       "Guard.AnAdditionalWritableRootIsProtectedLikeTheWorkspace"},
      {"file-read-data", "/Users/u/.local/share/tool/data", Target::File, kAllow, kAllow,
       "filesystem.additionalAllowRead (docs/configuration.md)"},
      {"file-write-data", "/Users/u/.local/share/tool/data", Target::File, kDeny, kDeny,
       "filesystem.additionalAllowRead is read-only"},
      {"file-read-data", "/Users/u/src/repo/README.md", Target::File, kAllow, kAllow,
       "the repository around the workspace is re-exposed"},
      {"file-write-data", "/Users/u/src/repo/README.md", Target::File, kDeny, kDeny,
       "the repository around the workspace is read-only outside it"},
      {"file-write-create", "/Users/u/src/repo/.git/objects/ab/cdef", Target::File, kAllow, kAllow,
       "Sandbox.GitInitAddCommitWorkAndHooksAreProtectedLater (a commit writes .git)"},
      {"file-write-create", "/Users/u/src/repo/.git/hooks/post-commit", Target::File, kDeny, kDeny,
       "docs/security.md, \"Repositories around the workspace\""},
      {"file-write-create", ws + "/.env", Target::File, kDeny, kDeny,
       "Sandbox.StrictProtectedPathsRefuseWriteCreateRenameLinkAndSymlinkReplacement"},
      {"file-write-data", "/Users/u/.local/bin/pi-sandbox", Target::File, kDeny, kDeny,
       "the sandbox binary is protected (compatibility C18)"},
      {"network-outbound", "/Users/u/.ssh/agent.sock", Target::RemoteSocket, kAllow, kAllow,
       "UnixSockets.AnAllowedSocketIsConnectedWithoutAsking"},
      {"network-outbound", "localhost:49152", Target::Ip, kAllow, kAllow,
       "the command's proxy port"},
      {"network-outbound", "localhost:3128", Target::Ip, kDeny, kDeny,
       "another command's proxy (Linux: not in this network namespace)"},
  };
  expect_rows(every_option_case(), rows);
}

TEST(SeatbeltSemantics, WorkspaceThatIsTheHomeDecidesAsTheLinuxSandbox) {
  const std::vector<Row> rows = {
      {"file-write-create", "/Users/u/new-file", Target::File, kDeny, kDeny,
       "docs/security.md, \"The workspace is the home\""},
      {"file-write-create", "/Users/u/Documents/x", Target::File, kAllow, kAllow,
       "docs/security.md, \"The workspace is the home\""},
      {"file-write-data", "/Users/u/.zshrc", Target::File, kDeny, kDeny,
       "docs/security.md, \"The workspace is the home\""},
      {"file-write-create", "/Users/u/.config/new", Target::File, kDeny, kDeny,
       "docs/security.md, \"The workspace is the home\" (no dot-entry changes)"},
      {"file-read-data", "/Users/u/.ssh/id_ed25519", Target::File, kDeny, kDeny,
       "docs/security.md, \"Credentials\" (on Linux the key reads empty)"},
      {"file-read-data", "/Users/u/.ssh/id_ed25519.pub", Target::File, kAllow, kAllow,
       "the home is not hidden (a warning says so)"},
  };
  expect_rows(workspace_is_home_case(), rows);
}

TEST(SeatbeltSemantics, HostileNamesAreMatchedExactly) {
  const std::string ws = kHostileWorkspace.string();
  std::string near = ws;
  near[near.find(".f")] = 'x';  // a regex that left `.` unescaped would match this one
  const std::vector<Row> rows = {
      {"file-write-create", ws + "/new", Target::File, kAllow, kAllow, "the workspace"},
      {"file-write-create", ws + "/deep/er/.bashrc", Target::File, kAllow, kDeny,
       "Linux protects a nested .bashrc only in a repository",
       "protected names are refused at any depth"},
      {"file-write-create", ws + "/.git/hooks/x", Target::File, kDeny, kDeny, "git hooks"},
      {"file-write-create", near + "/new", Target::File, kDeny, kDeny, "outside the workspace"},
      {"file-read-data", "/Users/u/.config/tool (x)/\"rc\"", Target::File, kAllow, kAllow,
       "filesystem.additionalAllowRead"},
      {"file-read-data", "/Users/u/.config/tool (x)/other", Target::File, kDeny, kDeny,
       "the hidden home"},
  };
  expect_rows(hostile_case(), rows);
}

// --- The launch (docs/macos.md) ---

TEST(SeatbeltLaunch, RunsSandboxExecWithTheProfileAndThePrivateDirectories) {
  const auto inputs = example_inputs();
  const auto plan =
      plan_launch("(version 1)", {"-weird", "a b"},
                  {"PATH=/usr/bin", "TMPDIR=/var/folders/x/T/", "HOME=/Users/u", "TMP=/tmp",
                   "HOMEBREW=1", "TMPDIR=again", "TEMP=/tmp", "TEMPLATE=x"},
                  inputs, HomeLayer::Home);
  EXPECT_EQ(plan.argv, (std::vector<std::string>{"/usr/bin/sandbox-exec", "-p", "(version 1)", "--",
                                                 "-weird", "a b"}));
  EXPECT_EQ(plan.env,
            (std::vector<std::string>{"PATH=/usr/bin", "HOMEBREW=1", "TEMPLATE=x",
                                      "TMPDIR=" + kTemp.string(), "TMP=" + kTemp.string(),
                                      "TEMP=" + kTemp.string(), "HOME=" + kLayer.string()}));
  EXPECT_EQ(plan_launch("p", {"sh"}, {"HOME=/Users/u"}, inputs, HomeLayer::Keep).env,
            (std::vector<std::string>{"HOME=/Users/u", "TMPDIR=" + kTemp.string(),
                                      "TMP=" + kTemp.string(), "TEMP=" + kTemp.string()}));
}

TEST(SeatbeltLaunch, TheHomeLayerLinksTheReExposedPathsOnce) {
  const auto c = every_option_case();
  const auto links = plan_home_links(c.policy, c.inputs);
  std::vector<HomeLink> expected;
  for (const char* rel : {".gitconfig", ".cargo", ".rustup", "src/repo", ".config/git/config",
                          ".local/share/tool", ".local/bin/pi-sandbox", "cache"})
    expected.push_back({kLayer / rel, kHome / rel});
  EXPECT_EQ(links, expected);  // src/repo/ws and src/repo/.git are reached through src/repo
  EXPECT_EQ(plan_home_links(workspace_is_home_case().policy, example_inputs()),
            std::vector<HomeLink>{});
}

TEST(SeatbeltLaunch, HomeLinksAreMadeWithTheirDirectories) {
  const fs::path top = fs::temp_directory_path() / ("seatbelt-links-" + std::to_string(::getpid()));
  fs::remove_all(top);
  const std::vector<HomeLink> links = {{top / "layer/.config/git/config", "/etc/hostname"},
                                       {top / "layer/.gitconfig", "/etc/hosts"}};
  ASSERT_TRUE(make_home_links(links));
  EXPECT_EQ(fs::read_symlink(top / "layer/.config/git/config"), "/etc/hostname");
  EXPECT_EQ(fs::read_symlink(top / "layer/.gitconfig"), "/etc/hosts");
  const auto again = make_home_links(links);
  ASSERT_FALSE(again);
  EXPECT_TRUE(again.error().message.starts_with(
      "create_symlink(" + (top / "layer/.config/git/config").string() + "): "))
      << again.error().message;
  fs::remove_all(top);
}

TEST(SeatbeltLaunch, ExitStatusesAreTheLinuxOnes) {
  EXPECT_EQ(exit_status({true, 0}), 0);
  EXPECT_EQ(exit_status({true, 7}), 7);
  EXPECT_EQ(exit_status({false, 15}), 143);
  EXPECT_EQ(exit_status({false, 9}), 137);
}

}  // namespace
}  // namespace pisandbox::sandbox::macos
