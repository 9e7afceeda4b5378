#include "approval/grants.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <iterator>

#include "approval/hex.hpp"
#include "core/random.hpp"

namespace pisandbox::approval {
namespace {

constexpr std::size_t kTokenBytes = 16;  // 128 bits

core::Result<std::string> random_token() {
  std::array<unsigned char, kTokenBytes> bytes{};
  if (auto filled = core::random_bytes(bytes); !filled) return std::unexpected(filled.error());
  return to_lower_hex(bytes);
}

bool is_blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](unsigned char c) { return std::isspace(c) != 0; });
}

}  // namespace

GrantStore::GrantStore(const Clock& clock, std::chrono::seconds ttl)
    : clock_(clock), ttl_(std::clamp(ttl, kMinGrantTtl, kMaxGrantTtl)) {}

core::Result<Grant> GrantStore::issue(const BoundaryRequest& request, std::string_view session_id) {
  if (auto ok = validate(request); !ok) return std::unexpected(ok.error());
  if (is_blank(session_id)) return core::fail("session id must be a non-empty string");
  auto hash = request_hash(request);
  if (!hash) return std::unexpected(hash.error());
  auto token = random_token();
  if (!token) return std::unexpected(token.error());
  const auto now = clock_.now();
  prune(now);
  Grant grant{*token, std::move(*hash), std::string(session_id), now + ttl_};
  grants_.insert_or_assign(*token, grant);
  return grant;
}

bool GrantStore::consume(const BoundaryRequest& request, std::string_view session_id,
                         std::string_view token) {
  prune(clock_.now());
  const auto it = grants_.find(std::string(token));
  if (it == grants_.end() || it->second.session_id != session_id) return false;
  if (!validate(request)) return false;
  const auto hash = request_hash(request);
  if (!hash || *hash != it->second.request_hash) return false;
  grants_.erase(it);
  return true;
}

void GrantStore::prune(std::chrono::steady_clock::time_point now) {
  std::erase_if(grants_, [now](const auto& entry) { return entry.second.expires_at <= now; });
}

}  // namespace pisandbox::approval
