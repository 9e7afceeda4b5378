// Unit tests of the reviewer-output parser (compatibility C72, C78).
#include <gtest/gtest.h>

#include <string>

#include "approval/reviewer_output.hpp"

namespace pisandbox::approval {
namespace {

std::string error_of(std::string_view text, ReviewerOutputOptions options = {}) {
  const auto verdict = parse_reviewer_output(text, options);
  return verdict ? std::string("ok") : verdict.error().message;
}

TEST(ReviewerOutput, ParsesAValidVerdict) {
  const auto v = parse_reviewer_output(
      R"({"outcome":"allow","risk_level":"low","rationale":"Reads a public page."})");
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(v->outcome, ReviewOutcome::Allow);
  EXPECT_EQ(v->risk_level, RiskLevel::Low);
  EXPECT_EQ(v->user_authorization, UserAuthorization::Unknown);
  EXPECT_EQ(v->rationale, "Reads a public page.");
}

TEST(ReviewerOutput, AcceptsEveryNameAndSurroundingWhitespace) {
  const auto v = parse_reviewer_output(
      " \n{\"rationale\": \"r\", \"user_authorization\": \"high\", \"risk_level\": \"high\", "
      "\"outcome\": \"allow\"}\n\n");
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(v->risk_level, RiskLevel::High);
  EXPECT_EQ(v->user_authorization, UserAuthorization::High);
  for (const char* outcome : {"allow", "deny", "defer"}) {
    const std::string text =
        std::string(R"({"outcome":")") + outcome + R"(","risk_level":"medium","rationale":"r"})";
    EXPECT_EQ(error_of(text), "ok") << outcome;
  }
  for (const char* risk : {"low", "medium", "high", "critical"}) {
    const std::string text =
        std::string(R"({"outcome":"deny","risk_level":")") + risk + R"(","rationale":"r"})";
    EXPECT_EQ(error_of(text), "ok") << risk;
  }
  for (const char* authorization : {"unknown", "low", "medium", "high"}) {
    const std::string text = std::string(R"({"outcome":"deny","risk_level":"low","rationale":"r",)"
                                         R"("user_authorization":")") +
                             authorization + R"("})";
    EXPECT_EQ(error_of(text), "ok") << authorization;
  }
}

TEST(ReviewerOutput, RejectsWhatIsNotOneObject) {
  EXPECT_EQ(error_of(""), "reviewer output is empty");
  EXPECT_EQ(error_of(" \n"), "reviewer output is empty");
  EXPECT_EQ(error_of("[]"), "reviewer output must be one JSON object");
  EXPECT_EQ(error_of("\"allow\""), "reviewer output must be one JSON object");
  const std::string valid = R"({"outcome":"deny","risk_level":"low","rationale":"r"})";
  for (const std::string& text :
       {valid + " trailing", valid + valid, valid + "\n" + valid, "Sure! " + valid,
        std::string("{\"outcome\":"), std::string("not json"), valid + ",",
        std::string(R"({"outcome":"deny","risk_level":"low","rationale":"r",})"),
        std::string(R"({"outcome":"deny" /* c */,"risk_level":"low","rationale":"r"})")}) {
    EXPECT_TRUE(error_of(text).starts_with("reviewer output is not valid JSON: "))
        << text << " -> " << error_of(text);
  }
}

TEST(ReviewerOutput, RejectsMissingUnknownAndRepeatedKeys) {
  EXPECT_EQ(error_of(R"({"risk_level":"low","rationale":"r"})"),
            "reviewer output is missing key \"outcome\"");
  EXPECT_EQ(error_of(R"({"outcome":"deny","rationale":"r"})"),
            "reviewer output is missing key \"risk_level\"");
  EXPECT_EQ(error_of(R"({"outcome":"deny","risk_level":"low"})"),
            "reviewer output is missing key \"rationale\"");
  EXPECT_EQ(error_of(R"({"outcome":"deny","risk_level":"low","rationale":"r","confidence":1})"),
            "reviewer output has unknown key \"confidence\"");
  EXPECT_EQ(error_of(R"({"outcome":"deny","riskLevel":"low","rationale":"r"})"),
            "reviewer output has unknown key \"riskLevel\"");
  EXPECT_EQ(error_of(R"({"outcome":"allow","outcome":"deny","risk_level":"low","rationale":"r"})"),
            "reviewer output is not valid JSON: duplicate key \"outcome\"");
}

TEST(ReviewerOutput, RejectsWrongTypesAndValues) {
  EXPECT_EQ(error_of(R"({"outcome":1,"risk_level":"low","rationale":"r"})"),
            "reviewer output outcome must be a string");
  EXPECT_EQ(error_of(R"({"outcome":"deny","risk_level":null,"rationale":"r"})"),
            "reviewer output risk_level must be a string");
  EXPECT_EQ(error_of(R"({"outcome":"deny","risk_level":"low","rationale":["r"]})"),
            "reviewer output rationale must be a string");
  EXPECT_EQ(error_of(R"({"outcome":"Allow","risk_level":"low","rationale":"r"})"),
            "reviewer output outcome must be one of allow, deny, defer");
  EXPECT_EQ(error_of(R"({"outcome":"deny","risk_level":"severe","rationale":"r"})"),
            "reviewer output risk_level must be one of low, medium, high, critical");
  EXPECT_EQ(error_of(R"({"outcome":"deny","risk_level":"low","rationale":"r",)"
                     R"("user_authorization":"none"})"),
            "reviewer output user_authorization must be one of unknown, low, medium, high");
  EXPECT_EQ(error_of(R"({"outcome":"deny","risk_level":"low","rationale":"r",)"
                     R"("user_authorization":false})"),
            "reviewer output user_authorization must be a string");
  EXPECT_EQ(error_of(R"({"outcome":"deny","risk_level":"low","rationale":"  "})"),
            "reviewer output rationale must be a non-empty string");
}

TEST(ReviewerOutput, RationaleIsAtMost600Characters) {
  const auto with = [](const std::string& rationale) {
    return R"({"outcome":"deny","risk_level":"low","rationale":")" + rationale + R"("})";
  };
  EXPECT_EQ(error_of(with(std::string(600, 'a'))), "ok");
  EXPECT_EQ(error_of(with(std::string(601, 'a'))),
            "reviewer output rationale is longer than 600 characters");
  std::string accented;  // 600 × "é": 1 200 bytes, 600 characters
  for (int i = 0; i < 600; ++i) accented += "\xc3\xa9";
  EXPECT_EQ(error_of(with(accented)), "ok");
  std::string emoji;  // U+1F600 counts 2, as in JavaScript: 300 of them = 600
  for (int i = 0; i < 300; ++i) emoji += "\xf0\x9f\x98\x80";
  EXPECT_EQ(error_of(with(emoji)), "ok");
  EXPECT_EQ(error_of(with(emoji + "a")), "reviewer output rationale is longer than 600 characters");
  EXPECT_EQ(error_of(with(std::string(599, 'a') + "\\n")), "ok");  // an escape is 1 character
}

TEST(ReviewerOutput, RejectsHugeOutput) {
  const std::string text = R"({"outcome":"deny","risk_level":"low","rationale":"r"})" +
                           std::string(kMaxReviewerOutputBytes, ' ');
  EXPECT_EQ(error_of(text), "reviewer output is longer than 65536 bytes");
}

TEST(ReviewerOutput, RejectsSelfContradictingVerdicts) {
  EXPECT_EQ(error_of(R"({"outcome":"allow","risk_level":"critical","rationale":"r",)"
                     R"("user_authorization":"high"})"),
            "reviewer output is inconsistent: allow with critical risk");
  EXPECT_EQ(error_of(R"({"outcome":"allow","risk_level":"high","rationale":"r"})"),
            "reviewer output is inconsistent: allow with high risk needs medium or high "
            "user_authorization");
  EXPECT_EQ(error_of(R"({"outcome":"allow","risk_level":"high","rationale":"r",)"
                     R"("user_authorization":"low"})"),
            "reviewer output is inconsistent: allow with high risk needs medium or high "
            "user_authorization");
  EXPECT_EQ(error_of(R"({"outcome":"allow","risk_level":"high","rationale":"r",)"
                     R"("user_authorization":"medium"})"),
            "ok");
  EXPECT_EQ(error_of(R"({"outcome":"defer","risk_level":"low","rationale":"r"})"),
            "reviewer output is inconsistent: defer with low risk");
  EXPECT_EQ(error_of(R"({"outcome":"defer","risk_level":"critical","rationale":"r"})"),
            "reviewer output is inconsistent: defer with critical risk");
  EXPECT_EQ(error_of(R"({"outcome":"defer","risk_level":"high","rationale":"r"})"), "ok");
  EXPECT_EQ(error_of(R"({"outcome":"deny","risk_level":"critical","rationale":"r"})"), "ok");
  const ReviewerOutputOptions skip{.consistency = ConsistencyRules::Skip};
  EXPECT_EQ(error_of(R"({"outcome":"allow","risk_level":"critical","rationale":"r"})", skip), "ok");
}

TEST(ReviewerOutput, UnavailableReason) {
  EXPECT_EQ(review_unavailable_reason("reviewer output is empty"),
            "Automatic review is unavailable: reviewer output is empty");
  EXPECT_EQ(to_string(RiskLevel::Critical), "critical");
  EXPECT_EQ(to_string(UserAuthorization::Unknown), "unknown");
}

}  // namespace
}  // namespace pisandbox::approval
