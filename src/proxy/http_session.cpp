// The HTTP proxy protocol on one client connection (docs/network.md, "Answers the command sees";
// compatibility C43-C45): CONNECT → 200 and a tunnel; absolute-form requests forwarded one by one
// on a keep-alive connection, each decided separately; everything else answered with an error.
// Through a parent proxy both kinds are tunnelled with CONNECT (docs/network.md, "A parent
// proxy"): the absolute-form request then goes to the destination in origin-form, as directly.
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/write.hpp>
#include <utility>

#include "proxy/protocol/credential.hpp"
#include "proxy/protocol/destination.hpp"
#include "proxy/protocol/http.hpp"
#include "proxy/session.hpp"

namespace pisandbox::proxy {
namespace {

constexpr std::string_view kConnectEstablished = "HTTP/1.1 200 Connection Established\r\n\r\n";

std::string target_text(const std::string& host, std::uint16_t port) {
  return host + ":" + std::to_string(port);
}

class HttpSession final : public Session {
 public:
  using Session::Session;

 protected:
  asio::awaitable<void> run() override;
  [[nodiscard]] std::string refusal() const override { return blocked_response(); }

 private:
  asio::awaitable<std::optional<RequestHead>> read_request_head();
  asio::awaitable<bool> handle(const RequestHead& head);
  asio::awaitable<bool> serve_host(const RequestHead& head);
  asio::awaitable<bool> exchange(const RequestHead& head, const std::string& host);
  enum class Outcome { Failed, KeepAlive, Close };
  asio::awaitable<Outcome> relay_response(const RequestHead& head, const std::string& failed);
  asio::awaitable<void> upload_body(BodyFraming framing);
  asio::awaitable<bool> read_upstream(std::string& into);
  asio::awaitable<bool> write_upstream(std::string_view bytes);
  asio::awaitable<bool> forward_response_body(const BodyFraming& framing, std::string& pending);
  asio::awaitable<void> answer(int status, std::string_view what, std::string_view detail);
  asio::awaitable<void> refuse(std::string_view what, std::string_view detail);

  RequestHeadParser parser_;
  // Ends upload_body() (its pending read of the client) before this coroutine reads the
  // client or answers; the upload then stops without closing the connection.
  void end_upload() {
    if (!upload_running_) return;
    upload_stopped_ = true;
    asio::error_code ignored;
    client_.cancel(ignored);
  }

