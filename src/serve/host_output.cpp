#include "serve/host_output.hpp"

#include <cerrno>

namespace pisandbox::serve {

void HostOutput::push(std::string_view line) {
  if (!gone_) queue_.append(line);
}

void HostOutput::flush() {
  while (queued() > 0) {
    const ssize_t n = sys_.write(fd_, queue_.data() + written_, queued());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      gone_ = true;
      queue_.clear();
      written_ = 0;
      return;
    }
    written_ += static_cast<std::size_t>(n);
  }
  // The written prefix goes once it is at least half the queue: each byte is moved at most
  // about once, however slowly the host reads.
  if (written_ > 0 && written_ * 2 >= queue_.size()) {
    queue_.erase(0, written_);
    written_ = 0;
  }
}

}  // namespace pisandbox::serve
