#include "approval/boundary_request.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <span>

#include "approval/json_text.hpp"
#include "approval/sha256.hpp"

namespace pisandbox::approval {
namespace {

using nlohmann::json;

struct RequiredField {
  std::string_view name;
  std::string BoundaryRequest::*member;
};

struct OptionalField {
  std::string_view name;
  std::optional<std::string> BoundaryRequest::*member;
};

// The required string fields; `surface` (an enum) is checked between source and operation.
constexpr std::array kRequiredBeforeSurface = {
    RequiredField{"id", &BoundaryRequest::id},
    RequiredField{"source", &BoundaryRequest::source},
};
constexpr std::array kRequiredAfterSurface = {
    RequiredField{"operation", &BoundaryRequest::operation},
    RequiredField{"cwd", &BoundaryRequest::cwd},
};

// The optional string fields, with their JSON names (compatibility C69).
constexpr std::array kOptionalFields = {
    OptionalField{"command", &BoundaryRequest::command},
    OptionalField{"path", &BoundaryRequest::path},
    OptionalField{"resolvedPath", &BoundaryRequest::resolved_path},
    OptionalField{"destination", &BoundaryRequest::destination},
    OptionalField{"toolCallId", &BoundaryRequest::tool_call_id},
    OptionalField{"toolName", &BoundaryRequest::tool_name},
    OptionalField{"skillName", &BoundaryRequest::skill_name},
    OptionalField{"toolInputPreview", &BoundaryRequest::tool_input_preview},
    OptionalField{"agentName", &BoundaryRequest::agent_name},
};

constexpr std::string_view kSurfaceName = "surface";
constexpr std::string_view kMatchedPolicyName = "matchedPolicy";

bool is_blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](unsigned char c) { return std::isspace(c) != 0; });
}

std::unexpected<core::Error> not_a_non_empty_string(std::string_view name) {
  return core::fail("boundary request " + std::string(name) + " must be a non-empty string");
}

bool is_known_key(std::string_view key) {
  const auto named = [key](const auto& field) { return field.name == key; };
  return key == kSurfaceName || key == kMatchedPolicyName ||
         std::any_of(kRequiredBeforeSurface.begin(), kRequiredBeforeSurface.end(), named) ||
         std::any_of(kRequiredAfterSurface.begin(), kRequiredAfterSurface.end(), named) ||
         std::any_of(kOptionalFields.begin(), kOptionalFields.end(), named);
}

core::Result<std::string> read_required(const json& object, std::string_view name) {
  const auto it = object.find(name);
  if (it == object.end() || !it->is_string() || is_blank(it->get_ref<const std::string&>())) {
    return not_a_non_empty_string(name);
  }
  return it->get<std::string>();
}

core::Result<void> read_required_fields(const json& object, std::span<const RequiredField> fields,
                                        BoundaryRequest& request) {
  for (const auto& field : fields) {
    auto text = read_required(object, field.name);
    if (!text) return std::unexpected(text.error());
    request.*field.member = std::move(*text);
  }
  return {};
}

core::Result<Surface> read_surface(const json& object) {
  auto text = read_required(object, kSurfaceName);
  if (!text) return std::unexpected(text.error());
  const auto surface = surface_from_string(*text);
  if (!surface) {
    return core::fail(
        "boundary request surface must be one of network, host-ipc, filesystem-read, "
        "filesystem-write, credential");
  }
  return *surface;
}

core::Result<void> read_optional_fields(const json& object, BoundaryRequest& request) {
  for (const auto& field : kOptionalFields) {
    const auto it = object.find(field.name);
    if (it == object.end()) continue;
    if (!it->is_string()) {
      return core::fail("boundary request " + std::string(field.name) + " must be a string");
    }
    request.*field.member = it->get<std::string>();
  }
  return {};
}

core::Result<std::optional<MatchedPolicy>> read_matched_policy(const json& object) {
  const auto it = object.find(kMatchedPolicyName);
  if (it == object.end()) return std::nullopt;
  const auto bad = [] {
    return core::fail(
        R"(boundary request matchedPolicy must be {"decision": "ask", "rule"?: string})");
  };
  if (!it->is_object()) return bad();
  const auto decision = it->find("decision");
  if (decision == it->end() || *decision != "ask") return bad();
  MatchedPolicy policy;
  const auto rule = it->find("rule");
  if (rule != it->end()) {
    if (!rule->is_string()) return bad();
    policy.rule = rule->get<std::string>();
  }
  if (it->size() != (rule == it->end() ? 1u : 2u)) return bad();
  return policy;
}

