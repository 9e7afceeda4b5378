// pisandbox::policy — discovery of protected paths that exist in a workspace.
//
// I/O of the policy layer (with workspace_links.hpp): it reads directory entries to find nested
// repositories, dangerous files and secrets (compatibility C22, C26–C27), and of file contents only
// each repository's `.git/config`, for `core.hooksPath`.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "policy/sandbox_policy.hpp"

namespace pisandbox::policy {

/// Bounds of the workspace scan.
///   max_depth: how many directory levels below the workspace root are read; entries of
///     the root are at depth 1 (compatibility C22 uses 4). Trees named by
///     is_skipped_directory_name() are never entered, and symbolic links are never followed.
///   home, user_hooks_path: for `core.hooksPath` (hooks_directory()): the home `~/` stands
///     for, and the value of the user's and system's configuration, which applies to a
///     repository whose `.git/config` sets none (SandboxPolicy::user_hooks_path).
struct ScanOptions {
  int max_depth = 4;
  std::filesystem::path home = {};
  std::string user_hooks_path = {};
};

/// The scan options of `policy`'s command: the default depth, its home and user hooks path.
ScanOptions scan_options(const SandboxPolicy& policy);

/// What the scan found, plus its cost for `pi-sandbox policy` and the benchmark.
///   protected_paths: existing dangerous files and directories, `.git/hooks` of every
///     repository (the workspace's own and nested ones; created as a placeholder when the
///     repository has none), the directory `core.hooksPath` names when it lies in the
///     workspace (`.git/config` read for it), secrets by pattern and `secrets/`, `.secrets/`
///     directories.
///   directories_read / entries_seen: counters of the work done.
struct ScanResult {
  std::vector<ProtectedPath> protected_paths;
  std::size_t directories_read = 0;
  std::size_t entries_seen = 0;
};

/// Scans `workspace` (absolute). Unreadable directories are skipped silently: what the
/// scan cannot read, the sandbox cannot read either.
ScanResult scan_workspace(const std::filesystem::path& workspace, const ScanOptions& options);

/// Scans every writable root that a command's protected paths are searched in: the workspace,
/// then each `filesystem.additionalAllowWrite` entry (Origin::ConfiguredWrite) that exists,
/// with the same bounds (docs/security.md, "Every writable root"). The results are appended in
/// that order and the counters summed.
ScanResult scan_writable_roots(const SandboxPolicy& policy, const ScanOptions& options);

/// The protected paths of a command: `fixed` (SandboxPolicy::protected_paths) in order, then each
/// of `scanned` (ScanResult::protected_paths) whose path `fixed` does not hold already (the fixed
/// entry, with its reason and kind, wins). Both sandboxes plan from this list.
std::vector<ProtectedPath> merge_protected(const std::vector<ProtectedPath>& fixed,
                                           const std::vector<ProtectedPath>& scanned);

}  // namespace pisandbox::policy
