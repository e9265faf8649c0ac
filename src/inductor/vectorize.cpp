#include "inductor/vectorize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "inductor/sincos_pairing.h"
#include "inductor/vec_prelude.h"

namespace kiln::inductor {

namespace {

// The prelude's names for vectors of one lane type.
struct LaneTypes {
  std::string vec, mask, width, scalar;
};

LaneTypes lane_types(DType lane) {
  if (lane == DType::Float64) return {"VecD", "MaskD", "kiln_vec_width_double", "double"};
  return {"VecF", "MaskF", "kiln_vec_width_float", "float"};
}

// Whether an expression does not read loop variable `var` (computed once, before the loop).
bool invariant(const ExprNode& e, int64_t var) {
  if ((e.kind == ExprNode::Kind::Load || e.kind == ExprNode::Kind::IndexAsValue) &&
      uses_var(e.index, var)) {
    return false;
  }
  return std::all_of(e.args.begin(), e.args.end(),
                     [var](const Expr& a) { return invariant(*a, var); });
}

// Scalar C++ for an invariant value made of loads, constants, casts and arithmetic (a scalar
// argument of another dtype converted to the lane type); nullopt for anything else.
std::optional<std::string> invariant_scalar(const ExprNode& e, const InnerLoop& loop) {
  if (is_half_float(e.dtype) && e.kind != ExprNode::Kind::Load) return std::nullopt;
  const char* t = c_type_or_null(widened(e.dtype));
  if (t == nullptr) return std::nullopt;
  switch (e.kind) {
    case ExprNode::Kind::Load:
      return fmt::format("b{}[{}]", e.buffer, to_cpp(e.index, loop.names));
    case ExprNode::Kind::Constant:
      if (!std::isfinite(e.number) && !e.is_integer_constant) return std::nullopt;
      return e.is_integer_constant ? fmt::format("{}({}LL)", t, e.integer)
                                   : fmt::format("{}({:.17g})", t, e.number);
    case ExprNode::Kind::Cast: {
      const auto a = invariant_scalar(*e.args[0], loop);
      if (!a) return std::nullopt;
      return fmt::format("static_cast<{}>({})", t, *a);  // e is not 16-bit
    }
    case ExprNode::Kind::Call: {
      // One-argument math on floats, as the scalar code spells it (a batch norm's rsqrt(var +
      // eps) in float64 when eps is a tensor argument: symbolic graphs pass it as one).
      const bool floating = e.dtype == DType::Float32 || e.dtype == DType::Float64;
      if (e.args.size() == 1 && floating && e.args[0]->dtype == e.dtype &&
          (e.op == "rsqrt" || e.op == "sqrt" || is_math_function(e.op))) {
        const auto a = invariant_scalar(*e.args[0], loop);
        if (!a) return std::nullopt;
        if (e.op == "rsqrt") return fmt::format("kiln_rsqrt<{}>({})", t, *a);  // the prelude's
        return fmt::format("static_cast<{}>(std::{}({}))", t, e.op, *a);
      }
      static const std::map<std::string, std::string> infix = {
          {"add", "+"}, {"sub", "-"}, {"mul", "*"}, {"div", "/"}};
      auto it = infix.find(e.op);
      if (it == infix.end() || e.args.size() != 2 || e.dtype == DType::Bool) return std::nullopt;
      const auto a = invariant_scalar(*e.args[0], loop), b = invariant_scalar(*e.args[1], loop);
      if (!a || !b) return std::nullopt;
      return fmt::format("static_cast<{}>({} {} {})", t, *a, it->second, *b);
    }
    case ExprNode::Kind::IndexAsValue:
      // A size of the call (a symbolic element count), not a position in the loop.
      if (uses_var(e.index, loop.var)) break;
      return fmt::format("static_cast<{}>({})", t, to_cpp(e.index, loop.names));
  }
  return std::nullopt;
}

// The floating-point type all vectors of the body share: Float32 or Float64 as the body's values
// (and `also`) are; Float32 when there are none (a body of bools only); nullopt when both occur.
// An invariant value converted to the lane type is converted once, whatever its own type.
std::optional<DType> lane_dtype(const Expr& body, std::optional<DType> also, int64_t var) {
  std::set<DType> floats;
  if (also && is_floating_point(*also)) floats.insert(widened(*also));
  std::vector<const ExprNode*> stack = {body.get()};
  while (!stack.empty()) {
    const ExprNode* e = stack.back();
    stack.pop_back();
    const DType d = widened(e->dtype);  // 16-bit floats live in float lanes
    if (d == DType::Float32 || d == DType::Float64) floats.insert(d);
    for (const Expr& a : e->args) {
      // A constant converted to the lane type is converted once, whatever its own type.
      if (e->kind == ExprNode::Kind::Cast &&
          (a->kind == ExprNode::Kind::Constant || invariant(*a, var))) {
        continue;
      }
      stack.push_back(a.get());
    }
  }
  if (floats.size() > 1) return std::nullopt;
  if (floats.empty()) return DType::Float32;
  const DType d = *floats.begin();
  if (d != DType::Float32 && d != DType::Float64) return std::nullopt;
  return d;
}

// A constant as a scalar C++ literal of its dtype (as the scalar code generator writes it).
std::optional<std::string> scalar_literal(const ExprNode& e) {
  if (is_half_float(e.dtype)) {
    ExprNode wide = e;
    wide.dtype = DType::Float32;
    const auto literal = scalar_literal(wide);
    if (!literal) return std::nullopt;
    return cpp_rounded_to(e.dtype, *literal);
  }
  const bool floating = e.dtype == DType::Float32 || e.dtype == DType::Float64;
  const char* t = e.dtype == DType::Float32 ? "float" : "double";
  if (e.dtype == DType::Bool) {
    const bool v = e.is_integer_constant ? e.integer != 0 : static_cast<int64_t>(e.number) != 0;
    return v ? "true" : "false";
  }
  if (!floating) {
    // Integer constants only occur here under a cast to the lane type.
    const int64_t v = e.is_integer_constant ? e.integer : static_cast<int64_t>(e.number);
    if (v == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807LL - 1)";
    return fmt::format("{}LL", v);
  }
  if (e.is_integer_constant) return fmt::format("{}({}LL)", t, e.integer);
  if (std::isnan(e.number)) return fmt::format("std::numeric_limits<{}>::quiet_NaN()", t);
  if (std::isinf(e.number)) {
    return fmt::format("{}std::numeric_limits<{}>::infinity()", e.number < 0 ? "-" : "", t);
  }
  return fmt::format("{}({:.17g})", t, e.number);
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Writes the vector statements of a body: one per expression node (shared nodes once). Values
// that do not depend on the inner variable (constants, invariant loads and what is computed from
// them) go to `hoisted`, ahead of the loop. Any value without a vector form sets `failed`.
class VectorBodyWriter {
 public:
  VectorBodyWriter(const InnerLoop& loop, DType lane, std::string hoist_indent,
                   std::string body_indent)
      : loop_(loop),
        lane_(lane),
        types_(lane_types(lane)),
        hoist_indent_(std::move(hoist_indent)),
        body_indent_(std::move(body_indent)) {}

  struct Value {
    std::string name;
    bool is_mask = false;
    bool invariant = false;
  };

  // The value of `e`; check failed() afterwards.
  Value emit(const Expr& e) {
    if (auto it = values_.find(e.get()); it != values_.end()) return it->second;
    Value v = make(*e);
    if (failed_) return v;
    if (v.name.empty()) return fail();
    // Equal subexpressions built as separate nodes (two loads of one element) are written once.
    if (auto it = by_text_.find(v.name); it != by_text_.end()) return values_[e.get()] = it->second;
    const std::string rhs = v.name;
    const std::string type = v.is_mask ? types_.mask : types_.vec;
    const std::string name = fmt::format("v{}", count_++);
    std::string& out = v.invariant ? hoisted_ : lines_;
    out += fmt::format("{}const {} {} = {};\n", v.invariant ? hoist_indent_ : body_indent_, type,
                       name, v.name);
    v.name = name;
    values_[e.get()] = v;
    by_text_[rhs] = v;
    return v;
  }

  bool failed() const { return failed_; }
  const std::string& hoisted() const { return hoisted_; }
  // The body's statements, sin and cos of one value paired into one sincos.
  std::string lines() const { return pair_sin_cos(lines_); }
  const LaneTypes& types() const { return types_; }

  // The address of lane 0 of a contiguous access, "" when the index is not contiguous.
  std::string contiguous_address(int buffer, const Index& index) const {
    if (linear_coefficient(index, loop_.var) != 1) return "";
    return fmt::format("&b{}[{}]", buffer, to_cpp(index, loop_.names));
  }

 private:
  Value fail() {
    failed_ = true;
    return {};
  }
  // A value computed ahead of the loop that no expression node stands for; its name.
  std::string hoist(const std::string& type, const std::string& rhs) {
    const std::string name = fmt::format("v{}", count_++);
    hoisted_ += fmt::format("{}const {} {} = {};\n", hoist_indent_, type, name, rhs);
    return name;
  }
  bool is_lane(DType d) const { return widened(d) == lane_; }
  // A lane value of `from` as a `to` (16-bit floats: float lanes rounded to their type).
  std::string rounded(const std::string& value, DType from, DType to) const {
    if (from == to || !is_half_float(to)) return value;
    return fmt::format("vec_round_to<{}>({})", cpp_storage_type(to), value);
  }
  static bool is_bool(DType d) { return d == DType::Bool; }

  Value make(const ExprNode& e) {
    if (!is_lane(e.dtype) && !is_bool(e.dtype)) return fail();
    switch (e.kind) {
      case ExprNode::Kind::Load:
        return load(e);
      case ExprNode::Kind::Constant: {
        const auto literal = scalar_literal(e);
        if (!literal) return fail();
        return {
            fmt::format("{}::broadcast({})", is_bool(e.dtype) ? types_.mask : types_.vec, *literal),
            is_bool(e.dtype), true};
      }
      case ExprNode::Kind::IndexAsValue:
        return fail();
      case ExprNode::Kind::Cast:
        return cast(e);
      case ExprNode::Kind::Call:
        return call(e);
    }
    return fail();
  }

  Value load(const ExprNode& e) {
    const auto coefficient = linear_coefficient(e.index, loop_.var);
    if (!coefficient || (*coefficient != 0 && *coefficient != 1)) return fail();
    const bool mask = is_bool(e.dtype);
    const std::string& type = mask ? types_.mask : types_.vec;
    const std::string at = to_cpp(e.index, loop_.names);
    if (*coefficient == 0)
      return {fmt::format("{}::broadcast(b{}[{}])", type, e.buffer, at), mask, true};
    return {fmt::format("{}::{}(&b{}[{}])", type, mask ? "load_bools" : "load", e.buffer, at), mask,
            false};
  }

  Value cast(const ExprNode& e) {
    const ExprNode& from = *e.args[0];
    // A constant of another type (an integer) converted once, as the scalar code does.
    if (from.kind == ExprNode::Kind::Constant && is_lane(e.dtype)) {
      ExprNode constant = from;
      constant.dtype = e.dtype;
      const auto literal = scalar_literal(constant);
      if (!literal) return fail();
      return {fmt::format("{}::broadcast({})", types_.vec, *literal), false, true};
    }
    // An invariant value of another type (a wrapped scalar argument), converted once.
    if (is_lane(e.dtype) && !is_lane(from.dtype) && invariant(from, loop_.var)) {
      const auto scalar = invariant_scalar(from, loop_);
      if (!scalar) return fail();
      const std::string value = fmt::format("static_cast<{}>({})", types_.scalar, *scalar);
      return {fmt::format("{}::broadcast({})", types_.vec,
                          is_half_float(e.dtype) ? cpp_rounded_to(e.dtype, value) : value),
              false, true};
    }
    if (!is_lane(from.dtype) && !is_bool(from.dtype)) return fail();
    const Value a = emit(e.args[0]);
    if (failed_) return a;
    if (a.is_mask == is_bool(e.dtype)) {
      return {a.is_mask ? a.name : rounded(a.name, from.dtype, e.dtype), a.is_mask, a.invariant};
    }
    if (a.is_mask)  // 0 or 1: exact in every float type
      return {fmt::format("{}::from_mask({})", types_.vec, a.name), false, a.invariant};
    // To bool: nonzero (NaN included) is true.
    return {fmt::format("({} != {}::broadcast(0))", a.name, types_.vec), true, a.invariant};
  }

  Value call(const ExprNode& e) {
    std::vector<Value> a;
    bool invariant = true;
    for (const Expr& arg : e.args) {
      a.push_back(emit(arg));
      if (failed_) return {};
      invariant = invariant && a.back().invariant;
    }
    const std::string& op = e.op;
    const bool out_mask = is_bool(e.dtype);
    // The kinds of the arguments and the result an op needs: all lanes, or all masks.
    auto all_args = [&](bool masks) {
      return std::all_of(a.begin(), a.end(), [&](const Value& v) { return v.is_mask == masks; });
    };
    // 16-bit results: computed in float lanes, rounded to the type.
    auto result = [&](std::string text, bool mask) -> Value {
      if (mask != out_mask) return fail();
      if (!mask) text = rounded(text, widened(e.dtype), e.dtype);
      return {std::move(text), mask, invariant};
    };
    static const std::map<std::string, std::string> arithmetic = {
        {"add", "+"}, {"sub", "-"}, {"mul", "*"}, {"div", "/"}};
    static const std::map<std::string, std::string> comparisons = {
        {"eq", "=="}, {"ne", "!="}, {"lt", "<"}, {"le", "<="}, {"gt", ">"}, {"ge", ">="}};
    static const std::map<std::string, std::string> logical = {{"bitwise_and", "&"},
                                                               {"bitwise_or", "|"},
                                                               {"bitwise_xor", "^"},
                                                               {"add", "|"},
                                                               {"mul", "&"}};
    static const std::map<std::string, std::string> functions = {
        {"maximum", "vec_maximum"},     {"minimum", "vec_minimum"}, {"div_trunc", "vec_div_trunc"},
        {"div_floor", "vec_div_floor"}, {"abs", "vec_abs"},         {"sqrt", "vec_sqrt"},
        {"rsqrt", "vec_rsqrt"},         {"floor", "vec_floor"},     {"ceil", "vec_ceil"},
        {"trunc", "vec_trunc"},         {"round", "vec_round"}};

    if (a.size() == 2 && all_args(false)) {
      // Division by a value computed ahead of the loop (softmax's sum): a multiplication by its
      // reciprocal, a tenth of a division's cost per vector. Constants stay divisions (eager
      // divides by them exactly).
      if (op == "div" && a[1].invariant && !a[0].invariant &&
          e.args[1]->kind != ExprNode::Kind::Constant) {
        const std::string r =
            hoist(types_.vec, fmt::format("{}::broadcast(1) / {}", types_.vec, a[1].name));
        const std::string usable =
            hoist("bool", fmt::format("vec_reciprocal_usable({}, {})", a[1].name, r));
        return result(
            fmt::format("({} ? {} * {} : {} / {})", usable, a[0].name, r, a[0].name, a[1].name),
            false);
      }
      if (auto it = arithmetic.find(op); it != arithmetic.end()) {
        return result(fmt::format("({} {} {})", a[0].name, it->second, a[1].name), false);
      }
      if (auto it = comparisons.find(op); it != comparisons.end()) {
        return result(fmt::format("({} {} {})", a[0].name, it->second, a[1].name), true);
      }
    }
    if (all_args(true) && !a.empty()) {
      if (a.size() == 2) {
        if (auto it = logical.find(op); it != logical.end()) {
          return result(fmt::format("({} {} {})", a[0].name, it->second, a[1].name), true);
        }
        if (op == "ne") return result(fmt::format("({} ^ {})", a[0].name, a[1].name), true);
        if (op == "eq") return result(fmt::format("(~({} ^ {}))", a[0].name, a[1].name), true);
      }
      if (a.size() == 1 && op == "bitwise_not")
        return result(fmt::format("(~{})", a[0].name), true);
    }
    if (op == "where" && a.size() == 3 && a[0].is_mask && a[1].is_mask == a[2].is_mask) {
      return result(fmt::format("vec_where({}, {}, {})", a[0].name, a[1].name, a[2].name),
                    a[1].is_mask);
    }
    if (a.empty() || !all_args(false)) return fail();
    if (op == "neg" && a.size() == 1) return result(fmt::format("(-{})", a[0].name), false);
    std::string args_text;
    for (size_t i = 0; i < a.size(); ++i) args_text += (i ? ", " : "") + a[i].name;
    if (auto it = functions.find(op); it != functions.end()) {
      const size_t arity = op == "maximum" || op == "minimum" || op.rfind("div_", 0) == 0 ? 2 : 1;
      if (a.size() != arity) return fail();
      return result(fmt::format("{}({})", it->second, args_text), false);
    }
    if ((a.size() == 1 && contains(unary_math_functions(), op)) ||
        (a.size() == 2 && contains(binary_math_functions(), op))) {
      return result(fmt::format("vec_{}({})", op, args_text), false);
    }
    return fail();
  }

  const InnerLoop& loop_;
  DType lane_;
  LaneTypes types_;
  std::string hoist_indent_, body_indent_;
  std::map<const ExprNode*, Value> values_;
  std::map<std::string, Value> by_text_;  // by right-hand side
  std::string hoisted_, lines_;
  int count_ = 0;
  bool failed_ = false;
};

// The loop around a written body:
//   {
//     const int64_t <v>_vec_begin = begin, <v>_vec_end = begin + (end - begin) / W * W;
//     if (<v>_vec_begin < <v>_vec_end) {
//       hoisted values; `before`
//       for (int64_t <v> = <v>_vec_begin; <v> < <v>_vec_end; <v> += W) { body; `step` }
//       `after`
//     }
//     scalar tail from <v>_vec_end
//   }
// The hoisted loads run only when the vector loop does (an empty range reads nothing).
struct LoopParts {
  std::string before, step, after;  // lines without indentation
};

// Opens the block: the vector range [<v>_vec_begin, <v>_vec_end) of whole vectors and, run only
// when it is not empty, the hoisted values.
std::string vector_range_head(const InnerLoop& loop, const VectorBodyWriter& w) {
  const std::string& in = loop.indent;
  const std::string& v = loop.names.at(static_cast<size_t>(loop.var));
  const std::string& width = w.types().width;
  const std::string begin = v + "_vec_begin", end = v + "_vec_end";
  std::string s = in + "{\n";
  s += fmt::format("{}  const int64_t {} = {};\n", in, begin, loop.begin);
  s += fmt::format("{}  const int64_t {} = {} + ({} - {}) / {} * {};\n", in, end, begin, loop.end,
                   begin, width, width);
  s += fmt::format("{}  if ({} < {}) {{\n", in, begin, end);
  return s + w.hoisted();
}

std::string loop_text(const InnerLoop& loop, const VectorBodyWriter& w, const LoopParts& parts,
                      const ScalarTail& scalar_tail) {
  const std::string& in = loop.indent;
  const std::string& v = loop.names.at(static_cast<size_t>(loop.var));
  const std::string& width = w.types().width;
  const std::string begin = v + "_vec_begin", end = v + "_vec_end";
  std::string s = vector_range_head(loop, w);
  if (!parts.before.empty()) s += fmt::format("{}    {}\n", in, parts.before);
  s += fmt::format("{0}    for (int64_t {1} = {2}; {1} < {3}; {1} += {4}) {{\n", in, v, begin, end,
                   width);
  s += w.lines();
  s += fmt::format("{}      {}\n", in, parts.step);
  s += in + "    }\n";
  if (!parts.after.empty()) s += fmt::format("{}    {}\n", in, parts.after);
  s += in + "  }\n";
  s += scalar_tail(end);
  s += in + "}\n";
  return s;
}

// A reduction's loop with kUnroll independent vector accumulators (a single one makes each
// iteration wait for the previous add's latency): the body is written once per accumulator in a
// block of its own that binds the loop variable, then the remaining whole vectors go to the first
// accumulator, the accumulators are combined, and the scalar tail follows.
//   `init`: the accumulators' initial value; `fold(a, b)`: a expression combining two vectors;
//   `after`: the statement folding <acc>_vec into the scalar accumulator.
constexpr int kUnroll = 4;

std::string unrolled_reduction_text(
    const InnerLoop& loop, const VectorBodyWriter& w, const std::string& vacc,
    const std::string& value, const std::string& init,
    const std::function<std::string(const std::string&, const std::string&)>& fold,
    const std::string& after, const ScalarTail& scalar_tail, const std::string& store_step) {
  const std::string& in = loop.indent;
  const std::string& v = loop.names.at(static_cast<size_t>(loop.var));
  const std::string& width = w.types().width;
  const std::string& vec = w.types().vec;
  const std::string begin = v + "_vec_begin", end = v + "_vec_end", unrolled = v + "_unrolled_end";
  std::string s = vector_range_head(loop, w);
  for (int k = 0; k < kUnroll; ++k) {
    s += fmt::format("{}    {} {}{} = {};\n", in, vec, vacc, k, init);
  }
  s += fmt::format("{}    const int64_t {} = {} + ({} - {}) / ({} * {}) * ({} * {});\n", in,
                   unrolled, begin, end, begin, kUnroll, width, kUnroll, width);
  s +=
      fmt::format("{0}    for (int64_t {1}_base = {2}; {1}_base < {3}; {1}_base += {4} * {5}) {{\n",
                  in, v, begin, unrolled, kUnroll, width);
  const std::string body = w.lines();  // written once per accumulator, and once more after
  for (int k = 0; k < kUnroll; ++k) {
    s += fmt::format("{}      {{\n{}        const int64_t {} = {}_base + {} * {};\n", in, in, v, v,
                     k, width);
    s += body;
    if (!store_step.empty()) s += fmt::format("{}        {}\n", in, store_step);
    s += fmt::format("{}        {}{} = {};\n{}      }}\n", in, vacc, k,
                     fold(vacc + std::to_string(k), value), in);
  }
  s += in + "    }\n";
  s += fmt::format("{0}    for (int64_t {1} = {2}; {1} < {3}; {1} += {4}) {{\n", in, v, unrolled,
                   end, width);
  s += body;
  if (!store_step.empty()) s += fmt::format("{}      {}\n", in, store_step);
  s += fmt::format("{}      {}0 = {};\n{}    }}\n", in, vacc, fold(vacc + "0", value), in);
  s += fmt::format("{}    const {} {} = {};\n", in, vec, vacc,
                   fold(fold(vacc + "0", vacc + "1"), fold(vacc + "2", vacc + "3")));
  s += fmt::format("{}    {}\n", in, after);
  s += in + "  }\n";
  s += scalar_tail(end);
  s += in + "}\n";
  return s;
}

}  // namespace

std::optional<std::string> vectorized_store_loop(const InnerLoop& loop, const Expr& body,
                                                 int out_buffer, DType out_dtype,
                                                 const Index& store, const ScalarTail& scalar_tail,
                                                 bool stream) {
  const auto lane = lane_dtype(body, out_dtype, loop.var);
  if (!lane) return std::nullopt;
  if (widened(out_dtype) != *lane && out_dtype != DType::Bool) return std::nullopt;
  VectorBodyWriter w(loop, *lane, loop.indent + "    ", loop.indent + "      ");
  const std::string address = w.contiguous_address(out_buffer, store);
  if (address.empty()) return std::nullopt;
  const VectorBodyWriter::Value value = w.emit(body);
  if (w.failed()) return std::nullopt;
  std::string step;
  if (out_dtype == DType::Bool) {
    const std::string mask =
        value.is_mask ? value.name
                      : fmt::format("({} != {}::broadcast(0))", value.name, w.types().vec);
    step = fmt::format("{}.store_bools({});", mask, address);
  } else {
    const std::string vec =
        value.is_mask ? fmt::format("{}::from_mask({})", w.types().vec, value.name) : value.name;
    const bool streams = stream && (out_dtype == DType::Float32 || out_dtype == DType::Float64);
    step = fmt::format("{}.{}({});", vec, streams ? "store_stream" : "store", address);
  }
  return loop_text(loop, w, {"", step, ""}, scalar_tail);
}

std::optional<std::string> vectorized_reduction_loop(
    const InnerLoop& loop, const Expr& body, const std::string& reduction, const std::string& acc,
    const std::string& acc_type, const ScalarTail& scalar_tail, const AlsoStore* also) {
  const DType body_dtype = widened(body->dtype);
  if (body_dtype != DType::Float32 && body_dtype != DType::Float64) return std::nullopt;
  if (acc_type != "float" && acc_type != "double") return std::nullopt;
  const auto lane = lane_dtype(body, std::nullopt, loop.var);
  if (!lane) return std::nullopt;
  VectorBodyWriter w(loop, *lane, loop.indent + "    ", loop.indent + "      ");
  const VectorBodyWriter::Value value = w.emit(body);
  if (w.failed() || value.is_mask) return std::nullopt;
  std::string store_step;
  if (also != nullptr) {
    if (widened(also->dtype) != *lane) return std::nullopt;
    const std::string address = w.contiguous_address(also->buffer, also->store);
    const VectorBodyWriter::Value stored = w.emit(also->value);
    if (address.empty() || w.failed() || stored.is_mask || stored.invariant) return std::nullopt;
    store_step = fmt::format("{}.store({});", stored.name, address);
  }
  const std::string& vec = w.types().vec;
  const std::string& scalar = w.types().scalar;
  const std::string vacc = acc + "_vec";
  LoopParts parts;
  const bool wide = loop.wide_float_accumulation && *lane == DType::Float32 && acc_type == "double";
  if ((reduction == "sum" || reduction == "prod") && wide) {
    if (also != nullptr) return std::nullopt;
    // Two double vectors: the low and the high half of each float vector.
    const bool sum = reduction == "sum";
    const char* sign = sum ? "+" : "*";
    parts.before = fmt::format("VecD {0}_low = VecD::broadcast(double({1})), {0}_high = {0}_low;",
                               vacc, sum ? 0 : 1);
    parts.step = fmt::format(
        "{0}_low = {0}_low {1} vec_widen_low({2}); {0}_high = {0}_high {1} vec_widen_high({2});",
        vacc, sign, value.name);
    parts.after = fmt::format("{0} = {0} {1} reduce_{2}<double>({3}_low {1} {3}_high);", acc, sign,
                              sum ? "add" : "mul", vacc);
  } else if (reduction == "sum" || reduction == "prod") {
    const bool sum = reduction == "sum";
    const std::string init = fmt::format("{}::broadcast({}({}))", vec, scalar, sum ? 0 : 1);
    const auto fold = [sum](const std::string& a, const std::string& b) {
      return fmt::format("({} {} {})", a, sum ? "+" : "*", b);
    };
    const std::string after = fmt::format("{0} = {0} {1} reduce_{2}<{3}>({4});", acc,
                                          sum ? "+" : "*", sum ? "add" : "mul", acc_type, vacc);
    return unrolled_reduction_text(loop, w, vacc, value.name, init, fold, after, scalar_tail,
                                   store_step);
  } else if (reduction == "max" || reduction == "min") {
    const std::string init = fmt::format("{}::broadcast({}std::numeric_limits<{}>::infinity())",
                                         vec, reduction == "max" ? "-" : "", scalar);
    const auto fold = [&reduction](const std::string& a, const std::string& b) {
      return fmt::format("vec_accumulate_{}imum({}, {})", reduction, a, b);
    };
    const std::string after =
        fmt::format("{0} = kiln_vec_scalar_{1}imum<{2}>({0}, static_cast<{2}>(reduce_{1}({3})));",
                    acc, reduction, acc_type, vacc);
    return unrolled_reduction_text(loop, w, vacc, value.name, init, fold, after, scalar_tail,
                                   store_step);
  } else {
    return std::nullopt;
  }
  return loop_text(loop, w, parts, scalar_tail);
}

}  // namespace kiln::inductor
