#include "policy/credential_lines.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>

namespace pisandbox::policy {

namespace {

/// One line of a file: its text and what ended it (`\n`, `\r\n`, `\r` or nothing at the end).
struct Line {
  std::string_view text;
  std::string_view end;
  std::size_t number = 0;
  std::size_t offset = 0;  ///< of text in the file
};

std::vector<Line> split_lines(std::string_view bytes) {
  std::vector<Line> lines;
  std::size_t start = 0;
  while (start < bytes.size()) {
    const std::size_t stop = bytes.find_first_of("\r\n", start);
    if (stop == std::string_view::npos) {
      lines.push_back({bytes.substr(start), {}, lines.size() + 1, start});
      break;
    }
    const std::size_t end_size = bytes.substr(stop, 2) == "\r\n" ? 2 : 1;
    lines.push_back(
        {bytes.substr(start, stop - start), bytes.substr(stop, end_size), lines.size() + 1, start});
    start = stop + end_size;
  }
  return lines;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\f' || c == '\v';
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::size_t indentation(std::string_view text) {
  std::size_t n = 0;
  while (n < text.size() && is_space(text[n])) ++n;
  return n;
}

/// A key as `policy` may print it: printable ASCII, cut at kMaxShownKeyBytes.
std::string shown(std::string_view key) {
  std::string out;
  for (const unsigned char c : key.substr(0, kMaxShownKeyBytes))
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  if (key.size() > kMaxShownKeyBytes) out += "...";
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// `text` lowercased with the escapes YAML, TOML and JSON share (`\xXX`, `\uXXXX`,
/// `\UXXXXXXXX`) decoded where they stand for ASCII, so that an escaped key is seen by its
/// name.
std::string decoded_lower(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      const char kind = text[i + 1];
      const std::size_t digits = kind == 'x' ? 2 : kind == 'u' ? 4 : kind == 'U' ? 8 : 0;
      if (digits != 0 && i + 2 + digits <= text.size()) {
        unsigned long value = 0;
        bool ok = true;
        for (std::size_t d = 0; d < digits; ++d) {
          const int v = hex_value(text[i + 2 + d]);
          ok = ok && v >= 0;
          value = value * 16 + static_cast<unsigned long>(std::max(v, 0));
        }
        if (ok && value < 0x80) {
          out += static_cast<char>(std::tolower(static_cast<int>(value)));
          i += 1 + digits;
          continue;
        }
      }
    }
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  }
  return out;
}

/// Removes the user information (`user:password@`, `token@`) of every URL written plainly in
/// `text` (RFC 3986, section 3.2.1: the authority ends at `/`, `?`, `#`; a quote, `<` or
/// whitespace ends it too in a configuration file). True when something was removed.
bool strip_userinfo(std::string& text) {
  bool changed = false;
  std::size_t from = 0;
  while ((from = text.find("://", from)) != std::string::npos) {
    const std::size_t start = from + 3;
    std::size_t stop = start;
    while (stop < text.size() &&
           std::string_view("/?#\"'<> \t\\").find(text[stop]) == std::string_view::npos)
      ++stop;
    // The last `@` ends the user information, as URL parsers read `user:p@ss@host`.
    const std::size_t at = text.rfind('@', stop == start ? start : stop - 1);
    if (at != std::string::npos && at >= start && at < stop) {
      text.erase(start, at + 1 - start);
      changed = true;
    }
    from = start;
  }
  return changed;
}

/// How a removed `user:password@` is named: by the option it was in, never by its value.
std::string userinfo_key(std::string_view key) {
  return key.empty() ? "user:password of a URL" : shown(key) + " (user:password of a URL)";
}

/// `bytes` with the user information of every URL removed, line by line, each removal added to
/// `removed` (line numbers stay those of `bytes`).
std::string strip_userinfo_lines(std::string_view bytes, std::vector<RemovedItem>& removed) {
  std::string out;
  for (const auto& line : split_lines(bytes)) {
    std::string text(line.text);
    if (strip_userinfo(text)) removed.push_back({line.number, userinfo_key("")});
    out += text;
    out += line.end;
  }
  return out;
}

/// Builds a SanitizedConfig line by line: kept lines (URL user information removed) and
/// removed ones.
class LineWriter {
 public:
  /// Keeps `line`, without the user information of the URLs from byte `value_from` on (the
  /// value: a key never loses bytes, so what was not a credential key does not become one).
  void keep(const Line& line, std::string_view key, std::size_t value_from = 0) {
    value_from = std::min(value_from, line.text.size());
    std::string value(line.text.substr(value_from));
    if (strip_userinfo(value)) out_.removed.push_back({line.number, userinfo_key(key)});
    const std::string text = std::string(line.text.substr(0, value_from)) + value;
    out_.bytes += text;
    out_.bytes += line.end;
    kept_.push_back(line.number);
  }
  void remove(const Line& line, std::string_view key) {
    out_.removed.push_back({line.number, shown(key)});
  }
  void drop(const Line&) {}  ///< a continuation of a removed value
  const std::vector<std::size_t>& kept() const { return kept_; }
  SanitizedConfig take() { return std::move(out_); }

