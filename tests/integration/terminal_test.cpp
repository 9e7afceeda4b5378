// The private pseudo-terminal (docs/security.md, "The terminal"; issue "Real developer
// machines (2)", row 6): pi-sandbox runs on a real pty made here, as a user's shell would run
// it, and every test asserts the exact bytes, exit code or termios fields.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "approval_network.hpp"
#include "harness.hpp"

namespace pisandbox::testing {
namespace {

using namespace std::chrono_literals;

/// Where pi-sandbox's stdout goes: the terminal, or a pipe the test reads (`| less`).
enum class Stdout { Terminal, Pipe };

/// The pty pi-sandbox runs on, like a terminal emulator's: the test holds the master (the
/// keyboard and the screen) and keeps the slave open to read its settings.
class OuterTerminal {
 public:
  OuterTerminal(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                winsize size = {24, 80, 0, 0}, Stdout out = Stdout::Terminal) {
    const bool stdout_to_pipe = out == Stdout::Pipe;
    termios settings{};
    settings.c_iflag = ICRNL | IXON | IUTF8;
    settings.c_oflag = OPOST | ONLCR;
    settings.c_cflag = CS8 | CREAD | B38400;
    settings.c_lflag = ISIG | ICANON | ECHO | ECHOE | ECHOK | IEXTEN | ECHOCTL | ECHOKE;
    const cc_t chars[] = {3, 28, 127, 21, 4, 0, 1, 0, 17, 19, 26, 0, 18, 15, 23, 22};
    std::memcpy(settings.c_cc, chars, sizeof chars);
    cfsetispeed(&settings, B38400);
    cfsetospeed(&settings, B38400);
    if (::openpty(&master_, &slave_, nullptr, &settings, &size) != 0)
      throw std::runtime_error("openpty");
    ::tcgetattr(slave_, &before_);
    int pipe_ends[2] = {-1, -1};
    if (stdout_to_pipe && ::pipe(pipe_ends) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setsid();
      ::ioctl(slave_, TIOCSCTTY, 0);
      ::dup2(slave_, 0);
      ::dup2(stdout_to_pipe ? pipe_ends[1] : slave_, 1);
      ::dup2(slave_, 2);
      ::close(master_);
      run_child(argv, env);
    }
    if (stdout_to_pipe) {
      ::close(pipe_ends[1]);
      pipe_ = pipe_ends[0];
    }
  }
  ~OuterTerminal() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      (void)finish();
    }
    ::close(master_);
    ::close(slave_);
    if (pipe_ >= 0) ::close(pipe_);
  }
  OuterTerminal(const OuterTerminal&) = delete;
  OuterTerminal& operator=(const OuterTerminal&) = delete;

