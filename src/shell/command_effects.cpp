#include "shell/command_effects.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <optional>

#include "shell/program_options.hpp"

namespace pisandbox::shell {
namespace {

std::string basename_of(std::string_view path) {
  while (path.size() > 1 && path.ends_with('/')) path.remove_suffix(1);
  const auto slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

constexpr auto kCopyLongWithValue = std::to_array<std::string_view>(
    {"--target-directory", "--suffix", "--mode", "--owner", "--group", "--backup"});

bool looks_like_directory(std::string_view path) {
  const std::string name = basename_of(path);
  return path.ends_with('/') || name == ".ssh" || name == "sudoers.d";
}

// Destinations of cp/mv/install/ln: `-t DIR` + each source's name, else the last operand
// and, if it may be a directory, the last operand + each source's name.
std::vector<std::string> copy_destinations(const CommandView& view, DirectoryGuess guess) {
  const OptionSpec spec{view.program == "install" ? "gmotS" : "St", kCopyLongWithValue};
  std::optional<std::string> directory;
  std::vector<std::string> operands;
  for (Argument& arg : parse_arguments(view.args, spec)) {
    if (arg.kind == Argument::Kind::Operand) operands.push_back(std::move(arg.text));
    if ((arg.text == "t" || arg.text == "--target-directory") && arg.value) directory = arg.value;
  }
  std::vector<std::string> destinations;
  if (!directory) {
    if (operands.size() < 2) return {};
    destinations.push_back(operands.back());
    operands.pop_back();
    if (guess == DirectoryGuess::WhenItLooksSo && !looks_like_directory(destinations[0])) {
      return destinations;
    }
    directory = destinations[0];
  }
  for (const auto& source : operands)
    destinations.push_back(*directory + "/" + basename_of(source));
  return destinations;
}

// Files `sed -i` / `perl -i` edit in place: their operands (sed's first one is the script
// unless -e or -f gave it).
std::vector<std::string> in_place_edits(const CommandView& view) {
  const auto args =
      parse_arguments(view.args, OptionSpec{view.program == "sed" ? "efl" : "eE", {}});
  const bool in_place = std::any_of(args.begin(), args.end(), [](const Argument& a) {
    return a.text == "i" || a.text == "--in-place";
  });
  if (!in_place) return {};
  bool script_given = view.program != "sed";
  std::vector<std::string> files;
  for (const Argument& arg : args) {
    if (arg.text == "e" || arg.text == "f" || arg.text == "--expression") script_given = true;
  }
  for (const Argument& arg : args) {
    if (arg.kind != Argument::Kind::Operand) continue;
    if (!script_given) {
      script_given = true;
      continue;
    }
    files.push_back(arg.text);
  }
  return files;
}

// Values of the options through which curl, wget and rsync write files (curl -o).
std::vector<std::string> option_written_files(const CommandView& view) {
  const ProgramOptions* options = program_options(view.program);
  if (options == nullptr) return {};
  std::vector<std::string> files;
  for (Argument& arg : parse_arguments(view.args, options->spec)) {
    if (arg.value && is_one_of(arg.text, options->writes)) files.push_back(std::move(*arg.value));
  }
  return files;
}

constexpr auto kPermissionChangers =
    std::to_array<std::string_view>({"chmod", "chown", "chgrp", "chattr", "setfacl"});
constexpr auto kFileRemovers = std::to_array<std::string_view>({"rmdir", "unlink", "shred"});

}  // namespace

bool is_recursive_rm(const CommandView& view) {
  const auto args = parse_arguments(view.args, OptionSpec{"", {}});
  return std::any_of(args.begin(), args.end(), [](const Argument& a) {
    return a.text == "r" || a.text == "R" || a.text == "--recursive";
  });
}

std::vector<std::string> written_paths(const CommandView& view, DirectoryGuess guess) {
  std::vector<std::string> paths;
  for (const Redirect& r : view.redirects) {
    if (r.kind == RedirectKind::Output || r.kind == RedirectKind::Append) paths.push_back(r.target);
  }
  const auto add = [&paths](std::vector<std::string> more) {
    std::move(more.begin(), more.end(), std::back_inserter(paths));
  };
  const std::string& p = view.program;
  if (p == "tee" || p == "touch" || p == "truncate" || p == "mkdir") add(operands_of(view));
  if (p == "cp" || p == "mv" || p == "install" || p == "ln") add(copy_destinations(view, guess));
  if (p == "sed" || p == "perl") add(in_place_edits(view));
  add(option_written_files(view));
  if (p == "dd") {
    for (const auto& arg : view.args) {
      if (arg.starts_with("of=")) paths.push_back(arg.substr(3));
    }
  }
  return paths;
}

ChangedPaths removed_paths(const CommandView& view) {
  const std::string& p = view.program;
  if (is_one_of(p, kPermissionChangers) || (p == "rm" && is_recursive_rm(view))) {
    return {operands_of(view), Reach::PathBelowAndAbove};
  }
  if (is_one_of(p, kFileRemovers) || p == "rm") return {operands_of(view), Reach::PathAndBelow};
  if (p != "mv") return {{}, Reach::PathAndBelow};
  std::vector<std::string> sources = operands_of(view);
  const bool target_option = std::any_of(view.args.begin(), view.args.end(), [](const auto& a) {
    return a.starts_with("-t") || a.starts_with("--target-directory");
  });
  if (!target_option && !sources.empty()) sources.pop_back();
  return {std::move(sources), Reach::PathBelowAndAbove};
}

}  // namespace pisandbox::shell
