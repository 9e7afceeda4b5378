// `pi-sandbox approvals check REQUEST.json` runs one boundary request through the approval
// broker exactly as a boundary crossing would and prints the result (exit 0 allow, 1 deny,
// 2 usage or invalid request); `pi-sandbox approvals tail` shows the audit log one line per
// decision (docs/approvals.md; docs/compatibility.md, "Approvals").
#include <pwd.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "approval/audit_log.hpp"
#include "approval/broker.hpp"
#include "approval/reviewer_process.hpp"
#include "approval/terminal_prompt.hpp"
#include "cli/approvals_tail.hpp"
#include "cli/commands.hpp"
#include "cli/reviewer_flag.hpp"
#include "session/approval_setup.hpp"
#include "session/host_programs.hpp"
#include "session/policy_setup.hpp"
#include "session/session.hpp"

namespace pisandbox::cli {

namespace fs = std::filesystem;
using namespace pisandbox::approval;

namespace {

struct CheckArgs {
  std::string request_file;
  std::string reviewer;
  std::string config;
  std::string scope = "approvals-check";
  bool no_prompt = false;
};

core::Result<std::string> read_request_text(const std::string& file) {
  if (file == "-") return std::string(std::istreambuf_iterator<char>(std::cin), {});
  std::ifstream in(file, std::ios::binary);
  if (!in) return core::fail_errno("open(\"" + file + "\")");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string result_json(const ApprovalResult& result) {
  nlohmann::ordered_json out;
  out["action"] = to_string(result.action);
  out["source"] = to_string(result.source);
  out["reason"] = result.reason;
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

int run_check(const CheckArgs& args) {
  auto text = read_request_text(args.request_file);
  if (!text) return print_error(text.error().describe()), 2;
  auto request = parse_boundary_request(*text);
  if (!request) return print_error(request.error().describe()), 2;
  auto loaded = session::load_config(args.config);
  if (!loaded) return print_error(loaded.error().describe()), 2;
  const config::ApprovalConfig& approval = loaded->config->approval;
  const fs::path home = session::home_directory();
  auto audit = AuditLog::open(default_audit_path(home));
  if (!audit) return print_error(audit.error().describe()), 2;

  std::vector<std::string> reviewer_argv =
      args.reviewer.empty() ? approval.reviewer : std::vector<std::string>{args.reviewer};
  std::optional<ReviewerProcess> reviewer;
  if (!reviewer_argv.empty())
    // No command runs here, so no place is writable; relative and empty $PATH entries and
    // code in the environment are still dropped (session/host_programs.hpp).
    reviewer.emplace(std::move(reviewer_argv),
                     std::chrono::seconds(approval.reviewer_timeout_seconds),
                     session::host_program_environment(session::caller_environment(), {}).env);
  std::optional<TerminalPrompt> prompt;
  if (!args.no_prompt) prompt.emplace();

  BrokerOptions options;
  options.hard_deny = session::hard_deny_options(home, *loaded);
  options.grant_ttl = std::chrono::seconds(approval.grant_ttl_seconds);
  options.reviewer_retries = approval.reviewer_retries;
  options.reviewer_failure = approval.reviewer_failure == config::ReviewerFailureMode::Defer
                                 ? ReviewerFailureMode::Defer
                                 : ReviewerFailureMode::Deny;
  SteadyClock clock;
  Broker broker(std::move(options), clock, *audit, reviewer ? &*reviewer : nullptr,
                prompt ? &*prompt : nullptr);
  ApprovalContext context;
  context.session_id = "approvals-check-" + std::to_string(::getpid());
  context.scope_key = args.scope;
  if (request->surface == Surface::HostIpc) context.warning = kHostIpcWarning;
  const ApprovalResult result = broker.approve(*request, context);
  std::cout << result_json(result) << "\n";
  return result.action == Action::Allow ? 0 : 1;
}

}  // namespace

void add_approvals_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("approvals", "Approval broker: check requests, read audit");
  cmd->require_subcommand(1);

  auto args = std::make_shared<CheckArgs>();
  CLI::App* check = cmd->add_subcommand(
      "check", "Decide one boundary request (JSON file, - for stdin) as a crossing would");
  check->add_option("REQUEST", args->request_file, "BoundaryRequest JSON file")->required();
  CLI::Option* reviewer = check->add_option(
      "--reviewer", args->reviewer,
      "Reviewer program, by absolute path (run without a shell; overrides approval.reviewer)");
  check->add_flag("--no-prompt", args->no_prompt, "Never ask on the terminal");
  check->add_option("--scope", args->scope, "Circuit-breaker scope key");
  check->add_option("--config", args->config, "Trusted configuration file");
  check->callback([args, reviewer, &exit_code] {
    // Refused like a relative approval.reviewer (a usage error; docs/approvals.md, "The
    // reviewer program").
    if (reviewer->count() > 0)
      if (auto refused = reviewer_flag_error(args->reviewer)) {
        print_error(*refused);
        exit_code = 2;
        return;
      }
    exit_code = run_check(*args);
  });

  auto tail_options = std::make_shared<TailOptions>();
  CLI::App* tail = cmd->add_subcommand(
      "tail", "Show the last decisions of the audit log, one line each (docs/approvals.md)");
  tail->add_option("-n", tail_options->count, "How many decisions (default 20)")
      ->check(CLI::Range(0, 1000000000).description("a whole number of decisions, 0 or more"));
  tail->add_flag("-f,--follow", tail_options->follow,
                 "Keep showing decisions as they are written (waits for the file)");
  tail->add_flag("--json", tail_options->json, "One JSON object per decision");
  tail->add_option("--surface", tail_options->filter.surface, "Only decisions of this surface")
      ->check(CLI::IsMember(
          {"network", "host-ipc", "filesystem-read", "filesystem-write", "credential"}));
  tail->add_option("--decision", tail_options->filter.action, "Only allows or only denies")
      ->check(CLI::IsMember({"allow", "deny"}));
  tail->callback([tail_options, &exit_code] {
    exit_code = run_approvals_tail(default_audit_path(session::home_directory()), *tail_options);
  });
}

}  // namespace pisandbox::cli
