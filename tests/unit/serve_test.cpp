// serve's event loop driven through its system-call seam (serve/sys_calls.hpp): the real
// kernel, real pipes and real child processes, with the faults the kernel can return injected
// at one call at a time (EMFILE, EAGAIN, EINTR, ENOMEM, a short write). The worker is a stand-in
// (a /bin/sh script that reads the exec line and writes events), so that every failure path of
// the loop and of starting a worker is reached without a sandbox; tests/integration/serve_test.cpp
// drives the real binary with real workers.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "serve/host_output.hpp"
#include "serve/server.hpp"
#include "serve/sys_calls.hpp"

namespace pisandbox::serve {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

enum class Call { Pipe2, Open, PidfdOpen, Fcntl, Poll, Read, Write, Kill, Waitpid, Spawn };

/// One call serve made through the seam: which, on which descriptor (-1: none), its result
/// and errno, and for poll(2) its timeout and whether it waited for POLLOUT on the host's fd.
struct Made {
  Call call;
  int fd = -1;
  long result = 0;
  int error = 0;
  int timeout_ms = 0;
  std::vector<int> pollout;  ///< the descriptors a poll(2) waited to become writable
};

/// The real calls, with faults a test injects; every call is logged. Workers are started as
/// `/bin/sh -c <worker script>` instead of `pi-sandbox serve-worker`.
class FaultySysCalls : public OsSysCalls {
 public:
  FaultySysCalls(int host_fd, std::string worker) : host_fd_(host_fd), worker_(std::move(worker)) {}

  /// The `nth` call (from 1) of `call` on `fd` (-1: any descriptor) fails with `error`
  /// without reaching the kernel.
  void fail(Call call, int nth, int error, int fd = -1) {
    faults_.push_back({call, fd, nth, error});
  }
  /// The next call of `call` fails with `error`.
  void fail_next(Call call, int error) {
    std::lock_guard lock(mutex_);
    faults_.push_back({call, -1, counts_[{call, -1}] + 1, error});
  }
  /// Every poll, read, write and waitpid fails with EINTR once before it is made.
  void interrupt_everything() { interrupt_ = true; }
  /// Every write takes at most `bytes` bytes.
  void short_writes(std::size_t bytes) { short_ = bytes; }
  /// While held, writes to the host's descriptor fail with EAGAIN and poll(2) never reports it
  /// writable: a host that reads nothing.
  void hold_host(bool held) { held_ = held; }
  /// Bytes serve has read from descriptors other than `requests`.
  std::size_t bytes_read_except(int requests) const {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto& [fd, bytes] : read_)
      if (fd != requests) n += bytes;
    return n;
  }
  /// Everything written to `fd`, in order.
  std::string written(int fd) const {
    std::lock_guard lock(mutex_);
    return written_.contains(fd) ? written_.at(fd) : "";
  }
  std::vector<Made> log() const {
    std::lock_guard lock(mutex_);
    return log_;
  }

  int pipe2(int (&ends)[2], int flags) override {
    return made({Call::Pipe2}, [&] { return OsSysCalls::pipe2(ends, flags); });
  }
  int open(const char* path, int flags) override {
    return made({Call::Open}, [&] { return OsSysCalls::open(path, flags); });
  }
  int pidfd_open(pid_t pid) override {
    return made({Call::PidfdOpen}, [&] { return OsSysCalls::pidfd_open(pid); });
  }
  int fcntl(int fd, int command, int argument) override {
    return made({Call::Fcntl, fd}, [&] { return OsSysCalls::fcntl(fd, command, argument); });
  }
  int poll(pollfd* fds, nfds_t count, int timeout_ms) override;
  ssize_t read(int fd, void* buffer, std::size_t size) override;
  ssize_t write(int fd, const void* bytes, std::size_t size) override;
  int kill(pid_t pid, int signal) override {
    return made({Call::Kill}, [&] { return OsSysCalls::kill(pid, signal); });
  }
  pid_t waitpid(pid_t pid, int* status, int options) override {
    return made({Call::Waitpid}, [&] { return OsSysCalls::waitpid(pid, status, options); });
  }
  pid_t spawn(char* const argv[], char* const envp[], const int (&fds)[4]) override {
    (void)argv;
    std::string sh = "/bin/sh", c = "-c", script = worker_;
    char* const worker[] = {sh.data(), c.data(), script.data(), nullptr};
    return made({Call::Spawn}, [&] { return OsSysCalls::spawn(worker, envp, fds); });
  }

