#include "policy/credential_lines.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "policy/credential_lines_text.hpp"

namespace pisandbox::policy {

using namespace config_text;

namespace {

/// Builds a SanitizedConfig line by line: kept lines (URL user information removed) and
/// removed ones.
class LineWriter {
 public:
  /// Keeps `line`, without the user information of the URLs from byte `value_from` on (the
  /// value: a key never loses bytes, so what was not a credential key does not become one).
  void keep(const Line& line, std::string_view key, std::size_t value_from = 0) {
    value_from = std::min(value_from, line.text.size());
    std::string value(line.text.substr(value_from));
    if (strip_userinfo(value)) out_.removed.push_back({line.number, userinfo_key(key)});
    const std::string text = std::string(line.text.substr(0, value_from)) + value;
    out_.bytes += text;
    out_.bytes += line.end;
    kept_.push_back(line.number);
  }
  void remove(const Line& line, std::string_view key) {
    out_.removed.push_back({line.number, shown(key)});
  }
  void drop(const Line&) {}  ///< a continuation of a removed value
  const std::vector<std::size_t>& kept() const { return kept_; }
  SanitizedConfig take() { return std::move(out_); }

 private:
  SanitizedConfig out_;
  std::vector<std::size_t> kept_;
};

// ---- npmrc: npm's ini (https://github.com/npm/ini): a key ends at `=`, an unquoted one at
// `;` or `#` too; a quoted one is JSON; `${VAR}` is expanded in keys and values.

bool npm_secret_key(std::string_view key) {
  static constexpr std::string_view kKeys[] = {"_authtoken", "_auth", "_password",
                                               "password",   "key",   "otp"};
  const std::size_t colon = key.rfind(':');
  const std::string last = lower(colon == std::string_view::npos ? key : key.substr(colon + 1));
  return std::ranges::find(kKeys, last) != std::end(kKeys);
}

SanitizedConfig sanitize_npmrc(std::string_view bytes) {
  LineWriter out;
  for (const auto& line : split_lines(bytes)) {
    const std::string_view t = trim(line.text);
    if (t.empty() || t.front() == ';' || t.front() == '#') {
      out.keep(line, "");
      continue;
    }
    // npm reads a line without `=` as `<line>=true`; a token pasted alone would be one, so
    // it goes, and is named by what it is, not by its text.
    if (t.find('=') == std::string_view::npos) {
      out.remove(line, "a line without '='");
      continue;
    }
    std::string_view key = trim(t.substr(0, t.find('=')));
    if (key.ends_with("[]")) key.remove_suffix(2);  // an array key
    if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') && key.back() == key.front())
      key = key.substr(1, key.size() - 2);
    else
      key = trim(key.substr(0, key.find_first_of(";#")));
    // An escape or a variable could spell a credential key: taken out too.
    const bool opaque =
        key.find('\\') != std::string_view::npos || key.find("${") != std::string_view::npos;
    if (opaque || npm_secret_key(key))
      out.remove(line, key);
    else
      out.keep(line, key, line.text.find('=') + 1);
  }
  return out.take();
}

// ---- .yarnrc.yml: YAML block mappings; a removed key takes the lines indented below it.

/// The key of a YAML block-mapping line and its column, or nullopt (a comment, a list item
/// without a key, a continuation).
struct YamlKey {
  std::string key;
  std::size_t column = 0;
  std::string_view value;
};

std::optional<YamlKey> yaml_key(std::string_view text) {
  std::size_t column = indentation(text);
  std::string_view rest = text.substr(column);
  while (rest.size() >= 2 && rest[0] == '-' && is_space(rest[1])) {
    const std::size_t skip = 1 + indentation(rest.substr(1));
    column += skip;
    rest.remove_prefix(skip);
  }
  if (rest.empty() || rest.front() == '#') return std::nullopt;
  std::string key;
  std::size_t after = 0;
  if (rest.front() == '"' || rest.front() == '\'') {
    const char quote = rest.front();
    std::size_t i = 1;
    for (; i < rest.size() && rest[i] != quote; ++i)
      if (quote == '"' && rest[i] == '\\') ++i;
    if (i >= rest.size()) return std::nullopt;
    key = std::string(rest.substr(1, i - 1));
    after = i + 1;
    while (after < rest.size() && is_space(rest[after])) ++after;
    if (after >= rest.size() || rest[after] != ':') return std::nullopt;
  } else {
    std::size_t colon = 0;
    while ((colon = rest.find(':', colon)) != std::string_view::npos && colon + 1 < rest.size() &&
           !is_space(rest[colon + 1]))
      ++colon;
    if (colon == std::string_view::npos) return std::nullopt;
    key = std::string(trim(rest.substr(0, colon)));
    after = colon;
  }
  return YamlKey{key, column, trim(rest.substr(after + 1))};
}

bool yarn_secret_key(std::string_view key) {
  const std::string k = decoded_lower(key);
  return k == "npmauthtoken" || k == "npmauthident";
}

SanitizedConfig sanitize_yarnrc(std::string_view bytes) {
  LineWriter out;
  std::optional<std::size_t> removing_below;  // the column of the removed key
  const auto lines = split_lines(bytes);
  for (const auto& line : lines) {
    if (removing_below) {
      const bool blank = trim(line.text).empty();
      if (blank || indentation(line.text) > *removing_below) {
        out.drop(line);
        continue;
      }
      removing_below.reset();
    }
    const auto key = yaml_key(line.text);
    if (!key || !yarn_secret_key(key->key)) {
      if (key)
        out.keep(line, key->key, static_cast<std::size_t>(key->value.data() - line.text.data()));
      else
        out.keep(line, "");
      continue;
    }
    // An alias takes its value from an anchor elsewhere; a quoted value left open continues
    // in a way this reader does not follow.
    const std::string_view v = key->value;
    if (!v.empty() && v.front() == '*')
      return masked("line " + std::to_string(line.number) + ": " + shown(key->key) +
                    " is an alias");
    if (!v.empty() && (v.front() == '"' || v.front() == '\'') &&
        (v.size() < 2 || v.back() != v.front()))
      return masked("line " + std::to_string(line.number) + ": " + shown(key->key) +
                    " holds a quoted value over several lines");
    out.remove(line, key->key);
    removing_below = key->column;
  }
  SanitizedConfig result = out.take();
  // What is left must not name a credential key in any form (a flow mapping, `? key`).
  for (const auto& line : split_lines(result.bytes)) {
    const std::string text = decoded_lower(line.text);
    if (text.find("npmauthtoken") != std::string::npos ||
        text.find("npmauthident") != std::string::npos)
      return masked(
          "npmAuthToken or npmAuthIdent written in a form this reader does not take "
          "apart (a flow mapping, an explicit key)");
  }
  return result;
}

// ---- pip.conf: configparser; credentials are only the user information of index URLs.

SanitizedConfig sanitize_pip(std::string_view bytes) {
  LineWriter out;
  std::string key;
  for (const auto& line : split_lines(bytes)) {
    const std::string_view t = trim(line.text);
    std::size_t value_from = 0;  // a continuation line is all value, of the option above
    if (!t.empty() && !is_space(line.text.front())) {
      const std::size_t delimiter = line.text.find_first_of("=:");
      const bool option = t.front() != '[' && t.front() != '#' && t.front() != ';' &&
                          delimiter != std::string_view::npos;
      key = option ? std::string(trim(line.text.substr(0, delimiter))) : std::string();
      value_from = option ? delimiter + 1 : 0;
    }
    out.keep(line, key, value_from);
  }
  return out.take();
}

// ---- Cargo's config.toml: `token` and `secret-key` of any table, dotted or quoted keys,
// multi-line strings.

/// The last segment of a TOML key (`registries.x.token` -> `token`), unquoted.
std::string toml_last_segment(std::string_view key) {
  std::size_t start = 0;
  char quote = 0;
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (quote != 0) {
      if (key[i] == '\\' && quote == '"')
        ++i;
      else if (key[i] == quote)
        quote = 0;
    } else if (key[i] == '"' || key[i] == '\'') {
      quote = key[i];
    } else if (key[i] == '.') {
      start = i + 1;
    }
  }
  std::string_view last = trim(key.substr(std::min(start, key.size())));
  if (last.size() >= 2 && (last.front() == '"' || last.front() == '\'') &&
      last.back() == last.front())
    last = last.substr(1, last.size() - 2);
  return std::string(last);
}

bool cargo_secret_key(std::string_view last) {
  const std::string k = decoded_lower(last);
  return k == "token" || k == "secret-key";
}

/// The delimiter of a multi-line string that `value` opens and does not close, or empty.
std::string_view open_multiline(std::string_view value) {
  for (const std::string_view delimiter : {std::string_view("\"\"\""), std::string_view("'''")})
    if (value.starts_with(delimiter) &&
        value.find(delimiter, delimiter.size()) == std::string_view::npos)
      return delimiter;
  return {};
}

/// Whether `text` (decoded, lowercased) assigns `name`: the name at a key's start, then an
/// optional quote, spaces and `=`.
bool assigns(std::string_view text, std::string_view name) {
  for (std::size_t at = text.find(name); at != std::string_view::npos;
       at = text.find(name, at + 1)) {
    const char before = at == 0 ? ' ' : text[at - 1];
    if (std::string_view(" \t{,.\"'").find(before) == std::string_view::npos) continue;
    std::size_t i = at + name.size();
    if (i < text.size() && (text[i] == '"' || text[i] == '\'')) ++i;
    while (i < text.size() && is_space(text[i])) ++i;
    if (i < text.size() && text[i] == '=') return true;
  }
  return false;
}

SanitizedConfig sanitize_cargo(std::string_view bytes) {
  LineWriter out;
  std::string_view closing;  // inside a multi-line string until this delimiter
  bool removing = false;     // ... of a removed key
  for (const auto& line : split_lines(bytes)) {
    if (!closing.empty()) {
      if (line.text.find(closing) != std::string_view::npos) closing = {};
      if (removing)
        out.drop(line);
      else
        out.keep(line, "");
      continue;
    }
    const std::string_view t = trim(line.text);
    const std::size_t eq = t.find('=');
    if (t.empty() || t.front() == '#' || t.front() == '[' || eq == std::string_view::npos) {
      out.keep(line, "");
      continue;
    }
    const std::string_view key = trim(t.substr(0, eq));
    const std::string_view value = trim(t.substr(eq + 1));
    closing = open_multiline(value);
    removing = cargo_secret_key(toml_last_segment(key));
    if (removing && !value.empty() && (value.front() == '[' || value.front() == '{'))
      return masked("line " + std::to_string(line.number) + ": " + shown(key) +
                    " holds an array or a table");
    if (removing)
      out.remove(line, key);
    else
      out.keep(line, key, line.text.find('=') + 1);
  }
  SanitizedConfig result = out.take();
  for (const auto& line : split_lines(result.bytes)) {
    const std::string text = decoded_lower(line.text);
    if (trim(text).starts_with("#")) continue;
    if (assigns(text, "token") || assigns(text, "secret-key"))
      return masked(
          "token or secret-key written in a form this reader does not take apart "
          "(an inline table)");
  }
  return result;
}

}  // namespace

