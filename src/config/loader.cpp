#include "config/loader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "core/unique_fd.hpp"

namespace pisandbox::config {
namespace {

/// A failed read: the errno (0 when the failure is not a syscall's) and the message.
struct ReadFailure {
  int code = 0;
  core::Error error;
};

ReadFailure read_failure(const std::filesystem::path& path, int err, std::string reason = {}) {
  std::string message = std::string(kReadFailedPrefix) + path.string() + ": ";
  message += reason.empty() ? core::errno_name(err) + " (" + std::strerror(err) + ")" : reason;
  return ReadFailure{err, core::Error{std::move(message), {}, err}};
}

// Reads the whole file. O_NONBLOCK keeps a FIFO planted at the path from blocking the
// launcher; O_NOCTTY a terminal device from becoming the controlling terminal.
std::expected<std::string, ReadFailure> read_file(const std::filesystem::path& path) {
  core::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd) return std::unexpected(read_failure(path, errno));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return std::unexpected(read_failure(path, errno));
  if (S_ISDIR(info.st_mode)) return std::unexpected(read_failure(path, EISDIR));
  if (!S_ISREG(info.st_mode)) return std::unexpected(read_failure(path, 0, "not a regular file"));
  std::string text;
  char buffer[16384];
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::unexpected(read_failure(path, errno));
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > kMaxConfigBytes) {
      return std::unexpected(
          read_failure(path, 0, "larger than " + std::to_string(kMaxConfigBytes) + " bytes"));
    }
  }
  return text;
}

core::Result<LoadedConfig> parse_file(const std::filesystem::path& path, const std::string& text) {
  auto config = parse(text);
  if (!config) return std::unexpected(config.error().to_error(path));
  return LoadedConfig{std::make_shared<const Config>(std::move(*config)), path};
}

core::Result<LoadedConfig> load_explicit(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text) return std::unexpected(std::move(text.error().error));
  return parse_file(path, *text);
}

}  // namespace

DefaultLocations default_locations(const std::filesystem::path& home) {
  const std::filesystem::path agent = home / ".pi" / "agent";
  return DefaultLocations{agent / "extensions" / "pi-sandbox" / "config.json",
                          agent / "pi-sandbox.json"};
}

core::Result<LoadedConfig> load(const LoadOptions& options) {
  if (options.explicit_path) return load_explicit(*options.explicit_path);
  if (!options.home.is_absolute()) {
    return core::fail("pi-sandbox configuration: home directory is not an absolute path: " +
                          options.home.string(),
                      "set HOME to the absolute path of your home directory");
  }
  const DefaultLocations locations = default_locations(options.home);
  // Compatibility C9: the legacy file is consulted only when the new one is ENOENT; any
  // other failure (EACCES, EISDIR, ...) stops here rather than falling back.
  for (const std::filesystem::path& path : {locations.current, locations.legacy}) {
    auto text = read_file(path);
    if (text) return parse_file(path, *text);
    if (text.error().code != ENOENT) return std::unexpected(std::move(text.error().error));
  }
  return LoadedConfig{std::make_shared<const Config>(), std::nullopt};
}

}  // namespace pisandbox::config
