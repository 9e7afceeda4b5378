// The HTTP proxy protocol on one client connection (docs/network.md, "Answers the command sees";
// compatibility C43-C45): CONNECT → 200 and a tunnel; absolute-form requests forwarded one by one
// on a keep-alive connection, each decided separately; everything else answered with an error.
// Through a parent proxy both kinds are tunnelled with CONNECT (docs/network.md, "A parent
// proxy"): the absolute-form request then goes to the destination in origin-form, as directly.
#include <algorithm>
#include <array>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/write.hpp>
#include <utility>

#include "proxy/protocol/credential.hpp"
#include "proxy/protocol/destination.hpp"
#include "proxy/protocol/http.hpp"
#include "proxy/protocol/http_syntax.hpp"
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
  asio::awaitable<bool> open_upstream(const RequestHead& head, const std::string& host,
                                      Verdict& verdict, const std::string& failed);
  asio::awaitable<bool> exchange(const RequestHead& head, const std::string& host, Verdict& verdict,
                                 bool reused);
  // Stale: a kept connection gave no byte of a response (the server closed it meanwhile); the
  // request may be sent again on a new one (RFC 9112 section 9.3.1).
  enum class Outcome { Failed, KeepAlive, Close, Stale };
  asio::awaitable<Outcome> relay_response(const RequestHead& head, const std::string& failed,
                                          bool may_retry);
  asio::awaitable<bool> serve_host(const RequestHead& head);
  asio::awaitable<void> upload_body(BodyFraming framing);
  asio::awaitable<bool> read_upstream(std::string& into);
  asio::awaitable<bool> write_upstream(std::string_view bytes);
  asio::awaitable<bool> forward_response_body(const BodyFraming& framing, std::string& head,
                                              std::string& pending);
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
  // The last response ended exactly where its framing said, on an HTTP/1.1 connection the
  // server did not close: upstream_ may carry another request.
  bool upstream_reusable_ = false;
};

// Whether a request may be sent again on a new connection after a kept one failed before any
// byte of the answer (RFC 9112 section 9.3.1; idempotent methods, RFC 9110 section 9.2.2), and
// so may be given a kept connection at all: an idempotent method without a body.
bool may_retry(const RequestHead& head) {
  static constexpr std::array<std::string_view, 5> kIdempotent = {"GET", "HEAD", "OPTIONS", "TRACE",
                                                                  "DELETE"};
  return head.body.kind == BodyFraming::Kind::None &&
         std::ranges::find(kIdempotent, head.method) != kIdempotent.end();
}

// Whether the server leaves the connection open after this response (RFC 9112 section 9.3):
// HTTP/1.1 without `Connection: close`.
bool server_keeps_connection(const ResponseHead& response) {
  if (response.minor_version == 0) return false;
  const auto tokens = connection_tokens(response.headers);
  return std::ranges::find(tokens, "close") == tokens.end();
}

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
  const bool kept_first = head.form == TargetForm::Absolute && may_retry(head);
  Verdict verdict = co_await check_destination(*host, head.port, use,
                                               kept_first ? KeptFirst::Yes : KeptFirst::No);
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
  if (head.form == TargetForm::Authority) {
    if (!co_await open_upstream(head, *host, verdict, failed)) co_return false;
    if (co_await write_client(kConnectEstablished)) co_await relay();
    co_return false;
  }
  // A kept connection opened for the same destination under the same grant, to an address
  // this request's own lookup checked, or, when the lookup was left out for it, that the same
  // AddressFilter passed when it was opened (UpstreamPool); else a new one.
  bool reused = false;
  if (!verdict.grant.empty() && kept_first) {
    const UpstreamKey key{*host, head.port, verdict.grant, verdict.via};
    if (auto kept =
            context_.upstreams.take(key, verdict.looked_up ? &verdict.endpoints : nullptr)) {
      upstream_ = std::move(*kept);
      reused = true;
    }
  }
  if (!reused && !co_await open_upstream(head, *host, verdict, failed)) co_return false;
  co_return co_await exchange(head, *host, verdict, reused);
}

