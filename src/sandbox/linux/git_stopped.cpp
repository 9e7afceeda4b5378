// pisandbox::sandbox::linux_ — the line after a git operation in a package of a monorepo that
// stopped before it wrote anything (docs/security.md, "Repositories around the workspace"):
// git's own error (`unable to create file top2.txt: Read-only file system`) does not say that
// the path is outside the workspace, nor how to allow it.
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <span>

#include "core/unique_fd.hpp"
#include "sandbox/linux/git_files_detail.hpp"
#include "sandbox/linux/git_state.hpp"

namespace pisandbox::sandbox::linux_ {

using core::UniqueFd;
using namespace git_detail;

namespace {

bool is_git(const std::string& word) {
  return word == "git" || word.ends_with("/git");
}

/// The operations git-checkout(1), git-switch(1), git-pull(1), git-merge(1), git-rebase(1),
/// git-reset(1) `--hard`, git-cherry-pick(1), git-revert(1), git-am(1) and git-stash(1):
/// those that rewrite files of the working tree.
constexpr std::array<const char*, 10> kOperations = {"checkout", "switch", "pull",        "merge",
                                                     "rebase",   "reset",  "cherry-pick", "revert",
                                                     "am",       "stash"};

/// Those whose argument is the commit they move to (or take changes from).
bool takes_target(const std::string& name) {
  return name == "merge" || name == "rebase" || name == "reset" || name == "cherry-pick";
}

/// The bytes (at most 1 MiB) of the regular file `relative` below `git_dir`, reached without
/// following a symlink and opened without blocking (a FIFO the command left there holds
/// nothing), or nullopt.
std::optional<std::string> read_state_file(const fs::path& git_dir, const char* relative) {
  UniqueFd dir(::open(git_dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0) return std::nullopt;
  open_how how{};
  how.flags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, dir.get(), relative, &how, sizeof how)));
  struct stat st {};
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 20))
    return std::nullopt;
  std::string out(static_cast<std::size_t>(st.st_size), '\0');
  const ssize_t n = ::read(fd.get(), out.data(), out.size());
  if (n < 0) return std::nullopt;
  out.resize(static_cast<std::size_t>(n));
  return out;
}

/// Whether every name git may read `ref` (a word's ref part, gitrevisions(7) "<refname>") or
/// HEAD from is a regular file or missing: a symlink there may lead git to another
/// repository's ref, a FIFO would hold the rev-parse until its deadline.
bool plain_refs(const fs::path& git_dir, const std::string& ref) {
  std::vector<fs::path> names = {"HEAD", "packed-refs", "FETCH_HEAD", "ORIG_HEAD",
                                 "refs", "refs/heads",  "refs/tags",  "refs/remotes"};
  // HEAD's branch.
  if (const auto head = read_state_file(git_dir, "HEAD"); head && head->starts_with("ref: ")) {
    std::string branch = head->substr(5);
    while (!branch.empty() && (branch.back() == '\n' || branch.back() == '\r')) branch.pop_back();
    names.emplace_back(branch);
  }
  if (!ref.empty())
    for (const char* prefix : {"", "refs/", "refs/tags/", "refs/heads/", "refs/remotes/"}) {
      names.emplace_back(std::string(prefix) + ref);
      if (std::string_view(prefix) == "refs/remotes/") names.emplace_back(prefix + ref + "/HEAD");
    }
  for (const auto& name : names) {
    const fs::path relative = name.lexically_normal();
    if (relative.empty() || relative.is_absolute() || *relative.begin() == "..") return false;
    // Each component a directory of its own up to a regular file or a missing name.
    fs::path at = git_dir;
    for (auto part = relative.begin(); part != relative.end(); ++part) {
      at /= *part;
      struct stat st {};
      if (::lstat(at.c_str(), &st) != 0) break;
      if (S_ISREG(st.st_mode)) break;  // git reads nothing below a file
      if (!S_ISDIR(st.st_mode)) return false;
    }
  }
  return true;
}

