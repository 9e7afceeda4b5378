// pisandbox::proxy — HTTP/1.1 for a forward proxy (pure): incremental request- and
// response-head parsers, message body framing, the chunked-body scanner, and the heads the
// proxy forwards with hop-by-hop headers removed.
//
// Sources: docs/network.md, "Answers the command sees"; compatibility C43–C45 (what the
// sandbox-runtime proxy answers); RFC 9110 (HTTP semantics) and RFC 9112 (HTTP/1.1 message syntax),
// sections cited beside each rule. The parsers are strict where leniency would let two parsers
// disagree about where a message ends (request smuggling): obs-fold, bare CR, whitespace before the
// colon, duplicate Content-Length and Content-Length with Transfer-Encoding are refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace pisandbox::proxy {

/// The longest request line (or status line) accepted, in bytes without its line end. A
/// longer one is refused with 414 as soon as its 8193rd byte arrives, so a 1 MiB request line
/// is never buffered whole (docs/network.md, "Answers the command sees"; RFC 9112 section 3
/// recommends at least 8000 octets).
inline constexpr std::size_t kMaxRequestLine = 8 * 1024;
/// The largest head accepted (start line, header fields and line ends), in bytes; larger →
/// 431 (RFC 6585 section 5).
inline constexpr std::size_t kMaxHead = 64 * 1024;

/// One header field as received: `name` as sent (compare case-insensitively), `value` without
/// leading and trailing whitespace (RFC 9110 section 5.5).
struct Header {
  std::string name;
  std::string value;

  friend bool operator==(const Header&, const Header&) = default;
};

/// How a message body is delimited (RFC 9112 section 6.3).
///   kind None: no body; Length: exactly `length` bytes; Chunked: the chunked coding
///   (find its end with ChunkedBodyScanner); UntilClose: until the sender closes (responses
///   only).
struct BodyFraming {
  enum class Kind { None, Length, Chunked, UntilClose };
  Kind kind = Kind::None;
  std::uint64_t length = 0;

  friend bool operator==(const BodyFraming&, const BodyFraming&) = default;
};

/// The four forms of request-target (RFC 9112 section 3.2).
enum class TargetForm {
  Origin,     ///< `/path?query` — what a server gets; a proxy answers 400 (docs/network.md)
  Absolute,   ///< `http://host[:port]/path?query` — plain HTTP through a proxy
  Authority,  ///< `host:port` — CONNECT only
  Asterisk,   ///< `*` — OPTIONS of a server; a proxy answers 400
};

/// A parsed request head.
///   method:  the method token, case as sent (methods are case-sensitive, RFC 9110 section 9.1).
///   form:    the request-target form.
///   target:  the request-target as sent.
///   host:    Absolute and Authority forms: the host as written in the target (not
///            normalised; IPv6 literals keep their brackets); empty otherwise.
///   port:    Absolute and Authority forms: the port (80 when an http URL has none); else 0.
///   path:    Absolute form: path and query (`/` when the URL has no path); Origin form: the
///            target; empty otherwise.
///   minor_version: 0 for HTTP/1.0, 1 for HTTP/1.1.
///   headers: the header fields in order.
///   body:    the request body's framing (None, Length or Chunked).
struct RequestHead {
  std::string method;
  TargetForm form = TargetForm::Origin;
  std::string target;
  std::string host;
  std::uint16_t port = 0;
  std::string path;
  int minor_version = 1;
  std::vector<Header> headers;
  BodyFraming body;
};

/// A parsed response head.
///   status: the three-digit status code (100-999; RFC 9110 section 15).
///   reason: the reason phrase as sent (may be empty).
struct ResponseHead {
  int minor_version = 1;
  int status = 0;
  std::string reason;
  std::vector<Header> headers;
};

/// A malformed or refused message, with the status code to answer and a short reason for the
/// log. Request side: 400 (malformed), 414 (request line over kMaxRequestLine), 431 (head over
/// kMaxHead), 505 (HTTP version other than 1.0 and 1.1). Response side: always 502.
struct HttpError {
  int status = 400;
  std::string reason;

  friend bool operator==(const HttpError&, const HttpError&) = default;
};

/// The head is not complete yet: feed more bytes.
struct NeedMore {
  friend bool operator==(const NeedMore&, const NeedMore&) = default;
};

/// A complete head. `consumed` is how many bytes of the last chunk passed to feed() belong to
/// the head; the bytes after them (a body, or the next message) are the caller's.
template <typename Head>
struct Parsed {
  Head head;
  std::size_t consumed = 0;
};

