#include "rpc/protocol.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "core/deadline.hpp"

namespace pisandbox::rpc {

namespace {

using nlohmann::json;
using Event = nlohmann::ordered_json;

std::string dump(const Event& value) {
  return value.dump(-1, ' ', false, Event::error_handler_t::replace) + "\n";
}

std::unexpected<RequestError> error(std::string message,
                                    std::optional<std::string> id = std::nullopt) {
  return std::unexpected(RequestError{std::move(message), std::move(id)});
}

/// A required non-empty string field, or nullopt.
std::optional<std::string> required_string(const json& object, const char* field) {
  const auto it = object.find(field);
  if (it == object.end() || !it->is_string() || it->get_ref<const std::string&>().empty())
    return std::nullopt;
  return it->get<std::string>();
}

/// Whether `text` names an environment variable exactly: ASCII letters, digits and `_`, not
/// starting with a digit (no `*`: env_keep keeps names, not patterns).
bool is_variable_name(std::string_view text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front()))) return false;
  return std::ranges::all_of(text,
                             [](unsigned char c) { return std::isalnum(c) != 0 || c == '_'; });
}

std::expected<Request, RequestError> parse_exec(const json& object, const std::string& id) {
  Exec exec;
  exec.id = id;
  const std::string where = "exec \"" + id + "\": ";
  const bool has_command = object.contains("command");
  const bool has_argv = object.contains("argv");
  if (has_command == has_argv) return error(where + "needs \"command\" or \"argv\", not both", id);
  if (has_command) {
    if (!object["command"].is_string()) return error(where + "\"command\" must be a string", id);
    exec.command = object["command"].get<std::string>();
  } else {
    const json& argv = object["argv"];
    if (!argv.is_array() || argv.empty())
      return error(where + "\"argv\" must be a non-empty array of strings", id);
    for (const json& word : argv) {
      if (!word.is_string())
        return error(where + "\"argv\" must be a non-empty array of strings", id);
      exec.argv.push_back(word.get<std::string>());
    }
  }
  const auto cwd = object.find("cwd");
  if (cwd == object.end() || !cwd->is_string() ||
      !cwd->get_ref<const std::string&>().starts_with("/"))
    return error(where + "\"cwd\" must be an absolute path", id);
  exec.cwd = cwd->get<std::string>();
  if (const auto env = object.find("env"); env != object.end()) {
    if (!env->is_object()) return error(where + "\"env\" must be an object of strings", id);
    std::map<std::string, std::string> variables;
    for (const auto& [name, value] : env->items()) {
      if (!value.is_string() || name.empty() || name.find('=') != std::string::npos ||
          name.find('\0') != std::string::npos ||
          value.get_ref<const std::string&>().find('\0') != std::string::npos)
        return error(where + "\"env\" must be an object of strings", id);
      variables[name] = value.get<std::string>();
    }
    exec.env = std::move(variables);
  }
  if (const auto keep = object.find("env_keep"); keep != object.end()) {
    const std::string message = where + "\"env_keep\" must be an array of variable names";
    if (!keep->is_array()) return error(message, id);
    for (const json& name : *keep) {
      if (!name.is_string() || !is_variable_name(name.get_ref<const std::string&>()))
        return error(message, id);
      if (std::ranges::find(exec.env_keep, name.get<std::string>()) == exec.env_keep.end())
        exec.env_keep.push_back(name.get<std::string>());
    }
  }
  if (const auto timeout = object.find("timeout_s"); timeout != object.end()) {
    if (!timeout->is_number() || !(timeout->get<double>() > 0) ||
        timeout->get<double>() > core::kMaxTimeoutSeconds)
      return error(where + "\"timeout_s\" must be a positive number of seconds, at most " +
                       core::kMaxTimeoutText,
                   id);
    exec.timeout_s = timeout->get<double>();
  }
  for (const auto& [field, target] :
       {std::pair{"scope_key", &exec.scope_key}, std::pair{"agent_name", &exec.agent_name},
        std::pair{"approval_command", &exec.approval_command}}) {
    const auto it = object.find(field);
    if (it == object.end()) continue;
    if (!it->is_string()) return error(where + "\"" + field + "\" must be a string", id);
    *target = it->get<std::string>();
  }
  if (const auto in = object.find("stdin"); in != object.end()) {
    if (*in == "pipe")
      exec.stdin_pipe = true;
    else if (*in != "closed")
      return error(where + "\"stdin\" must be \"closed\" or \"pipe\"", id);
  }
  if (const auto err = object.find("stderr"); err != object.end()) {
    if (*err == "stdout")
      exec.stderr_to_stdout = true;
    else if (*err != "separate")
      return error(where + "\"stderr\" must be \"separate\" or \"stdout\"", id);
  }
  return exec;
}

