// libFuzzer target: untrusted text into the parent proxy's URL parser, the NO_PROXY list and the
// environment reader (docs/network.md, "A parent proxy"). The values come from pi-sandbox's own
// environment, which a `serve` request may set. Must never crash, hang or trip a sanitizer; a
// parsed URL must give a CONNECT request with no line end but its own (no header injection) and
// a display without credentials; every NO_PROXY domain must match itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/protocol/parent_proxy.hpp"

namespace {

using namespace pisandbox::proxy;

void require(bool condition) {
  if (!condition) std::abort();
}

std::size_t count(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

void check_parent(const ParentProxy& parent) {
  require(!parent.host.empty() && parent.port != 0);
  const std::string display = parent.display();
  require(display.starts_with("http://") && display.find('@') == std::string::npos);
  const std::string request = parent.connect_request("example.com", 443);
  require(request.ends_with("\r\n\r\n"));
  require(count(request, "\r\n") == (parent.user ? 4U : 3U));
  require(count(request, "\n") == count(request, "\r\n") &&
          count(request, "\r") == count(request, "\r\n"));
  for (char c : parent.authorization())
    require((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '+' || c == '/' || c == '=' || c == ' ');
}

void check_no_proxy(std::string_view text) {
  const NoProxy list = NoProxy::parse(text);
  for (const std::string& domain : list.domains()) {
    require(!domain.empty());
    require(domain.find_first_of(", \t\r\n") == std::string::npos);
    require(list.matches(domain));
    require(list.matches("a." + domain));
  }
  (void)list.matches("example.com");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto parent = parse_parent_proxy_url(text)) {
    check_parent(*parent);
  } else {
    require(!parent.error().empty());
  }
  check_no_proxy(text);
  // The same bytes as an environment: one NAME=value per line.
  std::vector<std::string> env;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    env.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  const ParentProxies parents = parent_proxies_from_environment(env);
  for (const auto* setting : {&parents.tunnel, &parents.plain})
    if (*setting && (*setting)->proxy) check_parent(*(*setting)->proxy);
  (void)parents.route("example.com", ParentUse::Tunnel);
  return 0;
}