 private:
  struct Fault {
    Call call;
    int fd;
    int nth;
    int error;
  };

  /// Logs `call` and returns the fault's -1 (errno set) or `real()`'s result.
  template <typename Real>
  auto made(Made call, Real real) -> decltype(real()) {
    if (const int error = fault(call); error != 0) {
      record(call, -1, error);
      errno = error;
      return -1;
    }
    const auto result = real();
    const int error = errno;
    record(call, static_cast<long>(result), result < 0 ? error : 0);
    errno = error;
    return result;
  }

  /// The errno the next call like `call` fails with, or 0.
  int fault(const Made& call) {
    std::lock_guard lock(mutex_);
    const int any = ++counts_[{call.call, -1}];
    const int on_fd = call.fd >= 0 ? ++counts_[{call.call, call.fd}] : any;
    for (const auto& f : faults_)
      if (f.call == call.call && (f.fd < 0 ? any == f.nth : f.fd == call.fd && on_fd == f.nth))
        return f.error;
    const bool interruptible = call.call == Call::Poll || call.call == Call::Read ||
                               call.call == Call::Write || call.call == Call::Waitpid;
    // Per call and descriptor: each is interrupted once, then made.
    bool& interrupted = interrupted_[{call.call, call.fd}];
    if (interrupt_ && interruptible && (interrupted = !interrupted)) return EINTR;
    return 0;
  }

  void record(Made call, long result, int error) {
    std::lock_guard lock(mutex_);
    call.result = result;
    call.error = error;
    log_.push_back(call);
  }

  int host_fd_;
  std::string worker_;
  std::vector<Fault> faults_;
  std::size_t short_ = 0;
  std::atomic<bool> held_ = false;
  bool interrupt_ = false;
  std::map<std::pair<Call, int>, bool> interrupted_;
  mutable std::mutex mutex_;
  std::map<std::pair<Call, int>, int> counts_;
  std::map<int, std::string> written_;
  std::map<int, std::size_t> read_;
  std::vector<Made> log_;
};

int FaultySysCalls::poll(pollfd* fds, nfds_t count, int timeout_ms) {
  Made call{Call::Poll};
  call.timeout_ms = timeout_ms;
  for (nfds_t i = 0; i < count; ++i)
    if (fds[i].fd >= 0 && (fds[i].events & POLLOUT) != 0) call.pollout.push_back(fds[i].fd);
  return made(call, [&] {
    // A held host is not writable: its entry is left out of the real poll.
    std::vector<pollfd> real(fds, fds + count);
    for (auto& p : real)
      if (held_ && p.fd == host_fd_) p.fd = -1;
    const int n = OsSysCalls::poll(real.data(), count, timeout_ms);
    for (nfds_t i = 0; i < count; ++i) fds[i].revents = real[i].revents;
    return n;
  });
}

ssize_t FaultySysCalls::read(int fd, void* buffer, std::size_t size) {
  const ssize_t n = made({Call::Read, fd}, [&] { return OsSysCalls::read(fd, buffer, size); });
  std::lock_guard lock(mutex_);
  if (n > 0) read_[fd] += static_cast<std::size_t>(n);
  return n;
}

ssize_t FaultySysCalls::write(int fd, const void* bytes, std::size_t size) {
  if (held_ && fd == host_fd_)
    return made({Call::Write, fd}, [] {
      errno = EAGAIN;
      return ssize_t{-1};
    });
  if (short_ > 0) size = std::min(size, short_);
  const ssize_t n = made({Call::Write, fd}, [&] { return OsSysCalls::write(fd, bytes, size); });
  std::lock_guard lock(mutex_);
  if (n > 0) written_[fd].append(static_cast<const char*>(bytes), static_cast<std::size_t>(n));
  return n;
}

