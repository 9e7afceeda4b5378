#include "proxy/worker_pool.hpp"

#include <system_error>
#include <thread>

namespace pisandbox::proxy {

std::shared_ptr<WorkerPool> WorkerPool::create(std::size_t max_threads, std::chrono::seconds idle) {
  return std::make_shared<WorkerPool>(max_threads, idle);
}

bool WorkerPool::submit(std::function<void()> job) {
  std::unique_lock lock(mutex_);
  if (closed_) return false;
  // Every queued job should have a worker of its own: a job may block for minutes. At the cap
  // the job waits for the first worker to come free.
  if (jobs_.size() + 1 > idle_threads_ && threads_ < max_threads_) {
    try {
      std::thread([self = shared_from_this()] { self->work(); }).detach();
      ++threads_;
    } catch (const std::system_error&) {
      if (threads_ == 0) return false;  // nobody would ever run it: refused (fail closed)
    }
  }
  jobs_.push_back(std::move(job));
  lock.unlock();
  wake_.notify_one();
  return true;
}

void WorkerPool::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    jobs_.clear();
  }
  wake_.notify_all();
}

void WorkerPool::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    ++idle_threads_;
    const bool woken = wake_.wait_for(lock, idle_, [this] { return closed_ || !jobs_.empty(); });
    --idle_threads_;
    if (closed_ || !woken) break;
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    job = nullptr;  // release what the job captured before waiting again
    lock.lock();
  }
  --threads_;
}

}  // namespace pisandbox::proxy
