#include "shell/program_options.hpp"

#include <array>

namespace pisandbox::shell {
namespace {

// curl 8: the long options that take a value (curl --help all).
constexpr auto kCurlLongWithValue = std::to_array<std::string_view>({"--abstract-unix-socket",
                                                                     "--alt-svc",
                                                                     "--aws-sigv4",
                                                                     "--cacert",
                                                                     "--capath",
                                                                     "--cert",
                                                                     "--cert-type",
                                                                     "--ciphers",
                                                                     "--config",
                                                                     "--connect-timeout",
                                                                     "--connect-to",
                                                                     "--continue-at",
                                                                     "--cookie",
                                                                     "--cookie-jar",
                                                                     "--create-file-mode",
                                                                     "--crlfile",
                                                                     "--curves",
                                                                     "--data",
                                                                     "--data-ascii",
                                                                     "--data-binary",
                                                                     "--data-raw",
                                                                     "--data-urlencode",
                                                                     "--dns-servers",
                                                                     "--doh-url",
                                                                     "--dump-header",
                                                                     "--etag-compare",
                                                                     "--etag-save",
                                                                     "--expect100-timeout",
                                                                     "--form",
                                                                     "--form-string",
                                                                     "--ftp-port",
                                                                     "--happy-eyeballs-timeout-ms",
                                                                     "--header",
                                                                     "--hsts",
                                                                     "--interface",
                                                                     "--json",
                                                                     "--keepalive-time",
                                                                     "--key",
                                                                     "--key-type",
                                                                     "--limit-rate",
                                                                     "--local-port",
                                                                     "--login-options",
                                                                     "--mail-auth",
                                                                     "--mail-from",
                                                                     "--mail-rcpt",
                                                                     "--max-filesize",
                                                                     "--max-redirs",
                                                                     "--max-time",
                                                                     "--netrc-file",
                                                                     "--oauth2-bearer",
                                                                     "--output",
                                                                     "--output-dir",
                                                                     "--pass",
                                                                     "--pinnedpubkey",
                                                                     "--preproxy",
                                                                     "--proto",
                                                                     "--proto-redir",
                                                                     "--proxy",
                                                                     "--proxy-cacert",
                                                                     "--proxy-cert",
                                                                     "--proxy-header",
                                                                     "--proxy-key",
                                                                     "--proxy-user",
                                                                     "--quote",
                                                                     "--range",
                                                                     "--referer",
                                                                     "--request",
                                                                     "--resolve",
                                                                     "--retry",
                                                                     "--retry-delay",
                                                                     "--retry-max-time",
                                                                     "--socks5",
                                                                     "--socks5-hostname",
                                                                     "--stderr",
                                                                     "--trace",
                                                                     "--trace-ascii",
                                                                     "--upload-file",
                                                                     "--url",
                                                                     "--url-query",
                                                                     "--user",
                                                                     "--user-agent",
                                                                     "--variable",
                                                                     "--write-out"});

constexpr auto kCurlWrites = std::to_array<std::string_view>(
    {"o", "c", "D", "--output", "--cookie-jar", "--dump-header", "--trace", "--trace-ascii",
     "--stderr", "--etag-save", "--output-dir", "--hsts", "--alt-svc"});

constexpr ProgramOptions kCurl{{"AbcCdDeEFHKmoPQrtTuUwxXyYz", kCurlLongWithValue}, kCurlWrites, {}};

// GNU Wget 1.21: the long options that take a value.
constexpr auto kWgetLongWithValue = std::to_array<std::string_view>({"--output-document",
                                                                     "--output-file",
                                                                     "--append-output",
                                                                     "--input-file",
                                                                     "--base",
                                                                     "--tries",
                                                                     "--timeout",
                                                                     "--wait",
                                                                     "--quota",
                                                                     "--directory-prefix",
                                                                     "--user-agent",
                                                                     "--execute",
                                                                     "--level",
                                                                     "--accept",
                                                                     "--reject",
                                                                     "--domains",
                                                                     "--header",
                                                                     "--post-data",
                                                                     "--post-file",
                                                                     "--body-data",
                                                                     "--body-file",
                                                                     "--method",
                                                                     "--user",
                                                                     "--password",
                                                                     "--http-user",
                                                                     "--http-password",
                                                                     "--certificate",
                                                                     "--private-key",
                                                                     "--ca-certificate",
                                                                     "--load-cookies",
                                                                     "--save-cookies"});

constexpr auto kWgetWrites =
    std::to_array<std::string_view>({"O", "o", "a", "P", "--output-document", "--output-file",
                                     "--append-output", "--directory-prefix", "--save-cookies"});

constexpr ProgramOptions kWget{{"aABDeiIlOoPQRtTUwX", kWgetLongWithValue}, kWgetWrites, {}};

// rsync 3: the options that take a value.
constexpr auto kRsyncLongWithValue = std::to_array<std::string_view>(
    {"--exclude",    "--include",      "--filter",          "--exclude-from", "--include-from",
     "--files-from", "--rsh",          "--rsync-path",      "--temp-dir",     "--compare-dest",
     "--copy-dest",  "--link-dest",    "--backup-dir",      "--suffix",       "--chmod",
     "--chown",      "--log-file",     "--log-file-format", "--out-format",   "--partial-dir",
     "--max-size",   "--min-size",     "--bwlimit",         "--timeout",      "--port",
     "--block-size", "--password-file"});

constexpr auto kRsyncWrites = std::to_array<std::string_view>(
    {"T", "--temp-dir", "--log-file", "--backup-dir", "--partial-dir"});

constexpr auto kRsyncNotSent = std::to_array<std::string_view>(
    {"f", "e", "--exclude", "--include", "--filter", "--exclude-from", "--include-from", "--rsh",
     "--rsync-path", "--chmod", "--chown", "--log-file-format", "--out-format"});

constexpr ProgramOptions kRsync{{"BefMT", kRsyncLongWithValue}, kRsyncWrites, kRsyncNotSent};

}  // namespace

const ProgramOptions* program_options(std::string_view program) {
  if (program == "curl") return &kCurl;
  if (program == "wget") return &kWget;
  if (program == "rsync") return &kRsync;
  return nullptr;
}

}  // namespace pisandbox::shell
