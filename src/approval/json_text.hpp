// pisandbox::approval — strict parsing of JSON text that comes from outside the program
// (a reviewer's stdout, a host's request). Internal to src/approval.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace pisandbox::approval {

/// Parses exactly one JSON value (surrounding whitespace allowed). Stricter than
/// nlohmann::json::parse in one way: a repeated key in any object is an error, so two
/// readers can never disagree about which of two values counts. Errors (message only):
///   the parser's message without its `[json.exception...]` prefix, e.g.
///   `syntax error while parsing value - unexpected end of input; ... at line 1, column 3`,
///   `duplicate key "<key>"`.
[[nodiscard]] core::Result<nlohmann::json> parse_json_text(std::string_view text);

/// Dumps a value compactly (no whitespace), as JSON.stringify does, replacing bytes that
/// are not valid UTF-8 with U+FFFD instead of throwing.
[[nodiscard]] std::string dump_compact(const nlohmann::json& value);

/// True when `text` is valid UTF-8 by the same rules nlohmann::json applies on output.
[[nodiscard]] bool is_valid_utf8(std::string_view text);

}  // namespace pisandbox::approval