 private:
  SanitizedConfig out_;
  std::vector<std::size_t> kept_;
};

SanitizedConfig masked(std::string reason) {
  return {{}, {}, std::move(reason)};
}

// ---- npmrc: npm's ini (https://github.com/npm/ini): a key ends at `=`, an unquoted one at
// `;` or `#` too; a quoted one is JSON; `${VAR}` is expanded in keys and values.

bool npm_secret_key(std::string_view key) {
  static constexpr std::string_view kKeys[] = {"_authtoken", "_auth", "_password",
                                               "password",   "key",   "otp"};
  const std::size_t colon = key.rfind(':');
  const std::string last = lower(colon == std::string_view::npos ? key : key.substr(colon + 1));
  return std::ranges::find(kKeys, last) != std::end(kKeys);
}

SanitizedConfig sanitize_npmrc(std::string_view bytes) {
  LineWriter out;
  for (const auto& line : split_lines(bytes)) {
    const std::string_view t = trim(line.text);
    if (t.empty() || t.front() == ';' || t.front() == '#') {
      out.keep(line, "");
      continue;
    }
    // npm reads a line without `=` as `<line>=true`; a token pasted alone would be one, so
    // it goes, and is named by what it is, not by its text.
    if (t.find('=') == std::string_view::npos) {
      out.remove(line, "a line without '='");
      continue;
    }
    std::string_view key = trim(t.substr(0, t.find('=')));
    if (key.ends_with("[]")) key.remove_suffix(2);  // an array key
    if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') && key.back() == key.front())
      key = key.substr(1, key.size() - 2);
    else
      key = trim(key.substr(0, key.find_first_of(";#")));
    // An escape or a variable could spell a credential key: taken out too.
    const bool opaque =
        key.find('\\') != std::string_view::npos || key.find("${") != std::string_view::npos;
    if (opaque || npm_secret_key(key))
      out.remove(line, key);
    else
      out.keep(line, key, line.text.find('=') + 1);
  }
  return out.take();
}

// ---- .yarnrc.yml: YAML block mappings; a removed key takes the lines indented below it.

/// The key of a YAML block-mapping line and its column, or nullopt (a comment, a list item
/// without a key, a continuation).
struct YamlKey {
  std::string key;
  std::size_t column = 0;
  std::string_view value;
};

std::optional<YamlKey> yaml_key(std::string_view text) {
  std::size_t column = indentation(text);
  std::string_view rest = text.substr(column);
  while (rest.size() >= 2 && rest[0] == '-' && is_space(rest[1])) {
    const std::size_t skip = 1 + indentation(rest.substr(1));
    column += skip;
    rest.remove_prefix(skip);
  }
  if (rest.empty() || rest.front() == '#') return std::nullopt;
  std::string key;
  std::size_t after = 0;
  if (rest.front() == '"' || rest.front() == '\'') {
    const char quote = rest.front();
    std::size_t i = 1;
    for (; i < rest.size() && rest[i] != quote; ++i)
      if (quote == '"' && rest[i] == '\\') ++i;
    if (i >= rest.size()) return std::nullopt;
    key = std::string(rest.substr(1, i - 1));
    after = i + 1;
    while (after < rest.size() && is_space(rest[after])) ++after;
    if (after >= rest.size() || rest[after] != ':') return std::nullopt;
  } else {
    std::size_t colon = 0;
    while ((colon = rest.find(':', colon)) != std::string_view::npos && colon + 1 < rest.size() &&
           !is_space(rest[colon + 1]))
      ++colon;
    if (colon == std::string_view::npos) return std::nullopt;
    key = std::string(trim(rest.substr(0, colon)));
    after = colon;
  }
  return YamlKey{key, column, trim(rest.substr(after + 1))};
}

bool yarn_secret_key(std::string_view key) {
  const std::string k = decoded_lower(key);
  return k == "npmauthtoken" || k == "npmauthident";
}

SanitizedConfig sanitize_yarnrc(std::string_view bytes) {
  LineWriter out;
  std::optional<std::size_t> removing_below;  // the column of the removed key
  const auto lines = split_lines(bytes);
  for (const auto& line : lines) {
    if (removing_below) {
      const bool blank = trim(line.text).empty();
      if (blank || indentation(line.text) > *removing_below) {
        out.drop(line);
        continue;
      }
      removing_below.reset();
    }
    const auto key = yaml_key(line.text);
    if (!key || !yarn_secret_key(key->key)) {
      if (key)
        out.keep(line, key->key, static_cast<std::size_t>(key->value.data() - line.text.data()));
      else
        out.keep(line, "");
      continue;
    }
    // An alias takes its value from an anchor elsewhere; a quoted value left open continues
    // in a way this reader does not follow.
    const std::string_view v = key->value;
    if (!v.empty() && v.front() == '*')
      return masked("line " + std::to_string(line.number) + ": " + shown(key->key) +
                    " is an alias");
    if (!v.empty() && (v.front() == '"' || v.front() == '\'') &&
        (v.size() < 2 || v.back() != v.front()))
      return masked("line " + std::to_string(line.number) + ": " + shown(key->key) +
                    " holds a quoted value over several lines");
    out.remove(line, key->key);
    removing_below = key->column;
  }
  SanitizedConfig result = out.take();
  // What is left must not name a credential key in any form (a flow mapping, `? key`).
  for (const auto& line : split_lines(result.bytes)) {
    const std::string text = decoded_lower(line.text);
    if (text.find("npmauthtoken") != std::string::npos ||
        text.find("npmauthident") != std::string::npos)
      return masked(
          "npmAuthToken or npmAuthIdent written in a form this reader does not take "
          "apart (a flow mapping, an explicit key)");
  }
  return result;
}

// ---- pip.conf: configparser; credentials are only the user information of index URLs.

SanitizedConfig sanitize_pip(std::string_view bytes) {
  LineWriter out;
  std::string key;
  for (const auto& line : split_lines(bytes)) {
    const std::string_view t = trim(line.text);
    std::size_t value_from = 0;  // a continuation line is all value, of the option above
    if (!t.empty() && !is_space(line.text.front())) {
      const std::size_t delimiter = line.text.find_first_of("=:");
      const bool option = t.front() != '[' && t.front() != '#' && t.front() != ';' &&
                          delimiter != std::string_view::npos;
      key = option ? std::string(trim(line.text.substr(0, delimiter))) : std::string();
      value_from = option ? delimiter + 1 : 0;
    }
    out.keep(line, key, value_from);
  }
  return out.take();
}

// ---- Cargo's config.toml: `token` and `secret-key` of any table, dotted or quoted keys,
// multi-line strings.

/// The last segment of a TOML key (`registries.x.token` -> `token`), unquoted.
std::string toml_last_segment(std::string_view key) {
  std::size_t start = 0;
  char quote = 0;
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (quote != 0) {
      if (key[i] == '\\' && quote == '"')
        ++i;
      else if (key[i] == quote)
        quote = 0;
    } else if (key[i] == '"' || key[i] == '\'') {
      quote = key[i];
    } else if (key[i] == '.') {
      start = i + 1;
    }
  }
  std::string_view last = trim(key.substr(std::min(start, key.size())));
  if (last.size() >= 2 && (last.front() == '"' || last.front() == '\'') &&
      last.back() == last.front())
    last = last.substr(1, last.size() - 2);
  return std::string(last);
}

bool cargo_secret_key(std::string_view last) {
  const std::string k = decoded_lower(last);
  return k == "token" || k == "secret-key";
}

/// The delimiter of a multi-line string that `value` opens and does not close, or empty.
std::string_view open_multiline(std::string_view value) {
  for (const std::string_view delimiter : {std::string_view("\"\"\""), std::string_view("'''")})
    if (value.starts_with(delimiter) &&
        value.find(delimiter, delimiter.size()) == std::string_view::npos)
      return delimiter;
  return {};
}

/// Whether `text` (decoded, lowercased) assigns `name`: the name at a key's start, then an
/// optional quote, spaces and `=`.
bool assigns(std::string_view text, std::string_view name) {
  for (std::size_t at = text.find(name); at != std::string_view::npos;
       at = text.find(name, at + 1)) {
    const char before = at == 0 ? ' ' : text[at - 1];
    if (std::string_view(" \t{,.\"'").find(before) == std::string_view::npos) continue;
    std::size_t i = at + name.size();
    if (i < text.size() && (text[i] == '"' || text[i] == '\'')) ++i;
    while (i < text.size() && is_space(text[i])) ++i;
    if (i < text.size() && text[i] == '=') return true;
  }
  return false;
}

SanitizedConfig sanitize_cargo(std::string_view bytes) {
  LineWriter out;
  std::string_view closing;  // inside a multi-line string until this delimiter
  bool removing = false;     // ... of a removed key
  for (const auto& line : split_lines(bytes)) {
    if (!closing.empty()) {
      if (line.text.find(closing) != std::string_view::npos) closing = {};
      if (removing)
        out.drop(line);
      else
        out.keep(line, "");
      continue;
    }
    const std::string_view t = trim(line.text);
    const std::size_t eq = t.find('=');
    if (t.empty() || t.front() == '#' || t.front() == '[' || eq == std::string_view::npos) {
      out.keep(line, "");
      continue;
    }
    const std::string_view key = trim(t.substr(0, eq));
    const std::string_view value = trim(t.substr(eq + 1));
    closing = open_multiline(value);
    removing = cargo_secret_key(toml_last_segment(key));
    if (removing && !value.empty() && (value.front() == '[' || value.front() == '{'))
      return masked("line " + std::to_string(line.number) + ": " + shown(key) +
                    " holds an array or a table");
    if (removing)
      out.remove(line, key);
    else
      out.keep(line, key, line.text.find('=') + 1);
  }
  SanitizedConfig result = out.take();
  for (const auto& line : split_lines(result.bytes)) {
    const std::string text = decoded_lower(line.text);
    if (trim(text).starts_with("#")) continue;
    if (assigns(text, "token") || assigns(text, "secret-key"))
      return masked(
          "token or secret-key written in a form this reader does not take apart "
          "(an inline table)");
  }
  return result;
}

/// `result` with the URL removals made before it, in line order.
SanitizedConfig with_userinfo(SanitizedConfig result, const std::vector<RemovedItem>& userinfo) {
  result.removed.insert(result.removed.end(), userinfo.begin(), userinfo.end());
  std::ranges::stable_sort(result.removed, {}, &RemovedItem::line);
  return result;
}

// ---- Maven's settings.xml: the elements password, passphrase, privateKey and httpHeaders,
// wherever they are, outside comments and inside them.

constexpr std::string_view kMavenElements[] = {"password", "passphrase", "privateKey",
                                               "httpHeaders"};

struct Span {
  std::size_t begin = 0, end = 0;
  std::string key;
};

bool name_ends(std::string_view text, std::size_t at) {
  return at >= text.size() ||
         std::string_view(" \t\r\n/>").find(text[at]) != std::string_view::npos;
}

/// The comments of `text` as [begin, end) ranges; nullopt when one is not closed.
std::optional<std::vector<std::pair<std::size_t, std::size_t>>> xml_comments(
    std::string_view text) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t at = text.find("<!--"); at != std::string_view::npos;
       at = text.find("<!--", at)) {
    const std::size_t close = text.find("-->", at + 4);
    if (close == std::string_view::npos) return std::nullopt;
    out.emplace_back(at, close + 3);
    at = close + 3;
  }
  return out;
}

