// Copies of the protected paths in writable roots (protected_copies.hpp).
#include "sandbox/linux/protected_copies.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <system_error>

#include "core/unique_fd.hpp"
#include "policy/sandbox_policy.hpp"

namespace pisandbox::sandbox::linux_ {

namespace fs = std::filesystem;

namespace {

std::uintmax_t data_bytes(const fs::path& path) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(path, error);
  if (error) return 0;
  if (fs::is_regular_file(status)) return fs::file_size(path, error);
  std::uintmax_t total = 0;
  if (fs::is_directory(status))
    for (auto it = fs::recursive_directory_iterator(path, error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error))
      if (it->is_regular_file(error) && !it->is_symlink(error)) total += it->file_size(error);
  return total;
}

std::string bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Whether the trees at `a` and `b` are the same: types, permission bits, bytes, link texts,
/// entry names, never following a symlink.
bool same_tree(const fs::path& a, const fs::path& b) {
  struct stat sa {
  }, sb{};
  if (::lstat(a.c_str(), &sa) != 0 || ::lstat(b.c_str(), &sb) != 0) return false;
  if ((sa.st_mode & S_IFMT) != (sb.st_mode & S_IFMT) ||
      (sa.st_mode & 07777) != (sb.st_mode & 07777))
    return false;
  std::error_code error;
  if (S_ISLNK(sa.st_mode)) return fs::read_symlink(a, error) == fs::read_symlink(b, error);
  if (S_ISREG(sa.st_mode)) return sa.st_size == sb.st_size && bytes_of(a) == bytes_of(b);
  if (!S_ISDIR(sa.st_mode)) return true;
  std::vector<std::string> na, nb;
  for (const auto& e : fs::directory_iterator(a, error)) na.push_back(e.path().filename());
  for (const auto& e : fs::directory_iterator(b, error)) nb.push_back(e.path().filename());
  std::ranges::sort(na);
  std::ranges::sort(nb);
  if (na != nb) return false;
  return std::ranges::all_of(na, [&](const std::string& n) { return same_tree(a / n, b / n); });
}

/// Whether `dir` is still the real directory of that name (no symlink on the way).
bool real_directory(const fs::path& dir) {
  std::error_code error;
  return fs::canonical(dir, error) == dir && !error;
}

constexpr fs::copy_options kCopy = fs::copy_options::recursive | fs::copy_options::copy_symlinks;

}  // namespace

std::vector<fs::path> held_in_writable_roots(const MountPlan& plan,
                                             const std::vector<fs::path>& writable_roots) {
  std::vector<fs::path> out;
  for (const auto& op : plan.ops) {
    const bool held = (op.kind == MountOpKind::Bind && op.read_only && op.source == op.target) ||
                      op.kind == MountOpKind::PinSymlink;
    if (!held) continue;
    const bool in_root = std::ranges::any_of(
        writable_roots, [&](const fs::path& root) { return policy::is_within(op.target, root); });
    std::error_code error;
    if (in_root && fs::exists(fs::symlink_status(op.target, error)) &&
        std::ranges::find(out, op.target) == out.end())
      out.push_back(op.target);
  }
  return out;
}

core::Result<ProtectedCopies> ProtectedCopies::take(const std::vector<fs::path>& paths,
                                                    const fs::path& store) {
  ProtectedCopies copies;
  std::uintmax_t total = 0;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    total += data_bytes(paths[i]);
    if (total > kMaxProtectedCopyBytes)
      return std::unexpected(core::sys_error("copy(" + paths[i].string() + ")", EFBIG,
                                             "hint: the protected paths in the workspace hold "
                                             "more than 64 MiB, more than this mode keeps"));
    const fs::path copy = store / std::to_string(i);
    std::error_code error;
    fs::copy(paths[i], copy, kCopy, error);
    if (error) return core::fail("copy(" + paths[i].string() + "): " + error.message());
    copies.held_.push_back({paths[i], copy});
  }
  return copies;
}

std::vector<std::string> ProtectedCopies::put_back(Quarantine& quarantine) const {
  std::vector<std::string> lines;
  const std::string why = "a protected path changed by a command of the weaker sandbox";
  for (const auto& held : held_) {
    if (same_tree(held.path, held.copy)) continue;
    const fs::path parent = held.path.parent_path();
    if (!real_directory(parent)) {
      lines.push_back("could not put back " + held.path.string() +
                      ": its directory was replaced; the copy taken before the command is at " +
                      held.copy.string());
      continue;
    }
    core::UniqueFd parent_fd(::open(parent.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (::fstatat(parent_fd.get(), held.path.filename().c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      auto moved =
          quarantine_move(quarantine, parent_fd.get(), held.path.filename(), held.path, why);
      if (!moved) {
        lines.push_back("could not put back " + held.path.string() + ": " +
                        moved.error().describe());
        continue;
      }
    }
    std::error_code error;
    fs::copy(held.copy, held.path, kCopy, error);
    lines.push_back(error ? "could not put back " + held.path.string() + ": " + error.message()
                          : "put back " + held.path.string() +
                                " as it was before the command (a protected path; what the "
                                "command made of it is in the quarantine)");
  }
  return lines;
}

}  // namespace pisandbox::sandbox::linux_
