// Adaptive pooling to a given output size: output cell (i, j) covers input rows
// [floor(i*H/OH), ceil((i+1)*H/OH)) and columns likewise, so windows may overlap and differ in
// size. adaptive_avg_pool2d is a composite over _adaptive_avg_pool2d, as in aten.
#include "ops/pool/pool_common.h"
#include "ops/pool/pool_decompositions.h"
#include "ops/samples.h"

#include <kiln/core/memory_format.h>
#include <kiln/ops/creation.h>

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

Tensor adaptive_pool_sample(IntList sizes, DType dtype = DType::Float32, uint64_t seed = 0) {
  return make_sample(sizes, dtype, -3.0, 3.0, seed);
}

std::vector<Sample> adaptive_samples() {
  using L = std::vector<int64_t>;
  return {
      {{adaptive_pool_sample({2, 3, 7, 9}), L{3, 4}}, "uneven windows"},
      {{adaptive_pool_sample({3, 5, 5}), L{5, 5}}, "3-D, identity"},
      {{adaptive_pool_sample({1, 2, 4, 6}), L{6, 7}}, "output larger than input"},
      {{adaptive_pool_sample({2, 3, 6, 6}).contiguous(MemoryFormat::ChannelsLast), L{4, 3}},
       "channels last"},
      {{make_noncontiguous_sample({2, 5, 6}, DType::Float32), L{1, 1}}, "non-contiguous, global"},
      {{adaptive_pool_sample({1, 4, 5}, DType::Float64), L{2, 3}}, "float64"},
      {{adaptive_pool_sample({1, 4, 4}, DType::BFloat16), L{3, 3}}, "bfloat16"},
      {{adaptive_pool_sample({0, 2, 4, 4}), L{2, 2}}, "empty batch"},
  };
}

Metas adaptive_meta(const Stack& a, PoolKind kind, const char* op) {
  const Tensor& self = a[0].to_tensor();
  pool::check_dtype(self, /*integers_ok=*/false, op);
  if (self.impl()->has_symbolic_sizes_strides()) {
    // The output sizes are given: only the input's batch may be symbolic in the output.
    const pool::SymPoolInput in = pool::sym_pool_input(self, op);
    Pool2dArgs p;
    p.kind = kind;
    pool::adaptive_geometry(p, pool::PoolInput{}, a[1].to_int_list(), op);
    Metas out{pool::sym_output_meta(self, in, p.out_h, p.out_w, self.dtype())};
    if (kind == PoolKind::AdaptiveMax) {
      out.push_back(pool::sym_output_meta(self, in, p.out_h, p.out_w, DType::Int64));
    }
    return out;
  }
  const pool::PoolInput in = pool::pool_input(self, op);
  const Pool2dArgs p = adaptive_args(a, in, kind, op);
  Metas out{pool::output_meta(self, in, p, self.dtype())};
  if (kind == PoolKind::AdaptiveMax) out.push_back(pool::output_meta(self, in, p, DType::Int64));
  return out;
}

// The adaptive windows of grad_output's sizes over self: what the backward ops run.
Pool2dArgs backward_args(const Tensor& grad_output, const pool::PoolInput& in, PoolKind kind,
                         const char* op) {
  KILN_CHECK(grad_output.dim() >= 2, "{}: expected grad_output with at least 2 dims", op);
  Pool2dArgs p;
  p.kind = kind;
  pool::adaptive_geometry(p, in, IntList{grad_output.size(-2), grad_output.size(-1)}, op);
  return p;
}

// The backward ops' samples: each floating forward sample with a grad_output (and the forward's
// indices for the max kind), plus a grad_output of the wrong shape.
std::vector<Sample> adaptive_backward_samples(const char* forward_name, bool with_indices) {
  const OpDef& forward = OpRegistry::instance().get(forward_name);
  std::vector<Sample> out;
  uint64_t seed = 100;
  for (const Sample& f : adaptive_samples()) {
    const Tensor& self = f.args[0].to_tensor();
    const std::vector<Tensor> fw = call(forward, f.args);
    Tensor go = adaptive_pool_sample(fw[0].sizes(), self.dtype(), ++seed);
    if (fw[0].dim() == 4 && fw[0].is_contiguous(MemoryFormat::ChannelsLast)) {
      go = go.contiguous(MemoryFormat::ChannelsLast);
    }
    Stack args{go, self};
    if (with_indices) args.push_back(fw[1]);
    out.push_back({std::move(args), f.description});
  }
  // The windows follow grad_output's sizes, so only a rank or batch mismatch is an error.
  Stack bad{adaptive_pool_sample({2, 2, 3}), adaptive_pool_sample({1, 2, 4, 4})};
  if (with_indices) bad.push_back(zeros({2, 2, 3}, TensorOptions(DType::Int64)));
  out.push_back({std::move(bad), "grad_output of the wrong rank"});
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
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          static const OpDef& backward =
              OpRegistry::instance().get("_adaptive_avg_pool2d_backward");
          return {call1(backward, {a.grad_outputs[0], a.inputs[0]})};
        },
        DerivativeReads::Inputs)
    .decomposition(pool::adaptive_avg_pool2d_decomposition)
    .samples(adaptive_samples);

