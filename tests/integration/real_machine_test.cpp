// Real developer machines (docs/security.md, "Repositories around the workspace", "Toolchains
// in the home"): a workspace inside a repository, a linked worktree, a submodule, toolchains
// installed in the home, copy-on-write re-exposes, configured caches, missing parents of
// protected names, a workspace in the private /tmp. Each test leaves the host exactly as
// before but for what the command was meant to change (hashed before and after). Runs as root
// and as an unprivileged user (scripts/test runs this binary twice).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "harness.hpp"

namespace pisandbox::testing {
namespace {

/// Every entry below `root` (type, mode, size, content hash, link target), one line each,
/// leaving out the subtrees `skip` (relative to `root`).
std::string tree_state(const fs::path& root, const std::vector<fs::path>& skip = {}) {
  std::ostringstream out;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(root, error);
       it != fs::recursive_directory_iterator(); it.increment(error)) {
    const fs::path relative = it->path().lexically_relative(root);
    if (std::ranges::any_of(skip, [&](const fs::path& s) {
          return relative == s || relative.string().starts_with(s.string() + "/");
        })) {
      if (it->is_directory(error) && !it->is_symlink(error)) it.disable_recursion_pending();
      continue;
    }
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    out << relative.string() << " " << std::oct << st.st_mode << std::dec;
    if (S_ISREG(st.st_mode))
      out << " " << st.st_size << " " << std::hash<std::string>{}(read_file(it->path()));
    if (S_ISLNK(st.st_mode)) out << " -> " << fs::read_symlink(it->path(), error).string();
    out << "\n";
  }
  return out.str();
}

RunResult git(const fs::path& dir, const std::string& args, const Scratch& s) {
  return run_process({"/bin/sh", "-c", "cd '" + dir.string() + "' && git " + args}, s.env());
}

/// A repository at `dir` with one commit of `file`.
void make_repository(const fs::path& dir, const std::string& file, const Scratch& s) {
  fs::create_directories(dir / fs::path(file).parent_path());
  write_file(dir / file, "first\n");
  ASSERT_EQ(run_process({"/bin/sh", "-c",
                         "cd '" + dir.string() +
                             "' && git -c init.defaultBranch=main init -q && git add -A && git "
                             "commit -qm first"},
                        s.env())
                .exit_code,
            0);
}

/// The stderr lines that are not the "no cgroup" warning (which depends on the machine).
std::string stderr_lines(const std::string& err) {
  std::istringstream in(err);
  std::string line, out;
  while (std::getline(in, line))
    if (line.find("no cgroup for this command") == std::string::npos) out += line + "\n";
  return out;
}

// Row 1: `repo/packages/app` under the home.
TEST(RealMachine, AWorkspaceInsideARepositoryCommitsAndLeavesTheRestReadOnly) {
  Scratch s;
  const fs::path repo = s.home / "repo";
  write_file(repo / "top.txt", "top\n");
  make_repository(repo, "packages/app/a.txt", s);
  const fs::path app = repo / "packages/app";
  const std::string before = tree_state(s.home, {"repo/.git", "repo/packages/app"});
  const std::string control = tree_state(repo / ".git/hooks") + read_file(repo / ".git/config");
  const RunResult r = s.run(
      "git status --short; echo second > b.txt; git add -A && git commit -qm second && "
      "git log --format=%s; cat ../../top.txt; echo x > ../../top.txt; "
      "echo evil > ../../.git/hooks/post-commit; echo evil >> ../../.git/config; "
      "mkdir ../../.git/info/x; echo done",
      {}, app);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "second\nfirst\ntop\ndone\n");
  EXPECT_EQ(stderr_lines(r.err),
            "/bin/bash: line 1: ../../top.txt: Read-only file system\n"
            "/bin/bash: line 1: ../../.git/hooks/post-commit: Read-only file system\n"
            "/bin/bash: line 1: ../../.git/config: Read-only file system\n"
            "mkdir: cannot create directory '../../.git/info/x': Read-only file system\n");
  // On the host: the commit, nothing else.
  EXPECT_EQ(git(app, "log --format=%s", s).out, "second\nfirst\n");
  EXPECT_EQ(git(app, "status --short", s).out, "");
  EXPECT_EQ(tree_state(s.home, {"repo/.git", "repo/packages/app"}), before);
  EXPECT_EQ(tree_state(repo / ".git/hooks") + read_file(repo / ".git/config"), control);
}

