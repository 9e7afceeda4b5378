#include "sandbox/linux/launch_report.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>

#include "core/phase_trace.hpp"
#include "core/scm_rights.hpp"
#include "sandbox/linux/launch_spec.hpp"

namespace pisandbox::sandbox::linux_ {

namespace {

using core::UniqueFd;

/// The descriptors of a Listeners record, in the order of its kind letters.
void take_listeners(LaunchRecord& record, LaunchReport& report) {
  const std::string& kinds = record.text;
  std::vector<UniqueFd>& fds = record.fds;
  if (fds.size() != kinds.size()) return;  // malformed: the descriptors close here
  ProxyListeners listeners;
  for (std::size_t i = 0; i < fds.size(); ++i)
    (kinds[i] == 'h' ? listeners.http : listeners.socks).push_back(std::move(fds[i]));
  report.listeners = std::move(listeners);
}

/// The helper's channel and the listener of a UnixBroker record, with the private devices.
void take_unix_broker(LaunchRecord& record, LaunchReport& report) {
  std::vector<UniqueFd>& fds = record.fds;
  if (fds.size() != 2) return;  // malformed: nothing is brokered, every bind/connect fails
  UnixBrokerChannels channels{std::move(fds[0]), std::move(fds[1]), {}};
  const char* text = record.text.c_str();
  char* end = nullptr;
  for (unsigned long long device = std::strtoull(text, &end, 10); end != text;
       device = std::strtoull(text, &end, 10)) {
    channels.private_devices.push_back(static_cast<dev_t>(device));
    text = end;
  }
  report.unix = std::move(channels);
}

void parse_placeholder(const std::string& text, LaunchReport& report) {
  const auto space = text.find(' ');
  if (space == std::string::npos) return;
  Placeholder p;
  char* end = nullptr;
  p.inode = static_cast<ino_t>(std::strtoull(text.c_str(), &end, 10));
  p.scaffold = end != nullptr && *end == 's';  // "<inode>s <path>": a scaffold
  p.path = text.substr(space + 1);
  report.placeholders.push_back(std::move(p));
}

}  // namespace

Received receive_record(int fd, LaunchRecord& record) {
  char buffer[8192];
  iovec data{buffer, sizeof buffer};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)];
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(fd, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (n == 0) return Received::Ended;
  if (n < 0) return errno == EAGAIN || errno == EINTR ? Received::Nothing : Received::Ended;
  record.kind = static_cast<LaunchMessage>(buffer[0]);
  record.text.assign(buffer + 1, static_cast<std::size_t>(n - 1));
  record.fds = core::received_rights(message);
  return Received::Record;
}

std::optional<std::variant<Exited, Signaled>> parse_result(const std::string& text) {
  if (text.starts_with("exit ")) return Exited{std::atoi(text.c_str() + 5)};
  if (text.starts_with("signal ")) return Signaled{std::atoi(text.c_str() + 7)};
  return std::nullopt;
}

bool read_records(int fd, LaunchReport& report) {
  for (LaunchRecord record;;) {
    const Received received = receive_record(fd, record);
    if (received != Received::Record) return received == Received::Nothing;
    const std::string& text = record.text;
    switch (record.kind) {
      case LaunchMessage::Listeners:
        take_listeners(record, report);
        break;
      case LaunchMessage::UnixBroker:
        take_unix_broker(record, report);
        break;
      case LaunchMessage::Terminal:
        if (record.fds.size() == 1) report.terminal = std::move(record.fds[0]);
        break;
      case LaunchMessage::Error:
        report.error = text;
        break;
      case LaunchMessage::Phases:
        core::phases::receive(text);
        break;
      case LaunchMessage::Placeholder:
        parse_placeholder(text, report);
        break;
      case LaunchMessage::Notice:
        report.notices.push_back(text);
        break;
      case LaunchMessage::Swept:
        report.swept = true;
        break;
      case LaunchMessage::TmpfsFull:
        report.tmpfs_full = true;
        break;
      case LaunchMessage::Result:
        if (auto result = parse_result(text)) report.result = *result;
        break;
      default:
        break;
    }
  }
}

}  // namespace pisandbox::sandbox::linux_
