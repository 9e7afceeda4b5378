// pisandbox::core — the error value every fallible operation returns.
//
// Fallible operations return std::expected<T, Error>, never an exception, so that a failure
// is a value every caller must look at; an Error names the call, its arguments and errno, plus
// a hint where the cause is known. Pure code; no I/O.
#pragma once

#include <cerrno>
#include <cstring>
#include <expected>
#include <string>
#include <utility>

namespace pisandbox::core {

/// A failure that can be shown to a user as one line (plus an optional hint line).
///   message: what failed, e.g. `mount("/home/u/ws", MS_BIND): EACCES (Permission denied)`.
///   hint:    what to do about it, or empty when no cause is known.
///   code:    the errno value when the failure came from a syscall, else 0.
struct Error {
  std::string message;
  std::string hint;
  int code = 0;

  /// Renders `message` and, when present, `hint` on a second line (no trailing newline).
  [[nodiscard]] std::string describe() const {
    return hint.empty() ? message : message + "\n" + hint;
  }
};

/// The symbolic name of an errno value ("EACCES"), or its number when unknown.
inline std::string errno_name(int err) {
  const char* name = ::strerrorname_np(err);
  return name != nullptr ? std::string(name) : std::to_string(err);
}

/// Builds the Error for a failed system call: `<call>: <ENAME> (<strerror>)`.
///   call: the call with its arguments, as it should read in the message.
///   err:  the errno value captured right after the call.
inline Error sys_error(std::string call, int err, std::string hint = {}) {
  std::string message = std::move(call);
  message += ": " + errno_name(err) + " (" + std::strerror(err) + ")";
  return Error{std::move(message), std::move(hint), err};
}

/// Shorthand for the unexpected side of std::expected<T, Error>.
inline std::unexpected<Error> fail(std::string message, std::string hint = {}) {
  return std::unexpected(Error{std::move(message), std::move(hint), 0});
}

/// Shorthand for a failed system call, reading errno at the call site.
inline std::unexpected<Error> fail_errno(std::string call, std::string hint = {}) {
  const int err = errno;
  return std::unexpected(sys_error(std::move(call), err, std::move(hint)));
}

template <typename T>
using Result = std::expected<T, Error>;

}  // namespace pisandbox::core