  bool body_done_ = true;
  bool upload_running_ = false;
  bool upload_stopped_ = false;
};

asio::awaitable<void> HttpSession::run() {
  while (!closed_) {
    auto head = co_await read_request_head();
    if (!head) break;
    if (!co_await handle(*head)) break;
    quiet_timeout_ = true;  // from now on, waiting for a next request that may never come
  }
}

// Reads one request head; answers and returns nullopt on a parse error, returns nullopt
// quietly when the client closes or the head timeout passes (slowloris).
asio::awaitable<std::optional<RequestHead>> HttpSession::read_request_head() {
  phase_ = Phase::Handshake;
  parser_.reset();
  set_deadline(context_.options.head_timeout, Extend::Never);
  while (true) {
    if (!in_.empty()) {
      auto result = parser_.feed(in_);
      quiet_timeout_ = false;
      if (auto* parsed = std::get_if<Parsed<RequestHead>>(&result)) {
        in_.erase(0, parsed->consumed);
        co_return std::move(parsed->head);
      }
      if (auto* error = std::get_if<HttpError>(&result)) {
        co_await answer(error->status, "bad request", error->reason);
        co_return std::nullopt;
      }
      in_.clear();  // the parser keeps what it needs
    }
    if (!co_await read_more()) co_return std::nullopt;
  }
}

asio::awaitable<void> HttpSession::answer(int status, std::string_view what,
                                          std::string_view detail) {
  end_upload();
  report(what, detail);
  const std::string response = error_response(status, detail);
  if (co_await write_client(response)) co_await close_gracefully();
}

asio::awaitable<void> HttpSession::refuse(std::string_view what, std::string_view detail) {
  report(what, detail);
  const std::string response = blocked_response();
  if (co_await write_client(response)) co_await close_gracefully();
}

// One request: decide, resolve, connect; then tunnel (CONNECT) or forward (absolute-form).
// Returns whether the connection stays open for another request.
asio::awaitable<bool> HttpSession::handle(const RequestHead& head) {
  // The per-command credential before anything else: no decision, no lookup, no question for a
  // client that does not have it (ServerOptions::credential).
  if (context_.options.credential &&
      !proxy_authorization_matches(head.headers, *context_.options.credential)) {
    report(head.method + " " + target_text(head.host, head.port) + " refused",
           "the request does not carry the proxy's credential (407)");
    if (co_await write_client(proxy_authentication_required_response()))
      co_await close_gracefully();
    co_return false;
  }
  if (head.form == TargetForm::Absolute && head.host == kHostServiceHost)
    co_return co_await serve_host(head);
  if (head.form == TargetForm::Origin || head.form == TargetForm::Asterisk) {
    co_await answer(400, "bad request",
                    "this is a proxy: send an absolute http:// URL or use CONNECT");
    co_return false;
  }
  const std::string what = head.method + " " + target_text(head.host, head.port);
  const std::string refused = what + " refused";
  const std::string failed = what + " failed";
  const auto host = normalise_host(head.host);
  if (!host) {
    const std::string detail = "the host " + host.error();
    note_refusal(target_text(head.host, head.port), detail);
    co_await refuse(refused, detail);
    co_return false;
  }
  const ParentUse use =
      head.form == TargetForm::Authority ? ParentUse::Tunnel : ParentUse::PlainHttp;
  const Verdict verdict = co_await check_destination(*host, head.port, use);
  if (closed_) co_return false;
  if (verdict.kind == Verdict::Kind::Refused) {
    if (!verdict.reported) note_refusal(target_text(*host, head.port), verdict.reason);
    co_await refuse(refused, verdict.reason);
    co_return false;
  }
  if (verdict.kind == Verdict::Kind::Unreachable) {
    co_await answer(502, failed, verdict.reason);
    co_return false;
  }
  const auto failure = co_await connect_destination(verdict, *host, head.port);
  if (closed_) co_return false;
  if (failure) {
    const std::string detail =
        failure->parent
            ? failure->message
            : "could not connect to " + target_text(*host, head.port) + ": " + failure->message;
    co_await answer(502, failed, detail);
    co_return false;
  }
  if (head.form == TargetForm::Authority) {
    if (co_await write_client(kConnectEstablished)) co_await relay();
    co_return false;
  }
  co_return co_await exchange(head, *host);
}

// A request of pi-sandbox's own helper inside (ServerOptions::host_service): its body read whole,
// the answer made on a worker (it may wait for a human), then sent, and the connection closed.
asio::awaitable<bool> HttpSession::serve_host(const RequestHead& head) {
  const std::string what = head.method + " " + std::string(kHostServiceHost) + head.path;
  if (head.method != "POST" || head.body.kind != BodyFraming::Kind::Length ||
      head.body.length > kMaxHostServiceBody || !context_.options.host_service) {
    const std::string refused = what + " refused";
    co_await refuse(refused,
                    "not a request of pi-sandbox's helper (POST with a body of at most 65536 "
                    "bytes)");
    co_return false;
  }
  const auto length = static_cast<std::size_t>(head.body.length);
  while (in_.size() < length)
    if (!co_await read_more()) co_return false;
  const std::string body = in_.substr(0, length);
  in_.clear();
  phase_ = Phase::Deciding;
  set_deadline(std::chrono::steady_clock::duration::max(), Extend::Never);
  auto answer = std::make_shared<HostServiceAnswer>();
  std::function<Verdict()> job = [answer, service = context_.options.host_service, path = head.path,
                                  body] {
    try {
      *answer = service(path, body);
    } catch (...) {
      *answer = HostServiceAnswer{false, "pi-sandbox: the host could not answer"};
    }
    return Verdict{Verdict::Kind::Allowed, {}, {}};
  };
  const Verdict none{Verdict::Kind::Refused, "no answer", {}};
  const std::chrono::seconds no_limit{0};  // a question has its own deadline
  const Verdict done = co_await blocking_call(context_, job, no_limit, none);
  if (closed_) co_return false;
  const bool given = done.kind == Verdict::Kind::Allowed && answer->given;
  const std::string body_out = done.kind == Verdict::Kind::Allowed
                                   ? answer->body
                                   : std::string("pi-sandbox: the host could not answer");
  const std::string response =
      std::string(given ? "HTTP/1.1 200 OK\r\n" : "HTTP/1.1 403 Forbidden\r\n") +
      "Content-Type: text/plain\r\nContent-Length: " + std::to_string(body_out.size()) +
      "\r\nConnection: close\r\n\r\n" + body_out;
  phase_ = Phase::Closing;
  if (co_await write_client(response)) co_await close_gracefully();
  co_return false;
}

asio::awaitable<bool> HttpSession::read_upstream(std::string& into) {
  if (closed_) co_return false;
  std::array<char, 16 * 1024> buffer;
  auto [error, n] = co_await upstream_.async_read_some(asio::buffer(buffer), kNoThrow);
  if (error) co_return false;
  into.append(buffer.data(), n);
  touch();
  co_return true;
}

asio::awaitable<bool> HttpSession::write_upstream(std::string_view bytes) {
  if (closed_) co_return false;
  auto [error, n] = co_await asio::async_write(upstream_, asio::buffer(bytes), kNoThrow);
  touch();
  co_return !error;
}

// The request body, client → server, as it arrives (docs/network.md: request bodies forwarded with
// correct framing). Bytes after the body stay in in_ for the next request. A client that
// stops sending mid-body or sends a malformed chunked body ends the connection (the server
// would wait for the rest); a server that stops reading ends only the upload, since its
// answer may be on the way (exchange() then closes after it).
asio::awaitable<void> HttpSession::upload_body(BodyFraming framing) {
  std::uint64_t remaining = framing.length;
  ChunkedBodyScanner scanner(400);
  bool client_failed = false;
  while (!closed_) {
    if (in_.empty() && !co_await read_more()) {
      client_failed = !upload_stopped_;
      break;
    }
    std::size_t take = 0;
    bool done = false;
    if (framing.kind == BodyFraming::Kind::Length) {
      take = static_cast<std::size_t>(std::min<std::uint64_t>(remaining, in_.size()));
      remaining -= take;
      done = remaining == 0;
    } else {
      const auto step = scanner.scan(in_);
      if (!step) {
        report("request body refused", step.error().reason);
        client_failed = true;
        break;
      }
      take = step->consumed;
      done = step->done;
    }
    const std::string chunk = in_.substr(0, take);
    in_.erase(0, take);
    if (!co_await write_upstream(chunk)) break;
    if (done) {
      body_done_ = true;
      break;
    }
  }
  upload_running_ = false;
  if (client_failed) close_all();
}

// Forwards the response body, server → client, per its framing. `pending` holds the bytes
// read after the head. Returns false when the body ended early or a write failed.
asio::awaitable<bool> HttpSession::forward_response_body(const BodyFraming& framing,
                                                         std::string& pending) {
  using Kind = BodyFraming::Kind;
  if (framing.kind == Kind::None) co_return true;
  std::uint64_t remaining = framing.length;
  ChunkedBodyScanner scanner(502);
  while (true) {
    if (framing.kind == Kind::Length && remaining == 0) co_return true;
    if (pending.empty()) {
      if (co_await read_upstream(pending)) continue;
      co_return framing.kind == Kind::UntilClose && !closed_;
    }
    std::size_t take = pending.size();
    bool done = false;
    if (framing.kind == Kind::Length) {
      take = static_cast<std::size_t>(std::min<std::uint64_t>(remaining, pending.size()));
      remaining -= take;
      done = remaining == 0;
    } else if (framing.kind == Kind::Chunked) {
      const auto step = scanner.scan(pending);
      if (!step) {
        report("response body refused", step.error().reason);
        co_return false;
      }
      take = step->consumed;
      done = step->done;
    }
    if (!co_await write_client(std::string_view(pending).substr(0, take))) co_return false;
    pending.clear();  // bytes after the message end: the server's mistake, dropped
    if (done) co_return true;
  }
}

// One absolute-form request: head and body upstream, interim and final response back.
// Returns whether the client connection stays open for another request.
asio::awaitable<bool> HttpSession::exchange(const RequestHead& head, const std::string& host) {
  phase_ = Phase::Relaying;
  set_deadline(context_.options.idle_timeout, Extend::OnActivity);
  const std::string failed = head.method + " " + target_text(host, head.port) + " failed";
  const std::string request_head = upstream_request_head(head, host, head.port);
  if (!co_await write_upstream(request_head)) {
    co_await answer(502, failed, "the server closed the connection");
    co_return false;
  }
  body_done_ = head.body.kind == BodyFraming::Kind::None ||
               (head.body.kind == BodyFraming::Kind::Length && head.body.length == 0);
  upload_stopped_ = false;
  if (!body_done_) {
    upload_running_ = true;
    auto self = std::static_pointer_cast<HttpSession>(shared_from_this());
    asio::co_spawn(
        context_.io,
        [self, framing = head.body]() -> asio::awaitable<void> {
          co_await self->upload_body(framing);
        },
        asio::detached);
  }
  const auto outcome = co_await relay_response(head, failed);
  if (outcome == Outcome::Failed) co_return false;
  asio::error_code ignored;
  upstream_.close(ignored);
  // The server answered before the request body ended: the rest of it cannot be told apart
  // from a next request, so the connection ends here.
  if (!body_done_ || upload_running_ || outcome == Outcome::Close) {
    end_upload();
    co_await close_gracefully();
    co_return false;
  }
  co_return !closed_;
}

// Reads response heads from the server: interim (1xx) ones are forwarded and the next is
// read; the final one is forwarded with its body. Failed: the client got a 502 or a truncated
// connection; otherwise whether the client connection may stay open.
asio::awaitable<HttpSession::Outcome> HttpSession::relay_response(const RequestHead& head,
                                                                  const std::string& failed) {
  ResponseHeadParser parser;
  std::string pending = std::exchange(early_download_, {});  // through a parent: its first bytes
  while (true) {
    if (pending.empty() && !co_await read_upstream(pending)) {
      if (!closed_) co_await answer(502, failed, "the server sent no complete response");
      co_return Outcome::Failed;
    }
    auto result = parser.feed(pending);
    if (auto* error = std::get_if<HttpError>(&result)) {
      co_await answer(502, failed, error->reason);
      co_return Outcome::Failed;
    }
    auto* parsed = std::get_if<Parsed<ResponseHead>>(&result);
    if (parsed == nullptr) {
      pending.clear();
      continue;
    }
    pending.erase(0, parsed->consumed);
    const ResponseHead& response = parsed->head;
    const auto framing = response_body_framing(response, head.method);
    if (response.status == 101 || !framing) {
      const std::string_view why =
          framing ? std::string_view("the server switched protocols") : framing.error().reason;
      co_await answer(502, failed, why);
      co_return Outcome::Failed;
    }
    if (response.status < 200) {  // interim: forward (not to HTTP/1.0, RFC 9110 section 15.2)
      const std::string interim =
          downstream_response_head(response, *framing, ClientConnection::KeepAlive);
      if (head.minor_version > 0 && !co_await write_client(interim)) co_return Outcome::Failed;
      parser.reset();
      continue;
    }
    // An unfinished request body ends the connection after this response (see exchange()).
    const bool keep_alive =
        wants_keep_alive(head) && framing->kind != BodyFraming::Kind::UntilClose && body_done_;
    const std::string response_head = downstream_response_head(
        response, *framing, keep_alive ? ClientConnection::KeepAlive : ClientConnection::Close);
    if (!co_await write_client(response_head)) co_return Outcome::Failed;
    if (!co_await forward_response_body(*framing, pending)) {
      close_all();  // a truncated body must reach the client as a truncated connection
      co_return Outcome::Failed;
    }
    co_return keep_alive ? Outcome::KeepAlive : Outcome::Close;
  }
}

}  // namespace

void start_http_session(ProxyContext& context, tcp::socket client) {
  std::make_shared<HttpSession>(context, std::move(client))->start();
}

}  // namespace pisandbox::proxy
