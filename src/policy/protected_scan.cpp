#include "policy/protected_scan.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "policy/credential_lines.hpp"
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
    if (type == DT_REG && !options_.linked_credentials.empty()) check_link(dir_fd, name, path);
    if (options_.links_only) {
      if (type == DT_DIR && depth < options_.max_depth && !is_skipped_directory_name(name))
        subdirs.push_back(name);
      return;
    }
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

  /// A regular file with other links that is one of the linked credentials (same st_dev and
  /// st_ino) under another name: recorded for each credential it is.
  void check_link(int dir_fd, const std::string& name, const fs::path& path) {
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
    if (!S_ISREG(st.st_mode) || st.st_nlink < 2) return;
    for (const auto& credential : options_.linked_credentials)
      if (credential.dev == st.st_dev && credential.ino == st.st_ino && credential.path != path)
        result_.credential_links.push_back({path, credential.path});
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

namespace {

void append_scan(ScanResult& result, ScanResult more) {
  result.directories_read += more.directories_read;
  result.entries_seen += more.entries_seen;
  result.protected_paths = merge_protected(result.protected_paths, more.protected_paths);
  for (auto& link : more.credential_links) result.credential_links.push_back(std::move(link));
}

bool covered_by_any(const fs::path& path, const std::vector<fs::path>& bases) {
  return std::ranges::any_of(bases, [&](const fs::path& base) { return is_within(path, base); });
}

/// The credentials whose other names are searched: not handed in on purpose.
std::vector<CredentialInode> searched_credentials(const SandboxPolicy& policy) {
  std::vector<CredentialInode> out = credential_inodes(policy.home);
  std::erase_if(out,
                [&](const CredentialInode& c) { return covered_by_any(c.path, policy.handed_in); });
  return out;
}

/// The re-exposed places of the hidden home (additionalAllowRead, toolchain roots, the
/// repository around the workspace), read for links only; files are compared directly.
void scan_read_roots(const SandboxPolicy& policy, const ScanOptions& options, ScanResult& result) {
  ScanOptions links = options;
  links.links_only = true;
  std::vector<fs::path> walked;
  for (const auto& e : policy.home_read_allowed) {
    if (covered_by_any(e.path, walked) || covered_by_any(e.path, policy.handed_in)) continue;
    struct stat st {};
    if (::stat(e.path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      append_scan(result, scan_workspace(e.path, links));
      walked.push_back(e.path);
      continue;
    }
    for (const auto& c : options.linked_credentials)
      if (S_ISREG(st.st_mode) && c.dev == st.st_dev && c.ino == st.st_ino && c.path != e.path)
        result.credential_links.push_back({e.path, c.path});
  }
}

/// What a command could read: the workspace, the read-write binds, the re-exposed paths.
std::vector<fs::path> readable_places(const SandboxPolicy& policy) {
  std::vector<fs::path> out;
  for (const auto& e : policy.writable) out.push_back(e.path);
  for (const auto& e : policy.home_read_allowed) out.push_back(e.path);
  return out;
}

std::string read_mountinfo() {
  const int fd = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  char buffer[65536];
  ssize_t n = 0;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0)
    text.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

/// How many other names of each linked credential were not found: its links less itself, the
/// links found and the other credentials that are the same inode.
void count_unlocated(const std::vector<CredentialInode>& linked, ScanResult& result) {
  for (const auto& c : linked) {
    if (c.directory) continue;
    std::vector<fs::path> names;
    const auto note = [&](const fs::path& path) {
      if (path != c.path && std::ranges::find(names, path) == names.end()) names.push_back(path);
    };
    for (const auto& link : result.credential_links)
      if (link.credential == c.path) note(link.path);
    for (const auto& other : linked)
      if (other.dev == c.dev && other.ino == c.ino) note(other.path);
    const std::size_t others = c.links - 1;
    if (names.size() < others) result.unlocated_links.emplace_back(c.path, others - names.size());
  }
}

/// Leaves out the links that are concealed by name already, and repeats; sorts by path.
void keep_new_links(const SandboxPolicy& policy, ScanResult& result) {
  std::vector<CredentialLink> kept;
  for (auto& link : result.credential_links) {
    if (covered_by_any(link.path, policy.concealed)) continue;
    if (std::ranges::any_of(kept, [&](const CredentialLink& k) { return k.path == link.path; }))
      continue;
    kept.push_back(std::move(link));
  }
  // In path order, whatever order the directories were read in: the lines stay the same.
  std::ranges::sort(kept, {}, &CredentialLink::path);
  result.credential_links = std::move(kept);
}

}  // namespace

ScanResult scan_writable_roots(const SandboxPolicy& policy, const ScanOptions& given) {
  const std::vector<CredentialInode> credentials = searched_credentials(policy);
  ScanOptions options = given;
  options.linked_credentials.clear();
  for (const auto& c : credentials)
    if (!c.directory && c.links > 1) options.linked_credentials.push_back(c);
  ScanResult result = scan_workspace(policy.workspace, options);
  for (const auto& e : policy.writable)
    if (e.origin == Origin::ConfiguredWrite) append_scan(result, scan_workspace(e.path, options));
  if (!options.linked_credentials.empty()) scan_read_roots(policy, options, result);
  count_unlocated(options.linked_credentials, result);
  if (!credentials.empty())
    for (auto& bind : credential_binds(read_mountinfo(), readable_places(policy), credentials))
      result.credential_links.push_back(std::move(bind));
  keep_new_links(policy, result);
  return result;
}

namespace {

/// A path of /proc/self/mountinfo with its octal escapes (`\040` for a space) undone.
std::string unescape_mountinfo(std::string_view field) {
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const std::string_view digits = field.substr(i + 1, 3);
      if (std::ranges::all_of(digits, [](char d) { return d >= '0' && d <= '7'; })) {
        out += static_cast<char>(((digits[0] - '0') << 6) | ((digits[1] - '0') << 3) |
                                 (digits[2] - '0'));
        i += 3;
        continue;
      }
    }
    out += field[i];
  }
  return out;
}

/// The mount point of one line of /proc/self/mountinfo (its fifth field), or empty.
std::string mount_point(std::string_view line) {
  for (int field = 0; field < 4; ++field) {
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos) return {};
    line.remove_prefix(space + 1);
  }
  return unescape_mountinfo(line.substr(0, line.find(' ')));
}

