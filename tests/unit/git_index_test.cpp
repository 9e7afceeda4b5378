// The entries and the gitlinks of a git index (policy/git_index.hpp): index files written by
// the real git binary in versions 2, 3 and 4 and with SHA-256, the 0xFFF name length and git's
// varint on synthetic bytes, and malformed indexes that must give an error; what a checkout
// left unwritten outside a directory (unapplied_paths), on indexes the real git wrote.
#include "policy/git_index.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace pisandbox::policy;
using Paths = std::vector<std::string>;

/// A scratch directory holding a superproject `top`, with git run there without the host's
/// configuration (GIT_CONFIG_NOSYSTEM, HOME and XDG_CONFIG_HOME inside the scratch directory).
class GitIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/pi-sandbox-git-index-test.XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr);
    root_ = name;
    ::setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    ::setenv("HOME", root_.c_str(), 1);
    ::setenv("XDG_CONFIG_HOME", root_.c_str(), 1);
    for (const char* variable :
         {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG", "GIT_CONFIG_GLOBAL",
          "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_OBJECT_DIRECTORY"})
      ::unsetenv(variable);
  }
  void TearDown() override { fs::remove_all(root_); }

  /// Runs `git <args>` in `root_/dir` (created first); fails the test when git fails.
  void git(const std::string& dir, const std::string& args) {
    fs::create_directories(root_ / dir);
    const std::string command = "cd '" + (root_ / dir).string() +
                                "' && git -c user.name=t -c user.email=t@e "
                                "-c init.defaultBranch=main " +
                                args + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }

  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }

  /// A repository at `dir` with one commit (a nested repository `git add` makes a gitlink of).
  void nested(const std::string& dir, const std::string& init_options = "") {
    git(dir, "init -q " + init_options);
    write(dir + "/README", "nested\n");
    git(dir, "add README");
    git(dir, "commit -q -m nested");
  }

  /// The superproject `top` with files, a commit (so the index has a TREE extension) and the
  /// gitlinks `sub`, `deps/inner` and `deps/inner-two` beside ordinary files.
  void superproject(const std::string& init_options = "") {
    git("top", "init -q " + init_options);
    write("top/a.txt", "a\n");
    write("top/deps/b.txt", "b\n");
    write("top/z.txt", "z\n");
    nested("top/sub", init_options);
    nested("top/deps/inner", init_options);
    nested("top/deps/inner-two", init_options);
    git("top", "add a.txt deps/b.txt z.txt sub deps/inner deps/inner-two");
    git("top", "commit -q -m top");
  }

  std::string index() const {
    std::ifstream in(root_ / "top/.git/index", std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
  }

  fs::path root_;
};

const Paths kTopGitlinks = {"deps/inner", "deps/inner-two", "sub"};

std::uint32_t version_of(const std::string& index) {
  return static_cast<unsigned char>(index.at(7));
}

TEST_F(GitIndexTest, Version2ListsTheGitlinksInIndexOrder) {
  superproject();
  const auto bytes = index();
  ASSERT_EQ(version_of(bytes), 2u);
  const auto gitlinks = index_gitlinks(bytes);
  ASSERT_TRUE(gitlinks) << gitlinks.error();
  EXPECT_EQ(*gitlinks, kTopGitlinks);
}

TEST_F(GitIndexTest, NoGitlinksIsAnEmptyList) {
  git("top", "init -q");
  write("top/a.txt", "a\n");
  git("top", "add a.txt");
  const auto gitlinks = index_gitlinks(index());
  ASSERT_TRUE(gitlinks) << gitlinks.error();
  EXPECT_EQ(*gitlinks, Paths{});
}

TEST_F(GitIndexTest, Version3WithExtendedFlags) {
  superproject();
  git("top", "update-index --index-version 3");
  git("top", "update-index --skip-worktree a.txt z.txt");
  const auto bytes = index();
  ASSERT_EQ(version_of(bytes), 3u);
  const auto gitlinks = index_gitlinks(bytes);
  ASSERT_TRUE(gitlinks) << gitlinks.error();
  EXPECT_EQ(*gitlinks, kTopGitlinks);
}

