// pisandbox::sandbox::linux_ — reading a repository's objects and settings with the host's
// git for putting a workspace's files back (docs/security.md, "Repositories around the
// workspace"): a `git` outside every writable area, run in an environment of its own with
// `core.fsmonitor` off and a deadline, so that nothing the command wrote chooses a program git
// runs; and the checks that the objects read are the repository's own.
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
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "core/io.hpp"
#include "core/unique_fd.hpp"
#include "policy/sandbox_policy.hpp"
#include "sandbox/linux/git_files.hpp"
#include "sandbox/linux/git_files_detail.hpp"

namespace pisandbox::sandbox::linux_ {

using core::UniqueFd;
using namespace git_detail;

namespace git_detail {

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

bool reflog_grew(const std::optional<std::string>& before, const std::string& now) {
  if (!before) return !now.empty();
  return now.size() > before->size() && now.starts_with(*before);
}

}  // namespace git_detail

namespace {

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

}  // namespace

namespace git_detail {

/// Runs `git -c core.fsmonitor=false <args>` in the working tree's root, stdin from `in` (-1:
/// /dev/null), stdout into `out` (-1: a pipe read into the result), stderr discarded, with
/// git_environment(), in a process group of its own; killed at `deadline`.
core::Result<GitRun> run_git(const std::string& git, const PackageFiles& files, GitConfig config,
                             Deadline deadline, const std::vector<std::string>& args, int in,
                             int out) {
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

bool is_object_name(std::string_view name) {
  return (name.size() == 40 || name.size() == 64) && std::ranges::all_of(name, [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::vector<std::string> reflog_new_names(std::string_view reflog, std::size_t count) {
  std::vector<std::string> out;
  while (!reflog.empty() && out.size() < count) {
    while (reflog.ends_with('\n')) reflog.remove_suffix(1);
    const auto start = reflog.rfind('\n');
    std::string_view line = start == std::string_view::npos ? reflog : reflog.substr(start + 1);
    reflog.remove_suffix(line.size());
    const auto first = line.find(' ');
    if (first == std::string_view::npos) continue;
    line.remove_prefix(first + 1);
    const auto name = line.substr(0, line.find(' '));
    if (is_object_name(name)) out.emplace_back(name);
  }
  return out;
}

}  // namespace git_detail

namespace {

/// Whether a `git config` boolean value is true (git-config(1), "Values").
bool config_true(std::string value) {
  std::ranges::transform(value, value.begin(), [](unsigned char c) { return std::tolower(c); });
  return value == "true" || value == "yes" || value == "on" || value == "1" || value.empty();
}

}  // namespace

namespace git_detail {

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

/// A regular file or a symlink: what git writes a file for.
bool has_file(std::uint32_t mode) {
  return (mode & kTypeMask) == kRegular || (mode & kTypeMask) == kSymlink;
}

}  // namespace git_detail

namespace {

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

}  // namespace

namespace git_detail {

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

}  // namespace git_detail

}  // namespace pisandbox::sandbox::linux_
