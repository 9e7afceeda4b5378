#include "session/session.hpp"

#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include "core/io.hpp"
#include "core/phase_trace.hpp"
#include "hostipc/host_ipc.hpp"
#include "policy/environment.hpp"
#include "policy/signing.hpp"
#include "policy/workspace_links.hpp"
#include "process/host_runner.hpp"
#include "proxy/protocol/parent_proxy.hpp"
#include "sandbox/macos/runner.hpp"
#include "shell/shell_command.hpp"
#if !defined(__APPLE__)
#include "sandbox/linux/runner.hpp"
#endif
#include "session/after_command.hpp"
#include "session/credential_setup.hpp"
#include "session/host_programs.hpp"
#include "session/host_socket_setup.hpp"
#include "session/network_setup.hpp"
#include "session/policy_setup.hpp"
#include "session/record_check.hpp"

extern char** environ;

namespace pisandbox::session {

namespace {

/// Writes output to pi-sandbox's own stdout and stderr, whole (a closed reader drops it).
class StdioSink final : public sandbox::OutputSink {
 public:
  void write(sandbox::Stream stream, std::string_view bytes) override {
    (void)core::write_all(stream == sandbox::Stream::Stdout ? STDOUT_FILENO : STDERR_FILENO, bytes);
  }
};

/// An argv as one line for approval requests: words joined by spaces, each quoted for a
/// POSIX shell when it holds anything but safe characters.
std::string join_argv(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& word : argv) {
    if (!line.empty()) line += ' ';
    const bool plain = !word.empty() && word.find_first_not_of(
                                            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789-_./=:,+@%") == std::string::npos;
    if (plain) {
      line += word;
      continue;
    }
    line += '\'';
    for (char c : word) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

/// The end of one of pi-sandbox's own lines on `fd`: "\r\n" on a terminal that does not turn
/// "\n" into "\r\n" itself (the caller's terminal in raw mode while a command's private pty is
/// relayed, e.g. a refusal right after an approval question), else "\n".
const char* line_end(int fd) {
  termios settings{};
  if (::isatty(fd) != 1 || ::tcgetattr(fd, &settings) != 0) return "\n";
  const bool translated = (settings.c_oflag & OPOST) != 0 && (settings.c_oflag & ONLCR) != 0;
  return translated ? "\n" : "\r\n";
}

/// Names a failed launch for the user: `sandbox setup failed: <step>: <errno>`.
sandbox::Outcome named(sandbox::Outcome outcome) {
  if (!outcome && outcome.error().kind == sandbox::RunFailureKind::LaunchFailed)
    outcome.error().message = "sandbox setup failed: " + outcome.error().message;
  return outcome;
}

}  // namespace

std::vector<std::string> caller_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

core::UniqueFd cancel_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, sig);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  return core::UniqueFd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
}

std::string timed_out_message(double seconds) {
  char text[64];
  std::snprintf(text, sizeof text, "%.15g", seconds);
  return "command timed out after " + std::string(text) + " seconds";
}

std::string tmpfs_full_message(std::uint64_t budget_bytes) {
  return "the sandbox's private tmpfs is full: the tmpfs budget of " +
         policy::mebibytes(budget_bytes) +
         " (limits.tmpfs), shared by /tmp, /var/tmp, /dev/shm and the hidden home's caches, was "
         "reached; raise limits.tmpfs in the configuration";
}

namespace {

/// Everything one command needs once its policy is built.
struct Prepared {
  policy::SandboxPolicy policy;
  config::LoadedConfig loaded;
  sandbox::Command command;
  sandbox::RunOptions options;
  std::shared_ptr<ApprovalSetup> approvals;  ///< shared with decisions still running
  std::string session;                       ///< grants are bound to it
  std::string scope;                         ///< the circuit breaker's scope
  std::function<void(const std::string&)> say;
  std::shared_ptr<HostSockets> host_sockets;  ///< the command's host Unix sockets
  /// hostIPC.allowedSockets expanded for this command (the macOS profile lists them).
  std::vector<policy::AllowedSocket> allowed_sockets;
  /// The environment of what this command starts on the host: the reviewer and the host-IPC
  /// run (host_program_environment()).
  std::vector<std::string> host_env;
  /// A sandbox made ahead (RunIo::ready), used up by the first sandboxed run.
  std::shared_ptr<sandbox::linux_::ReadyOffer> ready;
  /// The comparison of its record, still being made when the policy and the configuration
  /// above are taken from it (ahead_check()); the command waits for it at the gate.
  std::shared_ptr<RecordCheck> check;
};

/// pi-sandbox's own path (for the SSH ProxyCommand), as the policy protects it.
std::filesystem::path self_executable(const policy::SandboxPolicy& policy) {
  for (const auto& p : policy.protected_paths)
    if (p.reason == policy::ProtectReason::SandboxBinary) return p.path;
  return "pi-sandbox";
}

/// The run options of `p` from the caller's `args` and `io`: the timeout, stdio, what is said
/// when a limit is reached or the command connects directly, the no-cgroup note, teardown.
void set_run_options(Prepared& p, const RunArgs& args, const RunIo& io) {
  if (args.timeout_seconds > 0)
    p.options.timeout = std::chrono::milliseconds(std::llround(args.timeout_seconds * 1000));
  p.options.cancel_fd = io.cancel_fd;
  if (io.ready) p.ready = io.ready->offer;
  if (p.check) p.options.gate = [check = p.check] { return check->holds(); };
  p.options.stdin_fd = io.stdin_fd;
  p.options.output = io.output;
  p.options.stderr_route = io.stderr_route;
  p.options.limit_reached = [say = p.say, limit_reached = io.limit_reached,
                             memory = p.policy.limits.memory_bytes,
                             tmpfs = p.policy.limits.tmpfs_bytes](sandbox::Limit limit) {
    if (limit == sandbox::Limit::Memory)
      say("the command was killed: out of memory (limit " + policy::mebibytes(memory) + ")");
    if (limit == sandbox::Limit::Tmpfs) say(tmpfs_full_message(tmpfs));
    if (limit_reached) limit_reached(limit);
  };
  p.options.direct_connection = [say = p.say] { say(std::string(kDirectConnectionHint)); };
  p.options.say_no_cgroup = io.say_no_cgroup;
  p.options.say_home_workspace = io.say_home_workspace;
  p.options.teardown = io.teardown;
}

/// The command's boundaries in `p`: its session and scope, the network decider, the host
/// Unix sockets it may reach, the credential service, and the proxy that decides through them
/// (docs/ARCHITECTURE.md, "The life of one command"). `areas`: writable_areas() of p.policy.
void set_boundaries(Prepared& p, const RunArgs& args, const RunIo& io,
                    const std::vector<policy::WritableArea>& areas) {
  p.session = new_id("run-");
  p.scope = args.scope_key.empty() ? p.session : args.scope_key;
  NetworkCommand network{
      p.session, p.scope,
      args.approval_command.value_or(args.shell_command.empty() ? join_argv(args.argv)
                                                                : args.shell_command),
      p.policy.workspace.string(), args.agent_name};
  auto decider = std::make_shared<NetworkDecider>(
      p.loaded.config->network, p.approvals->broker(), p.approvals, network, p.say,
      [denied = io.denied](const std::string& target, const std::string& reason,
                           std::string_view source, std::string_view recovery) {
        if (denied) denied("network", target, reason, source, recovery);
      });
  // Host Unix sockets the broker finds the command connecting to (docs/host-ipc.md, "Host
  // sockets"): the allowed list expanded from the caller's environment now.
  p.allowed_sockets = policy::allowed_sockets(p.loaded.config->host_ipc.allowed_sockets,
                                              caller_environment(), home_directory().string());
  p.host_sockets = std::make_shared<HostSockets>(
      p.allowed_sockets, areas, p.approvals->broker(), p.approvals, network,
      args.subagent || hostipc::is_subagent(caller_environment()) ? HostSocketAsking::Subagent
                                                                  : HostSocketAsking::Allowed,
      p.say,
      [denied = io.denied](const std::string& path, const std::string& reason,
                           std::string_view source, std::string_view recovery) {
        if (denied) denied("host-ipc", path, reason, source, recovery);
      });
  // gpg-agent's full socket exports secret keys: a signing agent is reached through its
  // restricted one (docs/security.md, "Signed commits").
  if (const auto& signing = p.policy.signing; !signing.gpg_agent.empty())
    p.host_sockets->add_gpg_agent(signing.gpg_agent.string());
  p.options.host_socket = host_socket_decider(p.host_sockets);
  // The caller's parent proxy, if any (docs/network.md, "A parent proxy"): read here, from
  // pi-sandbox's own environment; the command's proxy variables point at its own proxy.
  // The user's HTTPS credentials for the command's git, kept on the host (docs/network.md,
  // "Credentials for HTTPS").
  auto credentials = std::make_shared<HostCredentials>(
      decider, p.approvals->broker(), p.approvals, network, p.host_env,
      find_program("git", p.host_env).value_or(""), areas,
      [denied = io.denied](const std::string& target, const std::string& reason,
                           std::string_view source) {
        if (denied) denied("credential", target, reason, source, {});
      });
  p.options.proxy = proxy_starter(std::move(decider), {},
                                  proxy::parent_proxies_from_environment(caller_environment()),
                                  host_service(std::move(credentials)));
}

/// Whether the sandbox made ahead, `ready`, may be the command's as it is (ReadyAhead): the
/// same policy arguments and environment and a pid 1 still waiting. Then the comparison of its
/// record of the host (RecordCheck) starts, and the offer is marked verified on the condition
/// that it holds: the command waits for it at the gate (sandbox::RunOptions::gate), and runs
/// again without the sandbox made ahead when it does not (execute()). Null otherwise; with
/// PI_SANDBOX_TRACE_PHASES=1, why is said on stderr (`pi-sandbox: ready-record <why>`).
std::shared_ptr<RecordCheck> ahead_check(ReadyAhead* ready, const RunArgs& args) {
#if defined(__APPLE__)
  (void)ready;
  (void)args;
  return nullptr;
#else
  if (ready == nullptr || !ready->offer || ready->offer->sandbox.pid() <= 0) return nullptr;
  std::string why;
  if (args.policy.cwd != ready->args.cwd || args.policy.config != ready->args.config ||
      args.policy.binary_at_start != ready->args.binary_at_start)
    why = "other policy arguments";
  else if (caller_environment() != ready->environment)
    why = "another environment";
  if (!why.empty()) {
    if (core::phases::trace().enabled)
      (void)core::write_all(STDERR_FILENO, "pi-sandbox: ready-record " + why + "\n");
    return nullptr;
  }
  if (!ready->check || !ready->made) return nullptr;
  ready->offer->verified = true;
  // When the record does not hold, the second way (docs/security.md, "A sandbox made ahead"):
  // the policy and the configuration computed again must be those the command was handed over
  // with (everything the session made from them is then what it would make now), and the plans
  // computed from them those the sandbox was made from.
  ready->check->set_second_way([policy_args = args.policy, ready] {
    config::LoadedConfig loaded;
    auto policy = build_policy(policy_args, &loaded);
    if (!policy || !(*policy == ready->policy) || loaded.source != ready->loaded.source ||
        !loaded.config || !ready->loaded.config || !(*loaded.config == *ready->loaded.config))
      return false;
    if (host_program_environment(caller_environment(), writable_areas(*policy)).env !=
        ready->host_env)
      return false;
    auto plan = sandbox::linux_::plan_ready(*policy);
    return plan && sandbox::linux_::plans_hold(*ready->made, plan->prepared.spec);
  });
  ready->check->begin();
  // pid 1's guard starts while the session is set up (the command has come).
  sandbox::linux_::start_guard_ahead(ready->offer->sandbox);
  return ready->check;
#endif
}

/// `io` without its sandbox made ahead: the command's full way (execute()).
RunIo without_ready(const RunIo& io) {
  RunIo fresh = io;
  fresh.ready = nullptr;
  return fresh;
}

/// Policy, command, options, broker and the proxy's decider for `args`.
core::Result<Prepared> prepare(const RunArgs& args, const RunIo& io) {
  if (args.shell_command.empty() == args.argv.empty())
    return core::fail("run needs either -c 'SHELL COMMAND' or -- PROGRAM [ARGS...]");
  Prepared p;
  if ((p.check = ahead_check(io.ready.get(), args))) {
    p.policy = io.ready->policy;
    p.loaded = io.ready->loaded;
    core::phases::mark(core::phases::Mark::ConfigRead);
  } else {
    auto policy = build_policy(args.policy, &p.loaded);
    if (!policy) return std::unexpected(policy.error());
    p.policy = std::move(*policy);
  }
  core::phases::mark(core::phases::Mark::PolicyBuilt);
  p.say = [message = io.message](const std::string& line) {
    if (message)
      message(line);
    else
      (void)core::write_all(STDERR_FILENO, "pi-sandbox: " + line + line_end(STDERR_FILENO));
  };
  if (p.check) p.say = p.check->held(std::move(p.say));
  for (const auto& warning : p.policy.warnings) p.say("warning: " + warning);
  // `filesystem.additionalAllowWrite` directories persist: one that does not exist yet is
  // made, so that what the command writes there stays (docs/configuration.md).
  for (const auto& exposure : p.policy.writable) {
    if (exposure.path == p.policy.workspace) continue;
    std::error_code error;
    if (exposure.origin != policy::Origin::ConfiguredWrite ||
        std::filesystem::exists(exposure.path, error))
      continue;
    // Made on the host only for a policy known to hold.
    if (p.check && !p.check->holds()) {
      p.check->join();  // the full way clones
      return prepare(args, without_ready(io));
    }
    std::filesystem::create_directories(exposure.path, error);
  }
  p.command.argv = args.argv.empty()
                       ? std::vector<std::string>{"/bin/bash", "-c", args.shell_command}
                       : args.argv;
  p.command.cwd = p.policy.workspace;
  // The caller's environment less credentials, then the private temp directory and the proxy's
  // knobs (docs/security.md "Environment"). An approved host run gets the caller's environment
  // less what points into a writable place instead (docs/host-ipc.md, Prepared::host_env).
  // A name the host deliberately gives the command (env_keep) is kept as a passThrough entry
  // would be; the trusted configuration's `environment.remove` still wins.
  policy::EnvironmentSpec environment = p.loaded.config->environment;
  environment.pass_through.insert(environment.pass_through.end(), args.env_keep.begin(),
                                  args.env_keep.end());
  // With a sandbox made ahead, the environment computed with it (ReadyAhead::command_env): the
  // same inputs, the request's environment and configuration being those it was made for.
  p.command.env = p.check && args.env_keep.empty()
                      ? io.ready->command_env
                      : policy::command_environment(caller_environment(), environment,
                                                    self_executable(p.policy))
                            .env;
  set_run_options(p, args, io);
  const auto reviewer = args.approval.reviewer.empty()
                            ? p.loaded.config->approval.reviewer
                            : std::vector<std::string>{args.approval.reviewer};
  if (auto outside = check_reviewer_outside(reviewer, p.policy.workspace); !outside)
    return std::unexpected(outside.error());
  // What runs on the host gets no variable that points into a place the command can write,
  // and a reviewer whose files or interpreter lie there is refused before anything is asked.
  const auto areas = writable_areas(p.policy);
  // With a sandbox made ahead, the one computed with it: its host reads are in the record, and
  // the second way computes it again (ahead_check()).
  p.host_env =
      p.check ? io.ready->host_env : host_program_environment(caller_environment(), areas).env;
  if (auto program = check_reviewer_program(reviewer, areas, p.host_env); !program) {
    // Refused with the host environment made ahead: said only when the host is as it was then
    // (a $PATH link fixed since would refuse it wrongly); otherwise the full way decides.
    if (p.check && !p.check->holds()) {
      p.check->join();  // the full way clones
      return prepare(args, without_ready(io));
    }
    return std::unexpected(program.error());
  }
  ApprovalPeers peers{io.human, io.ledger, std::nullopt, p.host_env};
  if (p.options.timeout)
    peers.command_deadline = std::chrono::steady_clock::now() + *p.options.timeout;
  p.approvals =
      std::make_shared<ApprovalSetup>(home_directory(), p.loaded, args.approval, std::move(peers));
  set_boundaries(p, args, io, areas);
  core::phases::mark(core::phases::Mark::SessionReady);
  return p;
}

/// The command under Seatbelt (sandbox/macos/runner.hpp), with the allowed sockets in its
/// profile. Compiled on every platform, so that it is type-checked where the tests run; called
/// only on Apple (run_in_sandbox()).
[[maybe_unused]] sandbox::Outcome run_under_seatbelt(const Prepared& p, sandbox::Command command,
                                                     const sandbox::RunOptions& options) {
  sandbox::macos::RunnerOverrides with;
  for (const auto& socket : p.allowed_sockets)
    if (socket.path) with.allowed_sockets.emplace_back(*socket.path);
  return sandbox::macos::run_sandboxed(p.policy, std::move(command), options, p.say, with);
}

/// The command in this platform's sandbox (docs/macos.md): Seatbelt on Apple, else the Linux
/// sandbox. A failed launch is named for the user (named()).
sandbox::Outcome run_in_sandbox(const Prepared& p, sandbox::Command command,
                                const sandbox::RunOptions& options) {
#if defined(__APPLE__)
  return named(run_under_seatbelt(p, std::move(command), options));
#else
  return named(
      sandbox::linux_::run_sandboxed(p.policy, std::move(command), options, p.say, p.ready.get()));
#endif
}

/// A shell command under `hostIPC.mode: ask` (docs/host-ipc.md). Without a sink, output goes
/// through pipes only when the sandboxed attempt's stderr must be read for a Unix-socket refusal;
/// otherwise the command keeps the caller's terminal.
sandbox::Outcome run_with_host_ipc(const RunArgs& args, const RunIo& io, const Prepared& p) {
  const config::HostIpcConfig& host_ipc = p.loaded.config->host_ipc;
  ::signal(SIGPIPE, SIG_IGN);
  StdioSink stdio;
  sandbox::OutputSink& output = io.output != nullptr ? *io.output : stdio;
  hostipc::Invocation invocation;
  invocation.command = args.shell_command;
  invocation.cwd = p.policy.workspace.string();
  invocation.timeout = p.options.timeout;
  invocation.subagent = args.subagent || hostipc::is_subagent(caller_environment());
  invocation.agent_name = args.agent_name;
  invocation.program = host_run_program(args.shell_command, p.host_env);
  const approval::SteadyClock clock;
  hostipc::Collaborators with{
      .sandboxed =
          [&](std::optional<std::chrono::milliseconds> timeout, sandbox::OutputSink& sink) {
            sandbox::RunOptions attempt = p.options;
            attempt.timeout = timeout;
            if (io.output != nullptr || host_ipc.retry_on_unix_socket_error) attempt.output = &sink;
            // The retry reads the attempt's own stderr for a Unix-socket refusal: it keeps
            // its pipe then (the order between the streams is lost for that attempt).
            if (host_ipc.retry_on_unix_socket_error)
              attempt.stderr_route = sandbox::StderrRoute::Own;
            return run_in_sandbox(p, p.command, attempt);
          },
      .host =
          [&](std::optional<std::chrono::milliseconds> timeout, sandbox::OutputSink& sink) {
            sandbox::RunOptions host = p.options;
            host.timeout = timeout;
            host.output = io.output != nullptr ? &sink : nullptr;
            sandbox::Command on_host{
                {"/bin/bash", "-c", args.shell_command}, p.policy.workspace, p.host_env};
            return process::run_on_host(on_host, host);
          },
      .approve =
          [&](const approval::BoundaryRequest& request, std::string_view warning) {
            approval::ApprovalContext context{p.session, p.scope, std::string(warning)};
            auto result = p.approvals->broker().approve(request, context);
            if (result.action != approval::Action::Allow && io.denied)
              io.denied("host-ipc", args.shell_command, result.reason,
                        approval::to_string(result.source), approval::to_string(result.recovery));
            return result;
          },
      .clock = clock,
      .new_id =
          [](std::string_view kind) {
            return new_id("sandbox-runtime-" + std::string(kind) + "-");
          },
      .host_socket_refused = [sockets = p.host_sockets] { return sockets->refused_any(); },
  };
  return hostipc::run(host_ipc, invocation, with, output);
}

}  // namespace

#if !defined(__APPLE__)
namespace {

/// The record of every host input of the policy and the plans for `args`
/// (sandbox::linux_::record_host_reads()); a racy one is taken again once its tick has passed,
/// twice at most, then kept as incomplete.
sandbox::linux_::HostRecord record_ahead(const RunArgs& args) {
  const auto compute = [&args] {
    auto policy = build_policy(args.policy, nullptr);
    if (!policy) return false;
    (void)host_program_environment(caller_environment(), writable_areas(*policy));
    return sandbox::linux_::plan_ready(*policy).has_value();
  };
  sandbox::linux_::HostRecord record;
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto made = sandbox::linux_::record_host_reads(compute);
    if (!made) {
      record = {};
      record.why = made.error().describe();
      return record;
    }
    record = std::move(*made);
    const std::int64_t wait = sandbox::linux_::racy_for_ns(record);
    if (!record.complete || wait == 0) return record;
    ::usleep(static_cast<useconds_t>(wait / 1000));
  }
  record.complete = false;
  record.why = "changed within a clock tick of each record";
  return record;
}

}  // namespace
#endif

