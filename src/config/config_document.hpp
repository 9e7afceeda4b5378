// pisandbox::config::detail — the configuration's JSON text made a Document (duplicate keys
// refused, key order kept) and the helpers every section's parser shares. Internal to
// pisandbox_config (config.cpp); the interface is config.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <expected>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace pisandbox::config::detail {

using Json = nlohmann::json;
using Failure = std::unexpected<ConfigError>;

/// The root object's keys that are sections (docs/configuration.md lists each).
inline constexpr std::array<std::string_view, 8> kSections = {
    "subagents", "filesystem", "hostIPC", "network", "approval", "limits", "environment", "pi"};

/// The parsed text, plus the document order of the keys of the root and of each section
/// (std::map-based Json sorts keys; unknown-key messages list them as written).
struct Document {
  Json root;
  std::map<std::string, std::vector<std::string>, std::less<>> key_order;  // where -> keys
};

/// The JSON text as a Document. Errors: Kind::InvalidJson with the 1-based line and column
/// (bytes) of the offending token; Kind::Invalid for a key written twice in the root object or
/// in a section (`duplicate key ...`: a second value must not hide behind the first,
/// docs/configuration.md).
std::expected<Document, ConfigError> read_document(std::string_view text);

/// A Kind::Invalid error: kInvalidPrefix + `what`, with `hint` (may be empty).
ConfigError invalid_error(std::string what, std::string hint = {});

/// invalid_error() as the failed result of a parser.
Failure invalid(std::string what, std::string hint = {});

/// `unknown <where> key: a` / `unknown <where> keys: a, b` for the keys of `where` (`root` or a
/// section) not in `known`, in document order (compatibility C4); nullopt when there is none.
std::optional<ConfigError> unknown_keys(const Document& document, std::string_view where,
                                        std::span<const std::string_view> known);

/// The member `key` of `object`, or nullptr.
const Json* member(const Json& object, std::string_view key);

/// The section object `name`, or nullptr when absent (defaults apply). Errors: `<name> must be
/// an object`; unknown_keys() against `known`.
std::expected<const Json*, ConfigError> section(const Document& document, std::string_view name,
                                                std::span<const std::string_view> known);

/// The code point of the UTF-8 sequence of `length` bytes at the start of `text` (validated by
/// the JSON parser); 0xFFFFFFFF for a truncated sequence.
char32_t decode(std::string_view text, std::size_t length);

/// `text` trimmed as JavaScript's String.prototype.trim() does, which the reference uses: ASCII
/// whitespace plus the Unicode space separators, U+FEFF and the line terminators U+2028/U+2029.
std::string js_trim(std::string_view text);

/// Whether `value` is a string that starts with `/` and holds no NUL.
bool is_absolute_path(const Json& value);

/// Appends `item` to `items` unless an equal one is there.
template <typename T>
void append_unique(std::vector<T>& items, T item) {
  if (std::ranges::find(items, item) == items.end()) items.push_back(std::move(item));
}

/// The one of `choices` whose configuration spelling (its to_string()) is the string `value`;
/// nullopt for a value that is not a string or spells none of them (exact, case included).
template <typename Choice, std::size_t N>
std::optional<Choice> spelled(const Json& value, const std::array<Choice, N>& choices) {
  if (!value.is_string()) return std::nullopt;
  const auto& text = value.get_ref<const std::string&>();
  const auto found =
      std::ranges::find_if(choices, [&](Choice choice) { return text == to_string(choice); });
  if (found == choices.end()) return std::nullopt;
  return *found;
}

}  // namespace pisandbox::config::detail
