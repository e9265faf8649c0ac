#include "fuzz/program.h"

#include <kiln/kiln.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <variant>

namespace kiln::fuzz {

bool Program::any_requires_grad() const {
  return std::any_of(inputs.begin(), inputs.end(),
                     [](const InputSpec& in) { return in.requires_grad; });
}

std::string literal_cpp(const ops::IValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "kiln::ops::IValue()";
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return fmt::format("int64_t{{{}}}", x);
        } else if constexpr (std::is_same_v<T, double>) {
          // Enough digits to round-trip; always with a decimal point so it stays a double.
          std::string s = fmt::format("{:.17g}", x);
          if (s.find_first_of(".en") == std::string::npos) s += ".0";
          return s;
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return fmt::format("std::string(\"{}\")", x);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          return fmt::format("std::vector<int64_t>{{{}}}", fmt::join(x, ", "));
        } else if constexpr (std::is_same_v<T, DType>) {
          static constexpr const char* kNames[] = {"Bool",    "UInt8",  "Int8",    "Int16",
                                                   "Int32",   "Int64",  "Float16", "BFloat16",
                                                   "Float32", "Float64"};
          return std::string("kiln::DType::") + kNames[static_cast<int>(x)];
        } else {
          throw Error("kiln_fuzz: a literal of an unsupported type in a program");
        }
      },
      v.variant());
}

std::string Program::str() const {
  std::ostringstream out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputSpec& in = inputs[i];
    out << fmt::format("v{} = input {}[{}]{} data_seed={}\n", i, dtype_name(in.dtype),
                       fmt::join(in.sizes, ", "), in.requires_grad ? " requires_grad" : "",
                       in.data_seed);
  }
  for (size_t n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    std::vector<std::string> args;
    for (const Arg& a : node.args) {
      if (a.kind == Arg::Kind::Value) {
        args.push_back(fmt::format("v{}", a.values[0]));
      } else if (a.kind == Arg::Kind::ValueList) {
        std::vector<std::string> names;
        for (int v : a.values) names.push_back(fmt::format("v{}", v));
        args.push_back(fmt::format("[{}]", fmt::join(names, ", ")));
      } else {
        args.push_back(a.literal.repr());
      }
    }
    const char* target = node.target == WriteTarget::Clone         ? " (into a clone)"
                         : node.target == WriteTarget::CloneNarrow ? " (into a narrowed clone)"
                         : node.target == WriteTarget::Argument    ? " (into the argument)"
                                                                   : "";
    out << fmt::format("v{} = {}({}){}{}", inputs.size() + n, node.op, fmt::join(args, ", "),
                       node.output != 0 ? fmt::format("[{}]", node.output) : "", target);
    if (node.target == WriteTarget::CloneNarrow) {
      out << fmt::format(" narrow({}, {}, {})", node.narrow_dim, node.narrow_start,
                         node.narrow_length);
    }
    out << "\n";
  }
  out << fmt::format("return [{}]\n", fmt::join(outputs, ", "));
  return out.str();
}

std::vector<Tensor> make_inputs(const Program& program, DType float_dtype) {
  std::vector<Tensor> out;
  for (const InputSpec& in : program.inputs) {
    Generator gen(in.data_seed);
    Tensor t;
    if (is_floating_point(in.dtype)) {
      t = randn(in.sizes, TensorOptions().dtype(in.dtype), &gen);
      if (in.dtype == DType::Float32) t = t.to(float_dtype);
    } else if (in.dtype == DType::Bool) {
      t = randint(0, 2, in.sizes, TensorOptions().dtype(DType::Int64), &gen).to(DType::Bool);
    } else {
      t = randint(-4, 5, in.sizes, TensorOptions().dtype(in.dtype), &gen);
    }
    if (in.requires_grad) t.requires_grad_(true);
    out.push_back(t);
  }
  return out;
}

namespace {

ops::IValue with_float_dtype(const ops::IValue& v, DType float_dtype) {
  if (const DType* d = std::get_if<DType>(&v.variant()); d != nullptr && *d == DType::Float32) {
    return ops::IValue(float_dtype);
  }
  return v;
}

}  // namespace

Tensor execute_node(const Node& node, const std::vector<Tensor>& values, DType float_dtype) {
  const ops::OpDef& op = ops::OpRegistry::instance().get(node.op);
  ops::Stack stack;
  for (const Arg& a : node.args) {
    switch (a.kind) {
      case Arg::Kind::Value:
        stack.emplace_back(values.at(a.values[0]));
        break;
      case Arg::Kind::ValueList: {
        std::vector<Tensor> list;
        for (int v : a.values) list.push_back(values.at(v));
        stack.emplace_back(std::move(list));
        break;
      }
      case Arg::Kind::Literal:
        stack.push_back(with_float_dtype(a.literal, float_dtype));
        break;
    }
  }
  if (node.target == WriteTarget::Clone || node.target == WriteTarget::CloneNarrow) {
    const Tensor base = stack[0].to_tensor().clone();
    stack[0] = node.target == WriteTarget::Clone
                   ? base
                   : base.narrow(node.narrow_dim, node.narrow_start, node.narrow_length);
    ops::call(op, std::move(stack));
    return base;
  }
  Tensor out = ops::call(op, std::move(stack)).at(node.output);
  // Integers promote to float32 (the default dtype) whatever float_dtype is: the float64
  // reference widens them too, so that its ops see float64 operands throughout.
  if (float_dtype != DType::Float32 && out.dtype() == DType::Float32) out = out.to(float_dtype);
  return out;
}

std::vector<Tensor> execute_all(const Program& program, const std::vector<Tensor>& inputs,
                                DType float_dtype) {
  std::vector<Tensor> values = inputs;
  values.reserve(program.num_values());
  for (const Node& node : program.nodes) values.push_back(execute_node(node, values, float_dtype));
  return values;
}

std::vector<Tensor> execute(const Program& program, const std::vector<Tensor>& inputs,
                            DType float_dtype) {
  const std::vector<Tensor> values = execute_all(program, inputs, float_dtype);
  std::vector<Tensor> out;
  for (int v : program.outputs) out.push_back(values.at(v));
  return out;
}

}  // namespace kiln::fuzz
