#include "cli/approvals_tail.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <deque>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/unique_fd.hpp"

namespace pisandbox::cli {

namespace fs = std::filesystem;
using approval::AuditDecision;
using approval::AuditGrouper;

namespace {

constexpr auto kFollowInterval = std::chrono::milliseconds(200);

// Reads a file that grows by appending: each call returns the whole lines added since the
// last one. A file that shrank (truncated) is read again from its start; a file replaced by
// another (rotated: a new inode at the path) is read to its end, then the new one from its
// start.
class AppendedLines {
 public:
  explicit AppendedLines(fs::path path) : path_(std::move(path)) {}

  // Whether the file was there at the last read.
  [[nodiscard]] bool is_open() const { return static_cast<bool>(fd_); }

  // The new whole lines (without newlines); `with_partial`: also a last line that has no
  // newline yet. A missing file gives no lines. Errors: `open("<path>")` or `read("<path>")`
  // with the errno name.
  core::Result<std::vector<std::string>> read(bool with_partial) {
    std::vector<std::string> lines;
    if (fd_ && replaced()) {
      if (auto drained = drain(lines); !drained) return std::unexpected(drained.error());
      fd_.reset();
      partial_.clear();
    }
    if (!fd_) {
      fd_.reset(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
      if (!fd_) {
        if (errno == ENOENT) return lines;
        return core::fail_errno("open(\"" + path_.string() + "\")");
      }
      struct stat st {};
      if (::fstat(fd_.get(), &st) != 0)
        return core::fail_errno("fstat(\"" + path_.string() + "\")");
      identity_ = {st.st_dev, st.st_ino};
      offset_ = 0;
    }
    struct stat st {};
    if (::fstat(fd_.get(), &st) == 0 && st.st_size < offset_) {  // truncated
      offset_ = 0;
      partial_.clear();
    }
    if (auto drained = drain(lines); !drained) return std::unexpected(drained.error());
    if (with_partial && !partial_.empty()) lines.push_back(std::exchange(partial_, {}));
    return lines;
  }

 private:
  // Whether the path now names another file, or none.
  bool replaced() const {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0) return true;
    return std::pair{st.st_dev, st.st_ino} != identity_;
  }

  // Reads from offset_ to the end of the open file, splitting whole lines into `lines`.
  core::Result<void> drain(std::vector<std::string>& lines) {
    char buffer[65536];
    for (;;) {
      const ssize_t n = ::pread(fd_.get(), buffer, sizeof buffer, offset_);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return core::fail_errno("read(\"" + path_.string() + "\")");
      if (n == 0) return {};
      offset_ += n;
      partial_.append(buffer, static_cast<std::size_t>(n));
      std::size_t start = 0;
      for (std::size_t newline; (newline = partial_.find('\n', start)) != std::string::npos;
           start = newline + 1)
        lines.push_back(partial_.substr(start, newline - start));
      partial_.erase(0, start);
    }
  }

  fs::path path_;
  core::UniqueFd fd_;
  std::pair<dev_t, ino_t> identity_{};
  off_t offset_ = 0;
  std::string partial_;
};

class Printer {
 public:
  explicit Printer(const TailOptions& options) : options_(options) {}

  void print(const std::vector<AuditDecision>& decisions) {
    for (const AuditDecision& d : decisions)
      if (approval::matches(d, options_.filter))
        std::cout << (options_.json ? approval::json_line(d) : approval::readable_line(d)) << "\n";
    std::cout.flush();
  }

 private:
  const TailOptions& options_;
};

// Groups `lines` and keeps the last `count` decisions that pass the filter.
std::vector<AuditDecision> last_decisions(AuditGrouper& grouper,
                                          const std::vector<std::string>& lines,
                                          const TailOptions& options) {
  std::deque<AuditDecision> last;
  const auto keep = [&](std::vector<AuditDecision> decisions) {
    for (AuditDecision& d : decisions) {
      if (!approval::matches(d, options.filter)) continue;
      last.push_back(std::move(d));
      if (last.size() > options.count) last.pop_front();
    }
  };
  for (const std::string& line : lines) keep(grouper.add_line(line));
  keep(grouper.flush());
  return {std::make_move_iterator(last.begin()), std::make_move_iterator(last.end())};
}

}  // namespace

int run_approvals_tail(const fs::path& path, const TailOptions& options) {
  AppendedLines file(path);
  AuditGrouper grouper;
  Printer printer(options);
  auto lines = file.read(!options.follow);
  if (!lines) return print_error(lines.error().describe()), 1;
  if (!file.is_open()) {
    if (!options.follow) return print_error("no audit log at " + path.string()), 0;
    print_error("no audit log at " + path.string() + " yet, waiting for it");
  }
  printer.print(last_decisions(grouper, *lines, options));
  if (!options.follow) return 0;
  for (;;) {
    std::this_thread::sleep_for(kFollowInterval);
    lines = file.read(false);
    if (!lines) return print_error(lines.error().describe()), 1;
    for (const std::string& line : *lines) printer.print(grouper.add_line(line));
    printer.print(grouper.flush());
  }
}

}  // namespace pisandbox::cli
