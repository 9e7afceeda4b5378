#include "proxy/protocol/http.hpp"

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <optional>
#include <span>

#include "proxy/protocol/destination.hpp"

namespace pisandbox::proxy {
namespace {

constexpr int kBadGateway = 502;

using Failure = std::unexpected<HttpError>;

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

struct Version {
  int major = 0;
  int minor = 0;
};

std::optional<Version> parse_version(std::string_view text) {
  if (text.size() != 8 || !text.starts_with("HTTP/") || !is_digit(text[5]) || text[6] != '.' ||
      !is_digit(text[7])) {
    return std::nullopt;
  }
  return Version{text[5] - '0', text[7] - '0'};
}

// `http://host[:port][/path][?query]` (RFC 9110 section 4.2.1, RFC 9112 section 3.2.2).
std::expected<void, HttpError> parse_absolute(std::string_view target, RequestHead& head) {
  const std::size_t scheme_end = target.find("://");
  const std::string scheme = lowercase(target.substr(0, scheme_end));
  if (scheme == "https") {
    return Failure(HttpError{400, "https:// URL in absolute-form (HTTPS goes through CONNECT)"});
  }
  if (scheme != "http") return Failure(HttpError{400, "URL scheme other than http"});
  if (target.find('#') != std::string_view::npos) {
    return Failure(HttpError{400, "fragment in the request-target"});
  }
  std::string_view rest = target.substr(scheme_end + 3);
  const std::size_t path_start = rest.find_first_of("/?");
  const std::string_view authority = rest.substr(0, path_start);
  std::string_view path =
      path_start == std::string_view::npos ? std::string_view() : rest.substr(path_start);
  if (authority.find('@') != std::string_view::npos) {
    return Failure(HttpError{400, "user information in the URL"});
  }
  const bool has_port = authority.starts_with('[') ? authority.find("]:") != std::string_view::npos
                                                   : authority.find(':') != std::string_view::npos;
  if (has_port) {
    auto parsed = parse_authority(authority);
    if (!parsed) return Failure(HttpError{400, "URL authority " + parsed.error()});
    head.host = std::move(parsed->host);
    head.port = parsed->port;
  } else {
    if (authority.starts_with('[') && !authority.ends_with(']')) {
      return Failure(HttpError{400, "URL authority has an unterminated '['"});
    }
    head.host = std::string(authority);
    head.port = 80;
  }
  if (head.host.empty()) return Failure(HttpError{400, "URL without a host"});
  head.path = path.starts_with('/') ? std::string(path) : "/" + std::string(path);
  head.form = TargetForm::Absolute;
  return {};
}

std::expected<void, HttpError> parse_target(std::string_view target, RequestHead& head) {
  if (head.method == "CONNECT") {
    auto authority = parse_authority(target);
    if (!authority) return Failure(HttpError{400, "CONNECT target " + authority.error()});
    head.form = TargetForm::Authority;
    head.host = std::move(authority->host);
    head.port = authority->port;
    return {};
  }
  if (target == "*") {
    head.form = TargetForm::Asterisk;
    return {};
  }
  if (target.starts_with('/')) {
    head.form = TargetForm::Origin;
    head.path = std::string(target);
    return {};
  }
  if (target.find("://") == std::string_view::npos) {
    return Failure(HttpError{400, "request-target is not an absolute http:// URL"});
  }
  return parse_absolute(target, head);
}

// `method SP request-target SP HTTP-version` (RFC 9112 section 3), single spaces.
std::expected<void, HttpError> parse_request_line(std::string_view line, RequestHead& head) {
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Failure(HttpError{400, "malformed request line"});
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const auto version = parse_version(line.substr(sp2 + 1));
  if (!is_token(method)) return Failure(HttpError{400, "malformed method"});
  if (target.empty() || !is_target_text(target)) {
    return Failure(HttpError{400, "malformed request-target"});
  }
  if (!version) return Failure(HttpError{400, "malformed HTTP version"});
  if (version->major != 1 || version->minor > 1) {
    return Failure(HttpError{505, "HTTP version other than 1.0 and 1.1"});
  }
  head.method = std::string(method);
  head.target = std::string(target);
  head.minor_version = version->minor;
  return parse_target(target, head);
}

// Request body framing (RFC 9112 section 6.3, rules 3-6) with the smuggling defences.
std::expected<BodyFraming, HttpError> request_framing(const std::vector<Header>& headers) {
  const auto lengths = std::ranges::count_if(
      headers, [](const Header& h) { return equals_ignoring_case(h.name, "content-length"); });
  const bool chunked_header = has_header(headers, "transfer-encoding");
  if (chunked_header && lengths > 0) {
    return Failure(HttpError{400, "Content-Length together with Transfer-Encoding"});
  }
  if (chunked_header) {
    const auto codings = list_values(headers, "transfer-encoding");
    if (codings.empty() || codings.back() != "chunked" ||
        std::ranges::count(codings, "chunked") != 1) {
      return Failure(HttpError{400, "Transfer-Encoding whose last coding is not chunked"});
    }
    return BodyFraming{BodyFraming::Kind::Chunked, 0};
  }
  if (lengths > 1) return Failure(HttpError{400, "more than one Content-Length"});
  if (lengths == 0) return BodyFraming{};
  const auto it = std::ranges::find_if(
      headers, [](const Header& h) { return equals_ignoring_case(h.name, "content-length"); });
  const auto length = parse_length(it->value);
  if (!length) return Failure(HttpError{400, "malformed Content-Length"});
  return BodyFraming{BodyFraming::Kind::Length, *length};
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

}  // namespace

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

// ---- heads -----------------------------------------------------------------------------------

std::expected<RequestHead, HttpError> parse_request_head(std::string_view text) {
  auto lines = split_lines(text);
  if (!lines) return Failure(HttpError{400, lines.error()});
  RequestHead head;
  if (auto ok = parse_request_line(lines->front(), head); !ok) return Failure(ok.error());
  auto headers = parse_fields(std::span(*lines).subspan(1));
  if (!headers) return Failure(HttpError{400, headers.error()});
  head.headers = std::move(*headers);
  auto framing = request_framing(head.headers);
  if (!framing) return Failure(framing.error());
  head.body = *framing;
  return head;
}

std::expected<ResponseHead, HttpError> parse_response_head(std::string_view text) {
  auto lines = split_lines(text);
  if (!lines) return Failure(HttpError{kBadGateway, lines.error()});
  const std::string_view line = lines->front();
  // `HTTP-version SP 3DIGIT SP [reason-phrase]` (RFC 9112 section 4); the SP before an empty
  // reason phrase is tolerated missing.
  const auto version = parse_version(line.substr(0, 8));
  if (!version || version->major != 1 || line.size() < 12 || line[8] != ' ' ||
      !std::ranges::all_of(line.substr(9, 3), is_digit) || line[9] == '0' ||
      (line.size() > 12 && line[12] != ' ') ||
      !is_field_value(line.substr(std::min<std::size_t>(line.size(), 13)))) {
    return Failure(HttpError{kBadGateway, "malformed status line from the server"});
  }
  ResponseHead head;
  head.minor_version = version->minor;
  head.status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
  if (line.size() > 13) head.reason = std::string(line.substr(13));
  auto headers = parse_fields(std::span(*lines).subspan(1));
  if (!headers) return Failure(HttpError{kBadGateway, headers.error() + " from the server"});
  head.headers = std::move(*headers);
  return head;
}

HeadParse<RequestHead> RequestHeadParser::feed(std::string_view bytes) {
  auto fed = accumulator_.feed(bytes);
  if (auto* error = std::get_if<HttpError>(&fed)) return *error;
  if (std::holds_alternative<NeedMore>(fed)) return NeedMore{};
  auto head = parse_request_head(accumulator_.text());
  if (!head) return head.error();
  return Parsed<RequestHead>{std::move(*head), std::get<std::size_t>(fed)};
}

HeadParse<ResponseHead> ResponseHeadParser::feed(std::string_view bytes) {
  auto fed = accumulator_.feed(bytes);
  if (auto* error = std::get_if<HttpError>(&fed)) return *error;
  if (std::holds_alternative<NeedMore>(fed)) return NeedMore{};
  auto head = parse_response_head(accumulator_.text());
  if (!head) return head.error();
  return Parsed<ResponseHead>{std::move(*head), std::get<std::size_t>(fed)};
}

std::expected<BodyFraming, HttpError> response_body_framing(const ResponseHead& head,
                                                            std::string_view request_method) {
  if (request_method == "HEAD" || head.status < 200 || head.status == 204 || head.status == 304) {
    return BodyFraming{};
  }
  if (has_header(head.headers, "transfer-encoding")) {
    const auto codings = list_values(head.headers, "transfer-encoding");
    if (!codings.empty() && codings.back() == "chunked") {
      return BodyFraming{BodyFraming::Kind::Chunked, 0};
    }
    return BodyFraming{BodyFraming::Kind::UntilClose, 0};
  }
  const auto lengths = list_values(head.headers, "content-length");
  if (lengths.empty()) {
    if (has_header(head.headers, "content-length")) {
      return Failure(HttpError{kBadGateway, "empty Content-Length from the server"});
    }
    return BodyFraming{BodyFraming::Kind::UntilClose, 0};
  }
  const auto length = parse_length(lengths.front());
  if (!length ||
      std::ranges::any_of(lengths, [&](const auto& v) { return v != lengths.front(); })) {
    return Failure(
        HttpError{kBadGateway, "malformed or conflicting Content-Length from the server"});
  }
  return BodyFraming{BodyFraming::Kind::Length, *length};
}

bool wants_keep_alive(const RequestHead& head) {
  if (head.minor_version == 0) return false;
  const auto tokens = connection_tokens(head.headers);
  return std::ranges::find(tokens, "close") == tokens.end();
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

std::string upstream_request_head(const RequestHead& head, std::string_view host,
                                  std::uint16_t port) {
  std::string out;
  out.reserve(256);
  out.append(head.method).append(" ").append(head.path).append(" HTTP/1.");
  out.push_back(static_cast<char>('0' + head.minor_version));
  out.append("\r\n");
  std::string host_value(host);
  if (port != 80) host_value += ":" + std::to_string(port);
  append_field(out, "Host", host_value);
  const auto listed = connection_tokens(head.headers);
  for (const Header& header : head.headers) {
    if (dropped(header, listed, {"host", "content-length"})) continue;
    append_field(out, header.name, header.value);
  }
  if (head.body.kind == BodyFraming::Kind::Length) {
    append_field(out, "Content-Length", std::to_string(head.body.length));
  } else if (head.body.kind == BodyFraming::Kind::Chunked) {
    append_field(out, "Transfer-Encoding", joined_values(head.headers, "transfer-encoding"));
  }
  append_field(out, "Connection", "close");
  out.append("\r\n");
  return out;
}

std::string downstream_response_head(const ResponseHead& head, const BodyFraming& framing,
                                     ClientConnection connection) {
  std::string out;
  out.reserve(256);
  out.append("HTTP/1.1 ").append(std::to_string(head.status)).append(" ").append(head.reason);
  out.append("\r\n");
  const auto listed = connection_tokens(head.headers);
  for (const Header& header : head.headers) {
    if (dropped(header, listed, {"content-length"})) continue;
    append_field(out, header.name, header.value);
  }
  if (has_header(head.headers, "transfer-encoding")) {
    append_field(out, "Transfer-Encoding", joined_values(head.headers, "transfer-encoding"));
  }
  if (framing.kind == BodyFraming::Kind::Length) {
    append_field(out, "Content-Length", std::to_string(framing.length));
  } else if (framing.kind == BodyFraming::Kind::None &&
             has_header(head.headers, "content-length")) {
    append_field(out, "Content-Length", joined_values(head.headers, "content-length"));
  }
  if (connection == ClientConnection::Close && head.status >= 200) {
    append_field(out, "Connection", "close");
  }
  out.append("\r\n");
  return out;
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

// ---- responses the proxy writes itself -------------------------------------------------------

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 408:
      return "Request Timeout";
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

std::string error_response(int status, std::string_view body) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason_phrase(status));
  out += "\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(body.size() + 1);
  out += "\r\nConnection: close\r\n\r\n";
  out.append(body).append("\n");
  return out;
}

std::string blocked_response() {
  return "HTTP/1.1 403 Forbidden\r\n"
         "Content-Type: text/plain\r\n"
         "X-Proxy-Error: blocked-by-allowlist\r\n"
         "Content-Length: 39\r\n"
         "Connection: close\r\n"
         "\r\n"
         "Connection blocked by network allowlist";
}

}  // namespace pisandbox::proxy