// `git sparse-checkout` turns extensions.worktreeConfig on: git must keep working, inside and
// on the host while a command runs (no placeholder where it reads config.worktree).
TEST(RealMachine, GitWorksWithWorktreeConfigOn) {
  Scratch s;
  const fs::path repo = s.home / "repo";
  make_repository(repo, "app/a.txt", s);
  ASSERT_EQ(git(repo, "config extensions.worktreeConfig true", s).exit_code, 0);
  const pid_t sleeper = spawn_process(
      {sandbox_binary(), "run", "--cwd", (repo / "app").string(), "--", "sleep", "3"}, s.env());
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  const RunResult host = git(repo, "status --short 2>&1", s);
  const RunResult r =
      s.run("echo b > b && git add b && git commit -qm b && git log --format=%s", {}, repo / "app");
  EXPECT_EQ(wait_process(sleeper), 0);
  EXPECT_EQ(host.exit_code, 0);
  EXPECT_EQ(host.out, "");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "b\nfirst\n");
  EXPECT_EQ(stderr_lines(r.err), "");
}

// Row 2: a linked worktree, and a submodule.
TEST(RealMachine, ALinkedWorktreeCommitsAndTheMainRepositorysControlStaysProtected) {
  Scratch s;
  const fs::path repo = s.home / "repo";
  make_repository(repo, "a.txt", s);
  ASSERT_EQ(git(repo, "worktree add -q ../wt 2>&1", s).exit_code, 0);
  const fs::path wt = s.home / "wt";
  const std::string control =
      tree_state(repo / ".git/hooks") + read_file(repo / ".git/config") + read_file(wt / ".git");
  const std::string main_tree = tree_state(repo, {".git"});
  const RunResult r = s.run(
      "echo x > f && git add f && git commit -qm wt && git log --format=%s; git status --short; "
      "git branch tmpb && git branch -d tmpb >/dev/null 2>&1 && echo z > z && git add z && "
      "git stash -q && git stash pop -q && git stash list && git reset -q && rm z && "
      "git pack-refs --all && echo refs-ok; "
      "echo evil > ../repo/.git/hooks/post-commit; echo evil >> ../repo/.git/config; "
      "echo 'gitdir: /tmp/elsewhere' > .git; echo done",
      {}, wt);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "wt\nfirst\nrefs-ok\ndone\n");
  EXPECT_EQ(stderr_lines(r.err),
            "/bin/bash: line 1: ../repo/.git/hooks/post-commit: Read-only file system\n"
            "/bin/bash: line 1: ../repo/.git/config: Read-only file system\n"
            "/bin/bash: line 1: .git: Read-only file system\n");
  EXPECT_EQ(git(wt, "log --format=%s", s).out, "wt\nfirst\n");
  EXPECT_EQ(git(wt, "branch --list tmpb", s).out, "");
  EXPECT_EQ(git(wt, "stash list", s).out, "");
  EXPECT_EQ(
      tree_state(repo / ".git/hooks") + read_file(repo / ".git/config") + read_file(wt / ".git"),
      control);
  EXPECT_EQ(tree_state(repo, {".git"}), main_tree);
}

TEST(RealMachine, ASubmoduleCommitsAndItsGitDirectoryKeepsItsHooks) {
  Scratch s;
  make_repository(s.home / "lib", "lib.txt", s);
  const fs::path super = s.home / "super";
  make_repository(super, "a.txt", s);
  ASSERT_EQ(git(super,
                "-c protocol.file.allow=always submodule add -q ../lib lib 2>&1 && git commit "
                "-qm sub",
                s)
                .exit_code,
            0);
  const fs::path modules = super / ".git/modules/lib";
  ASSERT_TRUE(fs::is_directory(modules));
  const std::string control = tree_state(modules / "hooks") + read_file(modules / "config");
  const RunResult r = s.run(
      "echo y > y && git add y && git commit -qm in-sub && git log --format=%s; "
      "echo evil > " +
          (modules / "hooks/post-commit").string() + "; echo evil >> " +
          (modules / "config").string() + "; echo done",
      {}, super / "lib");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "in-sub\nfirst\ndone\n");
  EXPECT_EQ(stderr_lines(r.err), "/bin/bash: line 1: " + (modules / "hooks/post-commit").string() +
                                     ": Read-only file system\n/bin/bash: line 1: " +
                                     (modules / "config").string() + ": Read-only file system\n");
  EXPECT_EQ(git(super / "lib", "log --format=%s", s).out, "in-sub\nfirst\n");
  EXPECT_EQ(tree_state(modules / "hooks") + read_file(modules / "config"), control);
}

