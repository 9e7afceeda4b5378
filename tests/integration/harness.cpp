#include "harness.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace pisandbox::testing {

std::string sandbox_binary() {
  if (const char* env = ::getenv("PI_SANDBOX_BINARY"); env != nullptr && *env != '\0') return env;
  return PI_SANDBOX_BINARY;
}

namespace {

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> all;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const auto eq = entry.find('=');
    if (eq != std::string::npos) all[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [k, v] : extra) all[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : all) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

[[noreturn]] void exec_child(std::vector<std::string> argv,
                             const std::map<std::string, std::string>& env) {
  auto envs = merged_environment(env);
  auto argp = pointers(argv);
  auto envp = pointers(envs);
  ::execve(argp[0], argp.data(), envp.data());
  ::_exit(127);
}

void drain(int out_fd, int err_fd, std::string& out, std::string& err) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  int open = 2;
  char buffer[65536];
  while (open > 0) {
    if (::poll(fds, 2, -1) < 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
}

}  // namespace

RunResult run_process(const std::vector<std::string>& argv,
                      const std::map<std::string, std::string>& env) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    exec_child(argv, env);
  }
  ::close(out[1]);
  ::close(err[1]);
  RunResult result;
  drain(out[0], err[0], result.out, result.err);
  result.exit_code = wait_process(pid);
  return result;
}

pid_t spawn_process(const std::vector<std::string>& argv,
                    const std::map<std::string, std::string>& env) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    exec_child(argv, env);
  }
  return pid;
}

pid_t spawn_piped(const std::vector<std::string>& argv,
                  const std::map<std::string, std::string>& env, int& to_child, int& from_child) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    exec_child(argv, env);
  }
  ::close(in[0]);
  ::close(out[1]);
  to_child = in[1];
  from_child = out[0];
  return pid;
}

namespace {

// Reads from `master` until `needle` appears in `screen` after `from` (or EOF/EIO, or
// `limit`).
bool read_until(int master, std::string& screen, std::size_t from, const std::string& needle,
                std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (screen.find(needle, from) == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{master, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::read(master, buffer, sizeof buffer);
    if (n <= 0) return false;
    screen.append(buffer, static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

PtyRun run_on_terminal(const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& env,
                       const std::vector<std::pair<std::string, std::string>>& script) {
  PtyRun run;
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) return run;
  if (pid == 0) exec_child(argv, env);
  std::size_t from = 0;
  for (const auto& [text, answer] : script) {
    if (!read_until(master, run.screen, from, text, std::chrono::seconds(20))) break;
    from = run.screen.size();
    (void)!::write(master, answer.data(), answer.size());
  }
  read_until(master, run.screen, from, "\x01never\x01", std::chrono::seconds(20));  // to EOF
  ::close(master);
  run.exit_code = wait_process(pid);
  return run;
}

int wait_process(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

bool process_running(const std::string& needle) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (!std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::string cmdline = read_file(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos) return true;
  }
  return false;
}

bool wait_until_gone(const std::string& needle, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (process_running(needle)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::vector<std::string> list_dir(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    names.push_back(entry.path().filename());
  std::ranges::sort(names);
  return names;
}

fs::path scratch_base() {
  // Not under /tmp: a workspace there draws a warning on every run (its surroundings are
  // private to each command), which the tests of exact output would have to expect.
  if (const char* base = ::getenv("PI_SANDBOX_TEST_TMPDIR"); base != nullptr && base[0] == '/')
    return base;
  const char* home = ::getenv("HOME");
  if (home == nullptr || home[0] != '/' || fs::path(home) == "/")
    throw std::runtime_error("set PI_SANDBOX_TEST_TMPDIR or HOME to a writable directory");
  return fs::path(home) / ".cache/pi-sandbox-tests";
}

Scratch::Scratch() {
  const fs::path base = scratch_base();
  fs::create_directories(base);
  std::string tmpl = (base / "it-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp in " + base.string());
  root = tmpl;
  home = root / "home";
  ws = home / "ws";
  fs::create_directories(ws);
  write_file(home / ".ssh/id_rsa", "PRIVATE KEY\n");
  write_file(home / ".gitconfig", "[user]\n\tname = Sandbox Test\n\temail = t@example.com\n");
}

Scratch::~Scratch() {
  std::error_code ec;
  fs::remove_all(root, ec);
}

std::map<std::string, std::string> Scratch::env() const {
  return {{"HOME", home.string()}, {"GIT_CONFIG_NOSYSTEM", "1"}, {"LC_ALL", "C"}};
}

RunResult Scratch::run(const std::string& command, const std::vector<std::string>& extra,
                       const std::optional<fs::path>& cwd) const {
  std::vector<std::string> argv = {sandbox_binary(), "run", "--cwd", (cwd ? *cwd : ws).string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back("-c");
  argv.push_back(command);
  return run_process(argv, env());
}

bool unix_sockets_brokered() {
  static const bool brokered = [] {
    const RunResult doctor = run_process({sandbox_binary(), "doctor"});
    return doctor.out.find("Unix socket broker") != std::string::npos &&
           doctor.out.find("socket(AF_UNIX) is refused inside") == std::string::npos;
  }();
  return brokered;
}

void write_retry_only_reviewer(const fs::path& path) {
  write_file(path,
             "#!/bin/sh\ncase \"$(cat)\" in\n*connect-unix*) echo "
             "'{\"outcome\":\"deny\",\"risk_level\":\"low\",\"rationale\":\"no socket\"}' ;;\n"
             "*) echo '{\"outcome\":\"allow\",\"risk_level\":\"low\",\"rationale\":\"host run\"}' "
             ";;\nesac\n");
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
}

}  // namespace pisandbox::testing
