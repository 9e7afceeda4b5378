// Signed commits inside the sandbox (docs/security.md, "Signed commits"; docs/configuration.md,
// "Signed commits"): git signs through a real agent on the host once its socket is in
// hostIPC.allowedSockets, with the public half of the key, gpg's public files and the allowed
// signers read-only in the hidden home and the private keys never readable; until then one line
// names the setting. The keys live where the tools put them by default (~/.ssh, ~/.gnupg).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.hpp"

namespace pisandbox::testing {
namespace {

constexpr const char* kEmail = "t@example.com";

bool has_openssh() {
  return ::access("/usr/bin/ssh-agent", X_OK) == 0 && ::access("/usr/bin/ssh-keygen", X_OK) == 0;
}
bool has_gnupg() {
  return ::access("/usr/bin/gpg", X_OK) == 0 && ::access("/usr/bin/gpgconf", X_OK) == 0;
}

class Signing : public ::testing::Test {
 protected:
  void SetUp() override {
    PI_SANDBOX_REQUIRE(unix_sockets_brokered(),
                       "this kernel cannot broker Unix sockets (see pi-sandbox doctor)");
    env_ = scratch_.env();
    // gpg's default home: the test's own environment may name another one.
    if (::getenv("GNUPGHOME") != nullptr) env_["GNUPGHOME"] = (scratch_.home / ".gnupg").string();
    git({"init", "-q"});
  }
  void TearDown() override {
    if (ssh_agent_ > 0) ::kill(ssh_agent_, SIGTERM);
    if (gpg_started_) run_process({"/usr/bin/gpgconf", "--kill", "gpg-agent"}, env_);
  }

  RunResult git(std::vector<std::string> args) {
    args.insert(args.begin(), {"/usr/bin/git", "-C", scratch_.ws.string()});
    return run_process(args, env_);
  }
  /// `pi-sandbox run --no-prompt` of `command` in the workspace, with `config` (hostIPC) if any.
  RunResult sandboxed(const std::string& command, const std::string& host_ipc = "",
                      const fs::path& cwd = {}) {
    std::vector<std::string> argv = {sandbox_binary(), "run", "--no-prompt", "--cwd",
                                     (cwd.empty() ? scratch_.ws : cwd).string()};
    if (!host_ipc.empty()) {
      const fs::path config = scratch_.root / "config.json";
      write_file(config, R"({"hostIPC": )" + host_ipc + "}");
      argv.insert(argv.end(), {"--config", config.string()});
    }
    argv.insert(argv.end(), {"-c", command});
    return run_process(argv, env_);
  }
  void append_gitconfig(const std::string& text) {
    write_file(scratch_.home / ".gitconfig", read_file(scratch_.home / ".gitconfig") + text);
  }

  /// An ed25519 key in ~/.ssh/id_ed25519 added to a real ssh-agent; git signs with its public
  /// half (user.signingKey) and verifies with ~/.ssh/allowed_signers; the agent listens at
  /// `socket` (beside the home by default). Returns the public key.
  std::string ssh_setup(const fs::path& socket = {}) {
    const fs::path key = scratch_.home / ".ssh" / "id_ed25519";
    fs::remove(scratch_.home / ".ssh" / "id_rsa");
    const RunResult made = run_process(
        {"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", kEmail, "-f", key}, env_);
    EXPECT_EQ(made.exit_code, 0) << made.err;
    agent_socket_ = socket.empty() ? scratch_.root / "agent.sock" : socket;
    const RunResult agent = run_process({"/usr/bin/ssh-agent", "-a", agent_socket_.string()});
    EXPECT_EQ(agent.exit_code, 0) << agent.err;
    const auto pid_at = agent.out.find("SSH_AGENT_PID=");
    if (pid_at != std::string::npos) ssh_agent_ = std::atoi(agent.out.c_str() + pid_at + 14);
    env_["SSH_AUTH_SOCK"] = agent_socket_.string();
    const RunResult added = run_process({"/usr/bin/ssh-add", "-q", key.string()}, env_);
    EXPECT_EQ(added.exit_code, 0) << added.err;
    const std::string pub = read_file(key.string() + ".pub");
    write_file(scratch_.home / ".ssh" / "allowed_signers", std::string(kEmail) + " " + pub);
    append_gitconfig(
        "[gpg]\n\tformat = ssh\n[gpg \"ssh\"]\n\tallowedSignersFile = ~/.ssh/allowed_signers\n"
        "[user]\n\tsigningKey = ~/.ssh/id_ed25519.pub\n");
    return pub;
  }

