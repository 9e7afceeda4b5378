// pisandbox::sandbox::linux_ — the guard: protected names that do not exist yet, and the git
// configuration of the repositories a command may write (docs/security.md, "The guard").
//
// A missing protected name (`.vscode`, `.mcp.json`, `.git/hooks`, `.claude/commands`, ...) is
// not held by a placeholder: the supervisor watches, with inotify(7), every existing directory
// on the way to it (the writable root first, deeper ones as they appear, with a new check
// after each new watch and after a queue overflow), and the moment the name appears it is
// moved to the quarantine (sandbox/linux/quarantine.hpp). `<git dir>/config` and
// `config.worktree` stay writable but are guarded by content: a change that adds a key that
// makes a host git run a program or read another file (policy/git_config_guard.hpp) is undone
// at once: the previous content put back, the attempted one quarantined. An undo or a move
// that cannot be done (a full disk) makes the file inert in place and stops the command.
//
// The supervisor also knows everything the command changed below the writable roots: every
// directory there is watched (those that existed at the start up to a bound, breadth-first;
// every one made or moved in during the command as it appears, walked at once), and each entry
// made or changed goes through git's discovery rules (gitrepository-layout(5): a `.git`
// directory or `gitdir:` file, `commondir`, a directory that becomes a git directory): the
// repository it designates has its hooks quarantined and its configuration cleaned, only for
// what the command changed, compared with the start. A regular file with S_ISUID or S_ISGID
// loses them. The same checks run after the command (a walk of the writable roots when events
// were lost), and in pid 1 when the supervisor has died, so nothing guarded survives whatever
// happens.
//
// Every walk starts from a descriptor of the writable root (a mount point inside the sandbox,
// which a command cannot rename) and never follows a symlink: a symlink made on the way to a
// guarded name is itself what is quarantined. A move never leaves the directory the guard
// holds, so a command cannot make the guard move a host file it could not reach itself.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/unique_fd.hpp"
#include "policy/git_config_guard.hpp"
#include "sandbox/linux/mount_plan.hpp"
#include "sandbox/linux/quarantine.hpp"

namespace pisandbox::sandbox::linux_ {

/// A git configuration file guarded by content.
///   path: `<git dir>/config` or `<git dir>/config.worktree`, or `.gitmodules` at the root of a
///     working tree (absolute, without symlinks);
///   base: the writable mount root that contains it;
///   file: which allowlist applies (policy::GitConfigFile; `.gitmodules`: gitmodules(5)).
struct GuardedConfig {
  fs::path path;
  fs::path base;
  policy::GitConfigFile file = policy::GitConfigFile::Config;

  friend bool operator==(const GuardedConfig&, const GuardedConfig&) = default;
};

/// Entries of a writable root protected by a name pattern (policy::ProtectedPattern): what a
/// command creates there whose name matches is moved to the quarantine, as for a GuardedName.
///   dir: the writable root (a mount point inside the sandbox); pattern: `*<suffix>`
///   (policy::matches_name_pattern()); why: the protection's reason (`dangerous-file`);
///   existing: the matching entries the scan found when the command started, which the mount
///   plan binds read-only: not the command's, never moved.
struct GuardedPattern {
  fs::path dir;
  std::string pattern;
  std::string why;
  std::vector<std::string> existing = {};

  friend bool operator==(const GuardedPattern&, const GuardedPattern&) = default;
};

/// A repository's index, read after the command when it changed: the nested repositories a
/// command registered there as gitlinks are cleaned like repositories it created (host `git
/// status` runs git in each, with its configuration).
///   index: `<git dir>/index`; worktree_root: where the index's paths start; base: the
///   writable mount root that contains the index.
struct GuardedIndex {
  fs::path index;
  fs::path worktree_root;
  fs::path base;

