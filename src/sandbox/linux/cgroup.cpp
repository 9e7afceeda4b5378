#include "sandbox/linux/cgroup.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

namespace pisandbox::sandbox::linux_ {

namespace {

namespace fs = std::filesystem;
using core::UniqueFd;

/// One line of /proc/self/mountinfo that matters here (proc(5)).
struct CgroupMount {
  std::string root;  ///< the mount's root within its hierarchy
  fs::path mount_point;
  std::string type;           ///< "cgroup" or "cgroup2"
  std::string super_options;  ///< v1: holds the controllers, e.g. "rw,pids"
};

std::vector<CgroupMount> cgroup_mounts() {
  std::vector<CgroupMount> mounts;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point, options, field;
    fields >> id >> parent >> device >> root >> point >> options;
    while (fields >> field && field != "-") {
    }
    std::string type, source, super;
    fields >> type >> source >> super;
    if (type == "cgroup" || type == "cgroup2") mounts.push_back({root, point, type, super});
  }
  return mounts;
}

/// "N:controllers:path" lines of /proc/self/cgroup (cgroups(7)).
std::vector<std::pair<std::string, std::string>> own_cgroups() {
  std::vector<std::pair<std::string, std::string>> out;
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    out.emplace_back(line.substr(first + 1, second - first - 1), line.substr(second + 1));
  }
  return out;
}

bool has_word(const std::string& list, std::string_view word, char separator) {
  std::istringstream in(list);
  std::string item;
  while (std::getline(in, item, separator))
    if (item == word) return true;
  return false;
}

/// The directory of `cgroup_path` under a mount whose root is `root`; empty when the path is
/// not below the mount's root (another cgroup namespace).
fs::path directory_of(const CgroupMount& mount, const std::string& cgroup_path) {
  const fs::path path = fs::path(cgroup_path).lexically_normal();
  const fs::path root = fs::path(mount.root).lexically_normal();
  const fs::path relative = path.lexically_relative(root);
  if (relative.empty() || *relative.begin() == "..") return {};
  if (relative == ".") return mount.mount_point;
  return (mount.mount_point / relative).lexically_normal();
}

bool writable_directory(const fs::path& dir) {
  return !dir.empty() && ::access(dir.c_str(), W_OK | X_OK) == 0;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

core::Result<void> write_text(const fs::path& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return core::fail_errno("open(\"" + path.string() + "\", O_WRONLY)");
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    return core::fail_errno("write(\"" + path.string() + "\", \"" + text + "\")");
  return {};
}

/// The counter `key` of a flat keyed file ("max 3\n", "oom_kill 1\n"), 0 when absent.
std::uint64_t counter(const fs::path& file, std::string_view key) {
  std::istringstream in(read_text(file));
  std::string name;
  std::uint64_t value = 0;
  while (in >> name >> value)
    if (name == key) return value;
  return 0;
}

std::optional<CgroupSupport> probe_v2(const std::vector<CgroupMount>& mounts,
                                      const std::vector<std::pair<std::string, std::string>>& own,
                                      std::string& why) {
  const auto unified = std::ranges::find_if(own, [](const auto& c) { return c.first.empty(); });
  const auto mount = std::ranges::find(mounts, "cgroup2", &CgroupMount::type);
  if (unified == own.end() || mount == mounts.end()) return std::nullopt;
  const fs::path dir = directory_of(*mount, unified->second);
  const std::string controllers = read_text(dir / "cgroup.controllers");
  if (!has_word(controllers.substr(0, controllers.find('\n')), "pids", ' ') ||
      !has_word(controllers.substr(0, controllers.find('\n')), "memory", ' ')) {
    why = "cgroup v2 at " + dir.string() + " has no pids and memory controllers";
    return std::nullopt;
  }
  if (!writable_directory(dir)) {
    why = "cgroup v2 directory " + dir.string() + " is not delegated to this user";
    return std::nullopt;
  }
  CgroupSupport support;
  support.kind = CgroupSupport::Kind::V2;
  support.v2 = dir;
  return support;
}

std::optional<CgroupSupport> probe_v1(const std::vector<CgroupMount>& mounts,
                                      const std::vector<std::pair<std::string, std::string>>& own,
                                      std::string& why) {
  const auto dir_of = [&](std::string_view controller) -> fs::path {
    const auto mount = std::ranges::find_if(mounts, [&](const CgroupMount& m) {
      return m.type == "cgroup" && has_word(m.super_options, controller, ',');
    });
    const auto mine = std::ranges::find_if(
        own, [&](const auto& c) { return has_word(c.first, controller, ','); });
    if (mount == mounts.end() || mine == own.end()) return {};
    return directory_of(*mount, mine->second);
  };
  CgroupSupport support;
  support.kind = CgroupSupport::Kind::V1;
  support.v1_pids = dir_of("pids");
  support.v1_memory = dir_of("memory");
  support.v1_cpu = dir_of("cpu");
  if (support.v1_pids.empty() || support.v1_memory.empty()) return std::nullopt;
  for (const auto& dir : {support.v1_pids, support.v1_memory})
    if (!writable_directory(dir)) {
      why = "cgroup v1 directory " + dir.string() + " is not writable by this user";
      return std::nullopt;
    }
  if (!writable_directory(support.v1_cpu)) support.v1_cpu.clear();
  return support;
}

/// The inode of this process's pid namespace: with the pid, it names a supervisor uniquely
/// on the machine (pids of another pid namespace may repeat ours).
std::uint64_t pid_namespace() {
  struct stat st {};
  return ::stat("/proc/self/ns/pid", &st) == 0 ? static_cast<std::uint64_t>(st.st_ino) : 0;
}

/// A name no other sandbox uses: pi-sandbox-<pid namespace>-<pid>-<counter>.
std::string unique_name() {
  static std::atomic<unsigned> counter{0};
  return "pi-sandbox-" + std::to_string(pid_namespace()) + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter++);
}

