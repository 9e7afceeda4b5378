// pisandbox::policy — the resource limits of one sandbox (pure: no syscalls, no I/O).
//
// What a command may cost the host: processes (threads included), memory, the private
// temporary filesystems, CPU. The trusted configuration's `limits` section gives a
// LimitsSpec; resolve_limits() turns it into numbers for this machine. docs/configuration.md
// ("limits") and docs/security.md ("Resource limits") describe them.
#pragma once

#include <cstdint>
#include <string>

namespace pisandbox::policy {

/// A size: a number of bytes, or a percentage (1-100) of the machine's memory.
struct SizeLimit {
  enum class Unit { Bytes, Percent };
  Unit unit = Unit::Percent;
  std::uint64_t value = 0;

  /// As the configuration spells it: `"50%"` or `1073741824`.
  [[nodiscard]] std::string text() const;
  friend bool operator==(const SizeLimit&, const SizeLimit&) = default;
};

/// Defaults of the `limits` section.
inline constexpr std::uint64_t kDefaultMaxProcesses = 1024;
inline constexpr std::uint64_t kMinMaxProcesses = 8;          ///< pid 1, a shell and a pipeline
inline constexpr std::uint64_t kMaxMaxProcesses = 4'194'304;  ///< the kernel's PID_MAX_LIMIT
inline constexpr SizeLimit kDefaultMemory{SizeLimit::Unit::Percent, 50};
inline constexpr SizeLimit kDefaultTmpfs{SizeLimit::Unit::Percent, 25};
/// cgroup v2's cpu.weight scale (1-10000; a cgroup's default is 100): below the caller's.
inline constexpr std::uint32_t kDefaultCpuWeight = 50;
inline constexpr std::uint32_t kMaxCpuWeight = 10'000;
/// The smallest memory or tmpfs size in bytes: less cannot start a shell.
inline constexpr std::uint64_t kMinSizeBytes = 16ULL << 20;
/// The largest size in bytes (1 PiB): more is no limit at all, and a mistake.
inline constexpr std::uint64_t kMaxSizeBytes = 1ULL << 50;

/// The `limits` section as written (defaults filled in).
///   max_processes: processes and threads of the whole sandbox (pids.max; RLIMIT_NPROC).
///   memory: memory.max (v2) / memory.limit_in_bytes (v1), swap included.
///   tmpfs: one budget shared by the private /tmp, /var/tmp, /dev/shm and hidden home.
///   cpu_weight: cpu.weight (v2), or cpu.shares = weight * 1024 / 100 (v1).
struct LimitsSpec {
  std::uint64_t max_processes = kDefaultMaxProcesses;
  SizeLimit memory = kDefaultMemory;
  SizeLimit tmpfs = kDefaultTmpfs;
  std::uint32_t cpu_weight = kDefaultCpuWeight;
  friend bool operator==(const LimitsSpec&, const LimitsSpec&) = default;
};

/// The limits of one sandbox in numbers; sizes in bytes.
struct ResourceLimits {
  std::uint64_t max_processes = kDefaultMaxProcesses;
  std::uint64_t memory_bytes = 0;
  std::uint64_t tmpfs_bytes = 0;
  std::uint32_t cpu_weight = kDefaultCpuWeight;
  friend bool operator==(const ResourceLimits&, const ResourceLimits&) = default;
};

/// The limits for a machine with `machine_memory_bytes` of memory: percentages of it, bytes
/// as given; a size never below kMinSizeBytes nor, for tmpfs, above the memory limit (its
/// pages are charged to the sandbox's memory). Sizes are rounded down to whole 4 KiB pages.
ResourceLimits resolve_limits(const LimitsSpec& spec, std::uint64_t machine_memory_bytes);

/// `N MiB` (rounded down), as the messages print a size.
std::string mebibytes(std::uint64_t bytes);

}  // namespace pisandbox::policy
