#include "config/config_document.hpp"

#include <set>
#include <utility>

#include "core/printable.hpp"

namespace pisandbox::config::detail {

namespace {

// ---------------------------------------------------------------------------------------
// JSON text -> document. nlohmann's DOM parser keeps the last of two equal keys, which would
// let a second value hide behind the first (docs/configuration.md), so the DOM is built by this SAX
// handler, which stops at the first duplicate key of the root object or of a section.

bool is_section(std::string_view key) {
  return std::ranges::find(kSections, key) != kSections.end();
}

class DocumentBuilder final : public nlohmann::json_sax<Json> {
 public:
  explicit DocumentBuilder(Document& document) : document_(document) {}

  bool null() override { return put(nullptr) != nullptr; }
  bool boolean(bool value) override { return put(value) != nullptr; }
  bool number_integer(number_integer_t value) override { return put(value) != nullptr; }
  bool number_unsigned(number_unsigned_t value) override { return put(value) != nullptr; }
  bool number_float(number_float_t value, const string_t& /*text*/) override {
    return put(value) != nullptr;
  }
  bool string(string_t& value) override { return put(std::move(value)) != nullptr; }
  bool binary(binary_t& /*value*/) override { return false; }  // not produced by JSON text

  bool start_object(std::size_t /*elements*/) override {
    std::optional<std::string> where = where_of_new_object();
    Json* object = put(Json::object());
    if (where) document_.key_order[*where];  // an empty section still has an entry
    frames_.push_back(Frame{object, std::move(where), {}, {}});
    return true;
  }

  bool key(string_t& key) override {
    Frame& frame = frames_.back();
    if (frame.where) {
      if (!frame.keys.insert(key).second) {
        duplicate_ = "duplicate " + *frame.where + " key: " + core::printable(key);
        return false;
      }
      document_.key_order[*frame.where].push_back(key);
    }
    frame.last_key = key;
    pending_ = &(*frame.value)[key];
    return true;
  }

  bool end_object() override { return pop(); }
  bool start_array(std::size_t /*elements*/) override {
    Json* array = put(Json::array());
    frames_.push_back(Frame{array, std::nullopt, {}, {}});
    return true;
  }
  bool end_array() override { return pop(); }

  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& error) override {
    error_position_ = position;
    error_what_ = error.what();
    return false;
  }

  /// The first duplicate key found, as a message without the prefix.
  [[nodiscard]] const std::optional<std::string>& duplicate() const { return duplicate_; }
  /// The byte position (1-based; size+1 at end of input) and text of a syntax error.
  [[nodiscard]] std::size_t error_position() const { return error_position_; }
  [[nodiscard]] const std::string& error_what() const { return error_what_; }

 private:
  struct Frame {
    Json* value;
    std::optional<std::string> where;  // set for the root object and section objects
    std::set<std::string, std::less<>> keys;
    std::string last_key;
  };

  // Only the root object, the objects directly under a section key and the objects directly
  // under a section's key are checked: no valid configuration has an object anywhere else, so
  // any other object is refused by the schema anyway.
  std::optional<std::string> where_of_new_object() const {
    if (frames_.empty()) return std::string("root");
    const Frame& parent = frames_.back();
    if (frames_.size() == 1 && parent.where && parent.value->is_object() &&
        is_section(parent.last_key)) {
      return parent.last_key;
    }
    // An object-valued key of a section (network.deniedDomainReasons): its keys are checked for
    // duplicates too.
    if (frames_.size() == 2 && parent.where && parent.value->is_object())
      return *parent.where + "." + parent.last_key;
    return std::nullopt;
  }

  // Stores a value where the parser is: the root, the end of an array, or under the last key.
  Json* put(Json value) {
    if (frames_.empty()) {
      document_.root = std::move(value);
      return &document_.root;
    }
    Json& container = *frames_.back().value;
    if (container.is_array()) {
      container.push_back(std::move(value));
      return &container.back();
    }
    *pending_ = std::move(value);
    return pending_;
  }

  bool pop() {
    frames_.pop_back();
    return true;
  }

  Document& document_;
  std::vector<Frame> frames_;
  Json* pending_ = nullptr;
  std::optional<std::string> duplicate_;
  std::size_t error_position_ = 0;
  std::string error_what_;
};

std::string join(std::span<const std::string> items) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ", ";
    out += core::printable(item);
  }
  return out;
}

// `[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ...` ->
// `syntax error ...`; the position is reported separately.
std::string parser_reason(std::string_view what) {
  if (what.starts_with('[')) {
    if (const std::size_t end = what.find("] "); end != std::string_view::npos) {
      what.remove_prefix(end + 2);
    }
  }
  if (what.starts_with("parse error")) {
    if (const std::size_t colon = what.find(": "); colon != std::string_view::npos) {
      what.remove_prefix(colon + 2);
    }
  }
  return std::string(what);
}

