#include "shell/command_view.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <iterator>

namespace pisandbox::shell {
namespace {

// Shell words that come before the command word without being it.
// (`time` is a wrapper below: GNU time has options.)
constexpr auto kKeywords = std::to_array<std::string_view>(
    {"!", "{", "}", "if", "then", "else", "elif", "while", "until", "do", "done", "fi"});

// The builtins that assign their operands.
constexpr auto kAssigningBuiltins =
    std::to_array<std::string_view>({"export", "declare", "typeset", "local", "readonly"});

// A command that runs its operands as a command, and how to skip its own options.
struct Wrapper {
  std::string_view name;
  std::string_view short_with_value;
  int leading_operands;  // operands before the wrapped command (timeout's duration)
};

constexpr std::array<Wrapper, 14> kWrappers = {{
    {"sudo", "ugpCDrtUTh", 0},
    {"doas", "uC", 0},
    {"env", "uCS", 0},
    {"command", "", 0},
    {"builtin", "", 0},
    {"exec", "a", 0},
    {"nohup", "", 0},
    {"time", "fo", 0},
    {"nice", "n", 0},
    {"ionice", "cnp", 0},
    {"timeout", "sk", 1},
    {"stdbuf", "ioe", 0},
    {"xargs", "adEILnPs", 0},
    {"busybox", "", 0},
}};

// Long wrapper options that take their value as the next word.
constexpr auto kWrapperLongWithValue = std::to_array<std::string_view>(
    {"--user", "--group", "--chdir", "--unset", "--signal", "--kill-after", "--prompt", "--role",
     "--type", "--host", "--close-from", "--other-user", "--adjustment", "--arg-file",
     "--delimiter", "--max-args"});

std::string basename_of(std::string_view word) {
  const auto slash = word.find_last_of('/');
  return std::string(slash == std::string_view::npos ? word : word.substr(slash + 1));
}

const Wrapper* find_wrapper(std::string_view program) {
  const auto it = std::find_if(kWrappers.begin(), kWrappers.end(),
                               [program](const Wrapper& w) { return w.name == program; });
  return it == kWrappers.end() ? nullptr : &*it;
}

// Skips a wrapper's options (and its leading operands) starting at `i`; returns the index
// of the wrapped command word.
std::size_t skip_wrapper_options(const std::vector<std::string>& words, std::size_t i,
                                 const Wrapper& wrapper) {
  while (i < words.size() && words[i].size() > 1 && words[i][0] == '-') {
    const std::string& option = words[i++];
    if (option == "--") break;
    const bool long_with_value =
        std::find(kWrapperLongWithValue.begin(), kWrapperLongWithValue.end(), option) !=
        kWrapperLongWithValue.end();
    const bool short_with_value = option.size() == 2 && option[1] != '-' &&
                                  wrapper.short_with_value.find(option[1]) != std::string::npos;
    if (long_with_value || short_with_value) ++i;
  }
  return std::min(i + static_cast<std::size_t>(wrapper.leading_operands), words.size());
}

}  // namespace

bool is_assignment(std::string_view word) {
  const auto equals = word.find('=');
  if (equals == std::string_view::npos || equals == 0) return false;
  std::string_view name = word.substr(0, equals);
  if (name.ends_with('+')) name.remove_suffix(1);
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalnum(c) != 0 || c == '_'; });
}

bool is_one_of(std::string_view word, std::span<const std::string_view> list) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

std::string ascii_lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

CommandView view_command(const SimpleCommand& command) {
  CommandView view;
  view.redirects = command.redirects;
  const auto& words = command.words;
  std::size_t i = 0;
  while (i < words.size()) {
    if (is_assignment(words[i])) {
      view.assignments.push_back(words[i++]);
      continue;
    }
    const std::string program = basename_of(words[i]);
    if (std::find(kKeywords.begin(), kKeywords.end(), program) != kKeywords.end()) {
      ++i;
    } else if (const Wrapper* wrapper = find_wrapper(program)) {
      i = skip_wrapper_options(words, i + 1, *wrapper);
    } else {
      view.program = program;
      view.args.assign(words.begin() + static_cast<std::ptrdiff_t>(i) + 1, words.end());
      break;
    }
  }
  if (std::find(kAssigningBuiltins.begin(), kAssigningBuiltins.end(), view.program) !=
      kAssigningBuiltins.end()) {
    std::copy_if(view.args.begin(), view.args.end(), std::back_inserter(view.assignments),
                 is_assignment);
  }
  return view;
}

std::vector<Argument> parse_arguments(std::span<const std::string> args, const OptionSpec& spec) {
  std::vector<Argument> parsed;
  const auto takes_value = [&](std::string_view name) {
    return std::find(spec.long_with_value.begin(), spec.long_with_value.end(), name) !=
           spec.long_with_value.end();
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const auto next_value = [&]() -> std::optional<std::string> {
      return i + 1 < args.size() ? std::optional<std::string>(args[++i]) : std::nullopt;
    };
    if (arg == "--") {
      for (++i; i < args.size(); ++i) parsed.push_back({Argument::Kind::Operand, args[i], {}});
      break;
    }
    if (arg.starts_with("--")) {
      const auto equals = arg.find('=');
      if (equals != std::string::npos) {
        parsed.push_back(
            {Argument::Kind::LongOption, arg.substr(0, equals), arg.substr(equals + 1)});
      } else {
        parsed.push_back(
            {Argument::Kind::LongOption, arg, takes_value(arg) ? next_value() : std::nullopt});
      }
    } else if (arg.size() > 1 && arg[0] == '-') {
      for (std::size_t j = 1; j < arg.size(); ++j) {
        const std::string letter(1, arg[j]);
        if (spec.short_with_value.find(arg[j]) == std::string_view::npos) {
          parsed.push_back({Argument::Kind::ShortOption, letter, {}});
          continue;
        }
        const bool attached = j + 1 < arg.size();
        parsed.push_back({Argument::Kind::ShortOption, letter,
                          attached ? std::optional<std::string>(arg.substr(j + 1)) : next_value()});
        break;
      }
    } else {
      parsed.push_back({Argument::Kind::Operand, arg, {}});
    }
  }
  return parsed;
}

std::vector<std::string> operands_of(const CommandView& view) {
  std::vector<std::string> operands;
  for (Argument& arg : parse_arguments(view.args, OptionSpec{"", {}})) {
    if (arg.kind == Argument::Kind::Operand) operands.push_back(std::move(arg.text));
  }
  return operands;
}

}  // namespace pisandbox::shell
