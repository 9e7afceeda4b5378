#include "approval/hard_deny.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <deque>
#include <functional>
#include <iterator>

#include "shell/command_effects.hpp"
#include "shell/command_view.hpp"
#include "shell/path_words.hpp"
#include "shell/program_options.hpp"
#include "shell/shell_command.hpp"
#include "shell/tls_weakening.hpp"

namespace pisandbox::approval {
namespace {

// What the rules read from the command line (src/shell).
using shell::absolute_parts;
using shell::Argument;
using shell::ascii_lowercase;
using shell::ChangedPaths;
using shell::CommandView;
using shell::DirectoryGuess;
using shell::find_credential_mention;
using shell::find_tls_weakening;
using shell::is_one_of;
using shell::is_persistence_target;
using shell::is_prefix;
using shell::is_recursive_rm;
using shell::is_whole_directory_glob;
using shell::operands_of;
using shell::parse_arguments;
using shell::parse_path_word;
using shell::parse_shell;
using shell::PathAnchor;
using shell::PathWord;
using shell::Pipeline;
using shell::program_options;
using shell::ProgramOptions;
using shell::Reach;
using shell::Redirect;
using shell::RedirectKind;
using shell::removed_paths;
using shell::ShellScript;
using shell::SimpleCommand;
using shell::view_command;
using shell::written_paths;

using Parts = std::vector<std::string>;
using PipelineView = std::vector<CommandView>;

constexpr std::size_t kMaxNesting = 8;
constexpr std::size_t kMaxScripts = 512;
constexpr std::size_t kMaxQuotedBytes = 120;

// The host's paths, resolved once per request.
struct HostPaths {
  const HardDenyOptions& options;
  std::vector<std::pair<std::string, Parts>> protected_paths;  // as given, and absolute
};

// What a rule needs besides the command: the host's paths and the working directory the
// command runs in (empty when unknown).
struct RuleContext {
  const HostPaths& host;
  std::string_view cwd;