/// The spans of element `name` in text[from, to): `<name .../>` or `<name ...>...</name>`.
/// `skip` says whether a position lies in a region to step over. An element left open in a
/// region that must close (`strict`) gives nullopt.
std::optional<std::vector<Span>> element_spans(std::string_view text, std::string_view name,
                                               std::size_t from, std::size_t to, bool strict,
                                               const std::function<bool(std::size_t)>& skip) {
  std::vector<Span> out;
  const std::string open = "<" + std::string(name);
  const std::string close = "</" + std::string(name);
  const std::string_view region = text.substr(0, to);
  for (std::size_t at = region.find(open, from); at != std::string_view::npos;
       at = region.find(open, at + 1)) {
    if (skip(at) || !name_ends(region, at + open.size())) continue;
    const std::size_t tag_end = region.find('>', at);
    if (tag_end == std::string_view::npos) {
      if (strict) return std::nullopt;
      break;
    }
    std::size_t end = tag_end + 1;
    if (region[tag_end - 1] != '/') {
      std::size_t c = region.find(close, tag_end);
      while (c != std::string_view::npos && (skip(c) || !name_ends(region, c + close.size())))
        c = region.find(close, c + 1);
      const std::size_t c_end = c == std::string_view::npos ? c : region.find('>', c);
      if (c_end == std::string_view::npos) {
        if (strict) return std::nullopt;
        continue;
      }
      end = c_end + 1;
    }
    out.push_back({at, end, "<" + std::string(name) + ">"});
    at = end - 1;
  }
  return out;
}

