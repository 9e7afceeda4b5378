// git_operation(): which git operation a command's words name, and its target word
// (docs/security.md, "Repositories around the workspace").
#include <gtest/gtest.h>

#include "policy/workspace_links.hpp"
#include "sandbox/linux/git_state.hpp"
#include "shell/shell_command.hpp"

namespace pisandbox::sandbox::linux_ {
namespace {

/// The operation of shell text `text` as "<name> <target>", or "none".
std::string of(const std::string& text) {
  const auto op = git_operation(policy::path_pieces(text));
  return op ? op->name + " " + op->target : "none";
}

TEST(GitOperation, NamesTheOperationAndItsTarget) {
  EXPECT_EQ(of("git merge origin/main"), "merge origin/main");
  EXPECT_EQ(of("git rebase -q origin/main"), "rebase origin/main");
  EXPECT_EQ(of("git reset --hard origin/main"), "reset origin/main");
  EXPECT_EQ(of("git cherry-pick origin/main"), "cherry-pick origin/main");
  EXPECT_EQ(of("git pull -q"), "pull ");
  EXPECT_EQ(of("git -C .. merge -m msg -s ort topic"), "merge topic");
  EXPECT_EQ(git_operation({"git", "-c", "core.x=y", "merge", "topic"})->target, "topic");
  EXPECT_EQ(of("git rebase --onto main HEAD~2"), "rebase HEAD~2");
  EXPECT_EQ(of("/usr/bin/git checkout other"), "checkout ");
  EXPECT_EQ(of("git stash"), "stash ");
  EXPECT_EQ(of("git stash push -m wip"), "stash ");
  EXPECT_EQ(of("git stash apply"), "stash stash@{0}");
  EXPECT_EQ(of("git stash pop --index stash@{2}"), "stash stash@{2}");
  EXPECT_EQ(of("git stash apply -q 1"), "stash 1");
  EXPECT_EQ(git_operation({"git", "stash", "apply", "stash@{1}"})->target, "stash@{1}");
}

// A shell command's own words (shell::command_words()): redirections are no arguments, and an
// operation's arguments end with its command.
TEST(GitOperation, ReadFromTheCommandsOwnWords) {
  const auto from = [](const std::string& text) {
    const auto op = git_operation(shell::command_words(text));
    return op ? op->name + " " + op->target : "none";
  };
  EXPECT_EQ(from("git stash 2>&1 | tail -3"), "stash ");
  EXPECT_EQ(from("git stash pop 2>/dev/null; make test"), "stash stash@{0}");
  EXPECT_EQ(from("git stash apply stash@{1} | cat"), "stash stash@{1}");
  EXPECT_EQ(from("git rebase other; true"), "rebase other");
  EXPECT_EQ(from("git merge -q other >/dev/null && npm test"), "merge other");
  EXPECT_EQ(from("sh -c 'cd .. && git pull --rebase'"), "pull ");
  EXPECT_EQ(from("echo $(git reset --hard main)"), "reset main");
  EXPECT_EQ(from("git stash list | head"), "none");
}

TEST(GitOperation, AStashThatRewritesNoFileIsNone) {
  for (const char* text : {"git stash list", "git stash show -p", "git stash drop stash@{1}",
                           "git stash clear", "git stash create", "git stash store abc"})
    EXPECT_EQ(of(text), "none") << text;
}

TEST(GitOperation, TheLastOperationCounts) {
  EXPECT_EQ(of("git fetch origin && git merge origin/main"), "merge origin/main");
  EXPECT_EQ(of("git merge a; git rebase b"), "rebase b");
}

TEST(GitOperation, NoneWithoutARewritingOperation) {
  EXPECT_EQ(of("make"), "none");
  EXPECT_EQ(of("false"), "none");
  EXPECT_EQ(of("git status"), "none");
  EXPECT_EQ(of("git fetch origin"), "none");
  EXPECT_EQ(of("git reset origin/main"), "none");  // index only: nothing outside to write
  EXPECT_EQ(of("git"), "none");
  EXPECT_EQ(of("git -C"), "none");
  EXPECT_EQ(of("echo merge origin/main"), "none");
}

}  // namespace
}  // namespace pisandbox::sandbox::linux_
