// pisandbox::policy — the gitlinks (submodule entries) of a git index file (pure: no syscalls,
// no I/O).
//
// A sandboxed command may register a nested repository in a workspace repository's index as a
// gitlink (`git add sub`); the next host `git status` then recurses into it and runs its
// configuration's `core.fsmonitor`. After a command, the supervisor lists those entries to
// guard each nested repository's configuration. The index lives in the workspace, so its
// bytes are untrusted: this parser follows git's own reader (read-cache.c, create_from_disk)
// and bounds every length by the bytes there are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pisandbox::policy {

/// Longest path accepted in an index entry, in bytes; longer is an error.
inline constexpr std::size_t kMaxGitIndexPathBytes = 4096;

/// Most bytes the paths of one index's entries may hold together (64 MiB); more is an error.
/// Version 4 compresses each path against the one before it (gitformat-index(5)), so a
/// 64-byte entry can repeat a path of 4 KiB: without this bound the 64 MiB index the
/// supervisor reads after a command (docs/security.md, "Repositories around the workspace")
/// would unfold into 4 GiB of paths, each copy of them as many again.
inline constexpr std::size_t kMaxGitIndexNamesBytes = std::size_t{64} << 20;

/// The stat data git compares a file with (gitformat-index(5): each field the low 32 bits of
/// lstat(2)'s, as git stores them).
struct GitStat {
  std::uint32_t mtime_seconds = 0;
  std::uint32_t mtime_nanoseconds = 0;
  std::uint32_t ino = 0;
  std::uint32_t size = 0;  ///< bytes, truncated to 32 bits

  friend bool operator==(const GitStat&, const GitStat&) = default;
};

/// One entry of a git index (gitformat-index(5)): the path (relative to the worktree root,
/// `/`-separated), the mode (0100644, 0100755, 0120000, 0160000), the object name (raw bytes,
/// 20 or 32), the merge stage (0-3), the skip-worktree flag, and the stat data git recorded.
struct GitIndexEntry {
  std::string path;
  std::uint32_t mode = 0;
  std::string oid;
  unsigned stage = 0;
  bool skip_worktree = false;
  GitStat stat;

  friend bool operator==(const GitIndexEntry&, const GitIndexEntry&) = default;
};

/// Every entry of a git index file, in index order; the format, the bounds and the errors are
/// index_gitlinks()'s (below), which is this list's gitlinks.
[[nodiscard]] std::expected<std::vector<GitIndexEntry>, std::string> index_entries(
    std::string_view bytes, std::size_t hash_bytes = 20);

/// Whether the entries of an index file are all of its content (gitformat-index(5)).
struct IndexExtent {
  /// Why they are not, or nullopt: the entries cannot be read (`unreadable (<index_entries()'s
  /// error>)`, but that an entry may have an empty name, as a split index's do); a
  /// split index, whose `link` extension names a shared index holding the base entries
  /// ("Split index"); a sparse index, whose `sdir` entries stand for directories ("Sparse
  /// Directory Entries"); another mandatory extension (a signature not starting with 'A' to
  /// 'Z', which git refuses to read when it does not know it); or extensions that run past the
  /// trailing checksum.
  std::optional<std::string> incomplete;
  /// The file in the git directory the `link` extension names (`sharedindex.<hex>`), or empty.
  std::string shared_index;
};

/// The extent of the index `bytes` with object names of `hash_bytes` (20 or 32). Pure; never
/// throws (but std::bad_alloc); linear in the size of `bytes`.
[[nodiscard]] IndexExtent index_extent(std::string_view bytes, std::size_t hash_bytes = 20);

