// The record of every host input of a computation (sandbox/linux/host_record.hpp): each kind of
// change between the record and the check is seen, and a computation the record cannot follow
// leaves it incomplete (docs/security.md, "A sandbox made ahead").
#include "sandbox/linux/host_record.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace pisandbox::sandbox::linux_ {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// A scratch directory (outside /tmp when PI_SANDBOX_TEST_TMPDIR says so), removed at the end.
struct Scratch {
  fs::path dir;
  Scratch() {
    const char* base = std::getenv("PI_SANDBOX_TEST_TMPDIR");
    std::string pattern =
        (fs::path(base != nullptr ? base : fs::temp_directory_path().c_str()) / "hrec.XXXXXX")
            .string();
    dir = ::mkdtemp(pattern.data());
  }
  ~Scratch() {
    std::error_code error;
    fs::remove_all(dir, error);
  }
};

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// A record of reading `file` and whether `missing` exists, taken past the clock tick of the
/// files' last change (a racy record would be taken again by its user).
HostRecord record_of(const fs::path& file, const fs::path& missing) {
  std::this_thread::sleep_for(50ms);
  auto record = record_host_reads([&] {
    (void)read(file);
    return !fs::exists(missing);
  });
  EXPECT_TRUE(record.has_value());
  EXPECT_TRUE(record->complete) << record->why;
  EXPECT_FALSE(racy(*record));
  return *record;
}

TEST(HostRecord, HoldsWhileNothingChanged) {
  Scratch s;
  write(s.dir / "config.json", "{}");
  const HostRecord record = record_of(s.dir / "config.json", s.dir / "later");
  std::string why;
  EXPECT_TRUE(host_unchanged(record, &why)) << why;
  bool read_file = false;
  for (const auto& r : record.reads) read_file |= r.path == (s.dir / "config.json").string();
  EXPECT_TRUE(read_file);
}

// An edit in place that keeps the size, with the modification time put back to the
// nanosecond: only the change time tells it.
TEST(HostRecord, SeesAnEditKeepingSizeAndModificationTime) {
  Scratch s;
  const fs::path config = s.dir / "config.json";
  write(config, R"({"a": 1})");
  const HostRecord record = record_of(config, s.dir / "later");
  struct stat before {};
  ASSERT_EQ(::stat(config.c_str(), &before), 0);
  write(config, R"({"a": 2})");
  const timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, config.c_str(), times, 0), 0);
  std::string why;
  EXPECT_FALSE(host_unchanged(record, &why));
  EXPECT_EQ(why, config.string() + ": changed");
}

TEST(HostRecord, SeesAPathThatAppeared) {
  Scratch s;
  write(s.dir / "config.json", "{}");
  const HostRecord record = record_of(s.dir / "config.json", s.dir / "later");
  write(s.dir / "later", "");
  std::string why;
  EXPECT_FALSE(host_unchanged(record, &why));
  // The directory it appeared in is read (as the parent of config.json) before it.
  EXPECT_EQ(why, s.dir.string() + ": changed");
}

// A path read through a symbolic link whose target is missing: the link's name is in its
// directory all along, so that directory's times do not tell that the target appeared.
TEST(HostRecord, SeesTheTargetOfADanglingLinkThatAppeared) {
  Scratch s;
  write(s.dir / "config.json", "{}");
  fs::create_directory(s.dir / "store");
  fs::create_symlink("store/later", s.dir / "later");
  const HostRecord record = record_of(s.dir / "config.json", s.dir / "later");
  write(s.dir / "store" / "later", "");
  std::string why;
  EXPECT_FALSE(host_unchanged(record, &why));
  EXPECT_EQ(why, (s.dir / "later").string() + ": changed");
}

