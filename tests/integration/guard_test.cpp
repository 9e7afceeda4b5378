// The guard (docs/security.md, "The guard"): protected names that do not exist yet
// are watched, not held by placeholders; what a command creates there goes to the quarantine;
// the git configuration is guarded by content. Against the real kernel, as root and as an
// unprivileged user.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "harness.hpp"

namespace pisandbox::testing {
namespace {

using namespace std::chrono_literals;

/// The paths of the `pi-sandbox: moved <path> to the quarantine (...)` lines of `err`, in
/// order, each with its id checked for shape.
std::vector<std::string> moved(const std::string& err) {
  static const std::regex line(
      R"(^pi-sandbox: moved (.+) to the quarantine \((.+)\); restore with: pi-sandbox quarantine restore ([0-9]{8}T[0-9]{6}Z-[0-9a-f]{8})$)");
  std::vector<std::string> paths;
  std::istringstream in(err);
  std::string text;
  std::smatch m;
  while (std::getline(in, text))
    if (std::regex_match(text, m, line)) paths.push_back(m[1]);
  return paths;
}

/// The entries of the scratch home's quarantine, as `pi-sandbox quarantine list --json`.
nlohmann::json quarantine_list(const Scratch& s) {
  const RunResult r = run_process({sandbox_binary(), "quarantine", "list", "--json"}, s.env());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

/// The id of the one quarantine entry whose original is `path` ("" if none or several).
std::string entry_for(const Scratch& s, const fs::path& path) {
  std::string id;
  int count = 0;
  for (const auto& e : quarantine_list(s))
    if (e.value("original", "") == path.string()) {
      id = e.value("id", "");
      ++count;
    }
  return count == 1 ? id : "";
}

fs::path quarantine_root(const Scratch& s) {
  return s.home / ".local/state/pi-sandbox/quarantine";
}

/// A trusted configuration with `filesystem.protection` set to strict.
fs::path strict_config(const Scratch& s) {
  const fs::path config = s.root / "strict.json";
  write_file(config, R"({"filesystem": {"protection": "strict"}})");
  return config;
}

bool have_git() {
  return run_process({"/bin/sh", "-c", "command -v git"}).exit_code == 0;
}

// Acceptance 1: nothing pi-sandbox made shows up, inside or on the host, and ordinary work on
// names near the protected ones just works.
TEST(Guard, AnEmptyWorkspaceShowsNothingPiSandboxMadeAndOrdinaryWorkWorks) {
  PI_SANDBOX_REQUIRE(have_git(), "git is not installed");
  Scratch s;
  ASSERT_EQ(run_process({"/bin/sh", "-c", "cd '" + s.ws.string() + "' && git init -q"}, s.env())
                .exit_code,
            0);
  write_file(s.ws / ".env.example", "A=1\n");
  // On the host while the command runs: the workspace as it was.
  const pid_t pid = spawn_process({sandbox_binary(), "run", "--cwd", s.ws.string(), "--", "/bin/sh",
                                   "-c", "touch started; sleep 2"},
                                  s.env());
  for (int i = 0; i < 300 && !fs::exists(s.ws / "started"); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(list_dir(s.ws), (std::vector<std::string>{".env.example", ".git", "started"}));
  EXPECT_EQ(wait_process(pid), 0);
  fs::remove(s.ws / "started");
  const RunResult r = s.run(
      "ls -A; git clean -fdxq; echo clean=$?; ls -A; echo A=1 > .env.example; "
      "cp .env.example .env && cat .env; mkdir -p .claude/worktrees && echo made");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, ".env.example\n.git\nclean=0\n.git\nA=1\nmade\n");
  EXPECT_EQ(moved(r.err), std::vector<std::string>{}) << r.err;
  EXPECT_EQ(list_dir(s.ws), (std::vector<std::string>{".claude", ".env", ".env.example", ".git"}));
  EXPECT_EQ(read_file(s.ws / ".env"), "A=1\n");
  EXPECT_FALSE(fs::exists(quarantine_root(s)));  // made on first use only
}

// Acceptance 2: each way of making a guarded name, and none of them survives the command.
TEST(Guard, GuardedNamesMadeAnyWayAreMovedToTheQuarantineAndReported) {
  Scratch s;
  write_file(s.ws / "elsewhere/tasks.json", "{}\n");
  write_file(s.ws / "linked.md", "x\n");
  const RunResult r = s.run(
      "mkdir .vscode && echo '{}' > .vscode/tasks.json; echo x > .mcp.json; "
      "mv elsewhere .idea; ln linked.md .gitconfig; mkdir -p sub/commands && ln -s sub .claude; "
      "sleep 0.3; echo done");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done\n");
  std::vector<std::string> got = moved(r.err);
  std::ranges::sort(got);
  const std::vector<std::string> want = {
      (s.ws / ".claude").string(), (s.ws / ".gitconfig").string(), (s.ws / ".idea").string(),
      (s.ws / ".mcp.json").string(), (s.ws / ".vscode").string()};
  EXPECT_EQ(got, want) << r.err;
  EXPECT_EQ(list_dir(s.ws), (std::vector<std::string>{"linked.md", "sub"}));
  EXPECT_EQ(read_file(s.ws / "linked.md"), "x\n");  // the other link of the hard link stays
  // Each item is in the quarantine, whole, with its record.
  const std::string idea = entry_for(s, s.ws / ".idea");
  ASSERT_FALSE(idea.empty());
  EXPECT_EQ(read_file(quarantine_root(s) / idea / ".idea/tasks.json"), "{}\n");
  const std::string claude = entry_for(s, s.ws / ".claude");
  ASSERT_FALSE(claude.empty());
  EXPECT_TRUE(fs::is_symlink(quarantine_root(s) / claude / ".claude"));
}

// Proxy connections held open cannot take the descriptors the guard needs (docs/security.md,
// "The guard": fail closed; escape attempt 135): under a limit of 512 descriptors the proxy
// closes every connection past 32 at once, says so once, and the guard still moves a name the
// moment it appears.
TEST(Guard, ProxyConnectionsPastTheCapLeaveTheGuardItsDescriptors) {
  Scratch s;
  const RunResult r =
      run_process({"/bin/sh", "-c", "ulimit -n 512 && exec \"$0\" \"$@\"", sandbox_binary(), "run",
                   "--no-prompt", "--cwd", s.ws.string(), "--", "/usr/bin/python3", "-c",
                   R"(import os, socket, time
port = int(os.environ["HTTP_PROXY"].rstrip("/").rsplit(":", 1)[1])
held = [socket.create_connection(("127.0.0.1", port), timeout=2) for _ in range(400)]
time.sleep(1)
open(".mcp.json", "w").write("{}")
time.sleep(0.5)
print("held", len(held), "live", os.path.exists(".mcp.json"))
)"},
                  s.env());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "held 400 live False\n") << r.err;
  EXPECT_EQ(moved(r.err), std::vector<std::string>{(s.ws / ".mcp.json").string()}) << r.err;
  const std::string capped =
      "pi-sandbox: network: closed connections past 32 open at once (or at descriptor 256), each "
      "at once: pi-sandbox keeps the rest of its descriptors for the guard, the approvals and the "
      "audit log\n";
  EXPECT_NE(r.err.find(capped), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(capped), r.err.rfind(capped)) << r.err;  // said once
}

// Restoring an entry puts it back, once; it never overwrites.
TEST(Guard, AQuarantinedEntryIsRestoredOnlyWhereNothingStands) {
  Scratch s;
  const RunResult r = s.run("echo '{\"servers\": {}}' > .mcp.json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(moved(r.err), std::vector<std::string>{(s.ws / ".mcp.json").string()}) << r.err;
  const std::string id = entry_for(s, s.ws / ".mcp.json");
  ASSERT_FALSE(id.empty());
  write_file(s.ws / ".mcp.json", "mine\n");
  const RunResult refused = run_process({sandbox_binary(), "quarantine", "restore", id}, s.env());
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.err, "pi-sandbox: " + (s.ws / ".mcp.json").string() +
                             " exists; nothing was restored\nhint: move it away first, or copy "
                             "what you need from " +
                             (quarantine_root(s) / id / ".mcp.json").string() + "\n");
  EXPECT_EQ(read_file(s.ws / ".mcp.json"), "mine\n");
  fs::remove(s.ws / ".mcp.json");
  const RunResult restored = run_process({sandbox_binary(), "quarantine", "restore", id}, s.env());
  EXPECT_EQ(restored.exit_code, 0) << restored.err;
  EXPECT_EQ(restored.out, "restored " + (s.ws / ".mcp.json").string() + "\n");
  EXPECT_EQ(read_file(s.ws / ".mcp.json"), "{\"servers\": {}}\n");
  EXPECT_FALSE(fs::exists(quarantine_root(s) / id));
  const RunResult again = run_process({sandbox_binary(), "quarantine", "restore", id}, s.env());
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_EQ(again.err, "pi-sandbox: no quarantine entry " + id + " in " +
                           quarantine_root(s).string() +
                           "\nhint: `pi-sandbox quarantine list` shows the entries\n");
}

// Acceptance 3: git configuration that would make host git run something is undone; the
// ordinary changes a remote workflow makes are kept.
TEST(Guard, GitConfigurationThatRunsProgramsIsUndoneAndOrdinaryChangesStay) {
  PI_SANDBOX_REQUIRE(have_git(), "git is not installed");
  Scratch s;
  const std::string setup =
      "cd '" + s.ws.string() +
      "' && git -c init.defaultBranch=main init -q && echo a > a && git add a && "
      "git -c user.name=t -c user.email=t@e commit -qm a && git init -q --bare remote.git";
  ASSERT_EQ(run_process({"/bin/sh", "-c", setup}, s.env()).exit_code, 0);
  const fs::path pwned = s.root / "pwned";
  const RunResult r = s.run("git config core.fsmonitor 'touch " + pwned.string() +
                            "1'; git config include.path ../evil; " +
                            "git config alias.st '!touch " + pwned.string() + "2'; sleep 0.2; " +
                            "git remote add origin " + (s.ws / "remote.git").string() +
                            " && git push -q -u origin main && git remote set-url origin " +
                            (s.ws / "remote.git").string() + " && echo pushed");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "pushed\n");
  // Each key is named in an undo line (two changes close together may share one).
  std::string undone;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("pi-sandbox: undid a change to " + (s.ws / ".git/config").string() +
                         ": it set "))
      undone += line.substr(0, line.find(", which git")) + "\n";
  for (const std::string key : {"core.fsmonitor", "include.path", "alias.st"})
    EXPECT_NE(undone.find(key), std::string::npos) << key << "\n" << r.err;
  const RunResult host = run_process(
      {"/bin/sh", "-c", "cd '" + s.ws.string() + "' && git status --porcelain; git st; true"},
      s.env());
  EXPECT_FALSE(fs::exists(pwned.string() + "1"));
  EXPECT_FALSE(fs::exists(pwned.string() + "2"));
  const std::string config = read_file(s.ws / ".git/config");
  // The entries are gone (an emptied section header may stay: it names nothing).
  EXPECT_EQ(config.find("fsmonitor"), std::string::npos) << config;
  EXPECT_EQ(config.find("../evil"), std::string::npos) << config;
  EXPECT_EQ(config.find("touch"), std::string::npos) << config;
  EXPECT_NE(config.find("[remote \"origin\"]"), std::string::npos) << config;
  EXPECT_NE(config.find("[branch \"main\"]"), std::string::npos) << config;
  // The attempted versions are kept, one per undo line.
  EXPECT_EQ(quarantine_list(s).size(), static_cast<std::size_t>(std::ranges::count(undone, '\n')));
}

