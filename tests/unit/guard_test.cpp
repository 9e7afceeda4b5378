// The guard (sandbox/linux/guard.hpp) and the quarantine (quarantine.hpp) on a scratch
// directory: what is moved, what is never touched, what a symlink can and cannot make the guard
// do (docs/security.md, "The guard").
#include "sandbox/linux/guard.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "require.hpp"
#include "sandbox/linux/runner.hpp"

namespace pisandbox::sandbox::linux_ {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

struct Scratch {
  Scratch() {
    char name[] = "/tmp/pi-sandbox-guard-test.XXXXXX";
    root = ::mkdtemp(name);
    ws = root / "ws";
    fs::create_directories(ws);
    outside = root / "outside";
    fs::create_directories(outside);
  }
  ~Scratch() { fs::remove_all(root); }
  fs::path root, ws, outside;
  fs::path quarantine() const { return root / "home/.local/state/pi-sandbox/quarantine"; }

  GuardPlan plan(std::vector<std::string> names) const {
    GuardPlan plan;
    for (const auto& n : names) plan.names.push_back({ws / n, ws, "dangerous-file"});
    plan.workspace = ws;
    plan.writable_roots = {ws};
    plan.quarantine = quarantine();
    return plan;
  }
  Guard start(const GuardPlan& plan) const {
    fs::create_directories(root / "home");
    auto q = open_quarantine(plan.quarantine);
    EXPECT_TRUE(q.has_value()) << q.error().describe();
    auto g = Guard::start(plan, std::move(*q), Guard::Watch::Yes);
    EXPECT_TRUE(g.has_value()) << g.error().describe();
    return std::move(*g);
  }
};

TEST(Guard, NothingIsMadeOnTheHostWhenNothingIsCreated) {
  Scratch s;
  Guard guard = s.start(s.plan({".mcp.json", ".claude/commands"}));
  guard.on_events();
  guard.final_sweep();
  EXPECT_EQ(guard.take_notices(), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(s.root / "home/.local"));
  EXPECT_TRUE(fs::is_empty(s.ws));
}

TEST(Guard, ANameCreatedIsMovedOnTheEventAndReportedWithItsId) {
  Scratch s;
  Guard guard = s.start(s.plan({".mcp.json"}));
  write(s.ws / ".mcp.json", "{}\n");
  write(s.ws / "ordinary.txt", "kept\n");
  guard.on_events();
  EXPECT_FALSE(fs::exists(s.ws / ".mcp.json"));
  EXPECT_EQ(read(s.ws / "ordinary.txt"), "kept\n");
  const auto entries = list_quarantine(s.quarantine());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].original, s.ws / ".mcp.json");
  EXPECT_EQ(entries[0].why, "a guarded name: dangerous-file");
  EXPECT_EQ(read(entries[0].stored), "{}\n");
  EXPECT_EQ(guard.take_notices(),
            std::vector<std::string>{"moved " + (s.ws / ".mcp.json").string() +
                                     " to the quarantine (a guarded name: dangerous-file); "
                                     "restore with: pi-sandbox quarantine restore " +
                                     entries[0].id});
  EXPECT_EQ(fs::status(s.quarantine()).permissions() & fs::perms::all, fs::perms::owner_all);
}

