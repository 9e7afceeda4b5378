// pisandbox::session — what pi-sandbox itself starts on the host for a command: the automatic
// reviewer and the approved host-IPC run get an environment cleaned of what points into a
// writable place, and their programs are named by the files that will run.
//
// Source: docs/security.md, "What pi-sandbox starts on the host"; policy/host_environment.hpp
// (the pure rules).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "policy/host_environment.hpp"
#include "policy/sandbox_policy.hpp"

namespace pisandbox::session {

/// The areas of the host a command of `policy` can write, and the read-only ones carved out of
/// them: every SandboxPolicy::writable entry (the workspace, the git directories a commit
/// writes, `filesystem.additionalAllowWrite`) writable; when the workspace is or holds the
/// home, the home not writable and its writable entries writable again.
[[nodiscard]] std::vector<policy::WritableArea> writable_areas(const policy::SandboxPolicy& policy);

/// policy::host_environment() of `caller` for `areas`, every path resolved as the host would
/// find it (would_be_found_at(): symbolic links followed, dangling ones too).
[[nodiscard]] policy::HostEnvironment host_program_environment(
    const std::vector<std::string>& caller, const std::vector<policy::WritableArea>& areas);

/// The file a program name runs: `<dir>/<name>` from the `PATH` of `env` (`NAME=value`) for a
/// name without `/` (a regular file this process may execute, access(2) X_OK), nullopt when
/// none is found.
[[nodiscard]] std::optional<std::string> find_program(std::string_view name,
                                                      const std::vector<std::string>& env);

/// The program the shell command `command` starts with, as the host run will find it: its first
/// word when it is a plain name (no `/`, `=` nor shell syntax), resolved with find_program()
/// through `env`'s `PATH`; an absolute first word as it is. nullopt for anything else (a shell
/// keyword, a builtin, an assignment, a name not found).
[[nodiscard]] std::optional<std::string> host_run_program(std::string_view command,
                                                          const std::vector<std::string>& env);

/// Refuses a reviewer whose program, or whose interpreter, would run a file from a writable
/// area: each argument that would be found as a file there (existing or not), the `#!` line's
/// interpreter (`#!/usr/bin/env NAME` and one level of `env -S` resolved through `env`'s
/// `PATH`, the cleaned one), followed through interpreters that are scripts themselves, up to
/// the kernel's 4 levels (execve(2), "Interpreter scripts").
///   reviewer: the argv (absolute program first, as approval.reviewer and --reviewer require).
/// Errors: `refusing the reviewer <program>: <what> <path> lies in a writable place (<area>),
/// where sandboxed commands can write` or `refusing the reviewer <program>: its interpreter
/// <name> is not found in the cleaned $PATH`, each with a hint.
core::Result<void> check_reviewer_program(const std::vector<std::string>& reviewer,
                                          const std::vector<policy::WritableArea>& areas,
                                          const std::vector<std::string>& env);

}  // namespace pisandbox::session
