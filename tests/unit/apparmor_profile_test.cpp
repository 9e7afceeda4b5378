// The AppArmor profile the Debian package ships (packaging/apparmor/pi-sandbox,
// docs/containers.md "Ubuntu 23.10 and later"), checked by the real apparmor_parser with -Q
// (parse and compile, load nothing: the kernel needs no AppArmor). AppArmor 4.0 added the
// `userns` rule and abi/4.0; an older parser (Debian 12's 3.0) parses the profile without
// those two lines, which this test then checks are the profile's only difference.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "require.hpp"

namespace {

namespace fs = std::filesystem;

struct Output {
  int status = -1;
  std::string text;
};

/// Runs `command` with sh, stderr joined to stdout.
Output shell(const std::string& command) {
  Output out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buffer{};
  for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;)
    out.text.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path profile_path() {
  const char* source = std::getenv("PI_SANDBOX_SOURCE_DIR");
  return fs::path(source != nullptr ? source : ".") / "packaging/apparmor/pi-sandbox";
}

/// The major version of apparmor_parser (`AppArmor parser version 3.0.8`), 0 when unknown.
int parser_major() {
  const Output version = shell("apparmor_parser --version");
  const auto at = version.text.find("version ");
  return at == std::string::npos ? 0 : std::atoi(version.text.c_str() + at + 8);
}

/// apparmor_parser -Q -K on `path`: status 0 and no `error` in its output is a parse.
Output parse(const fs::path& path) {
  return shell("apparmor_parser -Q -K '" + path.string() + "'");
}

TEST(ApparmorProfile, GrantsUsernsToUsrBinPiSandboxAndNothingElse) {
  const std::string text = read_all(profile_path());
  ASSERT_FALSE(text.empty()) << "run from the repository or set PI_SANDBOX_SOURCE_DIR";
  EXPECT_TRUE(text.contains("\nabi <abi/4.0>,\n")) << text;
  EXPECT_TRUE(
      text.contains("\nprofile pi-sandbox /usr/bin/pi-sandbox flags=(unconfined) {\n"
                    "  userns,\n"
                    "\n"
                    "  include if exists <local/pi-sandbox>\n"
                    "}\n"))
      << text;
}

TEST(ApparmorProfile, ApparmorParserParsesIt) {
  PI_SANDBOX_REQUIRE(
      shell("command -v apparmor_parser").status == 0,
      "apparmor_parser is missing (Debian package apparmor; scripts/test installs it)");
  const fs::path profile = profile_path();
  const int major = parser_major();
  ASSERT_GT(major, 0) << shell("apparmor_parser --version").text;
  if (major >= 4) {
    const Output parsed = parse(profile);
    EXPECT_EQ(parsed.status, 0) << parsed.text;
    EXPECT_FALSE(parsed.text.contains("error")) << parsed.text;
    return;
  }
  // AppArmor 3: the profile without its two 4.0 lines (the abi named 3.0 instead).
  std::string text = read_all(profile);
  const auto abi = text.find("abi <abi/4.0>,");
  const auto userns = text.find("  userns,\n");
  ASSERT_NE(abi, std::string::npos);
  ASSERT_NE(userns, std::string::npos);
  text.erase(userns, std::string("  userns,\n").size());
  text.replace(abi, std::string("abi <abi/4.0>,").size(), "abi <abi/3.0>,");
  const fs::path older =
      fs::temp_directory_path() / ("pi-sandbox-apparmor-" + std::to_string(::getpid()));
  std::ofstream(older) << text;
  const Output parsed = parse(older);
  fs::remove(older);
  EXPECT_EQ(parsed.status, 0) << parsed.text;
  EXPECT_FALSE(parsed.text.contains("error")) << parsed.text;
  std::cout << "apparmor_parser " << major
            << ".x cannot parse `userns` (AppArmor 4.0): parsed without it\n";
}

}  // namespace