  friend bool operator==(const GuardedIndex&, const GuardedIndex&) = default;
};

/// The directories below the writable roots that the supervisor watches from the start: 1 024,
/// breadth-first (about 23 microseconds of CPU each: the bench's 100 000-file workspace holds
/// 4 175; docs/benchmarks.md gives the cost). Past it, what a command makes in a directory that
/// existed before is not seen (docs/security.md, "What is not protected").
inline constexpr std::size_t kStartWatchBound = 1024;

/// What the guard watches, computed before the clone (pure data; runner.cpp).
///   names: missing protected names (MountPlan::guarded);
///   configs: the git configuration files of the repositories known before the command;
///   workspace: scanned (policy::scan_workspace) after the command for new repositories;
///   known_git_dirs: the git directories known before the command (not "new" afterwards);
///   quarantine: the quarantine root (default_quarantine_root()).
///   leftover_placeholders: see below.
struct GuardPlan {
  std::vector<GuardedName> names;
  std::vector<GuardedConfig> configs;
  fs::path workspace;
  std::vector<fs::path> known_git_dirs;
  fs::path quarantine;
  /// The indexes of the repositories known before the command (workspace, nested, around it).
  std::vector<GuardedIndex> indexes = {};
  /// Where the command can write (the workspace, read-write binds, writable entries of the
  /// home): a gitlink's repository elsewhere is not the command's.
  std::vector<fs::path> writable_roots = {};
  /// Marked placeholders at protected paths (a strict sandbox killed before it removed them):
  /// removed when the guard starts, unless a running strict sandbox holds them.
  std::vector<fs::path> leftover_placeholders = {};
  /// Names by pattern at writable roots (docs/security.md, "Names that host programs run"),
  /// in either protection mode.
  std::vector<GuardedPattern> patterns = {};
  /// How many directories that exist when the command starts the supervisor watches below the
  /// writable roots (breadth-first, all roots sharing the budget); every directory made or
  /// moved in during the command is watched besides, without a bound (docs/security.md, "The
  /// guard").
  std::size_t start_watch_bound = kStartWatchBound;

  friend bool operator==(const GuardPlan&, const GuardPlan&) = default;
};

/// The guard's open(2)s: tried again while they fail for lack of descriptors or memory (EMFILE,
/// ENFILE, ENOMEM: 6 tries, 20 ms apart, 100 ms in all), and the first that still fails for that
/// reason kept in `failure`: the check it served was not made (Guard::failure()).
struct GuardOpener {
  std::optional<core::Error> failure;
  /// openat(2) of `name` in `dir` (`shown`: the path, for the message); -1 with errno set on
  /// failure. Once `failure` is set, tried once only.
  int open(int dir, const char* name, int flags, const fs::path& shown, mode_t mode = 0);
};

/// The line for the user when a last sweep could not check everything (Guard::failure()).
std::string incomplete_sweep(const core::Error& failure);

/// The git directory a `.git` file designates (gitrepository-layout(5), ".git": a file holding
/// `gitdir: <path>`; git's read_gitfile() in setup.c): `content` is the file's bytes, `dir` the
/// directory holding the file, against which a relative path resolves. Lexical (no symlink is
/// followed); nullopt when `content` does not start with `gitdir:` or names nothing.
std::optional<fs::path> gitfile_target(std::string_view content, const fs::path& dir);

/// Clears S_ISUID and S_ISGID of the regular file `name` in the directory `dir_fd` (`shown`:
/// its path, for the error), through a descriptor opened with O_NOFOLLOW (chmod(2) on
/// /proc/self/fd of an O_PATH one when the file cannot be opened for reading): the host mounts
/// the workspace without nosuid (docs/security.md, "The guard"). Returns the mode bits cleared
/// (0: none were set, or it is not a regular file). Errors: the open(2) or fchmod(2) failing
/// (EACCES, EPERM, ETXTBSY), naming the call, the path and errno.
core::Result<mode_t> clear_privilege_bits(int dir_fd, const std::string& name,
                                          const fs::path& shown);

/// The deepest of `roots` that contains `path` (is_within), or empty.
fs::path deepest_root(const fs::path& path, const std::vector<fs::path>& roots);

/// The guard of one command.
class Guard {
 public:
  /// Whether to watch (the supervisor) or only check when asked (pid 1's last sweep).
  enum class Watch { No, Yes };

