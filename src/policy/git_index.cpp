#include "policy/git_index.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

namespace pisandbox::policy {

namespace {

// Offsets and masks of gitformat-index(5), named as read-cache.c and read-cache-ll.h name them.
constexpr std::size_t kHeaderBytes = 12;          // "DIRC", version, entry count
constexpr std::size_t kStatBytes = 40;            // ctime, mtime, dev, ino, mode, uid, gid, size
constexpr std::size_t kMtimeOffset = 8;           // mtime seconds, then nanoseconds
constexpr std::size_t kInoOffset = 20;            // the inode number's offset in the stat data
constexpr std::size_t kModeOffset = 24;           // the mode's offset in the stat data
constexpr std::size_t kSizeOffset = 36;           // the size's offset in the stat data
constexpr std::uint16_t kStageMask = 0x3000;      // CE_STAGEMASK
constexpr std::uint16_t kSkipWorktree = 0x4000;   // CE_SKIP_WORKTREE >> 16
constexpr std::uint16_t kNameMask = 0x0FFF;       // CE_NAMEMASK
constexpr std::uint16_t kExtended = 0x4000;       // CE_EXTENDED
constexpr std::uint16_t kKnownExtended = 0x6000;  // CE_EXTENDED_FLAGS >> 16
constexpr std::uint32_t kTypeMask = 0170000;      // S_IFMT
constexpr std::uint32_t kGitlink = 0160000;       // S_IFGITLINK

std::uint32_t be32(std::string_view b, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}

std::uint16_t be16(std::string_view b, std::size_t at) {
  return static_cast<std::uint16_t>((static_cast<unsigned char>(b[at]) << 8) |
                                    static_cast<unsigned char>(b[at + 1]));
}

/// A decoded varint and the bytes it took (0 when git's decoder reports an overflow: it then
/// returns 0 and leaves its cursor where it was, so the name starts at the varint's bytes).
struct Varint {
  std::uint64_t value = 0;
  std::size_t bytes = 0;
};

/// git's varint.c decode_varint (not LEB128: each continuation adds 1 before shifting), bounded
/// by `b`; nullopt when the varint runs past its end.
std::optional<Varint> decode_varint(std::string_view b) {
  std::size_t at = 0;
  if (b.empty()) return std::nullopt;
  auto c = static_cast<unsigned char>(b[at++]);
  std::uint64_t value = c & 127u;
  while ((c & 128u) != 0) {
    value += 1;
    if (value == 0 || (value >> 57) != 0) return Varint{};  // MSB(val, 7): overflow
    if (at >= b.size()) return std::nullopt;
    c = static_cast<unsigned char>(b[at++]);
    value = (value << 7) + (c & 127u);
  }
  return Varint{value, at};
}

/// The length of the NUL-terminated text at the start of `b`, looking at most `cap` + 1 bytes.
std::expected<std::size_t, std::string> terminated_length(std::string_view b, std::size_t cap) {
  const auto window = b.substr(0, cap + 1);
  const auto nul = window.find('\0');
  if (nul != std::string_view::npos) return nul;
  if (window.size() > cap) return std::unexpected("path longer than 4096 bytes");
  return std::unexpected("path runs past the end of the index");
}

/// The `len` bytes at the start of `b`, which must hold no NUL and be followed by one.
std::expected<std::string_view, std::string> stated_name(std::string_view b, std::size_t len) {
  if (b.size() <= len) return std::unexpected("path runs past the end of the index");
  const auto name = b.substr(0, len);
  if (name.find('\0') != std::string_view::npos) return std::unexpected("path holds a NUL");
  if (b[len] != '\0') return std::unexpected("path lacks its terminating NUL");
  return name;
}

/// One entry read: its path is the reader's `path`; `bytes` the entry's size on disk.
struct Entry {
  GitIndexEntry fields;
  std::size_t bytes = 0;
};

/// Reads entries one after the other, keeping the previous path (version 4 strips from it).
class EntryReader {
 public:
  /// `empty_names`: a split index stores a replaced entry without its name (the shared
  /// index's entry has it).
  EntryReader(std::uint32_t version, std::size_t hash_bytes, bool empty_names)
      : version_(version), hash_bytes_(hash_bytes), empty_names_(empty_names) {}

