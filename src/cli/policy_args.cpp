#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"

namespace pisandbox::cli {

namespace fs = std::filesystem;

namespace {

fs::path home_directory() {
  if (const char* home = ::getenv("HOME"); home != nullptr && home[0] == '/') return home;
  if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr)
    return pw->pw_dir;
  return "/";
}

core::Result<fs::path> real_path(const std::string& path, const std::string& what) {
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr)
    return core::fail_errno(what + " \"" + path + "\": realpath");
  return fs::path(resolved);
}

}  // namespace

void print_error(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  bool first = true;
  std::string out;
  while (std::getline(lines, line)) {
    out += (first ? "pi-sandbox: " : "") + line + "\n";
    first = false;
  }
  std::fputs(out.c_str(), stderr);
}

core::Result<policy::SandboxPolicy> build_policy(const PolicyArgs& args) {
  auto workspace = real_path(args.cwd, "--cwd");
  if (!workspace) return std::unexpected(workspace.error());
  if (!fs::is_directory(*workspace)) return core::fail("--cwd \"" + args.cwd + "\" is not a directory");
  policy::PolicyInputs inputs;
  inputs.workspace = *workspace;
  inputs.home = home_directory();
  if (auto self = real_path("/proc/self/exe", "self"); self) inputs.self_exe = *self;
  return policy::default_policy(inputs);
}

}  // namespace pisandbox::cli
