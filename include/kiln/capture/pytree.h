#pragma once
// Flattening C++ argument and result values into a list of leaves (tensors and constants) and
// back, so that one untyped capture core serves functions of any signature (PyTorch's pytrees).
// Supported: Tensor, integers, floating point, bool, Scalar, DType, std::string, and
// std::vector / std::optional / std::pair / std::tuple of supported types. A container's shape
// (a vector's length, an optional's presence) is itself a leaf, so guards on leaves cover it.
#include <kiln/ops/ivalue.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::capture {

using Leaves = std::vector<ops::IValue>;

template <typename T, typename Enable = void>
struct Pytree {
  static_assert(sizeof(T) == 0,
                "kiln::compile: unsupported argument or result type; use Tensor, numbers, bool, "
                "std::string, Scalar, DType, or vectors/optionals/pairs/tuples of them");
};

template <>
struct Pytree<Tensor> {
  static void flatten(const Tensor& t, Leaves& out) { out.emplace_back(t); }
  static Tensor unflatten(std::span<const ops::IValue> in, size_t& pos) {
    return in[pos++].to_tensor();
  }
};

template <typename T>
struct Pytree<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static void flatten(T v, Leaves& out) { out.emplace_back(static_cast<int64_t>(v)); }
  static T unflatten(std::span<const ops::IValue> in, size_t& pos) {
    return static_cast<T>(in[pos++].to_int());
  }
};

template <typename T>
struct Pytree<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  static void flatten(T v, Leaves& out) { out.emplace_back(static_cast<double>(v)); }
  static T unflatten(std::span<const ops::IValue> in, size_t& pos) {
    return static_cast<T>(in[pos++].to_double());
  }
};

template <>
struct Pytree<bool> {
  static void flatten(bool v, Leaves& out) { out.emplace_back(v); }
  static bool unflatten(std::span<const ops::IValue> in, size_t& pos) {
    return in[pos++].to_bool();
  }
};

template <>
struct Pytree<Scalar> {
  static void flatten(const Scalar& v, Leaves& out) { out.emplace_back(v); }
  static Scalar unflatten(std::span<const ops::IValue> in, size_t& pos) {
    return in[pos++].to_scalar();
  }
};

template <>
struct Pytree<DType> {
  static void flatten(DType v, Leaves& out) { out.emplace_back(v); }
  static DType unflatten(std::span<const ops::IValue> in, size_t& pos) {
    return in[pos++].to_dtype();
  }
};

template <>
struct Pytree<std::string> {
  static void flatten(const std::string& v, Leaves& out) { out.emplace_back(v); }
  static std::string unflatten(std::span<const ops::IValue> in, size_t& pos) {
    return in[pos++].to_string();
  }
};

template <typename T>
struct Pytree<std::vector<T>> {
  static void flatten(const std::vector<T>& v, Leaves& out) {
    out.emplace_back(static_cast<int64_t>(v.size()));
    for (const T& e : v) Pytree<T>::flatten(e, out);
  }
  static std::vector<T> unflatten(std::span<const ops::IValue> in, size_t& pos) {
    const auto n = static_cast<size_t>(in[pos++].to_int());
    std::vector<T> v;
    v.reserve(n);
    for (size_t i = 0; i < n; ++i) v.push_back(Pytree<T>::unflatten(in, pos));
    return v;
  }
};

template <typename T>
struct Pytree<std::optional<T>> {
  static void flatten(const std::optional<T>& v, Leaves& out) {
    out.emplace_back(v.has_value());
    if (v) Pytree<T>::flatten(*v, out);
  }
  static std::optional<T> unflatten(std::span<const ops::IValue> in, size_t& pos) {
    if (!in[pos++].to_bool()) return std::nullopt;
    return Pytree<T>::unflatten(in, pos);
  }
};

template <typename A, typename B>
struct Pytree<std::pair<A, B>> {
  static void flatten(const std::pair<A, B>& v, Leaves& out) {
    Pytree<A>::flatten(v.first, out);
    Pytree<B>::flatten(v.second, out);
  }
  static std::pair<A, B> unflatten(std::span<const ops::IValue> in, size_t& pos) {
    A a = Pytree<A>::unflatten(in, pos);
    B b = Pytree<B>::unflatten(in, pos);
    return {std::move(a), std::move(b)};
  }
};

template <typename... Ts>
struct Pytree<std::tuple<Ts...>> {
  static void flatten(const std::tuple<Ts...>& v, Leaves& out) {
    std::apply([&](const Ts&... e) { (Pytree<Ts>::flatten(e, out), ...); }, v);
  }
  static std::tuple<Ts...> unflatten(std::span<const ops::IValue> in, size_t& pos) {
    // Braced initialization evaluates left to right, so leaves are consumed in order.
    return std::tuple<Ts...>{Pytree<Ts>::unflatten(in, pos)...};
  }
};

}  // namespace kiln::capture