/// The real toolchains copied by tests/integration/devtools.sh ($PI_SANDBOX_TEST_DEVTOOLS).
fs::path devtools() {
  const char* dir = ::getenv("PI_SANDBOX_TEST_DEVTOOLS");
  return dir != nullptr ? fs::path(dir) : fs::path();
}

void copy_tree(const fs::path& from, const fs::path& to) {
  fs::create_directories(to.parent_path());
  ASSERT_EQ(run_process({"/bin/cp", "-a", from.string(), to.string()}).exit_code, 0) << from;
}

/// A home laid out as rustup, nvm, pyenv and pip install into it, with real toolchains where
/// the machine has them. Returns the PATH a login there would have.
std::string install_toolchains(const Scratch& s) {
  const fs::path tools = devtools();
  copy_tree(tools / "rustup", s.home / ".rustup");
  copy_tree(tools / "cargo", s.home / ".cargo");
  write_file(s.home / ".cargo/credentials.toml", "[registry]\ntoken = \"cio-secret\"\n");
  const fs::path node_bin = s.home / ".nvm/versions/node/v20.0.0/bin";
  copy_tree(tools / "node/bin/node", node_bin / "node");
  // pyenv: a copied interpreter (a venv made with --copies) behind pyenv's shim.
  const fs::path python = s.home / ".pyenv/versions/3.11.0";
  EXPECT_EQ(
      run_process({"/usr/bin/python3", "-m", "venv", "--copies", "--without-pip", python.string()})
          .exit_code,
      0);
  write_file(s.home / ".pyenv/shims/python",
             "#!/bin/sh\nexec \"$HOME/.pyenv/versions/3.11.0/bin/python\" \"$@\"\n");
  fs::permissions(s.home / ".pyenv/shims/python",
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec);
  write_file(s.home / ".local/bin/mytool", "#!/bin/sh\necho mytool works\n");
  fs::permissions(s.home / ".local/bin/mytool",
                  fs::perms::owner_all | fs::perms::others_exec | fs::perms::others_read);
  return (s.home / ".cargo/bin").string() + ":" + node_bin.string() + ":" +
         (s.home / ".pyenv/shims").string() + ":" + (s.home / ".local/bin").string() +
         ":/usr/bin:/bin";
}

std::map<std::string, std::string> toolchain_env(const Scratch& s, const std::string& path) {
  auto env = s.env();
  env["PATH"] = path;
  env["CARGO_HOME"] = (s.home / ".cargo").string();
  env["RUSTUP_HOME"] = (s.home / ".rustup").string();
  env["PYENV_ROOT"] = (s.home / ".pyenv").string();
  env["RUSTUP_AUTO_INSTALL"] = "0";
  return env;
}

