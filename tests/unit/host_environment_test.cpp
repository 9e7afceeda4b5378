// The environment of a program pi-sandbox starts on the host (policy/host_environment.hpp):
// every row of the table, the search list, the writable areas and the worker's own start.
#include "policy/host_environment.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "policy/environment.hpp"

namespace {

using namespace pisandbox::policy;
namespace fs = std::filesystem;

// The workspace and a configured writable directory; the home bound read-only over a
// workspace that holds it, with one non-dot entry writable again.
const std::vector<WritableArea> kAreas = {{"/home/u/ws", true},
                                          {"/srv/shared", true},
                                          {"/big", true},
                                          {"/big/home", false},
                                          {"/big/home/src", true}};

std::vector<std::string> one(const std::string& entry) {
  return {entry};
}

// A caller's environment with a PATH, so that no fallback PATH is appended.
std::vector<std::string> with_path(const std::string& entry) {
  return {"PATH=/usr/bin", entry};
}

bool passed(const std::string& entry) {
  return host_environment(with_path(entry), kAreas).env == with_path(entry);
}

TEST(HostEnvironment, WritableAreaDeepestDecides) {
  EXPECT_TRUE(in_writable_area("/home/u/ws", kAreas));
  EXPECT_TRUE(in_writable_area("/home/u/ws/.venv/bin", kAreas));
  EXPECT_TRUE(in_writable_area("/home/u/ws/a/../b", kAreas));
  EXPECT_FALSE(in_writable_area("/home/u/ws/../bin", kAreas));
  EXPECT_FALSE(in_writable_area("/home/u/wsx", kAreas));
  EXPECT_FALSE(in_writable_area("/home/u", kAreas));
  EXPECT_TRUE(in_writable_area("/srv/shared/x", kAreas));
  EXPECT_TRUE(in_writable_area("/big/tmp", kAreas));
  EXPECT_FALSE(in_writable_area("/big/home/.local/bin", kAreas));
  EXPECT_TRUE(in_writable_area("/big/home/src/bin", kAreas));
  EXPECT_FALSE(in_writable_area("/usr/bin", {}));
}

TEST(HostEnvironment, WorkspaceThatIsTheHomeIsReadOnlyButForItsWritableEntries) {
  // writable_areas() of a workspace that is the home: the workspace, then the home read-only
  // at the same path, then its non-dot entries writable again.
  const std::vector<WritableArea> areas = {
      {"/home/u", true}, {"/home/u", false}, {"/home/u/src", true}};
  EXPECT_FALSE(in_writable_area("/home/u/.gitconfig", areas));
  EXPECT_FALSE(in_writable_area("/home/u/.config/git/config", areas));
  EXPECT_FALSE(in_writable_area("/home/u", areas));
  EXPECT_TRUE(in_writable_area("/home/u/src/dotfiles/git.inc", areas));
}

TEST(HostEnvironment, WritableAreaThroughTheResolver) {
  const std::map<fs::path, fs::path> links = {{"/opt/tool/bin", "/home/u/ws/bin"}};
  const HostResolver resolve = [&](const fs::path& p) {
    const auto link = links.find(p);
    return link == links.end() ? p : link->second;
  };
  EXPECT_TRUE(in_writable_area("/opt/tool/bin", kAreas, resolve));
  EXPECT_FALSE(in_writable_area("/opt/tool/bin", kAreas));
  const auto out = host_environment(one("PATH=/opt/tool/bin:/usr/bin"), kAreas, resolve);
  EXPECT_EQ(out.env, one("PATH=/usr/bin"));
  EXPECT_EQ(out.dropped, (std::vector<HostVariableDrop>{{"PATH", "/opt/tool/bin", true}}));
}

TEST(HostEnvironment, PathDropsRelativeEmptyAndWritableEntries) {
  const auto out = host_environment(
      one("PATH=/home/u/ws/.venv/bin:./node_modules/.bin::/usr/local/bin:node_modules/.bin:"
          "/srv/shared/bin:/usr/bin:/big/home/.local/bin:/big/home/src/bin:."),
      kAreas);
  EXPECT_EQ(out.env, one("PATH=/usr/local/bin:/usr/bin:/big/home/.local/bin"));
  EXPECT_EQ(out.dropped, (std::vector<HostVariableDrop>{{"PATH", "/home/u/ws/.venv/bin", true},
                                                        {"PATH", "./node_modules/.bin", true},
                                                        {"PATH", "", true},
                                                        {"PATH", "node_modules/.bin", true},
                                                        {"PATH", "/srv/shared/bin", true},
                                                        {"PATH", "/big/home/src/bin", true},
                                                        {"PATH", ".", true}}));
}

TEST(HostEnvironment, PathWithNothingLeftGetsTheFallback) {
  // bash without PATH searches `...:/bin:/sbin:.`: the workspace, for the host-IPC run.
  const auto out = host_environment(one("PATH=/home/u/ws/bin:"), kAreas);
  EXPECT_EQ(out.env, one("PATH=/bin:/usr/bin"));
  EXPECT_EQ(out.dropped, (std::vector<HostVariableDrop>{{"PATH", "/home/u/ws/bin", false},
                                                        {"PATH", "", false}}));
  EXPECT_EQ(host_environment(one("PATH"), kAreas).env, one("PATH=/bin:/usr/bin"));
  EXPECT_EQ(host_environment(one("A=1"), kAreas).env,
            (std::vector<std::string>{"A=1", "PATH=/bin:/usr/bin"}));
  // The fallback itself goes through the areas.
  const std::vector<WritableArea> usr = {{"/usr", true}};
  EXPECT_EQ(host_environment(one("A=1"), usr).env, (std::vector<std::string>{"A=1", "PATH=/bin"}));
}

TEST(HostEnvironment, DroppedSearchEntriesMatchTheEnvironment) {
  EXPECT_EQ(dropped_search_entries("/home/u/ws/.venv/bin::/usr/bin:bin", kAreas),
            (std::vector<std::string>{"/home/u/ws/.venv/bin", "", "bin"}));
  EXPECT_EQ(dropped_search_entries("/usr/bin:/bin", kAreas), std::vector<std::string>{});
}

TEST(HostEnvironment, CdpathIsASearchList) {
  EXPECT_EQ(host_environment(with_path("CDPATH=/home/u/ws:/srv/x:"), kAreas).env,
            with_path("CDPATH=/srv/x"));
  EXPECT_EQ(host_environment(with_path("CDPATH=/home/u/ws"), kAreas).env, one("PATH=/usr/bin"));
}

TEST(HostEnvironment, LoaderVariablesPassOnlyOutsideEveryWritableArea) {
  for (const char* name : {"LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "ld_preload"}) {
    const std::string n = name;
    EXPECT_TRUE(passed(n + "=/usr/lib/libfaketime.so")) << name;
    EXPECT_FALSE(passed(n + "=/home/u/ws/evil.so")) << name;
    EXPECT_FALSE(passed(n + "=evil.so")) << name;
    EXPECT_FALSE(passed(n + "=")) << name;
    EXPECT_FALSE(passed(n + "=/usr/lib::/usr/lib64")) << name;  // an empty entry: the cwd
    EXPECT_FALSE(passed(n + "=/usr/lib:/srv/shared/lib")) << name;
  }
  // ld.so(8): LD_PRELOAD is separated by spaces as well as colons.
  EXPECT_TRUE(passed("LD_PRELOAD=/usr/lib/a.so:/usr/lib/b.so"));
  EXPECT_FALSE(passed("LD_PRELOAD=/usr/lib/a.so /home/u/ws/b.so"));
  EXPECT_FALSE(passed("LD_PRELOAD=/usr/lib/a.so\t/home/u/ws/b.so"));
  // Any other loader variable: a value that is no absolute path is not passed.
  EXPECT_FALSE(passed("LD_BIND_NOW=1"));
  const auto out = host_environment(with_path("LD_PRELOAD=/home/u/ws/evil.so"), kAreas);
  EXPECT_EQ(out.dropped,
            (std::vector<HostVariableDrop>{{"LD_PRELOAD", "/home/u/ws/evil.so", false}}));
}

TEST(HostEnvironment, EveryPathsOutsideRow) {
  for (const auto& row : host_variables()) {
    if (row.rule != HostVariableRule::PathsOutside) continue;
    std::string name(row.pattern);
    if (name.back() == '*') name.back() = 'X';
    EXPECT_TRUE(passed(name + "=/etc/x:/usr/share/y")) << name;
    EXPECT_FALSE(passed(name + "=/home/u/ws/x")) << name;
    EXPECT_FALSE(passed(name + "=/etc/x:/home/u/ws/y")) << name;
    EXPECT_FALSE(passed(name + "=x")) << name;
    EXPECT_FALSE(passed(name + "=")) << name;
    // bash expands BASH_ENV and ENV before reading them: no expansion passes.
    EXPECT_FALSE(passed(name + "=/$(touch /tmp/x)")) << name;
    EXPECT_FALSE(passed(name + "=/`id`")) << name;
  }
}

TEST(HostEnvironment, ShellStartFilesAndFunctions) {
  EXPECT_TRUE(passed("BASH_ENV=/home/u/.bash_env"));
  EXPECT_FALSE(passed("BASH_ENV=/home/u/ws/.env.sh"));
  EXPECT_FALSE(passed("BASH_ENV=.env.sh"));
  EXPECT_FALSE(passed("ENV=/home/u/ws/.shrc"));
  for (const char* entry : {"BASH_FUNC_tmux%%=() {  /home/u/ws/x; }",
                            "BASH_FUNC_tmux()=() { :; }",
                            "BASH_FUNC_a%%=() { echo; }",
                            "bash_func_x%%=() { :; }",
                            "PROMPT_COMMAND=echo",
                            "SHELLOPTS=xtrace",
                            "BASHOPTS=extglob",
                            "PS4=$(touch x)",
                            "GLOBIGNORE=*",
                            "IFS=/",
                            "NODE_OPTIONS=--max-old-space-size=4096",
                            "NODE_OPTIONS=--require ./x.js",
                            "PERL5OPT=-Mstrict",
                            "RUBYOPT=-rx",
                            "JAVA_TOOL_OPTIONS=-Xmx1g",
                            "JDK_JAVA_OPTIONS=-Xmx1g",
                            "_JAVA_OPTIONS=-Xmx1g",
                            "GIT_CONFIG_COUNT=1",
                            "GIT_CONFIG_KEY_0=core.fsmonitor",
                            "GIT_CONFIG_VALUE_0=./x",
                            "GIT_CONFIG_PARAMETERS='core.fsmonitor'='x'"}) {
    const auto out = host_environment(with_path(entry), kAreas);
    EXPECT_EQ(out.env, one("PATH=/usr/bin")) << entry;
    ASSERT_EQ(out.dropped.size(), 1U) << entry;
    EXPECT_EQ(out.dropped[0].entry, "") << entry;
  }
}

TEST(HostEnvironment, EveryNeverRowDropsAnyValue) {
  for (const auto& row : host_variables()) {
    if (row.rule != HostVariableRule::Never) continue;
    std::string name(row.pattern);
    if (name.back() == '*') name.back() = 'X';
    EXPECT_FALSE(passed(name + "=/usr/bin/true")) << name;
    EXPECT_FALSE(passed(name + "=")) << name;
  }
}

TEST(HostEnvironment, GitConfigFilesAreCheckedNotDropped) {
  EXPECT_TRUE(passed("GIT_CONFIG_GLOBAL=/home/u/.gitconfig-work"));
  EXPECT_FALSE(passed("GIT_CONFIG_GLOBAL=/home/u/ws/.gitconfig"));
  EXPECT_TRUE(passed("GIT_CONFIG_SYSTEM=/etc/gitconfig"));
  EXPECT_FALSE(passed("GIT_CONFIG_SYSTEM=/srv/shared/gitconfig"));
  EXPECT_TRUE(passed("GIT_EXEC_PATH=/usr/lib/git-core"));
  EXPECT_FALSE(passed("GIT_EXEC_PATH=/home/u/ws/git-core"));
  EXPECT_FALSE(passed("GIT_TEMPLATE_DIR=/home/u/ws/tpl"));
}

TEST(HostEnvironment, EveryProgramRow) {
  for (const auto& row : host_variables()) {
    if (row.rule != HostVariableRule::Program) continue;
    const std::string name(row.pattern);
    EXPECT_TRUE(passed(name + "=vim")) << name;
    EXPECT_TRUE(passed(name + "=ssh -o IdentitiesOnly=yes")) << name;
    EXPECT_TRUE(passed(name + "=/usr/bin/less -R")) << name;
    EXPECT_TRUE(passed(name + "=  /usr/bin/less")) << name;
    EXPECT_TRUE(passed(name + "=")) << name;
    EXPECT_FALSE(passed(name + "=./ask.sh")) << name;
    EXPECT_FALSE(passed(name + "=bin/ask.sh")) << name;
    EXPECT_FALSE(passed(name + "=/home/u/ws/ask.sh --x")) << name;
    EXPECT_FALSE(passed(name + "=$(touch /tmp/x)")) << name;
    EXPECT_FALSE(passed(name + "=`id`")) << name;
  }
}

TEST(HostEnvironment, EverythingElseAndCredentialsPassUnchanged) {
  const std::vector<std::string> caller = {"HOME=/home/u/ws",
                                           "SSH_AUTH_SOCK=/home/u/ws/agent.sock",
                                           "GITHUB_TOKEN=secret",
                                           "TERM=xterm",
                                           "LANG=C.UTF-8",
                                           "NAME_WITHOUT_VALUE",
                                           "TMUX=/tmp/tmux-0/default,1,0",
                                           "PATH=/usr/bin"};
  const auto out = host_environment(caller, kAreas);
  EXPECT_EQ(out.env, caller);
  EXPECT_EQ(out.dropped, std::vector<HostVariableDrop>{});
}

TEST(HostEnvironment, KeepsTheCallersOrder) {
  const std::vector<std::string> caller = {"A=1", "PATH=./x:/usr/bin", "BASH_ENV=/home/u/ws/e",
                                           "B=2", "LD_PRELOAD=/usr/lib/a.so"};
  const auto out = host_environment(caller, kAreas);
  EXPECT_EQ(out.env,
            (std::vector<std::string>{"A=1", "PATH=/usr/bin", "B=2", "LD_PRELOAD=/usr/lib/a.so"}));
  EXPECT_EQ(out.dropped, (std::vector<HostVariableDrop>{{"PATH", "./x", true},
                                                        {"BASH_ENV", "/home/u/ws/e", false}}));
}

TEST(HostEnvironment, NoAreasStillDropsRelativeEntriesAndCode) {
  const auto out = host_environment(
      std::vector<std::string>{"PATH=.:/usr/bin", "BASH_FUNC_x%%=() { :; }", "LD_PRELOAD=/a.so"},
      {});
  EXPECT_EQ(out.env, (std::vector<std::string>{"PATH=/usr/bin", "LD_PRELOAD=/a.so"}));
}

TEST(HostEnvironment, TheTableHasNoShadowedRow) {
  // A row after a wider pattern that matches its name would never decide.
  std::set<std::string_view> seen;
  const auto rows = host_variables();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_TRUE(seen.insert(rows[i].pattern).second) << rows[i].pattern;
    EXPECT_FALSE(rows[i].why.empty()) << rows[i].pattern;
    if (rows[i].pattern.find('*') != std::string_view::npos) continue;
    for (std::size_t j = 0; j < i; ++j) {
      EXPECT_FALSE(matches_variable(rows[j].pattern, rows[i].pattern))
          << rows[i].pattern << " is shadowed by " << rows[j].pattern;
    }
  }
}

TEST(LoaderFreeEnvironment, DropsTheLoadersVariablesOnly) {
  const std::vector<std::string> env = {"PATH=/usr/bin",    "LD_PRELOAD=/usr/lib/a.so",
                                        "LD_LIBRARY_PATH=", "GCONV_PATH=/x",
                                        "LOCPATH=/y",       "BASH_ENV=/z",
                                        "HOME=/home/u"};
  EXPECT_EQ(loader_free_environment(env),
            (std::vector<std::string>{"PATH=/usr/bin", "BASH_ENV=/z", "HOME=/home/u"}));
}

TEST(SearchPath, FirstExecutableInOrder) {
  const std::set<std::string> files = {"/usr/local/bin/tmux", "/usr/bin/tmux", "/usr/bin/sh"};
  const auto exists = [&](const std::string& p) { return files.contains(p); };
  EXPECT_EQ(search_path("tmux", one("PATH=/usr/local/bin:/usr/bin"), exists),
            "/usr/local/bin/tmux");
  EXPECT_EQ(search_path("tmux", one("PATH=/usr/local/bin/:/usr/bin"), exists),
            "/usr/local/bin/tmux");
  EXPECT_EQ(search_path("sh", one("PATH=/usr/local/bin:/usr/bin"), exists), "/usr/bin/sh");
  EXPECT_EQ(search_path("tmux", one("PATH=.:usr/bin:"), exists), "");
  EXPECT_EQ(search_path("tmux", one("HOME=/"), exists), "");
  EXPECT_EQ(search_path("bin/tmux", one("PATH=/usr"), exists), "");
  EXPECT_EQ(search_path("", one("PATH=/usr/bin"), exists), "");
}

}  // namespace

namespace {

using pisandbox::policy::host_variables;

// docs/security.md, "What pi-sandbox starts on the host", shows the same table: one row per
// pattern, in the same order.
TEST(HostEnvironmentDocs, SecurityMdHasEveryRowInOrder) {
  const char* source = std::getenv("PI_SANDBOX_SOURCE_DIR");
  std::ifstream file(std::string(source != nullptr ? source : ".") + "/docs/security.md");
  ASSERT_TRUE(file) << "run from the repository or set PI_SANDBOX_SOURCE_DIR";
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  const auto section = doc.find("## What pi-sandbox starts on the host");
  ASSERT_NE(section, std::string::npos);
  std::size_t at = section;
  for (const auto& row : host_variables()) {
    const auto found = doc.find("| `" + std::string(row.pattern) + "` |", at);
    ASSERT_NE(found, std::string::npos) << row.pattern << " is missing or out of order";
    at = found;
  }
}

}  // namespace