/// Whether `word` (lowercase) stands as an element name in `text` outside `skip`:
/// after `<`, `</` or a namespace prefix's `:`.
bool names_element(std::string_view text, std::string_view word,
                   const std::function<bool(std::size_t)>& skip) {
  const std::string low = lower(text);
  for (std::size_t at = low.find(word); at != std::string::npos; at = low.find(word, at + 1)) {
    if (skip(at)) continue;
    std::size_t i = at;
    if (i > 0 && low[i - 1] == ':') {
      --i;
      while (i > 0 && (std::isalnum(static_cast<unsigned char>(low[i - 1])) || low[i - 1] == '_' ||
                       low[i - 1] == '-' || low[i - 1] == '.'))
        --i;
    }
    if (i > 0 && low[i - 1] == '/') --i;
    if (i > 0 && low[i - 1] == '<') return true;
  }
  return false;
}

/// `bytes` without `spans` (sorted, not overlapping); a line left blank by a removal goes
/// whole. One RemovedItem per span, at the line it starts on.
SanitizedConfig remove_spans(std::string_view bytes, const std::vector<Span>& spans) {
  std::vector<bool> gone(bytes.size(), false);
  SanitizedConfig out;
  const auto lines = split_lines(bytes);
  for (const auto& span : spans) {
    std::fill(gone.begin() + static_cast<std::ptrdiff_t>(span.begin),
              gone.begin() + static_cast<std::ptrdiff_t>(span.end), true);
    const auto line = std::ranges::find_if(
        lines, [&](const Line& l) { return span.begin < l.offset + l.text.size() + l.end.size(); });
    out.removed.push_back({line == lines.end() ? lines.size() : line->number, span.key});
  }
  for (const auto& line : lines) {
    std::string kept;
    bool touched = false;
    for (std::size_t i = 0; i < line.text.size(); ++i) {
      if (gone[line.offset + i])
        touched = true;
      else
        kept += line.text[i];
    }
    if (touched && trim(kept).empty()) continue;
    out.bytes += kept;
    if (!line.end.empty() && !gone[line.offset + line.text.size()]) out.bytes += line.end;
  }
  return out;
}

