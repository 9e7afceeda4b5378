#include "shell/shell_command.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

namespace pisandbox::shell {
namespace {

// Returns the position just past the `)` that closes a `(` opened before `pos`, skipping
// quoted text and nested parentheses; text.size() if it never closes.
std::size_t skip_to_closing_paren(std::string_view text, std::size_t pos) {
  int depth = 1;
  while (pos < text.size()) {
    const char c = text[pos++];
    if (c == '\\') {
      ++pos;
    } else if (c == '\'') {
      pos = std::min(text.find('\'', pos), text.size()) + 1;
    } else if (c == '"') {
      while (pos < text.size() && text[pos] != '"') pos += text[pos] == '\\' ? 2 : 1;
      ++pos;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')' && --depth == 0) {
      return pos;
    }
  }
  return text.size();
}

// Returns the position just past the backquote that closes one opened before `pos`.
std::size_t skip_to_closing_backquote(std::string_view text, std::size_t pos) {
  while (pos < text.size()) {
    const char c = text[pos++];
    if (c == '\\') {
      ++pos;
    } else if (c == '`') {
      return pos;
    }
  }
  return text.size();
}

// The inner text of a construct spanning [open_end, close_end), where the closing
// delimiter is one character (absent when the construct runs to the end).
std::string_view inner_text(std::string_view text, std::size_t open_end, std::size_t close_end,
                            char closer) {
  close_end = std::min(close_end, text.size());
  std::size_t end = close_end;
  if (end > open_end && text[end - 1] == closer) --end;
  return text.substr(open_end, end - open_end);
}

// Appends every `$(…)` and `…` found in `text` (a here-document body) to `out`.
void collect_substitutions(std::string_view text, std::vector<std::string>& out) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const char c = text[pos];
    if (c == '\\') {
      pos += 2;
    } else if (c == '$' && pos + 1 < text.size() && text[pos + 1] == '(') {
      const std::size_t end = skip_to_closing_paren(text, pos + 2);
      out.emplace_back(inner_text(text, pos + 2, end, ')'));
      pos = end;
    } else if (c == '`') {
      const std::size_t end = skip_to_closing_backquote(text, pos + 1);
      out.emplace_back(inner_text(text, pos + 1, end, '`'));
      pos = end;
    } else {
      ++pos;
    }
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class ShellParser {
 public:
  explicit ShellParser(std::string_view text) : text_(text) {}

  ShellScript run() {
    while (pos_ < text_.size()) step();
    end_pipeline();
    attach_heredoc_bodies();
    return std::move(script_);
  }

 private:
  struct PendingHereDoc {
    std::string delimiter;
    bool strip_tabs;
    bool expands;  // unquoted delimiter: the body's substitutions run
  };

  [[nodiscard]] char peek(std::size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }

  void step() {
    const char c = peek();
    if (c == ' ' || c == '\t' || c == '\r') {
      end_word();
      ++pos_;
    } else if (c == '\n') {
      end_pipeline();
      ++pos_;
      read_heredoc_bodies();
    } else if (c == ';') {
      end_pipeline();
      ++pos_;
    } else if (c == '&' || c == '|') {
      control_operator(c);
    } else if (c == '(' || c == ')') {
      end_command();
      ++pos_;
    } else if (c == '<' || c == '>') {
      redirection(c);
    } else if (c == '#' && !in_word_) {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      word_character(c);
    }
  }

  void control_operator(char c) {
    const char next = peek(1);
    if (c == '&' && next == '>') {
      end_word();
      const bool append = peek(2) == '>';
      pos_ += append ? 3 : 2;
      pending_redirect_ = append ? RedirectKind::Append : RedirectKind::Output;
    } else if (c == '|' && next != '|') {
      end_command();  // a pipe: the next command joins this pipeline
      pos_ += next == '&' ? 2 : 1;
    } else {
      end_pipeline();  // `&&`, `||` or `&`
      pos_ += next == c ? 2 : 1;
    }
  }

  void redirection(char c) {
    if (peek(1) == '(') {  // process substitution: a word naming a pipe
      substitution(pos_ + 2, ')');
      return;
    }
    // Digits right before the operator name a file descriptor (`2>file`), not a word.
    const bool fd_number = in_word_ && !word_quoted_ && !word_.empty() &&
                           std::all_of(word_.begin(), word_.end(),
                                       [](unsigned char d) { return std::isdigit(d) != 0; });
    if (fd_number) discard_word();
    end_word();
    pending_redirect_ = c == '<' ? input_operator() : output_operator();
  }

  RedirectKind input_operator() {
    if (text_.substr(pos_).starts_with("<<<")) return advance(3, RedirectKind::HereString);
    if (text_.substr(pos_).starts_with("<<-")) {
      heredoc_strip_tabs_ = true;
      return advance(3, RedirectKind::HereDoc);
    }
    if (text_.substr(pos_).starts_with("<<")) {
      heredoc_strip_tabs_ = false;
      return advance(2, RedirectKind::HereDoc);
    }
    if (peek(1) == '&') return advance(2, RedirectKind::Duplicate);
    if (peek(1) == '>') return advance(2, RedirectKind::Output);
    return advance(1, RedirectKind::Input);
  }

  RedirectKind output_operator() {
    if (peek(1) == '>') return advance(2, RedirectKind::Append);
    if (peek(1) == '|') return advance(2, RedirectKind::Output);
    if (peek(1) == '&') {
      // `>&2` duplicates a descriptor; `>&file` (bash) writes to a file.
      const char after = peek(2);
      const bool descriptor = std::isdigit(static_cast<unsigned char>(after)) || after == '-';
      return advance(2, descriptor ? RedirectKind::Duplicate : RedirectKind::Output);
    }
    return advance(1, RedirectKind::Output);
  }

  RedirectKind advance(std::size_t count, RedirectKind kind) {
    pos_ += count;
    return kind;
  }

  void word_character(char c) {
    if (c == '\'') {
      single_quoted();
    } else if (c == '"') {
      double_quoted();
    } else if (c == '\\') {
      backslash();
    } else if (c == '$' && peek(1) == '(') {
      substitution(pos_ + 2, ')');
    } else if (c == '$' && peek(1) == '\'') {
      ansi_c_quoted();
    } else if (c == '$' && peek(1) == '"') {
      ++pos_;  // $"…" is a translated string: read it as "…"
      double_quoted();
    } else if (c == '`') {
      substitution(pos_ + 1, '`');
    } else {
      append(c);
      ++pos_;
    }
  }

  void single_quoted() {
    const std::size_t start = pos_ + 1;
    const std::size_t end = std::min(text_.find('\'', start), text_.size());
    start_word(Quoting::Quoted);
    word_.append(text_.substr(start, end - start));
    pos_ = std::min(end + 1, text_.size());
  }

  void double_quoted() {
    start_word(Quoting::Quoted);
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      const char c = text_[pos_];
      if (c == '\\' && pos_ + 1 < text_.size()) {
        const char next = text_[pos_ + 1];
        if (next != '\n') {
          if (next != '$' && next != '`' && next != '"' && next != '\\') word_.push_back(c);
          word_.push_back(next);
        }
        pos_ += 2;
      } else if (c == '$' && peek(1) == '(') {
        substitution(pos_ + 2, ')');
      } else if (c == '`') {
        substitution(pos_ + 1, '`');
      } else {
        word_.push_back(c);
        ++pos_;
      }
    }
    pos_ = std::min(pos_ + 1, text_.size());
  }