core::Result<void> check_utf8(std::string_view name, std::string_view text) {
  if (is_valid_utf8(text)) return {};
  return core::fail("boundary request " + std::string(name) + " must be valid UTF-8");
}

}  // namespace

std::string_view to_string(Surface surface) {
  switch (surface) {
    case Surface::Network:
      return "network";
    case Surface::HostIpc:
      return "host-ipc";
    case Surface::FilesystemRead:
      return "filesystem-read";
    case Surface::FilesystemWrite:
      return "filesystem-write";
    case Surface::Credential:
      return "credential";
  }
  return {};  // Not one of the enumerators: validate() rejects it.
}

std::optional<Surface> surface_from_string(std::string_view text) {
  for (Surface s : {Surface::Network, Surface::HostIpc, Surface::FilesystemRead,
                    Surface::FilesystemWrite, Surface::Credential}) {
    if (to_string(s) == text) return s;
  }
  return std::nullopt;
}

core::Result<void> validate(const BoundaryRequest& request) {
  const auto required = [&](std::span<const RequiredField> fields) -> core::Result<void> {
    for (const auto& field : fields) {
      const std::string& text = request.*field.member;
      if (is_blank(text)) return not_a_non_empty_string(field.name);
      if (auto ok = check_utf8(field.name, text); !ok) return ok;
    }
    return {};
  };
  if (auto ok = required(kRequiredBeforeSurface); !ok) return ok;
  if (to_string(request.surface).empty()) return not_a_non_empty_string(kSurfaceName);
  if (auto ok = required(kRequiredAfterSurface); !ok) return ok;
  for (const auto& field : kOptionalFields) {
    const auto& value = request.*field.member;
    if (!value) continue;
    if (auto ok = check_utf8(field.name, *value); !ok) return ok;
  }
  if (request.matched_policy && request.matched_policy->rule) {
    if (auto ok = check_utf8("matchedPolicy.rule", *request.matched_policy->rule); !ok) return ok;
  }
  return {};
}

json to_json(const BoundaryRequest& request) {
  json object = json::object();
  for (const auto& field : kRequiredBeforeSurface) object[field.name] = request.*field.member;
  object[kSurfaceName] = to_string(request.surface);
  for (const auto& field : kRequiredAfterSurface) object[field.name] = request.*field.member;
  for (const auto& field : kOptionalFields) {
    if (const auto& value = request.*field.member) object[field.name] = *value;
  }
  if (request.matched_policy) {
    json policy = {{"decision", "ask"}};
    if (request.matched_policy->rule) policy["rule"] = *request.matched_policy->rule;
    object[kMatchedPolicyName] = std::move(policy);
  }
  return object;
}

core::Result<BoundaryRequest> from_json(const json& value) {
  if (!value.is_object()) return core::fail("boundary request must be a JSON object");
  for (const auto& item : value.items()) {
    if (!is_known_key(item.key())) {
      return core::fail("boundary request has unknown field \"" + item.key() + "\"");
    }
  }
  BoundaryRequest request;
  if (auto ok = read_required_fields(value, kRequiredBeforeSurface, request); !ok) {
    return std::unexpected(ok.error());
  }
  auto surface = read_surface(value);
  if (!surface) return std::unexpected(surface.error());
  request.surface = *surface;
  if (auto ok = read_required_fields(value, kRequiredAfterSurface, request); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = read_optional_fields(value, request); !ok) return std::unexpected(ok.error());
  auto policy = read_matched_policy(value);
  if (!policy) return std::unexpected(policy.error());
  request.matched_policy = std::move(*policy);
  if (auto ok = validate(request); !ok) return std::unexpected(ok.error());
  return request;
}

core::Result<BoundaryRequest> parse_boundary_request(std::string_view text) {
  auto value = parse_json_text(text);
  if (!value) return core::fail("boundary request is not valid JSON: " + value.error().message);
  return from_json(*value);
}

std::string canonical_json(const BoundaryRequest& request) {
  json object = to_json(request);
  object.erase("id");  // Compatibility C73: the id names the request, it is not its content.
  return dump_compact(object);
}

core::Result<std::string> request_hash(const BoundaryRequest& request) {
  return sha256_hex(canonical_json(request));
}

}  // namespace pisandbox::approval
