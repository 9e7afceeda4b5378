// pid 1 of a sandbox. Everything here runs after a fork-like clone3 of a single-threaded
// supervisor, so allocation is safe; errors are reported over the launch socket.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "core/phase_trace.hpp"
#include "core/scm_rights.hpp"
#include "core/unique_fd.hpp"
#include "sandbox/linux/capabilities.hpp"
#include "sandbox/linux/launch_spec.hpp"
#include "sandbox/linux/mounts.hpp"
#include "sandbox/linux/program_pages.hpp"
#include "sandbox/linux/unix_wire.hpp"

namespace pisandbox::sandbox::linux_ {

namespace {

void send(int fd, LaunchMessage type, const std::string& text) {
  std::string record(1, static_cast<char>(type));
  record += text;
  (void)::send(fd, record.data(), record.size(), MSG_NOSIGNAL);
}

/// Marks `mark` and sends this process's unsent phase marks (nothing when the trace is off).
void send_phases(int launch_fd, core::phases::Mark mark) {
  core::phases::mark(mark);
  if (const std::string marks = core::phases::take_unsent(); !marks.empty())
    send(launch_fd, LaunchMessage::Phases, marks);
}

/// A TCP socket listening on `address`:`port` of the sandbox's loopback.
core::Result<core::UniqueFd> listen_on(int family, int port) {
  core::UniqueFd sock(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock) return core::fail_errno(family == AF_INET ? "socket(AF_INET)" : "socket(AF_INET6)");
  const int one = 1;
  (void)::setsockopt(sock.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage storage{};
  socklen_t length = 0;
  std::string name;
  if (family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(static_cast<std::uint16_t>(port));
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    length = sizeof *in;
    name = "127.0.0.1:" + std::to_string(port);
  } else {
    (void)::setsockopt(sock.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<std::uint16_t>(port));
    in6->sin6_addr = in6addr_loopback;
    length = sizeof *in6;
    name = "[::1]:" + std::to_string(port);
  }
  if (::bind(sock.get(), reinterpret_cast<sockaddr*>(&storage), length) != 0)
    return core::fail_errno("bind(" + name + ")");
  if (::listen(sock.get(), SOMAXCONN) != 0) return core::fail_errno("listen(" + name + ")");
  return sock;
}

/// Sends one record of `type` with `fds` as SCM_RIGHTS descriptors.
core::Result<void> send_descriptors(int launch_fd, LaunchMessage type, const std::string& text,
                                    const std::vector<int>& fds, const std::string& what) {
  std::string record(1, static_cast<char>(type));
  record += text;
  if (core::send_with_rights(launch_fd, record.data(), record.size(), fds) < 0)
    return core::fail_errno("sendmsg(SCM_RIGHTS) of " + what);
  return {};
}

/// Creates the proxy's listeners on the loopback and hands them to the supervisor
/// (docs/network.md, "The bridge"; docs/cases.md, C-06): they exist before the command's first
/// instruction, so no connection can race them. IPv4 is required; [::1] is added when the
/// kernel has IPv6. pid 1 keeps no copy.
core::Result<void> pass_proxy_listeners(int launch_fd) {
  std::vector<core::UniqueFd> fds;
  std::string kinds;
  for (const auto& [port, kind] :
       {std::pair{kHttpProxyPort, 'h'}, std::pair{kSocksProxyPort, 's'}}) {
    auto v4 = listen_on(AF_INET, port);
    if (!v4) return std::unexpected(v4.error());
    fds.push_back(std::move(*v4));
    kinds += kind;
    if (auto v6 = listen_on(AF_INET6, port); v6) {
      fds.push_back(std::move(*v6));
      kinds += kind;
    }
  }
  std::vector<int> numbers;
  for (const auto& fd : fds) numbers.push_back(fd.get());
  return send_descriptors(launch_fd, LaunchMessage::Listeners, kinds, numbers,
                          "the proxy listeners");
}

/// Makes the command's private pty (docs/security.md, "The terminal") and sends its master
/// to the supervisor, which relays it to the caller's terminal; returns the slave, which
/// pid 1 holds only until the command is forked.
core::Result<core::UniqueFd> pass_private_pty(int launch_fd, const PtySetup& setup) {
  auto pty = open_private_pty(setup);
  if (!pty) return std::unexpected(pty.error());
  if (auto r = send_descriptors(launch_fd, LaunchMessage::Terminal, "", {pty->master.get()},
                                "the pty's master");
      !r)
    return std::unexpected(r.error());
  return std::move(pty->slave);
}

/// The non-loopback `nameserver` addresses of resolv.conf(5) `text`, IPv4 and IPv6, as given.
std::vector<std::string> nameservers(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!line.starts_with("nameserver")) continue;
    line.remove_prefix(10);
    const std::size_t start = line.find_first_not_of(" \t");
    if (start == 0 || start == std::string_view::npos) continue;
    line.remove_prefix(start);
    const std::string address(line.substr(0, line.find_first_of(" \t\r#;")));
    if (address.starts_with("127.") || address == "::1") continue;
    out.push_back(address);
  }
  return out;
}

/// One address of a name server made local on the loopback: `label` for IPv4 (`lo:N`), with
/// a /32 mask (SIOCSIFADDR alone would give 10.x its class A /8); /128 for IPv6.
void make_local(const std::string& address, const std::string& label) {
  in_addr v4{};
  in6_addr v6{};
  if (::inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    core::UniqueFd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    ifreq request{};
    std::strncpy(request.ifr_name, label.c_str(), IFNAMSIZ - 1);
    auto* in = reinterpret_cast<sockaddr_in*>(&request.ifr_addr);
    in->sin_family = AF_INET;
    in->sin_addr = v4;
    if (!sock || ::ioctl(sock.get(), SIOCSIFADDR, &request) != 0) return;
    in->sin_addr.s_addr = INADDR_NONE;  // 255.255.255.255
    (void)::ioctl(sock.get(), SIOCSIFNETMASK, &request);
  } else if (::inet_pton(AF_INET6, address.c_str(), &v6) == 1) {
    core::UniqueFd sock(::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    // struct in6_ifreq of <linux/ipv6.h>, which clashes with <netinet/in.h>.
    struct {
      in6_addr addr;
      std::uint32_t prefix_length;
      int index;
    } request{v6, 128, static_cast<int>(::if_nametoindex("lo"))};
    if (sock && request.index != 0) (void)::ioctl(sock.get(), SIOCSIFADDR, &request);
  }
}

/// Makes the host's name servers (its /etc/resolv.conf, read before the mount plan) local
/// addresses of the sandbox's loopback, where nothing listens: a name lookup inside fails at
/// once with ECONNREFUSED, as it did with ENETUNREACH, but is counted as `Udp: NoPorts`, not as
/// `Ip: OutNoRoutes`, so that the hint after the command is for connections only
/// (docs/network.md, "Clients that ignore the proxy"). Best effort: a failure leaves the
/// lookup unroutable, as before.
void local_name_servers() {
  const core::UniqueFd file(::open("/etc/resolv.conf", O_RDONLY | O_CLOEXEC));
  if (!file) return;
  std::string text;
  char buffer[4096];
  for (ssize_t n; text.size() < 65536 && (n = ::read(file.get(), buffer, sizeof buffer)) > 0;)
    text.append(buffer, static_cast<std::size_t>(n));
  int label = 0;
  for (const auto& address : nameservers(text))
    make_local(address, "lo:" + std::to_string(++label));
}

core::Result<void> loopback_up() {
  core::UniqueFd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!sock) return core::fail_errno("socket(AF_INET) for the loopback");
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  if (::ioctl(sock.get(), SIOCGIFFLAGS, &request) != 0)
    return core::fail_errno("ioctl(\"lo\", SIOCGIFFLAGS)");
  request.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (::ioctl(sock.get(), SIOCSIFFLAGS, &request) != 0)
    return core::fail_errno("ioctl(\"lo\", SIOCSIFFLAGS)");
  return {};
}

/// The st_dev of every private tmpfs of the plan (/tmp, /var/tmp, /dev, /dev/shm, the home
/// layer, ...), as "<dev> <dev> ...": a socket file there can only have been bound by the
/// sandbox (unix_broker.hpp).
std::string private_devices(const MountPlan& plan) {
  std::string text;
  for (const auto& op : plan.ops) {
    struct stat st {};
    if (op.kind != MountOpKind::Tmpfs || ::stat(op.target.c_str(), &st) != 0) continue;
    text += std::to_string(st.st_dev) + " ";
  }
  return text;
}

/// The caller's soft RLIMIT_NOFILE, kept when pid 1 lifts its own (lift_descriptor_limit());
/// RLIM_INFINITY when it was not lifted.
rlim_t g_caller_descriptor_limit = RLIM_INFINITY;

/// Lifts pid 1's soft RLIMIT_NOFILE to the hard one: applying the mount plan holds a descriptor
/// for each bind's source until the root is switched, and a workspace of many repositories has
/// hundreds of them (setrlimit(2)). The command gets the caller's limit back (confine()).
void lift_descriptor_limit() {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur >= files.rlim_max) return;
  const rlim_t caller = files.rlim_cur;
  files.rlim_cur = files.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &files) == 0) g_caller_descriptor_limit = caller;
}