  // $'…': decodes the common escapes so `$'\x2f'` reads as `/`.
  void ansi_c_quoted() {
    start_word(Quoting::Quoted);
    pos_ += 2;
    while (pos_ < text_.size() && text_[pos_] != '\'') {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) {
        ++pos_;
        word_.push_back(ansi_c_escape());
      } else {
        word_.push_back(text_[pos_++]);
      }
    }
    pos_ = std::min(pos_ + 1, text_.size());
  }

  // Reads the escape after a backslash in $'…' and returns the byte it stands for.
  char ansi_c_escape() {
    const char c = text_[pos_++];
    switch (c) {
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case 'x':
        return numeric_escape(16, 2);
      case '0':
      case '1':
      case '2':
      case '3':
        --pos_;
        return numeric_escape(8, 3);
      default:
        return c;
    }
  }

  char numeric_escape(int base, int max_digits) {
    int value = 0;
    for (int i = 0; i < max_digits && pos_ < text_.size(); ++i) {
      const int digit = hex_value(text_[pos_]);
      if (digit < 0 || digit >= base) break;
      value = value * base + digit;
      ++pos_;
    }
    return static_cast<char>(value);
  }

  void backslash() {
    if (peek(1) == '\n') {  // line continuation
      pos_ += 2;
      return;
    }
    start_word(Quoting::Quoted);
    if (pos_ + 1 < text_.size()) word_.push_back(text_[pos_ + 1]);
    pos_ = std::min(pos_ + 2, text_.size());
  }

