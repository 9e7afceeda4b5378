// Requests and fakes shared by the approval unit tests.
#pragma once

#include <chrono>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "approval/boundary_request.hpp"
#include "approval/broker.hpp"

namespace pisandbox::approval::testing {

/// A network `connect` request as the proxy will ask it (compatibility C36).
inline BoundaryRequest network_request(std::string destination = "example.com:443") {
  BoundaryRequest r;
  r.id = "sandbox-runtime-network-1";
  r.source = "sandbox-runtime";
  r.surface = Surface::Network;
  r.operation = "connect";
  r.cwd = "/home/u/ws";
  r.command = "curl https://example.com";
  r.destination = std::move(destination);
  return r;
}

inline ReviewerVerdict verdict(ReviewOutcome outcome, std::string rationale) {
  return {outcome, RiskLevel::Medium, UserAuthorization::Unknown, std::move(rationale)};
}

/// A reviewer that gives `answer` and counts its calls. Thread-safe.
class FakeReviewer final : public Reviewer {
 public:
  std::expected<ReviewerVerdict, std::string> answer = verdict(ReviewOutcome::Allow, "ok");
  /// Given first, one per call, before `answer`.
  std::deque<std::expected<ReviewerVerdict, std::string>> answers;
  int calls = 0;
  std::vector<bool> user_retries;  ///< ReviewEvidence::user_retry of each call
  std::expected<ReviewerVerdict, std::string> review(const BoundaryRequest&,
                                                     const ReviewEvidence& evidence) override {
    std::lock_guard lock(mutex_);
    ++calls;
    user_retries.push_back(evidence.user_retry);
    if (answers.empty()) return answer;
    auto next = std::move(answers.front());
    answers.pop_front();
    return next;
  }

 private:
  std::mutex mutex_;
};

/// A human that gives `reply` and records what each question showed. Thread-safe.
class FakePrompt final : public HumanPrompt {
 public:
  HumanReply reply{HumanAnswer::AllowOnce, std::nullopt, {}};
  std::vector<std::string> reasons, warnings;
  std::vector<bool> offered;
  std::vector<std::optional<std::chrono::steady_clock::time_point>> deadlines;
  void answer(HumanAnswer answer) { reply = {answer, std::nullopt, {}}; }
  std::size_t asked() {
    std::lock_guard lock(mutex_);
    return reasons.size();
  }
  HumanReply ask(const HumanQuestion& question) override {
    std::lock_guard lock(mutex_);
    offered.push_back(question.offer_remembered);
    reasons.push_back(question.reason);
    warnings.push_back(question.warning);
    deadlines.push_back(question.deadline);
    return reply;
  }

 private:
  std::mutex mutex_;
};

/// Audit lines kept in memory. Thread-safe.
class MemoryAudit final : public AuditSink {
 public:
  std::vector<std::string> lines;
  bool fail = false;
  core::Result<void> append(std::string_view line) override {
    std::lock_guard lock(mutex_);
    if (fail) return core::fail("disk full");
    lines.emplace_back(line);
    return {};
  }
  /// The `event` of every line, in order.
  std::vector<std::string> events() {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& line : lines) out.push_back(nlohmann::json::parse(line).at("event"));
    return out;
  }

 private:
  std::mutex mutex_;
};

/// A Clock that stands still until moved.
class FixedClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point at{std::chrono::hours(1000)};
  std::chrono::steady_clock::time_point now() const override { return at; }
};

}  // namespace pisandbox::approval::testing
