#include "proxy/session.hpp"

#include <fcntl.h>
#include <sys/socket.h>

#include <algorithm>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/post.hpp>
#include <asio/write.hpp>
#include <exception>
#include <limits>

#include "core/printable.hpp"
#include "core/unique_fd.hpp"
#include "proxy/protocol/http.hpp"

namespace pisandbox::proxy {
namespace {

using Clock = std::chrono::steady_clock;

// The relay's copy buffer (plain path), and the most bytes one splice(2) moves when the pipe
// cannot be enlarged: the default pipe capacity on Linux (pipe(7)).
constexpr std::size_t kRelayChunk = 64 * 1024;
// The pipe capacity asked for the splice path (pipe(7): F_SETPIPE_SZ, at most
// /proc/sys/fs/pipe-max-size for an unprivileged process, 1 MiB by default). The pages are the
// kernel's, filled only as far as the data in flight.
constexpr std::size_t kSplicePipe = 256 * 1024;
constexpr std::uint64_t kGrowPipeAfter = 1024 * 1024;
// No limit on the bytes a tunnel direction moves.
constexpr std::uint64_t kNoLimit = std::numeric_limits<std::uint64_t>::max();
// send(2) without SIGPIPE where the flag exists (macOS has none: there the proxy thread blocks
// SIGPIPE, server.cpp, and the write fails with EPIPE all the same).
#ifdef MSG_NOSIGNAL
constexpr int kNoSignal = MSG_NOSIGNAL;
#else
constexpr int kNoSignal = 0;
#endif
// How long and how much close_gracefully() reads from a client that keeps sending.
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr std::size_t kLingerBytes = 4 * 1024 * 1024;
// The most worker threads for decisions and lookups; more jobs wait for a free worker (and the
// decision timeout still applies to them).
constexpr std::size_t kMaxWorkers = 256;
constexpr auto kWorkerIdle = std::chrono::seconds(10);

std::string seconds_text(std::chrono::seconds s) {
  return std::to_string(s.count()) + " s";
}

std::string endpoint_text(const tcp::endpoint& endpoint) {
  const auto address = endpoint.address();
  const std::string host = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  return host + ":" + std::to_string(endpoint.port());
}

Verdict run_decider(const Decider& decide, const std::string& host, std::uint16_t port) {
  try {
    Decision decision = decide(host, port);
    if (decision.allowed) {
      Verdict allowed{Verdict::Kind::Allowed, {}, {}};
      allowed.grant = std::move(decision.grant);
      return allowed;
    }
    if (decision.reason.empty()) decision.reason = "refused";
    return Verdict{Verdict::Kind::Refused, std::move(decision.reason), {}, true};
  } catch (const std::exception& e) {
    return Verdict{Verdict::Kind::Refused, std::string("the decision failed: ") + e.what(), {}};
  } catch (...) {
    return Verdict{Verdict::Kind::Refused, "the decision failed", {}};
  }
}

// The QuickDecider on the I/O thread: its Verdict, or nullopt to ask the Decider.
std::optional<Verdict> run_quick_decider(const QuickDecider& quick, const std::string& host,
                                         std::uint16_t port) {
  try {
    std::optional<Decision> decision = quick(host, port);
    if (!decision) return std::nullopt;
    if (decision->allowed) {
      Verdict allowed{Verdict::Kind::Allowed, {}, {}};
      allowed.grant = std::move(decision->grant);
      return allowed;
    }
    if (decision->reason.empty()) decision->reason = "refused";
    return Verdict{Verdict::Kind::Refused, std::move(decision->reason), {}, true};
  } catch (const std::exception& e) {
    return Verdict{Verdict::Kind::Refused, std::string("the decision failed: ") + e.what(), {}};
  } catch (...) {
    return Verdict{Verdict::Kind::Refused, "the decision failed", {}};
  }
}

// The Screen on the I/O thread: nullopt to go on, else the refusal.
std::optional<Verdict> run_screen(const Screen& screen, const std::string& host,
                                  std::uint16_t port) {
  if (!screen) return std::nullopt;
  try {
    auto refusal = screen(host, port);
    if (!refusal) return std::nullopt;
    if (refusal->empty()) *refusal = "refused";
    return Verdict{Verdict::Kind::Refused, std::move(*refusal), {}, true};
  } catch (const std::exception& e) {
    return Verdict{Verdict::Kind::Refused, std::string("the decision failed: ") + e.what(), {}};
  } catch (...) {
    return Verdict{Verdict::Kind::Refused, "the decision failed", {}};
  }
}

// Every failed attempt as `<cause> (<address>)`, in the order of the attempts; addresses with
// the same cause share it: `connection refused (203.0.113.2:81, [2001:db8::2]:81)`.
std::string describe_failures(const std::vector<ConnectRace::Failure>& failures,
                              std::chrono::seconds timeout) {
  std::vector<std::pair<std::string, std::string>> causes;  // cause, addresses
  for (const auto& failure : failures) {
    const std::string cause = connect_cause(failure.error, failure.timed_out, timeout);
    auto it = std::ranges::find(causes, cause, &std::pair<std::string, std::string>::first);
    if (it == causes.end()) {
      causes.emplace_back(cause, endpoint_text(failure.endpoint));
    } else {
      it->second += ", " + endpoint_text(failure.endpoint);
    }
  }
  std::string out;
  for (const auto& [cause, addresses] : causes) {
    if (!out.empty()) out += "; ";
    out += cause + " (" + addresses + ")";
  }
  return out;
}

}  // namespace

// ---- ProxyContext ----------------------------------------------------------------------------

ProxyContext::ProxyContext(asio::io_context& io_context, ServerOptions server_options)
    : io(io_context),
      options(std::move(server_options)),
      pool(WorkerPool::create(kMaxWorkers, kWorkerIdle)),
      upstreams(io_context, options.max_idle_upstreams, options.upstream_idle_timeout),
      lookups(options.max_kept_lookups, options.lookup_lifetime) {
  if (options.decide) {
    decide = std::make_shared<const Decider>(std::move(options.decide));
  } else {
    decide = std::make_shared<const Decider>([](const std::string&, std::uint16_t) {
      return Decision{false, "no decider configured"};
    });
  }
  address_allowed = std::make_shared<const AddressFilter>(std::move(options.address_allowed));
}

void ProxyContext::log(std::string_view line) const {
  if (options.log) options.log(line);
}

void ProxyContext::complete_call(std::uint64_t id, Verdict verdict) {
  const auto it = calls.find(id);
  if (it == calls.end()) return;
  PendingCall call = std::move(it->second);
  calls.erase(it);
  call.timer->cancel();
  call.complete(std::move(verdict));
}

asio::awaitable<Verdict> blocking_call(ProxyContext& context, const std::function<Verdict()>& job,
                                       std::chrono::seconds timeout, const Verdict& on_timeout) {
  // The initiation runs inside the co_await below, while `job` and `on_timeout` are alive.
  auto initiate = [&context, &job, timeout, &on_timeout](auto handler) {
    std::function<Verdict()> work = job;
    Verdict late = on_timeout;
    const std::uint64_t id = context.next_call++;
    auto timer = std::make_unique<asio::steady_timer>(context.io, timeout);
    if (timeout.count() > 0) {  // 0: no limit
      timer->async_wait([&context, id, late = std::move(late)](const asio::error_code& error) {
        if (!error) context.complete_call(id, late);
      });
    }
    context.calls.emplace(id, ProxyContext::PendingCall{std::move(handler), std::move(timer)});
    const bool submitted =
        context.pool->submit([gate = context.gate, target = &context, id, work = std::move(work)] {
          Verdict verdict = work();
          // Post only while the io_context exists (Gate); stop() closes the gate first.
          std::lock_guard lock(gate->mutex);
          if (!gate->open) return;
          asio::post(target->io, [target, id, verdict = std::move(verdict)]() mutable {
            target->complete_call(id, std::move(verdict));
          });
        });
    if (!submitted) {
      asio::post(context.io, [&context, id] {
        context.complete_call(id, Verdict{Verdict::Kind::Refused, "no thread to decide on", {}});
      });
    }
  };
  Verdict verdict = co_await asio::async_initiate<decltype(asio::use_awaitable), void(Verdict)>(
      initiate, asio::use_awaitable);
  co_return verdict;
}

Verdict resolve_and_check(const std::string& host, std::uint16_t port,
                          const AddressFilter& allowed) {
  // A synchronous resolve needs an execution context but never runs it; one per worker.
  thread_local asio::io_context lookup_context;
  tcp::resolver resolver(lookup_context);
  asio::error_code error;
  const auto results =
      resolver.resolve(host, std::to_string(port),
                       tcp::resolver::address_configured | tcp::resolver::numeric_service, error);
  if (error) {
    return Verdict{
        Verdict::Kind::Unreachable, "could not resolve " + host + ": " + error.message(), {}};
  }
  std::vector<tcp::endpoint> endpoints;
  for (const auto& entry : results) {
    const tcp::endpoint endpoint = entry.endpoint();
    if (std::ranges::find(endpoints, endpoint) != endpoints.end()) continue;
    std::string why_not;
    if (!allowed || !allowed(endpoint.address(), why_not)) {
      if (why_not.empty()) why_not = endpoint.address().to_string() + " is not allowed";
      return Verdict{Verdict::Kind::Refused, host + " resolves to " + why_not, {}};
    }
    endpoints.push_back(endpoint);
  }
  if (endpoints.empty()) {
    return Verdict{Verdict::Kind::Unreachable, "no address for " + host, {}};
  }
  return Verdict{Verdict::Kind::Allowed, {}, std::move(endpoints)};
}

// ---- Session ---------------------------------------------------------------------------------

Session::Session(ProxyContext& context, tcp::socket client)
    : context_(context),
      client_(std::move(client)),
      upstream_(context.io),
      watchdog_timer_(context.io),
      connect_timer_(context.io),
      join_timer_(context.io) {}

Session::~Session() {
  context_.sessions.erase(id_);
}

void Session::start() {
  id_ = context_.next_session++;
  context_.sessions.emplace(id_, weak_from_this());
  asio::error_code ignored;
  client_.set_option(tcp::no_delay(true), ignored);
  auto self = shared_from_this();
  asio::co_spawn(
      context_.io,
      [self]() -> asio::awaitable<void> {
        try {
          co_await self->run();
        } catch (const std::exception& e) {
          self->report("internal error", e.what());
        }
        self->close_all();
      },
      asio::detached);
  asio::co_spawn(
      context_.io, [self]() -> asio::awaitable<void> { co_await self->watchdog(); },
      asio::detached);
}

void Session::abort() {
  if (closed_) return;
  if (phase_ == Phase::Deciding) {
    // "A pending approval ends (deny) when the command ends" (docs/network.md): best effort, never
    // blocking the stop.
    const std::string bytes = refusal();
    [[maybe_unused]] const auto sent =
        ::send(client_.native_handle(), bytes.data(), bytes.size(), MSG_DONTWAIT | kNoSignal);
  }
  close_all();
}

void Session::close_all() {
  closed_ = true;
  phase_ = Phase::Closing;
  if (race_) race_->cancel();
  asio::error_code ignored;
  client_.close(ignored);
  upstream_.close(ignored);
  watchdog_timer_.cancel();
  connect_timer_.cancel();
  join_timer_.cancel();
}

void Session::set_deadline(Clock::duration timeout, Extend extend) {
  deadline_ = timeout == Clock::duration::max() ? Clock::time_point::max() : Clock::now() + timeout;
  extend_by_ = extend == Extend::OnActivity ? timeout : Clock::duration{};
  watchdog_timer_.cancel();  // re-arms with the new deadline
}

void Session::touch() {
  if (extend_by_ != Clock::duration{}) deadline_ = Clock::now() + extend_by_;
}

asio::awaitable<void> Session::watchdog() {
  while (!closed_) {
    watchdog_timer_.expires_at(deadline_);
    co_await watchdog_timer_.async_wait(kNoThrow);
    if (closed_) break;
    if (Clock::now() >= deadline_) {
      if (phase_ != Phase::Closing && !quiet_timeout_) report("closed", "timed out");
      close_all();
    }
  }
}

void Session::note_refusal(const std::string& destination, const std::string& reason) const {
  // The destination is the client's bytes: shown escaped and whole wherever it is printed.
  if (context_.options.refused) context_.options.refused(core::printable(destination), reason);
}

void Session::report(std::string_view what, std::string_view detail) const {
  if (!context_.options.log) return;
  asio::error_code error;
  const auto peer = client_.remote_endpoint(error);
  std::string line = "pi-sandbox proxy: ";
  if (!error) line += endpoint_text(peer) + " ";
  line.append(core::printable(what)).append(": ").append(core::printable(detail));
  context_.log(line);
}

asio::awaitable<bool> Session::read_more() {
  if (closed_) co_return false;
  std::array<char, 16 * 1024> buffer;
  auto [error, n] = co_await client_.async_read_some(asio::buffer(buffer), kNoThrow);
  if (error) co_return false;
  in_.append(buffer.data(), n);
  touch();
  co_return true;
}

asio::awaitable<bool> Session::write_client(std::string_view bytes) {
  if (closed_) co_return false;
  auto [error, n] = co_await asio::async_write(client_, asio::buffer(bytes), kNoThrow);
  touch();
  co_return !error;
}

asio::awaitable<Verdict> Session::check_destination(const std::string& host, std::uint16_t port,
                                                    ParentUse use, KeptFirst kept) {
  phase_ = Phase::Deciding;
  set_deadline(Clock::duration::max(), Extend::Never);
  const auto& options = context_.options;
  // Step 2: deniedDomains, no lookup.
  if (auto refusal = run_screen(options.screen, host, port)) co_return std::move(*refusal);
  const ParentSetting* via = options.parents.route(host, use);
  Verdict checked{Verdict::Kind::Allowed, {}, {}};
  if (via == nullptr && kept == KeptFirst::Yes && context_.upstreams.holds(host, port, nullptr)) {
    checked.looked_up = false;
  } else if (via == nullptr) {
    // Step 3 before the decision, which may ask a human: a name that will be refused is
    // refused without a question (docs/approvals.md, "The order of a decision", step 3).
    checked = co_await look_up_and_check(host, port);
    if (checked.kind != Verdict::Kind::Allowed || closed_) co_return checked;
  }
  Verdict decided = co_await run_decider_call(host, port);
  if (decided.kind != Verdict::Kind::Allowed || closed_) co_return decided;
  if (via != nullptr) {
    Verdict parent = co_await look_up_parent(*via);
    parent.grant = std::move(decided.grant);
    phase_ = Phase::Connecting;
    if (parent.kind != Verdict::Kind::Allowed && options.unreachable && !closed_)
      options.unreachable(host + ":" + std::to_string(port), parent.reason);
    co_return parent;
  }
  phase_ = Phase::Connecting;
  checked.grant = std::move(decided.grant);
  co_return checked;
}

// Resolves once and checks every address, on a worker, within connect_timeout; a failure is
// reported here (ServerOptions::refused), since it ends the decision.
asio::awaitable<Verdict> Session::look_up_and_check(const std::string& host, std::uint16_t port) {
  const auto& options = context_.options;
  if (const auto* kept = context_.lookups.find(host, port, LookupCache::Clock::now()))
    co_return Verdict{Verdict::Kind::Allowed, {}, *kept};
  std::function<Verdict()> look_up = [filter = context_.address_allowed, host, port] {
    return resolve_and_check(host, port, *filter);
  };
  const Verdict slow_lookup{
      Verdict::Kind::Unreachable,
      "looking up " + host + " took longer than " + seconds_text(options.connect_timeout),
      {}};
  Verdict resolved =
      co_await blocking_call(context_, look_up, options.connect_timeout, slow_lookup);
  if (resolved.kind == Verdict::Kind::Allowed)
    context_.lookups.put(host, port, resolved.endpoints, LookupCache::Clock::now());
  if (resolved.kind != Verdict::Kind::Allowed && !closed_) {
    note_refusal(host + ":" + std::to_string(port), resolved.reason);
    resolved.reported = true;
  }
  co_return resolved;
}

asio::awaitable<Verdict> Session::run_decider_call(const std::string& host, std::uint16_t port) {
  const auto& options = context_.options;
  if (options.decide_at_once) {
    const QuickDecider& quick = options.decide_at_once;
    std::optional<Verdict> at_once = run_quick_decider(quick, host, port);
    if (at_once) co_return std::move(*at_once);
  }
  std::function<Verdict()> decide = [decider = context_.decide, host, port] {
    return run_decider(*decider, host, port);
  };
  const Verdict undecided{
      Verdict::Kind::Refused, "no decision within " + seconds_text(options.decision_timeout), {}};
  Verdict decided = co_await blocking_call(context_, decide, options.decision_timeout, undecided);
  co_return decided;
}

// The parent's own address (docs/network.md, "A parent proxy"): looked up like any name but not
// checked, since the parent is the caller's configuration, not a destination of the command.
asio::awaitable<Verdict> Session::look_up_parent(const ParentSetting& via) {
  const std::string named = "the parent proxy in " + via.variable;
  if (!via.proxy)
    co_return Verdict{
        Verdict::Kind::Unreachable, named + " cannot be used: its URL " + via.proxy.error(), {}};
  const std::string name = via.proxy->display() + " (" + via.variable + ")";
  std::function<Verdict()> look_up = [parent = *via.proxy] {
    return resolve_and_check(parent.host, parent.port,
                             [](const asio::ip::address&, std::string&) { return true; });
  };
  const Verdict slow{Verdict::Kind::Unreachable,
                     "looking up the parent proxy " + name + " took longer than " +
                         seconds_text(context_.options.connect_timeout),
                     {}};
  Verdict resolved =
      co_await blocking_call(context_, look_up, context_.options.connect_timeout, slow);
  if (resolved.kind != Verdict::Kind::Allowed && !resolved.reason.starts_with("looking up"))
    resolved.reason = "the parent proxy " + name + ": " + resolved.reason;
  resolved.via = &via;
  co_return resolved;
}

asio::awaitable<std::optional<Session::ConnectFailure>> Session::connect_upstream(
    const std::vector<tcp::endpoint>& endpoints) {
  phase_ = Phase::Connecting;
  if (endpoints.empty()) co_return ConnectFailure{"no address", asio::error::host_not_found};
  const auto timeout = context_.options.connect_timeout;
  auto race = ConnectRace::create(context_.io, happy_eyeballs_order(endpoints), timeout,
                                  kConnectionAttemptDelay);
  race_ = race;
  co_await race->run();
  race_.reset();
  auto winner = race->take_winner();
  if (closed_) co_return ConnectFailure{"connection closed", asio::error::operation_aborted};
  if (winner) {
    upstream_ = std::move(*winner);
    asio::error_code ignored;
    upstream_.set_option(tcp::no_delay(true), ignored);
    co_return std::nullopt;
  }
  const auto failures = race->failures();
  if (failures.empty()) co_return ConnectFailure{"no attempt", asio::error::operation_aborted};
  const bool timed_out = std::ranges::all_of(failures, &ConnectRace::Failure::timed_out);
  co_return ConnectFailure{describe_failures(failures, timeout), failures.front().error, timed_out};
}

// Limits the pending operation on upstream_ (a connect, or the wait for the parent's answer)
// to connect_timeout: the timer cancels it and sets connect_timed_out_.
void Session::arm_connect_timer() {
  const std::uint64_t attempt = ++connect_attempt_;
  connecting_ = true;
  connect_timed_out_ = false;
  connect_timer_.expires_after(context_.options.connect_timeout);
  connect_timer_.async_wait([self = shared_from_this(), attempt](const asio::error_code& e) {
    if (e || !self->connecting_ || self->connect_attempt_ != attempt) return;
    self->connect_timed_out_ = true;
    asio::error_code ignored;
    self->upstream_.cancel(ignored);
  });
}

asio::awaitable<std::optional<Session::ConnectFailure>> Session::connect_destination(
    const Verdict& verdict, const std::string& host, std::uint16_t port) {
  auto failure = co_await connect_upstream(verdict.endpoints);
  // No address of the destination answered: the next connection looks its name up again.
  if (failure && verdict.via == nullptr) context_.lookups.forget(host, port);
  if (closed_) co_return failure;
  if (verdict.via != nullptr) {
    const ParentProxy& parent = *verdict.via->proxy;
    const std::string name = parent.display() + " (" + verdict.via->variable + ")";
    if (failure) {
      failure->message = "could not connect to the parent proxy " + name + ": " + failure->message;
    } else if (auto refused = co_await open_parent_tunnel(host, port, parent)) {
      if (closed_) co_return ConnectFailure{"connection closed", asio::error::operation_aborted};
      failure = ConnectFailure{"the parent proxy " + name + " " + *refused, {}};
      asio::error_code ignored;
      upstream_.close(ignored);
    }
    if (failure) failure->parent = true;
  }
  if (failure && context_.options.unreachable)
    context_.options.unreachable(host + ":" + std::to_string(port), failure->message);
  co_return failure;
}

// CONNECT host:port through the parent (RFC 9110 section 9.3.6): any 2xx opens the tunnel;
// the bytes after its head are the destination's and go to the client first. Returns what
// went wrong, completing "the parent proxy <name> ...". The answer is untrusted bytes: the
// proxy's response parser reads it, within connect_timeout.
asio::awaitable<std::optional<std::string>> Session::open_parent_tunnel(const std::string& host,
                                                                        std::uint16_t port,
                                                                        const ParentProxy& parent) {
  const std::string request = parent.connect_request(host, port);
  auto [write_error, written] =
      co_await asio::async_write(upstream_, asio::buffer(request), kNoThrow);
  if (write_error) co_return "could not be sent CONNECT: " + write_error.message();
  arm_connect_timer();
  ResponseHeadParser parser;
  std::string pending;
  std::optional<std::string> failure;
  std::array<char, 4096> buffer;
  while (true) {
    if (pending.empty()) {
      auto [error, n] = co_await upstream_.async_read_some(asio::buffer(buffer), kNoThrow);
      if (error) {
        failure =
            connect_timed_out_
                ? "did not answer CONNECT within " + seconds_text(context_.options.connect_timeout)
            : error == asio::error::eof ? "closed the connection without answering CONNECT"
                                        : "failed while answering CONNECT: " + error.message();
        break;
      }
      pending.assign(buffer.data(), n);
    }
    auto result = parser.feed(pending);
    if (auto* error = std::get_if<HttpError>(&result)) {
      failure = "answered CONNECT with a malformed response: " + error->reason;
      break;
    }
    auto* parsed = std::get_if<Parsed<ResponseHead>>(&result);
    if (parsed == nullptr) {
      pending.clear();  // the parser keeps what it needs
      continue;
    }
    pending.erase(0, parsed->consumed);
    const ResponseHead& response = parsed->head;
    if (response.status < 200) {  // interim (RFC 9110 section 15.2): the next head follows
      parser.reset();
      continue;
    }
    if (response.status >= 300) {
      failure = "answered CONNECT with " + std::to_string(response.status) + " " +
                core::printable(response.reason);
      if (response.status == 407)
        *failure += parent.user ? " (it refused the credentials)" : " (no credentials were given)";
    } else {
      early_download_ = std::move(pending);
    }
    break;
  }
  connecting_ = false;
  connect_timer_.cancel();
  co_return failure;
}

asio::awaitable<void> Session::relay() {
  phase_ = Phase::Relaying;
  set_deadline(context_.options.idle_timeout, Extend::OnActivity);
  upload_done_ = false;
  auto self = shared_from_this();
  early_upload_ = std::move(in_);
  in_.clear();
  asio::co_spawn(
      context_.io,
      [self]() -> asio::awaitable<void> {
        co_await self->pump(self->client_, self->upstream_, &self->early_upload_);
        self->upload_done_ = true;
        self->join_timer_.cancel();
      },
      asio::detached);
  co_await pump(upstream_, client_, &early_download_);
  if (!upload_done_ && !closed_) {
    join_timer_.expires_at(Clock::time_point::max());
    co_await join_timer_.async_wait(kNoThrow);
  }
}

// One direction of a tunnel. Reads only after the previous write completed (back-pressure);
// on end of file stops sending on the other side (half-close), so the other direction carries
// on until it ends too; on an error closes everything.
asio::awaitable<void> Session::pump(tcp::socket& from, tcp::socket& to, std::string* early) {
  if (early != nullptr && !early->empty()) {
    auto [error, n] = co_await asio::async_write(to, asio::buffer(*early), kNoThrow);
    early->clear();
    if (error) {
      close_all();
      co_return;
    }
  }
  const Moved end = co_await move_bytes(from, to, kNoLimit);
  if (end == Moved::EndOfFile) {
    asio::error_code ignored;
    to.shutdown(tcp::socket::shutdown_send, ignored);
    co_return;
  }
  close_all();
}

asio::awaitable<bool> Session::move_exactly(tcp::socket& from, tcp::socket& to,
                                            std::uint64_t count) {
  if (count == 0) co_return true;
  co_return co_await move_bytes(from, to, count) == Moved::Limit;
}

asio::awaitable<bool> Session::move_until_eof(tcp::socket& from, tcp::socket& to) {
  co_return co_await move_bytes(from, to, kNoLimit) == Moved::EndOfFile;
}

asio::awaitable<Session::Moved> Session::move_bytes(tcp::socket& from, tcp::socket& to,
                                                    std::uint64_t limit) {
#ifndef PI_SANDBOX_PORTABLE_RELAY
  const Moved spliced = co_await splice_bytes(from, to, limit);
  if (spliced != Moved::Unsupported) co_return spliced;
#endif
  co_return co_await copy_bytes(from, to, limit);
}

// The plain path: read, then write what was read, through one buffer.
asio::awaitable<Session::Moved> Session::copy_bytes(tcp::socket& from, tcp::socket& to,
                                                    std::uint64_t limit) {
  const std::unique_ptr<char[]> buffer(new char[kRelayChunk]);
  while (!closed_ && limit > 0) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(limit, kRelayChunk));
    auto [read_error, n] =
        co_await from.async_read_some(asio::buffer(buffer.get(), want), kNoThrow);
    if (read_error == asio::error::eof) co_return Moved::EndOfFile;
    if (read_error) co_return Moved::Failed;
    touch();
    auto [write_error, written] =
        co_await asio::async_write(to, asio::buffer(buffer.get(), n), kNoThrow);
    if (write_error) co_return Moved::Failed;
    touch();
    if (limit != kNoLimit) limit -= n;
  }
  co_return closed_ ? Moved::Failed : Moved::Limit;
}