/// serve on a thread, with pipes for its stdin and stdout, driven by the test as its host.
class Host {
 public:
  /// `worker`: the stand-in worker's /bin/sh script.
  explicit Host(const std::string& worker) {
    int in[2], out[2];
    EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    requests_ = in[1];
    serve_in_ = in[0];
    events_ = out[0];
    serve_out_ = out[1];
    sys_ = std::make_unique<FaultySysCalls>(serve_out_, worker);
  }
  ~Host() {
    for (int fd : {requests_, serve_in_, events_, serve_out_})
      if (fd >= 0) ::close(fd);
  }
  FaultySysCalls& sys() { return *sys_; }
  int serve_in() const { return serve_in_; }
  int serve_out() const { return serve_out_; }

  void start() {
    ServeIo io{serve_in_, serve_out_, sys_.get(), false};  // the stand-in worker makes no sandbox
    result_ = std::async(std::launch::async, [io] { return serve::serve({}, io); });
  }
  void send(const std::string& line) {
    const std::string data = line + "\n";
    EXPECT_EQ(::write(requests_, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  }
  /// The next event line (without LF), or "" after 20 s without one (a bound, not a timing).
  std::string next() {
    for (int i = 0; i < 400; ++i) {
      if (const auto lf = buffer_.find('\n'); lf != std::string::npos) {
        std::string line = buffer_.substr(0, lf);
        buffer_.erase(0, lf + 1);
        return line;
      }
      pollfd p{events_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char chunk[65536];
      const ssize_t n = ::read(events_, chunk, sizeof chunk);
      if (n <= 0) return "";
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
    return "";
  }
  /// Event lines up to and including the one that starts with `prefix`.
  std::vector<std::string> until(const std::string& prefix) {
    std::vector<std::string> lines;
    for (std::string line = next(); !line.empty(); line = next()) {
      lines.push_back(line);
      if (line.starts_with(prefix)) break;
    }
    return lines;
  }
  /// Sends `shutdown`, waits for serve (a minute at most) and returns its result (-1: still
  /// running) with everything it wrote after the events read so far.
  std::pair<int, std::string> finish() {
    send(R"({"type":"shutdown"})");
    return end();
  }
  /// Closes serve's stdin and waits as finish() does.
  std::pair<int, std::string> end() {
    ::close(requests_);
    requests_ = -1;
    std::string rest;
    for (int i = 0; i < 1200 && result_.wait_for(0s) != std::future_status::ready; ++i)
      rest += drain(50);
    if (result_.wait_for(0s) != std::future_status::ready) return {-1, rest};
    rest += drain(0);
    return {result_.get(), buffer_ + rest};
  }

 private:
  std::string drain(int timeout_ms) {
    std::string got;
    pollfd p{events_, POLLIN, 0};
    char chunk[65536];
    while (::poll(&p, 1, timeout_ms) > 0) {
      const ssize_t n = ::read(events_, chunk, sizeof chunk);
      if (n <= 0) break;
      got.append(chunk, static_cast<std::size_t>(n));
      timeout_ms = 0;
    }
    return got;
  }

  int requests_ = -1, serve_in_ = -1, events_ = -1, serve_out_ = -1;
  std::unique_ptr<FaultySysCalls> sys_;
  std::future<int> result_;
  std::string buffer_;
};

/// The descriptors this process has open (/proc/self/fd).
std::size_t open_descriptors() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator("/proc/self/fd")) ++n;
  return n - 1;  // the directory iterator's own
}

/// Whether this process has a child not yet reaped (every worker serve started must be).
bool unreaped_child() {
  return ::waitpid(-1, nullptr, WNOHANG) != -1 || errno != ECHILD;
}

/// The start of every stand-in worker: reads the exec line (rpc::exec_line(): `type`, then
/// `id`) into $line and the command's id into $id; $whole says whether the line arrived whole.
constexpr const char* kReadExec =
    "read -r line; id=${line#*\\\"id\\\":\\\"}; id=${id%%\\\"*}; "
    "case \"$line\" in '{\"type\":\"exec\"'*'}') whole=whole;; *) whole=cut;; esac; ";

/// A stand-in worker line that writes an `output` event of $id with `data` (shell words).
std::string output(const std::string& data) {
  return "printf '{\"type\":\"output\",\"id\":\"%s\",\"stream\":\"stdout\",\"data\":\"%s\"}\\n' "
         "\"$id\" " +
         data + "; ";
}

/// A stand-in worker line that writes the `exit` event of $id with exit code 0.
constexpr const char* kExit =
    "printf '{\"type\":\"exit\",\"id\":\"%s\",\"exit_code\":0}\\n' \"$id\"";

/// A worker that answers as a real one does for a command that writes "hi\n".
std::string hi_worker() {
  return std::string(kReadExec) + output("'hi\\n'") + kExit;
}

std::string started(const std::string& id) {
  return R"({"type":"started","id":")" + id + R"("})";
}
std::string hi(const std::string& id) {
  return R"({"type":"output","id":")" + id + R"(","stream":"stdout","data":"hi\n"})";
}
std::string exited(const std::string& id) {
  return R"({"type":"exit","id":")" + id + R"(","exit_code":0})";
}

std::string exec(const std::string& id, bool stdin_pipe = false) {
  return R"({"type":"exec","id":")" + id + R"(","command":"true","cwd":"/")" +
         (stdin_pipe ? R"(,"stdin":"pipe"})" : "}");
}

std::string launch_failed(const std::string& id, const std::string& message) {
  return R"({"type":"exit","id":")" + id + R"(","error":"launch_failed","message":")" + message +
         R"("})";
}

