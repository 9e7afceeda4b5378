#include "policy/workspace_links.hpp"

#include <system_error>

namespace pisandbox::policy {

namespace {

/// Whether `path` is `base` or below it, with the length of `base` (the more specific the
/// longer); -1 when it is not.
long match_length(const fs::path& path, const fs::path& base) {
  return is_within(path, base) ? static_cast<long>(base.native().size()) : -1;
}

OutsideView view_of(Access access) {
  switch (access) {
    case Access::ReadWrite:
      return OutsideView::Writable;
    case Access::CopyOnWrite:
      return OutsideView::CopyOnWrite;
    case Access::ReadOnly:
      break;
  }
  return OutsideView::ReadOnly;
}

/// Where `link` leads: realpath where it exists, else its target made absolute and normal.
void resolve(const fs::path& link, const fs::path& target, OutwardLink& out) {
  std::error_code error;
  const fs::path absolute =
      (target.is_absolute() ? target : link.parent_path() / target).lexically_normal();
  out.resolved = fs::weakly_canonical(absolute, error);
  if (error) out.resolved = absolute;
  out.missing = !fs::exists(out.resolved, error);
}

struct Walk {
  const SandboxPolicy& policy;
  LinkScan scan;

  void directory(const fs::path& dir, int depth) {
    std::error_code error;
    fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, error);
    for (; !error && it != fs::directory_iterator(); it.increment(error)) {
      if (scan.entries_seen++ >= kLinkScanEntries) {
        scan.truncated = true;
        return;
      }
      const fs::path& path = it->path();
      if (it->is_symlink(error)) {
        link(path);
        continue;
      }
      const std::string name = path.filename().string();
      if (depth < kLinkScanDepth && name != ".git" && name != "node_modules" &&
          it->is_directory(error))
        directory(path, depth + 1);
      if (scan.truncated) return;
    }
  }

  void link(const fs::path& path) {
    std::error_code error;
    const fs::path target = fs::read_symlink(path, error);
    if (error) return;
    OutwardLink out{path, target, {}, false, {}};
    resolve(path, target, out);
    if (is_within(out.resolved, policy.workspace)) return;
    out.access = outside_access(policy, out.resolved);
    scan.links.push_back(std::move(out));
  }
};

}  // namespace

std::string_view to_string(OutsideView view) {
  switch (view) {
    case OutsideView::Hidden:
      return "hidden";
    case OutsideView::CopyOnWrite:
      return "copy-on-write";
    case OutsideView::Writable:
      return "writable";
    case OutsideView::ReadOnly:
      break;
  }
  return "read-only";
}

OutsideAccess outside_access(const SandboxPolicy& policy, const fs::path& path) {
  for (const auto& concealed : policy.concealed)
    if (is_within(path, concealed)) return {OutsideView::Hidden, "a concealed credential"};
  long best = -1;
  OutsideAccess access;
  for (const auto* list : {&policy.writable, &policy.home_read_allowed})
    for (const auto& exposure : *list)
      if (const long length = match_length(path, exposure.path); length > best) {
        best = length;
        access = {view_of(exposure.access), exposure.why.empty() ? "re-exposed" : exposure.why};
      }
  if (best >= 0) return access;
  if (policy.hide_home && is_within(path, policy.home))
    return {OutsideView::Hidden,
            "in the hidden home; filesystem.additionalAllowRead or additionalAllowWrite "
            "shows it"};
  if (policy.private_tmp && (is_within(path, "/tmp") || is_within(path, "/var/tmp")))
    return {OutsideView::Hidden, "in /tmp or /var/tmp, private to each command"};
  return {OutsideView::ReadOnly,
          "the host outside the workspace is read-only; filesystem.additionalAllowWrite makes "
          "it writable"};
}

LinkScan find_outward_links(const SandboxPolicy& policy) {
  Walk walk{policy, {}};
  walk.directory(policy.workspace, 1);
  return std::move(walk.scan);
}

std::vector<std::string> path_pieces(std::string_view text) {
  std::vector<std::string> pieces;
  std::string piece;
  for (const char c : text) {
    if (std::string_view(" \t\n\"'`$()=<>;|&{}").find(c) == std::string_view::npos) {
      piece += c;
      continue;
    }
    if (!piece.empty()) pieces.push_back(std::move(piece));
    piece.clear();
  }
  if (!piece.empty()) pieces.push_back(std::move(piece));
  return pieces;
}

std::vector<std::pair<const OutwardLink*, std::string>> links_named(
    const std::vector<OutwardLink>& links, const std::vector<std::string>& words,
    const fs::path& cwd) {
  std::vector<std::pair<const OutwardLink*, std::string>> named;
  for (const auto& link : links)
    for (const auto& word : words) {
      if (word.empty()) continue;
      const fs::path path = fs::path(word).is_absolute() ? fs::path(word) : cwd / word;
      fs::path normal = path.lexically_normal();
      if (!normal.has_filename() && normal != normal.root_path()) normal = normal.parent_path();
      if (!is_within(normal, link.link)) continue;
      named.emplace_back(&link, word);
      break;
    }
  return named;
}

namespace {

/// `path` made absolute against `cwd` and lexically normal, without a trailing separator.
fs::path normal_against(const fs::path& path, const fs::path& cwd) {
  fs::path normal = (path.is_absolute() ? path : cwd / path).lexically_normal();
  if (!normal.has_filename() && normal != normal.root_path()) normal = normal.parent_path();
  return normal;
}

/// `text` less its trailing `/`, keeping a lone root.
std::string_view without_trailing_slashes(std::string_view text) {
  while (text.size() > 1 && text.back() == '/') text.remove_suffix(1);
  return text;
}

/// Whether `text` is a plain spelling: `.` and `..` only in a leading run (`../backend`, not
/// `backend/../backend`).
bool plain_spelling(std::string_view text) {
  bool leading = true;
  for (const auto& part : fs::path(std::string(text)).relative_path()) {
    const bool dots = part == "." || part == "..";
    if (dots && !leading) return false;
    leading = leading && dots;
  }
  return true;
}

}  // namespace

std::string link_as_spelled(const OutwardLink& link, std::string_view word, const fs::path& cwd) {
  const fs::path below =
      normal_against(fs::path(std::string(word)), cwd).lexically_relative(link.link);
  std::string_view spelled = without_trailing_slashes(word);
  for (const auto& part : below) {
    if (part == "." || part.empty()) continue;
    const std::size_t slash = spelled.rfind('/');
    spelled = slash == std::string_view::npos ? std::string_view() : spelled.substr(0, slash);
    spelled = without_trailing_slashes(spelled);
  }
  if (!spelled.empty() && plain_spelling(spelled) &&
      normal_against(fs::path(std::string(spelled)), cwd) == link.link)
    return std::string(spelled);
  if (fs::path(std::string(word)).is_absolute()) return link.link.string();
  return link.link.lexically_relative(cwd).string();
}

std::string outward_link_line(const OutwardLink& link, std::string_view spelled) {
  return std::string(spelled) + " is a link to " + link.resolved.string() +
         (link.missing ? " (missing on the host)" : "") + ", which is " +
         std::string(to_string(link.access.view)) + " inside the sandbox (" + link.access.why +
         "): see pi-sandbox policy";
}

}  // namespace pisandbox::policy
