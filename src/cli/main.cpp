// pi-sandbox: runs a coding agent's shell commands inside an operating-system sandbox.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "approval/reviewer_process.hpp"
#include "cli/build_info.hpp"
#include "cli/commands.hpp"
#include "cli/usage_errors.hpp"
#include "core/phase_trace.hpp"

int main(int argc, char** argv) {
  pisandbox::core::phases::remember_start();
  CLI::App app{"pi-sandbox: run a coding agent's shell commands inside a Linux sandbox",
               "pi-sandbox"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(pisandbox::cli::version_line()));
  int exit_code = 0;
  pisandbox::cli::add_run_command(app, exit_code);
  pisandbox::cli::add_policy_command(app, exit_code);
  pisandbox::cli::add_doctor_command(app, exit_code);
  pisandbox::cli::add_config_command(app, exit_code);
  pisandbox::cli::add_approvals_command(app, exit_code);
  pisandbox::cli::add_proxy_connect_command(app, exit_code);
  pisandbox::cli::add_credential_helper_command(app, exit_code);
  pisandbox::cli::add_serve_command(app, exit_code);
  pisandbox::cli::add_serve_worker_command(app, exit_code);
  pisandbox::cli::add_quarantine_command(app, exit_code);
  // Unknown command words first: CLI11 would only say that a subcommand is required.
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (auto unknown = pisandbox::cli::unknown_command(app, args)) {
    pisandbox::cli::print_error(*unknown);
    return pisandbox::cli::kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ExtrasError&) {
    pisandbox::cli::print_error(pisandbox::cli::describe_extras(app));
    return pisandbox::cli::kExitUsage;
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    // Usage errors of `run` are setup failures: nothing was launched.
    return code == 0 ? 0 : (app.got_subcommand("run") ? pisandbox::cli::kExitSetupFailed : 2);
  }
  // A proxy decision may still be waiting (on the terminal, on a reviewer) on a detached
  // thread when the command has ended: leave without running static destructors under it.
  pisandbox::approval::kill_running_reviewers();
  std::cout.flush();
  std::fflush(nullptr);
  ::_exit(exit_code);
}
