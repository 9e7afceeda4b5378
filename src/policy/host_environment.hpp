// pisandbox::policy — the environment of a program pi-sandbox itself starts on the host: the
// automatic reviewer, the approved host-IPC run, serve's workers (pure: no syscalls, no I/O).
//
// Source: docs/security.md, "What pi-sandbox starts on the host". A sandboxed command may write
// its writable roots (the workspace, `filesystem.additionalAllowWrite`, the git directory of the
// repository around it); a variable of the caller that makes a host program load or run a file
// from there ($PATH's `.venv/bin` or `./node_modules/.bin`, `LD_PRELOAD`, `BASH_ENV`, an exported
// function) would run what the command planted, unsandboxed. Credentials are not this rule's
// business (the host-IPC run exists to use the caller's agents and tokens): only what can point
// into a writable place is taken out.
#pragma once

#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pisandbox::policy {

/// What a host program's environment keeps of one variable (host_variables()).
enum class HostVariableRule {
  /// A search list (`PATH`, `CDPATH`): entries that are empty, relative or inside a writable
  /// area are dropped, the rest kept in order; the variable is dropped when no entry is left
  /// (`PATH` then gets host_environment()'s fallback).
  SearchList,
  /// A list of paths (separated by `:`; `LD_PRELOAD` also by spaces, `LUA_*` by `;`): passed
  /// only when every entry is an absolute path outside every writable area (an empty entry
  /// means the working directory, the workspace, to the loaders that read these lists).
  PathsOutside,
  /// A program (`EDITOR`, `GIT_SSH_COMMAND`): passed when its first word is a bare name (found
  /// through the cleaned `PATH`) or an absolute path outside every writable area.
  Program,
  /// Never passed: code or options that load files in the value itself, which no rule of
  /// paths can check.
  Never,
};

/// One row of the table: a variable name pattern (policy/environment.hpp's matches_variable:
/// `*` is any run of characters, ASCII case ignored), its rule and why.
struct HostVariable {
  std::string_view pattern;
  HostVariableRule rule;
  std::string_view why;
};

/// The table, in order (docs/security.md, "What pi-sandbox starts on the host", shows the same
/// rows): the first row whose pattern matches a name decides; a name no row matches is passed
/// unchanged.
[[nodiscard]] std::span<const HostVariable> host_variables();

/// One area of the host as a sandboxed command sees it.
///   path: absolute, lexically normal, real (as the session resolved it).
///   writable: whether the command can write there. The deepest area holding a path decides
///     (the workspace is writable; a home bound read-only over it is not; the home's non-dot
///     entries bound writable again are).
struct WritableArea {
  std::filesystem::path path;
  bool writable = true;
  friend bool operator==(const WritableArea&, const WritableArea&) = default;
};

/// Where a path would be found on the host (every symbolic link followed, missing parts kept
/// as written); the identity for a pure caller. Given absolute, lexically normal paths.
using HostResolver = std::function<std::filesystem::path(const std::filesystem::path&)>;

/// Whether `path` (absolute) lies in a writable area: the deepest area that is `path` or holds
/// it is writable (of two areas at one path, the read-only one decides: the home bound
/// read-only over a workspace that is the home). `resolve` is applied to the lexically normal path
/// first.
[[nodiscard]] bool in_writable_area(const std::filesystem::path& path,
                                    std::span<const WritableArea> areas,
                                    const HostResolver& resolve = {});

/// One variable the host environment left out or changed, for messages and `policy`.
///   name: the variable; entry: the value's entry that decided (a `PATH` directory, a path of
///   `LD_PRELOAD`), empty for a Never row; kept: true when the variable stays with fewer
///   entries (`PATH`).
struct HostVariableDrop {
  std::string name;
  std::string entry;
  bool kept = false;
  friend bool operator==(const HostVariableDrop&, const HostVariableDrop&) = default;
};

/// The environment of a program pi-sandbox starts on the host.
///   env: the caller's `NAME=value` entries in order, each decided by host_variables().
///   dropped: what was left out, in the caller's order (a `PATH` entry each).
struct HostEnvironment {
  std::vector<std::string> env;
  std::vector<HostVariableDrop> dropped;
};

/// The caller's environment (`NAME=value`; an entry without `=` is a name with an empty
/// value) as host_variables() decides for a program started on the host. An empty `areas`
/// still drops relative and empty entries and every Never row. When no `PATH` is left (or the
/// caller had none), `PATH=/bin:/usr/bin` (confstr(3) _CS_PATH, less what lies in a writable
/// area) is appended: a shell without PATH would search its own default, `.` included for
/// bash.
[[nodiscard]] HostEnvironment host_environment(std::span<const std::string> caller,
                                               std::span<const WritableArea> areas,
                                               const HostResolver& resolve = {});

/// The directories of a `PATH` value (`a:b:c`) that host_environment() drops, in order, each
/// as written; an empty entry is returned as "".
[[nodiscard]] std::vector<std::string> dropped_search_entries(std::string_view path_value,
                                                              std::span<const WritableArea> areas,
                                                              const HostResolver& resolve = {});

/// The environment serve's worker process itself starts with (`pi-sandbox serve-worker`,
/// before it reads its request): `env` less every variable the dynamic loader or the C library
/// reads to load a file (`LD_*`, `GCONV_PATH`, `LOCPATH`): the worker runs on the host until it
/// sandboxes, and the request's own `env` is for the command inside (it reaches the worker
/// through the request line, never through the worker's process environment).
[[nodiscard]] std::vector<std::string> loader_free_environment(std::span<const std::string> env);

/// The first file named `name` (no `/`) in the `PATH` entries of `env` (`NAME=value` strings)
/// that `is_executable` accepts, as `<dir>/<name>`; empty when none does or `PATH` is absent.
/// Relative and empty entries are skipped (host_environment() has already dropped them).
[[nodiscard]] std::string search_path(std::string_view name, std::span<const std::string> env,
                                      const std::function<bool(const std::string&)>& is_executable);

}  // namespace pisandbox::policy
