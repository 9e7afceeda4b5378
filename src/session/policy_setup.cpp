#include "session/policy_setup.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#if defined(__APPLE__)
#include <sys/sysctl.h>
#else
#include <sys/sysinfo.h>
#endif
#include <unistd.h>
#if defined(__APPLE__)
#include <mach-o/dyld.h>
#endif

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/io.hpp"
#include "core/phase_trace.hpp"
#include "core/unique_fd.hpp"
#include "policy/git_config_copies.hpp"
#include "policy/git_config_guard.hpp"
#include "policy/signing.hpp"
#include "policy/toolchain_configs.hpp"

namespace pisandbox::session {

namespace fs = std::filesystem;

fs::path home_directory() {
  if (const char* home = ::getenv("HOME"); home != nullptr && home[0] == '/') return home;
  if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr)
    return pw->pw_dir;
  return "/";
}

namespace {

core::Result<fs::path> real_path(const std::string& path, const std::string& what) {
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr)
    return core::fail_errno(what + " \"" + path + "\": realpath");
  return fs::path(resolved);
}

/// The absolute directories of $PATH, as real paths where they exist (a symlinked home must
/// match the home's real path).
std::vector<fs::path> path_directories() {
  std::vector<fs::path> dirs;
  const char* path = ::getenv("PATH");
  std::istringstream entries(path != nullptr ? path : "");
  std::string entry;
  while (std::getline(entries, entry, ':')) {
    if (entry.empty() || entry[0] != '/') continue;
    char resolved[PATH_MAX];
    dirs.emplace_back(::realpath(entry.c_str(), resolved) != nullptr ? resolved : entry);
  }
  return dirs;
}

/// The names in `dir` (none when it cannot be read).
std::vector<std::string> directory_names(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error))
    names.push_back(entry.path().filename().string());
  return names;
}

/// The real path of an existing `path`, or empty.
fs::path existing_real_path(const fs::path& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) != nullptr ? fs::path(resolved) : fs::path();
}

/// The first line of a small file, without its line end; empty when unreadable.
std::string first_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

/// Whether a git configuration file turns on `extensions.worktreeConfig` (a lenient reading:
/// any `worktreeConfig = <true>` line counts, in whatever section, which errs towards
/// treating it as on).
bool turns_on_worktree_config(const fs::path& config) {
  std::ifstream in(config);
  std::string line;
  while (std::getline(in, line)) {
    std::string compact;
    for (const unsigned char c : line)
      if (!std::isspace(c)) compact.push_back(static_cast<char>(std::tolower(c)));
    constexpr std::string_view kKey = "worktreeconfig=";
    if (!compact.starts_with(kKey)) continue;
    const std::string value = compact.substr(kKey.size());
    for (auto yes : {"true", "yes", "on", "1"})
      if (value.starts_with(yes)) return true;
  }
  return false;
}

/// The last `core.hooksPath` a git configuration file sets, or empty (an unreadable or missing
/// file sets none). core.hooksPath is off the allowlist, so it is among the scan's findings.
std::string hooks_path_of(const fs::path& config) {
  std::ifstream in(config, std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  std::string value;
  for (const auto& finding : policy::scan_git_config(text.str()).findings)
    if (finding.key == "core.hookspath") value = finding.value;
  return value;
}

/// The git directories of submodules under `modules` (each has a HEAD), nested ones too.
void find_module_dirs(const fs::path& modules, int depth, std::vector<fs::path>& out) {
  if (depth > 4) return;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(modules, error)) {
    if (!entry.is_directory(error) || entry.is_symlink(error)) continue;
    if (fs::exists(entry.path() / "HEAD", error)) {
      out.push_back(entry.path());
      find_module_dirs(entry.path() / "modules", depth + 1, out);
    } else {
      find_module_dirs(entry.path(), depth + 1, out);  // a submodule named "a/b"
    }
  }
}

}  // namespace