struct Exhausted {
  Call call;
  int nth;
  bool stdin_pipe;
  std::string message;
};

// Each call of starting a worker fails in its turn, out of descriptors: the exec ends with
// `launch_failed` naming the call (docs/protocol.md), every descriptor opened before the
// failure is closed again (a second pipe2(2) that fails leaves no first pipe behind), every
// worker started is reaped, and serve still ends on `shutdown` with 0.
TEST(ServeSysCalls, DescriptorsExhaustedAtEachCallEndTheExecNamingTheCall) {
  const std::vector<Exhausted> cases = {
      {Call::Pipe2, 1, false, "pipe2(): Too many open files"},
      {Call::Pipe2, 2, false, "pipe2(): Too many open files"},
      {Call::Pipe2, 3, true, "pipe2(): Too many open files"},
      {Call::Open, 1, false, "open(\\\"/dev/null\\\"): Too many open files"},
      {Call::PidfdOpen, 1, true, "pidfd_open(): Too many open files"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.message + " at call " + std::to_string(c.nth));
    const std::size_t before = open_descriptors();
    {
      Host host(hi_worker());
      host.sys().fail(c.call, c.nth, EMFILE);
      host.start();
      host.send(exec("x", c.stdin_pipe));
      EXPECT_EQ(host.next(), launch_failed("x", c.message));
      // serve goes on: the next exec runs.
      host.send(exec("y"));
      EXPECT_EQ(host.until(R"({"type":"exit")"),
                (std::vector<std::string>{started("y"), hi("y"), exited("y")}));
      EXPECT_EQ(host.finish(), std::make_pair(0, std::string()));
    }
    EXPECT_EQ(open_descriptors(), before);
    EXPECT_FALSE(unreaped_child());
  }
}

