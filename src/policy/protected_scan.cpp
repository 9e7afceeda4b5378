#include "policy/protected_scan.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "policy/git_config_guard.hpp"

namespace pisandbox::policy {

namespace {

namespace fs = std::filesystem;

unsigned char entry_type(int dir_fd, const dirent& entry) {
  if (entry.d_type != DT_UNKNOWN) return entry.d_type;
  struct stat st {};
  if (::fstatat(dir_fd, entry.d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) return DT_UNKNOWN;
  if (S_ISDIR(st.st_mode)) return DT_DIR;
  if (S_ISLNK(st.st_mode)) return DT_LNK;
  if (S_ISREG(st.st_mode)) return DT_REG;
  return DT_UNKNOWN;
}

/// The last `core.hooksPath` of the git configuration file `name` in `dir_fd` (at most 4 MiB
/// read, as the guard reads one), or empty. core.hooksPath is off the allowlist, so it is
/// among the scan's findings.
std::string local_hooks_path(int dir_fd, const char* name) {
  const int fd = ::openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {};
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0 || text.size() + static_cast<std::size_t>(n) > (4u << 20)) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  std::string value;
  for (const auto& finding : scan_git_config(text).findings)
    if (finding.key == "core.hookspath") value = finding.value;
  return value;
}

/// The DangerousFile row of host_program_names() that names `name` as a whole (one component,
/// or a pattern it matches), or nullptr.
const HostProgramName* whole_name_row(std::string_view name) {
  for (const auto& row : host_program_names()) {
    if (row.reason != ProtectReason::DangerousFile) continue;
    if (is_name_pattern(row.name) ? matches_name_pattern(row.name, name) : row.name == name)
      return &row;
  }
  return nullptr;
}

bool is_secret_directory(std::string_view name) {
  return std::ranges::find(secret_directories(), name) != secret_directories().end();
}

class Scanner {
 public:
  Scanner(const fs::path& workspace, const ScanOptions& options, ScanResult& result)
      : workspace_(workspace), options_(options), result_(result) {}

  void scan(const fs::path& dir, int dir_fd, int depth) {
    DIR* stream = ::fdopendir(dir_fd);
    if (stream == nullptr) {
      ::close(dir_fd);
      return;
    }
    ++result_.directories_read;
    std::vector<std::string> subdirs;
    while (const dirent* entry = ::readdir(stream)) {
      const std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      ++result_.entries_seen;
      visit(dir, ::dirfd(stream), *entry, depth, subdirs);
    }
    const int fd = ::dirfd(stream);
    for (const auto& name : subdirs) {
      const int child = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child >= 0) scan(dir / name, child, depth + 1);
    }
    ::closedir(stream);
  }

 private:
  void add(fs::path path, ProtectReason reason, NodeKind kind, bool create_if_missing) {
    auto& out = result_.protected_paths;
    if (std::ranges::none_of(out, [&](const auto& p) { return p.path == path; }))
      out.push_back({std::move(path), reason, kind, create_if_missing});
  }

  void visit(const fs::path& dir, int dir_fd, const dirent& entry, int depth,
             std::vector<std::string>& subdirs) {
    const std::string name = entry.d_name;
    const unsigned char type = entry_type(dir_fd, entry);
    const fs::path path = dir / name;
    if (name == ".git") {
      // A repository: its hooks are protected, created as a placeholder when missing
      // (compatibility C26: only when .git is a directory, not a worktree's .git file).
      if (type == DT_DIR) {
        add(path / "hooks", ProtectReason::GitHooks, NodeKind::Directory, true);
        add_hooks_path(dir, dir_fd);
      }
      return;
    }
    const HostProgramName* row = whole_name_row(name);
    if (row != nullptr) {
      add(path, ProtectReason::DangerousFile, row->kind, false);
    } else if (is_secret_directory(name)) {
      add(path, ProtectReason::Secret, NodeKind::Directory, false);
      return;  // protected as a whole
    } else if (type != DT_DIR && is_secret_file_name(name)) {
      add(path, ProtectReason::Secret, NodeKind::File, false);
    } else if (type == DT_DIR) {
      add_rows_below(dir_fd, path, name);
    }
    // A protected directory is protected as a whole: nothing below it needs a rule.
    const bool whole_directory = row != nullptr && row->kind == NodeKind::Directory;
    if (type == DT_DIR && depth < options_.max_depth && !is_skipped_directory_name(name) &&
        !whole_directory)
      subdirs.push_back(name);
  }

  /// The directory `core.hooksPath` names for the repository at `dir` (githooks(5)): its
  /// `.git/config`'s, else the user's; protected when it lies in the workspace.
  void add_hooks_path(const fs::path& dir, int dir_fd) {
    std::string value = local_hooks_path(dir_fd, ".git/config");
    if (value.empty()) value = options_.user_hooks_path;
    if (auto p = hooks_path_protection(hooks_directory(value, dir, options_.home), {workspace_}))
      add(p->path, p->reason, p->kind, p->create_if_missing);
  }

  /// The rows below the directory `name` (`.claude/commands` in `.claude`) that exist.
  void add_rows_below(int dir_fd, const fs::path& path, const std::string& name) {
    for (const auto& row : host_program_names()) {
      if (row.reason != ProtectReason::DangerousFile) continue;
      const std::string_view full = row.name;
      if (!full.starts_with(name) || full.size() <= name.size() + 1 || full[name.size()] != '/')
        continue;
      const std::string rest(full.substr(name.size() + 1));
      struct stat st {};
      if (::fstatat(dir_fd, (name + "/" + rest).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
        add(path / rest, ProtectReason::DangerousFile, row.kind, false);
    }
  }

  const fs::path& workspace_;
  const ScanOptions& options_;
  ScanResult& result_;
};

}  // namespace

ScanResult scan_workspace(const fs::path& workspace, const ScanOptions& options) {
  ScanResult result;
  const int fd = ::open(workspace.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return result;
  Scanner scanner(workspace, options, result);
  scanner.scan(workspace, fd, 1);
  return result;
}

ScanOptions scan_options(const SandboxPolicy& policy) {
  return ScanOptions{.max_depth = ScanOptions{}.max_depth,
                     .home = policy.home,
                     .user_hooks_path = policy.user_hooks_path};
}

ScanResult scan_writable_roots(const SandboxPolicy& policy, const ScanOptions& options) {
  ScanResult result = scan_workspace(policy.workspace, options);
  for (const auto& e : policy.writable) {
    if (e.origin != Origin::ConfiguredWrite) continue;
    ScanResult more = scan_workspace(e.path, options);
    result.directories_read += more.directories_read;
    result.entries_seen += more.entries_seen;
    result.protected_paths = merge_protected(result.protected_paths, more.protected_paths);
  }
  return result;
}

std::vector<ProtectedPath> merge_protected(const std::vector<ProtectedPath>& fixed,
                                           const std::vector<ProtectedPath>& scanned) {
  std::vector<ProtectedPath> out = fixed;
  for (const auto& p : scanned)
    if (std::ranges::none_of(out, [&](const auto& q) { return q.path == p.path; }))
      out.push_back(p);
  return out;
}

}  // namespace pisandbox::policy
