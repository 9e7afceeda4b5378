// proxy HTTP/1.1 parsing and forwarding helpers (docs/network.md, "Answers the command sees";
// compatibility C43-C45; RFC 9112): every valid message is also fed split at every byte boundary
// and one byte at a time, and must parse to the same head with the same bytes left over.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "proxy/protocol/http.hpp"

namespace pisandbox::proxy {
namespace {

// The head and the bytes after it, from feeding `chunks` in order to a fresh parser.
template <typename Parser, typename Head>
struct Outcome {
  std::variant<NeedMore, Head, HttpError> result;
  std::string rest;
};

template <typename Parser, typename Head>
Outcome<Parser, Head> feed_chunks(const std::vector<std::string_view>& chunks) {
  Parser parser;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    auto result = parser.feed(chunks[i]);
    if (auto* error = std::get_if<HttpError>(&result)) return {*error, ""};
    if (auto* parsed = std::get_if<Parsed<Head>>(&result)) {
      std::string rest(chunks[i].substr(parsed->consumed));
      for (std::size_t j = i + 1; j < chunks.size(); ++j) rest += chunks[j];
      return {std::move(parsed->head), rest};
    }
  }
  return {NeedMore{}, ""};
}

// Feeds `message` whole, split in two at every byte boundary, and byte by byte; all must
// agree. Returns the whole-message outcome.
template <typename Parser, typename Head, typename Compare>
Outcome<Parser, Head> feed_every_split(std::string_view message, Compare same_head) {
  auto whole = feed_chunks<Parser, Head>({message});
  auto agrees = [&](const Outcome<Parser, Head>& other, const std::string& how) {
    ASSERT_EQ(whole.result.index(), other.result.index()) << how;
    EXPECT_EQ(whole.rest, other.rest) << how;
    if (auto* head = std::get_if<Head>(&whole.result)) {
      EXPECT_TRUE(same_head(*head, std::get<Head>(other.result))) << how;
    }
    if (auto* error = std::get_if<HttpError>(&whole.result)) {
      EXPECT_EQ(*error, std::get<HttpError>(other.result)) << how;
    }
  };
  for (std::size_t k = 0; k <= message.size(); ++k) {
    agrees(feed_chunks<Parser, Head>({message.substr(0, k), message.substr(k)}),
           "split at " + std::to_string(k));
  }
  std::vector<std::string_view> bytes;
  for (std::size_t k = 0; k < message.size(); ++k) bytes.push_back(message.substr(k, 1));
  agrees(feed_chunks<Parser, Head>(bytes), "byte by byte");
  return whole;
}

bool same_request(const RequestHead& a, const RequestHead& b) {
  return a.method == b.method && a.form == b.form && a.target == b.target && a.host == b.host &&
         a.port == b.port && a.path == b.path && a.minor_version == b.minor_version &&
         a.headers == b.headers && a.body == b.body;
}

bool same_response(const ResponseHead& a, const ResponseHead& b) {
  return a.minor_version == b.minor_version && a.status == b.status && a.reason == b.reason &&
         a.headers == b.headers;
}

Outcome<RequestHeadParser, RequestHead> request(std::string_view message) {
  return feed_every_split<RequestHeadParser, RequestHead>(message, same_request);
}

Outcome<ResponseHeadParser, ResponseHead> response(std::string_view message) {
  return feed_every_split<ResponseHeadParser, ResponseHead>(message, same_response);
}

RequestHead request_head(std::string_view message) {
  auto outcome = message.size() > 1024 ? feed_chunks<RequestHeadParser, RequestHead>({message})
                                       : request(message);
  if (auto* error = std::get_if<HttpError>(&outcome.result)) {
    ADD_FAILURE() << "unexpected " << error->status << " " << error->reason;
    return {};
  }
  if (!std::holds_alternative<RequestHead>(outcome.result)) {
    ADD_FAILURE() << "incomplete";
    return {};
  }
  return std::get<RequestHead>(outcome.result);
}

// Big messages are fed whole only (splitting them at every byte is quadratic).
HttpError request_error(std::string_view message) {
  auto outcome = message.size() > 1024 ? feed_chunks<RequestHeadParser, RequestHead>({message})
                                       : request(message);
  if (!std::holds_alternative<HttpError>(outcome.result)) {
    ADD_FAILURE() << "no error for: " << message;
    return {};
  }
  return std::get<HttpError>(outcome.result);
}

// ---- request heads ---------------------------------------------------------------------------

TEST(RequestHeadParser, ConnectAuthorityForm) {
  const auto outcome = request(
      "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nUser-Agent: curl/8\r\n\r\n"
      "\x16\x03\x01 early tunnel bytes");
  const auto& head = std::get<RequestHead>(outcome.result);
  EXPECT_EQ(head.method, "CONNECT");
  EXPECT_EQ(head.form, TargetForm::Authority);
  EXPECT_EQ(head.host, "example.com");
  EXPECT_EQ(head.port, 443);
  EXPECT_EQ(head.minor_version, 1);
  EXPECT_EQ(head.headers,
            (std::vector<Header>{{"Host", "example.com:443"}, {"User-Agent", "curl/8"}}));
  EXPECT_EQ(head.body, BodyFraming{});
  EXPECT_EQ(outcome.rest, "\x16\x03\x01 early tunnel bytes");
}

TEST(RequestHeadParser, AbsoluteFormWithBareLfLineEndsAndPipelinedNext) {
  const auto outcome = request(
      "\r\n\nGET http://Example.com:8080/a/b?q=1&r=%20 HTTP/1.0\n"
      "Host: ignored.example\nX-Empty:\nX-Spaces: \t a b \t\n\nGET http://next/ HTTP/1.1\r\n");
  const auto& head = std::get<RequestHead>(outcome.result);
  EXPECT_EQ(head.method, "GET");
  EXPECT_EQ(head.form, TargetForm::Absolute);
  EXPECT_EQ(head.host, "Example.com");
  EXPECT_EQ(head.port, 8080);
  EXPECT_EQ(head.path, "/a/b?q=1&r=%20");
  EXPECT_EQ(head.minor_version, 0);
  EXPECT_EQ(head.headers, (std::vector<Header>{
                              {"Host", "ignored.example"}, {"X-Empty", ""}, {"X-Spaces", "a b"}}));
  EXPECT_EQ(outcome.rest, "GET http://next/ HTTP/1.1\r\n");
}

TEST(RequestHeadParser, AbsoluteFormDefaults) {
  auto head = request_head("GET http://example.com HTTP/1.1\r\n\r\n");
  EXPECT_EQ(head.host, "example.com");
  EXPECT_EQ(head.port, 80);
  EXPECT_EQ(head.path, "/");
  head = request_head("GET HTTP://example.com?x=1 HTTP/1.1\r\n\r\n");
  EXPECT_EQ(head.path, "/?x=1");
  head = request_head("GET http://[::1]:8080/ HTTP/1.1\r\n\r\n");
  EXPECT_EQ(head.host, "[::1]");
  EXPECT_EQ(head.port, 8080);
  head = request_head("GET http://[::1]/ HTTP/1.1\r\n\r\n");
  EXPECT_EQ(head.host, "[::1]");
  EXPECT_EQ(head.port, 80);
}

TEST(RequestHeadParser, OriginAndAsteriskFormsAreFlagged) {
  auto head = request_head("GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n");
  EXPECT_EQ(head.form, TargetForm::Origin);
  EXPECT_EQ(head.path, "/index.html");
  head = request_head("OPTIONS * HTTP/1.1\r\n\r\n");
  EXPECT_EQ(head.form, TargetForm::Asterisk);
}

TEST(RequestHeadParser, BodyFraming) {
  EXPECT_EQ(request_head("POST http://e.com/ HTTP/1.1\r\nContent-Length: 12\r\n\r\n").body,
            (BodyFraming{BodyFraming::Kind::Length, 12}));
  EXPECT_EQ(request_head("POST http://e.com/ HTTP/1.1\r\nContent-Length: 0\r\n\r\n").body,
            (BodyFraming{BodyFraming::Kind::Length, 0}));
  EXPECT_EQ(request_head("POST http://e.com/ HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n").body,
            (BodyFraming{BodyFraming::Kind::Chunked, 0}));
  EXPECT_EQ(
      request_head("POST http://e.com/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n").body,
      (BodyFraming{BodyFraming::Kind::Chunked, 0}));
  EXPECT_EQ(request_head("GET http://e.com/ HTTP/1.1\r\n\r\n").body, BodyFraming{});
}

TEST(RequestHeadParser, OneMebibyteRequestLineIsRefusedAt8KiB) {
  std::string line = "GET http://example.com/" + std::string(1 << 20, 'a');
  RequestHeadParser parser;
  std::size_t fed = 0;
  HeadParse<RequestHead> result = NeedMore{};
  while (fed < line.size() && std::holds_alternative<NeedMore>(result)) {
    const std::size_t n = std::min<std::size_t>(4096, line.size() - fed);
    result = parser.feed(std::string_view(line).substr(fed, n));
    fed += n;
  }
  ASSERT_TRUE(std::holds_alternative<HttpError>(result));
  EXPECT_EQ(std::get<HttpError>(result).status, 414);
  EXPECT_LE(fed, kMaxRequestLine + 4096);
  // Every later call gives the same error.
  EXPECT_EQ(std::get<HttpError>(parser.feed("\r\n\r\n")).status, 414);
}

TEST(RequestHeadParser, RequestLineLimitIsExact) {
  const std::string prefix = "GET http://example.com/";
  const std::string suffix = " HTTP/1.1";
  const std::string fits =
      prefix + std::string(kMaxRequestLine - prefix.size() - suffix.size(), 'a') + suffix;
  ASSERT_EQ(fits.size(), kMaxRequestLine);
  EXPECT_EQ(request_head(fits + "\r\n\r\n").path.size(),
            kMaxRequestLine - prefix.size() - suffix.size() + 1);
  EXPECT_EQ(request_head(fits + "\n\n").method, "GET");
  const std::string over = prefix + "b" + fits.substr(prefix.size());
  EXPECT_EQ(request_error(over + "\r\n\r\n").status, 414);
}

TEST(RequestHeadParser, HeadOver64KiBIs431) {
  std::string message = "GET http://example.com/ HTTP/1.1\r\n";
  while (message.size() <= kMaxHead) message += "X-Filler: " + std::string(100, 'x') + "\r\n";
  EXPECT_EQ(request_error(message + "\r\n").status, 431);
  // Endless empty lines before the request line are bounded too.
  EXPECT_EQ(request_error(std::string(kMaxHead + 2, '\n')).status, 431);
}

struct BadRequest {
  std::string message;
  int status;
  std::string reason;
};

class RequestHeadErrors : public testing::TestWithParam<BadRequest> {};

TEST_P(RequestHeadErrors, AnswerWithTheStatus) {
  const auto& c = GetParam();
  const HttpError error = request_error(c.message);
  EXPECT_EQ(error.status, c.status) << c.message;
  EXPECT_EQ(error.reason, c.reason) << c.message;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RequestHeadErrors,
    testing::Values(
        BadRequest{std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n\n", 13), 400,
                   "malformed request line"},
        BadRequest{"garbage\r\n\r\n", 400, "malformed request line"},
        BadRequest{"GET  http://e.com/ HTTP/1.1\r\n\r\n", 400, "malformed request line"},
        BadRequest{"GET http://e.com/ HTTP/1.1 \r\n\r\n", 400, "malformed request line"},
        BadRequest{"G@T http://e.com/ HTTP/1.1\r\n\r\n", 400, "malformed method"},
        BadRequest{"GET http://e.com/\x01 HTTP/1.1\r\n\r\n", 400, "malformed request-target"},
        BadRequest{"GET http://e.com/ http/1.1\r\n\r\n", 400, "malformed HTTP version"},
        BadRequest{"GET http://e.com/ HTTP/1.10\r\n\r\n", 400, "malformed HTTP version"},
        BadRequest{"GET http://e.com/ HTTP/2.0\r\n\r\n", 505,
                   "HTTP version other than 1.0 and 1.1"},
        BadRequest{"GET http://e.com/ HTTP/1.2\r\n\r\n", 505,
                   "HTTP version other than 1.0 and 1.1"},
        BadRequest{"GET https://e.com/ HTTP/1.1\r\n\r\n", 400,
                   "https:// URL in absolute-form (HTTPS goes through CONNECT)"},
        BadRequest{"GET ftp://e.com/ HTTP/1.1\r\n\r\n", 400, "URL scheme other than http"},
        BadRequest{"GET http://u:p@e.com/ HTTP/1.1\r\n\r\n", 400, "user information in the URL"},
        BadRequest{"GET http://e.com/#frag HTTP/1.1\r\n\r\n", 400,
                   "fragment in the request-target"},
        BadRequest{"GET http:///path HTTP/1.1\r\n\r\n", 400, "URL without a host"},
        BadRequest{"GET http://e.com:0/ HTTP/1.1\r\n\r\n", 400,
                   "URL authority has a port that is not a number between 1 and 65535"},
        BadRequest{"GET http://e.com:/ HTTP/1.1\r\n\r\n", 400, "URL authority has an empty port"},
        BadRequest{"GET http://[::1/ HTTP/1.1\r\n\r\n", 400,
                   "URL authority has an unterminated '['"},
        BadRequest{"GET e.com:80 HTTP/1.1\r\n\r\n", 400,
                   "request-target is not an absolute http:// URL"},
        BadRequest{"CONNECT example.com HTTP/1.1\r\n\r\n", 400, "CONNECT target has no port"},
        BadRequest{"CONNECT http://example.com:443/ HTTP/1.1\r\n\r\n", 400,
                   "CONNECT target has a port that is not a number between 1 and 65535"},
        BadRequest{"CONNECT example.com:99999 HTTP/1.1\r\n\r\n", 400,
                   "CONNECT target has a port that is not a number between 1 and 65535"},
        BadRequest{"GET http://e.com/ HTTP/1.1\r\nX: a\r\n folded\r\n\r\n", 400,
                   "obs-fold (a header line starting with whitespace)"},
        BadRequest{"GET http://e.com/ HTTP/1.1\r\n Leading: x\r\n\r\n", 400,
                   "obs-fold (a header line starting with whitespace)"},
        BadRequest{"GET http://e.com/ HTTP/1.1\r\nHost : e.com\r\n\r\n", 400,
                   "whitespace between a header name and ':'"},
        BadRequest{"GET http://e.com/ HTTP/1.1\r\nNo colon\r\n\r\n", 400,
                   "header line without ':'"},
        BadRequest{"GET http://e.com/ HTTP/1.1\r\n: empty\r\n\r\n", 400, "malformed header name"},
        BadRequest{"GET http://e.com/ HTTP/1.1\r\nX: a\rb\r\n\r\n", 400, "bare CR in the head"},
        BadRequest{std::string("GET http://e.com/ HTTP/1.1\r\nX: a\0b\r\n\r\n", 38), 400,
                   "control character in a header value"},
        BadRequest{"POST http://e.com/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
                   400, "more than one Content-Length"},
        BadRequest{"POST http://e.com/ HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", 400,
                   "malformed Content-Length"},
        BadRequest{"POST http://e.com/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400,
                   "malformed Content-Length"},
        BadRequest{"POST http://e.com/ HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
                   400, "malformed Content-Length"},
        BadRequest{"POST http://e.com/ HTTP/1.1\r\nContent-Length: 5\r\n"
                   "Transfer-Encoding: chunked\r\n\r\n",
                   400, "Content-Length together with Transfer-Encoding"},
        BadRequest{"POST http://e.com/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 400,
                   "Transfer-Encoding whose last coding is not chunked"},
        BadRequest{"POST http://e.com/ HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400,
                   "Transfer-Encoding whose last coding is not chunked"},
        BadRequest{"POST http://e.com/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                   "Transfer-Encoding: chunked\r\n\r\n",
                   400, "Transfer-Encoding whose last coding is not chunked"},
        BadRequest{std::string("POST http://e.com/ HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n"), 400,
                   "Transfer-Encoding whose last coding is not chunked"}));

TEST(RequestHeadParser, IncompleteHeadNeedsMore) {
  EXPECT_TRUE(std::holds_alternative<NeedMore>(
      request("GET http://example.com/ HTTP/1.1\r\nHost: x\r\n").result));
  EXPECT_TRUE(std::holds_alternative<NeedMore>(request("\r\n\r\n").result));
}

TEST(RequestHeadParser, ResetParsesTheNextRequest) {
  RequestHeadParser parser;
  const std::string two =
      "GET http://a.example/ HTTP/1.1\r\n\r\nGET http://b.example/x HTTP/1.1\r\n\r\n";
  auto first = parser.feed(two);
  const auto& parsed = std::get<Parsed<RequestHead>>(first);
  EXPECT_EQ(parsed.head.host, "a.example");
  parser.reset();
  auto second = parser.feed(std::string_view(two).substr(parsed.consumed));
  EXPECT_EQ(std::get<Parsed<RequestHead>>(second).head.path, "/x");
}

TEST(KeepAlive, FollowsVersionAndConnection) {
  EXPECT_TRUE(wants_keep_alive(request_head("GET http://e.com/ HTTP/1.1\r\n\r\n")));
  EXPECT_FALSE(
      wants_keep_alive(request_head("GET http://e.com/ HTTP/1.1\r\nConnection: Close\r\n\r\n")));
  EXPECT_FALSE(
      wants_keep_alive(request_head("GET http://e.com/ HTTP/1.1\r\nConnection: x, close\r\n\r\n")));
  EXPECT_FALSE(wants_keep_alive(
      request_head("GET http://e.com/ HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")));
}

// ---- forwarded heads -------------------------------------------------------------------------

TEST(UpstreamRequestHead, StripsHopByHopAndSetsHost) {
  const auto head = request_head(
      "POST http://Example.com/api?x=1 HTTP/1.1\r\n"
      "Host: evil.example\r\n"
      "Proxy-Connection: keep-alive\r\n"
      "Connection: keep-alive, X-Secret, Content-Length, Host\r\n"
      "Keep-Alive: timeout=5\r\n"
      "Proxy-Authorization: Basic Zm9vOmJhcg==\r\n"
      "X-Secret: s\r\n"
      "TE: trailers\r\n"
      "Trailer: X-T\r\n"
      "Upgrade: websocket\r\n"
      "Accept: */*\r\n"
      "Content-Length: 3\r\n"
      "X-Other: o\r\n\r\n");
  EXPECT_EQ(upstream_request_head(head, "example.com", 80),
            "POST /api?x=1 HTTP/1.1\r\n"
            "Host: example.com\r\n"
            "Accept: */*\r\n"
            "X-Other: o\r\n"
            "Content-Length: 3\r\n"
            "Connection: close\r\n\r\n");
}

TEST(UpstreamRequestHead, KeepAliveLeavesOutConnectionClose) {
  const auto head =
      request_head("GET http://example.com/a HTTP/1.1\r\nConnection: close\r\nAccept: */*\r\n\r\n");
  EXPECT_EQ(upstream_request_head(head, "example.com", 80, UpstreamConnection::KeepAlive),
            "GET /a HTTP/1.1\r\n"
            "Host: example.com\r\n"
            "Accept: */*\r\n\r\n");
}

TEST(UpstreamRequestHead, KeepsChunkedFramingPortAndVersion) {
  const auto head = request_head(
      "PUT http://example.com:8080/u HTTP/1.0\r\nTransfer-Encoding: gzip, chunked\r\n\r\n");
  EXPECT_EQ(upstream_request_head(head, "example.com", 8080),
            "PUT /u HTTP/1.0\r\n"
            "Host: example.com:8080\r\n"
            "Transfer-Encoding: gzip, chunked\r\n"
            "Connection: close\r\n\r\n");
}

// ---- response heads --------------------------------------------------------------------------

TEST(ResponseHeadParser, ParsesAcrossEverySplit) {
  const auto outcome =
      response("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello");
  const auto& head = std::get<ResponseHead>(outcome.result);
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.reason, "OK");
  EXPECT_EQ(head.headers.size(), 2u);
  EXPECT_EQ(outcome.rest, "hello");
  EXPECT_EQ(response_body_framing(head, "GET").value(),
            (BodyFraming{BodyFraming::Kind::Length, 5}));
}