  // A substitution whose body starts at `body_start` and ends before `closer`. The whole
  // construct stays in the current word; the body is also kept for the rules.
  void substitution(std::size_t body_start, char closer) {
    const std::size_t end = closer == ')' ? skip_to_closing_paren(text_, body_start)
                                          : skip_to_closing_backquote(text_, body_start);
    start_word(Quoting::Unquoted);
    word_.append(text_.substr(pos_, std::min(end, text_.size()) - pos_));
    script_.substitutions.emplace_back(inner_text(text_, body_start, end, closer));
    pos_ = end;
  }

  enum class Quoting { Unquoted, Quoted };

  void start_word(Quoting quoting) {
    in_word_ = true;
    if (quoting == Quoting::Quoted) word_quoted_ = true;
  }

  void append(char c) {
    start_word(Quoting::Unquoted);
    word_.push_back(c);
  }

  void discard_word() {
    word_.clear();
    in_word_ = false;
    word_quoted_ = false;
  }

  void end_word() {
    if (!in_word_) return;
    if (pending_redirect_) {
      if (*pending_redirect_ == RedirectKind::HereDoc) {
        heredocs_.push_back({word_, heredoc_strip_tabs_, !word_quoted_});
      }
      command_.redirects.push_back({*pending_redirect_, std::move(word_)});
      pending_redirect_.reset();
    } else {
      command_.words.push_back(std::move(word_));
    }
    discard_word();
  }

  void end_command() {
    end_word();
    pending_redirect_.reset();
    if (!command_.words.empty() || !command_.redirects.empty()) {
      pipeline_.commands.push_back(std::move(command_));
    }
    command_ = {};
  }

  void end_pipeline() {
    end_command();
    if (!pipeline_.commands.empty()) script_.pipelines.push_back(std::move(pipeline_));
    pipeline_ = {};
  }

  // After a newline: the bodies of the here-documents opened on the line just ended.
  void read_heredoc_bodies() {
    for (const auto& heredoc : heredocs_) {
      std::string body;
      while (pos_ < text_.size()) {
        const std::size_t newline = std::min(text_.find('\n', pos_), text_.size());
        std::string_view line = text_.substr(pos_, newline - pos_);
        pos_ = std::min(newline + 1, text_.size());
        if (heredoc.strip_tabs)
          line.remove_prefix(std::min(line.find_first_not_of('\t'), line.size()));
        if (line == heredoc.delimiter) break;
        body.append(line).push_back('\n');
      }
      if (heredoc.expands) collect_substitutions(body, script_.substitutions);
      heredoc_bodies_.push_back(std::move(body));
    }
    heredocs_.clear();
  }

  // Replaces each here-document's delimiter with its body, in order of appearance.
  void attach_heredoc_bodies() {
    std::size_t next = 0;
    for (auto& pipeline : script_.pipelines) {
      for (auto& command : pipeline.commands) {
        for (auto& redirect : command.redirects) {
          if (redirect.kind != RedirectKind::HereDoc) continue;
          redirect.target = next < heredoc_bodies_.size() ? std::move(heredoc_bodies_[next]) : "";
          ++next;
        }
      }
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  ShellScript script_;
  Pipeline pipeline_;
  SimpleCommand command_;
  std::string word_;
  bool in_word_ = false;
  bool word_quoted_ = false;
  std::optional<RedirectKind> pending_redirect_;
  bool heredoc_strip_tabs_ = false;
  std::vector<PendingHereDoc> heredocs_;
  std::vector<std::string> heredoc_bodies_;
};

}  // namespace

ShellScript parse_shell(std::string_view text) {
  return ShellParser(text).run();
}

namespace {

void append_command_words(std::string_view text, int depth, std::vector<std::string>& out) {
  const ShellScript script = parse_shell(text);
  const auto nested = [&](std::string_view inner) {
    if (depth < 2) append_command_words(inner, depth + 1, out);
  };
  for (const auto& pipeline : script.pipelines)
    for (const auto& command : pipeline.commands) {
      for (const auto& word : command.words) out.push_back(word);
      out.emplace_back(";");
      // A substitution's text is taken apart below, with the script's.
      for (const auto& word : command.words)
        if (word.find_first_of(" \t\n;&|") != std::string::npos &&
            word.find_first_of("$`") == std::string::npos)
          nested(word);
    }
  for (const auto& substitution : script.substitutions) nested(substitution);
}

}  // namespace

std::vector<std::string> command_words(std::string_view text) {
  std::vector<std::string> out;
  append_command_words(text, 0, out);
  return out;
}

}  // namespace pisandbox::shell
