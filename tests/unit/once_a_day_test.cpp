// The stamp of a notice said at most once a day (session/once_a_day.hpp): where it lives, and
// when the notice is due, on a real scratch directory.
#include "session/once_a_day.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

namespace pisandbox::session {
namespace {

namespace fs = std::filesystem;
using std::chrono::hours;

TEST(OnceADay, StampIsInTheXdgStateDirectory) {
  ::unsetenv("XDG_STATE_HOME");
  EXPECT_EQ(notice_stamp("/home/u", "no-cgroup"), "/home/u/.local/state/pi-sandbox/no-cgroup");
  EXPECT_EQ(notice_stamp("/", "no-cgroup"), "");
  EXPECT_EQ(notice_stamp("", "no-cgroup"), "");
  ::setenv("XDG_STATE_HOME", "relative/state", 1);  // not absolute: ignored, as the spec says
  EXPECT_EQ(notice_stamp("/home/u", "no-cgroup"), "/home/u/.local/state/pi-sandbox/no-cgroup");
  ::setenv("XDG_STATE_HOME", "/state", 1);
  EXPECT_EQ(notice_stamp("/home/u", "no-cgroup"), "/state/pi-sandbox/no-cgroup");
  ::unsetenv("XDG_STATE_HOME");
}

TEST(OnceADay, DueOnceADayAndAgainAfterIt) {
  char dir[] = "/tmp/pi-sandbox-once-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const fs::path stamp = fs::path(dir) / "state/pi-sandbox/no-cgroup";
  const auto now = std::chrono::system_clock::now();
  EXPECT_TRUE(notice_due(stamp, now));
  EXPECT_EQ(fs::status(stamp.parent_path()).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_FALSE(notice_due(stamp, now + hours(23)));
  EXPECT_TRUE(notice_due(stamp, now + hours(24)));
  EXPECT_FALSE(notice_due(stamp, now + hours(25)));
  // A stamp from the future (a clock set back) does not silence it.
  EXPECT_TRUE(notice_due(stamp, now));
  EXPECT_TRUE(notice_due("", now));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pisandbox::session
