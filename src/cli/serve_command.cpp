// `pi-sandbox serve` and its internal `pi-sandbox serve-worker`: the options, then serve/.
#include "cli/commands.hpp"
#include "cli/reviewer_flag.hpp"
#include "serve/server.hpp"
#include "serve/worker.hpp"
#if !defined(__APPLE__)
#include "sandbox/linux/cgroup.hpp"
#endif

namespace pisandbox::cli {

void add_serve_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<serve::ServeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "Run commands for a host over JSON lines on stdin/stdout (docs/protocol.md)");
  cmd->add_option("--config", args->config, "Trusted configuration file");
  CLI::Option* reviewer =
      cmd->add_option("--reviewer", args->reviewer,
                      "Automatic reviewer program, by absolute path (overrides approval.reviewer; "
                      "docs/approvals.md)");
  cmd->callback([args, reviewer, &exit_code] {
    // Refused like a relative approval.reviewer (docs/approvals.md, "The reviewer program"),
    // before serving anything.
    if (reviewer->count() > 0)
      if (auto refused = reviewer_flag_error(args->reviewer)) {
        print_error(*refused);
        exit_code = 2;
        return;
      }
#if !defined(__APPLE__)
    // Before the first worker is forked, so that every command's cgroup gets its controllers
    // (docs/security.md, "Resource limits"); the workers find the directory above the leaf.
    sandbox::linux_::prepare_cgroup_delegation();
#endif
    exit_code = serve::serve(*args);
  });
}

void add_serve_worker_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<serve::WorkerArgs>();
  CLI::App* cmd = app.add_subcommand("serve-worker", "");  // internal: no help line
  cmd->group("");
  cmd->add_option("--config", args->config);
  cmd->add_option("--reviewer", args->reviewer);
  cmd->add_flag("--subagent", args->subagent);
  cmd->add_flag("--ready", args->ready);
  cmd->add_option("--binary-at-start", args->binary_at_start);
  cmd->add_flag("--no-cgroup-said", args->no_cgroup_said);
  cmd->callback([args, &exit_code] { exit_code = serve::run_worker(*args); });
}

}  // namespace pisandbox::cli