std::string_view to_string(ConfigFormat format) {
  switch (format) {
    case ConfigFormat::Npmrc:
      return "npmrc";
    case ConfigFormat::YarnrcYml:
      return "yarnrc-yml";
    case ConfigFormat::PipConf:
      return "pip-conf";
    case ConfigFormat::CargoToml:
      return "cargo-toml";
    case ConfigFormat::MavenSettings:
      return "maven-settings";
    case ConfigFormat::DockerConfig:
      return "docker-config";
    case ConfigFormat::GitConfig:
      return "git-config";
  }
  return "unknown";
}

const std::vector<MixedConfigName>& mixed_config_names() {
  using F = ConfigFormat;
  static constexpr std::string_view kGitRemoved =
      "`http.extraHeader` and `credential.helper` of any URL; keys whose name holds `pass`, "
      "`token`, `secret` or `auth`; a `proxy` with `user@`; the `user:password@` of every URL, in "
      "values and subsection names "
      "(an ssh URL keeps its user name)";
  static const std::vector<MixedConfigName> rows = {
      {".npmrc", F::Npmrc, "npm",
       "lines whose key is `_authToken`, `_auth`, `_password`, `password`, `key` or `otp` "
       "(scoped, `//host/:_authToken`, or not) or holds `\\` or `${`; lines without `=`"},
      {".yarnrc.yml", F::YarnrcYml, "Yarn (2 and later)",
       "`npmAuthToken` and `npmAuthIdent` at any depth, with the lines indented below them"},
      {".config/pip/pip.conf", F::PipConf, "pip", "the `user:password@` of every URL"},
      {".pip/pip.conf", F::PipConf, "pip (legacy location)", "the `user:password@` of every URL"},
      {".cargo/config.toml", F::CargoToml, "Cargo",
       "`token` and `secret-key` of any table (`[registry]`, `[registries.<name>]`)"},
      {".cargo/config", F::CargoToml, "Cargo (before 1.39)",
       "`token` and `secret-key` of any table (`[registry]`, `[registries.<name>]`)"},
      {".m2/settings.xml", F::MavenSettings, "Maven",
       "the elements `<password>`, `<passphrase>`, `<privateKey>` and `<httpHeaders>`"},
      {".docker/config.json", F::DockerConfig, "Docker CLI (docker login)",
       "the values of `auth`, `identitytoken`, `registrytoken` and `password` (made `\"\"`)"},
      {".gitconfig", F::GitConfig, "git", kGitRemoved},
      {".config/git/config", F::GitConfig, "git (XDG location)", kGitRemoved},
  };
  return rows;
}

