// pisandbox::shell — which files a command would write, remove or re-permission,
// read from its words (nothing is looked up on disk). Used by the `access-persistence` and
// `security-control-tampering` hard-deny rules. Used only by the hard-deny rules.
#pragma once

#include <string>
#include <vector>

#include "shell/command_view.hpp"

namespace pisandbox::shell {

/// How written_paths() treats the last operand of `cp`/`mv`/`install`/`ln`, which may be a
/// directory the sources are copied into.
enum class DirectoryGuess {
  Always,         ///< also count `<last>/<source name>` for every source
  WhenItLooksSo,  ///< only when `<last>` ends in `/` or is named `.ssh` or `sudoers.d`
};

/// Paths whose content the command writes, as written in the command (unresolved):
/// output redirections (`>`, `>>`, `>|`, `&>`), `tee`/`touch`/`truncate`/`mkdir`
/// operands, `cp`/`mv`/`install`/`ln` destinations (`-t DIR` too), `dd of=`, the files of
/// `sed -i`/`perl -i`, and the values of curl/wget/rsync options that name a file they
/// write (`curl -o`, `wget -O`).
[[nodiscard]] std::vector<std::string> written_paths(const CommandView& view, DirectoryGuess guess);

/// How far removing or changing a path reaches.
enum class Reach {
  PathAndBelow,       ///< the path itself (and, for a directory, what is below it)
  PathBelowAndAbove,  ///< also every protected path below an ancestor it names
};

/// The paths a command removes, renames or re-permissions, and how far that reaches.
struct ChangedPaths {
  std::vector<std::string> paths;
  Reach reach;
};

/// Operands of `rm -r`, `mv` (its sources), `chmod`, `chown`, `chgrp`, `chattr`,
/// `setfacl` reach PathBelowAndAbove (a directory goes, moves or opens up with its
/// contents); operands of a plain `rm`, `rmdir`, `unlink`, `shred` reach PathAndBelow (they
/// cannot remove a directory that still has contents). Empty for other programs.
[[nodiscard]] ChangedPaths removed_paths(const CommandView& view);

/// True for `rm -r`, `rm -R`, `rm --recursive` (also within `-rf`).
[[nodiscard]] bool is_recursive_rm(const CommandView& view);

}  // namespace pisandbox::shell