TEST(ResponseHeadParser, StatusLineVariants) {
  auto head = std::get<ResponseHead>(response("HTTP/1.0 404 \n\n").result);
  EXPECT_EQ(head.status, 404);
  EXPECT_EQ(head.reason, "");
  head = std::get<ResponseHead>(response("HTTP/1.1 204\r\n\r\n").result);
  EXPECT_EQ(head.status, 204);
  head = std::get<ResponseHead>(response("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200").result);
  EXPECT_EQ(head.status, 100);
}

TEST(ResponseHeadParser, MalformedIs502) {
  for (const char* bad : {"HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n",
                          "HTTP/1.1 099 X\r\n\r\n", "HTTP/1.1 200OK\r\n\r\n", "ICY 200 OK\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nX : y\r\n\r\n", "HTTP/1.1 200 O\x01K\r\n\r\n"}) {
    const auto outcome = response(bad);
    ASSERT_TRUE(std::holds_alternative<HttpError>(outcome.result)) << bad;
    EXPECT_EQ(std::get<HttpError>(outcome.result).status, 502) << bad;
  }
  std::string huge = "HTTP/1.1 200 " + std::string(kMaxRequestLine, 'x') + "\r\n\r\n";
  EXPECT_EQ(std::get<HttpError>(ResponseHeadParser().feed(huge)).status, 502);
}

