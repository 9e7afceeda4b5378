// pisandbox::sandbox::linux_ — one cgroup per sandbox: processes, memory and CPU limits.
//
// The command's whole tree is in the cgroup from its first instruction: with cgroup v2 the
// sandbox is cloned into it (clone3 CLONE_INTO_CGROUP); with v1 hierarchies pid 1 moves itself
// into each (join_own_cgroups(), writing 0 into descriptors of their `tasks` files that the
// supervisor opened) as the first thing it does after Go, before its network, its mounts and
// the command's fork. Kernel documents: cgroup-v2.rst ("pids", "memory.oom.group",
// "cgroup.kill", "Delegation"), cgroup-v1/cgroups.rst ("Attaching processes"),
// cgroup-v1/memory.rst ("oom_control"), cgroup-v1/pids.rst.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/unique_fd.hpp"
#include "policy/limits.hpp"

namespace pisandbox::sandbox::linux_ {

/// Where this process can make cgroups for its sandboxes.
///   kind: V2 (a writable, delegated cgroup2 directory with the pids and memory controllers),
///     V1 (writable directories of the v1 `pids` and `memory` hierarchies), or None.
///   v2: the directory children are created in (V2).
///   v1_pids, v1_memory, v1_cpu: this process's own directory in each v1 hierarchy (V1;
///     v1_cpu is empty when the cpu hierarchy is missing or not writable).
///   why_not: for None, why no cgroup can be used (one line, for `doctor` and the warning).
///   shared: for None, the cause is a cgroup v2 directory that holds other processes besides
///     pi-sandbox (the kernel's "no internal processes" rule), for `doctor`'s fix.
struct CgroupSupport {
  enum class Kind { None, V1, V2 };
  Kind kind = Kind::None;
  std::filesystem::path v2;
  std::filesystem::path v1_pids;
  std::filesystem::path v1_memory;
  std::filesystem::path v1_cpu;
  std::string why_not;
  bool shared = false;

  friend bool operator==(const CgroupSupport&, const CgroupSupport&) = default;
};

/// The cgroup v2 controllers the sandboxes' cgroups need in their parent's
/// `cgroup.subtree_control` (cgroup-v2.rst, "Enabling and Disabling").
///   required: without any of them the limits cannot be set (the sandbox's pids, memory);
///   optional: enabled where the parent has them, else left out (cpu, for cpu.weight).
struct V2Controllers {
  std::vector<std::string> required;
  std::vector<std::string> optional;
};

/// {required: pids, memory; optional: cpu}: what SandboxCgroup::create() writes limits into.
V2Controllers sandbox_controllers();

/// The name of the leaf cgroup a pi-sandbox process moves itself into below a delegated v2
/// directory: `pi-sandbox-<pid namespace inode>-<pid>-self`. The stale sweep of
/// SandboxCgroup::create() removes one whose process is gone, as it does sandboxes' cgroups.
std::string own_leaf_name();

/// Makes the cgroup v2 directory `dir` (where this process sits, or the parent of its own
/// leaf) give its children `controllers`, as a container runtime does in a delegated scope:
/// the kernel enables controllers for children only in a cgroup without processes of its own
/// (cgroup-v2.rst, "No Internal Process Constraint": writing `cgroup.subtree_control` fails
/// with EBUSY). So when that write fails with EBUSY and the only process in `dir`'s
/// `cgroup.procs` is this one, this process moves itself (writing its pid into `cgroup.procs`
/// moves all its threads) into a leaf `dir/<own_leaf_name()>` and enables them then. It never
/// moves another process. Call it before anything is forked: a child would be another process
/// in `dir`. Never fails: the result is V2 with `v2` = dir, or None with why_not:
///   - other processes in `dir` (their pids, at most three): shared = true, and why_not names
///     the kernel's rule and the fix (pi-sandbox started in a cgroup of its own, e.g. by
///     `systemd-run --user --scope -p Delegate=yes`, or docs/containers.md, "A cgroup without
///     systemd");
///   - any other failure: the call, the path and errno (`write("<dir>/cgroup.subtree_control",
///     "+pids +memory"): EACCES (Permission denied)`).
/// If another process enters `dir` between the move and the write (a second pi-sandbox
/// starting there), this process stays in its leaf and the result is None (shared); the
/// other one, alone there, then enables them, and probe_cgroups() sees it.
CgroupSupport delegate_v2(const std::filesystem::path& dir, const V2Controllers& controllers);

/// At the start of `run`, `serve` and `doctor`, before anything is forked: where this process
/// sits in a writable cgroup v2 directory with the pids and memory controllers that its
/// children cannot have yet, delegate_v2() with sandbox_controllers(). Nothing elsewhere (v1,
/// no cgroup2 mount, controllers already enabled). Never fails: what it could not do,
/// probe_cgroups() reports as None with the reason.
void prepare_cgroup_delegation();

/// Looks at /proc/self/cgroup and /proc/self/mountinfo (and, for v2, the directory's
/// `cgroup.subtree_control` and `cgroup.procs`; its parent when this process sits in its own
/// leaf, own_leaf_name()). Never fails: what it cannot use is None with the reason. V2 only
/// where `cgroup.subtree_control` already holds pids and memory (prepare_cgroup_delegation()).
CgroupSupport probe_cgroups();

/// probe_cgroups() with other cgroup v2 controllers than sandbox_controllers() (for the
/// tests: `hugetlb` where pids and memory are bound to v1); v1 is probed as above.
CgroupSupport probe_cgroups(const V2Controllers& controllers);

/// The text of a CgroupSupport for `doctor` and `policy`: "cgroup v1 (pids, memory, cpu)",
/// "cgroup v2 (/sys/fs/cgroup/user.slice/…)", or "none: <why>".
std::string describe(const CgroupSupport& support);

/// Which limit a command reached.
///   processes: a fork or clone failed at pids.max (the command saw EAGAIN);
///   memory: the OOM killer ran in the sandbox's cgroup (the whole sandbox was killed).
struct LimitsReached {
  bool processes = false;
  bool memory = false;
};

/// The cgroup (one directory per hierarchy) of one sandbox; removed when destroyed.
class SandboxCgroup {
 public:
  /// Creates the directories under `support` and writes `limits` into them (pids.max,
  /// memory.max + memory.swap.max + memory.oom.group, cpu.weight; v1: pids.max,
  /// memory.limit_in_bytes + memory.memsw.limit_in_bytes, cpu.shares). Errors name the
  /// file and errno; nothing is left behind on failure.
  static core::Result<SandboxCgroup> create(const CgroupSupport& support,
                                            const policy::ResourceLimits& limits);