  /// A key made by gpg in its default home (~/.gnupg), its agent started by gpg; git signs every
  /// commit with it. Returns the agent's socket as gpgconf names it.
  std::string gpg_setup() {
    gpg_started_ = true;
    const RunResult key = run_process({"/usr/bin/gpg", "--batch", "--passphrase", "",
                                       "--quick-gen-key", kEmail, "ed25519", "sign", "never"},
                                      env_);
    EXPECT_EQ(key.exit_code, 0) << key.err;
    append_gitconfig("[commit]\n\tgpgSign = true\n[user]\n\tsigningKey = " + std::string(kEmail) +
                     "\n");
    const RunResult socket = run_process({"/usr/bin/gpgconf", "--list-dirs", "agent-socket"}, env_);
    return socket.out.substr(0, socket.out.find('\n'));
  }

  Scratch scratch_;
  std::map<std::string, std::string> env_;
  fs::path agent_socket_;
  pid_t ssh_agent_ = -1;
  bool gpg_started_ = false;
};

TEST_F(Signing, SshSignsThroughARealAgentAndTheHostVerifiesIt) {
  PI_SANDBOX_REQUIRE(has_openssh(), "openssh-client is not installed");
  const std::string pub = ssh_setup();
  const RunResult r = sandboxed(
      "git commit -q -S --allow-empty -m signed && cat ~/.ssh/id_ed25519.pub && "
      "cat ~/.ssh/id_ed25519; cp ~/.ssh/id_ed25519 /tmp/k",
      R"({"allowedSockets": ["$SSH_AUTH_SOCK"]})");
  EXPECT_EQ(r.exit_code, 1) << r.err;  // 1: cp, below
  EXPECT_EQ(r.out, pub);
  const std::string key = (scratch_.home / ".ssh" / "id_ed25519").string();
  EXPECT_NE(r.err.find("cat: " + key + ": No such file or directory\n"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("cp: cannot stat '" + key + "': No such file or directory\n"),
            std::string::npos)
      << r.err;
  const RunResult verified = git({"verify-commit", "HEAD"});
  EXPECT_EQ(verified.exit_code, 0) << verified.err;
  EXPECT_EQ(
      verified.err.rfind("Good \"git\" signature for t@example.com with ED25519 key SHA256:", 0),
      0u)
      << verified.err;
  EXPECT_EQ(git({"log", "-1", "--format=%s %G?"}).out, "signed G\n");
}

TEST_F(Signing, SshSignsThroughAnAgentInTheSshDirectoryWhenTheHomeIsTheWorkspace) {
  PI_SANDBOX_REQUIRE(has_openssh(), "openssh-client is not installed");
  // `ssh-agent -a ~/.ssh/agent.sock`, and the agent started in the home itself: ~/.ssh is
  // read-only there (docs/security.md, "The workspace is the home"), so the entry allows.
  const std::string pub = ssh_setup(scratch_.home / ".ssh" / "agent.sock");
  const std::string key = (scratch_.home / ".ssh" / "id_ed25519").string();
  const RunResult r = sandboxed(
      "cd ws && git commit -q -S --allow-empty -m signed && ssh-add -l | wc -l && "
      "wc -c <~/.ssh/id_ed25519 && stat -c %a ~/.ssh/id_ed25519 && "
      "ssh-keygen -y -f ~/.ssh/id_ed25519",
      R"({"allowedSockets": ["$SSH_AUTH_SOCK"]})", scratch_.home);
  // The masked key: empty, 0400, so ssh-keygen reads it as an empty key (a key the agent does
  // not hold for the request) without eight lines about its permissions.
  EXPECT_EQ(r.exit_code, 255) << r.err;
  EXPECT_EQ(r.out, "1\n0\n400\n") << r.err;
  EXPECT_EQ(r.err.find("UNPROTECTED PRIVATE KEY FILE"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("host socket refused"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("pi-sandbox: git signs with"), std::string::npos) << r.err;
  EXPECT_EQ(git({"verify-commit", "HEAD"}).exit_code, 0);
  EXPECT_EQ(git({"log", "-1", "--format=%s %G?"}).out, "signed G\n");
  EXPECT_EQ(read_file(key + ".pub"), pub);
}

TEST_F(Signing, SshWithoutTheAgentAllowedSaysWhichSettingToAdd) {
  PI_SANDBOX_REQUIRE(has_openssh(), "openssh-client is not installed");
  ssh_setup();
  const RunResult r = sandboxed("git commit -q -S --allow-empty -m refused");
  EXPECT_EQ(r.exit_code, 128) << r.err;
  const std::string line =
      "pi-sandbox: git signs with ssh-keygen through ssh-agent, whose socket " +
      agent_socket_.string() +
      " was refused; to sign inside the sandbox, add it to the configuration: "
      "{\"hostIPC\": {\"allowedSockets\": [\"$SSH_AUTH_SOCK\"]}} (docs/configuration.md, "
      "\"Signed commits\")\n";
  const auto at = r.err.find(line);
  EXPECT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(line, at + 1), std::string::npos) << r.err;       // once
  EXPECT_EQ(git({"rev-parse", "-q", "--verify", "HEAD"}).exit_code, 1);  // nothing committed
  EXPECT_EQ(r.err.find("is not in hostIPC.allowedSockets"), std::string::npos) << r.err;
  // A failure the shell hides (`; echo`) still gets the line: the refusal was said.
  const RunResult hidden = sandboxed("git commit -q -S --allow-empty -m refused; echo");
  EXPECT_EQ(hidden.exit_code, 0) << hidden.err;
  EXPECT_NE(hidden.err.find(line), std::string::npos) << hidden.err;
  // A git command that failed without signing gets no line about the agent.
  const RunResult unsigned_failure = sandboxed("git commit -q -m nothing-staged");
  EXPECT_EQ(unsigned_failure.exit_code, 1) << unsigned_failure.err;
  EXPECT_EQ(unsigned_failure.err.find("pi-sandbox: "), std::string::npos) << unsigned_failure.err;
}

// `git commit -S` with no signing setting in the user's configuration: nothing is exposed for
// it, and the failure says which settings would. Before: git's own error only.
TEST_F(Signing, ASignatureAskedOnTheCommandLineWithoutASettingSaysWhichToSet) {
  PI_SANDBOX_REQUIRE(has_gnupg(), "gnupg is not installed");
  const RunResult r = sandboxed("git commit -q -S --allow-empty -m signed");
  EXPECT_EQ(r.exit_code, 128) << r.err;
  EXPECT_TRUE(r.err.ends_with(
      "pi-sandbox: git was asked to sign (-S), but the git configuration says nothing of "
      "signing, so the sandbox shows it no public key, no ~/.gnupg and no agent; set "
      "user.signingKey (and gpg.format ssh for an ssh key) in ~/.gitconfig, then allow the "
      "agent's socket in hostIPC.allowedSockets (docs/configuration.md, \"Signed commits\")\n"))
      << r.err;
}

TEST_F(Signing, AnAllowedAgentSocketTheCommandCanWriteSaysSoInsteadOfAddingIt) {
  PI_SANDBOX_REQUIRE(has_openssh(), "openssh-client is not installed");
  // `ssh-agent -a` in the workspace: listed, but the command could put any socket there.
  ssh_setup(scratch_.ws / "agent.sock");
  const RunResult r = sandboxed("git commit -q -S --allow-empty -m refused",
                                R"({"allowedSockets": ["$SSH_AUTH_SOCK"]})");
  EXPECT_EQ(r.exit_code, 128) << r.err;
  const std::string line =
      "pi-sandbox: git signs with ssh-keygen through ssh-agent, whose socket " +
      agent_socket_.string() +
      " lies where the command can write (the workspace or filesystem.additionalAllowWrite), so "
      "its hostIPC.allowedSockets entry allows nothing there; to sign inside the sandbox, start "
      "the agent with its socket elsewhere (ssh-agent -a ~/.ssh/agent.sock) (docs/host-ipc.md, "
      "\"Host sockets\")\n";
  const auto at = r.err.find(line);
  EXPECT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(line, at + 1), std::string::npos) << r.err;  // once
  EXPECT_EQ(r.err.find("add it to the configuration"), std::string::npos) << r.err;
  EXPECT_EQ(git({"rev-parse", "-q", "--verify", "HEAD"}).exit_code, 1);  // nothing committed
}

/// The line of a user.signingKey naming the private key ~/.ssh/id_ed25519.
const std::string kPrivateKeyLine =
    "pi-sandbox: user.signingKey names ~/.ssh/id_ed25519, which is not a public key file, so the "
    "sandbox hides it (it shows only a public key named *.pub); set user.signingKey to the public "
    "key beside it, ~/.ssh/id_ed25519.pub: git signs with it through ssh-agent, which holds the "
    "key (docs/configuration.md, \"Signed commits\")\n";

/// Whether `line` is in `text` exactly once.
bool once(const std::string& text, const std::string& line) {
  const auto at = text.find(line);
  return at != std::string::npos && text.find(line, at + 1) == std::string::npos;
}

TEST_F(Signing, APrivateKeyAsTheSigningKeySaysToNameThePublicOneBesideIt) {
  PI_SANDBOX_REQUIRE(has_openssh(), "openssh-client is not installed");
  ssh_setup();
  append_gitconfig("[user]\n\tsigningKey = ~/.ssh/id_ed25519\n");  // ssh-keygen's own path
  const std::string allowed = R"({"allowedSockets": ["$SSH_AUTH_SOCK"]})";
  const RunResult r = sandboxed("git commit -q --allow-empty -S -m refused", allowed);
  EXPECT_EQ(r.exit_code, 128) << r.err;
  EXPECT_TRUE(once(r.err, kPrivateKeyLine)) << r.err;
  EXPECT_EQ(r.err.find("pi-sandbox: git signs with"), std::string::npos) << r.err;  // agent fine
  // The agent runs but is not allowed, and ssh-keygen never asked it: one line says so.
  const RunResult not_allowed = sandboxed("git commit -q --allow-empty -S -m refused");
  EXPECT_EQ(not_allowed.exit_code, 128) << not_allowed.err;
  EXPECT_TRUE(once(not_allowed.err, kPrivateKeyLine)) << not_allowed.err;
  EXPECT_TRUE(once(not_allowed.err,
                   "pi-sandbox: git signs with ssh-keygen through ssh-agent, whose socket " +
                       agent_socket_.string() +
                       " is not in hostIPC.allowedSockets; to sign inside the sandbox, add it to "
                       "the configuration: {\"hostIPC\": {\"allowedSockets\": "
                       "[\"$SSH_AUTH_SOCK\"]}} (docs/configuration.md, \"Signed commits\")\n"))
      << not_allowed.err;
  // What the line says to do signs.
  append_gitconfig("[user]\n\tsigningKey = ~/.ssh/id_ed25519.pub\n");
  const RunResult fixed = sandboxed("git commit -q --allow-empty -S -m signed", allowed);
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(git({"log", "-1", "--format=%s %G?"}).out, "signed G\n");
}

TEST_F(Signing, APrivateKeyWithoutAnAgentSaysThatNoAgentHoldsIt) {
  PI_SANDBOX_REQUIRE(has_openssh(), "openssh-client is not installed");
  ssh_setup();
  append_gitconfig("[user]\n\tsigningKey = ~/.ssh/id_ed25519\n");
  env_.erase("SSH_AUTH_SOCK");
  const RunResult r = sandboxed("git commit -q --allow-empty -S -m refused");
  EXPECT_EQ(r.exit_code, 128) << r.err;
  EXPECT_TRUE(once(r.err, kPrivateKeyLine)) << r.err;
  EXPECT_TRUE(once(r.err,
                   "pi-sandbox: git signs with ssh-keygen through ssh-agent, and SSH_AUTH_SOCK is "
                   "not set: no agent holds the key for the sandbox; start one on the host (eval "
                   "\"$(ssh-agent)\"; ssh-add), then allow its socket: {\"hostIPC\": "
                   "{\"allowedSockets\": [\"$SSH_AUTH_SOCK\"]}} (docs/configuration.md, "
                   "\"Signed commits\")\n"))
      << r.err;
  // A command that does not sign gets neither line.
  const RunResult other = sandboxed("git status --short; false");
  EXPECT_EQ(other.err.find("pi-sandbox: "), std::string::npos) << other.err;
}

TEST_F(Signing, GpgWithItsAgentNotRunningSaysToStartIt) {
  PI_SANDBOX_REQUIRE(has_gnupg(), "gnupg is not installed");
  const std::string socket = gpg_setup();
  ASSERT_EQ(run_process({"/usr/bin/gpgconf", "--kill", "gpg-agent"}, env_).exit_code, 0);
  // gpgconf returns before the agent has removed its socket.
  for (int i = 0; i < 500 && fs::exists(socket); ++i) ::usleep(20'000);
  ASSERT_FALSE(fs::exists(socket));
  const RunResult r = sandboxed("git commit -q --allow-empty -m refused",
                                R"({"allowedSockets": [")" + socket + R"("]})");
  EXPECT_EQ(r.exit_code, 128) << r.err;
  EXPECT_TRUE(once(r.err, "pi-sandbox: git signs with gpg through gpg-agent, whose socket " +
                              socket +
                              " does not exist: the agent is not running on the host; start it "
                              "there (gpgconf --launch gpg-agent), then allow its socket: "
                              "{\"hostIPC\": {\"allowedSockets\": [\"" +
                              socket + "\"]}} (docs/configuration.md, \"Signed commits\")\n"))
      << r.err;
}

TEST_F(Signing, GpgWithTheDefaultHomeSignsThroughARealAgentAndTheHostVerifiesIt) {
  PI_SANDBOX_REQUIRE(has_gnupg(), "gnupg is not installed");
  const std::string socket = gpg_setup();
  const fs::path gnupg = scratch_.home / ".gnupg";
  const RunResult r = sandboxed(
      "git commit -q --allow-empty -m signed && ls ~/.gnupg/private-keys-v1.d "
      "~/.gnupg/openpgp-revocs.d; cat ~/.gnupg/pubring.kbx | wc -c; "
      "gpg --batch --export-secret-keys --armor t@example.com",
      R"({"allowedSockets": [")" + socket + R"("]})");
  EXPECT_EQ(r.exit_code, 2) << r.err;  // 2: gpg --export-secret-keys, below
  // Only the size: the agent's restricted socket refuses to export the secret key.
  EXPECT_EQ(r.out, std::to_string(fs::file_size(gnupg / "pubring.kbx")) + "\n");
  EXPECT_NE(r.err.find("gpg: error getting the KEK: Forbidden\n"), std::string::npos) << r.err;
  for (const char* dir : {"private-keys-v1.d", "openpgp-revocs.d"})
    EXPECT_NE(r.err.find("ls: cannot access '" + (gnupg / dir).string() +
                         "': No such file or directory\n"),
              std::string::npos)
        << r.err;
  const RunResult verified = git({"verify-commit", "HEAD"});
  EXPECT_EQ(verified.exit_code, 0) << verified.err;
  EXPECT_NE(verified.err.find("gpg: Good signature from \"t@example.com\""), std::string::npos)
      << verified.err;
  EXPECT_EQ(git({"log", "-1", "--format=%s %G?"}).out, "signed G\n");
}

TEST_F(Signing, TheGpgHomeKeepsItsHostModeSoGpgDoesNotWarn) {
  // ~/.gnupg is made in the hidden home to hold the public files' mount points: 0755 there made
  // gpg warn `unsafe permissions on homedir` on every call.
  PI_SANDBOX_REQUIRE(has_gnupg(), "gnupg is not installed");
  gpg_setup();
  struct stat st {};
  ASSERT_EQ(::stat((scratch_.home / ".gnupg").c_str(), &st), 0);
  ASSERT_EQ(st.st_mode & 07777, 0700u);  // as gpg makes it
  // --no-auto-check-trustdb: the key just made leaves a trust check due, which writes the
  // trust database, read-only inside.
  const RunResult r =
      sandboxed("stat -c %a ~/.gnupg && gpg --list-keys --with-colons --no-auto-check-trustdb");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "700") << r.out;
  EXPECT_NE(r.out.find(":t@example.com:"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("unsafe"), std::string::npos) << r.err;
}

TEST_F(Signing, GpgWithoutTheAgentAllowedSaysWhichSettingToAdd) {
  PI_SANDBOX_REQUIRE(has_gnupg(), "gnupg is not installed");
  const std::string socket = gpg_setup();
  const RunResult r = sandboxed("git commit -q --allow-empty -m refused");
  EXPECT_EQ(r.exit_code, 128) << r.err;
  EXPECT_NE(r.err.find("error: gpg failed to sign the data"), std::string::npos) << r.err;
  const std::string line = "pi-sandbox: git signs with gpg through gpg-agent, whose socket " +
                           socket +
                           " was refused; to sign inside the sandbox, add it to the configuration: "
                           "{\"hostIPC\": {\"allowedSockets\": [\"" +
                           socket + "\"]}} (docs/configuration.md, \"Signed commits\")\n";
  const auto at = r.err.find(line);
  EXPECT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(line, at + 1), std::string::npos) << r.err;
}

TEST_F(Signing, AFifoNamedAsTheSigningKeyDoesNotHoldTheNextCommand) {
  // user.* is on the guard's allowlist: a command may name a FIFO of the workspace as the
  // repository's signing key; the next start reads the key file without waiting for a writer.
  append_gitconfig("[gpg]\n\tformat = ssh\n");
  ASSERT_EQ(::mkfifo((scratch_.ws / "key.pub").c_str(), 0600), 0);
  ASSERT_EQ(git({"config", "user.signingKey", (scratch_.ws / "key.pub").string()}).exit_code, 0);
  const RunResult r = run_process({"/usr/bin/timeout", "20", sandbox_binary(), "run", "--no-prompt",
                                   "--cwd", scratch_.ws.string(), "--", "/bin/echo", "started"},
                                  env_);
  EXPECT_EQ(r.exit_code, 0) << r.err;  // 124: timeout killed a start that waited
  EXPECT_EQ(r.out, "started\n");
}

TEST_F(Signing, ASigningKeyLinkInTheRepositoryOfAPackageDoesNotStopTheNextCommand) {
  // The workspace is a package of the repository: its git directory, outside the workspace, is
  // the command's to write. A command leaves a link there to a public key and names it as the
  // repository's signing key (user.* is on the guard's allowlist); the next command starts.
  append_gitconfig("[gpg]\n\tformat = ssh\n");
  const fs::path key = scratch_.home / ".ssh" / "id_ed25519";
  fs::create_directories(key.parent_path());
  ASSERT_EQ(run_process(
                {"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key.string()}, env_)
                .exit_code,
            0);
  const fs::path pkg = scratch_.ws / "pkg";
  fs::create_directories(pkg);
  write_file(pkg / "a.txt", "a\n");
  ASSERT_EQ(git({"add", "."}).exit_code, 0);
  ASSERT_EQ(git({"commit", "-q", "-m", "init"}).exit_code, 0);
  const fs::path link = scratch_.ws / ".git" / "k.pub";
  fs::create_symlink(key.string() + ".pub", link);
  ASSERT_EQ(git({"config", "user.signingKey", link.string()}).exit_code, 0);
  const RunResult r = run_process(
      {sandbox_binary(), "run", "--no-prompt", "--cwd", pkg.string(), "--", "/bin/echo", "started"},
      env_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "started\n");
}

}  // namespace
}  // namespace pisandbox::testing
