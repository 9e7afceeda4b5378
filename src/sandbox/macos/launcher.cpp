// The macOS applier (launcher.hpp). Built only on Apple platforms (src/sandbox/CMakeLists.txt).
#include "sandbox/macos/launcher.hpp"

#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <thread>

extern char** environ;

namespace pisandbox::sandbox::macos {

namespace fs = std::filesystem;

PrivateDirs::PrivateDirs(fs::path temp_dir, fs::path home_layer)
    : temp_dir_(std::move(temp_dir)), home_layer_(std::move(home_layer)) {}

PrivateDirs::PrivateDirs(PrivateDirs&& other) noexcept
    : temp_dir_(std::move(other.temp_dir_)), home_layer_(std::move(other.home_layer_)) {
  other.temp_dir_.clear();
  other.home_layer_.clear();
}

PrivateDirs::~PrivateDirs() {
  if (temp_dir_.empty()) return;
  std::error_code ignored;
  fs::remove_all(temp_dir_.parent_path(), ignored);  // pi-sandbox.XXXXXX, with tmp/ and home/
}

namespace {

core::Result<fs::path> make_dir(const fs::path& path) {
  if (::mkdir(path.c_str(), 0700) != 0) return core::fail_errno("mkdir(" + path.string() + ")");
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr)
    return core::fail_errno("realpath(" + path.string() + ")");
  return fs::path(resolved);
}

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

core::Result<pid_t> spawn(const LaunchPlan& plan, const fs::path& cwd) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  auto argv = pointers(plan.argv);
  auto env = pointers(plan.env);
  pid_t pid = 0;
  const int error = ::posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (error != 0)
    return std::unexpected(core::sys_error("posix_spawn(" + plan.argv[0] + ")", error));
  return pid;
}

}  // namespace

core::Result<PrivateDirs> make_private_dirs(const fs::path& parent) {
  std::string pattern = (parent / "pi-sandbox.XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) return core::fail_errno("mkdtemp(" + pattern + ")");
  const fs::path top = pattern;
  auto temp = make_dir(top / "tmp");
  if (!temp) return std::unexpected(temp.error());
  auto home = make_dir(top / "home");
  if (!home) return std::unexpected(home.error());
  return PrivateDirs(*temp, *home);
}

core::Result<int> launch(const LaunchPlan& plan, const fs::path& cwd,
                         const LaunchOptions& options) {
  auto pid = spawn(plan, cwd);
  if (!pid) return std::unexpected(pid.error());
  const auto start = std::chrono::steady_clock::now();
  std::optional<int> forced;
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(*pid, &status, WNOHANG);
    if (done == *pid) break;
    if (done < 0 && errno != EINTR) return core::fail_errno("waitpid()");
    if (!forced && options.timeout && std::chrono::steady_clock::now() - start >= *options.timeout)
      forced = 124;
    if (!forced && options.cancel.stop_requested()) forced = options.cancel_status;
    if (forced) ::kill(-*pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // The command is over: what it left running in its group goes with it.
  ::kill(-*pid, SIGKILL);
  if (forced) return *forced;
  return exit_status(WIFEXITED(status) ? Ending{true, WEXITSTATUS(status)}
                                       : Ending{false, WTERMSIG(status)});
}

}  // namespace pisandbox::sandbox::macos
