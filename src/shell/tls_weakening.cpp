#include "shell/tls_weakening.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <span>
#include <string_view>
#include <vector>

#include "shell/program_options.hpp"

namespace pisandbox::shell {
namespace {

bool is_false_word(std::string_view value) {
  const std::string v = ascii_lowercase(value);
  return v == "false" || v == "0" || v == "no" || v == "off";
}

std::optional<std::string> curl_insecure(const CommandView& view) {
  for (const Argument& arg : parse_arguments(view.args, program_options("curl")->spec)) {
    if (arg.kind == Argument::Kind::ShortOption && arg.text == "k") return "curl -k";
    if (arg.kind == Argument::Kind::LongOption &&
        (arg.text == "--insecure" || arg.text == "--proxy-insecure" ||
         arg.text == "--doh-insecure")) {
      return "curl " + arg.text;
    }
  }
  return std::nullopt;
}

// True for a wgetrc command (`-e check_certificate=off`) that turns verification off;
// wgetrc ignores case, `_`, `-` and spaces in the name.
bool is_wgetrc_no_check(std::string_view command) {
  std::string squeezed;
  for (const char c : ascii_lowercase(command)) {
    if (c != '_' && c != '-' && c != ' ' && c != '\t') squeezed.push_back(c);
  }
  const std::string_view prefix = "checkcertificate=";
  return squeezed.starts_with(prefix) &&
         is_false_word(std::string_view(squeezed).substr(prefix.size()));
}

std::optional<std::string> wget_insecure(const CommandView& view) {
  for (const Argument& arg : parse_arguments(view.args, program_options("wget")->spec)) {
    if (arg.text == "--no-check-certificate") return "wget --no-check-certificate";
    const bool execute = arg.text == "e" || arg.text == "--execute";
    if (execute && arg.value && is_wgetrc_no_check(*arg.value)) return "wget -e " + *arg.value;
  }
  return std::nullopt;
}

// `http.sslVerify` or `http.<url>.sslVerify`, in any case.
bool is_ssl_verify_key(std::string_view key) {
  const std::string k = ascii_lowercase(key);
  return k == "http.sslverify" || (k.starts_with("http.") && k.ends_with(".sslverify"));
}

// `http.sslVerify=false` as given to `git -c`; an empty value is false for git too.
bool git_assignment_disables(std::string_view assignment) {
  const auto equals = assignment.find('=');
  if (equals == std::string_view::npos) return false;  // `-c key` alone means true
  const std::string_view value = assignment.substr(equals + 1);
  return is_ssl_verify_key(assignment.substr(0, equals)) && (value.empty() || is_false_word(value));
}

constexpr auto kGitConfigReads = std::to_array<std::string_view>(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool",
     "--unset", "--unset-all", "--list", "-l", "--remove-section", "--rename-section", "--edit"});
constexpr auto kGitConfigSubcommandReads = std::to_array<std::string_view>(
    {"get", "unset", "list", "edit", "rename-section", "remove-section", "get-color"});
constexpr auto kGitConfigWithValue =
    std::to_array<std::string_view>({"-f", "--file", "--blob", "--type", "--default", "--comment"});

// `git config [options] [set] http.sslVerify false`.
bool git_config_disables(std::span<const std::string> args) {
  std::vector<std::string_view> operands;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (is_one_of(args[i], kGitConfigReads)) return false;
    if (is_one_of(args[i], kGitConfigWithValue)) {
      ++i;
    } else if (!args[i].starts_with('-')) {
      operands.push_back(args[i]);
    }
  }
  if (!operands.empty() && is_one_of(operands.front(), kGitConfigSubcommandReads)) return false;
  if (!operands.empty() && operands.front() == "set") operands.erase(operands.begin());
  return operands.size() >= 2 && is_ssl_verify_key(operands[0]) &&
         (operands[1].empty() || is_false_word(operands[1]));
}

