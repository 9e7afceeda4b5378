#include "sandbox/linux/unix_broker.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <expected>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "core/scm_rights.hpp"
#include "sandbox/linux/unix_wire.hpp"

#ifndef SIOCUNIXFILE
#define SIOCUNIXFILE (SIOCPROTOPRIVATE + 0)
#endif

namespace pisandbox::sandbox::linux_ {

using core::UniqueFd;

/// One stopped call, as the kernel described it.
struct Call {
  std::uint64_t id;
  pid_t pid;
  int nr;
  int fd;
  std::uint64_t address;
  std::uint64_t length;
};

struct UnixBroker::State {
  UniqueFd listener;
  UniqueFd helper;
  UniqueFd stop;  ///< eventfd: readable once the broker is destroyed
  std::vector<dev_t> private_devices;
  HostNetwork host_network;
  sandbox::HostSocketDecider decide;
  std::size_t notif_size = sizeof(seccomp_notif);
  std::size_t resp_size = sizeof(seccomp_notif_resp);
  std::mutex calls_mutex;
  int calls = 0;             ///< threads making calls (at most UnixBroker::kMaxCalls)
  std::deque<Call> waiting;  ///< calls stopped while kMaxCalls were being made
  std::mutex bound_mutex;
  /// (st_dev, st_ino) of the socket files the sandbox bound outside its private tmpfs, each
  /// with an O_PATH descriptor that keeps the inode (and so its number) alive.
  std::map<std::pair<dev_t, ino_t>, UniqueFd> bound;
  std::thread receiver;
  std::atomic<bool> receiving{true};  ///< false once receive_calls() has returned
};

namespace {

using State = UnixBroker::State;

void respond(const State& state, std::uint64_t id, int error) {
  std::vector<unsigned char> buffer(state.resp_size, 0);
  auto* resp = reinterpret_cast<seccomp_notif_resp*>(buffer.data());
  resp->id = id;
  resp->val = 0;
  resp->error = error == 0 ? 0 : -error;
  (void)::ioctl(state.listener.get(), SECCOMP_IOCTL_NOTIF_SEND, resp);
}

bool still_waiting(const State& state, std::uint64_t id) {
  return ::ioctl(state.listener.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/// What the supervisor took from the stopped process: its socket, address and directory.
struct Taken {
  UniqueFd sock;
  std::vector<unsigned char> address;
  UniqueFd cwd;
  int domain = 0;
};

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/// A pidfd of the thread `tid` (PIDFD_THREAD, Linux 6.9: its own descriptor table), else of
/// its thread group (whose table its threads share unless one unshared it, when the call is
/// made on the group's descriptor of that number: a socket it holds and was checked).
UniqueFd open_pidfd(pid_t tid) {
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, tid, PIDFD_THREAD)));
  if (pidfd || errno != EINVAL) return pidfd;
  pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, tid, 0)));
  if (pidfd || errno != EINVAL) return pidfd;
  std::ifstream status("/proc/" + std::to_string(tid) + "/status");
  for (std::string key; status >> key;)
    if (key == "Tgid:") {
      pid_t tgid = 0;
      status >> tgid;
      return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, tgid, 0)));
    }
  return pidfd;
}