  [[nodiscard]] std::string_view home() const { return host.options.home; }
};

// One pipeline, with the working directory it runs in.
struct LocatedPipeline {
  PipelineView commands;
  std::string cwd;
};

// A match: the rule and what matched, in words that end the reason.
struct Finding {
  HardDenyRule rule;
  std::string what;
};

// Quotes a piece of the command in a reason: control characters become spaces (the
// reason is one line) and the text is cut to kMaxQuotedBytes on a UTF-8 boundary.
std::string cited(std::string_view text) {
  const bool cut = text.size() > kMaxQuotedBytes;
  if (cut) {
    std::size_t end = kMaxQuotedBytes;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    text = text.substr(0, end);
  }
  std::string out = "`";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(byte < 0x20 || byte == 0x7f ? ' ' : c);
  }
  return out + (cut ? "…`" : "`");
}

// ---------------------------------------------------------------------------------------
// transport-security-weakening

std::optional<Finding> transport_weakening(const PipelineView& pipeline, const RuleContext&) {
  for (const CommandView& view : pipeline) {
    if (auto what = find_tls_weakening(view)) {
      return Finding{HardDenyRule::TransportSecurityWeakening,
                     cited(*what) + " turns off TLS certificate verification"};
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------
// destructive-root-or-home-delete

void drop_whole_directory_glob(Parts& parts) {
  if (!parts.empty() && is_whole_directory_glob(parts.back())) parts.pop_back();
}

// True when deleting `word` recursively deletes the root, the home directory or one of
// its ancestors, or every entry of one of those.
bool deletes_root_or_home(std::string_view word, const RuleContext& context) {
  PathWord path = parse_path_word(word);
  drop_whole_directory_glob(path.parts);
  // `/`, `~`, `$HOME`, `~/..`: no need to know the host.
  if (path.parts.empty() && path.anchor != PathAnchor::Relative) return true;
  auto target = absolute_parts(word, context.home(), context.cwd);
  if (!target) return false;
  drop_whole_directory_glob(*target);
  const auto home = absolute_parts(context.home(), "", "");
  return target->empty() || (home && is_prefix(*target, *home));
}

std::optional<Finding> destructive_delete(const PipelineView& pipeline,
                                          const RuleContext& context) {
  for (const CommandView& view : pipeline) {
    if (view.program != "rm" || !is_recursive_rm(view)) continue;
    for (const std::string& target : operands_of(view)) {
      if (deletes_root_or_home(target, context)) {
        return Finding{HardDenyRule::DestructiveRootOrHomeDelete,
                       cited("rm -r " + target) + " deletes the root or home directory"};
      }
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------
// credential-exfiltration

constexpr auto kNetworkTools =
    std::to_array<std::string_view>({"curl", "wget", "nc", "ncat", "netcat", "socat", "telnet",
                                     "scp", "sftp", "rsync", "ftp", "http", "https", "xh"});

bool writes_to_network_device(const CommandView& view) {
  return std::any_of(view.redirects.begin(), view.redirects.end(), [](const Redirect& r) {
    const bool output = r.kind == RedirectKind::Output || r.kind == RedirectKind::Append;
    return output && (r.target.starts_with("/dev/tcp/") || r.target.starts_with("/dev/udp/"));
  });
}

bool is_network_sink(const CommandView& view) {
  return is_one_of(view.program, kNetworkTools) || writes_to_network_device(view);
}

// The words a command reads from: its arguments, except the values of options that name
// a file it writes (curl -o) or something it does not send (rsync --exclude), and what it
// reads through redirections.
std::vector<std::string> read_words(const CommandView& view) {
  std::vector<std::string> words;
  if (const ProgramOptions* options = program_options(view.program)) {
    for (Argument& arg : parse_arguments(view.args, options->spec)) {
      if (arg.kind == Argument::Kind::Operand) words.push_back(std::move(arg.text));
      const bool skipped =
          is_one_of(arg.text, options->writes) || is_one_of(arg.text, options->not_sent);
      if (arg.value && !skipped) words.push_back(std::move(*arg.value));
    }
  } else {
    words = view.args;
  }
  for (const Redirect& redirect : view.redirects) {
    const bool reads = redirect.kind == RedirectKind::Input ||
                       redirect.kind == RedirectKind::HereDoc ||
                       redirect.kind == RedirectKind::HereString;
    if (reads) words.push_back(redirect.target);
  }
  return words;
}

std::optional<Finding> credential_exfiltration(const PipelineView& pipeline, const RuleContext&) {
  const auto last_sink = std::find_if(pipeline.rbegin(), pipeline.rend(), is_network_sink);
  if (last_sink == pipeline.rend()) return std::nullopt;
  const std::string sink = last_sink->program.empty() ? "/dev/tcp" : last_sink->program;
  for (auto it = pipeline.begin(); it != last_sink.base(); ++it) {
    for (const std::string& word : read_words(*it)) {
      if (auto file = find_credential_mention(word)) {
        return Finding{
            HardDenyRule::CredentialExfiltration,
            "the credential file " + cited(*file) + " is sent over the network by " + cited(sink)};
      }
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------
// access-persistence

std::optional<Finding> access_persistence(const PipelineView& pipeline,
                                          const RuleContext& context) {
  for (const CommandView& view : pipeline) {
    for (const std::string& path : written_paths(view, DirectoryGuess::WhenItLooksSo)) {
      const auto absolute = absolute_parts(path, context.home(), context.cwd);
      if (is_persistence_target(parse_path_word(path).parts) ||
          (absolute && is_persistence_target(*absolute))) {
        return Finding{HardDenyRule::AccessPersistence,
                       cited(view.program.empty() ? path : view.program + " … " + path) +
                           " writes an authorized_keys or sudoers file"};
      }
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------
// security-control-tampering

// The protected path `parts` touches, if any: `parts` inside (or equal to) a protected
// path, or, for Reach::PathBelowAndAbove, an ancestor of one.
std::optional<std::string> touched_protected_path(Parts parts, Reach reach,
                                                  const RuleContext& context) {
  if (!parts.empty() && is_whole_directory_glob(parts.back())) {
    drop_whole_directory_glob(parts);  // `dir/*` reaches everything below dir
    reach = Reach::PathBelowAndAbove;
  }
  for (const auto& [name, guarded] : context.host.protected_paths) {
    if (is_prefix(guarded, parts) ||
        (reach == Reach::PathBelowAndAbove && is_prefix(parts, guarded))) {
      return name;
    }
  }
  return std::nullopt;
}

std::optional<Finding> tampering_finding(std::string_view path, std::string_view guarded) {
  return Finding{HardDenyRule::SecurityControlTampering,
                 cited(path) + " changes the protected path " + cited(guarded)};
}

std::optional<Finding> command_tampering(const PipelineView& pipeline, const RuleContext& context) {
  for (const CommandView& view : pipeline) {
    for (const auto& [paths, reach] :
         {ChangedPaths{written_paths(view, DirectoryGuess::Always), Reach::PathAndBelow},
          removed_paths(view)}) {
      for (const std::string& path : paths) {
        auto absolute = absolute_parts(path, context.home(), context.cwd);
        if (!absolute) continue;
        if (auto guarded = touched_protected_path(std::move(*absolute), reach, context)) {
          return tampering_finding(path, *guarded);
        }
      }
    }
  }
  return std::nullopt;
}

constexpr auto kWritingOperations = std::to_array<std::string_view>(
    {"write", "create", "delete", "rename", "chmod", "chown", "chgrp", "unlink", "remove", "rmdir",
     "mkdir", "move", "truncate", "link", "setattr"});

bool is_writing_request(const BoundaryRequest& request) {
  if (request.surface == Surface::FilesystemWrite) return true;
  const std::string operation = ascii_lowercase(request.operation);
  return std::any_of(kWritingOperations.begin(), kWritingOperations.end(),
                     [&](std::string_view word) { return operation.contains(word); });
}

// Compatibility C76: the request itself writes a protected path.
std::optional<Finding> request_tampering(const BoundaryRequest& request,
                                         const RuleContext& context) {
  if (!is_writing_request(request)) return std::nullopt;
  for (const auto* path : {&request.path, &request.resolved_path}) {
    if (!*path) continue;
    auto absolute = absolute_parts(**path, context.home(), context.cwd);
    if (!absolute) continue;
    if (auto guarded =
            touched_protected_path(std::move(*absolute), Reach::PathBelowAndAbove, context)) {
      return tampering_finding(**path, *guarded);
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------
// Walking the command and the commands nested in it.

constexpr auto kShells =
    std::to_array<std::string_view>({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish"});

// The command string of `sh -c STRING` (also `-lc`, `-ec`, …).
std::optional<std::string> shell_dash_c(const CommandView& view) {
  bool dash_c = false;
  for (std::size_t i = 0; i < view.args.size(); ++i) {
    const std::string& arg = view.args[i];
    if (arg == "-o" || arg == "+o" || arg == "--rcfile" || arg == "--init-file") {
      ++i;
    } else if (arg.size() > 1 && (arg[0] == '-' || arg[0] == '+') && arg[1] != '-') {
      dash_c = dash_c || arg.find('c') != std::string::npos;
    } else if (!arg.starts_with("--")) {
      return dash_c ? std::optional<std::string>(arg) : std::nullopt;
    }
  }
  return std::nullopt;
}

// The command string of `su [user] -c STRING` / `--command STRING` / `--command=STRING`.
std::optional<std::string> su_dash_c(const CommandView& view) {
  for (std::size_t i = 0; i < view.args.size(); ++i) {
    const std::string& arg = view.args[i];
    if ((arg == "-c" || arg == "--command") && i + 1 < view.args.size()) return view.args[i + 1];
    if (arg.starts_with("--command=")) return arg.substr(10);
  }
  return std::nullopt;
}

// A command the view runs from a string: `sh -c`, `su -c`, `eval`.
std::optional<std::string> nested_command(const CommandView& view) {
  if (is_one_of(view.program, kShells)) return shell_dash_c(view);
  if (view.program == "su") return su_dash_c(view);
  if (view.program != "eval") return std::nullopt;
  std::string joined;
  for (const auto& arg : view.args) joined += (joined.empty() ? "" : " ") + arg;
  return joined;
}

// The directory `cd DIR` / `pushd DIR` moves to from `cwd`: `cd` alone goes home; `cd -`
// and anything unresolvable make the directory unknown (empty).
std::string directory_after_cd(const CommandView& view, std::string_view cwd,
                               std::string_view home) {
  const std::vector<std::string> operands = operands_of(view);
  const std::string_view target = operands.empty() ? std::string_view("~") : operands.front();
  const auto parts = absolute_parts(target, home, cwd);
  if (!parts || target == "-") return {};
  std::string directory;
  for (const auto& part : *parts) directory += "/" + part;
  return directory.empty() ? "/" : directory;
}

// A command text still to be read, how deep it is nested, and where it runs.
struct PendingText {
  std::string text;
  std::size_t depth;
  std::string cwd;
};

// Reads one command text: its pipelines, each with the directory it runs in (following
// `cd`), and the nested command texts it contains.
void read_text(PendingText pending, std::string_view home, std::vector<LocatedPipeline>& out,
               std::deque<PendingText>& queue) {
  ShellScript script = parse_shell(pending.text);
  const bool descend = pending.depth < kMaxNesting;
  for (auto& inner : script.substitutions) {
    if (descend) queue.push_back({std::move(inner), pending.depth + 1, pending.cwd});
  }
  std::string cwd = std::move(pending.cwd);
  for (const Pipeline& pipeline : script.pipelines) {
    LocatedPipeline located{{}, cwd};
    for (const SimpleCommand& simple : pipeline.commands) {
      CommandView view = view_command(simple);
      if (view.program == "cd" || view.program == "pushd")
        cwd = directory_after_cd(view, cwd, home);
      auto inner = nested_command(view);
      if (inner && descend) queue.push_back({std::move(*inner), pending.depth + 1, cwd});
      located.commands.push_back(std::move(view));
    }
    out.push_back(std::move(located));
  }
}

// Every pipeline of the command and of the commands nested in it, outermost first.
std::vector<LocatedPipeline> all_pipelines(std::string_view command, std::string_view cwd,
                                           std::string_view home) {
  std::vector<LocatedPipeline> pipelines;
  std::deque<PendingText> queue{{std::string(command), 0, std::string(cwd)}};
  for (std::size_t texts = 0; !queue.empty() && texts < kMaxScripts; ++texts) {
    PendingText pending = std::move(queue.front());
    queue.pop_front();
    read_text(std::move(pending), home, pipelines, queue);
  }
  return pipelines;
}

using PipelineRule = std::optional<Finding> (*)(const PipelineView&, const RuleContext&);

// The command rules, in HardDenyRule order.
constexpr std::array<PipelineRule, 5> kPipelineRules = {destructive_delete, transport_weakening,
                                                        credential_exfiltration, access_persistence,
                                                        command_tampering};

std::optional<Finding> command_finding(const BoundaryRequest& request, const HostPaths& host) {
  const auto pipelines = all_pipelines(*request.command, request.cwd, host.options.home);
  for (const PipelineRule rule : kPipelineRules) {
    for (const LocatedPipeline& pipeline : pipelines) {
      if (auto finding = rule(pipeline.commands, RuleContext{host, pipeline.cwd})) return finding;
    }
  }
  return std::nullopt;
}

HostPaths resolve_host_paths(const HardDenyOptions& options) {
  HostPaths host{options, {}};
  for (const auto& path : options.protected_paths) {
    // A relative protected path (or `~` with no home) names nothing: it guards nothing.
    if (auto parts = absolute_parts(path, options.home, "")) {
      host.protected_paths.emplace_back(path, std::move(*parts));
    }
  }
  return host;
}

}  // namespace

std::string_view to_string(HardDenyRule rule) {
  switch (rule) {
    case HardDenyRule::SecurityControlTampering:
      return "security-control-tampering";
    case HardDenyRule::DestructiveRootOrHomeDelete:
      return "destructive-root-or-home-delete";
    case HardDenyRule::TransportSecurityWeakening:
      return "transport-security-weakening";
    case HardDenyRule::CredentialExfiltration:
      return "credential-exfiltration";
    case HardDenyRule::AccessPersistence:
      return "access-persistence";
  }
  return "hard-deny";
}

std::optional<HardDeny> find_hard_deny(const BoundaryRequest& request,
                                       const HardDenyOptions& options) {
  const HostPaths host = resolve_host_paths(options);
  std::optional<Finding> finding = request_tampering(request, RuleContext{host, request.cwd});
  if (!finding && request.command) finding = command_finding(request, host);
  if (!finding) return std::nullopt;
  return HardDeny{finding->rule, "Hard deny (" + std::string(to_string(finding->rule)) +
                                     "): " + finding->what + "."};
}

}  // namespace pisandbox::approval
