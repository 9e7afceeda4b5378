// session/host_programs.hpp against real files: which file a host-IPC run's first word names,
// and which reviewers are refused for a program, a file or a `#!` interpreter in a writable
// place (docs/security.md, "What pi-sandbox starts on the host").
#include "session/host_programs.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;
using namespace pisandbox::session;
using pisandbox::policy::WritableArea;

class HostPrograms : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/var/tmp/host-programs.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = fs::canonical(pattern);
    for (const char* dir : {"ws/.venv/bin", "bin", "extra"}) fs::create_directories(root_ / dir);
    areas_ = {{root_ / "ws", true}, {root_ / "extra", true}};
    env_ = {"PATH=" + (root_ / "bin").string() + ":/usr/bin:/bin"};
  }
  void TearDown() override { fs::remove_all(root_); }

  /// Writes an executable `path` holding `text`; returns its path as a string.
  std::string script(const fs::path& path, const std::string& text) const {
    std::ofstream(path) << text;
    ::chmod(path.c_str(), 0755);
    return path.string();
  }
  /// The error of check_reviewer_program(), or "" when it passes.
  std::string refusal(const std::vector<std::string>& reviewer) const {
    auto checked = check_reviewer_program(reviewer, areas_, env_);
    return checked ? "" : checked.error().message;
  }

  fs::path root_;
  std::vector<WritableArea> areas_;
  std::vector<std::string> env_;
};

TEST_F(HostPrograms, TheFirstWordOfAHostRunIsFoundThroughPath) {
  const std::string tool = script(root_ / "bin" / "tool", "#!/bin/sh\n");
  EXPECT_EQ(host_run_program("tool ls", env_), tool);
  EXPECT_EQ(host_run_program("  tool", env_), tool);
  EXPECT_EQ(host_run_program("tool;ls", env_), tool);
  EXPECT_EQ(host_run_program("tool|cat", env_), tool);
  EXPECT_EQ(host_run_program("/usr/bin/tmux -V", env_), "/usr/bin/tmux");
  // Not a file PATH gives: a builtin, a keyword, an assignment, quoting, a relative path, a
  // name no entry holds, a directory.
  for (const char* command :
       {"echo hi", "cd /", "if true; then tool; fi", "A=1 tool", "'tool'", "\"tool\"", "t\\ool",
        "$TOOL", "./tool", "bin/tool", "no-such-tool", "", "   ", "{ tool; }", "(tool)"})
    EXPECT_EQ(host_run_program(command, env_), std::nullopt) << command;
  fs::create_directories(root_ / "bin" / "adir");
  EXPECT_EQ(host_run_program("adir", env_), std::nullopt);
}

TEST_F(HostPrograms, FindProgramNeedsAnExecutableRegularFile) {
  std::ofstream(root_ / "bin" / "plain") << "x";
  ::chmod((root_ / "bin" / "plain").c_str(), 0644);
  EXPECT_EQ(find_program("plain", env_), std::nullopt);
  EXPECT_EQ(find_program("sh", env_), "/usr/bin/sh");
}

TEST_F(HostPrograms, AReviewerOutsideWithAHostInterpreterPasses) {
  EXPECT_EQ(refusal({script(root_ / "r1", "#!/bin/sh\n")}), "");
  EXPECT_EQ(refusal({script(root_ / "r2", "#!/usr/bin/env python3\n")}), "");
  EXPECT_EQ(refusal({script(root_ / "r3", "#!/usr/bin/env -S python3 -u\n")}), "");
  EXPECT_EQ(refusal({script(root_ / "r4", "no shebang\n")}), "");
  EXPECT_EQ(refusal({"/bin/sh", script(root_ / "r5", "echo\n")}), "");
  EXPECT_EQ(refusal({}), "");
}

