// pisandbox::approval::GrantStore — exact, expiring, one-use grants.
//
// Source: compatibility C55 (the caller consumes the grant before acting; a failure is a
// deny with source `invalid-grant`), C73 (the request hash), C74 (grants: bound to the hash
// and the session, TTL, single use, pruning with `expiresAt <= now`).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

#include "approval/boundary_request.hpp"
#include "approval/clock.hpp"
#include "core/error.hpp"

namespace pisandbox::approval {

/// The reason of a deny with source `invalid-grant` (compatibility C55).
inline constexpr std::string_view kInvalidGrantReason =
    "The exact one-shot grant is missing, invalid, or expired.";

/// Grant lifetimes, in seconds (compatibility C74: 60 000 ms by default, 1 000–300 000 ms
/// allowed).
inline constexpr std::chrono::seconds kDefaultGrantTtl{60};
inline constexpr std::chrono::seconds kMinGrantTtl{1};
inline constexpr std::chrono::seconds kMaxGrantTtl{300};

/// One grant: permission to perform exactly one request, once, within one session.
///   token:        32 lowercase hex digits (128 random bits from getentropy(3));
///                 a bearer secret, never logged.
///   request_hash: request_hash() of the request it allows (64 hex digits).
///   session_id:   the session it was issued to.
///   expires_at:   on the store's Clock; the grant is expired when `expires_at <= now`.
struct Grant {
  std::string token;
  std::string request_hash;
  std::string session_id;
  std::chrono::steady_clock::time_point expires_at;
};

/// Issues and consumes grants. Not thread-safe: the owner serialises calls (the broker
/// holds one lock around review and consume).
class GrantStore {
 public:
  /// `clock` must outlive the store. `ttl` is how long a grant stays valid, in seconds;
  /// a value outside [kMinGrantTtl, kMaxGrantTtl] is clamped into it (the configuration
  /// rejects such values before they get here).
  GrantStore(const Clock& clock, std::chrono::seconds ttl = kDefaultGrantTtl);

  /// Issues a grant for `request` in `session_id`, after pruning expired grants.
  /// Errors: the request fails validate() (its message), `session id must be a non-empty
  /// string`, `getentropy(16 bytes)` with errno, or the hash failed.
  [[nodiscard]] core::Result<Grant> issue(const BoundaryRequest& request,
                                          std::string_view session_id);

  /// Consumes the grant `token` if it exists, has not expired, was issued to `session_id`
  /// and for a request with the same hash as `request`; returns true exactly then, and the
  /// grant is gone afterwards (single use). Any mismatch returns false and leaves the grant
  /// in place (compatibility C74: deleted on success only). Expired grants are pruned
  /// first.
  [[nodiscard]] bool consume(const BoundaryRequest& request, std::string_view session_id,
                             std::string_view token);

  /// The number of grants held, expired or not (pruning happens on issue and consume).
  [[nodiscard]] std::size_t size() const { return grants_.size(); }

  /// The lifetime given to new grants, after clamping.
  [[nodiscard]] std::chrono::seconds ttl() const { return ttl_; }

 private:
  void prune(std::chrono::steady_clock::time_point now);

  const Clock& clock_;
  std::chrono::seconds ttl_;
  std::unordered_map<std::string, Grant> grants_;  // by token
};

}  // namespace pisandbox::approval