// Row 3 and row 4: cargo, node, pyenv's python and ~/.local/bin are found; a crate builds
// (cargo writes its caches in ~/.cargo: copy-on-write); nothing reaches the real home, and
// cargo's credentials stay hidden.
TEST(RealMachine, ToolchainsInTheHomeRunAndWriteCopyOnWrite) {
  PI_SANDBOX_REQUIRE(
      fs::exists(devtools() / "rustup/settings.toml") && fs::exists(devtools() / "node/bin/node"),
      "PI_SANDBOX_TEST_DEVTOOLS has no rustup toolchain or node (scripts/test "
      "makes it with tests/integration/devtools.sh)");
  Scratch s;
  const std::string path = install_toolchains(s);
  const std::string before = tree_state(s.home, {"ws"});
  const auto env = toolchain_env(s, path);
  const RunResult r = run_process(
      {sandbox_binary(), "run", "--cwd", s.ws.string(), "-c",
       "cargo new -q --vcs none hello && cd hello && cargo build -q --offline && "
       "./target/debug/hello && cd .. && node -e 'console.log(\"node\", process.version)' && "
       "python -c 'import sys; print(sys.prefix)' && mytool && echo cow > ~/.cargo/probe && "
       "cat ~/.cargo/probe && wc -c < ~/.cargo/credentials.toml"},
      env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string node_version =
      run_process({(s.home / ".nvm/versions/node/v20.0.0/bin/node").string(), "-e",
                   "console.log(process.version)"})
          .out;
  EXPECT_EQ(r.out, "Hello, world!\nnode " + node_version +
                       (s.home / ".pyenv/versions/3.11.0").string() + "\nmytool works\ncow\n0\n");
  EXPECT_EQ(stderr_lines(r.err), "");
  EXPECT_EQ(tree_state(s.home, {"ws"}), before);
  // The workspace got the crate.
  EXPECT_TRUE(fs::exists(s.ws / "hello/target/debug/hello"));
  // `pi-sandbox policy` says why each is there.
  const RunResult policy = run_process({sandbox_binary(), "policy", "--cwd", s.ws.string()}, env);
  for (const std::string& line :
       {"  re-exposed copy-on-write: " + (s.home / ".cargo").string() + "  # $PATH entry " +
            (s.home / ".cargo/bin").string() + ": rustup and cargo ($CARGO_HOME)",
        "  re-exposed copy-on-write: " + (s.home / ".nvm").string() + "  # $PATH entry " +
            (s.home / ".nvm/versions/node/v20.0.0/bin").string() + ": nvm",
        "  re-exposed copy-on-write: " + (s.home / ".local/bin").string() + "  # $PATH entry " +
            (s.home / ".local/bin").string() + ": ~/.local (pip --user, pipx)",
        "  concealed (credential): " + (s.home / ".cargo/credentials.toml").string()})
    EXPECT_NE(policy.out.find(line + "\n"), std::string::npos) << line << "\n" << policy.out;
}

// Row 3: an activated virtual environment in the home (PEP 405) is whole inside: its
// pyvenv.cfg and site-packages come with its bin, so its python is the environment's.
TEST(RealMachine, AnActivatedVirtualEnvironmentInTheHomeIsWholeInside) {
  PI_SANDBOX_REQUIRE(::access("/usr/bin/python3", X_OK) == 0, "python3 is not installed");
  Scratch s;
  const fs::path venv = s.home / "venvs/app";
  ASSERT_EQ(
      run_process({"/usr/bin/python3", "-m", "venv", "--without-pip", venv.string()}).exit_code, 0);
  const RunResult lib = run_process({(venv / "bin/python").string(), "-c",
                                     "import sysconfig; print(sysconfig.get_path('purelib'))"});
  ASSERT_EQ(lib.exit_code, 0) << lib.err;
  const fs::path site = lib.out.substr(0, lib.out.size() - 1);
  write_file(site / "trialmod.py", "WHERE = 'from the environment'\n");
  // Without a cgroup, `run` keeps its once-a-day stamp in ~/.local/state (its own state).
  const std::string before = tree_state(s.home, {"ws", ".local"});
  auto env = s.env();
  env["PATH"] = (venv / "bin").string() + ":/usr/bin:/bin";
  env["VIRTUAL_ENV"] = venv.string();
  const RunResult r =
      run_process({sandbox_binary(), "run", "--cwd", s.ws.string(), "-c",
                   "python -c 'import sys, trialmod; print(sys.prefix, trialmod.WHERE)'"},
                  env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, venv.string() + " from the environment\n");
  EXPECT_EQ(stderr_lines(r.err), "");
  EXPECT_EQ(tree_state(s.home, {"ws", ".local"}), before);
  const RunResult policy = run_process({sandbox_binary(), "policy", "--cwd", s.ws.string()}, env);
  const std::string line = "  re-exposed copy-on-write: " + venv.string() + "  # $PATH entry " +
                           (venv / "bin").string() +
                           ": a Python virtual environment ($VIRTUAL_ENV)\n";
  EXPECT_NE(policy.out.find(line), std::string::npos) << policy.out;
}

TEST(RealMachine, TheToolchainSwitchHidesThemAndDoctorNamesThem) {
  Scratch s;
  write_file(s.home / ".local/bin/mytool", "#!/bin/sh\necho mytool works\n");
  fs::permissions(s.home / ".local/bin/mytool", fs::perms::owner_all);
  auto env = s.env();
  env["PATH"] = (s.home / ".local/bin").string() + ":/usr/bin:/bin";
  const fs::path config = s.root / "config.json";
  write_file(config, R"({"filesystem": {"exposeHomeToolchains": false}})");
  const RunResult off = run_process({sandbox_binary(), "run", "--cwd", s.ws.string(), "--config",
                                     config.string(), "-c", "mytool"},
                                    env);
  EXPECT_EQ(off.exit_code, 127);
  EXPECT_EQ(stderr_lines(off.err), "/bin/bash: line 1: mytool: command not found\n");
  const RunResult on =
      run_process({sandbox_binary(), "run", "--cwd", s.ws.string(), "-c", "mytool"}, env);
  EXPECT_EQ(on.exit_code, 0) << on.err;
  EXPECT_EQ(on.out, "mytool works\n");
  // doctor reads the default configuration: put the switch there.
  write_file(s.home / ".pi/agent/extensions/pi-sandbox/config.json",
             R"({"filesystem": {"exposeHomeToolchains": false}})");
  const RunResult doctor = run_process({sandbox_binary(), "doctor"}, env);
  EXPECT_NE(doctor.out.find("weaker   $PATH entries inside the hidden home: hidden, so their "
                            "programs are not found inside: " +
                            (s.home / ".local/bin").string() +
                            "\n         fix: nothing re-exposes them while "
                            "filesystem.exposeHomeToolchains is false, nor ever the home itself "
                            "or a credential store (~/.ssh, ~/.docker, ...: docs/security.md, "
                            "\"Toolchains in the home\"); list the directories you need in "
                            "filesystem.additionalAllowRead (docs/configuration.md)\n"),
            std::string::npos)
      << doctor.out;
}

// Row 4 with a configured read path: writes succeed inside, never reach the host.
TEST(RealMachine, AConfiguredReadPathIsCopyOnWrite) {
  Scratch s;
  write_file(s.home / "tool-cache/index", "v1\n");
  const fs::path config = s.root / "config.json";
  write_file(config, R"({"filesystem": {"additionalAllowRead": [")" +
                         (s.home / "tool-cache").string() + R"("]}})");
  const std::string before = tree_state(s.home, {"ws"});
  const RunResult r = run_process(
      {sandbox_binary(), "run", "--cwd", s.ws.string(), "--config", config.string(), "-c",
       "cat ~/tool-cache/index; echo v2 > ~/tool-cache/index; mkdir -p ~/tool-cache/new/deep && "
       "echo n > ~/tool-cache/new/deep/f; rm ~/tool-cache/index; ls ~/tool-cache"},
      s.env());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "v1\nnew\n");
  EXPECT_EQ(stderr_lines(r.err), "");
  EXPECT_EQ(tree_state(s.home, {"ws"}), before);
}