BodyFraming framing(std::string_view head_text, std::string_view method = "GET") {
  const auto head = parse_response_head(head_text);
  EXPECT_TRUE(head.has_value()) << head_text;
  const auto result = response_body_framing(*head, method);
  EXPECT_TRUE(result.has_value()) << head_text;
  return result.value_or(BodyFraming{});
}

TEST(ResponseBodyFraming, FollowsRfc9112Section6_3) {
  using K = BodyFraming::Kind;
  EXPECT_EQ(framing("HTTP/1.1 200 OK\r\nContent-Length: 5", "HEAD"), BodyFraming{});
  EXPECT_EQ(framing("HTTP/1.1 100 Continue"), BodyFraming{});
  EXPECT_EQ(framing("HTTP/1.1 204 No Content\r\nContent-Length: 5"), BodyFraming{});
  EXPECT_EQ(framing("HTTP/1.1 304 Not Modified\r\nContent-Length: 5"), BodyFraming{});
  EXPECT_EQ(framing("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"), (BodyFraming{K::Chunked}));
  EXPECT_EQ(framing("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5"),
            (BodyFraming{K::Chunked}));
  EXPECT_EQ(framing("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip"), (BodyFraming{K::UntilClose}));
  EXPECT_EQ(framing("HTTP/1.1 200 OK"), (BodyFraming{K::UntilClose}));
  EXPECT_EQ(framing("HTTP/1.1 200 OK\r\nContent-Length: 5, 5"), (BodyFraming{K::Length, 5}));
  EXPECT_EQ(framing("HTTP/1.1 200 OK\r\nContent-Length: 0"), (BodyFraming{K::Length, 0}));
  for (const char* bad :
       {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6",
        "HTTP/1.1 200 OK\r\nContent-Length: x", "HTTP/1.1 200 OK\r\nContent-Length:"}) {
    const auto head = parse_response_head(bad);
    ASSERT_TRUE(head.has_value()) << bad;
    const auto result = response_body_framing(*head, "GET");
    ASSERT_FALSE(result.has_value()) << bad;
    EXPECT_EQ(result.error().status, 502);
  }
}

