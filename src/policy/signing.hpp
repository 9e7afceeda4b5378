// pisandbox::policy — what git's commit and tag signing needs inside the sandbox (docs/security.md,
// "Signed commits"): the public half of the signing key and the files that name who signs,
// read-only; the agent that holds the private half stays on the host, behind its socket
// (hostIPC.allowedSockets). Pure.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pisandbox::policy {

namespace fs = std::filesystem;

/// `gpg.format` (git-config(1)): which program signs.
enum class SigningFormat {
  OpenPgp,  ///< gpg (the default)
  X509,     ///< gpgsm
  Ssh,      ///< ssh-keygen -Y sign
};

/// The signing settings of git's configuration, as git-config(1) defines them; the last value
/// in git's reading order wins.
///   sign_commits, sign_tags: `commit.gpgSign`, `tag.gpgSign` (git booleans);
///   format: `gpg.format` (an unknown value reads as the default, OpenPgp);
///   signing_key: `user.signingKey` as written (a gpg key id, an ssh key file, or `key::...`);
///   allowed_signers: `gpg.ssh.allowedSignersFile` as written.
struct GitSigning {
  bool sign_commits = false;
  bool sign_tags = false;
  SigningFormat format = SigningFormat::OpenPgp;
  bool format_set = false;  ///< `gpg.format` is set at all
  std::string signing_key = {};
  std::string allowed_signers = {};

  /// Whether anything says git signs: a gpgSign setting, a signing key or a format.
  [[nodiscard]] bool configured() const {
    return sign_commits || sign_tags || format_set || !signing_key.empty();
  }
  friend bool operator==(const GitSigning&, const GitSigning&) = default;
};

/// The GitSigning of `entries`: (key, value, implicit) of git configuration files in the order
/// git reads them (system, global, repository), keys canonical as read_git_config() gives them
/// (`commit.gpgsign`, `gpg.ssh.allowedsignersfile`). An implicit entry (`gpgSign` alone) is
/// true.
struct GitConfigValue {
  std::string key;
  std::string value;
  bool implicit = false;
};
[[nodiscard]] GitSigning git_signing(const std::vector<GitConfigValue>& entries);

/// A path of git's configuration with `~/` replaced by `home` (git-config(1), "pathname");
/// empty for a relative path, `~user/`, or an empty value. Lexically normal.
[[nodiscard]] fs::path config_path(std::string_view value, const fs::path& home);

/// The ssh key file `user.signingKey` names when the format is ssh (config_path()) and its name
/// ends in `.pub` (ssh-keygen(1), FILES: a public key's name); empty for another format, a
/// literal key (`key::...`, git-config(1) user.signingKey), a relative path, or another name
/// (a private key file, or any file a command named in the repository's configuration).
[[nodiscard]] fs::path ssh_signing_key_file(const GitSigning& signing, const fs::path& home);

/// Whether `text` (a whole file) is one OpenSSH public key: one line `<type> <base64> [comment]`,
/// its type one of sshd(8) "AUTHORIZED_KEYS FILE FORMAT"'s, its base64 at least 32 characters
/// that decode to a key blob whose first string (RFC 4253, section 6.6) is that type (a private
/// key file, `-----BEGIN OPENSSH PRIVATE KEY-----`, is not; nor a token after a key type).
[[nodiscard]] bool is_ssh_public_key(std::string_view text);

/// Whether `text` (a whole file) reads as an allowed signers file (ssh-keygen(1), "ALLOWED
/// SIGNERS"): every line blank, a `#` comment, or `principals [options] <type> <base64> [comment]`
/// with a key as is_ssh_public_key() accepts it (its blob decoded), and at least one such line. A
/// private key file is not one.
[[nodiscard]] bool is_allowed_signers(std::string_view text);

/// The files of a gpg home that hold no secret and that gpg reads to sign and verify: the public
/// keyrings, the trust database, the options files (gpg(1), FILES; gpg-agent(1) keeps the
/// private keys in `private-keys-v1.d`, and `openpgp-revocs.d` holds revocation certificates:
/// neither is listed).
[[nodiscard]] const std::vector<std::string_view>& gnupg_public_files();

/// What the session found on the host for git's signing, read by the policy.
///   signing:         the configuration (git_signing());
///   ssh_public_key:  ssh_signing_key_file() when it holds one ssh public key (is_ssh_public_key(),
///                    read through symlinks), else empty: a private key is never exposed;
///   allowed_signers: `gpg.ssh.allowedSignersFile` (config_path()) when the format is ssh and
///                    it reads as one (is_allowed_signers(), through symlinks), else empty;
///   gnupg_home:      the gpg home (`$GNUPGHOME`, else `~/.gnupg`);
///   gnupg_files:     the gnupg_public_files() of gnupg_home whose real path lies in gnupg_home
///                    and outside its private-keys-v1.d and openpgp-revocs.d, as in gnupg_home;
///   agent_socket:    the agent the signing program talks to: `$SSH_AUTH_SOCK` for ssh, the gpg
///                    agent's socket (gpg_agent_socket()) for OpenPGP; empty when unknown;
///   agent_entry:     the hostIPC.allowedSockets entry that allows it (`$SSH_AUTH_SOCK`, or the
///                    socket's path);
///   gpg_agent:       gpg-agent's socket for the gpg home, whatever git signs with;
///   ssh_key_hidden:  below.
/// Paths absolute, lexically normal.
struct SigningFiles {
  GitSigning signing;
  fs::path ssh_public_key = {};
  fs::path allowed_signers = {};
  fs::path gnupg_home = {};
  std::vector<fs::path> gnupg_files = {};
  fs::path agent_socket = {};
  std::string agent_entry = {};
  /// gpg-agent's socket (gpg_agent_socket(), real path where it exists); every command is
  /// connected to its extra socket beside it instead (`S.gpg-agent.extra`, gpg-agent(1)
  /// --extra-socket), which signs and decrypts, and refuses to export secret keys
  /// (docs/security.md, "Signed commits").
  fs::path gpg_agent = {};
  /// names_hidden_ssh_key() of the signing key, when the user's own configuration (not the
  /// repository's, which a command may write) names it: the hint of hidden_ssh_key_hint().
  bool ssh_key_hidden = false;