// Step 5 for one request: connects upstream_, or answers (403, 502) and returns false. When the
// lookup was left out for a kept connection (Verdict::looked_up), it comes first, as for any
// connection.
asio::awaitable<bool> HttpSession::open_upstream(const RequestHead& head, const std::string& host,
                                                 Verdict& verdict, const std::string& failed) {
  if (!verdict.looked_up) {
    Verdict resolved = co_await look_up_and_check(host, head.port);
    if (closed_) co_return false;
    if (resolved.kind == Verdict::Kind::Refused) {
      co_await refuse(head.method + " " + target_text(head.host, head.port) + " refused",
                      resolved.reason);
      co_return false;
    }
    if (resolved.kind == Verdict::Kind::Unreachable) {
      co_await answer(502, failed, resolved.reason);
      co_return false;
    }
    verdict.endpoints = std::move(resolved.endpoints);
    verdict.looked_up = true;
  }
  const auto failure = co_await connect_destination(verdict, host, head.port);
  if (closed_) co_return false;
  if (failure) {
    const std::string detail =
        failure->parent
            ? failure->message
            : "could not connect to " + target_text(host, head.port) + ": " + failure->message;
    co_await answer(502, failed, detail);
    co_return false;
  }
  co_return true;
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

// Writes the response `head` and forwards the body, server → client, per its framing.
// `pending` holds the bytes read after the head. Returns false when the body ended early or a write
// failed. A body of known length (or one that ends with the connection) is moved with splice(2)
// once `pending` is sent; a chunked one passes through the scanner. Bytes after the end of the
// message are the server's mistake: dropped, and the connection is not used again.
asio::awaitable<bool> HttpSession::forward_response_body(const BodyFraming& framing,
                                                         std::string& head, std::string& pending) {
  using Kind = BodyFraming::Kind;
  if (framing.kind == Kind::None) {
    upstream_reusable_ = upstream_reusable_ && pending.empty();
    co_return co_await write_client(head);
  }
  if (framing.kind != Kind::Chunked) {
    std::uint64_t remaining = framing.length;
    std::size_t take = pending.size();
    if (framing.kind == Kind::Length)
      take = static_cast<std::size_t>(std::min<std::uint64_t>(remaining, pending.size()));
    // The head and the body bytes that came with it in one write: one segment for a small
    // response, and the client's first byte is not held back behind a second write.
    head.append(pending, 0, take);
    if (!co_await write_client(head)) co_return false;
    upstream_reusable_ = upstream_reusable_ && pending.size() == take;
    pending.clear();
    if (framing.kind == Kind::UntilClose) co_return co_await move_until_eof(upstream_, client_);
    remaining -= take;
    co_return co_await move_exactly(upstream_, client_, remaining);
  }
  if (!co_await write_client(head)) co_return false;
  ChunkedBodyScanner scanner(502);
  while (true) {
    if (pending.empty() && !co_await read_upstream(pending)) co_return false;
    const auto step = scanner.scan(pending);
    if (!step) {
      report("response body refused", step.error().reason);
      co_return false;
    }
    if (!co_await write_client(std::string_view(pending).substr(0, step->consumed)))
      co_return false;
    if (step->done) {
      upstream_reusable_ = upstream_reusable_ && pending.size() == step->consumed;
      co_return true;
    }
    pending.clear();
  }
}

// One absolute-form request: head and body upstream, interim and final response back; then
// upstream_ is kept for a later request (UpstreamPool) or closed. `reused`: upstream_ came
// from the pool, and if it turns out stale the request goes once more on a new connection.
// Returns whether the client connection stays open for another request.
asio::awaitable<bool> HttpSession::exchange(const RequestHead& head, const std::string& host,
                                            Verdict& verdict, bool reused) {
  const std::string failed = head.method + " " + target_text(host, head.port) + " failed";
  // Kept only under a grant, and only where both sides speak HTTP/1.1 (an HTTP/1.0 request
  // goes upstream as HTTP/1.0, and the server then closes).
  const bool keep_upstream =
      !verdict.grant.empty() && head.minor_version > 0 && context_.options.max_idle_upstreams > 0;
  const std::string request_head = upstream_request_head(
      head, host, head.port,
      keep_upstream ? UpstreamConnection::KeepAlive : UpstreamConnection::Close);
  Outcome outcome = Outcome::Failed;
  while (true) {
    phase_ = Phase::Relaying;
    set_deadline(context_.options.idle_timeout, Extend::OnActivity);
    const bool written = co_await write_upstream(request_head);
    if (!written && !(reused && !closed_)) {
      co_await answer(502, failed, "the server closed the connection");
      co_return false;
    }
    body_done_ = head.body.kind == BodyFraming::Kind::None ||
                 (head.body.kind == BodyFraming::Kind::Length && head.body.length == 0);
    upload_stopped_ = false;
    if (written && !body_done_) {
      upload_running_ = true;
      auto self = std::static_pointer_cast<HttpSession>(shared_from_this());
      asio::co_spawn(
          context_.io,
          [self, framing = head.body]() -> asio::awaitable<void> {
            co_await self->upload_body(framing);
          },
          asio::detached);
    }
    outcome = written ? co_await relay_response(head, failed, reused) : Outcome::Stale;
    if (outcome != Outcome::Stale) break;
    // A kept connection the server had closed: once more on a new one.
    asio::error_code ignored;
    upstream_.close(ignored);
    reused = false;
    if (!co_await open_upstream(head, host, verdict, failed)) co_return false;
  }
  if (outcome == Outcome::Failed) co_return false;
  // The server answered before the request body ended: the rest of it cannot be told apart
  // from a next request, so both connections end here.
  const bool upload_unfinished = !body_done_ || upload_running_;
  if (keep_upstream && upstream_reusable_ && !upload_unfinished && !closed_) {
    context_.upstreams.put(UpstreamKey{host, head.port, verdict.grant, verdict.via},
                           std::move(upstream_));
    upstream_ = tcp::socket(context_.io);
  } else {
    asio::error_code ignored;
    upstream_.close(ignored);
  }
  if (upload_unfinished || outcome == Outcome::Close) {
    end_upload();
    co_await close_gracefully();
    co_return false;
  }
  co_return !closed_;
}

// Reads response heads from the server: interim (1xx) ones are forwarded and the next is
// read; the final one is forwarded with its body. Failed: the client got a 502 or a truncated
// connection; Stale (only when `may_retry`): the server sent nothing and the client nothing
// yet; otherwise whether the client connection may stay open.
asio::awaitable<HttpSession::Outcome> HttpSession::relay_response(const RequestHead& head,
                                                                  const std::string& failed,
                                                                  bool may_retry) {
  ResponseHeadParser parser;
  std::string pending = std::exchange(early_download_, {});  // through a parent: its first bytes
  bool received = !pending.empty();
  upstream_reusable_ = false;
  while (true) {
    if (pending.empty() && !co_await read_upstream(pending)) {
      if (may_retry && !received && !closed_) co_return Outcome::Stale;
      if (!closed_) co_await answer(502, failed, "the server sent no complete response");
      co_return Outcome::Failed;
    }
    received = true;
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
    std::string response_head = downstream_response_head(
        response, *framing, keep_alive ? ClientConnection::KeepAlive : ClientConnection::Close);
    upstream_reusable_ =
        server_keeps_connection(response) && framing->kind != BodyFraming::Kind::UntilClose;
    if (!co_await forward_response_body(*framing, response_head, pending)) {
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