TEST(DownstreamResponseHead, StripsHopByHopAndSetsFraming) {
  const auto head = parse_response_head(
                        "HTTP/1.1 200 Fine\r\nConnection: keep-alive, X-Hop\r\nKeep-Alive: 5\r\n"
                        "X-Hop: h\r\nProxy-Authenticate: Basic\r\nUpgrade: h2c\r\n"
                        "Content-Length: 5\r\nContent-Type: text/plain\r\nTrailer: X")
                        .value();
  EXPECT_EQ(
      downstream_response_head(head, {BodyFraming::Kind::Length, 5}, ClientConnection::KeepAlive),
      "HTTP/1.1 200 Fine\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n");
  EXPECT_EQ(downstream_response_head(head, {BodyFraming::Kind::Length, 5}, ClientConnection::Close),
            "HTTP/1.1 200 Fine\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
            "Connection: close\r\n\r\n");
}

TEST(DownstreamResponseHead, KeepsTransferEncodingAndHeadLengths) {
  auto head = parse_response_head(
                  "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                  "Content-Length: 9")
                  .value();
  EXPECT_EQ(
      downstream_response_head(head, {BodyFraming::Kind::Chunked}, ClientConnection::KeepAlive),
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
  head = parse_response_head("HTTP/1.1 304 Not Modified\r\nContent-Length: 9").value();
  EXPECT_EQ(downstream_response_head(head, {}, ClientConnection::KeepAlive),
            "HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n");
  head = parse_response_head("HTTP/1.1 100 Continue").value();
  EXPECT_EQ(downstream_response_head(head, {}, ClientConnection::Close),
            "HTTP/1.1 100 Continue\r\n\r\n");
}

TEST(ProxyResponses, BlockedIsByteExact) {
  const std::string blocked = blocked_response();
  EXPECT_EQ(blocked,
            "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
            "X-Proxy-Error: blocked-by-allowlist\r\nContent-Length: 39\r\nConnection: close\r\n"
            "\r\nConnection blocked by network allowlist");
  EXPECT_EQ(blocked.size() - blocked.find("\r\n\r\n") - 4, 39u);
  EXPECT_EQ(error_response(400, "bad"),
            "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n"
            "Connection: close\r\n\r\nbad\n");
  EXPECT_EQ(reason_phrase(414), "URI Too Long");
  EXPECT_EQ(reason_phrase(431), "Request Header Fields Too Large");
}

// ---- chunked bodies --------------------------------------------------------------------------

// Scans `chunks` and returns the total body length, or -1 on error / incomplete.
long scan_chunks(const std::vector<std::string_view>& chunks, HttpError* error = nullptr) {
  ChunkedBodyScanner scanner;
  std::size_t total = 0;
  for (std::string_view chunk : chunks) {
    const auto step = scanner.scan(chunk);
    if (!step) {
      if (error) *error = step.error();
      return -1;
    }
    total += step->consumed;
    if (step->done) return static_cast<long>(total);
    EXPECT_EQ(step->consumed, chunk.size());
  }
  return -1;
}

TEST(ChunkedBodyScanner, FindsTheEndAcrossEverySplit) {
  const std::string body =
      "4\r\nWiki\r\n5;name=value;x=\"q\"\r\npedia\r\nE \r\n in\r\n\r\nchunks.\r\n"
      "10\nabcdefghijklmnop\n0\r\nTrailer: x\r\nOther: y\r\n\r\n";
  const std::string message = body + "HTTP/1.1 200 OK\r\n";
  for (std::size_t k = 0; k <= message.size(); ++k) {
    const std::string_view m = message;
    EXPECT_EQ(scan_chunks({m.substr(0, k), m.substr(k)}), static_cast<long>(body.size())) << k;
  }
  std::vector<std::string_view> bytes;
  for (std::size_t k = 0; k < message.size(); ++k)
    bytes.push_back(std::string_view(message).substr(k, 1));
  EXPECT_EQ(scan_chunks(bytes), static_cast<long>(body.size()));
  EXPECT_EQ(scan_chunks({"0\r\n\r\n"}), 5);
  EXPECT_EQ(scan_chunks({"0\n\n"}), 3);
  EXPECT_EQ(scan_chunks({"000\r\n\r\nX"}), 7);
  EXPECT_EQ(scan_chunks({"3\r\nab"}), -1);  // incomplete
}

TEST(ChunkedBodyScanner, RefusesMalformedBodies) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"x\r\n", "chunk size is not a hex number"},
      {"\r\n", "chunk size is not a hex number"},
      {"-1\r\n", "chunk size is not a hex number"},
      {"11111111111111111\r\n", "chunk size longer than 16 hex digits"},
      {"3\r\nabcd\r\n", "chunk data longer than its size"},
      {"3\rx", "bare CR in a chunk size line"},
      {"3\r\nabc\rx", "bare CR after chunk data"},
      {"3 x\r\n", "malformed chunk size line"},
      {"3;a\x01\r\n", "control character in a chunk extension"},
      {"0\r\nX: y\r\n\rx", "bare CR in the trailer section"},
      {"1;" + std::string(5000, 'e') + "\r\n", "chunk size line longer than 4 KiB"},
      {"0\r\n" + std::string(kMaxHead + 1, 'x'), "trailer section larger than 64 KiB"},
  };
  for (const auto& [body, reason] : cases) {
    HttpError error;
    EXPECT_EQ(scan_chunks({body}, &error), -1) << body.substr(0, 20);
    EXPECT_EQ(error.status, 400);
    EXPECT_EQ(error.reason, reason) << body.substr(0, 20);
  }
  ChunkedBodyScanner response_scanner(502);
  EXPECT_EQ(response_scanner.scan("zz").error().status, 502);
  EXPECT_EQ(response_scanner.scan("0\r\n\r\n").error().status, 502);  // stays failed
}

}  // namespace
}  // namespace pisandbox::proxy
