// scatter_reduce.two: src scattered into self along dim, combining every value that lands on a
// position with sum, prod, mean, amax or amin; include_self=False leaves self's value out of the
// positions that receive something. Serial in index order, so duplicates are deterministic.
#include "ops/indexing/index_common.h"
#include "ops/indexing/index_grad.h"
#include "ops/indexing/strided_loop.h"
#include "ops/samples.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/registry.h>

#include <cmath>

namespace kiln::ops {
namespace {

using namespace indexing;

enum class Reduce { Sum, Prod, Mean, Amax, Amin };

Reduce parse_reduce(const std::string& reduce) {
  if (reduce == "sum") return Reduce::Sum;
  if (reduce == "prod") return Reduce::Prod;
  if (reduce == "mean") return Reduce::Mean;
  // aten also takes "max"/"min" (scatter's legacy names) for amax/amin.
  if (reduce == "amax" || reduce == "max") return Reduce::Amax;
  if (reduce == "amin" || reduce == "min") return Reduce::Amin;
  KILN_FAIL(
      "scatter_reduce(): reduce argument must be either sum, prod, mean, amax or amin, got '{}'",
      reduce);
}

template <typename T>
T combine(T acc, T v, Reduce r) {
  using acc_t = opmath_t<T>;
  switch (r) {
    case Reduce::Sum:
    case Reduce::Mean:
      return static_cast<T>(static_cast<acc_t>(acc) + static_cast<acc_t>(v));
    case Reduce::Prod:
      return static_cast<T>(static_cast<acc_t>(acc) * static_cast<acc_t>(v));
    case Reduce::Amax:  // NaN propagates, as in PyTorch
      return (v != v || v > acc) ? v : acc;
    case Reduce::Amin:
      return (v != v || v < acc) ? v : acc;
  }
  return acc;
}

// target (contiguous, holding self) combined with src along dim.
void scatter_reduce_into(const Tensor& target0, int64_t raw_dim, const Tensor& index0,
                         const Tensor& src0, Reduce reduce, bool include_self) {
  const Tensor target = at_least_1d(target0);
  const Tensor index = at_least_1d(index0);
  const Tensor src = at_least_1d(src0);
  const int64_t dim = wrap_dim(raw_dim, target.dim(), "scatter_reduce");
  const int64_t size = target.size(dim), stride = target.stride(dim);
  const int64_t* idx = index.data_ptr<int64_t>();
  DimVector target_strides(target.strides().begin(), target.strides().end());
  target_strides[static_cast<size_t>(dim)] = 0;
  // Per target element: how many src values landed there (mean's divisor; first touch when
  // self is excluded).
  std::vector<int64_t> count(static_cast<size_t>(target.numel()), 0);
  KILN_DISPATCH_ALL(target.dtype(), "scatter_reduce", [&]<typename T>() {
    T* out = target.data_ptr<T>();
    const T* in = src.data_ptr<T>();
    strided::for_each<3>(index.sizes(), {IntList(target_strides), index.strides(), src.strides()},
                         [&](const std::array<int64_t, 3>& off) {
                           const int64_t v = idx[off[1]];
                           check_in_bounds(v, dim, size, "scatter_reduce");
                           const int64_t pos = off[0] + v * stride;
                           T& d = out[pos];
                           int64_t& c = count[static_cast<size_t>(pos)];
                           d = (c == 0 && !include_self) ? in[off[2]]
                                                         : combine(d, in[off[2]], reduce);
                           ++c;
                         });
    if (reduce != Reduce::Mean) return;
    const auto n = static_cast<int64_t>(count.size());
    for (int64_t i = 0; i < n; ++i) {
      const int64_t c = count[static_cast<size_t>(i)] + (include_self ? 1 : 0);
      if (c <= 1) continue;
      if constexpr (std::is_integral_v<T>) {
        // Integer means round toward -inf (PyTorch's floor division).
        const auto q = static_cast<int64_t>(out[i]);
        int64_t f = q / c;
        if ((q % c != 0) && ((q < 0) != (c < 0))) --f;
        out[i] = static_cast<T>(f);
      } else {
        out[i] = static_cast<T>(static_cast<opmath_t<T>>(out[i]) / static_cast<opmath_t<T>>(c));
      }
    }
  });
}

std::vector<TensorMeta> scatter_reduce_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  parse_reduce(args[4].to_string());
  check_scatter(self, args[1].to_int(), args[2].to_tensor(), args[3].to_tensor(), "scatter_reduce");
  return {TensorMeta::contiguous(self.sym_sizes().vec(), self.dtype(), self.device())};
}

void scatter_reduce_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& self = args[0].to_tensor();
  const Tensor& index = args[2].to_tensor();
  Tensor target = strided::dense_target(outs[0], self.dtype());
  if (!target.is_same(self)) target.copy_(self);
  if (index.numel() > 0) {
    scatter_reduce_into(target, args[1].to_int(), index, args[3].to_tensor(),
                        parse_reduce(args[4].to_string()), args[5].to_bool());
  }
  strided::commit(outs[0], target);
}