// A worker that cannot be started: fork(2) fails (EAGAIN, RLIMIT_NPROC), its pipes cannot be
// made non-blocking, or it ends before it writes a line (127: its own dup2 or execve failed).
// Each exec ends with `launch_failed` saying so, and nothing is left unreaped.
TEST(ServeSysCalls, AWorkerThatCannotBeStartedEndsItsExec) {
  {
    Host host(hi_worker());
    host.sys().fail(Call::Spawn, 1, EAGAIN);
    host.sys().fail(Call::Fcntl, 3, EBADF);  // after F_GETFL and F_SETFL of serve's stdout
    host.start();
    host.send(exec("x"));
    EXPECT_EQ(host.next(), launch_failed("x", "fork(): Resource temporarily unavailable"));
    host.send(exec("y"));
    EXPECT_EQ(host.next(), launch_failed("y", "fcntl(O_NONBLOCK): Bad file descriptor"));
    EXPECT_EQ(host.finish(), std::make_pair(0, std::string()));
  }
  {
    Host host("exit 127");
    host.start();
    host.send(exec("x"));
    EXPECT_EQ(host.next(), started("x"));
    EXPECT_EQ(host.next(),
              launch_failed("x", "the command's worker ended without a result (exit status 127)"));
    EXPECT_EQ(host.finish(), std::make_pair(0, std::string()));
  }
  EXPECT_FALSE(unreaped_child());
}

// serve cannot go on when poll(2) fails with anything but EINTR, or its stdout cannot be made
// non-blocking: it names the call on stderr, kills and reaps every worker, and returns 1.
TEST(ServeSysCalls, ALoopThatCannotGoOnKillsEveryWorkerAndSaysWhy) {
  {
    Host host(std::string(kReadExec) + "exec sleep 600");
    host.start();
    host.send(exec("x"));
    EXPECT_EQ(host.next(), started("x"));
    host.sys().fail_next(Call::Poll, ENOMEM);
    host.send(R"({"type":"hello","version":1})");  // wakes the loop for its next poll
    EXPECT_EQ(host.end().first, 1);
    EXPECT_EQ(host.sys().written(STDERR_FILENO),
              "pi-sandbox serve: poll(): Cannot allocate memory\n");
  }
  EXPECT_FALSE(unreaped_child());
  Host host(hi_worker());
  host.sys().fail(Call::Fcntl, 1, EBADF);
  host.start();
  EXPECT_EQ(host.end().first, 1);
  EXPECT_EQ(host.sys().written(STDERR_FILENO),
            "pi-sandbox serve: fcntl(stdout, O_NONBLOCK): Bad file descriptor\n");
}

std::vector<Call> interrupted(const std::vector<Made>& log) {
  std::vector<Call> calls;
  for (const auto& m : log)
    if (m.error == EINTR && std::find(calls.begin(), calls.end(), m.call) == calls.end())
      calls.push_back(m.call);
  std::sort(calls.begin(), calls.end());
  return calls;
}

// Every poll, read, write and waitpid interrupted once (EINTR, signal(7)) is made again: the
// host gets exactly the events it gets without interruptions, and serve ends with 0 and puts
// its stdout's flags back.
TEST(ServeSysCalls, EveryInterruptedCallIsMadeAgain) {
  Host host(hi_worker());
  const int flags = ::fcntl(host.serve_out(), F_GETFL);
  host.sys().interrupt_everything();
  host.start();
  host.send(R"({"type":"hello","version":1})");
  EXPECT_TRUE(host.next().starts_with(R"({"type":"hello","version":1,)"));
  host.send(exec("x"));
  EXPECT_EQ(host.until(R"({"type":"exit")"),
            (std::vector<std::string>{started("x"), hi("x"), exited("x")}));
  EXPECT_EQ(host.finish(), std::make_pair(0, std::string()));
  EXPECT_EQ(interrupted(host.sys().log()),
            (std::vector<Call>{Call::Poll, Call::Read, Call::Write, Call::Waitpid}));
  EXPECT_EQ(::fcntl(host.serve_out(), F_GETFL), flags);
  EXPECT_FALSE(unreaped_child());
}

/// A worker for a command with a stdin pipe: once serve writes it a second control line, it
/// reads the command's stdin to its end and writes whether the exec line came whole and how
/// many bytes stdin had.
std::string stdin_worker() {
  return std::string(kReadExec) + "read -r gate; n=$(wc -c <&3); " + output("\"$whole $n\"") +
         kExit;
}

/// An `approval_response` for `id`: serve passes it to the worker's control pipe.
std::string gate(const std::string& id) {
  return R"({"type":"approval_response","id":")" + id +
         R"(","request_id":"r-gate","choice":"deny"})";
}