// The allowlist (docs/security.md, "The git configuration guard"): what real workflows write
// into the configuration of a known repository stays, with no undo line; a key of a git
// extension and a key no program knows are taken out. (`git lfs install --local` also writes
// hooks, refused in the protected `.git/hooks`: `--skip-repo` writes only the configuration.)
TEST(Guard, GitConfigurationOfRealWorkflowsStaysAndKeysOffTheAllowlistGo) {
  PI_SANDBOX_REQUIRE(have_git(), "git is not installed");
  Scratch s;
  const std::string setup =
      "cd '" + s.ws.string() +
      "' && git -c init.defaultBranch=main init -q up && cd up && echo a > a && git add a && "
      "git -c user.name=t -c user.email=t@e commit -qm a && cd .. && "
      "git -c init.defaultBranch=main init -q sub && "
      "git -C sub -c user.name=t -c user.email=t@e commit -q --allow-empty -m s && "
      "git init -q --bare remote.git && git clone -q up proj";
  ASSERT_EQ(run_process({"/bin/sh", "-c", setup}, s.env()).exit_code, 0);
  const bool lfs = run_process({"/bin/sh", "-c", "command -v git-lfs"}, s.env()).exit_code == 0;
  const std::string ws = s.ws.string();
  const RunResult r = s.run(
      "set -e; cd proj; git config pull.rebase true; git remote add backup " + ws +
      "/remote.git; git push -q -u backup main; git branch -q --set-upstream-to=origin/main; "
      "git -c protocol.file.allow=always submodule -q add " +
      ws +
      "/sub sub; "
      "git worktree add -q ../wt; git config user.name me; git config push.autoSetupRemote true; " +
      (lfs ? "git lfs install --local --skip-repo >/dev/null; " : "") +
      "git -c user.email=t@e commit -qm sub; cd ..; git clone -q up clone2; "
      "git -c protocol.file.allow=always clone -q --recurse-submodules proj clone3; sleep 0.3; "
      "git -C proj config foo.bar x; sleep 0.3; "
      "git -C proj config lfs.extension.x.clean 'sh -c x'; echo done");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done\n") << r.err;
  std::string undone;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("pi-sandbox: undid a change to ")) undone += line + "\n";
  // The keys off the allowlist are named; nothing the workflows wrote is.
  for (const std::string key : {"foo.bar", "lfs.extension.x.clean"})
    EXPECT_NE(undone.find(key), std::string::npos) << key << "\n" << r.err;
  for (const std::string allowed : {"pull.", "remote.", "branch.", "submodule.", "user.", "push.",
                                    "filter.lfs", "lfs.repositoryformatversion", "core."})
    EXPECT_EQ(undone.find(allowed), std::string::npos) << allowed << "\n" << r.err;
  const std::string config = read_file(s.ws / "proj/.git/config");
  for (const std::string kept : {"rebase = true", "[remote \"backup\"]", "[branch \"main\"]",
                                 "[submodule \"sub\"]", "name = me", "autoSetupRemote = true"})
    EXPECT_NE(config.find(kept), std::string::npos) << kept << "\n" << config;
  if (lfs) {
    EXPECT_NE(config.find("git-lfs filter-process"), std::string::npos) << config;
  }
  // The entries are gone (an emptied section header may stay: it names nothing).
  EXPECT_EQ(config.find("bar = x"), std::string::npos) << config;
  EXPECT_EQ(config.find("sh -c x"), std::string::npos) << config;
  // The host's git works in what the workflows made.
  const RunResult host = run_process(
      {"/bin/sh", "-c",
       "cd '" + ws +
           "/proj' && git status --porcelain && git submodule status && "
           "git -C ../wt status --porcelain && git -C ../clone3/sub log --oneline | wc -l"},
      s.env());
  EXPECT_EQ(host.exit_code, 0) << host.err;
}