TEST_F(GitIndexTest, Version4PrefixCompressed) {
  superproject();
  git("top", "update-index --index-version 4");
  git("top", "update-index --skip-worktree deps/b.txt");
  const auto bytes = index();
  ASSERT_EQ(version_of(bytes), 4u);
  const auto gitlinks = index_gitlinks(bytes);
  ASSERT_TRUE(gitlinks) << gitlinks.error();
  EXPECT_EQ(*gitlinks, kTopGitlinks);
}

// index_extent(): a whole index (with its optional TREE extension) is complete; a split
// index names its shared index, which git wrote in the git directory.
TEST_F(GitIndexTest, AWholeIndexIsCompleteASplitOneNamesItsSharedIndex) {
  superproject();
  EXPECT_EQ(index_extent(index()).incomplete, std::nullopt);
  EXPECT_EQ(index_extent(index()).shared_index, "");
  git("top", "update-index --split-index");
  const auto extent = index_extent(index());
  EXPECT_EQ(extent.incomplete, "a split index (the `link` extension, core.splitIndex)");
  ASSERT_EQ(extent.shared_index.size(), std::string("sharedindex.").size() + 40);
  EXPECT_TRUE(fs::is_regular_file(root_ / "top/.git" / extent.shared_index));
  // A replaced entry keeps no name in the split index: index_entries() refuses it.
  write("top/a.txt", "changed\n");
  git("top", "add a.txt");
  EXPECT_FALSE(index_entries(index()).has_value());
  EXPECT_EQ(index_extent(index()).incomplete,
            "a split index (the `link` extension, core.splitIndex)");
}

/// The bytes of `rel` below the scratch directory.
std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// split_index_entries(): a split index git wrote after a change (a replaced entry, a deleted
// one, an added one, a new stage) reads as the whole index git writes from it
// (`git update-index --no-split-index`), stat data included; in versions 2 and 4.
TEST_F(GitIndexTest, ASplitIndexWithItsSharedIndexReadsAsTheWholeIndex) {
  for (const char* version : {"2", "4"}) {
    SCOPED_TRACE(version);
    fs::remove_all(root_ / "top");
    superproject();
    git("top", std::string("update-index --index-version ") + version);
    git("top", "update-index --split-index");
    write("top/a.txt", "changed\n");
    write("top/new/c.txt", "c\n");
    git("top", "add a.txt new/c.txt");
    git("top", "rm -q --cached z.txt");
    const std::string split = index();
    const auto extent = index_extent(split);
    ASSERT_FALSE(extent.shared_index.empty());
    const std::string shared = read_bytes(root_ / "top/.git" / extent.shared_index);
    const auto merged = split_index_entries(split, shared);
    ASSERT_TRUE(merged) << merged.error();
    git("top", "update-index --no-split-index");
    const auto whole = index_entries(index());
    ASSERT_TRUE(whole) << whole.error();
    EXPECT_EQ(*merged, *whole);
    Paths paths;
    for (const auto& e : *merged) paths.push_back(e.path);
    EXPECT_EQ(paths,
              (Paths{"a.txt", "deps/b.txt", "deps/inner", "deps/inner-two", "new/c.txt", "sub"}));
  }
}

// What git refuses to read is an error: another shared index (its checksum is not the link's
// object name), a bitmap cut short, a link without its shared index's entries.
TEST_F(GitIndexTest, ASplitIndexThatDoesNotFitItsSharedIndexIsAnError) {
  superproject();
  git("top", "update-index --split-index");
  write("top/a.txt", "changed\n");
  git("top", "add a.txt");
  const std::string split = index();
  const std::string shared = read_bytes(root_ / "top/.git" / index_extent(split).shared_index);
  ASSERT_TRUE(split_index_entries(split, shared).has_value());
  std::string other = shared;
  other[other.size() - 1] = static_cast<char>(other.back() ^ 1);
  EXPECT_EQ(split_index_entries(split, other).error(),
            "the shared index's checksum is not the object name its link names");
  EXPECT_EQ(split_index_entries(shared, shared).error(), "the split index: no `link` extension");
  // The link's size cut by 4 bytes: the replace bitmap ends before its last marker's position.
  const auto link = split.find("link");
  ASSERT_NE(link, std::string::npos);
  std::string cut = split;
  cut[link + 7] = static_cast<char>(cut[link + 7] - 4);
  EXPECT_FALSE(split_index_entries(cut, shared).has_value());
}

