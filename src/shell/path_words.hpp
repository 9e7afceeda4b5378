// pisandbox::shell — paths as they appear in shell words, compared lexically (nothing
// is looked up on disk: the command has not run yet). Used only by the hard-deny rules.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pisandbox::shell {

/// Where a path word starts: `/…`, the home directory (`~`, `~user`, `$HOME`, `${HOME}`,
/// `${HOME:…}`), or the working directory.
enum class PathAnchor { Root, Home, Relative };

/// A path word split into components, with `.` and empty components dropped and `..`
/// applied lexically.
///   ups: the `..` components that went above a Home or Relative anchor (at Root, `..`
///        stays at the root as the kernel does).
struct PathWord {
  PathAnchor anchor = PathAnchor::Relative;
  std::vector<std::string> parts;
  std::size_t ups = 0;
};

/// Splits a word such as `~/.ssh/../x`, `$HOME/a`, `/tmp//b/` or `build/./out`.
[[nodiscard]] PathWord parse_path_word(std::string_view word);

/// The components of the absolute path `word` names: Home words are expanded with `home`,
/// Relative ones resolved against `cwd`. nullopt when that needs a `home` or `cwd` that is
/// empty or not absolute.
[[nodiscard]] std::optional<std::vector<std::string>> absolute_parts(std::string_view word,
                                                                     std::string_view home,
                                                                     std::string_view cwd);

/// True for a last component that names every entry of its directory: made only of `*`,
/// `?` and `.`, with at least one `*` (`*`, `.*`, `.??*`, `*.*`).
[[nodiscard]] bool is_whole_directory_glob(std::string_view part);

/// True when `prefix` is `path` or one of its ancestors (component-wise).
[[nodiscard]] bool is_prefix(const std::vector<std::string>& prefix,
                             const std::vector<std::string>& path);

/// True when `text`, read as a path, names a credential file or directory (the list in
/// HardDenyRule::CredentialExfiltration). Looks at the last two components only, so
/// `/home/u/.ssh/id_rsa`, `~/.ssh/id_*` and `$HOME/.ssh/id_ed25519` all match.
[[nodiscard]] bool is_credential_path(std::string_view text);

/// The first credential path mentioned anywhere inside `text` (a word, a here-document):
/// the text is cut at characters that cannot be part of a plain path (spaces, quotes,
/// `$ ( ) = @ < > ; | & , { } :` and backquotes) and each piece is checked with
/// is_credential_path(). nullopt when there is none.
[[nodiscard]] std::optional<std::string> find_credential_mention(std::string_view text);

/// True when `parts` names `authorized_keys`/`authorized_keys2` (any directory),
/// `…/etc/sudoers` or anything under `…/etc/sudoers.d`.
[[nodiscard]] bool is_persistence_target(const std::vector<std::string>& parts);

}  // namespace pisandbox::shell