  /// The entry at the start of `b` (the rest of the index); `first` for the first entry.
  std::expected<Entry, std::string> read(std::string_view b, bool first) {
    const std::size_t flags_at = kStatBytes + hash_bytes_;
    if (b.size() < flags_at + 2) return std::unexpected("entry runs past the end of the index");
    const std::uint16_t flags = be16(b, flags_at);
    std::size_t name_at = flags_at + 2;
    bool skip_worktree = false;
    if ((flags & kExtended) != 0) {
      if (b.size() < name_at + 2) return std::unexpected("entry runs past the end of the index");
      const std::uint16_t extended = be16(b, name_at);
      if ((extended & ~kKnownExtended) != 0) return std::unexpected("unknown extended flags");
      skip_worktree = (extended & kSkipWorktree) != 0;
      name_at += 2;
    }
    auto size = version_ == 4 ? read_compressed(b, name_at, flags & kNameMask, first)
                              : read_padded(b, name_at, flags & kNameMask);
    if (!size) return std::unexpected(std::move(size.error()));
    if (path_.empty() && !empty_names_) return std::unexpected("empty path");
    GitIndexEntry e{path_,
                    be32(b, kModeOffset),
                    std::string(b.substr(kStatBytes, hash_bytes_)),
                    static_cast<unsigned>((flags & kStageMask) >> 12),
                    skip_worktree,
                    {be32(b, kMtimeOffset), be32(b, kMtimeOffset + 4), be32(b, kInoOffset),
                     be32(b, kSizeOffset)}};
    return Entry{std::move(e), *size};
  }

  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  /// Versions 2-3: the path, then NULs up to a multiple of 8 bytes of the entry (at least one).
  std::expected<std::size_t, std::string> read_padded(std::string_view b, std::size_t name_at,
                                                      std::size_t len) {
    const auto rest = b.substr(name_at);
    if (len == kNameMask) {
      auto found = terminated_length(rest, kMaxGitIndexPathBytes);
      if (!found) return std::unexpected(std::move(found.error()));
      len = *found;
    }
    auto name = stated_name(rest, len);
    if (!name) return std::unexpected(std::move(name.error()));
    path_.assign(*name);
    const std::size_t size = (name_at + len + 8) & ~std::size_t{7};  // align_flex_name
    if (size > b.size()) return std::unexpected("entry padding runs past the end of the index");
    return size;
  }

  /// Version 4: a varint of bytes to strip from the previous path, then the NUL-terminated rest.
  std::expected<std::size_t, std::string> read_compressed(std::string_view b, std::size_t name_at,
                                                          std::size_t len, bool first) {
    const auto strip = decode_varint(b.substr(name_at));
    if (!strip) return std::unexpected("prefix length runs past the end of the index");
    // git ignores the strip of a block's first entry (read-cache.c create_from_disk).
    if (!first && strip->value > path_.size())
      return std::unexpected("prefix strip longer than the previous path");
    const std::size_t keep = first ? 0 : path_.size() - strip->value;
    const auto rest = b.substr(name_at + strip->bytes);
    std::size_t suffix = 0;
    if (len == kNameMask) {
      auto found = terminated_length(rest, kMaxGitIndexPathBytes - keep);
      if (!found) return std::unexpected(std::move(found.error()));
      suffix = *found;
    } else {
      if (len < keep) return std::unexpected("name length shorter than the kept prefix");
      suffix = len - keep;
    }
    auto name = stated_name(rest, suffix);
    if (!name) return std::unexpected(std::move(name.error()));
    path_.resize(keep);
    path_.append(*name);
    return name_at + strip->bytes + suffix + 1;
  }

  std::uint32_t version_;
  std::size_t hash_bytes_;
  bool empty_names_;
  std::string path_;
};

std::string entry_error(std::uint32_t index, std::size_t offset, const std::string& what) {
  return "index entry " + std::to_string(index) + " at offset " + std::to_string(offset) + ": " +
         what;
}

/// The entries of an index and the offset where its extensions start.
struct Entries {
  std::vector<GitIndexEntry> entries;
  std::size_t end = 0;
};

std::expected<Entries, std::string> read_entries(std::string_view bytes, std::size_t hash_bytes,
                                                 bool empty_names) {
  if (hash_bytes != 20 && hash_bytes != 32)
    return std::unexpected("hash size " + std::to_string(hash_bytes) + " (20 or 32 bytes)");
  // read-cache.c do_read_index: "index file smaller than expected".
  if (bytes.size() < kHeaderBytes + hash_bytes)
    return std::unexpected("index of " + std::to_string(bytes.size()) +
                           " bytes, smaller than a header and a checksum");
  if (bytes.substr(0, 4) != "DIRC") return std::unexpected("index signature is not DIRC");
  const std::uint32_t version = be32(bytes, 4);
  if (version < 2 || version > 4)
    return std::unexpected("index version " + std::to_string(version) + " (git reads 2 to 4)");
  const std::uint32_t count = be32(bytes, 8);
  // Every entry takes at least 40 bytes, so a count larger than the data fails at the end of
  // the bytes, after at most bytes.size() / 40 entries: the count is never used to allocate.
  EntryReader reader(version, hash_bytes, empty_names);
  std::vector<GitIndexEntry> entries;
  std::size_t offset = kHeaderBytes;
  // Version 4 repeats the previous path for the cost of two bytes: the paths, not the bytes,
  // bound the memory.
  std::size_t names = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    auto entry = reader.read(bytes.substr(offset), i == 0);
    if (!entry) return std::unexpected(entry_error(i, offset, entry.error()));
    names += entry->fields.path.size();
    if (names > kMaxGitIndexNamesBytes)
      return std::unexpected(entry_error(i, offset,
                                         "the paths up to it hold more than " +
                                             std::to_string(kMaxGitIndexNamesBytes >> 20) +
                                             " MiB"));
    entries.push_back(std::move(entry->fields));
    offset += entry->bytes;
  }
  return Entries{std::move(entries), offset};
}

std::string hex_of(std::string_view raw) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const char c : raw) {
    out += kDigits[static_cast<unsigned char>(c) >> 4];
    out += kDigits[static_cast<unsigned char>(c) & 15];
  }
  return out;
}

}  // namespace