std::string stdin_data(const std::string& id, const std::string& data) {
  return R"({"type":"stdin","id":")" + id + R"(","data":")" + data + R"("})";
}

// Every write taking only three bytes at a time (a short write, write(2)) is completed: the
// exec line reaches the worker whole, the command's stdin byte for byte, the host every event.
TEST(ServeSysCalls, ShortWritesAreCompleted) {
  Host host(stdin_worker());
  host.sys().short_writes(3);
  host.start();
  host.send(exec("p", true));
  host.send(stdin_data("p", std::string(1000, 'a')));
  host.send(R"({"type":"stdin_close","id":"p"})");
  host.send(gate("p"));
  EXPECT_EQ(host.until(R"({"type":"exit")"),
            (std::vector<std::string>{
                started("p"), R"({"type":"output","id":"p","stream":"stdout","data":"whole 1000"})",
                exited("p")}));
  EXPECT_EQ(host.finish(), std::make_pair(0, std::string()));
}

/// SIGKILL to every child of this process (/proc/PID/task/TID/children): what a test that
/// failed does so that a serve stuck writing to a worker that reads nothing is released.
void kill_children() {
  for (const auto& task : fs::directory_iterator("/proc/self/task")) {
    std::ifstream children(task.path() / "children");
    for (pid_t pid; children >> pid;) ::kill(pid, SIGKILL);
  }
}

// A worker that reads nothing more after its exec line (its control reader only starts with
// the first question) cannot stall serve however many answers the host sends it: they wait in
// serve, the loop goes on (the next request is answered, an abort ends the command).
TEST(ServeSysCalls, AWorkerThatReadsNoControlLinesStallsNothing) {
  Host host(std::string(kReadExec) + "exec sleep 600");
  host.start();
  host.send(exec("x"));
  EXPECT_EQ(host.next(), started("x"));
  // 256 answers of about 1 KiB for a control pipe of 64 KiB (pipe(7)), from another thread: a
  // serve that stalls stops reading them too (20 s is a bound, not a timing).
  auto sending = std::async(std::launch::async, [&host] {
    const std::string reason(1000, 'r');
    for (int i = 0; i < 256; ++i)
      host.send(R"({"type":"approval_response","id":"x","request_id":"r-)" + std::to_string(i) +
                R"(","choice":"deny","reason":")" + reason + R"("})");
    host.send(R"({"type":"hello","version":1})");
  });
  const bool sent = sending.wait_for(20s) == std::future_status::ready;
  EXPECT_TRUE(sent) << "serve stopped taking requests";
  if (!sent) kill_children();  // releases the stalled serve: its write fails with EPIPE
  sending.wait();
  EXPECT_TRUE(host.next().starts_with(R"({"type":"hello")"));
  host.send(R"({"type":"abort","id":"x"})");
  EXPECT_EQ(host.next(), launch_failed("x",
                                       "the command's worker ended without a result "
                                       "(killed by signal 15)"));
  EXPECT_EQ(host.finish(), std::make_pair(0, std::string()));
  EXPECT_FALSE(unreaped_child());
}

/// Whether every write that failed with EAGAIN was followed, before the next write to its
/// descriptor, by a poll(2) that waited for that descriptor to become writable, and no poll
/// in `log` had a zero timeout (which would spin).
::testing::AssertionResult waits_for_pollout(const std::vector<Made>& log) {
  for (std::size_t i = 0; i < log.size(); ++i) {
    if (log[i].call == Call::Poll && log[i].timeout_ms == 0)
      return ::testing::AssertionFailure() << "poll with a zero timeout at call " << i;
    if (log[i].call != Call::Write || log[i].error != EAGAIN) continue;
    for (std::size_t j = i + 1; j < log.size(); ++j) {
      if (log[j].call == Call::Poll && std::ranges::count(log[j].pollout, log[i].fd) > 0) break;
      if (log[j].call == Call::Write && log[j].fd == log[i].fd)
        return ::testing::AssertionFailure()
               << "write to " << log[i].fd << " again at call " << j << " without a poll";
    }
  }
  return ::testing::AssertionSuccess();
}