  friend bool operator==(const SigningFiles&, const SigningFiles&) = default;
};

/// The gpg agent's socket for the gpg home `gnupg_home`, as gpg finds it (GnuPG's homedir.c;
/// `gpgconf --list-dirs agent-socket`): with the default home (`<home>/.gnupg`) and a runtime
/// directory `runtime_dir` (`/run/user/<uid>`, `runtime_dir_exists`),
/// `<runtime_dir>/gnupg/S.gpg-agent`; without one, `<gnupg_home>/S.gpg-agent`. Empty for another
/// home while the runtime directory exists: gpg names its socket there by a hash of the home.
[[nodiscard]] fs::path gpg_agent_socket(const fs::path& gnupg_home, const fs::path& home,
                                        const fs::path& runtime_dir, bool runtime_dir_exists);

/// The restricted socket beside the gpg-agent socket `socket` (a real path): its extra socket
/// `S.gpg-agent.extra` (gpg-agent(1), --extra-socket) when `socket` is named `S.gpg-agent`, the
/// name gpg-agent gives its standard socket in any gpg home or hashed runtime directory
/// (`gpgconf --list-dirs agent-socket`); empty for any other socket. Every gpg-agent's
/// standard socket exports secret keys, not only the one of the session's gpg home (a command
/// may name another home, GNUPGHOME=..., whose agent's socket the user allowed).
[[nodiscard]] fs::path gpg_restricted_socket(const fs::path& socket);

/// The line said after a failed command whose signing agent `files.agent_socket` was refused
/// (docs/configuration.md, "Signed commits"), without the `pi-sandbox: ` prefix: which program
/// signs, the socket, and the hostIPC.allowedSockets entry to add.
[[nodiscard]] std::string signing_socket_hint(const SigningFiles& files);

/// The line said in place of signing_socket_hint() (and of signing_agent_hint()'s NotAllowed)
/// when a hostIPC.allowedSockets entry names the agent's socket but the socket lies where the
/// command may write (the workspace, filesystem.additionalAllowWrite), where an entry allows
/// nothing (docs/host-ipc.md, "Host sockets"): without the `pi-sandbox: ` prefix, which program
/// signs, the socket, and where to start the agent instead.
[[nodiscard]] std::string signing_writable_socket_hint(const SigningFiles& files);

/// Whether `words` (a command's words, or its shell text's path_pieces()) may make git sign: a
/// word `git` (or a path ending in `/git`) followed by one of git's commands that sign with
/// commit.gpgSign or tag.gpgSign set (git-config(1)): commit, tag, merge, rebase, cherry-pick,
/// revert, am, pull.
[[nodiscard]] bool may_sign(const std::vector<std::string>& words);

/// Whether `words` ask git to sign on the command line (`-S`, `--gpg-sign[=<key>]` after a word
/// `git`, git-commit(1)), whatever the configuration says.
[[nodiscard]] bool asks_to_sign(const std::vector<std::string>& words);

/// The line said after a failed command that asked git to sign (asks_to_sign()) while the
/// user's git configuration says nothing of signing (GitSigning::configured() false), without
/// the `pi-sandbox: ` prefix: the sandbox then shows no public key, no `~/.gnupg` and no agent
/// (docs/configuration.md, "Signed commits"); the settings that make it do.
[[nodiscard]] std::string unconfigured_signing_hint();

/// Whether `user.signingKey` names an ssh key file the sandbox does not show (ssh format, a path
/// as config_path() reads it, the file present on the host: `key_text` its first bytes, not
/// empty) because it is not a public key file: its name does not end in `.pub`, or it holds a
/// private key (`-----BEGIN ... PRIVATE KEY-----`, ssh-keygen(1) FILES). git hands ssh-keygen
/// the file (`ssh-keygen -Y sign -f <file>`), which reads it, or `<file>.pub`, for the public
/// key; with the `.pub` named, ssh-agent signs with the key it holds.
[[nodiscard]] bool names_hidden_ssh_key(const GitSigning& signing, const fs::path& home,
                                        std::string_view key_text);

/// The line, without the `pi-sandbox: ` prefix, said after a failed command that may sign
/// (may_sign()) when names_hidden_ssh_key(): the key as written and what to set instead, the
/// `.pub` beside it (for a name already ending in `.pub`, the public key ssh-keygen -y prints).
[[nodiscard]] std::string hidden_ssh_key_hint(const GitSigning& signing);

/// Why the signing agent cannot sign for a command, when it cannot:
///   NoAgent:    ssh, `$SSH_AUTH_SOCK` unset (or not an absolute path);
///   NotRunning: the agent's socket (SigningFiles::agent_socket) does not exist on the host;
///   NotAllowed: it exists and no hostIPC.allowedSockets entry allows it.
enum class AgentGap { NoAgent, NotRunning, NotAllowed };

/// The line, without the `pi-sandbox: ` prefix, for `gap` (docs/configuration.md, "Signed
/// commits"): which program signs, its socket, how to start the agent where it is not running,
/// and the hostIPC.allowedSockets entry (`files.agent_entry`, `$SSH_AUTH_SOCK` for ssh) to add.
[[nodiscard]] std::string signing_agent_hint(const SigningFiles& files, AgentGap gap);

}  // namespace pisandbox::policy