// A mandatory extension (lower-case first letter) git does not know, and extension bytes that
// run past the checksum, are named; an optional one (upper-case) is skipped, as git skips it.
TEST_F(GitIndexTest, MandatoryAndMalformedExtensionsAreNamed) {
  superproject();
  const std::string whole = index();
  const std::string body = whole.substr(0, whole.size() - 20),
                    sum = whole.substr(whole.size() - 20);
  const std::string four{'\0', '\0', '\0', '\4'};
  EXPECT_EQ(index_extent(body + "ZZZZ" + four + "abcd" + sum).incomplete, std::nullopt);
  EXPECT_EQ(index_extent(body + "zzzz" + four + "abcd" + sum).incomplete,
            "the unknown mandatory extension `zzzz`");
  EXPECT_EQ(index_extent(body + "sdir" + std::string(4, '\0') + sum).incomplete,
            "a sparse index (the `sdir` extension, index.sparse)");
  EXPECT_EQ(index_extent(body + "ZZZZ" + std::string{'\0', '\0', '\1', '\0'} + sum).incomplete,
            "unreadable (extension `ZZZZ` runs past the end of the index)");
  EXPECT_EQ(index_extent("DIRC").incomplete,
            "unreadable (index of 4 bytes, smaller than a header and a checksum)");
}

TEST_F(GitIndexTest, Sha256Repository) {
  superproject("--object-format=sha256");
  const auto gitlinks = index_gitlinks(index(), 32);
  ASSERT_TRUE(gitlinks) << gitlinks.error();
  EXPECT_EQ(*gitlinks, kTopGitlinks);
  git("top", "update-index --index-version 4");
  const auto compressed = index_gitlinks(index(), 32);
  ASSERT_TRUE(compressed) << compressed.error();
  EXPECT_EQ(*compressed, kTopGitlinks);
}

// Synthetic indexes, built as gitformat-index(5) lays them out.

constexpr std::uint32_t kFile = 0100644;
constexpr std::uint32_t kGitlinkMode = 0160000;

std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

std::string be16(std::uint16_t v) {
  return {static_cast<char>(v >> 8), static_cast<char>(v)};
}

std::string header(std::uint32_t version, std::uint32_t count) {
  return "DIRC" + be32(version) + be32(count);
}

/// Stat data with `mode`, a dummy object name and the 16-bit flags.
std::string entry_start(std::uint32_t mode, std::uint16_t flags) {
  return std::string(24, '\0') + be32(mode) + std::string(12, '\0') + std::string(20, '\x11') +
         be16(flags);
}

std::uint16_t name_length(std::size_t size) {
  return static_cast<std::uint16_t>(size < 0xFFF ? size : 0xFFF);
}

/// A version 2-3 entry: `path`, then NULs to a multiple of 8 bytes (at least one).
std::string entry_v2(const std::string& path, std::uint32_t mode = kFile) {
  std::string entry = entry_start(mode, name_length(path.size())) + path;
  entry.append(8 - entry.size() % 8, '\0');
  return entry;
}

/// A version 4 entry: `strip` as git's varint bytes, then `suffix` and its NUL.
std::string entry_v4(const std::string& varint, const std::string& suffix, std::size_t full,
                     std::uint32_t mode = kFile) {
  return entry_start(mode, name_length(full)) + varint + suffix + '\0';
}

const std::string kChecksum(20, '\0');

std::string error_of(const std::string& bytes, std::size_t hash_bytes = 20) {
  const auto result = index_gitlinks(bytes, hash_bytes);
  EXPECT_FALSE(result) << "expected an error";
  return result ? std::string() : result.error();
}

TEST(GitIndexSynthetic, NameLength0xFFFMeansUpToTheNul) {
  const std::string p4095(4095, 'a');
  const std::string p4096 = "g/" + std::string(4094, 'b');
  const auto bytes = header(2, 3) + entry_v2(p4095, kGitlinkMode) + entry_v2(p4096, kGitlinkMode) +
                     entry_v2("x") + kChecksum;
  const auto gitlinks = index_gitlinks(bytes);
  ASSERT_TRUE(gitlinks) << gitlinks.error();
  EXPECT_EQ(*gitlinks, (Paths{p4095, p4096}));
  EXPECT_NE(error_of(header(2, 1) + entry_v2(std::string(4097, 'c')) + kChecksum)
                .find("longer than 4096"),
            std::string::npos);
}