std::shared_ptr<ReadyAhead> prepare_ready(const RunArgs& args) {
#if defined(__APPLE__)
  (void)args;
  return nullptr;
#else
  auto ahead = std::make_shared<ReadyAhead>();
  // The record first: what the policy and the plans below read is no older than it, so any
  // change since has moved a time it holds.
  sandbox::linux_::HostRecord record = record_ahead(args);
  auto policy = build_policy(args.policy, &ahead->loaded);
  if (!policy) return nullptr;
  auto plan = sandbox::linux_::plan_ready(*policy);
  if (!plan) return nullptr;
  ahead->made = std::make_shared<const sandbox::linux_::ReadyPlan>(*plan);
  auto offer = sandbox::linux_::launch_ready(std::move(*plan));
  if (!offer) return nullptr;
  // Made from a host other than the recorded one (a change while it was made): the record
  // does not describe it.
  if (std::string why; !sandbox::linux_::host_unchanged(record, &why)) {
    record.complete = false;
    record.why = why;
  }
  offer->record = std::move(record);
  ahead->offer = std::make_shared<sandbox::linux_::ReadyOffer>(std::move(*offer));
  // After the sandbox's clone: the process has one thread more from here on.
  ahead->check = RecordCheck::prepare(ahead->offer);
  ahead->environment = caller_environment();
  ahead->command_env =
      policy::command_environment(ahead->environment, ahead->loaded.config->environment,
                                  self_executable(*policy))
          .env;
  ahead->host_env = host_program_environment(ahead->environment, writable_areas(*policy)).env;
  ahead->policy = std::move(*policy);
  ahead->args = args.policy;
  return ahead;
#endif
}

