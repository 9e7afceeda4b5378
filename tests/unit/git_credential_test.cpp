// policy/git_credential.hpp: the lines of git-credential(1), exactly as git writes and reads them.
#include "policy/git_credential.hpp"

#include <gtest/gtest.h>

namespace pisandbox::policy {
namespace {

using Attributes = std::vector<CredentialAttribute>;

TEST(GitCredential, ParsesWhatGitSendsUpToTheBlankLine) {
  const auto parsed = parse_credential_message(
      "capability[]=authtype\nprotocol=https\nhost=git.example:8443\nwwwauth[]=Basic "
      "realm=\"a=b\"\n"
      "\nignored=after the blank line\n");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(*parsed, (Attributes{{"capability[]", "authtype"},
                                 {"protocol", "https"},
                                 {"host", "git.example:8443"},
                                 {"wwwauth[]", "Basic realm=\"a=b\""}}));
  const auto query = credential_query(*parsed);
  ASSERT_TRUE(query) << query.error().message;
  EXPECT_EQ(*query, (CredentialQuery{"https", "git.example:8443", std::nullopt, std::nullopt}));
  EXPECT_EQ(credential_message(*query), "protocol=https\nhost=git.example:8443\n\n");
}

TEST(GitCredential, ALaterLineReplacesAnEarlierOneAndTheLastLineNeedsNoNewline) {
  const auto parsed = parse_credential_message("protocol=https\nhost=a.example\nhost=b.example");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(credential_value(*parsed, "host"), "b.example");
  EXPECT_EQ(credential_value(*parsed, "path"), std::nullopt);
}

TEST(GitCredential, RefusesMalformedLinesByNumber) {
  EXPECT_EQ(parse_credential_message("protocol=https\nhost\n").error().message,
            "credential line 2 has no '='");
  EXPECT_EQ(parse_credential_message("=x\n").error().message, "credential line 1 has an empty key");
  EXPECT_EQ(parse_credential_message(std::string("host=a\0b\n", 9)).error().message,
            "credential line 1 holds a NUL byte");
  EXPECT_EQ(
      parse_credential_message(std::string(kMaxCredentialMessageBytes + 1, 'a')).error().message,
      "credential message is larger than 65536 bytes");
  std::string many;
  for (int i = 0; i < 257; ++i) many += "k=v\n";
  EXPECT_EQ(parse_credential_message(many).error().message,
            "credential message has more than 256 attributes");
}

TEST(GitCredential, AQueryNeedsASchemeAndAHostName) {
  const auto query = [](std::string_view text) {
    return credential_query(*parse_credential_message(text));
  };
  EXPECT_EQ(query("host=a.example\n").error().message, "credential request has no protocol");
  EXPECT_EQ(query("protocol=https\n").error().message, "credential request has no host");
  EXPECT_EQ(query("protocol=ht tp\nhost=a\n").error().message,
            "credential request protocol ht tp is not a URL scheme");
  EXPECT_EQ(query("protocol=https\nhost=a.example/x\n").error().message,
            "credential request host a.example/x is not a host name");
  EXPECT_EQ(query("protocol=https\nhost=a.example:\n").error().message,
            "credential request host a.example: is not a host name");
  EXPECT_EQ(query("protocol=https\nhost=a.example\npath=x\rhost=b.example\n").error().message,
            "credential request path holds a control character");
  EXPECT_EQ(query("protocol=https\nhost=a.example\nusername=u\rhost=b.example\n").error().message,
            "credential request username holds a control character");
  EXPECT_EQ(query("protocol=https\nhost=a.example\nusername=u\x7f\n").error().message,
            "credential request username holds a control character");
  const auto full = query("protocol=https\nhost=a.example\npath=o/r.git\nusername=bob\n");
  ASSERT_TRUE(full);
  EXPECT_EQ(credential_message(*full),
            "protocol=https\nhost=a.example\npath=o/r.git\nusername=bob\n\n");
}

TEST(GitCredential, AnAnswerForAnotherHostOrProtocolIsNeverTaken) {
  const CredentialQuery query{"https", "a.example", std::nullopt, std::nullopt};
  const auto answer = [&query](std::string_view text) {
    return credential_answer(*parse_credential_message(text), query);
  };
  EXPECT_EQ(answer("protocol=https\nhost=a.example\nusername=u\npassword=p\n"),
            (Credential{"u", "p"}));
  EXPECT_EQ(answer("username=u\npassword=p=q\n"), (Credential{"u", "p=q"}));
  EXPECT_EQ(answer("protocol=https\nhost=b.example\nusername=u\npassword=p\n"), std::nullopt);
  EXPECT_EQ(answer("protocol=http\nhost=a.example\nusername=u\npassword=p\n"), std::nullopt);
  EXPECT_EQ(answer("protocol=https\nhost=a.example\nusername=u\n"), std::nullopt);
  EXPECT_EQ(credential_lines(Credential{"u", "p"}), "username=u\npassword=p\n");
}

TEST(GitCredential, ConfigFilesAreEveryOriginAndEveryIncludeTargetWhateverItsCondition) {
  using std::string_literals::operator""s;
  const std::string listing =
      "file:/etc/gitconfig\0credential.helper\nstore\0"
      "file:/home/u/.gitconfig\0include.path\n~/dotfiles/git.inc\0"
      "file:/home/u/.gitconfig\0includeif.gitdir:/x/.path\nteam/../rel.inc\0"
      "command line:\0credential.helper\n\0"
      "file:/home/u/dotfiles/git.inc\0include.path\n/abs/missing.inc\0"s;
  const auto files = git_config_files(listing, "/home/u");
  ASSERT_TRUE(files.has_value()) << files.error().message;
  EXPECT_EQ(*files, (std::vector<std::filesystem::path>{"/etc/gitconfig", "/home/u/.gitconfig",
                                                        "/home/u/dotfiles/git.inc",
                                                        "/home/u/rel.inc", "/abs/missing.inc"}));
}

TEST(GitCredential, ConfigListingThatIsCutOrNamesAnotherHomeIsAnError) {
  using std::string_literals::operator""s;
  EXPECT_EQ(
      git_config_files("file:/etc/gitconfig\0credential.helper\nstore"s, "/h").error().message,
      "git config listing is malformed");
  EXPECT_EQ(git_config_files("file:/h/.gitconfig\0include.path\n~bob/x\0"s, "/h").error().message,
            "include path ~bob/x names another user's home");
  EXPECT_EQ(git_config_files("", "/h").value(), std::vector<std::filesystem::path>{});
}

TEST(GitCredential, HelpersAreEveryCredentialHelperValueAndAnEmptyOneIsNone) {
  using std::string_literals::operator""s;
  const auto entries = git_config_entries(
      "file:/etc/gitconfig\0credential.helper\nstore\0"
      "file:/h/.gitconfig\0credential.helper\n\0"
      "file:/h/.gitconfig\0credential.https://github.com.helper\n!gh auth git-credential\0"
      "file:/h/.gitconfig\0credential.usehttppath\0"
      "file:/h/.gitconfig\0core.helper\n/not/a/credential/helper\0"s);
  ASSERT_TRUE(entries.has_value()) << entries.error().message;
  EXPECT_EQ((*entries)[3].key, "credential.usehttppath");
  EXPECT_EQ((*entries)[3].value, std::nullopt);
  EXPECT_EQ(credential_helpers(*entries),
            (std::vector<std::string>{"store", "!gh auth git-credential"}));
}

}  // namespace
}  // namespace pisandbox::policy
