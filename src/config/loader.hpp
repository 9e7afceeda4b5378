// pisandbox::config — finding and reading the trusted configuration file.
//
// Source: compatibility C1 (missing file -> defaults, read and JSON errors) and C9 (the
// extension-local location, with the legacy file read only when the new one is missing),
// and docs/configuration.md ("Where it is read from"). The only I/O of the config layer: it reads
// one file.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>

#include "config/config.hpp"
#include "core/error.hpp"

namespace pisandbox::config {

/// The two default locations of the trusted configuration, both protected (write-denied)
/// in every sandbox (compatibility C9).
///   current: `<home>/.pi/agent/extensions/pi-sandbox/config.json`
///   legacy:  `<home>/.pi/agent/pi-sandbox.json`, read only when `current` does not exist.
struct DefaultLocations {
  std::filesystem::path current;
  std::filesystem::path legacy;
};

/// The default locations under `home` (an absolute path; not checked here).
DefaultLocations default_locations(const std::filesystem::path& home);

/// Where load() looks.
///   explicit_path: `--config FILE` / `config check FILE`. When set, only this file is read
///     and a missing file is an error (a mistyped path must not silently fall back to
///     defaults). Relative paths are relative to the working directory.
///   home: the user's home directory (absolute); used when explicit_path is not set. The
///     configuration is never read from the workspace.
struct LoadOptions {
  std::optional<std::filesystem::path> explicit_path;
  std::filesystem::path home;
};

/// The configuration in effect and where it came from.
///   config: never null; immutable and shared read-only by every other part.
///   source: the file that was read, or nullopt when no file exists and the defaults apply.
struct LoadedConfig {
  std::shared_ptr<const Config> config;
  std::optional<std::filesystem::path> source;
};

/// Upper bound on the size of a configuration file, in bytes.
inline constexpr std::size_t kMaxConfigBytes = 1024 * 1024;

/// Loads the trusted configuration: `explicit_path` if given; else
/// DefaultLocations::current; else, only when that fails with ENOENT, DefaultLocations::legacy;
/// else (ENOENT again) the defaults with no source.
///
/// Errors (core::Error::message; fail closed, never defaults):
///   - `failed to read pi-sandbox configuration at <path>: <ENAME> (<strerror>)` for any
///     open/read failure other than a missing default file (code = errno), and
///     `... at <path>: not a regular file` / `...: larger than 1048576 bytes`;
///   - `invalid JSON in pi-sandbox configuration at <path>: <line>:<column>: <reason>`;
///   - every `invalid pi-sandbox configuration: ...` message of parse(), with its hint;
///   - `pi-sandbox configuration: home directory is not an absolute path: <home>` when no
///     explicit path is given and `home` is relative (it would name a file in the workspace).
core::Result<LoadedConfig> load(const LoadOptions& options);

}  // namespace pisandbox::config
