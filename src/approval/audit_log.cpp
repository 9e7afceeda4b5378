#include "approval/audit_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace pisandbox::approval {

namespace fs = std::filesystem;

namespace {

// Creates the missing directories of `dir`, outermost first, each with mode 0700.
core::Result<void> make_private_directories(const fs::path& dir) {
  if (dir.empty()) return {};
  fs::path partial;
  for (const auto& part : dir) {
    partial /= part;
    if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST)
      return core::fail_errno("mkdir(\"" + partial.string() + "\", 0700)");
  }
  return {};
}

}  // namespace

fs::path default_audit_path(const fs::path& home) {
  return home / ".pi" / "agent" / "logs" / "pi-sandbox-audit.jsonl";
}

AuditLog::AuditLog(fs::path path, core::UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}

core::Result<AuditLog> AuditLog::open(const fs::path& path) {
  if (auto made = make_private_directories(path.parent_path()); !made)
    return std::unexpected(made.error());
  core::UniqueFd fd(
      ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return core::fail_errno("open(\"" + path.string() + "\", O_APPEND)");
  return AuditLog(path, std::move(fd));
}

core::Result<void> AuditLog::append(std::string_view line) {
  // One write(2): O_APPEND makes the offset update and the write one step, so a line is
  // never split by another writer. No retry of a short write: a second write would no
  // longer be atomic with the first.
  ssize_t n = -1;
  do {
    n = ::write(fd_.get(), line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) return core::fail_errno("write(\"" + path_.string() + "\")");
  if (static_cast<std::size_t>(n) != line.size())
    return core::fail("write(\"" + path_.string() + "\"): short write of " + std::to_string(n) +
                      " of " + std::to_string(line.size()) + " bytes");
  return {};
}

}  // namespace pisandbox::approval
