// pisandbox::sandbox::linux_ — the state of the repository around a workspace that is a strict
// subdirectory of it, kept before a command and put back when git could not finish
// (docs/security.md, "Repositories around the workspace").
//
// Such a workspace writes the repository's git directory but not its working tree outside the
// workspace. `git checkout other`, whose branches differ outside the package, moves HEAD and
// the index, then fails to rewrite the files outside: the host repository is left half on
// each branch. The supervisor keeps what such an operation changes (HEAD, the index, refs,
// reflogs, the stash, the state of a merge or rebase in progress; not objects, which nothing
// names afterwards) and, after the command, puts it back when git meant to change a file
// outside the workspace and could not.
#pragma once

#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "policy/sandbox_policy.hpp"
#include "sandbox/linux/git_files.hpp"

namespace pisandbox::sandbox::linux_ {

namespace fs = std::filesystem;

/// The most bytes of git state kept (64 MiB): a repository whose HEAD, index, refs and logs
/// hold more is not kept, and its half-done operations are not undone.
inline constexpr std::size_t kGitStateBound = std::size_t{64} << 20;

/// The most tracked files of the workspace whose stamp is kept as the command starts (100000):
/// beyond, what an operation that stopped before it changed HEAD or the index wrote there is
/// not put back.
inline constexpr std::size_t kStampedFilesBound = 100000;

/// The exit status of a command whose git operation was put back: pi-sandbox's own, as for a
/// sandbox that could not be set up or a command the guard stopped (README, "Exit status"), so
/// that no caller takes the operation for done.
inline constexpr int kGitPutBackExit = 125;

/// The most paths outside the workspace a line after a stopped operation names (5); the rest
/// are counted (`and N more`).
inline constexpr std::size_t kStoppedPathsShown = 5;

/// The git operation a command's words name, for stopped_line(): `checkout`, `switch`,
/// `pull`, `merge`, `rebase`, `reset` (with `--hard` only), `cherry-pick`, `revert`, `am` or
/// `stash` (but `stash list`, `show`, `drop`, `clear`, `create` and `store`, which rewrite no
/// file) after a word `git` (or `.../git`; `-C <dir>`, `-c <setting>` and other options before
/// it skipped); the last such operation of the words counts.
struct GitOperation {
  std::string name;    ///< the subcommand (`pull`, `reset`, ...)
  std::string target;  ///< merge, rebase, reset, cherry-pick: the first word after it not
                       ///< starting with `-` (empty when none); `stash apply` and `stash pop`:
                       ///< the entry named after them (`stash@{0}` when none); empty for the
                       ///< others
};

/// The operation among `words` (a command's words, or its shell text's path_pieces()), or
/// nullopt. Pure.
[[nodiscard]] std::optional<GitOperation> git_operation(const std::vector<std::string>& words);

/// The git state of the repository around the workspace as the command started.
class GitStateSnapshot {
 public:
  /// Reads the state when the workspace is a strict subdirectory of a repository's working
  /// tree whose git directory is writable (policy.writable); nullopt otherwise, or when the
  /// state holds more than kGitStateBound bytes or cannot be read. `protected_paths` (absolute:
  /// the policy's and the scan's, PreparedSandbox::protected_paths) are never written or removed
  /// when the workspace's files are put back, nor a name that policy.protected_patterns
  /// match: git could not write them inside, so an index
  /// naming one as written is the command's (docs/security.md, "Protected paths").
  static std::optional<GitStateSnapshot> take(
      const policy::SandboxPolicy& policy,
      const std::vector<policy::ProtectedPath>& protected_paths);

