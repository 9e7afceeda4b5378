// Test names for unit tests that resolve host names (proxy_server_test, macos_runner_test): this
// test process gets a mount namespace of its own (and, unprivileged, a user namespace that maps
// it to root) in which `hosts` is bind-mounted over /etc/hosts, as the network integration tests
// give the supervisor a hosts file. Call it before main(), while the process has one thread
// (unshare(CLONE_NEWUSER) requires that), e.g. `const std::string kNoTestNames =
// use_private_hosts(kHosts);`.
#pragma once

#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace pisandbox::testing {

/// Mounts `hosts` over /etc/hosts in a private mount namespace. Returns "" when done, else why
/// not (the tests that need the names then skip with it).
inline std::string use_private_hosts(const std::string& hosts) {
  const auto write = [](const char* path, const std::string& text) {
    std::ofstream out(path);
    out << text;
    return static_cast<bool>(out);
  };
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  if (uid == 0) {
    if (::unshare(CLONE_NEWNS) != 0) return "unshare(CLONE_NEWNS) failed";
  } else {
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return "no user namespace";
    write("/proc/self/setgroups", "deny");
    if (!write("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
        !write("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1"))
      return "cannot map ids in the user namespace";
  }
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return "mount(MS_PRIVATE)";
  char path[] = "/tmp/pi-sandbox-test-hosts-XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) return "mkstemp";
  ::close(fd);
  if (!write(path, hosts)) return "write hosts";
  const bool mounted = ::mount(path, "/etc/hosts", nullptr, MS_BIND, nullptr) == 0;
  ::unlink(path);
  return mounted ? "" : "bind mount over /etc/hosts failed";
}

}  // namespace pisandbox::testing