// 1-based line and column (bytes) of the byte at nlohmann's 1-based `position` (the last
// byte read, i.e. the end of the offending token); one past the end at end of input.
ConfigError json_error(std::string_view text, std::size_t position, std::string_view what) {
  const std::size_t index = std::min(position == 0 ? 0 : position - 1, text.size());
  const std::string_view before = text.substr(0, index);
  const std::size_t last_newline = before.rfind('\n');
  ConfigError error;
  error.kind = ConfigError::Kind::InvalidJson;
  error.line = 1 + static_cast<std::size_t>(std::ranges::count(before, '\n'));
  error.column = last_newline == std::string_view::npos ? index + 1 : index - last_newline;
  error.reason = parser_reason(what);
  return error;
}

}  // namespace

ConfigError invalid_error(std::string what, std::string hint) {
  ConfigError error;
  error.kind = ConfigError::Kind::Invalid;
  error.message = std::string(kInvalidPrefix) + std::move(what);
  error.hint = std::move(hint);
  return error;
}

Failure invalid(std::string what, std::string hint) {
  return Failure(invalid_error(std::move(what), std::move(hint)));
}

std::expected<Document, ConfigError> read_document(std::string_view text) {
  Document document;
  DocumentBuilder builder(document);
  bool complete = false;
  try {
    complete = Json::sax_parse(text.begin(), text.end(), &builder, Json::input_format_t::json,
                               /*strict=*/true, /*ignore_comments=*/false);
  } catch (const Json::exception& error) {  // not expected from sax_parse; fail closed
    return Failure(json_error(text, text.size() + 1, error.what()));
  }
  if (complete) return document;
  if (builder.duplicate()) return invalid(*builder.duplicate());
  return Failure(json_error(text, builder.error_position(), builder.error_what()));
}

// `unknown <where> key: a` / `unknown <where> keys: a, b` (compatibility C4).
std::optional<ConfigError> unknown_keys(const Document& document, std::string_view where,
                                        std::span<const std::string_view> known) {
  const auto order = document.key_order.find(where);
  if (order == document.key_order.end()) return std::nullopt;
  std::vector<std::string> unknown;
  for (const std::string& key : order->second) {
    if (std::ranges::find(known, key) == known.end()) unknown.push_back(key);
  }
  if (unknown.empty()) return std::nullopt;
  const std::string noun = unknown.size() == 1 ? " key: " : " keys: ";
  return invalid_error("unknown " + std::string(where) + noun + join(unknown));
}

const Json* member(const Json& object, std::string_view key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// The section object, or nullptr when absent (defaults apply).
std::expected<const Json*, ConfigError> section(const Document& document, std::string_view name,
                                                std::span<const std::string_view> known) {
  const Json* value = member(document.root, name);
  if (value == nullptr) return nullptr;
  if (!value->is_object()) return invalid(std::string(name) + " must be an object");
  if (auto error = unknown_keys(document, name, known)) return Failure(std::move(*error));
  return value;
}

// JavaScript's String.prototype.trim(), which the reference uses: ASCII whitespace plus
// the Unicode space separators, U+FEFF and the line terminators U+2028/U+2029.
bool is_js_space(char32_t c) {
  return c == 0x09 || c == 0x0A || c == 0x0B || c == 0x0C || c == 0x0D || c == 0x20 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000 || c == 0xFEFF;
}

// Decodes the UTF-8 sequence of `length` bytes at the start of `text` (validated by the
// JSON parser); returns 0xFFFFFFFF for a truncated sequence.
char32_t decode(std::string_view text, std::size_t length) {
  if (text.size() < length) return 0xFFFFFFFF;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  if (length == 1) return byte(0);
  char32_t c = byte(0) & (0x7F >> length);
  for (std::size_t i = 1; i < length; ++i) c = (c << 6) | (byte(i) & 0x3F);
  return c;
}

std::size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  return 4;
}

std::string js_trim(std::string_view text) {
  while (!text.empty()) {
    const std::size_t length = sequence_length(static_cast<unsigned char>(text.front()));
    if (!is_js_space(decode(text, length))) break;
    text.remove_prefix(length);
  }
  while (!text.empty()) {
    std::size_t start = text.size() - 1;
    while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    if (!is_js_space(decode(text.substr(start), text.size() - start))) break;
    text.remove_suffix(text.size() - start);
  }
  return std::string(text);
}

bool is_absolute_path(const Json& value) {
  if (!value.is_string()) return false;
  const auto& path = value.get_ref<const std::string&>();
  return path.starts_with('/') && path.find('\0') == std::string::npos;
}

}  // namespace pisandbox::config::detail
