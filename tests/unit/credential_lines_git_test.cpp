// policy/credential_lines.hpp, ConfigFormat::GitConfig: the copy of a git configuration file
// without its credentials, byte for byte, and the files it shows empty.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "policy/credential_lines.hpp"
#include "policy/git_config_copies.hpp"
#include "policy/git_config_guard.hpp"
#include "policy/toolchain_configs.hpp"

namespace pisandbox::policy {
namespace {

using Removed = std::vector<RemovedItem>;

SanitizedConfig git(std::string_view bytes) {
  return sanitize_config(ConfigFormat::GitConfig, bytes);
}

TEST(CredentialLinesGit, LosesHeadersTokensPasswordsAndUserinfoAndKeepsTheRest) {
  const auto out =
      git("[user]\n"
          "\tname = Dev One\n"
          "\temail = dev@example.com\n"
          "[http \"https://git.test/\"]\n"
          "\textraHeader = Authorization: Bearer SECRET1\n"
          "\tsslVerify = true\n"
          "[url \"https://u:SECRET2@git.test/\"]\n"
          "\tinsteadOf = https://git.test/\n"
          "[http]\n"
          "\tproxy = http://u:SECRET3@proxy:3128\n"
          "\tExtraHeader = \"X-Token: SECRET4\"\n"
          "[sendemail]\n"
          "\tsmtpServer = smtp.example\n"
          "\tsmtpPass = SECRET5\n"
          "[github]\n"
          "\tuser = dev\n"
          "\ttoken = SECRET6\n"
          "[hub]\n"
          "\toauthtoken = SECRET7\n"
          "[alias]\n"
          "\tst = status -sb\n"
          "[remote \"origin\"]\n"
          "\turl = https://SECRET8@git.test/r.git\n"
          "[url \"ssh://git@github.com/\"]\n"
          "\tinsteadOf = https://github.com/\n"
          "[include]\n"
          "\tpath = ~/.gitconfig.local\n");
  EXPECT_EQ(out.bytes,
            "[user]\n"
            "\tname = Dev One\n"
            "\temail = dev@example.com\n"
            "[http \"https://git.test/\"]\n"
            "\tsslVerify = true\n"
            "[url \"https://git.test/\"]\n"
            "\tinsteadOf = https://git.test/\n"
            "[http]\n"
            "\tproxy = http://proxy:3128\n"
            "[sendemail]\n"
            "\tsmtpServer = smtp.example\n"
            "[github]\n"
            "\tuser = dev\n"
            "[hub]\n"
            "[alias]\n"
            "\tst = status -sb\n"
            "[remote \"origin\"]\n"
            "\turl = https://git.test/r.git\n"
            "[url \"ssh://git@github.com/\"]\n"
            "\tinsteadOf = https://github.com/\n"
            "[include]\n"
            "\tpath = ~/.gitconfig.local\n");
  EXPECT_EQ(out.removed, (Removed{{5, "http.https://git.test/.extraheader"},
                                  {7, "user:password of a URL"},
                                  {10, "user:password of a URL"},
                                  {11, "http.extraheader"},
                                  {14, "sendemail.smtppass"},
                                  {17, "github.token"},
                                  {19, "hub.oauthtoken"},
                                  {23, "user:password of a URL"}}));
  EXPECT_EQ(out.masked_whole, "");
  EXPECT_EQ(out.bytes.find("SECRET"), std::string::npos);
}

TEST(CredentialLinesGit, TakesApartContinuationsCommentsCrlfAndHeadersWithAnEntry) {
  const auto out =
      git("# a comment with https://x.test/\r\n"
          "[http] extraheader = Authorization: \\\n"
          "  Basic SECRET1\r\n"
          "\tpostBuffer = 524288000 ; a comment\r\n"
          "[credential \"https://git.test\"]\n"
          "\tusername = dev\n"
          "\tpassword = \"SECRET2\"\n"
          "\thelper = store\n"
          "[core]\n"
          "\taskPass = /usr/bin/ksshaskpass\n"
          "\teditor = vi\n");
  EXPECT_EQ(out.bytes,
            "# a comment with https://x.test/\r\n"
            "[http]\r\n"
            "\tpostBuffer = 524288000 ; a comment\r\n"
            "[credential \"https://git.test\"]\n"
            "\tusername = dev\n"
            "[core]\n"
            "\teditor = vi\n");
  EXPECT_EQ(out.removed, (Removed{{2, "http.extraheader"},
                                  {7, "credential.https://git.test.password"},
                                  {8, "credential.https://git.test.helper"},
                                  {10, "core.askpass"}}));
  EXPECT_EQ(out.masked_whole, "");
}

// gitcredentials(7), "Custom Helpers": a `!` helper is a shell snippet that can print the
// password itself; every helper goes, of any URL and in any spelling of the key.
TEST(CredentialLinesGit, LosesEveryCredentialHelperWithAPasswordInline) {
  const auto out =
      git("[credential \"https://git.test\"]\n"
          "\tusername = me\n"
          "\thelper = \"!f() { echo password=SECRET1; }; f\"\n"
          "[Credential]\n"
          "\tHELPER = !echo password=SECRET2\n"
          "[credential.old-host]\n"
          "\thelper = mine --token-file=/x --pw SECRET3\n"
          "[user]\n"
          "\tname = A\n");
  EXPECT_EQ(out.bytes,
            "[credential \"https://git.test\"]\n"
            "\tusername = me\n"
            "[Credential]\n"
            "[credential.old-host]\n"
            "[user]\n"
            "\tname = A\n");
  EXPECT_EQ(out.removed, (Removed{{3, "credential.https://git.test.helper"},
                                  {5, "credential.helper"},
                                  {7, "credential.old-host.helper"}}));
  EXPECT_EQ(out.masked_whole, "");
}

TEST(CredentialLinesGit, ASshUrlKeepsItsLoginAndLosesItsPassword) {
  const auto out =
      git("[remote \"a\"]\n"
          "\turl = ssh://git@host.test/r.git\n"
          "\tpushurl = git+ssh://me:SECRET@host.test/r.git\n"
          "[remote \"b\"]\n"
          "\turl = git@host.test:r.git\n");
  EXPECT_EQ(out.bytes,
            "[remote \"a\"]\n"
            "\turl = ssh://git@host.test/r.git\n"
            "\tpushurl = git+ssh://me@host.test/r.git\n"
            "[remote \"b\"]\n"
            "\turl = git@host.test:r.git\n");
  EXPECT_EQ(out.removed, (Removed{{3, "user:password of a URL"}}));
}

TEST(CredentialLinesGit, AProxyWithoutASchemeGoesWhole) {
  const auto out = git("[http]\n\tproxy = u:SECRET@proxy:3128\n[remote \"o\"]\n\tproxy = p:8080\n");
  EXPECT_EQ(out.bytes, "[http]\n[remote \"o\"]\n\tproxy = p:8080\n");
  EXPECT_EQ(out.removed, (Removed{{2, "http.proxy"}}));
}

TEST(CredentialLinesGit, WhatItCannotTakeApartIsShownEmpty) {
  // git refuses it: the copy would not be read as the file is.
  EXPECT_EQ(git("[user]\n\tname = \"open\n"),
            (SanitizedConfig{"", {}, "git would not read it: line 2: unterminated quoted value"}));
  EXPECT_EQ(git("[url \"https://u:SECRET@h/\"\n").masked_whole.substr(0, 21),
            "git would not read it");
  // A quote or an escape inside a URL's user information: strip_userinfo stops there.
  EXPECT_EQ(git("[url \"https://u:SEC\\\"RET@git.test/\"]\n\tinsteadOf = x\n"),
            (SanitizedConfig{"",
                             {},
                             "a URL's user information written in a form this reader does not "
                             "take apart (quoted or escaped), in url.https://u:SEC\"RET@git.test/"
                             ".insteadof"}));
  EXPECT_EQ(git("[remote \"o\"]\n\turl = https://u:SE\\\\CRET@h/\n").masked_whole,
            "a URL's user information written in a form this reader does not take apart (quoted "
            "or escaped), in remote.o.url");
  // A header with no entry keeps nothing to read it by but its line.
  EXPECT_EQ(git("[url \"https://a\\\"b@h/\"]\n").masked_whole,
            "a URL's user information written in a form this reader does not take apart (quoted "
            "or escaped), line 1");
  EXPECT_EQ(git(std::string("[user]\n\tname = a\0b\n", 17)).masked_whole, "a NUL byte");
}

TEST(CredentialLinesGit, AnEmptyOrCleanFileIsUnchanged) {
  EXPECT_EQ(git(""), (SanitizedConfig{}));
  const std::string clean = "[user]\n\tname = A\n[init]\n\tdefaultBranch = main\n";
  EXPECT_EQ(git(clean), (SanitizedConfig{clean, {}, ""}));
}

TEST(CredentialLinesGit, TheCopyParsesAsGitReadsItWithTheSameOtherEntries) {
  const std::string in =
      "[user]\n\tname = A\n[http \"https://h/\"]\n\textraHeader = X: SECRET\n"
      "[alias]\n\tco = checkout\n";
  const auto out = git(in);
  const auto scan = read_git_config(out.bytes);
  ASSERT_FALSE(scan.malformed);
  ASSERT_EQ(scan.findings.size(), 2U);
  EXPECT_EQ(scan.findings[0].key, "user.name");
  EXPECT_EQ(scan.findings[1].key, "alias.co");
  EXPECT_EQ(scan.findings[1].value, "checkout");
}

TEST(ToolchainConfigs, PrefixesOfPathEntriesVenvAndVersionsGetCopiesWhereShown) {
  SandboxPolicy policy;
  policy.home = "/home/u";
  policy.workspace = "/home/u/ws";
  policy.hide_home = true;
  policy.home_read_allowed = {
      {"/home/u/.nvm", "nvm", Access::CopyOnWrite, Origin::Toolchain},
      {"/home/u/venv", "venv", Access::CopyOnWrite, Origin::Toolchain},
  };
  const auto copies = prefix_config_copies(
      policy, {"/home/u/.nvm/versions/node/v20/bin", "/usr/bin", "/home/u/bin"},
      {{"VIRTUAL_ENV", "/home/u/venv"}}, {"/home/u/.nvm/versions/node/v18"});
  std::vector<std::string> paths;
  for (const auto& c : copies)
    paths.push_back(c.path.string() + " " + std::string(to_string(c.format)));
  EXPECT_EQ(paths, (std::vector<std::string>{
                       "/home/u/.nvm/versions/node/v20/etc/npmrc npmrc",
                       "/home/u/.nvm/versions/node/v20/lib/node_modules/npm/npmrc npmrc",
                       "/home/u/.nvm/versions/node/v20/pip.conf pip-conf",
                       "/home/u/.nvm/versions/node/v20/etc/gitconfig git-config",
                       "/home/u/venv/etc/npmrc npmrc",
                       "/home/u/venv/lib/node_modules/npm/npmrc npmrc",
                       "/home/u/venv/pip.conf pip-conf",
                       "/home/u/venv/etc/gitconfig git-config",
                       "/home/u/.nvm/versions/node/v18/etc/npmrc npmrc",
                       "/home/u/.nvm/versions/node/v18/lib/node_modules/npm/npmrc npmrc",
                       "/home/u/.nvm/versions/node/v18/pip.conf pip-conf",
                       "/home/u/.nvm/versions/node/v18/etc/gitconfig git-config",
                   }));
  // The workspace is the home: every prefix inside it is shown (~/bin's parent is the home).
  policy.hide_home = false;
  policy.workspace = "/home/u";
  policy.home_read_allowed.clear();
  const auto home_copies = prefix_config_copies(policy, {"/home/u/bin"}, {}, {});
  ASSERT_EQ(home_copies.size(), 4U);
  EXPECT_EQ(home_copies[0].path, "/home/u/etc/npmrc");
  // A project workspace: nothing outside a re-exposed directory.
  policy.hide_home = true;
  policy.workspace = "/home/u/ws";
  EXPECT_TRUE(prefix_config_copies(policy, {"/home/u/ws/.venv/bin"}, {}, {}).empty());
}

TEST(ToolchainConfigs, InstalledVersionsListsOneLevelPerManager) {
  char dir[] = "/tmp/pi-toolchain-configs.XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const fs::path home = dir;
  fs::create_directories(home / ".nvm/versions/node/v20.1.0/bin");
  fs::create_directories(home / ".nvm/versions/node/v18.0.0");
  fs::create_directories(home / "py/versions/3.12.1");
  fs::create_directories(home / ".asdf/installs/nodejs/21.0.0");
  std::ofstream(home / ".nvm/versions/node/not-a-dir") << "x";
  EXPECT_EQ(installed_versions(home, {{"PYENV_ROOT", home / "py"}}),
            (std::vector<fs::path>{
                home / ".asdf/installs/nodejs/21.0.0", home / ".nvm/versions/node/v18.0.0",
                home / ".nvm/versions/node/v20.1.0", home / "py/versions/3.12.1"}));
  fs::remove_all(home);
  EXPECT_TRUE(installed_versions("/", {}).empty());
}

TEST(GitConfigCopies, IncludesAreFollowedAsGitResolvesThem) {
  EXPECT_EQ(git_include_paths("[include]\n\tpath = ~/.gitconfig.local\n\tpath = rel/x.inc\n"
                              "[includeIf \"gitdir:~/projects/\"]\n\tpath = /home/u/shared/work.inc\n"
                              "[includeIf \"onbranch:main\"]\n\tpath = ../up.inc\n"
                              "[include]\n\tpath = ~other/x\n\tpath\n[user]\n\tpath = no\n",
                              "/home/u/.config/git/config", "/home/u"),
            (std::vector<fs::path>{"/home/u/.gitconfig.local", "/home/u/.config/git/rel/x.inc",
                                   "/home/u/shared/work.inc", "/home/u/.config/up.inc"}));
  EXPECT_TRUE(git_include_paths("[include\n\tpath = x\n", "/home/u/.gitconfig", "/home/u").empty());
}

TEST(GitConfigCopies, TheClosureFollowsIncludesOnceAndStopsAtACycle) {
  char dir[] = "/tmp/pi-git-config-copies.XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const fs::path home = dir;
  std::ofstream(home / ".gitconfig") << "[include]\n\tpath = ~/a.inc\n";
  std::ofstream(home / "a.inc") << "[include]\n\tpath = b.inc\n";
  std::ofstream(home / "b.inc") << "[include]\n\tpath = a.inc\n\tpath = /nonexistent/c\n";
  EXPECT_EQ(git_config_closure({home / ".gitconfig", home / ".config/git/config"}, home),
            (std::vector<fs::path>{home / ".gitconfig", home / ".config/git/config", home / "a.inc",
                                   home / "b.inc", "/nonexistent/c"}));
  fs::remove_all(home);
}

// Re-exposed or not, an included file of the hidden home is a copy; one in a credential or in
// the workspace (the command's own file) is not.
TEST(GitConfigCopies, FilesOfTheHomeGetCopiesExceptInACredential) {
  SandboxPolicy policy;
  policy.home = "/home/u";
  policy.workspace = "/home/u/ws";
  policy.hide_home = true;
  policy.home_read_allowed = {{"/home/u/.gitconfig", "git"}, {"/home/u/dots", "allow-read"}};
  policy.writable = {{"/home/u/ws", "workspace"}};
  policy.sanitized = {{"/home/u/.gitconfig", ConfigFormat::GitConfig}};
  const auto copies = git_config_copies(
      policy, {"/home/u/.gitconfig", "/home/u/dots/work.inc", "/home/u/hidden.inc", "/etc/x",
               "/home/u/.aws/credentials", "/home/u/.gnupg/private-keys-v1.d/k.key",
               "/home/u/ws/dotfiles.inc"});
  EXPECT_EQ(copies, (std::vector<SanitizedCopy>{{"/home/u/dots/work.inc", ConfigFormat::GitConfig},
                                                {"/home/u/hidden.inc", ConfigFormat::GitConfig}}));
  policy.hide_home = false;
  policy.workspace = "/home/u";
  EXPECT_EQ(git_config_copies(policy, {"/home/u/hidden.inc", "/home/u/.aws/credentials"}),
            (std::vector<SanitizedCopy>{{"/home/u/hidden.inc", ConfigFormat::GitConfig}}));
  policy.workspace = "/srv/ws";
  EXPECT_EQ(git_config_copies(policy, {"/home/u/hidden.inc"}), std::vector<SanitizedCopy>{});
}

// docs/security.md, "Tool configuration without its credentials": the table's prefix rows are
// prefix_config_names().
TEST(ToolchainConfigs, TheDocumentedTableHasThePrefixRows) {
  const char* source = std::getenv("PI_SANDBOX_SOURCE_DIR");
  std::ifstream file(std::string(source != nullptr ? source : ".") + "/docs/security.md");
  ASSERT_TRUE(file) << "docs/security.md not found (PI_SANDBOX_SOURCE_DIR)";
  std::vector<std::string> documented;
  bool inside = false;
  for (std::string line; std::getline(file, line);) {
    if (line == "<!-- mixed-config-names:end -->") inside = false;
    if (inside && line.starts_with("| `<prefix>/")) documented.push_back(line);
    if (line == "<!-- mixed-config-names:begin -->") inside = true;
  }
  std::vector<std::string> expected;
  for (const auto& row : prefix_config_names())
    expected.push_back("| `<prefix>/" + std::string(row.name) + "` | " + std::string(row.program) +
                       " | " + std::string(row.removed) + " |");
  EXPECT_EQ(documented, expected);
}

}  // namespace
}  // namespace pisandbox::policy