  /// When the supervisor's first check (first_check()) runs: in start(), or later, when the
  /// caller knows the plan holds (a command held at a gate, RunOptions::gate: until then
  /// nothing on the host is moved or removed for a plan that may be stale).
  enum class FirstCheck { AtStart, Later };

  /// Opens the writable roots, reads the guarded configurations' current content and, with
  /// Watch::Yes, watches every existing directory on the way to a guarded name; then, with
  /// FirstCheck::AtStart, first_check(). `quarantine` is moved in. Errors: inotify_init1(2)
  /// failing (EMFILE); an open(2) of that first check failing for lack of descriptors or
  /// memory (failure()).
  static core::Result<Guard> start(const GuardPlan& plan, Quarantine quarantine, Watch watch,
                                   FirstCheck first = FirstCheck::AtStart);

  /// The supervisor's first check (Watch::Yes only): the placeholders a killed strict sandbox
  /// left behind removed, and every guarded name checked once (one made between the plan and
  /// the watch). Its failure is failure().
  void first_check();

  Guard(Guard&&) = default;
  Guard& operator=(Guard&&) = default;
  ~Guard() = default;

  /// Stops watching (the command has ended: pid 1 sweeps what is left). Removing the watches
  /// early lets the kernel's grace period for their marks run meanwhile, instead of inside the
  /// last close of the instance.
  void stop_watching();

  /// The inotify descriptor to poll for POLLIN (-1 without watches).
  [[nodiscard]] int fd() const { return inotify_.get(); }

  /// Reads the pending events and checks what they may concern. Never blocks.
  void on_events();

  /// The last check, after the command (or in pid 1 once every process of the sandbox is
  /// gone): every guarded name and configuration, a malformed configuration undone too, then
  /// the repositories the command created (found by the bounded workspace scan). failure() is
  /// cleared first: afterwards it says whether this sweep could check everything.
  void final_sweep();

  /// The supervisor's last look at what the command changed, once every process of the sandbox
  /// is gone and pid 1 has swept the guarded names: the pending events, then git's discovery
  /// rules and the privilege bits for every entry created or changed (a walk of the writable
  /// roots instead when knowledge was lost: a queue overflow or a watch that could not be added),
  /// then the gitlinks. Part of final_sweep().
  void final_discovery();

  /// pid 1, when the supervisor has died: its last sweep cannot know what changed, so it walks
  /// every writable root for entries changed since the start (their ctime), without a bound.
  void mark_blind() { blind_ = true; }

  /// Why a check was not made, once one was not: an open(2) of what it had to check failed with
  /// EMFILE, ENFILE or ENOMEM, tried again for 100 ms (GuardOpener); or an undo or a quarantine
  /// could not be done (a full disk: `write(<ws>/.git/.pi-sandbox-restore-1a2b3c4d): ENOSPC`),
  /// and the file was made inert in place instead (rewritten in its own blocks, emptied or
  /// renamed; the line says which). The guard fails closed: the supervisor stops the command
  /// (its last sweep runs after it), pid 1 says its last sweep was incomplete
  /// (docs/security.md, "The guard", "Fail closed"). nullopt while every check was made.
  [[nodiscard]] const std::optional<core::Error>& failure() const { return opener_.failure; }

  /// The lines for the user gathered since the last call (describe_quarantined() and the
  /// configuration reports), in order.
  std::vector<std::string> take_notices();

  /// The quarantine as pid 1 inherits it: the descriptor (the root's, or its deepest existing
  /// ancestor's) and the components still to make below it.
  [[nodiscard]] int quarantine_fd() const { return quarantine_descriptor(quarantine_); }
  [[nodiscard]] std::vector<std::string> quarantine_missing() const {
    return quarantine_.root ? std::vector<std::string>{} : quarantine_.missing;
  }

