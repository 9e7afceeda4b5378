// `pi-sandbox doctor` and `pi-sandbox quarantine` in a build for Apple platforms (built only
// there: src/cli/CMakeLists.txt). Both are about the Linux sandbox, which macOS builds leave out:
// doctor checks the kernel's namespaces, Landlock, seccomp and cgroups, and the quarantine holds
// what the Linux guard moved (docs/macos.md, "Building on macOS"). The commands stay registered,
// so that they say so instead of being unknown.
#include <string>

#include "cli/commands.hpp"

namespace pisandbox::cli {

namespace {

/// Registers `name`, which exits 2 with one line saying why it does nothing here.
void add_linux_only(CLI::App& app, const std::string& name, const std::string& description,
                    int& exit_code) {
  CLI::App* cmd = app.add_subcommand(name, description + " (Linux only)");
  cmd->allow_extras();
  cmd->callback([name, &exit_code] {
    print_error(name +
                " is about the Linux sandbox, which this macOS build does not contain "
                "(docs/macos.md); `pi-sandbox policy` shows the Seatbelt profile");
    exit_code = 2;
  });
}

}  // namespace

void add_doctor_command(CLI::App& app, int& exit_code) {
  add_linux_only(app, "doctor", "Check what this kernel offers the sandbox", exit_code);
}

void add_quarantine_command(CLI::App& app, int& exit_code) {
  add_linux_only(app, "quarantine", "What the guard moved out of workspaces", exit_code);
}

}  // namespace pisandbox::cli
