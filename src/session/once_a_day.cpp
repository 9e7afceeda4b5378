#include "session/once_a_day.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "core/unique_fd.hpp"

namespace pisandbox::session {

std::filesystem::path notice_stamp(const std::filesystem::path& home, const std::string& name) {
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state != nullptr && state[0] == '/')
    return std::filesystem::path(state) / "pi-sandbox" / name;
  if (home.empty() || home == "/") return {};
  return home / ".local/state/pi-sandbox" / name;
}

namespace {

/// Makes the missing directories of `dir`, each 0700 (the state directory is the user's own).
void make_directories(const std::filesystem::path& dir) {
  std::filesystem::path partial;
  for (const auto& part : dir) {
    partial /= part;
    ::mkdir(partial.c_str(), 0700);  // EEXIST for those already there
  }
}

}  // namespace

bool notice_due(const std::filesystem::path& stamp, std::chrono::system_clock::time_point now,
                std::chrono::seconds period) {
  if (stamp.empty()) return true;
  struct stat st {};
  if (::stat(stamp.c_str(), &st) == 0) {
    const auto written =
        std::chrono::system_clock::time_point(std::chrono::seconds(st.st_mtim.tv_sec));
    if (written <= now && now - written < period) return false;
  }
  make_directories(stamp.parent_path());
  core::UniqueFd fd(::open(stamp.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return true;
  const timespec times[2] = {{static_cast<time_t>(std::chrono::system_clock::to_time_t(now)), 0},
                             {static_cast<time_t>(std::chrono::system_clock::to_time_t(now)), 0}};
  ::futimens(fd.get(), times);
  return true;
}

}  // namespace pisandbox::session
