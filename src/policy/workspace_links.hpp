// pisandbox::policy — symbolic links in the workspace that lead out of it, and what the
// sandbox shows there (docs/security.md, "Links out of the workspace").
//
// A workspace made of links to repositories elsewhere (`backend -> ~/repos/backend`) meets the
// policy of the link's target, not the workspace's: a target in the hidden home is missing
// inside (ENOENT), one elsewhere on the host is read-only (EROFS). `pi-sandbox policy` lists
// such links, and `run` names the link when a failing command named it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "policy/sandbox_policy.hpp"

namespace pisandbox::policy {

/// What a command sees at a path outside the workspace.
enum class OutsideView {
  Hidden,       ///< nothing: the hidden home's empty layer, a private /tmp, a concealed file
  ReadOnly,     ///< the host's file, read-only
  CopyOnWrite,  ///< the host's directory, writes kept inside and thrown away
  Writable,     ///< the host's file, read-write (a writable root of the policy)
};

/// "hidden", "read-only", "copy-on-write" or "writable".
[[nodiscard]] std::string_view to_string(OutsideView view);

/// How `policy` shows `path` (absolute, real) and why, e.g. {Hidden, "in the hidden home"}.
/// Pure. The most specific writable root or re-exposed home entry that contains `path`
/// decides; else the hidden home, the private /tmp and /var/tmp hide it; else the host's
/// read-only view.
struct OutsideAccess {
  OutsideView view = OutsideView::ReadOnly;
  std::string why;
};
[[nodiscard]] OutsideAccess outside_access(const SandboxPolicy& policy, const fs::path& path);

/// One link of the workspace that leads out of it.
///   link: its absolute path; target: what it says (readlink(2)); resolved: where it leads
///   (symlinks resolved as far as they exist); missing: nothing exists there on the host.
struct OutwardLink {
  fs::path link;
  fs::path target;
  fs::path resolved;
  bool missing = false;
  OutsideAccess access;
};

/// The links found and the work done.
///   links: in directory order, depth first; entries_seen: directory entries read;
///   truncated: the scan stopped at max_entries.
struct LinkScan {
  std::vector<OutwardLink> links;
  std::size_t entries_seen = 0;
  bool truncated = false;
};

/// How deep find_outward_links() looks: the workspace's own entries (1) and those of its
/// directories (2), never into `.git` or `node_modules`, and never through a link.
inline constexpr int kLinkScanDepth = 2;
/// How many directory entries find_outward_links() reads at most.
inline constexpr std::size_t kLinkScanEntries = 20'000;

/// The symbolic links within kLinkScanDepth levels of `policy.workspace` whose target lies
/// outside it, each with outside_access() of where it leads. Unreadable directories are
/// skipped. Reads directories and links only (readdir(3), readlink(2), realpath(3)).
[[nodiscard]] LinkScan find_outward_links(const SandboxPolicy& policy);

/// The links of `links` that `words` name, each with the word that named it, in the order of
/// `links`, each once. A word names a link when, read as a path (relative ones against
/// `cwd`, lexically), it is the link or lies below it. `words` are the command's words, or
/// its shell text cut at characters that cannot be part of a plain path (blanks, quotes,
/// `$ ( ) = < > ; | & { }` and backquotes). Pure.
[[nodiscard]] std::vector<std::pair<const OutwardLink*, std::string>> links_named(
    const std::vector<OutwardLink>& links, const std::vector<std::string>& words,
    const fs::path& cwd);

/// The link `link` as `word` (one links_named() paired with it) spells it: the word less the
/// components below the link (`backend/README` gives `backend`, `./backend/` gives `./backend`),
/// so that the line names the link rather than a path through it. Where the word's own text
/// does not lead to the link (`backend/../backend/x`), the link relative to `cwd` for a relative
/// word, its absolute path for an absolute one. Pure.
[[nodiscard]] std::string link_as_spelled(const OutwardLink& link, std::string_view word,
                                          const fs::path& cwd);

/// The pieces of shell text `text` as links_named() reads them.
[[nodiscard]] std::vector<std::string> path_pieces(std::string_view text);

/// The line for a failed command that named `link` or a path below it, `spelled` as
/// link_as_spelled() gives it: `<link> is a link to <resolved>, which is <hidden|read-only> inside
/// the sandbox (<why>): see pi-sandbox policy`.
[[nodiscard]] std::string outward_link_line(const OutwardLink& link, std::string_view spelled);

}  // namespace pisandbox::policy