std::optional<policy::GitLayout> discover_git(const fs::path& workspace) {
  for (fs::path dir = workspace;; dir = dir.parent_path()) {
    const fs::path dot_git = dir / ".git";
    std::error_code error;
    const auto status = fs::symlink_status(dot_git, error);
    policy::GitLayout layout;
    if (!error && fs::is_directory(status)) {
      layout.worktree_root = dir;
      layout.git_dir = existing_real_path(dot_git);
    } else if (!error && fs::is_regular_file(status)) {
      // A linked worktree's or submodule's `.git` file: "gitdir: <path>" (gitrepository-layout(5)).
      const std::string line = first_line(dot_git);
      if (!line.starts_with("gitdir:")) return std::nullopt;
      std::string target = line.substr(7);
      target.erase(0, target.find_first_not_of(' '));
      const fs::path named = fs::path(target).is_absolute() ? fs::path(target) : dir / target;
      layout.worktree_root = dir;
      layout.git_file = dot_git;
      layout.git_dir = existing_real_path(named);
    }
    if (!layout.worktree_root.empty()) {
      if (layout.git_dir.empty()) return std::nullopt;  // a dangling .git file: nothing to show
      layout.common_dir = layout.git_dir;
      if (const std::string common = first_line(layout.git_dir / "commondir"); !common.empty()) {
        const fs::path named =
            fs::path(common).is_absolute() ? fs::path(common) : layout.git_dir / common;
        if (fs::path real = existing_real_path(named); !real.empty()) layout.common_dir = real;
      }
      layout.worktree_config = turns_on_worktree_config(layout.common_dir / "config");
      layout.hooks_path = hooks_path_of(layout.common_dir / "config");
      find_module_dirs(layout.common_dir / "modules", 0, layout.module_dirs);
      std::error_code list_error;
      for (const auto& entry : fs::directory_iterator(layout.common_dir / "worktrees", list_error))
        if (entry.is_directory(list_error)) layout.worktree_dirs.push_back(entry.path());
      std::ranges::sort(layout.module_dirs);
      std::ranges::sort(layout.worktree_dirs);
      return layout;
    }
    if (dir == dir.root_path()) return std::nullopt;
  }
}

