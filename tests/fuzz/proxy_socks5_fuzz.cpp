// libFuzzer target: untrusted bytes into the proxy's SOCKS5 parsers (RFC 1928, RFC 1929;
// docs/network.md "Tests"), the host-name normaliser and the address classifier. Must never crash,
// hang or trip a sanitizer; a split must not change the result; a normalised name must be a plain
// ASCII DNS name that normalises to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "proxy/protocol/address.hpp"
#include "proxy/protocol/credential.hpp"
#include "proxy/protocol/destination.hpp"
#include "proxy/protocol/socks5.hpp"

namespace {

using namespace pisandbox::proxy;

void require(bool condition) {
  if (!condition) std::abort();
}

template <typename Parser, typename Message>
std::variant<SocksNeedMore, Message, SocksError> feed_split(std::string_view text,
                                                            std::size_t split) {
  Parser parser;
  auto first = parser.feed(text.substr(0, split));
  if (!std::holds_alternative<SocksNeedMore>(first)) return first;
  auto second = parser.feed(text.substr(split));
  if (auto* message = std::get_if<Message>(&second)) message->consumed += split;
  return second;
}

void check_name(std::string_view text) {
  const auto host = normalise_host(text);
  if (!host) {
    require(!host.error().empty());
    return;
  }
  require(!host->empty() && host->size() <= kMaxHostLength);
  require(host->find('.') != std::string::npos);
  for (char c : *host)
    require((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.');
  require(normalise_host(*host) == *host);
}

void fuzz_greeting(std::string_view text, std::size_t split) {
  const auto whole = feed_split<SocksGreetingParser, SocksGreeting>(text, text.size());
  const auto parts = feed_split<SocksGreetingParser, SocksGreeting>(text, split);
  require(whole.index() == parts.index());
  if (auto* greeting = std::get_if<SocksGreeting>(&whole)) {
    require(greeting->consumed == std::get<SocksGreeting>(parts).consumed);
    require(greeting->methods == std::get<SocksGreeting>(parts).methods);
    require(greeting->consumed == 2 + greeting->methods.size());
    (void)select_method(greeting->methods);
  }
}

void fuzz_request(std::string_view text, std::size_t split) {
  const auto whole = feed_split<SocksRequestParser, SocksRequest>(text, text.size());
  const auto parts = feed_split<SocksRequestParser, SocksRequest>(text, split);
  require(whole.index() == parts.index());
  if (auto* error = std::get_if<SocksError>(&whole)) require(*error == std::get<SocksError>(parts));
  auto* request = std::get_if<SocksRequest>(&whole);
  if (request == nullptr) return;
  const auto& other = std::get<SocksRequest>(parts);
  require(request->consumed == other.consumed && request->host == other.host &&
          request->port == other.port && request->command == other.command);
  if (request->address_type == 3) {
    check_name(request->host);
  } else {
    (void)prohibited_range(request->address);
  }
}

void fuzz_userpass(std::string_view text, std::size_t split) {
  const auto whole = feed_split<SocksUserPassParser, SocksUserPass>(text, text.size());
  const auto parts = feed_split<SocksUserPassParser, SocksUserPass>(text, split);
  require(whole.index() == parts.index());
  auto* given = std::get_if<SocksUserPass>(&whole);
  if (given == nullptr) return;
  const auto& other = std::get<SocksUserPass>(parts);
  require(given->consumed == other.consumed && given->username == other.username &&
          given->password == other.password);
  require(given->consumed == 3 + given->username.size() + given->password.size());
  (void)constant_time_equal(given->username, "pi-sandbox");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t split = std::min<std::size_t>(data[0], text.size());
  fuzz_greeting(text, split);
  fuzz_request(text, split);
  fuzz_userpass(text, split);
  check_name(text);
  if (const auto address = IpAddress::parse(text)) (void)prohibited_range(*address);
  return 0;
}