// A file changed through a shared mapping whose page was already dirty: no time moves
// (mmap(2)), only the content tells.
TEST(HostRecord, SeesAnEditThroughADirtyMapping) {
  Scratch s;
  const fs::path config = s.dir / "config.json";
  write(config, R"({"a": 1})");
  const int fd = ::open(config.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  void* map = ::mmap(nullptr, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  ASSERT_NE(map, MAP_FAILED);
  static_cast<char*>(map)[0] = '{';  // dirty, its times moved now, before the record
  const HostRecord record = record_of(config, s.dir / "later");
  struct stat before {};
  ASSERT_EQ(::stat(config.c_str(), &before), 0);
  static_cast<char*>(map)[6] = '2';
  struct stat after {};
  ASSERT_EQ(::stat(config.c_str(), &after), 0);
  ::munmap(map, 8);
  ASSERT_EQ(read(config), R"({"a": 2})");
  ASSERT_EQ(after.st_ctim.tv_nsec, before.st_ctim.tv_nsec);  // else this tests nothing
  std::string why;
  EXPECT_FALSE(host_unchanged(record, &why));
  EXPECT_EQ(why, config.string() + ": changed");
}

/// Opens, one level at a time, the directories `levels` below `dir` (each named `name`), making
/// them when `make`; the descriptor of the last, or -1.
int open_deep(const fs::path& dir, const std::string& name, int levels, bool make) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (int i = 0; i < levels && fd >= 0; ++i) {
    if (make) (void)::mkdirat(fd, name.c_str(), 0700);
    const int next = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ::close(fd);
    fd = next;
  }
  return fd;
}

// A file read by a name relative to a directory deeper than PATH_MAX: no absolute path of it
// could be stat(2)ed (ENAMETOOLONG), so no tuple of it would ever differ; the directory's
// descriptor has no name the kernel gives (readlink of /proc/self/fd/N: ENAMETOOLONG) and the
// record is incomplete instead of holding whatever changes there.
TEST(HostRecord, APathTooLongToStatMakesItIncomplete) {
  Scratch s;
  const std::string name(200, 'd');
  const int levels = PATH_MAX / 200 + 2;
  const int deep = open_deep(s.dir, name, levels, true);
  ASSERT_GE(deep, 0);
  const int made = ::openat(deep, "deep.json", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(made, 0);
  ASSERT_EQ(::write(made, "{}", 2), 2);
  ::close(made);
  ::close(deep);
  std::this_thread::sleep_for(50ms);
  auto record = record_host_reads([&] {
    const int fd = open_deep(s.dir, name, levels, false);
    const int file = fd < 0 ? -1 : ::openat(fd, "deep.json", O_RDONLY | O_CLOEXEC);
    char text[8];
    const bool read_it = file >= 0 && ::read(file, text, sizeof text) == 2;
    ::close(file);
    ::close(fd);
    return read_it;
  });
  ASSERT_TRUE(record.has_value());
  EXPECT_FALSE(record->complete);
  EXPECT_EQ(record->why, "a file that has no name to record");
  EXPECT_FALSE(host_unchanged(*record));
  // std::filesystem::remove_all names every file by its whole path.
  ASSERT_EQ(std::system(("rm -rf '" + s.dir.string() + "'").c_str()), 0);
}

TEST(HostRecord, SeesAPathThatWent) {
  Scratch s;
  write(s.dir / "config.json", "{}");
  write(s.dir / "other", "");
  const HostRecord record = record_of(s.dir / "config.json", s.dir / "absent");
  fs::remove(s.dir / "other");  // never read, but in the read file's directory
  std::string why;
  EXPECT_FALSE(host_unchanged(record, &why));
  EXPECT_EQ(why, s.dir.string() + ": changed");
}

TEST(HostRecord, SeesAFileReplacedByRename) {
  Scratch s;
  write(s.dir / "config.json", "{}");
  const HostRecord record = record_of(s.dir / "config.json", s.dir / "later");
  write(s.dir / "config.json.new", "{}");
  fs::rename(s.dir / "config.json.new", s.dir / "config.json");
  EXPECT_FALSE(host_unchanged(record));
}

TEST(HostRecord, SeesADirectoryRenamedAndMadeAgain) {
  Scratch s;
  fs::create_directory(s.dir / "ws");
  write(s.dir / "ws" / "config.json", "{}");
  const HostRecord record = record_of(s.dir / "ws" / "config.json", s.dir / "ws" / "later");
  fs::rename(s.dir / "ws", s.dir / "ws-old");
  fs::create_directory(s.dir / "ws");
  fs::copy_file(s.dir / "ws-old" / "config.json", s.dir / "ws" / "config.json");
  EXPECT_FALSE(host_unchanged(record));
}

// A computation that writes to the host is refused (EPERM) and its record never holds.
TEST(HostRecord, AWriteMakesItIncomplete) {
  Scratch s;
  auto record = record_host_reads([&] {
    const int fd = ::open((s.dir / "made").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    const bool refused = fd < 0 && errno == EPERM;
    if (fd >= 0) ::close(fd);
    return refused;
  });
  ASSERT_TRUE(record.has_value());
  EXPECT_FALSE(record->complete);
  EXPECT_EQ(record->why, "an open for writing: " + (s.dir / "made").string());
  EXPECT_FALSE(fs::exists(s.dir / "made"));
  EXPECT_FALSE(host_unchanged(*record));
}

// A process of its own would read where the record does not see: refused, incomplete.
TEST(HostRecord, AForkMakesItIncomplete) {
  auto record = record_host_reads([] {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    return pid < 0 && errno == EPERM;
  });
  ASSERT_TRUE(record.has_value());
  EXPECT_FALSE(record->complete);
  EXPECT_EQ(record->why, "a refused system call: " + std::to_string(SYS_clone));
}

// An answer from a socket (nscd, a daemon) names no path: refused, incomplete.
TEST(HostRecord, ASocketMakesItIncomplete) {
  auto record = record_host_reads([] {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) ::close(fd);
    return fd < 0 && errno == EPERM;
  });
  ASSERT_TRUE(record.has_value());
  EXPECT_FALSE(record->complete);
}

// A computation that fails may have taken another way than its user's: never trusted.
TEST(HostRecord, AFailedComputationMakesItIncomplete) {
  auto record = record_host_reads([] { return false; });
  ASSERT_TRUE(record.has_value());
  EXPECT_FALSE(record->complete);
  EXPECT_EQ(record->why, "the computation failed");
}

// A pseudo file (proc(5)) is recorded by its content: its times say nothing.
TEST(HostRecord, RecordsPseudoFilesByTheirContent) {
  auto record = record_host_reads([] { return !read("/proc/self/mountinfo").empty(); });
  ASSERT_TRUE(record.has_value());
  ASSERT_TRUE(record->complete) << record->why;
  bool found = false;
  for (const auto& r : record->reads)
    if (r.path == "/proc/self/mountinfo") {
      found = true;
      ASSERT_TRUE(r.content.has_value());
      EXPECT_EQ(*r.content, read("/proc/self/mountinfo"));
    }
  EXPECT_TRUE(found);
  EXPECT_TRUE(host_unchanged(*record));
}

/// In a child with a mount namespace of its own (and a user namespace when not root): whether
/// a mount added past the first 64 KiB of /proc/self/mountinfo is seen by host_unchanged().
/// Exit 0: seen; 1: not seen; 2: the set-up failed.
[[noreturn]] void mount_past_64k(const fs::path& dir) {
  const uid_t uid = ::getuid();
  const gid_t gid = ::getgid();
  if (uid != 0) {
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) ::_exit(2);
    std::ofstream("/proc/self/setgroups") << "deny";
    std::ofstream("/proc/self/uid_map") << "0 " << uid << " 1";
    std::ofstream("/proc/self/gid_map") << "0 " << gid << " 1";
  } else if (::unshare(CLONE_NEWNS) != 0) {
    ::_exit(2);
  }
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(2);
  // Long mount points: a few hundred lines pass 64 KiB.
  const std::string name(150, 'm');
  for (int i = 0; read("/proc/self/mountinfo").size() < 96 * 1024; ++i) {
    const fs::path point = dir / (name + std::to_string(i));
    fs::create_directory(point);
    if (::mount("none", point.c_str(), "tmpfs", 0, "size=4k") != 0) ::_exit(2);
  }
  auto record = record_host_reads([] { return !read("/proc/self/mountinfo").empty(); });
  if (!record || !record->complete || !host_unchanged(*record)) ::_exit(2);
  fs::create_directory(dir / "last");
  if (::mount("none", (dir / "last").c_str(), "tmpfs", 0, "size=4k") != 0) ::_exit(2);
  ::_exit(host_unchanged(*record) ? 1 : 0);
}

// A pseudo file is compared whole: a mount appended past the first 64 KiB of mountinfo (a host
// with many mounts) is seen.
TEST(HostRecord, SeesAMountPastTheFirst64KiBOfMountinfo) {
  Scratch s;
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) mount_past_64k(s.dir);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// A file changed in the clock tick of the record is racy: its user takes the record again.
TEST(HostRecord, AFileChangedJustBeforeIsRacy) {
  Scratch s;
  write(s.dir / "config.json", "{}");
  auto record = record_host_reads([&] { return !read(s.dir / "config.json").empty(); });
  ASSERT_TRUE(record.has_value());
  EXPECT_TRUE(racy(*record));
}

}  // namespace
}  // namespace pisandbox::sandbox::linux_
