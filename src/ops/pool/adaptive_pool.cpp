// Adaptive pooling to a given output size: output cell (i, j) covers input rows
// [floor(i*H/OH), ceil((i+1)*H/OH)) and columns likewise, so windows may overlap and differ in
// size. adaptive_avg_pool2d is a composite over _adaptive_avg_pool2d, as in aten.
#include "ops/pool/pool_common.h"
#include "ops/samples.h"

#include <kiln/core/memory_format.h>

namespace kiln::ops {
namespace {

using pool::Metas;
using pool::Outs;

Pool2dArgs adaptive_args(const Stack& a, const pool::PoolInput& in, PoolKind kind, const char* op) {
  Pool2dArgs p;
  p.kind = kind;
  pool::adaptive_geometry(p, in, a[1].to_int_list(), op);
  return p;
}

Tensor s(IntList sizes, DType dtype = DType::Float32, uint64_t seed = 0) {
  return make_sample(sizes, dtype, -3.0, 3.0, seed);
}

std::vector<Sample> adaptive_samples() {
  using L = std::vector<int64_t>;
  return {
      {{s({2, 3, 7, 9}), L{3, 4}}, "uneven windows"},
      {{s({3, 5, 5}), L{5, 5}}, "3-D, identity"},
      {{s({1, 2, 4, 6}), L{6, 7}}, "output larger than input"},
      {{s({2, 3, 6, 6}).contiguous(MemoryFormat::ChannelsLast), L{4, 3}}, "channels last"},
      {{make_noncontiguous_sample({2, 5, 6}, DType::Float32), L{1, 1}}, "non-contiguous, global"},
      {{s({1, 4, 5}, DType::Float64), L{2, 3}}, "float64"},
      {{s({1, 4, 4}, DType::BFloat16), L{3, 3}}, "bfloat16"},
      {{s({0, 2, 4, 4}), L{2, 2}}, "empty batch"},
  };
}

Metas adaptive_meta(const Stack& a, PoolKind kind, const char* op) {
  const Tensor& self = a[0].to_tensor();
  pool::check_dtype(self, /*integers_ok=*/false, op);
  const pool::PoolInput in = pool::pool_input(self, op);
  const Pool2dArgs p = adaptive_args(a, in, kind, op);
  Metas out{pool::output_meta(self, in, p, self.dtype())};
  if (kind == PoolKind::AdaptiveMax) out.push_back(pool::output_meta(self, in, p, DType::Int64));
  return out;
}

}  // namespace

KILN_OP("_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor")
    .meta([](const Stack& a) {
      return adaptive_meta(a, PoolKind::AdaptiveAvg, "adaptive_avg_pool2d");
    })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      const pool::PoolInput in = pool::pool_input(self, "adaptive_avg_pool2d");
      pool::run(adaptive_args(a, in, PoolKind::AdaptiveAvg, "adaptive_avg_pool2d"), self, out[0],
                Tensor());
    })
    .samples(adaptive_samples);

KILN_OP("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor")
    .composite([](const Stack& a) {
      static const OpDef& pool = OpRegistry::instance().get("_adaptive_avg_pool2d");
      return call(pool, a);
    })
    .samples(adaptive_samples);

KILN_OP("adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)")
    .meta([](const Stack& a) {
      return adaptive_meta(a, PoolKind::AdaptiveMax, "adaptive_max_pool2d");
    })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      const pool::PoolInput in = pool::pool_input(self, "adaptive_max_pool2d");
      pool::run(adaptive_args(a, in, PoolKind::AdaptiveMax, "adaptive_max_pool2d"), self, out[0],
                out[1]);
    })
    .samples(adaptive_samples);

}  // namespace kiln::ops