// Row 5: a configured cache persists; dangerous entries are refused.
TEST(RealMachine, AConfiguredWritableCachePersistsAndDangerousOnesAreRefused) {
  Scratch s;
  const fs::path cache = s.home / ".cache/go-build";
  const fs::path config = s.root / "config.json";
  write_file(config, R"({"filesystem": {"additionalAllowWrite": [")" + cache.string() + R"("]}})");
  const std::string before = tree_state(s.home, {"ws", ".cache"});
  for (int round = 1; round <= 2; ++round) {
    const RunResult r = run_process(
        {sandbox_binary(), "run", "--cwd", s.ws.string(), "--config", config.string(), "-c",
         "ls ~/.cache/go-build; echo " + std::to_string(round) + " > ~/.cache/go-build/r" +
             std::to_string(round) + "; echo ~/.cache/other > ~/.cache/other"},
        s.env());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, round == 1 ? "" : "r1\n");
  }
  EXPECT_EQ(list_dir(cache), (std::vector<std::string>{"r1", "r2"}));
  EXPECT_EQ(list_dir(s.home / ".cache"), std::vector<std::string>{"go-build"});
  EXPECT_EQ(tree_state(s.home, {"ws", ".cache"}), before);
  for (const auto& [entry, why] : std::vector<std::pair<std::string, std::string>>{
           {"/", "is the root of the host"},
           {s.home.string(), "is or contains the home " + s.home.string()},
           {(s.home / ".ssh").string(),
            "lies inside the protected path " + (s.home / ".ssh").string()},
           {(s.home / ".config").string(),
            "contains the protected path " + (s.home / ".config/git/config").string()}}) {
    write_file(config, R"({"filesystem": {"additionalAllowWrite": [")" + entry + R"("]}})");
    const RunResult refused = run_process({sandbox_binary(), "run", "--cwd", s.ws.string(),
                                           "--config", config.string(), "--", "/bin/true"},
                                          s.env());
    EXPECT_EQ(refused.exit_code, 125);
    EXPECT_EQ(refused.err, "pi-sandbox: filesystem.additionalAllowWrite: \"" + entry + "\" " + why +
                               "\nhint: list only cache directories there, such as "
                               "~/.cache/go-build, ~/.cargo/registry, ~/.npm or ~/.cache/pip "
                               "(docs/configuration.md)\n");
  }
}

