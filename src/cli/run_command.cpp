// `pi-sandbox run`: one command in the sandbox, with the documented exit codes.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <chrono>
#include <cmath>

#include "cli/approval_setup.hpp"
#include "cli/commands.hpp"
#include "core/unique_fd.hpp"
#include "hostipc/host_ipc.hpp"
#include "process/host_runner.hpp"
#include "sandbox/linux/runner.hpp"

extern char** environ;

namespace pisandbox::cli {

namespace {

struct RunArgs {
  PolicyArgs policy;
  ApprovalArgs approval;
  double timeout_seconds = 0;
  std::string shell_command;
  std::vector<std::string> argv;
};

/// The command's environment: the caller's, with the private temp directory (item 95).
std::vector<std::string> command_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry = *e;
    const std::string_view name = entry.substr(0, entry.find('='));
    if (name == "TMPDIR" || name == "TMP" || name == "TEMP" || name == "PI_SANDBOX") continue;
    env.emplace_back(entry);
  }
  for (const char* name : {"TMPDIR", "TMP", "TEMP"}) env.push_back(std::string(name) + "=/tmp");
  env.emplace_back("PI_SANDBOX=1");
  return env;
}

/// The caller's own environment, unchanged: what an approved host run gets (issue 6).
std::vector<std::string> caller_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

/// Writes output to pi-sandbox's own stdout and stderr, whole (a closed reader drops it).
class StdioSink final : public sandbox::OutputSink {
 public:
  void write(sandbox::Stream stream, std::string_view bytes) override {
    const int fd = stream == sandbox::Stream::Stdout ? STDOUT_FILENO : STDERR_FILENO;
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }
};

/// SIGINT, SIGTERM and SIGHUP cancel the sandbox; they are read from a signalfd.
core::UniqueFd cancel_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, sig);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  return core::UniqueFd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
}

int received_signal(int signal_fd) {
  signalfd_siginfo info{};
  if (::read(signal_fd, &info, sizeof info) == sizeof info) return static_cast<int>(info.ssi_signo);
  return SIGTERM;
}

std::string seconds_text(double seconds) {
  if (seconds == std::floor(seconds)) return std::to_string(static_cast<long long>(seconds));
  std::string text = std::to_string(seconds);
  while (text.back() == '0') text.pop_back();
  return text;
}

int run(const RunArgs& args) {
  if (args.shell_command.empty() == args.argv.empty()) {
    print_error("run needs either -c 'SHELL COMMAND' or -- PROGRAM [ARGS...]");
    return kExitSetupFailed;
  }
  config::LoadedConfig loaded;
  auto policy = build_policy(args.policy, &loaded);
  if (!policy) {
    print_error(policy.error().describe());
    return kExitSetupFailed;
  }
  sandbox::Command command;
  command.argv = args.argv.empty() ? std::vector<std::string>{"/bin/bash", "-c", args.shell_command}
                                   : args.argv;
  command.cwd = policy->workspace;
  command.env = command_environment();
  core::UniqueFd signals = cancel_signals();
  sandbox::RunOptions options;
  if (args.timeout_seconds > 0)
    options.timeout = std::chrono::milliseconds(std::llround(args.timeout_seconds * 1000));
  options.cancel_fd = signals.get();
  const auto warn = [](const std::string& line) { print_error(line); };
  const config::HostIpcConfig& host_ipc = loaded.config->host_ipc;
  sandbox::Outcome outcome;
  if (args.shell_command.empty() || host_ipc.mode == config::HostIpcMode::Off) {
    outcome = sandbox::linux_::run_sandboxed(*policy, std::move(command), options, warn);
  } else {
    // Host IPC (issue 6). Output goes through pipes only when the sandboxed attempt's
    // stderr must be read for a Unix-socket refusal; otherwise the command keeps the
    // caller's terminal.
    ::signal(SIGPIPE, SIG_IGN);
    StdioSink stdio;
    ApprovalSetup approvals(home_directory(), loaded, args.approval);
    const std::string session = new_id("run-");
    hostipc::Invocation invocation;
    invocation.command = args.shell_command;
    invocation.cwd = policy->workspace.string();
    invocation.timeout = options.timeout;
    invocation.subagent = hostipc::is_subagent(command.env);
    const approval::SteadyClock clock;
    hostipc::Collaborators with{
        .sandboxed =
            [&](std::optional<std::chrono::milliseconds> timeout, sandbox::OutputSink& output) {
              sandbox::RunOptions attempt = options;
              attempt.timeout = timeout;
              if (host_ipc.retry_on_unix_socket_error) attempt.output = &output;
              return sandbox::linux_::run_sandboxed(*policy, command, attempt, warn);
            },
        .host =
            [&](std::optional<std::chrono::milliseconds> timeout, sandbox::OutputSink&) {
              sandbox::RunOptions host = options;
              host.timeout = timeout;
              sandbox::Command on_host{
                  {"/bin/bash", "-c", args.shell_command}, policy->workspace, caller_environment()};
              return process::run_on_host(on_host, host);
            },
        .approve =
            [&](const approval::BoundaryRequest& request, std::string_view warning) {
              approval::ApprovalContext context{session, session, std::string(warning)};
              return approvals.broker().approve(request, context);
            },
        .clock = clock,
        .new_id =
            [](std::string_view kind) {
              return new_id("sandbox-runtime-" + std::string(kind) + "-");
            },
    };
    outcome = hostipc::run(host_ipc, invocation, with, stdio);
  }
  if (outcome) {
    if (const auto* exited = std::get_if<sandbox::Exited>(&*outcome)) return exited->code;
    return 128 + std::get<sandbox::Signaled>(*outcome).signal;
  }
  switch (outcome.error().kind) {
    case sandbox::RunFailureKind::TimedOut:
      print_error("command timed out after " + seconds_text(args.timeout_seconds) + " seconds");
      return kExitTimeout;
    case sandbox::RunFailureKind::Aborted:
      return 128 + received_signal(signals.get());
    case sandbox::RunFailureKind::LaunchFailed:
      print_error("sandbox setup failed: " + outcome.error().message);
      return kExitSetupFailed;
  }
  return kExitSetupFailed;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run one command inside the sandbox");
  cmd->add_option("--cwd", args->policy.cwd, "Workspace (default: the current directory)");
  cmd->add_option("--timeout", args->timeout_seconds, "Kill the command after SECONDS")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            char* end = nullptr;
            const double seconds = std::strtod(value.c_str(), &end);
            if (end == value.c_str() || *end != '\0' || !(seconds > 0) || seconds > 1e9)
              return "must be a positive number of seconds, got " + value;
            return {};
          },
          "SECONDS"));
  cmd->add_option("--config", args->policy.config, "Trusted configuration file");
  cmd->add_option("--reviewer", args->approval.reviewer,
                  "Automatic reviewer program for approvals (run without a shell; overrides "
                  "approval.reviewer)");
  cmd->add_flag("--no-prompt", args->approval.no_prompt,
                "Never ask on the terminal: what needs a human is denied");
  cmd->add_option("-c", args->shell_command, "Run SHELL COMMAND with /bin/bash -c");
  cmd->add_option("argv", args->argv, "-- PROGRAM [ARGS...]");
  cmd->positionals_at_end();
  cmd->callback([args, &exit_code] { exit_code = run(*args); });
}

}  // namespace pisandbox::cli