/// The numbers of a name made by unique_name(), or nothing for any other name.
std::optional<std::array<unsigned long long, 3>> parse_name(std::string_view name) {
  constexpr std::string_view kPrefix = "pi-sandbox-";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  std::array<unsigned long long, 3> numbers{};
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    const auto dash = name.find('-');
    const std::string_view part = name.substr(0, dash);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string_view::npos ||
        part.size() > 19 || (i + 1 < numbers.size()) == (dash == std::string_view::npos))
      return std::nullopt;
    numbers[i] = std::stoull(std::string(part));
    name.remove_prefix(dash == std::string_view::npos ? name.size() : dash + 1);
  }
  return numbers;
}

/// Removes the cgroups that sandboxes of a pi-sandbox killed with SIGKILL left in `parent`
/// (their supervisor had no chance to). One of this pid namespace goes as soon as its
/// supervisor's pid is gone; one of another pid namespace, where kill(2) cannot see the
/// supervisor, only once it is kStaleAfter old (younger, it may belong to a sandbox still
/// starting there). rmdir(2) only removes a cgroup without processes or children, so a cgroup
/// in use is never touched.
constexpr long kStaleAfter = 30;  ///< seconds

void sweep_stale(const fs::path& parent) {
  const std::uint64_t own_namespace = pid_namespace();
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(parent, error)) {
    const auto numbers = parse_name(entry.path().filename().string());
    if (!numbers) continue;
    const auto [pid_ns, pid, serial] = *numbers;
    (void)serial;
    if (pid_ns == own_namespace) {
      if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
        (void)::rmdir(entry.path().c_str());
      continue;
    }
    struct stat st {};
    if (::stat(entry.path().c_str(), &st) == 0 && ::time(nullptr) - st.st_ctime >= kStaleAfter)
      (void)::rmdir(entry.path().c_str());
  }
}

}  // namespace

CgroupSupport probe_cgroups() {
  const auto mounts = cgroup_mounts();
  const auto own = own_cgroups();
  std::string why_v2, why_v1;
  if (auto v2 = probe_v2(mounts, own, why_v2)) return *v2;
  if (auto v1 = probe_v1(mounts, own, why_v1)) return *v1;
  CgroupSupport none;
  none.why_not = !why_v1.empty()   ? why_v1
                 : !why_v2.empty() ? why_v2
                                   : "no cgroup hierarchy with the pids and memory controllers";
  return none;
}

