#include "policy/host_environment.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <optional>

#include "policy/environment.hpp"

namespace pisandbox::policy {

namespace {

namespace fs = std::filesystem;
using Rule = HostVariableRule;

// Why each row is there names the program that reads the variable and where it documents it.
constexpr std::array kTable = {
    HostVariable{"PATH", Rule::SearchList,
                 "every program named without a path is looked up in it (execvp(3)); an "
                 "activated `.venv/bin` or `./node_modules/.bin` would run the command's files"},
    HostVariable{"CDPATH", Rule::SearchList,
                 "`cd NAME` goes to the first `<entry>/NAME` (bash(1), \"cd\")"},
    HostVariable{"LD_*", Rule::PathsOutside,
                 "the dynamic loader's libraries to load (`LD_PRELOAD`, `LD_AUDIT`) and where to "
                 "find them (`LD_LIBRARY_PATH`), ld.so(8)"},
    HostVariable{"GCONV_PATH", Rule::PathsOutside,
                 "the C library loads character-set modules from it (iconv_open(3))"},
    HostVariable{"LOCPATH", Rule::PathsOutside, "the C library reads locales from it (locale(7))"},
    HostVariable{"BASH_ENV", Rule::PathsOutside,
                 "bash runs this file before any non-interactive script (bash(1), INVOCATION)"},
    HostVariable{"ENV", Rule::PathsOutside,
                 "sh and bash in POSIX mode run this file at start (sh(1p), bash(1))"},
    HostVariable{"BASH_FUNC_*", Rule::Never,
                 "an exported function (bash(1), `export -f`): a function named `tmux` runs "
                 "instead of the program, whatever PATH says"},
    HostVariable{"PROMPT_COMMAND", Rule::Never, "code bash runs before each prompt (bash(1))"},
    HostVariable{"SHELLOPTS", Rule::Never,
                 "bash options turned on at start (`xtrace` with `PS4` runs code), bash(1)"},
    HostVariable{"BASHOPTS", Rule::Never, "bash `shopt` options turned on at start, bash(1)"},
    HostVariable{"PS4", Rule::Never,
                 "expanded (command substitution included) before each traced command, bash(1)"},
    HostVariable{"GLOBIGNORE", Rule::Never,
                 "changes which files a pattern of the command matches, bash(1)"},
    HostVariable{"IFS", Rule::Never,
                 "how words are split; a shell that imports it misreads "
                 "the command (bash(1) resets it, others may not)"},
    HostVariable{"PYTHONPATH", Rule::PathsOutside,
                 "python imports modules from it first (python(1), ENVIRONMENT)"},
    HostVariable{"PYTHONSTARTUP", Rule::PathsOutside,
                 "python runs this file at an interactive start (python(1))"},
    HostVariable{"PYTHONHOME", Rule::PathsOutside,
                 "python's standard library, `site.py` included, comes from it (python(1))"},
    HostVariable{"PYTHONUSERBASE", Rule::PathsOutside,
                 "python imports the user site directory and its `.pth` files from it"},
    HostVariable{"NODE_OPTIONS", Rule::Never,
                 "node options that load modules by path (`--require`, `--import`), "
                 "node(1)"},
    HostVariable{"NODE_PATH", Rule::PathsOutside,
                 "node looks up modules in it (node(1), \"Loading from the global folders\")"},
    HostVariable{"PERL5OPT", Rule::Never, "perl options (`-M` loads a module), perlrun(1)"},
    HostVariable{"PERL5LIB", Rule::PathsOutside, "perl loads modules from it first, perlrun(1)"},
    HostVariable{"PERLLIB", Rule::PathsOutside, "perl loads modules from it, perlrun(1)"},
    HostVariable{"RUBYOPT", Rule::Never, "ruby options (`-r` loads a file), ruby(1)"},
    HostVariable{"RUBYLIB", Rule::PathsOutside, "ruby loads files from it first, ruby(1)"},
    HostVariable{"JAVA_TOOL_OPTIONS", Rule::Never,
                 "JVM options (`-javaagent:` loads a jar), the JVM TI documentation"},
    HostVariable{"JDK_JAVA_OPTIONS", Rule::Never, "options of the `java` launcher, java(1)"},
    HostVariable{"_JAVA_OPTIONS", Rule::Never, "JVM options read by every JVM"},
    HostVariable{"GIT_EXEC_PATH", Rule::PathsOutside,
                 "git runs its sub-commands (`git-remote-https`...) from it, git(1)"},
    HostVariable{"GIT_TEMPLATE_DIR", Rule::PathsOutside,
                 "git init and clone copy hooks from it, git-init(1)"},
    HostVariable{"GIT_CONFIG_GLOBAL", Rule::PathsOutside,
                 "git's global configuration file (its keys run programs), git-config(1)"},
    HostVariable{"GIT_CONFIG_SYSTEM", Rule::PathsOutside,
                 "git's system configuration file, git-config(1)"},
    HostVariable{"GIT_CONFIG_*", Rule::Never,
                 "configuration given in the environment (`GIT_CONFIG_KEY_<n>`, "
                 "`GIT_CONFIG_PARAMETERS`): values such as `core.fsmonitor` are programs, "
                 "relative ones found in the workspace, git-config(1)"},
    HostVariable{"XDG_CONFIG_HOME", Rule::PathsOutside,
                 "git, tmux and most tools read their configuration (which runs programs) "
                 "from it, the XDG Base Directory Specification"},
    HostVariable{"XDG_CONFIG_DIRS", Rule::PathsOutside,
                 "more configuration directories, the XDG Base Directory Specification"},
    HostVariable{"ZDOTDIR", Rule::PathsOutside, "zsh runs its start files from it, zsh(1)"},
    HostVariable{"TERMINFO", Rule::PathsOutside,
                 "terminal descriptions ncurses programs (tmux) parse, terminfo(5)"},
    HostVariable{"TERMINFO_DIRS", Rule::PathsOutside, "more terminal descriptions, terminfo(5)"},
    HostVariable{"GIT_SSH", Rule::Program, "the program git runs for ssh, git(1)"},
    HostVariable{"GIT_SSH_COMMAND", Rule::Program, "the command git runs for ssh, git(1)"},
    HostVariable{"GIT_ASKPASS", Rule::Program, "the program git asks passwords with, git(1)"},
    HostVariable{"SSH_ASKPASS", Rule::Program, "the program ssh asks passphrases with, ssh(1)"},
    HostVariable{"SUDO_ASKPASS", Rule::Program, "the program sudo asks passwords with, sudo(8)"},
    HostVariable{"GIT_EDITOR", Rule::Program, "git's editor, git-var(1)"},
    HostVariable{"GIT_SEQUENCE_EDITOR", Rule::Program, "git rebase's editor, git-rebase(1)"},
    HostVariable{"GIT_PAGER", Rule::Program, "git's pager, git-var(1)"},
    HostVariable{"GIT_EXTERNAL_DIFF", Rule::Program, "the program git diff runs, git(1)"},
    HostVariable{"GIT_PROXY_COMMAND", Rule::Program,
                 "the program git's native protocol connects through, git-config(1)"},
    HostVariable{"EDITOR", Rule::Program, "the editor many programs start, environ(7)"},
    HostVariable{"VISUAL", Rule::Program, "the editor many programs start, environ(7)"},
    HostVariable{"PAGER", Rule::Program, "the pager many programs start, environ(7)"},
};

/// `PATH` when the caller's has no entry left, or none at all: a shell without PATH searches
/// its own default, which ends in `.` for bash (bash(1), "Shell Variables": PATH), the
/// workspace for the host-IPC run. The value of confstr(_CS_PATH) on GNU systems.
constexpr std::string_view kFallbackPath = "/bin:/usr/bin";

/// The variables the dynamic loader and the C library read to load a file (worker processes).
constexpr std::array<std::string_view, 3> kLoaderPatterns = {"LD_*", "GCONV_PATH", "LOCPATH"};

std::string_view name_of(std::string_view entry) {
  return entry.substr(0, entry.find('='));
}

std::string_view value_of(std::string_view entry) {
  const auto equals = entry.find('=');
  return equals == std::string_view::npos ? std::string_view{} : entry.substr(equals + 1);
}

const HostVariable* row_for(std::string_view name) {
  for (const auto& row : kTable)
    if (matches_variable(row.pattern, name)) return &row;
  return nullptr;
}

/// The separators of a PathsOutside variable's list.
std::string_view separators_of(std::string_view name) {
  // ld.so(8): LD_PRELOAD's list is separated by spaces or colons.
  if (matches_variable("LD_PRELOAD", name)) return ": \t";
  return ":";
}

std::vector<std::string_view> split(std::string_view text, std::string_view separators) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    const auto end = text.find_first_of(separators, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

/// Whether `path` is `base` or lies beneath it, both lexically normal.
bool within(const fs::path& path, const fs::path& base) {
  auto p = path.begin();
  for (auto b = base.begin(); b != base.end(); ++b, ++p) {
    if (b->empty()) continue;  // a trailing separator of `base`
    if (p == path.end() || *p != *b) return false;
  }
  return true;
}

/// An entry that names a file outside every writable area: absolute, and without `$` or a
/// backquote (bash expands BASH_ENV and ENV before reading them, bash(1)).
bool outside(std::string_view entry, std::span<const WritableArea> areas,
             const HostResolver& resolve) {
  if (entry.empty() || entry.front() != '/') return false;
  if (entry.find_first_of("$`") != std::string_view::npos) return false;
  return !in_writable_area(fs::path(entry), areas, resolve);
}

/// The first entry of a PathsOutside value that fails outside(), if any.
std::optional<std::string> failing_entry(std::string_view name, std::string_view value,
                                         std::span<const WritableArea> areas,
                                         const HostResolver& resolve) {
  for (auto entry : split(value, separators_of(name)))
    if (!outside(entry, areas, resolve)) return std::string(entry);
  return std::nullopt;
}

/// The first word of a Program value when it fails the rule, if it does.
std::optional<std::string> failing_program(std::string_view value,
                                           std::span<const WritableArea> areas,
                                           const HostResolver& resolve) {
  constexpr std::string_view kSpace = " \t\n";
  const auto start = value.find_first_not_of(kSpace);
  if (start == std::string_view::npos) return std::nullopt;  // nothing to run
  const std::string_view word = value.substr(start, value.find_first_of(kSpace, start) - start);
  if (word.find_first_of("$`") != std::string_view::npos) return std::string(word);
  if (word.find('/') == std::string_view::npos) return std::nullopt;  // found through PATH
  if (outside(word, areas, resolve)) return std::nullopt;
  return std::string(word);
}

/// One search-list entry kept: absolute and outside every writable area.
bool keep_search_entry(std::string_view entry, std::span<const WritableArea> areas,
                       const HostResolver& resolve) {
  return !entry.empty() && entry.front() == '/' &&
         !in_writable_area(fs::path(entry), areas, resolve);
}

}  // namespace

std::span<const HostVariable> host_variables() {
  return kTable;
}

bool in_writable_area(const fs::path& path, std::span<const WritableArea> areas,
                      const HostResolver& resolve) {
  const fs::path normal = path.lexically_normal();
  const fs::path where = resolve ? resolve(normal).lexically_normal() : normal;
  const WritableArea* deepest = nullptr;
  std::size_t depth = 0;
  for (const auto& area : areas) {
    if (!within(where, area.path)) continue;
    const auto parts = static_cast<std::size_t>(std::distance(area.path.begin(), area.path.end()));
    // At the same depth a read-only area wins: it is a bind over the writable one (the home
    // bound read-only over a workspace that is the home itself).
    if (deepest == nullptr || parts > depth || (parts == depth && !area.writable)) {
      deepest = &area;
      depth = parts;
    }
  }
  return deepest != nullptr && deepest->writable;
}

std::vector<std::string> dropped_search_entries(std::string_view path_value,
                                                std::span<const WritableArea> areas,
                                                const HostResolver& resolve) {
  std::vector<std::string> dropped;
  for (auto entry : split(path_value, ":"))
    if (!keep_search_entry(entry, areas, resolve)) dropped.emplace_back(entry);
  return dropped;
}

HostEnvironment host_environment(std::span<const std::string> caller,
                                 std::span<const WritableArea> areas, const HostResolver& resolve) {
  HostEnvironment out;
  for (const auto& entry : caller) {
    const std::string_view name = name_of(entry);
    const std::string_view value = value_of(entry);
    const HostVariable* row = row_for(name);
    if (row == nullptr) {
      out.env.push_back(entry);
      continue;
    }
    switch (row->rule) {
      case Rule::SearchList: {
        std::string kept;
        std::vector<HostVariableDrop> drops;
        for (auto part : split(value, ":")) {
          if (keep_search_entry(part, areas, resolve))
            kept += (kept.empty() ? "" : ":") + std::string(part);
          else
            drops.push_back({std::string(name), std::string(part), false});
        }
        for (auto& drop : drops) drop.kept = !kept.empty();
        if (!kept.empty()) out.env.push_back(std::string(name) + "=" + kept);
        std::ranges::move(drops, std::back_inserter(out.dropped));
        break;
      }
      case Rule::PathsOutside:
        if (auto bad = failing_entry(name, value, areas, resolve))
          out.dropped.push_back({std::string(name), std::move(*bad), false});
        else
          out.env.push_back(entry);
        break;
      case Rule::Program:
        if (auto bad = failing_program(value, areas, resolve))
          out.dropped.push_back({std::string(name), std::move(*bad), false});
        else
          out.env.push_back(entry);
        break;
      case Rule::Never:
        out.dropped.push_back({std::string(name), {}, false});
        break;
    }
  }
  if (std::ranges::none_of(out.env, [](const auto& e) { return name_of(e) == "PATH"; })) {
    std::string fallback;
    for (auto part : split(kFallbackPath, ":"))
      if (keep_search_entry(part, areas, resolve))
        fallback += (fallback.empty() ? "" : ":") + std::string(part);
    if (!fallback.empty()) out.env.push_back("PATH=" + fallback);
  }
  return out;
}

std::vector<std::string> loader_free_environment(std::span<const std::string> env) {
  std::vector<std::string> out;
  for (const auto& entry : env) {
    const std::string_view name = name_of(entry);
    if (std::ranges::none_of(kLoaderPatterns, [&](auto p) { return matches_variable(p, name); }))
      out.push_back(entry);
  }
  return out;
}

std::string search_path(std::string_view name, std::span<const std::string> env,
                        const std::function<bool(const std::string&)>& is_executable) {
  if (name.empty() || name.find('/') != std::string_view::npos) return {};
  for (const auto& entry : env) {
    if (name_of(entry) != "PATH") continue;
    for (auto dir : split(value_of(entry), ":")) {
      if (dir.empty() || dir.front() != '/') continue;
      std::string candidate(dir);
      if (candidate.back() != '/') candidate += '/';
      candidate += name;
      if (is_executable(candidate)) return candidate;
    }
    return {};
  }
  return {};
}

}  // namespace pisandbox::policy