  /// Waits up to `limit` for `text` on the screen after what earlier calls found.
  bool expect(const std::string& text, std::chrono::milliseconds limit = 20000ms) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (screen.find(text, from_) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      read_screen(50);
    }
    from_ = screen.find(text, from_) + text.size();
    return true;
  }

  void type(const std::string& keys) {
    if (!keys.empty()) (void)!::write(master_, keys.data(), keys.size());
  }

  void resize(unsigned short rows, unsigned short columns) {
    const winsize size{rows, columns, 0, 0};
    ::ioctl(master_, TIOCSWINSZ, &size);  // signals SIGWINCH to pi-sandbox's process group
  }

  /// The settings pi-sandbox's terminal has now.
  termios settings() const {
    termios now{};
    ::tcgetattr(slave_, &now);
    return now;
  }
  const termios& before() const { return before_; }

  /// Bytes typed into pi-sandbox's terminal that nobody has read yet.
  int unread_input() const {
    int count = -1;
    ::ioctl(slave_, FIONREAD, &count);
    return count;
  }

  pid_t pid() const { return pid_; }

  /// Reads the screen until pi-sandbox has exited (at most 60 s), then what is left; returns
  /// its exit code or 128+signal.
  int finish() {
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      read_screen(50);
    }
    exited_ = true;
    while (read_screen(100)) {
    }
    if (pipe_ >= 0) {
      char buffer[4096];
      ssize_t n;
      while ((n = ::read(pipe_, buffer, sizeof buffer)) > 0)
        piped.append(buffer, static_cast<std::size_t>(n));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::string screen;  ///< everything written to the terminal
  std::string piped;   ///< stdout, with stdout_to_pipe

 private:
  [[noreturn]] static void run_child(const std::vector<std::string>& argv,
                                     const std::map<std::string, std::string>& env) {
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const auto& word : argv) args.push_back(const_cast<char*>(word.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }

  /// Reads what the master has within `wait_ms`; returns whether anything came.
  bool read_screen(int wait_ms) {
    pollfd pfd{master_, POLLIN, 0};
    if (::poll(&pfd, 1, wait_ms) <= 0) return false;
    char buffer[4096];
    const ssize_t n = ::read(master_, buffer, sizeof buffer);
    if (n <= 0) return false;
    screen.append(buffer, static_cast<std::size_t>(n));
    return true;
  }

  int master_ = -1, slave_ = -1, pipe_ = -1;
  pid_t pid_ = -1;
  bool exited_ = false;
  std::size_t from_ = 0;
  termios before_{};
};

/// Every termios field, compared one by one so that a failure names the field.
void expect_same_settings(const termios& a, const termios& b) {
  EXPECT_EQ(a.c_iflag, b.c_iflag);
  EXPECT_EQ(a.c_oflag, b.c_oflag);
  EXPECT_EQ(a.c_cflag, b.c_cflag);
  EXPECT_EQ(a.c_lflag, b.c_lflag);
  EXPECT_EQ(a.c_line, b.c_line);
  for (int i = 0; i < NCCS; ++i) EXPECT_EQ(a.c_cc[i], b.c_cc[i]) << "c_cc[" << i << "]";
  EXPECT_EQ(cfgetispeed(&a), cfgetispeed(&b));
  EXPECT_EQ(cfgetospeed(&a), cfgetospeed(&b));
}

bool is_raw(const termios& t) {
  return (t.c_lflag & (ICANON | ISIG | ECHO)) == 0;
}

/// The screen less pi-sandbox's own warning lines (a missing cgroup or Landlock, which
/// depend on the machine, not on the terminal).
std::string without_warnings(const std::string& screen) {
  std::string kept;
  std::size_t start = 0;
  while (start < screen.size()) {
    std::size_t end = screen.find('\n', start);
    end = end == std::string::npos ? screen.size() : end + 1;
    const std::string line = screen.substr(start, end - start);
    if (!line.starts_with("pi-sandbox: warning:")) kept += line;
    start = end;
  }
  return kept;
}

/// A sleep unique to this test process (the root and unprivileged runs may overlap).
std::string unique_sleep(int salt) {
  return "sleep " + std::to_string(7000 + (::getpid() % 1000) * 10 + salt);
}

class Terminal : public ::testing::Test {
 protected:
  std::vector<std::string> run(const std::vector<std::string>& command,
                               const std::vector<std::string>& options = {}) const {
    std::vector<std::string> argv = {sandbox_binary(), "run", "--cwd", scratch_.ws.string()};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
  }
  std::map<std::string, std::string> env() const {
    auto env = scratch_.env();
    env["TERM"] = "xterm";
    env["PS1"] = "PROMPT> ";
    return env;
  }
  Scratch scratch_;
};

TEST_F(Terminal, TheIssueInputWorksAsOnTheHost) {
  OuterTerminal t(run({"sh", "-i", "-c", "printf works"}), env());
  EXPECT_EQ(t.finish(), 0) << t.screen;
  EXPECT_EQ(without_warnings(t.screen), "works");
  expect_same_settings(t.settings(), t.before());
}

TEST_F(Terminal, TtyNamesThePrivatePtyAndTheExitStatusPassesThrough) {
  OuterTerminal t(run({"sh", "-c", "tty; test -t 0 && test -t 1 && test -t 2 && exit 7"}), env());
  EXPECT_EQ(t.finish(), 7) << t.screen;
  EXPECT_EQ(without_warnings(t.screen), "/dev/pts/0\r\n");
}

TEST_F(Terminal, TheWindowSizeIsCopiedAndAResizeArrives) {
  OuterTerminal t(run({"bash", "--norc", "-c",
                       "stty size; trap 'stty size; exit 5' WINCH; echo ready; "
                       "while :; do sleep 0.05; done"}),
                  env(), winsize{33, 101, 0, 0});
  ASSERT_TRUE(t.expect("33 101\r\nready\r\n")) << t.screen;
  t.resize(40, 120);
  EXPECT_EQ(t.finish(), 5) << t.screen;
  EXPECT_EQ(without_warnings(t.screen), "33 101\r\nready\r\n40 120\r\n");
}

TEST_F(Terminal, JobControlWorksInAnInteractiveShell) {
  OuterTerminal t(run({"bash", "--norc", "--noprofile", "-i"}), env());
  ASSERT_TRUE(t.expect("PROMPT> ")) << t.screen;
  // What is typed, then what the screen shows next.
  const std::pair<std::string, std::string> dialogue[] = {
      {"sleep 9 &\r", "PROMPT> "},
      {"jobs\r", "[1]+  Running                 sleep 9 &\r\n"},
      {"", "PROMPT> "},
      {"kill %1\r", "PROMPT> "},
      {"sleep 1 &\r", "PROMPT> "},
      {"fg\r", "sleep 1\r\n"},
      {"", "PROMPT> "},
  };
  for (const auto& [keys, shown] : dialogue) {
    t.type(keys);
    ASSERT_TRUE(t.expect(shown)) << "after " << keys << ":\n" << t.screen;
  }
  t.type("exit 3\r");
  EXPECT_EQ(t.finish(), 3) << t.screen;
  EXPECT_NE(t.screen.find("Terminated              sleep 9"), std::string::npos) << t.screen;
  EXPECT_EQ(t.screen.find("no job control"), std::string::npos) << t.screen;
  EXPECT_EQ(t.screen.find("cannot set terminal process group"), std::string::npos) << t.screen;
  expect_same_settings(t.settings(), t.before());
}

TEST_F(Terminal, InputReachesTheCommandAndTheSettingsAreRestoredAfterANormalEnd) {
  OuterTerminal t(run({"sh", "-c", "echo ready; read line; echo \"got $line\"; exit 4"}), env());
  ASSERT_TRUE(t.expect("ready\r\n")) << t.screen;
  EXPECT_TRUE(is_raw(t.settings()));  // the caller's terminal is raw while input is relayed
  t.type("hello\r");
  EXPECT_EQ(t.finish(), 4) << t.screen;
  // The private pty echoes (it has the caller's settings); the caller's does not (raw).
  EXPECT_EQ(without_warnings(t.screen), "ready\r\nhello\r\ngot hello\r\n");
  expect_same_settings(t.settings(), t.before());
}

TEST_F(Terminal, CtrlCReachesTheCommandNotPiSandbox) {
  OuterTerminal t(run({"sh", "-c", "trap 'echo caught; exit 9' INT; echo ready; sleep 30 & wait"}),
                  env());
  ASSERT_TRUE(t.expect("ready\r\n")) << t.screen;
  t.type("\x03");
  EXPECT_EQ(t.finish(), 9) << t.screen;
  EXPECT_EQ(without_warnings(t.screen), "ready\r\n^Ccaught\r\n");
  expect_same_settings(t.settings(), t.before());
}

TEST_F(Terminal, TheSettingsAreRestoredAfterATimeout) {
  const std::string sleeper = unique_sleep(1);
  OuterTerminal t(run({"sh", "-c", "echo ready; " + sleeper}, {"--timeout", "1"}), env());
  ASSERT_TRUE(t.expect("ready\r\n")) << t.screen;
  EXPECT_TRUE(is_raw(t.settings()));
  EXPECT_EQ(t.finish(), 124) << t.screen;
  EXPECT_EQ(without_warnings(t.screen),
            "ready\r\npi-sandbox: command timed out after 1 seconds\r\n");
  expect_same_settings(t.settings(), t.before());
  EXPECT_TRUE(wait_until_gone(sleeper));
}

void expect_restored_after(int signal, int code, const std::vector<std::string>& argv,
                           const std::map<std::string, std::string>& env,
                           const std::string& sleeper) {
  OuterTerminal t(argv, env);
  ASSERT_TRUE(t.expect("ready\r\n")) << t.screen;
  EXPECT_TRUE(is_raw(t.settings()));
  ::kill(t.pid(), signal);
  EXPECT_EQ(t.finish(), code) << t.screen;
  if (signal == SIGKILL) {
    // Nothing in pi-sandbox runs after SIGKILL: its watchdog restores the settings.
    for (int i = 0; i < 250 && is_raw(t.settings()); ++i) std::this_thread::sleep_for(20ms);
  }
  expect_same_settings(t.settings(), t.before());
  EXPECT_TRUE(wait_until_gone(sleeper, 30000ms));
}

TEST_F(Terminal, TheSettingsAreRestoredAfterSigterm) {
  const std::string sleeper = unique_sleep(2);
  expect_restored_after(SIGTERM, 143, run({"sh", "-c", "echo ready; " + sleeper}), env(), sleeper);
}

TEST_F(Terminal, TheSettingsAreRestoredAfterSigint) {
  const std::string sleeper = unique_sleep(3);
  expect_restored_after(SIGINT, 130, run({"sh", "-c", "echo ready; " + sleeper}), env(), sleeper);
}

TEST_F(Terminal, TheSettingsAreRestoredAfterSigkillByTheWatchdog) {
  const std::string sleeper = unique_sleep(4);
  expect_restored_after(SIGKILL, 128 + SIGKILL, run({"sh", "-c", "echo ready; " + sleeper}), env(),
                        sleeper);
}

TEST_F(Terminal, TiocstiFromInsideReachesNoTerminal) {
  // Refused by the seccomp filter (EPERM) where the kernel still allows TIOCSTI; with the
  // private pty it could only have reached the command's own terminal anyway.
  const char* const inject =
      "import fcntl, termios, sys\n"
      "for fd in (0, 1, 2):\n"
      "    try:\n"
      "        fcntl.ioctl(fd, termios.TIOCSTI, b'X')\n"
      "        print('injected', fd)\n"
      "    except OSError as e:\n"
      "        print('refused', fd, e.errno)\n";
  OuterTerminal t(run({"python3", "-c", inject}), env());
  EXPECT_EQ(t.finish(), 0) << t.screen;
  EXPECT_EQ(without_warnings(t.screen), "refused 0 1\r\nrefused 1 1\r\nrefused 2 1\r\n");
  EXPECT_EQ(t.unread_input(), 0);
}

TEST_F(Terminal, StdoutIntoAPipeKeepsTodaysDescriptorsAndNeverTouchesTheTerminal) {
  // `pi-sandbox run ... | less`: the terminal belongs to the other program.
  OuterTerminal t(run({"sh", "-c", "echo ready; test -t 0 && echo stdin-is-the-callers; sleep 1"}),
                  env(), winsize{24, 80, 0, 0}, Stdout::Pipe);
  std::this_thread::sleep_for(500ms);
  expect_same_settings(t.settings(), t.before());
  EXPECT_EQ(t.finish(), 0) << t.screen;
  EXPECT_EQ(t.piped, "ready\nstdin-is-the-callers\n");
  expect_same_settings(t.settings(), t.before());
}

}  // namespace
}  // namespace pisandbox::testing