/// The object name FETCH_HEAD's first line for merging starts with (git-fetch(1): lines
/// marked `not-for-merge` are not merged by a pull), or empty.
std::string fetched_for_merge(const std::string& bytes) {
  std::string_view rest = bytes;
  while (!rest.empty()) {
    const auto end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    const auto tab = line.find('\t');
    if (tab == std::string_view::npos || line.substr(tab + 1).starts_with("not-for-merge"))
      continue;
    const std::string_view name = line.substr(0, tab);
    return is_object_name(name) ? std::string(name) : std::string();
  }
  return {};
}

/// The n of a stash entry as git-stash(1) names it (`stash@{n}`, `refs/stash@{n}`, or `n`
/// alone), or nullopt for any other word.
std::optional<std::size_t> stash_index(std::string_view word) {
  for (std::string_view prefix : {"stash@{", "refs/stash@{"})
    if (word.starts_with(prefix) && word.ends_with('}')) {
      word = word.substr(prefix.size(), word.size() - prefix.size() - 1);
      break;
    }
  if (word.empty() || word.size() > 6 ||
      !std::ranges::all_of(word, [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return static_cast<std::size_t>(std::stoul(std::string(word)));
}

/// Whether `target` is a ref or object name with `^`/`~` suffixes only (gitrevisions(7)) whose
/// ref files are plain ones (plain_refs()): `@{upstream}`, `:/text` or `<ref>@{n}` would have
/// git read refs or reflogs beyond those plain_refs() looks at (a FIFO there holds the run).
bool plain_target(const fs::path& git_dir, const std::string& target) {
  const std::string ref = target.substr(0, target.find_first_of("^~"));
  const auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '/' ||
           c == '-';
  };
  const auto suffix_char = [](char c) { return c == '^' || c == '~' || (c >= '0' && c <= '9'); };
  return !ref.empty() && !ref.starts_with('-') && std::ranges::all_of(ref, name_char) &&
         std::ranges::all_of(std::string_view(target).substr(ref.size()), suffix_char) &&
         plain_refs(git_dir, ref);
}

/// Whether git's state file `name` below `git_dir` (not followed when a symlink) changed its
/// inode data at or after `since` (CLOCK_REALTIME_COARSE, so a file written in the tick
/// before counts too): git writes its state files through a lock file renamed over them.
bool written_since(const fs::path& git_dir, const char* name, const struct timespec& since) {
  struct stat st {};
  if (::lstat((git_dir / name).c_str(), &st) != 0) return false;
  return st.st_ctim.tv_sec > since.tv_sec ||
         (st.st_ctim.tv_sec == since.tv_sec && st.st_ctim.tv_nsec >= since.tv_nsec);
}

/// Where a stopped operation was taking the working tree: the commit it started from and the
/// one it was moving to (a plain_target() or an object name), and whether a fetch of the
/// command brought the latter.
struct Move {
  std::string from = "HEAD";
  std::string to;
  bool fetched = false;
};

/// The move of `op`: for `pull`, from HEAD to FETCH_HEAD's commit when the command wrote it;
/// for `stash apply` and `stash pop`, and for `git stash` (push, save) that added an entry,
/// from the stash entry's first parent to the entry
/// (git-stash(1) "Discussion": the entry's tree is the working tree as it was stashed), read
/// from `logs/refs/stash`; for merge, rebase, reset and cherry-pick, from HEAD to the argument
/// when it is a plain_target(); nullopt otherwise. `kept` holds git's state files as the
/// command started.
std::optional<Move> move_of(const GitOperation& op, const fs::path& git_dir,
                            const std::map<std::string, std::string>& kept) {
  Move move;
  if (op.name == "pull") {
    const auto now = read_state_file(git_dir, "FETCH_HEAD");
    const auto before = kept.find("FETCH_HEAD");
    if (!now || (before != kept.end() && before->second == *now)) return std::nullopt;
    move.to = fetched_for_merge(*now);
    move.fetched = true;
  } else if (op.name == "stash") {
    const auto now = read_state_file(git_dir, "logs/refs/stash");
    const auto kept_log = kept.find("logs/refs/stash");
    const std::optional<std::string> before =
        kept_log == kept.end() ? std::nullopt : std::optional<std::string>(kept_log->second);
    // `git stash` (push, save): the entry it added, when it added one. `apply` and `pop`: the
    // entry named as the command started; a pop that dropped one (the reflog changed) went
    // through, and its entry is gone.
    std::optional<std::string> log;
    std::optional<std::size_t> n;
    if (op.target.empty()) {
      if (now && reflog_grew(before, *now)) {
        log = now;
        n = 0;
      }
    } else if (before && now == before) {
      log = before;
      n = stash_index(op.target);
    }
    if (!n || !log) return std::nullopt;
    const auto names = reflog_new_names(*log, *n + 1);
    if (names.size() <= *n) return std::nullopt;
    move.to = names[*n];
    move.from = move.to + "^1";
  } else if (takes_target(op.name) && plain_target(git_dir, op.target)) {
    move.to = op.target;
  }
  // FETCH_HEAD's or the stash's object name: git still reads HEAD, its branch and the refs an
  // object name could also be (a FIFO there would hold the rev-parse to its deadline).
  if (move.to.empty() || !plain_refs(git_dir, move.to)) return std::nullopt;
  return move;
}

}  // namespace

std::optional<GitOperation> git_operation(const std::vector<std::string>& words) {
  std::optional<GitOperation> found;
  for (std::size_t at = 0; at < words.size(); ++at) {
    if (!is_git(words[at])) continue;
    std::size_t sub = at + 1;
    while (sub < words.size() && words[sub].starts_with('-'))
      sub += (words[sub] == "-C" || words[sub] == "-c") ? 2 : 1;
    if (sub >= words.size()) break;
    const std::string& name = words[sub];
    if (std::ranges::find(kOperations, name) == kOperations.end()) continue;
    // Its arguments: up to the end of its command (a word `;`, shell::command_words()) or the
    // next `git`.
    std::size_t end = sub + 1;
    while (end < words.size() && !is_git(words[end]) && words[end] != ";") ++end;
    const auto args = std::span(words).subspan(sub + 1, end - sub - 1);
    if (name == "reset" && std::ranges::find(args, "--hard") == args.end()) continue;
    GitOperation op{name, {}};
    if (name == "stash") {
      // git-stash(1): `push` (the default), `save` and `branch` change HEAD or the index, which
      // the put-back sees; `apply` and `pop` take the entry named after them (the newest by
      // default); the others rewrite no file.
      std::vector<std::string> plain;
      for (const auto& arg : args)
        if (!arg.starts_with('-')) plain.push_back(arg);
      const std::string sub = plain.empty() ? "push" : plain.front();
      if (sub == "apply" || sub == "pop") {
        op.target = plain.size() > 1 ? plain[1] : "stash@{0}";
        // Shell text's pieces split `stash@{1}` at its braces (policy::path_pieces()).
        if (op.target.ends_with('@') && plain.size() > 2) op.target += "{" + plain[2] + "}";
      } else if (sub == "list" || sub == "show" || sub == "drop" || sub == "clear" ||
                 sub == "create" || sub == "store") {
        continue;
      }
    }
    if (takes_target(name))
      for (std::size_t i = 0; i < args.size(); ++i) {
        // Options that take a separate value (git-rebase(1) `--onto <newbase>`, git-merge(1)
        // `-m <msg>`, `-s <strategy>`, `-X <option>`): the value is no target.
        if (args[i] == "--onto" || args[i] == "-m" || args[i] == "-s" || args[i] == "-X" ||
            args[i] == "--strategy" || args[i] == "--strategy-option") {
          ++i;
          continue;
        }
        if (!args[i].starts_with('-')) {
          op.target = args[i];
          break;
        }
      }
    found = std::move(op);
  }
  return found;
}

std::optional<GitStateSnapshot::Outside> GitStateSnapshot::outside_of_move(
    const std::vector<std::string>& words) const {
  auto op = git_operation(words);
  // A pull in a script (`make update`) names no operation in the command's words, but leaves
  // its marks: FETCH_HEAD rewritten (move_of() checks it) and ORIG_HEAD written during the
  // command; a `git fetch` alone writes no ORIG_HEAD.
  if (!op && written_since(git_dir_, "ORIG_HEAD", started_)) op = GitOperation{"pull", {}};
  if (!op) return std::nullopt;
  const auto move = move_of(*op, git_dir_, files_);
  if (!move) return std::nullopt;
  const PackageFiles files = package_files({}, {});
  const auto git = host_git(files.writable);
  if (!git || !own_objects(files) || !own_loose_objects(files)) return std::nullopt;
  const Deadline deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(kGitRestoreTimeoutSeconds);
  auto commit =
      run_git(*git, files, GitConfig::Isolated, deadline,
              {"rev-parse", "--verify", "--quiet", "--end-of-options", move->to + "^{commit}"});
  if (!commit || commit->code != 0) return std::nullopt;
  std::string oid = commit->out;
  while (!oid.empty() && (oid.back() == '\n' || oid.back() == '\r')) oid.pop_back();
  if (oid.size() != 40 && oid.size() != 64) return std::nullopt;
  auto listed = run_git(*git, files, GitConfig::Isolated, deadline,
                        {"diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv",
                         "--name-only", move->from, oid});
  if (!listed || listed->code != 0) return std::nullopt;
  Outside outside;
  outside.fetched = move->fetched;
  for (std::string_view rest = listed->out; !rest.empty();) {
    const auto end = rest.find('\0');
    const std::string path(rest.substr(0, end));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    if (!path.empty() && !path.starts_with(inside_ + "/")) outside.paths.push_back(path);
  }
  if (outside.paths.empty()) return std::nullopt;
  return outside;
}

std::string GitStateSnapshot::stopped_line(const std::vector<std::string>& words) const {
  const auto outside = outside_of_move(words);
  if (!outside) return {};
  std::string named;
  for (std::size_t i = 0; i < outside->paths.size() && i < kStoppedPathsShown; ++i)
    named += (i == 0 ? "" : ", ") + (root_ / outside->paths[i]).string();
  if (outside->paths.size() > kStoppedPathsShown)
    named += " and " + std::to_string(outside->paths.size() - kStoppedPathsShown) + " more";
  return "git needed to change paths outside the workspace, which are read-only here: " + named +
         "; the repository is as it was before the command" +
         (outside->fetched
              ? "; what the fetch brought stays (FETCH_HEAD, the remote-tracking refs), as "
                "after `git fetch`"
              : "") +
         "; to allow it, make the repository's root the workspace (--cwd " + root_.string() + ")";
}

bool GitStateSnapshot::hidden_stop(const std::vector<std::string>& words) const {
  if (head_moved()) return false;
  // `stash apply` and `stash pop` need no mark: an entry that changes paths outside cannot be
  // applied here, and a pop that went through dropped its entry (move_of() then has none).
  const auto op = git_operation(words);
  const bool applies = op && op->name == "stash" && !op->target.empty();
  // Else a mark of git's trying: ORIG_HEAD written (merge, reset, a pull's merge), FETCH_HEAD
  // rewritten (a pull's fetch), an entry added to the stash's reflog (a push that saved), or a
  // tracked file of the workspace changed (a rebase or cherry-pick that wrote some before it
  // stopped).
  const auto changed = [&](const char* name) {
    const auto kept = files_.find(name);
    const auto now = read_state_file(git_dir_, name);
    return now && (kept == files_.end() || kept->second != *now);
  };
  const auto stash = files_.find("logs/refs/stash");
  const auto stash_now = read_state_file(git_dir_, "logs/refs/stash");
  const bool tried =
      applies || written_since(git_dir_, "ORIG_HEAD", started_) || changed("FETCH_HEAD") ||
      (stash_now &&
       reflog_grew(stash == files_.end() ? std::nullopt : std::optional<std::string>(stash->second),
                   *stash_now)) ||
      std::ranges::any_of(
          stamps_, [&](const auto& kept) { return stamp_of(root_ / kept.first) != kept.second; });
  return tried && outside_of_move(words).has_value();
}

}  // namespace pisandbox::sandbox::linux_
