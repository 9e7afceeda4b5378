// The gate of a sandbox made ahead (docs/security.md, "A sandbox made ahead"): the command,
// handed over to the sandbox's pid 1 while the record of the host is still being compared,
// waits before its execve(2); a host that changed during the hand-over kills the sandbox with
// nothing of the command run.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "sandbox/linux/host_record.hpp"
#include "sandbox/linux/launcher.hpp"
#include "sandbox/linux/runner.hpp"
#include "session/session.hpp"

namespace pisandbox::session {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// A workspace and a configuration file in a scratch directory outside /tmp (when
/// PI_SANDBOX_TEST_TMPDIR says so), removed at the end.
struct Scratch {
  fs::path dir;
  fs::path ws;
  fs::path config;
  Scratch() {
    const char* base = std::getenv("PI_SANDBOX_TEST_TMPDIR");
    std::string pattern =
        (fs::path(base != nullptr ? base : fs::temp_directory_path().c_str()) / "gate.XXXXXX")
            .string();
    dir = ::mkdtemp(pattern.data());
    ws = dir / "ws";
    fs::create_directory(ws);
    config = dir / "config.json";
    std::ofstream(config) << "{}";
  }
  ~Scratch() {
    std::error_code error;
    fs::remove_all(dir, error);
  }
};

/// A sandbox made ahead for a command in `scratch`, its record taken past the clock tick of
/// the files' last change (as serve's worker does it: session::prepare_ready()).
/// A record is made again (up to ten times) while it is incomplete: a path it read changed
/// while it was taken (`/tmp`, which other tests write), which is no fault of the gate's.
std::shared_ptr<ReadyAhead> made_ahead(const Scratch& scratch) {
  RunArgs args;
  args.policy.cwd = scratch.ws.string();
  args.policy.config = scratch.config.string();
  args.argv = {"true"};
  std::shared_ptr<ReadyAhead> ready;
  for (int attempt = 0; attempt < 10; ++attempt) {
    std::this_thread::sleep_for(50ms);
    ready = prepare_ready(args);
    if (ready == nullptr || ready->offer->record.complete) break;
  }
  EXPECT_NE(ready, nullptr);
  if (ready == nullptr) return nullptr;
  EXPECT_TRUE(ready->offer->record.complete) << ready->offer->record.why;
  return ready;
}

/// A command that leaves a file in the workspace when it runs.
sandbox::Command marking(const Scratch& scratch) {
  return {{"/bin/sh", "-c", "echo ran > marker"}, scratch.ws, {"PATH=/usr/bin:/bin"}};
}

// The command waits at the gate: while the gate has not answered, nothing of it has run, even
// long after it was handed over; once the gate says yes, it runs.
TEST(ReadyGate, TheCommandWaitsAtTheGateUntilItOpens) {
  Scratch scratch;
  auto ready = made_ahead(scratch);
  ASSERT_NE(ready, nullptr);
  sandbox::RunOptions options;
  bool seen_before = true;
  options.gate = [&] {
    std::this_thread::sleep_for(300ms);
    seen_before = fs::exists(scratch.ws / "marker");
    return true;
  };
  const sandbox::Outcome outcome =
      sandbox::linux_::run_command(std::move(ready->offer->sandbox), marking(scratch), options);
  ASSERT_TRUE(outcome.has_value()) << outcome.error().message;
  EXPECT_EQ(*outcome, (std::variant<sandbox::Exited, sandbox::Signaled>(sandbox::Exited{0})));
  EXPECT_FALSE(seen_before);
  EXPECT_TRUE(fs::exists(scratch.ws / "marker"));
}

// The configuration edited after the command was handed over, before the record's comparison
// ended: the comparison sees it, and the sandbox made from the old configuration is killed
// with nothing of the command run (no marker), its pid 1 gone.
TEST(ReadyGate, AChangeMadeDuringTheHandOverIsCaught) {
  Scratch scratch;
  auto ready = made_ahead(scratch);
  ASSERT_NE(ready, nullptr);
  const pid_t pid1 = ready->offer->sandbox.pid();
  sandbox::RunOptions options;
  std::string why;
  options.gate = [&] {
    // Long enough for a command that did not wait to have run.
    std::this_thread::sleep_for(300ms);
    std::ofstream(scratch.config) << R"({"network": {"allowedDomains": ["example.com"]}})";
    return sandbox::linux_::host_unchanged(ready->offer->record, &why);
  };
  const sandbox::Outcome outcome =
      sandbox::linux_::run_command(std::move(ready->offer->sandbox), marking(scratch), options);
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().kind, sandbox::RunFailureKind::Stale);
  EXPECT_EQ(why, scratch.config.string() + ": changed");
  // The command's process had its order and waited at the gate: its end kills it unrun.
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(fs::exists(scratch.ws / "marker"));
  EXPECT_EQ(::kill(pid1, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

}  // namespace
}  // namespace pisandbox::session
