#include "policy/git_remotes.hpp"

#include <algorithm>
#include <string_view>

namespace pisandbox::policy {

namespace {

/// Whether `word` is spelled as a local path rather than a remote's name: git-fetch(1), "GIT
/// URLS" (a name holds no `/`, and `.`/`..` begin a relative path).
bool spelled_as_path(std::string_view word) {
  return word.starts_with('/') || word.starts_with("~/") || word.starts_with("./") ||
         word.starts_with("../") || word.starts_with("file://");
}

/// The index of git's subcommand among `words` after the `git` at `at`, or words.size().
std::size_t subcommand_at(const std::vector<std::string>& words, std::size_t at) {
  for (std::size_t i = at + 1; i < words.size(); ++i) {
    if (words[i] == "-C" || words[i] == "-c") {
      ++i;
      continue;
    }
    if (!words[i].starts_with('-')) return i;
  }
  return words.size();
}

/// What one git command (its subcommand at `sub`, its arguments up to `end`) reads as remotes.
/// With `push_only`, only a `git push` counts.
void remotes_of(const std::vector<std::string>& words, std::size_t sub, std::size_t end,
                const std::map<std::string, std::string>& remotes, bool push_only,
                std::vector<std::string>& urls) {
  const std::string& name = words[sub];
  const bool clone = name == "clone";
  if (push_only && name != "push") return;
  if (!clone && name != "fetch" && name != "pull" && name != "push" && name != "ls-remote") return;
  bool named = false;
  for (std::size_t i = sub + 1; i < end; ++i) {
    const std::string& word = words[i];
    if (word == "--all") {
      for (const auto& [remote, url] : remotes) urls.push_back(url);
      named = true;
    } else if (word.starts_with('-')) {
      continue;
    } else if (const auto it = remotes.find(word); it != remotes.end() && !clone) {
      urls.push_back(it->second);
      named = true;
    } else if (clone || spelled_as_path(word)) {
      urls.push_back(word);
      named = true;
    }
  }
  if (const auto origin = remotes.find("origin"); !named && !clone && origin != remotes.end())
    urls.push_back(origin->second);
}

bool is_git(std::string_view word) {
  return word == "git" || word.ends_with("/git");
}

}  // namespace

fs::path local_remote_path(const std::string& url, const fs::path& home, const fs::path& cwd) {
  std::string_view rest = url;
  if (rest.starts_with("file://")) rest.remove_prefix(7);
  if (rest.empty() || (rest.starts_with("~") && !rest.starts_with("~/"))) return {};
  if (rest.starts_with("~/")) return (home / std::string(rest.substr(2))).lexically_normal();
  if (rest.starts_with('/')) return fs::path(std::string(rest)).lexically_normal();
  // A scheme (`https://`) or an scp-like `host:path` has a `:` before any `/` (git-fetch(1)).
  const std::size_t colon = rest.find(':');
  if (colon != std::string_view::npos && colon < rest.find('/')) return {};
  return (cwd / std::string(rest)).lexically_normal();
}

namespace {

/// The local paths of the remotes that the git commands among `words` read (all of
/// local_remotes(), or with `push_only` those of pushed_remotes()).
std::vector<fs::path> remotes_in(const std::vector<std::string>& words,
                                 const std::map<std::string, std::string>& remotes,
                                 const fs::path& home, const fs::path& cwd, bool push_only) {
  std::vector<std::string> urls;
  for (std::size_t at = 0; at < words.size(); ++at) {
    if (!is_git(words[at])) continue;
    const std::size_t sub = subcommand_at(words, at);
    std::size_t end = sub;
    while (end < words.size() && !is_git(words[end])) ++end;
    if (sub < words.size()) remotes_of(words, sub, end, remotes, push_only, urls);
    at = end - 1;
  }
  std::vector<fs::path> paths;
  for (const auto& url : urls)
    if (fs::path path = local_remote_path(url, home, cwd);
        !path.empty() && std::ranges::find(paths, path) == paths.end())
      paths.push_back(std::move(path));
  return paths;
}

}  // namespace

std::vector<fs::path> local_remotes(const std::vector<std::string>& words,
                                    const std::map<std::string, std::string>& remotes,
                                    const fs::path& home, const fs::path& cwd) {
  return remotes_in(words, remotes, home, cwd, false);
}

std::vector<fs::path> pushed_remotes(const std::vector<std::string>& words,
                                     const std::map<std::string, std::string>& remotes,
                                     const fs::path& home, const fs::path& cwd) {
  return remotes_in(words, remotes, home, cwd, true);
}

std::string unpushed_remote_line(const fs::path& path, const OutsideAccess& access) {
  return "git pushed to " + path.string() + ", which is " + std::string(to_string(access.view)) +
         " inside the sandbox: the push is not on the host; to push there, add it to "
         "filesystem.additionalAllowWrite";
}

std::string hidden_remote_line(const fs::path& path, const OutsideAccess& access) {
  return "git reads the remote " + path.string() + ", which is hidden inside the sandbox (" +
         access.why + "): see docs/configuration.md";
}

}  // namespace pisandbox::policy