// `.gitmodules` at the root of a working tree is guarded by content, against the keys git
// reads there (docs/security.md, "The git configuration guard"; gitmodules(5)): git submodule
// add creates it and adds to it with no line, and the host's git works in what it made; a key
// off that list is taken back out, the rest of the file as it was.
TEST(Guard, GitSubmoduleAddWritesGitmodulesAndKeysGitDoesNotReadThereGo) {
  PI_SANDBOX_REQUIRE(have_git(), "git is not installed");
  Scratch s;
  const std::string ws = s.ws.string();
  const std::string setup =
      "cd '" + ws +
      "' && git -c init.defaultBranch=main init -q && echo a > a && git add a && "
      "git -c user.name=t -c user.email=t@e commit -qm a && "
      "for d in subsrc sub2src; do git -c init.defaultBranch=main init -q $d && "
      "git -C $d -c user.name=t -c user.email=t@e commit -q --allow-empty -m s; done";
  ASSERT_EQ(run_process({"/bin/sh", "-c", setup}, s.env()).exit_code, 0);
  const std::string add = "git -c protocol.file.allow=always submodule -q add ";
  const std::string commit = "git -c user.name=t -c user.email=t@e commit -qm ";
  const RunResult first = s.run(add + "./subsrc sub && " + commit + "sub && echo done");
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, "done\n") << first.err;
  EXPECT_EQ(first.err.find(".gitmodules"), std::string::npos) << first.err;
  EXPECT_EQ(read_file(s.ws / ".gitmodules"),
            "[submodule \"sub\"]\n\tpath = sub\n\turl = ./subsrc\n");
  // An existing `.gitmodules` is written in place by a second git submodule add.
  const RunResult second = s.run(add + "./sub2src sub2 && " + commit + "sub2 && echo done");
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, "done\n") << second.err;
  EXPECT_EQ(second.err.find(".gitmodules"), std::string::npos) << second.err;
  const std::string both =
      "[submodule \"sub\"]\n\tpath = sub\n\turl = ./subsrc\n"
      "[submodule \"sub2\"]\n\tpath = sub2\n\turl = ./sub2src\n";
  EXPECT_EQ(read_file(s.ws / ".gitmodules"), both);
  const RunResult status =
      run_process({"/bin/sh", "-c", "cd '" + ws + "' && git submodule status"}, s.env());
  EXPECT_EQ(status.exit_code, 0) << status.err;
  static const std::regex listed(R"(^ [0-9a-f]{40} sub \(heads/main\)\n [0-9a-f]{40} sub2 )"
                                 R"(\(heads/main\)\n$)");
  EXPECT_TRUE(std::regex_match(status.out, listed)) << status.out;
  // Keys git does not read from `.gitmodules`, or reads but refuses to run, are taken out.
  const fs::path pwned = s.root / "pwned";
  const RunResult hostile = s.run(
      "printf '[core] fsmonitor = x\\n' >> .gitmodules; sleep 0.3; "
      "git config -f .gitmodules submodule.s.update '!touch " +
      pwned.string() + "'; sleep 0.3; echo done");
  EXPECT_EQ(hostile.exit_code, 0) << hostile.err;
  EXPECT_EQ(hostile.out, "done\n") << hostile.err;
  const std::string undid = "pi-sandbox: undid a change to " + ws + "/.gitmodules: it set ";
  const std::string why =
      ", which is not on the allowlist of keys git reads from .gitmodules; the file is back "
      "without it; the attempted version is kept in the quarantine: ";
  std::vector<std::string> lines;
  std::istringstream in(hostile.err);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("pi-sandbox: undid "))
      lines.push_back(line.substr(0, line.find(why) + why.size()));
  EXPECT_EQ(lines, (std::vector<std::string>{undid + "core.fsmonitor" + why,
                                             undid + "submodule.s.update" + why}))
      << hostile.err;
  EXPECT_EQ(read_file(s.ws / ".gitmodules"), both);
  std::size_t kept = 0;
  for (const auto& e : quarantine_list(s))
    kept += e.value("original", "") == (s.ws / ".gitmodules").string() ? 1 : 0;
  EXPECT_EQ(kept, 2u);
  const RunResult update = run_process(
      {"/bin/sh", "-c",
       "cd '" + ws + "' && git -c protocol.file.allow=always submodule -q update --init"},
      s.env());
  EXPECT_EQ(update.exit_code, 0) << update.err;
  EXPECT_FALSE(fs::exists(pwned));
}

