#include "sandbox/linux/program_pages.hpp"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "core/unique_fd.hpp"

namespace pisandbox::sandbox::linux_ {

namespace {

/// A range of whole pages, [begin, end).
struct Pages {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
};

/// What dl_iterate_phdr(3) reports for the first object, the program itself.
struct Program {
  std::vector<Pages> read_only;  ///< its non-writable PT_LOAD segments, whole pages inside
  std::vector<Pages> relro;      ///< its PT_GNU_RELRO ranges, whole pages outside
  bool seen = false;
};

int first_object(dl_phdr_info* info, std::size_t /*size*/, void* data) {
  auto& program = *static_cast<Program*>(data);
  program.seen = true;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    const std::uintptr_t start = info->dlpi_addr + header.p_vaddr;
    const std::uintptr_t end = start + header.p_memsz;
    if (header.p_type == PT_GNU_RELRO) {
      program.relro.push_back({start & ~(page - 1), (end + page - 1) & ~(page - 1)});
    } else if (header.p_type == PT_LOAD && (header.p_flags & PF_W) == 0) {
      const Pages inside{(start + page - 1) & ~(page - 1), end & ~(page - 1)};
      if (inside.begin < inside.end) program.read_only.push_back(inside);
    }
  }
  return 1;  // the program is the first object; the shared libraries are not ours to drop
}

bool overlaps(const Pages& a, const Pages& b) {
  return a.begin < b.end && b.begin < a.end;
}

}  // namespace

core::Result<std::size_t> release_program_pages(int pagemap_fd) {
  Program program;
  ::dl_iterate_phdr(first_object, &program);
  if (!program.seen) return core::fail("dl_iterate_phdr: no program reported");
  core::UniqueFd opened;
  if (pagemap_fd < 0) {
    opened.reset(::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC));
    if (!opened) return core::fail_errno("open(/proc/self/pagemap)");
    pagemap_fd = opened.get();
  }
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  std::size_t advised = 0;
  std::vector<std::uint64_t> entries;
  for (const Pages& pages : program.read_only) {
    // A segment that holds relocated data made read-only after start (RELRO) is never dropped:
    // its pages differ from the file's.
    bool relocated = false;
    for (const Pages& relro : program.relro) relocated = relocated || overlaps(pages, relro);
    if (relocated) continue;
    // A page of the segment that is no longer the file's (a text relocation, a debugger's
    // breakpoint, a uprobe: each a private copy) is kept: only runs of pages that are the
    // file's or not mapped are dropped. Bit 63 of a pagemap entry: present; bit 61: a file
    // page (Documentation/admin-guide/mm/pagemap.rst).
    const std::size_t count = (pages.end - pages.begin) / page;
    entries.assign(count, 0);
    const auto bytes = static_cast<ssize_t>(count * sizeof(std::uint64_t));
    const auto offset = static_cast<off_t>(pages.begin / page * sizeof(std::uint64_t));
    if (::pread(pagemap_fd, entries.data(), static_cast<std::size_t>(bytes), offset) != bytes)
      return core::fail_errno("pread(/proc/self/pagemap)");
    const auto droppable = [](std::uint64_t entry) {
      return (entry >> 63 & 1) == 0 || (entry >> 61 & 1) != 0;
    };
    for (std::size_t i = 0; i < count;) {
      if (!droppable(entries[i])) {
        ++i;
        continue;
      }
      std::size_t run = i;
      while (run < count && droppable(entries[run])) ++run;
      const std::uintptr_t begin = pages.begin + i * page;
      const std::size_t length = (run - i) * page;
      if (::madvise(reinterpret_cast<void*>(begin), length, MADV_DONTNEED) != 0)
        return core::fail_errno("madvise(" + std::to_string(begin) + ", " + std::to_string(length) +
                                ", MADV_DONTNEED)");
      advised += length;
      i = run;
    }
  }
  return advised;
}

}  // namespace pisandbox::sandbox::linux_
