#include "approval/json_text.hpp"

#include <set>
#include <vector>

namespace pisandbox::approval {
namespace {

using nlohmann::json;

// Drops nlohmann's `[json.exception.parse_error.101] ` prefix from an exception message.
std::string without_exception_prefix(std::string_view what) {
  const auto end = what.find("] ");
  if (what.starts_with("[json.exception.") && end != std::string_view::npos) {
    what.remove_prefix(end + 2);
  }
  return std::string(what);
}

// Tracks the keys of each open object, so a repeated key can be reported after parsing.
class DuplicateKeyDetector {
 public:
  bool on_event(json::parse_event_t event, const json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        open_objects_.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!open_objects_.empty()) open_objects_.pop_back();
        break;
      case json::parse_event_t::key:
        note_key(parsed.get_ref<const std::string&>());
        break;
      default:
        break;
    }
    return true;
  }

  [[nodiscard]] const std::optional<std::string>& duplicate() const { return duplicate_; }

 private:
  void note_key(const std::string& key) {
    if (open_objects_.empty() || duplicate_) return;
    if (!open_objects_.back().insert(key).second) duplicate_ = key;
  }

  std::vector<std::set<std::string>> open_objects_;
  std::optional<std::string> duplicate_;
};

}  // namespace

core::Result<json> parse_json_text(std::string_view text) {
  DuplicateKeyDetector detector;
  json value;
  try {
    value = json::parse(text.begin(), text.end(),
                        [&detector](int, json::parse_event_t event, json& parsed) {
                          return detector.on_event(event, parsed);
                        });
  } catch (const json::exception& e) {
    return core::fail(without_exception_prefix(e.what()));
  }
  if (detector.duplicate()) return core::fail("duplicate key \"" + *detector.duplicate() + "\"");
  return value;
}

std::string dump_compact(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool is_valid_utf8(std::string_view text) {
  try {
    (void)json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::strict);
  } catch (const json::type_error&) {
    return false;
  }
  return true;
}

}  // namespace pisandbox::approval
