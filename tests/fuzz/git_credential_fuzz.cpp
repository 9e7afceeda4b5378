// libFuzzer target for the reader of git's credential helper protocol
// (policy/git_credential.hpp; git-credential(1), "INPUT/OUTPUT FORMAT"). The input is one
// message as the command's git (or the host's helper) would write it.
//
// Properties checked on every input (abort on violation):
//   - parsing never crashes nor reads out of bounds (ASan);
//   - every attribute has a non-empty key without `=`, and no key or value holds a newline or a
//     NUL byte;
//   - a query's message (what the host's git is given) parses back to the same query: nothing
//     the command sent can add a line of its own;
//   - an answer taken for a query never names another protocol or host, and its lines parse
//     back to the same credential;
//   - the reader is deterministic.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "policy/git_credential.hpp"

namespace {

namespace policy = pisandbox::policy;

[[noreturn]] void violation(const char* what, std::string_view detail) {
  std::fprintf(stderr, "property violated: %s: %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

void check_attributes(const std::vector<policy::CredentialAttribute>& attributes) {
  for (const auto& a : attributes) {
    if (a.key.empty() || a.key.find('=') != std::string::npos) violation("key", a.key);
    for (const std::string* text : {&a.key, &a.value})
      if (text->find('\n') != std::string::npos || text->find('\0') != std::string::npos)
        violation("newline or NUL kept", *text);
  }
}

void check_query(const policy::CredentialQuery& query,
                 const std::vector<policy::CredentialAttribute>& attributes) {
  const std::string message = policy::credential_message(query);
  const auto again = policy::parse_credential_message(message);
  if (!again) violation("a query's message does not parse", again.error().message);
  const auto query_again = policy::credential_query(*again);
  if (!query_again || *query_again != query) violation("a query changed on the way", message);
  // The same bytes as the host helper's answer: only this query's destination is taken.
  if (const auto answer = policy::credential_answer(attributes, query)) {
    const auto host = policy::credential_value(attributes, "host");
    if (host && *host != query.host) violation("another host's credential", *host);
    const auto lines = policy::parse_credential_message(policy::credential_lines(*answer));
    if (!lines || (*lines).size() != 2 || (*lines)[0].value != answer->username ||
        (*lines)[1].value != answer->password)
      violation("a credential's lines changed it", policy::credential_lines(*answer));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto attributes = policy::parse_credential_message(bytes);
  const auto again = policy::parse_credential_message(bytes);
  if (attributes.has_value() != again.has_value() ||
      (attributes ? *attributes != *again : attributes.error().message != again.error().message))
    violation("not deterministic", "");
  if (!attributes) return 0;
  check_attributes(*attributes);
  if (const auto query = policy::credential_query(*attributes)) check_query(*query, *attributes);
  return 0;
}