std::expected<std::vector<GitIndexEntry>, std::string> index_entries(std::string_view bytes,
                                                                     std::size_t hash_bytes) {
  auto read = read_entries(bytes, hash_bytes, false);
  if (!read) return std::unexpected(std::move(read.error()));
  return std::move(read->entries);
}

IndexExtent index_extent(std::string_view bytes, std::size_t hash_bytes) {
  auto read = read_entries(bytes, hash_bytes, true);
  if (!read) return {"unreadable (" + read.error() + ")", {}};
  IndexExtent extent;
  // read-cache.c do_read_index: extensions follow the entries up to the trailing checksum, each
  // a 4-byte signature and a 32-bit size; one whose signature does not start with 'A'..'Z' is
  // mandatory (git dies when it does not know it).
  const std::size_t end = bytes.size() - hash_bytes;
  std::size_t at = read->end;
  while (at + 8 <= end) {
    const std::string_view signature = bytes.substr(at, 4);
    const std::uint32_t size = be32(bytes, at + 4);
    if (size > end - at - 8)
      return {
          "unreadable (extension `" + std::string(signature) + "` runs past the end of the index)",
          {}};
    const std::string_view data = bytes.substr(at + 8, size);
    if (signature == "link") {
      if (data.size() < hash_bytes) return {"extension `link` shorter than an object name", {}};
      extent.shared_index = "sharedindex." + hex_of(data.substr(0, hash_bytes));
      extent.incomplete = "a split index (the `link` extension, core.splitIndex)";
    } else if (signature == "sdir") {
      extent.incomplete = "a sparse index (the `sdir` extension, index.sparse)";
    } else if (signature[0] < 'A' || signature[0] > 'Z') {
      extent.incomplete = "the unknown mandatory extension `" + std::string(signature) + "`";
    }
    at += 8 + size;
  }
  if (at != end && !extent.incomplete)
    extent.incomplete = "unreadable (extensions end past the checksum)";
  // Names are left out only by a split index, whose `link` then says so.
  if (!extent.incomplete &&
      std::ranges::any_of(read->entries, [](const auto& e) { return e.path.empty(); }))
    extent.incomplete = "unreadable (index entry with an empty path)";
  return extent;
}

