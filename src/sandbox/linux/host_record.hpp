// pisandbox::sandbox::linux_ — the record of every host input a computation reads, so that a
// result computed ahead (serve's sandbox made ahead) can be told still valid by comparing the
// record alone (docs/security.md, "A sandbox made ahead"; docs/ARCHITECTURE.md, "A sandbox made
// ahead").
//
// The record is complete by construction, not by the care of each call site: the computation
// runs once more in a forked child under a seccomp filter that traps every system call that
// names a host path (seccomp_unotify(2) is not needed: SECCOMP_RET_TRAP, seccomp(2)), and the
// child's SIGSYS handler records what each one names before it makes the call itself. A call
// that writes to the host, a file system whose timestamps the kernel does not keep for us
// (NFS, FUSE), a path that cannot be named, or a full record marks the record incomplete: it
// is then never used (fail closed).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace pisandbox::sandbox::linux_ {

/// What stat(2) said of one path: errno (0 when it exists) and, when it exists, the fields a
/// change of the file, of its name or of its content moves (inode(7): a write moves mtime and
/// ctime, a rename, chmod, chown, link or xattr change moves ctime; ctime cannot be set back
/// by a user). Times in nanoseconds since the epoch.
struct StatTuple {
  int error = 0;
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  std::uint32_t mode = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::uint64_t nlink = 0;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const StatTuple&) const = default;
};

/// One path a recorded computation read.
///   path: absolute, as the call named it (relative names joined to the directory they were
///     relative to). follow: stat(2) (true) or lstat(2) (false) is what the call saw.
///   seen / parent: the path's and its parent directory's StatTuple, taken just before the call.
///   content: for a call that reads it (an open, a readlink) of a regular file, or of any file
///     on a pseudo file system (proc(5), sysfs(5), cgroups(7)), where the tuple says nothing of
///     the content: the bytes read (a file, whole: one longer than 4 MiB makes the record
///     incomplete), the link's target or the directory's names; nullopt elsewhere. A regular
///     file's tuple alone would miss a write through a shared mapping whose page is already
///     dirty, which moves no time (mmap(2)).
///     The tuples of a pseudo file keep only errno, mode and owner (its inode and times are
///     the reading process's).
struct HostRead {
  std::string path;
  bool follow = true;
  StatTuple seen;
  StatTuple parent;
  std::optional<std::string> content;
  bool pseudo_seen = false;    ///< the path lies on a pseudo file system
  bool pseudo_parent = false;  ///< its parent does
  bool operator==(const HostRead&) const = default;
};

/// Every host input of one computation (record_host_reads()).
///   complete: every call that named a host path was recorded, on a file system that keeps
///     ctime; `why` says what made it incomplete otherwise.
///   started_ns: CLOCK_REALTIME when the computation started, nanoseconds.
///   total_ram: sysinfo(2)'s totalram × mem_unit when the computation asked for it, bytes.
struct HostRecord {
  std::vector<HostRead> reads;
  bool complete = false;
  std::string why;
  std::int64_t started_ns = 0;
  std::optional<std::uint64_t> total_ram;
};

/// Runs `compute` in a forked child under the recording filter (see above) and returns what
/// it read; `compute` returns whether it computed its result (false: the record is
/// incomplete, since the caller's own computation may take another way). That result is
/// discarded with the child; the caller computes again for
/// itself, after this returns, so that what it computed read the host no earlier than the
/// record (a change in between moves a ctime the record has). The calling process must be
/// single-threaded. Errors: `pipe2()`, `fork()` or `waitpid()` with errno, or the child's
/// death by a signal; a record the child could not complete is returned with complete false.
[[nodiscard]] core::Result<HostRecord> record_host_reads(const std::function<bool()>& compute);

/// Whether `record` may have missed a change made in the same clock tick as one of its reads
/// (file times are taken from the coarse clock: clock_getres(2) CLOCK_REALTIME_COARSE): a
/// recorded time less than two ticks before the record started. Such a record is taken again
/// once the tick has passed (git has the same "racy" files: gitformat-index(5)).
[[nodiscard]] bool racy(const HostRecord& record);

/// The time until a racy() record would not be racy any more, nanoseconds (0 when it is not).
[[nodiscard]] std::int64_t racy_for_ns(const HostRecord& record);

/// Whether the host is still as `record` saw it: every path's and parent's StatTuple equal,
/// every pseudo file's content equal, the machine's memory equal. Incomplete records never
/// hold. The first difference in `why` when given (`<path>: changed`).
[[nodiscard]] bool host_unchanged(const HostRecord& record, std::string* why = nullptr);

}  // namespace pisandbox::sandbox::linux_