// Row 6: only the protected names themselves are guarded; their parents are ordinary
// directories a command makes and uses (docs/security.md, "The guard").
TEST(RealMachine, ParentsOfProtectedNamesCanBeCreatedAndUsed) {
  Scratch s;
  make_repository(s.ws, "a.txt", s);
  const RunResult r = s.run(
      "mkdir -p .claude/worktrees && echo w > .claude/worktrees/w && mkdir -p .pi/notes && "
      "echo n > .pi/notes/n && cat .claude/worktrees/w .pi/notes/n; mkdir -p .claude/commands; "
      "echo '{}' > .pi/settings.json; echo '{}' > .claude/settings.local.json; sleep 0.2; "
      "echo done");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "w\nn\ndone\n");
  for (const char* rel : {".claude/commands", ".pi/settings.json", ".claude/settings.local.json"})
    EXPECT_NE(r.err.find("pi-sandbox: moved " + (s.ws / rel).string() + " to the quarantine"),
              std::string::npos)
        << rel << "\n"
        << r.err;
  EXPECT_EQ(list_dir(s.ws / ".claude"), std::vector<std::string>{"worktrees"});
  EXPECT_EQ(list_dir(s.ws / ".pi"), std::vector<std::string>{"notes"});
  EXPECT_EQ(read_file(s.ws / ".claude/worktrees/w"), "w\n");
  // Nothing is made for them: a fresh workspace stays empty, inside and out.
  Scratch fresh;
  const RunResult ls = fresh.run("ls -A");
  EXPECT_EQ(ls.out, "");
  EXPECT_EQ(list_dir(fresh.ws), std::vector<std::string>{});
}

// The host's /tmp itself is refused as a workspace: every sandbox gets a private one.
TEST(RealMachine, TmpItselfIsRefusedAsAWorkspace) {
  Scratch s;
  const RunResult r = s.run("echo x > lost", {}, fs::path("/tmp"));
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(r.err,
            "pi-sandbox: refusing the workspace \"/tmp\": every sandbox gets a private, empty "
            "/tmp, so what the command wrote there would be lost\nhint: use a directory inside "
            "it: mkdir /tmp/work && pi-sandbox run --cwd /tmp/work ...\n");
}

// A configured cache reached through a symlink is decided where it leads: refused inside
// ~/.ssh, and nothing made there.
TEST(RealMachine, AWritableCacheThroughASymlinkIsDecidedWhereItLeads) {
  Scratch s;
  fs::create_symlink(s.home / ".ssh", s.home / "cachelink");
  const fs::path config = s.root / "config.json";
  write_file(config, R"({"filesystem": {"additionalAllowWrite": [")" +
                         (s.home / "cachelink/newdir").string() + R"("]}})");
  const RunResult r = run_process({sandbox_binary(), "run", "--cwd", s.ws.string(), "--config",
                                   config.string(), "--", "/bin/true"},
                                  s.env());
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "pi-sandbox: filesystem.additionalAllowWrite: \"" + (s.home / ".ssh/newdir").string() +
                "\" lies inside the protected path " + (s.home / ".ssh").string());
  EXPECT_EQ(list_dir(s.home / ".ssh"), std::vector<std::string>{"id_rsa"});
}