  /// After the command (`failed`: it did not exit 0): the paths outside the workspace that git
  /// meant to change and could not (policy::unapplied_paths() on the index, when HEAD moved or
  /// the command failed: an index-only `git reset` is complete as it is; with a new stash
  /// entry and a failed command, the tracked files outside whose stat data differs from the
  /// index, which the stash meant to reset; with a failed command that left HEAD and the index
  /// as they were, the paths outside where a commit it was moving to differs from HEAD, when
  /// the workspace's files hold what that commit holds there, unfinished_writes() on the
  /// commits the state names: `FETCH_HEAD`, `MERGE_HEAD`, `CHERRY_PICK_HEAD`, `REVERT_HEAD`,
  /// `REBASE_HEAD`, `AUTO_MERGE`, `rebase-*/onto`, `ORIG_HEAD`, the remote-tracking refs after
  /// the command, then every ref and the last entries of HEAD's reflog and of the stash's as it
  /// started, a stash entry's untracked files too; a command whose `words` name `git stash
  /// apply` or `pop` (git_operation()) is compared even when it left git's state as it was:
  /// the untracked files an apply writes first are tracked nowhere). None: nothing is done and
  /// the result is empty.
  /// Otherwise the state is put back (files the command added are removed, changed ones
  /// rewritten, directories it made removed), then the files inside the workspace git had
  /// already written (policy::written_paths()) as the index before the command held them
  /// (put_back_files()), or, after a stash, those its reset rewrote as the entry saved them
  /// (put_back_stashed()), and the result is the line (without its `pi-sandbox: `) naming the
  /// paths and how to allow them, the exit status kGitPutBackExit the command gets, the files
  /// inside that could not be put back (a conversion may apply to them on checkout) with the
  /// `git checkout --` that does it, or the commit of the stash entry taken away (it stays as
  /// an object, so nothing saved is lost); when putting back fails, the line says so with the
  /// error. An index before or after the command whose entries cannot be read completely
  /// (policy::index_extent(): a split or sparse index) tells nothing of the files: after a
  /// command that changed it and moved HEAD or failed, or that stashed and failed, the state
  /// is put back (with the shared index the index before named; those the command added
  /// removed) and the line says why and that the files are as the command left them.
  [[nodiscard]] std::string settle(bool failed, const std::vector<std::string>& words = {}) const;

  /// After a failed command that settle() put nothing back for: when `words` name a git
  /// operation (git_operation()), or name none but the command rewrote `FETCH_HEAD` and wrote
  /// `ORIG_HEAD` (a pull run by a script), whose target commit differs from HEAD outside the
  /// workspace,
  /// the line (without its `pi-sandbox: `) naming those paths (at most kStoppedPathsShown,
  /// then `and N more`) and how to allow them; empty otherwise. The target is, for `pull`,
  /// `FETCH_HEAD` when the command wrote it; for merge, rebase, reset and cherry-pick the
  /// argument when it is a ref or object name with `^`/`~` suffixes only (`git rev-parse
  /// --verify --end-of-options <word>^{commit}`, gitrevisions(7)), compared with HEAD; for
  /// `stash apply` and `stash pop` the entry (`stash@{n}`, `n`) as `logs/refs/stash` names it,
  /// compared with its first parent; nothing else is resolved. One rev-parse and one `git
  /// diff-tree` at most, with the put-back's isolated git runs (never a
  /// `git` the command could write, no repository that borrows or links objects); nothing is
  /// written and the command keeps its exit status (docs/security.md, "Repositories around the
  /// workspace").
  [[nodiscard]] std::string stopped_line(const std::vector<std::string>& words) const;

  /// After a command that exited 0: whether the git operation its words name (as for
  /// stopped_line()) cannot have completed, its exit status hidden by the shell (`git stash |
  /// tail -3`, `git rebase other; true`): HEAD is where it was, git left a mark of trying
  /// (ORIG_HEAD written during the command, the stash's reflog changed, or a tracked file of
  /// the workspace changed), and the operation's move changes paths outside the workspace,
  /// which are read-only here. The caller then settles the command as a failed one. Runs the
  /// git of stopped_line() only when HEAD stayed and git left such a mark.
  [[nodiscard]] bool hidden_stop(const std::vector<std::string>& words) const;

