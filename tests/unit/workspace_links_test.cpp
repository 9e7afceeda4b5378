// Unit tests of policy/workspace_links.hpp: outside_access() on a fixed policy, the scan of a
// real directory tree (its depth bound, `.git` skipped, links inside the workspace left out),
// and the words of a command that name a link.
#include "policy/workspace_links.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <string>
#include <vector>

namespace pisandbox::policy {
namespace {

SandboxPolicy fixed_policy() {
  SandboxPolicy p;
  p.workspace = "/ws";
  p.home = "/home/u";
  p.hide_home = true;
  p.home_read_allowed = {Exposure("/home/u/.cargo/bin", "$PATH entry", Access::ReadOnly)};
  p.writable = {Exposure("/ws", "", Access::ReadWrite),
                Exposure("/home/u/shared", std::string(kConfiguredWritable), Access::ReadWrite)};
  p.concealed = {"/home/u/.cargo/bin/credentials.toml"};
  p.private_tmp = true;
  return p;
}

TEST(OutsideAccess, TheMostSpecificRuleDecides) {
  const SandboxPolicy p = fixed_policy();
  const auto view = [&p](const char* path) { return outside_access(p, path).view; };
  EXPECT_EQ(view("/home/u/repos/backend"), OutsideView::Hidden);
  EXPECT_EQ(outside_access(p, "/home/u/repos/backend").why,
            "in the hidden home; filesystem.additionalAllowRead or additionalAllowWrite shows it");
  EXPECT_EQ(view("/home/u/.cargo/bin/cargo"), OutsideView::ReadOnly);
  EXPECT_EQ(outside_access(p, "/home/u/.cargo/bin/cargo").why, "$PATH entry");
  EXPECT_EQ(view("/home/u/.cargo/bin/credentials.toml"), OutsideView::Hidden);
  EXPECT_EQ(view("/home/u/shared/notes"), OutsideView::Writable);
  EXPECT_EQ(view("/tmp/build"), OutsideView::Hidden);
  EXPECT_EQ(view("/var/tmp/x"), OutsideView::Hidden);
  EXPECT_EQ(view("/opt/repos/frontend"), OutsideView::ReadOnly);
  EXPECT_EQ(outside_access(p, "/opt/repos/frontend").why,
            "the host outside the workspace is read-only; filesystem.additionalAllowWrite makes "
            "it writable");
}

/// A temporary directory, removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "pi-links-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

TEST(FindOutwardLinks, TwoLevelsOutsideOnlyNeverGitAndMissingTargetsSaid) {
  TempDir t;
  const fs::path ws = t.path / "ws", home = t.path / "home";
  fs::create_directories(ws / "sub" / "sub2");
  fs::create_directories(ws / ".git");
  fs::create_directories(home / "repos" / "backend");
  fs::create_directory_symlink(home / "repos" / "backend", ws / "backend");
  fs::create_directory_symlink("sub", ws / "inner");                       // inside: not listed
  fs::create_directory_symlink("/usr", ws / "sub" / "system");             // depth 2: listed
  fs::create_directory_symlink("/usr", ws / "sub" / "sub2" / "too-deep");  // depth 3: not read
  fs::create_directory_symlink("/usr", ws / ".git" / "skipped");
  fs::create_symlink(home / "gone", ws / "dangling");
  SandboxPolicy p = fixed_policy();
  p.workspace = ws;
  p.home = home;
  p.home_read_allowed.clear();
  p.writable = {Exposure(ws, "", Access::ReadWrite)};
  p.concealed.clear();
  LinkScan scan = find_outward_links(p);
  std::ranges::sort(scan.links, {}, &OutwardLink::link);
  ASSERT_EQ(scan.links.size(), 3u);
  EXPECT_EQ(scan.links[0].link, ws / "backend");
  EXPECT_EQ(scan.links[0].resolved, home / "repos" / "backend");
  EXPECT_FALSE(scan.links[0].missing);
  EXPECT_EQ(scan.links[0].access.view, OutsideView::Hidden);
  EXPECT_EQ(scan.links[1].link, ws / "dangling");
  EXPECT_TRUE(scan.links[1].missing);
  EXPECT_EQ(scan.links[1].access.view, OutsideView::Hidden);
  EXPECT_EQ(scan.links[2].link, ws / "sub" / "system");
  EXPECT_EQ(scan.links[2].target, "/usr");
  EXPECT_EQ(scan.links[2].access.view, OutsideView::ReadOnly);
  EXPECT_FALSE(scan.truncated);
  EXPECT_EQ(outward_link_line(scan.links[0], "backend/README"),
            "backend/README is a link to " + (home / "repos" / "backend").string() +
                ", which is hidden inside the sandbox (in the hidden home; "
                "filesystem.additionalAllowRead or additionalAllowWrite shows it): see "
                "pi-sandbox policy");
}

TEST(LinksNamed, AWordAtOrBelowTheLinkRelativeToTheWorkingDirectoryOrAbsolute) {
  std::vector<OutwardLink> links(2);
  links[0].link = "/ws/backend";
  links[1].link = "/ws/sub/system";
  const auto named = [&links](const std::string& text, const char* cwd) {
    std::vector<std::string> out;
    for (const auto& [link, word] : links_named(links, path_pieces(text), cwd))
      out.push_back(link->link.string() + "=" + word);
    return out;
  };
  EXPECT_EQ(named("cat 'backend/README'>out; ls sub", "/ws"),
            std::vector<std::string>{"/ws/backend=backend/README"});
  EXPECT_EQ(named("cd ./backend/ && make", "/ws"),
            std::vector<std::string>{"/ws/backend=./backend/"});
  EXPECT_EQ(named("touch system/x ../backend", "/ws/sub"),
            (std::vector<std::string>{"/ws/backend=../backend", "/ws/sub/system=system/x"}));
  EXPECT_EQ(named("echo x > /ws/sub/system/file", "/"),
            std::vector<std::string>{"/ws/sub/system=/ws/sub/system/file"});
  EXPECT_TRUE(named("ls backends backend2 sub", "/ws").empty());
}

TEST(LinkAsSpelled, TheWordLessWhatLiesBelowTheLink) {
  OutwardLink link;
  link.link = "/ws/backend";
  EXPECT_EQ(link_as_spelled(link, "backend/README", "/ws"), "backend");
  EXPECT_EQ(link_as_spelled(link, "backend", "/ws"), "backend");
  EXPECT_EQ(link_as_spelled(link, "./backend/src//x/", "/ws"), "./backend");
  EXPECT_EQ(link_as_spelled(link, "../backend/x", "/ws/sub"), "../backend");
  EXPECT_EQ(link_as_spelled(link, "/ws/backend/a/b", "/"), "/ws/backend");
  // The word's text does not lead to the link: the link itself, relative or absolute.
  EXPECT_EQ(link_as_spelled(link, "backend/../backend/x", "/ws"), "backend");
  EXPECT_EQ(link_as_spelled(link, "sub/../backend/x/..", "/ws/sub/.."), "backend");
  EXPECT_EQ(link_as_spelled(link, "/ws/./backend/x/../y", "/tmp"), "/ws/backend");
}

TEST(PathPieces, CutsAtShellSyntax) {
  EXPECT_EQ(
      path_pieces("cat 'a b'>c;ls $HOME|x&&y=\"z\" `q` {r}"),
      (std::vector<std::string>{"cat", "a", "b", "c", "ls", "HOME", "x", "y", "z", "q", "r"}));
}

}  // namespace
}  // namespace pisandbox::policy
