#include "sandbox/linux/mount_plan.hpp"

#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <deque>
#include <map>
#include <optional>

#include "sandbox/linux/placeholders.hpp"

namespace pisandbox::sandbox::linux_ {

namespace {

using policy::is_within;
using policy::NodeKind;

/// Where a path lies in the sandbox's view; decides how it can be protected.
enum class Region {
  Workspace,     ///< host-backed and writable: must be masked by a mount
  PrivateTmpfs,  ///< the hidden home, /tmp, /var/tmp: private, throw-away
  ReadOnly,      ///< the read-only host view (or a read-only re-exposed path)
};

/// Symlinks followed before giving up, as the kernel's MAXSYMLINKS.
constexpr int kMaxSymlinkHops = 40;

/// The outcome of walking a host path component by component, following symlinks.
///   resolved: the path reached; exists: whether it exists; first_missing: the first
///   component that does not exist (empty when the walk stopped on a non-directory);
///   symlinks: every symlink crossed (absolute host paths), in order.
struct Resolution {
  fs::path resolved;
  PathKind kind = PathKind::Missing;
  fs::path first_missing;
  std::vector<fs::path> symlinks;
};

class Planner {
 public:
  Planner(const policy::SandboxPolicy& policy, const PathProbe& probe)
      : policy_(policy), host_probe_(probe) {}

  MountPlan build(const std::vector<policy::ProtectedPath>& protected_paths) {
    base();
    temp();
    home();
    // Every private tmpfs (/dev, /dev/shm, /tmp, /var/tmp, the hidden home) shares one
    // budget: a command can fill them, never more than it together.
    for (auto& op : plan_.ops)
      if (op.kind == MountOpKind::Tmpfs || op.kind == MountOpKind::Overlay ||
          op.kind == MountOpKind::Conceal)
        op.size_bytes = policy_.limits.tmpfs_bytes;
    writable();
    home_top_level();
    for (const auto& p : protected_paths) protect(p);
    finish_protections();
    conceal();
    config_copies();
    return std::move(plan_);
  }

 private:
  void push(MountOp op) { plan_.ops.push_back(std::move(op)); }

  void base() {
    push({MountOpKind::RootReadOnly, "/", "/", true, NodeKind::Directory, "", "host root"});
    push({MountOpKind::Tmpfs, "/dev", "", false, NodeKind::Directory, "0755", "private /dev"});
    // Read-only binds of the host's own device inodes: reads and writes of a device do not
    // need a writable mount, but chmod, chown and utimes do (EROFS), so no metadata of a host
    // node can change from inside (Landlock does not govern metadata).
    for (auto node : dev_nodes()) {
      const fs::path path = fs::path("/dev") / node;
      push({MountOpKind::Bind, path, path, true, NodeKind::File, "", "device node"});
    }
    push({MountOpKind::DevPts, "/dev/pts", "", false, NodeKind::Directory, "", "private ptys"});
    push({MountOpKind::Symlink, "/dev/ptmx", "pts/ptmx", false, NodeKind::File, "", ""});
    push({MountOpKind::Tmpfs, "/dev/shm", "", false, NodeKind::Directory, "1777", "private shm"});
    push({MountOpKind::Symlink, "/dev/fd", "/proc/self/fd", false, NodeKind::File, "", ""});
    push({MountOpKind::Symlink, "/dev/stdin", "/proc/self/fd/0", false, NodeKind::File, "", ""});
    push({MountOpKind::Symlink, "/dev/stdout", "/proc/self/fd/1", false, NodeKind::File, "", ""});
    push({MountOpKind::Symlink, "/dev/stderr", "/proc/self/fd/2", false, NodeKind::File, "", ""});
    push({MountOpKind::Proc, "/proc", "", false, NodeKind::Directory, "", "private procfs"});
  }

  void temp() {
    if (!policy_.private_tmp) return;
    push({MountOpKind::Tmpfs, "/tmp", "", false, NodeKind::Directory, "1777", "private temp"});
    if (probe_("/var/tmp").kind == PathKind::Directory)
      push(
          {MountOpKind::Tmpfs, "/var/tmp", "", false, NodeKind::Directory, "1777", "private temp"});
  }