constexpr std::string_view kSources[] = {"human", "reviewer", "unavailable", "hard-deny",
                                         "invalid-grant"};

std::expected<Request, RequestError> parse_approval_response(const json& object,
                                                             const std::string& id) {
  const std::string where = "approval_response \"" + id + "\": ";
  const auto request_id = required_string(object, "request_id");
  if (!request_id) return error("approval_response needs a string \"request_id\"", id);
  ApprovalResponse response{id, *request_id, Choice::Deny, std::nullopt, std::nullopt};
  const auto choice = object.find("choice");
  bool known = false;
  for (Choice c : {Choice::Deny, Choice::AllowOnce, Choice::AllowCommand, Choice::AllowSession}) {
    if (choice != object.end() && *choice == to_string(c)) {
      response.choice = c;
      known = true;
    }
  }
  if (!known)
    return error(where +
                     "\"choice\" must be \"deny\", \"allow-once\", \"allow-command\" or "
                     "\"allow-session\"",
                 id);
  if (const auto source = object.find("source"); source != object.end()) {
    const bool valid =
        source->is_string() &&
        std::ranges::find(kSources, source->get_ref<const std::string&>()) != std::end(kSources);
    if (!valid)
      return error(where +
                       "\"source\" must be one of \"human\", \"reviewer\", \"unavailable\", "
                       "\"hard-deny\", \"invalid-grant\"",
                   id);
    response.source = source->get<std::string>();
    if (response.choice != Choice::Deny && *response.source != "human" &&
        *response.source != "reviewer")
      return error(where + "\"source\" must be \"human\" or \"reviewer\" for an allow", id);
  }
  if (const auto reason = object.find("reason"); reason != object.end()) {
    if (!reason->is_string() || reason->get_ref<const std::string&>().size() > kMaxReasonBytes)
      return error(where + "\"reason\" must be a string of at most " +
                       std::to_string(kMaxReasonBytes) + " bytes",
                   id);
    response.reason = reason->get<std::string>();
  }
  return response;
}

}  // namespace

std::string_view to_string(Choice choice) {
  switch (choice) {
    case Choice::Deny:
      return "deny";
    case Choice::AllowOnce:
      return "allow-once";
    case Choice::AllowCommand:
      return "allow-command";
    case Choice::AllowSession:
      return "allow-session";
  }
  return "deny";
}