/// Takes the call's socket (pidfd_getfd), address (process_vm_readv) and working directory;
/// then checks that the call still waits, so that all three are the stopped process's (its
/// pid cannot have been reused). Returns the errno for the call on failure, 0 if it is gone.
std::expected<Taken, int> take(const State& state, const Call& call) {
  UniqueFd pidfd = open_pidfd(call.pid);
  if (!pidfd) return std::unexpected(ESRCH);
  Taken taken;
  taken.sock.reset(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), call.fd, 0)));
  if (!taken.sock) return std::unexpected(errno == EBADF ? EBADF : EACCES);
  socklen_t size = sizeof taken.domain;
  if (::getsockopt(taken.sock.get(), SOL_SOCKET, SO_DOMAIN, &taken.domain, &size) != 0)
    return std::unexpected(ENOTSOCK);
  if (call.length > sizeof(sockaddr_storage)) return std::unexpected(EINVAL);
  taken.address.resize(call.length);
  if (call.length > 0) {
    iovec local{taken.address.data(), call.length};
    iovec remote{reinterpret_cast<void*>(call.address), call.length};
    if (::process_vm_readv(call.pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(call.length))
      return std::unexpected(EFAULT);
  }
  const std::string cwd = "/proc/" + std::to_string(call.pid) + "/cwd";
  taken.cwd.reset(::open(cwd.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!still_waiting(state, call.id)) return std::unexpected(0);
  return taken;
}

/// One exchange with the helper over a socketpair of its own.
class HelperCall {
 public:
  /// Sends `op` with the socket and directory of `taken`; false when the helper is gone.
  bool send(const State& state, HelperOp op, const Taken& taken) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return false;
    ours_.reset(pair[0]);
    UniqueFd theirs(pair[1]);
    HelperRequest request{};
    request.op = op;
    request.address_length = static_cast<std::uint32_t>(taken.address.size());
    std::memcpy(request.address, taken.address.data(), taken.address.size());
    std::vector<int> fds{theirs.get(), taken.sock.get()};
    if (taken.cwd) fds.push_back(taken.cwd.get());
    return core::send_with_rights(state.helper.get(), &request, sizeof request, fds) ==
           static_cast<ssize_t>(sizeof request);
  }

  /// The helper's next reply, with the descriptor that came with it; nullopt when it ended
  /// the call without one (it could not make a thread, or it is gone).
  std::optional<HelperReply> receive(UniqueFd* attached = nullptr) {
    HelperReply reply{};
    iovec data{&reply, sizeof reply};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    ssize_t n;
    while ((n = ::recvmsg(ours_.get(), &message, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    std::vector<UniqueFd> received =
        n > 0 ? core::received_rights(message) : std::vector<UniqueFd>{};
    if (attached != nullptr && received.size() == 1) *attached = std::move(received[0]);
    if (n < static_cast<ssize_t>(offsetof(HelperReply, path))) return std::nullopt;
    reply.path_length = std::min<std::uint32_t>(
        reply.path_length, static_cast<std::uint32_t>(n - offsetof(HelperReply, path)));
    return reply;
  }

  void verdict(bool connect) {
    const HelperVerdict verdict{connect ? 1U : 0U};
    (void)::send(ours_.get(), &verdict, sizeof verdict, MSG_NOSIGNAL);
  }

 private:
  UniqueFd ours_;
};

/// The helper makes `op` on the taken socket; its errno (EAGAIN when it could not).
int by_helper(const State& state, HelperOp op, const Taken& taken) {
  HelperCall call;
  if (!call.send(state, op, taken)) return EAGAIN;
  const auto reply = call.receive();
  return reply ? reply->error : EAGAIN;
}

bool is_private(const State& state, dev_t device) {
  return std::ranges::find(state.private_devices, device) != state.private_devices.end();
}

/// Whether the sandbox bound the socket file (device, inode): on its private tmpfs, or
/// recorded when it was bound.
bool bound_by_sandbox(State& state, dev_t device, ino_t inode) {
  if (is_private(state, device)) return true;
  const std::lock_guard lock(state.bound_mutex);
  return state.bound.contains({device, inode});
}

/// After a bind the helper made: records the socket file's inode unless it lies on a
/// private tmpfs (SIOCUNIXFILE opens exactly the inode the socket is bound to, whatever
/// happened to the path since). Full, entries whose file is gone are dropped first.
void record_bound(State& state, int sock) {
  UniqueFd file(::ioctl(sock, SIOCUNIXFILE));
  struct stat st {};
  if (!file || ::fstat(file.get(), &st) != 0 || is_private(state, st.st_dev)) return;
  const std::lock_guard lock(state.bound_mutex);
  if (state.bound.size() >= UnixBroker::kMaxBound)
    std::erase_if(state.bound, [](const auto& entry) {
      struct stat now {};
      return ::fstat(entry.second.get(), &now) != 0 || now.st_nlink == 0;
    });
  if (state.bound.size() < UnixBroker::kMaxBound)
    state.bound.emplace(std::pair{st.st_dev, st.st_ino}, std::move(file));
}

/// Whether the stopped process's descriptor `fd` has FD_CLOEXEC (from its fdinfo).
bool close_on_exec(pid_t pid, int fd) {
  std::ifstream info("/proc/" + std::to_string(pid) + "/fdinfo/" + std::to_string(fd));
  std::string key;
  while (info >> key) {
    if (key != "flags:") continue;
    unsigned long flags = 0;
    info >> std::oct >> flags;
    return (flags & O_CLOEXEC) != 0;
  }
  return false;
}

/// How long the supervisor waits for a host socket to accept (its backlog full).
constexpr timeval kHostConnectTimeout{10, 0};

/// What the kernel would answer a connect() of the command's own socket before looking at the
/// address: EISCONN when it is connected, EINVAL when it listens; 0 otherwise.
int own_socket_refusal(int sock) {
  sockaddr_storage peer{};
  socklen_t peer_size = sizeof peer;
  if (::getpeername(sock, reinterpret_cast<sockaddr*>(&peer), &peer_size) == 0) return EISCONN;
  int listening = 0;
  socklen_t size = sizeof listening;
  if (::getsockopt(sock, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0 && listening != 0)
    return EINVAL;
  return 0;
}

/// Connects a socket of the supervisor's own, of the command's socket's type and blocking
/// mode, to the socket file behind `link` (/proc/self/fd/N), and puts it in the stopped
/// process's descriptor table in place of its socket (SECCOMP_IOCTL_NOTIF_ADDFD). Its errno.
int replace_with_host_connection(const State& state, const Call& call, const Taken& taken,
                                 const std::string& link) {
  int type = SOCK_STREAM;
  socklen_t size = sizeof type;
  (void)::getsockopt(taken.sock.get(), SOL_SOCKET, SO_TYPE, &type, &size);
  UniqueFd host(::socket(AF_UNIX, type | SOCK_CLOEXEC, 0));
  if (!host) return errno;
  (void)::setsockopt(host.get(), SOL_SOCKET, SO_SNDTIMEO, &kHostConnectTimeout,
                     sizeof kHostConnectTimeout);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, link.c_str(), link.size() + 1);
  if (::connect(host.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    return errno == EINPROGRESS ? EAGAIN : errno;
  const timeval none{0, 0};
  (void)::setsockopt(host.get(), SOL_SOCKET, SO_SNDTIMEO, &none, sizeof none);
  if ((::fcntl(taken.sock.get(), F_GETFL) & O_NONBLOCK) != 0)
    (void)::fcntl(host.get(), F_SETFL, ::fcntl(host.get(), F_GETFL) | O_NONBLOCK);
  seccomp_notif_addfd addfd{};
  addfd.id = call.id;
  addfd.flags = SECCOMP_ADDFD_FLAG_SETFD;
  addfd.srcfd = static_cast<std::uint32_t>(host.get());
  addfd.newfd = static_cast<std::uint32_t>(call.fd);
  addfd.newfd_flags = close_on_exec(call.pid, call.fd) ? O_CLOEXEC : 0;
  if (::ioctl(state.listener.get(), SECCOMP_IOCTL_NOTIF_ADDFD, &addfd) < 0) return EAGAIN;
  return 0;
}

/// A host socket the command connects to: `target` is an O_PATH descriptor of its inode (from
/// the helper, or opened on the host); decided for the path the supervisor reads for it, then
/// connected to exactly that inode.
int connect_host(State& state, const Call& call, const Taken& taken, const UniqueFd& target) {
  struct stat st {};
  if (::fstat(target.get(), &st) != 0) return EACCES;
  if (const int refusal = own_socket_refusal(taken.sock.get()); refusal != 0) return refusal;
  const std::string link = "/proc/self/fd/" + std::to_string(target.get());
  char real[4096];
  const ssize_t n = ::readlink(link.c_str(), real, sizeof real - 1);
  if (n <= 0) return EACCES;
  const sandbox::HostSocketRequest request{std::string(real, static_cast<std::size_t>(n)),
                                           st.st_nlink > 1};
  const sandbox::HostSocketAnswer verdict =
      state.decide ? state.decide(request) : sandbox::HostSocketAnswer{false, "no one decides"};
  if (!verdict.allow) return EACCES;
  if (verdict.connect_to.empty()) return replace_with_host_connection(state, call, taken, link);
  // In place of the socket asked for: opened here, connected only if it is a socket.
  UniqueFd instead(::open(verdict.connect_to.c_str(), O_PATH | O_CLOEXEC));
  struct stat instead_st {};
  if (!instead || ::fstat(instead.get(), &instead_st) != 0 || !S_ISSOCK(instead_st.st_mode))
    return ECONNREFUSED;
  return replace_with_host_connection(state, call, taken,
                                      "/proc/self/fd/" + std::to_string(instead.get()));
}

/// A path that leads nowhere inside the sandbox (the hidden home, the host's /tmp): the
/// host's socket at the same absolute path, if there is one; `missing` otherwise. /proc means
/// other processes on the host: never looked up there.
int connect_host_path(State& state, const Call& call, const Taken& taken, const std::string& path,
                      int missing) {
  if (!path.starts_with('/') || path.starts_with("/proc/")) return missing;
  UniqueFd target(::open(path.c_str(), O_PATH | O_CLOEXEC));
  struct stat st {};
  if (!target || ::fstat(target.get(), &st) != 0 || !S_ISSOCK(st.st_mode)) return missing;
  return connect_host(state, call, taken, target);
}

/// connect() to a socket file: the sandbox's own through the helper, the host's through
/// connect_host(), always to the inode the helper's one resolution found.
int connect_path(State& state, const Call& call, const Taken& taken) {
  HelperCall helper;
  if (!helper.send(state, HelperOp::Resolve, taken)) return EAGAIN;
  UniqueFd target;
  const auto resolved = helper.receive(&target);
  if (!resolved) return EAGAIN;
  if (resolved->error == ENOENT || resolved->error == ENOTDIR)
    return connect_host_path(state, call, taken, std::string(resolved->path, resolved->path_length),
                             resolved->error);
  if (resolved->error != 0) return resolved->error;
  struct stat st {};
  if (!target || ::fstat(target.get(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
    helper.verdict(false);
    return target ? ECONNREFUSED : EACCES;
  }
  if (bound_by_sandbox(state, st.st_dev, st.st_ino)) {
    helper.verdict(true);
    const auto connected = helper.receive();
    return connected ? connected->error : EAGAIN;
  }
  helper.verdict(false);
  return connect_host(state, call, taken, target);
}

/// Whether `address` (the supervisor's copy) is the proxy's: 127.0.0.1 at one of its ports.
bool proxy_address(const HostNetwork& rules, const std::vector<unsigned char>& address) {
  if (address.size() < sizeof(sockaddr_in)) return false;
  sockaddr_in in{};
  std::memcpy(&in, address.data(), sizeof in);
  return in.sin_family == AF_INET && ntohl(in.sin_addr.s_addr) == INADDR_LOOPBACK &&
         std::ranges::find(rules.proxy_ports, ntohs(in.sin_port)) != rules.proxy_ports.end();
}

/// Whether `address` is a loopback address (127.0.0.0/8, ::1): what a bind() may name.
bool loopback_address(const std::vector<unsigned char>& address) {
  sa_family_t family = AF_UNSPEC;
  if (address.size() >= sizeof family) std::memcpy(&family, address.data(), sizeof family);
  if (family == AF_INET && address.size() >= sizeof(sockaddr_in)) {
    sockaddr_in in{};
    std::memcpy(&in, address.data(), sizeof in);
    return (ntohl(in.sin_addr.s_addr) >> 24) == 127;
  }
  if (family == AF_INET6 && address.size() >= sizeof(sockaddr_in6)) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, address.data(), sizeof in6);
    return IN6_IS_ADDR_LOOPBACK(&in6.sin6_addr);
  }
  return false;
}

/// Where the command shares the host's network (HostNetwork): EACCES for a call its rules
/// refuse, 0 for one the usual brokering then makes.
int host_network_refusal(const State& state, HelperOp op, const Taken& taken,
                         const UnixAddress& address) {
  const HostNetwork& rules = state.host_network;
  if (!rules.shared) return 0;
  if (taken.domain == AF_INET || taken.domain == AF_INET6) {
    if (op == HelperOp::Bind) return loopback_address(taken.address) ? 0 : EACCES;
    sa_family_t family = AF_UNSPEC;
    if (taken.address.size() >= sizeof family)
      std::memcpy(&family, taken.address.data(), sizeof family);
    if (family == AF_UNSPEC) return 0;
    return proxy_address(rules, taken.address) ? 0 : EACCES;
  }
  if (address.kind == UnixAddressKind::Abstract && !rules.abstract_scoped) return EACCES;
  return 0;
}

/// Makes one stopped call and answers it.
void make_call(const std::shared_ptr<State>& state, const Call& call) {
  auto taken = take(*state, call);
  if (!taken) {
    if (taken.error() != 0) respond(*state, call.id, taken.error());
    return;
  }
  const HelperOp op = call.nr == SYS_connect ? HelperOp::Connect : HelperOp::Bind;
  const UnixAddress address = taken->domain == AF_UNIX ? read_unix_address(taken->address)
                                                       : UnixAddress{UnixAddressKind::Other, {}};
  int error = host_network_refusal(*state, op, *taken, address);
  if (error != 0) {
    // refused before anything is made (HostNetwork)
  } else if (address.kind == UnixAddressKind::Path && !address.path.starts_with('/') &&
             !taken->cwd) {
    error = ENOENT;  // relative to a working directory that cannot be opened any more
  } else if (address.kind != UnixAddressKind::Path) {
    error = by_helper(*state, op, *taken);
  } else if (op == HelperOp::Bind) {
    error = by_helper(*state, op, *taken);
    if (error == 0) record_bound(*state, taken->sock.get());
  } else {
    error = connect_path(*state, call, *taken);
  }
  respond(*state, call.id, error);
}

/// Makes `first`, then the calls that wait, until none is left.
void make_calls(const std::shared_ptr<State>& state, Call first) {
  for (std::optional<Call> call = first; call;) {
    make_call(state, *call);
    const std::lock_guard lock(state->calls_mutex);
    call.reset();
    if (!state->waiting.empty()) {
      call = state->waiting.front();
      state->waiting.pop_front();
    } else {
      --state->calls;
    }
  }
}

/// Gives `call` a thread of its own, or, while kMaxCalls are being made, to the next thread
/// that finishes (a call waits, it is never refused for the number of calls).
void dispatch(const std::shared_ptr<State>& state, const Call& call) {
  {
    const std::lock_guard lock(state->calls_mutex);
    if (state->calls >= UnixBroker::kMaxCalls) {
      state->waiting.push_back(call);
      return;
    }
    ++state->calls;
  }
  try {
    std::thread(make_calls, state, call).detach();
  } catch (const std::system_error&) {
    {
      const std::lock_guard lock(state->calls_mutex);
      --state->calls;
    }
    respond(*state, call.id, EAGAIN);  // no thread: the supervisor is at its limits
  }
}

/// Receives notifications until the broker stops or every process of the filter is gone.
/// SECCOMP_IOCTL_NOTIF_RECV blocks when the notification poll() announced has gone with its
/// process meanwhile, and nothing but a signal ends that wait: ~UnixBroker() sends
/// kInterruptSignal, whose handler does nothing, so that the ioctl fails with EINTR.
void receive_calls(const std::shared_ptr<State>& state) {
  struct Done {
    State& state;
    ~Done() { state.receiving = false; }
  } done{*state};
  std::vector<unsigned char> buffer(state->notif_size);
  for (;;) {
    pollfd fds[2] = {{state->listener.get(), POLLIN, 0}, {state->stop.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) {
      if ((fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) return;
      continue;
    }
    std::fill(buffer.begin(), buffer.end(), 0);
    auto* notif = reinterpret_cast<seccomp_notif*>(buffer.data());
    if (::ioctl(state->listener.get(), SECCOMP_IOCTL_NOTIF_RECV, notif) != 0) {
      if (errno == EINTR || errno == ENOENT) continue;  // the stop is seen by the next poll()
      return;
    }
    const Call call{notif->id,           static_cast<pid_t>(notif->pid),
                    notif->data.nr,      static_cast<int>(notif->data.args[0]),
                    notif->data.args[1], notif->data.args[2] & 0xffffffffULL};
    dispatch(state, call);
  }
}

/// Interrupts a receiver blocked in SECCOMP_IOCTL_NOTIF_RECV (SIGURG: ignored by default, so
/// a stray one harms nothing; installed without SA_RESTART).
constexpr int kInterruptSignal = SIGURG;

void install_interrupt_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_handler = [](int) {};
    sigemptyset(&action.sa_mask);
    ::sigaction(kInterruptSignal, &action, nullptr);
  });
}

}  // namespace

UnixBroker::UnixBroker(std::shared_ptr<State> state) : state_(std::move(state)) {}

std::unique_ptr<UnixBroker> UnixBroker::start(UnixBrokerChannels channels,
                                              sandbox::HostSocketDecider decide) {
  auto state = std::make_shared<State>();
  state->listener = std::move(channels.listener);
  state->helper = std::move(channels.helper);
  state->private_devices = std::move(channels.private_devices);
  state->host_network = std::move(channels.host_network);
  state->decide = std::move(decide);
  state->stop.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  seccomp_notif_sizes sizes{};
  if (::syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0) {
    state->notif_size = std::max<std::size_t>(state->notif_size, sizes.seccomp_notif);
    state->resp_size = std::max<std::size_t>(state->resp_size, sizes.seccomp_notif_resp);
  }
  install_interrupt_handler();
  state->receiver = std::thread(receive_calls, state);
  return std::unique_ptr<UnixBroker>(new UnixBroker(state));
}

UnixBroker::~UnixBroker() {
  const std::uint64_t one = 1;
  if (state_->stop) (void)!::write(state_->stop.get(), &one, sizeof one);
  if (!state_->receiver.joinable()) return;
  while (state_->receiving) {
    ::pthread_kill(state_->receiver.native_handle(), kInterruptSignal);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  state_->receiver.join();
}

}  // namespace pisandbox::sandbox::linux_