 private:
  fs::path root_;                                   ///< the working tree's root
  fs::path git_dir_;                                ///< its git directory
  std::string inside_;                              ///< the workspace, relative to root_
  std::map<std::string, std::string> files_;        ///< relative to git_dir_: content
  std::set<std::string> dirs_;                      ///< relative to git_dir_
  std::set<std::string> shared_indexes_;            ///< the `sharedindex.*` names there were
  std::vector<fs::path> writable_;                  ///< what the command can write
  std::vector<fs::path> protected_;                 ///< never written by the put-back
  std::vector<policy::ProtectedPattern> patterns_;  ///< nor what these match
  /// The tracked files of the workspace (stage 0, a file or symlink; relative to root_) as
  /// the command started: lstat(2)'s stamp, nullopt when missing. Empty beyond
  /// kStampedFilesBound.
  std::map<std::string, std::optional<FileStamp>> stamps_;
  struct timespec started_ {};  ///< when the snapshot was taken (CLOCK_REALTIME_COARSE)

  /// What git left half done: the paths outside the workspace it could not change, and those
  /// inside it already wrote (relative to root_).
  struct HalfDone {
    std::vector<std::string> outside;
    std::vector<std::string> inside;
    std::string stash;  ///< the commit of the stash entry put back, or empty
    /// Changed files inside that were not compared with what git was writing (bounds).
    std::vector<std::string> unchecked;
    /// Why the index before or after the command cannot be read completely
    /// (policy::IndexExtent::incomplete), or empty: then nothing can be told of the files.
    std::string unreadable;
  };
  /// Puts the state back for an index that cannot be read completely; the line.
  [[nodiscard]] std::string settle_unreadable(const std::string& why) const;
  [[nodiscard]] HalfDone half_done(bool failed, bool applies_stash) const;
  /// What an operation that stopped before it changed HEAD or the index had written inside
  /// (`applies_stash`: the command named `git stash apply` or `pop`).
  [[nodiscard]] HalfDone unfinished(bool applies_stash) const;
  /// The commits the command may have been moving to, most likely first (hexadecimal).
  /// `with_stash`: the stash's entries too (`refs/stash` and its reflog's newest, with their
  /// untracked files), for an apply or pop that cannot have completed.
  [[nodiscard]] std::vector<std::string> targets(bool with_stash) const;
  /// The files to put back, with the index before the command (`before`, when it is read).
  [[nodiscard]] PackageFiles package_files(std::vector<policy::GitIndexEntry> before,
                                           std::vector<std::string> written) const;
  /// Whether HEAD, the branch it names or `packed-refs` changed since the snapshot.
  [[nodiscard]] bool head_moved() const;
  /// The paths (relative to root_) outside the workspace where the move of the operation
  /// `words` name differs (stopped_line()), and whether a fetch of the command brought its
  /// target; nullopt when there is no such operation, move or path.
  struct Outside {
    std::vector<std::string> paths;
    bool fetched = false;
  };
  [[nodiscard]] std::optional<Outside> outside_of_move(const std::vector<std::string>& words) const;
  /// Where a split index's shared index is read from: as the command started (files_), or
  /// the git directory now.
  enum class SharedFrom { Start, Now };
  /// Every entry of the index `bytes`, a split index's merged with those of the shared index
  /// its link names (policy::split_index_entries(), read from `from`); or why they cannot all
  /// be read (policy::IndexExtent::incomplete, and for a split index why its shared index
  /// cannot be: missing, too large, or not the one git wrote with it).
  [[nodiscard]] std::expected<std::vector<policy::GitIndexEntry>, std::string> whole_entries(
      const std::string& bytes, SharedFrom from) const;
  /// whole_entries(), or else the entries the index holds as far as they go (a sparse index's).
  [[nodiscard]] std::vector<policy::GitIndexEntry> readable_entries(const std::string& bytes,
                                                                    SharedFrom from) const;
  [[nodiscard]] core::Result<void> restore() const;
};

}  // namespace pisandbox::sandbox::linux_
