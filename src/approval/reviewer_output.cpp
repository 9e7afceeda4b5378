#include "approval/reviewer_output.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

#include "approval/json_text.hpp"

namespace pisandbox::approval {
namespace {

using nlohmann::json;

constexpr std::array kKnownKeys = {std::string_view("outcome"), std::string_view("risk_level"),
                                   std::string_view("rationale"),
                                   std::string_view("user_authorization")};

std::unexpected<core::Error> refuse(std::string why) {
  return core::fail("reviewer output " + why);
}

core::Result<std::string> read_string(const json& object, std::string_view key) {
  const auto it = object.find(key);
  if (it == object.end()) return refuse("is missing key \"" + std::string(key) + "\"");
  if (!it->is_string()) return refuse(std::string(key) + " must be a string");
  return it->get<std::string>();
}

// Reads an enum field whose names are listed in `names` (in enumerator order).
template <typename Enum, std::size_t N>
core::Result<Enum> read_enum(const json& object, std::string_view key,
                             const std::array<std::string_view, N>& names) {
  auto text = read_string(object, key);
  if (!text) return std::unexpected(text.error());
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == *text) return static_cast<Enum>(i);
  }
  std::string list;
  for (const auto name : names) list += (list.empty() ? "" : ", ") + std::string(name);
  return refuse(std::string(key) + " must be one of " + list);
}

constexpr std::array<std::string_view, 3> kOutcomeNames = {"allow", "deny", "defer"};
constexpr std::array<std::string_view, 4> kRiskNames = {"low", "medium", "high", "critical"};
constexpr std::array<std::string_view, 4> kAuthorizationNames = {"unknown", "low", "medium",
                                                                 "high"};

// The length JavaScript's String.prototype.length gives: UTF-16 code units. The text is
// valid UTF-8 (it came out of the JSON parser): a 4-byte sequence is a surrogate pair.
std::size_t utf16_length(std::string_view text) {
  std::size_t units = 0;
  for (const unsigned char c : text) {
    if ((c & 0xC0) == 0x80) continue;  // continuation byte
    units += c >= 0xF0 ? 2 : 1;
  }
  return units;
}

core::Result<std::string> read_rationale(const json& object) {
  auto text = read_string(object, "rationale");
  if (!text) return text;
  const bool blank =
      std::all_of(text->begin(), text->end(), [](unsigned char c) { return std::isspace(c) != 0; });
  if (blank) return refuse("rationale must be a non-empty string");
  if (utf16_length(*text) > kMaxRationaleChars) {
    return refuse("rationale is longer than " + std::to_string(kMaxRationaleChars) + " characters");
  }
  return text;
}

core::Result<void> check_keys(const json& object) {
  for (const auto& item : object.items()) {
    const auto known = std::find(kKnownKeys.begin(), kKnownKeys.end(), item.key());
    if (known == kKnownKeys.end()) return refuse("has unknown key \"" + item.key() + "\"");
  }
  return {};
}

// Compatibility C78: verdicts that contradict themselves are invalid output.
std::optional<std::string> inconsistency(const ReviewerVerdict& v) {
  const bool authorised = v.user_authorization == UserAuthorization::Medium ||
                          v.user_authorization == UserAuthorization::High;
  if (v.outcome == ReviewOutcome::Allow && v.risk_level == RiskLevel::Critical) {
    return "allow with critical risk";
  }
  if (v.outcome == ReviewOutcome::Allow && v.risk_level == RiskLevel::High && !authorised) {
    return "allow with high risk needs medium or high user_authorization";
  }
  if (v.outcome == ReviewOutcome::Defer &&
      (v.risk_level == RiskLevel::Low || v.risk_level == RiskLevel::Critical)) {
    return "defer with " + std::string(to_string(v.risk_level)) + " risk";
  }
  return std::nullopt;
}

core::Result<ReviewerVerdict> read_verdict(const json& object) {
  if (auto ok = check_keys(object); !ok) return std::unexpected(ok.error());
  ReviewerVerdict verdict;
  auto outcome = read_enum<ReviewOutcome>(object, "outcome", kOutcomeNames);
  if (!outcome) return std::unexpected(outcome.error());
  verdict.outcome = *outcome;
  auto risk = read_enum<RiskLevel>(object, "risk_level", kRiskNames);
  if (!risk) return std::unexpected(risk.error());
  verdict.risk_level = *risk;
  if (object.contains("user_authorization")) {
    auto authorization =
        read_enum<UserAuthorization>(object, "user_authorization", kAuthorizationNames);
    if (!authorization) return std::unexpected(authorization.error());
    verdict.user_authorization = *authorization;
  }
  auto rationale = read_rationale(object);
  if (!rationale) return std::unexpected(rationale.error());
  verdict.rationale = std::move(*rationale);
  return verdict;
}

}  // namespace

std::string_view to_string(RiskLevel level) {
  return kRiskNames.at(static_cast<std::size_t>(level));
}

std::string_view to_string(UserAuthorization authorization) {
  return kAuthorizationNames.at(static_cast<std::size_t>(authorization));
}

core::Result<ReviewerVerdict> parse_reviewer_output(std::string_view text,
                                                    ReviewerOutputOptions options) {
  if (text.size() > kMaxReviewerOutputBytes) {
    return refuse("is longer than " + std::to_string(kMaxReviewerOutputBytes) + " bytes");
  }
  if (std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isspace(c); })) {
    return refuse("is empty");
  }
  auto value = parse_json_text(text);
  if (!value) return refuse("is not valid JSON: " + value.error().message);
  if (!value->is_object()) return refuse("must be one JSON object");
  auto verdict = read_verdict(*value);
  if (!verdict) return verdict;
  if (options.consistency == ConsistencyRules::Enforce) {
    if (auto why = inconsistency(*verdict)) return refuse("is inconsistent: " + *why);
  }
  return verdict;
}

std::string review_unavailable_reason(std::string_view why) {
  return std::string(kReviewUnavailablePrefix) + std::string(why);
}

}  // namespace pisandbox::approval
