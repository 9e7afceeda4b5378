#include "cli/usage_errors.hpp"

#include <algorithm>

namespace pisandbox::cli {

namespace {

/// Optimal string alignment distance between `a` and `b` (insertions, deletions,
/// substitutions and transpositions of neighbours, each one edit).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

/// `pi-sandbox`, `pi-sandbox approvals`, ...: how the user spells `app` on the command line.
std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* p = app.get_parent(); p != nullptr; p = p->get_parent())
    path = p->get_name() + " " + path;
  return path;
}

/// ` for 'approvals'`, or nothing for the top level.
std::string for_command(const CLI::App& app) {
  if (app.get_parent() == nullptr) return "";
  const std::string path = command_path(app);
  return " for '" + path.substr(path.find(' ') + 1) + "'";
}

/// ` (did you mean 'x'?)`, or ` (see '<command> --help')`.
std::string hint(const CLI::App& app, std::string_view word,
                 std::span<const std::string> candidates) {
  if (auto best = nearest(word, candidates)) return " (did you mean '" + *best + "'?)";
  return " (see '" + command_path(app) + " --help')";
}

std::vector<std::string> visible_subcommands(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (!sub->get_group().empty()) names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> option_spellings(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::string unknown_option(const CLI::App& app, std::string_view token) {
  const std::string name(token.substr(0, token.find('=')));
  return "unknown option '" + name + "'" + for_command(app) +
         hint(app, name, option_spellings(app));
}

/// The parsed command whose own arguments were left over (depth first), or null.
const CLI::App* with_extras(const CLI::App& app) {
  if (!app.remaining(false).empty()) return &app;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->count() > 0)
      if (const CLI::App* found = with_extras(*sub)) return found;
  return nullptr;
}

}  // namespace

std::optional<std::string> nearest(std::string_view word, std::span<const std::string> candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = 3;
  for (const auto& candidate : candidates) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance && distance < word.size()) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::optional<std::string> unknown_command(const CLI::App& app, std::span<const std::string> args) {
  const CLI::App* level = &app;
  for (const auto& token : args) {
    if (token == "--" || level->get_subcommands([](const CLI::App*) { return true; }).empty())
      return std::nullopt;
    if (token.starts_with('-')) {
      if (level->get_option_no_throw(token.substr(0, token.find('='))) != nullptr) continue;
      return unknown_option(*level, token);
    }
    const auto subs =
        level->get_subcommands([&token](const CLI::App* sub) { return sub->check_name(token); });
    if (subs.empty())
      return "unknown command '" + token + "'" + for_command(*level) +
             hint(*level, token, visible_subcommands(*level));
    level = subs.front();
  }
  return std::nullopt;
}

std::string describe_extras(const CLI::App& app) {
  const CLI::App* found = with_extras(app);
  if (found == nullptr) return "unexpected arguments (see 'pi-sandbox --help')";
  const std::string token = found->remaining(false).front();
  if (token.starts_with('-') && token.size() > 1) return unknown_option(*found, token);
  return "unexpected argument '" + token + "'" + for_command(*found) + " (see '" +
         command_path(*found) + " --help')";
}

}  // namespace pisandbox::cli