void add_credential_from_stat(const fs::path& path, bool directory,
                              std::vector<CredentialInode>& out) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) return;
  if (std::ranges::any_of(out, [&](const CredentialInode& c) { return c.path == path; })) return;
  out.push_back({path, st.st_dev, st.st_ino, st.st_nlink, directory});
}

/// The regular files below a directory row, 4 levels deep, symlinks to directories not followed.
void add_files_below(const fs::path& dir, std::vector<CredentialInode>& out) {
  std::error_code error;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, error);
  for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it.depth() >= 4) it.disable_recursion_pending();
    add_credential_from_stat(it->path(), false, out);
  }
}

/// The public files of `~/.ssh` (ssh(1), FILES): everything else there may be a private key.
bool is_public_ssh_file(std::string_view name) {
  static constexpr std::string_view kNames[] = {"config", "environment", "rc"};
  return name.ends_with(".pub") || name.starts_with("known_hosts") ||
         name.starts_with("authorized_keys") || std::ranges::find(kNames, name) != std::end(kNames);
}

}  // namespace

std::string credential_link_warning(const CredentialLink& link) {
  return link.path.string() + " is the credential " + link.credential.string() +
         " under another name (a hard link or a bind): masked as the credential is";
}

std::vector<CredentialInode> credential_inodes(const fs::path& home) {
  std::vector<CredentialInode> out;
  if (home.empty() || home == "/") return out;
  for (const auto& row : credential_names()) {
    const fs::path path = (home / row.name).lexically_normal();
    const bool directory = row.kind == NodeKind::Directory;
    add_credential_from_stat(path, directory, out);
    if (directory) add_files_below(path, out);
  }
  // A tool's configuration with its token (~/.npmrc) is shown as a copy without it at its own
  // path; under another name it would be the original: masked like a credential.
  for (const auto& row : mixed_config_names())
    add_credential_from_stat((home / row.name).lexically_normal(), false, out);
  std::error_code error;
  for (fs::directory_iterator it(home / ".ssh", error); !error && it != fs::directory_iterator();
       it.increment(error))
    if (!is_public_ssh_file(it->path().filename().string()))
      add_credential_from_stat(it->path(), false, out);
  return out;
}

std::vector<CredentialLink> credential_binds(std::string_view mountinfo,
                                             const std::vector<fs::path>& places,
                                             const std::vector<CredentialInode>& credentials) {
  std::vector<CredentialLink> out;
  while (!mountinfo.empty()) {
    const std::size_t end = mountinfo.find('\n');
    const std::string_view line = mountinfo.substr(0, end);
    mountinfo.remove_prefix(end == std::string_view::npos ? mountinfo.size() : end + 1);
    const fs::path point = fs::path(mount_point(line)).lexically_normal();
    if (point.empty() || !covered_by_any(point, places)) continue;
    struct stat st {};
    if (::stat(point.c_str(), &st) != 0) continue;
    for (const auto& c : credentials)
      if (c.dev == st.st_dev && c.ino == st.st_ino && c.path != point &&
          c.directory == S_ISDIR(st.st_mode))
        out.push_back({point, c.path});
  }
  return out;
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
