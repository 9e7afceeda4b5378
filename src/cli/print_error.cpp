#include <cstdio>
#include <sstream>

#include "cli/commands.hpp"

namespace pisandbox::cli {

void print_error(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  bool first = true;
  std::string out;
  while (std::getline(lines, line)) {
    out += (first ? "pi-sandbox: " : "") + line + "\n";
    first = false;
  }
  std::fputs(out.c_str(), stderr);
}

}  // namespace pisandbox::cli
