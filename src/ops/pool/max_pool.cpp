// max_pool2d_with_indices (values and the flat h * W + w index of each maximum in its plane) and
// its composite max_pool2d. The first maximum of a window wins; NaN propagates.
#include "ops/pool/pool_common.h"
#include "ops/pool/pool_decompositions.h"
#include "ops/samples.h"

#include <kiln/core/memory_format.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/pool.h>

namespace kiln::ops {
namespace {

using pool::Metas;
using pool::Outs;

// The window arguments start at a[first] (1 in the forward op, 2 in the backward one).
Pool2dArgs max_pool_args(const Stack& a, const pool::PoolInput& in, size_t first = 1) {
  Pool2dArgs p;
  p.kind = PoolKind::Max;
  pool::window_geometry(p, in, a[first].to_int_list(), a[first + 1].to_int_list(),
                        a[first + 2].to_int_list(), a[first + 3].to_int_list(),
                        a[first + 4].to_bool(), "max_pool2d");
  return p;
}

// The values' meta (and the indices', `with_indices`) of max pooling's forward ops.
Metas max_pool_metas(const Stack& a, bool with_indices) {
  const Tensor& self = a[0].to_tensor();
  pool::check_dtype(self, /*integers_ok=*/true, "max_pool2d");
  Metas metas;
  if (self.impl()->has_symbolic_sizes_strides()) {
    const pool::SymPoolInput in = pool::sym_pool_input(self, "max_pool2d");
    const auto [h, w] =
        pool::sym_window_output(in, a[1].to_int_list(), a[2].to_int_list(), a[3].to_int_list(),
                                a[4].to_int_list(), a[5].to_bool(), "max_pool2d");
    metas.push_back(pool::sym_output_meta(self, in, h, w, self.dtype()));
    if (with_indices) metas.push_back(pool::sym_output_meta(self, in, h, w, DType::Int64));
    return metas;
  }
  const pool::PoolInput in = pool::pool_input(self, "max_pool2d");
  const Pool2dArgs p = max_pool_args(a, in);
  metas.push_back(pool::output_meta(self, in, p, self.dtype()));
  if (with_indices) metas.push_back(pool::output_meta(self, in, p, DType::Int64));
  return metas;
}

Tensor max_pool_sample(IntList sizes, DType dtype = DType::Float32, uint64_t seed = 0) {
  return make_sample(sizes, dtype, -3.0, 3.0, seed);
}

std::vector<Sample> max_pool_samples() {
  using L = std::vector<int64_t>;
  return {
      {{max_pool_sample({2, 3, 6, 7}), L{2, 2}}, "2x2, default stride"},
      {{max_pool_sample({3, 7, 7}), L{3, 3}, L{2, 2}, L{1, 1}}, "3-D, k3 s2 p1"},
      {{max_pool_sample({1, 2, 8, 9}), L{3, 2}, L{2, 1}, L{1, 0}, L{2, 1}}, "dilation"},
      {{max_pool_sample({1, 2, 6, 6}), L{3, 3}, L{2, 2}, L{1, 1}, L{1, 1}, true}, "ceil_mode"},
      {{max_pool_sample({2, 2, 5, 5}), L{2, 2}, L{2, 2}, L{0, 0}, L{1, 1}, true},
       "ceil_mode, partial window"},
      {{max_pool_sample({2, 3, 6, 6}).contiguous(MemoryFormat::ChannelsLast), L{3, 3}, L{2, 2},
        L{1, 1}},
       "channels last"},
      {{make_noncontiguous_sample({2, 5, 6}, DType::Float32), L{2, 3}}, "non-contiguous"},
      {{max_pool_sample({1, 4, 4}, DType::Float64), L{2, 2}}, "float64"},
      {{max_pool_sample({1, 4, 4}, DType::Int64), L{2, 2}, L{1, 1}}, "int64, overlapping"},
      {{max_pool_sample({1, 4, 4}, DType::BFloat16), L{2, 2}}, "bfloat16"},
      {{max_pool_sample({0, 2, 4, 4}), L{2, 2}}, "empty batch"},
      {{full({1, 3, 3}, 1.0), L{2, 2}, L{1, 1}},
       "ties: first maximum",
       /*differentiable_point=*/false},
  };
}

// The backward op's samples: each floating forward sample with a grad_output and the forward's
// indices, plus a grad_output of the wrong shape.
std::vector<Sample> max_pool_backward_samples() {
  static const OpDef& forward = OpRegistry::instance().get("max_pool2d_with_indices");
  std::vector<Sample> out;
  uint64_t seed = 100;
  for (const Sample& f : max_pool_samples()) {
    const Tensor& self = f.args[0].to_tensor();
    if (!self.is_floating_point()) continue;
    const Stack args = pool::normalized(forward, f.args);
    const std::vector<Tensor> fw = call(forward, args);
    Tensor go = max_pool_sample(fw[0].sizes(), self.dtype(), ++seed);
    if (fw[0].dim() == 4 && fw[0].is_contiguous(MemoryFormat::ChannelsLast)) {
      go = go.contiguous(MemoryFormat::ChannelsLast);
    }
    out.push_back({{go, self, args[1], args[2], args[3], args[4], args[5], fw[1]}, f.description});
  }
  const Tensor self = max_pool_sample({1, 2, 4, 4});
  const Tensor indices = std::get<1>(max_pool2d_with_indices(self, {2, 2}));
  out.push_back({{max_pool_sample({1, 2, 3, 3}), self, IntList{2, 2}, IntList{2, 2}, IntList{0, 0},
                  IntList{1, 1}, false, indices},
                 "grad_output of the wrong shape"});
  return out;
}

}  // namespace

KILN_OP(
    "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] "
    "padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)")
    .meta([](const Stack& a) { return max_pool_metas(a, /*with_indices=*/true); })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      pool::run(max_pool_args(a, pool::pool_input(self, "max_pool2d")), self, out[0], out[1]);
    })
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          static const OpDef& backward =
              OpRegistry::instance().get("max_pool2d_with_indices_backward");
          return {call1(backward, {a.grad_outputs[0], a.inputs[0], a.inputs[1], a.inputs[2],
                                   a.inputs[3], a.inputs[4], a.inputs[5], a.outputs[1]})};
        },
        DerivativeReads::InputsAndOutputs)
    .samples(max_pool_samples);