sandbox::Outcome execute(const RunArgs& args, const RunIo& io) {
  auto prepared = prepare(args, io);
  if (!prepared)
    return std::unexpected(
        sandbox::RunFailure{sandbox::RunFailureKind::LaunchFailed, prepared.error().describe()});
  Prepared& p = *prepared;
  const std::filesystem::path cwd = p.command.cwd;
  const std::vector<std::string> words =
      args.shell_command.empty() ? p.command.argv : policy::path_pieces(args.shell_command);
  // The git operation after the command is read from its simple commands' own words.
  p.options.words =
      args.shell_command.empty() ? p.command.argv : shell::command_words(args.shell_command);
  const bool host_ipc =
      !args.shell_command.empty() && p.loaded.config->host_ipc.mode != config::HostIpcMode::Off;
  // Host IPC may run the command on the host: its policy is known to hold first.
  if (host_ipc && p.check && !p.check->holds()) {
    p.check->join();  // the full way clones
    return execute(args, without_ready(io));
  }
  sandbox::Outcome outcome = host_ipc ? run_with_host_ipc(args, io, p)
                                      : run_in_sandbox(p, std::move(p.command), p.options);
  // A stale sandbox made ahead (or a launch that failed before its gate, with the record not
  // holding): nothing of the command ran, it runs again the full way. Nothing asked either: the
  // questions are not ended, since the way it runs now asks through the same prompt.
  if (p.check && !p.check->holds()) {
    p.check->join();  // the full way clones
    return execute(args, without_ready(io));
  }
  explain_after_command({p.policy, *p.host_sockets, p.say}, outcome, words, cwd);
  // A decision may still wait for an answer nobody needs any more: its question ends, and the
  // terminal gets its settings back before pi-sandbox exits.
  p.approvals->end_questions();
  // What was set up for the command is freed after the caller has its result (RunIo::teardown).
  if (io.teardown) io.teardown(std::make_shared<Prepared>(std::move(p)));
  return outcome;
}

}  // namespace pisandbox::session
