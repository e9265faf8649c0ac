// max_pool2d_with_indices (values and the flat h * W + w index of each maximum in its plane) and
// its composite max_pool2d. The first maximum of a window wins; NaN propagates.
#include "ops/pool/pool_common.h"
#include "ops/samples.h"

#include <kiln/core/memory_format.h>
#include <kiln/ops/creation.h>

namespace kiln::ops {
namespace {

using pool::Metas;
using pool::Outs;

Pool2dArgs max_pool_args(const Stack& a, const pool::PoolInput& in) {
  Pool2dArgs p;
  p.kind = PoolKind::Max;
  pool::window_geometry(p, in, a[1].to_int_list(), a[2].to_int_list(), a[3].to_int_list(),
                        a[4].to_int_list(), a[5].to_bool(), "max_pool2d");
  return p;
}

Tensor s(IntList sizes, DType dtype = DType::Float32, uint64_t seed = 0) {
  return make_sample(sizes, dtype, -3.0, 3.0, seed);
}

std::vector<Sample> max_pool_samples() {
  using L = std::vector<int64_t>;
  return {
      {{s({2, 3, 6, 7}), L{2, 2}}, "2x2, default stride"},
      {{s({3, 7, 7}), L{3, 3}, L{2, 2}, L{1, 1}}, "3-D, k3 s2 p1"},
      {{s({1, 2, 8, 9}), L{3, 2}, L{2, 1}, L{1, 0}, L{2, 1}}, "dilation"},
      {{s({1, 2, 6, 6}), L{3, 3}, L{2, 2}, L{1, 1}, L{1, 1}, true}, "ceil_mode"},
      {{s({2, 2, 5, 5}), L{2, 2}, L{2, 2}, L{0, 0}, L{1, 1}, true}, "ceil_mode, partial window"},
      {{s({2, 3, 6, 6}).contiguous(MemoryFormat::ChannelsLast), L{3, 3}, L{2, 2}, L{1, 1}},
       "channels last"},
      {{make_noncontiguous_sample({2, 5, 6}, DType::Float32), L{2, 3}}, "non-contiguous"},
      {{s({1, 4, 4}, DType::Float64), L{2, 2}}, "float64"},
      {{s({1, 4, 4}, DType::Int64), L{2, 2}, L{1, 1}}, "int64, overlapping"},
      {{s({1, 4, 4}, DType::BFloat16), L{2, 2}}, "bfloat16"},
      {{s({0, 2, 4, 4}), L{2, 2}}, "empty batch"},
      {{full({1, 3, 3}, 1.0), L{2, 2}, L{1, 1}}, "ties: first maximum"},
  };
}

}  // namespace

KILN_OP(
    "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] "
    "padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)")
    .meta([](const Stack& a) {
      const Tensor& self = a[0].to_tensor();
      pool::check_dtype(self, /*integers_ok=*/true, "max_pool2d");
      const pool::PoolInput in = pool::pool_input(self, "max_pool2d");
      const Pool2dArgs p = max_pool_args(a, in);
      return Metas{pool::output_meta(self, in, p, self.dtype()),
                   pool::output_meta(self, in, p, DType::Int64)};
    })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      pool::run(max_pool_args(a, pool::pool_input(self, "max_pool2d")), self, out[0], out[1]);
    })
    .samples(max_pool_samples);

KILN_OP(
    "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] "
    "dilation=1, bool ceil_mode=False) -> Tensor")
    .composite([](const Stack& a) {
      static const OpDef& with_indices = OpRegistry::instance().get("max_pool2d_with_indices");
      return Outs{call(with_indices, a)[0]};
    })
    .samples(max_pool_samples);

}  // namespace kiln::ops
