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
// weights_md: the layout it reads b in (its own blocked one for a plan of packed weights).
struct MatmulPlan {
  std::optional<dnnl::matmul> primitive;
  memory::desc weights_md;
  memory::desc scratchpad_md;
};

onednn::PlanCache<MatmulPlan>& matmul_plan_cache() {
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

// b's operand in a plan of packed weights: its dims, and no strides (the primitive picks the
// layout). 2-D: with a batch dimension of 1, oneDNN 2.6 picks a layout that ran 512x3072x768
// 1.7x slower than plain weights; the 2-D plan's ran 0.94-1.23x plain's time.
Operand packed_operand(int64_t k, int64_t n) { return {{k, n}, {}}; }

std::string plan_key(const Operand& a, const Operand& b, const Operand& c, bool has_bias,
                     float alpha, float beta) {
  std::vector<int64_t> k;
  for (const Operand* o : {&a, &b, &c}) {
    if (o->strides.empty()) k.push_back(-1);  // the primitive's own layout
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
  if (o.strides.empty())
    return memory::desc(o.dims, memory::data_type::f32, memory::format_tag::any);
  return memory::desc(o.dims, memory::data_type::f32, o.strides);
}

// One value per column of c: [1, 1, n] beside a 3-D c, [1, n] beside a 2-D one.
memory::desc bias_md(const Operand& c) {
  const int64_t n = c.dims.back();
  if (c.dims.size() == 2) return memory::desc({1, n}, memory::data_type::f32, Dims{n, 1});
  return memory::desc({1, 1, n}, memory::data_type::f32, Dims{n, n, 1});
}

// `weights`: the layout b is read in, when it is not md(b) (packed weights of a known layout).
std::shared_ptr<const MatmulPlan> build(const Operand& a, const Operand& b, const Operand& c,
                                        bool has_bias, float alpha, float beta,
                                        const memory::desc* weights = nullptr) {
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
    const memory::desc b_md = weights != nullptr ? *weights : md(b);
    const auto desc = has_bias ? dnnl::matmul::desc(md(a), b_md, bias_md(c), md(c))
                               : dnnl::matmul::desc(md(a), b_md, md(c));
    const dnnl::matmul::primitive_desc pd(desc, attr, onednn::engine());
    if (std::string(pd.impl_info_str()).rfind("ref", 0) != 0) {
      plan->primitive.emplace(pd);
      plan->weights_md = pd.weights_desc();
      plan->scratchpad_md = pd.scratchpad_desc();
    }
  } catch (const dnnl::error&) {
    // No kernel takes these layouts at all: the caller's fallback does.
  }
  return plan;
}

std::shared_ptr<const MatmulPlan> plan_for(const Operand& a, const Operand& b, const Operand& c,
                                           bool has_bias, float alpha, float beta,
                                           const memory::desc* weights = nullptr) {
  std::string key = plan_key(a, b, c, has_bias, alpha, beta);
  if (weights != nullptr) {
    key.append(reinterpret_cast<const char*>(&weights->data), sizeof(weights->data));
  }
  std::shared_ptr<const MatmulPlan> plan = matmul_plan_cache().find(key);
  if (!plan) {
    plan = build(a, b, c, has_bias, alpha, beta, weights);
    matmul_plan_cache().insert(key, plan);
  }
  return plan;
}

void execute(const MatmulPlan& plan, const Tensor& c, const Operand& oc, const Tensor& a,
             const Operand& oa, const memory& weights, const Tensor* bias) {
  auto& eng = onednn::engine();
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(md(oa), eng, a.data_ptr<float>())},
                                       {DNNL_ARG_WEIGHTS, weights},
                                       {DNNL_ARG_DST, memory(md(oc), eng, c.data_ptr<float>())}};
  thread_local std::vector<std::byte> scratchpad;
  args.emplace(
      DNNL_ARG_SCRATCHPAD,
      memory(plan.scratchpad_md, eng, onednn::sized(scratchpad, plan.scratchpad_md.get_size())));
  if (bias) {
    args.emplace(DNNL_ARG_BIAS, memory(bias_md(oc), eng, bias->data_ptr<float>()));
  }
  plan.primitive->execute(onednn::stream(), args);
  onednn::stream().wait();
}

// A packed b starts with the descriptor of its layout, padded so that the weights keep the
// buffer's 64-byte alignment.
constexpr size_t kLayoutBytes = sizeof(dnnl_memory_desc_t);
constexpr size_t kPackedHeader = (kLayoutBytes + 63) / 64 * 64;

// The plan of a row-major [m, k] @ packed [k, n] -> row-major [m, n] (+ bias), in the layout
// oneDNN picks for these rows, or reading b in `layout` (weights packed for other rows).
std::shared_ptr<const MatmulPlan> packed_plan(int64_t m, int64_t k, int64_t n, bool has_bias,
                                              const memory::desc* layout = nullptr) {
  const Operand a{{m, k}, {k, 1}}, c{{m, n}, {n, 1}};
  return plan_for(a, packed_operand(k, n), c, has_bias, 1.0f, 0.0f, layout);
}