// ---- Approval questions on the terminal (docs/approvals.md, "The question and its answers") ----
// `pi-sandbox run` inside a private network where asked.test answers over HTTP: a real curl
// through the real proxy needs an approval, asked on the real pseudo-terminal. pi-sandbox's own
// lines arrive while the relay has the terminal in raw mode again, so they end in a bare LF.

namespace pisandbox::testing {
namespace {

/// What curl prints: the HTTP status of a request to asked.test through the proxy.
const std::string kCurlStatus = "curl -s -o /dev/null -w '%{http_code}\\n' http://asked.test/";

/// The question for `command`, as the terminal shows it (ONLCR: "\r\n").
std::string question_for(const std::string& command) {
  return "Sandbox approval required: connect asked.test:80\r\n"
         "Command: " +
         command +
         "\r\n"
         "  1) Deny\r\n"
         "  2) Allow this exact operation once\r\n"
         "  3) Allow asked.test:80 for the rest of this command\r\n"
         "  4) Allow asked.test:80 for this session\r\n"
         "Choice [1-4, Enter = Deny]: ";
}

/// What the screen shows after the last question's prompt: the answer's echo and what follows,
/// every line ending in "\n". (pi-sandbox's own line after the question may reach the terminal
/// just before or just after the relay has put it back in raw mode, which ends it in "\r\n".)
std::string after_the_prompt(const std::string& screen) {
  const std::string prompt = "Choice [1-4, Enter = Deny]: ";
  const std::size_t at = screen.rfind(prompt);
  std::string text = at == std::string::npos ? screen : screen.substr(at + prompt.size());
  for (std::size_t crlf = text.find("\r\n"); crlf != std::string::npos; crlf = text.find("\r\n"))
    text.erase(crlf, 1);
  return without_warnings(text);
}

const std::string kRefused = "pi-sandbox: network: refused asked.test:80: ";

class TerminalQuestions : public ApprovalNetworkSuite {
 protected:
  /// `pi-sandbox run -c command` inside the network.
  std::vector<std::string> run(const std::string& command,
                               const std::vector<std::string>& options = {}) const {
    std::vector<std::string> argv = {sandbox_binary(), "run", "--cwd", scratch_.ws.string()};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"-c", command});
    return network_->inside(argv);
  }
  std::map<std::string, std::string> env() const {
    auto env = ApprovalNetwork::without_proxies(scratch_.env());
    env["TERM"] = "xterm";
    return env;
  }
  /// Runs `command` on a terminal, answers its one question with `keys`, waits for the end;
  /// returns the exit code.
  int answered(OuterTerminal& t, const std::string& command, const std::string& keys) {
    EXPECT_TRUE(t.expect(question_for(command))) << t.screen;
    t.type(keys);
    return t.finish();
  }
  Scratch scratch_;
};

