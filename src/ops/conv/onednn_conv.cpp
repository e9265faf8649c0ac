// oneDNN convolutions. One engine for the process and one stream per thread; primitives (and the
// reorders that bring the weights, and NCHW activations, into oneDNN's blocked layouts) are built
// once per geometry and kept in a bounded LRU cache. Debian's libdnnl runs on OpenMP, so it follows
// omp_set_num_threads, i.e. kiln::set_num_threads; the thread count is part of the cache key
// because oneDNN sizes its work split when it builds a primitive.
#include "ops/conv/onednn_conv.h"

#include <kiln/core/parallel.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::ops::conv {
namespace {

using dnnl::memory;
using Dims = memory::dims;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

// A primitive with the reorders around it. A reorder is absent where the caller's layout is
// already the one the primitive wants.
struct ConvPlan {
  dnnl::primitive conv;
  memory::desc src_md, weights_md, dst_md, bias_md, scratchpad_md;
  memory::desc user_src_md, user_weights_md, user_dst_md;
  std::optional<dnnl::reorder> src_reorder, weights_reorder, dst_reorder;
};

// Least-recently-used map from a geometry's key to its plan; thread-safe.
class PlanCache {
 public:
  std::shared_ptr<const ConvPlan> find(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }
  void insert(const std::string& key, std::shared_ptr<const ConvPlan> plan) {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      order_.erase(it->second);
      index_.erase(it);
    }
    order_.emplace_front(key, std::move(plan));
    index_[key] = order_.begin();
    while (order_.size() > kOnednnCacheCapacity) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }
  size_t size() {
    std::lock_guard lock(mutex_);
    return order_.size();
  }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const ConvPlan>>;
  std::mutex mutex_;
  std::list<Entry> order_;
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

PlanCache& cache() {
  static PlanCache c;
  return c;
}

Dims dims_of(IntList v) { return Dims(v.begin(), v.end()); }

// Dense strides of `t` in the format it is dense in (its own strides may be arbitrary on size-1
// dims, which oneDNN's layout matching would not accept).
DimVector canonical_strides(const Tensor& t) {
  if (t.dim() >= 4 && !t.is_contiguous()) {
    const MemoryFormat cl =
        t.dim() == 4 ? MemoryFormat::ChannelsLast : MemoryFormat::ChannelsLast3d;
    if (t.is_contiguous(cl)) return strides_for_memory_format(t.sizes(), cl);
  }
  return strides_for_memory_format(t.sizes(), MemoryFormat::Contiguous);
}

// The weight as oneDNN indexes it: {OC, IC, k...} or {G, OC/G, IC/G, k...} for groups > 1.
// PyTorch's layouts are [OC, IC/G, k...] (forward) and [IC, OC/G, k...] (transposed); the
// descriptor reads them in place through strides.
memory::desc user_weights_md(const Tensor& w, const ConvParams& p) {
  const DimVector s = canonical_strides(w);
  const int64_t g = p.groups;
  Dims dims, strides;
  if (!p.transposed) {
    const int64_t ocg = w.size(0) / g;
    if (g > 1) {
      dims = {g, ocg, w.size(1)};
      strides = {s[0] * ocg, s[0], s[1]};
    } else {
      dims = {w.size(0), w.size(1)};
      strides = {s[0], s[1]};
    }
  } else {
    const int64_t icg = w.size(0) / g;
    if (g > 1) {
      dims = {g, w.size(1), icg};
      strides = {s[0] * icg, s[1], s[0]};
    } else {
      dims = {w.size(1), w.size(0)};
      strides = {s[1], s[0]};
    }
  }
  for (int64_t i = 2; i < w.dim(); ++i) {
    dims.push_back(w.size(i));
    strides.push_back(s[static_cast<size_t>(i)]);
  }
  return memory::desc(dims, memory::data_type::f32, strides);
}

std::string plan_key(const Tensor& out, const Tensor& input, const Tensor& weight, bool has_bias,
                     const ConvParams& p, MemoryFormat fmt) {
  std::vector<int64_t> k;
  auto add = [&](IntList v) {
    k.push_back(static_cast<int64_t>(v.size()));
    k.insert(k.end(), v.begin(), v.end());
  };
  add(input.sizes());
  add(out.sizes());
  add(weight.sizes());
  add(canonical_strides(weight));
  add(p.stride);
  add(p.padding);
  add(p.dilation);
  add(p.output_padding);
  k.push_back(p.groups);
  k.push_back(p.transposed);
  k.push_back(has_bias);
  k.push_back(static_cast<int64_t>(fmt));
  k.push_back(get_num_threads());
  std::string key(k.size() * sizeof(int64_t), '\0');
  std::memcpy(key.data(), k.data(), key.size());
  return key;
}

std::optional<dnnl::reorder> reorder_if_needed(const memory::desc& from, const memory::desc& to) {
  if (from == to) return std::nullopt;
  return dnnl::reorder(dnnl::reorder::primitive_desc(engine(), from, engine(), to));
}

// Whether NCHW activations should be reordered into oneDNN's blocked layout (its direct kernels)
// rather than read in place (its im2col + GEMM kernels). Channels-last activations are always
// read in place. Measured on ResNet-18's shapes at batch 8 on a quiet 2-core Xeon: the reorders
// pay for every spatial kernel (3x3 on 7x7 outputs: 17.9 -> 12.7 ms, 3x3 stride 2 to 14x14:
// 13.3 -> 7.0 ms, one thread) but not for 1x1 kernels, which are a plain GEMM either way.
bool worth_blocking(const Tensor& /*out*/, const Tensor& weight) {
  int64_t kernel = 1;
  for (int64_t i = 2; i < weight.dim(); ++i) kernel *= weight.size(i);
  return kernel > 1;
}

// Builds the plan, or returns nullptr when no oneDNN implementation accepts the geometry.
std::shared_ptr<const ConvPlan> make_plan(const Tensor& out, const Tensor& input,
                                          const Tensor& weight, bool has_bias, const ConvParams& p,
                                          MemoryFormat fmt) {
  auto plan = std::make_shared<ConvPlan>();
  const auto f32 = memory::data_type::f32;
  plan->user_src_md = memory::desc(dims_of(input.sizes()), f32,
                                   dims_of(strides_for_memory_format(input.sizes(), fmt)));
  plan->user_dst_md =
      memory::desc(dims_of(out.sizes()), f32, dims_of(strides_for_memory_format(out.sizes(), fmt)));
  plan->user_weights_md = user_weights_md(weight, p);
  const memory::desc bias_md =
      has_bias ? memory::desc({out.size(1)}, f32, memory::format_tag::a) : memory::desc();
  const bool native = fmt != MemoryFormat::Contiguous || !worth_blocking(out, weight);
  const memory::desc any_src(dims_of(input.sizes()), f32, memory::format_tag::any);
  const memory::desc any_dst(dims_of(out.sizes()), f32, memory::format_tag::any);
  const memory::desc& src_md = native ? plan->user_src_md : any_src;
  const memory::desc& dst_md = native ? plan->user_dst_md : any_dst;
  const memory::desc weights_any(plan->user_weights_md.dims(), f32, memory::format_tag::any);

  Dims strides = dims_of(p.stride), pad_l = dims_of(p.padding), pad_r = dims_of(p.padding), dilates;
  for (int64_t d : p.dilation) dilates.push_back(d - 1);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  try {
    if (!p.transposed) {
      dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                           dnnl::algorithm::convolution_direct, src_md, weights_any,
                                           bias_md, dst_md, strides, dilates, pad_l, pad_r);
      dnnl::convolution_forward::primitive_desc pd(desc, attr, engine());
      plan->src_md = pd.src_desc();
      plan->weights_md = pd.weights_desc();
      plan->dst_md = pd.dst_desc();
      plan->scratchpad_md = pd.scratchpad_desc();
      plan->conv = dnnl::convolution_forward(pd);
    } else {
      // PyTorch's output_padding extends the right edge: oneDNN's padding_r is padding minus it.
      for (size_t i = 0; i < pad_r.size(); ++i) pad_r[i] -= p.output_padding[i];
      dnnl::deconvolution_forward::desc desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, src_md,
          weights_any, bias_md, dst_md, strides, dilates, pad_l, pad_r);
      dnnl::deconvolution_forward::primitive_desc pd(desc, attr, engine());
      plan->src_md = pd.src_desc();
      plan->weights_md = pd.weights_desc();
      plan->dst_md = pd.dst_desc();
      plan->scratchpad_md = pd.scratchpad_desc();
      plan->conv = dnnl::deconvolution_forward(pd);
    }
    plan->bias_md = bias_md;
    plan->src_reorder = reorder_if_needed(plan->user_src_md, plan->src_md);
    plan->weights_reorder = reorder_if_needed(plan->user_weights_md, plan->weights_md);
    plan->dst_reorder = reorder_if_needed(plan->dst_md, plan->user_dst_md);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return plan;
}