// Whether a packed buffer's header describes a blocked f32 [k, n] layout that fills the buffer
// (a header that is not one, all zeros or stale, is refused before oneDNN reads it).
bool plausible_layout(const memory::desc& layout, int64_t k, int64_t n, int64_t packed_bytes) {
  const dnnl_memory_desc_t& d = layout.data;
  return d.ndims == 2 && d.dims[0] == k && d.dims[1] == n && d.data_type == dnnl_f32 &&
         d.format_kind == dnnl_blocked &&
         static_cast<int64_t>(kPackedHeader + layout.get_size()) == packed_bytes;
}

}  // namespace

bool onednn_matmul(const Tensor& c, const Tensor& a, const Tensor& b, const Tensor* bias,
                   float alpha, float beta) {
  if (c.size(0) > 1 && c.stride(0) == 0) return false;
  const Operand oa = operand(a), ob = operand(b), oc = operand(c);
  std::shared_ptr<const MatmulPlan> plan = plan_for(oa, ob, oc, bias != nullptr, alpha, beta);
  if (!plan->primitive) return false;
  execute(*plan, c, oc, a, oa, memory(md(ob), onednn::engine(), b.data_ptr<float>()), bias);
  return true;
}

int64_t onednn_packed_matmul_bytes(int64_t m, int64_t k, int64_t n) {
  if (m <= 0 || k <= 0 || n <= 0) return 0;
  std::shared_ptr<const MatmulPlan> plan = packed_plan(m, k, n, false);
  if (!plan->primitive) return 0;
  return static_cast<int64_t>(kPackedHeader + plan->weights_md.get_size());
}

bool onednn_blocks_matmul_weight(int64_t m, int64_t k, int64_t n) {
  if (m <= 0 || k <= 0 || n <= 0) return false;
  std::shared_ptr<const MatmulPlan> plan = packed_plan(m, k, n, false);
  if (!plan->primitive) return false;
  const dnnl_memory_desc_t& d = plan->weights_md.data;
  return d.format_kind == dnnl_blocked && d.format_desc.blocking.inner_nblks > 0;
}

void onednn_pack_matmul_weight(const Tensor& packed, const Tensor& b, int64_t m) {
  KILN_CHECK(packed.dtype() == DType::UInt8 && packed.is_contiguous(),
             "matmul weight packing: expected a contiguous uint8 buffer");
  auto* bytes = static_cast<std::byte*>(packed.data_ptr());
  std::memset(bytes, 0, static_cast<size_t>(std::min<int64_t>(packed.numel(), kPackedHeader)));
  const int64_t k = b.size(0), n = b.size(1);
  if (m <= 0 || k <= 0 || n <= 0) return;
  std::shared_ptr<const MatmulPlan> plan = packed_plan(m, k, n, false);
  if (!plan->primitive ||
      static_cast<size_t>(packed.numel()) != kPackedHeader + plan->weights_md.get_size()) {
    return;  // an all-zero header matches no layout
  }
  const Tensor source = blas_layout(k, n, b.stride(0), b.stride(1)) ? b : b.contiguous();
  const Operand ob = operand(source.unsqueeze(0));
  auto& eng = onednn::engine();
  memory user(md({{k, n}, {ob.strides[1], ob.strides[2]}}), eng, source.data_ptr<float>());
  memory blocked(plan->weights_md, eng, bytes + kPackedHeader);
  dnnl::reorder(user, blocked).execute(onednn::stream(), user, blocked);
  onednn::stream().wait();
  std::memcpy(bytes, &plan->weights_md.data, kLayoutBytes);
}

bool onednn_matmul_packed(const Tensor& c, const Tensor& a, const Tensor& packed,
                          const Tensor* bias) {
  const int64_t m = a.size(0), k = a.size(1), n = c.size(1);
  if (m <= 0 || k <= 0 || n <= 0) return false;
  // Row-major a and c, dense (the layouts the plan of packed weights is built for).
  if (a.stride(1) != 1 || (m > 1 && a.stride(0) != k) || !c.is_contiguous()) return false;
  if (packed.dtype() != DType::UInt8 || !packed.is_contiguous() ||
      packed.numel() < static_cast<int64_t>(kPackedHeader)) {
    return false;
  }
  memory::desc layout;
  std::memcpy(&layout.data, packed.data_ptr(), kLayoutBytes);
  if (!plausible_layout(layout, k, n, packed.numel())) return false;
  std::shared_ptr<const MatmulPlan> plan = packed_plan(m, k, n, bias != nullptr);
  // Packed for other rows (a dynamic row count packs for its example): a primitive reading that
  // layout for these rows, when oneDNN has one.
  if (!plan->primitive || !(layout == plan->weights_md)) {
    plan = packed_plan(m, k, n, bias != nullptr, &layout);
    if (!plan->primitive) return false;
  }
  const Operand oa{{m, k}, {k, 1}}, oc{{m, n}, {n, 1}};
  const memory weights(plan->weights_md, onednn::engine(),
                       static_cast<std::byte*>(packed.data_ptr()) + kPackedHeader);
  execute(*plan, c, oc, a, oa, weights, bias);
  return true;
}

}  // namespace kiln::ops::linalg