SanitizedConfig sanitize_maven(std::string_view original) {
  std::vector<RemovedItem> userinfo;
  const std::string stripped = strip_userinfo_lines(original, userinfo);
  const std::string_view bytes = stripped;
  const std::string low = lower(bytes);
  if (low.find("<!doctype") != std::string::npos || low.find("<!entity") != std::string::npos)
    return masked("a DOCTYPE or an ENTITY declaration (an entity could spell a credential)");
  const auto comments = xml_comments(bytes);
  if (!comments) return masked("a comment is not closed");
  const auto in_comment = [&](std::size_t at) {
    return std::ranges::any_of(*comments,
                               [&](const auto& c) { return at >= c.first && at < c.second; });
  };
  std::vector<Span> spans;
  for (const auto name : kMavenElements) {
    auto found = element_spans(bytes, name, 0, bytes.size(), true, in_comment);
    if (!found) return masked("an element <" + std::string(name) + "> is not closed");
    spans.insert(spans.end(), found->begin(), found->end());
    // Inside a comment an element is only an example; taken out when it closes there.
    for (const auto& [begin, end] : *comments) {
      auto example =
          element_spans(bytes, name, begin, end, false, [](std::size_t) { return false; });
      spans.insert(spans.end(), example->begin(), example->end());
    }
  }
  std::ranges::sort(spans, [](const Span& a, const Span& b) { return a.begin < b.begin; });
  std::vector<Span> merged;
  for (auto& span : spans) {
    if (!merged.empty() && span.begin < merged.back().end)
      merged.back().end = std::max(merged.back().end, span.end);
    else
      merged.push_back(std::move(span));
  }
  SanitizedConfig result = remove_spans(bytes, merged);
  const auto left_comments = xml_comments(result.bytes);
  if (!left_comments) return masked("a removal crossed a comment");
  const auto in_left_comment = [&](std::size_t at) {
    return std::ranges::any_of(*left_comments,
                               [&](const auto& c) { return at >= c.first && at < c.second; });
  };
  for (const auto name : kMavenElements)
    if (names_element(result.bytes, lower(name), in_left_comment))
      return masked("an element " + std::string(name) +
                    " written in a form this reader does not take apart (a namespace prefix, "
                    "another case, CDATA)");
  return with_userinfo(std::move(result), userinfo);
}