  SandboxCgroup(SandboxCgroup&&) noexcept;
  SandboxCgroup& operator=(SandboxCgroup&&) = delete;
  SandboxCgroup(const SandboxCgroup&) = delete;
  ~SandboxCgroup();

  /// V2: a descriptor of the cgroup directory for clone3's CLONE_INTO_CGROUP; -1 for V1.
  [[nodiscard]] int clone_fd() const { return v2_fd_.get(); }
  /// V1: descriptors of the `tasks` file of each hierarchy's directory (write-only,
  /// close-on-exec, opened with this process's credentials), one per hierarchy, for pid 1's
  /// join_own_cgroups(); empty for V2.
  [[nodiscard]] std::vector<int> tasks_fds() const;
  /// A descriptor that becomes readable when the OOM killer runs in the cgroup (v1: an
  /// eventfd registered on memory.oom_control; v2: memory.events, POLLPRI); -1 if none.
  [[nodiscard]] int oom_fd() const { return oom_fd_.get(); }
  /// Called when oom_fd() is ready: whether the sandbox ran out of memory (then the caller
  /// kills it whole). Remembers it for reached().
  bool out_of_memory() const;
  /// What the cgroup's event counters say was reached so far.
  [[nodiscard]] LimitsReached reached() const;
  /// Kills every process in the cgroup (v2 cgroup.kill; v1 has none, and needs none: the
  /// sandbox's pid namespace ends with its pid 1).
  void kill_all() const;

 private:
  SandboxCgroup() = default;
  std::vector<std::filesystem::path> dirs_;  ///< created, removed in reverse order
  CgroupSupport::Kind kind_ = CgroupSupport::Kind::None;
  std::filesystem::path pids_, memory_;  ///< the directories holding the counters
  core::UniqueFd v2_fd_;
  std::vector<core::UniqueFd> tasks_;  ///< V1: each directory's `tasks`, opened write-only
  core::UniqueFd oom_fd_;
  mutable bool oom_seen_ = false;  ///< v1: under_oom was seen (the killer is off, see create())
};

/// Moves the calling thread into the cgroup of each of `tasks_fds` (SandboxCgroup::tasks_fds())
/// by writing "0" into it (cgroup-v1/cgroups.rst, "Attaching processes": 0 is the writer
/// itself). Called by pid 1 of the sandbox while it is single-threaded, so the whole process
/// moves, and before it forks: its children are born inside. A thread that moves itself
/// through `tasks` does not take the kernel's global cgroup_threadgroup_rwsem for writing
/// (kernel/cgroup/cgroup.c, cgroup_procs_write_start(); Linux commit 9a3284fad42f "cgroup:
/// Optimize single thread migration", in the stable kernels from 5.4 on), whose write lock
/// waits for an RCU grace period: writing another process's pid into `cgroup.procs` took 6-14
/// ms on this project's machines, this under 0.1 ms (older kernels wait here as they did for
/// the supervisor's write). Errors: `write(<fd> (cgroup v1 tasks),
/// "0")` with errno (EACCES when the file was opened by a user that does not own this
/// process, ENOSPC when pids.max is already reached).
core::Result<void> join_own_cgroups(std::span<const int> tasks_fds);

}  // namespace pisandbox::sandbox::linux_
