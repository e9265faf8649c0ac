#include <kiln/ops/ivalue.h>

namespace kiln::ops {

int64_t IValue::to_int() const {
  if (const auto* i = std::get_if<int64_t>(&v_)) return *i;
  if (const auto* s = std::get_if<SymInt>(&v_)) return s->expect_int();
  if (const auto* b = std::get_if<bool>(&v_)) return *b;
  if (const auto* sc = std::get_if<Scalar>(&v_); sc && !sc->is_floating_point())
    return sc->to_int();
  throw_type("int");
}

SymInt IValue::to_sym_int() const {
  if (const auto* s = std::get_if<SymInt>(&v_)) return *s;
  return to_int();
}

double IValue::to_double() const {
  if (const auto* d = std::get_if<double>(&v_)) return *d;
  if (const auto* i = std::get_if<int64_t>(&v_)) return static_cast<double>(*i);
  if (const auto* sc = std::get_if<Scalar>(&v_)) return sc->to_double();
  throw_type("float");
}

Scalar IValue::to_scalar() const {
  if (const auto* sc = std::get_if<Scalar>(&v_)) return *sc;
  if (const auto* d = std::get_if<double>(&v_)) return *d;
  if (const auto* i = std::get_if<int64_t>(&v_)) return *i;
  if (const auto* b = std::get_if<bool>(&v_)) return *b;
  throw_type("Scalar");
}

std::vector<int64_t> IValue::to_int_list() const {
  if (const auto* l = std::get_if<std::vector<int64_t>>(&v_)) return *l;
  if (const auto* l = std::get_if<std::vector<SymInt>>(&v_)) {
    std::vector<int64_t> out;
    out.reserve(l->size());
    for (const auto& s : *l) out.push_back(s.expect_int());
    return out;
  }
  if (const auto* i = std::get_if<int64_t>(&v_)) return {*i};
  throw_type("int[]");
}

std::vector<SymInt> IValue::to_sym_int_list() const {
  if (const auto* l = std::get_if<std::vector<SymInt>>(&v_)) return *l;
  if (const auto* l = std::get_if<std::vector<int64_t>>(&v_)) return {l->begin(), l->end()};
  if (const auto* i = std::get_if<int64_t>(&v_)) return {SymInt(*i)};
  throw_type("SymInt[]");
}

std::string IValue::type_name() const {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return "None";
        else if constexpr (std::is_same_v<T, Tensor>)
          return "Tensor";
        else if constexpr (std::is_same_v<T, int64_t>)
          return "int";
        else if constexpr (std::is_same_v<T, double>)
          return "float";
        else if constexpr (std::is_same_v<T, bool>)
          return "bool";
        else if constexpr (std::is_same_v<T, Scalar>)
          return "Scalar";
        else if constexpr (std::is_same_v<T, std::string>)
          return "str";
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
          return "int[]";
        else if constexpr (std::is_same_v<T, std::vector<SymInt>>)
          return "SymInt[]";
        else if constexpr (std::is_same_v<T, std::vector<Tensor>>)
          return "Tensor[]";
        else if constexpr (std::is_same_v<T, DType>)
          return "ScalarType";
        else if constexpr (std::is_same_v<T, Device>)
          return "Device";
        else if constexpr (std::is_same_v<T, SymInt>)
          return "SymInt";
        else
          return "float[]";
      },
      v_);
}

namespace {
std::string tensor_repr(const Tensor& t) {
  if (!t.defined()) return "Tensor(undefined)";
  std::string sizes;
  for (size_t i = 0; i < t.sym_sizes().size(); ++i) {
    if (i) sizes += ", ";
    sizes += t.sym_sizes()[i].str();
  }
  return fmt::format("Tensor({}[{}])", dtype_name(t.dtype()), sizes);
}
}  // namespace

std::string IValue::repr() const {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return "None";
        else if constexpr (std::is_same_v<T, Tensor>)
          return tensor_repr(x);
        else if constexpr (std::is_same_v<T, bool>)
          return x ? "True" : "False";
        else if constexpr (std::is_same_v<T, Scalar>)
          return x.str();
        else if constexpr (std::is_same_v<T, std::string>)
          return "'" + x + "'";
        else if constexpr (std::is_same_v<T, DType>)
          return "kiln." + std::string(dtype_name(x));
        else if constexpr (std::is_same_v<T, Device>)
          return x.str();
        else if constexpr (std::is_same_v<T, SymInt>)
          return x.str();
        else if constexpr (std::is_same_v<T, std::vector<SymInt>>) {
          std::string s = "[";
          for (size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + x[i].str();
          return s + "]";
        } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
          std::string s = "[";
          for (size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + tensor_repr(x[i]);
          return s + "]";
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>> ||
                             std::is_same_v<T, std::vector<double>>) {
          return fmt::format("[{}]", fmt::join(x, ", "));
        } else {
          return fmt::format("{}", x);
        }
      },
      v_);
}

void IValue::throw_type(const char* expected) const {
  throw TypeError(
      fmt::format("expected an argument of type {}, got {} ({})", expected, type_name(), repr()));
}

}  // namespace kiln::ops
