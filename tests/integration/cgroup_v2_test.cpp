// cgroup v2 delegation on the real kernel (docs/security.md, "Resource limits";
// src/sandbox/linux/cgroup.hpp, delegate_v2()): the kernel refuses controllers for children in
// a cgroup that has processes of its own (cgroup-v2.rst, "No Internal Process Constraint"), so
// pi-sandbox, alone in a delegated directory, moves itself into a leaf and enables them there,
// and with another process in the directory gives up with the reason. pids and memory are
// bound to v1 hierarchies on this project's machines; the mechanism takes the controllers as a
// parameter and is tested here with `hugetlb`, free for v2, on a private cgroup2 mount in a
// mount namespace of this test process only, in a test directory made and removed here.
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "harness.hpp"
#include "sandbox/linux/cgroup.hpp"

namespace pisandbox::testing {
namespace {

using sandbox::linux_::CgroupSupport;
using sandbox::linux_::delegate_v2;
using sandbox::linux_::own_leaf_name;
using sandbox::linux_::V2Controllers;

/// hugetlb required, cpu optional: cpu is bound to v1 here, so it is left out without failing.
const V2Controllers kControllers{{"hugetlb"}, {"cpu"}};

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

/// This process's cgroup v2 path ("0::<path>" of /proc/<task>/cgroup).
std::string v2_path(const std::string& proc_cgroup) {
  std::istringstream in(read_file(proc_cgroup));
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("0::")) return line.substr(3);
  return {};
}

/// The mount points of cgroup and cgroup2 in this mount namespace (proc(5),
/// /proc/self/mountinfo), deepest last.
std::vector<std::string> cgroup_mounts() {
  std::vector<std::string> points;
  std::istringstream in(read_file("/proc/self/mountinfo"));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point, field;
    fields >> id >> parent >> device >> root >> point;
    while (fields >> field && field != "-") {
    }
    if (fields >> field && (field == "cgroup2" || field == "cgroup")) points.push_back(point);
  }
  return points;
}

bool write_to(const fs::path& file, const std::string& text) {
  std::ofstream out(file);
  out << text;
  out.flush();
  return out.good();
}

class CgroupV2Delegation : public ::testing::Test {
 protected:
  void SetUp() override {
    // scripts/test runs this binary as root only.
    PI_SANDBOX_REQUIRE(::geteuid() == 0,
                       "needs root: a cgroup2 hierarchy's directories are root's, and no v2 "
                       "directory is delegated to this user here");
    ASSERT_EQ(::unshare(CLONE_NEWNS), 0) << std::strerror(errno);
    ASSERT_EQ(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr), 0)
        << std::strerror(errno);
    // Only the private mount below is a cgroup mount here: probe_cgroups() takes the first
    // cgroup2 mount, and prefers a writable v1 hierarchy to a v2 directory it cannot use.
    for (const auto& other : cgroup_mounts())
      ASSERT_EQ(::umount2(other.c_str(), MNT_DETACH), 0) << other << ": " << std::strerror(errno);
    char point[] = "/tmp/pi-sandbox-cgroup2.XXXXXX";
    ASSERT_NE(::mkdtemp(point), nullptr) << std::strerror(errno);
    point_ = point;
    mounted_ = ::mount("none", point_.c_str(), "cgroup2", 0, nullptr) == 0;
    PI_SANDBOX_REQUIRE(mounted_, "cannot mount cgroup2: " << std::strerror(errno));
    PI_SANDBOX_REQUIRE(
        first_line(read_file(point_ / "cgroup.controllers")).find("hugetlb") != std::string::npos,
        "the hugetlb controller is bound to a v1 hierarchy (/proc/cgroups)");
    origin_ = v2_path("/proc/self/cgroup");
    ASSERT_FALSE(origin_.empty());
    added_at_root_ = first_line(read_file(point_ / "cgroup.subtree_control")).find("hugetlb") ==
                     std::string::npos;
    if (added_at_root_) {
      ASSERT_TRUE(write_to(point_ / "cgroup.subtree_control", "+hugetlb"));
    }
    test_ = point_ / ("pi-sandbox-v2-test-" + std::to_string(::getpid()));
    ASSERT_EQ(::mkdir(test_.c_str(), 0755), 0) << std::strerror(errno);
    ASSERT_TRUE(write_to(test_ / "cgroup.subtree_control", "+hugetlb"));
    delegated_ = test_ / "delegated";
    ASSERT_EQ(::mkdir(delegated_.c_str(), 0755), 0) << std::strerror(errno);
    ASSERT_EQ(first_line(read_file(delegated_ / "cgroup.controllers")), "hugetlb");
    ASSERT_TRUE(write_to(delegated_ / "cgroup.procs", std::to_string(::getpid())));
  }

  void TearDown() override {
    if (other_ > 0) {
      ::kill(other_, SIGKILL);
      ::waitpid(other_, nullptr, 0);
    }
    if (!origin_.empty())
      (void)write_to(point_ / fs::path(origin_).relative_path() / "cgroup.procs",
                     std::to_string(::getpid()));
    if (!test_.empty()) {
      // The sandbox's or leaf cgroups a test made or left (each empty now), then its own.
      std::error_code error;
      for (const auto& entry : fs::directory_iterator(delegated_, error))
        if (entry.is_directory()) (void)::rmdir(entry.path().c_str());
      for (const auto& dir : {delegated_, test_}) (void)::rmdir(dir.c_str());
      EXPECT_FALSE(fs::exists(test_)) << "left behind: " << test_;
    }
    if (added_at_root_) (void)write_to(point_ / "cgroup.subtree_control", "-hugetlb");
    if (mounted_) ::umount2(point_.c_str(), MNT_DETACH);
    if (!point_.empty()) ::rmdir(point_.c_str());
  }

  /// Another process in the delegated directory: a child sleeping there (born in this
  /// process's cgroup).
  void start_other() {
    other_ = ::fork();
    if (other_ == 0) {
      ::pause();
      ::_exit(0);
    }
    ASSERT_GT(other_, 0);
  }

  fs::path point_, test_, delegated_;
  std::string origin_;
  bool mounted_ = false, added_at_root_ = false;
  pid_t other_ = -1;
};

