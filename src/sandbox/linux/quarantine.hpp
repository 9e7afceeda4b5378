// pisandbox::sandbox::linux_ — the quarantine: where the guard moves what a command made at a
// guarded name, and the attempted version of a git configuration it undid (docs/security.md,
// "The guard").
//
// Layout, one directory per entry:
//   <root>/<id>/record.json  {"original": "/ws/.vscode", "why": "...", "time": "<UTC>",
//                             "name": ".vscode"}
//   <root>/<id>/<name>       the moved file, directory or symlink, under its base name
// where id is `<UTC yyyymmddThhmmssZ>-<8 hex digits>` (sortable by time; the digits from
// getrandom(2)). The root is made 0700 and must be owned by the caller; it lies outside every
// workspace (by default in the home, hidden from every sandbox that hides the home).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/unique_fd.hpp"

namespace pisandbox::sandbox::linux_ {

/// The default quarantine of a user whose home is `home`:
/// `<home>/.local/state/pi-sandbox/quarantine` (the XDG state directory's default); for no
/// home ("" or "/"), `/var/tmp/pi-sandbox-quarantine-<uid>`.
std::filesystem::path default_quarantine_root(const std::filesystem::path& home);

/// A quarantine root, made on first use: nothing is created on the host until something is
/// quarantined (docs/security.md, "Nothing left behind").
///   root: O_PATH|O_DIRECTORY|O_CLOEXEC descriptor of the root directory, once it exists;
///   path: the root's path as given (for messages and records);
///   anchor: while the root does not exist, its deepest existing ancestor (O_PATH|O_DIRECTORY);
///   missing: the components from the anchor down to the root, made 0700 on first use.
struct Quarantine {
  core::UniqueFd root;
  std::filesystem::path path;
  core::UniqueFd anchor = {};
  std::vector<std::string> missing = {};
};

/// Finds the quarantine root (nothing is made yet). Refuses a root that exists but is not a
/// directory owned by the caller's effective uid. Errors name the failing call and path.
core::Result<Quarantine> open_quarantine(const std::filesystem::path& root);

/// Makes the root if it does not exist yet (mode 0700, missing parents too) and checks its
/// owner. Errors name the failing call and path (`mkdirat("/h/.local/state"): EACCES
/// (Permission denied)`).
core::Result<void> ensure_quarantine_root(Quarantine& quarantine);

/// The descriptor pid 1 inherits: the root's, or the anchor's while the root is missing.
int quarantine_descriptor(const Quarantine& quarantine);

/// One quarantined item.
///   id: the entry's directory name; original: the host path it was moved from (or the file
///   whose attempted content it is); why: the reason the guard gave; time: UTC, ISO 8601
///   (`2026-12-01T02:05:01Z`); stored: `<root>/<id>/<name>`.
struct QuarantineEntry {
  std::string id;
  std::filesystem::path original;
  std::string why;
  std::string time;
  std::filesystem::path stored;
  /// The device and inode of the directory it was moved from (0: not recorded): a restore
  /// refuses another directory at that path.
  std::uint64_t parent_dev = 0;
  std::uint64_t parent_ino = 0;
};

/// What a copy into the quarantine across file systems takes at most per item: 64 MiB of data
/// (holes of sparse files are kept as holes and cost nothing) and 1000 entries (files,
/// directories and symlinks). Past either the copy stops and the item stays in the workspace
/// for the guard to defuse in place (docs/security.md, "The guard").
inline constexpr std::uint64_t kMaxCopyDataBytes = std::uint64_t{64} << 20;
inline constexpr std::uint64_t kMaxCopyEntries = 1000;

/// Moves the entry `name` of the directory `parent_fd` into a new quarantine entry (making
/// the root on first use): one renameat2(2) when both lie on the same mount, otherwise a copy
/// (files, directories and symlinks, never following a symlink; at most 64 levels deep; data
/// extents only, lseek(2) SEEK_DATA/SEEK_HOLE, so a sparse file stays sparse; at most
/// kMaxCopyDataBytes and kMaxCopyEntries) followed by the removal of the original. Errors:
/// ENOENT when `name` vanished meanwhile (nothing is left behind then); EFBIG past the copy's
/// bounds; or the failing call (`write("big"): ENOSPC (No space left on device)`). On every error
/// the item is left where it was (nothing half-copied stays in the quarantine).
core::Result<QuarantineEntry> quarantine_move(Quarantine& quarantine, int parent_fd,
                                              const std::string& name,
                                              const std::filesystem::path& original,
                                              std::string_view why);

/// Whether a quarantine_move() error says the quarantine refuses this item, rather than that the
/// quarantine or the machine failed: EFBIG (past the copy's bounds), EACCES or EPERM (a
/// directory without write permission cannot change parents, rename(2); a quarantine the user
/// cannot write). The guard then renames the item in place and the command goes on; any other
/// error (ENOSPC, EDQUOT, EMFILE, EIO, ...) stops the command (docs/security.md, "The guard").
bool quarantine_refused(const core::Error& error);

/// Renames the entry `name` of `parent_fd` within its directory to
/// `<name>.pi-sandbox-defused-<8 hex digits>`, a name no host program reads: how the guard makes
/// an item inert when the quarantine cannot take it. A rename within one directory: no data is
/// copied (a directory with no room left for the longer name can still refuse it, ENOSPC).
/// Returns the new name; errors name the rename(2) and errno (ENOENT when `name` is gone).
core::Result<std::string> defuse_in_place(int parent_fd, const std::string& name);

/// Stores `bytes` as a new entry: the attempted content of `original`, which the guard put back
/// as it was.
core::Result<QuarantineEntry> quarantine_bytes(Quarantine& quarantine, std::string_view bytes,
                                               const std::filesystem::path& original,
                                               std::string_view why);

/// Every entry under `root`, oldest first (an entry without a readable record is listed with
/// an empty original). A missing root lists nothing.
std::vector<QuarantineEntry> list_quarantine(const std::filesystem::path& root);

/// Moves the entry `id` back to its original path and removes the entry. Fails, changing
/// nothing, when the id is unknown, when something exists at the original path (move it away
/// first), when the original's parent directory is gone, or when it is not the directory the
/// entry came from (replaced, e.g. by a symlink to elsewhere).
core::Result<QuarantineEntry> restore_quarantined(const std::filesystem::path& root,
                                                  std::string_view id);

/// The names in the directory `dir_fd` ("." and ".." left out; an O_PATH descriptor works too),
/// in readdir order; nullopt when it cannot be read.
std::optional<std::vector<std::string>> entry_names(int dir_fd);

/// The line printed after a command for one quarantined item, e.g.
/// `moved /ws/.vscode to the quarantine (a guarded name: dangerous-file);
/// restore with: pi-sandbox quarantine restore 20261201T020501Z-1a2b3c4d`.
std::string describe_quarantined(const QuarantineEntry& entry);

}  // namespace pisandbox::sandbox::linux_