namespace {

/// git's EWAH bitmap (ewah/ewah_io.c ewah_read_mmap(), ewah/ewah_bitmap.c ewah_each_bit()) at
/// the start of `data`: its set positions, ascending, each below `limit`; `data` is advanced
/// past the bitmap.
std::expected<std::vector<std::size_t>, std::string> ewah_positions(std::string_view& data,
                                                                    std::size_t limit,
                                                                    const char* which) {
  const auto fail = [&](const std::string& what) {
    return std::unexpected(std::string("the link extension's ") + which + " bitmap " + what);
  };
  if (data.size() < 8) return fail("ends before its word count");
  const std::size_t words = be32(data, 4);
  if ((data.size() - 8) / 8 < words || data.size() - 8 - words * 8 < 4)
    return fail("runs past the end of the extension");
  const std::string_view buffer = data.substr(8, words * 8);
  data.remove_prefix(8 + words * 8 + 4);  // bit count, word count, words, last marker's position
  const auto word = [&](std::size_t i) {
    std::uint64_t v = 0;
    for (std::size_t b = 0; b < 8; ++b)
      v = (v << 8) | static_cast<unsigned char>(buffer[i * 8 + b]);
    return v;
  };
  std::vector<std::size_t> out;
  std::uint64_t pos = 0;
  const auto set = [&](std::uint64_t at) -> bool {
    if (at >= limit) return false;
    out.push_back(static_cast<std::size_t>(at));
    return true;
  };
  for (std::size_t at = 0; at < words;) {
    const std::uint64_t marker = word(at++);
    const std::uint64_t run = ((marker >> 1) & 0xFFFFFFFFu) * 64;
    const std::uint64_t literals = marker >> 33;
    if ((marker & 1) != 0) {
      for (std::uint64_t k = 0; k < run; ++k)
        if (!set(pos++)) return fail("names a position past the shared index's entries");
    } else {
      pos += run;
    }
    if (literals > words - at) return fail("names more literal words than it holds");
    for (std::uint64_t k = 0; k < literals; ++k, ++at) {
      const std::uint64_t bits = word(at);
      for (unsigned c = 0; c < 64; ++c, ++pos)
        if ((bits >> c & 1) != 0 && !set(pos))
          return fail("names a position past the shared index's entries");
    }
  }
  return out;
}

/// The data of the `link` extension of the index `bytes`, whose entries end at `end`, or why
/// its entries are not whole but for being split.
std::expected<std::string_view, std::string> link_data(std::string_view bytes, std::size_t end,
                                                       std::size_t hash_bytes) {
  std::optional<std::string_view> link;
  const std::size_t last = bytes.size() - hash_bytes;
  std::size_t at = end;
  while (at + 8 <= last) {
    const std::string_view signature = bytes.substr(at, 4);
    const std::uint32_t size = be32(bytes, at + 4);
    if (size > last - at - 8)
      return std::unexpected("extension `" + std::string(signature) + "` runs past the end");
    if (signature == "link")
      link = bytes.substr(at + 8, size);
    else if (signature[0] < 'A' || signature[0] > 'Z')
      return std::unexpected("the mandatory extension `" + std::string(signature) + "`");
    at += 8 + size;
  }
  if (at != last) return std::unexpected("extensions end past the checksum");
  if (!link) return std::unexpected("no `link` extension");
  if (link->size() < hash_bytes)
    return std::unexpected("extension `link` shorter than an object name");
  return *link;
}

}  // namespace

std::expected<std::vector<GitIndexEntry>, std::string> split_index_entries(std::string_view bytes,
                                                                           std::string_view shared,
                                                                           std::size_t hash_bytes) {
  auto split = read_entries(bytes, hash_bytes, true);
  if (!split) return std::unexpected("the split index: " + split.error());
  auto link = link_data(bytes, split->end, hash_bytes);
  if (!link) return std::unexpected("the split index: " + link.error());
  if (const auto extent = index_extent(shared, hash_bytes); extent.incomplete)
    return std::unexpected("the shared index: " + *extent.incomplete);
  auto base = index_entries(shared, hash_bytes);
  if (!base) return std::unexpected("the shared index: " + base.error());
  if (shared.substr(shared.size() - hash_bytes) != link->substr(0, hash_bytes))
    return std::unexpected("the shared index's checksum is not the object name its link names");
  std::string_view data = link->substr(hash_bytes);
  std::vector<std::size_t> deleted, replaced;
  if (!data.empty()) {
    auto d = ewah_positions(data, base->size(), "delete");
    if (!d) return std::unexpected(std::move(d.error()));
    auto r = ewah_positions(data, base->size(), "replace");
    if (!r) return std::unexpected(std::move(r.error()));
    if (!data.empty()) return std::unexpected("bytes after the link extension's bitmaps");
    deleted = std::move(*d);
    replaced = std::move(*r);
  }
  std::vector<GitIndexEntry>& entries = *base;
  if (replaced.size() > split->entries.size())
    return std::unexpected("more replacements than the split index has entries");
  for (std::size_t i = 0; i < replaced.size(); ++i) {
    GitIndexEntry& from = split->entries[i];
    if (!from.path.empty())
      return std::unexpected("split index entry " + std::to_string(i) + " replaces with a name");
    from.path = std::move(entries[replaced[i]].path);
    entries[replaced[i]] = std::move(from);
  }
  std::vector<bool> gone(entries.size());
  for (const std::size_t at : deleted) gone[at] = true;
  // By name (compared as bytes, as git's cache_name_stage_compare() does) and stage.
  std::map<std::pair<std::string, unsigned>, GitIndexEntry> merged;
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (!gone[i])
      merged.insert_or_assign({entries[i].path, entries[i].stage}, std::move(entries[i]));
  for (std::size_t i = replaced.size(); i < split->entries.size(); ++i) {
    GitIndexEntry& e = split->entries[i];
    if (e.path.empty())
      return std::unexpected("split index entry " + std::to_string(i) + " is added without a name");
    if (e.stage == 0)
      for (unsigned stage = 1; stage <= 3; ++stage) merged.erase({e.path, stage});
    std::pair<std::string, unsigned> key{e.path, e.stage};
    merged.insert_or_assign(std::move(key), std::move(e));
  }
  std::vector<GitIndexEntry> out;
  out.reserve(merged.size());
  for (auto& [key, e] : merged) out.push_back(std::move(e));
  return out;
}

