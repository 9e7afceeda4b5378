#include "policy/host_sockets.hpp"

namespace pisandbox::policy {

namespace {

bool name_start(char c) {
  return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}
bool name_char(char c) {
  return name_start(c) || (c >= '0' && c <= '9');
}

std::optional<std::string> lookup(std::string_view name, const std::vector<std::string>& env) {
  for (const auto& entry : env)
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
        entry[name.size()] == '=')
      return entry.substr(name.size() + 1);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> expand_socket_path(std::string_view entry,
                                              const std::vector<std::string>& env,
                                              std::string_view home) {
  std::string out;
  std::size_t i = 0;
  if (entry.starts_with("~/")) {
    if (home.empty()) return std::nullopt;
    out = std::string(home);
    i = 1;
  }
  while (i < entry.size()) {
    if (entry[i] != '$') {
      out += entry[i++];
      continue;
    }
    const bool braced = i + 1 < entry.size() && entry[i + 1] == '{';
    std::size_t start = i + (braced ? 2 : 1), end = start;
    if (end >= entry.size() || !name_start(entry[end])) return std::nullopt;
    while (end < entry.size() && name_char(entry[end])) ++end;
    if (braced && (end >= entry.size() || entry[end] != '}')) return std::nullopt;
    const auto value = lookup(entry.substr(start, end - start), env);
    if (!value || value->empty()) return std::nullopt;
    out += *value;
    i = end + (braced ? 1 : 0);
  }
  if (!out.starts_with('/')) return std::nullopt;
  return out;
}

std::vector<AllowedSocket> allowed_sockets(const std::vector<std::string>& entries,
                                           const std::vector<std::string>& env,
                                           std::string_view home) {
  std::vector<AllowedSocket> out;
  for (const auto& entry : entries) out.push_back({entry, expand_socket_path(entry, env, home)});
  return out;
}

}  // namespace pisandbox::policy