  void home() {
    if (!policy_.hide_home) return;
    push({MountOpKind::Tmpfs, policy_.home, "", false, NodeKind::Directory, "0700",
          "hidden home (empty, private, throw-away)"});
    for (const auto& exposure : policy_.home_read_allowed) {
      const fs::path& path = exposure.path;
      // Follow a final symlink (a dotfile manager's ~/.gitconfig -> ~/dotfiles/gitconfig):
      // the bind exposes the target's content at the link's path.
      const Resolution r = resolve(path);
      if (r.kind != PathKind::File && r.kind != PathKind::Directory) continue;
      const NodeKind node = r.kind == PathKind::Directory ? NodeKind::Directory : NodeKind::File;
      const bool overlay =
          exposure.access == policy::Access::CopyOnWrite && node == NodeKind::Directory;
      std::string why = overlay ? "re-exposed copy-on-write" : "re-exposed read-only";
      if (!exposure.why.empty()) why += ": " + exposure.why;
      push({overlay ? MountOpKind::Overlay : MountOpKind::Bind, path, path, true, node, "", why,
            IfSourceMissing::Skip, SourceSymlinks::Follow});
    }
  }

  /// Credentials (policy::SandboxPolicy::concealed), last: no bind made before (a re-exposed
  /// directory, the workspace, the read-only home, a protection of `~/.ssh`) can cover the
  /// mask. Only what a command could see is masked: a path still in the hidden home's empty
  /// layer or a private temp has nothing to hide.
  void conceal() {
    for (const auto& path : policy_.concealed) {
      // A symlink is concealed where it leads (a mount never goes on a symlink: see
      // mounts.cpp).
      const Resolution r = resolve(path);
      if (r.kind != PathKind::File && r.kind != PathKind::Directory) continue;
      if (region(r.resolved) == Region::PrivateTmpfs) continue;
      if (std::ranges::any_of(plan_.ops, [&](const MountOp& op) {
            return op.kind == MountOpKind::Conceal && op.target == r.resolved;
          }))
        continue;
      MountOp op{MountOpKind::Conceal,
                 r.resolved,
                 "",
                 true,
                 r.kind == PathKind::Directory ? NodeKind::Directory : NodeKind::File,
                 "",
                 "credential: hidden (an empty read-only " +
                     std::string(r.kind == PathKind::Directory ? "directory" : "file") + ")"};
      op.size_bytes = policy_.limits.tmpfs_bytes;
      push(std::move(op));
    }
  }

  /// Where the command sees the file `path` that resolves to `r`: the path itself in the
  /// hidden home's tmpfs; inside the bind of the re-exposed path that covers it (a re-exposure
  /// is bound from where it leads, so `~/.gitconfig -> dotfiles/gitconfig` shows the file at
  /// `~/.gitconfig`, not at `~/dotfiles/gitconfig`), when it resolves within that bind's
  /// source; elsewhere where it leads (a mount never goes on a symlink).
  fs::path seen_at(const fs::path& path, const Resolution& r) const {
    if (region(path) == Region::PrivateTmpfs) return path;
    if (policy_.hide_home && is_within(path, policy_.home)) {
      fs::path exposed;
      for (const auto& e : policy_.home_read_allowed)
        if (is_within(path, e.path) && depth(e.path) > depth(exposed)) exposed = e.path;
      if (!exposed.empty()) {
        const fs::path source = resolve(exposed).resolved;
        if (r.resolved == source) return exposed;
        if (is_within(r.resolved, source)) return exposed / r.resolved.lexically_relative(source);
      }
    }
    return r.resolved;
  }

  /// Tool configuration without its credentials (policy::SandboxPolicy::sanitized), last with
  /// the credentials and for the same reason, where the command sees the file (seen_at()).
  /// Nothing for a missing file.
  void config_copies() {
    for (const auto& copy : policy_.sanitized) {
      const Resolution r = resolve(copy.path);
      if (r.kind != PathKind::File) continue;
      const fs::path target = seen_at(copy.path, r);
      if (std::ranges::any_of(plan_.ops, [&](const MountOp& op) {
            return (op.kind == MountOpKind::ConfigCopy || op.kind == MountOpKind::Conceal) &&
                   op.target == target;
          }))
        continue;
      MountOp op{MountOpKind::ConfigCopy,
                 target,
                 r.resolved,
                 true,
                 NodeKind::File,
                 "",
                 "tool configuration: a read-only copy without its credentials (" +
                     std::string(policy::to_string(copy.format)) + ")"};
      op.size_bytes = policy_.limits.tmpfs_bytes;
      op.config = copy.format;
      push(std::move(op));
    }
  }

