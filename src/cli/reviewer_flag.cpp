#include "cli/reviewer_flag.hpp"

#include "core/printable.hpp"

namespace pisandbox::cli {

std::optional<std::string> reviewer_flag_error(const std::string& value) {
  if (value.starts_with('/')) return std::nullopt;
  const std::string shown = core::printable(value);
  return "--reviewer must be an absolute path, got \"" + shown +
         "\"\nhint: the reviewer runs without a shell or a PATH search; give its full path, "
         "e.g. --reviewer \"$PWD/" +
         shown + "\"";
}

}  // namespace pisandbox::cli