std::expected<Request, RequestError> parse_request(std::string_view line) {
  if (line.ends_with('\r')) line.remove_suffix(1);
  json object = json::parse(line, nullptr, false);
  if (object.is_discarded()) {
    // Parse again with exceptions for the parser's message.
    try {
      object = json::parse(line);
    } catch (const json::exception& e) {  // parse_error, and out_of_range for 1E999
      return error(std::string("line is not valid JSON: ") + e.what());
    }
    return error("line is not valid JSON");
  }
  if (!object.is_object()) return error("request must be a JSON object");
  const auto type_it = object.find("type");
  if (type_it == object.end() || !type_it->is_string())
    return error("request has no string \"type\"");
  const std::string type = type_it->get<std::string>();
  if (type == "hello") {
    const auto version = object.find("version");
    if (version == object.end() || !version->is_number_integer())
      return error("hello needs an integer \"version\"");
    return Hello{version->get<long long>()};
  }
  if (type == "shutdown") return Shutdown{};
  if (type == "recent_denials") return RecentDenials{};
  if (type == "override") {
    const auto hash = required_string(object, "request_hash");
    if (!hash) return error("override needs a string \"request_hash\"");
    const auto kind_it = object.find("kind");
    const std::string kind =
        kind_it != object.end() && kind_it->is_string() ? kind_it->get<std::string>() : "";
    if (kind != "retry" && kind != "break-glass")
      return error("override: \"kind\" must be \"retry\" or \"break-glass\"");
    Override out{*hash, kind, std::nullopt};
    if (const auto scope = object.find("scope_key"); scope != object.end()) {
      if (!scope->is_string()) return error("override: \"scope_key\" must be a string");
      out.scope_key = scope->get<std::string>();
    }
    return out;
  }
  const bool known = type == "exec" || type == "stdin" || type == "stdin_close" ||
                     type == "abort" || type == "approval_response";
  if (!known) return error("unknown request type \"" + type + "\"");
  const auto id = required_string(object, "id");
  if (!id) return error(type + " needs a string \"id\"");
  if (type == "exec") return parse_exec(object, *id);
  if (type == "stdin_close") return StdinClose{*id};
  if (type == "abort") return Abort{*id};
  if (type == "stdin") {
    const auto data = object.find("data");
    if (data == object.end() || !data->is_string())
      return error("stdin \"" + *id + "\": \"data\" must be a string", id);
    std::string bytes = data->get<std::string>();
    if (object.value("encoding", "") == "base64") {
      auto decoded = base64_decode(bytes);
      if (!decoded) return error("stdin \"" + *id + "\": \"data\" is not valid base64", id);
      bytes = std::move(*decoded);
    }
    return StdinData{*id, std::move(bytes)};
  }
  return parse_approval_response(object, *id);
}

std::string exec_line(const Exec& exec) {
  Event out = {{"type", "exec"}, {"id", exec.id}, {"cwd", exec.cwd}};
  if (exec.command)
    out["command"] = *exec.command;
  else
    out["argv"] = exec.argv;
  if (exec.env) out["env"] = *exec.env;
  if (exec.timeout_s) out["timeout_s"] = *exec.timeout_s;
  if (exec.scope_key) out["scope_key"] = *exec.scope_key;
  if (exec.agent_name) out["agent_name"] = *exec.agent_name;
  if (!exec.env_keep.empty()) out["env_keep"] = exec.env_keep;
  if (exec.approval_command) out["approval_command"] = *exec.approval_command;
  out["stdin"] = exec.stdin_pipe ? "pipe" : "closed";
  if (exec.stderr_to_stdout) out["stderr"] = "stdout";
  return dump(out);
}

std::string hello_event(std::string_view server, std::string_view sandbox) {
  return dump(
      {{"type", "hello"}, {"version", kProtocolVersion}, {"server", server}, {"sandbox", sandbox}});
}

std::string started_event(std::string_view id) {
  return dump({{"type", "started"}, {"id", id}});
}

std::string output_event(std::string_view id, bool stderr_stream, std::string_view bytes) {
  Event out = {{"type", "output"}, {"id", id}, {"stream", stderr_stream ? "stderr" : "stdout"}};
  if (is_utf8(bytes)) {
    out["data"] = bytes;
  } else {
    out["data"] = base64_encode(bytes);
    out["encoding"] = "base64";
  }
  return dump(out);
}

std::string recent_denials_event(const std::vector<DenialEntry>& denials) {
  Event list = Event::array();
  for (const DenialEntry& d : denials) {
    Event entry = {{"request_hash", d.request_hash},
                   {"recovery", d.recovery},
                   {"surface", d.surface},
                   {"target", d.target},
                   {"reason", d.reason}};
    if (!d.command.empty()) entry["command"] = d.command;
    list.push_back(std::move(entry));
  }
  return dump({{"type", "recent_denials"}, {"denials", list}});
}