  /// The workspace, then the other read-write binds (git directories, configured caches).
  void writable() {
    for (const auto& exposure : policy_.writable) {
      const bool workspace = exposure.path == policy_.workspace;
      const PathKind kind = workspace ? PathKind::Directory : probe_(exposure.path).kind;
      if (kind != PathKind::Directory && kind != PathKind::File) continue;
      push({MountOpKind::Bind, exposure.path, exposure.path, false,
            kind == PathKind::File ? NodeKind::File : NodeKind::Directory, "",
            workspace ? "workspace (read-write)" : "read-write: " + exposure.why,
            workspace ? IfSourceMissing::Fail : IfSourceMissing::Skip});
    }
  }

  /// The workspace is or contains the home: its top level read-only, its ordinary entries
  /// read-write again (policy::SandboxPolicy::home_read_only).
  void home_top_level() {
    if (!policy_.home_read_only) return;
    push({MountOpKind::Bind, policy_.home, policy_.home, true, NodeKind::Directory, "",
          "the home's top level and dot-entries, read-only (the workspace contains the home)"});
    for (const auto& entry : policy_.home_writable_entries) {
      const PathKind kind = probe_(entry).kind;
      if (kind != PathKind::Directory && kind != PathKind::File)
        continue;  // links stay as they are
      push({MountOpKind::Bind, entry, entry, false,
            kind == PathKind::Directory ? NodeKind::Directory : NodeKind::File, "",
            "an ordinary entry of the home (read-write)", IfSourceMissing::Skip});
    }
  }

  /// The region of a path is decided by the last mount, in plan order, whose target contains
  /// it: a later bind covers everything an earlier one exposed beneath it. The order here is
  /// the order of build(): the private temp dirs, the hidden home, its read-only re-exposes,
  /// the writable binds, then the read-only home over a workspace that contains it and its
  /// writable entries. (Taking the longest match instead once let a read-only re-expose
  /// inside the workspace hide a protected path from protect(), while the workspace's
  /// read-write bind, mounted after, made it writable again.)
  Region region(const fs::path& path) const {
    static const fs::path kTmp = "/tmp", kVarTmp = "/var/tmp";
    Region found = Region::ReadOnly;
    const auto consider = [&](const fs::path& root, Region region) {
      if (is_within(path, root)) found = region;
    };
    if (policy_.private_tmp) {
      consider(kTmp, Region::PrivateTmpfs);
      consider(kVarTmp, Region::PrivateTmpfs);
    }
    if (policy_.hide_home) {
      consider(policy_.home, Region::PrivateTmpfs);
      for (const auto& e : policy_.home_read_allowed) consider(e.path, Region::ReadOnly);
    }
    for (const auto& e : policy_.writable) consider(e.path, Region::Workspace);
    if (policy_.home_read_only) {
      consider(policy_.home, Region::ReadOnly);
      for (const auto& p : policy_.home_writable_entries) consider(p, Region::Workspace);
    }
    return found;
  }

  Resolution resolve(const fs::path& path) const {
    Resolution r;
    const fs::path relative = path.relative_path();
    std::deque<fs::path> remaining(relative.begin(), relative.end());
    fs::path current = "/";
    int hops = 0;
    while (!remaining.empty()) {
      const fs::path component = remaining.front();
      remaining.pop_front();
      if (component.empty() || component == ".") continue;
      if (component == "..") {
        current = current.parent_path();
        continue;
      }
      const fs::path next = current / component;
      const PathFacts facts = probe_(next);
      if (facts.kind == PathKind::Missing) {
        r.first_missing = next;
        r.resolved = next;
        for (const auto& rest : remaining) r.resolved /= rest;
        r.kind = PathKind::Missing;
        return r;
      }
      if (facts.kind == PathKind::Symlink) {
        r.symlinks.push_back(next);
        if (++hops > kMaxSymlinkHops) {
          // A loop: pinning the links crossed so far keeps the walk's meaning fixed.
          r.resolved = next;
          r.kind = PathKind::Symlink;
          return r;
        }
        const fs::path& target = facts.link_target;
        if (target.is_absolute()) current = "/";
        const auto parts = target.relative_path();
        remaining.insert(remaining.begin(), parts.begin(), parts.end());
        continue;
      }
      if (!remaining.empty() && facts.kind != PathKind::Directory) {
        r.resolved = next;  // ENOTDIR: nothing can ever exist below a file
        r.kind = PathKind::Other;
        return r;
      }
      current = next;
      r.kind = facts.kind;
    }
    r.resolved = current;
    if (r.kind == PathKind::Missing) r.kind = probe_(current).kind;
    return r;
  }