// max_pool2d_with_indices without its indices, for graphs that never read them (inference):
// the compiler's pass (inductor/unread_pool_indices.h) swaps it in, so that the kernels write half
// the bytes (int64 indices are four times a bfloat16 value).
KILN_OP(
    "_max_pool2d_values(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
    "int[2] dilation=1, bool ceil_mode=False) -> Tensor")
    .meta([](const Stack& a) { return max_pool_metas(a, /*with_indices=*/false); })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      pool::run(max_pool_args(a, pool::pool_input(self, "max_pool2d")), self, out[0], Tensor());
    })
    .not_differentiable()
    .samples(max_pool_samples);

KILN_OP(
    "max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] "
    "stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor")
    .meta([](const Stack& a) {
      const char* op = "max_pool2d_with_indices_backward";
      const Tensor& self = a[1].to_tensor();
      if (self.impl()->has_symbolic_sizes_strides()) {
        const pool::SymPoolInput in = pool::sym_pool_input(self, op);
        const auto [h, w] =
            pool::sym_window_output(in, a[2].to_int_list(), a[3].to_int_list(), a[4].to_int_list(),
                                    a[5].to_int_list(), a[6].to_bool(), op);
        return Metas{pool::grad_input_meta(a[0].to_tensor(), self, a[7].to_tensor(), in, h, w, op)};
      }
      const pool::PoolInput in = pool::pool_input(self, op);
      return Metas{pool::grad_input_meta(a[0].to_tensor(), self, a[7].to_tensor(), in,
                                         max_pool_args(a, in, 2), op)};
    })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& self = a[1].to_tensor();
      const pool::PoolInput in = pool::pool_input(self, "max_pool2d_with_indices_backward");
      pool::run_backward(max_pool_args(a, in, 2), a[0].to_tensor(), self, a[7].to_tensor(), out[0]);
    })
    // Linear in grad_output: its gradient is the incoming one read at the argmaxes.
    .derivative([](const BackwardArgs& a) -> std::vector<Tensor> {
      return {pool::gather_at_indices(a.grad_outputs[0], a.inputs[7].to_tensor()), Tensor(),
              Tensor()};
    })
    .decomposition([](const Stack& a) {
      return pool::max_pool_backward_decomposition(a, "max_pool2d_with_indices_backward", 7);
    })
    .samples(max_pool_backward_samples);

KILN_OP(
    "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] "
    "dilation=1, bool ceil_mode=False) -> Tensor")
    .composite([](const Stack& a) {
      static const OpDef& with_indices = OpRegistry::instance().get("max_pool2d_with_indices");
      return Outs{call(with_indices, a)[0]};
    })
    .samples(max_pool_samples);

}  // namespace kiln::ops