TEST_F(TerminalQuestions, AllowOnceIsTheSecondChoice) {
  OuterTerminal t(run(kCurlStatus), env());
  EXPECT_EQ(answered(t, kCurlStatus, "2\r"), 0) << t.screen;
  EXPECT_EQ(after_the_prompt(t.screen), "2\n200\n");
  expect_same_settings(t.settings(), t.before());
}

TEST_F(TerminalQuestions, DenyIsTheFirstChoice) {
  OuterTerminal t(run(kCurlStatus), env());
  EXPECT_EQ(answered(t, kCurlStatus, "1\r"), 0) << t.screen;
  EXPECT_EQ(after_the_prompt(t.screen), "1\n" + kRefused + "Denied by the user.\n403\n");
}

TEST_F(TerminalQuestions, EnterOnAnEmptyLineDenies) {
  OuterTerminal t(run(kCurlStatus), env());
  EXPECT_EQ(answered(t, kCurlStatus, "\r"), 0) << t.screen;
  EXPECT_EQ(after_the_prompt(t.screen), "\n" + kRefused + "Denied by the user.\n403\n");
  expect_same_settings(t.settings(), t.before());
}

TEST_F(TerminalQuestions, EscDenies) {
  OuterTerminal t(run(kCurlStatus), env());
  EXPECT_EQ(answered(t, kCurlStatus, "\x1b"), 0) << t.screen;
  EXPECT_EQ(after_the_prompt(t.screen), "\n" + kRefused + "Denied by the user.\n403\n");
  expect_same_settings(t.settings(), t.before());
}

