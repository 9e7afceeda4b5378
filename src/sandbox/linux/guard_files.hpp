// pisandbox::sandbox::linux_::guard_files — the file helpers that guard.cpp and
// guard_discovery.cpp share: reading a guarded file, replacing it atomically, making it inert
// in place when no new file can be written (docs/security.md, "The guard"). Internal to the
// guard: nothing outside those two files includes it.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "policy/git_config_guard.hpp"
#include "sandbox/linux/guard.hpp"

namespace pisandbox::sandbox::linux_::guard_files {

/// A git configuration larger than this is not read: it is undone as a whole.
constexpr std::size_t kMaxConfigBytes = std::size_t{4} << 20;

/// Whether `err` says the process lacks descriptors or memory for now, not that the path is
/// missing or refused: the check that met it was not made.
bool out_of_resources(int err);

/// The content of the regular file `name` in `dir`; nullopt when it is missing; `symlink` set
/// when a symlink (or anything but a regular file) stands there; `too_large` past the bound.
struct FileRead {
  std::optional<std::string> content;
  bool not_regular = false;
  bool too_large = false;
  mode_t mode = 0644;
  dev_t dev = 0;
  ino_t inode = 0;
};

/// Reads the file `name` of `dir` without following a symlink, up to `max_bytes` (FileRead says
/// what stood there); no error is returned: an open(2) that fails leaves `content` unset.
/// `shown`: the path for a message, when the open fails for lack of descriptors (GuardOpener).
FileRead read_at(GuardOpener& opener, int dir, const std::string& name, const fs::path& shown,
                 std::size_t max_bytes = kMaxConfigBytes);

/// Writes `bytes` to a new file `.pi-sandbox-restore-<hex>` in `dir` (`shown`: the path it
/// replaces, for a message); returns its name. Errors name the call and errno (a full disk:
/// `write(".../.pi-sandbox-restore-1a2b3c4d"): ENOSPC`); nothing is left behind then.
core::Result<std::string> write_new(GuardOpener& opener, int dir, const fs::path& shown,
                                    const std::string& bytes, mode_t mode);

/// Replaces `name` in `dir` (`shown`, for a message) with `bytes` atomically (a new file renamed
/// over it). Errors: write_new()'s, or the rename(2)'s.
core::Result<void> replace_at(GuardOpener& opener, int dir, const std::string& name,
                              const fs::path& shown, const std::string& bytes, mode_t mode);

/// The outcome of exchange_if() that is not a failure.
enum class Swap { Done, Changed };

/// Puts `bytes` at `name` in `dir` only if the file there is still (`dev`, `ino`): a new file
/// is exchanged with it atomically (renameat2 RENAME_EXCHANGE), and when what came out is not
/// that file (a writer replaced it meanwhile), the exchange is undone: Changed, and the caller
/// reads again. Never loses the newer file to a restore of an older one. Errors: write_new()'s,
/// or the rename(2)'s.
core::Result<Swap> exchange_if(GuardOpener& opener, int dir, const std::string& name,
                               const fs::path& shown, const std::string& bytes, mode_t mode,
                               dev_t dev, ino_t ino);

/// Makes the file `name` of `dir` inert when it could not be replaced by a new file (a full
/// disk, no descriptors), in ways that need no new space, in this order:
///   - rewritten in place to `content` through its own descriptor (pwrite(2), ftruncate(2)),
///     when `content` fits in the blocks the file holds (st_blocks) and it is still the file
///     read (`dev`, `ino`; 0: any regular file);
///   - truncated to zero length (git reads an empty configuration as no keys at all);
///   - renamed in place (defuse_in_place()), for what is not a regular file or cannot be opened;
///     nothing to do when nothing is there any more.
/// Returns what was done, for the line (`it was rewritten in place without it`), or the error
/// of the last way tried when none worked.
core::Result<std::string> make_inert(int dir, const std::string& name,
                                     const std::optional<std::string>& content, dev_t dev,
                                     ino_t ino);

/// The keys of `findings`, each once, in the order found, joined by `, ` (for a line).
std::string key_list(const std::vector<policy::GitConfigFinding>& findings);

}  // namespace pisandbox::sandbox::linux_::guard_files
