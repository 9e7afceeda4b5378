// SBPL reader, structural check and evaluator for the tests (seatbelt_sbpl.hpp).
#include "seatbelt_sbpl.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

namespace pisandbox::sandbox::macos::sbpl {

namespace {

using Kind = Node::Kind;

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  core::Result<std::vector<Node>> all() {
    std::vector<Node> forms;
    while (skip_space()) {
      if (text_[at_] == ')') return core::fail("unbalanced ')' at byte " + std::to_string(at_));
      auto node = datum();
      if (!node) return std::unexpected(node.error());
      forms.push_back(std::move(*node));
    }
    return forms;
  }

 private:
  // Skips blanks and comments; false at the end of the text.
  bool skip_space() {
    while (at_ < text_.size()) {
      if (text_[at_] == ';') {
        while (at_ < text_.size() && text_[at_] != '\n') ++at_;
      } else if (std::isspace(static_cast<unsigned char>(text_[at_]))) {
        ++at_;
      } else {
        return true;
      }
    }
    return false;
  }

  core::Result<Node> datum() {
    const char c = text_[at_];
    if (c == '(') return list();
    if (c == '"') return string();
    const std::size_t start = at_;
    while (at_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[at_])) &&
           text_[at_] != '(' && text_[at_] != ')' && text_[at_] != '"' && text_[at_] != ';')
      ++at_;
    std::string word(text_.substr(start, at_ - start));
    const bool number = std::ranges::all_of(word, [](char d) { return d >= '0' && d <= '9'; });
    return Node{number ? Kind::Number : Kind::Symbol, word};
  }

  core::Result<Node> list() {
    const std::size_t open = at_++;
    Node node{Kind::List, {}};
    while (true) {
      if (!skip_space()) return core::fail("unbalanced '(' at byte " + std::to_string(open));
      if (text_[at_] == ')') {
        ++at_;
        return node;
      }
      auto item = datum();
      if (!item) return item;
      node.items.push_back(std::move(*item));
    }
  }

  core::Result<Node> string() {
    const std::size_t open = at_++;
    std::string out;
    while (at_ < text_.size()) {
      const char c = text_[at_++];
      if (c == '"') return Node{Kind::String, out};
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        return core::fail("a raw control byte in the string at byte " + std::to_string(open));
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) break;
      auto escaped = escape();
      if (!escaped) return std::unexpected(escaped.error());
      out += *escaped;
    }
    return core::fail("unterminated string at byte " + std::to_string(open));
  }

  core::Result<char> escape() {
    const char c = text_[at_++];
    switch (c) {
      case '"':
        return '"';
      case '\\':
        return '\\';
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case 'x': {
        if (at_ + 2 > text_.size() || !std::isxdigit(static_cast<unsigned char>(text_[at_])) ||
            !std::isxdigit(static_cast<unsigned char>(text_[at_ + 1])))
          return core::fail("a \\x escape without two hex digits at byte " + std::to_string(at_));
        const int value = std::stoi(std::string(text_.substr(at_, 2)), nullptr, 16);
        at_ += 2;
        return static_cast<char>(value);
      }
      default:
        return core::fail(std::string("unknown escape \\") + c);
    }
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

const std::set<std::string>& operations() {
  static const std::set<std::string> names = {
      "file-read*",      "file-read-data",       "file-read-metadata", "file-write*",
      "file-write-data", "file-write-create",    "file-write-unlink",  "file-ioctl",
      "process-exec",    "process-fork",         "process-info*",      "signal",
      "mach-lookup",     "mach-priv-task-port",  "ipc-posix-shm",      "ipc-posix-sem",
      "sysctl-read",     "user-preference-read", "pseudo-tty",         "network-outbound",
      "network-inbound", "network-bind"};
  return names;
}

bool is_symbol(const Node& node, std::string_view text) {
  return node.kind == Kind::Symbol && node.text == text;
}

bool is_string(const Node& node) {
  return node.kind == Kind::String;
}

std::string check_regex(const std::string& pattern) {
  try {
    std::regex compiled(pattern, std::regex::extended);
  } catch (const std::regex_error& e) {
    return "invalid regex " + pattern + ": " + e.what();
  }
  return {};
}

// `(path-literal "/p")` or `(path-regex "^/p/")` inside a unix-socket filter.
std::string check_socket_path(const Node& node) {
  if (node.kind != Kind::List || node.items.size() != 2 || !is_string(node.items[1]))
    return "a unix-socket filter needs (path-literal STRING) or (path-regex STRING)";
  if (is_symbol(node.items[0], "path-literal"))
    return node.items[1].text.starts_with('/') ? "" : "a relative socket path";
  if (is_symbol(node.items[0], "path-regex")) return check_regex(node.items[1].text);
  return "unknown socket filter " + node.items[0].text;
}

std::string check_filter(const Node& f) {
  if (f.kind != Kind::List || f.items.empty() || f.items[0].kind != Kind::Symbol)
    return "a filter must be a list starting with a symbol";
  const std::string& head = f.items[0].text;
  if (head == "literal" || head == "subpath") {
    if (f.items.size() != 2 || !is_string(f.items[1])) return head + " takes one string";
    return f.items[1].text.starts_with('/') ? "" : head + " of a relative path";
  }
  if (head == "regex") {
    if (f.items.size() != 2 || !is_string(f.items[1])) return "regex takes one string";
    return check_regex(f.items[1].text);
  }
  if (head == "global-name" || head == "sysctl-name" || head == "sysctl-name-prefix")
    return f.items.size() == 2 && is_string(f.items[1]) ? "" : head + " takes one string";
  if (head == "target")
    return f.items.size() == 2 && is_symbol(f.items[1], "same-sandbox") ? ""
                                                                        : "target same-sandbox";
  if (head == "remote" || head == "local") {
    if (f.items.size() != 3) return head + " takes a kind and an address";
    if (is_symbol(f.items[1], "ip")) {
      static const std::regex address("^(localhost|\\*):([0-9]+|\\*)$");
      return is_string(f.items[2]) && std::regex_match(f.items[2].text, address)
                 ? ""
                 : "an ip address must be localhost:PORT or *:PORT";
    }
    if (is_symbol(f.items[1], "unix-socket")) return check_socket_path(f.items[2]);
    return "unknown address kind " + f.items[1].text;
  }
  return "unknown filter " + head;
}

std::vector<std::string> check_rule(const Node& rule) {
  std::vector<std::string> problems;
  std::size_t i = 1;
  for (; i < rule.items.size() && rule.items[i].kind == Kind::Symbol; ++i)
    if (!operations().contains(rule.items[i].text))
      problems.push_back("unknown operation " + rule.items[i].text);
  if (i == 1) problems.push_back("a rule without an operation");
  for (; i < rule.items.size(); ++i)
    if (auto problem = check_filter(rule.items[i]); !problem.empty()) problems.push_back(problem);
  return problems;
}

}  // namespace

