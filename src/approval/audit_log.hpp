// pisandbox::approval::AuditLog — the audit file: one JSON line per decision, appended.
//
// Source: docs/compatibility.md, "Approvals" (`~/.pi/agent/logs/pi-sandbox-audit.jsonl`, created
// 0600, lines atomic and safe with concurrent commands).
#pragma once

#include <filesystem>
#include <string_view>

#include "approval/broker.hpp"
#include "core/error.hpp"
#include "core/unique_fd.hpp"

namespace pisandbox::approval {

/// `<home>/.pi/agent/logs/pi-sandbox-audit.jsonl`.
[[nodiscard]] std::filesystem::path default_audit_path(const std::filesystem::path& home);

/// Appends audit lines to one file. Each line goes out in one write(2) on a descriptor
/// opened with O_APPEND: on a local file system the kernel appends it whole, so lines from
/// concurrent threads and processes never interleave. Thread-safe.
class AuditLog final : public AuditSink {
 public:
  /// Opens (creating if needed) `path`: missing parent directories are created with mode
  /// 0700, the file with 0600, opened O_WRONLY|O_APPEND|O_CREAT|O_CLOEXEC|O_NOFOLLOW.
  /// Errors: `mkdir("<dir>", 0700): <ENAME> (…)`, `open("<path>", O_APPEND): <ENAME> (…)`.
  [[nodiscard]] static core::Result<AuditLog> open(const std::filesystem::path& path);

  /// Writes `line` (which should end in "\n"). Errors: `write("<path>"): <ENAME> (…)` or
  /// `write("<path>"): short write of <n> of <m> bytes`.
  [[nodiscard]] core::Result<void> append(std::string_view line) override;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  AuditLog(std::filesystem::path path, core::UniqueFd fd);

  std::filesystem::path path_;
  core::UniqueFd fd_;
};

}  // namespace pisandbox::approval
