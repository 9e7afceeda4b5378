#include "policy/limits.hpp"

#include <algorithm>

namespace pisandbox::policy {

namespace {

constexpr std::uint64_t kPage = 4096;

std::uint64_t bytes_of(const SizeLimit& size, std::uint64_t machine_memory_bytes) {
  const std::uint64_t bytes =
      size.unit == SizeLimit::Unit::Percent
          ? static_cast<std::uint64_t>(static_cast<unsigned __int128>(machine_memory_bytes) *
                                       size.value / 100)
          : size.value;
  return std::max(bytes, kMinSizeBytes) / kPage * kPage;
}

}  // namespace

std::string SizeLimit::text() const {
  return unit == Unit::Percent ? std::to_string(value) + "%" : std::to_string(value);
}

ResourceLimits resolve_limits(const LimitsSpec& spec, std::uint64_t machine_memory_bytes) {
  ResourceLimits limits;
  limits.max_processes = spec.max_processes;
  limits.memory_bytes = bytes_of(spec.memory, machine_memory_bytes);
  limits.tmpfs_bytes = std::min(bytes_of(spec.tmpfs, machine_memory_bytes), limits.memory_bytes);
  limits.cpu_weight = spec.cpu_weight;
  return limits;
}

std::string mebibytes(std::uint64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

}  // namespace pisandbox::policy
