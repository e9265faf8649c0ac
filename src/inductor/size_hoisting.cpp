#include "inductor/size_hoisting.h"

#include <fmt/format.h>

#include <cctype>
#include <map>
#include <string_view>
#include <vector>

namespace kiln::inductor {

namespace {

// Whether `args` (a call's argument text) reads only symbols (s<k>), hoisted values (ks<k>) and
// integer constants: no loop variable, no buffer, no call left inside.
bool reads_only_sizes(std::string_view args) {
  for (size_t i = 0; i < args.size();) {
    const char c = args[i];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t end = i;
      while (end < args.size() &&
             (std::isalnum(static_cast<unsigned char>(args[end])) || args[end] == '_')) {
        ++end;
      }
      const std::string_view word = args.substr(i, end - i);
      const size_t prefix = word.starts_with("ks") ? 2 : word.starts_with("s") ? 1 : 0;
      if (prefix == 0 || word.size() == prefix) return false;
      for (size_t k = prefix; k < word.size(); ++k) {
        if (!std::isdigit(static_cast<unsigned char>(word[k]))) return false;
      }
      i = end;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i < args.size() && std::isdigit(static_cast<unsigned char>(args[i]))) ++i;
      if (i < args.size() && args[i] == 'L') ++i;  // a 64-bit literal
    } else if (std::string_view(" +-*(),").find(c) != std::string_view::npos) {
      ++i;
    } else {
      return false;
    }
  }
  return true;
}

// The end (one past the closing parenthesis) of the call whose '(' is at `open`, or npos.
size_t call_end(const std::string& text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) return i + 1;
  }
  return std::string::npos;
}

}  // namespace

std::string hoist_size_expressions(const std::string& body) {
  const size_t last_symbol = body.rfind("= sym[");
  if (last_symbol == std::string::npos) return body;
  const size_t insert_at = body.find('\n', last_symbol) + 1;
  std::string head = body.substr(0, insert_at), text = body.substr(insert_at);
  std::map<std::string, std::string> names;  // call text -> its name
  std::vector<std::string> declarations;
  // Innermost calls first: a call whose arguments hold another call waits for its next round.
  for (bool replaced = true; replaced;) {
    replaced = false;
    for (size_t at = 0; (at = text.find("kiln_floor", at)) != std::string::npos;) {
      const size_t open = text.find('(', at);
      const std::string_view function(text.data() + at, open - at);
      if (function != "kiln_floordiv" && function != "kiln_floormod") {
        at = open;
        continue;
      }
      const size_t end = call_end(text, open);
      if (end == std::string::npos) break;
      const std::string call = text.substr(at, end - at);
      if (!reads_only_sizes(std::string_view(call).substr(open - at + 1, end - open - 2))) {
        at = open;
        continue;
      }
      auto [it, added] = names.emplace(call, fmt::format("ks{}", names.size()));
      if (added) {
        declarations.push_back(
            fmt::format("  [[maybe_unused]] const int64_t {} = {};\n", it->second, call));
      }
      text.replace(at, call.size(), it->second);
      at += it->second.size();
      replaced = true;
    }
  }
  for (const std::string& d : declarations) head += d;
  return head + text;
}

}  // namespace kiln::inductor