// ---- Docker's config.json: the values of members named auth, identitytoken, registrytoken or
// password, at any depth, become "" (Go's encoding/json matches names case-insensitively).

class JsonScanner {
 public:
  explicit JsonScanner(std::string_view text) : text_(text) {}

  /// Parses the document; the spans of credential values go to `spans`.
  std::optional<std::string> scan(std::vector<Span>& spans) {
    spans_ = &spans;
    skip_space();
    if (auto error = value(0, ""); error) return error;
    skip_space();
    if (at_ != text_.size()) return error_at("text after the document");
    return std::nullopt;
  }

 private:
  std::string error_at(std::string_view what) const {
    return "not valid JSON at byte " + std::to_string(at_) + " (" + std::string(what) + ")";
  }
  void skip_space() {
    while (at_ < text_.size() &&
           std::string_view(" \t\r\n").find(text_[at_]) != std::string_view::npos)
      ++at_;
  }
  std::optional<std::string> value(int depth, const std::string& path) {
    if (depth > 64) return error_at("nested deeper than 64");
    if (at_ >= text_.size()) return error_at("a value is missing");
    const char c = text_[at_];
    if (c == '{') return object(depth, path);
    if (c == '[') return array(depth, path);
    if (c == '"') return string(nullptr);
    const std::size_t start = at_;
    while (at_ < text_.size() &&
           std::string_view(",]} \t\r\n").find(text_[at_]) == std::string_view::npos)
      ++at_;
    const std::string_view word = text_.substr(start, at_ - start);
    if (word == "true" || word == "false" || word == "null") return std::nullopt;
    if (word.empty() || word.find_first_not_of("0123456789+-.eE") != std::string_view::npos ||
        !(std::isdigit(static_cast<unsigned char>(word.front())) || word.front() == '-'))
      return error_at("not a value");
    return std::nullopt;
  }
  std::optional<std::string> string(std::string* raw) {
    const std::size_t start = ++at_;
    while (at_ < text_.size() && text_[at_] != '"') {
      if (static_cast<unsigned char>(text_[at_]) < 0x20) return error_at("a control character");
      if (text_[at_] == '\\') ++at_;
      ++at_;
    }
    if (at_ >= text_.size()) return error_at("a string is not closed");
    if (raw != nullptr) *raw = std::string(text_.substr(start, at_ - start));
    ++at_;
    return std::nullopt;
  }
  static bool secret_name(std::string name) {
    // Go folds U+212A KELVIN SIGN to k and U+017F LONG S to s (encoding/json, foldName).
    for (std::size_t at; (at = name.find("\xE2\x84\xAA")) != std::string::npos;)
      name.replace(at, 3, "k");
    for (std::size_t at; (at = name.find("\xC5\xBF")) != std::string::npos;)
      name.replace(at, 2, "s");
    const std::string k = lower(name);
    return k == "auth" || k == "identitytoken" || k == "registrytoken" || k == "password";
  }
  std::optional<std::string> object(int depth, const std::string& path) {
    ++at_;
    skip_space();
    if (at_ < text_.size() && text_[at_] == '}') return ++at_, std::nullopt;
    while (true) {
      skip_space();
      if (at_ >= text_.size() || text_[at_] != '"') return error_at("a member name is missing");
      std::string name;
      const std::size_t name_at = at_;
      if (auto e = string(&name); e) return e;
      if (name.find('\\') != std::string::npos) return error_at("a member name with an escape");
      skip_space();
      if (at_ >= text_.size() || text_[at_] != ':') return error_at("':' is missing");
      ++at_;
      skip_space();
      const std::size_t value_at = at_;
      const std::string member = path.empty() ? name : path + "." + name;
      if (auto e = value(depth + 1, member); e) return e;
      if (secret_name(name))
        spans_->push_back({value_at, at_, member + " (name at " + std::to_string(name_at) + ")"});
      skip_space();
      if (at_ < text_.size() && text_[at_] == ',') {
        ++at_;
        continue;
      }
      if (at_ < text_.size() && text_[at_] == '}') return ++at_, std::nullopt;
      return error_at("',' or '}' is missing");
    }
  }
  std::optional<std::string> array(int depth, const std::string& path) {
    ++at_;
    skip_space();
    if (at_ < text_.size() && text_[at_] == ']') return ++at_, std::nullopt;
    while (true) {
      skip_space();
      if (auto e = value(depth + 1, path + "[]"); e) return e;
      skip_space();
      if (at_ < text_.size() && text_[at_] == ',') {
        ++at_;
        continue;
      }
      if (at_ < text_.size() && text_[at_] == ']') return ++at_, std::nullopt;
      return error_at("',' or ']' is missing");
    }
  }

