#include "policy/git_credential.hpp"

#include <algorithm>

namespace pisandbox::policy {

namespace {

core::Error error(std::string message) {
  return core::Error{std::move(message), {}, 0};
}

bool is_scheme(std::string_view text) {
  if (text.empty() || text.size() > 32) return false;
  const auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!alpha(text.front())) return false;
  return std::ranges::all_of(text, [&alpha](char c) {
    return alpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
  });
}

bool is_host(std::string_view text) {
  if (text.empty() || text.size() > 253 + 6) return false;
  std::string_view name = text;
  if (const auto colon = text.find(':'); colon != std::string_view::npos) {
    const std::string_view port = text.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string_view::npos)
      return false;
    name = text.substr(0, colon);
  }
  if (name.empty() || name.size() > 253) return false;
  return std::ranges::all_of(name, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_';
  });
}

}  // namespace

core::Result<std::vector<CredentialAttribute>> parse_credential_message(std::string_view text) {
  if (text.size() > kMaxCredentialMessageBytes)
    return std::unexpected(error("credential message is larger than 65536 bytes"));
  std::vector<CredentialAttribute> out;
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.empty()) break;  // the blank line that ends the message
    const std::string where = "credential line " + std::to_string(line_number);
    if (line.find('\0') != std::string_view::npos)
      return std::unexpected(error(where + " holds a NUL byte"));
    const std::size_t equals = line.find('=');
    if (equals == std::string_view::npos) return std::unexpected(error(where + " has no '='"));
    if (equals == 0) return std::unexpected(error(where + " has an empty key"));
    if (out.size() == kMaxCredentialAttributes)
      return std::unexpected(error("credential message has more than 256 attributes"));
    out.push_back({std::string(line.substr(0, equals)), std::string(line.substr(equals + 1))});
  }
  return out;
}

std::optional<std::string> credential_value(const std::vector<CredentialAttribute>& attributes,
                                            std::string_view key) {
  std::optional<std::string> value;
  for (const auto& attribute : attributes)
    if (attribute.key == key) value = attribute.value;
  return value;
}

core::Result<CredentialQuery> credential_query(const std::vector<CredentialAttribute>& attributes) {
  CredentialQuery query;
  auto protocol = credential_value(attributes, "protocol");
  if (!protocol || protocol->empty())
    return std::unexpected(error("credential request has no protocol"));
  auto host = credential_value(attributes, "host");
  if (!host || host->empty()) return std::unexpected(error("credential request has no host"));
  if (!is_scheme(*protocol))
    return std::unexpected(
        error("credential request protocol " + *protocol + " is not a URL scheme"));
  if (!is_host(*host))
    return std::unexpected(error("credential request host " + *host + " is not a host name"));
  for (const std::string_view key : {"path", "username"}) {
    const auto value = credential_value(attributes, key);
    if (value && std::ranges::any_of(*value, [](char c) {
          return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
        }))
      return std::unexpected(
          error("credential request " + std::string(key) + " holds a control character"));
  }
  query.protocol = std::move(*protocol);
  query.host = std::move(*host);
  query.path = credential_value(attributes, "path");
  query.username = credential_value(attributes, "username");
  return query;
}

std::string credential_message(const CredentialQuery& query) {
  std::string out = "protocol=" + query.protocol + "\nhost=" + query.host + "\n";
  if (query.path) out += "path=" + *query.path + "\n";
  if (query.username) out += "username=" + *query.username + "\n";
  return out + "\n";
}

std::optional<Credential> credential_answer(const std::vector<CredentialAttribute>& attributes,
                                            const CredentialQuery& query) {
  const auto protocol = credential_value(attributes, "protocol");
  const auto host = credential_value(attributes, "host");
  if ((protocol && *protocol != query.protocol) || (host && *host != query.host))
    return std::nullopt;
  auto username = credential_value(attributes, "username");
  auto password = credential_value(attributes, "password");
  if (!username || !password) return std::nullopt;
  return Credential{std::move(*username), std::move(*password)};
}

std::string credential_lines(const Credential& credential) {
  return "username=" + credential.username + "\npassword=" + credential.password + "\n";
}

core::Result<std::vector<GitConfigEntry>> git_config_entries(std::string_view listing) {
  std::vector<GitConfigEntry> entries;
  while (!listing.empty()) {
    const std::size_t origin_end = listing.find('\0');
    if (origin_end == std::string_view::npos)
      return std::unexpected(error("git config listing is malformed"));
    const std::string_view origin = listing.substr(0, origin_end);
    listing.remove_prefix(origin_end + 1);
    const std::size_t entry_end = listing.find('\0');
    if (entry_end == std::string_view::npos)
      return std::unexpected(error("git config listing is malformed"));
    const std::string_view entry = listing.substr(0, entry_end);
    listing.remove_prefix(entry_end + 1);
    const std::size_t newline = entry.find('\n');
    GitConfigEntry out{std::string(origin), std::string(entry.substr(0, newline)), std::nullopt};
    if (newline != std::string_view::npos) out.value = std::string(entry.substr(newline + 1));
    entries.push_back(std::move(out));
  }
  return entries;
}

core::Result<std::vector<std::filesystem::path>> git_config_files(
    std::string_view listing, const std::filesystem::path& home) {
  namespace fs = std::filesystem;
  const auto entries = git_config_entries(listing);
  if (!entries) return std::unexpected(entries.error());
  std::vector<fs::path> files;
  const auto add = [&files](const fs::path& path) {
    const fs::path normal = path.lexically_normal();
    if (std::ranges::find(files, normal) == files.end()) files.push_back(normal);
  };
  for (const auto& entry : *entries) {
    // Other origins (`command line:`, `blob:`, `standard input:`) are no file.
    if (!entry.origin.starts_with("file:")) continue;
    const fs::path file(entry.origin.substr(5));
    add(file);
    const std::string& key = entry.key;
    const bool include =
        key == "include.path" || (key.starts_with("includeif.") && key.ends_with(".path"));
    if (!include || !entry.value) continue;
    const std::string& value = *entry.value;
    if (value.starts_with("~/")) {
      add(home / value.substr(2));
    } else if (value.starts_with('~')) {
      return std::unexpected(error("include path " + value + " names another user's home"));
    } else if (!value.empty()) {
      add(fs::path(value).is_absolute() ? fs::path(value) : file.parent_path() / value);
    }
  }
  return files;
}

std::vector<std::string> credential_helpers(const std::vector<GitConfigEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& entry : entries)
    if (entry.key.starts_with("credential.") && entry.key.ends_with(".helper") && entry.value &&
        !entry.value->empty())
      out.push_back(*entry.value);
  return out;
}

}  // namespace pisandbox::policy