std::string describe(const CgroupSupport& support) {
  switch (support.kind) {
    case CgroupSupport::Kind::V2:
      return "cgroup v2 (" + support.v2.string() + ")";
    case CgroupSupport::Kind::V1:
      return std::string("cgroup v1 (pids, memory") + (support.v1_cpu.empty() ? "" : ", cpu") + ")";
    case CgroupSupport::Kind::None:
      break;
  }
  return "none: " + support.why_not;
}

SandboxCgroup::SandboxCgroup(SandboxCgroup&& other) noexcept
    : dirs_(std::move(other.dirs_)),
      kind_(other.kind_),
      pids_(std::move(other.pids_)),
      memory_(std::move(other.memory_)),
      v2_fd_(std::move(other.v2_fd_)),
      tasks_(std::move(other.tasks_)),
      oom_fd_(std::move(other.oom_fd_)),
      oom_seen_(other.oom_seen_) {
  other.dirs_.clear();
}

SandboxCgroup::~SandboxCgroup() {
  if (dirs_.empty()) return;
  kill_all();
  oom_fd_.reset();
  v2_fd_.reset();
  tasks_.clear();
  // The processes are gone once pid 1 has been reaped (the kernel empties a pid namespace
  // before its init is reaped); a cgroup can still be busy for a moment while the last
  // ones are released, hence the short retry.
  for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it)
    for (int attempt = 0; attempt < 200; ++attempt) {
      if (::rmdir(it->c_str()) == 0 || errno == ENOENT) break;
      if (errno != EBUSY) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

core::Result<SandboxCgroup> SandboxCgroup::create(const CgroupSupport& support,
                                                  const policy::ResourceLimits& limits) {
  SandboxCgroup group;
  group.kind_ = support.kind;
  const std::string name = unique_name();
  const auto make = [&](const fs::path& parent) -> core::Result<fs::path> {
    sweep_stale(parent);
    const fs::path dir = parent / name;
    if (::mkdir(dir.c_str(), 0755) != 0) return core::fail_errno("mkdir(\"" + dir.string() + "\")");
    group.dirs_.push_back(dir);
    return dir;
  };
  const std::string processes = std::to_string(limits.max_processes);
  const std::string memory = std::to_string(limits.memory_bytes);
  if (support.kind == CgroupSupport::Kind::V2) {
    // Controllers for the children; EBUSY when processes sit in the delegated directory
    // itself ("no internal processes" rule): then the limits cannot be enabled here.
    (void)write_text(support.v2 / "cgroup.subtree_control", "+pids +memory");
    (void)write_text(support.v2 / "cgroup.subtree_control", "+cpu");
    auto dir = make(support.v2);
    if (!dir) return std::unexpected(dir.error());
    for (const auto& [file, value] :
         {std::pair{"pids.max", processes}, std::pair{"memory.max", memory},
          std::pair{"memory.swap.max", std::string("0")},
          std::pair{"memory.oom.group", std::string("1")}}) {
      auto written = write_text(*dir / file, value);
      if (!written && std::string_view(file) != "memory.swap.max")
        return std::unexpected(written.error());
    }
    (void)write_text(*dir / "cpu.weight", std::to_string(limits.cpu_weight));
    group.pids_ = group.memory_ = *dir;
    group.v2_fd_.reset(::open(dir->c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!group.v2_fd_) return core::fail_errno("open(\"" + dir->string() + "\", O_PATH)");
    group.oom_fd_.reset(::open((*dir / "memory.events").c_str(), O_RDONLY | O_CLOEXEC));
    return group;
  }
  if (support.kind != CgroupSupport::Kind::V1)
    return core::fail("no usable cgroup: " + support.why_not);
  auto pids = make(support.v1_pids);
  if (!pids) return std::unexpected(pids.error());
  if (auto r = write_text(*pids / "pids.max", processes); !r) return std::unexpected(r.error());
  auto mem = make(support.v1_memory);
  if (!mem) return std::unexpected(mem.error());
  if (auto r = write_text(*mem / "memory.limit_in_bytes", memory); !r)
    return std::unexpected(r.error());
  // Swap accounting may be off (no memsw files): then memory.limit_in_bytes bounds RAM only.
  if (::access((*mem / "memory.memsw.limit_in_bytes").c_str(), F_OK) == 0)
    if (auto r = write_text(*mem / "memory.memsw.limit_in_bytes", memory); !r)
      return std::unexpected(r.error());
  if (!support.v1_cpu.empty()) {
    auto cpu = make(support.v1_cpu);
    if (!cpu) return std::unexpected(cpu.error());
    const std::uint64_t shares = std::max<std::uint64_t>(2, limits.cpu_weight * 1024ULL / 100);
    if (auto r = write_text(*cpu / "cpu.shares", std::to_string(shares)); !r)
      return std::unexpected(r.error());
  }
  group.pids_ = *pids;
  group.memory_ = *mem;
  // Opened here, written by pid 1 (join_own_cgroups()): the kernel checks the opener's
  // credentials, which are this process's, against pid 1's, which are the same user's.
  for (const auto& dir : group.dirs_) {
    UniqueFd tasks(::open((dir / "tasks").c_str(), O_WRONLY | O_CLOEXEC));
    if (!tasks) return core::fail_errno("open(\"" + (dir / "tasks").string() + "\", O_WRONLY)");
    group.tasks_.push_back(std::move(tasks));
  }
  // memory.oom_control notifications (cgroup-v1/memory.rst, sections 10 and 11). v1 has no
  // memory.oom.group: its OOM killer would kill one process and let the rest go on. So, once
  // the supervisor is sure to hear of it, the kernel's killer is turned off here: the tasks
  // that hit the limit wait, and the supervisor kills the whole sandbox at once.
  UniqueFd event(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  UniqueFd control(::open((*mem / "memory.oom_control").c_str(), O_RDONLY | O_CLOEXEC));
  if (event && control &&
      write_text(*mem / "cgroup.event_control",
                 std::to_string(event.get()) + " " + std::to_string(control.get()))) {
    group.oom_fd_ = std::move(event);
    (void)write_text(*mem / "memory.oom_control", "1");
  }
  return group;
}

std::vector<int> SandboxCgroup::tasks_fds() const {
  std::vector<int> fds;
  for (const auto& fd : tasks_) fds.push_back(fd.get());
  return fds;
}

core::Result<void> join_own_cgroups(std::span<const int> tasks_fds) {
  for (const int fd : tasks_fds)
    if (::write(fd, "0", 1) != 1)
      return core::fail_errno("write(" + std::to_string(fd) + " (cgroup v1 tasks), \"0\")");
  return {};
}

LimitsReached SandboxCgroup::reached() const {
  LimitsReached out;
  if (kind_ == CgroupSupport::Kind::None) return out;
  out.processes = counter(pids_ / "pids.events", "max") > 0;
  out.memory = kind_ == CgroupSupport::Kind::V2
                   ? counter(memory_ / "memory.events", "oom_kill") > 0
                   : counter(memory_ / "memory.oom_control", "oom_kill") > 0 ||
                         counter(memory_ / "memory.oom_control", "under_oom") > 0 || oom_seen_;
  return out;
}

bool SandboxCgroup::out_of_memory() const {
  if (kind_ == CgroupSupport::Kind::V1) {
    std::uint64_t count = 0;  // drain the eventfd
    if (::read(oom_fd_.get(), &count, sizeof count) == sizeof count && count > 0 &&
        counter(memory_ / "memory.oom_control", "under_oom") > 0)
      oom_seen_ = true;
  } else {
    // v2: memory.events changed (poll says POLLPRI until the file is read again).
    char buffer[512];
    (void)::lseek(oom_fd_.get(), 0, SEEK_SET);
    (void)::read(oom_fd_.get(), buffer, sizeof buffer);
  }
  return reached().memory;
}

void SandboxCgroup::kill_all() const {
  if (kind_ == CgroupSupport::Kind::V2 && !dirs_.empty())
    (void)write_text(dirs_.front() / "cgroup.kill", "1");
}

}  // namespace pisandbox::sandbox::linux_
