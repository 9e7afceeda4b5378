// `pi-sandbox doctor`: what this kernel offers, what is missing, how to fix it (case C-12).
#include <iostream>

#include "cli/commands.hpp"
#include "sandbox/linux/kernel_probe.hpp"

namespace pisandbox::cli {

void add_doctor_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("doctor", "Check what this kernel offers the sandbox");
  cmd->callback([&exit_code] {
    bool usable = true;
    for (const auto& check : sandbox::linux_::probe_kernel()) {
      const char* status = check.ok ? "ok     " : (check.required ? "MISSING" : "weaker ");
      std::cout << status << "  " << check.name << ": " << check.detail << "\n";
      if (!check.ok) std::cout << "         fix: " << check.fix << "\n";
      if (!check.ok && check.required) usable = false;
    }
    std::cout << (usable ? "pi-sandbox can run commands here.\n"
                         : "pi-sandbox refuses to run commands here until the MISSING items "
                           "are fixed (it never runs a command unsandboxed).\n");
    exit_code = usable ? 0 : 1;
  });
}

}  // namespace pisandbox::cli