// A name by pattern at the writable root (docs/security.md, "Names that host programs run"):
// every matching entry is moved on the event, the others stay; one made unseen is caught by the
// last sweep.
TEST(Guard, AnEntryMatchingAPatternIsMovedOnTheEvent) {
  Scratch s;
  GuardPlan plan = s.plan({});
  write(s.ws / "mine.code-workspace", "the user's own, found by the scan\n");
  plan.patterns = {{s.ws, "*.code-workspace", "dangerous-file", {"mine.code-workspace"}}};
  Guard guard = s.start(plan);
  EXPECT_EQ(guard.take_notices(), std::vector<std::string>{});
  write(s.ws / "x.code-workspace", "{\"tasks\": {}}\n");
  write(s.ws / "x.code-workspace.txt", "kept\n");
  fs::create_directory(s.ws / "sub");
  write(s.ws / "sub/y.code-workspace", "below the root: the scan's, read-only when it exists\n");
  guard.on_events();
  EXPECT_FALSE(fs::exists(s.ws / "x.code-workspace"));
  EXPECT_TRUE(fs::exists(s.ws / "x.code-workspace.txt"));
  EXPECT_TRUE(fs::exists(s.ws / "sub/y.code-workspace"));
  EXPECT_TRUE(fs::exists(s.ws / "mine.code-workspace"));
  auto entries = list_quarantine(s.quarantine());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].original, s.ws / "x.code-workspace");
  EXPECT_EQ(guard.take_notices(),
            std::vector<std::string>{"moved " + (s.ws / "x.code-workspace").string() +
                                     " to the quarantine (a guarded name: dangerous-file); "
                                     "restore with: pi-sandbox quarantine restore " +
                                     entries[0].id});
  guard.stop_watching();
  fs::create_directory(s.ws / "z.code-workspace");
  guard.final_sweep();
  EXPECT_FALSE(fs::exists(s.ws / "z.code-workspace"));
  EXPECT_EQ(guard.take_notices().size(), 1u);
}

// A parent made during the command is watched as it appears: the name below is caught.
TEST(Guard, ANameBelowAParentMadeLaterIsCaught) {
  Scratch s;
  Guard guard = s.start(s.plan({".claude/commands"}));
  fs::create_directory(s.ws / ".claude");
  guard.on_events();
  fs::create_directory(s.ws / ".claude/worktrees");
  fs::create_directory(s.ws / ".claude/commands");
  guard.on_events();
  EXPECT_FALSE(fs::exists(s.ws / ".claude/commands"));
  EXPECT_TRUE(fs::is_directory(s.ws / ".claude/worktrees"));
}

// The confused deputy: a symlink made on the way points outside the workspace; the guard
// moves the symlink, never what it points to.
TEST(Guard, ASymlinkOnTheWayIsMovedAndItsTargetNeverTouched) {
  Scratch s;
  Guard guard = s.start(s.plan({".claude/commands"}));
  write(s.outside / "commands/keep.md", "the host's own\n");
  fs::create_directory_symlink(s.outside, s.ws / ".claude");
  guard.on_events();
  guard.final_sweep();
  EXPECT_FALSE(fs::exists(fs::symlink_status(s.ws / ".claude")));
  EXPECT_EQ(read(s.outside / "commands/keep.md"), "the host's own\n");
  const auto entries = list_quarantine(s.quarantine());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_TRUE(fs::is_symlink(entries[0].stored));
}

/// pid 1's guard (no watch: it only sweeps at the end) for the names `names` of `s`'s workspace.
Guard start_unwatched(const Scratch& s, const std::vector<std::string>& names) {
  fs::create_directories(s.root / "home");
  auto q = open_quarantine(s.quarantine());
  EXPECT_TRUE(q.has_value()) << q.error().describe();
  auto g = Guard::start(s.plan(names), std::move(*q), Guard::Watch::No);
  EXPECT_TRUE(g.has_value()) << g.error().describe();
  return std::move(*g);
}

// The last sweep walks each directory on the way once for all the names below it; a symlink it
// finds on the way, made in a directory it walked for a name before (here the workspace), is
// moved (never followed) as when each name is walked from the root, and its target never
// touched.
TEST(Guard, TheLastSweepMovesASymlinkOnTheWayInADirectoryItWalkedBefore) {
  Scratch s;
  Guard guard = start_unwatched(s, {".mcp.json", ".claude/commands"});
  write(s.outside / "commands/keep.md", "the host's own\n");
  fs::create_directory_symlink(s.outside, s.ws / ".claude");
  guard.final_sweep();
  EXPECT_EQ(guard.failure(), std::nullopt);
  EXPECT_FALSE(fs::exists(fs::symlink_status(s.ws / ".claude")));
  EXPECT_EQ(read(s.outside / "commands/keep.md"), "the host's own\n");
  const auto entries = list_quarantine(s.quarantine());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_TRUE(fs::is_symlink(entries[0].stored));
  EXPECT_EQ(guard.take_notices().size(), 1u);
}

