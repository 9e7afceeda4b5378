#include "proxy/happy_eyeballs.hpp"

#include <algorithm>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/use_awaitable.hpp>

namespace pisandbox::proxy {
namespace {

using tcp = asio::ip::tcp;
constexpr auto kNoThrow = asio::experimental::as_tuple(asio::use_awaitable);

}  // namespace

std::vector<tcp::endpoint> happy_eyeballs_order(const std::vector<tcp::endpoint>& endpoints) {
  std::vector<tcp::endpoint> v6;
  std::vector<tcp::endpoint> v4;
  for (const tcp::endpoint& endpoint : endpoints)
    (endpoint.address().is_v6() ? v6 : v4).push_back(endpoint);
  std::vector<tcp::endpoint> ordered;
  ordered.reserve(endpoints.size());
  for (std::size_t i = 0; i < std::max(v6.size(), v4.size()); ++i) {
    if (i < v6.size()) ordered.push_back(v6[i]);
    if (i < v4.size()) ordered.push_back(v4[i]);
  }
  return ordered;
}

std::string connect_cause(const asio::error_code& error, bool timed_out,
                          std::chrono::seconds timeout) {
  if (timed_out) return "timed out after " + std::to_string(timeout.count()) + " s";
  if (error == asio::error::connection_refused) return "connection refused";
  if (error == asio::error::host_unreachable) return "no route to host";
  if (error == asio::error::network_unreachable) return "network is unreachable";
  if (error == asio::error::timed_out) return "timed out";
  std::string message = error.message();
  if (!message.empty() && message[0] >= 'A' && message[0] <= 'Z') message[0] += 'a' - 'A';
  return message;
}

ConnectRace::ConnectRace(asio::io_context& io, std::vector<tcp::endpoint> endpoints,
                         std::chrono::seconds attempt_timeout, std::chrono::milliseconds delay)
    : io_(io),
      endpoints_(std::move(endpoints)),
      attempt_timeout_(attempt_timeout),
      delay_(delay),
      wake_(io) {}

std::shared_ptr<ConnectRace> ConnectRace::create(asio::io_context& io,
                                                 std::vector<tcp::endpoint> endpoints,
                                                 std::chrono::seconds attempt_timeout,
                                                 std::chrono::milliseconds delay) {
  return std::make_shared<ConnectRace>(io, std::move(endpoints), attempt_timeout, delay);
}

asio::awaitable<void> ConnectRace::run() {
  auto self = shared_from_this();
  for (std::size_t i = 0; i < endpoints_.size() && !finished_; ++i) {
    start(i);
    if (i + 1 == endpoints_.size()) break;
    // RFC 8305 section 5: the next attempt starts when the delay has passed or when an
    // earlier attempt has failed, whichever comes first.
    const std::size_t ended_before = ended_count();
    wake_.expires_after(delay_);
    while (!finished_ && ended_count() == ended_before) {
      auto [error] = co_await wake_.async_wait(kNoThrow);
      if (!error) break;  // the delay passed
    }
  }
  while (!finished_ && ended_count() < attempts_.size()) {
    wake_.expires_at(asio::steady_timer::time_point::max());
    co_await wake_.async_wait(kNoThrow);
  }
  finished_ = true;
}

void ConnectRace::start(std::size_t index) {
  attempts_.push_back(std::make_unique<Attempt>(io_, endpoints_[index]));
  Attempt* const attempt = attempts_.back().get();
  asio::co_spawn(
      io_,
      [self = shared_from_this(), attempt]() -> asio::awaitable<void> {
        co_await self->attempt(attempt);
      },
      asio::detached);
}

asio::awaitable<void> ConnectRace::attempt(Attempt* attempt) {
  asio::error_code error;
  attempt->socket.open(attempt->endpoint.protocol(), error);
  if (!error) {
    attempt->timer.expires_after(attempt_timeout_);
    attempt->timer.async_wait([self = shared_from_this(), attempt](const asio::error_code& e) {
      if (e || attempt->ended) return;
      attempt->timed_out = true;
      asio::error_code ignored;
      attempt->socket.close(ignored);
    });
    auto [connect_error] = co_await attempt->socket.async_connect(attempt->endpoint, kNoThrow);
    error = connect_error;
    // The limit passed while the connection completed: the socket is closed already.
    if (attempt->timed_out && !error) error = asio::error::timed_out;
  }
  attempt->ended = true;
  attempt->timer.cancel();
  if (finished_) {  // another attempt won, or the race was cancelled
    asio::error_code ignored;
    attempt->socket.close(ignored);
    co_return;
  }
  if (!error) {
    finished_ = true;
    winner_.emplace(std::move(attempt->socket));
    close_attempts();
  } else {
    attempt->error = error;
  }
  wake_.cancel();
}

void ConnectRace::cancel() {
  finished_ = true;
  close_attempts();
  wake_.cancel();
}

void ConnectRace::close_attempts() {
  asio::error_code ignored;
  for (const auto& attempt : attempts_) {
    if (!attempt->ended) attempt->socket.close(ignored);
  }
}

std::size_t ConnectRace::ended_count() const {
  std::size_t ended = 0;
  for (const auto& attempt : attempts_) ended += attempt->ended ? 1 : 0;
  return ended;
}

std::optional<tcp::socket> ConnectRace::take_winner() {
  return std::exchange(winner_, std::nullopt);
}

std::vector<ConnectRace::Failure> ConnectRace::failures() const {
  std::vector<Failure> out;
  for (const auto& attempt : attempts_) {
    if (attempt->error)
      out.push_back(Failure{attempt->endpoint, *attempt->error, attempt->timed_out});
  }
  return out;
}

}  // namespace pisandbox::proxy
