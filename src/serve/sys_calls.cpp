#include "serve/sys_calls.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace pisandbox::serve {

int OsSysCalls::pipe2(int (&ends)[2], int flags) {
  return ::pipe2(ends, flags);
}

int OsSysCalls::open(const char* path, int flags) {
  return ::open(path, flags);
}

int OsSysCalls::pidfd_open(pid_t pid) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

int OsSysCalls::fcntl(int fd, int command, int argument) {
  return ::fcntl(fd, command, argument);
}

int OsSysCalls::poll(pollfd* fds, nfds_t count, int timeout_ms) {
  return ::poll(fds, count, timeout_ms);
}

ssize_t OsSysCalls::read(int fd, void* buffer, std::size_t size) {
  return ::read(fd, buffer, size);
}

ssize_t OsSysCalls::write(int fd, const void* bytes, std::size_t size) {
  return ::write(fd, bytes, size);
}

int OsSysCalls::kill(pid_t pid, int signal) {
  return ::kill(pid, signal);
}

pid_t OsSysCalls::waitpid(pid_t pid, int* status, int options) {
  return ::waitpid(pid, status, options);
}

pid_t OsSysCalls::spawn(char* const argv[], char* const envp[], const int (&fds)[4]) {
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  // The worker dies with serve (and its sandbox with it: pid 1's own parent-death signal).
  // Only async-signal-safe calls until execve.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(1);
  // Moved above 9 first, so that dup2 cannot overwrite a descriptor still to be moved.
  int moved[4];
  for (int i = 0; i < 4; ++i)
    if ((moved[i] = ::fcntl(fds[i], F_DUPFD_CLOEXEC, 10)) < 0) ::_exit(127);
  for (int i = 0; i < 4; ++i)
    if (::dup2(moved[i], i) < 0) ::_exit(127);
  ::syscall(SYS_close_range, 4U, ~0U, 0U);  // nothing else of serve's reaches a worker
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(argv[0], argv, envp);
  ::_exit(127);
}

SysCalls& os_sys_calls() {
  static OsSysCalls calls;
  return calls;
}

bool write_all(SysCalls& sys, int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = sys.write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

pid_t wait_for(SysCalls& sys, pid_t pid, int* status) {
  pid_t got;
  while ((got = sys.waitpid(pid, status, 0)) < 0 && errno == EINTR) {
  }
  return got;
}

}  // namespace pisandbox::serve