  void protect(const policy::ProtectedPath& p) {
    if (is_within(policy_.workspace, p.path) && p.path != policy_.workspace) {
      plan_.unprotectable.push_back(p.path.string() +
                                    ": the workspace lies inside this protected path");
      return;
    }
    if (p.path == policy_.workspace) {
      plan_.unprotectable.push_back(p.path.string() + ": the workspace is a protected path");
      return;
    }
    // pi-sandbox itself inside a private /tmp (a test stage, an unpacked release) is bound
    // there read-only, so `pi-sandbox proxy-connect` (the SSH ProxyCommand) stays runnable.
    if (p.reason == policy::ProtectReason::SandboxBinary &&
        region(p.path) == Region::PrivateTmpfs && resolve(p.path).kind == PathKind::File) {
      protections_.push_back({MountOpKind::Bind, p.path, p.path, true, NodeKind::File, "",
                              "pi-sandbox itself, read-only", IfSourceMissing::Skip,
                              SourceSymlinks::Follow});
      return;
    }
    bool through_link_only = false;
    if (region(p.path) != Region::Workspace) {
      if (region(p.path) == Region::PrivateTmpfs && p.create_if_missing && policy_.hide_home &&
          is_within(p.path, policy_.home))
        protections_.push_back({MountOpKind::MaskMissing, p.path, "", true, p.kind, "",
                                std::string(policy::to_string(p.reason))});
      // Outside the workspace the path itself cannot be changed, but on the host it may be
      // a symlink into the workspace (a dotfile manager's ~/.bashrc -> <ws>/bashrc, the
      // trusted configuration kept in a repository): then what it points to is protected.
      through_link_only = true;
    }
    const Resolution r = resolve(p.path);
    if (through_link_only && (r.symlinks.empty() || region(r.resolved) != Region::Workspace))
      return;
    const std::string why(policy::to_string(p.reason));
    for (const auto& link : r.symlinks)
      if (region(link) == Region::Workspace)
        protections_.push_back(
            {MountOpKind::PinSymlink, link, link, true, NodeKind::File, "", why + " (symlink)"});
    if (region(r.resolved) != Region::Workspace) return;
    switch (r.kind) {
      case PathKind::File:
      case PathKind::Directory:
      case PathKind::Other: {
        if (r.kind == PathKind::Other && !r.first_missing.empty()) return;
        const NodeKind node = r.kind == PathKind::Directory ? NodeKind::Directory : NodeKind::File;
        protections_.push_back({MountOpKind::Bind, r.resolved, r.resolved, true, node, "", why,
                                IfSourceMissing::Placeholder});
        return;
      }
      case PathKind::Missing: {
        if ((!p.create_if_missing && !through_link_only) || r.first_missing.empty()) return;
        if (region(r.first_missing.parent_path()) != Region::Workspace) return;
        // A file git reads whenever one exists (`commondir`): a placeholder directory there
        // makes every git command fail (`failed to read .git/commondir: Is a directory`), so
        // it is guarded in strict mode too.
        const bool git_reads_any_node = p.reason == policy::ProtectReason::GitControl &&
                                        p.kind == NodeKind::File &&
                                        r.resolved.filename() == "commondir";
        if (policy_.protection == policy::Protection::Guard || git_reads_any_node) {
          // Creating a new secret is ordinary work (`cp .env.example .env`); existing ones
          // stay protected against overwrite above.
          if (p.reason == policy::ProtectReason::Secret) return;
          const fs::path base = guard_base(r.resolved);
          if (!base.empty()) guarded_.push_back({r.resolved, base, why});
          return;
        }
        // Missing parents (`.claude` of `.claude/commands`) are made as ordinary directories,
        // so that they stay usable; only the protected name itself is held.
        for (fs::path dir = r.first_missing; dir != r.resolved && is_within(r.resolved, dir);
             dir /= *std::next(r.resolved.begin(), static_cast<std::ptrdiff_t>(depth(dir))))
          scaffolds_.push_back({MountOpKind::HostScaffold, dir, "", false, NodeKind::Directory, "",
                                why + " (missing parent: made, removed afterwards if empty)"});
        // Always a directory, even for a file name: see placeholders.hpp.
        protections_.push_back({MountOpKind::HostPlaceholder, r.resolved, "", true,
                                NodeKind::Directory, "", why + " (missing: placeholder)"});
        return;
      }
      case PathKind::Symlink:
        return;  // pinned above
    }
  }