// git sparse-checkout init turns on extensions.worktreeConfig, which is not on the allowlist
// (docs/security.md, "The git configuration guard"): inside it is taken out; turned on on the
// host first, git sparse-checkout set works inside with no undo line. git maintenance register
// writes allowed keys (its ~/.gitconfig entry is refused: the file is read-only inside).
TEST(Guard, SparseCheckoutAndMaintenanceAsTheAllowlistSays) {
  PI_SANDBOX_REQUIRE(have_git(), "git is not installed");
  Scratch s;
  const std::string setup = "cd '" + s.ws.string() +
                            "' && git init -q && mkdir a b && touch a/x b/y && git add a b && "
                            "git -c user.name=t -c user.email=t@e commit -qm a";
  ASSERT_EQ(run_process({"/bin/sh", "-c", setup}, s.env()).exit_code, 0);
  const std::string config = (s.ws / ".git/config").string();
  const RunResult init = s.run("git sparse-checkout init --cone && git maintenance register; true");
  EXPECT_EQ(init.exit_code, 0) << init.err;
  EXPECT_NE(init.err.find("pi-sandbox: undid a change to " + config +
                          ": it set extensions.worktreeconfig, which is not on the allowlist"),
            std::string::npos)
      << init.err;
  const std::string after = read_file(s.ws / ".git/config");
  EXPECT_EQ(after.find("worktreeConfig"), std::string::npos) << after;
  EXPECT_NE(after.find("strategy = incremental"), std::string::npos) << after;
  ASSERT_EQ(run_process({"/bin/sh", "-c",
                         "cd '" + s.ws.string() +
                             "' && git sparse-checkout disable && git sparse-checkout init --cone"},
                        s.env())
                .exit_code,
            0);
  const RunResult set = s.run("git sparse-checkout set a && ls");
  EXPECT_EQ(set.exit_code, 0) << set.err;
  EXPECT_EQ(set.out, "a\n") << set.err;
  EXPECT_EQ(set.err.find("undid a change"), std::string::npos) << set.err;
}