namespace {

/// The interpreter's prefix a virtual environment was made from: the `home` key of its
/// `pyvenv.cfg` (PEP 405; the directory of the base interpreter), its parent when it ends in
/// `bin`, as a real path; nullopt when the file, the key or the directory is missing. Reads at
/// most 64 KiB, regular files only.
std::optional<fs::path> pyvenv_home(const fs::path& venv) {
  core::UniqueFd fd(::open((venv / "pyvenv.cfg").c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::string text(std::min<off_t>(st.st_size, 64 * 1024), '\0');
  const ssize_t n = ::read(fd.get(), text.data(), text.size());
  if (n <= 0) return std::nullopt;
  text.resize(static_cast<std::size_t>(n));
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto equals = line.find('=');
    if (equals == std::string::npos) continue;
    auto trim = [](std::string v) {
      const auto b = v.find_first_not_of(" \t\r");
      const auto e = v.find_last_not_of(" \t\r");
      return b == std::string::npos ? std::string() : v.substr(b, e - b + 1);
    };
    if (trim(line.substr(0, equals)) != "home") continue;
    fs::path dir = trim(line.substr(equals + 1));
    if (!dir.is_absolute()) return std::nullopt;
    if (dir.filename() == "bin") dir = dir.parent_path();
    fs::path real = existing_real_path(dir);
    if (real.empty()) return std::nullopt;
    return real;
  }
  return std::nullopt;
}

/// The caller's variables that move a toolchain root (policy/toolchains.hpp), real paths.
std::vector<std::pair<std::string, fs::path>> toolchain_environment() {
  std::vector<std::pair<std::string, fs::path>> out;
  for (auto name : {"CARGO_HOME", "RUSTUP_HOME", "PYENV_ROOT", "NVM_DIR", "VOLTA_HOME",
                    "ASDF_DATA_DIR", "SDKMAN_DIR", "GOPATH", "MISE_DATA_DIR", "BUN_INSTALL",
                    "DENO_INSTALL", "PNPM_HOME", "VIRTUAL_ENV"}) {
    const char* value = ::getenv(name);
    if (value == nullptr || value[0] != '/') continue;
    std::string first = value;
    first = first.substr(0, first.find(':'));  // GOPATH may be a list: its first entry
    fs::path real = existing_real_path(first);
    out.emplace_back(name, real.empty() ? fs::path(first) : real);
  }
  if (const auto venv =
          std::ranges::find_if(out, [](const auto& v) { return v.first == "VIRTUAL_ENV"; });
      venv != out.end())
    if (auto base = pyvenv_home(venv->second)) out.emplace_back("PYVENV_HOME", *base);
  return out;
}

/// The system's and the user's git configuration files, in the order git reads them
/// (git-config(1) FILES: `/etc/gitconfig` unless GIT_CONFIG_NOSYSTEM, or GIT_CONFIG_SYSTEM;
/// `$XDG_CONFIG_HOME/git/config` or `~/.config/git/config`, then `~/.gitconfig`, or
/// GIT_CONFIG_GLOBAL).
std::vector<fs::path> user_git_config_files(const fs::path& home) {
  std::vector<fs::path> files;
  const char* no_system = ::getenv("GIT_CONFIG_NOSYSTEM");
  if (no_system == nullptr || no_system[0] == '\0') {
    const char* system = ::getenv("GIT_CONFIG_SYSTEM");
    files.emplace_back(system != nullptr ? system : "/etc/gitconfig");
  }
  if (const char* global = ::getenv("GIT_CONFIG_GLOBAL"); global != nullptr) {
    files.emplace_back(global);
  } else {
    const char* xdg = ::getenv("XDG_CONFIG_HOME");
    files.push_back((xdg != nullptr && xdg[0] == '/' ? fs::path(xdg) : home / ".config") / "git" /
                    "config");
    files.push_back(home / ".gitconfig");
  }
  return files;
}

/// `files` without those whose symlinks lead into a credential of the home
/// (policy::credential_names()): an include that names `~/.gitconfig.inc -> .aws/credentials`
/// shows no copy of it (docs/security.md, "Tool configuration without its credentials").
std::vector<fs::path> outside_credentials(std::vector<fs::path> files, const fs::path& home) {
  std::error_code error;
  const fs::path real_home = fs::weakly_canonical(home, error);
  std::erase_if(files, [&](const fs::path& file) {
    std::error_code ignored;
    const fs::path real = fs::weakly_canonical(file, ignored);
    return std::ranges::any_of(policy::credential_names(), [&](const policy::CredentialName& row) {
      return policy::is_within(real, home / row.name) ||
             (!error && policy::is_within(real, real_home / row.name));
    });
  });
  return files;
}

/// `core.hooksPath` of the system's and the user's git configuration (user_git_config_files()),
/// the last one set; `include.path` is not followed (docs/security.md, "Hooks where git looks
/// for them").
std::string user_hooks_path(const fs::path& home) {
  std::string value;
  for (const auto& file : user_git_config_files(home))
    if (std::string set = hooks_path_of(file); !set.empty()) value = std::move(set);
  return value;
}

/// At most the first `limit` bytes of the regular file `path` (core::read_regular_head()): the
/// repository's user.signingKey may name a FIFO a command left in the workspace.
std::string file_head(const fs::path& path, std::size_t limit) {
  return core::read_regular_head(path.c_str(), limit);
}

/// git's signing settings (policy/signing.hpp) from the user's configuration and the
/// repository's (`<common_dir>/config`), in git's order; `include.path` is not followed.
policy::GitSigning read_git_signing(const fs::path& home,
                                    const std::optional<policy::GitLayout>& git) {
  std::vector<fs::path> files = user_git_config_files(home);
  if (git) files.push_back(git->common_dir / "config");
  std::vector<policy::GitConfigValue> entries;
  for (const auto& file : files) {
    const std::string text = file_head(file, 1 << 20);
    for (auto& e : policy::read_git_config(text).findings)
      entries.push_back({std::move(e.key), std::move(e.value), e.implicit});
  }
  return policy::git_signing(entries);
}

/// The real path of `path`, or `path` itself when it cannot be resolved.
fs::path real_or_same(const fs::path& path) {
  const fs::path real = existing_real_path(path);
  return real.empty() ? path : real;
}

/// gnupg_public_files() of `gnupg_home` whose real path lies in the home and outside its
/// secret directories (a link there would show a private key under a public name).
std::vector<fs::path> gnupg_public_paths(const fs::path& gnupg_home) {
  const fs::path real_home = existing_real_path(gnupg_home);
  if (real_home.empty()) return {};
  std::vector<fs::path> out;
  for (const auto name : policy::gnupg_public_files()) {
    const fs::path path = gnupg_home / std::string(name);
    const fs::path real = existing_real_path(path);
    if (real.empty() || !policy::is_within(real, real_home) ||
        policy::is_within(real, real_home / "private-keys-v1.d") ||
        policy::is_within(real, real_home / "openpgp-revocs.d"))
      continue;
    out.push_back(path.lexically_normal());
  }
  return out;
}

/// The ssh side of SigningFiles: the public key file (only when it holds one), the allowed
/// signers, and the agent (`$SSH_AUTH_SOCK`).
void find_ssh_signing(policy::SigningFiles& files, const fs::path& home) {
  const fs::path key = policy::ssh_signing_key_file(files.signing, home);
  if (!key.empty() && policy::is_ssh_public_key(file_head(key, 16 * 1024)))
    files.ssh_public_key = key;
  const fs::path signers = policy::config_path(files.signing.allowed_signers, home);
  if (!signers.empty() && policy::is_allowed_signers(file_head(signers, 1 << 20)))
    files.allowed_signers = signers;
  // Only a key the user's own configuration names is looked at: the repository's user.signingKey
  // is any command's to set, and the hint would tell it what a hidden file holds.
  const fs::path named = policy::config_path(files.signing.signing_key, home);
  if (!named.empty() &&
      read_git_signing(home, std::nullopt).signing_key == files.signing.signing_key)
    files.ssh_key_hidden =
        policy::names_hidden_ssh_key(files.signing, home, file_head(named, 16 * 1024));
  if (const char* agent = ::getenv("SSH_AUTH_SOCK"); agent != nullptr && agent[0] == '/') {
    files.agent_socket = real_or_same(agent);
    files.agent_entry = "$SSH_AUTH_SOCK";
  }
}

/// gpg-agent's socket for the gpg home (`$GNUPGHOME`, else `~/.gnupg`; SigningFiles::gpg_agent);
/// the home in gnupg_home.
void find_gpg_agent(policy::SigningFiles& files, const fs::path& home) {
  const char* gnupg = ::getenv("GNUPGHOME");
  files.gnupg_home =
      gnupg != nullptr && gnupg[0] == '/' ? fs::path(gnupg).lexically_normal() : home / ".gnupg";
  const fs::path runtime = fs::path("/run/user") / std::to_string(::getuid());
  struct stat st {};
  const bool runtime_exists =
      ::stat(runtime.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::getuid();
  const fs::path socket = policy::gpg_agent_socket(files.gnupg_home, home, runtime, runtime_exists);
  if (socket.empty()) return;
  files.gpg_agent = real_or_same(socket);
}

/// The OpenPGP side of SigningFiles: the gpg home's public files and its agent.
void find_gpg_signing(policy::SigningFiles& files) {
  files.gnupg_files = gnupg_public_paths(files.gnupg_home);
  if (files.gpg_agent.empty()) return;
  files.agent_socket = files.gpg_agent;
  // An allowedSockets entry matches the socket's real path (docs/host-ipc.md, "Host sockets").
  files.agent_entry = files.gpg_agent.string();
}

/// What git's signing reads and talks to (policy::SigningFiles), for the user's and the
/// repository's signing configuration; only gpg-agent's sockets when git does not sign.
policy::SigningFiles signing_files(const fs::path& home,
                                   const std::optional<policy::GitLayout>& git) {
  policy::SigningFiles files;
  find_gpg_agent(files, home);
  files.signing = read_git_signing(home, git);
  if (!files.signing.configured()) return files;
  if (files.signing.format == policy::SigningFormat::Ssh)
    find_ssh_signing(files, home);
  else if (files.signing.format == policy::SigningFormat::OpenPgp)
    find_gpg_signing(files);
  return files;
}

/// The machine's memory in bytes (sysinfo(2) totalram; sysctl hw.memsize on Apple), the base of
/// percentage limits.
std::uint64_t machine_memory_bytes() {
#if defined(__APPLE__)
  std::uint64_t bytes = 0;
  std::size_t size = sizeof bytes;
  if (::sysctlbyname("hw.memsize", &bytes, &size, nullptr, 0) != 0) return 0;
  return bytes;
#else
  struct sysinfo info {};
  if (::sysinfo(&info) != 0) return 0;
  return static_cast<std::uint64_t>(info.totalram) * info.mem_unit;
#endif
}

}  // namespace

std::map<std::string, std::string> remote_urls(const fs::path& config) {
  std::map<std::string, std::string> urls;
  for (auto& entry : policy::read_git_config(file_head(config, 1 << 20)).findings) {
    const std::string_view key = entry.key;
    if (!key.starts_with("remote.") || !key.ends_with(".url") || key.size() <= 11) continue;
    // git fetches from the first url of a remote (git-config(1), remote.<name>.url).
    urls.emplace(std::string(key.substr(7, key.size() - 11)), std::move(entry.value));
  }
  return urls;
}

core::Result<fs::path> own_executable() {
  std::string path;
#if defined(__APPLE__)
  std::uint32_t size = 0;
  (void)::_NSGetExecutablePath(nullptr, &size);
  path.resize(size);
  if (::_NSGetExecutablePath(path.data(), &size) != 0)
    return core::fail(
        "cannot find pi-sandbox's own binary (_NSGetExecutablePath), which every "
        "sandbox must protect");
  path.resize(std::char_traits<char>::length(path.c_str()));
#else
  char target[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", target, sizeof target - 1);
  if (n <= 0)
    return core::fail_errno(
        "cannot find pi-sandbox's own binary (readlink /proc/self/exe), "
        "which every sandbox must protect");
  path.assign(target, static_cast<std::size_t>(n));
  // The kernel appends ` (deleted)` to the name of a file with no link left; a file that is
  // merely named so (a decoy beside the real name) still has its link.
  constexpr std::string_view kDeleted = " (deleted)";
  struct stat running {};
  const bool deleted = ::stat("/proc/self/exe", &running) == 0 && running.st_nlink == 0;
  if (deleted && path.ends_with(kDeleted)) path.resize(path.size() - kDeleted.size());
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr)
    return core::fail_errno(
        deleted ? "pi-sandbox's own binary " + path +
                      " was removed while it runs, and every sandbox must protect the file now "
                      "there: restart it (the Pi extension starts a new serve with each Pi "
                      "session)"
                : "pi-sandbox's own binary \"" + path + "\": realpath");
  return fs::path(resolved);
#endif
#if defined(__APPLE__)
  return real_path(path, "pi-sandbox's own binary");
#endif
}

core::Result<config::LoadedConfig> load_config(const std::string& explicit_path) {
  config::LoadOptions options;
  options.home = home_directory();
  if (!explicit_path.empty()) options.explicit_path = explicit_path;
  return config::load(options);
}

core::Result<void> check_config_single_link(const fs::path& file) {
  // A second name of the same file (a hard link) may lie in the workspace: its path says
  // nothing of that, so a file with more than one name is refused wherever it is.
  struct stat info {};
  std::string named = file.string();
  char resolved[PATH_MAX];
  if (fs::is_symlink(file) && ::realpath(file.c_str(), resolved) != nullptr)
    named += " (a symbolic link to " + std::string(resolved) + ")";
  if (::stat(file.c_str(), &info) == 0 && S_ISREG(info.st_mode) && info.st_nlink > 1)
    return core::fail("refusing the configuration " + named + ": it has " +
                          std::to_string(info.st_nlink) +
                          " hard links, and another of its names may lie inside the workspace, "
                          "where sandboxed commands can write",
                      "hint: keep the configuration as a file of its own (a copy or a symbolic "
                      "link, not a hard link)");
  return {};
}

core::Result<void> check_config_outside(const fs::path& file, const fs::path& workspace) {
  if (auto single = check_config_single_link(file); !single) return single;
  char resolved[PATH_MAX];
  if (::realpath(file.c_str(), resolved) == nullptr || !policy::is_within(resolved, workspace))
    return {};
  return core::fail("refusing the configuration " + file.string() +
                        ": it lies inside the workspace, where sandboxed commands can write",
                    "hint: keep it outside the workspace, e.g. in "
                    "~/.pi/agent/extensions/pi-sandbox/config.json");
}

core::Result<policy::SandboxPolicy> build_policy(const PolicyArgs& args,
                                                 config::LoadedConfig* loaded_out) {
  auto workspace = real_path(args.cwd, "--cwd");
  if (!workspace) return std::unexpected(workspace.error());
  if (!fs::is_directory(*workspace))
    return core::fail("--cwd \"" + args.cwd + "\" is not a directory");
  if (*workspace == "/")
    return core::fail("refusing the workspace \"/\": it would make the whole host writable",
                      "hint: run pi-sandbox from a project directory (--cwd DIR)");
  // A system directory or a credential directory is refused as "/" is (docs/security.md,
  // "Workspaces that are refused").
  fs::path home_for_refusal = home_directory();
  if (auto real_home = real_path(home_for_refusal.string(), "$HOME"); real_home)
    home_for_refusal = *real_home;
  if (auto why = policy::workspace_refusal(*workspace, home_for_refusal); !why.empty())
    return core::fail("refusing the workspace \"" + workspace->string() + "\": " + why,
                      "hint: run pi-sandbox from a project directory (--cwd DIR)");
  // pi-sandbox assembles the sandbox's root on a private tmpfs over /tmp in its own mount
  // namespace, and a bind of the host's /tmp itself would carry that tmpfs along: what a
  // command wrote into a workspace "/tmp" would be lost.
  if (*workspace == "/tmp")
    return core::fail(
        "refusing the workspace \"/tmp\": every sandbox gets a private, empty /tmp, so what "
        "the command wrote there would be lost",
        "hint: use a directory inside it: mkdir /tmp/work && pi-sandbox run --cwd /tmp/work ...");
  auto loaded = load_config(args.config);
  if (!loaded) return std::unexpected(loaded.error());
  core::phases::mark(core::phases::Mark::ConfigRead);
  if (loaded->source && !args.config.empty()) {
    // The default locations are protected in every sandbox, so they are trusted even when
    // the workspace contains them; an explicit --config is not.
    if (auto outside = check_config_outside(*loaded->source, *workspace); !outside)
      return std::unexpected(outside.error());
  } else if (loaded->source) {
    // The protection of a default location is by its path: another name of the same file in
    // the workspace would still be writable.
    if (auto single = check_config_single_link(*loaded->source); !single)
      return std::unexpected(single.error());
  }
  policy::PolicyInputs inputs;
  inputs.workspace = *workspace;
  // The home is hidden by its real path: a symlinked $HOME (or /home) must not leave the
  // real directory visible under its other name.
  fs::path home = home_directory();
  if (auto real_home = real_path(home.string(), "$HOME"); real_home) home = *real_home;
  // A $HOME that does not exist has nothing to hide (and no mount point to hide it on).
  inputs.home = fs::is_directory(home) ? home : fs::path("/");
  // pi-sandbox's own binary is protected in every sandbox: without its path, no sandbox.
  auto self = own_executable();
  if (!self) return std::unexpected(self.error());
  inputs.self_exe = *self;
  std::optional<fs::path> at_start;
  if (!args.binary_at_start.empty())
    if (auto real = real_path(args.binary_at_start, "serve's binary"); real && *real != *self)
      at_start = *real;
  inputs.path_dirs = path_directories();
  if (policy::is_within(inputs.home, *workspace) && inputs.home != "/")
    inputs.home_entries = directory_names(inputs.home);
  inputs.limits = policy::resolve_limits(loaded->config->limits, machine_memory_bytes());
  for (const auto& path : loaded->config->filesystem.additional_allow_read)
    inputs.additional_allow_read.emplace_back(path);
  // Written paths are decided (and made, when missing) by where they really lead: the real
  // path of their longest existing part, so that `~/cachelink/new` with `~/cachelink ->
  // ~/.ssh` is refused as a path inside ~/.ssh, never made there.
  for (const auto& path : loaded->config->filesystem.additional_allow_write) {
    std::error_code error;
    const fs::path real = fs::weakly_canonical(path, error);
    inputs.additional_allow_write.push_back(error ? fs::path(path) : real);
  }
  inputs.expose_home_toolchains = loaded->config->filesystem.expose_home_toolchains;
  inputs.expose_credentials = loaded->config->filesystem.expose_credentials;
  inputs.protection = loaded->config->filesystem.strict_protection ? policy::Protection::Strict
                                                                   : policy::Protection::Guard;
  inputs.toolchain_env = toolchain_environment();
  inputs.installed_versions = policy::installed_versions(inputs.home, inputs.toolchain_env);
  inputs.git_config_files = outside_credentials(
      policy::git_config_closure(user_git_config_files(inputs.home), inputs.home), inputs.home);
  inputs.git = discover_git(*workspace);
  inputs.user_hooks_path = user_hooks_path(home_directory());
  inputs.signing = signing_files(inputs.home, inputs.git);
  const auto locations = config::default_locations(home);
  inputs.config_locations = {locations.current, locations.legacy};
  if (loaded->source) inputs.config_locations.push_back(*loaded->source);
  auto built = policy::default_policy(inputs);
  if (at_start)
    built.protected_paths.push_back(policy::ProtectedPath{
        *at_start, policy::ProtectReason::SandboxBinary, policy::NodeKind::File, false});
  if (!built.refused.empty())
    return core::fail(built.refused.front(),
                      "hint: list only cache directories there, such as ~/.cache/go-build, "
                      "~/.cargo/registry, ~/.npm or ~/.cache/pip (docs/configuration.md)");
  if (loaded_out != nullptr) *loaded_out = std::move(*loaded);
  return built;
}

}  // namespace pisandbox::session
