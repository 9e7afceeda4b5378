#include "session/host_programs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "core/unique_fd.hpp"
#include "session/approval_setup.hpp"

namespace pisandbox::session {

namespace {

namespace fs = std::filesystem;

/// bash's keywords and builtins (bash(1), "SHELL GRAMMAR" and "SHELL BUILTIN COMMANDS"): a
/// first word among them is not looked up in PATH, so no file is named for it.
constexpr std::array<std::string_view, 71> kShellWords = {
    "!",         "[[",       "]]",       "{",       "}",        "case",    "coproc",   "do",
    "done",      "elif",     "else",     "esac",    "fi",       "for",     "function", "if",
    "in",        "select",   "then",     "time",    "until",    "while",   ".",        ":",
    "[",         "alias",    "bg",       "bind",    "break",    "builtin", "caller",   "cd",
    "command",   "compgen",  "complete", "compopt", "continue", "declare", "dirs",     "disown",
    "echo",      "enable",   "eval",     "exec",    "exit",     "export",  "false",    "fc",
    "fg",        "getopts",  "hash",     "help",    "history",  "jobs",    "kill",     "let",
    "local",     "logout",   "mapfile",  "popd",    "printf",   "pushd",   "pwd",      "read",
    "readarray", "readonly", "return",   "set",     "shift",    "shopt",   "source"};
constexpr std::array<std::string_view, 12> kMoreBuiltins = {
    "suspend", "test",   "times", "trap",    "true",  "type",
    "typeset", "ulimit", "umask", "unalias", "unset", "wait"};

/// The most interpreters the kernel follows for one execve(2) ("Interpreter scripts").
constexpr int kMaxInterpreterLevels = 4;

bool is_shell_word(std::string_view word) {
  return std::ranges::find(kShellWords, word) != kShellWords.end() ||
         std::ranges::find(kMoreBuiltins, word) != kMoreBuiltins.end();
}

/// The deepest area holding `where` (lexically normal, resolved).
fs::path area_of(const fs::path& where, const std::vector<policy::WritableArea>& areas) {
  fs::path best;
  for (const auto& area : areas)
    if (policy::is_within(where, area.path) &&
        std::distance(area.path.begin(), area.path.end()) > std::distance(best.begin(), best.end()))
      best = area.path;
  return best;
}

/// A `#!` line: the interpreter and the rest of the line (one argument to the kernel).
struct Shebang {
  std::string interpreter;
  std::string argument;
};

/// The `#!` line of `file`, if it has one (execve(2): at most 255 bytes are read of it).
std::optional<Shebang> read_shebang(const fs::path& file) {
  core::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return std::nullopt;
  char buffer[256];
  const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
  if (n < 2 || buffer[0] != '#' || buffer[1] != '!') return std::nullopt;
  std::string_view line(buffer + 2, static_cast<std::size_t>(n) - 2);
  line = line.substr(0, line.find('\n'));
  constexpr std::string_view kBlank = " \t";
  const auto start = line.find_first_not_of(kBlank);
  if (start == std::string_view::npos) return std::nullopt;
  line.remove_prefix(start);
  const auto end = line.find_first_of(kBlank);
  Shebang out{std::string(line.substr(0, end)), {}};
  if (end != std::string_view::npos) {
    std::string_view rest = line.substr(end);
    const auto first = rest.find_first_not_of(kBlank);
    if (first != std::string_view::npos) {
      rest.remove_prefix(first);
      out.argument = std::string(rest.substr(0, rest.find_last_not_of(kBlank) + 1));
    }
  }
  return out;
}

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while ((i = text.find_first_not_of(" \t", i)) != std::string_view::npos) {
    const auto end = text.find_first_of(" \t", i);
    out.emplace_back(text.substr(i, end - i));
    i = end;
  }
  return out;
}

/// The program `env` runs for a `#!/usr/bin/env ARGUMENT` line: the kernel passes ARGUMENT as
/// one word; `-S` (`--split-string`) splits it (env(1)); options and NAME=VALUE are skipped.
std::string env_program(const std::string& argument) {
  std::vector<std::string> list = {argument};
  if (argument.starts_with("-S") || argument.starts_with("--split-string")) {
    const auto skip = argument.starts_with("-S") ? 2 : std::string_view("--split-string").size();
    list = words(std::string_view(argument).substr(skip + (argument[skip] == '=' ? 1 : 0)));
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string& word = list[i];
    if (word == "-u" || word == "--unset" || word == "-C" || word == "--chdir") {
      ++i;
      continue;
    }
    if (word.starts_with("-") || word.find('=') != std::string::npos) continue;
    return word;
  }
  return {};
}

core::Error refusal(const std::string& program, const std::string& what, const fs::path& where,
                    const fs::path& area) {
  return core::Error{"refusing the reviewer " + program + ": " + what + " " + where.string() +
                         " lies in " + area.string() + ", where sandboxed commands can write",
                     "hint: keep the reviewer, its files and its interpreter outside the "
                     "workspace and every writable directory; a `#!/usr/bin/env NAME` line is "
                     "resolved with $PATH less its entries in those places"};
}

/// Refuses `file` when the host would find it in a writable area.
core::Result<void> check_file(const std::string& program, const std::string& what,
                              const fs::path& file,
                              const std::vector<policy::WritableArea>& areas) {
  const fs::path where = would_be_found_at(file.string());
  if (!policy::in_writable_area(where, areas)) return {};
  return std::unexpected(refusal(program, what, where, area_of(where, areas)));
}

/// What `file`'s `#!` line runs, as the kernel (and `env`) will find it: the interpreter, and
/// for `#!/usr/bin/env NAME` the program `env` runs after it; empty when `file` has no `#!`
/// line. Error: the program `env` would run is not found in `env`'s PATH.
core::Result<std::vector<fs::path>> interpreters_of(const std::string& program,
                                                    const fs::path& file,
                                                    const std::vector<std::string>& env) {
  const auto shebang = read_shebang(file);
  if (!shebang) return std::vector<fs::path>{};
  const fs::path interpreter = fs::path("/") / shebang->interpreter;  // relative: from `/`
  if (interpreter.filename() != "env") return std::vector<fs::path>{interpreter};
  const std::string name = env_program(shebang->argument);
  if (name.empty()) return std::vector<fs::path>{interpreter};
  if (name.find('/') != std::string::npos)
    return std::vector<fs::path>{interpreter, fs::path("/") / name};
  if (auto found = find_program(name, env))
    return std::vector<fs::path>{interpreter, fs::path(*found)};
  return core::fail("refusing the reviewer " + program + ": its interpreter " + name + " (`#!" +
                        shebang->interpreter + " " + shebang->argument +
                        "`) is not found in the cleaned $PATH",
                    "hint: $PATH entries that are relative, empty or in a writable place are not "
                    "searched for programs pi-sandbox starts on the host; name the interpreter by "
                    "its absolute path in the reviewer's `#!` line");
}

}  // namespace

