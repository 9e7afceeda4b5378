// policy/credential_lines.hpp: each format's copy, byte for byte, and what it names as removed.
#include "policy/credential_lines.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace pisandbox::policy {
namespace {

using Removed = std::vector<RemovedItem>;

void expect_no_secret(const SanitizedConfig& out) {
  EXPECT_EQ(out.bytes.find("SECRET"), std::string::npos) << out.bytes;
  for (const auto& item : out.removed) EXPECT_EQ(item.key.find("SECRET"), std::string::npos);
}

TEST(CredentialLines, NpmrcLosesItsTokensAndKeepsRegistryCaAndProxy) {
  const auto out = sanitize_config(ConfigFormat::Npmrc,
                                   "registry=https://registry.example/\n"
                                   "//registry.example/:_authToken=SECRET1\n"
                                   "cafile=/etc/ssl/corp.pem\n"
                                   "; a comment\n"
                                   "_auth = SECRET2\n"
                                   "@corp:registry=https://user:SECRET3@npm.corp/\n"
                                   "//npm.corp/:_password=SECRET4\n"
                                   "//npm.corp/:username=deploy\n"
                                   "email=dev@example.com\n"
                                   "proxy=http://proxy.corp:3128\n"
                                   "key=SECRET5\n"
                                   "_authToken[]=SECRET6\n"
                                   "\"_auth\\u0054oken\"=SECRET7\n"
                                   "${TOKEN_KEY}=SECRET8\n"
                                   "SECRET9\n"
                                   "strict-ssl=true");
  EXPECT_EQ(out.bytes,
            "registry=https://registry.example/\n"
            "cafile=/etc/ssl/corp.pem\n"
            "; a comment\n"
            "@corp:registry=https://npm.corp/\n"
            "//npm.corp/:username=deploy\n"
            "email=dev@example.com\n"
            "proxy=http://proxy.corp:3128\n"
            "strict-ssl=true");
  EXPECT_EQ(out.removed, (Removed{{2, "//registry.example/:_authToken"},
                                  {5, "_auth"},
                                  {6, "@corp:registry (user:password of a URL)"},
                                  {7, "//npm.corp/:_password"},
                                  {11, "key"},
                                  {12, "_authToken"},
                                  {13, "_auth\\u0054oken"},
                                  {14, "${TOKEN_KEY}"},
                                  {15, "a line without '='"}}));
  EXPECT_EQ(out.masked_whole, "");
  expect_no_secret(out);
}

// npm's ini splits lines at every \r and \n: a lone \r starts a line of its own.
TEST(CredentialLines, NpmrcLineEndsAreNpmsOwn) {
  const auto out = sanitize_config(ConfigFormat::Npmrc, "a=1\r_authToken=SECRET\r\nb=2\n");
  EXPECT_EQ(out.bytes, "a=1\rb=2\n");
  EXPECT_EQ(out.removed, (Removed{{2, "_authToken"}}));
}

// Only a value loses a URL's user information: a key that held `://` and `@` keeps its `=`
// (found by fuzz_credential_lines: the line lost its `=` and a second reading removed it).
TEST(CredentialLines, AKeyNeverLosesBytes) {
  const auto out = sanitize_config(ConfigFormat::Npmrc, "k://=u@h\nr=https://t@h/\n");
  EXPECT_EQ(out.bytes, "k://=u@h\nr=https://h/\n");
  EXPECT_EQ(out.removed, (Removed{{2, "r (user:password of a URL)"}}));
  EXPECT_EQ(sanitize_config(ConfigFormat::Npmrc, out.bytes).removed, Removed{});
}

TEST(CredentialLines, YarnrcLosesAuthKeysWithTheLinesBelowThem) {
  const auto out = sanitize_config(ConfigFormat::YarnrcYml,
                                   "npmRegistryServer: \"https://npm.corp\"\n"
                                   "npmAuthToken: SECRET1\n"
                                   "npmScopes:\n"
                                   "  corp:\n"
                                   "    npmAlwaysAuth: true\n"
                                   "    npmAuthIdent: |\n"
                                   "      SECRET2\n"
                                   "\n"
                                   "      SECRET3\n"
                                   "    npmRegistryServer: \"https://u:SECRET4@npm.corp\"\n"
                                   "httpProxy: \"http://proxy.corp:3128\"\n");
  EXPECT_EQ(out.bytes,
            "npmRegistryServer: \"https://npm.corp\"\n"
            "npmScopes:\n"
            "  corp:\n"
            "    npmAlwaysAuth: true\n"
            "    npmRegistryServer: \"https://npm.corp\"\n"
            "httpProxy: \"http://proxy.corp:3128\"\n");
  EXPECT_EQ(out.removed, (Removed{{2, "npmAuthToken"},
                                  {6, "npmAuthIdent"},
                                  {10, "npmRegistryServer (user:password of a URL)"}}));
  expect_no_secret(out);
}

TEST(CredentialLines, YarnrcInAFormNotTakenApartIsMaskedWhole) {
  const auto flow =
      sanitize_config(ConfigFormat::YarnrcYml, "npmScopes: {corp: {npmAuthToken: SECRET}}\n");
  EXPECT_EQ(flow, (SanitizedConfig{"",
                                   {},
                                   "npmAuthToken or npmAuthIdent written in a form this reader "
                                   "does not take apart (a flow mapping, an explicit key)"}));
  const auto alias = sanitize_config(ConfigFormat::YarnrcYml, "x: &t SECRET\nnpmAuthToken: *t\n");
  EXPECT_EQ(alias.masked_whole, "line 2: npmAuthToken is an alias");
  EXPECT_EQ(alias.bytes, "");
  const auto escaped =
      sanitize_config(ConfigFormat::YarnrcYml, "\"npm\\x41uthToken\": SECRET\nother: 1\n");
  EXPECT_EQ(escaped.bytes, "other: 1\n");
  EXPECT_EQ(escaped.removed, (Removed{{1, "npm\\x41uthToken"}}));
}

// pip.conf: the index stays (a 401 names it), only its user:password goes.
TEST(CredentialLines, PipConfLosesTheUserinfoOfItsUrls) {
  const auto out = sanitize_config(ConfigFormat::PipConf,
                                   "[global]\n"
                                   "index-url = https://user:SECRET1@pypi.corp/simple\n"
                                   "extra-index-url =\n"
                                   "    https://mirror.example/simple\n"
                                   "    https://SECRET2@other.example/simple\n"
                                   "cert = /etc/ssl/corp.pem\n"
                                   "proxy = http://me:p@SECRET3@proxy.corp:3128\n");
  EXPECT_EQ(out.bytes,
            "[global]\n"
            "index-url = https://pypi.corp/simple\n"
            "extra-index-url =\n"
            "    https://mirror.example/simple\n"
            "    https://other.example/simple\n"
            "cert = /etc/ssl/corp.pem\n"
            "proxy = http://proxy.corp:3128\n");
  EXPECT_EQ(out.removed, (Removed{{2, "index-url (user:password of a URL)"},
                                  {5, "extra-index-url (user:password of a URL)"},
                                  {7, "proxy (user:password of a URL)"}}));
  expect_no_secret(out);
}

TEST(CredentialLines, CargoConfigLosesTokensOfEveryTable) {
  const auto out = sanitize_config(ConfigFormat::CargoToml,
                                   "[registry]\n"
                                   "default = \"corp\"\n"
                                   "token = \"SECRET1\"\n"
                                   "\n"
                                   "[registries.corp]\n"
                                   "index = \"sparse+https://cargo.corp/index/\"\n"
                                   "credential-provider = \"cargo:token\"\n"
                                   "token = \"\"\"\n"
                                   "SECRET2\n"
                                   "\"\"\"\n"
                                   "registries.other.\"token\" = 'SECRET3'\n"
                                   "secret-key = \"SECRET4\"\n"
                                   "\n"
                                   "[http]\n"
                                   "cainfo = \"/etc/ssl/corp.pem\"\n");
  EXPECT_EQ(out.bytes,
            "[registry]\n"
            "default = \"corp\"\n"
            "\n"
            "[registries.corp]\n"
            "index = \"sparse+https://cargo.corp/index/\"\n"
            "credential-provider = \"cargo:token\"\n"
            "\n"
            "[http]\n"
            "cainfo = \"/etc/ssl/corp.pem\"\n");
  EXPECT_EQ(
      out.removed,
      (Removed{
          {3, "token"}, {8, "token"}, {11, "registries.other.\"token\""}, {12, "secret-key"}}));
  expect_no_secret(out);
}

TEST(CredentialLines, CargoInlineTableWithATokenIsMaskedWhole) {
  const auto out = sanitize_config(ConfigFormat::CargoToml,
                                   "[registries]\ncorp = { index = \"x\", token = \"SECRET\" }\n");
  EXPECT_EQ(out, (SanitizedConfig{"",
                                  {},
                                  "token or secret-key written in a form this reader does not "
                                  "take apart (an inline table)"}));
}

TEST(CredentialLines, MavenSettingsLoseServerSecretsAndKeepMirrors) {
  const auto out = sanitize_config(
      ConfigFormat::MavenSettings,
      "<settings>\n"
      "  <servers>\n"
      "    <server>\n"
      "      <id>corp</id>\n"
      "      <username>deploy</username>\n"
      "      <password>SECRET1</password>\n"
      "      <passphrase>\n"
      "        SECRET2\n"
      "      </passphrase>\n"
      "      <privateKey>/home/u/.ssh/id_rsa</privateKey>\n"
      "    </server>\n"
      "    <server><id>gl</id><configuration><httpHeaders><property><name>Private-Token</name>"
      "<value>SECRET3</value></property></httpHeaders></configuration></server>\n"
      "  </servers>\n"
      "  <mirrors>\n"
      "    <mirror><id>m</id><url>https://maven.corp/repo</url><mirrorOf>*</mirrorOf></mirror>\n"
      "  </mirrors>\n"
      "  <!-- <password>SECRET4</password> write your <password> here -->\n"
      "</settings>\n");
  EXPECT_EQ(
      out.bytes,
      "<settings>\n"
      "  <servers>\n"
      "    <server>\n"
      "      <id>corp</id>\n"
      "      <username>deploy</username>\n"
      "    </server>\n"
      "    <server><id>gl</id><configuration></configuration></server>\n"
      "  </servers>\n"
      "  <mirrors>\n"
      "    <mirror><id>m</id><url>https://maven.corp/repo</url><mirrorOf>*</mirrorOf></mirror>\n"
      "  </mirrors>\n"
      "  <!--  write your <password> here -->\n"
      "</settings>\n");
  EXPECT_EQ(out.removed, (Removed{{6, "<password>"},
                                  {7, "<passphrase>"},
                                  {10, "<privateKey>"},
                                  {12, "<httpHeaders>"},
                                  {17, "<password>"}}));
  expect_no_secret(out);
}

TEST(CredentialLines, MavenSettingsNotTakenApartAreMaskedWhole) {
  EXPECT_EQ(sanitize_config(ConfigFormat::MavenSettings,
                            "<!DOCTYPE s [<!ENTITY p \"SECRET\">]><s><password>&p;</password></s>")
                .masked_whole,
            "a DOCTYPE or an ENTITY declaration (an entity could spell a credential)");
  EXPECT_EQ(sanitize_config(ConfigFormat::MavenSettings, "<s><PASSWORD>SECRET</PASSWORD></s>"),
            (SanitizedConfig{"",
                             {},
                             "an element password written in a form this reader does not take "
                             "apart (a namespace prefix, another case, CDATA)"}));
  EXPECT_EQ(sanitize_config(ConfigFormat::MavenSettings, "<s><password>SECRET</s>").masked_whole,
            "an element <password> is not closed");
  EXPECT_EQ(sanitize_config(ConfigFormat::MavenSettings,
                            "<s><password><![CDATA[</password>SECRET]]></password></s>")
                .masked_whole,
            "an element password written in a form this reader does not take apart (a namespace "
            "prefix, another case, CDATA)");
}

TEST(CredentialLines, DockerConfigLosesAuthValuesAndKeepsHelpersAndProxies) {
  const auto out = sanitize_config(
      ConfigFormat::DockerConfig,
      "{\n"
      "  \"auths\": {\n"
      "    \"registry.corp\": {\n"
      "      \"auth\": \"SECRET1\"\n"
      "    },\n"
      "    \"ghcr.io\": { \"Auth\": \"SECRET2\", \"identitytoken\": \"SECRET3\" }\n"
      "  },\n"
      "  \"credsStore\": \"desktop\",\n"
      "  \"proxies\": { \"default\": { \"httpProxy\": \"http://u:SECRET4@proxy:3128\" } }\n"
      "}\n");
  EXPECT_EQ(out.bytes,
            "{\n"
            "  \"auths\": {\n"
            "    \"registry.corp\": {\n"
            "      \"auth\": \"\"\n"
            "    },\n"
            "    \"ghcr.io\": { \"Auth\": \"\", \"identitytoken\": \"\" }\n"
            "  },\n"
            "  \"credsStore\": \"desktop\",\n"
            "  \"proxies\": { \"default\": { \"httpProxy\": \"http://proxy:3128\" } }\n"
            "}\n");
  EXPECT_EQ(out.removed, (Removed{{4, "auths.registry.corp.auth"},
                                  {6, "auths.ghcr.io.Auth"},
                                  {6, "auths.ghcr.io.identitytoken"},
                                  {9, "user:password of a URL"}}));
  expect_no_secret(out);
}

TEST(CredentialLines, DockerConfigNotTakenApartIsMaskedWhole) {
  EXPECT_EQ(sanitize_config(ConfigFormat::DockerConfig, "{\"auths\": "),
            (SanitizedConfig{"", {}, "not valid JSON at byte 10 (a value is missing)"}));
  EXPECT_EQ(
      sanitize_config(ConfigFormat::DockerConfig, "{\"\\u0061uth\": \"SECRET\"}").masked_whole,
      "not valid JSON at byte 12 (a member name with an escape)");
  // Go's encoding/json folds the Kelvin sign to k: "identitytoKen" is identitytoken.
  const auto kelvin = sanitize_config(ConfigFormat::DockerConfig,
                                      "{\"identityto\xE2\x84\xAA"
                                      "en\": \"SECRET\"}");
  EXPECT_EQ(kelvin.bytes,
            "{\"identityto\xE2\x84\xAA"
            "en\": \"\"}");
}

TEST(CredentialLines, NulAndOversizeAreMaskedWhole) {
  EXPECT_EQ(sanitize_config(ConfigFormat::Npmrc, std::string("a=1\0", 4)),
            (SanitizedConfig{"", {}, "a NUL byte"}));
  EXPECT_EQ(
      sanitize_config(ConfigFormat::PipConf, std::string(kMaxConfigBytes + 1, 'a')).masked_whole,
      "larger than 1048576 bytes");
}

TEST(CredentialLines, ReadsAnOpenFileAndRefusesOtherKinds) {
  char path[] = "/tmp/pi-credential-lines.XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "_auth=SECRET\nregistry=x\n", 24), 24);
  ASSERT_EQ(::lseek(fd, 0, SEEK_SET), 0);
  EXPECT_EQ(sanitize_config_fd(ConfigFormat::Npmrc, fd),
            (SanitizedConfig{"registry=x\n", {{1, "_auth"}}, ""}));
  ::close(fd);
  ::unlink(path);
  const int dir = ::open("/", O_RDONLY | O_DIRECTORY);
  EXPECT_EQ(sanitize_config_fd(ConfigFormat::Npmrc, dir).masked_whole, "not a regular file");
  ::close(dir);
  EXPECT_EQ(sanitize_config_fd(ConfigFormat::Npmrc, -1).masked_whole, "fstat(): EBADF");
}

// docs/security.md, "Tool configuration without its credentials": the table there is this one.
TEST(CredentialLines, TheDocumentedTableIsTheSourceTable) {
  const char* source = std::getenv("PI_SANDBOX_SOURCE_DIR");
  std::ifstream file(std::string(source != nullptr ? source : ".") + "/docs/security.md");
  ASSERT_TRUE(file) << "docs/security.md not found (PI_SANDBOX_SOURCE_DIR)";
  std::vector<std::string> documented;
  bool inside = false;
  for (std::string line; std::getline(file, line);) {
    if (line == "<!-- mixed-config-names:end -->") inside = false;
    if (inside && line.starts_with("| `~/")) documented.push_back(line);
    if (line == "<!-- mixed-config-names:begin -->") inside = true;
  }
  std::vector<std::string> expected;
  for (const auto& row : mixed_config_names())
    expected.push_back("| `~/" + std::string(row.name) + "` | " + std::string(row.program) + " | " +
                       std::string(row.removed) + " |");
  EXPECT_EQ(documented, expected);
}

}  // namespace
}  // namespace pisandbox::policy