// A directory the last sweep walked for one name and then moved (it is a guarded name itself)
// is not walked again for the names after it: what it held goes with it, in one entry, and
// nothing is moved out of the quarantine.
TEST(Guard, TheLastSweepNeverWalksADirectoryItMovedForTheNamesAfter) {
  Scratch s;
  Guard guard = start_unwatched(s, {"d/absent", "d", "d/c"});
  write(s.ws / "d/c", "made by the command\n");
  guard.final_sweep();
  EXPECT_FALSE(fs::exists(s.ws / "d"));
  const auto entries = list_quarantine(s.quarantine());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].original, s.ws / "d");
  EXPECT_EQ(read(entries[0].stored / "c"), "made by the command\n");
  EXPECT_EQ(guard.take_notices().size(), 1u);
}

// After the command, the repositories it created lose their hooks, not their samples.
TEST(Guard, TheFinalSweepQuarantinesHooksOfNewRepositoriesButNotSamples) {
  Scratch s;
  Guard guard = s.start(s.plan({}));
  write(s.ws / "n/.git/hooks/post-checkout", "#!/bin/sh\n");
  write(s.ws / "n/.git/hooks/pre-commit.sample", "#!/bin/sh\n");
  write(s.ws / "n/.git/config",
        "[core]\n\tbare = false\n\tfsmonitor = touch x\n[user]\n\tname = k\n");
  guard.final_sweep();
  EXPECT_FALSE(fs::exists(s.ws / "n/.git/hooks/post-checkout"));
  EXPECT_TRUE(fs::exists(s.ws / "n/.git/hooks/pre-commit.sample"));
  EXPECT_EQ(read(s.ws / "n/.git/config"), "[core]\n\tbare = false\n[user]\n\tname = k\n");
  EXPECT_EQ(list_quarantine(s.quarantine()).size(), 2u);
}

// gitrepository-layout(5): `.git` as a file names the git directory, relative to the file's
// directory; git reads the first line only.
TEST(GitfileTarget, ResolvesAsGitDoes) {
  EXPECT_EQ(gitfile_target("gitdir: .x\n", "/ws/p"), fs::path("/ws/p/.x"));
  EXPECT_EQ(gitfile_target("gitdir:../.git/modules/a\r\n", "/ws/sub"),
            fs::path("/ws/.git/modules/a"));
  EXPECT_EQ(gitfile_target("gitdir: /abs/dir\nignored\n", "/ws"), fs::path("/abs/dir"));
  EXPECT_EQ(gitfile_target("gitdir:   \n", "/ws"), std::nullopt);
  EXPECT_EQ(gitfile_target("ref: refs/heads/main\n", "/ws"), std::nullopt);
}

