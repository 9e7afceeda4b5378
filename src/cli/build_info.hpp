// pisandbox::cli — what `pi-sandbox --version` says: the version and the commit it was built
// from. The version is the project's (CMakeLists.txt, semantic versioning, CHANGELOG.md); the
// commit is read from git when the binary is built (cmake/commit.cmake).
#pragma once

#include <string_view>

namespace pisandbox::cli {

/// The commit the binary was built from: 12 hexadecimal digits, with `-dirty` when tracked
/// files differed from it; the text of the source tarball's COMMIT file outside a git
/// checkout; `unknown` when neither is there.
std::string_view commit();

/// `pi-sandbox <version> (commit <commit>)`, e.g. `pi-sandbox 0.2.0 (commit 0123456789ab)`.
std::string_view version_line();

}  // namespace pisandbox::cli