/// The caller's soft RLIMIT_NOFILE again, when pid 1 lifted it (a program that uses select(2)
/// expects the usual 1024).
core::Result<void> restore_descriptor_limit() {
  if (g_caller_descriptor_limit == RLIM_INFINITY) return {};
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0) return core::fail_errno("getrlimit(RLIMIT_NOFILE)");
  files.rlim_cur = g_caller_descriptor_limit;
  if (::setrlimit(RLIMIT_NOFILE, &files) != 0)
    return core::fail_errno("setrlimit(RLIMIT_NOFILE, " + std::to_string(files.rlim_cur) + ")");
  return {};
}

/// The helper of the Unix-socket broker (unix_wire.hpp), started between Landlock and seccomp
/// so that it shares the command's Landlock domain (scoped abstract sockets of the command are
/// its own), by a double fork so that it is pid 1's child, never one the command could wait
/// for. Returns the supervisor's end of its channel.
core::Result<core::UniqueFd> start_unix_helper() {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    return core::fail_errno("socketpair(AF_UNIX) for the Unix-socket helper");
  core::UniqueFd ours(pair[0]), theirs(pair[1]);
  const pid_t middle = ::fork();
  if (middle < 0) return core::fail_errno("fork() of the Unix-socket helper");
  if (middle == 0) {
    if (::fork() != 0) ::_exit(0);
    // Its own session: no terminal, no signal of the command's process group reaches it.
    ::setsid();
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int target = 0; target < 3; ++target) (void)::dup2(null, target);
    if (::dup2(theirs.get(), 3) != 3) ::_exit(125);
    ::syscall(SYS_close_range, 4U, ~0U, 0U);
    if (!apply_seccomp(seccomp_rules(UnixSockets::Refused))) ::_exit(125);
    ::prctl(PR_SET_DUMPABLE, 0);
    run_unix_helper(3);
  }
  while (::waitpid(middle, nullptr, 0) < 0 && errno == EINTR) {
  }
  return ours;
}

