// What the HTTP/1.1 request and response parsers share: the syntax of fields and lines, the
// head accumulator, hop-by-hop fields and the chunked-body scanner. Requests are in
// http_request.cpp, responses in http_response.cpp.
#include "proxy/protocol/http.hpp"

#include <algorithm>
#include <charconv>

#include "proxy/protocol/http_syntax.hpp"

namespace pisandbox::proxy {

// ---- syntax ----------------------------------------------------------------------------------

char to_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), to_lower);
  return out;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::ranges::equal(a, b, [](char x, char y) { return to_lower(x) == to_lower(y); });
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// tchar of RFC 9110 section 5.6.2.
bool is_tchar(char c) {
  if (is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view text) {
  return !text.empty() && std::ranges::all_of(text, is_tchar);
}

bool is_ows(char c) {
  return c == ' ' || c == '\t';
}

std::string_view trim_ows(std::string_view text) {
  while (!text.empty() && is_ows(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_ows(text.back())) text.remove_suffix(1);
  return text;
}

// field-value of RFC 9110 section 5.5: VCHAR, obs-text, SP and HTAB.
bool is_field_value(std::string_view text) {
  return std::ranges::all_of(text, [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return c == '\t' || (byte >= 0x20 && byte != 0x7f);
  });
}

// A request-target has no whitespace or control characters (RFC 9112 section 3.2).
bool is_target_text(std::string_view text) {
  return std::ranges::all_of(text, [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte > 0x20 && byte != 0x7f;
  });
}

// The comma-separated elements of every field named `name`, trimmed and lowercased
// (RFC 9110 section 5.6.1); empty elements are dropped.
std::vector<std::string> list_values(const std::vector<Header>& headers, std::string_view name) {
  std::vector<std::string> out;
  for (const Header& header : headers) {
    if (!equals_ignoring_case(header.name, name)) continue;
    std::string_view rest = header.value;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      const std::string_view element = trim_ows(rest.substr(0, comma));
      if (!element.empty()) out.push_back(lowercase(element));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return out;
}

bool has_header(const std::vector<Header>& headers, std::string_view name) {
  return std::ranges::any_of(headers,
                             [&](const Header& h) { return equals_ignoring_case(h.name, name); });
}

std::optional<std::uint64_t> parse_length(std::string_view text) {
  if (text.empty() || text.size() > 18 || !std::ranges::all_of(text, is_digit)) return {};
  std::uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// Splits a head into lines; the line end is LF or CRLF (RFC 9112 section 2.2). A CR anywhere
// else is refused: parsers that take a bare CR for a line end would see other fields.
std::expected<std::vector<std::string_view>, std::string> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t lf = text.find('\n');
    std::string_view line = text.substr(0, lf);
    text = lf == std::string_view::npos ? std::string_view() : text.substr(lf + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.find('\r') != std::string_view::npos) return std::unexpected("bare CR in the head");
    lines.push_back(line);
  }
  if (lines.empty()) return std::unexpected("empty head");
  return lines;
}

// Header field lines (RFC 9112 section 5).
std::expected<std::vector<Header>, std::string> parse_fields(
    std::span<const std::string_view> lines) {
  std::vector<Header> headers;
  headers.reserve(lines.size());
  for (std::string_view line : lines) {
    if (!line.empty() && is_ows(line.front())) {
      return std::unexpected("obs-fold (a header line starting with whitespace)");
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return std::unexpected("header line without ':'");
    const std::string_view name = line.substr(0, colon);
    if (!name.empty() && is_ows(name.back())) {
      return std::unexpected("whitespace between a header name and ':'");
    }
    if (!is_token(name)) return std::unexpected("malformed header name");
    const std::string_view value = trim_ows(line.substr(colon + 1));
    if (!is_field_value(value)) return std::unexpected("control character in a header value");
    headers.push_back(Header{std::string(name), std::string(value)});
  }
  return headers;
}

std::optional<Version> parse_version(std::string_view text) {
  if (text.size() != 8 || !text.starts_with("HTTP/") || !is_digit(text[5]) || text[6] != '.' ||
      !is_digit(text[7])) {
    return std::nullopt;
  }
  return Version{text[5] - '0', text[7] - '0'};
}

std::vector<std::string> connection_tokens(const std::vector<Header>& headers) {
  return list_values(headers, "connection");
}

// Whether a field is dropped when a message is forwarded: hop-by-hop, named by Connection, or
// one the proxy writes itself (`also`).
bool dropped(const Header& header, const std::vector<std::string>& listed,
             std::initializer_list<std::string_view> also) {
  if (is_hop_by_hop(header.name)) return true;
  const std::string name = lowercase(header.name);
  if (std::ranges::find(listed, name) != listed.end()) return true;
  return std::ranges::find(also, std::string_view(name)) != also.end();
}

void append_field(std::string& out, std::string_view name, std::string_view value) {
  out.append(name).append(": ").append(value).append("\r\n");
}

std::string joined_values(const std::vector<Header>& headers, std::string_view name) {
  std::string out;
  for (const Header& header : headers) {
    if (!equals_ignoring_case(header.name, name)) continue;
    if (!out.empty()) out += ", ";
    out += header.value;
  }
  return out;
}

// ---- HeadAccumulator -------------------------------------------------------------------------

std::variant<NeedMore, std::size_t, HttpError> HeadAccumulator::fail(int request_status,
                                                                     std::string reason) {
  failed_ = true;
  error_ = HttpError{role_ == Role::Request ? request_status : kBadGateway, std::move(reason)};
  return error_;
}

std::variant<NeedMore, std::size_t, HttpError> HeadAccumulator::feed(std::string_view bytes) {
  if (failed_) return error_;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    head_.push_back(c);
    if (c == '\n') {
      const std::string_view line =
          std::string_view(head_).substr(line_start_, head_.size() - 1 - line_start_);
      if (line.empty() || line == "\r") {
        if (line_start_ != 0) {
          head_.resize(line_start_);
          return i + 1;
        }
        // An empty line before the start line (RFC 9112 section 2.2): skipped, but counted.
        skipped_ += head_.size();
        head_.clear();
      } else {
        line_start_ = head_.size();
      }
    } else if (line_start_ == 0 && head_.size() > kMaxRequestLine &&
               !(head_.size() == kMaxRequestLine + 1 && c == '\r')) {
      return fail(414, "request line longer than 8 KiB");
    }
    if (skipped_ + head_.size() > kMaxHead) return fail(431, "head larger than 64 KiB");
  }
  return NeedMore{};
}

void HeadAccumulator::reset() {
  head_.clear();
  line_start_ = 0;
  skipped_ = 0;
  failed_ = false;
  error_ = HttpError{};
}

bool is_hop_by_hop(std::string_view name) {
  static constexpr std::string_view kNames[] = {"connection",
                                                "keep-alive",
                                                "proxy-connection",
                                                "proxy-authorization",
                                                "proxy-authenticate",
                                                "te",
                                                "trailer",
                                                "transfer-encoding",
                                                "upgrade"};
  return std::ranges::any_of(kNames,
                             [&](std::string_view n) { return equals_ignoring_case(n, name); });
}

// ---- ChunkedBodyScanner ----------------------------------------------------------------------

namespace {
constexpr std::size_t kMaxChunkLine = 4 * 1024;

int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  const char lower = to_lower(c);
  if (lower >= 'a' && lower <= 'f') return lower - 'a' + 10;
  return -1;
}
}  // namespace

std::expected<ChunkedBodyScanner::Step, HttpError> ChunkedBodyScanner::fail(std::string reason) {
  state_ = State::Failed;
  error_ = HttpError{error_status_, std::move(reason)};
  return Failure(error_);
}

void ChunkedBodyScanner::end_size_line() {
  state_ = remaining_ == 0 ? State::TrailerStart : State::Data;
  line_length_ = 0;
}

void ChunkedBodyScanner::begin_chunk() {
  state_ = State::Size;
  remaining_ = 0;
  digits_ = 0;
  line_length_ = 0;
}

// One byte of a chunk-size line: `chunk-size [BWS ; chunk-ext] CRLF` (RFC 9112 section 7.1.1).
bool ChunkedBodyScanner::size_line_byte(char c, std::string& error) {
  if (++line_length_ > kMaxChunkLine) return error = "chunk size line longer than 4 KiB", false;
  const int digit = hex_value(c);
  if (state_ == State::Size && digit >= 0) {
    if (++digits_ > 16) return error = "chunk size longer than 16 hex digits", false;
    remaining_ = remaining_ * 16 + static_cast<std::uint64_t>(digit);
    return true;
  }
  if (state_ == State::Size && digits_ == 0) return error = "chunk size is not a hex number", false;
  if (state_ == State::SizeLf) {
    if (c != '\n') return error = "bare CR in a chunk size line", false;
    end_size_line();
    return true;
  }
  if (c == '\r') {
    state_ = State::SizeLf;
  } else if (c == '\n') {
    end_size_line();
  } else if (state_ == State::Extension) {
    if (!is_field_value(std::string_view(&c, 1))) {
      return error = "control character in a chunk extension", false;
    }
  } else if (c == ';') {
    state_ = State::Extension;
  } else if (is_ows(c)) {
    state_ = State::SizeSpace;
  } else {
    return error = "malformed chunk size line", false;
  }
  return true;
}

// One byte after chunk data or in the trailer section (RFC 9112 section 7.1.2).
bool ChunkedBodyScanner::framing_byte(char c, std::string& error) {
  switch (state_) {
    case State::DataCr:
      if (c == '\r') {
        state_ = State::DataLf;
      } else if (c == '\n') {
        begin_chunk();
      } else {
        return error = "chunk data longer than its size", false;
      }
      return true;
    case State::DataLf:
      if (c != '\n') return error = "bare CR after chunk data", false;
      begin_chunk();
      return true;
    default:
      break;
  }
  if (++trailer_length_ > kMaxHead) return error = "trailer section larger than 64 KiB", false;
  if (state_ == State::TrailerStart) {
    state_ = c == '\r' ? State::TrailerLf : c == '\n' ? State::Done : State::TrailerLine;
  } else if (state_ == State::TrailerLine) {
    if (c == '\n') state_ = State::TrailerStart;
  } else if (state_ == State::TrailerLf) {
    if (c != '\n') return error = "bare CR in the trailer section", false;
    state_ = State::Done;
  }
  return true;
}

std::expected<ChunkedBodyScanner::Step, HttpError> ChunkedBodyScanner::scan(
    std::string_view bytes) {
  if (state_ == State::Failed) return Failure(error_);
  std::size_t i = 0;
  while (i < bytes.size() && state_ != State::Done) {
    if (state_ == State::Data) {
      const std::size_t take =
          static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, bytes.size() - i));
      i += take;
      remaining_ -= take;
      if (remaining_ == 0) state_ = State::DataCr;
      continue;
    }
    std::string error;
    const bool in_size_line = state_ == State::Size || state_ == State::SizeSpace ||
                              state_ == State::Extension || state_ == State::SizeLf;
    const bool ok = in_size_line ? size_line_byte(bytes[i], error) : framing_byte(bytes[i], error);
    if (!ok) return fail(std::move(error));
    ++i;
  }
  return Step{i, state_ == State::Done};
}

}  // namespace pisandbox::proxy
