// `pi-sandbox serve` and its internal `pi-sandbox serve-worker`: the options, then serve/.
#include "cli/commands.hpp"
#include "serve/server.hpp"
#include "serve/worker.hpp"

namespace pisandbox::cli {

void add_serve_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<serve::ServeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "Run commands for a host over JSON lines on stdin/stdout (docs/protocol.md)");
  cmd->add_option("--config", args->config, "Trusted configuration file");
  cmd->add_option("--reviewer", args->reviewer,
                  "Automatic reviewer program (overrides approval.reviewer)");
  cmd->callback([args, &exit_code] { exit_code = serve::serve(*args); });
}

void add_serve_worker_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<serve::WorkerArgs>();
  CLI::App* cmd = app.add_subcommand("serve-worker", "");  // internal: no help line
  cmd->group("");
  cmd->add_option("--config", args->config);
  cmd->add_option("--reviewer", args->reviewer);
  cmd->add_flag("--subagent", args->subagent);
  cmd->callback([args, &exit_code] { exit_code = serve::run_worker(*args); });
}

}  // namespace pisandbox::cli
