// Resource limits (docs/security.md, "Resource limits"): a cgroup per command, or
// RLIMIT_NPROC without one. Every test that runs a fork bomb or a memory hog first proves
// that the limit is in force, and never runs the hog without it: the machine is shared with
// the test runner.
//
// PI_SANDBOX_TEST_LIMITS (set by scripts/test) says which mode this run of the suite tests:
// `cgroup` (the user has a cgroup of its own) or `rlimit` (it has none, on purpose). The
// tests of the other mode pass without running; without the variable the mode is read from
// `pi-sandbox policy --json`.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "harness.hpp"

namespace pisandbox::testing {
namespace {

using namespace std::chrono_literals;

enum class Mode { Cgroup, Rlimit };

Mode tested_mode() {
  if (const char* mode = ::getenv("PI_SANDBOX_TEST_LIMITS"))
    return std::string_view(mode) == "rlimit" ? Mode::Rlimit : Mode::Cgroup;
  Scratch s;
  const RunResult r =
      run_process({sandbox_binary(), "policy", "--cwd", s.ws.string(), "--json"}, s.env());
  const auto policy = nlohmann::json::parse(r.out, nullptr, false);
  const bool none =
      policy.is_object() && policy["limits"]["cgroup"].get<std::string>().starts_with("none");
  return none ? Mode::Rlimit : Mode::Cgroup;
}

/// The config file of a test: `limits` as given, in the scratch root (outside the workspace).
std::vector<std::string> with_limits(const Scratch& s, const std::string& limits) {
  const fs::path path = s.root / "limits.json";
  write_file(path, R"({"limits": )" + limits + "}");
  return {"--config", path.string()};
}

/// The directories named `pi-sandbox-*` in the cgroup hierarchies this process is in.
std::vector<std::string> sandbox_cgroups() {
  std::vector<std::string> found;
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find(':'), second = line.find(':', first + 1);
    std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    for (const char* controller : {"pids", "memory", "cpu"}) {
      std::istringstream names(controllers);
      std::string name;
      while (std::getline(names, name, ','))
        if (name == controller)
          for (const auto& entry :
               list_dir(fs::path("/sys/fs/cgroup") / controller / fs::path(path).relative_path()))
            if (entry.starts_with("pi-sandbox-")) found.push_back(entry);
    }
  }
  std::ranges::sort(found);
  return found;
}

/// Whether every cgroup named `name` (in each hierarchy where the sandbox makes one) has no
/// process left: cgroup.procs is empty.
bool cgroup_empty(const std::string& name) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find(':'), second = line.find(':', first + 1);
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    for (const char* controller : {"pids", "memory", "cpu"}) {
      std::istringstream names(controllers);
      std::string found;
      while (std::getline(names, found, ','))
        if (found == controller) {
          const fs::path procs = fs::path("/sys/fs/cgroup") / controller /
                                 fs::path(path).relative_path() / name / "cgroup.procs";
          if (fs::exists(procs) && !read_file(procs).empty()) return false;
        }
    }
  }
  return true;
}

#define REQUIRE_MODE(mode)                                                    \
  do {                                                                        \
    if (tested_mode() != (mode)) {                                            \
      GTEST_SUCCEED() << "this run of the suite tests the other limits mode"; \
      return;                                                                 \
    }                                                                         \
  } while (0)

/// A command that forks up to `n` children sleeping 30 s (python: a failed fork is one EAGAIN,
/// where bash would retry for seconds) and prints how many it started.
std::string fork_up_to(int n) {
  return "python3 -c 'import os, time\nn = 0\nfor i in range(" + std::to_string(n) +
         "):\n  try:\n    pid = os.fork()\n  except BlockingIOError:\n    break\n  if pid == "
         "0:\n    time.sleep(30)\n    os._exit(0)\n  n += 1\nprint(n)'";
}

/// Forks and reaps a child every 10 ms until `stop`; returns the latencies in milliseconds.
std::vector<double> probe_fork_latency(const std::atomic<bool>& stop) {
  std::vector<double> latencies;
  while (!stop) {
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    if (pid > 0) ::waitpid(pid, nullptr, 0);
    latencies.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    std::this_thread::sleep_for(10ms);
  }
  return latencies;
}

