// Secrets of the home's tool configuration (docs/security.md, "Tool configuration without its
// credentials"): git's user configuration with tokens in headers, URLs and subsection names,
// a virtual environment's pip.conf and nvm's global npmrc, each read inside a real sandbox
// (`pi-sandbox run -c`) without its secret and with its other settings, and git still working.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "harness.hpp"

namespace pisandbox::testing {
namespace {

// The user's git configuration with every kind of token the copy loses.
constexpr const char* kGitconfig =
    "[user]\n"
    "\tname = Sandbox Test\n"
    "\temail = t@example.com\n"
    "[http \"https://git.test/\"]\n"
    "\textraHeader = Authorization: Bearer SECRET-1\n"
    "[url \"https://u:SECRET-2@git.test/\"]\n"
    "\tinsteadOf = https://git.test/\n"
    "[http]\n"
    "\tproxy = http://u:SECRET-3@proxy.test:3128\n"
    "[sendemail]\n"
    "\tsmtpPass = SECRET-4\n"
    "[github]\n"
    "\ttoken = SECRET-5\n"
    "[alias]\n"
    "\twho = log -1 --format=%an\n"
    "[url \"https://mirror.test/\"]\n"
    "\tinsteadOf = https://upstream.test/\n"
    "[init]\n"
    "\tdefaultBranch = trunk\n";

constexpr const char* kGitconfigCopy =
    "[user]\n"
    "\tname = Sandbox Test\n"
    "\temail = t@example.com\n"
    "[http \"https://git.test/\"]\n"
    "[url \"https://git.test/\"]\n"
    "\tinsteadOf = https://git.test/\n"
    "[http]\n"
    "\tproxy = http://proxy.test:3128\n"
    "[sendemail]\n"
    "[github]\n"
    "[alias]\n"
    "\twho = log -1 --format=%an\n"
    "[url \"https://mirror.test/\"]\n"
    "\tinsteadOf = https://upstream.test/\n"
    "[init]\n"
    "\tdefaultBranch = trunk\n";

// git inside: the secrets gone from every key, and the rest working (a commit with user.name, an
// alias, a url.insteadOf without credentials, init.defaultBranch).
constexpr const char* kGitCommands =
    "cat ~/.gitconfig; "
    "git config --get-all http.extraHeader; echo \"extraHeader=$?\"; "
    "git config --get-regexp '.*' | grep -c SECRET; "
    "git init -q r && cd r && git commit -q --allow-empty -m one && git who && "
    "git branch --show-current && "
    "git ls-remote --get-url https://upstream.test/x && git ls-remote --get-url https://git.test/x";

constexpr const char* kGitOutput =
    "extraHeader=1\n"
    "0\n"
    "Sandbox Test\n"
    "trunk\n"
    "https://mirror.test/x\n"
    "https://git.test/x\n";

TEST(HomeSecrets, GitconfigIsACopyWithoutItsTokensAndGitStillWorks) {
  Scratch s;
  write_file(s.home / ".gitconfig", kGitconfig);
  const RunResult r = s.run(kGitCommands);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string(kGitconfigCopy) + kGitOutput) << r.err;
  EXPECT_EQ(r.err.find("SECRET"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(s.home / ".gitconfig"), kGitconfig);
}

// The workspace is the home: ~/.gitconfig is in it, and still a copy.
// A dotfiles repository: ~/.gitconfig and ~/.config/git/config are symlinks. Each is
// re-exposed at its own path from where it leads, and its copy stands there too; git works.
TEST(HomeSecrets, ASymlinkedGitconfigIsACopyWhereTheCommandReadsIt) {
  Scratch s;
  write_file(s.home / "dotfiles/gitconfig", kGitconfig);
  write_file(s.home / "dotfiles/git/config", "[http]\n\textraHeader = X: SECRET-6\n");
  fs::create_directories(s.home / ".config");
  fs::remove(s.home / ".gitconfig");
  fs::remove_all(s.home / ".config/git");
  fs::create_symlink("dotfiles/gitconfig", s.home / ".gitconfig");
  fs::create_symlink("../dotfiles/git", s.home / ".config/git");
  const RunResult r = s.run(std::string(kGitCommands) + "; cat ~/.config/git/config");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string(kGitconfigCopy) + kGitOutput + "[http]\n") << r.err;
  EXPECT_EQ(r.err.find("SECRET"), std::string::npos) << r.err;
}

TEST(HomeSecrets, GitconfigIsACopyWhenTheWorkspaceIsTheHome) {
  Scratch s;
  write_file(s.home / ".gitconfig", kGitconfig);
  write_file(s.home / ".config/git/config",
             "[github]\n\toauthtoken = SECRET-6\n[core]\n\tautocrlf = input\n");
  const RunResult r = s.run("cat ~/.gitconfig ~/.config/git/config", {}, s.home);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string(kGitconfigCopy) + "[github]\n[core]\n\tautocrlf = input\n");
}

