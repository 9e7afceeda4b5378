#include "shell/path_words.hpp"

#include <algorithm>
#include <array>
#include <iterator>

namespace pisandbox::shell {
namespace {

// The length of a leading `$HOME`, `${HOME}` or `${HOME:…}` that is followed by `/` or the
// end of the word; 0 when there is none.
std::size_t home_variable_length(std::string_view word) {
  std::size_t length = 0;
  if (word.starts_with("$HOME")) {
    length = 5;
  } else if (word.starts_with("${HOME}")) {
    length = 7;
  } else if (word.starts_with("${HOME:")) {
    const auto close = word.find('}');
    if (close == std::string_view::npos) return 0;
    length = close + 1;
  }
  if (length == 0 || (length < word.size() && word[length] != '/')) return 0;
  return length;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    pieces.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return pieces;
}

bool has_glob(std::string_view part) {
  return part.find_first_of("*?[") != std::string_view::npos;
}

bool is_ssh_key_file(std::string_view name) {
  return (name.starts_with("id_") || has_glob(name)) && !name.ends_with(".pub");
}

// Names that are credentials wherever they are.
constexpr auto kCredentialNames = std::to_array<std::string_view>(
    {".ssh", ".aws", ".gnupg", ".netrc", "_netrc", ".git-credentials", ".npmrc", ".pypirc"});

// Files that are credentials inside a directory of the given name.
struct NamedFile {
  std::string_view directory;
  std::string_view name;
};
constexpr std::array<NamedFile, 5> kCredentialFiles = {{
    {".aws", "credentials"},
    {".docker", "config.json"},
    {".kube", "config"},
    {"gh", "hosts.yml"},
    {"etc", "shadow"},
}};

}  // namespace

PathWord parse_path_word(std::string_view word) {
  PathWord path;
  std::string_view rest = word;
  if (rest.starts_with('/')) {
    path.anchor = PathAnchor::Root;
  } else if (rest.starts_with('~')) {
    path.anchor = PathAnchor::Home;
    const auto slash = rest.find('/');
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  } else if (const std::size_t length = home_variable_length(rest); length > 0) {
    path.anchor = PathAnchor::Home;
    rest.remove_prefix(length);
  }
  for (const std::string_view part : split(rest, '/')) {
    if (part.empty() || part == ".") continue;
    if (part != "..") {
      path.parts.emplace_back(part);
    } else if (!path.parts.empty()) {
      path.parts.pop_back();
    } else if (path.anchor != PathAnchor::Root) {
      ++path.ups;
    }
  }
  return path;
}

std::optional<std::vector<std::string>> absolute_parts(std::string_view word, std::string_view home,
                                                       std::string_view cwd) {
  PathWord path = parse_path_word(word);
  std::vector<std::string> parts;
  if (path.anchor != PathAnchor::Root) {
    const std::string_view base = path.anchor == PathAnchor::Home ? home : cwd;
    if (!base.starts_with('/')) return std::nullopt;
    parts = parse_path_word(base).parts;
  }
  parts.resize(parts.size() - std::min(path.ups, parts.size()));
  std::move(path.parts.begin(), path.parts.end(), std::back_inserter(parts));
  return parts;
}

bool is_whole_directory_glob(std::string_view part) {
  return part.find('*') != std::string_view::npos &&
         part.find_first_not_of("*?.") == std::string_view::npos;
}

bool is_prefix(const std::vector<std::string>& prefix, const std::vector<std::string>& path) {
  return prefix.size() <= path.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

bool is_credential_path(std::string_view text) {
  const std::vector<std::string> parts = parse_path_word(text).parts;
  if (parts.empty()) return false;
  const std::string_view name = parts.back();
  const std::string_view directory =
      parts.size() > 1 ? std::string_view(parts[parts.size() - 2]) : std::string_view();
  if (std::find(kCredentialNames.begin(), kCredentialNames.end(), name) != kCredentialNames.end()) {
    return true;
  }
  if (name == ".env" || name.starts_with(".env.")) return true;
  if (directory == ".ssh") return is_ssh_key_file(name);
  if (std::find(parts.begin(), parts.end(), ".gnupg") != parts.end()) return true;
  return std::any_of(kCredentialFiles.begin(), kCredentialFiles.end(), [&](const NamedFile& f) {
    return f.directory == directory && f.name == name;
  });
}

std::optional<std::string> find_credential_mention(std::string_view text) {
  static constexpr std::string_view kCuts = " \t\r\n'\"`$()=@<>;|&,{}:";
  std::size_t start = 0;
  char cut = '\0';  // the character before the piece
  while (start < text.size()) {
    const std::size_t end = std::min(text.find_first_of(kCuts, start), text.size());
    const std::string_view piece = text.substr(start, end - start);
    // `scheme://host/path` names a remote resource, not a local file.
    const bool url = cut == ':' && piece.starts_with("//");
    if (!piece.empty() && !url && is_credential_path(piece)) {
      return cut == '$' ? "$" + std::string(piece) : std::string(piece);  // `$HOME/…`
    }
    cut = end < text.size() ? text[end] : '\0';
    start = end + 1;
  }
  return std::nullopt;
}

bool is_persistence_target(const std::vector<std::string>& parts) {
  if (parts.empty()) return false;
  if (parts.back() == "authorized_keys" || parts.back() == "authorized_keys2") return true;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i] != "etc") continue;
    if (parts[i + 1] == "sudoers.d") return true;
    if (parts[i + 1] == "sudoers" && i + 2 == parts.size()) return true;
  }
  return false;
}

}  // namespace pisandbox::shell
