// session::would_be_found_at() and check_reviewer_outside(): a reviewer file the sandboxed
// command could still create (missing, behind a dangling link, relative) is inside the
// workspace as much as one that exists (docs/approvals.md, "The reviewer program": a reviewer
// the command wrote would decide its own requests).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "session/approval_setup.hpp"

namespace {

namespace fs = std::filesystem;
using pisandbox::session::check_reviewer_outside;
using pisandbox::session::would_be_found_at;

class ReviewerLocation : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/var/tmp/reviewer-location.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = fs::canonical(pattern);
    ws_ = root_ / "ws";
    fs::create_directories(ws_);
    fs::create_directories(root_ / "outside");
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_, ws_;
};

TEST_F(ReviewerLocation, AnExistingFileIsItsRealPath) {
  std::ofstream(root_ / "outside/review.sh") << "#!/bin/sh\n";
  fs::create_symlink(root_ / "outside/review.sh", root_ / "link");
  EXPECT_EQ(would_be_found_at((root_ / "link").string()), root_ / "outside/review.sh");
  EXPECT_TRUE(check_reviewer_outside({(root_ / "link").string()}, ws_).has_value());
}

TEST_F(ReviewerLocation, AMissingFileIsWhereItWouldBeCreated) {
  const fs::path missing = ws_ / "tools/review.sh";
  EXPECT_EQ(would_be_found_at(missing.string()), missing);
  const auto refused = check_reviewer_outside({"/bin/sh", missing.string()}, ws_);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message,
            "refusing the reviewer " + missing.string() +
                ": it lies inside the workspace, where sandboxed commands can write");
}

TEST_F(ReviewerLocation, ADanglingLinkIsFollowedToWhereItsTargetWouldBe) {
  fs::create_symlink(ws_ / "tools/linked.sh", root_ / "outside/reviewer");
  EXPECT_EQ(would_be_found_at((root_ / "outside/reviewer").string()), ws_ / "tools/linked.sh");
  EXPECT_FALSE(check_reviewer_outside({(root_ / "outside/reviewer").string()}, ws_).has_value());
  // A relative link, through a missing directory and `..`.
  fs::create_symlink("../ws/new/../r.sh", root_ / "outside/relative");
  EXPECT_EQ(would_be_found_at((root_ / "outside/relative").string()), ws_ / "r.sh");
}

TEST_F(ReviewerLocation, RelativeArgumentsAreFoundFromTheRoot) {
  EXPECT_EQ(would_be_found_at("--strict"), fs::path("/--strict"));
  EXPECT_EQ(would_be_found_at("review.py"), fs::path("/review.py"));
  EXPECT_TRUE(check_reviewer_outside({"/usr/bin/python3", "review.py", "--strict"}, ws_));
}

TEST_F(ReviewerLocation, ALoopOfLinksEndsAndIsNotInside) {
  fs::create_symlink(root_ / "outside/b", root_ / "outside/a");
  fs::create_symlink(root_ / "outside/a", root_ / "outside/b");
  EXPECT_TRUE(check_reviewer_outside({(root_ / "outside/a").string()}, ws_).has_value());
}

}  // namespace
