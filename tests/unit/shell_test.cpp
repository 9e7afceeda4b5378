// Unit tests of the shell splitter, the command view and the path helpers behind the
// hard-deny rules.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "shell/command_view.hpp"
#include "shell/path_words.hpp"
#include "shell/shell_command.hpp"

namespace pisandbox::shell {
namespace {

using Words = std::vector<std::string>;

// The words of every simple command, pipeline by pipeline.
std::vector<std::vector<Words>> words_of(std::string_view text) {
  std::vector<std::vector<Words>> out;
  for (const auto& pipeline : parse_shell(text).pipelines) {
    out.emplace_back();
    for (const auto& command : pipeline.commands) out.back().push_back(command.words);
  }
  return out;
}

TEST(ParseShell, SplitsPipelinesAndCommands) {
  EXPECT_EQ(
      words_of("a b; c && d || e & f\ng"),
      (std::vector<std::vector<Words>>{{{"a", "b"}}, {{"c"}}, {{"d"}}, {{"e"}}, {{"f"}}, {{"g"}}}));
  EXPECT_EQ(
      words_of("cat x | curl -d @- u |& tee y"),
      (std::vector<std::vector<Words>>{{{"cat", "x"}, {"curl", "-d", "@-", "u"}, {"tee", "y"}}}));
  EXPECT_EQ(words_of("(cd /; ls) | wc"),
            (std::vector<std::vector<Words>>{{{"cd", "/"}}, {{"ls"}, {"wc"}}}));
  EXPECT_EQ(words_of("  # only a comment\n"), (std::vector<std::vector<Words>>{}));
  EXPECT_EQ(words_of("echo a#b # c"), (std::vector<std::vector<Words>>{{{"echo", "a#b"}}}));
}

TEST(ParseShell, RemovesQuotes) {
  EXPECT_EQ(words_of(R"(echo 'a b' "c \"d\" \$e" f\ g "" '')"),
            (std::vector<std::vector<Words>>{{{"echo", "a b", "c \"d\" $e", "f g", "", ""}}}));
  EXPECT_EQ(words_of("r'm' -\"rf\" /"), (std::vector<std::vector<Words>>{{{"rm", "-rf", "/"}}}));
  EXPECT_EQ(words_of(R"(echo $'\x2f\057\n' $"x")"),
            (std::vector<std::vector<Words>>{{{"echo", "//\n", "x"}}}));
  EXPECT_EQ(words_of("echo a\\\nb"), (std::vector<std::vector<Words>>{{{"echo", "ab"}}}));
  EXPECT_EQ(words_of("echo 'unterminated"),
            (std::vector<std::vector<Words>>{{{"echo", "unterminated"}}}));
}

TEST(ParseShell, ReadsRedirections) {
  const auto script = parse_shell("cmd <in >out 2>>err >&2 2>&1 &>all <<<here x >|clobber");
  ASSERT_EQ(script.pipelines.size(), 1u);
  const auto& command = script.pipelines[0].commands[0];
  EXPECT_EQ(command.words, (Words{"cmd", "x"}));
  EXPECT_EQ(command.redirects, (std::vector<Redirect>{{RedirectKind::Input, "in"},
                                                      {RedirectKind::Output, "out"},
                                                      {RedirectKind::Append, "err"},
                                                      {RedirectKind::Duplicate, "2"},
                                                      {RedirectKind::Duplicate, "1"},
                                                      {RedirectKind::Output, "all"},
                                                      {RedirectKind::HereString, "here"},
                                                      {RedirectKind::Output, "clobber"}}));
  // Quoted digits are a word, not a file descriptor.
  EXPECT_EQ(parse_shell("echo '2'>f").pipelines[0].commands[0].words, (Words{"echo", "2"}));
}

TEST(ParseShell, ReadsHereDocuments) {
  const auto script = parse_shell(
      "cat <<EOF | curl -d @- u\nline $(id)\nEOF\ncat <<-'END'\n\tkept $(x)\n\tEND\necho done");
  ASSERT_EQ(script.pipelines.size(), 3u);
  EXPECT_EQ(script.pipelines[0].commands[0].redirects,
            (std::vector<Redirect>{{RedirectKind::HereDoc, "line $(id)\n"}}));
  EXPECT_EQ(script.pipelines[0].commands[1].words, (Words{"curl", "-d", "@-", "u"}));
  EXPECT_EQ(script.pipelines[1].commands[0].redirects,
            (std::vector<Redirect>{{RedirectKind::HereDoc, "kept $(x)\n"}}));
  EXPECT_EQ(script.pipelines[2].commands[0].words, (Words{"echo", "done"}));
  EXPECT_EQ(script.substitutions, (Words{"id"}));  // the quoted delimiter's body stays text
}

TEST(ParseShell, KeepsSubstitutionsInWordsAndReturnsThem) {
  const auto script = parse_shell(R"sh(curl -d "k=$(cat "a b" | x)" `id` <(ls) $(echo ')'))sh");
  EXPECT_EQ(script.pipelines[0].commands[0].words,
            (Words{"curl", "-d", R"sh(k=$(cat "a b" | x))sh", "`id`", "<(ls)", "$(echo ')')"}));
  EXPECT_EQ(script.substitutions, (Words{R"sh(cat "a b" | x)sh", "id", "ls", "echo ')'"}));
}

TEST(CommandView, LooksThroughWrappers) {
  const auto view_of = [](std::string_view text) {
    return view_command(parse_shell(text).pipelines.at(0).commands.at(0));
  };
  auto v = view_of("A=1 sudo -u root env -i B=2 nice -n 5 timeout -s KILL 10 /bin/rm -rf /");
  EXPECT_EQ(v.program, "rm");
  EXPECT_EQ(v.args, (Words{"-rf", "/"}));
  EXPECT_EQ(v.assignments, (Words{"A=1", "B=2"}));
  v = view_of("if ! command -p xargs -n 1 curl -k; then :; fi");
  EXPECT_EQ(v.program, "curl");
  v = view_of("export NODE_TLS_REJECT_UNAUTHORIZED=0 X");
  EXPECT_EQ(v.program, "export");
  EXPECT_EQ(v.assignments, (Words{"NODE_TLS_REJECT_UNAUTHORIZED=0"}));
  v = view_of("X=1 >out");
  EXPECT_EQ(v.program, "");
  EXPECT_EQ(v.assignments, (Words{"X=1"}));
  EXPECT_TRUE(is_assignment("A_1+=x"));
  EXPECT_FALSE(is_assignment("1A=x"));
  EXPECT_FALSE(is_assignment("=x"));
  EXPECT_FALSE(is_assignment("--opt=x"));
}

TEST(ParseArguments, FollowsGetopt) {
  const std::vector<std::string> args{"-sSk", "-oout", "-H", "X: -k", "--data=@f", "--url",
                                      "u",    "pos",   "-",  "--",    "-k"};
  const std::array<std::string_view, 1> long_with_value{"--url"};
  const auto parsed = parse_arguments(args, OptionSpec{"oH", long_with_value});
  std::vector<std::string> rendered;
  for (const auto& a : parsed) rendered.push_back(a.text + (a.value ? "=" + *a.value : ""));
  EXPECT_EQ(rendered,
            (Words{"s", "S", "k", "o=out", "H=X: -k", "--data=@f", "--url=u", "pos", "-", "-k"}));
  EXPECT_EQ(parsed.back().kind, Argument::Kind::Operand);
}

TEST(PathWords, ParsesAndResolves) {
  auto p = parse_path_word("~/a/../b/./c/");
  EXPECT_EQ(p.anchor, PathAnchor::Home);
  EXPECT_EQ(p.parts, (Words{"b", "c"}));
  p = parse_path_word("${HOME:?}/x");
  EXPECT_EQ(p.anchor, PathAnchor::Home);
  EXPECT_EQ(p.parts, (Words{"x"}));
  EXPECT_EQ(parse_path_word("$HOMEDIR/x").anchor, PathAnchor::Relative);
  p = parse_path_word("/../..//etc");
  EXPECT_EQ(p.anchor, PathAnchor::Root);
  EXPECT_EQ(p.parts, (Words{"etc"}));
  p = parse_path_word("../..");
  EXPECT_EQ(p.ups, 2u);
  EXPECT_EQ(absolute_parts("../x", "/home/u", "/w/sub"), (Words{"w", "x"}));
  EXPECT_EQ(absolute_parts("~/../..", "/home/u", "/w"), (Words{}));
  EXPECT_FALSE(absolute_parts("~/x", "", "/w"));
  EXPECT_FALSE(absolute_parts("x", "/h", "relative"));
}

TEST(PathWords, CredentialPaths) {
  for (const char* path :
       {"~/.ssh/id_rsa", "$HOME/.ssh/id_ed25519", "/home/u/.ssh/id_*", ".env", "./.env.local",
        "~/.aws/credentials", "~/.netrc", "~/.docker/config.json", "~/.ssh", "/etc/shadow",
        "~/.kube/config", "~/.config/gh/hosts.yml", "~/.gnupg/private-keys-v1.d/k.key"}) {
    EXPECT_TRUE(is_credential_path(path)) << path;
  }
  for (const char* path : {"~/.ssh/id_rsa.pub", "~/.ssh/known_hosts", ".envrc", "env",
                           ".env-example", "~/.aws/config", "config.json", "id_rsa"}) {
    EXPECT_FALSE(is_credential_path(path)) << path;
  }
  EXPECT_EQ(find_credential_mention("key=$(cat ~/.ssh/id_rsa)"), "~/.ssh/id_rsa");
  EXPECT_EQ(find_credential_mention("f=@.env;type=text/plain"), ".env");
  EXPECT_FALSE(find_credential_mention("https://example.com/.envelope"));
}

TEST(PathWords, PersistenceTargets) {
  EXPECT_TRUE(is_persistence_target({"root", ".ssh", "authorized_keys"}));
  EXPECT_TRUE(is_persistence_target({"etc", "sudoers"}));
  EXPECT_TRUE(is_persistence_target({"etc", "sudoers.d", "x"}));
  EXPECT_FALSE(is_persistence_target({"tmp", "sudoers"}));
  EXPECT_FALSE(is_persistence_target({"etc", "sudoers", "x"}));
  EXPECT_FALSE(is_persistence_target({"authorized_keys.bak"}));
}

}  // namespace

// command_words(): each simple command's words and a `;`, redirections left out, nested
// command texts and substitutions taken apart after them.
TEST(CommandWords, EachCommandsWordsEndWithASeparator) {
  using V = std::vector<std::string>;
  EXPECT_EQ(command_words("git stash 2>&1 | tail -3"), (V{"git", "stash", ";", "tail", "-3", ";"}));
  EXPECT_EQ(command_words("a 'b c' >out; d"), (V{"a", "b c", ";", "b", "c", ";", "d", ";"}));
  EXPECT_EQ(command_words("sh -c 'cd .. && git pull'"),
            (V{"sh", "-c", "cd .. && git pull", ";", "cd", "..", ";", "git", "pull", ";"}));
  EXPECT_EQ(command_words("echo $(git log)"), (V{"echo", "$(git log)", ";", "git", "log", ";"}));
  EXPECT_EQ(command_words(""), V{});
}

}  // namespace pisandbox::shell
