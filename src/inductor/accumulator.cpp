#include "inductor/accumulator.h"

#include <kiln/core/error.h>

#include <fmt/format.h>

namespace kiln::inductor {

Accumulator::Accumulator(const std::string& reduction, DType out, DType body)
    : reduction_(reduction) {
  KILN_CHECK(reduction == "sum" || reduction == "prod" || reduction == "max" || reduction == "min",
             "inductor: unknown reduction {}", reduction);
  floating_ = is_floating_point(out);
  boolean_ = out == DType::Bool;
  if (reduction == "sum" || reduction == "prod") {
    type_ = floating_ ? "double" : "int64_t";
  } else {
    type_ = cpp_value_type(out);
  }
  float_partial_ = reduction == "sum" && widened(body) == DType::Float32;
}

std::string Accumulator::declare(const std::string& indent) const {
  std::string init;
  if (reduction_ == "sum") {
    init = "0";
  } else if (reduction_ == "prod") {
    init = "1";
  } else if (boolean_) {
    init = reduction_ == "max" ? "false" : "true";
  } else if (floating_) {
    init =
        fmt::format("{}std::numeric_limits<{}>::infinity()", reduction_ == "max" ? "-" : "", type_);
  } else {
    init =
        fmt::format("std::numeric_limits<{}>::{}()", type_, reduction_ == "max" ? "lowest" : "max");
  }
  std::string s = fmt::format("{}{} acc = {}({});\n", indent, type_, type_, init);
  if (floating_ && (reduction_ == "max" || reduction_ == "min")) {
    s += indent + "int acc_nan = 0;\n";
  }
  return s;
}

std::string Accumulator::clauses() const {
  if (reduction_ == "sum") return " reduction(+:acc)";
  if (reduction_ == "prod") return " reduction(*:acc)";
  if (boolean_) return reduction_ == "max" ? " reduction(||:acc)" : " reduction(&&:acc)";
  std::string s = fmt::format(" reduction({}:acc)", reduction_);
  if (floating_) s += " reduction(|:acc_nan)";
  return s;
}

std::string Accumulator::combine(const std::string& value) const {
  const std::string v = fmt::format("static_cast<{}>({})", type_, value);
  if (reduction_ == "sum") {
    return float_partial_ ? fmt::format("part += {};", value) : fmt::format("acc += {};", v);
  }
  if (reduction_ == "prod") return fmt::format("acc *= {};", v);
  if (boolean_) return fmt::format("acc = acc {} {};", reduction_ == "max" ? "||" : "&&", value);
  const char* cmp = reduction_ == "max" ? ">" : "<";
  std::string s = fmt::format("acc = {0} {1} acc ? {0} : acc;", v, cmp);
  if (floating_) s += fmt::format(" acc_nan |= ({0} != {0});", value);
  return s;
}

std::string Accumulator::open_block(const std::string& indent) const {
  return float_partial_ ? indent + "float part = 0.0f;\n" : "";
}

std::string Accumulator::close_block(const std::string& indent) const {
  return float_partial_ ? indent + "acc += static_cast<double>(part);\n" : "";
}

std::string Accumulator::finish(const std::string& indent) const {
  if (floating_ && (reduction_ == "max" || reduction_ == "min")) {
    return fmt::format("{}if (acc_nan) acc = std::numeric_limits<{}>::quiet_NaN();\n", indent,
                       type_);
  }
  return "";
}

}  // namespace kiln::inductor
