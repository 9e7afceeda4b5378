// pisandbox::cli — the front end: one function per command (docs/ARCHITECTURE.md). No
// policy decisions live here: the commands parse arguments, call session/, serve/ and the
// mechanisms, print, and choose the exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace pisandbox::cli {

/// Exit codes of `pi-sandbox run` (README.md, "Usage").
inline constexpr int kExitTimeout = 124;
inline constexpr int kExitSetupFailed = 125;

/// Prints `pi-sandbox: <text>` (each line of a multi-line text is printed as is) to stderr.
void print_error(const std::string& text);

/// Registers the subcommands on `app`; each sets `exit_code` when it runs.
void add_run_command(CLI::App& app, int& exit_code);
void add_policy_command(CLI::App& app, int& exit_code);
void add_doctor_command(CLI::App& app, int& exit_code);
void add_config_command(CLI::App& app, int& exit_code);
void add_approvals_command(CLI::App& app, int& exit_code);
void add_proxy_connect_command(CLI::App& app, int& exit_code);
void add_credential_helper_command(CLI::App& app, int& exit_code);
void add_serve_command(CLI::App& app, int& exit_code);
void add_serve_worker_command(CLI::App& app, int& exit_code);
void add_quarantine_command(CLI::App& app, int& exit_code);

}  // namespace pisandbox::cli