  /// The deepest writable mount root that contains `path`: a read-write bind or one of the
  /// home's writable entries (each a mount point: it cannot be renamed), or empty.
  fs::path guard_base(const fs::path& path) const {
    fs::path found = writable_root(path);
    for (const auto& entry : policy_.home_writable_entries)
      if (is_within(path, entry) && depth(entry) > depth(found)) found = entry;
    return found;
  }

  /// The deepest read-write bind that contains `path` (a mount point: it cannot be renamed),
  /// or empty.
  fs::path writable_root(const fs::path& path) const {
    fs::path found;
    for (const auto& e : policy_.writable)
      if (is_within(path, e.path) && depth(e.path) > depth(found)) found = e.path;
    return found;
  }

  static std::size_t depth(const fs::path& path) {
    return static_cast<std::size_t>(std::distance(path.begin(), path.end()));
  }

  /// Read-only directory masks: nothing below them needs (or may get) another mount,
  /// because a read-write pin below a read-only directory would re-open it.
  bool under_read_only_directory(const fs::path& target) const {
    return std::ranges::any_of(protections_, [&](const MountOp& op) {
      const bool ro_dir =
          op.node == NodeKind::Directory && op.read_only &&
          (op.kind == MountOpKind::Bind || op.kind == MountOpKind::HostPlaceholder ||
           op.kind == MountOpKind::MaskMissing);
      return ro_dir && op.target != target && is_within(target, op.target);
    });
  }

  void finish_protections() {
    // Deduplicate (first reason wins), drop what a read-only directory already covers.
    std::vector<MountOp> unique;
    for (auto& op : protections_) {
      if (std::ranges::any_of(unique, [&](const MountOp& u) { return u.target == op.target; }))
        continue;
      unique.push_back(op);
    }
    protections_ = std::move(unique);
    std::vector<MountOp> kept;
    for (const auto& op : protections_)
      if (!under_read_only_directory(op.target)) kept.push_back(op);
    // Pin every workspace directory between the workspace root and a protected path, so
    // that no parent of a protected path can be renamed away (EBUSY on a mount point).
    std::vector<fs::path> pins;
    for (const auto& op : kept) {
      if (op.kind == MountOpKind::MaskMissing) continue;
      const fs::path root = writable_root(op.target);
      if (root.empty()) continue;
      for (fs::path dir = op.target.parent_path();
           dir != root && is_within(dir, root) && dir != dir.root_path(); dir = dir.parent_path())
        if (std::ranges::find(pins, dir) == pins.end()) pins.push_back(dir);
    }
    std::ranges::stable_sort(pins, {}, depth);
    // Scaffolds first: the pins below bind them onto themselves.
    std::vector<MountOp> scaffolds;
    for (const auto& op : scaffolds_)
      if (!under_read_only_directory(op.target) &&
          std::ranges::none_of(scaffolds, [&](const MountOp& s) { return s.target == op.target; }))
        scaffolds.push_back(op);
    std::ranges::stable_sort(scaffolds, {}, [](const MountOp& op) { return depth(op.target); });
    for (auto& op : scaffolds) push(std::move(op));
    for (const auto& dir : pins) {
      // A directory under a read-only bind cannot be renamed anyway, and a read-write pin
      // there would make it writable again.
      if (under_read_only_directory(dir) || region(dir) != Region::Workspace) continue;
      if (std::ranges::find(policy_.home_writable_entries, dir) !=
          policy_.home_writable_entries.end())
        continue;  // bound onto itself already
      if (std::ranges::any_of(kept, [&](const MountOp& op) { return op.target == dir; })) continue;
      push({MountOpKind::Bind, dir, dir, false, NodeKind::Directory, "",
            "pinned parent of a protected path", IfSourceMissing::Scaffold});
    }
    std::ranges::stable_sort(kept, {}, [](const MountOp& op) { return depth(op.target); });
    for (auto& op : kept) push(std::move(op));
    // A guarded name below a read-only directory cannot be created at all.
    for (auto& name : guarded_)
      if (!under_read_only_directory(name.path) &&
          std::ranges::none_of(plan_.guarded,
                               [&](const GuardedName& g) { return g.path == name.path; }) &&
          std::ranges::none_of(kept, [&](const MountOp& op) { return op.target == name.path; }))
        plan_.guarded.push_back(std::move(name));
  }