/// Finds where a head ends across fragments and enforces the size limits, without copying
/// the bytes that follow the head. Shared by the request and response parsers.
class HeadAccumulator {
 public:
  /// What the accumulator is reading: decides the error statuses and whether empty lines may
  /// precede the start line (requests only, RFC 9112 section 2.2).
  enum class Role { Request, Response };

  explicit HeadAccumulator(Role role) : role_(role) {}

  /// Takes bytes up to the end of the head. Returns NeedMore, the byte count of `bytes` that
  /// completed the head (the head is then text()), or an HttpError (then every later call
  /// returns it again).
  std::variant<NeedMore, std::size_t, HttpError> feed(std::string_view bytes);

  /// The complete head: start line and header lines with their line ends, without the final
  /// empty line and without skipped leading empty lines.
  [[nodiscard]] std::string_view text() const { return head_; }

  /// Forgets everything, ready for the next head.
  void reset();

 private:
  std::variant<NeedMore, std::size_t, HttpError> fail(int request_status, std::string reason);

  Role role_;
  std::string head_;
  std::size_t line_start_ = 0;
  std::size_t skipped_ = 0;  // bytes of leading empty lines, counted against kMaxHead
  bool failed_ = false;
  HttpError error_;
};

/// The result of feeding a head parser.
template <typename Head>
using HeadParse = std::variant<NeedMore, Parsed<Head>, HttpError>;

/// Incremental parser of one request head (RFC 9112 sections 2-7). Feed the bytes as they
/// arrive, fragmented anywhere; the result does not depend on where the fragments split.
/// Line ends are CRLF or a bare LF (RFC 9112 section 2.2); leading empty lines are skipped.
/// Errors (HttpError.status):
///   400: malformed request line, method or target; a CONNECT target that is not `host:port`;
///        another method with a target that is neither origin-form, absolute-form nor `*`;
///        an absolute-form URL with a scheme other than `http` (`https://...` included: HTTPS
///        goes through CONNECT), with user information, a fragment or an empty host;
///        a header line without `:`, with whitespace before the `:` (RFC 9112 section 5.1),
///        obs-fold (section 5.2), a bare CR or a control character; more than one
///        Content-Length, a Content-Length that is not a decimal number, Content-Length
///        together with Transfer-Encoding, a Transfer-Encoding whose last coding is not
///        `chunked` (section 6.3, request smuggling defence);
///   414: request line over kMaxRequestLine bytes;
///   431: head over kMaxHead bytes;
///   505: a version other than HTTP/1.0 and HTTP/1.1.
class RequestHeadParser {
 public:
  HeadParse<RequestHead> feed(std::string_view bytes);
  /// Ready for the next request on the same connection.
  void reset() { accumulator_.reset(); }

 private:
  HeadAccumulator accumulator_{HeadAccumulator::Role::Request};
};

/// Incremental parser of one response head. Errors are HttpError{502, reason}: a malformed
/// status line or header, or a head over the limits. Interim (1xx) responses are heads of
/// their own: reset() and feed the bytes after them again.
class ResponseHeadParser {
 public:
  HeadParse<ResponseHead> feed(std::string_view bytes);
  void reset() { accumulator_.reset(); }

 private:
  HeadAccumulator accumulator_{HeadAccumulator::Role::Response};
};

/// Parses a complete request head (as HeadAccumulator::text() gives it); the errors of
/// RequestHeadParser except 414/431.
[[nodiscard]] std::expected<RequestHead, HttpError> parse_request_head(std::string_view text);

/// Parses a complete response head; errors are HttpError{502, reason}.
[[nodiscard]] std::expected<ResponseHead, HttpError> parse_response_head(std::string_view text);

/// The body framing of a response to a request with `request_method` (RFC 9112 section 6.3):
/// HEAD, 1xx, 204 and 304 → None; Transfer-Encoding whose last coding is chunked → Chunked
/// (a Content-Length beside it is ignored); another Transfer-Encoding → UntilClose; one valid
/// Content-Length (or several with the same value) → Length; otherwise UntilClose. Errors:
/// HttpError{502} for differing or malformed Content-Length values.
[[nodiscard]] std::expected<BodyFraming, HttpError> response_body_framing(
    const ResponseHead& head, std::string_view request_method);

/// Whether the client wants the connection kept open after this request: HTTP/1.1 without
/// `Connection: close` (RFC 9112 section 9.3). HTTP/1.0 clients are always closed after one
/// request, which keeps the relay free of re-framing (the server sees HTTP/1.0 too).
[[nodiscard]] bool wants_keep_alive(const RequestHead& head);

