// pisandbox::core — the phase trace of one `pi-sandbox run` (docs/benchmarks.md, "Phase
// trace"): CLOCK_MONOTONIC marks taken in the supervisor, in the sandbox's pid 1 and in the
// command's process just before exec, printed on stderr after the command when
// PI_SANDBOX_TRACE_PHASES=1.
//
// The marks live in a fixed array (no allocation, no lock): every mark is taken on the
// supervisor's main thread or in a process forked from it, and pid 1 and the command's
// process send theirs over the launch socket (LaunchMessage::Phases). CLOCK_MONOTONIC is
// one clock for every process of the machine (the sandbox gets no time namespace), so marks
// from all three compare directly (each phase is measured from the mark before it, see
// phase_start()). Off, mark() is one load and one branch.
#pragma once

#include <time.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace pisandbox::core::phases {

/// The points in the life of one command, in the order they happen. Each names the phase
/// that ends there (the time since the mark before it).
enum class Mark : std::uint8_t {
  Start,          ///< main() entered: the trace's zero
  ConfigRead,     ///< the trusted configuration read and parsed
  PolicyBuilt,    ///< the SandboxPolicy built (home, toolchains, protected paths)
  SessionReady,   ///< approvals, the network decider and the proxy's starter made
  Scanned,        ///< the workspace scanned for protected paths
  Planned,        ///< mount plan, Landlock rules, seccomp table, cgroup probe
  Checked,        ///< a sandbox made ahead (serve): found to still hold for the command
  Cloned,         ///< clone3 returned in the supervisor (new namespaces made)
  IdMapsWritten,  ///< uid/gid maps written: Go sent
  GoReceived,     ///< pid 1: Go received
  CgroupJoined,   ///< pid 1: it has moved itself into the v1 cgroups (nothing to do with v2
                  ///< or without a cgroup)
  NetworkUp,      ///< pid 1: loopback up, the proxy's listeners sent
  MountsApplied,  ///< pid 1: the mount plan applied and the root switched
  Forked,         ///< pid 1: the command ordered and its process forked
  Confined,       ///< the command's process: no_new_privs, Landlock, capabilities,
                  ///< seccomp done, just before exec
  CommandExited,  ///< pid 1: the command reaped
  SandboxGone,    ///< the supervisor: pid 1 reaped, the output drained
  GuardSwept,     ///< the guard's last sweep done (by pid 1, or by the supervisor when pid 1
                  ///< could not) and its lines told
  CleanedUp,      ///< host placeholders and the cgroup removed, limits read: launch() returned
  ExitSent,       ///< serve's worker: the `exit` event written to serve
  Count,
};

inline constexpr std::size_t kMarkCount = static_cast<std::size_t>(Mark::Count);

/// The phase that ends at `mark`, as printed (`pi-sandbox: phase <name> <ms>`).
inline constexpr std::array<std::string_view, kMarkCount> kPhaseNames = {
    "start",   "config",  "policy",   "session", "scan",    "plan",      "check",
    "clone",   "id-maps", "go",       "cgroup",  "network", "mounts",    "fork",
    "confine", "command", "teardown", "guard",   "cleanup", "exit-sent",
};

/// One mark: which, and when (CLOCK_MONOTONIC, nanoseconds).
struct Stamp {
  Mark mark;
  std::int64_t ns;
};

/// The marks of this process. Not thread-safe: only the supervisor's main thread and the
/// sandbox's single-threaded processes mark.
struct Trace {
  bool enabled = false;
  std::int64_t start_ns = 0;
  std::array<Stamp, 64> stamps{};
  std::size_t count = 0;
  std::size_t sent = 0;  ///< stamps before this index were sent (or belong to the parent)
};

inline Trace& trace() {
  static Trace t;
  return t;
}

inline std::int64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// Records `mark` at `ns` (a mark received from pid 1); dropped when the array is full, or when
/// taken before the trace's start (pid 1 of a sandbox made ahead marked its setup then).
inline void record(Mark mark, std::int64_t ns) {
  Trace& t = trace();
  if (!t.enabled || t.count == t.stamps.size() || ns < t.start_ns) return;
  t.stamps[t.count++] = {mark, ns};
}

/// Records `mark` now, when the trace is on.
inline void mark(Mark mark) {
  if (trace().enabled) record(mark, now_ns());
}

/// Remembers main()'s start (always: one clock read), so that a later enable() measures from
/// there.
inline void remember_start() {
  trace().start_ns = now_ns();
}

