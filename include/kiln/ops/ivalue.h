#pragma once
// IValue: one boxed op argument (a tensor, number, list, string, dtype, device or None). Ops are
// called through stacks of IValues so that autograd, capture and the compiler can handle every op
// with one mechanism.
#include <kiln/core/tensor.h>

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kiln::ops {

class IValue {
 public:
  using Variant = std::variant<std::monostate, Tensor, int64_t, double, bool, Scalar, std::string,
                               std::vector<int64_t>, std::vector<SymInt>, std::vector<Tensor>,
                               DType, Device, SymInt, std::vector<double>>;

  IValue() = default;
  IValue(std::nullopt_t) {}                             // NOLINT: implicit
  IValue(Tensor t) : v_(std::move(t)) {}                // NOLINT
  IValue(int64_t v) : v_(v) {}                          // NOLINT
  IValue(int v) : v_(int64_t{v}) {}                     // NOLINT
  IValue(double v) : v_(v) {}                           // NOLINT
  IValue(bool v) : v_(v) {}                             // NOLINT
  IValue(Scalar v) : v_(v) {}                           // NOLINT
  IValue(std::string v) : v_(std::move(v)) {}           // NOLINT
  IValue(const char* v) : v_(std::string(v)) {}         // NOLINT
  IValue(std::string_view v) : v_(std::string(v)) {}    // NOLINT
  IValue(IntList v) : v_(v.vec()) {}                    // NOLINT
  IValue(std::vector<int64_t> v) : v_(std::move(v)) {}  // NOLINT
  IValue(SymIntList v) : v_(v.vec()) {}                 // NOLINT
  IValue(std::vector<SymInt> v) : v_(std::move(v)) {}   // NOLINT
  IValue(TensorList v) : v_(v.vec()) {}                 // NOLINT
  IValue(std::vector<Tensor> v) : v_(std::move(v)) {}   // NOLINT
  IValue(std::vector<double> v) : v_(std::move(v)) {}   // NOLINT
  IValue(DType v) : v_(v) {}                            // NOLINT
  IValue(Device v) : v_(v) {}                           // NOLINT
  IValue(SymInt v) : v_(std::move(v)) {}                // NOLINT
  template <typename T>
  IValue(const std::optional<T>& v) {  // NOLINT
    if (v) *this = IValue(*v);
  }

  bool is_none() const { return std::holds_alternative<std::monostate>(v_); }
  bool is_tensor() const { return std::holds_alternative<Tensor>(v_); }
  bool is_tensor_list() const { return std::holds_alternative<std::vector<Tensor>>(v_); }
  bool is_int() const { return std::holds_alternative<int64_t>(v_); }
  bool is_double() const { return std::holds_alternative<double>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_scalar() const { return std::holds_alternative<Scalar>(v_); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }

  const Tensor& to_tensor() const { return get<Tensor>("Tensor"); }
  const std::vector<Tensor>& to_tensor_list() const { return get<std::vector<Tensor>>("Tensor[]"); }
  int64_t to_int() const;     // accepts int and SymInt with a concrete value
  SymInt to_sym_int() const;  // accepts int and SymInt
  double to_double() const;   // accepts double, int and Scalar
  bool to_bool() const { return get<bool>("bool"); }
  Scalar to_scalar() const;  // accepts Scalar, double, int and bool
  const std::string& to_string() const { return get<std::string>("str"); }
  DType to_dtype() const { return get<DType>("ScalarType"); }
  Device to_device() const { return get<Device>("Device"); }
  std::vector<int64_t> to_int_list() const;     // accepts int[] and SymInt[] of concrete values
  std::vector<SymInt> to_sym_int_list() const;  // accepts int[] and SymInt[]
  const std::vector<double>& to_double_list() const { return get<std::vector<double>>("float[]"); }

  std::optional<int64_t> to_optional_int() const {
    return is_none() ? std::nullopt : std::optional<int64_t>(to_int());
  }
  // A Device? argument of a factory: None means the CPU, as in PyTorch.
  Device to_device_or_cpu() const { return is_none() ? Device::cpu() : to_device(); }
  std::optional<double> to_optional_double() const {
    return is_none() ? std::nullopt : std::optional<double>(to_double());
  }
  std::optional<Scalar> to_optional_scalar() const {
    return is_none() ? std::nullopt : std::optional<Scalar>(to_scalar());
  }
  std::optional<DType> to_optional_dtype() const {
    return is_none() ? std::nullopt : std::optional<DType>(to_dtype());
  }
  std::optional<std::string> to_optional_string() const {
    return is_none() ? std::nullopt : std::optional<std::string>(to_string());
  }
  // An undefined Tensor for None.
  Tensor to_optional_tensor() const { return is_none() ? Tensor() : to_tensor(); }

  const Variant& variant() const { return v_; }
  std::string type_name() const;
  // A short rendering for schemas, graph printing and error messages ("[2, 3]", "1.5", "None",
  // "Tensor(float32[2, 3])").
  std::string repr() const;

 private:
  template <typename T>
  const T& get(const char* expected) const {
    if (const T* p = std::get_if<T>(&v_)) [[likely]]
      return *p;
    throw_type(expected);
  }
  [[noreturn]] void throw_type(const char* expected) const;
  Variant v_;
};

using Stack = std::vector<IValue>;

}  // namespace kiln::ops
