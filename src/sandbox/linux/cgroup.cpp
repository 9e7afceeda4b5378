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

/// The counter `key` of the text of a flat keyed file ("max 3\n", "oom_kill 1\n"), 0 when
/// absent.
std::uint64_t counter_in(const std::string& text, std::string_view key) {
  std::istringstream in(text);
  std::string name;
  std::uint64_t value = 0;
  while (in >> name >> value)
    if (name == key) return value;
  return 0;
}

/// The counter `key` of the flat keyed file `file`, 0 when absent.
std::uint64_t counter(const fs::path& file, std::string_view key) {
  return counter_in(read_text(file), key);
}

/// The first line of `text` (a cgroup file's one line of space-separated names).
std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

bool has_all(const std::string& list, const std::vector<std::string>& words) {
  return std::ranges::all_of(words, [&](const std::string& w) { return has_word(list, w, ' '); });
}

std::string joined(const std::vector<std::string>& words, std::string_view separator) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : std::string(separator)) + word;
  return out;
}

/// The pids of `dir`'s cgroup.procs other than this process (0 for one outside this pid
/// namespace), and whether this process is among them.
struct Occupants {
  std::vector<pid_t> others;
  bool self = false;
};

Occupants occupants(const fs::path& dir) {
  Occupants out;
  std::istringstream in(read_text(dir / "cgroup.procs"));
  long pid = 0;
  while (in >> pid)
    if (pid == ::getpid())
      out.self = true;
    else
      out.others.push_back(static_cast<pid_t>(pid));
  return out;
}

/// Why a v2 directory shared with other processes gives the sandboxes no controllers, and the
/// fix (docs/containers.md, "A cgroup without systemd").
std::string shared_why(const fs::path& dir, const std::vector<pid_t>& others) {
  std::string pids;
  for (std::size_t i = 0; i < others.size() && i < 3; ++i)
    pids += (i == 0 ? "" : ", ") + std::to_string(others[i]);
  if (others.size() > 3) pids += ", ...";
  return "cgroup v2 directory " + dir.string() + " holds other processes too (pid " + pids +
         "), and the kernel enables controllers for child cgroups only in a cgroup without "
         "processes of its own (cgroup-v2.rst, \"No Internal Process Constraint\"); start "
         "pi-sandbox in a cgroup of its own (`systemd-run --user --scope -p Delegate=yes "
         "pi-sandbox ...`, or docs/containers.md, \"A cgroup without systemd\")";
}

CgroupSupport none_because(std::string why) {
  CgroupSupport none;
  none.why_not = std::move(why);
  return none;
}

/// None for a v2 directory that holds `others` besides this process.
CgroupSupport none_shared(const fs::path& dir, const std::vector<pid_t>& others) {
  CgroupSupport none = none_because(shared_why(dir, others));
  none.shared = true;
  return none;
}

/// What prepare_cgroup_delegation() could not do, for probe_cgroups() to say in the same
/// process: the directory and the reason.
std::pair<fs::path, std::string>& delegation_failure() {
  static std::pair<fs::path, std::string> failure;
  return failure;
}

bool is_own_leaf(const fs::path& dir);

/// The v2 directory sandboxes' cgroups are made in: this process's own cgroup, or its parent
/// when that is a leaf of pi-sandbox's (own_leaf_name()), when it has `controllers` and this
/// user may write it; else empty (and `why`, where there is a cgroup2 mount).
fs::path v2_directory(const std::vector<CgroupMount>& mounts,
                      const std::vector<std::pair<std::string, std::string>>& own,
                      const std::vector<std::string>& controllers, std::string& why) {
  const auto unified = std::ranges::find_if(own, [](const auto& c) { return c.first.empty(); });
  const auto mount = std::ranges::find(mounts, "cgroup2", &CgroupMount::type);
  if (unified == own.end() || mount == mounts.end()) return {};
  fs::path dir = directory_of(*mount, unified->second);
  if (is_own_leaf(dir)) dir = dir.parent_path();
  if (!has_all(first_line(read_text(dir / "cgroup.controllers")), controllers)) {
    why =
        "cgroup v2 at " + dir.string() + " has no " + joined(controllers, " and ") + " controllers";
    return {};
  }
  if (!writable_directory(dir)) {
    why = "cgroup v2 directory " + dir.string() + " is not delegated to this user";
    return {};
  }
  return dir;
}

