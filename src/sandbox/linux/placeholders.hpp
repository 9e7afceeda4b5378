// pisandbox::sandbox::linux_ — host placeholders for protected names that do not exist yet.
//
// A mount needs a mount point, so a protected name that is missing in the workspace
// (`.bashrc`, `.env`, `.vscode`, ...) is created on the host as an empty directory, bound
// read-only onto itself inside the sandbox, and removed after the command (compatibility
// C26, C80; docs/security.md, "Nothing left behind"). A directory, even for names that are
// files, because git ignores empty directories: a placeholder never shows up in `git status`
// or `git add -A`, inside the sandbox or on the host. Writing to it fails with EISDIR or
// EROFS, replacing it with EBUSY.
//
// Placeholders are shared safely by concurrent sandboxes of one workspace: each is marked
// with the extended attribute `user.pi-sandbox.placeholder`, every sandbox that masks it
// holds a shared flock(2) on it, and it is removed only under an exclusive lock, only when
// still empty, still marked and still the same inode. A placeholder is created under a
// temporary name and renamed into place with RENAME_NOREPLACE, so no other sandbox ever sees
// an unmarked, unlocked placeholder.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "core/unique_fd.hpp"

namespace pisandbox::sandbox::linux_ {

/// The extended attribute that marks a placeholder.
inline constexpr const char* kPlaceholderXattr = "user.pi-sandbox.placeholder";

/// The extended attribute that marks a scaffold: a missing parent of a protected name
/// (`.claude` of `.claude/commands`), made as an ordinary directory so that it can be used,
/// and removed after the command only while it is still empty (docs/cases.md, C-15).
inline constexpr const char* kScaffoldXattr = "user.pi-sandbox.scaffold";

/// One placeholder this sandbox masks (created by it or adopted from another sandbox), or a
/// scaffold it made.
///   path: absolute host path; inode: its inode number;
///   lock: an O_RDONLY descriptor holding a shared flock (invalid in the supervisor).
///   scaffold: a scaffold (kScaffoldXattr), not a placeholder.
struct Placeholder {
  std::filesystem::path path;
  ino_t inode = 0;
  core::UniqueFd lock;
  bool scaffold = false;
};

/// What stands at a protected path once create_placeholder() returns.
///   placeholder: set when the entry is a placeholder this sandbox must help remove;
///     empty when a real entry appeared there meanwhile (it is masked, never removed).
struct PlaceholderSlot {
  std::optional<Placeholder> placeholder;
};

/// Creates the placeholder directory at `path` (its parent must exist), or adopts the one
/// another sandbox made. Errors name the failing call and path (e.g.
/// `mkdirat("/ws/.pi-sandbox-placeholder.12.0..env"): EACCES (Permission denied)`).
core::Result<PlaceholderSlot> create_placeholder(const std::filesystem::path& path);

/// If the existing entry at `path` is a marked placeholder, adopts it (shared lock) so that
/// its creator does not remove it while this sandbox masks it. Returns nullopt otherwise.
std::optional<Placeholder> adopt_if_placeholder(const std::filesystem::path& path);

/// Makes the scaffold directory `path` (its parent must exist), or holds the one another
/// sandbox made: a shared flock(2) on it for the length of the command, so that it is not
/// removed meanwhile (its remover needs an exclusive one). Returns nullopt when an ordinary
/// directory stands there (the user's: never held or removed). Errors name the failing call
/// and path.
core::Result<std::optional<Placeholder>> hold_or_make_scaffold(const std::filesystem::path& path);

/// Whether to unmount the placeholder's mask first (only inside the sandbox's own mount
/// namespace, where the mask is still in place).
enum class Unmask { No, Yes };

/// Removes `placeholder` from the host when no other sandbox holds it and it is still an
/// empty, marked directory with the same inode; otherwise leaves it. Never fails loudly: what
/// it cannot remove, the last sandbox that holds it will. Then the scaffolds above it that
/// are empty (whichever sandbox made them) are removed too.
void remove_placeholder(Placeholder& placeholder, Unmask unmask);

}  // namespace pisandbox::sandbox::linux_