  std::string_view text_;
  std::size_t at_ = 0;
  std::vector<Span>* spans_ = nullptr;
};

SanitizedConfig sanitize_docker(std::string_view original) {
  std::vector<RemovedItem> userinfo;
  const std::string stripped = strip_userinfo_lines(original, userinfo);
  const std::string_view bytes = stripped;
  std::vector<Span> spans;
  if (auto error = JsonScanner(bytes).scan(spans); error) return masked(*error);
  std::ranges::sort(spans, [](const Span& a, const Span& b) { return a.begin < b.begin; });
  SanitizedConfig out;
  const auto lines = split_lines(bytes);
  std::size_t copied = 0;
  for (const auto& span : spans) {
    if (span.begin < copied) continue;  // inside a value already emptied
    out.bytes += bytes.substr(copied, span.begin - copied);
    out.bytes += "\"\"";
    copied = span.end;
    const auto line = std::ranges::find_if(
        lines, [&](const Line& l) { return span.begin < l.offset + l.text.size() + l.end.size(); });
    std::string key = span.key.substr(0, span.key.rfind(" (name at "));
    out.removed.push_back({line == lines.end() ? lines.size() : line->number, shown(key)});
  }
  out.bytes += bytes.substr(copied);
  return with_userinfo(std::move(out), userinfo);
}

}  // namespace