/// V2, or None with the reason (empty when there is no cgroup2 mount or no v2 cgroup).
CgroupSupport probe_v2(const std::vector<CgroupMount>& mounts,
                       const std::vector<std::pair<std::string, std::string>>& own,
                       const std::vector<std::string>& required) {
  std::string why;
  const fs::path dir = v2_directory(mounts, own, required, why);
  if (dir.empty()) return none_because(why);
  if (!has_all(first_line(read_text(dir / "cgroup.subtree_control")), required)) {
    if (const Occupants in_dir = occupants(dir); !in_dir.others.empty())
      return none_shared(dir, in_dir.others);
    const auto& [failed_dir, failure] = delegation_failure();
    if (failed_dir == dir && !failure.empty()) return none_because(failure);
    return none_because("the " + joined(required, " and ") + " controllers are not enabled in " +
                        (dir / "cgroup.subtree_control").string());
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

/// The serial of a leaf made by own_leaf_name() in parse_name()'s numbers (its last part is
/// "self").
constexpr unsigned long long kOwnLeaf = ~0ULL;

/// The numbers of a name made by unique_name() or own_leaf_name(), or nothing for any other
/// name.
std::optional<std::array<unsigned long long, 3>> parse_name(std::string_view name) {
  constexpr std::string_view kPrefix = "pi-sandbox-";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  std::array<unsigned long long, 3> numbers{};
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    const auto dash = name.find('-');
    const std::string_view part = name.substr(0, dash);
    if (i + 1 == numbers.size() && part == "self" && dash == std::string_view::npos) {
      numbers[i] = kOwnLeaf;
      break;
    }
    if (part.empty() || part.find_first_not_of("0123456789") != std::string_view::npos ||
        part.size() > 19 || (i + 1 < numbers.size()) == (dash == std::string_view::npos))
      return std::nullopt;
    numbers[i] = std::stoull(std::string(part));
    name.remove_prefix(dash == std::string_view::npos ? name.size() : dash + 1);
  }
  return numbers;
}

bool is_own_leaf(const fs::path& dir) {
  const auto numbers = parse_name(dir.filename().string());
  return numbers && (*numbers)[2] == kOwnLeaf;
}

/// Removes the cgroups that sandboxes of a pi-sandbox killed with SIGKILL left in `parent`
/// (their supervisor had no chance to). One of this pid namespace goes as soon as its
/// supervisor's pid is gone; one of another pid namespace, where kill(2) cannot see the
/// supervisor, only once it is kStaleAfter old (younger, it may belong to a sandbox still
/// starting there). The same for the leaf a pi-sandbox moved itself into (own_leaf_name()),
/// which it cannot remove itself while it is in it. rmdir(2) only removes a cgroup without
/// processes or children, so a cgroup in use is never touched.
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
  return probe_cgroups(sandbox_controllers());
}

CgroupSupport probe_cgroups(const V2Controllers& controllers) {
  const auto mounts = cgroup_mounts();
  const auto own = own_cgroups();
  const CgroupSupport v2 = probe_v2(mounts, own, controllers.required);
  if (v2.kind == CgroupSupport::Kind::V2) return v2;
  std::string why_v1;
  if (auto v1 = probe_v1(mounts, own, why_v1)) return *v1;
  if (!why_v1.empty()) return none_because(why_v1);
  if (!v2.why_not.empty()) return v2;
  return none_because("no cgroup hierarchy with the pids and memory controllers");
}

V2Controllers sandbox_controllers() {
  return {{"pids", "memory"}, {"cpu"}};
}

