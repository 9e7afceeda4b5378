// pisandbox::session — a notice said at most once a day, remembered by a stamp file in the
// user's XDG state directory (docs/security.md, "Resource limits": the no-cgroup warning of
// `run`).
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

namespace pisandbox::session {

/// The stamp file of the notice `name`: `$XDG_STATE_HOME/pi-sandbox/<name>` when
/// $XDG_STATE_HOME is absolute, else `<home>/.local/state/pi-sandbox/<name>` (the XDG Base
/// Directory Specification's default); empty for no home ("" or "/"), where nothing is
/// remembered.
std::filesystem::path notice_stamp(const std::filesystem::path& home, const std::string& name);

/// Whether a notice remembered by `stamp` is due: true when `stamp` is empty, missing, or last
/// written `period` or longer before `now` (or in the future); then the stamp is written (mode
/// 0600, its directories 0700). A stamp that cannot be written leaves the notice due every
/// time: it is never lost.
bool notice_due(const std::filesystem::path& stamp,
                std::chrono::system_clock::time_point now = std::chrono::system_clock::now(),
                std::chrono::seconds period = std::chrono::hours(24));

}  // namespace pisandbox::session