std::expected<std::vector<std::string>, std::string> index_gitlinks(std::string_view bytes,
                                                                    std::size_t hash_bytes) {
  auto entries = index_entries(bytes, hash_bytes);
  if (!entries) return std::unexpected(std::move(entries.error()));
  std::vector<std::string> gitlinks;
  for (auto& e : *entries)
    if ((e.mode & kTypeMask) == kGitlink) gitlinks.push_back(std::move(e.path));
  return gitlinks;
}

namespace {

/// Which side of `inside` an entry must lie on to be compared.
enum class Side { Outside, Inside };

/// The paths on `side` of `inside` whose file git wrote (Written::Yes: the new entry's stat
/// data is the file's, or a gone path's file is gone) or did not (Written::No: it is not, or
/// the gone path's file is still there), between the indexes `before` and `after`.
enum class Written { No, Yes };

std::vector<std::string> changed_paths(
    const std::vector<GitIndexEntry>& before, const std::vector<GitIndexEntry>& after,
    std::string_view inside, Side side, Written written,
    const std::function<std::optional<GitStat>(const std::string&)>& worktree_stat) {
  const auto compared = [&](const GitIndexEntry& e) {
    const bool in =
        e.path.size() > inside.size() && e.path.starts_with(inside) && e.path[inside.size()] == '/';
    return !e.skip_worktree && (e.mode & kTypeMask) != kGitlink && in == (side == Side::Inside);
  };
  // What git means each compared path to hold: (path, stage, mode, object).
  using Key = std::tuple<std::string, unsigned, std::uint32_t, std::string>;
  const auto keys = [&](const std::vector<GitIndexEntry>& entries) {
    std::map<Key, const GitIndexEntry*> out;
    for (const auto& e : entries)
      if (compared(e)) out.emplace(Key{e.path, e.stage, e.mode, e.oid}, &e);
    return out;
  };
  const auto old_keys = keys(before), new_keys = keys(after);
  std::set<std::string> paths;
  // Recorded anew: git wrote the file (checkout, merge) or read it (add); either way the
  // index then holds the file's stat data (read-cache.c fill_stat_data). A nanosecond field
  // of 0 is a git built without nanoseconds.
  for (const auto& [key, e] : new_keys) {
    if (old_keys.contains(key)) continue;
    const auto st = worktree_stat(e->path);
    const bool same =
        st && st->mtime_seconds == e->stat.mtime_seconds &&
        (e->stat.mtime_nanoseconds == 0 || st->mtime_nanoseconds == e->stat.mtime_nanoseconds) &&
        st->ino == e->stat.ino && st->size == e->stat.size;
    if (same == (written == Written::Yes)) paths.insert(e->path);
  }
  // Gone from the index: git meant to remove the file.
  std::set<std::string_view> new_paths;
  for (const auto& [key, e] : new_keys) new_paths.insert(e->path);
  for (const auto& [key, e] : old_keys)
    if (!new_paths.contains(e->path) &&
        worktree_stat(e->path).has_value() == (written == Written::No))
      paths.insert(e->path);
  return {paths.begin(), paths.end()};
}

}  // namespace

std::vector<std::string> unapplied_paths(
    const std::vector<GitIndexEntry>& before, const std::vector<GitIndexEntry>& after,
    std::string_view inside,
    const std::function<std::optional<GitStat>(const std::string&)>& worktree_stat) {
  return changed_paths(before, after, inside, Side::Outside, Written::No, worktree_stat);
}

std::vector<std::string> written_paths(
    const std::vector<GitIndexEntry>& before, const std::vector<GitIndexEntry>& after,
    std::string_view inside,
    const std::function<std::optional<GitStat>(const std::string&)>& worktree_stat) {
  return changed_paths(before, after, inside, Side::Inside, Written::Yes, worktree_stat);
}

}  // namespace pisandbox::policy