// A file git would refuse is shown empty, with one note; git inside then says nothing of it.
TEST(HomeSecrets, AGitconfigNotTakenApartIsShownEmpty) {
  Scratch s;
  write_file(s.home / ".gitconfig", "[url \"https://u:SEC\\\"RET@git.test/\"]\n\tinsteadOf = x\n");
  const RunResult r = s.run("wc -c < ~/.gitconfig");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0\n");
  EXPECT_NE(r.err.find("pi-sandbox: note: " + (s.home / ".gitconfig").string() +
                       " is shown empty in this sandbox (a URL's user information written in a "
                       "form this reader does not take apart (quoted or escaped), in "
                       "url.https://u:SEC\"RET@git.test/.insteadof)\n"),
            std::string::npos)
      << r.err;
}

// Files that ~/.gitconfig includes are git configuration too: copies where a command reads
// them (here the workspace is the home), followed through includes of includes.
TEST(HomeSecrets, FilesThatGitconfigIncludesAreCopiesToo) {
  Scratch s;
  write_file(s.home / ".gitconfig",
             "[user]\n\tname = Sandbox Test\n[include]\n\tpath = ~/.config/git/work.inc\n");
  write_file(s.home / ".config/git/work.inc",
             "[include]\n\tpath = token.inc\n[core]\n\tabbrev = 9\n");
  write_file(s.home / ".config/git/token.inc",
             "[http]\n\textraHeader = Authorization: Basic SECRET-7\n\tpostBuffer = 1048576\n");
  const RunResult r = s.run(
      "cat ~/.config/git/work.inc ~/.config/git/token.inc; git config --get core.abbrev; "
      "git config --get http.postBuffer; git config --get-all http.extraHeader; echo $?",
      {}, s.home);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "[include]\n\tpath = token.inc\n[core]\n\tabbrev = 9\n"
            "[http]\n\tpostBuffer = 1048576\n9\n1048576\n1\n");
}

// An included file that lies in the hidden home, not re-exposed, is the user's git
// configuration as ~/.gitconfig is: a copy without its token, so its alias works inside. One
// that an include names in a credential (~/.aws/credentials, directly or through a symlink)
// stays hidden, and a FIFO is skipped.
TEST(HomeSecrets, AnIncludedFileInTheHiddenHomeIsACopyToo) {
  Scratch s;
  write_file(s.home / ".gitconfig",
             "[user]\n\tname = Sandbox Test\n[include]\n\tpath = ~/.gitconfig.inc\n"
             "[include]\n\tpath = ~/.aws/credentials\n[include]\n\tpath = ~/.cred.inc\n"
             "[include]\n\tpath = ~/.fifo.inc\n");
  write_file(s.home / ".gitconfig.inc",
             "[alias]\n\tincl = !echo included-alias\n[github]\n\ttoken = GHSECRET-9\n");
  write_file(s.home / ".aws/credentials", "[default]\n\taws_access_key_id = AKIATEST\n");
  fs::create_symlink(".aws/credentials", s.home / ".cred.inc");
  ASSERT_EQ(::mkfifo((s.home / ".fifo.inc").c_str(), 0600), 0);
  const RunResult r = s.run(
      "git incl; cat ~/.gitconfig.inc; git config --get github.token; echo $?; "
      "git config --get default.aws_access_key_id; echo $?; test -e ~/.cred.inc; echo $?; "
      "test -e ~/.fifo.inc; echo $?");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "included-alias\n[alias]\n\tincl = !echo included-alias\n[github]\n1\n1\n1\n1\n");
  const RunResult policy =
      run_process({sandbox_binary(), "policy", "--cwd", s.ws.string()}, s.env());
  EXPECT_NE(policy.out.find("sanitized copy (read-only, without its credentials): " +
                            (s.home / ".gitconfig.inc").string() + "\n    line 4: github.token"),
            std::string::npos)
      << policy.out;
}

