// pisandbox::cli — the front end: one function per command (ARCHITECTURE.md "front ends").
// No policy decisions live here: the commands parse arguments, wire objects and print.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/loader.hpp"
#include "core/error.hpp"
#include "policy/sandbox_policy.hpp"

namespace pisandbox::cli {

/// Exit codes of `pi-sandbox run` (issue 2 "Command line").
inline constexpr int kExitTimeout = 124;
inline constexpr int kExitSetupFailed = 125;

/// Arguments shared by the commands that build a policy.
///   cwd: --cwd (default: the current directory); config: --config FILE.
struct PolicyArgs {
  std::string cwd = ".";
  std::string config;
};

/// The policy for `args`: the workspace is realpath(cwd); the trusted configuration is read
/// (issue 3). Errors are user-facing lines without the `pi-sandbox: ` prefix.
///   loaded_out: when not null, receives the configuration the policy was built from.
core::Result<policy::SandboxPolicy> build_policy(const PolicyArgs& args,
                                                 config::LoadedConfig* loaded_out = nullptr);

/// The user's home: $HOME when absolute, else the password database's, else "/".
std::filesystem::path home_directory();

/// Loads the trusted configuration: `explicit_path` when not empty, else the default
/// locations under $HOME (issue 3 "Where it is read from").
core::Result<config::LoadedConfig> load_config(const std::string& explicit_path);

/// Prints `pi-sandbox: <text>` (each line of a multi-line text is printed as is) to stderr.
void print_error(const std::string& text);

/// Registers the subcommands on `app`; each sets `exit_code` when it runs.
void add_run_command(CLI::App& app, int& exit_code);
void add_policy_command(CLI::App& app, int& exit_code);
void add_doctor_command(CLI::App& app, int& exit_code);
void add_config_command(CLI::App& app, int& exit_code);
void add_approvals_command(CLI::App& app, int& exit_code);
void add_proxy_connect_command(CLI::App& app, int& exit_code);
void add_serve_command(CLI::App& app, int& exit_code);
void add_serve_worker_command(CLI::App& app, int& exit_code);

}  // namespace pisandbox::cli
