// pisandbox::policy — the local repositories a git command reads as its remote (git-clone(1),
// git-fetch(1), "GIT URLS": a path or `file://`), so that a failed fetch, pull or clone of one
// the sandbox hides gets a line naming it (docs/security.md, "Remotes in the hidden home"). Pure.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "policy/workspace_links.hpp"

namespace pisandbox::policy {

/// The local path of the git URL `url` (git-fetch(1), "GIT URLS"): `/path`, `file:///path`,
/// `~/path` (the home `home`), or a relative path against `cwd`; lexically normal. Empty for a
/// URL with a scheme (`https://`, `ssh://`), an scp-like `host:path`, `~user/`, or an empty one.
[[nodiscard]] fs::path local_remote_path(const std::string& url, const fs::path& home,
                                         const fs::path& cwd);

/// The local paths that the git commands among `words` (a command's words, or its shell text's
/// path_pieces()) read as their remote, each once, in order:
///   `git clone <url> [<dir>]`: every word after the subcommand that is not an option (the
///   directory, and an option's value, are paths too: harmless, the workspace is not hidden);
///   `git fetch`, `git pull`, `git push`, `git ls-remote`: a word that names a remote of
///   `remotes` (`remote.<name>.url` of the repository's configuration) gives its URL, a word
///   that is a local path (`/`, `~/`, `./`, `../`, `file://`) itself; with neither, the URL of
///   `origin` (git's default remote); `--all` every remote.
/// Options of git before the subcommand are skipped (`-C <dir>` and `-c <key=value>` with their
/// value). Paths as local_remote_path() gives them.
[[nodiscard]] std::vector<fs::path> local_remotes(const std::vector<std::string>& words,
                                                  const std::map<std::string, std::string>& remotes,
                                                  const fs::path& home, const fs::path& cwd);

/// The local paths that the `git push` commands among `words` push to, as local_remotes() gives
/// them for a push (the other subcommands left out).
[[nodiscard]] std::vector<fs::path> pushed_remotes(
    const std::vector<std::string>& words, const std::map<std::string, std::string>& remotes,
    const fs::path& home, const fs::path& cwd);

/// The line, without the `pi-sandbox: ` prefix, after a command whose git pushed to the local
/// remote `path`, which the sandbox shows copy-on-write or read-only (`access`,
/// outside_access() of it): `git pushed to <path>, which is <view> inside the sandbox: the push
/// is not on the host; to push there, add it to filesystem.additionalAllowWrite`
/// (docs/security.md, "Remotes in the hidden home").
[[nodiscard]] std::string unpushed_remote_line(const fs::path& path, const OutsideAccess& access);

/// The line, without the `pi-sandbox: ` prefix, for a failed command whose git read the local
/// remote `path`, which is hidden inside the sandbox (`access`, outside_access() of it): `git
/// reads the remote <path>, which is hidden inside the sandbox (<why>): see
/// docs/configuration.md`.
[[nodiscard]] std::string hidden_remote_line(const fs::path& path, const OutsideAccess& access);

}  // namespace pisandbox::policy
