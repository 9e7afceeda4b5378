#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>

#include "policy/credential_lines_text.hpp"

namespace pisandbox::policy::config_text {

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace pisandbox::policy::config_text