// The privilege-bit sweep: S_ISUID and S_ISGID go, the rest of the mode stays; a file that
// cannot be opened for reading (4111) is changed through an O_PATH descriptor.
TEST(PrivilegeBits, AreClearedAndOnlyThey) {
  Scratch s;
  write(s.ws / "s", "#!/bin/sh\n");
  write(s.ws / "plain", "x\n");
  ASSERT_EQ(::chmod((s.ws / "s").c_str(), 06751), 0);
  ASSERT_EQ(::chmod((s.ws / "plain").c_str(), 0644), 0);
  core::UniqueFd dir(::open(s.ws.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  const auto cleared = clear_privilege_bits(dir.get(), "s", s.ws / "s");
  ASSERT_TRUE(cleared.has_value()) << cleared.error().describe();
  EXPECT_EQ(*cleared, static_cast<mode_t>(S_ISUID | S_ISGID));
  EXPECT_EQ(fs::status(s.ws / "s").permissions(), fs::perms(0751));
  EXPECT_EQ(clear_privilege_bits(dir.get(), "plain", s.ws / "plain").value_or(1), 0u);
  EXPECT_EQ(fs::status(s.ws / "plain").permissions(), fs::perms(0644));
  // Not readable by its owner: changed through its magic link.
  ASSERT_EQ(::chmod((s.ws / "s").c_str(), 04111), 0);
  if (::geteuid() != 0) {
    const auto unreadable = clear_privilege_bits(dir.get(), "s", s.ws / "s");
    ASSERT_TRUE(unreadable.has_value()) << unreadable.error().describe();
    EXPECT_EQ(fs::status(s.ws / "s").permissions(), fs::perms(0111));
  }
  // A symlink is never followed.
  ASSERT_EQ(::chmod((s.ws / "s").c_str(), 04755), 0);
  fs::create_symlink(s.ws / "s", s.ws / "link");
  EXPECT_EQ(clear_privilege_bits(dir.get(), "link", s.ws / "link").value_or(1), 0u);
  EXPECT_EQ(fs::status(s.ws / "s").permissions(), fs::perms(04755));
}

// A `.git` file made in a directory that appears during the command, however deep, designates
// a repository whose configuration is cleaned at once, before the command ends.
TEST(Guard, AGitFileDeepInANewDirectoryIsCleanedOnTheEvent) {
  Scratch s;
  Guard guard = s.start(s.plan({}));
  const fs::path deep = s.ws / "node_modules/a/b/c/d/e/f/g/h/i/j/k";
  fs::create_directories(deep / ".x/objects");
  fs::create_directories(deep / ".x/refs");
  write(deep / ".x/HEAD", "ref: refs/heads/main\n");
  write(deep / ".x/config", "[core]\n\tbare = false\n\tfsmonitor = touch x\n");
  write(deep / ".git", "gitdir: .x\n");
  guard.on_events();
  EXPECT_EQ(read(deep / ".x/config"), "[core]\n\tbare = false\n");
  const auto notices = guard.take_notices();
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_TRUE(notices[0].starts_with(
      "cleaned " + (deep / ".x/config").string() +
      " in a repository the command created: it set "
      "core.fsmonitor, which is not on the allowlist of keys that run nothing"))
      << notices[0];
}

// git checks `objects/` and `refs/` with access(2), through symlinks, and follows a `.git`
// symlink: both designate a repository as surely as the real thing.
TEST(Guard, SymlinksGitFollowsDesignateARepositoryToo) {
  Scratch s;
  Guard guard = s.start(s.plan({}));
  fs::create_directories(s.ws / "d");
  write(s.ws / "d/HEAD", "ref: refs/heads/main\n");
  fs::create_directory_symlink("/", s.ws / "d/objects");
  fs::create_directory_symlink("/", s.ws / "d/refs");
  write(s.ws / "d/config", "[core]\n\tfsmonitor = touch x\n");
  fs::create_directories(s.ws / "p/.y/objects");
  fs::create_directories(s.ws / "p/.y/refs");
  write(s.ws / "p/.y/HEAD", "ref: refs/heads/main\n");
  write(s.ws / "p/.y/config", "[core]\n\tfsmonitor = touch x\n");
  fs::create_directory_symlink(".y", s.ws / "p/.git");
  guard.final_sweep();
  EXPECT_EQ(read(s.ws / "d/config"), "[core]\n");
  EXPECT_EQ(read(s.ws / "p/.y/config"), "[core]\n");
}

// Knowledge lost (the event queue overflowed: the events of the repository below were dropped)
// makes the last sweep walk every writable root for what changed since the start.
TEST(Guard, AQueueOverflowMakesTheLastSweepWalk) {
  Scratch s;
  std::ifstream limit("/proc/sys/fs/inotify/max_queued_events");
  std::size_t max_events = 0;
  limit >> max_events;
  PI_SANDBOX_REQUIRE(max_events != 0 && max_events <= 100000,
                     "fs.inotify.max_queued_events is " << max_events << ", too many to overflow");
  fs::create_directories(s.ws / "flood");  // watched from the start: every file is an event
  Guard guard = s.start(s.plan({}));
  for (std::size_t i = 0; i <= max_events; ++i) write(s.ws / "flood" / std::to_string(i), "");
  fs::create_directories(s.ws / "p/.x/objects");
  fs::create_directories(s.ws / "p/.x/refs");
  write(s.ws / "p/.x/HEAD", "ref: refs/heads/main\n");
  write(s.ws / "p/.x/config", "[core]\n\tfsmonitor = touch x\n");
  write(s.ws / "p/.git", "gitdir: .x\n");
  guard.final_sweep();
  EXPECT_EQ(read(s.ws / "p/.x/config"), "[core]\n");
}

// pid 1 when the supervisor has died: it never watched, so its last sweep walks the writable
// roots for what changed since the start; without that it leaves what it cannot know about.
TEST(Guard, ABlindLastSweepWalksForWhatChanged) {
  Scratch s;
  fs::create_directories(s.root / "home");
  for (const bool blind : {false, true}) {
    const fs::path p = s.ws / (blind ? "blind" : "sighted");
    auto q = open_quarantine(s.quarantine());
    ASSERT_TRUE(q.has_value());
    auto guard = Guard::start(s.plan({}), std::move(*q), Guard::Watch::No);
    ASSERT_TRUE(guard.has_value()) << guard.error().describe();
    fs::create_directories(p / ".x/objects");
    fs::create_directories(p / ".x/refs");
    write(p / ".x/HEAD", "ref: refs/heads/main\n");
    write(p / ".x/config", "[core]\n\tfsmonitor = touch x\n");
    write(p / ".git", "gitdir: .x\n");
    if (blind) guard->mark_blind();
    guard->final_sweep();
    EXPECT_EQ(read(p / ".x/config"), blind ? "[core]\n" : "[core]\n\tfsmonitor = touch x\n");
  }
}

// Past the bound, a directory that existed at the start is not watched: what the command makes
// there is not seen (docs/security.md, "What is not protected"); below the bound it is.
TEST(Guard, TheStartBoundIsWhatItSays) {
  Scratch s;
  fs::create_directories(s.ws / "a/b");
  GuardPlan plan = s.plan({});
  plan.start_watch_bound = 2;  // the workspace and `a`
  Guard guard = s.start(plan);
  for (const char* dir : {"a", "a/b"}) {
    fs::create_directories(s.ws / dir / ".x/objects");
    fs::create_directories(s.ws / dir / ".x/refs");
    write(s.ws / dir / ".x/HEAD", "ref: refs/heads/main\n");
  }
  write(s.ws / "a/.x/config", "[core]\n\tfsmonitor = touch x\n");
  write(s.ws / "a/b/.x/config", "[core]\n\tfsmonitor = touch x\n");
  guard.final_sweep();
  EXPECT_EQ(read(s.ws / "a/.x/config"), "[core]\n");
  EXPECT_EQ(read(s.ws / "a/b/.x/config"), "[core]\n\tfsmonitor = touch x\n");
}

// A known repository's configuration: a dangerous change is undone, an ordinary one kept.
TEST(Guard, AGitConfigurationChangeIsUndoneOnlyWhenItAddsADangerousKey) {
  Scratch s;
  const std::string original = "[core]\n\tbare = false\n\teditor = vim\n";
  write(s.ws / ".git/config", original);
  GuardPlan plan = s.plan({});
  plan.configs = {{s.ws / ".git/config", s.ws}};
  plan.known_git_dirs = {s.ws / ".git"};
  Guard guard = s.start(plan);
  const std::string ordinary = original + "[remote \"origin\"]\n\turl = /r\n";
  write(s.ws / ".git/config", ordinary);
  guard.on_events();
  EXPECT_EQ(read(s.ws / ".git/config"), ordinary);
  write(s.ws / ".git/config", ordinary + "[alias]\n\tst = !touch x\n");
  guard.on_events();
  // Nothing else changed: the last accepted version comes back exactly.
  EXPECT_EQ(read(s.ws / ".git/config"), ordinary);
  // An ordinary change made alongside stays; the offending entry goes (its emptied section
  // header may stay: it names nothing).
  write(s.ws / ".git/config",
        ordinary + "[branch \"main\"]\n\tremote = origin\n[alias]\n\tst = !x\n");
  guard.on_events();
  EXPECT_EQ(read(s.ws / ".git/config"),
            ordinary + "[branch \"main\"]\n\tremote = origin\n[alias]\n");
  const auto notices = guard.take_notices();
  ASSERT_EQ(notices.size(), 2u);
  EXPECT_EQ(notices[0].rfind(
                "undid a change to " + (s.ws / ".git/config").string() +
                    ": it set alias.st, which is not on the allowlist of keys that run nothing; "
                    "the file is back without it; the attempted version is kept "
                    "in the quarantine: " +
                    s.quarantine().string() + "/",
                0),
            0u)
      << notices[0];
}

// A writer that truncates first (`cp`, `mv` across mounts) passes through an empty file: that
// must not become what is put back when the dangerous version lands.
TEST(Guard, AnEmptyIntermediateGitConfigurationIsNeverWhatComesBack) {
  Scratch s;
  const std::string original = "[core]\n\teditor = true\n[alias]\n\tco = checkout\n";
  write(s.ws / ".git/config", original);
  GuardPlan plan = s.plan({});
  plan.configs = {{s.ws / ".git/config", s.ws}};
  plan.known_git_dirs = {s.ws / ".git"};
  Guard guard = s.start(plan);
  write(s.ws / ".git/config", "");
  guard.on_events();
  write(s.ws / ".git/config", original + "[core]fsmonitor=touch /x\n");
  guard.on_events();
  EXPECT_EQ(read(s.ws / ".git/config"), original);
  guard.final_sweep();
  EXPECT_EQ(read(s.ws / ".git/config"), original);
}

/// Fills the process's descriptor table (its soft RLIMIT_NOFILE lowered to 256 meanwhile) until
/// open(2) fails with EMFILE, as a command holding the supervisor's descriptors through the
/// proxy would; release() gives them back.
struct DescriptorsExhausted {
  DescriptorsExhausted() {
    ::getrlimit(RLIMIT_NOFILE, &saved);
    rlimit low = saved;
    low.rlim_cur = std::min<rlim_t>(saved.rlim_cur, 256);
    ::setrlimit(RLIMIT_NOFILE, &low);
    for (int fd; (fd = ::dup(STDERR_FILENO)) >= 0;) fillers.push_back(fd);
    EXPECT_EQ(errno, EMFILE);
  }
  ~DescriptorsExhausted() { release(); }
  void release() {
    for (int fd : fillers) ::close(fd);
    fillers.clear();
    ::setrlimit(RLIMIT_NOFILE, &saved);
  }
  rlimit saved{};
  std::vector<int> fillers;
};

// The directories a sweep keeps walked are bounded (Guard::kMaxWalked): a workspace whose guarded
// names lie in hundreds of directories (`mkdir -p r{1..300}/.git`: each `.git/hooks` a guarded
// name) is swept with the descriptors a few walks hold, never all of them at once.
TEST(Guard, ASweepOverHundredsOfDirectoriesHoldsFewDescriptors) {
  Scratch s;
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) {
    const std::string dir = "r" + std::to_string(i);
    fs::create_directories(s.ws / dir / ".git");
    names.push_back(dir + "/.git/hooks");
  }
  Guard guard = start_unwatched(s, names);
  write(s.ws / "r299/.git/hooks/pre-commit", "#!/bin/sh\n");
  {
    DescriptorsExhausted exhausted;
    // 120 free: more than a few walks hold, fewer than the 600 directories on the way.
    for (int i = 0; i < 120 && !exhausted.fillers.empty(); ++i) {
      ::close(exhausted.fillers.back());
      exhausted.fillers.pop_back();
    }
    guard.final_sweep();
  }
  EXPECT_EQ(guard.failure(), std::nullopt);
  EXPECT_FALSE(fs::exists(s.ws / "r299/.git/hooks"));
  EXPECT_EQ(guard.take_notices().size(), 1u);
}

// While the guard starts, a symlink on the way to a guarded configuration is not moved: until the
// first check nothing on the host is changed (the plan may be stale: FirstCheck::Later). The
// first check moves it.
TEST(Guard, ASymlinkOnTheWayIsMovedByTheFirstCheckNotByTheStart) {
  Scratch s;
  fs::create_directories(s.outside / ".git");
  write(s.outside / ".git/config", "[core]\n");
  fs::create_directory_symlink(s.outside, s.ws / "sub");
  GuardPlan plan = s.plan({});
  plan.configs = {{s.ws / "sub/.git/config", s.ws}};
  fs::create_directories(s.root / "home");
  auto q = open_quarantine(plan.quarantine);
  ASSERT_TRUE(q.has_value());
  auto guard = Guard::start(plan, std::move(*q), Guard::Watch::Yes, Guard::FirstCheck::Later);
  ASSERT_TRUE(guard.has_value()) << guard.error().describe();
  EXPECT_TRUE(fs::is_symlink(s.ws / "sub"));
  EXPECT_EQ(guard->take_notices(), std::vector<std::string>{});
  guard->first_check();
  EXPECT_FALSE(fs::exists(fs::symlink_status(s.ws / "sub")));
  EXPECT_EQ(read(s.outside / ".git/config"), "[core]\n");
  EXPECT_EQ(guard->take_notices().size(), 1u);
}

// Out of descriptors, a check is not skipped silently: failure() names the open that failed, and
// the name stays for the last sweep, which moves it once descriptors are back.
TEST(Guard, ACheckThatCannotOpenWhatItChecksFailsClosed) {
  Scratch s;
  Guard guard = s.start(s.plan({".mcp.json"}));
  EXPECT_EQ(guard.failure(), std::nullopt);
  write(s.ws / ".mcp.json", "{}\n");
  {
    DescriptorsExhausted exhausted;
    guard.on_events();
  }
  ASSERT_TRUE(guard.failure().has_value());
  EXPECT_EQ(guard.failure()->code, EMFILE);
  EXPECT_EQ(guard.failure()->message,
            "openat(" + s.ws.string() + ", O_PATH): EMFILE (Too many open files)");
  EXPECT_TRUE(fs::exists(s.ws / ".mcp.json"));
  EXPECT_EQ(guard.take_notices(), std::vector<std::string>{});
  guard.final_sweep();
  EXPECT_EQ(guard.failure(), std::nullopt);  // this sweep could check everything
  EXPECT_FALSE(fs::exists(s.ws / ".mcp.json"));
  EXPECT_EQ(list_quarantine(s.quarantine()).size(), 1u);
}

// Descriptors that come back within the retries (the proxy closing connections on its thread):
// the check is made, nothing fails.
TEST(Guard, ACheckRetriesWhileDescriptorsComeBack) {
  Scratch s;
  Guard guard = s.start(s.plan({".mcp.json"}));
  write(s.ws / ".mcp.json", "{}\n");
  // The releasing thread starts before the descriptors run out: starting a thread then can
  // fail on its own (the sanitizers' runtime opens files).
  std::atomic<DescriptorsExhausted*> exhausted_at{nullptr};
  std::thread releaser([&] {
    while (exhausted_at.load() == nullptr) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    exhausted_at.load()->release();
  });
  {
    DescriptorsExhausted exhausted;
    exhausted_at = &exhausted;
    guard.on_events();
    releaser.join();
  }
  EXPECT_EQ(guard.failure(), std::nullopt);
  EXPECT_FALSE(fs::exists(s.ws / ".mcp.json"));
  EXPECT_EQ(list_quarantine(s.quarantine()).size(), 1u);
}

// Out of descriptors when the guard starts (the configuration's content at the start unread):
// it does not start.
TEST(Guard, AGuardThatCannotMakeItsFirstCheckDoesNotStart) {
  Scratch s;
  write(s.ws / ".git/config", "[core]\n\teditor = vi\n");
  GuardPlan plan = s.plan({".mcp.json"});
  plan.configs.push_back({s.ws / ".git/config", s.ws});
  fs::create_directories(s.root / "home");
  auto q = open_quarantine(plan.quarantine);
  ASSERT_TRUE(q.has_value());
  DescriptorsExhausted exhausted;
  auto guard = Guard::start(plan, std::move(*q), Guard::Watch::No);
  exhausted.release();
  ASSERT_FALSE(guard.has_value());
  EXPECT_EQ(guard.error().code, EMFILE);
  EXPECT_EQ(guard.error().message,
            "openat(" + s.ws.string() + ", O_PATH): EMFILE (Too many open files)");
}

TEST(Quarantine, RestoreRefusesToOverwriteAndMovesBackOnce) {
  Scratch s;
  fs::create_directories(s.root / "home");
  auto q = open_quarantine(s.quarantine());
  ASSERT_TRUE(q.has_value());
  write(s.ws / ".vscode/tasks.json", "{}\n");
  core::UniqueFd ws(::open(s.ws.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  auto entry = quarantine_move(*q, ws.get(), ".vscode", s.ws / ".vscode", "test");
  ASSERT_TRUE(entry.has_value()) << entry.error().describe();
  fs::create_directory(s.ws / ".vscode");
  auto refused = restore_quarantined(s.quarantine(), entry->id);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message, (s.ws / ".vscode").string() + " exists; nothing was restored");
  fs::remove(s.ws / ".vscode");
  ASSERT_TRUE(restore_quarantined(s.quarantine(), entry->id).has_value());
  EXPECT_EQ(read(s.ws / ".vscode/tasks.json"), "{}\n");
  EXPECT_FALSE(restore_quarantined(s.quarantine(), entry->id).has_value());
  EXPECT_FALSE(restore_quarantined(s.quarantine(), "../x").has_value());
  EXPECT_TRUE(list_quarantine(s.quarantine()).empty());
}

// A restore never goes through a directory put in place of the one the item came from.
TEST(Quarantine, RestoreRefusesADirectoryReplacedBySymlink) {
  Scratch s;
  fs::create_directories(s.root / "home");
  auto q = open_quarantine(s.quarantine());
  ASSERT_TRUE(q.has_value());
  write(s.ws / ".claude/commands/x.md", "x\n");
  core::UniqueFd claude(::open((s.ws / ".claude").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  auto entry = quarantine_move(*q, claude.get(), "commands", s.ws / ".claude/commands", "test");
  ASSERT_TRUE(entry.has_value()) << entry.error().describe();
  claude.reset();
  fs::remove_all(s.ws / ".claude");
  fs::create_directory_symlink(s.outside, s.ws / ".claude");
  auto refused = restore_quarantined(s.quarantine(), entry->id);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message,
            "the directory " + (s.ws / ".claude").string() +
                " is not the one it came from (it was replaced, perhaps by a symlink); nothing was "
                "restored");
  EXPECT_FALSE(fs::exists(s.outside / "commands"));
}

}  // namespace
}  // namespace pisandbox::sandbox::linux_

namespace pisandbox::sandbox::linux_ {
namespace {

// A quarantine the command could write would let it forge an entry that `quarantine restore`
// writes anywhere: such a workspace is refused (runner.cpp).
TEST(QuarantinePlace, WritableOnlyWhereTheCommandCouldWriteIt) {
  const fs::path q = "/h/u/.local/state/pi-sandbox/quarantine";
  policy::SandboxPolicy p;
  p.home = "/h/u";
  p.workspace = "/h/u/ws";
  p.writable = {{"/h/u/ws", "the workspace", policy::Access::ReadWrite}};
  EXPECT_FALSE(quarantine_writable_inside(p, q));
  p.workspace = "/h/u/.local/state";
  p.writable = {{"/h/u/.local/state", "the workspace", policy::Access::ReadWrite}};
  EXPECT_TRUE(quarantine_writable_inside(p, q));
  // The home itself: its dot-directories are read-only, its ordinary entries writable.
  p.workspace = "/h/u";
  p.writable = {{"/h/u", "the workspace", policy::Access::ReadWrite}};
  p.home_read_only = true;
  p.home_writable_entries = {"/h/u/projects"};
  EXPECT_FALSE(quarantine_writable_inside(p, q));
  EXPECT_TRUE(quarantine_writable_inside(p, "/h/u/projects/q"));
  // A configured writable directory that holds it.
  p.workspace = "/h/u/ws";
  p.home_read_only = false;
  p.home_writable_entries = {};
  p.writable = {{"/h/u/ws", "the workspace", policy::Access::ReadWrite},
                {"/h/u/.local", "filesystem.additionalAllowWrite", policy::Access::ReadWrite}};
  EXPECT_TRUE(quarantine_writable_inside(p, q));
}

}  // namespace
}  // namespace pisandbox::sandbox::linux_