// Per-thread scratch buffers, grown as needed (one call at a time per thread).
struct Buffers {
  std::vector<std::byte> src, weights, dst, scratchpad;
};

void* sized(std::vector<std::byte>& buf, size_t bytes) {
  // Over-allocate by 64 bytes and align: oneDNN's kernels prefer 64-byte aligned buffers.
  if (buf.size() < bytes + 64) buf.resize(bytes + 64);
  auto addr = reinterpret_cast<uintptr_t>(buf.data());
  return buf.data() + ((64 - addr % 64) % 64);
}

}  // namespace

size_t onednn_cache_size() { return cache().size(); }

bool onednn_convolution(const Tensor& out, const Tensor& input, const Tensor& weight,
                        const Tensor& bias, const ConvParams& p, MemoryFormat fmt) {
  const std::string key = plan_key(out, input, weight, bias.defined(), p, fmt);
  std::shared_ptr<const ConvPlan> plan = cache().find(key);
  if (!plan) {
    plan = make_plan(out, input, weight, bias.defined(), p, fmt);
    if (!plan) return false;
    cache().insert(key, plan);
  }
  thread_local Buffers buffers;
  dnnl::stream& s = stream();
  dnnl::engine& e = engine();

  memory user_src(plan->user_src_md, e, input.data_ptr());
  memory user_weights(plan->user_weights_md, e, weight.data_ptr());
  memory user_dst(plan->user_dst_md, e, out.data_ptr());
  memory src = user_src, weights = user_weights, dst = user_dst;
  if (plan->src_reorder) {
    src = memory(plan->src_md, e, sized(buffers.src, plan->src_md.get_size()));
    plan->src_reorder->execute(s, user_src, src);
  }
  if (plan->weights_reorder) {
    weights = memory(plan->weights_md, e, sized(buffers.weights, plan->weights_md.get_size()));
    plan->weights_reorder->execute(s, user_weights, weights);
  }
  if (plan->dst_reorder) {
    dst = memory(plan->dst_md, e, sized(buffers.dst, plan->dst_md.get_size()));
  }
  memory scratchpad(plan->scratchpad_md, e,
                    sized(buffers.scratchpad, plan->scratchpad_md.get_size()));
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                       {DNNL_ARG_WEIGHTS, weights},
                                       {DNNL_ARG_DST, dst},
                                       {DNNL_ARG_SCRATCHPAD, scratchpad}};
  if (bias.defined()) args.emplace(DNNL_ARG_BIAS, memory(plan->bias_md, e, bias.data_ptr()));
  plan->conv.execute(s, args);
  if (plan->dst_reorder) plan->dst_reorder->execute(s, dst, user_dst);
  s.wait();
  return true;
}

}  // namespace kiln::ops::conv
