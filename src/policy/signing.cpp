#include "policy/signing.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>

#include "core/base64.hpp"

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

/// Whether `blob` (base64) is an ssh public key of `type`: it decodes, and its first field, a
/// string (RFC 4253, section 6.6: uint32 length, then the bytes), is `type` itself. A word that
/// merely looks like base64 (a token, a password) does not decode to that.
bool is_key_blob(std::string_view type, std::string_view blob) {
  if (blob.size() < 32) return false;
  const std::optional<std::string> bytes = core::base64_decode(blob);
  if (!bytes || bytes->size() < 4 + type.size()) return false;
  const auto byte = [&](std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>((*bytes)[i]));
  };
  const std::uint32_t length = byte(0) << 24 | byte(1) << 16 | byte(2) << 8 | byte(3);
  return length == type.size() && std::string_view(*bytes).substr(4, length) == type;
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
  fs::path path = config_path(signing.signing_key, home);
  // The repository's user.signingKey is any command's to set (the guard allows user.*): only a
  // file named as a public key is ever shown, not any one-line file of the home.
  if (path.extension() != ".pub") return {};
  return path;
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
    if (is_ssh_key_type(words[i]) && is_key_blob(words[i], words[i + 1])) return true;
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
  const std::string_view type = text.substr(0, space == std::string_view::npos ? 0 : space);
  if (space == std::string_view::npos || !is_ssh_key_type(type)) return false;
  std::string_view rest = text.substr(space + 1);
  return is_key_blob(type, rest.substr(0, rest.find(' ')));
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

fs::path gpg_restricted_socket(const fs::path& socket) {
  if (socket.filename() != "S.gpg-agent" || !socket.has_parent_path()) return {};
  return socket.parent_path() / "S.gpg-agent.extra";
}

namespace {

/// The program git signs with and the agent it asks, as the hints name them.
std::string signing_program(const SigningFiles& files) {
  return files.signing.format == SigningFormat::Ssh ? "ssh-keygen through ssh-agent"
                                                    : "gpg through gpg-agent";
}

}  // namespace

std::string signing_socket_hint(const SigningFiles& files) {
  return "git signs with " + signing_program(files) + ", whose socket " +
         files.agent_socket.string() +
         " was refused; to sign inside the sandbox, add it to the configuration: "
         "{\"hostIPC\": {\"allowedSockets\": [\"" +
         files.agent_entry + "\"]}} (docs/configuration.md, \"Signed commits\")";
}

std::string signing_writable_socket_hint(const SigningFiles& files) {
  const bool ssh = files.signing.format == SigningFormat::Ssh;
  return "git signs with " + signing_program(files) + ", whose socket " +
         files.agent_socket.string() +
         " lies where the command can write (the workspace or filesystem.additionalAllowWrite), "
         "so its hostIPC.allowedSockets entry allows nothing there; to sign inside the sandbox, " +
         (ssh ? std::string("start the agent with its socket elsewhere (ssh-agent -a "
                            "~/.ssh/agent.sock)")
              : std::string("use a gpg home outside those places (GNUPGHOME)")) +
         " (docs/host-ipc.md, \"Host sockets\")";
}

bool may_sign(const std::vector<std::string>& words) {
  static const std::vector<std::string_view> kSigning = {"commit",      "tag",    "merge", "rebase",
                                                         "cherry-pick", "revert", "am",    "pull"};
  bool git = false;
  for (const auto& word : words) {
    if (word == "git" || word.ends_with("/git"))
      git = true;
    else if (git && std::ranges::find(kSigning, word) != kSigning.end())
      return true;
  }
  return false;
}

bool asks_to_sign(const std::vector<std::string>& words) {
  bool git = false;
  for (const auto& word : words) {
    if (word == "git" || word.ends_with("/git"))
      git = true;
    else if (git && (word == "-S" || word == "--gpg-sign" || word.starts_with("--gpg-sign=")))
      return true;
  }
  return false;
}

std::string unconfigured_signing_hint() {
  return "git was asked to sign (-S), but the git configuration says nothing of signing, so the "
         "sandbox shows it no public key, no ~/.gnupg and no agent; set user.signingKey (and "
         "gpg.format ssh for an ssh key) in ~/.gitconfig, then allow the agent's socket in "
         "hostIPC.allowedSockets (docs/configuration.md, \"Signed commits\")";
}

bool names_hidden_ssh_key(const GitSigning& signing, const fs::path& home,
                          std::string_view key_text) {
  if (signing.format != SigningFormat::Ssh || signing.signing_key.starts_with("key::") ||
      config_path(signing.signing_key, home).empty() || key_text.empty())
    return false;
  const std::size_t begin = key_text.find("-----BEGIN ");
  const bool private_key = begin != std::string_view::npos &&
                           key_text.find("PRIVATE KEY-----", begin) < key_text.find('\n', begin);
  return private_key || config_path(signing.signing_key, home).extension() != ".pub";
}

std::string hidden_ssh_key_hint(const GitSigning& signing) {
  const std::string& key = signing.signing_key;
  const std::string instead =
      key.ends_with(".pub") ? "a public key file (ssh-keygen -y -f " + key + " prints the key)"
                            : "the public key beside it, " + key + ".pub";
  return "user.signingKey names " + key +
         ", which is not a public key file, so the sandbox hides it (it shows only a public key "
         "named *.pub); set user.signingKey to " +
         instead +
         ": git signs with it through ssh-agent, which holds the key (docs/configuration.md, "
         "\"Signed commits\")";
}

std::string signing_agent_hint(const SigningFiles& files, AgentGap gap) {
  const bool ssh = files.signing.format == SigningFormat::Ssh;
  const std::string entry = ssh ? "$SSH_AUTH_SOCK" : files.agent_entry;
  const std::string allow = "{\"hostIPC\": {\"allowedSockets\": [\"" + entry +
                            "\"]}} (docs/configuration.md, \"Signed commits\")";
  const std::string program = ssh ? "ssh-keygen through ssh-agent" : "gpg through gpg-agent";
  switch (gap) {
    case AgentGap::NoAgent:
      return "git signs with " + program +
             ", and SSH_AUTH_SOCK is not set: no agent holds the key for the sandbox; start one "
             "on the host (eval \"$(ssh-agent)\"; ssh-add), then allow its socket: " +
             allow;
    case AgentGap::NotRunning:
      return "git signs with " + program + ", whose socket " + files.agent_socket.string() +
             " does not exist: the agent is not running on the host; start it there (" +
             (ssh ? std::string("ssh-agent -a ") + files.agent_socket.string()
                  : std::string("gpgconf --launch gpg-agent")) +
             "), then allow its socket: " + allow;
    case AgentGap::NotAllowed:
      break;
  }
  return "git signs with " + program + ", whose socket " + files.agent_socket.string() +
         " is not in hostIPC.allowedSockets; to sign inside the sandbox, add it to the "
         "configuration: " +
         allow;
}

}  // namespace pisandbox::policy
