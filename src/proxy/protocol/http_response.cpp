// The response side of the HTTP/1.1 proxy protocol: the server's response head and body
// framing, the head forwarded to the client, and the responses the proxy writes itself.
#include <algorithm>

#include "proxy/protocol/http.hpp"
#include "proxy/protocol/http_syntax.hpp"

namespace pisandbox::proxy {

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