std::vector<Sample> scatter_reduce_samples() {
  std::vector<Sample> s;
  const Tensor dup = from_vector<int64_t>({1, 3, 1, 0, 1, 3, 3, 0}, {2, 4});
  for (const char* r : {"sum", "prod", "mean", "amax", "amin"}) {
    for (bool include_self : {true, false}) {
      s.push_back({{make_sample({4, 4}, kFloat64), 0, dup.t().contiguous(),
                    make_sample({4, 2}, kFloat64, -2, 2, 1), IValue(r), include_self},
                   fmt::format("{} include_self={}, duplicates", r, include_self)});
    }
  }
  s.push_back({{make_noncontiguous_sample({3, 5}, kFloat32), 1,
                make_noncontiguous_sample({3, 4}, kInt64, 0, 5),
                make_noncontiguous_sample({3, 4}, kFloat32, -2, 2, 1), IValue("sum"), true},
               "non-contiguous"});
  s.push_back({{make_sample({6}, kInt64, -9, 9), 0, make_sample({9}, kInt64, 0, 6),
                make_sample({9}, kInt64, -9, 9, 1), IValue("mean"), true},
               "int64 mean rounds down"});
  s.push_back({{make_sample({6}, kInt32, -9, 9), 0, make_sample({9}, kInt64, 0, 6),
                make_sample({9}, kInt32, -9, 9, 1), IValue("amax"), false},
               "int32 amax"});
  s.push_back({{make_sample({5}, kFloat32), 0, from_vector<int64_t>({1, 1}, {2}),
                from_vector<double>({NAN, 1.0}, {2}).to(kFloat32), IValue("amin"), true},
               "NaN propagates"});
  s.push_back({{make_sample({}, kFloat32), 0, from_vector<int64_t>({0}, {}),
                make_sample({}, kFloat32, -2, 2, 1), IValue("prod"), true},
               "0-dim"});
  s.push_back({{make_sample({3, 2}, kFloat32), 0, from_vector<int64_t>({}, {0, 2}),
                make_sample({1, 2}, kFloat32), IValue("mean"), false},
               "empty index"});
  s.push_back({{make_sample({3}, kFloat32), 0, from_vector<int64_t>({0}, {1}),
                make_sample({1}, kFloat32), IValue("add"), true},
               "unknown reduce"});
  return s;
}

std::vector<Tensor> scatter_reduce_derivative(const BackwardArgs& a) {
  const Tensor& index = a.inputs[2].to_tensor();
  const Tensor& src = a.inputs[3].to_tensor();
  std::string reduce = a.inputs[4].to_string();
  if (reduce == "max" || reduce == "min") reduce = "a" + reduce;  // the legacy names
  std::pair<Tensor, Tensor> grads = scatter_reduce_backward(
      a.grad_outputs[0], a.inputs[0].to_tensor(), a.inputs[1].to_int(), index, front_of(src, index),
      reduce, a.inputs[5].to_bool(), a.outputs[0]);
  return {grads.first, Tensor(), zero_pad_to(grads.second, src.sizes())};
}

}  // namespace

KILN_OP(
    "scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool "
    "include_self=True) -> Tensor")
    .meta(scatter_reduce_meta)
    .cpu(scatter_reduce_impl)
    .derivative(scatter_reduce_derivative, DerivativeReads::InputsAndOutputs)
    .inplace_variant()
    .out_variant()
    .samples(scatter_reduce_samples);

}  // namespace kiln::ops

namespace kiln {

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const ops::OpDef& op = ops::OpRegistry::instance().get("scatter_reduce.two");
  return ops::call1(op, {self, dim, index, src, std::string(reduce), include_self}, &loc);
}
Tensor& scatter_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        std::string_view reduce, bool include_self,
                        const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const ops::OpDef& op = ops::OpRegistry::instance().get("scatter_reduce_.two");
  ops::call(op, {self, dim, index, src, std::string(reduce), include_self}, &loc);
  return self;
}

Tensor Tensor::scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src,
                              std::string_view reduce, bool include_self,
                              const kiln::SourceLocation& loc) const {
  return kiln::scatter_reduce(*this, dim, index, src, reduce, include_self, loc);
}
Tensor& Tensor::scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src,
                                std::string_view reduce, bool include_self,
                                const kiln::SourceLocation& loc) {
  return kiln::scatter_reduce_(*this, dim, index, src, reduce, include_self, loc);
}

}  // namespace kiln
