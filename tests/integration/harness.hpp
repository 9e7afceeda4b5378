// Helpers for integration tests: run the real pi-sandbox binary, make scratch workspaces,
// skip (or, with PI_SANDBOX_REQUIRE_ALL=1, fail) when a kernel feature is missing.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../unit/require.hpp"

namespace pisandbox::testing {

namespace fs = std::filesystem;

/// What a finished process left behind: its exit code (or 128+signal), stdout and stderr.
struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// The pi-sandbox binary under test: $PI_SANDBOX_BINARY, else the one CMake built.
std::string sandbox_binary();

/// Runs `argv` with `env` added to (and overriding) the current environment; stdin is
/// /dev/null. Waits for it to exit and returns its code and output.
RunResult run_process(const std::vector<std::string>& argv,
                      const std::map<std::string, std::string>& env = {});

/// Starts `argv` in the background (stdout/stderr to /dev/null); returns its pid.
pid_t spawn_process(const std::vector<std::string>& argv,
                    const std::map<std::string, std::string>& env = {});

/// Starts `argv` with its stdin and stdout as pipes (stderr inherited): `to_child` is the
/// write end of its stdin, `from_child` the read end of its stdout. Returns its pid.
pid_t spawn_piped(const std::vector<std::string>& argv,
                  const std::map<std::string, std::string>& env, int& to_child, int& from_child);

/// What a program run on a pseudo-terminal did.
struct PtyRun {
  int exit_code = -1;
  std::string screen;  ///< everything the program wrote to the terminal
};

/// Runs `argv` (with `env` added to the current environment) on a new pseudo-terminal,
/// which becomes its controlling terminal. For each (text, answer) of `script` in turn: waits
/// up to 20 s for `text` to appear on the screen after the previous answer, then types
/// `answer`. Then reads to the end and waits for the program.
PtyRun run_on_terminal(const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& env,
                       const std::vector<std::pair<std::string, std::string>>& script);

/// Waits for `pid` and returns its exit code or 128+signal.
int wait_process(pid_t pid);

/// True while a process whose command line contains `needle` exists (read from /proc).
bool process_running(const std::string& needle);

/// Waits until no process matching `needle` is left, up to `limit`; returns whether so.
bool wait_until_gone(const std::string& needle,
                     std::chrono::milliseconds limit = std::chrono::milliseconds(5000));

/// Reads a whole file ("" when missing).
std::string read_file(const fs::path& path);
void write_file(const fs::path& path, const std::string& text);

/// Names of the entries of `dir` (sorted), for "nothing left behind" checks.
std::vector<std::string> list_dir(const fs::path& dir);

// PI_SANDBOX_REQUIRE(condition, reason) and require_all(): the unit tests' one helper.

/// Whether the binary under test brokers Unix sockets on this kernel (`pi-sandbox doctor`'s
/// "Unix socket broker" line): then host sockets are refused with EACCES ("Permission denied")
/// by the broker, otherwise socket(AF_UNIX) fails with EPERM. Asked once.
bool unix_sockets_brokered();

/// Writes an executable reviewer program at `path` that denies a host socket
/// (`connect-unix`, rationale `no socket`) and allows anything else (a host run, rationale
/// `host run`): how a person who wants the command on the host answers the two questions of
/// a host-IPC retry after a refused socket.
void write_retry_only_reviewer(const fs::path& path);

/// The directory scratch trees are made in: $PI_SANDBOX_TEST_TMPDIR, else
/// $HOME/.cache/pi-sandbox-tests (not /tmp: a workspace there draws a warning on every run).
/// Throws std::runtime_error when neither is usable.
fs::path scratch_base();

/// A scratch directory tree for one test: `root` holds a fake `home` (with .ssh/id_rsa and
/// .gitconfig) and a workspace `home/ws`; removed afterwards.
class Scratch {
 public:
  Scratch();
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  fs::path root, home, ws;

  /// `pi-sandbox run --cwd <cwd> [extra] -c <command>` with HOME set to the fake home.
  RunResult run(const std::string& command, const std::vector<std::string>& extra = {},
                const std::optional<fs::path>& cwd = std::nullopt) const;
  /// The environment every run of this scratch gets.
  std::map<std::string, std::string> env() const;
};

}  // namespace pisandbox::testing