/// With a Unix-socket broker (seccomp rules with Notify rows): starts its helper, loads the
/// filter with its listener and sends both to the supervisor (LaunchMessage::UnixBroker), so
/// that every bind() and connect() of the command waits for the supervisor.
core::Result<void> broker_unix_sockets(const LaunchSpec& spec, int launch_fd) {
  auto helper = start_unix_helper();
  if (!helper) return std::unexpected(helper.error());
  auto listener = apply_seccomp(spec.seccomp);
  if (!listener) return std::unexpected(listener.error());
  return send_descriptors(launch_fd, LaunchMessage::UnixBroker, private_devices(spec.mounts),
                          {helper->get(), listener->get()}, "the Unix-socket broker");
}

}  // namespace

/// The confinement of the command, in this order (docs/security.md, "Layers, in the order
/// they are applied"):
/// 1. no_new_privs: required by unprivileged Landlock and seccomp, and no setuid gains;
/// 2. Landlock: needs open(2) of the rule paths, so before seccomp;
/// 3. capabilities dropped: after the steps above, which need none of them;
/// 4. seccomp last: it removes syscalls (mount, ...) that nothing after it may use (with a
///    Unix-socket broker, its helper starts just before: confined alike, without the listener).
/// First of all, the caller's soft RLIMIT_NOFILE comes back (pid 1 lifted its own).
core::Result<void> confine(const LaunchSpec& spec, int launch_fd) {
  if (auto r = restore_descriptor_limit(); !r) return r;
  // Without a cgroup, RLIMIT_NPROC bounds the command's processes: counted per user in the
  // sandbox's own user namespace (ucounts), so the host's other processes of this user do
  // not use it up. It does not bind uid 0 (which the sandbox maps to itself).
  if (spec.rlimit_nproc != 0) {
    const rlimit limit{spec.rlimit_nproc, spec.rlimit_nproc};
    if (::setrlimit(RLIMIT_NPROC, &limit) != 0)
      return core::fail_errno("setrlimit(RLIMIT_NPROC, " + std::to_string(spec.rlimit_nproc) + ")");
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return core::fail_errno("prctl(PR_SET_NO_NEW_PRIVS)");
  if (spec.landlock_abi > 0)
    if (auto r = apply_landlock(spec.landlock, spec.landlock_abi); !r) return r;
  if (auto r = drop_capabilities(); !r) return r;
  if (has_notify_rows(spec.seccomp)) return broker_unix_sockets(spec, launch_fd);
  if (auto loaded = apply_seccomp(spec.seccomp); !loaded) return std::unexpected(loaded.error());
  return {};
}

namespace {

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

/// The command's PATH (from its own environment), or the POSIX default.
std::string search_path(const Command& command) {
  for (const auto& entry : command.env)
    if (entry.starts_with("PATH=")) return entry.substr(5);
  return "/usr/local/bin:/usr/bin:/bin";
}

/// Executes argv[0], searching PATH as a shell does when it has no slash; returns errno only
/// on failure: ENOENT when no PATH entry has it (exit 127, "command not found"), otherwise
/// the error of the first entry that has it but cannot run it (exit 126). Unlike
/// execvpe(3), an unreadable PATH directory (EACCES) does not hide a later match or turn
/// "not found" into "permission denied".
int exec_in_path(const Command& command, std::vector<char*>& argv, std::vector<char*>& envp) {
  const std::string& program = command.argv[0];
  if (program.find('/') != std::string::npos) {
    ::execve(program.c_str(), argv.data(), envp.data());
    return errno;
  }
  int found_error = 0;
  const std::string path = search_path(command);
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find(':', start), path.size());
    const std::string dir = end > start ? path.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + program;
    ::execve(candidate.c_str(), argv.data(), envp.data());
    const int exec_error = errno;
    struct stat st {};
    if (found_error == 0 && ::stat(candidate.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
      found_error = exec_error;
    start = end + 1;
  }
  return found_error != 0 ? found_error : ENOENT;
}

/// What the supervisor sends for the command (LaunchMessage::Command): the command, the
/// descriptors that replace its stdin, stdout and stderr (unset: pid 1's own, inherited from
/// the supervisor at the clone), for a private pty its setup, and the gate that holds the
/// command before its execve(2) when there is one.
struct CommandOrder {
  Command command;
  std::array<core::UniqueFd, 3> stdio;
  std::optional<PtySetup> pty;
  core::UniqueFd record;  ///< the memfd the command came in, passed on to a process made ahead
  core::UniqueFd gate;    ///< the command's end of the gate (RunOptions::gate), or unset
};

/// The whole of `fd` from offset 0 (the memfd of a Command record, whose offset the supervisor
/// has left at its end).
core::Result<std::string> read_whole(int fd) {
  std::string bytes;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, static_cast<off_t>(bytes.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return core::fail_errno("pread() of the command's record");
    if (n == 0) return bytes;
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
}

/// Parses the memfd's bytes (launch_spec.hpp, LaunchMessage::Command).
core::Result<void> parse_command(const std::string& bytes, CommandOrder& order) {
  std::size_t at = 0;
  const auto next = [&](std::string& out) {
    const std::size_t end = bytes.find('\0', at);
    if (end == std::string::npos) return false;
    out = bytes.substr(at, end - at);
    at = end + 1;
    return true;
  };
  const auto strings = [&](std::vector<std::string>& out) {
    std::string count;
    if (!next(count)) return false;
    for (unsigned long n = std::strtoul(count.c_str(), nullptr, 10); n > 0; --n)
      if (!next(out.emplace_back())) return false;
    return true;
  };
  std::string cwd;
  if (!next(cwd) || !strings(order.command.argv) || !strings(order.command.env) ||
      order.command.argv.empty() || at >= bytes.size())
    return core::fail("a malformed command record");
  order.command.cwd = cwd;
  if (bytes[at] == '1') {
    if (bytes.size() - at - 1 != sizeof(PtySetup)) return core::fail("a malformed command record");
    PtySetup setup;
    std::memcpy(&setup, bytes.data() + at + 1, sizeof setup);
    order.pty = setup;
  }
  return {};
}

/// Waits for the supervisor's Command record; an error when the supervisor has gone (or
/// discarded this sandbox unused: it shuts the socket down) or the record is malformed.
core::Result<CommandOrder> receive_command(int launch_fd) {
  char buffer[16];
  iovec data{buffer, sizeof buffer};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 5)];
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t n;
  while ((n = ::recvmsg(launch_fd, &message, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  std::vector<core::UniqueFd> fds = core::received_rights(message);
  if (n != 5 || buffer[0] != static_cast<char>(LaunchMessage::Command))
    return core::fail("the supervisor sent no command");
  std::size_t wanted = 1;
  for (int i = 1; i < 5; ++i) wanted += buffer[i] == '1' ? 1 : 0;
  if (fds.size() != wanted) return core::fail("a malformed command record");
  CommandOrder order;
  auto bytes = read_whole(fds[0].get());
  if (!bytes) return std::unexpected(bytes.error());
  if (auto parsed = parse_command(*bytes, order); !parsed) return std::unexpected(parsed.error());
  std::size_t next = 1;
  for (std::size_t i = 0; i < 3; ++i)
    if (buffer[i + 1] == '1') order.stdio[i] = std::move(fds[next++]);
  if (buffer[4] == '1') order.gate = std::move(fds[next]);
  order.record = std::move(fds[0]);
  return order;
}

/// Passes `order` on to the command's process made ahead over `channel`, as the supervisor sent
/// it (the memfd, then the stdio descriptors given); false when that process has gone.
bool pass_order(int channel, const CommandOrder& order) {
  std::string record(1, static_cast<char>(LaunchMessage::Command));
  std::vector<int> fds{order.record.get()};
  for (const auto* fd : {&order.stdio[0], &order.stdio[1], &order.stdio[2], &order.gate}) {
    record += *fd ? '1' : '0';
    if (*fd) fds.push_back(fd->get());
  }
  return core::send_with_rights(channel, record.data(), record.size(), fds) >= 0;
}

/// Makes `slave` the controlling terminal of a new session and the command's stdin, stdout
/// and stderr where `setup` says so (before confine(), so that the Landlock grant for stdio
/// terminals names the slave and no descriptor of the caller's terminal is left there).
core::Result<void> attach_private_pty(const PtySetup& setup, int slave) {
  if (auto r = take_controlling_terminal(slave); !r) return r;
  for (int target = 0; target < 3; ++target)
    if (setup.slave[static_cast<std::size_t>(target)] && ::dup2(slave, target) < 0)
      return core::fail_errno("dup2(the private pty, " + std::to_string(target) + ")");
  return {};
}

}  // namespace

namespace {

/// The command's process starts with no signal blocked or ignored (pid 1 blocks and ignores
/// some of its own).
void default_signals() {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
}

/// The command's directory; on failure the Error record and exit 125.
void enter_directory(const Command& command, int launch_fd) {
  if (::chdir(command.cwd.c_str()) == 0) return;
  send(launch_fd, LaunchMessage::Error,
       core::sys_error("chdir(\"" + command.cwd.string() + "\")", errno).describe());
  ::_exit(125);
}

/// confine(); on failure the Error record and exit 125.
void confine_or_exit(const LaunchSpec& spec, int launch_fd) {
  if (auto r = confine(spec, launch_fd); !r) {
    send(launch_fd, LaunchMessage::Error, r.error().describe());
    ::_exit(125);
  }
  send_phases(launch_fd, core::phases::Mark::Confined);
}

[[noreturn]] void exec_order(const CommandOrder& order, int launch_fd);

}  // namespace

[[noreturn]] static void exec_command(const LaunchSpec& spec, const CommandOrder& order,
                                      int launch_fd, int slave) {
  default_signals();
  enter_directory(order.command, launch_fd);
  if (order.pty)
    if (auto r = attach_private_pty(*order.pty, slave); !r) {
      send(launch_fd, LaunchMessage::Error, r.error().describe());
      ::_exit(125);
    }
  confine_or_exit(spec, launch_fd);
  exec_order(order, launch_fd);
}

namespace {

/// Waits at the gate `gate` (-1: none) until the supervisor opens it with one byte; its end
/// without one (the sandbox made ahead turned out stale and is killed, or the supervisor died)
/// ends this process before anything of the command has run (RunOptions::gate).
void pass_gate(int gate) {
  if (gate < 0) return;
  char open = 0;
  ssize_t n;
  while ((n = ::read(gate, &open, 1)) < 0 && errno == EINTR) {
  }
  if (n != 1) ::_exit(125);
}

/// The rest of the command's process, once confined: its stdio, no other descriptor, the
/// gate, exec.
[[noreturn]] void exec_order(const CommandOrder& order, int launch_fd) {
  const Command& command = order.command;
  for (int target = 0; target < 3; ++target)
    if (const auto& fd = order.stdio[static_cast<std::size_t>(target)];
        fd && ::dup2(fd.get(), target) < 0) {
      send(launch_fd, LaunchMessage::Error, core::sys_error("dup2()", errno).describe());
      ::_exit(125);
    }
  // Descriptors the caller passed to pi-sandbox (beyond stdio) could reach hidden paths.
  ::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
  auto argv = c_strings(command.argv);
  auto envp = c_strings(command.env);
  pass_gate(order.gate.get());
  const int err = exec_in_path(command, argv, envp);
  const std::string message = "pi-sandbox: " + command.argv[0] + ": " + std::strerror(err) + "\n";
  (void)::write(STDERR_FILENO, message.data(), message.size());
  ::_exit(err == ENOENT ? 127 : 126);
}

/// The command's process made ahead (LaunchSpec::confine_ahead), and pid 1's end of the channel
/// its order comes on; pid -1 when none could be made (the command's process is then forked
/// when the command comes, as without it).
struct AheadProcess {
  pid_t pid = -1;
  core::UniqueFd channel;
};

/// Forks the command's process before the command is known and confines it as exec_command()
/// does (confine(): the same plan, the same descriptors 0-2, which are still pid 1's), so that
/// the command only has to be handed over. It waits for its order on the channel, then enters
/// the command's directory (Landlock does not restrict chdir(2)) and execs. A process whose
/// order never comes ends with pid 1 (kill(-1) in finish()).
AheadProcess fork_ahead(const LaunchSpec& spec, int launch_fd) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return {};
  core::UniqueFd mine(pair[0]), theirs(pair[1]);
  const pid_t pid = ::fork();
  if (pid < 0) return {};
  if (pid == 0) {
    mine.reset();
    default_signals();
    confine_or_exit(spec, launch_fd);
    auto order = receive_command(theirs.get());
    if (!order) ::_exit(125);  // pid 1 forks another one (a private pty) or ends
    enter_directory(order->command, launch_fd);
    exec_order(*order, launch_fd);
  }
  return {pid, std::move(mine)};
}

/// The command's process for `order`: the one made ahead when there is one and the command
/// needs no private pty (that is attached before confine()), else a new one (exec_command()).
/// -1 with errno set when fork(2) fails.
pid_t start_command(const LaunchSpec& spec, AheadProcess& ahead, const CommandOrder& order,
                    int launch_fd, int slave) {
  if (ahead.pid > 0) {
    if (!order.pty && pass_order(ahead.channel.get(), order)) return ahead.pid;
    ::kill(ahead.pid, SIGKILL);  // reaped with the others (reap(), finish())
  }
  const pid_t command = ::fork();
  if (command == 0) exec_command(spec, order, launch_fd, slave);
  return command;
}

}  // namespace

[[noreturn]] void exec_direct(const LaunchSpec& spec, int launch_fd) {
  CommandOrder order;
  order.command = spec.command;
  for (std::size_t i = 0; i < 3; ++i)
    if (spec.direct_stdio[i] >= 0) order.stdio[i].reset(spec.direct_stdio[i]);
  exec_command(spec, order, launch_fd, -1);
}

namespace {

void report_placeholders(int launch_fd, const std::vector<Placeholder>& placeholders) {
  for (const auto& p : placeholders)
    send(launch_fd, LaunchMessage::Placeholder,
         std::to_string(p.inode) + (p.scaffold ? "s " : " ") + p.path.string());
}

/// pid 1's guard (guard.hpp): its last sweep runs once every other process is gone, and its
/// lines go to the supervisor. Unset until the mount plan is applied.
std::optional<Guard> g_guard;
int g_launch_fd = -1;

/// A directory of the tmpfs budget (O_PATH, opened once the mount plan is applied, so that
/// the command cannot move it elsewhere) and the budget's size in bytes; -1 and 0 without a
/// budget.
int g_budget_fd = -1;
/// pid 1's /proc/self/pagemap, for release_program_pages(); -1 when it could not be opened.
int g_pagemap_fd = -1;
std::uint64_t g_budget_bytes = 0;

/// Opens g_budget_fd: the first private tmpfs of the plan on the shared budget
/// (MountOp::size_bytes).
void open_budget(const MountPlan& plan) {
  for (const auto& op : plan.ops) {
    if (op.kind != MountOpKind::Tmpfs || op.size_bytes == 0) continue;
    g_budget_fd = ::open(op.target.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (g_budget_fd < 0) continue;
    g_budget_bytes = op.size_bytes;
    return;
  }
}

/// Tells the supervisor when the tmpfs budget is full once every process is gone
/// (LaunchMessage::TmpfsFull): the command's ENOSPC in /tmp, /var/tmp, /dev/shm or the hidden
/// home was the budget's, not the disk's. A budget filled and freed again before the end is
/// not seen.
void report_full_budget() {
  struct statfs st {};
  if (g_budget_fd < 0 || ::fstatfs(g_budget_fd, &st) != 0 || st.f_blocks == 0) return;
  const auto free_bytes = static_cast<std::uint64_t>(st.f_bavail) * st.f_bsize;
  if (free_bytes < kTmpfsFullMargin)
    send(g_launch_fd, LaunchMessage::TmpfsFull, std::to_string(g_budget_bytes));
}

/// Waits for the supervisor's GuardStart (LaunchMessage), then starts pid 1's guard; its start
/// is the host as the command finds it, after the command has come and before it runs
/// (docs/security.md, "The guard"), alongside the supervisor's. nullopt without a quarantine
/// descriptor (no guard). An error when the supervisor has gone or discarded the sandbox.
core::Result<std::optional<Guard>> start_guard_when_told(const LaunchSpec& spec, int launch_fd) {
  char kind = 0;
  ssize_t n;
  while ((n = ::recv(launch_fd, &kind, 1, 0)) < 0 && errno == EINTR) {
  }
  if (n != 1 || kind != static_cast<char>(LaunchMessage::GuardStart))
    return core::fail("the supervisor sent no command");
  if (spec.quarantine_fd < 0) return std::optional<Guard>();
  Quarantine quarantine{{}, spec.guard.quarantine};
  (spec.quarantine_missing.empty() ? quarantine.root : quarantine.anchor).reset(spec.quarantine_fd);
  quarantine.missing = spec.quarantine_missing;
  auto guard = Guard::start(spec.guard, std::move(quarantine), Guard::Watch::No);
  if (!guard) return std::unexpected(guard.error());
  return std::optional<Guard>(std::move(*guard));
}

void last_sweep() {
  if (!g_guard) return;
  g_guard->final_sweep();
  for (const auto& line : g_guard->take_notices()) send(g_launch_fd, LaunchMessage::Notice, line);
  // Fail closed: a check not made is said, never skipped silently.
  if (const auto& failure = g_guard->failure())
    send(g_launch_fd, LaunchMessage::Notice, incomplete_sweep(*failure));
  send(g_launch_fd, LaunchMessage::Swept, "");
}

/// Whether the supervisor has closed its end of the launch socket (it died).
bool supervisor_gone() {
  pollfd pfd{g_launch_fd, POLLRDHUP, 0};
  return ::poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR)) != 0;
}

/// Who removes the host placeholders when pid 1 ends.
enum class Cleanup {
  Supervisor,  ///< the supervisor, after the namespaces are gone (fast: no unmounting)
  Here,        ///< pid 1 itself: stopped by the supervisor, or the supervisor has died
};

[[noreturn]] void finish(std::vector<Placeholder>& placeholders, int status, Cleanup cleanup) {
  // kill(-1) from pid 1 reaches every other process of the pid namespace.
  ::kill(-1, SIGKILL);
  while (::waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
  }
  sigset_t pending;
  // The supervisor may have died while pid 1 was finishing: then nobody else will clean up,
  // nor look at what the command changed (it alone watched): the last sweep walks for it.
  if (::sigpending(&pending) == 0 && sigismember(&pending, SIGTERM)) cleanup = Cleanup::Here;
  if (g_guard && supervisor_gone()) g_guard->mark_blind();
  report_full_budget();
  last_sweep();
  if (::sigpending(&pending) == 0 && sigismember(&pending, SIGTERM)) cleanup = Cleanup::Here;
  if (cleanup == Cleanup::Here)
    for (auto& p : placeholders) remove_placeholder(p, Unmask::Yes);
  ::_exit(status);
}

[[noreturn]] void reap(int launch_fd, pid_t command, std::vector<Placeholder>& placeholders) {
  sigset_t waited;
  sigemptyset(&waited);
  sigaddset(&waited, SIGCHLD);
  sigaddset(&waited, SIGTERM);
  // Once the command has run kReleaseAfter, pid 1 lets go of the program's pages of its set-up,
  // as the supervisor does (program_pages.hpp): it only waits from now on.
  bool pages_kept = true;
  const auto release_at = std::chrono::steady_clock::now() + kReleaseAfter;
  for (;;) {
    siginfo_t info{};
    if (pages_kept) {
      const auto left = std::max(release_at - std::chrono::steady_clock::now(),
                                 std::chrono::steady_clock::duration::zero());
      const auto left_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      const timespec wait{0, static_cast<long>(left_ns)};
      if (::sigtimedwait(&waited, &info, &wait) < 0) {
        if (errno == EAGAIN) {
          // On failure the pages stay mapped: nothing is lost.
          (void)release_program_pages(g_pagemap_fd);
          pages_kept = false;
        }
        continue;
      }
    } else if (::sigwaitinfo(&waited, &info) < 0) {
      continue;
    }
    if (info.si_signo == SIGTERM) finish(placeholders, 128 + SIGTERM, Cleanup::Here);
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      if (pid != command) continue;
      send_phases(launch_fd, core::phases::Mark::CommandExited);
      if (WIFSIGNALED(status)) {
        send(launch_fd, LaunchMessage::Result, "signal " + std::to_string(WTERMSIG(status)));
        finish(placeholders, 128 + WTERMSIG(status), Cleanup::Supervisor);
      }
      send(launch_fd, LaunchMessage::Result, "exit " + std::to_string(WEXITSTATUS(status)));
      finish(placeholders, WEXITSTATUS(status), Cleanup::Supervisor);
    }
  }
}

void noop_handler(int) {}

void prepare_signals() {
  // pid 1 of a pid namespace drops signals it has no handler for; SIGTERM (the parent-death
  // signal and the supervisor's stop request) gets a handler, and both it and SIGCHLD stay
  // blocked so that sigwaitinfo() takes them in order.
  struct sigaction action {};
  action.sa_handler = noop_handler;
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGCHLD, &action, nullptr);
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &blocked, nullptr);
  for (int sig : {SIGINT, SIGQUIT, SIGHUP, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE})
    ::signal(sig, SIG_IGN);
}

}  // namespace

