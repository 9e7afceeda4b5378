#include "policy/signing.hpp"

#include <algorithm>
#include <cctype>

namespace pisandbox::policy {

namespace {

/// A git boolean (git-config(1), "Values"): true, yes, on, or a non-zero integer; the implicit
/// value of a key alone is true. Anything else (false, no, off, 0, empty, garbage) reads false.
bool git_true(std::string_view value, bool implicit) {
  if (implicit) return true;
  std::string lower;
  for (const unsigned char c : value) lower.push_back(static_cast<char>(std::tolower(c)));
  if (lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower.empty() || !std::ranges::all_of(lower, [](unsigned char c) { return std::isdigit(c); }))
    return false;
  return std::ranges::any_of(lower, [](char c) { return c != '0'; });
}

SigningFormat format_of(std::string_view value) {
  std::string lower;
  for (const unsigned char c : value) lower.push_back(static_cast<char>(std::tolower(c)));
  if (lower == "ssh") return SigningFormat::Ssh;
  if (lower == "x509") return SigningFormat::X509;
  return SigningFormat::OpenPgp;
}

/// The key types of sshd(8) "AUTHORIZED_KEYS FILE FORMAT".
bool is_ssh_key_type(std::string_view type) {
  for (std::string_view known :
       {"ssh-ed25519", "ssh-rsa", "ssh-dss", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384",
        "ecdsa-sha2-nistp521", "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com",
        "ssh-ed25519-cert-v01@openssh.com", "ssh-rsa-cert-v01@openssh.com",
        "ecdsa-sha2-nistp256-cert-v01@openssh.com"})
    if (type == known) return true;
  return false;
}

bool is_base64(std::string_view text) {
  return std::ranges::all_of(
      text, [](unsigned char c) { return std::isalnum(c) || c == '+' || c == '/' || c == '='; });
}

}  // namespace

GitSigning git_signing(const std::vector<GitConfigValue>& entries) {
  GitSigning signing;
  for (const auto& [key, value, implicit] : entries) {
    if (key == "commit.gpgsign") signing.sign_commits = git_true(value, implicit);
    if (key == "tag.gpgsign") signing.sign_tags = git_true(value, implicit);
    if (key == "gpg.format") {
      signing.format = format_of(value);
      signing.format_set = true;
    }
    if (key == "user.signingkey") signing.signing_key = value;
    if (key == "gpg.ssh.allowedsignersfile") signing.allowed_signers = value;
  }
  return signing;
}

fs::path config_path(std::string_view value, const fs::path& home) {
  if (value.starts_with("~/")) return (home / std::string(value.substr(2))).lexically_normal();
  if (value.starts_with('/')) return fs::path(std::string(value)).lexically_normal();
  return {};
}

fs::path ssh_signing_key_file(const GitSigning& signing, const fs::path& home) {
  if (signing.format != SigningFormat::Ssh || signing.signing_key.starts_with("key::")) return {};
  return config_path(signing.signing_key, home);
}

/// Whether one line holds `<type> <base64>` somewhere among its words.
bool holds_public_key(std::string_view line) {
  std::vector<std::string_view> words;
  for (std::size_t at = 0; at < line.size();) {
    const std::size_t begin = line.find_first_not_of(" \t", at);
    if (begin == std::string_view::npos) break;
    const std::size_t end = std::min(line.find_first_of(" \t", begin), line.size());
    words.push_back(line.substr(begin, end - begin));
    at = end;
  }
  for (std::size_t i = 0; i + 1 < words.size(); ++i)
    if (is_ssh_key_type(words[i]) && words[i + 1].size() >= 32 && is_base64(words[i + 1]))
      return true;
  return false;
}

bool is_allowed_signers(std::string_view text) {
  bool any = false;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.remove_suffix(1);
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    if (!holds_public_key(line)) return false;
    any = true;
  }
  return any;
}

bool is_ssh_public_key(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
    text.remove_suffix(1);
  if (text.empty() || text.find('\n') != std::string_view::npos) return false;
  const std::size_t space = text.find(' ');
  if (space == std::string_view::npos || !is_ssh_key_type(text.substr(0, space))) return false;
  std::string_view rest = text.substr(space + 1);
  const std::string_view blob = rest.substr(0, rest.find(' '));
  return blob.size() >= 32 && is_base64(blob);
}

const std::vector<std::string_view>& gnupg_public_files() {
  static const std::vector<std::string_view> kFiles = {
      "pubring.kbx", "pubring.gpg", "trustdb.gpg", "trustedkeys.kbx", "gpg.conf", "common.conf"};
  return kFiles;
}

fs::path gpg_agent_socket(const fs::path& gnupg_home, const fs::path& home,
                          const fs::path& runtime_dir, bool runtime_dir_exists) {
  const bool default_home = gnupg_home.lexically_normal() == (home / ".gnupg").lexically_normal();
  if (!runtime_dir_exists) return (gnupg_home / "S.gpg-agent").lexically_normal();
  if (!default_home) return {};
  return (runtime_dir / "gnupg" / "S.gpg-agent").lexically_normal();
}

std::string signing_socket_hint(const SigningFiles& files) {
  const bool ssh = files.signing.format == SigningFormat::Ssh;
  const std::string program = ssh ? "ssh-keygen through ssh-agent" : "gpg through gpg-agent";
  return "git signs with " + program + ", whose socket " + files.agent_socket.string() +
         " was refused; to sign inside the sandbox, add it to the configuration: "
         "{\"hostIPC\": {\"allowedSockets\": [\"" +
         files.agent_entry + "\"]}} (docs/configuration.md, \"Signed commits\")";
}

}  // namespace pisandbox::policy
