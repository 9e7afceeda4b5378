// A JSON Schema (draft 2020-12, https://json-schema.org/draft/2020-12/json-schema-validation)
// validator for the keywords docs/protocol.schema.json uses, so that the C++ tests check what
// src/rpc builds and accepts, and every event serve writes, against the one description of the
// protocol. A keyword it does not know is an error, never ignored: a schema that grows a
// keyword grows this validator too.
#pragma once

#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

namespace pisandbox::testing {

class JsonSchema {
 public:
  explicit JsonSchema(nlohmann::json root) : root_(std::move(root)) {}

  /// Why `value` does not validate against `$defs/<def>` (empty `def`: the whole schema), or ""
  /// when it does. The reason names the path in `value` and the keyword.
  [[nodiscard]] std::string check(const nlohmann::json& value, const std::string& def = "") const {
    return check_at(value, def.empty() ? root_ : definition(def), "$");
  }

  /// The property names `$defs/<def>` lists.
  [[nodiscard]] std::set<std::string> properties(const std::string& def) const {
    std::set<std::string> names;
    for (const auto& [name, _] : definition(def).at("properties").items()) names.insert(name);
    return names;
  }

  [[nodiscard]] const nlohmann::json& definition(const std::string& def) const {
    return root_.at("$defs").at(def);
  }

 private:
  std::string check_at(const nlohmann::json& v, const nlohmann::json& s,
                       const std::string& at) const {
    for (const auto& [keyword, arg] : s.items()) {
      const std::string why = keyword_check(v, s, keyword, arg, at);
      if (!why.empty()) return why;
    }
    return "";
  }

  static bool has_type(const nlohmann::json& v, const std::string& type) {
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "string") return v.is_string();
    if (type == "integer") return v.is_number_integer() || v.is_number_unsigned();
    if (type == "number") return v.is_number();
    if (type == "boolean") return v.is_boolean();
    return type == "null" && v.is_null();
  }

  std::string keyword_check(const nlohmann::json& v, const nlohmann::json& s,
                            const std::string& keyword, const nlohmann::json& arg,
                            const std::string& at) const {
    const auto fail = [&](const std::string& what) { return at + ": " + keyword + " " + what; };
    if (keyword == "$schema" || keyword == "$id" || keyword == "$defs" || keyword == "title" ||
        keyword == "description")
      return "";
    if (keyword == "$ref") {
      const std::string prefix = "#/$defs/";
      const std::string ref = arg.get<std::string>();
      return check_at(v, definition(ref.substr(prefix.size())), at);
    }
    if (keyword == "type")
      return has_type(v, arg.get<std::string>()) ? "" : fail(arg.get<std::string>());
    if (keyword == "const") return v == arg ? "" : fail(arg.dump());
    if (keyword == "enum") {
      for (const auto& option : arg)
        if (v == option) return "";
      return fail(arg.dump());
    }
    if (keyword == "oneOf") {
      int matched = 0;
      std::string whys;
      for (const auto& option : arg) {
        const std::string why = check_at(v, option, at);
        matched += why.empty() ? 1 : 0;
        whys += " [" + why + "]";
      }
      return matched == 1 ? "" : fail("matched " + std::to_string(matched) + ":" + whys);
    }
    if (keyword == "pattern")
      return !v.is_string() ||
                     std::regex_search(v.get<std::string>(), std::regex(arg.get<std::string>()))
                 ? ""
                 : fail(arg.get<std::string>());
    if (keyword == "minLength")
      return !v.is_string() || v.get<std::string>().size() >= arg.get<std::size_t>()
                 ? ""
                 : fail(arg.dump());
    if (keyword == "minimum")
      return !v.is_number() || v.get<double>() >= arg.get<double>() ? "" : fail(arg.dump());
    if (keyword == "maximum")
      return !v.is_number() || v.get<double>() <= arg.get<double>() ? "" : fail(arg.dump());
    if (keyword == "exclusiveMinimum")
      return !v.is_number() || v.get<double>() > arg.get<double>() ? "" : fail(arg.dump());
    if (keyword == "minItems")
      return !v.is_array() || v.size() >= arg.get<std::size_t>() ? "" : fail(arg.dump());
    if (keyword == "items") {
      if (!v.is_array()) return "";
      for (std::size_t i = 0; i < v.size(); ++i)
        if (auto why = check_at(v[i], arg, at + "[" + std::to_string(i) + "]"); !why.empty())
          return why;
      return "";
    }
    if (keyword == "required") {
      if (!v.is_object()) return "";
      for (const auto& name : arg)
        if (!v.contains(name.get<std::string>())) return fail(name.get<std::string>());
      return "";
    }
    if (keyword == "properties") {
      if (!v.is_object()) return "";
      for (const auto& [name, sub] : arg.items())
        if (v.contains(name))
          if (auto why = check_at(v.at(name), sub, at + "." + name); !why.empty()) return why;
      return "";
    }
    if (keyword == "additionalProperties") {
      if (!v.is_object()) return "";
      const auto listed = s.contains("properties") ? s.at("properties") : nlohmann::json::object();
      for (const auto& [name, sub] : v.items()) {
        if (listed.contains(name)) continue;
        if (arg.is_boolean() && !arg.get<bool>()) return fail("forbids " + name);
        if (arg.is_object())
          if (auto why = check_at(sub, arg, at + "." + name); !why.empty()) return why;
      }
      return "";
    }
    return at + ": the keyword " + keyword + " is not known to tests/unit/json_schema.hpp";
  }

  nlohmann::json root_;
};

}  // namespace pisandbox::testing
