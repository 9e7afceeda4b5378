// `pi-sandbox config check [FILE] [--cwd DIR]`: validates the trusted configuration and prints
// it with the defaults filled in (docs/configuration.md): exit 0 valid, 2 invalid or, for a
// FILE, inside the workspace DIR (which `run` and `serve` would refuse).
#include <climits>
#include <cstdlib>
#include <iostream>

#include "cli/commands.hpp"
#include "config/config.hpp"
#include "session/policy_setup.hpp"

namespace pisandbox::cli {

void add_config_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("config", "Trusted configuration");
  cmd->require_subcommand(1);
  auto file = std::make_shared<std::string>();
  auto cwd = std::make_shared<std::string>(".");
  CLI::App* check = cmd->add_subcommand(
      "check", "Validate FILE (default: the trusted location) and print the effective value");
  check->add_option("FILE", *file, "Configuration file");
  check->add_option("--cwd", *cwd,
                    "The workspace a FILE must lie outside of (default: the current directory)");
  check->callback([file, cwd, &exit_code] {
    auto loaded = session::load_config(*file);
    if (loaded && loaded->source && !file->empty()) {
      // The same refusal as `run --config` and `serve --config` in this workspace.
      char workspace[PATH_MAX];
      if (::realpath(cwd->c_str(), workspace) == nullptr)
        loaded = std::unexpected(core::fail_errno("--cwd \"" + *cwd + "\": realpath").error());
      else if (auto outside = session::check_config_outside(*loaded->source, workspace); !outside)
        loaded = std::unexpected(outside.error());
    } else if (loaded && loaded->source) {
      if (auto single = session::check_config_single_link(*loaded->source); !single)
        loaded = std::unexpected(single.error());
    }
    if (!loaded) {
      print_error(loaded.error().describe());
      exit_code = 2;
      return;
    }
    std::cerr << "pi-sandbox: "
              << (loaded->source ? "configuration " + loaded->source->string() + " is valid"
                                 : std::string("no configuration file; the defaults apply"))
              << "\n";
    std::cout << config::to_json(*loaded->config) << "\n";
    exit_code = 0;
  });
}

}  // namespace pisandbox::cli