TEST(GitIndexSynthetic, GitlinkByTypeBitsAsGitTestsIt) {
  const auto bytes = header(2, 2) + entry_v2("a", 0160644) + entry_v2("b", 0120000) + kChecksum;
  const auto gitlinks = index_gitlinks(bytes);
  ASSERT_TRUE(gitlinks) << gitlinks.error();
  EXPECT_EQ(*gitlinks, Paths{"a"});
}

TEST(GitIndexSynthetic, Version4StripIsGitsVarint) {
  // 200 is 0x80 0x48 in git's varint (LEB128 would read 9216, more than the previous path).
  const std::string zero(1, '\0');
  const std::string previous(300, 'p');
  const auto bytes = header(4, 3) + entry_v4(zero, previous, 300) +
                     entry_v4("\x80\x48", "/sub", 104, kGitlinkMode) +
                     entry_v4(zero, "/x", 106, kGitlinkMode) + kChecksum;
  const auto gitlinks = index_gitlinks(bytes);
  ASSERT_TRUE(gitlinks) << gitlinks.error();
  EXPECT_EQ(*gitlinks, (Paths{std::string(100, 'p') + "/sub", std::string(100, 'p') + "/sub/x"}));
}

TEST(GitIndexSynthetic, Version4FirstEntryStripIsIgnoredAsGitDoes) {
  const auto bytes = header(4, 1) + entry_v4("\x05", "sub", 3, kGitlinkMode) + kChecksum;
  const auto gitlinks = index_gitlinks(bytes);
  ASSERT_TRUE(gitlinks) << gitlinks.error();
  EXPECT_EQ(*gitlinks, Paths{"sub"});
}

TEST(GitIndexSynthetic, ExtendedFlagsWordIsSkipped) {
  std::string entry = entry_start(kGitlinkMode, 0x4000 | 3) + be16(0x4000) + "sub";
  entry.append(8 - entry.size() % 8, '\0');
  const auto gitlinks = index_gitlinks(header(3, 1) + entry + kChecksum);
  ASSERT_TRUE(gitlinks) << gitlinks.error();
  EXPECT_EQ(*gitlinks, Paths{"sub"});
}

// Version 4 repeats the previous path for two bytes (strip 0, no suffix): a 64-byte entry can
// stand for a path of 4000 bytes. The paths of one index hold at most kMaxGitIndexNamesBytes
// together, in a whole index and in the shared index a split one names.
TEST(GitIndexSynthetic, Version4PathsHoldAtMost64MiBTogether) {
  const std::string zero(1, '\0');
  const std::string path(4000, 'a');
  const auto index_of = [&](std::uint32_t count) {
    std::string bytes = header(4, count) + entry_v4(zero, path, path.size());
    const std::string repeat = entry_v4(zero, "", path.size());
    for (std::uint32_t i = 1; i < count; ++i) bytes += repeat;
    return bytes + kChecksum;
  };
  // 16000 paths of 4000 bytes: 64,000,000 bytes, within the 67,108,864.
  const auto within = index_entries(index_of(16000));
  ASSERT_TRUE(within) << within.error();
  EXPECT_EQ(within->size(), 16000u);
  EXPECT_EQ(within->back().path, path);
  // The 16778th path (entry 16777: 12 + 4064 + 16776 * 64 bytes in) passes the bound.
  const std::string over = index_of(16778);
  const std::string why =
      "index entry 16777 at offset 1077740: the paths up to it hold more than 64 MiB";
  const auto entries = index_entries(over);
  ASSERT_FALSE(entries) << "read whole: " << entries->size() << " entries";
  EXPECT_EQ(entries.error(), why);
  EXPECT_EQ(index_extent(over).incomplete, "unreadable (" + why + ")");
  // The same bytes as the shared index of a split index holding no entry of its own, whose
  // link names their checksum.
  const std::string split = header(2, 0) + "link" + be32(20) + kChecksum + kChecksum;
  const auto merged = split_index_entries(split, over);
  ASSERT_FALSE(merged) << "merged: " << merged->size() << " entries";
  EXPECT_EQ(merged.error(), "the shared index: unreadable (" + why + ")");
}

