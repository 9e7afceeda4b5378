// libFuzzer target: untrusted bytes into the proxy's HTTP/1.1 parsers (docs/network.md) — a
// client's request head, a server's response head and a chunked body, each fed whole and
// split in two; the per-command credential's Proxy-Authorization check on a head's fields and on
// a value made of the input; the host of a parsed request goes through the normaliser. Must never
// crash, hang or trip a sanitizer, and must hold these properties: the split does not change the
// result; a forwarded head parses again to the same method, path and framing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "proxy/protocol/credential.hpp"
#include "proxy/protocol/destination.hpp"
#include "proxy/protocol/http.hpp"

namespace {

using namespace pisandbox::proxy;

void require(bool condition) {
  if (!condition) std::abort();
}

template <typename Parser, typename Head>
HeadParse<Head> feed_split(std::string_view text, std::size_t split, std::size_t& consumed) {
  Parser parser;
  auto first = parser.feed(text.substr(0, split));
  if (auto* parsed = std::get_if<Parsed<Head>>(&first)) {
    consumed = parsed->consumed;
    return first;
  }
  if (std::holds_alternative<HttpError>(first)) return first;
  auto second = parser.feed(text.substr(split));
  if (auto* parsed = std::get_if<Parsed<Head>>(&second)) consumed = split + parsed->consumed;
  return second;
}

void check_request(const RequestHead& head) {
  if (head.form == TargetForm::Authority || head.form == TargetForm::Absolute) {
    require(head.port != 0 && !head.host.empty());
    if (auto host = normalise_host(head.host)) {
      require(host->size() <= kMaxHostLength && normalise_host(*host) == *host);
    }
  }
  if (head.form != TargetForm::Absolute) return;
  // Both kinds of upstream connection: one request (Connection: close) or kept (none).
  for (const auto connection : {UpstreamConnection::Close, UpstreamConnection::KeepAlive}) {
    const std::string upstream = upstream_request_head(head, "example.com", head.port, connection);
    RequestHeadParser again;
    auto parsed = again.feed(upstream);
    auto* result = std::get_if<Parsed<RequestHead>>(&parsed);
    require(result != nullptr && result->consumed == upstream.size());
    require(result->head.form == TargetForm::Origin && result->head.method == head.method &&
            result->head.path == head.path && result->head.body == head.body);
    require(wants_keep_alive(result->head) ==
            (connection == UpstreamConnection::KeepAlive && head.minor_version > 0));
  }
}

void fuzz_request(std::string_view text, std::size_t split) {
  std::size_t whole_consumed = 0;
  std::size_t split_consumed = 0;
  const auto whole = feed_split<RequestHeadParser, RequestHead>(text, text.size(), whole_consumed);
  const auto parts = feed_split<RequestHeadParser, RequestHead>(text, split, split_consumed);
  require(whole.index() == parts.index());
  if (auto* error = std::get_if<HttpError>(&whole)) {
    require(*error == std::get<HttpError>(parts));
    require(error->status == 400 || error->status == 414 || error->status == 431 ||
            error->status == 505);
  }
  if (auto* parsed = std::get_if<Parsed<RequestHead>>(&whole)) {
    require(whole_consumed == split_consumed && whole_consumed <= text.size());
    check_request(parsed->head);
    // The per-command credential's check (credential.hpp): a head the fuzzer made matches only
    // if it carries exactly one Proxy-Authorization field with this token.
    const ProxyCredential credential{"pi-sandbox", "0123456789abcdef0123456789abcdef"};
    if (proxy_authorization_matches(parsed->head.headers, credential)) {
      std::size_t fields = 0;
      for (const Header& header : parsed->head.headers)
        if (header.value.ends_with(base64(userinfo(credential)))) ++fields;
      require(fields >= 1);
    }
  }
}

void fuzz_response(std::string_view text, std::size_t split) {
  std::size_t whole_consumed = 0;
  std::size_t split_consumed = 0;
  const auto whole =
      feed_split<ResponseHeadParser, ResponseHead>(text, text.size(), whole_consumed);
  const auto parts = feed_split<ResponseHeadParser, ResponseHead>(text, split, split_consumed);
  require(whole.index() == parts.index());
  auto* parsed = std::get_if<Parsed<ResponseHead>>(&whole);
  if (parsed == nullptr) return;
  require(whole_consumed == split_consumed);
  const auto framing = response_body_framing(parsed->head, "GET");
  if (!framing) return;
  const std::string downstream =
      downstream_response_head(parsed->head, *framing, ClientConnection::Close);
  auto again = parse_response_head(std::string_view(downstream).substr(0, downstream.size() - 2));
  require(again.has_value() && again->status == parsed->head.status);
}

void fuzz_chunked(std::string_view text, std::size_t split) {
  ChunkedBodyScanner whole;
  const auto all = whole.scan(text);
  ChunkedBodyScanner parts;
  auto first = parts.scan(text.substr(0, split));
  std::size_t consumed = 0;
  bool done = false;
  bool failed = !first.has_value();
  if (first) {
    consumed = first->consumed;
    done = first->done;
    if (!done) {
      require(consumed == split);
      auto second = parts.scan(text.substr(split));
      failed = !second.has_value();
      if (second) {
        consumed += second->consumed;
        done = second->done;
      }
    }
  }
  require(all.has_value() != failed);
  if (all) require(all->done == done && all->consumed == consumed);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t split = data[0] % size;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t at = std::min(split, text.size());
  fuzz_request(text, at);
  fuzz_response(text, at);
  fuzz_chunked(text, at);
  // A Proxy-Authorization value made by the fuzzer.
  const ProxyCredential credential{"pi-sandbox", "0123456789abcdef0123456789abcdef"};
  const bool matches =
      proxy_authorization_matches({Header{"Proxy-Authorization", std::string(text)}}, credential);
  if (matches) {
    // Then it is `Basic`, spaces, and exactly the token.
    const std::size_t token = text.find_first_not_of(' ', 6);
    require(text.size() > 6 && text[5] == ' ' && token != std::string_view::npos &&
            text.substr(token) == base64(userinfo(credential)));
  }
  return 0;
}