std::string own_leaf_name() {
  return "pi-sandbox-" + std::to_string(pid_namespace()) + "-" + std::to_string(::getpid()) +
         "-self";
}

namespace {

/// Writes "+a +b" for `controllers` into `dir`'s cgroup.subtree_control (all or none).
core::Result<void> enable(const fs::path& dir, const std::vector<std::string>& controllers) {
  std::string text;
  for (const auto& c : controllers) text += (text.empty() ? "+" : " +") + c;
  return write_text(dir / "cgroup.subtree_control", text);
}

/// V2 for `dir`, with what it can of `optional` enabled as well (each on its own: one the
/// directory does not have is left out).
CgroupSupport usable_v2(const fs::path& dir, const std::vector<std::string>& optional) {
  const std::string available = first_line(read_text(dir / "cgroup.controllers"));
  for (const auto& controller : optional)
    if (has_word(available, controller, ' ')) (void)enable(dir, {controller});
  CgroupSupport support;
  support.kind = CgroupSupport::Kind::V2;
  support.v2 = dir;
  return support;
}

/// None after `enabled` failed in `dir`: shared when the kernel said EBUSY for other
/// processes there.
CgroupSupport enable_failed(const fs::path& dir, const core::Error& error) {
  if (error.code == EBUSY)
    if (const Occupants in_dir = occupants(dir); !in_dir.others.empty())
      return none_shared(dir, in_dir.others);
  return none_because(error.describe());
}

/// Moves this process (all its threads: cgroup-v2.rst, "Processes") into `leaf`, made here
/// when missing. The leaf is removed again when the move fails.
core::Result<void> move_self_into(const fs::path& leaf) {
  if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST)
    return core::fail_errno("mkdir(\"" + leaf.string() + "\")");
  auto moved = write_text(leaf / "cgroup.procs", std::to_string(::getpid()));
  if (!moved) (void)::rmdir(leaf.c_str());
  return moved;
}

}  // namespace

CgroupSupport delegate_v2(const fs::path& dir, const V2Controllers& controllers) {
  if (has_all(first_line(read_text(dir / "cgroup.subtree_control")), controllers.required))
    return usable_v2(dir, controllers.optional);
  // First as it is: the root cgroup, and a directory this process has already left, take it.
  auto enabled = enable(dir, controllers.required);
  if (enabled) return usable_v2(dir, controllers.optional);
  if (enabled.error().code != EBUSY) return none_because(enabled.error().describe());
  const Occupants in_dir = occupants(dir);
  if (!in_dir.others.empty()) return none_shared(dir, in_dir.others);
  if (!in_dir.self) return none_because(enabled.error().describe());
  if (auto moved = move_self_into(dir / own_leaf_name()); !moved)
    return none_because(moved.error().describe());
  // Another process may have come in since cgroup.procs was read (a second pi-sandbox
  // starting there): this one stays in its leaf, harmless, and the other, alone, enables them.
  enabled = enable(dir, controllers.required);
  if (!enabled) return enable_failed(dir, enabled.error());
  return usable_v2(dir, controllers.optional);
}

void prepare_cgroup_delegation() {
  const auto mounts = cgroup_mounts();
  const auto own = own_cgroups();
  const V2Controllers controllers = sandbox_controllers();
  std::string why;
  const fs::path dir = v2_directory(mounts, own, controllers.required, why);
  if (dir.empty()) return;
  const CgroupSupport support = delegate_v2(dir, controllers);
  delegation_failure() = {dir, support.why_not};
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
    // The controllers are enabled in support.v2 already: probe_cgroups() says V2 only then
    // (prepare_cgroup_delegation()).
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
  if (kind_ == CgroupSupport::Kind::V2) {
    out.memory = counter(memory_ / "memory.events", "oom_kill") > 0;
  } else {
    const std::string oom_control = read_text(memory_ / "memory.oom_control");
    out.memory = counter_in(oom_control, "oom_kill") > 0 ||
                 counter_in(oom_control, "under_oom") > 0 || oom_seen_;
  }
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