core::Result<std::vector<Node>> read(std::string_view text) {
  return Reader(text).all();
}

std::vector<std::string> check(const std::vector<Node>& forms) {
  std::vector<std::string> problems;
  if (forms.size() < 2) return {"fewer than two forms"};
  const auto& version = forms[0];
  if (version.kind != Kind::List || version.items.size() != 2 ||
      !is_symbol(version.items[0], "version") || version.items[1].text != "1")
    problems.push_back("the first form is not (version 1)");
  const auto& deny = forms[1];
  if (deny.kind != Kind::List || deny.items.size() != 2 || !is_symbol(deny.items[0], "deny") ||
      !is_symbol(deny.items[1], "default"))
    problems.push_back("the second form is not (deny default)");
  for (std::size_t i = 2; i < forms.size(); ++i) {
    const auto& rule = forms[i];
    if (rule.kind != Kind::List || rule.items.empty() ||
        !(is_symbol(rule.items[0], "allow") || is_symbol(rule.items[0], "deny"))) {
      problems.push_back("form " + std::to_string(i) + " is not an allow or deny rule");
      continue;
    }
    for (auto& problem : check_rule(rule))
      problems.push_back("form " + std::to_string(i) + ": " + problem);
  }
  return problems;
}

namespace {

bool covers(const std::string& rule_op, std::string_view op) {
  if (rule_op.ends_with('*'))
    return op.starts_with(std::string_view(rule_op).substr(0, rule_op.size() - 1));
  return rule_op == op;
}

bool regex_matches(const std::string& pattern, std::string_view text) {
  return std::regex_search(std::string(text), std::regex(pattern, std::regex::extended));
}

bool path_matches(const Node& head, const Node& value, std::string_view path) {
  const std::string& v = value.text;
  if (is_symbol(head, "literal") || is_symbol(head, "path-literal")) return path == v;
  if (is_symbol(head, "subpath"))
    return path == v || (path.starts_with(v) && path.size() > v.size() && path[v.size()] == '/');
  if (is_symbol(head, "regex") || is_symbol(head, "path-regex")) return regex_matches(v, path);
  return false;
}

bool filter_matches(const Node& f, std::string_view target, Target kind) {
  const auto& items = f.items;
  if (items.size() == 2 && kind == Target::File) return path_matches(items[0], items[1], target);
  if (items.size() != 3) return false;
  const bool remote = is_symbol(items[0], "remote");
  if (is_symbol(items[1], "ip")) return remote && kind == Target::Ip && items[2].text == target;
  if (!is_symbol(items[1], "unix-socket") || items[2].items.size() != 2) return false;
  if (kind != (remote ? Target::RemoteSocket : Target::LocalSocket)) return false;
  return path_matches(items[2].items[0], items[2].items[1], target);
}

/// Whether `rule` covers the query: one of its operations and one of its filters (or none).
bool rule_applies(const Node& rule, std::string_view op, std::string_view target, Target kind) {
  bool operation = false;
  std::size_t i = 1;
  for (; i < rule.items.size() && rule.items[i].kind == Kind::Symbol; ++i)
    operation = operation || covers(rule.items[i].text, op);
  if (!operation) return false;
  if (i == rule.items.size()) return true;
  for (; i < rule.items.size(); ++i)
    if (filter_matches(rule.items[i], target, kind)) return true;
  return false;
}

}  // namespace

bool allows(const std::vector<Node>& forms, std::string_view operation, std::string_view target,
            Target kind) {
  bool allowed = false;
  for (std::size_t i = 2; i < forms.size(); ++i)
    if (rule_applies(forms[i], operation, target, kind))
      allowed = is_symbol(forms[i].items[0], "allow");
  return allowed;
}

}  // namespace pisandbox::sandbox::macos::sbpl