TEST_F(HostPrograms, AProgramOrFileInAnyWritablePlaceIsRefused) {
  const std::string in_extra = script(root_ / "extra" / "r", "#!/bin/sh\n");
  EXPECT_EQ(refusal({in_extra}), "refusing the reviewer " + in_extra + ": its program " + in_extra +
                                     " lies in " + (root_ / "extra").string() +
                                     ", where sandboxed commands can write");
  EXPECT_EQ(refusal({"/bin/sh", (root_ / "ws" / "missing.sh").string()}),
            "refusing the reviewer /bin/sh: its argument " +
                (root_ / "ws" / "missing.sh").string() + " lies in " + (root_ / "ws").string() +
                ", where sandboxed commands can write");
}

TEST_F(HostPrograms, AnInterpreterInAWritablePlaceIsRefusedAtEveryLevel) {
  const std::string venv_python = (root_ / "ws" / ".venv" / "bin" / "python3").string();
  const auto refused_for = [&](const std::string& reviewer, const std::string& interpreter,
                               const fs::path& area) {
    return "refusing the reviewer " + reviewer + ": its interpreter " + interpreter + " lies in " +
           area.string() + ", where sandboxed commands can write";
  };
  // A `#!` line naming it; `env` with an absolute name; `env -S`; options and assignments
  // before the name.
  for (const std::string& line :
       {"#!" + venv_python, "#! " + venv_python + " -u", "#!/usr/bin/env " + venv_python,
        "#!/usr/bin/env -S " + venv_python + " -u", "#!/usr/bin/env -S -i A=1 " + venv_python,
        "#!/usr/bin/env --split-string=" + venv_python}) {
    const std::string r = script(root_ / "r", line + "\n");
    EXPECT_EQ(refusal({r}), refused_for(r, venv_python, root_ / "ws")) << line;
  }
  // `env NAME` found through a PATH that holds a writable directory (the caller's own check
  // runs on the cleaned PATH; this one holds the directory on purpose).
  env_ = {"PATH=" + (root_ / "extra").string() + ":/usr/bin"};
  const std::string extra_python = script(root_ / "extra" / "python3", "#!/bin/sh\n");
  const std::string r = script(root_ / "r-env", "#!/usr/bin/env python3\n");
  EXPECT_EQ(refusal({r}), refused_for(r, extra_python, root_ / "extra"));
  // A host interpreter that is itself a script whose interpreter is writable: the next level.
  const std::string wrapper = script(root_ / "bin" / "wrapper", "#!" + extra_python + "\n");
  const std::string r2 = script(root_ / "r-nested", "#!" + wrapper + "\n");
  EXPECT_EQ(refusal({r2}), refused_for(r2, extra_python, root_ / "extra"));
  // A host interpreter that is a link into a writable place.
  fs::create_symlink(root_ / "ws" / "later", root_ / "bin" / "linked");
  const std::string r3 =
      script(root_ / "r-linked", "#!" + (root_ / "bin" / "linked").string() + "\n");
  EXPECT_EQ(refusal({r3}), refused_for(r3, (root_ / "ws" / "later").string(), root_ / "ws"));
}

TEST_F(HostPrograms, AnEnvNameTheCleanedPathDoesNotHoldIsRefused) {
  const std::string r = script(root_ / "r", "#!/usr/bin/env -S no-such-interpreter -x\n");
  EXPECT_EQ(refusal({r}), "refusing the reviewer " + r +
                              ": its interpreter no-such-interpreter (`#!/usr/bin/env -S "
                              "no-such-interpreter -x`) is not found in the cleaned $PATH");
}

TEST_F(HostPrograms, TheAreasOfAPolicy) {
  pisandbox::policy::SandboxPolicy policy;
  policy.workspace = "/big";
  policy.home = "/big/home";
  policy.writable = {{"/big", "", pisandbox::policy::Access::ReadWrite},
                     {"/srv/cache", "", pisandbox::policy::Access::ReadWrite}};
  EXPECT_EQ(writable_areas(policy),
            (std::vector<WritableArea>{{"/big", true}, {"/srv/cache", true}}));
  policy.home_read_only = true;
  policy.home_writable_entries = {"/big/home/src"};
  EXPECT_EQ(
      writable_areas(policy),
      (std::vector<WritableArea>{
          {"/big", true}, {"/srv/cache", true}, {"/big/home", false}, {"/big/home/src", true}}));
}

}  // namespace