TEST(LimitsCgroup, TheProcessLimitHoldsThenAForkBombCostsTheHostNothing) {
  REQUIRE_MODE(Mode::Cgroup);
  Scratch s;
  const auto before = sandbox_cgroups();  // a supervisor killed by an earlier test may leave some
  const auto config = with_limits(s, R"({"maxProcesses": 128})");
  // The proof first: 200 sleepers, at most 128 tasks in the whole sandbox.
  auto proof = config;
  const RunResult limited = s.run(
      "cat /sys/fs/cgroup/pids$(awk -F: '$2==\"pids\"{print $3}' /proc/self/cgroup)/pids.max; " +
          fork_up_to(200),
      proof);
  ASSERT_EQ(limited.exit_code, 0) << limited.err;
  std::istringstream words(limited.out);
  std::string max;
  int started = 0;
  words >> max >> started;
  ASSERT_EQ(max, "128") << limited.out;
  ASSERT_LT(started, 128) << limited.out;
  ASSERT_GT(started, 100) << limited.out;

  std::atomic<bool> stop = false;
  std::vector<double> latencies;
  std::thread probe([&] { latencies = probe_fork_latency(stop); });
  const RunResult bomb = s.run("b(){ b | b & }; b; sleep 600", [&] {
    auto extra = config;
    extra.insert(extra.end(), {"--timeout", "5"});
    return extra;
  }());
  stop = true;
  probe.join();
  EXPECT_EQ(bomb.exit_code, 124);
  EXPECT_NE(bomb.err.find("pi-sandbox: command timed out after 5 seconds\n"), std::string::npos);
  ASSERT_GT(latencies.size(), 50u);
  std::ranges::sort(latencies);
  const double p99 = latencies[latencies.size() * 99 / 100];
  EXPECT_LT(p99, 100.0) << "the host's fork() p99 during the bomb, in ms";
  EXPECT_TRUE(wait_until_gone("sleep 600"));
  EXPECT_TRUE(std::ranges::includes(before, sandbox_cgroups())) << "a cgroup was left behind";
}

