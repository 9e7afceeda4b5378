// pisandbox::sandbox::linux_ — the supervisor lets go of the pages of its own program that it
// read while it set the sandbox up (docs/benchmarks.md, "The set-up's program pages let go").
//
// The supervisor stays for the command's whole life (it hosts the proxy, the guard and the
// relays), but most of the code it ran, the configuration's parser, the policy, the mount
// planner, runs once before the command starts. The kernel keeps every page of the executable
// that a process touched mapped in it until it exits, and counts it in its resident and
// proportional set sizes. madvise(MADV_DONTNEED) on a private mapping of a file that was never
// written drops those page-table entries: the pages stay in the page cache, shared and
// reclaimable, and a later access maps them again with a minor fault (madvise(2),
// "MADV_DONTNEED"), together with the cached pages around it (the page cache's fault-around,
// or the whole large folio the page is part of). Only the program's non-writable PT_LOAD
// segments are touched (code, read-only data, unwind tables): never a writable segment, whose
// relocated or written pages would be lost, nor the shared libraries.
#pragma once

#include <chrono>
#include <cstddef>

#include "core/error.hpp"

namespace pisandbox::sandbox::linux_ {

/// How long the command runs before its supervisor and pid 1 let go of their set-up's memory
/// (release_program_pages(), and the supervisor's malloc_trim(3)): not while it starts, when it
/// would take a CPU from it; a command done sooner ends them with it.
inline constexpr std::chrono::milliseconds kReleaseAfter{20};

/// Drops this process's page-table entries for the running program's non-writable PT_LOAD
/// segments (found with dl_iterate_phdr(3), whole pages inside each segment only), except for
/// the pages that are no longer the file's (a private copy: a text relocation, a debugger's
/// breakpoint, a uprobe), which /proc/self/pagemap tells apart.
///   pagemap_fd: this process's /proc/self/pagemap, opened while it was dumpable (a process
///     that made itself non-dumpable may not open it: proc(5)); -1: opened here.
/// Returns the bytes of address space advised (the pages that were resident among them are
/// what goes), or the errno text of the open(2), pread(2) or madvise(2) that failed; nothing
/// is lost either way: the pages are read again from the page cache when they are next used.
core::Result<std::size_t> release_program_pages(int pagemap_fd = -1);

}  // namespace pisandbox::sandbox::linux_