TEST_F(TerminalQuestions, CtrlCIsNobodyAnswering) {
  OuterTerminal t(run(kCurlStatus), env());
  EXPECT_EQ(answered(t, kCurlStatus, "\x03"), 0) << t.screen;
  EXPECT_EQ(after_the_prompt(t.screen),
            "\nCancelled.\n" + kRefused +
                "Approval needs a human, and none could be asked (no terminal, prompting off, or "
                "cancelled).\n403\n");
}

TEST_F(TerminalQuestions, AnUnknownAnswerAsksAgain) {
  OuterTerminal t(run(kCurlStatus), env());
  ASSERT_TRUE(t.expect(question_for(kCurlStatus))) << t.screen;
  t.type("7\r");
  ASSERT_TRUE(t.expect("7\r\nPlease answer 1-4, or Enter for Deny.\r\n")) << t.screen;
  t.type("2\r");
  EXPECT_EQ(t.finish(), 0) << t.screen;
  EXPECT_EQ(after_the_prompt(t.screen), "2\n200\n");
}

TEST_F(TerminalQuestions, ForTheRestOfTheCommandAndForTheSessionAskOnce) {
  for (const std::string choice : {"3", "4"}) {
    const std::string command = kCurlStatus + "; " + kCurlStatus + "; " + kCurlStatus;
    OuterTerminal t(run(command), env());
    EXPECT_EQ(answered(t, command, choice + "\r"), 0) << t.screen;
    EXPECT_EQ(after_the_prompt(t.screen), choice + "\n200\n200\n200\n");
    // One question only.
    EXPECT_EQ(t.screen.find("Sandbox approval required"),
              t.screen.rfind("Sandbox approval required"))
        << t.screen;
  }
}