TEST(GitIndexMalformed, EachGivesAnError) {
  const std::string zero(1, '\0');
  const auto good = entry_v2("sub", kGitlinkMode);
  struct Case {
    const char* what;
    std::string bytes;
    const char* reason;  // a part of the error text
  };
  std::string unterminated = entry_start(kFile, 3) + "abcd";
  unterminated.append(8 - unterminated.size() % 8, '\0');
  std::string inner_nul = entry_start(kFile, 3) + std::string("a\0b", 3);
  inner_nul.append(8 - inner_nul.size() % 8, '\0');
  std::string unknown_extended = entry_start(kFile, 0x4000 | 1) + be16(0x0001) + "a";
  unknown_extended.append(8 - unknown_extended.size() % 8, '\0');
  const std::vector<Case> cases = {
      {"empty", "", "smaller than a header"},
      {"smaller than a header and a checksum", header(2, 0) + std::string(19, '\0'),
       "smaller than a header"},
      {"bad magic", "DIRD" + be32(2) + be32(0) + kChecksum, "not DIRC"},
      {"version 1", header(1, 0) + kChecksum, "version 1 "},
      {"version 5", header(5, 0) + kChecksum, "version 5 "},
      {"truncated entry", header(2, 1) + good.substr(0, 50), "entry runs past the end"},
      {"truncated padding", header(2, 1) + good.substr(0, good.size() - 1),
       "padding runs past the end"},
      {"count larger than data", header(2, 3) + good + good + kChecksum,
       "entry 2 at offset 156: entry runs past the end"},
      {"huge count", header(2, 0xFFFFFFFF) + good + kChecksum,
       "entry 1 at offset 84: entry runs past the end"},
      {"name without its NUL", header(2, 1) + unterminated + kChecksum,
       "lacks its terminating NUL"},
      {"name holding a NUL", header(2, 1) + inner_nul + kChecksum, "holds a NUL"},
      {"empty name", header(2, 1) + entry_v2("") + kChecksum, "empty path"},
      {"unknown extended flag", header(3, 1) + unknown_extended + kChecksum,
       "unknown extended flags"},
      {"v4 strip too large",
       header(4, 2) + entry_v4(zero, "abc", 3) + entry_v4("\x04", "d", 1) + kChecksum,
       "strip longer than the previous path"},
      {"v4 length shorter than kept prefix",
       header(4, 2) + entry_v4(zero, "abc", 3) + entry_v4(zero, "d", 2) + kChecksum,
       "shorter than the kept prefix"},
      {"v4 varint past the end", header(4, 1) + entry_start(kFile, 1) + "\x80",
       "prefix length runs past the end"},
      {"v4 path over 4096",
       header(4, 2) + entry_v4(zero, std::string(4000, 'a'), 4000) +
           entry_v4(zero, std::string(97, 'b'), 4097) + kChecksum,
       "longer than 4096 bytes"},
  };
  for (const auto& c : cases) {
    const auto result = index_gitlinks(c.bytes);
    ASSERT_FALSE(result) << c.what;
    EXPECT_NE(result.error().find(c.reason), std::string::npos) << c.what << ": " << result.error();
  }
  EXPECT_FALSE(index_gitlinks(header(2, 0) + kChecksum, 21)) << "hash size 21";
  EXPECT_FALSE(index_gitlinks(header(2, 0) + kChecksum, 32)) << "too small for SHA-256";
}

}  // namespace

namespace {

/// The stat data of `path` as git records it (the low 32 bits of lstat(2)'s), or nullopt.
std::optional<GitStat> stat_of(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return GitStat{static_cast<std::uint32_t>(st.st_mtim.tv_sec),
                 static_cast<std::uint32_t>(st.st_mtim.tv_nsec),
                 static_cast<std::uint32_t>(st.st_ino), static_cast<std::uint32_t>(st.st_size)};
}

/// A monorepo `top` with `top.txt` and `pkg/p.txt` on `main`, and a branch `other` that changes
/// `top.txt`; `entries()` reads its index.
class UnappliedPathsTest : public GitIndexTest {
 protected:
  void SetUp() override {
    GitIndexTest::SetUp();
    write("top/top.txt", "main\n");
    write("top/pkg/p.txt", "p\n");
    git("top", "init -q");
    git("top", "add -A");
    git("top", "commit -q -m first");
    git("top", "checkout -q -b other");
    write("top/top.txt", "other\n");
    git("top", "commit -q -a -m other");
    git("top", "checkout -q main");
  }