// EAGAIN from a non-blocking write (serve's stdout, a command's full stdin pipe) is waited out
// with poll(2) for POLLOUT, never by writing again at once: nothing spins, nothing is lost.
TEST(ServeSysCalls, EagainIsWaitedOutWithPollNotRetried) {
  Host host(stdin_worker());
  host.sys().fail(Call::Write, 1, EAGAIN, host.serve_out());
  host.sys().fail(Call::Write, 2, EAGAIN, host.serve_out());
  host.start();
  host.send(exec("p", true));
  // 256 KiB for a stdin pipe of 64 KiB (pipe(7)) that nobody reads before the gate.
  const std::string chunk(65536, 'b');
  for (int i = 0; i < 4; ++i) host.send(stdin_data("p", chunk));
  EXPECT_EQ(host.next(), started("p"));
  bool full = false;
  for (int i = 0; i < 400 && !full; ++i) {
    for (const auto& m : host.sys().log())
      full |= m.call == Call::Write && m.error == EAGAIN && m.fd != host.serve_out();
    if (!full) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(full) << "the command's stdin pipe never filled";
  host.send(R"({"type":"stdin_close","id":"p"})");
  host.send(gate("p"));
  EXPECT_EQ(
      host.until(R"({"type":"exit")"),
      (std::vector<std::string>{
          R"({"type":"output","id":"p","stream":"stdout","data":"whole 262144"})", exited("p")}));
  EXPECT_EQ(host.finish(), std::make_pair(0, std::string()));
  EXPECT_TRUE(waits_for_pollout(host.sys().log()));
}

// A host that reads nothing holds the workers back once HostOutput::kEventsBound bytes wait
// for it: serve stops reading their event pipes (at most one read, 64 KiB, past the bound), and
// when the host reads again every event arrives, in order.
TEST(ServeSysCalls, AHostThatReadsNothingHoldsTheWorkersBackAtTheBound) {
  const int lines = 3000;  // about 3.2 MiB of events
  Host host(std::string(kReadExec) + "x=$(printf '%01000d' 0); i=0; while [ $i -lt " +
            std::to_string(lines) + " ]; do " + output("\"$i$x\"") + "i=$((i+1)); done; " + kExit);
  host.sys().hold_host(true);
  host.start();
  host.send(exec("w"));
  for (int i = 0;
       i < 400 && host.sys().bytes_read_except(host.serve_in()) < HostOutput::kEventsBound; ++i)
    std::this_thread::sleep_for(50ms);
  // Time for a loop without a bound to read on; this one stays put.
  std::this_thread::sleep_for(300ms);
  const std::size_t read = host.sys().bytes_read_except(host.serve_in());
  EXPECT_GE(read, HostOutput::kEventsBound);
  EXPECT_LE(read, HostOutput::kEventsBound + 65536);
  host.sys().hold_host(false);
  host.send(R"({"type":"hello","version":1})");  // wakes the loop, which now sees POLLOUT
  // The hello answer comes between the worker's events (one queue, in the order serve took
  // them); the command's own events keep their order.
  std::vector<std::string> events;
  int hellos = 0;
  for (std::string line = host.next(); !line.empty(); line = host.next()) {
    if (line.starts_with(R"({"type":"hello")")) {
      ++hellos;
    } else {
      events.push_back(line);
      if (line.starts_with(R"({"type":"exit")")) break;
    }
  }
  EXPECT_EQ(hellos, 1);
  ASSERT_EQ(events.size(), lines + 2u);
  EXPECT_EQ(events.front(), started("w"));
  const std::string x(1000, '0');
  for (int i = 0; i < lines; ++i)
    ASSERT_EQ(events[i + 1], R"({"type":"output","id":"w","stream":"stdout","data":")" +
                                 std::to_string(i) + x + R"("})");
  EXPECT_EQ(events.back(), exited("w"));
  EXPECT_EQ(host.finish(), std::make_pair(0, std::string()));
}

}  // namespace
}  // namespace pisandbox::serve
