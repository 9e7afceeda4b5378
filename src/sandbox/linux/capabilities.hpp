// pisandbox::sandbox::linux_ — dropping every capability before exec.
#pragma once

#include "core/error.hpp"

namespace pisandbox::sandbox::linux_ {

/// Drops every capability for good: locks the securebits that would give root (uid 0 of the
/// sandbox's user namespace) capabilities back on exec, empties the bounding and ambient
/// sets, then the effective, permitted and inheritable sets (capabilities(7)). Under
/// no_new_privs, a process that holds none (the weaker sandbox of an unprivileged user:
/// landlock_only.hpp) is left as it is: it could change none of them (EPERM), and nothing can
/// give it any.
core::Result<void> drop_capabilities();

}  // namespace pisandbox::sandbox::linux_