/// A virtual environment in the home, activated, with a pip.conf holding a token.
void plant_venv(const Scratch& s) {
  write_file(s.home / "venv/bin/activate", "\n");
  write_file(s.home / "venv/pyvenv.cfg", "home = /usr/bin\n");
  write_file(s.home / "venv/pip.conf",
             "[global]\nindex-url = https://u:PIPSECRET@pypi.corp/simple\ntimeout = 60\n");
}

/// nvm's global npmrc in two installed versions, one of them on $PATH.
void plant_nvm(const Scratch& s) {
  for (const char* v : {"v20.0.0", "v18.0.0"}) {
    const fs::path prefix = s.home / ".nvm/versions/node" / v;
    write_file(prefix / "bin/.keep", "");
    write_file(prefix / "etc/npmrc",
               "registry=https://npm.corp/\n//registry.npmjs.org/:_authToken=NPMSECRET\n"
               "strict-ssl=false\n");
  }
}

std::map<std::string, std::string> toolchain_env(const Scratch& s) {
  auto env = s.env();
  env["VIRTUAL_ENV"] = (s.home / "venv").string();
  env["PATH"] = (s.home / "venv/bin").string() + ":" +
                (s.home / ".nvm/versions/node/v20.0.0/bin").string() + ":/usr/bin:/bin";
  return env;
}

TEST(HomeSecrets, PrefixConfigurationOfVenvAndNvmIsACopyWithoutItsTokens) {
  Scratch s;
  plant_venv(s);
  plant_nvm(s);
  const RunResult r =
      run_process({sandbox_binary(), "run", "--cwd", s.ws.string(), "-c",
                   "cat \"$VIRTUAL_ENV/pip.conf\" ~/.nvm/versions/node/v20.0.0/etc/npmrc "
                   "~/.nvm/versions/node/v18.0.0/etc/npmrc"},
                  toolchain_env(s));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "[global]\nindex-url = https://pypi.corp/simple\ntimeout = 60\n"
            "registry=https://npm.corp/\nstrict-ssl=false\n"
            "registry=https://npm.corp/\nstrict-ssl=false\n");
}

TEST(HomeSecrets, PrefixConfigurationIsACopyWhenTheWorkspaceIsTheHome) {
  Scratch s;
  plant_venv(s);
  plant_nvm(s);
  const RunResult r = run_process({sandbox_binary(), "run", "--cwd", s.home.string(), "-c",
                                   "cat venv/pip.conf .nvm/versions/node/v18.0.0/etc/npmrc"},
                                  toolchain_env(s));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "[global]\nindex-url = https://pypi.corp/simple\ntimeout = 60\n"
            "registry=https://npm.corp/\nstrict-ssl=false\n");
}

// `pi-sandbox policy` lists each copy with what it lacks, by line and key, never a value.
TEST(HomeSecrets, PolicyListsEachCopyWithWhatItLacks) {
  Scratch s;
  write_file(s.home / ".gitconfig", kGitconfig);
  plant_venv(s);
  plant_nvm(s);
  const RunResult r =
      run_process({sandbox_binary(), "policy", "--cwd", s.ws.string()}, toolchain_env(s));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string home = s.home.string();
  for (const std::string& expected :
       {"  sanitized copy (read-only, without its credentials): " + home +
            "/.gitconfig\n"
            "    line 5: http.https://git.test/.extraheader removed\n"
            "    line 6: user:password of a URL removed\n"
            "    line 9: user:password of a URL removed\n"
            "    line 11: sendemail.smtppass removed\n"
            "    line 13: github.token removed\n",
        "  sanitized copy (read-only, without its credentials): " + home +
            "/venv/pip.conf\n"
            "    line 2: index-url (user:password of a URL) removed\n",
        "  sanitized copy (read-only, without its credentials): " + home +
            "/.nvm/versions/node/v18.0.0/etc/npmrc\n"
            "    line 2: //registry.npmjs.org/:_authToken removed\n",
        "  sanitized copy (read-only, without its credentials): " + home +
            "/.nvm/versions/node/v20.0.0/etc/npmrc\n"
            "    line 2: //registry.npmjs.org/:_authToken removed\n"})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n---\n" << r.out;
  for (const char* secret : {"SECRET-", "PIPSECRET", "NPMSECRET"})
    EXPECT_EQ(r.out.find(secret), std::string::npos) << secret;
}

}  // namespace
}  // namespace pisandbox::testing
