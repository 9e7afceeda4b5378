#include "sandbox/linux/git_state.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <string_view>

#include "core/io.hpp"
#include "core/unique_fd.hpp"
#include "policy/git_index.hpp"
#include "sandbox/linux/git_files.hpp"
#include "sandbox/linux/git_files_detail.hpp"

namespace pisandbox::sandbox::linux_ {

namespace {

using core::UniqueFd;

// What checkout, reset, merge, rebase, cherry-pick, revert, stash and pull write in the git
// directory besides objects (gitrepository-layout(5)); FETCH_HEAD and the remote-tracking refs
// of a pull's fetch are among them.
constexpr const char* kStateFiles[] = {
    "HEAD",        "index",       "ORIG_HEAD",  "FETCH_HEAD", "MERGE_HEAD",
    "MERGE_MSG",   "MERGE_MODE",  "MERGE_RR",   "AUTO_MERGE", "CHERRY_PICK_HEAD",
    "REVERT_HEAD", "REBASE_HEAD", "packed-refs"};
constexpr const char* kStateTrees[] = {"refs", "logs", "rebase-merge", "rebase-apply", "sequencer"};

/// The bytes of the regular file `path` below `git_dir`, at most `limit` + 1 of them (more than
/// `limit`: the file is larger), or nullopt: also when it is no regular file, or when `path`
/// or a directory on its way below `git_dir` is a symbolic link (openat2(2) RESOLVE_BENEATH,
/// RESOLVE_NO_SYMLINKS). The command writes the git directory: a link there could lead the
/// read to a file it cannot read (a hidden repository's refs), and a FIFO would hold a
/// blocking open(2) forever once its processes are gone (O_NONBLOCK).
std::optional<std::string> read_regular(const fs::path& git_dir, const fs::path& path,
                                        std::size_t limit) {
  const fs::path relative = path.lexically_relative(git_dir);
  if (relative.empty() || relative.begin()->string() == "..") return std::nullopt;
  UniqueFd dir(::open(git_dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0) return std::nullopt;
  open_how how{};
  how.flags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  UniqueFd fd(
      static_cast<int>(::syscall(SYS_openat2, dir.get(), relative.c_str(), &how, sizeof how)));
  struct stat st {};
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::string out;
  char buffer[65536];
  while (out.size() <= limit) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

/// The state of a git directory: its regular files (relative path: content; with
/// Content::ListOnly every entry that is not a directory, with empty content) and directories.
struct State {
  std::map<std::string, std::string> files;
  std::set<std::string> dirs;
};

enum class Content { Read, ListOnly };

/// The state of `git_dir` (kStateFiles, kStateTrees), symlinks left out when reading; nullopt
/// when the contents read hold more than `budget` bytes.
std::optional<State> read_state(const fs::path& git_dir, Content content, std::size_t budget) {
  State state;
  std::size_t total = 0;
  const auto keep = [&](const fs::path& path, fs::file_status status) {
    const std::string relative = path.lexically_relative(git_dir).string();
    if (content == Content::ListOnly) {
      if (fs::exists(status)) state.files.emplace(relative, "");
      return true;
    }
    auto bytes = read_regular(git_dir, path, budget - total);
    if (!bytes) return true;
    total += bytes->size();
    state.files.emplace(relative, std::move(*bytes));
    return total <= budget;
  };
  std::error_code error;
  for (const char* name : kStateFiles)
    if (!keep(git_dir / name, fs::symlink_status(git_dir / name, error))) return std::nullopt;
  for (const char* tree : kStateTrees) {
    if (!fs::is_directory(fs::symlink_status(git_dir / tree, error))) continue;
    state.dirs.insert(tree);
    for (auto it = fs::recursive_directory_iterator(git_dir / tree, error);
         it != fs::recursive_directory_iterator(); it.increment(error)) {
      const auto status = it->symlink_status(error);
      if (fs::is_directory(status))
        state.dirs.insert(it->path().lexically_relative(git_dir).string());
      else if (!keep(it->path(), status))
        return std::nullopt;
    }
  }
  return state;
}

/// The directory `relative` below `git_dir`, each component opened without following a
/// symlink (a command may have put one there); made when `make`.
core::Result<UniqueFd> open_below(const fs::path& git_dir, const fs::path& relative, bool make) {
  UniqueFd dir(::open(git_dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0) return core::fail_errno("open(" + git_dir.string() + ")");
  fs::path shown = git_dir;
  for (const auto& part : relative) {
    shown /= part;
    if (make && ::mkdirat(dir.get(), part.c_str(), 0755) != 0 && errno != EEXIST)
      return core::fail_errno("mkdirat(" + shown.string() + ")");
    UniqueFd next(::openat(dir.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) return core::fail_errno("openat(" + shown.string() + ")");
    dir = std::move(next);
  }
  return dir;
}

/// Writes `content` at `relative` below `git_dir` (a new file renamed over the old one).
core::Result<void> put_file(const fs::path& git_dir, const fs::path& relative,
                            const std::string& content) {
  auto dir = open_below(git_dir, relative.parent_path(), true);
  if (!dir) return std::unexpected(dir.error());
  const std::string name = relative.filename().string(), temp = "." + name + ".pi-sandbox-restore";
  const fs::path shown = git_dir / relative;
  // A fresh file: whatever the command left at the temporary name is not written through.
  if (::unlinkat(dir->get(), temp.c_str(), 0) != 0 && errno != ENOENT)
    return core::fail_errno("unlinkat(" + shown.string() + ".pi-sandbox-restore)");
  UniqueFd fd(::openat(dir->get(), temp.c_str(),
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (fd.get() < 0) return core::fail_errno("openat(" + shown.string() + ".pi-sandbox-restore)");
  if (!core::write_all(fd.get(), content) || ::fsync(fd.get()) != 0)
    return core::fail_errno("write(" + shown.string() + ".pi-sandbox-restore)");
  if (::renameat(dir->get(), temp.c_str(), dir->get(), name.c_str()) != 0)
    return core::fail_errno("renameat(" + shown.string() + ")");
  return {};
}

/// Removes the entry `relative` below `git_dir` (a directory when `directory`; one that is
/// not empty is left).
core::Result<void> remove_entry(const fs::path& git_dir, const fs::path& relative, bool directory) {
  auto dir = open_below(git_dir, relative.parent_path(), false);
  if (!dir) return std::unexpected(dir.error());
  const int flags = directory ? AT_REMOVEDIR : 0;
  if (::unlinkat(dir->get(), relative.filename().c_str(), flags) != 0 && errno != ENOENT &&
      !(directory && errno == ENOTEMPTY))
    return core::fail_errno("unlinkat(" + (git_dir / relative).string() + ")");
  return {};
}

/// The stat data of `path` as git records it, or nullopt when it is missing.
std::optional<policy::GitStat> git_stat(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return policy::GitStat{
      static_cast<std::uint32_t>(st.st_mtim.tv_sec), static_cast<std::uint32_t>(st.st_mtim.tv_nsec),
      static_cast<std::uint32_t>(st.st_ino), static_cast<std::uint32_t>(st.st_size)};
}

std::vector<policy::GitIndexEntry> entries_of(const std::string& bytes) {
  auto entries = policy::index_entries(bytes, 20);
  if (!entries) entries = policy::index_entries(bytes, 32);  // a SHA-256 repository
  return entries ? std::move(*entries) : std::vector<policy::GitIndexEntry>{};
}

/// The extent of an index read as entries_of() reads it: whole when either object-name size
/// reads it whole.
policy::IndexExtent extent_of(const std::string& bytes) {
  auto extent = policy::index_extent(bytes, 20);
  if (extent.incomplete)
    if (auto wide = policy::index_extent(bytes, 32); !wide.incomplete) return wide;
  return extent;
}

/// `word` as one shell word: as it is when it holds only characters no shell treats specially,
/// else in single quotes (each `'` written `'\''`).
std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && std::ranges::all_of(word, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("/._+-").contains(c);
  });
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::optional<GitStateSnapshot> GitStateSnapshot::take(
    const policy::SandboxPolicy& policy,
    const std::vector<policy::ProtectedPath>& protected_paths) {
  if (!policy.git || !policy.git->git_file.empty()) return std::nullopt;
  const fs::path root = policy.git->worktree_root.lexically_normal();
  const fs::path git_dir = policy.git->git_dir.lexically_normal();
  if (root == policy.workspace || !policy::is_within(policy.workspace, root)) return std::nullopt;
  if (std::ranges::none_of(policy.writable, [&](const auto& e) { return e.path == git_dir; }))
    return std::nullopt;
  auto state = read_state(git_dir, Content::Read, kGitStateBound);
  if (!state) return std::nullopt;
  GitStateSnapshot snapshot;
  snapshot.root_ = root;
  snapshot.git_dir_ = git_dir;
  snapshot.inside_ = policy.workspace.lexically_relative(root).string();
  snapshot.files_ = std::move(state->files);
  snapshot.dirs_ = std::move(state->dirs);
  for (const auto& e : policy.writable) snapshot.writable_.push_back(e.path);
  for (const auto& e : policy.home_writable_entries) snapshot.writable_.push_back(e);
  for (const auto& p : protected_paths) snapshot.protected_.push_back(p.path.lexically_normal());
  snapshot.patterns_ = policy.protected_patterns;
  std::error_code error;
  for (auto it = fs::directory_iterator(git_dir, error); !error && it != fs::directory_iterator();
       it.increment(error))
    if (const std::string name = it->path().filename().string(); name.starts_with("sharedindex."))
      snapshot.shared_indexes_.insert(name);
  // The shared index a split index names: git writes a new one with the index, and may expire
  // the old one, which the index put back needs. One beyond what the bound leaves is not kept,
  // but the state is: the index before then reads as a split index without its shared index,
  // which puts the state back after any change (fails closed, as without a snapshot it would
  // not).
  if (const auto index = snapshot.files_.find("index"); index != snapshot.files_.end()) {
    std::size_t total = 0;
    for (const auto& [path, bytes] : snapshot.files_) total += bytes.size();
    const std::string shared = extent_of(index->second).shared_index;
    if (!shared.empty()) {
      auto bytes = read_regular(git_dir, git_dir / shared, kGitStateBound - total);
      if (bytes && bytes->size() <= kGitStateBound - total)
        snapshot.files_.emplace(shared, std::move(*bytes));
    }
  }
  if (const auto index = snapshot.files_.find("index"); index != snapshot.files_.end()) {
    for (const auto& e : snapshot.readable_entries(index->second, SharedFrom::Start)) {
      if (e.stage != 0 || e.skip_worktree || !e.path.starts_with(snapshot.inside_ + "/")) continue;
      const std::uint32_t type = e.mode & 0170000;
      if (type != 0100000 && type != 0120000) continue;
      if (snapshot.stamps_.size() == kStampedFilesBound) {
        snapshot.stamps_.clear();
        break;
      }
      snapshot.stamps_.emplace(e.path, stamp_of(root / e.path));
    }
  }
  // The coarse clock: file systems stamp a new inode with it or a finer one, so a directory
  // made after this is never stamped earlier.
  ::clock_gettime(CLOCK_REALTIME_COARSE, &snapshot.started_);
  return snapshot;
}

GitStateSnapshot::HalfDone GitStateSnapshot::half_done(bool failed, bool applies_stash) const {
  const auto old_index = files_.find("index");
  const auto new_bytes = read_regular(git_dir_, git_dir_ / "index", kGitStateBound);
  if (old_index == files_.end() || !new_bytes) return {};
  const auto stat_of = [&](const std::string& path) { return git_stat(root_ / path); };
  const auto whole_before = whole_entries(old_index->second, SharedFrom::Start);
  const auto whole_after = whole_entries(*new_bytes, SharedFrom::Now);
  // Not whole (a sparse index): the entries the index holds, as far as they go.
  const auto before = whole_before ? *whole_before : entries_of(old_index->second);
  const auto after = whole_after ? *whole_after : entries_of(*new_bytes);
  const auto old_stash = files_.find("logs/refs/stash");
  const auto new_stash = read_regular(git_dir_, git_dir_ / "logs/refs/stash", kGitStateBound);
  // A stash entry added (a pop or a drop that removed one is no stash that could fail).
  const bool stashed =
      new_stash &&
      git_detail::reflog_grew(
          old_stash == files_.end() ? std::nullopt : std::optional<std::string>(old_stash->second),
          *new_stash);
  // An index whose entries cannot all be read (a sparse index, a split index without its
  // shared index) cannot tell which files git meant to change: after a command that changed
  // it with HEAD or failed, or stashed and failed, the state is put back whatever the files
  // hold.
  if ((*new_bytes != old_index->second && (failed || head_moved())) || (stashed && failed)) {
    if (!whole_before || !whole_after) {
      HalfDone unknown;
      unknown.unreadable = whole_before ? whole_after.error() : whole_before.error();
      return unknown;
    }
  }
  // An index-only command (`git reset`, `git rm --cached`, `git restore --staged`) changes
  // entries outside without touching their files, as on the host: only an index that moved
  // with HEAD, or a failed command, is half done.
  if (*new_bytes != old_index->second && (failed || head_moved())) {
    auto outside = policy::unapplied_paths(before, after, inside_, stat_of);
    if (!outside.empty())
      return {std::move(outside), policy::written_paths(before, after, inside_, stat_of)};
  }
  // A stash that saved changes outside the workspace and could not reset them fails after
  // writing its entry (builtin/stash.c do_push_stash).
  if (!failed) return {};
  // git refreshes the stat data of the index before a merge, and may write it then: only what
  // the entries name counts.
  const auto same_entries = [&] {
    return std::ranges::equal(before, after, [](const auto& a, const auto& b) {
      return a.path == b.path && a.stage == b.stage && a.mode == b.mode && a.oid == b.oid &&
             a.skip_worktree == b.skip_worktree;
    });
  };
  if (!stashed) return same_entries() && !head_moved() ? unfinished(applies_stash) : HalfDone{};
  HalfDone dirty;
  if (const auto newest = git_detail::reflog_new_names(*new_stash, 1); !newest.empty())
    dirty.stash = newest.front();
  for (const auto& e : before) {
    if (e.skip_worktree || e.stage != 0 || (e.mode & 0170000) == 0160000) continue;
    if (e.path.starts_with(inside_ + "/")) continue;
    if (stat_of(e.path) != std::optional<policy::GitStat>(e.stat)) dirty.outside.push_back(e.path);
  }
  return dirty;
}

PackageFiles GitStateSnapshot::package_files(std::vector<policy::GitIndexEntry> before,
                                             std::vector<std::string> written) const {
  return {root_,    git_dir_,  inside_,    std::move(before), std::move(written),
          started_, writable_, protected_, patterns_};
}

std::vector<std::string> GitStateSnapshot::targets(bool with_stash) const {
  std::vector<std::string> out;
  std::set<std::string> seen;
  // The object name each line of `bytes` starts with.
  const auto add = [&](std::string_view bytes) {
    while (!bytes.empty() && out.size() < kTargetCommitsBound) {
      const auto end = bytes.find('\n');
      const std::string_view line = bytes.substr(0, end);
      bytes.remove_prefix(end == std::string_view::npos ? bytes.size() : end + 1);
      const auto length = std::min(line.find_first_of(" \t"), line.size());
      const std::string name(line.substr(0, length));
      if (git_detail::is_object_name(name) && seen.insert(name).second) out.push_back(name);
    }
  };
  // What the command left naming where it was going.
  for (const char* name :
       {"FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "AUTO_MERGE",
        "rebase-merge/onto", "rebase-apply/onto", "ORIG_HEAD"})
    if (const auto bytes = read_regular(git_dir_, git_dir_ / name, 1 << 20)) add(*bytes);
  // The remote-tracking refs a pull's fetch moved; a `refs` or `refs/remotes` that is a
  // symbolic link (to a repository the command cannot read) is not walked.
  std::error_code error;
  std::size_t seen_refs = 0;
  const bool walk = fs::is_directory(fs::symlink_status(git_dir_ / "refs", error)) &&
                    fs::is_directory(fs::symlink_status(git_dir_ / "refs/remotes", error));
  for (auto it = walk ? fs::recursive_directory_iterator(git_dir_ / "refs/remotes", error)
                      : fs::recursive_directory_iterator();
       !error && it != fs::recursive_directory_iterator() && seen_refs++ < kTargetCommitsBound;
       it.increment(error))
    if (const auto bytes = read_regular(git_dir_, it->path(), 256)) add(*bytes);
  // The refs as the command started: branches, remote-tracking refs, tags.
  for (const auto& [path, bytes] : files_)
    if (path.starts_with("refs/") && (with_stash || path != "refs/stash")) add(bytes);
  if (const auto packed = files_.find("packed-refs"); packed != files_.end()) add(packed->second);
  // Where HEAD was lately (`git reset --hard HEAD~1`), and the stash entries an apply or pop
  // takes its files from (`git stash apply stash@{1}`): the newest reflog entries' new names.
  // An entry made with `--include-untracked` holds the untracked files in its third parent,
  // which an apply writes before the tracked ones (`<entry>^3`, unfinished_writes()).
  for (const char* log : {"logs/HEAD", "logs/refs/stash"})
    if (const auto bytes = files_.find(log);
        bytes != files_.end() && (with_stash || std::string_view(log) != "logs/refs/stash"))
      for (const auto& name : git_detail::reflog_new_names(bytes->second, kReflogTargetsBound)) {
        add(name);
        if (std::string_view(log) == "logs/refs/stash" && out.size() < kTargetCommitsBound &&
            seen.insert(name + "^3").second)
          out.push_back(name + "^3");
      }
  return out;
}

GitStateSnapshot::HalfDone GitStateSnapshot::unfinished(bool applies_stash) const {
  if (stamps_.empty()) return {};
  const auto index = files_.find("index");
  if (index == files_.end()) return {};
  // Whether the command wrote any of git's state files (a merge refreshes the index and
  // writes ORIG_HEAD; a pull writes FETCH_HEAD).
  const bool state_changed = std::ranges::any_of(kStateFiles, [&](const char* name) {
    const auto kept = files_.find(name);
    const auto now = read_regular(git_dir_, git_dir_ / name, kGitStateBound);
    return kept == files_.end() ? now.has_value() : now != kept->second;
  });
  Unfinished found =
      unfinished_writes(package_files(whole_entries(index->second, SharedFrom::Start)
                                          .value_or(std::vector<policy::GitIndexEntry>{}),
                                      {}),
                        targets(applies_stash), stamps_, state_changed || applies_stash);
  if (found.written.empty()) return {};
  HalfDone half;
  half.outside = std::move(found.outside);
  half.inside = std::move(found.written);
  half.unchecked = std::move(found.unchecked);
  return half;
}

bool GitStateSnapshot::head_moved() const {
  const auto changed = [&](const std::string& path) {
    const auto kept = files_.find(path);
    const auto now = read_regular(git_dir_, git_dir_ / path, kGitStateBound);
    return kept == files_.end() ? now.has_value() : now != kept->second;
  };
  if (changed("HEAD") || changed("packed-refs")) return true;
  // HEAD names a branch (`ref: refs/heads/main`): the branch's own file.
  const auto head = files_.find("HEAD");
  if (head == files_.end() || !head->second.starts_with("ref: ")) return false;
  std::string ref = head->second.substr(5);
  while (!ref.empty() && (ref.back() == '\n' || ref.back() == '\r')) ref.pop_back();
  return ref.starts_with("refs/") && ref.find("..") == std::string::npos && changed(ref);
}

std::vector<policy::GitIndexEntry> GitStateSnapshot::readable_entries(const std::string& bytes,
                                                                      SharedFrom from) const {
  auto whole = whole_entries(bytes, from);
  return whole ? std::move(*whole) : entries_of(bytes);
}

std::expected<std::vector<policy::GitIndexEntry>, std::string> GitStateSnapshot::whole_entries(
    const std::string& bytes, SharedFrom from) const {
  const auto extent = extent_of(bytes);
  if (!extent.incomplete) return entries_of(bytes);
  if (extent.shared_index.empty()) return std::unexpected(*extent.incomplete);
  std::optional<std::string> shared;
  if (from == SharedFrom::Start) {
    if (const auto kept = files_.find(extent.shared_index); kept != files_.end())
      shared = kept->second;
  } else {
    shared = read_regular(git_dir_, git_dir_ / extent.shared_index, kGitStateBound);
  }
  if (!shared || shared->size() > kGitStateBound)
    return std::unexpected(*extent.incomplete + " whose shared index " + extent.shared_index +
                           " is missing or larger than " + std::to_string(kGitStateBound >> 20) +
                           " MiB");
  auto merged = policy::split_index_entries(bytes, *shared, 20);
  if (!merged)  // a SHA-256 repository
    if (auto wide = policy::split_index_entries(bytes, *shared, 32); wide) return wide;
  if (!merged)
    return std::unexpected(*extent.incomplete + " whose shared index cannot be merged with it (" +
                           merged.error() + ")");
  return merged;
}

core::Result<void> GitStateSnapshot::restore() const {
  auto now = read_state(git_dir_, Content::ListOnly, 0);
  if (!now) return core::fail("read(" + git_dir_.string() + "): the state cannot be listed");
  for (const auto& [path, unused] : now->files)
    if (!files_.contains(path))
      if (auto removed = remove_entry(git_dir_, path, false); !removed) return removed;
  for (const auto& dir : dirs_)  // parents first: the set is sorted
    if (auto made = open_below(git_dir_, dir, true); !made) return std::unexpected(made.error());
  for (const auto& [path, content] : files_) {
    if (read_regular(git_dir_, git_dir_ / path, content.size()) == content) continue;
    if (auto put = put_file(git_dir_, path, content); !put) return put;
  }
  // The shared indexes git wrote with a split index: none is named by the index put back.
  std::error_code error;
  std::vector<std::string> shared;
  for (auto it = fs::directory_iterator(git_dir_, error); !error && it != fs::directory_iterator();
       it.increment(error))
    if (const std::string name = it->path().filename().string(); name.starts_with("sharedindex.") &&
                                                                 !shared_indexes_.contains(name) &&
                                                                 !files_.contains(name))
      shared.push_back(name);
  for (const auto& name : shared)
    if (auto removed = remove_entry(git_dir_, name, false); !removed) return removed;
  // Deepest first, so that a directory made inside another made one goes before it.
  for (auto it = now->dirs.rbegin(); it != now->dirs.rend(); ++it)
    if (!dirs_.contains(*it))
      if (auto removed = remove_entry(git_dir_, *it, true); !removed) return removed;
  return {};
}

std::string GitStateSnapshot::settle_unreadable(const std::string& why) const {
  const std::string needed =
      "the repository's index is " + why +
      ", whose entries pi-sandbox cannot read completely, so it cannot tell whether git changed "
      "every path outside the workspace it meant to (they are read-only here)";
  const std::string allow =
      "; the command's exit status is " + std::to_string(kGitPutBackExit) +
      "; to allow it, make the repository's root the workspace (--cwd " + root_.string() +
      "), or give the repository a whole index on the host (`git config core.splitIndex false "
      "&& git config index.sparse false && git update-index --no-split-index`)";
  if (auto restored = restore(); !restored)
    return needed +
           "; putting the repository back as it was failed: " + restored.error().describe() + allow;
  return needed +
         "; its HEAD, index, refs and stash are as they were before the command, the "
         "files of the workspace as the command left them (`git status` names those "
         "that differ)" +
         allow;
}

std::string GitStateSnapshot::settle(bool failed, const std::vector<std::string>& words) const {
  // An apply of a stash entry's untracked files leaves git's state and every tracked file as
  // they were: only the command's words tell it.
  // The stash's entries are what git was moving to only for an apply or a pop that cannot
  // have completed: its entry changes paths outside the workspace, and a pop kept it. A pop
  // that went through, then a test that failed, leaves its files as they are.
  const auto op = git_operation(words);
  const bool stash_stopped = failed && op && op->name == "stash" && !op->target.empty() &&
                             outside_of_move(words).has_value();
  const HalfDone half = half_done(failed, stash_stopped);
  if (!half.unreadable.empty()) return settle_unreadable(half.unreadable);
  if (half.outside.empty()) return {};
  const auto list = [&](const std::vector<std::string>& paths, const char* separator,
                        auto&& shown) {
    std::string out;
    for (const auto& path : paths)
      out += (out.empty() ? "" : separator) + shown((root_ / path).string());
    return out;
  };
  const auto as_is = [](const std::string& path) { return path; };
  const std::string needed =
      "git needed to change paths outside the workspace, which are read-only here: " +
      list(half.outside, ", ", as_is);
  // A changed file not told to be git's (the command's own edit, or one git merged) is left
  // as it is and named.
  const std::string unchecked =
      half.unchecked.empty()
          ? std::string()
          : "; files of the workspace that changed during the command and hold nothing git was "
            "moving to are left as they are (`git checkout -- " +
                list(half.unchecked, " ", shell_word) + "` takes them back if git wrote them)";
  const std::string allow =
      unchecked + "; the command's exit status is " + std::to_string(kGitPutBackExit) +
      "; to allow it, make the repository's root the workspace (--cwd " + root_.string() + ")";
  if (auto restored = restore(); !restored)
    return needed +
           "; putting the repository back as it was failed: " + restored.error().describe() + allow;
  PackageFiles files = package_files({}, half.inside);
  // Without the index as it was, no file can be told to be the command's: none is touched.
  const auto index = files_.find("index");
  auto before = index == files_.end()
                    ? std::nullopt
                    : std::optional(whole_entries(index->second, SharedFrom::Start));
  if (!before || !*before)
    return needed + "; the repository is as it was before the command but for what git had " +
           "written inside the workspace, which could not be put back (the index before the " +
           "command cannot be read)" + allow;
  files.before = std::move(**before);
  if (!half.stash.empty()) {
    const std::string kept =
        "the stash entry it made is kept as an object: `git stash apply " + half.stash + "`";
    const PutBack back = put_back_stashed(files, half.stash);
    std::vector<std::string> paths = back.failed;
    paths.insert(paths.end(), back.left.begin(), back.left.end());
    std::ranges::sort(paths);
    if (paths.empty() && back.error.empty())
      return needed + "; the repository is as it was before the command (" + kept + ")" + allow;
    return needed + "; the repository is as it was before the command but for files of the " +
           "workspace the stash had reset, which could not be put back" +
           (back.error.empty() ? "" : " (" + back.error + ")") +
           (paths.empty() ? "" : ": " + list(paths, ", ", as_is)) + " (" + kept +
           " takes them back)" + allow;
  }
  if (half.inside.empty())
    return needed + "; the repository is as it was before the command" + allow;
  const PutBack back = put_back_files(files);
  const auto checkout = [&](std::vector<std::string> paths) {
    std::ranges::sort(paths);
    return "(`git checkout -- " + list(paths, " ", shell_word) + "` takes it back)";
  };
  if (!back.failed.empty()) {
    std::vector<std::string> paths = back.failed;
    paths.insert(paths.end(), back.left.begin(), back.left.end());
    return needed + "; the repository is as it was before the command but for files git had " +
           "written inside the workspace that could not be put back (" + back.error + ") " +
           checkout(paths) + allow;
  }
  if (!back.left.empty())
    return needed + "; the repository is as it was before the command but for files git had " +
           "written inside the workspace that a checkout may convert, left as they are " +
           checkout(back.left) + allow;
  return needed + "; the repository is as it was before the command" + allow;
}

}  // namespace pisandbox::sandbox::linux_