  const policy::SandboxPolicy& policy_;
  /// The probe, memoized: protected paths share their ancestors, so each host path is
  /// looked at once per plan.
  const PathFacts& probe_(const fs::path& path) const {
    auto it = probe_cache_.find(path);
    if (it == probe_cache_.end()) it = probe_cache_.emplace(path, host_probe_(path)).first;
    return it->second;
  }

  const PathProbe& host_probe_;
  mutable std::map<fs::path, PathFacts> probe_cache_;
  MountPlan plan_;
  std::vector<MountOp> protections_;
  std::vector<MountOp> scaffolds_;
  std::vector<GuardedName> guarded_;
};

}  // namespace

const std::vector<std::string_view>& dev_nodes() {
  static const std::vector<std::string_view> nodes = {"null",   "zero",    "full",
                                                      "random", "urandom", "tty"};
  return nodes;
}

MountPlan plan_mounts(const policy::SandboxPolicy& policy,
                      const std::vector<policy::ProtectedPath>& protected_paths,
                      const PathProbe& probe) {
  return Planner(policy, probe).build(protected_paths);
}

PathFacts probe_host_path(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {PathKind::Missing, {}};
  if (S_ISDIR(st.st_mode)) {
    // Another sandbox's placeholder is about to vanish: plan as if it were missing (the
    // applier adopts it if it is still there).
    char value[8];
    if (::lgetxattr(path.c_str(), kPlaceholderXattr, value, sizeof value) >= 0)
      return {PathKind::Missing, {}};
    return {PathKind::Directory, {}};
  }
  if (S_ISREG(st.st_mode)) return {PathKind::File, {}};
  if (S_ISLNK(st.st_mode)) {
    std::string target(PATH_MAX, '\0');
    const ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
    target.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return {PathKind::Symlink, target};
  }
  return {PathKind::Other, {}};
}

std::string_view to_string(MountOpKind kind) {
  switch (kind) {
    case MountOpKind::RootReadOnly:
      return "root-ro";
    case MountOpKind::Tmpfs:
      return "tmpfs";
    case MountOpKind::Proc:
      return "proc";
    case MountOpKind::DevPts:
      return "devpts";
    case MountOpKind::Bind:
      return "bind";
    case MountOpKind::Symlink:
      return "symlink";
    case MountOpKind::PinSymlink:
      return "pin-symlink";
    case MountOpKind::HostPlaceholder:
      return "placeholder";
    case MountOpKind::MaskMissing:
      return "mask-missing";
    case MountOpKind::HostScaffold:
      return "scaffold";
    case MountOpKind::Overlay:
      return "overlay";
    case MountOpKind::Conceal:
      return "conceal";
    case MountOpKind::ConfigCopy:
      return "config-copy";
  }
  return "unknown";
}

std::string describe(const MountOp& op) {
  std::string kind(to_string(op.kind));
  if (op.kind == MountOpKind::Bind) kind += op.read_only ? "-ro" : "-rw";
  if (op.kind == MountOpKind::MaskMissing || op.kind == MountOpKind::Conceal)
    kind += op.node == NodeKind::Directory ? "-dir" : "-file";
  std::string line = kind;
  line.resize(std::max<std::size_t>(line.size() + 1, 18), ' ');
  line += op.target.string();
  if (op.kind == MountOpKind::Symlink) line += " -> " + op.source.string();
  if (op.kind == MountOpKind::Tmpfs)
    line += " (mode " + op.mode +
            (op.size_bytes != 0 ? ", shared budget " + policy::mebibytes(op.size_bytes) : "") + ")";
  if (!op.why.empty()) line += "  # " + op.why;
  return line;
}

}  // namespace pisandbox::sandbox::linux_
