// `pi-sandbox quarantine list [--json]` shows what the guard moved out of workspaces
// (docs/security.md, "The guard"); `pi-sandbox quarantine restore ID` puts one entry back where
// it was (exit 0 restored, 1 refused: the id is unknown or something stands at the original
// path, 2 usage).
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "sandbox/linux/quarantine.hpp"
#include "session/policy_setup.hpp"

namespace pisandbox::cli {

namespace {

namespace lx = sandbox::linux_;

struct QuarantineArgs {
  bool json = false;
  std::string id;
};

int run_list(const QuarantineArgs& args) {
  const auto root = lx::default_quarantine_root(session::home_directory());
  const auto entries = lx::list_quarantine(root);
  if (args.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& e : entries)
      out.push_back({{"id", e.id},
                     {"time", e.time},
                     {"original", e.original.string()},
                     {"why", e.why},
                     {"stored", e.stored.string()}});
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  if (entries.empty()) {
    std::cout << "the quarantine is empty (" << root.string() << ")\n";
    return 0;
  }
  std::cout << "quarantine: " << root.string() << "\n";
  for (const auto& e : entries) {
    std::cout << e.id << "  " << (e.original.empty() ? "(no record)" : e.original.string())
              << "\n    " << e.why << "\n";
  }
  std::cout << "restore one with: pi-sandbox quarantine restore ID\n";
  return 0;
}

int run_restore(const QuarantineArgs& args) {
  const auto root = lx::default_quarantine_root(session::home_directory());
  auto restored = lx::restore_quarantined(root, args.id);
  if (!restored) return print_error(restored.error().describe()), 1;
  std::cout << "restored " << restored->original.string() << "\n";
  return 0;
}

}  // namespace

void add_quarantine_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<QuarantineArgs>();
  CLI::App* quarantine = app.add_subcommand(
      "quarantine", "What the guard moved out of workspaces: list it, restore an entry");
  quarantine->require_subcommand(1);
  CLI::App* list = quarantine->add_subcommand("list", "List the quarantined entries, oldest first");
  list->add_flag("--json", args->json, "Print a JSON array");
  list->callback([args, &exit_code] { exit_code = run_list(*args); });
  CLI::App* restore = quarantine->add_subcommand("restore", "Move an entry back to where it was");
  restore->add_option("id", args->id, "The entry's id (from `pi-sandbox quarantine list`)")
      ->required();
  restore->callback([args, &exit_code] { exit_code = run_restore(*args); });
}

}  // namespace pisandbox::cli
