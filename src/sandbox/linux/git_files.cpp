#include "sandbox/linux/git_files.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <span>

#include "core/io.hpp"
#include "core/unique_fd.hpp"
#include "policy/sandbox_policy.hpp"

namespace pisandbox::sandbox::linux_ {

namespace {

using core::UniqueFd;

constexpr std::uint32_t kTypeMask = 0170000, kRegular = 0100000, kSymlink = 0120000;

/// Which configuration a git run reads: Isolated (the repository's own `config` only, which
/// the command cannot write: docs/security.md, "Repositories around the workspace") for
/// reading objects; User (also the user's global and system files, which decide how files are
/// converted on checkout) for asking attributes and settings.
enum class GitConfig { Isolated, User };

/// The `git` of `PATH` outside every writable area (a relative or writable `PATH` entry could
/// hold a `git` the command wrote), or nullopt.
std::optional<std::string> host_git(const std::vector<fs::path>& writable) {
  const char* path = ::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/bin:/bin";
  while (true) {
    const auto colon = dirs.find(':');
    const fs::path dir(std::string(dirs.substr(0, colon)));
    std::error_code error;
    const fs::path real = fs::weakly_canonical(dir / "git", error);
    const bool inside = std::ranges::any_of(
        writable, [&](const fs::path& area) { return policy::is_within(real, area); });
    if (dir.is_absolute() && !error && !inside && ::access(real.c_str(), X_OK) == 0 &&
        fs::is_regular_file(real, error))
      return real.string();
    if (colon == std::string_view::npos) return std::nullopt;
    dirs.remove_prefix(colon + 1);
  }
}

/// The environment of a git run: nothing of pi-sandbox's own but, for GitConfig::User, where
/// the user's configuration is.
std::vector<std::string> git_environment(const PackageFiles& files, GitConfig config) {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin",
                                  "LC_ALL=C",
                                  "GIT_DIR=" + files.git_dir.string(),
                                  "GIT_WORK_TREE=" + files.root.string(),
                                  "GIT_NO_REPLACE_OBJECTS=1",
                                  "GIT_NO_LAZY_FETCH=1",
                                  "GIT_TERMINAL_PROMPT=0",
                                  "GIT_OPTIONAL_LOCKS=0",
                                  "GIT_LITERAL_PATHSPECS=1"};
  if (config == GitConfig::Isolated) {
    for (const char* e : {"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
                          "GIT_ATTR_NOSYSTEM=1", "HOME=/nonexistent"})
      env.emplace_back(e);
    return env;
  }
  for (const char* name : {"HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL",
                           "GIT_CONFIG_SYSTEM", "GIT_ATTR_NOSYSTEM"})
    if (const char* value = ::getenv(name); value != nullptr)
      env.push_back(std::string(name) + "=" + value);
  return env;
}

using Deadline = std::chrono::steady_clock::time_point;

/// What a git run printed and how it ended.
struct GitRun {
  int code = -1;
  std::string out;
};

/// posix_spawn(3)'s attributes and file actions, destroyed with the object.
struct Spawn {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  Spawn() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  ~Spawn() {
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
  }
  Spawn(const Spawn&) = delete;
  Spawn& operator=(const Spawn&) = delete;
};

/// Reads `out` (nonblocking, may be -1) into `run.out` (at most 16 MiB) until the child behind
/// `pidfd` has exited and the pipe is closed, or the deadline passes; then reaps it.
core::Result<void> wait_git(pid_t pid, int pidfd, UniqueFd out, GitRun& run,
                            const std::string& shown, Deadline deadline) {
  bool exited = false;
  while (out || !exited) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || run.out.size() > (std::size_t{16} << 20)) {
      // The whole group: a program the git run started (git runs `git fetch` for a missing
      // object of a partial clone where it does not know GIT_NO_LAZY_FETCH) goes with it.
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      return core::fail(shown + ": not done within " + std::to_string(kGitRestoreTimeoutSeconds) +
                        " seconds");
    }
    pollfd fds[2] = {{out.get(), POLLIN, 0}, {exited ? -1 : pidfd, POLLIN, 0}};
    if (::poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR)
      return core::fail_errno("poll(" + shown + ")");
    if (fds[0].revents != 0) {
      char buffer[65536];
      const ssize_t n = ::read(out.get(), buffer, sizeof buffer);
      if (n > 0) run.out.append(buffer, static_cast<std::size_t>(n));
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) out.reset();
    }
    if (fds[1].revents != 0) exited = true;
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return core::fail_errno("waitpid(" + shown + ")");
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return {};
}