TEST(LimitsCgroup, AMemoryHogKillsOnlyItsSandboxWith137AndOneLine) {
  REQUIRE_MODE(Mode::Cgroup);
  Scratch s;
  const auto before = sandbox_cgroups();  // a supervisor killed by an earlier test may leave some
  const auto config = with_limits(s, R"({"memory": 134217728})");
  const RunResult proof = s.run(
      "cat /sys/fs/cgroup/memory$(awk -F: '$2==\"memory\"{print $3}' "
      "/proc/self/cgroup)/memory.limit_in_bytes",
      config);
  ASSERT_EQ(proof.out, "134217728\n") << proof.err;

  const pid_t canary = spawn_process({"/bin/sleep", "7341"});
  for (int i = 0; i < 100 && !process_running("sleep 7341"); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(process_running("sleep 7341"));
  const RunResult hog =
      s.run("python3 -c 'x = []\nwhile True: x.append(bytearray(8 << 20))'; echo survived", config);
  EXPECT_EQ(hog.exit_code, 137);
  EXPECT_EQ(hog.out, "");  // the whole sandbox died: the shell never echoed
  EXPECT_NE(hog.err.find("pi-sandbox: the command was killed: out of memory (limit 128 MiB)\n"),
            std::string::npos)
      << hog.err;
  EXPECT_TRUE(process_running("sleep 7341"));
  ::kill(canary, SIGKILL);
  wait_process(canary);
  EXPECT_TRUE(std::ranges::includes(before, sandbox_cgroups())) << "a cgroup was left behind";
}

TEST(LimitsCgroup, AllPrivateTmpfsShareOneBudgetAndFillingItIsEnospc) {
  REQUIRE_MODE(Mode::Cgroup);
  Scratch s;
  const auto config = with_limits(s, R"({"tmpfs": 33554432})");
  const RunResult r = s.run(
      "df -B1 --output=size /tmp | tail -1 | tr -d ' '; "
      "dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>&1 | grep -o 'No space left on device'; "
      "echo x > /var/tmp/more 2>&1 || echo var-tmp-full; echo y > ~/more || echo home-full",
      config);
  EXPECT_EQ(r.out, "33554432\nNo space left on device\nvar-tmp-full\nhome-full\n") << r.err;
}

/// The line after a command that left the tmpfs budget full (session::tmpfs_full_message()).
const std::string kTmpfsFull16 =
    "pi-sandbox: the sandbox's private tmpfs is full: the tmpfs budget of 16 MiB (limits.tmpfs), "
    "shared by "
    "/tmp, /var/tmp, /dev/shm and the hidden home's caches, was reached; raise limits.tmpfs in "
    "the configuration\n";

TEST(Limits, AFullTmpfsBudgetIsSaidOnceAfterTheCommandWithTheSetting) {
  // The budget is a tmpfs size, in force with or without a cgroup.
  Scratch s;
  const auto config = with_limits(s, R"({"tmpfs": 16777216})");
  const RunResult full =
      s.run("dd if=/dev/zero of=/tmp/fill bs=1M count=32 2>&1 | grep -o 'No space left on device'",
            config);
  EXPECT_EQ(full.out, "No space left on device\n") << full.err;
  EXPECT_NE(full.err.find(kTmpfsFull16), std::string::npos) << full.err;
  EXPECT_EQ(full.err.find(kTmpfsFull16), full.err.rfind(kTmpfsFull16)) << full.err;
  // The hidden home's share of the budget counts the same.
  const RunResult home =
      s.run("dd if=/dev/zero of=\"$HOME/fill\" bs=1M count=32 2>/dev/null; echo $?", config);
  EXPECT_EQ(home.out, "1\n");
  EXPECT_NE(home.err.find(kTmpfsFull16), std::string::npos) << home.err;
  // Room left at the end (4 of 16 MiB used, or the file removed again): no line.
  const RunResult room = s.run(
      "dd if=/dev/zero of=/tmp/some bs=1M count=4 2>/dev/null && "
      "dd if=/dev/zero of=/tmp/fill bs=1M count=32 2>/dev/null; rm /tmp/fill; echo done",
      config);
  EXPECT_EQ(room.out, "done\n");
  EXPECT_EQ(room.err.find("pi-sandbox: the sandbox's private tmpfs is full"), std::string::npos)
      << room.err;
}

TEST(LimitsCgroup, ACgroupLeftByAKilledSupervisorIsRemovedByTheNextRun) {
  REQUIRE_MODE(Mode::Cgroup);
  Scratch s;
  const auto before = sandbox_cgroups();
  const pid_t pid = spawn_process(
      {sandbox_binary(), "run", "--cwd", s.ws.string(), "--", "/bin/sleep", "6123"}, s.env());
  // "sleep 6123" is in pi-sandbox's own command line too: wait for its cgroup, not the name.
  // The cgroup is made while pid 1 sets up, before the command starts: wait for both.
  std::vector<std::string> made;
  for (int i = 0; i < 500 && (made.empty() || !process_running("sleep 6123")); ++i) {
    std::this_thread::sleep_for(10ms);
    made.clear();
    std::ranges::set_difference(sandbox_cgroups(), before, std::back_inserter(made));
  }
  ASSERT_FALSE(made.empty());
  ASSERT_TRUE(process_running("sleep 6123"));
  ::kill(pid, SIGKILL);
  wait_process(pid);
  ASSERT_TRUE(wait_until_gone("sleep 6123"));
  // pid 1 (its parent-death signal) kills the command, runs the guard's last sweep and exits;
  // until init has reaped it, the cgroup still holds it.
  for (int i = 0; i < 500 && !std::ranges::all_of(made, cgroup_empty); ++i)
    std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(std::ranges::all_of(made, cgroup_empty));
  // Nobody could remove it: its supervisor is gone.
  ASSERT_TRUE(std::ranges::includes(sandbox_cgroups(), made));
  EXPECT_EQ(s.run("true").exit_code, 0);
  const auto after = sandbox_cgroups();
  for (const auto& name : made) EXPECT_EQ(std::ranges::count(after, name), 0) << name;
}

TEST(LimitsRlimit, WithoutACgroupRlimitNprocBoundsTheProcessesAndOneLineSaysSo) {
  REQUIRE_MODE(Mode::Rlimit);
  PI_SANDBOX_REQUIRE(::geteuid() != 0, "RLIMIT_NPROC does not bind uid 0");
  Scratch s;
  const auto config = with_limits(s, R"({"maxProcesses": 40})");
  const RunResult r = s.run("ulimit -u; " + fork_up_to(60), config);
  EXPECT_EQ(r.exit_code, 0);
  std::istringstream words(r.out);
  std::string limit;
  int started = 0;
  words >> limit >> started;
  EXPECT_EQ(limit, "40");
  EXPECT_LT(started, 40);
  EXPECT_NE(r.err.find("pi-sandbox: warning: no cgroup for this command ("), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("only RLIMIT_NPROC limits its processes (40)"), std::string::npos) << r.err;
}

constexpr const char* kNoCgroupWarning = "pi-sandbox: warning: no cgroup for this command (";

/// How many times `text` holds the no-cgroup warning.
std::size_t no_cgroup_warnings(const std::string& text) {
  std::size_t count = 0;
  for (auto at = text.find(kNoCgroupWarning); at != std::string::npos;
       at = text.find(kNoCgroupWarning, at + 1))
    ++count;
  return count;
}

TEST(LimitsRlimit, RunSaysThereIsNoCgroupOnceADay) {
  REQUIRE_MODE(Mode::Rlimit);
  Scratch s;
  const fs::path stamp = s.home / ".local/state/pi-sandbox/no-cgroup";
  EXPECT_EQ(no_cgroup_warnings(s.run("true").err), 1u);
  ASSERT_TRUE(fs::exists(stamp));
  EXPECT_EQ(fs::status(stamp).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  const RunResult second = s.run("true");
  EXPECT_EQ(second.exit_code, 0);
  EXPECT_EQ(second.err, "");
  // A day later it is said again.
  fs::last_write_time(stamp, fs::file_time_type::clock::now() - std::chrono::hours(25));
  EXPECT_EQ(no_cgroup_warnings(s.run("true").err), 1u);
  EXPECT_EQ(no_cgroup_warnings(s.run("true").err), 0u);
  // $XDG_STATE_HOME, when absolute, holds the stamp instead.
  const fs::path state = s.root / "state";
  auto env = s.env();
  env["XDG_STATE_HOME"] = state.string();
  const auto run_with_state = [&] {
    return run_process({sandbox_binary(), "run", "--cwd", s.ws.string(), "--", "true"}, env);
  };
  EXPECT_EQ(no_cgroup_warnings(run_with_state().err), 1u);
  EXPECT_TRUE(fs::exists(state / "pi-sandbox/no-cgroup"));
  EXPECT_EQ(no_cgroup_warnings(run_with_state().err), 0u);
}

TEST(LimitsRlimit, DoctorGivesAFixThatWorksWithoutSystemd) {
  REQUIRE_MODE(Mode::Rlimit);
  Scratch s;
  const RunResult doctor = run_process({sandbox_binary(), "doctor"}, s.env());
  const bool systemd = read_file("/proc/1/comm") == "systemd\n";
  EXPECT_TRUE(doctor.out.contains(
      std::string("\n         fix: without it only RLIMIT_NPROC limits processes (not for root) "
                  "and nothing limits memory; ") +
      (systemd ? "run pi-sandbox in a delegated cgroup, e.g. `systemd-run --user --scope -p "
                 "Delegate=yes pi-sandbox ...`, or "
               : "") +
      "give this user a cgroup subtree of its own by hand (docs/containers.md, \"A cgroup "
      "without systemd\")\n"))
      << doctor.out;
  // The trial run's line has no copy of the warning: the cgroup has its own line.
  EXPECT_TRUE(doctor.out.contains("\nok       a sandboxed /bin/true: works\n")) << doctor.out;
  // doctor leaves no stamp: the next run still says it.
  EXPECT_FALSE(fs::exists(s.home / ".local/state/pi-sandbox/no-cgroup"));
}

TEST(LimitsRlimit, ServeSaysThereIsNoCgroupOncePerSession) {
  REQUIRE_MODE(Mode::Rlimit);
  Scratch s;
  // The stamp of `run` does not silence serve: each session says it once.
  write_file(s.home / ".local/state/pi-sandbox/no-cgroup", "");
  const auto session = [&s] {
    int to_serve = -1, from_serve = -1;
    const pid_t pid = spawn_piped({sandbox_binary(), "serve"}, s.env(), to_serve, from_serve);
    std::string stderr_text;
    std::string buffer;
    for (const std::string id : {"c1", "c2", "c3"}) {
      const std::string line =
          nlohmann::json{{"type", "exec"}, {"id", id}, {"command", "true"}, {"cwd", s.ws.string()}}
              .dump() +
          "\n";
      EXPECT_EQ(::write(to_serve, line.data(), line.size()), static_cast<ssize_t>(line.size()));
      for (bool exited = false; !exited;) {
        const auto lf = buffer.find('\n');
        if (lf == std::string::npos) {
          char chunk[4096];
          const ssize_t n = ::read(from_serve, chunk, sizeof chunk);
          if (n <= 0) break;
          buffer.append(chunk, static_cast<std::size_t>(n));
          continue;
        }
        const auto event = nlohmann::json::parse(buffer.substr(0, lf));
        buffer.erase(0, lf + 1);
        if (event["type"] == "output" && event["stream"] == "stderr")
          stderr_text += event["data"].get<std::string>();
        exited = event["type"] == "exit" && event["id"] == id;
      }
    }
    ::close(to_serve);
    wait_process(pid);
    ::close(from_serve);
    return stderr_text;
  };
  EXPECT_EQ(no_cgroup_warnings(session()), 1u);
  EXPECT_EQ(no_cgroup_warnings(session()), 1u);
}

}  // namespace
}  // namespace pisandbox::testing
