// avg_pool2d: the mean of each window, where padding counts toward the divisor unless
// count_include_pad=False, and divisor_override replaces the divisor.
#include "ops/pool/pool_common.h"
#include "ops/samples.h"

#include <kiln/core/memory_format.h>

namespace kiln::ops {
namespace {

using pool::Metas;
using pool::Outs;

Pool2dArgs avg_pool_args(const Stack& a, const pool::PoolInput& in) {
  Pool2dArgs p;
  p.kind = PoolKind::Avg;
  pool::window_geometry(p, in, a[1].to_int_list(), a[2].to_int_list(), a[3].to_int_list(),
                        IntList{1}, a[4].to_bool(), "avg_pool2d");
  p.count_include_pad = a[5].to_bool();
  const std::optional<int64_t> divisor = a[6].to_optional_int();
  KILN_CHECK(!divisor || *divisor != 0, "avg_pool2d: divisor must be not zero");
  p.divisor = divisor.value_or(0);
  return p;
}

Tensor s(IntList sizes, DType dtype = DType::Float32, uint64_t seed = 0) {
  return make_sample(sizes, dtype, -3.0, 3.0, seed);
}

}  // namespace

KILN_OP(
    "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool "
    "ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor")
    .meta([](const Stack& a) {
      const Tensor& self = a[0].to_tensor();
      pool::check_dtype(self, /*integers_ok=*/true, "avg_pool2d");
      const pool::PoolInput in = pool::pool_input(self, "avg_pool2d");
      return Metas{pool::output_meta(self, in, avg_pool_args(a, in), self.dtype())};
    })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      pool::run(avg_pool_args(a, pool::pool_input(self, "avg_pool2d")), self, out[0], Tensor());
    })
    .samples([] {
      using L = std::vector<int64_t>;
      return std::vector<Sample>{
          {{s({2, 3, 6, 7}), L{2, 2}}, "2x2, default stride"},
          {{s({3, 7, 7}), L{3, 3}, L{2, 2}, L{1, 1}}, "3-D, padding counted"},
          {{s({3, 7, 7}), L{3, 3}, L{2, 2}, L{1, 1}, false, false}, "padding not counted"},
          {{s({1, 2, 6, 6}), L{3, 3}, L{2, 2}, L{1, 1}, true}, "ceil_mode"},
          {{s({1, 2, 5, 5}), L{2, 2}, L{2, 2}, L{1, 1}, true, false}, "ceil_mode, no pad count"},
          {{s({1, 2, 5, 5}), L{3, 2}, L{2, 1}, L{1, 1}, false, true, 5}, "divisor_override"},
          {{s({2, 3, 6, 6}).contiguous(MemoryFormat::ChannelsLast), L{3, 3}, L{2, 2}, L{1, 1}},
           "channels last"},
          {{make_noncontiguous_sample({2, 5, 6}, DType::Float32), L{2, 3}}, "non-contiguous"},
          {{s({1, 4, 4}, DType::Float64), L{2, 2}}, "float64"},
          {{make_sample({1, 4, 4}, DType::Int64, 0, 20), L{2, 2}}, "int64"},
          {{s({1, 4, 4}, DType::BFloat16), L{2, 2}}, "bfloat16"},
          {{s({0, 2, 4, 4}), L{2, 2}}, "empty batch"},
      };
    });

}  // namespace kiln::ops
