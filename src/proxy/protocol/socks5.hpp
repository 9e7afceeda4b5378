// pisandbox::proxy — SOCKS version 5 (RFC 1928), the parts a CONNECT-only proxy needs (pure):
// incremental parsers of the method greeting, the username/password sub-negotiation (RFC 1929,
// when the proxy has a per-command credential: proxy/protocol/credential.hpp) and the request,
// and the replies.
//
// Source: docs/network.md, "Answers the command sees" (no-authentication method; CONNECT only;
// domain names resolved by the proxy; IPv4/IPv6 destinations refused with 0x02); compatibility
// C47–C48.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "proxy/protocol/address.hpp"

namespace pisandbox::proxy {

/// The SOCKS protocol version byte (RFC 1928 section 3).
inline constexpr std::uint8_t kSocksVersion = 5;
/// METHOD `X'00'` NO AUTHENTICATION REQUIRED (RFC 1928 section 3).
inline constexpr std::uint8_t kMethodNoAuth = 0x00;
/// METHOD `X'02'` USERNAME/PASSWORD (RFC 1928 section 3, RFC 1929).
inline constexpr std::uint8_t kMethodUserPass = 0x02;
/// The version byte of the username/password sub-negotiation (RFC 1929 section 2).
inline constexpr std::uint8_t kUserPassVersion = 0x01;
/// METHOD `X'FF'` NO ACCEPTABLE METHODS (RFC 1928 section 3).
inline constexpr std::uint8_t kMethodNoneAcceptable = 0xff;

/// The REP field of a reply (RFC 1928 section 6); the codes this proxy sends.
enum class SocksReply : std::uint8_t {
  Succeeded = 0x00,
  GeneralFailure = 0x01,
  NotAllowed = 0x02,  ///< connection not allowed by ruleset: refused, or an IP destination
  NetworkUnreachable = 0x03,
  HostUnreachable = 0x04,  ///< also name resolution failures and connect timeouts
  ConnectionRefused = 0x05,
  CommandNotSupported = 0x07,      ///< BIND, UDP ASSOCIATE, unknown commands
  AddressTypeNotSupported = 0x08,  ///< an ATYP other than 1, 3 and 4
};

/// CMD of a request (RFC 1928 section 4).
enum class SocksCommand : std::uint8_t { Connect = 0x01, Bind = 0x02, UdpAssociate = 0x03 };

/// The method-selection message of a client (RFC 1928 section 3): VER, NMETHODS, METHODS.
///   methods: the offered method bytes, in order (NMETHODS of them).
///   consumed: how many bytes of the last chunk passed to feed() belong to the greeting.
struct SocksGreeting {
  std::vector<std::uint8_t> methods;
  std::size_t consumed = 0;
};

/// A protocol violation. `reply` is the REP code to answer before closing, or nullopt when
/// the proxy closes without a reply (a wrong version byte: the client does not speak SOCKS5).
struct SocksError {
  std::optional<SocksReply> reply;
  std::string reason;

  friend bool operator==(const SocksError&, const SocksError&) = default;
};

/// A complete request (RFC 1928 section 4).
///   command:       CMD as sent (any byte value; the caller answers CommandNotSupported to
///                  all but Connect).
///   address_type:  ATYP: 1 IPv4, 3 domain name, 4 IPv6.
///   host:          ATYP 3: the name bytes exactly as sent (1-255 bytes, not normalised);
///                  ATYP 1/4: the address as text.
///   address:       ATYP 1/4: the address; ATYP 3: unused.
///   port:          DST.PORT (network byte order on the wire; 0 is possible and is refused by
///                  the caller as an invalid destination).
///   consumed:      bytes of the last chunk passed to feed() that belong to the request.
struct SocksRequest {
  std::uint8_t command = 0;
  std::uint8_t address_type = 0;
  std::string host;
  IpAddress address;
  std::uint16_t port = 0;
  std::size_t consumed = 0;
};

/// More bytes are needed.
struct SocksNeedMore {};

/// Incremental parser of the greeting. Errors: VER other than 5 → SocksError{nullopt}
/// (close); NMETHODS 0 → SocksError{nullopt} ("no methods offered"; the caller answers
/// select_method() with an empty list = X'FF'). After a result, feed() must not be called
/// again. The result does not depend on how the bytes are fragmented.
class SocksGreetingParser {
 public:
  std::variant<SocksNeedMore, SocksGreeting, SocksError> feed(std::string_view bytes);

 private:
  std::vector<std::uint8_t> buffer_;
};

/// Incremental parser of the request. Errors: VER other than 5 → SocksError{GeneralFailure};
/// RSV other than 0 → SocksError{GeneralFailure}; ATYP other than 1, 3, 4 →
/// SocksError{AddressTypeNotSupported}; a domain name of length 0 →
/// SocksError{GeneralFailure}. The result does not depend on fragmentation.
class SocksRequestParser {
 public:
  std::variant<SocksNeedMore, SocksRequest, SocksError> feed(std::string_view bytes);

 private:
  std::vector<std::uint8_t> buffer_;
};

/// The username/password request of a client (RFC 1929 section 2): VER 1, ULEN, UNAME, PLEN,
/// PASSWD. `username` and `password` are the bytes as sent (0-255 each; RFC 1929 says 1-255,
/// an empty one is parsed and then does not match); `consumed` as in SocksGreeting.
struct SocksUserPass {
  std::string username;
  std::string password;
  std::size_t consumed = 0;
};

/// Incremental parser of the username/password request. Errors: VER other than 1 →
/// SocksError{nullopt} (the caller answers userpass_reply(false) and closes). The result does
/// not depend on fragmentation; after a result, feed() must not be called again.
class SocksUserPassParser {
 public:
  std::variant<SocksNeedMore, SocksUserPass, SocksError> feed(std::string_view bytes);

 private:
  std::vector<std::uint8_t> buffer_;
};

/// Whether the proxy asks for the username/password method (it has a credential) or needs none.
enum class SocksAuth { None, UserPass };

/// The METHOD the server selects (RFC 1928 section 3): with SocksAuth::None kMethodNoAuth when
/// offered; with SocksAuth::UserPass kMethodUserPass when offered (no-authentication is then not
/// acceptable); else kMethodNoneAcceptable.
[[nodiscard]] std::uint8_t select_method(const std::vector<std::uint8_t>& methods,
                                         SocksAuth auth = SocksAuth::None);

/// The two-byte answer to a username/password request (RFC 1929 section 2): VER 1, STATUS 0
/// when `accepted`, else 1 (the client must then close the connection; the server closes too).
[[nodiscard]] std::array<std::uint8_t, 2> userpass_reply(bool accepted);

/// The two-byte method-selection reply: VER 5, METHOD.
[[nodiscard]] std::array<std::uint8_t, 2> method_reply(std::uint8_t method);

/// The ten-byte reply: VER 5, REP, RSV 0, ATYP 1, BND.ADDR 0.0.0.0, BND.PORT 0 (RFC 1928
/// section 6; clients of a CONNECT do not use the bound address).
[[nodiscard]] std::array<std::uint8_t, 10> socks_reply(SocksReply reply);

}  // namespace pisandbox::proxy