// Row 7: a workspace in the private /tmp is warned about once, at start, and by `policy`.
TEST(RealMachine, AWorkspaceInThePrivateTmpIsWarnedAbout) {
  Scratch s;
  char tmpl[] = "/tmp/pi-sandbox-it-ws-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path ws = tmpl;
  const std::string warning =
      "pi-sandbox: warning: the workspace lies in /tmp, which is private to each command: what "
      "it writes there outside the workspace is discarded when it ends\n";
  const RunResult r = s.run("echo x > ../sibling-" + ws.filename().string() + "; echo ok", {}, ws);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "ok\n");
  EXPECT_EQ(stderr_lines(r.err), warning);
  EXPECT_FALSE(fs::exists(ws.parent_path() / ("sibling-" + ws.filename().string())));
  const RunResult policy = run_process({sandbox_binary(), "policy", "--cwd", ws.string()}, s.env());
  EXPECT_NE(policy.out.find("warning: the workspace lies in /tmp"), std::string::npos);
  fs::remove_all(ws);
}

}  // namespace
}  // namespace pisandbox::testing

namespace pisandbox::testing {
namespace {

// docs/security.md, "Credentials": a home holding every row of the table (a directory row
// holds one file); each reads empty, or is missing inside a masked directory, whether the
// workspace is the home or `filesystem.additionalAllowRead` lists it.
const std::vector<std::string> kCredentialFiles = {
    ".ssh/id_rsa",
    ".ssh/id_ecdsa",
    ".ssh/id_ecdsa_sk",
    ".ssh/id_ed25519",
    ".ssh/id_ed25519_sk",
    ".ssh/id_dsa",
    ".ssh/id_xmss",
    ".gnupg/private-keys-v1.d/ABCDEF.key",
    ".gnupg/secring.gpg",
    ".aws/credentials",
    ".config/gcloud/credentials.db",
    ".config/gcloud/access_tokens.db",
    ".config/gcloud/application_default_credentials.json",
    ".config/gcloud/legacy_credentials/me/adc.json",
    ".azure/msal_token_cache.json",
    ".azure/msal_token_cache.bin",
    ".azure/accessTokens.json",
    ".azure/service_principal_entries.json",
    ".kube/config",
    ".docker/config.json",
    ".git-credentials",
    ".netrc",
    ".config/gh/hosts.yml",
    ".pypirc",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".npmrc",
    ".pi/agent/auth.json",
    ".claude/.credentials.json",
    ".codex/auth.json"};

std::string plant_credentials(const Scratch& s) {
  std::string expected;
  for (const auto& name : kCredentialFiles) {
    const fs::path file = s.home / name;
    fs::create_directories(file.parent_path());
    write_file(file, "SECRET " + name + "\n");
    const bool in_masked_dir = name.starts_with(".gnupg/private-keys-v1.d/") ||
                               name.starts_with(".config/gcloud/legacy_credentials/");
    expected += in_masked_dir ? "cat: " + file.string() + ": No such file or directory\n" : "";
  }
  return expected;
}

std::string cat_each(const Scratch& s) {
  std::string command = "for f in";
  for (const auto& name : kCredentialFiles) command += " '" + (s.home / name).string() + "'";
  return command + "; do cat \"$f\"; done 2>&1; echo end";
}

TEST(RealMachine, EveryCredentialReadsEmptyWhenTheWorkspaceIsTheHome) {
  Scratch s;
  const std::string expected = plant_credentials(s);
  const RunResult r = s.run(cat_each(s), {}, s.home);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected + "end\n");
}

TEST(RealMachine, EveryCredentialReadsEmptyWhenAllowReadListsTheHome) {
  Scratch s;
  const std::string expected = plant_credentials(s);
  const fs::path config = s.root / "read-home.json";
  write_file(config,
             "{\"filesystem\": {\"additionalAllowRead\": [\"" + s.home.string() + "\"]}}\n");
  const RunResult r = s.run(cat_each(s), {"--config", config.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected + "end\n");
}

}  // namespace
}  // namespace pisandbox::testing