#ifndef PI_SANDBOX_PORTABLE_RELAY
// The zero-copy path (docs/network.md): splice(2) socket → pipe → socket. Waits for readiness
// only after EAGAIN, which keeps Asio's edge-triggered reactor exact. Once kGrowPipeAfter bytes
// went through, the pipe is enlarged to kSplicePipe (fcntl(2) F_SETPIPE_SZ; kept at its default
// size when the kernel refuses), so one splice moves up to that much: fewer system calls and
// wake-ups per byte on a bulk transfer, while short connections keep default pipes, which
// count against the user's pipe-user-pages-soft (pipe(7)) like the command's own. Unsupported,
// having moved nothing, when no pipe can be made or the kernel cannot splice these sockets.
asio::awaitable<Session::Moved> Session::splice_bytes(tcp::socket& from, tcp::socket& to,
                                                      std::uint64_t limit) {
  int fds[2];
  if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) co_return Moved::Unsupported;
  const core::UniqueFd pipe_out(fds[0]);
  const core::UniqueFd pipe_in(fds[1]);
  std::size_t chunk = kRelayChunk;
  std::uint64_t total = 0;
  bool grow_asked = false;
  asio::error_code error;
  from.non_blocking(true, error);
  to.non_blocking(true, error);
  constexpr unsigned kFlags = SPLICE_F_MOVE | SPLICE_F_NONBLOCK;
  bool moved = false;
  while (!closed_ && limit > 0) {
    if (!grow_asked && total >= kGrowPipeAfter) {
      // A bulk transfer: a larger pipe, asked once, while it is empty.
      grow_asked = true;
      const int grown = ::fcntl(pipe_in.get(), F_SETPIPE_SZ, static_cast<int>(kSplicePipe));
      if (grown > 0) chunk = static_cast<std::size_t>(grown);
    }
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(limit, chunk));
    const ssize_t n = ::splice(from.native_handle(), nullptr, pipe_in.get(), nullptr, want, kFlags);
    if (n == 0) co_return Moved::EndOfFile;
    if (n < 0) {
      if (errno == EINTR) continue;
      // A kernel (or a sandbox such as gVisor) without splice for these sockets: copy instead.
      if (!moved && (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP))
        co_return Moved::Unsupported;
      if (errno != EAGAIN) co_return Moved::Failed;
      auto [wait_error] = co_await from.async_wait(tcp::socket::wait_read, kNoThrow);
      if (wait_error) co_return Moved::Failed;
      continue;
    }
    touch();
    moved = true;
    total += static_cast<std::uint64_t>(n);
    if (limit != kNoLimit) limit -= static_cast<std::uint64_t>(n);
    std::size_t in_pipe = static_cast<std::size_t>(n);
    while (in_pipe > 0 && !closed_) {
      const ssize_t m =
          ::splice(pipe_out.get(), nullptr, to.native_handle(), nullptr, in_pipe, kFlags);
      if (m > 0) {
        in_pipe -= static_cast<std::size_t>(m);
        touch();
        continue;
      }
      if (m < 0 && errno == EINTR) continue;
      if (m == 0 || errno != EAGAIN) co_return Moved::Failed;
      auto [wait_error] = co_await to.async_wait(tcp::socket::wait_write, kNoThrow);
      if (wait_error) co_return Moved::Failed;
    }
    if (in_pipe > 0) co_return Moved::Failed;
  }
  co_return closed_ ? Moved::Failed : Moved::Limit;
}
#endif  // PI_SANDBOX_PORTABLE_RELAY

asio::awaitable<void> Session::close_gracefully() {
  if (closed_) co_return;
  phase_ = Phase::Closing;
  asio::error_code ignored;
  upstream_.close(ignored);
  client_.shutdown(tcp::socket::shutdown_send, ignored);
  set_deadline(kLingerTime, Extend::Never);
  std::size_t drained = 0;
  std::array<char, 16 * 1024> buffer;
  while (!closed_ && drained < kLingerBytes) {
    auto [error, n] = co_await client_.async_read_some(asio::buffer(buffer), kNoThrow);
    if (error) break;
    drained += n;
  }
  close_all();
}

}  // namespace pisandbox::proxy