/// Whether a header name is hop-by-hop for the proxy (RFC 9110 section 7.6.1, compatibility
/// C45): Connection, Keep-Alive, Proxy-Connection, Proxy-Authorization, Proxy-Authenticate,
/// TE, Trailer, Transfer-Encoding, Upgrade (ASCII case-insensitive).
[[nodiscard]] bool is_hop_by_hop(std::string_view name);

/// The head sent to the origin server for an absolute-form request (compatibility C45):
///   `<method> <path> HTTP/1.<minor>`, then `Host: <host>` (`<host>:<port>` unless port is
///   80), the client's header fields without hop-by-hop fields, the fields the client's
///   Connection header names, Host, Content-Length and Transfer-Encoding; then the body
///   framing of `head.body` (`Content-Length: N`, or the client's Transfer-Encoding value);
///   then `Connection: close` when `connection` is Close (the connection serves this request
///   only); nothing when KeepAlive (HTTP/1.1 persistence, RFC 9112 section 9.3: the proxy may
///   send a later request on it).
///   host: the normalised host that was checked; port: the checked port.
/// The client's HTTP version is kept so that a server never sends chunked bodies to an
/// HTTP/1.0 client (which the relay does not re-frame).
enum class UpstreamConnection { KeepAlive, Close };
[[nodiscard]] std::string upstream_request_head(
    const RequestHead& head, std::string_view host, std::uint16_t port,
    UpstreamConnection connection = UpstreamConnection::Close);

/// Whether the proxy closes the client connection after a response.
enum class ClientConnection { KeepAlive, Close };

/// The head sent to the client for a response (RFC 9110 section 7.6.1): `HTTP/1.1 <status>
/// <reason>`, the server's fields without hop-by-hop fields, the fields its Connection header
/// names, Content-Length and Transfer-Encoding; then the framing fields: the server's
/// Transfer-Encoding value whenever it sent one (the body bytes are relayed unchanged),
/// `Content-Length: N` when `framing` is Length, or the server's Content-Length as sent when
/// `framing` is None (a response to HEAD, a 304); then `Connection: close` when `connection`
/// is Close (never on a 1xx response).
[[nodiscard]] std::string downstream_response_head(const ResponseHead& head,
                                                   const BodyFraming& framing,
                                                   ClientConnection connection);

/// Finds the end of a chunked body (RFC 9112 section 7.1) as its bytes pass through, without
/// buffering them: chunk sizes are at most 16 hex digits, a chunk-size line (with extensions)
/// at most 4 KiB, the trailer section at most kMaxHead bytes.
class ChunkedBodyScanner {
 public:
  /// error_status: the status of an HttpError (400 for request bodies, 502 for responses).
  explicit ChunkedBodyScanner(int error_status = 400) : error_status_(error_status) {}

  /// consumed: how many bytes of the chunk belong to the body (all of them unless done);
  /// done: the body ended after `consumed` bytes (the last chunk and trailer section seen).
  struct Step {
    std::size_t consumed = 0;
    bool done = false;
  };

  /// Scans the next bytes of the body. After an error every call returns it again.
  std::expected<Step, HttpError> scan(std::string_view bytes);

  [[nodiscard]] bool done() const { return state_ == State::Done; }

 private:
  enum class State {
    Size,
    SizeSpace,
    Extension,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    TrailerStart,
    TrailerLine,
    TrailerLf,
    Done,
    Failed
  };
  std::expected<Step, HttpError> fail(std::string reason);
  bool size_line_byte(char c, std::string& error);
  bool framing_byte(char c, std::string& error);
  void end_size_line();
  void begin_chunk();

  int error_status_;
  State state_ = State::Size;
  std::uint64_t remaining_ = 0;
  int digits_ = 0;
  std::size_t line_length_ = 0;
  std::size_t trailer_length_ = 0;
  HttpError error_;
};

/// The bytes of an error response the proxy writes itself, and then closes the connection:
/// `HTTP/1.1 <status> <reason phrase>`, `Content-Type: text/plain`, `Content-Length`,
/// `Connection: close`, and `body` followed by a line end (RFC 9110 section 15).
[[nodiscard]] std::string error_response(int status, std::string_view body);

/// The 403 of a refused destination (docs/network.md, compatibility C43), byte for byte:
/// `HTTP/1.1 403 Forbidden`, `Content-Type: text/plain`, `X-Proxy-Error:
/// blocked-by-allowlist`, `Content-Length: 39`, `Connection: close`, body `Connection blocked
/// by network allowlist`.
[[nodiscard]] std::string blocked_response();

/// The reason phrase of a status code the proxy answers with (RFC 9110 section 15), or
/// "Error".
[[nodiscard]] std::string_view reason_phrase(int status);

}  // namespace pisandbox::proxy