namespace pisandbox::testing {
namespace {

// docs/security.md, "Hard links and binds of a credential": a hard link to each credential of
// the table, made on the host before the command in the workspace, reads empty inside, cannot
// be written, is pointed out once on stderr and listed by `pi-sandbox policy`.
TEST(RealMachine, HardLinksOfEveryCredentialAreMaskedAndPointedOut) {
  Scratch s;
  plant_credentials(s);
  std::string command = "for f in";
  std::vector<std::string> expected_warnings;
  for (std::size_t i = 0; i < kCredentialFiles.size(); ++i) {
    const fs::path link = s.ws / "links" / std::to_string(i);
    fs::create_directories(link.parent_path());
    fs::create_hard_link(s.home / kCredentialFiles[i], link);
    command += " links/" + std::to_string(i);
    expected_warnings.push_back(
        "pi-sandbox: warning: " + link.string() + " is the credential " +
        (s.home / kCredentialFiles[i]).string() +
        " under another name (a hard link or a bind): masked as the credential "
        "is\n");
  }
  command += "; do cat \"$f\"; done; echo >> links/0 || echo refused; echo end";
  const RunResult r = s.run(command);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "refused\nend\n");
  for (const auto& warning : expected_warnings)
    EXPECT_NE(r.err.find(warning), std::string::npos) << warning << r.err;
  EXPECT_EQ(read_file(s.home / ".ssh/id_rsa"), "SECRET .ssh/id_rsa\n");
  const RunResult policy =
      run_process({sandbox_binary(), "policy", "--cwd", s.ws.string()}, s.env());
  const std::string line = "  concealed (the credential " + (s.home / ".aws/credentials").string() +
                           " under another name): " + (s.ws / "links/9").string() + "\n";
  EXPECT_NE(policy.out.find(line), std::string::npos) << policy.out;
}

// docs/security.md, "Handing a credential in": `filesystem.exposeCredentials` makes the named
// credential readable, read-only, with the home hidden and with the workspace = the home; every
// other credential stays masked, and `policy` says which is handed in.
TEST(RealMachine, ExposeCredentialsHandsInOnlyWhatItNames) {
  Scratch s;
  plant_credentials(s);
  const fs::path config = s.root / "expose.json";
  write_file(config, "{\"filesystem\": {\"exposeCredentials\": [\"~/.config/gh/hosts.yml\"]}}\n");
  const std::string hosts = (s.home / ".config/gh/hosts.yml").string();
  const std::string command = "cat '" + hosts + "' '" + (s.home / ".netrc").string() +
                              "'; (echo x >> '" + hosts + "') 2>/dev/null || echo refused";
  for (const auto& cwd : {s.ws, s.home}) {
    const RunResult r = s.run(command, {"--config", config.string()}, cwd);
    EXPECT_EQ(r.exit_code, 0) << cwd << r.err;
    EXPECT_EQ(r.out, "SECRET .config/gh/hosts.yml\nrefused\n") << cwd;
  }
  EXPECT_EQ(read_file(hosts), "SECRET .config/gh/hosts.yml\n");
  const RunResult policy = run_process(
      {sandbox_binary(), "policy", "--cwd", s.ws.string(), "--config", config.string()}, s.env());
  EXPECT_NE(policy.out.find("  handed in (credential, read-only): " + hosts +
                            "  # filesystem.exposeCredentials\n"),
            std::string::npos)
      << policy.out;
  // Anything else is refused by name.
  write_file(config, "{\"filesystem\": {\"exposeCredentials\": [\"~/.ssh/config\"]}}\n");
  const RunResult refused = s.run("true", {"--config", config.string()});
  EXPECT_EQ(refused.exit_code, 125);
  EXPECT_NE(refused.err.find("invalid pi-sandbox configuration: filesystem.exposeCredentials[0] "
                             "must be ~/ followed by a credential of the table in "
                             "docs/security.md, \"Credentials\" (a row, or a file under a "
                             "directory row): ~/.ssh/config"),
            std::string::npos)
      << refused.err;
}

}  // namespace
}  // namespace pisandbox::testing
