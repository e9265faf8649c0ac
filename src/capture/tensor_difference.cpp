#include "capture/tensor_difference.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/ops/creation.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace kiln::capture {

Tolerance tolerance_for(DType dtype, std::optional<double> rtol, std::optional<double> atol) {
  if (!is_floating_point(dtype)) return {0, 0};
  Tolerance t;
  switch (dtype) {
    case DType::Float64:
      t = {1e-7, 1e-7};
      break;
    case DType::Float16:
    case DType::BFloat16:
      t = {1e-2, 1e-3};
      break;
    default:
      t = {1e-4, 1e-5};
      break;
  }
  if (rtol) t.rtol = *rtol;
  if (atol) t.atol = *atol;
  return t;
}

namespace {

// "[2, 0, 3]": the index of element `flat` of a row-major tensor of `sizes`.
std::string index_of(int64_t flat, IntList sizes) {
  std::vector<int64_t> index(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    index[d] = flat % sizes[d];
    flat /= sizes[d];
  }
  return fmt::format("[{}]", fmt::join(index, ", "));
}

template <typename T>
std::optional<std::string> elementwise_difference(const Tensor& actual, const Tensor& expected,
                                                  Tolerance tol) {
  const std::vector<T> a = actual.tolist<T>();
  const std::vector<T> e = expected.tolist<T>();
  int64_t beyond = 0;
  int64_t worst = -1;
  double worst_excess = -1;
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = static_cast<double>(a[i]);
    const double y = static_cast<double>(e[i]);
    bool close;
    double excess;
    if (std::isnan(x) || std::isnan(y)) {
      close = std::isnan(x) && std::isnan(y);
      excess = close ? 0 : INFINITY;
    } else if (x == y) {  // equal infinities too
      close = true;
      excess = 0;
    } else {
      excess = std::abs(x - y) - (tol.atol + tol.rtol * std::abs(y));
      close = excess <= 0;
    }
    if (close) continue;
    ++beyond;
    if (excess > worst_excess) {
      worst_excess = excess;
      worst = static_cast<int64_t>(i);
    }
  }
  if (beyond == 0) return std::nullopt;
  const double x = static_cast<double>(a[static_cast<size_t>(worst)]);
  const double y = static_cast<double>(e[static_cast<size_t>(worst)]);
  return fmt::format(
      "{} of {} elements differ beyond rtol {} atol {}; the largest at {}: compiled {}, eager {} "
      "(abs diff {})",
      beyond, a.size(), tol.rtol, tol.atol, index_of(worst, expected.sizes()), x, y,
      std::abs(x - y));
}

}  // namespace

std::optional<std::string> tensor_difference(const Tensor& actual, const Tensor& expected,
                                             std::optional<double> rtol,
                                             std::optional<double> atol) {
  if (!actual.defined() || !expected.defined()) {
    if (actual.defined() == expected.defined()) return std::nullopt;
    return fmt::format("compiled gives {}, eager {}",
                       actual.defined() ? "a tensor" : "an undefined tensor",
                       expected.defined() ? "a tensor" : "an undefined tensor");
  }
  if (actual.dtype() != expected.dtype()) {
    return fmt::format("dtype {} where eager gives {}", dtype_name(actual.dtype()),
                       dtype_name(expected.dtype()));
  }
  if (!std::ranges::equal(actual.sizes(), expected.sizes())) {
    return fmt::format("sizes [{}] where eager gives [{}]", fmt::join(actual.sizes(), ", "),
                       fmt::join(expected.sizes(), ", "));
  }
  if (actual.numel() == 0) return std::nullopt;
  autograd::NoGradGuard no_grad;
  const Tolerance tol = tolerance_for(actual.dtype(), rtol, atol);
  if (is_floating_point(actual.dtype())) {
    return elementwise_difference<double>(actual.detach(), expected.detach(), tol);
  }
  return elementwise_difference<int64_t>(actual.to(DType::Int64), expected.to(DType::Int64), tol);
}

namespace {

// The elements [first, end) of storage a tensor can reach.
std::pair<int64_t, int64_t> reach(const Tensor& t) {
  int64_t end = t.storage_offset() + 1;
  for (size_t d = 0; d < t.sizes().size(); ++d) end += (t.sizes()[d] - 1) * t.strides()[d];
  return {t.storage_offset(), end};
}

}  // namespace

std::vector<Tensor> copy_inputs_keeping_aliases(std::span<const Tensor> inputs) {
  autograd::NoGradGuard no_grad;
  // One copy per (storage, dtype), covering what the inputs on it reach.
  std::map<std::pair<const StorageImpl*, DType>, std::pair<int64_t, int64_t>> spans;
  for (const Tensor& t : inputs) {
    if (!t.defined() || t.numel() == 0) continue;
    auto [first, end] = reach(t);
    auto key = std::make_pair(t.storage().get(), t.dtype());
    auto [it, fresh] = spans.try_emplace(key, first, end);
    if (!fresh) {
      it->second.first = std::min(it->second.first, first);
      it->second.second = std::max(it->second.second, end);
    }
  }
  std::map<std::pair<const StorageImpl*, DType>, Tensor> bases;
  std::vector<Tensor> copies;
  copies.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    if (!t.defined()) {
      copies.emplace_back();
      continue;
    }
    if (t.numel() == 0) {
      copies.push_back(empty_strided(t.sizes(), t.strides(), TensorOptions(t.dtype())));
      continue;
    }
    auto key = std::make_pair(t.storage().get(), t.dtype());
    auto [first, end] = spans.at(key);
    auto [it, fresh] = bases.try_emplace(key);
    if (fresh) {
      it->second = empty({end - first}, TensorOptions(t.dtype()));
      it->second.copy_(t.detach().as_strided({end - first}, {1}, first));
    }
    copies.push_back(it->second.as_strided(t.sizes(), t.strides(), t.storage_offset() - first));
  }
  return copies;
}

std::vector<Tensor> copy_inputs_as_leaves(std::span<const Tensor> inputs) {
  std::vector<Tensor> copies;
  copies.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    if (!t.defined()) {
      copies.emplace_back();
      continue;
    }
    Tensor c;
    {
      autograd::NoGradGuard no_grad;
      c = empty_strided(t.sizes(), t.strides(), TensorOptions(t.dtype()));
      c.copy_(t.detach());
    }
    if (t.requires_grad()) c.requires_grad_(true);
    copies.push_back(std::move(c));
  }
  return copies;
}

}  // namespace kiln::capture
