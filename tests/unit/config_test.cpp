// config::parse, config::to_json and config::load (compatibility C1–C8, C9, C10–C12;
// docs/configuration.md). Every message is asserted exactly.
#include "config/config.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "config/loader.hpp"

namespace pisandbox::config {
namespace {

namespace fs = std::filesystem;

const fs::path kPath = "/home/u/.pi/agent/extensions/pi-sandbox/config.json";

struct Refused {
  std::string name;
  std::string text;
  std::string message;  // without the `invalid pi-sandbox configuration: ` prefix
};

std::string test_name(const testing::TestParamInfo<Refused>& info) {
  return info.param.name;
}

class ConfigRefused : public testing::TestWithParam<Refused> {};

TEST_P(ConfigRefused, WithTheExactMessage) {
  const Refused& c = GetParam();
  auto config = parse(c.text);
  ASSERT_FALSE(config.has_value()) << c.text;
  EXPECT_EQ(config.error().kind, ConfigError::Kind::Invalid);
  EXPECT_EQ(config.error().describe(kPath), "invalid pi-sandbox configuration: " + c.message)
      << c.text;
}

INSTANTIATE_TEST_SUITE_P(
    Root, ConfigRefused,
    testing::Values(
        Refused{"Array", "[]", "root must be an object"},
        Refused{"Null", "null", "root must be an object"},
        Refused{"Number", "1", "root must be an object"},
        Refused{"String", R"("x")", "root must be an object"},
        Refused{"UnknownKey", R"({"zzz": 1})", "unknown root key: zzz"},
        Refused{"UnknownKeysInDocumentOrder", R"({"subagents": {}, "b": 1, "a": 2})",
                "unknown root keys: b, a"},
        Refused{"UnknownBeforeSectionType", R"({"subagents": [], "x": 1})", "unknown root key: x"},
        Refused{"UnknownCaseSensitive", R"({"hostIpc": {}})", "unknown root key: hostIpc"},
        Refused{"DuplicateRootKey", R"({"a": 1, "a": 2})", "duplicate root key: a"},
        Refused{"DuplicateSection", R"({"subagents": {}, "subagents": {"provider": "off"}})",
                "duplicate root key: subagents"},
        Refused{"DuplicateBeforeLaterSyntaxError", R"({"a": 1, "a": 2, )", "duplicate root key: a"},
        Refused{"DuplicateDeepIsSchemaError", R"({"foo": {"a": 1, "a": 2}})",
                "unknown root key: foo"}),
    test_name);

INSTANTIATE_TEST_SUITE_P(
    Sections, ConfigRefused,
    testing::Values(
        Refused{"SubagentsArray", R"({"subagents": []})", "subagents must be an object"},
        Refused{"SubagentsNull", R"({"subagents": null})", "subagents must be an object"},
        Refused{"FilesystemString", R"({"filesystem": "x"})", "filesystem must be an object"},
        Refused{"HostIpcArray", R"({"hostIPC": [{}]})", "hostIPC must be an object"},
        Refused{"NetworkNull", R"({"network": null})", "network must be an object"},
        Refused{"ApprovalBool", R"({"approval": true})", "approval must be an object"},
        Refused{"UnknownSubagentsKey", R"({"subagents": {"x": 1}})", "unknown subagents key: x"},
        Refused{"UnknownFilesystemKeys", R"({"filesystem": {"allowWrite": [], "denyRead": []}})",
                "unknown filesystem keys: allowWrite, denyRead"},
        Refused{"UnknownHostIpcKey", R"({"hostIPC": {"mode": "ask", "prefixes": []}})",
                "unknown hostIPC key: prefixes"},
        Refused{"UnknownNetworkKeys",
                R"({"network": {"allowLocalBinding": true, "allowUnixSockets": ["/x"]}})",
                "unknown network keys: allowLocalBinding, allowUnixSockets"},
        Refused{"UnknownApprovalKey", R"({"approval": {"timeout": 5}})",
                "unknown approval key: timeout"},
        Refused{"UnknownBeforeFieldError", R"({"subagents": {"provider": 1, "x": 1}})",
                "unknown subagents key: x"},
        Refused{"SectionsInSchemaOrder", R"({"approval": [], "subagents": []})",
                "subagents must be an object"},
        Refused{"DuplicateSubagentsKey",
                R"({"subagents": {"provider": "off", "provider": "builtin"}})",
                "duplicate subagents key: provider"},
        Refused{"DuplicateHostIpcKey", R"({"hostIPC": {"mode": "off", "mode": "ask"}})",
                "duplicate hostIPC key: mode"},
        Refused{"DuplicateNetworkKey",
                R"({"network": {"deniedDomains": ["*"], "deniedDomains": []}})",
                "duplicate network key: deniedDomains"},
        Refused{"DuplicateApprovalKey",
                R"({"approval": {"grantTtlSeconds": 1, "grantTtlSeconds": 300}})",
                "duplicate approval key: grantTtlSeconds"},
        Refused{"DuplicateFilesystemKey",
                R"({"filesystem": {"additionalAllowRead": [], "additionalAllowRead": ["/x"]}})",
                "duplicate filesystem key: additionalAllowRead"}),
    test_name);

const std::string kProvider = "subagents.provider must be one of builtin, pi-subagents, off";
const std::string kAllowRead = "filesystem.additionalAllowRead must be an array of absolute paths";
const std::string kAllowWrite =
    "filesystem.additionalAllowWrite must be an array of absolute paths";
const std::string kToolchains = "filesystem.exposeHomeToolchains must be a boolean";
const std::string kProtection = "filesystem.protection must be one of guard, strict";
const std::string kExposeCredentials = "filesystem.exposeCredentials must be an array of strings";
const std::string kNotACredential = "filesystem.exposeCredentials";
const std::string kNotACredentialTail =
    " must be ~/ followed by a credential of the table in docs/security.md, \"Credentials\" (a "
    "row, or a file under a directory row): ";
const std::string kMode = "hostIPC.mode must be one of off, ask";
const std::string kPrefixes =
    "hostIPC.preflightCommandPrefixes must be an array of non-empty strings";
const std::string kRetry = "hostIPC.retryOnUnixSocketError must be a boolean";

INSTANTIATE_TEST_SUITE_P(
    Fields, ConfigRefused,
    testing::Values(
        Refused{"ProviderUnknown", R"({"subagents": {"provider": "nope"}})", kProvider},
        Refused{"ProviderCase", R"({"subagents": {"provider": "Builtin"}})", kProvider},
        Refused{"ProviderNull", R"({"subagents": {"provider": null}})", kProvider},
        Refused{"ProviderNumber", R"({"subagents": {"provider": 1}})", kProvider},
        Refused{"AllowReadRelative", R"({"filesystem": {"additionalAllowRead": ["rel/path"]}})",
                kAllowRead},
        Refused{"AllowReadString", R"({"filesystem": {"additionalAllowRead": "/a"}})", kAllowRead},
        Refused{"AllowReadEmpty", R"({"filesystem": {"additionalAllowRead": [""]}})", kAllowRead},
        Refused{"AllowReadBlank", R"({"filesystem": {"additionalAllowRead": ["  "]}})", kAllowRead},
        Refused{"AllowReadNotTrimmed", R"({"filesystem": {"additionalAllowRead": [" /a"]}})",
                kAllowRead},
        Refused{"AllowReadNumber", R"({"filesystem": {"additionalAllowRead": ["/a", 1]}})",
                kAllowRead},
        Refused{"AllowReadNul", R"({"filesystem": {"additionalAllowRead": ["/a\u0000b"]}})",
                kAllowRead},
        Refused{"AllowReadNull", R"({"filesystem": {"additionalAllowRead": null}})", kAllowRead},
        Refused{"AllowWriteRelative", R"({"filesystem": {"additionalAllowWrite": ["a/b"]}})",
                kAllowWrite},
        Refused{"AllowWriteString", R"({"filesystem": {"additionalAllowWrite": "/a"}})",
                kAllowWrite},
        Refused{"AllowWriteNotTrimmed", R"({"filesystem": {"additionalAllowWrite": [" /a"]}})",
                kAllowWrite},
        Refused{"AllowWriteNul", R"({"filesystem": {"additionalAllowWrite": ["/a\u0000b"]}})",
                kAllowWrite},
        Refused{"ToolchainsString", R"({"filesystem": {"exposeHomeToolchains": "false"}})",
                kToolchains},
        Refused{"ToolchainsNull", R"({"filesystem": {"exposeHomeToolchains": null}})", kToolchains},
        Refused{"ProtectionUnknown", R"({"filesystem": {"protection": "placeholders"}})",
                kProtection},
        Refused{"ProtectionCase", R"({"filesystem": {"protection": "Strict"}})", kProtection},
        Refused{"ProtectionBool", R"({"filesystem": {"protection": true}})", kProtection},
        Refused{"ExposeCredentialsString", R"({"filesystem": {"exposeCredentials": "~/.netrc"}})",
                kExposeCredentials},
        Refused{"ExposeCredentialsNumber", R"({"filesystem": {"exposeCredentials": [1]}})",
                kExposeCredentials},
        Refused{"ExposeCredentialsNull", R"({"filesystem": {"exposeCredentials": null}})",
                kExposeCredentials},
        Refused{"ExposeCredentialsNotARow",
                R"({"filesystem": {"exposeCredentials": ["~/.netrc", "~/.ssh/config"]}})",
                kNotACredential + "[1]" + kNotACredentialTail + "~/.ssh/config"},
        Refused{"ExposeCredentialsAbsolute",
                R"({"filesystem": {"exposeCredentials": ["/home/u/.netrc"]}})",
                kNotACredential + "[0]" + kNotACredentialTail + "/home/u/.netrc"},
        Refused{"ExposeCredentialsNotNormal",
                R"({"filesystem": {"exposeCredentials": ["~/.aws/../.aws/credentials"]}})",
                kNotACredential + "[0]" + kNotACredentialTail + "~/.aws/../.aws/credentials"},
        Refused{"ExposeCredentialsAboveADirectoryRow",
                R"({"filesystem": {"exposeCredentials": ["~/.gnupg"]}})",
                kNotACredential + "[0]" + kNotACredentialTail + "~/.gnupg"},
        Refused{"ExposeCredentialsTrailingSlash",
                R"({"filesystem": {"exposeCredentials": ["~/.gnupg/private-keys-v1.d/"]}})",
                kNotACredential + "[0]" + kNotACredentialTail + "~/.gnupg/private-keys-v1.d/"},
        Refused{"ModeUnknown", R"({"hostIPC": {"mode": "on"}})", kMode},
        Refused{"ModeCase", R"({"hostIPC": {"mode": "ASK"}})", kMode},
        Refused{"ModeBool", R"({"hostIPC": {"mode": true}})", kMode},
        Refused{"PrefixBlank", R"({"hostIPC": {"preflightCommandPrefixes": ["  "]}})", kPrefixes},
        Refused{"PrefixEmpty", R"({"hostIPC": {"preflightCommandPrefixes": ["tmux", ""]}})",
                kPrefixes},
        Refused{"PrefixUnicodeBlank",
                R"({"hostIPC": {"preflightCommandPrefixes": ["\u00a0\u3000\ufeff"]}})", kPrefixes},
        Refused{"PrefixString", R"({"hostIPC": {"preflightCommandPrefixes": "tmux"}})", kPrefixes},
        Refused{"PrefixNumber", R"({"hostIPC": {"preflightCommandPrefixes": [1]}})", kPrefixes},
        Refused{"RetryString", R"({"hostIPC": {"retryOnUnixSocketError": "true"}})", kRetry},
        Refused{"RetryNumber", R"({"hostIPC": {"retryOnUnixSocketError": 1}})", kRetry},
        Refused{"RetryNull", R"({"hostIPC": {"retryOnUnixSocketError": null}})", kRetry}),
    test_name);

// Entries of docs/cases.md, C-05, C-07 and C-09, each in the position it is written.
INSTANTIATE_TEST_SUITE_P(
    Network, ConfigRefused,
    testing::Values(
        Refused{"AllowedString", R"({"network": {"allowedDomains": "github.com"}})",
                "network.allowedDomains must be an array of non-empty strings"},
        Refused{"DeniedEmptyEntry", R"({"network": {"deniedDomains": ["x.com", ""]}})",
                "network.deniedDomains must be an array of non-empty strings"},
        Refused{"DeniedBlankEntry", R"({"network": {"deniedDomains": ["  "]}})",
                "network.deniedDomains must be an array of non-empty strings"},
        Refused{"AllowedNumber", R"({"network": {"allowedDomains": [443]}})",
                "network.allowedDomains must be an array of non-empty strings"},
        Refused{"ShapeBeforeEntries", R"({"network": {"allowedDomains": ["https://x.com", 1]}})",
                "network.allowedDomains must be an array of non-empty strings"},
        Refused{"Path", R"({"network": {"allowedDomains": ["github.com/example-org/*"]}})",
                "network.allowedDomains[0] contains an invalid domain pattern: "
                "github.com/example-org/*"},
        Refused{"Scheme",
                R"({"network": {"allowedDomains": ["github.com", "https://github.com"]}})",
                "network.allowedDomains[1] contains an invalid domain pattern: "
                "https://github.com"},
        Refused{"UnixSocket", R"({"network": {"deniedDomains": ["unix:///var/run/docker.sock"]}})",
                "network.deniedDomains[0] contains an invalid domain pattern: "
                "unix:///var/run/docker.sock"},
        Refused{"Ipv4", R"({"network": {"allowedDomains": ["127.0.0.1"]}})",
                "network.allowedDomains[0] contains an invalid domain pattern: 127.0.0.1"},
        Refused{"Ipv6", R"({"network": {"deniedDomains": ["[::1]"]}})",
                "network.deniedDomains[0] contains an invalid domain pattern: [::1]"},
        Refused{"LeadingZeroPort", R"({"network": {"allowedDomains": ["example.com:0443"]}})",
                "network.allowedDomains[0] contains an invalid domain pattern: example.com:0443"},
        Refused{"PortTooLarge", R"({"network": {"allowedDomains": ["example.com:65536"]}})",
                "network.allowedDomains[0] contains an invalid domain pattern: example.com:65536"},
        Refused{"StarInAllowed", R"({"network": {"allowedDomains": ["*"]}})",
                "network.allowedDomains[0] contains an invalid domain pattern: *"},
        Refused{"StarPortInAllowed", R"({"network": {"allowedDomains": ["*:443"]}})",
                "network.allowedDomains[0] contains an invalid domain pattern: *:443"},
        Refused{"EntryAsWritten", R"({"network": {"allowedDomains": [" Bad_Host.com "]}})",
                "network.allowedDomains[0] contains an invalid domain pattern:  Bad_Host.com "},
        Refused{"AllowedBeforeDenied",
                R"({"network": {"deniedDomains": ["x y"], "allowedDomains": ["localhost"]}})",
                "network.allowedDomains[0] contains an invalid domain pattern: localhost"}),
    test_name);

const std::string kReviewer =
    "approval.reviewer must be an array of strings starting with an absolute path";
const std::string kTimeout = "approval.reviewerTimeoutSeconds must be an integer between 1 and 600";
const std::string kTtl = "approval.grantTtlSeconds must be an integer between 1 and 300";
const std::string kQuestion =
    "approval.questionTimeoutSeconds must be an integer between 0 and 86400";

INSTANTIATE_TEST_SUITE_P(
    Approval, ConfigRefused,
    testing::Values(
        Refused{"ReviewerEmpty", R"({"approval": {"reviewer": []}})", kReviewer},
        Refused{"ReviewerString", R"({"approval": {"reviewer": "/bin/r"}})", kReviewer},
        Refused{"ReviewerRelative", R"({"approval": {"reviewer": ["my-reviewer"]}})", kReviewer},
        Refused{"ReviewerNonString", R"({"approval": {"reviewer": ["/bin/r", 1]}})", kReviewer},
        Refused{"ReviewerNul", R"({"approval": {"reviewer": ["/bin/r", "a\u0000"]}})", kReviewer},
        Refused{"ReviewerNull", R"({"approval": {"reviewer": null}})", kReviewer},
        Refused{"TimeoutZero", R"({"approval": {"reviewerTimeoutSeconds": 0}})", kTimeout},
        Refused{"TimeoutNegative", R"({"approval": {"reviewerTimeoutSeconds": -1}})", kTimeout},
        Refused{"TimeoutTooLarge", R"({"approval": {"reviewerTimeoutSeconds": 601}})", kTimeout},
        Refused{"TimeoutFraction", R"({"approval": {"reviewerTimeoutSeconds": 90.5}})", kTimeout},
        Refused{"TimeoutFloatLiteral", R"({"approval": {"reviewerTimeoutSeconds": 90.0}})",
                kTimeout},
        Refused{"TimeoutExponent", R"({"approval": {"reviewerTimeoutSeconds": 9e1}})", kTimeout},
        Refused{"TimeoutHuge", R"({"approval": {"reviewerTimeoutSeconds": 18446744073709551616}})",
                kTimeout},
        Refused{"TimeoutUint64Max",
                R"({"approval": {"reviewerTimeoutSeconds": 18446744073709551615}})", kTimeout},
        Refused{"TimeoutString", R"({"approval": {"reviewerTimeoutSeconds": "90"}})", kTimeout},
        Refused{"TimeoutBool", R"({"approval": {"reviewerTimeoutSeconds": true}})", kTimeout},
        Refused{"TimeoutNull", R"({"approval": {"reviewerTimeoutSeconds": null}})", kTimeout},
        Refused{"TtlZero", R"({"approval": {"grantTtlSeconds": 0}})", kTtl},
        Refused{"TtlTooLarge", R"({"approval": {"grantTtlSeconds": 301}})", kTtl},
        Refused{"TtlFraction", R"({"approval": {"grantTtlSeconds": 1.5}})", kTtl},
        Refused{"TtlArray", R"({"approval": {"grantTtlSeconds": [60]}})", kTtl},
        Refused{"QuestionNegative", R"({"approval": {"questionTimeoutSeconds": -1}})", kQuestion},
        Refused{"QuestionTooLarge", R"({"approval": {"questionTimeoutSeconds": 86401}})",
                kQuestion},
        Refused{"QuestionFraction", R"({"approval": {"questionTimeoutSeconds": 0.5}})", kQuestion},
        Refused{"QuestionFloatLiteral", R"({"approval": {"questionTimeoutSeconds": 120.0}})",
                kQuestion},
        Refused{"QuestionString", R"({"approval": {"questionTimeoutSeconds": "120"}})", kQuestion},
        Refused{"QuestionBool", R"({"approval": {"questionTimeoutSeconds": false}})", kQuestion},
        Refused{"QuestionNull", R"({"approval": {"questionTimeoutSeconds": null}})", kQuestion}),
    test_name);

struct NotJson {
  std::string name;
  std::string text;
  std::string position_and_reason;  // `<line>:<column>: <reason>`
};

class ConfigNotJson : public testing::TestWithParam<NotJson> {};

TEST_P(ConfigNotJson, NamesThePathLineAndColumn) {
  const NotJson& c = GetParam();
  auto config = parse(c.text);
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().kind, ConfigError::Kind::InvalidJson);
  EXPECT_EQ(config.error().describe(kPath), "invalid JSON in pi-sandbox configuration at " +
                                                kPath.string() + ": " + c.position_and_reason);
}

INSTANTIATE_TEST_SUITE_P(
    Syntax, ConfigNotJson,
    testing::Values(
        NotJson{"EmptyFile", "",
                "1:1: syntax error while parsing value - unexpected end of input; expected '[', "
                "'{', or a literal"},
        NotJson{"OnlyWhitespace", "\n\n  ",
                "3:3: syntax error while parsing value - unexpected end of input; expected '[', "
                "'{', or a literal"},
        NotJson{"Unterminated", "{",
                "1:2: syntax error while parsing object key - unexpected end of input; expected "
                "string literal"},
        NotJson{"SecondLine", "{\n  \"subagents\": ,\n}",
                "2:16: syntax error while parsing value - unexpected ','; expected '[', '{', or "
                "a literal"},
        NotJson{"TrailingComma", "{\"a\": 1,}",
                "1:9: syntax error while parsing object key - unexpected '}'; expected string "
                "literal"},
        NotJson{"TrailingContent", "{} {}",
                "1:4: syntax error while parsing value - unexpected '{'; expected end of input"},
        NotJson{"Comment", "// settings\n{}",
                "1:1: syntax error while parsing value - invalid literal; last read: '/'"},
        NotJson{"SingleQuotes", "{'a': 1}",
                "1:2: syntax error while parsing object key - invalid literal; last read: "
                "'{''; expected string literal"},
        NotJson{"SyntaxBeforeDuplicate", "{\"a\": 1 \"a\": 2}",
                "1:11: syntax error while parsing object - unexpected string literal; expected "
                "'}'"},
        NotJson{"NumberOverflow", "{\"approval\": {\"grantTtlSeconds\": 1e999}}",
                "1:38: number overflow parsing '1e999'"}),
    [](const testing::TestParamInfo<NotJson>& info) { return info.param.name; });

TEST(ConfigParse, InvalidUtf8IsInvalidJson) {
  auto config = parse("{\"subagents\": {\"provider\": \"\xff\"}}");
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().kind, ConfigError::Kind::InvalidJson);
  EXPECT_EQ(config.error().line, 1u);
  EXPECT_EQ(config.error().column, 29u);
}

TEST(ConfigParse, EmptyObjectAndEmptySectionsAreDefaults) {
  for (const char* text :
       {"{}", " \n{ }\n", R"({"subagents": {}, "filesystem": {}, "hostIPC": {}, "network": {},
                               "approval": {}})"}) {
    auto config = parse(text);
    ASSERT_TRUE(config.has_value()) << text << ": " << config.error().describe(kPath);
    EXPECT_EQ(*config, Config{}) << text;
  }
}

TEST(ConfigParse, Defaults) {
  const Config config;
  EXPECT_EQ(config.subagents.provider, SubagentProvider::Builtin);
  EXPECT_TRUE(config.filesystem.additional_allow_read.empty());
  EXPECT_EQ(config.host_ipc.mode, HostIpcMode::Off);
  EXPECT_TRUE(config.host_ipc.preflight_command_prefixes.empty());
  EXPECT_FALSE(config.host_ipc.retry_on_unix_socket_error);
  EXPECT_TRUE(config.network.allowed_domains.empty());
  EXPECT_TRUE(config.network.denied_domains.empty());
  EXPECT_TRUE(config.approval.reviewer.empty());
  EXPECT_EQ(config.approval.reviewer_timeout_seconds, 90);
  EXPECT_EQ(config.approval.grant_ttl_seconds, 60);
  EXPECT_EQ(config.approval.question_timeout_seconds, 0);
}

// The example of docs/configuration.md, "Schema".
constexpr std::string_view kIssueExample = R"({
  "subagents":  { "provider": "builtin" },
  "filesystem": { "additionalAllowRead": ["/home/user/.local/bin/rtk"] },
  "hostIPC":    { "mode": "ask", "preflightCommandPrefixes": ["tmux"],
                  "retryOnUnixSocketError": true },
  "network":    { "allowedDomains": ["github.com", "*.npmjs.org:443"],
                  "deniedDomains": ["*"] },
  "approval":   { "reviewer": ["/usr/local/bin/my-reviewer", "--strict"],
                  "reviewerTimeoutSeconds": 90, "grantTtlSeconds": 60 }
})";

std::vector<std::string> texts(const std::vector<policy::DomainPattern>& patterns) {
  std::vector<std::string> out;
  for (const auto& pattern : patterns) out.push_back(pattern.text());
  return out;
}

TEST(ConfigParse, IssueExample) {
  auto config = parse(kIssueExample);
  ASSERT_TRUE(config.has_value()) << config.error().describe(kPath);
  EXPECT_EQ(config->subagents.provider, SubagentProvider::Builtin);
  EXPECT_EQ(config->filesystem.additional_allow_read,
            std::vector<std::string>{"/home/user/.local/bin/rtk"});
  EXPECT_EQ(config->host_ipc.mode, HostIpcMode::Ask);
  EXPECT_EQ(config->host_ipc.preflight_command_prefixes, std::vector<std::string>{"tmux"});
  EXPECT_TRUE(config->host_ipc.retry_on_unix_socket_error);
  EXPECT_EQ(texts(config->network.allowed_domains),
            (std::vector<std::string>{"github.com", "*.npmjs.org:443"}));
  EXPECT_EQ(texts(config->network.denied_domains), std::vector<std::string>{"*"});
  EXPECT_EQ(config->approval.reviewer,
            (std::vector<std::string>{"/usr/local/bin/my-reviewer", "--strict"}));
  EXPECT_EQ(config->approval.reviewer_timeout_seconds, 90);
  EXPECT_EQ(config->approval.grant_ttl_seconds, 60);
}

TEST(ConfigParse, ProvidersAndModes) {
  EXPECT_EQ(parse(R"({"subagents": {"provider": "pi-subagents"}})")->subagents.provider,
            SubagentProvider::PiSubagents);
  EXPECT_EQ(parse(R"({"subagents": {"provider": "off"}})")->subagents.provider,
            SubagentProvider::Off);
  EXPECT_EQ(parse(R"({"hostIPC": {"mode": "off"}})")->host_ipc.mode, HostIpcMode::Off);
  EXPECT_FALSE(parse(R"({"hostIPC": {"retryOnUnixSocketError": false}})")
                   ->host_ipc.retry_on_unix_socket_error);
}

TEST(ConfigParse, WorkerExtensionsAreAbsolutePathsDeduplicatedInOrder) {
  auto config = parse(R"({"subagents": {"workerExtensions": ["/e/b.ts", "/e/a", "/e/b.ts"]}})");
  ASSERT_TRUE(config.has_value()) << config.error().describe(kPath);
  EXPECT_EQ(config->subagents.worker_extensions, (std::vector<std::string>{"/e/b.ts", "/e/a"}));
  for (const char* bad : {R"("/e")", R"(["e.ts"])", R"([1])", R"([""])"}) {
    auto refused = parse(std::string(R"({"subagents": {"workerExtensions": )") + bad + "}}");
    ASSERT_FALSE(refused.has_value()) << bad;
    EXPECT_EQ(refused.error().describe(kPath),
              "invalid pi-sandbox configuration: subagents.workerExtensions must be an array of "
              "absolute paths")
        << bad;
  }
}

TEST(ConfigParse, ExternalWorkerIsolationIsOffOrEnforce) {
  EXPECT_EQ(parse("{}")->subagents.external_worker_isolation, ExternalWorkerIsolation::Off);
  auto enforce =
      parse(R"({"subagents": {"provider": "pi-subagents", "externalWorkerIsolation": "enforce"}})");
  ASSERT_TRUE(enforce.has_value()) << enforce.error().describe(kPath);
  EXPECT_EQ(enforce->subagents.external_worker_isolation, ExternalWorkerIsolation::Enforce);
  EXPECT_EQ(parse(R"({"subagents": {"externalWorkerIsolation": "off"}})")
                ->subagents.external_worker_isolation,
            ExternalWorkerIsolation::Off);
  for (const char* bad :
       {R"("Enforce")", R"("on")", R"("")", R"(true)", R"(null)", R"(["enforce"])"}) {
    auto refused = parse(std::string(R"({"subagents": {"externalWorkerIsolation": )") + bad + "}}");
    ASSERT_FALSE(refused.has_value()) << bad;
    EXPECT_EQ(refused.error().describe(kPath),
              "invalid pi-sandbox configuration: subagents.externalWorkerIsolation must be off or "
              "enforce")
        << bad;
  }
  auto unknown = parse(R"({"subagents": {"externalWorkerIsolations": "enforce"}})");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().describe(kPath),
            "invalid pi-sandbox configuration: unknown subagents key: externalWorkerIsolations");
}

TEST(ConfigParse, AdditionalAllowReadIsDeduplicatedInOrderAndNotTrimmed) {
  auto config = parse(R"({"filesystem": {"additionalAllowRead": ["/b", "/a ", "/b", "/a"]}})");
  ASSERT_TRUE(config.has_value()) << config.error().describe(kPath);
  EXPECT_EQ(config->filesystem.additional_allow_read,
            (std::vector<std::string>{"/b", "/a ", "/a"}));
}

TEST(ConfigParse, AdditionalAllowWriteAndToolchainSwitch) {
  auto config = parse(
      R"({"filesystem": {"additionalAllowWrite": ["/c", "/d", "/c"], "exposeHomeToolchains": false}})");
  ASSERT_TRUE(config.has_value()) << config.error().describe(kPath);
  EXPECT_EQ(config->filesystem.additional_allow_write, (std::vector<std::string>{"/c", "/d"}));
  EXPECT_FALSE(config->filesystem.expose_home_toolchains);
  EXPECT_TRUE(parse("{}")->filesystem.expose_home_toolchains);
}

// A credential of the table is handed in only by name (docs/security.md, "Handing a credential
// in"): a row, or a file under a directory row, kept without its `~/`.
TEST(ConfigParse, ExposeCredentialsNamesRowsOfTheTable) {
  auto config = parse(
      R"({"filesystem": {"exposeCredentials": ["~/.config/gh/hosts.yml", "~/.netrc",
          "~/.gnupg/private-keys-v1.d", "~/.gnupg/private-keys-v1.d/AB12.key", "~/.netrc"]}})");
  ASSERT_TRUE(config.has_value()) << config.error().describe(kPath);
  EXPECT_EQ(config->filesystem.expose_credentials,
            (std::vector<std::string>{".config/gh/hosts.yml", ".netrc", ".gnupg/private-keys-v1.d",
                                      ".gnupg/private-keys-v1.d/AB12.key"}));
  EXPECT_TRUE(parse("{}")->filesystem.expose_credentials.empty());
}

TEST(ConfigParse, ProtectionIsGuardUnlessStrict) {
  EXPECT_FALSE(parse("{}")->filesystem.strict_protection);
  EXPECT_FALSE(parse(R"({"filesystem": {"protection": "guard"}})")->filesystem.strict_protection);
  EXPECT_TRUE(parse(R"({"filesystem": {"protection": "strict"}})")->filesystem.strict_protection);
}

TEST(ConfigParse, PrefixesAreTrimmedThenDeduplicated) {
  auto config = parse(R"({"hostIPC": {"preflightCommandPrefixes": [" tmux ", "tmux"]}})");
  ASSERT_TRUE(config.has_value()) << config.error().describe(kPath);
  EXPECT_EQ(config->host_ipc.preflight_command_prefixes, std::vector<std::string>{"tmux"});

  // JavaScript's trim(), as the reference: Unicode spaces too; inner spaces kept.
  config = parse(R"({"hostIPC": {"preflightCommandPrefixes":
                      ["\u00a0docker ps\u3000", "\tgpg\n", "docker ps"]}})");
  ASSERT_TRUE(config.has_value()) << config.error().describe(kPath);
  EXPECT_EQ(config->host_ipc.preflight_command_prefixes,
            (std::vector<std::string>{"docker ps", "gpg"}));
}

TEST(ConfigParse, DomainsAreCanonicalAndDeduplicated) {
  auto config = parse(R"({"network": {
      "allowedDomains": ["EXAMPLE.COM", "example.com.", " example.com ", "*.example.com",
                         "example.com:443"],
      "deniedDomains": ["*", "*:22", " * "]}})");
  ASSERT_TRUE(config.has_value()) << config.error().describe(kPath);
  EXPECT_EQ(texts(config->network.allowed_domains),
            (std::vector<std::string>{"example.com", "*.example.com", "example.com:443"}));
  EXPECT_EQ(texts(config->network.denied_domains), (std::vector<std::string>{"*", "*:22"}));
}

TEST(ConfigParse, DeniedDomainReasonsAreKeyedByTheCanonicalEntryAndRoundTrip) {
  auto config = parse(R"({"network": {
      "deniedDomains": ["Pastebin.COM", "*.corp.example:22"],
      "deniedDomainReasons": {"pastebin.com.": "  uploads leave the company  ",
                              "*.corp.example:22": "use the bastion"}}})");
  ASSERT_TRUE(config.has_value()) << config.error().describe(kPath);
  EXPECT_EQ(config->network.denied_domain_reasons,
            (std::map<std::string, std::string, std::less<>>{
                {"pastebin.com", "uploads leave the company"},
                {"*.corp.example:22", "use the bastion"}}));
  auto again = parse(to_json(*config));
  ASSERT_TRUE(again.has_value()) << again.error().describe(kPath);
  EXPECT_EQ(*again, *config);
}

const std::string kReasonValue =
    " must be a non-empty string of at most 200 characters without control characters";

INSTANTIATE_TEST_SUITE_P(
    DeniedDomainReasons, ConfigRefused,
    testing::Values(
        Refused{"NotAnObject",
                R"({"network": {"deniedDomains": ["a.test"], "deniedDomainReasons": ["a.test"]}})",
                "network.deniedDomainReasons must be an object mapping network.deniedDomains "
                "entries to reasons"},
        Refused{
            "KeyNotDenied",
            R"({"network": {"deniedDomains": ["a.test"], "deniedDomainReasons": {"b.test": "x"}}})",
            "network.deniedDomainReasons key b.test is not an entry of network.deniedDomains"},
        Refused{
            "KeyOnlyAllowed",
            R"({"network": {"allowedDomains": ["a.test"], "deniedDomainReasons": {"a.test": "x"}}})",
            "network.deniedDomainReasons key a.test is not an entry of network.deniedDomains"},
        Refused{
            "KeyOtherPort",
            R"({"network": {"deniedDomains": ["a.test:22"], "deniedDomainReasons": {"a.test": "x"}}})",
            "network.deniedDomainReasons key a.test is not an entry of network.deniedDomains"},
        Refused{
            "ValueBlank",
            R"({"network": {"deniedDomains": ["a.test"], "deniedDomainReasons": {"a.test": "  "}}})",
            "network.deniedDomainReasons.a.test" + kReasonValue},
        Refused{
            "ValueNumber",
            R"({"network": {"deniedDomains": ["a.test"], "deniedDomainReasons": {"a.test": 1}}})",
            "network.deniedDomainReasons.a.test" + kReasonValue},
        Refused{
            "ValueNewline",
            R"({"network": {"deniedDomains": ["a.test"], "deniedDomainReasons": {"a.test": "a\nb"}}})",
            "network.deniedDomainReasons.a.test" + kReasonValue},
        Refused{
            "ValueEscape",
            R"({"network": {"deniedDomains": ["a.test"], "deniedDomainReasons": {"a.test": "\u001b[2J"}}})",
            "network.deniedDomainReasons.a.test" + kReasonValue},
        Refused{
            "ValueBidiControl",
            R"({"network": {"deniedDomains": ["a.test"], "deniedDomainReasons": {"a.test": "ok\u202eevil"}}})",
            "network.deniedDomainReasons.a.test" + kReasonValue},
        Refused{"ValueTooLong",
                R"({"network": {"deniedDomains": ["a.test"], "deniedDomainReasons": {"a.test": ")" +
                    std::string(201, 'x') + R"("}}})",
                "network.deniedDomainReasons.a.test" + kReasonValue},
        Refused{
            "DuplicateKey",
            R"({"network": {"deniedDomains": ["a.test"], "deniedDomainReasons": {"a.test": "x", "a.test": "y"}}})",
            "duplicate network.deniedDomainReasons key: a.test"}),
    test_name);

TEST(ConfigParse, DeniedDomainReasonOf200CharactersIsAccepted) {
  const std::string reason(199, 'x');
  auto config =
      parse(R"({"network": {"deniedDomains": ["a.test"], "deniedDomainReasons": {"a.test": ")" +
            reason + "\u00e9\"}}}");
  ASSERT_TRUE(config.has_value()) << config.error().describe(kPath);
  EXPECT_EQ(config->network.denied_domain_reasons.at("a.test"), reason + "\u00e9");
}

TEST(ConfigParse, ReviewerRetriesAndFailureModeRoundTrip) {
  auto config = parse(R"({"approval": {"reviewerRetries": 0, "reviewerFailureMode": "defer"}})");
  ASSERT_TRUE(config.has_value()) << config.error().describe(kPath);
  EXPECT_EQ(config->approval.reviewer_retries, 0);
  EXPECT_EQ(config->approval.reviewer_failure, ReviewerFailureMode::Defer);
  auto again = parse(to_json(*config));
  ASSERT_TRUE(again.has_value()) << again.error().describe(kPath);
  EXPECT_EQ(*again, *config);
  EXPECT_EQ(Config{}.approval.reviewer_retries, 2);
  EXPECT_EQ(Config{}.approval.reviewer_failure, ReviewerFailureMode::Deny);
}

const std::string kRetries = "approval.reviewerRetries must be an integer between 0 and 5";
const std::string kFailureMode = "approval.reviewerFailureMode must be one of deny, defer";

INSTANTIATE_TEST_SUITE_P(
    ReviewerFailure, ConfigRefused,
    testing::Values(
        Refused{"RetriesNegative", R"({"approval": {"reviewerRetries": -1}})", kRetries},
        Refused{"RetriesTooMany", R"({"approval": {"reviewerRetries": 6}})", kRetries},
        Refused{"RetriesFraction", R"({"approval": {"reviewerRetries": 1.5}})", kRetries},
        Refused{"RetriesString", R"({"approval": {"reviewerRetries": "2"}})", kRetries},
        Refused{"ModeUnknown", R"({"approval": {"reviewerFailureMode": "allow"}})", kFailureMode},
        Refused{"ModeCase", R"({"approval": {"reviewerFailureMode": "Deny"}})", kFailureMode},
        Refused{"ModeBool", R"({"approval": {"reviewerFailureMode": false}})", kFailureMode}),
    test_name);

TEST(ConfigParse, InvalidDomainCarriesAHint) {
  auto config = parse(R"({"network": {"allowedDomains": ["https://github.com"]}})");
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().hint,
            "the entry has a scheme (like https:// or unix://); a domain pattern is example.com "
            "or *.example.com (strict subdomains), optionally with :port");
  const core::Error error = config.error().to_error(kPath);
  EXPECT_EQ(error.message, config.error().message);
  EXPECT_EQ(error.hint, config.error().hint);
}

TEST(ConfigParse, ApprovalBounds) {
  auto low = parse(R"({"approval": {"reviewerTimeoutSeconds": 1, "grantTtlSeconds": 1}})");
  ASSERT_TRUE(low.has_value()) << low.error().describe(kPath);
  EXPECT_EQ(low->approval.reviewer_timeout_seconds, 1);
  EXPECT_EQ(low->approval.grant_ttl_seconds, 1);
  auto high = parse(R"({"approval": {"reviewerTimeoutSeconds": 600, "grantTtlSeconds": 300,
                                      "reviewer": ["/r"]}})");
  ASSERT_TRUE(high.has_value()) << high.error().describe(kPath);
  EXPECT_EQ(high->approval.reviewer_timeout_seconds, 600);
  EXPECT_EQ(high->approval.grant_ttl_seconds, 300);
  EXPECT_EQ(high->approval.reviewer, std::vector<std::string>{"/r"});
  // questionTimeoutSeconds: 0 (no limit of its own) up to one day.
  for (const int seconds : {0, 1, 120, 86400}) {
    auto question =
        parse(R"({"approval": {"questionTimeoutSeconds": )" + std::to_string(seconds) + "}}");
    ASSERT_TRUE(question.has_value()) << question.error().describe(kPath);
    EXPECT_EQ(question->approval.question_timeout_seconds, seconds);
  }
}

TEST(ConfigParse, ReviewerArgumentsMayBeEmptyStrings) {
  auto config = parse(R"({"approval": {"reviewer": ["/bin/r", "", "--x"]}})");
  ASSERT_TRUE(config.has_value()) << config.error().describe(kPath);
  EXPECT_EQ(config->approval.reviewer, (std::vector<std::string>{"/bin/r", "", "--x"}));
}

TEST(ConfigToJson, DefaultsFilledIn) {
  EXPECT_EQ(to_json(Config{}), R"({
  "subagents": {
    "provider": "builtin",
    "workerExtensions": [],
    "externalWorkerIsolation": "off"
  },
  "filesystem": {
    "additionalAllowRead": [],
    "additionalAllowWrite": [],
    "exposeHomeToolchains": true,
    "protection": "guard",
    "exposeCredentials": []
  },
  "hostIPC": {
    "mode": "off",
    "preflightCommandPrefixes": [],
    "retryOnUnixSocketError": false,
    "allowedSockets": []
  },
  "network": {
    "allowedDomains": [],
    "deniedDomains": [],
    "deniedDomainReasons": {}
  },
  "approval": {
    "reviewerTimeoutSeconds": 90,
    "reviewerRetries": 2,
    "reviewerFailureMode": "deny",
    "grantTtlSeconds": 60,
    "questionTimeoutSeconds": 0
  },
  "limits": {
    "maxProcesses": 1024,
    "memory": "50%",
    "tmpfs": "25%",
    "cpu": 50
  },
  "environment": {
    "passThrough": [],
    "remove": []
  },
  "pi": {
    "fileTools": "sandboxed"
  }
})");
}

TEST(ConfigPi, FileToolsSandboxedByDefaultHostWhenSaidAndNothingElse) {
  EXPECT_EQ(Config{}.pi.file_tools, PiFileTools::Sandboxed);
  auto host = parse(R"({"pi": {"fileTools": "host"}})");
  ASSERT_TRUE(host.has_value()) << host.error().describe(kPath);
  EXPECT_EQ(host->pi.file_tools, PiFileTools::Host);
  EXPECT_EQ(parse(to_json(*host))->pi.file_tools, PiFileTools::Host);
  auto sandboxed = parse(R"({"pi": {"fileTools": "sandboxed"}})");
  ASSERT_TRUE(sandboxed.has_value());
  EXPECT_EQ(sandboxed->pi.file_tools, PiFileTools::Sandboxed);
  for (const char* text : {R"({"pi": {"fileTools": "Host"}})", R"({"pi": {"fileTools": true}})",
                           R"({"pi": {"fileTools": null}})"}) {
    auto refused = parse(text);
    ASSERT_FALSE(refused.has_value()) << text;
    EXPECT_EQ(refused.error().describe(kPath),
              "invalid pi-sandbox configuration: pi.fileTools must be one of sandboxed, host")
        << text;
  }
  auto unknown = parse(R"({"pi": {"fileTools": "host", "tools": []}})");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().describe(kPath),
            "invalid pi-sandbox configuration: unknown pi key: tools");
  auto not_object = parse(R"({"pi": "host"})");
  ASSERT_FALSE(not_object.has_value());
  EXPECT_EQ(not_object.error().describe(kPath),
            "invalid pi-sandbox configuration: pi must be an object");
}

TEST(ConfigEnvironment, ListsAsWrittenDuplicatesRemovedAndTheirRoundTrip) {
  auto config =
      parse(R"({"environment": {"passThrough": ["GITHUB_TOKEN", "*_API_KEY", "GITHUB_TOKEN"],)"
            R"( "remove": ["DATABASE_URL", "corp_*"]}})");
  ASSERT_TRUE(config.has_value()) << config.error().describe(kPath);
  EXPECT_EQ(config->environment.pass_through,
            (std::vector<std::string>{"GITHUB_TOKEN", "*_API_KEY"}));
  EXPECT_EQ(config->environment.remove, (std::vector<std::string>{"DATABASE_URL", "corp_*"}));
  auto again = parse(to_json(*config));
  ASSERT_TRUE(again.has_value()) << again.error().describe(kPath);
  EXPECT_EQ(*again, *config);
}

TEST(ConfigEnvironment, ExactMessages) {
  const std::string prefix(kInvalidPrefix);
  const std::string hint =
      "an entry is a variable name (ASCII letters, digits and _) in which * matches any run of "
      "characters, e.g. GITHUB_TOKEN or *_API_KEY";
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {R"({"environment": []})", "environment must be an object", ""},
      {R"({"environment": null})", "environment must be an object", ""},
      {R"({"environment": {"pass": []}})", "unknown environment key: pass", ""},
      {R"({"environment": {"a": 1, "b": 2}})", "unknown environment keys: a, b", ""},
      {R"({"environment": {"passThrough": "X"}})",
       "environment.passThrough must be an array of non-empty strings", ""},
      {R"({"environment": {"remove": ["X", ""]}})",
       "environment.remove must be an array of non-empty strings", ""},
      {R"({"environment": {"remove": [null]}})",
       "environment.remove must be an array of non-empty strings", ""},
      {R"({"environment": {"passThrough": ["OK", "A-B"]}})",
       "environment.passThrough[1] contains an invalid variable name pattern: A-B", hint},
      {R"({"environment": {"remove": ["X=1"]}})",
       "environment.remove[0] contains an invalid variable name pattern: X=1", hint},
      {R"({"environment": {"remove": [" X"]}})",
       "environment.remove[0] contains an invalid variable name pattern:  X", hint},
      {R"({"environment": {"remove": ["X"], "remove": []}})", "duplicate environment key: remove",
       ""},
  };
  for (const auto& [text, message, expected_hint] : cases) {
    auto config = parse(text);
    ASSERT_FALSE(config.has_value()) << text;
    EXPECT_EQ(config.error().describe(kPath), prefix + message) << text;
    EXPECT_EQ(config.error().hint, expected_hint) << text;
  }
}

TEST(ConfigLimits, ValuesAndTheirRoundTrip) {
  auto config =
      parse(R"({"limits": {"maxProcesses": 64, "memory": 536870912, "tmpfs": "10%", "cpu": 20}})");
  ASSERT_TRUE(config.has_value()) << config.error().describe(kPath);
  EXPECT_EQ(config->limits.max_processes, 64u);
  EXPECT_EQ(config->limits.memory, (policy::SizeLimit{policy::SizeLimit::Unit::Bytes, 536870912}));
  EXPECT_EQ(config->limits.tmpfs, (policy::SizeLimit{policy::SizeLimit::Unit::Percent, 10}));
  EXPECT_EQ(config->limits.cpu_weight, 20u);
  const auto again = parse(to_json(*config));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, *config);
}

TEST(ConfigLimits, EveryBadValueIsRefusedWithItsRuleAndTheValue) {
  const auto processes = [](const char* got) {
    return std::string(
               "invalid pi-sandbox configuration: limits.maxProcesses must be an integer between 8 "
               "and 4194304, got ") +
           got;
  };
  const auto size = [](const char* key, const char* got) {
    return std::string("invalid pi-sandbox configuration: limits.") + key +
           " must be a number of bytes (from 16777216 to 1125899906842624) or a percentage of "
           "the machine's memory from \"1%\" to \"100%\", got " +
           got;
  };
  const auto cpu = [](const char* got) {
    return std::string(
               "invalid pi-sandbox configuration: limits.cpu must be an integer between 1 and "
               "10000 (a cgroup's weight; 100 is even), got ") +
           got;
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"limits": {"maxProcesses": 0}})", processes("0")},
      {R"({"limits": {"maxProcesses": 7}})", processes("7")},
      {R"({"limits": {"maxProcesses": 4194305}})", processes("4194305")},
      {R"({"limits": {"maxProcesses": -1}})", processes("-1")},
      {R"({"limits": {"maxProcesses": "10"}})", processes("\"10\"")},
      {R"({"limits": {"maxProcesses": 1.5}})", processes("1.5")},
      {R"({"limits": {"maxProcesses": null}})", processes("null")},
      {R"({"limits": {"memory": 1024}})", size("memory", "1024")},
      {R"({"limits": {"memory": 1125899906842625}})", size("memory", "1125899906842625")},
      {R"({"limits": {"memory": 9223372036854775808}})", size("memory", "9223372036854775808")},
      {R"({"limits": {"memory": "0%"}})", size("memory", "\"0%\"")},
      {R"({"limits": {"memory": "101%"}})", size("memory", "\"101%\"")},
      {R"({"limits": {"memory": "05%"}})", size("memory", "\"05%\"")},
      {R"({"limits": {"memory": "50"}})", size("memory", "\"50\"")},
      {R"({"limits": {"memory": "1G"}})", size("memory", "\"1G\"")},
      {R"({"limits": {"memory": "%"}})", size("memory", "\"%\"")},
      {R"({"limits": {"memory": -5}})", size("memory", "-5")},
      {R"({"limits": {"memory": "a\u0000b"}})", size("memory", "\"a\\u0000b\"")},
      {R"({"limits": {"tmpfs": "-5%"}})", size("tmpfs", "\"-5%\"")},
      {R"({"limits": {"tmpfs": true}})", size("tmpfs", "true")},
      {R"({"limits": {"cpu": 0}})", cpu("0")},
      {R"({"limits": {"cpu": 10001}})", cpu("10001")},
      {R"({"limits": {"swap": 1}})", "invalid pi-sandbox configuration: unknown limits key: swap"},
      {R"({"limits": []})", "invalid pi-sandbox configuration: limits must be an object"},
  };
  for (const auto& [text, message] : cases) {
    const auto config = parse(text);
    ASSERT_FALSE(config.has_value()) << text;
    EXPECT_EQ(config.error().describe(kPath), message) << text;
  }
}

TEST(ResolveLimits, PercentagesOfTheMachineBytesAsGivenTmpfsWithinMemory) {
  constexpr std::uint64_t kGiB = 1ULL << 30;
  const auto defaults = policy::resolve_limits({}, 24 * kGiB);
  EXPECT_EQ(defaults, (policy::ResourceLimits{1024, 12 * kGiB - 12 * kGiB % 4096,
                                              6 * kGiB - 6 * kGiB % 4096, 50}));
  policy::LimitsSpec spec;
  spec.memory = {policy::SizeLimit::Unit::Bytes, 100ULL << 20};
  spec.tmpfs = {policy::SizeLimit::Unit::Percent, 100};
  const auto capped = policy::resolve_limits(spec, 24 * kGiB);
  EXPECT_EQ(capped.memory_bytes, 100ULL << 20);
  EXPECT_EQ(capped.tmpfs_bytes, 100ULL << 20);  // never above the memory it is charged to
  spec.memory = {policy::SizeLimit::Unit::Percent, 1};
  EXPECT_EQ(policy::resolve_limits(spec, 100ULL << 20).memory_bytes, policy::kMinSizeBytes);
  EXPECT_EQ(policy::resolve_limits(spec, (4ULL << 30) + 4095).memory_bytes % 4096, 0u);
  EXPECT_EQ(policy::mebibytes(100ULL << 20), "100 MiB");
}

TEST(ConfigToJson, IssueExampleWithCanonicalDomains) {
  auto config = parse(R"({"network": {"allowedDomains": ["GitHub.com."]},
                          "approval": {"reviewer": ["/r", "--strict"], "grantTtlSeconds": 5}})");
  ASSERT_TRUE(config.has_value()) << config.error().describe(kPath);
  const std::string json = to_json(*config);
  EXPECT_NE(json.find(R"("allowedDomains": [
      "github.com"
    ])"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("approval": {
    "reviewer": [
      "/r",
      "--strict"
    ],
    "reviewerTimeoutSeconds": 90,
    "reviewerRetries": 2,
    "reviewerFailureMode": "deny",
    "grantTtlSeconds": 5,
    "questionTimeoutSeconds": 0
  })"),
            std::string::npos)
      << json;
}

TEST(ConfigToJson, RoundTrips) {
  for (std::string_view text : {std::string_view("{}"), kIssueExample,
                                std::string_view(R"({"subagents": {"provider": "pi-subagents",
                                            "workerExtensions": ["/x/e.ts"],
                                            "externalWorkerIsolation": "enforce"},
                             "hostIPC": {"preflightCommandPrefixes": [" a ", "b c"]},
                             "network": {"deniedDomains": ["*.X.org:8080", "*:22"]}})")}) {
    auto config = parse(text);
    ASSERT_TRUE(config.has_value()) << text;
    auto again = parse(to_json(*config));
    ASSERT_TRUE(again.has_value()) << to_json(*config);
    EXPECT_EQ(*again, *config) << text;
  }
}

TEST(ConfigStrings, Names) {
  EXPECT_EQ(to_string(SubagentProvider::Builtin), "builtin");
  EXPECT_EQ(to_string(SubagentProvider::PiSubagents), "pi-subagents");
  EXPECT_EQ(to_string(SubagentProvider::Off), "off");
  EXPECT_EQ(to_string(HostIpcMode::Off), "off");
  EXPECT_EQ(to_string(HostIpcMode::Ask), "ask");
}

// ---------------------------------------------------------------------------------------
// Loader (compatibility C1, C9).

/// A temporary home directory, removed with everything in it.
class TempHome {
 public:
  TempHome() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                          "/pi-sandbox-config-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = pattern;
  }
  TempHome(const TempHome&) = delete;
  TempHome& operator=(const TempHome&) = delete;
  ~TempHome() {
    std::error_code ignored;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(path_, ignored);
  }
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_file(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

TEST(ConfigLoader, DefaultLocations) {
  const DefaultLocations locations = default_locations("/home/u");
  EXPECT_EQ(locations.current, fs::path("/home/u/.pi/agent/extensions/pi-sandbox/config.json"));
  EXPECT_EQ(locations.legacy, fs::path("/home/u/.pi/agent/pi-sandbox.json"));
}

TEST(ConfigLoader, MissingFilesGiveDefaultsWithoutSource) {
  TempHome home;
  auto loaded = load(LoadOptions{.home = home.path()});
  ASSERT_TRUE(loaded.has_value()) << loaded.error().describe();
  ASSERT_NE(loaded->config, nullptr);
  EXPECT_EQ(*loaded->config, Config{});
  EXPECT_EQ(loaded->source, std::nullopt);
}

TEST(ConfigLoader, ReadsTheCurrentLocation) {
  TempHome home;
  const DefaultLocations locations = default_locations(home.path());
  write_file(locations.current, R"({"hostIPC": {"mode": "ask"}})");
  auto loaded = load(LoadOptions{.home = home.path()});
  ASSERT_TRUE(loaded.has_value()) << loaded.error().describe();
  EXPECT_EQ(loaded->config->host_ipc.mode, HostIpcMode::Ask);
  EXPECT_EQ(loaded->source, locations.current);
}

TEST(ConfigLoader, ReadsTheLegacyLocationWhenTheCurrentIsMissing) {
  TempHome home;
  const DefaultLocations locations = default_locations(home.path());
  write_file(locations.legacy, R"({"subagents": {"provider": "off"}})");
  auto loaded = load(LoadOptions{.home = home.path()});
  ASSERT_TRUE(loaded.has_value()) << loaded.error().describe();
  EXPECT_EQ(loaded->config->subagents.provider, SubagentProvider::Off);
  EXPECT_EQ(loaded->source, locations.legacy);
}

TEST(ConfigLoader, CurrentLocationWinsOverLegacy) {
  TempHome home;
  const DefaultLocations locations = default_locations(home.path());
  write_file(locations.current, R"({"subagents": {"provider": "pi-subagents"}})");
  write_file(locations.legacy, R"({"subagents": {"provider": "off"}})");
  auto loaded = load(LoadOptions{.home = home.path()});
  ASSERT_TRUE(loaded.has_value()) << loaded.error().describe();
  EXPECT_EQ(loaded->config->subagents.provider, SubagentProvider::PiSubagents);
  EXPECT_EQ(loaded->source, locations.current);
}

TEST(ConfigLoader, InvalidCurrentFileDoesNotFallBackToLegacy) {
  TempHome home;
  const DefaultLocations locations = default_locations(home.path());
  write_file(locations.current, "[]");
  write_file(locations.legacy, "{}");
  auto loaded = load(LoadOptions{.home = home.path()});
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().message, "invalid pi-sandbox configuration: root must be an object");
}

TEST(ConfigLoader, UnreadableCurrentFileDoesNotFallBackToLegacy) {
  TempHome home;
  const DefaultLocations locations = default_locations(home.path());
  // A directory at the file path fails with EISDIR for every user, root included.
  fs::create_directories(locations.current);
  write_file(locations.legacy, "{}");
  auto loaded = load(LoadOptions{.home = home.path()});
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().message, "failed to read pi-sandbox configuration at " +
                                        locations.current.string() + ": EISDIR (Is a directory)");
  EXPECT_EQ(loaded.error().code, EISDIR);
}

TEST(ConfigLoader, PermissionDeniedIsAReadError) {
  TempHome home;
  const DefaultLocations locations = default_locations(home.path());
  write_file(locations.current, "{}");
  fs::permissions(locations.current, fs::perms::none);
  const std::string expected = "failed to read pi-sandbox configuration at " +
                               locations.current.string() + ": EACCES (Permission denied)";
  if (::geteuid() != 0) {
    auto loaded = load(LoadOptions{.home = home.path()});
    ASSERT_FALSE(loaded.has_value());
    EXPECT_EQ(loaded.error().message, expected);
    return;
  }
  // Root reads a mode-000 file: check as an unprivileged user (nobody) in a child, with the
  // home made traversable for it.
  fs::permissions(home.path(), fs::perms::owner_all | fs::perms::others_exec);
  for (fs::path dir = locations.current.parent_path(); dir != home.path(); dir = dir.parent_path())
    fs::permissions(dir, fs::perms::owner_all | fs::perms::others_exec);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) ::_exit(2);
    auto loaded = load(LoadOptions{.home = home.path()});
    ::_exit(!loaded.has_value() && loaded.error().message == expected ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "as nobody: expected `" << expected << "`";
}

TEST(ConfigLoader, NotADirectoryOnTheWayIsAReadError) {
  TempHome home;
  // `.pi` is a file: ENOTDIR, not ENOENT, so neither defaults nor the legacy file.
  write_file(home.path() / ".pi", "");
  auto loaded = load(LoadOptions{.home = home.path()});
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().message, "failed to read pi-sandbox configuration at " +
                                        default_locations(home.path()).current.string() +
                                        ": ENOTDIR (Not a directory)");
}

TEST(ConfigLoader, FifoIsNotARegularFile) {
  TempHome home;
  const DefaultLocations locations = default_locations(home.path());
  fs::create_directories(locations.current.parent_path());
  ASSERT_EQ(::mkfifo(locations.current.c_str(), 0600), 0);
  auto loaded = load(LoadOptions{.home = home.path()});
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().message, "failed to read pi-sandbox configuration at " +
                                        locations.current.string() + ": not a regular file");
}

TEST(ConfigLoader, InvalidJsonNamesThePath) {
  TempHome home;
  const DefaultLocations locations = default_locations(home.path());
  write_file(locations.legacy, "");
  auto loaded = load(LoadOptions{.home = home.path()});
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().message,
            "invalid JSON in pi-sandbox configuration at " + locations.legacy.string() +
                ": 1:1: syntax error while parsing value - unexpected end of input; expected "
                "'[', '{', or a literal");
}

TEST(ConfigLoader, ExplicitPathIsTheOnlyFileRead) {
  TempHome home;
  const DefaultLocations locations = default_locations(home.path());
  write_file(locations.current, R"({"subagents": {"provider": "off"}})");
  const fs::path explicit_path = home.path() / "other.json";
  write_file(explicit_path, R"({"subagents": {"provider": "pi-subagents"}})");
  auto loaded = load(LoadOptions{.explicit_path = explicit_path, .home = home.path()});
  ASSERT_TRUE(loaded.has_value()) << loaded.error().describe();
  EXPECT_EQ(loaded->config->subagents.provider, SubagentProvider::PiSubagents);
  EXPECT_EQ(loaded->source, explicit_path);
}

TEST(ConfigLoader, MissingExplicitPathIsAnError) {
  TempHome home;
  const fs::path explicit_path = home.path() / "missing.json";
  auto loaded = load(LoadOptions{.explicit_path = explicit_path, .home = home.path()});
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().message, "failed to read pi-sandbox configuration at " +
                                        explicit_path.string() +
                                        ": ENOENT (No such file or directory)");
  EXPECT_EQ(loaded.error().code, ENOENT);
}

TEST(ConfigLoader, InvalidDomainKeepsItsHint) {
  TempHome home;
  write_file(default_locations(home.path()).current,
             R"({"network": {"allowedDomains": ["github.com/example-org/*"]}})");
  auto loaded = load(LoadOptions{.home = home.path()});
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().message,
            "invalid pi-sandbox configuration: network.allowedDomains[0] contains an invalid "
            "domain pattern: github.com/example-org/*");
  EXPECT_NE(loaded.error().hint.find("has a path"), std::string::npos);
}

TEST(ConfigLoader, TooLargeFileIsAReadError) {
  TempHome home;
  const fs::path path = default_locations(home.path()).current;
  write_file(path, "{}" + std::string(kMaxConfigBytes, ' '));
  auto loaded = load(LoadOptions{.home = home.path()});
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().message, "failed to read pi-sandbox configuration at " + path.string() +
                                        ": larger than 1048576 bytes");
}

TEST(ConfigLoader, RelativeHomeIsRefused) {
  auto loaded = load(LoadOptions{.home = "relative/home"});
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().message,
            "pi-sandbox configuration: home directory is not an absolute path: relative/home");
}

}  // namespace
}  // namespace pisandbox::config
