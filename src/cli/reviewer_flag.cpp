#include "cli/reviewer_flag.hpp"

#include "core/printable.hpp"

namespace pisandbox::cli {

std::optional<std::string> reviewer_flag_error(const std::string& value) {
  if (value.starts_with('/')) return std::nullopt;
  std::string shown = core::printable(value);
  while (shown.starts_with("./")) shown.erase(0, 2);
  if (shown.empty()) shown = "reviewer";
  return "--reviewer must be an absolute path, got \"" + core::printable(value) +
         "\"\nhint: the reviewer runs without a shell or a PATH search; give its full path, "
         "e.g. --reviewer \"$PWD/" +
         shown + "\"";
}

}  // namespace pisandbox::cli