TEST_F(CgroupV2Delegation, TheKernelRefusesControllersWhileAnotherProcessIsThere) {
  start_other();
  const CgroupSupport support = delegate_v2(delegated_, kControllers);
  EXPECT_EQ(support.kind, CgroupSupport::Kind::None);
  EXPECT_TRUE(support.shared);
  EXPECT_EQ(support.why_not,
            "cgroup v2 directory " + delegated_.string() + " holds other processes too (pid " +
                std::to_string(other_) +
                "), and the kernel enables controllers for child cgroups only in a cgroup "
                "without processes of its own (cgroup-v2.rst, \"No Internal Process "
                "Constraint\"); start pi-sandbox in a cgroup of its own (`systemd-run --user "
                "--scope -p Delegate=yes pi-sandbox ...`, or docs/containers.md, \"A cgroup "
                "without systemd\")");
  // Nothing moved, nothing made, nothing enabled.
  EXPECT_EQ(v2_path("/proc/self/cgroup"), "/" + delegated_.lexically_relative(point_).string());
  EXPECT_FALSE(fs::exists(delegated_ / own_leaf_name()));
  EXPECT_EQ(read_file(delegated_ / "cgroup.subtree_control"), "");
  // The probe of each command says the same (the warning's and doctor's reason).
  EXPECT_EQ(sandbox::linux_::probe_cgroups(kControllers), support);
  // The same refusal from the kernel itself.
  EXPECT_FALSE(write_to(delegated_ / "cgroup.subtree_control", "+hugetlb"));
}

