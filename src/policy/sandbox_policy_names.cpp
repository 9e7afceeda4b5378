// The tables of names the default policy protects or masks (policy/sandbox_policy.hpp): the
// names host programs run or trust at a writable root, the home's start files, the credentials
// tools keep in the home, and the secret file and directory names of a workspace; with the
// tests of a name against them. Pure data and string checks; default_policy()
// (sandbox_policy.cpp) and the scan (protected_scan.cpp) apply them.
#include <algorithm>
#include <cctype>

#include "policy/sandbox_policy.hpp"

namespace pisandbox::policy {

const std::vector<HostProgramName>& host_program_names() {
  constexpr auto F = NodeKind::File;
  constexpr auto D = NodeKind::Directory;
  constexpr auto kPi = ProtectReason::SecurityControl;
  constexpr auto kRun = ProtectReason::DangerousFile;
  constexpr auto kRef = NameOrigin::ReferenceDenyList;
  constexpr auto kNew = NameOrigin::Widened;
  constexpr std::string_view kPiDocs =
      "https://github.com/badlogic/pi-mono/blob/main/packages/coding-agent/README.md";
  constexpr std::string_view kClaudeSettings =
      "https://docs.anthropic.com/en/docs/claude-code/settings";
  // Pi's configuration, then its project resources that need the project's trust (Pi 1.6,
  // trust-manager: TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES and `.agents/skills`): once the user
  // trusts the directory, a later Pi started there loads them on the host, extensions as code.
  static const std::vector<HostProgramName> rows = {
      {".pi/settings.json", F, kPi, kNew, "Pi", kPiDocs},
      {".pi/sandbox.json", F, kPi, kNew, "Pi (pi-sandbox's extension)", kPiDocs},
      {".pi/pi-auto-review.json", F, kPi, kNew, "Pi (auto review)", kPiDocs},
      {".pi/mcp.json", F, kPi, kNew, "Pi", kPiDocs},
      {".pi/SYSTEM.md", F, kPi, kNew, "Pi", kPiDocs},
      {".pi/APPEND_SYSTEM.md", F, kPi, kNew, "Pi", kPiDocs},
      {".pi/extensions", D, kPi, kNew, "Pi", kPiDocs},
      {".pi/skills", D, kPi, kNew, "Pi", kPiDocs},
      {".pi/prompts", D, kPi, kNew, "Pi", kPiDocs},
      {".pi/themes", D, kPi, kNew, "Pi", kPiDocs},
      {".agents/skills", D, kPi, kNew, "Pi", kPiDocs},
      {".gitconfig", F, kRun, kRef, "git (in the home)", "git-config(1), FILES"},
      {".bashrc", F, kRun, kRef, "bash (in the home)", "bash(1), INVOCATION"},
      {".bash_profile", F, kRun, kRef, "bash (in the home)", "bash(1), INVOCATION"},
      {".zshrc", F, kRun, kRef, "zsh (in the home)", "zsh(1), STARTUP/SHUTDOWN FILES"},
      {".zprofile", F, kRun, kRef, "zsh (in the home)", "zsh(1), STARTUP/SHUTDOWN FILES"},
      {".profile", F, kRun, kRef, "sh, bash (in the home)", "bash(1), INVOCATION"},
      {".ripgreprc", F, kRun, kRef, "ripgrep",
       "https://github.com/BurntSushi/ripgrep/blob/master/GUIDE.md#configuration-file"},
      {".mcp.json", F, kRun, kRef, "Claude Code",
       "https://docs.anthropic.com/en/docs/claude-code/mcp"},
      {".vscode", D, kRun, kRef, "VS Code", "https://code.visualstudio.com/docs/editor/tasks"},
      {".idea", D, kRun, kRef, "JetBrains IDEs",
       "https://www.jetbrains.com/help/idea/creating-and-managing-projects.html"},
      {".claude/commands", D, kRun, kRef, "Claude Code",
       "https://docs.anthropic.com/en/docs/claude-code/slash-commands"},
      {".claude/agents", D, kRun, kRef, "Claude Code",
       "https://docs.anthropic.com/en/docs/claude-code/sub-agents"},
      {".claude/settings.json", F, kRun, kNew, "Claude Code", kClaudeSettings},
      {".claude/settings.local.json", F, kRun, kNew, "Claude Code", kClaudeSettings},
      {".claude/hooks", D, kRun, kNew, "Claude Code",
       "https://docs.anthropic.com/en/docs/claude-code/hooks"},
      {".claude/skills", D, kRun, kNew, "Claude Code",
       "https://docs.anthropic.com/en/docs/claude-code/skills"},
      {"*.code-workspace", F, kRun, kNew, "VS Code",
       "https://code.visualstudio.com/docs/editing/workspaces/multi-root-workspaces"},
      {".cursor", D, kRun, kNew, "Cursor",
       "https://docs.cursor.com/context/model-context-protocol"},
      {".gemini", D, kRun, kNew, "Gemini CLI",
       "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/configuration.md"},
      {".codex", D, kRun, kNew, "Codex CLI",
       "https://github.com/openai/codex/blob/main/docs/config.md"},
      {".roo", D, kRun, kNew, "Roo Code", "https://docs.roocode.com/features/mcp/using-mcp-in-roo"},
      {".clinerules", D, kRun, kNew, "Cline", "https://docs.cline.bot/features/cline-rules"},
      {".kiro", D, kRun, kNew, "Kiro", "https://kiro.dev/docs/mcp/configuration/"},
      {".amazonq", D, kRun, kNew, "Amazon Q Developer",
       "https://docs.aws.amazon.com/amazonq/latest/qdeveloper-ug/"
       "command-line-mcp-configuration.html"},
      {".continue", D, kRun, kNew, "Continue",
       "https://docs.continue.dev/customize/deep-dives/configuration"},
      {".windsurf", D, kRun, kNew, "Windsurf",
       "https://docs.windsurf.com/windsurf/cascade/workflows"},
      {"opencode.json", F, kRun, kNew, "opencode", "https://opencode.ai/docs/config/"},
      {"opencode.jsonc", F, kRun, kNew, "opencode", "https://opencode.ai/docs/config/"},
      {".opencode", D, kRun, kNew, "opencode", "https://opencode.ai/docs/plugins/"},
      {".zed", D, kRun, kNew, "Zed", "https://zed.dev/docs/tasks"},
      {".devcontainer", D, kRun, kNew, "Dev Containers (initializeCommand runs on the host)",
       "https://containers.dev/implementors/json_reference/"},
      {".devcontainer.json", F, kRun, kNew, "Dev Containers (initializeCommand runs on the host)",
       "https://containers.dev/implementors/json_reference/"},
      {"rust-toolchain", F, kRun, kNew,
       "rustup (a `path` toolchain runs on every cargo and rustc, rust-analyzer's on folder open)",
       "https://rust-lang.github.io/rustup/overrides.html"},
      {"rust-toolchain.toml", F, kRun, kNew,
       "rustup (a `path` toolchain runs on every cargo and rustc, rust-analyzer's on folder open)",
       "https://rust-lang.github.io/rustup/overrides.html"},
      {".cargo/config.toml", F, kRun, kNew,
       "Cargo (`build.rustc-wrapper`, runners and aliases run on every cargo command)",
       "https://doc.rust-lang.org/cargo/reference/config.html"},
      {".cargo/config", F, kRun, kNew,
       "Cargo (`build.rustc-wrapper`, runners and aliases run on every cargo command)",
       "https://doc.rust-lang.org/cargo/reference/config.html"},
      {".yarnrc.yml", F, kRun, kNew, "Yarn (`yarnPath` and plugins run on every yarn command)",
       "https://yarnpkg.com/configuration/yarnrc"},
      {".yarnrc", F, kRun, kNew, "Yarn 1 (`yarn-path` runs on every yarn command)",
       "https://classic.yarnpkg.com/en/docs/yarnrc"},
  };
  return rows;
}

bool is_name_pattern(std::string_view name) {
  return name.starts_with('*');
}

bool matches_name_pattern(std::string_view pattern, std::string_view entry) {
  const std::string_view suffix = pattern.substr(1);
  return is_name_pattern(pattern) && entry.ends_with(suffix);
}

namespace {

std::vector<std::string_view> reference_names(NodeKind kind) {
  std::vector<std::string_view> names;
  for (const auto& row : host_program_names())
    if (row.origin == NameOrigin::ReferenceDenyList && row.kind == kind) names.push_back(row.name);
  return names;
}

}  // namespace

const std::vector<std::string_view>& dangerous_files() {
  static const std::vector<std::string_view> names = reference_names(NodeKind::File);
  return names;
}

const std::vector<std::string_view>& dangerous_directories() {
  static const std::vector<std::string_view> names = reference_names(NodeKind::Directory);
  return names;
}

const std::vector<StartupName>& home_startup_names() {
  constexpr auto F = NodeKind::File;
  constexpr auto D = NodeKind::Directory;
  static const std::vector<StartupName> names = {
      // Login shells and interactive shells (bash, zsh, fish, csh, ksh, readline, tmux).
      {".bash_login", F},
      {".bash_logout", F},
      {".bash_aliases", F},
      {".zshenv", F},
      {".zlogin", F},
      {".zlogout", F},
      {".oh-my-zsh", D},
      {".config/fish", D},
      {".cshrc", F},
      {".tcshrc", F},
      {".login", F},
      {".logout", F},
      {".kshrc", F},
      {".mkshrc", F},
      {".inputrc", F},
      {".tmux.conf", F},
      {".config/tmux", D},
      {".screenrc", F},
      {".pam_environment", F},
      // Desktop sessions: autostart entries, user units, session scripts.
      {".config/autostart", D},
      {".config/systemd", D},
      {".local/share/systemd", D},
      {".config/environment.d", D},
      {".config/plasma-workspace", D},
      {".xprofile", F},
      {".xsession", F},
      {".xsessionrc", F},
      {".xinitrc", F},
      {".Xresources", F},
      // Executable directories a login puts on PATH (Debian's ~/.profile adds both).
      {"bin", D},
      {".local/bin", D},
      // Editors that run their configuration.
      {".vimrc", F},
      {".vim", D},
      {".config/nvim", D},
      {".emacs", F},
      {".emacs.d", D},
      // Git and credentials.
      {".config/git", D},
      {".git-credentials", F},
      {".netrc", F},
      {".ssh", D},
      {".gnupg", D},
      // Package managers and toolchains.
      {".npmrc", F},
      {".yarnrc", F},
      {".yarnrc.yml", F},
      {".pypirc", F},
      {".config/pip", D},
      {".pip", D},
      {".condarc", F},
      {".cargo/config", F},
      {".cargo/config.toml", F},
      {".cargo/bin", D},
      {".curlrc", F},
      {".wgetrc", F},
      {".gradle/init.d", D},
      {".gradle/init.gradle", F},
      {".gradle/init.gradle.kts", F},
      {".gradle/gradle.properties", F},
      // Cloud and container tools (credential helpers run programs).
      {".aws", D},
      {".azure", D},
      {".config/gcloud", D},
      {".kube", D},
      {".docker", D},
      // Coding agents: the Pi agent's own directory, Claude Code's user settings (hooks).
      {".pi/agent", D},
      {".claude/settings.json", F},
      {".claude/settings.local.json", F},
      {".claude.json", F},
      {".codex", D}};
  return names;
}

const std::vector<CredentialName>& credential_names() {
  constexpr auto F = NodeKind::File;
  constexpr auto D = NodeKind::Directory;
  constexpr std::string_view kSsh = "ssh-keygen(1), FILES";
  constexpr std::string_view kGcloud = "https://cloud.google.com/sdk/docs/configurations";
  constexpr std::string_view kAzure =
      "https://learn.microsoft.com/en-us/cli/azure/azure-cli-configuration";
  static const std::vector<CredentialName> rows = {
      {".ssh/id_rsa", F, "ssh-keygen", kSsh},
      {".ssh/id_ecdsa", F, "ssh-keygen", kSsh},
      {".ssh/id_ecdsa_sk", F, "ssh-keygen", kSsh},
      {".ssh/id_ed25519", F, "ssh-keygen", kSsh},
      {".ssh/id_ed25519_sk", F, "ssh-keygen", kSsh},
      {".ssh/id_dsa", F, "ssh-keygen", kSsh},
      {".ssh/id_xmss", F, "ssh-keygen", kSsh},
      {".gnupg/private-keys-v1.d", D, "gpg-agent (GnuPG 2.1+)", "gpg-agent(1), FILES"},
      {".gnupg/secring.gpg", F, "gpg (GnuPG 1)", "gpg(1), FILES"},
      {".aws/credentials", F, "AWS CLI",
       "https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html"},
      {".config/gcloud/credentials.db", F, "gcloud", kGcloud},
      {".config/gcloud/access_tokens.db", F, "gcloud", kGcloud},
      {".config/gcloud/application_default_credentials.json", F, "gcloud", kGcloud},
      {".config/gcloud/legacy_credentials", D, "gcloud", kGcloud},
      {".azure/msal_token_cache.json", F, "Azure CLI", kAzure},
      {".azure/msal_token_cache.bin", F, "Azure CLI", kAzure},
      {".azure/accessTokens.json", F, "Azure CLI (before 2.30)", kAzure},
      {".azure/service_principal_entries.json", F, "Azure CLI", kAzure},
      {".kube/config", F, "kubectl",
       "https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/"},
      {".git-credentials", F, "git credential-store", "git-credential-store(1), FILES"},
      {".config/git/credentials", F, "git credential-store (XDG location)",
       "git-credential-store(1), FILES"},
      {".netrc", F, "curl, git, ftp", "netrc(5)"},
      {".config/gh/hosts.yml", F, "GitHub CLI", "https://cli.github.com/manual/gh_auth_login"},
      {".pypirc", F, "twine", "https://packaging.python.org/en/latest/specifications/pypirc/"},
      {".cargo/credentials.toml", F, "cargo login",
       "https://doc.rust-lang.org/cargo/reference/config.html#credentials"},
      {".cargo/credentials", F, "cargo login (before 1.39)",
       "https://doc.rust-lang.org/cargo/reference/config.html#credentials"},
      {".pi/agent/auth.json", F, "Pi (/login)",
       "https://github.com/badlogic/pi-mono/blob/main/packages/coding-agent/README.md"},
      {".claude/.credentials.json", F, "Claude Code (/login)",
       "https://docs.anthropic.com/en/docs/claude-code/iam"},
      {".codex/auth.json", F, "Codex CLI (codex login)",
       "https://github.com/openai/codex/blob/main/docs/authentication.md"},
  };
  return rows;
}

std::vector<fs::path> visible_credentials(const fs::path& home, const fs::path& workspace,
                                          const std::vector<Exposure>& exposed) {
  std::vector<fs::path> out;
  if (home.empty() || home == "/") return out;
  for (const auto& row : credential_names()) {
    const fs::path path = (home / row.name).lexically_normal();
    // The workspace is or contains the home, or lies above the credential (`~/.aws`).
    const bool in_workspace = is_within(path, workspace);
    const bool in_exposure =
        std::ranges::any_of(exposed, [&](const Exposure& e) { return is_within(path, e.path); });
    if (in_workspace || in_exposure) out.push_back(path);
  }
  return out;
}

bool is_credential_name(std::string_view name) {
  if (name.empty() || name.starts_with('/') || name.ends_with('/')) return false;
  const fs::path path{std::string(name)};
  if (std::ranges::any_of(path, [](const fs::path& part) { return part == "." || part == ".."; }))
    return false;
  return std::ranges::any_of(credential_names(), [&](const CredentialName& row) {
    if (name == row.name) return true;
    return row.kind == NodeKind::Directory && name.size() > row.name.size() + 1 &&
           name.starts_with(row.name) && name[row.name.size()] == '/';
  });
}

const std::vector<std::string_view>& root_secret_files() {
  static const std::vector<std::string_view> names = {
      ".env",         ".env.local",         ".env.development", ".env.development.local",
      ".env.test",    ".env.test.local",    ".env.production",  ".env.production.local",
      ".env.staging", ".env.staging.local", ".env.ci"};
  return names;
}

const std::vector<std::string_view>& secret_directories() {
  static const std::vector<std::string_view> names = {"secrets", ".secrets"};
  return names;
}

namespace {

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

bool is_secret_file_name(std::string_view name) {
  const std::string lower = lowercase(name);
  if (lower == ".env") return true;
  if (lower.starts_with(".env.")) {
    static constexpr std::string_view kTemplates[] = {".env.example", ".env.sample",
                                                      ".env.template", ".env.dist"};
    return std::ranges::find(kTemplates, lower) == std::end(kTemplates);
  }
  static constexpr std::string_view kSuffixes[] = {".pem", ".key", ".p12", ".pfx"};
  return std::ranges::any_of(kSuffixes, [&](auto s) { return ends_with(lower, s); });
}

bool is_skipped_directory_name(std::string_view name) {
  static constexpr std::string_view kSkipped[] = {".git",     "node_modules", "dist",   "build",
                                                  "coverage", ".next",        ".turbo", ".cache",
                                                  "target",   "vendor"};
  return std::ranges::find(kSkipped, name) != std::end(kSkipped);
}

}  // namespace pisandbox::policy
