#include "sandbox/linux/landlock.hpp"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/unique_fd.hpp"

namespace pisandbox::sandbox::linux_ {

namespace {

using core::UniqueFd;

// Rights added by each ABI (landlock.rst, "Filesystem flags" and "Scope flags").
constexpr std::uint64_t kReadExecute =
    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
constexpr std::uint64_t kWriteAbi1 = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                                     LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                                     LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                                     LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                                     LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
constexpr std::uint64_t kRefer = 1ULL << 13;             // ABI 2: LANDLOCK_ACCESS_FS_REFER
constexpr std::uint64_t kTruncate = 1ULL << 14;          // ABI 3: LANDLOCK_ACCESS_FS_TRUNCATE
constexpr std::uint64_t kIoctlDev = 1ULL << 15;          // ABI 5: LANDLOCK_ACCESS_FS_IOCTL_DEV
constexpr std::uint64_t kScopeAbstractUnix = 1ULL << 0;  // ABI 6
constexpr std::uint64_t kScopeSignal = 1ULL << 1;        // ABI 6
constexpr std::uint64_t kNetConnectTcp = 1ULL << 1;      // ABI 4: LANDLOCK_ACCESS_NET_CONNECT_TCP
constexpr int kRuleNetPort = 2;                          // ABI 4: LANDLOCK_RULE_NET_PORT

// Declared here so the code builds against older kernel headers too.
struct RulesetAttr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;
  std::uint64_t scoped;
};

struct PathBeneathAttr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
} __attribute__((packed));

struct NetPortAttr {
  std::uint64_t allowed_access;
  std::uint64_t port;
} __attribute__((packed));

std::uint64_t handled_fs(int abi) {
  std::uint64_t rights = kReadExecute | kWriteAbi1;
  if (abi >= 2) rights |= kRefer;
  if (abi >= 3) rights |= kTruncate;
  if (abi >= 5) rights |= kIoctlDev;
  return rights;
}

std::uint64_t file_rights(std::uint64_t rights) {
  // Rights that make sense on a non-directory (landlock.rst: "ACCESS_FILE").
  return rights & (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                   LANDLOCK_ACCESS_FS_READ_FILE | kTruncate | kIoctlDev);
}

core::Result<void> add_rule(int ruleset, int fd, std::uint64_t rights, const std::string& shown) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return core::fail_errno("fstat(\"" + shown + "\")");
  PathBeneathAttr attr{S_ISDIR(st.st_mode) ? rights : file_rights(rights), fd};
  if (::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) != 0)
    return core::fail_errno("landlock_add_rule(\"" + shown + "\")");
  return {};
}

core::Result<void> add_port_rules(int ruleset, const LandlockPlan& plan) {
  for (const std::uint16_t port : plan.connect_ports) {
    NetPortAttr attr{kNetConnectTcp, port};
    if (::syscall(SYS_landlock_add_rule, ruleset, kRuleNetPort, &attr, 0) != 0)
      return core::fail_errno("landlock_add_rule(tcp connect port " + std::to_string(port) + ")");
  }
  return {};
}

}  // namespace

LandlockPlan plan_landlock(const policy::SandboxPolicy& policy) {
  LandlockPlan plan;
  plan.rules.push_back({"/", LandlockAccess::ReadExecute});
  for (const auto& e : policy.writable) plan.rules.push_back({e.path, LandlockAccess::ReadWrite});
  if (policy.private_tmp) {
    plan.rules.push_back({"/tmp", LandlockAccess::ReadWrite});
    plan.rules.push_back({"/var/tmp", LandlockAccess::ReadWrite});
  }
  if (policy.hide_home) plan.rules.push_back({policy.home, LandlockAccess::ReadWrite});
  plan.rules.push_back({"/dev", LandlockAccess::ReadWrite});
  return plan;
}

int landlock_abi_version() {
  const long abi =
      ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

core::Result<void> apply_landlock(const LandlockPlan& plan, int abi) {
  const std::uint64_t handled = handled_fs(abi);
  const bool net = plan.restrict_tcp_connect && abi >= 4;
  RulesetAttr attr{handled, net ? kNetConnectTcp : 0,
                   abi >= 6 ? (kScopeAbstractUnix | kScopeSignal) : 0};
  // The attribute size tells the kernel which fields we use: `handled_access_net` exists from
  // ABI 4, `scoped` from ABI 6.
  const std::size_t size =
      abi >= 6 ? sizeof attr : (net ? 2 * sizeof(std::uint64_t) : sizeof(std::uint64_t));
  UniqueFd ruleset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0)));
  if (!ruleset) return core::fail_errno("landlock_create_ruleset(abi " + std::to_string(abi) + ")");
  for (const auto& rule : plan.rules) {
    UniqueFd fd(::open(rule.path.c_str(), O_PATH | O_CLOEXEC));
    if (!fd) continue;  // e.g. /var/tmp on a system without it
    const std::uint64_t rights =
        rule.access == LandlockAccess::ReadWrite ? handled : (handled & kReadExecute);
    if (auto r = add_rule(ruleset.get(), fd.get(), rights, rule.path.string()); !r) return r;
  }
  if (plan.grant_stdio_terminals) {
    for (int stdio = 0; stdio <= 2; ++stdio) {
      struct stat st {};
      if (::fstat(stdio, &st) != 0 || !S_ISCHR(st.st_mode)) continue;
      const std::string link = "/proc/self/fd/" + std::to_string(stdio);
      UniqueFd fd(::open(link.c_str(), O_PATH | O_CLOEXEC));
      if (!fd) continue;
      if (auto r = add_rule(ruleset.get(), fd.get(), handled, link); !r) return r;
    }
  }
  if (net)
    if (auto r = add_port_rules(ruleset.get(), plan); !r) return r;
  if (::syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0)
    return core::fail_errno("landlock_restrict_self()");
  return {};
}

}  // namespace pisandbox::sandbox::linux_