[[noreturn]] void sandbox_init_main(const LaunchSpec& spec, int launch_fd) {
  core::phases::forget_inherited();
  prepare_signals();
  // Armed before anything else: if the supervisor dies from now on, SIGTERM arrives. If it
  // died before this line, its end of the launch socket is closed and the recv() below
  // returns 0 (docs/cases.md, C-11).
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  char go = 0;
  if (::recv(launch_fd, &go, 1, 0) != 1 || go != static_cast<char>(LaunchMessage::Go)) ::_exit(125);
  // The supervisor may have sent Go and died before the prctl above ran, in which case the
  // parent-death signal is armed for the wrong parent: its end of the socket is closed then.
  // Any death after this check delivers SIGTERM (docs/cases.md, C-11).
  pollfd peer{launch_fd, POLLRDHUP, 0};
  if (::poll(&peer, 1, 0) != 0 && (peer.revents & (POLLHUP | POLLRDHUP | POLLERR)) != 0)
    ::_exit(125);
  core::phases::mark(core::phases::Mark::GoReceived);
  // Opened while pid 1 is still dumpable: once it is not, its /proc files are root's of the
  // caller's user namespace and an unprivileged pid 1 may not open them (proc(5)).
  g_pagemap_fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  ::prctl(PR_SET_DUMPABLE, 0);
  std::vector<Placeholder> placeholders;
  auto fail = [&](const core::Error& error) {
    report_placeholders(launch_fd, placeholders);
    send(launch_fd, LaunchMessage::Error, error.describe());
    finish(placeholders, 125, Cleanup::Supervisor);
  };
  // Into the v1 cgroups first (v2: cloned into it), so that everything below is charged to
  // the sandbox and the command is forked inside; the descriptors go with it.
  if (auto joined = join_own_cgroups(spec.cgroup_tasks_fds); !joined)
    fail(core::Error{"resource limits: " + joined.error().message,
                     "hint: `pi-sandbox doctor` shows what this machine supports for limits",
                     joined.error().code});
  for (const int fd : spec.cgroup_tasks_fds) ::close(fd);
  core::phases::mark(core::phases::Mark::CgroupJoined);
  (void)::sethostname("pi-sandbox", 10);
  if (auto r = loopback_up(); !r) fail(r.error());
  local_name_servers();
  if (spec.proxy_listeners)
    if (auto r = pass_proxy_listeners(launch_fd); !r) fail(r.error());
  core::phases::mark(core::phases::Mark::NetworkUp);
  lift_descriptor_limit();
  if (auto r = apply_mount_plan(spec.mounts, placeholders); !r) fail(r.error());
  open_budget(spec.mounts);
  send_phases(launch_fd, core::phases::Mark::MountsApplied);
  report_placeholders(launch_fd, placeholders);
  AheadProcess ahead = spec.confine_ahead ? fork_ahead(spec, launch_fd) : AheadProcess{};
  // The sandbox is ready: the command comes when the supervisor has one (launcher.hpp,
  // prepare_launch() and run_command()), GuardStart first.
  auto guard = start_guard_when_told(spec, launch_fd);
  if (!guard) fail(guard.error());
  auto order = receive_command(launch_fd);
  // No command came (the supervisor discarded the sandbox): nothing of one ran, nothing to
  // sweep.
  if (!order) fail(order.error());
  g_launch_fd = launch_fd;
  if (*guard) g_guard.emplace(std::move(**guard));
  core::UniqueFd slave;
  if (order->pty) {
    auto made = pass_private_pty(launch_fd, *order->pty);
    if (!made) fail(made.error());
    slave = std::move(*made);
  }
  const pid_t command = start_command(spec, ahead, *order, launch_fd, slave.get());
  if (command < 0) fail(core::sys_error("fork()", errno));
  ahead.channel.reset();
  send_phases(launch_fd, core::phases::Mark::Forked);
  // Only the command's processes hold the slave and the output pipes now: when the last of
  // them closes the slave, the supervisor reads EIO on the master, and the pipes reach their
  // end once the last is gone (before pid 1's own exit: RunOptions::teardown).
  slave.reset();
  for (auto& fd : order->stdio) fd.reset();
  reap(launch_fd, command, placeholders);
}

}  // namespace pisandbox::sandbox::linux_
