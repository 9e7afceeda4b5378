// What git's signing reads inside the sandbox (src/policy/signing.hpp; docs/security.md,
// "Signed commits").
#include "policy/signing.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "policy/git_config_guard.hpp"
#include "policy/sandbox_policy.hpp"

namespace pisandbox::policy {
namespace {

constexpr const char* kPublic =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBfnjROZNcZJBmbp/jxmuD4ODg36kqWZ8fpdvGpDO2o7 "
    "t@example.com\n";

std::vector<GitConfigValue> values(std::string_view text) {
  std::vector<GitConfigValue> out;
  for (const auto& e : read_git_config(text).findings) out.push_back({e.key, e.value, e.implicit});
  return out;
}

TEST(GitSigning, ReadsTheSettingsTheLastValueWinning) {
  const GitSigning signing = git_signing(
      values("[commit]\n\tgpgSign\n[gpg]\n\tformat = openpgp\n[user]\n\tsigningKey = A\n"
             "[gpg]\n\tformat = SSH\n[gpg \"ssh\"]\n\tallowedSignersFile = ~/.ssh/allowed\n"
             "[user]\n\tsigningkey = ~/.ssh/id_ed25519.pub\n[tag]\n\tgpgsign = off\n"));
  EXPECT_TRUE(signing.sign_commits);
  EXPECT_FALSE(signing.sign_tags);
  EXPECT_EQ(signing.format, SigningFormat::Ssh);
  EXPECT_EQ(signing.signing_key, "~/.ssh/id_ed25519.pub");
  EXPECT_EQ(signing.allowed_signers, "~/.ssh/allowed");
  EXPECT_TRUE(signing.configured());
  EXPECT_FALSE(git_signing(values("[user]\n\tname = T\n[commit]\n\tgpgsign = 0\n")).configured());
}

TEST(GitSigning, TheSshKeyFileIsAPathAndNeverALiteralKey) {
  GitSigning signing{
      .format = SigningFormat::Ssh, .format_set = true, .signing_key = "~/.ssh/k.pub"};
  EXPECT_EQ(ssh_signing_key_file(signing, "/home/u"), "/home/u/.ssh/k.pub");
  signing.signing_key = "key::ssh-ed25519 AAAA";
  EXPECT_EQ(ssh_signing_key_file(signing, "/home/u"), "");
  signing.signing_key = "relative.pub";
  EXPECT_EQ(ssh_signing_key_file(signing, "/home/u"), "");
  signing = {.signing_key = "/home/u/.ssh/k.pub"};  // OpenPGP: a key id, not a file
  EXPECT_EQ(ssh_signing_key_file(signing, "/home/u"), "");
}

TEST(GitSigning, TheSshKeyFileIsNamedAsAPublicKey) {
  GitSigning signing{.format = SigningFormat::Ssh, .format_set = true};
  for (const char* name : {"~/.config/svc/credentials", "~/.ssh/id_ed25519", "~/.ssh/pub",
                           "~/.ssh/k.pub.bak", "~/.pub"}) {
    signing.signing_key = name;
    EXPECT_EQ(ssh_signing_key_file(signing, "/home/u"), "") << name;
  }
  signing.signing_key = "~/.ssh/git signing.pub";
  EXPECT_EQ(ssh_signing_key_file(signing, "/home/u"), "/home/u/.ssh/git signing.pub");
}

TEST(GitSigning, AKeyLineIsAKeyOnlyWhenItsBase64DecodesToOne) {
  // A token after a key type: base64 characters, 40 of them, that decode to no key blob.
  EXPECT_FALSE(
      is_ssh_public_key("ssh-ed25519 c2VydmljZS10b2tlbi0xMjM0NTY3ODkwYWJjZGVm FAKE-CREDENTIAL\n"));
  EXPECT_FALSE(is_allowed_signers(
      "t@example.com ssh-ed25519 c2VydmljZS10b2tlbi0xMjM0NTY3ODkwYWJjZGVm secret\n"));
  // A real ed25519 blob named as another type, one cut short, one not padded.
  EXPECT_FALSE(is_ssh_public_key(
      "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIBfnjROZNcZJBmbp/jxmuD4ODg36kqWZ8fpdvGpDO2o7\n"));
  EXPECT_FALSE(is_ssh_public_key("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBfnjROZNcZJBmbp/jxmu\n"));
  EXPECT_FALSE(is_ssh_public_key(
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBfnjROZNcZJBmbp/jxmuD4ODg36kqWZ8fpdvGpDO2o\n"));
  EXPECT_TRUE(is_ssh_public_key(
      "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBHmx2/n/Rp/XGcGNb"
      "JghK+w1DXqCBV/erWWr3gOgK0nuLVabnCOCv86hPcjxR1HTQ1qWRihAHoI+rsA12kDGhMI= host\n"));
}

TEST(GitSigning, OnlyAPublicKeyIsAPublicKey) {
  EXPECT_TRUE(is_ssh_public_key(kPublic));
  EXPECT_FALSE(
      is_ssh_public_key("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
                        "-----END OPENSSH PRIVATE KEY-----\n"));
  EXPECT_FALSE(is_ssh_public_key(std::string(kPublic) + kPublic));  // two lines
  EXPECT_FALSE(is_ssh_public_key("ssh-ed25519 AAAAfake t@example.com\n"));
  EXPECT_FALSE(is_ssh_public_key(""));
}

TEST(GitSigning, AnAllowedSignersFileHoldsOnlyPublicKeys) {
  EXPECT_TRUE(is_allowed_signers(std::string("# team\n\nt@example.com ") + kPublic));
  EXPECT_TRUE(is_allowed_signers(std::string("t@example.com namespaces=\"git\" ") + kPublic));
  EXPECT_FALSE(
      is_allowed_signers("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
                         "-----END OPENSSH PRIVATE KEY-----\n"));
  EXPECT_FALSE(is_allowed_signers("# nothing\n"));
}

TEST(GitSigning, TheGpgAgentSocketIsWhereGpgLooksForIt) {
  EXPECT_EQ(gpg_agent_socket("/home/u/.gnupg", "/home/u", "/run/user/1000", true),
            "/run/user/1000/gnupg/S.gpg-agent");
  EXPECT_EQ(gpg_agent_socket("/home/u/.gnupg", "/home/u", "/run/user/1000", false),
            "/home/u/.gnupg/S.gpg-agent");
  EXPECT_EQ(gpg_agent_socket("/keys/gnupg", "/home/u", "/run/user/1000", false),
            "/keys/gnupg/S.gpg-agent");
  EXPECT_EQ(gpg_agent_socket("/keys/gnupg", "/home/u", "/run/user/1000", true), "");
}

TEST(GitSigning, EveryGpgAgentSocketHasItsRestrictedOne) {
  EXPECT_EQ(gpg_restricted_socket("/run/user/1000/gnupg/S.gpg-agent"),
            "/run/user/1000/gnupg/S.gpg-agent.extra");
  EXPECT_EQ(gpg_restricted_socket("/run/user/1000/gnupg/d.kg8ijih5tq41ixoognsuud6m/S.gpg-agent"),
            "/run/user/1000/gnupg/d.kg8ijih5tq41ixoognsuud6m/S.gpg-agent.extra");
  EXPECT_EQ(gpg_restricted_socket("/srv/release/gnupg/S.gpg-agent"),
            "/srv/release/gnupg/S.gpg-agent.extra");
  EXPECT_EQ(gpg_restricted_socket("/run/user/1000/gnupg/S.gpg-agent.extra"), "");
  EXPECT_EQ(gpg_restricted_socket("/run/user/1000/gnupg/S.gpg-agent.ssh"), "");
  EXPECT_EQ(gpg_restricted_socket("/tmp/ssh-x/agent.1"), "");
}

TEST(GitSigning, TheHintNamesTheSettingToAdd) {
  SigningFiles files{.signing = {.format = SigningFormat::Ssh, .format_set = true},
                     .agent_socket = "/tmp/ssh-x/agent.1",
                     .agent_entry = "$SSH_AUTH_SOCK"};
  EXPECT_EQ(signing_socket_hint(files),
            "git signs with ssh-keygen through ssh-agent, whose socket /tmp/ssh-x/agent.1 was "
            "refused; to sign inside the sandbox, add it to the configuration: {\"hostIPC\": "
            "{\"allowedSockets\": [\"$SSH_AUTH_SOCK\"]}} (docs/configuration.md, \"Signed "
            "commits\")");
}

TEST(GitSigning, AListedSocketTheCommandCanWriteSaysWhereToStartTheAgent) {
  const SigningFiles ssh{.signing = {.format = SigningFormat::Ssh, .format_set = true},
                         .agent_socket = "/home/u/ws/agent.sock",
                         .agent_entry = "$SSH_AUTH_SOCK"};
  EXPECT_EQ(signing_writable_socket_hint(ssh),
            "git signs with ssh-keygen through ssh-agent, whose socket /home/u/ws/agent.sock lies "
            "where the command can write (the workspace or filesystem.additionalAllowWrite), so "
            "its hostIPC.allowedSockets entry allows nothing there; to sign inside the sandbox, "
            "start the agent with its socket elsewhere (ssh-agent -a ~/.ssh/agent.sock) "
            "(docs/host-ipc.md, \"Host sockets\")");
  const SigningFiles gpg{.agent_socket = "/home/u/ws/gnupg/S.gpg-agent",
                         .agent_entry = "/home/u/ws/gnupg/S.gpg-agent"};
  EXPECT_EQ(signing_writable_socket_hint(gpg),
            "git signs with gpg through gpg-agent, whose socket /home/u/ws/gnupg/S.gpg-agent lies "
            "where the command can write (the workspace or filesystem.additionalAllowWrite), so "
            "its hostIPC.allowedSockets entry allows nothing there; to sign inside the sandbox, "
            "use a gpg home outside those places (GNUPGHOME) (docs/host-ipc.md, \"Host "
            "sockets\")");
}

PolicyInputs inputs_with(SigningFiles signing, const fs::path& workspace = "/home/u/ws") {
  PolicyInputs inputs;
  inputs.workspace = workspace;
  inputs.home = "/home/u";
  inputs.self_exe = "/usr/bin/pi-sandbox";
  inputs.signing = std::move(signing);
  return inputs;
}

bool exposed(const SandboxPolicy& policy, const fs::path& path) {
  return std::ranges::any_of(policy.home_read_allowed, [&](const Exposure& e) {
    return e.path == path && e.access == Access::ReadOnly;
  });
}

TEST(GitSigning, AGitCommandThatSignsIsOneThatMaySign) {
  EXPECT_TRUE(may_sign({"git", "commit", "-m", "x"}));
  EXPECT_TRUE(may_sign({"/usr/bin/git", "-C", "sub", "rebase", "main"}));
  EXPECT_TRUE(may_sign({"make", "&&", "git", "tag", "-s", "v1"}));
  EXPECT_FALSE(may_sign({"commit", "git", "status"}));
  EXPECT_FALSE(may_sign({"git", "fetch"}));
  EXPECT_FALSE(may_sign({"make", "commit"}));
}

TEST(GitSigning, ACommandLineThatAsksToSign) {
  EXPECT_TRUE(asks_to_sign({"git", "commit", "-S", "-m", "x"}));
  EXPECT_TRUE(asks_to_sign({"git", "commit", "--gpg-sign=ABC"}));
  EXPECT_TRUE(asks_to_sign({"/usr/bin/git", "merge", "--gpg-sign", "topic"}));
  EXPECT_FALSE(asks_to_sign({"git", "commit", "-s", "-m", "x"}));  // -s: a sign-off line
  EXPECT_FALSE(asks_to_sign({"ls", "-S"}));
}

TEST(GitSigning, ASigningKeyThatIsNotAPublicKeyFileIsHidden) {
  const GitSigning ssh{
      .format = SigningFormat::Ssh, .format_set = true, .signing_key = "~/.ssh/id_ed25519"};
  const std::string private_key =
      "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE=\n-----END OPENSSH PRIVATE "
      "KEY-----\n";
  EXPECT_TRUE(names_hidden_ssh_key(ssh, "/home/u", private_key));
  EXPECT_TRUE(names_hidden_ssh_key(ssh, "/home/u", kPublic));  // not named *.pub: not shown
  EXPECT_FALSE(names_hidden_ssh_key(ssh, "/home/u", ""));      // no such file
  GitSigning pub = ssh;
  pub.signing_key = "/home/u/.ssh/id_ed25519.pub";
  EXPECT_FALSE(names_hidden_ssh_key(pub, "/home/u", kPublic));
  EXPECT_TRUE(names_hidden_ssh_key(pub, "/home/u", "-----BEGIN RSA PRIVATE KEY-----\nx\n"));
  GitSigning literal = ssh;
  literal.signing_key = std::string("key::") + kPublic;
  EXPECT_FALSE(names_hidden_ssh_key(literal, "/home/u", private_key));
  GitSigning relative = ssh;
  relative.signing_key = "id_ed25519";
  EXPECT_FALSE(names_hidden_ssh_key(relative, "/home/u", private_key));
  GitSigning gpg = ssh;
  gpg.format = SigningFormat::OpenPgp;
  EXPECT_FALSE(names_hidden_ssh_key(gpg, "/home/u", private_key));

  EXPECT_EQ(hidden_ssh_key_hint(ssh),
            "user.signingKey names ~/.ssh/id_ed25519, which is not a public key file, so the "
            "sandbox hides it (it shows only a public key named *.pub); set user.signingKey to "
            "the public key beside it, ~/.ssh/id_ed25519.pub: git signs with it through "
            "ssh-agent, which holds the key (docs/configuration.md, \"Signed commits\")");
  EXPECT_NE(
      hidden_ssh_key_hint(pub).find("set user.signingKey to a public key file (ssh-keygen -y -f "
                                    "/home/u/.ssh/id_ed25519.pub prints the key): "),
      std::string::npos);
}

TEST(GitSigning, TheAgentHintSaysWhyNoAgentSigns) {
  SigningFiles ssh{.signing = {.format = SigningFormat::Ssh, .format_set = true}};
  EXPECT_EQ(signing_agent_hint(ssh, AgentGap::NoAgent),
            "git signs with ssh-keygen through ssh-agent, and SSH_AUTH_SOCK is not set: no agent "
            "holds the key for the sandbox; start one on the host (eval \"$(ssh-agent)\"; "
            "ssh-add), then allow its socket: {\"hostIPC\": {\"allowedSockets\": "
            "[\"$SSH_AUTH_SOCK\"]}} (docs/configuration.md, \"Signed commits\")");
  ssh.agent_socket = "/tmp/ssh-x/agent.1";
  ssh.agent_entry = "$SSH_AUTH_SOCK";
  EXPECT_EQ(signing_agent_hint(ssh, AgentGap::NotAllowed),
            "git signs with ssh-keygen through ssh-agent, whose socket /tmp/ssh-x/agent.1 is not "
            "in hostIPC.allowedSockets; to sign inside the sandbox, add it to the configuration: "
            "{\"hostIPC\": {\"allowedSockets\": [\"$SSH_AUTH_SOCK\"]}} (docs/configuration.md, "
            "\"Signed commits\")");
  const SigningFiles gpg{.agent_socket = "/run/user/1000/gnupg/S.gpg-agent",
                         .agent_entry = "/run/user/1000/gnupg/S.gpg-agent"};
  EXPECT_EQ(signing_agent_hint(gpg, AgentGap::NotRunning),
            "git signs with gpg through gpg-agent, whose socket /run/user/1000/gnupg/S.gpg-agent "
            "does not exist: the agent is not running on the host; start it there (gpgconf "
            "--launch gpg-agent), then allow its socket: {\"hostIPC\": {\"allowedSockets\": "
            "[\"/run/user/1000/gnupg/S.gpg-agent\"]}} (docs/configuration.md, \"Signed "
            "commits\")");
}

TEST(GitSigning, ThePolicyShowsThePublicFilesReadOnlyInTheHiddenHome) {
  const SigningFiles files{
      .ssh_public_key = "/home/u/.ssh/id_ed25519.pub",
      .allowed_signers = "/home/u/.ssh/allowed_signers",
      .gnupg_files = {"/home/u/.gnupg/pubring.kbx", "/home/u/.gnupg/trustdb.gpg"}};
  const SandboxPolicy policy = default_policy(inputs_with(files));
  for (const char* path : {"/home/u/.ssh/id_ed25519.pub", "/home/u/.ssh/allowed_signers",
                           "/home/u/.gnupg/pubring.kbx", "/home/u/.gnupg/trustdb.gpg"})
    EXPECT_TRUE(exposed(policy, path)) << path;
  EXPECT_FALSE(exposed(policy, "/home/u/.ssh"));
  EXPECT_FALSE(exposed(policy, "/home/u/.gnupg"));
  EXPECT_EQ(policy.signing, files);
  // The workspace is the home: nothing to re-expose.
  EXPECT_FALSE(
      exposed(default_policy(inputs_with(files, "/home/u")), "/home/u/.gnupg/pubring.kbx"));
}

TEST(GitSigning, TheGpgPublicFilesAreNeverTheSecretOnes) {
  for (const auto name : gnupg_public_files()) {
    EXPECT_FALSE(is_credential_name(".gnupg/" + std::string(name))) << name;
    EXPECT_FALSE(std::string_view(name).starts_with("private-keys")) << name;
    EXPECT_FALSE(std::string_view(name).starts_with("openpgp-revocs")) << name;
  }
}

}  // namespace
}  // namespace pisandbox::policy
