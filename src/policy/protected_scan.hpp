// pisandbox::policy — discovery of protected paths that exist in a workspace, and of the
// home's credentials under other names there.
//
// I/O of the policy layer (with workspace_links.hpp): it reads directory entries to find nested
// repositories, dangerous files and secrets (compatibility C22, C26–C27), and of file contents only
// each repository's `.git/config`, for `core.hooksPath`, and /proc/self/mountinfo; it stats the
// credentials of the home and, while one has other links, the regular files it meets
// (docs/security.md, "Hard links and binds of a credential").
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "policy/sandbox_policy.hpp"

namespace pisandbox::policy {

/// A credential file of the home as the host sees it: its inode, for finding its other names.
///   path: the credential (absolute: a file row of credential_names(), a file below a directory
///     row, or a private key in `~/.ssh`); dev, ino: stat(2) of it, symlinks followed;
///   links: its st_nlink. Directory rows are there too, for credential_binds().
struct CredentialInode {
  std::filesystem::path path;
  dev_t dev = 0;
  ino_t ino = 0;
  nlink_t links = 1;
  bool directory = false;  ///< a directory row: found only as a bind, never as a hard link

  friend bool operator==(const CredentialInode&, const CredentialInode&) = default;
};

/// A file in a readable or writable place that is a credential under another name: a hard link
/// (the same st_dev and st_ino) or a bind mount of it (docs/security.md, "Hard links and binds
/// of a credential").
///   path: where the command would read it (absolute); credential: CredentialInode::path.
struct CredentialLink {
  std::filesystem::path path;
  std::filesystem::path credential;

  friend bool operator==(const CredentialLink&, const CredentialLink&) = default;
};

/// The line a command starts with for each CredentialLink, without the `warning: ` prefix
/// (docs/security.md, "Hard links and binds of a credential").
std::string credential_link_warning(const CredentialLink& link);

/// Bounds of the workspace scan.
///   max_depth: how many directory levels below the workspace root are read; entries of
///     the root are at depth 1 (compatibility C22 uses 4). Trees named by
///     is_skipped_directory_name() are never entered, and symbolic links are never followed.
///   home, user_hooks_path: for `core.hooksPath` (hooks_directory()): the home `~/` stands
///     for, and the value of the user's and system's configuration, which applies to a
///     repository whose `.git/config` sets none (SandboxPolicy::user_hooks_path).
///   linked_credentials: credentials with more than one link (CredentialInode::links > 1): each
///     regular file the scan meets with st_nlink > 1 is compared with them (one fstatat(2) per
///     regular file, only while this is not empty).
///   links_only: only compare files with linked_credentials, protect nothing (a read-only root).
struct ScanOptions {
  int max_depth = 4;
  std::filesystem::path home = {};
  std::string user_hooks_path = {};
  std::vector<CredentialInode> linked_credentials = {};
  bool links_only = false;
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
///   credential_links: files found to be a credential of ScanOptions::linked_credentials (and,
///     from scan_writable_roots(), bind mounts of any credential), concealed like it.
///   unlocated_links: for each linked credential, how many of its other links the scan did not
///     find where it looked (they lie elsewhere on its filesystem, or beyond the scan's bounds).
struct ScanResult {
  std::vector<ProtectedPath> protected_paths;
  std::size_t directories_read = 0;
  std::size_t entries_seen = 0;
  std::vector<CredentialLink> credential_links = {};
  std::vector<std::pair<std::filesystem::path, std::size_t>> unlocated_links = {};
};

/// Scans `workspace` (absolute). Unreadable directories are skipped silently: what the
/// scan cannot read, the sandbox cannot read either.
ScanResult scan_workspace(const std::filesystem::path& workspace, const ScanOptions& options);

/// Scans every writable root that a command's protected paths are searched in: the workspace,
/// then each `filesystem.additionalAllowWrite` entry (Origin::ConfiguredWrite) that exists,
/// with the same bounds (docs/security.md, "Every writable root"). The results are appended in
/// that order and the counters summed.
///
/// It also finds the credentials of the home under other names (docs/security.md, "Hard links
/// and binds of a credential"): when a credential of credential_inodes() has more than one link
/// (and is not handed in), the same walk compares every regular file with st_nlink > 1, and the
/// re-exposed directories of the hidden home (`additionalAllowRead`, toolchain roots) are walked
/// with the same bounds for that alone; every mount point of /proc/self/mountinfo inside those
/// places that is a credential's inode is one too. Links already concealed by name are left
/// out. `options.linked_credentials` is ignored (computed here).
ScanResult scan_writable_roots(const SandboxPolicy& policy, const ScanOptions& options);

/// The credentials of the home as the host has them (stat(2), symlinks followed; what cannot be
/// stat'ed is left out): the rows of credential_names(), the regular files below its directory
/// rows (4 levels), the tool configuration files of mixed_config_names() (shown as copies
/// without their tokens at their own path only), and every regular file directly in `~/.ssh`
/// but the public ones of ssh(1), FILES (`*.pub`, `known_hosts*`, `authorized_keys*`,
/// `config`, `environment`, `rc`). Empty when `home` is empty or "/".
std::vector<CredentialInode> credential_inodes(const std::filesystem::path& home);

/// The mount points in /proc/self/mountinfo's format `mountinfo` (proc(5)) that lie inside one
/// of `places` (absolute, lexically normal) and whose stat(2) is the inode of one of
/// `credentials`: a credential bound elsewhere (`mount --bind ~/.ssh/id_rsa ws/key`).
std::vector<CredentialLink> credential_binds(std::string_view mountinfo,
                                             const std::vector<std::filesystem::path>& places,
                                             const std::vector<CredentialInode>& credentials);

/// The protected paths of a command: `fixed` (SandboxPolicy::protected_paths) in order, then each
/// of `scanned` (ScanResult::protected_paths) whose path `fixed` does not hold already (the fixed
/// entry, with its reason and kind, wins). Both sandboxes plan from this list.
std::vector<ProtectedPath> merge_protected(const std::vector<ProtectedPath>& fixed,
                                           const std::vector<ProtectedPath>& scanned);

}  // namespace pisandbox::policy