// core.hooksPath=.husky (husky, lefthook): host git runs hooks from that workspace directory,
// so it is protected like .git/hooks (docs/security.md, "Hooks where git looks for them"); a
// commit inside still runs the hook.
TEST(Guard, TheDirectoryOfCoreHooksPathIsReadOnlyAndItsHooksStillRun) {
  PI_SANDBOX_REQUIRE(have_git(), "git is not installed");
  Scratch s;
  const std::string setup = "cd '" + s.ws.string() +
                            "' && git init -q && mkdir .husky && "
                            "printf '#!/bin/sh\\necho hook ran >&2\\n' > .husky/pre-commit && "
                            "chmod +x .husky/pre-commit && git config core.hooksPath .husky";
  ASSERT_EQ(run_process({"/bin/sh", "-c", setup}, s.env()).exit_code, 0);
  const std::string before = read_file(s.ws / ".husky/pre-commit");
  const RunResult r = s.run(
      "echo 'echo planted' >> .husky/pre-commit || true; touch .husky/pre-push || true; "
      "git -c user.name=t -c user.email=t@e commit -q --allow-empty -m x && echo committed");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "committed\n") << r.err;
  EXPECT_NE(r.err.find(".husky/pre-commit: Read-only file system"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("touch: cannot touch '.husky/pre-push': Read-only file system"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("hook ran\n"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(s.ws / ".husky/pre-commit"), before);
  EXPECT_FALSE(fs::exists(s.ws / ".husky/pre-push"));
}

// docs/security.md, "Names that host programs run": an agent's, an editor's or a devcontainer's
// configuration, and a `*.code-workspace` by pattern, go to the quarantine as they appear.
TEST(Guard, NamesHostProgramsRunAreQuarantined) {
  Scratch s;
  write_file(s.ws / "mine.code-workspace", "{}\n");  // the user's own: read-only, kept
  const RunResult r = s.run(
      "{ echo x >> mine.code-workspace; } 2>&1 | sed 's/.*: //'; "
      "mkdir c d && echo '{}' > c/mcp.json && mv c .cursor; "
      "echo '{\"initializeCommand\": \"touch x\"}' > d/devcontainer.json && mv d .devcontainer; "
      "echo '{}' > x.code-workspace; echo '{}' > x.code-workspace.txt; sleep 0.3; echo done");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Read-only file system\ndone\n");
  const std::regex line(R"(^pi-sandbox: moved (.+) to the quarantine \(a guarded name: )"
                        R"(dangerous-file\); restore with: pi-sandbox quarantine restore )"
                        R"([0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$)");
  std::vector<std::string> got;
  std::istringstream in(r.err);
  std::smatch m;
  for (std::string text; std::getline(in, text);)
    if (std::regex_match(text, m, line)) got.push_back(m[1]);
  std::ranges::sort(got);
  EXPECT_EQ(
      got, (std::vector<std::string>{(s.ws / ".cursor").string(), (s.ws / ".devcontainer").string(),
                                     (s.ws / "x.code-workspace").string()}))
      << r.err;
  EXPECT_EQ(list_dir(s.ws),
            (std::vector<std::string>{"mine.code-workspace", "x.code-workspace.txt"}));
  EXPECT_EQ(read_file(s.ws / "mine.code-workspace"), "{}\n");
  const std::string cursor = entry_for(s, s.ws / ".cursor");
  ASSERT_FALSE(cursor.empty());
  EXPECT_EQ(read_file(quarantine_root(s) / cursor / ".cursor/mcp.json"), "{}\n");
  // Strict mode holds no placeholder for a pattern: the guard moves it all the same.
  const RunResult strict =
      s.run("echo '{}' > y.code-workspace; echo done", {"--config", strict_config(s).string()});
  EXPECT_EQ(strict.exit_code, 0) << strict.err;
  EXPECT_EQ(moved(strict.err), std::vector<std::string>{(s.ws / "y.code-workspace").string()})
      << strict.err;
}

// docs/security.md, "Every writable root": a filesystem.additionalAllowWrite directory holding a
// repository is protected like the workspace: its hooks read-only, its configuration guarded by
// content, the names host programs run guarded at its root; ordinary work there reaches the host.
TEST(Guard, AnAdditionalWritableRootIsProtectedLikeTheWorkspace) {
  PI_SANDBOX_REQUIRE(have_git(), "git is not installed");
  Scratch s;
  const fs::path src = s.root / "src";
  ASSERT_EQ(run_process({"/bin/sh", "-c", "git init -q '" + (src / "repo").string() + "'"}, s.env())
                .exit_code,
            0);
  const fs::path config = s.root / "write.json";
  write_file(config, R"({"filesystem": {"additionalAllowWrite": [")" + src.string() + R"("]}})");
  const fs::path pwned = s.root / "pwned";
  const RunResult r = s.run(
      "cd '" + src.string() + "' && " +
          "{ echo '#!/bin/sh' > repo/.git/hooks/pre-commit; } 2>&1 | sed 's/.*: //'; "
          "git -C repo config core.fsmonitor 'touch " +
          pwned.string() +
          "; false'; sleep 0.3; git -C repo config user.name kept; "
          "mkdir .vscode && echo '{}' > .vscode/tasks.json; echo ok > ordinary.txt; sleep 0.3",
      {"--config", config.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Read-only file system\n");
  EXPECT_FALSE(fs::exists(src / "repo/.git/hooks/pre-commit"));
  EXPECT_NE(
      r.err.find(
          "pi-sandbox: undid a change to " + (src / "repo/.git/config").string() +
          ": it set core.fsmonitor, which is not on the allowlist of keys that run nothing; the "
          "file is back without it"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(moved(r.err), std::vector<std::string>{(src / ".vscode").string()}) << r.err;
  (void)run_process({"/bin/sh", "-c", "git -C '" + (src / "repo").string() + "' status"}, s.env());
  EXPECT_FALSE(fs::exists(pwned));
  const std::string text = read_file(src / "repo/.git/config");
  EXPECT_EQ(text.find("fsmonitor"), std::string::npos) << text;
  EXPECT_NE(text.find("name = kept"), std::string::npos) << text;
  EXPECT_EQ(read_file(src / "ordinary.txt"), "ok\n");
}

// A repository the command creates was never guarded live: its hooks and its configuration are
// dealt with after the command (docs/cases.md, C-03).
TEST(Guard, ARepositoryTheCommandCreatedLosesItsHooksAndDangerousConfiguration) {
  PI_SANDBOX_REQUIRE(have_git(), "git is not installed");
  Scratch s;
  const RunResult r = s.run(
      "git init -q && printf '#!/bin/sh\\n' > .git/hooks/post-checkout && "
      "mkdir sub && git -C sub init -q && printf '#!/bin/sh\\n' > sub/.git/hooks/pre-commit && "
      "git -C sub config core.sshCommand 'touch /tmp/x' && git -C sub config user.name kept");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> got = moved(r.err);
  std::ranges::sort(got);
  EXPECT_EQ(got, (std::vector<std::string>{(s.ws / ".git/hooks/post-checkout").string(),
                                           (s.ws / "sub/.git/hooks/pre-commit").string()}))
      << r.err;
  EXPECT_NE(r.err.find("pi-sandbox: cleaned " + (s.ws / "sub/.git/config").string() +
                       " in a repository the command created: it set core.sshcommand"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(s.ws / ".git/hooks/post-checkout"));
  EXPECT_FALSE(fs::exists(s.ws / "sub/.git/hooks/pre-commit"));
  EXPECT_TRUE(fs::exists(s.ws / ".git/hooks/pre-commit.sample"));
  const std::string config = read_file(s.ws / "sub/.git/config");
  EXPECT_EQ(config.find("sshCommand"), std::string::npos) << config;
  EXPECT_NE(config.find("name = kept"), std::string::npos) << config;
}

// A nested repository registered as a gitlink, wherever the scan does not look (a skipped
// `node_modules`, deeper than four levels, a git directory not named `.git`): host `git status`
// in the outer repository runs git in it, so its configuration and hooks are cleaned.
TEST(Guard, ARepositoryRegisteredAsAGitlinkAnywhereIsCleaned) {
  PI_SANDBOX_REQUIRE(have_git(), "git is not installed");
  Scratch s;
  ASSERT_EQ(run_process({"/bin/sh", "-c",
                         "cd '" + s.ws.string() +
                             "' && git init -q && git -c user.name=t -c user.email=t@e commit -q "
                             "--allow-empty -m a"},
                        s.env())
                .exit_code,
            0);
  const fs::path pwned = s.root / "pwned";
  const std::string nested =
      "n() { git init -q \"$1\" && git -C \"$1\" -c user.name=t -c user.email=t@e commit -q "
      "--allow-empty -m e && git -C \"$1\" config core.fsmonitor \"touch " +
      pwned.string() +
      "-$2; false\" && printf '#!/bin/sh\\n' > \"$1/.git/hooks/post-checkout\"; }; "
      "n node_modules/evil 1 && n a/b/c/d/e/evil 2 && n sub 3 && mv sub/.git store && "
      "echo 'gitdir: ../store' > sub/.git && git add node_modules/evil a/b/c/d/e/evil sub "
      "2>/dev/null; "
      "echo added";
  const RunResult r = s.run(nested);
  EXPECT_EQ(r.out, "added\n") << r.err;
  const auto cleaned = [&](const char* dir) {
    return r.err.find("pi-sandbox: cleaned " + (s.ws / dir / "config").string()) !=
           std::string::npos;
  };
  for (const char* dir : {"node_modules/evil/.git", "a/b/c/d/e/evil/.git"})
    EXPECT_TRUE(cleaned(dir)) << dir << "\n" << r.err;
  // `store` is cleaned where the guard saw it first: as `sub/.git` when it was quick enough.
  EXPECT_TRUE(cleaned("store") || cleaned("sub/.git")) << r.err;
  EXPECT_EQ(read_file(s.ws / "store/config").find("fsmonitor"), std::string::npos);
  const RunResult host =
      run_process({"/bin/sh", "-c",
                   "cd '" + s.ws.string() + "' && git status --porcelain >/dev/null 2>&1; true"},
                  s.env());
  for (const char* n : {"-1", "-2", "-3"}) EXPECT_FALSE(fs::exists(pwned.string() + n)) << n;
  EXPECT_FALSE(fs::exists(s.ws / "node_modules/evil/.git/hooks/post-checkout"));
  EXPECT_FALSE(fs::exists(s.ws / "store/hooks/post-checkout"));
}

/// Runs `script` with /bin/sh on the host in `dir` (HOME the scratch home); its exit code.
int host_sh(const Scratch& s, const fs::path& dir, const std::string& script) {
  return run_process({"/bin/sh", "-c", "cd '" + dir.string() + "' && " + script}, s.env())
      .exit_code;
}

// Git's discovery rules (gitrepository-layout(5); setup.c is_git_directory, read_gitfile): a
// repository the command designates any way git would find it, at any depth, in a workspace
// that is not a repository, has its configuration cleaned, and the next host `git status`
// there runs nothing. Each case: where host git runs, what the command does there, the file
// the guard's line names.
TEST(Guard, EveryRepositoryGitWouldFindIsCleanedWhereverTheCommandMadeIt) {
  PI_SANDBOX_REQUIRE(have_git(), "git is not installed");
  struct Case {
    std::string where, script, config;
  };
  const std::string bare =
      "git init -q --bare \"$X\" && git config -f \"$X/config\" core.bare false && "
      "git config -f \"$X/config\" core.fsmonitor \"touch $PWNED; false\"";
  const std::string deep = "node_modules/a/b/c/d/e/f/g/h/i/j/k";
  const std::vector<Case> cases = {
      {"p", "mkdir p && X=p/.x && " + bare + " && printf 'gitdir: .x\\n' > p/.git", "p/.x/config"},
      {"p",
       "mkdir -p p/.git && X=p/.x && " + bare +
           " && printf 'ref: refs/heads/main\\n' > p/.git/HEAD && printf '../.x\\n' > "
           "p/.git/commondir",
       "p/.x/config"},
      {"cache/d", "X=cache/d && " + bare + " && git config -f cache/d/config core.worktree ..",
       "cache/d/config"},
      {deep,
       "mkdir -p " + deep + " && X=" + deep + "/../.x && " + bare +
           " && printf 'gitdir: ../.x\\n' > " + deep + "/.git",
       "node_modules/a/b/c/d/e/f/g/h/i/j/.x/config"},
      {"sub",
       "git init -q vend && mkdir sub && X=vend/.git/modules/evil && " + bare +
           " && printf 'gitdir: ../vend/.git/modules/evil\\n' > sub/.git",
       "vend/.git/modules/evil/config"},
  };
  for (const auto& c : cases) {
    Scratch s;
    const fs::path pwned = s.root / "pwned";
    const RunResult r = s.run("PWNED=" + pwned.string() + "; " + c.script + " && echo made");
    EXPECT_EQ(r.out, "made\n") << c.config << "\n" << r.err;
    // The live guard cleans core.fsmonitor before the script sets core.worktree, or, when it is
    // slower, the last sweep cleans both keys at once: either way one line names the file.
    const std::string start = "pi-sandbox: cleaned " + (s.ws / c.config).string() +
                              " in a repository the command created: it set core.fsmonitor";
    const auto at = r.err.find(start);
    ASSERT_NE(at, std::string::npos) << c.config << "\n" << r.err;
    const std::string line = r.err.substr(at, r.err.find('\n', at) - at);
    const std::string rest = line.substr(start.size());
    EXPECT_TRUE(rest.starts_with(", which is not on the allowlist of keys that run nothing; "
                                 "the original is kept in the quarantine: ") ||
                (c.where == "cache/d" &&
                 rest.starts_with(", core.worktree, which is not on the allowlist of keys that "
                                  "run nothing; the original is kept in the quarantine: ")))
        << line;
    // Its exit code says little (git may refuse what is left); the marker says all.
    (void)host_sh(s, s.ws / c.where, "git status --porcelain >/dev/null 2>&1");
    EXPECT_FALSE(fs::exists(pwned)) << c.config << ": host git ran the planted fsmonitor";
  }
}

// What it must never do: take back what the command did not change. A superproject with a
// submodule, a linked worktree and git-lfs set up on the host; a plain `git status`,
// `git submodule update` (which rewrites the submodule's config with the same keys) and
// `git worktree list` inside leave no line, nothing moved, every configuration byte-identical.
TEST(Guard, WhatTheHostSetUpIsNeverTakenBack) {
  PI_SANDBOX_REQUIRE(have_git(), "git is not installed");
  Scratch s;
  const bool lfs = run_process({"/bin/sh", "-c", "git lfs version"}, s.env()).exit_code == 0;
  const std::string g = "git -c protocol.file.allow=always -c user.name=t -c user.email=t@e ";
  ASSERT_EQ(host_sh(s, s.root,
                    "mkdir lib && cd lib && " + g + "init -q && echo l > l && " + g + "add l && " +
                        g + "commit -qm l"),
            0);
  ASSERT_EQ(
      host_sh(s, s.ws,
              "mkdir src && cd src && " + g + "init -q && echo s > s && " + g + "add s && " + g +
                  "commit -qm s && " + g + "submodule add -q " + (s.root / "lib").string() +
                  " lib && " + g + "commit -qm sub && " + g + "worktree add -q ../src-wt -b wt" +
                  (lfs ? " && git lfs install --local >/dev/null" : "")),
      0);
  const std::string configs =
      "find src/.git src-wt src/lib \\( -name config -o -name config.worktree -o -name .git -o "
      "-name commondir -o -name gitdir \\) -type f | LC_ALL=C sort | xargs cat";
  const RunResult before =
      run_process({"/bin/sh", "-c", "cd '" + s.ws.string() + "' && " + configs}, s.env());
  ASSERT_NE(before.out.find("worktree = ../../../lib"), std::string::npos) << before.out;
  const RunResult r = s.run(
      "cd src && git status --porcelain && git submodule update && git worktree list >/dev/null "
      "&& git -C lib status --porcelain && echo done");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done\n") << r.err;
  EXPECT_EQ(r.err, "");
  const RunResult after =
      run_process({"/bin/sh", "-c", "cd '" + s.ws.string() + "' && " + configs}, s.env());
  EXPECT_EQ(after.out, before.out);
  EXPECT_FALSE(fs::exists(quarantine_root(s)));
  // git-lfs's own hooks, installed on the host, stay.
  if (lfs) {
    EXPECT_TRUE(fs::exists(s.ws / "src/.git/hooks/pre-push"));
  }
}

// A linked worktree added inside (`git worktree add`) is the command's: its git directory is
// new, but the repository's common directory existed, so the host's own hook stays.
TEST(Guard, AWorktreeAddedInsideLeavesTheRepositorysOwnHooks) {
  PI_SANDBOX_REQUIRE(have_git(), "git is not installed");
  Scratch s;
  ASSERT_EQ(host_sh(s, s.ws,
                    "git init -q && git -c user.name=t -c user.email=t@e commit -q --allow-empty "
                    "-m a && printf '#!/bin/sh\\nexit 0\\n' > .git/hooks/pre-commit && "
                    "chmod +x .git/hooks/pre-commit"),
            0);
  const RunResult r = s.run(
      "git worktree add -q wt2 -b wt2 && git -C wt2 -c user.name=t -c user.email=t@e commit -q "
      "--allow-empty -m x && echo done");
  EXPECT_EQ(r.out, "done\n") << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(read_file(s.ws / ".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n");
}

// A setuid file moved to a new place during the command loses the bit: the host mounts the
// workspace without nosuid (a file made setuid inside is refused by seccomp; this is the
// guard's second wall).
TEST(Guard, AFileMovedInSetuidLosesTheBit) {
  Scratch s;
  ASSERT_EQ(host_sh(s, s.ws, "mkdir build && cp /bin/true build/s && chmod 6755 build/s"), 0);
  const RunResult r = s.run("mkdir -p out/bin && mv build/s out/bin/s && echo moved");
  EXPECT_EQ(r.out, "moved\n") << r.err;
  EXPECT_EQ(r.err, "pi-sandbox: cleared the setuid+setgid bit of " + (s.ws / "out/bin/s").string() +
                       " (the command made it; the host mounts the workspace without nosuid)\n");
  EXPECT_EQ(fs::status(s.ws / "out/bin/s").permissions(), fs::perms(0755));
}

// The quarantine must never be writable by the command: a workspace that contains it (and is
// not the home, whose dot-directories are read-only) is refused.
TEST(Guard, AWorkspaceThatContainsTheQuarantineIsRefused) {
  Scratch s;
  fs::create_directories(s.home / ".local/state");
  const RunResult r = s.run("true", {}, s.home / ".local/state");
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(r.err, "pi-sandbox: sandbox setup failed: the quarantine " +
                       quarantine_root(s).string() +
                       " would be writable by the command (it lies in the workspace)\nhint: run "
                       "pi-sandbox from a workspace that does not contain it (the home itself is "
                       "fine: its dot-directories are read-only)\n");
  const RunResult home = s.run("true", {}, s.home);
  EXPECT_EQ(home.exit_code, 0) << home.err;
}

// Acceptance 4: a supervisor killed at any moment leaves nothing guarded in the workspace
// (pid 1 sweeps once every process of the sandbox is gone).
TEST(Guard, ASupervisorKilledMidCommandLeavesNothingGuardedBehind) {
  std::mt19937 random(20261201);
  for (int round = 0; round < 8; ++round) {
    Scratch s;
    const pid_t pid = spawn_process(
        {sandbox_binary(), "run", "--cwd", s.ws.string(), "--", "/bin/sh", "-c",
         "touch started; while :; do mkdir -p .vscode; echo x > .vscode/t; echo y > .mcp.json; "
         "done"},
        s.env());
    for (int i = 0; i < 300 && !fs::exists(s.ws / "started"); ++i)
      std::this_thread::sleep_for(10ms);
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 300)(random)));
    ::kill(pid, SIGKILL);
    wait_process(pid);
    // pid 1 notices (its parent-death signal), kills the command, sweeps and exits: until then
    // the command still runs (and makes the names again), and an item pid 1 is copying to the
    // quarantine stands under a claimed name.
    ASSERT_TRUE(wait_until_gone("while :; do mkdir -p .vscode")) << "round " << round;
    for (int i = 0; i < 500 && list_dir(s.ws) != std::vector<std::string>{"started"}; ++i)
      std::this_thread::sleep_for(10ms);
    EXPECT_FALSE(fs::exists(fs::symlink_status(s.ws / ".vscode"))) << "round " << round;
    EXPECT_FALSE(fs::exists(fs::symlink_status(s.ws / ".mcp.json"))) << "round " << round;
    EXPECT_EQ(list_dir(s.ws), std::vector<std::string>{"started"}) << "round " << round;
  }
}

// Strict mode (filesystem.protection "strict") keeps the placeholders: creation fails inside,
// and nothing is left afterwards.
TEST(Guard, StrictModeHoldsMissingNamesWithPlaceholders) {
  Scratch s;
  const RunResult r = s.run("echo x > .mcp.json; mkdir -p .vscode/a; ls -A",
                            {"--config", strict_config(s).string()});
  EXPECT_NE(r.err.find(".mcp.json: Is a directory"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find(".mcp.json\n"), std::string::npos) << r.out;  // the placeholder
  EXPECT_EQ(moved(r.err), std::vector<std::string>{}) << r.err;
  EXPECT_EQ(list_dir(s.ws), std::vector<std::string>{});
}

// Strict mode in a repository: git reads `.git/commondir` whenever one exists, so a placeholder
// directory there would stop every git command ("failed to read .git/commondir: Is a
// directory"); it is guarded instead, and git works.
TEST(Guard, StrictModeGuardsCommondirSoGitWorks) {
  PI_SANDBOX_REQUIRE(have_git(), "git is not installed");
  Scratch s;
  const std::string setup = "cd '" + s.ws.string() +
                            "' && git init -q && git -c user.name=t -c user.email=t@e commit -q "
                            "--allow-empty -m a";
  ASSERT_EQ(run_process({"/bin/sh", "-c", setup}, s.env()).exit_code, 0);
  const RunResult r = s.run(
      "echo x > f && git add f && git -c user.name=t -c user.email=t@e commit -qm f && "
      "git status --short && echo committed; echo ../x > .git/commondir; sleep 0.2",
      {"--config", strict_config(s).string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "committed\n") << r.err;
  EXPECT_EQ(moved(r.err), std::vector<std::string>{(s.ws / ".git/commondir").string()}) << r.err;
  EXPECT_FALSE(fs::exists(s.ws / ".git/commondir"));
}

}  // namespace
}  // namespace pisandbox::testing
