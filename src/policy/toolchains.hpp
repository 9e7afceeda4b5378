// pisandbox::policy — toolchains installed in the home: which directories a `$PATH` entry
// inside the hidden home needs, and which files inside them stay hidden (pure).
//
// Source of the rules: the install layouts documented by rustup, pyenv, nvm, volta, asdf,
// mise, SDKMAN!, Go, pip/pipx, bun, deno and pnpm (docs/security.md, "Toolchains in the
// home").
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "policy/sandbox_policy.hpp"

namespace pisandbox::policy {

/// The directories re-exposed for the caller's `$PATH` entries inside `home`, each a
/// CopyOnWrite Exposure whose `why` names the entry and the toolchain, deduplicated, a root
/// inside another root dropped.
///   path_dirs:     the absolute `$PATH` directories, in order (real paths where they exist);
///                  entries outside the home and entries inside `workspace` are ignored.
///   toolchain_env: the caller's variables that move a toolchain's root (`CARGO_HOME`,
///                  `RUSTUP_HOME`, `PYENV_ROOT`, `NVM_DIR`, `VOLTA_HOME`, `ASDF_DATA_DIR`,
///                  `SDKMAN_DIR`, `GOPATH`, `MISE_DATA_DIR`, `BUN_INSTALL`, `DENO_INSTALL`,
///                  `PNPM_HOME`, `VIRTUAL_ENV` with `PYVENV_HOME`: the directory of the
///                  interpreter the environment was made from, read from its `pyvenv.cfg`,
///                  PEP 405), name and absolute value.
///   hidden:        receives the entries that stay hidden: the home itself, and an entry whose
///                  root would hold a credential store (credential_stores()).
std::vector<Exposure> toolchain_exposures(
    const fs::path& home, const fs::path& workspace, const std::vector<fs::path>& path_dirs,
    const std::vector<std::pair<std::string, fs::path>>& toolchain_env,
    std::vector<fs::path>& hidden);

/// Credential files that stay hidden inside the re-exposed directories `exposed`: cargo's
/// `credentials.toml` and `credentials` in `~/.cargo` and in `$CARGO_HOME`.
std::vector<fs::path> concealed_credentials(
    const fs::path& home, const std::vector<Exposure>& exposed,
    const std::vector<std::pair<std::string, fs::path>>& toolchain_env);

/// Places in the home (relative to it) that no toolchain rule ever re-exposes, nor a
/// directory around them: `.ssh`, `.gnupg`, `.aws`, `.pi`, keyrings, browsers, ...
const std::vector<std::string_view>& credential_stores();

}  // namespace pisandbox::policy