TEST_F(TerminalQuestions, AQuestionWithADeadlineSaysSoAndIsRefusedWhenItPasses) {
  const fs::path config = scratch_.root / "question.json";
  write_file(config, R"({"approval": {"questionTimeoutSeconds": 1}})");
  OuterTerminal t(run(kCurlStatus, {"--config", config.string()}), env());
  ASSERT_TRUE(t.expect("Command: " + kCurlStatus + "\r\nUnanswered, this is refused at "))
      << t.screen;
  ASSERT_TRUE(t.expect(" (in 1 s).\r\n  1) Deny\r\n")) << t.screen;
  // Nobody types: the question ends at its deadline.
  EXPECT_EQ(t.finish(), 0) << t.screen;
  EXPECT_EQ(after_the_prompt(t.screen), "\nNobody answered the question within 1 s.\n" + kRefused +
                                            "Nobody answered the question within 1 s.\n403\n");
  expect_same_settings(t.settings(), t.before());
}

TEST_F(TerminalQuestions, WithoutADeadlineNoDeadlineLine) {
  OuterTerminal t(run(kCurlStatus), env());
  EXPECT_EQ(answered(t, kCurlStatus, "1\r"), 0) << t.screen;
  EXPECT_EQ(t.screen.find("Unanswered"), std::string::npos) << t.screen;
}

TEST_F(TerminalQuestions, AQuestionOpenWhenTheCommandEndsEndsWithItAndTheTerminalIsRestored) {
  // curl gives up after 1 s; nobody answers; the question must not outlive the command.
  const std::string command =
      "curl -s --max-time 1 -o /dev/null -w '%{http_code}\\n' http://asked.test/";
  OuterTerminal t(run(command), env());
  ASSERT_TRUE(t.expect(question_for(command))) << t.screen;
  EXPECT_EQ(t.finish(), 28) << t.screen;
  EXPECT_NE(after_the_prompt(t.screen).find("\nThe command ended before the question was "
                                            "answered.\n"),
            std::string::npos)
      << t.screen;
  expect_same_settings(t.settings(), t.before());
  // The decision the command's end made is in the audit log, once.
  EXPECT_EQ(audit_lines_with(scratch_.home,
                             R"("reason":"The command ended before the question was answered.")"),
            1u);
}

TEST_F(TerminalQuestions, ASpinnerWaitsWhileTheQuestionIsOpenAndCarriesOnAfter) {
  // npm's spinner: `\r` and one of | / - \ , again and again, while curl waits for its answer.
  const std::string spinner =
      "while :; do for c in '|' / - '\\'; do printf '\\r%s' \"$c\"; sleep 0.02; done; done & "
      "s=$!; " +
      kCurlStatus + "; kill $s; echo done";
  OuterTerminal t(run(spinner), env());
  ASSERT_TRUE(t.expect("Choice [1-4, Enter = Deny]: ")) << t.screen;
  // The question arrived whole: from its title to its prompt, nothing of the spinner's.
  const std::size_t title = t.screen.rfind("Sandbox approval required: ");
  ASSERT_NE(title, std::string::npos) << t.screen;
  EXPECT_EQ(t.screen.substr(title), question_for(spinner));
  // Held: the spinner's frames (one every 20 ms) do not reach the terminal while it is open.
  const std::string prompt = "Choice [1-4, Enter = Deny]: ";
  const std::size_t shown = t.screen.rfind(prompt) + prompt.size();
  EXPECT_FALSE(t.expect("\r", 600ms));
  EXPECT_EQ(t.screen.substr(shown), "");
  t.type("2\r");
  ASSERT_TRUE(t.expect("2\r\n")) << t.screen;
  // It carries on after the answer, then curl's status and the end.
  const std::size_t answered_at = t.screen.find("2\r\n", shown) + 3;  // the answer's echo
  EXPECT_TRUE(t.expect("done\r\n")) << t.screen;
  EXPECT_EQ(t.finish(), 0) << t.screen;
  const std::string after = t.screen.substr(answered_at);
  EXPECT_NE(after.find("200\r\n"), std::string::npos) << after;
  std::size_t frames = 0;
  for (const char* frame : {"\r|", "\r/", "\r-", "\r\\"})
    for (std::size_t at = after.find(frame); at != std::string::npos;
         at = after.find(frame, at + 1))
      ++frames;
  EXPECT_GE(frames, 1u) << after;
  expect_same_settings(t.settings(), t.before());
}

}  // namespace
}  // namespace pisandbox::testing