TEST_F(CgroupV2Delegation, AloneItMovesIntoItsOwnLeafWithItsThreads) {
  // A second thread, blocked: writing cgroup.procs moves the whole process.
  int blocker[2];
  ASSERT_EQ(::pipe(blocker), 0);
  std::thread thread([fd = blocker[0]] {
    char byte;
    (void)::read(fd, &byte, 1);
  });
  const pid_t thread_id = [] {
    for (const auto& task : fs::directory_iterator("/proc/self/task"))
      if (task.path().filename() != std::to_string(::getpid()))
        return static_cast<pid_t>(std::stoi(task.path().filename().string()));
    return pid_t{-1};
  }();
  // Before: not enabled, and nobody else there.
  EXPECT_EQ(sandbox::linux_::probe_cgroups(kControllers).why_not,
            "the hugetlb controllers are not enabled in " +
                (delegated_ / "cgroup.subtree_control").string());
  const CgroupSupport support = delegate_v2(delegated_, kControllers);
  const std::string thread_cgroup =
      v2_path("/proc/self/task/" + std::to_string(thread_id) + "/cgroup");
  (void)::write(blocker[1], "x", 1);
  thread.join();
  ::close(blocker[0]);
  ::close(blocker[1]);

  ASSERT_EQ(support.kind, CgroupSupport::Kind::V2) << support.why_not;
  EXPECT_EQ(support.v2, delegated_);
  const fs::path leaf = delegated_ / own_leaf_name();
  EXPECT_EQ(read_file(leaf / "cgroup.procs"), std::to_string(::getpid()) + "\n");
  const std::string in_leaf = "/" + leaf.lexically_relative(point_).string();
  EXPECT_EQ(v2_path("/proc/self/cgroup"), in_leaf);
  ASSERT_GT(thread_id, 0);
  EXPECT_EQ(thread_cgroup, in_leaf);
  // hugetlb enabled; cpu, not in this hierarchy, left out.
  EXPECT_EQ(read_file(delegated_ / "cgroup.subtree_control"), "hugetlb\n");
  ASSERT_EQ(::mkdir((delegated_ / "child").c_str(), 0755), 0) << std::strerror(errno);
  bool hugetlb_files = false;
  for (const auto& file : fs::directory_iterator(delegated_ / "child"))
    hugetlb_files = hugetlb_files || file.path().filename().string().starts_with("hugetlb.");
  EXPECT_TRUE(hugetlb_files) << "no hugetlb.* file in " << (delegated_ / "child");
  // Called again (a second command's probe after the move): the same, nothing moved again.
  EXPECT_EQ(delegate_v2(delegated_, kControllers), support);
  EXPECT_EQ(v2_path("/proc/self/cgroup"), in_leaf);
  // The probe of each command finds the directory above this process's leaf.
  EXPECT_EQ(sandbox::linux_::probe_cgroups(kControllers), support);
}

TEST_F(CgroupV2Delegation, ItNeverMovesAnotherProcess) {
  start_other();
  (void)delegate_v2(delegated_, kControllers);
  EXPECT_EQ(v2_path("/proc/" + std::to_string(other_) + "/cgroup"),
            "/" + delegated_.lexically_relative(point_).string());
  // Once the other one is gone, this one alone: it moves, the other's place is not touched.
  ::kill(other_, SIGKILL);
  ASSERT_EQ(::waitpid(other_, nullptr, 0), other_);
  other_ = -1;
  const CgroupSupport support = delegate_v2(delegated_, kControllers);
  EXPECT_EQ(support.kind, CgroupSupport::Kind::V2) << support.why_not;
  EXPECT_EQ(read_file(delegated_ / "cgroup.procs"), "");
}

TEST_F(CgroupV2Delegation, ALeafLeftByAGonePiSandboxIsSwept) {
  // The leaf of a pi-sandbox of this pid namespace whose process is gone (killed with
  // SIGKILL: it never got to leave), and this process's own, in use.
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(gone, nullptr, 0), gone);
  struct stat pid_namespace {};
  ASSERT_EQ(::stat("/proc/self/ns/pid", &pid_namespace), 0);
  const std::string left =
      "pi-sandbox-" + std::to_string(pid_namespace.st_ino) + "-" + std::to_string(gone) + "-self";
  const std::string mine = own_leaf_name();
  ASSERT_EQ(mine, "pi-sandbox-" + std::to_string(pid_namespace.st_ino) + "-" +
                      std::to_string(::getpid()) + "-self");
  ASSERT_EQ(::mkdir((delegated_ / left).c_str(), 0755), 0) << std::strerror(errno);
  ASSERT_EQ(delegate_v2(delegated_, kControllers).kind, CgroupSupport::Kind::V2);
  // The next sandbox's cgroup sweeps first; it fails then, for want of pids.max here.
  CgroupSupport support;
  support.kind = CgroupSupport::Kind::V2;
  support.v2 = delegated_;
  const auto group = sandbox::linux_::SandboxCgroup::create(support, policy::ResourceLimits{});
  ASSERT_FALSE(group);
  EXPECT_TRUE(
      group.error().message.ends_with("/pids.max\", O_WRONLY): ENOENT (No such file or "
                                      "directory)"))
      << group.error().message;
  EXPECT_FALSE(fs::exists(delegated_ / left));
  EXPECT_TRUE(fs::exists(delegated_ / mine));
  // And nothing of the failed sandbox's cgroup is left: only this process's leaf.
  std::vector<std::string> dirs;
  for (const auto& entry : fs::directory_iterator(delegated_))
    if (entry.is_directory()) dirs.push_back(entry.path().filename().string());
  EXPECT_EQ(dirs, std::vector<std::string>{mine});
}

}  // namespace
}  // namespace pisandbox::testing