/// Turns the trace on when PI_SANDBOX_TRACE_PHASES=1 (`run`, and serve's worker, which runs
/// one command; not `serve` itself, which runs commands in several workers).
inline void enable_from_environment() {
  const char* value = std::getenv("PI_SANDBOX_TRACE_PHASES");
  if (value == nullptr || std::strcmp(value, "1") != 0) return;
  Trace& t = trace();
  t.enabled = true;
  if (t.start_ns == 0) t.start_ns = now_ns();
  record(Mark::Start, t.start_ns);
}

/// Starts the trace again from now, when it is on: serve's worker, whose command comes after
/// its sandbox was made ahead, measures from the command's arrival.
inline void restart() {
  Trace& t = trace();
  if (!t.enabled) return;
  t.count = t.sent = 0;
  t.start_ns = now_ns();
  record(Mark::Start, t.start_ns);
}

/// One line `pi-sandbox: phase-clock <name> <ns>` with CLOCK_MONOTONIC nanoseconds, which
/// compare across the processes of the machine (serve and its worker print these so that the
/// time between them can be measured); empty when the trace is off.
inline std::string clock_line(std::string_view name, std::int64_t ns) {
  if (!trace().enabled) return {};
  return "pi-sandbox: phase-clock " + std::string(name) + " " + std::to_string(ns) + "\n";
}

/// In a new process (pid 1, the command's process): forget the parent's marks, keep the
/// setting.
inline void forget_inherited() {
  trace().sent = trace().count;
}

/// The marks not sent yet, encoded for the launch socket (9 bytes each: the mark, then the
/// nanoseconds, little-endian as on the sender, which is the same machine); marks them sent.
/// Empty when the trace is off.
inline std::string take_unsent() {
  Trace& t = trace();
  std::string bytes;
  for (; t.sent < t.count; ++t.sent) {
    char record[1 + sizeof(std::int64_t)];
    record[0] = static_cast<char>(t.stamps[t.sent].mark);
    std::memcpy(record + 1, &t.stamps[t.sent].ns, sizeof(std::int64_t));
    bytes.append(record, sizeof record);
  }
  return bytes;
}

/// Records the marks of a take_unsent() text from another process; ignores a malformed one.
inline void receive(std::string_view bytes) {
  constexpr std::size_t kSize = 1 + sizeof(std::int64_t);
  if (bytes.size() % kSize != 0) return;
  for (std::size_t at = 0; at < bytes.size(); at += kSize) {
    const auto mark = static_cast<std::uint8_t>(bytes[at]);
    if (mark >= static_cast<std::uint8_t>(Mark::Count)) continue;
    std::int64_t ns = 0;
    std::memcpy(&ns, bytes.data() + at + 1, sizeof ns);
    record(static_cast<Mark>(mark), ns);
  }
}

/// The mark a phase starts from: the one before it in Mark's order that was taken.
inline const Stamp* phase_start(const std::array<const Stamp*, kMarkCount>& taken, Mark mark) {
  for (auto i = static_cast<std::size_t>(mark); i-- > 0;)
    if (taken[i] != nullptr) return taken[i];
  return nullptr;
}

/// The report: one line per phase taken, in Mark's order, `pi-sandbox: phase <name> <ms>` with
/// the milliseconds since its phase_start(), then `pi-sandbox: phase total <ms>` (main() to the
/// last mark). `fork` includes pid 1's wait for the command (for `run`, the supervisor's
/// guard start and command order after the clone). Empty when the trace is off.
inline std::string report() {
  const Trace& t = trace();
  if (!t.enabled || t.count == 0) return {};
  std::array<const Stamp*, kMarkCount> taken{};
  std::int64_t last = 0;
  for (std::size_t i = 0; i < t.count; ++i) {
    const Stamp& s = t.stamps[i];
    if (taken[static_cast<std::size_t>(s.mark)] == nullptr)
      taken[static_cast<std::size_t>(s.mark)] = &s;
    last = std::max(last, s.ns);
  }
  if (taken[0] == nullptr) return {};
  std::string lines;
  const auto line = [&lines](std::string_view name, std::int64_t ns) {
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.3f", static_cast<double>(ns) / 1e6);
    lines += "pi-sandbox: phase " + std::string(name) + " " + ms + "\n";
  };
  for (std::size_t i = 1; i < kMarkCount; ++i) {
    const Stamp* start = phase_start(taken, static_cast<Mark>(i));
    if (taken[i] != nullptr && start != nullptr) line(kPhaseNames[i], taken[i]->ns - start->ns);
  }
  line("total", last - taken[0]->ns);
  return lines;
}

}  // namespace pisandbox::core::phases
