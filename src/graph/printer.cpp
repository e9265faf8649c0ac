// Graph::str and ValueMeta::str: torch.fx's print_readable, one line per node.
//   %x : f32[64, 1024] = input[user_arg](arg 0)
//   %addmm : f32[64, 1024] = addmm(%fc1_bias, %x, %t, beta=1, alpha=1)  # train.cpp:12
//   return (%addmm,)
// Positional arguments print bare, keyword-only ones as name=value (all of them, defaults
// included, so that a line says everything the op receives).
#include <kiln/graph/graph.h>

#include <cmath>

namespace kiln::graph {

namespace {

std::string_view short_dtype(DType t) {
  switch (t) {
    case DType::Bool:
      return "b8";
    case DType::UInt8:
      return "u8";
    case DType::Int8:
      return "i8";
    case DType::Int16:
      return "i16";
    case DType::Int32:
      return "i32";
    case DType::Int64:
      return "i64";
    case DType::Float16:
      return "f16";
    case DType::BFloat16:
      return "bf16";
    case DType::Float32:
      return "f32";
    case DType::Float64:
      return "f64";
  }
  return "?";
}

std::string join_sym(const SymDimVector& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += v[i].str();
  }
  return s;
}

// Row-major strides for `sizes`, rendered: compared as text so that symbolic strides need no
// guard (comparing symbols would record one).
bool has_row_major_strides(const ValueMeta& m) {
  if (m.strides.size() != m.sizes.size()) return false;
  SymDimVector expected = contiguous_strides(SymIntList(m.sizes));
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i].raw() == m.strides[i].raw()) continue;
    if (expected[i].str() != m.strides[i].str()) return false;
  }
  return true;
}

// A double as Python prints a float: "1.0", "0.5", "1e-05", "inf", "nan".
std::string format_double(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", d);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string format_scalar(const Scalar& s) {
  return s.is_floating_point() ? format_double(s.to_double()) : s.str();
}

std::string value_ref(Value v) {
  if (!v.defined()) return "None";
  if (v.node->outputs.size() == 1) return "%" + v.node->name;
  return fmt::format("%{}[{}]", v.node->name, v.output);
}

// A constant argument (tensor slots are filled from uses before this is called).
std::string format_constant(const ops::IValue& value) {
  return std::visit(
      [&value](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, double>) {
          return format_double(x);
        } else if constexpr (std::is_same_v<T, Scalar>) {
          return format_scalar(x);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          std::string s = "[";
          for (size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + format_double(x[i]);
          return s + "]";
        } else {
          return value.repr();
        }
      },
      value.variant());
}

std::string format_args(const Node& node) {
  const auto& schema = node.op->schema;
  std::string s;
  for (size_t i = 0; i < node.args.size(); ++i) {
    std::string text;
    const ops::IValue& arg = node.args[i];
    if (arg.is_tensor_list()) {
      // Elements without a use are None (a Tensor?[] list) or a tensor constant.
      std::vector<std::string> elems;
      for (const Tensor& t : arg.to_tensor_list())
        elems.push_back(t.defined() ? ops::IValue(t).repr() : "None");
      for (const TensorUse& u : node.uses) {
        if (static_cast<size_t>(u.arg) == i && u.element >= 0) {
          elems[static_cast<size_t>(u.element)] = value_ref(u.value);
        }
      }
      text = fmt::format("[{}]", fmt::join(elems, ", "));
    } else {
      text = format_constant(arg);
      for (const TensorUse& u : node.uses) {
        if (static_cast<size_t>(u.arg) == i && u.element < 0) text = value_ref(u.value);
      }
    }
    if (!s.empty()) s += ", ";
    bool keyword = i < schema.arguments.size() && schema.arguments[i].kwarg_only;
    s += keyword ? fmt::format("{}={}", schema.arguments[i].name, text) : text;
  }
  return s;
}

std::string format_type(const Node& node) {
  if (node.outputs.size() == 1) return node.outputs[0].str();
  std::string s = "(";
  for (size_t i = 0; i < node.outputs.size(); ++i) s += (i ? ", " : "") + node.outputs[i].str();
  return s + ")";
}

}  // namespace

std::string ValueMeta::str() const {
  std::string s = fmt::format("{}[{}]", short_dtype(dtype), join_sym(sizes));
  if (!has_row_major_strides(*this)) s += fmt::format("({})", join_sym(strides));
  if (!device.is_cpu()) s += "@" + device.str();
  return s;
}

std::string Graph::str() const {
  std::string s;
  for (const auto& n : nodes_) {
    s += fmt::format("%{} : {} = ", n->name, format_type(*n));
    if (n->kind == NodeKind::Input) {
      s += fmt::format("input[{}]({})", role_name(n->role), n->label);
      if (n->number) s += fmt::format(" = {}", n->number->str());
    } else {
      s += fmt::format("{}({})", n->op->full_name(), format_args(*n));
      if (n->loc.known()) s += "  # " + n->loc.str();
    }
    s += "\n";
  }
  std::vector<std::string> outs;
  for (const Value& v : outputs_) outs.push_back(value_ref(v));
  s += fmt::format("return ({}{})\n", fmt::join(outs, ", "), outs.size() == 1 ? "," : "");
  return s;
}

}  // namespace kiln::graph