constexpr auto kGitGlobalWithValue = std::to_array<std::string_view>(
    {"-C", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"});

// `-c key=value` / `--config key=value` / `--config=key=value` anywhere in git's arguments
// (global options, and `clone`/`submodule` options).
bool git_config_option_disables(std::span<const std::string> args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool option = args[i] == "-c" || args[i] == "--config";
    if (option && i + 1 < args.size() && git_assignment_disables(args[i + 1])) return true;
    if (args[i].starts_with("--config=") && git_assignment_disables(args[i].substr(9))) {
      return true;
    }
  }
  return false;
}

std::optional<std::string> git_insecure(const CommandView& view) {
  const auto& args = view.args;
  if (git_config_option_disables(args)) return "git -c http.sslVerify=false";
  std::size_t i = 0;
  while (i < args.size() && args[i].starts_with('-')) {
    const bool with_value = is_one_of(args[i], kGitGlobalWithValue) || args[i] == "-c";
    i += with_value ? 2 : 1;
  }
  if (i < args.size() && args[i] == "config" &&
      git_config_disables(std::span(args).subspan(i + 1))) {
    return "git config http.sslVerify false";
  }
  return std::nullopt;
}

bool is_strict_ssl_key(std::string_view key) {
  const std::string k = ascii_lowercase(key);
  return k == "strict-ssl" || k == "strict_ssl" || k == "enablestrictssl";
}

// `npm config set strict-ssl false`, `npm set strict-ssl=false`, `yarn config set
// enableStrictSsl false`: the key/value operands after `set`.
bool npm_config_set_disables(std::span<const std::string> args) {
  std::vector<std::string_view> operands;
  for (const auto& arg : args) {
    if (!arg.starts_with('-')) operands.push_back(arg);
  }
  auto set = std::find(operands.begin(), operands.end(), "set");
  const bool is_set = set != operands.end() &&
                      (set == operands.begin() || *(set - 1) == "config" || *(set - 1) == "c");
  if (!is_set) return false;
  for (auto it = set + 1; it != operands.end(); ++it) {
    const auto equals = it->find('=');
    if (equals != std::string_view::npos) {
      if (is_strict_ssl_key(it->substr(0, equals)) && is_false_word(it->substr(equals + 1))) {
        return true;
      }
    } else if (is_strict_ssl_key(*it) && it + 1 != operands.end() && is_false_word(*(it + 1))) {
      return true;
    }
  }
  return false;
}

// `--no-strict-ssl`, `--strict-ssl=false`, `--strict-ssl false` on any npm command.
bool npm_flag_disables(std::span<const std::string> args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string arg = ascii_lowercase(args[i]);
    if (arg == "--no-strict-ssl") return true;
    if (arg.starts_with("--strict-ssl=") && is_false_word(std::string_view(arg).substr(13))) {
      return true;
    }
    if (arg == "--strict-ssl" && i + 1 < args.size() && is_false_word(args[i + 1])) return true;
  }
  return false;
}

std::optional<std::string> npm_insecure(const CommandView& view) {
  if (view.program != "npm" && view.program != "yarn" && view.program != "pnpm") {
    return std::nullopt;
  }
  if (npm_flag_disables(view.args) || npm_config_set_disables(view.args)) {
    return view.program + " strict-ssl false";
  }
  return std::nullopt;
}

// Environment variables that turn verification off, set before the command or exported.
std::optional<std::string> insecure_assignment(const CommandView& view) {
  for (const auto& assignment : view.assignments) {
    const auto equals = assignment.find('=');
    std::string_view name = std::string_view(assignment).substr(0, equals);
    if (name.ends_with('+')) name.remove_suffix(1);
    const std::string_view value = std::string_view(assignment).substr(equals + 1);
    // git disables verification when GIT_SSL_NO_VERIFY is set at all (http.c).
    const bool insecure =
        name == "GIT_SSL_NO_VERIFY" ||
        (ascii_lowercase(name) == "npm_config_strict_ssl" && is_false_word(value)) ||
        (name == "PYTHONHTTPSVERIFY" && value == "0");
    if (insecure) return assignment;
  }
  return std::nullopt;
}

// NODE_TLS_REJECT_UNAUTHORIZED set to 0 anywhere in a word: `NODE_TLS_REJECT_UNAUTHORIZED=0`,
// `process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'`, `{NODE_TLS_REJECT_UNAUTHORIZED: "0"}`.
bool sets_node_tls_zero(std::string_view word) {
  static constexpr std::string_view kName = "NODE_TLS_REJECT_UNAUTHORIZED";
  for (auto at = word.find(kName); at != std::string_view::npos; at = word.find(kName, at + 1)) {
    std::size_t i = at + kName.size();
    const auto skip = [&](std::string_view chars) {
      while (i < word.size() && chars.find(word[i]) != std::string_view::npos) ++i;
    };
    skip(" \t'\"]");
    if (i >= word.size() || (word[i] != '=' && word[i] != ':')) continue;
    ++i;
    skip(" \t'\"");
    const bool zero =
        i < word.size() && word[i] == '0' &&
        (i + 1 == word.size() || !std::isdigit(static_cast<unsigned char>(word[i + 1])));
    if (zero) return true;
  }
  return false;
}

std::optional<std::string> node_tls_zero(const CommandView& view) {
  for (const auto* words : {&view.assignments, &view.args}) {
    for (const auto& word : *words) {
      if (sets_node_tls_zero(word)) return "NODE_TLS_REJECT_UNAUTHORIZED=0";
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> find_tls_weakening(const CommandView& view) {
  std::optional<std::string> what = insecure_assignment(view);
  if (!what) what = node_tls_zero(view);
  if (!what && view.program == "curl") what = curl_insecure(view);
  if (!what && view.program == "wget") what = wget_insecure(view);
  if (!what && view.program == "git") what = git_insecure(view);
  if (!what) what = npm_insecure(view);
  return what;
}

}  // namespace pisandbox::shell