std::vector<policy::WritableArea> writable_areas(const policy::SandboxPolicy& policy) {
  std::vector<policy::WritableArea> areas;
  for (const auto& exposure : policy.writable) areas.push_back({exposure.path, true});
  if (policy.home_read_only) {
    areas.push_back({policy.home, false});
    for (const auto& entry : policy.home_writable_entries) areas.push_back({entry, true});
  }
  return areas;
}

policy::HostEnvironment host_program_environment(const std::vector<std::string>& caller,
                                                 const std::vector<policy::WritableArea>& areas) {
  return policy::host_environment(
      caller, areas, [](const fs::path& path) { return would_be_found_at(path.string()); });
}

std::optional<std::string> find_program(std::string_view name,
                                        const std::vector<std::string>& env) {
  auto found = policy::search_path(name, env, [](const std::string& candidate) {
    struct stat st {};
    return ::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(candidate.c_str(), X_OK) == 0;
  });
  if (found.empty()) return std::nullopt;
  return found;
}

std::optional<std::string> host_run_program(std::string_view command,
                                            const std::vector<std::string>& env) {
  constexpr std::string_view kBlank = " \t\n";
  const auto start = command.find_first_not_of(kBlank);
  if (start == std::string_view::npos) return std::nullopt;
  command.remove_prefix(start);
  const std::string_view word = command.substr(0, command.find_first_of(" \t\n;&|<>()"));
  // Quoting, expansions and assignments make the first word something else than it reads.
  if (word.empty() || word.find_first_of("=$`\"'\\*?[~{") != std::string_view::npos ||
      is_shell_word(word))
    return std::nullopt;
  if (word.front() == '/') return std::string(word);
  if (word.find('/') != std::string_view::npos) return std::nullopt;
  return find_program(word, env);
}

core::Result<void> check_reviewer_program(const std::vector<std::string>& reviewer,
                                          const std::vector<policy::WritableArea>& areas,
                                          const std::vector<std::string>& env) {
  if (reviewer.empty() || reviewer[0].empty()) return {};
  const std::string& program = reviewer[0];
  for (const auto& argument : reviewer) {
    if (argument.empty()) continue;
    const std::string what = &argument == &reviewer[0] ? "its program" : "its argument";
    if (auto checked = check_file(program, what, fs::path("/") / argument, areas); !checked)
      return checked;
  }
  fs::path file = would_be_found_at(program);
  for (int level = 0; level < kMaxInterpreterLevels; ++level) {
    auto interpreters = interpreters_of(program, file, env);
    if (!interpreters) return std::unexpected(interpreters.error());
    if (interpreters->empty()) return {};
    for (const auto& interpreter : *interpreters)
      if (auto checked = check_file(program, "its interpreter", interpreter, areas); !checked)
        return checked;
    file = would_be_found_at(interpreters->back().string());
  }
  return {};
}

}  // namespace pisandbox::session