KILN_OP("_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor")
    .meta([](const Stack& a) {
      const char* op = "_adaptive_avg_pool2d_backward";
      const Tensor& go = a[0].to_tensor();
      const Tensor& self = a[1].to_tensor();
      // Symbolic sizes allowed (a dynamic batch): the forward's output is grad_output's last two.
      KILN_CHECK(go.dim() >= 2, "{}: expected grad_output with at least 2 dims", op);
      const SymIntList gs = go.sym_sizes();
      return Metas{pool::grad_input_meta(go, self, Tensor(), pool::sym_pool_input(self, op),
                                         gs[gs.size() - 2], gs.back(), op)};
    })
    .cpu([](const Stack& a, const Outs& out) {
      const char* op = "_adaptive_avg_pool2d_backward";
      const Tensor& go = a[0].to_tensor();
      const Tensor& self = a[1].to_tensor();
      const pool::PoolInput in = pool::pool_input(self, op);
      pool::run_backward(backward_args(go, in, PoolKind::AdaptiveAvg, op), go, self, Tensor(),
                         out[0]);
    })
    // Linear in grad_output: its gradient is the same adaptive pooling of the incoming one.
    .derivative([](const BackwardArgs& a) -> std::vector<Tensor> {
      static const OpDef& forward = OpRegistry::instance().get("_adaptive_avg_pool2d");
      const Tensor& go = a.inputs[0].to_tensor();
      return {call1(forward, {a.grad_outputs[0], std::vector<int64_t>{go.size(-2), go.size(-1)}}),
              Tensor()};
    })
    .decomposition(pool::adaptive_avg_pool2d_backward_decomposition)
    .samples([] { return adaptive_backward_samples("_adaptive_avg_pool2d", false); });

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
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          static const OpDef& backward = OpRegistry::instance().get("adaptive_max_pool2d_backward");
          return {call1(backward, {a.grad_outputs[0], a.inputs[0], a.outputs[1]})};
        },
        DerivativeReads::InputsAndOutputs)
    .samples(adaptive_samples);

KILN_OP("adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor")
    .meta([](const Stack& a) {
      const char* op = "adaptive_max_pool2d_backward";
      const Tensor& go = a[0].to_tensor();
      const Tensor& self = a[1].to_tensor();
      const pool::PoolInput in = pool::pool_input(self, op);
      return Metas{pool::grad_input_meta(go, self, a[2].to_tensor(), in,
                                         backward_args(go, in, PoolKind::AdaptiveMax, op), op)};
    })
    .cpu([](const Stack& a, const Outs& out) {
      const char* op = "adaptive_max_pool2d_backward";
      const Tensor& go = a[0].to_tensor();
      const Tensor& self = a[1].to_tensor();
      const pool::PoolInput in = pool::pool_input(self, op);
      pool::run_backward(backward_args(go, in, PoolKind::AdaptiveMax, op), go, self,
                         a[2].to_tensor(), out[0]);
    })
    // Linear in grad_output: its gradient is the incoming one read at the argmaxes.
    .derivative([](const BackwardArgs& a) -> std::vector<Tensor> {
      return {pool::gather_at_indices(a.grad_outputs[0], a.inputs[2].to_tensor()), Tensor(),
              Tensor()};
    })
    .decomposition([](const Stack& a) {
      return pool::max_pool_backward_decomposition(a, "adaptive_max_pool2d_backward", 2);
    })
    .samples([] { return adaptive_backward_samples("adaptive_max_pool2d", true); });

}  // namespace kiln::ops