std::string_view to_string(ConfigFormat format) {
  switch (format) {
    case ConfigFormat::Npmrc:
      return "npmrc";
    case ConfigFormat::YarnrcYml:
      return "yarnrc-yml";
    case ConfigFormat::PipConf:
      return "pip-conf";
    case ConfigFormat::CargoToml:
      return "cargo-toml";
    case ConfigFormat::MavenSettings:
      return "maven-settings";
    case ConfigFormat::DockerConfig:
      return "docker-config";
  }
  return "unknown";
}

const std::vector<MixedConfigName>& mixed_config_names() {
  using F = ConfigFormat;
  static const std::vector<MixedConfigName> rows = {
      {".npmrc", F::Npmrc, "npm",
       "lines whose key is `_authToken`, `_auth`, `_password`, `password`, `key` or `otp` "
       "(scoped, `//host/:_authToken`, or not) or holds `\\` or `${`; lines without `=`"},
      {".yarnrc.yml", F::YarnrcYml, "Yarn (2 and later)",
       "`npmAuthToken` and `npmAuthIdent` at any depth, with the lines indented below them"},
      {".config/pip/pip.conf", F::PipConf, "pip", "the `user:password@` of every URL"},
      {".pip/pip.conf", F::PipConf, "pip (legacy location)", "the `user:password@` of every URL"},
      {".cargo/config.toml", F::CargoToml, "Cargo",
       "`token` and `secret-key` of any table (`[registry]`, `[registries.<name>]`)"},
      {".cargo/config", F::CargoToml, "Cargo (before 1.39)",
       "`token` and `secret-key` of any table (`[registry]`, `[registries.<name>]`)"},
      {".m2/settings.xml", F::MavenSettings, "Maven",
       "the elements `<password>`, `<passphrase>`, `<privateKey>` and `<httpHeaders>`"},
      {".docker/config.json", F::DockerConfig, "Docker CLI (docker login)",
       "the values of `auth`, `identitytoken`, `registrytoken` and `password` (made `\"\"`)"},
  };
  return rows;
}

SanitizedConfig sanitize_config(ConfigFormat format, std::string_view bytes) {
  if (bytes.size() > kMaxConfigBytes)
    return masked("larger than " + std::to_string(kMaxConfigBytes) + " bytes");
  if (bytes.find('\0') != std::string_view::npos) return masked("a NUL byte");
  switch (format) {
    case ConfigFormat::Npmrc:
      return sanitize_npmrc(bytes);
    case ConfigFormat::YarnrcYml:
      return sanitize_yarnrc(bytes);
    case ConfigFormat::PipConf:
      return sanitize_pip(bytes);
    case ConfigFormat::CargoToml:
      return sanitize_cargo(bytes);
    case ConfigFormat::MavenSettings:
      return sanitize_maven(bytes);
    case ConfigFormat::DockerConfig:
      return sanitize_docker(bytes);
  }
  return masked("an unknown format");
}

SanitizedConfig sanitize_config_fd(ConfigFormat format, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return masked(std::string("fstat(): ") + strerrorname_np(errno));
  if (!S_ISREG(st.st_mode)) return masked("not a regular file");
  std::string bytes;
  char buffer[16384];
  while (bytes.size() <= kMaxConfigBytes) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return masked(std::string("read(): ") + strerrorname_np(errno));
    if (n == 0) break;
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  return sanitize_config(format, bytes);
}

}  // namespace pisandbox::policy