/// Every entry of the split index `bytes` with those of its shared index `shared` merged in,
/// in index order, as git reads them (gitformat-index(5), "Split index"; git's split-index.c
/// merge_base_index()): the `link` extension of `bytes` holds the shared index's object name,
/// then two EWAH bitmaps (git's ewah/ewah_io.c: a 32-bit bit count, a 32-bit count of 64-bit
/// words, the words, a 32-bit position of the last marker word; each marker word holds its
/// running bit in bit 0, a 32-bit running length in words above it and a 31-bit count of
/// literal words after it, all big-endian). The i-th set position of the replace bitmap names
/// the shared entry the i-th entry of `bytes` replaces (keeping the shared entry's name: the
/// replacing one has none), the delete bitmap the shared entries removed; the entries of
/// `bytes` after the replacing ones are added in order (one with the same name and stage
/// replaces it; a stage-0 entry removes the other stages of its name). Without bitmaps (a link
/// holding the name only) nothing is replaced or deleted.
///
/// Errors (text): either index unreadable (index_entries()'s errors, but that `bytes` may hold
/// empty names), `bytes` without a `link` extension or with another extension whose entries
/// are not whole (index_extent()), a `shared` that is itself incomplete or whose trailing
/// checksum is not the object name the link names (git checks the same), a bitmap that runs
/// past the extension or leaves bytes after it, a marker word naming more literal words than
/// the bitmap holds, a position at or past the number of shared entries, more replacements
/// than entries, a replacing entry with a name, an added entry without one.
///
/// Pure; never throws (but std::bad_alloc); O(n log n) in the entries, and never iterates a
/// run of set bits past the shared index's entry count.
[[nodiscard]] std::expected<std::vector<GitIndexEntry>, std::string> split_index_entries(
    std::string_view bytes, std::string_view shared, std::size_t hash_bytes = 20);

/// The paths outside the directory `inside` (relative to the worktree root, no trailing `/`)
/// whose working-tree file git meant to change between the index `before` and the index
/// `after` and did not (docs/security.md, "Repositories around the workspace"): an entry
/// (stage, mode, object) new in `after` whose file's stat data (`worktree_stat`: nullopt for
/// a missing file) is not what the entry records (git records it when it writes or reads the
/// file), or a path gone from `after` whose file is still there. Entries with skip-worktree
/// and gitlinks are left out (git writes neither). Sorted, without duplicates. Pure but for
/// `worktree_stat`.
[[nodiscard]] std::vector<std::string> unapplied_paths(
    const std::vector<GitIndexEntry>& before, const std::vector<GitIndexEntry>& after,
    std::string_view inside,
    const std::function<std::optional<GitStat>(const std::string&)>& worktree_stat);

/// The paths inside the directory `inside` whose working-tree file git wrote for the index
/// `after` (an entry new since `before` whose file's stat data is what the entry records) or
/// removed (a path gone from `after` whose file is gone): what a checkout that failed on a file
/// outside `inside` had already changed in it. Same conventions as unapplied_paths().
[[nodiscard]] std::vector<std::string> written_paths(
    const std::vector<GitIndexEntry>& before, const std::vector<GitIndexEntry>& after,
    std::string_view inside,
    const std::function<std::optional<GitStat>(const std::string&)>& worktree_stat);

/// The paths (relative to the worktree root, as stored: `/`-separated, no NUL) of the gitlink
/// entries (mode 0160000 under git's S_IFMT mask, as S_ISGITLINK tests it) of a git index file,
/// in index order (a conflicted gitlink appears once per stage); or an error text when the bytes
/// are not an index git would read.
///
/// gitformat-index(5): header "DIRC", version 2, 3 or 4 (big-endian), entry count; entries of
/// 40 bytes of stat data, the object name (`hash_bytes`: 20 for SHA-1, 32 for SHA-256; any
/// other value is an error), 16-bit flags (name length in the low 12 bits; 0xFFF means "at
/// least", the path then ends at its NUL), an extra 16-bit extended-flags word when flag 0x4000
/// is set (the format reserves it for version 3+; git's reader reads it in any version, and so
/// does this one; bits other than intent-to-add and skip-worktree are an error, git dies on
/// them), then the path: NUL-terminated and padded with NULs to a multiple of 8 bytes of the
/// whole entry in versions 2-3; in version 4 prefix-compressed (git's varint, varint.c
/// decode_varint, of bytes to strip from the previous path, ignored for the first entry as git
/// does, then the NUL-terminated rest, no padding).
///
/// Errors: fewer bytes than a header and a checksum, a bad signature or version, an entry that
/// runs past the end of `bytes` (also when the count is larger than the entries there are), a
/// path that is empty, longer than kMaxGitIndexPathBytes, holds a NUL within its stated
/// length or lacks its terminating NUL, a version-4 strip longer than the previous path, a
/// version-4 name length shorter than the kept prefix, or paths holding more than
/// kMaxGitIndexNamesBytes together. Extensions and the trailing checksum after the entries are
/// ignored (never verified, as git by default).
///
/// Never throws (but std::bad_alloc); linear in the size of `bytes` (the paths it returns hold
/// at most kMaxGitIndexNamesBytes); never allocates from the entry count.
[[nodiscard]] std::expected<std::vector<std::string>, std::string> index_gitlinks(
    std::string_view bytes, std::size_t hash_bytes = 20);

}  // namespace pisandbox::policy
