#include "session/approval_setup.hpp"

#include <stdlib.h>
#include <sys/stat.h>

#include <array>
#include <climits>
#include <cstdio>
#include <stdexcept>

#include "core/random.hpp"
#include "policy/sandbox_policy.hpp"

namespace pisandbox::session {

namespace {
/// How long the end of a command waits for decisions still writing their audit lines.
constexpr std::chrono::milliseconds kAuditGrace{2000};
}  // namespace

namespace fs = std::filesystem;
using namespace pisandbox::approval;

HardDenyOptions hard_deny_options(const fs::path& home, const config::LoadedConfig& loaded) {
  HardDenyOptions options;
  options.home = home.string();
  const fs::path agent = home / ".pi" / "agent";
  for (auto name : {"settings.json", "permissions.json", "pi-sandbox.json", "sandbox.json", "logs",
                    "extensions"})
    options.protected_paths.push_back((agent / name).string());
  const auto locations = config::default_locations(home);
  options.protected_paths.push_back(locations.current.string());
  if (loaded.source) options.protected_paths.push_back(loaded.source->string());
  return options;
}

core::Result<void> LazyAuditLog::append(std::string_view line) {
  std::lock_guard lock(mutex_);
  if (!log_) {
    auto opened = AuditLog::open(path_);
    if (!opened) return std::unexpected(opened.error());
    log_.emplace(std::move(*opened));
  }
  return log_->append(line);
}

fs::path would_be_found_at(const std::string& argument) {
  // Relative arguments are found from the reviewer's working directory, `/` (ReviewerProcess).
  fs::path path = fs::path("/") / argument;
  for (int links = 0; links < 40; ++links) {
    fs::path done = "/";
    bool followed = false;
    for (auto part = path.begin(); part != path.end(); ++part) {
      if (part->empty() || *part == "/") continue;
      const fs::path next = done / *part;
      struct stat st {};
      if (::lstat(next.c_str(), &st) != 0) {
        // Missing from here on: whoever can create `next` decides what the rest will be.
        fs::path rest = next;
        for (auto more = std::next(part); more != path.end(); ++more) rest /= *more;
        return rest.lexically_normal();
      }
      if (S_ISLNK(st.st_mode)) {
        // Follow the link, dangling or not, and start again with what it names.
        std::error_code error;
        const fs::path target = fs::read_symlink(next, error);
        if (error) return next;
        fs::path rest = target.is_absolute() ? target : done / target;
        for (auto more = std::next(part); more != path.end(); ++more) rest /= *more;
        path = rest;
        followed = true;
        break;
      }
      char resolved[PATH_MAX];
      done = ::realpath(next.c_str(), resolved) != nullptr ? fs::path(resolved) : next;
    }
    if (!followed) return done;
  }
  return path;  // a loop of links: where it points last
}

core::Result<void> check_reviewer_outside(const std::vector<std::string>& reviewer,
                                          const fs::path& workspace) {
  for (const auto& argument : reviewer) {
    if (argument.empty()) continue;
    // Where the reviewer would find the argument as a file, now or once the missing parts
    // exist: a file the command could still create counts as much as one that is there.
    if (!policy::is_within(would_be_found_at(argument), workspace)) continue;
    return core::fail("refusing the reviewer " + argument +
                          ": it lies inside the workspace, where sandboxed commands can write",
                      "hint: keep the reviewer program and its files outside the workspace");
  }
  return {};
}

ApprovalSetup::ApprovalSetup(const fs::path& home, const config::LoadedConfig& loaded,
                             const ApprovalArgs& args, ApprovalPeers peers)
    : audit_(default_audit_path(home)) {
  const config::ApprovalConfig& approval = loaded.config->approval;
  std::vector<std::string> reviewer_argv =
      args.reviewer.empty() ? approval.reviewer : std::vector<std::string>{args.reviewer};
  if (!reviewer_argv.empty())
    reviewer_.emplace(std::move(reviewer_argv),
                      std::chrono::seconds(approval.reviewer_timeout_seconds),
                      std::move(peers.reviewer_env));
  if (!args.no_prompt)
    prompt_ = peers.human ? std::move(peers.human) : std::make_shared<TerminalPrompt>();
  BrokerOptions options;
  options.hard_deny = hard_deny_options(home, loaded);
  options.ledger = std::move(peers.ledger);
  options.grant_ttl = std::chrono::seconds(approval.grant_ttl_seconds);
  options.reviewer_retries = approval.reviewer_retries;
  options.reviewer_failure = approval.reviewer_failure == config::ReviewerFailureMode::Defer
                                 ? ReviewerFailureMode::Defer
                                 : ReviewerFailureMode::Deny;
  options.question_timeout = std::chrono::seconds(approval.question_timeout_seconds);
  options.command_deadline = peers.command_deadline;
  broker_ =
      std::make_unique<Broker>(std::move(options), clock_, audit_,
                               reviewer_ ? &*reviewer_ : nullptr, prompt_ ? &*prompt_ : nullptr);
}

void ApprovalSetup::end_questions() {
  if (prompt_) prompt_->end(kCommandEndedReason);
  // The decisions those questions ended write their audit lines now; a reviewer still running
  // is not waited for beyond this.
  (void)broker_->wait_idle(kAuditGrace);
}

std::string new_id(std::string_view prefix) {
  std::array<unsigned char, 16> bytes{};
  if (auto filled = core::random_bytes(bytes); !filled)
    throw std::runtime_error(filled.error().message);
  bytes[6] = static_cast<unsigned char>((bytes[6] & 0x0f) | 0x40);  // version 4 (RFC 9562)
  bytes[8] = static_cast<unsigned char>((bytes[8] & 0x3f) | 0x80);  // variant 10
  char text[37];
  std::snprintf(text, sizeof text,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", bytes[0],
                bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]);
  return std::string(prefix) + text;
}

}  // namespace pisandbox::session
