#include "ops/linalg/onednn_matmul.h"

#include "ops/linalg/gemm.h"

#include "ops/onednn/runtime.h"

#include <kiln/core/error.h>
#include <kiln/core/parallel.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::ops::linalg {

namespace {

using dnnl::memory;
using Dims = memory::dims;

// A built primitive, or none when oneDNN only had its reference kernel (then dnnl_sgemm is faster).
struct MatmulPlan {
  std::optional<dnnl::matmul> primitive;
  memory::desc scratchpad_md;
};

onednn::PlanCache<MatmulPlan>& cache() {
  static onednn::PlanCache<MatmulPlan> c(512);
  return c;
}

// The strides oneDNN reads a [batch, rows, cols] operand with: size-1 dims get the dense stride
// of the matrix's layout (their own may be anything), and a broadcast batch (stride 0) becomes a
// batch of 1, which matmul broadcasts.
struct Operand {
  Dims dims;
  Dims strides;
};

Operand operand(const Tensor& t) {
  const int64_t batch = t.size(0), rows = t.size(1), cols = t.size(2);
  const BlasLayout l = *blas_layout(rows, cols, t.stride(1), t.stride(2));
  const int64_t span = (l.transposed ? cols : rows) * l.ld;
  const int64_t s0 = l.transposed ? 1 : l.ld, s1 = l.transposed ? l.ld : 1;
  const bool broadcast = batch == 1 || t.stride(0) == 0;
  return {{broadcast ? 1 : batch, rows, cols}, {broadcast ? span : t.stride(0), s0, s1}};
}

std::string plan_key(const Operand& a, const Operand& b, const Operand& c, bool has_bias,
                     float alpha, float beta) {
  std::vector<int64_t> k;
  for (const Operand* o : {&a, &b, &c}) {
    k.insert(k.end(), o->dims.begin(), o->dims.end());
    k.insert(k.end(), o->strides.begin(), o->strides.end());
  }
  k.push_back(has_bias);
  k.push_back(std::bit_cast<uint32_t>(alpha));
  k.push_back(std::bit_cast<uint32_t>(beta));
  // oneDNN splits the work when it builds a primitive: the split depends on the threads it has.
  k.push_back(in_parallel_region() ? 1 : get_num_threads());
  std::string key(k.size() * sizeof(int64_t), '\0');
  std::memcpy(key.data(), k.data(), key.size());
  return key;
}

memory::desc md(const Operand& o) {
  return memory::desc(o.dims, memory::data_type::f32, o.strides);
}

memory::desc bias_md(int64_t n) {
  return memory::desc({1, 1, n}, memory::data_type::f32, Dims{n, n, 1});
}

std::shared_ptr<const MatmulPlan> build(const Operand& a, const Operand& b, const Operand& c,
                                        bool has_bias, float alpha, float beta) {
  auto plan = std::make_shared<MatmulPlan>();
  dnnl::primitive_attr attr;
  // brgemm packs operands into its scratchpad: one per thread, so that threads may share a plan.
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
  if (beta != 0.0f) {
    dnnl::post_ops ops;
    ops.append_sum(beta);
    attr.set_post_ops(ops);
  }
  try {
    const auto desc = has_bias ? dnnl::matmul::desc(md(a), md(b), bias_md(c.dims[2]), md(c))
                               : dnnl::matmul::desc(md(a), md(b), md(c));
    const dnnl::matmul::primitive_desc pd(desc, attr, onednn::engine());
    if (std::string(pd.impl_info_str()).rfind("ref", 0) != 0) {
      plan->primitive.emplace(pd);
      plan->scratchpad_md = pd.scratchpad_desc();
    }
  } catch (const dnnl::error&) {
    // No kernel takes these layouts at all: the caller's fallback does.
  }
  return plan;
}

}  // namespace

bool onednn_matmul(const Tensor& c, const Tensor& a, const Tensor& b, const Tensor* bias,
                   float alpha, float beta) {
  if (c.size(0) > 1 && c.stride(0) == 0) return false;
  const Operand oa = operand(a), ob = operand(b), oc = operand(c);
  const std::string key = plan_key(oa, ob, oc, bias != nullptr, alpha, beta);
  std::shared_ptr<const MatmulPlan> plan = cache().find(key);
  if (!plan) {
    plan = build(oa, ob, oc, bias != nullptr, alpha, beta);
    cache().insert(key, plan);
  }
  if (!plan->primitive) return false;
  auto& eng = onednn::engine();
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(md(oa), eng, a.data_ptr<float>())},
                                       {DNNL_ARG_WEIGHTS, memory(md(ob), eng, b.data_ptr<float>())},
                                       {DNNL_ARG_DST, memory(md(oc), eng, c.data_ptr<float>())}};
  thread_local std::vector<std::byte> scratchpad;
  args.emplace(
      DNNL_ARG_SCRATCHPAD,
      memory(plan->scratchpad_md, eng, onednn::sized(scratchpad, plan->scratchpad_md.get_size())));
  if (bias) {
    args.emplace(DNNL_ARG_BIAS, memory(bias_md(oc.dims[2]), eng, bias->data_ptr<float>()));
  }
  plan->primitive->execute(onednn::stream(), args);
  onednn::stream().wait();
  return true;
}

}  // namespace kiln::ops::linalg
