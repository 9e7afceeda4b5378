// The local repositories a git command reads as its remote (src/policy/git_remotes.hpp;
// docs/security.md, "Remotes in the hidden home").
#include "policy/git_remotes.hpp"

#include <gtest/gtest.h>

namespace pisandbox::policy {
namespace {

TEST(LocalRemotePath, PathsFileUrlsAndTheHomeNotSchemesOrHosts) {
  EXPECT_EQ(local_remote_path("/home/u/repos/x.git", "/home/u", "/ws"), "/home/u/repos/x.git");
  EXPECT_EQ(local_remote_path("file:///home/u/x/../y.git", "/home/u", "/ws"), "/home/u/y.git");
  EXPECT_EQ(local_remote_path("~/repos/x.git", "/home/u", "/ws"), "/home/u/repos/x.git");
  EXPECT_EQ(local_remote_path("../x.git", "/home/u", "/ws/sub"), "/ws/x.git");
  EXPECT_EQ(local_remote_path("https://example.com/x.git", "/home/u", "/ws"), "");
  EXPECT_EQ(local_remote_path("git@example.com:x.git", "/home/u", "/ws"), "");
  EXPECT_EQ(local_remote_path("~other/x.git", "/home/u", "/ws"), "");
  EXPECT_EQ(local_remote_path("", "/home/u", "/ws"), "");
}

std::vector<std::string> remotes_of(const std::vector<std::string>& words) {
  const std::map<std::string, std::string> remotes = {{"origin", "/home/u/repos/x.git"},
                                                      {"tilde", "~/repos/t.git"},
                                                      {"hub", "https://example.com/x.git"}};
  std::vector<std::string> out;
  for (const auto& path : local_remotes(words, remotes, "/home/u", "/ws"))
    out.push_back(path.string());
  return out;
}

TEST(LocalRemotes, WhatFetchPullPushAndCloneRead) {
  using V = std::vector<std::string>;
  EXPECT_EQ(remotes_of({"git", "fetch"}), V{"/home/u/repos/x.git"});
  EXPECT_EQ(remotes_of({"git", "-C", "sub", "pull", "--rebase"}), V{"/home/u/repos/x.git"});
  EXPECT_EQ(remotes_of({"git", "fetch", "tilde", "main"}), V{"/home/u/repos/t.git"});
  EXPECT_EQ(remotes_of({"git", "fetch", "hub"}), V{});
  EXPECT_EQ(remotes_of({"git", "fetch", "--all"}),
            (V{"/home/u/repos/x.git", "/home/u/repos/t.git"}));
  EXPECT_EQ(remotes_of({"git", "push", "~/repos/p.git", "main"}), V{"/home/u/repos/p.git"});
  EXPECT_EQ(remotes_of({"git", "ls-remote", "origin"}), V{"/home/u/repos/x.git"});
  EXPECT_EQ(remotes_of({"git", "clone", "--depth", "1", "/home/u/repos/c.git", "c"}),
            (V{"/ws/1", "/home/u/repos/c.git", "/ws/c"}));
  EXPECT_EQ(remotes_of({"cd", "a", "&&", "/usr/bin/git", "clone", "~/repos/c.git", "git", "fetch"}),
            (V{"/home/u/repos/c.git", "/home/u/repos/x.git"}));
  EXPECT_EQ(remotes_of({"git", "status"}), V{});
  EXPECT_EQ(remotes_of({"fetch", "origin"}), V{});
}

TEST(PushedRemotes, OnlyWhatAPushPushesTo) {
  using V = std::vector<std::string>;
  const std::map<std::string, std::string> remotes = {{"origin", "/home/u/repos/x.git"},
                                                      {"hub", "https://example.com/x.git"}};
  const auto pushed = [&](const std::vector<std::string>& words) {
    V out;
    for (const auto& path : pushed_remotes(words, remotes, "/home/u", "/ws"))
      out.push_back(path.string());
    return out;
  };
  EXPECT_EQ(pushed({"git", "push", "origin", "main:refs/heads/x"}), V{"/home/u/repos/x.git"});
  EXPECT_EQ(pushed({"git", "push"}), V{"/home/u/repos/x.git"});
  EXPECT_EQ(pushed({"git", "-C", "a", "push", "./p.git"}), V{"/ws/p.git"});
  EXPECT_EQ(pushed({"git", "push", "hub"}), V{});
  EXPECT_EQ(pushed({"git", "fetch", "origin", "&&", "git", "pull"}), V{});
  EXPECT_EQ(pushed({"git", "clone", "/home/u/repos/c.git", "&&", "git", "push", "~/p.git"}),
            V{"/home/u/p.git"});
}

TEST(PushedRemotes, TheLineNamesThePathAndTheSetting) {
  EXPECT_EQ(unpushed_remote_line("/home/u/repos/x.git", {OutsideView::CopyOnWrite, "allow-read"}),
            "git pushed to /home/u/repos/x.git, which is copy-on-write inside the sandbox: the "
            "push is not on the host; to push there, add it to filesystem.additionalAllowWrite");
}

TEST(LocalRemotes, TheLineNamesThePathAndTheSetting) {
  EXPECT_EQ(hidden_remote_line("/home/u/repos/x.git", {OutsideView::Hidden, "in the hidden home"}),
            "git reads the remote /home/u/repos/x.git, which is hidden inside the sandbox (in the "
            "hidden home): see docs/configuration.md");
}

}  // namespace
}  // namespace pisandbox::policy