SanitizedConfig sanitize_config(ConfigFormat format, std::string_view bytes) {
  if (bytes.size() > kMaxConfigBytes)
    return masked("larger than " + std::to_string(kMaxConfigBytes) + " bytes");
  if (bytes.find('\0') != std::string_view::npos) return masked("a NUL byte");
  switch (format) {
    case ConfigFormat::Npmrc:
      return sanitize_npmrc(bytes);
    case ConfigFormat::YarnrcYml:
      return sanitize_yarnrc(bytes);
    case ConfigFormat::PipConf:
      return sanitize_pip(bytes);
    case ConfigFormat::CargoToml:
      return sanitize_cargo(bytes);
    case ConfigFormat::MavenSettings:
      return sanitize_maven(bytes);
    case ConfigFormat::DockerConfig:
      return sanitize_docker(bytes);
    case ConfigFormat::GitConfig:
      return sanitize_git_config(bytes);
  }
  return masked("an unknown format");
}

SanitizedConfig sanitize_config_fd(ConfigFormat format, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return masked(std::string("fstat(): ") + strerrorname_np(errno));
  if (!S_ISREG(st.st_mode)) return masked("not a regular file");
  std::string bytes;
  char buffer[16384];
  while (bytes.size() <= kMaxConfigBytes) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return masked(std::string("read(): ") + strerrorname_np(errno));
    if (n == 0) break;
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  return sanitize_config(format, bytes);
}

}  // namespace pisandbox::policy
