// pisandbox::serve::SysCalls — the system calls of serve's event loop and of the plumbing of
// its workers, behind one interface, so that a test can make any of them fail the way the
// kernel does (EMFILE, EAGAIN, EINTR, a short write) and watch serve handle it. The model is
// Envoy's `Api::OsSysCalls`: the real implementation by default, a test one derived from it.
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <cstddef>
#include <string_view>

namespace pisandbox::serve {

/// The calls serve makes, with the signatures and results of their man pages: -1 (or a
/// negative count) with errno set on failure. No method throws.
class SysCalls {
 public:
  virtual ~SysCalls() = default;

  /// pipe2(2): `ends` gets the read end, then the write end.
  virtual int pipe2(int (&ends)[2], int flags) = 0;
  /// open(2) of an existing file (no O_CREAT, so no mode).
  virtual int open(const char* path, int flags) = 0;
  /// pidfd_open(2): a descriptor that polls readable once `pid` has ended.
  virtual int pidfd_open(pid_t pid) = 0;
  /// fcntl(2) with an integer argument (F_GETFL, F_SETFL, F_DUPFD_CLOEXEC).
  virtual int fcntl(int fd, int command, int argument) = 0;
  /// poll(2); `timeout_ms` in milliseconds, -1 for none.
  virtual int poll(pollfd* fds, nfds_t count, int timeout_ms) = 0;
  /// read(2) of at most `size` bytes.
  virtual ssize_t read(int fd, void* buffer, std::size_t size) = 0;
  /// write(2) of at most `size` bytes; fewer may be written (a short write).
  virtual ssize_t write(int fd, const void* bytes, std::size_t size) = 0;
  /// kill(2).
  virtual int kill(pid_t pid, int signal) = 0;
  /// waitpid(2).
  virtual pid_t waitpid(pid_t pid, int* status, int options) = 0;
  /// fork(2), then in the child execve(2) of `argv[0]` with `argv` and `envp` (both ending in
  /// nullptr) and `fds` as its descriptors 0 to 3 (nothing else of serve's is inherited). The
  /// child dies with serve (PR_SET_DEATHSIG, prctl(2)); out of descriptors it ends at once
  /// with 127. The pid of the child, or -1 with fork's errno.
  virtual pid_t spawn(char* const argv[], char* const envp[], const int (&fds)[4]) = 0;
};

/// The calls of the operating system, one to one.
class OsSysCalls : public SysCalls {
 public:
  int pipe2(int (&ends)[2], int flags) override;
  int open(const char* path, int flags) override;
  int pidfd_open(pid_t pid) override;
  int fcntl(int fd, int command, int argument) override;
  int poll(pollfd* fds, nfds_t count, int timeout_ms) override;
  ssize_t read(int fd, void* buffer, std::size_t size) override;
  ssize_t write(int fd, const void* bytes, std::size_t size) override;
  int kill(pid_t pid, int signal) override;
  pid_t waitpid(pid_t pid, int* status, int options) override;
  pid_t spawn(char* const argv[], char* const envp[], const int (&fds)[4]) override;
};

/// The process-wide OsSysCalls.
[[nodiscard]] SysCalls& os_sys_calls();

/// Writes all of `bytes` to the blocking descriptor `fd` through `sys`, retrying on EINTR and
/// after a short write. False (errno set) when a write fails: the reader is gone (EPIPE, with
/// SIGPIPE ignored), or EAGAIN on a descriptor that turned out non-blocking. What was written
/// stays written.
bool write_all(SysCalls& sys, int fd, std::string_view bytes);

/// waitpid(2) of `pid` through `sys`, retrying on EINTR; the pid, or -1 with errno (ECHILD).
pid_t wait_for(SysCalls& sys, pid_t pid, int* status);

}  // namespace pisandbox::serve
