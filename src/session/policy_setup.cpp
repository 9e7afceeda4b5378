#include "session/policy_setup.hpp"

#include <pwd.h>
#include <stdlib.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <climits>

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

/// The machine's memory in bytes (sysinfo(2) totalram), the base of percentage limits.
std::uint64_t machine_memory_bytes() {
  struct sysinfo info {};
  if (::sysinfo(&info) != 0) return 0;
  return static_cast<std::uint64_t>(info.totalram) * info.mem_unit;
}

}  // namespace

core::Result<config::LoadedConfig> load_config(const std::string& explicit_path) {
  config::LoadOptions options;
  options.home = home_directory();
  if (!explicit_path.empty()) options.explicit_path = explicit_path;
  return config::load(options);
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
  auto loaded = load_config(args.config);
  if (!loaded) return std::unexpected(loaded.error());
  if (loaded->source && !args.config.empty()) {
    // An explicit --config is never read from the workspace: an earlier sandboxed command
    // could have written it there (compatibility C1). The default locations are protected
    // in every sandbox, so they are trusted even when the workspace contains them.
    char resolved[PATH_MAX];
    if (::realpath(loaded->source->c_str(), resolved) != nullptr &&
        policy::is_within(resolved, *workspace))
      return core::fail("refusing the configuration " + loaded->source->string() +
                            ": it lies inside the workspace, where sandboxed commands can write",
                        "hint: keep it outside the workspace, e.g. in "
                        "~/.pi/agent/extensions/pi-sandbox/config.json");
  }
  policy::PolicyInputs inputs;
  inputs.workspace = *workspace;
  // The home is hidden by its real path: a symlinked $HOME (or /home) must not leave the
  // real directory visible under its other name.
  fs::path home = home_directory();
  if (auto real_home = real_path(home.string(), "$HOME"); real_home) home = *real_home;
  // A $HOME that does not exist has nothing to hide (and no mount point to hide it on).
  inputs.home = fs::is_directory(home) ? home : fs::path("/");
  if (auto self = real_path("/proc/self/exe", "self"); self) inputs.self_exe = *self;
  inputs.path_dirs = path_directories();
  if (policy::is_within(inputs.home, *workspace) && inputs.home != "/")
    inputs.home_entries = directory_names(inputs.home);
  inputs.limits = policy::resolve_limits(loaded->config->limits, machine_memory_bytes());
  for (const auto& path : loaded->config->filesystem.additional_allow_read)
    inputs.additional_allow_read.emplace_back(path);
  const auto locations = config::default_locations(home);
  inputs.config_locations = {locations.current, locations.legacy};
  if (loaded->source) inputs.config_locations.push_back(*loaded->source);
  auto built = policy::default_policy(inputs);
  if (loaded_out != nullptr) *loaded_out = std::move(*loaded);
  return built;
}

}  // namespace pisandbox::session
