// pisandbox::session — the approval broker as the commands wire it: the audit file, the
// reviewer program and the terminal prompt (docs/compatibility.md, "Approvals").
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "approval/audit_log.hpp"
#include "approval/broker.hpp"
#include "approval/ledger.hpp"
#include "approval/reviewer_process.hpp"
#include "approval/terminal_prompt.hpp"
#include "config/loader.hpp"

namespace pisandbox::session {

/// The paths no request may write (compatibility C76): pi-sandbox's trusted configuration
/// (the default locations and `loaded.source`) and the agent's security files, logs and
/// extensions under `<home>/.pi/agent`.
[[nodiscard]] approval::HardDenyOptions hard_deny_options(const std::filesystem::path& home,
                                                          const config::LoadedConfig& loaded);

/// The audit file, opened at the first line written: a command that crosses no boundary
/// never needs it. If it cannot be opened, append() fails and the broker denies.
class LazyAuditLog final : public approval::AuditSink {
 public:
  explicit LazyAuditLog(std::filesystem::path path) : path_(std::move(path)) {}
  [[nodiscard]] core::Result<void> append(std::string_view line) override;

 private:
  std::filesystem::path path_;
  std::mutex mutex_;
  std::optional<approval::AuditLog> log_;
};

/// What a broker for one pi-sandbox process is built from.
///   reviewer: `--reviewer PROGRAM` (empty: the configuration's `approval.reviewer`).
///   no_prompt: `--no-prompt`: never ask on the terminal.
struct ApprovalArgs {
  std::string reviewer;
  bool no_prompt = false;
};

/// Where the reviewer program would find `argument` as a file: relative to `/` (its working
/// directory, ReviewerProcess) when relative, every symbolic link followed (a dangling one
/// too), and the parts that do not exist yet appended as they are written. Absolute and
/// lexically normal.
[[nodiscard]] std::filesystem::path would_be_found_at(const std::string& argument);

/// One broker with its collaborators, for the life of a command.
/// Refuses a reviewer program, or any argument of it that would be found as a file inside the
/// workspace (would_be_found_at(): whether that file exists yet or not, e.g. the script an
/// interpreter runs, or a symlink to a file the command could create): a sandboxed command
/// could write it, and the reviewer runs on the host, unsandboxed. The same rule as for
/// `--config`.
///   reviewer: `--reviewer PROGRAM` when given, else `approval.reviewer`.
/// Error: `refusing the reviewer <path>: it lies inside the workspace, where sandboxed
/// commands can write`, with a hint.
core::Result<void> check_reviewer_outside(const std::vector<std::string>& reviewer,
                                          const std::filesystem::path& workspace);

/// Who answers and what the broker shares with the rest of the session.
///   human: who answers approvals (serve: the host); null: the terminal, unless
///     ApprovalArgs::no_prompt.
///   ledger: the session's breaker states and session answers (serve: the serve process's);
///     null: one of this command's own (`run`: the session is the run).
///   command_deadline: when the command's timeout ends (steady clock); no question outlasts it.
///   reviewer_env: the reviewer's whole environment, `NAME=value` (host_program_environment(),
///     session/host_programs.hpp).
struct ApprovalPeers {
  std::shared_ptr<approval::HumanPrompt> human;
  std::shared_ptr<approval::ScopeLedger> ledger;
  std::optional<std::chrono::steady_clock::time_point> command_deadline;
  std::vector<std::string> reviewer_env = {};
};

class ApprovalSetup {
 public:
  /// `home`: the user's home (for the audit path and the hard-deny rules). Questions get the
  /// configuration's `approval.questionTimeoutSeconds`.
  ApprovalSetup(const std::filesystem::path& home, const config::LoadedConfig& loaded,
                const ApprovalArgs& args, ApprovalPeers peers = {});
  ApprovalSetup(const ApprovalSetup&) = delete;
  ApprovalSetup& operator=(const ApprovalSetup&) = delete;

  [[nodiscard]] approval::Broker& broker() { return *broker_; }

  /// The command has ended: questions still open end now (HumanPrompt::end() with
  /// approval::kCommandEndedReason), and so does any asked later. Returns when the terminal
  /// (or the host's dialog) is free and the decisions they ended have written their audit
  /// lines (waiting at most 2 s for decisions still running, e.g. a slow reviewer).
  void end_questions();

 private:
  approval::SteadyClock clock_;
  LazyAuditLog audit_;
  std::optional<approval::ReviewerProcess> reviewer_;
  std::shared_ptr<approval::HumanPrompt> prompt_;
  std::unique_ptr<approval::Broker> broker_;
};

/// A fresh request or session id: `<prefix><uuid v4>` (122 random bits from
/// core::random_bytes(), getentropy(3)). Throws std::runtime_error when the kernel gives none.
[[nodiscard]] std::string new_id(std::string_view prefix);

}  // namespace pisandbox::session
