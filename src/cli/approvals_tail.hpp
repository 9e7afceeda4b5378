// pisandbox::cli — `pi-sandbox approvals tail`: the audit file, one line per decision.
#pragma once

#include <cstddef>
#include <filesystem>

#include "approval/audit_tail.hpp"

namespace pisandbox::cli {

/// What `approvals tail` shows (docs/approvals.md, "Reading the log").
///   count:  how many decisions (those passing `filter`) to show from the end of the file;
///   follow: keep reading decisions as they are appended, like `tail -F`;
///   json:   one JSON object per decision (approval::json_line) instead of a readable line.
struct TailOptions {
  std::size_t count = 20;
  bool follow = false;
  bool json = false;
  approval::AuditFilter filter;
};

/// Prints the decisions of the audit file at `path` on stdout. Without follow: a missing
/// file prints `pi-sandbox: no audit log at <path>` on stderr and returns 0. With follow:
/// a missing file prints `pi-sandbox: no audit log at <path> yet, waiting for it` once and
/// is waited for; a file truncated or replaced (another inode) is read again from its
/// start; it runs until killed, reading new lines every 200 milliseconds and printing (and
/// flushing) each decision once its lines are there. Returns the exit code: 0, or 1 when the
/// file cannot be read (`pi-sandbox: read("<path>"): <ENAME> (…)`).
int run_approvals_tail(const std::filesystem::path& path, const TailOptions& options);

}  // namespace pisandbox::cli
