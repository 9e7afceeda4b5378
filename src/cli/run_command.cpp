// `pi-sandbox run`: one command in the sandbox, with the documented exit codes.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli/commands.hpp"
#include "cli/reviewer_flag.hpp"
#include "core/deadline.hpp"
#include "core/io.hpp"
#include "core/phase_trace.hpp"
#include "core/printable.hpp"
#include "core/unique_fd.hpp"
#include "session/once_a_day.hpp"
#include "session/policy_setup.hpp"
#include "session/session.hpp"
#if !defined(__APPLE__)
#include "sandbox/linux/cgroup.hpp"
#endif

namespace pisandbox::cli {

using session::RunArgs;

namespace {

int received_signal(int signal_fd) {
  signalfd_siginfo info{};
  if (::read(signal_fd, &info, sizeof info) == sizeof info) return static_cast<int>(info.ssi_signo);
  return SIGTERM;
}

int run_command(const RunArgs& args) {
  // SIGINT, SIGTERM and SIGHUP cancel the sandbox.
  core::UniqueFd signals = session::cancel_signals();
  session::RunIo io;
  io.cancel_fd = signals.get();
  // The no-cgroup warning once a day, not on every command (docs/security.md, "Resource
  // limits").
  io.say_no_cgroup = [] {
    return session::notice_due(session::notice_stamp(session::home_directory(), "no-cgroup"));
  };
  const sandbox::Outcome outcome = session::execute(args, io);
  if (outcome) {
    if (const auto* exited = std::get_if<sandbox::Exited>(&*outcome)) return exited->code;
    return 128 + std::get<sandbox::Signaled>(*outcome).signal;
  }
  switch (outcome.error().kind) {
    case sandbox::RunFailureKind::TimedOut:
      print_error(session::timed_out_message(args.timeout_seconds));
      return kExitTimeout;
    case sandbox::RunFailureKind::Aborted:
      return 128 + received_signal(signals.get());
    case sandbox::RunFailureKind::LaunchFailed:
    case sandbox::RunFailureKind::GuardFailed:
    case sandbox::RunFailureKind::Stale:
      print_error(outcome.error().message);
      return kExitSetupFailed;
  }
  return kExitSetupFailed;
}

/// The command, then with PI_SANDBOX_TRACE_PHASES=1 its phases on stderr (docs/benchmarks.md,
/// "Phase trace").
int run(const RunArgs& args) {
  core::phases::enable_from_environment();
  const int code = run_command(args);
  if (const std::string phases = core::phases::report(); !phases.empty())
    (void)core::write_all(STDERR_FILENO, phases);
  return code;
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
            if (end == value.c_str() || *end != '\0' || !(seconds > 0) ||
                seconds > core::kMaxTimeoutSeconds)
              return std::string("must be a positive number of seconds, at most ") +
                     core::kMaxTimeoutText + ", got " + core::printable(value);
            return {};
          },
          "SECONDS"));
  cmd->add_option("--config", args->policy.config, "Trusted configuration file");
  CLI::Option* reviewer =
      cmd->add_option("--reviewer", args->approval.reviewer,
                      "Automatic reviewer program for approvals, by absolute path (run without a "
                      "shell; overrides approval.reviewer; docs/approvals.md)");
  cmd->add_flag("--no-prompt", args->approval.no_prompt,
                "Never ask on the terminal: what needs a human is denied");
  cmd->add_option("-c", args->shell_command, "Run SHELL COMMAND with /bin/bash -c");
  cmd->add_option("argv", args->argv, "-- PROGRAM [ARGS...]");
  cmd->positionals_at_end();
  cmd->callback([args, reviewer, &exit_code] {
    // Refused like a relative approval.reviewer (docs/approvals.md, "The reviewer program");
    // nothing was launched.
    if (reviewer->count() > 0)
      if (auto refused = reviewer_flag_error(args->approval.reviewer)) {
        print_error(*refused);
        exit_code = kExitSetupFailed;
        return;
      }
#if !defined(__APPLE__)
    // Before anything is forked: pi-sandbox alone in a delegated cgroup v2 directory moves
    // into a leaf of its own so the commands' cgroups get their controllers (docs/security.md,
    // "Resource limits").
    sandbox::linux_::prepare_cgroup_delegation();
#endif
    exit_code = run(*args);
  });
}

}  // namespace pisandbox::cli