 private:
  struct Config {
    GuardedConfig where;
    std::optional<std::string> accepted;    ///< the last accepted content (nullopt: absent)
    policy::GitConfigScan start_scan;       ///< what the file held when the command started
    std::optional<std::string> start = {};  ///< that content (nullopt: absent or unreadable)
    mode_t start_mode = 0644;               ///< its mode then
  };

  Guard(const GuardPlan& plan, Quarantine quarantine)
      : plan_(plan), quarantine_(std::move(quarantine)) {}

  void check_all();
  /// Reads `where`'s content as the command starts and guards it by content from then on.
  void guard_config(const GuardedConfig& where);
  /// Walks from the base to the parent of `path`, watching each directory (the part walked
  /// before taken from walked_ while it is kept); returns the parent's descriptor, or an
  /// invalid one when the way is missing (or was quarantined).
  core::UniqueFd walk_to_parent(const fs::path& base, const fs::path& path,
                                bool watch_missing_name);
  void check_name(const GuardedName& name);
  /// Moves every entry of the pattern's directory whose name matches it.
  void check_pattern(const GuardedPattern& pattern);
  /// Whether an event's name concerns a guarded name, a configuration or a pattern.
  bool relevant_name(const std::string& name) const;
  void check_config(Config& config, bool final);
  /// One attempt; false when the file was replaced while it was being undone.
  bool check_config_once(Config& config, bool final);
  void check_gitlinks();
  fs::path writable_root_of(const fs::path& path) const;
  /// Watches the directory `dir_fd` (at `path` below the writable root `base`: empty when its
  /// events only concern guarded names) for the events of `mask`; returns the watch descriptor
  /// (-1 without one).
  int watch(int dir_fd, const fs::path& path = {}, const fs::path& base = {},
            std::uint32_t mask = 0);

  // Complete knowledge of what the command changed.
  /// Watches the directories below the writable roots that exist now, breadth-first, up to
  /// plan_.start_watch_bound, and notes which of them are git directories.
  void watch_start_trees();
  /// Watches the directory `dir` made or moved in during the command and everything below it,
  /// each entry noted as changed.
  void watch_new_tree(const fs::path& dir, const fs::path& base);
  /// Reads the pending events: entries noted as changed, new directories watched. Returns
  /// whether one may concern a guarded name or configuration.
  bool drain_events();
  /// The directory or file `path` below `base`, opened with openat2(2) RESOLVE_BENEATH and
  /// RESOLVE_NO_SYMLINKS (invalid when it cannot be).
  core::UniqueFd open_below(const fs::path& base, const fs::path& path, int flags);
  void note_changed(const fs::path& path, const fs::path& base);
  /// Applies the rules to every entry noted since the last call.
  void inspect_pending(bool final);
  void inspect(const fs::path& path, const fs::path& base);
  void add_candidate(const fs::path& dir, bool designated);
  /// The writable roots walked whole: every entry whose ctime is not before the start is noted
  /// as changed (knowledge lost, or pid 1 without the supervisor).
  void walk_changed_since_start();
  /// Git's discovery rules for one directory that may be a git directory.
  void settle_repository(const fs::path& git_dir, bool designated, bool final);
  /// Quarantines the hooks (but git's samples) of `common_dir`, all of them with `all_hooks`,
  /// else those the command made or changed; cleans each configuration of `configs` whole
  /// (true) or only when the command changed it (false).
  /// Rewrites the git configuration `path` without what the git configuration guard flags
  /// (the original to the quarantine), unless a writer replaced it meanwhile (read again).
  void clean_config(const fs::path& path, bool final, const std::string& origin);
  void clean_repository(const fs::path& common_dir, bool all_hooks,
                        const std::vector<std::pair<fs::path, bool>>& configs, bool final,
                        const std::string& origin);
  /// Whether `path` (the entry of `parent_fd` named by its last component) is an empty, marked
  /// placeholder of a strict sandbox that still runs (watched from then on).
  bool held_placeholder(int parent_fd, const fs::path& path);
  void move_out(int parent_fd, const std::string& name, const fs::path& original,
                const std::string& why);
  /// The file a configuration check read: what is not a regular file, or its device and inode.
  struct ReadFile {
    bool not_regular;
    dev_t dev;
    ino_t inode;
  };
  /// When a configuration could not be put back by a new file (`cause`): makes it inert in
  /// place (rewritten to `restore` in its own blocks, emptied, or renamed) and fails closed;
  /// returns what was done, for the line.
  std::string undo_in_place(Config& config, int parent_fd, const ReadFile& read,
                            const std::optional<std::string>& restore, const core::Error& cause);
  /// Keeps `error` as failure() (the first only): the supervisor stops the command
  /// (docs/security.md, "The guard", "Fail closed").
  void fail_closed(core::Error error);
  int base_fd(const fs::path& base);