std::string override_event(std::string_view request_hash, std::string_view kind,
                           long long expires_in_s) {
  return dump({{"type", "override"},
               {"request_hash", request_hash},
               {"kind", kind},
               {"expires_in_s", expires_in_s}});
}

std::string denied_event(std::string_view id, std::string_view surface, std::string_view target,
                         std::string_view reason, std::string_view source,
                         std::string_view recovery) {
  Event out = {{"type", "denied"}, {"id", id},         {"surface", surface},
               {"target", target}, {"reason", reason}, {"source", source}};
  if (!recovery.empty()) out["recovery"] = recovery;
  return dump(out);
}

std::string approval_settled_event(std::string_view id, std::string_view request_id, Choice choice,
                                   std::string_view source, std::string_view reason) {
  Event out = {{"type", "approval_settled"},
               {"id", id},
               {"request_id", request_id},
               {"choice", to_string(choice)},
               {"source", source}};
  if (!reason.empty()) out["reason"] = reason;
  return dump(out);
}

std::string exit_event(std::string_view id, const ExitStatus& status) {
  Event out = {{"type", "exit"}, {"id", id}};
  if (status.exit_code) out["exit_code"] = *status.exit_code;
  if (status.signal) out["signal"] = *status.signal;
  if (!status.error.empty()) out["error"] = status.error;
  if (!status.message.empty()) out["message"] = status.message;
  if (!status.limit.empty()) out["limit"] = status.limit;
  return dump(out);
}

std::string error_event(std::string_view message, const std::optional<std::string>& id) {
  Event out = {{"type", "error"}, {"message", message}};
  if (id) out["id"] = *id;
  return dump(out);
}

bool is_utf8(std::string_view bytes) {
  std::size_t i = 0;
  const std::size_t n = bytes.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t length;
    std::uint32_t code;
    if ((c & 0xe0) == 0xc0) {
      length = 2;
      code = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      length = 3;
      code = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      length = 4;
      code = c & 0x07;
    } else {
      return false;
    }
    if (i + length > n) return false;
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(bytes[i + k]);
      if ((next & 0xc0) != 0x80) return false;
      code = (code << 6) | (next & 0x3f);
    }
    static constexpr std::uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kMin[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return false;
    i += length;
  }
  return true;
}

std::size_t incomplete_utf8_tail(std::string_view bytes) {
  // Look back at most 3 bytes for a lead byte whose sequence runs past the end.
  for (std::size_t back = 1; back <= 3 && back <= bytes.size(); ++back) {
    const auto c = static_cast<unsigned char>(bytes[bytes.size() - back]);
    if ((c & 0xc0) == 0x80) continue;  // continuation byte: keep looking
    std::size_t length = (c & 0xe0) == 0xc0   ? 2
                         : (c & 0xf0) == 0xe0 ? 3
                         : (c & 0xf8) == 0xf0 ? 4
                                              : 1;
    return length > back ? back : 0;
  }
  return 0;
}

bool LineSplitter::feed(std::string_view bytes, std::vector<std::string>& lines) {
  bool ok = true;
  while (!bytes.empty()) {
    const auto lf = bytes.find('\n');
    const std::string_view part = bytes.substr(0, lf);
    if (!overflowing_) {
      if (pending_.size() + part.size() > kMaxLineBytes) {
        overflowing_ = true;
        ok = false;
        pending_.clear();
      } else {
        pending_.append(part);
      }
    }
    if (lf == std::string_view::npos) break;
    if (!overflowing_) {
      if (pending_.ends_with('\r')) pending_.pop_back();
      lines.push_back(std::move(pending_));
    }
    pending_.clear();
    overflowing_ = false;
    bytes.remove_prefix(lf + 1);
  }
  return ok;
}

std::string LineSplitter::take_rest() {
  std::string rest = overflowing_ ? std::string() : std::move(pending_);
  pending_.clear();
  overflowing_ = false;
  if (rest.ends_with('\r')) rest.pop_back();
  return rest;
}

}  // namespace pisandbox::rpc
