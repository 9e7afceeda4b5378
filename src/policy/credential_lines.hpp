// pisandbox::policy — tool configuration that mixes settings and credentials, shown inside the
// sandbox as a copy without its credentials (docs/security.md, "Tool configuration without its
// credentials").
//
// sanitize_config() is pure: bytes in, bytes and a list of what was removed out. It fails closed:
// what it cannot read with certainty comes out empty (masked whole), with the reason.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pisandbox::policy {

/// The syntax of a mixed file, which decides what a credential line is.
enum class ConfigFormat {
  Npmrc,          ///< npm's ini file (npmrc(5)): one `key=value` per line
  YarnrcYml,      ///< Yarn Berry's YAML (https://yarnpkg.com/configuration/yarnrc)
  PipConf,        ///< pip's ini file (https://pip.pypa.io/en/stable/topics/configuration/)
  CargoToml,      ///< Cargo's TOML (https://doc.rust-lang.org/cargo/reference/config.html)
  MavenSettings,  ///< Maven's settings.xml (https://maven.apache.org/settings.html)
  DockerConfig,   ///< the Docker CLI's config.json (docker-config-json(5))
  GitConfig,      ///< git's configuration (git-config(1), "CONFIGURATION FILE")
};

/// The name of a format, as `pi-sandbox policy --json` shows it (`npmrc`, `yarnrc-yml`, ...).
std::string_view to_string(ConfigFormat format);

/// One file of the home that mixes a tool's settings with its credentials.
///   name:    relative to the home (`.npmrc`, `.config/pip/pip.conf`);
///   format:  its syntax;
///   program: the tool that reads it;
///   removed: what the copy lacks, in words (docs/security.md shows the same table: a unit test
///            compares them).
struct MixedConfigName {
  std::string_view name;
  ConfigFormat format;
  std::string_view program;
  std::string_view removed;
};

/// Every MixedConfigName, in the order docs/security.md lists them.
const std::vector<MixedConfigName>& mixed_config_names();

/// One credential taken out of a file.
///   line: where it started, 1-based, counting `\n`, `\r\n` and a lone `\r` as one line end
///         each (npm splits lines so);
///   key:  the key or element it was (`//registry.example/:_authToken`, `<password>`,
///         `auths.registry.example.auth`, `index-url (user:password of a URL)`), printable
///         ASCII: the key cut at kMaxShownKeyBytes bytes (then `...`), and for a URL's user
///         information the suffix ` (user:password of a URL)`; never a value.
struct RemovedItem {
  std::size_t line = 0;
  std::string key;

  friend bool operator==(const RemovedItem&, const RemovedItem&) = default;
};

/// The copy of one file.
///   bytes:        what the sandbox sees (empty when masked whole);
///   removed:      what was taken out, in file order;
///   masked_whole: empty when the file was sanitized; otherwise why nothing of it is shown
///                 (`not valid JSON at byte 12`, `larger than 1048576 bytes`, ...).
struct SanitizedConfig {
  std::string bytes;
  std::vector<RemovedItem> removed;
  std::string masked_whole;

  friend bool operator==(const SanitizedConfig&, const SanitizedConfig&) = default;
};

/// A larger file is masked whole (bytes): configuration files are a few kilobytes.
constexpr std::size_t kMaxConfigBytes = 1024 * 1024;
/// A removed key longer than this is shown cut (bytes).
constexpr std::size_t kMaxShownKeyBytes = 120;

/// The copy of `bytes`, a file of `format`, without its credentials (docs/security.md, "Tool
/// configuration without its credentials", says what each format loses). Pure; never fails:
/// bytes it cannot read with certainty (a NUL byte, invalid JSON, a DOCTYPE, a credential key
/// written in a way it does not take apart, more than kMaxConfigBytes) give an empty copy and
/// the reason in masked_whole.
SanitizedConfig sanitize_config(ConfigFormat format, std::string_view bytes);

/// Reads the open file `fd` (at most kMaxConfigBytes + 1 bytes, from its current offset) and
/// sanitizes it. A read error or a file that is not a regular file masks it whole, the reason
/// naming the call and errno (`read(): EIO`). The one function here that touches the system.
SanitizedConfig sanitize_config_fd(ConfigFormat format, int fd);

}  // namespace pisandbox::policy
