// avg_pool2d: the mean of each window, where padding counts toward the divisor unless
// count_include_pad=False, and divisor_override replaces the divisor.
#include "ops/pool/pool_common.h"
#include "ops/pool/pool_decompositions.h"
#include "ops/samples.h"

#include <kiln/core/memory_format.h>

namespace kiln::ops {
namespace {

using pool::Metas;
using pool::Outs;

// The window arguments start at a[first] (1 in the forward op, 2 in the backward one).
Pool2dArgs avg_pool_args(const Stack& a, const pool::PoolInput& in, size_t first = 1) {
  Pool2dArgs p;
  p.kind = PoolKind::Avg;
  pool::window_geometry(p, in, a[first].to_int_list(), a[first + 1].to_int_list(),
                        a[first + 2].to_int_list(), IntList{1}, a[first + 3].to_bool(),
                        "avg_pool2d");
  p.count_include_pad = a[first + 4].to_bool();
  const std::optional<int64_t> divisor = a[first + 5].to_optional_int();
  KILN_CHECK(!divisor || *divisor != 0, "avg_pool2d: divisor must be not zero");
  p.divisor = divisor.value_or(0);
  return p;
}

Tensor avg_pool_sample(IntList sizes, DType dtype = DType::Float32, uint64_t seed = 0) {
  return make_sample(sizes, dtype, -3.0, 3.0, seed);
}

std::vector<Sample> avg_pool_samples() {
  using L = std::vector<int64_t>;
  return std::vector<Sample>{
      {{avg_pool_sample({2, 3, 6, 7}), L{2, 2}}, "2x2, default stride"},
      {{avg_pool_sample({3, 7, 7}), L{3, 3}, L{2, 2}, L{1, 1}}, "3-D, padding counted"},
      {{avg_pool_sample({3, 7, 7}), L{3, 3}, L{2, 2}, L{1, 1}, false, false},
       "padding not counted"},
      {{avg_pool_sample({1, 2, 6, 6}), L{3, 3}, L{2, 2}, L{1, 1}, true}, "ceil_mode"},
      {{avg_pool_sample({1, 2, 5, 5}), L{2, 2}, L{2, 2}, L{1, 1}, true, false},
       "ceil_mode, no pad count"},
      {{avg_pool_sample({1, 2, 5, 5}), L{3, 2}, L{2, 1}, L{1, 1}, false, true, 5},
       "divisor_override"},
      {{avg_pool_sample({2, 3, 6, 6}).contiguous(MemoryFormat::ChannelsLast), L{3, 3}, L{2, 2},
        L{1, 1}},
       "channels last"},
      {{make_noncontiguous_sample({2, 5, 6}, DType::Float32), L{2, 3}}, "non-contiguous"},
      {{avg_pool_sample({1, 4, 4}, DType::Float64), L{2, 2}}, "float64"},
      {{make_sample({1, 4, 4}, DType::Int64, 0, 20), L{2, 2}}, "int64"},
      {{avg_pool_sample({1, 4, 4}, DType::BFloat16), L{2, 2}}, "bfloat16"},
      {{avg_pool_sample({0, 2, 4, 4}), L{2, 2}}, "empty batch"},
  };
}

// The backward op's samples: each floating forward sample with a grad_output, plus a
// grad_output of the wrong shape.
std::vector<Sample> avg_pool_backward_samples() {
  static const OpDef& forward = OpRegistry::instance().get("avg_pool2d");
  std::vector<Sample> out;
  uint64_t seed = 100;
  for (const Sample& f : avg_pool_samples()) {
    const Tensor& self = f.args[0].to_tensor();
    if (!self.is_floating_point()) continue;
    const Stack args = pool::normalized(forward, f.args);
    const Tensor y = call1(forward, args);
    Tensor go = avg_pool_sample(y.sizes(), self.dtype(), ++seed);
    if (y.dim() == 4 && y.is_contiguous(MemoryFormat::ChannelsLast)) {
      go = go.contiguous(MemoryFormat::ChannelsLast);
    }
    out.push_back(
        {{go, self, args[1], args[2], args[3], args[4], args[5], args[6]}, f.description});
  }
  out.push_back({{avg_pool_sample({1, 2, 3, 3}), avg_pool_sample({1, 2, 4, 4}), IntList{2, 2},
                  IntList{2, 2}, IntList{0, 0}, false, true, IValue()},
                 "grad_output of the wrong shape"});
  return out;
}

}  // namespace

KILN_OP(
    "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool "
    "ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor")
    .meta([](const Stack& a) {
      const Tensor& self = a[0].to_tensor();
      pool::check_dtype(self, /*integers_ok=*/true, "avg_pool2d");
      if (self.impl()->has_symbolic_sizes_strides()) {
        const std::optional<int64_t> divisor = a[6].to_optional_int();
        KILN_CHECK(!divisor || *divisor != 0, "avg_pool2d: divisor must be not zero");
        const pool::SymPoolInput in = pool::sym_pool_input(self, "avg_pool2d");
        const auto [h, w] =
            pool::sym_window_output(in, a[1].to_int_list(), a[2].to_int_list(), a[3].to_int_list(),
                                    IntList{1}, a[4].to_bool(), "avg_pool2d");
        return Metas{pool::sym_output_meta(self, in, h, w, self.dtype())};
      }
      const pool::PoolInput in = pool::pool_input(self, "avg_pool2d");
      return Metas{pool::output_meta(self, in, avg_pool_args(a, in), self.dtype())};
    })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      pool::run(avg_pool_args(a, pool::pool_input(self, "avg_pool2d")), self, out[0], Tensor());
    })
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          static const OpDef& backward = OpRegistry::instance().get("avg_pool2d_backward");
          return {call1(backward, {a.grad_outputs[0], a.inputs[0], a.inputs[1], a.inputs[2],
                                   a.inputs[3], a.inputs[4], a.inputs[5], a.inputs[6]})};
        },
        DerivativeReads::Inputs)
    .decomposition(pool::avg_pool2d_decomposition)
    .samples(avg_pool_samples);

KILN_OP(
    "avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
    "int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor")
    .meta([](const Stack& a) {
      const Tensor& self = a[1].to_tensor();
      const pool::PoolInput in = pool::pool_input(self, "avg_pool2d_backward");
      return Metas{pool::grad_input_meta(a[0].to_tensor(), self, Tensor(), in,
                                         avg_pool_args(a, in, 2), "avg_pool2d_backward")};
    })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& self = a[1].to_tensor();
      const pool::PoolInput in = pool::pool_input(self, "avg_pool2d_backward");
      pool::run_backward(avg_pool_args(a, in, 2), a[0].to_tensor(), self, Tensor(), out[0]);
    })
    // Linear in grad_output: its gradient is the same average pooling of the incoming one.
    .derivative([](const BackwardArgs& a) -> std::vector<Tensor> {
      static const OpDef& forward = OpRegistry::instance().get("avg_pool2d");
      return {call1(forward, {a.grad_outputs[0], a.inputs[2], a.inputs[3], a.inputs[4], a.inputs[5],
                              a.inputs[6], a.inputs[7]}),
              Tensor()};
    })
    .decomposition(pool::avg_pool2d_backward_decomposition)
    .samples(avg_pool_backward_samples);

}  // namespace kiln::ops
