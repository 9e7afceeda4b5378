// The request side of the HTTP/1.1 proxy protocol: the request head (request line, target
// forms, body framing), whether the client keeps the connection, and the head forwarded to the
// origin server.
#include <algorithm>

#include "proxy/protocol/destination.hpp"
#include "proxy/protocol/http.hpp"
#include "proxy/protocol/http_syntax.hpp"

namespace pisandbox::proxy {
namespace {

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

}  // namespace

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

HeadParse<RequestHead> RequestHeadParser::feed(std::string_view bytes) {
  auto fed = accumulator_.feed(bytes);
  if (auto* error = std::get_if<HttpError>(&fed)) return *error;
  if (std::holds_alternative<NeedMore>(fed)) return NeedMore{};
  auto head = parse_request_head(accumulator_.text());
  if (!head) return head.error();
  return Parsed<RequestHead>{std::move(*head), std::get<std::size_t>(fed)};
}

bool wants_keep_alive(const RequestHead& head) {
  if (head.minor_version == 0) return false;
  const auto tokens = connection_tokens(head.headers);
  return std::ranges::find(tokens, "close") == tokens.end();
}

std::string upstream_request_head(const RequestHead& head, std::string_view host,
                                  std::uint16_t port, UpstreamConnection connection) {
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
  if (connection == UpstreamConnection::Close) append_field(out, "Connection", "close");
  out.append("\r\n");
  return out;
}

}  // namespace pisandbox::proxy
