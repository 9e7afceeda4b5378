#include "sandbox/linux/net_counters.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <string>

namespace pisandbox::sandbox::linux_ {

namespace {

/// The next line of `text` (without its newline), consumed from it.
std::string_view next_line(std::string_view& text) {
  const std::size_t end = text.find('\n');
  const std::string_view line = text.substr(0, end);
  text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  return line;
}

/// The next whitespace-separated word of `text`, consumed from it; empty at the end.
std::string_view next_word(std::string_view& text) {
  const std::size_t start = text.find_first_not_of(" \t");
  if (start == std::string_view::npos) {
    text = {};
    return {};
  }
  text.remove_prefix(start);
  const std::size_t end = text.find_first_of(" \t");
  const std::string_view word = text.substr(0, end);
  text.remove_prefix(end == std::string_view::npos ? text.size() : end);
  return word;
}

std::optional<std::uint64_t> number(std::string_view word) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (word.empty() || error != std::errc{} || end != word.data() + word.size()) return std::nullopt;
  return value;
}

/// The whole file from its start (pread: the same descriptor is read again later).
std::optional<std::string> read_whole(int fd) {
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, static_cast<off_t>(text.size()));
    if (n < 0) return std::nullopt;
    if (n == 0) return text;
    text.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace

std::optional<std::uint64_t> snmp_counter(std::string_view text, std::string_view group,
                                          std::string_view field) {
  const std::string prefix = std::string(group) + ":";
  while (!text.empty()) {
    std::string_view names = next_line(text);
    if (!names.starts_with(prefix)) continue;
    std::string_view values = next_line(text);
    if (!values.starts_with(prefix)) return std::nullopt;
    names.remove_prefix(prefix.size());
    values.remove_prefix(prefix.size());
    for (std::string_view name = next_word(names); !name.empty(); name = next_word(names)) {
      const std::string_view value = next_word(values);
      if (name == field) return number(value);
    }
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> snmp6_counter(std::string_view text, std::string_view name) {
  while (!text.empty()) {
    std::string_view line = next_line(text);
    if (next_word(line) == name) return number(next_word(line));
  }
  return std::nullopt;
}

DirectAttempts direct_attempts(std::string_view snmp, std::string_view snmp6) {
  DirectAttempts out;
  out.no_route = snmp_counter(snmp, "Ip", "OutNoRoutes").value_or(0) +
                 snmp6_counter(snmp6, "Ip6OutNoRoutes").value_or(0);
  out.no_port = snmp_counter(snmp, "Udp", "NoPorts").value_or(0) +
                snmp6_counter(snmp6, "Udp6NoPorts").value_or(0);
  return out;
}

NetCounters NetCounters::open(pid_t pid) {
  NetCounters counters;
  const std::string dir = "/proc/" + std::to_string(pid) + "/net/";
  counters.snmp_ = core::UniqueFd(::open((dir + "snmp").c_str(), O_RDONLY | O_CLOEXEC));
  counters.snmp6_ = core::UniqueFd(::open((dir + "snmp6").c_str(), O_RDONLY | O_CLOEXEC));
  return counters;
}

std::optional<DirectAttempts> NetCounters::read() const {
  if (!snmp_) return std::nullopt;
  const auto snmp = read_whole(snmp_.get());
  if (!snmp) return std::nullopt;
  const auto snmp6 = snmp6_ ? read_whole(snmp6_.get()) : std::optional<std::string>();
  return direct_attempts(*snmp, snmp6.value_or(""));
}

}  // namespace pisandbox::sandbox::linux_
