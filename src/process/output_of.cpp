#include "process/output_of.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "core/unique_fd.hpp"

namespace pisandbox::process {

namespace {

using Clock = std::chrono::steady_clock;

struct Pipe {
  core::UniqueFd read;
  core::UniqueFd write;
};

core::Result<Pipe> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::unexpected(core::sys_error("pipe2()", errno));
  return Pipe{core::UniqueFd(fds[0]), core::UniqueFd(fds[1])};
}

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// The child: its own process group, stdin and stdout the pipes, stderr /dev/null. Only
// async-signal-safe calls after fork().
[[noreturn]] void exec_child(const OutputOf& run, char* const* argv, char* const* envp, int in,
                             int out) {
  ::setpgid(0, 0);
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (::dup2(in, STDIN_FILENO) < 0 || ::dup2(out, STDOUT_FILENO) < 0 || null < 0 ||
      ::dup2(null, STDERR_FILENO) < 0 || ::chdir(run.cwd.c_str()) != 0)
    ::_exit(127);
  ::signal(SIGPIPE, SIG_DFL);
  ::execve(argv[0], argv, envp);
  ::_exit(127);
}

core::Error failure(const OutputOf& run, std::string what) {
  return core::Error{run.argv.front() + " " + std::move(what), {}, 0};
}

// Writes the input and reads stdout until it closes, the deadline passes or it prints too much.
core::Result<std::string> exchange(const OutputOf& run, Pipe& in, Pipe& out,
                                   Clock::time_point end) {
  std::string output;
  std::size_t written = 0;
  if (run.input.empty()) in.write = core::UniqueFd();
  (void)::fcntl(in.write.get(), F_SETFL, O_NONBLOCK);
  while (true) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(end - Clock::now()).count();
    if (left <= 0)
      return std::unexpected(
          failure(run, "did not answer within " + std::to_string(run.timeout.count()) + " s"));
    pollfd fds[2] = {{out.read.get(), POLLIN, 0}, {in.write ? in.write.get() : -1, POLLOUT, 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return std::unexpected(core::sys_error("poll()", errno));
    if (in.write && fds[1].revents != 0) {
      const ssize_t n =
          ::write(in.write.get(), run.input.data() + written, run.input.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) written = run.input.size();  // it left
      if (written == run.input.size()) in.write = core::UniqueFd();
    }
    if (fds[0].revents != 0) {
      char buffer[4096];
      const ssize_t n = ::read(out.read.get(), buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return output;
      output.append(buffer, static_cast<std::size_t>(n));
      if (output.size() > run.max_output)
        return std::unexpected(
            failure(run, "printed more than " + std::to_string(run.max_output) + " bytes"));
    }
  }
}

}  // namespace

core::Result<std::string> output_of(const OutputOf& run) {
  if (run.argv.empty()) return std::unexpected(core::Error{"output_of: no program", {}, 0});
  auto in = make_pipe();
  if (!in) return std::unexpected(in.error());
  auto out = make_pipe();
  if (!out) return std::unexpected(out.error());
  auto argv = pointers(run.argv);
  auto envp = pointers(run.env);
  const pid_t pid = ::fork();
  if (pid < 0)
    return std::unexpected(
        failure(run, "could not be started: " + core::sys_error("fork()", errno).message));
  if (pid == 0) exec_child(run, argv.data(), envp.data(), in->read.get(), out->write.get());
  ::setpgid(pid, pid);  // also here: no race with the kill below
  in->read = core::UniqueFd();
  out->write = core::UniqueFd();
  const Clock::time_point end = Clock::now() + run.timeout;
  auto output = exchange(run, *in, *out, end);
  in->write = core::UniqueFd();
  out->read = core::UniqueFd();
  // Its stdout has ended: it exits now, unless it hangs on; waited for until the deadline.
  int status = 0;
  pid_t waited = 0;
  while (output && (waited = ::waitpid(pid, &status, WNOHANG)) == 0 && Clock::now() < end)
    ::usleep(2000);
  ::kill(-pid, SIGKILL);  // nothing of it outlives its answer
  if (waited != pid)
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  if (!output) return output;
  if (waited != pid)
    return std::unexpected(
        failure(run, "did not answer within " + std::to_string(run.timeout.count()) + " s"));
  if (WIFSIGNALED(status))
    return std::unexpected(
        failure(run, "was killed by signal " + std::to_string(WTERMSIG(status))));
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    return std::unexpected(
        failure(run, "exited with status " + std::to_string(WEXITSTATUS(status))));
  return output;
}

}  // namespace pisandbox::process
