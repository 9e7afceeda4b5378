// pisandbox::proxy — the HTTP/1.1 syntax shared by the request and the response parsers
// (http_request.cpp, http_response.cpp) and the chunked-body scanner: tokens, fields, line
// ends, versions, and what is dropped when a message is forwarded. Internal to the HTTP
// parsers; http.hpp is the interface.
#pragma once

#include <cstdint>
#include <expected>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/protocol/http.hpp"

namespace pisandbox::proxy {

/// Every error on the response side answers the client 502.
inline constexpr int kBadGateway = 502;

using Failure = std::unexpected<HttpError>;

/// ASCII lowercase of one character / of a text (field names and tokens are ASCII).
[[nodiscard]] char to_lower(char c);
[[nodiscard]] std::string lowercase(std::string_view text);
/// ASCII case-insensitive equality (field names, RFC 9110 section 5.1).
[[nodiscard]] bool equals_ignoring_case(std::string_view a, std::string_view b);
[[nodiscard]] bool is_digit(char c);
/// tchar of RFC 9110 section 5.6.2.
[[nodiscard]] bool is_tchar(char c);
/// A non-empty run of tchar (RFC 9110 section 5.6.2).
[[nodiscard]] bool is_token(std::string_view text);
/// Optional whitespace: SP or HTAB (RFC 9110 section 5.6.3).
[[nodiscard]] bool is_ows(char c);
/// `text` without leading and trailing OWS.
[[nodiscard]] std::string_view trim_ows(std::string_view text);
/// field-value of RFC 9110 section 5.5: VCHAR, obs-text, SP and HTAB.
[[nodiscard]] bool is_field_value(std::string_view text);
/// A request-target has no whitespace or control characters (RFC 9112 section 3.2).
[[nodiscard]] bool is_target_text(std::string_view text);
/// The comma-separated elements of every field named `name`, trimmed and lowercased
/// (RFC 9110 section 5.6.1); empty elements are dropped.
[[nodiscard]] std::vector<std::string> list_values(const std::vector<Header>& headers,
                                                   std::string_view name);
/// Whether a field named `name` is present (names compared case-insensitively).
[[nodiscard]] bool has_header(const std::vector<Header>& headers, std::string_view name);
/// A Content-Length value: 1-18 decimal digits, or nullopt.
[[nodiscard]] std::optional<std::uint64_t> parse_length(std::string_view text);
/// Splits a head into lines; the line end is LF or CRLF (RFC 9112 section 2.2). A CR anywhere
/// else is refused: parsers that take a bare CR for a line end would see other fields.
[[nodiscard]] std::expected<std::vector<std::string_view>, std::string> split_lines(
    std::string_view text);
/// Header field lines (RFC 9112 section 5); the error is a short reason.
[[nodiscard]] std::expected<std::vector<Header>, std::string> parse_fields(
    std::span<const std::string_view> lines);

/// An HTTP version `HTTP/<major>.<minor>`.
struct Version {
  int major = 0;
  int minor = 0;
};
/// Parses `HTTP/<digit>.<digit>` (RFC 9112 section 2.3), or nullopt.
[[nodiscard]] std::optional<Version> parse_version(std::string_view text);

/// The connection options of a message (the `Connection` field's elements, lowercased).
[[nodiscard]] std::vector<std::string> connection_tokens(const std::vector<Header>& headers);
/// Whether a field is dropped when a message is forwarded: hop-by-hop, named by Connection, or
/// one the proxy writes itself (`also`).
[[nodiscard]] bool dropped(const Header& header, const std::vector<std::string>& listed,
                           std::initializer_list<std::string_view> also);
/// Appends the field line `name: value` with its CRLF.
void append_field(std::string& out, std::string_view name, std::string_view value);
/// The values of every field named `name`, joined with ", " (RFC 9110 section 5.3).
[[nodiscard]] std::string joined_values(const std::vector<Header>& headers, std::string_view name);

}  // namespace pisandbox::proxy
