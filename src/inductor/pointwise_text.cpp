#include "inductor/pointwise_text.h"

#include "inductor/loop_ir.h"

#include <fmt/format.h>

#include <map>

namespace kiln::inductor {

std::optional<std::string> shared_pointwise_text(const std::string& op,
                                                 const std::vector<std::string>& a, DType in,
                                                 DType out) {
  const bool is_bool = in == DType::Bool;
  const bool integral = !is_floating_point(in);
  static const std::map<std::string, std::string> infix = {
      {"add", "+"}, {"sub", "-"}, {"mul", "*"}, {"div", "/"}, {"eq", "=="},
      {"ne", "!="}, {"lt", "<"},  {"le", "<="}, {"gt", ">"},  {"ge", ">="}};
  if (auto it = infix.find(op); it != infix.end()) {
    // bool + bool is `or`, bool * bool is `and`, as PyTorch's.
    if (is_bool && (op == "add" || op == "mul")) {
      return fmt::format("({} {} {})", a[0], op == "add" ? "||" : "&&", a[1]);
    }
    return fmt::format("({} {} {})", a[0], it->second, a[1]);
  }
  if (op == "neg") return fmt::format("(-{})", a[0]);
  if (op == "where") return fmt::format("({} ? {} : {})", a[0], a[1], a[2]);
  if (op == "bitwise_not") {
    return is_bool ? fmt::format("(!{})", a[0]) : fmt::format("(~{})", a[0]);
  }
  if (op == "bitwise_and" || op == "bitwise_or" || op == "bitwise_xor") {
    const char* sym = op == "bitwise_and" ? "&" : op == "bitwise_or" ? "|" : "^";
    return fmt::format("static_cast<{}>({} {} {})", c_type(out), a[0], sym, a[1]);
  }
  if (integral && (op == "floor" || op == "ceil" || op == "round" || op == "trunc")) return a[0];
  if (integral && op == "abs") return fmt::format("({0} < 0 ? -{0} : {0})", a[0]);
  return std::nullopt;
}

}  // namespace kiln::inductor