  std::vector<GitIndexEntry> entries() const {
    auto read = index_entries(index());
    EXPECT_TRUE(read) << read.error();
    return read ? *read : std::vector<GitIndexEntry>{};
  }

  std::vector<std::string> unapplied(const std::vector<GitIndexEntry>& before) const {
    return unapplied_paths(before, entries(), "pkg",
                           [&](const std::string& path) { return stat_of(root_ / "top" / path); });
  }
};

TEST_F(UnappliedPathsTest, EntriesCarryTheModeTheObjectAndTheStatDataGitRecorded) {
  const auto read = entries();
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].path, "pkg/p.txt");
  EXPECT_EQ(read[1].path, "top.txt");
  EXPECT_EQ(read[1].mode, 0100644u);
  EXPECT_EQ(read[1].oid.size(), 20u);
  EXPECT_EQ(read[1].stage, 0u);
  EXPECT_FALSE(read[1].skip_worktree);
  EXPECT_EQ(std::optional<GitStat>(read[1].stat), stat_of(root_ / "top/top.txt"));
}

// What a sandboxed `git checkout other` leaves: the new index, `top.txt` not rewritten.
TEST_F(UnappliedPathsTest, ACheckoutThatCouldNotWriteAFileOutsideNamesIt) {
  const auto before = entries();
  git("top", "read-tree other");  // the index of `other`, without writing the working tree
  EXPECT_EQ(unapplied(before), (std::vector<std::string>{"top.txt"}));
}

TEST_F(UnappliedPathsTest, ACompleteCheckoutAndAnAddNameNothing) {
  const auto before = entries();
  git("top", "checkout -q other");
  EXPECT_EQ(unapplied(before), std::vector<std::string>{});
  const auto on_other = entries();
  write("top/top.txt", "changed\n");
  git("top", "add top.txt");
  EXPECT_EQ(unapplied(on_other), std::vector<std::string>{});
}

TEST_F(UnappliedPathsTest, ChangesInsideTheDirectoryAreNotLookedAt) {
  const auto before = entries();
  git("top", "update-index --cacheinfo 100644,e69de29bb2d1d6434b8b29ae775ad8c2e48c5391,pkg/p.txt");
  EXPECT_EQ(unapplied(before), std::vector<std::string>{});
}

TEST_F(UnappliedPathsTest, AnEntryGoneWhileItsFileStaysIsNamed) {
  const auto before = entries();
  git("top", "rm -q --cached top.txt");
  EXPECT_EQ(unapplied(before), (std::vector<std::string>{"top.txt"}));
  fs::remove(root_ / "top/top.txt");
  EXPECT_EQ(unapplied(before), std::vector<std::string>{});
}

// What a checkout that failed outside had already written inside (`pkg/p.txt` comes first).
TEST_F(UnappliedPathsTest, WrittenPathsAreThoseInsideWhoseFileTheNewEntryRecords) {
  git("top", "checkout -q -b mixed");
  write("top/top.txt", "mixed\n");
  write("top/pkg/p.txt", "mixed\n");
  git("top", "commit -q -a -m mixed");
  git("top", "checkout -q main");
  const auto before = entries();
  const auto written = [&] {
    return written_paths(before, entries(), "pkg",
                         [&](const std::string& path) { return stat_of(root_ / "top" / path); });
  };
  git("top", "read-tree mixed");  // the index, neither file written
  EXPECT_EQ(written(), std::vector<std::string>{});
  git("top", "checkout-index -f -u pkg/p.txt");  // the package's file written, as git does
  EXPECT_EQ(written(), (std::vector<std::string>{"pkg/p.txt"}));
  EXPECT_EQ(unapplied(before), (std::vector<std::string>{"top.txt"}));
}

}  // namespace
