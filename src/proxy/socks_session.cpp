// The SOCKS5 protocol on one client connection (RFC 1928; docs/network.md, "Answers the command
// sees"; compatibility C47–C48): no authentication, or the username/password method (RFC 1929)
// with the per-command credential; CONNECT to domain names only, then a tunnel.
#include <array>

#include "proxy/protocol/credential.hpp"
#include "proxy/protocol/destination.hpp"
#include "proxy/protocol/socks5.hpp"
#include "proxy/session.hpp"

namespace pisandbox::proxy {
namespace {

constexpr std::uint8_t kAtypDomain = 0x03;

std::string_view as_text(const auto& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

class SocksSession final : public Session {
 public:
  using Session::Session;

 protected:
  asio::awaitable<void> run() override;
  [[nodiscard]] std::string refusal() const override {
    return std::string(as_text(socks_reply(SocksReply::NotAllowed)));
  }

 private:
  asio::awaitable<bool> negotiate_method();
  asio::awaitable<bool> authenticate();
  asio::awaitable<std::optional<SocksRequest>> read_request();
  asio::awaitable<void> reply_and_close(SocksReply reply, std::string_view what,
                                        std::string_view detail);
};

asio::awaitable<void> SocksSession::reply_and_close(SocksReply reply, std::string_view what,
                                                    std::string_view detail) {
  report(what, detail);
  const auto bytes = socks_reply(reply);
  if (co_await write_client(as_text(bytes))) co_await close_gracefully();
}

// The greeting and the method selection (RFC 1928 section 3).
asio::awaitable<bool> SocksSession::negotiate_method() {
  SocksGreetingParser parser;
  while (true) {
    auto result = parser.feed(in_);
    if (auto* greeting = std::get_if<SocksGreeting>(&result)) {
      in_.erase(0, greeting->consumed);
      const bool password = context_.options.credential.has_value();
      const std::uint8_t method =
          select_method(greeting->methods, password ? SocksAuth::UserPass : SocksAuth::None);
      const auto selection = method_reply(method);
      if (!co_await write_client(as_text(selection))) co_return false;
      if (method == kMethodNoAuth) co_return true;
      if (method == kMethodUserPass) co_return co_await authenticate();
      report("SOCKS5 refused", password ? "the client does not offer the username/password method"
                                        : "the client offers no method without authentication");
      co_await close_gracefully();
      co_return false;
    }
    if (auto* error = std::get_if<SocksError>(&result)) {
      report("SOCKS5 refused", error->reason);
      const auto none = method_reply(kMethodNoneAcceptable);
      if (error->reason == "no authentication methods offered" &&
          co_await write_client(as_text(none))) {
        co_await close_gracefully();
      }
      co_return false;
    }
    in_.clear();
    if (!co_await read_more()) co_return false;
  }
}

// The username/password sub-negotiation (RFC 1929 section 2) against the per-command credential.
asio::awaitable<bool> SocksSession::authenticate() {
  SocksUserPassParser parser;
  while (true) {
    auto result = parser.feed(in_);
    if (auto* given = std::get_if<SocksUserPass>(&result)) {
      in_.erase(0, given->consumed);
      const ProxyCredential& credential = *context_.options.credential;
      // Both compared, always: the time does not say which one differs.
      const bool user = constant_time_equal(given->username, credential.username);
      const bool pass = constant_time_equal(given->password, credential.password);
      const bool accepted = user && pass;
      const auto reply = userpass_reply(accepted);
      if (!co_await write_client(as_text(reply))) co_return false;
      if (accepted) co_return true;
      report("SOCKS5 refused", "the client does not have the proxy's credential");
      co_await close_gracefully();
      co_return false;
    }
    if (auto* error = std::get_if<SocksError>(&result)) {
      report("SOCKS5 refused", error->reason);
      const auto reply = userpass_reply(false);
      if (co_await write_client(as_text(reply))) co_await close_gracefully();
      co_return false;
    }
    in_.clear();
    if (!co_await read_more()) co_return false;
  }
}

// The request (RFC 1928 section 4); answers protocol errors itself.
asio::awaitable<std::optional<SocksRequest>> SocksSession::read_request() {
  SocksRequestParser parser;
  while (true) {
    auto result = parser.feed(in_);
    if (auto* request = std::get_if<SocksRequest>(&result)) {
      in_.erase(0, request->consumed);
      co_return std::move(*request);
    }
    if (auto* error = std::get_if<SocksError>(&result)) {
      co_await reply_and_close(error->reply.value_or(SocksReply::GeneralFailure), "SOCKS5 refused",
                               error->reason);
      co_return std::nullopt;
    }
    in_.clear();
    if (!co_await read_more()) co_return std::nullopt;
  }
}

SocksReply connect_failure_reply(const asio::error_code& code) {
  if (code == asio::error::connection_refused) return SocksReply::ConnectionRefused;
  if (code == asio::error::network_unreachable) return SocksReply::NetworkUnreachable;
  return SocksReply::HostUnreachable;
}

asio::awaitable<void> SocksSession::run() {
  set_deadline(context_.options.head_timeout, Extend::Never);
  if (!co_await negotiate_method()) co_return;
  const auto request = co_await read_request();
  if (!request) co_return;
  const std::string what = "SOCKS5 CONNECT " + request->host + ":" + std::to_string(request->port);
  const std::string refused = what + " refused";
  const std::string failed = what + " failed";
  if (request->command != static_cast<std::uint8_t>(SocksCommand::Connect)) {
    const std::string detail =
        "only CONNECT is supported (command " + std::to_string(request->command) + ")";
    co_await reply_and_close(SocksReply::CommandNotSupported, "SOCKS5 refused", detail);
    co_return;
  }
  // IP destinations are refused like IP literals in HTTP (docs/network.md, "Deciding a destination"
  // and "Answers the command sees").
  if (request->address_type != kAtypDomain) {
    const std::string detail = "IP address destinations are not allowed; send a host name";
    note_refusal(request->host + ":" + std::to_string(request->port), detail);
    co_await reply_and_close(SocksReply::NotAllowed, refused, detail);
    co_return;
  }
  const auto host = normalise_host(request->host);
  if (!host || request->port == 0) {
    const std::string detail = host ? "port 0" : "the host " + host.error();
    note_refusal(request->host + ":" + std::to_string(request->port), detail);
    co_await reply_and_close(SocksReply::NotAllowed, refused, detail);
    co_return;
  }
  const Verdict verdict = co_await check_destination(*host, request->port, ParentUse::Tunnel);
  if (closed_) co_return;
  if (verdict.kind == Verdict::Kind::Refused) {
    if (!verdict.reported)
      note_refusal(*host + ":" + std::to_string(request->port), verdict.reason);
    co_await reply_and_close(SocksReply::NotAllowed, refused, verdict.reason);
    co_return;
  }
  if (verdict.kind == Verdict::Kind::Unreachable) {
    const SocksReply reply =
        verdict.via != nullptr ? SocksReply::GeneralFailure : SocksReply::HostUnreachable;
    co_await reply_and_close(reply, failed, verdict.reason);
    co_return;
  }
  const auto failure = co_await connect_destination(verdict, *host, request->port);
  if (closed_) co_return;
  if (failure) {
    // The parent's failures are no statement about the destination: general failure (0x01).
    const SocksReply reply =
        failure->parent ? SocksReply::GeneralFailure : connect_failure_reply(failure->code);
    co_await reply_and_close(reply, failed, failure->message);
    co_return;
  }
  const auto succeeded = socks_reply(SocksReply::Succeeded);
  if (co_await write_client(as_text(succeeded))) co_await relay();
}

}  // namespace

void start_socks_session(ProxyContext& context, tcp::socket client) {
  std::make_shared<SocksSession>(context, std::move(client))->start();
}

}  // namespace pisandbox::proxy
