#include "inductor/sincos_pairing.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <vector>

namespace kiln::inductor {

namespace {

struct TrigLine {
  std::string indent, type, name, function, argument;
};

std::optional<TrigLine> parse_trig(const std::string& line) {
  static const std::regex pattern(R"(^(\s*)const (VecF|VecD) (v\d+) = vec_(sin|cos)\((v\d+)\);$)");
  std::smatch m;
  if (!std::regex_match(line, m, pattern)) return std::nullopt;
  return TrigLine{m[1], m[2], m[3], m[4], m[5]};
}

}  // namespace

std::string pair_sin_cos(const std::string& lines) {
  if (lines.find("vec_sin(") == std::string::npos || lines.find("vec_cos(") == std::string::npos) {
    return lines;
  }
  std::vector<std::string> split;
  std::istringstream in(lines);
  for (std::string line; std::getline(in, line);) split.push_back(line);
  // The line of each sin and cos, by argument.
  std::map<std::string, size_t> sin_at, cos_at;
  for (size_t i = 0; i < split.size(); ++i) {
    const auto t = parse_trig(split[i]);
    if (!t) continue;
    auto& at = t->function == "sin" ? sin_at : cos_at;
    at.emplace(t->argument, i);  // the first one (equal right-hand sides are written once)
  }
  std::vector<bool> dropped(split.size(), false);
  for (const auto& [argument, s] : sin_at) {
    const auto c = cos_at.find(argument);
    if (c == cos_at.end()) continue;
    const TrigLine sin_line = *parse_trig(split[s]), cos_line = *parse_trig(split[c->second]);
    const size_t first = std::min(s, c->second), second = std::max(s, c->second);
    split[first] = fmt::format("{0}{1} {2}, {3};\n{0}vec_sincos({4}, {2}, {3});", sin_line.indent,
                               sin_line.type, sin_line.name, cos_line.name, argument);
    dropped[second] = true;
  }
  std::string out;
  for (size_t i = 0; i < split.size(); ++i) {
    if (!dropped[i]) out += split[i] + "\n";
  }
  return out;
}

}  // namespace kiln::inductor