/// Runs `git -c core.fsmonitor=false <args>` in the working tree's root, stdin from `in` (-1:
/// /dev/null), stdout into `out` (-1: a pipe read into the result), stderr discarded, with
/// git_environment(), in a process group of its own; killed at `deadline`.
core::Result<GitRun> run_git(const std::string& git, const PackageFiles& files, GitConfig config,
                             Deadline deadline, const std::vector<std::string>& args, int in = -1,
                             int out = -1) {
  std::vector<std::string> argv = {git, "-c", "core.fsmonitor=false", "-c",
                                   "core.untrackedCache=false"};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string shown = "git " + (args.empty() ? std::string() : args.front());
  int pipe_fds[2] = {-1, -1};
  if (out < 0 && ::pipe2(pipe_fds, O_CLOEXEC) != 0) return core::fail_errno("pipe2(" + shown + ")");
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  Spawn spawn;
  posix_spawn_file_actions_addchdir_np(&spawn.actions, files.root.c_str());
  if (in >= 0)
    posix_spawn_file_actions_adddup2(&spawn.actions, in, STDIN_FILENO);
  else
    posix_spawn_file_actions_addopen(&spawn.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&spawn.actions, out >= 0 ? out : write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&spawn.actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setpgroup(&spawn.attr, 0);
  posix_spawnattr_setsigmask(&spawn.attr, &none);
  posix_spawnattr_setsigdefault(&spawn.attr, &defaults);
  posix_spawnattr_setflags(&spawn.attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args_p, env_p;
  for (auto& a : argv) args_p.push_back(a.data());
  args_p.push_back(nullptr);
  auto env = git_environment(files, config);
  for (auto& e : env) env_p.push_back(e.data());
  env_p.push_back(nullptr);
  pid_t pid = -1;
  if (const int err = ::posix_spawn(&pid, git.c_str(), &spawn.actions, &spawn.attr, args_p.data(),
                                    env_p.data());
      err != 0)
    return std::unexpected(core::sys_error("posix_spawn(" + git + ")", err));
  write_end.reset();
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (pidfd.get() < 0) {
    const int err = errno;
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return std::unexpected(core::sys_error("pidfd_open(" + shown + ")", err));
  }
  if (read_end) ::fcntl(read_end.get(), F_SETFL, O_NONBLOCK);
  GitRun run;
  if (auto waited = wait_git(pid, pidfd.get(), std::move(read_end), run, shown, deadline); !waited)
    return std::unexpected(waited.error());
  return run;
}

std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

/// Whether a `git config` boolean value is true (git-config(1), "Values").
bool config_true(std::string value) {
  std::ranges::transform(value, value.begin(), [](unsigned char c) { return std::tolower(c); });
  return value == "true" || value == "yes" || value == "on" || value == "1" || value.empty();
}

/// The paths of `paths` git may convert on checkout, or whose kind git would not write as the
/// index records it: gitattributes(5) "Effects" (`filter`, `ident`, `working-tree-encoding`,
/// `eol=crlf`, `crlf`; `text` not unset with `core.autocrlf=true` or `core.eol=crlf`) as `git
/// check-attr --cached` reports them (the index's `.gitattributes` as before the command,
/// `info/attributes`, the user's global and system files), and every symlink while
/// `core.symlinks` is off.
core::Result<std::set<std::string>> converted(
    const std::string& git, const PackageFiles& files, Deadline deadline,
    const std::vector<const policy::GitIndexEntry*>& paths) {
  auto settings = run_git(git, files, GitConfig::User, deadline,
                          {"config", "-z", "--get-regexp", "^core\\.(autocrlf|eol|symlinks)$"});
  if (!settings) return std::unexpected(settings.error());
  if (settings->code != 0 && settings->code != 1)
    return core::fail("git config: exit " + std::to_string(settings->code));
  bool crlf = false, symlinks = true;
  for (std::string_view rest = settings->out; !rest.empty();) {
    const auto end = rest.find('\0');
    const std::string_view item = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    const auto newline = item.find('\n');
    std::string key(item.substr(0, newline)), value;
    if (newline != std::string_view::npos) value = std::string(item.substr(newline + 1));
    std::ranges::transform(key, key.begin(), [](unsigned char c) { return std::tolower(c); });
    if (key == "core.autocrlf") crlf = crlf || (value != "input" && config_true(value));
    if (key == "core.eol") crlf = crlf || value == "crlf";
    if (key == "core.symlinks") symlinks = config_true(value);
  }
  std::string input;
  for (const auto* e : paths) input += e->path + '\0';
  UniqueFd memfd(::memfd_create("pi-sandbox-check-attr", MFD_CLOEXEC));
  if (memfd.get() < 0 || !core::write_all(memfd.get(), input) ||
      ::lseek(memfd.get(), 0, SEEK_SET) != 0)
    return core::fail_errno("memfd_create(pi-sandbox-check-attr)");
  auto attrs = run_git(git, files, GitConfig::User, deadline,
                       {"check-attr", "-z", "--stdin", "--cached", "text", "eol", "crlf", "filter",
                        "ident", "working-tree-encoding"},
                       memfd.get());
  if (!attrs) return std::unexpected(attrs.error());
  if (attrs->code != 0) return core::fail("git check-attr: exit " + std::to_string(attrs->code));
  std::map<std::string, std::map<std::string, std::string>> of;
  std::vector<std::string> fields;
  for (std::string_view rest = attrs->out; !rest.empty();) {
    const auto end = rest.find('\0');
    fields.emplace_back(rest.substr(0, end));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
  }
  for (std::size_t i = 0; i + 2 < fields.size(); i += 3)
    of[fields[i]][fields[i + 1]] = fields[i + 2];
  std::set<std::string> out;
  const auto given = [](const std::string& v) { return v != "unspecified" && v != "unset"; };
  for (const auto* e : paths) {
    if ((e->mode & kTypeMask) == kSymlink) {
      if (!symlinks) out.insert(e->path);
      continue;
    }
    auto& a = of[e->path];  // a path git did not answer for has every attribute ""
    const bool converts =
        given(a["filter"]) || a["ident"] == "set" || given(a["working-tree-encoding"]) ||
        a["eol"] == "crlf" || (given(a["crlf"]) && a["crlf"] != "input") ||
        (crlf && a["text"] != "unset" && a["crlf"] != "unset") || a["text"].empty();
    if (converts) out.insert(e->path);
  }
  return out;
}

/// The directories from the workspace down to a path's parent, each opened without following
/// a symlink (O_PATH); missing ones made (0777 less the umask, as git makes them) when `make`.
/// An empty vector when one is missing and not made.
core::Result<std::vector<UniqueFd>> open_parents(const fs::path& workspace,
                                                 const std::vector<std::string>& parts, bool make) {
  std::vector<UniqueFd> dirs;
  dirs.emplace_back(::open(workspace.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dirs.back().get() < 0) return core::fail_errno("open(" + workspace.string() + ")");
  fs::path shown = workspace;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    shown /= parts[i];
    const int parent = dirs.back().get();
    if (make && ::mkdirat(parent, parts[i].c_str(), 0777) != 0 && errno != EEXIST)
      return core::fail_errno("mkdirat(" + shown.string() + ")");
    UniqueFd next(
        ::openat(parent, parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0 && errno == ENOENT && !make) return std::vector<UniqueFd>{};
    if (next.get() < 0) return core::fail_errno("openat(" + shown.string() + ")");
    dirs.push_back(std::move(next));
  }
  return dirs;
}

/// `path` (relative to the root) split below the workspace, or empty when it is not a plain
/// path inside it (a `..`, `.` or empty component, or `.git` in any case).
std::vector<std::string> parts_below(const std::string& inside, const std::string& path) {
  if (!path.starts_with(inside + "/")) return {};
  std::vector<std::string> parts;
  std::string_view rest = std::string_view(path).substr(inside.size() + 1);
  while (true) {
    const auto slash = rest.find('/');
    std::string part(rest.substr(0, slash));
    std::string lower = part;
    std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (part.empty() || part == "." || part == ".." || lower == ".git") return {};
    parts.push_back(std::move(part));
    if (slash == std::string_view::npos) return parts;
    rest.remove_prefix(slash + 1);
  }
}

/// Removes the file `path` (relative to the root) below the workspace that git added, then each
/// directory above it that is empty and was born after `started`.
core::Result<void> remove_added(const PackageFiles& files, const std::string& path) {
  const std::vector<std::string> parts = parts_below(files.inside, path);
  const fs::path workspace = files.root / files.inside;
  auto dirs = open_parents(workspace, parts, false);
  if (!dirs) return std::unexpected(dirs.error());
  if (dirs->empty()) return {};
  if (::unlinkat(dirs->back().get(), parts.back().c_str(), 0) != 0 && errno != ENOENT)
    return core::fail_errno("unlinkat(" + (files.root / path).string() + ")");
  for (std::size_t i = dirs->size() - 1; i > 0; --i) {
    struct statx stx {};
    const int parent = (*dirs)[i - 1].get();
    const char* name = parts[i - 1].c_str();
    if (::statx(parent, name, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &stx) != 0 ||
        (stx.stx_mask & STATX_BTIME) == 0)
      break;
    const bool newer = stx.stx_btime.tv_sec > files.started.tv_sec ||
                       (stx.stx_btime.tv_sec == files.started.tv_sec &&
                        stx.stx_btime.tv_nsec >= files.started.tv_nsec);
    if (!newer || ::unlinkat(parent, name, AT_REMOVEDIR) != 0) break;
  }
  return {};
}

/// Whether the repository reads objects only from its own object directory: never from another
/// repository's, which the command may not read (gitrepository-layout(5),
/// `objects/info/alternates`, `objects/info/http-alternates`), since the bytes read end up
/// in the workspace.
core::Result<void> own_objects(const PackageFiles& files) {
  struct stat st {};
  const fs::path objects = files.git_dir / "objects";
  if (::lstat(objects.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return core::fail(objects.string() + " is not a directory of its own");
  for (const char* name : {"info/alternates", "info/http-alternates"})
    if (::lstat((objects / name).c_str(), &st) == 0 || errno != ENOENT)
      return core::fail("the repository borrows objects (" + (objects / name).string() +
                        "): they are not read");
  // A pack linked to another repository's: git reads through the link.
  const fs::path packs = objects / "pack";
  if (::lstat(packs.c_str(), &st) != 0) return {};
  if (!S_ISDIR(st.st_mode)) return core::fail(packs.string() + " is not a directory of its own");
  std::error_code error;
  for (auto it = fs::directory_iterator(packs, error); !error && it != fs::directory_iterator();
       it.increment(error))
    if (it->is_symlink(error))
      return core::fail("the repository borrows objects (" + it->path().string() +
                        " is a symbolic link): they are not read");
  if (error) return core::fail("read(" + packs.string() + "): " + error.message());
  return {};
}

/// Whether no loose object of the repository (nor a directory of them) is a symbolic link:
/// git reads through one, and a commit or tree read so (by `git diff-tree`) would have the line
/// name the paths of a repository the command cannot read.
core::Result<void> own_loose_objects(const PackageFiles& files) {
  const fs::path objects = files.git_dir / "objects";
  std::error_code error;
  const auto linked = [](const fs::path& path) {
    return core::fail("the repository borrows objects (" + path.string() +
                      " is not a file of its own): they are not read");
  };
  for (auto it = fs::directory_iterator(objects, error); !error && it != fs::directory_iterator();
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() != 2 ||
        !std::ranges::all_of(name, [](unsigned char c) { return std::isxdigit(c) != 0; }))
      continue;
    if (it->is_symlink(error)) return linked(it->path());
    for (auto loose = fs::directory_iterator(it->path(), error);
         !error && loose != fs::directory_iterator(); loose.increment(error))
      if (loose->is_symlink(error)) return linked(loose->path());
  }
  if (error) return core::fail("read(" + objects.string() + "): " + error.message());
  return {};
}

/// Whether the loose object `oid` (hexadecimal), if there is one, is a file of the repository's
/// own: git reads through a symbolic link there, which the command can point at an object of a
/// repository it cannot read (its bytes then hash to its name all the same).
core::Result<void> own_loose_object(const PackageFiles& files, const std::string& oid) {
  const fs::path dir = files.git_dir / "objects" / oid.substr(0, 2), path = dir / oid.substr(2);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return {};
  if (!S_ISDIR(st.st_mode) ||
      (::lstat(path.c_str(), &st) == 0 ? !S_ISREG(st.st_mode) : errno != ENOENT))
    return core::fail("the repository borrows objects (" + path.string() +
                      " is not a file of its own): they are not read");
  return {};
}

/// The name (hexadecimal) of the blob whose bytes are those of `fd` from its start: `git
/// hash-object --no-filters` (git-hash-object(1): no filter, nothing written).
core::Result<std::string> blob_name(const std::string& git, const PackageFiles& files,
                                    Deadline deadline, int fd) {
  if (::lseek(fd, 0, SEEK_SET) != 0) return core::fail_errno("lseek(git hash-object)");
  auto hashed = run_git(git, files, GitConfig::Isolated, deadline,
                        {"hash-object", "-t", "blob", "--no-filters", "--stdin"}, fd);
  if (!hashed) return std::unexpected(hashed.error());
  if (hashed->code != 0) return core::fail("git hash-object: exit " + std::to_string(hashed->code));
  std::string named = hashed->out;
  while (named.ends_with('\n')) named.pop_back();
  return named;
}

/// Whether the bytes of `fd` (from its start) are the blob `oid` (hexadecimal), named anew by
/// blob_name(). `git cat-file` does not check a loose or packed object against its name, and
/// the command can replace either (or link one to an object of a repository it cannot read).
core::Result<void> is_object(const std::string& git, const PackageFiles& files, Deadline deadline,
                             int fd, const std::string& oid) {
  auto named = blob_name(git, files, deadline, fd);
  if (!named) return std::unexpected(named.error());
  if (*named != oid)
    return core::fail("git cat-file blob " + oid + ": its bytes are the object " + *named +
                      " (an object replaced in the repository is not written)");
  return {};
}

/// Writes the object of `entry` at `parts` below the workspace: a new file (or symlink) at a
/// temporary name, renamed over whatever is there.
core::Result<void> put_back(const std::string& git, const PackageFiles& files, Deadline deadline,
                            const policy::GitIndexEntry& entry,
                            const std::vector<std::string>& parts) {
  const fs::path workspace = files.root / files.inside;
  auto dirs = open_parents(workspace, parts, true);
  if (!dirs) return std::unexpected(dirs.error());
  const int dir = dirs->back().get();
  const std::string& name = parts.back();
  const std::string temp = "." + name + ".pi-sandbox-restore";
  const fs::path shown = files.root / entry.path;
  if (::unlinkat(dir, temp.c_str(), 0) != 0 && errno != ENOENT)
    return core::fail_errno("unlinkat(" + shown.string() + ".pi-sandbox-restore)");
  const std::string oid = hex(entry.oid);
  const std::vector<std::string> cat = {"cat-file", "blob", oid};
  if (auto own = own_loose_object(files, oid); !own) return own;
  if ((entry.mode & kTypeMask) == kSymlink) {
    auto target = run_git(git, files, GitConfig::Isolated, deadline, cat);
    if (!target) return std::unexpected(target.error());
    if (target->code != 0 || target->out.empty() || target->out.find('\0') != std::string::npos)
      return core::fail("git cat-file blob " + oid + ": exit " + std::to_string(target->code));
    UniqueFd memfd(::memfd_create("pi-sandbox-symlink", MFD_CLOEXEC));
    if (memfd.get() < 0 || !core::write_all(memfd.get(), target->out))
      return core::fail_errno("memfd_create(pi-sandbox-symlink)");
    if (auto same = is_object(git, files, deadline, memfd.get(), oid); !same) return same;
    if (::symlinkat(target->out.c_str(), dir, temp.c_str()) != 0)
      return core::fail_errno("symlinkat(" + shown.string() + ".pi-sandbox-restore)");
  } else {
    const mode_t mode = (entry.mode & 0100) != 0 ? 0777 : 0666;
    UniqueFd fd(
        ::openat(dir, temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (fd.get() < 0) return core::fail_errno("openat(" + shown.string() + ".pi-sandbox-restore)");
    auto wrote = run_git(git, files, GitConfig::Isolated, deadline, cat, -1, fd.get());
    auto same = !wrote ? core::Result<void>(std::unexpected(wrote.error()))
                : wrote->code != 0
                    ? core::Result<void>(core::fail("git cat-file blob " + oid + ": exit " +
                                                    std::to_string(wrote->code)))
                    : is_object(git, files, deadline, fd.get(), oid);
    if (!same) {
      ::unlinkat(dir, temp.c_str(), 0);
      return same;
    }
  }
  if (::renameat(dir, temp.c_str(), dir, name.c_str()) != 0) {
    const int err = errno;
    ::unlinkat(dir, temp.c_str(), 0);
    return std::unexpected(core::sys_error("renameat(" + shown.string() + ")", err));
  }
  return {};
}

/// Whether `path` (relative to the root) is a protected path, lies below one, or has a first
/// component below a pattern row's directory that the row matches: never written or removed.
bool is_guarded(const PackageFiles& files, const std::string& path) {
  const fs::path full = (files.root / path).lexically_normal();
  const auto matched = [&](const policy::ProtectedPattern& row) {
    const fs::path below = full.lexically_relative(row.dir);
    return policy::is_within(full, row.dir) && full != row.dir &&
           policy::matches_name_pattern(row.pattern, below.begin()->string());
  };
  return std::ranges::any_of(files.protected_paths,
                             [&](const fs::path& p) { return policy::is_within(full, p); }) ||
         std::ranges::any_of(files.protected_patterns, matched);
}

/// Whether `path` (relative to the root) lies below a directory of the workspace (the workspace
/// itself included) that is a git directory, or would be one once the files of `made` (relative
/// to the root, sorted) were made: one holding `HEAD` and either `commondir` or both `objects`
/// and `refs` (gitrepository-layout(5)). git takes such a directory for a repository when it
/// starts in it or a `.git` file names it, and runs the hooks of its `hooks/`. The guard takes
/// those out of a repository the command makes, after the command ("The guard"); the put-back
/// comes later, so it makes or removes nothing in one. A path longer than PATH_MAX (which git
/// does not write) counts as one, so that no index the command wrote makes this cost more than
/// PATH_MAX lstat(2) calls a path.
bool in_git_dir(const PackageFiles& files, const std::string& path,
                const std::vector<std::string>& made) {
  if (path.size() >= PATH_MAX) return true;
  // Whether `entry` is one of `made` or a directory above one.
  const auto is_made = [&](const std::string& entry) {
    const auto at = std::ranges::lower_bound(made, entry);
    return at != made.end() && at->starts_with(entry) &&
           (at->size() == entry.size() || (*at)[entry.size()] == '/');
  };
  const auto has = [&](const std::string& dir, const char* name) {
    const std::string entry = dir + "/" + name;
    struct stat st {};
    return is_made(entry) || ::lstat((files.root / entry).c_str(), &st) == 0;
  };
  for (auto slash = path.find('/', files.inside.size()); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    const std::string dir = path.substr(0, slash);
    // Not through a symlink (the put-back opens none): nothing is asked of where it leads; and
    // below a directory that is not there and not made, nothing is.
    struct stat st {};
    if (::lstat((files.root / dir).c_str(), &st) == 0 ? !S_ISDIR(st.st_mode) : !is_made(dir))
      return false;
    if (has(dir, "HEAD") && (has(dir, "commondir") || (has(dir, "objects") && has(dir, "refs"))))
      return true;
  }
  return false;
}

/// Removes each of `removed` (deepest first) and writes each of `rewritten` (but protected
/// paths, which are left alone, and those a checkout may convert, which go to `result.left`),
/// recording what fails.
void apply(const PackageFiles& files, std::vector<std::string> removed,
           const std::vector<policy::GitIndexEntry>& rewritten, PutBack& result) {
  const auto failed = [&](const std::string& path, const core::Error& error) {
    result.failed.push_back(path);
    if (result.error.empty()) result.error = error.describe();
  };
  // Deepest first, so that a directory git made for a file is empty when it is reached.
  std::ranges::sort(removed, [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  // What the put-back would make.
  std::vector<std::string> made;
  for (const auto& e : rewritten) made.push_back(e.path);
  std::ranges::sort(made);
  // git cannot write a protected path inside: an index that says it did is the command's, and
  // it is left without a word. A path in what looks like a git directory is named: git may
  // have written it (a package whose own root holds `HEAD`, `objects/` and `refs/`).
  const auto guarded = [&](const std::string& path) {
    if (is_guarded(files, path)) return true;
    if (!in_git_dir(files, path, made)) return false;
    failed(path, core::Error{(files.root / path).string() +
                             ": below a directory that looks like a git directory (HEAD and "
                             "commondir, or HEAD, objects/ and refs/: gitrepository-layout(5)), "
                             "where nothing is put back"});
    return true;
  };
  std::erase_if(removed, guarded);
  std::vector<policy::GitIndexEntry> kept;
  for (const auto& e : rewritten)
    if (!guarded(e.path)) kept.push_back(e);
  for (const auto& path : removed)
    if (auto gone = remove_added(files, path); !gone) failed(path, gone.error());
  if (kept.empty()) return;
  const Deadline deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(kGitRestoreTimeoutSeconds);
  const auto git = host_git(files.writable);
  auto ready = git ? own_objects(files)
                   : core::Result<void>(core::fail("no git outside the writable areas in PATH"));
  std::vector<const policy::GitIndexEntry*> asked;
  for (const auto& e : kept) asked.push_back(&e);
  auto skip = ready ? converted(*git, files, deadline, asked)
                    : core::Result<std::set<std::string>>(std::unexpected(ready.error()));
  for (const auto& e : kept) {
    if (!skip) {
      failed(e.path, skip.error());
    } else if (skip->contains(e.path)) {
      result.left.push_back(e.path);
    } else if (auto put = put_back(*git, files, deadline, e, parts_below(files.inside, e.path));
               !put) {
      failed(e.path, put.error());
    }
  }
}

/// A regular file or a symlink: what git writes a file for.
bool has_file(std::uint32_t mode) {
  return (mode & kTypeMask) == kRegular || (mode & kTypeMask) == kSymlink;
}

/// The raw bytes of the hexadecimal object name `hex` (lower case), or empty.
std::string from_hex(std::string_view hex) {
  std::string out;
  if (hex.size() % 2 != 0) return {};
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const auto digit = [](char c) {
      return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    };
    const int high = digit(hex[i]), low = digit(hex[i + 1]);
    if (high < 0 || low < 0) return {};
    out += static_cast<char>(high * 16 + low);
  }
  return out;
}

/// The entries of the tree of `commit` below the workspace that git writes a file for
/// (`git ls-tree -r -z --full-tree <commit> -- <inside>`, git-ls-tree(1) "Output format":
/// `<mode> SP <type> SP <object> TAB <path>` NUL-terminated), by path.
core::Result<std::map<std::string, policy::GitIndexEntry>> tree_of(const std::string& git,
                                                                   const PackageFiles& files,
                                                                   Deadline deadline,
                                                                   const std::string& commit) {
  auto listed = run_git(git, files, GitConfig::Isolated, deadline,
                        {"ls-tree", "-r", "-z", "--full-tree", commit, "--", files.inside});
  if (!listed) return std::unexpected(listed.error());
  if (listed->code != 0)
    return core::fail("git ls-tree " + commit + ": exit " + std::to_string(listed->code));
  std::map<std::string, policy::GitIndexEntry> out;
  for (std::string_view rest = listed->out; !rest.empty();) {
    const auto end = rest.find('\0');
    const std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    const auto space = line.find(' '), tab = line.find('\t');
    if (space == std::string_view::npos || tab == std::string_view::npos || tab < space)
      return core::fail("git ls-tree " + commit + ": an entry git does not print");
    policy::GitIndexEntry e;
    e.mode = static_cast<std::uint32_t>(std::stoul(std::string(line.substr(0, space)), nullptr, 8));
    e.oid = from_hex(line.substr(line.rfind(' ', tab) + 1, tab - line.rfind(' ', tab) - 1));
    e.path = std::string(line.substr(tab + 1));
    if (e.oid.empty()) return core::fail("git ls-tree " + commit + ": an entry git does not print");
    if (has_file(e.mode)) out.emplace(e.path, std::move(e));
  }
  return out;
}

/// A file of the workspace as a tree records it: mode (0100644, 0100755, 0120000) and object
/// name (hexadecimal).
struct Blob {
  std::uint32_t mode = 0;
  std::string oid;
  friend bool operator==(const Blob&, const Blob&) = default;
};

/// How the tree of a target differs from HEAD's: the paths outside the workspace, and inside
/// it each path with the target's file (nullopt: the target has none there).
struct TargetDiff {
  std::vector<std::string> outside;
  std::map<std::string, std::optional<Blob>> inside;
};

/// `git diff-tree -r -z --no-renames HEAD <target>` (git-diff-tree(1), "Raw output format":
/// `:<mode> SP <mode> SP <object> SP <object> SP <status>` NUL `<path>` NUL), or nullopt when
/// git cannot compare them (a target that is no commit).
core::Result<std::optional<TargetDiff>> diff_to(const std::string& git, const PackageFiles& files,
                                                Deadline deadline, const std::string& target) {
  auto listed = run_git(
      git, files, GitConfig::Isolated, deadline,
      {"diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "HEAD", target});
  if (!listed) return std::unexpected(listed.error());
  if (listed->code != 0) return std::nullopt;
  TargetDiff diff;
  for (std::string_view rest = listed->out; !rest.empty();) {
    const auto meta_end = rest.find('\0');
    if (meta_end == std::string_view::npos) break;
    const std::string_view meta = rest.substr(0, meta_end);
    rest.remove_prefix(meta_end + 1);
    const auto path_end = rest.find('\0');
    const std::string path(rest.substr(0, path_end));
    rest.remove_prefix(path_end == std::string_view::npos ? rest.size() : path_end + 1);
    // ":100644 100755 <old> <new> M": the target's mode and object are the second ones.
    std::vector<std::string_view> fields;
    for (std::string_view m = meta.substr(meta.starts_with(':') ? 1 : 0); !m.empty();) {
      const auto space = m.find(' ');
      fields.push_back(m.substr(0, space));
      m.remove_prefix(space == std::string_view::npos ? m.size() : space + 1);
    }
    if (fields.size() != 5 || path.empty())
      return core::fail("git diff-tree " + target + ": an entry git does not print");
    // A gitlink (a submodule's commit) outside is no file git writes there.
    const bool gitlink = std::ranges::all_of(std::span(fields).first(2), [](std::string_view m) {
      return m == "160000" || m == "000000";
    });
    if (!path.starts_with(files.inside + "/")) {
      if (!gitlink) diff.outside.push_back(path);
      continue;
    }
    const auto mode = static_cast<std::uint32_t>(std::stoul(std::string(fields[1]), nullptr, 8));
    if (mode == 0)
      diff.inside.emplace(path, std::nullopt);
    else
      diff.inside.emplace(path, Blob{mode, std::string(fields[3])});
  }
  return diff;
}

/// What is at `path` (relative to the root) in the workspace now, reached without following a
/// symlink: nullopt when nothing is there, a mode of 0 when it is no file git writes. Reading
/// a regular file takes its size from `bytes_left`.
core::Result<std::optional<Blob>> current_blob(const std::string& git, const PackageFiles& files,
                                               Deadline deadline, const std::string& path,
                                               std::size_t& bytes_left) {
  const std::vector<std::string> parts = parts_below(files.inside, path);
  if (parts.empty()) return core::fail(path + ": not plainly inside the workspace");
  auto dirs = open_parents(files.root / files.inside, parts, false);
  if (!dirs) return std::unexpected(dirs.error());
  if (dirs->empty()) return std::nullopt;
  const int dir = dirs->back().get();
  const char* name = parts.back().c_str();
  const fs::path shown = files.root / path;
  struct stat st {};
  if (::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return std::nullopt;
    return core::fail_errno("fstatat(" + shown.string() + ")");
  }
  if (S_ISLNK(st.st_mode)) {
    char target[4096];
    const ssize_t n = ::readlinkat(dir, name, target, sizeof target);
    if (n < 0) return core::fail_errno("readlinkat(" + shown.string() + ")");
    UniqueFd memfd(::memfd_create("pi-sandbox-symlink", MFD_CLOEXEC));
    if (memfd.get() < 0 ||
        !core::write_all(memfd.get(), std::string_view(target, static_cast<std::size_t>(n))))
      return core::fail_errno("memfd_create(pi-sandbox-symlink)");
    auto named = blob_name(git, files, deadline, memfd.get());
    if (!named) return std::unexpected(named.error());
    return Blob{kSymlink, *named};
  }
  if (!S_ISREG(st.st_mode)) return Blob{};
  if (static_cast<std::uint64_t>(st.st_size) > bytes_left)
    return core::fail(shown.string() + ": more than " + std::to_string(kCompareBytesBound) +
                      " bytes compared");
  // O_NONBLOCK: a FIFO put there after the fstatat does not hold the open.
  UniqueFd fd(::openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return core::fail_errno("openat(" + shown.string() + ")");
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return Blob{};
  bytes_left -= std::min<std::uint64_t>(bytes_left, static_cast<std::uint64_t>(st.st_size));
  auto named = blob_name(git, files, deadline, fd.get());
  if (!named) return std::unexpected(named.error());
  return Blob{(st.st_mode & 0100) != 0 ? 0100755u : 0100644u, *named};
}

/// Whether the entry at `path` (relative to the root) below the workspace was born after
/// `files.started` (statx(2) birth time; false where the file system records none).
bool born_after(const PackageFiles& files, const std::string& path) {
  struct statx stx {};
  if (::statx(AT_FDCWD, (files.root / path).c_str(), AT_SYMLINK_NOFOLLOW, STATX_BTIME, &stx) != 0 ||
      (stx.stx_mask & STATX_BTIME) == 0)
    return false;
  return stx.stx_btime.tv_sec > files.started.tv_sec ||
         (stx.stx_btime.tv_sec == files.started.tv_sec &&
          stx.stx_btime.tv_nsec >= files.started.tv_nsec);
}
}  // namespace

PutBack put_back_files(const PackageFiles& files) {
  std::map<std::string, const policy::GitIndexEntry*> before;
  std::set<std::string> conflicted;
  for (const auto& e : files.before) {
    if (e.stage == 0)
      before.emplace(e.path, &e);
    else
      conflicted.insert(e.path);
  }
  PutBack result;
  std::vector<policy::GitIndexEntry> rewritten;
  std::vector<std::string> added;
  for (const auto& path : files.written) {
    const auto found = before.find(path);
    const bool plain = !parts_below(files.inside, path).empty();
    if (!plain || conflicted.contains(path))
      result.left.push_back(path);
    else if (found == before.end())
      added.push_back(path);
    else if (has_file(found->second->mode))
      rewritten.push_back(*found->second);
    else
      result.left.push_back(path);  // a gitlink: git writes no file for it
  }
  apply(files, std::move(added), rewritten, result);
  std::ranges::sort(result.left);
  std::ranges::sort(result.failed);
  return result;
}

PutBack put_back_stashed(const PackageFiles& files, const std::string& stash) {
  PutBack result;
  const Deadline deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(kGitRestoreTimeoutSeconds);
  const auto git = host_git(files.writable);
  auto ready = git ? own_objects(files)
                   : core::Result<void>(core::fail("no git outside the writable areas in PATH"));
  auto worktree =
      ready ? tree_of(*git, files, deadline, stash)
            : decltype(tree_of(*git, files, deadline, stash))(std::unexpected(ready.error()));
  auto head = worktree ? tree_of(*git, files, deadline, stash + "^1") : worktree;
  std::vector<policy::GitIndexEntry> rewritten;
  std::vector<std::string> removed;
  for (const auto& e : files.before) {
    if (e.stage != 0 || !has_file(e.mode) || parts_below(files.inside, e.path).empty()) continue;
    if (!head) break;
    const auto saved = worktree->find(e.path), reset = head->find(e.path);
    const auto same = [](const policy::GitIndexEntry& a, const policy::GitIndexEntry& b) {
      return a.mode == b.mode && a.oid == b.oid;
    };
    // What the stash saved of the file (its working-tree bytes) against what its reset to HEAD
    // wrote there.
    if (saved == worktree->end() && reset != head->end())
      removed.push_back(e.path);
    else if (saved != worktree->end() &&
             (reset == head->end() || !same(saved->second, reset->second)))
      rewritten.push_back(saved->second);
  }
  if (!head) {
    result.error = head.error().describe();
    return result;
  }
  apply(files, std::move(removed), rewritten, result);
  std::ranges::sort(result.left);
  std::ranges::sort(result.failed);
  return result;
}

std::optional<FileStamp> stamp_of(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return FileStamp{static_cast<std::uint64_t>(st.st_dev),
                   static_cast<std::uint64_t>(st.st_ino),
                   static_cast<std::uint64_t>(st.st_size),
                   static_cast<std::uint32_t>(st.st_mode),
                   st.st_mtim.tv_sec,
                   st.st_mtim.tv_nsec,
                   st.st_ctim.tv_sec,
                   st.st_ctim.tv_nsec};
}

Unfinished unfinished_writes(const PackageFiles& files, const std::vector<std::string>& targets,
                             const std::map<std::string, std::optional<FileStamp>>& stamps,
                             bool state_changed) {
  Unfinished result;
  std::set<std::string> changed;
  for (const auto& [path, was] : stamps)
    if (stamp_of(files.root / path) != was) changed.insert(path);
  // A command that changed no tracked file and nothing of git's state wrote nothing for git.
  if (changed.empty() && !state_changed) return result;
  // A repository that borrows objects (or links a pack or a loose object) would have `git
  // diff-tree` compare HEAD with a commit of a repository the command cannot read, and the line
  // name its paths.
  const auto git = host_git(files.writable);
  if (!git || !own_objects(files) || !own_loose_objects(files)) return result;
  const Deadline deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(kGitRestoreTimeoutSeconds);
  std::size_t files_left = kCompareFilesBound, bytes_left = kCompareBytesBound;
  std::map<std::string, std::optional<Blob>> now;  // what current_blob() found, by path
  std::set<std::string> unchecked, written, outside;
  // What is at `path` now; nullopt also when it could not be read (then named if tracked).
  const auto current = [&](const std::string& path) -> std::optional<std::optional<Blob>> {
    if (const auto found = now.find(path); found != now.end()) return found->second;
    if (files_left == 0) return std::nullopt;
    --files_left;
    auto blob = current_blob(*git, files, deadline, path, bytes_left);
    if (!blob) return std::nullopt;
    return now.emplace(path, *blob).first->second;
  };
  std::size_t compared = 0;
  for (const auto& target : targets) {
    if (compared++ == kTargetCommitsBound) break;
    auto diff = diff_to(*git, files, deadline, target);
    if (!diff) break;  // out of time, or no git run at all: nothing more is compared
    if (!*diff || (*diff)->outside.empty()) continue;
    bool explains = false;
    for (const auto& [path, wanted] : (*diff)->inside) {
      // A protected path is never compared (nor written): git cannot write one inside.
      if (written.contains(path) || is_guarded(files, path)) continue;
      const auto was = stamps.find(path);
      const bool tracked = was != stamps.end();
      // A tracked file missing as the command started is left as the command leaves it.
      if (tracked && (!was->second || !changed.contains(path))) continue;
      if (!tracked && (!wanted || !born_after(files, path))) continue;
      bool matches = false;
      if (!wanted) {  // the target deletes it: git removed it
        matches = !stamp_of(files.root / path);
      } else if (const auto found = current(path); !found) {
        if (tracked) unchecked.insert(path);
      } else {
        matches = *found == wanted;
      }
      if (matches) {
        written.insert(path);
        explains = true;
      }
    }
    if (explains) outside.insert((*diff)->outside.begin(), (*diff)->outside.end());
  }
  // The other changed files: the command's own edits, or what git merged from both sides (an
  // object no compared commit holds there); left as they are, and named.
  // One that holds what the index does (git wrote it anew with the same bytes) is as it was.
  std::map<std::string, Blob> indexed;
  for (const auto& e : files.before)
    if (e.stage == 0) indexed.emplace(e.path, Blob{e.mode, hex(e.oid)});
  if (!written.empty())
    for (const auto& path : changed) {
      if (written.contains(path) || is_guarded(files, path)) continue;
      const auto found = current(path);
      const auto entry = indexed.find(path);
      const bool same = found && *found && entry != indexed.end() && **found == entry->second;
      if (!same) unchecked.insert(path);
    }
  for (const auto& path : written) unchecked.erase(path);
  result.outside.assign(outside.begin(), outside.end());
  result.written.assign(written.begin(), written.end());
  result.unchecked.assign(unchecked.begin(), unchecked.end());
  return result;
}

}  // namespace pisandbox::sandbox::linux_