  GuardPlan plan_;
  Quarantine quarantine_;
  GuardOpener opener_;
  /// A directory walk_to_parent() has opened (O_PATH), with the device and inode it had.
  struct Walked {
    core::UniqueFd fd;
    dev_t dev = 0;
    ino_t ino = 0;
  };
  /// The directories walk_to_parent() has opened, by path, kept while a sweep runs (first_check(),
  /// before the command; final_sweep(), once the command's processes are gone) so that the
  /// guarded names of one directory share its walk: at most kMaxWalked of them (each holds a
  /// descriptor), each taken again only while its name in its parent is still it (the same
  /// device and inode: another guard may move it meanwhile), all dropped at the sweep's first
  /// move or undo. nullopt: every walk starts from its base.
  std::optional<std::map<fs::path, Walked>> walked_;
  static constexpr std::size_t kMaxWalked = 64;
  /// In start(): a symlink found on the way is not moved then (the first check, or pid 1's last
  /// sweep, moves it): until the first check nothing on the host is changed for a plan that may
  /// be stale (FirstCheck::Later).
  bool starting_ = false;
  core::UniqueFd inotify_;
  std::vector<Config> configs_;
  struct GitIndexState {
    GuardedIndex where;
    std::optional<struct stat> start;  ///< as the command started (nullopt: none then)
  };
  std::vector<GitIndexState> indexes_;
  std::map<fs::path, core::UniqueFd> bases_;
  std::map<std::pair<dev_t, ino_t>, int> watched_;  ///< each watched inode, its watch
  std::map<int, std::pair<dev_t, ino_t>> watch_inodes_;
  std::set<std::string> relevant_names_;
  std::set<int> placeholder_watches_;
  std::vector<std::string> notices_;
  bool watch_failed_ = false;
  bool watching_ = true;

  /// A watched directory: where it is (updated when it moves within the watched tree) and the
  /// events asked for.
  struct WatchedDir {
    fs::path path;
    fs::path base;
    std::uint32_t mask = 0;
  };
  std::map<int, WatchedDir> watch_dirs_;
  /// Whether the supervisor watches the writable roots' trees (Watch::Yes with writable roots).
  bool tree_ = false;
  /// A queue overflow or a new directory left unwatched: the last sweep walks instead.
  bool knowledge_lost_ = false;
  bool blind_ = false;
  /// When the guard started (CLOCK_REALTIME_COARSE, the clock of ctime).
  struct timespec start_time_ {};
  /// Every entry created or changed during the command, and those not yet inspected.
  std::unordered_set<std::string> changed_;
  bool changed(const fs::path& path) const { return changed_.contains(path.native()); }
  std::vector<std::pair<fs::path, fs::path>> pending_;
  /// Directories that may be git directories (true: the command designated them: made them,
  /// or wrote the `.git`, `commondir`, `objects` or `refs` that makes git use them).
  std::map<fs::path, bool> candidates_;
  std::map<fs::path, bool> all_candidates_;
  bool start_walk_ = false;
  /// The directories walked when the guard started, and which of them were git directories.
  std::set<fs::path> start_dirs_;
  std::set<fs::path> start_git_dirs_;
};

}  // namespace pisandbox::sandbox::linux_
