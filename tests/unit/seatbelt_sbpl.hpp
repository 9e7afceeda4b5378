// A reader, a structural check and a small evaluator of SBPL text, for the tests of the Seatbelt
// profile (sandbox/macos/seatbelt.hpp): the profile is checked as Seatbelt would read it, from
// its text, not from the planner's values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace pisandbox::sandbox::macos::sbpl {

/// One datum of the text: a list, a symbol, a string (unescaped) or a number.
struct Node {
  enum class Kind { List, Symbol, String, Number };
  Kind kind;
  std::string text;
  std::vector<Node> items = {};
};

/// Reads `text` as a sequence of S-expressions (`;` comments to the end of the line; strings
/// with the escapes `\" \\ \n \t \r \xHH`). Fails on an unbalanced parenthesis, an unterminated
/// string, an unknown escape, or a control byte inside a string (the planner escapes them).
core::Result<std::vector<Node>> read(std::string_view text);

/// What is wrong with `forms` as a Seatbelt profile of this project, one line per problem (empty
/// when nothing is): `(version 1)` first, `(deny default)` second, then only `allow`/`deny`
/// rules of the operations and filters Apple's profiles and the reference's generator use, each
/// filter with the argument it takes, every path absolute and every regex a valid POSIX extended
/// regular expression.
std::vector<std::string> check(const std::vector<Node>& forms);

/// What a query asks about: a file operation on a path (`file-write-create`, `/ws/a`), a
/// connection to a Unix socket (`network-outbound`, `/tmp/s`, Socket::Remote), a bind of one
/// (`network-bind`, path, Socket::Local), or a TCP connection (`network-outbound`,
/// `localhost:3128`, Socket::Ip).
enum class Target { File, LocalSocket, RemoteSocket, Ip };

/// The verdict of the profile in `forms` for `operation` on `target`: the last rule whose
/// operation covers it (`file-write*` covers `file-write-create`) and one of whose filters
/// matches (a rule without filters matches everything) decides; none decides deny, as
/// `(deny default)`.
bool allows(const std::vector<Node>& forms, std::string_view operation, std::string_view target,
            Target kind = Target::File);

}  // namespace pisandbox::sandbox::macos::sbpl
