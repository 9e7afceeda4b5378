// pisandbox::cli — the `--reviewer PROGRAM` flag of `run`, `serve` and `approvals check`.
#pragma once

#include <optional>
#include <string>

namespace pisandbox::cli {

/// Why `--reviewer <value>` is refused, or nullopt when it is accepted. The rule is the one
/// of the configuration's `approval.reviewer` (src/config/config.cpp, docs/configuration.md):
/// the program is named by an absolute path, because it runs without a shell and a PATH
/// search would pick whatever PATH holds first (docs/approvals.md, "The reviewer program").
/// Whether the program exists is not checked here, as for the configuration: a program that
/// cannot be started makes each review fail (`Automatic review is unavailable: reviewer <path>
/// could not be started: ENOENT (No such file or directory)`). The text is two lines:
///   `--reviewer must be an absolute path, got "<value>"` and
///   `hint: the reviewer runs without a shell or a PATH search; give its full path, e.g.
///   --reviewer "$PWD/<value>"` (one line); the value goes through core::printable().
[[nodiscard]] std::optional<std::string> reviewer_flag_error(const std::string& value);

}  // namespace pisandbox::cli
