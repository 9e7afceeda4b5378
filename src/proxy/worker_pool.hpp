// pisandbox::proxy::WorkerPool — threads for the calls that may block: the decision of a
// destination (a human approval can take minutes) and the name lookup.
//
// Source: docs/network.md, "Answers the command sees" (while an approval is pending, other
// connections keep flowing) and ARCHITECTURE.md ("the proxy asks on its own thread and never stalls
// other connections"). A fixed pool would let a few pending approvals stall every other connection,
// so a job never waits for a busy worker: an idle worker takes it, or a new one starts, up to
// a cap (beyond it, jobs queue). Workers are detached and own the pool's state, so a job that
// blocks for minutes never blocks Server::stop(); whatever a job captures must stay valid until it
// returns.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

namespace pisandbox::proxy {

class WorkerPool : public std::enable_shared_from_this<WorkerPool> {
 public:
  /// max_threads: the most workers alive at once (each blocked job holds one);
  /// idle: how long a worker without a job lingers before it exits, in seconds.
  static std::shared_ptr<WorkerPool> create(std::size_t max_threads, std::chrono::seconds idle);

  /// Runs `job` on a worker: an idle one, or a new one while fewer than max_threads are
  /// alive; at the cap the job waits for a worker to come free. Returns false (and drops the
  /// job) when the pool is closed or no worker thread can be created at all. Thread-safe.
  bool submit(std::function<void()> job);

  /// Accepts no more jobs and lets idle workers exit. Jobs already running finish on their
  /// own; queued jobs that have not started are dropped. Does not wait. Idempotent.
  void close();

  WorkerPool(std::size_t max_threads, std::chrono::seconds idle)
      : max_threads_(max_threads), idle_(idle) {}

 private:
  void work();

  const std::size_t max_threads_;
  const std::chrono::seconds idle_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::size_t threads_ = 0;
  std::size_t idle_threads_ = 0;
  bool closed_ = false;
};

}  // namespace pisandbox::proxy
